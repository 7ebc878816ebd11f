//! docs/findings.md states, per PyTorch corpus trace, the health verdict,
//! the checks that did not pass and the top three findings: each row must
//! be what `tracelens report --json -` says, and every corpus trace must
//! have a row.

mod common;

use common::{root, run, shared, tracelens};

/// The rows of the corpus table: trace, verdict, not passed, top findings.
fn doc_rows() -> Vec<[String; 4]> {
    let text = std::fs::read_to_string(root().join("docs/findings.md")).unwrap();
    let start = text.find("<!-- corpus-verdicts -->").expect("start marker");
    let end = text.find("<!-- /corpus-verdicts -->").expect("end marker");
    text[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect();
            assert_eq!(cells.len(), 4, "{l}");
            [
                cells[0].clone(),
                cells[1].clone(),
                cells[2].clone(),
                cells[3].clone(),
            ]
        })
        .collect()
}

/// The same four cells from the report's JSON document.
fn measured(trace: &std::path::Path) -> [String; 4] {
    let out = run(tracelens()
        .arg("report")
        .arg(trace)
        .args(["--json", "-", "-q"]));
    out.assert_ok();
    let d: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let flagged: Vec<String> = d["health"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "pass")
        .map(|c| {
            format!(
                "{} {}",
                c["id"].as_str().unwrap(),
                c["status"].as_str().unwrap()
            )
        })
        .collect();
    let top: Vec<&str> = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .take(3)
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    let dash = |v: String| if v.is_empty() { "—".to_string() } else { v };
    [
        d["trace"].as_str().unwrap().to_string(),
        d["health"]["verdict"].as_str().unwrap().to_string(),
        dash(flagged.join(", ")),
        dash(top.join(", ")),
    ]
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn the_corpus_table_is_what_the_report_says() {
    let rows = doc_rows();
    let dir = shared().join("corpus/pytorch");
    let mut traces: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    traces.sort();
    assert!(!traces.is_empty());
    let mut wrong = Vec::new();
    for t in &traces {
        let got = measured(t);
        match rows.iter().find(|r| r[0] == got[0]) {
            None => wrong.push(format!("no row for {}: {got:?}", got[0])),
            Some(r) if *r != got => wrong.push(format!("doc {r:?}\n   is {got:?}")),
            Some(_) => {}
        }
        // No corpus trace may fail a health check.
        assert_ne!(got[1], "fail", "{}", got[0]);
    }
    assert_eq!(
        rows.len(),
        traces.len(),
        "rows for traces not in the corpus"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
