//! `tracelens split`: an inference trace cut into per-iteration or
//! steady-state window traces and a manifest ([`tracelens::split_trace`]),
//! all written or none.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;
use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::json;

use super::outputs::Kind;
use tracelens::api::output_paths::{self, DirWrites, Input, Output, check_output_paths};
use tracelens::api::split::{DEFAULT_NUM_STEPS, Entry};
use tracelens::error::WriteError;
use tracelens::quote::quoted;
use tracelens::report::staging::Staging;
use tracelens::{Error, RootSource, SplitOptions, SplitRun, SplitSink};

/// The manifests every split writes.
const MANIFESTS: &[&str] = &["execution_details.json", "execution_details.csv"];

/// Options of `tracelens split`.
#[derive(Args)]
#[command(group = clap::ArgGroup::new("mode").required(true).multiple(true)
    .args(["store_single_iteration", "find_steady_state", "divide_phases"]))]
pub(crate) struct SplitArgs {
    /// The inference trace (.json, .json.gz, .zip).
    #[arg(value_name = "TRACE")]
    pub(crate) trace: PathBuf,
    /// The output folder (created); the manifest's paths start with it as
    /// given.
    #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
    pub(crate) output_dir: PathBuf,
    /// Iterations to work on: all, N, or START:END (END excluded, clamped
    /// to the iterations found).
    #[arg(short = 'i', long, value_name = "RANGE", default_value = "all")]
    pub(crate) iterations: String,
    /// Write each iteration of the range as its own trace, named after its
    /// annotation.
    #[arg(long)]
    pub(crate) store_single_iteration: bool,
    /// Find the steady state (steps near the peak request count) and write
    /// three windows of it: a representative prefill/decode mix, the
    /// longest decode-only run, the longest prefill-bearing run.
    #[arg(long)]
    pub(crate) find_steady_state: bool,
    /// Write the steady steps as runs of one phase, into DIR/prefilldecodemix/
    /// and DIR/decode_only/ (wins over --find-steady-state).
    #[arg(long)]
    pub(crate) divide_phases: bool,
    /// Steps in a steady-state window.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_NUM_STEPS)]
    pub(crate) num_steps: usize,
    /// Expected peak concurrency (requests a step): a warning when the
    /// trace's peak differs; with --osl and --r it sets the mixed window's
    /// target.
    #[arg(long = "conc", alias = "CONC", value_name = "N")]
    pub(crate) conc: Option<i64>,
    /// Maximum output sequence length (decode tokens a request).
    #[arg(long = "osl", alias = "OSL", value_name = "TOKENS")]
    pub(crate) osl: Option<f64>,
    /// Output lengths are drawn from [R·OSL, OSL] (R in [0, 1]).
    #[arg(long = "r", alias = "R", value_name = "R")]
    pub(crate) r: Option<f64>,
    /// Print nothing but warnings and errors.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

/// Runs the subcommand.
pub(crate) fn run(a: SplitArgs) -> Result<()> {
    let run = execute(&a)?;
    if a.quiet {
        return Ok(());
    }
    super::stdout::write(&summary(&a, &run))
}

/// Checks the output folder, splits into staged files and commits them.
pub(crate) fn execute(a: &SplitArgs) -> Result<SplitRun> {
    if a.output_dir.as_os_str() == "-" {
        bail!("-o -: split writes a folder of traces (-o DIR)");
    }
    let writes = DirWrites {
        replaces: &[],
        names: MANIFESTS,
    };
    let out = Output {
        setting: "output_dir",
        path: &a.output_dir,
        dir: Some(writes),
    };
    check_output_paths(&[Input::file(&a.trace)], &[out])
        .map_err(|e| anyhow::Error::msg(e.text(&super::output_flag)))?;
    super::outputs::check_kinds(&[("output_dir", Kind::Dir(writes), Some(&a.output_dir))])
        .map_err(anyhow::Error::msg)?;
    let opts = SplitOptions {
        trace: a.trace.clone(),
        output_dir: a.output_dir.clone(),
        iterations: a.iterations.clone(),
        store_single_iteration: a.store_single_iteration,
        find_steady_state: a.find_steady_state,
        divide_phases: a.divide_phases,
        num_steps: a.num_steps,
        conc: a.conc,
        osl: a.osl,
        r: a.r,
    };
    let mut sink = Staged {
        staging: Staging::new(),
        input: output_paths::resolved(&a.trace),
    };
    let run = tracelens::split_trace(&opts, &mut sink)?;
    super::outputs::commit(sink.staging)?;
    Ok(run)
}

/// The split's files, staged until the commit.
struct Staged {
    staging: Staging,
    /// The input, resolved: no output may land on it.
    input: PathBuf,
}

impl SplitSink for Staged {
    fn write(
        &mut self,
        path: &Path,
        body: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), Error> {
        let failed = |e: std::io::Error| {
            Error::Write(WriteError::io(format!("cannot write {}", path.display()))(
                e,
            ))
        };
        if output_paths::resolved(path) == self.input {
            return Err(failed(std::io::Error::other("it is the input trace")));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.staging.create_dir_all(parent)?;
        }
        let file = BufWriter::with_capacity(1 << 20, self.staging.create(path)?);
        if path.extension().is_some_and(|e| e == "gz") {
            let mut gz = GzEncoder::new(file, Compression::default());
            body(&mut gz).map_err(failed)?;
            gz.finish().and_then(|mut f| f.flush()).map_err(failed)
        } else {
            let mut file = file;
            body(&mut file).and_then(|()| file.flush()).map_err(failed)
        }
    }
}

/// Where the roots came from, in words.
fn source_text(s: RootSource) -> &'static str {
    match s {
        RootSource::Detailed => "step annotations, detailed format",
        RootSource::Native => "step annotations, native format",
        RootSource::CallTree => "repeating blocks of the call tree (no step annotations)",
    }
}

/// One output's line.
fn entry_line(e: &Entry) -> String {
    let p = &e.phase;
    format!(
        "  {}: {} events, {} GPU events, GPU busy {:.1} µs over {:.1} µs; {} step{} \
         (prefill {}, mixed {}, decode {}; mean batch {}, mean requests {})\n",
        quoted(&e.output_path),
        e.event_count,
        e.num_gpu_events,
        e.gpu_busy_duration.f64(),
        e.gpu_duration.f64(),
        e.steps.len(),
        if e.steps.len() == 1 { "" } else { "s" },
        p.num_prefill,
        p.num_prefilldecode,
        p.num_decode,
        p.avg_bs,
        p.avg_conc
    )
}

/// The terminal summary: what was found (roots, regions, windows, phases),
/// then each trace written.
pub(crate) fn summary(a: &SplitArgs, run: &SplitRun) -> String {
    let mut text = format!(
        "{}: {} events; {} execution root{} ({}); working on {} [{}, {})\n",
        quoted(&a.trace),
        run.events,
        run.roots,
        if run.roots == 1 { "" } else { "s" },
        source_text(run.source),
        if a.iterations == "all" {
            "all of them"
        } else {
            "-i"
        },
        run.range.0,
        run.range.1
    );
    for n in &run.notes {
        text.push_str(n);
        text.push('\n');
    }
    text.push_str(&format!(
        "wrote {} trace{} (gzip JSON) and {} into {}\n",
        run.entries.len(),
        if run.entries.len() == 1 { "" } else { "s" },
        MANIFESTS.join(" and "),
        quoted(&a.output_dir)
    ));
    for e in &run.entries {
        text.push_str(&entry_line(e));
    }
    text
}

/// The summary as one JSON object, for the Python package.
pub(crate) fn summary_json(a: &SplitArgs, run: &SplitRun) -> String {
    let source = match run.source {
        RootSource::Detailed => "detailed",
        RootSource::Native => "native",
        RootSource::CallTree => "call_tree",
    };
    let outputs: Vec<String> = run
        .entries
        .iter()
        .map(|e| e.output_path.display().to_string())
        .collect();
    json!({
        "trace": a.trace.display().to_string(),
        "output_dir": a.output_dir.display().to_string(),
        "events": run.events,
        "roots": run.roots,
        "root_source": source,
        "range": [run.range.0, run.range.1],
        "regions": run.regions.as_ref().map(|(r, _)| r.iter().map(|(s, e)| [s + run.range.0, e + run.range.0]).collect::<Vec<_>>()),
        "regions_fallback": run.regions.as_ref().map(|(_, f)| *f),
        "notes": run.notes,
        "outputs": outputs,
        "manifest": a.output_dir.join(MANIFESTS[0]).display().to_string(),
    })
    .to_string()
}
