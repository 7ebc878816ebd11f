//! A walk over the whole class table (test only): class and op names are
//! unique, and every class models one representative input — argument
//! shapes the reference accepts (each checked against the reference's own
//! result when this table was built) — without "not implemented".

use std::sync::OnceLock;

use serde::Deserialize;

use super::test_support::test_input;
use super::{ModelError, OpInput, evaluate, table};
use crate::test_support::{arg_value, json_lines};
use crate::trace::ArgValue;

/// One representative op of a class, as a trace records it: one line of
/// `testdata/perf_model_classes.jsonl`.
#[derive(Deserialize)]
struct Case {
    class: String,
    op: String,
    /// `Input Dims`, as JSON text.
    dims: String,
    /// `Input type`.
    types: Vec<String>,
    /// `Input Strides`, as JSON text.
    strides: String,
    /// `Concrete Inputs`.
    concrete: Vec<String>,
    /// Names of the op's kernels.
    kernels: Vec<String>,
    /// Extra args (pseudo ops): name and value as JSON text.
    extra: Vec<(String, String)>,
}

/// The cases, parsed once and kept for the whole test run (op inputs
/// borrow from them).
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| json_lines(include_str!("../../../testdata/perf_model_classes.jsonl")))
}

/// The step annotation the attention ops read their chunk statistics from.
const ANNOTATION: &str =
    "execute_140_context_2(sq16sk48sqsq160sqsk448)_generation_62(sq62sk9000sqsq62sqsk9000)";

/// Classes whose reference model raises `NotImplementedError` for every
/// input; they stay registered because the reference drops their rows from
/// `unified_perf_summary` too.
const NEVER_MODELLED: &[&str] = &["InstanceNormBwd"];

fn input(c: &'static Case) -> OpInput<'static> {
    let types: Vec<&str> = c.types.iter().map(String::as_str).collect();
    let concrete: Vec<&str> = c.concrete.iter().map(String::as_str).collect();
    let mut i = test_input(&c.op, &c.dims, &types, Some(&c.strides), &concrete);
    i.annotation = Some(ANNOTATION);
    i.kernel_names = c.kernels.iter().map(String::as_str).collect();
    let extra: Vec<(Box<str>, ArgValue)> = c
        .extra
        .iter()
        .map(|(k, v)| (Box::from(k.as_str()), arg_value(v)))
        .collect();
    i.extra = Box::leak(extra.into_boxed_slice());
    i
}

fn case(class: &str) -> &'static Case {
    cases()
        .iter()
        .find(|c| c.class == class)
        .unwrap_or_else(|| panic!("no representative input for {class}"))
}

#[test]
fn class_and_op_names_are_unique() {
    let mut classes = Vec::new();
    let mut ops = Vec::new();
    for c in table::CLASSES {
        assert!(
            !classes.contains(&c.class),
            "{} is registered twice",
            c.class
        );
        classes.push(c.class);
        for op in c.ops {
            assert!(!ops.contains(op), "{op} maps to two classes");
            ops.push(op);
        }
    }
}

#[test]
fn every_class_models_a_representative_input() {
    assert_eq!(cases().len(), table::CLASSES.len(), "one case per class");
    for class in table::CLASSES {
        let c = case(class.class);
        let mut i = input(c);
        if let Some(fwd) = class.class.strip_suffix("Backward")
            && class.class.starts_with("ConvBias")
        {
            i.forward = Some(Box::new(input(case(fwd))));
        }
        let got = evaluate(class, &i, false);
        if NEVER_MODELLED.contains(&class.class) {
            assert_eq!(got, Err(ModelError::NotImplemented), "{}", class.class);
            continue;
        }
        let e = got.unwrap_or_else(|err| panic!("{} on {}: {err:?}", class.class, c.op));
        assert!(e.flops.is_finite(), "{}", class.class);
    }
}
