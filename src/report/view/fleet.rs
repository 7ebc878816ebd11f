//! The fleet report's views: the Markdown page, the terminal lines and the
//! rank × step heatmaps.

use super::{heading, line, lines_page, section, shown};
use crate::analysis::commands::fleet::{FleetReport, MetricChange, Outlier, StepMetric};
use crate::analysis::diagnosis::Status;
use crate::names::fleet::sheet;
use crate::report::heatmap::Heatmap;
use crate::report::markdown::{Place, name, text};
use crate::report::{Align, Block, Grid, Page, Record};

/// The heatmaps of the grid: busy, idle and exposed communication per rank
/// and step (µs). None when the traces have no profiler steps.
pub fn heatmaps(r: &FleetReport) -> Vec<Heatmap> {
    if r.grid.is_empty() {
        return Vec::new();
    }
    let g = &r.grid;
    // The grid is rank-major; the heatmap has steps as rows.
    let (nr, ns) = (g.ranks.len(), g.steps.len());
    [StepMetric::Busy, StepMetric::Idle, StepMetric::ExposedComm]
        .into_iter()
        .map(|m| {
            let v = g.values(m);
            let values = (0..ns)
                .flat_map(|s| (0..nr).map(move |k| (k, s)))
                .map(|(k, s)| v[k * ns + s])
                .collect();
            Heatmap {
                name: format!("heatmap_{}", m.name().trim_end_matches("_us")),
                title: format!("{} per rank and step (µs)", m.describe()),
                col_label: "rank".into(),
                row_label: "step".into(),
                cols: g.ranks.clone(),
                rows: g.steps.clone(),
                values,
                unit: "µs".into(),
            }
        })
        .collect()
}

/// An outlier in one line, its trace's name shown by `show`.
fn describe(o: &Outlier, show: impl Fn(&str) -> String) -> String {
    let what = match (o.kind, o.rank, o.step) {
        ("rank", Some(r), _) => format!("rank {r} ({})", show(o.trace.as_deref().unwrap_or("?"))),
        (_, _, Some(s)) => format!("step {s}"),
        _ => o.kind.to_string(),
    };
    let dir = if o.z > 0.0 { "high" } else { "low" };
    format!(
        "{what}: {} {dir}, {:.0} µs vs {:.0} µs typical (robust z {:+.1})",
        o.metric.describe(),
        o.value,
        o.typical,
        o.z
    )
}

fn change_grid(changes: &[MetricChange]) -> Grid {
    Grid {
        header: [
            "Metric",
            "Baseline mean (µs)",
            "New mean (µs)",
            "Change",
            "95% interval",
            "Verdict",
        ]
        .map(String::from)
        .to_vec(),
        align: vec![
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
        ],
        rows: changes
            .iter()
            .map(|c| {
                vec![
                    c.metric.describe().to_string(),
                    format!("{:.1}", c.base_mean),
                    format!("{:.1}", c.new_mean),
                    format!("{:+.1}%", c.change_pct),
                    format!("{:+.1}% … {:+.1}%", c.ci_low_pct, c.ci_high_pct),
                    c.verdict.name().to_string(),
                ]
            })
            .collect(),
    }
}

/// The Markdown page: the fleet at a glance, outliers, the comparison,
/// the slowest ops and kernels across traces, and the job's stragglers.
pub fn page(r: &FleetReport, title: &str) -> Page {
    let mut p = Page {
        blocks: vec![heading(
            2,
            format!("tracelens fleet: {}", name(title, Place::Prose)),
        )],
        trailing_blank: true,
    };
    p.blocks.push(line(format!(
        "{} traces; {} ranks × {} profiler steps in the step grid.",
        r.traces,
        r.grid.ranks.len(),
        r.grid.steps.len()
    )));
    p.blocks.push(heading(3, "Outliers"));
    if r.grid.is_empty() {
        p.blocks.push(line(
            "No profiler steps (ProfilerStep#N ranges) in the traces.",
        ));
    } else if r.outliers.is_empty() {
        p.blocks.push(line(
            "No rank or step stands out (robust z-scores within ±3.5).",
        ));
    } else {
        p.blocks.push(Block::Bullets(
            r.outliers
                .iter()
                .take(20)
                .map(|o| describe(o, |t| name(t, Place::Prose)))
                .collect(),
        ));
    }
    if let Some(c) = &r.changes {
        p.blocks.push(heading(3, "Compared with the baseline"));
        p.blocks.push(line(format!(
            "Baseline: {} traces. Intervals: bootstrap over ranks and steps; higher is slower.",
            r.baseline_traces.unwrap_or(0)
        )));
        p.blocks.push(Block::Grid(change_grid(c)));
    }
    if let Some(t) = r.sheets.iter().find(|t| t.name == sheet::FLEET_OPS) {
        let cols = [
            shown("name", "Op"),
            shown("traces", "Traces"),
            shown("time_p50_us", "p50 (µs)"),
            shown("time_p90_us", "p90 (µs)"),
            shown("time_p99_us", "p99 (µs)"),
            shown("share_p50_pct", "Share p50 (%)"),
        ];
        section(&mut p, "Ops by kernel time across traces", t, &cols, 15);
    }
    if let Some(t) = r.sheets.iter().find(|t| t.name == sheet::FLEET_KERNELS) {
        let cols = [
            shown("kernel", "Kernel"),
            shown("traces", "Traces"),
            shown("time_p50_us", "p50 (µs)"),
            shown("time_p90_us", "p90 (µs)"),
            shown("time_p99_us", "p99 (µs)"),
            shown("share_p50_pct", "Share p50 (%)"),
        ];
        section(&mut p, "Kernels across traces", t, &cols, 15);
    }
    health_section(&mut p, r);
    p.blocks.push(heading(3, "Collectives across the job"));
    match (&r.collectives, &r.collectives_skipped) {
        (Some(c), _) => {
            let sub = super::collectives::page(c, title);
            // Its heading is the command's; the rest is the section.
            p.blocks.extend(sub.blocks.into_iter().skip(1));
        }
        (None, Some(why)) => p.blocks.push(line(format!("Left out: {}.", text(why)))),
        (None, None) => {}
    }
    p
}

/// The traces' health verdicts and the findings that recur across them.
fn health_section(p: &mut Page, r: &FleetReport) {
    if r.health.is_empty() {
        return;
    }
    p.blocks
        .push(heading(3, "Health and findings across traces"));
    p.blocks.push(line(verdict_counts(r)));
    let flagged: Vec<String> = r
        .health
        .iter()
        .filter(|h| matches!(h.verdict, Status::Warn | Status::Fail))
        .take(20)
        .map(|h| {
            let checks: Vec<String> = h
                .not_passed
                .iter()
                .filter(|c| c.1 != Status::CannotTell)
                .map(|(id, s)| format!("`{}` {}", text(id), s.as_str()))
                .collect();
            format!(
                "{}: {} ({})",
                name(&h.trace, Place::Prose),
                h.verdict.as_str(),
                checks.join(", ")
            )
        })
        .collect();
    if !flagged.is_empty() {
        p.blocks.push(Block::Bullets(flagged));
    }
    if let Some(t) = r.sheets.iter().find(|t| t.name == sheet::FLEET_FINDINGS) {
        let cols = [
            shown("id", "Finding"),
            shown("traces", "Traces"),
            shown("traces_pct", "Traces (%)"),
            shown("mid_pct_median", "Mid gain p50 (% of span)"),
            shown("mid_pct_max", "Mid gain max (% of span)"),
            shown("max_trace", "Largest in"),
        ];
        section(p, "Findings across traces", t, &cols, 15);
    }
}

/// `N traces: a pass, b warn, …` of the traces with a diagnosis.
fn verdict_counts(r: &FleetReport) -> String {
    let counts: Vec<String> = [Status::Pass, Status::Warn, Status::Fail, Status::CannotTell]
        .into_iter()
        .map(|s| {
            let n = r.health.iter().filter(|h| h.verdict == s).count();
            format!("{n} {}", s.as_str())
        })
        .collect();
    format!(
        "Health of the {} traces with a diagnosis: {}.",
        r.health.len(),
        counts.join(", ")
    )
}

/// The fleet as one JSON document: the traces' verdicts, the checks that
/// did not pass and their top findings, and the findings by id across the
/// traces (`docs/json.md`).
pub fn record(r: &FleetReport, summaries: &str) -> Record {
    let traces = r
        .health
        .iter()
        .map(|h| {
            Record::Map(vec![
                ("trace".into(), Record::Str(h.trace.clone())),
                ("rank".into(), h.rank.map_or(Record::Null, Record::Int)),
                ("verdict".into(), Record::Str(h.verdict.as_str().into())),
                (
                    "not_passed".into(),
                    Record::List(
                        h.not_passed
                            .iter()
                            .map(|(id, s)| {
                                Record::Map(vec![
                                    ("id".into(), Record::Str(id.clone())),
                                    ("status".into(), Record::Str(s.as_str().into())),
                                ])
                            })
                            .collect(),
                    ),
                ),
                (
                    "findings".into(),
                    Record::List(
                        h.findings
                            .iter()
                            .take(super::findings::TERMINAL_FINDINGS)
                            .map(|f| {
                                Record::Map(vec![
                                    ("id".into(), Record::Str(f.id.clone())),
                                    ("severity".into(), Record::Str(f.severity.clone())),
                                    (
                                        "subject".into(),
                                        f.subject.clone().map_or(Record::Null, Record::Str),
                                    ),
                                    ("mid_ms".into(), Record::Float(f.mid_ms)),
                                    ("mid_pct".into(), Record::Float(f.mid_pct)),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    let by_id = r
        .findings
        .iter()
        .map(|f| {
            Record::Map(vec![
                ("id".into(), Record::Str(f.id.clone())),
                ("traces".into(), Record::Int(f.traces as i64)),
                ("traces_pct".into(), Record::Float(f.traces_pct)),
                ("mid_pct_median".into(), Record::Float(f.mid_pct_median)),
                ("mid_pct_max".into(), Record::Float(f.mid_pct_max)),
                ("max_trace".into(), Record::Str(f.max_trace.clone())),
            ])
        })
        .collect();
    let mut fields = super::findings::document_header("fleet");
    fields.extend([
        ("summaries".into(), Record::Str(summaries.into())),
        ("traces".into(), Record::Int(r.traces as i64)),
        ("health".into(), Record::List(traces)),
        ("findings".into(), Record::List(by_id)),
    ]);
    Record::Map(fields)
}

/// A few lines for the terminal.
pub fn terminal(r: &FleetReport) -> Page {
    let mut lines = vec![format!(
        "{} traces, {} ranks × {} steps; {} outliers",
        r.traces,
        r.grid.ranks.len(),
        r.grid.steps.len(),
        r.outliers.len()
    )];
    lines.extend(
        r.outliers
            .iter()
            .take(5)
            .map(|o| format!("  {}", describe(o, str::to_string))),
    );
    if !r.health.is_empty() {
        lines.push(verdict_counts(r));
        if let Some(f) = r.findings.first() {
            lines.push(format!(
                "most common finding: {} in {} of {} traces (mid gain up to {:.1}% of the span, in {})",
                f.id,
                f.traces,
                r.health.len(),
                f.mid_pct_max,
                f.max_trace
            ));
        }
    }
    if let Some(c) = &r.collectives {
        lines.push(format!(
            "collectives: {} kernels, {} matched across {} ranks",
            c.kernels, c.matched, c.ranks
        ));
    }
    if let Some(changes) = &r.changes {
        for c in changes {
            lines.push(format!(
                "{}: {:+.1}% ({:+.1}% … {:+.1}%): {}",
                c.metric.describe(),
                c.change_pct,
                c.ci_low_pct,
                c.ci_high_pct,
                c.verdict.name()
            ));
        }
    }
    lines_page(lines)
}
