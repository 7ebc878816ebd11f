//! Roofline pictures from the roofline sheets: one SVG per category sheet,
//! and the points and series of the Excel scatter chart.

use crate::analysis::perf_sheets::{PlotPoint, plot_points};
use crate::gpu_arch::GpuArch;
use crate::report::svg::{RooflinePoint, Roofs, roofline_svg};
use crate::report::xlsx::{ScatterChart, ScatterSeries};
use crate::report::{Cell, Sheet};

/// Roofline category sheets (those with per-row intensity), with their points.
fn categories(sheets: &[Sheet]) -> Vec<(&Sheet, Vec<PlotPoint>)> {
    sheets
        .iter()
        .filter(|s| s.column("FLOPS/Byte_first").is_some())
        .map(|s| (s, plot_points(s)))
        .filter(|(_, p)| !p.is_empty())
        .collect()
}

/// One `(file stem, SVG text)` per roofline category sheet with points.
pub fn roofline_svgs(sheets: &[Sheet], arch: &GpuArch) -> Vec<(String, String)> {
    categories(sheets)
        .into_iter()
        .map(|(sheet, points)| {
            let mut specs: Vec<&str> = points.iter().map(|p| p.compute_spec.as_str()).collect();
            specs.sort_unstable();
            specs.dedup();
            let roofs: Vec<Roofs> = specs
                .iter()
                .filter_map(|spec| {
                    Some(Roofs {
                        gpu: arch.name.clone(),
                        compute_spec: spec.to_string(),
                        peak_tflops: arch.peak_tflops(spec)?,
                        mem_bw_gbps: arch.mem_bw_gbps,
                    })
                })
                .collect();
            let pts: Vec<RooflinePoint> = points
                .into_iter()
                .map(|p| RooflinePoint {
                    label: p.label,
                    intensity: p.intensity,
                    tflops_s: p.tflops_s,
                    kernel_time_us: p.kernel_time_us,
                })
                .collect();
            let title = format!("{} roofline on {}", sheet.name, arch.name);
            (sheet.name.clone(), roofline_svg(&title, &roofs, &pts))
        })
        .collect()
}

/// The `roofline_points` data sheet and the scatter chart over it (one
/// series per category), or None when no sheet has points.
pub fn roofline_chart(sheets: &[Sheet], arch: Option<&GpuArch>) -> Option<(Sheet, ScatterChart)> {
    let cats = categories(sheets);
    if cats.is_empty() {
        return None;
    }
    let mut data = Sheet::new(
        "roofline_points",
        &[
            "category",
            "op",
            "FLOPs/Byte",
            "TFLOP/s",
            "Kernel Time (µs)_sum",
            "Compute Spec",
        ],
    );
    let mut series = Vec::new();
    for (sheet, points) in cats {
        let first = data.rows.len();
        for p in points {
            data.rows.push(vec![
                Cell::Text(sheet.name.clone()),
                Cell::Text(p.label),
                Cell::Float(p.intensity),
                Cell::Float(p.tflops_s),
                Cell::Float(p.kernel_time_us),
                Cell::Text(p.compute_spec),
            ]);
        }
        series.push(ScatterSeries {
            name: sheet.name.clone(),
            x_col: 2,
            y_col: 3,
            first_row: first,
            last_row: data.rows.len() - 1,
        });
    }
    let title = match arch {
        Some(a) => format!(
            "Roofline: achieved TFLOP/s vs arithmetic intensity ({})",
            a.name
        ),
        None => "Achieved TFLOP/s vs arithmetic intensity".to_string(),
    };
    let chart = ScatterChart {
        sheet: "roofline_chart".into(),
        title,
        data_sheet: "roofline_points".into(),
        series,
    };
    Some((data, chart))
}
