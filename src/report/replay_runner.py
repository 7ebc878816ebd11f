# --- tracelens replay runner: builds the recorded inputs and times the op ---
import argparse
import csv
import json
import math
import os
import sys
import time

import torch

# Trace tensor types -> torch dtype names (filled in by tracelens).
DTYPES = __DTYPES__
DEFAULT_DEVICE = __DEVICE__
# Exit code of a script whose op has no kernel for the device asked for.
NO_KERNEL = 3


def build_tensor(cfg, device):
    """A tensor of the recorded shape, dtype and strides. The storage is
    exactly what the strides reach (broadcast strides of 0 included) and is
    filled before the view is taken, so overlapping layouts work."""
    dtype = getattr(torch, DTYPES[cfg["dtype"]])
    shape = list(cfg["shape"])
    strides = cfg.get("strides")
    if strides is None:
        strides, step = [], 1
        for size in reversed(shape):
            strides.insert(0, step)
            step *= max(size, 1)
    numel = 0 if any(s == 0 for s in shape) else 1 + sum((s - 1) * st for s, st in zip(shape, strides))
    base = torch.empty(numel, dtype=dtype, device=device)
    init = cfg.get("init")
    if init == "normal" and numel > 0:
        if dtype.is_complex or (dtype.is_floating_point and dtype.itemsize >= 2):
            base.normal_()
        else:  # fp8: no normal_ kernel; draw in float32 and cast
            base.copy_(torch.randn(numel, device=device).to(dtype))
    elif init == "zeros":
        base.zero_()
    return base.as_strided(shape, strides)


def operator(entry):
    """The overload the trace called, e.g. torch.ops.aten.addmm.default."""
    namespace, name = entry["op_name"].split("::", 1)
    packet = getattr(getattr(torch.ops, namespace), name)
    return getattr(packet, entry.get("overload") or "default")


def tensor_devices(entry, device):
    """The device of each tensor argument, by name. Everything goes to
    `device`, except what the trace shows lives on the host: a 0-dim tensor
    beside larger ones (a wrapped Python number, which CUDA kernels take as
    an argument), and the host side of an aten::copy_ whose traced work was
    a host-to-device or device-to-host memcpy."""
    ir = entry["replay_ir"]
    tensors = [a for a in ir["list_pos_args"] + ir["list_kwargs"]
               if a["arg_type"].startswith("Tensor") and isinstance(a["value"], dict)]
    out = {a["arg_name"]: device for a in tensors}
    if device == "cpu":
        return out
    if any(len(a["value"]["shape"]) > 0 for a in tensors):
        for a in tensors:
            if len(a["value"]["shape"]) == 0:
                out[a["arg_name"]] = "cpu"
    if entry["op_name"] == "aten::copy_":
        kernels = " ".join(entry.get("kernels", []))
        if "HtoD" in kernels:
            out["src"] = "cpu"
        if "DtoH" in kernels:
            out["self"] = "cpu"
    return out


def arguments(entry, device):
    """Positional and keyword arguments from the entry's replay IR."""
    ir = entry["replay_ir"]
    devices = tensor_devices(entry, device)

    def value(arg):
        v = arg["value"]
        if arg["arg_type"].startswith("Tensor") and isinstance(v, dict):
            return build_tensor(v, devices[arg["arg_name"]])
        return v

    args = [value(a) for a in ir["list_pos_args"]]
    kwargs = {a["arg_name"]: value(a) for a in ir["list_kwargs"]}
    return args, kwargs


def time_per_call(fn, args, kwargs, device, warmup, iters):
    """Mean time of one call in µs: CUDA events around `iters` calls on a
    GPU, perf_counter on the CPU."""
    for _ in range(warmup):
        fn(*args, **kwargs)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn(*args, **kwargs)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) * 1000.0 / iters
    begin = time.perf_counter()
    for _ in range(iters):
        fn(*args, **kwargs)
    return (time.perf_counter() - begin) * 1e6 / iters


def replay(entry, device, warmup, iters):
    """Replays one entry; returns the measured µs per call."""
    fn = operator(entry)
    args, kwargs = arguments(entry, device)
    return time_per_call(fn, args, kwargs, device, warmup, iters)


def options(description, batched):
    p = argparse.ArgumentParser(description=description)
    if batched:
        here = os.path.dirname(os.path.abspath(__file__))
        p.add_argument("ops", nargs="?", default=os.path.join(here, "replay_ops.json"),
                       help="the JSON list of ops (default: replay_ops.json beside this script)")
        p.add_argument("--csv", default="replay_results.csv", help="where to write the results")
        p.add_argument("--stop-on-error", action="store_true")
    p.add_argument("--device", default=DEFAULT_DEVICE, help=f"cuda or cpu (default {DEFAULT_DEVICE})")
    p.add_argument("--warmup", type=int, default=20, help="untimed calls first (default 20)")
    p.add_argument("--iters", type=int, default=100, help="timed calls (default 100)")
    return p.parse_args()


def describe(entry):
    return f"{entry['op_name']}.{entry.get('overload', 'default')} (uid {entry.get('uid')})"


def main_single(entry):
    a = options(f"Replays {describe(entry)} from {entry.get('trace')}.", batched=False)
    try:
        measured = replay(entry, a.device, a.warmup, a.iters)
    except NotImplementedError as e:
        # e.g. flash attention has CUDA kernels only.
        first = (str(e).splitlines() or [type(e).__name__])[0].split(". ")[0]
        print(f"{describe(entry)}: no kernel for device {a.device}: {first}")
        return NO_KERNEL
    traced = entry.get("traced_kernel_us")
    print(f"{describe(entry)}: measured {measured:.3f} us per call on {a.device} "
          f"({a.iters} calls); traced {traced:.3f} us of GPU kernel time per call")
    return 0


def main_batched():
    a = options("Replays the ops of a tracelens replay bundle and writes a CSV of results.", batched=True)
    with open(a.ops) as f:
        entries = json.load(f)
    rows, errors = [], 0
    for i, entry in enumerate(entries, 1):
        row = {"uid": entry.get("uid"), "op": entry["op_name"], "overload": entry.get("overload"),
               "count": entry.get("count"), "traced_us": entry.get("traced_kernel_us"),
               "measured_us": None, "ratio": None, "device": a.device, "error": ""}
        try:
            row["measured_us"] = replay(entry, a.device, a.warmup, a.iters)
            traced = row["traced_us"]
            if traced and not math.isnan(traced):
                row["ratio"] = row["measured_us"] / traced
            print(f"[{i}/{len(entries)}] {describe(entry)}: measured {row['measured_us']:.3f} us, "
                  f"traced {row['traced_us']:.3f} us")
        except Exception as e:  # one op's failure is reported, the rest still run
            errors += 1
            row["error"] = f"{type(e).__name__}: {e}".splitlines()[0]
            print(f"[{i}/{len(entries)}] {describe(entry)}: error: {row['error']}")
            if a.stop_on_error:
                break
        rows.append(row)
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["uid"])
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows) - errors} of {len(entries)} ops replayed, {errors} errors; results in {a.csv}")
    return 1 if errors else 0
