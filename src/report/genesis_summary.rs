//! `genesis_summary.md`: the Genesis report's page, laid out as the
//! reference writes it (the capture, the steady-state timeline, the
//! kernel categories, the top kernels and HIP calls).

use std::path::Path;

use crate::analysis::genesis::SteadyState;
use crate::names::col;
use crate::report::markdown::{self, Place};
use crate::report::pipe_table::pandas_markdown;
use crate::table::Table;

/// Python `str()` of a manifest value (`None` when missing).
fn py_value(v: Option<&serde_json::Value>) -> String {
    match v {
        None | Some(serde_json::Value::Null) => "None".into(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Bool(b)) => if *b { "True" } else { "False" }.into(),
        Some(serde_json::Value::Number(n)) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => crate::pyfmt::float_repr(n.as_f64().unwrap_or(f64::NAN)),
        },
        Some(other) => other.to_string(),
    }
}

/// `n` with `,` between groups of three digits (Python's `{:,}`).
fn thousands(n: usize) -> String {
    crate::report::columns::grouped(&n.to_string())
}

/// A kernel name cut as the page shows it: names over 52 characters keep
/// their first 49 and `...`.
fn cut_name(name: &str) -> String {
    if name.chars().count() <= 52 {
        name.to_string()
    } else {
        name.chars().take(49).collect::<String>() + "..."
    }
}

fn text_cell(t: &Table, row: usize, name: &str) -> String {
    t.column_index(name)
        .map(|c| t.value(row, c).py_str())
        .unwrap_or_default()
}

fn num_cell(t: &Table, row: usize, name: &str) -> f64 {
    t.column_index(name)
        .map_or(f64::NAN, |c| t.value(row, c).to_f64())
}

/// What the page shows.
#[derive(Debug, Clone, Copy)]
pub struct SummaryInputs<'a> {
    /// The capture folder (its name stands in for a missing timestamp).
    pub capture_dir: &'a Path,
    /// The capture manifest, when there is one.
    pub manifest: Option<&'a serde_json::Value>,
    /// The steady state, when one was found.
    pub steady: Option<&'a SteadyState>,
    /// The `gpu_timeline` sheet.
    pub gpu_timeline: Option<&'a Table>,
    /// The `kernel_summary_by_category` sheet.
    pub by_category: Option<&'a Table>,
    /// The `kernel_summary` sheet.
    pub kernel_summary: Option<&'a Table>,
    /// The Perfetto trace's `hip_summary`, when the capture has one.
    pub hip_summary: Option<&'a Table>,
}

/// The page's text: its lines joined by newlines (the blank line after
/// the last section ends it with one).
pub fn summary_markdown(run: &SummaryInputs) -> String {
    let mut lines: Vec<String> = vec![
        "# TraceLens Genesis Performance Report".into(),
        String::new(),
        "Extension report for physics-simulation workloads (Genesis/Taichi-style kernels).".into(),
        String::new(),
    ];
    if let Some(m) = run.manifest.and_then(|m| m.as_object())
        && !m.is_empty()
    {
        lines.push(capture_line(m, run.capture_dir));
    }
    lines.push(String::new());
    if let Some(tl) = run.gpu_timeline {
        timeline_section(&mut lines, tl, run.steady);
    }
    if let Some(by_cat) = run.by_category.filter(|t| t.nrows() > 0) {
        section(
            &mut lines,
            "Kernel Categories",
            vec![pandas_markdown(by_cat)],
        );
    }
    if let Some(ks) = run.kernel_summary {
        section(&mut lines, "Top 10 Kernels", top_kernels(ks));
    }
    if let Some(hip) = run.hip_summary.filter(|t| t.nrows() > 0) {
        let top: Vec<usize> = (0..hip.nrows().min(10)).collect();
        let table = pandas_markdown(&hip.take_rows(&top));
        section(&mut lines, "Top HIP API (pftrace)", vec![table]);
    }
    lines.join("\n")
}

/// A `## title` section: its heading, a blank line, `body`, a blank line.
fn section(lines: &mut Vec<String>, title: &str, body: Vec<String>) {
    lines.push(format!("## {title}"));
    lines.push(String::new());
    lines.extend(body);
    lines.push(String::new());
}

/// `**Capture:** <timestamp, else the folder's name> — n_envs=…, steps=…, fp…`.
fn capture_line(m: &serde_json::Map<String, serde_json::Value>, dir: &Path) -> String {
    let stamp = match m.get("timestamp") {
        Some(v) => py_value(Some(v)),
        None => std::path::absolute(dir)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default(),
    };
    format!(
        "**Capture:** {} — n_envs={}, steps={}, fp{}",
        markdown::text(&stamp),
        markdown::text(&py_value(m.get("n_envs"))),
        markdown::text(&py_value(m.get("num_steps"))),
        markdown::text(&py_value(m.get("precision"))),
    )
}

/// The timeline section: the steady-state window (or why there is none)
/// and a bullet per timeline row.
fn timeline_section(lines: &mut Vec<String>, tl: &Table, steady: Option<&SteadyState>) {
    let mut body = vec![match steady {
        Some(s) => format!(
            "Steady-state window: `{}` — {} dispatches, **{:.1}%** GPU busy over {:.1} ms",
            s.method,
            thousands(s.dispatch_count),
            s.gpu_util_pct,
            s.window_ms
        ),
        None => "Steady-state window: not found (no kernel-trace CSV, or no dispatch in \
                 the window) — the timeline below covers the whole profiling session"
            .into(),
    }];
    body.push(String::new());
    if steady.is_some() {
        body.push("> Full rocprof session idle (JIT/build) is excluded from this report.".into());
        body.push(String::new());
    }
    for r in 0..tl.nrows() {
        body.push(format!(
            "- **{}**: {:.2} ms ({:.1}%)",
            markdown::text(&text_cell(tl, r, col::TYPE)),
            num_cell(tl, r, col::TIME_MS),
            num_cell(tl, r, col::PERCENT)
        ));
    }
    section(lines, "GPU Timeline (timed benchmark window)", body);
}

/// The top-10 kernel table's lines.
fn top_kernels(ks: &Table) -> Vec<String> {
    let mut rows = vec![
        "| Kernel | Count | Total (ms) | % | Category |".to_string(),
        "|--------|-------|------------|---|----------|".to_string(),
    ];
    for r in 0..ks.nrows().min(10) {
        let category = match ks.column_index(col::CATEGORY) {
            Some(c) => ks.value(r, c).py_str(),
            None => "Other".into(),
        };
        rows.push(format!(
            "| {} | {} | {:.1} | {:.2} | {} |",
            markdown::code_span(&cut_name(&text_cell(ks, r, col::NAME)), Place::Cell),
            num_cell(ks, r, col::COUNT) as i64,
            num_cell(ks, r, col::TOTAL_KERNEL_TIME_MS),
            num_cell(ks, r, col::PERCENTAGE),
            markdown::name(&category, Place::Cell),
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_get_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn long_names_are_cut_to_49_characters_and_dots() {
        let long = "k".repeat(53);
        assert_eq!(cut_name(&long), format!("{}...", "k".repeat(49)));
        assert_eq!(cut_name(&"k".repeat(52)), "k".repeat(52));
    }

    #[test]
    fn manifest_values_read_as_python_prints_them() {
        let v: serde_json::Value =
            serde_json::json!({"a": 4096, "b": "32", "c": 1.5, "d": null, "e": true});
        assert_eq!(py_value(v.get("a")), "4096");
        assert_eq!(py_value(v.get("b")), "32");
        assert_eq!(py_value(v.get("c")), "1.5");
        assert_eq!(py_value(v.get("d")), "None");
        assert_eq!(py_value(v.get("e")), "True");
        assert_eq!(py_value(v.get("missing")), "None");
    }
}
