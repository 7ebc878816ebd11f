//! Roofline pictures from the roofline sheets: one SVG per category sheet,
//! and the points and series of the Excel scatter chart.

use crate::analysis::perf_sheets::{PlotPoint, plot_points};
use crate::gpu_arch::GpuArch;
use crate::names::{col, sheet};
use crate::report::svg::{RooflinePoint, Roofs, roofline_svg};
use crate::report::xlsx::{ScatterChart, ScatterSeries};
use crate::table::{Table, Value};

/// Roofline category sheets (those with per-row intensity), with their points.
fn categories(sheets: &[Table]) -> Vec<(&Table, Vec<PlotPoint>)> {
    sheets
        .iter()
        .filter(|s| s.column(col::FLOPS_PER_BYTE_FIRST).is_some())
        .map(|s| (s, plot_points(s)))
        .filter(|(_, p)| !p.is_empty())
        .collect()
}

/// One `(file stem, SVG text)` per roofline category sheet with points.
pub fn roofline_svgs(sheets: &[Table], arch: &GpuArch) -> Vec<(String, String)> {
    categories(sheets)
        .into_iter()
        .map(|(category, points)| {
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
            let title = format!("{} roofline on {}", category.name, arch.name);
            (category.name.clone(), roofline_svg(&title, &roofs, &pts))
        })
        .collect()
}

/// The `roofline_points` data sheet and the scatter chart over it (one
/// series per category), or None when no sheet has points.
pub fn roofline_chart(sheets: &[Table], arch: Option<&GpuArch>) -> Option<(Table, ScatterChart)> {
    let cats = categories(sheets);
    if cats.is_empty() {
        return None;
    }
    let mut data = Table::new(
        sheet::ROOFLINE_POINTS,
        &[
            col::CATEGORY_LC,
            col::OP,
            col::FLOPS_PER_BYTE_AXIS,
            col::TFLOP_S_AXIS,
            col::KERNEL_TIME_US_SUM,
            col::COMPUTE_SPEC,
        ],
    );
    let mut series = Vec::new();
    for (category, points) in cats {
        let first = data.nrows();
        for p in points {
            data.push_row(vec![
                Value::from(category.name.as_str()),
                Value::Text(p.label),
                Value::Float(p.intensity),
                Value::Float(p.tflops_s),
                Value::Float(p.kernel_time_us),
                Value::Text(p.compute_spec),
            ]);
        }
        series.push(ScatterSeries {
            name: category.name.clone(),
            x_col: 2,
            y_col: 3,
            first_row: first,
            last_row: data.nrows() - 1,
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
        sheet: sheet::ROOFLINE_CHART.into(),
        title,
        data_sheet: sheet::ROOFLINE_POINTS.into(),
        series,
    };
    Some((data, chart))
}
