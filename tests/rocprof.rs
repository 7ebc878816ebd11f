//! rocprofv3 JSON input end to end: `tracelens report` on the hand-written
//! traces of `testdata/rocprof/`, and the inputs it must refuse.
//!
//! The expected sheets were worked out by hand from the records (comments
//! give the arithmetic); the reference (`TraceLens_generate_perf_report_rocprof
//! --short_kernel_study --kernel_details`, run on a /tmp copy of each trace)
//! writes the same bytes.

mod common;

use common::{csv_text, gzip, report_csv, run, testdata, tracelens};
use std::path::Path;

/// `kernel_summary`'s header line.
const KERNEL_SUMMARY_HEADER: &str = "name,Count,Mean Kernel Time (µs),Median Kernel Time (µs),\
    Std Kernel Time (µs),Min Kernel Time (µs),Max Kernel Time (µs),Percentage (%),\
    Cumulative Percentage (%),Total Kernel Time (ms),Category\n";

/// `short_kernels_summary`'s header line.
const SHORT_SUMMARY_HEADER: &str = "name,Short Kernel count,Short Kernel duration (µs) sum,\
    Short Kernel duration (µs) mean,Short Kernel duration (µs) percent of total time\n";

/// `small.json`: six dispatches of four kernel ids with three names
/// (ids 2 and 4 share the truncated name; id 3 has an empty truncated
/// name, so its formatted name is used). Symbols come after the records.
fn small() -> std::path::PathBuf {
    testdata("rocprof/small.json")
}

#[test]
fn small_trace_sheets() {
    let (_tmp, csv, r) = report_csv(&small(), &[]);
    r.assert_ok();
    assert_eq!(
        common::entries(&csv),
        [
            "findings.csv",
            "gpu_timeline.csv",
            "health.csv",
            "kernel_details.csv",
            "kernel_summary.csv",
            "kernel_summary_by_category.csv",
            "short_kernel_histogram.csv",
            "short_kernels_summary.csv"
        ]
    );
    // The checks the dispatches support: six GPU events; dispatch 2
    // ([1140, 1141] µs) lies inside dispatch 1 ([1100, 1150] µs) on the
    // same stream of the same agent, an overlap of 1 µs, within the
    // tolerance. The others need host calls or shapes the trace lacks.
    let health = std::fs::read_to_string(csv.join("health.csv")).unwrap();
    let status: Vec<(&str, &str)> = health
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split(',');
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    assert_eq!(
        status,
        [
            ("health.no_gpu", "pass"),
            ("health.unlinked_kernels", "cannot_tell"),
            ("health.overlapping_kernels", "pass"),
            ("health.clock_skew", "cannot_tell"),
            ("health.dropped_kernels", "cannot_tell"),
            ("health.graph_hidden", "cannot_tell"),
            ("health.no_shapes", "cannot_tell"),
            ("health.truncated", "cannot_tell"),
            ("health.uneven_steps", "cannot_tell"),
        ]
    );
    assert!(
        health.contains("health.no_gpu,pass,6 GPU events,"),
        "{health}"
    );
    let findings = std::fs::read_to_string(csv.join("findings.csv")).unwrap();
    assert!(
        findings.contains(",comm.exposed,cannot_tell,,cannot tell: the rocprofv3 report's GPU timeline does not split communication from compute,"),
        "{findings}"
    );
    // init..fini = 1 ms. Kernel intervals (µs): [1100,1150] holds [1140,1141];
    // [1200,1300] touches [1300,1301.5]; [1400,1401]; [1500,1530]:
    // 50 + 101.5 + 1 + 30 = 182.5 µs busy, 817.5 µs idle.
    assert_eq!(
        csv_text(&csv, "gpu_timeline"),
        "type,time ms,percent\n\
         total_time,1.0,100.0\n\
         kernel,0.1825,18.25\n\
         memory,0.0,0.0\n\
         busy_time,0.1825,18.25\n\
         idle,0.8175,81.75\n"
    );
    // ns in the "(µs)" columns (the reference's units). Total 183500 ns;
    // percentages summed in name order (Cijk, nccl, vectorized) before the
    // rows are sorted by total: 43.6, 43.6 + 54.5 = 98.09, 100.
    // Cijk std: sqrt(2 * 10000^2 / 1); vectorized [1000, 1500, 1000]:
    // mean 3500/3, std sqrt((2 * (500/3)^2 + (1000/3)^2) / 2) = 288.675…
    assert_eq!(
        csv_text(&csv, "kernel_summary"),
        KERNEL_SUMMARY_HEADER.to_string()
            + "ncclDevKernel_Generic_1,1,100000.0,100000.0,,100000,100000,54.495912806539515,98.09264305177112,100.0,COMM\n\
         Cijk_gemm_a,2,40000.0,40000.0,14142.13562373095,30000,50000,43.596730245231605,43.596730245231605,80.0,GEMM\n\
         vectorized_elementwise_kernel,3,1166.6666666666667,1000.0,288.6751345948129,1000,1500,1.9073569482288828,100.0,3.5,Elementwise\n"
    );
    // Categories in name order COMM, Elementwise, GEMM for the running total.
    assert_eq!(
        csv_text(&csv, "kernel_summary_by_category"),
        "op category,Count,total_direct_kernel_time_ms,Percentage (%),Cumulative Percentage (%)\n\
         COMM,1,100.0,54.495912806539515,54.495912806539515\n\
         GEMM,2,80.0,43.596730245231605,100.0\n\
         Elementwise,3,3.5,1.9073569482288828,56.403269754768395\n"
    );
    // Longest first; the two 1000 ns dispatches by dispatch_id.
    assert_eq!(
        csv_text(&csv, "kernel_details"),
        "name,Kernel duration (µs),stream,dispatch_id,grid_x,grid_y,grid_z,block_x,block_y,block_z,agent_id,thread_id\n\
         ncclDevKernel_Generic_1,100000,2,3,26624,1,1,256,1,1,5,11\n\
         Cijk_gemm_a,50000,1,1,256,1,1,64,1,1,5,10\n\
         Cijk_gemm_a,30000,1,6,256,1,1,64,1,1,5,10\n\
         vectorized_elementwise_kernel,1500,1,4,512,4,2,128,2,1,5,10\n\
         vectorized_elementwise_kernel,1000,1,2,4096,1,1,128,1,1,5,10\n\
         vectorized_elementwise_kernel,1000,1,5,4096,1,1,128,1,1,5,10\n"
    );
    // The default threshold (10) is compared with ns: nothing is short.
    assert_eq!(
        csv_text(&csv, "short_kernels_summary"),
        SHORT_SUMMARY_HEADER
    );
    assert_eq!(
        csv_text(&csv, "short_kernel_histogram"),
        "bin_start,bin_end,count\n"
    );
}

#[test]
fn short_kernels_compare_the_threshold_with_nanoseconds() {
    let (_tmp, csv, r) = report_csv(
        &small(),
        &[
            "--short-kernel-threshold-us",
            "2000",
            "--short-kernel-histogram-bins",
            "4",
        ],
    );
    r.assert_ok();
    // Under 2000 ns: 1000, 1500, 1000 (all vectorized); 3500 / 183500.
    assert_eq!(
        csv_text(&csv, "short_kernels_summary"),
        SHORT_SUMMARY_HEADER.to_string()
            + "vectorized_elementwise_kernel,3,3500,1166.6666666666667,1.9073569482288828\n"
    );
    // Four bins over [1000, 1500].
    assert_eq!(
        csv_text(&csv, "short_kernel_histogram"),
        "bin_start,bin_end,count\n\
         1000.0,1125.0,2\n\
         1125.0,1250.0,0\n\
         1250.0,1375.0,0\n\
         1375.0,1500.0,1\n"
    );
}

#[test]
fn memory_copies_count_in_the_timeline() {
    let (_tmp, csv, r) = report_csv(&testdata("rocprof/copies.json"), &[]);
    r.assert_ok();
    // 10 µs profiled. Kernels [1,3] and [2,4] µs: 3 µs. Copies [3.5,5] and
    // [6,6.5]: 2 µs. All: [1,5] and [6,6.5]: 4.5 µs; idle 5.5 µs.
    assert_eq!(
        csv_text(&csv, "gpu_timeline"),
        "type,time ms,percent\n\
         total_time,0.01,100.0\n\
         kernel,0.003,30.0\n\
         memory,0.002,20.0\n\
         busy_time,0.0045,45.0\n\
         idle,0.0055,55.00000000000001\n"
    );
    // Copies are not kernels: two dispatches of 2000 ns.
    assert_eq!(
        csv_text(&csv, "kernel_summary"),
        KERNEL_SUMMARY_HEADER.to_string()
            + "layer_norm_kernel,2,2000.0,2000.0,0.0,2000,2000,100.0,100.0,4.0,Normalization\n"
    );
}

#[test]
fn gzip_input_and_format_override() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("small_results.json.gz");
    std::fs::write(&gz, gzip(&std::fs::read(small()).unwrap())).unwrap();
    let (_a, plain, r) = report_csv(&small(), &[]);
    r.assert_ok();
    let (_b, packed, r) = report_csv(&gz, &["--format", "rocprof"]);
    r.assert_ok();
    assert_eq!(
        common::read_dir_bytes(&plain),
        common::read_dir_bytes(&packed)
    );
}

/// Runs `report TRACE --csv OUT/csv` in an empty OUT and expects one error
/// line naming the trace and containing `what`, and nothing written.
fn refused(trace: &Path, extra: &[&str], what: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("report")
        .arg(trace)
        .arg("--csv")
        .arg(tmp.path().join("csv"))
        .args(extra));
    let line = r.assert_one_error_line(&trace.display().to_string());
    assert!(line.contains(what), "expected {what:?} in {line:?}");
    assert!(common::entries(tmp.path()).is_empty(), "output left behind");
}

/// Writes `bytes` as `name` in a new temp dir.
fn scratch(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    (d, p)
}

/// A document with one kernel_dispatch record `rec`.
fn one_record(rec: &str) -> String {
    format!(r#"{{"rocprofiler-sdk-tool": [{{"buffer_records": {{"kernel_dispatch": [{rec}]}}}}]}}"#)
}

#[test]
fn broken_files_are_refused() {
    let text = std::fs::read(small()).unwrap();
    let packed = gzip(&text);
    let (_a, p) = scratch("cut.json.gz", &packed[..packed.len() / 2]);
    refused(&p, &[], "truncated or corrupt gzip data");
    let (_b, p) = scratch("cut.json", &text[..text.len() * 3 / 5]);
    refused(&p, &[], "truncated JSON: input ended inside ");
    let (_c, p) = scratch(
        "comma.json",
        br#"{"rocprofiler-sdk-tool": [{"metadata": {"pid": 1,}}]}"#,
    );
    refused(&p, &[], "invalid JSON: ");
}

#[test]
fn wrong_shapes_are_refused() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"rocprofiler-sdk-tool": {"buffer_records": {}}}"#,
            "rocprofiler-sdk-tool: invalid type: map, expected a list of profile objects",
        ),
        (
            r#"{"rocprofiler-sdk-tool": []}"#,
            "\"rocprofiler-sdk-tool\" is an empty list",
        ),
        (
            r#"{"rocprofiler-sdk-tool": [{"buffer_records": []}]}"#,
            "rocprofiler-sdk-tool[0].buffer_records: invalid type: sequence, expected an object",
        ),
        (
            r#"{"rocprofiler-sdk-tool": [{"kernel_symbols": [{"kernel_id": "3"}]}]}"#,
            "rocprofiler-sdk-tool[0].kernel_symbols: invalid type: string \"3\", expected u64",
        ),
        (
            &one_record(
                r#"{"start_timestamp": "5", "end_timestamp": 9, "dispatch_info": {"kernel_id": 1}}"#,
            ),
            "buffer_records.kernel_dispatch[0]: invalid type: string \"5\", expected i64",
        ),
        (
            &one_record(r#"{"start_timestamp": 5, "dispatch_info": {"kernel_id": 1}}"#),
            "buffer_records.kernel_dispatch[0]: missing field `end_timestamp`",
        ),
        (
            &one_record(r#"{"start_timestamp": 5, "end_timestamp": 9}"#),
            "buffer_records.kernel_dispatch[0]: missing field `dispatch_info`",
        ),
        (
            &one_record(r#"{"start_timestamp": 5, "end_timestamp": 9, "dispatch_info": {}}"#),
            "buffer_records.kernel_dispatch[0]: missing field `kernel_id`",
        ),
        (
            &one_record(
                r#"{"start_timestamp": 9, "end_timestamp": 5, "dispatch_info": {"kernel_id": 1}}"#,
            ),
            "end_timestamp 5 is before start_timestamp 9",
        ),
        (
            r#"{"rocprofiler-sdk-tool": [{"buffer_records": {"memory_copy": [{"start_timestamp": 1}]}}]}"#,
            "buffer_records.memory_copy[0]: missing field `end_timestamp`",
        ),
    ];
    for (doc, what) in cases {
        let (_d, p) = scratch("bad_results.json", doc.as_bytes());
        refused(&p, &[], what);
    }
}

#[test]
fn format_override_on_another_format_says_what_is_missing() {
    refused(
        &testdata("example.json"),
        &["--format", "rocprof"],
        "not a rocprofv3 trace: the JSON object has no \"rocprofiler-sdk-tool\" key",
    );
}

#[test]
fn no_dispatches_gives_the_reference_empty_sheets() {
    let doc = br#"{"rocprofiler-sdk-tool": [{"metadata": {"init_time": 0, "fini_time": 5},
        "buffer_records": {"kernel_dispatch": [], "memory_copy": []}}]}"#;
    let (_d, p) = scratch("empty_results.json", doc);
    let (_tmp, csv, r) = report_csv(&p, &[]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("the trace has no GPU events"), "{r:?}");
    // The reference's empty frames: kernel_summary's total before the
    // percentages, kernel_details without columns.
    assert_eq!(
        csv_text(&csv, "kernel_summary"),
        "name,Count,Mean Kernel Time (µs),Median Kernel Time (µs),Std Kernel Time (µs),\
         Min Kernel Time (µs),Max Kernel Time (µs),Total Kernel Time (ms),Percentage (%),\
         Cumulative Percentage (%),Category\n"
    );
    assert_eq!(csv_text(&csv, "kernel_details"), "\n");
    assert_eq!(csv_text(&csv, "gpu_timeline"), "type,time ms,percent\n");
}
