#!/usr/bin/env python3
"""Makes a larger rocprofv3 Perfetto trace (`.pftrace`) for benchmarks: all
packets of the input repeated N times, each copy on writer sequences of its
own (its `trusted_packet_sequence_id` offset, so its interning and
incremental clocks start afresh) and one second later than the copy before
(BOOTTIME timestamps, clock snapshots and the slices' `begin_ns`/`end_ns`
annotations shifted). Correlation ids repeat
across copies, so `api_kernel_summary` groups every copy's launches together.

usage: bench/scale_pftrace.py IN.pftrace N OUT.pftrace
       bench/scale_pftrace.py --count IN.pftrace   (prints its number of packets)
Not a test; the output is only as realistic as its input. Needs only the
Python standard library (the protobuf wire format is read and written here).
"""
import sys

TRACE_PACKET = 1
PACKET_TIMESTAMP, PACKET_SEQUENCE, PACKET_CLOCK_SNAPSHOT, PACKET_CLOCK_ID = 8, 10, 6, 58
SNAPSHOT_CLOCKS, CLOCK_ID, CLOCK_TIMESTAMP = 1, 1, 2
PACKET_TRACK_EVENT, PACKET_INTERNED = 11, 12
INTERNED_ANNOTATION_NAMES, ENTRY_IID, ENTRY_NAME = 3, 1, 2
EVENT_ANNOTATIONS = 4
ANNOTATION_NAME_IID, ANNOTATION_UINT, ANNOTATION_INT, ANNOTATION_NAME = 1, 3, 4, 10
BOOTTIME = 6
SHIFT_NS = 1_000_000_000
TIME_ANNOTATIONS = (b"begin_ns", b"end_ns")
# Annotation name iids per (copy-independent) sequence id.
NAMES = {}


from protowire import field, fields  # noqa: E402


def shifted_snapshot(snapshot, shift):
    out = bytearray()
    for number, wire, value, raw in fields(snapshot):
        if number == SNAPSHOT_CLOCKS and wire == 2:
            clock = dict((n, v) for n, w, v, _ in fields(value) if w == 0)
            if clock.get(CLOCK_ID) == BOOTTIME:
                parts = bytearray()
                for n, w, v, r in fields(value):
                    parts += field(n, 0, v + shift) if n == CLOCK_TIMESTAMP and w == 0 else r
                out += field(number, 2, bytes(parts))
                continue
        out += raw
    return bytes(out)


def shifted_annotation(a, seq, shift):
    parsed = list(fields(a))
    name = next((v for n, w, v, _ in parsed if n == ANNOTATION_NAME and w == 2), None)
    iid = next((v for n, w, v, _ in parsed if n == ANNOTATION_NAME_IID and w == 0), None)
    if name is None and iid is not None:
        name = NAMES.get(seq, {}).get(iid)
    if name not in TIME_ANNOTATIONS:
        return a
    out = bytearray()
    for n, w, v, raw in parsed:
        if n in (ANNOTATION_UINT, ANNOTATION_INT) and w == 0:
            out += field(n, 0, v + shift)
        else:
            out += raw
    return bytes(out)


def shifted_event(event, seq, shift):
    out = bytearray()
    for n, w, v, raw in fields(event):
        if n == EVENT_ANNOTATIONS and w == 2:
            out += field(n, 2, shifted_annotation(v, seq, shift))
        else:
            out += raw
    return bytes(out)


def learn_names(interned, seq):
    for n, w, v, _ in fields(interned):
        if n == INTERNED_ANNOTATION_NAMES and w == 2:
            entry = dict((a, b) for a, _, b, _ in fields(v))
            if ENTRY_IID in entry:
                NAMES.setdefault(seq, {})[entry[ENTRY_IID]] = bytes(entry.get(ENTRY_NAME, b""))


def copy_packet(packet, k):
    """Packet `packet` as copy `k` wants it."""
    shift = k * SHIFT_NS
    parsed = list(fields(packet))
    clock = next((v for n, w, v, _ in parsed if n == PACKET_CLOCK_ID and w == 0), None)
    seq = next((v for n, w, v, _ in parsed if n == PACKET_SEQUENCE and w == 0), 0)
    for n, w, v, _ in parsed:
        if n == PACKET_INTERNED and w == 2:
            learn_names(v, seq)
    out = bytearray()
    for number, wire, value, raw in parsed:
        if number == PACKET_SEQUENCE and wire == 0:
            out += field(number, 0, value + k * 1000)
        elif number == PACKET_TIMESTAMP and wire == 0 and clock == BOOTTIME:
            out += field(number, 0, value + shift)
        elif number == PACKET_CLOCK_SNAPSHOT and wire == 2:
            out += field(number, 2, shifted_snapshot(value, shift))
        elif number == PACKET_TRACK_EVENT and wire == 2 and shift:
            out += field(number, 2, shifted_event(value, seq, shift))
        else:
            out += raw
    return bytes(out)


def packets(data):
    return [v for n, w, v, _ in fields(data) if n == TRACE_PACKET and w == 2]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--count":
        print(len(packets(open(sys.argv[2], "rb").read())))
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    data = open(sys.argv[1], "rb").read()
    n = int(sys.argv[2])
    items = packets(data)
    with open(sys.argv[3], "wb") as out:
        for k in range(n):
            out.write(b"".join(field(TRACE_PACKET, 2, copy_packet(p, k)) for p in items))


if __name__ == "__main__":
    main()
