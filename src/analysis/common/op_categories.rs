//! Op categories: registry lookup, name patterns, then the
//! kernel-name fallback.

use rustc_hash::FxHashMap as HashMap;
use std::sync::OnceLock;

use crate::analysis::common::op_registry::REGISTRY;

fn registry() -> &'static HashMap<&'static str, &'static str> {
    static MAP: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    MAP.get_or_init(|| REGISTRY.iter().copied().collect())
}

/// The category of an op named `name` whose first kernel (by start time) is
/// `first_kernel`, if it has any.
pub fn categorize(name: &str, first_kernel: Option<&str>) -> &'static str {
    categorize_with(name, || first_kernel)
}

/// [`categorize`], with the first kernel's name looked up only when the op
/// name alone does not decide (most ops are in the registry).
pub fn categorize_with<'k>(
    name: &str,
    first_kernel: impl FnOnce() -> Option<&'k str>,
) -> &'static str {
    if let Some(c) = registry().get(name) {
        return c;
    }
    if name.starts_with("triton") {
        return "triton";
    }
    if name.starts_with("record_param_comms") {
        return "record_param_comms";
    }
    if let Some(k) = first_kernel()
        && k.starts_with("void at::native")
    {
        for needle in ["elementwise", "reduce", "multi_tensor_apply"] {
            if k.contains(needle) {
                return needle;
            }
        }
    }
    "other"
}

/// True when a GPU event name is collective communication (NCCL/RCCL or
/// custom all-reduce): a case-insensitive search for `nccl`, `rccl` or
/// `cross_device_reduce`.
pub fn is_comm_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("nccl") || lower.contains("rccl") || lower.contains("cross_device_reduce")
}

/// Category of a launcher that is not a cpu_op (kernel_summary fallback).
pub fn launcher_category(launcher: &str) -> &'static str {
    let l = launcher.to_ascii_lowercase();
    if l.contains("cudagraph") || l.contains("graphlaunch") {
        "graph"
    } else {
        "runtime"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_wins_over_patterns_and_kernels() {
        assert_eq!(
            categorize("aten::addmm", Some("void at::native::elementwise")),
            "GEMM"
        );
        assert_eq!(categorize("aten::layer_norm", None), "NORM_fwd");
        assert_eq!(categorize("aten::sum", None), "reduce");
    }

    #[test]
    fn patterns_and_fallback() {
        assert_eq!(categorize("triton_poi_fused_0", None), "triton");
        assert_eq!(categorize("record_param_comms", None), "record_param_comms");
        assert_eq!(
            categorize(
                "aten::gelu",
                Some("void at::native::vectorized_elementwise_kernel<4>")
            ),
            "elementwise"
        );
        assert_eq!(
            categorize("aten::all", Some("void at::native::reduce_kernel<512>")),
            "reduce"
        );
        // The fallback needs the `void at::native` prefix.
        assert_eq!(categorize("aten::foo", Some("elementwise_kernel")), "other");
        assert_eq!(categorize("aten::foo", None), "other");
    }

    #[test]
    fn comm_names_are_case_insensitive() {
        assert!(is_comm_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
        assert!(is_comm_name("void RCCL_kernel"));
        assert!(is_comm_name("cross_device_reduce_1stage"));
        assert!(!is_comm_name("void gemm_kernel"));
        assert_eq!(launcher_category("hipGraphLaunch"), "graph");
        assert_eq!(launcher_category("cudaLaunchKernel"), "runtime");
    }
}
