//! The merge of two call trees: roots paired by position,
//! children aligned by name (Wagner–Fischer), same-name candidates
//! re-matched by the shape of their subtrees, wrapper nodes reconciled and
//! single-child chains collapsed until the two sides line up.

use rustc_hash::{FxHashMap, FxHashSet};

use super::names::{NameId, NameTable};
use super::side::Side;
use super::{DiffError, MergedKind, MergedNode, MergedTree};
use crate::trace::EventId;

/// Deepest merged tree accepted; deeper nesting is refused, not overflowed.
pub const MAX_DEPTH: usize = 10_000;

/// BFS levels compared when re-matching same-name candidates.
const SIGNATURE_LEVELS: usize = 4;

/// One step of an alignment of two child lists (indices into them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    /// `a[i]` and `b[j]` are the same node.
    Match(usize, usize),
    /// `a[i]` exists on the baseline side only.
    Delete(usize),
    /// `b[j]` exists on the variant side only.
    Insert(usize),
}

impl Op {
    fn is_match(self) -> bool {
        matches!(self, Op::Match(..))
    }

    /// The op with its indices looked up in `a` and `b` (from a sub-list's
    /// positions back to the full list's).
    fn remap(self, a: &[usize], b: &[usize]) -> Op {
        match self {
            Op::Match(i, j) => Op::Match(a[i], b[j]),
            Op::Delete(i) => Op::Delete(a[i]),
            Op::Insert(j) => Op::Insert(b[j]),
        }
    }
}

/// The indices the ops delete, in op order.
fn deletes(ops: &[Op]) -> Vec<usize> {
    ops.iter()
        .filter_map(|o| {
            if let Op::Delete(i) = *o {
                Some(i)
            } else {
                None
            }
        })
        .collect()
}

/// The indices the ops insert, in op order.
fn inserts(ops: &[Op]) -> Vec<usize> {
    ops.iter()
        .filter_map(|o| {
            if let Op::Insert(j) = *o {
                Some(j)
            } else {
                None
            }
        })
        .collect()
}

/// The `(i, j)` pairs the ops match.
fn matched_pairs(ops: &[Op]) -> FxHashSet<(usize, usize)> {
    ops.iter()
        .filter_map(|o| match *o {
            Op::Match(i, j) => Some((i, j)),
            _ => None,
        })
        .collect()
}

/// How well a same-name pair agrees, ordered best first: more signature
/// levels equal, more overlap at the first differing level, a pair the
/// alignment already had, then by position (`i`, `j` last).
type PairScore = (
    std::cmp::Reverse<usize>,
    std::cmp::Reverse<usize>,
    bool,
    usize,
    usize,
);

/// Where each name sits in an alignment: its positions on each side,
/// whether any of them is matched, and the names in first-seen order.
#[derive(Default)]
struct NamePositions {
    in_a: FxHashMap<Option<NameId>, Vec<usize>>,
    in_b: FxHashMap<Option<NameId>, Vec<usize>>,
    matched: FxHashSet<Option<NameId>>,
    /// Names in first-seen order, so the work below is deterministic.
    order: Vec<Option<NameId>>,
}

impl NamePositions {
    /// Records name `n` at position `k` of side a (`on_a`) or side b.
    fn record(&mut self, n: Option<NameId>, k: usize, on_a: bool, is_match: bool) {
        if !self.in_a.contains_key(&n) && !self.in_b.contains_key(&n) {
            self.order.push(n);
        }
        let side = if on_a { &mut self.in_a } else { &mut self.in_b };
        side.entry(n).or_default().push(k);
        if is_match {
            self.matched.insert(n);
        }
    }

    /// The matched names that occur on both sides and more than once on
    /// one of them, in first-seen order.
    fn ambiguous(&self) -> Vec<Option<NameId>> {
        self.order
            .iter()
            .copied()
            .filter(|n| {
                self.matched.contains(n)
                    && match (self.in_a.get(n), self.in_b.get(n)) {
                        (Some(x), Some(y)) => x.len() > 1 || y.len() > 1,
                        _ => false,
                    }
            })
            .collect()
    }
}

/// The re-matched part of an alignment, one ambiguous name at a time.
#[derive(Default)]
struct Rematch {
    /// Positions whose ops the re-match replaces.
    handled1: FxHashSet<usize>,
    handled2: FxHashSet<usize>,
    matches: Vec<(usize, usize)>,
    deletes: Vec<usize>,
    inserts: Vec<usize>,
}

impl Rematch {
    /// Takes one name's candidates: the best-scored pairs greedily, each
    /// candidate used once; the candidates left over become deletes and
    /// inserts.
    fn take(&mut self, idx1: &[usize], idx2: &[usize], scored: &[PairScore]) {
        self.handled1.extend(idx1.iter().copied());
        self.handled2.extend(idx2.iter().copied());
        let want = idx1.len().min(idx2.len());
        let mut used1 = FxHashSet::default();
        let mut used2 = FxHashSet::default();
        for &(_, _, _, i, j) in scored {
            if used1.len() == want {
                break;
            }
            if used1.contains(&i) || used2.contains(&j) {
                continue;
            }
            used1.insert(i);
            used2.insert(j);
            self.matches.push((i, j));
        }
        self.deletes
            .extend(idx1.iter().copied().filter(|i| !used1.contains(i)));
        self.inserts
            .extend(idx2.iter().copied().filter(|j| !used2.contains(j)));
    }

    /// `ops` without the handled positions, followed by the new matches,
    /// deletes and inserts, each ascending.
    fn into_ops(mut self, ops: Vec<Op>) -> Vec<Op> {
        // The reference emits the new matches in set order; ascending here
        // (docs/deviations.md, "TraceDiff").
        self.matches.sort_unstable();
        self.matches.dedup();
        self.deletes.sort_unstable();
        self.deletes.dedup();
        self.inserts.sort_unstable();
        self.inserts.dedup();
        let (handled1, handled2) = (&self.handled1, &self.handled2);
        let mut out: Vec<Op> = ops
            .into_iter()
            .filter(|o| match *o {
                Op::Match(i, j) => !handled1.contains(&i) && !handled2.contains(&j),
                Op::Delete(i) => !handled1.contains(&i),
                Op::Insert(j) => !handled2.contains(&j),
            })
            .collect();
        out.extend(self.matches.into_iter().map(|(i, j)| Op::Match(i, j)));
        out.extend(self.deletes.into_iter().map(Op::Delete));
        out.extend(self.inserts.into_iter().map(Op::Insert));
        out
    }
}

/// The merge in progress.
pub struct Merger<'s, 'a> {
    s1: &'s mut Side<'a>,
    s2: &'s mut Side<'a>,
    names: NameTable,
    /// Merged nodes by id; `None` until the node's children are done.
    nodes: Vec<Option<MergedNode>>,
    memo: FxHashMap<(Option<EventId>, Option<EventId>), u32>,
    depth: usize,
}

impl<'s, 'a> Merger<'s, 'a> {
    /// A merge of the two sides.
    pub fn new(s1: &'s mut Side<'a>, s2: &'s mut Side<'a>) -> Self {
        Merger {
            s1,
            s2,
            names: NameTable::default(),
            nodes: Vec::new(),
            memo: FxHashMap::default(),
            depth: 0,
        }
    }

    /// Merges the two trees: cpu roots lifted to their top-level nodes,
    /// paired by position.
    pub fn run(mut self) -> Result<MergedTree, DiffError> {
        let roots1 = top_roots(self.s1);
        let roots2 = top_roots(self.s2);
        if roots1.is_empty() || roots2.is_empty() {
            return Err(DiffError::NoCpuOps(if roots1.is_empty() {
                super::Which::Base
            } else {
                super::Which::Variant
            }));
        }
        let mut roots = Vec::new();
        for i in 0..roots1.len().max(roots2.len()) {
            roots.push(self.merge(roots1.get(i).copied(), roots2.get(i).copied())?);
        }
        let nodes = self
            .nodes
            .into_iter()
            .map(|n| n.expect("every allocated node is finished"))
            .collect();
        Ok(MergedTree { nodes, roots })
    }

    /// Merges `u1` and `u2` (either may be absent) and their subtrees;
    /// returns the merged id.
    fn merge(&mut self, u1: Option<EventId>, u2: Option<EventId>) -> Result<u32, DiffError> {
        if let Some(&id) = self.memo.get(&(u1, u2)) {
            return Ok(id);
        }
        if self.depth >= MAX_DEPTH {
            return Err(DiffError::TooDeep(MAX_DEPTH));
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(None);
        self.memo.insert((u1, u2), id);

        let (mut u1, mut u2) = (u1, u2);
        let (mut c1, mut c2) = self.children_with_missing(u1, u2);

        // Phase 1: one side has a single child, the other several: descend
        // the single child through wrappers to where it branches.
        if c1.len() != c2.len() {
            if c1.len() == 1 {
                let (deep, kids) = collapse(self.s1, c1[0]);
                if !kids.is_empty() {
                    u1 = Some(deep);
                    c1 = kids;
                }
            } else if c2.len() == 1 {
                let (deep, kids) = collapse(self.s2, c2[0]);
                if !kids.is_empty() {
                    u2 = Some(deep);
                    c2 = kids;
                }
            }
        }

        // Phase 2: positional when the lists agree in length and launch
        // nothing directly, else by name.
        let mut ops = self.initial_ops(&c1, &c2);

        // Phase 3: wrappers around the other side's op.
        if ops.iter().any(|o| !o.is_match())
            && let Some((r1, r2)) = self.reconcile(&ops, &c1, &c2)
        {
            ops = self.realign(&ops, &c1, &c2, &r1, &r2);
            c1 = r1;
            c2 = r2;
        }

        // Phase 4: collapse what is still unmatched and try again.
        ops = self.canonicalise(ops, &mut c1, &mut c2);

        self.depth += 1;
        let mut children = Vec::with_capacity(ops.len());
        for op in ops {
            let child = match op {
                Op::Match(i, j) => self.merge(Some(c1[i]), Some(c2[j])),
                Op::Delete(i) => self.merge(Some(c1[i]), None),
                Op::Insert(j) => self.merge(None, Some(c2[j])),
            };
            match child {
                Ok(c) => children.push(c),
                Err(e) => {
                    self.depth -= 1;
                    return Err(e);
                }
            }
        }
        self.depth -= 1;

        let kind = match (u1, u2) {
            (Some(_), Some(_)) => MergedKind::Combined,
            (Some(_), None) => MergedKind::Base,
            _ => MergedKind::Variant,
        };
        self.nodes[id as usize] = Some(MergedNode {
            uid1: u1,
            uid2: u2,
            kind,
            children,
        });
        Ok(id)
    }

    /// Both sides' GPU-path children, each completed with the other side's
    /// off-path child of a name only the other has on its path, sorted by
    /// start time.
    fn children_with_missing(
        &mut self,
        u1: Option<EventId>,
        u2: Option<EventId>,
    ) -> (Vec<EventId>, Vec<EventId>) {
        let all1 = u1.map(|u| self.s1.children(u)).unwrap_or_default();
        let all2 = u2.map(|u| self.s2.children(u)).unwrap_or_default();
        let mut gpu1: Vec<EventId> = all1
            .iter()
            .copied()
            .filter(|&c| self.s1.on_gpu_path(c))
            .collect();
        let mut gpu2: Vec<EventId> = all2
            .iter()
            .copied()
            .filter(|&c| self.s2.on_gpu_path(c))
            .collect();
        let names = &mut self.names;
        let n1: Vec<Option<NameId>> = gpu1.iter().map(|&c| self.s1.name(c, names)).collect();
        let n2: Vec<Option<NameId>> = gpu2.iter().map(|&c| self.s2.name(c, names)).collect();
        // Name -> last child of that name, over all children.
        let mut by_name1: FxHashMap<Option<NameId>, EventId> = FxHashMap::default();
        for &c in &all1 {
            by_name1.insert(self.s1.name(c, names), c);
        }
        let mut by_name2: FxHashMap<Option<NameId>, EventId> = FxHashMap::default();
        for &c in &all2 {
            by_name2.insert(self.s2.name(c, names), c);
        }
        let set1: FxHashSet<Option<NameId>> = n1.iter().copied().collect();
        let set2: FxHashSet<Option<NameId>> = n2.iter().copied().collect();
        let mut seen = FxHashSet::default();
        for name in &n1 {
            if !set2.contains(name)
                && seen.insert(*name)
                && let Some(&c) = by_name2.get(name)
            {
                gpu2.push(c);
            }
        }
        seen.clear();
        for name in &n2 {
            if !set1.contains(name)
                && seen.insert(*name)
                && let Some(&c) = by_name1.get(name)
            {
                gpu1.push(c);
            }
        }
        self.s1.sort_by_ts(&mut gpu1);
        self.s2.sort_by_ts(&mut gpu2);
        (gpu1, gpu2)
    }

    /// Positional matching when both lists are equally long and hold no
    /// dispatch call; otherwise an alignment by name.
    fn initial_ops(&mut self, c1: &[EventId], c2: &[EventId]) -> Vec<Op> {
        let launches = c1.iter().any(|&c| self.s1.is_dispatch(c))
            || c2.iter().any(|&c| self.s2.is_dispatch(c));
        if c1.len() == c2.len() && !launches {
            (0..c1.len()).map(|i| Op::Match(i, i)).collect()
        } else {
            self.align(c1, c2, false)
        }
    }

    /// Wagner–Fischer, then the same-name disambiguation.
    fn align(&mut self, a: &[EventId], b: &[EventId], strip: bool) -> Vec<Op> {
        let ops = self.wagner_fischer(a, b, strip);
        self.disambiguate(ops, a, b)
    }

    /// Edit-distance alignment by normalised name: a
    /// substitution is never a match, ties prefer match, then delete.
    fn wagner_fischer(&mut self, a: &[EventId], b: &[EventId], strip: bool) -> Vec<Op> {
        let names = &mut self.names;
        let na: Vec<NameId> = a
            .iter()
            .map(|&x| self.s1.align_name(x, strip, names))
            .collect();
        let nb: Vec<NameId> = b
            .iter()
            .map(|&x| self.s2.align_name(x, strip, names))
            .collect();
        let (m, n) = (na.len(), nb.len());
        let w = n + 1;
        let mut dp = vec![0u32; (m + 1) * w];
        for i in 0..=m {
            dp[i * w] = i as u32;
        }
        for (j, cell) in dp.iter_mut().enumerate().take(n + 1) {
            *cell = j as u32;
        }
        for i in 1..=m {
            for j in 1..=n {
                let cost = u32::from(na[i - 1] != nb[j - 1]);
                dp[i * w + j] = (dp[(i - 1) * w + j] + 1)
                    .min(dp[i * w + j - 1] + 1)
                    .min(dp[(i - 1) * w + j - 1] + cost);
            }
        }
        let (mut i, mut j) = (m, n);
        let mut ops = Vec::with_capacity(m.max(n));
        while i > 0 || j > 0 {
            if i > 0 && j > 0 && na[i - 1] == nb[j - 1] {
                ops.push(Op::Match(i - 1, j - 1));
                i -= 1;
                j -= 1;
            } else if i > 0 && (j == 0 || dp[i * w + j] == dp[(i - 1) * w + j] + 1) {
                ops.push(Op::Delete(i - 1));
                i -= 1;
            } else {
                ops.push(Op::Insert(j - 1));
                j -= 1;
            }
        }
        ops.reverse();
        ops
    }

    /// Re-matches names that occur more than once on a side by the names
    /// below each candidate, level by level.
    fn disambiguate(&mut self, ops: Vec<Op>, a: &[EventId], b: &[EventId]) -> Vec<Op> {
        let positions = self.name_positions(&ops, a, b);
        let ambiguous = positions.ambiguous();
        if ambiguous.is_empty() {
            return ops;
        }
        let orig = matched_pairs(&ops);
        let mut rematch = Rematch::default();
        for name in &ambiguous {
            let mut idx1 = positions.in_a[name].clone();
            let mut idx2 = positions.in_b[name].clone();
            idx1.sort_unstable();
            idx2.sort_unstable();
            let scored = self.scored_pairs(&idx1, &idx2, a, b, &orig);
            rematch.take(&idx1, &idx2, &scored);
        }
        if rematch.matches.iter().all(|m| orig.contains(m)) {
            return ops;
        }
        rematch.into_ops(ops)
    }

    /// Where each name sits in the alignment `ops` of `a` and `b`.
    fn name_positions(&mut self, ops: &[Op], a: &[EventId], b: &[EventId]) -> NamePositions {
        let names = &mut self.names;
        let mut positions = NamePositions::default();
        for &op in ops {
            if let Op::Match(i, _) | Op::Delete(i) = op {
                let n = self.s1.name(a[i], names);
                positions.record(n, i, true, op.is_match());
            }
            if let Op::Match(_, j) | Op::Insert(j) = op {
                let n = self.s2.name(b[j], names);
                positions.record(n, j, false, op.is_match());
            }
        }
        positions
    }

    /// Every pair of same-name candidates (`idx1` in `a`, `idx2` in `b`)
    /// scored by how far their subtrees' signatures agree, best first.
    fn scored_pairs(
        &mut self,
        idx1: &[usize],
        idx2: &[usize],
        a: &[EventId],
        b: &[EventId],
        orig: &FxHashSet<(usize, usize)>,
    ) -> Vec<PairScore> {
        let names = &mut self.names;
        let lv1: Vec<Vec<Vec<Option<NameId>>>> = idx1
            .iter()
            .map(|&i| signature(self.s1, a[i], names))
            .collect();
        let lv2: Vec<Vec<Vec<Option<NameId>>>> = idx2
            .iter()
            .map(|&j| signature(self.s2, b[j], names))
            .collect();
        let mut scored = Vec::with_capacity(idx1.len() * idx2.len());
        for (p, &i) in idx1.iter().enumerate() {
            for (q, &j) in idx2.iter().enumerate() {
                let (full, overlap) = match_depth(&lv1[p], &lv2[q]);
                let key = (
                    std::cmp::Reverse(full),
                    std::cmp::Reverse(overlap),
                    !orig.contains(&(i, j)),
                    i,
                    j,
                );
                scored.push(key);
            }
        }
        scored.sort_unstable();
        scored
    }

    /// Phase 3: a deleted node that wraps an inserted one (or the
    /// reverse, or both wrapping the same names) is replaced by its GPU-path
    /// children. Returns the new child lists when anything was replaced.
    fn reconcile(
        &mut self,
        ops: &[Op],
        c1: &[EventId],
        c2: &[EventId],
    ) -> Option<(Vec<EventId>, Vec<EventId>)> {
        let dels = deletes(ops);
        let ins = inserts(ops);
        if dels.is_empty() || ins.is_empty() {
            return None;
        }
        let names = &mut self.names;
        let w1 = wrappers(self.s1, names, c1, &dels);
        let w2 = wrappers(self.s2, names, c2, &ins);
        let mut sub1: FxHashMap<usize, Vec<EventId>> = FxHashMap::default();
        let mut sub2: FxHashMap<usize, Vec<EventId>> = FxHashMap::default();
        for d in &w1 {
            for x in &w2 {
                if d.name.is_some() && x.kid_names.contains(&d.name) {
                    sub2.insert(x.index, x.kids.clone());
                }
                if x.name.is_some() && d.kid_names.contains(&x.name) {
                    sub1.insert(d.index, d.kids.clone());
                }
                if !d.kids.is_empty() && !x.kids.is_empty() && d.kid_names == x.kid_names {
                    sub1.insert(d.index, d.kids.clone());
                    sub2.insert(x.index, x.kids.clone());
                }
            }
        }
        if sub1.is_empty() && sub2.is_empty() {
            return None;
        }
        let expand = |side: &Side, list: &[EventId], sub: &FxHashMap<usize, Vec<EventId>>| {
            let mut out = Vec::with_capacity(list.len());
            for (k, &c) in list.iter().enumerate() {
                match sub.get(&k) {
                    Some(kids) => out.extend_from_slice(kids),
                    None => out.push(c),
                }
            }
            side.sort_by_ts(&mut out);
            out
        };
        Some((expand(self.s1, c1, &sub1), expand(self.s2, c2, &sub2)))
    }

    /// The alignment of the reconciled lists: the earlier matches kept (by
    /// node), the rest aligned afresh.
    fn realign(
        &mut self,
        ops: &[Op],
        c1: &[EventId],
        c2: &[EventId],
        r1: &[EventId],
        r2: &[EventId],
    ) -> Vec<Op> {
        // Later positions win for a node listed twice, as in a Python dict.
        let pos1: FxHashMap<EventId, usize> = r1.iter().enumerate().map(|(k, &c)| (c, k)).collect();
        let pos2: FxHashMap<EventId, usize> = r2.iter().enumerate().map(|(k, &c)| (c, k)).collect();
        let mut out = Vec::new();
        let mut pinned1 = FxHashSet::default();
        let mut pinned2 = FxHashSet::default();
        for op in ops {
            if let Op::Match(i, j) = *op
                && let (Some(&ri), Some(&rj)) = (pos1.get(&c1[i]), pos2.get(&c2[j]))
            {
                out.push(Op::Match(ri, rj));
                pinned1.insert(ri);
                pinned2.insert(rj);
            }
        }
        let free1: Vec<usize> = (0..r1.len()).filter(|k| !pinned1.contains(k)).collect();
        let free2: Vec<usize> = (0..r2.len()).filter(|k| !pinned2.contains(k)).collect();
        if free1.is_empty() || free2.is_empty() {
            out.extend(free1.into_iter().map(Op::Delete));
            out.extend(free2.into_iter().map(Op::Insert));
            return out;
        }
        let items1: Vec<EventId> = free1.iter().map(|&k| r1[k]).collect();
        let items2: Vec<EventId> = free2.iter().map(|&k| r2[k]).collect();
        for op in self.initial_ops(&items1, &items2) {
            out.push(op.remap(&free1, &free2));
        }
        out
    }

    /// Phase 4: every unmatched node replaced by the end of its
    /// single-child chain, then aligned again, a second time with details
    /// stripped from the names.
    fn canonicalise(&mut self, ops: Vec<Op>, c1: &mut [EventId], c2: &mut [EventId]) -> Vec<Op> {
        let un1 = deletes(&ops);
        let un2 = inserts(&ops);
        if un1.is_empty() || un2.is_empty() {
            return ops;
        }
        let col1: Vec<EventId> = un1.iter().map(|&i| collapse(self.s1, c1[i]).0).collect();
        let col2: Vec<EventId> = un2.iter().map(|&j| collapse(self.s2, c2[j]).0).collect();
        let pass1 = self.align(&col1, &col2, false);
        let still1 = deletes(&pass1);
        let still2 = inserts(&pass1);
        let collapsed_ops = if !still1.is_empty() && !still2.is_empty() {
            let a: Vec<EventId> = still1.iter().map(|&k| col1[k]).collect();
            let b: Vec<EventId> = still2.iter().map(|&k| col2[k]).collect();
            let mut v: Vec<Op> = pass1.iter().copied().filter(|o| o.is_match()).collect();
            for op in self.align(&a, &b, true) {
                v.push(op.remap(&still1, &still2));
            }
            v
        } else {
            pass1
        };
        let mut out: Vec<Op> = ops.into_iter().filter(|o| o.is_match()).collect();
        for op in collapsed_ops {
            match op {
                Op::Match(ci, cj) => {
                    c1[un1[ci]] = col1[ci];
                    c2[un2[cj]] = col2[cj];
                    out.push(Op::Match(un1[ci], un2[cj]));
                }
                Op::Delete(ci) => {
                    c1[un1[ci]] = col1[ci];
                    out.push(Op::Delete(un1[ci]));
                }
                Op::Insert(cj) => {
                    c2[un2[cj]] = col2[cj];
                    out.push(Op::Insert(un2[cj]));
                }
            }
        }
        out
    }
}

/// An unmatched node as the reconciliation sees it: its name and its
/// GPU-path children with theirs.
struct Wrapper {
    /// Position in the child list.
    index: usize,
    name: Option<NameId>,
    kids: Vec<EventId>,
    kid_names: Vec<Option<NameId>>,
}

/// The nodes at `idxs` of `list` that the reconciliation may replace
/// (neither kernels nor dispatch calls), each looked at once.
fn wrappers(
    side: &mut Side,
    names: &mut NameTable,
    list: &[EventId],
    idxs: &[usize],
) -> Vec<Wrapper> {
    let mut out = Vec::new();
    for &i in idxs {
        if side.is_reconcile_skipped(list[i]) {
            continue;
        }
        let kids = side.gpu_children(list[i]);
        out.push(Wrapper {
            index: i,
            name: side.name(list[i], names),
            kid_names: kids.iter().map(|&c| side.name(c, names)).collect(),
            kids,
        });
    }
    out
}

/// The distinct top-level roots of a side's cpu roots, in order.
fn top_roots(side: &mut Side) -> Vec<EventId> {
    let mut seen = FxHashSet::default();
    let mut out = Vec::new();
    for &r in &side.tree.cpu_roots.clone() {
        let top = side.top_level_root(r);
        if seen.insert(top) {
            out.push(top);
        }
    }
    out
}

/// Walks down from `uid` while the node has exactly one GPU-path child
/// and is neither a dispatch call nor an op that launches directly.
/// Returns the last node and, when it branches (several GPU-path
/// children), those children; otherwise no children.
fn collapse(side: &Side, uid: EventId) -> (EventId, Vec<EventId>) {
    let mut cur = uid;
    for _ in 0..=side.trace.len() {
        if side.is_dispatch(cur) {
            break;
        }
        let kids = side.children(cur);
        if side.cat(cur) == crate::trace::Cat::CpuOp && kids.iter().any(|&c| side.is_dispatch(c)) {
            break;
        }
        let gpu: Vec<EventId> = kids.into_iter().filter(|&c| side.on_gpu_path(c)).collect();
        if gpu.len() != 1 {
            return (cur, gpu);
        }
        cur = gpu[0];
    }
    (cur, Vec::new())
}

/// The sorted names of the GPU-path nodes at each BFS level below `uid`
/// (levels 1 to 4; stops after the first level with nothing below it).
fn signature(side: &mut Side, uid: EventId, names: &mut NameTable) -> Vec<Vec<Option<NameId>>> {
    let mut levels = Vec::new();
    let mut frontier = vec![uid];
    for _ in 0..SIGNATURE_LEVELS {
        let mut next = Vec::new();
        let mut level = Vec::new();
        for &u in &frontier {
            for c in side.children(u) {
                if side.on_gpu_path(c) {
                    next.push(c);
                    level.push(side.name(c, names));
                }
            }
        }
        level.sort_unstable();
        levels.push(level);
        frontier = next;
        if frontier.is_empty() {
            break;
        }
    }
    levels
}

/// How far two signatures agree: (levels equal before the first
/// difference, multiset overlap at that level), or (all levels, 0).
fn match_depth(a: &[Vec<Option<NameId>>], b: &[Vec<Option<NameId>>]) -> (usize, usize) {
    let n = a.len().max(b.len());
    let empty = Vec::new();
    for d in 0..n {
        let x = a.get(d).unwrap_or(&empty);
        let y = b.get(d).unwrap_or(&empty);
        if x != y {
            // Both are sorted: count the common elements by merging.
            let (mut i, mut j, mut common) = (0, 0, 0);
            while i < x.len() && j < y.len() {
                match x[i].cmp(&y[j]) {
                    std::cmp::Ordering::Less => i += 1,
                    std::cmp::Ordering::Greater => j += 1,
                    std::cmp::Ordering::Equal => {
                        common += 1;
                        i += 1;
                        j += 1;
                    }
                }
            }
            return (d, common);
        }
    }
    (n, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_depth_counts_levels_and_overlap() {
        let l = |v: &[&[u32]]| -> Vec<Vec<Option<NameId>>> {
            v.iter()
                .map(|x| x.iter().map(|&n| Some(n)).collect())
                .collect()
        };
        assert_eq!(
            match_depth(&l(&[&[1, 2], &[3]]), &l(&[&[1, 2], &[3]])),
            (2, 0)
        );
        assert_eq!(
            match_depth(&l(&[&[1, 2], &[3, 3]]), &l(&[&[1, 2], &[3, 4]])),
            (1, 1)
        );
        assert_eq!(match_depth(&l(&[&[1]]), &l(&[&[1], &[]])), (2, 0));
        assert_eq!(match_depth(&l(&[&[1, 1, 2]]), &l(&[&[1, 2, 2]])), (0, 2));
    }
}
