//! The `tracelens roofline` calculator's answer as terminal text.

use std::fmt::Write;

use crate::analysis::commands::roofline_calculator::Figures;
use crate::analysis::perf_model::Evaluation;
use crate::analysis::pytorch::op_metrics::bound_name;

/// `v` with an SI prefix (k, M, G, T, P) and four decimals.
fn si(v: f64, unit: &str) -> String {
    let (scale, prefix) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(s, _)| v.abs() >= *s)
        .unwrap_or((1.0, ""));
    format!("{:.4} {prefix}{unit}", v / scale)
}

/// The terminal text of one `tracelens roofline` calculation: the model's
/// parameters, FLOPs, bytes and intensity, and with a GPU spec or a measured
/// time the roofline and what was achieved.
pub fn text(eval: &Evaluation, f: &Figures) -> String {
    let mut out = String::new();
    let params: Vec<String> = eval
        .params
        .iter()
        .map(|(k, v)| format!("{k}={}", v.to_str()))
        .collect();
    let _ = writeln!(out, "params:       {}", params.join(", "));
    let _ = writeln!(out, "FLOPs:        {} ({})", f.flops, si(f.flops, "FLOP"));
    match (f.bytes, f.intensity) {
        (Some(b), Some(i)) => {
            let _ = writeln!(out, "bytes moved:  {b} ({})", si(b, "B"));
            let _ = writeln!(out, "intensity:    {i:.3} FLOPs/byte");
        }
        _ => {
            let _ = writeln!(out, "bytes moved:  unknown (dtype size unknown)");
        }
    }
    let spec = &f.compute_spec;
    let _ = writeln!(
        out,
        "compute spec: {}",
        if spec.is_empty() { "(none)" } else { spec }
    );
    if let Some(g) = &f.gpu {
        match (g.peak_tflops, g.ridge, g.roofline_us, g.compute_bound) {
            (Some(peak), Some(ridge), Some(t), Some(compute_bound)) => {
                let _ = writeln!(
                    out,
                    "{}:        peak {peak} TFLOP/s, {} GB/s, ridge {ridge:.1} FLOPs/byte",
                    g.name, g.mem_bw_gbps
                );
                let _ = writeln!(
                    out,
                    "roofline:     {t:.3} µs, {}",
                    bound_name(compute_bound)
                );
            }
            _ => {
                let _ = writeln!(out, "{}: no peak for {spec:?}; no roofline", g.name);
            }
        }
    }
    if let Some(m) = &f.measured {
        let _ = writeln!(
            out,
            "achieved:     {:.3} TFLOP/s, {:.3} TB/s in {} µs",
            m.tflops_s, m.tb_s, m.time_us
        );
        if let Some(p) = m.pct_of_roofline {
            let _ = writeln!(out, "of roofline:  {p:.1}%");
        }
    }
    out
}
