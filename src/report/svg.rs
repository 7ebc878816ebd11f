//! The SVG writer: each chart of a document as a self-contained roofline
//! plot.
//!
//! The plot is the classic log-log roofline: arithmetic intensity
//! (FLOPs/byte) on x, achieved TFLOP/s on y, the memory roof (a line of slope
//! one in log-log space) meeting each compute roof at its ridge point, and one
//! circle per kernel whose area follows its total time. The output needs no
//! scripts, fonts or external files; hovering a circle shows its details.

use std::fmt::Write;
use std::path::PathBuf;

use super::heatmap;
use super::roof_geometry::{RoofGroup, decades, roof_extents, roof_groups};
use super::{Chart, Document, Point, Rendered, Scale, WriteError, Writer};

/// Writes each chart of a document as `<dir>/<chart name>.svg`, then each
/// heatmap as `<dir>/<heatmap name>.svg`.
#[derive(Debug, Clone)]
pub struct Svg {
    /// The folder the files go to.
    pub dir: PathBuf,
}

impl Writer for Svg {
    /// One file per chart and per heatmap; both axes of every chart must
    /// be logarithmic.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        let mut files = doc
            .charts
            .iter()
            .map(|c| {
                if c.x.scale != Scale::Log10 || c.y.scale != Scale::Log10 {
                    let why = "SVG roofline plots need logarithmic axes".to_string();
                    return Err(WriteError::Invalid(why).at(format!("chart {:?}", c.name)));
                }
                Ok(Rendered {
                    name: self.dir.join(format!("{}.svg", c.name)),
                    bytes: roofline_svg(c).into_bytes(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        files.extend(doc.heatmaps.iter().map(|h| Rendered {
            name: self.dir.join(format!("{}.svg", h.name)),
            bytes: heatmap::svg(h).into_bytes(),
        }));
        Ok(files)
    }
}

/// Document size, pixels.
const WIDTH: f64 = 980.0;
const HEIGHT: f64 = 640.0;
/// Plot area, pixels.
const LEFT: f64 = 90.0;
const RIGHT: f64 = 740.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 560.0;
/// Left edge of the legend column.
const LEGEND_X: f64 = 762.0;
/// Marker radius bounds, pixels; the longest kernel gets `R_MAX`.
const R_MIN: f64 = 2.5;
const R_MAX: f64 = 22.0;
/// Colour of the kernel markers.
const POINT_COLOR: &str = "#1f77b4";
/// Roof colours, one per GPU, in order of first appearance.
const ROOF_COLORS: &[&str] = &[
    "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
];
/// Line height of the roof labels and the legend, pixels.
const LINE_H: f64 = 14.0;

/// A self-contained SVG document of `chart`.
///
/// Draws a log-log roofline of the points of every series under the
/// chart's roofs: for each GPU its memory roof (`y = bandwidth × x`) up to
/// the highest ridge, and for each distinct compute spec of that GPU a
/// horizontal compute roof from its ridge point to the right edge, labelled
/// with its peak. A point's weight (its kernel time) sizes its marker.
/// Points whose x or y is not a positive finite number, or whose weight is
/// negative or not finite, are skipped; roofs with a non-positive or
/// non-finite peak are ignored (a roof without a valid bandwidth is drawn as a
/// compute roof only). Axis ranges cover the data and the roofs, padded by a
/// decade on each side. Never panics; with no points the roofs are still
/// drawn, and with nothing at all the result is an empty pair of axes.
fn roofline_svg(chart: &Chart) -> String {
    let groups = roof_groups(&chart.roofs);
    let all: Vec<&Point> = chart.series.iter().flat_map(|s| &s.points).collect();
    let valid: Vec<&Point> = all.iter().copied().filter(|p| point_is_valid(p)).collect();
    let skipped = all.len() - valid.len();

    let (mut xs, mut ys) = roof_extents(&groups);
    xs.extend(valid.iter().map(|p| p.x));
    ys.extend(valid.iter().map(|p| p.y));
    let x = Axis::fit(&xs, LEFT, RIGHT);
    let y = Axis::fit(&ys, BOTTOM, TOP);

    let mut s = String::with_capacity(16 * 1024 + valid.len() * 300);
    draw_head(&mut s, &chart.title);
    draw_grid(&mut s, &x, &y);
    let overlay = draw_roofs(&mut s, &groups, &x, &y);
    let t_max = draw_points(&mut s, &valid, &x, &y);
    // Ridge points and roof labels go over the kernels so they stay legible.
    s.push_str(&overlay);
    draw_frame_and_titles(&mut s, &chart.x.name, &chart.y.name);
    draw_legend(&mut s, &groups, valid.len(), skipped, t_max);
    s.push_str("</svg>\n");
    s
}

/// The XML declaration, the `<svg>` element, the title and the background.
fn draw_head(s: &mut String, title: &str) {
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#,
        w = WIDTH,
        h = HEIGHT
    );
    let _ = writeln!(s, "<title>{}</title>", escape(title));
    let _ = writeln!(
        s,
        r#"<defs><clipPath id="plot-area"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>"#,
        num(LEFT),
        num(TOP),
        num(RIGHT - LEFT),
        num(BOTTOM - TOP)
    );
    let _ = writeln!(
        s,
        r#"<rect x="0" y="0" width="{}" height="{}" fill="white"/>"#,
        num(WIDTH),
        num(HEIGHT)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="32" text-anchor="middle" font-size="17" font-weight="bold">{}</text>"#,
        num((LEFT + RIGHT) / 2.0),
        escape(title)
    );
}

/// Whether a point can be placed on log-log axes.
fn point_is_valid(p: &Point) -> bool {
    p.x.is_finite()
        && p.x > 0.0
        && p.y.is_finite()
        && p.y > 0.0
        && p.weight.is_finite()
        && p.weight >= 0.0
}

/// The colour of a GPU's roofs.
fn roof_color(g: &RoofGroup) -> &'static str {
    ROOF_COLORS[g.index % ROOF_COLORS.len()]
}

/// A logarithmic axis spanning whole decades `10^lo ..= 10^hi`, mapped to
/// pixels `px_lo ..= px_hi`.
struct Axis {
    lo: i32,
    hi: i32,
    px_lo: f64,
    px_hi: f64,
}

impl Axis {
    /// Decades covering `values` (positive and finite), padded by one on each
    /// side; `10^-2 ..= 10^4` when there are none.
    fn fit(values: &[f64], px_lo: f64, px_hi: f64) -> Axis {
        let (lo, hi) = decades(values);
        Axis {
            lo,
            hi,
            px_lo,
            px_hi,
        }
    }

    /// Pixel position of `v` (positive); values outside the axis map outside
    /// the plot area and are clipped when drawn.
    fn pos(&self, v: f64) -> f64 {
        let l = if v.is_finite() && v > 0.0 {
            v.log10()
        } else {
            f64::from(self.lo) - 1.0
        };
        let t = (l - f64::from(self.lo)) / f64::from(self.hi - self.lo);
        // Keep far-away values finite and near the plot.
        let t = t.clamp(-1.0, 2.0);
        self.px_lo + t * (self.px_hi - self.px_lo)
    }

    /// Smallest value on the axis.
    fn min_value(&self) -> f64 {
        10f64.powi(self.lo)
    }

    /// Largest value on the axis.
    fn max_value(&self) -> f64 {
        10f64.powi(self.hi)
    }
}

/// Gridlines, ticks and tick labels of both axes.
fn draw_grid(s: &mut String, x: &Axis, y: &Axis) {
    s.push_str("<g id=\"grid\">\n");
    for (axis, horizontal) in [(x, false), (y, true)] {
        let decades = axis.hi - axis.lo;
        let minor = decades <= 10;
        // Label every decade unless that would crowd the axis.
        let step = if decades > 12 { 2 } else { 1 };
        // One style per axis: plain numbers when they stay short.
        let plain = axis.lo >= -3 && axis.hi <= 5;
        for k in axis.lo..=axis.hi {
            let p = axis.pos(10f64.powi(k));
            grid_line(s, p, horizontal, "#c8c8c8", 1.0);
            tick(s, p, horizontal, 6.0);
            if (k - axis.lo) % step == 0 {
                let label = decade_label(k, plain);
                if horizontal {
                    let _ = writeln!(
                        s,
                        r#"<text x="{}" y="{}" text-anchor="end">{label}</text>"#,
                        num(LEFT - 9.0),
                        num(p + 4.0)
                    );
                } else {
                    let _ = writeln!(
                        s,
                        r#"<text x="{}" y="{}" text-anchor="middle">{label}</text>"#,
                        num(p),
                        num(BOTTOM + 20.0)
                    );
                }
            }
            if minor && k < axis.hi {
                for m in 2..=9 {
                    let p = axis.pos(f64::from(m) * 10f64.powi(k));
                    grid_line(s, p, horizontal, "#ececec", 0.8);
                    tick(s, p, horizontal, 3.0);
                }
            }
        }
    }
    s.push_str("</g>\n");
}

/// One gridline across the plot at pixel `p`.
fn grid_line(s: &mut String, p: f64, horizontal: bool, color: &str, width: f64) {
    let (x1, y1, x2, y2) = if horizontal {
        (LEFT, p, RIGHT, p)
    } else {
        (p, TOP, p, BOTTOM)
    };
    let _ = writeln!(
        s,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="{width}"/>"#,
        num(x1),
        num(y1),
        num(x2),
        num(y2)
    );
}

/// A tick mark of length `len` outside the plot at pixel `p`.
fn tick(s: &mut String, p: f64, horizontal: bool, len: f64) {
    let (x1, y1, x2, y2) = if horizontal {
        (LEFT - len, p, LEFT, p)
    } else {
        (p, BOTTOM, p, BOTTOM + len)
    };
    let _ = writeln!(
        s,
        r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333" stroke-width="1"/>"##,
        num(x1),
        num(y1),
        num(x2),
        num(y2)
    );
}

/// Text of the tick label for `10^k`: a plain number (`0.01`, `1000`) when
/// `plain` and `k` is in `-3..=5`, otherwise `1e{k}`.
fn decade_label(k: i32, plain: bool) -> String {
    match (plain, k) {
        (true, -3) => "0.001".into(),
        (true, -2) => "0.01".into(),
        (true, -1) => "0.1".into(),
        (true, 0) => "1".into(),
        (true, 1) => "10".into(),
        (true, 2) => "100".into(),
        (true, 3) => "1000".into(),
        (true, 4) => "10000".into(),
        (true, 5) => "100000".into(),
        _ => format!("1e{k}"),
    }
}

/// A compute-roof label waiting for its final vertical position.
struct RoofLabel {
    y: f64,
    text: String,
    color: &'static str,
}

/// Memory and compute roofs. Returns the ridge points and roof labels as a
/// separate fragment, to be drawn over the kernel markers.
fn draw_roofs(s: &mut String, groups: &[RoofGroup], x: &Axis, y: &Axis) -> String {
    let multi = groups.len() > 1;
    let mut labels: Vec<RoofLabel> = Vec::new();
    let mut overlay = String::new();
    // Memory-roof labels: the steepest (highest-bandwidth) roof is labelled
    // above its line, the others below theirs and further along, so labels
    // of neighbouring roofs do not sit on each other.
    let mut by_bw: Vec<usize> = (0..groups.len()).collect();
    by_bw.sort_by(|&a, &b| {
        let bw = |i: usize| groups[i].bw_tbps.unwrap_or(0.0);
        bw(b).total_cmp(&bw(a))
    });
    s.push_str(
        "<g id=\"roofs\" clip-path=\"url(#plot-area)\" fill=\"none\" stroke-width=\"2.2\">\n",
    );
    for (gi, g) in groups.iter().enumerate() {
        let prefix = if multi {
            format!("{} ", g.gpu)
        } else {
            String::new()
        };
        let rank = by_bw.iter().position(|&i| i == gi).unwrap_or(0);
        draw_memory_roof(s, &mut overlay, g, &prefix, rank, (x, y));
        draw_compute_roofs(s, &mut labels, g, &prefix, (x, y));
    }
    s.push_str("</g>\n");
    draw_ridges(&mut overlay, groups, x, y);
    draw_roof_labels(&mut overlay, labels);
    overlay
}

/// The memory roof of `g`, from where it enters the plot to its highest
/// ridge; its label (the `rank`-th steepest roof) goes to `overlay`.
fn draw_memory_roof(
    s: &mut String,
    overlay: &mut String,
    g: &RoofGroup,
    prefix: &str,
    rank: usize,
    (x, y): (&Axis, &Axis),
) {
    let (Some(bw), Some((x0, x1))) = (
        g.bw_tbps,
        g.memory_span((x.min_value(), x.max_value()), y.min_value()),
    ) else {
        return;
    };
    let (px0, py0) = (x.pos(x0), y.pos(bw * x0));
    let (px1, py1) = (x.pos(x1), y.pos(bw * x1));
    let _ = writeln!(
        s,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"><title>{}</title></line>"#,
        num(px0),
        num(py0),
        num(px1),
        num(py1),
        roof_color(g),
        escape(&format!("{}memory roof: {} TB/s", prefix, sig(bw)))
    );
    // The label runs along the roof, just off the line.
    let (dx, dy) = (px1 - px0, py1 - py0);
    let len = dx.hypot(dy);
    if len <= 1.0 {
        return;
    }
    let t = (0.2 + 0.22 * rank as f64).min(0.85);
    // Unit normal pointing up-left (above the line); labels below sit
    // further away to clear their own glyph height.
    let (nx, ny) = (dy / len, -dx / len);
    let off = if rank == 0 { 7.0 } else { -15.0 };
    let lx = px0 + t * dx + off * nx;
    let ly = py0 + t * dy + off * ny;
    let angle = dy.atan2(dx).to_degrees();
    let _ = writeln!(
        overlay,
        r#"<text x="{lx}" y="{ly}" transform="rotate({a} {lx} {ly})" text-anchor="middle" fill="{c}" stroke="white" stroke-width="3" paint-order="stroke">{t}</text>"#,
        lx = num(lx),
        ly = num(ly),
        a = num(angle),
        c = roof_color(g),
        t = escape(&format!("{}HBM {} TB/s", prefix, sig(bw)))
    );
}

/// The compute roofs of `g`, each from its ridge to the right edge; their
/// labels are added to `labels`.
fn draw_compute_roofs(
    s: &mut String,
    labels: &mut Vec<RoofLabel>,
    g: &RoofGroup,
    prefix: &str,
    (x, y): (&Axis, &Axis),
) {
    for c in &g.compute {
        let start = g.compute_start(c.peak, x.min_value());
        let py = y.pos(c.peak);
        let px0 = x.pos(start);
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"><title>{}</title></line>"#,
            num(px0),
            num(py),
            num(RIGHT),
            num(py),
            roof_color(g),
            escape(&format!("{}{}: {} TFLOP/s", prefix, c.spec, sig(c.peak)))
        );
        labels.push(RoofLabel {
            y: py - 5.0,
            text: format!("{}{} {} TFLOP/s", prefix, c.spec, sig(c.peak)),
            color: roof_color(g),
        });
    }
}

/// Ridge points, drawn unclipped so a diamond on the edge stays whole.
fn draw_ridges(s: &mut String, groups: &[RoofGroup], x: &Axis, y: &Axis) {
    s.push_str("<g id=\"ridges\">\n");
    for g in groups {
        for c in &g.compute {
            if let Some(r) = g.ridge(c.peak) {
                let (px, py) = (x.pos(r), y.pos(c.peak));
                let _ = writeln!(
                    s,
                    r#"<path d="{}" fill="white" stroke="{}" stroke-width="2"><title>{}</title></path>"#,
                    diamond(px, py, 5.0),
                    roof_color(g),
                    escape(&format!(
                        "{} {} ridge point: {} FLOPs/byte",
                        g.gpu,
                        c.spec,
                        sig(r)
                    ))
                );
            }
        }
    }
    s.push_str("</g>\n");
}

/// Roof labels above the right end of their roof, pushed apart so that
/// roofs with close peaks stay readable.
fn draw_roof_labels(s: &mut String, mut labels: Vec<RoofLabel>) {
    labels.sort_by(|a, b| a.y.total_cmp(&b.y));
    let mut last = f64::NEG_INFINITY;
    s.push_str("<g id=\"roof-labels\" text-anchor=\"end\" font-size=\"12\">\n");
    for l in &mut labels {
        l.y = l.y.max(last + LINE_H).max(TOP + 12.0);
        last = l.y;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" fill="{}" stroke="white" stroke-width="3" paint-order="stroke">{}</text>"#,
            num(RIGHT - 6.0),
            num(l.y),
            l.color,
            escape(&l.text)
        );
    }
    s.push_str("</g>\n");
}

/// Path data of a diamond of half-size `r` centred on (`x`, `y`).
fn diamond(x: f64, y: f64, r: f64) -> String {
    format!(
        "M {} {} L {} {} L {} {} L {} {} Z",
        num(x),
        num(y - r),
        num(x + r),
        num(y),
        num(x),
        num(y + r),
        num(x - r),
        num(y)
    )
}

/// Marker radius for a kernel time: area proportional to time, clamped to
/// `R_MIN..=R_MAX`.
fn radius(time_us: f64, t_max: f64) -> f64 {
    if t_max > 0.0 && time_us.is_finite() && time_us > 0.0 {
        (R_MAX * (time_us / t_max).sqrt()).clamp(R_MIN, R_MAX)
    } else {
        R_MIN
    }
}

/// The kernel markers, biggest first so small ones stay visible on top.
/// Returns the longest kernel time (0 when there are no points).
fn draw_points(s: &mut String, points: &[&Point], x: &Axis, y: &Axis) -> f64 {
    let t_max = points.iter().map(|p| p.weight).fold(0.0, f64::max);
    let mut order: Vec<(f64, &Point)> = points
        .iter()
        .map(|p| (radius(p.weight, t_max), *p))
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0));
    let _ = writeln!(
        s,
        r#"<g id="kernels" clip-path="url(#plot-area)" fill="{c}" fill-opacity="0.45" stroke="{c}" stroke-opacity="0.9" stroke-width="1">"#,
        c = POINT_COLOR
    );
    for (r, p) in order {
        let tip = format!(
            "{}\nintensity: {} FLOPs/byte\nachieved: {} TFLOP/s\ntime: {} µs",
            p.label,
            sig(p.x),
            sig(p.y),
            sig(p.weight)
        );
        let _ = writeln!(
            s,
            r#"<circle cx="{}" cy="{}" r="{}"><title>{}</title></circle>"#,
            num(x.pos(p.x)),
            num(y.pos(p.y)),
            num(r),
            escape(&tip)
        );
    }
    s.push_str("</g>\n");
    t_max
}

/// The plot frame and the axis titles.
fn draw_frame_and_titles(s: &mut String, x_title: &str, y_title: &str) {
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333" stroke-width="1.2"/>"##,
        num(LEFT),
        num(TOP),
        num(RIGHT - LEFT),
        num(BOTTOM - TOP)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">{}</text>"#,
        num((LEFT + RIGHT) / 2.0),
        num(BOTTOM + 48.0),
        escape(x_title)
    );
    let (tx, ty) = (28.0, (TOP + BOTTOM) / 2.0);
    let _ = writeln!(
        s,
        r#"<text x="{tx}" y="{ty}" transform="rotate(-90 {tx} {ty})" text-anchor="middle" font-size="14">{t}</text>"#,
        tx = num(tx),
        ty = num(ty),
        t = escape(y_title)
    );
}

/// The legend column right of the plot: one entry per GPU, the ridge marker,
/// the kernel marker with a size key, and the point counts.
fn draw_legend(s: &mut String, groups: &[RoofGroup], shown: usize, skipped: usize, t_max: f64) {
    let x0 = LEGEND_X;
    let mut y = TOP + 4.0;
    s.push_str("<g id=\"legend\">\n");
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-weight="bold">Legend</text>"#,
        num(x0),
        num(y)
    );
    y += LINE_H + 6.0;
    y = legend_roofs(s, groups, y);
    y = legend_kernels(s, shown, t_max, y);
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" fill="#555">{} kernel{} plotted</text>"##,
        num(x0),
        num(y + 6.0),
        shown,
        if shown == 1 { "" } else { "s" }
    );
    if skipped > 0 {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" fill="#555">{skipped} skipped (not positive</text>"##,
            num(x0),
            num(y + 6.0 + LINE_H)
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" fill="#555">and finite)</text>"##,
            num(x0),
            num(y + 6.0 + 2.0 * LINE_H)
        );
    }
    s.push_str("</g>\n");
}

/// Legend entries of the roofs (one per GPU) and of the ridge marker,
/// starting at height `y`; returns the height below them.
fn legend_roofs(s: &mut String, groups: &[RoofGroup], mut y: f64) -> f64 {
    let x0 = LEGEND_X;
    for g in groups {
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2.2"/>"#,
            num(x0),
            num(y - 4.0),
            num(x0 + 22.0),
            num(y - 4.0),
            roof_color(g)
        );
        let name = if g.gpu.is_empty() { "GPU" } else { &g.gpu };
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{} roofline</text>"#,
            num(x0 + 30.0),
            num(y),
            escape(name)
        );
        y += LINE_H + 4.0;
    }
    if groups.iter().any(|g| g.bw_tbps.is_some()) {
        let _ = writeln!(
            s,
            r##"<path d="{}" fill="white" stroke="#555" stroke-width="2"/>"##,
            diamond(x0 + 11.0, y - 4.0, 5.0)
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">ridge point</text>"#,
            num(x0 + 30.0),
            num(y)
        );
        y += LINE_H + 4.0;
    }
    y
}

/// Legend entry of the kernel marker and its size key, starting at height
/// `y`; returns the height below them.
fn legend_kernels(s: &mut String, shown: usize, t_max: f64, mut y: f64) -> f64 {
    let x0 = LEGEND_X;
    // Kernel markers: ellipses, so that `<circle` counts only data points.
    let _ = writeln!(
        s,
        r#"<ellipse cx="{}" cy="{}" rx="6" ry="6" fill="{c}" fill-opacity="0.45" stroke="{c}"/>"#,
        num(x0 + 11.0),
        num(y - 4.0),
        c = POINT_COLOR
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}">kernel (area ∝ time)</text>"#,
        num(x0 + 30.0),
        num(y)
    );
    y += LINE_H + 8.0;
    if shown > 0 && t_max > 0.0 {
        for frac in [1.0, 0.25] {
            let r = radius(t_max * frac, t_max);
            let cy = y + r - 4.0;
            let _ = writeln!(
                s,
                r#"<ellipse cx="{}" cy="{}" rx="{r}" ry="{r}" fill="{c}" fill-opacity="0.25" stroke="{c}"/>"#,
                num(x0 + 24.0),
                num(cy),
                r = num(r),
                c = POINT_COLOR
            );
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}">{} µs</text>"#,
                num(x0 + 24.0 + R_MAX + 8.0),
                num(cy + 4.0),
                sig(t_max * frac)
            );
            y += 2.0 * r + 6.0;
        }
        y += 4.0;
    }
    y
}

/// A pixel coordinate with one decimal; non-finite values (which the callers
/// never produce) become 0 so the document stays valid.
fn num(v: f64) -> String {
    if v.is_finite() {
        let s = format!("{v:.1}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    } else {
        "0".into()
    }
}

/// `v` with about four significant digits and no trailing zeros, for labels.
fn sig(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let mag = v.abs().log10().floor();
    if !(-3.0..6.0).contains(&mag) {
        return format!("{v:.3e}");
    }
    let decimals = (3.0 - mag).max(0.0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `text` as XML 1.0 character data or attribute text (every SVG text and
/// attribute from a trace, a GPU spec or a user goes through here): the
/// XML special characters replaced by entities; control characters other
/// than tab and newline, and the non-characters U+FFFE and U+FFFF (none of
/// them allowed in XML 1.0, so a parser would refuse the file) dropped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' => out.push(ch),
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ChartAxis, Roof, Series};

    /// The SVG of a one-series roofline chart.
    fn roofline_svg(title: &str, roofs: &[Roof], points: &[Point]) -> String {
        let log = |name: &str| ChartAxis {
            name: name.into(),
            scale: Scale::Log10,
        };
        super::roofline_svg(&Chart {
            name: "c".into(),
            title: title.into(),
            x: log("Arithmetic intensity (FLOPs/byte)"),
            y: log("Performance (TFLOP/s)"),
            series: vec![Series {
                name: "kernels".into(),
                points: points.to_vec(),
                cells: None,
            }],
            roofs: roofs.to_vec(),
            data_table: None,
        })
    }

    fn mi300x(spec: &str, peak: f64) -> Roof {
        Roof {
            gpu: "MI300X".into(),
            compute_spec: spec.into(),
            peak_tflops: peak,
            mem_bw_gbps: 5300.0,
        }
    }

    fn pt(label: &str, x: f64, y: f64, weight: f64) -> Point {
        Point {
            label: label.into(),
            x,
            y,
            weight,
        }
    }

    /// Checks that every element is closed in order; returns the number of
    /// elements. Comments, CDATA and DTDs are not produced, so not handled.
    fn check_balanced(svg: &str) -> usize {
        let mut stack: Vec<String> = Vec::new();
        let mut count = 0;
        let mut rest = svg;
        while let Some(i) = rest.find('<') {
            rest = &rest[i + 1..];
            let end = rest.find('>').expect("unterminated tag");
            let tag = &rest[..end];
            rest = &rest[end + 1..];
            if tag.starts_with('?') {
                continue;
            }
            assert!(!tag.contains('<'), "stray '<' in {tag:?}");
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
            } else {
                count += 1;
                let name: String = tag
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '/')
                    .collect();
                if !tag.ends_with('/') {
                    stack.push(name);
                }
            }
        }
        assert!(stack.is_empty(), "unclosed: {stack:?}");
        // Text between tags never holds a raw '>' either.
        count
    }

    fn assert_clean(svg: &str) {
        assert!(svg.contains("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        check_balanced(svg);
        for bad in ["NaN", "inf", "Infinity"] {
            assert!(!svg.contains(bad), "{bad} in output");
        }
    }

    #[test]
    fn one_circle_per_valid_point_and_escaped_labels() {
        let points = vec![
            pt("aten::mm <bf16> & \"x\" 'y'", 300.0, 400.0, 1200.0),
            pt("add", 0.25, 1.2, 30.0),
            pt("nan", f64::NAN, 1.0, 1.0),
            pt("zero", 0.0, 1.0, 1.0),
            pt("neg", 1.0, -1.0, 1.0),
            pt("inf", 1.0, f64::INFINITY, 1.0),
            pt("bad time", 1.0, 1.0, f64::NAN),
            pt("zero time", 2.0, 3.0, 0.0),
        ];
        let svg = roofline_svg("t", &[mi300x("matrix_bf16", 708.0)], &points);
        assert_clean(&svg);
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("aten::mm &lt;bf16&gt; &amp; &quot;x&quot; &apos;y&apos;"));
        assert!(!svg.contains("<bf16>"));
        assert!(svg.contains("3 kernels plotted"));
        assert!(svg.contains("5 skipped"));
    }

    #[test]
    fn decade_ticks_cover_data_and_roofs() {
        // Intensities 0.5 .. 300, ridge 708/5.3 = 133.6; TFLOP/s 0.2 .. 708.
        let points = [pt("a", 0.5, 0.2, 1.0), pt("b", 300.0, 500.0, 10.0)];
        let svg = roofline_svg("t", &[mi300x("matrix_bf16", 708.0)], &points);
        assert_clean(&svg);
        // x: 10^-1 .. 10^3 padded to 10^-2 .. 10^4; y: 10^-1 .. 10^3 padded
        // to 10^-2 .. 10^4.
        for label in ["0.01", "0.1", "1", "10", "100", "1000", "10000"] {
            assert!(svg.contains(&format!(">{label}</text>")), "{label}");
        }
        assert!(!svg.contains(">0.001</text>"));
        assert!(!svg.contains(">100000</text>"));
        assert!(svg.contains("Arithmetic intensity (FLOPs/byte)"));
        assert!(svg.contains("Performance (TFLOP/s)"));
    }

    #[test]
    fn roofs_without_points() {
        let roofs = [
            mi300x("matrix_bf16", 708.0),
            mi300x("vector_fp32", 81.0),
            mi300x("matrix_bf16", 708.0),
        ];
        let svg = roofline_svg("MI300X", &roofs, &[]);
        assert_clean(&svg);
        assert_eq!(svg.matches("<circle").count(), 0);
        // One label per distinct compute spec, one memory roof.
        assert_eq!(svg.matches(">matrix_bf16 708 TFLOP/s<").count(), 1);
        assert_eq!(svg.matches(">vector_fp32 81 TFLOP/s<").count(), 1);
        assert_eq!(svg.matches(">HBM 5.3 TB/s<").count(), 1);
        assert!(svg.contains("ridge point: 133.6 FLOPs/byte"));
        assert!(svg.contains("0 kernels plotted"));
    }

    #[test]
    fn several_gpus_are_prefixed() {
        let mut h100 = mi300x("matrix_bf16", 989.5);
        h100.gpu = "H100".into();
        h100.mem_bw_gbps = 3350.0;
        let svg = roofline_svg("cmp", &[mi300x("matrix_bf16", 708.0), h100], &[]);
        assert_clean(&svg);
        assert!(svg.contains(">MI300X matrix_bf16 708 TFLOP/s<"));
        assert!(svg.contains(">H100 matrix_bf16 989.5 TFLOP/s<"));
        assert!(svg.contains(">H100 HBM 3.35 TB/s<"));
        assert!(svg.contains("H100 roofline"));
    }

    #[test]
    fn degenerate_inputs_never_panic() {
        let nothing = roofline_svg("", &[], &[]);
        assert_clean(&nothing);
        let odd_roofs = [
            mi300x("a", f64::NAN),
            mi300x("b", -1.0),
            Roof {
                gpu: "X".into(),
                compute_spec: "c".into(),
                peak_tflops: 10.0,
                mem_bw_gbps: f64::NAN,
            },
            Roof {
                gpu: "Y".into(),
                compute_spec: "d".into(),
                peak_tflops: f64::MAX,
                mem_bw_gbps: f64::MIN_POSITIVE,
            },
        ];
        let extreme = [
            pt("tiny", f64::MIN_POSITIVE, f64::MIN_POSITIVE, 0.0),
            pt("huge", f64::MAX, f64::MAX, f64::MAX),
            pt("mid", 1.0, 1.0, 1.0),
        ];
        let svg = roofline_svg("x\u{1}y", &odd_roofs, &extreme);
        assert_clean(&svg);
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(!svg.contains('\u{1}'));
    }

    #[test]
    fn writer_names_files_and_needs_log_axes() {
        let log = ChartAxis {
            name: "x".into(),
            scale: Scale::Log10,
        };
        let mut chart = Chart {
            name: "GEMM".into(),
            title: "t".into(),
            x: log.clone(),
            y: log,
            series: Vec::new(),
            roofs: vec![mi300x("matrix_bf16", 708.0)],
            data_table: None,
        };
        let svg = Svg {
            dir: "plots".into(),
        };
        let doc = Document {
            charts: vec![chart.clone()],
            ..Document::default()
        };
        let files = svg.render(&doc).unwrap();
        assert_eq!(files[0].name, PathBuf::from("plots/GEMM.svg"));
        assert_clean(std::str::from_utf8(&files[0].bytes).unwrap());
        chart.y.scale = Scale::Linear;
        let doc = Document {
            charts: vec![chart],
            ..Document::default()
        };
        assert!(svg.render(&doc).unwrap_err().to_string().contains("GEMM"));
    }

    #[test]
    fn marker_area_follows_time() {
        assert_eq!(radius(100.0, 100.0), R_MAX);
        assert!((radius(25.0, 100.0) - R_MAX / 2.0).abs() < 1e-9);
        assert_eq!(radius(1e-9, 100.0), R_MIN);
        assert_eq!(radius(0.0, 0.0), R_MIN);
    }

    #[test]
    fn number_formatting() {
        assert_eq!(sig(708.0), "708");
        assert_eq!(sig(989.5), "989.5");
        assert_eq!(sig(2516.6), "2517");
        assert_eq!(sig(5.3), "5.3");
        assert_eq!(sig(0.0123), "0.0123");
        assert_eq!(sig(1.5e-7), "1.500e-7");
        assert_eq!(sig(f64::NAN), "n/a");
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.25), "12.2");
        assert_eq!(num(f64::INFINITY), "0");
        assert_eq!(decade_label(-4, true), "1e-4");
        assert_eq!(decade_label(2, true), "100");
        assert_eq!(decade_label(2, false), "1e2");
        assert_eq!(escape("a<b>&'\""), "a&lt;b&gt;&amp;&apos;&quot;");
        assert_eq!(
            escape("H\u{ffff}1\u{fffe}0\u{0}\u{1b}\u{7f}\u{85}\r0\u{fffd}"),
            "H100\u{fffd}"
        );
    }
}
