//! `report --capture-dir`: reads a folder of capture traces and merges it
//! into the profiled trace ([`crate::trace::capture`] does the merge; the
//! files are read here). Nothing is ever written into the folder.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::report::load_trace;
use crate::analysis::common::quality::CaptureNotes;
use crate::error::{Error, LoadError};
use crate::trace::capture::{self, CaptureIndex, Detail, Outcome};
use crate::trace::tree::Tree;
use crate::trace::{Needs, Trace};

/// The index file a capture folder may hold.
const DETAILS: &str = "execution_details.json";

/// Merges the capture traces in `dir` into `trace` and its `tree`; the
/// notes say what was merged and what was not, and why. Nothing merged is
/// an error, as is a folder or capture trace that cannot be read.
pub(crate) fn merge_dir(
    dir: &Path,
    trace: &mut Trace,
    tree: &mut Tree,
) -> Result<CaptureNotes, Error> {
    let fail = |msg: String| capture_error(dir, msg);
    if !dir.is_dir() {
        return Err(fail("not a directory".into()));
    }
    let mut notes = Vec::new();
    let mut loaded: FxHashMap<String, Trace> = FxHashMap::default();
    let details = read_details(dir, &mut loaded, &mut notes)?;
    let index = CaptureIndex::new(&details, |f| dir.join(f).is_file());
    notes.extend(index.warnings.iter().cloned());
    let mut load = |file: &str| match loaded.remove(file) {
        Some(t) => Ok(t),
        None => load_trace(&dir.join(file), Needs::ALL).map_err(|e| e.to_string()),
    };
    let outcomes = capture::merge(trace, tree, &index, &mut load).map_err(fail)?;
    if !outcomes.iter().any(|o| o.result.is_ok()) {
        return Err(fail(nothing_merged(trace, &outcomes)));
    }
    notes.extend(outcome_notes(trace, &outcomes));
    Ok(CaptureNotes { notes })
}

/// The error of capture folder `dir`: `msg` says what is wrong with it.
fn capture_error(dir: &Path, msg: String) -> Error {
    Error::Capture {
        dir: dir.to_path_buf(),
        msg,
    }
}

/// The folder's `execution_details.json`, or when it has none the entries
/// the reference would write, inferred in memory from every trace in the
/// folder (those traces stay loaded in `loaded` for the merge).
fn read_details(
    dir: &Path,
    loaded: &mut FxHashMap<String, Trace>,
    notes: &mut Vec<String>,
) -> Result<Vec<Detail>, Error> {
    let path = dir.join(DETAILS);
    let fail = |msg: String| capture_error(dir, msg);
    if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| fail(format!("cannot read {DETAILS}: {e}")))?;
        return capture::parse_details(&text).map_err(|e| fail(format!("{DETAILS}: {e}")));
    }
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| fail(format!("cannot list the folder: {e}")))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(fail(format!(
            "no {DETAILS} and no capture traces (.json, .json.gz) in the folder"
        )));
    }
    let mut details = Vec::with_capacity(files.len());
    for f in files {
        let d = match load_trace(&dir.join(&f), Needs::ALL) {
            Ok(t) => {
                let d = capture::classify(&f, &t);
                loaded.insert(f, t);
                d
            }
            // A JSON file without trace events: no batch size, skipped.
            Err(Error::Load {
                error: LoadError::NotATrace(_) | LoadError::NoEvents,
                ..
            }) => Detail {
                file: f,
                batch_size: serde_json::Value::Null,
                mode: "FULL".into(),
            },
            Err(e) => return Err(e),
        };
        details.push(d);
    }
    let found: Vec<String> = details
        .iter()
        .map(|d| {
            let mode = d
                .mode
                .as_str()
                .map_or_else(|| d.mode.to_string(), str::to_string);
            format!("{} (batch size {}, mode {mode})", d.file, d.batch_size)
        })
        .collect();
    notes.push(format!(
        "capture merge: no {DETAILS} in {}: inferred in memory (not written) as the reference classifies capture traces: {}",
        crate::quote::quoted(dir),
        found.join("; ")
    ));
    Ok(details)
}

/// Where a graph launch is, for people: its UID, start and step.
fn launch_place(trace: &Trace, o: &Outcome) -> String {
    let e = trace.event(o.launch);
    let root = o
        .exec_root
        .map(|r| format!(" in step `{}`", trace.name(r)))
        .unwrap_or_default();
    format!(
        "graph launch `{}` (UID {}, ts {}){root}",
        trace.name_of(e),
        o.launch.index(),
        e.ts
    )
}

/// The error text when no graph launch was merged.
fn nothing_merged(trace: &Trace, outcomes: &[Outcome]) -> String {
    match outcomes.first() {
        None => "nothing to merge: the trace has no graph launch (hipGraphLaunch, cudaGraphLaunch) in a step annotation or with GPU work".into(),
        Some(o) => format!(
            "no graph launch could be merged ({} tried); {}: {}",
            outcomes.len(),
            launch_place(trace, o),
            o.result.as_ref().err().map(|s| s.describe()).unwrap_or_default()
        ),
    }
}

/// The notes of a merge that merged something: what was merged, from which
/// file; launches left unmerged, grouped by reason; discarded and
/// unverified capture launches.
fn outcome_notes(trace: &Trace, outcomes: &[Outcome]) -> Vec<String> {
    type Key = (String, i128, &'static str, capture::Mode);
    let mut merged: Vec<(Key, usize, usize)> = Vec::new();
    let mut skipped: Vec<(String, &Outcome, usize)> = Vec::new();
    let mut discarded: Vec<((usize, String, usize), usize)> = Vec::new();
    let (mut unverified, mut left_out) = (0, 0);
    for o in outcomes {
        match &o.result {
            Ok(m) => {
                let key = (
                    m.file.clone(),
                    m.batch_size,
                    m.mode.as_str(),
                    m.aligned.mode,
                );
                match merged.iter_mut().find(|(k, _, _)| *k == key) {
                    Some((_, n, k)) => (*n, *k) = (*n + 1, *k + m.aligned.pairs.len()),
                    None => merged.push((key, 1, m.aligned.pairs.len())),
                }
                if let Some(first) = &m.first_discarded {
                    let key = (m.aligned.discarded.len(), first.clone(), m.capture_launches);
                    match discarded.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, n)) => *n += 1,
                        None => discarded.push((key, 1)),
                    }
                }
                unverified += m.aligned.unverified;
                left_out += m.gpu_events_left_out;
            }
            // A launch without GPU work hides nothing (e.g. the driver call
            // inside a runtime graph launch).
            Err(capture::Skipped::NoKernels) => {}
            Err(why) => match skipped.iter_mut().find(|(w, _, _)| *w == why.describe()) {
                Some((_, _, n)) => *n += 1,
                None => skipped.push((why.describe(), o, 1)),
            },
        }
    }
    let mut out: Vec<String> = merged
        .iter()
        .map(|((file, bs, mode, how), n, k)| {
            let how = match how {
                capture::Mode::Positional => String::new(),
                m => format!("; kernels paired {}", m.describe()),
            };
            format!(
                "capture merge: merged {n} graph launch{}, {k} kernels, from {file} (bs {bs}, {mode}{how})",
                if *n == 1 { "" } else { "es" }
            )
        })
        .collect();
    out.extend(discarded.iter().map(|((d, first, total), n)| {
        format!(
            "capture merge: greedy alignment discarded {d} of {total} capture launches (first: `{first}`) for {n} graph launch{}: their kernel names matched no replayed kernel",
            if *n == 1 { "" } else { "es" }
        )
    }));
    out.extend(skipped.iter().map(|(why, o, n)| {
        let more = if *n > 1 {
            format!(" (and {} more graph launches for the same reason)", n - 1)
        } else {
            String::new()
        };
        format!(
            "capture merge: {} not merged{more}: {why}; its kernels stay booked to the launch",
            launch_place(trace, o)
        )
    }));
    if unverified > 0 {
        out.push(format!(
            "capture merge: {unverified} capture launches carry no args.kernel, so their pairing with replayed kernels could not be checked"
        ));
    }
    if left_out > 0 {
        out.push(format!(
            "capture merge: {left_out} GPU events recorded inside capture windows were not copied"
        ));
    }
    out
}
