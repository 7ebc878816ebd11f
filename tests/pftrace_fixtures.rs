//! The small Perfetto fixtures of `testdata/pftrace/` (one per layout or
//! wire-format case; see its README): the native `.pftrace` decoding must
//! give the same slice-derived sheets as the independently made
//! traceconv-style JSON beside it, and each case shows what it is about in
//! the sheets or on stderr.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use common::{Run, Table, csv_text, report_csv, testdata};

/// Every fixture, by name.
const FIXTURES: [&str; 9] = [
    "rocm63_numeric_agents",
    "segment_sizes",
    "rocm70",
    "rocpd_convert",
    "multi_sequence",
    "interning_reset",
    "clocks",
    "counters",
    "unmatched",
];

/// The sheets derived from slices alone (health and findings also speak of
/// the input format, so they differ between the two forms).
const SHEETS: [&str; 6] = [
    "api_kernel_summary",
    "category_summary",
    "xla_top",
    "kernel_summary",
    "hip_summary",
    "memory_copy_by_copy_bytes",
];

/// One fixture's two reports: of the `.pftrace` and of its JSON.
struct Reports {
    _tmp: Vec<tempfile::TempDir>,
    native: PathBuf,
    json: PathBuf,
    native_run: Run,
    json_run: Run,
}

/// The reports of every fixture, made once for all tests.
fn reports() -> &'static BTreeMap<&'static str, Reports> {
    static ALL: OnceLock<BTreeMap<&'static str, Reports>> = OnceLock::new();
    ALL.get_or_init(|| {
        FIXTURES
            .iter()
            .map(|&name| {
                let trace = testdata(&format!("pftrace/{name}.pftrace"));
                let json = testdata(&format!("pftrace/{name}.traceconv.json"));
                let (t1, native, native_run) = report_csv(&trace, &[]);
                let (t2, json, json_run) = report_csv(&json, &[]);
                native_run.assert_ok();
                json_run.assert_ok();
                let r = Reports {
                    _tmp: vec![t1, t2],
                    native,
                    json,
                    native_run,
                    json_run,
                };
                (name, r)
            })
            .collect()
    })
}

fn get(name: &str) -> &'static Reports {
    &reports()[name]
}

fn sheet(name: &str, sheet: &str) -> Table {
    Table::load(&get(name).native, sheet)
}

/// The row of `t` whose column `col` is `value`.
fn row(t: &Table, col: &str, value: &str) -> usize {
    t.column(col)
        .iter()
        .position(|v| *v == value)
        .unwrap_or_else(|| panic!("{}: no row with {col} = {value:?}", t.name))
}

#[test]
fn native_and_json_sheets_are_identical() {
    for name in FIXTURES {
        let r = get(name);
        for s in SHEETS {
            let a = std::fs::read(r.native.join(format!("{s}.csv")))
                .unwrap_or_else(|e| panic!("{name}: native {s}.csv: {e}"));
            let b = std::fs::read(r.json.join(format!("{s}.csv")))
                .unwrap_or_else(|e| panic!("{name}: JSON {s}.csv: {e}"));
            assert!(
                a == b,
                "{name}: {s}.csv differs\n--- native\n{}\n--- JSON\n{}",
                String::from_utf8_lossy(&a),
                String::from_utf8_lossy(&b)
            );
            assert!(
                a.iter().filter(|&&c| c == b'\n').count() > 1,
                "{name}: {s} has no rows"
            );
        }
    }
}

#[test]
fn numeric_agents_name_their_gpus() {
    let r = get("rocm63_numeric_agents");
    assert_eq!(
        csv_text(&r.native, "memory_copy_by_copy_bytes"),
        "copy_bytes,direction,count\n4096,d2h (GPU 2),1\n20138,h2d (GPU 1),1\n"
    );
    // `Agent-N` strings read as no number.
    assert_eq!(
        csv_text(&get("rocm70").native, "memory_copy_by_copy_bytes"),
        "copy_bytes,direction,count\n4096,d2h (GPU ?),1\n20138,h2d (GPU ?),1\n"
    );
}

#[test]
fn old_segment_names_leave_lds_and_scratch_empty() {
    let gemm = "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0";
    let new = sheet("rocm70", "kernel_summary");
    let i = row(&new, "Name", gemm);
    assert_eq!(new.cell(i, "LDS"), "16384");
    assert_eq!(new.cell(i, "VGPR"), "128");
    assert_eq!(new.cell(i, "SGPR"), "96");
    for name in ["segment_sizes", "rocm63_numeric_agents"] {
        let t = sheet(name, "kernel_summary");
        let i = row(&t, "Name", gemm);
        for col in ["LDS", "Scratch", "VGPR", "SGPR"] {
            assert_eq!(t.cell(i, col), "0", "{name} {col}");
        }
        assert_eq!(t.cell(i, "Instances"), "2", "{name}");
        assert_eq!(t.cell(i, "Total Time"), "82.500 μs", "{name}");
    }
}

#[test]
fn rocpd_layout_keeps_real_tids_and_string_sizes_read_as_zero() {
    let t = sheet("rocpd_convert", "api_kernel_summary");
    let ext = row(&t, "API Name", "hipExtLaunchKernel");
    assert_eq!(t.cell(ext, "PID"), "4242");
    assert_eq!(t.cell(ext, "TID"), "4250");
    let d2h = row(&t, "API Name", "hipMemcpyDtoHAsync");
    assert_eq!(t.cell(d2h, "TID"), "4250");
    // The tool writer's second thread has no ThreadDescriptor: tid = pid.
    let t70 = sheet("rocm70", "api_kernel_summary");
    assert!(t70.column("TID").iter().all(|&v| v == "4242"));
    let k = sheet("rocpd_convert", "kernel_summary");
    let gemm = row(
        &k,
        "Name",
        "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0",
    );
    assert_eq!(k.cell(gemm, "GridXYZ"), "      0    1    1");
    assert_eq!(k.cell(gemm, "LDS"), "16384");
    // 1008..1050 and 1050..1090 us: not midpoint-moved like the tool's pair.
    assert_eq!(k.cell(gemm, "Total Time"), "82.000 μs");
}

#[test]
fn each_sequence_keeps_its_own_interning() {
    let t = sheet("multi_sequence", "api_kernel_summary");
    let mut pids: Vec<&str> = t.column("PID");
    pids.dedup();
    assert_eq!(pids, ["4242", "5151"]);
    for (i, api) in t.column("API Name").iter().enumerate() {
        let pid = t.cell(i, "PID");
        match *api {
            "hipLaunchKernel" => assert_eq!(pid, "4242"),
            "hipModuleLaunchKernel" => assert_eq!(pid, "5151"),
            _ => {}
        }
    }
    let h = sheet("multi_sequence", "hip_summary");
    for (name, n) in [
        ("hipLaunchKernel", "3"),
        ("hipModuleLaunchKernel", "3"),
        ("hipMalloc", "2"),
    ] {
        assert_eq!(h.cell(row(&h, "Name", name), "Instances"), n, "{name}");
    }
}

#[test]
fn a_second_clear_redefines_interned_names() {
    let r = get("interning_reset");
    let h = sheet("interning_reset", "hip_summary");
    for (name, n) in [
        ("hipLaunchKernel", "3"),
        ("hipLaunchKernel_v2", "3"),
        ("hipModuleLaunchKernel", "1"),
        ("hipMalloc", "2"),
    ] {
        assert_eq!(h.cell(row(&h, "Name", name), "Instances"), n, "{name}");
    }
    assert!(!h.column("Name").contains(&"dropped_before_cleared"));
    let k = sheet("interning_reset", "kernel_summary");
    let gemm = "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0";
    let after = format!("{gemm}_after_reset");
    assert_eq!(k.cell(row(&k, "Name", gemm), "Instances"), "2");
    assert_eq!(k.cell(row(&k, "Name", &after), "Instances"), "2");
    assert!(
        r.native_run.stderr.contains(
            "1 Perfetto packet(s) needing incremental state before their sequence set it: skipped"
        ),
        "{:?}",
        r.native_run.stderr
    );
}

#[test]
fn incremental_and_sequence_clocks_give_the_same_times() {
    let h = sheet("clocks", "hip_summary");
    let launch = row(&h, "Name", "hipLaunchKernel");
    assert_eq!(h.cell(launch, "Instances"), "9");
    assert_eq!(h.cell(launch, "Total Time"), "51.000 μs");
    let malloc = row(&h, "Name", "hipMalloc");
    assert_eq!(h.cell(malloc, "Total Time"), "120.000 μs");
    let k = sheet("clocks", "kernel_summary");
    let gemm = row(
        &k,
        "Name",
        "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0",
    );
    assert_eq!(k.cell(gemm, "Instances"), "6");
    assert_eq!(k.cell(gemm, "Total Time"), "247.500 μs");
    assert_eq!(k.cell(gemm, "Min"), "40.500 μs");
    assert_eq!(k.cell(gemm, "Max"), "42.000 μs");
    // Three copies of each launch/kernel pair, 0, 3 and 6 ms apart.
    let a = sheet("clocks", "api_kernel_summary");
    for c in a.column("Count") {
        assert!(c == "3" || c == "6", "{c}");
    }
}

#[test]
fn counter_tracks_are_dropped() {
    for s in SHEETS {
        assert_eq!(
            csv_text(&get("counters").native, s),
            csv_text(&get("rocm70").native, s),
            "{s}: the counters fixture is rocm70 plus counter tracks"
        );
    }
    for dir in [&get("counters").native, &get("counters").json] {
        for s in SHEETS {
            let text = csv_text(dir, s);
            assert!(!text.contains("COPY BYTES") && !text.contains("SCRATCH MEMORY"));
        }
    }
}

#[test]
fn unmatched_begins_and_ends_are_warned_about() {
    let r = get("unmatched");
    let path = testdata("pftrace/unmatched.pftrace").display().to_string();
    let want = [
        format!(
            "tracelens: warning: {path}: 2 Perfetto slice(s) never ended: kept with zero length"
        ),
        format!(
            "tracelens: warning: {path}: 1 Perfetto slice end(s) with no open slice on their \
             track: dropped"
        ),
    ];
    assert_eq!(r.native_run.stderr_lines(), want);
    assert!(r.json_run.stderr.is_empty(), "{:?}", r.json_run.stderr);
    // The reports read times from begin_ns/end_ns, which the unended
    // launch and kernel carry: the sheets are the complete run's.
    for s in SHEETS {
        assert_eq!(
            csv_text(&r.native, s),
            csv_text(&get("rocm70").native, s),
            "{s}"
        );
    }
    let x = sheet("unmatched", "xla_top");
    assert_eq!(x.cell(0, "Count"), "1");
    assert_eq!(x.cell(0, "Total time (ms)"), "0.006");
}
