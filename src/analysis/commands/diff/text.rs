//! `merged_tree_output.txt`: the merged tree drawn with box
//! characters; one-sided nodes marked `>> trace1:` / `<< trace2:`.

use std::fmt::Write;

use super::side::Side;
use super::{MergedKind, MergedTree};

/// The merged tree as text, one line per node in pre-order; with
/// `prune_non_gpu`, roots on no side's GPU path are left out.
pub fn merged_tree_text(m: &MergedTree, s1: &Side, s2: &Side, prune_non_gpu: bool) -> String {
    let mut out = String::new();
    let n = m.roots.len();
    for (i, &r) in m.roots.iter().enumerate() {
        if prune_non_gpu {
            let node = &m.nodes[r as usize];
            let on = node.uid1.is_some_and(|u| s1.on_gpu_path(u))
                || node.uid2.is_some_and(|u| s2.on_gpu_path(u));
            if !on {
                continue;
            }
        }
        let mut prefix = String::new();
        write_node(&mut out, m, s1, s2, r, &mut prefix, i + 1 == n);
    }
    out
}

/// Appends the line of node `id` and, below it, its children: matched
/// ones first, then the baseline's, then the variant's.
fn write_node(
    out: &mut String,
    m: &MergedTree,
    s1: &Side,
    s2: &Side,
    id: u32,
    prefix: &mut String,
    last: bool,
) {
    let node = &m.nodes[id as usize];
    let connector = if last { "└── " } else { "├── " };
    let n1 = node.uid1.map(|u| s1.op_name(u));
    let n2 = node.uid2.map(|u| s2.op_name(u));
    let none = || "None".to_string();
    let _ = match node.kind {
        MergedKind::Combined if n1.is_some() && n1 == n2 => {
            writeln!(out, "{prefix}{connector}{}", n1.unwrap_or_else(none))
        }
        MergedKind::Combined => writeln!(
            out,
            "{prefix}{connector}combined: {} | {}",
            n1.unwrap_or_else(none),
            n2.unwrap_or_else(none)
        ),
        MergedKind::Base => writeln!(
            out,
            "{prefix}{connector}>> trace1: {}",
            n1.unwrap_or_else(none)
        ),
        MergedKind::Variant => {
            writeln!(
                out,
                "{prefix}{connector}<< trace2: {}",
                n2.unwrap_or_else(none)
            )
        }
    };
    let mut kids: Vec<u32> = Vec::with_capacity(node.children.len());
    for kind in [MergedKind::Combined, MergedKind::Base, MergedKind::Variant] {
        kids.extend(
            node.children
                .iter()
                .copied()
                .filter(|&c| m.nodes[c as usize].kind == kind),
        );
    }
    let len = prefix.len();
    prefix.push_str(if last { "    " } else { "│   " });
    for (k, &c) in kids.iter().enumerate() {
        write_node(out, m, s1, s2, c, prefix, k + 1 == kids.len());
    }
    prefix.truncate(len);
}
