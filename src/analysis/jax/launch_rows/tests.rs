//! The deferred `kernel_launchers` and `df_xla_perf` against the held
//! ones, on a small trace built here: kernels of one HLO instruction
//! launched on two GPUs (a signature shared by several rows), durations
//! written as ints and as floats, an unlinked kernel, a string tid and an
//! operand of a dtype `total_input_bytes` cannot size.

use super::*;
use crate::analysis::ReportOptions;
use crate::analysis::jax::hlo_records::{array_shape as arr, instruction as inst};
use crate::analysis::jax::run_report;
use crate::analysis::jax::test_support::{BF16, XlaEvent, cublas_call, jit_g, xla_trace};
use crate::names::sheet;
use crate::table::find;
use crate::trace::builder::IdentRef;
use crate::trace::xla::HloModule;

const F64: i32 = 12;

/// `jit_g`: a fusion of a bf16 and an f64 parameter, and a cuBLAS call.
fn module() -> HloModule {
    jit_g(vec![
        inst(1, "p0", "parameter", arr(BF16, &[4, 8]), &[]),
        inst(2, "p1", "parameter", arr(F64, &[2]), &[]),
        inst(3, "fusion", "fusion", arr(BF16, &[4, 8]), &[1, 2]),
        cublas_call(4, &[1, 1]),
        inst(5, "out", "tuple", arr(BF16, &[4, 8]), &[3, 4]),
    ])
}

/// One event: (pid, tid, name, ts, dur, dur written as an int,
/// correlation, hlo_op).
type Ev<'a> = (
    i64,
    IdentRef<'a>,
    &'a str,
    f64,
    f64,
    bool,
    Option<i64>,
    Option<&'a str>,
);

/// The trace of [`events`] on two GPUs and a host, with [`module`].
fn trace() -> Trace {
    let processes = [
        (1, "t /device:GPU:0"),
        (2, "t /device:GPU:1"),
        (701, "t /host:CPU"),
    ];
    xla_trace(&processes, module(), &events())
}

/// The kernels, then their launches on the host.
fn events() -> Vec<XlaEvent<'static>> {
    let (gpu, s, host) = (IdentRef::Int(15), IdentRef::Str("s"), IdentRef::Int(100));
    let (int, float) = (true, false);
    let (fusion, gemm) = (Some("fusion"), Some("custom-call.1"));
    let table: [Ev; 9] = [
        (1, gpu, "fusion_kernel", 100.0, 4.0, int, Some(10), fusion),
        (1, gpu, "nvjet_gemm", 110.0, 2.5, float, Some(11), gemm),
        (2, s, "fusion_kernel", 100.0, 5.0, int, Some(20), fusion),
        (1, gpu, "fusion_kernel", 200.0, 4.0, float, Some(30), fusion),
        (1, gpu, "it's unlinked", 300.0, 1.25, float, None, None),
        (701, host, "launch", 90.0, 2.0, int, Some(10), None),
        (701, host, "launch", 95.0, 2.0, int, Some(11), None),
        (701, host, "launch", 97.5, 2.0, int, Some(20), None),
        (701, host, "launch", 190.0, 2.0, int, Some(30), None),
    ];
    table
        .into_iter()
        .map(
            |(pid, tid, name, ts, dur, dur_is_int, correlation, hlo_op)| XlaEvent {
                pid,
                tid,
                name,
                ts,
                dur,
                dur_is_int,
                correlation,
                hlo_op,
            },
        )
        .collect()
}

#[test]
fn deferred_sheets_materialize_to_the_held_ones() {
    let trace = trace();
    let held = run_report(&trace, &ReportOptions::default());
    let opts = ReportOptions {
        deferred_sheets: true,
        ..Default::default()
    };
    let deferred = run_report(&trace, &opts);
    assert_eq!(held.quality.warnings, deferred.quality.warnings);
    assert!(
        held.quality.warnings.iter().any(
            |w| w == "df_xla_perf: operands of unknown size left out of total_input_bytes: f64"
        ),
        "{:?}",
        held.quality.warnings
    );
    let names = |r: &crate::analysis::Report| -> Vec<String> {
        r.sheets.iter().map(|t| t.name.clone()).collect()
    };
    assert_eq!(names(&held), names(&deferred));
    for (h, d) in held.sheets.iter().zip(&deferred.sheets) {
        let rows_per_kernel = [sheet::KERNEL_LAUNCHERS, sheet::DF_XLA_PERF].contains(&&*h.name);
        assert_eq!(d.is_deferred(), rows_per_kernel, "{}", h.name);
        assert!(!h.is_deferred(), "{}", h.name);
        assert_eq!(*d.held(), *h, "{}", h.name);
    }
}

#[test]
fn held_rows_spell_each_launch() {
    let r = run_report(&trace(), &ReportOptions::default());
    let k = find(&r.sheets, sheet::KERNEL_LAUNCHERS).unwrap();
    let column = |t: &Table, c: &str| t.column(c).unwrap().values.clone();
    assert_eq!(column(k, col::UID), [0, 1, 2, 3, 4].map(Value::Int));
    assert_eq!(
        column(k, col::TID),
        [
            Value::Int(15),
            Value::Int(15),
            Value::from("s"),
            Value::Int(15),
            Value::Int(15)
        ]
    );
    let latency = column(k, col::GPU_KERNEL_LAUNCH_LATENCY);
    assert_eq!(latency[..4], [10.0, 15.0, 2.5, 10.0].map(Value::Float));
    assert!(latency[4].is_missing());
    let fusion = "'custom_call_target': 'NA', 'operands': ['bf16[4,8]{1,0}', 'f64[2]{0}'], \
                  'outputs': 'NA', 'metadata': 'NA'}]";
    let details = column(k, col::KERNEL_DETAILS);
    let want = [
        format!("[{{'name': 'fusion_kernel', 'dur': 4, {fusion}"),
        "[{'name': 'nvjet_gemm', 'dur': 2.5, 'custom_call_target': \
         'custom_call_target=\"__cublas$lt$matmul\"', 'operands': ['bf16[4,8]{1,0}', \
         'bf16[4,8]{1,0}'], 'outputs': 'NA', 'metadata': 'NA'}]"
            .to_string(),
        format!("[{{'name': 'fusion_kernel', 'dur': 5, {fusion}"),
        // The same kernel, its duration written as a float.
        format!("[{{'name': 'fusion_kernel', 'dur': 4.0, {fusion}"),
        "[{'name': \"it's unlinked\", 'dur': 1.25, 'custom_call_target': 'NA', \
         'operands': 'NA', 'outputs': 'NA', 'metadata': 'NA'}]"
            .to_string(),
    ];
    assert_eq!(details, want.map(|t| Value::Py(t.into())));
    // The XLA kernels: the bf16 operand counted, the f64 one not.
    let x = find(&r.sheets, sheet::DF_XLA_PERF).unwrap();
    assert_eq!(column(x, col::UID), [0, 2, 3, 4].map(Value::Int));
    assert_eq!(
        column(x, col::TOTAL_INPUT_BYTES),
        [64, 64, 64, 0].map(Value::Int)
    );
}

#[test]
fn a_launch_is_small() {
    // What a row costs deferred, against some 650 bytes held.
    assert_eq!(std::mem::size_of::<Launch>(), 32);
}
