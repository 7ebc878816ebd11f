//! Roofline geometry shared by the chart writers ([`super::svg`],
//! [`super::xlsx`]): the roofs grouped per GPU, their ridge points, the
//! stretch of each roof inside the plotted range, and the whole decades a
//! logarithmic axis spans.

use super::Roof;

/// At most this many decades per axis; wider data is cut at the low end.
const MAX_DECADES: i32 = 16;
/// Decade exponents are kept where `10^k` is a normal, finite `f64`.
const MIN_EXP: i32 = -300;
const MAX_EXP: i32 = 300;

/// One compute roof of a GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeRoof {
    /// Compute spec, e.g. `matrix_bf16`.
    pub spec: String,
    /// Peak, TFLOP/s (positive and finite).
    pub peak: f64,
}

/// The roofs of one GPU (one memory bandwidth).
#[derive(Debug, Clone, PartialEq)]
pub struct RoofGroup {
    /// GPU name.
    pub gpu: String,
    /// Bandwidth in TB/s, i.e. TFLOP/s per FLOP/byte; `None` if invalid.
    pub bw_tbps: Option<f64>,
    /// Distinct compute specs, in input order.
    pub compute: Vec<ComputeRoof>,
    /// Position among the groups, in order of first appearance (picks the
    /// group's colour).
    pub index: usize,
}

impl RoofGroup {
    /// Intensity where the memory roof reaches `peak`, FLOPs/byte.
    pub fn ridge(&self, peak: f64) -> Option<f64> {
        self.bw_tbps
            .map(|bw| peak / bw)
            .filter(|r| r.is_finite() && *r > 0.0)
    }

    /// The highest compute peak, TFLOP/s (0 without compute roofs).
    pub fn top_peak(&self) -> f64 {
        self.compute.iter().map(|c| c.peak).fold(0.0, f64::max)
    }

    /// The intensities (FLOPs/byte) between which the memory roof is drawn
    /// on axes from `x_min ..= x_max` and `y_min` up: from where it enters
    /// the plot to its highest ridge. `None` without a bandwidth or when
    /// nothing of it is inside.
    pub fn memory_span(&self, (x_min, x_max): (f64, f64), y_min: f64) -> Option<(f64, f64)> {
        let bw = self.bw_tbps?;
        let ridge = self.ridge(self.top_peak())?;
        let x0 = x_min.max(y_min / bw);
        let x1 = ridge.min(x_max);
        (x0.is_finite() && x0 < x1).then_some((x0, x1))
    }

    /// The intensity where the compute roof of `peak` starts on an x axis
    /// starting at `x_min`: its ridge, or the axis start without a ridge.
    pub fn compute_start(&self, peak: f64, x_min: f64) -> f64 {
        self.ridge(peak).unwrap_or(x_min).max(x_min)
    }
}

/// Valid roofs grouped by GPU and bandwidth, compute specs de-duplicated.
/// Roofs whose peak is not positive and finite are left out; a bandwidth
/// that is not positive and finite makes a group without a memory roof.
pub fn roof_groups(roofs: &[Roof]) -> Vec<RoofGroup> {
    let mut groups: Vec<RoofGroup> = Vec::new();
    for r in roofs {
        if !(r.peak_tflops.is_finite() && r.peak_tflops > 0.0) {
            continue;
        }
        let bw = (r.mem_bw_gbps.is_finite() && r.mem_bw_gbps > 0.0).then(|| r.mem_bw_gbps / 1e3);
        let idx = match groups
            .iter()
            .position(|g| g.gpu == r.gpu && g.bw_tbps == bw)
        {
            Some(i) => i,
            None => {
                groups.push(RoofGroup {
                    gpu: r.gpu.clone(),
                    bw_tbps: bw,
                    compute: Vec::new(),
                    index: groups.len(),
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[idx];
        if !g.compute.iter().any(|c| c.spec == r.compute_spec) {
            g.compute.push(ComputeRoof {
                spec: r.compute_spec.clone(),
                peak: r.peak_tflops,
            });
        }
    }
    groups
}

/// The intensities and rates a roofline plot must show for `groups`: each
/// compute peak (y) and its ridge (x).
pub fn roof_extents(groups: &[RoofGroup]) -> (Vec<f64>, Vec<f64>) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for g in groups {
        for c in &g.compute {
            ys.push(c.peak);
            if let Some(r) = g.ridge(c.peak) {
                xs.push(r);
            }
        }
    }
    (xs, ys)
}

/// Exponents `(lo, hi)` of the whole decades `10^lo ..= 10^hi` covering
/// `values` (those positive and finite), padded by one decade on each
/// side; `(-2, 4)` when there are none. At most 16 decades (wider data is
/// cut at the low end), within `10^-300 ..= 10^300`.
pub fn decades(values: &[f64]) -> (i32, i32) {
    let logs = values
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|v| v.log10());
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for l in logs {
        min = min.min(l);
        max = max.max(l);
    }
    let (mut lo, mut hi) = if min.is_finite() && max.is_finite() {
        (clamp_exp(min.floor()) - 1, clamp_exp(max.ceil()) + 1)
    } else {
        (-2, 4)
    };
    lo = lo.clamp(MIN_EXP, MAX_EXP - 1);
    hi = hi.clamp(lo + 1, MAX_EXP);
    if hi - lo > MAX_DECADES {
        lo = hi - MAX_DECADES;
    }
    (lo, hi)
}

/// `e` (a whole number) as a decade exponent in the supported range.
fn clamp_exp(e: f64) -> i32 {
    // A float-to-int `as` cast saturates; the clamp keeps 10^k normal.
    (e as i32).clamp(MIN_EXP, MAX_EXP)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roof(gpu: &str, spec: &str, peak: f64, bw: f64) -> Roof {
        Roof {
            gpu: gpu.into(),
            compute_spec: spec.into(),
            peak_tflops: peak,
            mem_bw_gbps: bw,
        }
    }

    #[test]
    fn groups_spans_and_extents() {
        let groups = roof_groups(&[
            roof("MI300X", "matrix_bf16", 708.0, 5300.0),
            roof("MI300X", "vector_fp32", 81.0, 5300.0),
            roof("MI300X", "matrix_bf16", 708.0, 5300.0),
            roof("MI300X", "bad", f64::NAN, 5300.0),
            roof("H100", "matrix_bf16", 989.0, 0.0),
        ]);
        assert_eq!(groups.len(), 2);
        let g = &groups[0];
        assert_eq!((g.index, g.bw_tbps), (0, Some(5.3)));
        assert_eq!(g.compute.len(), 2);
        assert_eq!(g.top_peak(), 708.0);
        let ridge = g.ridge(708.0).unwrap();
        assert!((ridge - 133.584).abs() < 1e-3, "{ridge}");
        // The memory roof enters at y = 0.01 (x = 0.01 / 5.3) and ends at
        // the highest ridge.
        let (x0, x1) = g.memory_span((1e-3, 1e4), 1e-2).unwrap();
        assert!((x0 - 1e-2 / 5.3).abs() < 1e-12 && x1 == ridge);
        assert_eq!(g.memory_span((1e3, 1e4), 1e-2), None);
        assert_eq!(g.compute_start(708.0, 1e-3), ridge);
        assert_eq!(g.compute_start(708.0, 1e3), 1e3);
        // No bandwidth: compute roofs only, from the axis start.
        let h = &groups[1];
        assert_eq!((h.index, h.bw_tbps, h.ridge(989.0)), (1, None, None));
        assert_eq!(h.memory_span((1e-3, 1e4), 1e-2), None);
        assert_eq!(h.compute_start(989.0, 0.5), 0.5);
        let (xs, ys) = roof_extents(&groups);
        assert_eq!(xs.len(), 2);
        assert_eq!(ys, [708.0, 81.0, 989.0]);
    }

    #[test]
    fn decade_ranges() {
        assert_eq!(decades(&[0.5, 700.0]), (-2, 4));
        assert_eq!(decades(&[]), (-2, 4));
        assert_eq!(decades(&[f64::NAN, -1.0, 0.0]), (-2, 4));
        assert_eq!(decades(&[1e-30, 1e30]), (15, 31));
        assert_eq!(decades(&[f64::MAX]), (299, 300));
    }
}
