//! `tracelens replay`: scripts for the top ops of testdata and corpus
//! traces (GEMM, attention, convolution, normalization, elementwise), each
//! compiled by `python3 -m py_compile`; with a Python that imports torch,
//! each run on the CPU; ops that cannot be replayed listed with a reason;
//! the errors of bad selections.

mod common;

use std::path::{Path, PathBuf};

use common::{run, testdata, tracelens};

/// Runs `tracelens replay TRACE ARGS --out DIR`; returns the folder and stdout.
fn replay(trace: &Path, args: &[&str]) -> (tempfile::TempDir, PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("replay");
    let r = run(tracelens()
        .arg("replay")
        .arg(trace)
        .args(args)
        .arg("--out")
        .arg(&out));
    r.assert_ok();
    (tmp, out, r.stdout)
}

fn scripts(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    v.sort();
    v
}

/// `python3 -m py_compile` of every script in `dir`.
#[cfg(not(no_python3))]
fn compile_all(dir: &Path) {
    let files = scripts(dir);
    assert!(!files.is_empty(), "no scripts in {}", dir.display());
    let mut args: Vec<std::ffi::OsString> = vec!["-m".into(), "py_compile".into()];
    args.extend(files.iter().map(|f| f.as_os_str().to_owned()));
    common::python3(&args);
}

#[cfg(no_python3)]
fn compile_all(_dir: &Path) {}

#[test]
fn example_scripts() {
    let (_tmp, out, stdout) = replay(&testdata("example.json"), &["--top", "10"]);
    let names: Vec<String> = scripts(&out)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.contains("aten_addmm_uid")),
        "{names:?}\n{stdout}"
    );
    assert!(
        names.iter().any(|n| n.contains("aten_relu_uid")),
        "{names:?}"
    );
    // The addmm script carries the recorded shapes and the overload.
    let addmm = out.join(names.iter().find(|n| n.contains("addmm")).unwrap());
    let text = std::fs::read_to_string(addmm).unwrap();
    assert!(text.contains("\"overload\": \"default\""), "{text}");
    assert!(text.contains("\"dtype\": \"c10::BFloat16\""), "{text}");
    assert!(text.contains("DEFAULT_DEVICE = 'cuda'"), "{text}");
    compile_all(&out);
}

/// testdata/replay_ops.json: a custom op, a tensor list, a quantized dtype
/// (each refused with its reason, no script), gelu (its unrecorded str
/// argument at its default), mm with a transposed input and mul by a
/// wrapped number (a 0-dim double tensor).
#[test]
fn refusals_say_why_and_write_no_script() {
    let (_tmp, out, stdout) = replay(&testdata("replay_ops.json"), &[]);
    for (op, why) in [
        (
            "mylib::fused_gate",
            "not replayable: no ATen operator mylib::fused_gate",
        ),
        ("aten::cat", "not replayable: takes a tensor list"),
        (
            "aten::mul",
            "not replayable: tensor dtype \"c10::qint8\" is not supported",
        ),
    ] {
        assert!(
            stdout.lines().any(|l| l.contains(op) && l.contains(why)),
            "{op}: {stdout}"
        );
    }
    let names: Vec<String> = scripts(&out)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names.iter().any(|n| n.contains("aten_gelu"))
            && names.iter().any(|n| n.contains("aten_mm"))
    );
    let mm =
        std::fs::read_to_string(out.join(names.iter().find(|n| n.contains("aten_mm")).unwrap()))
            .unwrap();
    let json = mm
        .split("r'''")
        .nth(1)
        .and_then(|t| t.split("'''").next())
        .unwrap();
    let entry: serde_json::Value = serde_json::from_str(json).unwrap();
    let a = &entry["replay_ir"]["list_pos_args"][0];
    assert_eq!(a["value"]["strides"], serde_json::json!([1, 8]), "{a}");
    compile_all(&out);
}

#[test]
fn batched_writes_the_runner_and_the_op_list() {
    let (_tmp, out, _) = replay(&testdata("example.json"), &["--batched", "--device", "cpu"]);
    let ops: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("replay_ops.json")).unwrap())
            .unwrap();
    let ops = ops.as_array().unwrap();
    assert!(ops.iter().any(|o| o["op_name"] == "aten::addmm"));
    for o in ops {
        assert!(o["replay_ir"]["list_pos_args"].is_array());
        assert!(o["uid"].is_u64() && o["traced_kernel_us"].is_number());
    }
    let runner = std::fs::read_to_string(out.join("replay_batched.py")).unwrap();
    assert!(runner.contains("DEFAULT_DEVICE = 'cpu'") && runner.contains("main_batched()"));
    assert_eq!(scripts(&out).len(), 1, "only the runner");
    compile_all(&out);
}

#[test]
fn uid_selects_one_op_and_bad_selections_are_one_line() {
    // Find the addmm uid through the batched list, then ask for it alone.
    let (_tmp, out, _) = replay(&testdata("example.json"), &["--batched"]);
    let ops: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("replay_ops.json")).unwrap())
            .unwrap();
    let uid = ops
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op_name"] == "aten::addmm")
        .unwrap()["uid"]
        .to_string();
    let (_t2, out2, stdout) = replay(&testdata("example.json"), &["--uid", &uid]);
    assert_eq!(scripts(&out2).len(), 1, "{stdout}");
    // The gemm kernel of example.json runs 12 µs.
    assert!(stdout.contains("12.000 µs"), "{stdout}");

    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let r = run(tracelens()
        .arg("replay")
        .arg(testdata("replay_ops.json"))
        .args(["--op", "mylib::fused_gate", "--out"])
        .arg(&out));
    let line = r.assert_one_error_line("replay_ops.json");
    assert!(
        line.contains(
            "none of the 1 selected ops can be replayed (mylib::fused_gate: no ATen operator"
        ),
        "{line}"
    );
    assert!(!out.exists(), "nothing written on an error");
    for (args, what) in [
        (vec!["--uid", "999999"], "uid 999999 is not a cpu_op"),
        (vec!["--op", "aten::nope"], "no op named aten::nope"),
    ] {
        let out = tmp.path().join("r");
        let r = run(tracelens()
            .arg("replay")
            .arg(testdata("example.json"))
            .args(&args)
            .arg("--out")
            .arg(&out));
        let line = r.assert_one_error_line("example.json");
        assert!(line.contains(what), "{line}");
        assert!(!out.exists(), "nothing written on an error");
    }
}

/// Corpus traces and the op kinds their top ops must include.
#[cfg(not(no_shared_corpus))]
const CORPUS: &[(&str, &[&str])] = &[
    (
        "pytorch/h100_bert_small.json.gz",
        &[
            "aten_addmm",
            "flash_attention",
            "native_layer_norm",
            "aten_add_",
        ],
    ),
    (
        "pytorch/h100_falconsai_vit.json.gz",
        &["cudnn_convolution", "aten_gelu"],
    ),
    (
        "pytorch/mi300_normalization_layers.json.gz",
        &["native_batch_norm", "native_group_norm", "rms_norm"],
    ),
];

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn corpus_top_ops_compile() {
    #[cfg(not(no_shared_corpus))]
    for (rel, kinds) in CORPUS {
        let trace = common::shared().join("corpus").join(rel);
        let (_tmp, out, stdout) = replay(&trace, &["--top", "25"]);
        let names: Vec<String> = scripts(&out)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for k in *kinds {
            assert!(
                names.iter().any(|n| n.contains(k)),
                "{rel}: no {k} script in {names:?}\n{stdout}"
            );
        }
        // Every selected op has a script or a reason.
        let listed = stdout
            .lines()
            .filter(|l| l.contains(". aten::") || l.contains("not replayable"))
            .count();
        assert!(listed >= 25.min(names.len()), "{stdout}");
        compile_all(&out);
    }
}

/// Runs each script of `dir` on the CPU with a few calls: it must print a
/// measured time, or (CUDA-only kernels such as flash attention and cuDNN
/// convolution) say it has no kernel for the CPU.
#[cfg(not(no_torch))]
fn run_on_cpu(dir: &Path) -> (usize, usize) {
    let python = env!("TRACELENS_TORCH_PYTHON");
    let (mut timed, mut no_kernel) = (0, 0);
    for script in scripts(dir) {
        let out = Command::new(python)
            .arg(&script)
            .args(["--device", "cpu", "--warmup", "1", "--iters", "2"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        match out.status.code() {
            Some(0) if stdout.contains("measured") && stdout.contains("us per call on cpu") => {
                timed += 1
            }
            Some(3) if stdout.contains("no kernel for device cpu") => no_kernel += 1,
            _ => panic!(
                "{} failed ({:?}): {stdout}{}",
                script.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    (timed, no_kernel)
}

#[test]
#[cfg_attr(
    no_torch,
    ignore = "needs a Python that imports torch (TRACELENS_TORCH_PYTHON or python3)"
)]
fn scripts_run_on_cpu_under_torch() {
    #[cfg(not(no_torch))]
    {
        let (_tmp, example_dir, _) = replay(&testdata("example.json"), &["--top", "10"]);
        let (timed, _) = run_on_cpu(&example_dir);
        assert!(timed >= 2, "addmm and relu time on the CPU");
        // The transposed input of mm is rebuilt with its recorded strides.
        let (_t2, out2, _) = replay(&testdata("replay_ops.json"), &[]);
        let mm = scripts(&out2)
            .into_iter()
            .find(|p| p.to_string_lossy().contains("aten_mm"))
            .unwrap();
        let probe = format!(
            "import importlib.util as u; s = u.spec_from_file_location('m', {:?}); m = u.module_from_spec(s); \
             s.loader.exec_module(m); a, k = m.arguments(m.OP, 'cpu'); print(a[0].stride(), a[0].shape)",
            mm.to_string_lossy()
        );
        let out = Command::new(env!("TRACELENS_TORCH_PYTHON"))
            .args(["-c", &probe])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "(1, 8) torch.Size([8, 64])"
        );
        // Host tensors stay on the host: the wrapped number of mul, and the
        // pinned destination of example.json's device-to-host copy_.
        let devices = |dir: &Path, op: &str| {
            let script = scripts(dir)
                .into_iter()
                .find(|p| p.to_string_lossy().contains(op))
                .unwrap();
            let probe = format!(
                "import importlib.util as u; s = u.spec_from_file_location('m', {:?}); m = u.module_from_spec(s); \
                 s.loader.exec_module(m); print(sorted(m.tensor_devices(m.OP, 'cuda').items()))",
                script.to_string_lossy()
            );
            let out = Command::new(env!("TRACELENS_TORCH_PYTHON"))
                .args(["-c", &probe])
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        assert_eq!(
            devices(&out2, "aten_mul"),
            "[('other', 'cpu'), ('self', 'cuda')]"
        );
        assert_eq!(
            devices(&example_dir, "aten_copy"),
            "[('self', 'cpu'), ('src', 'cuda')]"
        );
        run_on_cpu(&out2);
        #[cfg(not(no_shared_corpus))]
        for (rel, _) in CORPUS {
            let trace = common::shared().join("corpus").join(rel);
            let (_tmp, out, _) = replay(&trace, &["--top", "12"]);
            let (timed, no_kernel) = run_on_cpu(&out);
            assert!(
                timed > no_kernel,
                "{rel}: {timed} timed, {no_kernel} without a CPU kernel"
            );
        }
    }
}
