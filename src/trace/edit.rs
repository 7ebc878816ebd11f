//! Changes to a loaded [`Trace`]: events appended after the loaded ones
//! (copies of another trace's events, synthetic events) and renames.
//!
//! Events read from the file keep their index, which is their UID; an
//! appended event's UID is its index too, so it numbers after every loaded
//! event, as the reference numbers the events it adds.

use rustc_hash::FxHashMap;

use super::args::Args;
use super::handle::{EventId, IdentId, StrId, ValueId};
use super::{Cat, Event, Ident, Phase, Trace};

/// Handles of a source trace's tables already copied into a target trace,
/// so that copying many events re-interns each string and value once.
#[derive(Debug, Default)]
pub struct CopyMap {
    strings: FxHashMap<StrId, StrId>,
    idents: FxHashMap<IdentId, IdentId>,
    values: FxHashMap<ValueId, ValueId>,
}

impl Trace {
    /// The handle of a pid/tid value, adding it when it is new.
    fn intern_ident(&mut self, v: &Ident) -> IdentId {
        self.find_ident(v).unwrap_or_else(|| {
            self.idents.push(v.clone());
            IdentId::new(self.idents.len() - 1)
        })
    }

    /// Appends a complete event that no file holds (e.g. the merge's
    /// `CaptureRoot`): no pid/tid, empty args.
    pub fn push_synthetic(&mut self, name: &str, cat: Cat, ts: f64, dur: f64) -> EventId {
        let name = Some(self.strings.intern(name));
        let null = self.intern_ident(&Ident::Null);
        let args = Some(self.args.push(Args::default()));
        self.push_event(Event {
            ts,
            dur,
            name,
            pid: null,
            tid: null,
            args,
            cat,
            ph: Phase::Complete,
            ts_is_int: false,
            dur_is_int: false,
        })
    }

    /// Appends a copy of event `id` of `src`: name, pid/tid, category and
    /// args (link ids, op arguments, `kernel`) re-interned into this trace.
    /// Collective metadata and flow ids are not copied (host events carry none).
    pub fn push_copy(&mut self, src: &Trace, id: EventId, map: &mut CopyMap) -> EventId {
        let e = *src.event(id);
        let mut string = |t: &mut Trace, s: StrId| {
            *map.strings
                .entry(s)
                .or_insert_with(|| t.strings.intern(src.string(s)))
        };
        let name = e.name.map(|s| string(self, s));
        let args = src.args(id).map(|a| {
            let mut a = a;
            a.kernel = a.kernel.map(|k| string(self, k));
            let mut value = |v: Option<ValueId>| {
                v.map(|v| {
                    *map.values.entry(v).or_insert_with(|| {
                        self.values.push(src.value(v).clone());
                        ValueId::new(self.values.len() - 1)
                    })
                })
            };
            a.input_dims = value(a.input_dims);
            a.input_type = value(a.input_type);
            a.input_strides = value(a.input_strides);
            a.concrete_inputs = value(a.concrete_inputs);
            self.args.push(a)
        });
        let mut ident = |t: &mut Trace, i: IdentId| {
            *map.idents
                .entry(i)
                .or_insert_with(|| t.intern_ident(src.ident(i)))
        };
        let (pid, tid) = (ident(self, e.pid), ident(self, e.tid));
        self.push_event(Event {
            name,
            pid,
            tid,
            args,
            ..e
        })
    }

    /// Sets an event's start and duration, with the integer flags of the
    /// event whose times they are (`like`).
    pub fn set_times(&mut self, id: EventId, like: EventId) {
        let l = *self.event(like);
        let e = self.event_mut(id);
        (e.ts, e.dur, e.ts_is_int, e.dur_is_int) = (l.ts, l.dur, l.ts_is_int, l.dur_is_int);
    }

    /// Sets an event's `args.correlation` (giving it an args record when it
    /// has none).
    pub fn set_correlation(&mut self, id: EventId, correlation: Option<i64>) {
        let a = match self.event(id).args {
            Some(a) => a,
            None => {
                let a = self.args.push(Args::default());
                self.event_mut(id).args = Some(a);
                a
            }
        };
        let mut record = self.args.get(a);
        record.set_correlation(correlation);
        self.args.set(a, record);
    }
}

/// `sglang_profiler::X_<digits>` → `sglang_profiler::X` (the reference's
/// pseudo-op pass strips the volatile counter SGLang appends). As the
/// reference renames by name, over the host events of the tree's name
/// index: all host events of a name are renamed when the first of them (the
/// earliest loaded one by start, else the first appended) is a `cpu_op`.
/// `include_python`: whether python frames are in the tree. Returns the
/// events renamed.
pub fn strip_sglang_profiler_suffixes(trace: &mut Trace, include_python: bool) -> usize {
    let host = |c: Cat| {
        matches!(c, Cat::CpuOp | Cat::CudaRuntime | Cat::CudaDriver)
            || (include_python && c == Cat::PythonFunction)
    };
    let loaded = trace.loaded_len();
    // Per candidate name: its first host event's (appended, ts, index) and cat.
    let mut first: FxHashMap<StrId, ((bool, f64, usize), Cat)> = FxHashMap::default();
    for (id, e) in trace.events() {
        let Some(name) = e.name else { continue };
        if !host(e.cat) || sglang_stripped(trace.string(name)).is_none() {
            continue;
        }
        let appended = id.index() >= loaded;
        let key = (appended, if appended { 0.0 } else { e.ts }, id.index());
        let slot = first.entry(name).or_insert((key, e.cat));
        let (a, b) = (key, slot.0);
        let earlier = a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2));
        if earlier.is_lt() {
            *slot = (key, e.cat);
        }
    }
    // One new name per renamed name, interned once; then one pass over
    // the events swaps handles.
    let mut to: FxHashMap<StrId, StrId> = FxHashMap::default();
    for (&name, &(_, cat)) in &first {
        if cat == Cat::CpuOp
            && let Some(s) = sglang_stripped(trace.string(name))
        {
            let s = s.to_string();
            to.insert(name, trace.strings.intern(&s));
        }
    }
    let mut renamed = 0;
    for e in trace.kept_events_mut().filter(|e| host(e.cat)) {
        if let Some(new) = e.name.and_then(|n| to.get(&n)) {
            e.name = Some(*new);
            renamed += 1;
        }
    }
    renamed
}

/// `re.match(r"^(sglang_profiler::.+?)_\d+$", name).group(1)`: the name
/// without its last `_<digits>` (`$` also matches before a final newline).
fn sglang_stripped(name: &str) -> Option<&str> {
    let body = name.strip_suffix('\n').unwrap_or(name);
    let rest = body.strip_prefix("sglang_profiler::")?;
    let digits = rest.len() - rest.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let head = rest[..rest.len() - digits].strip_suffix('_')?;
    // `.+?` needs at least one character before the suffix.
    (digits > 0 && !head.is_empty()).then(|| &body[..body.len() - digits - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::trace_of_json;

    /// Events of (cat, name, ts) on pid 1, tid "t", 1 µs long.
    fn trace_of(rows: &[(Cat, &str, f64)]) -> Trace {
        let events: Vec<String> = rows
            .iter()
            .map(|(cat, name, ts)| {
                format!(
                    r#"{{"ph": "X", "cat": "{}", "name": "{name}", "ts": {ts}, "dur": 1, "pid": 1, "tid": "t", "args": {{}}}}"#,
                    cat.as_str()
                )
            })
            .collect();
        trace_of_json(&events.join(","))
    }

    #[test]
    fn copies_reintern_and_number_after_the_loaded_events() {
        let src = trace_of(&[(Cat::CpuOp, "x", 1.0), (Cat::CpuOp, "aten::mm", 2.0)]);
        let mut t = trace_of(&[(Cat::Kernel, "k", 5.0)]);
        let mut map = CopyMap::default();
        let c = t.push_copy(&src, EventId::new(1), &mut map);
        let r = t.push_synthetic("CaptureRoot", Cat::CudaRuntime, 0.0, 0.0);
        assert_eq!((c.index(), r.index(), t.loaded_len()), (1, 2, 1));
        assert_eq!(t.name(c), "aten::mm");
        assert_eq!(t.ident(t.event(c).tid), &Ident::Str("t".into()));
        assert_eq!(t.ident(t.event(r).pid), &Ident::Null);
        t.set_times(c, EventId::new(0));
        assert_eq!(
            (t.event(c).ts, t.event(c).dur, t.event(c).ts_is_int),
            (5.0, 1.0, true)
        );
        t.set_correlation(EventId::new(0), Some(9));
        assert_eq!(t.args(EventId::new(0)).unwrap().correlation(), Some(9));
    }

    #[test]
    fn sglang_names_are_stripped_by_name() {
        let mut t = trace_of(&[
            (Cat::CpuOp, "sglang_profiler::f_12", 5.0),
            (Cat::CpuOp, "sglang_profiler::f_12", 1.0),
            (Cat::Kernel, "sglang_profiler::g_3", 2.0),
            (Cat::CudaRuntime, "sglang_profiler::h_1", 1.0),
            (Cat::CpuOp, "sglang_profiler::h_1", 3.0),
            (Cat::PythonFunction, "sglang_profiler::p_1", 3.0),
        ]);
        // Kernels are not in the name index; h's first host event is a runtime call.
        assert_eq!(strip_sglang_profiler_suffixes(&mut t, false), 2);
        let names: Vec<&str> = t.ids().map(|i| t.name(i)).collect();
        assert_eq!(
            names,
            [
                "sglang_profiler::f",
                "sglang_profiler::f",
                "sglang_profiler::g_3",
                "sglang_profiler::h_1",
                "sglang_profiler::h_1",
                "sglang_profiler::p_1"
            ]
        );
    }

    #[test]
    fn sglang_suffixes() {
        assert_eq!(
            sglang_stripped("sglang_profiler::attention_ragged_100"),
            Some("sglang_profiler::attention_ragged")
        );
        assert_eq!(
            sglang_stripped("sglang_profiler::a_1_2"),
            Some("sglang_profiler::a_1")
        );
        assert_eq!(
            sglang_stripped("sglang_profiler::a_12\n"),
            Some("sglang_profiler::a")
        );
        assert_eq!(sglang_stripped("sglang_profiler::_12"), None);
        assert_eq!(sglang_stripped("sglang_profiler::a12"), None);
        assert_eq!(sglang_stripped("sglang_profiler::a_"), None);
        assert_eq!(sglang_stripped("vllm::a_12"), None);
    }
}
