//! The Python package (`pip install .`, python/): builds it into a virtual
//! environment made from the registries (`target/python-venv`, kept between
//! runs) and runs its pytest suite (tests/python). With `python3` absent at
//! build time the test is marked ignored ("needs python3"); with it present,
//! a package that does not build, or a failing pytest, fails this test.

mod common;

use std::path::Path;
use std::process::Command;

/// Runs `cmd`, failing the test with its output unless it succeeds.
fn check(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", String::from_utf8_lossy(&out.stdout));
}

/// `PATH` with `dir` first (the venv's `maturin`, as if activated).
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut dirs = vec![dir.to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).expect("PATH entries join")
}

#[test]
#[cfg_attr(no_python3, ignore = "needs python3")]
fn python_package_builds_and_its_tests_pass() {
    let root = common::root();
    let venv = root.join("target/python-venv");
    let python = venv.join("bin/python");
    if !python.is_file() {
        check(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv",
        );
    }
    check(
        Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "maturin>=1.5,<2",
            "pytest",
            "pandas",
            "pyarrow",
            "matplotlib",
            // The fleet map and reduce as tasks of a local Ray cluster.
            "ray",
        ]),
        "pip install of the test dependencies",
    );
    // No build isolation: maturin comes from the venv, and the build
    // reuses this repository's target folder (its own profile and
    // features, so only what differs is compiled).
    check(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-build-isolation",
                "--force-reinstall",
                "--no-deps",
            ])
            .arg(&root)
            .current_dir(&root)
            .env("PATH", path_with(&venv.join("bin"))),
        "pip install . (the tracelens package)",
    );
    let shared = root.join("../shared");
    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q", "-rs"])
        .arg(root.join("tests/python"))
        .current_dir(&root)
        .env("TRACELENS_BIN", env!("CARGO_BIN_EXE_tracelens"))
        .env("TRACELENS_VENV_BIN", venv.join("bin"))
        // ray was installed above: its test must run, not skip.
        .env("TRACELENS_REQUIRE_RAY", "1");
    if cfg!(not(no_shared_corpus)) {
        // Present at build time: the corpus tests must run, not skip.
        assert!(
            Path::new(&shared).join("corpus").is_dir(),
            "../shared/corpus vanished after the build"
        );
        pytest.env("TRACELENS_SHARED", &shared);
    }
    check(&mut pytest, "pytest tests/python");
}
