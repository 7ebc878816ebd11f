//! An input without end: the unpacked bytes of one input read from stdin
//! or inflated from a packed file are bounded by `TRACELENS_MAX_INPUT_MB`.
//! Past it, one line naming the input and the variable, exit code 1, no
//! output; an endless stream on stdin stops there instead of aborting on a
//! failed allocation. Plain files are bounded by their size and read as
//! they are. Each run is under 4 GB of address space.

mod common;
#[path = "common/hostile_zip.rs"]
mod hostile_zip;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Run, testdata};

const EVENT: &[u8] = br#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"stream": 7}},"#;
const START: &[u8] = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 1},"#;
const END: &[u8] =
    br#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1}]}"#;

/// A `report INPUT --csv DIR/csv -q` command under `ulimit -v 4000000`,
/// with the input limit `mb` (unset when None).
fn report(input: &str, dir: &Path, mb: Option<&str>) -> Command {
    let script = format!(
        "ulimit -v 4000000; exec {} report '{input}' --csv '{}' -q",
        env!("CARGO_BIN_EXE_tracelens"),
        dir.join("csv").display()
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).current_dir(dir);
    match mb {
        Some(mb) => cmd.env("TRACELENS_MAX_INPUT_MB", mb),
        None => cmd.env_remove("TRACELENS_MAX_INPUT_MB"),
    };
    cmd
}

/// About `mb` MiB of events, as a document.
fn trace_of(mb: usize) -> Vec<u8> {
    let mut doc = START.to_vec();
    doc.extend(EVENT.repeat((mb << 20) / EVENT.len()));
    doc.extend(END);
    doc
}

/// The one error line of a refused input `what`, over a limit of `mb` MiB.
fn assert_over_limit(r: &Run, what: &str, mb: usize) {
    let line = r.assert_one_error_line(what);
    assert!(
        line.ends_with(&format!(
            "{what}: the input is larger than {mb} MiB unpacked \
             (raise the limit with TRACELENS_MAX_INPUT_MB)"
        )),
        "{line}"
    );
}

#[test]
fn an_endless_stream_on_stdin_stops_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = report("-", dir.path(), Some("16"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Writes events until the reader goes away (or 60 s pass: a hang).
    let writer = std::thread::spawn(move || {
        let block = EVENT.repeat(1 << 14);
        let start = Instant::now();
        if stdin.write_all(START).is_err() {
            return;
        }
        while start.elapsed() < Duration::from_secs(60) {
            if stdin.write_all(&block).is_err() {
                return;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let r = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_over_limit(&r, "-", 16);
    assert_eq!(common::entries(dir.path()), Vec::<String>::new());
}

#[test]
fn packed_inputs_past_the_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let doc = trace_of(24);
    // A gzip file, a zip file, gzip on stdin: 24 MiB unpacked, limit 16.
    let gz = dir.path().join("t.json.gz");
    std::fs::write(&gz, common::gzip(&doc)).unwrap();
    let r = common::run(&mut report("t.json.gz", dir.path(), Some("16")));
    assert_over_limit(&r, "t.json.gz", 16);
    let zip = dir.path().join("t.zip");
    std::fs::write(&zip, common::zip_of(&[("t.json", &doc)])).unwrap();
    let r = common::run(&mut report("t.zip", dir.path(), Some("16")));
    assert_over_limit(&r, "t.zip", 16);
    let r = common::run_with_stdin(
        &mut report("-", dir.path(), Some("16")),
        &common::gzip(&doc),
    );
    assert_over_limit(&r, "-", 16);
    assert_eq!(common::entries(dir.path()), ["t.json.gz", "t.zip"]);
    // Raised past it, the same inputs load.
    for input in ["t.json.gz", "t.zip"] {
        common::run(&mut report(input, dir.path(), Some("32"))).assert_ok();
    }
}

#[test]
fn traces_under_the_limit_and_plain_files_load() {
    let dir = tempfile::tempdir().unwrap();
    // A plain file larger than the limit is bounded by its size: read as is.
    let plain = dir.path().join("t.json");
    std::fs::write(&plain, trace_of(3)).unwrap();
    common::run(&mut report("t.json", dir.path(), Some("1"))).assert_ok();
    // Small inputs on stdin and packed, under a 1 MiB limit.
    let example = std::fs::read(testdata("example.json")).unwrap();
    assert!(example.len() < 1 << 20);
    common::run_with_stdin(&mut report("-", dir.path(), Some("1")), &example).assert_ok();
    let gz = common::gzip(&example);
    common::run_with_stdin(&mut report("-", dir.path(), Some("1")), &gz).assert_ok();
    // The default needs no variable.
    common::run_with_stdin(&mut report("-", dir.path(), None), &gz).assert_ok();
    // A bad value is one line naming the variable.
    let r = common::run_with_stdin(&mut report("-", dir.path(), Some("0")), &example);
    let line = r.assert_one_error_line("TRACELENS_MAX_INPUT_MB");
    assert!(
        line.contains("TRACELENS_MAX_INPUT_MB must be a whole number"),
        "{line}"
    );
}
