//! The call tree as data for `tracelens tree`: the full hierarchy (host
//! frames down to kernels) and the nn.Module view with GPU time, pruned and
//! cut as asked. The text writer (`report::text`) draws them.

use regex::Regex;

use crate::trace::tree::Tree;
use crate::trace::{Cat, EventId, Trace};

/// What to print.
#[derive(Debug, Clone, Default)]
pub struct TreeViewOptions {
    /// Deepest level printed below a root (None: everything).
    pub depth: Option<usize>,
    /// Print only subtrees whose root name matches.
    pub grep: Option<Regex>,
    /// Keep branches that lead to no GPU work (pruned by default).
    pub show_all: bool,
}

const MODULE_PREFIX: &str = "nn.Module:";

/// One node of a tree view.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode<'t> {
    /// The event's kind (`cpu`, `python`, `kernel`, …); `None` in the
    /// module view.
    pub kind: Option<&'static str>,
    /// The event's full name.
    pub name: &'t str,
    /// GPU time, µs: a GPU event's duration, or a module's kernel time.
    pub time_us: Option<f64>,
    /// The nodes below, in order.
    pub children: Vec<TreeNode<'t>>,
    /// Not drawn: a module without GPU time. It still counts as a sibling
    /// when connectors are chosen, as the module view always drew them.
    pub hidden: bool,
}

fn label(cat: Cat) -> &'static str {
    match cat {
        Cat::PythonFunction => "python",
        Cat::CpuOp => "cpu",
        other => other.as_str(),
    }
}

/// Builds the call-tree view.
struct Walker<'t, 'a> {
    trace: &'t Trace,
    tree: &'a Tree,
    opts: &'a TreeViewOptions,
}

impl<'t> Walker<'t, '_> {
    fn keep(&self, n: EventId) -> bool {
        self.opts.show_all || self.tree.gpu_count(n) > 0 || self.trace.event(n).cat.is_gpu()
    }

    fn subtree(&self, n: EventId, depth: usize) -> TreeNode<'t> {
        let e = self.trace.event(n);
        let children = if self.opts.depth.is_some_and(|d| depth >= d) {
            Vec::new()
        } else {
            self.tree
                .children(n)
                .filter(|&c| self.keep(c))
                .map(|c| self.subtree(c, depth + 1))
                .collect()
        };
        TreeNode {
            kind: Some(label(e.cat)),
            name: self.trace.name_of(e),
            time_us: e.cat.is_gpu().then_some(e.dur),
            children,
            hidden: false,
        }
    }

    /// Roots of the printed forest: the tree's roots, or with `--grep` the
    /// outermost matching nodes.
    fn roots(&self) -> Vec<EventId> {
        let top: Vec<EventId> = self
            .tree
            .host_roots
            .iter()
            .copied()
            .filter(|&r| self.keep(r))
            .collect();
        let Some(re) = &self.opts.grep else {
            return top;
        };
        let mut found = Vec::new();
        let mut stack: Vec<EventId> = top.into_iter().rev().collect();
        while let Some(n) = stack.pop() {
            if re.is_match(self.trace.name(n)) {
                found.push(n);
                continue;
            }
            let kids: Vec<EventId> = self.tree.children(n).filter(|&c| self.keep(c)).collect();
            stack.extend(kids.into_iter().rev());
        }
        found
    }
}

/// The hierarchy, one node per event: host frames and ops down to GPU
/// events (with their durations).
pub fn call_tree<'t>(trace: &'t Trace, tree: &Tree, opts: &TreeViewOptions) -> Vec<TreeNode<'t>> {
    let w = Walker { trace, tree, opts };
    w.roots().into_iter().map(|r| w.subtree(r, 0)).collect()
}

fn is_module(trace: &Trace, n: EventId) -> bool {
    let e = trace.event(n);
    e.cat == Cat::PythonFunction && trace.name_of(e).starts_with(MODULE_PREFIX)
}

/// GPU time of a node: the sum of the durations of its GPU events, µs.
pub fn gpu_time(trace: &Trace, tree: &Tree, n: EventId) -> f64 {
    tree.gpu_events(trace, n)
        .iter()
        .map(|&g| trace.event(g).dur)
        .sum()
}

/// Nearest nn.Module descendants of `n` (through non-module frames).
fn module_children(trace: &Trace, tree: &Tree, n: EventId, out: &mut Vec<EventId>) {
    for c in tree.children(n) {
        if is_module(trace, c) {
            out.push(c);
        } else if !trace.event(c).cat.is_gpu() {
            module_children(trace, tree, c, out);
        }
    }
}

/// The outermost nn.Module frames, in tree order.
fn module_roots(trace: &Trace, tree: &Tree) -> Vec<EventId> {
    let mut roots = Vec::new();
    for &r in &tree.host_roots {
        if is_module(trace, r) {
            roots.push(r);
        } else {
            module_children(trace, tree, r, &mut roots);
        }
    }
    roots
}

/// One nn.Module frame of the module view, as a table row.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleRow {
    /// The module's `python_function` event.
    pub id: EventId,
    /// The nearest enclosing module; None for an outermost one.
    pub parent: Option<EventId>,
    /// Modules above this one.
    pub depth: usize,
    /// GPU time of the kernels, copies and fills below it, µs.
    pub gpu_time_us: f64,
    /// Number of those GPU events.
    pub gpu_events: u32,
}

/// The nn.Module view as rows, parents before their children (the order
/// `tracelens tree --modules` prints). Modules without GPU work are left
/// out unless `show_all`. Needs a tree built with python functions.
pub fn module_rows(trace: &Trace, tree: &Tree, show_all: bool) -> Vec<ModuleRow> {
    let keep = |n: EventId| show_all || tree.gpu_count(n) > 0;
    let mut rows = Vec::new();
    let mut stack: Vec<(EventId, Option<EventId>, usize)> = module_roots(trace, tree)
        .into_iter()
        .rev()
        .filter(|&r| keep(r))
        .map(|r| (r, None, 0))
        .collect();
    while let Some((n, parent, depth)) = stack.pop() {
        rows.push(ModuleRow {
            id: n,
            parent,
            depth,
            gpu_time_us: gpu_time(trace, tree, n),
            gpu_events: tree.gpu_count(n),
        });
        let mut kids = Vec::new();
        module_children(trace, tree, n, &mut kids);
        stack.extend(
            kids.into_iter()
                .rev()
                .filter(|&k| keep(k))
                .map(|k| (k, Some(n), depth + 1)),
        );
    }
    rows
}

/// Builds the nn.Module view.
struct ModuleWalker<'t, 'a> {
    trace: &'t Trace,
    tree: &'a Tree,
    opts: &'a TreeViewOptions,
}

impl<'t> ModuleWalker<'t, '_> {
    /// The node of module `n` (hidden when it has no GPU time to show).
    fn walk(&self, n: EventId, depth: usize) -> TreeNode<'t> {
        let (trace, tree) = (self.trace, self.tree);
        let t = gpu_time(trace, tree, n);
        let hidden = t == 0.0 && !self.opts.show_all;
        let mut children = Vec::new();
        if !hidden && self.opts.depth.is_none_or(|d| depth < d) {
            let mut kids = Vec::new();
            module_children(trace, tree, n, &mut kids);
            if !self.opts.show_all {
                kids.retain(|&k| tree.gpu_count(k) > 0);
            }
            children = kids.into_iter().map(|k| self.walk(k, depth + 1)).collect();
        }
        TreeNode {
            kind: None,
            name: trace.name(n),
            time_us: Some(t),
            children,
            hidden,
        }
    }
}

/// The nn.Module view: each module with the GPU time of its kernels (µs).
/// Needs a tree built with python functions.
pub fn module_tree<'t>(trace: &'t Trace, tree: &Tree, opts: &TreeViewOptions) -> Vec<TreeNode<'t>> {
    let mut roots = module_roots(trace, tree);
    if let Some(re) = &opts.grep {
        let mut found = Vec::new();
        let mut stack: Vec<EventId> = roots.into_iter().rev().collect();
        while let Some(n) = stack.pop() {
            if re.is_match(trace.name(n)) {
                found.push(n);
            } else {
                let mut kids = Vec::new();
                module_children(trace, tree, n, &mut kids);
                stack.extend(kids.into_iter().rev());
            }
        }
        roots = found;
    }
    if !opts.show_all {
        roots.retain(|&r| tree.gpu_count(r) > 0);
    }
    let w = ModuleWalker { trace, tree, opts };
    roots.into_iter().map(|r| w.walk(r, 0)).collect()
}
