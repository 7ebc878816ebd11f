//! Tells the tests whether the shared corpus (`../shared/corpus`) is beside
//! the repository: without it, the tests that need it are marked ignored
//! (`cfg(no_shared_corpus)`), so the test runner's summary shows them as
//! skipped rather than passed. Likewise without `python3` on the PATH
//! for the Python package's tests (`cfg(no_python3)`).

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
}
