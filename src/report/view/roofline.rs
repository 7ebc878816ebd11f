//! Roofline charts from the roofline sheets: one chart per category sheet
//! (drawn as SVG, with the GPU's roofs) and the workbook's scatter chart
//! over a `roofline_points` data sheet (one series per category).

use crate::gpu_arch::GpuArch;
use crate::names::{col, sheet};
use crate::report::{CellRange, Chart, ChartAxis, Point, Roof, Scale, Series};
use crate::table::{RowRef, Table, Value};

/// Axis titles of the SVG plots.
const SVG_X: &str = "Arithmetic intensity (FLOPs/byte)";
const SVG_Y: &str = "Performance (TFLOP/s)";

/// One plotted point of a roofline sheet row.
#[derive(Debug, Clone, PartialEq)]
struct PlotPoint {
    /// The point: label (op name and its distinguishing parameters), FLOPs
    /// per byte, mean achieved TFLOP/s, total kernel time (µs) as weight.
    point: Point,
    /// The row's Compute Spec (selects the compute roof).
    compute_spec: String,
}

/// The plottable points of a roofline sheet: rows with a positive, finite
/// intensity and achieved rate.
fn plot_points(sheet: &Table) -> Vec<PlotPoint> {
    let (Some(_), Some(_), Some(_)) = (
        sheet.column(col::FLOPS_PER_BYTE_FIRST),
        sheet.column(col::TFLOPS_S_MEAN),
        sheet.column(col::KERNEL_TIME_US_SUM),
    ) else {
        return Vec::new();
    };
    let params: Vec<(usize, &str)> = sheet
        .columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((i, c.name.strip_prefix(col::PARAM_PREFIX)?)))
        .collect();
    let num = |r: &RowRef<'_>, name: &str| r.get_named(name).map_or(f64::NAN, Value::to_f64);
    // Cells as text for labels: `Null` is empty.
    let txt = |v: &Value| match v {
        Value::Null => String::new(),
        v => v.py_str(),
    };
    sheet
        .rows()
        .filter_map(|r| {
            let (x, y) = (
                num(&r, col::FLOPS_PER_BYTE_FIRST),
                num(&r, col::TFLOPS_S_MEAN),
            );
            if !(x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0) {
                return None;
            }
            let p: Vec<String> = params
                .iter()
                .filter(|&&(i, _)| !matches!(r.get(i), Value::Null))
                .map(|&(i, name)| format!("{name}={}", txt(r.get(i))))
                .collect();
            Some(PlotPoint {
                point: Point {
                    label: format!("{} {}", txt(r.get(0)), p.join(" ")),
                    x,
                    y,
                    weight: num(&r, col::KERNEL_TIME_US_SUM),
                },
                compute_spec: r.get_named(col::COMPUTE_SPEC).map(txt).unwrap_or_default(),
            })
        })
        .collect()
}

/// Roofline category sheets (those with per-row intensity), with their points.
fn categories(sheets: &[Table]) -> Vec<(&Table, Vec<PlotPoint>)> {
    sheets
        .iter()
        .filter(|s| s.column(col::FLOPS_PER_BYTE_FIRST).is_some())
        .map(|s| (s, plot_points(s)))
        .filter(|(_, p)| !p.is_empty())
        .collect()
}

/// A logarithmic axis named `name`.
fn log_axis(name: &str) -> ChartAxis {
    ChartAxis {
        name: name.into(),
        scale: Scale::Log10,
    }
}

/// `arch`'s roofs for the compute specs `points` use (those it has a peak
/// for), in spec order.
fn roofs(points: &[PlotPoint], arch: &GpuArch) -> Vec<Roof> {
    let mut specs: Vec<&str> = points.iter().map(|p| p.compute_spec.as_str()).collect();
    specs.sort_unstable();
    specs.dedup();
    specs
        .iter()
        .filter_map(|spec| {
            Some(Roof {
                gpu: arch.name.clone(),
                compute_spec: spec.to_string(),
                peak_tflops: arch.peak_tflops(spec)?,
                mem_bw_gbps: arch.mem_bw_gbps,
            })
        })
        .collect()
}

/// One chart per roofline category sheet with points, named after the
/// sheet, with `arch`'s roofs for the compute specs its points use.
pub fn category_charts(sheets: &[Table], arch: &GpuArch) -> Vec<Chart> {
    categories(sheets)
        .into_iter()
        .map(|(category, points)| {
            let roofs = roofs(&points, arch);
            Chart {
                name: category.name.clone(),
                title: format!("{} roofline on {}", category.name, arch.name),
                x: log_axis(SVG_X),
                y: log_axis(SVG_Y),
                series: vec![Series {
                    name: category.name.clone(),
                    points: points.into_iter().map(|p| p.point).collect(),
                    cells: None,
                }],
                roofs,
                data_table: None,
            }
        })
        .collect()
}

/// The `roofline_points` data sheet and the workbook's scatter chart over
/// it (one series per category; with `arch`, its roofs for the compute
/// specs the points use), or None when no sheet has points.
pub fn workbook_chart(sheets: &[Table], arch: Option<&GpuArch>) -> Option<(Table, Chart)> {
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
    let all: Vec<PlotPoint> = cats.iter().flat_map(|(_, p)| p.iter().cloned()).collect();
    let roofs = arch.map_or_else(Vec::new, |a| roofs(&all, a));
    for (category, points) in cats {
        let first = data.nrows();
        let mut shown = Vec::with_capacity(points.len());
        for p in points {
            data.push_row(vec![
                Value::from(category.name.as_str()),
                Value::Text(p.point.label.as_str().into()),
                Value::Float(p.point.x),
                Value::Float(p.point.y),
                Value::Float(p.point.weight),
                Value::Text(p.compute_spec.into()),
            ]);
            shown.push(p.point);
        }
        series.push(Series {
            name: category.name.clone(),
            points: shown,
            cells: Some(CellRange {
                x_col: 2,
                y_col: 3,
                first_row: first,
                last_row: data.nrows() - 1,
            }),
        });
    }
    let title = match arch {
        Some(a) => format!(
            "Roofline: achieved TFLOP/s vs arithmetic intensity ({})",
            a.name
        ),
        None => "Achieved TFLOP/s vs arithmetic intensity".to_string(),
    };
    let chart = Chart {
        name: sheet::ROOFLINE_CHART.into(),
        title,
        x: log_axis(col::FLOPS_PER_BYTE_AXIS),
        y: log_axis(col::TFLOP_S_AXIS),
        series,
        roofs,
        data_table: Some(sheet::ROOFLINE_POINTS.into()),
    };
    Some((data, chart))
}
