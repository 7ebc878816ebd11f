//! The diagnosis across a fleet: each trace's health verdict and findings,
//! read back from the `health` and `findings` sheets of its summary, and
//! the findings counted across the traces (which ids recur, how large).

use std::collections::BTreeMap;

use super::Status;
use super::health::verdict_of;
use crate::names::diagnosis::col;
use crate::names::fleet::sheet;
use crate::numeric::median;
use crate::table::{Table, Value};

/// One finding of a trace, as its summary's `findings` sheet holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceFinding {
    /// The finding's id.
    pub id: String,
    /// Its severity.
    pub severity: String,
    /// What it is about, when one thing.
    pub subject: Option<String>,
    /// The mid estimate of the recoverable GPU time, ms.
    pub mid_ms: f64,
    /// That as a share of the trace's GPU span, %.
    pub mid_pct: f64,
}

/// The diagnosis of one trace of the fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceHealth {
    /// The trace (its summary folder's name).
    pub trace: String,
    /// Its rank, when known.
    pub rank: Option<i64>,
    /// The verdict of its checks.
    pub verdict: Status,
    /// The checks that did not pass, with their status, in sheet order.
    pub not_passed: Vec<(String, Status)>,
    /// Its findings, ranked (the rules that could not tell left out).
    pub findings: Vec<TraceFinding>,
}

/// A status as sheets write it.
pub fn parse_status(s: &str) -> Option<Status> {
    [Status::Pass, Status::Warn, Status::CannotTell, Status::Fail]
        .into_iter()
        .find(|st| st.as_str() == s)
}

/// The column `name` of `t`, or an error naming both.
fn column<'t>(t: &'t Table, name: &str) -> Result<&'t [Value], String> {
    t.column(name)
        .map(|c| c.values.as_slice())
        .ok_or_else(|| format!("its {} table has no column {name}", t.name))
}

/// The diagnosis of `trace` from its `health` sheet and, when present, its
/// `findings` sheet; the error names the sheet and column that is wrong.
pub fn read(
    trace: &str,
    rank: Option<i64>,
    health: &Table,
    findings: Option<&Table>,
) -> Result<TraceHealth, String> {
    let (ids, statuses) = (column(health, col::ID)?, column(health, col::STATUS)?);
    let mut checks = Vec::with_capacity(ids.len());
    for (id, st) in ids.iter().zip(statuses) {
        let text = st.py_str();
        let status = parse_status(&text)
            .ok_or_else(|| format!("its health table has an unknown status {text:?}"))?;
        checks.push((id.py_str(), status));
    }
    let verdict = verdict_of(checks.iter().map(|c| c.1));
    let mut found = Vec::new();
    if let Some(f) = findings {
        let (ids, sev) = (column(f, col::ID)?, column(f, col::SEVERITY)?);
        let subject = column(f, col::SUBJECT)?;
        let (ms, pct) = (
            column(f, col::IMPACT_MID_MS)?,
            column(f, col::IMPACT_MID_PCT)?,
        );
        for i in 0..f.nrows() {
            let severity = sev[i].py_str();
            if severity == "cannot_tell" {
                continue;
            }
            found.push(TraceFinding {
                id: ids[i].py_str(),
                severity,
                subject: subject[i].as_str().map(str::to_string),
                mid_ms: ms[i].to_f64(),
                mid_pct: pct[i].to_f64(),
            });
        }
    }
    Ok(TraceHealth {
        trace: trace.to_string(),
        rank,
        verdict,
        not_passed: checks.into_iter().filter(|c| c.1 != Status::Pass).collect(),
        findings: found,
    })
}

/// `fleet_health`: one row per trace with its verdict, the checks that did
/// not pass and its top finding.
pub fn health_sheet(traces: &[TraceHealth]) -> Table {
    let mut t = Table::new(
        sheet::FLEET_HEALTH,
        &[
            "trace",
            "rank",
            "verdict",
            "not_passed",
            "findings",
            "top_finding",
            "top_finding_mid_pct",
        ],
    );
    for h in traces {
        let not_passed: Vec<String> = h
            .not_passed
            .iter()
            .map(|(id, s)| format!("{id} {}", s.as_str()))
            .collect();
        let top = h.findings.first();
        t.push_row(vec![
            Value::from(h.trace.as_str()),
            h.rank.map_or(Value::Null, Value::Int),
            Value::from(h.verdict.as_str()),
            if not_passed.is_empty() {
                Value::Null
            } else {
                Value::from(not_passed.join("; ").as_str())
            },
            Value::Int(h.findings.len() as i64),
            top.map_or(Value::Null, |f| Value::from(f.id.as_str())),
            top.map_or(Value::Null, |f| Value::Float(f.mid_pct)),
        ]);
    }
    t
}

/// One finding id across the fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetFinding {
    /// The id.
    pub id: String,
    /// Traces with at least one finding of it.
    pub traces: usize,
    /// Their share of the traces, %.
    pub traces_pct: f64,
    /// The median over those traces of their largest mid share, %.
    pub mid_pct_median: f64,
    /// The largest mid share, %.
    pub mid_pct_max: f64,
    /// The trace with it.
    pub max_trace: String,
}

/// The findings by id across `traces`: most traces first, then the
/// largest share, then the id.
pub fn by_id(traces: &[TraceHealth]) -> Vec<FleetFinding> {
    // Per id, each trace's largest mid share.
    let mut per: BTreeMap<&str, Vec<(f64, &str)>> = BTreeMap::new();
    for h in traces {
        let mut best: BTreeMap<&str, f64> = BTreeMap::new();
        for f in &h.findings {
            let e = best.entry(&f.id).or_insert(f64::NEG_INFINITY);
            *e = e.max(f.mid_pct);
        }
        for (id, pct) in best {
            per.entry(id).or_default().push((pct, &h.trace));
        }
    }
    let n = traces.len().max(1) as f64;
    let mut out: Vec<FleetFinding> = per
        .into_iter()
        .map(|(id, v)| {
            let pcts: Vec<f64> = v.iter().map(|x| x.0).collect();
            let top = v
                .iter()
                .fold(None::<&(f64, &str)>, |b, x| match b {
                    Some(b) if b.0 >= x.0 => Some(b),
                    _ => Some(x),
                })
                .expect("an id has a trace");
            FleetFinding {
                id: id.to_string(),
                traces: v.len(),
                traces_pct: 100.0 * v.len() as f64 / n,
                mid_pct_median: median(&pcts),
                mid_pct_max: top.0,
                max_trace: top.1.to_string(),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.traces
            .cmp(&a.traces)
            .then(b.mid_pct_max.total_cmp(&a.mid_pct_max))
            .then_with(|| a.id.cmp(&b.id))
    });
    out
}

/// `fleet_findings`: [`by_id`] as a sheet.
pub fn findings_sheet(found: &[FleetFinding]) -> Table {
    let mut t = Table::new(
        sheet::FLEET_FINDINGS,
        &[
            "id",
            "traces",
            "traces_pct",
            "mid_pct_median",
            "mid_pct_max",
            "max_trace",
        ],
    );
    for f in found {
        t.push_row(vec![
            Value::from(f.id.as_str()),
            Value::Int(f.traces as i64),
            Value::Float(f.traces_pct),
            Value::Float(f.mid_pct_median),
            Value::Float(f.mid_pct_max),
            Value::from(f.max_trace.as_str()),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(name: &str, statuses: &[(&str, &str)], found: &[(&str, f64)]) -> TraceHealth {
        let mut h = Table::new("health", &[col::ID, col::STATUS]);
        for (id, s) in statuses {
            h.push_row(vec![Value::from(*id), Value::from(*s)]);
        }
        let mut f = Table::new(
            "findings",
            &[
                col::ID,
                col::SEVERITY,
                col::SUBJECT,
                col::IMPACT_MID_MS,
                col::IMPACT_MID_PCT,
            ],
        );
        for (id, pct) in found {
            f.push_row(vec![
                Value::from(*id),
                Value::from("medium"),
                Value::Null,
                Value::Float(pct / 10.0),
                Value::Float(*pct),
            ]);
        }
        f.push_row(vec![
            Value::from("op.low_efficiency"),
            Value::from("cannot_tell"),
            Value::Null,
            Value::Null,
            Value::Null,
        ]);
        read(name, None, &h, Some(&f)).unwrap()
    }

    #[test]
    fn a_trace_reads_back_its_verdict_and_findings() {
        let t = trace(
            "a",
            &[
                ("health.no_gpu", "pass"),
                ("health.truncated", "cannot_tell"),
                ("health.clock_skew", "warn"),
            ],
            &[("idle.sync", 4.0)],
        );
        assert_eq!(t.verdict, Status::Warn);
        assert_eq!(
            t.not_passed,
            vec![
                ("health.truncated".to_string(), Status::CannotTell),
                ("health.clock_skew".to_string(), Status::Warn)
            ]
        );
        // The rule that could not tell is not a finding.
        assert_eq!(t.findings.len(), 1);
        assert_eq!(t.findings[0].mid_ms, 0.4);
    }

    #[test]
    fn an_unknown_status_is_an_error() {
        let mut h = Table::new("health", &[col::ID, col::STATUS]);
        h.push_row(vec![Value::from("health.no_gpu"), Value::from("fine")]);
        let e = read("a", None, &h, None).unwrap_err();
        assert!(e.contains("\"fine\""), "{e}");
    }

    #[test]
    fn findings_are_counted_per_trace_across_the_fleet() {
        let ok = [("health.no_gpu", "pass")];
        let traces = [
            trace("a", &ok, &[("idle.sync", 4.0), ("idle.sync", 9.0)]),
            trace("b", &ok, &[("idle.sync", 2.0), ("op.variance", 30.0)]),
            trace("c", &ok, &[]),
            trace("d", &ok, &[("idle.sync", 6.0)]),
        ];
        let f = by_id(&traces);
        // idle.sync in three of four traces, each's largest share: 9, 2, 6.
        assert_eq!(f[0].id, "idle.sync");
        assert_eq!(f[0].traces, 3);
        assert_eq!(f[0].traces_pct, 75.0);
        assert_eq!(f[0].mid_pct_median, 6.0);
        assert_eq!(f[0].mid_pct_max, 9.0);
        assert_eq!(f[0].max_trace, "a");
        assert_eq!(f[1].id, "op.variance");
        assert_eq!(f[1].traces, 1);
        let sheet = findings_sheet(&f);
        assert_eq!(sheet.nrows(), 2);
        assert_eq!(health_sheet(&traces).nrows(), 4);
    }
}
