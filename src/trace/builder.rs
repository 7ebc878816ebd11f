//! [`TraceBuilder`]: makes a [`Trace`] from events a decoder hands over.
//!
//! The builder owns every rule that does not depend on the input format:
//! interning of names, pid/tid values and argument values, the args
//! records, thread metadata, what [`Needs`] lets it leave out, the
//! trace-level rules (a negative duration is an error, GPU work without a
//! duration takes no time) and the warnings those rules produce. A decoder
//! only turns its format into [`EventInput`]s.

use rustc_hash::FxHashMap;

use super::args::{ArgValue, Args, CollectiveArgs, LinkIds, OpArgIds};
use super::handle::{EventId, IdentId, MAX_INDEX, StrId, ValueId};
use super::needs::Needs;
use super::{Cat, Event, Ident, Phase, Trace, TraceInfo, is_collective_name};

/// A `pid` / `tid` value as the decoder read it, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentRef<'a> {
    /// Absent or null.
    Null,
    /// An integer.
    Int(i64),
    /// A string.
    Str(&'a str),
}

/// A time as written: its value and whether it was written as an integer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Time {
    /// Microseconds.
    pub value: f64,
    /// True when written as an integer.
    pub is_int: bool,
}

/// The arguments of one event as the decoder read them. Argument values
/// are given as the decoder's source text; the builder parses each distinct
/// text once (with the decoder's parser) and only for events it keeps.
#[derive(Debug, Clone, Default)]
pub struct ArgsInput<'a> {
    /// Integer link ids.
    pub links: LinkIds,
    /// Source texts of the op arguments, in [`super::args::OP_ARG_KEYS`] order.
    pub op: [Option<&'a str>; 4],
    /// Source texts of the collective metadata, in
    /// [`super::args::COLLECTIVE_ARG_KEYS`] order.
    pub collective: [Option<&'a str>; 10],
    /// Metadata events: the process or thread name (`args.name`).
    pub meta_name: Option<String>,
    /// Metadata events: the process labels (`args.labels`).
    pub meta_labels: Option<String>,
    /// `args.kernel` of runtime launches (kept for runtime events only).
    pub kernel: Option<std::borrow::Cow<'a, str>>,
}

/// One event as the decoder read it.
#[derive(Debug, Clone)]
pub struct EventInput<'a> {
    /// Category.
    pub cat: Cat,
    /// Phase.
    pub ph: Phase,
    /// Name, when present.
    pub name: Option<&'a str>,
    /// Process.
    pub pid: IdentRef<'a>,
    /// Thread (or GPU stream row).
    pub tid: IdentRef<'a>,
    /// Start, when present.
    pub ts: Option<Time>,
    /// Duration, when present.
    pub dur: Option<Time>,
    /// Flow id of flow start/end events.
    pub flow_id: Option<i64>,
    /// Arguments, when the event has any.
    pub args: Option<ArgsInput<'a>>,
}

/// What the builder does with an event of a category, decided before the
/// decoder parses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Parse it and hand it over with [`TraceBuilder::push_event`].
    Full,
    /// Keep only its place: [`TraceBuilder::push_stub`].
    Stub,
    /// Leave it out entirely.
    Drop,
}

/// True when `needs` lets some category be left out or stubbed, so that
/// reading an event's category before parsing it can pay.
pub fn skips_any(needs: &Needs) -> bool {
    needs.collectives_only || !needs.python_frames || !needs.other_events
}

/// What a builder for `needs` does with an event of category `cat`.
pub fn keep(needs: &Needs, cat: Cat) -> Keep {
    if needs.collectives_only {
        return if cat == Cat::Kernel {
            Keep::Full
        } else {
            Keep::Drop
        };
    }
    match cat {
        Cat::PythonFunction if !needs.python_frames => Keep::Stub,
        Cat::Other if !needs.other_events => Keep::Stub,
        _ => Keep::Full,
    }
}

/// The arguments of one event with its names and values already interned
/// (see [`ResolvedEvent`]).
#[derive(Debug, Clone, Default)]
pub struct ResolvedArgs<'a> {
    /// Integer link ids.
    pub links: LinkIds,
    /// Handles of the op arguments.
    pub op: OpArgIds,
    /// Source texts of the collective metadata, in
    /// [`super::args::COLLECTIVE_ARG_KEYS`] order (parsed only for kernels).
    pub collective: [Option<&'a str>; 10],
    /// Metadata events: the process or thread name.
    pub meta_name: Option<String>,
    /// Metadata events: the process labels.
    pub meta_labels: Option<String>,
    /// `args.kernel` of runtime launches, interned (None for other events).
    pub kernel: Option<StrId>,
}

/// One event whose strings, pid/tid and argument values were interned with
/// [`TraceBuilder::intern_name`], [`TraceBuilder::intern_ident`] and
/// [`TraceBuilder::intern_value`], in the order [`TraceBuilder::push_event`]
/// interns them: name, pid, tid, the op values in key order, the kernel.
/// Decoders that parse events in parallel intern each distinct text once
/// per batch this way.
#[derive(Debug, Clone)]
pub struct ResolvedEvent<'a> {
    /// Category.
    pub cat: Cat,
    /// Phase.
    pub ph: Phase,
    /// Name, when present.
    pub name: Option<StrId>,
    /// Process.
    pub pid: IdentId,
    /// Thread (or GPU stream row).
    pub tid: IdentId,
    /// Start, when present.
    pub ts: Option<Time>,
    /// Duration, when present.
    pub dur: Option<Time>,
    /// Flow id of flow start/end events.
    pub flow_id: Option<i64>,
    /// Arguments, when the event has any.
    pub args: Option<ResolvedArgs<'a>>,
}

/// Builds a [`Trace`]; see the module docs.
#[derive(Debug)]
pub struct TraceBuilder {
    needs: Needs,
    trace: Trace,
    idents: FxHashMap<Ident, IdentId>,
    /// Source text of an argument value -> its handle (None: `null`, or text
    /// the parser rejected).
    values: FxHashMap<Box<str>, Option<ValueId>>,
    gpu_without_dur: usize,
    coll_without_ts: usize,
    coll_without_dur: usize,
}

/// An event name shortened for messages.
fn short(name: &str) -> String {
    let mut s: String = name.chars().take(60).collect();
    if s.len() < name.len() {
        s.push('…');
    }
    s
}

impl TraceBuilder {
    /// A builder keeping what `needs` asks for.
    pub fn new(needs: &Needs) -> TraceBuilder {
        let mut b = TraceBuilder {
            needs: *needs,
            trace: Trace::default(),
            idents: FxHashMap::default(),
            values: FxHashMap::default(),
            gpu_without_dur: 0,
            coll_without_ts: 0,
            coll_without_dur: 0,
        };
        // The null pid/tid is interned first: stubs read as holding it
        // (`IdentId::FIRST`).
        b.ident(IdentRef::Null);
        b
    }

    /// What the trace must contain.
    pub fn needs(&self) -> &Needs {
        &self.needs
    }

    /// True when some category may be left out or stubbed, so that reading
    /// an event's category before parsing it can pay.
    pub fn skips_any(&self) -> bool {
        skips_any(&self.needs)
    }

    /// What to do with an event of category `cat`.
    pub fn keep(&self, cat: Cat) -> Keep {
        keep(&self.needs, cat)
    }

    fn ident(&mut self, raw: IdentRef<'_>) -> IdentId {
        let key = match raw {
            IdentRef::Null => Ident::Null,
            IdentRef::Int(v) => Ident::Int(v),
            IdentRef::Str(s) => Ident::Str(s.into()),
        };
        if let Some(&id) = self.idents.get(&key) {
            return id;
        }
        let id = IdentId::new(self.trace.idents.len());
        self.trace.idents.push(key.clone());
        self.idents.insert(key, id);
        id
    }

    /// The handle of the value written as `text`, parsing it (with `parse`)
    /// the first time the text is met; None for `null`.
    fn value(
        &mut self,
        text: &str,
        parse: &mut impl FnMut(&str) -> Option<ArgValue>,
    ) -> Option<ValueId> {
        if let Some(&id) = self.values.get(text) {
            return id;
        }
        let id = match parse(text) {
            Some(v) if !v.is_null() => {
                let id = ValueId::new(self.trace.values.len());
                self.trace.values.push(v);
                Some(id)
            }
            _ => None,
        };
        self.values.insert(text.into(), id);
        id
    }

    fn next_id(&self) -> Result<EventId, String> {
        let n = self.trace.len();
        if n > MAX_INDEX {
            return Err(format!("the trace has more than {MAX_INDEX} events"));
        }
        Ok(EventId::new(n))
    }

    /// Keeps the place of an event that no pass reads (its index counts;
    /// nothing else of it is kept).
    pub fn push_stub(&mut self, cat: Cat) -> Result<(), String> {
        self.next_id()?;
        self.trace.push_stub(cat);
        Ok(())
    }

    /// Adds event number `index` of the input (the number only appears in
    /// error messages). Returns whether the event was kept; an error for an
    /// event the trace cannot hold (a negative duration).
    pub fn push_event(
        &mut self,
        index: usize,
        ev: EventInput<'_>,
        parse: &mut impl FnMut(&str) -> Option<ArgValue>,
    ) -> Result<bool, String> {
        if self.needs.collectives_only {
            return self.push_collective(index, ev, parse);
        }
        let name = ev.name.map(|n| self.intern_name(n));
        let pid = self.ident(ev.pid);
        let tid = self.ident(ev.tid);
        let args = ev.args.map(|a| ResolvedArgs {
            links: a.links,
            op: OpArgIds {
                dims: a.op[0].and_then(|t| self.value(t, parse)),
                types: a.op[1].and_then(|t| self.value(t, parse)),
                strides: a.op[2].and_then(|t| self.value(t, parse)),
                concrete: a.op[3].and_then(|t| self.value(t, parse)),
            },
            collective: a.collective,
            meta_name: a.meta_name,
            meta_labels: a.meta_labels,
            kernel: if ev.cat.is_runtime() {
                a.kernel.as_deref().map(|k| self.intern_name(k))
            } else {
                None
            },
        });
        let mut ev = ResolvedEvent {
            cat: ev.cat,
            ph: ev.ph,
            name,
            pid,
            tid,
            ts: ev.ts,
            dur: ev.dur,
            flow_id: ev.flow_id,
            args,
        };
        self.push_resolved(index, &mut ev, parse)
    }

    /// Makes room for about `kept` events, `stubs` stubs and `args`
    /// argument records (a decoder's estimate; nothing happens when memory
    /// says no).
    pub fn reserve(&mut self, kept: usize, stubs: usize, args: usize) {
        let kept = kept.min(MAX_INDEX);
        let _ = self.trace.events.try_reserve(kept);
        let _ = self.trace.args.try_reserve(args.min(kept));
        if stubs > 0 {
            self.trace
                .slots_reserved(kept.saturating_add(stubs).min(MAX_INDEX));
        }
    }

    /// The handle of a name (or a kernel name of `args.kernel`).
    pub fn intern_name(&mut self, name: &str) -> StrId {
        self.trace.strings.intern(name)
    }

    /// The handle of a pid or tid value.
    pub fn intern_ident(&mut self, raw: IdentRef<'_>) -> IdentId {
        self.ident(raw)
    }

    /// The handle of an op argument value written as `text` (parsed with
    /// `parse` the first time); None for `null` or text `parse` rejects.
    pub fn intern_value(
        &mut self,
        text: &str,
        parse: &mut impl FnMut(&str) -> Option<ArgValue>,
    ) -> Option<ValueId> {
        self.value(text, parse)
    }

    /// [`Self::push_event`] for an event whose strings are interned; not for
    /// collectives-only builders (they intern only what they keep).
    pub fn push_resolved(
        &mut self,
        index: usize,
        ev: &mut ResolvedEvent<'_>,
        parse: &mut impl FnMut(&str) -> Option<ArgValue>,
    ) -> Result<bool, String> {
        debug_assert!(!self.needs.collectives_only);
        let id = self.next_id()?;
        let (ts, ts_is_int) = ev.ts.map_or((f64::NAN, false), |t| (t.value, t.is_int));
        let (mut dur, dur_is_int) = ev.dur.map_or((f64::NAN, false), |t| (t.value, t.is_int));
        if dur < 0.0 {
            let name = ev.name.map_or("", |n| self.trace.strings.get(n));
            return Err(format!(
                "event #{index} ({}) has a negative duration ({dur})",
                short(name)
            ));
        }
        if ev.cat.is_gpu() && ev.ph == Phase::Complete && dur.is_nan() {
            // The reference crashes here; a GPU event without a duration
            // takes no time.
            self.gpu_without_dur += 1;
            dur = 0.0;
        }
        let mut args = None;
        if let Some(a) = &mut ev.args {
            if ev.ph == Phase::Metadata {
                let what = ev
                    .name
                    .map_or("", |n| self.trace.strings.get(n))
                    .to_string();
                let (name, labels) = (a.meta_name.take(), a.meta_labels.take());
                self.set_meta(&what, (ev.pid, ev.tid), name, labels);
            }
            if ev.cat == Cat::Kernel {
                self.set_collective_args(id, &a.collective, parse);
            }
            let mut rec = Args::new(a.links, a.op);
            rec.kernel = a.kernel;
            args = Some(self.trace.args.push(rec));
        }
        if matches!(ev.ph, Phase::FlowStart | Phase::FlowEnd)
            && let Some(f) = ev.flow_id
        {
            self.trace.flow_ids.insert(id, f);
        }
        self.trace.push_event(Event {
            ts,
            dur,
            name: ev.name,
            pid: ev.pid,
            tid: ev.tid,
            args,
            cat: ev.cat,
            ph: ev.ph,
            ts_is_int,
            dur_is_int,
        });
        Ok(true)
    }

    /// [`Self::push_event`] in collectives-only mode: keeps linked collective
    /// kernels and nothing else; their op arguments are not kept.
    fn push_collective(
        &mut self,
        index: usize,
        ev: EventInput<'_>,
        parse: &mut impl FnMut(&str) -> Option<ArgValue>,
    ) -> Result<bool, String> {
        let name = ev.name.unwrap_or("");
        if ev.cat != Cat::Kernel || !is_collective_name(name) {
            return Ok(false);
        }
        // Unlinked kernels (no correlation, no External id) are left out.
        let Some(a) = ev
            .args
            .filter(|a| a.links.correlation.is_some() || a.links.external_id.is_some())
        else {
            return Ok(false);
        };
        let Some(ts) = ev.ts else {
            self.coll_without_ts += 1;
            return Ok(false);
        };
        let dur = ev.dur.unwrap_or_else(|| {
            self.coll_without_dur += 1;
            Time {
                value: 0.0,
                is_int: true,
            }
        });
        if dur.value < 0.0 {
            return Err(format!(
                "event #{index} ({}) has a negative duration ({})",
                short(name),
                dur.value
            ));
        }
        let id = self.next_id()?;
        let name = self.trace.strings.intern(name);
        let pid = self.ident(ev.pid);
        let tid = self.ident(ev.tid);
        self.set_collective_args(id, &a.collective, parse);
        let args = self
            .trace
            .args
            .push(Args::new(a.links, OpArgIds::default()));
        self.trace.push_event(Event {
            ts: ts.value,
            dur: dur.value,
            name: Some(name),
            pid,
            tid,
            args: Some(args),
            cat: ev.cat,
            ph: ev.ph,
            ts_is_int: ts.is_int,
            dur_is_int: dur.is_int,
        });
        Ok(true)
    }

    fn set_collective_args(
        &mut self,
        id: EventId,
        texts: &[Option<&str>; 10],
        parse: &mut impl FnMut(&str) -> Option<ArgValue>,
    ) {
        if texts.iter().all(Option::is_none) {
            return;
        }
        let c = CollectiveArgs::from_values(texts.map(|t| t.and_then(&mut *parse)));
        if !c.is_empty() {
            self.trace.collective_args.insert(id, c);
        }
    }

    /// Process and thread names. A metadata event sets its field even when
    /// the value is absent, as the reference's dict update does.
    fn set_meta(
        &mut self,
        what: &str,
        key: (IdentId, IdentId),
        name: Option<String>,
        labels: Option<String>,
    ) {
        let meta = &mut self.trace.meta;
        match what {
            "process_name" => meta.entry(key).or_default().process_name = name,
            "process_labels" => meta.entry(key).or_default().process_labels = labels,
            "thread_name" => meta.entry(key).or_default().thread_name = name,
            _ => {}
        }
    }

    /// Facts about the whole trace, for the decoder to fill in.
    pub fn info_mut(&mut self) -> &mut TraceInfo {
        &mut self.trace.info
    }

    /// Sets the XLA side of the trace (XPlane decoder).
    pub fn set_xla(&mut self, xla: super::xla::XlaData) {
        self.trace.xla = Some(Box::new(xla));
    }

    /// Sets the slices of a Perfetto-style trace (Perfetto decoders).
    pub fn set_perfetto(&mut self, d: super::perfetto::PerfettoData) {
        self.trace.perfetto = Some(Box::new(d));
    }

    /// Sets the exact dispatch records (rocprofv3 decoder).
    pub fn set_dispatches(&mut self, d: super::dispatch::DispatchData) {
        self.trace.dispatches = Some(std::sync::Arc::new(d));
    }

    /// Sets the process or thread name of `(pid, tid)` without adding an
    /// event (formats whose metadata is not numbered among the events).
    /// `what` is `process_name`, `process_labels` or `thread_name`.
    pub fn set_meta_of(&mut self, what: &str, pid: IdentRef<'_>, tid: IdentRef<'_>, value: String) {
        let key = (self.ident(pid), self.ident(tid));
        let labels = (what == "process_labels").then(|| value.clone());
        self.set_meta(what, key, Some(value), labels);
    }

    /// Adds a warning (the decoder's, about its format).
    pub fn warn(&mut self, msg: String) {
        self.trace.warnings.push(msg);
    }

    /// The finished trace, with the builder's own warnings after the
    /// decoder's.
    pub fn finish(mut self) -> Trace {
        let w = &mut self.trace.warnings;
        if self.gpu_without_dur > 0 {
            w.push(format!(
                "{} GPU event(s) without \"dur\" were counted as zero-length",
                self.gpu_without_dur
            ));
        }
        if self.coll_without_ts > 0 {
            w.push(format!(
                "{} collective kernel(s) without \"ts\" were left out",
                self.coll_without_ts
            ));
        }
        if self.coll_without_dur > 0 {
            w.push(format!(
                "{} collective kernel(s) without \"dur\" were counted as zero-length",
                self.coll_without_dur
            ));
        }
        self.trace.events.shrink_to_fit();
        if let Some(slots) = &mut self.trace.slots {
            slots.shrink_to_fit();
        }
        self.trace.loaded = self.trace.len();
        self.trace.args.shrink_to_fit();
        self.trace.flow_ids.shrink_to_fit();
        self.trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::args::LinkIds;

    fn event<'a>(cat: Cat, name: &'a str, ts: f64, dur: Option<f64>) -> EventInput<'a> {
        EventInput {
            cat,
            ph: Phase::Complete,
            name: Some(name),
            pid: IdentRef::Int(1),
            tid: IdentRef::Int(2),
            ts: Some(Time {
                value: ts,
                is_int: false,
            }),
            dur: dur.map(|d| Time {
                value: d,
                is_int: true,
            }),
            flow_id: None,
            args: None,
        }
    }

    /// A parser for tests: integers and `null`, counting its calls.
    fn counting(calls: &mut usize) -> impl FnMut(&str) -> Option<ArgValue> + '_ {
        move |t: &str| {
            *calls += 1;
            match t {
                "null" => Some(ArgValue::Null),
                t => t.parse().ok().map(ArgValue::Int),
            }
        }
    }

    /// Kept events and stubs interleaved: ids stay input positions, a stub
    /// reads as its category alone, and edits append or change events as
    /// before (a changed stub becomes a kept event).
    #[test]
    fn stubs_keep_their_place_without_an_event_record() {
        for reserved in [false, true] {
            let mut b = TraceBuilder::new(&Needs::ALL);
            if reserved {
                b.reserve(2, 3, 0);
            }
            let mut parse = |_: &str| None;
            b.push_event(0, event(Cat::CpuOp, "a", 1.0, Some(2.0)), &mut parse)
                .unwrap();
            b.push_stub(Cat::PythonFunction).unwrap();
            b.push_stub(Cat::Other).unwrap();
            b.push_event(3, event(Cat::Kernel, "k", 5.0, Some(1.0)), &mut parse)
                .unwrap();
            b.push_stub(Cat::Missing).unwrap();
            let mut t = b.finish();
            assert_eq!((t.len(), t.loaded_len()), (5, 5));
            let cats: Vec<Cat> = t.events().map(|(_, e)| e.cat).collect();
            let want = [
                Cat::CpuOp,
                Cat::PythonFunction,
                Cat::Other,
                Cat::Kernel,
                Cat::Missing,
            ];
            assert_eq!(cats, want);
            assert_eq!(
                (t.name(EventId::new(0)), t.name(EventId::new(3))),
                ("a", "k")
            );
            assert_eq!(t.event(EventId::new(3)).ts, 5.0);
            let stub = *t.event(EventId::new(1));
            assert!(stub.ts.is_nan() && stub.dur.is_nan() && stub.name.is_none());
            assert_eq!((stub.args, stub.ph), (None, Phase::Other));
            assert_eq!(t.ident(stub.pid), &Ident::Null);
            assert_eq!(
                t.events().next_back().map(|(i, _)| i),
                Some(EventId::new(4))
            );
            // Edits: a synthetic event takes the next id; a stub given
            // times keeps its category and place.
            let s = t.push_synthetic("root", Cat::UserAnnotation, 0.0, 9.0);
            assert_eq!(s, EventId::new(5));
            assert_eq!((t.name(s), t.event(s).dur), ("root", 9.0));
            t.set_times(EventId::new(2), EventId::new(0));
            let changed = t.event(EventId::new(2));
            assert_eq!(
                (changed.cat, changed.ts, changed.dur),
                (Cat::Other, 1.0, 2.0)
            );
            assert!(
                t.event(EventId::new(1)).ts.is_nan(),
                "other stubs unchanged"
            );
            assert_eq!(t.event(EventId::new(3)).ts, 5.0);
        }
    }

    #[test]
    fn values_are_parsed_once_per_distinct_text() {
        let mut b = TraceBuilder::new(&Needs::ALL);
        let mut calls = 0;
        let mut parse = counting(&mut calls);
        for dims in ["5", "5", "null", "7"] {
            let mut ev = event(Cat::CpuOp, "aten::mm", 0.0, Some(1.0));
            ev.args = Some(ArgsInput {
                op: [Some(dims), None, None, Some("null")],
                ..ArgsInput::default()
            });
            assert!(b.push_event(0, ev, &mut parse).unwrap());
        }
        drop(parse);
        assert_eq!(calls, 3, "5, null and 7");
        let t = b.finish();
        let dims: Vec<Option<&ArgValue>> = t.ids().map(|i| t.op_args(i).dims).collect();
        assert_eq!(
            dims,
            [
                Some(&ArgValue::Int(5)),
                Some(&ArgValue::Int(5)),
                None,
                Some(&ArgValue::Int(7))
            ]
        );
        assert_eq!(
            t.args(EventId::new(0)).unwrap().input_dims,
            t.args(EventId::new(1)).unwrap().input_dims
        );
        assert_eq!(t.op_args(EventId::new(0)).concrete, None, "null is absent");
    }

    #[test]
    fn rules_and_warnings() {
        let mut b = TraceBuilder::new(&Needs::ALL);
        let mut parse = |_: &str| None;
        let err = b
            .push_event(4, event(Cat::Kernel, "k", 0.0, Some(-1.0)), &mut parse)
            .unwrap_err();
        assert_eq!(err, "event #4 (k) has a negative duration (-1)");
        b.push_event(0, event(Cat::Kernel, "k", 0.0, None), &mut parse)
            .unwrap();
        b.push_stub(Cat::PythonFunction).unwrap();
        b.warn("from the decoder".into());
        let t = b.finish();
        assert_eq!(t.len(), 2);
        assert_eq!(t.event(EventId::new(0)).dur, 0.0);
        assert_eq!(t.name(EventId::new(1)), "", "a stub keeps only its place");
        assert_eq!(
            t.warnings(),
            [
                "from the decoder",
                "1 GPU event(s) without \"dur\" were counted as zero-length"
            ]
        );
    }

    #[test]
    fn collectives_only_keeps_linked_collective_kernels() {
        let mut b = TraceBuilder::new(&Needs::COLLECTIVES);
        assert_eq!(b.keep(Cat::CpuOp), Keep::Drop);
        assert_eq!(b.keep(Cat::Kernel), Keep::Full);
        let mut parse = |t: &str| Some(ArgValue::Str(t.into()));
        let linked = || {
            Some(ArgsInput {
                links: LinkIds {
                    correlation: Some(1),
                    ..LinkIds::default()
                },
                op: [Some("[1]"), None, None, None],
                collective: [
                    None,
                    None,
                    Some("allreduce"),
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                ],
                ..ArgsInput::default()
            })
        };
        let mut keep = |b: &mut TraceBuilder, mut ev: EventInput<'static>, args| {
            ev.args = args;
            b.push_event(0, ev, &mut parse).unwrap()
        };
        assert!(!keep(
            &mut b,
            event(Cat::Kernel, "gemm", 1.0, Some(1.0)),
            linked()
        ));
        assert!(!keep(
            &mut b,
            event(Cat::Kernel, "ncclKernel", 1.0, Some(1.0)),
            None
        ));
        assert!(!keep(
            &mut b,
            event(Cat::CpuOp, "nccl:all_reduce", 1.0, Some(1.0)),
            linked()
        ));
        let mut no_ts = event(Cat::Kernel, "ncclKernel", 1.0, Some(1.0));
        no_ts.ts = None;
        assert!(!keep(&mut b, no_ts, linked()));
        assert!(keep(
            &mut b,
            event(Cat::Kernel, "ncclKernel", 1.0, None),
            linked()
        ));
        let t = b.finish();
        assert_eq!(t.len(), 1);
        let k = EventId::new(0);
        assert_eq!((t.event(k).dur, t.event(k).dur_is_int), (0.0, true));
        assert_eq!(
            t.collective_args(k).unwrap().coll_name,
            Some(ArgValue::Str("allreduce".into()))
        );
        assert_eq!(t.op_args(k).dims, None, "op arguments are not kept");
        assert_eq!(
            t.warnings(),
            [
                "1 collective kernel(s) without \"ts\" were left out",
                "1 collective kernel(s) without \"dur\" were counted as zero-length"
            ]
        );
    }
}
