//! How a worksheet column shows its values: the number format picked from
//! what the column measures ([`crate::report::columns::measure`]), and
//! which text cells are written as numbers (numeric perf-model parameters).
//!
//! Only the workbook's presentation changes: the values are the ones the
//! CSV files hold, to the last digit.

use super::MAX_CELL_UNITS;
use crate::report::columns::{Measure, TimeUnit, is_param, measure, param_number};
use crate::table::{Column, Value};

/// Most decimals a magnitude-based format shows.
const MAX_DECIMALS: i32 = 6;

/// A fixed-point number format: thousands separators, `decimals` decimals
/// and, for percentages, a literal `%` after the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberFormat {
    /// Digits after the decimal point.
    pub decimals: usize,
    /// Whether a literal `%` follows (the value is already in percent:
    /// Excel's own `0.00%` would multiply it by 100 again).
    pub percent_sign: bool,
}

/// Percentages, stored as `12.5` for 12.5 %: `#,##0.00"%"`.
pub const PERCENT: NumberFormat = NumberFormat {
    decimals: 2,
    percent_sign: true,
};
/// Counts: `#,##0`.
pub const COUNT: NumberFormat = fixed(0);
/// Times in milliseconds, to the microsecond: `#,##0.000`.
pub const MS: NumberFormat = fixed(3);
/// Times in microseconds, to 10 ns: `#,##0.00`.
pub const US: NumberFormat = fixed(2);

/// `#,##0` with `decimals` decimals.
const fn fixed(decimals: usize) -> NumberFormat {
    NumberFormat {
        decimals,
        percent_sign: false,
    }
}

impl NumberFormat {
    /// The Excel number format code (`#,##0.000`, `#,##0.00"%"`).
    pub fn code(&self) -> String {
        let mut s = String::from("#,##0");
        if self.decimals > 0 {
            s.push('.');
            s.push_str(&"0".repeat(self.decimals));
        }
        if self.percent_sign {
            s.push_str("\"%\"");
        }
        s
    }

    /// Characters `x` takes when shown in this format (`1,234.50`).
    pub fn shown_len(&self, x: f64) -> usize {
        let int_digits = if x.abs() < 1.0 {
            1
        } else {
            // Saturating cast; the clamp keeps huge values sane.
            (x.abs().log10().floor() as usize).clamp(0, 308) + 1
        };
        let separators = (int_digits - 1) / 3;
        let sign = usize::from(x < 0.0);
        let fraction = if self.decimals > 0 {
            self.decimals + 1
        } else {
            0
        };
        sign + int_digits + separators + fraction + usize::from(self.percent_sign)
    }
}

/// How one column is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnStyle {
    /// Number format of the column's cells; `None`: General.
    pub number_format: Option<NumberFormat>,
    /// Whether text cells that spell a number are written as numbers
    /// (perf-model parameters such as `param: M`).
    pub numeric_text: bool,
}

/// The style of `col`, judged from its name and its first `sample` cells.
///
/// Percentages, counts and times get the formats above. Other columns
/// holding floats get as many decimals (up to 6) as show three significant
/// digits of the median magnitude of their finite, non-zero values; columns
/// of integers only (identifiers, sizes) stay General. Parameter columns
/// stay General and have their numeric text written as numbers. Columns
/// without numbers need no format.
pub fn column_style(col: &Column, sample: usize) -> ColumnStyle {
    let cells = &col.values[..sample.min(col.values.len())];
    if is_param(&col.name) {
        return ColumnStyle {
            number_format: None,
            numeric_text: true,
        };
    }
    let numbers: Vec<&Value> = cells
        .iter()
        .filter(|v| matches!(v, Value::Int(_) | Value::Float(_)))
        .collect();
    let number_format = if numbers.is_empty() {
        None
    } else {
        match measure(&col.name) {
            Measure::Percent => Some(PERCENT),
            Measure::Count => Some(COUNT),
            Measure::Time(TimeUnit::Ms) => Some(MS),
            Measure::Time(TimeUnit::Us) => Some(US),
            Measure::Other if numbers.iter().all(|v| matches!(v, Value::Int(_))) => None,
            Measure::Other => Some(rounded(&numbers)),
        }
    };
    ColumnStyle {
        number_format,
        numeric_text: false,
    }
}

/// The format with the decimals that show three significant digits of the
/// median magnitude of the finite, non-zero `numbers` (two when there are
/// none).
fn rounded(numbers: &[&Value]) -> NumberFormat {
    let mut mags: Vec<f64> = numbers
        .iter()
        .map(|v| v.to_f64().abs())
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    if mags.is_empty() {
        return fixed(2);
    }
    mags.sort_by(f64::total_cmp);
    let median = mags[mags.len() / 2];
    // A float-to-int `as` cast saturates; the clamp bounds it anyway.
    let decimals = (2 - median.log10().floor() as i32).clamp(0, MAX_DECIMALS);
    fixed(decimals as usize)
}

/// Integer text from this magnitude on may not be exactly an `f64`.
const MAX_EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// The number a text cell of a column styled `style` is written as, if
/// any: numeric parameter text, when the number cell reads back as the text
/// does ([`crate::report::read`] types an integral number cell as an int,
/// as pandas' `read_excel` does): integers spelled without a fraction (below
/// 2^53) and decimals with a fractional part. `0.0` or `1e3` stay text, so
/// a workbook given to `compare` yields the tables its CSV files yield.
pub fn text_as_number(style: &ColumnStyle, text: &str) -> Option<f64> {
    if !style.numeric_text {
        return None;
    }
    let x = param_number(text)?;
    let spelled_int = !text.contains(['.', 'e', 'E']);
    let keeps_type = if spelled_int {
        x.abs() < MAX_EXACT_INT
    } else {
        x.fract() != 0.0
    };
    keeps_type.then_some(x)
}

/// What one table cell becomes in a worksheet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// No cell at all.
    Blank,
    /// A number cell.
    Number(f64),
    /// A boolean cell.
    Bool(bool),
    /// A string cell, already cut to Excel's cell limit; never empty.
    Text(&'a str),
}

/// The worksheet cell of `value` in a column styled `style`: ints and
/// finite floats are numbers, `Null`, NaN, infinities and empty text are
/// blank (the workbook library ignores an empty string), bools are
/// booleans, other text is a string cut to Excel's cell limit, or a
/// number where [`text_as_number`] allows. Text never becomes a formula:
/// an op named `=HYPERLINK(..)` stays a string.
pub fn cell<'a>(value: &'a Value, style: &ColumnStyle) -> Cell<'a> {
    match value {
        Value::Null => Cell::Blank,
        Value::Int(i) => Cell::Number(*i as f64),
        Value::Float(x) if x.is_finite() => Cell::Number(*x),
        Value::Float(_) => Cell::Blank,
        Value::Bool(b) => Cell::Bool(*b),
        Value::Text(s) | Value::Py(s) => match text_as_number(style, s) {
            Some(x) => Cell::Number(x),
            None if s.is_empty() => Cell::Blank,
            None => Cell::Text(clip(s)),
        },
    }
}

/// `s` cut to Excel's cell text limit, on a character boundary.
pub fn clip(s: &str) -> &str {
    // Cheap exit: a string of at most MAX_CELL_UNITS bytes has at most that
    // many UTF-16 units.
    if s.len() <= MAX_CELL_UNITS {
        return s;
    }
    let mut units = 0;
    for (i, ch) in s.char_indices() {
        units += ch.len_utf16();
        if units > MAX_CELL_UNITS {
            return &s[..i];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, values: Vec<Value>) -> Column {
        Column {
            name: name.into(),
            values,
        }
    }

    fn format_of(name: &str, values: Vec<Value>) -> Option<String> {
        column_style(&column(name, values), 200)
            .number_format
            .map(|f| f.code())
    }

    #[test]
    fn formats_by_measure() {
        let f = |x: f64| Value::Float(x);
        assert_eq!(
            format_of("Percentage (%)", vec![f(12.5)]).as_deref(),
            Some("#,##0.00\"%\"")
        );
        assert_eq!(
            format_of("Count", vec![Value::Int(3)]).as_deref(),
            Some("#,##0")
        );
        assert_eq!(
            format_of("time ms", vec![f(29.7)]).as_deref(),
            Some("#,##0.000")
        );
        assert_eq!(
            format_of("Kernel Time (µs)_sum", vec![f(552.189213867)]).as_deref(),
            Some("#,##0.00")
        );
        // Identifiers stay General; text columns need no format.
        assert_eq!(format_of("UID_first", vec![Value::Int(123_456)]), None);
        assert_eq!(format_of("name", vec![Value::Text("x".into())]), None);
        assert_eq!(format_of("Count", vec![Value::Null]), None);
    }

    #[test]
    fn other_floats_show_three_significant_digits() {
        let f = |x: f64| Value::Float(x);
        assert_eq!(
            format_of("TB/s_mean", vec![f(0.67), f(0.94), f(0.75)]).as_deref(),
            Some("#,##0.000")
        );
        assert_eq!(
            format_of("TFLOPS/s_mean", vec![f(610.7), f(f64::NAN), f(0.0)]).as_deref(),
            Some("#,##0")
        );
        assert_eq!(
            format_of("GFLOPS_first", vec![f(51.58)]).as_deref(),
            Some("#,##0.0")
        );
        assert_eq!(
            format_of("ratio", vec![f(1e-12)]).as_deref(),
            Some("#,##0.000000")
        );
        assert_eq!(
            format_of("ratio", vec![f(0.0), f(f64::NAN)]).as_deref(),
            Some("#,##0.00")
        );
        assert_eq!(
            format_of("ratio", vec![f(1e300), Value::Int(1)]).as_deref(),
            Some("#,##0")
        );
    }

    #[test]
    fn shown_lengths() {
        assert_eq!(US.shown_len(552.189), "552.19".len());
        assert_eq!(US.shown_len(1234.5), "1,234.50".len());
        assert_eq!(COUNT.shown_len(-1_234_567.0), "-1,234,567".len());
        assert_eq!(PERCENT.shown_len(0.5), "0.50%".len());
        assert_eq!(COUNT.shown_len(1e300), 301 + 100);
        assert_eq!(COUNT.shown_len(f64::NAN), 1);
    }

    #[test]
    fn param_text_becomes_a_number() {
        let style = column_style(&column("param: M", vec![Value::Text("8944".into())]), 10);
        assert_eq!(style.number_format, None);
        assert_eq!(text_as_number(&style, "8944"), Some(8944.0));
        assert_eq!(text_as_number(&style, "(1024, 1)"), None);
        assert_eq!(text_as_number(&style, "0.5"), Some(0.5));
        assert_eq!(text_as_number(&style, "1e-05"), Some(1e-5));
        // Would read back as an int, not as the float the text spells.
        assert_eq!(text_as_number(&style, "0.0"), None);
        assert_eq!(text_as_number(&style, "1e3"), None);
        // Not exactly representable.
        assert_eq!(text_as_number(&style, "9007199254740993"), None);
        let plain = column_style(&column("name", vec![Value::Text("8944".into())]), 10);
        assert_eq!(text_as_number(&plain, "8944"), None);
    }
}
