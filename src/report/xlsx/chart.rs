//! Chart worksheets: a scatter chart over a data sheet's cells, one colour
//! per series, and for rooflines the memory and compute roofs drawn as
//! lines whose end points are listed under the chart.

use rust_xlsxwriter::{
    Chart, ChartFormat, ChartLegendPosition, ChartLine, ChartLineDashType, ChartMarker,
    ChartMarkerType, ChartSolidFill, ChartType, Color, Format, Workbook, Worksheet,
};

use crate::report::roof_geometry::{RoofGroup, decades, roof_extents, roof_groups};
use crate::report::{CellRange, Chart as ReportChart, Scale, WriteError};
use crate::table::Table;

/// Size of an inserted chart, pixels.
const CHART_WIDTH: u32 = 960;
const CHART_HEIGHT: u32 = 600;
/// First worksheet row (0-based) of the roof-line table, below the chart
/// (which starts at row 1, column A, and covers 30 default rows).
const ROOF_TABLE_ROW: u32 = 33;
/// Marker colours of the series, in order (a colour-blind-safe palette
/// without the roofs' red); more series reuse them with another marker
/// shape.
const SERIES_COLORS: [u32; 9] = [
    0x1F77B4, 0xFF7F0E, 0x2CA02C, 0x9467BD, 0x8C564B, 0xE377C2, 0x7F7F7F, 0xBCBD22, 0x17BECF,
];
/// Marker shapes, one per round through [`SERIES_COLORS`].
const SERIES_MARKERS: [ChartMarkerType; 4] = [
    ChartMarkerType::Circle,
    ChartMarkerType::Diamond,
    ChartMarkerType::Square,
    ChartMarkerType::Triangle,
];
/// Roof colours, one per GPU.
const ROOF_COLORS: [u32; 3] = [0xD62728, 0x000000, 0x17BECF];

/// Adds worksheet `name` holding `chart`, whose data is one of `sheets`
/// (written under `data_names`).
pub fn add_chart_sheet(
    workbook: &mut Workbook,
    chart: &ReportChart,
    name: &str,
    sheets: &[&Table],
    data_names: &[String],
) -> Result<(), WriteError> {
    let wanted = chart.data_table.as_deref().unwrap_or_default();
    let idx = sheets
        .iter()
        .position(|s| s.name == wanted)
        .or_else(|| data_names.iter().position(|n| *n == wanted))
        .ok_or_else(|| WriteError::Invalid(format!("no data sheet named {wanted:?}")))?;
    let built = scatter_chart(chart, sheets[idx], &data_names[idx])?;
    let ws = workbook.add_worksheet();
    ws.set_name(name)?;
    match built {
        Some(mut c) => {
            add_roofs(ws, &mut c, chart, name)?;
            ws.insert_chart(1, 0, &c)?;
            // Printed (or exported to PDF) on one landscape page.
            ws.set_landscape();
            ws.set_print_fit_to_pages(1, 1);
        }
        None => {
            ws.write_string(0, 0, format!("{}: no data to plot", chart.title))?;
        }
    }
    Ok(())
}

/// The Excel chart for `spec`, reading `data` (written as worksheet
/// `data_name`); `None` when `spec` has no series. Series are markers
/// only, each in its own colour (and, past nine series, its own shape).
fn scatter_chart(
    spec: &ReportChart,
    data: &Table,
    data_name: &str,
) -> Result<Option<Chart>, WriteError> {
    if spec.series.is_empty() {
        return Ok(None);
    }
    let mut chart = Chart::new(ChartType::Scatter);
    chart.title().set_name(spec.title.as_str());
    for (i, s) in spec.series.iter().enumerate() {
        let cells = s.cells.ok_or_else(|| {
            WriteError::Invalid(format!(
                "series {:?} names no cells of {:?}",
                s.name, data.name
            ))
        })?;
        let (r0, r1, xc, yc) = series_cells(&s.name, &cells, data)?;
        let color = Color::RGB(SERIES_COLORS[i % SERIES_COLORS.len()]);
        let shape = SERIES_MARKERS[(i / SERIES_COLORS.len()) % SERIES_MARKERS.len()];
        chart
            .add_series()
            .set_name(s.name.as_str())
            .set_categories((data_name, r0, xc, r1, xc))
            .set_values((data_name, r0, yc, r1, yc))
            .set_marker(
                ChartMarker::new().set_type(shape).set_size(7).set_format(
                    ChartFormat::new()
                        .set_solid_fill(ChartSolidFill::new().set_color(color))
                        .set_border(ChartLine::new().set_color(color)),
                ),
            );
    }
    set_axis(chart.x_axis(), &spec.x);
    set_axis(chart.y_axis(), &spec.y);
    chart.legend().set_position(ChartLegendPosition::Right);
    chart.set_width(CHART_WIDTH).set_height(CHART_HEIGHT);
    Ok(Some(chart))
}

/// Names and scales an Excel chart axis like `axis`.
fn set_axis(excel: &mut rust_xlsxwriter::ChartAxis, axis: &crate::report::ChartAxis) {
    excel.set_name(axis.name.as_str());
    if axis.scale == Scale::Log10 {
        excel.set_log_base(10);
    }
}

/// One straight roof line: legend text, end points, colour, dashed or not.
struct RoofLine {
    name: String,
    from: (f64, f64),
    to: (f64, f64),
    color: u32,
    dashed: bool,
}

/// The roof lines of `groups` on axes spanning `x` and `y`: per GPU its
/// memory roof (solid) up to the highest ridge, then each compute roof
/// (dashed) from its ridge to the right edge; compute specs with the same
/// peak share one line.
fn roof_lines(groups: &[RoofGroup], x: (f64, f64), y: (f64, f64)) -> Vec<RoofLine> {
    let mut lines = Vec::new();
    for g in groups {
        let color = ROOF_COLORS[g.index % ROOF_COLORS.len()];
        let gpu = if g.gpu.is_empty() { "GPU" } else { &g.gpu };
        if let (Some(bw), Some((x0, x1))) = (g.bw_tbps, g.memory_span(x, y.0)) {
            lines.push(RoofLine {
                name: format!("{gpu} memory roof {} TB/s", short(bw)),
                from: (x0, bw * x0),
                to: (x1, bw * x1),
                color,
                dashed: false,
            });
        }
        let mut peaks: Vec<(f64, Vec<&str>)> = Vec::new();
        for c in &g.compute {
            match peaks.iter_mut().find(|(p, _)| *p == c.peak) {
                Some((_, specs)) => specs.push(&c.spec),
                None => peaks.push((c.peak, vec![&c.spec])),
            }
        }
        for (peak, specs) in peaks {
            let start = g.compute_start(peak, x.0);
            if start < x.1 {
                lines.push(RoofLine {
                    name: format!("{gpu} {} roof {} TFLOP/s", specs.join(", "), short(peak)),
                    from: (start, peak),
                    to: (x.1, peak),
                    color,
                    dashed: true,
                });
            }
        }
    }
    lines
}

/// `x` with at most four significant digits and no trailing zeros
/// (`5.3`, `708`, `1307`).
fn short(x: f64) -> String {
    let s = format!("{:.*}", decimals_for(x), x);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Decimals giving four significant digits of `x` (0 to 6).
fn decimals_for(x: f64) -> usize {
    if !(x.is_finite() && x != 0.0) {
        return 0;
    }
    // Saturating cast, then bounded.
    (3 - x.abs().log10().floor() as i32).clamp(0, 6) as usize
}

/// With roofs in `spec`: fixes both log axes to whole decades covering the
/// points and the ridges, writes the roof lines' end points under the chart
/// (worksheet `sheet_name`, from row [`ROOF_TABLE_ROW`]) and adds one line
/// series per roof. Nothing without valid roofs.
fn add_roofs(
    ws: &mut Worksheet,
    chart: &mut Chart,
    spec: &ReportChart,
    sheet_name: &str,
) -> Result<(), WriteError> {
    let groups = roof_groups(&spec.roofs);
    if groups.is_empty() {
        return Ok(());
    }
    let (mut xs, mut ys) = roof_extents(&groups);
    for p in spec.series.iter().flat_map(|s| &s.points) {
        xs.push(p.x);
        ys.push(p.y);
    }
    let (x_lo, x_hi) = decades(&xs);
    let (y_lo, y_hi) = decades(&ys);
    let x = (10f64.powi(x_lo), 10f64.powi(x_hi));
    let y = (10f64.powi(y_lo), 10f64.powi(y_hi));
    chart.x_axis().set_min(x.0).set_max(x.1);
    chart.y_axis().set_min(y.0).set_max(y.1);

    let bold = Format::new().set_bold();
    let top = ROOF_TABLE_ROW;
    ws.write_string_with_format(top, 0, "Roof lines drawn on the chart", &bold)?;
    for (c, h) in ["roof", &spec.x.name, &spec.y.name].into_iter().enumerate() {
        ws.write_string_with_format(top + 1, c as u16, h, &bold)?;
    }
    ws.set_column_width(0, 44)?;
    ws.set_column_width(1, 14)?;
    ws.set_column_width(2, 14)?;
    let mut row = top + 2;
    for line in roof_lines(&groups, x, y) {
        for (x, y) in [line.from, line.to] {
            ws.write_string(row, 0, line.name.as_str())?;
            ws.write_number(row, 1, x)?;
            ws.write_number(row, 2, y)?;
            row += 1;
        }
        let mut stroke = ChartLine::new();
        stroke.set_color(Color::RGB(line.color)).set_width(2.25);
        if line.dashed {
            stroke.set_dash_type(ChartLineDashType::Dash);
        }
        chart
            .add_series()
            .set_name(line.name.as_str())
            .set_categories((sheet_name, row - 2, 1, row - 1, 1))
            .set_values((sheet_name, row - 2, 2, row - 1, 2))
            .set_marker(ChartMarker::new().set_none())
            .set_format(&mut stroke);
    }
    Ok(())
}

/// Worksheet rows and columns (first row, last row, x column, y column) of
/// a series' cells, checked against `data`.
fn series_cells(
    name: &str,
    c: &CellRange,
    data: &Table,
) -> Result<(u32, u32, u16, u16), WriteError> {
    for (what, col) in [("x", c.x_col), ("y", c.y_col)] {
        if col >= data.ncols() {
            return Err(WriteError::Invalid(format!(
                "series {name:?}: {what} column {col} is outside sheet {:?} ({} columns)",
                data.name,
                data.ncols()
            )));
        }
    }
    if c.first_row > c.last_row || c.last_row >= data.nrows() {
        return Err(WriteError::Invalid(format!(
            "series {name:?}: rows {}..={} are outside sheet {:?} ({} data rows)",
            c.first_row,
            c.last_row,
            data.name,
            data.nrows()
        )));
    }
    // Data row r is worksheet row r + 1, below the header. Both bounds were
    // checked against the sheet, which fits Excel's limits.
    Ok((
        u32::try_from(c.first_row + 1)?,
        u32::try_from(c.last_row + 1)?,
        u16::try_from(c.x_col)?,
        u16::try_from(c.y_col)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Roof;

    #[test]
    fn short_numbers() {
        assert_eq!(short(5.3), "5.3");
        assert_eq!(short(708.0), "708");
        assert_eq!(short(1307.4), "1307");
        assert_eq!(short(0.125), "0.125");
        assert_eq!(short(f64::NAN), "NaN");
    }

    #[test]
    fn roof_lines_of_one_gpu() {
        let roof = |spec: &str, peak: f64| Roof {
            gpu: "MI300X".into(),
            compute_spec: spec.into(),
            peak_tflops: peak,
            mem_bw_gbps: 5300.0,
        };
        let groups = roof_groups(&[
            roof("matrix_bf16", 708.0),
            roof("matrix_fp32", 163.0),
            roof("vector_bf16", 163.0),
            roof("vector_fp32", 81.0),
        ]);
        let lines = roof_lines(&groups, (1e-2, 1e4), (1e-3, 1e4));
        let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "MI300X memory roof 5.3 TB/s",
                "MI300X matrix_bf16 roof 708 TFLOP/s",
                "MI300X matrix_fp32, vector_bf16 roof 163 TFLOP/s",
                "MI300X vector_fp32 roof 81 TFLOP/s"
            ]
        );
        // The memory roof climbs from the left edge to the highest ridge.
        let m = &lines[0];
        assert_eq!(m.from, (1e-2, 5.3e-2));
        assert!((m.to.0 - 708.0 / 5.3).abs() < 1e-9 && (m.to.1 - 708.0).abs() < 1e-9);
        assert!(!m.dashed && lines[1].dashed);
        // Compute roofs run flat from their ridge to the right edge.
        assert_eq!(lines[3].to, (1e4, 81.0));
        assert!((lines[3].from.0 - 81.0 / 5.3).abs() < 1e-9);
    }
}
