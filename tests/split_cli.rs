//! `tracelens split` end to end: traces built here for each step
//! annotation format, for the call-tree fallback, for bad ranges, empty
//! results and refused outputs (expected values worked out by hand in the
//! comments); and, with `../shared`, the reference's output folders for
//! five flag sets on three traces.

mod common;

use std::path::{Path, PathBuf};

use common::{entries, files_under, gunzip, run, tracelens};
use serde_json::{Value, json};

/// One step of a built trace: a `user_annotation` root named `name` at
/// 1000 + 1000·i µs (100 µs long) on pid 1 / tid 10, a launch inside it
/// with correlation 100 + i and its flow pair, the kernel on pid 0 / tid 7
/// placed after the root (linked by correlation, not by time), and an
/// event of another thread inside the root's time (never copied).
fn step_events(i: usize, name: &str) -> Vec<Value> {
    let ts = 1000 + 1000 * i as i64;
    let corr = 100 + i as i64;
    vec![
        json!({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 10,
               "ts": ts, "dur": 100, "args": {}}),
        json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
               "tid": 10, "ts": ts + 10, "dur": 5, "args": {"correlation": corr}}),
        json!({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1, "tid": 10,
               "ts": ts + 10}),
        json!({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": 7,
               "ts": ts + 200, "bp": "e"}),
        json!({"ph": "X", "cat": "kernel", "name": format!("kern_{i}"), "pid": 0, "tid": 7,
               "ts": ts + 200, "dur": 40, "args": {"correlation": corr}}),
        json!({"ph": "X", "cat": "cpu_op", "name": "other_thread", "pid": 1, "tid": 11,
               "ts": ts + 20, "dur": 10, "args": {}}),
    ]
}

/// A trace of one step per name, a thread-name meta event first, and a
/// top-level key besides `traceEvents`.
fn steps_trace(names: &[&str]) -> Value {
    let mut events = vec![
        json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": 10,
                                 "args": {"name": "main"}}),
    ];
    for (i, n) in names.iter().enumerate() {
        events.extend(step_events(i, n));
    }
    json!({"schemaVersion": 1, "traceEvents": events, "deviceProperties": []})
}

/// Writes `trace` as `name` into a fresh folder; the folder and the path.
fn write_trace(name: &str, trace: &Value) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, serde_json::to_vec(trace).unwrap()).unwrap();
    (dir, path)
}

/// Runs `tracelens split TRACE -o OUT ARGS` in `dir`.
fn split_in(dir: &Path, trace: &str, out: &str, args: &[&str]) -> common::Run {
    run(tracelens()
        .current_dir(dir)
        .args(["split", trace, "-o", out])
        .args(args))
}

/// A written trace, parsed.
fn read_gz(path: &Path) -> Value {
    serde_json::from_slice(&gunzip(&std::fs::read(path).unwrap())).unwrap()
}

/// The names of a trace's events, in order.
fn names(trace: &Value) -> Vec<String> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

/// The manifest of an output folder.
fn manifest(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("execution_details.json")).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn single_iterations_copy_each_steps_events_and_name_the_files_after_the_annotation() {
    let step = "execute_20_context_0(sq0sk0sqsq0sqsk0)_generation_20(sq20sk100sqsq20sqsk100)";
    let (dir, _) = write_trace("run.pt.trace.json", &steps_trace(&[step, step, step]));
    let r = split_in(
        dir.path(),
        "run.pt.trace.json",
        "out",
        &["--store-single-iteration"],
    );
    r.assert_ok();
    assert!(
        r.stdout
            .contains("3 execution roots (step annotations, detailed format)"),
        "{}",
        r.stdout
    );
    let out = dir.path().join("out");
    let part = "execute_20_context_0_sq0sk0sqsq0sqsk0_generation_20_sq20sk100sqsq20sqsk100";
    let want: Vec<String> = (0..3)
        .map(|i| format!("run_annotation_iteration_{i}_{part}.json.gz"))
        .chain([
            "execution_details.csv".into(),
            "execution_details.json".into(),
        ])
        .collect();
    let mut got = entries(&out);
    got.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(got, want_sorted);
    // Step 1: the root, its launch, the flow pair, the kernel, the meta
    // event last; the other thread's event and step 0's are not copied.
    let t = read_gz(&out.join(&want[1]));
    assert_eq!(
        names(&t),
        [
            step,
            "cudaLaunchKernel",
            "ac2g",
            "ac2g",
            "kern_1",
            "thread_name"
        ]
    );
    assert_eq!(t["traceEvents"][4]["ts"], 2200);
    assert_eq!(t["schemaVersion"], 1, "other top-level keys are kept");
    assert_eq!(t["deviceProperties"], json!([]));
    let m = manifest(&out);
    assert_eq!(m.len(), 3);
    assert_eq!(m[1]["idx"], 1);
    assert_eq!(m[1]["output_path"], format!("out/{}", want[1]));
    assert_eq!(m[1]["event_count"], 6);
    assert_eq!(m[1]["num_gpu_events"], 1);
    // Integers stay integers: 2200 + 40 − 2200.
    assert_eq!(m[1]["gpu_duration"], 40);
    assert_eq!(m[1]["gpu_busy_duration"], 40);
    assert_eq!(m[1]["steps"][0]["generation_requests"], 20);
    assert_eq!(m[1]["phase"]["num_decode"], 1);
    let csv = std::fs::read_to_string(out.join("execution_details.csv")).unwrap();
    assert_eq!(
        csv.lines().nth(2).unwrap(),
        format!("1,out/{},6,1,40,40,0,0,1,20,20,1", want[1])
    );
}

/// The file name `--store-single-iteration -i 0` gives step `name`, and
/// its manifest step.
fn single_step(name: &str) -> (String, Value) {
    let (dir, _) = write_trace("t.json", &steps_trace(&[name]));
    let r = split_in(
        dir.path(),
        "t.json",
        "o",
        &["--store-single-iteration", "-i", "0"],
    );
    r.assert_ok();
    let out = dir.path().join("o");
    let file = entries(&out)
        .into_iter()
        .find(|n| n.ends_with(".json.gz"))
        .unwrap();
    (file, manifest(&out)[0]["steps"][0].clone())
}

#[test]
fn every_annotation_format_is_a_root_with_its_counts() {
    // (name, file name part, batch, context requests, generation requests)
    let cases = [
        (
            "execute_context_2(300)_generation_3(3)",
            "execute_context_2_300_generation_3_3",
            303,
            2,
            3,
        ),
        (
            "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sqsq=25 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
            "step[MIXED_bs=2_c=1_g=1_c_sq=5_c_sqsq=25_g_sq=1_g_sk=12_g_sqsq=1_g_sqsk=12]",
            6,
            1,
            1,
        ),
        ("step[DECODE bs=32]", "step[DECODE_bs=32]", 32, 0, 32),
        (
            "prefill[bs=2 tok=900 ctx=[400, 500] sqsq=410000 sqsk=410000 sk=900]",
            "prefill[bs=2_tok=900_ctx=[400,_500]_sqsq=410000_sqsk=410000_sk=900]",
            900,
            2,
            0,
        ),
        (
            "decode[bs=117/128 tok=117 d=117]",
            "decode[bs=117_128_tok=117_d=117]",
            117,
            0,
            117,
        ),
        (
            "execute_diffusion_4_1024x1024",
            "execute_diffusion_4_1024x1024",
            4,
            0,
            0,
        ),
    ];
    for (name, part, bs, ctx, generation) in cases {
        let (file, step) = single_step(name);
        assert_eq!(
            file,
            format!("t_annotation_iteration_0_{part}.json.gz"),
            "{name}"
        );
        assert_eq!(step["batch_size"], bs, "{name}");
        assert_eq!(step["context_requests"], ctx, "{name}");
        assert_eq!(step["generation_requests"], generation, "{name}");
    }
}

#[test]
fn detailed_annotations_win_over_native_ones() {
    let detailed = "execute_1_context_0(sq0sk0sqsq0sqsk0)_generation_1(sq1sk9sqsq1sqsk9)";
    let trace = steps_trace(&["step[DECODE bs=4]", detailed, "step[DECODE bs=4]"]);
    let (dir, _) = write_trace("t.json", &trace);
    let r = split_in(dir.path(), "t.json", "o", &["--store-single-iteration"]);
    r.assert_ok();
    assert!(
        r.stdout
            .contains("1 execution root (step annotations, detailed format)"),
        "{}",
        r.stdout
    );
}

/// A serving trace of `n` steps: 20 requests each, every fifth step with
/// one prefill request (100 tokens), and a batch operator reporting
/// `bs_of(i)` as its first input dimension.
fn serving_trace(n: usize, bs_of: impl Fn(usize) -> i64) -> Value {
    let mut t = steps_trace(&[]);
    let events = t["traceEvents"].as_array_mut().unwrap();
    for i in 0..n {
        let name = if i % 5 == 4 {
            "execute_119_context_1(sq100sk100sqsq10000sqsk10000)_generation_19(sq19sk9500sqsq19sqsk9500)"
        } else {
            "execute_20_context_0(sq0sk0sqsq0sqsk0)_generation_20(sq20sk10000sqsq20sqsk10000)"
        };
        events.extend(step_events(i, name));
        let ts = 1000 + 1000 * i as i64;
        events.push(
            json!({"ph": "X", "cat": "cpu_op", "name": "vllm::unified_attention_with_output",
            "pid": 1, "tid": 10, "ts": ts + 50, "dur": 10,
            "args": {"Input Dims": [[bs_of(i), 8, 128]]}}),
        );
    }
    t
}

#[test]
fn steady_state_windows_are_chosen_and_explained() {
    // 20 steps, all at the peak of 20 requests: the region opens at the
    // sixth step counted back to 0 and, open at the end, closes at 19.
    // Prefill-bearing steps 4, 9, 14: ratio 3/19; windows of 8 with
    // stride 2 from 0 to 10; [0, 8) holds one (1/8 = 0.125, nearest to
    // 0.158 of those with the most requests... [2, 10) holds two: 0.25).
    let (dir, _) = write_trace("s.json", &serving_trace(20, |_| 20));
    let r = split_in(
        dir.path(),
        "s.json",
        "o",
        &["--find-steady-state", "--num-steps", "8", "--CONC", "24"],
    );
    r.assert_ok();
    let out = r.stdout;
    assert!(
        out.contains("steady-state regions (steps near the peak request count): [0, 19)"),
        "{out}"
    );
    assert!(
        out.contains("mixed window [0, 8) of the largest region [0, 19)"),
        "{out}"
    );
    assert!(
        out.contains("--conc 24 but the trace's peak is 20"),
        "{out}"
    );
    // Decode-only runs: [0,4) [5,9) [10,14) [15,19): the first of four.
    assert!(
        out.contains("decode_only_steady_state: steps [0, 4)"),
        "{out}"
    );
    assert!(
        out.contains("prefilldecode_steady_state: steps [4, 5)"),
        "{out}"
    );
    let files = entries(&dir.path().join("o"));
    // One batch size (20) for eight steps: the annotations' batches stay
    // (7 × 20 + 119) / 8 = 32. The one-step prefill window takes the one
    // batch size its operator saw (20), not the annotation's 119: the
    // reference's rule.
    assert!(
        files.contains(
            &"mixed_steady_state_prefill_0_prefilldecode_1_decode_7_bs32_conc20_s.json.gz"
                .to_string()
        ),
        "{files:?}"
    );
    assert!(
        files.contains(
            &"decode_only_steady_state_prefill_0_prefilldecode_0_decode_4_bs20_conc20_s.json.gz"
                .to_string()
        ),
        "{files:?}"
    );
    assert!(
        files.contains(
            &"prefilldecode_steady_state_prefill_0_prefilldecode_1_decode_0_bs20_conc20_s.json.gz"
                .to_string()
        ),
        "{files:?}"
    );
}

#[test]
fn batch_sizes_seen_once_per_step_replace_the_annotations_in_python_set_order() {
    // Steps 0..4 with batch operators reporting 32, 20, 44, 14 (distinct,
    // one per step): a set of them iterates 32, 20, 44, 14 (CPython) and
    // the steps take them in that order; mean 27.
    let bs = [32, 20, 44, 14];
    let (dir, _) = write_trace("b.json", &serving_trace(4, |i| bs[i]));
    let r = split_in(
        dir.path(),
        "b.json",
        "o",
        &["-i", "0:4", "--find-steady-state", "--num-steps", "4"],
    );
    r.assert_ok();
    let m = manifest(&dir.path().join("o"));
    let mixed = m
        .iter()
        .find(|e| e["output_path"].as_str().unwrap().contains("mixed_"))
        .unwrap();
    let got: Vec<i64> = mixed["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["batch_size"].as_i64().unwrap())
        .collect();
    assert_eq!(got, [32, 20, 44, 14]);
    assert_eq!(mixed["phase"]["avg_bs"], 27);
}

#[test]
fn phases_go_to_their_folders_in_runs() {
    // 10 steps, region fallback-free [0, 9) (the last step excluded):
    // runs DO[0,4) PD[4] DO[5,9): two decode_only chunks, one mixed, whose
    // label keeps the annotation's batch (119) and whose summary the batch
    // operator's (20), as the reference names it.
    let (dir, _) = write_trace("p.json", &serving_trace(10, |_| 20));
    let r = split_in(
        dir.path(),
        "p.json",
        "o",
        &["--divide-phases", "--num-steps", "8"],
    );
    r.assert_ok();
    let o = dir.path().join("o");
    assert_eq!(
        entries(&o.join("decode_only")),
        [
            "decode_only_chunk0_steps4_bs20_conc20_prefill_0_prefilldecode_0_decode_4_bs20_conc20_p.json.gz",
            "decode_only_chunk1_steps4_bs20_conc20_prefill_0_prefilldecode_0_decode_4_bs20_conc20_p.json.gz",
        ]
    );
    assert_eq!(
        entries(&o.join("prefilldecodemix")),
        [
            "prefilldecodemix_chunk0_steps1_bs119_conc20_prefill_0_prefilldecode_1_decode_0_bs20_conc20_p.json.gz"
        ]
    );
    assert!(
        r.stdout
            .contains("phases: 1 prefilldecodemix run, 2 decode_only runs"),
        "{}",
        r.stdout
    );
}

/// A training-like trace without step annotations: a Python frame
/// holding four repeats of [aten::linear, aten::add], each launching one
/// kernel, linked by ac2g flows when `flows`.
fn loop_trace(flows: bool) -> Value {
    let mut events = vec![
        json!({"ph": "X", "cat": "python_function", "name": "train.py(10): main",
        "pid": 1, "tid": 10, "ts": 0, "dur": 10000, "args": {}}),
    ];
    for i in 0..4i64 {
        for (k, op) in ["aten::linear", "aten::add"].iter().enumerate() {
            let ts = 100 + 2000 * i + 800 * k as i64;
            let corr = 10 * i + k as i64 + 1;
            events.push(
                json!({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 10,
                "ts": ts, "dur": 500, "args": {"External id": corr}}),
            );
            events.push(json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                "pid": 1, "tid": 10, "ts": ts + 100, "dur": 50, "args": {"correlation": corr, "External id": corr}}));
            if flows {
                events.push(json!({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr,
                    "pid": 1, "tid": 10, "ts": ts + 100}));
                events.push(json!({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr,
                    "pid": 0, "tid": 7, "ts": ts + 300, "bp": "e"}));
            }
            events.push(
                json!({"ph": "X", "cat": "kernel", "name": format!("k_{op}"), "pid": 0, "tid": 7,
                "ts": ts + 300, "dur": 100, "args": {"correlation": corr, "External id": corr}}),
            );
        }
    }
    json!({"traceEvents": events})
}

#[test]
fn without_annotations_the_call_trees_repeating_blocks_are_the_iterations() {
    // The reference splits this trace into the same four files with the
    // same events (checked side by side).
    let (dir, _) = write_trace("loop.json", &loop_trace(true));
    let r = split_in(dir.path(), "loop.json", "o", &["--store-single-iteration"]);
    r.assert_ok();
    assert!(
        r.stdout
            .contains("4 execution roots (repeating blocks of the call tree"),
        "{}",
        r.stdout
    );
    let o = dir.path().join("o");
    let want: Vec<String> = (0..4)
        .map(|i| format!("loop_annotation_iteration_{i}.json.gz"))
        .collect();
    for w in &want {
        assert!(entries(&o).contains(w), "{:?}", entries(&o));
    }
    // Block 2 spans aten::linear at 4100 to the end of aten::add (4900 +
    // 500): both ops, their launches, the flows and the kernels of their
    // correlations (21, 22).
    let t = read_gz(&o.join(&want[2]));
    let flow = "ac2g";
    assert_eq!(
        names(&t),
        [
            "aten::linear",
            "cudaLaunchKernel",
            "aten::add",
            "cudaLaunchKernel",
            flow,
            flow,
            flow,
            flow,
            "k_aten::linear",
            "k_aten::add"
        ]
    );
    let m = manifest(&o);
    // Kernels at 4400–4500 and 5200–5300.
    assert_eq!(m[2]["gpu_duration"], 900);
    assert_eq!(m[2]["gpu_busy_duration"], 200);
    // Without flows the launches are linked by correlation alone (the
    // reference links by flows only and finds nothing to split).
    let (dir, _) = write_trace("loop.json", &loop_trace(false));
    let r = split_in(dir.path(), "loop.json", "o", &["--store-single-iteration"]);
    r.assert_ok();
    assert!(
        r.stdout.contains("4 execution roots (repeating blocks"),
        "{}",
        r.stdout
    );
}

#[test]
fn bad_ranges_and_settings_are_one_line_and_write_nothing() {
    let (dir, _) = write_trace("t.json", &serving_trace(3, |_| 20));
    for (args, what) in [
        (
            vec!["-i", "5:9", "--store-single-iteration"],
            "the trace has 3 iterations (0 to 2)",
        ),
        (
            vec!["-i", "2:1", "--store-single-iteration"],
            "must be after the start",
        ),
        (
            vec!["-i", "a:b", "--store-single-iteration"],
            "is not a step index",
        ),
        (
            vec!["--find-steady-state", "--num-steps", "0"],
            "--num-steps must be at least 1",
        ),
        (
            vec![
                "--find-steady-state",
                "--conc",
                "4",
                "--osl",
                "0",
                "--r",
                "0",
            ],
            "--osl must be a positive number",
        ),
    ] {
        let r = split_in(dir.path(), "t.json", "o", &args);
        let line = r.assert_one_error_line(what);
        assert!(!dir.path().join("o").exists(), "{args:?} wrote: {line}");
    }
    // No mode: clap refuses before any work.
    let r = split_in(dir.path(), "t.json", "o", &[]);
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr.contains("--store-single-iteration"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_trace_with_nothing_to_split_is_one_line_and_writes_nothing() {
    // Operators that never repeat three times and no annotations.
    let trace = json!({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "args": {}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 20, "dur": 10, "args": {}}
    ]});
    let (dir, _) = write_trace("none.json", &trace);
    let r = split_in(dir.path(), "none.json", "o", &["--store-single-iteration"]);
    let line = r.assert_one_error_line("nothing written");
    assert!(
        line.contains("none.json") && line.contains("no step annotations"),
        "{line}"
    );
    assert!(!dir.path().join("o").exists());
    // A window mode that finds no window in a one-step trace writes the
    // mixed window of that one step: not empty.
    let step = "execute_1_context_0(sq0sk0sqsq0sqsk0)_generation_1(sq1sk9sqsq1sqsk9)";
    let (dir, _) = write_trace("one.json", &steps_trace(&[step]));
    split_in(dir.path(), "one.json", "o", &["--find-steady-state"]).assert_ok();
}

#[test]
fn outputs_never_replace_the_input_and_names_stay_in_the_folder() {
    // The input named like the manifest, in the output folder: refused
    // before any work.
    let step = "execute_1_context_0(sq0sk0sqsq0sqsk0)_generation_1(sq1sk9sqsq1sqsk9)";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("o")).unwrap();
    let input = dir.path().join("o/execution_details.json");
    let bytes = serde_json::to_vec(&steps_trace(&[step])).unwrap();
    std::fs::write(&input, &bytes).unwrap();
    let r = split_in(
        dir.path(),
        "o/execution_details.json",
        "o",
        &["--store-single-iteration"],
    );
    r.assert_one_error_line("execution_details.json");
    assert_eq!(
        std::fs::read(&input).unwrap(),
        bytes,
        "the input is untouched"
    );
    // A root name with a slash and a newline: the file stays in the
    // folder, its name on one line.
    let name = "step[DECODE bs=2 x/../../y] \nz";
    let (dir, _) = write_trace("h.json", &steps_trace(&[name]));
    let r = split_in(dir.path(), "h.json", "o", &["--store-single-iteration"]);
    r.assert_ok();
    let files = files_under(&dir.path().join("o"));
    assert_eq!(files.len(), 3, "{files:?}");
    let gz = files
        .iter()
        .find(|f| f.to_string_lossy().ends_with(".json.gz"))
        .unwrap();
    assert_eq!(
        gz.file_name().unwrap().to_string_lossy(),
        "h_annotation_iteration_0_step[DECODE_bs=2_x_.._.._y]__z.json.gz"
    );
    // -o naming an existing file is refused.
    std::fs::write(dir.path().join("f"), b"x").unwrap();
    let r = split_in(dir.path(), "h.json", "f", &["--store-single-iteration"]);
    r.assert_one_error_line("f");
    assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"x");
}

#[test]
fn a_bad_trace_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), b"{\"traceEvents\": [1, 2]}").unwrap();
    let r = split_in(dir.path(), "bad.json", "o", &["--store-single-iteration"]);
    let line = r.assert_one_error_line("bad.json");
    assert!(
        line.contains("event 0 of traceEvents is not a JSON object"),
        "{line}"
    );
    std::fs::write(
        dir.path().join("ts.json"),
        br#"{"traceEvents": [{"ts": "x", "name": "a"}]}"#,
    )
    .unwrap();
    let r = split_in(dir.path(), "ts.json", "o", &["--store-single-iteration"]);
    r.assert_one_error_line("event 0: ts is not a number");
    assert!(!dir.path().join("o").exists());
}

/// The top-level keys of a JSON object, in their order.
fn key_order(text: &[u8]) -> Vec<String> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Vec<String>, M::Error> {
            let mut keys = Vec::new();
            while let Some((k, IgnoredAny)) = m.next_entry::<String, IgnoredAny>()? {
                keys.push(k);
            }
            Ok(keys)
        }
    }
    serde_json::Deserializer::from_slice(text)
        .deserialize_map(Keys)
        .unwrap()
}

/// The reference's output folders: (folder, input under corpus/, flags).
const CORPUS_RUNS: [(&str, &str, &[&str]); 11] = [
    (
        "synth_vllm.single_0_3",
        "split/synth_vllm.json",
        &["-i", "0:3", "--store-single-iteration"],
    ),
    (
        "synth_vllm.steady8",
        "split/synth_vllm.json",
        &["--find-steady-state", "--num-steps", "8"],
    ),
    (
        "synth_vllm.phases8",
        "split/synth_vllm.json",
        &["--divide-phases", "--num-steps", "8"],
    ),
    (
        "synth_vllm.i5_13_steady4",
        "split/synth_vllm.json",
        &["-i", "5:13", "--find-steady-state", "--num-steps", "4"],
    ),
    (
        "synth_vllm.steady8_conc",
        "split/synth_vllm.json",
        &[
            "--find-steady-state",
            "--num-steps",
            "8",
            "--CONC",
            "20",
            "--OSL",
            "64",
            "--R",
            "0.5",
        ],
    ),
    (
        "sglang_decode.all",
        "inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
        &["--store-single-iteration"],
    ),
    (
        "sglang_decode.steady",
        "inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
        &["--find-steady-state", "--num-steps", "8"],
    ),
    (
        "sglang_decode.phases",
        "inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
        &["--divide-phases"],
    ),
    (
        "vllm_decode_full.all",
        "inference/vllm_decode_full/graph_execution.json.gz",
        &["--store-single-iteration"],
    ),
    (
        "vllm_decode_full.steady",
        "inference/vllm_decode_full/graph_execution.json.gz",
        &["--find-steady-state", "--num-steps", "8"],
    ),
    (
        "vllm_decode_full.phases",
        "inference/vllm_decode_full/graph_execution.json.gz",
        &["--divide-phases"],
    ),
];

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn split_conforms_to_the_reference_folders() {
    let corpus = common::shared().join("corpus");
    let listed: Vec<&str> = CORPUS_RUNS.iter().map(|r| r.0).collect();
    let mut present: Vec<String> = entries(&corpus.join("split"))
        .into_iter()
        .filter(|n| corpus.join("split").join(n).is_dir())
        .collect();
    present.sort();
    let mut listed_sorted = listed.clone();
    listed_sorted.sort();
    assert_eq!(present, listed_sorted, "every reference folder is run here");
    for (folder, input, flags) in CORPUS_RUNS {
        let work = tempfile::tempdir().unwrap();
        let src = corpus.join(input);
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::copy(&src, work.path().join(&name)).unwrap();
        split_in(work.path(), &name, folder, flags).assert_ok();
        let want_dir = corpus.join("split").join(folder);
        let rel = |d: &Path| -> Vec<String> {
            files_under(d)
                .iter()
                .map(|f| f.strip_prefix(d).unwrap().to_string_lossy().into_owned())
                .filter(|f| !f.contains(".tracelens"))
                .collect()
        };
        let got_dir = work.path().join(folder);
        assert_eq!(rel(&got_dir), rel(&want_dir), "{folder}: file names");
        for f in rel(&want_dir) {
            let (want, got) = (want_dir.join(&f), got_dir.join(&f));
            if f.ends_with(".gz") {
                let (w, g) = (
                    gunzip(&std::fs::read(&want).unwrap()),
                    gunzip(&std::fs::read(&got).unwrap()),
                );
                assert_eq!(key_order(&g), key_order(&w), "{folder}/{f}: top-level keys");
                let (w, g): (Value, Value) = (
                    serde_json::from_slice(&w).unwrap(),
                    serde_json::from_slice(&g).unwrap(),
                );
                assert_eq!(g, w, "{folder}/{f}: events");
            } else {
                // The manifests hold the same bytes (paths relative to
                // the folder the command ran in).
                assert_eq!(
                    std::fs::read_to_string(&got).unwrap(),
                    std::fs::read_to_string(&want).unwrap(),
                    "{folder}/{f}"
                );
            }
        }
    }
}

#[test]
fn the_manifest_of_a_small_serving_trace_equals_the_references() {
    // testdata/split/serving_steady4.reference.*: the reference's
    // manifests for this trace and these flags, its paths under `rs/`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::testdata("split/serving.json"),
        dir.path().join("serving.json"),
    )
    .unwrap();
    split_in(
        dir.path(),
        "serving.json",
        "rs",
        &["--find-steady-state", "--num-steps", "4"],
    )
    .assert_ok();
    for ext in ["csv", "json"] {
        let want = std::fs::read_to_string(common::testdata(&format!(
            "split/serving_steady4.reference.{ext}"
        )))
        .unwrap();
        let got = std::fs::read_to_string(dir.path().join(format!("rs/execution_details.{ext}")))
            .unwrap();
        assert_eq!(got, want, "execution_details.{ext}");
    }
}
