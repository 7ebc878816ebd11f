//! The longest path through the graph, chosen as HTA's longest-path
//! search chooses it: negative weights count as zero, the path may start
//! and end at any node, and ties go to the node and the edge added first.

use super::graph::{EdgeKind, Graph};

/// Why a graph has no path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// A synchronisation edge joins two events of one GPU stream.
    SameStreamSync,
    /// The graph has a cycle.
    Cycle,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Invalid::SameStreamSync => "a synchronisation joins two events of one stream",
            Invalid::Cycle => "the dependency graph has a cycle",
        })
    }
}

/// The weight the search uses: a weight of -1 or less counts as 0.
fn used(w: f64) -> f64 {
    if w <= -1.0 { 0.0 } else { w }
}

/// Edge positions per node, in the order the edges were added.
fn adjacency(n: usize, pairs: impl Iterator<Item = (u32, u32)>) -> (Vec<u32>, Vec<u32>) {
    let pairs: Vec<(u32, u32)> = pairs.collect();
    let mut offsets = vec![0u32; n + 1];
    for &(a, _) in &pairs {
        offsets[a as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut items = vec![0u32; pairs.len()];
    for (k, &(a, _)) in pairs.iter().enumerate() {
        items[fill[a as usize] as usize] = k as u32;
        fill[a as usize] += 1;
    }
    (offsets, items)
}

/// Nodes in generations: those with no incoming edge (node order), then
/// those whose last incoming edge the previous generation removed, in
/// the order it removed them.
fn topological(g: &Graph, succ: &(Vec<u32>, Vec<u32>)) -> Result<Vec<u32>, Invalid> {
    let n = g.nodes.len();
    let mut indeg = vec![0u32; n];
    for e in &g.edges {
        indeg[e.dst as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut at = 0;
    while at < order.len() {
        let v = order[at] as usize;
        at += 1;
        for &k in &succ.1[succ.0[v] as usize..succ.0[v + 1] as usize] {
            let d = g.edges[k as usize].dst as usize;
            indeg[d] -= 1;
            if indeg[d] == 0 {
                order.push(d as u32);
            }
        }
    }
    if order.len() == n {
        Ok(order)
    } else {
        Err(Invalid::Cycle)
    }
}

/// The critical path: its nodes, first to last.
pub fn longest(g: &Graph, stream_of: impl Fn(u32) -> i64) -> Result<Vec<u32>, Invalid> {
    for e in g
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::SyncDependency)
    {
        let (a, b) = (
            stream_of(g.nodes[e.src as usize].row),
            stream_of(g.nodes[e.dst as usize].row),
        );
        if a == b && a != -1 {
            return Err(Invalid::SameStreamSync);
        }
    }
    let n = g.nodes.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let succ = adjacency(n, g.edges.iter().map(|e| (e.src, e.dst)));
    let pred = adjacency(n, g.edges.iter().map(|e| (e.dst, e.src)));
    let order = topological(g, &succ)?;
    // Per node: the longest distance to it and the node it comes from.
    let mut dist = vec![0.0f64; n];
    let mut from: Vec<u32> = (0..n as u32).collect();
    for &v in &order {
        let v = v as usize;
        let mut best: Option<(f64, u32)> = None;
        for &k in &pred.1[pred.0[v] as usize..pred.0[v + 1] as usize] {
            let e = &g.edges[k as usize];
            let d = dist[e.src as usize] + used(e.weight);
            if best.is_none_or(|(b, _)| d > b) {
                best = Some((d, e.src));
            }
        }
        if let Some((d, u)) = best.filter(|(d, _)| *d >= 0.0) {
            dist[v] = d;
            from[v] = u;
        }
    }
    let mut end = order[0];
    for &v in &order {
        if dist[v as usize] > dist[end as usize] {
            end = v;
        }
    }
    let mut path = vec![end];
    let mut v = end;
    while from[v as usize] != v {
        v = from[v as usize];
        path.push(v);
    }
    path.reverse();
    Ok(path)
}
