//! One rank's events rewritten for the merged timeline: the reference's
//! filter, the time window, `args.rank`, the offsets with their `_raw`
//! copies.

use std::borrow::Cow;

use super::offsets::Offsets;
use crate::api::event_text::object::{self, Kind, Object};

/// Process metadata the merge replaces with its own rank labels.
const REPLACED_METADATA: [&str; 3] = ["process_name", "process_sort_index", "process_labels"];

/// What one rank's events are kept for and rewritten with.
pub(super) struct RankRules<'o> {
    /// The rank.
    pub rank: usize,
    /// The merge's offsets.
    pub offsets: &'o Offsets,
    /// Keep `python_function` events.
    pub include_pyfunc: bool,
    /// Keep only events overlapping [start, end] (µs, trace time).
    pub window: Option<(f64, f64)>,
    /// Added to every `ts`, when the clocks are aligned.
    pub shift: Option<Shift>,
}

/// A clock shift of whole nanoseconds, added to `ts` (µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shift {
    ns: i128,
}

impl Shift {
    /// A shift of `ns` nanoseconds.
    pub(super) fn new(ns: i128) -> Shift {
        Shift { ns }
    }

    /// The shift in µs.
    pub(super) fn us(self) -> f64 {
        self.ns as f64 / 1000.0
    }

    /// `ts` (JSON text) shifted: an integer stays one when the shift is
    /// whole µs; None for a value that is not a number (left as it is) or
    /// past 128 bits.
    fn apply(self, ts: &str) -> Option<String> {
        match object::kind(ts) {
            Kind::Int(i) if self.ns % 1000 == 0 => Some(i.checked_add(self.ns / 1000)?.to_string()),
            Kind::Int(i) => serde_json::to_string(&(i as f64 + self.us())).ok(),
            Kind::Float(f) => serde_json::to_string(&(f + self.us())).ok(),
            _ => None,
        }
    }
}

/// Why an event is left out of the merged trace, if it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dropped {
    /// Process metadata (`process_name`, `process_sort_index`,
    /// `process_labels`), replaced by the rank labels.
    Metadata,
    /// The reference's default filter: cat `Trace`, or `python_function`
    /// without `--include-pyfunc`.
    Filter,
    /// Outside the time window.
    Window,
}

impl RankRules<'_> {
    /// Why `e` is left out, or None when it is kept.
    pub(super) fn drop_reason(&self, e: &Object) -> Option<Dropped> {
        let text = |k: &str| e.get(k).and_then(object::as_str);
        let name = text("name");
        if text("ph").as_deref() == Some("M")
            && name.is_some_and(|n| REPLACED_METADATA.contains(&n.as_ref()))
        {
            return Some(Dropped::Metadata);
        }
        match text("cat").as_deref() {
            Some("Trace") => return Some(Dropped::Filter),
            Some("python_function") if !self.include_pyfunc => return Some(Dropped::Filter),
            _ => {}
        }
        let (lo, hi) = self.window?;
        let ts = e.get("ts").and_then(object::as_f64)?;
        let dur = e.get("dur").and_then(object::as_f64).unwrap_or(0.0);
        (ts > hi || ts + dur < lo).then_some(Dropped::Window)
    }

    /// Rewrites a kept event: `args` made when missing, `args.rank`, then
    /// for each offset field in order: the linking key in `args` gets
    /// `<key>_raw` and the offset; `id`/`pid` get `args.<field>_raw` (whatever
    /// their type) and the offset when they are integers.
    pub(super) fn rewrite<'a>(&self, e: &mut Object<'a>) -> Result<(), String> {
        let args_text = e.value("args").unwrap_or(Cow::Borrowed("{}"));
        let mut args =
            Object::parse(&args_text).map_err(|_| "its args is not a JSON object".to_string())?;
        args.set(Cow::Borrowed("rank"), Cow::Owned(self.rank.to_string()));
        for &(field, mult) in &self.offsets.multipliers {
            let add = (self.rank as i128)
                .checked_mul(mult)
                .ok_or_else(|| overflow(field))?;
            let raw = Cow::Owned(format!("{field}_raw"));
            if field == self.offsets.linking_key {
                if let Some(old) = args.value(field) {
                    let new = shifted_arg(&old, add).ok_or_else(|| overflow(field))?;
                    args.set(raw, old);
                    if let Some(new) = new {
                        args.set(Cow::Borrowed(field), Cow::Owned(new));
                    }
                }
            } else if let Some(old) = e.value(field) {
                args.set(raw, Cow::Owned(old.to_string()));
                if let Kind::Int(i) = object::kind(&old) {
                    let new = i.checked_add(add).ok_or_else(|| overflow(field))?;
                    e.set(Cow::Borrowed(field), Cow::Owned(new.to_string()));
                }
            }
        }
        e.set(Cow::Borrowed("args"), Cow::Owned(args.to_text()));
        if let Some(shift) = self.shift.filter(|s| s.ns != 0)
            && let Some(new) = e.get("ts").and_then(|ts| shift.apply(ts))
        {
            e.set(Cow::Borrowed("ts"), Cow::Owned(new));
        }
        Ok(())
    }
}

/// The message of a value that its offset takes past 128 bits.
fn overflow(field: &str) -> String {
    format!("its {field} plus the rank's offset does not fit in 128 bits")
}

/// The linking key's value `old` plus `add`, as Python's `+=` makes it:
/// integers and bools give an integer, floats a float. Some(None): a value
/// Python cannot add to (a string, null), left as it is; None: overflow.
fn shifted_arg(old: &str, add: i128) -> Option<Option<String>> {
    Some(match object::kind(old) {
        Kind::Int(i) => Some(i.checked_add(add)?.to_string()),
        Kind::Bool(b) => Some((i128::from(b) + add).to_string()),
        Kind::Float(f) => serde_json::to_string(&(f + add as f64)).ok(),
        Kind::Other => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(offsets: &Offsets, rank: usize) -> RankRules<'_> {
        RankRules {
            rank,
            offsets,
            include_pyfunc: false,
            window: Some((100.0, 200.0)),
            shift: None,
        }
    }

    #[test]
    fn shifts_keep_integers_whole_and_leave_other_values() {
        assert_eq!(Shift::new(2_000).apply("10").as_deref(), Some("12"));
        assert_eq!(Shift::new(-1_500).apply("10").as_deref(), Some("8.5"));
        assert_eq!(Shift::new(500).apply("1.25").as_deref(), Some("1.75"));
        assert_eq!(Shift::new(1_000).apply("\"x\""), None);
    }

    #[test]
    fn events_are_dropped_by_metadata_filter_and_window() {
        let o = Offsets {
            linking_key: "correlation",
            multipliers: vec![],
        };
        let r = rules(&o, 1);
        let drop = |t: &str| r.drop_reason(&Object::parse(t).unwrap());
        assert_eq!(
            drop(r#"{"ph":"M","name":"process_labels"}"#),
            Some(Dropped::Metadata)
        );
        assert_eq!(drop(r#"{"ph":"M","name":"thread_name"}"#), None);
        assert_eq!(drop(r#"{"cat":"Trace"}"#), Some(Dropped::Filter));
        assert_eq!(drop(r#"{"cat":"python_function"}"#), Some(Dropped::Filter));
        assert_eq!(drop(r#"{"ts":50,"dur":49}"#), Some(Dropped::Window));
        assert_eq!(drop(r#"{"ts":50,"dur":50}"#), None);
        assert_eq!(drop(r#"{"ts":200.5}"#), Some(Dropped::Window));
        assert_eq!(drop(r#"{"ts":200}"#), None);
    }

    #[test]
    fn rewrite_adds_rank_raw_copies_and_offsets_in_order() {
        let o = Offsets {
            linking_key: "correlation",
            multipliers: vec![("pid", 1000), ("id", 100), ("correlation", 100)],
        };
        let mut e = Object::parse(
            r#"{"pid":7,"id":"0x1","ts":1.50,"args":{"correlation":2.5,"rank":9,"x":[1]}}"#,
        )
        .unwrap();
        rules(&o, 2).rewrite(&mut e).unwrap();
        assert_eq!(
            e.to_text(),
            r#"{"pid":2007,"id":"0x1","ts":1.50,"args":{"correlation":202.5,"rank":2,"x":[1],"pid_raw":7,"id_raw":"0x1","correlation_raw":2.5}}"#
        );
        let mut bare = Object::parse(r#"{"pid":"Spans"}"#).unwrap();
        rules(&o, 0).rewrite(&mut bare).unwrap();
        assert_eq!(
            bare.to_text(),
            r#"{"pid":"Spans","args":{"rank":0,"pid_raw":"Spans"}}"#
        );
    }
}
