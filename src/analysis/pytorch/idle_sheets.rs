//! The idle sheets: `idle_breakdown` (HTA's per-stream split, its figures
//! and exact ones beside them), `idle_causes` (host-wait time by cause),
//! `idle_top_gaps` (the longest host-wait gaps) and, with
//! `--idle-details`, `idle_gaps` (every gap).

use rustc_hash::FxHashMap;

use super::Context;
use super::idle::{Category, Gap, Links, Rules, Total, totals};
use super::idle_causes::{Cause, IdleGap, WaitCause, classify};
use crate::names::{col, sheet};
use crate::numeric::{np_round, np_round2};
use crate::table::{Table, Value};
use crate::trace::{EventId, Trace};

/// How many gaps `idle_top_gaps` lists.
pub const TOP_GAPS: usize = 10;

/// The idle sheets of a trace with GPU events; none without.
pub fn sheets(cx: &Context) -> Vec<Table> {
    let trace = cx.trace;
    let links = Links::of(trace);
    if links.is_empty() {
        return Vec::new();
    }
    let hta = links.gaps(trace, Rules::HTA);
    let exact = links.gaps(trace, Rules::EXACT);
    let flat: Vec<&Gap> = exact.iter().flat_map(|(_, g)| g).collect();
    // A copy call and its GPU copy: the pageable-copy test.
    let copies: FxHashMap<EventId, EventId> = flat
        .iter()
        .filter_map(|g| Some((g.runtime?, g.next)))
        .collect();
    let findings = classify(trace, &flat, &copies, cx.opts.idle_details);
    let gaps = flat
        .iter()
        .zip(&findings)
        .filter(|(g, _)| g.prev.is_some())
        .map(|(g, f)| IdleGap {
            stream: g.stream,
            start: g.start,
            end: g.end,
            next: g.next,
            launch: g.runtime,
            cause: *f,
        })
        .collect();
    // Set once: this pass runs once per report.
    let _ = cx.idle_gaps.set(gaps);
    let hta_by_event: FxHashMap<EventId, &Gap> = hta
        .iter()
        .flat_map(|(_, g)| g)
        .map(|g| (g.next, g))
        .collect();
    let rows = GapRows {
        trace,
        hta: &hta_by_event,
    };
    let mut out = vec![
        breakdown(&totals(&hta), &totals(&exact)),
        causes(&flat, &findings),
        rows.table(sheet::IDLE_TOP_GAPS, top_gaps(&flat), &flat, &findings),
    ];
    if cx.opts.idle_details {
        let all = (0..flat.len())
            .filter(|&i| flat[i].prev.is_some())
            .collect();
        out.push(rows.table(sheet::IDLE_GAPS, all, &flat, &findings));
    }
    out
}

/// Per-stream totals of each category present.
type Totals = Vec<(i64, Vec<(Category, Total)>)>;

/// `idle_breakdown`: one row per stream and category that either rule
/// set charges, streams in HTA's order (then streams only ours sees),
/// categories in HTA's order; each side's cells empty where it has no row.
pub fn breakdown(hta: &Totals, exact: &Totals) -> Table {
    let mut out = Table::new(
        sheet::IDLE_BREAKDOWN,
        &[
            col::STREAM,
            col::IDLE_CATEGORY,
            col::HTA_IDLE_TIME,
            col::IDLE_TIME_RATIO,
            col::IDLE_KERNELS,
            col::IDLE_TIME_EXACT_US,
            col::IDLE_TIME_RATIO_EXACT,
            col::IDLE_KERNELS_EXACT,
        ],
    );
    let mut streams: Vec<i64> = hta.iter().map(|(s, _)| *s).collect();
    for (s, _) in exact {
        if !streams.contains(s) {
            streams.push(*s);
        }
    }
    let find = |t: &Totals, s: i64| t.iter().find(|(x, _)| *x == s).map(|(_, c)| c.clone());
    for s in streams {
        let (h, e) = (
            find(hta, s).unwrap_or_default(),
            find(exact, s).unwrap_or_default(),
        );
        let sum = |c: &[(Category, Total)]| c.iter().map(|(_, t)| t.idle_us).sum::<f64>();
        let (h_sum, e_sum) = (sum(&h), sum(&e));
        for cat in Category::ALL {
            let ht = h.iter().find(|(c, _)| *c == cat).map(|(_, t)| *t);
            let et = e.iter().find(|(c, _)| *c == cat).map(|(_, t)| *t);
            if ht.is_none() && et.is_none() {
                continue;
            }
            let mut row = vec![Value::Int(s), Value::from(cat.as_str())];
            row.extend(side(ht, h_sum, np_round2, np_round2));
            row.extend(side(et, e_sum, |x| np_round(x, 3), |x| np_round(x, 4)));
            out.push_row(row);
        }
    }
    out
}

/// One rule set's three cells: the idle time, its share of the stream's
/// and the events counted; empty when the rule set has no such row.
fn side(t: Option<Total>, stream: f64, time: fn(f64) -> f64, ratio: fn(f64) -> f64) -> [Value; 3] {
    match t {
        None => [Value::Null, Value::Null, Value::Null],
        Some(t) => [
            Value::Float(time(t.idle_us)),
            // 0/0 (a stream of one event) is NaN, as in HTA.
            Value::Float(ratio(t.idle_us / stream)),
            Value::Int(t.kernels as i64),
        ],
    }
}

/// `idle_causes`: per stream, each cause's host-wait gaps, time (ms) and
/// share of the stream's host-wait time (%).
fn causes(gaps: &[&Gap], findings: &[Option<WaitCause>]) -> Table {
    let mut out = Table::new(
        sheet::IDLE_CAUSES,
        &[
            col::STREAM,
            col::IDLE_CAUSE,
            col::IDLE_GAPS,
            col::IDLE_TIME_MS,
            col::PCT_OF_HOST_WAIT,
        ],
    );
    let mut streams: Vec<(i64, [(usize, f64); 6])> = Vec::new();
    for (g, f) in gaps.iter().zip(findings) {
        let Some(f) = f else { continue };
        let k = match streams.iter().position(|(s, _)| *s == g.stream) {
            Some(k) => k,
            None => {
                streams.push((g.stream, [(0, 0.0); 6]));
                streams.len() - 1
            }
        };
        let slot = &mut streams[k].1[f.cause as usize];
        slot.0 += 1;
        slot.1 += g.length;
    }
    for (s, per) in streams {
        let total: f64 = per.iter().map(|p| p.1).sum();
        for (cause, (n, us)) in Cause::ALL.into_iter().zip(per) {
            if n == 0 {
                continue;
            }
            out.push_row(vec![
                Value::Int(s),
                Value::from(cause.as_str()),
                Value::Int(n as i64),
                Value::Float(np_round(us / 1e3, 6)),
                Value::Float(np_round2(100.0 * us / total)),
            ]);
        }
    }
    out
}

/// The longest host-wait gaps (exact lengths), longest first, earlier
/// first at equal lengths.
fn top_gaps(gaps: &[&Gap]) -> Vec<usize> {
    let mut host: Vec<usize> = (0..gaps.len())
        .filter(|&i| gaps[i].category == Category::HostWait)
        .collect();
    host.sort_by(|&a, &b| {
        let (x, y) = (gaps[a], gaps[b]);
        y.length
            .total_cmp(&x.length)
            .then(x.start.total_cmp(&y.start))
    });
    host.truncate(TOP_GAPS);
    host
}

/// Builds the gap tables (`idle_top_gaps`, `idle_gaps`).
struct GapRows<'a> {
    trace: &'a Trace,
    /// HTA's gap before each GPU event it keeps.
    hta: &'a FxHashMap<EventId, &'a Gap>,
}

impl GapRows<'_> {
    /// The table `name` of the gaps `which` (positions in `gaps`).
    fn table(
        &self,
        name: &str,
        which: Vec<usize>,
        gaps: &[&Gap],
        findings: &[Option<WaitCause>],
    ) -> Table {
        let mut out = Table::new(
            name,
            &[
                col::STREAM,
                col::IDLE_CATEGORY,
                col::IDLE_CATEGORY_HTA,
                col::IDLE_CAUSE,
                col::GAP_START_TS_US,
                col::GAP_US,
                col::GAP_HTA_US,
                col::PREV_KERNEL_UID,
                col::NEXT_KERNEL,
                col::NEXT_KERNEL_UID,
                col::LAUNCH,
                col::LAUNCH_UID,
                col::HOST_CALL,
                col::HOST_CALL_UID,
                col::HOST_OP,
                col::HOST_OP_UID,
                col::PYTHON_FRAME,
                col::PYTHON_FRAME_UID,
            ],
        );
        for i in which {
            out.push_row(self.row(gaps[i], findings[i]));
        }
        out
    }

    /// One gap's row.
    fn row(&self, g: &Gap, f: Option<WaitCause>) -> Vec<Value> {
        let hta = self.hta.get(&g.next).filter(|h| h.prev.is_some());
        let mut row = vec![
            Value::Int(g.stream),
            Value::from(g.category.as_str()),
            hta.map_or(Value::Null, |h| Value::from(h.category.as_str())),
            f.map_or(Value::Null, |f| Value::from(f.cause.as_str())),
            Value::Float(np_round(g.start, 3)),
            Value::Float(np_round(g.length, 3)),
            hta.map_or(Value::Null, |h| Value::Float(h.length)),
            self.uid(g.prev),
        ];
        row.extend(self.named(Some(g.next)));
        row.extend(self.named(g.runtime));
        row.extend(self.named(f.and_then(|f| f.call)));
        row.extend(self.named(f.and_then(|f| f.op)));
        row.extend(self.named(f.and_then(|f| f.frame)));
        row
    }

    /// An event's UID cell.
    fn uid(&self, id: Option<EventId>) -> Value {
        id.map_or(Value::Null, |id| Value::Int(id.index() as i64))
    }

    /// An event's name and UID cells.
    fn named(&self, id: Option<EventId>) -> [Value; 2] {
        match id {
            None => [Value::Null, Value::Null],
            Some(id) => [Value::from(self.trace.name(id)), self.uid(Some(id))],
        }
    }
}
