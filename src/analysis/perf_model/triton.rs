//! Compiled Triton kernels of torch.compile (`triton_poi_*`, `triton_red_*`,
//! `triton_per_*` ops), modelled in `unified_perf_summary` only, as the
//! reference's trace-argument model does it:
//!
//! * the fused ops come from the name `triton_(poi|red|per)_fused_<ops>_<n>`:
//!   `<ops>` is split at `_` into tokens and segmented into names of
//!   [`KNOWN_ATEN_OPS`]; of the segmentations, the one that takes the longest
//!   known name ending at each point, walking from the right, wins. A name
//!   that does not fully segment (or does not match) has no ops but is
//!   still modelled;
//! * xnumel and rnumel are the last two Concrete Inputs that parse as ints
//!   for reductions (`red`/`per`) with at least two of them, otherwise the
//!   last one and 1; no int at all means no model;
//! * FLOPs = Σ [`flops_per_element`] of the ops × xnumel × rnumel (an op
//!   outside that table counts 0);
//! * bytes = Σ elements × bytes of every tensor argument whose dtype is one
//!   of the `c10::` names of [`c10_dtype_bytes`] (other dtypes, `float`
//!   included, count 0 and never stop the model), plus, for pointwise
//!   kernels, one more xnumel elements of the first tensor's size;
//! * Compute Spec `vector_<dtype>` with the first counted tensor's dtype
//!   name lower-cased (`c10::BFloat16` → `bfloat16`, `c10::Half` → `half`),
//!   empty when no tensor was counted.

use super::known_aten_ops::KNOWN_ATEN_OPS;
use super::pyval::{int_of, truthy};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Precision, Py};
use crate::trace::ArgValue;

/// The reference's FLOPs per element of the fused aten ops it knows (every
/// other op counts 0).
pub fn flops_per_element(op: &str) -> u32 {
    match op {
        "add" | "sub" | "mul" | "div" | "relu" | "mean" | "sum" | "abs" | "neg" | "ne" | "eq"
        | "lt" | "gt" => 1,
        "pow" | "sqrt" | "rsqrt" | "var" | "reciprocal" => 2,
        "exp" | "log" | "sigmoid" | "tanh" | "silu" => 4,
        "gelu" => 8,
        // `_to_copy`, `copy_`, `clone`, `embedding`: memory only.
        _ => 0,
    }
}

/// Bytes per element of the `c10::` dtype names the reference counts; the
/// trace's plain names (`float`, `long int`, …) are not among them.
pub fn c10_dtype_bytes(dtype: &str) -> Option<(u32, &'static str)> {
    Some(match dtype {
        "c10::BFloat16" => (2, "bfloat16"),
        "c10::Half" => (2, "half"),
        "c10::Float" => (4, "float"),
        "c10::Double" => (8, "double"),
        "c10::Byte" => (1, "byte"),
        "c10::Char" => (1, "char"),
        "c10::Int" => (4, "int"),
        "c10::Long" => (8, "long"),
        _ => return None,
    })
}

/// True when `op` is one of the known aten op names.
pub fn is_known_op(op: &str) -> bool {
    KNOWN_ATEN_OPS.binary_search(&op).is_ok()
}

/// The kernel kind and the `<ops>` part of `triton_<kind>_fused_<ops>_<n>`
/// (Python `re.match` of `triton_(?:poi|red|per)_fused_(.+)_(\d+)$`).
fn fused_body(name: &str) -> Option<&str> {
    let rest = [
        "triton_poi_fused_",
        "triton_red_fused_",
        "triton_per_fused_",
    ]
    .iter()
    .find_map(|p| name.strip_prefix(p))?;
    // `$` also matches before a final newline; `.` never matches one.
    let rest = rest.strip_suffix('\n').unwrap_or(rest);
    if rest.contains('\n') {
        return None;
    }
    let (body, index) = rest.rsplit_once('_')?;
    let digits = !index.is_empty() && index.bytes().all(|c| c.is_ascii_digit());
    (digits && !body.is_empty()).then_some(body)
}

/// The fused aten op names of a compiled kernel name (without the `aten.`
/// prefix), empty when the name does not match or does not segment.
pub fn fused_ops(name: &str) -> Vec<String> {
    let Some(body) = fused_body(name) else {
        return Vec::new();
    };
    let tokens: Vec<&str> = body.split('_').collect();
    let n = tokens.len();
    // reachable[i]: tokens[..i] segment fully; longest[i]: the start of the
    // longest known name ending at i whose start is reachable.
    let mut reachable = vec![false; n + 1];
    let mut longest: Vec<Option<usize>> = vec![None; n + 1];
    reachable[0] = true;
    for i in 1..=n {
        for j in 0..i {
            if reachable[j] && is_known_op(&tokens[j..i].join("_")) {
                reachable[i] = true;
                longest[i] = Some(j);
                break; // the smallest start is the longest name
            }
        }
    }
    if !reachable[n] {
        return Vec::new();
    }
    let mut ops = Vec::new();
    let mut end = n;
    while end > 0 {
        let Some(start) = longest[end] else {
            return Vec::new();
        };
        ops.push(tokens[start..end].join("_"));
        end = start;
    }
    ops.reverse();
    ops
}

/// Python `int(text)` of a Concrete Input, None when it does not parse.
fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    let ok = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_');
    if !ok {
        return None;
    }
    let v: i64 = digits.replace('_', "").parse().ok()?;
    Some(if t.starts_with('-') { -v } else { v })
}

/// What the reference reads from the trace arguments of a compiled kernel.
#[derive(Debug, Clone, PartialEq)]
struct Meta {
    ops: Vec<String>,
    xnumel: i64,
    rnumel: i64,
    bytes: f64,
    dtype: Option<Precision>,
}

/// `math.prod` of a flat shape of ints; anything else fails like the
/// reference's arithmetic on it would.
fn elements(shape: &ArgValue) -> ModelResult<i128> {
    let bad = || ModelError::Invalid(format!("cannot take the product of {shape}"));
    let items = shape.as_list().ok_or_else(bad)?;
    items.iter().try_fold(1i128, |acc, x| {
        let v = int_of(x).map_err(|_| bad())?;
        acc.checked_mul(v).ok_or_else(bad)
    })
}

/// xnumel and rnumel from the Concrete Inputs, None without an int.
fn numels(concrete: &[String], reduction: bool) -> Option<(i64, i64)> {
    let ints: Vec<i64> = concrete
        .iter()
        .filter(|v| !v.is_empty())
        .filter_map(|v| parse_int(v))
        .collect();
    match ints.as_slice() {
        [.., x, r] if reduction => Some((*x, *r)),
        [.., x] => Some((*x, 1)),
        [] => None,
    }
}

/// The reference's trace-argument metadata; Ok(None) when the op lacks it.
fn meta(input: &OpInput) -> ModelResult<Option<Meta>> {
    let (Some(dims), Some(types), Some(concrete)) = (input.dims, &input.types, &input.concrete)
    else {
        return Ok(None);
    };
    if dims.is_empty() || types.is_empty() || concrete.is_empty() {
        return Ok(None);
    }
    let name = input.name;
    let reduction = name.starts_with("triton_red_") || name.starts_with("triton_per_");
    let Some((xnumel, rnumel)) = numels(concrete, reduction) else {
        return Ok(None);
    };
    let mut total: i128 = 0;
    let mut first_size: Option<i128> = None;
    let mut dtype = None;
    for (shape, ty) in dims.iter().zip(types) {
        if ty == "Scalar" || !truthy(shape) {
            continue;
        }
        let size = c10_dtype_bytes(ty);
        let bpe = size.map_or(0, |(b, _)| b as i128);
        first_size.get_or_insert(bpe);
        if dtype.is_none() && bpe > 0 {
            dtype = size.map(|(_, d)| Precision::C10(d));
        }
        total += elements(shape)? * bpe;
    }
    let mut bytes = total as f64;
    if name.starts_with("triton_poi_")
        && let Some(b) = first_size
    {
        bytes += (b * xnumel as i128) as f64;
    }
    Ok(Some(Meta {
        ops: fused_ops(name),
        xnumel,
        rnumel,
        bytes,
        dtype,
    }))
}

/// The reference's `can_model`: the op records shapes, types and at least
/// one integer Concrete Input.
pub fn can_model(input: &OpInput) -> bool {
    matches!(meta(input), Ok(Some(_)))
}

/// Evaluates a compiled Triton kernel op. Without the trace metadata the
/// reference has no model ([`ModelError::NotImplemented`]).
pub fn evaluate(input: &OpInput) -> ModelResult<Evaluation> {
    let m = meta(input)?.ok_or(ModelError::NotImplemented)?;
    let per_element: u64 = m.ops.iter().map(|o| flops_per_element(o) as u64).sum();
    let flops = per_element as i128 * m.xnumel as i128 * m.rnumel as i128;
    let fused = m
        .ops
        .iter()
        .map(|o| format!("aten.{o}"))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Evaluation {
        params: vec![
            ("fused_ops", Py::Str(fused)),
            ("xnumel", Py::Int(m.xnumel)),
            ("rnumel", Py::Int(m.rnumel)),
        ],
        flops: flops as f64,
        bytes: Some(m.bytes),
        maf: Some(Maf::Vector),
        precision: m.dtype,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::arr;
    use super::*;
    use crate::test_support::arg_value;

    fn input<'a>(name: &'a str, dims: &str, types: &[&str], ci: &[&str]) -> OpInput<'a> {
        OpInput {
            name,
            dims: arr(arg_value(dims)),
            types: Some(types.iter().map(|s| s.to_string()).collect()),
            concrete: Some(ci.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        }
    }

    #[test]
    fn known_op_list_is_sorted_and_complete() {
        assert_eq!(KNOWN_ATEN_OPS.len(), 960);
        assert!(KNOWN_ATEN_OPS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_known_op("_unsafe_view") && is_known_op("add") && is_known_op("zeta"));
        assert!(!is_known_op("unsafe") && !is_known_op("view_add"));
    }

    #[test]
    fn splits_fused_names_against_known_ops() {
        // `_unsafe_view` is tokens ["", "unsafe", "view"]: only the whole
        // three-token name is known.
        assert_eq!(
            fused_ops("triton_red_fused__unsafe_view_add_mean_mul_pow_rsqrt_1"),
            ["_unsafe_view", "add", "mean", "mul", "pow", "rsqrt"]
        );
        // `native_layer_norm` beats `native`? (`native` is not an op) and
        // `layer_norm`: the longest name ending at the end wins.
        assert_eq!(
            fused_ops("triton_poi_fused_native_layer_norm_0"),
            ["native_layer_norm"]
        );
        // `clamp_min` (known) is preferred to `clamp` + `min` (both known).
        assert_eq!(fused_ops("triton_poi_fused_clamp_min_3"), ["clamp_min"]);
        // An unknown token stops the segmentation: no ops at all.
        assert!(fused_ops("triton_poi_fused_add_frobnicate_0").is_empty());
        // No fused_ prefix or no trailing index: no match.
        assert!(fused_ops("triton_poi_add_0").is_empty());
        assert!(fused_ops("triton_poi_fused_add").is_empty());
        assert!(fused_ops("triton_tem_fused_mm_0").is_empty());
    }

    #[test]
    fn pointwise_kernel_counts_inputs_and_one_output() {
        // (8,4096,8192) and (32768,8192) bf16: 2 × 2^28 elements × 2 B, plus
        // xnumel = 2^28 more elements of the first tensor's 2 B:
        // 3 × 2^29 B = 1536 MiB. FLOPs: (mul 1 + silu 4) × 2^28 = 1.342e9.
        let i = input(
            "triton_poi_fused__unsafe_view_mul_silu_2",
            "[[8, 4096, 8192], [32768, 8192], []]",
            &["c10::BFloat16", "c10::BFloat16", "Scalar"],
            &["", "", "268435456"],
        );
        let e = evaluate(&i).unwrap();
        assert_eq!(e.flops, 5.0 * 268435456.0);
        assert_eq!(e.bytes, Some(1536.0 * 1048576.0));
        assert_eq!(e.compute_spec(), "vector_bfloat16");
        assert_eq!(
            e.params[0].1.to_str(),
            "aten._unsafe_view, aten.mul, aten.silu"
        );
        assert_eq!(e.params[1].1, Py::Int(268435456));
        assert_eq!(e.params[2].1, Py::Int(1));
    }

    #[test]
    fn reduction_kernel_counts_inputs_only() {
        // Tensors: 2^26 + 2048 + 2^26 bf16 elements × 2 B = 256 MiB + 4 KiB
        // = 256.00390625 MiB. FLOPs: (add 1 + mean 1 + mul 1 + pow 2 +
        // rsqrt 2) × 32768 × 2048 = 7 × 2^26 = 469,762,048.
        let i = input(
            "triton_red_fused_add_mean_mul_pow_rsqrt_0",
            "[[8, 4096, 2048], [2048], [8, 4096, 2048], [], []]",
            &[
                "c10::BFloat16",
                "c10::BFloat16",
                "c10::BFloat16",
                "Scalar",
                "Scalar",
            ],
            &["", "", "", "32768", "2048"],
        );
        let e = evaluate(&i).unwrap();
        assert_eq!(e.flops, 469_762_048.0);
        assert_eq!(e.bytes, Some(256.00390625 * 1048576.0));
        assert_eq!(e.params[1].1, Py::Int(32768));
        assert_eq!(e.params[2].1, Py::Int(2048));
    }

    #[test]
    fn unknown_dtypes_count_zero_bytes_and_unknown_ops_zero_flops() {
        // `float` and `int` are not c10 names: 0 bytes each; the bf16
        // (32, 2880) tensor counts 92,160 × 2 = 184,320 B, and it gives the
        // dtype. Pointwise extra: first counted tensor is the `int` one
        // (0 B/elem) → + 0. `index_select` has no FLOPs entry → 0 FLOPs.
        let i = input(
            "triton_poi_fused_index_select_0",
            "[[32], [32, 2880], [131072, 64]]",
            &["int", "c10::BFloat16", "float"],
            &["", "", "", "92160"],
        );
        let e = evaluate(&i).unwrap();
        assert_eq!(e.flops, 0.0);
        assert_eq!(e.bytes, Some(184_320.0));
        assert_eq!(e.compute_spec(), "vector_bfloat16");
        assert_eq!(e.params[0].1.to_str(), "aten.index_select");
        // Only unknown dtypes: no Compute Spec, still modelled.
        let f = input("triton_poi_fused_add_0", "[[4]]", &["float"], &["4"]);
        let e = evaluate(&f).unwrap();
        assert_eq!((e.flops, e.bytes), (4.0, Some(0.0)));
        assert_eq!(e.compute_spec(), "");
    }

    #[test]
    fn element_counts_come_from_the_last_integer_inputs() {
        // A reduction with a single int falls back to (xnumel, 1); texts
        // that are not ints are skipped; half precision prints as `half`.
        let i = input(
            "triton_per_fused_sum_1",
            "[[64, 128], [], []]",
            &["c10::Half", "Scalar", "Scalar"],
            &["", "1e-05", "64"],
        );
        let e = evaluate(&i).unwrap();
        assert_eq!(
            (e.params[1].1.clone(), e.params[2].1.clone()),
            (Py::Int(64), Py::Int(1))
        );
        // sum 1 FLOP × 64 × 1; bytes 8192 × 2 (no pointwise extra).
        assert_eq!((e.flops, e.bytes), (64.0, Some(16384.0)));
        assert_eq!(e.compute_spec(), "vector_half");
        // No int at all, or no shapes: the reference cannot model it.
        assert!(!can_model(&input(
            "triton_poi_fused_add_0",
            "[[4]]",
            &["float"],
            &[""]
        )));
        assert!(!can_model(&input(
            "triton_poi_fused_add_0",
            "[]",
            &[],
            &["4"]
        )));
        assert_eq!(
            evaluate(&input(
                "triton_poi_fused_add_0",
                "[[4]]",
                &["float"],
                &["x"]
            )),
            Err(ModelError::NotImplemented)
        );
    }
}
