//! The JAX report on a small hand-built trace: two GPUs, a host thread
//! with the launches, one XLA module (compiled twice) running a cuDNN
//! convolution. Every expected value is worked out by hand from the
//! events below and spec 05 §1.5–1.9.

use tracelens::analysis::ReportOptions;
use tracelens::analysis::jax::hlo_records::{
    ModuleRecords, array_shape as arr, instruction as inst, tuple_shape,
};
use tracelens::analysis::jax::run_report;
use tracelens::table::{Table, Value, find};
use tracelens::trace::args::LinkIds;
use tracelens::trace::builder::{ArgsInput, EventInput, IdentRef, Time};
use tracelens::trace::xla::{HloComputation, HloModule, XlaData, XlaEventStats};
use tracelens::trace::{Cat, EventId, Needs, Phase, Profiler, Trace, TraceBuilder};

const BF16: i32 = 16;
const U8: i32 = 6;

/// `jit_f` as program 3: transposes feeding a cuDNN convolution.
fn conv_module() -> HloModule {
    let mut conv = inst(
        6,
        "cudnn-conv.1",
        "custom-call",
        tuple_shape(vec![arr(BF16, &[1, 5120, 34, 31, 53]), arr(U8, &[7150336])]),
        &[5, 4],
    );
    conv.custom_call_target = Some("__cudnn$convForward".into());
    conv.backend_config =
        Some(r#"{"cudnn_conv_backend_config":{"activation_mode":"kNone"}}"#.into());
    HloModule {
        name: "jit_f".into(),
        program_id: 3,
        entry_computation: "main".into(),
        computations: vec![HloComputation {
            name: "main".into(),
            instructions: vec![
                inst(
                    1,
                    "param",
                    "parameter",
                    arr(BF16, &[1, 32, 60, 104, 16]),
                    &[],
                ),
                inst(
                    2,
                    "param.1",
                    "parameter",
                    arr(BF16, &[1, 2, 2, 16, 5120]),
                    &[],
                ),
                inst(
                    3,
                    "loop_transpose_fusion",
                    "fusion",
                    arr(BF16, &[5120, 16, 4]),
                    &[2],
                ),
                inst(
                    4,
                    "bitcast.14.0",
                    "bitcast",
                    arr(BF16, &[5120, 16, 1, 2, 2]),
                    &[3],
                ),
                inst(
                    5,
                    "bitcast.12.0",
                    "bitcast",
                    arr(BF16, &[1, 16, 32, 60, 104]),
                    &[1],
                ),
                conv,
                inst(
                    7,
                    "gte",
                    "get-tuple-element",
                    arr(BF16, &[1, 5120, 34, 31, 53]),
                    &[6],
                ),
            ],
            root_id: 7,
        }],
    }
}

/// `jit_f` as program 5, listed first: another shape, which the kernels
/// (that ran program 3) must not show.
fn other_program() -> HloModule {
    let mut m = conv_module();
    m.program_id = 5;
    m.computations[0].instructions[1].shape = arr(BF16, &[8]);
    m
}

/// One event: (pid, tid, name, ts, dur, category, correlation, hlo_op).
type Ev = (
    i64,
    i64,
    &'static str,
    f64,
    f64,
    Cat,
    Option<i64>,
    Option<&'static str>,
);

const EVENTS: [Ev; 11] = [
    (
        1,
        15,
        "loop_transpose_fusion.kd",
        100.0,
        4.0,
        Cat::Kernel,
        Some(10),
        Some("loop_transpose_fusion"),
    ),
    (
        1,
        15,
        "Im3d2Col.kd",
        110.0,
        16.5,
        Cat::Kernel,
        Some(11),
        Some("cudnn-conv.1"),
    ),
    (
        1,
        15,
        "Cijk_Ailk_Bljk_BBS_BH_MT256x128x64.kd",
        130.0,
        300.25,
        Cat::Kernel,
        Some(12),
        Some("cudnn-conv.1"),
    ),
    (1, 15, "MemcpyDtoD", 500.0, 10.0, Cat::GpuMemcpy, None, None),
    (1, 15, "Im3d2Col.kd", 600.0, 15.5, Cat::Kernel, None, None),
    (
        1,
        3735928564,
        "cudnn-conv.1",
        110.0,
        320.25,
        Cat::Other,
        None,
        None,
    ),
    (
        2,
        15,
        "loop_transpose_fusion.kd",
        1000.0,
        5.0,
        Cat::Kernel,
        Some(20),
        Some("loop_transpose_fusion"),
    ),
    (
        701,
        100,
        "hipModuleLaunchKernel",
        90.0,
        5.0,
        Cat::Other,
        Some(10),
        Some("loop_transpose_fusion"),
    ),
    (
        701,
        100,
        "hipModuleLaunchKernel",
        95.0,
        2.0,
        Cat::Other,
        Some(11),
        Some("cudnn-conv.1"),
    ),
    (
        701,
        100,
        "hipExtModuleLaunchKernel",
        97.0,
        2.0,
        Cat::Other,
        Some(12),
        Some("cudnn-conv.1"),
    ),
    (
        701,
        100,
        "hipModuleLaunchKernel",
        990.0,
        5.0,
        Cat::Other,
        Some(20),
        Some("loop_transpose_fusion"),
    ),
];

fn time(v: f64) -> Time {
    Time {
        value: v,
        is_int: v.fract() == 0.0,
    }
}

fn trace() -> Trace {
    let mut b = TraceBuilder::new(&Needs::ALL);
    let meta = [
        ("process_name", 1, 0, "t /device:GPU:0"),
        ("process_name", 2, 0, "t /device:GPU:1"),
        ("process_name", 701, 0, "t /host:CPU"),
        ("thread_name", 1, 15, "Stream #15(Kernel)"),
        ("thread_name", 2, 15, "Stream #15(Kernel)"),
        ("thread_name", 1, 3735928564, "XLA Ops"),
        ("thread_name", 701, 100, "Host Threads/100"),
    ];
    for (what, pid, tid, name) in meta {
        b.set_meta_of(what, IdentRef::Int(pid), IdentRef::Int(tid), name.into());
    }
    let mut stats = XlaData {
        modules: vec![other_program(), conv_module()],
        ..Default::default()
    };
    for (i, &(pid, tid, name, ts, dur, cat, corr, op)) in EVENTS.iter().enumerate() {
        let args = corr.map(|c| ArgsInput {
            links: LinkIds {
                correlation: Some(c),
                ..Default::default()
            },
            ..Default::default()
        });
        let ev = EventInput {
            cat,
            ph: Phase::Complete,
            name: Some(name),
            pid: IdentRef::Int(pid),
            tid: IdentRef::Int(tid),
            ts: Some(time(ts)),
            dur: Some(time(dur)),
            flow_id: None,
            args,
        };
        b.push_event(i, ev, &mut |_| None).unwrap();
        if let Some(op) = op {
            stats.event_stats.insert(
                EventId::new(i),
                XlaEventStats {
                    hlo_module: Some("jit_f".into()),
                    hlo_op: Some(op.into()),
                    program_id: Some(3),
                    ..Default::default()
                },
            );
        }
    }
    b.set_xla(stats);
    b.info_mut().profiler = Profiler::Jax;
    b.finish()
}

fn sheets() -> Vec<Table> {
    run_report(&trace(), &ReportOptions::default()).sheets
}

fn sheet<'a>(sheets: &'a [Table], name: &str) -> &'a Table {
    find(sheets, name).unwrap_or_else(|| panic!("no sheet {name}"))
}

fn cells(t: &Table, col: &str) -> Vec<Value> {
    t.column(col)
        .unwrap_or_else(|| panic!("no column {col}"))
        .values
        .clone()
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

fn py(s: &str) -> Value {
    Value::Py(s.into())
}

fn close(v: &Value, want: f64) -> bool {
    let x = v.as_f64().unwrap();
    (x - want).abs() <= 1e-9 * want.abs().max(1.0)
}

#[test]
fn sheets_in_order() {
    let names: Vec<String> = sheets().iter().map(|t| t.name.clone()).collect();
    assert_eq!(
        names,
        [
            "gpu_timeline",
            "gpu_events_averages",
            "kernel_launchers",
            "kernel_launchers_summary",
            "kernel_launchers_summary_by_category",
            "kernel_launchers_unique_args",
            "df_xla_perf",
            "xla_summary",
            "op_conv"
        ]
    );
}

#[test]
fn kernel_launchers_link_categorise_and_read_shapes() {
    let s = sheets();
    let k = sheet(&s, "kernel_launchers");
    // The copy is no kernel, the XLA Ops row and the launches are host side.
    assert_eq!(cells(k, "UID"), [0, 1, 2, 4, 6].map(Value::Int));
    assert_eq!(
        cells(k, "op category"),
        [
            "Uncategorized Events/XLA",
            "Conv",
            "Conv",
            "Uncategorized Events/XLA",
            "Uncategorized Events/XLA"
        ]
        .map(text)
    );
    // Shapes from program 3, not 5; the unlinked kernel has none.
    let conv_dims = "((1, 16, 32, 60, 104), (5120, 16, 1, 2, 2))";
    assert_eq!(
        cells(k, "Input Dims"),
        [
            "((1, 2, 2, 16, 5120),)",
            conv_dims,
            conv_dims,
            "()",
            "((1, 2, 2, 16, 5120),)"
        ]
        .map(py)
    );
    assert_eq!(cells(k, "Input type")[1], py("('bf16', 'bf16')"));
    assert_eq!(cells(k, "Concrete Inputs")[1], py("()"));
    // Kernel start minus its launch's start.
    let lat = cells(k, "GPU_kernel_launch_latency");
    for (v, want) in lat.iter().zip([10.0, 15.0, 33.0, f64::NAN, 10.0]) {
        assert!(
            if want.is_nan() {
                v.is_missing()
            } else {
                close(v, want)
            },
            "{v:?}"
        );
    }
    assert_eq!(cells(k, "pid"), [1, 1, 1, 1, 2].map(Value::Int));
    assert_eq!(
        cells(k, "kernel_details")[0],
        py(
            "[{'name': 'loop_transpose_fusion.kd', 'dur': 4, 'custom_call_target': 'NA', 'operands': ['bf16[1,2,2,16,5120]{4,3,2,1,0}'], 'outputs': 'NA', 'metadata': 'NA'}]"
        )
    );
    assert_eq!(
        cells(k, "kernel_details")[2],
        py(
            "[{'name': 'Cijk_Ailk_Bljk_BBS_BH_MT256x128x64.kd', 'dur': 300.25, 'custom_call_target': 'custom_call_target=\"__cudnn$convForward\"', 'operands': ['bf16[1,16,32,60,104]{4,3,2,1,0}', 'bf16[5120,16,1,2,2]{4,3,2,1,0}'], 'outputs': 'NA', 'metadata': 'NA'}]"
        )
    );
}

#[test]
fn timeline_per_gpu_and_mean() {
    let s = sheets();
    let t = sheet(&s, "gpu_timeline");
    // GPU 1: computation [100,104] [110,126.5] [130,430.25] [600,615.5]
    // = 336.25 µs; the copy 10 µs; span 100..615.5. GPU 2: 5 µs.
    let ms: Vec<f64> = cells(t, "time ms")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let want1 = [0.33625, 0.0, 0.01, 0.34625, 0.16925, 0.5155, 0.0, 0.01];
    let want2 = [0.005, 0.0, 0.0, 0.005, 0.0, 0.005, 0.0, 0.0];
    for (x, w) in ms.iter().zip(want1.iter().chain(&want2)) {
        assert!((x - w).abs() < 1e-12, "{x} vs {w}");
    }
    assert_eq!(
        cells(t, "gpu_pid"),
        [[1; 8], [2; 8]]
            .concat()
            .into_iter()
            .map(Value::Int)
            .collect::<Vec<_>>()
    );
    let avg = sheet(&s, "gpu_events_averages");
    let ms: Vec<f64> = cells(avg, "time ms")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let want = [
        0.170625, 0.0, 0.005, 0.175625, 0.084625, 0.26025, 0.0, 0.005,
    ];
    for (x, w) in ms.iter().zip(want) {
        assert!((x - w).abs() < 1e-12, "{x} vs {w}");
    }
    assert!(close(&cells(avg, "percent")[0], 170.625 / 260.25 * 100.0));
}

#[test]
fn summaries_divide_by_the_gpus() {
    let s = sheets();
    let c = sheet(&s, "kernel_launchers_summary_by_category");
    assert_eq!(
        cells(c, "op category"),
        ["Conv", "Uncategorized Events/XLA"].map(text)
    );
    assert_eq!(cells(c, "Count"), [2, 3].map(Value::Int));
    // Conv 16.5 + 300.25 µs; XLA 4 + 15.5 + 5 µs; two GPUs.
    assert!(close(&cells(c, "total_direct_kernel_time_ms")[0], 0.31675));
    assert!(close(&cells(c, "time ms per gpu")[1], 0.0245 / 2.0));
    assert!(close(
        &cells(c, "Percentage (%)")[0],
        0.31675 / 0.34125 * 100.0
    ));
    let n = sheet(&s, "kernel_launchers_summary");
    assert_eq!(
        cells(n, "name"),
        [
            "Cijk_Ailk_Bljk_BBS_BH_MT256x128x64.kd",
            "Im3d2Col.kd",
            "loop_transpose_fusion.kd"
        ]
        .map(text)
    );
    assert_eq!(
        cells(n, "Categories")[1],
        text("['Conv', 'Uncategorized Events/XLA']")
    );
    assert!(close(&cells(n, "time ms per gpu")[1], 0.032 / 2.0));
}

#[test]
fn unique_args_group_by_shapes() {
    let s = sheets();
    let u = sheet(&s, "kernel_launchers_unique_args");
    assert_eq!(
        cells(u, "name"),
        [
            "Cijk_Ailk_Bljk_BBS_BH_MT256x128x64.kd",
            "Im3d2Col.kd",
            "Im3d2Col.kd",
            "loop_transpose_fusion.kd"
        ]
        .map(text)
    );
    assert_eq!(cells(u, "operation_count"), [1, 1, 1, 2].map(Value::Int));
    assert_eq!(cells(u, "ex_UID"), [2, 1, 4, 0].map(Value::Int));
    // Durations 4 and 5 were written as integers: numpy int64 sums.
    assert_eq!(
        cells(u, "kernel_details_summary")[3],
        py(
            "[{'name': 'loop_transpose_fusion.kd', 'custom_call_target': 'NA', 'operands': ['bf16[1,2,2,16,5120]{4,3,2,1,0}'], 'outputs': 'NA', 'metadata': 'NA', 'count': 2, 'total_duration_us': np.int64(9), 'mean_duration_us': np.float64(4.5), 'median_duration_us': np.float64(4.5), 'std_dev_duration_us': np.float64(0.5), 'min_duration_us': np.int64(4), 'max_duration_us': np.int64(5)}]"
        )
    );
    // pandas' sample std of 4 and 5.
    assert!(close(
        &cells(u, "total_direct_kernel_time_std")[3],
        0.5f64.sqrt()
    ));
}

#[test]
fn xla_sheets() {
    let s = sheets();
    let x = sheet(&s, "df_xla_perf");
    assert_eq!(cells(x, "UID"), [0, 4, 6].map(Value::Int));
    // 1·2·2·16·5120 bf16 elements; the unlinked kernel has no operands.
    assert_eq!(
        cells(x, "total_input_bytes"),
        [655360, 0, 655360].map(Value::Int)
    );
    let sum = sheet(&s, "xla_summary");
    assert_eq!(
        cells(sum, "name"),
        ["ImdCol.kd", "loop_transpose_fusion.kd"].map(text)
    );
    assert_eq!(cells(sum, "Count"), [1, 2].map(Value::Int));
}

#[test]
fn op_conv_models_the_convolution() {
    let s = sheets();
    let c = sheet(&s, "op_conv");
    assert_eq!(
        cells(c, "name"),
        ["Cijk_Ailk_Bljk_BBS_BH_MT256x128x64.kd", "Im3d2Col.kd"].map(text)
    );
    assert_eq!(cells(c, "param: convNd"), ["conv3d"; 2].map(text));
    assert_eq!(cells(c, "param: filter_shape"), ["(1, 2, 2)"; 2].map(text));
    assert_eq!(cells(c, "param: bias"), ["False"; 2].map(text));
    // Spec 05 §1.9: 2 288 107 520 FLOPs, 578 416 648 bytes.
    assert!(close(&cells(c, "GFLOPS_first")[0], 2.28810752));
    assert!(close(
        &cells(c, "Data Moved (MB)_first")[0],
        578416648.0 / 1048576.0
    ));
    assert!(close(
        &cells(c, "TFLOPS/s_mean")[0],
        2.28810752 / 1e3 / (300.25 / 1e6)
    ));
    assert_eq!(cells(c, "UID_first"), [2, 1].map(Value::Int));
    assert_eq!(cells(c, "process_name_first"), ["Unknown"; 2].map(text));
    assert_eq!(
        cells(c, "thread_name_first"),
        ["Stream #15(Kernel)"; 2].map(text)
    );
}

/// The records the reference reads off the module's text (its records for
/// `jit_forward_3d_conv` in `jax_conv_minimal_08`, abridged).
#[test]
fn conv_module_records() {
    let r = ModuleRecords::build(&conv_module());
    let conv = r.get("%cudnn-conv.1").expect("conv record");
    assert_eq!(
        conv.output,
        "(bf16[1,5120,34,31,53]{4,3,2,1,0},u8[7150336]{0})"
    );
    assert_eq!(
        conv.operands,
        [
            "bf16[1,16,32,60,104]{4,3,2,1,0}",
            "bf16[5120,16,1,2,2]{4,3,2,1,0}"
        ]
    );
    assert_eq!(
        conv.custom_call_target.as_deref(),
        Some(r#"custom_call_target="__cudnn$convForward""#)
    );
    assert_eq!(
        conv.backend_config.as_deref(),
        Some(r#"backend_config={"cudnn_conv_backend_config":{"activation_mode":"kNone"}}"#)
    );
    assert!(!conv.gemm);
    assert_eq!(
        r.get("%loop_transpose_fusion").unwrap().operands,
        ["bf16[1,2,2,16,5120]{4,3,2,1,0}"]
    );
    // The root (a get-tuple-element) has no record; nor has a line whose
    // only type is u8.
    assert!(r.get("%gte").is_none());
    assert!(r.get("%workspace").is_none());
    assert!(r.get("%bitcast.12.0").is_some());
    assert!(r.warnings.is_empty());
}

/// The terminal lines and the Markdown page of the JAX report: the mean
/// timeline over both GPUs, the kernel categories, no host-launch claim.
#[test]
fn summary_shows_the_mean_timeline_and_kernel_categories() {
    use tracelens::report::view::summary;
    use tracelens::report::{markdown, text};
    let r = run_report(&trace(), &ReportOptions::default());
    let term = text::page_text(&summary::terminal(&r));
    let lines: Vec<&str> = term.lines().collect();
    // The mean of the two GPUs (timeline_per_gpu_and_mean), of 0.26025 ms:
    // busy 0.175625 (67.48%), idle 0.084625 (32.52%), compute 0.170625
    // (65.56%), exposed memcpy 0.005 ms (1.92%).
    assert_eq!(
        lines[0],
        "GPU time 0.260 ms (mean of 2 GPUs): busy 0.176 ms (67.5%), idle 0.085 ms (32.5%); compute 65.6%, exposed comm 0.0%, exposed memcpy 1.9%"
    );
    assert_eq!(
        lines[1],
        "Top kernel categories by GPU kernel time, all GPUs (count, ms, %):"
    );
    // Conv 16.5 + 300.25 µs and XLA 4 + 15.5 + 5 µs of 341.25 µs
    // (summaries_divide_by_the_gpus): 92.82% and 7.18%.
    assert_eq!(
        lines[2],
        "  Conv                                2      0.317 ms   92.8%"
    );
    let xla: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(
        [xla[0], xla[1], xla[2], xla[4], xla[5]],
        ["Uncategorized", "Events/XLA", "3", "ms", "7.2%"]
    );
    // 0.0245 ms, printed with three decimals.
    assert!((xla[3].parse::<f64>().unwrap() - 0.0245).abs() <= 0.0005 + 1e-12);
    // The health verdict closes it: a copy and a kernel of GPU 0 have no
    // host launch (a warning, no failed check to list).
    assert_eq!(lines[4], "Trace health: warn");
    assert_eq!(lines.len(), 5);

    let md = markdown::page_text(&summary::page(&r, "t.xplane.pb"));
    for want in [
        "\n### GPU timeline (mean of 2 GPUs)\n",
        "\n| busy | 0.176 | 67.5% |\n",
        "\n| idle | 0.0846 | 32.5% |\n",
        "\n| exposed memcpy | 0.00500 | 1.9% |\n",
        "\nOne timeline per GPU in the `gpu_timeline` sheet.\n",
        "\n### Top kernel categories (GPU kernel time, all GPUs)\n",
        "\n| Uncategorized Events/XLA | 3 | 0.0245 | 7.2% |\n",
        "\nKernel time summed over all GPUs",
        // The Im3d2Col kernel at 600 µs has no launch.
        "\n- 1 of 5 kernels have no host launch in the trace",
    ] {
        assert!(md.contains(want), "{want:?} in {md}");
    }
    // 0.31675 ms to three significant digits; 316.75 / 341.25 = 92.8205 %.
    let conv = md.lines().find(|l| l.starts_with("| Conv |")).unwrap();
    assert!(
        conv.starts_with("| Conv | 2 | 0.31") && conv.ends_with(" | 92.8% |"),
        "{conv}"
    );
    assert!(!md.contains("All GPU events are linked"), "{md}");
}

#[test]
fn health_checks_read_the_kernels_launches_and_records() {
    let mut r = run_report(&trace(), &ReportOptions::default());
    let d = &r.diagnosis;
    let status = |id: &str| {
        let c = d.checks.iter().find(|c| c.id == id).unwrap();
        (c.status.as_str(), c.summary.clone())
    };
    // Six GPU events: MemcpyDtoD (10 µs) and the second Im3d2Col
    // (15.5 µs) carry no correlation, so no launch: 25.5 of the 351.25 µs
    // busy (7.26%).
    let (s, text) = status("health.unlinked_kernels");
    assert_eq!(s, "warn");
    assert!(
        text.starts_with(
            "2 of 6 GPU events have no host launch in the trace: 0.025 ms (7.26% of GPU busy time)"
        ),
        "{text}"
    );
    // Every launch (90, 95, 97, 990 µs) precedes its kernel.
    assert_eq!(status("health.clock_skew").0, "pass");
    assert_eq!(status("health.overlapping_kernels").0, "pass");
    // Four of the five kernels name an HLO op with a record; the copy is
    // no kernel.
    let (s, text) = status("health.no_shapes");
    assert_eq!(
        (s, text.as_str()),
        ("pass", "4 of 5 kernels have the shapes of their op")
    );
    for id in [
        "health.dropped_kernels",
        "health.graph_hidden",
        "health.truncated",
        "health.uneven_steps",
    ] {
        assert_eq!(status(id).0, "cannot_tell", "{id}");
    }
    // No communication: no finding; the host-tree rules say why not.
    assert!(d.findings.is_empty());
    let reasons: Vec<&str> = d.abstained.iter().map(|a| a.id).collect();
    assert!(reasons.contains(&"idle.host_bound") && reasons.contains(&"op.dominant"));
    assert!(!reasons.contains(&"comm.exposed"));
    r.push_diagnosis_sheets();
    assert!(r.sheets.iter().any(|t| t.name == "health"));
    assert!(r.sheets.iter().any(|t| t.name == "findings"));
}
