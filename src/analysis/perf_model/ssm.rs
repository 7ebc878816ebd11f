//! State-space model kernels (family `SSM`): DaoAILab's depthwise causal
//! conv1d and Mamba-2's fused `MambaSplitConv1dScanCombinedFn` (the SSD
//! chunked scan).
//!
//! * causal conv1d, x `(b, c, l)`, weight `(c, k)`: `flops = 2·b·c·l·k`,
//!   `bytes = (2·b·c·l + c·k (+ c with a bias))·e`, e the input's element
//!   size (2 when unknown); no backward model.
//! * Mamba SSD, zxbcdt `(B, T, D)`, conv weight `(cc, d_conv)`, H heads
//!   (`Input Dims[3][0]`), chunk C, head dim P and groups G from Concrete
//!   Inputs 6, 15, 16 (128, 64, 1 when absent); state N = (D − 2·H·P − H) /
//!   (2·G) must be a positive integer.
//!   `flops = 2·B·cc·T·d_conv + 2·B·G·T·C·N + 2·B·H·T·C·P + 4·B·H·T·N·P`,
//!   `bytes = (B·T·D + cc·d_conv + cc + B·T·H·P)·e + H·(e_dt + e_A + e_D)`;
//!   the backward is the forward.

use super::pyval::{Num, Rec, bpe, dim_at, invalid, ipy, py_int};
use super::{Evaluation, Maf, ModelResult, OpInput, Precision, Py};
use crate::trace::ArgValue;

/// The SSM classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `causal_conv1d_fwd`.
    CausalConv1d,
    /// `mamba_ssd_fwd`.
    MambaSsd,
}

/// The first dtype's precision; types present but empty fail like the
/// reference's `[None][0]` default only covers a missing key.
fn first_precision(r: Rec) -> ModelResult<Option<Precision>> {
    match &r.input().types {
        Some(t) if t.is_empty() => invalid("Input type[0] out of range"),
        _ => Ok(r.first_precision()),
    }
}

fn causal_conv1d(r: Rec, bwd: bool) -> ModelResult<Evaluation> {
    let dims = r.dims()?;
    let (x, w) = (r.dim(0)?, r.dim(1)?);
    let (b, c, l) = (dim_at(x, 0)?, dim_at(x, 1)?, dim_at(x, 2)?);
    let k = dim_at(w, 1)?;
    let has_bias = dims.len() > 2 && matches!(&dims[2], ArgValue::List(a) if !a.is_empty());
    let params = vec![
        ("batch", ipy(b)),
        ("channels", ipy(c)),
        ("seq_len", ipy(l)),
        ("kernel_size", ipy(k)),
        ("has_bias", Py::Bool(has_bias)),
    ];
    if bwd {
        return invalid("causal conv1d has no backward model");
    }
    let e = r.first_bpe();
    let bcl = Num::I(b).mul(c).mul(l);
    let mut bytes = bcl.mul(e).add(Num::I(c).mul(k).mul(e)).add(bcl.mul(e));
    if has_bias {
        bytes = bytes.add(Num::I(c).mul(e));
    }
    Ok(Evaluation {
        params,
        flops: Num::I(2).mul(bcl).mul(k).f64(),
        bytes: Some(bytes.f64()),
        maf: Some(Maf::Matrix),
        precision: first_precision(r)?,
    })
}

/// `int(concrete[i]) if len(concrete) > i and concrete[i] else default`.
fn scalar(r: Rec, i: usize, default: i128) -> ModelResult<i128> {
    match r.concrete_or_empty().get(i) {
        Some(c) if !c.is_empty() => py_int(c),
        _ => Ok(default),
    }
}

/// The element size of a parameter slot, `default` when absent or unknown.
fn slot_bpe(r: Rec, slot: usize, default: Num) -> Num {
    match r.types_or_empty().get(slot) {
        Some(t) if !t.is_empty() => bpe(Some(t)).map(Num::I).unwrap_or(default),
        _ => default,
    }
}

fn mamba_ssd(r: Rec) -> ModelResult<Evaluation> {
    let (z, w) = (r.dim(0)?, r.dim(1)?);
    let (bs, t, d) = (dim_at(z, 0)?, dim_at(z, 1)?, dim_at(z, 2)?);
    let (cc, d_conv) = (dim_at(w, 0)?, dim_at(w, 1)?);
    let h = r.dim_int(3, 0)?;
    let (c, p, g) = (scalar(r, 6, 128)?, scalar(r, 15, 64)?, scalar(r, 16, 1)?);
    let d_inner = h * p;
    let num = d - 2 * d_inner - h;
    if num <= 0 || g == 0 || num % (2 * g) != 0 {
        return invalid(format!(
            "cannot derive d_state from D={d}, H={h}, P={p}, G={g}"
        ));
    }
    let n = Num::I(num).floor_div(2 * g)?;
    let params = vec![
        ("B", ipy(bs)),
        ("T", ipy(t)),
        ("H", ipy(h)),
        ("P", ipy(p)),
        ("G", ipy(g)),
        ("N", n.to_py()),
        ("C", ipy(c)),
        ("d_inner", ipy(d_inner)),
        ("d_conv", ipy(d_conv)),
        ("conv_channels", ipy(cc)),
        ("combined_dim", ipy(d)),
    ];
    let two_bt = Num::I(2).mul(bs).mul(t);
    let flops = two_bt
        .mul(cc)
        .mul(d_conv)
        .add(two_bt.mul(g).mul(c).mul(n))
        .add(two_bt.mul(h).mul(c).mul(p))
        .add(Num::I(2).mul(two_bt.mul(h).mul(n).mul(p)));
    let e = r.first_bpe();
    let (e_dt, e_a) = (slot_bpe(r, 3, Num::I(4)), slot_bpe(r, 4, Num::I(4)));
    let e_d = slot_bpe(r, 5, e);
    let bt = Num::I(bs).mul(t);
    let bytes = bt
        .mul(d)
        .mul(e)
        .add(Num::I(cc).mul(d_conv).mul(e))
        .add(Num::I(cc).mul(e))
        .add(
            Num::I(h)
                .mul(e_dt)
                .add(Num::I(h).mul(e_a))
                .add(Num::I(h).mul(e_d)),
        )
        .add(bt.mul(d_inner).mul(e));
    Ok(Evaluation {
        params,
        flops: flops.f64(),
        bytes: Some(bytes.f64()),
        maf: Some(Maf::Matrix),
        precision: first_precision(r)?,
    })
}

/// Evaluates an SSM class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    match kind {
        Kind::CausalConv1d => causal_conv1d(r, bwd),
        Kind::MambaSsd => mamba_ssd(r),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";

    #[test]
    fn causal_conv1d_with_bias() {
        // x (2, 64, 100), w (64, 4), bias (64).
        let i = test_input(
            "DaoAILab::_causal_conv1d_fwd_cpp",
            "[[2, 64, 100], [64, 4], [64]]",
            &[BF, BF, BF],
            None,
            &[],
        );
        let e = evaluate("causal_conv1d_fwd", &i, false).unwrap();
        assert_eq!(e.params[4].1, Py::Bool(true));
        // 2·2·64·100·4 = 102,400; (2·12,800 + 256 + 64)·2 = 51,840.
        assert_eq!((e.flops, e.bytes), (102_400.0, Some(51_840.0)));
        assert_eq!(e.compute_spec(), "matrix_bf16");
        assert!(evaluate("causal_conv1d_fwd", &i, true).is_err());
    }

    #[test]
    fn mamba2_ssd() {
        // H 8, P 64 → d_inner 512; G 1, N 16: D = 2·512 + 2·16 + 8 = 1,064;
        // conv channels 512 + 32 = 544, d_conv 4; B 1, T 256, C 128.
        let mut ci = vec![""; 17];
        ci[6] = "128";
        ci[15] = "64";
        ci[16] = "1";
        let i = test_input(
            "MambaSplitConv1dScanCombinedFn",
            "[[1, 256, 1064], [544, 4], [544], [8], [8], [8]]",
            &[BF, BF, BF, "float", "float", "float"],
            None,
            &ci,
        );
        let e = evaluate("mamba_ssd_fwd", &i, false).unwrap();
        assert_eq!(e.params[5], ("N", Py::Int(16)));
        // 2·256·544·4 + 2·256·128·16 + 2·8·256·128·64 + 4·8·256·16·64
        // = 1,114,112 + 1,048,576 + 33,554,432 + 8,388,608 = 44,105,728.
        assert_eq!(e.flops, 44_105_728.0);
        // (272,384 + 2,176 + 544 + 131,072)·2 + 8·(4 + 4 + 4) = 812,352 + 96.
        assert_eq!(e.bytes, Some(812_448.0));
        assert_eq!(
            evaluate("mamba_ssd_fwd", &i, true),
            evaluate("mamba_ssd_fwd", &i, false)
        );
        // A state size that does not divide evenly: no model.
        let bad = test_input(
            "MambaSplitConv1dScanCombinedFn",
            "[[1, 256, 1065], [544, 4], [544], [8]]",
            &[BF],
            None,
            &ci,
        );
        assert!(evaluate("mamba_ssd_fwd", &bad, false).is_err());
    }
}
