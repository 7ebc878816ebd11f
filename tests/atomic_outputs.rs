//! Every run writes all its outputs or none: across files, over an earlier
//! run's outputs, after a signal; output paths that would overwrite an
//! input or each other are refused before any work; xlsx text cells never
//! become formulas.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{example_in_tempdir, files_under, run, run_in, testdata, tracelens};

/// Every path under `dir` that a run must never leave behind.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with(".tracelens-staging-") || name.ends_with(".tmp") {
                out.push(p.clone());
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

/// Names of the entries directly in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    common::entries(dir)
}

#[test]
fn a_directory_target_fails_the_run_before_any_file_moves() {
    // The issue's reproducer: `mkdir t/x.xlsx; report --csv t/csv -o t/x.xlsx`.
    let (tmp, _) = example_in_tempdir();
    let d = tmp.path();
    fs::create_dir(d.join("x.xlsx")).unwrap();
    run_in(d, &["report", "t.json", "--csv", "csv", "-o", "x.xlsx"])
        .assert_one_error_line("x.xlsx");
    assert_eq!(names(d), ["t.json", "x.xlsx"]);
    assert!(names(&d.join("x.xlsx")).is_empty());
    // The same with --md on a directory.
    fs::create_dir(d.join("s.md")).unwrap();
    run_in(d, &["report", "t.json", "--csv", "csv", "--md", "s.md"]).assert_one_error_line("s.md");
    assert_eq!(names(d), ["s.md", "t.json", "x.xlsx"]);
}

#[test]
fn a_failed_rerun_keeps_the_previous_outputs_intact() {
    let (tmp, _) = example_in_tempdir();
    let d = tmp.path();
    let args = ["report", "t.json", "--csv", "csv", "-o", "r.xlsx", "-q"];
    run_in(d, &args).assert_ok();
    let before_csv = common::read_dir_bytes(&d.join("csv"));
    let before_xlsx = fs::read(d.join("r.xlsx")).unwrap();
    // Second run: same outputs plus --md on a directory.
    fs::create_dir(d.join("s.md")).unwrap();
    let mut again = args.to_vec();
    again.extend(["--md", "s.md"]);
    run_in(d, &again).assert_one_error_line("s.md");
    assert_eq!(common::read_dir_bytes(&d.join("csv")), before_csv);
    assert_eq!(fs::read(d.join("r.xlsx")).unwrap(), before_xlsx);
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}

#[test]
fn a_rerun_into_a_csv_folder_replaces_its_sheets_as_a_unit() {
    let (tmp, _) = example_in_tempdir();
    let d = tmp.path();
    let csv = d.join("csv");
    // The earlier run writes ten sheets; this one, on a CPU-only trace,
    // four (two of the same names, and the health and findings sheets).
    run_in(d, &["report", "t.json", "--csv", "csv", "-q"]).assert_ok();
    assert!(names(&csv).contains(&"kernel_summary.csv".to_string()));
    fs::copy(testdata("cpu_only.json"), d.join("c.json")).unwrap();
    // Files the user put there: a sheet of their own, notes, a sub-folder.
    fs::write(csv.join("mine.csv"), "a\n1\n").unwrap();
    fs::write(csv.join("notes.txt"), "mine").unwrap();
    fs::create_dir(csv.join("sub")).unwrap();
    fs::write(csv.join("sub/kept.csv"), "a\n").unwrap();
    run_in(d, &["report", "c.json", "--csv", "csv", "-q"]).assert_ok();
    assert_eq!(
        common::all_entries(&csv),
        [
            common::MANIFEST,
            "findings.csv",
            "health.csv",
            "mine.csv",
            "notes.txt",
            "short_kernel_histogram.csv",
            "short_kernels_summary.csv",
            "sub"
        ]
    );
    assert_eq!(fs::read_to_string(csv.join("mine.csv")).unwrap(), "a\n1\n");
    assert!(csv.join("sub/kept.csv").exists());
    assert!(leftovers(d).is_empty());
}

#[test]
fn outputs_overwriting_an_input_or_each_other_are_refused() {
    let (tmp, trace) = example_in_tempdir();
    let d = tmp.path();
    let original = fs::read(&trace).unwrap();
    let report = |extra: &[&str]| {
        let mut args = vec!["report", "t.json"];
        args.extend(extra);
        run_in(d, &args)
    };
    let line = report(&["-o", "t.json"]).assert_one_error_line("t.json");
    assert!(line.contains("input"), "{line}");
    report(&["-o", "./sub/../t.json"]).assert_one_error_line("t.json");
    report(&["--md", "t.json"]).assert_one_error_line("t.json");
    let line = report(&["-o", "x", "--md", "./x"]).assert_one_error_line("x");
    assert!(line.contains("-o and --md"), "{line}");
    report(&["--csv", "c", "--md", "c"]).assert_one_error_line("c");
    // diff: an output on one of the traces.
    run_in(d, &["diff", "t.json", "t.json", "--md", "t.json"]).assert_one_error_line("t.json");
    // collectives: checked before the rank traces are even looked for.
    let line = run_in(
        d,
        &[
            "collectives",
            "--trace-dir",
            ".",
            "--world-size",
            "1",
            "-o",
            "a.xlsx",
            "--md",
            "a.xlsx",
        ],
    )
    .assert_one_error_line("a.xlsx");
    assert!(line.contains("both"), "{line}");
    // compare keeps its convention: usage errors exit 2.
    let r = run_in(
        d,
        &["compare", "t.json", "t.json", "--md", "v", "--json", "v"],
    );
    assert_eq!(r.code, Some(2), "{r:#?}");
    assert_eq!(r.stderr_lines().len(), 1, "{r:#?}");
    assert!(r.stderr.contains("--md and --json"), "{r:#?}");
    // Nothing was written and the trace is untouched.
    assert_eq!(names(d), ["t.json"]);
    assert_eq!(fs::read(&trace).unwrap(), original);
    // A workbook inside the CSV folder is fine.
    report(&["--csv", "c", "-o", "c/r.xlsx", "-q"]).assert_ok();
    assert!(d.join("c/r.xlsx").exists());
}

#[cfg(unix)]
/// Starts a report that pauses (test hook) after staging all its files,
/// waits until its staging folders exist, sends `signal` and returns the
/// exit code.
fn interrupt_report(d: &Path, signal: &str) -> Option<i32> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracelens"))
        .current_dir(d)
        .args(["report", "t.json", "--csv", "out/csv", "-o", "r.xlsx"])
        .args(["--md", "out/s.md", "-q"])
        .env("TRACELENS_TEST_PAUSE_BEFORE_COMMIT_MS", "20000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // Three target folders: d, out and out/csv.
    while leftovers(d).len() < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no staging folders appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "the run was not interrupted"
    );
    status.code()
}

#[cfg(unix)]
#[test]
fn sigterm_and_sigint_leave_no_staged_file_and_no_new_output() {
    let (tmp, _) = example_in_tempdir();
    let d = tmp.path();
    assert_eq!(interrupt_report(d, "TERM"), Some(143));
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    // The folders the run created are gone too.
    assert_eq!(names(d), ["t.json"]);

    // Interrupting a re-run keeps the previous outputs.
    run_in(
        d,
        &["report", "t.json", "--csv", "out/csv", "-o", "r.xlsx", "-q"],
    )
    .assert_ok();
    let before: Vec<_> = files_under(d)
        .into_iter()
        .map(|p| (fs::read(&p).unwrap(), p))
        .collect();
    assert_eq!(interrupt_report(d, "INT"), Some(130));
    let after: Vec<_> = files_under(d)
        .into_iter()
        .map(|p| (fs::read(&p).unwrap(), p))
        .collect();
    assert!(before == after, "outputs changed");
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}

#[test]
fn xlsx_text_cells_that_look_like_formulas_stay_text() {
    use calamine::{Data, Reader, Xlsx, open_workbook};
    let tmp = tempfile::tempdir().unwrap();
    let names = [r#"=HYPERLINK("x")"#, "@SUM(1)", "+1+2", "-3-4"];
    let text = fs::read_to_string(testdata("example.json")).unwrap();
    let renamed: Vec<String> = names
        .iter()
        .map(|n| serde_json::to_string(n).unwrap())
        .collect();
    let text = text
        .replace("\"aten::relu\"", &renamed[0])
        .replace("\"aten::copy_\"", &renamed[1])
        .replace("\"void warmup_kernel()\"", &renamed[2])
        .replace("\"void gemm_bf16_kernel<128, 64>(Params)\"", &renamed[3]);
    let trace = tmp.path().join("f.json");
    fs::write(&trace, text).unwrap();
    let book = tmp.path().join("f.xlsx");
    run(tracelens()
        .arg("report")
        .arg(&trace)
        .arg("-o")
        .arg(&book)
        .arg("-q"))
    .assert_ok();

    let mut wb: Xlsx<_> = open_workbook(&book).unwrap();
    let mut found = std::collections::HashSet::new();
    for sheet in wb.sheet_names() {
        let formulas = wb.worksheet_formula(&sheet).unwrap();
        assert!(
            formulas.used_cells().all(|(_, _, f)| f.is_empty()),
            "sheet {sheet} has a formula"
        );
        for (_, _, cell) in wb.worksheet_range(&sheet).unwrap().used_cells() {
            if let Data::String(s) = cell
                && names.contains(&s.as_str())
            {
                found.insert(s.clone());
            }
        }
    }
    // Every name made it into some sheet as literal text.
    assert_eq!(found.len(), names.len(), "{found:?}");
}

#[test]
fn a_sheet_over_the_xlsx_row_limit_is_refused_at_load() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Lowered through the test hook: testdata/rocprof/small.json has 6
    // dispatches (kernel_details rows), the XPlane profile 2 kernels.
    let report = |trace: &str, limit: &str, out: &[&str]| {
        run(tracelens()
            .current_dir(d)
            .env("TRACELENS_TEST_XLSX_ROW_LIMIT", limit)
            .arg("report")
            .arg(testdata(trace))
            .args(out)
            .arg("-q"))
    };
    let err = report("rocprof/small.json", "5", &["-o", "r.xlsx"])
        .assert_one_error_line("small.json: sheet kernel_details would have 6 rows");
    assert!(err.contains("(5)") && err.contains("--csv"), "{err}");
    let err = report("xplane/small.xplane.pb", "1", &["-o", "j.xlsx"])
        .assert_one_error_line("small.xplane.pb: sheet kernel_launchers would have 2 rows");
    assert!(err.contains("(1)"), "{err}");
    assert!(names(d).is_empty(), "{:?}", names(d));
    // At the limit the workbook is written; CSV sheets have no row limit.
    report("rocprof/small.json", "6", &["-o", "r.xlsx"]).assert_ok();
    report("rocprof/small.json", "1", &["--csv", "csv"]).assert_ok();
    assert_eq!(names(d), ["csv", "r.xlsx"]);
}
