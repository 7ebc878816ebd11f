//! JAX / XLA profiles: the XSpace protobuf (`*.xplane.pb`).
//!
//! The reference never reads the protobuf itself: it asks xprof for the
//! trace viewer's JSON and numbers its events. This decoder reads the
//! protobuf ([`proto`]), rebuilds the event list xprof would emit
//! ([`events`], with the derived rows of [`derived`]) so that event
//! indices are the reference's UIDs, and decodes the embedded HLO modules
//! ([`hlo`]) into the trace's XLA side table.
//!
//! Process names are the plane names (`/device:GPU:0`, `/host:CPU`),
//! without the `<file stem> ` prefix xprof adds: the decoder does not know
//! the file name, and no report column shows them.

pub mod derived;
pub mod events;
pub mod hlo;
pub mod proto;
pub mod stats;

use std::io::Read;
use std::time::Instant;

use prost::Message;

use super::Packing;
use crate::error::LoadError;
use crate::table::SharedTexts;
use crate::timings;
use crate::trace::builder::{ArgsInput, EventInput, IdentRef, Keep, Time, TraceBuilder};
use crate::trace::xla::{EventStats, HloModule, XlaData, XlaEventStats};
use crate::trace::{Cat, EventId, Needs, Phase, Profiler, Trace};
use events::Synth;

/// Decodes an XSpace protobuf from `reader` (already unpacked), of about
/// `size_hint` bytes when known.
pub fn decode<R: Read>(
    mut reader: R,
    packing: Packing,
    needs: &Needs,
    size_hint: Option<u64>,
) -> Result<Trace, LoadError> {
    let start = Instant::now();
    let bytes = super::read_whole(&mut reader, packing, size_hint)?;
    let input_bytes = bytes.len() as u64;

    // Lines and events stay slices of this buffer until they are decoded.
    let space = proto::RawSpace::decode(prost::bytes::Bytes::from(bytes)).map_err(syntax)?;
    timings::stage("reading the protobuf", start);
    build(&space, input_bytes, needs)
}

fn syntax(e: prost::DecodeError) -> LoadError {
    LoadError::Syntax(format!("not a valid XPlane protobuf: {e}"))
}

/// The trace of a decoded XSpace, whose buffer `decode` read.
///
/// The event list is decoded row by row, in pieces (on every core), on a
/// thread of its own, while this one builds the trace from the pieces
/// already decoded: the list is never held whole beside the trace, and
/// each line's pages go back to the system once decoded, so the buffer
/// shrinks as the trace grows.
fn build(space: &proto::RawSpace, input_bytes: u64, needs: &Needs) -> Result<Trace, LoadError> {
    let start = Instant::now();
    let mut warnings = Vec::new();
    let modules = hlo::modules(&space.planes, &mut warnings);
    timings::stage("decoding HLO modules", start);
    let plan = shown_plan(space, &modules)?;
    let gpu_planes = plan.gpu_planes;
    let (b, thread_names) = named_builder(needs, warnings, &plan);
    let mut sink = Sink {
        b,
        event_stats: EventStats::default(),
        texts: SharedTexts::default(),
        thread_names: &thread_names,
        row: 0,
        index: 0,
        kept: 0,
    };
    let synth_warnings = decode_into(plan, &mut sink)?;
    if sink.index == 0 {
        return Err(LoadError::NoEvents);
    }
    Ok(sink.finish(synth_warnings, modules, gpu_planes, input_bytes))
}

/// The plan of the rows xprof would show, its lines' pages released as
/// they are decoded; an error when no GPU plane holds events.
fn shown_plan<'a>(
    space: &'a proto::RawSpace,
    modules: &[HloModule],
) -> Result<events::Plan<'a>, LoadError> {
    let start = Instant::now();
    let plan = events::plan(space, modules).map_err(syntax)?;
    timings::stage("planning the rows", start);
    #[allow(unsafe_code)]
    // SAFETY: `space`'s buffer is the bytes `decode` read (heap memory of
    // ours), and nothing reads its lines after the plan is produced.
    let plan = unsafe { plan.releasing_lines() };
    if plan.gpu_planes == 0 {
        return Err(LoadError::NotATrace(format!(
            "an XPlane profile without GPU planes ({}N) holding events: nothing to report",
            events::GPU_PLANE_PREFIX
        )));
    }
    Ok(plan)
}

/// A row's key, (pid, tid), and its name.
type RowName = ((u32, u32), String);

/// A builder holding `warnings` and the plan's process and thread names,
/// and the rows' names in key order.
fn named_builder(
    needs: &Needs,
    warnings: Vec<String>,
    plan: &events::Plan<'_>,
) -> (TraceBuilder, Vec<RowName>) {
    let mut b = TraceBuilder::new(needs);
    for w in warnings {
        b.warn(w);
    }
    for &(pid, name) in &plan.processes {
        b.set_meta_of(
            "process_name",
            pid_ref(pid),
            IdentRef::Int(0),
            name.to_string(),
        );
    }
    let mut thread_names = Vec::with_capacity(plan.rows.len());
    for (&(pid, tid), row) in &plan.rows {
        b.set_meta_of("thread_name", pid_ref(pid), tid_ref(tid), row.name.clone());
        thread_names.push(((pid, tid), row.name.clone()));
    }
    (b, thread_names)
}

/// Decodes the plan's events on a thread of their own into `sink`;
/// returns the decoder's warnings.
fn decode_into(plan: events::Plan<'_>, sink: &mut Sink<'_>) -> Result<Vec<String>, LoadError> {
    // A window of decoded pieces waits at most: the next window decodes
    // (on every core) while the builder takes this one. With two, the
    // cores idled while the decoder handed its window over piece by piece
    // (JAX x1024: 0.1 s more wall time, 3 MiB less at the peak).
    let start = Instant::now();
    let (tx, rx) = std::sync::mpsc::sync_channel(events::PIECES_AT_ONCE);
    let (pushed, decoded) = std::thread::scope(|scope| {
        let decoder = super::spawn_loader_thread(scope, "tracelens-xplane", move || {
            plan.produce(&mut |key, piece| tx.send((key, piece)).is_ok())
        })?;
        let pushed = rx.iter().try_for_each(|(key, piece)| sink.push(key, piece));
        // A builder error stops the decoder at its next piece.
        drop(rx);
        let decoded = decoder
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        Ok::<_, LoadError>((pushed, decoded))
    })?;
    timings::stage("decoding and building events", start);
    let synth_warnings = decoded.map_err(syntax)?;
    pushed.map_err(LoadError::Invalid)?;
    Ok(synth_warnings)
}

/// The builder's side of the decoding: pushes the decoded events, in
/// order, keeping their XLA statistics.
struct Sink<'n> {
    b: TraceBuilder,
    event_stats: EventStats,
    /// Each event's XLA texts repeat on every step: one copy each.
    texts: SharedTexts,
    /// The rows' names in key order, and the row of the last piece.
    thread_names: &'n [RowName],
    row: usize,
    /// Events of the list pushed, and those the builder numbered.
    index: usize,
    kept: usize,
}

impl Sink<'_> {
    /// The finished trace: the decoder's warnings, the HLO modules and
    /// the events' XLA statistics, of a JAX profile of `gpu_planes`
    /// devices read from `input_bytes` bytes.
    fn finish(
        self,
        synth_warnings: Vec<String>,
        modules: Vec<HloModule>,
        gpu_planes: usize,
        input_bytes: u64,
    ) -> Trace {
        let Sink {
            mut b, event_stats, ..
        } = self;
        for w in synth_warnings {
            b.warn(w);
        }
        b.set_xla(XlaData {
            modules,
            event_stats,
        });
        let info = b.info_mut();
        info.profiler = Profiler::Jax;
        info.device_count = gpu_planes;
        info.input_bytes = input_bytes;
        b.finish()
    }

    /// Pushes one decoded piece of the row `(pid, tid)`.
    fn push(&mut self, (pid, tid): (u32, u32), piece: Vec<Synth<'_>>) -> Result<(), String> {
        // Pieces come in row order: the row's name is found by walking on.
        while self.thread_names[self.row].0 != (pid, tid) {
            self.row += 1;
        }
        // A piece is one row's: its kind of row is found once.
        let row = RowKind::of(&self.thread_names[self.row].1);
        let b = &mut self.b;
        let mut parse = |_: &str| None;
        for s in piece {
            let index = self.index;
            self.index += 1;
            let cat = row.category(&s.name);
            // Launches and kernels stay whole whatever their category: the
            // report links and describes them.
            if b.keep(cat) == Keep::Stub && s.correlation.is_none() && s.xla.is_none() {
                b.push_stub(cat)?;
                self.kept += 1;
                continue;
            }
            if !b.push_event(index, input(&s, pid, tid, cat), &mut parse)? {
                continue;
            }
            if let Some(x) = &s.xla {
                self.event_stats
                    .insert(EventId::new(self.kept), stats_of(x, &mut self.texts));
            }
            self.kept += 1;
        }
        Ok(())
    }
}

fn pid_ref(pid: u32) -> IdentRef<'static> {
    IdentRef::Int(i64::from(pid))
}

fn tid_ref(tid: u32) -> IdentRef<'static> {
    IdentRef::Int(i64::from(tid))
}

/// What a row's name says of its events' categories, the reference's
/// `get_event_category`: `Framework Name Scope` and `py_xla…` rows hold
/// host ops, `Stream…` rows GPU work (copies and fills by name);
/// everything else (incl. `XLA Ops`, which the reference calls `python
/// function`) has no category the reports read. Found once a row, not
/// once an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowKind {
    /// Host ops, whatever their names.
    HostOps,
    /// GPU work: kernels, copies and fills by name.
    Stream,
    /// No category the reports read.
    Other,
}

impl RowKind {
    /// The kind of the row named `thread`.
    fn of(thread: &str) -> Self {
        if thread == "Framework Name Scope" || thread.contains("py_xla") {
            Self::HostOps
        } else if thread.starts_with("Stream") {
            Self::Stream
        } else {
            Self::Other
        }
    }

    /// The category of an event named `name` on a row of this kind.
    fn category(self, name: &str) -> Cat {
        match self {
            Self::HostOps => Cat::CpuOp,
            Self::Other => Cat::Other,
            Self::Stream => {
                // The reference lower-cases the name (Unicode); for these
                // ASCII prefixes without `i` or `k`, an ASCII comparison is
                // the same.
                let starts = |p: &str| {
                    name.get(..p.len())
                        .is_some_and(|h| h.eq_ignore_ascii_case(p))
                };
                if starts("copy") || starts("memcpy") {
                    Cat::GpuMemcpy
                } else if starts("memset") {
                    Cat::GpuMemset
                } else {
                    Cat::Kernel
                }
            }
        }
    }
}

/// xprof writes times as `ps / 1e6` with `%.17g`: a whole number of
/// microseconds below 1e17 reads back as an integer.
fn time(ps: u64) -> Time {
    let value = ps as f64 / 1e6;
    Time {
        value,
        is_int: value.fract() == 0.0 && value.abs() < 1e17,
    }
}

fn input<'a>(s: &'a Synth<'_>, pid: u32, tid: u32, cat: Cat) -> EventInput<'a> {
    EventInput {
        cat,
        ph: Phase::Complete,
        name: Some(&s.name),
        pid: pid_ref(pid),
        tid: tid_ref(tid),
        ts: Some(time(s.ts_ps)),
        // A zero-length event is written with 1 ps.
        dur: Some(time(s.dur_ps.max(1))),
        flow_id: None,
        args: s.correlation.map(|c| ArgsInput {
            links: crate::trace::args::LinkIds {
                correlation: Some(c),
                ..Default::default()
            },
            ..ArgsInput::default()
        }),
    }
}

/// The trace's copy of an event's XLA statistics; their texts repeat on
/// every step, so each distinct one is kept once in `texts`.
fn stats_of(x: &events::EventXla<'_>, texts: &mut SharedTexts) -> XlaEventStats {
    let mut own = |s: &Option<std::borrow::Cow<'_, str>>| s.as_deref().map(|s| texts.share(s));
    XlaEventStats {
        hlo_module: own(&x.hlo_module),
        hlo_op: own(&x.hlo_op),
        program_id: x.program_id,
        framework_op: own(&x.framework_op),
        kernel_details: own(&x.kernel_details),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_kind_gives_its_events_categories() {
        // (row name, event name, category): the row's name decides, then
        // (on a stream) how the event's name starts.
        let cases = [
            ("Framework Name Scope", "memcpy", Cat::CpuOp),
            ("py_xla_ops", "x", Cat::CpuOp),
            ("python py_xla thread", "x", Cat::CpuOp),
            ("Stream #3(Compute)", "fusion_1", Cat::Kernel),
            ("Stream #3", "MemcpyD2D", Cat::GpuMemcpy),
            ("Stream #3", "copy-start", Cat::GpuMemcpy),
            ("Stream #3", "memset32", Cat::GpuMemset),
            ("Stream #3", "mem", Cat::Kernel),
            ("Stream #3", "a memcpy", Cat::Kernel),
            ("Stream #3", "é", Cat::Kernel),
            ("XLA Ops", "memcpy", Cat::Other),
            ("stream #3", "fusion", Cat::Other),
        ];
        for (row, name, cat) in cases {
            assert_eq!(RowKind::of(row).category(name), cat, "{row:?} {name:?}");
        }
    }
}
