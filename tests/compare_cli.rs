//! `tracelens compare`: conformance with the reference's comparison, the
//! same result from xlsx, CSV-folder and trace inputs, the CI gate (exit
//! codes, thresholds, the --min-ms floor, inconclusive runs, Markdown and
//! JSON content) and refused inputs.
//!
//! Tests that need `../shared` (the corpus) say so on stderr and pass when
//! it is absent.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use tracelens::report::csv::table_to_csv;
use tracelens::report::read::{parse_csv, read_xlsx};
use tracelens::table::{Table, Value};

fn tracelens() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracelens"))
}

/// Exit code, stdout, stderr.
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Out {
    let o = cmd.output().expect("run tracelens");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// The files of a directory, name -> contents, but for tracelens's own
/// manifest of the folder.
fn dir_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .map_or(true, |e| e.file_name() != common::MANIFEST)
        })
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

// ---------------------------------------------------------------------------
// (a) conformance with the reference's comparison
// ---------------------------------------------------------------------------

fn conformance(model: &str) {
    let shared = common::shared();
    common::require_python3();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let pt = shared.join("corpus/pytorch");
    let r = run(tracelens()
        .arg("compare")
        .arg(pt.join(format!("h100_{model}.ref")))
        .arg(pt.join(format!("mi300_{model}.ref")))
        .args(["--names", "h100", "mi300", "--csv"])
        .arg(&out));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let expected = shared.join(format!("corpus/compare/{model}_h100_vs_mi300.ref"));
    let c = Command::new("python3")
        .arg(shared.join("tools/conform.py"))
        .arg(&expected)
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&c.stdout);
    assert!(c.status.success(), "conform.py failed:\n{text}");
    // Every expected sheet was checked, and we wrote no others but the
    // health checks and the change findings.
    let n = fs::read_dir(&expected).unwrap().count();
    assert!(text.contains(&format!("{n} passed, 0 failed")), "{text}");
    let names: Vec<String> = dir_files(&out).into_iter().map(|f| f.0).collect();
    assert_eq!(names.len(), n + 2, "{names:?}");
    assert!(names.contains(&"health.csv".to_string()), "{names:?}");
    assert!(names.contains(&"findings.csv".to_string()), "{names:?}");
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn conformance_qwen15_05b() {
    conformance("qwen15_05b");
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn conformance_falconsai_vit() {
    conformance("falconsai_vit");
}

// ---------------------------------------------------------------------------
// (b) xlsx inputs give the same tables as CSV-folder inputs; (d) traces too
// ---------------------------------------------------------------------------

/// Writes our report of `trace` as `dir/<stem>.xlsx` and `dir/<stem>/`.
fn report_both(trace: &Path, dir: &Path, stem: &str) -> (PathBuf, PathBuf) {
    let x = dir.join(format!("{stem}.xlsx"));
    let c = dir.join(stem);
    let r = run(tracelens()
        .arg("report")
        .arg(trace)
        .arg("-o")
        .arg(&x)
        .arg("--csv")
        .arg(&c)
        .arg("-q"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    (x, c)
}

fn compare_csv(a: &Path, b: &Path, out: &Path) {
    let r = run(tracelens()
        .arg("compare")
        .arg(a)
        .arg(b)
        .args(["--names", "h100", "mi300", "-q", "--csv"])
        .arg(out));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn same_tables_from_every_input_kind(model: &str) {
    let shared = common::shared();
    let pt = shared.join("corpus/pytorch");
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let h100 = pt.join(format!("h100_{model}.json.gz"));
    let mi300 = pt.join(format!("mi300_{model}.json.gz"));
    let (hx, hc) = report_both(&h100, t, "h100");
    let (mx, mc) = report_both(&mi300, t, "mi300");
    compare_csv(&hx, &mx, &t.join("from_xlsx"));
    compare_csv(&hc, &mc, &t.join("from_csv"));
    compare_csv(&h100, &mi300, &t.join("from_traces"));
    let from_csv = dir_files(&t.join("from_csv"));
    let n = fs::read_dir(shared.join(format!("corpus/compare/{model}_h100_vs_mi300.ref")))
        .unwrap()
        .count();
    assert_eq!(
        from_csv.len(),
        n + 2,
        "one CSV per comparison sheet, the health checks and the findings"
    );
    let statuses = |dir: &str| {
        let h = fs::read(t.join(dir).join("health.csv")).unwrap();
        let h = parse_csv(&h, "health").unwrap();
        (texts(&h, "id"), texts(&h, "status"))
    };
    for other in ["from_xlsx", "from_traces"] {
        let files = dir_files(&t.join(other));
        assert_eq!(
            files.iter().map(|f| &f.0).collect::<Vec<_>>(),
            from_csv.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        for ((name, a), (_, b)) in files.iter().zip(&from_csv) {
            // The health sheets name their inputs, and only traces give
            // the tree diff's change findings; the verdicts agree.
            if name == "health.csv" || name == "findings.csv" {
                continue;
            }
            assert!(a == b, "{other}/{name} differs from the CSV-input result");
        }
        assert_eq!(statuses(other), statuses("from_csv"), "{other}");
    }
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn input_kinds_qwen15_05b() {
    same_tables_from_every_input_kind("qwen15_05b");
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn input_kinds_falconsai_vit() {
    same_tables_from_every_input_kind("falconsai_vit");
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn workbook_output_holds_every_sheet() {
    let shared = common::shared();
    let pt = shared.join("corpus/pytorch");
    let tmp = tempfile::tempdir().unwrap();
    let x = tmp.path().join("sub/cmp.xlsx");
    let c = tmp.path().join("csv");
    let r = run(tracelens()
        .arg("compare")
        .arg(pt.join("h100_qwen15_05b.ref"))
        .arg(pt.join("mi300_qwen15_05b.ref"))
        .args(["--names", "h100", "mi300", "-o"])
        .arg(&x)
        .arg("--csv")
        .arg(&c));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let book = read_xlsx(&x).unwrap();
    let csvs = dir_files(&c);
    assert_eq!(book.len(), csvs.len());
    // Excel's 31-character limit cuts the long names, as the reference does.
    let names: Vec<&str> = book.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names[0], "gpu_timeline");
    assert!(
        names.contains(&"unified_perf_summary_intersect_"),
        "{names:?}"
    );
    assert!(
        names.contains(&"ops_unique_args_only_baseline_m"),
        "{names:?}"
    );
    let tl = &book[0];
    assert_eq!(
        tl.column_names(),
        [
            "type",
            "time ms__mi300_diff",
            "time ms__mi300_pct",
            "h100::time ms",
            "h100::percent",
            "mi300::time ms",
            "mi300::percent"
        ]
    );
}

#[test]
fn two_traces_from_testdata() {
    // The same small trace on both sides: nothing changed, the gate passes.
    let t = testdata("example.json");
    let r = run(tracelens().arg("compare").arg(&t).arg(&t).args([
        "--names",
        "before",
        "after",
        "--fail-above",
        "0",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("**Verdict: pass**"), "{}", r.stdout);
    assert!(r.stdout.contains("| `busy_time` |"), "{}", r.stdout);
}

#[test]
fn two_traces_show_where_the_time_moved() {
    // testdata/diff/split_*: one GEMM kernel split in two on the variant.
    let (a, b) = (
        testdata("diff/split_base.json"),
        testdata("diff/split_variant.json"),
    );
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("v.json");
    let r = run(tracelens()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--md", "-", "--json"])
        .arg(&json));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("#### Where the GPU time moved"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("| 1 | `aten::mm` | 1 | 0.030 | 0.026 | -0.004 |"),
        "{}",
        r.stdout
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let moved = &v["comparisons"][0]["where_moved"];
    assert_eq!(moved["points"], 2);
    let top = &moved["top"][0];
    assert_eq!(top["name"], "aten::mm");
    assert_eq!(top["matched_kernels"], false);
    assert!(
        close(&top["baseline_ms"], 0.030) && close(&top["variant_ms"], 0.026),
        "{top}"
    );
    assert_eq!(
        top["variant_kernels"],
        serde_json::json!(["Cijk_gemm_part1", "Cijk_gemm_part2"])
    );
    // --no-diff leaves it out; so do report inputs.
    let r = run(tracelens()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--no-diff", "--md", "-"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stdout.contains("Where the GPU time moved"),
        "{}",
        r.stdout
    );
}

#[test]
fn sheet_selection() {
    let t = testdata("example.json");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let r = run(tracelens()
        .arg("compare")
        .arg(&t)
        .arg(&t)
        .args([
            "--names",
            "a",
            "b",
            "--sheets",
            "gpu_timeline",
            "ops_summary",
            "--csv",
        ])
        .arg(&out));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let names: Vec<String> = dir_files(&out).into_iter().map(|f| f.0).collect();
    // The health checks and change findings come with every selection.
    assert_eq!(
        names,
        [
            "findings.csv",
            "gpu_timeline.csv",
            "health.csv",
            "ops_summary.csv"
        ]
    );
    // Identical inputs: every difference is zero.
    let tl = parse_csv(&fs::read(out.join("gpu_timeline.csv")).unwrap(), "t").unwrap();
    let d = tl.column("time ms__b_diff").unwrap();
    assert!(!d.is_empty());
    assert!(
        d.values
            .iter()
            .all(|v| matches!(v, Value::Float(x) if *x == 0.0))
    );
}

// ---------------------------------------------------------------------------
// (c) the gate, on edited copies of a corpus report
// ---------------------------------------------------------------------------

// Values of the h100_qwen15_05b reference report that the edits start from.
const BUSY_MS: f64 = 31.905483154296874;
const MM_MS: f64 = 6.668681640625;
const MUL_MS: f64 = 6.75289990234375;
const COPY_MS: f64 = 5.101934814453125;
const MM_SHAPE: &str = "((8944, 1024), (1024, 2816))";
const MM_SHAPE_US: f64 = 4055.25244140625;
/// Sum of ops_summary total_direct_kernel_time_ms.
const OPS_TOTAL_MS: f64 = 31.90548315429687;

/// A copy of the h100 qwen report in `dir/name`.
fn copy_report(shared: &Path, dir: &Path, name: &str) -> PathBuf {
    let src = shared.join("corpus/pytorch/h100_qwen15_05b.ref");
    let dst = dir.join(name);
    fs::create_dir_all(&dst).unwrap();
    for (f, bytes) in dir_files(&src) {
        fs::write(dst.join(f), bytes).unwrap();
    }
    dst
}

/// A gate test's folders: the corpus, a temporary folder and the
/// baseline report copied into it as `base`.
struct Gate {
    shared: PathBuf,
    tmp: tempfile::TempDir,
    base: PathBuf,
}

/// A temporary folder holding a copy of a corpus report as `base/`.
fn gate_dir() -> Gate {
    let shared = common::shared();
    let tmp = tempfile::tempdir().unwrap();
    let base = copy_report(&shared, tmp.path(), "base");
    Gate { shared, tmp, base }
}

/// Rewrites `dir/<sheet>.csv` through `f`.
fn edit(dir: &Path, sheet: &str, f: impl FnOnce(&mut Table)) {
    let path = dir.join(format!("{sheet}.csv"));
    let mut s = parse_csv(&fs::read(&path).unwrap(), sheet).unwrap();
    f(&mut s);
    fs::write(&path, table_to_csv(&s)).unwrap();
}

/// Sets column `col` of the rows whose columns `when` hold the given texts,
/// after checking the old value; panics when no row matches.
fn set(s: &mut Table, when: &[(&str, &str)], col: &str, old: f64, new: Value) {
    let j = s.column_index(col).unwrap();
    let keys: Vec<(usize, &str)> = when
        .iter()
        .map(|(c, v)| (s.column_index(c).unwrap(), *v))
        .collect();
    let hits: Vec<usize> = s
        .rows()
        .filter(|r| keys.iter().all(|(k, v)| r.get(*k).as_str() == Some(*v)))
        .map(|r| r.index())
        .collect();
    assert_eq!(hits.len(), 1, "{when:?} in {}", s.name);
    let cell = &mut s.columns[j].values[hits[0]];
    assert_eq!(*cell, Value::Float(old), "the corpus value changed");
    *cell = new;
}

/// Renames op `from` in ops_summary.
fn rename_op(dir: &Path, from: &str, to: &str) {
    edit(dir, "ops_summary", |s| {
        for v in &mut s.column_mut("name").unwrap().values {
            if v.as_str() == Some(from) {
                *v = Value::from(to);
            }
        }
    });
}

/// The "slower mm" variant: aten::mm 6.669 -> 8.0 ms (+1.331 ms, +19.96%),
/// its largest shape 4055.25 -> 5000 µs (+0.945 ms, +23.30%), busy time
/// 31.905 -> 33.0 ms (+1.095 ms, +3.43%).
fn slower_mm(shared: &Path, dir: &Path, name: &str) -> PathBuf {
    let d = copy_report(shared, dir, name);
    edit(&d, "ops_summary", |s| {
        set(
            s,
            &[("name", "aten::mm")],
            "total_direct_kernel_time_ms",
            MM_MS,
            Value::Float(8.0),
        );
    });
    edit(&d, "ops_unique_args", |s| {
        set(
            s,
            &[("name", "aten::mm"), ("Input Dims", MM_SHAPE)],
            "total_direct_kernel_time_sum",
            MM_SHAPE_US,
            Value::Float(5000.0),
        );
    });
    edit(&d, "gpu_timeline", |s| {
        set(
            s,
            &[("type", "busy_time")],
            "time ms",
            BUSY_MS,
            Value::Float(33.0),
        );
    });
    d
}

struct Gated {
    out: Out,
    json: serde_json::Value,
    md: String,
}

/// Runs `compare base new --json J --md M ARGS` and reads both back.
fn gate(base: &Path, new: &Path, args: &[&str]) -> Gated {
    let tmp = tempfile::tempdir().unwrap();
    let j = tmp.path().join("v.json");
    let m = tmp.path().join("v.md");
    let out = run(tracelens()
        .arg("compare")
        .arg(base)
        .arg(new)
        .arg("--json")
        .arg(&j)
        .arg("--md")
        .arg(&m)
        .args(args));
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    Gated {
        json: serde_json::from_str(&fs::read_to_string(&j).unwrap()).unwrap(),
        md: fs::read_to_string(&m).unwrap(),
        out,
    }
}

fn close(v: &serde_json::Value, x: f64) -> bool {
    v.as_f64()
        .is_some_and(|y| (x - y).abs() <= 1e-9 * x.abs().max(1.0))
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn gate_slower_op() {
    let Gate { shared, tmp, base } = gate_dir();
    let new = slower_mm(&shared, tmp.path(), "new");

    let g = gate(&base, &new, &["--fail-above", "10"]);
    assert_eq!(g.out.code, 1);
    assert_eq!(g.json["schema_version"], 1);
    assert_eq!(g.json["verdict"], "regression");
    assert_eq!(g.json["exit_code"], 1);
    let c = &g.json["comparisons"][0];
    assert_eq!(c["variant"]["name"], "new");
    assert_eq!(c["busy_time_over_limit"], false);
    assert!(close(&c["busy_time"]["delta_ms"], 33.0 - BUSY_MS));
    let ops = &c["ops"]["over_limit"];
    assert_eq!(ops.as_array().unwrap().len(), 1);
    assert_eq!(ops[0]["name"], "aten::mm");
    assert!(close(&ops[0]["delta_ms"], 8.0 - MM_MS));
    assert!(close(&ops[0]["delta_pct"], 100.0 * (8.0 - MM_MS) / MM_MS));
    assert!((ops[0]["delta_pct"].as_f64().unwrap() - 19.9637).abs() < 1e-3);
    let shapes = &c["op_shapes"]["over_limit"];
    assert_eq!(shapes.as_array().unwrap().len(), 1);
    assert_eq!(shapes[0]["input_dims"], MM_SHAPE);
    assert!(close(
        &shapes[0]["delta_ms"],
        (5000.0 - MM_SHAPE_US) / 1000.0
    ));
    assert!((shapes[0]["delta_pct"].as_f64().unwrap() - 23.2969).abs() < 1e-3);
    assert_eq!(c["ops"]["unmatched"]["baseline_only_count"], 0);

    // Markdown: verdict line, timeline side by side, flagged rows.
    assert!(g.md.contains("**Verdict: regression**"), "{}", g.md);
    assert!(
        g.md.contains("| `busy_time` | 31.905 | 33.000 | +1.095 | +3.4% |"),
        "{}",
        g.md
    );
    assert!(
        g.md.contains("| ❌ | `aten::mm` | 6.669 | 8.000 | +1.331 | +20.0% |"),
        "{}",
        g.md
    );
    assert!(
        g.md.contains(&format!(
            "| ❌ | `aten::mm` | `{MM_SHAPE}` | `('c10::BFloat16', 'c10::BFloat16')` | 4.055 | 5.000 | +0.945 | +23.3% |"
        )),
        "{}",
        g.md
    );
    assert!(g.md.len() < 64 * 1024);
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn gate_thresholds_and_floor() {
    let Gate { shared, tmp, base } = gate_dir();
    let new = slower_mm(&shared, tmp.path(), "new");
    let over = |g: &Gated, what: &str| {
        g.json["comparisons"][0][what]["over_limit"]
            .as_array()
            .unwrap()
            .len()
    };

    // 19.96% op, 23.30% shape, 3.43% busy.
    let g = gate(&base, &new, &["--fail-above", "20"]);
    assert_eq!(
        (g.out.code, over(&g, "ops"), over(&g, "op_shapes")),
        (1, 0, 1)
    );
    let g = gate(&base, &new, &["--fail-above", "25"]);
    assert_eq!(g.out.code, 0);
    assert_eq!(g.json["verdict"], "pass");
    assert!(g.md.contains("**Verdict: pass**"));
    let g = gate(&base, &new, &["--fail-above", "3"]);
    assert_eq!(g.out.code, 1);
    assert_eq!(g.json["comparisons"][0]["busy_time_over_limit"], true);
    assert!(g.md.contains("| `busy_time` ❌ |"), "{}", g.md);

    // The floor: the op is +1.331 ms, the shape +0.945 ms.
    let g = gate(&base, &new, &["--fail-above", "10", "--min-ms", "1.0"]);
    assert_eq!(
        (g.out.code, over(&g, "ops"), over(&g, "op_shapes")),
        (1, 1, 0)
    );
    let g = gate(&base, &new, &["--fail-above", "10", "--min-ms", "1.5"]);
    assert_eq!(g.out.code, 0);
    assert_eq!(g.json["gate"]["min_ms"], 1.5);

    // No gate: numbers only, exit 0 whatever changed.
    let g = gate(&base, &new, &[]);
    assert_eq!(g.out.code, 0);
    assert_eq!(g.json["verdict"], "not_gated");
    assert_eq!(g.json["gate"]["fail_above_pct"], serde_json::Value::Null);
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn gate_faster_op_is_an_improvement() {
    let Gate { shared, tmp, base } = gate_dir();
    let new = copy_report(&shared, tmp.path(), "new");
    edit(&new, "ops_summary", |s| {
        set(
            s,
            &[("name", "aten::mul")],
            "total_direct_kernel_time_ms",
            MUL_MS,
            Value::Float(5.0),
        );
    });
    let g = gate(&base, &new, &["--fail-above", "5"]);
    assert_eq!(g.out.code, 0, "{}", g.md);
    let c = &g.json["comparisons"][0];
    assert_eq!(c["verdict"], "pass");
    let best = &c["ops"]["top_improvements"][0];
    assert_eq!(best["name"], "aten::mul");
    assert!(close(&best["delta_ms"], 5.0 - MUL_MS));
    assert!((best["delta_pct"].as_f64().unwrap() + 25.9575).abs() < 1e-3);
    assert_eq!(c["ops"]["top_regressions"].as_array().unwrap().len(), 0);
    assert!(
        g.md.contains("|  | `aten::mul` | 6.753 | 5.000 | -1.753 | -26.0% |"),
        "{}",
        g.md
    );
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn gate_inconclusive_when_ops_do_not_match() {
    let Gate { shared, tmp, base } = gate_dir();

    // mul + mm renamed: 13.42 of 31.91 ms (42.1%) unmatched: still comparable.
    let some = copy_report(&shared, tmp.path(), "some");
    rename_op(&some, "aten::mul", "custom::fused_a");
    rename_op(&some, "aten::mm", "custom::fused_b");
    let g = gate(&base, &some, &["--fail-above", "10"]);
    assert_eq!(g.out.code, 0, "{}", g.md);
    let u = &g.json["comparisons"][0]["ops"]["unmatched"];
    assert!(close(&u["baseline_only_ms"], MUL_MS + MM_MS));
    assert!(close(
        &u["baseline_only_pct"],
        100.0 * (MUL_MS + MM_MS) / OPS_TOTAL_MS
    ));
    assert_eq!(u["variant_only_count"], 2);

    // mul + mm + copy_: 18.52 of 31.91 ms (58.1%) unmatched: inconclusive.
    let most = copy_report(&shared, tmp.path(), "most");
    rename_op(&most, "aten::mul", "custom::fused_a");
    rename_op(&most, "aten::mm", "custom::fused_b");
    rename_op(&most, "aten::copy_", "custom::fused_c");
    let g = gate(&base, &most, &["--fail-above", "10"]);
    assert_eq!(g.out.code, 1);
    assert_eq!(g.json["verdict"], "inconclusive");
    let pct = 100.0 * (MUL_MS + MM_MS + COPY_MS) / OPS_TOTAL_MS;
    assert!((pct - 58.06).abs() < 0.01);
    let reasons = g.json["comparisons"][0]["reasons"].to_string();
    assert!(
        reasons.contains("58.1% of base's op kernel time"),
        "{reasons}"
    );
    assert!(g.md.contains("**Verdict: inconclusive**"), "{}", g.md);
    assert!(g.md.contains("58.1% of base's op kernel time"), "{}", g.md);
    // Without a gate the verdict still says so, but the exit code is 0.
    let g = gate(&base, &most, &[]);
    assert_eq!(
        (g.out.code, g.json["verdict"].as_str()),
        (0, Some("inconclusive"))
    );

    // A report without gpu_timeline cannot be judged on busy time.
    let no_tl = copy_report(&shared, tmp.path(), "no_tl");
    fs::remove_file(no_tl.join("gpu_timeline.csv")).unwrap();
    let g = gate(&base, &no_tl, &["--fail-above", "10"]);
    assert_eq!(g.out.code, 1);
    assert_eq!(g.json["verdict"], "inconclusive");
    assert!(
        g.json["comparisons"][0]["reasons"]
            .to_string()
            .contains("busy_time")
    );
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn gate_several_variants() {
    let Gate { shared, tmp, base } = gate_dir();
    let slow = slower_mm(&shared, tmp.path(), "slow");
    let same = copy_report(&shared, tmp.path(), "same");
    let csv = tmp.path().join("csv");
    let j = tmp.path().join("v.json");
    let r = run(tracelens()
        .arg("compare")
        .arg(&base)
        .arg(&same)
        .arg(&slow)
        .args(["--fail-above", "10", "--json"])
        .arg(&j)
        .arg("--csv")
        .arg(&csv));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["verdict"], "regression");
    assert_eq!(v["comparisons"][0]["verdict"], "pass");
    assert_eq!(v["comparisons"][1]["verdict"], "regression");
    // Each variant against the baseline, in the tables too.
    let ops = parse_csv(&fs::read(csv.join("ops_summary.csv")).unwrap(), "o").unwrap();
    let mm = ops
        .rows()
        .find(|r| r.get_named("name").and_then(Value::as_str) == Some("aten::mm"))
        .unwrap();
    let d_same = mm.get_named("total_direct_kernel_time_ms__same_diff");
    let d_slow = mm.get_named("total_direct_kernel_time_ms__slow_diff");
    assert_eq!(d_same, Some(&Value::Float(0.0)));
    assert_eq!(d_slow, Some(&Value::Float(8.0 - MM_MS)));
    for v in ["same", "slow"] {
        for kind in ["intersect", "only_baseline", "only_variant"] {
            assert!(csv.join(format!("ops_unique_args_{kind}_{v}.csv")).exists());
        }
    }
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn default_output_is_markdown_on_stdout() {
    let Gate { shared, tmp, base } = gate_dir();
    let new = slower_mm(&shared, tmp.path(), "new");
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--fail-above", "10", "-q"]));
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with("## tracelens compare: ❌ regression"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stderr, "");
    // Nothing else was written.
    let mut names: Vec<String> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["base", "new"]);
    // --json - puts the JSON on stdout instead.
    let r = run(tracelens()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--json", "-", "-q"]));
    assert_eq!(r.code, 0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "not_gated");
}

// ---------------------------------------------------------------------------
// (e) refused inputs and usage errors: exit 2, one error line, no output
// ---------------------------------------------------------------------------

fn refused(args: &[&std::ffi::OsStr], mention: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("compare")
        .args(args)
        .arg("--csv")
        .arg(&out));
    assert_eq!(r.code, 2, "stderr: {}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one error line: {:?}", r.stderr);
    assert!(lines[0].starts_with("tracelens: error: "), "{}", lines[0]);
    assert!(
        lines[0].contains(mention),
        "{} should mention {mention}",
        lines[0]
    );
    assert_eq!(r.stdout, "");
    assert!(!out.exists(), "no output on failure");
}

#[test]
fn unreadable_inputs_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let ok = testdata("example.json");
    let missing = tmp.path().join("nope.xlsx");
    refused(&[ok.as_os_str(), missing.as_os_str()], "nope.xlsx");

    let bad = testdata("bad/truncated.json");
    refused(&[bad.as_os_str(), ok.as_os_str()], "truncated.json");

    let empty_dir = tmp.path().join("empty_dir");
    fs::create_dir(&empty_dir).unwrap();
    refused(&[ok.as_os_str(), empty_dir.as_os_str()], "empty_dir");

    // A CSV row longer than its header.
    let broken = tmp.path().join("broken");
    fs::create_dir(&broken).unwrap();
    fs::write(
        broken.join("gpu_timeline.csv"),
        "type,time ms\nbusy_time,1.0,2.0\n",
    )
    .unwrap();
    refused(&[ok.as_os_str(), broken.as_os_str()], "gpu_timeline.csv");

    // A zip that is neither a workbook nor a trace.
    let zip = tmp.path().join("junk.xlsx");
    fs::write(&zip, b"PK\x03\x04 not really a zip").unwrap();
    refused(&[ok.as_os_str(), zip.as_os_str()], "junk.xlsx");
}

#[test]
fn usage_errors_exit_2() {
    let ok = testdata("example.json");
    let o = ok.as_os_str();
    let s = |x: &'static str| std::ffi::OsStr::new(x);
    // (One file twice without --names is fine: one_file_twice_gets_two_tags.)
    refused(
        &[o, o, s("--names"), s("a"), s("a")],
        "--names must be unique",
    );
    refused(&[o, o, s("--names"), s("a")], "--names");
    refused(
        &[
            o,
            o,
            s("--names"),
            s("a"),
            s("b"),
            s("--fail-above"),
            s("-5"),
        ],
        "--fail-above",
    );
    refused(
        &[o, o, s("--names"), s("a"), s("b"), s("--min-ms"), s("nan")],
        "--min-ms",
    );
    refused(
        &[
            o,
            o,
            s("--names"),
            s("a"),
            s("b"),
            s("--md"),
            s("-"),
            s("--json"),
            s("-"),
        ],
        "stdout",
    );
}

/// Two rocprofv3 traces compare on their gpu_timeline and (older layout)
/// kernel_summary. Busy times from the traces by hand (see tests/rocprof.rs):
/// small.json 0.1825 ms, copies.json 0.0045 ms.
#[test]
fn rocprof_traces_compare() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cmp");
    let r = run(tracelens().args([
        "compare",
        testdata("rocprof/small.json").to_str().unwrap(),
        testdata("rocprof/copies.json").to_str().unwrap(),
        "--csv",
        out.to_str().unwrap(),
        "-q",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let timeline = parse_csv(
        &fs::read(out.join("gpu_timeline.csv")).unwrap(),
        "gpu_timeline",
    )
    .unwrap();
    let col = |name: &str| {
        timeline
            .columns
            .iter()
            .position(|c| c.name == name)
            .unwrap()
    };
    let busy = timeline.columns[col("type")]
        .values
        .iter()
        .position(|v| *v == Value::Text("busy_time".into()))
        .unwrap();
    let at = |name: &str| timeline.columns[col(name)].values[busy].as_f64().unwrap();
    assert!((at("small::time ms") - 0.1825).abs() < 1e-12);
    assert!((at("copies::time ms") - 0.0045).abs() < 1e-12);
    assert!((at("time ms__copies_diff") - (0.0045 - 0.1825)).abs() < 1e-12);
    // The kernel summaries join on the kernel name.
    let ks = parse_csv(
        &fs::read(out.join("kernel_summary.csv")).unwrap(),
        "kernel_summary",
    )
    .unwrap();
    assert_eq!(ks.columns[0].name, "name");
    assert!(ks.columns.iter().any(|c| c.name == "copies::Count"));
}

/// A JAX profile compares with itself through the averaged timeline and the
/// launcher summary read as ops_summary: every difference is zero.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn jax_profiles_compare() {
    let trace = common::shared().join("corpus/jax/jax_conv_minimal_08.xplane.pb");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cmp");
    let r = run(tracelens().args([
        "compare",
        trace.to_str().unwrap(),
        trace.to_str().unwrap(),
        "--names",
        "a",
        "b",
        "--csv",
        out.to_str().unwrap(),
        "-q",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for name in ["gpu_timeline", "ops_summary"] {
        let t = parse_csv(&fs::read(out.join(format!("{name}.csv"))).unwrap(), name).unwrap();
        assert!(t.nrows() > 0, "{name} is empty");
        let diff = t
            .columns
            .iter()
            .find(|c| c.name.ends_with("__b_diff"))
            .unwrap_or_else(|| panic!("{name}: no diff column"));
        assert!(
            diff.values.iter().all(|v| v.as_f64() == Some(0.0)),
            "{name}: {:?}",
            diff.values
        );
    }
    // The per-GPU rows are not what was compared: one row per metric.
    let t = parse_csv(
        &fs::read(out.join("gpu_timeline.csv")).unwrap(),
        "gpu_timeline",
    )
    .unwrap();
    assert_eq!(t.nrows(), 8);
}

#[test]
fn one_file_twice_gets_two_tags() {
    // No --names: the second tag gets a suffix instead of a refusal.
    let t = testdata("example.json");
    let dir = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(dir.path())
        .arg("compare")
        .arg(&t)
        .arg(&t)
        .args(["--csv", "c", "--fail-above", "0"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let header = fs::read_to_string(dir.path().join("c/ops_summary.csv")).unwrap();
    let header = header.lines().next().unwrap().to_string();
    assert!(
        header.contains("example") && header.contains("example_2"),
        "{header}"
    );
    // Repeated --names are still refused, naming the flag.
    let r = run(tracelens()
        .arg("compare")
        .arg(&t)
        .arg(&t)
        .args(["--names", "a", "a"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--names must be unique"), "{}", r.stderr);
}

/// `compare BASE NEW --json - ARGS`: exit code and the document.
fn compare_json(base: &Path, new: &Path, args: &[&str]) -> (Out, serde_json::Value) {
    let out = run(tracelens()
        .arg("compare")
        .arg(base)
        .arg(new)
        .args(["--json", "-", "-q"])
        .args(args));
    let v = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stderr));
    (out, v)
}

fn keys(v: &serde_json::Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn ids(list: &serde_json::Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect()
}

#[test]
fn json_keeps_its_keys_and_adds_health_and_change_findings() {
    // testdata/diff/split_*: aten::mm's 30 µs GEMM kernel split into two
    // 13 µs kernels on the variant; the 3 µs add kernel is unchanged.
    let (a, b) = (
        testdata("diff/split_base.json"),
        testdata("diff/split_variant.json"),
    );
    let (out, v) = compare_json(&a, &b, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Every key of the verdict document, in its order, then the new ones
    // (the order as written: top-level keys are indented two spaces).
    let at = |k: &str| {
        out.stdout
            .find(&format!("\n  \"{k}\": "))
            .unwrap_or(usize::MAX)
    };
    let mut written: Vec<&str> = keys(&v);
    written.sort_by_key(|k| at(k));
    assert_eq!(
        written,
        [
            "schema_version",
            "tool",
            "tool_version",
            "verdict",
            "exit_code",
            "gate",
            "baseline",
            "comparisons",
            "kind",
            "health",
            "findings",
            "cannot_tell"
        ]
    );
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "compare");
    let mut comparison = keys(&v["comparisons"][0]);
    comparison.sort();
    assert_eq!(
        comparison,
        [
            "busy_time",
            "busy_time_over_limit",
            "op_shapes",
            "ops",
            "reasons",
            "timeline",
            "variant",
            "verdict",
            "where_moved"
        ]
    );
    let health = v["health"].as_array().unwrap();
    assert_eq!(health.len(), 2);
    assert_eq!(health[0]["name"], "split_base");
    assert_eq!(health[1]["name"], "split_variant");
    for h in health {
        assert_eq!(h["source"], "trace");
        assert_eq!(h["verdict"], "pass", "{h}");
    }
    // mm: 30 -> 26 µs, -4 µs: 12% of the 33 µs busy time, 13% of its own:
    // a move (a speedup: no gain to claim), and its kernels changed.
    assert_eq!(
        ids(&v["findings"]),
        ["change.op_moved", "change.kernels_changed"]
    );
    let m = &v["findings"][0];
    assert_eq!(m["variant"], "split_variant");
    assert_eq!(m["subject"], "aten::mm");
    assert_eq!(m["shape"], "((64, 32), (32, 16))");
    assert_eq!(m["severity"], "info");
    assert!(close(&m["impact"]["base_ms"], 0.033), "{m}");
    let ev = |f: &serde_json::Value, name: &str| {
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {f}"))["value"]
            .clone()
    };
    assert!(close(&ev(m, "delta_ms"), -0.004), "{m}");
    assert!(close(&ev(m, "baseline_ms"), 0.030), "{m}");
    let k = &v["findings"][1];
    assert_eq!(ev(k, "baseline_only_kernels"), 1.0);
    assert_eq!(ev(k, "variant_only_kernels"), 2.0);
    let summary = k["summary"].as_str().unwrap();
    assert!(
        summary.contains("only split_variant runs Cijk_gemm_part1, Cijk_gemm_part2"),
        "{summary}"
    );
    let cmds = k["commands"].to_string();
    assert!(cmds.contains("tracelens diff "), "{cmds}");
}

#[test]
fn a_trace_against_itself_has_no_change_finding() {
    let t = testdata("example.json");
    let (out, v) = compare_json(&t, &t, &["--strict"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(v["findings"], serde_json::json!([]));
    assert_eq!(v["cannot_tell"], serde_json::json!([]));
    // The Markdown: a Findings section, each side's health first.
    let r = run(tracelens()
        .arg("compare")
        .arg(&t)
        .arg(&t)
        .args(["--md", "-"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let f = r.stdout.find("### Findings").expect("a Findings section");
    let h = r.stdout.find("Health of example:").expect("the health");
    let n = r.stdout.find("No change finding").expect("no finding");
    assert!(f < h && h < n, "{}", r.stdout);
}

#[test]
fn a_report_without_a_health_sheet_cannot_tell() {
    let t = testdata("example.json");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rep");
    run(tracelens()
        .arg("report")
        .arg(&t)
        .arg("--csv")
        .arg(&dir)
        .arg("-q"));
    assert!(dir.join("health.csv").exists());
    // With the sheet: read back, the trace's verdict.
    let (out, v) = compare_json(&dir, &t, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(v["health"][0]["source"], "health_sheet");
    assert_eq!(v["health"][0]["verdict"], v["health"][1]["verdict"]);
    assert_eq!(
        v["health"][0]["checks"].as_array().unwrap().len(),
        v["health"][1]["checks"].as_array().unwrap().len()
    );
    // Without it (an older report): cannot tell, and said so.
    fs::remove_file(dir.join("health.csv")).unwrap();
    let (out, v) = compare_json(&dir, &t, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let h = &v["health"][0];
    assert_eq!(h["source"], "none");
    assert_eq!(h["verdict"], "cannot_tell");
    assert!(
        h["note"].as_str().unwrap().contains("no health sheet"),
        "{h}"
    );
    assert!(ids(&v["cannot_tell"]).contains(&"change.health_differs"));
}

/// The text cells of column `name` of `t`, empty cells as "".
fn texts(t: &Table, name: &str) -> Vec<String> {
    let c = t.column(name).unwrap_or_else(|| panic!("no column {name}"));
    c.values
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn sheet_outputs_hold_each_sides_health_and_the_change_findings() {
    let (a, b) = (
        testdata("diff/split_base.json"),
        testdata("diff/split_variant.json"),
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let r = run(tracelens()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--csv")
        .arg(&out));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let health = parse_csv(&fs::read(out.join("health.csv")).unwrap(), "health").unwrap();
    let sides = texts(&health, "side");
    let n = sides.len() / 2;
    assert!(n >= 8, "{sides:?}");
    assert_eq!(sides[..n], vec!["split_base".to_string(); n][..]);
    assert_eq!(sides[n..], vec!["split_variant".to_string(); n][..]);
    let traces = texts(&health, "trace");
    assert_eq!(traces[0], a.display().to_string());
    assert_eq!(traces[n], b.display().to_string());
    let ids = texts(&health, "id");
    assert_eq!(ids[..n], ids[n..]);
    assert!(ids.contains(&"health.overlapping_kernels".to_string()));
    // The variant's change findings: the GEMM got faster, by new kernels.
    let f = parse_csv(&fs::read(out.join("findings.csv")).unwrap(), "findings").unwrap();
    assert_eq!(
        texts(&f, "id")[..2],
        ["change.op_moved", "change.kernels_changed"]
    );
    assert!(texts(&f, "side").iter().all(|s| s == "split_variant"));
    assert_eq!(texts(&f, "subject")[0], "aten::mm");
    assert!(
        texts(&f, "commands")[0].starts_with("tracelens diff "),
        "{:?}",
        texts(&f, "commands")
    );

    // A report without a health sheet: one row saying its health is unknown.
    let rep = tmp.path().join("rep");
    let r = run(tracelens()
        .arg("report")
        .arg(&a)
        .arg("--csv")
        .arg(&rep)
        .arg("-q"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    fs::remove_file(rep.join("health.csv")).unwrap();
    let out2 = tmp.path().join("out2");
    let r = run(tracelens()
        .arg("compare")
        .arg(&rep)
        .arg(&b)
        .arg("--csv")
        .arg(&out2));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let health = parse_csv(&fs::read(out2.join("health.csv")).unwrap(), "health").unwrap();
    let (sides, statuses) = (texts(&health, "side"), texts(&health, "status"));
    assert_eq!(sides.iter().filter(|s| *s == "rep").count(), 1, "{sides:?}");
    assert_eq!(statuses[0], "cannot_tell");
    assert!(texts(&health, "summary")[0].contains("no health sheet"));
    assert_eq!(sides[1], "split_variant");
}

#[test]
fn strict_refuses_a_side_whose_health_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = common::overlapping_split_base(tmp.path());
    let a = testdata("diff/split_base.json");
    let (out, v) = compare_json(&a, &bad, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(v["health"][1]["verdict"], "fail");
    let f = &v["findings"][0];
    assert_eq!(f["id"], "change.health_differs");
    assert_eq!(f["subject"], "health.overlapping_kernels");
    assert_eq!(f["severity"], "high");
    // --strict: exit 3, whatever the gate says; the JSON still written.
    let (out, v) = compare_json(&a, &bad, &["--strict", "--fail-above", "1000"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(v["exit_code"], 0);
    assert!(out.stderr.contains("--strict"), "{}", out.stderr);
}
