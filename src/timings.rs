//! Phase timings for benchmarks: on with `TRACELENS_TIMINGS=1` in the
//! environment (or [`enable`]), they print on stderr how long each stage
//! of a run took. Off, they cost one atomic load per stage.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Set by [`enable`]; the environment variable is read on each check.
static FORCED: AtomicBool = AtomicBool::new(false);

/// Turns timings on for the rest of the process (e.g. a `--timings` flag).
pub fn enable() {
    FORCED.store(true, Ordering::Relaxed);
}

/// Whether timing lines are printed.
pub fn enabled() -> bool {
    FORCED.load(Ordering::Relaxed) || std::env::var_os("TRACELENS_TIMINGS").is_some()
}

/// Prints `what`, the wall time since `start` and the resident memory at
/// its end, indented under the phase lines, when timings are on.
pub fn stage(what: &str, start: Instant) {
    if enabled() {
        let rss =
            status_kib("VmRSS:").map_or_else(String::new, |kb| format!("  rss {} MiB", kb >> 10));
        eprintln!("    {what:<32} {:7.3}s{rss}", start.elapsed().as_secs_f64());
    }
}

/// A `kB` field of `/proc/self/status` (`VmRSS:`, `VmHWM:`), in KiB;
/// None where there is no such file (not Linux) or field.
pub fn status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
