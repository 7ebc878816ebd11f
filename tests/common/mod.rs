//! Helpers shared by the integration tests: running the real `tracelens`
//! binary, reading its CSV sheets back, and making input files (gzip, zip).
//!
//! Every test file includes this module with `mod common;` and uses only part
//! of it, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The seven sheets of a report on a trace with CPU ops and kernels, in the
/// reference's order (spec 01 §5.2).
pub const SHEETS: [&str; 7] = [
    "gpu_timeline",
    "ops_summary_by_category",
    "ops_summary",
    "ops_unique_args",
    "kernel_summary",
    "short_kernel_histogram",
    "short_kernels_summary",
];

/// The project root (where Cargo.toml lives).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared`, for the tests that need its corpus. Those tests are marked
/// ignored when the corpus was absent at build time (build.rs sets
/// `no_shared_corpus`), so the runner's summary shows them as skipped; a
/// corpus missing here vanished after the build, and the test fails
/// instead of passing without checking anything.
pub fn shared() -> PathBuf {
    let p = root().join("../shared");
    assert!(
        p.join("corpus").is_dir(),
        "{} was present when the tests were built but is gone: rebuild the tests",
        p.join("corpus").display()
    );
    p
}

/// Fails the test unless `python3` runs: with the corpus present, a
/// conformance check (conform.py) must run, never skip.
pub fn require_python3() {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "python3 is needed to run ../shared/tools/conform.py");
}

/// A file under `testdata/`.
pub fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// A `tracelens` command with a clean environment for the variables it reads.
/// stdin is empty unless [`run_with_stdin`] is used, so no test can hang on it.
pub fn tracelens() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tracelens"));
    c.env_remove("TRACELENS_TIMINGS");
    c
}

/// What a finished run left behind.
#[derive(Debug)]
pub struct Run {
    /// Exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Non-empty lines of stderr.
    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect()
    }

    /// Panics with the whole output unless the run exited 0.
    pub fn assert_ok(&self) -> &Self {
        assert_eq!(self.code, Some(0), "expected success, got {self:#?}");
        self.assert_no_panic()
    }

    /// No Rust panic message may ever reach the user.
    pub fn assert_no_panic(&self) -> &Self {
        assert!(
            !self.stderr.contains("panicked") && !self.stdout.contains("panicked"),
            "the binary panicked: {self:#?}"
        );
        self
    }

    /// The run failed with exit code 1 and exactly one stderr line of the form
    /// `tracelens: error: ...` that mentions `what` (a path, usually); returns it.
    pub fn assert_one_error_line(&self, what: &str) -> String {
        self.assert_no_panic();
        assert_eq!(self.code, Some(1), "expected exit code 1: {self:#?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "expected exactly one stderr line, got {}: {:?}",
            lines.len(),
            self.stderr
        );
        let line = lines[0];
        assert!(
            line.starts_with("tracelens: error:"),
            "error line must start with `tracelens: error:`: {line:?}"
        );
        assert!(
            line.contains(what),
            "error line must mention {what:?}: {line:?}"
        );
        line.to_string()
    }
}

/// Runs the command to completion with empty stdin.
pub fn run(cmd: &mut Command) -> Run {
    run_with_stdin(cmd, &[])
}

/// Runs `python3 ARGS`, asserts that it exits 0 (its stderr in the
/// message), and returns its stdout.
pub fn python3<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> String {
    let out = Command::new("python3")
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `tracelens ARGS` run to completion in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    run(tracelens().current_dir(dir).args(args))
}

/// A fresh folder holding a copy of `testdata/example.json` as `t.json`,
/// and that copy's path.
pub fn example_in_tempdir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.json");
    std::fs::copy(testdata("example.json"), &trace).unwrap();
    (tmp, trace)
}

/// Runs `tracelens` with the arguments of `line` (split on whitespace).
pub fn run_cli(line: &str) -> Run {
    run(tracelens().args(line.split_whitespace()))
}

/// The text of `<dir>/<sheet>.csv`.
pub fn csv_text(dir: &Path, sheet: &str) -> String {
    let path = dir.join(format!("{sheet}.csv"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Runs the command to completion, feeding `input` on stdin.
pub fn run_with_stdin(cmd: &mut Command, input: &[u8]) -> Run {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start tracelens");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Feed stdin from a thread so a large input cannot deadlock against a
    // full stdout pipe. A binary that stops reading early closes the pipe:
    // that write error is not the test's concern.
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("cannot wait for tracelens");
    feeder.join().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("stdout is not UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is not UTF-8"),
    }
}

/// `tracelens report TRACE --csv <tmp>/csv -q EXTRA...`, run inside a fresh
/// temporary directory. Returns the directory (keep it alive), the CSV folder
/// and the run.
pub fn report_csv(trace: &Path, extra: &[&str]) -> (tempfile::TempDir, PathBuf, Run) {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("csv");
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("report")
        .arg(trace)
        .arg("--csv")
        .arg(&csv)
        .arg("-q")
        .args(extra));
    (tmp, csv, r)
}

/// `tracelens collectives --trace-dir DIR --world-size WORLD --csv <tmp>/csv
/// EXTRA...`. Returns the temporary directory (keep it alive), the CSV
/// folder and the run.
pub fn collectives_csv(
    dir: &Path,
    world: u32,
    extra: &[&str],
) -> (tempfile::TempDir, PathBuf, Run) {
    collectives_csv_world(dir, Some(world), extra)
}

/// [`collectives_csv`] with `--world-size` only when `world` is given
/// (without it the world size comes from the traces).
pub fn collectives_csv_world(
    dir: &Path,
    world: Option<u32>,
    extra: &[&str],
) -> (tempfile::TempDir, PathBuf, Run) {
    let out = tempfile::tempdir().unwrap();
    let csv = out.path().join("csv");
    let mut cmd = tracelens();
    cmd.arg("collectives").arg("--trace-dir").arg(dir);
    if let Some(world) = world {
        cmd.arg("--world-size").arg(world.to_string());
    }
    let r = run(cmd.arg("--csv").arg(&csv).args(extra));
    (out, csv, r)
}

/// Every file (not directory) under `dir`, recursively, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The hidden manifest tracelens keeps in a folder whose files it
/// replaces as a unit (`--csv DIR`, `replay --out DIR`, ...).
pub const MANIFEST: &str = ".tracelens-manifest";

/// Every entry (file or directory) directly in `dir`, sorted by name,
/// but for tracelens's [`MANIFEST`] (tests/hostile_outputs.rs checks it;
/// see [`all_entries`]).
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v = all_entries(dir);
    v.retain(|n| n != MANIFEST);
    v
}

/// Every entry (file or directory) directly in `dir`, sorted by name.
pub fn all_entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The files of a CSV folder: name -> bytes.
pub fn read_dir_bytes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    entries(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// Parses CSV text as Python's `csv` module reads it: `,` separators, `"`
/// quoting with doubled inner quotes, quoted fields may span lines.
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(c),
        }
    }
    assert!(!quoted, "unterminated quoted field in CSV");
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// One CSV sheet: header and rows of text cells.
#[derive(Debug)]
pub struct Table {
    pub name: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads `<dir>/<sheet>.csv`.
    pub fn load(dir: &Path, sheet: &str) -> Table {
        let path = dir.join(format!("{sheet}.csv"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let mut all = parse_csv(&text);
        assert!(!all.is_empty(), "{} is empty", path.display());
        let header = all.remove(0);
        for (i, r) in all.iter().enumerate() {
            assert_eq!(
                r.len(),
                header.len(),
                "{sheet}.csv row {} has {} fields, header has {}",
                i + 1,
                r.len(),
                header.len()
            );
        }
        Table {
            name: sheet.to_string(),
            header,
            rows: all,
        }
    }

    /// Index of column `name`.
    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{}: no column {name:?} in {:?}", self.name, self.header))
    }

    /// The cell of row `row`, column `name`.
    pub fn cell(&self, row: usize, name: &str) -> &str {
        &self.rows[row][self.col(name)]
    }

    /// The cell as a number.
    pub fn num(&self, row: usize, name: &str) -> f64 {
        let s = self.cell(row, name);
        s.parse()
            .unwrap_or_else(|_| panic!("{} row {row} {name}: {s:?} is not a number", self.name))
    }

    /// The values of column `name`, top to bottom.
    pub fn column(&self, name: &str) -> Vec<&str> {
        let c = self.col(name);
        self.rows.iter().map(|r| r[c].as_str()).collect()
    }
}

/// `a` and `b` agree to a relative 1e-12 (for values whose last digit depends
/// on the summation order the spec prescribes, not on the trace).
pub fn assert_close(actual: f64, expected: f64, what: &str) {
    let tol = 1e-12 * expected.abs().max(actual.abs()).max(1.0);
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: got {actual}, expected {expected}"
    );
}

/// Gzip-compresses `data`.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Gunzips `data` (to check what the tests themselves produced).
pub fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// A zip archive holding `members` (name, bytes), deflate-compressed.
pub fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in members {
        w.start_file(*name, opts).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The worksheet names of an .xlsx workbook, in tab order (read from
/// `xl/workbook.xml`).
pub fn xlsx_sheet_names(path: &Path) -> Vec<String> {
    let f = std::fs::File::open(path).unwrap();
    let mut z = zip::ZipArchive::new(f).expect("the workbook is not a zip archive");
    let mut xml = String::new();
    z.by_name("xl/workbook.xml")
        .expect("the workbook has no xl/workbook.xml")
        .read_to_string(&mut xml)
        .unwrap();
    xml.split("<sheet ")
        .skip(1)
        .map(|s| {
            let start = s.find("name=\"").expect("sheet without name") + 6;
            let len = s[start..].find('"').unwrap();
            s[start..start + len].to_string()
        })
        .collect()
}

/// Every corpus PyTorch trace that Holistic Trace Analysis's outputs in
/// `../shared/corpus/hta/` include `file` for: (name, HTA folder, trace),
/// sorted by name.
pub fn hta_traces(file: &str) -> Vec<(String, PathBuf, PathBuf)> {
    let root = shared().join("corpus");
    let mut out: Vec<_> = std::fs::read_dir(root.join("hta"))
        .unwrap()
        .filter_map(|e| {
            let dir = e.unwrap().path();
            let name = dir.file_name()?.to_str()?.to_string();
            let trace = root.join("pytorch").join(format!("{name}.json.gz"));
            (dir.join(file).is_file() && trace.is_file()).then_some((name, dir, trace))
        })
        .collect();
    out.sort();
    assert!(out.len() >= 14, "only {} HTA traces found", out.len());
    out
}

/// A CSV file's header and rows (gzip-packed when its name ends in `.gz`).
pub fn csv_file(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let bytes = std::fs::read(path).unwrap();
    let text = if path.extension().is_some_and(|e| e == "gz") {
        gunzip(&bytes)
    } else {
        bytes
    };
    let mut rows = parse_csv(&String::from_utf8(text).unwrap());
    let header = rows.remove(0);
    (header, rows)
}

/// A Kineto trace built event by event for tests: host events on pid 1 /
/// tid 1, GPU events on stream 7 of device 0, each launch linked to its
/// GPU event by the next correlation id.
#[derive(Default)]
pub struct KinetoTrace {
    /// The events as JSON objects.
    pub events: Vec<String>,
    /// The last correlation id given.
    pub corr: i64,
}

impl KinetoTrace {
    /// A complete event; one whose args name a stream runs on the GPU.
    pub fn push(&mut self, cat: &str, name: &str, ts: f64, dur: f64, args: &str) {
        let (pid, tid) = if args.contains("\"stream\"") {
            (0, 7)
        } else {
            (1, 1)
        };
        self.events.push(format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
        ));
    }

    /// A CPU op.
    pub fn op(&mut self, name: &str, ts: f64, dur: f64) -> &mut Self {
        self.push("cpu_op", name, ts, dur, "");
        self
    }

    /// A runtime call without GPU work (a sync).
    pub fn call(&mut self, name: &str, ts: f64, dur: f64) -> &mut Self {
        self.push("cuda_runtime", name, ts, dur, "");
        self
    }

    /// A runtime call `launch` at `[ts, ts+dur]` and the GPU event
    /// `kernel` of category `cat` it launches at `[kts, kts+kdur]`.
    pub fn gpu(
        &mut self,
        launch: (&str, f64, f64),
        cat: &str,
        kernel: &str,
        k: (f64, f64),
    ) -> &mut Self {
        self.corr += 1;
        let c = self.corr;
        let args = format!("\"correlation\":{c}");
        self.push("cuda_runtime", launch.0, launch.1, launch.2, &args);
        let args = format!("\"correlation\":{c},\"stream\":7,\"device\":0");
        self.push(cat, kernel, k.0, k.1, &args);
        self
    }

    /// A kernel `kN` (N its correlation id) launched by `cudaLaunchKernel`
    /// at `l`, running at `k` (start, duration).
    pub fn kernel(&mut self, l: (f64, f64), k: (f64, f64)) -> &mut Self {
        let n = format!("k{}", self.corr + 1);
        self.gpu(("cudaLaunchKernel", l.0, l.1), "kernel", &n, k)
    }

    /// The file's text.
    pub fn json(&self) -> String {
        format!("{{\"traceEvents\":[{}]}}", self.events.join(","))
    }

    /// The file's text with `top` (`"key": value` pairs) before the
    /// events, e.g. a `deviceProperties` list.
    pub fn json_with(&self, top: &str) -> String {
        format!("{{{top},\"traceEvents\":[{}]}}", self.events.join(","))
    }
}

/// `testdata/diff/split_base.json` with its add kernel (3 µs) moved to
/// start at 220 µs, inside the GEMM kernel (200–230 µs) on the same
/// stream: 3 µs of overlap, 10% of the 30 µs busy time, so
/// `health.overlapping_kernels` fails on it.
pub fn overlapping_split_base(dir: &Path) -> PathBuf {
    let base = testdata("diff/split_base.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base).unwrap()).unwrap();
    for e in v["traceEvents"].as_array_mut().unwrap() {
        let flow_end = e["ph"] == "f" && e["id"] == 2;
        if e["name"] == "add_kernel" || flow_end {
            e["ts"] = serde_json::json!(220.0);
        }
    }
    let p = dir.join("overlapping.json");
    std::fs::write(&p, v.to_string()).unwrap();
    p
}
