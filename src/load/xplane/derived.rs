//! The rows xprof derives for each GPU from its kernels' XLA statistics
//! (`Framework Name Scope`, `Framework Ops`, `XLA Modules`, `XLA Ops`,
//! `Source code`). They are not in the file, but the trace viewer emits
//! them, and their events take part in the UID numbering, so the decoder
//! rebuilds them the way xprof 2.20.1 does (its `derived_timeline.cc`,
//! for profiles without step groups).

use std::collections::HashMap;

use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

use prost::{DecodeError, Message};

use super::events::start_ps;
use super::proto::{LineScan, RawPlane, XEvent, line_events};
use super::stats::{PlaneStats, StatKind};
use crate::trace::xla::HloInstruction;

/// Row ids (tids) and names of the derived rows, in xprof's creation
/// order: framework ops, name scopes, XLA ops, XLA modules, source.
pub const DERIVED_LINES: [(u32, &str); 5] = [
    (0xDEAD_BEF2, "Framework Ops"),
    (0xDEAD_BEF1, "Framework Name Scope"),
    (0xDEAD_BEF4, "XLA Ops"),
    (0xDEAD_BEF3, "XLA Modules"),
    (0xDEAD_BEF6, "Source code"),
];

const TF_OPS: usize = 0;
const NAME_SCOPE: usize = 1;
const HLO_OPS: usize = 2;
const MODULES: usize = 3;
const SOURCE: usize = 4;

/// Rows whose last events are reset with a row's level 0.
fn dependents(line: usize) -> &'static [usize] {
    match line {
        NAME_SCOPE => &[TF_OPS],
        MODULES => &[NAME_SCOPE, HLO_OPS],
        _ => &[],
    }
}

/// True for the ids xprof reserves for derived rows (it compares them as
/// 32-bit ints).
pub fn is_derived_line_id(id: i64) -> bool {
    const MIN: i32 = 0xDEAD_BEEF_u32 as i32;
    let id = id as i32;
    (MIN..=MIN + 289).contains(&id)
}

/// One derived event: its name as shown (the display name when there is
/// one), the full name when that differs, and its span in picoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedEvent {
    /// Name shown (xprof's display name, else the name).
    pub name: String,
    /// Start, picoseconds.
    pub begin_ps: u64,
    /// Duration, picoseconds.
    pub dur_ps: u64,
}

/// The HLO instructions of each program by name, for symbol lookup.
pub type Symbols<'a> = HashMap<i64, HashMap<&'a str, &'a HloInstruction>>;

#[derive(Debug, Clone, Copy)]
struct Span {
    begin: u64,
    dur: u64,
}

impl Span {
    fn end(self) -> u64 {
        self.begin.wrapping_add(self.dur)
    }
}

#[derive(Debug, Clone, Copy)]
struct Ev {
    meta: usize,
    span: Span,
}

#[derive(Debug, Default)]
struct Line {
    events: Vec<Ev>,
    /// The open event of each nesting level (index into `events`).
    last: Vec<Option<usize>>,
}

/// Event metadata of the plane by name: the derived events share one name
/// space with the plane's own metadata, and a name's display name is the
/// first one set.
struct Metas<'p> {
    ids: HashMap<String, usize>,
    names: Vec<String>,
    display: Vec<String>,
    existing: HashMap<&'p str, &'p str>,
}

impl<'p> Metas<'p> {
    fn new(plane: &'p RawPlane) -> Self {
        let mut existing = HashMap::new();
        for m in plane.event_metadata.values().filter(|m| !m.name.is_empty()) {
            existing
                .entry(m.name.as_str())
                .or_insert(m.display_name.as_str());
        }
        Metas {
            ids: HashMap::new(),
            names: Vec::new(),
            display: Vec::new(),
            existing,
        }
    }

    fn get(&mut self, name: &str) -> usize {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len();
        self.names.push(name.to_string());
        let d = self.existing.get(name).copied().unwrap_or("");
        self.display.push(d.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    fn with_display(&mut self, name: &str, display: &str) -> usize {
        let id = self.get(name);
        if self.display[id].is_empty() {
            self.display[id] = display.to_string();
        }
        id
    }

    fn shown(&self, id: usize) -> &str {
        if self.display[id].is_empty() {
            &self.names[id]
        } else {
            &self.display[id]
        }
    }
}

/// The derived rows of one GPU plane (empty rows left out), each with its
/// events in creation order; `lines` are the scans of the plane's lines,
/// in order (their headers and event counts are not read again).
pub fn derive(
    plane: &RawPlane,
    lines: &[LineScan<'_>],
    stats: &PlaneStats<'_>,
    symbols: &Symbols<'_>,
) -> Result<Vec<(usize, Vec<DerivedEvent>)>, DecodeError> {
    let Some(source_id) = busiest_line(lines.iter().map(|l| (l.head.id, l.events))) else {
        return Ok(Vec::new());
    };
    // Each kernel as its span and the index of its statistics among the
    // distinct ones (they repeat on every step): the line's events are not
    // held decoded.
    let mut events: Vec<(Span, usize)> = Vec::new();
    let mut distinct: IndexSet<GpuKey, FxBuildHasher> = IndexSet::default();
    let mut e = XEvent::default();
    for (raw, scan) in plane.lines.iter().zip(lines) {
        let line = &scan.head;
        if line.id != source_id {
            continue;
        }
        for raw_event in line_events(raw) {
            e.clear();
            e.merge(raw_event?)?;
            let span = Span {
                begin: start_ps(line.timestamp_ns, e.offset_ps()),
                dur: e.duration_ps as u64,
            };
            let g = GpuStats::of(&e, stats);
            let key = match distinct.get_index_of(&g) {
                Some(k) => k,
                None => distinct.insert_full(g.owned()).0,
            };
            events.push((span, key));
        }
    }
    events.sort_by_key(|(s, _)| (s.begin, s.dur));
    let mut d = Deriver {
        metas: Metas::new(plane),
        lines: Default::default(),
    };
    // Kernels with the same statistics open or extend the same derived
    // events: their steps are worked out once, in time order (the events'
    // metadata are made on first use).
    let mut steps: Vec<Option<Vec<Step>>> = Vec::new();
    steps.resize_with(distinct.len(), || None);
    for (span, key) in events {
        let steps = steps[key].get_or_insert_with(|| d.steps(&distinct[key].view(), symbols));
        d.replay(steps, span);
    }
    let rows = d
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.events.is_empty());
    Ok(rows
        .map(|(i, l)| {
            let evs = l
                .events
                .iter()
                .map(|e| DerivedEvent {
                    name: d.metas.shown(e.meta).to_string(),
                    begin_ps: e.span.begin,
                    dur_ps: e.span.dur,
                })
                .collect();
            (i, evs)
        })
        .collect())
}

/// The id of the non-derived line with the most events (the smaller id on
/// a tie): xprof derives rows from that line only.
fn busiest_line(counts: impl Iterator<Item = (i64, usize)>) -> Option<i64> {
    let mut best: Option<(usize, i64)> = None;
    for (id, n) in counts.filter(|(id, _)| !is_derived_line_id(*id)) {
        let better = match best {
            None => true,
            Some((bn, bid)) => n > bn || (n == bn && id < bid),
        };
        if better {
            best = Some((n, id));
        }
    }
    best.map(|(_, id)| id)
}

/// The statistics of a kernel event that drive the derived rows (its own
/// stats, not its metadata's, as xprof reads them).
#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct GpuStats<'a> {
    tf_op: &'a str,
    hlo_ops: Option<&'a str>,
    hlo_module: &'a str,
    program_id: Option<u64>,
    has_kernel_details: bool,
    cuda_graph_exec: bool,
}

/// A [`GpuStats`] that owns its texts (hashed the same way, field by field,
/// so that either finds it in a set).
#[derive(Debug, PartialEq, Eq, Hash)]
struct GpuKey {
    tf_op: String,
    hlo_ops: Option<String>,
    hlo_module: String,
    program_id: Option<u64>,
    has_kernel_details: bool,
    cuda_graph_exec: bool,
}

impl GpuKey {
    fn view(&self) -> GpuStats<'_> {
        GpuStats {
            tf_op: &self.tf_op,
            hlo_ops: self.hlo_ops.as_deref(),
            hlo_module: &self.hlo_module,
            program_id: self.program_id,
            has_kernel_details: self.has_kernel_details,
            cuda_graph_exec: self.cuda_graph_exec,
        }
    }
}

impl indexmap::Equivalent<GpuKey> for GpuStats<'_> {
    fn equivalent(&self, key: &GpuKey) -> bool {
        *self == key.view()
    }
}

impl<'a> GpuStats<'a> {
    fn of<'p: 'a>(e: &'a XEvent, stats: &PlaneStats<'p>) -> Self {
        let mut g = GpuStats::default();
        for s in &e.stats {
            match stats.kind(s.metadata_id) {
                StatKind::TfOp => g.tf_op = stats.str_or_ref(s),
                StatKind::HloOp => g.hlo_ops = Some(stats.str_or_ref(s)),
                StatKind::HloModule => g.hlo_module = stats.str_or_ref(s),
                StatKind::ProgramId => g.program_id = Some(stats.int_or_uint(s)),
                StatKind::KernelDetails => {
                    g.has_kernel_details = !stats.str_or_ref(s).is_empty();
                }
                StatKind::CudaGraphExecId => g.cuda_graph_exec = true,
                _ => {}
            }
        }
        g
    }

    fn owned(&self) -> GpuKey {
        GpuKey {
            tf_op: self.tf_op.to_string(),
            hlo_ops: self.hlo_ops.map(str::to_string),
            hlo_module: self.hlo_module.to_string(),
            program_id: self.program_id,
            has_kernel_details: self.has_kernel_details,
            cuda_graph_exec: self.cuda_graph_exec,
        }
    }
}

struct Deriver<'p> {
    metas: Metas<'p>,
    lines: [Line; 5],
}

/// What a kernel does to one derived row: extend or open the event of
/// level 0, or the stack of events of levels 0, 1, … (closing the rest).
#[derive(Debug)]
enum Step {
    Level { line: usize, meta: usize },
    Events { line: usize, metas: Vec<usize> },
}

impl Deriver<'_> {
    /// Applies a kernel's steps, in order, with the kernel's span.
    fn replay(&mut self, steps: &[Step], span: Span) {
        for step in steps {
            match step {
                Step::Level { line, meta } => self.expand_or_add_level(*line, *meta, span, 0),
                Step::Events { line, metas } => self.expand_or_add_events(*line, metas, span),
            }
        }
    }

    /// The steps of a kernel of the busiest line with statistics `g` (the
    /// events' metadata they name are made on first use, in order).
    fn steps(&mut self, g: &GpuStats<'_>, symbols: &Symbols<'_>) -> Vec<Step> {
        let mut steps = Vec::new();
        if !g.has_kernel_details && !g.cuda_graph_exec {
            return steps;
        }
        if !g.hlo_module.is_empty() {
            let name = match g.program_id {
                Some(p) => format!("{}({p})", g.hlo_module),
                None => g.hlo_module.to_string(),
            };
            let meta = self.metas.get(&name);
            steps.push(Step::Level {
                line: MODULES,
                meta,
            });
        }
        if let Some(ops) = g.hlo_ops {
            let names: Vec<&str> = ops.split("::").collect();
            let prefix = match g.program_id {
                Some(p) => format!("{p}/"),
                None => format!("{}/", g.hlo_module),
            };
            let metas: Vec<usize> = names
                .iter()
                .map(|n| self.metas.with_display(&format!("{prefix}{n}"), n))
                .collect();
            steps.push(Step::Events {
                line: HLO_OPS,
                metas,
            });
            let last = names.last().copied().unwrap_or("");
            let instr = g
                .program_id
                .and_then(|p| symbols.get(&(p as i64)))
                .and_then(|m| m.get(last));
            if let Some(i) = instr {
                let op_name = i.op_name.as_deref().unwrap_or("");
                let op_type = i.op_type.as_deref().unwrap_or("");
                // xprof's TraceMeOp: "<op_name>:<op_type>", never empty.
                self.tf_op(&format!("{op_name}:{op_type}"), &mut steps);
                if let Some(file) = i.source_file.as_deref() {
                    let base = file.rsplit('/').next().unwrap_or(file);
                    let line = i.source_line.unwrap_or(0);
                    let meta = self.metas.get(&format!("{base}:{line}"));
                    steps.push(Step::Level { line: SOURCE, meta });
                }
            }
        } else if !g.tf_op.is_empty() {
            self.tf_op(g.tf_op, &mut steps);
        }
        steps
    }

    /// The steps of a framework op: its name scopes (JAX and TensorFlow
    /// ops) and the op.
    fn tf_op(&mut self, full: &str, steps: &mut Vec<Step>) {
        let op = tf_op::parse(full);
        if matches!(
            op.category,
            tf_op::Category::TensorFlow | tf_op::Category::Jax
        ) {
            let scopes = tf_op::name_scopes(op.name);
            let metas: Vec<usize> = scopes.iter().map(|s| self.metas.get(s)).collect();
            steps.push(Step::Events {
                line: NAME_SCOPE,
                metas,
            });
        }
        let meta = self.metas.with_display(full, &tf_op::event_name(&op));
        steps.push(Step::Level { line: TF_OPS, meta });
    }

    fn expand_or_add_events(&mut self, line: usize, metas: &[usize], span: Span) {
        if metas.is_empty() {
            return;
        }
        for (level, &m) in metas.iter().enumerate() {
            self.expand_or_add_level(line, m, span, level);
        }
        self.reset(line, metas.len());
    }

    /// Extends the open event of `level` when it has the same metadata (on
    /// a GPU plane without step groups, whatever the gap); otherwise closes
    /// the levels from `level` down and opens a new event.
    fn expand_or_add_level(&mut self, line: usize, meta: usize, span: Span, level: usize) {
        let l = &mut self.lines[line];
        if l.last.len() <= level {
            l.last.resize(level + 1, None);
        }
        if let Some(ix) = l.last[level]
            && l.events[ix].meta == meta
        {
            let e = &mut l.events[ix].span;
            let begin = e.begin.min(span.begin);
            let end = e.end().max(span.end());
            *e = Span {
                begin,
                dur: end.wrapping_sub(begin),
            };
            return;
        }
        self.reset(line, level);
        let l = &mut self.lines[line];
        l.events.push(Ev { meta, span });
        l.last[level] = Some(l.events.len() - 1);
    }

    fn reset(&mut self, line: usize, level: usize) {
        adjust_durations(&mut self.lines[line], level);
        let l = &mut self.lines[line];
        for slot in l.last.iter_mut().skip(level) {
            *slot = None;
        }
        if level == 0 {
            for &d in dependents(line) {
                self.reset(d, 0);
            }
        }
    }
}

/// xprof's `AdjustDurationForTraceViewer`: in a stack of open events from
/// `level` down, each event with the same span as the one above it ends
/// one more nanosecond earlier (at most the top event's length less 1 ns),
/// so that the viewer stacks them in a fixed order.
fn adjust_durations(line: &mut Line, level: usize) {
    if level >= line.last.len() || line.last[level].is_none() {
        return;
    }
    let mut max_level = level;
    while max_level < line.last.len() && line.last[max_level].is_some() {
        max_level += 1;
    }
    let max_level = max_level - 1;
    if max_level <= level {
        return;
    }
    let Some(top) = line.last[max_level] else {
        return;
    };
    let max_shrink_ns = (line.events[top].span.dur as i64) / 1000 - 1;
    let mut shrink_ns: i64 = 0;
    let mut previous: Option<(u64, u64)> = None;
    for i in level..=max_level {
        let Some(ix) = line.last[i] else { continue };
        let s = line.events[ix].span;
        if shrink_ns < max_shrink_ns && previous == Some((s.begin, s.dur)) {
            shrink_ns += 1;
        }
        previous = Some((s.begin, s.dur));
        if shrink_ns != 0 {
            let end = s.end().wrapping_sub(1000 * shrink_ns as u64);
            line.events[ix].span.dur = end.wrapping_sub(s.begin);
        }
    }
}

/// Framework op names as xprof parses them (`tf_op_utils.cc`).
pub mod tf_op {
    /// What kind of op a full name denotes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Category {
        /// Not recognised.
        Unknown,
        /// A TensorFlow op (`scope/Name:Type`).
        TensorFlow,
        /// A JAX op (`jit(f)/op:` with a lower-case op type).
        Jax,
        /// A tf.data iterator.
        TfData,
        /// A GPU copy (`MEMCPYHToD`, …).
        Memcpy,
    }

    /// A parsed op name.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct TfOp<'a> {
        /// Category.
        pub category: Category,
        /// Op name (with name scopes).
        pub name: &'a str,
        /// Op type.
        pub r#type: &'a str,
    }

    fn is_integer(s: &str) -> bool {
        s.trim_matches(|c: char| c.is_ascii_whitespace())
            .parse::<i64>()
            .is_ok()
    }

    /// `[A-Za-z0-9.][A-Za-z0-9_.\/>-]*`
    fn is_tf_op_name(s: &str) -> bool {
        let mut b = s.bytes();
        matches!(b.next(), Some(c) if c.is_ascii_alphanumeric() || c == b'.')
            && b.all(|c| c.is_ascii_alphanumeric() || b"_./>-".contains(&c))
    }

    /// `[A-Z_][a-zA-Z0-9_]*`
    fn is_tf_op_type(s: &str) -> bool {
        let mut b = s.bytes();
        matches!(b.next(), Some(c) if c.is_ascii_uppercase() || c == b'_')
            && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
    }

    /// `[a-z_][a-z0-9_]*(\[.*\])?`
    fn is_jax_op_type(s: &str) -> bool {
        let head_len = s
            .bytes()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
            .count();
        let Some(first) = s.bytes().next() else {
            return false;
        };
        if !(first.is_ascii_lowercase() || first == b'_') {
            return false;
        }
        let rest = &s[head_len..];
        rest.is_empty()
            || (rest.starts_with('[')
                && rest.ends_with(']')
                && rest.len() >= 2
                && !rest.contains('\n'))
    }

    /// The op type implied by an op name: its last path component without
    /// a numeric `_N` suffix.
    fn derive_op_type(full: &str) -> &str {
        let op_name = full.rsplit('/').next().unwrap_or(full);
        let suffix = op_name.rsplit('_').next().unwrap_or(op_name);
        if is_integer(suffix) && suffix.len() < op_name.len() {
            &op_name[..op_name.len() - suffix.len() - 1]
        } else {
            op_name
        }
    }

    fn memcpy(full: &str) -> Option<TfOp<'_>> {
        let types = ["MemcpyHToD", "MemcpyDToH", "MemcpyDToD", "MemcpyHToH"];
        types.iter().find_map(|t| {
            let matches = full
                .get(..t.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(t));
            matches.then_some(TfOp {
                category: Category::Memcpy,
                name: full,
                r#type: t,
            })
        })
    }

    /// Parses `<name>:<type>` the way xprof's `ParseTfOpFullname` does.
    pub fn parse(full: &str) -> TfOp<'_> {
        let unknown = TfOp {
            category: Category::Unknown,
            name: full,
            r#type: "",
        };
        let Some((name, ty)) = full.split_once(':') else {
            return memcpy(full).unwrap_or(unknown);
        };
        if name == "Iterator" {
            return TfOp {
                category: Category::TfData,
                name: full,
                r#type: "Dataset",
            };
        }
        if is_tf_op_name(name) && is_tf_op_type(ty) {
            return TfOp {
                category: Category::TensorFlow,
                name,
                r#type: ty,
            };
        }
        let op_type = if ty.is_empty() {
            derive_op_type(name)
        } else {
            ty
        };
        if is_jax_op_type(op_type) {
            let end = op_type.find('[').unwrap_or(op_type.len());
            return TfOp {
                category: Category::Jax,
                name,
                r#type: &op_type[..end],
            };
        }
        if ty.is_empty() {
            return TfOp {
                category: Category::TensorFlow,
                name,
                r#type: op_type,
            };
        }
        unknown
    }

    /// The name scopes of an op name: its path components but the last.
    pub fn name_scopes(name: &str) -> Vec<&str> {
        let mut parts: Vec<&str> = name.split('/').collect();
        parts.pop();
        parts
    }

    /// The name xprof shows for an op (`TfOpEventName`).
    pub fn event_name(op: &TfOp<'_>) -> String {
        match op.category {
            Category::Unknown => op
                .name
                .trim_end_matches(|c: char| c.is_ascii_whitespace())
                .to_string(),
            Category::TfData => {
                let last = op.name.rsplit("::").next().unwrap_or(op.name);
                format!("Iterator::{last}")
            }
            _ => op.r#type.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_derived_line_id;
    use super::tf_op::{Category, event_name, name_scopes, parse};

    #[test]
    fn op_names_parse_as_xprof_parses_them() {
        // (full name, category, name, type, shown name), by xprof's rules.
        let cases = [
            (
                "jit(f)/jvp()/dot_general:",
                Category::Jax,
                "jit(f)/jvp()/dot_general",
                "dot_general",
                "dot_general",
            ),
            (
                "jit(f)/transpose[permutation=(1, 0)]:",
                Category::Jax,
                "jit(f)/transpose[permutation=(1, 0)]",
                "transpose",
                "transpose",
            ),
            ("jit(f)/add_1:", Category::Jax, "jit(f)/add_1", "add", "add"),
            (
                "model/dense/MatMul:MatMul",
                Category::TensorFlow,
                "model/dense/MatMul",
                "MatMul",
                "MatMul",
            ),
            (
                "XlaModule:",
                Category::TensorFlow,
                "XlaModule",
                "XlaModule",
                "XlaModule",
            ),
            (":", Category::TensorFlow, "", "", ""),
            (
                "Iterator::Batch::Map",
                Category::TfData,
                "Iterator::Batch::Map",
                "Dataset",
                "Iterator::Map",
            ),
            (
                "MEMCPYHToD",
                Category::Memcpy,
                "MEMCPYHToD",
                "MemcpyHToD",
                "MemcpyHToD",
            ),
            ("a:B:c", Category::Unknown, "a:B:c", "", "a:B:c"),
            (
                "no colon  ",
                Category::Unknown,
                "no colon  ",
                "",
                "no colon",
            ),
        ];
        for (full, category, name, ty, shown) in cases {
            let op = parse(full);
            assert_eq!(
                (op.category, op.name, op.r#type),
                (category, name, ty),
                "{full}"
            );
            assert_eq!(event_name(&op), shown, "{full}");
        }
        assert_eq!(name_scopes("jit(f)/jvp()/dot_general"), ["jit(f)", "jvp()"]);
        assert!(name_scopes("kernel").is_empty());
    }

    #[test]
    fn derived_line_ids_compare_as_32_bit_ints() {
        assert!(is_derived_line_id(0xDEAD_BEEF));
        assert!(
            is_derived_line_id(0xDEAD_BEF1 + (7 << 32)),
            "only the low 32 bits count"
        );
        assert!(!is_derived_line_id(0xDEAD_BEEE));
        assert!(!is_derived_line_id(15));
    }
}
