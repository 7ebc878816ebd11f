//! Convolution models: `aten::convolution` (`aten_conv`) and
//! `aten::convolution_backward` (`aten_conv_bwd`).
//!
//! Quirks kept from the reference: `aten::convolution` records nine
//! arguments, so its `bias` (`len(Input Dims) == 3`) is always False and bias
//! FLOPs/bytes are never counted; the backward op's `bias` is the empty list
//! `[]` itself (Python short-circuit), printed as `[]`; backward bias bytes
//! are a raw element count, not multiplied by the element size.
//!
//! The fused `ConvBias_` / `ConvBiasReLU_` ops (input at 0, weight at 1,
//! always a bias; integer stride and padding at Concrete Inputs 3 and 4)
//! use the same formulas. Their backward ops record no shapes: the reference
//! takes them from the forward op with the same sequence number that it
//! modelled earlier ([`OpInput::forward`]); without one there is no model.

use crate::trace::ArgValue;

use super::gemm::{add, mul, mul_all, str_tuple};
use super::pyval::truthy;
use super::pyval::{Rec, bpe, invalid, item, prod, py_eval, py_i64 as py_int, shape_of, tuple_of};
use super::{Evaluation, Maf, ModelResult, OpInput, Py, precision_of};

/// A convolution as the CONV base class holds it.
struct Conv {
    params: Vec<(&'static str, Py)>,
    x: Vec<i64>,
    w: Vec<i64>,
    out: Vec<i64>,
    bias: bool,
    transposed: bool,
    dtype: String,
}

/// `aten_conv.str_to_tuple`: `"[a, b]"` → `(a, b)`, dropping the first and
/// last character and splitting on commas.
fn str_to_tuple(s: &str) -> ModelResult<Vec<i64>> {
    let chars: Vec<char> = s.chars().collect();
    let inner: String = if chars.len() >= 2 {
        chars[1..chars.len() - 1].iter().collect()
    } else {
        String::new()
    };
    inner.split(',').map(py_int).collect()
}

/// A list argument from its concrete text, or `(default,)*nd` when empty.
fn list_arg(ci: &[String], i: usize, default: i64, nd: i64) -> ModelResult<Vec<i64>> {
    let s = item(ci, i, "Concrete Inputs")?;
    let v = if s.is_empty() {
        vec![default; nd.max(0) as usize]
    } else {
        str_to_tuple(s)?
    };
    // A 1-tuple is repeated once per spatial dimension.
    Ok(if v.len() == 1 {
        v.repeat(nd.max(0) as usize)
    } else {
        v
    })
}

/// `conv1d`/`conv2d`/`conv3d` from the input rank.
fn conv_nd(rank: usize) -> ModelResult<&'static str> {
    match rank {
        3 => Ok("conv1d"),
        4 => Ok("conv2d"),
        5 => Ok("conv3d"),
        r => invalid(format!("Unknown convolution dimension: {r}")),
    }
}

/// Python `int((x + 2p - d(k-1) - 1) / s + 1)`: true division, then
/// truncation toward zero.
fn conv_out_dim(x: i64, k: i64, s: i64, p: i64, d: i64) -> ModelResult<i64> {
    let (x, k, s, p, d) = (x as i128, k as i128, s as i128, p as i128, d as i128);
    let num = add(add(x, mul(2, p)?)?, -add(mul(d, k - 1)?, 1)?)?;
    if s == 0 {
        return invalid("float division by zero");
    }
    let q = num as f64 / s as f64 + 1.0;
    if !q.is_finite() || q.abs() >= 9.0e18 {
        return invalid("conv output size out of range");
    }
    Ok(q.trunc() as i64)
}

/// `(x - 1)·s - 2p + d(k-1) + out_pad + 1`.
fn transposed_out_dim(x: i64, k: i64, s: i64, p: i64, d: i64, op: i64) -> ModelResult<i64> {
    let (x, k, s, p, d, op) = (
        x as i128, k as i128, s as i128, p as i128, d as i128, op as i128,
    );
    let v = add(mul(x - 1, s)?, -mul(2, p)?)?;
    let v = add(add(v, mul(d, k - 1)?)?, op + 1)?;
    i64::try_from(v).or_else(|_| invalid("conv output size out of range"))
}

/// The backward op's `bias`: `len(dims) > 3 and dims[3] and len(dims[3]) > 0`
/// (the falsy `dims[3]` itself when it is one).
fn backward_bias(dims: &[ArgValue]) -> ModelResult<Py> {
    let Some(d3) = dims.get(3) else {
        return Ok(Py::Bool(false));
    };
    let p = Py::from_arg(d3, false);
    if !truthy(&p) {
        return Ok(p);
    }
    Ok(match d3 {
        ArgValue::List(a) => Py::Bool(!a.is_empty()),
        ArgValue::Str(s) => Py::Bool(!s.is_empty()),
        ArgValue::Map(o) => Py::Bool(!o.is_empty()),
        _ => return invalid("object of this type has no len()"),
    })
}

/// The input and weight of a convolution at `Input Dims[off]`, `[off+1]`,
/// with the number of spatial dimensions (`len(input) - 2`).
struct Operands<'a> {
    x_val: &'a ArgValue,
    x_py: Py,
    w_val: &'a ArgValue,
    w_py: Py,
    nd: i64,
}

fn operands(dims: &[ArgValue], off: usize) -> ModelResult<Operands<'_>> {
    let x_val = item(dims, off, "Input Dims")?;
    let x_py = tuple_of(x_val)?;
    let nd = match &x_py {
        Py::Tuple(v) => v.len() as i64 - 2,
        _ => -2,
    };
    let w_val = item(dims, off + 1, "Input Dims")?;
    Ok(Operands {
        x_val,
        x_py,
        w_py: tuple_of(w_val)?,
        w_val,
        nd,
    })
}

/// Everything a convolution parser reads, before the output shape.
struct Parsed<'a> {
    ops: Operands<'a>,
    /// Input and weight dtypes (checked equal).
    dtypes: Vec<String>,
    x_stride: Py,
    w_stride: Py,
    bias: Py,
    stride: Vec<i64>,
    padding: Vec<i64>,
    dilation: Vec<i64>,
    transposed: Py,
    output_padding: Vec<i64>,
    groups: i64,
}

/// Shared parser of `aten::convolution` (`off = 0`) and
/// `aten::convolution_backward` (`off = 1`: input, weight and the list
/// arguments all sit one slot later).
fn parse(input: &OpInput, backward: bool) -> ModelResult<Conv> {
    let off = usize::from(backward);
    let dims = Rec::new(input).dims()?;
    let ci = Rec::new(input).concrete()?;
    let ops = operands(dims, off)?;
    let nd = ops.nd;
    let bias = if backward {
        backward_bias(dims)?
    } else {
        Py::Bool(dims.len() == 3)
    };
    let base = off + 3;
    let types = Rec::new(input).types()?;
    let dtypes = vec![
        item(types, off, "Input type")?.clone(),
        item(types, off + 1, "Input type")?.clone(),
    ];
    if dtypes[0] != dtypes[1] {
        return invalid(format!(
            "Data types of input and weight are different: {:?}",
            dtypes
        ));
    }
    let (x_stride, w_stride) = match input.strides {
        None => (Py::None, Py::None),
        Some(s) => (
            tuple_of(item(s, off, "Input Strides")?)?,
            tuple_of(item(s, off + 1, "Input Strides")?)?,
        ),
    };
    conv_from(Parsed {
        ops,
        dtypes,
        x_stride,
        w_stride,
        bias,
        stride: list_arg(ci, base, 1, nd)?,
        padding: list_arg(ci, base + 1, 0, nd)?,
        dilation: list_arg(ci, base + 2, 1, nd)?,
        transposed: py_eval(item(ci, base + 3, "Concrete Inputs")?)?,
        output_padding: list_arg(ci, base + 4, 0, nd)?,
        groups: py_int(item(ci, base + 5, "Concrete Inputs")?)?,
    })
}

/// `CONV.__init__`: the parameters and output shape of a parsed convolution.
fn conv_from(p: Parsed) -> ModelResult<Conv> {
    let conv_nd = conv_nd((p.ops.nd + 2).max(0) as usize)?;
    let params = vec![
        ("convNd", Py::Str(conv_nd.to_string())),
        ("input_shape", p.ops.x_py),
        ("filter_shape", p.ops.w_py),
        ("dtype_input_weight", str_tuple(&p.dtypes)),
        ("input_stride", p.x_stride),
        ("weight_stride", p.w_stride),
        ("bias", p.bias.clone()),
        ("stride", Py::ints(&p.stride)),
        ("padding", Py::ints(&p.padding)),
        ("dilation", Py::ints(&p.dilation)),
        ("transposed_conv", p.transposed.clone()),
        ("output_padding", Py::ints(&p.output_padding)),
        ("groups", Py::Int(p.groups)),
    ];
    // Shape entries are recorded i64s (`shape_of` reads them as such).
    let i64s =
        |v| -> ModelResult<Vec<i64>> { Ok(shape_of(v)?.into_iter().map(|d| d as i64).collect()) };
    let x = i64s(p.ops.x_val)?;
    let w = i64s(p.ops.w_val)?;
    let transposed = truthy(&p.transposed);
    let spatial = x.len().saturating_sub(2);
    let mut out = vec![
        *item(&x, 0, "input_shape")?,
        *item(&w, usize::from(transposed), "filter_shape")?,
    ];
    for i in 0..spatial {
        let xi = x[i + 2];
        let ki = *item(&w, i + 2, "filter_shape")?;
        let s = *item(&p.stride, i, "stride")?;
        let pad = *item(&p.padding, i, "padding")?;
        let d = *item(&p.dilation, i, "dilation")?;
        out.push(if transposed {
            let op = *item(&p.output_padding, i, "output_padding")?;
            transposed_out_dim(xi, ki, s, pad, d, op)?
        } else {
            conv_out_dim(xi, ki, s, pad, d)?
        });
    }
    Ok(Conv {
        params,
        x,
        w,
        out,
        bias: truthy(&p.bias),
        transposed,
        dtype: p.dtypes[0].clone(),
    })
}

/// `(int(arg),) * nd` of an optional Concrete Input, else `(default,) * nd`.
fn fused_arg(ci: &[String], i: usize, default: i64, nd: i64) -> ModelResult<Vec<i64>> {
    let v = match ci.get(i).map(String::as_str) {
        Some(s) if !s.is_empty() => py_int(s)?,
        _ => default,
    };
    Ok(vec![v; nd.max(0) as usize])
}

/// `ConvBias_` / `ConvBiasReLU_`: input at 0, weight at 1, a bias always.
fn parse_fused(input: &OpInput) -> ModelResult<Conv> {
    let dims = Rec::new(input).dims()?;
    let ci = Rec::new(input).concrete()?;
    let ops = operands(dims, 0)?;
    let nd = ops.nd;
    let types = Rec::new(input).types()?;
    let dtypes = types[..types.len().min(2)].to_vec();
    if item(&dtypes, 0, "dtype_input_weight")? != item(&dtypes, 1, "dtype_input_weight")? {
        return invalid(format!(
            "Data types of input and weight are different: {dtypes:?}"
        ));
    }
    let (x_stride, w_stride) = match input.strides {
        Some(s) if s.len() > 1 => (tuple_of(&s[0])?, tuple_of(&s[1])?),
        _ => (Py::None, Py::None),
    };
    conv_from(Parsed {
        ops,
        dtypes,
        x_stride,
        w_stride,
        bias: Py::Bool(true),
        stride: fused_arg(ci, 3, 1, nd)?,
        padding: fused_arg(ci, 4, 0, nd)?,
        dilation: vec![1; nd.max(0) as usize],
        transposed: Py::Bool(false),
        output_padding: vec![0; nd.max(0) as usize],
        groups: 1,
    })
}

/// `CONV.flops_func`: `2·prod(w[1:])` per output (or, transposed, per
/// input) element, plus `prod(out)` with a bias.
fn flops_func(
    x: &[i64],
    w: &[i64],
    out: &[i64],
    bias: bool,
    transposed: bool,
) -> ModelResult<i128> {
    let per = mul(2, prod(w.get(1..).unwrap_or(&[])).exact()?)?;
    let conv = mul(prod(if transposed { x } else { out }).exact()?, per)?;
    add(conv, if bias { prod(out).exact()? } else { 0 })
}

/// `CONV.t`: swap the first two dimensions.
fn t(s: &[i64]) -> ModelResult<Vec<i64>> {
    if s.len() < 2 {
        return invalid("shape has fewer than two dimensions");
    }
    let mut v = vec![s[1], s[0]];
    v.extend_from_slice(&s[2..]);
    Ok(v)
}

/// `CONV.flops_bwd_func`: input grad + weight grad (+ bias grad).
fn flops_bwd(x: &[i64], w: &[i64], out: &[i64], bias: bool, transposed: bool) -> ModelResult<i128> {
    let input_grad = flops_func(out, w, x, false, !transposed)?;
    let weight_grad = if transposed {
        flops_func(&t(out)?, &t(x)?, &t(w)?, false, false)?
    } else {
        flops_func(&t(x)?, &t(out)?, &t(w)?, false, false)?
    };
    let total = add(input_grad, weight_grad)?;
    add(total, if bias { prod(out).exact()? } else { 0 })
}

/// The element count of `CONV.bytes_func` (input, weight, bias, output).
fn elems(x: &[i64], w: &[i64], out: &[i64], bias: bool) -> ModelResult<i128> {
    let bias_elems = if bias {
        *item(out, 1, "out_shape")? as i128
    } else {
        0
    };
    add(
        add(add(prod(x).exact()?, prod(w).exact()?)?, bias_elems)?,
        prod(out).exact()?,
    )
}

/// `CONV.bytes_bwd_func`: both gradient GEMMs read/write every tensor once;
/// the bias term is added as a raw element count.
fn bytes_bwd(x: &[i64], w: &[i64], out: &[i64], bias: bool, b: i128) -> ModelResult<i128> {
    let input_grad = mul(elems(out, w, x, false)?, b)?;
    let weight_grad = mul(elems(out, x, w, false)?, b)?;
    let bias = if bias {
        add(prod(out).exact()?, *item(out, 1, "out_shape")? as i128)?
    } else {
        0
    };
    add(add(input_grad, weight_grad)?, bias)
}

/// FLOPs and bytes of a convolution with input `x`, weight `w` and output
/// `out` (the CONV base formulas): forward, or with `bwd` backward; bytes
/// at `bpe` bytes per element, None when that size is unknown.
pub fn conv_numbers(
    (x, w, out): (&[i64], &[i64], &[i64]),
    bias: bool,
    transposed: bool,
    bwd: bool,
    bpe: Option<i128>,
) -> ModelResult<(i128, Option<i128>)> {
    if bwd {
        let bytes = match bpe {
            Some(b) => Some(bytes_bwd(x, w, out, bias, b)?),
            None => None,
        };
        return Ok((flops_bwd(x, w, out, bias, transposed)?, bytes));
    }
    let bytes = match bpe {
        Some(b) => Some(mul_all(&[elems(x, w, out, bias)?, b])?),
        None => None,
    };
    Ok((flops_func(x, w, out, bias, transposed)?, bytes))
}

/// The CONV classes: the op itself or the fused ops (which record their
/// arguments differently), forward or backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `aten::convolution`.
    Conv,
    /// `aten::convolution_backward`.
    ConvBwd,
    /// `ConvBias_`, `ConvBiasReLU_`.
    Fused,
    /// `ConvBias_Backward`, `ConvBiasReLU_Backward`: shapes of the forward op.
    FusedBwd,
}

/// Evaluates a CONV-family model of kind `kind` on `input`.
///
/// `aten_conv`, `ConvBias_` and `ConvBiasReLU_` give their forward numbers,
/// or with `bwd` the backward ones; `aten_conv_bwd` and the fused backward
/// classes give backward numbers either way (the fused ones from their
/// forward op's shapes).
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let (c, backward_op) = match kind {
        Kind::Conv => (parse(input, false)?, false),
        Kind::ConvBwd => (parse(input, true)?, true),
        Kind::Fused => (parse_fused(input)?, false),
        Kind::FusedBwd => match &input.forward {
            Some(fwd) => (parse_fused(fwd)?, true),
            None => {
                return invalid("no earlier forward op with its sequence number");
            }
        },
    };
    let (flops, bytes) = conv_numbers(
        (&c.x, &c.w, &c.out),
        c.bias,
        c.transposed,
        backward_op || bwd,
        bpe(Some(&c.dtype)),
    )?;
    Ok(Evaluation {
        params: c.params,
        flops: flops as f64,
        bytes: bytes.map(|b| b as f64),
        maf: Some(Maf::Matrix),
        precision: precision_of(Some(&c.dtype)),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_keys, evaluate, is_invalid, op_input, param, strs};
    use super::*;
    use crate::test_support::arg;

    const BF16: &str = "c10::BFloat16";

    fn conv_input(
        dims: ArgValue,
        types: &[&str],
        strides: Option<ArgValue>,
        ci: &[&str],
    ) -> OpInput<'static> {
        op_input("aten::convolution", dims, types, strides, ci)
    }

    fn vit_patch_conv() -> OpInput<'static> {
        conv_input(
            arg!([
                [4, 3, 224, 224],
                [768, 3, 16, 16],
                [768],
                [],
                [],
                [],
                [],
                [],
                []
            ]),
            &[
                BF16,
                BF16,
                BF16,
                "ScalarList",
                "ScalarList",
                "ScalarList",
                "Scalar",
                "ScalarList",
                "Scalar",
            ],
            Some(arg!([
                [150528, 50176, 224, 1],
                [768, 256, 16, 1],
                [1],
                [],
                [],
                [],
                [],
                [],
                []
            ])),
            &[
                "", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1",
            ],
        )
    }

    #[test]
    fn conv2d_forward_ignores_bias() {
        let e = evaluate("aten_conv", &vit_patch_conv(), false).unwrap();
        // out spatial = int((224 + 0 - 1*15 - 1)/16 + 1) = 14 -> out (4, 768, 14, 14)
        // flops = prod(out) * 2*prod(W[1:]) = 602112 * 2*768 = 924844032 (no bias term)
        assert_eq!(e.flops, 924_844_032.0);
        // (prod(x) + prod(W) + prod(out)) * 2 = (602112 + 589824 + 602112) * 2
        assert_eq!(e.bytes, Some(3_588_096.0));
        assert_eq!(e.bytes.unwrap() / 1048576.0, 3.421875);
        assert_keys(
            &e,
            "convNd input_shape filter_shape dtype_input_weight input_stride weight_stride bias stride padding dilation transposed_conv output_padding groups",
        );
        let cells: Vec<String> = e.params.iter().map(|(_, v)| v.to_str()).collect();
        assert_eq!(
            cells,
            [
                "conv2d",
                "(4, 3, 224, 224)",
                "(768, 3, 16, 16)",
                "('c10::BFloat16', 'c10::BFloat16')",
                "(150528, 50176, 224, 1)",
                "(768, 256, 16, 1)",
                "False",
                "(16, 16)",
                "(0, 0)",
                "(1, 1)",
                "False",
                "(0, 0)",
                "1"
            ]
        );
        assert_eq!(e.compute_spec(), "matrix_bf16");
    }

    #[test]
    fn conv2d_backward_of_forward_op() {
        let e = evaluate("aten_conv", &vit_patch_conv(), true).unwrap();
        // normal conv: exactly 2 x forward = 2 * 924844032
        assert_eq!(e.flops, 1_849_688_064.0);
        // 2 * (prod(out) + prod(W) + prod(x)) * 2 = 2 * 1794048 * 2
        assert_eq!(e.bytes, Some(7_176_192.0));
    }

    #[test]
    fn conv1d_broadcast_padding_groups_and_no_strides() {
        let inp = conv_input(
            arg!([[2, 8, 10], [8, 1, 3], [], [], [], [], [], [], []]),
            &[
                "float",
                "float",
                "",
                "ScalarList",
                "ScalarList",
                "ScalarList",
                "Scalar",
                "ScalarList",
                "Scalar",
            ],
            None,
            &["", "", "", "[2]", "[1]", "", "False", "", "8"],
        );
        let e = evaluate("aten_conv", &inp, false).unwrap();
        // out = int((10 + 2 - 1*2 - 1)/2 + 1) = int(5.5) = 5 -> (2, 8, 5)
        // flops = 80 * 2*(1*3) = 480
        assert_eq!(e.flops, 480.0);
        // (prod(x)=160 + prod(W)=24 + prod(out)=80) * 4 = 264*4
        assert_eq!(e.bytes, Some(1_056.0));
        assert_eq!(param(&e, "stride").to_str(), "(2,)");
        assert_eq!(param(&e, "dilation").to_str(), "(1,)");
        assert_eq!(param(&e, "input_stride"), &Py::None);
        assert_eq!(param(&e, "groups"), &Py::Int(8));
        assert_eq!(param(&e, "convNd").to_str(), "conv1d");
        assert_eq!(e.compute_spec(), "matrix_fp32");
    }

    #[test]
    fn transposed_conv() {
        let inp = conv_input(
            arg!([[1, 4, 5, 5], [4, 2, 3, 3], [], [], [], [], [], [], []]),
            &[
                BF16,
                BF16,
                "",
                "ScalarList",
                "ScalarList",
                "ScalarList",
                "Scalar",
                "ScalarList",
                "Scalar",
            ],
            None,
            &[
                "", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[1, 1]", "1",
            ],
        );
        let e = evaluate("aten_conv", &inp, false).unwrap();
        // o = (5-1)*2 - 2*1 + 1*(3-1) + 1 + 1 = 10 -> out (1, W[1]=2, 10, 10)
        // flops = prod(x) * 2*prod(W[1:]) = 100 * 2*18 = 3600
        assert_eq!(e.flops, 3_600.0);
        // (prod(x)=100 + prod(W)=72 + prod(out)=200) * 2 = 744
        assert_eq!(e.bytes, Some(744.0));
        assert_eq!(param(&e, "transposed_conv"), &Py::Bool(true));
        let b = evaluate("aten_conv", &inp, true).unwrap();
        // input grad = 2*prod(W[1:]) * prod(x) = 36*100 = 3600
        // weight grad = 2*prod(W) * N * prod(x spatial) = 2*72*1*25 = 3600
        assert_eq!(b.flops, 7_200.0);
        // 2 * (200 + 72 + 100) * 2 = 1488
        assert_eq!(b.bytes, Some(1_488.0));
    }

    fn conv_bwd_input(d3: ArgValue) -> OpInput<'static> {
        let mut dims = vec![
            arg!([10, 64, 56, 56]),
            arg!([10, 64, 56, 56]),
            arg!([64, 64, 3, 3]),
            d3,
        ];
        dims.extend(std::iter::repeat_with(|| arg!([])).take(7));
        op_input(
            "aten::convolution_backward",
            ArgValue::list(dims),
            &[
                BF16,
                BF16,
                BF16,
                "ScalarList",
                "ScalarList",
                "ScalarList",
                "ScalarList",
                "Scalar",
                "ScalarList",
                "Scalar",
                "ScalarList",
            ],
            Some(arg!([
                [200704, 1, 3584, 64],
                [200704, 1, 3584, 64],
                [576, 1, 192, 64],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                []
            ])),
            &[
                "",
                "",
                "",
                "[0]",
                "[1, 1]",
                "[1, 1]",
                "[1, 1]",
                "False",
                "[0, 0]",
                "1",
                "[True, True, False]",
            ],
        )
    }

    #[test]
    fn convolution_backward_op() {
        let e = evaluate("aten_conv_bwd", &conv_bwd_input(arg!([])), false).unwrap();
        // out = (10, 64, 56, 56): prod = 2007040; 2*prod(W[1:]) = 2*576 = 1152
        // input grad = 1152 * 2007040 = 2312110080; weight grad = 2*36864*10*3136 = 2312110080
        assert_eq!(e.flops, 4_624_220_160.0);
        // 2 * (2007040 + 36864 + 2007040) * 2 = 16203776 bytes = 15.453125 MB
        assert_eq!(e.bytes, Some(16_203_776.0));
        assert_eq!(e.bytes.unwrap() / 1048576.0, 15.453125);
        assert_eq!(param(&e, "bias").to_str(), "[]");
        assert_eq!(param(&e, "input_stride").to_str(), "(200704, 1, 3584, 64)");
        // Same numbers when asked for the backward of the backward class.
        let b = evaluate("aten_conv_bwd", &conv_bwd_input(arg!([])), true).unwrap();
        assert_eq!((b.flops, b.bytes), (e.flops, e.bytes));

        // A bias_sizes shape: bias True; bias bytes are a raw element count.
        let e = evaluate("aten_conv_bwd", &conv_bwd_input(arg!([64])), false).unwrap();
        assert_eq!(param(&e, "bias"), &Py::Bool(true));
        // + prod(out) = 2007040 flops
        assert_eq!(e.flops, 4_626_227_200.0);
        // + prod(out) + out[1] = 2007040 + 64 (not x2)
        assert_eq!(e.bytes, Some(18_210_880.0));
    }

    #[test]
    fn failures() {
        // Mixed dtypes.
        let mut inp = vit_patch_conv();
        inp.types = strs(&[BF16, "float", BF16]);
        assert!(is_invalid(&evaluate("aten_conv", &inp, false)));
        // eval('') of the transposed flag.
        let mut inp = vit_patch_conv();
        inp.concrete = strs(&[
            "", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "", "[0, 0]", "1",
        ]);
        assert!(is_invalid(&evaluate("aten_conv", &inp, false)));
        // Rank-2 input.
        let inp = conv_input(
            arg!([[3, 4], [2, 3], [], [], [], [], [], [], []]),
            &["float", "float"],
            None,
            &["", "", "", "", "", "", "False", "", "1"],
        );
        assert!(evaluate("aten_conv", &inp, false).is_err());
        // Short filter / missing keys / zero stride never panic.
        let inp = conv_input(
            arg!([[1, 2, 5, 5], [2], [], [], [], [], [], [], []]),
            &["float", "float"],
            None,
            &["", "", "", "[0, 0]", "", "", "False", "", "1"],
        );
        assert!(evaluate("aten_conv", &inp, false).is_err());
        let inp = OpInput {
            name: "aten::convolution",
            ..Default::default()
        };
        assert!(evaluate("aten_conv", &inp, false).is_err());
        assert!(is_invalid(&evaluate("what", &vit_patch_conv(), false)));
        // A zero stride is a division by zero.
        let mut inp = vit_patch_conv();
        inp.concrete = strs(&[
            "", "", "", "[0, 0]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1",
        ]);
        assert!(evaluate("aten_conv", &inp, false).is_err());
    }

    #[test]
    fn fused_conv_bias_and_its_backward() {
        // x (2, 3, 8, 8), w (4, 3, 3, 3), bias (4); stride 1, padding 1
        // → out (2, 4, 8, 8) = 512 elements.
        let fwd = conv_input(
            arg!([[2, 3, 8, 8], [4, 3, 3, 3], [4], [], []]),
            &[BF16, BF16, BF16, "Scalar", "Scalar"],
            None,
            &["", "", "", "1", "1"],
        );
        let e = evaluate("ConvBiasReLU_", &fwd, false).unwrap();
        assert_eq!(param(&e, "stride"), &Py::ints(&[1, 1]));
        assert_eq!(param(&e, "bias"), &Py::Bool(true));
        // 512·2·27 + 512 = 28,160; (384 + 108 + 4 + 512)·2 = 2,016.
        assert_eq!((e.flops, e.bytes), (28_160.0, Some(2_016.0)));
        // The backward takes the forward's shapes: input grad 512·54 +
        // weight grad 108·256 + bias grad 512 = 55,808; bytes
        // 2·(512 + 108 + 384)·2 + 512 + 4 = 4,532.
        let mut bwd = OpInput {
            name: "ConvBiasReLU_Backward",
            ..Default::default()
        };
        assert!(evaluate("ConvBiasReLU_Backward", &bwd, false).is_err());
        bwd.forward = Some(Box::new(fwd));
        let e = evaluate("ConvBiasReLU_Backward", &bwd, false).unwrap();
        assert_eq!((e.flops, e.bytes), (55_808.0, Some(4_532.0)));
        assert_eq!(evaluate("ConvBiasReLU_Backward", &bwd, true), Ok(e));
    }
}
