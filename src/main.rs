//! The `tracelens` binary: runs the command line ([`tracelens::cli`]).

// The loader and passes make many small allocations; mimalloc serves them
// faster than the system allocator, especially across the loader's threads.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" {
    /// mimalloc's option setter (the allocator is linked in statically).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// mimalloc's `mi_option_purge_delay` (its `mi_option_t` value in the v2
/// and v3 headers alike); -1 turns purging off.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

fn main() {
    let code = tracelens::cli::run();
    // mimalloc's exit handler hands every freed page back to the OS one
    // range at a time; the process is about to end, which frees them all at
    // once (a big report spends about 2% of its CPU on that otherwise).
    // SAFETY: a plain option store; no allocation is in flight here.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    std::process::exit(code);
}
