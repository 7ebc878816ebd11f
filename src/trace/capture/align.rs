//! Pairing a capture window's launches with the kernels a graph launch
//! replayed (the reference's `verify_subtree_events` and `align_streams`):
//! pure functions over names, so each rule is tested on its own.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

/// A launch (or copy/fill call) recorded in the capture trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch<'a> {
    /// The runtime event's name (`hipModuleLaunchKernel`, `hipMemcpyAsync`).
    pub name: &'a str,
    /// Its `args.kernel`, when recorded.
    pub kernel: Option<&'a str>,
}

impl<'a> Launch<'a> {
    /// The name the launch is matched by: `args.kernel`, else the event name.
    pub fn kernel_name(&self) -> &'a str {
        self.kernel.unwrap_or(self.name)
    }

    /// A copy or fill call (these carry no kernel name).
    fn is_copy_or_fill(&self) -> bool {
        self.name.contains("Memcpy") || self.name.contains("Memset")
    }
}

/// A GPU event the graph launch replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel<'a> {
    /// The kernel (or copy/fill) name.
    pub name: &'a str,
    /// Its `args.stream`.
    pub stream: Option<i64>,
}

/// How the pairs were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Same count, same order.
    Positional,
    /// Counts differ: each kernel took the next capture launch of its name;
    /// the launches skipped over are discarded.
    Greedy,
    /// Same count and names, another order: the i-th kernel of a name pairs
    /// with the i-th launch of that name.
    Grouped,
    /// Kernels on several streams: per-stream queues.
    Streams,
}

impl Mode {
    /// The word the notes use.
    pub fn describe(self) -> &'static str {
        match self {
            Mode::Positional => "in order",
            Mode::Greedy => "greedily (counts differ)",
            Mode::Grouped => "by name (orders differ)",
            Mode::Streams => "per stream",
        }
    }
}

/// A successful alignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aligned {
    /// How the pairs were found.
    pub mode: Mode,
    /// (kernel index, launch index) pairs, in the order the reference
    /// connects them.
    pub pairs: Vec<(usize, usize)>,
    /// Capture launches paired with no kernel, in capture order.
    pub discarded: Vec<usize>,
    /// Launches without `args.kernel` (not copies or fills) whose pairing
    /// could not be checked.
    pub unverified: usize,
}

/// Why no alignment was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Misaligned {
    /// The kernels span several streams but some capture launch has no
    /// `args.kernel`: the reference abandons the whole merge.
    NoKernelNames,
    /// Counts differ and kernel `kernel` found no later capture launch of
    /// its name.
    Unmatched {
        /// Index of the kernel.
        kernel: usize,
        /// Capture launches.
        launches: usize,
        /// Graph kernels.
        kernels: usize,
    },
    /// Same counts, kernel `index` differs from its launch, and grouping by
    /// name fails too (`count`: a name whose counts differ).
    Mismatch {
        /// First differing position.
        index: usize,
        /// A name counted differently: (name, capture count, graph count).
        count: (String, usize, usize),
    },
    /// Several streams and kernel `kernel` got no capture launch.
    StreamUnmatched {
        /// Index of the first unpaired kernel.
        kernel: usize,
    },
}

/// Whether capture launch `c` may have launched a kernel named `g`.
pub fn names_match(c: &Launch, g: &str) -> bool {
    (c.name.contains("Memcpy") && g.contains("Memcpy"))
        || (c.name.contains("Memset") && (g.contains("Memset") || g.contains("fillBuffer")))
        || c.kernel_name() == g
}

/// Pairs `launches` with `kernels` as the reference does: per stream when
/// the kernels span several streams, else in order, greedily when the
/// counts differ, grouped by name when the order differs.
pub fn align(launches: &[Launch], kernels: &[Kernel]) -> Result<Aligned, Misaligned> {
    let first = kernels.first().map(|k| k.stream);
    if kernels.iter().any(|k| Some(k.stream) != first) {
        if launches
            .iter()
            .any(|c| !c.is_copy_or_fill() && c.kernel.is_none())
        {
            return Err(Misaligned::NoKernelNames);
        }
        return by_streams(launches, kernels);
    }
    if launches.len() != kernels.len() {
        return greedy(launches, kernels);
    }
    positional(launches, kernels)
}

/// Equal counts: pairs by position, or [`grouped`] at the first mismatch.
pub fn positional(launches: &[Launch], kernels: &[Kernel]) -> Result<Aligned, Misaligned> {
    let mut unverified = 0;
    for (i, (c, g)) in launches.iter().zip(kernels).enumerate() {
        let Some(k) = c.kernel else {
            unverified += usize::from(!c.is_copy_or_fill());
            continue;
        };
        if k != g.name {
            return grouped(launches, kernels)
                .map_err(|count| Misaligned::Mismatch { index: i, count });
        }
    }
    Ok(Aligned {
        mode: Mode::Positional,
        pairs: (0..kernels.len()).map(|i| (i, i)).collect(),
        discarded: Vec::new(),
        unverified,
    })
}

/// Equal counts per name: the i-th launch of a name pairs with the i-th
/// kernel of that name, in capture order. Err: the first name (by first
/// appearance, capture side first) whose counts differ, with both counts.
pub fn grouped(launches: &[Launch], kernels: &[Kernel]) -> Result<Aligned, (String, usize, usize)> {
    let mut names: Vec<&str> = Vec::new();
    let mut groups: FxHashMap<&str, (usize, Vec<usize>)> = FxHashMap::default();
    for c in launches {
        let g = groups.entry(c.kernel_name()).or_insert_with(|| {
            names.push(c.kernel_name());
            (0, Vec::new())
        });
        g.0 += 1;
    }
    for (i, k) in kernels.iter().enumerate() {
        let g = groups.entry(k.name).or_insert_with(|| {
            names.push(k.name);
            (0, Vec::new())
        });
        g.1.push(i);
    }
    if let Some(n) = names.iter().find(|n| groups[*n].0 != groups[*n].1.len()) {
        let (c, g) = &groups[n];
        return Err((n.to_string(), *c, g.len()));
    }
    let mut taken: FxHashMap<&str, usize> = FxHashMap::default();
    let pairs = launches
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let t = taken.entry(c.kernel_name()).or_default();
            *t += 1;
            (groups[c.kernel_name()].1[*t - 1], ci)
        })
        .collect();
    Ok(Aligned {
        mode: Mode::Grouped,
        pairs,
        discarded: Vec::new(),
        unverified: 0,
    })
}

/// Counts differ: each kernel, in order, takes the next capture launch that
/// matches it, skipping the others; the launches left over are discarded.
pub fn greedy(launches: &[Launch], kernels: &[Kernel]) -> Result<Aligned, Misaligned> {
    let mut pairs = Vec::with_capacity(kernels.len());
    let mut used = vec![false; launches.len()];
    let mut ci = 0;
    for (gi, g) in kernels.iter().enumerate() {
        loop {
            let Some(c) = launches.get(ci) else {
                return Err(Misaligned::Unmatched {
                    kernel: gi,
                    launches: launches.len(),
                    kernels: kernels.len(),
                });
            };
            ci += 1;
            if names_match(c, g.name) {
                pairs.push((gi, ci - 1));
                used[ci - 1] = true;
                break;
            }
        }
    }
    Ok(Aligned {
        mode: Mode::Greedy,
        pairs,
        discarded: (0..launches.len()).filter(|&i| !used[i]).collect(),
        unverified: 0,
    })
}

/// Kernels on several streams: one FIFO queue per stream (in order of first
/// appearance); each capture launch, in order, pops the queue whose head it
/// matches (several: the queue matching the longest run of the following
/// launches, the first on ties; none: the launch is skipped). Pairs come in
/// kernel order.
pub fn by_streams(launches: &[Launch], kernels: &[Kernel]) -> Result<Aligned, Misaligned> {
    let mut queues: Vec<(Option<i64>, VecDeque<usize>)> = Vec::new();
    for (i, k) in kernels.iter().enumerate() {
        match queues.iter_mut().find(|(s, _)| *s == k.stream) {
            Some((_, q)) => q.push_back(i),
            None => queues.push((k.stream, VecDeque::from([i]))),
        }
    }
    let mut launch_of: Vec<Option<usize>> = vec![None; kernels.len()];
    let mut discarded = Vec::new();
    for (ci, c) in launches.iter().enumerate() {
        let candidates: Vec<usize> = (0..queues.len())
            .filter(|&s| {
                queues[s]
                    .1
                    .front()
                    .is_some_and(|&g| names_match(c, kernels[g].name))
            })
            .collect();
        let chosen = match candidates.as_slice() {
            [] => {
                discarded.push(ci);
                continue;
            }
            [one] => *one,
            many => best_by_run(many, &queues, launches, kernels, ci),
        };
        let g = queues[chosen].1.pop_front().expect("a matching head");
        launch_of[g] = Some(ci);
    }
    if let Some(kernel) = launch_of.iter().position(Option::is_none) {
        return Err(Misaligned::StreamUnmatched { kernel });
    }
    Ok(Aligned {
        mode: Mode::Streams,
        pairs: launch_of
            .iter()
            .enumerate()
            .map(|(g, c)| (g, c.expect("checked")))
            .collect(),
        discarded,
        unverified: 0,
    })
}

/// The candidate queue whose kernels match the longest run of capture
/// launches from `ci` (the first on ties).
fn best_by_run(
    candidates: &[usize],
    queues: &[(Option<i64>, VecDeque<usize>)],
    launches: &[Launch],
    kernels: &[Kernel],
    ci: usize,
) -> usize {
    let run = |s: usize| {
        let q = &queues[s].1;
        (0..q.len())
            .take_while(|&r| {
                launches
                    .get(ci + r)
                    .is_some_and(|c| names_match(c, kernels[q[r]].name))
            })
            .count()
    };
    let mut best = candidates[0];
    let mut best_run = None;
    for &s in candidates {
        let r = run(s);
        if best_run.is_none_or(|b| r > b) {
            best = s;
            best_run = Some(r);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launches<'a>(names: &[&'a str]) -> Vec<Launch<'a>> {
        names
            .iter()
            .map(|&n| Launch {
                name: "hipLaunchKernel",
                kernel: Some(n),
            })
            .collect()
    }

    fn kernels<'a>(names: &[(&'a str, i64)]) -> Vec<Kernel<'a>> {
        names
            .iter()
            .map(|&(n, s)| Kernel {
                name: n,
                stream: Some(s),
            })
            .collect()
    }

    #[test]
    fn same_order_pairs_by_position() {
        let c = launches(&["a", "b", "a"]);
        let g = kernels(&[("a", 0), ("b", 0), ("a", 0)]);
        let al = align(&c, &g).unwrap();
        assert_eq!(al.mode, Mode::Positional);
        assert_eq!(al.pairs, [(0, 0), (1, 1), (2, 2)]);
    }

    #[test]
    fn launches_without_kernel_names_are_unverified_unless_copies() {
        let mut c = launches(&["a", "b", "c"]);
        c[1].kernel = None; // hipLaunchKernel without args.kernel
        c[2] = Launch {
            name: "hipMemcpyAsync",
            kernel: None,
        };
        let g = kernels(&[("a", 0), ("zzz", 0), ("Memcpy DtoD", 0)]);
        let al = align(&c, &g).unwrap();
        assert_eq!((al.mode, al.unverified), (Mode::Positional, 1));
    }

    #[test]
    fn swapped_order_pairs_by_name_in_capture_order() {
        let c = launches(&["b", "a", "a"]);
        let g = kernels(&[("a", 0), ("b", 0), ("a", 0)]);
        let al = align(&c, &g).unwrap();
        assert_eq!(al.mode, Mode::Grouped);
        // b -> kernel 1; first a -> kernel 0; second a -> kernel 2.
        assert_eq!(al.pairs, [(1, 0), (0, 1), (2, 2)]);
    }

    #[test]
    fn other_names_fail_with_the_first_mismatch() {
        let c = launches(&["a", "x", "a"]);
        let g = kernels(&[("a", 0), ("b", 0), ("a", 0)]);
        assert_eq!(
            align(&c, &g),
            Err(Misaligned::Mismatch {
                index: 1,
                count: ("x".into(), 1, 0),
            })
        );
    }

    #[test]
    fn extra_capture_launches_are_skipped_greedily() {
        let c = launches(&["a", "x", "b", "a", "tail"]);
        let g = kernels(&[("a", 0), ("b", 0), ("a", 0)]);
        let al = align(&c, &g).unwrap();
        assert_eq!(al.mode, Mode::Greedy);
        assert_eq!(al.pairs, [(0, 0), (1, 2), (2, 3)]);
        assert_eq!(al.discarded, [1, 4]);
        // Copies and fills match by kind, whatever their names.
        let c = vec![
            Launch {
                name: "hipMemsetAsync",
                kernel: None,
            },
            Launch {
                name: "x",
                kernel: Some("a"),
            },
        ];
        let al = greedy(&c, &kernels(&[("fillBufferAligned", 0)])).unwrap();
        assert_eq!((al.pairs, al.discarded), (vec![(0, 0)], vec![1]));
    }

    #[test]
    fn greedy_fails_when_a_kernel_finds_no_launch() {
        let c = launches(&["a", "b"]);
        let g = kernels(&[("b", 0), ("a", 0), ("a", 0)]);
        assert_eq!(
            align(&c, &g),
            Err(Misaligned::Unmatched {
                kernel: 1,
                launches: 2,
                kernels: 3
            })
        );
    }

    #[test]
    fn two_streams_use_queues_and_the_longest_run() {
        // Stream 7 replays a, c; stream 9 replays a, b. Capture order a, b,
        // a, c: the first a could head either queue; stream 9's run (a, b)
        // is longer than stream 7's (a only), so it takes it.
        let c = launches(&["a", "b", "a", "c", "zzz"]);
        let g = kernels(&[("a", 7), ("a", 9), ("c", 7), ("b", 9)]);
        let al = align(&c, &g).unwrap();
        assert_eq!(al.mode, Mode::Streams);
        assert_eq!(al.pairs, [(0, 2), (1, 0), (2, 3), (3, 1)]);
        assert_eq!(al.discarded, [4]);
        // A kernel left without a launch fails.
        let g = kernels(&[("a", 7), ("q", 9)]);
        assert_eq!(
            align(&c, &g),
            Err(Misaligned::StreamUnmatched { kernel: 1 })
        );
        // Launches without kernel names cannot be placed on streams.
        let mut c = launches(&["a", "q"]);
        c[1].kernel = None;
        assert_eq!(align(&c, &g), Err(Misaligned::NoKernelNames));
    }
}
