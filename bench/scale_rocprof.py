#!/usr/bin/env python3
"""Makes a larger rocprofv3 JSON trace for benchmarks: the kernel-dispatch and
memory-copy records repeated N times, each copy shifted past the previous one
in time, with fresh dispatch and correlation ids; fini_time moves with them.

usage: bench/scale_rocprof.py IN.json[.gz] N OUT.json
Not a test; the output is only as realistic as its input.
"""
import gzip
import json
import sys


def main():
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        doc = json.load(f)
    tool = doc["rocprofiler-sdk-tool"][0]
    meta = tool["metadata"]
    span = meta["fini_time"] - meta["init_time"]
    records = tool["buffer_records"]
    for kind in ("kernel_dispatch", "memory_copy"):
        base = records.get(kind, [])
        grown = []
        for i in range(n):
            shift = i * span
            for r in base:
                c = json.loads(json.dumps(r))
                c["start_timestamp"] += shift
                c["end_timestamp"] += shift
                if "dispatch_info" in c:
                    c["dispatch_info"]["dispatch_id"] += i * len(base)
                c["correlation_id"]["internal"] += i * len(base)
                grown.append(c)
        records[kind] = grown
    meta["fini_time"] = meta["init_time"] + n * span
    with open(out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
