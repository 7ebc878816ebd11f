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
}
