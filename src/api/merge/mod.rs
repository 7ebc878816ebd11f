//! `tracelens merge`: several ranks' PyTorch traces as one timeline, as the
//! reference's TraceFusion makes it. Each rank's process ids, flow ids and
//! linking key are moved into a range of their own (the originals kept in
//! `args.<field>_raw`), every event gets `args.rank`, and each process is
//! labelled `RANK <r> - GPU|CPU`. Events are rewritten as JSON text, never
//! loaded into the trace model: fields keep their order and their bytes.

mod labels;
mod offsets;
mod rank;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::api::event_text::{Document, Object};
use crate::error::{Error, LoadError, MergeError};
use crate::load;
use labels::Labels;
use offsets::OffsetScan;
pub use offsets::{CORRELATION, EXTERNAL_ID, Offsets};
use rank::{Dropped, RankRules, Shift};

/// What to merge and which events to keep.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// The traces, index = rank.
    pub traces: Vec<PathBuf>,
    /// Keep `python_function` events (the reference's `include_pyfunc`).
    pub include_pyfunc: bool,
    /// Keep only events overlapping [start, end] (µs, the traces' own
    /// `ts`); events without a `ts` are kept.
    pub window: Option<(f64, f64)>,
    /// Move every rank's `ts` onto rank 0's clock: Kineto writes `ts`
    /// relative to the trace's `baseTimeNanoseconds`, so rank r's events
    /// get (base_r − base_0) / 1000 µs added. Every trace must record one.
    pub align_clock: bool,
}

/// One rank's part of the merge.
#[derive(Debug, Clone, PartialEq)]
pub struct RankSummary {
    /// The rank.
    pub rank: usize,
    /// Its trace.
    pub path: PathBuf,
    /// Events in its trace.
    pub events: usize,
    /// Events written.
    pub kept: usize,
    /// Process metadata left out (replaced by the rank labels).
    pub dropped_metadata: usize,
    /// Events the default filter left out (cat `Trace`, `python_function`).
    pub dropped_filter: usize,
    /// Events outside the time window.
    pub dropped_window: usize,
    /// The trace's `baseTimeNanoseconds` (Kineto's clock base), if any.
    pub base_time_ns: Option<i128>,
    /// With `align_clock`: the µs added to its `ts`.
    pub shift_us: Option<f64>,
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeRun {
    /// Each rank, in rank order.
    pub ranks: Vec<RankSummary>,
    /// The offsets used.
    pub offsets: Offsets,
    /// Processes labelled.
    pub processes: usize,
}

/// Separates events in the output: one event per line.
const SEP: &[u8] = b",\n";

/// Merges the traces into `out` as `{"traceEvents": [...]}` (plain JSON;
/// the caller packs it). The offsets come from the first trace. A trace
/// that cannot be read fails the merge, naming it.
pub fn merge_traces(opts: &MergeOptions, out: &mut dyn Write) -> Result<MergeRun, Error> {
    let Some(first) = opts.traces.first() else {
        return Err(MergeError::NoTraces.into());
    };
    let bytes = read(first)?;
    let offsets = first_trace_offsets(&bytes).map_err(at(first))?;
    let write_err = |e| Error::Merge(MergeError::Write(e));
    out.write_all(b"{\"traceEvents\":[\n").map_err(write_err)?;
    let mut labels = Labels::default();
    let mut written = false;
    let mut ranks = Vec::with_capacity(opts.traces.len());
    let mut first_bytes = Some(bytes);
    let mut base0: Option<i128> = None;
    for (r, path) in opts.traces.iter().enumerate() {
        let bytes = match first_bytes.take() {
            Some(b) => b,
            None => read(path)?,
        };
        let shift_us = match opts.align_clock {
            false => None,
            true => {
                let base = Document::parse(&bytes).map_err(at(path))?.base_time_ns;
                let Some(base) = base else {
                    return Err(MergeError::NoClock(path.clone()).into());
                };
                let b0 = *base0.get_or_insert(base);
                Some(Shift::new(base - b0))
            }
        };
        let rules = RankRules {
            rank: r,
            offsets: &offsets,
            include_pyfunc: opts.include_pyfunc,
            window: opts.window,
            shift: shift_us,
        };
        let summary = merge_rank(&bytes, path, &rules, &mut labels, &mut written, out)?;
        ranks.push(summary);
    }
    labels.write(out, SEP, written).map_err(write_err)?;
    out.write_all(b"\n]}\n").map_err(write_err)?;
    out.flush().map_err(write_err)?;
    Ok(MergeRun {
        ranks,
        offsets,
        processes: labels.len(),
    })
}

/// The unpacked bytes of a trace.
fn read(path: &Path) -> Result<Vec<u8>, Error> {
    load::read_unpacked(path).map_err(at(path))
}

/// A load error of `path` as the library's error.
fn at(path: &Path) -> impl Fn(LoadError) -> Error + '_ {
    move |error| Error::Load {
        path: path.to_path_buf(),
        error,
    }
}

/// The offsets of the first trace, whose unpacked bytes are `bytes`.
fn first_trace_offsets(bytes: &[u8]) -> Result<Offsets, LoadError> {
    let doc = Document::parse(bytes)?;
    let mut scan = OffsetScan::default();
    for (i, raw) in doc.events.iter().enumerate() {
        scan.add(&Object::parse(raw.get()).map_err(|_| not_an_object(i))?);
    }
    Ok(scan.finish())
}

/// Writes one rank's kept events (each after a separator once `written`,
/// which it sets) and notes them for the labels.
fn merge_rank(
    bytes: &[u8],
    path: &Path,
    rules: &RankRules,
    labels: &mut Labels,
    written: &mut bool,
    out: &mut dyn Write,
) -> Result<RankSummary, Error> {
    let doc = Document::parse(bytes).map_err(at(path))?;
    let mut s = RankSummary {
        rank: rules.rank,
        path: path.to_path_buf(),
        events: doc.events.len(),
        kept: 0,
        dropped_metadata: 0,
        dropped_filter: 0,
        dropped_window: 0,
        base_time_ns: doc.base_time_ns,
        shift_us: rules.shift.map(|s| s.us()),
    };
    for (i, raw) in doc.events.iter().enumerate() {
        let mut e = Object::parse(raw.get()).map_err(|_| at(path)(not_an_object(i)))?;
        match rules.drop_reason(&e) {
            Some(Dropped::Metadata) => s.dropped_metadata += 1,
            Some(Dropped::Filter) => s.dropped_filter += 1,
            Some(Dropped::Window) => s.dropped_window += 1,
            None => {
                rules
                    .rewrite(&mut e)
                    .map_err(|why| at(path)(LoadError::Invalid(format!("event {i}: {why}"))))?;
                labels.observe(&e, rules.rank);
                let write_err = |e| Error::Merge(MergeError::Write(e));
                if *written {
                    out.write_all(SEP).map_err(write_err)?;
                }
                e.write(out).map_err(write_err)?;
                *written = true;
                s.kept += 1;
            }
        }
    }
    Ok(s)
}

/// The error of event `i`, which is not an object.
fn not_an_object(i: usize) -> LoadError {
    LoadError::Invalid(format!("event {i} of traceEvents is not a JSON object"))
}
