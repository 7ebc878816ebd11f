//! The library API on the test traces: what `tracelens::analyze` and its
//! siblings return, the loader needs they decide, and their typed errors.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use tracelens::error::{CompareInputError, LoadError, RankError, ReadError, RooflineError};
use tracelens::load::load;
use tracelens::trace::Needs;
use tracelens::{AnalyzeOptions, CollectivesOptions, Error, RooflineOp, RooflineQuery, Step};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

fn names(sheets: &[tracelens::table::Table]) -> Vec<&str> {
    sheets.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn analyze_returns_the_report_sheets_in_order() {
    let report = tracelens::analyze(&testdata("example.json"), &AnalyzeOptions::default()).unwrap();
    assert_eq!(
        names(&report.sheets),
        [
            "gpu_timeline",
            "ops_summary_by_category",
            "ops_summary",
            "ops_unique_args",
            "unified_perf_summary",
            "GEMM",
            "UnaryElementwise",
            "kernel_summary",
            "short_kernel_histogram",
            "short_kernels_summary",
            "idle_breakdown",
            "idle_causes",
            "idle_top_gaps",
            "health",
            "findings",
        ]
    );
    assert!(report.timeline.is_some());
    assert_eq!(report.quality.unlinked_gpu_events, 1);
}

#[test]
fn gpu_less_trace_keeps_only_the_short_kernel_sheets() {
    let report =
        tracelens::analyze(&testdata("cpu_only.json"), &AnalyzeOptions::default()).unwrap();
    assert_eq!(
        names(&report.sheets),
        [
            "short_kernel_histogram",
            "short_kernels_summary",
            "health",
            "findings"
        ]
    );
    assert_eq!(report.quality.gpu_events, 0);
    // No GPU events: the health gate fails.
    let d = &report.diagnosis;
    assert_eq!(d.verdict(), tracelens::analysis::diagnosis::Status::Fail);
}

#[test]
fn progress_sees_every_step_in_order() {
    let seen = RefCell::new(Vec::new());
    let record = |s: Step| seen.borrow_mut().push(s);
    let opts = AnalyzeOptions {
        progress: Some(&record),
        ..AnalyzeOptions::default()
    };
    tracelens::analyze(&testdata("no_flows.json"), &opts).unwrap();
    assert_eq!(
        *seen.borrow(),
        [Step::Loading, Step::BuildingTree, Step::ComputingSheets]
    );
}

#[test]
fn report_needs_are_the_events_and_a_full_load_agrees() {
    let needs = tracelens::report_needs();
    // No report sheet reads python frames or instant events.
    assert_eq!(needs, Needs::EVENTS);
    // A full load gives the same report as the lean one.
    let mut full = load(&testdata("example.json"), &Needs::ALL).unwrap();
    let mut lean = load(&testdata("example.json"), &needs).unwrap();
    let a = tracelens::analyze_trace(&mut full, &AnalyzeOptions::default()).unwrap();
    let b = tracelens::analyze_trace(&mut lean, &AnalyzeOptions::default()).unwrap();
    assert_eq!(a.sheets, b.sheets);
    assert!(a.sheets.iter().any(|s| s.name == "findings"));
}

#[test]
fn load_errors_are_typed_and_name_the_file() {
    let path = testdata("bad/not_a_trace.json");
    let err = tracelens::analyze(&path, &AnalyzeOptions::default())
        .err()
        .expect("not a trace");
    assert!(matches!(
        &err,
        Error::Load { path: p, error: LoadError::NotATrace(_) } if *p == path
    ));
    assert!(err.to_string().starts_with(&path.display().to_string()));
    let missing = tracelens::load_tree(&testdata("nope.json")).err().unwrap();
    assert!(matches!(
        missing,
        Error::Load {
            error: LoadError::Io(_),
            ..
        }
    ));
}

#[test]
fn load_tree_keeps_python_frames() {
    let t = tracelens::load_tree(&testdata("example.json")).unwrap();
    assert!(!t.trace.is_empty());
    assert!(t.tree.gpu_total > 0);
}

#[test]
fn roofline_checks_shapes_then_runs_the_model() {
    let gemm = |m| RooflineQuery {
        op: RooflineOp::Gemm {
            m,
            n: 1024,
            k: 512,
            batch: None,
            bias: false,
        },
        dtype: "bf16".into(),
        gpu_arch: None,
        time_us: None,
    };
    assert!(tracelens::roofline(&gemm(256)).is_ok());
    let err = tracelens::roofline(&gemm(-1)).err().unwrap();
    assert!(matches!(
        err,
        Error::Roofline(RooflineError::NotPositive {
            what: "m",
            value: -1
        })
    ));
    assert_eq!(err.to_string(), "m must be positive, got -1");
    let bad_dtype = RooflineQuery {
        dtype: "int3".into(),
        ..gemm(1)
    };
    assert!(matches!(
        tracelens::roofline(&bad_dtype),
        Err(Error::Roofline(RooflineError::UnknownDtype { .. }))
    ));
}

#[test]
fn compare_inputs_are_tagged_and_read_back() {
    let traces = [testdata("example.json"), testdata("no_flows.json")];
    let read = tracelens::load_compare_inputs(&traces, &[]).unwrap();
    let tags: Vec<&str> = read.inputs.iter().map(|i| i.tag.as_str()).collect();
    assert_eq!(tags, ["example", "no_flows"]);
    // One file twice: the default tags are made distinct; repeated
    // --names are refused.
    let same = [testdata("example.json"), testdata("example.json")];
    let read = tracelens::load_compare_inputs(&same, &[]).unwrap();
    let tags: Vec<&str> = read.inputs.iter().map(|i| i.tag.as_str()).collect();
    assert_eq!(tags, ["example", "example_2"]);
    assert!(matches!(
        tracelens::load_compare_inputs(&same, &["a".into(), "a".into()]),
        Err(Error::Compare(CompareInputError::TagRepeats(t))) if t == "a"
    ));
    assert!(matches!(
        tracelens::load_compare_inputs(&traces, &["a".into()]),
        Err(Error::Compare(CompareInputError::TagCount {
            names: 1,
            inputs: 2
        }))
    ));
}

#[test]
fn read_report_gives_back_the_written_sheets() {
    let report = tracelens::analyze(&testdata("example.json"), &AnalyzeOptions::default()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("csv");
    tracelens::report::csv::write_csv_dir(&report.sheets, &dir).unwrap();
    let back = tracelens::read_report(&dir).unwrap();
    let mut want = names(&report.sheets);
    want.sort();
    assert_eq!(names(&back), want);
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(matches!(
        tracelens::read_report(&empty),
        Err(Error::Read(ReadError::NotAReport(_)))
    ));
}

#[test]
fn rank_discovery_errors_are_typed() {
    let opts = CollectivesOptions {
        trace_dir: testdata("example.json"),
        world_size: Some(2),
        ..CollectivesOptions::default()
    };
    assert!(matches!(
        tracelens::collectives(&opts, None),
        Err(Error::Ranks(RankError::NotADirectory(_)))
    ));
}
