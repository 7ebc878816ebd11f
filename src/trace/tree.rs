//! Trace2Tree: the call tree as index links over the event arena.
//!
//! Host events nest per (pid, tid) by time; runtime launches link to the GPU
//! work they caused (through `ac2g` flows, or the `correlation` argument when
//! a trace has no flows at all); backward ops link to their forward op by
//! sequence number. Nothing here mutates the trace.

use std::collections::HashMap;

use super::{Cat, Ident, NO_INT, NONE, Phase, Trace};

/// Which `args` key ties launches to GPU work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKey {
    /// `args.correlation` (every modern CUDA/ROCm trace).
    Correlation,
    /// `args["External id"]` (old traces).
    ExternalId,
}

/// How launches were matched with GPU events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkMode {
    /// Through `ac2g` flow events, as the reference does.
    Flows,
    /// The trace has no flow events: by equal link key (an extension; the
    /// reference reports "No GPU events found" on such traces).
    CorrelationOnly,
}

/// Options for building the tree.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeOptions {
    /// Put `python_function` events into the host nesting (needed for
    /// nn.Module views; the report's sheets do not use them).
    pub include_python: bool,
}

/// Prefix of autograd backward wrapper names.
pub const BACKWARD_PREFIX: &str = "autograd::engine::evaluate_function:";

/// The call tree: parent/child links for every event, by index.
#[derive(Debug)]
pub struct Tree {
    /// Parent of each event, or [`NONE`].
    pub parent: Vec<u32>,
    first_child: Vec<u32>,
    last_child: Vec<u32>,
    next_sibling: Vec<u32>,
    /// Number of GPU events below each event (its `gpu_events` length).
    pub gpu_count: Vec<u32>,
    /// Outermost `cpu_op` of each stack, in sweep order.
    pub cpu_roots: Vec<u32>,
    /// Host events placed in the tree that have no parent (roots of the
    /// printed tree), in sweep order.
    pub host_roots: Vec<u32>,
    /// Backward wrapper -> forward op.
    pub fwd_event: HashMap<u32, u32>,
    /// Forward op -> backward wrappers.
    pub bwd_events: HashMap<u32, Vec<u32>>,
    /// The key used for linking.
    pub link_key: LinkKey,
    /// How launches were matched with GPU events.
    pub link_mode: LinkMode,
    /// GPU events (kernel, memcpy, memset) in the trace.
    pub gpu_total: usize,
    /// GPU events that no launch claimed.
    pub gpu_unlinked: usize,
    /// Whether python functions are part of the nesting.
    pub python_included: bool,
}

impl Tree {
    /// The children of `node`: host children in time order, then GPU work in
    /// link order.
    pub fn children(&self, node: u32) -> Children<'_> {
        Children {
            tree: self,
            next: self.first_child[node as usize],
        }
    }

    /// True when `node` has no children.
    pub fn is_leaf(&self, node: u32) -> bool {
        self.first_child[node as usize] == NONE
    }

    /// True when the event is a linked GPU event (its `tree` flag in the reference).
    pub fn is_linked_gpu(&self, trace: &Trace, ev: u32) -> bool {
        trace.events[ev as usize].cat.is_gpu() && self.parent[ev as usize] != NONE
    }

    /// Every GPU event below `node` (its `gpu_events`), ordered like the
    /// reference: by launching runtime event, then in link order.
    pub fn gpu_events(&self, trace: &Trace, node: u32) -> Vec<u32> {
        let mut out = Vec::new();
        if self.gpu_count[node as usize] == 0 {
            return out;
        }
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if trace.events[n as usize].cat.is_gpu() && n != node {
                out.push(n);
                continue;
            }
            for c in self.children(n) {
                if self.gpu_count[c as usize] > 0 || trace.events[c as usize].cat.is_gpu() {
                    stack.push(c);
                }
            }
        }
        out.sort_unstable_by_key(|&g| (self.parent[g as usize], g));
        out
    }

    /// The ancestors of `node`, nearest first.
    pub fn ancestors(&self, node: u32) -> Ancestors<'_> {
        Ancestors {
            tree: self,
            next: self.parent[node as usize],
            steps: 0,
        }
    }

    fn append_child(&mut self, parent: u32, child: u32) {
        self.parent[child as usize] = parent;
        let last = self.last_child[parent as usize];
        if last == NONE {
            self.first_child[parent as usize] = child;
        } else {
            self.next_sibling[last as usize] = child;
        }
        self.last_child[parent as usize] = child;
    }
}

/// Iterator over a node's children.
pub struct Children<'a> {
    tree: &'a Tree,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.next == NONE {
            return None;
        }
        let c = self.next;
        self.next = self.tree.next_sibling[c as usize];
        Some(c)
    }
}

/// Iterator over a node's ancestors, nearest first (bounded against cycles).
pub struct Ancestors<'a> {
    tree: &'a Tree,
    next: u32,
    steps: usize,
}

impl Iterator for Ancestors<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.next == NONE || self.steps > self.tree.parent.len() {
            return None;
        }
        let a = self.next;
        self.steps += 1;
        self.next = self.tree.parent[a as usize];
        Some(a)
    }
}

/// True for graph launches, whose GPU work is every event sharing the link.
pub fn is_graph_launch(name: &str) -> bool {
    name == "cudaGraphLaunch" || name == "hipGraphLaunch"
}

/// The link value of an event under `key`, or [`NO_INT`].
fn link_of(trace: &Trace, ev: u32, key: LinkKey) -> i64 {
    match trace.args_of(ev) {
        Some(a) => match key {
            LinkKey::Correlation => a.correlation,
            LinkKey::ExternalId => a.external_id,
        },
        None => NO_INT,
    }
}

/// Builds the tree for `trace`.
pub fn build(trace: &Trace, opts: TreeOptions) -> Tree {
    let n = trace.events.len();
    let mut tree = Tree {
        parent: vec![NONE; n],
        first_child: vec![NONE; n],
        last_child: vec![NONE; n],
        next_sibling: vec![NONE; n],
        gpu_count: vec![0; n],
        cpu_roots: Vec::new(),
        host_roots: Vec::new(),
        fwd_event: HashMap::new(),
        bwd_events: HashMap::new(),
        link_key: LinkKey::ExternalId,
        link_mode: LinkMode::Flows,
        gpu_total: 0,
        gpu_unlinked: 0,
        python_included: opts.include_python,
    };
    tree.link_key = choose_link_key(trace);
    nest_host_events(trace, &mut tree, opts.include_python);
    link_gpu_work(trace, &mut tree);
    link_forward_backward(trace, &mut tree);
    tree
}

fn choose_link_key(trace: &Trace) -> LinkKey {
    for (i, e) in trace.events.iter().enumerate() {
        if e.cat.is_runtime()
            && trace
                .strings
                .get(e.name)
                .to_ascii_lowercase()
                .contains("launch")
        {
            return match trace.args_of(i as u32) {
                Some(a) if a.correlation != NO_INT => LinkKey::Correlation,
                _ => LinkKey::ExternalId,
            };
        }
    }
    LinkKey::ExternalId
}

/// Host call-stack nesting (spec 01 §2.3), including the bleed rule.
fn nest_host_events(trace: &Trace, tree: &mut Tree, include_python: bool) {
    let ev = &trace.events;
    let mut host: Vec<u32> = (0..ev.len() as u32)
        .filter(|&i| {
            let e = &ev[i as usize];
            matches!(e.cat, Cat::CpuOp | Cat::CudaRuntime | Cat::CudaDriver)
                || (include_python && e.cat == Cat::PythonFunction)
        })
        .collect();
    // Stable sort by ts only: equal starts keep file order.
    host.sort_by(|&a, &b| ev[a as usize].ts.total_cmp(&ev[b as usize].ts));

    struct Stack {
        frames: Vec<u32>,
        cpu_ops: u32,
    }
    let mut stacks: Vec<Stack> = Vec::new();
    let mut stack_of: HashMap<(u32, u32), usize> = HashMap::new();
    for &e in &host {
        let event = &ev[e as usize];
        let si = *stack_of.entry((event.pid, event.tid)).or_insert_with(|| {
            stacks.push(Stack {
                frames: Vec::new(),
                cpu_ops: 0,
            });
            stacks.len() - 1
        });
        let st = &mut stacks[si];
        let pop = |st: &mut Stack| {
            if let Some(top) = st.frames.pop()
                && ev[top as usize].cat == Cat::CpuOp
            {
                st.cpu_ops -= 1;
            }
        };
        let t_end = event.t_end();
        while let Some(&top) = st.frames.last() {
            if event.ts >= ev[top as usize].t_end() {
                pop(st);
            } else {
                break;
            }
        }
        if let Some(&top) = st.frames.last() {
            let top_end = ev[top as usize].t_end();
            if t_end > top_end {
                let overlap = top_end - event.ts;
                if overlap < 1.0 && st.frames.len() >= 2 {
                    pop(st);
                } else {
                    continue; // discarded: no parent, never pushed
                }
            }
        }
        match st.frames.last() {
            Some(&top) => tree.append_child(top, e),
            None => tree.host_roots.push(e),
        }
        st.frames.push(e);
        if event.cat == Cat::CpuOp {
            if st.cpu_ops == 0 {
                tree.cpu_roots.push(e);
            }
            st.cpu_ops += 1;
        }
    }
}

/// Links runtime launches to GPU work (spec 01 §2.5).
fn link_gpu_work(trace: &Trace, tree: &mut Tree) {
    let ev = &trace.events;
    let key = tree.link_key;
    let mut flow_start: HashMap<i64, u32> = HashMap::new();
    let mut flow_end: HashMap<i64, u32> = HashMap::new();
    let mut by_pid_tid_link: HashMap<(u32, u32, i64), u32> = HashMap::new();
    let mut gpu_by_link: Vec<(i64, u32)> = Vec::new();
    let mut any_graph_launch = false;
    let null_ident = trace.idents.iter().position(|i| *i == Ident::Null);
    let is_null = |id: u32| null_ident == Some(id as usize);
    for (i, e) in ev.iter().enumerate() {
        let i = i as u32;
        if e.cat == Cat::Ac2g {
            if let Some(&id) = trace.flow_ids.get(&i) {
                match e.ph {
                    Phase::FlowStart => {
                        flow_start.insert(id, i);
                    }
                    Phase::FlowEnd => {
                        flow_end.insert(id, i);
                    }
                    _ => {}
                }
            }
            continue;
        }
        if e.cat.is_gpu() {
            tree.gpu_total += 1;
        }
        let link = link_of(trace, i, key);
        if link == NO_INT {
            continue;
        }
        if e.cat.is_gpu() {
            gpu_by_link.push((link, i));
        }
        if e.cat.is_runtime() && is_graph_launch(trace.strings.get(e.name)) {
            any_graph_launch = true;
        }
        if !is_null(e.pid) && !is_null(e.tid) {
            by_pid_tid_link.insert((e.pid, e.tid, link), i);
        }
    }
    let use_flows = !(flow_start.is_empty() && flow_end.is_empty());
    tree.link_mode = if use_flows {
        LinkMode::Flows
    } else {
        LinkMode::CorrelationOnly
    };
    if any_graph_launch || !use_flows {
        gpu_by_link.sort_unstable();
    }
    let same_link = |link: i64| -> &[(i64, u32)] {
        let lo = gpu_by_link.partition_point(|&(l, _)| l < link);
        let hi = gpu_by_link.partition_point(|&(l, _)| l <= link);
        &gpu_by_link[lo..hi]
    };

    let mut targets: Vec<u32> = Vec::new();
    for r in 0..ev.len() as u32 {
        let e = &ev[r as usize];
        if !e.cat.is_runtime() {
            continue;
        }
        targets.clear();
        let link = link_of(trace, r, key);
        if link == NO_INT {
            continue;
        }
        if is_graph_launch(trace.strings.get(e.name)) || !use_flows {
            targets.extend(same_link(link).iter().map(|&(_, g)| g));
        } else if let (Some(_), Some(&f)) = (flow_start.get(&link), flow_end.get(&link)) {
            let fe = &ev[f as usize];
            if let Some(&id) = trace.flow_ids.get(&f)
                && let Some(&g) = by_pid_tid_link.get(&(fe.pid, fe.tid, id))
            {
                targets.push(g);
            }
        }
        for &g in &targets {
            // Only GPU work can be a target (a flow that resolves to a host
            // event would make the reference loop forever), and each GPU
            // event has one launcher.
            if !ev[g as usize].cat.is_gpu() || tree.parent[g as usize] != NONE {
                continue;
            }
            tree.append_child(r, g);
            let mut a = r;
            let mut steps = 0;
            while a != NONE && steps <= ev.len() {
                tree.gpu_count[a as usize] += 1;
                a = tree.parent[a as usize];
                steps += 1;
            }
        }
    }
    tree.gpu_unlinked = ev
        .iter()
        .enumerate()
        .filter(|(i, e)| e.cat.is_gpu() && tree.parent[*i] == NONE)
        .count();
}

/// Forward/backward links by `Sequence number` (spec 01 §2.7).
fn link_forward_backward(trace: &Trace, tree: &mut Tree) {
    let mut order: Vec<i64> = Vec::new();
    let mut by_seq: HashMap<i64, Vec<u32>> = HashMap::new();
    for (i, _) in trace.events.iter().enumerate() {
        if let Some(a) = trace.args_of(i as u32)
            && a.sequence != NO_INT
        {
            let v = by_seq.entry(a.sequence).or_default();
            if v.is_empty() {
                order.push(a.sequence);
            }
            v.push(i as u32);
        }
    }
    for seq in order {
        let uids = &by_seq[&seq];
        let Some(&b) = uids
            .iter()
            .find(|&&u| trace.name(u).starts_with(BACKWARD_PREFIX))
        else {
            continue;
        };
        let be = &trace.events[b as usize];
        let mut best: Option<(f64, u32)> = None;
        for &u in uids {
            let e = &trace.events[u as usize];
            if u == b || (e.pid == be.pid && e.tid == be.tid) {
                continue;
            }
            let ts = if e.ts.is_nan() { 0.0 } else { e.ts };
            if best.is_none_or(|(t, _)| ts > t) {
                best = Some((ts, u));
            }
        }
        if let Some((_, f)) = best {
            tree.fwd_event.insert(b, f);
            tree.bwd_events.entry(f).or_default().push(b);
        }
    }
}
