//! `tracelens collectives`: the multi-rank collective report. (Being built.)

use anyhow::{Result, anyhow};
use clap::Args;

/// Options of `tracelens collectives`.
#[derive(Args)]
pub struct CollectivesArgs {
    /// Directory holding one trace per rank.
    #[arg(long)]
    pub trace_dir: std::path::PathBuf,
}

/// Runs the subcommand.
pub fn run(_a: CollectivesArgs) -> Result<()> {
    Err(anyhow!("not implemented yet"))
}
