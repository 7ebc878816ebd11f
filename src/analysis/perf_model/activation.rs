//! Gated activations of aiter/vLLM/SGLang (`silu_and_mul`, `gelu_and_mul`,
//! `gelu_tanh_and_mul`: out = act(x[…, :d]) · x[…, d:]) on the
//! UnaryElementwise sheet, and ATOM's exponential-noise sampler
//! (`mixed_sample_outer_exponential`, its own `elementwise` sheet).
//!
//! The gated ops have `out` at slot 0 and the `2·d`-wide input at slot 1:
//! with n = numel(out), `flops = k·n` (k = 5 SiLU, 8 GELU, 10 tanh-GELU) and
//! `bytes = 2·n·b_in + n·b_out`. The sampler reads logits and noise `(T, V)`
//! and writes T int32 ids: `flops = 2·T·V`, `bytes = T·V·(b_logits +
//! b_noise) + 4·T`. None has a backward model.

use super::pyval::{
    Num, Rec, bpe, bpe_req, dim_at, forward_only, ipy, len_of, numel, precision, tuple_of,
};
use super::{Evaluation, Maf, ModelResult, OpInput, Py};

/// The activation classes: a gated activation with its FLOPs per element,
/// or the sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `act(x) * y` at this many FLOPs per output element.
    Gated(i128),
    /// `mixed_sample_outer_exponential`.
    Sampler,
}

/// A gated activation with `per_element` FLOPs per output element.
fn gated(r: Rec, per_element: i128) -> ModelResult<Evaluation> {
    let out = r.dim(0)?;
    let op_shape = tuple_of(out)?;
    let (dtype_in, dtype_out) = (r.ty(1)?, r.ty(0)?);
    let params = vec![
        ("op_shape", op_shape),
        (
            "dtype_in_out",
            Py::Tuple(vec![Py::Str(dtype_in.into()), Py::Str(dtype_out.into())]),
        ),
        ("stride_input", r.stride(1)?),
        ("stride_output", r.stride(0)?),
    ];
    let n = numel(out)?;
    let flops = Num::I(per_element).mul(n);
    let bytes = Num::I(2)
        .mul(n)
        .mul(bpe_req(Some(dtype_in))?)
        .add(n.mul(bpe_req(Some(dtype_out))?));
    Ok(Evaluation {
        params,
        flops: flops.f64(),
        bytes: Some(bytes.f64()),
        maf: Some(Maf::Vector),
        precision: precision(Some(dtype_in)),
    })
}

/// The exponential-noise sampler: logits `(T, V)` at slot 1, noise at 2.
fn sampler(r: Rec) -> ModelResult<Evaluation> {
    r.dims()?;
    let types = r.types()?;
    let logits = r.dim(1)?;
    tuple_of(logits)?;
    let len = len_of(logits)?;
    let t = if len >= 1 { dim_at(logits, 0)? } else { 1 };
    let v = if len >= 2 { dim_at(logits, 1)? } else { 1 };
    let dl = types.get(1).map_or("c10::bfloat16", String::as_str);
    let dn = types.get(2).map_or("float", String::as_str);
    let params = vec![
        ("T", ipy(t)),
        ("V", ipy(v)),
        ("dtype_logits", Py::Str(dl.into())),
        ("dtype_noise", Py::Str(dn.into())),
    ];
    let tv = Num::I(t).mul(v);
    let bytes = match (bpe(Some(dl)).map(Num::I), bpe(Some(dn)).map(Num::I)) {
        (Some(bl), Some(bn)) => Some(tv.mul(bl).add(tv.mul(bn)).add(Num::I(t).mul(4))),
        _ => None,
    };
    Ok(Evaluation {
        params,
        flops: Num::I(2).mul(tv).f64(),
        bytes: bytes.map(Num::f64),
        maf: Some(Maf::Vector),
        precision: precision(Some(dl)),
    })
}

/// Evaluates an activation class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    let e = match kind {
        Kind::Gated(per_element) => gated(r, per_element)?,
        Kind::Sampler => sampler(r)?,
    };
    forward_only(bwd, e)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};

    const BF: &str = "c10::BFloat16";

    #[test]
    fn gated_activations() {
        // out (32, 12288), input (32, 24576), bf16: n = 393,216.
        let i = test_input(
            "sgl_kernel::silu_and_mul",
            "[[32, 12288], [32, 24576]]",
            &[BF, BF],
            Some("[[12288, 1], [24576, 1]]"),
            &["", ""],
        );
        let e = evaluate("sgl_kernel_silu_and_mul", &i, false).unwrap();
        assert_eq!(e.params[0].1.to_str(), "(32, 12288)");
        assert_eq!(e.params[2].1.to_str(), "(24576, 1)");
        // 5·393,216 = 1,966,080; 2·393,216·2 + 393,216·2 = 2,359,296.
        assert_eq!((e.flops, e.bytes), (1_966_080.0, Some(2_359_296.0)));
        assert_eq!(e.compute_spec(), "vector_bf16");
        assert_eq!(
            evaluate("aiter_gelu_and_mul", &i, false).unwrap().flops,
            3_145_728.0
        );
        assert_eq!(
            evaluate("aiter_gelu_tanh_and_mul", &i, false)
                .unwrap()
                .flops,
            3_932_160.0
        );
        // An fp32 (split-K) input: 2·n·4 + n·2.
        let i = test_input(
            "aiter::silu_and_mul",
            "[[4, 256], [4, 512]]",
            &[BF, "float"],
            Some("[[256, 1], [512, 1]]"),
            &[],
        );
        let e = evaluate("aiter_silu_and_mul", &i, false).unwrap();
        assert_eq!(e.bytes, Some(10_240.0));
        assert_eq!(e.compute_spec(), "vector_fp32");
    }

    #[test]
    fn exponential_sampler() {
        // logits (8, 1000) bf16, noise fp32: 2·8,000 FLOPs;
        // 8,000·2 + 8,000·4 + 8·4 = 48,032 bytes.
        let i = test_input(
            "aiter::mixed_sample_outer_exponential",
            "[[8], [8, 1000], [8, 1000]]",
            &["int", BF, "float"],
            None,
            &[],
        );
        let e = evaluate("mixed_sample_outer_exponential", &i, false).unwrap();
        assert_eq!((e.flops, e.bytes), (16_000.0, Some(48_032.0)));
        assert_eq!(e.params[2].1.to_str(), "c10::BFloat16");
    }
}
