//! `tracelens tree`: a trace loaded in full with its call tree.

use std::path::Path;

use super::report::load_trace;
use crate::error::Error;
use crate::trace::tree::{Tree, TreeOptions, build};
use crate::trace::{Needs, Trace};

/// The tree view shows Python frames and every event.
const TREE_NEEDS: Needs = Needs::ALL;

/// A trace and its call tree, Python frames included.
pub struct CallTree {
    /// The trace, loaded in full.
    pub trace: Trace,
    /// Its call tree.
    pub tree: Tree,
}

/// Loads the trace at `path` (`-` for stdin) and links its call tree,
/// Python frames included.
pub fn load_tree(path: &Path) -> Result<CallTree, Error> {
    let trace = load_trace(path, TREE_NEEDS)?;
    let tree = build(
        &trace,
        TreeOptions {
            include_python: true,
        },
    );
    Ok(CallTree { trace, tree })
}
