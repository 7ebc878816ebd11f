//! Analytical FLOP and byte models of ops: one module per op family, each
//! a set of small pure functions from an op's recorded arguments to its
//! parameters, FLOPs and bytes moved.
//!
//! Dispatch: [`lookup`] finds the reference's model class for an op name
//! (a row of [`table::CLASSES`]); [`evaluate`] runs the model the row
//! carries. Compiled Triton kernels, which no table names, have [`triton`].

pub mod activation;
pub mod annotation;
pub mod collective;
pub mod conv;
pub mod cross_entropy;
pub mod elementwise;
pub mod gemm;
pub mod gemm_ext;
pub mod group_quant;
pub mod grouped_gemm;
pub mod inference_attention;
pub mod known_aten_ops;
pub mod mhc;
pub mod moe;
pub mod moe_aux;
pub mod norm;
pub mod py;
mod pyval;
pub mod reduce;
#[cfg(test)]
mod registry_walk;
pub mod rmsnorm_ext;
pub mod rope;
pub mod sdpa;
pub mod ssm;
pub mod table;
pub mod triton;

use rustc_hash::FxHashMap as HashMap;
use std::sync::OnceLock;

pub use py::Py;

use crate::trace::ArgValue;

pub use table::{Family, Model, ModelClass};

fn by_name() -> &'static HashMap<&'static str, &'static ModelClass> {
    static MAP: OnceLock<HashMap<&'static str, &'static ModelClass>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut m = HashMap::default();
        for c in table::CLASSES {
            for &op in c.ops {
                m.insert(op, c);
            }
        }
        m
    })
}

/// The model class of an op name (exact match), if it has one.
pub fn lookup(name: &str) -> Option<&'static ModelClass> {
    by_name().get(name).copied()
}

/// True for compiled Triton kernels' ops (`triton_poi_*`, `triton_red_*`,
/// `triton_per_*`), which the reference models with its Triton matcher in the
/// unified table only.
pub fn is_triton_compiled(name: &str) -> bool {
    name.starts_with("triton_poi_")
        || name.starts_with("triton_red_")
        || name.starts_with("triton_per_")
}

/// An op's recorded arguments, parsed from the trace (`record_shapes=True`).
#[derive(Debug, Clone, Default)]
pub struct OpInput<'a> {
    /// Op name, e.g. `aten::addmm`.
    pub name: &'a str,
    /// `Input Dims`: one value per argument (a shape list, `[]` for
    /// non-tensors, a list of shapes for tensor lists). None when absent.
    pub dims: Option<&'a [ArgValue]>,
    /// `Input type`: one dtype string per argument. None when absent.
    pub types: Option<Vec<String>>,
    /// `Input Strides`, parallel to `dims`. None when absent.
    pub strides: Option<&'a [ArgValue]>,
    /// `Concrete Inputs`: one string per argument. None when absent.
    pub concrete: Option<Vec<String>>,
    /// Names of the op's GPU kernels in start-time order (GEMM transpose
    /// detection, MoE weight dtypes).
    pub kernel_names: Vec<&'a str>,
    /// Name of the `user_annotation` range enclosing the op, for the ops the
    /// reference annotates (inference attention reads its chunk statistics
    /// from it); None when not annotated.
    pub annotation: Option<&'a str>,
    /// Other args of the event by key, e.g. `MoE topk` and `MoE GEMM gated`
    /// of the MoE pseudo ops (empty for ordinary trace events).
    pub extra: &'a [(Box<str>, ArgValue)],
    /// For the fused backward ops (`ConvBias_Backward`, …), which record no
    /// shapes: the forward op whose shapes the reference reuses (the last
    /// earlier one of the forward name with the same sequence number).
    pub forward: Option<Box<OpInput<'a>>>,
}

impl<'a> OpInput<'a> {
    /// The extra arg `key`, if the event has it.
    pub fn extra_arg(&self, key: &str) -> Option<&'a ArgValue> {
        self.extra.iter().find(|(k, _)| &**k == key).map(|(_, v)| v)
    }
}

/// Why a model produced no numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelError {
    /// The reference raises `NotImplementedError`: the row silently disappears.
    NotImplemented,
    /// Any other failure (missing argument, bad shape, dtype mismatch): the
    /// reference drops the row from roofline sheets and keeps it without
    /// metrics in `unified_perf_summary`.
    Invalid(String),
}

/// Shorthand for model results.
pub type ModelResult<T> = Result<T, ModelError>;

/// The units an op's FLOPs run on, which picks the peak of its roofline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maf {
    /// Matrix (tensor) cores: GEMMs, convolutions, attention.
    Matrix,
    /// Vector units: elementwise, normalization, reductions.
    Vector,
}

impl Maf {
    /// The text the `Compute Spec` column starts with.
    pub fn name(self) -> &'static str {
        match self {
            Maf::Matrix => "matrix",
            Maf::Vector => "vector",
        }
    }
}

/// The compute precision of an op, which picks the peak of its roofline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// `fp64`.
    Fp64,
    /// `fp32`.
    Fp32,
    /// `fp16`.
    Fp16,
    /// `bf16`.
    Bf16,
    /// `fp8`.
    Fp8,
    /// `fp4`.
    Fp4,
    /// A compiled Triton kernel's `c10::` dtype, printed by its short name
    /// (`bfloat16`, `half`, `float`, …), as the reference's Triton matcher
    /// does.
    C10(&'static str),
}

impl Precision {
    /// The text after `<maf>_` in the `Compute Spec` column.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp64 => "fp64",
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Fp4 => "fp4",
            Precision::C10(name) => name,
        }
    }
}

/// What a model says about one op instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// `param: <key>` values in the reference's key order.
    pub params: Vec<(&'static str, Py)>,
    /// Floating-point operations (the reference's Python int or float).
    pub flops: f64,
    /// Bytes moved; None when a dtype size is unknown.
    pub bytes: Option<f64>,
    /// The units the FLOPs run on (None: no Compute Spec).
    pub maf: Option<Maf>,
    /// The compute precision of the primary dtype (None: no Compute Spec).
    pub precision: Option<Precision>,
}

impl Evaluation {
    /// The `Compute Spec` text: `<maf>_<precision>`, or empty.
    pub fn compute_spec(&self) -> String {
        match (self.maf, self.precision) {
            (Some(m), Some(p)) => format!("{}_{}", m.name(), p.name()),
            _ => String::new(),
        }
    }
}

/// Runs the model of `class` on `input`; `bwd` asks for the backward FLOPs
/// and bytes of a forward op (`flops_bwd`/`bytes_bwd`).
pub fn evaluate(class: &ModelClass, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    class.model.evaluate(input, bwd)
}

/// Bytes per element of a dtype string, case-insensitive.
pub fn bytes_per_element(dtype: Option<&str>) -> Option<f64> {
    let d = dtype?.to_ascii_lowercase();
    Some(match d.as_str() {
        "double" | "long int" => 8.0,
        "float" | "scalar" | "int" => 4.0,
        "c10::half" | "c10::bfloat16" => 2.0,
        "c10::float8_e4m3fnuz"
        | "c10::float8_e4m3fn"
        | "c10::float8_e5m2"
        | "c10::float8_e8m0fnu"
        | "unsigned char"
        | "signed char"
        | "fp8"
        | "c10::float4_e2m1fn_x2"
        | "fp4" => 1.0,
        _ => return None,
    })
}

/// Compute precision of a dtype string, case-insensitive.
pub fn precision_of(dtype: Option<&str>) -> Option<Precision> {
    let d = dtype?.to_ascii_lowercase();
    Some(match d.as_str() {
        "float" => Precision::Fp32,
        "double" => Precision::Fp64,
        "c10::half" => Precision::Fp16,
        "c10::bfloat16" => Precision::Bf16,
        "c10::float8_e4m3fnuz" | "c10::float8_e4m3fn" | "unsigned char" | "fp8" => Precision::Fp8,
        "fp4" | "mxfp4" | "c10::float4_e2m1fn_x2" => Precision::Fp4,
        _ => return None,
    })
}

/// Builders shared by the model families' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{Evaluation, ModelError, ModelResult, OpInput, Py, table};
    use crate::test_support::arg_value;
    use crate::trace::ArgValue;

    /// The elements of a list, leaked for the `'static` inputs of tests
    /// (None for anything else).
    pub(crate) fn arr(v: ArgValue) -> Option<&'static [ArgValue]> {
        match v {
            ArgValue::List(a) => Some(Box::leak(a)),
            _ => None,
        }
    }

    /// Owned strings.
    pub(crate) fn strs(v: &[&str]) -> Option<Vec<String>> {
        Some(v.iter().map(|s| s.to_string()).collect())
    }

    /// An op input from parsed argument lists (a list argument that is not
    /// a list is left absent), without kernel names.
    pub(crate) fn op_input(
        name: &'static str,
        dims: ArgValue,
        types: &[&str],
        strides: Option<ArgValue>,
        concrete: &[&str],
    ) -> OpInput<'static> {
        OpInput {
            name,
            dims: arr(dims),
            types: strs(types),
            strides: strides.and_then(arr),
            concrete: strs(concrete),
            ..Default::default()
        }
    }

    /// An op input with shapes and dtypes only (no strides, no concrete
    /// inputs).
    pub(crate) fn shapes_input(
        name: &'static str,
        dims: ArgValue,
        types: &[&str],
    ) -> OpInput<'static> {
        op_input(name, dims, types, None, &[])
    }

    /// The parameter `key` of an evaluation.
    pub(crate) fn param<'e>(e: &'e Evaluation, key: &str) -> &'e Py {
        &e.params
            .iter()
            .find(|(k, _)| *k == key)
            .unwrap_or_else(|| panic!("no param {key}"))
            .1
    }

    /// The parameter `key` of an evaluation as Python's `str` prints it.
    pub(crate) fn param_text(e: &Evaluation, key: &str) -> String {
        param(e, key).to_str()
    }

    /// The parameter names of an evaluation, in order.
    pub(crate) fn keys(e: &Evaluation) -> Vec<&'static str> {
        e.params.iter().map(|(k, _)| *k).collect()
    }

    /// The parameter names are `expected` (names separated by spaces).
    pub(crate) fn assert_keys(e: &Evaluation, expected: &str) {
        assert_eq!(keys(e), expected.split(' ').collect::<Vec<_>>());
    }

    /// Runs the model of the class named `class` (Invalid for a name the
    /// table lacks).
    pub(crate) fn evaluate(class: &str, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
        match table::CLASSES.iter().find(|c| c.class == class) {
            Some(c) => c.model.evaluate(input, bwd),
            None => Err(ModelError::Invalid(format!("no class {class}"))),
        }
    }

    /// The model refused the input ([`ModelError::Invalid`]).
    pub(crate) fn is_invalid<T>(r: &ModelResult<T>) -> bool {
        matches!(r, Err(ModelError::Invalid(_)))
    }

    /// An op input from JSON texts of its argument lists.
    pub(crate) fn test_input(
        name: &'static str,
        dims: &str,
        types: &[&str],
        strides: Option<&str>,
        concrete: &[&str],
    ) -> OpInput<'static> {
        let list = |s: &str| arr(arg_value(s)).expect("test JSON must be a list");
        OpInput {
            name,
            dims: Some(list(dims)),
            types: Some(types.iter().map(|s| s.to_string()).collect()),
            strides: strides.map(list),
            concrete: Some(concrete.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        }
    }
}
