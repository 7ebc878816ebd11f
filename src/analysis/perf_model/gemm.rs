//! GEMM models: `aten::mm`, `aten::addmm`, `aten::bmm`,
//! `aten::baddbmm`, `aten::_scaled_mm` and the vendor GEMM ops of the core
//! map.
//!
//! Every class parses M, N, K (and a batch B) from the recorded shapes, then
//! shares `flops = 2·M·N·K (+ M·N with a bias)` and
//! `bytes = M·K·bpe_A + K·N·bpe_B + M·N·bpe_out (+ N·bpe_bias)`. The
//! parameters keep the reference's key order: the parser's keys, then `B`
//! (if the parser did not set it), then `transpose` when a kernel name tells
//! the operand layouts.
//!
//! The module also holds the exact-int helpers and the i64 shape readers
//! that the CONV and SDPA models share.

use crate::trace::ArgValue;

use super::pyval::{Num, Rec, bpe, int_of, invalid, item, prod, tuple_of};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Py, precision_of};

// ---------------------------------------------------------------------------
// Argument helpers shared by the GEMM, CONV and SDPA models.
// ---------------------------------------------------------------------------

/// `shape[i]` of a recorded shape, which must be an int.
pub(super) fn elem(shape: &ArgValue, i: usize) -> ModelResult<i64> {
    match shape {
        ArgValue::List(a) => match a.get(i) {
            Some(v) => int_value(v),
            None => invalid(format!("shape index {i} out of range")),
        },
        _ => invalid("shape is not a list"),
    }
}

/// A recorded value that must be a Python int ([`int_of`]: `True` is 1)
/// within 64 bits, where the GEMM and CONV shape arithmetic runs.
pub(super) fn int_value(v: &ArgValue) -> ModelResult<i64> {
    let i = int_of(v)?;
    i64::try_from(i).or_else(|_| invalid(format!("shape entry {v} does not fit in 64 bits")))
}

/// A tuple of dtype strings.
pub(super) fn str_tuple<S: AsRef<str>>(items: &[S]) -> Py {
    Py::Tuple(
        items
            .iter()
            .map(|s| Py::Str(s.as_ref().to_string()))
            .collect(),
    )
}

/// Exact int `a * b` (the reference's ints never overflow; a product that
/// leaves `i128` is refused, see [`Num::exact`]).
pub(super) fn mul(a: i128, b: i128) -> ModelResult<i128> {
    Num::I(a).mul(b).exact()
}

/// Exact int `a + b`.
pub(super) fn add(a: i128, b: i128) -> ModelResult<i128> {
    Num::I(a).add(b).exact()
}

/// Exact int product of several factors.
pub(super) fn mul_all(factors: &[i128]) -> ModelResult<i128> {
    prod(factors).exact()
}

/// Python `a // b` on exact ints.
pub(super) fn floor_div(a: i128, b: i128) -> ModelResult<i128> {
    Num::I(a).floor_div(b)?.exact()
}

// ---------------------------------------------------------------------------
// Kernel-name parsing: operand layouts from Tensile kernel names.
// ---------------------------------------------------------------------------

/// True when `name` matches `^.*C[a-z]{3}_A[a-z]{3}_B[a-z]{3}.*$` under
/// Python `re.match` (no newline inside the matched line).
fn is_tensile(name: &str) -> bool {
    let body = name.strip_suffix('\n').unwrap_or(name);
    if body.contains('\n') {
        return false;
    }
    let b = body.as_bytes();
    let lower3 = |i: usize| b[i..i + 3].iter().all(u8::is_ascii_lowercase);
    (0..b.len().saturating_sub(13)).any(|i| {
        b[i] == b'C'
            && lower3(i + 1)
            && b[i + 4] == b'_'
            && b[i + 5] == b'A'
            && lower3(i + 6)
            && b[i + 9] == b'_'
            && b[i + 10] == b'B'
            && lower3(i + 11)
    })
}

/// The `transpose` flags a kernel name tells, if it parses: Tensile names
/// (`_Ailk_`/`_Alik_`, `_Bljk_`/`_Bjlk_`) and cuBLAS `nvjet` names (last
/// `_` field, `T` = transposed). A too-short nvjet suffix fails like the
/// reference's indexing.
pub(crate) fn kernel_transpose(name: &str) -> ModelResult<Option<Py>> {
    if is_tensile(name) {
        let ta = if name.contains("_Ailk_") {
            Py::Bool(false)
        } else if name.contains("_Alik_") {
            Py::Bool(true)
        } else {
            Py::None
        };
        let tb = if name.contains("_Bljk_") {
            Py::Bool(false)
        } else if name.contains("_Bjlk_") {
            Py::Bool(true)
        } else {
            Py::None
        };
        return Ok(Some(Py::Tuple(vec![ta, tb])));
    }
    if name.starts_with("nvjet") {
        let last = name.rsplit('_').next().unwrap_or("");
        let mut chars = last.chars();
        let (Some(a), Some(b)) = (chars.next(), chars.next()) else {
            return invalid(format!("cannot parse nvjet transpose from {name:?}"));
        };
        return Ok(Some(Py::Tuple(vec![
            Py::Bool(a == 'T'),
            Py::Bool(b == 'T'),
        ])));
    }
    Ok(None)
}

/// The first kernel name that parses decides `transpose`.
pub(super) fn transpose_of(kernel_names: &[&str]) -> ModelResult<Option<Py>> {
    for name in kernel_names {
        if let Some(t) = kernel_transpose(name)? {
            return Ok(Some(t));
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------------------
// Per-op parsing.
// ---------------------------------------------------------------------------

/// How a class turns its dtypes into bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BytesRule {
    /// Every operand with `bpe(dtype_A_B[0])` (mm, addmm, bmm, baddbmm, vllm).
    FirstDtype,
    /// `_scaled_mm`: A's size for inputs, fp8 → 2-byte output.
    ScaledMm,
    /// TransformerEngine: A, B, output, bias dtypes.
    TexTs,
    /// TE v2 pseudo op: mismatched dtypes fail, 2-byte output.
    Tev2,
    /// hipBLASLt fp8.
    Fp8,
    /// MXFP4 with block scales.
    Fp4,
}

/// What a class's parser found.
struct Gemm {
    params: Vec<(&'static str, Py)>,
    batch: Option<i64>,
    m: i64,
    n: i64,
    k: i64,
    bias: bool,
    dtypes: Vec<String>,
    scales: (Option<String>, Option<String>),
    rule: BytesRule,
}

impl Gemm {
    /// An unbatched, unscaled GEMM with the 2-D params.
    fn two_d(
        (m, n, k): (i64, i64, i64),
        bias: bool,
        strides: (Py, Py),
        dtypes: Vec<String>,
        rule: BytesRule,
    ) -> Gemm {
        Gemm {
            params: mnk_params(m, n, k, bias, strides, str_tuple(&dtypes)),
            batch: None,
            m,
            n,
            k,
            bias,
            dtypes,
            scales: (None, None),
            rule,
        }
    }
}

/// `tuple(strides[a]), tuple(strides[b])`, both None when the key is absent
/// (and, with `lenient`, also when a slot is out of range).
fn strides_pair(input: &OpInput, a: usize, b: usize, lenient: bool) -> ModelResult<(Py, Py)> {
    let Some(strides) = input.strides else {
        return Ok((Py::None, Py::None));
    };
    match (strides.get(a), strides.get(b)) {
        (Some(sa), Some(sb)) => Ok((tuple_of(sa)?, tuple_of(sb)?)),
        (Some(sa), None) if lenient => {
            tuple_of(sa)?;
            Ok((Py::None, Py::None))
        }
        _ if lenient => Ok((Py::None, Py::None)),
        _ => invalid("'Input Strides' index out of range"),
    }
}

/// The common key order of the 2-D GEMM parsers.
fn mnk_params(
    m: i64,
    n: i64,
    k: i64,
    bias: bool,
    strides: (Py, Py),
    dtype_a_b: Py,
) -> Vec<(&'static str, Py)> {
    vec![
        ("M", Py::Int(m)),
        ("N", Py::Int(n)),
        ("K", Py::Int(k)),
        ("bias", Py::Bool(bias)),
        ("stride_A", strides.0),
        ("stride_B", strides.1),
        ("dtype_A_B", dtype_a_b),
    ]
}

/// `types[lo:hi]` as Python slices it (clamped).
fn type_slice(types: &[String], lo: usize, hi: usize) -> Vec<String> {
    let hi = hi.min(types.len());
    let lo = lo.min(hi);
    types[lo..hi].to_vec()
}

/// `aten::mm`, `aten::addmm`, `aten::_scaled_mm` and the TE v2 pseudo ops:
/// A and B at `a`/`b`, `M = A[0]`, `K = A[1]`, `N = B[1]`.
fn parse_2d(
    input: &OpInput,
    a: usize,
    b: usize,
    bias: Option<bool>,
    rule: BytesRule,
) -> ModelResult<Gemm> {
    let dims = Rec::new(input).dims()?;
    let a_shape = item(dims, a, "Input Dims")?;
    let b_shape = item(dims, b, "Input Dims")?;
    let m = elem(a_shape, 0)?;
    let n = elem(b_shape, 1)?;
    let k = elem(a_shape, 1)?;
    let bias = bias.unwrap_or(dims.len() == 3);
    let dtypes = type_slice(Rec::new(input).types()?, a, b + 1);
    let strides = strides_pair(input, a, b, false)?;
    Ok(Gemm::two_d((m, n, k), bias, strides, dtypes, rule))
}

/// `aten::bmm` / `aten::baddbmm`: `(B, M, K) × (B, K, N)`.
fn parse_batched(input: &OpInput, a: usize, b: usize, bias: bool) -> ModelResult<Gemm> {
    let dims = Rec::new(input).dims()?;
    let a_shape = item(dims, a, "Input Dims")?;
    let b_shape = item(dims, b, "Input Dims")?;
    let three = |v: &ArgValue| matches!(v, ArgValue::List(x) if x.len() == 3);
    if !three(a_shape) || !three(b_shape) {
        return invalid("bmm operands must be 3-D");
    }
    let batch = elem(a_shape, 0)?;
    let m = elem(a_shape, 1)?;
    let k = elem(a_shape, 2)?;
    let n = elem(b_shape, 2)?;
    let dtypes = type_slice(Rec::new(input).types()?, a, b + 1);
    let (sa, sb) = strides_pair(input, a, b, false)?;
    let params = vec![
        ("B", Py::Int(batch)),
        ("M", Py::Int(m)),
        ("N", Py::Int(n)),
        ("K", Py::Int(k)),
        ("bias", Py::Bool(bias)),
        ("stride_A", sa),
        ("stride_B", sb),
        ("dtype_A_B", str_tuple(&dtypes)),
    ];
    Ok(Gemm {
        params,
        batch: Some(batch),
        m,
        n,
        k,
        bias,
        dtypes,
        scales: (None, None),
        rule: BytesRule::FirstDtype,
    })
}

/// `tex_ts::te_gemm_ts`: A at slot 0, B at 5, output at 10; transposes and
/// bias from the concrete inputs.
fn parse_tex_ts(input: &OpInput) -> ModelResult<Gemm> {
    let dims = Rec::new(input).dims()?;
    item(dims, 10, "Input Dims")?;
    let a_shape = item(dims, 0, "Input Dims")?;
    let b_shape = item(dims, 5, "Input Dims")?;
    let ci = Rec::new(input).concrete()?;
    let trans_a = item(ci, 4, "Concrete Inputs")? == "1";
    let trans_b = item(ci, 9, "Concrete Inputs")? == "1";
    let (m, k) = if trans_a {
        (elem(a_shape, 0)?, elem(a_shape, 1)?)
    } else {
        (elem(a_shape, 1)?, elem(a_shape, 0)?)
    };
    let n = if trans_b {
        elem(b_shape, 1)?
    } else {
        elem(b_shape, 0)?
    };
    let bias = !item(ci, 14, "Concrete Inputs")?.is_empty();
    let types = Rec::new(input).types()?;
    let dtypes = vec![
        item(types, 0, "Input type")?.clone(),
        item(types, 5, "Input type")?.clone(),
        item(types, 10, "Input type")?.clone(),
        item(types, 18, "Input type")?.clone(),
    ];
    let strides = strides_pair(input, 0, 5, false)?;
    Ok(Gemm::two_d(
        (m, n, k),
        bias,
        strides,
        dtypes,
        BytesRule::TexTs,
    ))
}

/// `vllm::gemm_with_dynamic_quant`: A and B are the first two 2-element
/// shapes; `M = A[0]`, `K = A[1]`, `N = B[0]`.
fn parse_vllm(input: &OpInput) -> ModelResult<Gemm> {
    let dims = input.dims.unwrap_or(&[]);
    let mut found = dims
        .iter()
        .filter(|v| matches!(v, ArgValue::List(a) if a.len() == 2));
    let (Some(a_shape), Some(b_shape)) = (found.next(), found.next()) else {
        return invalid("vllm::gemm_with_dynamic_quant missing 2D A,B shapes in Input Dims");
    };
    let m = elem(a_shape, 0)?;
    let k = elem(a_shape, 1)?;
    let n = elem(b_shape, 0)?;
    let types = input.types.as_deref().unwrap_or(&[]);
    if types.len() < 2 {
        return invalid("vllm::gemm_with_dynamic_quant missing A,B dtypes in 'Input type'");
    }
    let dtypes = types[..2].to_vec();
    let strides = strides_pair(input, 0, 1, false)?;
    Ok(Gemm::two_d(
        (m, n, k),
        false,
        strides,
        dtypes,
        BytesRule::FirstDtype,
    ))
}

/// `parse_bool` of the reference: `true`/`1` and `false`/`0`/empty.
fn parse_bool(s: &str) -> ModelResult<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" | "" => Ok(false),
        _ => invalid(format!("cannot parse {s:?} as a bool")),
    }
}

/// The optional dtype at `types[i]`.
fn opt_type(types: &[String], i: usize) -> Option<String> {
    types.get(i).cloned()
}

/// A scaled (fp8/fp4) GEMM of sizes `m`, `n`, `k` whose operands' dtypes
/// and strides sit at `a` and `b`, scale dtypes at `scales`: the 2-D params
/// plus the scale dtypes.
fn scaled_gemm(
    input: &OpInput,
    (m, n, k): (i64, i64, i64),
    (a, b): (usize, usize),
    scales: (usize, usize),
    rule: BytesRule,
) -> ModelResult<Gemm> {
    let types = Rec::new(input).types()?;
    let dtypes = vec![
        item(types, a, "Input type")?.clone(),
        item(types, b, "Input type")?.clone(),
    ];
    let scales = (opt_type(types, scales.0), opt_type(types, scales.1));
    let strides = strides_pair(input, a, b, true)?;
    let mut g = Gemm::two_d((m, n, k), false, strides, dtypes, rule);
    g.params
        .push(("dtype_scaleA", Py::opt_str(scales.0.as_deref())));
    g.params
        .push(("dtype_scaleB", Py::opt_str(scales.1.as_deref())));
    g.scales = scales;
    Ok(g)
}

/// `2·k`, the K of packed fp4 operands (two values per byte).
fn packed_k(k: i64) -> ModelResult<i64> {
    match k.checked_mul(2) {
        Some(v) => Ok(v),
        None => invalid("integer overflow"),
    }
}

/// `hipblaslt_gemm_fp8` / `hipblaslt_gemm_fp4` (A at 0, B at 2, flags at
/// concrete 5/6/7 with the transC swap); `fp4` doubles the packed K.
fn parse_hipblaslt(input: &OpInput, fp4: bool) -> ModelResult<Gemm> {
    let dims = Rec::new(input).dims()?;
    let ci = input.concrete.as_deref().unwrap_or(&[]);
    let mut a_shape = item(dims, 0, "Input Dims")?;
    let mut b_shape = item(dims, 2, "Input Dims")?;
    if !a_shape.is_list() || !b_shape.is_list() {
        return invalid("GEMM operand shape is not a list");
    }
    let flag = |i: usize| -> ModelResult<bool> {
        match ci.get(i) {
            Some(s) => parse_bool(s),
            None => Ok(false),
        }
    };
    let (mut trans_a, mut trans_b, trans_c) = (flag(5)?, flag(6)?, flag(7)?);
    if trans_c {
        std::mem::swap(&mut a_shape, &mut b_shape);
        (trans_a, trans_b) = (!trans_b, !trans_a);
    }
    let m = if trans_a {
        elem(a_shape, 1)?
    } else {
        elem(a_shape, 0)?
    };
    let mut k = if trans_a {
        elem(a_shape, 0)?
    } else {
        elem(a_shape, 1)?
    };
    if fp4 {
        k = packed_k(k)?;
    }
    let n = if trans_b {
        elem(b_shape, 0)?
    } else {
        elem(b_shape, 1)?
    };
    let rule = if fp4 { BytesRule::Fp4 } else { BytesRule::Fp8 };
    scaled_gemm(input, (m, n, k), (0, 2), (1, 3), rule)
}

/// `aiter::gemm_a4w4`: NT layout, A at 0, B at 1, scales at 2/3.
fn parse_aiter_a4w4(input: &OpInput) -> ModelResult<Gemm> {
    let dims = Rec::new(input).dims()?;
    // Missing dtypes fail before the shapes are looked at.
    Rec::new(input).types()?;
    let a_shape = item(dims, 0, "Input Dims")?;
    let b_shape = item(dims, 1, "Input Dims")?;
    if !a_shape.is_list() || !b_shape.is_list() {
        return invalid("GEMM operand shape is not a list");
    }
    let m = elem(a_shape, 0)?;
    let k = packed_k(elem(a_shape, 1)?)?;
    let n = elem(b_shape, 0)?;
    scaled_gemm(input, (m, n, k), (0, 1), (2, 3), BytesRule::Fp4)
}

// ---------------------------------------------------------------------------
// FLOPs and bytes.
// ---------------------------------------------------------------------------

/// `2·M·N·K + (M·N if bias)`.
pub(crate) fn base_flops(m: i128, n: i128, k: i128, bias: bool) -> ModelResult<i128> {
    let mm = mul_all(&[2, m, n, k])?;
    add(mm, if bias { mul(m, n)? } else { 0 })
}

/// The base byte formula; None when any size is unknown.
#[allow(clippy::too_many_arguments)]
pub(crate) fn base_bytes(
    m: i128,
    n: i128,
    k: i128,
    bias: bool,
    a: Option<i128>,
    b: Option<i128>,
    bias_bpe: Option<i128>,
    out: Option<i128>,
) -> ModelResult<Option<i128>> {
    let (Some(a), Some(b), Some(bb), Some(o)) = (a, b, bias_bpe, out) else {
        return Ok(None);
    };
    let total = add(mul_all(&[m, k, a])?, mul_all(&[k, n, b])?)?;
    let total = add(total, mul_all(&[m, n, o])?)?;
    Ok(Some(add(total, mul(if bias { n } else { 0 }, bb)?)?))
}

/// `dtype_A_B[i]`, an `IndexError` when the tuple is shorter.
fn dtype_at(g: &Gemm, i: usize) -> ModelResult<&str> {
    item(&g.dtypes, i, "dtype_A_B").map(String::as_str)
}

/// Bytes moved by the parsed GEMM, per its class's rule.
fn gemm_bytes(g: &Gemm) -> ModelResult<Option<i128>> {
    let (m, n, k) = (g.m as i128, g.n as i128, g.k as i128);
    let bytes = match g.rule {
        BytesRule::FirstDtype => {
            dtype_at(g, 1)?;
            let p = bpe(Some(dtype_at(g, 0)?));
            base_bytes(m, n, k, g.bias, p, p, p, p)?
        }
        BytesRule::ScaledMm => {
            let pa = bpe(Some(dtype_at(g, 0)?));
            let pb = bpe(Some(dtype_at(g, 1)?));
            let (Some(pa), Some(_)) = (pa, pb) else {
                return invalid("Data types of A and B are not supported");
            };
            let out = match pa {
                1 => Some(2),
                2 | 4 => Some(pa),
                _ => None,
            };
            base_bytes(m, n, k, g.bias, Some(pa), Some(pa), Some(pa), out)?
        }
        BytesRule::TexTs => {
            let p = |i: usize| -> ModelResult<Option<i128>> { Ok(bpe(Some(dtype_at(g, i)?))) };
            base_bytes(m, n, k, g.bias, p(0)?, p(1)?, p(3)?, p(2)?)?
        }
        BytesRule::Tev2 => {
            if dtype_at(g, 0)? != dtype_at(g, 1)? {
                return invalid("Data types of A and B are different");
            }
            let p = bpe(Some(dtype_at(g, 0)?));
            base_bytes(m, n, k, g.bias, p, p, p, Some(2))?
        }
        BytesRule::Fp8 => {
            let pa = bpe(Some(dtype_at(g, 0)?));
            let pb = bpe(Some(dtype_at(g, 1)?));
            let (Some(pa), Some(pb)) = (pa, pb) else {
                return invalid("Data types of A and B are not supported");
            };
            let out = if pa == 1 { 2 } else { pa };
            base_bytes(m, n, k, g.bias, Some(pa), Some(pb), Some(pa), Some(out))?
        }
        BytesRule::Fp4 => {
            let pa = bpe(Some(dtype_at(g, 0)?));
            let pb = bpe(Some(dtype_at(g, 1)?));
            let (Some(pa), Some(pb)) = (pa, pb) else {
                return invalid("Data types of A and B are not supported");
            };
            let scales_per_row = floor_div(add(k, 31)?, 32)?;
            let half_k = floor_div(k, 2)?;
            let sa = bpe(g.scales.0.as_deref()).unwrap_or(1);
            let sb = bpe(g.scales.1.as_deref()).unwrap_or(1);
            let total = add(mul_all(&[m, half_k, pa])?, mul_all(&[n, half_k, pb])?)?;
            let total = add(total, mul_all(&[m, scales_per_row, sa])?)?;
            let total = add(total, mul_all(&[n, scales_per_row, sb])?)?;
            Some(add(total, mul_all(&[m, n, 2])?)?)
        }
    };
    match (g.batch, bytes) {
        (Some(b), Some(x)) => Ok(Some(mul(b as i128, x)?)),
        (_, x) => Ok(x),
    }
}

/// The GEMM classes of the reference's core: which parser reads M, N, K.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `aten::mm`: A, B at slots 0, 1.
    Mm,
    /// `aten::addmm`: bias at 0, A, B at 1, 2.
    Addmm,
    /// `aten::_scaled_mm` and its aliases.
    ScaledMm,
    /// `aten::bmm`.
    Bmm,
    /// `tex_ts::te_gemm_ts`.
    TexTs,
    /// `aten::baddbmm`: bias at 0, batched A, B at 1, 2.
    Baddbmm,
    /// `vllm::gemm_with_dynamic_quant`.
    VllmDynamicQuant,
    /// TransformerEngine v2 pseudo GEMMs.
    Tev2Pseudo,
    /// hipBLASLt FP8 GEMM.
    HipblasltFp8,
    /// hipBLASLt FP4 GEMM.
    HipblasltFp4,
    /// aiter A4W4 GEMM.
    AiterA4w4,
}

/// Evaluates a GEMM-family model of kind `kind` on `input`.
///
/// Every GEMM class raises `NotImplementedError` for its backward, so
/// `bwd == true` yields [`ModelError::NotImplemented`] once the arguments
/// parse.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let transpose = transpose_of(&input.kernel_names)?;
    let mut g = match kind {
        Kind::Mm => parse_2d(input, 0, 1, Some(false), BytesRule::FirstDtype)?,
        Kind::Addmm => {
            item(Rec::new(input).dims()?, 0, "Input Dims")?;
            parse_2d(input, 1, 2, Some(true), BytesRule::FirstDtype)?
        }
        Kind::ScaledMm => parse_2d(input, 0, 1, None, BytesRule::ScaledMm)?,
        Kind::Tev2Pseudo => parse_2d(input, 0, 1, Some(false), BytesRule::Tev2)?,
        Kind::Bmm => parse_batched(input, 0, 1, false)?,
        Kind::Baddbmm => {
            item(Rec::new(input).dims()?, 0, "Input Dims")?;
            parse_batched(input, 1, 2, true)?
        }
        Kind::TexTs => parse_tex_ts(input)?,
        Kind::VllmDynamicQuant => parse_vllm(input)?,
        Kind::HipblasltFp8 => parse_hipblaslt(input, false)?,
        Kind::HipblasltFp4 => parse_hipblaslt(input, true)?,
        Kind::AiterA4w4 => parse_aiter_a4w4(input)?,
    };
    if !g.params.iter().any(|(k, _)| *k == "B") {
        g.params.push(("B", Py::Int(1)));
    }
    if let Some(t) = transpose {
        g.params.push(("transpose", t));
    }
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    let mut flops = base_flops(g.m as i128, g.n as i128, g.k as i128, g.bias)?;
    if let Some(b) = g.batch {
        flops = mul(b as i128, flops)?;
    }
    let bytes = gemm_bytes(&g)?;
    let precision = precision_of(Some(dtype_at(&g, 0)?));
    Ok(Evaluation {
        params: g.params,
        flops: flops as f64,
        bytes: bytes.map(|b| b as f64),
        maf: Some(Maf::Matrix),
        precision,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{
        assert_keys, evaluate, is_invalid, op_input, param, shapes_input,
    };
    use super::*;
    use crate::test_support::arg;

    const BF16: &str = "c10::BFloat16";

    #[test]
    fn addmm_bf16() {
        let inp = op_input(
            "aten::addmm",
            arg!([[512], [141, 512], [512, 512], [], []]),
            &[BF16, BF16, BF16, "Scalar", "Scalar"],
            Some(arg!([[1], [512, 1], [1, 512], [], []])),
            &["", "", "", "1", "1"],
        );
        let e = evaluate("aten_addmm", &inp, false).unwrap();
        // 2*141*512*512 + 141*512 = 73924608 + 72192
        assert_eq!(e.flops, 73_996_800.0);
        // (141*512 + 512*512 + 141*512 + 512) * 2 = (72192+262144+72192+512)*2
        assert_eq!(e.bytes, Some(814_080.0));
        assert_keys(&e, "M N K bias stride_A stride_B dtype_A_B B");
        assert_eq!(param(&e, "stride_A").to_str(), "(512, 1)");
        assert_eq!(param(&e, "stride_B").to_str(), "(1, 512)");
        assert_eq!(
            param(&e, "dtype_A_B").to_str(),
            "('c10::BFloat16', 'c10::BFloat16')"
        );
        assert_eq!(param(&e, "bias").to_str(), "True");
        assert_eq!(param(&e, "B").to_str(), "1");
        assert_eq!(e.compute_spec(), "matrix_bf16");
    }

    #[test]
    fn addmm_uses_a_dtype_for_every_operand() {
        // A bf16, B float: bytes still all 2 bytes/element.
        let inp = shapes_input(
            "aten::addmm",
            arg!([[4], [2, 3], [3, 4], [], []]),
            &["float", BF16, "float", "Scalar", "Scalar"],
        );
        let e = evaluate("aten_addmm", &inp, false).unwrap();
        // 2*2*4*3 + 2*4 = 48 + 8
        assert_eq!(e.flops, 56.0);
        // (2*3 + 3*4 + 2*4 + 4) * 2 = (6+12+8+4)*2
        assert_eq!(e.bytes, Some(60.0));
        assert_eq!(param(&e, "stride_A"), &Py::None);
        assert_eq!(param(&e, "stride_B"), &Py::None);
        assert_eq!(e.compute_spec(), "matrix_bf16");
    }

    #[test]
    fn mm_with_tensile_transpose() {
        let k = "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT128x224x64_MI16x16x1";
        let inp = OpInput {
            kernel_names: vec!["Memset (Device)", k],
            ..op_input(
                "aten::mm",
                arg!([[8944, 1024], [1024, 2816]]),
                &[BF16, BF16],
                Some(arg!([[1024, 1], [1, 1024]])),
                &["", ""],
            )
        };
        let e = evaluate("aten_mm", &inp, false).unwrap();
        // 2*8944*1024*2816
        assert_eq!(e.flops, 51_581_550_592.0);
        // (8944*1024 + 1024*2816 + 8944*2816) * 2 = (9158656+2883584+25186304)*2
        assert_eq!(e.bytes, Some(74_457_088.0));
        assert_keys(&e, "M N K bias stride_A stride_B dtype_A_B B transpose");
        assert_eq!(param(&e, "transpose").to_str(), "(True, False)");
        assert_eq!(param(&e, "bias").to_str(), "False");
    }

    #[test]
    fn transpose_variants() {
        let t = |n: &str| kernel_transpose(n).unwrap().map(|p| p.to_str());
        assert_eq!(
            t("Cijk_Ailk_Bjlk_SB_MT64").as_deref(),
            Some("(False, True)")
        );
        assert_eq!(
            t("Custom_Cijk_Ailk_Bljk_x").as_deref(),
            Some("(False, False)")
        );
        assert_eq!(t("Cijk_Axyz_Bxyz_x").as_deref(), Some("(None, None)"));
        assert_eq!(
            t("nvjet_hsh_64x8_64x16_2x1_v_bz_TNT").as_deref(),
            Some("(True, False)")
        );
        assert_eq!(t("nvjet_hsh_NT").as_deref(), Some("(False, True)"));
        assert_eq!(t("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn"), None);
        assert!(is_invalid(&kernel_transpose("nvjet_x_T")));
        assert!(is_invalid(&kernel_transpose("nvjet_")));
    }

    #[test]
    fn bmm_and_baddbmm() {
        let inp = op_input(
            "aten::bmm",
            arg!([[12, 197, 64], [12, 64, 197]]),
            &[BF16, BF16],
            Some(arg!([[12608, 64, 1], [12608, 1, 64]])),
            &["", ""],
        );
        let e = evaluate("aten_bmm", &inp, false).unwrap();
        // 12 * 2*197*197*64 = 12 * 4967552
        assert_eq!(e.flops, 59_610_624.0);
        // 12 * (197*64 + 64*197 + 197*197) * 2 = 12 * (12608+12608+38809) * 2
        assert_eq!(e.bytes, Some(1_536_600.0));
        assert_keys(&e, "B M N K bias stride_A stride_B dtype_A_B");
        assert_eq!(param(&e, "B"), &Py::Int(12));

        let inp = op_input(
            "aten::baddbmm",
            arg!([[2, 3, 5], [2, 3, 4], [2, 4, 5], [], []]),
            &["float", "float", "float", "Scalar", "Scalar"],
            Some(arg!([[15, 5, 1], [12, 4, 1], [20, 5, 1], [], []])),
            &["", "", "", "1", "1"],
        );
        let e = evaluate("aten_baddbmm", &inp, false).unwrap();
        // 2 * (2*3*5*4 + 3*5) = 2 * (120 + 15)
        assert_eq!(e.flops, 270.0);
        // 2 * (3*4*4 + 4*5*4 + 3*5*4 + 5*4) = 2 * (48+80+60+20)
        assert_eq!(e.bytes, Some(416.0));
        assert_eq!(param(&e, "stride_A").to_str(), "(12, 4, 1)");
        assert_eq!(e.compute_spec(), "matrix_fp32");

        // A non-3-D operand cannot be unpacked.
        let bad = shapes_input("aten::bmm", arg!([[3, 4], [4, 5]]), &[BF16, BF16]);
        assert!(is_invalid(&evaluate("aten_bmm", &bad, false)));
    }

    #[test]
    fn scaled_mm_bias_and_output_size() {
        let fp8 = "c10::Float8_e4m3fn";
        // 8 recorded arguments: bias is False even with a bias tensor.
        let inp = op_input(
            "aten::_scaled_mm",
            arg!([[16, 32], [32, 64], [], [], [64], [], [], []]),
            &[fp8, fp8, "float", "float", BF16, "", "", "Scalar"],
            Some(arg!([[32, 1], [1, 32], [], [], [1], [], [], []])),
            &[],
        );
        let e = evaluate("aten_scaled_mm", &inp, false).unwrap();
        assert_eq!(param(&e, "bias"), &Py::Bool(false));
        // 2*16*64*32
        assert_eq!(e.flops, 65_536.0);
        // 16*32*1 + 32*64*1 + 16*64*2 (fp8 -> 2-byte output) = 512+2048+2048
        assert_eq!(e.bytes, Some(4_608.0));
        assert_eq!(e.compute_spec(), "matrix_fp8");

        // Exactly three arguments: bias True.
        let inp = shapes_input(
            "trtllm::cublas_scaled_mm",
            arg!([[2, 3], [3, 4], [4]]),
            &["float", "float", "float"],
        );
        let e = evaluate("aten_scaled_mm", &inp, false).unwrap();
        // 2*2*4*3 + 2*4 = 48 + 8
        assert_eq!(e.flops, 56.0);
        // (2*3 + 3*4 + 2*4 + 4) * 4 = 30*4
        assert_eq!(e.bytes, Some(120.0));

        // Unknown dtype size fails the assertion.
        let inp = shapes_input(
            "aten::_scaled_mm",
            arg!([[2, 3], [3, 4]]),
            &["bool", "bool"],
        );
        assert!(is_invalid(&evaluate("aten_scaled_mm", &inp, false)));
        // double: output size unknown -> bytes None.
        let inp = shapes_input(
            "aten::_scaled_mm",
            arg!([[2, 3], [3, 4]]),
            &["double", "double"],
        );
        assert_eq!(evaluate("aten_scaled_mm", &inp, false).unwrap().bytes, None);
    }

    #[test]
    fn tex_ts_te_gemm() {
        let mut dims = vec![arg!([]); 19];
        dims[0] = arg!([64, 128]); // A: (K, M) since transA is 0
        dims[5] = arg!([256, 64]); // B: (N, K) since transB is 0
        dims[10] = arg!([128, 256]);
        let mut types = vec![""; 19];
        types[0] = "c10::Float8_e4m3fnuz";
        types[5] = "c10::Float8_e4m3fnuz";
        types[10] = BF16;
        types[18] = BF16;
        let mut ci = vec![""; 19];
        ci[4] = "0";
        ci[9] = "0";
        ci[14] = "x";
        let inp = op_input(
            "tex_ts::te_gemm_ts",
            ArgValue::list(dims),
            &types,
            None,
            &ci,
        );
        let e = evaluate("tex_ts_te_gemm_ts", &inp, false).unwrap();
        assert_eq!(
            (param(&e, "M"), param(&e, "N"), param(&e, "K")),
            (&Py::Int(128), &Py::Int(256), &Py::Int(64))
        );
        // 2*128*256*64 + 128*256 = 4194304 + 32768
        assert_eq!(e.flops, 4_227_072.0);
        // 128*64*1 + 64*256*1 + 128*256*2 + 256*2 = 8192+16384+65536+512
        assert_eq!(e.bytes, Some(90_624.0));
        assert_eq!(e.compute_spec(), "matrix_fp8");
        assert_eq!(
            param(&e, "dtype_A_B").to_str(),
            "('c10::Float8_e4m3fnuz', 'c10::Float8_e4m3fnuz', 'c10::BFloat16', 'c10::BFloat16')"
        );
    }

    #[test]
    fn vllm_and_tev2() {
        let inp = op_input(
            "vllm::gemm_with_dynamic_quant",
            arg!([[], [8, 64], [], [32, 32]]),
            &[BF16, "unsigned char", "", ""],
            Some(arg!([[], [64, 1], [], [32, 1]])),
            &[],
        );
        let e = evaluate("vllm_gemm_with_dynamic_quant", &inp, false).unwrap();
        // M=8, K=64, N=32: 2*8*32*64
        assert_eq!(e.flops, 32_768.0);
        // (8*64 + 64*32 + 8*32) * 2 = (512+2048+256)*2
        assert_eq!(e.bytes, Some(5_632.0));
        // Strides are read from slots 0 and 1, whatever the shapes' slots.
        assert_eq!(param(&e, "stride_A").to_str(), "()");
        let none = shapes_input(
            "vllm::gemm_with_dynamic_quant",
            arg!([[8, 64]]),
            &[BF16, BF16],
        );
        assert!(evaluate("vllm_gemm_with_dynamic_quant", &none, false).is_err());

        let inp = shapes_input(
            "_Linear_yfwd_mm",
            arg!([[4, 8], [8, 16]]),
            &["float", "float"],
        );
        let e = evaluate("tev2_pseudo_gemm", &inp, false).unwrap();
        // 2*4*16*8
        assert_eq!(e.flops, 1_024.0);
        // 4*8*4 + 8*16*4 + 4*16*2 (output fixed 2 bytes) = 128+512+128
        assert_eq!(e.bytes, Some(768.0));
        let mixed = shapes_input("_Linear_yfwd_mm", arg!([[4, 8], [8, 16]]), &["float", BF16]);
        assert!(is_invalid(&evaluate("tev2_pseudo_gemm", &mixed, false)));
    }

    #[test]
    fn hipblaslt_fp8_with_trans_c() {
        let fp8 = "c10::Float8_e4m3fnuz";
        // transC swaps A and B and flips their flags: A'=(32, 16) transA'=!transB=True.
        let inp = op_input(
            "primus_turbo::hipblaslt_gemm_fp8",
            arg!([[64, 16], [], [32, 16], [], [], [], [], [], []]),
            &[
                fp8, "float", fp8, "float", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar",
            ],
            Some(arg!([[16, 1], [], [16, 1], [], [], [], [], [], []])),
            &["", "", "", "", "5", "false", "false", "true", ""],
        );
        let e = evaluate("hipblaslt_gemm_fp8", &inp, false).unwrap();
        // A' = [32, 16] transposed: M = 16, K = 32; B' = [64, 16] transB' = True: N = 64
        assert_eq!(
            (param(&e, "M"), param(&e, "N"), param(&e, "K")),
            (&Py::Int(16), &Py::Int(64), &Py::Int(32))
        );
        // 2*16*64*32
        assert_eq!(e.flops, 65_536.0);
        // 16*32*1 + 32*64*1 + 16*64*2 = 512+2048+2048
        assert_eq!(e.bytes, Some(4_608.0));
        assert_eq!(param(&e, "dtype_scaleA").to_str(), "float");
        assert_keys(
            &e,
            "M N K bias stride_A stride_B dtype_A_B dtype_scaleA dtype_scaleB B",
        );
    }

    #[test]
    fn fp4_gemms() {
        let fp4 = "c10::Float4_e2m1fn_x2";
        let e8 = "c10::Float8_e8m0fnu";
        let inp = op_input(
            "primus_turbo::hipblaslt_gemm_fp4",
            arg!([[128, 64], [128, 4], [256, 64], [256, 4], [], [], [], [], []]),
            &[
                fp4, e8, fp4, e8, "Scalar", "Scalar", "Scalar", "Scalar", "Scalar",
            ],
            None,
            &["", "", "", "", "", "0", "1", "0", ""],
        );
        let e = evaluate("hipblaslt_gemm_fp4", &inp, false).unwrap();
        // M = 128, K = 2*64 = 128, N = B[0] = 256 (transB)
        assert_eq!(param(&e, "K"), &Py::Int(128));
        // 2*128*256*128
        assert_eq!(e.flops, 8_388_608.0);
        // 128*64*1 + 256*64*1 + 128*4*1 + 256*4*1 + 2*128*256
        // = 8192 + 16384 + 512 + 1024 + 65536
        assert_eq!(e.bytes, Some(91_648.0));
        assert_eq!(e.compute_spec(), "matrix_fp4");

        let inp = op_input(
            "aiter::gemm_a4w4",
            arg!([[128, 64], [256, 64], [128, 4], [256, 4], [], [], [], [], []]),
            &[
                fp4, fp4, "weird", "", "", "Scalar", "Scalar", "Scalar", "Scalar",
            ],
            Some(arg!([[64, 1], [64, 1], [4, 1], [4, 1]])),
            &[],
        );
        let e = evaluate("aiter_gemm_a4w4", &inp, false).unwrap();
        assert_eq!(e.flops, 8_388_608.0);
        // unknown scale sizes default to 1 byte: same total as above
        assert_eq!(e.bytes, Some(91_648.0));
        assert_eq!(param(&e, "stride_B").to_str(), "(64, 1)");
    }

    #[test]
    fn failures_and_backward() {
        let ok = shapes_input("aten::mm", arg!([[2, 3], [3, 4]]), &[BF16, BF16]);
        assert_eq!(
            evaluate("aten_mm", &ok, true).unwrap_err(),
            ModelError::NotImplemented
        );
        assert!(is_invalid(&evaluate("nope", &ok, false)));
        let no_dims = OpInput {
            name: "aten::mm",
            ..Default::default()
        };
        assert!(is_invalid(&evaluate("aten_mm", &no_dims, false)));
        // Strides present but too short: IndexError, not the KeyError fallback.
        let short = op_input(
            "aten::mm",
            arg!([[2, 3], [3, 4]]),
            &[BF16, BF16],
            Some(arg!([[3, 1]])),
            &[],
        );
        assert!(is_invalid(&evaluate("aten_mm", &short, false)));
        // Nested (TensorList) or missing shapes never panic.
        let nested = shapes_input("aten::mm", arg!([[[2, 3]], []]), &[BF16, BF16]);
        assert!(evaluate("aten_mm", &nested, false).is_err());
        let one_type = shapes_input("aten::mm", arg!([[2, 3], [3, 4]]), &[BF16]);
        assert!(evaluate("aten_mm", &one_type, false).is_err());
        // Unknown dtype: bytes None, no precision.
        let b = shapes_input("aten::mm", arg!([[2, 3], [3, 4]]), &["bool", "bool"]);
        let e = evaluate("aten_mm", &b, false).unwrap();
        assert_eq!(e.bytes, None);
        assert_eq!(e.compute_spec(), "");
    }

    #[test]
    fn exact_int_floor_division() {
        assert_eq!(floor_div(-7, 2).unwrap(), -4);
        assert_eq!(floor_div(7, 2).unwrap(), 3);
        assert!(floor_div(1, 0).is_err());
    }
}
