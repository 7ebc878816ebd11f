//! Fused cross-entropy (`CrossEntropyFunction`): online softmax plus the
//! negative log-likelihood over logits `(batch, …, vocab)`:
//! `flops = 5·batch·vocab`, `bytes = numel(logits)·b + 8·batch + 4·batch`
//! (int64 targets in, fp32 loss out; b the logits' element size, 2 when
//! unknown). No backward model.

use super::pyval::{Num, Rec, dim_at, ipy, numel};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Py};

/// Evaluates `cross_entropy_fwd` on `input`.
pub fn evaluate(input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    let logits = r.dim(0)?;
    let (batch, vocab) = (dim_at(logits, 0)?, dim_at(logits, -1)?);
    let params = vec![
        ("batch", ipy(batch)),
        ("vocab_size", ipy(vocab)),
        ("logits_shape", Py::from_arg(logits, false)),
    ];
    if bwd {
        return Err(ModelError::Invalid(
            "cross-entropy has no backward model".into(),
        ));
    }
    let b = Num::I(batch);
    let bytes = numel(logits)?
        .mul(r.first_bpe())
        .add(b.mul(8))
        .add(b.mul(4));
    Ok(Evaluation {
        params,
        flops: Num::I(5).mul(batch).mul(vocab).f64(),
        bytes: Some(bytes.f64()),
        maf: Some(Maf::Vector),
        precision: r.first_precision(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};

    #[test]
    fn logits_and_targets() {
        // logits (8, 1, 32000) bf16, targets (8, 1).
        let i = test_input(
            "CrossEntropyFunction",
            "[[8, 1, 32000], [8, 1]]",
            &["c10::BFloat16", "long int"],
            None,
            &[],
        );
        let e = evaluate("cross_entropy_fwd", &i, false).unwrap();
        assert_eq!(e.params[2].1.to_str(), "[8, 1, 32000]");
        // 5·8·32,000 = 1,280,000; 256,000·2 + 64 + 32 = 512,096.
        assert_eq!((e.flops, e.bytes), (1_280_000.0, Some(512_096.0)));
        assert_eq!(e.compute_spec(), "vector_bf16");
    }
}
