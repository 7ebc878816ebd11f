//! Tells the tests whether the shared corpus (`../shared/corpus`) is beside
//! the repository: without it, the tests that need it are marked ignored
//! (`cfg(no_shared_corpus)`), so the test runner's summary shows them as
//! skipped rather than passed.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_shared_corpus)");
    println!("cargo::rerun-if-changed=../shared/corpus");
    if !std::path::Path::new("../shared/corpus").is_dir() {
        println!("cargo::rustc-cfg=no_shared_corpus");
    }
}
