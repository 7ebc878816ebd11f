//! Workbooks that inflate far beyond their size, read back by `compare`:
//! reading is bounded by what it reads. A shared string used by thousands
//! of cells is held once; a cell's text, a zip member and the whole read
//! have caps, refused with one line naming the file (exit 2, nothing
//! written); sheets `compare` does not read are never inflated. Every run
//! is under 4 GB of address space, where the amplified reads would abort.

mod common;
#[path = "common/hostile_zip.rs"]
mod hostile_zip;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::Run;
use hostile_zip::{
    Member, SHEET_RUN_END, TIMELINE_ROWS, shared_strings, sheet_run_start, sheet_xml, workbook,
};

/// `compare A B --md DIR/v.md -q` under `ulimit -v 4000000`, with `env` set.
fn compare(a: &Path, b: &Path, env: &[(&str, &str)]) -> Run {
    let md = a.parent().unwrap().join("v.md");
    let script = format!(
        "ulimit -v 4000000; exec {} compare '{}' '{}' --md '{}' -q",
        env!("CARGO_BIN_EXE_tracelens"),
        a.display(),
        b.display(),
        md.display()
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .env_remove("TRACELENS_MAX_XLSX_MB");
    for (k, v) in env {
        cmd.env(k, v);
    }
    common::run(&mut cmd)
}

/// Writes `book` as `dir/a.xlsx` and `dir/b.xlsx` (compared with each other).
fn two_copies(dir: &Path, book: &[u8]) -> (PathBuf, PathBuf) {
    let (a, b) = (dir.join("a.xlsx"), dir.join("b.xlsx"));
    fs::write(&a, book).unwrap();
    fs::write(&b, book).unwrap();
    (a, b)
}

/// Exit 2, one line naming `book` and holding each of `what`, no Markdown.
fn assert_refused(r: &Run, book: &Path, what: &[&str]) {
    r.assert_no_panic();
    assert_eq!(r.code, Some(2), "{r:#?}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{:?}", r.stderr);
    assert!(lines[0].starts_with("tracelens: error: "), "{:?}", lines[0]);
    assert!(
        lines[0].contains(&book.display().to_string()),
        "{:?}",
        lines[0]
    );
    for w in what {
        assert!(lines[0].contains(w), "{w:?} not in {:?}", lines[0]);
    }
    assert!(!book.parent().unwrap().join("v.md").exists());
}

/// The comparison ran and passed (the two workbooks are equal).
fn assert_compared(r: &Run, dir: &Path) {
    assert_eq!(r.code, Some(0), "{r:#?}");
    assert!(dir.join("v.md").is_file());
}

/// A `gpu_timeline` whose busy_time row also has `cells` columns, each
/// cell the shared string 0 (`header` names them).
fn timeline_sharing(cells: usize) -> String {
    let mut head = String::from(
        r#"<row r="1"><c t="inlineStr"><is><t>type</t></is></c><c t="inlineStr"><is><t>time ms</t></is></c>"#,
    );
    let mut busy =
        String::from(r#"<row r="2"><c t="inlineStr"><is><t>busy_time</t></is></c><c><v>5</v></c>"#);
    for i in 0..cells {
        head += &format!(r#"<c t="inlineStr"><is><t>n{i}</t></is></c>"#);
        busy += r#"<c t="s"><v>0</v></c>"#;
    }
    sheet_xml(&format!("{head}</row>{busy}</row>"))
}

/// A `gpu_timeline` workbook whose 8,000 busy-time cells all use one
/// shared string of `len` bytes.
fn sharing_workbook(len: usize) -> Vec<u8> {
    let text = "x".repeat(len);
    workbook(
        &["gpu_timeline"],
        vec![
            Member::new(
                "xl/worksheets/sheet1.xml",
                timeline_sharing(8000).as_bytes(),
            ),
            shared_strings(&[&text]),
        ],
    )
}

#[test]
fn a_shared_string_used_by_thousands_of_cells_is_held_once() {
    // 8,000 cells of one 512 KiB string: 4 GiB as copies, per workbook.
    let tmp = tempfile::tempdir().unwrap();
    let book = sharing_workbook(512 << 10);
    assert!(book.len() < 128 << 10, "{} bytes on disk", book.len());
    let (a, b) = two_copies(tmp.path(), &book);
    assert_compared(&compare(&a, &b, &[]), tmp.path());
}

#[test]
fn a_cell_text_over_the_cap_is_refused() {
    // The issue's workbook: one 8 MiB shared string in 8,000 cells.
    let tmp = tempfile::tempdir().unwrap();
    let book = sharing_workbook(8 << 20);
    let (a, b) = two_copies(tmp.path(), &book);
    let r = compare(&a, &b, &[]);
    assert_refused(
        &r,
        &a,
        &["gpu_timeline", "cell C2 holds 8 MiB of text", "(1 MiB)"],
    );
    // An inline string of 2 MiB, too.
    let rows = format!(
        r#"{TIMELINE_ROWS}<row r="4"><c r="A4" t="inlineStr"><is><t>{}</t></is></c></row>"#,
        "y".repeat(2 << 20)
    );
    let book = workbook(
        &["gpu_timeline"],
        vec![Member::new(
            "xl/worksheets/sheet1.xml",
            sheet_xml(&rows).as_bytes(),
        )],
    );
    let (a, b) = two_copies(tmp.path(), &book);
    assert_refused(&compare(&a, &b, &[]), &a, &["cell A4 holds 2 MiB of text"]);
}

/// A sheet member holding one inline text run of `gib` GiB (a few MB on disk).
fn run_sheet(member: &str, gib: u64) -> Member {
    Member::run(
        member,
        &sheet_run_start(TIMELINE_ROWS),
        b'a',
        gib << 30,
        SHEET_RUN_END,
    )
}

#[test]
fn a_sheet_compare_does_not_read_is_never_inflated() {
    // A 3 GiB text run in kernel_details (3 MB on disk); compare reads
    // gpu_timeline only.
    let tmp = tempfile::tempdir().unwrap();
    let timeline = Member::new(
        "xl/worksheets/sheet1.xml",
        sheet_xml(TIMELINE_ROWS).as_bytes(),
    );
    let book = workbook(
        &["gpu_timeline", "kernel_details"],
        vec![timeline, run_sheet("xl/worksheets/sheet2.xml", 3)],
    );
    assert!(book.len() < 8 << 20, "{} bytes on disk", book.len());
    let (a, b) = two_copies(tmp.path(), &book);
    assert_compared(&compare(&a, &b, &[]), tmp.path());
}

#[test]
fn a_part_over_the_member_cap_is_refused_before_it_is_inflated() {
    // The same run in the sheet compare reads: 3 GiB > a quarter of the
    // default 4096 MiB budget.
    let tmp = tempfile::tempdir().unwrap();
    let book = workbook(
        &["gpu_timeline"],
        vec![run_sheet("xl/worksheets/sheet1.xml", 3)],
    );
    let (a, b) = two_copies(tmp.path(), &book);
    let r = compare(&a, &b, &[]);
    assert_refused(
        &r,
        &a,
        &[
            "\"xl/worksheets/sheet1.xml\" inflates to 3072.0 MiB",
            "(1024 MiB; raise the limit with TRACELENS_MAX_XLSX_MB)",
        ],
    );
    // A shared-string table of 2 GiB, under a lowered budget: the cap is a
    // quarter of it.
    let sst = Member::run(
        "xl/sharedStrings.xml",
        r#"<sst count="1" uniqueCount="1"><si><t>"#,
        b'b',
        2 << 30,
        "</t></si></sst>",
    );
    let timeline = Member::new(
        "xl/worksheets/sheet1.xml",
        sheet_xml(TIMELINE_ROWS).as_bytes(),
    );
    let book = workbook(&["gpu_timeline"], vec![timeline, sst]);
    let (a, b) = two_copies(tmp.path(), &book);
    let r = compare(&a, &b, &[("TRACELENS_MAX_XLSX_MB", "4000")]);
    assert_refused(
        &r,
        &a,
        &[
            "\"xl/sharedStrings.xml\" inflates to 2048.0 MiB",
            "(1000 MiB",
        ],
    );
}

#[test]
fn a_declared_count_of_shared_strings_is_charged_before_it_is_reserved() {
    // A 1 KB table declaring 10^14 strings (the reader reserves room for
    // as many): refused, not an aborted allocation.
    let tmp = tempfile::tempdir().unwrap();
    let sst = Member::new(
        "xl/sharedStrings.xml",
        br#"<sst count="1" uniqueCount="100000000000000"><si><t>a</t></si></sst>"#,
    );
    let timeline = Member::new(
        "xl/worksheets/sheet1.xml",
        sheet_xml(TIMELINE_ROWS).as_bytes(),
    );
    let book = workbook(&["gpu_timeline"], vec![timeline, sst]);
    let (a, b) = two_copies(tmp.path(), &book);
    let r = compare(&a, &b, &[]);
    assert_refused(
        &r,
        &a,
        &[
            "declaring 100000000000000 shared strings",
            "TRACELENS_MAX_XLSX_MB",
        ],
    );
}

#[test]
fn the_whole_read_is_bounded_by_a_budget_the_user_sets() {
    // 1,200 rows of ten cells: 220 KB of XML (under the part cap of a
    // 1 MiB budget) whose cells and grid take 1.2 MB more.
    let tmp = tempfile::tempdir().unwrap();
    let mut rows = String::from(TIMELINE_ROWS);
    for r in 0..1200 {
        rows += &format!(r#"<row><c t="inlineStr"><is><t>t{}</t></is></c>"#, r % 16);
        rows += &r#"<c><v>0</v></c>"#.repeat(9);
        rows += "</row>";
    }
    let book = workbook(
        &["gpu_timeline"],
        vec![Member::new(
            "xl/worksheets/sheet1.xml",
            sheet_xml(&rows).as_bytes(),
        )],
    );
    let (a, b) = two_copies(tmp.path(), &book);
    let r = compare(&a, &b, &[("TRACELENS_MAX_XLSX_MB", "1")]);
    assert_refused(
        &r,
        &a,
        &["past 1 MiB read and held (raise the limit with TRACELENS_MAX_XLSX_MB)"],
    );
    let r = compare(&a, &b, &[("TRACELENS_MAX_XLSX_MB", "lots")]);
    assert_refused(&r, &a, &["TRACELENS_MAX_XLSX_MB must be a whole number"]);
}

#[test]
fn a_member_inflating_past_its_declared_size_is_stopped_there() {
    // Declares 1 KiB, inflates to 1 GiB: the zip reader stops at the
    // declared size, the one charged.
    let tmp = tempfile::tempdir().unwrap();
    let sheet = run_sheet("xl/worksheets/sheet1.xml", 1).declaring(1 << 10);
    let book = workbook(&["gpu_timeline"], vec![sheet]);
    let (a, b) = two_copies(tmp.path(), &book);
    let r = compare(&a, &b, &[]);
    assert_refused(&r, &a, &["gpu_timeline"]);
}

#[test]
fn a_real_report_workbook_still_compares() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.xlsx");
    common::run(
        common::tracelens()
            .arg("report")
            .arg(common::testdata("example.json"))
            .arg("-o")
            .arg(&a)
            .arg("-q"),
    )
    .assert_ok();
    let b = tmp.path().join("b.xlsx");
    fs::copy(&a, &b).unwrap();
    assert_compared(&compare(&a, &b, &[]), tmp.path());
    // Under a small budget too: a report is small.
    fs::remove_file(tmp.path().join("v.md")).unwrap();
    assert_compared(
        &compare(&a, &b, &[("TRACELENS_MAX_XLSX_MB", "64")]),
        tmp.path(),
    );
}
