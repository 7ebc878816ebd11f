//! `tracelens split`: an inference trace cut into per-iteration or
//! steady-state window traces plus a manifest, as the reference's
//! `TraceLens_split_inference_trace` cuts it. The execution roots are the
//! step annotations of vLLM, SGLang, ATOM or diffusion servers (detailed
//! formats first), else the repeating blocks of the call tree. Events are
//! copied as their JSON text, never loaded into the trace model; the input
//! text is held once.

mod extract;
mod generic;
mod index;
mod manifest;
mod pyset;
mod steady;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, LoadError, SplitError};
use crate::load;
use crate::trace::annotation::{StepCounts, root_tier, step_counts};
use extract::{Extracted, extract};
use index::{Root, Thread, Timed, TraceIndex};
pub use manifest::Entry;
use steady::{Phase, Target};
pub use steady::{PhaseSummary, Span};

/// Window length of the steady-state modes by default.
pub const DEFAULT_NUM_STEPS: usize = 32;

/// What to cut out of the trace.
#[derive(Debug, Clone)]
pub struct SplitOptions {
    /// The trace (.json, .json.gz, .zip).
    pub trace: PathBuf,
    /// The output folder, as given (it prefixes the manifest's paths).
    pub output_dir: PathBuf,
    /// `all`, `N` or `A:B` (end exclusive, clamped to the roots found).
    pub iterations: String,
    /// Write each root of the range as its own trace.
    pub store_single_iteration: bool,
    /// Write three steady-state windows (mixed, decode-only, prefill).
    pub find_steady_state: bool,
    /// Write the steady steps as runs of one phase (wins over
    /// `find_steady_state`).
    pub divide_phases: bool,
    /// Window length of the steady-state modes.
    pub num_steps: usize,
    /// Expected peak concurrency.
    pub conc: Option<i64>,
    /// Maximum output sequence length (with `conc` and `r`: the ideal
    /// share of prefill-bearing steps).
    pub osl: Option<f64>,
    /// Output lengths are drawn from `[r·osl, osl]`.
    pub r: Option<f64>,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            trace: PathBuf::new(),
            output_dir: PathBuf::new(),
            iterations: "all".to_string(),
            store_single_iteration: false,
            find_steady_state: false,
            divide_phases: false,
            num_steps: DEFAULT_NUM_STEPS,
            conc: None,
            osl: None,
            r: None,
        }
    }
}

/// Where the roots came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSource {
    /// Step annotations in a detailed format (with chunk statistics).
    Detailed,
    /// Step annotations in a native format.
    Native,
    /// Repeating blocks of the call tree (no step annotations).
    CallTree,
}

/// What a split found and wrote.
#[derive(Debug, Clone)]
pub struct SplitRun {
    /// Events in the trace.
    pub events: usize,
    /// Execution roots found.
    pub roots: usize,
    /// Where they came from.
    pub source: RootSource,
    /// The working range of roots (`-i`), half-open.
    pub range: Span,
    /// The steady-state regions (indices into the working range), when a
    /// steady-state mode ran; whether they are the no-region fallback.
    pub regions: Option<(Vec<Span>, bool)>,
    /// What was chosen and why, one line each.
    pub notes: Vec<String>,
    /// The traces written, in manifest order.
    pub entries: Vec<Entry>,
}

/// Where a split's files go: each trace (`.json.gz`, gzip JSON) and the
/// two manifests, at `path` (the output folder joined with the file's
/// place in it); `body` writes the plain bytes.
pub trait SplitSink {
    /// Writes one file, all or nothing with the rest of the run.
    fn write(
        &mut self,
        path: &Path,
        body: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), Error>;
}

/// Splits the trace into `sink`: the per-window traces, then
/// `execution_details.json` and `.csv`. Nothing is written when no root
/// or no window is found (an error says which).
pub fn split_trace(opts: &SplitOptions, sink: &mut dyn SplitSink) -> Result<SplitRun, Error> {
    check_options(opts)?;
    let path = &opts.trace;
    let bytes = load::read_unpacked(path).map_err(at(path))?;
    let ix = TraceIndex::build(&bytes).map_err(at(path))?;
    let (roots, source) = find_roots(&ix, path)?;
    if roots.is_empty() {
        return Err(SplitError::NothingFound {
            path: path.clone(),
            why: "no step annotations (vLLM, SGLang, ATOM, diffusion user_annotation) and no \
                  repeating block in the call tree"
                .to_string(),
        }
        .into());
    }
    let range = parse_range(&opts.iterations, roots.len())?;
    let threads: Vec<Thread> = {
        let mut t: Vec<Thread> = Vec::new();
        for r in &roots {
            if !t.contains(&r.thread) {
                t.push(r.thread.clone());
            }
        }
        t
    };
    let timed = ix.timed_on(&threads).map_err(at(path))?;
    let mut run = SplitRun {
        events: ix.doc.events.len(),
        roots: roots.len(),
        source,
        range,
        regions: None,
        notes: Vec::new(),
        entries: Vec::new(),
    };
    let cutter = Cutter {
        ix: &ix,
        timed: &timed,
        base: base_name(path),
        out_dir: &opts.output_dir,
        first: range.0,
    };
    let mut planned: Vec<Planned> = Vec::new();
    if opts.store_single_iteration {
        for (i, root) in roots.iter().enumerate().take(range.1).skip(range.0) {
            planned.push(cutter.single(root, i));
        }
    }
    let working = &roots[range.0..range.1];
    let steps: Vec<StepCounts> = working.iter().map(|r| step_counts(&r.name)).collect();
    if opts.divide_phases || opts.find_steady_state {
        let regions = if opts.iterations != "all" {
            (vec![(0, working.len())], false)
        } else {
            steady::regions(&steps, opts.num_steps)
        };
        run.notes
            .push(region_note(&regions, range, opts.iterations != "all"));
        if opts.divide_phases {
            planned.extend(cutter.phases(working, &steps, &regions.0, &mut run.notes));
        } else {
            planned.extend(cutter.windows(working, &steps, &regions.0, opts, &mut run.notes));
        }
        run.regions = Some(regions);
    }
    if planned.is_empty() {
        return Err(SplitError::NothingFound {
            path: path.clone(),
            why: format!(
                "{} roots found but no window to write ({})",
                roots.len(),
                run.notes.last().map_or("no mode chosen", String::as_str)
            ),
        }
        .into());
    }
    for p in planned {
        let mut body = |w: &mut dyn Write| extract::write_trace(&ix, &p.cut.events, w);
        sink.write(&p.path, &mut body)?;
        run.entries.push(p.entry());
    }
    let json = manifest::json(&run.entries);
    sink.write(&opts.output_dir.join(manifest::JSON_NAME), &mut |w| {
        w.write_all(json.as_bytes())
    })?;
    let csv = manifest::csv(&run.entries);
    sink.write(&opts.output_dir.join(manifest::CSV_NAME), &mut |w| {
        w.write_all(csv.as_bytes())
    })?;
    Ok(run)
}

/// Refuses settings the reference would divide by zero with.
fn check_options(opts: &SplitOptions) -> Result<(), SplitError> {
    let bad = |why: &str| Err(SplitError::Setting(why.to_string()));
    if opts.num_steps == 0 {
        return bad("--num-steps must be at least 1");
    }
    if opts.conc.is_some_and(|c| c < 1) {
        return bad("--conc must be at least 1");
    }
    if opts.osl.is_some_and(|o| !(o.is_finite() && o > 0.0)) {
        return bad("--osl must be a positive number");
    }
    if opts.r.is_some_and(|r| !r.is_finite()) {
        return bad("--r must be a number (it is clamped to [0, 1])");
    }
    Ok(())
}

/// A load error of `path` as the library's error.
fn at(path: &Path) -> impl Fn(LoadError) -> Error + '_ {
    move |error| Error::Load {
        path: path.to_path_buf(),
        error,
    }
}

/// The roots: detailed annotations, else native ones, else the call
/// tree's repeating blocks.
fn find_roots(ix: &TraceIndex, path: &Path) -> Result<(Vec<Root>, RootSource), Error> {
    if !ix.detailed.is_empty() {
        return Ok((ix.detailed.clone(), RootSource::Detailed));
    }
    if !ix.native.is_empty() {
        return Ok((ix.native.clone(), RootSource::Native));
    }
    let roots = generic::roots(ix, path)?;
    Ok((roots, RootSource::CallTree))
}

/// `-i`: `all`, `N` or `A:B`, the end clamped to `n` roots.
pub fn parse_range(text: &str, n: usize) -> Result<Span, SplitError> {
    let bad = |why: String| SplitError::Range {
        given: text.to_string(),
        why,
    };
    if text == "all" {
        return Ok((0, n));
    }
    let mut parts = text.split(':');
    let int = |s: Option<&str>| -> Result<Option<usize>, SplitError> {
        match s {
            None => Ok(None),
            Some(s) => s
                .trim()
                .parse::<usize>()
                .map(Some)
                .map_err(|_| bad(format!("{s:?} is not a step index (0 or more)"))),
        }
    };
    let start = int(parts.next())?.unwrap_or(0);
    let end = int(parts.next())?.unwrap_or(start + 1);
    if parts.next().is_some() {
        return Err(bad("give N or START:END".to_string()));
    }
    if start >= n {
        return Err(bad(format!(
            "starts at {start} but the trace has {n} iteration{} (0 to {})",
            if n == 1 { "" } else { "s" },
            n - 1
        )));
    }
    if end <= start {
        return Err(bad(format!(
            "the end ({end}) must be after the start ({start})"
        )));
    }
    Ok((start, end.min(n)))
}

/// The trace's base name: its file name without `.pt.trace`, `.json.gz`
/// and `.json` (wherever they occur, as the reference removes them).
fn base_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    name.replace(".pt.trace", "")
        .replace(".json.gz", "")
        .replace(".json", "")
}

/// The line saying which regions the steady-state modes work in.
fn region_note((regions, fallback): &(Vec<Span>, bool), range: Span, explicit: bool) -> String {
    let list: Vec<String> = regions
        .iter()
        .map(|(s, e)| format!("[{}, {})", s + range.0, e + range.0))
        .collect();
    if explicit {
        return format!(
            "steady state: the given range {} is the region",
            list.join(" ")
        );
    }
    if *fallback {
        return format!(
            "steady state: no region near the peak request count; the middle steps {} are used",
            list.join(" ")
        );
    }
    format!(
        "steady-state regions (steps near the peak request count): {}",
        list.join(", ")
    )
}

/// One output planned: where it goes, what it holds.
struct Planned {
    path: PathBuf,
    idx: usize,
    cut: Extracted,
    steps: Vec<StepCounts>,
    phase: PhaseSummary,
}

impl Planned {
    /// Its manifest entry.
    fn entry(&self) -> Entry {
        Entry {
            idx: self.idx,
            output_path: self.path.clone(),
            event_count: self.cut.events.len(),
            num_gpu_events: self.cut.num_gpu_events,
            gpu_duration: self.cut.gpu_duration,
            gpu_busy_duration: self.cut.gpu_busy,
            steps: self.steps.clone(),
            phase: self.phase,
        }
    }
}

/// Cuts windows of roots and names their files.
struct Cutter<'a> {
    ix: &'a TraceIndex<'a>,
    timed: &'a HashMap<Thread, Vec<Timed>>,
    base: String,
    out_dir: &'a Path,
    /// The index of the working range's first root (for messages).
    first: usize,
}

impl Cutter<'_> {
    /// Root `i` alone, named after its annotation.
    fn single(&self, root: &Root, i: usize) -> Planned {
        let cut = extract(self.ix, self.timed, &[root]);
        let steps = vec![step_counts(&root.name)];
        let suffix = match root_tier(&root.name) {
            Some(_) => format!("_{}", file_part(&root.name)),
            None => String::new(),
        };
        let name = format!("{}_annotation_iteration_{i}{suffix}.json.gz", self.base);
        Planned {
            path: self.out_dir.join(name),
            idx: i,
            phase: steady::summary(&steps),
            cut,
            steps,
        }
    }

    /// A window of roots under `label` in `dir`: its steps take the batch
    /// sizes the batch operators saw when there is one per step.
    fn window(&self, roots: &[&Root], label: &str, dir: &Path) -> Planned {
        let cut = extract(self.ix, self.timed, roots);
        let mut steps: Vec<StepCounts> = roots.iter().map(|r| step_counts(&r.name)).collect();
        if let Some(bs) = &cut.batch_sizes
            && bs.len() == steps.len()
        {
            for (s, b) in steps.iter_mut().zip(bs) {
                s.batch_size = *b;
            }
        }
        let p = steady::summary(&steps);
        let name = format!(
            "{label}_prefill_{}_prefilldecode_{}_decode_{}_bs{}_conc{}_{}.json.gz",
            p.num_prefill, p.num_prefilldecode, p.num_decode, p.avg_bs, p.avg_conc, self.base
        );
        Planned {
            path: dir.join(name),
            idx: 0,
            cut,
            steps,
            phase: p,
        }
    }

    /// The three steady-state windows of the largest region.
    fn windows(
        &self,
        roots: &[Root],
        steps: &[StepCounts],
        regions: &[Span],
        opts: &SplitOptions,
        notes: &mut Vec<String>,
    ) -> Vec<Planned> {
        let (largest, ratio) = steady::largest_and_ratio(steps, regions);
        let peak = steps
            .iter()
            .map(StepCounts::num_requests)
            .max()
            .unwrap_or(0);
        if let Some(c) = opts.conc
            && i128::from(c) != peak
        {
            notes.push(format!(
                "warning: --conc {c} but the trace's peak is {peak} requests a step"
            ));
        }
        let mut target = Target {
            ratio,
            num_steps: opts.num_steps,
        };
        let mut why = format!("share of prefill-bearing steps over the regions, {ratio:.3}");
        if let (Some(c), Some(o), Some(r)) = (opts.conc, opts.osl, opts.r) {
            target = steady::ideal_target(c, o, r, opts.num_steps);
            why = format!(
                "ideal share 2·conc/(osl·(1+r)) = {:.4}{}",
                target.ratio,
                if target.num_steps > opts.num_steps {
                    format!(", window raised to {} steps to hold it", target.num_steps)
                } else {
                    String::new()
                }
            );
        }
        let off = |(s, e): Span| format!("[{}, {})", s + self.first, e + self.first);
        let mut out = Vec::new();
        let mixed = steady::mixed_window(steps, largest, &target);
        notes.push(format!(
            "mixed window {} of the largest region {} (target: {why})",
            off(mixed),
            off(largest)
        ));
        let picks = [
            ("mixed_steady_state", Some(mixed)),
            (
                "decode_only_steady_state",
                steady::longest_run(steps, largest, opts.num_steps, StepCounts::is_decode_only),
            ),
            (
                "prefilldecode_steady_state",
                steady::longest_run(steps, largest, opts.num_steps, StepCounts::has_context),
            ),
        ];
        for (label, span) in picks {
            match span {
                Some((s, e)) if e > s => {
                    if label != "mixed_steady_state" {
                        notes.push(format!("{label}: steps {}", off((s, e))));
                    }
                    let window: Vec<&Root> = roots[s..e].iter().collect();
                    out.push(self.window(&window, label, self.out_dir));
                }
                _ => notes.push(format!(
                    "{label}: no such run in the largest region; skipped"
                )),
            }
        }
        out
    }

    /// The steady steps as runs of one phase, each in its phase's folder.
    fn phases(
        &self,
        roots: &[Root],
        steps: &[StepCounts],
        regions: &[Span],
        notes: &mut Vec<String>,
    ) -> Vec<Planned> {
        let runs = steady::phase_runs(steps, regions);
        let mut chunk = [0usize; 2];
        let mut out = Vec::new();
        for (phase, idx) in &runs {
            let k = &mut chunk[usize::from(*phase == Phase::DecodeOnly)];
            let run_steps: Vec<StepCounts> = idx.iter().map(|&i| steps[i]).collect();
            let p = steady::summary(&run_steps);
            let label = format!(
                "{}_chunk{}_steps{}_bs{}_conc{}",
                phase.name(),
                *k,
                idx.len(),
                p.avg_bs,
                p.avg_conc
            );
            *k += 1;
            let window: Vec<&Root> = idx.iter().map(|&i| &roots[i]).collect();
            out.push(self.window(&window, &label, &self.out_dir.join(phase.name())));
        }
        notes.push(format!(
            "phases: {} prefilldecodemix run{}, {} decode_only run{}",
            chunk[0],
            if chunk[0] == 1 { "" } else { "s" },
            chunk[1],
            if chunk[1] == 1 { "" } else { "s" }
        ));
        out
    }
}

/// A root's name as part of a file name: `/` and `(` become `_`, `)` and
/// `:` go, spaces become `_` (the reference's rule), and control
/// characters, which no file name should hold, become `_`.
fn file_part(name: &str) -> String {
    name.chars()
        .filter_map(|c| match c {
            '/' | '(' | ' ' => Some('_'),
            ')' | ':' => None,
            c if c.is_control() => Some('_'),
            c => Some(c),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked_and_clamped() {
        assert_eq!(parse_range("all", 5).unwrap(), (0, 5));
        assert_eq!(parse_range("2", 5).unwrap(), (2, 3));
        assert_eq!(parse_range("10:20", 16).unwrap(), (10, 16));
        for bad in ["5", "3:3", "4:2", "x", "1:2:3", "-1", ""] {
            assert!(parse_range(bad, 5).is_err(), "{bad}");
        }
        let e = parse_range("7:9", 5).unwrap_err().to_string();
        assert!(e.contains("5 iterations (0 to 4)"), "{e}");
    }

    #[test]
    fn base_names_and_file_parts_follow_the_reference() {
        assert_eq!(base_name(Path::new("d/x.pt.trace.json.gz")), "x");
        assert_eq!(base_name(Path::new("run.json")), "run");
        assert_eq!(base_name(Path::new("t.zip")), "t.zip");
        assert_eq!(
            file_part("execute_1_context_0(sq0sk0)_gen/x: a\nb"),
            "execute_1_context_0_sq0sk0_gen_x_a_b"
        );
    }
}
