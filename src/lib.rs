//! tracelens: performance reports from AI profiler traces.
//!
//! Data flows one way: [`load`] turns bytes into a [`trace::Trace`] (a flat
//! arena of events with interned strings), [`trace::tree`] links the events
//! into a call tree, the [`analysis`] passes turn the tree into
//! [`table::Table`]s, the [`report::view`]s make a [`report::Document`] of
//! the results (tables, charts, summaries, verdicts, tree outlines), and the
//! [`report`] writers render it as CSV, Excel, Markdown, JSON, text or SVG.
//!
//! The [`api`] (re-exported here) is what the command line calls:
//! [`analyze`] a trace, [`load_tree`], [`collectives`] across ranks,
//! [`load_compare_inputs`], [`diff_traces`], [`roofline`], [`read_report`]. Its errors are
//! typed ([`Error`]). The command line itself ([`cli`]) is here too, so
//! that the `tracelens` binary and the Python package run the same code.

// Unsafe code is denied but where a block allows it and says why: SIMD
// loads and bit tricks in the loader (load::structural, load::fast_json),
// returning input pages to the system (load::pages, load::xplane), filling a
// deferred column in place (table::deferred) and a prefetch hint in the
// rocprof report. The binary's allocator (large_alloc, main.rs) is outside
// the library.
#![deny(unsafe_code)]

// The command line's modules name the library `tracelens::`, as the
// binary and the Python package that run them see it.
extern crate self as tracelens;

pub mod analysis;
pub mod api;
pub mod cli;
pub mod error;
pub mod float_text;
pub mod gpu_arch;
pub mod load;
pub mod names;
pub mod numeric;
pub mod pyfmt;
pub mod quote;
pub mod report;
pub mod table;
#[cfg(test)]
mod test_support;
pub mod timings;
pub mod trace;

pub use api::*;
