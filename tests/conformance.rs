//! Conformance with the reference implementation: for every
//! `NAME.json.gz` in `../shared/corpus/pytorch`, run
//! `tracelens report NAME.json.gz --csv TMP -q --gpu-arch none` (the
//! reference ran without a GPU spec) and compare every sheet that
//! the reference wrote into `NAME.ref/` (except those of [`NOT_YET`]) with
//! `../shared/tools/conform.py`; where a `NAME.ref_mi300x/` exists, do the
//! same with `--gpu-arch MI300X` against it. The plain report of each
//! inference trace with a `ref_plain/` folder is checked the same way, and
//! its inference report (`--capture-dir capture_traces --inference`, the
//! capture traces merged) against `ref/`.
//!
//! A reference sheet whose header repeats a column name (pandas' raw
//! two-level header, see docs/deviations.md) cannot be checked by conform.py,
//! which looks columns up by name; such sheets must be byte-identical instead.
//!
//! Ignored (build.rs sets `cfg(no_shared_corpus)`) when `../shared/corpus`
//! is absent, as in a user's clone.

mod common;

use common::{parse_csv, run, tracelens};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Reference sheets not produced yet.
const NOT_YET: &[&str] = &[];

/// Traces checked at the same time.
const PARALLEL: usize = 2;

/// Outcome of one trace: a summary line, or why it failed.
type Outcome = Result<String, String>;

/// The reference's sheets (less [`NOT_YET`]), sorted, split into those
/// conform.py can check and those with a repeated column name, which must be
/// byte-identical: `(by_conform, by_bytes)`.
fn reference_sheets(ref_dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut sheets: Vec<String> = std::fs::read_dir(ref_dir)
        .unwrap()
        .filter_map(|e| {
            let f = e.unwrap().file_name().to_string_lossy().into_owned();
            f.strip_suffix(".csv").map(String::from)
        })
        .filter(|s| !NOT_YET.contains(&s.as_str()))
        .collect();
    sheets.sort();
    sheets.into_iter().partition(|s| {
        let text = std::fs::read_to_string(ref_dir.join(format!("{s}.csv"))).unwrap();
        let header = parse_csv(&text).into_iter().next().unwrap_or_default();
        let mut uniq = header.clone();
        uniq.sort();
        uniq.dedup();
        uniq.len() == header.len()
    })
}

/// Problems of the sheets in `out` that must equal the reference's bytes.
fn byte_problems(ref_dir: &Path, out: &Path, by_bytes: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for s in by_bytes {
        let want = std::fs::read(ref_dir.join(format!("{s}.csv"))).unwrap();
        match std::fs::read(out.join(format!("{s}.csv"))) {
            Ok(got) if got == want => {}
            Ok(got) => problems.push(format!(
                "{s}.csv is not byte-identical to the reference:\n  got  {:?}\n  want {:?}",
                String::from_utf8_lossy(&got[..got.len().min(300)]),
                String::from_utf8_lossy(&want[..want.len().min(300)]),
            )),
            Err(e) => problems.push(format!("{s}.csv: {e}")),
        }
    }
    problems
}

/// conform.py's verdict on the sheets `by_conform` of `out`: None when
/// they all pass.
fn conform_problem(
    conform: &Path,
    ref_dir: &Path,
    out: &Path,
    by_conform: &[String],
) -> Option<String> {
    let res = Command::new("python3")
        .arg(conform)
        .arg(ref_dir)
        .arg(out)
        .arg("--sheets")
        .arg(by_conform.join(","))
        .output();
    let o = match res {
        Err(e) => return Some(format!("cannot run python3 {}: {e}", conform.display())),
        Ok(o) => o,
    };
    let stdout = String::from_utf8_lossy(&o.stdout);
    let last = stdout.lines().last().unwrap_or("");
    let want = format!("{} passed, 0 failed", by_conform.len());
    (last != want).then(|| {
        format!(
            "conform.py: expected {want:?}, got:\n{stdout}{}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn check_trace(trace: &Path, ref_dir: &Path, extra: &[OsString], conform: &Path) -> Outcome {
    // The folder and its parent: `pytorch/NAME.ref`, `vllm_decode_full/ref_plain`.
    let parent = ref_dir
        .parent()
        .and_then(Path::file_name)
        .unwrap_or_default();
    let name = Path::new(parent)
        .join(ref_dir.file_name().unwrap())
        .display()
        .to_string();
    if !ref_dir.is_dir() {
        return Err(format!("{name}: no reference folder {}", ref_dir.display()));
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("csv");
    let r = run(tracelens()
        .arg("report")
        .arg(trace)
        .arg("--csv")
        .arg(&out)
        .args(extra)
        .arg("-q"));
    if r.code != Some(0) || r.stderr.contains("panicked") {
        return Err(format!(
            "{name}: report failed ({:?}): {}",
            r.code, r.stderr
        ));
    }
    let (by_conform, by_bytes) = reference_sheets(ref_dir);
    if by_conform.is_empty() && by_bytes.is_empty() {
        return Err(format!("{name}: the reference has none of the sheets"));
    }
    let mut problems = byte_problems(ref_dir, &out, &by_bytes);
    if !by_conform.is_empty() {
        problems.extend(conform_problem(conform, ref_dir, &out, &by_conform));
    }
    if !problems.is_empty() {
        return Err(format!("{name}:\n  {}", problems.join("\n  ")));
    }
    let mut line = format!("{name}: {} sheets pass conform.py", by_conform.len());
    if !by_bytes.is_empty() {
        line.push_str(&format!(
            "; byte-identical to the reference (duplicate column names): {}",
            by_bytes.join(", ")
        ));
    }
    Ok(line)
}

/// The corpus and conform.py (see [`common::shared`]: fails, never skips,
/// when they are missing).
fn corpus_and_conform() -> (PathBuf, PathBuf) {
    let shared = common::shared();
    let conform = shared.join("tools/conform.py");
    assert!(conform.is_file(), "{} is missing", conform.display());
    common::require_python3();
    (shared.join("corpus"), conform)
}

/// One check: a trace, its reference folder and the extra report flags.
type Job = (PathBuf, PathBuf, Vec<OsString>);

/// `--gpu-arch none`: the reference ran these reports without a GPU spec,
/// so none is picked from the trace's device name either.
fn no_arch() -> Vec<OsString> {
    flags(&["--gpu-arch", "none"])
}

/// Report flags as the command line takes them.
fn flags(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn pytorch_corpus_conforms() {
    let (corpus, conform) = corpus_and_conform();
    run_jobs(&pytorch_jobs(&corpus), &conform);
}

/// One job per reference folder of `corpus/pytorch`: NAME.ref, and
/// NAME.ref_mi300x with the spec.
fn pytorch_jobs(corpus: &Path) -> Vec<Job> {
    let dir = corpus.join("pytorch");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    traces.sort();
    assert!(!traces.is_empty(), "no traces in {}", dir.display());
    let mut jobs: Vec<Job> = Vec::new();
    for t in &traces {
        let file = t.file_name().unwrap().to_string_lossy();
        let stem = file.strip_suffix(".json.gz").unwrap();
        jobs.push((t.clone(), dir.join(format!("{stem}.ref")), no_arch()));
        let mi300x = dir.join(format!("{stem}.ref_mi300x"));
        if mi300x.is_dir() {
            jobs.push((t.clone(), mi300x, flags(&["--gpu-arch", "MI300X"])));
        }
    }
    jobs
}

/// The plain report (no capture merge, no inference options) of each
/// inference server trace that has a `ref_plain/` folder.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn inference_plain_reports_conform() {
    let (corpus, conform) = corpus_and_conform();
    let jobs: Vec<Job> = inference_folders(&corpus, "ref_plain")
        .into_iter()
        .map(|(folder, trace)| (trace, folder.join("ref_plain"), no_arch()))
        .collect();
    run_jobs(&jobs, &conform);
}

/// The inference report of each inference server trace with its capture
/// traces merged (`--capture-dir capture_traces --inference`) against the
/// reference's inference report in `ref/`.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn inference_reports_conform() {
    let (corpus, conform) = corpus_and_conform();
    let jobs: Vec<Job> = inference_folders(&corpus, "ref")
        .into_iter()
        .map(|(folder, trace)| {
            let mut extra = vec![OsString::from("--capture-dir")];
            extra.push(folder.join("capture_traces").into_os_string());
            extra.push(OsString::from("--inference"));
            extra.extend(no_arch());
            (trace, folder.join("ref"), extra)
        })
        .collect();
    run_jobs(&jobs, &conform);
}

/// The folders of `corpus/inference` that hold a `reference` folder, each
/// with its server trace (the one `.json.gz` at the top of the folder).
fn inference_folders(corpus: &Path, reference: &str) -> Vec<(PathBuf, PathBuf)> {
    let dir = corpus.join("inference");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join(reference).is_dir())
        .collect();
    folders.sort();
    assert!(
        !folders.is_empty(),
        "no {reference} folders in {}",
        dir.display()
    );
    folders
        .into_iter()
        .map(|f| {
            let traces: Vec<PathBuf> = std::fs::read_dir(&f)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
                .collect();
            assert_eq!(traces.len(), 1, "{}: expected one trace", f.display());
            (f, traces[0].clone())
        })
        .collect()
}

/// Runs the jobs [`PARALLEL`] at a time and fails listing every reference
/// folder that does not conform.
fn run_jobs(jobs: &[Job], conform: &Path) {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((trace, ref_dir, extra)) = jobs.get(i) else {
                        break;
                    };
                    let outcome = check_trace(trace, ref_dir, extra, conform);
                    match &outcome {
                        Ok(line) => eprintln!("ok   {line}"),
                        Err(_) => eprintln!("FAIL {}", ref_dir.display()),
                    }
                    results.lock().unwrap().push((i, outcome));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let failures: Vec<&String> = results
        .iter()
        .filter_map(|(_, o)| o.as_ref().err())
        .collect();
    assert_eq!(results.len(), jobs.len());
    assert!(
        failures.is_empty(),
        "{} of {} reference folders do not conform:\n{}",
        failures.len(),
        jobs.len(),
        failures
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!("{} reference folders conform", jobs.len());
}

/// The JAX report of `jax/jax_conv_minimal_08.xplane.pb` against its
/// reference: every sheet of `jax_conv_minimal_08.ref`.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn jax_corpus_conforms() {
    let (corpus, conform) = corpus_and_conform();
    let dir = corpus.join("jax");
    let jobs: Vec<Job> = vec![(
        dir.join("jax_conv_minimal_08.xplane.pb"),
        corpus.join(JAX_REF),
        Vec::new(),
    )];
    run_jobs(&jobs, &conform);
}

/// The TE fused-attention profile, on which the reference stops: a report
/// with exit 0 whose `kernel_launchers_summary_by_category` is the table of
/// the corpus README (category, count, milliseconds), and attention sheets
/// with the packed-QKV shapes unpacked (B=2, S=2048, H=16, D=128).
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn jax_te_fused_attn_reports() {
    let (corpus, _) = corpus_and_conform();
    let trace = corpus.join("jax/jax_te_fused_attn.xplane.pb");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("csv");
    let r = run(tracelens()
        .arg("report")
        .arg(&trace)
        .arg("--csv")
        .arg(&out)
        .arg("-q"));
    assert_eq!(r.code, Some(0), "report failed: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let read = |sheet: &str| {
        let path = out.join(format!("{sheet}.csv"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        parse_csv(&text)
    };
    // The corpus README's table.
    let want = [
        ("FA BWD", "30", 4.479278),
        ("GEMM", "30", 4.212477),
        ("FA FWD", "10", 2.061539),
        ("Uncategorized Events/XLA", "50", 1.179529),
        ("TE", "30", 0.200762),
    ];
    let rows = read("kernel_launchers_summary_by_category");
    let head = &rows[0];
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (c, n, ms, per_gpu) = (
        col("op category"),
        col("Count"),
        col("total_direct_kernel_time_ms"),
        col("time ms per gpu"),
    );
    assert_eq!(rows.len(), want.len() + 1, "{rows:?}");
    for (row, (cat, count, time)) in rows[1..].iter().zip(want) {
        assert_eq!((row[c].as_str(), row[n].as_str()), (cat, count));
        for j in [ms, per_gpu] {
            let x: f64 = row[j].parse().unwrap();
            assert!((x - time).abs() < 1e-6, "{cat}: {x} != {time}");
        }
    }
    // The attention sheets exist, with the unpacked shapes.
    for sheet in ["op_fa_bwd", "op_fa_fwd", "op_te"] {
        let rows = read(sheet);
        let head = &rows[0];
        let at = |name: &str| head.iter().position(|h| h == name).unwrap();
        assert!(rows.len() > 1, "{sheet} is empty");
        for row in &rows[1..] {
            let got: Vec<&str> = ["param: B", "param: N_Q", "param: H_Q", "param: d_h_qk"]
                .iter()
                .map(|k| row[at(k)].as_str())
                .collect();
            assert_eq!(got, ["2", "2048", "16", "128"], "{sheet}");
        }
    }
}

/// The rocprofv3 trace against both of its references (the second with
/// `--short-kernel-threshold-us 2000`). The reference's `kernel_details`
/// leaves rows of equal duration in numpy's unstable-sort order; they are
/// compared with a copy of it whose tied rows are in our order (duration
/// descending, then `dispatch_id`): see docs/deviations.md.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn rocprof_corpus_conforms() {
    let (corpus, conform) = corpus_and_conform();
    let dir = corpus.join("rocprof");
    let trace = dir.join("908_results.json.gz");
    let tmp = tempfile::tempdir().unwrap();
    let ties_ordered = tmp.path().join("rocprof/908_results.ref");
    copy_with_details_ties_ordered(&corpus.join(ROCPROF_REFS[0]), &ties_ordered);
    let jobs: Vec<Job> = vec![
        (trace.clone(), ties_ordered, Vec::new()),
        (
            trace,
            corpus.join(ROCPROF_REFS[1]),
            flags(&["--short-kernel-threshold-us", "2000"]),
        ),
    ];
    run_jobs(&jobs, &conform);
}

/// The Perfetto reports: the native `.pftrace` decoding against the
/// reference's reports on its traceconv-style JSON, and each JSON form
/// against its own.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn pftrace_corpus_conforms() {
    let (corpus, conform) = corpus_and_conform();
    run_jobs(&pftrace_jobs(&corpus), &conform);
}

/// One job per folder of `pftrace/expected/<input>/<report>`: the input's
/// JSON form, and for `traceconv_style` the `.pftrace` itself too.
fn pftrace_jobs(corpus: &Path) -> Vec<Job> {
    let dir = corpus.join("pftrace");
    let mut jobs = Vec::new();
    for input in PFTRACE_INPUTS {
        let mut traces = vec![dir.join(format!("rocprofv3_like.{input}.json"))];
        if input == "traceconv_style" {
            traces.push(dir.join("rocprofv3_like.pftrace"));
        }
        let expected = dir.join("expected").join(input);
        let mut reports: Vec<PathBuf> = std::fs::read_dir(&expected)
            .unwrap_or_else(|e| panic!("{}: {e}", expected.display()))
            .map(|e| e.unwrap().path())
            .collect();
        reports.sort();
        assert!(!reports.is_empty(), "no reports in {}", expected.display());
        for trace in &traces {
            jobs.extend(
                reports
                    .iter()
                    .map(|r| (trace.clone(), r.clone(), Vec::new())),
            );
        }
    }
    jobs
}

/// The Genesis report's reference: each workbook sheet as CSV, beside
/// the page (`genesis_summary.md`) one folder up.
const GENESIS_REF: &str = "genesis/expected/sheets";

/// `tracelens genesis` on the corpus capture: every workbook sheet
/// conforms to the reference's, the workbook names them as the
/// reference's does, and the page is byte-identical.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn genesis_corpus_conforms() {
    let (corpus, conform) = corpus_and_conform();
    let ref_dir = corpus.join(GENESIS_REF);
    let tmp = tempfile::tempdir().unwrap();
    let (out, csv) = (tmp.path().join("out"), tmp.path().join("csv"));
    run(tracelens()
        .arg("genesis")
        .arg("--capture-dir")
        .arg(corpus.join("genesis/capture"))
        .arg("--output-dir")
        .arg(&out)
        .arg("--csv")
        .arg(&csv)
        .arg("-q"))
    .assert_ok();
    let (by_conform, by_bytes) = reference_sheets(&ref_dir);
    assert!(by_bytes.is_empty(), "{by_bytes:?}");
    assert_eq!(by_conform.len(), 8, "{by_conform:?}");
    if let Some(problem) = conform_problem(&conform, &ref_dir, &csv, &by_conform) {
        panic!("{problem}");
    }
    let mut written: Vec<String> = std::fs::read_dir(&csv)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv"))
        .collect();
    written.sort();
    let want: Vec<String> = by_conform.iter().map(|s| format!("{s}.csv")).collect();
    assert_eq!(
        written, want,
        "the workbook has exactly the reference's sheets"
    );
    let expected = corpus.join("genesis/expected");
    let book: calamine::Xlsx<_> =
        calamine::open_workbook(out.join("genesis_perf_report.xlsx")).unwrap();
    let reference: calamine::Xlsx<_> =
        calamine::open_workbook(expected.join("genesis_perf_report.xlsx")).unwrap();
    use calamine::Reader;
    assert_eq!(book.sheet_names(), reference.sheet_names());
    let page = std::fs::read_to_string(out.join("genesis_summary.md")).unwrap();
    let want = std::fs::read_to_string(expected.join("genesis_summary.md")).unwrap();
    assert_eq!(
        page, want,
        "genesis_summary.md differs from the reference's"
    );
}

/// The JSON forms of the Perfetto fixture with references.
const PFTRACE_INPUTS: [&str; 3] = ["traceconv_style", "all_x", "all_x_argtid"];

/// Copies the reference folder `from` to `to`, the rows of
/// `kernel_details.csv` stably sorted by duration descending, then
/// `dispatch_id`, after checking that they were sorted by duration (so only
/// tied rows move).
fn copy_with_details_ties_ordered(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        if path.file_name().unwrap() == "kernel_details.csv" {
            let cells = parse_csv(&text);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(cells.len(), lines.len(), "no multi-line cells");
            let col = |name: &str| cells[0].iter().position(|c| c == name).unwrap();
            let (dur, id) = (col("Kernel duration (µs)"), col("dispatch_id"));
            let key = |i: usize| -> (i64, i64) {
                (
                    -cells[i][dur].parse::<i64>().unwrap(),
                    cells[i][id].parse().unwrap(),
                )
            };
            let mut rows: Vec<usize> = (1..lines.len()).collect();
            assert!(rows.windows(2).all(|w| key(w[0]).0 <= key(w[1]).0));
            rows.sort_by_key(|&i| key(i));
            text = std::iter::once(0)
                .chain(rows)
                .map(|i| format!("{}\n", lines[i]))
                .collect();
        }
        std::fs::write(to.join(path.file_name().unwrap()), text).unwrap();
    }
}

/// The reference folders of `corpus/tracediff`, with the model whose
/// H100 and MI300 traces they diff.
const TRACEDIFF_PAIRS: &[(&str, &str)] = &[
    ("bert_small_h100_vs_mi300.ref", "bert_small"),
    ("qwen15_05b_h100_vs_mi300.ref", "qwen15_05b"),
];

/// TraceDiff: for each pair of `../shared/corpus/tracediff` (README: the
/// baseline is the H100 trace, the variant the MI300 one), `tracelens diff`
/// writes the two CSVs so that conform.py passes them, the merged tree
/// text line for line, and the three JSON maps equal as JSON.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn tracediff_corpus_conforms() {
    let (corpus, conform) = corpus_and_conform();
    let mut problems = Vec::new();
    for &(folder, model) in TRACEDIFF_PAIRS {
        let ref_dir = corpus.join("tracediff").join(folder);
        let base = corpus.join(format!("pytorch/h100_{model}.json.gz"));
        let variant = corpus.join(format!("pytorch/mi300_{model}.json.gz"));
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("diff");
        let r = run(tracelens()
            .arg("diff")
            .arg(&base)
            .arg(&variant)
            .arg("--out")
            .arg(&out)
            .arg("-q"));
        if r.code != Some(0) || r.stderr.contains("panicked") {
            problems.push(format!(
                "{folder}: diff failed ({:?}): {}",
                r.code, r.stderr
            ));
            continue;
        }
        let sheets = [
            "diff_stats".to_string(),
            "diff_stats_unique_args_summary".into(),
        ];
        problems.extend(
            conform_problem(&conform, &ref_dir, &out, &sheets).map(|p| format!("{folder}: {p}")),
        );
        let text = |d: &Path| std::fs::read_to_string(d.join("merged_tree_output.txt"));
        match (text(&ref_dir), text(&out)) {
            (Ok(want), Ok(got)) => {
                let (w, g): (Vec<&str>, Vec<&str>) =
                    (want.lines().collect(), got.lines().collect());
                if let Some(k) = (0..w.len().max(g.len())).find(|&k| w.get(k) != g.get(k)) {
                    problems.push(format!(
                        "{folder}: merged_tree_output.txt differs at line {}: got {:?}, want {:?}",
                        k + 1,
                        g.get(k),
                        w.get(k)
                    ));
                }
            }
            (w, g) => problems.push(format!("{folder}: merged_tree_output.txt: {w:?} / {g:?}")),
        }
        for f in [
            "cpu_op_map.json",
            "cpu_op_map_trace1.json",
            "cpu_op_map_trace2.json",
        ] {
            let load = |d: &Path| -> Result<serde_json::Value, String> {
                let t = std::fs::read_to_string(d.join(f)).map_err(|e| e.to_string())?;
                serde_json::from_str(&t).map_err(|e| e.to_string())
            };
            match (load(&ref_dir), load(&out)) {
                (Ok(w), Ok(g)) if w == g => {}
                (w, g) => problems.push(format!(
                    "{folder}: {f} differs: got {}, want {}",
                    g.map_or_else(|e| e, |v| v.to_string().chars().take(300).collect()),
                    w.map_or_else(|e| e, |v| v.to_string().chars().take(300).collect())
                )),
            }
        }
        eprintln!("{folder}: 2 CSVs pass conform.py; tree text and 3 JSON maps equal");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The JAX reference folder.
const JAX_REF: &str = "jax/jax_conv_minimal_08.ref";

/// The rocprofv3 reference folders: the default report, then with
/// `--short-kernel-threshold-us 2000`.
const ROCPROF_REFS: [&str; 2] = [
    "rocprof/908_results.ref",
    "rocprof/908_results.ref_short2000",
];

/// Reference folders that tests in other files check, with those tests.
const CHECKED_ELSEWHERE: &[(&str, &str)] = &[
    (
        "compare/qwen15_05b_h100_vs_mi300.ref",
        "compare_cli::conformance_qwen15_05b",
    ),
    (
        "compare/falconsai_vit_h100_vs_mi300.ref",
        "compare_cli::conformance_falconsai_vit",
    ),
    (
        "multirank/dlrm_v100_8rank.ref",
        "collectives_cli::dlrm_8_ranks_conform_and_names_are_inferred",
    ),
];

/// Reference folders no test reads yet, with what is missing: listed
/// here so that the gap is stated, printed on every run, and fails once a
/// test reads the folder (then it moves to a test's list) or the folder
/// goes.
const NOT_YET_CHECKED: &[(&str, &str)] = &[];

/// Every reference folder of the corpus (`*.ref`, `*.ref_*`, `ref`,
/// `ref_*`, and each folder holding CSV sheets under an `expected`
/// folder) is one that some conformance test checks, and every folder a
/// test names exists: a reference added to the corpus that no test reads
/// fails here instead of passing unchecked.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn every_reference_folder_is_checked() {
    use std::collections::BTreeSet;
    let (corpus, _) = corpus_and_conform();
    let mut checked: BTreeSet<PathBuf> = pytorch_jobs(&corpus).into_iter().map(|j| j.1).collect();
    for reference in ["ref", "ref_plain"] {
        let folders = inference_folders(&corpus, reference);
        checked.extend(folders.into_iter().map(|(f, _)| f.join(reference)));
    }
    checked.insert(corpus.join(JAX_REF));
    checked.extend(ROCPROF_REFS.iter().map(|r| corpus.join(r)));
    checked.extend(pftrace_jobs(&corpus).into_iter().map(|j| j.1));
    checked.insert(corpus.join(GENESIS_REF));
    let tracediff = TRACEDIFF_PAIRS
        .iter()
        .map(|p| corpus.join("tracediff").join(p.0));
    checked.extend(tracediff);
    checked.extend(CHECKED_ELSEWHERE.iter().map(|(f, _)| corpus.join(f)));

    let mut found = BTreeSet::new();
    // (folder, under an `expected` folder)
    let mut stack = vec![(corpus.clone(), false)];
    while let Some((dir, expected)) = stack.pop() {
        let mut has_csv = false;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if !path.is_dir() {
                has_csv |= path.extension().is_some_and(|e| e == "csv");
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy();
            let is_ref = name.ends_with(".ref") || name.contains(".ref_");
            if is_ref || name == "ref" || name.starts_with("ref_") {
                found.insert(path);
            } else {
                let expected = expected || name == "expected";
                stack.push((path, expected));
            }
        }
        if expected && has_csv {
            found.insert(dir);
        }
    }
    for (folder, why) in NOT_YET_CHECKED {
        let path = corpus.join(folder);
        assert!(
            !checked.contains(&path),
            "{folder} is checked now: take it off NOT_YET_CHECKED"
        );
        assert!(
            found.remove(&path),
            "{folder} is not in the corpus: take it off NOT_YET_CHECKED"
        );
        eprintln!("NOT CHECKED {folder}: {why}");
    }
    let unchecked: Vec<_> = found.difference(&checked).collect();
    assert!(unchecked.is_empty(), "checked by no test: {unchecked:?}");
    let missing: Vec<_> = checked.difference(&found).collect();
    assert!(missing.is_empty(), "named by a test, absent: {missing:?}");
}
