//! `compare` refuses report inputs it cannot trust (exit 2, one line naming
//! the role and the file, no output written) instead of gating on them:
//! times that are not finite non-negative numbers, sheets cut short or
//! malformed, a workbook whose declared range would need a huge grid.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Run, run, testdata, tracelens, zip_of};

/// A folder with the CSV report of `testdata/example.json` as `base/`.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    run(tracelens()
        .arg("report")
        .arg(testdata("example.json"))
        .arg("--csv")
        .arg(&base)
        .arg("-q"))
    .assert_ok();
    (tmp, base)
}

/// A copy of report `from` as `dir/name`, with `sheet`.csv rewritten by `f`.
fn edited(from: &Path, name: &str, sheet: &str, f: impl FnOnce(Vec<u8>) -> Vec<u8>) -> PathBuf {
    let to = from.parent().unwrap().join(name);
    fs::create_dir(&to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
    let file = to.join(format!("{sheet}.csv"));
    let bytes = f(fs::read(&file).unwrap());
    fs::write(&file, bytes).unwrap();
    to
}

/// The gpu_timeline CSV with the `busy_time` time replaced by `v`.
fn busy_time(v: &str) -> impl FnOnce(Vec<u8>) -> Vec<u8> + '_ {
    move |b| {
        let text = String::from_utf8(b).unwrap();
        let lines: Vec<String> = text
            .lines()
            .map(|l| match l.strip_prefix("busy_time,") {
                Some(rest) => format!("busy_time,{v},{}", rest.split_once(',').unwrap().1),
                None => l.to_string(),
            })
            .collect();
        (lines.join("\n") + "\n").into_bytes()
    }
}

/// Every time of gpu_timeline multiplied by ten: a much slower run.
fn ten_times_slower(b: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8(b).unwrap();
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        let mut cells: Vec<String> = l.split(',').map(String::from).collect();
        if i > 0 {
            cells[1] = (cells[1].parse::<f64>().unwrap() * 10.0).to_string();
        }
        out += &(cells.join(",") + "\n");
    }
    out.into_bytes()
}

/// `compare BASE VARIANT --fail-above 5 --md DIR/v.md`.
fn compare(base: &Path, variant: &Path) -> Run {
    let md = base.parent().unwrap().join("v.md");
    run(tracelens()
        .arg("compare")
        .arg(base)
        .arg(variant)
        .args(["--fail-above", "5", "--md"])
        .arg(&md))
}

/// Exit 2, one stderr line with every part of `what`, no Markdown written.
fn assert_refused(r: &Run, what: &[&str]) {
    r.assert_no_panic();
    assert_eq!(r.code, Some(2), "{r:#?}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{:?}", r.stderr);
    assert!(lines[0].starts_with("tracelens: error: "), "{:?}", lines[0]);
    for w in what {
        assert!(lines[0].contains(w), "{w:?} not in {:?}", lines[0]);
    }
}

#[test]
fn a_baseline_busy_time_that_is_not_a_finite_time_is_refused() {
    let (tmp, base) = setup();
    let slow = edited(&base, "slow", "gpu_timeline", ten_times_slower);
    // The check works: the clean baseline flags the slower variant.
    assert_eq!(compare(&base, &slow).code, Some(1));
    fs::remove_file(tmp.path().join("v.md")).unwrap();
    for (name, v, shown) in [
        ("inf", "inf", "time ms is inf"),
        ("neg", "-1", "time ms is -1"),
        ("huge", "1e400", "time ms is inf"),
        ("nan", "nan", "time ms is missing"),
        ("text", "fast", "time ms is \"fast\", not a number"),
    ] {
        let bad = edited(&base, name, "gpu_timeline", busy_time(v));
        let file = format!("baseline {}", bad.join("gpu_timeline.csv").display());
        assert_refused(&compare(&bad, &slow), &[&file, "\"busy_time\"", shown]);
    }
    assert!(!tmp.path().join("v.md").exists());
}

/// A change to a sheet's bytes.
type Edit = Box<dyn FnOnce(Vec<u8>) -> Vec<u8>>;

#[test]
fn malformed_sheets_are_unreadable_input() {
    let (tmp, base) = setup();
    let cases: [(&str, &str, Edit, &str); 5] = [
        (
            "cut",
            "ops_summary",
            Box::new(|b| b[..b.len() / 2 + 1].to_vec()),
            "truncated",
        ),
        (
            "quote",
            "ops_summary",
            Box::new(|b| [b, b"\"aten::x,1\n".to_vec()].concat()),
            "quoted field is never closed",
        ),
        (
            "utf8",
            "gpu_timeline",
            Box::new(|b| [b, b"\xff\xfe,1,2\n".to_vec()].concat()),
            "not UTF-8",
        ),
        (
            "header",
            "gpu_timeline",
            Box::new(|b| {
                let end = b.iter().position(|&c| c == b'\n').unwrap();
                b[..=end].to_vec()
            }),
            "no rows",
        ),
        (
            "nocol",
            "gpu_timeline",
            Box::new(|b| {
                String::from_utf8(b)
                    .unwrap()
                    .replacen("time ms", "t", 1)
                    .into()
            }),
            "no \"time ms\" column",
        ),
    ];
    for (name, sheet, f, problem) in cases {
        let bad = edited(&base, name, sheet, f);
        let file = bad.join(format!("{sheet}.csv")).display().to_string();
        // As the variant it is named as the variant.
        let r = compare(&base, &bad);
        assert_refused(&r, &[&format!("variant 1 {file}"), problem]);
        let r = compare(&bad, &base);
        assert_refused(&r, &[&format!("baseline {file}"), problem]);
    }
    assert!(!tmp.path().join("v.md").exists());
    // A report compared with its own copy still passes.
    let same = edited(&base, "same", "gpu_timeline", |b| b);
    assert_eq!(compare(&base, &same).code, Some(0));
}

/// A minimal workbook whose one sheet holds a header cell at A1 and a cell
/// at XFD1048576, the last cell Excel has.
fn far_cell_workbook() -> Vec<u8> {
    const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    const PKG: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
    let sheet = format!(
        r#"<worksheet xmlns="{MAIN}"><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>type</t></is></c></row><row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData></worksheet>"#
    );
    let book = format!(
        r#"<workbook xmlns="{MAIN}" xmlns:r="{REL}"><sheets><sheet name="gpu_timeline" sheetId="1" r:id="rId1"/></sheets></workbook>"#
    );
    let book_rels = format!(
        r#"<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#
    );
    let root_rels = format!(
        r#"<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
    );
    let types = r#"<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#;
    zip_of(&[
        ("[Content_Types].xml", types.as_bytes()),
        ("_rels/.rels", root_rels.as_bytes()),
        ("xl/workbook.xml", book.as_bytes()),
        ("xl/_rels/workbook.xml.rels", book_rels.as_bytes()),
        ("xl/worksheets/sheet1.xml", sheet.as_bytes()),
    ])
}

#[test]
fn a_workbook_claiming_the_last_cell_is_read_sparsely_and_refused() {
    let (tmp, base) = setup();
    let book = tmp.path().join("far.xlsx");
    fs::write(&book, far_cell_workbook()).unwrap();
    // Under 4 GB of address space: a dense grid (2^34 cells) would abort.
    let script = format!(
        "ulimit -v 4000000; exec {} compare {} {} -q",
        env!("CARGO_BIN_EXE_tracelens"),
        book.display(),
        base.display()
    );
    let out = Command::new("sh").arg("-c").arg(script).output().unwrap();
    let r = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_refused(
        &r,
        &[
            &format!("baseline {}", book.display()),
            "sheet \"gpu_timeline\"",
            "1048576 rows x 16384 columns but only 2 are filled",
        ],
    );
}
