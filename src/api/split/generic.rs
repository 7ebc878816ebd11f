//! Execution roots of a trace without step annotations: the call tree's
//! repeating blocks. From the outermost host events, level by level, the
//! first node whose children (some of them launching GPU work) repeat a
//! name sequence at least three times in a row, over more than half of the
//! children from where the repetition starts, gives one synthetic root per
//! block: the block's first child stretched to the end of its last.

use std::collections::{HashSet, VecDeque};
use std::path::Path;

use super::index::{Fields, Num, Root, TraceIndex};
use crate::api::load_tree;
use crate::error::{Error, LoadError};
use crate::trace::EventId;

/// A block must repeat at least this many times.
const MIN_REPEATS: usize = 3;

/// The repeating blocks' roots; empty when nothing repeats. The trace is
/// loaded a second time, with its call tree (Python frames included).
pub fn roots(ix: &TraceIndex, path: &Path) -> Result<Vec<Root>, Error> {
    let ct = load_tree(path)?;
    let (trace, tree) = (&ct.trace, &ct.tree);
    let mut seen = HashSet::new();
    let mut queue: VecDeque<EventId> = VecDeque::new();
    for &r in &tree.cpu_roots {
        let mut top = r;
        while let Some(p) = tree.parent(top) {
            top = p;
        }
        if seen.insert(top) {
            queue.push_back(top);
        }
    }
    while let Some(node) = queue.pop_front() {
        let children: Vec<EventId> = tree.children(node).collect();
        if !children.iter().any(|&c| tree.gpu_count(c) > 0) {
            continue;
        }
        let names: Vec<Option<u32>> = children
            .iter()
            .map(|&c| trace.event(c).name.map(|s| s.index() as u32))
            .collect();
        let Some((period, start)) = repeating_period(&names) else {
            queue.extend(children.iter().filter(|&&c| tree.gpu_count(c) > 0));
            continue;
        };
        let (first_name, last_name) = (names[start], names[start + period - 1]);
        let at = |name: Option<u32>| -> Vec<usize> {
            (start..names.len()).filter(|&i| names[i] == name).collect()
        };
        let mut out = Vec::new();
        for (b, e) in at(first_name).into_iter().zip(at(last_name)) {
            if e < b {
                break;
            }
            out.push(block_root(ix, children[b].index(), children[e].index())?);
        }
        return Ok(out);
    }
    Ok(Vec::new())
}

/// The synthetic root of the block from event `first` to event `last`.
fn block_root(ix: &TraceIndex, first: usize, last: usize) -> Result<Root, Error> {
    let read = |i: usize| Fields::parse(ix.text(i as u32), i);
    let load = |e: LoadError| Error::Load {
        path: Default::default(),
        error: e,
    };
    let (f, l) = (read(first).map_err(load)?, read(last).map_err(load)?);
    let ts = f.num("ts", first).map_err(load)?.unwrap_or(Num::Int(0));
    let last_ts = l.num("ts", last).map_err(load)?.unwrap_or(Num::Int(0));
    let last_dur = l.num("dur", last).map_err(load)?.unwrap_or(Num::Int(0));
    Ok(Root {
        name: f.text("name").map(|n| n.into_owned()).unwrap_or_default(),
        ts,
        dur: last_ts.add(last_dur).sub(ts),
        thread: f.thread(),
    })
}

/// The shortest period of a name sequence repeated at least three times
/// in a row, over more than half of the names from its start, trying the
/// earliest start first: (period, start).
fn repeating_period<T: PartialEq>(names: &[T]) -> Option<(usize, usize)> {
    let n = names.len();
    for start in 0..n {
        let suffix = &names[start..];
        let m = suffix.len();
        // A period over a third of the rest cannot repeat three times.
        for p in 1..=m / MIN_REPEATS {
            let pattern = &suffix[..p];
            let count = suffix
                .chunks_exact(p)
                .take_while(|block| *block == pattern)
                .count();
            if count >= MIN_REPEATS && (count * p) as f64 > m as f64 * 0.5 {
                return Some((p, start));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_skip_a_prefix_and_need_three_repeats_over_half_the_rest() {
        let s = |t: &str| t.chars().collect::<Vec<char>>();
        assert_eq!(repeating_period(&s("xabcabcabc")), Some((3, 1)));
        assert_eq!(repeating_period(&s("aaa")), Some((1, 0)));
        assert_eq!(repeating_period(&s("ababxyzw")), None);
        // Three repeats of "ab" cover 6 of 13 names from 0: not over half;
        // the first start that works is the "cdcdcdc" tail (the
        // reference's answer).
        assert_eq!(repeating_period(&s("abababcdcdcdc")), Some((2, 6)));
        assert_eq!(repeating_period::<char>(&[]), None);
    }
}
