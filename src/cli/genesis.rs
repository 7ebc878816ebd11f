//! `tracelens genesis`: the Genesis/Taichi report of a capture folder,
//! as the workbook and page the reference writes (and CSV sheets).

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use super::outputs::{CSV_DIR, Kind};
use super::{SheetDirs, stage_sheets};
use tracelens::api::output_paths::{Input, resolved};
use tracelens::report::Document;
use tracelens::report::genesis_summary::summary_markdown;
use tracelens::report::staging::Staging;

/// The workbook's file name in the output folder.
const WORKBOOK: &str = "genesis_perf_report.xlsx";
/// The page's file name in the output folder.
const PAGE: &str = "genesis_summary.md";

/// Options of `tracelens genesis` (the reference's flags).
#[derive(Args)]
pub(crate) struct GenesisArgs {
    /// The capture folder: rocprofv3's output (in kernel_trace/ or the
    /// folder itself: <prefix>_kernel_trace.csv or *_results.json, and
    /// *_results.pftrace), run.log and the capture manifest. Only read.
    #[arg(long, alias = "combined-run-dir", value_name = "DIR")]
    capture_dir: PathBuf,
    /// Where genesis_perf_report.xlsx and genesis_summary.md go (not
    /// inside the capture folder).
    #[arg(long, value_name = "DIR", default_value = "analysis_output")]
    output_dir: PathBuf,
    /// Also write every workbook sheet as DIR/<sheet name>.csv.
    #[arg(long, value_name = "DIR")]
    csv: Option<PathBuf>,
    /// Add the kernel_details sheet (a row per dispatch).
    #[arg(long)]
    kernel_details: bool,
    /// Leave out the short-kernel sheets.
    #[arg(long)]
    no_short_kernel_study: bool,
    /// A gap between dispatches at least this long ends the JIT/build
    /// phase (ms).
    #[arg(long, value_name = "MS", default_value_t = 1000.0)]
    steady_state_gap_ms: f64,
    /// Without such a gap, the steady state is the last this many seconds
    /// [default: run.log's wall_time=<s>s plus 5 %, else 5].
    #[arg(long, value_name = "S")]
    steady_state_fallback_s: Option<f64>,
    /// Accepted for the reference's command line: the API calls of the
    /// kernel-trace CSVs are in none of the sheets.
    #[arg(long)]
    include_api: bool,
    /// Accepted for the reference's command line and ignored: the
    /// .pftrace is decoded natively, no converter is run.
    #[arg(long, value_name = "PATH")]
    traceconv: Option<PathBuf>,
    /// Accepted for the reference's command line and ignored: no
    /// intermediate files are written.
    #[arg(long)]
    keep_work: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
}

/// Runs the subcommand.
pub(crate) fn run(a: GenesisArgs) -> Result<()> {
    let capture = resolved(&a.capture_dir);
    for (flag, dir) in [
        ("--output-dir", Some(&a.output_dir)),
        ("--csv", a.csv.as_ref()),
    ] {
        if let Some(dir) = dir
            && resolved(dir).starts_with(&capture)
        {
            bail!(
                "{flag} {}: inside the capture folder {}, which is only read; name another folder",
                tracelens::quote::quoted(dir),
                tracelens::quote::quoted(&a.capture_dir)
            );
        }
    }
    let workbook = a.output_dir.join(WORKBOOK);
    let page = a.output_dir.join(PAGE);
    let outputs = [
        ("output_dir", Kind::File, Some(workbook.as_path())),
        ("output_dir", Kind::File, Some(page.as_path())),
        ("csv", CSV_DIR, a.csv.as_deref()),
    ];
    super::outputs::check(
        &[Input::dir(&a.capture_dir, &["csv", "json", "pftrace"])],
        &outputs,
        None,
    )
    .map_err(anyhow::Error::msg)?;
    let opts = tracelens::GenesisOptions {
        kernel_details: a.kernel_details,
        short_kernel_study: !a.no_short_kernel_study,
        steady_state_gap_ms: a.steady_state_gap_ms,
        steady_state_fallback_s: a.steady_state_fallback_s,
    };
    let run = tracelens::genesis(&a.capture_dir, &opts, None)?;
    let sheets = run.workbook_sheets();
    let doc = Document::of_tables(&sheets);
    let mut staging = Staging::new();
    let dirs = SheetDirs {
        csv: a.csv.as_deref(),
        parquet: None,
    };
    let mut written = stage_sheets(&mut staging, dirs, &doc, Some(&workbook), &doc)?;
    staging.put(&page, summary_markdown(&run.page_inputs()).as_bytes())?;
    written.push(page.display().to_string());
    super::outputs::commit(staging)?;
    for w in &run.warnings {
        super::print_warning(w);
    }
    if a.quiet {
        return Ok(());
    }
    let mut text = String::new();
    if let Some(s) = &run.steady {
        text.push_str(&format!(
            "steady state: {} ({} dispatches, {:.1} % GPU busy over {:.3} ms)\n",
            s.method, s.dispatch_count, s.gpu_util_pct, s.window_ms
        ));
    }
    for w in written {
        text.push_str(&format!("wrote {w}\n"));
    }
    super::stdout::write(&text)
}
