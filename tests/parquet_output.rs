//! `--parquet DIR` (issue 15): one `<sheet>.parquet` per sheet in `report`,
//! `collectives`, `compare` and `diff`. Each run also writes `--csv`, and
//! every Parquet file is read back with the parquet crate and checked
//! against its CSV sheet cell by cell: numbers as f64, text exactly, nulls
//! where the CSV field is empty, the same column names in the same order.

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};

use common::{Run, entries, run, testdata, tracelens};
use parquet::basic::{ConvertedType, Type as PhysicalType};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use tracelens::table::typing::NA_STRINGS;

/// A Parquet sheet read back: its columns (name, physical type, converted
/// type) and rows.
struct Sheet {
    columns: Vec<(String, PhysicalType, ConvertedType)>,
    rows: Vec<Vec<Field>>,
}

impl Sheet {
    fn load(path: &Path) -> Sheet {
        let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let reader = SerializedFileReader::new(file)
            .unwrap_or_else(|e| panic!("{}: not a Parquet file: {e}", path.display()));
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let columns = schema
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), c.physical_type(), c.converted_type()))
            .collect();
        let rows = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| {
                r.unwrap()
                    .get_column_iter()
                    .map(|(_, f)| f.clone())
                    .collect()
            })
            .collect();
        Sheet { columns, rows }
    }

    /// The physical and converted type of column `name`.
    fn type_of(&self, name: &str) -> (PhysicalType, ConvertedType) {
        let c = self.columns.iter().find(|c| c.0 == name);
        let c = c.unwrap_or_else(|| panic!("no column {name:?} in {:?}", self.columns));
        (c.1, c.2)
    }
}

/// Whether the Parquet cell `f` holds what the CSV field `csv` says, as
/// pandas reads it: numbers by value, text exactly, bools as `True` /
/// `False` (any case), null for an empty field (or, in a number column,
/// one of pandas' missing-value words).
fn same_cell(f: &Field, csv: &str) -> bool {
    let number = |x: f64| csv.trim().parse::<f64>().is_ok_and(|y| y == x);
    match f {
        Field::Null => csv.is_empty() || NA_STRINGS.contains(&csv),
        Field::Str(s) => s == csv,
        Field::Long(i) => number(*i as f64),
        Field::Double(x) => number(*x),
        Field::Bool(b) => csv.eq_ignore_ascii_case(if *b { "true" } else { "false" }),
        other => panic!("unexpected Parquet cell {other:?}"),
    }
}

/// The `*.<ext>` file stems directly in `dir`, sorted.
fn stems(dir: &Path, ext: &str) -> Vec<String> {
    entries(dir)
        .into_iter()
        .filter_map(|n| n.strip_suffix(&format!(".{ext}")).map(str::to_string))
        .collect()
}

/// Whether `<dir>/<name>.csv` is a sheet without columns (compare's empty
/// `*_only_*` sheets): a blank line, which has no Parquet file.
fn no_columns(dir: &Path, name: &str) -> bool {
    std::fs::read(dir.join(format!("{name}.csv"))).unwrap() == b"\n"
}

/// Every CSV sheet with columns in `csv_dir` has a Parquet file in `pq_dir`
/// (and the other way round) with the same columns and cells. Returns the
/// sheets.
fn assert_folders_agree(csv_dir: &Path, pq_dir: &Path) -> Vec<String> {
    let mut sheets = stems(csv_dir, "csv");
    assert!(!sheets.is_empty(), "no CSV sheets in {}", csv_dir.display());
    sheets.retain(|s| !no_columns(csv_dir, s));
    assert_eq!(stems(pq_dir, "parquet"), sheets);
    for name in &sheets {
        assert_sheet_agrees(csv_dir, pq_dir, name);
    }
    sheets
}

/// `<pq_dir>/<name>.parquet` holds the cells of `<csv_dir>/<name>.csv`.
fn assert_sheet_agrees(csv_dir: &Path, pq_dir: &Path, name: &str) {
    let pq = Sheet::load(&pq_dir.join(format!("{name}.parquet")));
    let csv = common::Table::load(csv_dir, name);
    let header: Vec<&str> = pq.columns.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(header, csv.header, "{name}: column names");
    assert_eq!(pq.rows.len(), csv.rows.len(), "{name}: row count");
    for (i, (p, c)) in pq.rows.iter().zip(&csv.rows).enumerate() {
        for (j, (f, text)) in p.iter().zip(c).enumerate() {
            assert!(
                same_cell(f, text),
                "{name} row {i} column {:?}: Parquet {f:?}, CSV {text:?}",
                csv.header[j]
            );
        }
    }
}

/// `tracelens ARGS --csv <tmp>/csv --parquet <tmp>/pq -q` in a fresh
/// folder; returns the folder (keep it alive) and the run.
fn run_both(args: &[&str]) -> (tempfile::TempDir, Run) {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tracelens().current_dir(tmp.path()).args(args).args([
        "--csv",
        "csv",
        "--parquet",
        "pq",
        "-q",
    ]));
    (tmp, r)
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn report_parquet_equals_csv_and_writes_no_workbook() {
    let trace = testdata("example.json");
    let (tmp, r) = run_both(&["report", path_str(&trace)]);
    r.assert_ok();
    // --csv and --parquet asked for: no default workbook beside the trace
    // or here.
    assert_eq!(entries(tmp.path()), ["csv", "pq"]);
    let sheets = assert_folders_agree(&tmp.path().join("csv"), &tmp.path().join("pq"));
    for s in common::SHEETS {
        assert!(sheets.iter().any(|x| x == s), "{s} missing: {sheets:?}");
    }
}

#[test]
fn report_columns_are_typed() {
    let trace = testdata("example.json");
    let (tmp, r) = run_both(&["report", path_str(&trace)]);
    r.assert_ok();
    let pq = tmp.path().join("pq");
    let text = (PhysicalType::BYTE_ARRAY, ConvertedType::UTF8);
    let int = (PhysicalType::INT64, ConvertedType::NONE);
    let double = (PhysicalType::DOUBLE, ConvertedType::NONE);
    let timeline = Sheet::load(&pq.join("gpu_timeline.parquet"));
    assert_eq!(timeline.type_of("type"), text);
    assert_eq!(timeline.type_of("time ms"), double);
    assert_eq!(timeline.type_of("percent"), double);
    let kernels = Sheet::load(&pq.join("kernel_summary.parquet"));
    assert_eq!(kernels.type_of("Kernel name"), text);
    assert_eq!(kernels.type_of("Kernel stream"), int);
    assert_eq!(kernels.type_of("Kernel duration (µs)_count"), int);
    assert_eq!(kernels.type_of("Kernel duration (µs)_sum"), double);
    let hist = Sheet::load(&pq.join("short_kernel_histogram.parquet"));
    assert_eq!(hist.type_of("count"), int);
    let args = Sheet::load(&pq.join("ops_unique_args.parquet"));
    // A Python repr column is text; a float column of NaNs stays a float
    // column, all null.
    assert_eq!(args.type_of("Input Dims"), text);
    assert_eq!(args.type_of("total_direct_kernel_time_std"), double);
    let std = args
        .columns
        .iter()
        .position(|c| c.0 == "total_direct_kernel_time_std");
    assert!(args.rows.iter().all(|r| r[std.unwrap()] == Field::Null));
    // The param columns hold text; stored as read_csv types it.
    let gemm = Sheet::load(&pq.join("GEMM.parquet"));
    assert_eq!(gemm.type_of("param: M"), int);
    let boolean = (PhysicalType::BOOLEAN, ConvertedType::NONE);
    assert_eq!(gemm.type_of("param: bias"), boolean);
    assert_eq!(gemm.type_of("param: stride_A"), text);
    assert_eq!(gemm.type_of("GFLOPS_first"), double);
}

#[test]
fn parquet_alone_writes_only_the_parquet_folder() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(testdata("example.json"), tmp.path().join("t.json")).unwrap();
    let r = run(tracelens()
        .current_dir(tmp.path())
        .args(["report", "t.json", "--parquet", "pq"]));
    r.assert_ok();
    assert!(r.stdout.contains("pq/ (15 Parquet sheets)"), "{}", r.stdout);
    assert_eq!(entries(tmp.path()), ["pq", "t.json"]);
    assert!(stems(&tmp.path().join("pq"), "parquet").len() >= 7);
}

#[test]
fn a_rerun_replaces_the_sheets_as_a_unit() {
    let tmp = tempfile::tempdir().unwrap();
    let pq = tmp.path().join("pq");
    let report = |trace: &str| {
        run(tracelens()
            .arg("report")
            .arg(testdata(trace))
            .arg("--parquet")
            .arg(&pq)
            .arg("-q"))
        .assert_ok();
    };
    report("example.json");
    assert!(entries(&pq).contains(&"gpu_timeline.parquet".to_string()));
    // The user's files stay, even a Parquet file; the earlier run's sheets
    // that this run (a CPU-only trace) does not write go.
    std::fs::write(pq.join("mine.parquet"), b"PAR1").unwrap();
    std::fs::write(pq.join("notes.txt"), b"keep").unwrap();
    report("cpu_only.json");
    assert_eq!(
        common::all_entries(&pq),
        [
            common::MANIFEST,
            "findings.parquet",
            "health.parquet",
            "mine.parquet",
            "notes.txt",
            "short_kernel_histogram.parquet",
            "short_kernels_summary.parquet"
        ]
    );
}

#[test]
fn unwritable_folder_is_one_error_line_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    let trace = testdata("example.json");
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("report")
        .arg(&trace)
        .args(["--csv", "csv", "--parquet"])
        .arg(blocker.join("sub"))
        .arg("-q"));
    let line = r.assert_one_error_line("file/sub");
    assert!(line.contains("Parquet"), "{line}");
    // All or nothing: the CSV folder was not written either.
    assert_eq!(entries(tmp.path()), ["file"]);
}

#[test]
fn o_naming_a_parquet_file_points_to_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = testdata("example.json");
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("report")
        .arg(&trace)
        .args(["-o", "r.parquet"]));
    let line = r.assert_one_error_line("r.parquet");
    assert!(line.contains("--parquet DIR"), "{line}");
    assert!(entries(tmp.path()).is_empty());
}

/// A one-rank job of `example.json` (it has an all-reduce kernel).
fn one_rank_job() -> tempfile::TempDir {
    let job = tempfile::tempdir().unwrap();
    std::fs::copy(testdata("example.json"), job.path().join("rank0.json")).unwrap();
    job
}

#[test]
fn collectives_parquet_equals_csv() {
    let job = one_rank_job();
    let d = path_str(job.path());
    let (tmp, r) = run_both(&["collectives", "--trace-dir", d, "--world-size", "1"]);
    r.assert_ok();
    assert_eq!(entries(tmp.path()), ["csv", "pq"]);
    // No default workbook in the job folder either.
    assert_eq!(entries(job.path()), ["rank0.json"]);
    assert_folders_agree(&tmp.path().join("csv"), &tmp.path().join("pq"));
}

#[test]
fn compare_parquet_equals_csv() {
    let a = testdata("example.json");
    let b = testdata("no_flows.json");
    let (tmp, r) = run_both(&["compare", path_str(&a), path_str(&b), "--names", "a", "b"]);
    r.assert_ok();
    assert_eq!(entries(tmp.path()), ["csv", "pq"]);
    let sheets = assert_folders_agree(&tmp.path().join("csv"), &tmp.path().join("pq"));
    assert!(sheets.len() > 1, "{sheets:?}");
}

#[test]
fn diff_parquet_equals_its_csvs() {
    let base = testdata("diff/split_base.json");
    let variant = testdata("diff/split_variant.json");
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("diff")
        .arg(&base)
        .arg(&variant)
        .args(["--out", "out", "--parquet", "pq", "-q"]));
    r.assert_ok();
    let sheets = assert_folders_agree(&tmp.path().join("out"), &tmp.path().join("pq"));
    assert_eq!(
        sheets,
        ["diff_stats", "diff_stats_unique_args_summary", "health"]
    );
    // --parquet alone: no default diff folder.
    let alone = tempfile::tempdir().unwrap();
    run(tracelens()
        .current_dir(alone.path())
        .arg("diff")
        .arg(&base)
        .arg(&variant)
        .args(["--parquet", "pq", "-q"]))
    .assert_ok();
    assert_eq!(entries(alone.path()), ["pq"]);
    assert_eq!(
        stems(&alone.path().join("pq"), "parquet"),
        ["diff_stats", "diff_stats_unique_args_summary", "health"]
    );
}

/// The corpus trace `rel` (under `../shared/corpus`).
fn corpus(rel: &str) -> PathBuf {
    common::shared().join("corpus").join(rel)
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn corpus_report_parquet_equals_csv() {
    let trace = corpus("pytorch/h100_bert_small.json.gz");
    let (tmp, r) = run_both(&["report", path_str(&trace), "--gpu-arch", "H100"]);
    r.assert_ok();
    let sheets = assert_folders_agree(&tmp.path().join("csv"), &tmp.path().join("pq"));
    assert!(sheets.iter().any(|s| s == "GEMM"), "{sheets:?}");
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn corpus_collectives_parquet_equals_csv() {
    let job = corpus("multirank/dlrm_v100_8rank");
    let (tmp, r) = run_both(&[
        "collectives",
        "--trace-dir",
        path_str(&job),
        "--world-size",
        "8",
    ]);
    r.assert_ok();
    let sheets = assert_folders_agree(&tmp.path().join("csv"), &tmp.path().join("pq"));
    assert!(sheets.len() > 3, "{sheets:?}");
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn corpus_compare_parquet_equals_csv() {
    let pt = corpus("pytorch");
    let (tmp, r) = run_both(&[
        "compare",
        path_str(&pt.join("h100_qwen15_05b.ref")),
        path_str(&pt.join("mi300_qwen15_05b.ref")),
        "--names",
        "h100",
        "mi300",
    ]);
    r.assert_ok();
    assert_folders_agree(&tmp.path().join("csv"), &tmp.path().join("pq"));
}
