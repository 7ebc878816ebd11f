//! Fleet mode: `tracelens summarize` (per-trace Parquet summaries) and
//! `tracelens fleet` (the merged report). Synthetic fleets come from
//! `tools/synth_fleet.py` (a planted slow rank and slow step); their
//! collectives must match `tracelens collectives` on the same traces byte
//! for byte; the comparison of two fleets gates on a slower step time; bad
//! inputs give one error line.

mod common;

use std::path::{Path, PathBuf};

use common::{csv_text, run, testdata, tracelens};

/// The sheets that `tracelens collectives` writes and the fleet report
/// repeats for a job.
const COLLECTIVE_SHEETS: [&str; 6] = [
    "nccl_implicit_sync",
    "nccl_long",
    "nccl_summary_by_type",
    "nccl_summary_implicit_sync",
    "nccl_summary_long",
    "straggler_summary",
];

/// `tools/synth_fleet.py SRC OUT ARGS…`.
#[cfg(not(no_python3))]
fn synth(src: &Path, out: &Path, args: &[&str]) {
    let mut all: Vec<std::ffi::OsString> = vec![common::root().join("tools/synth_fleet.py").into()];
    all.extend([src.into(), out.into()]);
    all.extend(
        args.iter()
            .chain(&["--jobs", "2"])
            .map(std::ffi::OsString::from),
    );
    common::python3(&all);
}

/// `tracelens summarize DIR --out SUMMARIES`; returns the summaries folder.
fn summarize(traces: &Path, out: &Path) -> PathBuf {
    run(tracelens()
        .arg("summarize")
        .arg(traces)
        .arg("--out")
        .arg(out)
        .arg("-q"))
    .assert_ok();
    out.to_path_buf()
}

/// `tracelens fleet SUMMARIES --out REPORT ARGS…`; returns its run.
fn fleet(summaries: &Path, out: &Path, args: &[&str]) -> common::Run {
    run(tracelens()
        .arg("fleet")
        .arg(summaries)
        .arg("--out")
        .arg(out)
        .args(args))
}

/// The rows of a CSV sheet as records by column name.
fn rows(dir: &Path, sheet: &str) -> Vec<std::collections::HashMap<String, String>> {
    let text = csv_text(dir, sheet);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

/// The steps of the `fleet_outliers` rows of kind `step`.
fn step_outliers(out: &[std::collections::HashMap<String, String>]) -> Vec<&str> {
    out.iter()
        .filter(|r| r["kind"] == "step")
        .map(|r| r["step"].as_str())
        .collect()
}

/// The collective sheets of the fleet report equal those of `tracelens
/// collectives` on the traces, byte for byte.
fn assert_collectives_agree(traces: &Path, report: &Path, tmp: &Path) {
    let coll = tmp.join("collectives");
    run(tracelens()
        .args(["collectives", "--trace-dir"])
        .arg(traces)
        .arg("--csv")
        .arg(&coll)
        .arg("-q"))
    .assert_ok();
    for s in COLLECTIVE_SHEETS {
        assert_eq!(csv_text(report, s), csv_text(&coll, s), "sheet {s}");
    }
}

#[test]
fn two_hand_written_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = testdata("fleet");
    let s = summarize(&traces, &tmp.path().join("s"));
    for f in [
        "trace_info",
        "steps",
        "collectives",
        "ops_summary",
        "gpu_timeline",
    ] {
        assert!(
            s.join("rank0").join(format!("{f}.parquet")).is_file(),
            "{f}"
        );
    }
    let report = tmp.path().join("report");
    fleet(&s, &report, &[]).assert_ok();
    // The step figures, worked out by hand from testdata/fleet: GEMM
    // 1100–1400 (rank 1: –1340), all-reduce from 1410 (1350) to 1560,
    // copy 1600–1620.
    let steps = rows(&report, "fleet_steps");
    assert_eq!(steps.len(), 2);
    let r0 = &steps[0];
    assert_eq!((r0["rank"].as_str(), r0["step"].as_str()), ("0", "5"));
    assert_eq!(r0["gpu_span_us"], "520.0");
    assert_eq!(r0["busy_us"], "470.0");
    assert_eq!(r0["computation_us"], "300.0");
    assert_eq!(r0["exposed_comm_us"], "150.0");
    assert_eq!(r0["exposed_memcpy_us"], "20.0");
    assert_eq!(r0["idle_us"], "50.0");
    assert_eq!(steps[1]["exposed_comm_us"], "210.0");
    // Percentiles across the two traces: linear interpolation.
    let ops = rows(&report, "fleet_ops");
    let mm = ops.iter().find(|r| r["name"] == "aten::mm").unwrap();
    assert_eq!(mm["traces"], "2");
    assert_eq!(mm["time_p50_us"], "270.0");
    assert_eq!(mm["time_p90_us"], "294.0");
    assert_eq!(mm["time_max_us"], "300.0");
    assert_collectives_agree(&traces, &report, tmp.path());
    for h in ["heatmap_busy", "heatmap_idle", "heatmap_exposed_comm"] {
        let svg = std::fs::read_to_string(report.join(format!("{h}.svg"))).unwrap();
        assert_eq!(svg.matches("<title>rank ").count(), 2, "{h}");
    }
    let md = std::fs::read_to_string(report.join("fleet.md")).unwrap();
    assert!(md.contains("2 traces; 2 ranks × 1 profiler steps"), "{md}");
}

#[test]
#[cfg_attr(no_python3, ignore = "needs python3 (tools/synth_fleet.py)")]
fn planted_slow_rank_and_step_are_found_and_the_gate_fails_on_a_slower_fleet() {
    #[cfg(not(no_python3))]
    {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let src = testdata("fleet");
        synth(
            &src,
            &t.join("a"),
            &[
                "--ranks",
                "48",
                "--steps",
                "4",
                "--slow-rank",
                "29",
                "--slow-step",
                "2",
                "--seed",
                "1",
            ],
        );
        let s = summarize(&t.join("a"), &t.join("sa"));
        let report = t.join("ra");
        fleet(&s, &report, &[]).assert_ok();
        let out = rows(&report, "fleet_outliers");
        let steps = step_outliers(&out);
        assert_eq!(steps, ["7"], "step 2 of ProfilerStep#5.. is #7: {out:?}");
        let ranks: Vec<&str> = out
            .iter()
            .filter(|r| r["kind"] == "rank" && r["metric"] == "gpu_span_us")
            .map(|r| r["rank"].as_str())
            .collect();
        assert_eq!(ranks, ["29"], "{out:?}");
        assert_collectives_agree(&t.join("a"), &report, t);

        // A fleet like it (another seed, no planted slowness): no change;
        // one 10% slower throughout: a regression, and the gate fails; one
        // with a single step of four 30% slower: +7.5% but a step could be
        // a hiccup, so inconclusive, and the gate fails too (likely slower).
        let fleet_of = |name: &str, args: &[&str]| {
            let mut all = vec!["--ranks", "48", "--steps", "4"];
            all.extend_from_slice(args);
            synth(&src, &t.join(name), &all);
            summarize(&t.join(name), &t.join(format!("s{name}")))
        };
        let sb = fleet_of("b", &["--seed", "2"]);
        let base = sb.to_str().unwrap();
        let same = fleet(
            &fleet_of("c", &["--seed", "3"]),
            &t.join("rc"),
            &["--baseline", base, "--fail-above", "5"],
        );
        same.assert_ok();
        assert!(
            same.stderr
                .contains("verdict: step time no change (exit 0)"),
            "{}",
            same.stderr
        );
        let verdict = |dir: &str| {
            let cmp = rows(&t.join(dir), "fleet_compare");
            let span = cmp
                .iter()
                .find(|r| r["metric"] == "gpu_span_us")
                .unwrap()
                .clone();
            (
                span["verdict"].clone(),
                span["change_pct"].parse::<f64>().unwrap(),
            )
        };
        assert_eq!(verdict("rc").0, "no change");
        let slower = fleet(
            &fleet_of("d", &["--seed", "4", "--scale", "1.1"]),
            &t.join("rd"),
            &["--baseline", base, "--fail-above", "5"],
        );
        assert_eq!(slower.code, Some(1), "{slower:#?}");
        assert!(
            slower
                .stderr
                .contains("verdict: step time regression (exit 1)")
        );
        let (v, change) = verdict("rd");
        assert_eq!(v, "regression");
        assert!((8.0..12.0).contains(&change), "{change}");
        let one_step = fleet(
            &fleet_of(
                "e",
                &[
                    "--seed",
                    "5",
                    "--slow-step",
                    "0",
                    "--slow-step-factor",
                    "1.3",
                ],
            ),
            &t.join("re"),
            &["--baseline", base, "--fail-above", "5"],
        );
        assert_eq!(one_step.code, Some(1), "{one_step:#?}");
        let (v, change) = verdict("re");
        assert_eq!(v, "inconclusive");
        assert!((5.0..10.0).contains(&change), "{change}");
        assert!(
            one_step
                .stderr
                .contains("verdict: step time inconclusive (exit 1)")
        );
        assert!((5.0..10.0).contains(&change), "{change}");
    }
}

#[test]
fn bad_inputs_give_one_error_line() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // A folder without summaries.
    let r = fleet(t, &t.join("r"), &[]);
    assert_eq!(r.code, Some(2), "{r:#?}");
    assert!(r.stderr.contains("no summaries"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(!t.join("r").exists());
    // A truncated gzip among good traces: its error names it, the others
    // are written, the exit code says it failed.
    let traces = t.join("traces");
    std::fs::create_dir(&traces).unwrap();
    std::fs::copy(testdata("fleet/rank0.json"), traces.join("rank0.json")).unwrap();
    std::fs::write(traces.join("rank1.json.gz"), [0x1f, 0x8b, 0x08, 0x00, 1, 2]).unwrap();
    let r = run(tracelens()
        .arg("summarize")
        .arg(&traces)
        .arg("--out")
        .arg(t.join("s"))
        .arg("-q"));
    r.assert_no_panic();
    assert_eq!(r.code, Some(1), "{r:#?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("rank1.json.gz"), "{lines:?}");
    assert!(
        lines[1].contains("1 of 2 traces could not be summarised"),
        "{lines:?}"
    );
    assert!(t.join("s/rank0/trace_info.parquet").is_file());
    assert!(!t.join("s/rank1").exists());
    // A missing input, and two traces that would share a summary name.
    let r = run(tracelens()
        .args(["summarize", "missing.json", "--out"])
        .arg(t.join("s2")));
    r.assert_one_error_line("missing.json");
    let other = t.join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(testdata("fleet/rank0.json"), other.join("rank0.json")).unwrap();
    let r = run(tracelens()
        .arg("summarize")
        .arg(testdata("fleet/rank0.json"))
        .arg(other.join("rank0.json"))
        .arg("--out")
        .arg(t.join("s3")));
    r.assert_one_error_line("both be summarised as rank0");
    // --fail-above without --baseline is a usage error.
    let r = fleet(&t.join("s"), &t.join("r4"), &["--fail-above", "5"]);
    assert_eq!(r.code, Some(2), "{r:#?}");
}

/// The acceptance fleet: 1,024 ranks of 3 steps made from the 8 dlrm
/// ranks of the corpus, with rank 700 and the second step slow.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
#[cfg_attr(no_python3, ignore = "needs python3 (tools/synth_fleet.py)")]
fn corpus_dlrm_real_ranks_and_a_synthetic_1024_rank_job() {
    #[cfg(not(any(no_shared_corpus, no_python3)))]
    {
        let src = common::shared().join("corpus/multirank/dlrm_v100_8rank");
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        // The 8 real ranks: collectives as `tracelens collectives` finds
        // them; each rank's step figures are its report's gpu_timeline.
        let s8 = summarize(&src, &t.join("s8"));
        let r8 = t.join("r8");
        fleet(&s8, &r8, &[]).assert_ok();
        assert_collectives_agree(&src, &r8, t);
        let steps = rows(&r8, "fleet_steps");
        assert_eq!(steps.len(), 8);
        let rep = t.join("rep0");
        run(tracelens()
            .arg("report")
            .arg(src.join("worker0_step_12.1694128201545.pt.trace.json.gz"))
            .arg("--csv")
            .arg(&rep)
            .arg("-q"))
        .assert_ok();
        let timeline = rows(&rep, "gpu_timeline");
        let ms = |ty: &str| -> f64 {
            timeline.iter().find(|r| r["type"] == ty).unwrap()["time ms"]
                .parse()
                .unwrap()
        };
        let us = |k: &str| -> f64 { steps[0][k].parse().unwrap() };
        assert!((us("computation_us") - ms("computation_time") * 1000.0).abs() < 1e-6);
        assert!((us("exposed_comm_us") - ms("exposed_comm_time") * 1000.0).abs() < 1e-6);
        assert!((us("busy_us") - ms("busy_time") * 1000.0).abs() < 1e-6);

        // 1,024 ranks.
        let big = t.join("fleet1024");
        synth(
            &src,
            &big,
            &[
                "--ranks",
                "1024",
                "--steps",
                "3",
                "--slow-rank",
                "700",
                "--slow-step",
                "1",
                "--seed",
                "7",
            ],
        );
        let s = summarize(&big, &t.join("s1024"));
        let report = t.join("r1024");
        fleet(&s, &report, &[]).assert_ok();
        let out = rows(&report, "fleet_outliers");
        let steps = step_outliers(&out);
        assert_eq!(steps, ["11"], "ProfilerStep#10 + 1: {out:?}");
        // The slow rank stands out most on computation time (ranks made
        // from the real rank 4, whose computation is 7.5% above the
        // others', may follow it with jitter added).
        let first = out.iter().find(|r| r["kind"] == "rank").unwrap();
        assert_eq!(first["rank"], "700", "{out:?}");
        assert_eq!(first["metric"], "computation_us", "{out:?}");
        let z: f64 = first["robust_z"].parse().unwrap();
        assert!(z > 10.0, "{z}");
        assert_eq!(rows(&report, "fleet_steps").len(), 1024 * 3);
        let sync = rows(&report, "nccl_summary_implicit_sync");
        assert!(!sync.is_empty());
        let long = csv_text(&report, "nccl_long");
        assert_eq!(long.lines().count(), 1 + 1024 * 8 * 3);
    }
}

#[test]
fn the_fleet_json_carries_each_traces_health_as_its_report_gives_it() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = testdata("fleet");
    let s = summarize(&traces, &tmp.path().join("s"));
    let report = tmp.path().join("report");
    let r = fleet(&s, &report, &["--json", "-", "-q"]);
    r.assert_ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["kind"], "fleet");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["traces"], 2);
    let health = v["health"].as_array().unwrap();
    assert_eq!(health.len(), 2);
    // Each trace's verdict and findings are what `report --json` says of
    // the trace itself.
    for (h, rank) in health.iter().zip(["rank0", "rank1"]) {
        assert_eq!(h["trace"], rank);
        let trace = traces.join(format!("{rank}.json"));
        let one = run(tracelens().args(["report", trace.to_str().unwrap(), "--json", "-", "-q"]));
        one.assert_ok();
        let own: serde_json::Value = serde_json::from_str(&one.stdout).unwrap();
        assert_eq!(h["verdict"], own["health"]["verdict"], "{rank}");
        let ids = |list: &serde_json::Value| -> Vec<String> {
            list.as_array()
                .unwrap()
                .iter()
                .take(3)
                .map(|f| f["id"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(ids(&h["findings"]), ids(&own["findings"]), "{rank}");
    }
    assert_eq!(rows(&report, "fleet_health").len(), 2);
    // --json may not replace a summary's table.
    let table = s.join("rank0").join("health.parquet");
    let r = fleet(
        &s,
        &tmp.path().join("r2"),
        &["--json", table.to_str().unwrap()],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(table.is_file());
}

/// `step_summary` of the report on testdata/steps/three_steps.json, worked
/// out by hand from its events: step 1 a GEMM kernel 20–50 µs and an add
/// 55–65; step 2 a GEMM 120–140, an all-reduce 135–160 and a copy 170–180;
/// step 3 no GPU work.
#[test]
fn step_summary_of_three_hand_written_steps() {
    let (_tmp, out, r) = common::report_csv(&testdata("steps/three_steps.json"), &[]);
    r.assert_ok();
    let steps = rows(&out, "step_summary");
    assert_eq!(steps.len(), 3);
    let cells = |i: usize, cols: &[&str]| -> Vec<String> {
        cols.iter().map(|c| steps[i][*c].clone()).collect()
    };
    let cols = [
        "step",
        "cpu_start_us",
        "cpu_dur_us",
        "gpu_start_us",
        "gpu_span_us",
        "busy_us",
        "computation_us",
        "exposed_comm_us",
        "exposed_memcpy_us",
        "idle_us",
        "gpu_events",
        "kernels",
        "top_category",
        "top_category_us",
    ];
    let want = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
    assert_eq!(
        cells(0, &cols),
        want(&[
            "1", "0.0", "100.0", "20.0", "45.0", "40.0", "40.0", "0.0", "0.0", "5.0", "2", "2",
            "GEMM", "30.0"
        ])
    );
    // The all-reduce overlaps the GEMM by 5 µs: 20 of its 25 µs exposed;
    // its 25 µs make record_param_comms the top category.
    assert_eq!(
        cells(1, &cols),
        want(&[
            "2",
            "100.0",
            "100.0",
            "120.0",
            "60.0",
            "50.0",
            "20.0",
            "20.0",
            "10.0",
            "10.0",
            "3",
            "2",
            "record_param_comms",
            "25.0"
        ])
    );
    assert_eq!(
        cells(2, &cols),
        want(&[
            "3", "200.0", "50.0", "", "", "", "", "", "", "", "0", "0", "", ""
        ])
    );
}

/// `step_summary` of a serving trace without profiler steps: one row per
/// iteration of testdata/split/serving.json (steps at 1000 + 1000·i µs,
/// 100 µs long, each launching one 40 µs kernel 200 µs after it starts),
/// with the batch and phase of its annotation: two prefill steps of 200
/// tokens, then 20 decode requests a step, with one prefill request (100
/// tokens + 19 decode) at 3, 7 and 11. The health check of uneven steps
/// stays on profiler steps (a serving trace's steps differ by design).
#[test]
fn step_summary_of_serving_iterations() {
    let (_tmp, out, r) = common::report_csv(&testdata("split/serving.json"), &[]);
    r.assert_ok();
    let steps = rows(&out, "step_summary");
    assert_eq!(steps.len(), 12);
    let cols = [
        "step",
        "cpu_start_us",
        "cpu_dur_us",
        "gpu_start_us",
        "gpu_span_us",
        "kernels",
        "batch_size",
        "phase",
    ];
    let cells = |i: usize| -> Vec<&str> { cols.iter().map(|c| steps[i][*c].as_str()).collect() };
    assert_eq!(
        cells(0),
        [
            "0",
            "1000.0",
            "100.0",
            "1200.0",
            "40.0",
            "1",
            "200",
            "prefill_only"
        ]
    );
    assert_eq!(
        cells(2),
        [
            "2",
            "3000.0",
            "100.0",
            "3200.0",
            "40.0",
            "1",
            "20",
            "decode_only"
        ]
    );
    assert_eq!(
        cells(7),
        [
            "7",
            "8000.0",
            "100.0",
            "8200.0",
            "40.0",
            "1",
            "119",
            "prefilldecode"
        ]
    );
    let health = rows(&out, "health");
    let uneven = health
        .iter()
        .find(|h| h["id"] == "health.uneven_steps")
        .unwrap();
    assert_eq!(uneven["status"], "cannot_tell");
    // A profiler-step trace has no batch or phase.
    let (_tmp, out, r) = common::report_csv(&testdata("steps/three_steps.json"), &[]);
    r.assert_ok();
    let steps = rows(&out, "step_summary");
    assert!(
        steps
            .iter()
            .all(|s| s["batch_size"].is_empty() && s["phase"].is_empty())
    );
}

/// The report's `step_summary` and the fleet report's `fleet_steps` give a
/// corpus trace's steps the same figures (one function makes both).
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn step_summary_equals_the_fleet_steps_on_a_corpus_trace() {
    let trace = common::shared().join("corpus/pytorch/a100_allreduce_2rank.json.gz");
    let tmp = tempfile::tempdir().unwrap();
    let s = summarize(&trace, &tmp.path().join("s"));
    let report = tmp.path().join("fleet");
    fleet(&s, &report, &["-q"]).assert_ok();
    let fleet_steps = rows(&report, "fleet_steps");
    let (_t, out, r) = common::report_csv(&trace, &[]);
    r.assert_ok();
    let steps = rows(&out, "step_summary");
    assert_eq!(steps.len(), 3);
    assert_eq!(fleet_steps.len(), steps.len());
    for (f, s) in fleet_steps.iter().zip(&steps) {
        for (col, value) in s {
            if let Some(v) = f.get(col) {
                assert_eq!(v, value, "step {} column {col}", s["step"]);
            }
        }
        assert_eq!(f["gpu_span_us"], s["gpu_span_us"]);
    }
}
