//! Primus-Turbo grouped GEMMs (family `GroupedGEMM`): G groups of rows of
//! X multiplied by their own weights.
//!
//! * fixed K (`primus_turbo_grouped_gemm`): X `(M, K)` and W `(G, K, N)` or
//!   `(G, N, K)` (the "impl" layout), else per-group 2-D shapes with a
//!   common K and N ("zipped", M summed): `flops = 2·M·K·N`,
//!   `bytes = (M·K + G·K·N)·b_in + M·N·b_out`;
//! * variable K: per-group `(M_i, K_i) × (K_i, N_i)` pairs (one aggregate
//!   pair for the impl layout `[[M, K], [M, N]]`), FLOPs and bytes summed
//!   per group with G = 1.
//!
//! `b_in`/`b_out` are the sizes of `Input type[0]`/`[1]` (an unknown size
//! fails). Both define backward categories but raise for backward numbers.

use super::pyval::{Num, Rec, bpe, int_of, invalid, ipy, precision};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Py};
use crate::trace::ArgValue;

/// The grouped GEMM classes: one K for all groups, or one per group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `primus_turbo::grouped_gemm`.
    FixedK,
    /// `primus_turbo::grouped_gemm_variable_k`.
    VariableK,
}

/// A 2-D shape `(rows, cols)`.
type Pair = (i128, i128);

/// A positive int of a recorded shape.
fn positive(v: &ArgValue) -> Option<i128> {
    int_of(v).ok().filter(|&x| x > 0)
}

/// Every `(rows, cols)` pair of positive ints nested in `v`, depth first.
fn pairs_in(v: &ArgValue, out: &mut Vec<(i128, i128)>) {
    let ArgValue::List(items) = v else {
        return;
    };
    if let [a, b] = &items[..]
        && let (Some(a), Some(b)) = (positive(a), positive(b))
    {
        out.push((a, b));
        return;
    }
    for item in items.iter() {
        pairs_in(item, out);
    }
}

/// The 2-D shapes of the first two operands, when both are lists.
fn zipped(dims: &[ArgValue]) -> Option<(Vec<Pair>, Vec<Pair>)> {
    let (a, b) = (dims.first()?, dims.get(1)?);
    if !a.is_list() || !b.is_list() {
        return None;
    }
    let (mut lhs, mut rhs) = (Vec::new(), Vec::new());
    pairs_in(a, &mut lhs);
    pairs_in(b, &mut rhs);
    (!lhs.is_empty() && lhs.len() == rhs.len()).then_some((lhs, rhs))
}

/// Positive ints of a list shape, all of them.
fn all_positive(v: &ArgValue) -> Option<Vec<i128>> {
    v.as_list()?.iter().map(positive).collect()
}

/// `(M, K, N, G)` of a fixed-K op.
fn fixed_k(dims: &[ArgValue]) -> Option<(i128, i128, i128, i128)> {
    let impl_layout = || {
        let a = dims.first()?.as_list()?;
        let b = all_positive(dims.get(1)?)?;
        if a.len() < 2 || b.len() != 3 {
            return None;
        }
        let (m, k) = (positive(&a[0])?, positive(&a[1])?);
        let n = if b[1] == k {
            b[2]
        } else if b[2] == k {
            b[1]
        } else {
            return None;
        };
        Some((m, k, n, b[0]))
    };
    if let Some(found) = impl_layout() {
        return Some(found);
    }
    let (lhs, rhs) = zipped(dims)?;
    let (k, n) = (lhs[0].1, rhs[0].1);
    let uniform = lhs
        .iter()
        .zip(&rhs)
        .all(|(a, b)| a.1 == k && b.0 == k && b.1 == n);
    uniform.then(|| (lhs.iter().map(|a| a.0).sum(), k, n, lhs.len() as i128))
}

/// The `((M_i, K_i), (K_i, N_i))` pairs of a variable-K op.
fn variable_k(dims: &[ArgValue]) -> Option<Vec<(Pair, Pair)>> {
    let impl_layout = || {
        let a = all_positive(dims.first()?)?;
        let b = all_positive(dims.get(1)?)?;
        (a.len() == 2 && b.len() == 2).then(|| vec![((a[0], a[1]), (a[1], b[1]))])
    };
    if let Some(found) = impl_layout() {
        return Some(found);
    }
    let (lhs, rhs) = zipped(dims)?;
    if !lhs.iter().zip(&rhs).all(|(a, b)| a.1 == b.0) {
        return None;
    }
    Some(lhs.into_iter().zip(rhs).collect())
}

/// `bpe_in`, `bpe_out` as the reference derives them from `Input type`.
fn sizes(r: Rec) -> (Option<Num>, Option<Num>) {
    let types = r.types_or_empty();
    let (din, dout) = (types.first(), types.get(1).or(types.first()));
    let b_in = din.and_then(|d| bpe(Some(d)).map(Num::I));
    let b_out = match dout {
        Some(d) => bpe(Some(d)).map(Num::I),
        None => b_in,
    };
    (b_in, b_out)
}

fn opt(n: Option<Num>) -> Py {
    n.map_or(Py::None, Num::to_py)
}

/// `(M·K + g·K·N)·b_in + M·N·b_out`.
fn group_bytes(mkn: (i128, i128, i128), g: i128, b_in: Num, b_out: Num) -> Num {
    let (m, k, n) = (Num::I(mkn.0), Num::I(mkn.1), Num::I(mkn.2));
    m.mul(k)
        .add(Num::I(g).mul(k).mul(n))
        .mul(b_in)
        .add(m.mul(n).mul(b_out))
}

/// The groups of a parsed op.
enum Groups {
    /// `(M, K, N, G)` with one K and N.
    Fixed(i128, i128, i128, i128),
    /// Per-group `((M_i, K_i), (K_i, N_i))`.
    Variable(Vec<((i128, i128), (i128, i128))>),
}

/// Params in the reference's order.
fn params(g: &Groups, b_in: Option<Num>, b_out: Option<Num>) -> Vec<(&'static str, Py)> {
    let (m, k, n, count) = match g {
        Groups::Fixed(m, k, n, g) => (*m, *k, *n, *g),
        Groups::Variable(v) => {
            let ((_, k), (_, n)) = v[0];
            (v.iter().map(|(a, _)| a.0).sum(), k, n, v.len() as i128)
        }
    };
    let mut p = vec![
        ("M", ipy(m)),
        ("K", ipy(k)),
        ("N", ipy(n)),
        ("G", ipy(count)),
        ("bpe_in", opt(b_in)),
        ("bpe_out", opt(b_out)),
    ];
    if let Groups::Variable(v) = g {
        let pair = |(a, b): (i128, i128)| Py::Tuple(vec![ipy(a), ipy(b)]);
        let list = v.iter().map(|(a, b)| Py::Tuple(vec![pair(*a), pair(*b)]));
        p.push(("group_pairs", Py::List(list.collect())));
    }
    p
}

/// FLOPs and bytes (None: an unknown size the reference tolerates).
fn numbers(g: &Groups, b_in: Option<Num>, b_out: Option<Num>) -> ModelResult<(Num, Option<Num>)> {
    let gemm = |m: i128, k: i128, n: i128| Num::I(2).mul(m).mul(k).mul(n);
    match g {
        Groups::Fixed(m, k, n, count) => {
            let (Some(i), Some(o)) = (b_in, b_out) else {
                return invalid("unknown element size");
            };
            Ok((
                gemm(*m, *k, *n),
                Some(group_bytes((*m, *k, *n), *count, i, o)),
            ))
        }
        Groups::Variable(v) => {
            let flops = v
                .iter()
                .fold(Num::I(0), |acc, ((m, k), (_, n))| acc.add(gemm(*m, *k, *n)));
            let bytes = match (b_in, b_out) {
                (Some(i), Some(o)) => Some(v.iter().fold(Num::I(0), |acc, ((m, k), (_, n))| {
                    acc.add(group_bytes((*m, *k, *n), 1, i, o))
                })),
                _ => None,
            };
            Ok((flops, bytes))
        }
    }
}

/// Evaluates a grouped GEMM class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    let dims = r.dims_or_empty();
    let groups = match kind {
        Kind::FixedK => fixed_k(dims).map(|(m, k, n, g)| Groups::Fixed(m, k, n, g)),
        Kind::VariableK => variable_k(dims)
            .filter(|v| !v.is_empty())
            .map(Groups::Variable),
    };
    let Some(groups) = groups else {
        return invalid("could not parse Input Dims");
    };
    let (b_in, b_out) = sizes(r);
    let params = params(&groups, b_in, b_out);
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    let (flops, bytes) = numbers(&groups, b_in, b_out)?;
    Ok(Evaluation {
        params,
        flops: flops.f64(),
        bytes: bytes.map(Num::f64),
        maf: Some(Maf::Matrix),
        precision: precision(r.types_or_empty().first().map(String::as_str)),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";

    #[test]
    fn fixed_k_layouts() {
        // X (1024, 512), W (8, 2048, 512) stored (G, N, K): N = 2048.
        let i = test_input(
            "primus_turbo::grouped_gemm_impl",
            "[[1024, 512], [8, 2048, 512], [8]]",
            &[BF, BF, "long int"],
            None,
            &[],
        );
        let e = evaluate("primus_turbo_grouped_gemm", &i, false).unwrap();
        let keys: Vec<_> = e.params.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["M", "K", "N", "G", "bpe_in", "bpe_out"]);
        // 2·1024·512·2048 = 2,147,483,648;
        // (1024·512 + 8·512·2048)·2 + 1024·2048·2 = 1,048,576 + 16,777,216
        // + 4,194,304 = 22,020,096.
        assert_eq!((e.flops, e.bytes), (2_147_483_648.0, Some(22_020_096.0)));
        assert_eq!(
            evaluate("primus_turbo_grouped_gemm", &i, true),
            Err(ModelError::NotImplemented)
        );
        // Zipped: two groups of (100, 64)·(64, 32) and (50, 64)·(64, 32).
        let i = test_input(
            "primus_turbo::grouped_gemm",
            "[[[100, 64], [50, 64]], [[64, 32], [64, 32]]]",
            &[BF],
            None,
            &[],
        );
        let e = evaluate("primus_turbo_grouped_gemm", &i, false).unwrap();
        assert_eq!(e.params[0].1, Py::Int(150));
        // 2·150·64·32 = 614,400; (150·64 + 2·64·32)·2 + 150·32·2
        // = (9,600 + 4,096)·2 + 9,600 = 36,992.
        assert_eq!((e.flops, e.bytes), (614_400.0, Some(36_992.0)));
    }

    #[test]
    fn variable_k_groups() {
        // (10, 16)·(16, 8) and (20, 32)·(32, 8).
        let i = test_input(
            "primus_turbo::grouped_gemm_variable_k",
            "[[[10, 16], [20, 32]], [[16, 8], [32, 8]]]",
            &[BF, "float"],
            None,
            &[],
        );
        let e = evaluate("primus_turbo_grouped_gemm_variable_k", &i, false).unwrap();
        assert_eq!(
            e.params.last().unwrap().1.to_str(),
            "[((10, 16), (16, 8)), ((20, 32), (32, 8))]"
        );
        assert_eq!(e.params[5].1, Py::Int(4));
        assert_eq!(e.params[3].1, Py::Int(2));
        // 2·10·16·8 + 2·20·32·8 = 2,560 + 10,240.
        assert_eq!(e.flops, 12_800.0);
        // (160 + 128)·2 + 80·4 + (640 + 256)·2 + 160·4 = 896 + 2,432.
        assert_eq!(e.bytes, Some(3_328.0));
    }
}
