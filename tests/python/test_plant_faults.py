"""Self-test of tools/plant_faults.py: each fault is planted in a real trace
of the shared corpus through the command line, and the test counts, on its
own (nothing of the generator is imported), that the fault is there and that
the trace is otherwise still consistent. Standard library and pytest only;
needs no tracelens build. Skips when the shared corpus is absent."""

import collections
import gzip
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "plant_faults.py"
SHARED = pathlib.Path(os.environ.get("TRACELENS_SHARED") or ROOT.parent / "shared")
TRACE = SHARED / "corpus" / "pytorch" / "h100_bert_small.json.gz"
RANKS = SHARED / "corpus" / "multirank" / "dlrm_v100_8rank"
WORK = ("kernel", "gpu_memcpy", "gpu_memset")
HOST_CALLS = ("cuda_runtime", "cuda_driver")


def need(path):
    if not path.exists():
        pytest.skip(f"needs the shared corpus ({path} absent)")
    return path


def plant(fault, src, out, *extra):
    return subprocess.run([sys.executable, str(TOOL), fault, str(src), str(out), *extra],
                          capture_output=True, text=True, timeout=120)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


def x(doc, *cats):
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in cats]


def cid(e):
    return e.get("args", {}).get("correlation")


def launches(doc):
    return {cid(e): e for e in x(doc, *HOST_CALLS) if cid(e) is not None}


def stream_overlaps(doc):
    """(pid, stream) -> how many GPU work events start before the previous ends."""
    lanes = collections.defaultdict(list)
    for e in x(doc, *WORK):
        lanes[(e["pid"], e["args"].get("stream"))].append(e)
    out = {}
    for key, lane in lanes.items():
        lane.sort(key=lambda e: e["ts"])
        out[key] = sum(1 for a, b in zip(lane, lane[1:]) if b["ts"] < a["ts"] + a["dur"] - 1e-6)
    return out


def before_launch(doc):
    lm = launches(doc)
    return [e for e in x(doc, *WORK) if cid(e) in lm and e["ts"] < lm[cid(e)]["ts"]]


def gpu_busy_at(doc, t):
    return [e for e in x(doc, *WORK) if e["ts"] <= t < e["ts"] + e["dur"]]


def step(doc):
    return [e for e in x(doc, "user_annotation") if e["name"].startswith("ProfilerStep#")][-1]


_cache = {}


@pytest.fixture
def planted(tmp_path_factory):
    """fault -> (original doc, planted doc, manifest), planted once."""
    def get(fault, *extra):
        key = (fault,) + extra
        if key not in _cache:
            out = tmp_path_factory.mktemp(fault) / "out.json.gz"
            res = plant(fault, need(TRACE), out, "--seed", "3", *extra)
            assert res.returncode == 0, res.stderr
            _cache[key] = (load(TRACE), load(out), json.load(open(str(out) + ".planted.json")))
        return _cache[key]
    return get


FAULT_IDS = {
    "dropped_kernels": ["health.dropped_kernels"],
    "overlapping_kernels": ["health.overlapping_kernels"],
    "stripped_shapes": ["health.no_shapes"],
    "broken_links": ["health.unlinked_kernels"],
    "clock_skew": ["health.clock_skew"],
    "truncated": ["health.truncated"],
    "host_gaps": ["idle.host_bound"],
    "inserted_syncs": ["idle.sync"],
    "split_kernels": ["kernels.launch_bound"],
    "slowed_gemm": ["op.low_efficiency"],
    "blocking_copies": ["memcpy.exposed", "memcpy.pageable"],
    "op_variance": ["op.variance"],
}


@pytest.mark.parametrize("fault", sorted(FAULT_IDS))
def test_manifest_and_no_side_faults(planted, fault):
    """The manifest names the fault and its ids; no other fault crept in:
    no GPU event before its launch, no overlap on a stream, host events on
    one thread still nest."""
    orig, doc, man = planted(fault)
    assert man["fault"] == fault and man["expected"] == FAULT_IDS[fault]
    assert man["source"] == TRACE.name and man["seed"] == 3 and man["details"]
    if fault != "clock_skew":
        assert before_launch(doc) == []
    if fault != "overlapping_kernels":
        assert sum(stream_overlaps(doc).values()) == 0
    threads = collections.defaultdict(list)
    for e in x(doc, "cpu_op", "user_annotation", *HOST_CALLS):
        threads[(e["pid"], e["tid"])].append(e)
    for lane in threads.values():
        lane.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_ = []
        for e in lane:
            while open_ and open_[-1] <= e["ts"] + 2e-3:
                open_.pop()
            assert not open_ or e["ts"] + e["dur"] <= open_[-1] + 2e-3, e["name"]
            open_.append(e["ts"] + e["dur"])


def test_dropped_kernels(planted):
    orig, doc, _ = planted("dropped_kernels")
    ks0 = sorted(x(orig, "kernel"), key=lambda e: e["ts"])
    left = {cid(e) for e in x(doc, "kernel")}
    gone = [i for i, k in enumerate(ks0) if cid(k) not in left]
    assert abs(len(gone) - 0.3 * len(ks0)) <= 1
    assert gone == list(range(gone[0], gone[0] + len(gone)))  # one window
    assert len(launches(doc)) == len(launches(orig))
    assert sum(e.get("ph") in ("s", "f") for e in doc["traceEvents"]) == \
        sum(e.get("ph") in ("s", "f") for e in orig["traceEvents"])


def test_overlapping_kernels(planted):
    orig, doc, _ = planted("overlapping_kernels")
    assert sum(stream_overlaps(orig).values()) == 0
    ov = stream_overlaps(doc)
    assert max(ov.values()) >= 20 and sum(1 for v in ov.values() if v) == 1


def test_stripped_shapes(planted):
    orig, doc, _ = planted("stripped_shapes")
    assert any("Input Dims" in e["args"] for e in x(orig, "cpu_op"))
    for e in x(doc, "cpu_op"):
        for k in ("Input Dims", "Input type", "Input Strides", "Concrete Inputs"):
            assert k not in e["args"]
    assert len(x(doc, "cpu_op")) == len(x(orig, "cpu_op"))


def test_broken_links(planted):
    orig, doc, _ = planted("broken_links")
    linked0 = {cid(e) for e in x(orig, *WORK)}
    linked = {cid(e) for e in x(doc, *WORK) if cid(e) is not None}
    cut = linked0 - linked
    assert abs(len(cut) - 0.3 * len(linked0)) <= 1
    assert sum(1 for e in x(doc, *WORK) if cid(e) is None) == len(cut)
    assert not [e for e in doc["traceEvents"] if e.get("ph") in ("s", "f") and e.get("id") in cut]
    assert {cid(e) for e in x(doc, *HOST_CALLS)} >= cut  # the launches stay


def test_clock_skew(planted):
    orig, doc, _ = planted("clock_skew")
    lm = launches(doc)
    linked = [e for e in x(doc, *WORK) if cid(e) in lm]
    assert linked and all(e["ts"] <= lm[cid(e)]["ts"] - 49.9 for e in linked)
    assert before_launch(orig) == []


def test_truncated(planted):
    orig, doc, man = planted("truncated")
    st = step(doc)
    assert st["dur"] == step(orig)["dur"]
    cut = st["ts"] + 0.7 * st["dur"]
    rest = [e for e in doc["traceEvents"] if e.get("ph") != "M" and "ts" in e]
    assert max(e["ts"] for e in rest) <= cut + 1e-3
    others = [e for e in rest if e.get("ph") == "X" and not e["name"].startswith("ProfilerStep#")]
    assert st["ts"] + st["dur"] > max(e["ts"] + e["dur"] for e in others) + 100
    assert len(x(doc, "kernel")) < len(x(orig, "kernel"))


def test_host_gaps(planted):
    orig, doc, _ = planted("host_gaps")
    stall = [e for e in doc["traceEvents"] if e.get("name") == "planted_host_stall"]
    assert len(stall) == 1 and stall[0]["dur"] == 5000.0
    s = stall[0]
    assert abs(step(doc)["dur"] - step(orig)["dur"] - 5000.0) < 1e-3
    # the GPU does nothing for most of the stall
    idle = [t for t in range(int(s["ts"]), int(s["ts"] + s["dur"]), 50) if not gpu_busy_at(doc, t)]
    assert len(idle) >= 0.8 * s["dur"] / 50


def test_inserted_syncs(planted):
    orig, doc, _ = planted("inserted_syncs")
    name = "cudaDeviceSynchronize"
    old = {cid(e) for e in x(orig, "cuda_runtime") if e["name"] == name}
    new = [e for e in x(doc, "cuda_runtime") if e["name"] == name and cid(e) not in old]
    assert len(new) == 5
    lm = launches(doc)
    for sy in new:
        # right after a launch on the same thread, and the GPU idle at its end
        assert any(la["tid"] == sy["tid"] and abs(la["ts"] + la["dur"] + 1.0 - sy["ts"]) < 2e-3
                   for la in lm.values())
        assert not gpu_busy_at(doc, sy["ts"] + sy["dur"] - 1.0)
        work_before = [e for e in x(doc, *WORK) if cid(e) in lm and lm[cid(e)]["ts"] < sy["ts"]]
        assert max(e["ts"] + e["dur"] for e in work_before) <= sy["ts"] + sy["dur"]


def test_split_kernels(planted):
    orig, doc, man = planted("split_kernels")
    n0, n1 = len(x(orig, "kernel")), len(x(doc, "kernel"))
    assert n1 - n0 >= 70
    lm = launches(doc)
    tiny = [k for k in x(doc, "kernel") if k["dur"] <= 2.0]
    assert len(tiny) >= 80
    flows = collections.Counter((e["ph"], e["id"]) for e in doc["traceEvents"]
                                if e.get("ph") in ("s", "f"))
    cids = [cid(k) for k in tiny]
    assert len(set(cids)) == len(cids)
    for k in tiny:
        assert cid(k) in lm and flows[("s", cid(k))] == 1 and flows[("f", cid(k))] == 1
    # shorter than their launch overhead: the next tiny launch comes 5-10 us later
    assert sum(1 for k in tiny if k["dur"] < 5.0) == len(tiny)


def test_slowed_gemm(planted):
    orig, doc, man = planted("slowed_gemm")
    ext = set(man["details"]["external_ids"])
    before = {cid(k): k["dur"] for k in x(orig, "kernel")}
    hit = [k for k in x(doc, "kernel") if k["args"].get("External id") in ext]
    assert hit and all(abs(k["dur"] - 4 * before[cid(k)]) < 0.01 for k in hit)
    others = [k for k in x(doc, "kernel") if k["args"].get("External id") not in ext]
    assert all(abs(k["dur"] - before[cid(k)]) < 1e-6 for k in others)
    names = {e["name"] for e in x(orig, "cpu_op") if e["args"].get("External id") in ext}
    assert len(names) == 1 and names <= {"aten::mm", "aten::addmm", "aten::bmm"}


def test_blocking_copies(planted):
    orig, doc, _ = planted("blocking_copies")
    calls = [e for e in x(doc, "cuda_runtime") if e["name"] == "cudaMemcpy"]
    copies = [e for e in x(doc, "gpu_memcpy") if e["name"] == "Memcpy HtoD (Pageable -> Device)"]
    assert len(calls) == 3 and len(copies) == 3
    by = {cid(c): c for c in calls}
    ids = {(e["ph"], e["id"]) for e in doc["traceEvents"] if e.get("ph") in ("s", "f")}
    for m in copies:
        host = by[cid(m)]
        assert ("s", cid(m)) in ids and ("f", cid(m)) in ids
        assert host["ts"] <= m["ts"] and m["ts"] + m["dur"] <= host["ts"] + host["dur"]
        assert [e for e in gpu_busy_at(doc, m["ts"] + m["dur"] / 2) if e is not m] == []


def test_op_variance(planted):
    orig, doc, man = planted("op_variance")
    before = {cid(k): k["dur"] for k in x(orig, "kernel")}
    ratios = [k["dur"] / before[cid(k)] for k in x(doc, "kernel") if before[cid(k)] > 0]
    changed = [r for r in ratios if abs(r - 1) > 1e-3]
    assert len(changed) >= 3 and all(1.99 <= r <= 6.01 for r in changed)
    assert len(set(round(r, 2) for r in changed)) >= 2
    d = man["details"]
    assert d["slowed_calls"] == d["calls"] // 2 and d["calls"] >= 6


def test_slow_rank(tmp_path):
    src = need(RANKS)
    out = tmp_path / "ranks"
    res = plant("slow_rank", src, out, "--seed", "1")
    assert res.returncode == 0, res.stderr
    names = sorted(p.name for p in src.iterdir() if ".json" in p.name)
    assert sorted(p.name for p in out.iterdir()) == names
    changed = [n for n in names if (src / n).read_bytes() != (out / n).read_bytes()]
    assert len(changed) == 1
    a, b = load(src / changed[0]), load(out / changed[0])

    def comm(doc):
        return sum(k["dur"] for k in x(doc, "kernel") if "nccl" in k["name"].lower())
    assert comm(a) > 0 and abs(comm(b) - 3 * comm(a)) < 0.01
    man = json.load(open(str(out) + ".planted.json"))
    assert man["expected"] == ["comm.straggler"] and man["details"]["file"] == changed[0]


def test_refuses_out_as_in(tmp_path):
    src = tmp_path / "t.json.gz"
    src.write_bytes(need(TRACE).read_bytes())
    res = plant("stripped_shapes", src, src)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(src) in lines[0]
    assert src.read_bytes() == TRACE.read_bytes()


def test_no_overwrite_without_force(tmp_path):
    out = tmp_path / "o.json"
    out.write_text("keep")
    res = plant("stripped_shapes", need(TRACE), out)
    assert res.returncode == 2 and out.read_text() == "keep"
    assert plant("stripped_shapes", TRACE, out, "--force").returncode == 0
    assert "traceEvents" in load(out)  # plain JSON: OUT does not end with .gz


def test_deterministic(tmp_path):
    outs = []
    for i, seed in enumerate(("7", "7", "8")):
        out = tmp_path / f"{i}.json.gz"
        assert plant("op_variance", need(TRACE), out, "--seed", seed).returncode == 0
        outs.append(out.read_bytes() + (tmp_path / f"{i}.json.gz.planted.json").read_bytes())
    assert outs[0] == outs[1] and outs[0] != outs[2]


def test_list():
    res = subprocess.run([sys.executable, str(TOOL), "--list"], capture_output=True, text=True)
    assert res.returncode == 0
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 13 and {ln.split()[0] for ln in lines} >= set(FAULT_IDS) | {"slow_rank"}
