//! Call stacks of the inference report's options: the nn.Module chain of a
//! launcher (`call_stack`, `parent_module`, `--group-by-parent-module`) and
//! the per-kernel frame chains of a unified row (`call_stack_full`,
//! `entry_point`, `--include-call-stack`).

use crate::pyfmt::str_repr;
use crate::trace::tree::Tree;
use crate::trace::{Cat, EventId, Trace};

/// Names longer than this (in characters) are cut in the module chain.
const MAX_FRAME_CHARS: usize = 256;

/// `re.sub(r"_\d+", "", s)`: every `_` followed by digits is removed with
/// them (`nn.Module: Conv_1x1_3` → `nn.Module: Convx1`).
pub fn strip_num_suffixes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The launcher's name followed by the names of its ancestors that contain
/// `nn.Module`, innermost first, as recorded (`_0` kept); ancestor names
/// over 256 characters are cut and end in `..`.
pub fn module_stack(trace: &Trace, tree: &Tree, ev: EventId) -> Vec<String> {
    let mut out = vec![trace.name(ev).to_string()];
    for a in tree.ancestors(ev) {
        let name = trace.name(a);
        // The reference cuts first and then looks for `nn.Module`, so a
        // marker past the cut does not count.
        let cut = name.char_indices().nth(MAX_FRAME_CHARS).map(|(i, _)| i);
        if !name[..cut.unwrap_or(name.len())].contains("nn.Module") {
            continue;
        }
        out.push(match cut {
            Some(i) => format!("{}..", &name[..i]),
            None => name.to_string(),
        });
    }
    out
}

/// The parent module of a [`module_stack`]: its second element (`NA` when
/// there is none) without `_<n>` suffixes.
pub fn parent_module(stack: &[String]) -> String {
    strip_num_suffixes(stack.get(1).map_or("NA", String::as_str))
}

/// Python `str()` of a list of strings.
pub fn list_repr<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<String> = items.iter().map(|s| str_repr(s.as_ref())).collect();
    format!("[{}]", parts.join(", "))
}

/// True when a frame named `name` of category `cat` is part of a unified
/// call stack: a module, an op (`::`), a Python file frame (`/`) or any
/// cpu_op.
pub fn is_stack_frame(name: &str, cat: Cat) -> bool {
    cat == Cat::CpuOp || name.contains("nn.Module") || name.contains("::") || name.contains('/')
}

/// The frames between a kernel and the collected event `top` (exclusive),
/// outermost first, `_<n>` suffixes removed; the whole ancestor chain when
/// `top` is not an ancestor (a pseudo op).
pub fn kernel_suffix(
    trace: &Trace,
    tree: &Tree,
    kernel: EventId,
    top: Option<EventId>,
) -> Vec<String> {
    let mut out: Vec<String> = tree
        .ancestors(kernel)
        .take_while(|&a| Some(a) != top)
        .filter(|&a| is_stack_frame(trace.name(a), trace.event(a).cat))
        .map(|a| strip_num_suffixes(trace.name(a)))
        .collect();
    out.reverse();
    out
}

/// One element of `call_stack_full`: a frame or a diverging tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StackItem {
    /// A frame every kernel shares.
    Frame(String),
    /// The rest of one kernel's chain.
    Tail(Vec<String>),
}

/// `call_stack_full` from the kernels' chains (each ending in the kernel's
/// name), in `kernel_details_summary` order: one chain as is, several as
/// their common prefix followed by each distinct tail. None (written as
/// `Not found`) without kernels.
pub fn full_stack(chains: &[Vec<String>]) -> Option<Vec<StackItem>> {
    let first = chains.first()?;
    if chains.len() == 1 {
        return Some(first.iter().cloned().map(StackItem::Frame).collect());
    }
    let min_len = chains.iter().map(Vec::len).min().unwrap_or(0);
    let prefix = (0..min_len)
        .take_while(|&i| chains.iter().all(|c| c[i] == first[i]))
        .count();
    let mut out: Vec<StackItem> = first[..prefix]
        .iter()
        .cloned()
        .map(StackItem::Frame)
        .collect();
    let mut tails: Vec<&[String]> = Vec::new();
    for c in chains {
        let t = &c[prefix..];
        if !tails.contains(&t) {
            tails.push(t);
        }
    }
    out.extend(tails.into_iter().map(|t| StackItem::Tail(t.to_vec())));
    Some(out)
}

/// Python `str()` of a [`full_stack`]; `Not found` for None.
pub fn full_stack_text(stack: Option<&[StackItem]>) -> String {
    let Some(items) = stack else {
        return NOT_FOUND.to_string();
    };
    let parts: Vec<String> = items
        .iter()
        .map(|i| match i {
            StackItem::Frame(f) => str_repr(f),
            StackItem::Tail(t) => list_repr(t),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// What the reference writes when it finds no stack or entry point.
pub const NOT_FOUND: &str = "Not found";

/// Files whose frames are dispatch wrappers, not entry points.
const WRAPPER_FILES: [&str; 11] = [
    "torch/_ops.py",
    "torch/nn/modules/module.py",
    "torch/utils/_contextlib.py",
    "torch/utils/_device.py",
    "torch/_tensor.py",
    "torch/functional.py",
    "torch/overrides.py",
    "torch/_inductor/",
    "torch/_functorch/",
    "torch/distributed/c10d_logger.py",
    "triton/backends/",
];

/// Frame name prefixes of wrappers.
const WRAPPER_PREFIXES: [&str; 3] = ["<built-in", "pybind11_builtins", "nn.Module:"];

/// Function names of wrappers.
const WRAPPER_FUNCS: [&str; 10] = [
    "__torch_function__",
    "_call_impl",
    "_wrapped_call_impl",
    "decorate_context",
    "dispatch_wrapper",
    "handle_torch_function",
    "wrapper",
    "custom_wrapper",
    "wrapper_custom",
    "outer_wrapper",
];

/// The function name of a `path.py(line): func` frame.
fn func_name(frame: &str) -> Option<&str> {
    frame
        .contains("): ")
        .then(|| frame.rsplit("): ").next().unwrap_or(frame))
}

fn is_wrapper(frame: &str) -> bool {
    WRAPPER_PREFIXES.iter().any(|p| frame.starts_with(p))
        || WRAPPER_FILES.iter().any(|p| frame.contains(p))
        || func_name(frame).is_some_and(|f| WRAPPER_FUNCS.contains(&f))
}

/// The reference's `_find_entry_point`: in the flattened stack, find the op
/// (last exact match, else its name without a trailing `_<n>`); then the
/// first `.py` frame below it whose function name contains the op's local
/// name (after `::`, case-insensitive), else the nearest non-wrapper `.py`
/// frame above it. `Not found` otherwise.
pub fn entry_point(stack: Option<&[StackItem]>, op_name: &str) -> String {
    let Some(items) = stack else {
        return NOT_FOUND.to_string();
    };
    let flat: Vec<&str> = items
        .iter()
        .flat_map(|i| match i {
            StackItem::Frame(f) => std::slice::from_ref(f).iter(),
            StackItem::Tail(t) => t.iter(),
        })
        .map(String::as_str)
        .collect();
    let local = op_name
        .rsplit("::")
        .next()
        .unwrap_or(op_name)
        .to_lowercase();
    let stripped = strip_trailing_num(op_name);
    let at = flat.iter().rposition(|&f| f == op_name).or_else(|| {
        (stripped != op_name)
            .then(|| flat.iter().rposition(|&f| f == stripped))
            .flatten()
    });
    let Some(at) = at else {
        return NOT_FOUND.to_string();
    };
    let inward = flat[at + 1..]
        .iter()
        .find(|f| f.contains(".py") && func_name(f).unwrap_or(f).to_lowercase().contains(&local));
    let outward = || {
        flat[..at]
            .iter()
            .rev()
            .find(|f| f.contains(".py") && !is_wrapper(f))
    };
    inward
        .or_else(outward)
        .map_or_else(|| NOT_FOUND.to_string(), |f| f.to_string())
}

/// `re.sub(r"_\d+$", "", s)`.
fn strip_trailing_num(s: &str) -> &str {
    let body = s.trim_end_matches(|c: char| c.is_ascii_digit());
    match body.strip_suffix('_') {
        Some(b) if body.len() < s.len() => b,
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn suffixes_are_stripped_like_re_sub() {
        assert_eq!(
            strip_num_suffixes("nn.Module: Conv_1x1_3"),
            "nn.Module: Convx1"
        );
        assert_eq!(strip_num_suffixes("a__1b_"), "a_b_");
        assert_eq!(
            strip_num_suffixes("nn.Module: Linear_0"),
            "nn.Module: Linear"
        );
        assert_eq!(
            strip_trailing_num("sglang_profiler::foo_triton_340"),
            "sglang_profiler::foo_triton"
        );
        assert_eq!(strip_trailing_num("x_1y"), "x_1y");
        assert_eq!(strip_trailing_num("x_"), "x_");
        assert_eq!(parent_module(&frames(&["aten::mm"])), "NA");
    }

    #[test]
    fn full_stack_splits_common_prefix_and_dedups_tails() {
        let one = full_stack(&[frames(&["a", "b", "k"])]).unwrap();
        assert_eq!(full_stack_text(Some(&one)), "['a', 'b', 'k']");
        let many = full_stack(&[
            frames(&["a", "b", "k1"]),
            frames(&["a", "c", "k2"]),
            frames(&["a", "b", "k1"]),
        ])
        .unwrap();
        assert_eq!(
            full_stack_text(Some(&many)),
            "['a', ['b', 'k1'], ['c', 'k2']]"
        );
        assert_eq!(full_stack_text(None), "Not found");
    }

    #[test]
    fn entry_point_inward_then_outward() {
        let s = full_stack(&[frames(&[
            "torch/utils/_contextlib.py(117): decorate_context",
            "model.py(10): forward",
            "vllm::foo",
            "vllm/ops.py(5): foo_impl",
            "kernel",
        ])])
        .unwrap();
        assert_eq!(
            entry_point(Some(&s), "vllm::foo"),
            "vllm/ops.py(5): foo_impl"
        );
        assert_eq!(entry_point(Some(&s), "vllm::bar"), "Not found");
        let s = full_stack(&[frames(&[
            "model.py(10): forward",
            "torch/nn/modules/module.py(1): _call_impl",
            "aten::mm",
            "kernel",
        ])])
        .unwrap();
        assert_eq!(entry_point(Some(&s), "aten::mm"), "model.py(10): forward");
    }
}
