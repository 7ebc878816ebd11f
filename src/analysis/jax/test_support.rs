//! Traces built by hand for the JAX report's unit tests.

use crate::trace::builder::{EventInput, IdentRef, Time};
use crate::trace::{Cat, Needs, Phase, Profiler, Trace, TraceBuilder};

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
