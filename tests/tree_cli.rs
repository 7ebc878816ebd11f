//! `tracelens tree` on `testdata/example.json`: the call tree from nn.Module
//! frames down to GPU kernels, `--depth`, `--grep`, `--all`, `--modules`
//! (GPU time per module), stdin, and its errors.
//!
//! The host side of example.json, by nesting of [ts, ts + dur):
//!
//! ```text
//! nn.Module: Model_0           [1000, 1200)
//!   nn.Module: Linear_0        [1010, 1090)
//!     aten::linear             [1015, 1085)
//!       aten::t                [1016, 1020)   (launches nothing)
//!       aten::addmm            [1022, 1082)
//!         cudaLaunchKernel     -> gemm kernel 12 µs
//!   nn.Module: ReLU_0          [1100, 1140)
//!     aten::relu               [1102, 1132)
//!       cudaLaunchKernel       -> relu kernel 4.5 µs
//!   record_param_comms         [1140, 1150)
//!     cudaLaunchKernel         -> NCCL kernel 20 µs
//!   aten::copy_                [1150, 1180)
//!     cudaMemcpyAsync          -> memcpy 3 µs
//! ```

mod common;

use common::{run, run_with_stdin, testdata, tracelens};

fn tree(args: &[&str]) -> common::Run {
    let r = run(tracelens()
        .arg("tree")
        .arg(testdata("example.json"))
        .args(args));
    r.assert_ok();
    r
}

const RELU_KERNEL: &str =
    "void at::native::vectorized_elementwise_kernel<4, relu_functor>(int, relu_functor)";

#[test]
fn full_tree_structure() {
    let out = tree(&[]).stdout;
    let lines: Vec<&str> = out.lines().collect();
    // One root, the outermost module, drawn as the last (only) sibling.
    assert_eq!(lines[0], "└── (python) nn.Module: Model_0", "{out}");
    // Its four children, the last one with └──; deeper levels indented
    // through │ while an ancestor has later siblings.
    for want in [
        "    ├── (python) nn.Module: Linear_0",
        "    │   └── (cpu) aten::linear",
        "    │       └── (cpu) aten::addmm",
        "    ├── (python) nn.Module: ReLU_0",
        "    ├── (cpu) record_param_comms",
        "    └── (cpu) aten::copy_",
        "        └── (cuda_runtime) cudaMemcpyAsync",
        "            └── (gpu_memcpy) Memcpy DtoH (Device -> Pinned) [3.0 µs]",
    ] {
        assert!(lines.contains(&want), "missing line {want:?} in\n{out}");
    }
    let has = |s: &str| lines.iter().any(|l| l.contains(s));
    assert!(
        has("(kernel) void gemm_bf16_kernel<128, 64>(Params) [12.0 µs]"),
        "{out}"
    );
    assert!(
        has("(kernel) ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*) [20.0 µs]"),
        "{out}"
    );
    // Names longer than 64 characters are cut to 64 plus ".." (spec 01 §2.10).
    assert!(RELU_KERNEL.len() > 64);
    let cut = format!("(kernel) {}.. [4.5 µs]", &RELU_KERNEL[..64]);
    assert!(has(&cut), "expected {cut:?} in\n{out}");
    // aten::t launches nothing: hidden without --all.
    assert!(!has("aten::t"), "{out}");
    // Gemm sits under addmm, under linear, under Linear_0: five levels deep.
    let gemm = lines.iter().find(|l| l.contains("gemm_bf16")).unwrap();
    assert!(
        gemm.starts_with("    │               └── (kernel)"),
        "{gemm:?}"
    );
}

#[test]
fn all_shows_branches_without_gpu_work() {
    let out = tree(&["--all"]).stdout;
    // aten::t is aten::linear's first child, addmm its last.
    let lines: Vec<&str> = out.lines().collect();
    let t = lines
        .iter()
        .position(|l| l.ends_with("├── (cpu) aten::t"))
        .unwrap_or_else(|| panic!("no aten::t in\n{out}"));
    assert!(lines[t + 1].ends_with("└── (cpu) aten::addmm"), "{out}");
}

#[test]
fn depth_one_prints_roots_and_children() {
    let out = tree(&["--depth", "1"]).stdout;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "└── (python) nn.Module: Model_0",
            "    ├── (python) nn.Module: Linear_0",
            "    ├── (python) nn.Module: ReLU_0",
            "    ├── (cpu) record_param_comms",
            "    └── (cpu) aten::copy_",
        ],
        "{out}"
    );
}

#[test]
fn grep_prints_matching_subtrees_only() {
    // "relu" (case-sensitive) matches aten::relu, not nn.Module: ReLU_0.
    let out = tree(&["--grep", "relu"]).stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "└── (cpu) aten::relu");
    assert_eq!(lines[1], "    └── (cuda_runtime) cudaLaunchKernel");
    assert!(lines[2].starts_with("        └── (kernel) void at::native::vectorized"));
    assert!(lines[2].ends_with("[4.5 µs]"));
    for absent in ["addmm", "gemm", "Model_0", "ReLU_0", "nccl"] {
        assert!(!out.contains(absent), "{absent} printed:\n{out}");
    }
}

#[test]
fn modules_show_gpu_time_per_module() {
    let out = tree(&["--modules"]).stdout;
    let lines: Vec<&str> = out.lines().collect();
    // Model_0 holds every linked GPU event: gemm 12 + relu 4.5 + NCCL 20 +
    // memcpy 3 = 39.5 µs; Linear_0 holds the gemm (12), ReLU_0 the relu (4.5).
    assert_eq!(lines.len(), 3, "{out}");
    let line = |m: &str| {
        *lines
            .iter()
            .find(|l| l.contains(&format!("nn.Module: {m} ")))
            .unwrap_or_else(|| panic!("no {m} in\n{out}"))
    };
    assert!(line("Model_0").starts_with("└── "), "{out}");
    assert!(line("Model_0").ends_with("(39.50 µs)"), "{out}");
    assert!(line("Linear_0").ends_with("(12.00 µs)"), "{out}");
    assert!(line("ReLU_0").ends_with("(4.50 µs)"), "{out}");
    assert!(
        line("ReLU_0").starts_with("    └── "),
        "ReLU_0 is the last child"
    );
    // Ops and kernels are not listed.
    assert!(
        !out.contains("aten::") && !out.contains("(kernel)"),
        "{out}"
    );
}

#[test]
fn tree_reads_stdin() {
    let json = std::fs::read(testdata("example.json")).unwrap();
    let r = run_with_stdin(tracelens().args(["tree", "-"]), &json);
    r.assert_ok();
    assert_eq!(r.stdout, tree(&[]).stdout);
}

#[test]
fn invalid_regex_is_one_error_line() {
    let r = run(tracelens()
        .arg("tree")
        .arg(testdata("example.json"))
        .args(["--grep", "("]));
    let line = r.assert_one_error_line("--grep");
    assert_eq!(r.stdout, "");
    assert!(line.contains("pattern") || line.contains("regex"), "{line}");
}

#[test]
fn missing_trace_is_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("missing.json");
    let r = run(tracelens().arg("tree").arg(&p));
    r.assert_one_error_line(&p.display().to_string());
}

#[test]
fn modules_without_module_frames_is_an_error() {
    // cpu_only.json has no python frames and no GPU work.
    let r = run(tracelens()
        .arg("tree")
        .arg(testdata("cpu_only.json"))
        .arg("--modules"));
    let line = r.assert_one_error_line("cpu_only.json");
    assert!(line.contains("nn.Module"), "{line}");
}

/// The library's module rows (what `tracelens.tree(...).modules()` shows
/// in Python) hold what `--modules` prints, with parents and event counts.
#[test]
fn module_rows_hold_the_module_view() {
    use tracelens::analysis::commands::tree_view::module_rows;
    let t = tracelens::load_tree(&testdata("example.json")).unwrap();
    let rows = module_rows(&t.trace, &t.tree, false);
    let seen: Vec<(&str, Option<&str>, usize, f64, u32)> = rows
        .iter()
        .map(|r| {
            (
                t.trace.name(r.id),
                r.parent.map(|p| t.trace.name(p)),
                r.depth,
                r.gpu_time_us,
                r.gpu_events,
            )
        })
        .collect();
    let model = Some("nn.Module: Model_0");
    assert_eq!(
        seen,
        [
            ("nn.Module: Model_0", None, 0, 39.5, 4),
            ("nn.Module: Linear_0", model, 1, 12.0, 1),
            ("nn.Module: ReLU_0", model, 1, 4.5, 1),
        ]
    );
}
