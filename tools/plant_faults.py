#!/usr/bin/env python3
"""Plants known faults in real PyTorch/Kineto profiler traces, so that the
health checks and findings of tracelens can be tested on traces whose fault
is known.

usage:
    tools/plant_faults.py FAULT IN.json[.gz] OUT.json[.gz] [--seed N] [--amount X] [--force]
    tools/plant_faults.py --list

FAULT is one of the names --list prints (one line each, with the id of the
health check or finding that must fire). OUT is written gzipped when its name
ends with .gz. Beside it goes OUT.planted.json, the manifest:

    {"fault": NAME, "expected": [IDS], "source": IN's basename, "seed": N,
     "details": {...what was changed: counts, names, time added in us,
                 correlation ids, External ids, kernel names...}}

OUT must not be IN (refused, exit 2), and an existing OUT is not overwritten
without --force. The output is the same byte for byte for the same input,
fault, seed and amount. `slow_rank` takes a folder of rank traces (or a glob)
and writes a folder.

When events are shifted, the trace is kept consistent: host events at or after
the point move, host events spanning it (ProfilerStep#N, python frames, the
enclosing ops) grow, GPU events move with their launch (by correlation), and
the ac2g flows move with the event they sit on. Standard library only.
"""
import argparse
import bisect
import copy
import glob
import gzip
import json
import os
import random
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}
WORK_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}
GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::linear", "aten::matmul")
COLLECTIVE_WORDS = ("nccl", "rccl", "allreduce", "allgather", "reducescatter",
                    "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast")
SHAPE_KEYS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")


# ---------------------------------------------------------------- helpers

def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def dump(doc, path):
    data = json.dumps(doc, separators=(",", ":")).encode()
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with open(path, "wb") as f:
        f.write(data)


BASE = [0]  # the time subtracted while planting (see rebase)


def rebase(doc):
    """Subtracts the trace's first whole microsecond from every timestamp, so
    that shifts add and round exactly (a double near 1e12 us holds only about
    1 ns); unbase adds it back. Returns it."""
    stamps = [e["ts"] for e in evs(doc) if isinstance(e.get("ts"), (int, float))]
    base = int(min(stamps)) if stamps else 0
    for e in evs(doc):
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] -= base
    BASE[0] = base
    return base


def unbase(doc, base):
    for e in evs(doc):
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] += base


def absolute(t):
    """A rebased time as in the input, for the manifest."""
    return round(t + BASE[0], 3)


def evs(doc):
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def r3(x):
    return round(x, 3)


def end(e):
    return e["ts"] + e.get("dur", 0)


def xs(doc, cats):
    return [e for e in evs(doc) if e.get("ph") == "X" and e.get("cat") in cats]


def corr(e):
    return (e.get("args") or {}).get("correlation")


def launch_map(doc):
    """correlation id -> host launch (runtime/driver call)."""
    return {corr(e): e for e in xs(doc, LAUNCH_CATS) if corr(e) is not None}


def gpu_pids(doc):
    return {e.get("pid") for e in xs(doc, GPU_CATS)}


def new_ids(doc):
    """The next free correlation id and External id."""
    c = x = 0
    for e in evs(doc):
        a = e.get("args") or {}
        if isinstance(a.get("correlation"), int):
            c = max(c, a["correlation"])
        if isinstance(a.get("External id"), int):
            x = max(x, a["External id"])
        if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int):
            c = max(c, e["id"])
    return c + 1, x + 1


def steps(doc):
    st = [e for e in xs(doc, {"user_annotation"}) if e.get("name", "").startswith("ProfilerStep#")]
    return sorted(st, key=lambda e: e["ts"])


def main_thread(doc):
    st = steps(doc)
    if st:
        return st[-1]["pid"], st[-1]["tid"]
    count = {}
    for e in xs(doc, {"cpu_op"}):
        count[(e["pid"], e["tid"])] = count.get((e["pid"], e["tid"]), 0) + 1
    if not count:
        raise SystemExit("plant_faults: the trace has no cpu_op events")
    return max(sorted(count, key=str), key=lambda k: count[k])


def top_ops(doc, lo, hi):
    """Main-thread cpu_ops in [lo, hi] that no other cpu_op encloses."""
    pid, tid = main_thread(doc)
    ops = sorted((e for e in xs(doc, {"cpu_op"}) if e["pid"] == pid and e["tid"] == tid),
                 key=lambda e: (e["ts"], -e.get("dur", 0)))
    out, edge = [], float("-inf")
    for e in ops:
        if e["ts"] >= edge:
            edge = end(e)
            if lo <= e["ts"] and end(e) <= hi:
                out.append(e)
    return out


def step_ops(doc):
    """The last ProfilerStep#N holding top-level ops (None: the whole trace)
    and its top-level ops."""
    for st in reversed(steps(doc)):
        ops = top_ops(doc, st["ts"], end(st))
        if ops:
            return st, ops
    ops = top_ops(doc, float("-inf"), float("inf"))
    if not ops:
        raise SystemExit("plant_faults: the trace has no top-level cpu_op")
    return None, ops


def shift(doc, t0, delta, gpu_delta=None):
    """Moves everything from host time t0 on by delta us: host events at or
    after t0 move, host events spanning t0 grow; GPU events launched at or
    after t0 move by gpu_delta (default delta), as do their ac2g flows; GPU
    events without a launch follow the time rule. Returns the moved
    correlation ids."""
    gpu_delta = delta if gpu_delta is None else gpu_delta
    lm = launch_map(doc)
    gp = gpu_pids(doc)
    moved = {c for c, e in lm.items() if e["ts"] >= t0}
    for e in evs(doc):
        ph = e.get("ph")
        if ph == "M" or "ts" not in e:
            continue
        c = corr(e) if ph == "X" else e.get("id")
        on_gpu = e.get("cat") in GPU_CATS or (ph == "f" and e.get("pid") in gp)
        if on_gpu and c in lm:
            if c in moved:
                e["ts"] = r3(e["ts"] + gpu_delta)
            continue
        d = gpu_delta if on_gpu else delta
        if e["ts"] >= t0:
            e["ts"] = r3(e["ts"] + d)
        elif ph == "X" and end(e) > t0:
            e["dur"] = r3(e["dur"] + d)
    return moved


def drain_time(doc, t):
    """When the GPU finishes the work launched before host time t."""
    lm = launch_map(doc)
    ends = [end(g) for g in xs(doc, WORK_CATS) if corr(g) in lm and lm[corr(g)]["ts"] < t]
    return max(ends, default=t)


def stretch(doc, kernel, factor):
    """Lengthens one GPU event by factor; later GPU events of its stream (and
    their flows) move by the time added. Returns the time added (us)."""
    extra = kernel["dur"] * (factor - 1)
    old_end = end(kernel)
    stream = (kernel.get("args") or {}).get("stream")
    moved = set()
    for e in evs(doc):
        if e is kernel or e.get("ph") != "X" or e.get("cat") not in GPU_CATS:
            continue
        if e["pid"] != kernel["pid"] or (e.get("args") or {}).get("stream", stream) != stream:
            continue
        if e["ts"] >= old_end:
            e["ts"] = r3(e["ts"] + extra)
            moved.add(corr(e))
        elif end(e) > kernel["ts"] and e.get("cat") == "gpu_user_annotation":
            e["dur"] = r3(e["dur"] + extra)
    for e in evs(doc):
        if e.get("ph") == "f" and e.get("id") in moved and e["pid"] == kernel["pid"]:
            e["ts"] = r3(e["ts"] + extra)
    kernel["dur"] = r3(kernel["dur"] + extra)
    return r3(extra)


def kernel_index(doc):
    """For op_kernels: per host thread, its launches sorted by time, and the
    kernels of each correlation id."""
    by_c = {}
    for g in xs(doc, {"kernel"}):
        by_c.setdefault(corr(g), []).append(g)
    lanes = {}
    for la in sorted(xs(doc, LAUNCH_CATS), key=lambda e: e["ts"]):
        if corr(la) in by_c:
            lanes.setdefault((la["pid"], la["tid"]), []).append(la)
    return {k: ([e["ts"] for e in v], v) for k, v in lanes.items()}, by_c


def op_kernels(op, index):
    """The kernels whose launch lies inside op (same thread)."""
    lanes, by_c = index
    ts, lane = lanes.get((op["pid"], op["tid"]), ([], []))
    lo, hi = bisect.bisect_left(ts, op["ts"]), bisect.bisect_right(ts, end(op))
    return [g for la in lane[lo:hi] for g in by_c[corr(la)]]


def shape_groups(doc, names=None):
    """(op name, Input Dims) -> its calls, for the cpu_ops with shapes."""
    groups = {}
    for e in xs(doc, {"cpu_op"}):
        dims = (e.get("args") or {}).get("Input Dims")
        if dims is None or (names and e["name"] not in names):
            continue
        groups.setdefault((e["name"], json.dumps(dims)), []).append(e)
    return groups


def flow(ph, c, e):
    f = {"ph": ph, "id": c, "pid": e["pid"], "tid": e["tid"], "ts": e["ts"],
         "cat": "ac2g", "name": "ac2g"}
    if ph == "f":
        f["bp"] = "e"
    return f


def hip(doc):
    return any(e.get("name", "").startswith("hip") for e in xs(doc, LAUNCH_CATS))


def sort_events(doc):
    evs(doc).sort(key=lambda e: (e.get("ph") != "M", e.get("ts", 0)))


# ---------------------------------------------------------------- faults

def dropped_kernels(doc, rng, amount):
    """Removes the kernels of a contiguous time window holding about
    `amount` (default 0.3) of all kernels; their launches and flows stay."""
    amount = 0.3 if amount is None else amount
    ks = sorted(xs(doc, {"kernel"}), key=lambda e: e["ts"])
    n = max(1, int(round(len(ks) * amount)))
    start = rng.randint(0, len(ks) - n)
    gone = ks[start:start + n]
    ids = {id(e) for e in gone}
    doc["traceEvents"] = [e for e in evs(doc) if id(e) not in ids]
    return {"kernels_before": len(ks), "removed": n,
            "window_us": [absolute(gone[0]["ts"]), absolute(end(gone[-1]))],
            "correlation_ids": [corr(e) for e in gone],
            "kernel_names": sorted({e["name"] for e in gone})}


def overlapping_kernels(doc, rng, amount):
    """On the busiest stream, makes up to `amount` (default 50) pairs of
    neighbour kernels overlap by half the first one's duration: the second is
    moved earlier, or, where that would start it before its launch call, the
    first is moved later (the pairs are disjoint, so no move undoes another).
    The flow ends on the moved kernels move with them."""
    count = 50 if amount is None else int(amount)
    by = {}
    for k in xs(doc, {"kernel"}):
        by.setdefault((k["pid"], (k.get("args") or {}).get("stream")), []).append(k)
    key = max(sorted(by, key=str), key=lambda s: len(by[s]))
    line = sorted(by[key], key=lambda e: e["ts"])
    lm = launch_map(doc)
    pairs = [(line[i - 1], line[i]) for i in range(1, len(line), 2)
             if line[i - 1]["dur"] > 0 and line[i]["ts"] >= end(line[i - 1])]
    rng.shuffle(pairs)
    chosen = sorted(pairs[:count], key=lambda p: p[0]["ts"])
    flows = {e["id"]: e for e in evs(doc) if e.get("ph") == "f" and e.get("pid") == key[0]}
    moved = []
    for prev, k in chosen:
        half = prev["dur"] / 2
        la = lm.get(corr(k))
        if la is None or prev["ts"] + half > la["ts"]:
            who, new_ts = k, r3(prev["ts"] + half)
        else:
            who, new_ts = prev, r3(k["ts"] - half)
        f = flows.get(corr(who))
        if f is not None and f["ts"] == who["ts"]:
            f["ts"] = new_ts
        moved.append({"correlation": corr(who), "name": who["name"],
                      "moved_us": r3(new_ts - who["ts"]), "overlap_us": r3(half)})
        who["ts"] = new_ts
    return {"stream": key[1], "pid": key[0], "kernels_moved": len(moved), "kernels": moved}


def stripped_shapes(doc, rng, amount):
    """Deletes Input Dims, Input type, Input Strides and Concrete Inputs from
    the args of every cpu_op."""
    changed = 0
    for e in xs(doc, {"cpu_op"}):
        a = e.get("args") or {}
        if any(k in a for k in SHAPE_KEYS):
            changed += 1
        for k in SHAPE_KEYS:
            a.pop(k, None)
    return {"ops_changed": changed, "keys_removed": list(SHAPE_KEYS)}


def broken_links(doc, rng, amount):
    """For about `amount` (default 0.3) of the launches that have a GPU
    event, removes the ac2g flow events and the GPU event's correlation arg."""
    amount = 0.3 if amount is None else amount
    lm = launch_map(doc)
    linked = sorted({corr(g) for g in xs(doc, WORK_CATS) if corr(g) in lm})
    n = max(1, int(round(len(linked) * amount)))
    cut = set(rng.sample(linked, n))
    names = set()
    for g in xs(doc, WORK_CATS):
        if corr(g) in cut:
            names.add(g["name"])
            del g["args"]["correlation"]
    doc["traceEvents"] = [e for e in evs(doc)
                          if not (e.get("ph") in ("s", "f") and e.get("cat") == "ac2g"
                                  and e.get("id") in cut)]
    return {"launches_linked_before": len(linked), "unlinked": n,
            "correlation_ids": sorted(cut), "kernel_names": sorted(names)}


def clock_skew(doc, rng, amount):
    """Moves every GPU event (and the flow ends on them) earlier by the
    largest launch-to-start lag plus `amount` us (default 50), so every GPU
    event starts before its launch call, as with an unsynchronised GPU clock."""
    margin = 50.0 if amount is None else amount
    lm = launch_map(doc)
    lags = [g["ts"] - lm[corr(g)]["ts"] for g in xs(doc, WORK_CATS) if corr(g) in lm]
    delta = r3(max(lags) + margin)
    gp = gpu_pids(doc)
    n = 0
    for e in evs(doc):
        if (e.get("ph") == "X" and e.get("cat") in GPU_CATS) or \
                (e.get("ph") == "f" and e.get("pid") in gp):
            e["ts"] = r3(e["ts"] - delta)
            n += 1
    return {"shift_us": -delta, "max_lag_us": r3(max(lags)), "events_moved": n,
            "launches_checked": len(lags)}


def truncated(doc, rng, amount):
    """Cuts the trace at `amount` (default 0.7) of the last ProfilerStep#N:
    events starting after the cut are dropped, events running across it end
    at it, and the step keeps its full length, past the trace's last event."""
    frac = 0.7 if amount is None else amount
    st = steps(doc)
    if not st:
        raise SystemExit("truncated: the trace has no ProfilerStep#N annotation")
    step = st[-1]
    cut = r3(step["ts"] + frac * step["dur"])
    keep = [e for e in evs(doc) if e.get("ph") == "M" or e.get("ts", 0) <= cut]
    dropped = len(evs(doc)) - len(keep)
    kept_ids = {id(e) for e in keep}
    gone_k = [e for e in xs(doc, {"kernel"}) if id(e) not in kept_ids]
    clipped = 0
    for e in keep:
        if e.get("ph") == "X" and end(e) > cut and e is not step \
                and not (e.get("cat") == "gpu_user_annotation" and e["name"] == step["name"]):
            e["dur"] = r3(cut - e["ts"])
            clipped += 1
    doc["traceEvents"] = keep
    return {"step": step["name"], "cut_us": absolute(cut), "step_end_us": absolute(end(step)),
            "events_dropped": dropped, "events_clipped": clipped,
            "kernels_dropped": len(gone_k)}


def host_gaps(doc, rng, amount):
    """In the last ProfilerStep, inserts a host stall of `amount` ms (default
    5) before a top-level op: a cpu_op "planted_host_stall", during which the
    GPU runs out of work and idles; everything later moves by the stall."""
    ms = 5.0 if amount is None else amount
    delta = r3(ms * 1000)
    st, ops = step_ops(doc)
    ops = ops[len(ops) // 5: max(len(ops) // 5 + 1, 4 * len(ops) // 5)]
    at = rng.choice(ops)
    t0 = at["ts"]
    drain = drain_time(doc, t0)
    moved = shift(doc, t0, delta)
    _, ext = new_ids(doc)
    evs(doc).append({"ph": "X", "cat": "cpu_op", "name": "planted_host_stall",
                     "pid": at["pid"], "tid": at["tid"], "ts": t0, "dur": delta,
                     "args": {"External id": ext, "Record function id": 0}})
    sort_events(doc)
    return {"step": st["name"] if st else None, "at_us": absolute(t0), "before_op": at["name"],
            "stall_us": delta, "gpu_idle_us": r3(t0 + delta - max(drain, t0)),
            "gpu_events_moved": len(moved), "external_id": ext}


def inserted_syncs(doc, rng, amount):
    """After `amount` (default 5) kernel launches of the last step, inserts a
    cudaDeviceSynchronize (hipDeviceSynchronize on ROCm) on the launching
    thread, 1 us after the launch returns, that lasts until the GPU queue
    drains plus 30 us in which the GPU idles while the host waits; everything
    later moves by the sync."""
    n = 5 if amount is None else int(amount)
    tail = 30.0
    st = steps(doc)
    lo, hi = (st[-1]["ts"], end(st[-1])) if st else (float("-inf"), float("inf"))
    lm = launch_map(doc)
    work = {corr(g) for g in xs(doc, WORK_CATS)}
    cands = sorted((la for c, la in lm.items() if c in work and lo <= la["ts"] and end(la) < hi),
                   key=lambda e: e["ts"])
    chosen = sorted(rng.sample(cands, min(n, len(cands))), key=lambda e: -e["ts"])
    name = "hipDeviceSynchronize" if hip(doc) else "cudaDeviceSynchronize"
    added = []
    for la in chosen:
        t = r3(end(la) + 1.0)
        wait = max(0.0, drain_time(doc, t) - t)
        dur = r3(wait + tail)
        shift(doc, t, dur)
        c, _ = new_ids(doc)
        sync = {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": la["pid"],
                "tid": la["tid"], "ts": t, "dur": dur, "args": {"cbid": 165, "correlation": c}}
        evs(doc).extend([sync, flow("s", c, sync)])
        added.append({"after_launch": la["name"], "launch_correlation": corr(la), "ts": absolute(t),
                      "dur_us": dur, "gpu_idle_us": tail, "correlation": c})
    sort_events(doc)
    added.reverse()
    return {"syncs_inserted": len(added), "name": name,
            "time_added_us": r3(sum(a["dur_us"] for a in added)), "syncs": added}


def split_kernels(doc, rng, amount):
    """Splits a quarter of the kernels that have a launch of their own (at
    least 10, at most 200; kernels of a graph launch are left alone) into
    `amount` (default 8) kernels of 2 us each, each with its own launch
    (launches 5-10 us apart), correlation id and flow: many kernels shorter
    than their launch overhead. Later events move by the time the extra
    launches take."""
    pieces = 8 if amount is None else int(amount)
    ks = sorted(xs(doc, {"kernel"}), key=lambda e: e["ts"])
    lm = launch_map(doc)
    per = {}
    for g in xs(doc, WORK_CATS):
        per[corr(g)] = per.get(corr(g), 0) + 1
    ks = [k for k in ks if corr(k) in lm and per[corr(k)] == 1]  # not in a graph launch
    if not ks:
        raise SystemExit("split_kernels: no kernel has a launch of its own")
    count = min(len(ks), max(10, len(ks) // 4), 200)
    chosen = sorted(rng.sample(ks, count), key=lambda e: -e["ts"])
    out, total_host = [], 0.0
    next_c, _ = new_ids(doc)
    for k in chosen:
        la = lm[corr(k)]
        gaps = [r3(rng.uniform(5, 10)) for _ in range(pieces - 1)]
        ldur = r3(min(la["dur"], 3.0))
        starts = [la["ts"]]
        for g in gaps:
            starts.append(r3(starts[-1] + g))
        lag = k["ts"] - la["ts"]
        kts = []
        for s in starts:
            kts.append(r3(max(s + lag, kts[-1] + 2.5 if kts else s + lag)))
        host_delta = r3(starts[-1] + ldur - end(la))
        gpu_delta = r3(kts[-1] + 2.0 - end(k))
        shift(doc, end(la), max(host_delta, 0.0), max(host_delta, gpu_delta, 0.0))
        la["dur"], k["dur"] = ldur, 2.0
        cids = [corr(k)]
        for s, t in zip(starts[1:], kts[1:]):
            c, next_c = next_c, next_c + 1
            nl, nk = copy.deepcopy(la), copy.deepcopy(k)
            nl["ts"], nl["args"]["correlation"] = s, c
            nk["ts"], nk["args"]["correlation"] = t, c
            evs(doc).extend([nl, nk, flow("s", c, nl), flow("f", c, nk)])
            cids.append(c)
        total_host += max(host_delta, 0.0)
        out.append({"name": k["name"], "correlation_ids": cids})
    sort_events(doc)
    out.reverse()
    return {"kernels_split": len(out), "pieces": pieces, "kernels_added": len(out) * (pieces - 1),
            "piece_dur_us": 2.0, "host_time_added_us": r3(total_host), "split": out}


def sync_deficits(doc):
    """Before GPU work is made longer: each host sync call with how far it
    ends before the GPU work launched before it, and each GPU event's lag
    behind its launch."""
    sy = [e for e in xs(doc, LAUNCH_CATS)
          if "Synchronize" in e["name"] or e["name"] in ("cudaMemcpy", "hipMemcpy")]
    lm = launch_map(doc)
    lags = {id(g): g["ts"] - lm[corr(g)]["ts"] for g in xs(doc, WORK_CATS) if corr(g) in lm}
    return [(e, drain_time(doc, e["ts"]) - end(e)) for e in sorted(sy, key=lambda e: e["ts"])], lags


def settle(doc, lags):
    """Moves each GPU event no earlier than its launch plus its first lag,
    and after the previous event of its stream; its flow end moves along."""
    lm, lanes = launch_map(doc), {}
    for g in xs(doc, WORK_CATS):
        lanes.setdefault((g["pid"], (g.get("args") or {}).get("stream")), []).append(g)
    flows = {(e["pid"], e["id"]): e for e in evs(doc) if e.get("ph") == "f"}
    for key in sorted(lanes, key=str):
        edge = float("-inf")
        for g in sorted(lanes[key], key=lambda e: e["ts"]):
            la = lm.get(corr(g))
            want = max(g["ts"], edge, la["ts"] + lags[id(g)] if la and id(g) in lags else edge)
            if want > g["ts"]:
                f = flows.get((g["pid"], corr(g)))
                if f is not None and f["ts"] == g["ts"]:
                    f["ts"] = r3(want)
                g["ts"] = r3(want)
            edge = end(g)


def resync(doc, before):
    """Lengthens the host syncs that the GPU work now outlasts (compared to
    `before`, from sync_deficits), moving later host events; the GPU work
    launched after a sync then starts no earlier than its launch allows
    (settle). Returns the host time added (us)."""
    syncs, lags = before
    added = 0.0
    for e, d0 in syncs:
        extra = r3(drain_time(doc, e["ts"]) - end(e) - max(d0, 0.0))
        if extra > 0:
            shift(doc, end(e), extra, gpu_delta=0.0)
            e["dur"] = r3(e["dur"] + extra)
            settle(doc, lags)
            added += extra
    return r3(added)


def slowed_gemm(doc, rng, amount):
    """Picks one GEMM op and shape (aten::mm/addmm/bmm first, else
    aten::linear/matmul) and makes all its kernels `amount` (default 4) times
    longer; later GPU events of the stream move, and host syncs that waited
    on them wait longer."""
    factor = 4.0 if amount is None else amount
    index = kernel_index(doc)
    groups = {}
    for names in (GEMM_OPS[:3], GEMM_OPS[3:]):
        for key, calls in sorted(shape_groups(doc, names).items()):
            if all(op_kernels(c, index) for c in calls):
                groups[key] = calls
        if groups:
            break
    if not groups:
        raise SystemExit("slowed_gemm: no GEMM op with shapes and kernels in the trace")
    key = rng.choice(sorted(groups))
    before = sync_deficits(doc)
    ks = sorted({id(k): k for c in groups[key] for k in op_kernels(c, index)}.values(),
                key=lambda e: e["ts"])
    added = sum(stretch(doc, k, factor) for k in ks)
    host = resync(doc, before)
    return {"op": key[0], "input_dims": json.loads(key[1]), "calls": len(groups[key]),
            "external_ids": [c["args"].get("External id") for c in groups[key]],
            "kernels": len(ks), "kernel_names": sorted({k["name"] for k in ks}),
            "factor": factor, "gpu_time_added_us": r3(added), "host_sync_added_us": host}


def blocking_copies(doc, rng, amount):
    """Before 3 top-level ops of the last step, inserts a blocking host-to-
    device copy of `amount` MiB (default 16) from pageable memory: an
    aten::copy_ op holding a cudaMemcpy, and its "Memcpy HtoD (Pageable ->
    Device)" on the GPU (linked by correlation and flow) after the queue
    drains, at 10 GB/s, while the GPU has nothing else to do."""
    mib = 16.0 if amount is None else amount
    nbytes = int(mib * (1 << 20))
    gdur = r3(nbytes / 1e4)
    st, ops = step_ops(doc)
    chosen = sorted(rng.sample(ops, min(3, len(ops))), key=lambda e: -e["ts"])
    ks = xs(doc, {"kernel"})
    streams = {}
    for k in ks:
        streams.setdefault(((k["pid"], k["tid"]), k["args"].get("stream")), []).append(k)
    (gpid, gtid), stream = max(sorted(streams, key=str), key=lambda s: len(streams[s]))
    dev = ks[0]["args"].get("device", 0)
    rt = "hipMemcpy" if hip(doc) else "cudaMemcpy"
    out = []
    for op in chosen:
        t0 = op["ts"]
        gts = r3(max(t0 + 8.0, drain_time(doc, t0) + 1.0))
        delta = r3(gts + gdur + 6.0 - t0)
        shift(doc, t0, delta)
        c, x = new_ids(doc)
        cop = {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": op["pid"],
               "tid": op["tid"], "ts": t0, "dur": delta,
               "args": {"External id": x, "Record function id": 0}}
        call = {"ph": "X", "cat": "cuda_runtime", "name": rt, "pid": op["pid"], "tid": op["tid"],
                "ts": r3(t0 + 1.0), "dur": r3(delta - 3.0),
                "args": {"External id": x, "cbid": 31, "correlation": c}}
        mem = {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)",
               "pid": gpid, "tid": gtid, "ts": gts, "dur": gdur,
               "args": {"External id": x, "device": dev, "context": 1, "stream": stream,
                        "correlation": c, "bytes": nbytes,
                        "memory bandwidth (GB/s)": nbytes / (gdur * 1e3)}}
        evs(doc).extend([cop, call, mem, flow("s", c, call), flow("f", c, mem)])
        out.append({"before_op": op["name"], "ts": absolute(t0), "host_us": delta, "gpu_us": gdur,
                    "correlation": c, "external_id": x})
    sort_events(doc)
    out.reverse()
    return {"copies": len(out), "bytes_each": nbytes, "runtime_call": rt,
            "time_added_us": r3(sum(o["host_us"] for o in out)), "inserted": out}


def slow_rank(docs, rng, amount):
    """In a set of rank traces, makes every collective kernel (nccl, rccl,
    AllReduce... in its name) of one rank `amount` (default 3) times longer;
    later GPU events of the stream move, and that rank's host syncs wait
    longer. The other ranks are copied as they are."""
    factor = 3.0 if amount is None else amount
    with_comm = [i for i, d in enumerate(docs)
                 if any(any(w in k["name"].lower() for w in COLLECTIVE_WORDS)
                        for k in xs(d, {"kernel"}))]
    if not with_comm:
        raise SystemExit("slow_rank: no collective kernels in any rank")
    i = rng.choice(with_comm)
    doc = docs[i]
    ks = sorted((k for k in xs(doc, {"kernel"})
                 if any(w in k["name"].lower() for w in COLLECTIVE_WORDS)), key=lambda e: e["ts"])
    before = sync_deficits(doc)
    added = sum(stretch(doc, k, factor) for k in ks)
    host = resync(doc, before)
    info = doc.get("distributedInfo", {}) if isinstance(doc, dict) else {}
    return {"rank_index": i, "rank": info.get("rank", i), "collectives": len(ks),
            "kernel_names": sorted({k["name"] for k in ks}), "factor": factor,
            "gpu_time_added_us": r3(added), "host_sync_added_us": host}


def op_variance(doc, rng, amount):
    """Picks an op and shape with many calls (at least 6, each launching
    GPU work; one of the three most called, seeded) and multiplies the kernel
    durations of a random half of its calls by factors drawn in [2, 6]
    (`amount` sets the top factor)."""
    top = 6.0 if amount is None else amount
    index = kernel_index(doc)
    groups = [(k, c) for k, c in sorted(shape_groups(doc).items())
              if len(c) >= 6 and all(op_kernels(x, index) for x in c)]
    if not groups:
        raise SystemExit("op_variance: no op with 6 or more calls of one shape")
    groups.sort(key=lambda g: -len(g[1]))
    key, calls = rng.choice(groups[:3])
    calls = sorted(calls, key=lambda e: e["ts"])
    slow = sorted(rng.sample(range(len(calls)), len(calls) // 2))
    factors = [r3(rng.uniform(2.0, top)) for _ in slow]
    before = sync_deficits(doc)
    added, per = 0.0, []
    for i, f in zip(slow, factors):
        ks = sorted(op_kernels(calls[i], index), key=lambda e: e["ts"])
        added += sum(stretch(doc, k, f) for k in ks)
        per.append({"external_id": calls[i]["args"].get("External id"), "factor": f,
                    "kernels": [k["name"] for k in ks]})
    host = resync(doc, before)
    return {"op": key[0], "input_dims": json.loads(key[1]), "calls": len(calls),
            "slowed_calls": len(slow), "slowed": per, "gpu_time_added_us": r3(added),
            "host_sync_added_us": host}


# ---------------------------------------------------------------- command line

FAULTS = {
    "dropped_kernels": (dropped_kernels, ["health.dropped_kernels"],
                        "removes the kernels of a time window (--amount: share, 0.3)"),
    "overlapping_kernels": (overlapping_kernels, ["health.overlapping_kernels"],
                            "kernels overlap the previous one on a stream (--amount: count, 50)"),
    "stripped_shapes": (stripped_shapes, ["health.no_shapes"],
                        "deletes Input Dims/type/Strides and Concrete Inputs of every cpu_op"),
    "broken_links": (broken_links, ["health.unlinked_kernels"],
                     "drops flows and correlation of GPU events (--amount: share, 0.3)"),
    "clock_skew": (clock_skew, ["health.clock_skew"],
                   "GPU events start before their launch (--amount: margin us, 50)"),
    "truncated": (truncated, ["health.truncated"],
                  "cuts the trace inside the last ProfilerStep (--amount: where, 0.7)"),
    "host_gaps": (host_gaps, ["idle.host_bound"],
                  "a host stall in a step, the GPU idle (--amount: ms, 5)"),
    "inserted_syncs": (inserted_syncs, ["idle.sync"],
                       "cudaDeviceSynchronize after launches (--amount: count, 5)"),
    "split_kernels": (split_kernels, ["kernels.launch_bound"],
                      "kernels split into tiny launch-bound ones (--amount: pieces, 8)"),
    "slowed_gemm": (slowed_gemm, ["op.low_efficiency"],
                    "one GEMM op and shape made slower (--amount: factor, 4)"),
    "blocking_copies": (blocking_copies, ["memcpy.exposed", "memcpy.pageable"],
                        "blocking pageable HtoD cudaMemcpy, GPU idle (--amount: MiB, 16)"),
    "slow_rank": (slow_rank, ["comm.straggler"],
                  "collectives of one rank made slower; IN/OUT folders (--amount: factor, 3)"),
    "op_variance": (op_variance, ["op.variance"],
                    "half the calls of one op and shape 2-6x slower (--amount: top factor, 6)"),
}


def rank_inputs(src):
    """The rank traces of a folder (or a glob), sorted by name."""
    if os.path.isdir(src):
        names = [os.path.join(src, n) for n in os.listdir(src)]
    else:
        names = glob.glob(src)
    return sorted(p for p in names if os.path.isfile(p) and not os.path.basename(p).startswith(".")
                  and (p.endswith(".json") or p.endswith(".json.gz")))


def fail(msg):
    print(f"plant_faults: {msg}", file=sys.stderr)
    sys.exit(2)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plants a known fault in a Kineto trace.")
    ap.add_argument("fault", nargs="?", help="the fault (see --list)")
    ap.add_argument("input", nargs="?", help="IN.json[.gz] (slow_rank: a folder or a glob)")
    ap.add_argument("output", nargs="?", help="OUT.json[.gz] (slow_rank: a folder)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--amount", type=float, default=None, help="the fault's size (see --list)")
    ap.add_argument("--force", action="store_true", help="overwrite an existing OUT")
    ap.add_argument("--list", action="store_true", help="list the faults and exit")
    a = ap.parse_args(argv)
    if a.list:
        for name, (_, ids, what) in FAULTS.items():
            print(f"{name:20} {', '.join(ids):34} {what}")
        return 0
    if not (a.fault and a.input and a.output):
        fail("usage: plant_faults.py FAULT IN OUT [--seed N] [--amount X] [--force] | --list")
    if a.fault not in FAULTS:
        fail(f"unknown fault {a.fault!r} (see --list)")
    fn, expected, _ = FAULTS[a.fault]
    out = a.output.rstrip("/") or a.output
    manifest = out + ".planted.json"
    ins = rank_inputs(a.input) if a.fault == "slow_rank" else [a.input]
    if a.fault == "slow_rank" and not ins:
        fail(f"no rank traces in {a.input}")
    for p in ins + [a.input]:
        if os.path.exists(p) and os.path.exists(out) and os.path.samefile(p, out):
            fail(f"OUT is the input: {out}")
    if os.path.abspath(out) in {os.path.abspath(p) for p in ins + [a.input]}:
        fail(f"OUT is the input: {out}")
    if not a.force:
        for p in (out, manifest):
            if os.path.exists(p):
                fail(f"{p} exists (use --force to overwrite)")
    for p in ins:
        if not os.path.isfile(p):
            fail(f"cannot read {p}")
    rng = random.Random(a.seed)
    if a.fault == "slow_rank":
        docs = [load(p) for p in ins]
        bases = [rebase(d) for d in docs]
        details = fn(docs, rng, a.amount)
        details["file"] = os.path.basename(ins[details["rank_index"]])
        os.makedirs(out, exist_ok=True)
        for i, p in enumerate(ins):
            dst = os.path.join(out, os.path.basename(p))
            if i == details["rank_index"]:
                unbase(docs[i], bases[i])
                dump(docs[i], dst)
            else:
                with open(p, "rb") as f, open(dst, "wb") as g:
                    g.write(f.read())
        source = os.path.basename(os.path.normpath(a.input))
    else:
        doc = load(ins[0])
        base = rebase(doc)
        details = fn(doc, rng, a.amount)
        unbase(doc, base)
        dump(doc, out)
        source = os.path.basename(ins[0])
    with open(manifest, "w") as f:
        json.dump({"fault": a.fault, "expected": expected, "source": source, "seed": a.seed,
                   "amount": a.amount, "details": details}, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
