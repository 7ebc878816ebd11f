//! Outputs exactly as asked (issue 14): `--md` (or `--parquet`) alone
//! writes no workbook, stdin works with any output (and without one is
//! refused naming the flags), `-o` must name a `.xlsx` (a
//! `.csv`/`.parquet`/`.md`/`.json` name is refused naming the flag that
//! writes it) in `report`, `compare` and
//! `collectives`, `--plots` on a trace without roofline ops writes nothing
//! and says so, and `--timings` prints the phase breakdown.

mod common;

use common::{entries, gzip, run, run_with_stdin, testdata, tracelens};

fn example() -> std::path::PathBuf {
    testdata("example.json")
}

#[test]
fn markdown_alone_writes_no_workbook() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example(), dir.path().join("t.json")).unwrap();
    let r = run(tracelens()
        .current_dir(dir.path())
        .args(["report", "t.json", "--md", "-", "-q"]));
    r.assert_ok();
    assert!(
        r.stdout.starts_with("## tracelens report: t.json"),
        "{}",
        r.stdout
    );
    assert_eq!(entries(dir.path()), ["t.json"]);
    // To a file: only that file.
    run(tracelens()
        .current_dir(dir.path())
        .args(["report", "t.json", "--md", "s.md", "-q"]))
    .assert_ok();
    assert_eq!(entries(dir.path()), ["s.md", "t.json"]);
}

#[test]
fn gzip_on_stdin_to_markdown_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let gz = gzip(&std::fs::read(example()).unwrap());
    let r = run_with_stdin(
        tracelens()
            .current_dir(dir.path())
            .args(["report", "-", "--md", "-", "-q"]),
        &gz,
    );
    r.assert_ok();
    assert!(
        r.stdout.starts_with("## tracelens report: stdin"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("### GPU timeline"), "{}", r.stdout);
    assert!(entries(dir.path()).is_empty());
    // The same Markdown as from the file, but for the title.
    let file = run(tracelens()
        .arg("report")
        .arg(example())
        .args(["--md", "-", "-q"]));
    file.assert_ok();
    // The file's page also lists `tracelens replay` commands, which need
    // the file.
    let hint = file
        .stdout
        .find("Reproduce the top ops")
        .expect("replay hint");
    let next = hint + file.stdout[hint..].find("### ").unwrap();
    let without_hint = format!("{}{}", &file.stdout[..hint], &file.stdout[next..]);
    // The findings' commands name a trace from stdin TRACE.
    assert_eq!(
        r.stdout
            .replacen("stdin", "", 1)
            .replace("TRACE", "example.json"),
        without_hint.replacen("example.json", "", 1)
    );
}

#[test]
fn stdin_without_an_output_names_the_output_flags() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with_stdin(
        tracelens().current_dir(dir.path()).args(["report", "-"]),
        &std::fs::read(example()).unwrap(),
    );
    let line = r.assert_one_error_line("stdin");
    for flag in ["-o FILE.xlsx", "--csv DIR", "--parquet DIR", "--md FILE"] {
        assert!(line.contains(flag), "{line}");
    }
    assert!(entries(dir.path()).is_empty());
}

/// `-o NAME` with the command's other arguments: one error line naming
/// `hint`, no file written.
fn assert_o_refused(args: &[&str], name: &str, hint: &str, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(dir.path())
        .args(args)
        .args(["-o", name]));
    r.assert_no_panic();
    assert_eq!(r.code, Some(code), "{args:?} -o {name}: {r:?}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{r:?}");
    assert!(lines[0].starts_with("tracelens: error: "), "{r:?}");
    assert!(lines[0].contains(name), "{r:?}");
    assert!(lines[0].contains(hint), "{args:?} -o {name}: {r:?}");
    assert!(
        entries(dir.path()).is_empty(),
        "wrote {:?}",
        entries(dir.path())
    );
}

#[test]
fn o_names_a_workbook_in_every_command() {
    let t = example();
    let t = t.to_str().unwrap();
    let report = ["report", t];
    assert_o_refused(&report, "out.csv", "--csv DIR", 1);
    assert_o_refused(&report, "out.parquet", "--parquet DIR", 1);
    assert_o_refused(&report, "out.md", "--md FILE", 1);
    assert_o_refused(&report, "out.json", "--json FILE", 1);
    assert_o_refused(&report, "out", "FILE.xlsx", 1);
    assert_o_refused(&report, "out.xls", "FILE.xlsx", 1);
    let compare = ["compare", t, t];
    assert_o_refused(&compare, "c.csv", "--csv DIR", 2);
    assert_o_refused(&compare, "c.parquet", "--parquet DIR", 2);
    assert_o_refused(&compare, "c.md", "--md FILE", 2);
    assert_o_refused(&compare, "c.json", "--json FILE", 2);
    let job = tempfile::tempdir().unwrap();
    std::fs::copy(t, job.path().join("rank0.json")).unwrap();
    let d = job.path().to_str().unwrap();
    let coll = ["collectives", "--trace-dir", d, "--world-size", "1"];
    assert_o_refused(&coll, "n.csv", "--csv DIR", 1);
    assert_o_refused(&coll, "n.parquet", "--parquet DIR", 1);
    assert_o_refused(&coll, "n.md", "--md FILE", 1);
    assert_eq!(entries(job.path()), ["rank0.json"]);
    // Any case of .xlsx is a workbook.
    let dir = tempfile::tempdir().unwrap();
    run(tracelens()
        .current_dir(dir.path())
        .args(["report", t, "-o", "R.XLSX", "-q"]))
    .assert_ok();
    assert_eq!(entries(dir.path()), ["R.XLSX"]);
}

#[test]
fn collectives_markdown_alone_writes_no_workbook() {
    let job = tempfile::tempdir().unwrap();
    std::fs::copy(example(), job.path().join("rank0.json")).unwrap();
    let r = run(tracelens()
        .args([
            "collectives",
            "--world-size",
            "1",
            "--md",
            "-",
            "-q",
            "--trace-dir",
        ])
        .arg(job.path()));
    r.assert_ok();
    assert!(!r.stdout.is_empty());
    assert_eq!(entries(job.path()), ["rank0.json"]);
}

#[test]
fn parquet_alone_writes_no_workbook() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example(), dir.path().join("t.json")).unwrap();
    run(tracelens()
        .current_dir(dir.path())
        .args(["report", "t.json", "--parquet", "pq", "-q"]))
    .assert_ok();
    assert_eq!(entries(dir.path()), ["pq", "t.json"]);
    let job = tempfile::tempdir().unwrap();
    std::fs::copy(example(), job.path().join("rank0.json")).unwrap();
    let out = tempfile::tempdir().unwrap();
    run(tracelens()
        .current_dir(out.path())
        .args(["collectives", "--world-size", "1", "--parquet", "pq", "-q"])
        .arg("--trace-dir")
        .arg(job.path()))
    .assert_ok();
    assert_eq!(entries(job.path()), ["rank0.json"]);
    assert_eq!(entries(out.path()), ["pq"]);
}

/// A trace of GPU kernels only: no CPU ops, so no roofline sheet.
const GPU_ONLY: &str = r#"{"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"stream": 7, "device": 0}},
 {"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 2, "args": {"stream": 7, "device": 0}}
]}"#;

#[test]
fn plots_without_roofline_ops_write_nothing_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g.json"), GPU_ONLY).unwrap();
    let r = run(tracelens().current_dir(dir.path()).args([
        "report",
        "g.json",
        "--gpu-arch",
        "MI300X",
        "--plots",
        "plots",
        "-q",
    ]));
    r.assert_ok();
    assert!(
        r.stderr.contains("--plots") && r.stderr.contains("no plots written"),
        "{}",
        r.stderr
    );
    assert_eq!(entries(dir.path()), ["g.json"]);
    // With another output, that output is written, and no plot folder.
    run(tracelens().current_dir(dir.path()).args([
        "report",
        "g.json",
        "--gpu-arch",
        "MI300X",
        "--plots",
        "plots",
        "--csv",
        "csv",
        "-q",
    ]))
    .assert_ok();
    assert_eq!(entries(dir.path()), ["csv", "g.json"]);
}

#[test]
fn plots_with_roofline_ops_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(dir.path())
        .arg("report")
        .arg(example())
        .args(["--gpu-arch", "MI300X", "--plots", "plots"]));
    r.assert_ok();
    assert!(r.stdout.contains("roofline plots"), "{}", r.stdout);
    assert!(!r.stderr.contains("no plots written"), "{}", r.stderr);
    // --plots alone is an output: no workbook beside it.
    assert_eq!(entries(dir.path()), ["plots"]);
    assert!(!entries(&dir.path().join("plots")).is_empty());
}

/// The phase lines of `--timings` / `TRACELENS_TIMINGS=1` on stderr.
fn timing_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.starts_with('[')).collect()
}

#[test]
fn timings_flag_and_variable_print_the_phases() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["report", "-", "--csv", "c", "-q"];
    let json = std::fs::read(example()).unwrap();
    let flag = run_with_stdin(
        tracelens()
            .current_dir(dir.path())
            .args(args)
            .arg("--timings"),
        &json,
    );
    flag.assert_ok();
    let lines = timing_lines(&flag.stderr);
    for phase in [
        "loading trace",
        "building call tree",
        "computing sheets",
        "writing outputs",
        "done",
    ] {
        assert!(
            lines.iter().any(|l| l.contains(phase) && l.contains("s] ")),
            "no {phase:?} line: {}",
            flag.stderr
        );
    }
    // The flag also turns on the stage lines under the phases.
    for stage in ["GPU links", "op metrics", "unified_perf_summary"] {
        assert!(
            flag.stderr
                .lines()
                .any(|l| l.starts_with("    ") && l.contains(stage)),
            "no {stage:?} stage line: {}",
            flag.stderr
        );
    }
    let env = run_with_stdin(
        tracelens()
            .current_dir(dir.path())
            .args(args)
            .env("TRACELENS_TIMINGS", "1"),
        &json,
    );
    env.assert_ok();
    assert_eq!(
        timing_lines(&env.stderr).len(),
        lines.len(),
        "{}",
        env.stderr
    );
    // Without either: no timing lines, and (stderr is not a terminal) no
    // progress display either.
    let plain = run_with_stdin(tracelens().current_dir(dir.path()).args(args), &json);
    plain.assert_ok();
    assert!(timing_lines(&plain.stderr).is_empty(), "{}", plain.stderr);
    assert!(!plain.stderr.contains('\x1b'), "{:?}", plain.stderr);
}
