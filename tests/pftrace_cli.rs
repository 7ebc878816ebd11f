//! rocprofv3 Perfetto traces end to end: `tracelens report` on
//! `testdata/pftrace/corpus_fixture.pftrace` (a copy of the corpus fixture)
//! and on its traceconv-style JSON, the report's options, the reference's
//! spellings, and the inputs it must refuse.
//!
//! Expected cells are the reference's (its pftrace reports on the JSON
//! form, `corpus/pftrace/expected/traceconv_style`), or worked out by hand
//! from the slices (comments give the arithmetic).

mod common;

use common::{csv_text, entries, report_csv, run, run_with_stdin, testdata, tracelens};
use std::path::{Path, PathBuf};

/// The sheets of the reference's three pftrace reports.
const REFERENCE_SHEETS: [&str; 6] = [
    "api_kernel_summary",
    "category_summary",
    "xla_top",
    "kernel_summary",
    "hip_summary",
    "memory_copy_by_copy_bytes",
];

fn native() -> PathBuf {
    testdata("pftrace/corpus_fixture.pftrace")
}

fn json() -> PathBuf {
    testdata("pftrace/corpus_fixture.traceconv.json")
}

/// `report T --csv DIR -q EXTRA`, which must succeed.
fn sheets(trace: &Path, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let (tmp, csv, r) = report_csv(trace, extra);
    r.assert_ok();
    (tmp, csv)
}

#[test]
fn native_decoding_gives_the_json_forms_sheets() {
    let (_a, from_pftrace) = sheets(&native(), &[]);
    let (_b, from_json) = sheets(&json(), &[]);
    for s in
        REFERENCE_SHEETS
            .iter()
            .chain(&["gpu_timeline", "gpu_agents", "memory_copy_by_direction"])
    {
        assert_eq!(
            csv_text(&from_pftrace, s),
            csv_text(&from_json, s),
            "{s} differs between the .pftrace and its JSON"
        );
    }
}

#[test]
fn copies_by_size_say_gpu_unknown_as_the_reference_and_by_direction_name_agents() {
    let (_t, csv) = sheets(&native(), &[]);
    // rocprofv3 writes `Agent-N` strings, which the reference reads as no GPU.
    assert_eq!(
        csv_text(&csv, "memory_copy_by_copy_bytes"),
        "copy_bytes,direction,count\n4096,d2h (GPU ?),1\n20138,h2d (GPU ?),1\n"
    );
    assert_eq!(
        csv_text(&csv, "memory_copy_by_direction"),
        "direction,count,bytes\ndevice to host (Agent-2),1,4096\nhost to device (Agent-1),1,20138\n"
    );
    // GPU 0 is the first agent in traceconv's order: the NCCL kernel's Agent-2.
    let agents = csv_text(&csv, "gpu_agents");
    let lines: Vec<&str> = agents.lines().collect();
    assert_eq!(
        lines[0],
        "GPU ID,agent,compute_ms,comm_ms,comm_not_overlapped_ms,fa_v3_backward"
    );
    // Agent-2: NCCL 200 µs + 60 µs, no compute. Agent-1: GEMMs 42 + 40 µs,
    // the fill kernel 6 µs (the 1 µs redzone checker is under 5000 ns).
    assert_eq!(lines[1], "0,Agent-2,0.0,0.26,0.26,False");
    assert_eq!(lines[2], "1,Agent-1,0.088,0.0,0.0,False");
}

#[test]
fn api_latency_rows_are_the_references() {
    let (_t, csv) = sheets(&native(), &[]);
    let text = csv_text(&csv, "api_kernel_summary");
    // The GEMM pair on Agent-1 (device 1): T = A + Q + K per launch,
    // 5000 + 35000 + 40000 = 80000 and 6000 + 2000 + 42000 = 50000.
    assert!(
        text.contains(
            "4242,4242,1,2,2,65000.0,65000.0,50000,80000,15000.0,5500.0,5500.0,5000,6000,500.0,\
             18500.0,18500.0,2000,35000,16500.0,41000.0,41000.0,40000,42000,1000.0,hipLaunchKernel,\
             Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0\n"
        ),
        "{text}"
    );
    // The redzone checker is left out by default ...
    assert!(!text.contains("redzone_checker_kernel"), "{text}");
    // ... and in with an empty exclusion pattern.
    let (_u, all) = sheets(&native(), &["--exclude-kernel-regex", ""]);
    assert!(csv_text(&all, "api_kernel_summary").contains("redzone_checker_kernel"));
}

#[test]
fn activity_options() {
    // hipLaunchKernel calls last 6, 5, 2 and 6 µs: the 2 µs one is under
    // the default 5000 ns.
    let (_a, default) = sheets(&native(), &[]);
    let hip = csv_text(&default, "hip_summary");
    assert!(
        hip.contains(",3,5.667 μs,6.000 μs,5.000 μs,6.000 μs,471 ns,hipLaunchKernel,"),
        "{hip}"
    );
    let (_b, all) = sheets(&native(), &["--min-event-ns", "0"]);
    let hip = csv_text(&all, "hip_summary");
    assert!(
        hip.contains(",4,4.750 μs,5.500 μs,2.000 μs,6.000 μs,"),
        "{hip}"
    );

    let (_c, by_name) = sheets(
        &native(),
        &[
            "--kernel-summary-group",
            "name",
            "--hip-summary-group",
            "name+stream",
        ],
    );
    let kernels = csv_text(&by_name, "kernel_summary");
    assert!(kernels.starts_with(
        "Time,Total Time,Instances,Avg,Med,Min,Max,StdDev,Name,Time %,Total Time (ns),"
    ));
    assert!(!kernels.contains("GridXYZ"));
    let hip = csv_text(&by_name, "hip_summary");
    assert!(
        hip.starts_with("Time,Total Time,Instances,Avg,Med,Min,Max,StdDev,Stream,Name,"),
        "{hip}"
    );

    let (_d, none) = sheets(&native(), &["--no-kernel-summary", "--no-hip-summary"]);
    let files = entries(&none);
    assert!(
        !files
            .iter()
            .any(|f| f == "kernel_summary.csv" || f == "hip_summary.csv"),
        "{files:?}"
    );
    assert!(files.iter().any(|f| f == "category_summary.csv"));

    // --merge-kernels strips digits from xla_top's names.
    let (_e, merged) = sheets(&native(), &["--merge-kernels"]);
    let xla = csv_text(&merged, "xla_top");
    assert!(
        xla.contains("vectorized_elementwise_kernel<, at::native::FillFunctor<float>"),
        "{xla}"
    );
}

#[test]
fn bad_exclusion_pattern_is_one_line() {
    let (_t, _csv, r) = report_csv(&native(), &["--exclude-kernel-regex", "("]);
    let line = r.assert_one_error_line("--exclude-kernel-regex");
    assert!(line.contains("regular expression"), "{line}");
}

#[test]
fn reference_spellings() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("csv");
    // The hip_activity script's command line, with the command name swapped.
    let r = run(tracelens()
        .arg("report")
        .arg("--trace_path")
        .arg(native())
        .arg("--output_csvs_dir")
        .arg(&out)
        .args(["--traceconv", "/no/such/traceconv", "--min_event_ns", "0"])
        .args(["--hip_summary_group", "name+op", "-q"]));
    r.assert_ok();
    assert!(csv_text(&out, "hip_summary").contains(",Op,Name,"));
    let r = run(tracelens()
        .arg("report")
        .arg("--trace_path")
        .arg(native())
        .arg("--write_md"));
    assert_eq!(r.code, Some(2), "{r:#?}");
    assert!(r.stderr.contains("--md FILE"), "{}", r.stderr);
}

#[test]
fn detected_from_content_on_stdin_and_forced_by_format() {
    let bytes = std::fs::read(native()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("csv");
    let r = run_with_stdin(
        tracelens()
            .arg("report")
            .arg("-")
            .arg("--csv")
            .arg(&out)
            .arg("-q"),
        &bytes,
    );
    r.assert_ok();
    assert!(csv_text(&out, "memory_copy_by_copy_bytes").contains("20138,h2d (GPU ?),1"));

    // A .pftrace under another name, and the JSON form forced.
    let renamed = tmp.path().join("trace.bin");
    std::fs::write(&renamed, &bytes).unwrap();
    let (_a, forced) = sheets(&renamed, &["--format", "pftrace"]);
    let (_b, json_forced) = sheets(&json(), &["--format", "perfetto-json"]);
    assert_eq!(
        csv_text(&forced, "api_kernel_summary"),
        csv_text(&json_forced, "api_kernel_summary")
    );
}

#[test]
fn page_and_terminal_name_the_agents() {
    let r = run(tracelens().arg("report").arg(native()).args(["--md", "-"]));
    r.assert_ok();
    assert!(
        r.stdout.contains("### GPU timeline (mean of 2 GPUs)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("| host to device (Agent-1) | 1 | 20138 |"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("says `GPU ?` where the trace names an agent `Agent-N`")
    );
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .arg("report")
        .arg(native())
        .arg("--csv")
        .arg(tmp.path().join("csv")));
    r.assert_ok();
    assert!(
        r.stdout
            .contains("GPU Agent-1: compute 0.088 ms, communication 0.000 ms"),
        "{}",
        r.stdout
    );
}

#[test]
fn diff_refuses_perfetto_traces() {
    let r = run(tracelens().arg("diff").arg(native()).arg(json()));
    let line = r.assert_one_error_line("corpus_fixture.pftrace");
    assert!(
        line.contains("Perfetto trace has no CPU call tree"),
        "{line}"
    );
}

/// Runs `report` on `bytes` saved as `name`, expects one error line naming
/// the file and nothing written.
fn refused(name: &str, bytes: &[u8]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join(name);
    std::fs::write(&trace, bytes).unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let r = run(tracelens()
        .arg("report")
        .arg(&trace)
        .arg("--csv")
        .arg(out.join("csv"))
        .arg("-o")
        .arg(out.join("r.xlsx")));
    let line = r.assert_one_error_line(name);
    assert!(
        entries(&out).is_empty(),
        "output left behind: {:?}",
        entries(&out)
    );
    line
}

#[test]
fn truncated_and_corrupt_inputs_are_refused_with_one_line() {
    let bytes = std::fs::read(native()).unwrap();
    let line = refused("cut.pftrace", &bytes[..bytes.len() / 2]);
    assert!(line.contains("truncated Perfetto trace"), "{line}");
    let mut flipped = bytes.clone();
    // The second packet's key given wire type 7, which does not exist (the
    // first packet is `0a 2c` and 44 bytes).
    assert_eq!(&bytes[..2], &[0x0a, 0x2c]);
    flipped[46] = 0x0f;
    let line = refused("flipped.pftrace", &flipped);
    assert!(line.contains("malformed Perfetto trace"), "{line}");
    let text = std::fs::read(json()).unwrap();
    let line = refused("cut.json", &text[..text.len() / 2]);
    assert!(line.contains("invalid JSON"), "{line}");
}
