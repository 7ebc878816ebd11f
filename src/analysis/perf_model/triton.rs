//! Compiled Triton kernels of torch.compile (`triton_poi_*`, `triton_red_*`,
//! `triton_per_*` ops), modelled in `unified_perf_summary` only.
//!
//! The reference's model is not specified beyond its outline (spec 03 §7);
//! this is our reconstruction, checked against the reference's rows of
//! `corpus/pytorch/mi300_torch_compile_triton` (docs/deviations.md):
//! * the fused name (`triton_<kind>_fused_<ops>_<n>`) is split into aten ops,
//!   preferring the longest known op names;
//! * FLOPs = (sum of per-element FLOPs of those ops) × xnumel × rnumel, where
//!   xnumel (and rnumel for reductions) are the trailing Concrete Inputs;
//! * bytes = every tensor argument once, plus, for pointwise kernels, one
//!   output of xnumel elements;
//! * Compute Spec `vector_<dtype>` from the first tensor's dtype.

use super::{Evaluation, ModelError, ModelResult, OpInput, Py, bytes_per_element};
use crate::trace::ArgValue;

/// aten op names that fused kernel names are made of, with their FLOPs per
/// element (0 for views and copies).
const OPS: &[(&str, u32)] = &[
    ("_unsafe_view", 0),
    ("view", 0),
    ("reshape", 0),
    ("permute", 0),
    ("transpose", 0),
    ("expand", 0),
    ("squeeze", 0),
    ("unsqueeze", 0),
    ("slice", 0),
    ("select", 0),
    ("clone", 0),
    ("copy", 0),
    ("_to_copy", 0),
    ("cat", 0),
    ("stack", 0),
    ("index", 0),
    ("gather", 0),
    ("scatter", 0),
    ("embedding", 0),
    ("full", 0),
    ("zeros", 0),
    ("ones", 0),
    ("fill", 0),
    ("constant_pad_nd", 0),
    ("split", 0),
    ("t", 0),
    ("add", 1),
    ("sub", 1),
    ("mul", 1),
    ("div", 1),
    ("neg", 1),
    ("abs", 1),
    ("maximum", 1),
    ("minimum", 1),
    ("clamp", 1),
    ("clamp_min", 1),
    ("clamp_max", 1),
    ("relu", 1),
    ("threshold_backward", 1),
    ("where", 1),
    ("eq", 1),
    ("ne", 1),
    ("lt", 1),
    ("le", 1),
    ("gt", 1),
    ("ge", 1),
    ("bitwise_and", 1),
    ("bitwise_or", 1),
    ("logical_not", 1),
    ("sum", 1),
    ("mean", 2),
    ("amax", 1),
    ("amin", 1),
    ("max", 1),
    ("min", 1),
    ("var", 3),
    ("pow", 1),
    ("sqrt", 1),
    ("rsqrt", 2),
    ("reciprocal", 1),
    ("exp", 1),
    ("exp2", 1),
    ("log", 1),
    ("log1p", 1),
    ("sigmoid", 3),
    ("silu", 4),
    ("tanh", 5),
    ("gelu", 8),
    ("erf", 5),
    ("softmax", 5),
    ("_softmax", 5),
    ("_log_softmax", 5),
    ("native_layer_norm", 8),
    ("native_dropout", 2),
    ("rand", 1),
    ("randn", 1),
    ("sin", 1),
    ("cos", 1),
    ("addmm", 2),
    ("mm", 2),
    ("bmm", 2),
];

fn op_flops(op: &str) -> Option<u32> {
    OPS.iter().find(|(n, _)| *n == op).map(|(_, f)| *f)
}

/// Kernel kind and fused op names of `triton_<kind>_fused_<ops>_<n>`.
fn split_name(name: &str) -> Option<(&str, Vec<String>)> {
    let rest = name.strip_prefix("triton_")?;
    let (kind, rest) = rest.split_once('_')?;
    let body = rest.strip_prefix("fused_").unwrap_or(rest);
    // Drop the trailing kernel index.
    let body = match body.rsplit_once('_') {
        Some((b, n)) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => b,
        _ => body,
    };
    let tokens: Vec<&str> = body.split('_').collect();
    // Dynamic programming over token positions: fewest segments, i.e. the
    // longest known op names; an unknown token stands for itself.
    let n = tokens.len();
    let mut best: Vec<Option<(usize, usize)>> = vec![None; n + 1];
    best[0] = Some((0, 0));
    for i in 0..n {
        let Some((count, _)) = best[i] else { continue };
        for j in i + 1..=n {
            let seg = tokens[i..j].join("_");
            let known = op_flops(&seg).is_some() || (j == i + 1 && !seg.is_empty());
            if known && best[j].is_none_or(|(c, _)| count + 1 < c) {
                best[j] = Some((count + 1, i));
            }
        }
    }
    let mut ops = Vec::new();
    let mut j = n;
    while j > 0 {
        let (_, i) = best[j]?;
        ops.push(tokens[i..j].join("_"));
        j = i;
    }
    ops.reverse();
    Some((kind, ops))
}

/// The dtype name of Compute Spec for Triton kernels.
fn dtype_name(t: &str) -> Option<&'static str> {
    Some(match t.to_ascii_lowercase().as_str() {
        "c10::bfloat16" => "bfloat16",
        "c10::half" => "float16",
        "float" => "float32",
        "double" => "float64",
        _ => return None,
    })
}

fn trailing_ints(ci: &[String], k: usize) -> Option<Vec<i64>> {
    if ci.len() < k {
        return None;
    }
    ci[ci.len() - k..]
        .iter()
        .map(|s| s.parse::<i64>().ok())
        .collect()
}

/// The reference's `can_model`: the op records shapes, types and the
/// trailing element counts.
pub fn can_model(input: &OpInput) -> bool {
    evaluate(input).is_ok()
}

/// Evaluates a compiled Triton kernel op.
pub fn evaluate(input: &OpInput) -> ModelResult<Evaluation> {
    let invalid = |m: &str| ModelError::Invalid(m.to_string());
    let (kind, ops) = split_name(input.name).ok_or_else(|| invalid("not a triton kernel name"))?;
    let (dims, types, ci) = match (&input.dims, &input.types, &input.concrete) {
        (Some(d), Some(t), Some(c)) => (d, t, c),
        _ => return Err(invalid("no recorded shapes")),
    };
    let reduction = kind == "red" || kind == "per";
    let counts = trailing_ints(ci, if reduction { 2 } else { 1 })
        .ok_or_else(|| invalid("no element counts"))?;
    let xnumel = counts[0];
    let rnumel = if reduction { counts[1] } else { 1 };
    let per_elem: u64 = ops.iter().map(|o| op_flops(o).unwrap_or(1) as u64).sum();
    let flops = per_elem as f64 * xnumel as f64 * rnumel as f64;
    let mut bytes = 0.0;
    let mut first_type: Option<&str> = None;
    for (d, t) in dims.iter().zip(types) {
        let ArgValue::List(shape) = d else {
            continue;
        };
        if shape.is_empty() {
            continue; // scalars
        }
        let elems: f64 = shape.iter().map(|x| x.as_f64().unwrap_or(0.0)).product();
        let bpe = bytes_per_element(Some(t)).ok_or_else(|| invalid("unknown dtype"))?;
        bytes += elems * bpe;
        first_type.get_or_insert(t);
    }
    let first_type = first_type.ok_or_else(|| invalid("no tensor argument"))?;
    if !reduction {
        bytes += xnumel as f64 * bytes_per_element(Some(first_type)).unwrap_or(0.0);
    }
    let fused = ops
        .iter()
        .map(|o| format!("aten.{o}"))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Evaluation {
        params: vec![
            ("fused_ops", Py::Str(fused)),
            ("xnumel", Py::Int(xnumel)),
            ("rnumel", Py::Int(rnumel)),
        ],
        flops,
        bytes: Some(bytes),
        maf: Some("vector"),
        precision: dtype_name(first_type),
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
            strides: None,
            concrete: Some(ci.iter().map(|s| s.to_string()).collect()),
            kernel_names: vec![],
        }
    }

    #[test]
    fn splits_fused_names_into_longest_known_ops() {
        let (kind, ops) =
            split_name("triton_red_fused__unsafe_view_add_mean_mul_pow_rsqrt_1").unwrap();
        assert_eq!(kind, "red");
        assert_eq!(ops, ["_unsafe_view", "add", "mean", "mul", "pow", "rsqrt"]);
        let (_, ops) = split_name("triton_poi_fused_native_layer_norm_0").unwrap();
        assert_eq!(ops, ["native_layer_norm"]);
    }

    #[test]
    fn pointwise_kernel_counts_inputs_and_one_output() {
        // (8,4096,8192) and (32768,8192) bf16 = 2 × 2^28 elements × 2 B, plus
        // an output of xnumel = 2^28 elements × 2 B: 3 × 512 MiB.
        // FLOPs: mul 1 + silu 4 per element × 2^28.
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
    }

    #[test]
    fn reduction_kernel_counts_inputs_only() {
        // 128 MiB + 4 KiB + 128 MiB of bf16 tensors; xnumel 32768 × rnumel 2048
        // elements × (add 1 + mean 2 + mul 1 + pow 1 + rsqrt 2) FLOPs.
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
        assert_eq!(e.flops, 7.0 * 32768.0 * 2048.0);
        assert_eq!(e.bytes, Some(256.00390625 * 1048576.0));
        assert!(!can_model(&input(
            "triton_poi_fused_add_0",
            "[[4]]",
            &["float"],
            &[""]
        )));
    }
}
