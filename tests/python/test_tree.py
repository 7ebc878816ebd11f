"""`tracelens.tree` and `tracelens.roofline` against what can be worked out
without tracelens: kernels under a module found from the raw JSON by time
nesting and correlation ids, the module view against `tracelens tree
--modules`, sheet UIDs naming their ops, and roofline figures by hand and
against `tracelens roofline`."""

import gzip
import json
import re

import pytest

import tracelens
from conftest import TESTDATA, corpus, run

BERT = "pytorch/h100_bert_small.json.gz"
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def raw_events(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


@pytest.fixture(scope="module")
def bert_tree():
    return tracelens.tree(corpus(BERT))


def kernels_under(events, module_name):
    """The GPU events launched inside the frame `module_name`, from the raw
    events: launches on the module's thread within its time span, and the
    GPU events carrying their correlation ids."""
    (m,) = [e for e in events if e.get("name") == module_name and e.get("ph") == "X"]
    start, end = m["ts"], m["ts"] + m["dur"]
    launches = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver")
        and (e["pid"], e["tid"]) == (m["pid"], m["tid"])
        and start <= e["ts"] and e["ts"] + e.get("dur", 0) <= end
        and "correlation" in e.get("args", {})
    }
    return [
        e
        for e in events
        if e.get("cat") in GPU_CATS and e.get("args", {}).get("correlation") in launches
    ]


@pytest.mark.parametrize("module", ["BertSelfOutput_0", "BertLayer_1", "BertLMHeadModel_0"])
def test_kernels_under_a_module_are_those_it_launched(bert_tree, module):
    name = f"nn.Module: {module}"
    (node,) = bert_tree.find(f"^{re.escape(name)}$", category="python_function")
    expected = kernels_under(raw_events(corpus(BERT)), name)
    assert expected, "the module launches GPU work"
    got = node.gpu_events
    assert sorted((k.ts, k.name) for k in got) == sorted((e["ts"], e["name"]) for e in expected)
    assert node.gpu_time == pytest.approx(sum(e["dur"] for e in expected), rel=1e-12)
    assert all(k.is_gpu and k.category in GPU_CATS for k in got)


def test_walk_from_the_roots_reaches_every_linked_gpu_event_once(bert_tree):
    seen = []
    stack = list(bert_tree.roots)
    while stack:
        n = stack.pop()
        for c in n.children:
            assert c.parent == n
            stack.append(c)
        if n.is_gpu:
            seen.append(n.uid)
    assert len(seen) == len(set(seen))
    assert len(seen) == bert_tree.gpu_total - bert_tree.gpu_unlinked
    assert bert_tree.gpu_total == sum(
        1 for e in raw_events(corpus(BERT)) if e.get("cat") in GPU_CATS and e.get("ph") == "X"
    )


def test_module_view_equals_the_command(bert_tree, binary):
    printed = run(binary, "tree", "--modules", corpus(BERT))
    lines = [re.match(r"^[│├└─\s]*nn\.Module: (\S+) \.* \(([\d.]+) µs\)$", l) for l in printed.splitlines()]
    assert all(lines), printed
    frame = bert_tree.modules()
    assert list(frame["module"]) == [m.group(1) for m in lines]
    assert [f"{t:.2f}" for t in frame["gpu_time_us"]] == [m.group(2) for m in lines]
    # Parents, depths and paths agree with each other and with the nodes.
    by_uid = frame.set_index("uid")
    for row in frame.itertuples():
        node = bert_tree.node(row.uid)
        assert node.name == f"nn.Module: {row.module}"
        assert row.gpu_events == len(node.gpu_events)
        if row.depth == 0:
            assert row.path == row.module
        else:
            parent = by_uid.loc[row.parent_uid]
            assert parent.depth == row.depth - 1
            assert row.path == f"{parent.path}.{row.module}"
    assert str(frame["parent_uid"].dtype) == "Int64"
    everything = bert_tree.modules(all=True)
    assert len(everything) >= len(frame)
    assert set(frame["uid"]) <= set(everything["uid"])


def test_sheet_uids_name_their_ops(bert_tree):
    report = tracelens.report(corpus(BERT), gpu_arch="H100")
    for sheet, column in [("ops_unique_args", "ex_UID"), ("GEMM", "UID_first")]:
        frame = report[sheet]
        assert len(frame) > 0
        for uid, name in zip(frame[column], frame["name"]):
            assert bert_tree.node(int(uid)).name == name, (sheet, uid)


def test_args_are_the_recorded_ones(bert_tree):
    events = raw_events(corpus(BERT))
    addmm = [e for e in events if e.get("name") == "aten::addmm" and e.get("ph") == "X"]
    nodes = bert_tree.find("^aten::addmm$", category="cpu_op")
    assert len(nodes) == len(addmm)
    by_ts = {e["ts"]: e["args"] for e in addmm}
    for n in nodes:
        recorded = by_ts[n.ts]
        for key in ("Input Dims", "Input type", "Input Strides", "Concrete Inputs", "External id"):
            assert n.args[key] == recorded[key], key
        assert isinstance(n.pid, int) and isinstance(n.tid, int)


def test_tree_errors():
    with pytest.raises(tracelens.TracelensError, match="nope.json"):
        tracelens.tree(TESTDATA / "nope.json")
    t = tracelens.tree(TESTDATA / "example.json")
    with pytest.raises(ValueError, match="invalid pattern"):
        t.find("(")
    with pytest.raises(IndexError, match="out of range"):
        t.node(len(t))
    assert t.node(len(t) - 1).uid == len(t) - 1


def test_roofline_gemm_by_hand_and_as_the_command(binary):
    r = tracelens.roofline.gemm(m=4096, n=2048, k=1024, gpu_arch="H100", time_us=50)
    flops = 2 * 4096 * 2048 * 1024
    nbytes = 2 * (4096 * 1024 + 1024 * 2048 + 4096 * 2048)  # bf16 A, B, C
    assert r.flops == flops and r.bytes == nbytes
    assert r.flops_per_byte == pytest.approx(flops / nbytes)
    assert r.compute_spec == "matrix_bf16" and r.gpu_arch == "H100"
    compute_us = flops / (r.peak_tflops * 1e12) * 1e6
    memory_us = nbytes / (r.mem_bw_gbps * 1e9) * 1e6
    assert r.roofline_time_us == pytest.approx(max(compute_us, memory_us))
    assert r.bound == ("COMPUTE_BOUND" if compute_us >= memory_us else "MEMORY_BOUND")
    assert r.tflops_s == pytest.approx(flops / 50e-6 / 1e12)
    assert r.pct_of_roofline == pytest.approx(r.roofline_time_us / 50 * 100)
    assert (r.params["M"], r.params["N"], r.params["K"]) == (4096, 2048, 1024)
    printed = run(binary, "roofline", "gemm", "--m", 4096, "--n", 2048, "--k", 1024,
                  "--gpu-arch", "H100", "--time-us", 50)
    assert str(r) == printed


def test_roofline_sdpa_and_conv_as_the_command(binary):
    r = tracelens.roofline.sdpa(batch=2, heads=16, kv_heads=4, seq_q=1024, head_dim=128,
                                causal=True, dtype="fp16", gpu_arch="MI300X")
    printed = run(binary, "roofline", "sdpa", "--batch", 2, "--heads", 16, "--kv-heads", 4,
                  "--seq-q", 1024, "--head-dim", 128, "--causal", "--dtype", "fp16",
                  "--gpu-arch", "MI300X")
    assert str(r) == printed
    assert r.time_us is None and r.tflops_s is None and r.roofline_time_us > 0
    c = tracelens.roofline.conv([8, 64, 56, 56], [128, 64, 3, 3], stride=[2, 2], padding=[1, 1])
    printed = run(binary, "roofline", "conv", "--input", "8,64,56,56", "--weight", "128,64,3,3",
                  "--stride", "2,2", "--padding", "1,1")
    assert str(c) == printed
    # 28×28 outputs per image and channel, 64×3×3 multiply-adds each.
    assert c.flops == 2 * 8 * 128 * 28 * 28 * 64 * 3 * 3
    assert c.gpu_arch is None and c.bound is None


def test_roofline_errors_are_the_command_lines(binary):
    with pytest.raises(tracelens.TracelensError) as e:
        tracelens.roofline.gemm(m=0, n=1, k=1)
    import subprocess

    done = subprocess.run([binary, "roofline", "gemm", "--m", "0", "--n", "1", "--k", "1"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert done.stderr.strip() == f"tracelens: error: {e.value}"
    with pytest.raises(tracelens.TracelensError, match="dtype"):
        tracelens.roofline.gemm(m=1, n=1, k=1, dtype="int3")


def test_example_tree_without_the_corpus():
    # testdata/example.json (see tests/tree_cli.rs): Model_0 holds the gemm
    # (12 µs), relu (4.5), NCCL (20) and memcpy (3) work.
    t = tracelens.tree(TESTDATA / "example.json")
    (model,) = t.find("^nn.Module: Model_0$")
    assert model.gpu_time == 39.5
    assert sorted(k.dur for k in model.gpu_events) == [3, 4.5, 12, 20]
    frame = t.modules()
    assert list(frame["module"]) == ["Model_0", "Linear_0", "ReLU_0"]
    assert list(frame["gpu_time_us"]) == [39.5, 12.0, 4.5]
    assert list(frame["path"]) == ["Model_0", "Model_0.Linear_0", "Model_0.ReLU_0"]
    (gemm,) = [k for k in model.gpu_events if k.dur == 12]
    assert gemm.parent.category == "cuda_runtime"
    assert gemm.parent.parent.name == "aten::addmm"
