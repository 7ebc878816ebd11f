//! Tells the tests whether the shared corpus (`../shared/corpus`) is beside
//! the repository: without it, the tests that need it are marked ignored
//! (`cfg(no_shared_corpus)`), so the test runner's summary shows them as
//! skipped rather than passed. Likewise without `python3` on the PATH
//! for the Python package's tests (`cfg(no_python3)`), and without a Python
//! that imports torch for running the replay scripts (`cfg(no_torch)`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_shared_corpus)");
    println!("cargo::rerun-if-changed=../shared/corpus");
    if !std::path::Path::new("../shared/corpus").is_dir() {
        println!("cargo::rustc-cfg=no_shared_corpus");
    }
    println!("cargo::rustc-check-cfg=cfg(no_python3)");
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !python {
        println!("cargo::rustc-cfg=no_python3");
    }
    // The replay scripts' test runs them when a Python with torch is at
    // hand: TRACELENS_TORCH_PYTHON, else python3 if it imports torch.
    println!("cargo::rustc-check-cfg=cfg(no_torch)");
    println!("cargo::rerun-if-env-changed=TRACELENS_TORCH_PYTHON");
    let torch_python =
        std::env::var("TRACELENS_TORCH_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let torch = std::process::Command::new(&torch_python)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if torch {
        println!("cargo::rustc-env=TRACELENS_TORCH_PYTHON={torch_python}");
    } else {
        println!("cargo::rustc-cfg=no_torch");
    }
}
