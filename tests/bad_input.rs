//! Inputs `tracelens report` must refuse, and how: exit code 1, exactly one
//! stderr line `tracelens: error: <path>: <what is wrong>`, no panic, and no
//! output left behind (not even a temporary file). Also output paths that
//! cannot be written, and the odd-but-valid traces that only warn
//! (`cpu_only.json`, `unknown_phase.json`).

mod common;

use common::{Run, SHEETS, Table, report_csv, run, testdata, tracelens};
use std::path::Path;

/// Runs `report TRACE -o OUT/report.xlsx --csv OUT/csv` with OUT an empty
/// folder (also the working directory), expects a clean failure whose line
/// names `trace` and contains one of `keywords` (case-insensitive), and
/// checks that OUT is still empty.
fn expect_refused(trace: &Path, keywords: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let r = run(tracelens()
        .current_dir(&out)
        .arg("report")
        .arg(trace)
        .arg("-o")
        .arg(out.join("report.xlsx"))
        .arg("--csv")
        .arg(out.join("csv")));
    let line = r.assert_one_error_line(&trace.display().to_string());
    let lower = line.to_lowercase();
    assert!(
        keywords.iter().any(|k| lower.contains(&k.to_lowercase())),
        "{}: the error should say one of {keywords:?}: {line}",
        trace.display()
    );
    assert_eq!(r.stdout, "", "nothing on stdout for a failed run");
    assert!(
        common::entries(&out).is_empty(),
        "{}: output left behind: {:?}",
        trace.display(),
        common::files_under(&out)
    );
    line
}

/// Writes `bytes` as `name` into a new temp dir; returns (dir, path).
fn scratch(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    (d, p)
}

#[test]
fn missing_file() {
    let d = tempfile::tempdir().unwrap();
    expect_refused(&d.path().join("nope.json"), &["no such file"]);
}

#[test]
fn directory() {
    let d = tempfile::tempdir().unwrap();
    expect_refused(d.path(), &["directory"]);
}

#[test]
fn empty_file() {
    expect_refused(&testdata("bad/empty.json"), &["empty"]);
}

#[test]
fn truncated_json() {
    expect_refused(&testdata("bad/truncated.json"), &["truncated"]);
}

#[test]
fn trailing_comma() {
    expect_refused(
        &testdata("bad/invalid.json"),
        &["trailing comma", "invalid"],
    );
}

#[test]
fn json_without_trace_events() {
    expect_refused(&testdata("bad/not_a_trace.json"), &["traceEvents"]);
}

#[test]
fn no_events() {
    expect_refused(&testdata("bad/no_events.json"), &["no events"]);
}

#[test]
fn string_timestamp() {
    let line = expect_refused(&testdata("bad/string_ts.json"), &["expected a number"]);
    // The offending value is named.
    assert!(line.contains("1000.5"), "{line}");
}

#[test]
fn negative_duration() {
    expect_refused(&testdata("bad/negative_dur.json"), &["negative duration"]);
}

#[test]
fn array_of_numbers() {
    // A bare top-level array is accepted as a list of events; numbers are
    // not events.
    expect_refused(
        &testdata("bad/array_of_numbers.json"),
        &["event object", "not a trace"],
    );
}

#[test]
fn truncated_gzip() {
    let gz = common::gzip(&std::fs::read(testdata("example.json")).unwrap());
    let (_d, p) = scratch("half.json.gz", &gz[..gz.len() / 2]);
    expect_refused(&p, &["gzip"]);
}

#[test]
fn corrupt_zip() {
    let json = std::fs::read(testdata("example.json")).unwrap();
    let zip = common::zip_of(&[("example.json", &json)]);
    // Cut off the central directory.
    let (_d1, cut) = scratch("cut.zip", &zip[..zip.len() / 2]);
    expect_refused(&cut, &["zip"]);
    // Intact directory, garbled compressed data: flip bytes after the local
    // header (30 bytes + the 12-byte member name).
    let mut garbled = zip.clone();
    for b in &mut garbled[50..200] {
        *b ^= 0x5a;
    }
    let (_d2, bad) = scratch("garbled.zip", &garbled);
    expect_refused(&bad, &["zip"]);
    // A valid archive with no trace in it.
    let (_d3, none) = scratch("none.zip", &common::zip_of(&[("a.txt", b"hello")]));
    expect_refused(&none, &["zip"]);
}

/// A valid trace whose outputs cannot be written: one error line naming the
/// output, exit 1.
#[test]
fn unwritable_output() {
    let r = run(tracelens()
        .arg("report")
        .arg(testdata("example.json"))
        .args(["-o", "/proc/nonexistent/x.xlsx", "-q"]));
    r.assert_one_error_line("/proc/nonexistent/x.xlsx");

    let r = run(tracelens()
        .arg("report")
        .arg(testdata("example.json"))
        .args(["--csv", "/proc/nonexistent/csv", "-q"]));
    r.assert_one_error_line("/proc/nonexistent/csv");
}

/// When one output fails, the others of the same run must not be left behind
/// (DESIGN.md: "no partial output file is left behind").
#[test]
fn failed_run_leaves_no_partial_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("report")
        .arg(testdata("example.json"))
        .args(["--csv", "csv", "-o", "/proc/nonexistent/x.xlsx", "-q"]));
    r.assert_one_error_line("/proc/nonexistent/x.xlsx");
    assert!(
        common::entries(tmp.path()).is_empty(),
        "the run failed but left {:?}",
        common::files_under(tmp.path())
    );
}

fn warning_lines(r: &Run) -> Vec<&str> {
    r.stderr_lines()
        .into_iter()
        .filter(|l| l.starts_with("tracelens: warning:"))
        .collect()
}

#[test]
fn cpu_only_trace_reports_with_a_warning() {
    let (_tmp, csv, r) = report_csv(&testdata("cpu_only.json"), &[]);
    r.assert_ok();
    let w = warning_lines(&r);
    assert!(
        w.iter().any(|l| l.to_lowercase().contains("no gpu events")),
        "expected a no-GPU-events warning: {}",
        r.stderr
    );
    assert!(csv.is_dir(), "the CSV folder is still written");
}

#[test]
fn unknown_phase_is_ignored_with_a_warning() {
    let (_t1, csv, r) = report_csv(&testdata("unknown_phase.json"), &[]);
    r.assert_ok();
    let w = warning_lines(&r);
    assert!(
        w.iter().any(|l| l.contains("phase") && l.contains("\"Q\"")),
        "expected a warning naming phase \"Q\": {}",
        r.stderr
    );
    // The "Q" event is ignored: the timeline and the kernel and op totals are
    // those of example.json.
    let (_t2, base, r2) = report_csv(&testdata("example.json"), &[]);
    r2.assert_ok();
    for s in SHEETS {
        if s == "ops_unique_args" {
            continue;
        }
        assert_eq!(
            std::fs::read(csv.join(format!("{s}.csv"))).unwrap(),
            std::fs::read(base.join(format!("{s}.csv"))).unwrap(),
            "{s} differs"
        );
    }
    // It still holds its UID: it sits at index 6, so every later event's UID
    // is one more than in example.json (addmm 10 -> 11, relu 14 -> 15,
    // copy_ 20 -> 21).
    let u = Table::load(&csv, "ops_unique_args");
    assert_eq!(u.column("ex_UID"), ["11", "15", "21"]);
}
