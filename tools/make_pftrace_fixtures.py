"""Write the small rocprofv3-style Perfetto fixtures of testdata/pftrace/.

One `.pftrace` per layout or wire-format case a decoder must handle, each
with a few HIP API slices (with corr_id), kernels and memory copies, and
beside it `<name>.traceconv.json`: the JSON `traceconv json` would export,
as computed by the project's independent restatement of that export
(shared/tools/pftrace_to_traceconv_json.py, protobuf decoding by the PyPI
`perfetto` package), never by tracelens.

Needs the PyPI `perfetto` package (pure-Python protobuf bindings; no
binary, no network).

Usage: python3 tools/make_pftrace_fixtures.py [OUT_DIR] [--converter PATH]
  OUT_DIR      default testdata/pftrace (relative to the repository)
  --converter  the converter script (default ../shared/tools/pftrace_to_traceconv_json.py
               beside the repository)
"""
import importlib.util
import io
import contextlib
import sys
from pathlib import Path

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

BOOTTIME = 6            # CLOCK_BOOTTIME: rocprofiler's clock and the trace clock
INCR = 64               # the SDK's sequence-scoped incremental clock
ABS = 65                # a sequence-scoped absolute clock (microseconds)
CLEARED, NEEDS = 1, 2   # sequence_flags
SERVICE_SEQ = 1
US = 1000

T0 = 172_352_210_000_000          # boottime ns of the first record
WRITE_TIME = T0 + 60_000_000_000  # when the writer ran (after the app)

KIND_HIP, KIND_KERNEL, KIND_COPY = 27, 13, 11


class Writer:
    """One trace being written: packets, per-sequence interning and clocks."""

    def __init__(self):
        self.trace = pb.Trace()
        self.seqs = {}
        p = self.packet(SERVICE_SEQ)
        p.clock_snapshot.primary_trace_clock = BOOTTIME
        for cid, v in ((BOOTTIME, WRITE_TIME), (1, 1_780_000_000_000_000_000), (3, WRITE_TIME - 5)):
            c = p.clock_snapshot.clocks.add()
            c.clock_id = cid
            c.timestamp = v

    def packet(self, seq):
        p = self.trace.packet.add()
        p.trusted_packet_sequence_id = seq
        return p

    def cleared(self, seq, default_track, incr_base=WRITE_TIME, incr_boot=WRITE_TIME,
                abs_clock=None):
        """The packet that starts (or restarts) a sequence's incremental state."""
        self.seqs[seq] = {"cat": {}, "name": {}, "ann": {}, "incr": incr_boot}
        p = self.packet(seq)
        p.timestamp = 0
        p.sequence_flags = CLEARED
        p.trace_packet_defaults.timestamp_clock_id = INCR
        if default_track is not None:
            p.trace_packet_defaults.track_event_defaults.track_uuid = default_track
        c = p.clock_snapshot.clocks.add()
        c.clock_id = BOOTTIME
        c.timestamp = incr_boot
        c = p.clock_snapshot.clocks.add()
        c.clock_id = INCR
        c.timestamp = incr_base
        c.is_incremental = True
        c.unit_multiplier_ns = 1
        if abs_clock is not None:      # (value in us, boottime ns it stands for)
            q = self.packet(seq)
            c = q.clock_snapshot.clocks.add()
            c.clock_id = BOOTTIME
            c.timestamp = abs_clock[1]
            c = q.clock_snapshot.clocks.add()
            c.clock_id = ABS
            c.timestamp = abs_clock[0]
            c.unit_multiplier_ns = 1000
        return p

    def stamp(self, p, seq, ts, mode):
        """Timestamps packet `p` with boottime `ts` on the clock `mode` says."""
        st = self.seqs[seq]
        if mode == "incr" and ts >= st["incr"]:
            p.timestamp = ts - st["incr"]          # delta on the sequence default clock
            st["incr"] = ts
        elif mode == "abs" and ts % US == 0:
            p.timestamp = (ts - T0) // US + 5_000_000
            p.timestamp_clock_id = ABS
        else:
            p.timestamp = ts
            p.timestamp_clock_id = BOOTTIME

    def intern(self, seq, kind, s, idata):
        table = self.seqs[seq][kind]
        if s in table:
            return table[s]
        iid = len(table) + 1
        table[s] = iid
        e = {"cat": idata.event_categories, "name": idata.event_names,
             "ann": idata.debug_annotation_names}[kind].add()
        e.iid = iid
        e.name = s
        return iid

    def descriptor(self, seq, fill, ts=None):
        p = self.packet(seq)
        p.sequence_flags = NEEDS
        if ts is None:
            p.timestamp = 0                        # delta 0 on the incremental clock
        else:
            p.timestamp = ts
            p.timestamp_clock_id = BOOTTIME
        fill(p.track_descriptor)
        return p

    def begin(self, seq, cat, name, track, ts, items, corr=None, puuid=0, inline=False,
              mode="boot", typ=pb.TrackEvent.TYPE_SLICE_BEGIN):
        p = self.packet(seq)
        self.stamp(p, seq, ts, mode)
        p.sequence_flags = NEEDS
        te = p.track_event
        te.type = typ
        if inline:
            te.categories.append(cat)
            te.name = name
        else:
            te.category_iids.append(self.intern(seq, "cat", cat, p.interned_data))
            te.name_iid = self.intern(seq, "name", name, p.interned_data)
        te.track_uuid = track
        for k, v in items:
            a = te.debug_annotations.add()
            if inline or k.startswith("!"):
                a.name = k.lstrip("!")
            else:
                a.name_iid = self.intern(seq, "ann", k, p.interned_data)
            if isinstance(v, bool):
                a.bool_value = v
            elif isinstance(v, float):
                a.double_value = v
            elif isinstance(v, str):
                a.string_value = v
            elif isinstance(v, tuple):             # ("i", n): int_value
                a.int_value = v[1]
            else:
                a.uint_value = v
        if corr is not None:
            te.flow_ids.append(corr ^ puuid)
        if not p.interned_data.ListFields():
            p.ClearField("interned_data")
        return p

    def end(self, seq, track, ts, mode="boot"):
        p = self.packet(seq)
        self.stamp(p, seq, ts, mode)
        p.sequence_flags = NEEDS
        p.track_event.type = pb.TrackEvent.TYPE_SLICE_END
        p.track_event.track_uuid = track
        return p

    def counter(self, seq, track, ts, value):
        p = self.packet(seq)
        self.stamp(p, seq, ts, "boot")
        p.sequence_flags = NEEDS
        p.track_event.type = pb.TrackEvent.TYPE_COUNTER
        p.track_event.track_uuid = track
        if isinstance(value, float):
            p.track_event.double_counter_value = value
        else:
            p.track_event.counter_value = value

    def write(self, path):
        Path(path).write_bytes(self.trace.SerializeToString())


GEMM = "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0"
FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "std::array<char*, 1ul> >")
NCCL = "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"


class Process:
    """A rocprofv3 tool writer (ROCm 6.3, mid-2025 or 7.0 annotation set) for one process."""

    def __init__(self, w, seq, pid, tid2, puuid, era="7.0", mode="boot", name_style=None,
                 cleared_kwargs=None, stream_track=True):
        self.w, self.seq, self.pid, self.tid2, self.puuid = w, seq, pid, tid2, puuid
        self.era, self.mode = era, mode
        self.main_uuid = pid ^ puuid
        self.names = name_style or {}
        self.stream_track = stream_track
        w.cleared(seq, self.main_uuid, **(cleared_kwargs or {}))
        self.fills = {}
        self.seen = set()
        self.describe_basics()

    def describe_basics(self):
        w = self.w

        def thread(d):
            d.uuid = self.main_uuid
            d.parent_uuid = self.puuid
            d.thread.pid = self.pid
            d.thread.tid = self.pid
            d.thread.thread_name = "python3"

        def process(d):
            d.uuid = self.puuid
            d.process.pid = self.pid
            d.process.process_name = "python3"
            d.process.cmdline.extend(["python3", "train.py"])

        w.descriptor(self.seq, thread)
        w.descriptor(self.seq, process)
        self.seen = {self.main_uuid, self.puuid}
        self.track(f"THREAD 1 ({self.tid2})", self.tid2)

    def track(self, name, ident):
        uuid = ident ^ self.puuid

        def fill(d):
            d.uuid = uuid
            d.parent_uuid = self.puuid
            d.name = name
        self.fills[uuid] = fill
        self.w.descriptor(self.seq, fill)
        return uuid

    def thread_track(self, tid):
        return self.main_uuid if tid == self.pid else self.tid2 ^ self.puuid

    def stream(self, sid):
        if self.stream_track:
            return self.track(f'STREAM [" {sid} "] ', 0x1000 + sid)
        return self.track(f"COMPUTE Agent [{sid}] QUEUE [0] GPU", 0x2000 + sid)

    def copy_track(self, dst):
        if self.stream_track:
            return None
        return self.track(f"COPY to AGENT [{dst}] THREAD [0] (GPU)", 0x3000 + dst)

    def slice(self, cat, name, track, b, e, items, corr, end=True):
        if track not in self.seen:
            self.seen.add(track)
            self.w.descriptor(self.seq, self.fills[track], ts=b)
        self.w.begin(self.seq, cat, self.names.get(name, name), track, b, items, corr,
                     self.puuid, mode=self.mode)
        if end:
            self.w.end(self.seq, track, e, mode=self.mode)

    def agent(self, n):
        return n if self.era == "6.3" else f"Agent-{n}"

    def api(self, name, tid, b, d, corr, stream=None, end=True):
        items = [("begin_ns", b), ("end_ns", b + d), ("delta_ns", d), ("tid", tid),
                 ("kind", KIND_HIP), ("operation", ("i", 1)), ("corr_id", corr)]
        if self.era != "6.3":
            items.append(("ancestor_id", 0))
        if self.era == "7.0":
            items.append(("stream_ID", stream or 0))
        self.slice("hip_api", name, self.thread_track(tid), b, b + d, items, corr, end)

    def kernel(self, name, agent, track, b, e, corr, grid, wg, vgpr=8, sgpr=16, lds=0,
               scratch=0, stream=1, end=True, pmc=None):
        items = [("begin_ns", b), ("end_ns", e), ("delta_ns", e - b), ("kind", KIND_KERNEL),
                 ("agent", self.agent(agent))]
        if self.era != "6.3":
            items.append(("agent_type", "GPU"))
        items += [("corr_id", corr),
                  ("queue", 0x7F3A_0000_1000 + agent if self.era == "6.3" else 0),
                  ("tid", self.pid), ("kernel_id", 7 + agent)]
        if self.era == "7.0":
            items += [("Scratch_Size", scratch), ("LDS_Block_Size", lds), ("VGPR_Count", vgpr),
                      ("Accum_VGPR_Count", 0), ("SGPR_Count", sgpr)]
        else:
            items += [("private_segment_size", scratch), ("group_segment_size", lds)]
        items += [("workgroup_size", wg), ("grid_size", grid)]
        if self.era == "7.0":
            items.append(("stream_ID", stream))
        for k, v in (pmc or {}).items():
            items.append(("!" + k, v))
        self.slice("kernel_dispatch", name, track, b, e, items, corr, end)

    def copy(self, name, src, dst, nbytes, track, b, e, corr, tid, stream=1):
        items = [("begin_ns", b), ("end_ns", e), ("delta_ns", e - b), ("kind", KIND_COPY),
                 ("operation", ("i", 2)), ("src_agent", self.agent(src)),
                 ("dst_agent", self.agent(dst)), ("copy_bytes", nbytes), ("corr_id", corr),
                 ("tid", tid)]
        if self.era == "7.0":
            items.append(("stream_ID", stream))
        self.slice("memory_copy", name, track, b, e, items, corr)


def workload(pr, t0=T0, corr0=0, gpus=(1, 2), api_end=True, kernel_end=True):
    """The standard little run: HIP launches and copies on two threads, kernels on two GPUs."""
    tid2 = pr.tid2
    main = pr.pid
    g1, g2 = gpus
    s1, s2 = pr.stream(g1), pr.stream(g2)
    c1 = pr.copy_track(g1) or s1
    c2 = pr.copy_track(0) or s2
    launches = [  # (name, tid, begin, dur, corr, stream)
        ("hipLaunchKernel", main, 1000, 6, 1, 1),
        ("hipLaunchKernel", main, 1010, 5, 2, 1),
        ("hipExtLaunchKernel", tid2, 1000, 7, 3, 2),
        ("hipMemcpyHtoDAsync", main, 1100, 9, 4, 1),
        ("hipMemcpyDtoHAsync", tid2, 1100, 8, 5, 2),
        ("hipMalloc", main, 900, 40, 6, None),
        ("hipLaunchKernel", main, 1200, 6, 7, 1),
    ]
    for n, tid, b, d, corr, s in launches:
        pr.api(n, tid, t0 + b * US, d * US, corr0 + corr, stream=s,
               end=api_end or corr != 7)
    pr.copy("MEMORY_COPY_HOST_TO_DEVICE", 0, g1, 20138, c1, t0 + 1115 * US, t0 + 1125 * US,
            corr0 + 4, main, stream=1)
    pr.copy("MEMORY_COPY_DEVICE_TO_HOST", g2, 0, 4096, c2, t0 + 1112 * US, t0 + 1117 * US,
            corr0 + 5, tid2, stream=2)
    pr.kernel(GEMM, g1, s1, t0 + 1008 * US, t0 + 1050 * US, corr0 + 1, 1024, 256, vgpr=128,
              sgpr=96, lds=16384, stream=1, pmc={"SQ_WAVES": 256.0})
    pr.kernel(GEMM, g1, s1, t0 + 1050 * US, t0 + 1090 * US + 500, corr0 + 2, 1024, 256,
              vgpr=128, sgpr=96, lds=16384, stream=1)
    pr.kernel(FILL, g1, s1, t0 + 1210 * US, t0 + 1216 * US, corr0 + 7, 4096, 128, stream=1,
              end=kernel_end)
    pr.kernel(NCCL, g2, s2, t0 + 1004 * US, t0 + 1204 * US, corr0 + 3, 56, 256, scratch=2048,
              stream=2)


PUUID = 0x5A5A5A5A12345678


def rocm63_numeric_agents():
    w = Writer()
    workload(Process(w, 2, 4242, 4250, PUUID, era="6.3", stream_track=False))
    return w


def segment_sizes():
    w = Writer()
    workload(Process(w, 2, 4242, 4250, PUUID, era="2025-05"))
    return w


def rocm70():
    w = Writer()
    workload(Process(w, 2, 4242, 4250, PUUID))
    return w


def multi_sequence():
    """Two processes, each on its own writer sequence with its own interning."""
    w = Writer()
    a = Process(w, 2, 4242, 4250, PUUID)
    b = Process(w, 7, 5151, 5160, 0x3C3C3C3C87654321,
                name_style={"hipLaunchKernel": "hipModuleLaunchKernel"})
    workload(b, t0=T0 + 3 * US, corr0=100, gpus=(3, 4))
    workload(a)
    return w


def interning_reset():
    """A packet needing state before the first CLEARED (skipped), then a
    CLEARED, then a second CLEARED after which the same iids name other strings."""
    w = Writer()
    stray = w.packet(2)
    stray.sequence_flags = NEEDS
    stray.timestamp = T0
    stray.timestamp_clock_id = BOOTTIME
    stray.track_event.type = pb.TrackEvent.TYPE_SLICE_BEGIN
    stray.track_event.name = "dropped_before_cleared"
    stray.track_event.track_uuid = 4242 ^ PUUID
    pr = Process(w, 2, 4242, 4250, PUUID)
    workload(pr)
    # restart: new interning tables, descriptors written again
    w.cleared(2, pr.main_uuid)
    pr.names = {"hipLaunchKernel": "hipLaunchKernel_v2", GEMM: GEMM + "_after_reset"}
    # intern in another order so the old iids mean other strings now
    idp = w.packet(2)
    idp.sequence_flags = NEEDS
    for kind, s in (("name", "hipModuleLaunchKernel"), ("cat", "memory_copy"),
                    ("ann", "corr_id"), ("ann", "tid")):
        w.intern(2, kind, s, idp.interned_data)
    pr.describe_basics()
    workload(pr, t0=T0 + 5000 * US, corr0=200)
    pr.api("hipModuleLaunchKernel", pr.pid, T0 + 7000 * US, 8 * US, 300, stream=1)
    return w


def clocks():
    """Events timed by deltas on the incremental default clock, on an absolute
    microsecond sequence clock, and on explicit BOOTTIME."""
    w = Writer()
    pr = Process(w, 2, 4242, 4250, PUUID, mode="incr",
                 cleared_kwargs={"incr_base": 0, "incr_boot": T0,
                                 "abs_clock": (5_000_000, T0)})
    workload(pr)
    pr.mode = "abs"
    workload(pr, t0=T0 + 3000 * US, corr0=50)
    pr.mode = "incr"
    workload(pr, t0=T0 + 6000 * US, corr0=80)
    return w


def counters():
    """Counter tracks and events (integer and double), which traceconv drops."""
    w = Writer()
    pr = Process(w, 2, 4242, 4250, PUUID)
    workload(pr)
    for i, (name, values) in enumerate((
            ("COPY BYTES to Agent [1] (GPU)", [0, 19, 0]),
            ("SCRATCH MEMORY on Agent [2] (GPU)", [0.0, 2.5, 0.0]),
            ("Agent [1] PMC SQ_WAVES", [256, 0, 128]))):
        uuid = (0xC0FFEE + i) ^ PUUID
        p = w.packet(2)
        p.timestamp = 0
        p.sequence_flags = NEEDS
        d = p.track_descriptor
        d.uuid = uuid
        d.parent_uuid = PUUID
        d.name = name
        d.counter.unit = pb.CounterDescriptor.UNIT_SIZE_BYTES
        d.counter.unit_multiplier = 1024
        for k, v in enumerate(values):
            w.counter(2, uuid, T0 + (1115 + 5 * k) * US, v)
    return w


def unmatched():
    """A HIP call and a kernel that never end, and an END with nothing open."""
    w = Writer()
    pr = Process(w, 2, 4242, 4250, PUUID)
    t2 = pr.thread_track(4250)
    pr.seen.add(t2)
    w.descriptor(2, pr.fills[t2], ts=T0 + 500 * US)
    w.end(2, t2, T0 + 500 * US)                      # nothing open on that track yet
    workload(pr, api_end=False, kernel_end=False)
    return w


def rocpd():
    """`rocpd convert -f pftrace`: explicit process track, ThreadDescriptor on every
    thread, inline names and categories, string kind/operation, lower-case stream_id,
    workgroup/grid sizes as strings, STREAM [<id>] tracks."""
    w = Writer()
    seq, pid, tid2 = 3, 4242, 4250
    puuid = 0x0F1E2D3C4B5A6978
    main_uuid, t2_uuid = 0x1111_0000 + pid, 0x1111_0000 + tid2
    w.cleared(seq, None)

    def process(d):
        d.uuid = puuid
        d.process.pid = pid
        d.process.process_name = "python3"
        d.process.cmdline.extend(["python3", "train.py"])
        d.process.start_timestamp_ns = T0 - 5_000_000

    def thread(uuid, tid, name):
        def fill(d):
            d.uuid = uuid
            d.parent_uuid = puuid
            d.thread.pid = pid
            d.thread.tid = tid
            d.thread.thread_name = name
        return fill

    w.descriptor(seq, process)
    w.descriptor(seq, thread(main_uuid, pid, "python3"))
    w.descriptor(seq, thread(t2_uuid, tid2, "THREAD 1"))
    streams = {}
    for sid in (1, 2):
        streams[sid] = 0x2222_0000 + sid

        def fill(d, sid=sid):
            d.uuid = streams[sid]
            d.parent_uuid = puuid
            d.name = f"STREAM [{sid}]"
        w.descriptor(seq, fill)
    corr_stack = {}

    def sl(cat, name, track, b, e, items):
        w.begin(seq, cat, name, track, b, items, inline=True)
        w.end(seq, track, e)

    def api(name, tid, b, d, corr):
        corr_stack[corr] = corr + 1000
        sl("hip_api", name, main_uuid if tid == pid else t2_uuid, T0 + b * US,
           T0 + (b + d) * US,
           [("begin_ns", T0 + b * US), ("end_ns", T0 + (b + d) * US), ("delta_ns", d * US),
            ("tid", tid), ("kind", "HIP_RUNTIME_API_EXT"), ("operation", name),
            ("corr_id", corr), ("ancestor_id", 0)])

    def kernel(name, agent, sid, b, e, corr, grid, wg, lds=0, scratch=0):
        sl("kernel_dispatch", name, streams[sid], b, e,
           [("begin_ns", b), ("end_ns", e), ("delta_ns", e - b), ("kind", "KERNEL_DISPATCH"),
            ("agent", f"Agent-{agent}"), ("corr_id", corr), ("queue", 0), ("tid", pid),
            ("kernel_id", 7), ("Scratch_Size", scratch), ("LDS_Block_Size", lds),
            ("workgroup_size", f"{wg} (x={wg}, y=1, z=1)"),
            ("grid_size", f"{grid} (x={grid}, y=1, z=1)"), ("stream_id", sid),
            ("!SQ_WAVES", float(grid // 64))])

    def copy(name, src, dst, nbytes, sid, b, e, corr, tid):
        sl("memory_copy", name, streams[sid], b, e,
           [("begin_ns", b), ("end_ns", e), ("delta_ns", e - b), ("kind", "MEMORY_COPY"),
            ("src_agent", f"Agent-{src}"), ("dst_agent", f"Agent-{dst}"),
            ("copy_bytes", nbytes), ("corr_id", corr), ("tid", tid), ("stream_id", sid)])

    api("hipMalloc", pid, 900, 40, 6)
    api("hipLaunchKernel", pid, 1000, 6, 1)
    api("hipLaunchKernel", pid, 1010, 5, 2)
    api("hipExtLaunchKernel", tid2, 1000, 7, 3)
    api("hipMemcpyHtoDAsync", pid, 1100, 9, 4)
    api("hipMemcpyDtoHAsync", tid2, 1100, 8, 5)
    api("hipLaunchKernel", pid, 1200, 6, 7)
    kernel(GEMM, 1, 1, T0 + 1008 * US, T0 + 1050 * US, 1, 1024, 256, lds=16384)
    kernel(GEMM, 1, 1, T0 + 1050 * US, T0 + 1090 * US, 2, 1024, 256, lds=16384)
    kernel(NCCL, 2, 2, T0 + 1004 * US, T0 + 1204 * US, 3, 56, 256, scratch=2048)
    kernel(FILL, 1, 1, T0 + 1210 * US, T0 + 1216 * US, 7, 4096, 128)
    copy("MEMORY_COPY_HOST_TO_DEVICE", 0, 1, 20138, 1, T0 + 1115 * US, T0 + 1125 * US, 4, pid)
    copy("MEMORY_COPY_DEVICE_TO_HOST", 2, 0, 4096, 2, T0 + 1112 * US, T0 + 1117 * US, 5, tid2)
    # a roctx sample: an instant on the main thread
    w.begin(seq, "marker_api", "sample", main_uuid, T0 + 1300 * US, [("tid", pid)],
            inline=True, typ=pb.TrackEvent.TYPE_INSTANT)
    return w


FIXTURES = {
    "rocm63_numeric_agents": rocm63_numeric_agents,
    "segment_sizes": segment_sizes,
    "rocm70": rocm70,
    "rocpd_convert": rocpd,
    "multi_sequence": multi_sequence,
    "interning_reset": interning_reset,
    "clocks": clocks,
    "counters": counters,
    "unmatched": unmatched,
}


def main(argv):
    repo = Path(__file__).resolve().parents[1]
    args = [a for a in argv if not a.startswith("--")]
    converter = repo.parent / "shared" / "tools" / "pftrace_to_traceconv_json.py"
    if "--converter" in argv:
        converter = Path(argv[argv.index("--converter") + 1])
        args.remove(str(converter))
    out = Path(args[0]) if args else repo / "testdata" / "pftrace"
    out.mkdir(parents=True, exist_ok=True)
    spec = importlib.util.spec_from_file_location("pftrace_to_traceconv_json", converter)
    conv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conv)
    for name, make in FIXTURES.items():
        w = make()
        src = out / f"{name}.pftrace"
        w.write(src)
        with contextlib.redirect_stdout(io.StringIO()):
            conv.main(str(src), str(out / f"{name}.traceconv.json"))
        print(f"{src.name}: {len(w.trace.packet)} packets, {src.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
