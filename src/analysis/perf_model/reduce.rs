//! The reduce model `aten_reduce`: sum, mean, max, min, norms,
//! cumulative sums and products.
//!
//! The reference infers the reduced dims from non-string Concrete Inputs;
//! trace Concrete Inputs are always strings, so it never finds any and every
//! op reduces to one output element, except `cumsum`/`cumprod` (one output
//! per input). That quirk is kept.

use super::elementwise::f;
use super::pyval::{Rec, bpe, precision, prod, shape_of, tuple_of};
use super::{Evaluation, Maf, ModelResult, OpInput, Py};

/// The reduction kind from the op name (informational `param: reduce_type`).
fn reduce_type(name: &str) -> &'static str {
    if name.contains("mean") {
        "mean"
    } else if name.contains("max") {
        "max"
    } else if name.contains("min") {
        "min"
    } else if name.contains("norm") {
        "norm"
    } else {
        "sum"
    }
}

/// Evaluates `aten_reduce`. Forward and backward (`bwd`) numbers coincide:
/// FLOPs = input elements, bytes = input·bpe_in + output·bpe_out.
pub fn evaluate(input: &OpInput, _bwd: bool) -> ModelResult<Evaluation> {
    let a = Rec::new(input);
    let dims = input.dims.unwrap_or(&[]);
    let first = dims.first().filter(|v| !v.is_null());
    let Some(first) = first else {
        // No usable Input Dims: an all-zero model without dtypes.
        return Ok(Evaluation {
            params: vec![
                ("num_input_elems", Py::Int(0)),
                ("num_output_elems", Py::Int(0)),
                ("dtype_in_out", Py::Tuple(vec![Py::None, Py::None])),
            ],
            flops: 0.0,
            bytes: None,
            maf: Some(Maf::Vector),
            precision: None,
        });
    };
    tuple_of(first)?;
    let n_in = prod(&shape_of(first)?).count()?;
    let name = a.name();
    let dtype_in = input
        .types
        .as_ref()
        .and_then(|t| t.first())
        .map(String::as_str);
    let n_out = if name.contains("cumsum") || name.contains("cumprod") {
        n_in
    } else {
        1
    };
    let bpe_in = dtype_in
        .filter(|d| !d.is_empty())
        .and_then(|d| bpe(Some(d)));
    let bytes = bpe_in.map(|b| f(n_in * b + n_out * b));
    Ok(Evaluation {
        params: vec![
            ("num_input_elems", Py::Int(n_in as i64)),
            ("num_output_elems", Py::Int(n_out as i64)),
            (
                "dtype_in_out",
                Py::Tuple(vec![Py::opt_str(dtype_in), Py::None]),
            ),
            ("reduce_type", Py::Str(reduce_type(name).to_string())),
        ],
        flops: f(n_in),
        bytes,
        maf: Some(Maf::Vector),
        precision: precision(dtype_in),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, is_invalid, test_input};
    use super::*;

    #[test]
    fn one_output_element_for_reductions() {
        let i = test_input(
            "aten::linalg_norm",
            "[[1, 5184, 768], [], [], [], []]",
            &["c10::BFloat16", "", "ScalarList", "Scalar", ""],
            Some("[[3981312, 768, 1], [], [], [], []]"),
            &["", "", "[-1]", "True", ""],
        );
        let ev = evaluate("aten_reduce", &i, false).unwrap();
        let shown: Vec<_> = ev
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", v.to_str()))
            .collect();
        assert_eq!(
            shown,
            [
                "num_input_elems=3981312",
                "num_output_elems=1",
                "dtype_in_out=('c10::BFloat16', None)",
                "reduce_type=norm"
            ]
        );
        // flops = 5184*768 = 3,981,312; bytes = 3,981,312*2 + 1*2 = 7,962,626.
        assert_eq!(ev.flops, 3_981_312.0);
        assert_eq!(ev.bytes, Some(7_962_626.0));
        assert_eq!(ev.bytes.unwrap() / 1048576.0, 7.593751907348633);
        assert_eq!(ev.compute_spec(), "vector_bf16");
        // Backward numbers are the same.
        assert_eq!(evaluate("aten_reduce", &i, true).unwrap(), ev);
    }

    #[test]
    fn cumulative_ops_keep_every_element() {
        let i = test_input(
            "aten::cumsum",
            "[[32], [], []]",
            &["int", "Scalar", ""],
            None,
            &["", "0", ""],
        );
        let ev = evaluate("aten_reduce", &i, false).unwrap();
        assert_eq!(ev.params[1].1, Py::Int(32));
        assert_eq!(ev.params[3].1, Py::Str("sum".into()));
        // bytes = 32*4 + 32*4 = 256; int has no precision.
        assert_eq!((ev.flops, ev.bytes), (32.0, Some(256.0)));
        assert_eq!(ev.compute_spec(), "");
    }

    #[test]
    fn missing_dims_give_zeros() {
        let ev = evaluate(
            "aten_reduce",
            &OpInput {
                name: "aten::mean",
                ..Default::default()
            },
            false,
        )
        .unwrap();
        assert_eq!(ev.params.len(), 3);
        assert_eq!(ev.params[2].1.to_str(), "(None, None)");
        assert_eq!((ev.flops, ev.bytes), (0.0, None));
        assert_eq!(ev.compute_spec(), "");
        assert_eq!(
            evaluate("aten_reduce", &OpInput::default(), true).unwrap(),
            ev
        );
    }

    #[test]
    fn reduce_types_and_failures() {
        assert_eq!(reduce_type("aten::amax"), "max");
        assert_eq!(reduce_type("aten::amin"), "min");
        assert_eq!(reduce_type("aten::logsumexp"), "sum");
        assert_eq!(reduce_type("aten::std"), "sum");
        // Elementwise max of two tensors is still a reduction of dims[0]:
        // 1 element, bytes 1*4 + 1*4 = 8.
        let i = test_input("aten::max", "[[1], [1]]", &["int", "int"], None, &["", ""]);
        let ev = evaluate("aten_reduce", &i, false).unwrap();
        assert_eq!((ev.flops, ev.bytes), (1.0, Some(8.0)));
        // Unknown dtype size: no bytes.
        let i = test_input("aten::sum", "[[3, 4]]", &["bool"], None, &[""]);
        assert_eq!(evaluate("aten_reduce", &i, false).unwrap().bytes, None);
        let i = test_input("aten::sum", "[7]", &["float"], None, &[""]);
        assert!(is_invalid(&evaluate("aten_reduce", &i, false)));
        assert!(is_invalid(&evaluate("other", &i, false)));
    }
}
