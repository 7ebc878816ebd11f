//! Text views of the call tree for `tracelens tree`: the full hierarchy
//! (host frames down to kernels) and the nn.Module view with GPU time.

use std::fmt::Write;

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

const NAME_CHARS: usize = 64;
const MODULE_PREFIX: &str = "nn.Module:";

fn label(cat: Cat) -> &'static str {
    match cat {
        Cat::PythonFunction => "python",
        Cat::CpuOp => "cpu",
        other => other.as_str(),
    }
}

fn short_name(name: &str) -> String {
    if name.chars().count() > NAME_CHARS {
        let cut: String = name.chars().take(NAME_CHARS).collect();
        format!("{cut}..")
    } else {
        name.to_string()
    }
}

struct Printer<'a> {
    trace: &'a Trace,
    tree: &'a Tree,
    opts: &'a TreeViewOptions,
    out: String,
}

impl Printer<'_> {
    fn keep(&self, n: EventId) -> bool {
        self.opts.show_all || self.tree.gpu_count(n) > 0 || self.trace.event(n).cat.is_gpu()
    }

    fn line(&mut self, prefix: &str, last: bool, n: EventId) {
        let e = self.trace.event(n);
        let conn = if last { "└── " } else { "├── " };
        let _ = write!(
            self.out,
            "{prefix}{conn}({}) {}",
            label(e.cat),
            short_name(self.trace.name_of(e))
        );
        if e.cat.is_gpu() {
            let _ = write!(self.out, " [{} µs]", crate::pyfmt::float_repr(e.dur));
        }
        self.out.push('\n');
    }

    fn subtree(&mut self, n: EventId, prefix: &str, last: bool, depth: usize) {
        self.line(prefix, last, n);
        if self.opts.depth.is_some_and(|d| depth >= d) {
            return;
        }
        let kids: Vec<EventId> = self.tree.children(n).filter(|&c| self.keep(c)).collect();
        let child_prefix = format!("{prefix}{}", if last { "    " } else { "│   " });
        for (i, &c) in kids.iter().enumerate() {
            self.subtree(c, &child_prefix, i + 1 == kids.len(), depth + 1);
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

/// The hierarchy as box-drawing text, one line per event.
pub fn render_tree(trace: &Trace, tree: &Tree, opts: &TreeViewOptions) -> String {
    let mut p = Printer {
        trace,
        tree,
        opts,
        out: String::new(),
    };
    for r in p.roots() {
        p.subtree(r, "", true, 0);
    }
    p.out
}

fn is_module(trace: &Trace, n: EventId) -> bool {
    let e = trace.event(n);
    e.cat == Cat::PythonFunction && trace.name_of(e).starts_with(MODULE_PREFIX)
}

/// GPU time of a node: the sum of the durations of its GPU events, µs.
fn gpu_time(trace: &Trace, tree: &Tree, n: EventId) -> f64 {
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

/// Collects the lines of the nn.Module view.
struct ModulePrinter<'a> {
    trace: &'a Trace,
    tree: &'a Tree,
    opts: &'a TreeViewOptions,
    lines: Vec<(String, f64)>,
}

impl ModulePrinter<'_> {
    fn walk(&mut self, n: EventId, prefix: &str, last: bool, depth: usize) {
        let (trace, tree) = (self.trace, self.tree);
        let t = gpu_time(trace, tree, n);
        if t == 0.0 && !self.opts.show_all {
            return;
        }
        let conn = if last { "└── " } else { "├── " };
        self.lines
            .push((format!("{prefix}{conn}{}", short_name(trace.name(n))), t));
        if self.opts.depth.is_some_and(|d| depth >= d) {
            return;
        }
        let mut kids = Vec::new();
        module_children(trace, tree, n, &mut kids);
        if !self.opts.show_all {
            kids.retain(|&k| tree.gpu_count(k) > 0);
        }
        let child_prefix = format!("{prefix}{}", if last { "    " } else { "│   " });
        for (i, &k) in kids.iter().enumerate() {
            self.walk(k, &child_prefix, i + 1 == kids.len(), depth + 1);
        }
    }
}

/// The nn.Module view: each module with the GPU time of its kernels (µs),
/// dot-leadered to a common column. Needs a tree built with python functions.
pub fn render_modules(trace: &Trace, tree: &Tree, opts: &TreeViewOptions) -> String {
    let mut roots = Vec::new();
    for &r in &tree.host_roots {
        if is_module(trace, r) {
            roots.push(r);
        } else {
            module_children(trace, tree, r, &mut roots);
        }
    }
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
    let mut mp = ModulePrinter {
        trace,
        tree,
        opts,
        lines: Vec::new(),
    };
    if !opts.show_all {
        roots.retain(|&r| tree.gpu_count(r) > 0);
    }
    for (i, &r) in roots.iter().enumerate() {
        mp.walk(r, "", i + 1 == roots.len(), 0);
    }
    let lines = mp.lines;
    let width = lines
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        + 4;
    let mut out = String::new();
    for (l, t) in lines {
        let pad = width.saturating_sub(l.chars().count());
        let _ = writeln!(out, "{l} {} ({t:.2})", ".".repeat(pad));
    }
    out
}
