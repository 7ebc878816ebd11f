//! The `tracelens` binary: runs the command line ([`tracelens::cli`]).

// The loader and passes make many small allocations; mimalloc serves them
// faster than the system allocator, especially across the loader's threads.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(tracelens::cli::run());
}
