//! Names from a trace or a user that carry markup: in Markdown (`report
//! --md`, `compare --md`, `diff --md`, `fleet.md`) every such name is
//! shown as text, inside a code span, and a pipe never adds a table
//! column; every SVG is well-formed XML 1.0 whatever the op, kernel or GPU
//! names; every workbook part is well-formed XML and its cells read back.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use common::{run, testdata, tracelens};
use serde_json::{Value as Json, json};

/// Op names that are Markdown or HTML.
const OPS: [&str; 9] = [
    "<img src=x onerror=alert(1)>",
    "[x](https://e.com)",
    "a|b",
    "a`b",
    "``",
    "*bold*",
    "<float>",
    "x\ny",
    "_a_ &amp; \\*",
];

/// Kernel names that are Markdown or HTML, one per op.
const KERNELS: [&str; 9] = [
    "void k<float>(int)",
    "k|`x`|",
    "<script>alert(1)</script>",
    "[k](https://e.com)",
    "![i](x.png)",
    "**k**",
    "k\r\nl",
    "~~k~~",
    "k&lt;1&gt;",
];

/// Text that must never reach Markdown outside a code span.
const MARKUP: [&str; 9] = [
    "<img", "<float>", "<script>", "](", "*bold*", "**k**", "~~k~~", "&amp;", "&lt;",
];

/// A trace of one op per name, each launching its kernel; op `i` runs
/// longer than op `i + 1`, so every one is among the top rows.
fn trace(ops: &[&str], kernels: &[&str]) -> Vec<u8> {
    let mut events = vec![
        json!({"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3"}}),
        json!({"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}),
    ];
    for (i, (op, kernel)) in ops.iter().zip(kernels).enumerate() {
        let ts = 1000.0 + 100.0 * i as f64;
        let corr = 100 + i;
        events.push(
            json!({"ph": "X", "cat": "cpu_op", "name": op, "ts": ts, "dur": 50.0,
            "pid": 100, "tid": 100, "args": {"External id": i + 1, "Input Dims": [[4, 32]],
            "Input type": ["float"], "Input Strides": [[32, 1]], "Concrete Inputs": [""]}}),
        );
        events.push(
            json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
            "ts": ts + 5.0, "dur": 5.0, "pid": 100, "tid": 100,
            "args": {"correlation": corr, "cbid": 211}}),
        );
        events.push(
            json!({"ph": "X", "cat": "kernel", "name": kernel, "ts": ts + 20.0,
            "dur": 40.0 - i as f64, "pid": 0, "tid": 7,
            "args": {"External id": i + 1, "device": 0, "stream": 7, "correlation": corr}}),
        );
    }
    serde_json::to_vec(&json!({"traceEvents": events})).unwrap()
}

/// `s` without its CommonMark code spans (a backtick run up to the next
/// run of the same length) and backslash-escaped punctuation (literal
/// text both); an unclosed run stays as text.
fn outside_code(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let run_at = |i: usize| b[i..].iter().take_while(|&&c| c == '`').count();
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        if b[i] == '\\' && b.get(i + 1).is_some_and(char::is_ascii_punctuation) {
            i += 2;
            continue;
        }
        if b[i] != '`' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let close = loop {
            if j >= b.len() {
                break None;
            }
            if b[j] == '`' {
                let m = run_at(j);
                if m == n {
                    break Some(j + m);
                }
                j += m;
            } else {
                j += 1;
            }
        };
        match close {
            Some(end) => i = end,
            None => {
                out.extend(&b[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// The cells of a table row, split at pipes not escaped by a backslash.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = vec![String::new()];
    let mut prev = ' ';
    for c in inner.chars() {
        if c == '|' && prev != '\\' {
            out.push(String::new());
        } else {
            out.last_mut().unwrap().push(c);
        }
        prev = c;
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// What a table cell shows: a code span at its start by its text (one
/// padding space off each side when both are there, `\|` as `|`), then
/// the rest of the cell as it is.
fn shown(cell: &str) -> String {
    let n = cell.chars().take_while(|&c| c == '`').count();
    if n == 0 {
        return cell.to_string();
    }
    let fence = "`".repeat(n);
    let body = &cell[n..];
    let end = body
        .match_indices(&fence)
        .map(|(i, _)| i)
        .find(|&i| !body[i + n..].starts_with('`') && (i == 0 || !body[..i].ends_with('`')))
        .unwrap_or_else(|| panic!("unclosed code span: {cell}"));
    let inner = &body[..end];
    let inner = match inner.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
        Some(i) if inner.chars().any(|c| c != ' ') => i,
        _ => inner,
    };
    format!("{}{}", inner.replace("\\|", "|"), &body[end + n..])
}

/// Every table of `md` (runs of lines starting with `|`): each row has as
/// many cells as its header. Returns the tables' rows as shown cells.
fn tables(md: &str) -> Vec<Vec<Vec<String>>> {
    let mut all = Vec::new();
    let mut cur: Vec<Vec<String>> = Vec::new();
    for line in md.lines().chain([""]) {
        if line.starts_with('|') {
            cur.push(cells(line).iter().map(|c| shown(c)).collect());
        } else if !cur.is_empty() {
            let width = cur[0].len();
            for r in &cur {
                assert_eq!(r.len(), width, "row {r:?} of a table {width} wide:\n{md}");
            }
            all.push(std::mem::take(&mut cur));
        }
    }
    all
}

/// Fails if any hostile markup is in `md` outside a code span.
fn assert_markup_in_code(md: &str) {
    let rest = outside_code(md);
    for m in MARKUP {
        assert!(!rest.contains(m), "{m:?} outside a code span:\n{md}");
    }
}

/// The names as a one-line Markdown cell shows them.
fn one_line(s: &str) -> String {
    s.replace("\r\n", " ").replace(['\n', '\r'], " ")
}

/// Writes the hostile trace as `dir/name`.
fn write_trace(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, trace(&OPS, &KERNELS)).unwrap();
    p
}

#[test]
fn report_markdown_shows_names_as_code() {
    let tmp = tempfile::tempdir().unwrap();
    let t = write_trace(tmp.path(), "t<b>|`x`.json");
    let md = tmp.path().join("r.md");
    run(tracelens()
        .arg("report")
        .arg(&t)
        .arg("--md")
        .arg(&md)
        .arg("-q"))
    .assert_ok();
    let text = std::fs::read_to_string(&md).unwrap();
    assert_markup_in_code(&text);
    assert!(
        text.starts_with("## tracelens report: ``t<b>|`x`.json``\n"),
        "{text}"
    );
    let ops: Vec<String> = tables(&text)
        .into_iter()
        .filter(|t| t[0][0] == "Op")
        .flat_map(|t| t.into_iter().skip(2).map(|r| r[0].clone()))
        .collect();
    for op in OPS {
        assert!(ops.contains(&one_line(op)), "{op:?} not shown in {ops:?}");
    }
}

#[test]
fn compare_and_diff_markdown_show_hostile_tags_as_code() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write_trace(tmp.path(), "base<img src=x>|1.json");
    let b_bytes = trace(&OPS[..6], &KERNELS[..6]);
    let b = tmp.path().join("new[x](y)`*.json");
    std::fs::write(&b, b_bytes).unwrap();
    let md = tmp.path().join("c.md");
    let r = run(tracelens()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--md")
        .arg(&md));
    assert!(r.code.is_some_and(|c| c <= 1), "{r:#?}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert_markup_in_code(&text);
    assert!(!outside_code(&text).contains("<img src=x>"), "{text}");
    let header_tags = tables(&text)
        .iter()
        .any(|t| t[0].iter().any(|h| h.contains("base<img src=x>|1")));
    assert!(header_tags, "{text}");

    let md = tmp.path().join("d.md");
    let out = tmp.path().join("d");
    run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .arg("--md")
        .arg(&md))
    .assert_ok();
    let text = std::fs::read_to_string(&md).unwrap();
    assert_markup_in_code(&text);
    assert!(!outside_code(&text).contains("<img src=x>"), "{text}");
    tables(&text);
}

#[test]
fn fleet_markdown_shows_names_as_code() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = tmp.path().join("traces");
    std::fs::create_dir(&traces).unwrap();
    write_trace(&traces, "r0<img src=x>.json");
    write_trace(&traces, "r1[x](y).json");
    let sums = tmp.path().join("s");
    run(tracelens()
        .arg("summarize")
        .arg(&traces)
        .arg("--out")
        .arg(&sums)
        .arg("-q"))
    .assert_ok();
    let out = tmp.path().join("f");
    run(tracelens()
        .arg("fleet")
        .arg(&sums)
        .arg("--out")
        .arg(&out)
        .arg("-q"))
    .assert_ok();
    let text = std::fs::read_to_string(out.join("fleet.md")).unwrap();
    assert_markup_in_code(&text);
    let shown: Vec<String> = tables(&text)
        .into_iter()
        .filter(|t| t[0][0] == "Op" || t[0][0] == "Kernel")
        .flat_map(|t| t.into_iter().skip(2).map(|r| r[0].clone()))
        .collect();
    for name in OPS.iter().chain(&KERNELS) {
        assert!(shown.contains(&one_line(name)), "{name:?} not in {shown:?}");
    }
}

/// A GPU spec whose name holds characters XML 1.0 forbids and markup.
fn hostile_spec(dir: &Path) -> PathBuf {
    let mut spec: Json = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("gpu_specs/H100.json")).unwrap(),
    )
    .unwrap();
    spec["name"] = Json::from("H\u{ffff}1\u{fffe}0\u{1}0 <&> \"'\u{1b}");
    let p = dir.join("spec.json");
    std::fs::write(&p, serde_json::to_vec(&spec).unwrap()).unwrap();
    p
}

/// `testdata/example.json` with its kernels and one op under names that
/// XML and spreadsheets treat specially.
fn example_with_odd_names() -> Vec<u8> {
    let text = std::fs::read_to_string(testdata("example.json")).unwrap();
    let mut doc: Json = serde_json::from_str(&text).unwrap();
    for e in doc["traceEvents"].as_array_mut().unwrap() {
        match e["cat"].as_str() {
            Some("kernel") => {
                let n = e["name"].as_str().unwrap().to_string();
                e["name"] = Json::from(format!("{n}\u{ffff}\u{1}_x0041_<&>\u{fffe}"));
            }
            Some("cpu_op") if e["name"] == "aten::relu" => {
                e["name"] = Json::from("aten::relu\u{ffff}\u{b}_x005F_x0041_&<>");
            }
            _ => {}
        }
    }
    serde_json::to_vec(&doc).unwrap()
}

/// Python's XML parser on each file: prints nothing and exits 0 when
/// every one is well-formed; `zip` files have each of their XML parts
/// parsed.
const XML_CHECK: &str = r#"
import sys, zipfile, xml.etree.ElementTree as ET
for f in sys.argv[1:]:
    if f.endswith(".xlsx"):
        z = zipfile.ZipFile(f)
        for n in z.namelist():
            if n.endswith(".xml") or n.endswith(".rels"):
                try:
                    ET.fromstring(z.read(n))
                except ET.ParseError as e:
                    sys.exit(f"{f}:{n}: {e}")
    else:
        ET.parse(f)
"#;

fn assert_well_formed(files: &[PathBuf]) {
    assert!(!files.is_empty());
    let mut args: Vec<OsString> = vec!["-c".into(), XML_CHECK.into()];
    args.extend(files.iter().map(|f| f.as_os_str().to_owned()));
    common::python3(&args);
}

#[test]
#[cfg_attr(no_python3, ignore = "needs python3")]
fn svg_and_xlsx_are_well_formed_with_odd_gpu_op_and_kernel_names() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.json");
    std::fs::write(&t, example_with_odd_names()).unwrap();
    let spec = hostile_spec(tmp.path());
    let plots = tmp.path().join("p");
    let xlsx = tmp.path().join("r.xlsx");
    run(tracelens()
        .arg("report")
        .arg(&t)
        .arg("--gpu-arch")
        .arg(&spec)
        .arg("--plots")
        .arg(&plots)
        .arg("-o")
        .arg(&xlsx)
        .arg("-q"))
    .assert_ok();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    files.sort();
    let gemm = std::fs::read_to_string(plots.join("GEMM.svg")).unwrap();
    assert!(gemm.contains("H100 &lt;&amp;&gt; &quot;&apos;"), "{gemm}");
    assert!(!gemm.contains(['\u{ffff}', '\u{fffe}', '\u{1}', '\u{1b}']));
    files.push(xlsx.clone());
    assert_well_formed(&files);
    // The cells read back as the names (calamine undoes the _xHHHH_
    // escapes of characters XML cannot hold, and of a literal _x).
    use calamine::{Data, Reader, Xlsx, open_workbook};
    let mut book: Xlsx<_> = open_workbook(&xlsx).unwrap();
    let ops = book.worksheet_range("ops_summary").unwrap();
    let names: Vec<String> = ops
        .rows()
        .filter_map(|r| match &r[0] {
            Data::String(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    let relu = "aten::relu\u{ffff}\u{b}_x005F_x0041_&<>";
    assert!(names.iter().any(|n| n == relu), "{names:?}");
}
