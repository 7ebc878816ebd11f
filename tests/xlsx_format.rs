//! The workbook people open: number formats per column kind and numeric
//! perf-model parameters stored as numbers, read back with calamine from a
//! small trace of our own and from a corpus trace (skipped, visibly, when
//! `../shared/corpus` is absent).

mod common;

use std::path::{Path, PathBuf};

use calamine::{Data, DataType, Reader, Xlsx, open_workbook};

/// `tracelens report TRACE -o <tmp>/r.xlsx -q EXTRA...`; the directory
/// (keep it alive) and the workbook path.
fn workbook(trace: &Path, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.xlsx");
    common::run(
        common::tracelens()
            .arg("report")
            .arg(trace)
            .arg("-o")
            .arg(&path)
            .arg("-q")
            .args(extra),
    )
    .assert_ok();
    (tmp, path)
}

/// One data worksheet (header in A1): its cells and the number format code
/// of each cell (None: General).
struct Sheet {
    header: Vec<String>,
    cells: calamine::Range<Data>,
    styles: calamine::StyleRange,
}

impl Sheet {
    fn open(path: &Path, name: &str) -> Sheet {
        let mut wb: Xlsx<_> = open_workbook(path).unwrap();
        let cells = wb.worksheet_range(name).unwrap();
        let styles = wb.worksheet_style(name).unwrap();
        let header = (0..cells.width())
            .map(|c| match cells.get((0, c)) {
                Some(Data::String(s)) => s.clone(),
                other => panic!("header cell {c} of {name}: {other:?}"),
            })
            .collect();
        Sheet {
            header,
            cells,
            styles,
        }
    }

    fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name:?} in {:?}", self.header))
    }

    fn cell(&self, row: usize, name: &str) -> &Data {
        self.cells
            .get((row, self.col(name)))
            .unwrap_or(&Data::Empty)
    }

    /// The number format code of data row `row` (1-based worksheet row).
    fn format(&self, row: usize, name: &str) -> Option<String> {
        self.styles
            .get((row as u32, self.col(name) as u32))
            .and_then(|s| s.number_format.as_ref())
            .map(|f| f.format_code.clone())
    }
}

/// Checks that the GEMM sheet's `param: M/N/K` cells are numbers, tuples
/// stay text, and kernel times and counts carry their formats.
fn check_gemm(path: &Path) {
    let s = Sheet::open(path, "GEMM");
    assert!(s.cells.height() > 1, "GEMM has no rows");
    for name in ["param: M", "param: N", "param: K"] {
        for row in 1..s.cells.height() {
            match s.cell(row, name) {
                Data::Float(x) => assert!(*x >= 1.0 && x.fract() == 0.0, "{name} {x}"),
                Data::Int(_) => {}
                other => panic!("{name} row {row} is not a number: {other:?}"),
            }
        }
    }
    // Tuples stay text.
    assert!(matches!(s.cell(1, "param: stride_A"), Data::String(_)));
    let want = [
        ("Kernel Time (µs)_sum", "#,##0.00"),
        ("name_count", "#,##0"),
    ];
    for (col, code) in want {
        assert_eq!(s.format(1, col).as_deref(), Some(code), "{col}");
    }
}

/// Checks the percent, time and count formats of the op summaries.
fn check_summaries(path: &Path) {
    let s = Sheet::open(path, "ops_summary");
    for (col, code) in [
        ("total_direct_kernel_time_ms", "#,##0.000"),
        ("total_direct_kernel_time_sum", "#,##0.00"),
        ("Count", "#,##0"),
        ("Percentage (%)", "#,##0.00\"%\""),
        ("Cumulative Percentage (%)", "#,##0.00\"%\""),
    ] {
        assert_eq!(s.format(1, col).as_deref(), Some(code), "{col}");
    }
    // Percentages stay in percent: the last cumulative share is 100, not 1.
    let last = s.cells.height() - 1;
    match s.cell(last, "Cumulative Percentage (%)") {
        Data::Float(x) => assert!((x - 100.0).abs() < 1e-6, "{x}"),
        other => panic!("{other:?}"),
    }
    let t = Sheet::open(path, "gpu_timeline");
    assert_eq!(t.format(1, "time ms").as_deref(), Some("#,##0.000"));
    assert_eq!(t.format(1, "percent").as_deref(), Some("#,##0.00\"%\""));
    // Text columns keep General.
    let general = t.format(1, "type");
    assert!(
        matches!(general.as_deref(), None | Some("General")),
        "{general:?}"
    );
}

#[test]
fn small_trace_workbook_is_formatted() {
    let (_tmp, path) = workbook(&common::testdata("example.json"), &[]);
    check_gemm(&path);
    check_summaries(&path);
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn corpus_workbook_is_formatted() {
    let trace = common::shared().join("corpus/pytorch/mi300_qwen15_05b.json.gz");
    let (_tmp, path) = workbook(&trace, &["--gpu-arch", "MI300X"]);
    check_gemm(&path);
    check_summaries(&path);
    let s = Sheet::open(&path, "GEMM");
    assert_eq!(
        s.format(1, "Pct Roofline_mean").as_deref(),
        Some("#,##0.00\"%\"")
    );
    // The largest GEMM of this trace is 8944 x 2816 x 1024.
    let ms: Vec<f64> = (1..s.cells.height())
        .filter_map(|r| s.cell(r, "param: M").get_float())
        .collect();
    assert!(ms.contains(&8944.0), "{ms:?}");
    // The chart sheet lists the roof lines it draws.
    let mut wb: Xlsx<_> = open_workbook(&path).unwrap();
    let chart = wb.worksheet_range("roofline_chart").unwrap();
    let text: Vec<String> = chart
        .used_cells()
        .filter_map(|(_, _, d)| match d {
            Data::String(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    assert!(
        text.iter().any(|t| t == "MI300X memory roof 5.3 TB/s"),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t == "MI300X matrix_bf16 roof 708 TFLOP/s"),
        "{text:?}"
    );
}
