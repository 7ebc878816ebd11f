//! Hostile paths: outputs that would overwrite or remove an input (through
//! a link, a folder's replacement of its files, a summary name that leaves
//! its folder) are refused before any work, and odd names (newlines, bytes
//! that are not UTF-8, a format suffix in a folder name) neither forge
//! message lines nor move default outputs out of the input's folder.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{Run, example_in_tempdir, run, run_in, testdata, tracelens};

/// The run failed with exit `code` and one stderr line naming `what`.
fn refused(r: &Run, code: i32, what: &str) -> String {
    r.assert_no_panic();
    assert_eq!(r.code, Some(code), "{r:#?}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{r:#?}");
    assert!(lines[0].starts_with("tracelens: error: "), "{r:#?}");
    assert!(lines[0].contains(what), "{what} not in {:?}", lines[0]);
    lines[0].to_string()
}

/// Every file under `dir` with its size and a checksum of its bytes, for
/// "nothing changed" checks.
fn snapshot(dir: &Path) -> Vec<(PathBuf, usize, u64)> {
    let mut files: Vec<(PathBuf, usize, u64)> = common::files_under(dir)
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = fs::read(&p).unwrap();
            let sum = bytes.iter().fold(0u64, |h, &b| {
                h.wrapping_mul(1_099_511_628_211) ^ u64::from(b)
            });
            (p, bytes.len(), sum)
        })
        .collect();
    files.sort();
    files
}

#[cfg(unix)]
#[test]
fn compare_refuses_an_output_folder_linked_to_its_baseline() {
    let (tmp, _) = example_in_tempdir();
    let d = tmp.path();
    run_in(d, &["report", "t.json", "--csv", "base", "-q"]).assert_ok();
    std::os::unix::fs::symlink(d.join("base"), d.join("link")).unwrap();
    std::os::unix::fs::symlink(d.join("t.json"), d.join("t.xlsx")).unwrap();
    let before = snapshot(d);
    let r = run_in(d, &["compare", "base", "t.json", "--csv", "link"]);
    let line = refused(&r, 2, "link");
    assert!(line.contains("--csv names an input"), "{line}");
    // A link to the trace, as the workbook, is refused the same way.
    let r = run_in(d, &["compare", "base", "t.json", "-o", "t.xlsx"]);
    assert!(refused(&r, 2, "t.xlsx").contains("-o names an input"));
    assert_eq!(snapshot(d), before);
}

#[test]
fn a_folder_replacement_never_removes_an_input_file() {
    let (tmp, trace) = example_in_tempdir();
    let d = tmp.path();
    fs::copy(&trace, d.join("run.csv")).unwrap();
    fs::write(d.join("rules.csv"), "gemm: Cijk\n").unwrap();
    fs::write(d.join("spec.svg"), "{}").unwrap();
    fs::copy(&trace, d.join("x.py")).unwrap();
    let before = snapshot(d);
    // The trace is a .csv in the --csv folder.
    let r = run_in(d, &["report", "run.csv", "--csv", "."]);
    let line = refused(&r, 1, "run.csv");
    assert!(line.contains("--csv"), "{line}");
    // The rule file is.
    let r = run_in(
        d,
        &[
            "report",
            "t.json",
            "--kernel-categories-file",
            "rules.csv",
            "--csv",
            ".",
        ],
    );
    refused(&r, 1, "rules.csv");
    // A GPU spec file is an input too: as an output, and in --plots.
    let r = run_in(
        d,
        &[
            "report",
            "t.json",
            "--gpu-arch",
            "spec.svg",
            "--md",
            "spec.svg",
        ],
    );
    refused(&r, 1, "spec.svg");
    let r = run_in(
        d,
        &["report", "t.json", "--gpu-arch", "spec.svg", "--plots", "."],
    );
    refused(&r, 1, "spec.svg");
    // replay replaces the *.py scripts of its folder.
    let r = run_in(d, &["replay", "x.py", "--out", "."]);
    refused(&r, 1, "x.py");
    // diff writes its six files under fixed names.
    fs::copy(&trace, d.join("diff_stats.csv")).unwrap();
    let r = run_in(d, &["diff", "diff_stats.csv", "t.json", "--out", "."]);
    refused(&r, 1, "diff_stats.csv");
    fs::remove_file(d.join("diff_stats.csv")).unwrap();
    assert_eq!(snapshot(d), before);
    // Another folder, or an extension the folder does not replace, is fine
    // (the folder's other CSV files are not inputs of that run).
    run_in(d, &["report", "run.csv", "--csv", "sub", "-q"]).assert_ok();
    run_in(d, &["report", "x.py", "--csv", ".", "-q"]).assert_ok();
    assert!(d.join("x.py").is_file() && d.join("ops_summary.csv").is_file());
}

#[test]
fn an_output_inside_an_input_folder_may_not_replace_what_is_read() {
    let (tmp, _) = example_in_tempdir();
    let d = tmp.path();
    run_in(d, &["report", "t.json", "--csv", "base", "-q"]).assert_ok();
    let before = snapshot(d);
    // compare reads base/*.csv: a CSV folder there, or the folder itself.
    let r = run_in(d, &["compare", "base", "t.json", "--csv", "base/sub"]);
    assert!(refused(&r, 2, "base/sub").contains("input folder"));
    let r = run_in(d, &["compare", "base", "t.json", "--csv", "base"]);
    refused(&r, 2, "base");
    let r = run_in(d, &["compare", "base", "t.json", "--md", "base/x.csv"]);
    refused(&r, 2, "base/x.csv");
    // collectives reads the traces (*.json) of --trace-dir.
    let r = run_in(
        d,
        &["collectives", "--trace-dir", ".", "--md", "notes.json"],
    );
    refused(&r, 1, "notes.json");
    assert_eq!(snapshot(d), before);
    // A workbook in the CSV folder replaces nothing.
    run_in(d, &["compare", "base", "t.json", "-o", "base/c.xlsx", "-q"]).assert_ok();
}

#[test]
fn summaries_stay_in_their_folder_and_fleet_keeps_them() {
    let (tmp, trace) = example_in_tempdir();
    let d = tmp.path();
    let traces = d.join("traces");
    fs::create_dir(&traces).unwrap();
    // Stems `..`, `.` and `` (empty) would name S/.. and S itself.
    for name in ["...json", "..json", ".json"] {
        fs::copy(&trace, traces.join(name)).unwrap();
    }
    fs::create_dir(d.join("S")).unwrap();
    fs::write(d.join("keep.parquet"), "x").unwrap();
    fs::write(d.join("S/keep.parquet"), "x").unwrap();
    let r = run_in(
        d,
        &[
            "summarize",
            "traces/...json",
            "traces/..json",
            "traces/.json",
            "--out",
            "S",
            "-q",
        ],
    );
    r.assert_ok();
    for name in ["...json", "..json", ".json"] {
        assert!(
            d.join("S").join(name).join("trace_info.parquet").is_file(),
            "{r:#?}"
        );
    }
    assert_eq!(fs::read(d.join("keep.parquet")).unwrap(), b"x");
    assert_eq!(fs::read(d.join("S/keep.parquet")).unwrap(), b"x");
    assert!(!d.join("trace_info.parquet").exists() && !d.join("S/trace_info.parquet").exists());
    // A trace in the summary folder it would get is refused.
    fs::create_dir(d.join("S/r.parquet")).unwrap();
    fs::copy(&trace, d.join("S/r.parquet/r.parquet")).unwrap();
    let r = run_in(d, &["summarize", "S/r.parquet/r.parquet", "--out", "S"]);
    refused(&r, 1, "r.parquet");
    assert!(d.join("S/r.parquet/r.parquet").is_file());
    fs::remove_dir_all(d.join("S/r.parquet")).unwrap();
    // fleet reads S/*/*.parquet: its report may not replace them.
    let before = snapshot(d);
    let r = run_in(d, &["fleet", "S", "--out", "S/.json"]);
    assert!(refused(&r, 2, "S/.json").contains("--out names an input"));
    let r = run_in(d, &["fleet", "S", "--out", "S/..json/sub"]);
    assert!(refused(&r, 2, "S/..json/sub").contains("input folder"));
    let r = run_in(d, &["fleet", "S", "--out", "S"]);
    refused(&r, 2, "S");
    let r = run_in(
        d,
        &["fleet", "other", "--baseline", "S", "--out", "S/...json"],
    );
    refused(&r, 2, "S/...json");
    assert_eq!(snapshot(d), before);
}

#[test]
fn a_newline_in_a_name_cannot_forge_a_message_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let name = "bad\ntracelens: error: forged.json";
    fs::write(d.join(name), "{not json").unwrap();
    let r = run_in(d, &["report", name, "--csv", "c"]);
    let line = r.assert_one_error_line("forged.json");
    assert!(
        line.contains("\"bad\\ntracelens: error: forged.json\""),
        "{line}"
    );
    // A warning naming the trace is one line too.
    let warned = "cpu\u{202e}only\r.json";
    fs::copy(testdata("cpu_only.json"), d.join(warned)).unwrap();
    let r = run_in(d, &["report", warned, "--csv", "c", "-q"]);
    r.assert_ok();
    let lines = r.stderr_lines();
    assert!(!lines.is_empty(), "{r:#?}");
    for l in &lines {
        assert!(
            l.starts_with("tracelens: warning: \"cpu\\u{202e}only\\r.json\": "),
            "{l:?}"
        );
    }
    assert!(!r.stderr.contains('\r') && !r.stderr.contains('\u{202e}'));
}

#[cfg(target_os = "linux")]
#[test]
fn outputs_of_a_trace_in_a_folder_not_named_in_utf8_stay_in_it() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let dir = d.join(OsStr::from_bytes(b"d\xff"));
    fs::create_dir(&dir).unwrap();
    let trace = dir.join("t.json");
    fs::copy(testdata("example.json"), &trace).unwrap();
    run(tracelens()
        .current_dir(d)
        .arg("report")
        .arg(&trace)
        .arg("-q"))
    .assert_ok();
    assert!(dir.join("t_perf_report.xlsx").is_file());
    let ops = dir.join("ops.json");
    fs::copy(testdata("replay_ops.json"), &ops).unwrap();
    run(tracelens().current_dir(d).arg("replay").arg(&ops).arg("-q")).assert_ok();
    assert!(dir.join("ops_replay").is_dir());
    // Nothing went to a lossy `d\u{fffd}` folder beside it.
    assert_eq!(common::entries(d), [String::from_utf8_lossy(b"d\xff")]);
    // A message shows the bytes, not a replacement character.
    let missing = dir.join("gone.json");
    let r = run(tracelens().current_dir(d).arg("report").arg(&missing));
    let line = r.assert_one_error_line("gone.json");
    assert!(line.contains("d\\xff/gone.json"), "{line}");
}

#[test]
fn a_format_suffix_in_a_folder_name_keeps_the_workbook_in_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let dir = d.join("runs.json.d");
    fs::create_dir(&dir).unwrap();
    let bytes = fs::read(testdata("example.json")).unwrap();
    fs::write(dir.join("t.gz"), common::gzip(&bytes)).unwrap();
    run_in(d, &["report", "runs.json.d/t.gz", "-q"]).assert_ok();
    assert!(dir.join("t.gz_perf_report.xlsx").is_file());
    assert!(!d.join("runs_perf_report.xlsx").exists());
    // Ordinary names keep the reference's stem.
    fs::write(dir.join("u.json.gz"), common::gzip(&bytes)).unwrap();
    run_in(d, &["report", "runs.json.d/u.json.gz", "-q"]).assert_ok();
    assert!(dir.join("u_perf_report.xlsx").is_file());
}
