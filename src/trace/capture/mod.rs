//! The capture merge (the reference's `trace_capture_merge_experimental.py`):
//! inference servers replay captured CUDA/HIP graphs, so a profiled step
//! shows one graph launch and hundreds of kernels with no op above them; the
//! ops that created those kernels are in a separate capture trace. The merge
//! copies each capture window's events under the graph launch that replayed
//! it and moves every replayed kernel under the capture launch it pairs with.
//!
//! Steps: the capture folder's index (`execution_details.json`, or the same
//! classification done in memory, [`classify`]); execution roots (the step
//! annotations, [`super::annotation`]) and the graph launches inside each;
//! the capture trace for the step's batch size; its capture windows
//! ([`windows`]); the pairing of launches and kernels ([`align`]); the copy
//! ([`merge`]). Reading files is the caller's: this module gets loaded traces.

pub mod align;

use rustc_hash::{FxHashMap, FxHashSet};

use super::annotation::{batch_size, capture_annotation, root_tier};
use super::edit::CopyMap;
use super::tree::{Tree, TreeOptions, build};
use super::{Cat, EventId, Trace};
pub use align::{Aligned, Kernel, Launch, Misaligned, Mode};

/// The name of the synthetic parent of a capture window's events.
pub const CAPTURE_ROOT: &str = "CaptureRoot";

/// One entry of `execution_details.json`: a capture file, the batch size
/// it was captured for and its mode, as JSON values (validated by
/// [`CaptureIndex::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// The capture trace's file name, relative to the folder.
    pub file: String,
    /// `batch_size` (an integer for a usable entry).
    pub batch_size: serde_json::Value,
    /// `mode`: `FULL` or `PIECEWISE` for a usable entry.
    pub mode: serde_json::Value,
}

/// Parses the text of `execution_details.json`: a list of objects with
/// `file` (a string), `batch_size` and `mode`.
pub fn parse_details(text: &str) -> Result<Vec<Detail>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let list = v
        .as_array()
        .ok_or("not a JSON list of {file, batch_size, mode} objects")?;
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            let field = |k: &str| {
                e.get(k)
                    .cloned()
                    .ok_or_else(|| format!("entry {} has no \"{k}\"", i + 1))
            };
            let file = field("file")?;
            let file = file
                .as_str()
                .ok_or_else(|| format!("entry {}: \"file\" is not a string", i + 1))?;
            Ok(Detail {
                file: file.to_string(),
                batch_size: field("batch_size")?,
                mode: field("mode")?,
            })
        })
        .collect()
}

/// A capture mode of a usable entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureMode {
    /// One graph for the whole step.
    Full,
    /// One graph per piece between non-capturable ops.
    Piecewise,
}

impl CaptureMode {
    /// The name used in `execution_details.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            CaptureMode::Full => "FULL",
            CaptureMode::Piecewise => "PIECEWISE",
        }
    }
}

/// The usable entries of a capture folder's index (the reference's
/// `load_capture_folder`).
#[derive(Debug, Clone, Default)]
pub struct CaptureIndex {
    /// (batch size, mode) -> file; a later duplicate overwrites.
    files: FxHashMap<(i128, CaptureMode), String>,
    /// Candidate batch sizes, including those of missing files.
    sizes: Vec<i128>,
    /// Entries skipped, for the notes.
    pub warnings: Vec<String>,
}

impl CaptureIndex {
    /// The index of `details`; `exists` tells whether a file is in the
    /// folder. An entry is skipped unless its mode is `FULL`/`PIECEWISE`
    /// and its batch size an integer; a missing file's size still counts
    /// as a candidate, as in the reference.
    pub fn new(details: &[Detail], exists: impl Fn(&str) -> bool) -> CaptureIndex {
        let mut ix = CaptureIndex::default();
        for d in details {
            let mode = match d.mode.as_str() {
                Some("FULL") => Some(CaptureMode::Full),
                Some("PIECEWISE") => Some(CaptureMode::Piecewise),
                _ => None,
            };
            // Python's isinstance(x, int) also takes a bool.
            let bs = match &d.batch_size {
                serde_json::Value::Bool(b) => Some((i128::from(*b), false)),
                v => v
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| v.as_u64().map(i128::from))
                    .map(|b| (b, true)),
            };
            let (Some(mode), Some((bs, keyed))) = (mode, bs) else {
                ix.warnings.push(format!(
                    "execution_details.json: entry for {} skipped (batch_size {}, mode {}): the mode must be FULL or PIECEWISE and the batch size an integer",
                    d.file, d.batch_size, d.mode
                ));
                continue;
            };
            ix.sizes.push(bs);
            if !exists(&d.file) {
                ix.warnings.push(format!(
                    "execution_details.json names {}, which is not in the folder",
                    d.file
                ));
                continue;
            }
            // A bool's key ("True_FULL") never matches an integer's.
            if keyed {
                ix.files.insert((bs, mode), d.file.clone());
            }
        }
        ix
    }

    /// The smallest candidate batch size at least `bs`.
    pub fn closest(&self, bs: i128) -> Option<i128> {
        self.sizes.iter().copied().filter(|&s| s >= bs).min()
    }

    /// The capture file for batch size `bs` and a step with `launches`
    /// graph launches: with both modes, PIECEWISE unless one launch.
    pub fn file(&self, bs: i128, launches: usize) -> Option<(&str, CaptureMode)> {
        let full = self.files.get(&(bs, CaptureMode::Full));
        let piece = self.files.get(&(bs, CaptureMode::Piecewise));
        match (full, piece) {
            (Some(f), Some(_)) if launches == 1 => Some((f, CaptureMode::Full)),
            (_, Some(p)) => Some((p, CaptureMode::Piecewise)),
            (Some(f), None) => Some((f, CaptureMode::Full)),
            (None, None) => None,
        }
    }
}

/// The index entry the reference's `classify_graph_capture_trace` writes
/// for a capture trace: batch size and mode from the first
/// `capture_<bs>_<mode>` annotation when there are as many as vLLM
/// `_dummy_run` frames; else FULL for at most one `StreamBeginCapture`
/// (PIECEWISE for more) and the most common first dimension of the ops'
/// input shapes (null when there is none).
pub fn classify(file: &str, trace: &Trace) -> Detail {
    const DUMMY_RUN: &str = "vllm/v1/worker/gpu_model_runner.py(";
    let mut annotations: Vec<(f64, EventId)> = Vec::new();
    let (mut dummy_runs, mut captures) = (0usize, 0usize);
    for (i, e) in trace.events() {
        let name = trace.name_of(e);
        if e.cat == Cat::UserAnnotation && capture_annotation(name).is_some() {
            annotations.push((ts_or_zero(e.ts), i));
        }
        // `vllm/v1/worker/gpu_model_runner\.py\(\d+\): _dummy_run`, at the start.
        if let Some(rest) = name.strip_prefix(DUMMY_RUN) {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            dummy_runs += usize::from(digits > 0 && rest[digits..].starts_with("): _dummy_run"));
        }
        if e.cat == Cat::CudaRuntime && name.contains("StreamBeginCapture") {
            captures += 1;
        }
    }
    annotations.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(&(_, first)) = annotations.first()
        && annotations.len() == dummy_runs
        && let Some((bs, mode)) = capture_annotation(trace.name(first))
    {
        return Detail {
            file: file.to_string(),
            batch_size: json_int(bs),
            mode: mode.into(),
        };
    }
    let mode = if captures <= 1 { "FULL" } else { "PIECEWISE" };
    Detail {
        file: file.to_string(),
        batch_size: most_common_first_dim(trace).map_or(serde_json::Value::Null, json_int),
        mode: mode.into(),
    }
}

fn json_int(v: i128) -> serde_json::Value {
    i64::try_from(v).map_or(serde_json::Value::Null, serde_json::Value::from)
}

/// `x.get("ts", 0)`: an absent start counts as 0.
fn ts_or_zero(ts: f64) -> f64 {
    if ts.is_nan() { 0.0 } else { ts }
}

/// The most common first element of the ops' integer-led input shapes
/// (the first seen wins ties, as `Counter.most_common(1)` does).
fn most_common_first_dim(trace: &Trace) -> Option<i128> {
    let mut counts: Vec<(i128, usize)> = Vec::new();
    for (i, e) in trace.events() {
        if e.cat != Cat::CpuOp {
            continue;
        }
        let Some(dims) = trace.op_args(i).dims.and_then(|d| d.as_list()) else {
            continue;
        };
        for d in dims {
            let first = d.as_list().and_then(|l| l.first());
            let Some(v) = first.and_then(|f| {
                f.as_i64()
                    .map(i128::from)
                    .or_else(|| f.as_u64().map(i128::from))
            }) else {
                continue;
            };
            match counts.iter_mut().find(|(k, _)| *k == v) {
                Some((_, n)) => *n += 1,
                None => counts.push((v, 1)),
            }
        }
    }
    let mut best: Option<(i128, usize)> = None;
    for &(v, n) in &counts {
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((v, n));
        }
    }
    best.map(|(v, _)| v)
}

/// One entry of a capture window's event list.
#[derive(Debug, Clone)]
struct Node {
    /// The capture trace's event; None for the synthetic `CaptureRoot`.
    event: Option<EventId>,
    /// Positions (in the list) of its children, in child order.
    children: Vec<usize>,
}

/// A capture window (a `StreamBeginCapture`/`StreamEndCapture` pair): the
/// events to copy and the launches among them.
#[derive(Debug, Clone)]
pub struct Window {
    /// `CaptureRoot` first, then the window's subtrees, breadth first and
    /// stably sorted by start: the order (and UIDs) of the copies.
    list: Vec<Node>,
    /// Positions in `list` of the launch, copy and fill calls, in list order.
    launches: Vec<usize>,
    /// GPU events found below the window's events (not copied).
    pub gpu_events_left_out: usize,
}

impl Window {
    /// Events a copy of the window adds (with `CaptureRoot`).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True for a window with nothing but `CaptureRoot`.
    pub fn is_empty(&self) -> bool {
        self.list.len() <= 1
    }
}

/// A runtime launch, copy or fill call: what a capture window pairs with
/// the replayed GPU events.
fn is_launch_call(trace: &Trace, id: EventId) -> bool {
    let e = trace.event(id);
    if !e.cat.is_runtime() {
        return false;
    }
    let n = trace.name_of(e).to_ascii_lowercase();
    n.contains("launch") || n.contains("memcpy") || n.contains("memset")
}

/// The capture windows of a capture trace and its tree (built with python
/// frames): `StreamBeginCapture` and `StreamEndCapture` runtime calls paired
/// in file order; a window runs from the end of the begin call to the start
/// of the end call. Its root events are the ops and python frames inside it
/// whose parent is outside it (events without a parent are left out, as
/// the reference leaves them).
pub fn windows(trace: &Trace, tree: &Tree) -> Vec<Window> {
    let calls = |what: &str| -> Vec<EventId> {
        trace
            .events()
            .filter(|(_, e)| e.cat == Cat::CudaRuntime && trace.name_of(e).contains(what))
            .map(|(i, _)| i)
            .collect()
    };
    let (begins, ends) = (calls("StreamBeginCapture"), calls("StreamEndCapture"));
    begins
        .iter()
        .zip(&ends)
        .map(|(&b, &e)| {
            let start = trace.event(b).t_end();
            let end = trace.event(e).ts;
            let inside = |i: EventId| {
                let ev = trace.event(i);
                let dur = if ev.dur.is_nan() { 0.0 } else { ev.dur };
                ev.ts >= start && ev.ts + dur <= end
            };
            let roots: Vec<EventId> = trace
                .ids()
                .filter(|&i| {
                    matches!(trace.event(i).cat, Cat::CpuOp | Cat::PythonFunction)
                        && inside(i)
                        && tree.parent(i).is_some_and(|p| !inside(p))
                })
                .collect();
            window_list(trace, tree, start, &roots)
        })
        .collect()
}

/// The breadth-first list below a window's `CaptureRoot` (at `start`),
/// stably sorted by start.
fn window_list(trace: &Trace, tree: &Tree, start: f64, roots: &[EventId]) -> Window {
    let mut list = vec![Node {
        event: None,
        children: Vec::new(),
    }];
    let mut gpu_events_left_out = 0;
    let mut next = 0;
    while next < list.len() {
        let kids: Vec<EventId> = match list[next].event {
            None => roots.to_vec(),
            Some(e) => tree.children(e).collect(),
        };
        for k in kids {
            if trace.event(k).cat.is_gpu() {
                gpu_events_left_out += 1;
                continue;
            }
            let at = list.len();
            list[next].children.push(at);
            list.push(Node {
                event: Some(k),
                children: Vec::new(),
            });
        }
        next += 1;
    }
    let ts = |n: &Node| n.event.map_or(start, |e| trace.event(e).ts);
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_by(|&a, &b| ts(&list[a]).total_cmp(&ts(&list[b])));
    let mut pos = vec![0; list.len()];
    for (p, &i) in order.iter().enumerate() {
        pos[i] = p;
    }
    let list: Vec<Node> = order
        .iter()
        .map(|&i| Node {
            event: list[i].event,
            children: list[i].children.iter().map(|&c| pos[c]).collect(),
        })
        .collect();
    let launches = (0..list.len())
        .filter(|&p| list[p].event.is_some_and(|e| is_launch_call(trace, e)))
        .collect();
    Window {
        list,
        launches,
        gpu_events_left_out,
    }
}

/// The GPU events below graph launch `launch`, stably sorted by start.
pub fn replayed_kernels(trace: &Trace, tree: &Tree, launch: EventId) -> Vec<EventId> {
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([launch]);
    while let Some(n) = queue.pop_front() {
        if trace.event(n).cat.is_gpu() {
            out.push(n);
        }
        queue.extend(tree.children(n));
    }
    out.sort_by(|&a, &b| trace.event(a).ts.total_cmp(&trace.event(b).ts));
    out
}

/// A capture trace loaded for the merge.
struct Captured {
    file: String,
    trace: Trace,
    tree: Tree,
    windows: Vec<Window>,
    map: CopyMap,
}

impl Captured {
    fn new(file: &str, trace: Trace) -> Captured {
        let tree = build(
            &trace,
            TreeOptions {
                include_python: true,
            },
        );
        let windows = windows(&trace, &tree);
        Captured {
            file: file.to_string(),
            trace,
            tree,
            windows,
            map: CopyMap::default(),
        }
    }

    /// The launches of window `w`, for [`align`].
    fn launches(&self, w: usize) -> Vec<Launch<'_>> {
        let t = &self.trace;
        self.windows[w]
            .launches
            .iter()
            .map(|&p| {
                let e = self.windows[w].list[p].event.expect("a launch is an event");
                Launch {
                    name: t.name(e),
                    kernel: t.args(e).and_then(|a| a.kernel).map(|k| t.string(k)),
                }
            })
            .collect()
    }
}

/// What the merge did with one graph launch.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The graph launch.
    pub launch: EventId,
    /// The execution root (step annotation) it was found under.
    pub exec_root: Option<EventId>,
    /// Merged, or why not.
    pub result: Result<Merged, Skipped>,
}

/// A merged graph launch.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The capture file.
    pub file: String,
    /// Its batch size.
    pub batch_size: i128,
    /// Its mode.
    pub mode: CaptureMode,
    /// The pairing.
    pub aligned: Aligned,
    /// UID of the copied `CaptureRoot` (the first copy).
    pub first_uid: usize,
    /// Events copied, `CaptureRoot` included.
    pub copied: usize,
    /// Name of the first discarded capture launch, if any.
    pub first_discarded: Option<String>,
    /// Capture launches in the window.
    pub capture_launches: usize,
    /// GPU events below the window's events, which are not copied (a
    /// capture records none).
    pub gpu_events_left_out: usize,
}

/// Why a graph launch was not merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    /// It is inside no execution root (step annotation).
    NoExecRoot,
    /// Its execution root's name gives no batch size.
    NoBatchSize,
    /// No capture has a batch size at least the step's.
    NoCaptureAtLeast(i128),
    /// The chosen batch size has no usable capture file.
    NoCaptureFile(i128),
    /// PIECEWISE pairing needs as many capture windows as graph launches.
    WindowCount {
        /// The capture file.
        file: String,
        /// Its windows.
        windows: usize,
        /// The step's graph launches.
        launches: usize,
    },
    /// It launched no GPU event.
    NoKernels,
    /// Its kernels do not pair with the capture's launches; the text says
    /// where.
    Misaligned(String),
    /// A second execution root holds it too; it was merged once.
    Twice,
}

impl Skipped {
    /// The reason, for people.
    pub fn describe(&self) -> String {
        match self {
            Skipped::NoExecRoot => "it is inside no step annotation (execute_…, step[…], prefill[…]/decode[…], execute_diffusion_…)".into(),
            Skipped::NoBatchSize => "the step annotation's name gives no batch size".into(),
            Skipped::NoCaptureAtLeast(bs) => format!("no capture trace has a batch size of at least {bs}"),
            Skipped::NoCaptureFile(bs) => format!("no capture trace for batch size {bs} is in the folder"),
            Skipped::WindowCount { file, windows, launches } => format!(
                "{file} has {windows} capture windows for the step's {launches} graph launches"
            ),
            Skipped::NoKernels => "it launched no GPU event".into(),
            Skipped::Misaligned(why) => why.clone(),
            Skipped::Twice => "a second step annotation holds it; it was merged under the first".into(),
        }
    }
}

/// The execution roots of the graph trace: `user_annotation` events whose
/// names match a detailed step pattern, or when none does a native one,
/// stably sorted by start.
pub fn execution_roots(trace: &Trace) -> Vec<EventId> {
    let mut tiers: [Vec<EventId>; 2] = [Vec::new(), Vec::new()];
    for (i, e) in trace.events() {
        if e.cat == Cat::UserAnnotation
            && let Some(t) = root_tier(trace.name_of(e))
        {
            tiers[t as usize].push(i);
        }
    }
    let [detailed, native] = tiers;
    let mut roots = if detailed.is_empty() {
        native
    } else {
        detailed
    };
    roots.sort_by(|&a, &b| ts_or_zero(trace.event(a).ts).total_cmp(&ts_or_zero(trace.event(b).ts)));
    roots
}

/// Every event whose name contains `graphlaunch` (any case, any category),
/// in file order: the graph roots the reference merges into.
pub fn graph_launches(trace: &Trace) -> Vec<EventId> {
    // One test per distinct name.
    let mut seen: FxHashMap<super::StrId, bool> = FxHashMap::default();
    trace
        .events()
        .filter(|(_, e)| {
            e.name.is_some_and(|n| {
                *seen
                    .entry(n)
                    .or_insert_with(|| trace.string(n).to_ascii_lowercase().contains("graphlaunch"))
            })
        })
        .map(|(i, _)| i)
        .collect()
}

/// `x.get("dur", 0)`: an absent duration counts as 0.
fn dur_or_zero(dur: f64) -> f64 {
    if dur.is_nan() { 0.0 } else { dur }
}

/// Reads a capture file of the folder (by its name in the index).
pub type LoadCapture<'a> = dyn FnMut(&str) -> Result<Trace, String> + 'a;

/// Merges the capture traces of `index` into `trace` and its `tree` (built
/// with python frames), as the reference does, and recounts the tree's GPU
/// events. Returns what happened to each graph launch that sits in a step
/// or launched GPU work. Err abandons the merge: a capture trace that
/// cannot be loaded, or kernels replayed on several streams while capture
/// launches lack kernel names (the reference then reports without merge).
pub fn merge(
    trace: &mut Trace,
    tree: &mut Tree,
    index: &CaptureIndex,
    load: &mut LoadCapture,
) -> Result<Vec<Outcome>, String> {
    let launches = graph_launches(trace);
    let mut cache: Vec<Captured> = Vec::new();
    let mut outcomes: Vec<Outcome> = Vec::new();
    for root in execution_roots(trace) {
        let r = trace.event(root);
        let lo = ts_or_zero(r.ts);
        let hi = lo + dur_or_zero(r.dur);
        let mut inside: Vec<EventId> = launches
            .iter()
            .copied()
            .filter(|&l| {
                let e = trace.event(l);
                lo <= ts_or_zero(e.ts) && ts_or_zero(e.ts) + dur_or_zero(e.dur) <= hi
            })
            .collect();
        inside.sort_by(|&a, &b| {
            ts_or_zero(trace.event(a).ts).total_cmp(&ts_or_zero(trace.event(b).ts))
        });
        // A launch merged under an earlier (overlapping) root stays merged.
        let merged_before =
            |l: &EventId| outcomes.iter().any(|o| o.launch == *l && o.result.is_ok());
        let (twice, inside): (Vec<EventId>, Vec<EventId>) =
            inside.into_iter().partition(merged_before);
        let mut step = Step {
            root,
            launches: &inside,
            cache: &mut cache,
        };
        let mut new = step.merge(trace, tree, index, load)?;
        new.extend(twice.into_iter().map(|l| Outcome {
            launch: l,
            exec_root: Some(root),
            result: Err(Skipped::Twice),
        }));
        // A launch skipped under an earlier root is tried again.
        outcomes.retain(|o| o.result.is_ok() || !new.iter().any(|n| n.launch == o.launch));
        outcomes.extend(new);
    }
    let seen: FxHashSet<EventId> = outcomes.iter().map(|o| o.launch).collect();
    outcomes.extend(
        launches
            .iter()
            .filter(|&&l| !seen.contains(&l) && tree.gpu_count(l) > 0)
            .map(|&l| Outcome {
                launch: l,
                exec_root: None,
                result: Err(Skipped::NoExecRoot),
            }),
    );
    tree.recount_gpu(trace);
    Ok(outcomes)
}

/// One execution root and the graph launches inside it, sorted by start.
struct Step<'s> {
    root: EventId,
    launches: &'s [EventId],
    cache: &'s mut Vec<Captured>,
}

impl Step<'_> {
    fn skip_all(&self, why: Skipped) -> Vec<Outcome> {
        self.launches
            .iter()
            .map(|&l| Outcome {
                launch: l,
                exec_root: Some(self.root),
                result: Err(why.clone()),
            })
            .collect()
    }

    /// Chooses the capture file for the step's batch size and merges each
    /// launch with its window.
    fn merge(
        &mut self,
        trace: &mut Trace,
        tree: &mut Tree,
        index: &CaptureIndex,
        load: &mut LoadCapture,
    ) -> Result<Vec<Outcome>, String> {
        if self.launches.is_empty() {
            return Ok(Vec::new());
        }
        let Some(bs) = batch_size(trace.name(self.root)) else {
            return Ok(self.skip_all(Skipped::NoBatchSize));
        };
        let Some(closest) = index.closest(bs) else {
            return Ok(self.skip_all(Skipped::NoCaptureAtLeast(bs)));
        };
        let Some((file, mode)) = index.file(closest, self.launches.len()) else {
            return Ok(self.skip_all(Skipped::NoCaptureFile(closest)));
        };
        let ci = match self.cache.iter().position(|c| c.file == file) {
            Some(i) => i,
            None => {
                self.cache.push(Captured::new(file, load(file)?));
                self.cache.len() - 1
            }
        };
        let windows = self.cache[ci].windows.len();
        let pairs: Vec<(usize, EventId)> = if windows == 1 {
            self.launches.iter().map(|&l| (0, l)).collect()
        } else if windows == self.launches.len() {
            self.launches.iter().copied().enumerate().collect()
        } else {
            return Ok(self.skip_all(Skipped::WindowCount {
                file: file.to_string(),
                windows,
                launches: self.launches.len(),
            }));
        };
        let mut out = Vec::with_capacity(pairs.len());
        for (w, l) in pairs {
            let result = merge_launch(trace, tree, &mut self.cache[ci], w, l)?.map(|mut m| {
                m.batch_size = closest;
                m.mode = mode;
                m
            });
            out.push(Outcome {
                launch: l,
                exec_root: Some(self.root),
                result,
            });
        }
        Ok(out)
    }
}

/// Pairs graph launch `l`'s kernels with window `w` of `c` and, when they
/// pair, copies the window under `l`. The outer Err abandons the merge.
fn merge_launch(
    trace: &mut Trace,
    tree: &mut Tree,
    c: &mut Captured,
    w: usize,
    l: EventId,
) -> Result<Result<Merged, Skipped>, String> {
    let kernels = replayed_kernels(trace, tree, l);
    if kernels.is_empty() {
        return Ok(Err(Skipped::NoKernels));
    }
    let names: Vec<Kernel> = kernels
        .iter()
        .map(|&k| Kernel {
            name: trace.name(k),
            stream: trace.args(k).and_then(|a| a.stream()),
        })
        .collect();
    let launches = c.launches(w);
    let aligned = match align::align(&launches, &names) {
        Ok(a) => a,
        Err(Misaligned::NoKernelNames) => {
            return Err(format!(
                "graph launch UID {} replays kernels on several streams, but launches in {} lack args.kernel, so they cannot be placed on streams (the reference abandons the merge too)",
                l.index(),
                c.file
            ));
        }
        Err(m) => return Ok(Err(Skipped::Misaligned(describe(&m, &launches, &names)))),
    };
    let first_discarded = aligned
        .discarded
        .first()
        .map(|&i| launches[i].kernel_name().to_string());
    let capture_launches = launches.len();
    let gpu_events_left_out = c.windows[w].gpu_events_left_out;
    let (first_uid, copied) = copy_window(trace, tree, c, w, l, &kernels, &aligned);
    Ok(Ok(Merged {
        file: c.file.clone(),
        batch_size: 0,
        mode: CaptureMode::Full,
        aligned,
        first_uid,
        copied,
        first_discarded,
        capture_launches,
        gpu_events_left_out,
    }))
}

/// Why a window's launches and a graph launch's kernels do not pair, naming
/// the first place they differ.
fn describe(m: &Misaligned, launches: &[Launch], kernels: &[Kernel]) -> String {
    match m {
        Misaligned::NoKernelNames => "capture launches lack args.kernel".into(),
        Misaligned::Unmatched {
            kernel,
            launches: nl,
            kernels: nk,
        } => format!(
            "the capture window has {nl} launches for {nk} replayed kernels, and replayed kernel {} (`{}`) matches none of the capture launches left",
            kernel + 1,
            kernels[*kernel].name
        ),
        Misaligned::Mismatch {
            index,
            count: (name, c, g),
        } => format!(
            "replayed kernel {} of {} is `{}` but capture launch {} launched `{}`; `{name}` occurs {c} times in the capture and {g} times in the replay",
            index + 1,
            kernels.len(),
            kernels[*index].name,
            index + 1,
            launches[*index].kernel_name()
        ),
        Misaligned::StreamUnmatched { kernel } => format!(
            "replayed kernel {} (`{}`, stream {}) pairs with no capture launch",
            kernel + 1,
            kernels[*kernel].name,
            kernels[*kernel]
                .stream
                .map_or("none".to_string(), |s| s.to_string())
        ),
    }
}

/// Copies window `w` of `c` under graph launch `l`: the copies get UIDs
/// after the last event, in window-list order, and `l`'s start and
/// duration; `l`'s children become the copied `CaptureRoot`; each paired
/// kernel moves under its capture launch's copy and takes its correlation.
/// Returns the first UID and the number of events copied.
fn copy_window(
    trace: &mut Trace,
    tree: &mut Tree,
    c: &mut Captured,
    w: usize,
    l: EventId,
    kernels: &[EventId],
    aligned: &Aligned,
) -> (usize, usize) {
    let Captured {
        trace: src,
        tree: src_tree,
        windows,
        map,
        ..
    } = c;
    let win = &windows[w];
    let ids: Vec<EventId> = win
        .list
        .iter()
        .map(|node| {
            let id = match node.event {
                None => trace.push_synthetic(CAPTURE_ROOT, Cat::CudaRuntime, f64::NAN, f64::NAN),
                Some(e) => trace.push_copy(src, e, map),
            };
            trace.set_times(id, l);
            id
        })
        .collect();
    tree.grow(trace.len());
    for (node, &id) in win.list.iter().zip(&ids) {
        let kids: Vec<EventId> = node.children.iter().map(|&p| ids[p]).collect();
        tree.set_children(id, &kids, true);
    }
    tree.set_children(l, &[ids[0]], true);
    for &(g, cl) in &aligned.pairs {
        let launch = ids[win.launches[cl]];
        tree.set_children(launch, &[kernels[g]], true);
        let corr = trace.args(launch).and_then(|a| a.correlation());
        trace.set_correlation(kernels[g], corr);
    }
    // The window's outermost ops become roots of the merged tree, in the
    // capture tree's order.
    let pos: FxHashMap<EventId, usize> = win
        .list
        .iter()
        .enumerate()
        .filter_map(|(p, n)| n.event.map(|e| (e, p)))
        .collect();
    tree.cpu_roots.extend(
        src_tree
            .cpu_roots
            .iter()
            .filter_map(|r| pos.get(r).map(|&p| ids[p])),
    );
    (ids[0].index(), ids.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::trace_of_json;

    fn detail(file: &str, bs: serde_json::Value, mode: &str) -> Detail {
        Detail {
            file: file.into(),
            batch_size: bs,
            mode: mode.into(),
        }
    }

    #[test]
    fn details_parse_and_refuse_missing_keys() {
        let d = parse_details(r#"[{"file": "a.json", "batch_size": 8, "mode": "FULL"}]"#).unwrap();
        assert_eq!(d, [detail("a.json", 8.into(), "FULL")]);
        assert_eq!(
            parse_details(r#"[{"file": "a.json", "mode": "FULL"}]"#).unwrap_err(),
            "entry 1 has no \"batch_size\""
        );
        assert_eq!(
            parse_details(r#"[{"file": 3, "batch_size": 1, "mode": "FULL"}]"#).unwrap_err(),
            "entry 1: \"file\" is not a string"
        );
        assert!(
            parse_details(r#"{"file": "a"}"#)
                .unwrap_err()
                .starts_with("not a JSON list")
        );
        assert!(parse_details("[").is_err());
    }

    #[test]
    fn index_rules() {
        let ix = CaptureIndex::new(
            &[
                detail("f2.json", 2.into(), "FULL"),
                detail("p2.json", 2.into(), "PIECEWISE"),
                detail("d4.json", 4.into(), "DECODE"),
                detail("s4.json", "4".into(), "FULL"),
                detail("gone.json", 16.into(), "FULL"),
                detail("b.json", true.into(), "FULL"),
                detail("f8.json", 8.into(), "FULL"),
                detail("f8b.json", 8.into(), "FULL"),
            ],
            |f| f != "gone.json",
        );
        // Sizes 2, 2, 16 (missing file), 1 (a bool), 8, 8.
        assert_eq!(ix.closest(1), Some(1));
        assert_eq!(ix.closest(3), Some(8));
        assert_eq!(ix.closest(9), Some(16));
        assert_eq!(ix.closest(17), None);
        // Both modes: PIECEWISE unless the step has one graph launch.
        assert_eq!(ix.file(2, 1), Some(("f2.json", CaptureMode::Full)));
        assert_eq!(ix.file(2, 3), Some(("p2.json", CaptureMode::Piecewise)));
        // A later duplicate overwrites; a missing file and a bool have no file.
        assert_eq!(ix.file(8, 2), Some(("f8b.json", CaptureMode::Full)));
        assert_eq!(ix.file(16, 1), None);
        assert_eq!(ix.file(1, 1), None);
        assert_eq!(ix.warnings.len(), 3, "{:?}", ix.warnings);
        assert!(ix.warnings[0].contains("d4.json skipped"));
        assert!(ix.warnings[1].contains("s4.json skipped"));
        assert!(ix.warnings[2].contains("gone.json, which is not in the folder"));
    }

    /// A trace from (cat, name, ts, Input Dims) rows.
    fn trace_of(rows: &[(Cat, &str, f64, Option<&str>)]) -> Trace {
        let events: Vec<String> = rows
            .iter()
            .map(|(cat, name, ts, dims)| {
                let args = dims.map_or(String::new(), |d| format!(r#", "args": {{"Input Dims": {d}}}"#));
                format!(
                    r#"{{"ph": "X", "cat": "{}", "name": "{name}", "ts": {ts}, "dur": 1, "pid": 1, "tid": 1{args}}}"#,
                    cat.as_str()
                )
            })
            .collect();
        trace_of_json(&events.join(","))
    }

    #[test]
    fn classification_from_annotations_or_shapes() {
        use Cat::*;
        const DUMMY: &str = "vllm/v1/worker/gpu_model_runner.py(12): _dummy_run";
        // As many capture annotations as dummy runs: the first (by start) decides.
        let t = trace_of(&[
            (UserAnnotation, "capture_16_PIECEWISE", 5.0, None),
            (UserAnnotation, "capture_8_FULL", 1.0, None),
            (PythonFunction, DUMMY, 0.0, None),
            (PythonFunction, DUMMY, 4.0, None),
        ]);
        assert_eq!(classify("a.json", &t), detail("a.json", 8.into(), "FULL"));
        // Otherwise: the mode from the capture count, the batch size from the
        // most common first dimension: 3, 4 and 5 once each (python frames
        // and empty shapes do not count), so the first seen wins.
        let t = trace_of(&[
            (UserAnnotation, "capture_16_DECODE", 5.0, None),
            (CudaRuntime, "hipStreamBeginCapture", 1.0, None),
            (CudaRuntime, "hipStreamBeginCapture", 2.0, None),
            (CpuOp, "aten::mm", 3.0, Some("[[3, 4], [4, 5]]")),
            (CpuOp, "aten::add", 4.0, Some("[[5], []]")),
            (PythonFunction, "f", 5.0, Some("[[7], [7], [7]]")),
        ]);
        assert_eq!(
            classify("b.json", &t),
            detail("b.json", 3.into(), "PIECEWISE")
        );
        let t = trace_of(&[(CpuOp, "aten::empty", 3.0, Some("[[]]"))]);
        assert_eq!(
            classify("c.json", &t),
            detail("c.json", serde_json::Value::Null, "FULL")
        );
    }
}
