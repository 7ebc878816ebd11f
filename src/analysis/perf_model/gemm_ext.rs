//! The GEMM ops of the bundled extensions (aiter, vLLM, SGLang): each reads
//! M, N, K (and a batch) from its own argument layout, then shares the GEMM
//! base: `flops = 2·M·N·K (+ M·N with a bias)`, `bytes =
//! M·K·bpe_A + K·N·bpe_B + M·N·bpe_out (+ N·bpe_bias)` (unknown when any size
//! is), `B = 1` appended when the parser has no `B`, then `transpose` from
//! the kernel names. Batched classes multiply both by B. FP4 operands count
//! 0.5 byte per element.
//!
//! Backward: the base's `bytes_bwd` needs an argument the pipeline does not
//! pass, so asking for backward numbers fails ([`ModelError::Invalid`]).

use super::gemm::transpose_of;
use super::pyval::{Num, Rec, bpe, invalid, ipy, precision};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Precision, Py, precision_of};

/// The extension GEMM classes: which parser reads the operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `gemm_a8w8_blockscale` and its aliases.
    A8w8Blockscale,
    /// `vllm::rocm_unquantized_gemm`.
    RocmUnquantized,
    /// `aiter::batched_gemm_a16wfp4_`.
    BatchedA16wfp4,
    /// The batched A8W8 GEMM.
    BatchedA8w8,
    /// `gemm_a16w16_atomic_`.
    A16w16Atomic,
    /// `aiter::gemm_a16w16`.
    A16w16,
    /// `aiter::_gemm_a16w16_asm`.
    A16w16Asm,
    /// `aiter::gemm_afp4wfp4_`.
    Afp4wfp4,
}

const BF16: &str = "c10::bfloat16";

/// What a parser found: params in key order, sizes and byte sizes.
struct Parsed {
    params: Vec<(&'static str, Py)>,
    batch: Option<i128>,
    m: i128,
    n: i128,
    k: i128,
    bias: bool,
    /// Bytes per element of A, B, the bias and the output.
    bpe: [Option<Num>; 4],
    precision: Option<Precision>,
}

impl Parsed {
    /// The common params `M, N, K, bias, dtype_A_B` after an optional `B`.
    fn new(batch: Option<i128>, mnk: [i128; 3], bias: bool, dtypes: [&str; 3]) -> Parsed {
        let [m, n, k] = mnk;
        let mut params = Vec::new();
        if let Some(b) = batch {
            params.push(("B", ipy(b)));
        }
        params.extend([
            ("M", ipy(m)),
            ("N", ipy(n)),
            ("K", ipy(k)),
            ("bias", Py::Bool(bias)),
            (
                "dtype_A_B",
                Py::Tuple(dtypes.iter().map(|d| Py::Str(d.to_string())).collect()),
            ),
        ]);
        Parsed {
            params,
            batch: None,
            m,
            n,
            k,
            bias,
            bpe: [None; 4],
            precision: precision(Some(dtypes[0])),
        }
    }

    /// Byte sizes of A and B, and one size for both bias and output.
    fn sizes<A, B, O>(mut self, a: Option<A>, b: Option<B>, out: Option<O>) -> Parsed
    where
        A: Into<Num>,
        B: Into<Num>,
        O: Into<Num>,
    {
        let out = out.map(Into::into);
        self.bpe = [a.map(Into::into), b.map(Into::into), out, out];
        self
    }
}

/// `gemm_a8w8_blockscale`: X (M, K) at 0, W (N, K) at 1, block sizes from
/// the scale shapes at 2 and 3; a bf16 output.
fn a8w8_blockscale(r: Rec) -> ModelResult<Parsed> {
    let (m, k, n) = (r.dim_int(0, 0)?, r.dim_int(0, 1)?, r.dim_int(1, 0)?);
    let types = r.types_or_empty();
    let t = |i: usize| types.get(i).map_or("", String::as_str);
    let mut p = Parsed::new(Some(1), [m, n, k], false, [t(0), t(1), BF16]);
    let dims = r.dims()?;
    if dims.len() > 3 {
        let block = |scale: &crate::trace::ArgValue, i: isize, size: i128| -> ModelResult<Py> {
            let d = match scale.as_list() {
                Some(items) if !items.is_empty() => super::pyval::dim_at(scale, i)?,
                _ => return Ok(Py::None),
            };
            if d == 0 {
                return Ok(Py::None);
            }
            // -(-size // d): ceil division.
            Ok(Num::I(-size).floor_div(d)?.mul(-1).to_py())
        };
        let block_k = block(&dims[2], -1, k)?;
        let block_n = block(&dims[3], 0, n)?;
        p.params.extend([
            ("quant_scheme", Py::Str("a8w8_blockscale".into())),
            ("quant_granularity", Py::Str("per_block".into())),
            ("block_k", block_k),
            ("block_n", block_n),
            (
                "scale_dtype",
                Py::Str(types.get(2).map_or("float32", String::as_str).into()),
            ),
        ]);
    }
    p.params.extend([
        ("output_shape", Py::Tuple(vec![ipy(m), ipy(n)])),
        ("output_dtype", Py::Str(BF16.into())),
    ]);
    let out = bpe(Some(BF16));
    Ok(p.sizes(bpe(Some(t(0))), bpe(Some(t(1))), out))
}

/// `vllm::rocm_unquantized_gemm`: x (M, K), weight (N, K), optional bias
/// (N); the output takes the bias dtype when there is a bias, else B's.
fn rocm_unquantized(r: Rec) -> ModelResult<Parsed> {
    let dims = r.dims()?;
    let bias = dims.len() > 2 && super::pyval::len_of(&dims[2])? > 0;
    let (m, n, k) = (r.dim_int(0, 0)?, r.dim_int(1, 0)?, r.dim_int(0, 1)?);
    let (t0, t1) = (r.ty(0)?, r.ty(1)?);
    let t2 = r.ty_or(2, "");
    let p = Parsed::new(None, [m, n, k], bias, [t0, t1, t2]);
    let out = bpe(Some(if bias { t2 } else { t1 }));
    Ok(p.sizes(bpe(Some(t0)), bpe(Some(t1)), out))
}

/// `aiter::batched_gemm_a16wfp4_`: X (B, M, K), W (B, N, K/2) in FP4.
fn batched_a16wfp4(r: Rec) -> ModelResult<Parsed> {
    let b = r.dim_int(0, 0)?;
    let (m, n, k) = (r.dim_int(0, 1)?, r.dim_int(1, 1)?, r.dim_int(0, 2)?);
    let (t0, t1) = (r.ty(0)?, r.ty(1)?);
    let mut p = Parsed::new(Some(b), [m, n, k], false, [t0, t1, BF16]);
    p.batch = Some(b);
    p.precision = precision_of(Some("mxfp4"));
    Ok(p.sizes(bpe(Some(t0)), Some(Num::F(0.5)), bpe(Some(BF16))))
}

/// The batched SGLang a8w8 GEMM: X (B, M, K) or (M, B, K), WQ (B, N, K).
fn batched_a8w8(r: Rec) -> ModelResult<Parsed> {
    let b = r.dim_int(1, 0)?;
    let n = r.dim_int(1, 1)?;
    let k = r.dim_int(0, 2)?;
    let m = if r.dim_int(0, 0)? == b {
        r.dim_int(0, 1)?
    } else {
        r.dim_int(0, 0)?
    };
    let (t0, t1) = (r.ty(0)?, r.ty(1)?);
    let mut p = Parsed::new(Some(b), [m, n, k], false, [t0, t1, BF16]);
    p.batch = Some(b);
    p.precision = precision_of(Some(t1));
    Ok(p.sizes(bpe(Some(t0)), bpe(Some(t1)), bpe(Some(BF16))))
}

/// `aiter::gemm_a16w16_atomic_` (and the flydsl hgemm): the output dtype is
/// `Input type[3]` when recorded, else bf16.
fn a16w16_atomic(r: Rec) -> ModelResult<Parsed> {
    let (m, n, k) = (r.dim_int(0, 0)?, r.dim_int(1, 0)?, r.dim_int(0, 1)?);
    let (t0, t1) = (r.ty(0)?, r.ty(1)?);
    let t3 = r.ty_or(3, BF16);
    let p = Parsed::new(Some(1), [m, n, k], false, [t0, t1, t3]);
    Ok(p.sizes(bpe(Some(t0)), bpe(Some(t1)), bpe(Some(t3))))
}

/// `aiter::gemm_a16w16`: an optional bias at slot 2; the output keeps A's dtype.
fn a16w16(r: Rec) -> ModelResult<Parsed> {
    let dims = r.dims()?;
    let bias = dims.len() > 2 && super::pyval::len_of(&dims[2])? > 0;
    let (m, n, k) = (r.dim_int(0, 0)?, r.dim_int(1, 0)?, r.dim_int(0, 1)?);
    let (t0, t1) = (r.ty(0)?, r.ty(1)?);
    let p = Parsed::new(Some(1), [m, n, k], bias, [t0, t1, t0]);
    Ok(p.sizes(bpe(Some(t0)), bpe(Some(t1)), bpe(Some(t0))))
}

/// `aiter::_gemm_a16w16_asm`: the output tensor is slot 2 when its dtype
/// has a size, else A's dtype.
fn a16w16_asm(r: Rec) -> ModelResult<Parsed> {
    let types = r.types()?;
    let (t0, t1) = (r.ty(0)?, r.ty(1)?);
    let out = match types.get(2) {
        Some(t) if bpe(Some(t)).is_some() => t.as_str(),
        _ => t0,
    };
    let (m, n, k) = (r.dim_int(0, 0)?, r.dim_int(1, 0)?, r.dim_int(0, 1)?);
    let p = Parsed::new(Some(1), [m, n, k], false, [t0, t1, out]);
    Ok(p.sizes(bpe(Some(t0)), bpe(Some(t1)), bpe(Some(out))))
}

/// `aiter::gemm_afp4wfp4_`: X (M, K/2) and W (N, K/2) packed FP4.
fn afp4wfp4(r: Rec) -> ModelResult<Parsed> {
    let (m, n) = (r.dim_int(0, 0)?, r.dim_int(1, 0)?);
    let k = Num::I(r.dim_int(0, 1)?).mul(2);
    let Num::I(k) = k else {
        return invalid("K out of range");
    };
    let (t0, t1) = (r.ty(0)?, r.ty(1)?);
    let mut p = Parsed::new(Some(1), [m, n, k], false, [t0, t1, BF16]);
    p.precision = precision_of(Some("mxfp4"));
    let half = Some(Num::F(0.5));
    Ok(p.sizes(half, half, bpe(Some(BF16))))
}

/// The GEMM base's FLOPs and bytes of a parsed op.
fn numbers(p: &Parsed) -> (Num, Option<Num>) {
    let (m, n, k) = (Num::I(p.m), Num::I(p.n), Num::I(p.k));
    let mut flops = Num::I(2).mul(m).mul(n).mul(k);
    if p.bias {
        flops = flops.add(m.mul(n));
    }
    let bytes = match p.bpe {
        [Some(a), Some(b), Some(bias), Some(out)] => {
            let total = m.mul(k).mul(a).add(k.mul(n).mul(b)).add(m.mul(n).mul(out));
            Some(total.add(Num::I(if p.bias { p.n } else { 0 }).mul(bias)))
        }
        _ => None,
    };
    match p.batch {
        Some(b) => (Num::I(b).mul(flops), bytes.map(|x| Num::I(b).mul(x))),
        None => (flops, bytes),
    }
}

/// Evaluates an extension GEMM class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let transpose = transpose_of(&input.kernel_names)?;
    let r = Rec::new(input);
    let mut p = match kind {
        Kind::A8w8Blockscale => a8w8_blockscale(r)?,
        Kind::RocmUnquantized => rocm_unquantized(r)?,
        Kind::BatchedA16wfp4 => batched_a16wfp4(r)?,
        Kind::BatchedA8w8 => batched_a8w8(r)?,
        Kind::A16w16Atomic => a16w16_atomic(r)?,
        Kind::A16w16 => a16w16(r)?,
        Kind::A16w16Asm => a16w16_asm(r)?,
        Kind::Afp4wfp4 => afp4wfp4(r)?,
    };
    if !p.params.iter().any(|(k, _)| *k == "B") {
        p.params.push(("B", Py::Int(1)));
    }
    if let Some(t) = transpose {
        p.params.push(("transpose", t));
    }
    if bwd {
        return Err(ModelError::Invalid(
            "GEMM bytes_bwd needs bytes_per_element".into(),
        ));
    }
    let (flops, bytes) = numbers(&p);
    Ok(Evaluation {
        params: p.params,
        flops: flops.f64(),
        bytes: bytes.map(Num::f64),
        maf: Some(Maf::Matrix),
        precision: p.precision,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";

    fn keys(e: &Evaluation) -> Vec<&str> {
        e.params.iter().map(|(k, _)| *k).collect()
    }

    #[test]
    fn rocm_unquantized_gemm_with_bias() {
        // x (32, 2880), weight (5120, 2880), bias (5120), all bf16.
        let i = test_input(
            "vllm::rocm_unquantized_gemm",
            "[[32, 2880], [5120, 2880], [5120]]",
            &[BF, BF, BF],
            None,
            &["", "", ""],
        );
        let e = evaluate("vllm_rocm_unquantized_gemm", &i, false).unwrap();
        assert_eq!(keys(&e), ["M", "N", "K", "bias", "dtype_A_B", "B"]);
        // 2·32·5120·2880 + 32·5120 = 943,718,400 + 163,840.
        assert_eq!(e.flops, 943_882_240.0);
        // (32·2880 + 2880·5120 + 32·5120 + 5120)·2 = (92,160 + 14,745,600
        // + 163,840 + 5,120)·2 = 30,013,440.
        assert_eq!(e.bytes, Some(30_013_440.0));
        assert_eq!(e.compute_spec(), "matrix_bf16");
        assert!(matches!(
            evaluate("vllm_rocm_unquantized_gemm", &i, true),
            Err(ModelError::Invalid(_))
        ));
    }

    #[test]
    fn a16w16_layouts() {
        // sglang's aiter::gemm_a16w16: x (32, 4096), w (6144, 4096), no bias.
        let i = test_input(
            "aiter::gemm_a16w16",
            "[[32, 4096], [6144, 4096], [], [], [], [], []]",
            &[BF, BF, "", "Scalar", "", "", ""],
            None,
            &["", "", "", "15", "", "", ""],
        );
        let e = evaluate("gemm_a16w16", &i, false).unwrap();
        assert_eq!(keys(&e), ["B", "M", "N", "K", "bias", "dtype_A_B"]);
        assert_eq!(
            e.params[5].1.to_str(),
            "('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')"
        );
        // 2·32·6144·4096 = 1,610,612,736; bytes (131,072 + 25,165,824 +
        // 196,608)·2 = 50,987,008.
        assert_eq!(e.flops, 1_610_612_736.0);
        assert_eq!(e.bytes, Some(50_987_008.0));
        // The atomic variant reads the output dtype at slot 3 ('Scalar' has
        // 4 bytes here): bytes = (131,072 + 25,165,824)·2 + 196,608·4.
        let e = evaluate("gemm_a16w16_atomic_", &i, false).unwrap();
        assert_eq!(
            e.params[5].1.to_str(),
            "('c10::BFloat16', 'c10::BFloat16', 'Scalar')"
        );
        assert_eq!(e.bytes, Some(51_380_224.0));
        // The asm variant: slot 2's '' has no size → A's dtype.
        let e = evaluate("gemm_a16w16_asm", &i, false).unwrap();
        assert_eq!(e.bytes, Some(50_987_008.0));
    }

    #[test]
    fn fp4_and_batched_gemms() {
        // afp4wfp4: X (16, 256) packed → K = 512, W (1024, 256).
        // flops 2·16·1024·512 = 16,777,216; bytes 16·512·0.5 + 512·1024·0.5
        // + 16·1024·2 = 4,096 + 262,144 + 32,768 = 299,008.
        let i = test_input(
            "aiter::gemm_afp4wfp4_",
            "[[16, 256], [1024, 256], [16, 16], [1024, 16], [], [16, 1024]]",
            &[
                "unsigned char",
                "unsigned char",
                "unsigned char",
                "unsigned char",
                "",
                BF,
            ],
            None,
            &[],
        );
        let e = evaluate("gemm_afp4wfp4", &i, false).unwrap();
        assert_eq!((e.flops, e.bytes), (16_777_216.0, Some(299_008.0)));
        assert_eq!(e.compute_spec(), "matrix_fp4");
        // batched a16wfp4: X (4, 8, 128), W (4, 64, 64): B 4, M 8, N 64,
        // K 128. flops 4·2·8·64·128 = 524,288; bytes 4·(8·128·2 +
        // 128·64·0.5 + 8·64·2) = 4·(2,048 + 4,096 + 1,024) = 28,672.
        let i = test_input(
            "aiter::batched_gemm_a16wfp4_",
            "[[4, 8, 128], [4, 64, 64], [4, 64, 4]]",
            &[BF, "unsigned char", "unsigned char"],
            None,
            &[],
        );
        let e = evaluate("batched_gemm_a16wfp4", &i, false).unwrap();
        assert_eq!(keys(&e), ["B", "M", "N", "K", "bias", "dtype_A_B"]);
        assert_eq!((e.flops, e.bytes), (524_288.0, Some(28_672.0)));
        assert_eq!(e.compute_spec(), "matrix_fp4");
        // batched a8w8 with X laid out (M, B, K) = (8, 4, 128), WQ (4, 64,
        // 128) int8: M 8; flops 4·2·8·64·128 = 524,288; bytes 4·(8·128·2 +
        // 128·64·1 + 8·64·2) = 4·(2,048 + 8,192 + 1,024) = 45,056.
        let i = test_input(
            "sglang_profiler::batched_gemm_a8w8",
            "[[8, 4, 128], [4, 64, 128], [1]]",
            &[BF, "signed char", "float"],
            None,
            &[],
        );
        let e = evaluate("batched_gemm_a8w8", &i, false).unwrap();
        assert_eq!(e.params[1].1, Py::Int(8));
        assert_eq!((e.flops, e.bytes), (524_288.0, Some(45_056.0)));
        // signed char has no precision: no Compute Spec.
        assert_eq!(e.compute_spec(), "");
    }

    #[test]
    fn a8w8_blockscale_block_sizes() {
        // X (64, 7168) fp8, W (1536, 7168), x_scale (64, 56), w_scale
        // (12, 56): block_k = ceil(7168/56) = 128, block_n = ceil(1536/12)
        // = 128. flops 2·64·1536·7168 = 1,409,286,144; bytes 64·7168 +
        // 7168·1536 + 64·1536·2 = 458,752 + 11,010,048 + 196,608 = 11,665,408.
        let fp8 = "c10::Float8_e4m3fnuz";
        let i = test_input(
            "aiter::gemm_a8w8_blockscale_ck",
            "[[64, 7168], [1536, 7168], [64, 56], [12, 56], [64, 1536]]",
            &[fp8, fp8, "float", "float", BF],
            None,
            &[],
        );
        let e = evaluate("gemm_a8w8_blockscale", &i, false).unwrap();
        assert_eq!(
            keys(&e),
            [
                "B",
                "M",
                "N",
                "K",
                "bias",
                "dtype_A_B",
                "quant_scheme",
                "quant_granularity",
                "block_k",
                "block_n",
                "scale_dtype",
                "output_shape",
                "output_dtype"
            ]
        );
        assert_eq!(e.params[8].1, Py::Int(128));
        assert_eq!(e.params[9].1, Py::Int(128));
        assert_eq!(e.params[10].1.to_str(), "float");
        assert_eq!(e.params[11].1.to_str(), "(64, 1536)");
        assert_eq!((e.flops, e.bytes), (1_409_286_144.0, Some(11_665_408.0)));
        assert_eq!(e.compute_spec(), "matrix_fp8");
        // Only X and W recorded: no quant keys; a 2-slot tuple of types.
        let i = test_input("aiter::gemm_a8w8_ck", "[[2, 3], [5, 3]]", &[fp8], None, &[]);
        let e = evaluate("gemm_a8w8_blockscale", &i, false).unwrap();
        assert_eq!(e.params.len(), 8);
        assert_eq!(
            e.params[5].1.to_str(),
            "('c10::Float8_e4m3fnuz', '', 'c10::bfloat16')"
        );
        assert_eq!(e.bytes, None);
    }
}
