//! Hostile inputs to the loader (issue 12, items 1 and 6): a JSON value
//! too large to hold, deep nesting, a zip archive streamed from a file or
//! buffered from stdin, a FIFO. Each gives one error line and exit code 1,
//! never an abort, a hang, or an output file.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Run, run, run_with_stdin, testdata, tracelens};

/// `tracelens report TRACE --csv <dir>/csv -q` with `env` set; the CSV
/// folder is inside `dir`.
fn report(trace: &Path, dir: &Path, env: &[(&str, &str)]) -> Run {
    let mut cmd = tracelens();
    cmd.arg("report")
        .arg(trace)
        .arg("--csv")
        .arg(dir.join("csv"))
        .arg("-q")
        .current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// Writes `bytes` to `<dir>/<name>`.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The entries of `dir`, which should be only the inputs the test wrote.
fn assert_only(dir: &Path, names: &[&str]) {
    assert_eq!(common::entries(dir), names, "an output was left behind");
}

const LIMIT_1MB: [(&str, &str); 1] = [("TRACELENS_MAX_VALUE_MB", "1")];

/// A trace whose document is `prefix` + `fill` x `n` + `suffix`.
fn doc(prefix: &str, fill: &str, n: usize, suffix: &str) -> Vec<u8> {
    let mut d = prefix.as_bytes().to_vec();
    d.extend(fill.repeat(n).bytes());
    d.extend(suffix.bytes());
    d
}

/// Writes, gzipped, `prefix` + `mb` MiB of `fill` + `suffix` to `out`
/// without holding the document: concatenated gzip members, the middle one
/// (1 MiB of `fill`, about 1 KB packed) repeated. Cheap even in a debug
/// build.
fn write_gz_doc(out: &mut dyn Write, prefix: &str, fill: u8, mb: usize, suffix: &str) {
    out.write_all(&common::gzip(prefix.as_bytes())).unwrap();
    let chunk = common::gzip(&vec![fill; 1 << 20]);
    for _ in 0..mb {
        out.write_all(&chunk).unwrap();
    }
    out.write_all(&common::gzip(suffix.as_bytes())).unwrap();
}

/// [`write_gz_doc`] into memory.
fn gz_doc(prefix: &str, fill: u8, mb: usize, suffix: &str) -> Vec<u8> {
    let mut out = Vec::new();
    write_gz_doc(&mut out, prefix, fill, mb, suffix);
    out
}

/// Runs `gz` under a 1 MiB limit: refused, naming the file and the limit.
fn refused_under_1mb(gz: &[u8], at: u64) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.json.gz", gz);
    let r = report(&p, dir.path(), &LIMIT_1MB);
    let line = r.assert_one_error_line("t.json.gz");
    assert!(
        line.ends_with(&format!(
            "t.json.gz: a JSON value larger than 1 MiB at byte {at} \
             (raise the limit with TRACELENS_MAX_VALUE_MB)"
        )),
        "{line}"
    );
    assert_only(dir.path(), &["t.json.gz"]);
}

#[test]
fn a_huge_string_is_refused_and_normal_traces_still_load() {
    let huge = gz_doc(
        r#"{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}, {"name": ""#,
        b'a',
        3,
        r#""}]}"#,
    );
    refused_under_1mb(&huge, 62);
    // Under the same low limit, an ordinary trace loads.
    let dir = tempfile::tempdir().unwrap();
    report(&testdata("example.json"), dir.path(), &LIMIT_1MB).assert_ok();
    // A bad limit is one error line too.
    let r = report(
        &testdata("example.json"),
        dir.path(),
        &[("TRACELENS_MAX_VALUE_MB", "0")],
    );
    let line = r.assert_one_error_line("example.json");
    assert!(line.contains("TRACELENS_MAX_VALUE_MB must be a whole number"));
}

#[test]
fn a_huge_key_is_refused() {
    // In an event, and at the top level.
    refused_under_1mb(&gz_doc(r#"{"traceEvents": [{""#, b'k', 3, r#"": 1}]}"#), 17);
    refused_under_1mb(&gz_doc(r#"{""#, b'k', 3, r#"": 1, "traceEvents": []}"#), 1);
}

#[test]
fn a_long_run_of_brackets_is_refused() {
    refused_under_1mb(&gz_doc(r#"{"traceEvents": ["#, b'[', 10, ""), 17);
    // Under the default limit: unclosed, the input ends inside it (one
    // line); closed, nothing recurses on it (the splitter counts brackets,
    // serde_json skips values iteratively and stops parsing at depth 128):
    // a million levels in a top-level value and in an event's args load.
    let dir = tempfile::tempdir().unwrap();
    let unclosed = write(
        dir.path(),
        "open.json.gz",
        &gz_doc(r#"{"traceEvents": ["#, b'[', 2, ""),
    );
    let line = report(&unclosed, dir.path(), &[]).assert_one_error_line("open.json.gz");
    assert!(line.contains("truncated"), "{line}");
    let n = 1 << 20;
    let deep = format!(
        r#"{{"meta": {}{}, "traceEvents": [{{"ph": "X", "cat": "cpu_op", "name": "n",
            "ts": 1, "dur": 1, "args": {{"Input Dims": {}{}}}}}]}}"#,
        "[".repeat(n),
        "]".repeat(n),
        "[".repeat(n),
        "]".repeat(n)
    );
    let deep = write(dir.path(), "deep.json", deep.as_bytes());
    let r = report(&deep, dir.path(), &[]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn a_huge_value_under_an_address_space_limit_is_an_error_not_an_abort() {
    if Command::new("sh").arg("-c").arg("true").status().is_err() {
        println!("SKIPPED: no `sh` to set an address-space limit with ulimit -v");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.json.gz");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    write_gz_doc(
        &mut f,
        r#"{"traceEvents": [{"name": ""#,
        b'a',
        300,
        r#""}]}"#,
    );
    f.flush().unwrap();
    drop(f);
    assert!(
        std::fs::metadata(&p).unwrap().len() < 1 << 20,
        "the .gz stays small"
    );
    // About 1 GB of address space, the default limit (256 MiB).
    let r = run(Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 1000000; exec "$0" report "$1" --csv "$2" -q"#)
        .arg(env!("CARGO_BIN_EXE_tracelens"))
        .arg(&p)
        .arg(dir.path().join("csv"))
        .env_remove("TRACELENS_MAX_VALUE_MB"));
    let line = r.assert_one_error_line("big.json.gz");
    assert!(
        line.contains("larger than 256 MiB") || line.contains("out of memory"),
        "{line}"
    );
    assert_only(dir.path(), &["big.json.gz"]);
}

/// A zip archive of `example.json` stored uncompressed with `pad` bytes of
/// padding in a top-level key (to make it large).
fn stored_zip(pad: usize) -> Vec<u8> {
    let json = std::fs::read_to_string(testdata("example.json")).unwrap();
    let body = json.trim_start().strip_prefix('{').unwrap();
    let padded = format!(r#"{{"pad": "{}", {body}"#, "p".repeat(pad));
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    w.start_file("trace.json", opts).unwrap();
    w.write_all(padded.as_bytes()).unwrap();
    w.finish().unwrap().into_inner()
}

/// The CSV files of a report on `example.json`, for comparison.
fn example_csvs() -> std::collections::BTreeMap<String, Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    report(&testdata("example.json"), dir.path(), &[]).assert_ok();
    common::read_dir_bytes(&dir.path().join("csv"))
}

#[test]
fn zip_archives_stream_from_files_and_buffer_from_stdin_within_a_limit() {
    let expected = example_csvs();
    let json = std::fs::read(testdata("example.json")).unwrap();
    let gz = common::gzip(&json);
    let dir = tempfile::tempdir().unwrap();
    for (name, zip) in [
        ("a.zip", common::zip_of(&[("example.json", &json)])),
        (
            "b.zip",
            common::zip_of(&[("x.txt", b"no"), ("t.json.gz", &gz)]),
        ),
        ("c.zip", stored_zip(2 << 20)),
    ] {
        let p = write(dir.path(), name, &zip);
        let r = report(&p, dir.path(), &[]);
        r.assert_ok();
        assert!(
            common::read_dir_bytes(&dir.path().join("csv")) == expected,
            "{name}: CSVs differ"
        );
        std::fs::remove_dir_all(dir.path().join("csv")).unwrap();
        // The same archive on stdin.
        let out = dir.path().join("csv");
        run_with_stdin(
            tracelens().args(["report", "-", "-q", "--csv"]).arg(&out),
            &zip,
        )
        .assert_ok();
        assert!(common::read_dir_bytes(&out) == expected, "{name} on stdin");
        std::fs::remove_dir_all(&out).unwrap();
    }
    // The stdin archive is held in memory: capped.
    let out = dir.path().join("csv");
    let r = run_with_stdin(
        tracelens()
            .args(["report", "-", "-q", "--csv"])
            .arg(&out)
            .env("TRACELENS_MAX_STDIN_ZIP_MB", "1"),
        &stored_zip(2 << 20),
    );
    let line = r.assert_one_error_line("-: a zip archive on stdin larger than 1 MiB");
    assert!(line.contains("TRACELENS_MAX_STDIN_ZIP_MB"), "{line}");
    assert!(!out.exists());
    // A member holding a value over the limit: refused while streaming.
    let big = doc(r#"{"traceEvents": [{"name": ""#, "z", 3 << 20, r#""}]}"#);
    let p = write(
        dir.path(),
        "big.zip",
        &common::zip_of(&[("big.json", &big)]),
    );
    let line = report(&p, dir.path(), &LIMIT_1MB).assert_one_error_line("big.zip");
    assert!(line.contains("larger than 1 MiB at byte 17"), "{line}");
    assert!(!out.exists());
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace.json");
    match Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        other => {
            println!("SKIPPED: cannot make a FIFO with mkfifo: {other:?}");
            return;
        }
    }
    let mut child = tracelens()
        .arg("report")
        .arg(&fifo)
        .args(["-q", "--csv"])
        .arg(dir.path().join("csv"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("tracelens blocked on a FIFO for 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let r = Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    let line = r.assert_one_error_line("trace.json");
    assert!(
        line.ends_with("trace.json: not a regular file (a FIFO?); pipe it through - instead"),
        "{line}"
    );
    assert_only(dir.path(), &["trace.json"]);
}
