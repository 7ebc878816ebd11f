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

/// Prints `what` and the wall time since `start`, indented under the
/// phase lines, when timings are on.
pub fn stage(what: &str, start: Instant) {
    if enabled() {
        eprintln!("    {what:<32} {:7.3}s", start.elapsed().as_secs_f64());
    }
}
