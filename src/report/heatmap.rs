//! Heatmap SVGs: a grid of cells coloured by value (the fleet's rank ×
//! step view of busy, idle and exposed-communication time). Columns are
//! ranks (up to thousands, each at least one pixel wide), rows are steps;
//! every cell carries a tooltip with its value.

use std::fmt::Write as _;

use super::svg::escape;

/// A heatmap: row-major values with their row and column labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// File stem of the SVG.
    pub name: String,
    /// Title shown above the grid.
    pub title: String,
    /// What the columns are (e.g. `rank`).
    pub col_label: String,
    /// What the rows are (e.g. `step`).
    pub row_label: String,
    /// Column labels.
    pub cols: Vec<i64>,
    /// Row labels.
    pub rows: Vec<i64>,
    /// `rows.len() × cols.len()` values, row-major; NaN: no cell.
    pub values: Vec<f64>,
    /// Unit of the values (shown in the legend and tooltips).
    pub unit: String,
}

const LEFT: f64 = 70.0;
const TOP: f64 = 50.0;
const LEGEND_W: f64 = 140.0;
const GRID_W: f64 = 1000.0;
const MISSING: &str = "#d9d9d9";

/// Light yellow to dark red, by `t` in 0..=1.
fn color(t: f64) -> String {
    // Three anchors of a sequential palette, linearly blended.
    const STOPS: [(f64, [f64; 3]); 3] = [
        (0.0, [255.0, 255.0, 204.0]),
        (0.5, [253.0, 141.0, 60.0]),
        (1.0, [128.0, 0.0, 38.0]),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (a, b) = if t <= 0.5 {
        (STOPS[0], STOPS[1])
    } else {
        (STOPS[1], STOPS[2])
    };
    let u = (t - a.0) / (b.0 - a.0);
    let c: Vec<u8> = (0..3)
        .map(|i| (a.1[i] + (b.1[i] - a.1[i]) * u).round() as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Cell sizes and the value range of a heatmap, as its parts are drawn.
struct Layout {
    /// Cell width and height, pixels.
    cw: f64,
    ch: f64,
    /// Grid width and height, pixels.
    gw: f64,
    gh: f64,
    /// Smallest and largest value present (infinite when none is).
    lo: f64,
    hi: f64,
    /// Whether any cell has a value.
    any: bool,
}

impl Layout {
    fn of(h: &Heatmap) -> Layout {
        let (nr, nc) = (h.rows.len(), h.cols.len());
        let cw = (GRID_W / nc.max(1) as f64).clamp(1.0, 40.0);
        let ch = (320.0 / nr.max(1) as f64).clamp(8.0, 40.0);
        let present = || h.values.iter().copied().filter(|v| v.is_finite());
        Layout {
            cw,
            ch,
            gw: cw * nc as f64,
            gh: ch * nr as f64,
            lo: present().fold(f64::INFINITY, f64::min),
            hi: present().fold(f64::NEG_INFINITY, f64::max),
            any: present().next().is_some(),
        }
    }
}

/// The SVG text of `h`.
pub fn svg(h: &Heatmap) -> String {
    let l = Layout::of(h);
    let width = LEFT + l.gw + LEGEND_W;
    let height = TOP + l.gh + 60.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="24" font-size="15" font-weight="bold">{}</text>"#,
        escape(&h.title)
    );
    cells(&mut s, h, &l);
    labels(&mut s, h, &l);
    legend(&mut s, h, &l);
    s.push_str("</svg>\n");
    s
}

/// The cells, each with its tooltip; shape-rendering keeps 1-pixel
/// columns crisp.
fn cells(s: &mut String, h: &Heatmap, l: &Layout) {
    let nc = h.cols.len();
    let span = if l.hi > l.lo { l.hi - l.lo } else { 1.0 };
    let _ = writeln!(s, r#"<g shape-rendering="crispEdges">"#);
    for r in 0..h.rows.len() {
        for c in 0..nc {
            let v = h.values[r * nc + c];
            let fill = if v.is_finite() {
                color((v - l.lo) / span)
            } else {
                MISSING.to_string()
            };
            let value = if v.is_finite() {
                format!("{} {}", fmt(v), h.unit)
            } else {
                "no data".into()
            };
            let _ = writeln!(
                s,
                r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{fill}"><title>{} {}, {} {}: {}</title></rect>"#,
                LEFT + c as f64 * l.cw,
                TOP + r as f64 * l.ch,
                l.cw,
                l.ch,
                escape(&h.col_label),
                h.cols[c],
                escape(&h.row_label),
                h.rows[r],
                escape(&value)
            );
        }
    }
    let _ = writeln!(s, "</g>");
}

/// Row labels (every row while they fit), column labels (about ten
/// across) and the two axis titles.
fn labels(s: &mut String, h: &Heatmap, l: &Layout) {
    let (nr, nc, cw, ch, gw, gh) = (h.rows.len(), h.cols.len(), l.cw, l.ch, l.gw, l.gh);
    let row_every = (14.0 / ch).ceil().max(1.0) as usize;
    for r in (0..nr).step_by(row_every) {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" dominant-baseline="middle">{}</text>"#,
            LEFT - 6.0,
            TOP + (r as f64 + 0.5) * ch,
            h.rows[r]
        );
    }
    let col_every = (nc as f64 / 10.0).ceil().max(1.0) as usize;
    let col_every = if cw * col_every as f64 >= 28.0 {
        col_every
    } else {
        (28.0 / cw).ceil() as usize
    };
    for c in (0..nc).step_by(col_every) {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + (c as f64 + 0.5) * cw,
            TOP + gh + 16.0,
            h.cols[c]
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + gw / 2.0,
        TOP + gh + 40.0,
        escape(&h.col_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text>"#,
        TOP + gh / 2.0,
        TOP + gh / 2.0,
        escape(&h.row_label)
    );
}

/// The legend: the colour scale from high to low, labelled with the
/// extreme values when there are any.
fn legend(s: &mut String, h: &Heatmap, l: &Layout) {
    let lx = LEFT + l.gw + 24.0;
    let steps = 10;
    let lh = (l.gh.max(100.0)) / steps as f64;
    for i in 0..steps {
        let t = 1.0 - i as f64 / (steps - 1) as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{lx:.1}" y="{:.1}" width="16" height="{lh:.1}" fill="{}"/>"#,
            TOP + i as f64 * lh,
            color(t)
        );
    }
    if l.any {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" dominant-baseline="hanging">{} {}</text>"#,
            lx + 22.0,
            TOP,
            fmt(l.hi),
            escape(&h.unit)
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{} {}</text>"#,
            lx + 22.0,
            TOP + lh * steps as f64,
            fmt(l.lo),
            escape(&h.unit)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_coloured_by_value_and_missing_ones_grey() {
        let h = Heatmap {
            name: "busy".into(),
            title: "busy <time>".into(),
            col_label: "rank".into(),
            row_label: "step".into(),
            cols: vec![0, 1, 2],
            rows: vec![7, 8],
            values: vec![1.0, 2.0, 3.0, f64::NAN, 2.0, 1.0],
            unit: "µs".into(),
        };
        let text = svg(&h);
        assert_eq!(text.matches("<title>").count(), 6);
        assert!(text.contains("busy &lt;time&gt;"));
        assert!(text.contains(&format!(
            r#"fill="{}"><title>rank 2, step 7: 3.000 µs"#,
            color(1.0)
        )));
        assert!(text.contains(&format!(
            r#"fill="{}"><title>rank 0, step 7: 1.000 µs"#,
            color(0.0)
        )));
        assert!(text.contains(r##"fill="#d9d9d9"><title>rank 0, step 8: no data"##));
        assert_eq!(color(0.0), "#ffffcc");
        assert_eq!(color(1.0), "#800026");
    }
}
