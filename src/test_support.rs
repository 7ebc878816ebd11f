//! Helpers shared by unit tests across the crate: traces and argument
//! values from JSON text (outside `analysis`, which never sees JSON), and
//! seeded random draws.

use crate::trace::{ArgValue, Needs, Trace};

/// The argument value written as JSON `text`, parsed as the Kineto decoder
/// parses recorded arguments.
pub(crate) fn arg_value(text: &str) -> ArgValue {
    crate::load::kineto::parse_value(text)
        .unwrap_or_else(|| panic!("test argument must be valid JSON: {text}"))
}

/// One `T` per line of a JSON Lines `text` (test data tables).
pub(crate) fn json_lines<T: serde::de::DeserializeOwned>(text: &str) -> Vec<T> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The trace whose `traceEvents` are the JSON objects in `events` (comma
/// separated), loaded in full.
pub(crate) fn trace_of_json(events: &str) -> Trace {
    let text = format!("{{\"traceEvents\": [{events}]}}");
    crate::load::kineto::decode(
        text.as_bytes(),
        crate::load::Packing::Plain,
        &Needs::ALL,
        crate::load::kineto::Threads::One,
    )
    .unwrap_or_else(|e| panic!("test trace must load: {e}"))
}

/// The trace at `path`, loaded as the report loads it (python frames and
/// other events as stubs).
pub(crate) fn load_file(path: &std::path::Path) -> Trace {
    crate::load::load_as(path, &Needs::EVENTS, None)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `arg!([[1, 2], [], "x"])`: the argument value written as JSON tokens
/// (see [`arg_value`]).
macro_rules! arg {
    ($($json:tt)+) => {
        $crate::test_support::arg_value(stringify!($($json)+))
    };
}
pub(crate) use arg;

/// Deterministic draws below `n` (xorshift64 from `seed`), for tests that
/// damage or generate inputs at random.
pub(crate) fn draws(seed: u64) -> impl FnMut(usize) -> usize {
    let mut x = seed;
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    /// `ArgValue::json_text` writes what serde_json writes for the same value.
    #[test]
    fn json_text_matches_serde_json() {
        for text in [
            r#"[[1, 2], [], 3.5, "x", null, true, -0, -0.0, 1e300, 1.5e-7, 123456789.125]"#,
            r#"{"b": [1, 2.5], "a": {"x": null}, "b": "last", "\u0001\"\\": "é\t"}"#,
            "18446744073709551615",
            "-9223372036854775808",
            "1e400",
            "100000000000000000000000",
            "0.1",
            r#""\u007f\u00a0\u2028""#,
        ] {
            let ours = crate::load::kineto::parse_value(text).map(|v| v.json_text());
            let theirs = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .map(|v| v.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
    }
}
