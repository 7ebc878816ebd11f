//! `tracelens merge`: several ranks' traces as one timeline
//! ([`tracelens::merge_traces`]), written gzip-packed when the output name
//! ends in `.gz`, all or nothing.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;
use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::{Value, json};

use super::outputs::Kind;
use tracelens::api::output_paths::{self, Input, Output, check_output_paths};
use tracelens::quote::quoted;
use tracelens::report::staging::Staging;
use tracelens::{CollectivesOptions, MergeOptions, MergeRun, RankSummary};

/// Options of `tracelens merge`.
#[derive(Args)]
pub(crate) struct MergeArgs {
    /// The rank traces in rank order (.json, .json.gz, .zip): the first
    /// is rank 0 and sets the offsets.
    #[arg(
        value_name = "TRACE",
        required_unless_present = "trace_dir",
        conflicts_with = "trace_dir"
    )]
    pub(crate) traces: Vec<PathBuf>,
    /// A folder of rank traces instead, each rank found as `collectives`
    /// finds it (distributedInfo.rank, else the file name).
    #[arg(long, value_name = "DIR")]
    pub(crate) trace_dir: Option<PathBuf>,
    /// With --trace-dir: number of ranks; every rank 0..N-1 needs a trace
    /// [default: the traces' distributedInfo.world_size, else the number
    /// of traces found].
    #[arg(long, value_name = "N", requires = "trace_dir",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) world_size: Option<u32>,
    /// With --trace-dir: also look in its subdirectories.
    #[arg(long, requires = "trace_dir")]
    pub(crate) recursive: bool,
    /// With --trace-dir: take each file's rank from its name with this
    /// regular expression (the group named `rank`, else the first group).
    #[arg(long, value_name = "RX", requires = "trace_dir")]
    pub(crate) rank_regex: Option<String>,
    /// The merged trace: `{"traceEvents": [...]}`, gzip-packed when FILE
    /// ends in .gz. Written exactly at FILE.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: PathBuf,
    /// Keep python_function events (dropped by default, as the reference
    /// drops them).
    #[arg(long)]
    pub(crate) include_pyfunc: bool,
    /// Keep only events overlapping START..END (µs, the traces' own `ts`,
    /// inclusive); events without a `ts` (thread names) are kept.
    #[arg(long, value_name = "START:END")]
    pub(crate) window: Option<String>,
    /// Move every rank's timestamps onto rank 0's clock (each trace's
    /// baseTimeNanoseconds, which Kineto's ts count from); every trace
    /// must record one. Off by default, as in the reference.
    #[arg(long)]
    pub(crate) align_clock: bool,
    /// Print nothing but warnings and errors.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

/// A merge done: what it did, where and how many bytes it wrote.
pub(crate) struct Merged {
    /// The merge.
    pub(crate) run: MergeRun,
    /// The output file.
    pub(crate) output: PathBuf,
    /// Bytes written to it.
    pub(crate) bytes: u64,
    /// Warnings of the rank discovery.
    pub(crate) warnings: Vec<String>,
}

/// Runs the subcommand.
pub(crate) fn run(a: MergeArgs) -> Result<()> {
    let merged = execute(&a)?;
    for w in &merged.warnings {
        super::print_warning(w);
    }
    if a.quiet {
        return Ok(());
    }
    super::stdout::write(&summary(&merged))
}

/// Checks the output path, finds the ranks, merges them into a staged
/// file and commits it.
pub(crate) fn execute(a: &MergeArgs) -> Result<Merged> {
    if a.output.as_os_str() == "-" {
        bail!("-o -: the merged trace goes to a file (-o FILE.json.gz)");
    }
    check_output(a)?;
    let (traces, warnings) = rank_traces(a)?;
    let opts = MergeOptions {
        traces,
        include_pyfunc: a.include_pyfunc,
        window: a
            .window
            .as_deref()
            .map(super::critical_path::parse_window)
            .transpose()?,
        align_clock: a.align_clock,
    };
    let mut staging = Staging::new();
    if let Some(parent) = a.output.parent().filter(|p| !p.as_os_str().is_empty()) {
        staging.create_dir_all(parent)?;
    }
    let file = Counted::new(BufWriter::with_capacity(
        1 << 20,
        staging.create(&a.output)?,
    ));
    let (run, bytes) = if is_gzip(&a.output) {
        let mut gz = GzEncoder::new(file, Compression::default());
        let run = tracelens::merge_traces(&opts, &mut gz)?;
        (run, finish(gz.finish()?)?)
    } else {
        let mut file = file;
        let run = tracelens::merge_traces(&opts, &mut file)?;
        (run, finish(file)?)
    };
    super::outputs::commit(staging)?;
    Ok(Merged {
        run,
        output: a.output.clone(),
        bytes,
        warnings: warnings.iter().map(|w| w.text(&super::flag)).collect(),
    })
}

/// Whether `path` names a gzip file (`.gz`, any case).
fn is_gzip(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Flushes the staged file; the bytes written.
fn finish(mut file: Counted<BufWriter<std::fs::File>>) -> io::Result<u64> {
    file.flush()?;
    Ok(file.count)
}

/// Refuses, before any work, an output that is an input, lies in the
/// trace folder, or is not a file a run may replace.
fn check_output(a: &MergeArgs) -> Result<()> {
    let mut inputs: Vec<Input> = a.traces.iter().map(Input::file).collect();
    if let Some(dir) = &a.trace_dir {
        inputs.push(Input::dir(dir, output_paths::TRACE_FILES));
    }
    let out = Output {
        setting: "output",
        path: &a.output,
        dir: None,
    };
    check_output_paths(&inputs, &[out])
        .map_err(|e| anyhow::Error::msg(e.text(&super::output_flag)))?;
    super::outputs::check_kinds(&[("output", Kind::File, Some(&a.output))])
        .map_err(anyhow::Error::msg)
}

/// The traces in rank order: as given, or found in `--trace-dir`.
fn rank_traces(a: &MergeArgs) -> Result<(Vec<PathBuf>, Vec<tracelens::RankWarning>)> {
    let Some(dir) = &a.trace_dir else {
        return Ok((a.traces.clone(), Vec::new()));
    };
    let opts = CollectivesOptions {
        trace_dir: dir.clone(),
        world_size: a.world_size.map(|w| w as usize),
        recursive: a.recursive,
        rank_regex: a.rank_regex.clone(),
        ..CollectivesOptions::default()
    };
    Ok(tracelens::discover_rank_paths(&opts, None)?)
}

/// The terminal summary: output, offsets, each rank's counts, the labels
/// and what was done about the clocks.
pub(crate) fn summary(m: &Merged) -> String {
    let r = &m.run;
    let packing = if is_gzip(&m.output) {
        "gzip JSON"
    } else {
        "JSON"
    };
    let mut text = format!(
        "merged {} rank{} into {} ({} bytes, {packing})\n",
        r.ranks.len(),
        if r.ranks.len() == 1 { "" } else { "s" },
        quoted(&m.output),
        m.bytes
    );
    let offsets: Vec<String> = r
        .offsets
        .multipliers
        .iter()
        .map(|(f, mult)| format!("{f} + rank x {mult}"))
        .collect();
    text.push_str(&format!(
        "linking key: {}; offsets: {}\n",
        r.offsets.linking_key,
        if offsets.is_empty() {
            "none".to_string()
        } else {
            offsets.join(", ")
        }
    ));
    for s in &r.ranks {
        text.push_str(&rank_line(s));
    }
    text.push_str(&format!(
        "labelled {} process{} RANK <r> - GPU|CPU\n",
        r.processes,
        if r.processes == 1 { "" } else { "es" }
    ));
    text.push_str(&format!("clock: {}\n", clock_note(&r.ranks)));
    text.push_str(&format!("wrote {}\n", m.output.display()));
    text
}

/// The summary as one JSON object, for the Python package.
pub(crate) fn summary_json(m: &Merged) -> String {
    let r = &m.run;
    // Multipliers past 64 bits (never in practice) go as text.
    let int = |v: i128| i64::try_from(v).map_or_else(|_| Value::String(v.to_string()), Value::from);
    let offsets: serde_json::Map<String, Value> = r
        .offsets
        .multipliers
        .iter()
        .map(|(f, mult)| (f.to_string(), int(*mult)))
        .collect();
    let ranks: Vec<Value> = r
        .ranks
        .iter()
        .map(|s| {
            json!({
                "rank": s.rank,
                "path": s.path.display().to_string(),
                "events": s.events,
                "kept": s.kept,
                "dropped_metadata": s.dropped_metadata,
                "dropped_filter": s.dropped_filter,
                "dropped_window": s.dropped_window,
                "base_time_ns": s.base_time_ns.map(int),
                "shift_us": s.shift_us,
            })
        })
        .collect();
    json!({
        "output": m.output.display().to_string(),
        "bytes": m.bytes,
        "linking_key": r.offsets.linking_key,
        "offsets": offsets,
        "ranks": ranks,
        "processes": r.processes,
        "clock": clock_note(&r.ranks),
        "warnings": m.warnings,
    })
    .to_string()
}

/// One rank's line: events read, kept, and dropped by reason.
fn rank_line(s: &RankSummary) -> String {
    let mut dropped = vec![format!("{} process metadata", s.dropped_metadata)];
    dropped.push(format!("{} by the filter", s.dropped_filter));
    if s.dropped_window > 0 {
        dropped.push(format!("{} outside the window", s.dropped_window));
    }
    format!(
        "rank {}: {}: {} events, {} kept; dropped {}\n",
        s.rank,
        quoted(&s.path),
        s.events,
        s.kept,
        dropped.join(", ")
    )
}

/// What the traces say about a common clock, and that timestamps are
/// left as recorded.
pub(crate) fn clock_note(ranks: &[RankSummary]) -> String {
    if ranks.iter().any(|s| s.shift_us.is_some()) {
        let shifts: Vec<String> = ranks
            .iter()
            .skip(1)
            .map(|s| format!("rank {} {:+} µs", s.rank, s.shift_us.unwrap_or(0.0)))
            .collect();
        return format!(
            "aligned on rank 0's baseTimeNanoseconds{}{}",
            if shifts.is_empty() { "" } else { ": " },
            shifts.join(", ")
        );
    }
    let bases: Vec<i128> = ranks.iter().filter_map(|s| s.base_time_ns).collect();
    let kept = "timestamps are left as recorded, not aligned";
    if bases.is_empty() {
        return format!("no trace records baseTimeNanoseconds; {kept}");
    }
    if bases.len() < ranks.len() {
        return format!(
            "{} of {} traces record baseTimeNanoseconds; {kept}",
            bases.len(),
            ranks.len()
        );
    }
    let spread = bases.iter().max().unwrap_or(&0) - bases.iter().min().unwrap_or(&0);
    match spread {
        0 => format!(
            "every trace records baseTimeNanoseconds {}; {kept}",
            bases[0]
        ),
        d => format!(
            "baseTimeNanoseconds differs between the traces by up to {d} ns; {kept} (each rank's ts stay on its own base; --align-clock moves them onto rank 0's)"
        ),
    }
}

/// A writer that counts the bytes it passes on.
struct Counted<W> {
    inner: W,
    count: u64,
}

impl<W> Counted<W> {
    fn new(inner: W) -> Self {
        Counted { inner, count: 0 }
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
