//! The diagnosis layer end to end: faults planted by `tools/plant_faults.py`
//! into a real trace must raise the health check or finding their manifest
//! names, and no health check may fail on the corpus's own traces.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{csv_file, python3, run_in, shared};

/// The trace the faults are planted in: its GPU is idle about 1% of the
/// time, so planted idle stands out against what is already there.
const BASE: &str = "corpus/pytorch/h100_timesformer.json.gz";

/// Each fault with the `--amount` it needs (None: the default).
///
/// Findings are shown only from 1% of the GPU span, about 1.6 ms on this
/// trace. The host runs far ahead of this trace's GPU (its queue holds
/// tens of ms of work), and a planted stall or sync moves later GPU work
/// with its launch, keeping its lag: the GPU waits on the host only where
/// the planted host time exceeds that lead.
/// - `host_gaps`: a 5 ms stall (the default) is absorbed by the queue and
///   leaves no host-wait gap; 300 ms outlasts it;
/// - `inserted_syncs`: 60 syncs, each draining the queue;
/// - `op_variance`: with factors up to 6 (the default) the time above the
///   median stays under the threshold; up to 30 passes it;
/// - `blocking_copies`: three 16 MiB pageable copies (the default) are
///   above the threshold for both copy findings.
///
/// Left out: `slow_rank` needs a folder of several rank traces (the
/// straggler finding compares ranks, which a one-trace report cannot; it
/// has its own test, [`a_slow_rank_is_the_straggler`]);
/// `split_kernels` is planted in [`HOST_BOUND_BASE`] instead (see
/// [`HOST_BOUND_FAULTS`]).
const FAULTS: &[(&str, Option<&str>)] = &[
    ("dropped_kernels", None),
    ("overlapping_kernels", None),
    ("stripped_shapes", None),
    ("broken_links", None),
    ("clock_skew", None),
    ("truncated", None),
    ("host_gaps", Some("300")),
    ("inserted_syncs", Some("60")),
    ("slowed_gemm", None),
    ("blocking_copies", None),
    ("op_variance", Some("30")),
];

/// A trace whose host launches barely keep up with its GPU (the GPU is
/// idle 84% of its span): kernels start about 6 µs after their launch.
const HOST_BOUND_BASE: &str = "corpus/pytorch/h100_falconsai_vit.json.gz";

/// The faults planted in [`HOST_BOUND_BASE`]: kernels split into pieces
/// shorter than their launch leave the GPU idle between the pieces only
/// where the queue is empty. On [`BASE`] the host runs tens of ms ahead,
/// so the pieces would run back to back (the planter keeps each kernel's
/// lag behind its launch there, and the rule rightly finds no launch-bound
/// gap: their kernels started far later than one launch latency).
const HOST_BOUND_FAULTS: &[(&str, Option<&str>)] = &[("split_kernels", None)];

/// The faults of plant_faults.py this test does not plant (see [`FAULTS`]).
const LEFT_OUT: &[&str] = &["slow_rank"];

/// What a report's diagnosis says: each check's status, and the mid
/// impact (ms) of each finding that is not `cannot_tell`, by id, subject
/// and shape.
#[derive(Debug)]
struct Diagnosis {
    checks: BTreeMap<String, String>,
    findings: BTreeMap<(String, String, String), f64>,
    /// Rows of findings.csv: (id, severity, evidence).
    rows: Vec<(String, String, String)>,
}

/// `tracelens report TRACE --csv DIR -q` in `dir`, its health and
/// findings sheets read back.
fn diagnose(dir: &Path, trace: &Path) -> Diagnosis {
    let csv = dir.join(format!(
        "{}.csv",
        trace.file_name().unwrap().to_string_lossy()
    ));
    let r = run_in(
        dir,
        &[
            "report",
            trace.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "-q",
        ],
    );
    r.assert_ok();
    let (h, rows) = csv_file(&csv.join("health.csv"));
    let at = |h: &[String], n: &str| h.iter().position(|c| c == n).unwrap();
    let (id, status) = (at(&h, "id"), at(&h, "status"));
    let checks = rows
        .iter()
        .map(|r| (r[id].clone(), r[status].clone()))
        .collect();
    let (h, rows) = csv_file(&csv.join("findings.csv"));
    let (id, sev, mid, evidence) = (
        at(&h, "id"),
        at(&h, "severity"),
        at(&h, "impact_mid_ms"),
        at(&h, "evidence"),
    );
    let (subject, shape) = (at(&h, "subject"), at(&h, "shape"));
    let findings = rows
        .iter()
        .filter(|r| r[sev] != "cannot_tell")
        .map(|r| {
            let ms: f64 = r[mid].parse().unwrap_or_else(|_| panic!("{r:?}"));
            ((r[id].clone(), r[subject].clone(), r[shape].clone()), ms)
        })
        .collect();
    let rows = rows
        .iter()
        .map(|r| (r[id].clone(), r[sev].clone(), r[evidence].clone()))
        .collect();
    Diagnosis {
        checks,
        findings,
        rows,
    }
}

/// The `expected` ids of a planting manifest.
fn expected(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["expected"]
        .as_array()
        .expect("the manifest lists what it expects")
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[test]
#[cfg_attr(
    any(no_shared_corpus, no_python3),
    ignore = "needs ../shared/corpus and python3"
)]
fn planted_faults_are_found() {
    let tool = common::root().join("tools/plant_faults.py");
    // The list of faults covers every fault the tool plants in one trace.
    let listed: Vec<String> = python3([tool.to_str().unwrap(), "--list"])
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|f| !LEFT_OUT.contains(&f.as_str()))
        .collect();
    let mut ours: Vec<&str> = FAULTS
        .iter()
        .chain(HOST_BOUND_FAULTS)
        .map(|f| f.0)
        .collect();
    let mut listed_sorted: Vec<&str> = listed.iter().map(String::as_str).collect();
    ours.sort_unstable();
    listed_sorted.sort_unstable();
    assert_eq!(
        listed_sorted, ours,
        "a fault of plant_faults.py is not tested"
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut missed = plant_and_find(tmp.path(), &tool, BASE, FAULTS);
    missed.extend(plant_and_find(
        tmp.path(),
        &tool,
        HOST_BOUND_BASE,
        HOST_BOUND_FAULTS,
    ));
    assert!(missed.is_empty(), "planted faults not found: {missed:#?}");
}

/// Plants each of `faults` into the corpus trace `base` and reports, for
/// each id its manifest expects, what was not found.
fn plant_and_find(
    dir: &Path,
    tool: &Path,
    base: &str,
    faults: &[(&str, Option<&str>)],
) -> Vec<String> {
    let base = shared().join(base);
    let clean = diagnose(dir, &base);
    let mut missed = Vec::new();
    for &(fault, amount) in faults {
        let out: PathBuf = dir.join(format!("{fault}.json.gz"));
        let mut args = vec![
            tool.to_str().unwrap(),
            fault,
            base.to_str().unwrap(),
            out.to_str().unwrap(),
        ];
        if let Some(a) = amount {
            args.extend(["--amount", a]);
        }
        python3(&args);
        let manifest = dir.join(format!("{fault}.json.gz.planted.json"));
        let want = expected(&manifest);
        assert!(!want.is_empty(), "{fault}: the manifest expects nothing");
        let got = diagnose(dir, &out);
        for id in want {
            // A health check must pass on the clean trace and warn or
            // fail on the planted one.
            if let Some(status) = got.checks.get(&id) {
                assert_eq!(clean.checks[&id], "pass", "{id} on the clean trace");
                if status != "warn" && status != "fail" {
                    missed.push(format!("{fault}: {id} is {status}"));
                }
                continue;
            }
            // A finding must be new or claim more time than on the clean
            // trace, for the same subject and shape: the clean trace
            // already shows some of them (two low-efficiency bmm shapes, a
            // little pageable copy time), and a planted fault either adds
            // a finding about another op or grows the existing one. The
            // largest mid impact per id alone would miss a new subject
            // smaller than the clean trace's.
            let grew = got
                .findings
                .iter()
                .any(|(k, ms)| k.0 == id && clean.findings.get(k).is_none_or(|before| ms > before));
            if !grew {
                let ours: Vec<_> = got.findings.iter().filter(|(k, _)| k.0 == id).collect();
                missed.push(format!("{fault}: {id} not new nor larger: {ours:?}"));
            }
        }
    }
    missed
}

#[test]
#[cfg_attr(
    any(no_shared_corpus, no_python3),
    ignore = "needs ../shared/corpus and python3"
)]
fn no_health_check_fails_on_the_corpus() {
    let dir = shared().join("corpus/pytorch");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    traces.sort();
    assert!(traces.len() >= 10, "only {} traces", traces.len());
    let tmp = tempfile::tempdir().unwrap();
    let mut bad = Vec::new();
    for t in &traces {
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        let d = diagnose(tmp.path(), t);
        assert!(!d.checks.is_empty(), "{name}: no health rows");
        for (id, status) in &d.checks {
            if status == "fail" {
                bad.push(format!("{name}: {id} fails"));
            }
        }
        for (id, sev, evidence) in &d.rows {
            if sev != "cannot_tell" && evidence.trim().is_empty() {
                bad.push(format!("{name}: {id} has no evidence"));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The manifest's `input_dims` as the op sheets write `Input Dims`: a
/// Python tuple of tuples, `((768,), (25096, 768), ())`.
fn dims_text(dims: &serde_json::Value) -> String {
    let one = |d: &serde_json::Value| {
        let n: Vec<String> = d
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap().to_string())
            .collect();
        match n.len() {
            1 => format!("({},)", n[0]),
            _ => format!("({})", n.join(", ")),
        }
    };
    let all: Vec<String> = dims.as_array().unwrap().iter().map(one).collect();
    format!("({})", all.join(", "))
}

/// The multi-rank job the slow rank is planted in.
const JOB: &str = "corpus/multirank/dlrm_v100_8rank";

/// Pairs of texts: (id, status) of checks, (id, subject) of findings.
type Pairs = Vec<(String, String)>;

/// `tracelens collectives --trace-dir DIR --json -`: its health checks
/// (id, status) and its findings (id, subject).
fn diagnose_job(dir: &Path) -> (Pairs, Pairs) {
    let r = run_in(
        dir,
        &[
            "collectives",
            "--trace-dir",
            dir.to_str().unwrap(),
            "--json",
            "-",
            "-q",
        ],
    );
    r.assert_ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["kind"], "collectives");
    let text = |x: &serde_json::Value| x.as_str().unwrap_or("").to_string();
    let checks = v["health"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (text(&c["id"]), text(&c["status"])))
        .collect();
    let findings = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (text(&f["id"]), text(&f["subject"])))
        .collect();
    (checks, findings)
}

#[test]
#[cfg_attr(
    any(no_shared_corpus, no_python3),
    ignore = "needs ../shared/corpus and python3"
)]
fn compare_names_the_planted_slow_gemm() {
    let base = shared().join(BASE);
    let tool = common::root().join("tools/plant_faults.py");
    let tmp = tempfile::tempdir().unwrap();
    let slowed = tmp.path().join("slowed.json.gz");
    python3([
        tool.to_str().unwrap(),
        "slowed_gemm",
        base.to_str().unwrap(),
        slowed.to_str().unwrap(),
    ]);
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("slowed.json.gz.planted.json")).unwrap(),
    )
    .unwrap();
    let details = &manifest["details"];
    let compare = |a: &Path, b: &Path| -> serde_json::Value {
        let r = run_in(
            tmp.path(),
            &[
                "compare",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "--json",
                "-",
                "-q",
            ],
        );
        r.assert_ok();
        serde_json::from_str(&r.stdout).unwrap()
    };
    // The trace against itself: nothing moved.
    let same = compare(&base, &base);
    assert_eq!(
        same["findings"],
        serde_json::json!([]),
        "{}",
        same["findings"]
    );
    // Against the planted copy: the slowed op and shape, by the time the
    // tool added, with the kernel it slowed.
    let v = compare(&base, &slowed);
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "change.op_moved")
        .unwrap_or_else(|| panic!("no change.op_moved: {}", v["findings"]));
    assert_eq!(f["subject"], details["op"]);
    assert_eq!(
        f["shape"].as_str().unwrap(),
        dims_text(&details["input_dims"])
    );
    let added_ms = details["gpu_time_added_us"].as_f64().unwrap() / 1e3;
    let delta = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "delta_ms")
        .unwrap()["value"]
        .as_f64()
        .unwrap();
    assert!((delta - added_ms).abs() < 1e-3, "{delta} vs {added_ms}");
    assert_eq!(f["confidence"], "high", "{f}");
    let kernel = details["kernel_names"][0].as_str().unwrap();
    let summary = f["summary"].as_str().unwrap();
    assert!(summary.contains(&kernel[..60]), "{summary}");
    // The same kernel, only slower: no kernel change; both sides healthy.
    assert!(
        !v["findings"].to_string().contains("change.kernels_changed"),
        "{}",
        v["findings"]
    );
    assert!(!v["findings"].to_string().contains("change.health_differs"));
}

#[test]
#[cfg_attr(
    any(no_shared_corpus, no_python3),
    ignore = "needs ../shared/corpus and python3"
)]
fn a_slow_rank_is_the_straggler() {
    let job = shared().join(JOB);
    let (checks, findings) = diagnose_job(&job);
    // The unmodified job: every rank has the same 8 collectives, and the
    // last arrival moves between ranks (rank 7 last at 5 of 8).
    assert_eq!(checks, [("health.rank_mismatch".into(), "pass".into())]);
    assert!(
        findings.iter().all(|f| f.0 != "comm.straggler"),
        "{findings:?}"
    );
    let tool = common::root().join("tools/plant_faults.py");
    let tmp = tempfile::tempdir().unwrap();
    for seed in ["0", "1", "2"] {
        let out = tmp.path().join(format!("slow{seed}"));
        python3([
            tool.to_str().unwrap(),
            "slow_rank",
            job.to_str().unwrap(),
            out.to_str().unwrap(),
            "--seed",
            seed,
        ]);
        let manifest = tmp.path().join(format!("slow{seed}.planted.json"));
        assert_eq!(expected(&manifest), ["comm.straggler"]);
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
        let rank = m["details"]["rank"].as_i64().unwrap();
        let (checks, findings) = diagnose_job(&out);
        assert!(checks.iter().all(|c| c.1 != "fail"), "{checks:?}");
        let stragglers: Vec<&(String, String)> = findings
            .iter()
            .filter(|f| f.0 == "comm.straggler")
            .collect();
        assert_eq!(
            stragglers,
            [&("comm.straggler".to_string(), format!("rank {rank}"))],
            "seed {seed}: {findings:?}"
        );
    }
}
