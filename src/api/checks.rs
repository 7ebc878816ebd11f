//! Checks of the numbers a caller sets (thresholds, durations) before any
//! work, shared by the command line and the Python package: a NaN or
//! infinite threshold would silently pass every regression.

use crate::analysis::commands::compare::GateOptions;
pub use crate::error::SettingError;

/// Checks that `value` of `setting` is a finite number of 0 or more,
/// described as `expected` in the error.
fn check_non_negative(
    setting: &'static str,
    expected: &'static str,
    value: f64,
) -> Result<(), SettingError> {
    if value.is_finite() && value >= 0.0 {
        return Ok(());
    }
    Err(SettingError {
        setting,
        expected,
        value,
    })
}

/// Checks a threshold in percent (`fail_above`): finite, 0 or more.
pub fn check_percentage(setting: &'static str, value: f64) -> Result<(), SettingError> {
    check_non_negative(setting, "a percentage of 0 or more", value)
}

/// Checks the gate's settings: `fail_above` (a percentage) and `min_ms` (a
/// duration), each finite and 0 or more.
pub fn check_gate_options(o: &GateOptions) -> Result<(), SettingError> {
    if let Some(p) = o.fail_above_pct {
        check_percentage("fail_above", p)?;
    }
    check_non_negative("min_ms", "a duration of 0 or more", o.min_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_must_be_finite_and_not_negative() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
            let e = check_percentage("fail_above", bad).unwrap_err();
            assert!(
                e.to_string().starts_with("fail_above must be a percentage"),
                "{e}"
            );
            let gate = GateOptions {
                fail_above_pct: Some(5.0),
                min_ms: bad,
                ..GateOptions::default()
            };
            assert_eq!(check_gate_options(&gate).unwrap_err().setting, "min_ms");
        }
        assert_eq!(
            check_percentage("fail_above", f64::NAN)
                .unwrap_err()
                .to_string(),
            "fail_above must be a percentage of 0 or more, got NaN"
        );
        assert!(check_percentage("fail_above", 0.0).is_ok());
        assert!(check_gate_options(&GateOptions::default()).is_ok());
    }
}
