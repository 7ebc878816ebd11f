//! The `tracelens roofline` calculator's answer as terminal text.

use std::fmt::Write;

use crate::analysis::perf_model::Evaluation;
use crate::analysis::roofline::metrics_from;
use crate::gpu_arch::GpuArch;

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
pub fn text(eval: &Evaluation, arch: Option<&GpuArch>, time_us: Option<f64>) -> String {
    let mut out = String::new();
    let params: Vec<String> = eval
        .params
        .iter()
        .map(|(k, v)| format!("{k}={}", v.to_str()))
        .collect();
    let _ = writeln!(out, "params:       {}", params.join(", "));
    let _ = writeln!(
        out,
        "FLOPs:        {} ({})",
        eval.flops,
        si(eval.flops, "FLOP")
    );
    match eval.bytes {
        Some(b) => {
            let _ = writeln!(out, "bytes moved:  {b} ({})", si(b, "B"));
            let _ = writeln!(out, "intensity:    {:.3} FLOPs/byte", eval.flops / b);
        }
        None => {
            let _ = writeln!(out, "bytes moved:  unknown (dtype size unknown)");
        }
    }
    let spec = eval.compute_spec();
    let _ = writeln!(
        out,
        "compute spec: {}",
        if spec.is_empty() { "(none)" } else { &spec }
    );
    let m = metrics_from(eval.clone(), Vec::new(), time_us.unwrap_or(0.0), arch);
    if let Some(a) = arch {
        match (a.peak_tflops(&spec), &m.roofline) {
            (Some(peak), Some(r)) => {
                let ridge = peak * 1e12 / (a.mem_bw_gbps * 1e9);
                let _ = writeln!(
                    out,
                    "{}:        peak {peak} TFLOP/s, {} GB/s, ridge {ridge:.1} FLOPs/byte",
                    a.name, a.mem_bw_gbps
                );
                let _ = writeln!(out, "roofline:     {:.3} µs, {}", r.time_us, r.bound_text());
            }
            _ => {
                let _ = writeln!(out, "{}: no peak for {spec:?}; no roofline", a.name);
            }
        }
    }
    if let Some(t) = time_us {
        let _ = writeln!(
            out,
            "achieved:     {:.3} TFLOP/s, {:.3} TB/s in {t} µs",
            m.tflops_s, m.tb_s
        );
        if let Some(r) = &m.roofline {
            let _ = writeln!(out, "of roofline:  {:.1}%", r.pct);
        }
    }
    out
}
