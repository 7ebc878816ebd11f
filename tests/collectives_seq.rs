//! `tracelens collectives` when the ranks disagree on their collectives:
//! matching by PyTorch's per-group sequence number (`Seq`), the warning
//! that names the ranks and their counts, the matched count and the
//! slowest-rank verdict. (Ranks without `Seq` are covered at the end of
//! `collectives_cli.rs`.)

mod common;

use common::{Run, Table};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Collective `seq` of group `pg` on rank `r`: an all-reduce starting at
/// 100·seq + 3·r µs (rank 2 arrives last) and ending with the others at
/// 100·seq + 30 (implicit sync); its size grows with `seq`, so two
/// collectives paired across different sequence numbers disagree on size.
fn kernel(pg: &str, r: i64, seq: i64, seq_text: bool) -> Value {
    let ts = 100 * seq + 3 * r;
    let corr = 1000 * (pg.len() as i64) + seq;
    let nelems = 1024 * seq;
    let seq = if seq_text {
        json!(seq.to_string())
    } else {
        json!(seq)
    };
    json!({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "pid": 0, "tid": 7, "ts": ts, "dur": 30 - 3 * r,
        "args": {"External id": corr, "correlation": corr, "stream": 7,
            "Process Group Name": pg, "Process Group Ranks": "[0, 1, 2]",
            "Collective name": "allreduce", "Group size": 3, "dtype": "Float",
            "In msg nelems": nelems, "Out msg nelems": nelems,
            "In split size": "[]", "Out split size": "[]", "Seq": seq}})
}

/// A 3-rank job in a temporary directory: rank r records the sequence
/// numbers `seqs(r)` of groups "0" and "10" (`Seq` written as a string on
/// rank 1, as some profilers do).
fn job(seqs: impl Fn(i64) -> Vec<i64>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for r in 0..3 {
        let mut events = Vec::new();
        for pg in ["0", "10"] {
            let pg_seqs = if pg == "0" { seqs(r) } else { vec![1, 2] };
            for s in pg_seqs {
                let mut k = kernel(pg, r, s, r == 1);
                if pg == "10" {
                    k["ts"] = json!(10_000 + 100 * s + 3 * r);
                }
                events.push(k);
            }
        }
        let doc = json!({"schemaVersion": 1, "traceEvents": events,
            "distributedInfo": {"backend": "nccl", "rank": r, "world_size": 3}});
        std::fs::write(
            dir.path().join(format!("rank{r}.json")),
            serde_json::to_string(&doc).unwrap(),
        )
        .unwrap();
    }
    dir
}

/// Runs the command on the three ranks in `dir`; the CSV folder and the run.
fn collectives(dir: &Path) -> (tempfile::TempDir, PathBuf, Run) {
    common::collectives_csv(dir, 3, &[])
}

/// The stdout line that contains `what`.
fn stdout_line<'r>(r: &'r Run, what: &str) -> &'r str {
    r.stdout
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no {what:?} in {}", r.stdout))
}

/// The warnings about collectives, one per line.
fn warnings(r: &Run) -> Vec<&str> {
    r.stderr_lines()
        .into_iter()
        .filter(|l| l.contains("warning"))
        .collect()
}

/// Row of `t` whose `collective_id` is `cid`.
fn row_of(t: &Table, cid: &str) -> usize {
    t.column("collective_id")
        .iter()
        .position(|c| *c == cid)
        .unwrap_or_else(|| panic!("{}: no collective {cid}", t.name))
}

#[test]
fn a_collective_missing_on_one_rank_is_matched_by_sequence_number() {
    let full = job(|_| vec![1, 2, 3, 4]);
    let (_a, full_csv, f) = collectives(full.path());
    f.assert_ok();
    assert!(warnings(&f).is_empty(), "{}", f.stderr);
    // Rank 2 lacks Seq 2 of group "0".
    let cut = job(|r| {
        if r == 2 {
            vec![1, 3, 4]
        } else {
            vec![1, 2, 3, 4]
        }
    });
    let (_b, cut_csv, c) = collectives(cut.path());
    c.assert_ok();
    let w = warnings(&c);
    assert_eq!(w.len(), 1, "one line for the one group: {}", c.stderr);
    for part in [
        "process group 0: rank 2 has 3 collectives, ranks 0, 1 have 4 collectives",
        "matched by sequence number (Seq)",
        "1 collective: 0_1 (Seq 2)",
    ] {
        assert!(w[0].contains(part), "{part:?} not in {:?}", w[0]);
    }
    // 6 collectives matched with every kernel present, 5 without Seq 2.
    assert!(stdout_line(&f, "matched").contains("6 collectives matched"));
    assert!(stdout_line(&c, "matched").contains("5 collectives matched"));
    let (ft, ct) = (
        Table::load(&full_csv, "nccl_implicit_sync"),
        Table::load(&cut_csv, "nccl_implicit_sync"),
    );
    assert_eq!(
        ct.column("collective_id"),
        ["0_0", "0_2", "0_3", "10_0", "10_1"]
    );
    // The others are timed as with every kernel present.
    for cid in ct.column("collective_id") {
        assert_eq!(
            ct.rows[row_of(&ct, cid)],
            ft.rows[row_of(&ft, cid)],
            "{cid}"
        );
    }
    // Rank 2 arrives last everywhere: the verdict stands, over 5.
    assert!(
        stdout_line(&f, "slowest rank").contains(": 2, arrived last in 6 of 6"),
        "{}",
        f.stdout
    );
    assert!(
        stdout_line(&c, "slowest rank").contains(": 2, arrived last in 5 of 5"),
        "{}",
        c.stdout
    );
}

/// Profiler windows that start one collective apart: every rank has four
/// collectives, but positions pair different sequence numbers (and sizes).
#[test]
fn equal_counts_with_shifted_sequence_numbers_are_matched_by_number() {
    let dir = job(|r| {
        if r == 0 {
            vec![2, 3, 4, 5]
        } else {
            vec![1, 2, 3, 4]
        }
    });
    let (_o, csv, r) = collectives(dir.path());
    r.assert_ok();
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{}", r.stderr);
    for part in [
        "process group 0: every rank has 4 collectives but not the same sequence numbers",
        "2 collectives: 0_0 (Seq 1), 0_4 (Seq 5)",
    ] {
        assert!(w[0].contains(part), "{part:?} not in {:?}", w[0]);
    }
    let t = Table::load(&csv, "nccl_implicit_sync");
    assert_eq!(
        t.column("collective_id"),
        ["0_1", "0_2", "0_3", "10_0", "10_1"]
    );
    // Seq 3 everywhere: 3072 elements, ranks starting 3 µs apart.
    let i = row_of(&t, "0_2");
    assert_eq!(t.cell(i, "In msg nelems"), "3072");
    assert_eq!(t.cell(i, "rank_0_ts"), "300");
    assert_eq!(t.cell(i, "rank_2_ts"), "306");
    assert_eq!(t.cell(i, "skew in start time"), "6");
    assert!(stdout_line(&r, "matched").contains("5 collectives matched"));
}

/// Same sequence numbers on every rank in the same order: no warning and
/// positions are kept (the corpus case, where outputs must not change).
#[test]
fn agreeing_sequence_numbers_change_nothing() {
    let dir = job(|_| vec![7, 8, 9]);
    let (_o, csv, r) = collectives(dir.path());
    r.assert_ok();
    assert!(warnings(&r).is_empty(), "{}", r.stderr);
    let t = Table::load(&csv, "nccl_implicit_sync");
    assert_eq!(
        t.column("collective_id"),
        ["0_0", "0_1", "0_2", "10_0", "10_1"]
    );
}
