//! Tests of the Perfetto decoder: the shared rocprofv3-like fixture against
//! its traceconv-style JSON, hand-built traces for each rule, hostile input,
//! and the sniffer.

use std::path::{Path, PathBuf};

use prost::Message;

use super::proto::{
    Clock, ClockSnapshot, CounterDescriptor, DebugAnnotation, InternedData, InternedName,
    InternedString, ProcessDescriptor, ThreadDescriptor, Trace, TracePacket, TracePacketDefaults,
    TrackDescriptor, TrackEvent, TrackEventDefaults, debug_annotation, track_event,
};
use super::*;

const PID: i32 = 100;
const TID: i32 = 101;
const PROCESS: u64 = 0x1000;
const THREAD: u64 = 0x1001;
const CHILD: u64 = 0x1002;
const CHILD_OF_THREAD: u64 = 0x1003;
const COUNTER: u64 = 0x1004;
const ORPHAN: u64 = 0x9999;

fn corpus() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/pftrace");
    assert!(
        dir.is_dir(),
        "{} was present when the tests were built but is gone: rebuild the tests",
        dir.display()
    );
    dir
}

fn packet(seq: u32) -> TracePacket {
    TracePacket {
        trusted_packet_sequence_id: Some(seq),
        ..Default::default()
    }
}

fn cleared(seq: u32, boot: u64, incremental_base: u64) -> TracePacket {
    TracePacket {
        timestamp: Some(0),
        sequence_flags: Some(1),
        trace_packet_defaults: Some(TracePacketDefaults {
            timestamp_clock_id: Some(64),
            track_event_defaults: Some(TrackEventDefaults {
                track_uuid: Some(THREAD),
            }),
        }),
        clock_snapshot: Some(ClockSnapshot {
            clocks: vec![
                Clock {
                    clock_id: Some(6),
                    timestamp: Some(boot),
                    ..Default::default()
                },
                Clock {
                    clock_id: Some(64),
                    timestamp: Some(incremental_base),
                    is_incremental: Some(true),
                    unit_multiplier_ns: Some(1),
                },
            ],
            primary_trace_clock: None,
        }),
        ..packet(seq)
    }
}

fn descriptor(seq: u32, desc: TrackDescriptor) -> TracePacket {
    TracePacket {
        timestamp: Some(0),
        sequence_flags: Some(2),
        track_descriptor: Some(desc),
        ..packet(seq)
    }
}

fn names(entries: &[(u64, &str)]) -> Vec<InternedName> {
    entries
        .iter()
        .map(|&(iid, name)| InternedName {
            iid: Some(iid),
            name: Some(name.to_string()),
        })
        .collect()
}

/// An event packet; `clock` None: the sequence default (incremental 64).
fn event(seq: u32, ts: u64, clock: Option<u32>, event: TrackEvent) -> TracePacket {
    TracePacket {
        timestamp: Some(ts),
        timestamp_clock_id: clock,
        sequence_flags: Some(2),
        track_event: Some(event),
        ..packet(seq)
    }
}

fn begin(track: Option<u64>, name: track_event::NameField) -> TrackEvent {
    TrackEvent {
        r#type: Some(1),
        track_uuid: track,
        name_field: Some(name),
        ..Default::default()
    }
}

fn end(track: Option<u64>) -> TrackEvent {
    TrackEvent {
        r#type: Some(2),
        track_uuid: track,
        ..Default::default()
    }
}

fn ann(name: debug_annotation::NameField, value: debug_annotation::Value) -> DebugAnnotation {
    DebugAnnotation {
        name_field: Some(name),
        value: Some(value),
    }
}

use debug_annotation::NameField::{Name as AName, NameIid as ANameIid};
use debug_annotation::Value as V;
use track_event::NameField::{Name, NameIid};

/// A trace exercising every rule (expectations in `hand_built_trace`).
// Packets are pushed one by one, each with a comment on what it tests.
#[allow(clippy::vec_init_then_push)]
fn hand_built() -> Trace {
    let mut p = Vec::new();
    // Tracing service: builtin clocks, MONOTONIC (3) 1 ms behind BOOTTIME.
    p.push(TracePacket {
        clock_snapshot: Some(ClockSnapshot {
            clocks: vec![
                Clock {
                    clock_id: Some(6),
                    timestamp: Some(10_000_000),
                    ..Default::default()
                },
                Clock {
                    clock_id: Some(3),
                    timestamp: Some(9_000_000),
                    ..Default::default()
                },
            ],
            primary_trace_clock: Some(6),
        }),
        ..packet(1)
    });
    // Needs incremental state before the first CLEARED: skipped (its iid
    // is defined nowhere, so reading it would fail).
    p.push(event(7, 5, Some(6), begin(Some(THREAD), NameIid(77))));
    p.push(cleared(7, 10_000_000, 10_000_000));
    p.push(descriptor(
        7,
        TrackDescriptor {
            uuid: Some(PROCESS),
            process: Some(ProcessDescriptor {
                pid: Some(PID),
                cmdline: vec!["app".into()],
                process_name: Some("app".into()),
            }),
            ..Default::default()
        },
    ));
    let thread = TrackDescriptor {
        uuid: Some(THREAD),
        parent_uuid: Some(PROCESS),
        thread: Some(ThreadDescriptor {
            pid: Some(PID),
            tid: Some(TID),
            thread_name: Some("main".into()),
        }),
        ..Default::default()
    };
    p.push(descriptor(7, thread.clone()));
    for (uuid, parent, name) in [
        (CHILD, PROCESS, "STREAM 1"),
        (CHILD_OF_THREAD, THREAD, "under the thread"),
    ] {
        p.push(descriptor(
            7,
            TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(parent),
                name: Some(name.into()),
                ..Default::default()
            },
        ));
    }
    p.push(descriptor(
        7,
        TrackDescriptor {
            uuid: Some(COUNTER),
            parent_uuid: Some(PROCESS),
            name: Some("bytes".into()),
            counter: Some(CounterDescriptor {
                unit: Some(3),
                unit_multiplier: Some(1024),
            }),
            ..Default::default()
        },
    ));
    // Repeated identical descriptor.
    p.push(descriptor(7, thread));

    // Thread track by default, +1000 on the incremental clock; one
    // annotation of each value type, interned and inline names.
    let mut first = event(
        7,
        1000,
        None,
        TrackEvent {
            category_iids: vec![1],
            debug_annotations: vec![
                ann(ANameIid(2), V::UintValue(5)),
                ann(AName("b".into()), V::BoolValue(true)),
                ann(AName("i".into()), V::IntValue(-3)),
                ann(AName("d".into()), V::DoubleValue(1.5)),
                ann(AName("s".into()), V::StringValue("x".into())),
                ann(ANameIid(1), V::UintValue(1)),
                ann(AName("p".into()), V::PointerValue(0xff)),
                ann(AName("si".into()), V::StringValueIid(1)),
            ],
            ..begin(None, NameIid(1))
        },
    );
    first.interned_data = Some(InternedData {
        event_categories: names(&[(1, "hip_api")]),
        event_names: names(&[(1, "first")]),
        debug_annotation_names: names(&[(1, "agent"), (2, "begin_ns")]),
        debug_annotation_string_values: vec![InternedString {
            iid: Some(1),
            str: Some(b"interned-str".to_vec()),
        }],
    });
    p.push(first);
    p.push(event(7, 500, None, end(None))); // 10_001_500
    // Child of the process, explicit BOOTTIME, string agent, inline category.
    p.push(event(
        7,
        10_002_000,
        Some(6),
        TrackEvent {
            category_iids: vec![1],
            categories: vec!["extra".into()],
            debug_annotations: vec![ann(ANameIid(1), V::StringValue("Agent-1".into()))],
            ..begin(Some(CHILD), NameIid(1))
        },
    ));
    p.push(event(7, 10_004_000, Some(6), end(Some(CHILD))));
    p.push(event(
        7,
        10_003_000,
        Some(6),
        TrackEvent {
            r#type: Some(4),
            track_uuid: Some(COUNTER),
            counter_value: Some(19),
            ..Default::default()
        },
    ));
    // An END with nothing open.
    p.push(event(7, 10_004_500, Some(6), end(Some(CHILD))));
    // An instant on the thread.
    p.push(event(
        7,
        10_000_500,
        Some(6),
        TrackEvent {
            r#type: Some(3),
            ..begin(Some(THREAD), Name("mark".into()))
        },
    ));
    // MONOTONIC 9_003_000 -> BOOTTIME 10_003_000, on the thread.
    p.push(event(
        7,
        9_003_000,
        Some(3),
        begin(None, Name("mono".into())),
    ));
    p.push(event(7, 9_003_010, Some(3), end(None)));
    // Child of the thread.
    p.push(event(
        7,
        10_006_000,
        Some(6),
        begin(Some(CHILD_OF_THREAD), Name("nested".into())),
    ));
    p.push(event(7, 10_006_700, Some(6), end(Some(CHILD_OF_THREAD))));
    // Never ended.
    p.push(event(
        7,
        10_005_000,
        Some(6),
        begin(None, Name("open".into())),
    ));

    // Sequence 9 interleaved: its own tables, an orphan track.
    let mut other = cleared(9, 30_000_000, 0);
    other.interned_data = Some(InternedData {
        event_names: names(&[(1, "other-seq")]),
        ..Default::default()
    });
    p.push(other);
    p.push(event(9, 40, None, begin(Some(ORPHAN), NameIid(1))));
    p.push(event(9, 60, None, end(Some(ORPHAN)))); // 30_000_100

    // Sequence 7 cleared again: iid 1 now means other names, the
    // incremental clock restarts from the new snapshot.
    let mut again = cleared(7, 20_000_000, 0);
    again.interned_data = Some(InternedData {
        event_categories: names(&[(1, "kernel_dispatch")]),
        event_names: names(&[(1, "second")]),
        ..Default::default()
    });
    p.push(again);
    p.push(event(
        7,
        100,
        None,
        TrackEvent {
            category_iids: vec![1],
            ..begin(Some(CHILD), NameIid(1))
        },
    ));
    p.push(event(7, 50, None, end(Some(CHILD)))); // 20_000_150
    Trace { packet: p }
}

fn arg(s: &Slice, key: &str) -> ArgValue {
    s.args
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("{} has no arg {key}", s.name))
        .1
        .clone()
}

#[test]
fn hand_built_trace() {
    let bytes = hand_built().encode_to_vec();
    let d = decode(&bytes).unwrap();
    let got: Vec<(&str, &str, i64, i64, i64, i64, bool)> = d
        .slices
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.cat.as_str(),
                s.pid,
                s.tid,
                s.begin_ns,
                s.end_ns,
                s.thread_track,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("mark", "", 100, 101, 10_000_500, 10_000_500, true),
            ("first", "hip_api", 100, 101, 10_001_000, 10_001_500, true),
            ("mono", "", 100, 101, 10_003_000, 10_003_010, true),
            ("open", "", 100, 101, 10_005_000, 10_005_000, true),
            (
                "first",
                "hip_api,extra",
                100,
                100,
                10_002_000,
                10_004_000,
                false
            ),
            ("nested", "", 100, 101, 10_006_000, 10_006_700, false),
            (
                "second",
                "kernel_dispatch",
                100,
                100,
                20_000_100,
                20_000_150,
                false
            ),
            ("other-seq", "", 0, 0, 30_000_040, 30_000_100, false),
        ]
    );
    let first = &d.slices[1];
    let keys: Vec<&str> = first.args.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["begin_ns", "b", "i", "d", "s", "agent", "p", "si"]);
    assert_eq!(arg(first, "begin_ns"), ArgValue::Int(5));
    assert_eq!(arg(first, "b"), ArgValue::Bool(true));
    assert_eq!(arg(first, "i"), ArgValue::Int(-3));
    assert_eq!(arg(first, "d"), ArgValue::Double(1.5));
    assert_eq!(arg(first, "s"), ArgValue::Str("x".into()));
    // ROCm <= 6.3 writers: a numeric agent; current ones: "Agent-<n>".
    assert_eq!(arg(first, "agent"), ArgValue::Int(1));
    assert_eq!(arg(&d.slices[4], "agent"), ArgValue::Str("Agent-1".into()));
    assert_eq!(arg(first, "p"), ArgValue::Str("0xff".into()));
    assert_eq!(arg(first, "si"), ArgValue::Str("interned-str".into()));
    assert_eq!(
        d.threads,
        vec![ThreadName {
            pid: 100,
            tid: 101,
            name: "main".into()
        }]
    );
    assert_eq!(d.processes, vec![(100, "app".to_string())]);
    assert_eq!(
        d.stats,
        Stats {
            packets: hand_built().packet.len() as u64,
            slices: 8,
            counter_events: 1,
            instants: 1,
            unmatched_begins: 1,
            unmatched_ends: 1,
            skipped_before_cleared: 1,
            unknown_tracks: 1,
        }
    );
}

#[test]
fn interned_ids_do_not_survive_a_clear() {
    let mut t = hand_built();
    // "first"'s annotation name iid 2 is gone after the second CLEARED.
    t.packet.push(event(
        7,
        10,
        None,
        TrackEvent {
            debug_annotations: vec![ann(ANameIid(2), V::UintValue(1))],
            ..begin(None, Name("late".into()))
        },
    ));
    let err = decode(&t.encode_to_vec()).unwrap_err();
    assert!(
        matches!(
            err,
            PftraceError::UnknownIid {
                table: "debug_annotation_names",
                iid: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn deprecated_cleared_field_resets_too() {
    let mut clear = cleared(5, 1_000, 1_000);
    clear.sequence_flags = Some(0);
    clear.incremental_state_cleared = Some(true);
    clear.interned_data = Some(InternedData {
        event_names: names(&[(3, "old-style")]),
        ..Default::default()
    });
    let t = Trace {
        packet: vec![
            clear,
            event(5, 7, None, begin(Some(ORPHAN), NameIid(3))),
            event(5, 3, None, end(Some(ORPHAN))),
        ],
    };
    let d = decode(&t.encode_to_vec()).unwrap();
    assert_eq!(d.stats.skipped_before_cleared, 0);
    assert_eq!(d.slices.len(), 1);
    assert_eq!(d.slices[0].name, "old-style");
    assert_eq!((d.slices[0].begin_ns, d.slices[0].end_ns), (1_007, 1_010));
}

#[test]
fn an_event_on_an_unconverted_clock_is_an_error() {
    let t = Trace {
        packet: vec![event(3, 5, Some(70), begin(Some(ORPHAN), Name("x".into())))],
    };
    // The sequence has no CLEARED packet but this one does not need it.
    let mut t2 = t.clone();
    t2.packet[0].sequence_flags = None;
    let err = decode(&t2.encode_to_vec()).unwrap_err();
    assert!(
        matches!(err, PftraceError::UnknownClock { clock: 70, .. }),
        "{err}"
    );
    // Skipped (needs state, no CLEARED yet): no error.
    assert_eq!(
        decode(&t.encode_to_vec())
            .unwrap()
            .stats
            .skipped_before_cleared,
        1
    );
}

#[test]
fn empty_input_is_an_empty_trace() {
    let d = decode(&[]).unwrap();
    assert!(d.slices.is_empty());
    assert_eq!(d.stats, Stats::default());
}

#[test]
fn a_cut_packet_is_truncated() {
    let bytes = hand_built().encode_to_vec();
    let err = decode(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(matches!(err, PftraceError::Truncated { .. }), "{err}");
    assert!(err.to_string().starts_with("truncated Perfetto trace"));
}

/// Every prefix, and many random corruptions, of `bytes` decode or fail
/// without panicking.
fn survives_hostile_versions(bytes: &[u8]) {
    for n in 0..bytes.len() {
        let _ = decode(&bytes[..n]);
    }
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..2000 {
        let mut b = bytes.to_vec();
        for _ in 0..1 + next() % 4 {
            let at = (next() % b.len() as u64) as usize;
            b[at] ^= 1 << (next() % 8);
        }
        let _ = decode(&b);
        let _ = sniff(&b);
    }
}

#[test]
fn hostile_hand_built_input_does_not_panic() {
    survives_hostile_versions(&hand_built().encode_to_vec());
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn hostile_fixture_input_does_not_panic() {
    let bytes = std::fs::read(corpus().join("rocprofv3_like.pftrace")).unwrap();
    survives_hostile_versions(&bytes);
}

fn xplane() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/xplane/small.xplane.pb");
    std::fs::read(path).unwrap()
}

#[test]
fn sniff_tells_perfetto_from_xplane() {
    let hand = hand_built().encode_to_vec();
    assert!(sniff(&hand));
    let mut seq_first = hand_built();
    seq_first.packet.remove(0);
    assert!(sniff(&seq_first.encode_to_vec()));
    // A head that cuts the first packet after its sequence id.
    let one = Trace {
        packet: vec![event(2, 5, Some(6), begin(Some(1), Name("n".into())))],
    }
    .encode_to_vec();
    assert!(sniff(&one[..one.len() / 2]));

    let x = xplane();
    assert_eq!(x[0], 0x0a);
    assert!(!sniff(&x));
    assert!(!sniff(&x[..x.len().min(64)]));
    let built = crate::load::xplane::proto::RawSpace {
        planes: vec![crate::load::xplane::proto::RawPlane {
            id: 3,
            name: "/device:GPU:0".into(),
            lines: vec![prost::bytes::Bytes::from_static(b"\x08\x01")],
            ..Default::default()
        }],
    }
    .encode_to_vec();
    assert!(!sniff(&built));
    assert!(!sniff(br#"{"traceEvents":[]}"#));
    assert!(!sniff(b""));
    assert!(!sniff(b"\x0a"));
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn sniff_accepts_the_fixture() {
    let bytes = std::fs::read(corpus().join("rocprofv3_like.pftrace")).unwrap();
    assert!(sniff(&bytes));
    assert!(sniff(&bytes[..bytes.len().min(4096)]));
}

/// Two JSON values equal, numbers compared as numbers.
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a, b) {
        (serde_json::Value::Number(x), serde_json::Value::Number(y)) => {
            match (x.as_i128(), y.as_i128()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        _ => a == b,
    }
}

fn json_args(args: &[(String, ArgValue)]) -> serde_json::Map<String, serde_json::Value> {
    args.iter()
        .map(|(k, v)| {
            let v = match v {
                ArgValue::Bool(b) => serde_json::Value::from(*b),
                ArgValue::Int(i) => serde_json::Value::from(*i),
                ArgValue::Double(d) => serde_json::Value::from(*d),
                ArgValue::Str(s) => serde_json::Value::from(s.as_str()),
            };
            (k.clone(), v)
        })
        .collect()
}

/// Checks the decoding of `bytes` against the traceconv-style JSON `text`
/// made from the same trace by the independent converter: metadata, and
/// slice by slice (order, category, name, pid/tid, times, args). A slice
/// the JSON leaves open (`B`, or a `b` with no `e`) must be kept with zero
/// length. Returns the decoding.
fn matches_traceconv_json(bytes: &[u8], text: &str, what: &str) -> Decoded {
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let events = json["traceEvents"].as_array().unwrap();

    // Expected slices: X and I as they are; b with the ts of the e that
    // closes it (innermost open b of the same async id).
    let mut expected: Vec<(serde_json::Value, Option<i64>)> = Vec::new();
    let mut open: std::collections::HashMap<String, Vec<usize>> = Default::default();
    let mut threads = Vec::new();
    let mut processes = Vec::new();
    for e in events {
        let id = e["id2"]["local"].to_string();
        match e["ph"].as_str().unwrap() {
            "M" if e["name"] == "thread_name" => threads.push(ThreadName {
                pid: e["pid"].as_i64().unwrap(),
                tid: e["tid"].as_i64().unwrap(),
                name: e["args"]["name"].as_str().unwrap().to_string(),
            }),
            "M" if e["name"] == "process_name" => processes.push((
                e["pid"].as_i64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )),
            "X" => expected.push((e.clone(), e["dur"].as_i64())),
            "I" => expected.push((e.clone(), Some(0))),
            "B" => expected.push((e.clone(), None)),
            "b" => {
                open.entry(id).or_default().push(expected.len());
                expected.push((e.clone(), None));
            }
            "e" => {
                let i = open.get_mut(&id).and_then(Vec::pop).expect("e without b");
                let b = &mut expected[i];
                assert_eq!(b.0["name"], e["name"]);
                b.1 = Some(e["ts"].as_i64().unwrap() - b.0["ts"].as_i64().unwrap());
            }
            other => panic!("{what}: unexpected ph {other}"),
        }
    }

    let d = decode(bytes).unwrap();
    assert_eq!(d.threads, threads, "{what}");
    assert_eq!(d.processes, processes, "{what}");
    assert_eq!(d.slices.len(), expected.len(), "{what}");
    for (i, (s, (e, dur))) in d.slices.iter().zip(&expected).enumerate() {
        let ctx = format!("{what}: slice {i} ({})", s.name);
        let thread_ph = matches!(e["ph"].as_str(), Some("X" | "I" | "B"));
        assert_eq!(s.thread_track, thread_ph, "{ctx}");
        assert_eq!(s.cat, e["cat"].as_str().unwrap(), "{ctx}");
        assert_eq!(s.name, e["name"].as_str().unwrap(), "{ctx}");
        assert_eq!(s.pid, e["pid"].as_i64().unwrap(), "{ctx}");
        assert_eq!(s.tid, e["tid"].as_i64().unwrap(), "{ctx}");
        assert_eq!(
            s.begin_ns.div_euclid(1000),
            e["ts"].as_i64().unwrap(),
            "{ctx}"
        );
        let got_dur = if s.thread_track {
            (s.end_ns - s.begin_ns).div_euclid(1000)
        } else {
            s.end_ns.div_euclid(1000) - s.begin_ns.div_euclid(1000)
        };
        match dur {
            Some(dur) => assert_eq!(got_dur, *dur, "{ctx}"),
            None => assert_eq!(s.end_ns, s.begin_ns, "{ctx}: never ended"),
        }
        let got = json_args(&s.args);
        let want = e["args"].as_object().unwrap();
        let got_keys: Vec<&String> = got.keys().collect();
        let want_keys: Vec<&String> = want.keys().collect();
        assert_eq!(
            got_keys.len(),
            want_keys.len(),
            "{ctx}: {got_keys:?} vs {want_keys:?}"
        );
        for (k, v) in want {
            let g = got.get(k).unwrap_or_else(|| panic!("{ctx}: no arg {k}"));
            assert!(same(g, v), "{ctx}: arg {k}: {g} vs {v}");
        }
    }
    d
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn fixture_matches_traceconv_json() {
    let dir = corpus();
    let bytes = std::fs::read(dir.join("rocprofv3_like.pftrace")).unwrap();
    let text = std::fs::read_to_string(dir.join("rocprofv3_like.traceconv_style.json")).unwrap();
    let d = matches_traceconv_json(&bytes, &text, "rocprofv3_like");
    assert_eq!(d.slices.len(), 19, "11 API slices, 6 kernels, 2 copies");
    assert_eq!(d.stats.counter_events, 3);
    assert_eq!(d.stats.unmatched_begins + d.stats.unmatched_ends, 0);
    assert_eq!(d.stats.unknown_tracks, 0);
}

/// Every fixture of `testdata/pftrace/` against its traceconv-style JSON.
#[test]
fn testdata_fixtures_match_traceconv_json() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pftrace");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".pftrace").map(str::to_string)
        })
        .collect();
    names.sort();
    // The nine made by tools/make_pftrace_fixtures.py and the corpus
    // fixture's copy.
    assert_eq!(names.len(), 10, "{names:?}");
    for name in &names {
        let bytes = std::fs::read(dir.join(format!("{name}.pftrace"))).unwrap();
        let text = std::fs::read_to_string(dir.join(format!("{name}.traceconv.json"))).unwrap();
        let d = matches_traceconv_json(&bytes, &text, name);
        let st = &d.stats;
        let (counters, unmatched) = match name.as_str() {
            "counters" => (9, (0, 0)),
            "corpus_fixture" => (3, (0, 0)),
            "unmatched" => (0, (2, 1)),
            _ => (0, (0, 0)),
        };
        assert_eq!(st.counter_events, counters, "{name}");
        assert_eq!(
            (st.unmatched_begins, st.unmatched_ends),
            unmatched,
            "{name}"
        );
        let skipped = u64::from(name == "interning_reset");
        assert_eq!(st.skipped_before_cleared, skipped, "{name}");
        assert_eq!(st.unknown_tracks, 0, "{name}");
    }
}

#[test]
fn packets_cut_by_chunk_ends_decode_as_whole_input_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pftrace");
    for name in [
        "corpus_fixture",
        "multi_sequence",
        "interning_reset",
        "clocks",
    ] {
        let bytes = std::fs::read(dir.join(format!("{name}.pftrace"))).unwrap();
        let want = decode(&bytes).unwrap();
        // One byte at a time, a few bytes (packets cut in their key, their
        // length and their body), and more than the whole input.
        for chunk in [1, 2, 7, 100, 1 << 20] {
            let (data, placed, meta, read) = decode_in_chunks(&bytes[..], chunk).unwrap();
            assert_eq!(read, bytes.len() as u64, "{name} by {chunk}");
            assert_eq!(meta.stats, want.stats, "{name} by {chunk}");
            let got: Vec<(String, i64, i64)> = placed
                .iter()
                .map(|p| {
                    let name = data.text(p.pending.name).to_string();
                    (name, p.pending.begin_ns, p.pending.end_ns.unwrap())
                })
                .collect();
            let expected: Vec<(String, i64, i64)> = want
                .slices
                .iter()
                .map(|s| (s.name.clone(), s.begin_ns, s.end_ns))
                .collect();
            assert_eq!(got, expected, "{name} by {chunk}");
        }
        // A cut input fails at the same byte however it is read.
        let cut = &bytes[..bytes.len() - 2];
        let whole = decode(cut).unwrap_err().to_string();
        for chunk in [1, 3, 64] {
            let by = decode_in_chunks(cut, chunk).err().map(|e| e.to_string());
            assert_eq!(by.as_deref(), Some(whole.as_str()), "{name} by {chunk}");
        }
    }
}

#[test]
fn interned_ids_small_and_large_are_found_and_redefined() {
    let mut t = IidTable::default();
    t.insert(1, 10);
    t.insert(2, 20);
    // Far beyond the entries: hashed, so a hostile id costs no memory.
    t.insert(1 << 40, 30);
    t.insert(5000, 40);
    assert!(t.by_index.len() <= 3, "{}", t.by_index.len());
    assert_eq!(
        [t.get(1), t.get(2), t.get(1 << 40), t.get(5000), t.get(3)],
        [Some(10), Some(20), Some(30), Some(40), None]
    );
    // Redefined (an interning reset writes ids again): the last one wins,
    // also for an id hashed before the index reached it.
    for i in 0..3000 {
        t.insert(100 + i, 1);
    }
    t.insert(5000, 41);
    t.insert(1, 11);
    assert_eq!((t.get(5000), t.get(1)), (Some(41), Some(11)));
}
