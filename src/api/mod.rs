//! The library API: what each `tracelens` command computes, callable from
//! Rust (the CLI, the tests and the Python package). Each function loads what
//! it needs — what the loader may leave out is decided here, from the
//! passes' needs, never by the caller — and returns tables and results;
//! rendering and writing files is left to the caller ([`crate::report`]).
//!
//! ```no_run
//! let report = tracelens::analyze("trace.json.gz".as_ref(), &Default::default())?;
//! for sheet in &report.sheets {
//!     println!("{}: {} rows", sheet.name, sheet.nrows());
//! }
//! # Ok::<(), tracelens::Error>(())
//! ```

mod capture;
pub mod checks;
mod collectives;
mod compare;
mod critical_path;
pub mod default_paths;
mod diff;
mod event_text;
mod fleet;
mod genesis;
pub mod merge;
pub mod output_paths;
mod replay;
mod report;
mod roofline;
pub mod split;
mod tree;

pub use crate::analysis::commands::fleet::FleetReport;
pub use crate::analysis::{InferenceOptions, Report, ReportOptions, common::quality::TraceQuality};
pub use crate::error::Error;
pub use checks::{SettingError, check_gate_options, check_percentage};
pub use collectives::{
    CollectivesOptions, CollectivesRun, LoadProgress, RankWarning, collectives,
    discover_rank_paths, discover_ranks, trace_files,
};
pub use compare::{
    CompareInputs, CompareLoadOptions, InputKind, check_tag_count, default_tag, input_kind,
    load_compare_inputs, load_compare_inputs_with,
};
pub use critical_path::{CriticalPathRun, critical_path};
pub use diff::{
    check_diffable, default_out_dir, diff_loaded, diff_traces, diff_traces_checked, diff_tree,
};
pub use fleet::{FleetOptions, find_summaries, fleet, summarize};
pub use genesis::{
    Capture, GenesisOptions, GenesisRun, Section, find_capture, genesis, run_log_window_s,
};
pub use merge::{MergeOptions, MergeRun, RankSummary, merge_traces};
pub use output_paths::{DirWrites, Input, Output, OutputPathError, check_output_paths};
pub use replay::{ReplayPlan, ReplaySelection, SelectedOp, replay_plan};
pub use report::{
    AnalyzeOptions, Step, analyze, analyze_trace, read_report, report_needs, resolve_gpu_arch,
    trace_title,
};
pub use roofline::{Roofline, RooflineOp, RooflineQuery, roofline};
pub use split::{RootSource, SplitOptions, SplitRun, SplitSink, split_trace};
pub use tree::{CallTree, load_tree};
