//! Standard output that cannot be written: a full device (`/dev/full`) is
//! one line on stderr and a non-zero exit for every command that prints to
//! stdout, never a panic or a silent success; a closed pipe (`| head`) is a
//! quiet success.

mod common;

use std::fs::OpenOptions;
use std::process::{Command, Stdio};

use common::{testdata, tracelens};

/// Runs `cmd` with stdout on `/dev/full`: (exit code, stderr).
fn to_full_device(cmd: &mut Command) -> (i32, String) {
    let full = OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = cmd.stdout(Stdio::from(full)).output().unwrap();
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The command lines that print their results on stdout.
fn printing_commands() -> Vec<Command> {
    let example = testdata("example.json");
    let (base, variant) = (
        testdata("diff/split_base.json"),
        testdata("diff/split_variant.json"),
    );
    let mut report_md = tracelens();
    report_md.arg("report").arg(&example).args(["--md", "-"]);
    let mut tree = tracelens();
    tree.arg("tree").arg(&example);
    let mut roofline = tracelens();
    roofline.args(["roofline", "gemm", "--m", "64", "--n", "64", "--k", "64"]);
    let mut compare_json = tracelens();
    compare_json
        .arg("compare")
        .arg(&base)
        .arg(&variant)
        .args(["--json", "-"]);
    let mut compare_md = tracelens();
    compare_md.arg("compare").arg(&base).arg(&variant);
    let mut diff_md = tracelens();
    diff_md
        .arg("diff")
        .arg(&base)
        .arg(&variant)
        .args(["--md", "-"]);
    let mut diff_json = tracelens();
    diff_json
        .arg("diff")
        .arg(&base)
        .arg(&variant)
        .args(["--json", "-"]);
    vec![
        report_md,
        tree,
        roofline,
        compare_json,
        compare_md,
        diff_md,
        diff_json,
    ]
}

#[test]
fn a_full_stdout_is_one_line_and_a_failure() {
    for mut cmd in printing_commands() {
        let line = format!("{cmd:?}");
        let (code, stderr) = to_full_device(&mut cmd);
        assert!(code != 0 && code != 101, "{line}: exit {code}\n{stderr}");
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("tracelens: error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{line}:\n{stderr}");
        assert!(
            errors[0].contains("cannot write to standard output"),
            "{line}:\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{line}:\n{stderr}");
    }
}

#[test]
fn a_closed_pipe_is_a_quiet_success() {
    for mut cmd in printing_commands() {
        let line = format!("{cmd:?}");
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the command writes (it loads first).
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{line}:\n{stderr}");
        assert!(!stderr.contains("error"), "{line}:\n{stderr}");
    }
}
