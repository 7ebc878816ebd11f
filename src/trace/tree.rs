//! Trace2Tree: the call tree as index links over the event arena.
//!
//! Host events nest per (pid, tid) by time; runtime launches link to the GPU
//! work they caused (through `ac2g` flows, or the `correlation` argument when
//! a trace has no flows at all); backward ops link to their forward op by
//! sequence number. Nothing here mutates the trace; the tree itself can be
//! edited after it is built (the capture merge moves replayed kernels under
//! copied capture launches).

use std::time::Instant;

use crate::numeric::total_order_key;
use crate::timings;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::{Cat, EventId, Ident, IdentId, NOT_KEPT, Phase, Trace};

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
    /// Through `ac2g` flow events, as the reference does (graph launches by
    /// equal link key).
    Flows,
    /// The trace has no flow events: as in the reference, only graph launches
    /// are linked (by equal link key); ordinary launches stay unlinked.
    NoFlows,
    /// The trace has no flow events and its graph launches link nothing:
    /// every launch by equal link key (an extension; the reference reports
    /// "No GPU events found" on such traces).
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
    /// Each event's node: an index into the link arrays below, or
    /// [`NOT_KEPT`] for a stub, which is never in the tree (see
    /// [`Trace::kept_positions`]); None: the event's index.
    nodes: Option<Vec<u32>>,
    /// The links of each slot, side by side: a walk reads one record per
    /// node, not one array per field.
    links: Vec<Links>,
    /// Outermost `cpu_op` of each stack, in sweep order.
    pub cpu_roots: Vec<EventId>,
    /// Host events placed in the tree that have no parent (roots of the
    /// printed tree), in sweep order.
    pub host_roots: Vec<EventId>,
    /// Backward wrapper -> forward op.
    pub fwd_event: FxHashMap<EventId, EventId>,
    /// Forward op -> backward wrappers.
    pub bwd_events: FxHashMap<EventId, Vec<EventId>>,
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

/// One slot's links in the call tree.
#[derive(Debug, Clone, Copy, Default)]
struct Links {
    parent: Option<EventId>,
    first_child: Option<EventId>,
    last_child: Option<EventId>,
    next_sibling: Option<EventId>,
    /// GPU events in the subtree ([`GPU_COUNT`] bits), and [`GPU_EVENT`]
    /// on a GPU event in a child list (set when it is placed there): a
    /// walk down the tree tells GPU children from host ones without
    /// reading the event (one cache miss less per child on big traces).
    gpu: u32,
}

/// The bits of [`Links::gpu`] that count GPU events. A count saturates
/// there: more than 2^31 - 1 GPU events below one node would take some
/// 90 GB of event records (the tree view would show the cap; every other
/// reader only asks whether a count is zero).
const GPU_COUNT: u32 = (1 << 31) - 1;

/// The bit of [`Links::gpu`] marking a GPU event: set for each one the
/// launch links place, and for every one by [`Tree::recount_gpu`].
const GPU_EVENT: u32 = 1 << 31;

/// `gpu` with `n` more GPU events counted, its mark kept.
fn add_to_count(gpu: u32, n: u32) -> u32 {
    (gpu & GPU_EVENT) | (gpu & GPU_COUNT).saturating_add(n).min(GPU_COUNT)
}

impl Tree {
    /// The link slot of event `id`; None for a stub.
    #[inline]
    fn node(&self, id: EventId) -> Option<usize> {
        match &self.nodes {
            None => Some(id.index()),
            Some(nodes) => {
                let k = nodes[id.index()];
                (k != NOT_KEPT).then_some(k as usize)
            }
        }
    }

    /// The link slot of event `id`, to write; a stub (which an edit made a
    /// kept event) gets one first.
    fn slot(&mut self, id: EventId) -> usize {
        if let Some(k) = self.node(id) {
            return k;
        }
        let k = self.links.len();
        self.add_slots(1);
        if let Some(nodes) = &mut self.nodes {
            nodes[id.index()] = k as u32;
        }
        k
    }

    /// `n` more link slots, without links.
    fn add_slots(&mut self, n: usize) {
        self.links.resize(self.links.len() + n, Links::default());
    }

    /// The parent of `node`: the enclosing host event, or for GPU work the
    /// launch that claimed it.
    #[inline]
    pub fn parent(&self, node: EventId) -> Option<EventId> {
        self.node(node).and_then(|k| self.links[k].parent)
    }

    /// Number of GPU events below `node` (its `gpu_events` length).
    #[inline]
    pub fn gpu_count(&self, node: EventId) -> u32 {
        self.node(node).map_or(0, |k| self.links[k].gpu & GPU_COUNT)
    }

    /// The children of `node`: host children in time order, then GPU work in
    /// link order.
    pub fn children(&self, node: EventId) -> Children<'_> {
        Children {
            tree: self,
            next: self.node(node).and_then(|k| self.links[k].first_child),
        }
    }

    /// True when `node` has no children.
    pub fn is_leaf(&self, node: EventId) -> bool {
        self.children(node).next.is_none()
    }

    /// True when the event is a linked GPU event (its `tree` flag in the reference).
    pub fn is_linked_gpu(&self, trace: &Trace, ev: EventId) -> bool {
        trace.event(ev).cat.is_gpu() && self.parent(ev).is_some()
    }

    /// Every GPU event below `node` (its `gpu_events`), ordered like the
    /// reference: by launching runtime event, then in link order.
    pub fn gpu_events(&self, trace: &Trace, node: EventId) -> Vec<EventId> {
        let count = self.gpu_count(node);
        if count == 0 {
            return Vec::new();
        }
        // The count saturates; below that it is the length.
        let mut out = Vec::with_capacity(count as usize);
        // GPU events have no children, so a child with GPU events below
        // it is a host event to descend into; the others are GPU events
        // when marked so.
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            for c in self.children(n) {
                let gpu = self.node(c).map_or(0, |k| self.links[k].gpu);
                debug_assert_eq!(gpu & GPU_EVENT != 0, trace.event(c).cat.is_gpu());
                if gpu & GPU_COUNT > 0 {
                    stack.push(c);
                } else if gpu & GPU_EVENT != 0 {
                    out.push(c);
                }
            }
        }
        // GPU events always have a parent here, so ordering by the Option
        // orders by launching event.
        out.sort_unstable_by_key(|&g| (self.parent(g), g));
        out
    }

    /// The ancestors of `node`, nearest first.
    pub fn ancestors(&self, node: EventId) -> Ancestors<'_> {
        Ancestors {
            tree: self,
            next: self.parent(node),
            steps: 0,
        }
    }

    /// Makes room for the events appended to the trace since the tree was
    /// built (`n` = the trace's length); they start without links.
    pub fn grow(&mut self, n: usize) {
        let events = self.nodes.as_ref().map_or(self.links.len(), Vec::len);
        if events >= n {
            return;
        }
        let first = self.links.len();
        self.add_slots(n - events);
        if let Some(nodes) = &mut self.nodes {
            nodes.extend((first..first + n - events).map(|k| k as u32));
        }
    }

    /// Replaces the children of `node` by `kids`, in that order. The old
    /// children lose `node` as their parent; each kid leaves the child list
    /// it was in and, when `reparent`, gets `node` as its parent (without,
    /// it keeps its parent: a node may own a child whose parent is another).
    /// GPU counts are stale until [`Tree::recount_gpu`].
    pub fn set_children(&mut self, node: EventId, kids: &[EventId], reparent: bool) {
        let n = self.slot(node);
        let mut c = self.links[n].first_child.take();
        while let Some(x) = c {
            let x = self.slot(x);
            c = self.links[x].next_sibling.take();
            if self.links[x].parent == Some(node) {
                self.links[x].parent = None;
            }
        }
        self.links[n].last_child = None;
        for &k in kids {
            self.unlink(k);
            let parent = self.parent(k);
            self.append_child(node, k);
            if !reparent {
                let k = self.slot(k);
                self.links[k].parent = parent;
            }
        }
    }

    /// Takes `k` out of the child list that holds it (its parent's, or for a
    /// node owned by another than its parent, wherever it is found).
    fn unlink(&mut self, k: EventId) {
        let Some(p) = self.parent(k) else {
            return;
        };
        let p = self.slot(p);
        let mut prev: Option<EventId> = None;
        let mut c = self.links[p].first_child;
        while let Some(x) = c {
            if x == k {
                let kk = self.slot(k);
                let next = self.links[kk].next_sibling.take();
                match prev {
                    None => self.links[p].first_child = next,
                    Some(pr) => {
                        let pr = self.slot(pr);
                        self.links[pr].next_sibling = next;
                    }
                }
                if self.links[p].last_child == Some(k) {
                    self.links[p].last_child = prev;
                }
                return;
            }
            prev = Some(x);
            let x = self.slot(x);
            c = self.links[x].next_sibling;
        }
    }

    /// Recomputes every node's GPU count from the child lists: the GPU
    /// events in its subtree, each once.
    pub fn recount_gpu(&mut self, trace: &Trace) {
        // Counted by event id (stubs count 0), then stored by slot.
        let n = self.nodes.as_ref().map_or(self.links.len(), Vec::len);
        let mut count = vec![0u32; n];
        // 0: not seen, 1: on the stack, 2: counted.
        let mut state = vec![0u8; n];
        let mut stack: Vec<EventId> = Vec::new();
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            stack.push(EventId::new(start));
            while let Some(&x) = stack.last() {
                if state[x.index()] == 0 {
                    state[x.index()] = 1;
                    // Children not seen yet go first; a child met on the
                    // stack (a cycle) is skipped.
                    stack.extend(self.children(x).filter(|c| state[c.index()] == 0));
                    continue;
                }
                stack.pop();
                if state[x.index()] == 2 {
                    continue;
                }
                state[x.index()] = 2;
                count[x.index()] = self
                    .children(x)
                    .filter(|c| state[c.index()] == 2)
                    .map(|c| count[c.index()] + u32::from(trace.event(c).cat.is_gpu()))
                    .sum();
            }
        }
        // Every GPU event is marked: a child list may now hold one that
        // the launch links did not place.
        let gpu = |id: usize, c: u32| {
            let mark = if trace.event(EventId::new(id)).cat.is_gpu() {
                GPU_EVENT
            } else {
                0
            };
            add_to_count(mark, c)
        };
        match &self.nodes {
            None => {
                for (id, (l, c)) in self.links.iter_mut().zip(count).enumerate() {
                    l.gpu = gpu(id, c);
                }
            }
            Some(nodes) => {
                for (id, (&k, c)) in nodes.iter().zip(count).enumerate() {
                    if k != NOT_KEPT {
                        self.links[k as usize].gpu = gpu(id, c);
                    }
                }
            }
        }
    }

    /// Makes `child` the last child of `parent`; the child's slot.
    fn append_child(&mut self, parent: EventId, child: EventId) -> usize {
        let (p, c) = (self.slot(parent), self.slot(child));
        self.links[c].parent = Some(parent);
        match self.links[p].last_child {
            None => self.links[p].first_child = Some(child),
            Some(last) => {
                let last = self.slot(last);
                self.links[last].next_sibling = Some(child);
            }
        }
        self.links[p].last_child = Some(child);
        c
    }
}

/// Iterator over a node's children.
pub struct Children<'a> {
    tree: &'a Tree,
    next: Option<EventId>,
}

impl Iterator for Children<'_> {
    type Item = EventId;
    fn next(&mut self) -> Option<EventId> {
        let c = self.next?;
        self.next = self
            .tree
            .node(c)
            .and_then(|k| self.tree.links[k].next_sibling);
        Some(c)
    }
}

/// Iterator over a node's ancestors, nearest first (bounded against cycles).
pub struct Ancestors<'a> {
    tree: &'a Tree,
    next: Option<EventId>,
    steps: usize,
}

impl Iterator for Ancestors<'_> {
    type Item = EventId;
    fn next(&mut self) -> Option<EventId> {
        let a = self.next?;
        if self.steps > self.tree.links.len() {
            return None;
        }
        self.steps += 1;
        self.next = self.tree.parent(a);
        Some(a)
    }
}

/// True for graph launches, whose GPU work is every event sharing the link.
pub fn is_graph_launch(name: &str) -> bool {
    name == "cudaGraphLaunch" || name == "hipGraphLaunch"
}

/// The link value of an event under `key`.
fn link_of(trace: &Trace, ev: EventId, key: LinkKey) -> Option<i64> {
    let a = trace.args(ev)?;
    match key {
        LinkKey::Correlation => a.correlation(),
        LinkKey::ExternalId => a.external_id(),
    }
}

/// Builds the tree for `trace`.
pub fn build(trace: &Trace, opts: TreeOptions) -> Tree {
    // Slots for kept events only: most events of a big trace are stubs.
    let nodes = trace.kept_positions();
    let n = trace.kept_len();
    let mut tree = Tree {
        nodes,
        links: vec![Links::default(); n],
        cpu_roots: Vec::new(),
        host_roots: Vec::new(),
        fwd_event: FxHashMap::default(),
        bwd_events: FxHashMap::default(),
        link_key: LinkKey::ExternalId,
        link_mode: LinkMode::Flows,
        gpu_total: 0,
        gpu_unlinked: 0,
        python_included: opts.include_python,
    };
    let start = Instant::now();
    tree.link_key = choose_link_key(trace);
    let key = tree.link_key;
    // The link tables only read the trace: built on the other core while
    // this one nests the host events.
    let ((), links) = rayon::join(
        || {
            nest_host_events(trace, &mut tree, opts.include_python);
            timings::stage("host nesting", start);
        },
        || {
            let links = LinkTables::collect(trace, key);
            timings::stage("link tables (beside it)", start);
            links
        },
    );
    let start = Instant::now();
    link_gpu_work(trace, &mut tree, links);
    timings::stage("GPU links", start);
    let start = Instant::now();
    link_forward_backward(trace, &mut tree);
    timings::stage("forward/backward links", start);
    tree
}

fn choose_link_key(trace: &Trace) -> LinkKey {
    for (i, e) in trace.events() {
        if e.cat.is_runtime() && trace.name_of(e).to_ascii_lowercase().contains("launch") {
            return match trace.args(i) {
                Some(a) if a.correlation().is_some() => LinkKey::Correlation,
                _ => LinkKey::ExternalId,
            };
        }
    }
    LinkKey::ExternalId
}

/// Host call-stack nesting, including the bleed rule.
fn nest_host_events(trace: &Trace, tree: &mut Tree, include_python: bool) {
    // By ts only, equal starts in file order (what a stable sort by ts
    // gives): (ts key, id) pairs sorted directly, not through the events.
    let mut host: Vec<(i64, EventId)> = trace
        .events()
        .filter(|(_, e)| {
            matches!(e.cat, Cat::CpuOp | Cat::CudaRuntime | Cat::CudaDriver)
                || (include_python && e.cat == Cat::PythonFunction)
        })
        .map(|(i, e)| (total_order_key(e.ts), i))
        .collect();
    // The pairs are distinct, so any sort gives this order. The stable
    // one merges the runs already sorted: a trace lists each thread's
    // events by start (owlv2's 33,670 host events are 4 runs), which it
    // sorts in a fraction of the unstable sort's instructions.
    host.sort();

    struct Stack {
        frames: Vec<EventId>,
        cpu_ops: u32,
    }
    let mut stacks: Vec<Stack> = Vec::new();
    let mut stack_of: FxHashMap<(IdentId, IdentId), usize> = FxHashMap::default();
    for &(_, e) in &host {
        let event = trace.event(e);
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
                && trace.event(top).cat == Cat::CpuOp
            {
                st.cpu_ops -= 1;
            }
        };
        let t_end = event.t_end();
        while let Some(&top) = st.frames.last() {
            if event.ts >= trace.event(top).t_end() {
                pop(st);
            } else {
                break;
            }
        }
        if let Some(&top) = st.frames.last() {
            let top_end = trace.event(top).t_end();
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
            Some(&top) => {
                tree.append_child(top, e);
            }
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

/// The launch-flow and link tables `link_gpu_work` matches with.
struct LinkTables {
    /// Ids of the `ac2g` flow starts (only whether one exists matters).
    flow_start: FxHashSet<i64>,
    flow_end: FxHashMap<i64, EventId>,
    by_pid_tid_link: FxHashMap<(IdentId, IdentId, i64), EventId>,
    /// (link, GPU event), sorted by link when matching by equal link.
    gpu_by_link: Vec<(i64, EventId)>,
    any_graph_launch: bool,
    /// GPU events in the trace (linked or not).
    gpu_total: usize,
}

impl LinkTables {
    fn collect(trace: &Trace, key: LinkKey) -> LinkTables {
        // Sized up front: growing by doubling rehashes every entry each time.
        fn sized<K, V>(n: usize) -> FxHashMap<K, V> {
            FxHashMap::with_capacity_and_hasher(n, Default::default())
        }
        // Flows come in start/end pairs.
        let flows = trace.flow_count() / 2 + 1;
        let mut l = LinkTables {
            flow_start: FxHashSet::with_capacity_and_hasher(flows, Default::default()),
            flow_end: sized(flows),
            // Mostly one GPU event per flow end.
            by_pid_tid_link: sized(flows),
            gpu_by_link: Vec::new(),
            any_graph_launch: false,
            gpu_total: 0,
        };
        let null_ident = trace.find_ident(&Ident::Null);
        let is_null = |id: IdentId| null_ident == Some(id);
        // The (pid, tid) pairs of flow ends (the GPU streams): only events
        // there can be looked up in `by_pid_tid_link`, so only they are
        // filed (most events, on host threads, need not be).
        let mut end_threads: FxHashSet<(IdentId, IdentId)> = FxHashSet::default();
        for (i, id) in trace.flows() {
            let e = trace.event(i);
            if e.cat == Cat::Ac2g {
                match e.ph {
                    Phase::FlowStart => {
                        l.flow_start.insert(id);
                    }
                    Phase::FlowEnd => {
                        l.flow_end.insert(id, i);
                        end_threads.insert((e.pid, e.tid));
                    }
                    _ => {}
                }
            }
        }
        for (i, e) in trace.events() {
            if e.cat == Cat::Ac2g {
                continue;
            }
            if e.cat.is_gpu() {
                l.gpu_total += 1;
            }
            let Some(link) = link_of(trace, i, key) else {
                continue;
            };
            if e.cat.is_gpu() {
                l.gpu_by_link.push((link, i));
            }
            if e.cat.is_runtime() && is_graph_launch(trace.name_of(e)) {
                l.any_graph_launch = true;
            }
            if !is_null(e.pid) && !is_null(e.tid) && end_threads.contains(&(e.pid, e.tid)) {
                l.by_pid_tid_link.insert((e.pid, e.tid, link), i);
            }
        }
        l
    }

    /// GPU events sharing `link` (needs `gpu_by_link` sorted).
    fn same_link(&self, link: i64) -> &[(i64, EventId)] {
        let lo = self.gpu_by_link.partition_point(|&(l, _)| l < link);
        let hi = self.gpu_by_link.partition_point(|&(l, _)| l <= link);
        &self.gpu_by_link[lo..hi]
    }
}

/// Links runtime launches to GPU work.
fn link_gpu_work(trace: &Trace, tree: &mut Tree, mut links: LinkTables) {
    tree.gpu_total = links.gpu_total;
    let has_flows = !(links.flow_start.is_empty() && links.flow_end.is_empty());
    if links.any_graph_launch || !has_flows {
        links.gpu_by_link.sort_unstable();
    }
    tree.link_mode = if has_flows {
        LinkMode::Flows
    } else {
        LinkMode::NoFlows
    };
    let linked = link_launches(trace, tree, &links);
    if linked == 0 && tree.link_mode == LinkMode::NoFlows && tree.gpu_total > 0 {
        // The reference refuses such a trace; we link by correlation instead
        // (nothing was linked, so the tree is still untouched).
        tree.link_mode = LinkMode::CorrelationOnly;
        link_launches(trace, tree, &links);
    }
    tree.gpu_unlinked = trace
        .events()
        .filter(|&(i, e)| e.cat.is_gpu() && tree.parent(i).is_none())
        .count();
}

/// Runtime events per piece of the parallel target lookup.
const LAUNCH_CHUNK: usize = 4096;

/// One linking sweep over the runtime events under `tree.link_mode`;
/// returns how many GPU events it linked.
fn link_launches(trace: &Trace, tree: &mut Tree, links: &LinkTables) -> usize {
    let (key, mode) = (tree.link_key, tree.link_mode);
    // Finding each launch's targets only reads the tables (and costs a cache
    // miss a lookup): done on every core, the (launch, target) pairs kept in
    // event order. Linking them, in that order, is this thread's.
    let runtimes: Vec<EventId> = trace
        .events()
        .filter(|(_, e)| e.cat.is_runtime())
        .map(|(r, _)| r)
        .collect();
    let pairs: Vec<Vec<(EventId, EventId)>> = runtimes
        .par_chunks(LAUNCH_CHUNK)
        .map(|chunk| {
            let mut out = Vec::new();
            for &r in chunk {
                launch_targets(trace, links, key, mode, r, &mut out);
            }
            out
        })
        .collect();
    let mut linked = 0;
    // A launch's pairs are consecutive: its ancestors' GPU counts are raised
    // once for all the kernels it took (a graph launch takes hundreds).
    let mut taken: Option<(EventId, u32)> = None;
    for (r, g) in pairs.into_iter().flatten() {
        // Each GPU event has one launcher: the first launch to name it.
        if tree.parent(g).is_some() {
            continue;
        }
        let k = tree.append_child(r, g);
        tree.links[k].gpu |= GPU_EVENT;
        linked += 1;
        match &mut taken {
            Some((l, n)) if *l == r => *n += 1,
            _ => {
                if let Some((l, n)) = taken.replace((r, 1)) {
                    add_gpu_count(trace, tree, l, n);
                }
            }
        }
    }
    if let Some((l, n)) = taken {
        add_gpu_count(trace, tree, l, n);
    }
    linked
}

/// Adds `n` to the GPU count of `node` and of each of its ancestors
/// (bounded against cycles).
fn add_gpu_count(trace: &Trace, tree: &mut Tree, node: EventId, n: u32) {
    let mut a = Some(node);
    let mut steps = 0;
    while let Some(x) = a
        && steps <= trace.len()
    {
        let k = tree.slot(x);
        tree.links[k].gpu = add_to_count(tree.links[k].gpu, n);
        a = tree.parent(x);
        steps += 1;
    }
}

/// Appends to `out` a (launch, target) pair for each GPU event the runtime
/// event `r` launches under `mode`: every GPU event sharing its link for a
/// graph launch (or when matching by correlation only), else the event at
/// the end of its flow.
fn launch_targets(
    trace: &Trace,
    links: &LinkTables,
    key: LinkKey,
    mode: LinkMode,
    r: EventId,
    out: &mut Vec<(EventId, EventId)>,
) {
    let Some(link) = link_of(trace, r, key) else {
        return;
    };
    // Only GPU work can be a target: a flow that resolves to a host event
    // would make the reference loop forever.
    let gpu = |g: &EventId| trace.event(*g).cat.is_gpu();
    if is_graph_launch(trace.name(r)) || mode == LinkMode::CorrelationOnly {
        out.extend(
            links
                .same_link(link)
                .iter()
                .map(|&(_, g)| g)
                .filter(gpu)
                .map(|g| (r, g)),
        );
    } else if links.flow_start.contains(&link)
        && let Some(&f) = links.flow_end.get(&link)
    {
        // `f` is the flow end filed under `link`: its flow id.
        let fe = trace.event(f);
        if let Some(&g) = links.by_pid_tid_link.get(&(fe.pid, fe.tid, link))
            && gpu(&g)
        {
            out.push((r, g));
        }
    }
}

/// Forward/backward links by `Sequence number`.
fn link_forward_backward(trace: &Trace, tree: &mut Tree) {
    let mut order: Vec<i64> = Vec::new();
    let mut by_seq: FxHashMap<i64, Vec<EventId>> = FxHashMap::default();
    for i in trace.ids() {
        if let Some(seq) = trace.args(i).and_then(|a| a.sequence()) {
            let v = by_seq.entry(seq).or_default();
            if v.is_empty() {
                order.push(seq);
            }
            v.push(i);
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
        let be = trace.event(b);
        let mut best: Option<(f64, EventId)> = None;
        for &u in uids {
            let e = trace.event(u);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::trace_of_json;

    /// op [0, 10) ⊃ hipGraphLaunch [1, 3) (correlation 5), two kernels of it.
    fn small() -> Trace {
        trace_of_json(
            r#"{"ph": "X", "cat": "cpu_op", "name": "op", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "cuda_runtime", "name": "hipGraphLaunch", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {"correlation": 5}},
            {"ph": "X", "cat": "kernel", "name": "k1", "ts": 20, "dur": 1, "pid": 0, "tid": 7, "args": {"correlation": 5}},
            {"ph": "X", "cat": "kernel", "name": "k2", "ts": 22, "dur": 1, "pid": 0, "tid": 7, "args": {"correlation": 5}}"#,
        )
    }

    /// Stubs (python frames and other events under [`Needs::EVENTS`]) get
    /// no link slots: the tree over the kept events is the full load's, and
    /// stubs read as outside it, also after edits add events.
    #[test]
    fn stubs_are_outside_the_tree() {
        let events = r#"{"ph": "X", "cat": "python_function", "name": "py", "ts": 0, "dur": 30, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "cpu_op", "name": "op", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
            {"ph": "i", "cat": "cpu_instant_event", "name": "i", "ts": 2, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {"correlation": 5}},
            {"ph": "X", "cat": "python_function", "name": "py2", "ts": 1, "dur": 1, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "kernel", "name": "k1", "ts": 20, "dur": 1, "pid": 0, "tid": 7, "args": {"correlation": 5}}"#;
        let text = format!("{{\"traceEvents\": [{events}]}}");
        let mut stubbed = crate::load::kineto::decode(
            text.as_bytes(),
            crate::load::Packing::Plain,
            &crate::trace::Needs::EVENTS,
            crate::load::kineto::Threads::One,
        )
        .unwrap();
        let full = trace_of_json(events);
        assert_eq!((stubbed.len(), stubbed.kept_len()), (6, 3));
        let mut tree = build(&stubbed, TreeOptions::default());
        let plain = build(&full, TreeOptions::default());
        let id = EventId::new;
        for i in [1, 3, 5] {
            assert_eq!(tree.parent(id(i)), plain.parent(id(i)), "event {i}");
            assert_eq!(tree.gpu_count(id(i)), plain.gpu_count(id(i)));
            assert_eq!(
                tree.children(id(i)).collect::<Vec<_>>(),
                plain.children(id(i)).collect::<Vec<_>>()
            );
        }
        assert_eq!(tree.parent(id(5)), Some(id(3)));
        assert_eq!(tree.gpu_events(&stubbed, id(1)), [id(5)]);
        for i in [0, 2, 4] {
            assert_eq!((tree.parent(id(i)), tree.gpu_count(id(i))), (None, 0));
            assert!(tree.is_leaf(id(i)));
        }
        // An appended event and a stub an edit kept both take children.
        let s = stubbed.push_synthetic("S", Cat::CudaRuntime, 0.0, 0.0);
        tree.grow(stubbed.len());
        tree.set_children(s, &[id(5)], true);
        stubbed.set_times(id(4), id(1));
        tree.set_children(id(4), &[s], true);
        tree.recount_gpu(&stubbed);
        assert_eq!((tree.parent(id(5)), tree.parent(s)), (Some(s), Some(id(4))));
        assert_eq!([4, 6, 3].map(|i| tree.gpu_count(id(i))), [1, 1, 0]);
    }

    /// A launch's flow ends on stream 2: of the events that share its
    /// correlation, the last one on stream 2 is its kernel, wherever the
    /// others are (another stream, another process) and in either order.
    #[test]
    fn a_flow_picks_the_last_event_of_its_end_thread_and_link() {
        let launch = r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {"correlation": 7}},
            {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 7, "ts": 1, "pid": 1, "tid": 1},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 7, "ts": 20, "pid": 0, "tid": 2, "bp": "e"},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 8, "ts": 30, "pid": 0, "tid": 1, "bp": "e"},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 9, "ts": 40, "pid": 3, "tid": 2, "bp": "e"}"#;
        let kernel = |name: &str, pid: u32, tid: u32, ts: u32| {
            format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "ts": {ts}, "dur": 1, "pid": {pid}, "tid": {tid}, "args": {{"correlation": 7}}}}"#
            )
        };
        let orders = [
            // the end thread only: the later kernel wins
            vec![kernel("a", 0, 2, 20), kernel("b", 0, 2, 21)],
            // another stream first, then the end thread
            vec![
                kernel("x", 0, 1, 30),
                kernel("a", 0, 2, 20),
                kernel("b", 0, 2, 21),
            ],
            // the end thread first, then another stream and another process
            vec![
                kernel("a", 0, 2, 20),
                kernel("x", 0, 1, 30),
                kernel("b", 0, 2, 21),
                kernel("y", 3, 2, 40),
            ],
            // the end thread's kernel before and after the others
            vec![
                kernel("b", 0, 2, 21),
                kernel("x", 0, 1, 30),
                kernel("y", 3, 2, 40),
            ],
        ];
        for kernels in orders {
            let trace = trace_of_json(&format!("{launch}, {}", kernels.join(", ")));
            let tree = build(&trace, TreeOptions::default());
            let linked: Vec<&str> = tree
                .children(EventId::new(0))
                .map(|k| trace.name(k))
                .collect();
            assert_eq!(linked, ["b"], "{kernels:?}");
        }
    }

    #[test]
    fn edits_move_children_and_recount() {
        let mut trace = small();
        let mut tree = build(&trace, TreeOptions::default());
        let id = EventId::new;
        assert_eq!(tree.gpu_count(id(0)), 2);
        let s = trace.push_synthetic("S", Cat::CudaRuntime, 0.0, 0.0);
        tree.grow(trace.len());
        // S takes k2 from the launch; k1 stays.
        tree.set_children(s, &[id(3)], true);
        assert_eq!(tree.parent(id(3)), Some(s));
        assert_eq!(tree.children(id(1)).collect::<Vec<_>>(), [id(2)]);
        tree.recount_gpu(&trace);
        assert_eq!(
            [0, 1, 4].map(|i| tree.gpu_count(id(i))),
            [1, 1, 1],
            "op and launch keep k1, S counts k2"
        );
        // The launch's children replaced: k1 loses its parent; S, owned by the
        // launch without becoming its child's parent, counts under it.
        tree.set_children(id(1), &[s], false);
        assert_eq!(tree.parent(id(2)), None);
        assert_eq!(tree.parent(s), None);
        assert_eq!(tree.children(id(1)).collect::<Vec<_>>(), [s]);
        tree.recount_gpu(&trace);
        assert_eq!([0, 1, 4].map(|i| tree.gpu_count(id(i))), [1, 1, 1]);
        assert!(tree.is_leaf(id(2)));
        assert_eq!(tree.gpu_events(&trace, id(0)), [id(3)]);
        assert_eq!(tree.gpu_events(&trace, id(2)), []);
    }

    /// A count saturates below the mark, which stays as it was.
    #[test]
    fn gpu_counts_saturate_below_the_mark() {
        assert_eq!(add_to_count(GPU_EVENT | 2, 3), GPU_EVENT | 5);
        assert_eq!(add_to_count(7, 1), 8);
        assert_eq!(add_to_count(GPU_COUNT - 1, 5), GPU_COUNT);
        assert_eq!(
            add_to_count(GPU_EVENT | (GPU_COUNT - 1), u32::MAX),
            u32::MAX
        );
        assert_eq!(add_to_count(GPU_EVENT, 0), GPU_EVENT);
    }

    /// The GPU events below each node, found by reading every child's
    /// category: what [`Tree::gpu_events`] finds from its marks.
    fn gpu_events_read(tree: &Tree, trace: &Trace, node: EventId) -> Vec<EventId> {
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            for c in tree.children(n) {
                if trace.event(c).cat.is_gpu() {
                    out.push(c);
                } else {
                    stack.push(c);
                }
            }
        }
        out.sort_unstable_by_key(|&g| (tree.parent(g), g));
        out
    }

    /// GPU events placed by the launch links and by edits (a kernel the
    /// links left out, owned by a host event that is not its parent) are
    /// found, host leaves are not.
    #[test]
    fn gpu_events_are_the_gpu_children_below() {
        let mut trace = trace_of_json(
            r#"{"ph": "X", "cat": "cpu_op", "name": "op", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "cpu_op", "name": "leaf", "ts": 0, "dur": 1, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {"correlation": 5}},
            {"ph": "X", "cat": "kernel", "name": "k1", "ts": 20, "dur": 1, "pid": 0, "tid": 7, "args": {"correlation": 5}},
            {"ph": "X", "cat": "gpu_memcpy", "name": "m", "ts": 24, "dur": 1, "pid": 0, "tid": 7, "args": {"correlation": 9}},
            {"ph": "X", "cat": "cpu_op", "name": "op2", "ts": 30, "dur": 10, "pid": 1, "tid": 1}"#,
        );
        let mut tree = build(&trace, TreeOptions::default());
        let id = EventId::new;
        let all = |tree: &Tree, trace: &Trace| {
            for i in 0..trace.len() {
                assert_eq!(
                    tree.gpu_events(trace, id(i)),
                    gpu_events_read(tree, trace, id(i)),
                    "event {i}"
                );
            }
        };
        all(&tree, &trace);
        assert_eq!(tree.gpu_events(&trace, id(0)), [id(3)]);
        // The unlinked memcpy, owned by op2 without becoming its child's
        // parent, and a new launch taking k1.
        tree.set_children(id(5), &[id(4)], false);
        let s = trace.push_synthetic("S", Cat::CudaRuntime, 0.0, 0.0);
        tree.grow(trace.len());
        tree.set_children(s, &[id(3)], true);
        tree.set_children(id(2), &[s], true);
        tree.recount_gpu(&trace);
        all(&tree, &trace);
        assert_eq!(tree.gpu_events(&trace, id(5)), [id(4)]);
        assert_eq!(tree.gpu_events(&trace, id(0)), [id(3)]);
    }
}
