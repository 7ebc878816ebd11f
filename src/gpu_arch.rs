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
    // An SR-IOV virtual function of the whole GPU (as cloud VMs name it).
    ("amdinstinctmi300xvf", "MI300X"),
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

/// Spellings that name a family of parts rather than one part (an
/// `NVIDIA H100` may be the SXM or the PCIe card): `--gpu-arch` accepts
/// them, a trace's device name never picks a spec by them.
const FAMILY_NAMES: &[&str] = &[
    "a100",
    "h100",
    "h200",
    "nvidiaa100",
    "nvidiah100",
    "a10080gb",
];

/// How far a device's memory may be from its spec's `memory_gb` (as a
/// fraction) for the name to pick the spec.
const MEMORY_TOLERANCE: f64 = 0.1;

/// `--gpu-arch none`: no GPU spec, and none picked from the trace.
pub const NO_ARCH: &str = "none";

/// How a report's GPU spec was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuSource {
    /// Given with `--gpu-arch NAME|FILE`.
    Given,
    /// Picked from the trace's device name.
    Detected,
    /// The trace names a GPU no bundled spec matches (or several GPUs).
    Unknown,
    /// The trace names no GPU.
    Unnamed,
    /// Turned off (`--gpu-arch none`, or detection not asked for).
    Off,
}

/// The GPU a report's trace names and the spec its roofline columns use.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectedGpu {
    /// The device name the trace gives (Kineto's `deviceProperties`
    /// `name`), distinct names joined by `", "`; None when it names none.
    pub device_name: Option<String>,
    /// The name of the spec the report used; None without one.
    pub spec: Option<String>,
    /// How the spec was chosen.
    pub source: GpuSource,
}

impl DetectedGpu {
    /// The choice for a trace whose devices are `devices` (name, memory in
    /// bytes): `given` when set (`--gpu-arch`), else, with `detect`, the
    /// spec [`GpuArch::for_device`] matches when every named device
    /// matches the same one.
    pub fn choose(
        devices: &[(String, Option<u64>)],
        given: Option<&GpuArch>,
        detect: bool,
    ) -> DetectedGpu {
        let mut names: Vec<&str> = Vec::new();
        for (n, _) in devices {
            if !n.trim().is_empty() && !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
        let device_name = (!names.is_empty()).then(|| names.join(", "));
        let (spec, source) = if let Some(g) = given {
            (Some(g.name.clone()), GpuSource::Given)
        } else if !detect {
            (None, GpuSource::Off)
        } else if names.is_empty() {
            (None, GpuSource::Unnamed)
        } else {
            match detected_spec(devices) {
                Some(a) => (Some(a.name), GpuSource::Detected),
                None => (None, GpuSource::Unknown),
            }
        };
        DetectedGpu {
            device_name,
            spec,
            source,
        }
    }

    /// The spec detection picked, as a [`GpuArch`]; None unless
    /// [`GpuSource::Detected`].
    pub fn detected_arch(&self) -> Option<GpuArch> {
        match self.source {
            GpuSource::Detected => self.spec.as_deref().and_then(GpuArch::builtin),
            _ => None,
        }
    }

    /// The note for people: which spec was picked and why, or why none
    /// was; None when there is nothing to say.
    pub fn note(&self) -> Option<String> {
        let name = self.device_name.as_deref()?;
        match (self.source, self.spec.as_deref()) {
            (GpuSource::Detected, Some(spec)) => Some(format!(
                "GPU spec {spec} picked from the trace's deviceProperties name \"{name}\" (`--gpu-arch` overrides)"
            )),
            (GpuSource::Unknown, _) => Some(format!(
                "the trace's GPU \"{name}\" has no bundled spec: roofline columns are left out; pass --gpu-arch FILE"
            )),
            _ => None,
        }
    }
}

/// The one bundled spec every named device in `devices` matches.
fn detected_spec(devices: &[(String, Option<u64>)]) -> Option<GpuArch> {
    let mut found: Option<GpuArch> = None;
    for (name, mem) in devices.iter().filter(|(n, _)| !n.trim().is_empty()) {
        let a = GpuArch::for_device(name, *mem)?;
        if found.as_ref().is_some_and(|f| f.name != a.name) {
            return None;
        }
        found = Some(a);
    }
    found
}

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

    /// The bundled spec a trace's device name (`deviceProperties` `name`,
    /// e.g. `NVIDIA H100 80GB HBM3`) names, conservatively: the name,
    /// compared as [`GpuArch::builtin`] compares (case and separators
    /// ignored), must be a bundled name or an alias of one part; family
    /// names that fit several parts (`NVIDIA H100`, `A100`) and other
    /// parts (`NVIDIA H100 PCIe`, `NVIDIA A100-PG509-200`) match nothing.
    /// When the device's memory (`totalGlobalMem`, bytes) is known it must
    /// be within 10% of the spec's `memory_gb` read as GiB, which tells a
    /// 40 GB A100 from the 80 GB one and one MI250X die (64 GiB) from the
    /// whole card the spec describes.
    pub fn for_device(name: &str, memory_bytes: Option<u64>) -> Option<GpuArch> {
        if FAMILY_NAMES.contains(&normalize_name(name).as_str()) {
            return None;
        }
        let a = GpuArch::builtin(name)?;
        let fits = match (memory_bytes, a.memory_gb) {
            (Some(bytes), Some(gb)) => {
                let gib = bytes as f64 / (1u64 << 30) as f64;
                (gib - gb).abs() <= gb * MEMORY_TOLERANCE
            }
            _ => true,
        };
        fits.then_some(a)
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

    #[test]
    fn corpus_device_names_match_conservatively() {
        let gib = |g: f64| Some((g * (1u64 << 30) as f64) as u64);
        let spec = |n: &str, m| GpuArch::for_device(n, m).map(|a| a.name);
        // The names and memory sizes of the corpus's traces.
        assert_eq!(
            spec("NVIDIA H100 80GB HBM3", Some(85018279936)).as_deref(),
            Some("H100")
        );
        assert_eq!(
            spec("AMD Instinct MI300X", Some(206141652992)).as_deref(),
            Some("MI300X")
        );
        assert_eq!(
            spec("AMD Instinct MI300X VF", Some(205571227648)).as_deref(),
            Some("MI300X")
        );
        assert_eq!(spec("NVIDIA A100-PG509-200", Some(42297524224)), None);
        assert_eq!(spec("AMD Instinct MI210", Some(68702699520)), None);
        assert_eq!(spec("AMD Radeon Graphics", Some(68702699520)), None);
        assert_eq!(spec("Tesla V100-SXM2-32GB", Some(34079899648)), None);
        assert_eq!(spec("", Some(206141652992)), None);
        // Other parts and family names pick nothing.
        assert_eq!(spec("NVIDIA H100 PCIe", gib(79.6)), None);
        assert_eq!(spec("NVIDIA H100 NVL", gib(93.0)), None);
        assert_eq!(spec("NVIDIA H100", gib(79.6)), None);
        assert_eq!(spec("NVIDIA A100 80GB PCIe", gib(79.2)), None);
        // Memory tells sizes apart; without it the name decides.
        assert_eq!(
            spec("NVIDIA A100-SXM4-80GB", gib(79.2)).as_deref(),
            Some("A100")
        );
        assert_eq!(spec("A100-SXM4-80GB", gib(39.4)), None);
        assert_eq!(spec("AMD Instinct MI250X", gib(64.0)), None);
        assert_eq!(spec("NVIDIA H200", gib(139.8)).as_deref(), Some("H200"));
        assert_eq!(spec("NVIDIA H100 80GB HBM3", None).as_deref(), Some("H100"));
    }

    #[test]
    fn choice_and_notes() {
        let dev = |n: &str| vec![(n.to_string(), None)];
        let h100 = DetectedGpu::choose(&dev("NVIDIA H100 80GB HBM3"), None, true);
        assert_eq!(
            (h100.spec.as_deref(), h100.source),
            (Some("H100"), GpuSource::Detected)
        );
        assert_eq!(
            h100.detected_arch().map(|a| a.name).as_deref(),
            Some("H100")
        );
        let note = h100.note().unwrap();
        assert!(note.starts_with("GPU spec H100 picked"), "{note}");
        let pcie = DetectedGpu::choose(&dev("NVIDIA H100 PCIe"), None, true);
        assert_eq!(
            (pcie.spec.as_deref(), pcie.source),
            (None, GpuSource::Unknown)
        );
        assert!(pcie.note().unwrap().contains("no bundled spec"));
        let off = DetectedGpu::choose(&dev("NVIDIA H100 80GB HBM3"), None, false);
        assert_eq!((off.spec.as_deref(), off.note()), (None, None));
        let mi = GpuArch::builtin("MI300X").unwrap();
        let given = DetectedGpu::choose(&dev("NVIDIA H100 80GB HBM3"), Some(&mi), true);
        assert_eq!(
            (given.spec.as_deref(), given.source),
            (Some("MI300X"), GpuSource::Given)
        );
        assert_eq!(given.detected_arch(), None);
        let none = DetectedGpu::choose(&[], None, true);
        assert_eq!((none.source, none.note()), (GpuSource::Unnamed, None));
        // Two different GPUs: no guess.
        let mixed = vec![
            ("NVIDIA H100 80GB HBM3".to_string(), None),
            ("AMD Instinct MI300X".to_string(), None),
        ];
        let m = DetectedGpu::choose(&mixed, None, true);
        assert_eq!(m.source, GpuSource::Unknown);
        assert_eq!(
            m.device_name.as_deref(),
            Some("NVIDIA H100 80GB HBM3, AMD Instinct MI300X")
        );
    }
}
