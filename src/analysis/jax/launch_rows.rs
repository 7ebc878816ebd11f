//! The rows of `kernel_launchers` and `df_xla_perf`
//! as compact owned data, served as a [`RowSource`]: the writers
//! compute the cells as they write them ([`Table::deferred`]), and the held
//! sheet is the same source materialized, so both come from one code path.
//!
//! Held as cells, such a sheet costs some 650 bytes a kernel launch: 14
//! cells and a `kernel_details` text of about 300 bytes. Most of it repeats
//! on every launch of a kernel (one per step), so the cells a kernel's
//! launches share are made once per `Signature`, and a row keeps only
//! what differs (`Launch`, 32 bytes).

use std::ops::Range;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::args::KernelArgs;
use super::kernels::{JaxTrace, Kernel, RecordId};
use super::launchers::{Row, input_bytes};
use crate::names::col;
use crate::pyfmt::{float_repr, str_repr};
use crate::table::{RowSource, SharedTexts, Table, Value};
use crate::trace::{EventId, Ident, IdentId, StrId, Trace};

/// The columns of `kernel_launchers`, then `df_xla_perf`'s extra one.
const COLUMNS: [&str; 15] = [
    col::NAME,
    col::UID,
    col::OP_CATEGORY,
    col::TOTAL_DIRECT_KERNEL_TIME,
    col::TOTAL_SUBTREE_KERNEL_TIME,
    col::DIRECT_KERNEL_COUNT,
    col::PID,
    col::TID,
    col::INPUT_DIMS,
    col::INPUT_TYPE,
    col::INPUT_STRIDES,
    col::CONCRETE_INPUTS,
    col::KERNEL_DETAILS,
    col::GPU_KERNEL_LAUNCH_LATENCY,
    col::TOTAL_INPUT_BYTES,
];

/// The four shape cells of a kernel (`Input Dims`, `Input type`, `Input
/// Strides`, `Concrete Inputs`), written once per distinct arguments: the
/// kernels of one HLO record share theirs (`all_args`), so a sheet of a
/// row per kernel prints each set once instead of once per row.
#[derive(Default)]
pub(super) struct ShapeCells(FxHashMap<*const KernelArgs, [Value; 4]>);

impl ShapeCells {
    /// The cells of `args`.
    pub(super) fn of(&mut self, args: &KernelArgs) -> [Value; 4] {
        self.0
            .entry(std::ptr::from_ref(args))
            .or_insert_with(|| {
                [
                    &args.input_dims,
                    &args.input_type,
                    &args.input_strides,
                    &args.concrete,
                ]
                .map(|py| Value::Py(py.repr().into()))
            })
            .clone()
    }
}

/// The entries of a kernel's `kernel_details` dict after `name` and `dur`:
/// its record's custom-call target and operands, `NA` where missing.
pub(super) fn record_entries(jt: &JaxTrace, k: &Kernel) -> String {
    let rec = jt.record(k);
    let target = rec
        .and_then(|r| r.custom_call_target.as_deref())
        .map_or("'NA'".to_string(), str_repr);
    let operands = rec.map_or("'NA'".to_string(), |r| {
        let items: Vec<String> = r.operands.iter().map(|o| str_repr(o)).collect();
        format!("[{}]", items.join(", "))
    });
    format!(
        "'custom_call_target': {target}, 'operands': {operands}, 'outputs': 'NA', 'metadata': 'NA'"
    )
}

/// A pid or tid cell.
fn ident_cell(trace: &Trace, id: IdentId) -> Value {
    match trace.ident(id) {
        Ident::Int(i) => Value::Int(*i),
        Ident::Str(s) => Value::from(&**s),
        Ident::Null => Value::Null,
    }
}

/// The cells the launches of one kernel share: the same name, category,
/// arguments and HLO record.
struct Signature {
    /// The `name` cell.
    name: Value,
    /// The `op category` cell.
    category: Value,
    /// The four shape cells ([`ShapeCells`]).
    shapes: [Value; 4],
    /// `kernel_details` up to the duration: `[{'name': '…', 'dur': `.
    details_head: Box<str>,
    /// What its record decides.
    record: RecordPart,
}

/// The part of a [`Signature`] its HLO record decides, made once per
/// record.
#[derive(Clone)]
struct RecordPart {
    /// `kernel_details` after the duration: the record's entries
    /// ([`record_entries`]) and the closing `}]`.
    details_tail: Arc<str>,
    /// `total_input_bytes` of the record's operands, when the sheet has
    /// the column.
    input_bytes: Option<i64>,
}

/// What one row has of its own.
struct Launch {
    /// The kernel event (`UID`).
    uid: EventId,
    /// Index of its [`Signature`].
    signature: u32,
    /// Index of its pid and tid cells in [`LaunchRows::threads`].
    thread: u32,
    /// Whether the duration prints as an int in `kernel_details`: Python
    /// holds it as one when the profile wrote one.
    dur_is_int: bool,
    /// The duration.
    dur: f64,
    /// From the launch's start to the kernel's, NaN when unlinked.
    latency: f64,
}

/// The rows of `kernel_launchers`, or of `df_xla_perf` with
/// `total_input_bytes`, with what they share factored out.
pub struct LaunchRows {
    /// Each distinct kernel's shared cells.
    signatures: Vec<Signature>,
    /// Each distinct (pid, tid) pair's cells.
    threads: Vec<[Value; 2]>,
    /// The rows, in order.
    launches: Vec<Launch>,
    /// Whether rows end with `total_input_bytes`.
    with_input_bytes: bool,
}

/// A kernel's signature as a hash key: its name, category, arguments (by
/// address: shared per record and category) and record.
type SignatureKey = (
    Option<StrId>,
    &'static str,
    *const KernelArgs,
    Option<RecordId>,
);

impl LaunchRows {
    /// The rows of `rows`. With `unknown`, each row has its record's
    /// `total_input_bytes` ([`input_bytes`]) and the dtypes it could not
    /// size go into `unknown`.
    pub fn new(
        jt: &JaxTrace,
        rows: &[Row],
        mut unknown: Option<&mut FxHashSet<String>>,
    ) -> LaunchRows {
        let trace = jt.trace;
        let mut out = LaunchRows {
            signatures: Vec::new(),
            threads: Vec::new(),
            launches: Vec::with_capacity(rows.len()),
            with_input_bytes: unknown.is_some(),
        };
        let mut signatures: FxHashMap<SignatureKey, u32> = FxHashMap::default();
        let mut threads: FxHashMap<(IdentId, IdentId), u32> = FxHashMap::default();
        let mut records: FxHashMap<Option<RecordId>, RecordPart> = FxHashMap::default();
        let mut texts = SharedTexts::default();
        let mut shapes = ShapeCells::default();
        for r in rows {
            let k = r.kernel;
            let e = trace.event(k.id);
            let key = (e.name, k.category, std::ptr::from_ref(r.args), k.record);
            let signature = *signatures.entry(key).or_insert_with(|| {
                let record = records
                    .entry(k.record)
                    .or_insert_with(|| RecordPart {
                        details_tail: format!(", {}}}]", record_entries(jt, k)).into(),
                        input_bytes: unknown.as_deref_mut().map(|unknown| {
                            let ops = jt.record(k).map_or(&[][..], |rec| &rec.operands[..]);
                            input_bytes(ops, unknown)
                        }),
                    })
                    .clone();
                let name = trace.name(k.id);
                out.signatures.push(Signature {
                    name: texts.text(name),
                    category: texts.text(k.category),
                    shapes: shapes.of(r.args),
                    details_head: format!("[{{'name': {}, 'dur': ", str_repr(name)).into(),
                    record,
                });
                // Fewer signatures than events, whose handles are 32 bits.
                (out.signatures.len() - 1) as u32
            });
            let thread = *threads.entry((e.pid, e.tid)).or_insert_with(|| {
                out.threads
                    .push([ident_cell(trace, e.pid), ident_cell(trace, e.tid)]);
                (out.threads.len() - 1) as u32
            });
            out.launches.push(Launch {
                uid: k.id,
                signature,
                thread,
                dur_is_int: e.dur_is_int && e.dur.fract() == 0.0 && e.dur.abs() < 9e15,
                dur: e.dur,
                latency: k.parent.map_or(f64::NAN, |p| e.ts - trace.event(p).ts),
            });
        }
        out
    }

    /// The sheet `name` of these rows: deferred, or held.
    pub fn sheet(self, name: &str, deferred: bool) -> Table {
        let columns = &COLUMNS[..self.width()];
        let mut t = Table::deferred(name, columns, Arc::new(self));
        if !deferred {
            t.materialize();
        }
        t
    }

    /// Cells a row has.
    fn width(&self) -> usize {
        if self.with_input_bytes {
            COLUMNS.len()
        } else {
            COLUMNS.len() - 1
        }
    }

    /// The cells of a row, one per [`COLUMNS`] (`total_input_bytes` Null
    /// when the sheet has no such column).
    fn cells(&self, l: &Launch) -> [Value; COLUMNS.len()] {
        let s = &self.signatures[l.signature as usize];
        let [pid, tid] = self.threads[l.thread as usize].clone();
        let [dims, types, strides, concrete] = s.shapes.clone();
        let dur = if l.dur_is_int {
            (l.dur as i64).to_string()
        } else {
            float_repr(l.dur)
        };
        let mut details =
            String::with_capacity(s.details_head.len() + dur.len() + s.record.details_tail.len());
        details.push_str(&s.details_head);
        details.push_str(&dur);
        details.push_str(&s.record.details_tail);
        [
            s.name.clone(),
            Value::Int(l.uid.index() as i64),
            s.category.clone(),
            Value::Float(l.dur),
            Value::Float(l.dur),
            Value::Int(1),
            pid,
            tid,
            dims,
            types,
            strides,
            concrete,
            Value::Py(details.into()),
            Value::Float(l.latency),
            s.record.input_bytes.map_or(Value::Null, Value::Int),
        ]
    }
}

impl RowSource for LaunchRows {
    fn len(&self) -> usize {
        self.launches.len()
    }

    fn rows(&self, rows: Range<usize>, each: &mut dyn FnMut(&mut [Value])) {
        let width = self.width();
        for l in &self.launches[rows] {
            each(&mut self.cells(l)[..width]);
        }
    }
}

#[cfg(test)]
mod tests;
