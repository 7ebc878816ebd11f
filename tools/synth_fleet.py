#!/usr/bin/env python3
"""Makes a synthetic multi-rank "fleet" of PyTorch/Kineto traces from a folder
of real rank traces, for tests and benchmarks of fleet (many-rank) analysis.

Synthetic rank r is a copy of source rank r % len(sources), repeated over K
profiler steps. Every step of every rank starts at the same wall time (the
collectives of a step synchronise the ranks), and inside a step each rank's
events are stretched by a per-(rank, step) factor: Gaussian jitter, times an
optional slow rank and an optional slow step. The factors come from one seeded
generator drawn in a fixed order, so the output is the same byte for byte
whatever --jobs is. .fleet_truth.json records what was injected, so that a test
can check that the analysis finds it (a hidden file: folder scans for traces
skip it).

usage: tools/synth_fleet.py SRC_DIR OUT_DIR --ranks N [--steps K] ...
(see --help). Standard library only. Not a test by itself; the output is only
as realistic as its sources.
"""
import argparse
import gzip
import json
import math
import multiprocessing
import os
import random
import re
import sys
import time
from fractions import Fraction

# Args that link events to each other (CPU op <-> runtime call <-> kernel,
# forward <-> backward op, Python frames): every copy of a step must get its
# own values, or the copies would link across steps. 0 and negative values
# mean "no link" in Kineto, so they stay as they are.
LINK_ARGS = ("External id", "correlation", "Sequence number",
             "Python id", "Python parent id", "Record function id")
# Per-trace event indices: unique per trace, 0 included.
INDEX_ARGS = ("Ev Idx",)
STEP_RE = re.compile(r"ProfilerStep#(\d+)")
TRACE_SUFFIXES = (".json", ".json.gz")
OUT_RE = re.compile(r"rank(\d{5,})\.pt\.trace\.json\.gz")


class Usage(Exception):
    """A problem with the command line or the inputs: one line, exit 2."""


class Source:
    """One parsed source rank trace, prepared for fast copying.

    Times are kept as int ticks relative to t0 (see prepare): µs when every
    time in the fleet is an int, else ns (Kineto writes float µs with three
    decimals). Integer ticks let every copy round start and end times the
    same way, so that nesting survives the stretch exactly.

    timed: one (event, rel_start, rel_end, id_keys, step_number) per timed
    event (rel_* in ticks, None where the event has no ts or no dur);
    once: the metadata events and the 'Trace' span, written once per trace.
    """

    def __init__(self, name, doc):
        self.name = name
        self.rank = (doc.get("distributedInfo") or {}).get("rank")
        self.top = {k: v for k, v in doc.items() if k != "traceEvents"}
        events = doc.get("traceEvents") or []
        self.raw = [e for e in events if is_timed(e)]
        self.once = [e for e in events if not is_timed(e)]
        stamped = [e for e in self.raw if "ts" in e]
        if not stamped:
            raise Usage("no timed events")
        self.t0 = min(e["ts"] for e in stamped)
        self.int_times = all(is_int(e["ts"]) and is_int(e.get("dur", 0)) for e in stamped)
        # A set: newer traces repeat ProfilerStep#N on the GPU timeline.
        self.step_numbers = sorted({self._step(e) for e in self.raw} - {None})
        if not self.step_numbers:
            raise Usage("no ProfilerStep#N annotation (a step to copy)")
        self.max_id = 0
        self.timed = self.t0_ticks = self.span = None
        self.templates = {}  # filled by step_templates, in each worker

    @staticmethod
    def _step(e):
        """N of a ProfilerStep#N annotation, else None."""
        m = STEP_RE.fullmatch(e.get("name", "")) if e.get("ph") == "X" else None
        return int(m.group(1)) if m else None

    def prepare(self, tick):
        """Converts the times to ticks (tick: ticks per µs, 1 or 1000) and
        precomputes what each copy of each event changes, so that the hot
        loop in copy_step does no work it can avoid."""
        # Fraction: exact, as t0 * 1000 in floats may miss the ns.
        self.t0_ticks = round(Fraction(self.t0) * tick)
        self.timed = [self._prepare(e, tick) for e in self.raw]
        self.raw = None  # in self.timed now; less to send to spawned workers
        self.span = max(p[2] if p[2] is not None else p[1]
                        for p in self.timed if p[1] is not None)

    def ticks(self, ts, tick):
        """ts (µs) as ticks after t0. ts - t0 is exact for nearby floats."""
        return round((ts - self.t0) * tick)

    def _prepare(self, e, tick):
        """The (event, rel_start, rel_end, id_keys, step) tuple of one event."""
        ts = e.get("ts")
        rel_start = None if ts is None else self.ticks(ts, tick)
        dur = e.get("dur")
        rel_end = None if rel_start is None or dur is None else rel_start + round(dur * tick)
        keys = []
        args = e.get("args")
        if isinstance(args, dict):
            for k in LINK_ARGS + INDEX_ARGS:
                v = args.get(k)
                if is_int(v) and (v > 0 or (v == 0 and k in INDEX_ARGS)):
                    keys.append(k)
                    self.max_id = max(self.max_id, v)
        flow_id = e.get("id")
        if is_int(flow_id) and e.get("ph") in ("s", "t", "f"):
            keys.append(None)  # None stands for the flow event's own "id"
            self.max_id = max(self.max_id, flow_id)
        return (e, rel_start, rel_end, tuple(keys), self._step(e))


def is_timed(e):
    """Timed events are copied once per step; metadata (ph 'M') and the
    profile-wide 'Trace' span are written once."""
    return e.get("ph") != "M" and e.get("cat") != "Trace"


def is_int(v):
    """An int that is not a bool (json gives bools for true/false)."""
    return isinstance(v, int) and not isinstance(v, bool)


def find_traces(src_dir):
    """The trace files (.json, .json.gz) directly in src_dir, by name."""
    if not os.path.isdir(src_dir):
        raise Usage(f"{src_dir}: not a directory")
    names = sorted(n for n in os.listdir(src_dir)
                   if n.endswith(TRACE_SUFFIXES) and os.path.isfile(os.path.join(src_dir, n)))
    if not names:
        raise Usage(f"{src_dir}: no trace files (*.json, *.json.gz)")
    return [os.path.join(src_dir, n) for n in names]


def load_source(path):
    """Parses one source trace into a Source."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            doc = json.load(f)
    except (OSError, ValueError) as err:
        raise Usage(f"{path}: cannot read trace: {err}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise Usage(f"{path}: not a Kineto trace (no traceEvents list)")
    try:
        return Source(os.path.basename(path), doc)
    except Usage as err:
        raise Usage(f"{path}: {err}") from None


def order_sources(sources):
    """Sorts by distributedInfo.rank when every trace has a distinct one,
    else keeps file name order."""
    ranks = [s.rank for s in sources]
    if all(is_int(r) for r in ranks) and len(set(ranks)) == len(ranks):
        return sorted(sources, key=lambda s: s.rank)
    return sources


def draw_factors(opts):
    """factor[r][i], the stretch of rank r's step i. Drawn rank by rank, step
    by step, from one generator, so the same seed gives the same fleet."""
    rng = random.Random(opts.seed)
    bound = 3 * opts.jitter
    factors = []
    for r in range(opts.ranks):
        row = []
        for i in range(opts.steps):
            noise = min(bound, max(-bound, rng.gauss(0.0, opts.jitter)))
            f = opts.scale * (1.0 + noise)
            if r == opts.slow_rank:
                f *= opts.slow_rank_factor
            if i == opts.slow_step:
                f *= opts.slow_step_factor
            row.append(f)
        factors.append(row)
    return factors


def step_bases(sources, factors, steps):
    """B_i in ticks, the common start time of step i on every rank: step i+1
    starts after the slowest rank's step i and a gap of a tenth of a step."""
    period = max(s.span for s in sources)
    base = sources[0].t0_ticks
    bases = []
    for i in range(steps):
        bases.append(base)
        base += math.ceil(period * max(row[i] for row in factors) + 0.1 * period)
    return bases


def id_offset(sources):
    """A round number above every link id of every source, so that copy i's
    ids (id + i * offset) stay readable and never meet another copy's."""
    return 10 ** len(str(max(s.max_id for s in sources)))


# Worker state, set once per worker process by init_worker.
PLAN = None


def init_worker(plan):
    """Pool initializer: keeps the parsed sources and the plan in the worker,
    so that each rank does not re-read or re-send them."""
    global PLAN
    PLAN = plan


def to_us(ticks, tick):
    """Ticks as the trace writes them: int µs, or float µs for ns ticks
    (int / int is correctly rounded, so 1234567 prints as 1234.567)."""
    return ticks if tick == 1 else ticks / tick


def float_dur(start, end, tick):
    """The float dur of an event from start to end (ns ticks) such that
    ts + dur, as a reader adds them in doubles, is exactly end / tick.

    At 1e12 µs a double's step is about 0.2 ns, so the tidy (end - start) /
    tick can sum to one step past the end: a child that ends with its parent
    would then end after it and lose its place in the call tree. Then the
    exact difference of the two doubles is used instead (more digits).
    """
    ts, te = start / tick, end / tick
    dur = (end - start) / tick
    return dur if ts + dur == te else te - ts


def step_templates(src, i, offset):
    """Copy i of src's timed events with the parts that are the same on every
    rank made from src already done: link ids moved by i * offset and the
    ProfilerStep renamed. Cached per worker, as many ranks share a source;
    the templates are never changed afterwards, so ranks may share them.
    Returns (event, rel_start, rel_end) triples."""
    key = (i, offset)
    if key in src.templates:
        return src.templates[key]
    shift = i * offset
    width = src.step_numbers[-1] - src.step_numbers[0] + 1
    out = []
    for e, rel_start, rel_end, keys, step in src.timed:
        if shift and (keys or step is not None):
            e = e.copy()
            args = None
            for k in keys:
                if k is None:
                    e["id"] += shift
                else:
                    if args is None:
                        args = e["args"] = dict(e["args"])
                    args[k] += shift
            if step is not None:
                e["name"] = f"ProfilerStep#{step + i * width}"
        out.append((e, rel_start, rel_end))
    src.templates[key] = out
    return out


def copy_step(src, i, f, base, tick, offset, out):
    """Appends copy i of src's timed events to out, stretched by f from base.

    End times are scaled and rounded like start times (dur = end - start)
    rather than rounding dur on its own: rounding is monotonic, so a child
    event still ends inside its parent. Float times need one more step, see
    float_dur.
    """
    ints = tick == 1
    for e, rel_start, rel_end in step_templates(src, i, offset):
        c = e.copy()
        if rel_start is None:
            pass
        elif ints:
            start = round(rel_start * f)
            c["ts"] = base + start
            if rel_end is not None:
                c["dur"] = round(rel_end * f) - start
        else:
            start = base + round(rel_start * f)
            c["ts"] = start / tick
            if rel_end is not None:
                c["dur"] = float_dur(start, base + round(rel_end * f), tick)
        out.append(c)


def build_rank(r):
    """The whole trace document of synthetic rank r."""
    p = PLAN
    src = p["sources"][r % len(p["sources"])]
    factors = p["factors"][r]
    bases = p["bases"]
    events = []
    tick = p["tick"]
    for i, (f, base) in enumerate(zip(factors, bases)):
        copy_step(src, i, f, base, tick, p["offset"], events)
    b0 = bases[0]
    # Where this rank's last step ends, rounded as its events are.
    end = bases[-1] + round(src.span * factors[-1])
    for e in src.once:
        c = e.copy()
        if e.get("cat") == "Trace":
            c["ts"], c["dur"] = to_us(b0, tick), to_us(end - b0, tick)
        elif isinstance(e.get("ts"), (int, float)):
            # Metadata keeps its offset from the source's start, unscaled.
            c["ts"] = to_us(b0 + src.ticks(e["ts"], tick), tick)
        events.append(c)
    doc = {}
    for k, v in src.top.items():
        if k == "distributedInfo":
            v = dict(v or {}, rank=r, world_size=p["ranks"])
        elif k == "traceName":
            v = os.path.join(os.path.dirname(str(v)), out_name(r)[:-len(".gz")])
        doc[k] = v
    doc.setdefault("distributedInfo", {"rank": r, "world_size": p["ranks"]})
    doc["traceEvents"] = events
    return doc


def out_name(r):
    """The file name of synthetic rank r."""
    return f"rank{r:05d}.pt.trace.json.gz"


def write_rank(r):
    """Builds, serialises and writes rank r (temp name, then rename, so that
    a reader never sees half a file). Returns (json bytes, gzip bytes)."""
    p = PLAN
    # check_circular=False: parsed JSON has no cycles, and the check costs
    # about a third of the encoding time.
    data = json.dumps(build_rank(r), separators=(",", ":"), check_circular=False).encode()
    # mtime=0: no time stamp in the gzip header, so reruns are identical.
    packed = gzip.compress(data, compresslevel=p["level"], mtime=0)
    final = os.path.join(p["out_dir"], out_name(r))
    tmp = os.path.join(p["out_dir"], f".{out_name(r)}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(packed)
    os.replace(tmp, final)
    return len(data), len(packed)


def remove_stale(out_dir, ranks):
    """Deletes rank files of an earlier, larger fleet in out_dir: a reader
    taking every trace of the folder would count them as ranks."""
    stale = [n for n in os.listdir(out_dir)
             if (m := OUT_RE.fullmatch(n)) and int(m.group(1)) >= ranks]
    for n in stale:
        os.remove(os.path.join(out_dir, n))
    if stale:
        print(f"synth_fleet: removed {len(stale)} rank files >= {ranks} "
              f"left in {out_dir} by an earlier run", file=sys.stderr)


def write_truth(opts, sources, factors, bases, tick):
    """.fleet_truth.json: what the fleet holds and what was injected."""
    s0 = sources[0]
    width = s0.step_numbers[-1] - s0.step_numbers[0] + 1
    truth = {
        "ranks": opts.ranks,
        "steps": opts.steps,
        "sources": [s.name for s in sources],
        "seed": opts.seed,
        "jitter": opts.jitter,
        "slow_rank": opts.slow_rank,
        "slow_rank_factor": opts.slow_rank_factor,
        "slow_step": opts.slow_step,
        "slow_step_factor": opts.slow_step_factor,
        "scale": opts.scale,
        "step_numbers": [n + i * width for i in range(opts.steps) for n in s0.step_numbers],
        # Beyond the settings: the exact stretch of every (rank, step) and
        # the common step start times, for tests that want exact answers.
        "step_starts_us": [to_us(b, tick) for b in bases],
        "factors": [[round(f, 6) for f in row] for row in factors],
    }
    path = os.path.join(opts.out_dir, ".fleet_truth.json")
    with open(path, "w") as f:
        json.dump(truth, f, separators=(",", ":"))
        f.write("\n")
    return os.path.getsize(path)


def parse_args(argv):
    """The command line."""
    ap = argparse.ArgumentParser(
        prog="synth_fleet.py",
        description="Make a synthetic fleet of N rank traces (K profiler steps each) "
                    "from a folder of real Kineto rank traces, with seeded jitter and "
                    "an optional slow rank and slow step, for tests and benchmarks of "
                    "fleet analysis. Writes OUT_DIR/rankNNNNN.pt.trace.json.gz and "
                    "OUT_DIR/.fleet_truth.json (what was injected). Rank files of an "
                    "earlier run with a rank >= N are removed.")
    ap.add_argument("src_dir", metavar="SRC_DIR",
                    help="folder of source rank traces (*.json, *.json.gz)")
    ap.add_argument("out_dir", metavar="OUT_DIR", help="output folder (created if missing)")
    ap.add_argument("--ranks", type=int, required=True, metavar="N",
                    help="number of synthetic ranks; rank r copies source rank r %% sources")
    ap.add_argument("--steps", type=int, default=3, metavar="K",
                    help="profiler steps per trace, each a copy of the source's events "
                         "(default 3)")
    ap.add_argument("--jitter", type=float, default=0.02, metavar="SD",
                    help="standard deviation of the per-(rank, step) time stretch, "
                         "clipped to 3 sigma (default 0.02)")
    ap.add_argument("--slow-rank", type=int, metavar="R",
                    help="rank whose steps are all stretched by --slow-rank-factor")
    ap.add_argument("--slow-rank-factor", type=float, default=1.3, metavar="F",
                    help="(default 1.3)")
    ap.add_argument("--slow-step", type=int, metavar="S",
                    help="step (0-based) stretched by --slow-step-factor on every rank")
    ap.add_argument("--slow-step-factor", type=float, default=1.5, metavar="F",
                    help="(default 1.5)")
    ap.add_argument("--scale", type=float, default=1.0, metavar="F",
                    help="stretch of every rank and step, e.g. 1.1 for a build 10%% slower "
                         "throughout (default 1.0)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="J",
                    help="worker processes (default: the number of CPUs); "
                         "the output does not depend on it")
    ap.add_argument("--level", type=int, default=1, metavar="L",
                    help="gzip compression level 0-9 (default 1: fast)")
    opts = ap.parse_args(argv)
    checks = [
        (opts.ranks >= 1, "--ranks must be at least 1"),
        (opts.steps >= 1, "--steps must be at least 1"),
        (opts.jitter >= 0 and opts.jitter < 1 / 3,
         "--jitter must be in [0, 1/3) (3 sigma must keep times increasing)"),
        (opts.slow_rank is None or 0 <= opts.slow_rank < opts.ranks,
         f"--slow-rank {opts.slow_rank} is not a rank of 0..{opts.ranks - 1}"),
        (opts.slow_step is None or 0 <= opts.slow_step < opts.steps,
         f"--slow-step {opts.slow_step} is not a step of 0..{opts.steps - 1}"),
        (opts.slow_rank_factor > 0 and opts.slow_step_factor > 0 and opts.scale > 0,
         "--slow-rank-factor, --slow-step-factor and --scale must be positive"),
        (opts.jobs >= 1, "--jobs must be at least 1"),
        (0 <= opts.level <= 9, "--level must be 0..9"),
    ]
    for ok, msg in checks:
        if not ok:
            raise Usage(msg)
    return opts


def main(argv=None):
    """Loads the sources, draws the factors, writes the fleet and the truth."""
    started = time.monotonic()
    try:
        opts = parse_args(argv)
        sources = order_sources([load_source(p) for p in find_traces(opts.src_dir)])
    except Usage as err:
        print(f"synth_fleet: error: {err}", file=sys.stderr)
        return 2
    if any(s.step_numbers != sources[0].step_numbers for s in sources):
        # Fleet analysis matches steps across ranks by number; say so.
        print("synth_fleet: warning: the sources' ProfilerStep numbers differ; "
              ".fleet_truth.json gives rank 0's", file=sys.stderr)
    # One time unit for the whole fleet, so that ranks line up exactly.
    tick = 1 if all(s.int_times for s in sources) else 1000
    for s in sources:
        s.prepare(tick)
    factors = draw_factors(opts)
    bases = step_bases(sources, factors, opts.steps)
    os.makedirs(opts.out_dir, exist_ok=True)
    remove_stale(opts.out_dir, opts.ranks)
    plan = {"sources": sources, "factors": factors, "bases": bases,
            "tick": tick, "offset": id_offset(sources), "ranks": opts.ranks,
            "level": opts.level, "out_dir": opts.out_dir}
    jobs = min(opts.jobs, opts.ranks)
    if jobs == 1:
        init_worker(plan)
        sizes = [write_rank(r) for r in range(opts.ranks)]
    else:
        with multiprocessing.Pool(jobs, initializer=init_worker, initargs=(plan,)) as pool:
            sizes = list(pool.imap_unordered(write_rank, range(opts.ranks), chunksize=4))
    truth = write_truth(opts, sources, factors, bases, tick)
    raw = sum(s[0] for s in sizes)
    packed = sum(s[1] for s in sizes) + truth
    print(f"synth_fleet: {opts.ranks} ranks x {opts.steps} steps from {len(sources)} "
          f"sources -> {opts.out_dir}: {packed:,} bytes written ({raw:,} bytes of JSON) "
          f"in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
