//! The `tracelens` command line: parses arguments, calls the library API
//! ([`tracelens::api`]) and writes and prints what it returns.

mod cli;

// The loader and passes make many small allocations; mimalloc serves them
// faster than the system allocator, especially across the loader's threads.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::run());
}
