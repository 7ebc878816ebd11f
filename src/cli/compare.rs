//! `tracelens compare`: report comparison and the CI gate.
//!
//! Wiring only: the library reads the inputs (reports) or analyses them
//! (traces) ([`tracelens::load_compare_inputs`]), the comparison and the
//! verdict come from `analysis::commands::compare`, and the files are written through
//! one [`Staging`] so they all appear or none does.

use std::path::PathBuf;

use clap::Args;
use clap::builder::PossibleValuesParser;

use super::output_flags::{SheetFlags, is_stdout};
use super::outputs::Kind;
use tracelens::CompareInputs;
use tracelens::analysis::commands::compare::{self, Comparison, Gate, GateOptions, SheetGroup};
use tracelens::api::output_paths::{self, Input};
use tracelens::report::json::Json;
use tracelens::report::markdown::Markdown;
use tracelens::report::staging::Staging;
use tracelens::report::view::verdict::{health_fails, page, record, terminal_lines};
use tracelens::report::{Document, Writer};

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
    /// Sheet groups to compare (for -o, --csv and --parquet).
    #[arg(long, num_args = 1.., value_name = "GROUP",
          value_parser = PossibleValuesParser::new(SheetGroup::NAMES),
          default_value = "all")]
    pub sheets: Vec<String>,
    #[command(flatten)]
    pub outputs: SheetFlags,
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
    /// When baseline and variant are both PyTorch traces, skip the tree
    /// diff ("where it moved").
    #[arg(long)]
    pub no_diff: bool,
    /// Exit with status 3 when a health check fails on any input (its
    /// figures cannot be trusted); the outputs are written all the same.
    #[arg(long)]
    pub strict: bool,
    /// Print nothing but errors (and the requested stdout output).
    #[arg(short, long)]
    pub quiet: bool,
}

/// Runs the subcommand; returns the process exit code (0 ok, 1 regression or
/// inconclusive, 2 usage or input errors, 3 a failed health check under
/// `--strict`, which wins over 1).
pub fn run(a: CompareArgs) -> i32 {
    match run_inner(a) {
        Ok(code) => code,
        Err(msg) => {
            super::print_error(&msg);
            2
        }
    }
}

/// Usage checks: nothing is read when the command line is wrong.
fn check_usage(a: &CompareArgs) -> Result<(), String> {
    tracelens::check_gate_options(&gate_options(a))
        .map_err(|e| super::chain(tracelens::Error::from(e)))?;
    tracelens::check_tag_count(a.inputs.len(), &a.names).map_err(super::chain)?;
    let mut outputs = a.outputs.outputs(a.outputs.output.as_deref());
    outputs.push(("json", Kind::Stream, a.json.as_deref()));
    super::outputs::check(&compare_inputs(a), &outputs, Some("--json"))
}

/// What `tracelens compare` reads: each input, a report folder's CSV
/// sheets included.
pub(super) fn compare_inputs(a: &CompareArgs) -> Vec<Input> {
    a.inputs
        .iter()
        .map(|p| Input::dir(p, output_paths::CSV_FILES))
        .collect()
}

/// The gate's options from the command line.
fn gate_options(a: &CompareArgs) -> GateOptions {
    GateOptions {
        fail_above_pct: a.fail_above,
        min_ms: a.min_ms,
        ..GateOptions::default()
    }
}

fn run_inner(a: CompareArgs) -> Result<i32, String> {
    check_usage(&a)?;
    let wants_tables = a.outputs.wants_sheets();
    let c = compute(&a, wants_tables)?;
    if !a.quiet {
        for (kind, msg) in &c.messages {
            super::print_message(kind, msg);
        }
    }
    let written = stage_outputs(&a, c.comparison.as_ref(), &c.texts)?;
    print_outputs(&a, &c.verdict, &c.texts, &written, !wants_tables).map_err(|e| e.to_string())?;
    if a.strict && health_fails(&c.verdict) {
        super::print_warning(&format!(
            "--strict: a health check failed (exit {})",
            super::report::STRICT_FAIL_EXIT
        ));
        return Ok(super::report::STRICT_FAIL_EXIT);
    }
    Ok(if a.fail_above.is_some() {
        c.verdict.exit_code
    } else {
        0
    })
}

/// What `compare` computed, before anything is written or printed.
pub(super) struct Computed {
    /// The comparison sheets, when asked for.
    pub comparison: Option<Comparison>,
    /// The gate's verdict.
    pub verdict: Gate,
    /// The verdict as Markdown and JSON.
    pub texts: VerdictTexts,
    /// Warnings and notes in the order they arose: (`warning` | `note`,
    /// message).
    pub messages: Vec<(&'static str, String)>,
}

/// Loads the inputs and computes the verdict, and the comparison sheets
/// when `with_tables`; refuses gate options out of range first.
pub(super) fn compute(a: &CompareArgs, with_tables: bool) -> Result<Computed, String> {
    let opts = gate_options(a);
    tracelens::check_gate_options(&opts).map_err(|e| super::chain(tracelens::Error::from(e)))?;
    let groups: Vec<SheetGroup> = a
        .sheets
        .iter()
        .filter_map(|s| SheetGroup::parse(s))
        .collect();
    let load = tracelens::CompareLoadOptions {
        tree_diff: !a.no_diff,
    };
    let CompareInputs {
        inputs,
        warnings,
        moved,
    } = tracelens::load_compare_inputs_with(&a.inputs, &a.names, load).map_err(super::chain)?;
    let mut messages: Vec<(&'static str, String)> =
        warnings.into_iter().map(|w| ("warning", w)).collect();
    let mut comparison = if with_tables {
        let c = compare::compare(&inputs, &groups).map_err(|e| e.to_string())?;
        messages.extend(c.notes.iter().map(|n| ("note", n.clone())));
        Some(c)
    } else {
        None
    };
    let mut verdict = compare::gate(&inputs, &opts);
    for (v, m) in verdict.comparisons.iter_mut().zip(moved) {
        match m {
            Some(Ok(m)) => v.where_moved = Some(m),
            Some(Err(e)) => messages.push(("warning", format!("tree diff skipped: {e}"))),
            None => {}
        }
    }
    // Again, with the tree diffs: the kernels behind a moved op.
    compare::find_changes(&mut verdict, &inputs);
    if let Some(c) = comparison.as_mut() {
        c.sheets.extend(compare::diagnosis_sheets(&verdict));
    }
    let texts = verdict_texts(&verdict)?;
    Ok(Computed {
        comparison,
        verdict,
        texts,
        messages,
    })
}

/// The verdict as Markdown and as JSON.
pub(super) struct VerdictTexts {
    /// The Markdown verdict (`--md`).
    pub md: String,
    /// The JSON verdict (`--json`).
    pub json: String,
}

fn verdict_texts(verdict: &Gate) -> Result<VerdictTexts, String> {
    let doc = Document {
        page: Some(page(verdict)),
        record: Some(record(verdict)),
        ..Document::default()
    };
    let text = |w: &dyn Writer| super::render_text(w, &doc).map_err(|e| format!("{e:#}"));
    Ok(VerdictTexts {
        md: text(&Markdown { path: "-".into() })?,
        json: text(&Json { path: "-".into() })?,
    })
}

/// Writes the comparison sheets and the verdict files, all or none;
/// returns the "wrote" lines.
fn stage_outputs(
    a: &CompareArgs,
    comparison: Option<&Comparison>,
    texts: &VerdictTexts,
) -> Result<Vec<String>, String> {
    let mut staging = Staging::new();
    let mut written = match comparison {
        Some(c) => {
            let sheets = Document::of_tables(&c.sheets);
            let xlsx = a.outputs.output.as_deref();
            super::stage_sheets(&mut staging, a.outputs.dirs(), &sheets, xlsx, &sheets)
                .map_err(|e| format!("{e:#}"))?
        }
        None => Vec::new(),
    };
    for (path, body) in [(a.outputs.md(), &texts.md), (a.json.as_ref(), &texts.json)] {
        if let Some(p) = path
            && p.as_os_str() != "-"
        {
            staging.put(p, body.as_bytes()).map_err(super::chain)?;
            written.push(p.display().to_string());
        }
    }
    super::outputs::commit(staging).map_err(super::chain)?;
    Ok(written)
}

/// Prints the verdict where asked (Markdown by default when no file output
/// was asked for), then the files written and the gate's verdict.
fn print_outputs(
    a: &CompareArgs,
    verdict: &Gate,
    texts: &VerdictTexts,
    written: &[String],
    no_tables: bool,
) -> anyhow::Result<()> {
    let default_md = no_tables && a.outputs.md().is_none() && a.json.is_none();
    if default_md || a.outputs.md_to_stdout() {
        super::stdout::write(&texts.md)?;
    }
    if is_stdout(a.json.as_deref()) {
        super::stdout::write_line(&texts.json)?;
    }
    if a.quiet {
        return Ok(());
    }
    for w in written {
        eprintln!("wrote {w}");
    }
    for l in terminal_lines(verdict) {
        eprintln!("{l}");
    }
    if a.fail_above.is_some() {
        eprintln!(
            "tracelens: verdict: {} (exit {})",
            verdict.verdict.as_str(),
            verdict.exit_code
        );
    }
    Ok(())
}
