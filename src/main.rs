//! The `tracelens` binary: runs the command line ([`tracelens::cli`]).

mod large_alloc;

// The loader and passes make many small allocations; mimalloc serves them
// faster than the system allocator, especially across the loader's threads.
// Blocks of a megabyte and more are mappings of their own (`large_alloc`).
#[global_allocator]
static GLOBAL: large_alloc::LargeMapped<mimalloc::MiMalloc> =
    large_alloc::LargeMapped(mimalloc::MiMalloc);

unsafe extern "C" {
    /// mimalloc's option setter (the allocator is linked in statically).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// mimalloc's `mi_option_purge_delay` (its `mi_option_t` value in the v2
/// and v3 headers alike); -1 turns purging off.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// How long freed memory stays mapped before mimalloc hands it back, ms.
/// The v3 default (1000 ms) outlives a whole report: the call tree's link
/// tables, the loader's batches and each pass's rows all stayed resident
/// while the next stage allocated afresh (a 0.24 GB peak on a 0.58 GB
/// trace; 0.17 GB at 10 or 50 ms, 0.19 GB at 200 ms). 50 ms costs fewer
/// page faults than 10 (0.52 s of system time against 0.60 there).
const PURGE_DELAY_MS: std::ffi::c_long = 50;

fn main() {
    // The release build aborts on a panic (Cargo.toml), so no destructor
    // removes a half-staged output: the hook does, after the default
    // message, and exits with the code an unwinding panic would give.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        tracelens::report::staging::discard_all_after_panic(101);
    }));
    // mimalloc's own variable, when set, still decides.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: a plain option store, read by the allocator on its next purge.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
    let code = tracelens::cli::run();
    // mimalloc's exit handler hands every freed page back to the OS one
    // range at a time; the process is about to end, which frees them all at
    // once (a big report spends about 2% of its CPU on that otherwise).
    // SAFETY: a plain option store; no allocation is in flight here.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    std::process::exit(code);
}
