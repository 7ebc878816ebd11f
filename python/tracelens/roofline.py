"""FLOPs, bytes and roofline of one operation typed by hand, through the
models the report uses: ``tracelens roofline gemm|sdpa|conv`` as calls.

>>> r = tracelens.roofline.gemm(m=4096, n=4096, k=4096, gpu_arch="H100", time_us=250)
>>> r.tflops_s, r.pct_of_roofline
>>> print(r)   # the command's text
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from . import _tracelens

__all__ = ["Roofline", "conv", "gemm", "sdpa"]


@dataclass(frozen=True)
class Roofline:
    """One roofline answer. Fields that need a GPU spec (``gpu_arch=``)
    or a measured time (``time_us=``) are None without one."""

    #: The model's parameters (the sheets' ``param: …`` columns).
    params: Dict[str, Any]
    #: Floating-point operations.
    flops: float
    #: Bytes moved; None when a dtype size is unknown.
    bytes: Optional[float]
    #: Arithmetic intensity, FLOPs per byte.
    flops_per_byte: Optional[float]
    #: ``matrix_bf16``, ``vector_fp32``, …; empty when the model names none.
    compute_spec: str
    #: The GPU spec's name.
    gpu_arch: Optional[str]
    #: Peak TFLOP/s of the spec for ``compute_spec``.
    peak_tflops: Optional[float]
    #: Memory bandwidth of the spec, GB/s.
    mem_bw_gbps: Optional[float]
    #: Intensity where compute and memory time meet, FLOPs per byte.
    ridge_flops_per_byte: Optional[float]
    #: max(compute time, memory time) at peak, µs.
    roofline_time_us: Optional[float]
    #: ``COMPUTE_BOUND`` or ``MEMORY_BOUND``.
    bound: Optional[str]
    #: The measured time given, µs.
    time_us: Optional[float]
    #: Achieved TFLOP/s in ``time_us``.
    tflops_s: Optional[float]
    #: Achieved TB/s in ``time_us``.
    tb_s: Optional[float]
    #: Roofline time over ``time_us``, in %.
    pct_of_roofline: Optional[float]
    #: What ``tracelens roofline`` prints.
    text: str

    def __str__(self) -> str:
        return self.text


def _common(dtype: str, gpu_arch: Optional[str], time_us: Optional[float]) -> List[str]:
    args = ["--dtype", dtype]
    if gpu_arch is not None:
        args += ["--gpu-arch", str(gpu_arch)]
    if time_us is not None:
        args += ["--time-us", repr(float(time_us))]
    return args


def _ints(values: Sequence[int]) -> str:
    return ",".join(str(int(v)) for v in values)


def _ask(args: List[str]) -> Roofline:
    figures, text = _tracelens.roofline(args)
    return Roofline(text=text, **figures)


def gemm(
    m: int,
    n: int,
    k: int,
    batch: Optional[int] = None,
    bias: bool = False,
    dtype: str = "bf16",
    gpu_arch: Optional[str] = None,
    time_us: Optional[float] = None,
) -> Roofline:
    """``[batch ×] (m×k)·(k×n)``, as ``aten::mm``/``addmm``/``bmm``/
    ``baddbmm`` (``bias=True`` adds the bias)."""
    args = ["gemm", "--m", str(m), "--n", str(n), "--k", str(k)]
    if batch is not None:
        args += ["--batch", str(batch)]
    if bias:
        args.append("--bias")
    return _ask(args + _common(dtype, gpu_arch, time_us))


def sdpa(
    batch: int,
    heads: int,
    seq_q: int,
    head_dim: int,
    kv_heads: Optional[int] = None,
    seq_kv: Optional[int] = None,
    causal: bool = False,
    dtype: str = "bf16",
    gpu_arch: Optional[str] = None,
    time_us: Optional[float] = None,
) -> Roofline:
    """Scaled dot-product attention (flash layout); ``kv_heads`` defaults
    to ``heads`` and ``seq_kv`` to ``seq_q``."""
    args = ["sdpa", "--batch", str(batch), "--heads", str(heads)]
    args += ["--seq-q", str(seq_q), "--head-dim", str(head_dim)]
    if kv_heads is not None:
        args += ["--kv-heads", str(kv_heads)]
    if seq_kv is not None:
        args += ["--seq-kv", str(seq_kv)]
    if causal:
        args.append("--causal")
    return _ask(args + _common(dtype, gpu_arch, time_us))


def conv(
    input: Sequence[int],
    weight: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (),
    dilation: Sequence[int] = (),
    groups: int = 1,
    dtype: str = "bf16",
    gpu_arch: Optional[str] = None,
    time_us: Optional[float] = None,
) -> Roofline:
    """A forward convolution: ``input`` is N,C,spatial…, ``weight``
    C_out,C_in/groups,kernel…; empty ``stride``/``padding``/``dilation``
    mean 1, 0 and 1 per spatial dimension."""
    args = ["conv", "--input", _ints(input), "--weight", _ints(weight)]
    for flag, values in (("--stride", stride), ("--padding", padding), ("--dilation", dilation)):
        if len(values) > 0:
            args += [flag, _ints(values)]
    args += ["--groups", str(groups)]
    return _ask(args + _common(dtype, gpu_arch, time_us))
