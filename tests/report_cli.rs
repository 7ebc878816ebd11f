//! `tracelens report` on the hand-written traces in `testdata/`: the values of
//! the sheets (worked out by hand from `testdata/example.json`), the input
//! forms (plain, gzip, zip, gzip under a `.json` name, stdin), where outputs
//! go (default workbook beside the trace, `-o`, `--csv`, `--md`), linking
//! without flow events, and the report options.
//!
//! The trace `testdata/example.json` (UIDs are indices in `traceEvents`;
//! 0-5 are metadata):
//!
//! | UID | event | GPU work it launches |
//! |---|---|---|
//! | 10 | `aten::addmm` (GEMM) | gemm kernel `[1100, 1112)`, 12 µs |
//! | 14 | `aten::relu` (elementwise) | relu kernel `[1115, 1119.5)`, 4.5 µs |
//! | 17 | `record_param_comms` | NCCL kernel `[1162, 1182)`, 20 µs |
//! | 20 | `aten::copy_` (elementwise) | memcpy `[1160, 1163)`, 3 µs |
//! | -  | (no launch) | warm-up kernel `[990, 992)`, 2 µs, unlinked |
//!
//! All kernels run on stream 7.

mod common;

use common::{
    SHEETS, Table, assert_close, csv_text, report_csv, run, run_with_stdin, testdata, tracelens,
};
use std::path::Path;

/// Hand-worked gpu_timeline of example.json, linked events only (spec 01 §3):
/// C = [1100,1112) ∪ [1115,1119.5) = 16.5 µs; M = [1162,1182) = 20, nothing of
/// it under C; Y = [1160,1163), minus C, minus M = [1160,1162) = 2;
/// U = [1100,1112) ∪ [1115,1119.5) ∪ [1160,1182) = 12 + 4.5 + 22 = 38.5;
/// total = 1182 - 1100 = 82; idle = 82 - 38.5 = 43.5.
const EXAMPLE_TIMELINE_US: [(&str, f64); 8] = [
    ("computation_time", 16.5),
    ("exposed_comm_time", 20.0),
    ("exposed_memcpy_time", 2.0),
    ("busy_time", 38.5),
    ("idle_time", 43.5),
    ("total_time", 82.0),
    ("total_comm_time", 20.0),
    ("total_memcpy_time", 3.0),
];

/// Checks a gpu_timeline sheet row by row: `time ms = us / 1e3` and
/// `percent = (us / total_us) * 100` (spec 01 §3.6). The µs values are exact
/// in binary, so the formulas give exact doubles.
fn assert_timeline(dir: &Path, expected: &[(&str, f64)], total_us: f64) {
    let t = Table::load(dir, "gpu_timeline");
    assert_eq!(t.header, ["type", "time ms", "percent"]);
    let types: Vec<&str> = t.column("type");
    let want: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
    assert_eq!(types, want, "gpu_timeline rows");
    for (i, (name, us)) in expected.iter().enumerate() {
        assert_eq!(t.num(i, "time ms"), us / 1e3, "{name}: time ms");
        assert_eq!(
            t.num(i, "percent"),
            us / total_us * 100.0,
            "{name}: percent"
        );
    }
}

/// The short-kernel histogram as (bin_start, bin_end, count) numbers.
fn histogram(dir: &Path) -> Vec<(f64, f64, u64)> {
    let t = Table::load(dir, "short_kernel_histogram");
    assert_eq!(t.header, ["bin_start", "bin_end", "count"]);
    (0..t.rows.len())
        .map(|i| {
            let count: u64 = t.cell(i, "count").parse().expect("count is an integer");
            (t.num(i, "bin_start"), t.num(i, "bin_end"), count)
        })
        .collect()
}

/// Count of the bin holding `v` (`start <= v < end`, or `v == end` in the last).
fn count_at(h: &[(f64, f64, u64)], v: f64) -> u64 {
    let last = h.len() - 1;
    h.iter()
        .enumerate()
        .find(|(i, (s, e, _))| *s <= v && (v < *e || (*i == last && v == *e)))
        .map(|(_, b)| b.2)
        .unwrap_or_else(|| panic!("no bin holds {v}"))
}

fn example() -> std::path::PathBuf {
    testdata("example.json")
}

#[test]
fn example_writes_all_sheets_and_counts_unlinked_events() {
    let (_tmp, csv, r) = report_csv(&example(), &[]);
    r.assert_ok();
    for s in SHEETS {
        assert!(csv.join(format!("{s}.csv")).is_file(), "missing {s}.csv");
    }
    // 5 GPU events (4 kernels + 1 memcpy); only the warm-up kernel has no launch.
    assert!(
        r.stderr.contains("1 of 5 GPU events"),
        "stderr should count the unlinked event: {}",
        r.stderr
    );
    // The trace has ac2g flows: no correlation-linking note.
    assert!(!r.stderr.contains("correlation"), "{}", r.stderr);
    // -q: nothing on stdout.
    assert_eq!(r.stdout, "");
}

#[test]
fn example_gpu_timeline_values() {
    let (_tmp, csv, r) = report_csv(&example(), &[]);
    r.assert_ok();
    assert_timeline(&csv, &EXAMPLE_TIMELINE_US, 82.0);
    // Python-repr floats: 16.5 µs -> "0.0165", total percent "100.0".
    let t = Table::load(&csv, "gpu_timeline");
    assert_eq!(t.cell(0, "time ms"), "0.0165");
    assert_eq!(t.cell(5, "time ms"), "0.082");
    assert_eq!(t.cell(5, "percent"), "100.0");
    // The identity of spec 01 §3.4: computation + exposed comm + exposed
    // memcpy + idle = total.
    let sum = t.num(0, "time ms") + t.num(1, "time ms") + t.num(2, "time ms") + t.num(4, "time ms");
    assert_close(sum, t.num(5, "time ms"), "timeline identity");
}

#[test]
fn example_ops_summary_by_category() {
    let (_tmp, csv, r) = report_csv(&example(), &[]);
    r.assert_ok();
    let t = Table::load(&csv, "ops_summary_by_category");
    assert_eq!(
        t.header,
        [
            "op category",
            "Count",
            "total_direct_kernel_time_ms",
            "Percentage (%)",
            "Cumulative Percentage (%)"
        ]
    );
    // GEMM: aten::addmm, 12 µs. elementwise: aten::relu 4.5 + aten::copy_ 3
    // (its memcpy) = 7.5 µs over 2 ops. The NCCL kernel is communication and
    // never reaches the op sheets (spec 02 §3.1), so record_param_comms is
    // absent. Sorted by time descending.
    assert_eq!(t.column("op category"), ["GEMM", "elementwise"]);
    assert_eq!(t.column("Count"), ["1", "2"]);
    assert_eq!(t.num(0, "total_direct_kernel_time_ms"), 12.0 / 1000.0);
    assert_eq!(t.num(1, "total_direct_kernel_time_ms"), 7.5 / 1000.0);
    assert_eq!(t.cell(0, "total_direct_kernel_time_ms"), "0.012");
    assert_eq!(t.cell(1, "total_direct_kernel_time_ms"), "0.0075");
    // Percentages of 19.5 µs.
    assert_close(t.num(0, "Percentage (%)"), 12.0 / 19.5 * 100.0, "GEMM %");
    assert_close(
        t.num(1, "Percentage (%)"),
        7.5 / 19.5 * 100.0,
        "elementwise %",
    );
    assert_close(
        t.num(0, "Cumulative Percentage (%)"),
        12.0 / 19.5 * 100.0,
        "cum 0",
    );
    assert_close(t.num(1, "Cumulative Percentage (%)"), 100.0, "cum 1");
}

#[test]
fn example_ops_summary_and_unique_args() {
    let (_tmp, csv, r) = report_csv(&example(), &[]);
    r.assert_ok();
    // One launcher per op: addmm 12 µs, relu 4.5, copy_ 3 (sorted descending).
    let t = Table::load(&csv, "ops_summary");
    assert_eq!(
        t.column("name"),
        ["aten::addmm", "aten::relu", "aten::copy_"]
    );
    assert_eq!(t.column("Count"), ["1", "1", "1"]);
    assert_eq!(
        t.column("Categories"),
        ["['GEMM']", "['elementwise']", "['elementwise']"]
    );
    for (i, us) in [12.0, 4.5, 3.0].into_iter().enumerate() {
        assert_eq!(t.num(i, "total_direct_kernel_time_sum"), us);
        assert_eq!(t.num(i, "total_subtree_kernel_time_sum"), us);
        assert_eq!(t.num(i, "total_direct_kernel_time_ms"), us / 1000.0);
    }
    // ex_UID is the launcher's index in traceEvents (see the table above);
    // shapes are the ops' "Input Dims" as Python tuples.
    let u = Table::load(&csv, "ops_unique_args");
    assert_eq!(
        u.column("name"),
        ["aten::addmm", "aten::relu", "aten::copy_"]
    );
    assert_eq!(u.column("ex_UID"), ["10", "14", "20"]);
    assert_eq!(
        u.cell(0, "Input Dims"),
        "((32,), (4, 16), (16, 32), (), ())"
    );
    assert_eq!(u.cell(1, "Input Dims"), "((4, 32),)");
    assert_eq!(u.cell(2, "Concrete Inputs"), "('', '', 'False')");
    assert_eq!(u.column("operation_count"), ["1", "1", "1"]);
    // The metadata events name the process and thread of the ops.
    assert_eq!(u.cell(0, "process_name"), "python3");
    assert_eq!(u.cell(0, "process_label"), "CPU");
    assert_eq!(u.cell(0, "thread_name"), "thread 100 (python3)");
}

#[test]
fn example_kernel_summary_includes_unlinked_kernel() {
    let (_tmp, csv, r) = report_csv(&example(), &[]);
    r.assert_ok();
    let t = Table::load(&csv, "kernel_summary");
    // Kernels only (the memcpy is not cat "kernel"), linked or not, one row
    // each, by duration sum descending: NCCL 20, gemm 12, relu 4.5, warm-up 2.
    assert_eq!(t.rows.len(), 4, "{t:?}");
    assert_eq!(
        t.column("Kernel name"),
        [
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)",
            "void gemm_bf16_kernel<128, 64>(Params)",
            "void at::native::vectorized_elementwise_kernel<4, relu_functor>(int, relu_functor)",
            "void warmup_kernel()",
        ]
    );
    // The warm-up kernel has no launcher: empty category and parent.
    assert_eq!(
        t.column("Parent op category"),
        ["record_param_comms", "GEMM", "elementwise", ""]
    );
    assert_eq!(
        t.column("Parent cpu_op"),
        ["record_param_comms", "aten::addmm", "aten::relu", ""]
    );
    assert_eq!(t.column("Kernel stream"), ["7", "7", "7", "7"]);
    assert_eq!(t.column("Kernel duration (µs)_count"), ["1", "1", "1", "1"]);
    // Percent of kernels time: of 20 + 12 + 4.5 + 2 = 38.5 µs.
    // Percent of total time: of the timeline's 82 µs.
    for (i, us) in [20.0, 12.0, 4.5, 2.0].into_iter().enumerate() {
        assert_eq!(t.num(i, "Kernel duration (µs)_sum"), us);
        assert_eq!(t.num(i, "Kernel duration (µs)_mean"), us);
        assert_eq!(t.num(i, "Kernel duration (µs)_min"), us);
        assert_eq!(t.num(i, "Kernel duration (µs)_max"), us);
        assert_close(
            t.num(i, "Percent of kernels time (%)"),
            us / 38.5 * 100.0,
            "percent of kernels",
        );
        assert_close(
            t.num(i, "Percent of total time (%)"),
            us / 82.0 * 100.0,
            "percent of total",
        );
    }
}

#[test]
fn example_short_kernel_sheets_default_threshold() {
    let (_tmp, csv, r) = report_csv(&example(), &[]);
    r.assert_ok();
    // Threshold 10 µs: kernels shorter are warm-up 2.0 and relu 4.5 (gemm 12
    // and NCCL 20 are not short; the memcpy is not a kernel). 100 bins over
    // [2.0, 4.5]: step 0.025; 2.0 in the first bin, 4.5 (== max) in the last.
    let h = histogram(&csv);
    assert_eq!(h.len(), 100);
    assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), 2);
    assert_eq!(h[0], (2.0, 2.0 + (4.5 - 2.0) / 100.0, 1));
    assert_eq!(h[99].1, 4.5);
    assert_eq!(h[99].2, 1);
    for (i, b) in h.iter().enumerate() {
        assert_eq!(b.0, i as f64 * ((4.5 - 2.0) / 100.0) + 2.0, "edge {i}");
    }
    // The summary groups by parent op and shapes: the warm-up kernel has no
    // parent op and is dropped; relu stays: 4.5 µs, 4.5 / 82 of the total.
    let s = Table::load(&csv, "short_kernels_summary");
    assert_eq!(s.rows.len(), 1, "{s:?}");
    assert_eq!(s.cell(0, "Parent cpu_op"), "aten::relu");
    assert_eq!(s.cell(0, "Input dims"), "((4, 32),)");
    assert_eq!(s.cell(0, "Short Kernel count"), "1");
    assert_eq!(s.num(0, "Short Kernel duration (µs) sum"), 4.5);
    assert_eq!(s.num(0, "Short Kernel duration (µs) mean"), 4.5);
    assert_close(
        s.num(0, "Short Kernel duration (µs) percent of total time"),
        4.5 / 82.0 * 100.0,
        "short percent",
    );
}

/// Writes `name` with `bytes` into a new temp dir and runs a CSV report on it.
fn csv_of_file(name: &str, bytes: &[u8]) -> std::collections::BTreeMap<String, Vec<u8>> {
    let src = tempfile::tempdir().unwrap();
    let p = src.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    let (_tmp, csv, r) = report_csv(&p, &[]);
    r.assert_ok();
    common::read_dir_bytes(&csv)
}

#[test]
fn gzip_zip_misnamed_gzip_and_stdin_give_identical_csvs() {
    let json = std::fs::read(example()).unwrap();
    let (_tmp, csv, r) = report_csv(&example(), &[]);
    r.assert_ok();
    let plain = common::read_dir_bytes(&csv);
    for s in SHEETS {
        assert!(plain.contains_key(&format!("{s}.csv")), "missing {s}.csv");
    }
    let gz = common::gzip(&json);
    assert_eq!(common::gunzip(&gz), json, "the test's own gzip round trip");

    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("example.json.gz", gz.clone()),
        // Content detection: gzip bytes under a .json name.
        ("gzipped.json", gz.clone()),
        ("example.zip", common::zip_of(&[("example.json", &json)])),
        // A zip whose first member is not a trace, then a gzipped trace.
        (
            "mixed.zip",
            common::zip_of(&[("README.txt", b"not a trace"), ("t.json.gz", &gz)]),
        ),
    ];
    for (name, bytes) in cases {
        assert!(
            csv_of_file(name, &bytes) == plain,
            "{name}: CSVs differ from the plain .json run"
        );
    }

    // stdin
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("csv");
    let r = run_with_stdin(
        tracelens()
            .current_dir(tmp.path())
            .args(["report", "-", "-q", "--csv"])
            .arg(&out),
        &json,
    );
    r.assert_ok();
    assert!(common::read_dir_bytes(&out) == plain, "stdin: CSVs differ");
    assert_eq!(common::entries(tmp.path()), ["csv"]);
}

#[test]
fn default_output_is_workbook_beside_the_trace() {
    let json = std::fs::read(example()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let trace = dir.path().join("x.pt.trace.json.gz");
    std::fs::write(&trace, common::gzip(&json)).unwrap();
    let r = run(tracelens()
        .current_dir(cwd.path())
        .arg("report")
        .arg(&trace)
        .arg("-q"));
    r.assert_ok();
    // Everything from the last ".json" is dropped (spec 01 §5.3).
    assert_eq!(
        common::entries(dir.path()),
        ["x.pt.trace.json.gz", "x.pt.trace_perf_report.xlsx"]
    );
    assert!(common::entries(cwd.path()).is_empty(), "wrote into the cwd");
    let xlsx = dir.path().join("x.pt.trace_perf_report.xlsx");
    assert!(std::fs::read(&xlsx).unwrap().starts_with(b"PK"));
    // Sheets in the reference's order (others may sit between them).
    let names = common::xlsx_sheet_names(&xlsx);
    let pos: Vec<usize> = SHEETS
        .iter()
        .map(|s| {
            names
                .iter()
                .position(|n| n == s)
                .unwrap_or_else(|| panic!("workbook lacks {s}: {names:?}"))
        })
        .collect();
    assert!(
        pos.windows(2).all(|w| w[0] < w[1]),
        "sheet order: {names:?}"
    );

    // A plain .json name, given relative to the cwd.
    let dir2 = tempfile::tempdir().unwrap();
    std::fs::write(dir2.path().join("example.json"), &json).unwrap();
    run(tracelens()
        .current_dir(dir2.path())
        .args(["report", "example.json", "-q"]))
    .assert_ok();
    assert_eq!(
        common::entries(dir2.path()),
        ["example.json", "example_perf_report.xlsx"]
    );
}

#[test]
fn csv_alone_writes_no_workbook() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("example.json");
    std::fs::copy(example(), &trace).unwrap();
    let r =
        run(tracelens()
            .current_dir(dir.path())
            .args(["report", "example.json", "--csv", "out"]));
    r.assert_ok();
    // Not quiet: the summary names what was written.
    assert!(r.stdout.contains("wrote out"), "{}", r.stdout);
    let files = common::files_under(dir.path());
    assert!(
        files
            .iter()
            .all(|f| f.extension().is_none_or(|e| e != "xlsx")),
        "an .xlsx was written: {files:?}"
    );
    assert_eq!(common::entries(dir.path()), ["example.json", "out"]);
}

#[test]
fn output_and_csv_write_both() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(dir.path())
        .arg("report")
        .arg(example())
        .args(["-o", "f.xlsx", "--csv", "d", "-q"]));
    r.assert_ok();
    assert_eq!(common::entries(dir.path()), ["d", "f.xlsx"]);
    assert!(
        std::fs::read(dir.path().join("f.xlsx"))
            .unwrap()
            .starts_with(b"PK")
    );
    for s in SHEETS {
        assert!(
            dir.path().join("d").join(format!("{s}.csv")).is_file(),
            "{s}"
        );
    }
}

/// Checks the Markdown summary of example.json.
fn assert_example_markdown(md: &str) {
    assert!(
        md.contains("example.json"),
        "title should name the trace:\n{md}"
    );
    // The timeline rows in words, with 3 significant digits and 0.1%
    // shares (EXAMPLE_TIMELINE_US of 82 µs).
    for row in [
        "| compute | 0.0165 | 20.1% |",
        "| exposed communication | 0.0200 | 24.4% |",
        "| exposed memcpy | 0.00200 | 2.4% |",
        "| busy | 0.0385 | 47.0% |",
        "| idle | 0.0435 | 53.0% |",
        "| total | 0.0820 | 100.0% |",
        "| all communication | 0.0200 | 24.4% |",
        "| all memcpy | 0.00300 | 3.7% |",
    ] {
        assert!(md.contains(&format!("\n{row}\n")), "no {row}:\n{md}");
    }
    let row = |cat: &str| {
        md.lines()
            .find(|l| l.starts_with(&format!("| {cat} |")))
            .unwrap_or_else(|| panic!("no category row {cat}:\n{md}"))
            .to_string()
    };
    assert!(row("GEMM").contains("| 1 |"), "GEMM has 1 op");
    assert!(
        row("elementwise").contains("| 2 |"),
        "elementwise has 2 ops"
    );
    assert!(
        !md.contains("record_param_comms"),
        "NCCL is not an op category"
    );
    assert!(
        md.contains("1 of 5 GPU events"),
        "no trace-quality note:\n{md}"
    );
}

#[test]
fn markdown_to_file() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(dir.path())
        .arg("report")
        .arg(example())
        .args(["--csv", "csv", "--md", "summary.md", "-q"]));
    r.assert_ok();
    assert_eq!(common::entries(dir.path()), ["csv", "summary.md"]);
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert_example_markdown(&md);
}

#[test]
fn markdown_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(dir.path())
        .arg("report")
        .arg(example())
        .args(["--csv", "csv", "--md", "-"]));
    r.assert_ok();
    assert_example_markdown(&r.stdout);
    // stdout carries only the Markdown; the summary moves to stderr.
    assert!(!r.stdout.contains("wrote"), "{}", r.stdout);
    assert!(r.stderr.contains("wrote"), "{}", r.stderr);
    // No file named "-".
    assert_eq!(common::entries(dir.path()), ["csv"]);

    // Same text as --md FILE.
    let r2 = run(tracelens()
        .current_dir(dir.path())
        .arg("report")
        .arg(example())
        .args(["--csv", "csv2", "--md", "s.md", "-q"]));
    r2.assert_ok();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("s.md")).unwrap(),
        r.stdout
    );
}

#[test]
fn stdin_without_destination_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let json = std::fs::read(example()).unwrap();
    let r = run_with_stdin(
        tracelens().current_dir(dir.path()).args(["report", "-"]),
        &json,
    );
    r.assert_no_panic();
    assert_ne!(r.code, Some(0));
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("tracelens: error:"), "{}", r.stderr);
    assert!(common::entries(dir.path()).is_empty());
}

#[test]
fn no_flows_links_by_correlation_with_identical_sheets() {
    let (_t1, with_flows, r1) = report_csv(&example(), &[]);
    r1.assert_ok();
    let (_t2, no_flows, r2) = report_csv(&testdata("no_flows.json"), &[]);
    r2.assert_ok();
    // no_flows.json is example.json minus the ac2g events and the top-level
    // metadata keys; the event indices (UIDs) are the same, so every sheet
    // must be byte-identical.
    let b = common::read_dir_bytes(&no_flows);
    for s in SHEETS {
        assert!(b.contains_key(&format!("{s}.csv")), "missing {s}.csv");
    }
    assert_same_sheets(&with_flows, &no_flows, "example.json and no_flows.json");
    // No graph launch links anything there, so everything is linked by
    // correlation (the reference would refuse the trace).
    assert!(
        r2.stderr
            .contains("launches were linked to GPU work by their correlation id"),
        "stderr should say it linked by correlation: {}",
        r2.stderr
    );
}

/// The order of an event's members does not matter, nor a `"cat"` among
/// its arguments: example.json with every event's keys sorted (`args`
/// before `cat`, `ph` last) and `"cat": "python_function"` first in every
/// `args` gives byte-identical sheets. (The loader reads the category from
/// the raw bytes to stub python events; it once took the first `"cat"`
/// key it found, wherever it was.)
#[test]
fn member_order_and_an_args_cat_change_nothing() {
    let text = std::fs::read_to_string(example()).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = doc["traceEvents"].as_array_mut().unwrap();
    let mut moved = 0;
    for ev in events.iter_mut() {
        let ev = ev.as_object_mut().unwrap();
        if let Some(serde_json::Value::Object(args)) = ev.get_mut("args") {
            args.insert("cat".into(), "python_function".into());
            moved += 1;
        }
    }
    assert!(moved > 5, "{moved} events with args");
    // serde_json's maps keep keys sorted: the text puts `args` first.
    let reordered = serde_json::to_string_pretty(&doc).unwrap();
    assert!(reordered.find("\"args\"").unwrap() < reordered.find("\"cat\": \"cpu_op\"").unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("reordered.json");
    std::fs::write(&trace, reordered).unwrap();
    let (_t1, original, r1) = report_csv(&example(), &[]);
    r1.assert_ok();
    let (_t2, other, r2) = report_csv(&trace, &[]);
    r2.assert_ok();
    assert_same_sheets(&original, &other, "example.json and its reordered copy");
}

/// The two CSV folders hold the same sheets, byte for byte (`what`: the
/// two traces, for messages).
fn assert_same_sheets(a: &Path, b: &Path, what: &str) {
    let a = common::read_dir_bytes(a);
    let b = common::read_dir_bytes(b);
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "same sheets"
    );
    for (name, bytes) in &a {
        assert!(&b[name] == bytes, "{name} differs between {what}");
    }
}

/// `testdata/graph_noflows.json` has no flow events: an eager `aten::relu`
/// whose `hipLaunchKernel` (correlation 1) launches `relu_kernel`
/// `[1100, 1150)`, and a top-level `hipGraphLaunch` (correlation 50) whose
/// graph replays three kernels `[1300, 1400)`, `[1400, 1600)`, `[1600, 1650)`.
/// As in the reference, only the graph launch is linked (by correlation); the
/// eager kernel stays unlinked, so the op sheets and the timeline hold the
/// graph's 350 µs only.
#[test]
fn no_flows_links_only_graph_launches() {
    let (_tmp, csv, r) = report_csv(&testdata("graph_noflows.json"), &[]);
    r.assert_ok();
    let ops = Table::load(&csv, "ops_summary");
    assert_eq!(ops.column("name"), ["hipGraphLaunch"]);
    assert_eq!(ops.num(0, "total_direct_kernel_time_sum"), 350.0);
    // busy = total = [1300, 1650) = 350 µs.
    let t = Table::load(&csv, "gpu_timeline");
    assert_eq!(t.num(3, "time ms"), 0.35);
    assert_eq!(t.cell(3, "type"), "busy_time");
    // The eager kernel is still in kernel_summary, without a parent.
    let k = Table::load(&csv, "kernel_summary");
    let relu = k
        .column("Kernel name")
        .iter()
        .position(|n| *n == "relu_kernel");
    let relu = relu.expect("relu_kernel in kernel_summary");
    assert_eq!(k.cell(relu, "Parent op category"), "");
    assert!(
        r.stderr.contains("only graph launches were linked"),
        "stderr should say only graph launches were linked: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("1 of 4 GPU events"),
        "stderr: {}",
        r.stderr
    );
    assert!(
        !r.stderr
            .contains("linked to GPU work by their correlation id")
    );
}

/// `testdata/graph_flows.json` is graph_noflows.json with an `ac2g` pair for
/// the eager launch: both are linked. Graph work: union of `[1300, 1650)` =
/// 350 µs; busy = 50 (relu) + 350 = 400 µs, so the graph holds 87.5%.
#[test]
fn graph_launches_say_how_much_they_hide() {
    let (_tmp, csv, r) = report_csv(&testdata("graph_flows.json"), &["--md", "summary.md"]);
    r.assert_ok();
    let note = "1 graph launch (`hipGraphLaunch`) launched 3 GPU events: 0.350 ms = 87.5% of GPU busy time";
    assert!(r.stderr.contains(note), "stderr: {}", r.stderr);
    assert!(
        r.stderr.contains("rerun with `--capture-dir DIR`"),
        "stderr: {}",
        r.stderr
    );
    assert_eq!(
        r.stderr_lines().len(),
        1,
        "only the graph note: {}",
        r.stderr
    );
    // The note is in the summary page too, and in no sheet.
    let md = std::fs::read_to_string(csv.parent().unwrap().join("summary.md")).unwrap();
    assert!(md.contains(note), "summary.md: {md}");
    let ops = Table::load(&csv, "ops_summary");
    assert_eq!(ops.column("name"), ["hipGraphLaunch", "aten::relu"]);

    // Without flows the eager kernel [1100, 1150) is unlinked: 50 µs of GPU
    // time left out; the graph is then 350 of 350 µs busy.
    let (_t2, _csv2, r2) = report_csv(&testdata("graph_noflows.json"), &[]);
    r2.assert_ok();
    assert!(
        r2.stderr
            .contains("launched 3 GPU events: 0.350 ms = 100.0% of GPU busy time"),
        "stderr: {}",
        r2.stderr
    );
    let unlinked = "1 of 4 GPU events (0.050 ms of GPU time) have no host launch";
    assert!(r2.stderr.contains(unlinked), "stderr: {}", r2.stderr);
    assert!(
        r2.stderr.contains("left out of gpu_timeline and the op sheets; `--include-unlinked-kernels` counts them in gpu_timeline"),
        "stderr: {}",
        r2.stderr
    );

    // With --include-unlinked-kernels the timeline's busy time is 400 µs.
    let (_t3, _csv3, r3) = report_csv(
        &testdata("graph_noflows.json"),
        &["--include-unlinked-kernels"],
    );
    r3.assert_ok();
    assert!(
        r3.stderr.contains("0.350 ms = 87.5%"),
        "stderr: {}",
        r3.stderr
    );
    assert!(r3.stderr.contains(unlinked), "stderr: {}", r3.stderr);
    assert!(
        r3.stderr
            .contains("counts them in gpu_timeline; they stay out of the op sheets"),
        "stderr: {}",
        r3.stderr
    );
}

/// example.json's unlinked warm-up kernel `[990, 992)` overlaps nothing: the
/// warning says 2 µs of GPU time are left out.
#[test]
fn unlinked_warning_says_how_much_gpu_time() {
    let (_tmp, _csv, r) = report_csv(&example(), &[]);
    r.assert_ok();
    assert!(
        r.stderr
            .contains("1 of 5 GPU events (0.002 ms of GPU time) have no host launch"),
        "stderr: {}",
        r.stderr
    );
    assert!(!r.stderr.contains("graph launch"), "stderr: {}", r.stderr);
}

#[test]
fn micro_idle_threshold_splits_idle_time() {
    let (_tmp, csv, r) = report_csv(&example(), &["--micro-idle-thresh-us", "30"]);
    r.assert_ok();
    // Idle gaps of U: 1112 -> 1115 = 3 µs (< 30: micro), 1119.5 -> 1160 =
    // 40.5 µs (>= 30: macro). They replace idle_time in place.
    let expected = [
        ("computation_time", 16.5),
        ("exposed_comm_time", 20.0),
        ("exposed_memcpy_time", 2.0),
        ("busy_time", 38.5),
        ("micro_idle_time", 3.0),
        ("macro_idle_time", 40.5),
        ("total_time", 82.0),
        ("total_comm_time", 20.0),
        ("total_memcpy_time", 3.0),
    ];
    assert_timeline(&csv, &expected, 82.0);
}

#[test]
fn include_unlinked_kernels_adds_the_warmup_kernel() {
    let (_tmp, csv, r) = report_csv(&example(), &["--include-unlinked-kernels"]);
    r.assert_ok();
    // The warm-up kernel [990, 992) joins computation: C = 16.5 + 2 = 18.5;
    // U = 38.5 + 2 = 40.5; total = 1182 - 990 = 192; idle = 192 - 40.5 = 151.5.
    let expected = [
        ("computation_time", 18.5),
        ("exposed_comm_time", 20.0),
        ("exposed_memcpy_time", 2.0),
        ("busy_time", 40.5),
        ("idle_time", 151.5),
        ("total_time", 192.0),
        ("total_comm_time", 20.0),
        ("total_memcpy_time", 3.0),
    ];
    assert_timeline(&csv, &expected, 192.0);
}

#[test]
fn short_kernel_threshold_5() {
    let (_tmp, csv, r) = report_csv(&example(), &["--short-kernel-threshold-us", "5"]);
    r.assert_ok();
    // < 5 µs: relu 4.5 and warm-up 2.0 (the 3 µs memcpy is not a kernel).
    let h = histogram(&csv);
    assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), 2);
    assert_eq!(count_at(&h, 2.0), 1);
    assert_eq!(count_at(&h, 4.5), 1);
    assert_eq!(
        (h[0].0, h[h.len() - 1].1),
        (2.0, 4.5),
        "range is [min, max]"
    );
    let s = Table::load(&csv, "short_kernels_summary");
    assert_eq!(s.column("Parent cpu_op"), ["aten::relu"]);
}

#[test]
fn short_kernel_threshold_13_and_topk() {
    // < 13 µs: warm-up 2.0, relu 4.5, gemm 12.0. Histogram over [2, 12].
    let (_tmp, csv, r) = report_csv(&example(), &["--short-kernel-threshold-us", "13"]);
    r.assert_ok();
    let h = histogram(&csv);
    assert_eq!(h.len(), 100);
    assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), 3);
    assert_eq!((h[0].0, h[99].1), (2.0, 12.0));
    assert_eq!((h[0].2, count_at(&h, 4.5), h[99].2), (1, 1, 1));
    // Summary: addmm 12 before relu 4.5 (sum descending); warm-up dropped.
    let s = Table::load(&csv, "short_kernels_summary");
    assert_eq!(s.column("Parent cpu_op"), ["aten::addmm", "aten::relu"]);
    assert_close(
        s.num(0, "Short Kernel duration (µs) percent of total time"),
        12.0 / 82.0 * 100.0,
        "addmm percent",
    );

    let (_tmp, csv, r) = report_csv(
        &example(),
        &[
            "--short-kernel-threshold-us",
            "13",
            "--topk-short-kernels",
            "1",
        ],
    );
    r.assert_ok();
    let s = Table::load(&csv, "short_kernels_summary");
    assert_eq!(s.column("Parent cpu_op"), ["aten::addmm"]);
}

#[test]
fn short_kernels_all_without_parent_op_and_none_at_all() {
    // < 3 µs: only the unlinked warm-up kernel (2.0). One value: the range
    // widens to [1.5, 2.5] (spec 01 §4.4). It has no parent op, so every row
    // of the summary is dropped and the reference's raw pandas header is all
    // that remains (spec 01 §4.5).
    let (_tmp, csv, r) = report_csv(&example(), &["--short-kernel-threshold-us", "3"]);
    r.assert_ok();
    let h = histogram(&csv);
    assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), 1);
    assert_eq!((h[0].0, h[h.len() - 1].1), (1.5, 2.5));
    assert_eq!(count_at(&h, 2.0), 1);
    assert_eq!(
        csv_text(&csv, "short_kernels_summary"),
        "Kernel duration (µs),Kernel duration (µs),Kernel duration (µs)\nsum,count,mean\n"
    );

    // < 2 µs: none (the comparison is strict): the histogram is its header.
    let (_tmp, csv, r) = report_csv(&example(), &["--short-kernel-threshold-us", "2"]);
    r.assert_ok();
    assert_eq!(
        csv_text(&csv, "short_kernel_histogram"),
        "bin_start,bin_end,count\n"
    );
}

#[test]
fn histogram_bins_option() {
    let (_tmp, csv, r) = report_csv(&example(), &["--short-kernel-histogram-bins", "4"]);
    r.assert_ok();
    // [2.0, 4.5] in 4 bins of 0.625 (exact in binary).
    assert_eq!(
        csv_text(&csv, "short_kernel_histogram"),
        "bin_start,bin_end,count\n2.0,2.625,1\n2.625,3.25,0\n3.25,3.875,0\n3.875,4.5,1\n"
    );
}

#[test]
fn topk_short_kernels_zero_leaves_only_the_header() {
    let (_tmp, csv, r) = report_csv(&example(), &["--topk-short-kernels", "0"]);
    r.assert_ok();
    // Columns of spec 01 §4.5: the group keys, then the four metrics.
    assert_eq!(
        csv_text(&csv, "short_kernels_summary"),
        "Parent cpu_op,Input dims,Input strides,Concrete Inputs,Kernel name,\
         Short Kernel duration (µs) sum,Short Kernel count,\
         Short Kernel duration (µs) mean,\
         Short Kernel duration (µs) percent of total time\n"
    );
}
