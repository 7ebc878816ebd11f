//! GPU specifications for roofline analysis: peak memory bandwidth and peak
//! dense TFLOP/s per Compute Spec (`matrix_bf16`, `vector_fp32`, …), in the
//! reference's JSON schema (spec 03 §6.2).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// One GPU's roofline parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GpuArch {
    /// Display name, e.g. `MI300X`.
    #[serde(default)]
    pub name: String,
    /// Peak memory bandwidth, GB/s (10^9 bytes per second).
    pub mem_bw_gbps: f64,
    /// Memory size, GB (informational).
    #[serde(default)]
    pub memory_gb: Option<f64>,
    /// Peak TFLOP/s by Compute Spec key (`matrix_fp16`, `vector_fp32`, …).
    pub max_achievable_tflops: BTreeMap<String, f64>,
}

/// The bundled specs: (name, JSON text).
const BUILTIN: &[(&str, &str)] = &[
    ("MI300X", include_str!("../gpu_specs/MI300X.json")),
    ("MI325X", include_str!("../gpu_specs/MI325X.json")),
];

impl GpuArch {
    /// Parses a spec in the reference's JSON schema.
    pub fn from_json(text: &str) -> Result<GpuArch, String> {
        let a: GpuArch =
            serde_json::from_str(text).map_err(|e| format!("invalid GPU spec: {e}"))?;
        if a.mem_bw_gbps.is_nan() || a.mem_bw_gbps <= 0.0 {
            return Err("invalid GPU spec: mem_bw_gbps must be a positive number".into());
        }
        Ok(a)
    }

    /// Names of the bundled specs.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// A bundled spec by name (case-insensitive).
    pub fn builtin(name: &str) -> Option<GpuArch> {
        BUILTIN
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, text)| GpuArch::from_json(text).ok())
    }

    /// `--gpu-arch NAME|FILE`: a bundled name, else a JSON file path.
    pub fn resolve(arg: &str) -> Result<GpuArch, String> {
        if let Some(a) = GpuArch::builtin(arg) {
            return Ok(a);
        }
        let p = Path::new(arg);
        if p.is_file() {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{arg}: {e}"))?;
            return GpuArch::from_json(&text).map_err(|e| format!("{arg}: {e}"));
        }
        Err(format!(
            "unknown GPU \"{arg}\" (not a bundled spec nor a JSON file); known: {}",
            GpuArch::builtin_names().join(", ")
        ))
    }

    /// Peak TFLOP/s for a Compute Spec, if the spec lists it.
    pub fn peak_tflops(&self, compute_spec: &str) -> Option<f64> {
        if compute_spec.is_empty() {
            return None;
        }
        self.max_achievable_tflops.get(compute_spec).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_specs_parse_and_resolve_case_insensitively() {
        for n in GpuArch::builtin_names() {
            assert!(GpuArch::builtin(n).is_some(), "{n}");
        }
        let a = GpuArch::resolve("mi300x").unwrap();
        assert_eq!(a.mem_bw_gbps, 5300.0);
        assert_eq!(a.peak_tflops("matrix_bf16"), Some(708.0));
        assert_eq!(a.peak_tflops(""), None);
        let e = GpuArch::resolve("NoSuchGPU").unwrap_err();
        assert!(e.contains("MI300X"), "{e}");
    }
}
