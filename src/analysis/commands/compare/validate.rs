//! Checks a report read back from files before `compare` trusts it: the
//! columns the gate reads hold finite, non-negative times. A baseline
//! whose busy time is `inf`, `-1` or text must be refused, not turned into
//! a *pass*.

use crate::names::{col, sheet};
use crate::table::{Table, Value};

/// What is wrong with one sheet of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct SheetProblem {
    /// The sheet.
    pub sheet: String,
    /// What is wrong, for people.
    pub problem: String,
}

/// The time columns the gate reads, per sheet: (sheet, key column, time
/// column, whether a missing value is allowed).
const TIME_COLUMNS: &[(&str, &str, &str, bool)] = &[
    (sheet::GPU_TIMELINE, col::TYPE, col::TIME_MS, false),
    (
        sheet::OPS_SUMMARY,
        col::NAME,
        col::TOTAL_DIRECT_KERNEL_TIME_MS,
        true,
    ),
    (
        sheet::OPS_UNIQUE_ARGS,
        col::NAME,
        col::TOTAL_DIRECT_KERNEL_TIME_SUM,
        true,
    ),
];

/// Checks the sheets of a report read from files: `gpu_timeline` or
/// `ops_summary` must be there (without `gpu_timeline` the gate says it
/// cannot judge busy time); a `gpu_timeline` needs its `type` and `time ms`
/// columns and at least one row; in it, `ops_summary` and
/// `ops_unique_args`, every time the gate reads must be a finite number of
/// 0 or more (the op sheets may leave one empty).
pub fn check_report_sheets(sheets: &[Table]) -> Result<(), SheetProblem> {
    let problem = |sheet: &str, problem: String| SheetProblem {
        sheet: sheet.to_string(),
        problem,
    };
    let Some(timeline) = crate::table::find(sheets, sheet::GPU_TIMELINE) else {
        // Without it the gate is inconclusive on busy time, as said in its
        // verdict; without any sheet it reads there is nothing to compare.
        if crate::table::find(sheets, sheet::OPS_SUMMARY).is_none() {
            return Err(problem(
                sheet::GPU_TIMELINE,
                "missing, and so is ops_summary: not a report compare can read".into(),
            ));
        }
        return check_time_columns(sheets);
    };
    for needed in [col::TYPE, col::TIME_MS] {
        if timeline.column_index(needed).is_none() {
            return Err(problem(
                sheet::GPU_TIMELINE,
                format!("no {needed:?} column"),
            ));
        }
    }
    if timeline.nrows() == 0 {
        return Err(problem(sheet::GPU_TIMELINE, "no rows".into()));
    }
    check_time_columns(sheets)
}

/// Checks every time of [`TIME_COLUMNS`] in the sheets present.
fn check_time_columns(sheets: &[Table]) -> Result<(), SheetProblem> {
    let problem = |sheet: &str, problem: String| SheetProblem {
        sheet: sheet.to_string(),
        problem,
    };
    for &(name, key, time, may_be_empty) in TIME_COLUMNS {
        let Some(t) = crate::table::find(sheets, name) else {
            continue;
        };
        let Some(v) = t.column_index(time) else {
            return Err(problem(name, format!("no {time:?} column")));
        };
        let k = t.column_index(key);
        for (i, row) in t.rows().enumerate() {
            let what = || match k {
                Some(k) => format!("{} {:?}", row_label(i), row.get(k).csv_text()),
                None => row_label(i),
            };
            if let Some(bad) = bad_time(row.get(v), may_be_empty) {
                return Err(problem(name, format!("{}: {time} is {bad}", what())));
            }
        }
    }
    Ok(())
}

/// "row N" counting the header as row 1, as a spreadsheet shows it.
fn row_label(i: usize) -> String {
    format!("row {}", i + 2)
}

/// Why `v` is not a usable time, or None when it is. One text cell makes
/// a whole column text, so number-like text is judged as its number:
/// the cell reported is the one that is not a number.
fn bad_time(v: &Value, may_be_empty: bool) -> Option<String> {
    let x = match v {
        Value::Null if may_be_empty => return None,
        Value::Null => return Some("missing (empty or NaN), not a time".into()),
        Value::Int(i) => *i as f64,
        Value::Float(x) => *x,
        other => match other.csv_text().trim().parse::<f64>() {
            Ok(x) => x,
            Err(_) => return Some(format!("{:?}, not a number", other.csv_text())),
        },
    };
    if x.is_finite() && x >= 0.0 {
        return None;
    }
    // CSV text leaves NaN empty; say what it is.
    let shown = if x.is_nan() {
        "NaN".into()
    } else {
        v.csv_text()
    };
    Some(format!("{shown}, not a finite time of 0 or more"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(time: Value) -> Table {
        Table::from_rows(
            sheet::GPU_TIMELINE,
            &[col::TYPE, col::TIME_MS],
            vec![vec![Value::from("busy_time"), time]],
        )
    }

    #[test]
    fn times_must_be_finite_and_not_negative() {
        assert!(check_report_sheets(&[timeline(Value::Float(1.5))]).is_ok());
        assert!(check_report_sheets(&[timeline(Value::Int(0))]).is_ok());
        assert!(check_report_sheets(&[timeline(Value::from("2.5"))]).is_ok());
        for (bad, text) in [
            (
                Value::Float(f64::INFINITY),
                "row 2 \"busy_time\": time ms is inf",
            ),
            (Value::Float(-1.0), "time ms is -1.0"),
            (Value::Float(f64::NAN), "time ms is NaN"),
            (Value::Null, "time ms is missing"),
            (Value::from("-2"), "time ms is -2, not a finite"),
            (Value::from("fast"), "time ms is \"fast\", not a number"),
        ] {
            let e = check_report_sheets(&[timeline(bad)]).unwrap_err();
            assert_eq!(e.sheet, "gpu_timeline");
            assert!(e.problem.contains(text), "{e:?}");
        }
    }

    #[test]
    fn the_timeline_sheet_is_required_with_rows() {
        let e = check_report_sheets(&[]).unwrap_err();
        assert!(e.problem.starts_with("missing"), "{e:?}");
        let header_only = Table::new(sheet::GPU_TIMELINE, &[col::TYPE, col::TIME_MS]);
        let e = check_report_sheets(&[header_only]).unwrap_err();
        assert_eq!(e.problem, "no rows");
    }

    #[test]
    fn op_times_may_be_empty_but_not_negative() {
        let ops = |t: Value| {
            Table::from_rows(
                sheet::OPS_SUMMARY,
                &[col::NAME, col::TOTAL_DIRECT_KERNEL_TIME_MS],
                vec![vec![Value::from("aten::mm"), t]],
            )
        };
        let ok = [timeline(Value::Float(1.0)), ops(Value::Null)];
        assert!(check_report_sheets(&ok).is_ok());
        let bad = [timeline(Value::Float(1.0)), ops(Value::Float(-2.0))];
        let e = check_report_sheets(&bad).unwrap_err();
        assert_eq!(e.sheet, "ops_summary");
        assert!(e.problem.contains("\"aten::mm\""), "{e:?}");
    }
}
