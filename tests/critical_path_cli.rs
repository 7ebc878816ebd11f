//! `tracelens critical-path` from the command line: its CSV and JSON
//! outputs agree with each other and with `report --critical-path`, and
//! its outputs never replace its input.

mod common;

use std::fs;

use common::{csv_text, example_in_tempdir, parse_csv, run_in};

#[test]
fn csv_and_json_hold_the_same_summary_as_the_report() {
    let (tmp, _trace) = example_in_tempdir();
    let d = tmp.path();
    run_in(
        d,
        &[
            "critical-path",
            "t.json",
            "--csv",
            "cp",
            "--json",
            "cp.json",
        ],
    )
    .assert_ok();
    let summary = parse_csv(&csv_text(&d.join("cp"), "critical_path_summary"));
    assert_eq!(
        summary[0],
        ["bound_by", "duration_us", "pct_of_path_duration"]
    );
    assert!(summary.len() > 1, "an empty path on a trace with kernels");
    // The shares of the path add up to the whole path.
    let pct: f64 = summary[1..]
        .iter()
        .map(|r| r[2].parse::<f64>().unwrap())
        .sum();
    assert!((pct - 100.0).abs() < 1e-6, "shares add to {pct}");
    let path = parse_csv(&csv_text(&d.join("cp"), "critical_path"));
    let total: f64 = summary[1..]
        .iter()
        .map(|r| r[1].parse::<f64>().unwrap())
        .sum();
    let col = path[0].iter().position(|c| c == "duration_us").unwrap();
    let on_path: f64 = path[1..]
        .iter()
        .map(|r| r[col].parse::<f64>().unwrap())
        .sum();
    assert!((total - on_path).abs() < 1e-6, "{total} against {on_path}");

    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.join("cp.json")).unwrap()).unwrap();
    let rows = json["critical_path_summary"].as_array().unwrap();
    assert_eq!(rows.len(), summary.len() - 1);
    assert!(json["graph"]["nodes"].as_u64().unwrap() > 0);

    run_in(
        d,
        &["report", "t.json", "--critical-path", "--csv", "r", "-q"],
    )
    .assert_ok();
    assert_eq!(
        csv_text(&d.join("r"), "critical_path_summary"),
        csv_text(&d.join("cp"), "critical_path_summary")
    );
    assert_eq!(
        csv_text(&d.join("r"), "critical_path"),
        csv_text(&d.join("cp"), "critical_path")
    );
}

#[test]
fn an_output_on_the_trace_is_refused_before_any_work() {
    let (tmp, trace) = example_in_tempdir();
    let before = fs::read(&trace).unwrap();
    // A trace whose name ends in .csv sits among the sheets a CSV folder replaces.
    fs::copy(&trace, tmp.path().join("run.csv")).unwrap();
    for args in [
        &["critical-path", "t.json", "--json", "t.json"][..],
        &["critical-path", "run.csv", "--csv", "."][..],
    ] {
        let r = run_in(tmp.path(), args);
        assert_ne!(r.code, Some(0), "{args:?}: {r:#?}");
        r.assert_no_panic();
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert_eq!(fs::read(&trace).unwrap(), before, "{args:?}");
        assert_eq!(
            fs::read(tmp.path().join("run.csv")).unwrap(),
            before,
            "{args:?}"
        );
    }
}

#[test]
fn a_step_the_trace_lacks_is_one_line() {
    let (tmp, _trace) = example_in_tempdir();
    let r = run_in(
        tmp.path(),
        &["critical-path", "t.json", "--step", "987654321"],
    );
    assert_ne!(r.code, Some(0), "{r:#?}");
    r.assert_no_panic();
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("987654321"), "{}", r.stderr);
}
