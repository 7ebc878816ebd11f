//! Unary and binary elementwise models.
//!
//! Every argument read mirrors the Python access it replaces: a missing
//! args key (`KeyError`), a short list (`IndexError`) or a value of the
//! wrong kind (`TypeError`) becomes [`ModelError::Invalid`], the
//! reference's dropped row.

use crate::trace::ArgValue;

use super::pyval::{
    Lit, Rec, bpe, invalid, item, literal_eval, parse_int_list, precision, prod, shape_of, truthy,
    tuple_of,
};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Py};

/// Converts an exact integer count to the f64 the sheets hold.
pub(super) fn f(v: i128) -> f64 {
    v as f64
}

/// The core elementwise classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `aten_unary_elementwise`.
    Unary,
    /// `aten::replication_pad*`.
    ReplicationPad,
    /// `aten::upsample_nearest*`.
    UpsampleNearest,
    /// Primus-Turbo FP8 quantization.
    QuantizeFp8,
    /// Primus-Turbo MXFP4 dual quantization.
    QuantizeMxfp4Dual,
    /// `aten_binary_elementwise`.
    Binary,
    /// Liger's fused SiLU-multiply.
    LigerSiluMul,
}

/// Evaluates an elementwise model: `aten_unary_elementwise`,
/// `aten_replication_pad`, `aten_upsample_nearest`, `primus_turbo_quantize_fp8`,
/// `primus_turbo_quantize_mxfp4_dual` (UnaryElementwise) and
/// `aten_binary_elementwise`, `liger_silu_mul_function` (BinaryElementwise).
/// Other classes of these sheet families are not implemented. These models
/// have no backward: `bwd` gives [`ModelError::NotImplemented`] once the
/// arguments parse.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let a = Rec::new(input);
    let ev = match kind {
        Kind::Unary => unary_aten(&a)?,
        Kind::ReplicationPad => replication_pad(&a)?,
        Kind::UpsampleNearest => upsample_nearest(&a)?,
        Kind::QuantizeFp8 => quantize(&a, "c10::Float8_e4m3fnuz", false)?,
        Kind::QuantizeMxfp4Dual => quantize(&a, "c10::Float4_e2m1fn_x2", true)?,
        Kind::Binary => binary_aten(&a)?,
        Kind::LigerSiluMul => binary_liger(&a)?,
    };
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    Ok(ev)
}

/// The `UnaryElementwise` base: flops = nelems, bytes = nelems·(bpe_in + bpe_out).
fn unary_base(
    params: Vec<(&'static str, Py)>,
    nelems: i128,
    dtype_in: &str,
    dtype_out: Option<&str>,
) -> Evaluation {
    let bpe_in = bpe(Some(dtype_in));
    let bpe_out = match dtype_out {
        Some(d) => bpe(Some(d)),
        None => bpe_in,
    };
    let bytes = match (bpe_in, bpe_out) {
        (Some(i), Some(o)) => Some(f(nelems * i + nelems * o)),
        _ => None,
    };
    Evaluation {
        params,
        flops: f(nelems),
        bytes,
        maf: Some(Maf::Vector),
        precision: precision(Some(dtype_in)),
    }
}

fn dtype_pair(dtype_in: &str, dtype_out: Option<&str>) -> Py {
    Py::Tuple(vec![Py::Str(dtype_in.to_string()), Py::opt_str(dtype_out)])
}

fn unary_aten(a: &Rec) -> ModelResult<Evaluation> {
    let dims = a.dims()?;
    let op_shape_v = item(dims, 0, "Input Dims")?;
    let op_shape = tuple_of(op_shape_v)?;
    let dtype_in = a.ty(0)?;
    let stride_input = a.stride(0)?;
    let (dtype_out, stride_output) = if dims.len() > 1 && truthy(&dims[1]) {
        (Some(a.ty(1)?), a.stride(1)?)
    } else {
        (None, Py::None)
    };
    let nelems = prod(&shape_of(op_shape_v)?).count()?;
    let params = vec![
        ("op_shape", op_shape),
        ("dtype_in_out", dtype_pair(dtype_in, dtype_out)),
        ("stride_input", stride_input),
        ("stride_output", stride_output),
    ];
    Ok(unary_base(params, nelems, dtype_in, dtype_out))
}

/// A shape as a tuple of ints.
fn int_tuple(shape: &[i128]) -> ModelResult<Py> {
    shape
        .iter()
        .map(|&d| match i64::try_from(d) {
            Ok(v) => Ok(Py::Int(v)),
            Err(_) => invalid("shape entry too large"),
        })
        .collect::<ModelResult<Vec<Py>>>()
        .map(Py::Tuple)
}

/// Shape-changing unary ops (pad, upsample): flops = prod(output),
/// bytes = prod(input)·bpe + prod(output)·bpe.
fn resize_eval(
    params: Vec<(&'static str, Py)>,
    input: &[i128],
    output: &[i128],
    dtype: &str,
) -> ModelResult<Evaluation> {
    let n_in = prod(input).count()?;
    let n_out = prod(output).count()?;
    let b = bpe(Some(dtype));
    Ok(Evaluation {
        params,
        flops: f(n_out),
        bytes: b.map(|b| f(n_in * b + n_out * b)),
        maf: Some(Maf::Vector),
        precision: precision(Some(dtype)),
    })
}

fn replication_pad(a: &Rec) -> ModelResult<Evaluation> {
    let input = shape_of(a.dim(0)?)?;
    let padding = parse_int_list(a.ci(1)?)?;
    let mut output = input.clone();
    let rank = output.len() as i128;
    for (j, pair) in padding.chunks_exact(2).enumerate() {
        // Python list index `rank - 1 - j`: negative values count from the end.
        let mut idx = rank - 1 - j as i128;
        if idx < 0 {
            idx += rank;
        }
        if idx < 0 || idx >= rank {
            return invalid("padding has more pairs than the input has dimensions");
        }
        let slot = &mut output[idx as usize];
        *slot = match slot
            .checked_add(pair[0])
            .and_then(|v| v.checked_add(pair[1]))
        {
            Some(v) => v,
            None => return invalid("padded size too large"),
        };
    }
    let dtype = a.ty(0)?;
    let stride_input = a.stride(0)?;
    let params = vec![
        ("input_shape", int_tuple(&input)?),
        ("output_shape", int_tuple(&output)?),
        // A list in the reference (`[int(x) for x in …]`), printed `[…]`.
        (
            "padding",
            Py::List(padding.iter().map(|&p| Py::Int(p as i64)).collect()),
        ),
        ("op_shape", int_tuple(&output)?),
        ("dtype_in_out", dtype_pair(dtype, Some(dtype))),
        ("stride_input", stride_input),
        ("stride_output", Py::None),
    ];
    resize_eval(params, &input, &output, dtype)
}

fn upsample_nearest(a: &Rec) -> ModelResult<Evaluation> {
    let input = shape_of(a.dim(0)?)?;
    let sizes = literal_eval(a.ci(1)?)?;
    let Lit::Seq(sizes) = sizes else {
        return invalid("upsample output size is not a list");
    };
    let mut output: Vec<i128> = input.iter().take(2).copied().collect();
    for s in &sizes {
        match s {
            Lit::Int(i) => output.push(*i),
            _ => return invalid("upsample output size is not a list of ints"),
        }
    }
    let dtype = a.ty(0)?;
    let stride_input = a.stride(0)?;
    let params = vec![
        ("input_shape", int_tuple(&input)?),
        ("output_shape", int_tuple(&output)?),
        ("op_shape", int_tuple(&output)?),
        ("dtype_in_out", dtype_pair(dtype, Some(dtype))),
        ("stride_input", stride_input),
        ("stride_output", Py::None),
    ];
    resize_eval(params, &input, &output, dtype)
}

/// Primus quantize ops: input at slot 0, fixed output dtype. The MXFP4 dual
/// quantize replaces the bytes by its packed-output formula.
fn quantize(a: &Rec, dtype_out: &str, mxfp4: bool) -> ModelResult<Evaluation> {
    let op_shape_v = a.dim(0)?;
    let op_shape = tuple_of(op_shape_v)?;
    let dtype_in = a.ty(0)?;
    let stride_input = a.stride_or_none(0)?;
    let shape = shape_of(op_shape_v)?;
    let nelems = prod(&shape).count()?;
    let params = vec![
        ("op_shape", op_shape),
        ("dtype_in_out", dtype_pair(dtype_in, Some(dtype_out))),
        ("stride_input", stride_input),
        ("stride_output", Py::None),
    ];
    let mut ev = unary_base(params, nelems, dtype_in, Some(dtype_out));
    if mxfp4 {
        let [m, n] = shape[..] else {
            return invalid("quantize_mxfp4_dual expects a 2-D input");
        };
        ev.bytes = bpe(Some(dtype_in)).map(|b| {
            let mn = m * n;
            let packed = 2 * (mn + 1).div_euclid(2);
            let scales = m * (n + 31).div_euclid(32) + n * (m + 31).div_euclid(32);
            f(mn * b + packed + scales)
        });
    }
    Ok(ev)
}

/// Numpy-style broadcast of two shapes (ValueError when incompatible).
fn broadcast(s1: &[i128], s2: &[i128]) -> ModelResult<Vec<i128>> {
    let n = s1.len().max(s2.len());
    let pad = |s: &[i128]| -> Vec<i128> {
        let mut v = vec![1; n - s.len()];
        v.extend_from_slice(s);
        v
    };
    let (a, b) = (pad(s1), pad(s2));
    a.iter()
        .zip(&b)
        .map(|(&x, &y)| {
            if x != y && x != 1 && y != 1 {
                invalid(format!("shapes not broadcastable: {s1:?} and {s2:?}"))
            } else {
                Ok(x.max(y))
            }
        })
        .collect()
}

/// The `BinaryElementwise` base on parsed fields.
fn binary_base(
    params: Vec<(&'static str, Py)>,
    shapes: [&ArgValue; 2],
    dtypes: [&str; 2],
    dtype_out: Option<&str>,
) -> ModelResult<Evaluation> {
    let s1 = shape_of(shapes[0])?;
    let s2 = shape_of(shapes[1])?;
    let out = broadcast(&s1, &s2)?;
    let n1 = prod(&s1).count()?;
    let n2 = prod(&s2).count()?;
    let n_out = prod(&out).count()?;
    let bpe1 = bpe(Some(dtypes[0]));
    let bpe2 = bpe(Some(dtypes[1]));
    let bpe_out = match (dtype_out, bpe1, bpe2) {
        (Some(d), _, _) => bpe(Some(d)),
        (None, Some(b1), Some(b2)) if b1 != 0 && b2 != 0 => {
            if !s1.is_empty() && !s2.is_empty() {
                Some(b1.max(b2))
            } else {
                Some(b1)
            }
        }
        _ => None,
    };
    let bytes = match (bpe1, bpe2, bpe_out) {
        (Some(b1), Some(b2), Some(bo)) => Some(f(n1 * b1 + n2 * b2 + n_out * bo)),
        _ => None,
    };
    Ok(Evaluation {
        params,
        flops: f(n_out),
        bytes,
        maf: Some(Maf::Vector),
        precision: precision(Some(dtypes[0])),
    })
}

fn binary_aten(a: &Rec) -> ModelResult<Evaluation> {
    let dims = a.dims()?;
    let v1 = item(dims, 0, "Input Dims")?;
    let v2 = item(dims, 1, "Input Dims")?;
    let shape_in1 = tuple_of(v1)?;
    let shape_in2 = tuple_of(v2)?;
    let t1 = a.ty(0)?;
    let t2 = a.ty(1)?;
    let stride1 = a.stride(0)?;
    let stride2 = a.stride(1)?;
    let (t_out, stride_out) = if dims.len() > 2 && truthy(&dims[2]) {
        (Some(a.ty(2)?), a.stride(2)?)
    } else {
        (None, Py::None)
    };
    let params = vec![
        ("shape_in1", shape_in1),
        ("shape_in2", shape_in2),
        (
            "dtype_in1_in2_out",
            Py::Tuple(vec![
                Py::Str(t1.to_string()),
                Py::Str(t2.to_string()),
                Py::opt_str(t_out),
            ]),
        ),
        ("stride_input1", stride1),
        ("stride_input2", stride2),
        ("stride_output", stride_out),
    ];
    binary_base(params, [v1, v2], [t1, t2], t_out)
}

fn binary_liger(a: &Rec) -> ModelResult<Evaluation> {
    let dims = a.dims()?;
    let v1 = item(dims, 0, "Input Dims")?;
    let v2 = item(dims, 1, "Input Dims")?;
    let shape_a = tuple_of(v1)?;
    let shape_b = tuple_of(v2)?;
    let ta = a.ty(0)?;
    let tb = a.ty(1)?;
    let stride_a = a.stride(0)?;
    let stride_b = a.stride(1)?;
    let params = vec![
        ("shape_in1", shape_a),
        ("shape_in2", shape_b),
        (
            "dtype_in1_in2_out",
            Py::Tuple(vec![
                Py::Str(ta.to_string()),
                Py::Str(tb.to_string()),
                Py::None,
            ]),
        ),
        ("stride_input1", stride_a),
        ("stride_input2", stride_b),
        ("stride_output", Py::None),
    ];
    binary_base(params, [v1, v2], [ta, tb], None)
}

/// Builds an [`OpInput`] from JSON texts (tests of this family and its
/// neighbours). `strides` None leaves `Input Strides` absent.
#[cfg(test)]
mod tests {
    use super::super::test_support::{
        assert_keys, evaluate, is_invalid, param_text as param, test_input,
    };
    use super::*;

    const BF16: &str = "c10::BFloat16";

    #[test]
    fn unary_copy_same_dtype() {
        let i = test_input(
            "aten::copy_",
            "[[1, 5184, 768], [1, 5184, 768], []]",
            &[BF16, BF16, "Scalar"],
            Some("[[3981312, 768, 1], [3981312, 768, 1], []]"),
            &["", "", "False"],
        );
        let ev = evaluate("aten_unary_elementwise", &i, false).unwrap();
        assert_keys(&ev, "op_shape dtype_in_out stride_input stride_output");
        assert_eq!(param(&ev, "op_shape"), "(1, 5184, 768)");
        assert_eq!(
            param(&ev, "dtype_in_out"),
            "('c10::BFloat16', 'c10::BFloat16')"
        );
        assert_eq!(param(&ev, "stride_output"), "(3981312, 768, 1)");
        // nelems = 1*5184*768 = 3,981,312 flops.
        assert_eq!(ev.flops, 3_981_312.0);
        // bytes = 3,981,312*2 (in) + 3,981,312*2 (out) = 15,925,248 = 15.1875 MiB.
        assert_eq!(ev.bytes, Some(15_925_248.0));
        assert_eq!(ev.bytes.unwrap() / 1048576.0, 15.1875);
        assert_eq!(ev.compute_spec(), "vector_bf16");
    }

    #[test]
    fn unary_zero_dim_and_scalar_second_arg() {
        // 0-dim copy from a double scalar: dims[1] == [] gives no output dtype.
        let i = test_input(
            "aten::copy_",
            "[[], [], []]",
            &[BF16, "double", "Scalar"],
            Some("[[], [], []]"),
            &["", "", "False"],
        );
        let ev = evaluate("aten_unary_elementwise", &i, false).unwrap();
        assert_eq!(param(&ev, "op_shape"), "()");
        assert_eq!(param(&ev, "dtype_in_out"), "('c10::BFloat16', None)");
        assert_eq!(ev.params[3].1, Py::None);
        // prod(()) = 1 flop; bytes = 1*2 + 1*2 = 4.
        assert_eq!(ev.flops, 1.0);
        assert_eq!(ev.bytes, Some(4.0));

        // aten::pow with a Scalar exponent: (16,559,1024) float.
        let i = test_input(
            "aten::pow",
            "[[16, 559, 1024], []]",
            &["float", "Scalar"],
            Some("[[572416, 1024, 1], []]"),
            &["", "2"],
        );
        let ev = evaluate("aten_unary_elementwise", &i, false).unwrap();
        // N = 16*559*1024 = 9,158,656; bytes = N*4 + N*4 = 73,269,248 = 69.875 MiB.
        assert_eq!(ev.flops, 9_158_656.0);
        assert_eq!(ev.bytes.unwrap() / 1048576.0, 69.875);
        assert_eq!(ev.compute_spec(), "vector_fp32");
    }

    #[test]
    fn unary_unknown_sizes_and_precisions() {
        // bool has no size: bytes None, and no precision.
        let i = test_input(
            "aten::copy_",
            "[[1, 1, 5, 5], [1, 1, 5, 5], []]",
            &["bool", BF16, "Scalar"],
            Some("[[25, 25, 5, 1], [25, 25, 5, 1], []]"),
            &["", "", "False"],
        );
        let ev = evaluate("aten_unary_elementwise", &i, false).unwrap();
        assert_eq!(ev.flops, 25.0);
        assert_eq!(ev.bytes, None);
        assert_eq!(ev.compute_spec(), "");
        // int -> long int: sizes known (5*4 + 5*8 = 60 bytes), precision not.
        let i = test_input(
            "aten::copy_",
            "[[1, 5], [1, 5], []]",
            &["int", "long int", "Scalar"],
            Some("[[5, 1], [5, 1], []]"),
            &["", "", "False"],
        );
        let ev = evaluate("aten_unary_elementwise", &i, false).unwrap();
        assert_eq!(ev.bytes, Some(60.0));
        assert_eq!(ev.compute_spec(), "");
    }

    #[test]
    fn unary_failures() {
        let no_strides = test_input("aten::silu", "[[4, 4]]", &[BF16], None, &[""]);
        assert!(is_invalid(&evaluate(
            "aten_unary_elementwise",
            &no_strides,
            false
        )));
        let empty = OpInput::default();
        assert!(is_invalid(&evaluate(
            "aten_unary_elementwise",
            &empty,
            false
        )));
        let ok = test_input("aten::silu", "[[4, 4]]", &[BF16], Some("[[4, 1]]"), &[""]);
        assert_eq!(
            evaluate("aten_unary_elementwise", &ok, true).unwrap_err(),
            ModelError::NotImplemented
        );
    }

    #[test]
    fn upsample_nearest1d_timesformer() {
        let i = test_input(
            "aten::upsample_nearest1d",
            "[[1, 768, 8], [], []]",
            &[BF16, "ScalarList", ""],
            Some("[[6144, 1, 768], [], []]"),
            &["", "[128]", ""],
        );
        let ev = evaluate("aten_upsample_nearest", &i, false).unwrap();
        assert_keys(
            &ev,
            "input_shape output_shape op_shape dtype_in_out stride_input stride_output",
        );
        assert_eq!(param(&ev, "input_shape"), "(1, 768, 8)");
        assert_eq!(param(&ev, "output_shape"), "(1, 768, 128)");
        assert_eq!(param(&ev, "op_shape"), "(1, 768, 128)");
        assert_eq!(
            param(&ev, "dtype_in_out"),
            "('c10::BFloat16', 'c10::BFloat16')"
        );
        // flops = prod(output) = 768*128 = 98,304 = 9.8304e-05 GFLOPS.
        assert_eq!(ev.flops / 1e9, 9.8304e-05);
        // bytes = 6,144*2 + 98,304*2 = 208,896 = 0.19921875 MiB.
        assert_eq!(ev.bytes.unwrap() / 1048576.0, 0.19921875);
        // An empty output size literal does not parse.
        let bad = test_input(
            "aten::upsample_nearest2d",
            "[[1, 3, 4, 4], [], []]",
            &[BF16, "ScalarList", ""],
            Some("[[48, 16, 4, 1], [], []]"),
            &["", "", ""],
        );
        assert!(is_invalid(&evaluate("aten_upsample_nearest", &bad, false)));
    }

    #[test]
    fn replication_pad2d() {
        let i = test_input(
            "aten::replication_pad2d",
            "[[1, 3, 4, 5], []]",
            &["float", "ScalarList"],
            Some("[[60, 20, 5, 1], []]"),
            &["", "[1, 2, 3, 4]"],
        );
        let ev = evaluate("aten_replication_pad", &i, false).unwrap();
        assert_keys(
            &ev,
            "input_shape output_shape padding op_shape dtype_in_out stride_input stride_output",
        );
        // Pair 0 (1, 2) widens the last dim: 5+3 = 8; pair 1 (3, 4) widens
        // dim 2: 4+7 = 11.
        assert_eq!(param(&ev, "output_shape"), "(1, 3, 11, 8)");
        assert_eq!(param(&ev, "padding"), "[1, 2, 3, 4]");
        // flops = 3*11*8 = 264; bytes = 60*4 + 264*4 = 1,296.
        assert_eq!(ev.flops, 264.0);
        assert_eq!(ev.bytes, Some(1296.0));
    }

    #[test]
    fn primus_quantize() {
        let i = test_input(
            "primus_turbo::quantize_fp8_tensorwise",
            "[[4, 8], [], []]",
            &[BF16, "float", "float"],
            None,
            &["", "", ""],
        );
        let ev = evaluate("primus_turbo_quantize_fp8", &i, false).unwrap();
        assert_eq!(
            param(&ev, "dtype_in_out"),
            "('c10::BFloat16', 'c10::Float8_e4m3fnuz')"
        );
        assert_eq!(ev.params[2].1, Py::None);
        // 32 elements: 32*2 (bf16 in) + 32*1 (fp8 out) = 96 bytes.
        assert_eq!((ev.flops, ev.bytes), (32.0, Some(96.0)));

        let i = test_input(
            "primus_turbo::quantize_mxfp4_dual",
            "[[64, 48], []]",
            &[BF16, "Scalar"],
            Some("[[48, 1], []]"),
            &["", "1"],
        );
        let ev = evaluate("primus_turbo_quantize_mxfp4_dual", &i, false).unwrap();
        // M*N = 3,072: read 3,072*2 = 6,144; packed 2*((3,072+1)//2) = 3,072;
        // scales 64*ceil(48/32) + 48*ceil(64/32) = 128 + 96 = 224; total 9,440.
        assert_eq!((ev.flops, ev.bytes), (3072.0, Some(9440.0)));
        assert_eq!(ev.compute_spec(), "vector_bf16");
        let three_d = test_input(
            "primus::quantize_mxfp4_dual",
            "[[2, 64, 48]]",
            &[BF16],
            None,
            &[""],
        );
        assert!(is_invalid(&evaluate(
            "primus_turbo_quantize_mxfp4_dual",
            &three_d,
            false
        )));
    }

    #[test]
    fn binary_broadcast_examples() {
        // (1,5185,4096) × () with types (bf16, double): out bpe = bpe1 = 2.
        let i = test_input(
            "aten::mul",
            "[[1, 5185, 4096], []]",
            &[BF16, "double"],
            Some("[[21237760, 4096, 1], []]"),
            &["", "0.5"],
        );
        let ev = evaluate("aten_binary_elementwise", &i, false).unwrap();
        assert_keys(
            &ev,
            "shape_in1 shape_in2 dtype_in1_in2_out stride_input1 stride_input2 stride_output",
        );
        assert_eq!(param(&ev, "shape_in2"), "()");
        assert_eq!(
            param(&ev, "dtype_in1_in2_out"),
            "('c10::BFloat16', 'double', None)"
        );
        // N = 5185*4096 = 21,237,760; bytes = N*2 + 1*8 + N*2 = 84,951,048.
        assert_eq!(ev.flops, 21_237_760.0);
        assert_eq!(ev.bytes, Some(84_951_048.0));
        assert_eq!(ev.compute_spec(), "vector_bf16");

        // (1,5184,4) + (5184,4), (bf16, float): both tensors, out bpe max = 4.
        let i = test_input(
            "aten::add",
            "[[1, 5184, 4], [5184, 4], []]",
            &[BF16, "float", "Scalar"],
            Some("[[20736, 4, 1], [4, 1], []]"),
            &["", "", "1"],
        );
        let ev = evaluate("aten_binary_elementwise", &i, false).unwrap();
        // 20,736 elements each: 20,736*2 + 20,736*4 + 20,736*4 = 207,360.
        assert_eq!(ev.flops, 20_736.0);
        assert_eq!(ev.bytes, Some(207_360.0));

        // (5,) + () long/long: 5*8 + 1*8 + 5*8 = 88 bytes, no Compute Spec.
        let i = test_input(
            "aten::add_",
            "[[5], [], []]",
            &["long int", "long int", "Scalar"],
            Some("[[1], [], []]"),
            &["", "", "1"],
        );
        let ev = evaluate("aten_binary_elementwise", &i, false).unwrap();
        assert_eq!(param(&ev, "shape_in1"), "(5,)");
        assert_eq!(ev.bytes, Some(88.0));
        assert_eq!(ev.compute_spec(), "");
    }

    #[test]
    fn binary_output_slot_and_failures() {
        // A third tensor argument sets the output dtype: (4,) float + (4,)
        // float into half: 4*4 + 4*4 + 4*2 = 40 bytes.
        let i = test_input(
            "aten::add",
            "[[4], [4], [4]]",
            &["float", "float", "c10::Half"],
            Some("[[1], [1], [1]]"),
            &["", "", ""],
        );
        let ev = evaluate("aten_binary_elementwise", &i, false).unwrap();
        assert_eq!(param(&ev, "stride_output"), "(1,)");
        assert_eq!(ev.bytes, Some(40.0));
        // (3, 4) and (5, 4) do not broadcast.
        let i = test_input(
            "aten::mul",
            "[[3, 4], [5, 4]]",
            &["float", "float"],
            Some("[[4, 1], [4, 1]]"),
            &["", ""],
        );
        assert!(is_invalid(&evaluate("aten_binary_elementwise", &i, false)));
        // Broadcasting (3, 1) with (1, 4) gives 12 output elements:
        // bytes = 3*4 + 4*4 + 12*4 = 76.
        let i = test_input(
            "aten::mul",
            "[[3, 1], [1, 4]]",
            &["float", "float"],
            Some("[[1, 1], [4, 1]]"),
            &["", ""],
        );
        let ev = evaluate("aten_binary_elementwise", &i, false).unwrap();
        assert_eq!((ev.flops, ev.bytes), (12.0, Some(76.0)));
    }

    #[test]
    fn liger_silu_mul() {
        let i = test_input(
            "LigerSiLUMulFunction",
            "[[2, 3], [2, 3]]",
            &[BF16, BF16],
            Some("[[3, 1], [3, 1]]"),
            &["", ""],
        );
        let ev = evaluate("liger_silu_mul_function", &i, false).unwrap();
        assert_eq!(
            param(&ev, "dtype_in1_in2_out"),
            "('c10::BFloat16', 'c10::BFloat16', None)"
        );
        // 6 elements: 6*2 + 6*2 + 6*2 = 36 bytes.
        assert_eq!((ev.flops, ev.bytes), (6.0, Some(36.0)));
    }
}
