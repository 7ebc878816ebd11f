//! The cells and columns every perf-model sheet shares (the PyTorch
//! report's roofline sheets and the JAX report's `op_<category>` sheets):
//! the name and param columns, the rate statistics, the kernel-time tail.

use crate::analysis::perf_model::Py;
use crate::names::col;
use crate::numeric::kahan_sum;
use crate::table::Value;
use crate::table::agg::{NAN_STATS, agg_columns, first_non_nan, nan_stats};
use crate::table::typing::widen_ints;

/// The cells of param column `key` over models' parameter lists: the
/// values typed as pandas holds the column ([`widen_ints`]), then written
/// as their Python `str()` text (the sheets hold param values as strings;
/// a missing one is `Null`).
pub fn param_cells<'p>(
    params: impl Iterator<Item = &'p [(&'static str, Py)]>,
    key: &str,
) -> Vec<Value> {
    let mut values: Vec<Value> = params
        .map(|p| {
            p.iter()
                .find(|(k, _)| *k == key)
                .map_or(Value::Null, |(_, v)| v.to_value())
        })
        .collect();
    widen_ints(&mut values);
    values
        .into_iter()
        .map(|v| match v {
            Value::Null => Value::Null,
            v => Value::Text(v.py_str().into()),
        })
        .collect()
}

/// The columns every op sheet starts with: `name`, the param columns
/// `pcols` (and `num_kernels`), the first GFLOPS, data moved and FLOPS per
/// byte, TB/s and TFLOPS/s statistics, and the process and thread names.
pub fn head_columns(pcols: &[&str], num_kernels: bool) -> Vec<String> {
    let mut cols: Vec<String> = vec![col::NAME.into()];
    cols.extend(pcols.iter().map(|k| format!("{}{k}", col::PARAM_PREFIX)));
    if num_kernels {
        cols.push(col::NUM_KERNELS.into());
    }
    cols.extend(
        [
            col::GFLOPS_FIRST,
            col::DATA_MOVED_MB_FIRST,
            col::FLOPS_PER_BYTE_FIRST,
        ]
        .map(String::from),
    );
    cols.extend(agg_columns(col::TB_S, &NAN_STATS));
    cols.extend(agg_columns(col::TFLOPS_S, &NAN_STATS));
    cols.extend(
        [
            col::PROCESS_NAME_FIRST,
            col::PROCESS_LABEL_FIRST,
            col::THREAD_NAME_FIRST,
        ]
        .map(String::from),
    );
    cols
}

/// The columns every op sheet ends with: kernel-time statistics and sum,
/// the instance count and the first UID.
pub fn tail_columns() -> Vec<String> {
    let mut cols: Vec<String> = agg_columns(col::KERNEL_TIME_US, &NAN_STATS).collect();
    cols.extend([col::KERNEL_TIME_US_SUM, col::NAME_COUNT, col::UID_FIRST].map(String::from));
    cols
}

/// The cells under [`head_columns`]' rate columns for a group, from its
/// rows' GFLOPS, data moved (MB), FLOPS/Byte, TB/s and TFLOPS/s.
pub fn rate_cells([gflops, mb, fpb, tb_s, tflops_s]: [Vec<f64>; 5]) -> Vec<Value> {
    let mut row = vec![
        Value::Float(first_non_nan(gflops)),
        Value::Float(first_non_nan(mb)),
        Value::Float(first_non_nan(fpb)),
    ];
    row.extend(nan_stats(&tb_s).map(Value::Float));
    row.extend(nan_stats(&tflops_s).map(Value::Float));
    row
}

/// The cells under [`tail_columns`] for a group with kernel times `kt`
/// whose first instance has UID `uid`, and the time sum.
pub fn tail_cells(kt: &[f64], uid: usize) -> (Vec<Value>, f64) {
    let mut row: Vec<Value> = nan_stats(kt).map(Value::Float).to_vec();
    let sum = kahan_sum(kt);
    row.push(Value::Float(sum));
    row.push(Value::Int(kt.len() as i64));
    row.push(Value::Int(uid as i64));
    (row, sum)
}
