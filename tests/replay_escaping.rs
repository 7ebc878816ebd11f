//! `tracelens replay` on traces with hostile names: every text from the
//! trace (its file name, kernel names, op names) reaches the scripts only
//! inside Python literals. Each script must parse, run its module-level
//! code (with a stand-in `torch`) without doing anything else, and give
//! back the names exactly.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run, testdata, tracelens};
use serde_json::Value as Json;

/// File names that broke out of the docstring, failed to parse or changed
/// the text shown.
fn hostile_names() -> Vec<OsString> {
    let mut names: Vec<OsString> = [
        "t\"\"\";open(\"PWNED\",\"w\");\"\"\"x.json",
        "t''';open('PWNED','w');'''x.json",
        "t\\N.json",
        "t.json\\",
        "a\nb\"\"\"\nopen('PWNED','w')\n#.json",
        "a\rb.json",
        "it's.json",
        "say \"hi\".json",
        "# c.json",
        "x\u{2028}y\u{85}z\u{feff}.json",
        "t\t\u{1}\u{7f}.json",
        "\"",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        names.push(OsString::from_vec(b"t\xff\xfe\"\"\"x.json".to_vec()));
    }
    names
}

/// Kernel names put into the trace: they reach every script's op entry.
const HOSTILE_KERNELS: [&str; 2] = [
    "gemm\"\"\"; open('PWNED', 'w'); '''\\N{x}\n<|`",
    "relu'''\r\n# \\ \u{0}\u{2028}",
];

/// An op name that would end a docstring and run code.
const HOSTILE_OP: &str = "aten::copy_\"\"\"\nopen('PWNED','w')#";

/// `testdata/example.json` with its addmm and relu kernels renamed to
/// [`HOSTILE_KERNELS`] and its copy renamed to [`HOSTILE_OP`].
fn hostile_trace() -> Vec<u8> {
    let text = std::fs::read_to_string(testdata("example.json")).unwrap();
    let mut doc: Json = serde_json::from_str(&text).unwrap();
    let events = doc["traceEvents"].as_array_mut().unwrap();
    for e in events.iter_mut() {
        let name = e["name"].as_str().unwrap_or("").to_string();
        if name.starts_with("void gemm_bf16_kernel") {
            e["name"] = Json::from(HOSTILE_KERNELS[0]);
        } else if name.contains("relu_functor") {
            e["name"] = Json::from(HOSTILE_KERNELS[1]);
        }
    }
    // The copy keeps its memcpy, so it is among the ops chosen.
    for e in events.iter_mut().filter(|e| e["name"] == "aten::copy_") {
        e["name"] = Json::from(HOSTILE_OP);
    }
    serde_json::to_vec(&doc).unwrap()
}

/// The checker run once per folder: every `*.py` is parsed, then executed
/// as a module (not `__main__`) with an empty `torch`; it prints, per
/// script, its docstring and the trace and kernels of its op entry (or
/// of `replay_ops.json`), and fails if a file `PWNED` appeared.
const CHECK: &str = r#"
import ast, json, os, sys, types
sys.modules["torch"] = types.ModuleType("torch")
folder = sys.argv[1]
out = {}
for f in sorted(os.listdir(folder)):
    path = os.path.join(folder, f)
    if not f.endswith(".py"):
        continue
    src = open(path, encoding="utf-8").read()
    tree = ast.parse(src, path)
    scope = {"__name__": "replay_check", "__file__": path}
    exec(compile(tree, path, "exec"), scope)
    entries = [scope["OP"]] if "OP" in scope else json.load(
        open(os.path.join(folder, "replay_ops.json"), encoding="utf-8"))
    out[f] = {"doc": ast.get_docstring(tree, clean=False),
              "traces": [e["trace"] for e in entries],
              "kernels": [e["kernels"] for e in entries]}
assert not os.path.exists("PWNED"), "a script ran code from the trace"
print(json.dumps(out))
"#;

/// Runs the checker on `folder` in a fresh working folder; returns its
/// report (script name to docstring, traces, kernels).
fn check_scripts(folder: &Path) -> serde_json::Map<String, Json> {
    let cwd = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .args(["-c", CHECK])
        .arg(folder)
        .current_dir(cwd.path())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}: {}",
        folder.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!cwd.path().join("PWNED").exists());
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    report.as_object().unwrap().clone()
}

/// Replays `trace` into a new folder under `tmp` (`extra`: more flags).
fn replay_into(trace: &Path, out: &Path, extra: &[&str]) {
    run(tracelens()
        .arg("replay")
        .arg(trace)
        .args(extra)
        .arg("--out")
        .arg(out)
        .arg("--quiet"))
    .assert_ok();
}

/// Checks one folder of scripts written for a trace named `name`: each
/// docstring names the trace, each entry's trace is the name (its lossy
/// text) and, for the hostile trace, the kernels are the hostile names.
fn assert_scripts(folder: &Path, name: &str, kernels: bool) {
    let report = check_scripts(folder);
    assert!(!report.is_empty(), "no scripts in {}", folder.display());
    let mut seen: Vec<String> = Vec::new();
    for (file, r) in &report {
        let doc = r["doc"].as_str().unwrap_or("");
        assert!(doc.contains(name), "{file}: {name:?} not in {doc:?}");
        for t in r["traces"].as_array().unwrap() {
            assert_eq!(t.as_str(), Some(name), "{file}");
        }
        for list in r["kernels"].as_array().unwrap() {
            let names = list.as_array().unwrap().iter().filter_map(Json::as_str);
            seen.extend(names.map(str::to_string));
        }
    }
    if kernels {
        for k in HOSTILE_KERNELS {
            assert!(seen.iter().any(|s| s == k), "{k:?} not in {seen:?}");
        }
    }
}

#[test]
#[cfg_attr(no_python3, ignore = "needs python3")]
fn hostile_trace_names_stay_inside_literals() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = std::fs::read(testdata("example.json")).unwrap();
    let hostile = hostile_trace();
    for (i, name) in hostile_names().into_iter().enumerate() {
        let dir = tmp.path().join(format!("case{i}"));
        std::fs::create_dir(&dir).unwrap();
        let lossy = name.to_string_lossy().into_owned();
        for (j, (bytes, kernels)) in [(&plain, false), (&hostile, true)].iter().enumerate() {
            let trace: PathBuf = dir.join(&name);
            std::fs::write(&trace, bytes).unwrap();
            for (k, flags) in [&["--top", "10"][..], &["--batched"][..]]
                .iter()
                .enumerate()
            {
                let out = dir.join(format!("out{j}{k}"));
                replay_into(&trace, &out, flags);
                assert_scripts(&out, &lossy, *kernels);
            }
        }
        assert!(!dir.join("PWNED").exists(), "{lossy:?}");
    }
}

#[test]
#[cfg_attr(no_python3, ignore = "needs python3")]
fn hostile_op_names_are_not_replayed_and_scripts_parse() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.json");
    std::fs::write(&trace, hostile_trace()).unwrap();
    let out = tmp.path().join("out");
    let r = run(tracelens()
        .arg("replay")
        .arg(&trace)
        .args(["--top", "20", "--out"])
        .arg(&out));
    r.assert_ok();
    assert!(
        r.stdout
            .contains("not replayable: no ATen operator aten::copy_\"\"\""),
        "{}",
        r.stdout
    );
    assert_scripts(&out, "t.json", true);
}

/// Texts whose literal is hard to get right: every character below
/// U+0100, quotes of both kinds, backslash sequences Python reads as
/// escapes, line and paragraph separators, non-characters, non-BMP.
fn hard_texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        "",
        "'",
        "\"",
        "'\"",
        "\"\"\"",
        "'''",
        "\\",
        "a\\",
        "\\N{BULLET}",
        "\\x4",
        "\\u12",
        "a\nb",
        "a\r\nb",
        "\u{2028}\u{2029}\u{85}\u{b}\u{c}",
        "\u{fffe}\u{ffff}\u{feff}",
        "\u{1f600}\u{10ffff}\u{e0001}",
        "t\"\"\";open(\"PWNED\",\"w\");\"\"\"x.json",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    texts.push((0u32..0x100).filter_map(char::from_u32).collect());
    texts
}

#[test]
#[cfg_attr(no_python3, ignore = "needs python3")]
fn literals_round_trip_through_python() {
    use tracelens::pyfmt::{Block, block_literal, str_repr};
    let texts = hard_texts();
    let mut src = String::from("import json, sys\nvalues = [\n");
    for t in &texts {
        for lit in [
            str_repr(t),
            block_literal(t, Block::Doc),
            block_literal(t, Block::Raw),
        ] {
            src.push_str(&format!("    {lit},\n"));
        }
    }
    src.push_str("]\nsys.stdout.write(json.dumps(values))\n");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("literals.py");
    std::fs::write(&file, &src).unwrap();
    let out = Command::new("python3").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    let expected: Vec<&String> = texts.iter().flat_map(|t| [t, t, t]).collect();
    assert_eq!(back.len(), expected.len());
    for (b, e) in back.iter().zip(expected) {
        assert_eq!(b, e);
    }
}
