//! `tracelens genesis`: the report of a Genesis/Taichi physics-simulation
//! capture folder (rocprofv3's kernel trace, as CSV or JSON, and its
//! Perfetto trace): the rocprof kernel sheets with physics categories, the
//! GPU timeline of the steady state, and the Perfetto HIP-activity and
//! memory-copy sheets, named as the reference's workbook names them.

use std::path::{Path, PathBuf};

use crate::analysis::genesis::{self, SteadyOptions, SteadyState};
use crate::analysis::{ReportOptions, perfetto, rocprof};
use crate::error::Error;
use crate::load;
use crate::names::perfetto::sheet as pf;
use crate::names::sheet;
use crate::report::genesis_summary::SummaryInputs;
use crate::table::Table;

/// The workbook prefix of the Perfetto HIP-activity sheets.
const HIP_ACTIVITY: &str = "pftrace_hip_activity";
/// The workbook prefix of the Perfetto memory-copy sheet.
const MEMORY_COPY: &str = "pftrace_memory_copy";
use crate::trace::Needs;

/// Options of [`genesis()`] (the reference's flags).
#[derive(Debug, Clone, PartialEq)]
pub struct GenesisOptions {
    /// Add the `kernel_details` sheet (a row per dispatch).
    pub kernel_details: bool,
    /// Add the short-kernel sheets (when they have rows).
    pub short_kernel_study: bool,
    /// A gap between dispatches at least this long (ms) ends the
    /// JIT/build phase.
    pub steady_state_gap_ms: f64,
    /// Without such a gap, the steady state is the last this many seconds;
    /// None: `wall_time=<s>s` of the capture's `run.log` plus 5 %, else 5 s.
    pub steady_state_fallback_s: Option<f64>,
}

impl Default for GenesisOptions {
    fn default() -> GenesisOptions {
        GenesisOptions {
            kernel_details: false,
            short_kernel_study: true,
            steady_state_gap_ms: 1000.0,
            steady_state_fallback_s: None,
        }
    }
}

/// The files of a capture folder the report reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// The folder given.
    pub dir: PathBuf,
    /// Where rocprofv3 wrote: `kernel_trace/` when there is one, else the
    /// folder itself.
    pub rocprof_dir: PathBuf,
    /// The kernel-trace CSV (`kernel_kernel_trace.csv`, else the first
    /// `*_kernel_trace.csv`), when there is one.
    pub kernel_csv: Option<PathBuf>,
    /// The first `*_results.json`, read when there is no CSV.
    pub profile_json: Option<PathBuf>,
    /// The first `*_results.pftrace`.
    pub pftrace: Option<PathBuf>,
    /// `capture_manifest.json` or `combined_manifest.json`, parsed.
    pub manifest: Option<serde_json::Value>,
}

/// The first file (by name) of `roots`' entries named `*<suffix>`.
fn first_match(roots: &[&Path], suffix: &str) -> Option<PathBuf> {
    for root in roots {
        let Ok(entries) = std::fs::read_dir(root) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.len() > suffix.len() && n.ends_with(suffix))
            })
            .collect();
        names.sort();
        if let Some(first) = names.into_iter().next() {
            return Some(first);
        }
    }
    None
}

/// Finds the files of the capture folder `dir`.
pub fn find_capture(dir: &Path) -> Result<Capture, Error> {
    let fail = |msg: String| Error::Capture {
        dir: dir.to_path_buf(),
        msg,
    };
    if !dir.is_dir() {
        return Err(fail("not a folder".into()));
    }
    let mut manifest = None;
    for name in ["capture_manifest.json", "combined_manifest.json"] {
        let p = dir.join(name);
        if p.is_file() {
            let text = std::fs::read(&p).map_err(|e| fail(format!("{name}: {e}")))?;
            let value = serde_json::from_slice(&text)
                .map_err(|e| fail(format!("{name}: not JSON: {e}")))?;
            manifest = Some(value);
            break;
        }
    }
    let kernel_trace = dir.join("kernel_trace");
    let rocprof_dir = if kernel_trace.is_dir() {
        kernel_trace
    } else {
        dir.to_path_buf()
    };
    let roots = [rocprof_dir.as_path(), dir];
    let exact = rocprof_dir.join("kernel_kernel_trace.csv");
    let kernel_csv = if exact.is_file() {
        Some(exact)
    } else {
        first_match(&roots, "_kernel_trace.csv")
    };
    Ok(Capture {
        dir: dir.to_path_buf(),
        kernel_csv,
        profile_json: first_match(&roots, "_results.json"),
        pftrace: first_match(&roots, "_results.pftrace"),
        rocprof_dir,
        manifest,
    })
}

/// The steady-state fallback window (s): `wall_time=<s>s` in the capture's
/// `run.log`, plus 5 % so that the window covers the whole timed burst.
pub fn run_log_window_s(dir: &Path) -> Option<f64> {
    let text = std::fs::read(dir.join("run.log")).ok()?;
    let text = String::from_utf8_lossy(&text);
    let re = regex::Regex::new(r"wall_time=([\d.]+)s").ok()?;
    let value: f64 = re.captures(&text)?.get(1)?.as_str().parse().ok()?;
    Some(value * 1.05)
}

/// A section of the workbook: its sheets, and the prefix their workbook
/// names get (none for the rocprof sheets).
#[derive(Debug, Clone)]
pub struct Section {
    /// `None` for the rocprof sheets; `pftrace_hip_activity`,
    /// `pftrace_memory_copy`.
    pub prefix: Option<&'static str>,
    /// The sheets under their own names.
    pub sheets: Vec<Table>,
}

/// What [`genesis()`] found and computed.
#[derive(Debug, Clone)]
pub struct GenesisRun {
    /// The capture's files.
    pub capture: Capture,
    /// The fallback window used (s).
    pub fallback_s: f64,
    /// The gap threshold used (ms).
    pub gap_threshold_ms: f64,
    /// The steady state, when the dispatches came from the kernel-trace
    /// CSV (the JSON's keep the whole session's timeline).
    pub steady: Option<SteadyState>,
    /// The rocprof sheets, then the Perfetto ones (when the capture has a
    /// `.pftrace`), each under its own name.
    pub sections: Vec<Section>,
    /// What the inputs did not allow (one line each).
    pub warnings: Vec<String>,
}

impl GenesisRun {
    /// A sheet of a section by its own name.
    pub fn sheet(&self, prefix: Option<&str>, name: &str) -> Option<&Table> {
        self.sections
            .iter()
            .filter(|s| s.prefix == prefix)
            .flat_map(|s| &s.sheets)
            .find(|t| t.name == name)
    }

    /// What the summary page shows
    /// ([`crate::report::genesis_summary::summary_markdown`]).
    pub fn page_inputs(&self) -> SummaryInputs<'_> {
        SummaryInputs {
            capture_dir: &self.capture.dir,
            manifest: self.capture.manifest.as_ref(),
            steady: self.steady.as_ref(),
            gpu_timeline: self.sheet(None, sheet::GPU_TIMELINE),
            by_category: self.sheet(None, sheet::KERNEL_SUMMARY_BY_CATEGORY),
            kernel_summary: self.sheet(None, sheet::KERNEL_SUMMARY),
            hip_summary: self.sheet(Some(HIP_ACTIVITY), pf::HIP_SUMMARY),
        }
    }

    /// The workbook's sheets, in order, named as the reference names them
    /// (prefixed, cut to 31 characters, repeats numbered); sheets without
    /// rows are left out.
    pub fn workbook_sheets(&self) -> Vec<Table> {
        let mut used = Vec::new();
        let mut out = Vec::new();
        for s in &self.sections {
            for t in s.sheets.iter().filter(|t| t.nrows() > 0 && t.ncols() > 0) {
                let label = match s.prefix {
                    Some(p) => format!("{p}_{}", t.name),
                    None => t.name.clone(),
                };
                let mut t = t.clone();
                t.name = genesis::sheet_name(&label, &mut used);
                out.push(t);
            }
        }
        out
    }
}

/// Called as each step of [`genesis()`] starts, with what it does.
pub type Progress<'a> = &'a dyn Fn(&str);

/// The Genesis report of the capture folder `dir`.
pub fn genesis(
    dir: &Path,
    opts: &GenesisOptions,
    progress: Option<Progress>,
) -> Result<GenesisRun, Error> {
    let step = |what: &str| {
        if let Some(p) = progress {
            p(what);
        }
    };
    let (steady_opts, fallback_s) = steady_options(dir, opts)?;
    let capture = find_capture(dir)?;
    step("reading the kernel trace");
    let trace = kernel_trace(&capture)?;
    step("computing the kernel sheets");
    let mut rocprof_sheets = kernel_sheets(&trace, opts);
    let mut warnings = Vec::new();
    let steady = if capture.kernel_csv.is_some() {
        let times: Vec<(i64, i64)> = trace
            .dispatches()
            .map(|d| d.kernels.iter().map(|k| (k.start_ns, k.end_ns)).collect())
            .unwrap_or_default();
        let found = genesis::steady_state(&times, steady_opts);
        if found.is_none() {
            warnings.push(
                "no dispatch in the steady-state window: gpu_timeline covers the whole session"
                    .to_string(),
            );
        }
        found
    } else {
        warnings.push(
            "no kernel-trace CSV: gpu_timeline covers the whole profiling session, not its steady state"
                .to_string(),
        );
        None
    };
    if let Some(s) = &steady {
        replace_sheet(&mut rocprof_sheets, s.timeline.clone());
    }
    drop(trace);
    let mut sections = vec![Section {
        prefix: None,
        sheets: rocprof_sheets,
    }];
    if let Some(pftrace) = &capture.pftrace {
        step("reading the Perfetto trace");
        let trace = load::load(pftrace, &Needs::default()).map_err(load_error(pftrace))?;
        step("computing the Perfetto sheets");
        sections.extend(perfetto_sections(&trace));
    }
    Ok(GenesisRun {
        capture,
        fallback_s,
        gap_threshold_ms: opts.steady_state_gap_ms,
        steady,
        sections,
        warnings,
    })
}

/// How the steady state is found, checked, and the fallback window (s)
/// it uses: the option's, else the capture's `run.log` window, else 5 s.
fn steady_options(dir: &Path, opts: &GenesisOptions) -> Result<(SteadyOptions, f64), Error> {
    let fail = |msg: String| Error::Capture {
        dir: dir.to_path_buf(),
        msg,
    };
    let gap_ms = opts.steady_state_gap_ms;
    if !(gap_ms.is_finite() && gap_ms >= 0.0) {
        return Err(fail(format!(
            "--steady-state-gap-ms must be a number of ms >= 0, got {gap_ms}"
        )));
    }
    let fallback_s = match opts.steady_state_fallback_s {
        Some(s) => s,
        None => run_log_window_s(dir).unwrap_or(5.0),
    };
    if !(fallback_s.is_finite() && fallback_s >= 0.0) {
        return Err(fail(format!(
            "--steady-state-fallback-s must be a number of seconds >= 0, got {fallback_s}"
        )));
    }
    // Python's int() of the products: cut toward zero.
    let steady = SteadyOptions {
        gap_threshold_ns: (gap_ms * 1e6) as i64,
        fallback_window_ns: (fallback_s * 1e9) as i64,
    };
    Ok((steady, fallback_s))
}

/// The error of loading the file at `path`.
fn load_error(path: &Path) -> impl FnOnce(load::LoadError) -> Error {
    let path = path.to_path_buf();
    move |error| Error::Load { path, error }
}

/// The capture's dispatches: from its kernel-trace CSV, else its
/// `*_results.json`.
fn kernel_trace(capture: &Capture) -> Result<crate::trace::Trace, Error> {
    let needs = Needs::default();
    match (&capture.kernel_csv, &capture.profile_json) {
        (Some(csv), _) => {
            let agents = agent_info_beside(csv);
            load::rocprof_csv::read_kernel_trace(csv, agents.as_deref(), &needs)
                .map_err(load_error(csv))
        }
        (None, Some(json)) => {
            load::load_as(json, &needs, Some(load::Format::RocprofJson)).map_err(load_error(json))
        }
        (None, None) => Err(Error::Capture {
            dir: capture.dir.clone(),
            msg: format!(
                "no kernel trace: neither *_kernel_trace.csv nor *_results.json in {} or {}",
                capture.rocprof_dir.display(),
                capture.dir.display()
            ),
        }),
    }
}

/// Puts `table` in place of the sheet of its name in `sheets`.
fn replace_sheet(sheets: &mut [Table], table: Table) {
    if let Some(slot) = sheets.iter_mut().find(|t| t.name == table.name) {
        *slot = table;
    }
}

/// The rocprof report's sheets the options keep, the kernel summary in
/// its true units with physics categories, and the summary by category.
fn kernel_sheets(trace: &crate::trace::Trace, opts: &GenesisOptions) -> Vec<Table> {
    let mut sheets = rocprof::run_report(trace, &ReportOptions::default()).sheets;
    sheets.retain(|t| match t.name.as_str() {
        sheet::KERNEL_DETAILS => opts.kernel_details,
        sheet::SHORT_KERNELS_SUMMARY | sheet::SHORT_KERNEL_HISTOGRAM => opts.short_kernel_study,
        _ => true,
    });
    let summary = sheets.iter_mut().find(|t| t.name == sheet::KERNEL_SUMMARY);
    if let Some(summary) = summary
        && summary.nrows() > 0
    {
        genesis::fix_kernel_summary(summary);
        let by_category = genesis::category_summary(summary);
        replace_sheet(&mut sheets, by_category);
    }
    sheets
}

/// The Perfetto report's HIP-activity and memory-copy sheets, as the
/// workbook's two Perfetto sections.
fn perfetto_sections(trace: &crate::trace::Trace) -> [Section; 2] {
    let mut sheets = perfetto::run_report(trace, &ReportOptions::default()).sheets;
    let mut take = |name: &str| {
        sheets
            .iter()
            .position(|t| t.name == name)
            .map(|i| sheets.remove(i))
    };
    let activity = [
        pf::CATEGORY_SUMMARY,
        pf::XLA_TOP,
        pf::KERNEL_SUMMARY,
        pf::HIP_SUMMARY,
    ];
    let hip_activity: Vec<Table> = activity.iter().filter_map(|n| take(n)).collect();
    let copies: Vec<Table> = take(pf::MEMORY_COPY_BY_COPY_BYTES).into_iter().collect();
    [
        Section {
            prefix: Some(HIP_ACTIVITY),
            sheets: hip_activity,
        },
        Section {
            prefix: Some(MEMORY_COPY),
            sheets: copies,
        },
    ]
}

/// The agent-info CSV written beside a kernel-trace CSV
/// (`<prefix>_agent_info.csv`), when it is there.
fn agent_info_beside(kernel_csv: &Path) -> Option<PathBuf> {
    let name = kernel_csv.file_name()?.to_str()?;
    let prefix = name.strip_suffix("_kernel_trace.csv")?;
    let p = kernel_csv.with_file_name(format!("{prefix}_agent_info.csv"));
    p.is_file().then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_log_window_gets_five_percent_more() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("run.log"),
            "n_envs= 4096 | wall_time=3.98s | FPS=1\n",
        )
        .unwrap();
        assert_eq!(run_log_window_s(dir.path()), Some(3.98 * 1.05));
        std::fs::write(dir.path().join("run.log"), "no time here").unwrap();
        assert_eq!(run_log_window_s(dir.path()), None);
    }

    #[test]
    fn capture_files_are_found_by_suffix_first_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let kt = dir.path().join("kernel_trace");
        std::fs::create_dir(&kt).unwrap();
        for f in [
            "b_kernel_trace.csv",
            "a_kernel_trace.csv",
            "z_results.pftrace",
        ] {
            std::fs::write(kt.join(f), "").unwrap();
        }
        std::fs::write(dir.path().join("a_results.pftrace"), "").unwrap();
        let c = find_capture(dir.path()).unwrap();
        assert_eq!(c.kernel_csv, Some(kt.join("a_kernel_trace.csv")));
        // kernel_trace/ is searched before the folder itself.
        assert_eq!(c.pftrace, Some(kt.join("z_results.pftrace")));
        assert_eq!(c.profile_json, None);
        assert_eq!(
            agent_info_beside(&kt.join("a_kernel_trace.csv")),
            None,
            "no agent info written"
        );
        std::fs::write(kt.join("kernel_kernel_trace.csv"), "").unwrap();
        let c = find_capture(dir.path()).unwrap();
        assert_eq!(c.kernel_csv, Some(kt.join("kernel_kernel_trace.csv")));
    }
}
