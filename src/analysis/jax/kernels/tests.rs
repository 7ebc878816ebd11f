//! The kernel list scanned in pieces against one scan, on a small trace
//! built here: kernels on two GPUs and one host process, launches before
//! and after their kernels, a correlation id launched twice (the last
//! launch counts), an unlinked kernel, and ops without a record in the
//! module (warned once each, in the order the kernels show them).

use super::*;
use crate::analysis::jax::hlo_records::{array_shape as arr, instruction as inst};
use crate::analysis::jax::test_support::{BF16, XlaEvent, cublas_call, jit_g, xla_trace};
use crate::trace::builder::IdentRef;
use crate::trace::xla::HloModule;

/// `jit_g`: a fusion and a cuBLAS call.
fn module() -> HloModule {
    jit_g(vec![
        inst(1, "p0", "parameter", arr(BF16, &[4, 8]), &[]),
        inst(2, "fusion", "fusion", arr(BF16, &[4, 8]), &[1]),
        cublas_call(3, &[1, 1]),
        inst(4, "out", "tuple", arr(BF16, &[4, 8]), &[2, 3]),
    ])
}

/// (pid, name, correlation, hlo_op): pid 701 is the host, 3 a process
/// that is no GPU.
const EVENTS: [(i64, &str, Option<i64>, Option<&str>); 16] = [
    (701, "launch", Some(1), None),
    (1, "fusion_kernel", Some(1), Some("fusion")),
    (1, "k_missing_a", Some(2), Some("missing.a")),
    (701, "launch", Some(2), None),
    (2, "fusion_kernel", Some(3), Some("fusion")),
    (701, "launch", Some(3), None),
    (1, "k_missing_b", Some(4), Some("missing.b")),
    (701, "launch", Some(4), None),
    (1, "unlinked", None, None),
    (3, "not_on_a_gpu", Some(5), Some("fusion")),
    (2, "k_missing_a", Some(6), Some("missing.a")),
    (701, "launch", Some(6), None),
    (701, "launch again", Some(1), None),
    (1, "nvjet_gemm", Some(7), Some("custom-call.1")),
    (701, "launch", Some(7), None),
    (2, "fusion_kernel", Some(8), Some("fusion")),
];

fn trace() -> Trace {
    let processes = [
        (1, "t /device:GPU:0"),
        (2, "t /device:GPU:1"),
        (3, "t /device:TPU:0"),
        (701, "t /host:CPU"),
    ];
    let events: Vec<XlaEvent> = EVENTS
        .iter()
        .enumerate()
        .map(|(i, &(pid, name, correlation, hlo_op))| XlaEvent {
            pid,
            tid: IdentRef::Int(7),
            name,
            ts: 10.0 * i as f64,
            dur: 2.0,
            dur_is_int: true,
            correlation,
            hlo_op,
        })
        .collect();
    xla_trace(&processes, module(), &events)
}

/// A kernel as plain values: event, category, launch and record.
type Seen = (usize, &'static str, Option<usize>, Option<(usize, String)>);

fn seen(jt: &JaxTrace) -> Vec<Seen> {
    jt.kernels
        .iter()
        .map(|k| {
            let record = k.record.map(|r| jt.records[r.0 as usize].clone());
            (
                k.id.index(),
                k.category,
                k.parent.map(EventId::index),
                record,
            )
        })
        .collect()
}

#[test]
fn pieces_give_the_one_scan_list() {
    let trace = trace();
    let whole = JaxTrace::in_pieces(&trace, EVENTS.len());
    let record = |key: &str| Some((0, key.to_string()));
    let want: Vec<Seen> = vec![
        (1, "Uncategorized Events/XLA", Some(12), record("%fusion")),
        (2, "Uncategorized Events/XLA", Some(3), None),
        (4, "Uncategorized Events/XLA", Some(5), record("%fusion")),
        (6, "Uncategorized Events/XLA", Some(7), None),
        (8, "Uncategorized Events/XLA", None, None),
        (10, "Uncategorized Events/XLA", Some(11), None),
        (13, "GEMM", Some(14), record("%custom-call.1")),
        (15, "Uncategorized Events/XLA", None, None),
    ];
    assert_eq!(seen(&whole), want);
    assert_eq!(
        whole.warnings,
        [
            "no HLO record of missing.a in module jit_g: its kernels have no shapes",
            "no HLO record of missing.b in module jit_g: its kernels have no shapes",
        ]
    );
    assert_eq!(count_kernels(&trace), want.len());
    for size in 1..EVENTS.len() {
        let pieced = JaxTrace::in_pieces(&trace, size);
        assert_eq!(seen(&pieced), want, "pieces of {size}");
        assert_eq!(pieced.warnings, whole.warnings, "pieces of {size}");
    }
}
