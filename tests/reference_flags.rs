//! The reference's command lines run unchanged: each flag of each of its
//! console scripts (read from their argument parsers) is a hidden alias
//! giving the same sheets as the tracelens flag, is accepted and ignored
//! where tracelens always does what it asks, or is refused with one line
//! saying what replaces it; docs/migrating.md lists every one. (The
//! collective script's flags in use: tests/collectives_cli.rs.)

mod common;

use common::{entries, read_dir_bytes, run, testdata, tracelens};
use std::path::Path;

fn example() -> std::path::PathBuf {
    testdata("example.json")
}

/// Runs `tracelens ARGS -q` in a fresh folder; returns it and the CSV
/// folder `c` in it, after checking the run succeeded.
fn csvs(args: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    run(tracelens().current_dir(dir.path()).args(args).arg("-q")).assert_ok();
    let c = dir.path().join("c");
    assert!(
        c.is_dir(),
        "{args:?} wrote no c/: {:?}",
        entries(dir.path())
    );
    (dir, c)
}

#[test]
fn report_flags_of_the_reference_give_the_same_sheets() {
    let t = example();
    let t = t.to_str().unwrap();
    let arch = common::root().join("gpu_specs/MI300X.json");
    let arch = arch.to_str().unwrap();
    let reference = [
        "report",
        "--profile_json_path",
        t,
        "--output_csvs_dir",
        "c",
        "--short_kernel_threshold_us",
        "13",
        "--short_kernel_histogram_bins",
        "7",
        "--topk_short_kernels",
        "2",
        "--micro_idle_thresh_us",
        "5",
        "--include_unlinked_kernels",
        "--enable_kernel_summary",
        "--short_kernel_study",
        "--disable_coll_analysis",
        "--enable_pseudo_ops",
        "--group_by_num_kernels",
        "--include_call_stack",
        "--gpu_arch_json_path",
        arch,
    ];
    let ours = [
        "report",
        t,
        "--csv",
        "c",
        "--short-kernel-threshold-us",
        "13",
        "--short-kernel-histogram-bins",
        "7",
        "--topk-short-kernels",
        "2",
        "--micro-idle-thresh-us",
        "5",
        "--include-unlinked-kernels",
        "--no-coll-analysis",
        "--pseudo-ops",
        "--group-by-num-kernels",
        "--include-call-stack",
        "--gpu-arch",
        arch,
    ];
    let (_a, a) = csvs(&reference);
    let (_b, b) = csvs(&ours);
    assert!(
        read_dir_bytes(&a) == read_dir_bytes(&b),
        "the sheets differ"
    );
    // The options took effect: 7 histogram bins (plus the header).
    let hist = common::csv_text(&a, "short_kernel_histogram");
    assert_eq!(hist.lines().count(), 8, "{hist}");
    // The bundled name, as --gpu_arch_platform.
    let (_c, c) = csvs(&[
        "report",
        t,
        "--output_csvs_dir",
        "c",
        "--gpu_arch_platform",
        "MI300X",
    ]);
    let (_d, d) = csvs(&["report", t, "--csv", "c", "--gpu-arch", "MI300X"]);
    assert!(
        read_dir_bytes(&c) == read_dir_bytes(&d),
        "the sheets differ"
    );
}

#[test]
fn output_xlsx_path_writes_the_workbook() {
    let dir = tempfile::tempdir().unwrap();
    run(tracelens()
        .current_dir(dir.path())
        .arg("report")
        .arg("--profile_json_path")
        .arg(example())
        .args(["--output_xlsx_path", "r.xlsx", "-q"]))
    .assert_ok();
    assert_eq!(entries(dir.path()), ["r.xlsx"]);
    assert!(common::xlsx_sheet_names(&dir.path().join("r.xlsx")).contains(&"ops_summary".into()));
}

#[test]
fn trace_given_twice_is_a_usage_error() {
    let r = run(tracelens()
        .arg("report")
        .arg(example())
        .arg("--profile_json_path")
        .arg(example())
        .args(["--md", "-"]));
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("--profile_json_path"), "{}", r.stderr);
    let r = run(tracelens().args(["report", "--md", "-"]));
    assert_eq!(r.code, Some(2), "{r:?}");
}

#[test]
fn report_flags_without_an_equivalent_say_what_replaces_them() {
    let cases: &[(&[&str], &str)] = &[
        (&["--topk_ops", "5"], "not supported"),
        (&["--topk_roofline_ops", "5"], "not supported"),
        (&["--comparison_json_path", "b.json"], "tracelens diff"),
        (&["--extension_file", "e.py"], "not supported"),
        (&["--python_path", "/usr/bin/python3"], "not supported"),
        (&["--enable-origami"], "Origami"),
        (&["--inductor_cache_dir", "/tmp"], "not supported"),
        (&["--include_overlap_info"], "not supported"),
        (&["--detect_recompute"], "not supported"),
        (&["--include_first_occurrence_time"], "not supported"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in cases {
        let r = run(tracelens()
            .current_dir(dir.path())
            .arg("report")
            .arg(example())
            .args(*args));
        r.assert_no_panic();
        assert_eq!(r.code, Some(2), "{args:?}: {r:?}");
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: {r:?}");
        assert!(lines[0].starts_with("tracelens: error: "), "{r:?}");
        assert!(lines[0].contains(args[0]), "{args:?}: {r:?}");
        assert!(lines[0].contains(says), "{args:?}: {r:?}");
    }
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn reference_spellings_stay_out_of_help() {
    for cmd in ["report", "compare", "collectives"] {
        let r = run(tracelens().args([cmd, "--help"]));
        r.assert_ok();
        for hidden in [
            "profile_json_path",
            "output_csvs_dir",
            "output_xlsx_path",
            "short_kernel_study",
            "topk_ops",
            "world_size",
            "trace_pattern",
        ] {
            let flag = format!("--{hidden}");
            assert!(!r.stdout.contains(&flag), "{cmd} --help shows {flag}");
        }
    }
}

#[test]
fn compare_flags_of_the_reference() {
    let t = example();
    let t = t.to_str().unwrap();
    let n = testdata("no_flows.json");
    let n = n.to_str().unwrap();
    let (_a, a) = csvs(&[
        "compare",
        t,
        n,
        "--names",
        "x",
        "y",
        "--sheets",
        "ops_summary",
        "--output_csvs_dir",
        "c",
    ]);
    let (_b, b) = csvs(&[
        "compare",
        t,
        n,
        "--names",
        "x",
        "y",
        "--sheets",
        "ops_summary",
        "--csv",
        "c",
    ]);
    assert!(
        read_dir_bytes(&a) == read_dir_bytes(&b),
        "the sheets differ"
    );
    assert!(!entries(Path::new(&a)).is_empty());
}

/// Prints, for each of the reference's console scripts (its `setup.py`
/// names them), a line per `add_argument` call: the script's module, the
/// spellings joined by `,`, and `switch`, `value`, `values` or
/// `positional`. Read with Python's own parser, so that no flag is missed.
const ARGPARSE_WALK: &str = r#"
import ast, pathlib, re, sys
root = pathlib.Path(sys.argv[1])
setup = (root / "setup.py").read_text()
for module in re.findall(r'"TraceLens_\w+ = ([\w.]+):main"', setup):
    tree = ast.parse((root / (module.replace(".", "/") + ".py")).read_text())
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument"):
            continue
        names = [a.value for a in call.args if isinstance(a, ast.Constant)]
        kw = {k.arg: k.value for k in call.keywords}
        action = kw.get("action")
        action = action.value if isinstance(action, ast.Constant) else None
        nargs = kw.get("nargs")
        nargs = nargs.value if isinstance(nargs, ast.Constant) else None
        if not names[0].startswith("-"):
            kind = "positional"
        elif action in ("store_true", "store_false"):
            kind = "switch"
        elif nargs in ("+", "*"):
            kind = "values"
        else:
            kind = "value"
        print(module.rsplit(".", 1)[1], ",".join(names), kind, sep="\t")
"#;

/// One flag of a reference script, as [`ARGPARSE_WALK`] prints it.
struct RefArg {
    script: String,
    names: Vec<String>,
    kind: String,
}

fn reference_args() -> Vec<RefArg> {
    common::require_python3();
    let root = std::fs::read_dir(common::shared().join("reference"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("setup.py").is_file())
        .expect("the reference's source under ../shared/reference");
    let out = std::process::Command::new("python3")
        .args(["-c", ARGPARSE_WALK])
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            RefArg {
                script: f[0].to_string(),
                names: f[1].split(',').map(str::to_string).collect(),
                kind: f[2].to_string(),
            }
        })
        .collect()
}

/// The tracelens command line that stands for `script`, its input missing
/// (so that an accepted flag ends in "no such file"), without the input
/// when `flag` is itself the way the script names its input.
fn stand_in(script: &str, flag: &str, missing: &str) -> Vec<String> {
    let input_flags = [
        "--profile_json_path",
        "--profile_path",
        "--trace_path",
        "--trace_dir",
        "--capture-dir",
        "--combined-run-dir",
        "trace_path",
        "reports",
    ];
    let names_input = input_flags.contains(&flag);
    let mut args: Vec<String> = match script {
        "compare_perf_reports_pytorch" => vec!["compare".into()],
        "generate_multi_rank_collective_report_pytorch" => vec!["collectives".into()],
        "generate_perf_report_genesis" => vec!["genesis".into()],
        "split_inference_trace_annotation" => {
            vec!["split".into(), "-o".into(), format!("{missing}.out")]
        }
        "generate_perf_report_pytorch_inference" => vec!["report".into(), "--inference".into()],
        s if s.starts_with("generate_perf_report_") => vec!["report".into()],
        s => panic!("a reference script with no tracelens command in this test: {s}"),
    };
    let names_output = ["-o", "--output-dir"].contains(&flag);
    if args[0] == "split" && names_output {
        args.truncate(1);
    }
    if !names_input {
        match args[0].as_str() {
            "compare" => args.extend([format!("{missing}.a.xlsx"), format!("{missing}.b.xlsx")]),
            "collectives" => args.extend(["--trace-dir".into(), missing.into()]),
            "genesis" => args.extend(["--capture-dir".into(), missing.into()]),
            _ => args.push(missing.into()),
        }
    }
    let names_mode = [
        "--store-single-iteration",
        "--find-steady-state",
        "--divide-phases",
    ];
    if args[0] == "split" && !names_mode.contains(&flag) {
        args.push("--store-single-iteration".into());
    }
    args
}

/// A value the flag accepts (its reference type, or the spelling tracelens
/// knows it by).
fn value_for(flag: &str, missing: &str) -> String {
    match flag.trim_start_matches('-') {
        "iterations" | "i" => "0:3".into(),
        "OSL" | "R" | "steady-state-gap-ms" | "steady-state-fallback-s" => "0.5".into(),
        "kernel_summary_baseline" => "total".into(),
        "kernel_summary_group" => "config".into(),
        "hip_summary_group" => "name".into(),
        "agg_metrics" => "mean".into(),
        "sheets" => "ops_summary".into(),
        "rank_regex" => r"rank(\d+)".into(),
        "exclude_kernel_regex" => "nccl".into(),
        "o" | "output" | "output_xlsx_path" => format!("{missing}.xlsx"),
        f if f.contains("path")
            || f.contains("dir")
            || f.contains("folder")
            || f.contains("file")
            || f.starts_with("output")
            || f == "o"
            || f.starts_with("trace")
            || f == "python_path" =>
        {
            format!("{missing}.{}", f.replace('-', "_"))
        }
        _ => "3".into(),
    }
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared (the reference's source)")]
fn every_flag_of_every_reference_script_is_accepted_or_refused_with_its_replacement() {
    let args = reference_args();
    let scripts: std::collections::BTreeSet<&str> =
        args.iter().map(|a| a.script.as_str()).collect();
    assert_eq!(scripts.len(), 11, "{scripts:?}");
    let guide = std::fs::read_to_string(common::root().join("docs/migrating.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let mut problems = Vec::new();
    for a in &args {
        for flag in &a.names {
            // The guide's table names every spelling (a positional by name).
            let cited = if a.kind == "positional" {
                format!("`{flag}`")
            } else {
                flag.clone()
            };
            let listed = guide.match_indices(&cited).any(|(i, _)| {
                let before = guide[..i].chars().next_back();
                let after = guide[i + cited.len()..].chars().next();
                matches!(before, Some('`' | ' ' | '/')) && matches!(after, Some('`' | ' ' | '='))
            });
            if !listed {
                problems.push(format!("{}: {flag} is not in docs/migrating.md", a.script));
            }
            let mut line = stand_in(&a.script, flag, missing);
            let value = value_for(flag, missing);
            match a.kind.as_str() {
                // `compare`'s reports: two of them.
                "positional" if flag == "reports" => {
                    line.extend([format!("{missing}.a.xlsx"), format!("{missing}.b.xlsx")])
                }
                "positional" => line.push(value),
                "switch" => line.push(flag.clone()),
                // Two values (`--names` gives one per input).
                "values" => line.extend([flag.clone(), value.clone(), value]),
                _ => line.extend([flag.clone(), value]),
            }
            let r = run(tracelens().current_dir(dir.path()).args(&line));
            r.assert_no_panic();
            let lines = r.stderr_lines();
            let refused = format!("tracelens: error: {flag} (from the Python TraceLens): ");
            let one_line = lines.len() == 1;
            // Refused in one line that names the flag and what replaces it.
            let refused = r.code == Some(2) && one_line && lines[0].starts_with(&refused);
            // Accepted: the run went on to the missing input (`compare` says
            // so with 2, as for any bad input of its own).
            let accepted = matches!(r.code, Some(1 | 2))
                && one_line
                && lines[0].starts_with("tracelens: error: ")
                && !lines[0].contains("from the Python TraceLens")
                && lines[0].contains("missing");
            let ok = refused || accepted;
            if !ok {
                problems.push(format!("{}: {line:?}: {r:?}", a.script));
            }
        }
    }
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_refused_flag_is_named_even_when_a_required_argument_is_missing() {
    for line in [
        &["collectives", "--trace_pattern", "/p/rank_*_step3.json"][..],
        &["collectives", "--trace_glob=/p/**/*.json"],
        &["report", "--topk_kernels", "5"],
    ] {
        let r = run(tracelens().args(line));
        assert_eq!(r.code, Some(2), "{line:?}: {r:?}");
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{line:?}: {r:?}");
        let flag = line[1].split('=').next().unwrap();
        assert!(
            lines[0].starts_with(&format!(
                "tracelens: error: {flag} (from the Python TraceLens): "
            )),
            "{r:?}"
        );
    }
}
