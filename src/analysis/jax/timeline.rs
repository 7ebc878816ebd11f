//! `gpu_timeline` and `gpu_events_averages` of the JAX report: the PyTorch timeline metrics per GPU process, over the
//! events of its `Stream #…` rows, and their mean over GPUs.
//!
//! Buckets are by name only: a name starting with `copy`, `memcpy` or
//! `memset` (any case) is a copy, a collective name is communication, the
//! rest is computation (ROCm's `__amd_rocclr_copyBuffer` kernels are
//! computation here, unlike in the PyTorch report).
//!
//! The GPUs come in the order CPython iterates the set of their pids: the
//! reference builds a `set` and walks it, which is ascending order for
//! small pids but not in general (pids 1 and 8 come out as 8, 1).

use rustc_hash::FxHashMap;

use super::kernels::{JaxTrace, ident_int};
use crate::analysis::common::op_categories::is_comm_name;
use crate::analysis::common::timeline::{Bucket, BucketIntervals, Timeline, per_gpu_sheets};
use crate::names::col;
use crate::table::Table;
use crate::trace::{IdentId, StrId};

/// CPython's hash of an int (`hash(-1) == -2`; values modulo 2^61 - 1).
fn py_hash(i: i64) -> u64 {
    const M: i128 = (1 << 61) - 1;
    let h = (i as i128).abs() % M;
    let h = if i < 0 { -h } else { h };
    let h = if h == -1 { -2 } else { h };
    h as i64 as u64
}

/// `LINEAR_PROBES` and `PERTURB_SHIFT` of CPython's `setobject.c`.
const LINEAR_PROBES: usize = 9;
const PERTURB_SHIFT: u32 = 5;

/// The open-addressing table of a CPython `set` of ints.
struct PySet {
    table: Vec<Option<i64>>,
    fill: usize,
}

impl PySet {
    fn new() -> PySet {
        PySet {
            table: vec![None; 8],
            fill: 0,
        }
    }

    /// The probe sequence of `key` (`set_add_entry`, `set_insert_clean`):
    /// runs of ten slots while they fit, then perturbed jumps. Ok(slot)
    /// holds `key` already, Err(slot) is the first free one.
    fn probe(&self, key: i64) -> Result<usize, usize> {
        let mask = self.table.len() - 1;
        let h = py_hash(key);
        let mut i = (h as usize) & mask;
        let mut perturb = h;
        loop {
            let probes = if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            };
            for j in i..=i + probes {
                match self.table[j] {
                    None => return Err(j),
                    Some(k) if k == key => return Ok(j),
                    Some(_) => {}
                }
            }
            perturb >>= PERTURB_SHIFT;
            let next = i
                .wrapping_mul(5)
                .wrapping_add(1)
                .wrapping_add(perturb as usize);
            i = next & mask;
        }
    }

    /// `set_add_entry`: a new key takes its free slot; the table grows
    /// when two thirds full.
    fn add(&mut self, key: i64) {
        let Err(slot) = self.probe(key) else { return };
        self.table[slot] = Some(key);
        self.fill += 1;
        if self.fill * 5 >= (self.table.len() - 1) * 3 {
            let min_used = if self.fill > 50000 {
                self.fill * 2
            } else {
                self.fill * 4
            };
            self.resize(min_used);
        }
    }

    /// `set_table_resize`: the smallest power of two above `min_used`,
    /// re-inserting in old slot order.
    fn resize(&mut self, min_used: usize) {
        let mut size = 8;
        while size <= min_used {
            size <<= 1;
        }
        let old = std::mem::replace(&mut self.table, vec![None; size]);
        for key in old.into_iter().flatten() {
            if let Err(slot) = self.probe(key) {
                self.table[slot] = Some(key);
            }
        }
    }
}

/// The distinct `items` in the order CPython iterates `set(items)`.
pub fn py_set_order(items: impl IntoIterator<Item = i64>) -> Vec<i64> {
    let mut set = PySet::new();
    for i in items {
        set.add(i);
    }
    set.table.into_iter().flatten().collect()
}

/// Intervals of one GPU's stream events, by bucket.
/// A name the JAX timeline counts as a copy.
fn is_copy_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    ["copy", "memcpy", "memset"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// Per GPU pid, in the reference's order: its timeline, or None when it has
/// no stream events.
pub fn per_gpu(jt: &JaxTrace) -> Vec<(i64, Option<Timeline>)> {
    let trace = jt.trace;
    // Events number millions; processes, threads and names a few: what
    // follows from those is worked out once each (the name tests copied
    // every name to lower case).
    let mut procs: FxHashMap<IdentId, Option<i64>> = FxHashMap::default();
    let mut streams: FxHashMap<(IdentId, IdentId), bool> = FxHashMap::default();
    let mut kinds: FxHashMap<Option<StrId>, Bucket> = FxHashMap::default();
    // Distinct pids in first-seen order: a repeated one leaves a set as
    // it is, so they give the set the order all of them give.
    let mut gpu_pids: Vec<i64> = Vec::new();
    let mut buckets: FxHashMap<i64, BucketIntervals> = FxHashMap::default();
    for (id, e) in trace.events() {
        let gpu_pid = *procs.entry(e.pid).or_insert_with(|| {
            let pid = ident_int(trace, e.pid).filter(|_| jt.is_gpu_process(e.pid));
            if let Some(p) = pid.filter(|p| !gpu_pids.contains(p)) {
                gpu_pids.push(p);
            }
            pid
        });
        let Some(pid) = gpu_pid else {
            continue;
        };
        let on_stream =
            *streams
                .entry((e.pid, e.tid))
                .or_insert_with(|| match jt.thread_name(id) {
                    Some(t) => t.starts_with("Stream #"),
                    None => ident_int(trace, e.tid).is_some_and(|t| t < 100),
                });
        if !on_stream || e.ts.is_nan() {
            continue;
        }
        let bucket = *kinds.entry(e.name).or_insert_with(|| {
            let name = trace.name_of(e);
            if is_copy_name(name) {
                Bucket::Memcpy
            } else if is_comm_name(name) {
                Bucket::Communication
            } else {
                Bucket::Computation
            }
        });
        buckets
            .entry(pid)
            .or_default()
            .push((e.ts, e.t_end()), bucket);
    }
    py_set_order(gpu_pids)
        .into_iter()
        .map(|pid| {
            let t = buckets.remove(&pid).and_then(|b| b.timeline(None));
            (pid, t)
        })
        .collect()
}

/// `gpu_timeline` (one block of rows per GPU, with its pid) and
/// `gpu_events_averages`, and the mean timeline; warnings for GPUs without
/// stream events (the reference stops on them).
pub fn sheets(jt: &JaxTrace) -> (Vec<Table>, Option<Timeline>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut kept = Vec::new();
    for (pid, t) in per_gpu(jt) {
        match t {
            Some(t) => kept.push((pid, t)),
            None => warnings.push(format!(
                "GPU process {pid} has no stream events: left out of the timeline"
            )),
        }
    }
    let (sheets, avg) = per_gpu_sheets(&kept, col::GPU_PID);
    (sheets, avg, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_order_follows_cpython() {
        // Worked by hand from CPython's setobject.c; each checked with
        // Python 3.11 as list({x for x in ITEMS}).
        assert_eq!(py_set_order([1, 8]), vec![8, 1]);
        assert_eq!(py_set_order([3, 1, 2, 1]), vec![1, 2, 3]);
        // Eight GPUs: the table grew to 32 slots at the fifth pid.
        assert_eq!(py_set_order((1..=8).rev()), (1..=8).collect::<Vec<_>>());
        // 33 collides with 1 in 32 slots and probes on to slot 6.
        assert_eq!(py_set_order([1, 2, 3, 4, 5, 33]), vec![1, 2, 3, 4, 5, 33]);
        assert_eq!(py_set_order([33, 2, 3, 4, 5, 1]), vec![33, 2, 3, 4, 5, 1]);
        assert_eq!(py_set_order([9, 1]), vec![9, 1]);
        assert_eq!(py_set_order([10, 1, 2]), vec![1, 10, 2]);
    }

    #[test]
    fn copies_are_named_copies() {
        assert!(is_copy_name("MemcpyDtoD"));
        assert!(is_copy_name("copy_fusion.kd"));
        assert!(is_copy_name("Memset"));
        assert!(!is_copy_name("__amd_rocclr_copyBuffer.kd"));
    }
}
