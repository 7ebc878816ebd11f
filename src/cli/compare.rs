//! `tracelens compare`: report comparison and the CI gate.
//!
//! Wiring only: inputs are read (reports) or analysed (traces) here, the
//! comparison and the verdict come from `analysis::compare`, and the files
//! are written through one [`Staging`] so they all appear or none does.

use std::path::{Path, PathBuf};

use clap::Args;
use clap::builder::PossibleValuesParser;

use tracelens::analysis::compare::{self, GateOptions, Input, SheetGroup};
use tracelens::analysis::{ReportOptions, report_needs, run_report};
use tracelens::load;
use tracelens::report::json::Json;
use tracelens::report::markdown::Markdown;
use tracelens::report::staging::Staging;
use tracelens::report::view::verdict;
use tracelens::report::{Document, Writer, read};
use tracelens::table::Table;
use tracelens::trace::tree::{TreeOptions, build};

/// Options of `tracelens compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// Baseline, then one or more variants. Each is an xlsx report (ours or
    /// the reference's), a folder of per-sheet CSVs, or a trace (its report
    /// is computed on the fly).
    #[arg(required = true, num_args = 2.., value_name = "REPORT|TRACE")]
    pub inputs: Vec<PathBuf>,
    /// One tag per input, used in column and sheet names [default: each
    /// input's file name without its extension].
    #[arg(long, num_args = 0.., value_name = "NAME")]
    pub names: Vec<String>,
    /// Sheet groups to compare (for -o and --csv).
    #[arg(long, num_args = 1.., value_name = "GROUP",
          value_parser = PossibleValuesParser::new(SheetGroup::NAMES),
          default_value = "all")]
    pub sheets: Vec<String>,
    /// Write the comparison workbook to FILE.xlsx.
    #[arg(short = 'o', long = "output", value_name = "FILE.xlsx")]
    pub output: Option<PathBuf>,
    /// Write one <sheet>.csv per comparison sheet into DIR.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Write the Markdown verdict (for a pull-request comment) to FILE; - for
    /// stdout. This is the default output when no other is asked for.
    #[arg(long, value_name = "FILE")]
    pub md: Option<PathBuf>,
    /// Write the verdict as JSON (docs/compare-json.md) to FILE; - for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Gate: exit 1 when GPU busy time, an op or an op shape got slower by
    /// more than PCT percent, or when the runs are not comparable.
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub fail_above: Option<f64>,
    /// With --fail-above: slowdowns smaller than MS milliseconds are noise.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub min_ms: f64,
    /// Print nothing but errors (and the requested stdout output).
    #[arg(short, long)]
    pub quiet: bool,
}

/// How an input is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    CsvDir,
    Xlsx,
    Trace,
}

fn kind_of(path: &Path) -> Result<Kind, String> {
    if path.as_os_str() == "-" {
        return Ok(Kind::Trace);
    }
    let meta = std::fs::metadata(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            _ => e.to_string(),
        };
        format!("{}: {why}", path.display())
    })?;
    if meta.is_dir() {
        Ok(Kind::CsvDir)
    } else if read::is_xlsx(path) {
        Ok(Kind::Xlsx)
    } else {
        Ok(Kind::Trace)
    }
}

/// The reference's default tag, `splitext(basename(path))[0]`; for a trace,
/// everything from `.json` on is dropped (`a.json.gz` → `a`).
fn default_tag(path: &Path, kind: Kind) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    if kind == Kind::Trace
        && let Some(i) = name.find(".json")
        && i > 0
    {
        return name[..i].to_string();
    }
    match name.rfind('.') {
        Some(i) if i > 0 => name[..i].to_string(),
        _ => name,
    }
}

/// The sheets of one input and warnings about it, or why it cannot be read.
type Loaded = Result<(Vec<Table>, Vec<String>), String>;

/// Reads or analyses one input.
fn read_input(path: &Path, kind: Kind) -> Loaded {
    let shown = path.display();
    match kind {
        Kind::CsvDir => {
            let sheets = read::read_csv_dir(path).map_err(super::chain)?;
            if sheets.is_empty() {
                return Err(format!(
                    "{shown}: not a report: the folder holds no <sheet>.csv files"
                ));
            }
            Ok((sheets, Vec::new()))
        }
        Kind::Xlsx => read::read_xlsx(path)
            .map(|s| (s, Vec::new()))
            .map_err(super::chain),
        Kind::Trace => {
            let trace = load::load(path, &report_needs()).map_err(|e| format!("{shown}: {e}"))?;
            let tree = build(&trace, TreeOptions::default());
            let report = run_report(&trace, &tree, &ReportOptions::default());
            let notes = report
                .quality
                .notes()
                .into_iter()
                .map(|n| format!("{shown}: {n}"))
                .collect();
            Ok((report.sheets, notes))
        }
    }
}

fn is_stdout(p: &Option<PathBuf>) -> bool {
    p.as_ref().is_some_and(|p| p.as_os_str() == "-")
}

/// Runs the subcommand; returns the process exit code (0 ok, 1 regression or
/// inconclusive, 2 usage or input errors).
pub fn run(a: CompareArgs) -> i32 {
    match run_inner(a) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("tracelens: error: {msg}");
            2
        }
    }
}

fn run_inner(a: CompareArgs) -> Result<i32, String> {
    // Usage checks first: nothing is read when the command line is wrong.
    if let Some(p) = a.fail_above
        && !(p.is_finite() && p >= 0.0)
    {
        return Err(format!(
            "--fail-above must be a percentage of 0 or more, got {p}"
        ));
    }
    if !(a.min_ms.is_finite() && a.min_ms >= 0.0) {
        return Err(format!(
            "--min-ms must be a duration of 0 or more, got {}",
            a.min_ms
        ));
    }
    if !a.names.is_empty() && a.names.len() != a.inputs.len() {
        return Err(format!(
            "--names gives {} names for {} inputs",
            a.names.len(),
            a.inputs.len()
        ));
    }
    if is_stdout(&a.md) && is_stdout(&a.json) {
        return Err("--md - and --json - cannot both go to stdout".into());
    }
    if a.inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err("only one input can be read from stdin (-)".into());
    }
    let groups: Vec<SheetGroup> = a
        .sheets
        .iter()
        .filter_map(|s| SheetGroup::parse(s))
        .collect();

    let kinds: Vec<Kind> = a
        .inputs
        .iter()
        .map(|p| kind_of(p))
        .collect::<Result<_, _>>()?;
    let tags: Vec<String> = if a.names.is_empty() {
        a.inputs
            .iter()
            .zip(&kinds)
            .map(|(p, &k)| default_tag(p, k))
            .collect()
    } else {
        a.names.clone()
    };
    for (n, t) in tags.iter().enumerate() {
        if tags[..n].contains(t) {
            return Err(format!(
                "tags must be unique (\"{t}\" repeats): use --names to disambiguate"
            ));
        }
    }

    // Every input at once: traces are analysed in parallel.
    let loaded: Vec<Loaded> = std::thread::scope(|s| {
        let handles: Vec<_> = a
            .inputs
            .iter()
            .zip(&kinds)
            .map(|(p, &k)| s.spawn(move || read_input(p, k)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("internal error while reading an input".into()))
            })
            .collect()
    });
    let mut inputs = Vec::with_capacity(loaded.len());
    let mut warnings = Vec::new();
    for ((res, tag), path) in loaded.into_iter().zip(tags).zip(&a.inputs) {
        let (sheets, notes) = res?;
        warnings.extend(notes);
        inputs.push(Input {
            tag,
            source: path.display().to_string(),
            sheets,
        });
    }
    if !a.quiet {
        for w in &warnings {
            eprintln!("tracelens: warning: {w}");
        }
    }

    let wants_tables = a.output.is_some() || a.csv.is_some();
    let default_md = !wants_tables && a.md.is_none() && a.json.is_none();
    let comparison = if wants_tables {
        let c = compare::compare(&inputs, &groups).map_err(|e| e.to_string())?;
        if !a.quiet {
            for n in &c.notes {
                eprintln!("tracelens: note: {n}");
            }
        }
        Some(c)
    } else {
        None
    };
    let opts = GateOptions {
        fail_above_pct: a.fail_above,
        min_ms: a.min_ms,
        ..GateOptions::default()
    };
    let verdict = compare::gate(&inputs, &opts);

    let mut staging = Staging::new();
    let mut written = match &comparison {
        Some(c) => {
            let sheets = Document::of_tables(&c.sheets);
            let (csv, xlsx) = (a.csv.as_deref(), a.output.as_deref());
            super::stage_sheets(&mut staging, csv, &sheets, xlsx, &sheets)
                .map_err(|e| format!("{e:#}"))?
        }
        None => Vec::new(),
    };
    let doc = Document {
        page: Some(verdict::page(&verdict)),
        record: Some(verdict::record(&verdict)),
        ..Document::default()
    };
    let text = |w: &dyn Writer| super::render_text(w, &doc).map_err(|e| format!("{e:#}"));
    let md = text(&Markdown { path: "-".into() })?;
    let json = text(&Json { path: "-".into() })?;
    for (path, body) in [(&a.md, &md), (&a.json, &json)] {
        if let Some(p) = path
            && p.as_os_str() != "-"
        {
            staging.put(p, body.as_bytes()).map_err(super::chain)?;
            written.push(p.display().to_string());
        }
    }
    staging.commit().map_err(super::chain)?;

    if default_md || is_stdout(&a.md) {
        print!("{md}");
    }
    if is_stdout(&a.json) {
        println!("{json}");
    }
    if !a.quiet {
        for w in &written {
            eprintln!("wrote {w}");
        }
        if a.fail_above.is_some() {
            eprintln!(
                "tracelens: verdict: {} (exit {})",
                verdict.verdict.as_str(),
                verdict.exit_code
            );
        }
    }
    Ok(if a.fail_above.is_some() {
        verdict.exit_code
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_tags() {
        let t = |p: &str, k| default_tag(Path::new(p), k);
        assert_eq!(t("a/h100.ref", Kind::CsvDir), "h100");
        assert_eq!(
            t("a/h100_perf_report_csvs", Kind::CsvDir),
            "h100_perf_report_csvs"
        );
        assert_eq!(t("a/r.xlsx", Kind::Xlsx), "r");
        assert_eq!(t("a/x.json.gz", Kind::Trace), "x");
        assert_eq!(t("a/x.zip", Kind::Trace), "x");
        assert_eq!(t(".hidden", Kind::CsvDir), ".hidden");
    }
}
