//! Traces built by hand for the JAX report's unit tests.

use crate::analysis::jax::hlo_records::{array_shape, instruction};
use crate::trace::args::LinkIds;
use crate::trace::builder::{ArgsInput, EventInput, IdentRef, Time};
use crate::trace::xla::{HloComputation, HloInstruction, HloModule, XlaData, XlaEventStats};
use crate::trace::{Cat, EventId, Needs, Phase, Profiler, Trace, TraceBuilder};

/// A trace of GPU kernels (name, duration) on two GPUs, no launches.
pub fn kernel_trace(kernels: &[(&str, f64)]) -> Trace {
    let mut b = TraceBuilder::new(&Needs::ALL);
    for (pid, name) in [(1, "t /device:GPU:0"), (2, "t /device:GPU:1")] {
        let (pid, zero) = (IdentRef::Int(pid), IdentRef::Int(0));
        b.set_meta_of("process_name", pid, zero, name.into());
    }
    for (i, &(name, dur)) in kernels.iter().enumerate() {
        let time = |value: f64| {
            Some(Time {
                value,
                is_int: value.fract() == 0.0,
            })
        };
        let ev = EventInput {
            cat: Cat::Kernel,
            ph: Phase::Complete,
            name: Some(name),
            pid: IdentRef::Int(1 + (i % 2) as i64),
            tid: IdentRef::Int(7),
            ts: time(100.0 * i as f64),
            dur: time(dur),
            flow_id: None,
            args: None,
        };
        b.push_event(i, ev, &mut |_| None).unwrap();
    }
    b.info_mut().profiler = Profiler::Jax;
    b.finish()
}

/// One event of a hand-built XLA trace ([`xla_trace`]).
pub struct XlaEvent<'a> {
    /// Process: 701 is the host, whose events are launches; any other
    /// pid's events are kernels.
    pub pid: i64,
    /// Thread.
    pub tid: IdentRef<'a>,
    /// Name.
    pub name: &'a str,
    /// Start, µs (written as an int when whole).
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
    /// Whether the duration is written as an int.
    pub dur_is_int: bool,
    /// `correlation_id`.
    pub correlation: Option<i64>,
    /// `hlo_op`, an instruction of the trace's module.
    pub hlo_op: Option<&'a str>,
}

/// A JAX trace of `events` in processes `(pid, name)`, with `module` its
/// one HLO module: an event with an op carries XLA statistics naming the
/// module and its program.
pub fn xla_trace(processes: &[(i64, &str)], module: HloModule, events: &[XlaEvent]) -> Trace {
    let mut b = TraceBuilder::new(&Needs::ALL);
    for &(pid, name) in processes {
        let (pid, zero) = (IdentRef::Int(pid), IdentRef::Int(0));
        b.set_meta_of("process_name", pid, zero, name.into());
    }
    let (module_name, program) = (module.name.clone(), module.program_id);
    let mut xla = XlaData {
        modules: vec![module],
        ..Default::default()
    };
    for (i, e) in events.iter().enumerate() {
        let ev = EventInput {
            cat: if e.pid == 701 {
                Cat::Other
            } else {
                Cat::Kernel
            },
            ph: Phase::Complete,
            name: Some(e.name),
            pid: IdentRef::Int(e.pid),
            tid: e.tid,
            ts: Some(Time {
                value: e.ts,
                is_int: e.ts.fract() == 0.0,
            }),
            dur: Some(Time {
                value: e.dur,
                is_int: e.dur_is_int,
            }),
            flow_id: None,
            args: e.correlation.map(|c| ArgsInput {
                links: LinkIds {
                    correlation: Some(c),
                    ..Default::default()
                },
                ..Default::default()
            }),
        };
        b.push_event(i, ev, &mut |_| None).unwrap();
        if let Some(op) = e.hlo_op {
            xla.event_stats.insert(
                EventId::new(i),
                XlaEventStats {
                    hlo_module: Some(module_name.as_str().into()),
                    hlo_op: Some(op.into()),
                    program_id: Some(program),
                    ..Default::default()
                },
            );
        }
    }
    b.set_xla(xla);
    b.info_mut().profiler = Profiler::Jax;
    b.finish()
}

/// Module `jit_g` (program 1): one computation, `main`, of `instructions`
/// (operands first), whose last is the root.
pub fn jit_g(instructions: Vec<HloInstruction>) -> HloModule {
    let root_id = instructions.last().map_or(0, |i| i.id);
    HloModule {
        name: "jit_g".into(),
        program_id: 1,
        entry_computation: "main".into(),
        computations: vec![HloComputation {
            name: "main".into(),
            instructions,
            root_id,
        }],
    }
}

/// `custom-call.1`: a cuBLAS matmul of a bf16 [4, 4] result.
pub fn cublas_call(id: i64, operands: &[i64]) -> HloInstruction {
    let mut gemm = instruction(
        id,
        "custom-call.1",
        "custom-call",
        array_shape(BF16, &[4, 4]),
        operands,
    );
    gemm.custom_call_target = Some("__cublas$lt$matmul".into());
    gemm
}

/// XLA's element type number of bf16.
pub const BF16: i32 = 16;
