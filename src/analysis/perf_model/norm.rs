//! Normalization models: batch, layer, group, instance and
//! RMS norms, their backwards, and Primus' fused LayerNorm + modulate.
//!
//! Quirks kept from the reference: every `Input Dims[i] is not None` test is
//! true for a recorded `[]`; BatchNorm/InstanceNorm `is_training` is true for
//! any non-empty Concrete Input (`'False'` included); GroupNormBwd's channel
//! count is a float; the forward classes have no backward model.

use crate::trace::ArgValue;

use super::pyval::{
    Num, Rec, bpe_req, invalid, item, parse_bool_list, parse_int_list, precision, prod, py_int,
    shape_of, tuple_of,
};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Py};

/// Parsed fields of a normalization op (the reference's `param_details`).
struct Norm {
    op_shape: Py,
    dtype_in: String,
    stride_input: Py,
    num_channels: Num,
    has_bias: bool,
    is_affine: bool,
    is_training: bool,
    output_mask: Option<Vec<bool>>,
    /// `prod(op_shape)`.
    n: i128,
    /// The dims of op_shape (FusedLnModulate reads T, B).
    shape: Vec<i128>,
}

impl Norm {
    fn params(&self) -> Vec<(&'static str, Py)> {
        let mut p = vec![
            ("op_shape", self.op_shape.clone()),
            (
                "dtype_in_out",
                Py::Tuple(vec![Py::Str(self.dtype_in.clone()), Py::None]),
            ),
            ("stride_input", self.stride_input.clone()),
            ("stride_output", Py::None),
            ("num_channels", self.num_channels.to_py()),
            ("has_bias", Py::Bool(self.has_bias)),
            ("is_affine", Py::Bool(self.is_affine)),
            ("is_training", Py::Bool(self.is_training)),
        ];
        if let Some(m) = &self.output_mask {
            p.push((
                "output_mask",
                Py::List(m.iter().map(|&b| Py::Bool(b)).collect()),
            ));
        }
        p
    }

    fn mask(&self, i: usize) -> ModelResult<bool> {
        match &self.output_mask {
            Some(m) => item(m, i, "output_mask").copied(),
            None => invalid("no output_mask"),
        }
    }

    fn eval(&self, flops: Num, bytes: Num) -> Evaluation {
        Evaluation {
            params: self.params(),
            flops: flops.f64(),
            bytes: Some(bytes.f64()),
            maf: Some(Maf::Vector),
            precision: precision(Some(&self.dtype_in)),
        }
    }

    /// Generic forward FLOPs (`flops_func`).
    fn flops_fwd(&self) -> Num {
        let c = self.num_channels;
        let n = Num::I(self.n);
        let mut x = Num::I(3).mul(c);
        if self.is_training {
            x = x.add(n.mul(Num::I(3)));
        }
        x = x.add(c.mul(Num::I(3)));
        x.add(Num::I(2).mul(n))
    }

    /// Generic forward bytes (`bytes_func`).
    fn bytes_fwd(&self) -> ModelResult<Num> {
        // `bpe_in` (= `bpe_out`: no parser sets an output dtype).
        let b = bpe_req(Some(&self.dtype_in))?;
        let mut w = 2;
        if self.is_affine {
            w += 1;
            if self.has_bias {
                w += 1;
            }
        }
        if self.is_training {
            w += 2;
        }
        let n = Num::I(self.n);
        let act = n.mul(b).add(n.mul(b));
        Ok(act.add(Num::I(w).mul(self.num_channels).mul(b)))
    }

    /// Generic backward FLOPs (`flops_func_bwd`).
    fn flops_bwd(&self) -> ModelResult<Num> {
        let epc = Num::I(self.n).div(self.num_channels)?;
        let mut fpc = Num::I(if self.is_training { 0 } else { 3 });
        fpc = fpc.add(Num::I(4).mul(epc));
        if self.mask(0)? {
            if self.is_training {
                fpc = fpc.add(Num::I(5).mul(epc));
            }
        } else {
            fpc = fpc.add(Num::I(2).mul(epc));
        }
        Ok(self.num_channels.mul(fpc))
    }

    /// Generic backward bytes (`bytes_func_bwd`).
    fn bytes_bwd(&self) -> ModelResult<Num> {
        // `bpe_in` (= `bpe_out`: no parser sets an output dtype).
        let b = bpe_req(Some(&self.dtype_in))?;
        let n = Num::I(self.n);
        let c = self.num_channels;
        let reads = if self.mask(0)? && self.is_training {
            2
        } else {
            1
        };
        let mut x = n.mul(b).add(n.mul(b).mul(Num::I(reads)));
        if self.is_training {
            x = x.add(c.mul(b));
        }
        if self.is_affine {
            x = x.add(c.mul(b));
            if self.is_training {
                x = x.add(c.mul(b).mul(Num::I(if self.has_bias { 2 } else { 1 })));
            }
        }
        Ok(x)
    }
}

/// `args["Input Dims"][i] is not None`.
fn present(a: &Rec, i: usize) -> ModelResult<bool> {
    Ok(!a.dim(i)?.is_null())
}

/// `shape[i]` of a shape value (IndexError when short).
fn shape_item(v: &ArgValue, i: usize) -> ModelResult<i128> {
    let s = shape_of(v)?;
    item(&s, i, "shape").copied()
}

/// The common head of every parser: op_shape from slot `slot`, its dtype
/// and strides.
fn head(a: &Rec, slot: usize) -> ModelResult<Head> {
    head_by(a, slot, Rec::stride)
}

/// [`head`] with the stride read by `stride` (some parsers allow none).
fn head_by<'r>(
    a: &Rec<'r>,
    slot: usize,
    stride: fn(&Rec<'r>, usize) -> ModelResult<Py>,
) -> ModelResult<Head> {
    let v = a.dim(slot)?;
    let op_shape = tuple_of(v)?;
    let shape = shape_of(v)?;
    let dtype = a.ty(slot)?.to_string();
    let stride = stride(a, slot)?;
    Ok((op_shape, shape, dtype, stride))
}

/// A parser's head: op_shape, the shape, the input dtype and its stride.
type Head = (Py, Vec<i128>, String, Py);

#[allow(clippy::too_many_arguments)]
fn norm(
    (op_shape, shape, dtype_in, stride_input): Head,
    num_channels: Num,
    has_bias: bool,
    is_affine: bool,
    is_training: bool,
    output_mask: Option<Vec<bool>>,
) -> ModelResult<Norm> {
    Ok(Norm {
        n: prod(&shape).count()?,
        op_shape,
        dtype_in,
        stride_input,
        num_channels,
        has_bias,
        is_affine,
        is_training,
        output_mask,
        shape,
    })
}

fn batch_norm(a: &Rec) -> ModelResult<Norm> {
    let h = head(a, 0)?;
    let is_affine = present(a, 2)?;
    let is_training = !a.ci(5)?.is_empty();
    let c = shape_item(a.dim(0)?, 1)?;
    norm(h, Num::I(c), true, is_affine, is_training, None)
}

fn instance_norm(a: &Rec) -> ModelResult<Norm> {
    let h = head(a, 0)?;
    let is_affine = present(a, 2)?;
    let is_training = !a.ci(5)?.is_empty();
    let c = shape_item(a.dim(0)?, 1)?;
    norm(h, Num::I(c), true, is_affine, is_training, None)
}

fn layer_norm(a: &Rec) -> ModelResult<Norm> {
    let h = head(a, 0)?;
    let c = prod(&parse_int_list(a.ci(1)?)?).count()?;
    let has_bias = present(a, 3)?;
    let is_affine = present(a, 2)?;
    norm(h, Num::I(c), has_bias, is_affine, true, None)
}

fn group_norm(a: &Rec) -> ModelResult<Norm> {
    let h = head(a, 0)?;
    let is_affine = present(a, 2)?;
    let c = shape_item(a.dim(0)?, 1)?;
    norm(h, Num::I(c), true, is_affine, true, None)
}

fn rms_norm(a: &Rec) -> ModelResult<Norm> {
    let h = head(a, 0)?;
    let is_affine = present(a, 2)?;
    let c = prod(&parse_int_list(a.ci(1)?)?).count()?;
    norm(h, Num::I(c), false, is_affine, false, None)
}

fn batch_norm_bwd(a: &Rec) -> ModelResult<Norm> {
    let dims = a.dims()?;
    let mut has_output = !item(dims, 0, "Input Dims")?.is_null();
    let name = a.name();
    let (slot, is_training) = if name == "aten::cudnn_batch_norm_backward"
        || name == "aten::miopen_batch_norm_backward"
    {
        has_output = true;
        (0, false)
    } else {
        (1, !a.ci(7)?.is_empty())
    };
    let h = head(a, slot)?;
    let c = *item(&h.1, 1, "shape")?;
    let is_affine = present(a, 2)?;
    norm(
        h,
        Num::I(c),
        true,
        is_affine,
        is_training,
        Some(vec![has_output]),
    )
}

fn layer_norm_bwd(a: &Rec) -> ModelResult<Norm> {
    let h = head(a, 1)?;
    let c = prod(&parse_int_list(a.ci(2)?)?).count()?;
    let mask = parse_bool_list(a.ci(7)?)?;
    let is_affine = *item(&mask, 1, "output_mask")?;
    let has_bias = *item(&mask, 2, "output_mask")?;
    norm(h, Num::I(c), has_bias, is_affine, true, Some(mask))
}

fn group_norm_bwd(a: &Rec) -> ModelResult<Norm> {
    let h = head(a, 1)?;
    let is_affine = present(a, 5)?;
    let mask = parse_bool_list(a.ci(9)?)?;
    let channels = shape_item(a.dim(1)?, 1)?;
    let groups = py_int(a.ci(8)?)?;
    let c = Num::I(channels).div(Num::I(groups))?;
    norm(h, c, true, is_affine, true, Some(mask))
}

fn rms_norm_bwd(a: &Rec) -> ModelResult<Norm> {
    let h = head(a, 1)?;
    let is_affine = present(a, 4)?;
    let c = prod(&parse_int_list(a.ci(2)?)?).count()?;
    let mask = parse_bool_list(a.ci(5)?)?;
    norm(h, Num::I(c), false, is_affine, false, Some(mask))
}

fn fused_ln_modulate(a: &Rec, backward: bool) -> ModelResult<Norm> {
    let head = head_by(a, 0, Rec::stride_or_none)?;
    let Some(&h) = head.1.get(2) else {
        return invalid("fused_ln_modulate expects a (T, B, H) input");
    };
    let mask = backward.then(|| vec![true, true, true]);
    norm(head, Num::I(h), true, true, true, mask)
}

/// RMSNorm forward (`RMSNorm.flops` / `bytes`).
fn rms_fwd(p: &Norm) -> ModelResult<Evaluation> {
    let n = Num::I(p.n);
    let c = p.num_channels;
    let rows = n.div(c)?;
    let flops = rows
        .mul(Num::I(2).mul(c).add(Num::I(2)))
        .add(n.mul(Num::I(if p.is_affine { 2 } else { 1 })));
    let b = bpe_req(Some(&p.dtype_in))?;
    let mut bytes = n.mul(b).add(n.mul(b));
    if p.is_affine {
        bytes = bytes.add(c.mul(b));
    }
    Ok(p.eval(flops, bytes))
}

/// RMSNorm backward (`RMSNormBwd.flops_bwd` / `bytes_bwd`).
fn rms_bwd(p: &Norm) -> ModelResult<Evaluation> {
    let n = p.n;
    let rows = Num::I(n).div(p.num_channels)?;
    let mut flops = if p.is_affine { n } else { 0 };
    flops += n;
    if p.mask(0)? {
        flops += 2 * n + 4 * n;
    }
    if p.mask(1)? && p.is_affine {
        flops += n;
        if rows.f64() > 1.0 {
            flops += n;
        }
    }
    let b = bpe_req(Some(&p.dtype_in))?;
    let nn = Num::I(n);
    let mut bytes = nn.mul(b).add(nn.mul(b).mul(Num::I(2)));
    if p.is_affine {
        bytes = bytes.add(p.num_channels.mul(b).mul(Num::I(2)));
    }
    Ok(p.eval(Num::I(flops), bytes))
}

/// `FusedLnModulate` (fwd) and `FusedLnModulateBackward` numbers.
fn ln_modulate(p: &Norm, backward: bool) -> ModelResult<Evaluation> {
    let n = Num::I(p.n);
    let (t, bsz) = (Num::I(p.shape[0]), Num::I(p.shape[1]));
    let h = p.num_channels;
    let b = bpe_req(Some(&p.dtype_in))?;
    if !backward {
        let bytes = n
            .mul(b)
            .add(n.mul(b))
            .add(Num::I(2).mul(bsz).mul(h).mul(b))
            .add(Num::I(2).mul(t).mul(bsz).mul(Num::I(4)));
        Ok(p.eval(n.mul(Num::I(12)), bytes))
    } else {
        let bytes = Num::I(2)
            .mul(n)
            .mul(b)
            .add(Num::I(2).mul(bsz).mul(t).mul(Num::I(4)))
            .add(n.mul(b))
            .add(Num::I(2).mul(bsz).mul(h).mul(b))
            .add(bsz.mul(h).mul(b));
        Ok(p.eval(n.mul(Num::I(15)), bytes))
    }
}

/// Generic forward numbers.
fn generic_fwd(p: &Norm) -> ModelResult<Evaluation> {
    let flops = p.flops_fwd();
    Ok(p.eval(flops, p.bytes_fwd()?))
}

/// Generic backward numbers.
fn generic_bwd(p: &Norm) -> ModelResult<Evaluation> {
    let flops = p.flops_bwd()?;
    Ok(p.eval(flops, p.bytes_bwd()?))
}

/// The core normalization classes, forward and backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `BatchNorm`.
    Batch,
    /// `LayerNorm`.
    Layer,
    /// `GroupNorm`.
    Group,
    /// `InstanceNorm`.
    Instance,
    /// `RMSNorm`.
    Rms,
    /// `FusedLnModulate`.
    LnModulate,
    /// `BatchNormBwd`.
    BatchBwd,
    /// `LayerNormBwd`.
    LayerBwd,
    /// `GroupNormBwd`.
    GroupBwd,
    /// `InstanceNormBwd` (never modelled).
    InstanceBwd,
    /// `RMSNormBwd`.
    RmsBwd,
    /// `FusedLnModulateBackward`.
    LnModulateBwd,
}

/// Evaluates a Normalization model. Forward classes (`BatchNorm`,
/// `LayerNorm`, `GroupNorm`, `InstanceNorm`, `RMSNorm`, `FusedLnModulate`)
/// give their forward numbers and have no backward model (`bwd` →
/// [`ModelError::NotImplemented`] once the arguments parse). Backward classes
/// (`BatchNormBwd`, `LayerNormBwd`, `GroupNormBwd`, `RMSNormBwd`) give their
/// backward numbers for either value of `bwd`; `FusedLnModulateBackward`
/// only for `bwd == false`; `InstanceNormBwd` is never implemented.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let a = Rec::new(input);
    let forward = match kind {
        Kind::Batch => batch_norm(&a)?,
        Kind::Layer => layer_norm(&a)?,
        Kind::Group => group_norm(&a)?,
        Kind::Instance => instance_norm(&a)?,
        Kind::Rms => rms_norm(&a)?,
        Kind::LnModulate => fused_ln_modulate(&a, false)?,
        Kind::BatchBwd => return generic_bwd(&batch_norm_bwd(&a)?),
        Kind::LayerBwd => return generic_bwd(&layer_norm_bwd(&a)?),
        Kind::GroupBwd => return generic_bwd(&group_norm_bwd(&a)?),
        Kind::RmsBwd => return rms_bwd(&rms_norm_bwd(&a)?),
        Kind::LnModulateBwd => {
            let p = fused_ln_modulate(&a, true)?;
            if bwd {
                return Err(ModelError::NotImplemented);
            }
            return ln_modulate(&p, true);
        }
        Kind::InstanceBwd => return Err(ModelError::NotImplemented),
    };
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    match kind {
        Kind::Rms => rms_fwd(&forward),
        Kind::LnModulate => ln_modulate(&forward, false),
        _ => generic_fwd(&forward),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, is_invalid, param_text as param, test_input};
    use super::*;

    const BF16: &str = "c10::BFloat16";
    const NCHW: &str = "[8, 16, 32, 32]";
    const NCHW_STRIDE: &str = "[16384, 1024, 32, 1]";

    fn mib(ev: &Evaluation) -> f64 {
        ev.bytes.unwrap() / 1048576.0
    }

    #[test]
    fn layer_norm_worked_check() {
        let i = test_input(
            "aten::layer_norm",
            "[[4, 197, 768], [], [768], [768], [], []]",
            &[BF16, "ScalarList", BF16, BF16, "Scalar", "Scalar"],
            Some("[[151296, 768, 1], [], [1], [1], [], []]"),
            &["", "[768]", "", "", "9.9999999999999998e-13", "True"],
        );
        let ev = evaluate("LayerNorm", &i, false).unwrap();
        let keys: Vec<_> = ev.params.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "op_shape",
                "dtype_in_out",
                "stride_input",
                "stride_output",
                "num_channels",
                "has_bias",
                "is_affine",
                "is_training"
            ]
        );
        assert_eq!(param(&ev, "op_shape"), "(4, 197, 768)");
        assert_eq!(param(&ev, "dtype_in_out"), "('c10::BFloat16', None)");
        assert_eq!(ev.params[4].1, Py::Int(768));
        // N = 4*197*768 = 605,184, C = 768, training:
        // flops = 3C + 3N + 3C + 2N = 4,608 + 3,025,920 = 3,030,528.
        assert_eq!(ev.flops, 3_030_528.0);
        // bytes = N*2 + N*2 + (2+1+1+2)*C*2 = 2,420,736 + 9,216 = 2,429,952
        //       = 2.3173828125 MiB.
        assert_eq!(ev.bytes, Some(2_429_952.0));
        assert_eq!(mib(&ev), 2.3173828125);
        assert_eq!(ev.compute_spec(), "vector_bf16");
        // The forward classes have no backward model.
        assert_eq!(
            evaluate("LayerNorm", &i, true).unwrap_err(),
            ModelError::NotImplemented
        );
    }

    #[test]
    fn batch_norm_training_flag_quirk() {
        // CI[5] = 'False' is non-empty text, hence is_training = True.
        let i = test_input(
            "aten::native_batch_norm",
            "[[1, 128, 32, 32], [], [], [], [], [], [], []]",
            &["float", "", "", "", "", "Scalar", "Scalar", "Scalar"],
            Some("[[131072, 1024, 32, 1], [], [], [], [], [], [], []]"),
            &["", "", "", "", "", "False", "0.1", "1e-05"],
        );
        let ev = evaluate("BatchNorm", &i, false).unwrap();
        assert_eq!(param(&ev, "is_training"), "True");
        assert_eq!(param(&ev, "is_affine"), "True");
        assert_eq!(ev.params[4].1, Py::Int(128));
        // N = 131,072, C = 128: flops = 384 + 393,216 + 384 + 262,144 = 656,128.
        assert_eq!(ev.flops, 656_128.0);
        // bytes = N*4*2 + 6*128*4 = 1,048,576 + 3,072 = 1,051,648 = 1.0029296875 MiB.
        assert_eq!(mib(&ev), 1.0029296875);
        // An empty CI[5] means not training: flops = 384 + 384 + 262,144;
        // bytes = N*8 + 4*128*4 = 1,050,624.
        let mut j = i.clone();
        j.concrete.as_mut().unwrap()[5] = String::new();
        let ev = evaluate("BatchNorm", &j, false).unwrap();
        assert_eq!(ev.flops, 262_912.0);
        assert_eq!(ev.bytes, Some(1_050_624.0));
    }

    #[test]
    fn group_and_instance_norm_forward() {
        let i = test_input(
            "aten::group_norm",
            &format!("[{NCHW}, [], [16], [16], [], []]"),
            &["float", "Scalar", "float", "float", "Scalar", "Scalar"],
            Some(&format!("[{NCHW_STRIDE}, [], [1], [1], [], []]")),
            &["", "4", "", "", "1e-05", "True"],
        );
        let ev = evaluate("GroupNorm", &i, false).unwrap();
        // C = 16 channels (not groups), N = 131,072:
        // flops = 48 + 393,216 + 48 + 262,144 = 655,456;
        // bytes = N*4*2 + 6*16*4 = 1,048,960 = 1.0003662109375 MiB.
        assert_eq!(ev.flops, 655_456.0);
        assert_eq!(mib(&ev), 1.0003662109375);
        let i = test_input(
            "aten::instance_norm",
            &format!("[{NCHW}, [16], [16], [], [], [], [], [], []]"),
            &[
                "float", "float", "float", "", "", "Scalar", "Scalar", "Scalar", "Scalar",
            ],
            Some(&format!(
                "[{NCHW_STRIDE}, [1], [1], [], [], [], [], [], []]"
            )),
            &["", "", "", "", "", "True", "0.1", "1e-05", "True"],
        );
        let ev = evaluate("InstanceNorm", &i, false).unwrap();
        assert_eq!((ev.flops, ev.bytes), (655_456.0, Some(1_048_960.0)));
    }

    #[test]
    fn batch_norm_backward_worked_checks() {
        let i = test_input(
            "aten::native_batch_norm_backward",
            &format!("[{NCHW}, {NCHW}, [], [16], [16], [16], [16], [], [], []]"),
            &[
                "float",
                "float",
                "",
                "float",
                "float",
                "float",
                "float",
                "Scalar",
                "Scalar",
                "ScalarList",
            ],
            Some(&format!(
                "[{NCHW_STRIDE}, {NCHW_STRIDE}, [], [1], [1], [1], [1], [], [], []]"
            )),
            &[
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "True",
                "1e-05",
                "[True, False, False]",
            ],
        );
        let ev = evaluate("BatchNormBwd", &i, false).unwrap();
        assert_eq!(param(&ev, "output_mask"), "[True]");
        assert_eq!(param(&ev, "is_training"), "True");
        // N = 131,072, C = 16, epc = 8,192: flops = C*(4*epc + 5*epc) = 1,179,648.
        assert_eq!(ev.flops, 1_179_648.0);
        // bytes = N*4 + N*4*2 + C*4 + C*4 + C*4*2 = 1,572,864 + 256 = 1,573,120
        //       = 1.500244140625 MiB.
        assert_eq!(mib(&ev), 1.500244140625);
        // bwd asks the same numbers of a backward class.
        assert_eq!(evaluate("BatchNormBwd", &i, true).unwrap(), ev);

        let i = test_input(
            "aten::miopen_batch_norm_backward",
            &format!("[{NCHW}, {NCHW}, [16], [16], [16], [16], [16], []]"),
            &["float"; 8],
            Some(&format!(
                "[{NCHW_STRIDE}, {NCHW_STRIDE}, [1], [1], [1], [1], [1], []]"
            )),
            &["", "", "", "", "", "", "", "1e-05"],
        );
        let ev = evaluate("BatchNormBwd", &i, false).unwrap();
        assert_eq!(param(&ev, "is_training"), "False");
        // Not training: flops = C*(3 + 4*8,192) = 16*32,771 = 524,336.
        assert_eq!(ev.flops, 524_336.0);
        // bytes = N*4 + N*4 + C*4 (weight) = 1,048,640 = 1.00006103515625 MiB.
        assert_eq!(mib(&ev), 1.00006103515625);
    }

    #[test]
    fn layer_norm_backward_masks() {
        let make = |mask: &'static str, w: &str| {
            test_input(
                "aten::native_layer_norm_backward",
                &format!("[{NCHW}, {NCHW}, [], [8, 1, 1, 1], [8, 1, 1, 1], {w}, {w}, []]"),
                &[
                    "float",
                    "float",
                    "ScalarList",
                    "float",
                    "float",
                    "float",
                    "float",
                    "ScalarList",
                ],
                Some(&format!(
                    "[{NCHW_STRIDE}, {NCHW_STRIDE}, [], [1, 1, 1, 1], [1, 1, 1, 1], [], [], []]"
                )),
                &["", "", "[16, 32, 32]", "", "", "", "", mask],
            )
        };
        let ev = evaluate(
            "LayerNormBwd",
            &make("[True, True, True]", "[16, 32, 32]"),
            false,
        )
        .unwrap();
        assert_eq!(param(&ev, "output_mask"), "[True, True, True]");
        assert_eq!(ev.params[4].1, Py::Int(16384));
        // N = 131,072, C = 16,384, epc = 8: flops = C*(4*8 + 5*8) = 1,179,648.
        assert_eq!(ev.flops, 1_179_648.0);
        // bytes = N*4 + N*8 + C*4 + C*4 + C*4*2 = 1,572,864 + 262,144 = 1.75 MiB.
        assert_eq!(mib(&ev), 1.75);
        let ev = evaluate("LayerNormBwd", &make("[True, False, False]", "[]"), false).unwrap();
        assert_eq!(param(&ev, "is_affine"), "False");
        assert_eq!(param(&ev, "has_bias"), "False");
        // bytes = N*4 + N*8 + C*4 = 1,638,400 = 1.5625 MiB.
        assert_eq!(mib(&ev), 1.5625);
        // A mask too short for is_affine / has_bias fails.
        assert!(is_invalid(&evaluate(
            "LayerNormBwd",
            &make("[True]", "[]"),
            false
        )));
    }

    #[test]
    fn group_norm_backward_float_channels() {
        let i = test_input(
            "aten::native_group_norm_backward",
            &format!("[{NCHW}, {NCHW}, [8, 4], [8, 4], [16], [], [], [], [], []]"),
            &[
                "float",
                "float",
                "float",
                "float",
                "float",
                "Scalar",
                "Scalar",
                "Scalar",
                "Scalar",
                "ScalarList",
            ],
            Some(&format!(
                "[{NCHW_STRIDE}, {NCHW_STRIDE}, [4, 1], [4, 1], [1], [], [], [], [], []]"
            )),
            &[
                "",
                "",
                "",
                "",
                "",
                "8",
                "16",
                "1024",
                "4",
                "[True, True, True]",
            ],
        );
        let ev = evaluate("GroupNormBwd", &i, false).unwrap();
        // C = 16 / 4 = 4.0, a float.
        assert_eq!(ev.params[4].1, Py::Float(4.0));
        assert_eq!(param(&ev, "num_channels"), "4.0");
        // epc = 131,072 / 4 = 32,768: flops = 4*(9*32,768) = 1,179,648.
        assert_eq!(ev.flops, 1_179_648.0);
        // bytes = N*4 + N*8 + 4*4 + 4*4 + 4*4*2 = 1,572,864 + 64 = 1.50006103515625 MiB.
        assert_eq!(mib(&ev), 1.50006103515625);
        // Zero groups divides by zero.
        let mut j = i.clone();
        j.concrete.as_mut().unwrap()[8] = "0".into();
        assert!(is_invalid(&evaluate("GroupNormBwd", &j, false)));
    }

    #[test]
    fn rms_norm_forward_and_backward() {
        let i = test_input(
            "aten::_fused_rms_norm",
            &format!("[{NCHW}, [], [32, 32], []]"),
            &["float", "ScalarList", "float", ""],
            Some(&format!("[{NCHW_STRIDE}, [], [32, 1], []]")),
            &["", "[32, 32]", "", ""],
        );
        let ev = evaluate("RMSNorm", &i, false).unwrap();
        assert_eq!(param(&ev, "has_bias"), "False");
        assert_eq!(param(&ev, "is_training"), "False");
        // C = 1,024, rows = 131,072/1,024 = 128:
        // flops = 128*(2*1,024 + 2) + N*2 = 262,400 + 262,144 = 524,544.
        assert_eq!(ev.flops, 524_544.0);
        // bytes = N*4 + N*4 + C*4 = 1,052,672 = 1.00390625 MiB.
        assert_eq!(mib(&ev), 1.00390625);

        let make = |mask: &'static str| {
            test_input(
                "aten::_fused_rms_norm_backward",
                &format!("[{NCHW}, {NCHW}, [], [8, 16, 1, 1], [32, 32], []]"),
                &[
                    "float",
                    "float",
                    "ScalarList",
                    "float",
                    "float",
                    "ScalarList",
                ],
                Some(&format!(
                    "[{NCHW_STRIDE}, {NCHW_STRIDE}, [], [16, 1, 1, 1], [32, 1], []]"
                )),
                &["", "", "[32, 32]", "", "", mask],
            )
        };
        let ev = evaluate("RMSNormBwd", &make("[True, True]"), false).unwrap();
        assert_eq!(param(&ev, "output_mask"), "[True, True]");
        // affine: N (grad*w) + N (x_hat) + 6N (grad_in) + N + N (weight grad,
        // rows > 1) = 10N = 1,310,720.
        assert_eq!(ev.flops, 1_310_720.0);
        // bytes = N*4 + N*4*2 + C*4*2 = 1,572,864 + 8,192 = 1.5078125 MiB.
        assert_eq!(mib(&ev), 1.5078125);
        let ev = evaluate("RMSNormBwd", &make("[True, False]"), false).unwrap();
        // 8N = 1,048,576.
        assert_eq!(ev.flops, 1_048_576.0);
        assert!(is_invalid(&evaluate("RMSNormBwd", &make("[True]"), false)));
    }

    #[test]
    fn fused_ln_modulate_pair() {
        let fwd = test_input(
            "primus::fused_ln_modulate",
            "[[4, 2, 8], [2, 8], [2, 8], []]",
            &[BF16, BF16, BF16, "Scalar"],
            None,
            &["", "", "", "1e-06"],
        );
        let ev = evaluate("FusedLnModulate", &fwd, false).unwrap();
        assert_eq!(ev.params[2].1, Py::None);
        assert_eq!(ev.params.len(), 8);
        // (T, B, H) = (4, 2, 8), N = 64: flops = 12N = 768;
        // bytes = 64*2 + 64*2 + 2*2*8*2 + 2*4*2*4 = 128 + 128 + 64 + 64 = 384.
        assert_eq!((ev.flops, ev.bytes), (768.0, Some(384.0)));
        let ev = evaluate("FusedLnModulateBackward", &fwd, false).unwrap();
        assert_eq!(param(&ev, "output_mask"), "[True, True, True]");
        // flops = 15N = 960; bytes = 2*64*2 + 2*2*4*4 + 64*2 + 2*2*8*2 + 2*8*2
        //       = 256 + 64 + 128 + 64 + 32 = 544.
        assert_eq!((ev.flops, ev.bytes), (960.0, Some(544.0)));
        assert_eq!(
            evaluate("FusedLnModulateBackward", &fwd, true).unwrap_err(),
            ModelError::NotImplemented
        );
    }

    #[test]
    fn big_ints_do_not_overflow() {
        // (T, B, H) = (0, 2^62, 2^62) float: N = 0, but 2*B*H*4 = 2^127 exceeds
        // i128; Python's big int prints as the float 2^127.
        let i = test_input(
            "primus::fused_ln_modulate",
            "[[0, 4611686018427387904, 4611686018427387904]]",
            &["float"],
            None,
            &[""],
        );
        let ev = evaluate("FusedLnModulate", &i, false).unwrap();
        assert_eq!((ev.flops, ev.bytes), (0.0, Some(2f64.powi(127))));
    }

    #[test]
    fn failures() {
        assert_eq!(
            evaluate("InstanceNormBwd", &OpInput::default(), false).unwrap_err(),
            ModelError::NotImplemented
        );
        // Missing Concrete Inputs / malformed literal / unknown dtype size.
        let mut i = test_input(
            "aten::layer_norm",
            "[[2, 4], [], [4], [4], [], []]",
            &[
                "c10::complex<float>",
                "ScalarList",
                "float",
                "float",
                "Scalar",
                "Scalar",
            ],
            Some("[[4, 1], [], [1], [1], [], []]"),
            &["", "[4]", "", "", "1e-05", "True"],
        );
        assert!(is_invalid(&evaluate("LayerNorm", &i, false)));
        i.types.as_mut().unwrap()[0] = "float".into();
        assert!(evaluate("LayerNorm", &i, false).is_ok());
        i.concrete.as_mut().unwrap()[1] = String::new();
        assert!(is_invalid(&evaluate("LayerNorm", &i, false)));
        i.concrete = None;
        assert!(is_invalid(&evaluate("LayerNorm", &i, false)));
        // Too few Input Dims for the bias test.
        let short = test_input(
            "aten::layer_norm",
            "[[2, 4], []]",
            &["float", "ScalarList"],
            Some("[[4, 1], []]"),
            &["", "[4]"],
        );
        assert!(is_invalid(&evaluate("LayerNorm", &short, false)));
    }
}
