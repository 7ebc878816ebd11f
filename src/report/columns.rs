//! What a report column measures, read from its name: the writers that
//! present numbers for people (the workbook's number formats, the Markdown
//! page's rounding) decide from it how to show a column's values.
//!
//! The names are the reference's ([`crate::names`]): units sit in the name
//! (`Kernel Time (µs)_sum`, `time ms`, `total_duration_us`), shares end in
//! `(%)` or say `percent` / `pct`, and counts say `count` or `num_`. Names
//! without a unit that time something (`total_direct_kernel_time_sum`,
//! `comm_latency`, `dur`) are in microseconds, the unit of trace events.
//! `compare` prefixes names with a tag (`h100::TB/s_mean`) and suffixes its
//! differences (`Kernel Time (µs)_sum__mi300_pct`); both are understood.

use crate::table::Value;

/// What the numbers of a column measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// A share stored in percent: `12.5` means 12.5 %.
    Percent,
    /// A duration (or a time stamp) in the given unit.
    Time(TimeUnit),
    /// A number of things.
    Count,
    /// Anything else (rates, sizes, ratios, identifiers).
    Other,
}

/// The unit of a [`Measure::Time`] column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Microseconds (also the reference's unit-less time columns).
    Us,
    /// Milliseconds.
    Ms,
}

/// What the column named `name` measures (see the module docs).
///
/// A percentage wins over everything (`Short Kernel duration (µs) percent
/// of total time` is a share), then a count (`Kernel duration (µs)_count`,
/// `times_arrived_last`), then a time.
pub fn measure(name: &str) -> Measure {
    let base = name.rsplit("::").next().unwrap_or(name).to_lowercase();
    // Words of the name: `In msg size (MB)` is `in msg size mb`, so `msg`
    // is never read as `ms`.
    let words: Vec<&str> = base
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |wanted: &[&str]| words.iter().any(|w| wanted.contains(w));
    if base.contains('%') || has(&["percent", "percentage", "pct"]) {
        return Measure::Percent;
    }
    if has(&["count", "num", "nelems", "times"]) {
        return Measure::Count;
    }
    if has(&["ms"]) {
        return Measure::Time(TimeUnit::Ms);
    }
    if has(&["us", "µs", "time", "dur", "duration", "latency", "skew"]) {
        return Measure::Time(TimeUnit::Us);
    }
    Measure::Other
}

/// Whether `name` is a perf-model parameter column (`param: M`, or in a
/// `compare` sheet `mi300::param: transpose`).
pub fn is_param(name: &str) -> bool {
    let base = name.rsplit("::").next().unwrap_or(name);
    base.starts_with(crate::names::col::PARAM_PREFIX)
}

/// The number a parameter's text spells, when it is one and nothing else:
/// an optional sign, digits, an optional fraction and exponent (`8944`,
/// `-1`, `0.125`, `1e-05`). Words Rust would also parse (`nan`, `inf`),
/// tuples, bools and blanks are not numbers; neither is a value that does
/// not fit an `f64` finitely.
pub fn param_number(text: &str) -> Option<f64> {
    let t = text.strip_prefix(['-', '+']).unwrap_or(text);
    let starts_with_digit = t.starts_with(|c: char| c.is_ascii_digit())
        || (t.starts_with('.') && t[1..].starts_with(|c: char| c.is_ascii_digit()));
    if !starts_with_digit
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A cell as people read it on a page (Markdown, the terminal), by what
/// its column measures:
///
/// - shares to 0.1 % with the sign: `12.3%`;
/// - counts whole, with thousands separators: `71,920`;
/// - other numbers (times, rates, ratios) to three significant digits,
///   whole digits never dropped: `0.00220`, `98.7`, `262,422`; below
///   0.001 in scientific notation: `1.20e-5`;
/// - ints of an [`Measure::Other`] column (ranks, ids) as they are;
/// - `Null`, NaN: empty; text verbatim; bools `True` / `False`.
pub fn readable(value: &Value, measure: Measure) -> String {
    match (value, measure) {
        (Value::Float(x), _) if x.is_nan() => String::new(),
        (Value::Float(x), Measure::Percent) => format!("{x:.1}%"),
        (Value::Int(i), Measure::Percent) => format!("{i}%"),
        (Value::Int(i), Measure::Count | Measure::Time(_)) => grouped(&i.to_string()),
        (Value::Float(x), Measure::Count) if x.fract() == 0.0 && x.abs() < 1e15 => {
            grouped(&format!("{x:.0}"))
        }
        (Value::Float(x), _) => significant(*x),
        (other, _) => other.csv_text(),
    }
}

/// `x` to three significant digits, keeping every whole digit, grouped by
/// thousands; scientific below 0.001; infinities as `inf` / `-inf`.
fn significant(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    if !x.is_finite() {
        return crate::pyfmt::float_repr(x);
    }
    let magnitude = x.abs();
    if magnitude < 1e-3 {
        return format!("{x:.2e}");
    }
    // Whole digits of the value: 1 for 0.5 and 5.2, 3 for 262.4.
    let whole = magnitude.log10().floor() as i32 + 1;
    let decimals = (3 - whole).max(0) as usize;
    grouped(&format!("{x:.decimals$}"))
}

/// A decimal number's text with `,` between thousands of its whole part:
/// `-1234567.5` becomes `-1,234,567.5`.
pub(crate) fn grouped(text: &str) -> String {
    let (sign, unsigned) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let (whole, fraction) = match unsigned.find('.') {
        Some(i) => unsigned.split_at(i),
        None => (unsigned, ""),
    };
    let mut out = String::with_capacity(text.len() + whole.len() / 3);
    out.push_str(sign);
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out.push_str(fraction);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_of_reference_names() {
        use Measure::*;
        use TimeUnit::*;
        let cases = [
            ("Percentage (%)", Percent),
            ("Cumulative Percentage (%)", Percent),
            ("percent", Percent),
            ("Pct Roofline_mean", Percent),
            ("pct_arrived_last", Percent),
            ("Short Kernel duration (µs) percent of total time", Percent),
            ("Kernel Time (µs)_sum__mi300_pct", Percent),
            ("Count", Count),
            ("count", Count),
            ("name_count", Count),
            ("operation_count", Count),
            ("Kernel duration (µs)_count", Count),
            ("Short Kernel count", Count),
            ("name_count__mi300_diff", Count),
            ("num_collectives", Count),
            ("In msg nelems", Count),
            ("times_arrived_last", Count),
            ("time ms", Time(Ms)),
            ("time ms per gpu", Time(Ms)),
            ("total_direct_kernel_time_ms", Time(Ms)),
            ("Total Kernel Time (ms)", Time(Ms)),
            ("Kernel Time (µs)_sum", Time(Us)),
            ("h100::Kernel Time (µs)_mean", Time(Us)),
            ("Kernel Time (µs)_sum__mi300_diff", Time(Us)),
            ("total_duration_us", Time(Us)),
            ("wall_time (us)", Time(Us)),
            ("total_direct_kernel_time_sum", Time(Us)),
            ("comm_latency_mean", Time(Us)),
            ("dur_sum", Time(Us)),
            ("skew in start time", Time(Us)),
            ("In msg size (MB)", Other),
            ("Full msg size (MB)", Other),
            ("avg_wait_time", Time(Us)),
            ("Roofline Time (µs)_first", Time(Us)),
            ("GPU_kernel_launch_latency", Time(Us)),
            ("TB/s_mean", Other),
            ("TFLOPS/s_mean", Other),
            ("FLOPS/Byte_first", Other),
            ("bus bw (GB/s)", Other),
            ("UID_first", Other),
            ("param: M", Other),
            ("name", Other),
        ];
        for (name, want) in cases {
            assert_eq!(measure(name), want, "{name}");
        }
    }

    #[test]
    fn param_columns() {
        assert!(is_param("param: M"));
        assert!(is_param("mi300::param: transpose"));
        assert!(!is_param("perf_params"));
        assert!(!is_param("name"));
    }

    #[test]
    fn param_numbers() {
        assert_eq!(param_number("8944"), Some(8944.0));
        assert_eq!(param_number("-1"), Some(-1.0));
        assert_eq!(param_number("8944.0"), Some(8944.0));
        assert_eq!(param_number("0.125"), Some(0.125));
        assert_eq!(param_number(".5"), Some(0.5));
        assert_eq!(param_number("1e-05"), Some(1e-5));
        for not in [
            "",
            "nan",
            "inf",
            "-inf",
            "NaN",
            "True",
            "False",
            "(1024, 1)",
            "1e999",
            "e5",
            "-",
            ".",
            "1,2",
            " 1",
            "0x10",
            "bf16",
        ] {
            assert_eq!(param_number(not), None, "{not:?}");
        }
    }
    #[test]
    fn readable_cells() {
        use Measure::*;
        let f = |x: f64, m| readable(&Value::Float(x), m);
        assert_eq!(f(12.345, Percent), "12.3%");
        assert_eq!(f(100.0, Percent), "100.0%");
        assert_eq!(readable(&Value::Int(7), Percent), "7%");
        assert_eq!(readable(&Value::Int(71920), Count), "71,920");
        assert_eq!(f(26.0, Count), "26");
        assert_eq!(f(2.5, Count), "2.50");
        assert_eq!(f(262422.4673, Time(TimeUnit::Us)), "262,422");
        assert_eq!(f(98.718, Time(TimeUnit::Us)), "98.7");
        assert_eq!(f(0.3072, Time(TimeUnit::Ms)), "0.307");
        assert_eq!(f(0.0022, Time(TimeUnit::Ms)), "0.00220");
        assert_eq!(f(0.000012, Other), "1.20e-5");
        assert_eq!(f(-1234.5, Other), "-1,234");
        assert_eq!(f(1.0, Other), "1.00");
        assert_eq!(f(0.0, Other), "0");
        assert_eq!(f(f64::NAN, Other), "");
        assert_eq!(f(f64::INFINITY, Other), "inf");
        assert_eq!(readable(&Value::Int(123456), Other), "123456");
        assert_eq!(readable(&Value::Int(-1234), Time(TimeUnit::Us)), "-1,234");
        assert_eq!(readable(&Value::Null, Count), "");
        assert_eq!(readable(&Value::Bool(true), Other), "True");
        assert_eq!(readable(&Value::Text("aten::mm".into()), Other), "aten::mm");
    }

    #[test]
    fn thousands() {
        assert_eq!(grouped("1"), "1");
        assert_eq!(grouped("999"), "999");
        assert_eq!(grouped("1000"), "1,000");
        assert_eq!(grouped("-1234567.25"), "-1,234,567.25");
        assert_eq!(grouped("123456"), "123,456");
    }
}
