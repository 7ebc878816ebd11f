#!/usr/bin/env python3
"""Makes a larger JAX profile (an XSpace protobuf, `*.xplane.pb`) for
benchmarks: every timed event of every line repeated N times, each copy
shifted past the previous one in time (the same shift on every line, so the
host and the devices stay aligned), its `correlation_id` and `group_id`
stats offset per copy so that links stay inside their copy. Planes,
metadata, HLO modules and aggregated events are kept once.

usage: bench/scale_xplane.py IN.xplane.pb N OUT.xplane.pb
       bench/scale_xplane.py --count IN.xplane.pb   (prints its number of events)
Not a test; the output is only as realistic as its input. Needs only the
Python standard library (the protobuf wire format is read and written here).
"""
import sys

# Field numbers (tsl/profiler/protobuf/xplane.proto).
SPACE_PLANES = 1
PLANE_LINES, PLANE_STAT_METADATA = 3, 5
LINE_TIMESTAMP_NS, LINE_EVENTS, LINE_DURATION_PS = 3, 4, 9
EVENT_OFFSET_PS, EVENT_DURATION_PS, EVENT_STATS = 2, 3, 4
STAT_METADATA_ID, STAT_UINT64, STAT_INT64 = 1, 3, 4
# Stats that link events to each other, offset per copy.
LINK_STATS = ("correlation_id", "group_id")


from protowire import encode_varint, field, fields, varint  # noqa: E402,F401


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def link_stat_ids(plane):
    """Stat metadata ids of the plane whose names are in LINK_STATS."""
    ids = set()
    for number, _, entry, _ in fields(plane):
        if number != PLANE_STAT_METADATA:
            continue
        key = name = None
        for n, _, v, _ in fields(entry):
            if n == 1:
                key = v
            elif n == 2:
                name = next((bytes(x).decode() for m, _, x, _ in fields(v) if m == 2), "")
        if name in LINK_STATS:
            ids.add(key)
    return ids


def events_of(line):
    return [v for n, _, v, _ in fields(line) if n == LINE_EVENTS]


def span_of(line):
    """(first start, last end) of a line's timed events, ps since the epoch."""
    base = next((signed(v) for n, _, v, _ in fields(line) if n == LINE_TIMESTAMP_NS), 0) * 1000
    first = last = None
    for ev in events_of(line):
        off = dur = None
        for n, _, v, _ in fields(ev):
            if n == EVENT_OFFSET_PS:
                off = signed(v)
            elif n == EVENT_DURATION_PS:
                dur = signed(v)
        if off is None:
            continue
        first = base + off if first is None else min(first, base + off)
        end = base + off + (dur or 0)
        last = end if last is None else max(last, end)
    return first, last


def max_link(plane, ids):
    top = 0
    for n, _, line, _ in fields(plane):
        if n != PLANE_LINES:
            continue
        for ev in events_of(line):
            for m, _, stat, _ in fields(ev):
                if m != EVENT_STATS:
                    continue
                sid = next((v for k, _, v, _ in fields(stat) if k == STAT_METADATA_ID), None)
                if sid in ids:
                    for k, w, v, _ in fields(stat):
                        if k in (STAT_UINT64, STAT_INT64) and w == 0:
                            top = max(top, signed(v))
    return top


def shifted_event(ev, shift_ps, id_step, ids):
    """The event with its offset moved by shift_ps and its link stats by id_step;
    None for an aggregated event (no offset), kept in the first copy only."""
    out = bytearray()
    timed = False
    for n, w, v, raw in fields(ev):
        if n == EVENT_OFFSET_PS and w == 0:
            timed = True
            out += field(n, 0, signed(v) + shift_ps)
        elif n == EVENT_STATS and w == 2 and id_step:
            sid = next((x for k, _, x, _ in fields(v) if k == STAT_METADATA_ID), None)
            if sid in ids:
                stat = bytearray()
                for k, sw, x, sraw in fields(v):
                    if k in (STAT_UINT64, STAT_INT64) and sw == 0:
                        stat += field(k, 0, signed(x) + id_step)
                    else:
                        stat += sraw
                out += field(n, 2, bytes(stat))
            else:
                out += raw
        else:
            out += raw
    return bytes(out) if timed else None


def scaled_line(line, n, shift_ps, id_step, ids):
    head = bytearray()
    events = events_of(line)
    for number, wire, value, raw in fields(line):
        if number == LINE_EVENTS:
            continue
        if number == LINE_DURATION_PS and wire == 0:
            head += field(number, 0, signed(value) + (n - 1) * shift_ps)
        else:
            head += raw
    body = bytearray()
    for i in range(n):
        for ev in events:
            copy = shifted_event(ev, i * shift_ps, i * id_step, ids)
            if copy is None:
                if i == 0:
                    body += field(LINE_EVENTS, 2, bytes(ev))
                continue
            body += field(LINE_EVENTS, 2, copy)
    return bytes(head + body)


def count(path):
    """The number of events on all lines of all planes of the profile."""
    space = open(path, "rb").read()
    return sum(len(events_of(line))
               for num, _, plane, _ in fields(space) if num == SPACE_PLANES
               for n, _, line, _ in fields(plane) if n == PLANE_LINES)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--count":
        print(count(sys.argv[2]))
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, n, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if n < 1:
        sys.exit("N must be at least 1")
    space = open(src, "rb").read()
    planes = [v for num, _, v, _ in fields(space) if num == SPACE_PLANES]
    spans = [span_of(line) for p in planes for num, _, line, _ in fields(p) if num == PLANE_LINES]
    spans = [s for s in spans if s[0] is not None]
    if not spans:
        sys.exit(f"{src}: no timed events")
    first = min(s[0] for s in spans)
    last = max(s[1] for s in spans)
    shift_ps = int((last - first) * 1.01) + 1_000_000
    links = [link_stat_ids(p) for p in planes]
    id_step = max((max_link(p, ids) for p, ids in zip(planes, links)), default=0) + 1
    out = bytearray()
    k = 0
    for num, wire, value, raw in fields(space):
        if num != SPACE_PLANES:
            out += raw
            continue
        ids = links[k]
        k += 1
        plane = bytearray()
        for pn, pw, pv, praw in fields(value):
            if pn == PLANE_LINES:
                plane += field(pn, 2, scaled_line(pv, n, shift_ps, id_step, ids))
            else:
                plane += praw
        out += field(SPACE_PLANES, 2, bytes(plane))
    with open(dst, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
