//! Collective types ([`CType`]) and what a collective kernel's name says
//! about the collective and its dtype.

use crate::table::Value;

// ---------------------------------------------------------------------------
// Collective types and kernel-name inference
// ---------------------------------------------------------------------------

/// Collective type of a `Collective name`, plus broadcast and
/// reduce, which the reference leaves untyped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CType {
    AllReduce,
    ReduceScatter,
    AllGather,
    AllToAll,
    AllToAllV,
    Broadcast,
    Reduce,
}

impl CType {
    pub(super) fn of(name: &str) -> Option<CType> {
        Some(match name {
            "allreduce" | "allreduce_coalesced" => CType::AllReduce,
            "reducescatter" | "_reduce_scatter_base" | "reduce_scatter_tensor_coalesced" => {
                CType::ReduceScatter
            }
            "allgather"
            | "all_gather"
            | "_allgather_base"
            | "all_gather_into_tensor_coalesced"
            | "allgather_into_tensor_coalesced" => CType::AllGather,
            "all_to_all" => CType::AllToAll,
            "all_to_allv" => CType::AllToAllV,
            "broadcast" | "_broadcast_oop" => CType::Broadcast,
            "reduce" | "_reduce_oop" => CType::Reduce,
            _ => return None,
        })
    }

    pub(super) fn label(self) -> &'static str {
        match self {
            CType::AllReduce => "allreduce",
            CType::ReduceScatter => "reducescatter",
            CType::AllGather => "allgather",
            CType::AllToAll => "alltoall",
            CType::AllToAllV => "alltoallv",
            CType::Broadcast => "broadcast",
            CType::Reduce => "reduce",
        }
    }

    /// Types with a row in `nccl_implicit_sync`.
    pub(super) fn in_sync_table(self) -> bool {
        self != CType::AllToAllV
    }

    /// The reference's implicit-sync types, where every rank waits for the
    /// last one; only these count in `straggler_summary`.
    pub(super) fn reference_sync(self) -> bool {
        matches!(
            self,
            CType::AllReduce | CType::ReduceScatter | CType::AllGather | CType::AllToAll
        )
    }

    /// Bus bandwidth / algorithm bandwidth for a group of `n` ranks: the
    /// reference's factors, and 1 for broadcast and reduce (as NCCL's own
    /// performance tests define bus bandwidth).
    pub(super) fn bus_factor(self, n: f64) -> f64 {
        match self {
            CType::AllReduce => 2.0 * (n - 1.0) / n,
            CType::ReduceScatter | CType::AllGather | CType::AllToAll => (n - 1.0) / n,
            CType::Broadcast | CType::Reduce => 1.0,
            CType::AllToAllV => f64::NAN,
        }
    }
}

pub(super) fn ctype_of_val(v: &Value) -> Option<CType> {
    v.as_str().and_then(CType::of)
}

/// What a collective kernel's name says about the collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelGuess {
    /// A `Collective name` as PyTorch writes it (`allreduce`, `all_to_all`, …).
    pub collective: Option<&'static str>,
    /// A PyTorch dtype name (`Float`, `BFloat16`, …), only for kernels that
    /// reduce: data-moving kernels (all-gather, broadcast, send/recv) are
    /// compiled for bytes whatever the tensor's type.
    pub dtype: Option<&'static str>,
    /// The kernel is NCCL's SendRecv, which serves all-to-all as well as
    /// point-to-point send/recv.
    pub send_recv: bool,
}

/// The reference's custom collectives: kernels whose name matches get this
/// `Collective name` when the trace has none.
pub(super) const CUSTOM_COLLECTIVES: [(&str, &str); 1] = [("cross_device_reduce", "allreduce")];

/// Infers the collective and dtype from a kernel name such as
/// `ncclKernel_AllReduce_RING_LL_Sum_float`,
/// `ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL`,
/// `ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t` or
/// `void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>`.
pub fn infer_from_kernel_name(name: &str) -> KernelGuess {
    // The parameter list says nothing about the collective.
    let base = name.split('(').next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    let has = |pats: &[&str]| pats.iter().any(|p| lower.contains(p));
    let (collective, reduces, send_recv) = if has(&["cross_device_reduce", "allreduce"]) {
        (Some("allreduce"), true, false)
    } else if has(&["reducescatter", "reduce_scatter"]) {
        (Some("reducescatter"), true, false)
    } else if has(&["allgather", "all_gather"]) {
        (Some("allgather"), false, false)
    } else if has(&["alltoall", "all_to_all"]) {
        (Some("all_to_all"), false, false)
    } else if has(&["sendrecv", "send_recv"]) {
        (Some("all_to_all"), false, true)
    } else if has(&["broadcast"]) {
        (Some("broadcast"), false, false)
    } else if has(&["reduce"]) {
        (Some("reduce"), true, false)
    } else {
        (None, false, false)
    };
    let dtype = if reduces {
        lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find_map(dtype_token)
    } else {
        None
    };
    KernelGuess {
        collective,
        dtype,
        send_recv,
    }
}

/// PyTorch's dtype name for a type token of a kernel name.
fn dtype_token(t: &str) -> Option<&'static str> {
    Some(match t {
        "float" | "f32" | "fp32" => "Float",
        "half" | "f16" | "fp16" => "Half",
        "bf16" | "bfloat16" => "BFloat16",
        "double" | "f64" | "fp64" => "Double",
        "int8" | "i8" => "Char",
        "uint8" | "u8" => "Byte",
        "int32" | "i32" => "Int",
        "uint32" | "u32" => "UInt32",
        "int64" | "i64" => "Long",
        "uint64" | "u64" => "UInt64",
        "f8e4m3" | "fp8e4m3" | "e4m3" => "Float8_e4m3fn",
        "f8e5m2" | "fp8e5m2" | "e5m2" => "Float8_e5m2",
        _ => return None,
    })
}

/// Bytes per element of a PyTorch dtype name.
pub(super) fn dtype_bytes(dtype: &str) -> Option<i64> {
    Some(match dtype {
        "Float" | "Int" => 4,
        "Long" | "Double" => 8,
        "BFloat16" | "Half" | "Short" => 2,
        "Bool" | "Byte" => 1,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names() {
        let g = infer_from_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)");
        assert_eq!(g.collective, Some("allreduce"));
        assert_eq!(g.dtype, Some("Float"));
        let g = infer_from_kernel_name("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgs)");
        assert_eq!((g.collective, g.dtype), (Some("allgather"), None));
        let g = infer_from_kernel_name("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL");
        assert_eq!(
            (g.collective, g.dtype),
            (Some("reducescatter"), Some("BFloat16"))
        );
        let g = infer_from_kernel_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)");
        assert_eq!(
            (g.collective, g.dtype, g.send_recv),
            (Some("all_to_all"), None, true)
        );
        let g = infer_from_kernel_name("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>");
        assert_eq!(
            (g.collective, g.dtype),
            (Some("allreduce"), Some("BFloat16"))
        );
        let g = infer_from_kernel_name("ncclAllReduceRingLLKernel_sum_f16(CollectiveArgs)");
        assert_eq!((g.collective, g.dtype), (Some("allreduce"), Some("Half")));
        let g = infer_from_kernel_name("ncclKernel_Broadcast_RING_LL_Sum_int8_t");
        assert_eq!((g.collective, g.dtype), (Some("broadcast"), None));
        let g = infer_from_kernel_name("ncclKernel_Reduce_RING_LL_Sum_int64_t");
        assert_eq!((g.collective, g.dtype), (Some("reduce"), Some("Long")));
        assert_eq!(
            infer_from_kernel_name("ncclDevKernel_Generic_4"),
            KernelGuess::default()
        );
    }
}
