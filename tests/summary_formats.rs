//! The terminal summary and the `--md` page for every input format read
//! from a file: rocprofv3 (busy/idle from its `gpu_timeline`, categories in
//! real milliseconds) and PyTorch (op categories, the host-launch
//! sentence). The JAX summary is tested in `tests/jax_report.rs`, on its
//! hand-built trace.
//!
//! Expected values are worked out by hand from the traces (the arithmetic
//! is in the comments, and in `tests/rocprof.rs` for the sheets).

mod common;

use common::{run, testdata, tracelens};

/// `report TRACE --csv TMP --md -`: the Markdown page (stdout) and the
/// terminal lines (stderr, less the warnings).
fn summaries(trace: &str) -> (String, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .arg("report")
        .arg(testdata(trace))
        .arg("--csv")
        .arg(tmp.path().join("csv"))
        .args(["--md", "-"]));
    r.assert_ok();
    let lines = r
        .stderr
        .lines()
        .filter(|l| !l.starts_with("tracelens: warning: "))
        .map(String::from)
        .collect();
    (r.stdout, lines)
}

/// Asserts that the numbers printed in `line` are `want`, each rounded to
/// the decimals it is printed with.
fn assert_printed(line: &str, want: &[f64]) {
    let tokens: Vec<&str> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(tokens.len(), want.len(), "{line}");
    for (t, w) in tokens.iter().zip(want) {
        let decimals = t.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
        let x: f64 = t.parse().unwrap();
        let half_unit = 0.5 * 10f64.powi(-decimals) + 1e-9;
        assert!((x - w).abs() <= half_unit, "{t} is not {w} in: {line}");
    }
}

#[test]
fn rocprof_summary_shows_busy_idle_and_categories_in_ms() {
    let (md, term) = summaries("rocprof/small.json");
    // init..fini = 1 ms; kernel union 50 + 101.5 + 1 + 30 = 182.5 µs, no
    // copies; idle 817.5 µs.
    assert!(term[0].starts_with("GPU time "), "{term:?}");
    assert_printed(&term[0], &[1.0, 0.1825, 18.25, 0.8175, 81.75, 18.25, 0.0]);
    assert_eq!(
        term[1],
        "Top kernel categories by GPU kernel time (count, ms, %):"
    );
    // Of 183 500 ns: COMM one 100 000 ns dispatch; GEMM 50 000 + 30 000 ns;
    // Elementwise 1000 + 1500 + 1000 ns. The sheet's "ms" holds µs; the
    // summary's ms are ms.
    let total = 183_500.0;
    let cats = [
        ("COMM", 1.0, 100_000.0),
        ("GEMM", 2.0, 80_000.0),
        ("Elementwise", 3.0, 3_500.0),
    ];
    for (line, (name, count, ns)) in term[2..5].iter().zip(cats) {
        assert!(line.trim_start().starts_with(name), "{line}");
        assert_printed(line, &[count, ns / 1e6, ns / total * 100.0]);
    }
    // The two checks the dispatches support pass; the others cannot tell.
    assert_eq!(term[5], "Trace health: pass");
    assert!(term[6].starts_with("wrote "), "{term:?}");

    assert!(md.contains("\n### GPU timeline\n"), "{md}");
    // Three significant digits, shares to 0.1%: 0.1825 ms is stored a
    // hair below the tie, so it rounds down.
    assert!(md.contains("\n| busy | 0.182 | 18.2% |\n"), "{md}");
    assert!(md.contains("\n| idle | 0.818 | 81.8% |\n"), "{md}");
    assert!(
        md.contains("\n### Top kernel categories (GPU kernel time)\n"),
        "{md}"
    );
    // 100000 / 183500 = 54.4959 %, 80000 / 183500 = 43.5967 %,
    // 3500 / 183500 = 1.9074 %.
    for row in [
        "| COMM | 1 | 0.100 | 54.5% |",
        "| GEMM | 2 | 0.0800 | 43.6% |",
        "| Elementwise | 3 | 0.00350 | 1.9% |",
    ] {
        assert!(md.contains(&format!("\n{row}\n")), "{row} in {md}");
    }
    assert!(md.contains("columns labelled `(µs)` hold ns"), "{md}");
    // rocprof records have no host launches to vouch for: the checks
    // that read them cannot tell, and the rules that read the host call
    // tree are named once, with their one reason.
    assert!(md.contains("\n- `health.unlinked_kernels` cannot_tell: rocprofv3 traces link no host launch to their GPU work\n"), "{md}");
    assert!(md.contains("; `idle.host_bound`, `idle.sync`, "), "{md}");
    assert_eq!(
        md.matches("the rule reads the host call tree").count(),
        1,
        "{md}"
    );
    assert!(
        md.contains(
            "\nTrace health: **pass: no check found a problem** (7 of 9 checks could not tell)\n"
        ),
        "{md}"
    );
    assert!(md.ends_with("### Trace quality\n\nNo warnings.\n"), "{md}");
}

#[test]
fn rocprof_summary_counts_memory_copies() {
    let (md, term) = summaries("rocprof/copies.json");
    // 10 µs profiled; kernels [1,3] ∪ [2,4] = 3 µs, copies [3.5,5] and
    // [6,6.5] = 2 µs, all [1,5] ∪ [6,6.5] = 4.5 µs, idle 5.5 µs.
    assert_printed(&term[0], &[0.01, 0.0045, 45.0, 0.0055, 55.0, 30.0, 20.0]);
    // Two layer_norm dispatches of 2000 ns: 0.004 ms, all of it.
    assert!(
        term[2].trim_start().starts_with("Normalization"),
        "{term:?}"
    );
    assert_printed(&term[2], &[2.0, 0.004, 100.0]);
    assert!(
        md.contains("\n| memory copies | 0.00200 | 20.0% |\n"),
        "{md}"
    );
    assert!(
        md.contains("\n| Normalization | 2 | 0.00400 | 100.0% |\n"),
        "{md}"
    );
}

#[test]
fn pytorch_summary_counts_ops_and_vouches_for_launches() {
    let (_, term) = summaries("example.json");
    assert_eq!(
        term[1],
        "Top op categories by GPU kernel time (count, ms, %):"
    );
    // aten::addmm's 12 µs GEMM kernel; relu 4.5 µs and copy_ 3 µs, both
    // elementwise: of 19.5 µs.
    assert!(term[2].trim_start().starts_with("GEMM"), "{term:?}");
    assert_printed(&term[2], &[1.0, 0.012, 12.0 / 19.5 * 100.0]);
    assert!(term[3].trim_start().starts_with("elementwise"), "{term:?}");
    assert_printed(&term[3], &[2.0, 0.0075, 7.5 / 19.5 * 100.0]);
    // A trace whose GPU events all have their launch.
    let (md, _) = summaries("layout_ops.json");
    assert!(
        md.ends_with("### Trace quality\n\nAll GPU events are linked to their host launch.\n"),
        "{md}"
    );
}

/// The roofline rows of the PyTorch page: the op's input shapes beside its
/// name (scalars left out), the bound in words, numbers to three
/// significant digits and shares to 0.1%, human column names, and the
/// notes under the table.
#[test]
fn pytorch_roofline_rows_show_shapes_and_rounded_numbers() {
    let r = run(tracelens()
        .arg("report")
        .arg(testdata("example.json"))
        .args(["--gpu-arch", "H100", "--md", "-", "-q"]));
    r.assert_ok();
    let md = &r.stdout;
    assert!(
        md.contains(
            "\n| Op | Shape | Category | Count | Kernel time (µs) | TFLOPS/s | TB/s | FLOPs/byte | Bound | Of roofline |\n"
        ),
        "{md}"
    );
    // addmm(bias (32,), (4, 16), (16, 32)) in 12 µs: 2·4·16·32 + 4·32 =
    // 4224 FLOPs, 4.224e-9 TFLOP / 12e-6 s = 3.52e-4 TFLOPS/s.
    let roofline = md.split("### Roofline").nth(1).unwrap_or("");
    let addmm = roofline
        .lines()
        .find(|l| l.starts_with("| aten::addmm |"))
        .unwrap_or_else(|| panic!("no addmm row:\n{md}"));
    assert!(
        addmm.starts_with("| aten::addmm | 32, 4×16, 16×32 | GEMM | 1 | 12.0 | 3.52e-4 |"),
        "{addmm}"
    );
    assert!(addmm.contains("| memory |"), "{addmm}");
    // relu has no model: its rate cells are empty, and a note says why.
    assert!(
        md.contains("\n| aten::relu | 4×32 | elementwise | 1 | 4.50 |  |  |  |  |  |\n"),
        "{md}"
    );
    assert!(md.contains("\n- Empty rate cells: "), "{md}");
    assert!(md.contains("\n- Of roofline: "), "{md}");
    // No share above 100% here, so no note about it.
    assert!(!md.contains("Above 100%"), "{md}");
    // Nothing is printed with the four decimals of the sheets.
    assert!(!md.contains("0.0000"), "{md}");
}

/// On owlv2 (H100) one `aten::add` runs faster than its roofline allows:
/// the page shows its share above 100% as the sheet has it (to 0.1%) and
/// says why such a number is possible.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn share_of_roofline_above_100_gets_a_note() {
    let shared = common::shared();
    let trace = shared.join("corpus/pytorch/h100_owlv2_large.json.gz");
    let (_t, csv, r) = common::report_csv(&trace, &["--gpu-arch", "H100", "--md", "-"]);
    r.assert_ok();
    let sheet = common::Table::load(&csv, "unified_perf_summary");
    let pct = |i: usize| {
        sheet
            .cell(i, "Pct Roofline_mean")
            .parse::<f64>()
            .unwrap_or(f64::NAN)
    };
    let above: Vec<usize> = (0..sheet.rows.len().min(15))
        .filter(|&i| pct(i) > 100.0)
        .collect();
    assert!(
        !above.is_empty(),
        "owlv2 has a top op above 100% of roofline"
    );
    let md = &r.stdout;
    let note = md
        .lines()
        .find(|l| l.starts_with("- Above 100% of roofline ("))
        .unwrap_or_else(|| panic!("no note:\n{md}"));
    for i in above {
        let name = sheet.cell(i, "name");
        assert!(note.contains(&format!("`{name}` (")), "{name} in {note}");
        let share = format!("| {:.1}% |", pct(i));
        assert!(
            md.lines()
                .any(|l| l.starts_with(&format!("| {name} |")) && l.ends_with(&share)),
            "{name} row ending {share}:\n{md}"
        );
    }
}
