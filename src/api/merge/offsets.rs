//! What keeps the ranks' ids apart: the key that links launches to GPU work
//! (`correlation` or `External id`) and, for it, `id` and `pid`, a power of
//! ten larger than any of the first trace's values, times the rank.

use crate::api::event_text::object::{self, Kind, Object};

/// The key in `args` that links a launch to its GPU work.
pub const CORRELATION: &str = "correlation";
/// The fallback linking key (also the key of CPU-op to launch links).
pub const EXTERNAL_ID: &str = "External id";

/// The offsets of one merge, from the first trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Offsets {
    /// The linking key in `args`: [`CORRELATION`] or [`EXTERNAL_ID`].
    pub linking_key: &'static str,
    /// (field, multiplier) in the order the first trace first gave each an
    /// integer value; rank r adds r × multiplier. A field without an
    /// integer value in the first trace gets no offset and no `_raw` copy.
    pub multipliers: Vec<(&'static str, i128)>,
}

impl Offsets {
    /// The offsets of the first trace's events ([`OffsetScan`]).
    #[cfg(test)]
    fn of_first_trace(events: &[Object]) -> Offsets {
        let mut scan = OffsetScan::default();
        events.iter().for_each(|e| scan.add(e));
        scan.finish()
    }
}

/// The fields that may get an offset: the linking key is one of the last
/// two.
const FIELDS: [&str; 4] = ["id", "pid", CORRELATION, EXTERNAL_ID];

/// The first trace's events seen one at a time, for its [`Offsets`]: the
/// linking key is `correlation` when the first launch (a
/// `cuda_runtime`/`cuda_driver` event with "launch" in its name) has it in
/// its args, else `External id`; each field's multiplier is
/// 10^(ceil(log10(max + 1)) + 1) over its integer values (bools count;
/// the max starts at 0). Both candidate keys are followed until the end,
/// so the events need not be held.
#[derive(Debug, Default)]
pub(super) struct OffsetScan {
    /// Whether the first launch has `args.correlation`, once seen.
    launch_has_correlation: Option<bool>,
    /// Per field of [`FIELDS`]: when it first had an integer (a counter)
    /// and its max.
    max: [Option<(usize, i128)>; 4],
    /// Fields seen so far.
    seen: usize,
}

impl OffsetScan {
    /// Takes in one event.
    pub(super) fn add(&mut self, e: &Object) {
        let args = e.get("args").and_then(|a| Object::parse(a).ok());
        if self.launch_has_correlation.is_none() && is_launch(e) {
            let has = args.as_ref().is_some_and(|a| a.contains(CORRELATION));
            self.launch_has_correlation = Some(has);
        }
        for (i, field) in FIELDS.into_iter().enumerate() {
            let text = match i {
                0 | 1 => e.get(field),
                _ => args.as_ref().and_then(|a| a.get(field)),
            };
            let value = match text.map(object::kind) {
                Some(Kind::Int(v)) => v,
                Some(Kind::Bool(b)) => i128::from(b),
                _ => continue,
            };
            match &mut self.max[i] {
                Some((_, m)) => *m = (*m).max(value),
                slot @ None => {
                    *slot = Some((self.seen, value.max(0)));
                    self.seen += 1;
                }
            }
        }
    }

    /// The offsets.
    pub(super) fn finish(self) -> Offsets {
        let linking_key = match self.launch_has_correlation {
            Some(true) => CORRELATION,
            _ => EXTERNAL_ID,
        };
        let mut fields: Vec<(usize, &'static str, i128)> = FIELDS
            .into_iter()
            .zip(self.max)
            .filter(|(f, _)| matches!(*f, "id" | "pid") || *f == linking_key)
            .filter_map(|(f, m)| m.map(|(seq, max)| (seq, f, multiplier(max))))
            .collect();
        fields.sort_unstable_by_key(|(seq, ..)| *seq);
        Offsets {
            linking_key,
            multipliers: fields.into_iter().map(|(_, f, m)| (f, m)).collect(),
        }
    }
}

/// Whether `e` is a launch: a `cuda_runtime` or `cuda_driver` event with
/// "launch" in its name, in any case.
fn is_launch(e: &Object) -> bool {
    let cat = e.get("cat").and_then(object::as_str);
    let name = e.get("name").and_then(object::as_str);
    matches!(cat.as_deref(), Some("cuda_runtime" | "cuda_driver"))
        && name.is_some_and(|n| n.to_lowercase().contains("launch"))
}

/// 10^(ceil(log10(max + 1)) + 1), with the logarithm taken in floating
/// point as Python's `math.log10` takes it; saturates at 10^38.
fn multiplier(max: i128) -> i128 {
    let digits = (max.saturating_add(1) as f64).log10().ceil() as u32 + 1;
    10i128.checked_pow(digits).unwrap_or(10i128.pow(38))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(texts: &[&'static str]) -> Vec<Object<'static>> {
        texts.iter().map(|t| Object::parse(t).unwrap()).collect()
    }

    #[test]
    fn multipliers_are_a_power_of_ten_above_the_largest_value() {
        assert_eq!(multiplier(0), 10);
        assert_eq!(multiplier(9), 100);
        assert_eq!(multiplier(4242), 100_000);
        assert_eq!(multiplier(31337), 1_000_000);
        assert_eq!(multiplier(99_999), 1_000_000);
        assert_eq!(multiplier(100_000), 10_000_000);
        assert_eq!(multiplier(-5), 10);
    }

    #[test]
    fn linking_key_and_field_order_come_from_the_first_trace() {
        let with = events(&[
            r#"{"pid": 7, "cat": "cpu_op", "args": {"External id": 3}}"#,
            r#"{"cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "id": 12, "args": {"correlation": 99}}"#,
        ]);
        let o = Offsets::of_first_trace(&with);
        assert_eq!(o.linking_key, CORRELATION);
        assert_eq!(
            o.multipliers,
            vec![("pid", 100), ("id", 1000), ("correlation", 1000)]
        );
        let without = events(&[
            r#"{"pid": "x", "args": {"External id": 5}}"#,
            r#"{"cat": "cuda_driver", "name": "cuLaunchKernel", "args": {}}"#,
        ]);
        let o = Offsets::of_first_trace(&without);
        assert_eq!(o.linking_key, EXTERNAL_ID);
        assert_eq!(o.multipliers, vec![("External id", 100)]);
    }
}
