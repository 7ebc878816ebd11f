//! `tracelens compare`: report comparison and the CI gate. (Being built.)

use clap::Args;

/// Options of `tracelens compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// Baseline, then variants: xlsx reports, CSV folders or traces.
    #[arg(required = true, num_args = 2..)]
    pub inputs: Vec<std::path::PathBuf>,
}

/// Runs the subcommand; returns the process exit code (0 ok, 1 regression or
/// inconclusive, 2 usage or input errors).
pub fn run(_a: CompareArgs) -> i32 {
    eprintln!("tracelens: error: not implemented yet");
    2
}
