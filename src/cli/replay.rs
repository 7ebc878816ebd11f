//! `tracelens replay`: minimal reproducers of a trace's slow ops.
//!
//! Wiring only: the library chooses the ops and builds their replay IR
//! ([`tracelens::replay_plan`]); the scripts come from
//! [`tracelens::report::replay`]; everything is written through one
//! [`Staging`], all or nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::outputs::Kind;
use tracelens::api::output_paths::{DirWrites, Input};
use tracelens::report::replay::{
    BATCHED_SCRIPT, OPS_JSON, ReplayScripts, Scripts, Traced, entry_json, script_name,
};
use tracelens::report::staging::Staging;
use tracelens::report::{Document, Writer};
use tracelens::{ReplayPlan, ReplaySelection, replay_plan};

/// Where the scripts run by default.
#[derive(Clone, Copy, ValueEnum)]
pub enum Device {
    /// A CUDA or ROCm GPU (timed with CUDA events).
    Cuda,
    /// The CPU (timed with perf_counter).
    Cpu,
}

/// Options of `tracelens replay`.
#[derive(Args)]
pub struct ReplayArgs {
    /// Trace file: .json, .json.gz or .zip (PyTorch, recorded with
    /// record_shapes=True).
    pub trace: PathBuf,
    /// Replay the first N rows of ops_unique_args (most GPU time first).
    #[arg(long, value_name = "N", conflicts_with_all = ["uid", "op"])]
    pub top: Option<usize>,
    /// Replay this op event (a UID / ex_UID of the report's sheets, the uid
    /// of `tracelens tree` in Python); repeat for several.
    #[arg(long, value_name = "UID", conflicts_with = "op")]
    pub uid: Vec<usize>,
    /// Replay every ops_unique_args row of this op (e.g. aten::addmm).
    #[arg(long, value_name = "NAME")]
    pub op: Option<String>,
    /// Folder for the scripts [default: <trace stem>_replay beside the trace].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The device the scripts run on unless told otherwise (`--device`
    /// when running them).
    #[arg(long, value_enum, default_value = "cuda")]
    pub device: Device,
    /// Write one runner (replay_batched.py) and the list of ops
    /// (replay_ops.json) instead of one script per op; the runner writes
    /// a CSV of measured against traced times.
    #[arg(long)]
    pub batched: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Ops replayed when no selection is given.
const DEFAULT_TOP: usize = 10;

/// `<trace stem>_replay` beside the trace (the stem of the default
/// workbook).
fn default_out(trace: &Path) -> PathBuf {
    tracelens::api::default_paths::default_replay_dir(trace)
}

/// `--out DIR`: the scripts (`*.py`) are replaced as a unit; the batched
/// runner and its list of ops have fixed names.
const REPLAY_WRITES: DirWrites = DirWrites {
    replaces: &["py"],
    names: &[BATCHED_SCRIPT, OPS_JSON],
};
/// `--out DIR` as an output of the path check.
const REPLAY_DIR: Kind = Kind::Dir(REPLAY_WRITES);

/// The command line that wrote the scripts, for their headers.
fn command_line(a: &ReplayArgs, selection: &ReplaySelection) -> String {
    let trace = a
        .trace
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pick = match selection {
        ReplaySelection::Top(n) => format!("--top {n}"),
        ReplaySelection::Op(op) => format!("--op {op}"),
        ReplaySelection::Uids(u) => u
            .iter()
            .map(|u| format!("--uid {u}"))
            .collect::<Vec<_>>()
            .join(" "),
    };
    format!(
        "tracelens replay {trace} {pick}{}",
        if a.batched { " --batched" } else { "" }
    )
}

/// The ops `a` asks for.
fn selection(a: &ReplayArgs) -> ReplaySelection {
    match (&a.top, a.uid.is_empty(), &a.op) {
        (_, false, _) => ReplaySelection::Uids(a.uid.clone()),
        (_, _, Some(op)) => ReplaySelection::Op(op.clone()),
        (Some(n), _, _) => ReplaySelection::Top(*n),
        (None, true, None) => ReplaySelection::Top(DEFAULT_TOP),
    }
}

/// The replayable ops of `plan` (script name and entry, in order) and one
/// terminal line per selected op.
fn entries(a: &ReplayArgs, plan: &ReplayPlan) -> (Vec<(String, serde_json::Value)>, Vec<String>) {
    let trace_file = a
        .trace
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut lines = Vec::new();
    let mut replayable = Vec::new();
    for (i, op) in plan.ops.iter().enumerate() {
        let replay = match &op.replay {
            Ok(replay) => replay,
            Err(why) => {
                lines.push(format!(
                    "  {:>2}. {} (uid {}): not replayable: {why}",
                    i + 1,
                    op.name,
                    op.uid
                ));
                continue;
            }
        };
        let traced = Traced {
            uid: op.uid,
            kernel_us: op.traced_us,
            count: op.count,
            kernels: &op.kernels,
            trace: &trace_file,
        };
        let file = script_name(i + 1, &op.name, op.uid);
        lines.push(format!(
            "  {:>2}. {} (uid {}, {} calls, {:.3} µs each) -> {}",
            i + 1,
            op.name,
            op.uid,
            op.count,
            op.traced_us,
            if a.batched { OPS_JSON } else { &file }
        ));
        replayable.push((file, entry_json(replay, &traced)));
    }
    (replayable, lines)
}

/// The error of a selection without a replayable op: each op's reason.
fn nothing_replayable(a: &ReplayArgs, plan: &ReplayPlan) -> anyhow::Error {
    let why: Vec<String> = plan
        .ops
        .iter()
        .filter_map(|op| {
            op.replay
                .as_ref()
                .err()
                .map(|e| format!("{}: {e}", op.name))
        })
        .collect();
    anyhow::anyhow!(
        "{}: none of the {} selected ops can be replayed ({})",
        tracelens::quote::quoted(&a.trace),
        plan.ops.len(),
        why.join("; ")
    )
}

/// Runs the subcommand.
pub fn run(a: ReplayArgs) -> Result<()> {
    let selection = selection(&a);
    let out = a.out.clone().unwrap_or_else(|| default_out(&a.trace));
    let outputs = [("out", REPLAY_DIR, Some(out.as_path()))];
    super::outputs::check(&[Input::file(&a.trace)], &outputs, None).map_err(anyhow::Error::msg)?;
    let plan = replay_plan(&a.trace, &selection).map_err(anyhow::Error::new)?;
    let device = match a.device {
        Device::Cuda => "cuda",
        Device::Cpu => "cpu",
    };
    let command = command_line(&a, &selection);
    let (ops, lines) = entries(&a, &plan);
    if ops.is_empty() {
        return Err(nothing_replayable(&a, &plan));
    }
    let replayed = ops.len();
    let doc = Document {
        replay: Some(Scripts {
            ops,
            batched: a.batched,
            device,
            command: &command,
        }),
        ..Document::default()
    };
    let mut staging = Staging::new();
    staging
        .create_dir_all(&out)
        .with_context(|| format!("cannot create {}", tracelens::quote::quoted(&out)))?;
    for ext in REPLAY_WRITES.replaces {
        staging.replace_all(&out, ext);
    }
    ReplayScripts { dir: out.clone() }.stage_files(&doc, &out, &mut staging)?;
    super::outputs::commit(staging)?;
    if !a.quiet {
        let mut text = format!(
            "{replayed} of {} ops replayable (ATen schemas of torch {}):\n{}\n",
            plan.ops.len(),
            plan.torch_version,
            lines.join("\n")
        );
        let run = if a.batched {
            format!("python3 {}", out.join(BATCHED_SCRIPT).display())
        } else {
            format!("python3 {}/<script>.py", out.display())
        };
        text.push_str(&format!(
            "wrote {}/; run: {run} [--device cpu]\n",
            out.display()
        ));
        super::stdout::write(&text)?;
    }
    Ok(())
}
