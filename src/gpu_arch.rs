//! GPU specifications for roofline analysis: peak memory bandwidth and peak
//! dense TFLOP/s per Compute Spec (`matrix_bf16`, `vector_fp32`, …), in the
//! reference's JSON schema.

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

/// The bundled specs: (name, JSON text). Sources and caveats for every number
/// are in `docs/gpu-specs.md`.
const BUILTIN: &[(&str, &str)] = &[
    ("MI300X", include_str!("../gpu_specs/MI300X.json")),
    ("MI325X", include_str!("../gpu_specs/MI325X.json")),
    ("MI250X", include_str!("../gpu_specs/MI250X.json")),
    ("MI355X", include_str!("../gpu_specs/MI355X.json")),
    ("A100", include_str!("../gpu_specs/A100.json")),
    ("H100", include_str!("../gpu_specs/H100.json")),
    ("H200", include_str!("../gpu_specs/H200.json")),
    ("B200", include_str!("../gpu_specs/B200.json")),
];

/// Other spellings of the bundled names: (alias, bundled name). Aliases are
/// compared after [`normalize_name`], so `H100-SXM`, `h100_sxm` and
/// `H100 SXM` all match `h100sxm`. Only spellings of the exact bundled part
/// are listed (an `H100 PCIe` is a different, slower GPU).
const ALIASES: &[(&str, &str)] = &[
    ("amdinstinctmi300x", "MI300X"),
    ("amdinstinctmi325x", "MI325X"),
    ("amdinstinctmi250x", "MI250X"),
    ("amdinstinctmi355x", "MI355X"),
    ("a100sxm", "A100"),
    ("a100sxm4", "A100"),
    ("a100sxm480gb", "A100"),
    ("a10080gb", "A100"),
    ("nvidiaa100", "A100"),
    ("nvidiaa100sxm480gb", "A100"),
    ("h100sxm", "H100"),
    ("h100sxm5", "H100"),
    ("h100sxm580gb", "H100"),
    ("nvidiah100", "H100"),
    ("nvidiah10080gbhbm3", "H100"),
    ("h200sxm", "H200"),
    ("h200sxm141gb", "H200"),
    ("nvidiah200", "H200"),
    ("b200sxm", "B200"),
    ("hgxb200", "B200"),
    ("nvidiab200", "B200"),
];

/// `name` lowercased with `-`, `_`, spaces and dots removed, for matching
/// bundled names and [`ALIASES`].
fn normalize_name(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' ' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

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

    /// A bundled spec by name or alias, ignoring case and the separators
    /// `-`, `_`, `.` and space (`mi300x`, `H100-SXM`, `h100_sxm` all work).
    pub fn builtin(name: &str) -> Option<GpuArch> {
        let key = normalize_name(name);
        let canonical = ALIASES
            .iter()
            .find(|(alias, _)| *alias == key)
            .map(|(_, n)| *n);
        BUILTIN
            .iter()
            .find(|(n, _)| canonical == Some(*n) || normalize_name(n) == key)
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

    /// The Compute Spec keys of the reference's schema (plus `matrix_fp4`).
    const KNOWN_KEYS: &[&str] = &[
        "matrix_fp16",
        "matrix_bf16",
        "matrix_fp32",
        "matrix_fp64",
        "matrix_fp8",
        "matrix_int8",
        "matrix_fp4",
        "vector_fp16",
        "vector_bf16",
        "vector_fp32",
        "vector_fp64",
    ];

    #[test]
    fn bundled_specs_parse_and_resolve_case_insensitively() {
        for (n, text) in BUILTIN {
            let a = GpuArch::from_json(text).unwrap_or_else(|e| panic!("{n}: {e}"));
            assert_eq!(a.name, *n);
            assert!(a.mem_bw_gbps.is_finite() && a.mem_bw_gbps > 0.0, "{n}");
            assert!(a.memory_gb.is_some_and(|g| g > 0.0), "{n}");
            // Every GPU has the GEMM roofs the perf models ask for most.
            for key in ["matrix_bf16", "matrix_fp32", "vector_fp32"] {
                assert!(a.peak_tflops(key).is_some(), "{n} lacks {key}");
            }
            for (key, tflops) in &a.max_achievable_tflops {
                assert!(KNOWN_KEYS.contains(&key.as_str()), "{n}: unknown key {key}");
                assert!(tflops.is_finite() && *tflops > 0.0, "{n}: {key}");
            }
            assert!(GpuArch::builtin(n).is_some(), "{n}");
        }
        assert_eq!(GpuArch::builtin_names().len(), BUILTIN.len());
        let a = GpuArch::resolve("mi300x").unwrap();
        assert_eq!(a.mem_bw_gbps, 5300.0);
        assert_eq!(a.peak_tflops("matrix_bf16"), Some(708.0));
        assert_eq!(a.peak_tflops(""), None);
        let e = GpuArch::resolve("NoSuchGPU").unwrap_err();
        assert!(e.contains("MI300X"), "{e}");
        assert!(e.contains("H100") && e.contains("MI355X"), "{e}");
    }

    #[test]
    fn reference_numbers_unchanged() {
        // The reference's MI300X / MI325X figures are kept exactly.
        let a = GpuArch::builtin("MI325X").unwrap();
        assert_eq!(a.mem_bw_gbps, 6000.0);
        assert_eq!(a.peak_tflops("matrix_bf16"), Some(843.0));
        assert_eq!(a.peak_tflops("vector_fp64"), Some(48.0));
        assert_eq!(a.max_achievable_tflops.len(), 10);
    }

    #[test]
    fn aliases_resolve() {
        for (alias, want) in [
            ("H100-SXM", "H100"),
            ("h100_sxm", "H100"),
            ("H100 SXM5", "H100"),
            ("NVIDIA H100 80GB HBM3", "H100"),
            ("h200-sxm-141gb", "H200"),
            ("A100-SXM4-80GB", "A100"),
            ("hgx_b200", "B200"),
            ("AMD Instinct MI300X", "MI300X"),
            ("mi-355x", "MI355X"),
            ("b200", "B200"),
        ] {
            let a = GpuArch::resolve(alias).unwrap_or_else(|e| panic!("{alias}: {e}"));
            assert_eq!(a.name, want, "{alias}");
        }
        for (_, target) in ALIASES {
            assert!(GpuArch::builtin(target).is_some(), "{target}");
        }
        // A different part is not silently mapped to the SXM one.
        assert!(GpuArch::builtin("H100-PCIe").is_none());
        assert!(GpuArch::builtin("").is_none());
    }
}
