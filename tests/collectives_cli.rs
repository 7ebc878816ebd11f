//! `tracelens collectives` and the `coll_analysis` sheet.
//!
//! A generator (below) writes synthetic N-rank jobs: one Kineto trace per
//! rank with collective kernels carrying full PyTorch metadata, chosen start
//! times and durations, and decoys that must be ignored (a compute kernel,
//! an NCCL kernel without correlation, a `record_param_comms` CPU op with
//! collective args). The expected skew, latency, wait and bandwidth values
//! are worked out by hand in the comments next to each check.
//!
//! The conformance tests at the end run on `../shared/corpus` and skip
//! (with a message on stderr) when it is absent.

mod common;

use common::{Run, Table, assert_close, run, tracelens, xlsx_sheet_names};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

// ---------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------

/// PyTorch's collective metadata of one kernel.
#[derive(Clone)]
struct Meta {
    pg: &'static str,
    ranks: &'static str,
    name: &'static str,
    group: i64,
    dtype: &'static str,
    in_n: i64,
    out_n: i64,
    in_split: &'static str,
}

/// One collective kernel on one rank.
#[derive(Clone)]
struct Kernel {
    name: &'static str,
    ts: f64,
    dur: f64,
    stream: i64,
    meta: Option<Meta>,
}

/// A rank's trace file.
struct RankFile {
    file: String,
    /// distributedInfo (rank, world_size), if written.
    info: Option<(i64, i64)>,
    /// Number of deviceProperties entries.
    devices: usize,
    kernels: Vec<Kernel>,
}

/// A JSON number: integral values as integers, like the profiler writes them.
fn num(x: f64) -> Value {
    if x.fract() == 0.0 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// The trace of one rank: the kernels in the given order (not sorted by
/// time), each launched by a runtime call, plus decoys.
fn trace_json(f: &RankFile) -> String {
    let mut events = vec![
        json!({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}}),
        // Decoys: a compute kernel, an unlinked NCCL kernel, and a CPU op
        // that carries collective args.
        json!({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7,
               "ts": 1.0, "dur": 2.0, "args": {"correlation": 900, "stream": 7}}),
        json!({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0,
               "tid": 7, "ts": 3.0, "dur": 2.0, "args": {"stream": 7}}),
        json!({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
               "ts": 4.0, "dur": 1.0, "args": {"External id": 901, "Collective name": "allreduce",
               "Process Group Name": "0", "Group size": 4, "dtype": "Float", "In msg nelems": 4,
               "Out msg nelems": 4}}),
    ];
    for (i, k) in f.kernels.iter().enumerate() {
        let corr = 1000 + i as i64;
        events.push(json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
            "tid": 1, "ts": num(k.ts - 5.0), "dur": 2, "args": {"correlation": corr, "External id": corr}}));
        let mut args =
            json!({"External id": corr, "correlation": corr, "stream": k.stream, "device": 0});
        if let Some(m) = &k.meta {
            let a = args.as_object_mut().unwrap();
            a.insert("Process Group Name".into(), json!(m.pg));
            a.insert("Process Group Description".into(), json!("default_pg"));
            a.insert("Process Group Ranks".into(), json!(m.ranks));
            a.insert("Collective name".into(), json!(m.name));
            a.insert("Group size".into(), json!(m.group));
            a.insert("dtype".into(), json!(m.dtype));
            a.insert("In msg nelems".into(), json!(m.in_n));
            a.insert("Out msg nelems".into(), json!(m.out_n));
            a.insert("In split size".into(), json!(m.in_split));
            a.insert("Out split size".into(), json!(m.in_split));
        }
        events.push(
            json!({"ph": "X", "cat": "kernel", "name": k.name, "pid": 0, "tid": k.stream,
            "ts": num(k.ts), "dur": num(k.dur), "args": args}),
        );
    }
    let mut doc = json!({"schemaVersion": 1, "traceEvents": events});
    if let Some((rank, world)) = f.info {
        doc["distributedInfo"] = json!({"backend": "nccl", "rank": rank, "world_size": world});
    }
    if f.devices > 0 {
        doc["deviceProperties"] = json!(vec![json!({"name": "GPU"}); f.devices]);
    }
    serde_json::to_string(&doc).unwrap()
}

/// Writes the files into `dir` (gzip when the name ends in `.gz`).
fn write_job(dir: &Path, files: &[RankFile]) {
    for f in files {
        let path = dir.join(&f.file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = trace_json(f);
        if f.file.ends_with(".gz") {
            std::fs::write(&path, common::gzip(text.as_bytes())).unwrap();
        } else {
            std::fs::write(&path, text).unwrap();
        }
    }
}

/// [`common::collectives_csv`] with `-q`.
fn collectives(dir: &Path, world: u32, extra: &[&str]) -> (tempfile::TempDir, PathBuf, Run) {
    common::collectives_csv(dir, world, &[&["-q"], extra].concat())
}

/// Row of `t` whose `collective_id` is `cid`.
fn row_of(t: &Table, cid: &str) -> usize {
    t.column("collective_id")
        .iter()
        .position(|c| *c == cid)
        .unwrap_or_else(|| panic!("{}: no collective {cid}", t.name))
}

/// The algorithm and bus bandwidth (GB/s) of row `i`, to a relative 1e-12.
fn assert_bw(t: &Table, i: usize, algo: f64, bus: f64) {
    assert_close(t.num(i, "algo bw (GB/s)"), algo, "algo bw (GB/s)");
    assert_close(t.num(i, "bus bw (GB/s)"), bus, "bus bw (GB/s)");
}

/// The text cells of row `i`, column by column.
fn assert_cells(t: &Table, i: usize, expected: &[(&str, &str)]) {
    for (name, want) in expected {
        assert_eq!(t.cell(i, name), *want, "{} row {i} {name}", t.name);
    }
}

/// The numeric cells of row `i`, column by column (exact).
fn assert_nums(t: &Table, i: usize, expected: &[(&str, f64)]) {
    for (name, want) in expected {
        assert_eq!(t.num(i, name), *want, "{} row {i} {name}", t.name);
    }
}

/// The rows of `t`, top to bottom.
fn assert_rows(t: &Table, expected: &[&[&str]]) {
    let rows: Vec<Vec<&str>> = t
        .rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(rows, expected, "{}", t.name);
}

// ---------------------------------------------------------------------------
// Spec A12: two ranks
// ---------------------------------------------------------------------------

fn a12_kernel(
    ts: f64,
    dur: f64,
    name: &'static str,
    dtype: &'static str,
    i: i64,
    o: i64,
) -> Kernel {
    Kernel {
        name: "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
        ts,
        dur,
        stream: 7,
        meta: Some(Meta {
            pg: "0",
            ranks: "[0, 1]",
            name,
            group: 2,
            dtype,
            in_n: i,
            out_n: o,
            in_split: "[]",
        }),
    }
}

fn a12_job(dir: &Path) {
    let k = |r: usize| {
        let t = [
            (1000.0, 300.0, 1100.0, 200.0),
            (2000.0, 150.0, 1990.0, 170.0),
            (2500.0, 5.0, 2502.0, 4.0),
            (3000.0, 100.0, 3000.0, 100.0),
        ];
        let pick = |i: usize| {
            if r == 0 {
                (t[i].0, t[i].1)
            } else {
                (t[i].2, t[i].3)
            }
        };
        vec![
            a12_kernel(pick(0).0, pick(0).1, "allreduce", "Float", 262144, 262144),
            a12_kernel(
                pick(1).0,
                pick(1).1,
                "_allgather_base",
                "BFloat16",
                524288,
                1048576,
            ),
            a12_kernel(pick(2).0, pick(2).1, "broadcast", "Long", 20, 20),
            a12_kernel(
                pick(3).0,
                pick(3).1,
                "_reduce_scatter_base",
                "Float",
                524288,
                262144,
            ),
        ]
    };
    write_job(
        dir,
        &[
            RankFile {
                file: "rank0_trace.json".into(),
                info: Some((0, 2)),
                devices: 2,
                kernels: k(0),
            },
            RankFile {
                file: "rank1_trace.json".into(),
                info: Some((1, 2)),
                devices: 2,
                kernels: k(1),
            },
        ],
    );
}

#[test]
fn worked_example_a12() {
    let job = tempfile::tempdir().unwrap();
    a12_job(job.path());
    let (_t, csv, r) = collectives(job.path(), 2, &[]);
    r.assert_ok();
    a12_implicit_sync(&csv);
    a12_stragglers(&csv);
    a12_summary_long(&csv);
}

/// A12's `nccl_implicit_sync`, collective by collective.
fn a12_implicit_sync(csv: &Path) {
    let s = Table::load(csv, "nccl_implicit_sync");
    // Broadcast gets a row too (our deviation: bus bw = algo bw for it).
    assert_eq!(s.column("collective_id"), ["0_0", "0_1", "0_2", "0_3"]);
    // 0_0 allreduce: ts (1000, 1100), dur (300, 200). Latest start 1100, so
    // waits (100, 0); latency = min dur = 200; ends (1300, 1300): end skew 0.
    // 262144 floats = 1 MiB; algo = (1/1024) GiB / 200e-6 s = 4.8828125;
    // bus = algo × 2(n-1)/n = algo × 1.
    let i = row_of(&s, "0_0");
    assert_cells(
        &s,
        i,
        &[
            ("comm_latency", "200"),
            ("skew in start time", "100"),
            ("earliest arrival rank", "0"),
            ("skew in end time", "0"),
            ("rank_0_wait_time", "100"),
            ("rank_1_wait_time", "0"),
        ],
    );
    assert_nums(
        &s,
        i,
        &[("avg_wait_time", 50.0), ("Full msg size (MB)", 1.0)],
    );
    assert_bw(&s, i, 4.8828125, 4.8828125);
    // 0_1 allgather: the size is Out = 1048576 bf16 = 2 MiB; latency 150;
    // algo = (2/1024) / 150e-6 = 13.0208333…; bus × (n-1)/n = 1/2.
    let i = row_of(&s, "0_1");
    assert_eq!(s.num(i, "Full msg size (MB)"), 2.0);
    let algo = 2.0 / 1024.0 / 150e-6;
    assert_bw(&s, i, algo, algo / 2.0);
    assert_cells(
        &s,
        i,
        &[("earliest arrival rank", "1"), ("skew in end time", "10")],
    );
    // 0_2 broadcast: ts (2500, 2502), dur (5, 4): waits (2, 0), latency 4,
    // ends (2505, 2506): end skew 1. 20 longs = 160 B; algo =
    // 160/2^30 GiB / 4e-6 s = 0.037252902984619140625; bus = algo (factor 1).
    let i = row_of(&s, "0_2");
    assert_cells(
        &s,
        i,
        &[
            ("comm_latency", "4"),
            ("skew in start time", "2"),
            ("skew in end time", "1"),
        ],
    );
    let algo = 160.0 / 1073741824.0 / 4e-6;
    assert_bw(&s, i, algo, algo);
    // 0_3 reduce-scatter: equal starts, so the tie goes to the higher rank.
    // In = 524288 floats = 2 MiB; algo = (2/1024) / 100e-6 = 19.53125; bus /2.
    let i = row_of(&s, "0_3");
    assert_eq!(s.cell(i, "earliest arrival rank"), "1");
    assert_eq!(s.num(i, "avg_wait_time"), 0.0);
    assert_bw(&s, i, 19.53125, 9.765625);
    // deviceProperties has 2 entries: both ranks on one node.
    assert!(s.column("node_span").iter().all(|v| *v == "intra_node"));
}

/// A12's straggler summary over the reference's implicit-sync types
/// (broadcast left out): waits r0 = 100 + 0 + 0, r1 = 0 + 10 + 0. Last
/// arrivals (least wait, first column on ties): 0_0 → r1, 0_1 → r0, 0_3 →
/// r0. Total kernel time: r0 300+150+5+100 = 555, r1 200+170+4+100 = 474.
fn a12_stragglers(csv: &Path) {
    let st = Table::load(csv, "straggler_summary");
    assert_eq!(
        st.header,
        [
            "rank",
            "total_wait_time_us",
            "mean_wait_time_us",
            "times_arrived_last",
            "times_arrived_first",
            "pct_arrived_last",
            "num_collectives",
            "total_nccl_dur_us",
            "node_id"
        ]
    );
    assert_rows(
        &st,
        &[
            &["1", "10", "3.3", "1", "2", "33.3", "3", "474", "0"],
            &["0", "100", "33.3", "2", "1", "66.7", "3", "555", "0"],
        ],
    );
}

/// A12's `nccl_summary_long`: by total kernel time, descending.
fn a12_summary_long(csv: &Path) {
    let sl = Table::load(csv, "nccl_summary_long");
    let order: Vec<(&str, &str)> = (0..sl.rows.len())
        .map(|i| (sl.cell(i, "rank"), sl.cell(i, "dur_sum")))
        .collect();
    assert_eq!(
        order,
        [
            ("0", "300"),
            ("1", "200"),
            ("1", "170"),
            ("0", "150"),
            ("0", "100"),
            ("1", "100"),
            ("0", "5"),
            ("1", "4")
        ]
    );
    assert_cells(
        &sl,
        0,
        &[
            ("Process Group Ranks", "[0, 1]"),
            ("dur_std", ""),
            ("operation_count", "1"),
        ],
    );
}

// ---------------------------------------------------------------------------
// Four ranks, two nodes, sub-groups, every collective type
// ---------------------------------------------------------------------------

const ALL4: &str = "[0, 1, 2, 3]";

fn meta4(name: &'static str, dtype: &'static str, in_n: i64, out_n: i64) -> Meta {
    Meta {
        pg: "0",
        ranks: ALL4,
        name,
        group: 4,
        dtype,
        in_n,
        out_n,
        in_split: "[]",
    }
}

/// Per collective: (metadata, kernel name, [(ts, dur); 4 ranks]).
/// One collective: metadata, kernel name, (ts, dur) on ranks 0-3.
type Planned = (Meta, &'static str, [(f64, f64); 4]);

fn four_rank_plan() -> Vec<Planned> {
    vec![
        (
            meta4("allreduce", "Float", 1048576, 1048576),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            [
                (1000.0, 300.0),
                (1010.0, 290.0),
                (1040.0, 250.0),
                (1020.0, 280.0),
            ],
        ),
        (
            meta4("_allgather_base", "BFloat16", 262144, 1048576),
            "ncclDevKernel_AllGather_RING_LL",
            [
                (2000.0, 200.0),
                (2000.0, 180.0),
                (2000.0, 190.0),
                (2050.0, 125.0),
            ],
        ),
        (
            meta4("_reduce_scatter_base", "Float", 1048576, 262144),
            "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL",
            [
                (3000.0, 500.0),
                (3100.0, 400.0),
                (3000.0, 500.0),
                (3000.0, 500.0),
            ],
        ),
        (
            meta4("all_to_all", "Float", 524288, 524288),
            "ncclDevKernel_SendRecv",
            [
                (4000.0, 100.0),
                (4010.0, 100.0),
                (4020.0, 100.0),
                (4030.0, 100.0),
            ],
        ),
        (
            meta4("broadcast", "Long", 131072, 131072),
            "ncclDevKernel_Broadcast_RING_LL",
            [
                (5000.0, 128.0),
                (5005.0, 64.0),
                (5000.0, 128.0),
                (5000.0, 128.0),
            ],
        ),
    ]
}

fn four_rank_files(mismatch: bool) -> Vec<RankFile> {
    let plan = four_rank_plan();
    // all_to_allv with unequal sizes: 1, 1, 2, 1 MiB of floats.
    let a2av_n = [262144, 262144, 524288, 262144];
    let a2av_t = [
        (6000.0, 80.0),
        (6000.0, 100.0),
        (6010.0, 90.0),
        (6020.0, 60.0),
    ];
    let splits = [
        "[65536, 65536, 65536, 65536]",
        "[65536, 65536, 65536, 65536]",
        "[131072, 131072, 131072, 131072]",
        "[65536, 65536, 65536, 65536]",
    ];
    (0..4)
        .map(|r| {
            let mut ks: Vec<Kernel> = plan
                .iter()
                .map(|(m, name, t)| Kernel {
                    name,
                    ts: t[r].0,
                    dur: t[r].1,
                    stream: 7,
                    meta: Some(m.clone()),
                })
                .collect();
            if mismatch && r == 1 {
                ks[0].meta.as_mut().unwrap().dtype = "BFloat16";
            }
            ks.push(Kernel {
                name: "ncclDevKernel_SendRecv",
                ts: a2av_t[r].0,
                dur: a2av_t[r].1,
                stream: 7,
                meta: Some(Meta {
                    in_split: splits[r],
                    ..meta4("all_to_allv", "Float", a2av_n[r], a2av_n[r])
                }),
            });
            // Sub-groups: process group "1" = ranks 0, 1 and "2" = ranks 2, 3.
            let (pg, ranks, t) = match r {
                0 => ("1", "[0, 1]", (7000.0, 100.0)),
                1 => ("1", "[0, 1]", (7020.0, 80.0)),
                2 => ("2", "[2, 3]", (7000.0, 50.0)),
                _ => ("2", "[2, 3]", (7000.0, 50.0)),
            };
            ks.push(Kernel {
                name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                ts: t.0,
                dur: t.1,
                stream: 9,
                meta: Some(Meta {
                    pg,
                    ranks,
                    group: 2,
                    ..meta4("allreduce", "Float", 262144, 262144)
                }),
            });
            // Written newest first: matching must go by time, not file order.
            ks.reverse();
            RankFile {
                file: format!("job/trace_rank_{r}.json.gz"),
                info: Some((r as i64, 4)),
                devices: 2,
                kernels: ks,
            }
        })
        .collect()
}

#[test]
fn four_ranks_every_collective_type() {
    let job = tempfile::tempdir().unwrap();
    write_job(job.path(), &four_rank_files(false));
    let (_t, csv, r) = collectives(&job.path().join("job"), 4, &[]);
    r.assert_ok();
    four_rank_implicit_sync(&csv);
    four_rank_other_rows(&csv);
    four_rank_summary(&csv);
    four_rank_stragglers(&csv);
    four_rank_all2allv(&csv);
    four_rank_long_and_types(&csv);
}

/// The four-rank job's `nccl_implicit_sync`: the order, then the
/// all-reduce, all-gather and reduce-scatter rows.
fn four_rank_implicit_sync(csv: &Path) {
    let s = Table::load(csv, "nccl_implicit_sync");
    // First appearance in the long table (rank 0's file order, newest
    // first), all_to_allv left out; 2_0 first appears on rank 2.
    assert_eq!(
        s.column("collective_id"),
        ["1_0", "0_4", "0_3", "0_2", "0_1", "0_0", "2_0"]
    );

    // 0_0 all-reduce: starts (1000, 1010, 1040, 1020), durations
    // (300, 290, 250, 280). Latest start 1040: waits (40, 30, 0, 20), skew 40,
    // earliest arrival rank 0, mean wait 90/4 = 22.5. Ends (1300, 1300, 1290,
    // 1300): end skew 10. Latency = min dur = 250. 1048576 floats = 4 MiB:
    // algo = (4/1024) / 250e-6 = 15.625, bus = 15.625 × 2·3/4 = 23.4375.
    let i = row_of(&s, "0_0");
    assert_cells(
        &s,
        i,
        &[
            ("comm_latency", "250"),
            ("skew in start time", "40"),
            ("earliest arrival rank", "0"),
            ("skew in end time", "10"),
        ],
    );
    assert_nums(
        &s,
        i,
        &[("avg_wait_time", 22.5), ("Full msg size (MB)", 4.0)],
    );
    assert_bw(&s, i, 15.625, 23.4375);
    let waits: Vec<f64> = (0..4)
        .map(|r| s.num(i, &format!("rank_{r}_wait_time")))
        .collect();
    assert_eq!(waits, [40.0, 30.0, 0.0, 20.0]);
    // 0_1 all-gather: latest start 2050 (rank 3); waits (50, 50, 50, 0): the
    // largest wait is shared by ranks 0-2, the tie goes to rank 2. Ends
    // (2200, 2180, 2190, 2175): end skew 25. Latency 125. Size = Out =
    // 1048576 bf16 = 2 MiB: algo = (2/1024) / 125e-6 = 15.625, bus × 3/4.
    let i = row_of(&s, "0_1");
    assert_cells(
        &s,
        i,
        &[("earliest arrival rank", "2"), ("skew in end time", "25")],
    );
    assert_nums(
        &s,
        i,
        &[("avg_wait_time", 37.5), ("Full msg size (MB)", 2.0)],
    );
    assert_bw(&s, i, 15.625, 11.71875);
    // 0_2 reduce-scatter: rank 1 starts 100 late; waits (100, 0, 100, 100),
    // tie → rank 3; all end at 3500. Latency 400; size = In = 4 MiB:
    // algo = (4/1024) / 400e-6 = 9.765625, bus × 3/4 = 7.32421875.
    let i = row_of(&s, "0_2");
    assert_cells(
        &s,
        i,
        &[
            ("skew in start time", "100"),
            ("earliest arrival rank", "3"),
            ("skew in end time", "0"),
            ("comm_latency", "400"),
        ],
    );
    assert_eq!(s.num(i, "avg_wait_time"), 75.0);
    assert_bw(&s, i, 9.765625, 7.32421875);
}

/// The four-rank job's all-to-all, broadcast and sub-group rows of
/// `nccl_implicit_sync`.
fn four_rank_other_rows(csv: &Path) {
    let s = Table::load(csv, "nccl_implicit_sync");
    // 0_3 all-to-all: starts 4000..4030 by 10, all 100 long: waits
    // (30, 20, 10, 0), end skew 30. 524288 floats = 2 MiB:
    // algo = (2/1024) / 100e-6 = 19.53125, bus × 3/4 = 14.6484375.
    let i = row_of(&s, "0_3");
    assert_cells(
        &s,
        i,
        &[("skew in start time", "30"), ("skew in end time", "30")],
    );
    assert_eq!(s.num(i, "avg_wait_time"), 15.0);
    assert_bw(&s, i, 19.53125, 14.6484375);
    // 0_4 broadcast: starts (5000, 5005, 5000, 5000), durations
    // (128, 64, 128, 128): waits (5, 0, 5, 5), tie → rank 3, mean 3.75;
    // ends (5128, 5069, 5128, 5128): end skew 59; latency 64. 131072 longs
    // = 1 MiB: algo = (1/1024) / 64e-6 = 15.2587890625 = bus (factor 1).
    let i = row_of(&s, "0_4");
    assert_cells(
        &s,
        i,
        &[
            ("comm_latency", "64"),
            ("earliest arrival rank", "3"),
            ("skew in end time", "59"),
        ],
    );
    assert_eq!(s.num(i, "avg_wait_time"), 3.75);
    assert_bw(&s, i, 15.2587890625, 15.2587890625);
    // Sub-group 1_0 (ranks 0, 1): starts (7000, 7020), durations (100, 80):
    // waits (20, 0), latency 80; 1 MiB: algo = (1/1024) / 80e-6 =
    // 12.20703125, bus × 2·1/2. Ranks 2 and 3 did not take part: empty cells,
    // which make those columns float.
    let i = row_of(&s, "1_0");
    assert_close(s.num(i, "bus bw (GB/s)"), 12.20703125, "bus bw (GB/s)");
    assert_cells(
        &s,
        i,
        &[
            ("Process Group Ranks", "[0, 1]"),
            ("rank_2_ts", ""),
            ("rank_0_wait_time", "20.0"),
            ("node_span", "intra_node"),
        ],
    );
    assert_eq!(s.cell(row_of(&s, "0_0"), "node_span"), "inter_node");
    let i = row_of(&s, "2_0");
    assert_eq!(s.cell(i, "earliest arrival rank"), "3");
    assert_close(s.num(i, "algo bw (GB/s)"), 19.53125, "algo bw (GB/s)");
    assert!(s.column("metadata").iter().all(|m| *m == "trace"));
}

/// Summary per (name, dtype, In nelems): the two sub-group all-reduces
/// share a group (first process group shown: "1"), latency mean
/// (80 + 50) / 2 = 65, total 0.13 ms. Sorted by total latency:
/// reduce-scatter 0.4, all-reduce 4 MiB 0.25, sub-group 0.13,
/// all-gather 0.125, all-to-all 0.1, broadcast 0.064.
fn four_rank_summary(csv: &Path) {
    let ss = Table::load(csv, "nccl_summary_implicit_sync");
    assert_eq!(
        ss.column("Collective name"),
        [
            "_reduce_scatter_base",
            "allreduce",
            "allreduce",
            "_allgather_base",
            "all_to_all",
            "broadcast"
        ]
    );
    let totals: Vec<f64> = (0..6)
        .map(|i| ss.num(i, "Total comm latency (ms)"))
        .collect();
    assert_eq!(totals, [0.4, 0.25, 0.13, 0.125, 0.1, 0.064]);
    assert_cells(
        &ss,
        2,
        &[
            ("Process Group Name", "1"),
            ("count", "2"),
            ("comm_latency_min", "50"),
        ],
    );
    assert_nums(
        &ss,
        2,
        &[("comm_latency_mean", 65.0), ("comm_latency_median", 65.0)],
    );
    assert_close(
        ss.num(5, "bus bw (GB/s)_max"),
        15.2587890625,
        "bus bw (GB/s)_max",
    );
}

/// Straggler summary over 1_0, 0_3, 0_2, 0_1, 0_0, 2_0 (broadcast left
/// out). Waits: r0 20+30+100+50+40 = 240 (5 collectives), r1 0+20+0+50+30 =
/// 100, r2 10+100+50+0+0 = 160, r3 0+100+0+20+0 = 120; the empty cells make
/// the totals float. Last arrival (least wait, first column on ties):
/// 1_0 r1, 0_3 r3, 0_2 r1, 0_1 r3, 0_0 r2, 2_0 r2 (tie with r3).
/// Earliest arrival: 1_0 r0, 0_3 r0, 0_2 r3, 0_1 r2, 0_0 r0, 2_0 r3.
/// Kernel time (all collectives): r0 300+200+500+100+128+80+100 = 1408,
/// r1 290+180+400+100+64+100+80 = 1214, r2 250+190+500+100+128+90+50 = 1308,
/// r3 280+125+500+100+128+60+50 = 1243. Two GPUs per node.
fn four_rank_stragglers(csv: &Path) {
    let st = Table::load(csv, "straggler_summary");
    assert_rows(
        &st,
        &[
            &["1", "100.0", "20.0", "2", "0", "33.3", "6", "1214", "0"],
            &["3", "120.0", "24.0", "2", "2", "33.3", "6", "1243", "1"],
            &["2", "160.0", "32.0", "2", "1", "33.3", "6", "1308", "1"],
            &["0", "240.0", "48.0", "0", "3", "0.0", "6", "1408", "0"],
        ],
    );
}

/// all_to_allv 0_5: sizes 1+1+2+1 = 5 MiB, starts (6000, 6000, 6010, 6020),
/// ends (6080, 6100, 6100, 6080): wall 100, start skew 20, end skew 20;
/// throughput = (5/1024) / 100e-6 = 48.828125; imbalance = 2 / 1.25 = 1.6;
/// slowest rank throughput: rank 1, (1/1024) / 100e-6 = 9.765625.
fn four_rank_all2allv(csv: &Path) {
    let a = Table::load(csv, "nccl_all2allv");
    assert_eq!(a.column("collective_id"), ["0_5"]);
    assert_cells(
        &a,
        0,
        &[
            ("total nelems communicated", "1310720"),
            ("wall_time (us)", "100"),
            ("rank_3_skew in start time", "20"),
            ("rank_0_skew in end time", "20"),
        ],
    );
    assert_nums(
        &a,
        0,
        &[
            ("total data communicated (MB)", 5.0),
            ("size_imbalance", 1.6),
            ("avg_rank_dur (us)", 82.5),
        ],
    );
    for (name, want) in [
        ("throughput (GB/s)", 48.828125),
        ("min_rank_throughput (GB/s)", 9.765625),
    ] {
        assert_close(a.num(0, name), want, name);
    }
    let sa = Table::load(csv, "nccl_summary_all2allv");
    assert_eq!(sa.cell(0, "count"), "1");
    assert_eq!(sa.num(0, "Total wall_time (ms)"), 0.1);
}

/// The long table (7 collectives per rank, decoys left out; node ids) and
/// the per-type sheet (ours), which names the types.
fn four_rank_long_and_types(csv: &Path) {
    let l = Table::load(csv, "nccl_long");
    assert_eq!(l.rows.len(), 28);
    let nodes: Vec<&str> = (0..28).step_by(7).map(|i| l.cell(i, "node_id")).collect();
    assert_eq!(nodes, ["0", "0", "1", "1"]);
    // Rank 0's kernels in file order (newest first) with their time-order index.
    assert_eq!(l.cell(0, "collective_id"), "1_0");
    assert_eq!(l.cell(1, "collective_id"), "0_5");
    assert_eq!(l.cell(6, "index_in_group"), "0");
    let bt = Table::load(csv, "nccl_summary_by_type");
    let mut kinds = bt.column("collective type");
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "allgather",
            "allreduce",
            "alltoall",
            "broadcast",
            "reducescatter"
        ]
    );
}

#[test]
fn metadata_mismatch_is_an_error_and_writes_nothing() {
    let job = tempfile::tempdir().unwrap();
    write_job(job.path(), &four_rank_files(true));
    let (t, _csv, r) = collectives(&job.path().join("job"), 4, &[]);
    let line = r.assert_one_error_line("0_0");
    assert!(line.contains("dtype"), "{line}");
    assert!(!t.path().join("csv").exists(), "no partial output");
}

// ---------------------------------------------------------------------------
// Simplified mode: no process groups, one stream (vLLM/SGLang style)
// ---------------------------------------------------------------------------

#[test]
fn simplified_mode_float_timestamps() {
    let ar = "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(RankData*, Signal*)";
    let generic = "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)";
    let k = |name, ts, dur| Kernel {
        name,
        ts,
        dur,
        stream: 7,
        meta: None,
    };
    let job = tempfile::tempdir().unwrap();
    write_job(
        job.path(),
        &[
            RankFile {
                file: "tp0.json".into(),
                info: Some((0, 2)),
                devices: 0,
                kernels: vec![k(ar, 10.5, 4.25), k(generic, 20.0, 2.5), k(ar, 30.25, 4.0)],
            },
            RankFile {
                file: "tp1.json".into(),
                info: Some((1, 2)),
                devices: 0,
                kernels: vec![k(ar, 10.0, 4.5), k(generic, 21.0, 1.5), k(ar, 30.0, 4.5)],
            },
        ],
    );
    let (_t, csv, r) = collectives(job.path(), 2, &[]);
    r.assert_ok();
    let l = Table::load(&csv, "nccl_long");
    assert_eq!(l.column("collective_id"), ["0", "1", "2", "0", "1", "2"]);
    assert!(l.column("Process Group Name").iter().all(|p| *p == "all"));
    // The reference's custom rule names cross_device_reduce; the generic
    // NCCL kernel's name tells nothing.
    assert_eq!(
        l.column("Collective name"),
        ["allreduce", "", "allreduce", "allreduce", "", "allreduce"]
    );
    assert_eq!(l.cell(0, "dtype"), "BFloat16");
    assert_eq!(
        l.cell(0, "metadata"),
        "inferred from kernel name: Collective name, dtype"
    );
    assert_eq!(l.cell(1, "metadata"), "missing");
    assert_eq!(l.cell(0, "ts"), "10.5");
    let s = Table::load(&csv, "nccl_implicit_sync");
    assert_eq!(s.column("collective_id"), ["0", "1", "2"]);
    // "0": starts (10.5, 10.0): waits (0, 0.5); ends (14.75, 14.5): end skew
    // 0.25; latency 4.25. "2": starts (30.25, 30.0), ends (34.25, 34.5).
    assert_eq!(s.num(0, "skew in start time"), 0.5);
    assert_eq!(s.cell(0, "earliest arrival rank"), "1");
    assert_eq!(s.num(0, "avg_wait_time"), 0.25);
    assert_eq!(s.num(0, "skew in end time"), 0.25);
    assert_eq!(s.num(0, "comm_latency"), 4.25);
    assert_eq!(s.num(1, "skew in start time"), 1.0);
    assert_eq!(s.num(1, "comm_latency"), 1.5);
    assert_eq!(s.num(2, "rank_1_wait_time"), 0.25);
    assert_eq!(s.num(2, "skew in end time"), 0.25);
    assert_eq!(s.cell(2, "bus bw (GB/s)"), "");
    // Groups allreduce/Unknown/Unknown (8.25 µs) and Unknown/… (1.5 µs); no
    // bandwidth columns without message sizes.
    let ss = Table::load(&csv, "nccl_summary_implicit_sync");
    assert_eq!(ss.column("Collective name"), ["allreduce", "Unknown"]);
    assert_eq!(ss.column("In msg nelems"), ["Unknown", "Unknown"]);
    assert_eq!(ss.num(0, "Total comm latency (ms)"), 0.00825);
    assert!(!ss.header.iter().any(|h| h.contains("bw")));
    // No process-group ranks: every row drops out of nccl_summary_long.
    let text = std::fs::read_to_string(csv.join("nccl_summary_long.csv")).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("rank,Process Group Name,"));
}

// ---------------------------------------------------------------------------
// Finding the ranks
// ---------------------------------------------------------------------------

fn simple_kernels(offset: f64) -> Vec<Kernel> {
    vec![Kernel {
        name: "ncclKernel_AllReduce_RING_LL_Sum_float",
        ts: 100.0 + offset,
        dur: 10.0,
        stream: 7,
        meta: None,
    }]
}

fn rank_file(file: &str, info: Option<(i64, i64)>, offset: f64) -> RankFile {
    RankFile {
        file: file.into(),
        info,
        devices: 0,
        kernels: simple_kernels(offset),
    }
}

/// The start time of each rank's kernel, from nccl_long.
fn starts_by_rank(csv: &Path) -> Vec<(String, String)> {
    let l = Table::load(csv, "nccl_long");
    (0..l.rows.len())
        .map(|i| (l.cell(i, "rank").to_string(), l.cell(i, "ts").to_string()))
        .collect()
}

#[test]
fn ranks_from_file_names() {
    let job = tempfile::tempdir().unwrap();
    write_job(
        job.path(),
        &[
            rank_file("b_rank3.json", None, 3.0),
            rank_file("a_rank_1.json.gz", None, 1.0),
            rank_file("Worker2.pt.trace.json", None, 2.0),
            rank_file("job.rank-0.json", None, 0.0),
            rank_file("z_rank[4].json", None, 4.0),
        ],
    );
    std::fs::write(job.path().join("config.json"), r#"{"lr": 0.1}"#).unwrap();
    std::fs::write(job.path().join("notes.txt"), "not a trace").unwrap();
    let (_t, csv, r) = collectives(job.path(), 5, &[]);
    r.assert_ok();
    assert!(
        r.stderr.contains("config.json"),
        "the skipped file is named: {}",
        r.stderr
    );
    assert_eq!(
        starts_by_rank(&csv),
        [
            ("0", "100"),
            ("1", "101"),
            ("2", "102"),
            ("3", "103"),
            ("4", "104")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
}

#[test]
fn distributed_info_wins_over_names_and_regex_wins_over_both() {
    let job = tempfile::tempdir().unwrap();
    // Names disagree with distributedInfo: the trace knows its rank.
    write_job(
        job.path(),
        &[
            rank_file("host_gpu1_rank0.json", Some((1, 2)), 1.0),
            rank_file("host_gpu0_rank1.json", Some((0, 2)), 0.0),
        ],
    );
    let (_t, csv, r) = collectives(job.path(), 2, &[]);
    r.assert_ok();
    assert!(r.stderr.contains("warning"), "{}", r.stderr);
    assert_eq!(starts_by_rank(&csv)[0], ("0".into(), "100".into()));
    // --rank-regex overrides distributedInfo.
    let (_t, csv, r) = collectives(job.path(), 2, &["--rank-regex", r"rank(?P<rank>\d+)"]);
    r.assert_ok();
    assert_eq!(starts_by_rank(&csv)[0], ("0".into(), "101".into()));
    // The warnings name the flag the command line was given.
    assert!(
        r.stderr.contains(
            "host_gpu1_rank0.json: --rank-regex gives rank 0, distributedInfo.rank says 1; using 0"
        ),
        "{}",
        r.stderr
    );
    std::fs::copy(
        job.path().join("host_gpu0_rank1.json"),
        job.path().join("spare.json"),
    )
    .unwrap();
    let (_t, _csv, r) = collectives(job.path(), 2, &["--rank-regex", r"rank(?P<rank>\d+)"]);
    r.assert_ok();
    assert!(
        r.stderr
            .contains("ignoring 1 file(s) that --rank-regex does not match: spare.json"),
        "{}",
        r.stderr
    );
}

#[test]
fn recursive_search() {
    let job = tempfile::tempdir().unwrap();
    write_job(
        job.path(),
        &[
            rank_file("node0/rank0.json", None, 0.0),
            rank_file("node1/rank1.json.gz", None, 1.0),
        ],
    );
    let (_t, _csv, r) = collectives(job.path(), 2, &[]);
    let line = r.assert_one_error_line("--recursive");
    assert!(line.contains("no trace files"), "{line}");
    let (_t, csv, r) = collectives(job.path(), 2, &["--recursive"]);
    r.assert_ok();
    assert_eq!(starts_by_rank(&csv).len(), 2);
}

/// A rank file's name and its distributedInfo (rank, world size).
type Named = (&'static str, Option<(i64, i64)>);

/// A job of the named rank files, all kernels at the same time.
fn job_of(files: &[Named]) -> Vec<RankFile> {
    files
        .iter()
        .map(|&(file, info)| rank_file(file, info, 0.0))
        .collect()
}

#[test]
fn discovery_errors_name_the_files() {
    let two = Some((0, 2));
    // (files, world size, extra arguments, what the error line names)
    let cases: &[(&[Named], u32, &[&str], &str)] = &[
        // A missing rank.
        (
            &[("rank0.json", None), ("rank2.json", None)],
            3,
            &[],
            "rank 1 ",
        ),
        // Two files claim one rank.
        (
            &[("rank0.json", two), ("rank1.json", two)],
            2,
            &[],
            "rank1.json",
        ),
        // A trace from a job of another size.
        (
            &[("rank0.json", two), ("rank1.json", Some((1, 16)))],
            2,
            &[],
            "world_size 16",
        ),
        // No rank anywhere.
        (
            &[("rank0.json", None), ("trace_b.json", None)],
            2,
            &[],
            "trace_b.json",
        ),
        // A rank beyond the world size.
        (
            &[("rank0.json", None), ("rank5.json", None)],
            2,
            &[],
            "rank5.json",
        ),
        // --rank-regex without a group.
        (
            &[("rank0.json", None)],
            1,
            &["--rank-regex", "rank"],
            "--rank-regex",
        ),
        // An invalid --rank-regex.
        (
            &[("rank0.json", None)],
            1,
            &["--rank-regex", "(unclosed"],
            "--rank-regex",
        ),
    ];
    for &(files, world, extra, what) in cases {
        let job = tempfile::tempdir().unwrap();
        write_job(job.path(), &job_of(files));
        let (t, _csv, r) = collectives(job.path(), world, extra);
        r.assert_one_error_line(what);
        assert!(!t.path().join("csv").exists());
    }
}

#[test]
fn unreadable_traces_and_bad_directories_are_errors() {
    // A corrupt trace.
    let job = tempfile::tempdir().unwrap();
    write_job(job.path(), &[rank_file("rank0.json", None, 0.0)]);
    std::fs::write(job.path().join("rank1.json.gz"), b"\x1f\x8b\x08\x00garbage").unwrap();
    let (_t, _csv, r) = collectives(job.path(), 2, &[]);
    r.assert_one_error_line("rank1.json.gz");
    // Not a directory; an empty one.
    let (_t, _csv, r) = collectives(&job.path().join("rank0.json"), 1, &[]);
    r.assert_one_error_line("not a directory");
    let empty = tempfile::tempdir().unwrap();
    let (_t, _csv, r) = collectives(empty.path(), 1, &[]);
    r.assert_one_error_line("no trace files");
    // Usage errors exit 2.
    let r = run(tracelens().args(["collectives", "--trace-dir", ".", "--world-size", "0"]));
    assert_eq!(r.code, Some(2), "{r:?}");
}

#[test]
fn a_job_without_collectives_writes_empty_summaries() {
    let job = tempfile::tempdir().unwrap();
    let files: Vec<RankFile> = (0..2)
        .map(|r| RankFile {
            file: format!("rank{r}.json"),
            info: None,
            devices: 0,
            kernels: vec![],
        })
        .collect();
    write_job(job.path(), &files);
    let (_t, csv, r) = collectives(job.path(), 2, &[]);
    r.assert_ok();
    assert!(r.stderr.contains("no collective kernels"), "{}", r.stderr);
    let mut names = common::entries(&csv);
    names.sort();
    assert_eq!(
        names,
        [
            "findings.csv",
            "health.csv",
            "nccl_summary_implicit_sync.csv",
            "nccl_summary_long.csv"
        ]
    );
    // Nothing to match across ranks: the check cannot tell.
    let (_, rows) = common::csv_file(&csv.join("health.csv"));
    assert_eq!(rows[0][..2], ["health.rank_mismatch", "cannot_tell"]);
    assert_eq!(
        std::fs::read_to_string(csv.join("nccl_summary_long.csv")).unwrap(),
        "\n"
    );
}

#[test]
fn default_workbook_markdown_and_node_override() {
    let job = tempfile::tempdir().unwrap();
    a12_job(job.path());
    let r = run(tracelens()
        .args([
            "collectives",
            "--world-size",
            "2",
            "--gpus-per-node",
            "1",
            "--md",
            "-",
            "--trace-dir",
        ])
        .arg(job.path()));
    r.assert_ok();
    // --md alone writes no workbook; without an output option the default
    // one is written in the trace folder.
    let book = job.path().join("nccl_analysis_report.xlsx");
    assert!(!book.exists());
    run(tracelens()
        .args(["collectives", "--world-size", "2", "-q", "--trace-dir"])
        .arg(job.path()))
    .assert_ok();
    assert_eq!(
        xlsx_sheet_names(&book),
        [
            "nccl_summary_implicit_sync",
            "nccl_summary_long",
            "nccl_long",
            "nccl_implicit_sync",
            "straggler_summary",
            "nccl_summary_by_type",
            "health",
            "findings"
        ]
    );
    // The Markdown page on stdout: per type, with latency and bus bandwidth.
    assert!(
        r.stdout.starts_with("## tracelens collectives"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("| allreduce | 1 | 0.200 | 200 | 4.88 |"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("### Slowest ranks"), "{}", r.stdout);
    assert!(r.stdout.contains("### Findings"), "{}", r.stdout);
    // One GPU per node: ranks 0 and 1 on different nodes.
    let out = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .args([
            "collectives",
            "--world-size",
            "2",
            "--gpus-per-node",
            "1",
            "-q",
            "--csv",
        ])
        .arg(out.path())
        .arg("--trace-dir")
        .arg(job.path()));
    r.assert_ok();
    let s = Table::load(out.path(), "nccl_implicit_sync");
    assert!(s.column("node_span").iter().all(|v| *v == "inter_node"));
}

// ---------------------------------------------------------------------------
// Conformance with the reference (../shared/corpus)
// ---------------------------------------------------------------------------

fn conform(shared: &Path, expected: &Path, actual: &Path, extra: &[&str]) -> String {
    let o = Command::new("python3")
        .arg(shared.join("tools/conform.py"))
        .arg(expected)
        .arg(actual)
        .args(extra)
        .output()
        .expect("cannot run python3");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn coll_analysis_conforms() {
    let shared = common::shared();
    let pt = shared.join("corpus/pytorch");
    let (_t, csv, r) = common::report_csv(&pt.join("a100_allreduce_2rank.json.gz"), &[]);
    r.assert_ok();
    let out = conform(
        &shared,
        &pt.join("a100_allreduce_2rank.ref"),
        &csv,
        &["--sheets", "coll_analysis"],
    );
    assert_eq!(out.lines().last(), Some("1 passed, 0 failed"), "{out}");
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn dlrm_8_ranks_conform_and_names_are_inferred() {
    let shared = common::shared();
    let mr = shared.join("corpus/multirank");
    let (_t, csv, r) = collectives(&mr.join("dlrm_v100_8rank"), 8, &[]);
    r.assert_ok();
    let out = conform(
        &shared,
        &mr.join("dlrm_v100_8rank.ref"),
        &csv,
        &["--ignore", "Collective name,dtype"],
    );
    assert_eq!(out.lines().last(), Some("5 passed, 0 failed"), "{out}");
    // Each rank: 5 SendRecv (all-to-all) and 3 AllReduce kernels, no metadata.
    let l = Table::load(&csv, "nccl_long");
    let names = l.column("Collective name");
    assert_eq!(names.iter().filter(|n| **n == "all_to_all").count(), 40);
    assert_eq!(names.iter().filter(|n| **n == "allreduce").count(), 24);
    assert!(
        l.column("metadata")
            .iter()
            .all(|m| m.starts_with("inferred from kernel name"))
    );
    let s = Table::load(&csv, "nccl_implicit_sync");
    assert_eq!(
        s.column("Collective name"),
        [
            "all_to_all",
            "all_to_all",
            "all_to_all",
            "all_to_all",
            "allreduce",
            "all_to_all",
            "allreduce",
            "allreduce"
        ]
    );
    // AllReduce kernels are instantiated per type (Sum_float); SendRecv
    // moves bytes, so its dtype stays unknown.
    assert_eq!(s.cell(4, "dtype"), "Float");
    assert_eq!(s.cell(0, "dtype"), "");
}

// ---------------------------------------------------------------------------
// Ranks that disagree on their collectives
// ---------------------------------------------------------------------------

/// Rank `r`'s kernels: all-reduce, send/recv, all-reduce, all-reduce at
/// 100, 200, 300, 400 µs, rank r starting r µs late and ending together
/// with the others (implicit sync); `skip` leaves one out.
fn sequence_kernels(r: i64, skip: Option<usize>) -> Vec<Kernel> {
    let names = [
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t",
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        "ncclKernel_AllReduce_RING_LL_Sum_float",
    ];
    (0..4)
        .filter(|&k| Some(k) != skip)
        .map(|k| Kernel {
            name: names[k],
            ts: 100.0 * (k + 1) as f64 + r as f64,
            dur: 20.0 - r as f64,
            stream: 7,
            meta: None,
        })
        .collect()
}

/// The implicit-sync rows of a 3-rank job where `rank` lacks collective
/// `skip` (or nobody lacks one), and the run.
fn job_missing(rank: i64, skip: Option<usize>) -> (tempfile::TempDir, PathBuf, Run) {
    let job = tempfile::tempdir().unwrap();
    let files: Vec<RankFile> = (0..3)
        .map(|r| RankFile {
            file: format!("rank{r}.json"),
            info: None,
            devices: 0,
            kernels: sequence_kernels(r, skip.filter(|_| r == rank)),
        })
        .collect();
    write_job(job.path(), &files);
    let (out, csv, r) = collectives(job.path(), 3, &[]);
    drop(job);
    (out, csv, r)
}

#[test]
fn a_collective_missing_on_one_rank_is_matched_by_type_and_time_not_position() {
    let (_a, full, r) = job_missing(1, None);
    r.assert_ok();
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let (_b, cut, r) = job_missing(1, Some(2));
    r.assert_ok();
    let warning = r
        .stderr_lines()
        .into_iter()
        .find(|l| l.contains("collectives"))
        .unwrap_or_else(|| panic!("no warning: {}", r.stderr))
        .to_string();
    for part in [
        "rank 1 has 3 collectives, ranks 0, 2 have 4 collectives",
        "1 collective (2)",
    ] {
        assert!(warning.contains(part), "{part:?} not in {warning:?}");
    }
    let (f, c) = (
        Table::load(&full, "nccl_implicit_sync"),
        Table::load(&cut, "nccl_implicit_sync"),
    );
    assert_eq!(c.column("collective_id"), ["0", "1", "3"]);
    // The collectives still matched are timed exactly as with every kernel
    // present: rank 1's last all-reduce pairs with the others' last one.
    for cid in ["0", "1", "3"] {
        let (i, j) = (row_of(&f, cid), row_of(&c, cid));
        assert_eq!(f.rows[i], c.rows[j], "collective {cid}");
    }
    assert_eq!(c.cell(row_of(&c, "3"), "rank_1_ts"), "401");
    // The straggler summary counts what was matched.
    let s = Table::load(&cut, "straggler_summary");
    assert!(s.column("num_collectives").iter().all(|n| *n == "3"));
}

#[test]
fn collectives_of_different_types_at_one_position_are_named() {
    let job = tempfile::tempdir().unwrap();
    let mut swapped = sequence_kernels(1, None);
    swapped.swap(0, 1);
    let (a, b) = (swapped[0].ts, swapped[1].ts);
    (swapped[0].ts, swapped[1].ts) = (b, a);
    let files = vec![
        RankFile {
            file: "rank0.json".into(),
            info: None,
            devices: 0,
            kernels: sequence_kernels(0, None),
        },
        RankFile {
            file: "rank1.json".into(),
            info: None,
            devices: 0,
            kernels: swapped,
        },
    ];
    write_job(job.path(), &files);
    let (_t, _csv, r) = collectives(job.path(), 2, &[]);
    r.assert_ok();
    assert!(
        r.stderr
            .contains("collective 0 is allreduce on rank 0 but all_to_all on rank 1"),
        "{}",
        r.stderr
    );
}

/// The corpus job with the `k`-th ncclKernel of rank 3 dropped (in a
/// temporary copy): the `nccl_implicit_sync` and `straggler_summary` of
/// the full job and of the cut one, after checking the warning and that
/// every collective still matched is timed as with every kernel present.
fn dlrm_dropping(k: usize) -> [Table; 4] {
    let shared = common::shared();
    let src = shared.join("corpus/multirank/dlrm_v100_8rank");
    let job = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".json.gz") {
            continue;
        }
        let mut bytes = std::fs::read(&p).unwrap();
        if name.starts_with("worker3_") {
            let mut t: Value = serde_json::from_slice(&common::gunzip(&bytes)).unwrap();
            let ev = t["traceEvents"].as_array_mut().unwrap();
            let nccl: Vec<usize> = (0..ev.len())
                .filter(|&i| {
                    ev[i]["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("ncclKernel"))
                })
                .collect();
            ev.remove(nccl[k]);
            bytes = common::gzip(&serde_json::to_vec(&t).unwrap());
        }
        std::fs::write(job.path().join(&name), bytes).unwrap();
    }
    let (_a, full, r) = collectives(&src, 8, &[]);
    r.assert_ok();
    let (_b, cut, r) = collectives(job.path(), 8, &[]);
    r.assert_ok();
    assert!(
        r.stderr.contains(&format!(
            "rank 3 has 7 collectives, ranks 0-2, 4-7 have 8 collectives; matched by type, \
             size and end time instead of position; left out of the matched sheets, as seen \
             on only some ranks: 1 collective ({k})"
        )),
        "{}",
        r.stderr
    );
    let (f, c) = (
        Table::load(&full, "nccl_implicit_sync"),
        Table::load(&cut, "nccl_implicit_sync"),
    );
    assert_eq!(c.rows.len(), f.rows.len() - 1);
    for j in 0..c.rows.len() {
        let cid = c.cell(j, "collective_id");
        assert_eq!(c.rows[j], f.rows[row_of(&f, cid)], "collective {cid}");
    }
    let (fs, cs) = (
        Table::load(&full, "straggler_summary"),
        Table::load(&cut, "straggler_summary"),
    );
    assert!(cs.column("num_collectives").iter().all(|n| *n == "7"));
    [f, c, fs, cs]
}

/// One ncclKernel dropped from the middle of rank 3: the other collectives
/// keep their timing and the slowest-rank verdict stands (before, every
/// later pair shifted and the verdict could flip).
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn dlrm_with_one_kernel_dropped_keeps_the_verdict() {
    let [_, _, full, cut] = dlrm_dropping(2);
    assert_eq!(cut.cell(0, "rank"), full.cell(0, "rank"));
    assert_eq!(cut.cell(0, "times_arrived_last"), "4");
    assert_eq!(full.cell(0, "times_arrived_last"), "5");
}

/// Rank 3's first ncclKernel dropped: that collective (where most ranks
/// waited longest) leaves the verdict, which is then the one the full job
/// gives without it: the least total wait over the other collectives.
#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn dlrm_with_the_first_kernel_dropped_judges_the_rest() {
    let [f, c, _, cut] = dlrm_dropping(0);
    let total = |rank: usize| -> f64 {
        (0..c.rows.len())
            .map(|j| {
                f.num(
                    row_of(&f, c.cell(j, "collective_id")),
                    &format!("rank_{rank}_wait_time"),
                )
            })
            .sum()
    };
    let least = (0..8)
        .min_by(|&a, &b| total(a).total_cmp(&total(b)))
        .unwrap();
    assert_eq!(cut.cell(0, "rank"), least.to_string());
}

// ---------------------------------------------------------------------------
// The world size from the traces; the reference's flags
// ---------------------------------------------------------------------------

/// `tracelens collectives --trace-dir DIR --csv <tmp>/csv -q EXTRA...`,
/// without --world-size.
fn collectives_no_world(dir: &Path, extra: &[&str]) -> (tempfile::TempDir, PathBuf, Run) {
    common::collectives_csv_world(dir, None, &[&["-q"], extra].concat())
}

#[test]
fn world_size_from_distributed_info_else_from_the_rank_files() {
    // distributedInfo says 2: both ranks are read.
    let job = tempfile::tempdir().unwrap();
    write_job(
        job.path(),
        &[
            rank_file("rank0.json", Some((0, 2)), 0.0),
            rank_file("rank1.json", Some((1, 2)), 1.0),
        ],
    );
    let (_t, csv, r) = collectives_no_world(job.path(), &[]);
    r.assert_ok();
    assert_eq!(starts_by_rank(&csv).len(), 2);
    // It says 3 but only two traces: the missing rank is named, with where
    // the size came from.
    let job = tempfile::tempdir().unwrap();
    write_job(
        job.path(),
        &[
            rank_file("rank0.json", Some((0, 3)), 0.0),
            rank_file("rank1.json", Some((1, 3)), 1.0),
        ],
    );
    let (t, _csv, r) = collectives_no_world(job.path(), &[]);
    let line = r.assert_one_error_line("rank 2 ");
    assert!(line.contains("says world_size 3"), "{line}");
    assert!(!t.path().join("csv").exists());
    // No distributedInfo: the rank files are counted.
    let job = tempfile::tempdir().unwrap();
    write_job(
        job.path(),
        &[
            rank_file("rank0.json", None, 0.0),
            rank_file("rank1.json", None, 1.0),
            rank_file("rank2.json.gz", None, 2.0),
        ],
    );
    let (_t, csv, r) = collectives_no_world(job.path(), &[]);
    r.assert_ok();
    assert_eq!(starts_by_rank(&csv).len(), 3);
    // Counted, with a gap: rank 3 is outside the 3 files found.
    std::fs::remove_file(job.path().join("rank2.json.gz")).unwrap();
    write_job(job.path(), &[rank_file("rank3.json", None, 3.0)]);
    let (_t, _csv, r) = collectives_no_world(job.path(), &[]);
    let line = r.assert_one_error_line("rank3.json");
    assert!(line.contains("3 rank traces were found"), "{line}");
    // Neither a world size nor a trace: one line saying what to do.
    let job = tempfile::tempdir().unwrap();
    std::fs::write(job.path().join("config.json"), r#"{"lr": 0.1}"#).unwrap();
    let (_t, _csv, r) = collectives_no_world(job.path(), &[]);
    let line = r.assert_one_error_line("--world-size");
    assert!(line.contains("cannot tell the world size"), "{line}");
}

#[test]
fn reference_flags_are_accepted_with_the_same_meaning() {
    let job = tempfile::tempdir().unwrap();
    write_job(
        job.path(),
        &[
            rank_file("rank0.json", Some((0, 2)), 0.0),
            rank_file("rank1.json", Some((1, 2)), 1.0),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let csv = out.path().join("csv");
    let r = run(tracelens()
        .arg("collectives")
        .arg("--trace_dir")
        .arg(job.path())
        .args([
            "--world_size",
            "2",
            "--gpus_per_node",
            "1",
            "--agg_metrics",
            "max",
            "sum",
        ])
        .args([
            "--detailed_analysis",
            "--use_multiprocessing",
            "--max_workers",
            "4",
        ])
        .arg("--output_csvs_dir")
        .arg(&csv)
        .arg("-q"));
    r.assert_ok();
    let ss = Table::load(&csv, "nccl_summary_implicit_sync");
    let aggs: Vec<&String> = ss
        .header
        .iter()
        .filter(|h| h.starts_with("comm_latency_"))
        .collect();
    assert_eq!(
        aggs,
        ["comm_latency_max", "comm_latency_sum"],
        "{:?}",
        ss.header
    );
    // The default is the reference's mean, median, min, max.
    let (_t, csv, r) = collectives(job.path(), 2, &[]);
    r.assert_ok();
    let ss = Table::load(&csv, "nccl_summary_implicit_sync");
    for agg in ["mean", "median", "min", "max"] {
        let col = format!("comm_latency_{agg}");
        assert!(ss.header.contains(&col), "{col}: {:?}", ss.header);
    }
    // Flags with no equivalent: one line saying what replaces them.
    for (flag, value, says) in [
        ("--trace_pattern", Some("/t/rank_*.json"), "--trace-dir"),
        ("--trace_glob", Some("/t/**/*.json"), "--recursive"),
        ("--all2allv_heatmap", None, "not supported"),
    ] {
        let r = run(tracelens()
            .args(["collectives", "--world-size", "2", "--trace-dir"])
            .arg(job.path())
            .arg(flag)
            .args(value));
        assert_eq!(r.code, Some(2), "{flag}: {r:?}");
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{r:?}");
        assert!(lines[0].contains(flag) && lines[0].contains(says), "{r:?}");
    }
    assert_eq!(common::entries(job.path()), ["rank0.json", "rank1.json"]);
}

/// The 3-rank job of [`sequence_kernels`] in a folder, rank 1 lacking
/// collective `skip`.
fn sequence_job(skip: Option<usize>) -> tempfile::TempDir {
    let job = tempfile::tempdir().unwrap();
    let files: Vec<RankFile> = (0..3)
        .map(|r| RankFile {
            file: format!("rank{r}.json"),
            info: None,
            devices: 0,
            kernels: sequence_kernels(r, skip.filter(|_| r == 1)),
        })
        .collect();
    write_job(job.path(), &files);
    job
}

#[test]
fn json_and_strict_gate_on_the_rank_mismatch_check() {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("job.json");
    let csv = out.path().join("csv");
    let gate = |job: &Path, extra: &[&str]| {
        run(tracelens()
            .args(["collectives", "--world-size", "3", "-q", "--trace-dir"])
            .arg(job)
            .arg("--json")
            .arg(&json)
            .arg("--csv")
            .arg(&csv)
            .args(extra))
    };
    // Rank 1 lacks one of the 4 collectives: 1 of 4 left unmatched.
    let cut = sequence_job(Some(2));
    let r = gate(cut.path(), &["--strict"]);
    assert_eq!(r.code, Some(3), "{r:?}");
    assert!(
        r.stderr.contains("--strict: a health check failed"),
        "{}",
        r.stderr
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["tool"], "tracelens");
    assert_eq!(v["kind"], "collectives");
    assert_eq!(v["ranks"], 3);
    // 4 + 3 + 4 kernels; collectives 0, 1 and 3 matched.
    assert_eq!(v["collective_kernels"], 11);
    assert_eq!(v["matched_collectives"], 3);
    assert_eq!(v["health"]["verdict"], "fail");
    let check = &v["health"]["checks"][0];
    assert_eq!(check["id"], "health.rank_mismatch");
    assert_eq!(check["status"], "fail");
    assert_eq!(check["invalidates"][0], "matched_collectives");
    let ev = |name: &str| {
        check["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))["value"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(ev("min_count"), 3.0);
    assert_eq!(ev("max_count"), 4.0);
    assert_eq!(ev("first_differing_rank"), 1.0);
    assert_eq!(ev("collectives_unmatched"), 1.0);
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
    let abstained: Vec<(&str, &str)> = v["cannot_tell"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["id"].as_str().unwrap(), a["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        abstained,
        [
            ("comm.straggler", "health.rank_mismatch is fail"),
            ("comm.skew", "health.rank_mismatch is fail")
        ]
    );
    let (_, rows) = common::csv_file(&csv.join("health.csv"));
    assert_eq!(rows[0][..2], ["health.rank_mismatch", "fail"]);
    // Without --strict the same run succeeds.
    gate(cut.path(), &[]).assert_ok();
    // Every rank with its 4 collectives: the check passes, the gate too;
    // 4 collectives are too few for the arrival rules.
    let full = sequence_job(None);
    gate(full.path(), &["--strict"]).assert_ok();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["health"]["verdict"], "pass");
    assert_eq!(
        v["cannot_tell"][0]["reason"],
        "too few collectives matched across ranks: 4 (needs 8)"
    );
    // To stdout: the document alone.
    let r = run(tracelens()
        .args([
            "collectives",
            "--world-size",
            "3",
            "--json",
            "-",
            "--trace-dir",
        ])
        .arg(full.path()));
    r.assert_ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["kind"], "collectives");
}

#[test]
fn json_refuses_to_replace_a_rank_trace() {
    let job = sequence_job(None);
    let trace = job.path().join("rank0.json");
    let before = std::fs::read(&trace).unwrap();
    let r = run(tracelens()
        .args(["collectives", "--world-size", "3", "-q", "--trace-dir"])
        .arg(job.path())
        .arg("--json")
        .arg(&trace));
    assert_ne!(r.code, Some(0), "{r:?}");
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    // --json - and --md - cannot share stdout.
    let r = run(tracelens()
        .args(["collectives", "--json", "-", "--md", "-", "--trace-dir"])
        .arg(job.path()));
    r.assert_one_error_line("cannot both go to stdout");
}
