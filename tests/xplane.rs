//! The XPlane (JAX) decoder: a small profile built here with the decoder's
//! own protobuf messages (also checked in as
//! `testdata/xplane/small.xplane.pb`), bad inputs through the command line,
//! and the two corpus profiles (skipped when `../shared/corpus` is absent).
//!
//! The expected event list of the small profile was worked out by hand from
//! xprof's rules and confirmed by running xprof 2.20.1's trace viewer
//! (`xspace_to_tool_data([file], "trace_viewer@^", {})`) on the checked-in
//! file: same events, order, pids, tids, times and correlation ids.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{run, testdata, tracelens};
use prost::Message;
use prost::bytes::Bytes;
use tracelens::load::xplane::proto::{
    HloComputationProto, HloInstructionProto, HloModuleProto, HloProto, LayoutProto, OpMetadata,
    ProgramShapeProto, RawLine, RawPlane, RawSpace, ShapeProto, XEvent, XEventData, XEventMetadata,
    XStat, XStatMetadata, XStatValue,
};
use tracelens::trace::xla::XlaEventStats;
use tracelens::trace::{Cat, EventId, Ident, Needs, Profiler, Trace};

const SMALL: &str = "xplane/small.xplane.pb";

fn stat(id: i64, v: XStatValue) -> XStat {
    XStat {
        metadata_id: id,
        value: Some(v),
    }
}

fn s(id: i64, v: &str) -> XStat {
    stat(id, XStatValue::Str(v.into()))
}

fn i(id: i64, v: i64) -> XStat {
    stat(id, XStatValue::Int64(v))
}

fn event(meta: i64, offset_ps: i64, duration_ps: i64, stats: Vec<XStat>) -> XEvent {
    XEvent {
        metadata_id: meta,
        data: Some(XEventData::OffsetPs(offset_ps)),
        duration_ps,
        stats,
    }
}

/// An encoded line with its events.
fn line(id: i64, name: &str, timestamp_ns: i64, events: Vec<XEvent>) -> Bytes {
    let line = RawLine {
        id,
        name: name.into(),
        timestamp_ns,
        events: events.iter().map(|e| e.encode_to_vec().into()).collect(),
        ..RawLine::default()
    };
    line.encode_to_vec().into()
}

fn plane(id: i64, name: &str, events: &[(i64, &str)], stats: &[(i64, &str)]) -> RawPlane {
    RawPlane {
        id,
        name: name.into(),
        event_metadata: events
            .iter()
            .map(|&(id, n)| {
                let m = XEventMetadata {
                    id,
                    name: n.into(),
                    ..XEventMetadata::default()
                };
                (id, m)
            })
            .collect(),
        stat_metadata: stats
            .iter()
            .map(|&(id, n)| {
                let m = XStatMetadata { id, name: n.into() };
                (id, m)
            })
            .collect(),
        ..RawPlane::default()
    }
}

fn shape(element_type: i32, dims: &[i64]) -> ShapeProto {
    ShapeProto {
        element_type,
        dimensions: dims.to_vec(),
        layout: Some(LayoutProto {
            minor_to_major: (0..dims.len() as i64).rev().collect(),
        }),
        is_dynamic_dimension: vec![false; dims.len()],
        ..ShapeProto::default()
    }
}

fn gemm_shape() -> ShapeProto {
    ShapeProto {
        element_type: 13,
        tuple_shapes: vec![shape(16, &[4, 4]), shape(6, &[16])],
        ..ShapeProto::default()
    }
}

fn metadata(op_name: &str, line: i32) -> Option<OpMetadata> {
    Some(OpMetadata {
        op_type: String::new(),
        op_name: op_name.into(),
        source_file: "/src/model.py".into(),
        source_line: line,
    })
}

/// Program 3 (`jit_f`): a parameter, a convert and a GEMM custom call (a
/// module XLA accepts, so that xprof resolves its ops).
fn hlo_module() -> HloProto {
    let param = HloInstructionProto {
        name: "p0".into(),
        opcode: "parameter".into(),
        shape: Some(shape(11, &[4, 8])),
        id: 1,
        ..HloInstructionProto::default()
    };
    let convert = HloInstructionProto {
        name: "convert.1".into(),
        opcode: "convert".into(),
        shape: Some(shape(16, &[4, 8])),
        metadata: metadata("jit(f)/jvp()/dot_general", 12),
        id: 2,
        operand_ids: vec![1],
        ..HloInstructionProto::default()
    };
    let gemm = HloInstructionProto {
        name: "gemm.2".into(),
        opcode: "custom-call".into(),
        shape: Some(gemm_shape()),
        metadata: metadata("jit(g)/mul", 14),
        custom_call_target: "__cublas$gemm".into(),
        id: 3,
        operand_ids: vec![2, 2],
        backend_config: br#"{"gemm_backend_config":{"beta":0}}"#.to_vec(),
    };
    let program = ProgramShapeProto {
        parameters: vec![shape(11, &[4, 8])],
        result: Some(gemm_shape()),
        parameter_names: vec!["p0".into()],
    };
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: "jit_f".into(),
            entry_computation_name: "main".into(),
            computations: vec![HloComputationProto {
                name: "main".into(),
                instructions: vec![param, convert, gemm],
                program_shape: Some(program.clone()),
                id: 1,
                root_id: 3,
            }],
            host_program_shape: Some(program),
            id: 3,
            entry_computation_id: 1,
        }),
    }
}

/// The host plane: a `py_xla_execute` thread (64-bit id) with a PjRt call,
/// two launches and a memory allocation (dropped), and a thread-pool thread
/// with one region.
fn host_plane() -> RawPlane {
    let mut p = plane(
        0,
        "/host:CPU",
        &[
            (1, "hipModuleLaunchKernel"),
            (2, "MemoryAllocation"),
            (3, "PjitFunction"),
            (4, "ThreadpoolListener::StartRegion"),
            (5, "ThreadpoolListener::StopRegion"),
        ],
        &[(1, "correlation_id"), (2, "_c"), (3, "device_id")],
    );
    let launches = vec![
        event(3, 500_000, 10_000_000, vec![]),
        event(1, 1_000_000, 2_000, vec![i(1, 7), i(3, 0)]),
        event(2, 1_200_000, 100, vec![]),
        event(1, 5_000_000, 1_500, vec![stat(1, XStatValue::Uint64(8))]),
    ];
    let pool = vec![
        event(4, 0, 100_000, vec![i(2, 99)]),
        event(5, 3_000_000, 50_000, vec![]),
    ];
    p.lines = vec![
        line(-630, "py_xla_execute/-630", 1_000, launches),
        line(5, "tf_pjrt_thread_pool/5", 1_000, pool),
    ];
    p
}

/// GPU 0 with two kernels on stream 15; stat 7 is the target of a reference
/// value (`hlo_op` of the first kernel).
fn gpu_plane() -> RawPlane {
    let mut p = plane(
        0,
        "/device:GPU:0",
        &[(1, "convert_kernel.kd"), (2, "Cijk_gemm")],
        &[
            (1, "correlation_id"),
            (2, "hlo_op"),
            (3, "hlo_module"),
            (4, "program_id"),
            (5, "kernel_details"),
            (6, "name"),
            (7, "convert.1"),
        ],
    );
    let kernels = vec![
        event(
            1,
            3_000_000,
            4_000_000,
            vec![
                i(1, 7),
                stat(2, XStatValue::Ref(7)),
                s(3, "jit_f"),
                i(4, 3),
                s(5, "grid:1,1,1 block:64,1,1"),
                s(6, "jit(f)/jvp()/dot_general"),
            ],
        ),
        event(
            2,
            8_000_000,
            0,
            vec![
                i(1, 8),
                s(2, "gemm.2"),
                s(3, "jit_f"),
                i(4, 3),
                s(5, "grid:2,1,1 block:256,1,1"),
            ],
        ),
    ];
    p.lines = vec![line(15, "Stream #15(Kernel)", 2_000, kernels)];
    p
}

fn metadata_plane() -> RawPlane {
    let mut p = plane(99, "/host:metadata", &[], &[(1, "Hlo Proto")]);
    let m = XEventMetadata {
        id: 3,
        name: "jit_f(3)".into(),
        stats: vec![stat(
            1,
            XStatValue::Bytes(hlo_module().encode_to_vec().into()),
        )],
        ..XEventMetadata::default()
    };
    p.event_metadata.insert(3, m);
    p
}

fn small_space() -> RawSpace {
    RawSpace {
        planes: vec![host_plane(), gpu_plane(), metadata_plane()],
    }
}

fn load(path: &Path) -> Trace {
    tracelens::load::load(path, &Needs::ALL).unwrap()
}

fn int(t: &Trace, id: tracelens::trace::IdentId) -> i64 {
    match t.ident(id) {
        Ident::Int(v) => *v,
        other => panic!("not an integer id: {other:?}"),
    }
}

/// (pid, tid, name, ts µs, dur µs, correlation) of every event.
type Row = (i64, i64, String, f64, f64, Option<i64>);

fn rows(t: &Trace) -> Vec<Row> {
    t.ids()
        .map(|id| {
            let e = t.event(id);
            let corr = t.args(id).and_then(|a| a.correlation());
            (
                int(t, e.pid),
                int(t, e.tid),
                t.name(id).to_string(),
                e.ts,
                e.dur,
                corr,
            )
        })
        .collect()
}

#[test]
fn small_profile_file_is_the_builder_output() {
    let bytes = small_space().encode_to_vec();
    let path = testdata(SMALL);
    if std::env::var_os("TRACELENS_WRITE_TESTDATA").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    assert!(
        std::fs::read(&path).unwrap() == bytes,
        "{} is stale: rerun with TRACELENS_WRITE_TESTDATA=1",
        path.display()
    );
}

#[test]
fn small_profile_events_in_viewer_order() {
    let t = load(&testdata(SMALL));
    const SCOPE: i64 = 0xDEAD_BEF1;
    const OPS: i64 = 0xDEAD_BEF2;
    const MODULES: i64 = 0xDEAD_BEF3;
    const XLA_OPS: i64 = 0xDEAD_BEF4;
    const SOURCE: i64 = 0xDEAD_BEF6;
    // The python thread's id -630 as an unsigned 32-bit number.
    const PY: i64 = 4_294_966_666;
    let z = 1e-6; // zero-length events last 1 ps
    let r = |pid, tid, name: &str, ts, dur, corr| (pid, tid, name.to_string(), ts, dur, corr);
    let expected: Vec<Row> = vec![
        r(1, 15, "convert_kernel.kd", 5.0, 4.0, Some(7)),
        r(1, 15, "Cijk_gemm", 10.0, z, Some(8)),
        r(1, SCOPE, "jit(f)", 5.0, 4.0, None),
        // Two stacked scopes with one span: the inner one ends 1 ns early.
        r(1, SCOPE, "jvp()", 5.0, 3.999, None),
        r(1, SCOPE, "jit(g)", 10.0, z, None),
        r(1, OPS, "dot_general", 5.0, 4.0, None),
        r(1, OPS, "mul", 10.0, z, None),
        r(1, MODULES, "jit_f(3)", 5.0, 5.0, None),
        r(1, XLA_OPS, "convert.1", 5.0, 4.0, None),
        r(1, XLA_OPS, "gemm.2", 10.0, z, None),
        r(1, SOURCE, "model.py:12", 5.0, 4.0, None),
        r(1, SOURCE, "model.py:14", 10.0, z, None),
        r(701, 5, "ThreadpoolListener::Region", 1.0, 3.0, None),
        r(701, 5, "ThreadpoolListener::StartRegion", 1.0, 0.1, None),
        r(701, 5, "ThreadpoolListener::StopRegion", 4.0, 0.05, None),
        r(701, PY, "PjitFunction", 1.5, 10.0, None),
        r(701, PY, "hipModuleLaunchKernel", 2.0, 0.002, Some(7)),
        r(701, PY, "hipModuleLaunchKernel", 6.0, 0.0015, Some(8)),
    ];
    assert_eq!(rows(&t), expected);
    let cats: Vec<Cat> = t.ids().map(|id| t.event(id).cat).collect();
    let mut want = vec![Cat::Kernel, Cat::Kernel, Cat::CpuOp, Cat::CpuOp, Cat::CpuOp];
    want.extend([Cat::Other; 10]);
    want.extend([Cat::CpuOp; 3]);
    assert_eq!(cats, want);
    let e = t.event(EventId::new(0));
    assert!(
        e.ts_is_int && e.dur_is_int,
        "5 and 4 are written as integers"
    );
    assert!(!t.event(EventId::new(3)).dur_is_int, "3.999 is not");
}

#[test]
fn small_profile_metadata_and_info() {
    let t = load(&testdata(SMALL));
    let info = t.info();
    assert_eq!(info.profiler, Profiler::Jax);
    assert_eq!(info.device_count, 1);
    assert_eq!(
        info.input_bytes,
        std::fs::metadata(testdata(SMALL)).unwrap().len()
    );
    let id = |v: i64| t.int_ident(v).unwrap();
    let name = |pid, tid| t.thread_meta(id(pid), id(tid)).cloned().unwrap_or_default();
    assert_eq!(name(1, 0).process_name.as_deref(), Some("/device:GPU:0"));
    assert_eq!(name(701, 0).process_name.as_deref(), Some("/host:CPU"));
    let threads = [
        (1, 15, "Stream #15(Kernel)"),
        (1, 0xDEAD_BEF1, "Framework Name Scope"),
        (1, 0xDEAD_BEF4, "XLA Ops"),
        (1, 0xDEAD_BEF6, "Source code"),
        (701, 4_294_966_666, "py_xla_execute/-630"),
        (701, 5, "tf_pjrt_thread_pool/5"),
    ];
    for (pid, tid, want) in threads {
        assert_eq!(name(pid, tid).thread_name.as_deref(), Some(want));
    }
}

#[test]
fn small_profile_xla_stats_and_modules() {
    let t = load(&testdata(SMALL));
    let x = t.xla().expect("an XPlane trace has the XLA side table");
    assert_eq!(x.event_stats.len(), 2, "only the kernels carry XLA stats");
    assert_eq!(
        x.event_stats[&EventId::new(0)],
        XlaEventStats {
            hlo_module: Some("jit_f".into()),
            hlo_op: Some("convert.1".into()),
            program_id: Some(3),
            framework_op: Some("jit(f)/jvp()/dot_general".into()),
            kernel_details: Some("grid:1,1,1 block:64,1,1".into()),
        }
    );
    let gemm = &x.event_stats[&EventId::new(1)];
    assert_eq!(gemm.hlo_op.as_deref(), Some("gemm.2"));
    assert_eq!(gemm.framework_op, None);
    assert_eq!(x.modules.len(), 1);
    let m = &x.modules[0];
    assert_eq!(
        (m.name.as_str(), m.program_id, m.entry_computation.as_str()),
        ("jit_f", 3, "main")
    );
    let c = &m.computations[0];
    assert_eq!(
        (c.name.as_str(), c.root_id, c.instructions.len()),
        ("main", 3, 3)
    );
    let g = &c.instructions[2];
    assert_eq!(
        (g.id, g.name.as_str(), g.opcode.as_str()),
        (3, "gemm.2", "custom-call")
    );
    assert_eq!(g.operand_ids, [2, 2]);
    assert_eq!(g.custom_call_target.as_deref(), Some("__cublas$gemm"));
    assert_eq!(
        g.backend_config.as_deref(),
        Some(r#"{"gemm_backend_config":{"beta":0}}"#)
    );
    assert_eq!(g.op_name.as_deref(), Some("jit(g)/mul"));
    assert_eq!(g.op_type, None);
    assert_eq!(
        (g.source_file.as_deref(), g.source_line),
        (Some("/src/model.py"), Some(14))
    );
    assert_eq!(g.shape.element_type, 13);
    let [a, b] = &g.shape.tuple[..] else {
        panic!("a two-element tuple: {:?}", g.shape)
    };
    assert_eq!((a.element_type, &a.dims[..]), (16, &[4, 4][..]));
    assert_eq!(a.minor_to_major.as_deref(), Some(&[1, 0][..]));
    assert_eq!((b.element_type, &b.dims[..]), (6, &[16][..]));
    assert_eq!(b.minor_to_major.as_deref(), Some(&[0][..]));
    assert_eq!(c.instructions[0].op_name, None, "no metadata, no op name");
}

#[test]
fn stubs_keep_launches_and_kernels_whole() {
    let t = tracelens::load::load(&testdata(SMALL), &Needs::EVENTS).unwrap();
    assert_eq!(t.len(), 18, "stubs keep every UID");
    assert_eq!(t.name(EventId::new(8)), "", "an XLA Ops event is a stub");
    assert_eq!(t.name(EventId::new(16)), "hipModuleLaunchKernel");
    assert_eq!(t.name(EventId::new(0)), "convert_kernel.kd");
}

/// Runs `report FILE --csv OUT/csv` in an empty OUT and expects the one-line
/// refusal naming the file, with nothing written.
fn expect_refused(name: &str, bytes: &[u8], keyword: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join(name);
    std::fs::write(&trace, bytes).unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let r = run(tracelens()
        .current_dir(&out)
        .arg("report")
        .arg(&trace)
        .arg("--csv")
        .arg(out.join("csv")));
    let line = r.assert_one_error_line(&trace.display().to_string());
    assert!(line.contains(keyword), "{line}");
    assert!(common::entries(&out).is_empty(), "output left behind");
}

#[test]
fn truncated_profile_is_refused() {
    let bytes = small_space().encode_to_vec();
    expect_refused(
        "cut.xplane.pb",
        &bytes[..bytes.len() / 2],
        "not a valid XPlane protobuf",
    );
}

#[test]
fn random_bytes_after_a_planes_tag_are_refused() {
    // A fixed pseudo-random sequence after 0x0a 0x40 (field 1, 64 bytes).
    let mut x: u32 = 12345;
    let mut bytes = vec![0x0a, 0x40];
    bytes.extend((0..64).map(|_| {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        (x >> 16) as u8
    }));
    expect_refused("noise.xplane.pb", &bytes, "XPlane");
}

#[test]
fn profile_without_gpu_planes_is_refused() {
    let space = RawSpace {
        planes: vec![host_plane(), metadata_plane()],
    };
    expect_refused(
        "host_only.xplane.pb",
        &space.encode_to_vec(),
        "without GPU planes",
    );
}

#[test]
fn gzipped_profile_loads() {
    let bytes = common::gzip(&small_space().encode_to_vec());
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("small.xplane.pb.gz");
    std::fs::write(&p, bytes).unwrap();
    assert_eq!(rows(&load(&p)), rows(&load(&testdata(SMALL))));
}

fn corpus(name: &str) -> std::path::PathBuf {
    common::shared().join("corpus/jax").join(name)
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn corpus_conv08_decodes_like_xprof() {
    let t = load(&corpus("jax_conv_minimal_08.xplane.pb"));
    // xprof 2.20.1 emits 3797 complete events for this profile (spec 1.3).
    assert_eq!(t.len(), 3797);
    let pids: BTreeMap<i64, usize> = t.ids().fold(BTreeMap::new(), |mut m, id| {
        *m.entry(int(&t, t.event(id).pid)).or_default() += 1;
        m
    });
    let gpus: Vec<i64> = pids.keys().copied().filter(|&p| p < 701).collect();
    assert_eq!(gpus, (1..=8).collect::<Vec<_>>());
    assert_eq!(t.info().device_count, 8);
    let x = t.xla().unwrap();
    assert_eq!(x.modules.len(), 8, "one per compiled program");
    assert!(
        x.modules
            .iter()
            .any(|m| m.name == "jit_forward_3d_conv" && m.program_id == 15)
    );
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn corpus_te_decodes_like_xprof() {
    let t = load(&corpus("jax_te_fused_attn.xplane.pb"));
    assert_eq!(t.len(), 2175);
    // Seven more GPU planes without lines (idle devices) are not shown.
    assert_eq!(t.info().device_count, 1);
    assert_eq!(t.xla().unwrap().modules.len(), 9);
}

/// Loads `space` written to a temp file.
fn load_space(space: &RawSpace) -> Trace {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p.xplane.pb");
    std::fs::write(&p, space.encode_to_vec()).unwrap();
    load(&p)
}

#[test]
fn step_markers_are_reported() {
    // xprof 2.20.1 gives these two profiles the same events as the small
    // one (the markers are not used); a profile whose events use them may
    // be grouped into steps, which the decoder does not do, so it warns.
    for (id, marker) in [(50, "group_id"), (51, "_r")] {
        let mut space = small_space();
        let meta = XStatMetadata {
            id,
            name: marker.into(),
        };
        space.planes[1].stat_metadata.insert(id, meta);
        let t = load_space(&space);
        assert_eq!(rows(&t), rows(&load(&testdata(SMALL))), "{marker}");
        assert!(
            t.warnings().iter().any(|w| w.contains("marks steps")),
            "{marker}: {:?}",
            t.warnings()
        );
    }
}

/// (start ps, duration ps, name) of an event.
type Timed = (i64, i64, String);

/// An encoded line and the events of it xprof shows, in file order.
type LongLine = (Bytes, Vec<Timed>);

/// A host line of `n` events named `e0` … `e6` (by index), starting at
/// `start(i)` ps with duration `dur(i)` ps; every 1000th event from the
/// 500th is an asynchronous flow event (stats 10 and 11), which xprof
/// leaves out.
fn long_line(id: i64, n: i64, start: impl Fn(i64) -> i64, dur: impl Fn(i64) -> i64) -> LongLine {
    let mut shown = Vec::new();
    let events = (0..n)
        .map(|k| {
            let flow = k % 1000 == 500;
            let stats = if flow {
                vec![i(10, 1), i(11, 1)]
            } else {
                vec![]
            };
            if !flow {
                shown.push((start(k), dur(k), format!("e{}", k % 7)));
            }
            event(100 + k % 7, start(k), dur(k), stats)
        })
        .collect();
    (line(id, "python", 0, events), shown)
}

/// The small profile with the given lines added to its host plane (and
/// names `e0` … `e6` for their events).
fn with_host_lines(lines: Vec<Bytes>) -> RawSpace {
    let mut space = small_space();
    let host = &mut space.planes[0];
    for k in 0..7 {
        let m = XEventMetadata {
            id: 100 + k,
            name: format!("e{k}"),
            ..XEventMetadata::default()
        };
        host.event_metadata.insert(100 + k, m);
    }
    for (id, name) in [(10, "flow"), (11, "_a")] {
        let m = XStatMetadata {
            id,
            name: name.into(),
        };
        host.stat_metadata.insert(id, m);
    }
    host.lines.extend(lines);
    space
}

/// The events of row `tid` of the host (pid 701): (start ps, duration ps,
/// name).
fn host_row(t: &Trace, tid: i64) -> Vec<Timed> {
    rows(t)
        .into_iter()
        .filter(|r| r.0 == 701 && r.1 == tid)
        .map(|r| ((r.3 * 1e6).round() as i64, (r.4 * 1e6).round() as i64, r.2))
        .collect()
}

/// xprof's order of a row: by start, the longer event first, ties in file
/// order (a stable sort).
fn viewer_order(mut events: Vec<Timed>) -> Vec<Timed> {
    events.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    events
}

#[test]
fn long_rows_keep_the_viewer_order() {
    // Rows of many decoding pieces: in order in the file (handed on as
    // decoded), out of order (sorted first), with ties in start (the
    // longer first, else file order), and a row made of two lines.
    let n = 40_000;
    let cases: Vec<(&str, Vec<LongLine>)> = vec![
        ("in order", vec![long_line(9, n, |k| k * 10, |k| 5 + k % 3)]),
        (
            "ties",
            vec![long_line(
                9,
                n,
                |k| (k / 4) * 10,
                |k| [5, 9, 5, 2][k as usize % 4],
            )],
        ),
        (
            "one event late",
            vec![long_line(
                9,
                n,
                |k| if k == 30_000 { 5 } else { k * 10 },
                |_| 3,
            )],
        ),
        (
            "blocks reversed",
            vec![long_line(
                9,
                n,
                |k| (n - k / 1000) * 10_000 + k % 1000,
                |_| 3,
            )],
        ),
        (
            "two lines",
            vec![
                long_line(9, n / 2, |k| k * 20, |_| 3),
                long_line(9, n / 2, |k| k * 20 + 10, |_| 3),
            ],
        ),
    ];
    for (case, lines) in cases {
        let mut expected = Vec::new();
        let mut encoded = Vec::new();
        for (line, shown) in lines {
            encoded.push(line);
            expected.extend(shown);
        }
        let t = load_space(&with_host_lines(encoded));
        let got = host_row(&t, 9);
        assert_eq!(got.len(), expected.len(), "{case}");
        assert!(
            got == viewer_order(expected),
            "{case}: not in the viewer's order"
        );
        let left_out = t
            .warnings()
            .iter()
            .find(|w| w.contains("asynchronous flow"))
            .unwrap_or_else(|| panic!("{case}: {:?}", t.warnings()));
        let per_line = n / (if case == "two lines" { 2 } else { 1 }) / 1000;
        let lines = if case == "two lines" { 2 } else { 1 };
        assert!(
            left_out.starts_with(&format!("{} asynchronous", per_line * lines)),
            "{case}: {left_out}"
        );
        // The rest of the profile is as without the long row.
        let others: Vec<Row> = rows(&t)
            .into_iter()
            .filter(|r| !(r.0 == 701 && r.1 == 9))
            .collect();
        assert_eq!(others, rows(&load(&testdata(SMALL))), "{case}");
    }
}
