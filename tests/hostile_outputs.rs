//! Output paths that are not plain files, output folders holding the
//! user's files, and runs racing into one folder:
//!
//! - a character device or FIFO named as an output is written through,
//!   never replaced by a regular file; a link to a file, a dangling link or
//!   a socket is refused before any work and left as it was;
//! - a re-run into an output folder removes only files an earlier run
//!   wrote there (the folder's manifest), never the user's, and a
//!   manipulated manifest cannot make it remove anything else;
//! - concurrent runs into one folder leave exactly one run's files, and
//!   concurrent runs into a fresh nested folder all succeed.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{
    MANIFEST, Run, all_entries, entries, example_in_tempdir, run, run_in, testdata, tracelens,
};

/// A fresh folder holding `testdata/example.json` as `t.json`.
fn setup() -> tempfile::TempDir {
    example_in_tempdir().0
}

fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// Makes a FIFO at `p`.
fn mkfifo(p: &Path) {
    // SAFETY: a valid NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c_path(p).as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", p.display());
}

/// Makes a copy of `/dev/null` (character device 1, 3) at `p`; false
/// when not allowed (only root may).
fn mknod_null(p: &Path) -> bool {
    let dev = libc::makedev(1, 3);
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::mknod(c_path(p).as_ptr(), libc::S_IFCHR | 0o666, dev) == 0 }
}

/// Waits for `child` at most `secs` seconds; kills it after that.
fn finish(mut child: Child, secs: u64) -> Run {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("tracelens did not finish within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// `tracelens ARGS` in `dir`, started (not awaited).
fn spawn_in(dir: &Path, args: &[&str]) -> Child {
    tracelens()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The bytes a reader of the FIFO `p` gets, read on a thread of its own
/// (a test must not hang on a FIFO nobody writes).
fn read_fifo(p: &Path) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    let p = p.to_path_buf();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Ok(mut f) = fs::File::open(&p) {
            let _ = f.read_to_end(&mut bytes);
        }
        let _ = tx.send(bytes);
    });
    rx
}

fn is_fifo(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_fifo())
}

fn is_link(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// The Markdown page of `t.json` in `dir`, written to a regular file.
fn markdown_of(dir: &Path) -> Vec<u8> {
    run_in(dir, &["report", "t.json", "--md", "plain.md", "-q"]).assert_ok();
    let md = fs::read(dir.join("plain.md")).unwrap();
    fs::remove_file(dir.join("plain.md")).unwrap();
    md
}

/// A FIFO given to `--md` (alone, and beside a CSV folder) receives the
/// page and stays a FIFO. Returns after checking; panics otherwise.
fn assert_fifo_written_through(dir: &Path) {
    let md = markdown_of(dir);
    let fifo = dir.join("page.md");
    mkfifo(&fifo);
    for extra in [&[][..], &["--csv", "csv"][..]] {
        let got = read_fifo(&fifo);
        let mut args = vec!["report", "t.json", "--md", "page.md", "-q"];
        args.extend(extra);
        let r = finish(spawn_in(dir, &args), 60);
        r.assert_ok();
        assert!(is_fifo(&fifo), "the FIFO was replaced ({extra:?})");
        let bytes = got
            .recv_timeout(Duration::from_secs(30))
            .expect("the FIFO's reader got nothing");
        assert!(bytes == md, "the FIFO's reader got other bytes ({extra:?})");
    }
    assert!(dir.join("csv/gpu_timeline.csv").is_file());
}

#[test]
fn a_fifo_output_is_written_through_not_replaced() {
    let tmp = setup();
    assert_fifo_written_through(tmp.path());
    // A workbook into a FIFO: the bytes of the workbook, whatever its name.
    let d = tmp.path();
    let fifo = d.join("book");
    mkfifo(&fifo);
    let got = read_fifo(&fifo);
    finish(spawn_in(d, &["report", "t.json", "-o", "book", "-q"]), 60).assert_ok();
    let bytes = got.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(bytes.starts_with(b"PK"), "not a workbook");
    assert!(is_fifo(&fifo));
}

#[test]
fn devices_and_links_to_them_are_written_through() {
    let tmp = setup();
    let d = tmp.path();
    // Safe places first: a FIFO, and (as root) a copy of /dev/null in the
    // temporary folder. Only when those stay what they were may the run
    // be pointed at the system's /dev/null.
    assert_fifo_written_through(d);
    let local = d.join("null");
    if mknod_null(&local) {
        run_in(
            d,
            &["report", "t.json", "--md", "null", "-o", "null2.xlsx", "-q"],
        )
        .assert_ok();
        assert!(
            fs::symlink_metadata(&local)
                .unwrap()
                .file_type()
                .is_char_device()
        );
        run_in(d, &["report", "t.json", "-o", "null", "-q"]).assert_ok();
        assert!(
            fs::symlink_metadata(&local)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    } else {
        println!("not root: no local device made; the FIFO case stands for it");
    }
    let null = Path::new("/dev/null");
    let before = fs::symlink_metadata(null).unwrap();
    assert!(before.file_type().is_char_device());
    for args in [
        &["--md", "/dev/null"][..],
        &["-o", "/dev/null"][..],
        &["--md", "to_null.md", "--csv", "csv"][..],
    ] {
        if !is_link(&d.join("to_null.md")) {
            std::os::unix::fs::symlink(null, d.join("to_null.md")).unwrap();
        }
        let mut line = vec!["report", "t.json", "-q"];
        line.extend(args);
        run_in(d, &line).assert_ok();
        let after = fs::symlink_metadata(null).unwrap();
        assert!(after.file_type().is_char_device(), "{args:?}");
        assert_eq!((after.ino(), after.rdev()), (before.ino(), before.rdev()));
        assert!(is_link(&d.join("to_null.md")), "{args:?}");
    }
    // /dev/stdout (a link to the pipe tracelens writes to) takes the page.
    let r = run_in(d, &["report", "t.json", "--md", "/dev/stdout", "-q"]);
    r.assert_ok();
    assert!(r.stdout.as_bytes() == markdown_of(d), "{}", r.stdout);
    assert!(is_link(Path::new("/dev/stdout")));
}

#[test]
fn a_link_to_a_file_is_refused_and_left_alone() {
    let tmp = setup();
    let d = tmp.path();
    fs::write(d.join("mine.md"), "mine").unwrap();
    std::os::unix::fs::symlink("mine.md", d.join("link.md")).unwrap();
    std::os::unix::fs::symlink("mine.md", d.join("link.xlsx")).unwrap();
    std::os::unix::fs::symlink("nowhere.md", d.join("dangling.md")).unwrap();
    let cases = [
        ("link.md", &["--md", "link.md", "--csv", "csv"][..]),
        ("link.xlsx", &["-o", "link.xlsx"][..]),
        ("dangling.md", &["--md", "dangling.md"][..]),
    ];
    for (name, args) in cases {
        let mut line = vec!["report", "t.json", "-q"];
        line.extend(args);
        let err = run_in(d, &line).assert_one_error_line(name);
        assert!(
            err.ends_with(&format!(
                "{name}: is a symbolic link; refusing to replace it (name its target instead)"
            )),
            "{err}"
        );
        assert!(is_link(&d.join(name)), "{name} was replaced");
    }
    assert_eq!(fs::read_to_string(d.join("mine.md")).unwrap(), "mine");
    assert_eq!(
        entries(d),
        ["dangling.md", "link.md", "link.xlsx", "mine.md", "t.json"]
    );
}

#[test]
fn a_socket_or_a_file_where_a_folder_goes_is_refused() {
    let tmp = setup();
    let d = tmp.path();
    let _socket = std::os::unix::net::UnixListener::bind(d.join("s.md")).unwrap();
    let err = run_in(d, &["report", "t.json", "--md", "s.md", "-q"]).assert_one_error_line("s.md");
    assert!(err.contains("is a socket"), "{err}");
    assert!(
        fs::symlink_metadata(d.join("s.md"))
            .unwrap()
            .file_type()
            .is_socket()
    );
    mkfifo(&d.join("fifo"));
    let err = run_in(d, &["report", "t.json", "--csv", "fifo", "-q"]).assert_one_error_line("fifo");
    assert!(err.ends_with("fifo: is a FIFO, not a folder"), "{err}");
    assert!(is_fifo(&d.join("fifo")));
    fs::write(d.join("file"), "mine").unwrap();
    let err = run_in(d, &["replay", "t.json", "--out", "file", "-q"]).assert_one_error_line("file");
    assert!(
        err.ends_with("file: is a regular file, not a folder"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(d.join("file")).unwrap(), "mine");
    // A link to a folder is a folder: the sheets land in its target.
    fs::create_dir(d.join("real")).unwrap();
    std::os::unix::fs::symlink("real", d.join("to_real")).unwrap();
    run_in(d, &["report", "t.json", "--csv", "to_real", "-q"]).assert_ok();
    assert!(is_link(&d.join("to_real")));
    assert!(d.join("real/gpu_timeline.csv").is_file());
}

/// The names of the `*.py` files directly in `dir`.
fn py_files(dir: &Path) -> Vec<String> {
    entries(dir)
        .into_iter()
        .filter(|n| n.ends_with(".py"))
        .collect()
}

#[test]
fn replay_keeps_the_users_scripts() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let trace = testdata("example.json");
    let replay = |top: &str| {
        run(tracelens()
            .current_dir(d)
            .arg("replay")
            .arg(&trace)
            .args(["--top", top, "--out", "r", "-q"]))
        .assert_ok();
        py_files(&d.join("r"))
    };
    let first = replay("10");
    fs::write(d.join("r/notes.py"), "# mine").unwrap();
    fs::write(d.join("r/helper.txt"), "mine").unwrap();
    let second = replay("1");
    assert!(second.len() < first.len(), "{first:?} {second:?}");
    // The first run's scripts that the second does not write went; the
    // user's stayed, twice over.
    let mut expected: Vec<String> = first
        .iter()
        .filter(|n| second.contains(n))
        .cloned()
        .collect();
    expected.push("notes.py".into());
    expected.sort();
    assert_eq!(py_files(&d.join("r")), expected);
    assert_eq!(replay("1"), expected);
    assert_eq!(fs::read_to_string(d.join("r/notes.py")).unwrap(), "# mine");
    assert!(d.join("r/helper.txt").is_file());
}

#[test]
fn fleet_and_summarize_keep_the_users_files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let summarize = || {
        run(tracelens()
            .arg("summarize")
            .arg(testdata("fleet"))
            .arg("--out")
            .arg(d.join("s"))
            .arg("-q"))
        .assert_ok();
    };
    summarize();
    fs::write(d.join("s/rank0/mine.parquet"), "PAR1").unwrap();
    summarize();
    assert_eq!(
        fs::read_to_string(d.join("s/rank0/mine.parquet")).unwrap(),
        "PAR1"
    );
    let fleet = |extra: &[&str]| {
        run(tracelens()
            .arg("fleet")
            .arg(d.join("s"))
            .arg("--out")
            .arg(d.join("f"))
            .args(extra)
            .arg("-q"))
        .assert_ok();
        entries(&d.join("f"))
    };
    let with_parquet = fleet(&["--parquet"]);
    assert!(with_parquet.iter().any(|n| n.ends_with(".parquet")));
    for f in ["mine.csv", "mine.svg", "mine.parquet"] {
        fs::write(d.join("f").join(f), "mine").unwrap();
    }
    let names = fleet(&[]);
    // The first run's Parquet sheets went; the user's files stayed.
    let parquet: Vec<&String> = names.iter().filter(|n| n.ends_with(".parquet")).collect();
    assert_eq!(parquet, ["mine.parquet"]);
    for f in ["mine.csv", "mine.svg", "mine.parquet"] {
        assert_eq!(fs::read_to_string(d.join("f").join(f)).unwrap(), "mine");
    }
}

#[test]
fn report_csv_keeps_the_users_sheets_and_drops_its_own_stale_ones() {
    let tmp = setup();
    let d = tmp.path();
    fs::copy(testdata("cpu_only.json"), d.join("c.json")).unwrap();
    // A folder the user made, holding a sheet of theirs: never listed.
    fs::create_dir(d.join("csv")).unwrap();
    fs::write(d.join("csv/mine.csv"), "a\n1\n").unwrap();
    run_in(d, &["report", "t.json", "--csv", "csv", "-q"]).assert_ok();
    let full = entries(&d.join("csv"));
    let mut expected: Vec<String> = sheets_of("example.json").into_keys().collect();
    expected.push("mine.csv".to_string());
    expected.sort();
    assert_eq!(full, expected);
    run_in(d, &["report", "c.json", "--csv", "csv", "-q"]).assert_ok();
    assert_eq!(
        all_entries(&d.join("csv")),
        [
            MANIFEST,
            "findings.csv",
            "health.csv",
            "mine.csv",
            "short_kernel_histogram.csv",
            "short_kernels_summary.csv"
        ]
    );
    // The manifest lists the run's sheets, one per line after its header.
    let manifest = fs::read_to_string(d.join("csv").join(MANIFEST)).unwrap();
    let listed: Vec<&str> = manifest.lines().skip(1).collect();
    assert_eq!(
        listed,
        [
            "findings.csv",
            "health.csv",
            "short_kernel_histogram.csv",
            "short_kernels_summary.csv"
        ]
    );
}

#[test]
fn a_manipulated_manifest_cannot_remove_files_elsewhere() {
    let tmp = setup();
    let d = tmp.path();
    fs::create_dir_all(d.join("csv/sub")).unwrap();
    let outside = d.join("outside.csv");
    for f in [&outside, &d.join("csv/sub/x.csv"), &d.join("csv/ours.csv")] {
        fs::write(f, "a\n").unwrap();
    }
    std::os::unix::fs::symlink(&outside, d.join("csv/link.csv")).unwrap();
    let abs = outside.to_string_lossy().replace('/', "%2F");
    let header = "# tracelens manifest 1: files tracelens wrote in this folder";
    let text = format!(
        "{header}\n../outside.csv\n{}\n{abs}\n..%2Foutside.csv\nsub/x.csv\nsub\nlink.csv\nours.csv\n",
        outside.display()
    );
    fs::write(d.join("csv").join(MANIFEST), text).unwrap();
    run_in(d, &["report", "t.json", "--csv", "csv", "-q"]).assert_ok();
    assert!(outside.is_file());
    assert!(d.join("csv/sub/x.csv").is_file());
    assert!(is_link(&d.join("csv/link.csv")));
    // The one plain name of a sheet in the folder is the tool's to remove.
    assert!(!d.join("csv/ours.csv").exists());
    assert!(d.join("csv/gpu_timeline.csv").is_file());
}

/// The sheets of `trace` written alone into a fresh folder: name -> bytes.
fn sheets_of(trace: &str) -> BTreeMap<String, Vec<u8>> {
    let (_tmp, csv, r) = common::report_csv(&testdata(trace), &[]);
    r.assert_ok();
    common::read_dir_bytes(&csv)
}

/// `tracelens report testdata/TRACE --csv OUT -q` started with `env` set.
fn report_csv_child(trace: &str, out: &Path, env: &[(&str, &str)]) -> Child {
    tracelens()
        .arg("report")
        .arg(testdata(trace))
        .arg("--csv")
        .arg(out)
        .arg("-q")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn concurrent_reports_into_one_folder_leave_one_runs_sheets() {
    let a = sheets_of("example.json");
    let b = sheets_of("cpu_only.json");
    assert_ne!(a.len(), b.len());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for round in 0..4 {
        // Runs that stage, wait, then commit together, alternating the
        // two traces (ten sheets and two of the same names); each commit
        // pauses between reading the folder and moving files.
        let children: Vec<Child> = (0..8)
            .map(|i| {
                let trace = if (i + round) % 2 == 0 {
                    "example.json"
                } else {
                    "cpu_only.json"
                };
                report_csv_child(
                    trace,
                    &out,
                    &[
                        ("TRACELENS_TEST_PAUSE_BEFORE_COMMIT_MS", "300"),
                        ("TRACELENS_TEST_PAUSE_IN_COMMIT_MS", "100"),
                    ],
                )
            })
            .collect();
        for c in children {
            finish(c, 120).assert_ok();
        }
        let got = common::read_dir_bytes(&out);
        assert!(
            got == a || got == b,
            "round {round}: the folder mixes runs: {:?}",
            got.keys().collect::<Vec<_>>()
        );
        let hidden: Vec<String> = all_entries(&out)
            .into_iter()
            .filter(|n| n.starts_with('.') && n != MANIFEST)
            .collect();
        assert!(hidden.is_empty(), "staging folders left: {hidden:?}");
    }
}

#[test]
fn concurrent_reports_into_a_fresh_nested_folder_all_succeed() {
    let tmp = tempfile::tempdir().unwrap();
    for round in 0..10 {
        let out: PathBuf = tmp.path().join(format!("r{round}/a/b/csv"));
        let children: Vec<Child> = (0..8)
            .map(|_| report_csv_child("cpu_only.json", &out, &[]))
            .collect();
        for c in children {
            finish(c, 120).assert_ok();
        }
        assert_eq!(
            entries(&out),
            [
                "findings.csv",
                "health.csv",
                "short_kernel_histogram.csv",
                "short_kernels_summary.csv"
            ]
        );
    }
}
