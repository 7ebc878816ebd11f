//! Event arguments, format-neutral: the link ids every event may carry
//! ([`Args`]), the recorded op arguments ([`OpArgs`]), collective metadata
//! ([`CollectiveArgs`]) and the values they hold ([`ArgValue`]).

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use super::handle::{ArgsId, StrId, ValueId};

/// A recorded argument value, format-neutral: what Python's `json.loads`
/// would give for it.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// `null` / `None`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer that fits `i64`.
    Int(i64),
    /// An integer above `i64::MAX` that fits `u64`.
    UInt(u64),
    /// Any other number.
    Float(f64),
    /// A string.
    Str(Box<str>),
    /// A list.
    List(Box<[ArgValue]>),
    /// A map; keys sorted, the last duplicate winning (the order serde_json
    /// gives a map without `preserve_order`, which the outputs follow).
    Map(Box<[(Box<str>, ArgValue)]>),
}

impl ArgValue {
    /// A list of integers (a shape, a stride list).
    pub fn ints(values: &[i64]) -> ArgValue {
        ArgValue::List(values.iter().map(|&i| ArgValue::Int(i)).collect())
    }

    /// A list of values.
    pub fn list(values: Vec<ArgValue>) -> ArgValue {
        ArgValue::List(values.into_boxed_slice())
    }

    /// A map from entries in any order: sorted by key, the last duplicate wins.
    pub fn map(mut entries: Vec<(Box<str>, ArgValue)>) -> ArgValue {
        // A stable sort keeps duplicates in input order; keep the last of each run.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Box<str>, ArgValue)> = Vec::with_capacity(entries.len());
        for e in entries {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => out.push(e),
            }
        }
        ArgValue::Map(out.into_boxed_slice())
    }

    /// The integer, when the value is an integer that fits `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            ArgValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The integer, when the value is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            ArgValue::Int(i) => u64::try_from(*i).ok(),
            ArgValue::UInt(u) => Some(*u),
            _ => None,
        }
    }

    /// Any number as a float.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ArgValue::Int(i) => Some(*i as f64),
            ArgValue::UInt(u) => Some(*u as f64),
            ArgValue::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// True for the number variants.
    pub fn is_number(&self) -> bool {
        matches!(
            self,
            ArgValue::Int(_) | ArgValue::UInt(_) | ArgValue::Float(_)
        )
    }

    /// The string, when the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ArgValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, when the value is a list.
    pub fn as_list(&self) -> Option<&[ArgValue]> {
        match self {
            ArgValue::List(v) => Some(v),
            _ => None,
        }
    }

    /// True for [`ArgValue::List`].
    pub fn is_list(&self) -> bool {
        matches!(self, ArgValue::List(_))
    }

    /// The entries in key order, when the value is a map.
    pub fn as_map(&self) -> Option<&[(Box<str>, ArgValue)]> {
        match self {
            ArgValue::Map(m) => Some(m),
            _ => None,
        }
    }

    /// True for [`ArgValue::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, ArgValue::Null)
    }

    /// Compact JSON text of the value, byte for byte what serde_json's
    /// `to_string` writes (floats in shortest round-trip form, non-finite
    /// floats as `null`, map keys in order).
    pub fn json_text(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            ArgValue::Null => out.push_str("null"),
            ArgValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            ArgValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            ArgValue::UInt(u) => {
                let _ = write!(out, "{u}");
            }
            ArgValue::Float(x) if x.is_finite() => {
                out.push_str(zmij::Buffer::new().format_finite(*x));
            }
            ArgValue::Float(_) => out.push_str("null"),
            ArgValue::Str(s) => write_json_str(out, s),
            ArgValue::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            ArgValue::Map(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_str(out, k);
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

impl std::fmt::Display for ArgValue {
    /// The compact JSON text ([`ArgValue::json_text`]), as messages show values.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.json_text())
    }
}

/// A JSON string literal, escaped as serde_json escapes it: quotes,
/// backslashes and control characters only.
fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The integer niche of [`Args`]: one args record per event adds up, so
/// absent integers cost no extra tag. A real `i64::MIN` reads as absent.
const ABSENT: i64 = i64::MIN;

fn niche(v: Option<i64>) -> i64 {
    v.unwrap_or(ABSENT)
}

fn unniche(v: i64) -> Option<i64> {
    (v != ABSENT).then_some(v)
}

/// The arguments every pass may read of an event: its link ids and the
/// handles of its recorded op arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Args {
    correlation: i64,
    external_id: i64,
    stream: i64,
    sequence: i64,
    /// `Input Dims`.
    pub input_dims: Option<ValueId>,
    /// `Input type`.
    pub input_type: Option<ValueId>,
    /// `Input Strides`.
    pub input_strides: Option<ValueId>,
    /// `Concrete Inputs`.
    pub concrete_inputs: Option<ValueId>,
    /// `kernel`: the kernel a runtime launch names (kept for runtime events;
    /// capture traces pair their launches with replayed kernels by it).
    pub kernel: Option<StrId>,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            correlation: ABSENT,
            external_id: ABSENT,
            stream: ABSENT,
            sequence: ABSENT,
            input_dims: None,
            input_type: None,
            input_strides: None,
            concrete_inputs: None,
            kernel: None,
        }
    }
}

impl Args {
    /// A record from its link ids (`correlation`, `External id`, `stream`,
    /// `Sequence number`) and its op arguments.
    pub fn new(links: LinkIds, op: OpArgIds) -> Args {
        Args {
            correlation: niche(links.correlation),
            external_id: niche(links.external_id),
            stream: niche(links.stream),
            sequence: niche(links.sequence),
            input_dims: op.dims,
            input_type: op.types,
            input_strides: op.strides,
            concrete_inputs: op.concrete,
            kernel: None,
        }
    }

    /// The link ids of the record.
    pub fn links(&self) -> LinkIds {
        LinkIds {
            correlation: self.correlation(),
            external_id: self.external_id(),
            stream: self.stream(),
            sequence: self.sequence(),
        }
    }

    /// Sets `correlation` (the capture merge gives a replayed kernel its
    /// capture launch's).
    pub(crate) fn set_correlation(&mut self, v: Option<i64>) {
        self.correlation = niche(v);
    }

    /// `correlation`: ties a launch to its GPU work.
    pub fn correlation(&self) -> Option<i64> {
        unniche(self.correlation)
    }

    /// `External id`: ties ops, launches and GPU work in older traces.
    pub fn external_id(&self) -> Option<i64> {
        unniche(self.external_id)
    }

    /// `stream` of GPU work.
    pub fn stream(&self) -> Option<i64> {
        unniche(self.stream)
    }

    /// `Sequence number`: ties a forward op to its backward.
    pub fn sequence(&self) -> Option<i64> {
        unniche(self.sequence)
    }

    /// The op argument handles.
    pub fn op_ids(&self) -> OpArgIds {
        OpArgIds {
            dims: self.input_dims,
            types: self.input_type,
            strides: self.input_strides,
            concrete: self.concrete_inputs,
        }
    }
}

/// The trace's argument records, stored packed: each link id in 32 bits
/// (zigzag, so small negative ids fit too), 36 bytes a record instead of
/// the 56 of an [`Args`]. A record with an id that does not fit keeps its
/// ids in a side table (rare: Kineto's ids are counters).
#[derive(Debug, Default)]
pub struct ArgsTable {
    records: Vec<PackedArgs>,
    /// Full link ids of the records whose ids do not all fit, by index.
    wide: FxHashMap<u32, [i64; 4]>,
}

/// One record of an [`ArgsTable`].
#[derive(Debug, Clone, Copy)]
struct PackedArgs {
    /// Link ids as [`pack_id`] codes: 0 absent, [`WIDE`] in the side table.
    ids: [u32; 4],
    op: [Option<ValueId>; 4],
    kernel: Option<StrId>,
}

/// The code of a link id kept in the side table.
const WIDE: u32 = u32::MAX;

/// The 32-bit code of a link id (stored form, [`ABSENT`] for none): 0 for
/// absent, the zigzag form + 1 when below [`WIDE`], else None.
fn pack_id(v: i64) -> Option<u32> {
    if v == ABSENT {
        return Some(0);
    }
    let zigzag = ((v << 1) ^ (v >> 63)) as u64;
    u32::try_from(zigzag + 1).ok().filter(|&c| c != WIDE)
}

/// The link id (stored form) of a code below [`WIDE`].
fn unpack_id(code: u32) -> i64 {
    if code == 0 {
        return ABSENT;
    }
    let zigzag = u64::from(code - 1);
    ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64)
}

impl ArgsTable {
    /// How many records there are.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when there are no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Makes room for `n` more records.
    pub fn try_reserve(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        self.records.try_reserve(n)
    }

    /// Frees spare capacity (the report runs with the table in memory).
    pub fn shrink_to_fit(&mut self) {
        self.records.shrink_to_fit();
        self.wide.shrink_to_fit();
    }

    /// Appends a record; its handle.
    pub fn push(&mut self, a: Args) -> ArgsId {
        let id = ArgsId::new(self.records.len());
        let p = self.pack(id, a);
        self.records.push(p);
        id
    }

    /// Record `id`.
    #[inline]
    pub fn get(&self, id: ArgsId) -> Args {
        let p = &self.records[id.index()];
        let ids = match p.ids.contains(&WIDE) {
            false => p.ids.map(unpack_id),
            true => self.wide[&(id.index() as u32)],
        };
        Args {
            correlation: ids[0],
            external_id: ids[1],
            stream: ids[2],
            sequence: ids[3],
            input_dims: p.op[0],
            input_type: p.op[1],
            input_strides: p.op[2],
            concrete_inputs: p.op[3],
            kernel: p.kernel,
        }
    }

    /// Replaces record `id`.
    pub fn set(&mut self, id: ArgsId, a: Args) {
        self.wide.remove(&(id.index() as u32));
        self.records[id.index()] = self.pack(id, a);
    }

    /// `a` packed as record `id` (its ids into the side table when one
    /// does not fit).
    fn pack(&mut self, id: ArgsId, a: Args) -> PackedArgs {
        let full = [a.correlation, a.external_id, a.stream, a.sequence];
        let codes = full.map(pack_id);
        let ids = if codes.iter().all(Option::is_some) {
            codes.map(|c| c.unwrap_or(WIDE))
        } else {
            self.wide.insert(id.index() as u32, full);
            [WIDE; 4]
        };
        PackedArgs {
            ids,
            op: [
                a.input_dims,
                a.input_type,
                a.input_strides,
                a.concrete_inputs,
            ],
            kernel: a.kernel,
        }
    }
}

/// The integer link ids of an event, as the decoder read them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkIds {
    /// `correlation`.
    pub correlation: Option<i64>,
    /// `External id`.
    pub external_id: Option<i64>,
    /// `stream`.
    pub stream: Option<i64>,
    /// `Sequence number`.
    pub sequence: Option<i64>,
}

/// Handles of an op's recorded arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpArgIds {
    /// `Input Dims`.
    pub dims: Option<ValueId>,
    /// `Input type`.
    pub types: Option<ValueId>,
    /// `Input Strides`.
    pub strides: Option<ValueId>,
    /// `Concrete Inputs`.
    pub concrete: Option<ValueId>,
}

/// The keys of the recorded op arguments, in [`OpArgIds`] field order.
pub const OP_ARG_KEYS: [&str; 4] = [
    "Input Dims",
    "Input type",
    "Input Strides",
    "Concrete Inputs",
];

/// An op's recorded arguments (`record_shapes=True`), borrowed from the
/// trace's value table; each `None` when absent or `null`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OpArgs<'t> {
    /// `Input Dims`: one shape per argument (`[]` for non-tensors).
    pub dims: Option<&'t ArgValue>,
    /// `Input type`: one dtype string per argument.
    pub types: Option<&'t ArgValue>,
    /// `Input Strides`, parallel to `dims`.
    pub strides: Option<&'t ArgValue>,
    /// `Concrete Inputs`: one string per argument.
    pub concrete: Option<&'t ArgValue>,
}

impl<'t> OpArgs<'t> {
    /// The four values in [`OP_ARG_KEYS`] order.
    pub fn all(&self) -> [Option<&'t ArgValue>; 4] {
        [self.dims, self.types, self.strides, self.concrete]
    }
}

/// The `args` keys of [`CollectiveArgs`], in field order.
pub const COLLECTIVE_ARG_KEYS: [&str; 10] = [
    "Process Group Name",
    "Process Group Ranks",
    "Collective name",
    "Group size",
    "dtype",
    "In msg nelems",
    "Out msg nelems",
    "In split size",
    "Out split size",
    "Seq",
];

/// The collective metadata PyTorch writes into a collective kernel's `args`
/// (each `None` when absent or `null`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectiveArgs {
    /// `Process Group Name`, e.g. `"0"`.
    pub pg_name: Option<ArgValue>,
    /// `Process Group Ranks`, usually a string such as `"[0, 1]"`.
    pub pg_ranks: Option<ArgValue>,
    /// `Collective name`, e.g. `allreduce`, `_allgather_base`.
    pub coll_name: Option<ArgValue>,
    /// `Group size`.
    pub group_size: Option<ArgValue>,
    /// `dtype`, e.g. `Float`, `BFloat16`.
    pub dtype: Option<ArgValue>,
    /// `In msg nelems`.
    pub in_nelems: Option<ArgValue>,
    /// `Out msg nelems`.
    pub out_nelems: Option<ArgValue>,
    /// `In split size` (`"[]"` except for all_to_allv).
    pub in_split: Option<ArgValue>,
    /// `Out split size`.
    pub out_split: Option<ArgValue>,
    /// `Seq`: the process group's sequence number of the collective (newer
    /// PyTorch), the same on every rank; not a column of any sheet, used
    /// to match collectives across ranks.
    pub seq: Option<ArgValue>,
}

impl CollectiveArgs {
    /// A kernel without collective metadata.
    pub const EMPTY: CollectiveArgs = CollectiveArgs {
        pg_name: None,
        pg_ranks: None,
        coll_name: None,
        group_size: None,
        dtype: None,
        in_nelems: None,
        out_nelems: None,
        in_split: None,
        out_split: None,
        seq: None,
    };

    /// The record from the values of [`COLLECTIVE_ARG_KEYS`], in that
    /// order; `null` counts as absent.
    pub fn from_values(values: [Option<ArgValue>; 10]) -> CollectiveArgs {
        let [a, b, c, d, e, f, g, h, i, j] = values.map(|v| v.filter(|v| !v.is_null()));
        CollectiveArgs {
            pg_name: a,
            pg_ranks: b,
            coll_name: c,
            group_size: d,
            dtype: e,
            in_nelems: f,
            out_nelems: g,
            in_split: h,
            out_split: i,
            seq: j,
        }
    }

    /// The values in [`COLLECTIVE_ARG_KEYS`] order (the inverse of
    /// [`CollectiveArgs::from_values`]).
    pub fn values(&self) -> [&Option<ArgValue>; 10] {
        [
            &self.pg_name,
            &self.pg_ranks,
            &self.coll_name,
            &self.group_size,
            &self.dtype,
            &self.in_nelems,
            &self.out_nelems,
            &self.in_split,
            &self.out_split,
            &self.seq,
        ]
    }

    /// `Seq` as a number: an integer, or a string of one.
    pub fn seq_number(&self) -> Option<i64> {
        let v = self.seq.as_ref()?;
        v.as_i64()
            .or_else(|| v.as_str().and_then(|t| t.trim().parse().ok()))
    }

    /// True when the kernel carries none of the keys.
    pub fn is_empty(&self) -> bool {
        *self == CollectiveArgs::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_is_compact() {
        let v = ArgValue::list(vec![
            ArgValue::ints(&[1, -2]),
            ArgValue::Float(1.5),
            ArgValue::Float(0.25),
            ArgValue::Float(f64::NAN),
            ArgValue::UInt(u64::MAX),
            ArgValue::Str("a\"b\\c\n\u{1}é".into()),
            ArgValue::map(vec![
                ("b".into(), ArgValue::Null),
                ("a".into(), ArgValue::Bool(true)),
                ("b".into(), ArgValue::Bool(false)),
            ]),
        ]);
        assert_eq!(
            v.json_text(),
            r#"[[1,-2],1.5,0.25,null,18446744073709551615,"a\"b\\c\n\u0001é",{"a":true,"b":false}]"#
        );
    }

    #[test]
    fn absent_integers() {
        let a = Args::new(
            LinkIds {
                correlation: Some(5),
                ..LinkIds::default()
            },
            OpArgIds::default(),
        );
        assert_eq!(a.correlation(), Some(5));
        assert_eq!(a.stream(), None);
        assert_eq!(Args::default().sequence(), None);
    }

    #[test]
    fn null_collective_values_are_absent() {
        let mut v: [Option<ArgValue>; 10] = Default::default();
        v[2] = Some(ArgValue::Null);
        assert!(CollectiveArgs::from_values(v).is_empty());
    }

    #[test]
    fn the_args_table_gives_back_every_record_as_pushed() {
        assert_eq!(std::mem::size_of::<PackedArgs>(), 36);
        let ids = [
            None,
            Some(0),
            Some(1),
            Some(-1),
            Some(7_000_000),
            Some(i64::from(i32::MAX)),
            Some(i64::from(i32::MIN)),
            Some(i64::from(u32::MAX)),
            Some(i64::MAX),
            Some(i64::MIN + 1),
        ];
        let mut t = ArgsTable::default();
        let mut want = Vec::new();
        for (k, &a) in ids.iter().enumerate() {
            let b = ids[(k * 3 + 1) % ids.len()];
            let c = ids[(k * 7 + 2) % ids.len()];
            let links = LinkIds {
                correlation: a,
                external_id: b,
                stream: c,
                sequence: a.map(|v| v.wrapping_neg()),
            };
            let op = OpArgIds {
                dims: Some(ValueId::new(k)),
                concrete: (k % 2 == 0).then(|| ValueId::new(k + 100)),
                ..OpArgIds::default()
            };
            let mut rec = Args::new(links, op);
            rec.kernel = (k % 3 == 0).then(|| StrId::new(k));
            want.push((t.push(rec), rec));
        }
        // Only the records with an id beyond 32 bits use the side table.
        assert!(!t.wide.is_empty() && t.wide.len() < want.len());
        for &(id, rec) in &want {
            assert_eq!(t.get(id), rec);
        }
        // Replacing a wide record by a narrow one (and back) leaves no stale entry.
        let (id, rec) = want[8];
        let mut narrow = rec;
        narrow.set_correlation(Some(5));
        narrow.external_id = 6;
        narrow.stream = 7;
        narrow.sequence = ABSENT;
        t.set(id, narrow);
        assert_eq!(t.get(id), narrow);
        assert!(!t.wide.contains_key(&(id.index() as u32)));
        t.set(id, rec);
        assert_eq!(t.get(id), rec);
    }
}
