//! `tracelens diff`: two traces loaded (in parallel), their call trees
//! built as the reference's TraceDiff builds them, and merged.

use std::path::{Path, PathBuf};

use super::report::load_trace;
use crate::analysis::commands::diff::{DiffError, DiffOptions, TraceDiff, Which};
use crate::analysis::diagnosis::{Check, health};
use crate::error::{DiffInputError, Error};
use crate::trace::tree::{Tree, TreeOptions, build};
use crate::trace::{Profiler, Trace};

/// The diff of the trace at `base` against the one at `variant`.
pub fn diff_traces(base: &Path, variant: &Path, opts: DiffOptions) -> Result<TraceDiff, Error> {
    Ok(diff_traces_checked(base, variant, opts)?.0)
}

/// [`diff_traces`], with the health checks of each trace (baseline, then
/// variant), run on the trees the diff reads.
pub fn diff_traces_checked(
    base: &Path,
    variant: &Path,
    opts: DiffOptions,
) -> Result<(TraceDiff, [Vec<Check>; 2]), Error> {
    if base.as_os_str() == "-" && variant.as_os_str() == "-" {
        return Err(DiffInputError::BothStdin.into());
    }
    let (a, b) = std::thread::scope(|s| {
        let h = s.spawn(|| load_for_diff(variant));
        let a = load_for_diff(base);
        let b = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        (a, b)
    });
    let (ta, tree_a, checks_a) = a?;
    let (tb, tree_b, checks_b) = b?;
    let d = diff_loaded((&ta, &tree_a, base), (&tb, &tree_b, variant), opts)?;
    Ok((d, [checks_a, checks_b]))
}

/// The diff of two traces already loaded (PyTorch traces with at least
/// [`super::report_needs`]) with trees from [`diff_tree`]; paths are for
/// messages.
pub fn diff_loaded(
    base: (&Trace, &Tree, &Path),
    variant: (&Trace, &Tree, &Path),
    opts: DiffOptions,
) -> Result<TraceDiff, Error> {
    crate::analysis::commands::diff::diff((base.0, base.1), (variant.0, variant.1), opts).map_err(
        |e| {
            let path = |w: Which| match w {
                Which::Base => base.2,
                Which::Variant => variant.2,
            };
            Error::Diff(match e {
                DiffError::NoCpuOps(w) => DiffInputError::NoCpuOps(path(w).to_path_buf()),
                DiffError::TooDeep(n) => DiffInputError::TooDeep(n),
            })
        },
    )
}

/// The call tree TraceDiff reads: no python frames (the reference's default).
pub fn diff_tree(trace: &Trace) -> Tree {
    build(
        trace,
        TreeOptions {
            include_python: false,
        },
    )
}

/// Whether `trace` can be diffed: the tree diff reads PyTorch traces.
pub fn check_diffable(trace: &Trace, path: &Path) -> Result<(), Error> {
    match trace.info().profiler {
        Profiler::PyTorch => Ok(()),
        Profiler::Jax => Err(DiffInputError::Jax(path.to_path_buf()).into()),
        Profiler::Rocprof => Err(DiffInputError::Rocprof(path.to_path_buf()).into()),
        Profiler::Perfetto => Err(DiffInputError::Perfetto(path.to_path_buf()).into()),
    }
}

fn load_for_diff(path: &Path) -> Result<(Trace, Tree, Vec<Check>), Error> {
    let trace = load_trace(path, super::report_needs())?;
    check_diffable(&trace, path)?;
    let tree = diff_tree(&trace);
    let checks = health::checks(&trace, &tree);
    Ok((trace, tree, checks))
}

/// The default output folder: `<base>_vs_<variant>_diff` from the two
/// file names without their extensions
/// ([`super::default_paths::default_diff_dir`]).
pub fn default_out_dir(base: &Path, variant: &Path) -> PathBuf {
    super::default_paths::default_diff_dir(base, variant)
}
