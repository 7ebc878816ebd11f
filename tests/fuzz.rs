//! Mutation fuzzing of everything that reads input: the trace loaders
//! (Kineto JSON, gzip, zip, XPlane, rocprofv3 JSON and Perfetto) followed by the whole
//! report, the report readers `compare` uses (CSV folders, xlsx) followed by
//! the gate, the tree diff, and the multi-rank collective analysis (one
//! rank of a two-rank job mutated), and the replay scripts of every
//! mutated trace that has replayable ops (under odd trace names, compiled
//! with Python's `compile()`, a batch per `python3`). Seeds are the
//! hand-written traces of `testdata/` and reports written from them; each
//! round mutates one seed
//! (bit flips, byte runs, cuts, splices, JSON tokens, odd characters in
//! op and kernel names, recompression) and
//! runs it in process. A panic is a failure: the mutant is saved under
//! `$TRACELENS_FUZZ_OUT` (default the system temp folder) with its seed and
//! round, so it can become a regression test.
//!
//! Normal test runs fuzz for a few seconds with a fixed seed (same inputs
//! every time). `bench/fuzz.sh SECONDS` runs it for longer, under an
//! address-space limit, with a fresh seed:
//! `TRACELENS_FUZZ_SECONDS` (default 3) and `TRACELENS_FUZZ_SEED`.

mod common;
#[path = "common/hostile_zip.rs"]
mod hostile_zip;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tracelens::report::{Document, Writer};

/// A small deterministic generator (xorshift64*), so a seed replays a run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Text that tends to hit the parsers' corners.
const TOKENS: &[&[u8]] = &[
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b":",
    b"\"",
    b"\\",
    b"null",
    b"true",
    b"-1",
    b"0",
    b"1e400",
    b"-1e400",
    b"NaN",
    b"Infinity",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"1.5e-320",
    b"\"ts\"",
    b"\"dur\"",
    b"\"cat\"",
    b"\"kernel\"",
    b"\"cpu_op\"",
    b"\"cuda_runtime\"",
    b"\"ph\"",
    b"\"X\"",
    b"\"s\"",
    b"\"f\"",
    b"\"args\"",
    b"\"correlation\"",
    b"\"pid\"",
    b"\"Input Dims\"",
    b"[[1,2],[3]]",
    b"\"\\ud800\"",
    b"\xff\xfe",
    b"\x00",
    b"\"traceEvents\"",
    b"inf",
    b"nan",
    b"\n",
    b"\"\"",
    b"[]",
    b"{}",
];

/// Odd text for names, as it is written inside a JSON string: quotes,
/// backslashes, line breaks, markup and Python string syntax.
const ODD_NAME_PARTS: &[&str] = &[
    r#"\"\"\""#,
    "'''",
    r#"\""#,
    "'",
    r"\\",
    r"\\N",
    r"\n",
    r"\r",
    "<",
    ">",
    "|",
    "`",
    "``",
    "#",
    "&",
    "[x](y)",
    r"\u2028",
    r"\u0000",
    r"\uffff",
    "_x0041_",
    "*",
    r"\t",
];

/// Odd trace file names (the name reaches every replay script).
const ODD_FILE_NAMES: &[&str] = &[
    "t.json",
    "t\"\"\";open('PWNED','w');\"\"\"x.json",
    "t\\N.json",
    "t.json\\",
    "a\nb.json",
    "it's \"q\" # <|`>.json",
    "\r\u{2028}\u{0}.json",
];

/// `data` with odd characters put inside one of its `"name"` strings (an
/// op or kernel name), when it has one.
fn odd_name(rng: &mut Rng, data: &mut Vec<u8>) {
    const KEY: &[u8] = b"\"name\": \"";
    let starts: Vec<usize> = data
        .windows(KEY.len())
        .enumerate()
        .filter(|(_, w)| *w == KEY)
        .map(|(i, _)| i + KEY.len())
        .collect();
    if starts.is_empty() {
        return;
    }
    let start = starts[rng.below(starts.len())];
    // Inside the name, at most its length in: never past its closing quote.
    let len = data[start..].iter().position(|&b| b == b'"').unwrap_or(0);
    let at = start + rng.below(len + 1);
    let part = ODD_NAME_PARTS[rng.below(ODD_NAME_PARTS.len())];
    data.splice(at..at, part.bytes());
}

/// One mutation of `data`.
fn mutate(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let n = out.len();
        match rng.below(9) {
            8 => odd_name(rng, &mut out),
            0 if n > 0 => {
                let i = rng.below(n);
                out[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => {
                let i = rng.below(n);
                out[i] = rng.next() as u8;
            }
            2 => out.truncate(rng.below(n + 1)),
            3 if n > 1 => {
                // Delete a run.
                let i = rng.below(n);
                let len = 1 + rng.below((n - i).min(64));
                out.drain(i..i + len);
            }
            4 if n > 1 => {
                // Duplicate a run somewhere else.
                let i = rng.below(n);
                let len = 1 + rng.below((n - i).min(256));
                let run = out[i..i + len].to_vec();
                let at = rng.below(out.len() + 1);
                out.splice(at..at, run);
            }
            5 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                let at = rng.below(n + 1);
                out.splice(at..at, t.iter().copied());
            }
            6 if n > 0 => {
                // Replace a token-sized run by a token.
                let t = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(n);
                let len = rng.below((n - i).min(8) + 1);
                out.splice(i..i + len, t.iter().copied());
            }
            _ => {
                let at = rng.below(n + 1);
                let len = rng.below(16);
                let junk: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                out.splice(at..at, junk);
            }
        }
    }
    out
}

/// The seed inputs, by kind.
struct Seeds {
    traces: Vec<(String, Vec<u8>)>,
    csv_reports: Vec<Vec<(String, Vec<u8>)>>,
    xlsx: Vec<Vec<u8>>,
}

fn seeds() -> Seeds {
    let mut traces = Vec::new();
    for rel in [
        "example.json",
        "graph_flows.json",
        "no_flows.json",
        "layout_ops.json",
        "pseudo_moe.json",
        "diff/split_base.json",
        "rocprof/small.json",
        "xplane/small.xplane.pb",
        "pftrace/rocm70.pftrace",
        "pftrace/rocpd_convert.pftrace",
        "pftrace/clocks.pftrace",
        "pftrace/interning_reset.pftrace",
    ] {
        let bytes = std::fs::read(common::testdata(rel)).unwrap();
        traces.push((rel.replace('/', "_"), bytes));
    }
    // Compressed forms: mutations then hit the gzip and zip front ends.
    let example = std::fs::read(common::testdata("example.json")).unwrap();
    traces.push(("example.json.gz".into(), common::gzip(&example)));
    traces.push((
        "example.zip".into(),
        common::zip_of(&[("trace.json", example.as_slice())]),
    ));
    let report =
        tracelens::analyze(&common::testdata("example.json"), &Default::default()).unwrap();
    let csv_reports = vec![
        report
            .sheets
            .iter()
            .map(|t| {
                (
                    format!("{}.csv", t.name),
                    tracelens::report::csv::table_to_csv(t).into_bytes(),
                )
            })
            .collect(),
    ];
    let xlsx = tracelens::report::xlsx::Xlsx {
        path: "fuzz.xlsx".into(),
    }
    .render(&Document::of_tables(&report.sheets))
    .unwrap()
    .into_iter()
    .map(|f| f.bytes)
    .collect();
    Seeds {
        traces,
        csv_reports,
        xlsx,
    }
}

/// Loads and reports a mutated trace; diffs it against its seed.
fn run_trace(path: &Path, seed_path: &Path) {
    if let Ok(report) = tracelens::analyze(path, &Default::default()) {
        for t in &report.sheets {
            let _ = tracelens::report::csv::table_to_csv(t);
        }
    }
    let _ = tracelens::diff_traces(seed_path, path, Default::default());
}

/// The replay scripts of the trace at `path` as `tracelens replay` would
/// write them for a trace named `name`: one per replayable op among the
/// top ten, and the batched runner.
fn replay_scripts(path: &Path, name: &str) -> Vec<String> {
    use tracelens::report::replay::{Traced, batched_script, entry_json, op_script};
    let Ok(plan) = tracelens::replay_plan(path, &tracelens::ReplaySelection::Top(10)) else {
        return Vec::new();
    };
    let command = format!("tracelens replay {name} --top 10");
    let mut scripts = vec![batched_script("cpu", &command)];
    for op in &plan.ops {
        let Ok(replay) = &op.replay else { continue };
        let traced = Traced {
            uid: op.uid,
            kernel_us: op.traced_us,
            count: op.count,
            kernels: &op.kernels,
            trace: name,
        };
        scripts.push(op_script(&entry_json(replay, &traced), "cuda", &command));
    }
    scripts
}

/// A script with the round and the input (name, bytes) it came from.
type Script = (u64, String, Vec<u8>, String);

/// The replay scripts of the fuzzed traces: kept until [`SCRIPT_BATCH`]
/// wait, then compiled by one `python3`; those that fail are kept too.
#[derive(Default)]
struct ScriptCheck {
    pending: Vec<Script>,
    failed: Vec<Script>,
    made: usize,
}

/// Scripts compiled by one `python3` process.
const SCRIPT_BATCH: usize = 200;

impl ScriptCheck {
    /// Writes the replay scripts of the trace at `path` (the mutant
    /// `input` of round `round`, seed file `name`) under an odd trace
    /// name; compiles a batch when enough wait (in `dir`). False when
    /// writing them panicked.
    fn replay(
        &mut self,
        rng: &mut Rng,
        dir: &Path,
        path: &Path,
        input: (&str, &[u8]),
        round: u64,
    ) -> bool {
        let odd = ODD_FILE_NAMES[rng.below(ODD_FILE_NAMES.len())];
        let Ok(list) = catch_unwind(AssertUnwindSafe(|| replay_scripts(path, odd))) else {
            return false;
        };
        self.made += list.len();
        let (name, bytes) = input;
        let made = list
            .into_iter()
            .map(|t| (round, name.to_string(), bytes.to_vec(), t));
        self.pending.extend(made);
        if self.pending.len() >= SCRIPT_BATCH {
            self.compile(dir);
        }
        true
    }

    /// Compiles every waiting script in one `python3` process (`compile()`,
    /// nothing runs) and keeps those that fail with their error. With no
    /// `python3` at build time, nothing is compiled.
    fn compile(&mut self, dir: &Path) {
        let batch = std::mem::take(&mut self.pending);
        if cfg!(no_python3) || batch.is_empty() {
            return;
        }
        let files: Vec<PathBuf> = batch
            .iter()
            .enumerate()
            .map(|(i, (_, _, _, text))| {
                let f = dir.join(format!("script{i}.py"));
                write(&f, text.as_bytes());
                f
            })
            .collect();
        const CHECK: &str = "import sys\n\
            for i, f in enumerate(sys.argv[1:]):\n\
            \x20   try:\n\
            \x20       compile(open(f, encoding='utf-8').read(), f, 'exec')\n\
            \x20   except Exception as e:\n\
            \x20       print(i, repr(e).replace(chr(10), ' '))\n";
        let mut args: Vec<OsString> = vec!["-c".into(), CHECK.into()];
        args.extend(files.iter().map(|f| f.as_os_str().to_owned()));
        for line in common::python3(&args).lines() {
            let (i, why) = line.split_once(' ').unwrap_or((line, ""));
            if let Some((round, name, input, _)) =
                i.parse::<usize>().ok().and_then(|i| batch.get(i))
            {
                self.failed
                    .push((*round, name.clone(), input.clone(), why.to_string()));
            }
        }
        for f in files {
            let _ = std::fs::remove_file(f);
        }
    }

    /// Compiles what still waits and saves one crasher per round with a
    /// script that does not compile; returns where.
    fn finish(&mut self, dir: &Path, seed: u64) -> Vec<PathBuf> {
        self.compile(dir);
        self.failed.dedup_by_key(|b| b.0);
        self.failed
            .iter()
            .map(|(round, name, input, why)| {
                eprintln!("fuzz: round {round}: a replay script does not compile: {why}");
                save("script", seed, *round, &[(name.clone(), input.clone())])
            })
            .collect()
    }
}

/// Runs the multi-rank collective analysis of the job in `dir`.
fn run_ranks(dir: &Path) {
    let opts = tracelens::CollectivesOptions {
        trace_dir: dir.to_path_buf(),
        world_size: Some(2),
        ..Default::default()
    };
    let _ = tracelens::collectives(&opts, None);
}

/// Reads a mutated report and gates it against the clean one.
fn run_report(dir: &Path, clean: &Path) {
    let paths = [clean.to_path_buf(), dir.to_path_buf()];
    if let Ok(inputs) = tracelens::load_compare_inputs(&paths, &["a".into(), "b".into()]) {
        let opts = tracelens::analysis::commands::compare::GateOptions {
            fail_above_pct: Some(5.0),
            ..Default::default()
        };
        let _ = tracelens::analysis::commands::compare::gate(&inputs.inputs, &opts);
    }
}

/// XML that makes a workbook part costly to read: declared counts, long
/// runs, shared-string references, far cells.
const XLSX_TOKENS: &[&str] = &[
    r#" uniqueCount="100000000000000""#,
    r#"<c t="s"><v>0</v></c>"#,
    r#"<c t="s"><v>99999999</v></c>"#,
    r#"<c r="XFD1048576"><v>1</v></c>"#,
    r#"<c t="inlineStr"><is><t>"#,
    "</t></is></c>",
    "<si><t>",
    "</t></si>",
    "<row>",
    "</row>",
    r#"<dimension ref="A1:XFD1048576"/>"#,
];

/// The workbook `book` with one part (unzipped) mutated: bytes, an XML
/// token repeated up to 10,000 times, and a declared size that may be a
/// lie; re-zipped by hand.
fn mutate_workbook_part(rng: &mut Rng, book: &[u8]) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(book)).unwrap();
    let mut parts = Vec::new();
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        let name = f.name().map(|n| n.into_owned()).unwrap_or_default();
        parts.push((name, bytes));
    }
    let k = rng.below(parts.len());
    let mut bytes = mutate(rng, &parts[k].1);
    let token = XLSX_TOKENS[rng.below(XLSX_TOKENS.len())];
    let at = rng.below(bytes.len() + 1);
    let times = 1 + rng.below(10_000);
    bytes.splice(at..at, token.repeat(times).into_bytes());
    parts[k].1 = bytes;
    let members: Vec<hostile_zip::Member> = parts
        .iter()
        .enumerate()
        .map(|(i, (name, bytes))| {
            let m = hostile_zip::Member::new(name, bytes);
            match (i == k, rng.below(4)) {
                (true, 0) => m.declaring(rng.next() % (bytes.len() as u64 * 2 + 1)),
                _ => m,
            }
        })
        .collect();
    hostile_zip::zip(&members)
}

fn write(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(bytes).unwrap();
}

/// Saves a crasher and returns where.
fn save(kind: &str, seed: u64, round: u64, files: &[(String, Vec<u8>)]) -> PathBuf {
    let root = std::env::var_os("TRACELENS_FUZZ_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("tracelens-crash-{kind}-{seed}-{round}"));
    std::fs::create_dir_all(&root).unwrap();
    for (name, bytes) in files {
        write(&root.join(name), bytes);
    }
    root
}

#[test]
fn mutated_inputs_never_panic() {
    let secs: u64 = std::env::var("TRACELENS_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let seed: u64 = std::env::var("TRACELENS_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001);
    let seeds = seeds();
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    std::fs::create_dir(&clean).unwrap();
    for (name, bytes) in &seeds.csv_reports[0] {
        write(&clean.join(name), bytes);
    }
    let seed_files: Vec<PathBuf> = seeds
        .traces
        .iter()
        .map(|(name, bytes)| {
            let p = tmp.path().join(format!("seed_{name}"));
            write(&p, bytes);
            p
        })
        .collect();
    // Panics are caught and reported as failures; keep their messages quiet.
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(seed | 1);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let ranks = tmp.path().join("ranks");
    std::fs::create_dir(&ranks).unwrap();
    let rank_seed = std::fs::read(common::testdata("example.json")).unwrap();
    write(&ranks.join("rank0.json"), &rank_seed);
    let (mut rounds, mut crashes) = (0u64, Vec::new());
    let mut scripts = ScriptCheck::default();
    // Inputs per target: traces, CSV reports, xlsx reports, rank sets.
    let mut per_target = [0u64; 4];
    while Instant::now() < deadline {
        rounds += 1;
        let pick = rng.below(20);
        per_target[match pick {
            0..=13 => 0,
            14..=16 => 1,
            17..=18 => 2,
            _ => 3,
        }] += 1;
        match pick {
            // Traces most of the time: they have the most code behind them.
            0..=13 => {
                let k = rng.below(seeds.traces.len());
                let (name, bytes) = &seeds.traces[k];
                let m = mutate(&mut rng, bytes);
                let p = tmp.path().join(name);
                write(&p, &m);
                if catch_unwind(AssertUnwindSafe(|| run_trace(&p, &seed_files[k]))).is_err() {
                    crashes.push(save("trace", seed, rounds, &[(name.clone(), m.clone())]));
                }
                // The replay scripts of the mutant, under an odd file name.
                if !scripts.replay(&mut rng, tmp.path(), &p, (name, &m), rounds) {
                    crashes.push(save("replay", seed, rounds, &[(name.clone(), m)]));
                }
            }
            14..=16 => {
                let sheets = &seeds.csv_reports[0];
                let dir = tmp.path().join(format!("csv{rounds}"));
                std::fs::create_dir(&dir).unwrap();
                let k = rng.below(sheets.len());
                let mut files = sheets.clone();
                files[k].1 = mutate(&mut rng, &files[k].1);
                for (name, bytes) in &files {
                    write(&dir.join(name), bytes);
                }
                if catch_unwind(AssertUnwindSafe(|| run_report(&dir, &clean))).is_err() {
                    crashes.push(save("csv", seed, rounds, &files));
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
            17..=18 => {
                // Half the time the workbook's structure: one part's XML
                // mutated, its declared size a lie or not, re-zipped.
                let m = if rng.below(2) == 0 {
                    mutate(&mut rng, &seeds.xlsx[0])
                } else {
                    mutate_workbook_part(&mut rng, &seeds.xlsx[0])
                };
                let p = tmp.path().join("r.xlsx");
                write(&p, &m);
                if catch_unwind(AssertUnwindSafe(|| run_report(&p, &clean))).is_err() {
                    crashes.push(save("xlsx", seed, rounds, &[("r.xlsx".into(), m)]));
                }
            }
            _ => {
                let m = mutate(&mut rng, &rank_seed);
                write(&ranks.join("rank1.json"), &m);
                if catch_unwind(AssertUnwindSafe(|| run_ranks(&ranks))).is_err() {
                    let files = [
                        ("rank0.json".into(), rank_seed.clone()),
                        ("rank1.json".into(), m),
                    ];
                    crashes.push(save("ranks", seed, rounds, &files));
                }
            }
        }
    }
    let _ = std::panic::take_hook();
    crashes.extend(scripts.finish(tmp.path(), seed));
    let [t, c, x, r] = per_target;
    eprintln!(
        "fuzz: {rounds} inputs in {secs} s (seed {seed}): {t} traces, {c} CSV reports, \
         {x} xlsx reports, {r} rank sets; {} replay scripts; {} crashes",
        scripts.made,
        crashes.len()
    );
    assert!(
        crashes.is_empty(),
        "{} of {rounds} mutated inputs panicked (seed {seed}); saved: {crashes:?}",
        crashes.len()
    );
}

/// Every Perfetto fixture cut at many lengths and with bytes flipped at
/// many offsets: loading never panics, and a refusal is one line.
#[test]
fn pftrace_cuts_and_flips_never_panic() {
    let dir = common::testdata("pftrace");
    let tmp = tempfile::tempdir().unwrap();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pftrace"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let (mut inputs, mut refused, mut crashes) = (0, 0, Vec::new());
    for path in &names {
        let bytes = std::fs::read(path).unwrap();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let mutants = cuts_and_flips(&bytes, 37, 53);
        for (what, m) in mutants {
            inputs += 1;
            let p = tmp.path().join(format!("{stem}.pftrace"));
            write(&p, &m);
            match catch_unwind(AssertUnwindSafe(|| {
                tracelens::analyze(&p, &Default::default()).map(|r| r.sheets.len())
            })) {
                Err(_) => crashes.push(format!("{stem} {what}: panicked")),
                Ok(Err(e)) => {
                    refused += 1;
                    let msg = e.to_string();
                    if msg.contains('\n') || msg.trim().is_empty() {
                        crashes.push(format!("{stem} {what}: error not one line: {msg:?}"));
                    }
                }
                Ok(Ok(_)) => {}
            }
        }
    }
    eprintln!("pftrace mutants: {inputs} inputs, {refused} refused");
    assert!(crashes.is_empty(), "{crashes:#?}");
}

/// Mutants of `bytes`, each named: cut after every `cut_step`-th byte,
/// and with the low, high or all bits of every `flip_step`-th byte flipped.
fn cuts_and_flips(bytes: &[u8], cut_step: usize, flip_step: usize) -> Vec<(String, Vec<u8>)> {
    let mut mutants: Vec<(String, Vec<u8>)> = Vec::new();
    for cut in (1..bytes.len()).step_by(cut_step) {
        mutants.push((format!("cut{cut}"), bytes[..cut].to_vec()));
    }
    for at in (0..bytes.len()).step_by(flip_step) {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut m = bytes.to_vec();
            m[at] ^= mask;
            mutants.push((format!("flip{at}x{mask:02x}"), m));
        }
    }
    mutants
}

/// A Genesis capture folder whose kernel-trace CSV is cut short and has
/// bytes flipped: `tracelens::genesis` answers with sheets or a one-line
/// error, never a panic.
#[test]
fn genesis_kernel_csv_cuts_and_flips_never_panic() {
    let bytes = std::fs::read(common::testdata("genesis/kernel_kernel_trace.csv")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let kt = tmp.path().join("kernel_trace");
    std::fs::create_dir(&kt).unwrap();
    std::fs::copy(
        common::testdata("pftrace/corpus_fixture.pftrace"),
        kt.join("kernel_results.pftrace"),
    )
    .unwrap();
    let mutants = cuts_and_flips(&bytes, 41, 59);
    let (mut refused, mut crashes) = (0, Vec::new());
    let inputs = mutants.len();
    for (what, m) in mutants {
        write(&kt.join("kernel_kernel_trace.csv"), &m);
        let opts = tracelens::GenesisOptions::default();
        match catch_unwind(AssertUnwindSafe(|| {
            tracelens::genesis(tmp.path(), &opts, None)
        })) {
            Err(_) => crashes.push(format!("{what}: panicked")),
            Ok(Err(e)) => {
                refused += 1;
                let msg = e.to_string();
                if msg.contains('\n') || msg.trim().is_empty() {
                    crashes.push(format!("{what}: error not one line: {msg:?}"));
                }
            }
            Ok(Ok(run)) => {
                // The page renders from whatever was read.
                let _ = tracelens::report::genesis_summary::summary_markdown(&run.page_inputs());
            }
        }
    }
    eprintln!("genesis CSV mutants: {inputs} inputs, {refused} refused");
    assert!(refused > 0, "no mutant was refused: the test reads nothing");
    assert!(crashes.is_empty(), "{crashes:#?}");
}
