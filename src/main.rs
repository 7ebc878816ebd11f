//! The `tracelens` command line: wires loading, passes and writers together.

mod cli;

fn main() {
    std::process::exit(cli::run());
}
