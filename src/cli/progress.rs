//! What a long run shows on stderr while it works: a progress display on a
//! terminal (bytes of the input read, then the phase names), and the phase
//! timings of `--timings` / `TRACELENS_TIMINGS=1`.
//!
//! The loader takes a path, not a reader, so the bytes read are polled
//! from the kernel's count of this process's reads (`/proc/self/io`,
//! Linux); elsewhere the display shows the phase names only.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs smaller than this load too fast to need a display.
const SHOW_ABOVE_BYTES: u64 = 8 << 20;

/// How often the display is redrawn and the bytes read are polled.
const TICK: Duration = Duration::from_millis(100);

/// Whether a progress display may be drawn: stderr is a terminal, not
/// under CI (`CI` set) and not `--quiet`.
pub(crate) fn display_wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// Whether phase timings are asked for: `--timings` or `TRACELENS_TIMINGS`.
/// The flag also turns on the library's per-stage lines ([`tracelens::timings`]).
pub(crate) fn timings_wanted(flag: bool) -> bool {
    if flag {
        tracelens::timings::enable();
    }
    tracelens::timings::enabled()
}

/// The progress of one run: a display on a terminal, timing lines when
/// asked for, both, or nothing.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    timings: bool,
    start: Instant,
    /// Polls the bytes read into the display while the input loads.
    poller: Option<Poller>,
}

impl Progress {
    /// Progress for a run reading `input` (`-`: stdin): the display when
    /// `display` and the input is large (or of unknown size), the timing
    /// lines when `timings`.
    pub(crate) fn new(display: bool, timings: bool, input: &Path) -> Progress {
        let size = (input.as_os_str() != "-")
            .then(|| std::fs::metadata(input).ok().map(|m| m.len()))
            .flatten();
        let bar = (display && size.is_none_or(|s| s > SHOW_ABOVE_BYTES)).then(|| {
            let bar = ProgressBar::with_draw_target(size, ProgressDrawTarget::stderr());
            bar.enable_steady_tick(TICK);
            bar
        });
        Progress {
            bar,
            timings,
            start: Instant::now(),
            poller: None,
        }
    }

    /// A phase starts: `what` is its name ("loading trace", …);
    /// `reading` says the input file is read in this phase (the display
    /// shows the bytes read).
    pub(crate) fn step(&mut self, what: &str, reading: bool) {
        if self.timings {
            let line = format!(
                "[{:8.3}s] {what}{}",
                self.start.elapsed().as_secs_f64(),
                memory_now()
            );
            match &self.bar {
                Some(bar) => bar.println(line),
                None => eprintln!("{line}"),
            }
        }
        let Some(bar) = &self.bar else { return };
        if let Some(p) = self.poller.take() {
            p.stop();
        }
        let template = match (reading, bar.length()) {
            (true, Some(_)) => "{spinner} {msg} [{bar:30}] {bytes}/{total_bytes} ({elapsed})",
            (true, None) => "{spinner} {msg} {bytes} ({elapsed})",
            (false, _) => "{spinner} {msg}… ({elapsed})",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(what.to_string());
        if reading {
            self.poller = Poller::start(bar.clone());
        }
    }

    /// The run is over: the display is erased.
    pub(crate) fn done(&mut self) {
        if let Some(p) = self.poller.take() {
            p.stop();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done();
    }
}

/// A count display on a terminal (`loading traces [=====>    ] 3/8`) for
/// work done in counted steps; None unless `display`.
pub(crate) fn counter(display: bool, what: &str) -> Option<ProgressBar> {
    if !display {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar.enable_steady_tick(TICK);
    Some(bar)
}

/// A thread that sets the display's position to the bytes this process
/// has read since it started.
struct Poller {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Poller {
    /// Starts polling; None where the count cannot be read.
    fn start(bar: ProgressBar) -> Option<Poller> {
        let base = bytes_read()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    if let Some(n) = bytes_read() {
                        let n = n.saturating_sub(base);
                        bar.set_position(bar.length().map_or(n, |len| n.min(len)));
                    }
                    std::thread::park_timeout(TICK);
                }
            })
            .ok()?;
        Some(Poller { stop, thread })
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.thread().unpark();
        let _ = self.thread.join();
    }
}

/// The bytes this process has read so far (`rchar` of `/proc/self/io`).
fn bytes_read() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Resident and peak memory and CPU time of this process for timing lines
/// (Linux: `/proc/self/status` and `/proc/self/stat`; empty elsewhere).
fn memory_now() -> String {
    if crate::timings::status_kib("VmRSS:").is_none() {
        return String::new();
    }
    let field = |key: &str| {
        crate::timings::status_kib(key)
            .map_or_else(|| "?".to_string(), |kb| format!("{}", kb >> 10))
    };
    // utime and stime: fields 14 and 15 of /proc/self/stat, in clock ticks
    // (100 per second on Linux), counted after the command name's ')'.
    let cpu = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| {
            let rest = stat.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some(format!("cpu {:.2} s, ", ticks as f64 / 100.0))
        })
        .unwrap_or_default();
    format!(
        "  ({cpu}rss {} MiB, peak {} MiB)",
        field("VmRSS:"),
        field("VmHWM:")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_grows_with_reads() {
        let Some(before) = bytes_read() else {
            // Not Linux: the display shows phase names only.
            return;
        };
        let _ = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(bytes_read().unwrap() > before);
    }
}
