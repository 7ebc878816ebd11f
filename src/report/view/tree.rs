//! The tree outlines of `tracelens tree`, from the call-tree views that
//! [`crate::analysis::commands::tree_view`] builds.

use crate::analysis::commands::tree_view::{self, TreeViewOptions};
use crate::report::{Outline, TimeLayout};
use crate::trace::Trace;
use crate::trace::tree::Tree;

/// The call hierarchy, host frames down to GPU events; each root starts
/// fresh and GPU durations follow the names.
pub fn call_tree<'t>(trace: &'t Trace, tree: &Tree, opts: &TreeViewOptions) -> Outline<'t> {
    Outline {
        roots: tree_view::call_tree(trace, tree, opts),
        times: TimeLayout::Inline,
        joined_roots: false,
    }
}

/// The nn.Module hierarchy with GPU time per module, dot-leadered.
pub fn module_tree<'t>(trace: &'t Trace, tree: &Tree, opts: &TreeViewOptions) -> Outline<'t> {
    Outline {
        roots: tree_view::module_tree(trace, tree, opts),
        times: TimeLayout::Leader,
        joined_roots: true,
    }
}
