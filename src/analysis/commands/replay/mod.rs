//! Event replay: a traced `cpu_op` turned into a call of the
//! same ATen overload on tensors of the recorded shapes, strides and dtypes.
//! This module matches the op's recorded arguments (`Input Dims`, `Input
//! type`, `Input Strides`, `Concrete Inputs`) against the bundled schema
//! table and builds the reference's replay IR (`get_repro_info()`); the
//! scripts that run it are written by `report::replay`.
//!
//! Differences from the reference, all in the direction of replaying more
//! (see docs/deviations.md): defaults holding commas parse; `Tensor(a)`
//! (views) and tensor types beyond its seven (int64 as `long int`, int8/16,
//! uint8, fp8, complex) are accepted, integer and bool tensors filled with
//! zeros (valid indices) instead of failing `normal_`; `int?`/`SymInt?`
//! with a value are passed as ints; an argument the trace did not record
//! (type `""`, e.g. every `str`) takes its schema default when it has a
//! literal one.

pub mod schema;

use crate::trace::{ArgValue, OpArgs};
use schema::{Schema, SchemaArg};

/// Tensor element types replay builds: the trace's `Input type` name and
/// the torch dtype (`torch.<name>`).
pub const DTYPES: &[(&str, &str)] = &[
    ("double", "float64"),
    ("float", "float32"),
    ("c10::Half", "float16"),
    ("c10::BFloat16", "bfloat16"),
    ("long", "int64"),
    ("long int", "int64"),
    ("int", "int32"),
    ("short int", "int16"),
    ("signed char", "int8"),
    ("unsigned char", "uint8"),
    ("bool", "bool"),
    ("c10::Float8_e4m3fn", "float8_e4m3fn"),
    ("c10::Float8_e5m2", "float8_e5m2"),
    ("c10::Float8_e4m3fnuz", "float8_e4m3fnuz"),
    ("c10::Float8_e5m2fnuz", "float8_e5m2fnuz"),
    ("c10::complex<float>", "complex64"),
    ("c10::complex<double>", "complex128"),
];

/// Profiled types that are not tensors.
const NON_TENSOR_TYPES: &[&str] = &["", "Scalar", "ScalarList", "TensorList", "GenericList"];

/// A tensor to build: the reference's `TensorCfg`.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorCfg {
    /// Sizes.
    pub shape: Vec<i64>,
    /// The trace's type name (`c10::BFloat16`); [`torch_dtype`] maps it.
    pub dtype: String,
    /// Strides as recorded; None: contiguous (not recorded).
    pub strides: Option<Vec<i64>>,
    /// `normal`, `zeros`, or None to leave the memory uninitialised.
    pub init: Option<&'static str>,
}

/// The value an argument is replayed with.
#[derive(Debug, Clone, PartialEq)]
pub enum IrValue {
    /// Python `None`.
    None,
    /// A bool.
    Bool(bool),
    /// An int.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string (a schema default).
    Str(String),
    /// A list of ints (also an empty list).
    Ints(Vec<i64>),
    /// A list of bools.
    Bools(Vec<bool>),
    /// A tensor.
    Tensor(TensorCfg),
}

/// One argument of the replay IR.
#[derive(Debug, Clone, PartialEq)]
pub struct IrArg {
    /// The schema's argument name.
    pub name: String,
    /// The schema's type text.
    pub ty: String,
    /// The value.
    pub value: IrValue,
}

/// An op ready to replay: the overload it calls and its arguments (the
/// reference's replay IR).
#[derive(Debug, Clone)]
pub struct ReplayOp {
    /// The traced op name (`aten::addmm`).
    pub op_name: String,
    /// The matched overload.
    pub schema: &'static Schema,
    /// Arguments before the schema's `*`.
    pub positional: Vec<IrArg>,
    /// Keyword-only arguments.
    pub keyword: Vec<IrArg>,
}

/// The recorded arguments of one op, as lists of equal length.
struct Recorded<'a> {
    dims: Vec<&'a ArgValue>,
    types: Vec<&'a str>,
    strides: Vec<Option<&'a ArgValue>>,
    concrete: Vec<&'a str>,
}

impl<'a> Recorded<'a> {
    fn of(args: &OpArgs<'a>) -> Result<Self, String> {
        let (Some(dims), Some(types)) = (
            args.dims.and_then(ArgValue::as_list),
            args.types.and_then(ArgValue::as_list),
        ) else {
            return Err("no recorded input shapes (profile with record_shapes=True)".to_string());
        };
        let n = types.len();
        let list = |v: Option<&'a ArgValue>| v.and_then(ArgValue::as_list).filter(|l| l.len() == n);
        let strides = list(args.strides);
        let concrete = list(args.concrete);
        if dims.len() != n {
            return Err("recorded shapes and types differ in length".to_string());
        }
        Ok(Recorded {
            dims: dims.iter().collect(),
            types: types.iter().map(|t| t.as_str().unwrap_or("")).collect(),
            strides: (0..n).map(|i| strides.map(|s| &s[i])).collect(),
            concrete: (0..n)
                .map(|i| concrete.and_then(|c| c[i].as_str()).unwrap_or(""))
                .collect(),
        })
    }
}

/// The torch dtype name of a trace's tensor type.
pub fn torch_dtype(trace_type: &str) -> Option<&'static str> {
    DTYPES
        .iter()
        .find(|(t, _)| *t == trace_type)
        .map(|&(_, d)| d)
}

fn is_tensor_type(base: &str) -> bool {
    base == "Tensor" || (base.starts_with("Tensor(") && base.ends_with(')'))
}

fn is_list_of(base: &str, elem: &[&str]) -> bool {
    elem.iter()
        .any(|e| base.starts_with(&format!("{e}[")) && base.ends_with(']'))
}

fn is_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn is_bool(s: &str) -> bool {
    matches!(s.to_ascii_lowercase().as_str(), "true" | "false")
}

/// The elements of a recorded list such as `[1, 2]`.
fn list_items(concrete: &str) -> Option<Vec<&str>> {
    let inner = concrete.trim().strip_prefix('[')?.strip_suffix(']')?;
    Some(
        inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

/// The schema default of an argument: a quoted string, a number or a
/// boolean (None for defaults such as `contiguous_format`).
fn default_value(arg: &SchemaArg) -> Option<IrValue> {
    let d = arg.default.as_deref()?;
    if let Some(s) = d.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return Some(IrValue::Str(s.to_string()));
    }
    match d {
        "True" => Some(IrValue::Bool(true)),
        "False" => Some(IrValue::Bool(false)),
        _ => d
            .parse::<i64>()
            .map(IrValue::Int)
            .or_else(|_| d.parse::<f64>().map(IrValue::Float))
            .ok(),
    }
}

/// A recorded shape or stride list as integers.
fn ints(v: &ArgValue) -> Option<Vec<i64>> {
    v.as_list()?.iter().map(ArgValue::as_i64).collect()
}

/// Why an argument does not fit an overload.
enum Mismatch {
    /// Try the next overload.
    No,
    /// A tensor list: no overload taking it can be replayed.
    TensorList,
}

/// Whether recorded argument `i` fits schema argument `arg`: the
/// reference's matching rules, with this module's extensions.
fn fits(arg: &SchemaArg, r: &Recorded, i: usize) -> Result<(), Mismatch> {
    let (ty, concrete) = (r.types[i], r.concrete[i]);
    let (base, optional) = match arg.ty.strip_suffix('?') {
        Some(b) => (b, true),
        None => (arg.ty.as_str(), false),
    };
    if optional && (ty.is_empty() || (ty == "ScalarList" && concrete == "[]")) {
        return Ok(());
    }
    if ty.is_empty() && default_value(arg).is_some() {
        // Not recorded (string arguments never are): its default.
        return Ok(());
    }
    let ok = if base.starts_with("Tensor[") || base.starts_with("Tensor(a)[") {
        return Err(Mismatch::TensorList);
    } else if is_tensor_type(base) {
        torch_dtype(ty).is_some()
    } else {
        match base {
            "bool" => is_bool(concrete),
            "int" | "SymInt" => ty == "Scalar" && is_int(concrete),
            "float" | "Scalar" => ty == "Scalar" && concrete.trim().parse::<f64>().is_ok(),
            _ if is_list_of(base, &["int", "SymInt"]) => {
                ty == "ScalarList"
                    && list_items(concrete).is_some_and(|l| l.iter().all(|s| is_int(s)))
            }
            _ if is_list_of(base, &["bool"]) => {
                ty == "ScalarList"
                    && list_items(concrete).is_some_and(|l| l.iter().all(|s| is_bool(s)))
            }
            _ => false,
        }
    };
    if ok { Ok(()) } else { Err(Mismatch::No) }
}

/// The IR value of recorded argument `i` for schema argument `arg`.
fn ir_value(op: &str, arg: &SchemaArg, r: &Recorded, i: usize) -> Result<IrValue, String> {
    let (ty, concrete) = (r.types[i], r.concrete[i]);
    let (base, optional) = match arg.ty.strip_suffix('?') {
        Some(b) => (b, true),
        None => (arg.ty.as_str(), false),
    };
    if optional && ty.is_empty() {
        return Ok(IrValue::None);
    }
    if optional && concrete == "[]" {
        return Ok(IrValue::Ints(Vec::new()));
    }
    if ty.is_empty()
        && let Some(v) = default_value(arg)
    {
        return Ok(v);
    }
    let bad = || {
        format!(
            "argument {} ({}): cannot read {concrete:?}",
            arg.name, arg.ty
        )
    };
    if is_tensor_type(base) {
        let dtype = torch_dtype(ty).unwrap_or("");
        // fill_ overwrites every tensor and copy_ its destination: leave
        // them uninitialised, as the reference does.
        let untouched = op == "aten::fill_" || (op == "aten::copy_" && arg.name != "src");
        let init = if untouched {
            None
        } else if dtype.contains("float") || dtype.starts_with("complex") {
            Some("normal")
        } else {
            Some("zeros")
        };
        let shape = ints(r.dims[i]).ok_or_else(|| {
            format!(
                "argument {}: recorded shape is not a list of integers",
                arg.name
            )
        })?;
        let strides = r.strides[i]
            .and_then(ints)
            .filter(|s| s.len() == shape.len());
        return Ok(IrValue::Tensor(TensorCfg {
            shape,
            dtype: ty.to_string(),
            strides,
            init,
        }));
    }
    Ok(match base {
        "bool" => IrValue::Bool(concrete.eq_ignore_ascii_case("true")),
        "int" | "SymInt" => IrValue::Int(concrete.parse::<i64>().map_err(|_| bad())?),
        "float" | "Scalar" => IrValue::Float(concrete.trim().parse::<f64>().map_err(|_| bad())?),
        _ if is_list_of(base, &["int", "SymInt"]) => {
            let items = list_items(concrete).ok_or_else(bad)?;
            let v: Result<Vec<i64>, _> = items.iter().map(|s| s.parse::<i64>()).collect();
            IrValue::Ints(v.map_err(|_| bad())?)
        }
        _ if is_list_of(base, &["bool"]) => {
            let items = list_items(concrete).ok_or_else(bad)?;
            IrValue::Bools(
                items
                    .iter()
                    .map(|s| s.eq_ignore_ascii_case("true"))
                    .collect(),
            )
        }
        _ => {
            return Err(format!(
                "argument {} of type {} is not replayed",
                arg.name, arg.ty
            ));
        }
    })
}

/// Matches op `name` with its recorded arguments against the schema table
/// and builds its replay IR; the error says why it cannot be replayed.
pub fn replay_op(name: &str, args: &OpArgs) -> Result<ReplayOp, String> {
    let recorded = Recorded::of(args)?;
    let Some(overloads) = schema::table().get(name) else {
        return Err(format!(
            "no ATen operator {name} (custom ops and non-ATen ops have no public entry point to call)"
        ));
    };
    let n = recorded.types.len();
    let mut tensor_list = false;
    'overloads: for s in overloads.iter().filter(|s| s.arity() == n) {
        for (i, arg) in s.args().enumerate() {
            match fits(arg, &recorded, i) {
                Ok(()) => {}
                Err(Mismatch::TensorList) => {
                    tensor_list = true;
                    continue 'overloads;
                }
                Err(Mismatch::No) => continue 'overloads,
            }
        }
        let values = |list: &'static [SchemaArg], first: usize| -> Result<Vec<IrArg>, String> {
            list.iter()
                .enumerate()
                .map(|(k, arg)| {
                    Ok(IrArg {
                        name: arg.name.clone(),
                        ty: arg.ty.clone(),
                        value: ir_value(name, arg, &recorded, first + k)?,
                    })
                })
                .collect()
        };
        return Ok(ReplayOp {
            op_name: name.to_string(),
            schema: s,
            positional: values(&s.positional, 0)?,
            keyword: values(&s.keyword, s.positional.len())?,
        });
    }
    if let Some(t) = recorded
        .types
        .iter()
        .find(|t| !NON_TENSOR_TYPES.contains(t) && torch_dtype(t).is_none())
    {
        return Err(format!("tensor dtype {t:?} is not supported"));
    }
    if tensor_list || recorded.types.contains(&"TensorList") {
        return Err(
            "takes a tensor list, which the trace does not record tensor by tensor".to_string(),
        );
    }
    let arities: Vec<String> = overloads.iter().map(|s| s.arity().to_string()).collect();
    Err(format!(
        "no overload of {name} fits the {n} recorded arguments (types {:?}; overloads take {} arguments)",
        recorded.types,
        arities.join("/")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::arg_value;

    fn op(dims: &str, types: &str, strides: &str, concrete: &str) -> [ArgValue; 4] {
        [
            arg_value(dims),
            arg_value(types),
            arg_value(strides),
            arg_value(concrete),
        ]
    }

    fn args(v: &[ArgValue; 4]) -> OpArgs<'_> {
        OpArgs {
            dims: Some(&v[0]),
            types: Some(&v[1]),
            strides: Some(&v[2]),
            concrete: Some(&v[3]),
        }
    }

    #[test]
    fn addmm_matches_the_default_overload() {
        // The reference's sample, from a resnet trace; its JSON form is
        // checked in report::replay.
        let v = op(
            r#"[[1000], [10, 512], [512, 1000], [], []]"#,
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
            r#"[[1], [512, 1], [1, 512], [], []]"#,
            r#"["", "", "", "1", "1"]"#,
        );
        let r = replay_op("aten::addmm", &args(&v)).unwrap();
        assert_eq!(r.schema.overload, "");
        assert_eq!(
            r.positional[2].value,
            IrValue::Tensor(TensorCfg {
                shape: vec![512, 1000],
                dtype: "c10::BFloat16".into(),
                strides: Some(vec![1, 512]),
                init: Some("normal"),
            })
        );
        assert_eq!(r.keyword[1].name, "alpha");
        assert_eq!(r.keyword[1].value, IrValue::Float(1.0));
    }

    #[test]
    fn overloads_are_told_apart_by_the_recorded_types() {
        // aten::add with a tensor `other` is add.Tensor; with a scalar, add.Scalar.
        let t = op(
            "[[4, 8], [4, 8], []]",
            r#"["float", "float", "Scalar"]"#,
            "[[8, 1], [8, 1], []]",
            r#"["", "", "1"]"#,
        );
        assert_eq!(
            replay_op("aten::add", &args(&t)).unwrap().schema.overload,
            "Tensor"
        );
        let s = op(
            "[[4, 8], [], []]",
            r#"["float", "Scalar", "Scalar"]"#,
            "[[8, 1], [], []]",
            r#"["", "2", "1"]"#,
        );
        assert_eq!(
            replay_op("aten::add", &args(&s)).unwrap().schema.overload,
            "Scalar"
        );
    }

    #[test]
    fn index_tensors_are_zeros_and_optional_args_none() {
        let v = op(
            "[[30522, 512], [1, 141], [], [], []]",
            r#"["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"]"#,
            "[[512, 1], [141, 1], [], [], []]",
            r#"["", "", "0", "False", "False"]"#,
        );
        let r = replay_op("aten::embedding", &args(&v)).unwrap();
        let IrValue::Tensor(indices) = &r.positional[1].value else {
            panic!("indices are a tensor")
        };
        assert_eq!(indices.init, Some("zeros"));
        assert_eq!(r.positional[2].value, IrValue::Int(0));
        assert_eq!(r.positional[3].value, IrValue::Bool(false));
    }

    #[test]
    fn refusals_say_why() {
        let v = op("[[2, 2]]", r#"["float"]"#, "[[2, 1]]", r#"[""]"#);
        assert!(
            replay_op("mylib::fused", &args(&v))
                .unwrap_err()
                .contains("no ATen operator")
        );
        let q = op(
            "[[2, 2], []]",
            r#"["c10::qint8", "Scalar"]"#,
            "[[2, 1], []]",
            r#"["", "1"]"#,
        );
        assert!(
            replay_op("aten::mul", &args(&q))
                .unwrap_err()
                .contains("c10::qint8")
        );
        let none = OpArgs::default();
        assert!(
            replay_op("aten::mm", &none)
                .unwrap_err()
                .contains("record_shapes")
        );
        // gelu's `approximate` is a str the profiler does not record: its default.
        let g = op(
            "[[2, 2], []]",
            r#"["float", ""]"#,
            "[[2, 1], []]",
            r#"["", ""]"#,
        );
        let gelu = replay_op("aten::gelu", &args(&g)).unwrap();
        assert_eq!(gelu.keyword[0].value, IrValue::Str("none".into()));
        let wrong = op("[[2, 2]]", r#"["float"]"#, "[[2, 1]]", r#"[""]"#);
        assert!(
            replay_op("aten::mm", &args(&wrong))
                .unwrap_err()
                .contains("no overload")
        );
    }
}
