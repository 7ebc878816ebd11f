//! [`Threads::Parallel`](super::Threads::Parallel): the splitter packs
//! consecutive events into batches; worker threads parse each batch into
//! events with batch-local string, pid/tid and value tables; the batches
//! are merged in input order ([`Ordered`]: whichever thread finishes the
//! next one merges it), interning each distinct local text once and
//! handing the events to the builder.
//!
//! The result is the one a sequential decode gives: the workers read each
//! event as [`super::Decoder`] does (early category check, the same
//! readers), local tables are filled in the order the builder interns, and
//! the merger interns them batch by batch in that order, so every handle
//! and every error comes out the same.

use std::borrow::Cow;
use std::io::Read;
use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};

use rustc_hash::FxHashMap;

use super::scan::{self, Sink};
use super::{
    Decoder, EventTexts, Ident, LoadError, Num, Packing, PhaseCounts, early_keep, kernel_text,
    parse_value,
};
use crate::load::ordered::{Merge, Ordered};
use crate::trace::args::{LinkIds, OpArgIds};
use crate::trace::builder::{IdentRef, Keep, ResolvedArgs, ResolvedEvent, Time, TraceBuilder};
use crate::trace::{Cat, IdentId, Needs, Phase, StrId, ValueId};

/// A batch is sent once it holds this many bytes of events. A few batches
/// are in flight (see [`split_and_build`]), each new one on fresh pages
/// until batches come back for reuse: at 512 KiB the owlv2 report (55.6 MB)
/// takes 8% less CPU and 16 MiB less memory than at 2 MiB, and big traces
/// are unchanged.
const BATCH_BYTES: usize = 512 << 10;

/// "No entry" in a batch-local handle.
const NONE: u32 = u32::MAX;

/// A text a worker read: a span of the batch buffer, or a string it had to
/// unescape (kept in [`Parsed::owned`]).
#[derive(Debug, Clone, Copy)]
enum Text {
    Buf { start: u32, len: u32 },
    Owned(u32),
}

/// A pid/tid value of a batch.
#[derive(Debug, Clone, Copy)]
enum LocalIdent {
    Null,
    Int(i64),
    Str(Text),
}

/// One element of `traceEvents` as a worker read it.
#[derive(Debug)]
enum Item {
    /// Kept as a placeholder only.
    Stub(Cat),
    /// Left out.
    Drop,
    /// Kept, with batch-local handles.
    Full(Local),
}

/// An event with batch-local handles ([`NONE`] for absent).
#[derive(Debug)]
struct Local {
    cat: Cat,
    ph: Phase,
    name: u32,
    pid: u32,
    tid: u32,
    ts: Option<Time>,
    dur: Option<Time>,
    flow_id: Option<i64>,
    args: Option<LocalArgs>,
}

#[derive(Debug)]
struct LocalArgs {
    links: LinkIds,
    op: [u32; 4],
    kernel: u32,
    /// Index into [`Parsed::extras`].
    extra: u32,
}

/// The rare parts of an event's arguments: collective metadata texts of
/// kernels, names of metadata events.
#[derive(Debug, Default)]
struct Extra {
    collective: [Option<Text>; 10],
    meta_name: Option<String>,
    meta_labels: Option<String>,
}

/// A batch of events: filled by the splitter (`buf`, `ends`), read by a
/// worker, merged, then cleared and sent back to the splitter for the next
/// batch, so its vectors keep their pages (fresh ones cost a page fault
/// each 4 KiB).
#[derive(Default)]
struct Parsed {
    first_index: usize,
    buf: Vec<u8>,
    ends: Vec<usize>,
    /// Whether each event is ASCII ([`Sink::event`]'s `ascii`).
    ascii: Vec<bool>,
    owned: Vec<Box<str>>,
    /// Names and kernel names, in first-use order.
    strings: Vec<Text>,
    idents: Vec<LocalIdent>,
    /// Op argument texts.
    values: Vec<Text>,
    /// [`Tables::recent`], kept with the batch so that its room is not
    /// allocated again for each one.
    recent: Vec<u32>,
    items: Vec<Item>,
    extras: Vec<Extra>,
    phases: PhaseCounts,
    /// The error of the element after the last item, which ends the batch.
    error: Option<String>,
}

impl Parsed {
    /// An empty batch with room for `BATCH_BYTES` of events.
    fn with_room() -> Parsed {
        Parsed {
            buf: Vec::with_capacity(BATCH_BYTES + (64 << 10)),
            ..Parsed::default()
        }
    }

    /// Empties every vector, keeping its capacity.
    fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
        self.ascii.clear();
        self.owned.clear();
        self.strings.clear();
        self.idents.clear();
        self.values.clear();
        self.items.clear();
        self.extras.clear();
        self.phases = PhaseCounts::default();
        self.error = None;
    }

    fn text(&self, t: Text) -> Result<&str, String> {
        match t {
            Text::Buf { start, len } => {
                let (start, len) = (start as usize, len as usize);
                std::str::from_utf8(&self.buf[start..start + len])
                    .map_err(|_| "internal error: a batch text is not UTF-8".to_string())
            }
            Text::Owned(i) => Ok(&self.owned[i as usize]),
        }
    }
}

/// Key of the batch-local pid/tid table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum IdentKey<'a> {
    Null,
    Int(i64),
    Str(&'a str),
}

/// Places of op argument texts in [`Tables::recent`]: room for each of
/// the four keys at 256 lengths.
const RECENT_VALUES: usize = 1024;

/// Places of names in [`Tables::recent`] (after the op arguments'), one
/// for each of 256 lengths.
const RECENT_STRINGS: usize = 256;

/// A worker's tables while it reads one batch (borrowing the batch bytes).
struct Tables<'a> {
    /// The batch's bytes, which borrowed texts point into.
    buf: &'a [u8],
    owned: Vec<Box<str>>,
    string_ids: FxHashMap<&'a str, u32>,
    strings: Vec<Text>,
    ident_ids: FxHashMap<IdentKey<'a>, u32>,
    /// The last two pid/tid keys that missed this cache, with their
    /// handles: an event's pid and tid are nearly always those of the event
    /// before it, and two compares cost less than a hash lookup.
    recent_idents: [(IdentKey<'a>, u32); 2],
    idents: Vec<LocalIdent>,
    value_ids: FxHashMap<&'a str, u32>,
    /// Handles of recent op argument texts (filed by key and length) and
    /// names (by length): an op's name and shapes repeat, and comparing a
    /// text with the one kept in its place costs less than hashing it (op
    /// argument texts run to hundreds of bytes). A text not found there
    /// goes to the maps, as before.
    recent: Vec<u32>,
    values: Vec<Text>,
    extras: Vec<Extra>,
}

impl<'a> Tables<'a> {
    /// Tables over `buf`, filling the (empty) vectors of `into`.
    fn new(buf: &'a [u8], into: &mut Parsed) -> Tables<'a> {
        let mut recent = std::mem::take(&mut into.recent);
        recent.clear();
        recent.resize(RECENT_VALUES + RECENT_STRINGS, NONE);
        Tables {
            buf,
            owned: std::mem::take(&mut into.owned),
            string_ids: FxHashMap::default(),
            strings: std::mem::take(&mut into.strings),
            ident_ids: FxHashMap::default(),
            recent_idents: [(IdentKey::Null, NONE); 2],
            idents: std::mem::take(&mut into.idents),
            value_ids: FxHashMap::default(),
            recent,
            values: std::mem::take(&mut into.values),
            extras: std::mem::take(&mut into.extras),
        }
    }

    /// Where `s` is: a span of the batch, or a new owned copy.
    fn place(&mut self, s: &str) -> Text {
        let (p, base) = (s.as_ptr() as usize, self.buf.as_ptr() as usize);
        if p >= base && p + s.len() <= base + self.buf.len() {
            Text::Buf {
                start: (p - base) as u32,
                len: s.len() as u32,
            }
        } else {
            self.owned.push(s.into());
            Text::Owned(self.owned.len() as u32 - 1)
        }
    }

    /// The local handle of a name; borrowed names are shared, unescaped
    /// ones (rare) get an entry each (the merger's interning joins them).
    // The Cow tells borrowed (shareable) names from unescaped ones.
    #[allow(clippy::ptr_arg)]
    fn string(&mut self, s: &Cow<'a, str>) -> u32 {
        match s {
            Cow::Borrowed(b) => {
                let place = RECENT_VALUES + b.len() % RECENT_STRINGS;
                self.recent_or(
                    place,
                    b,
                    |t| &t.strings,
                    |t| {
                        let at = t.place(b);
                        shared_entry(&mut t.string_ids, &mut t.strings, b, at)
                    },
                )
            }
            Cow::Owned(o) => {
                let t = self.place(o);
                self.strings.push(t);
                self.strings.len() as u32 - 1
            }
        }
    }

    fn ident(&mut self, raw: &Option<Ident<'a>>) -> u32 {
        let key = match raw {
            None | Some(Ident::Null) => IdentKey::Null,
            Some(Ident::Int(v)) => IdentKey::Int(*v),
            Some(Ident::Str(Cow::Borrowed(s))) => IdentKey::Str(s),
            Some(Ident::Str(Cow::Owned(s))) => {
                let t = self.place(s);
                self.idents.push(LocalIdent::Str(t));
                return self.idents.len() as u32 - 1;
            }
        };
        if let Some(&(_, id)) = self
            .recent_idents
            .iter()
            .find(|(k, id)| *k == key && *id != NONE)
        {
            return id;
        }
        let id = match self.ident_ids.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.idents.len() as u32;
                let local = match key {
                    IdentKey::Null => LocalIdent::Null,
                    IdentKey::Int(v) => LocalIdent::Int(v),
                    IdentKey::Str(s) => LocalIdent::Str(self.place(s)),
                };
                self.idents.push(local);
                self.ident_ids.insert(key, id);
                id
            }
        };
        self.recent_idents = [(key, id), self.recent_idents[0]];
        id
    }

    /// The local handle of the text of op argument `key` (its place in
    /// [`crate::trace::args::OP_ARG_KEYS`]).
    fn value(&mut self, key: usize, text: &'a str) -> u32 {
        let place = (text.len() * 4 + key) % RECENT_VALUES;
        self.recent_or(
            place,
            text,
            |t| &t.values,
            |t| {
                let at = t.place(text);
                shared_entry(&mut t.value_ids, &mut t.values, text, at)
            },
        )
    }

    /// The handle kept at `place` of [`Self::recent`] when it is `text`'s
    /// entry in the table `table` picks; otherwise the one `intern` gives,
    /// which is then kept there.
    fn recent_or(
        &mut self,
        place: usize,
        text: &str,
        table: fn(&Self) -> &[Text],
        intern: impl FnOnce(&mut Self) -> u32,
    ) -> u32 {
        let id = self.recent[place];
        if let Some(&Text::Buf { start, len }) = table(self).get(id as usize)
            && self.buf.get(start as usize..(start + len) as usize) == Some(text.as_bytes())
        {
            return id;
        }
        let id = intern(self);
        self.recent[place] = id;
        id
    }

    /// The event with local handles, taking them in the order
    /// [`crate::trace::TraceBuilder::push_event`] interns.
    fn local(&mut self, ev: &EventTexts<'a>, ph: Phase) -> Local {
        let cat = ev.cat();
        let name = ev.name.as_ref().map_or(NONE, |n| self.string(n));
        let pid = self.ident(&ev.pid);
        let tid = self.ident(&ev.tid);
        let args = ev.args.as_ref().map(|a| {
            let op: [u32; 4] =
                std::array::from_fn(|key| a.op[key].map_or(NONE, |t| self.value(key, t)));
            let kernel = match a.kernel {
                Some(k) if cat.is_runtime() => self.string(&kernel_text(k)),
                _ => NONE,
            };
            let metadata = ph == Phase::Metadata;
            let collective = cat == Cat::Kernel && a.collective.iter().any(Option::is_some);
            let extra = if metadata || collective {
                let (meta_name, meta_labels) = a.meta(metadata);
                let e = Extra {
                    collective: a.collective.map(|t| t.map(|t| self.place(t))),
                    meta_name,
                    meta_labels,
                };
                self.extras.push(e);
                self.extras.len() as u32 - 1
            } else {
                NONE
            };
            LocalArgs {
                links: a.links,
                op,
                kernel,
                extra,
            }
        });
        Local {
            cat,
            ph,
            name,
            pid,
            tid,
            ts: ev.ts.map(Num::time),
            dur: ev.dur.map(Num::time),
            flow_id: ev.id,
            args,
        }
    }
}

/// The local handle of `text` in `table`: its entry, or a new one at `at`.
fn shared_entry<'a>(
    ids: &mut FxHashMap<&'a str, u32>,
    table: &mut Vec<Text>,
    text: &'a str,
    at: Text,
) -> u32 {
    *ids.entry(text).or_insert_with(|| {
        table.push(at);
        table.len() as u32 - 1
    })
}

/// A batch handed to a worker, with its place in input order.
struct Job {
    batch: Parsed,
    seq: u64,
}

/// Reads every element of a batch (a worker's part): fills the rest of
/// `batch` from its `buf` and `ends`.
fn parse(mut batch: Parsed, needs: &Needs) -> Parsed {
    let skips_any = crate::trace::builder::skips_any(needs);
    let first_index = batch.first_index;
    let buf = std::mem::take(&mut batch.buf);
    let mut items = std::mem::take(&mut batch.items);
    if items.capacity() < batch.ends.len() {
        // A new vector, not a grown one: growing copies the old block
        // (emptied, but the allocator copies all of it). A quarter more
        // room keeps the batches of a few more events from growing it again.
        items = Vec::with_capacity(batch.ends.len() + batch.ends.len() / 4);
    }
    let mut phases = PhaseCounts::default();
    let mut error = None;
    let mut t = Tables::new(&buf, &mut batch);
    let mut seen = super::fast::SeenArgs::new();
    let mut start = 0;
    for (i, &end) in batch.ends.iter().enumerate() {
        let json = &buf[start..end];
        start = end;
        if skips_any {
            match early_keep(needs, json) {
                (Keep::Full, _) => {}
                (Keep::Stub, cat) => {
                    items.push(Item::Stub(cat));
                    continue;
                }
                (Keep::Drop, _) => {
                    items.push(Item::Drop);
                    continue;
                }
            }
        }
        let mut ev = EventTexts::default();
        match ev.read_into(json, batch.ascii[i], first_index + i, Some(&mut seen)) {
            Ok(()) => {
                let ph = phases.phase(ev.ph.as_deref());
                items.push(Item::Full(t.local(&ev, ph)));
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let Tables {
        owned,
        strings,
        idents,
        values,
        recent,
        extras,
        string_ids,
        ident_ids,
        value_ids,
        ..
    } = t;
    // The maps borrow the batch bytes, which move on with the result.
    drop((string_ids, ident_ids, value_ids));
    Parsed {
        buf,
        owned,
        strings,
        idents,
        values,
        recent,
        items,
        extras,
        phases,
        error,
        ..batch
    }
}

/// Hands the events of one parsed batch to the builder, in order.
fn merge(d: &mut Decoder, p: &mut Parsed) -> Result<(), String> {
    d.seen += p.items.len() + usize::from(p.error.is_some());
    d.phases.add(std::mem::take(&mut p.phases));
    let b = &mut d.builder;
    let Handles {
        strings,
        idents,
        values,
    } = Handles::intern(b, p)?;
    let value = |i: u32| (i != NONE).then(|| values[i as usize]).flatten();
    let mut items = std::mem::take(&mut p.items);
    for (k, item) in items.drain(..).enumerate() {
        let index = p.first_index + k;
        let e = match item {
            Item::Stub(cat) => {
                b.push_stub(cat)?;
                continue;
            }
            Item::Drop => continue,
            Item::Full(e) => e,
        };
        let args = match e.args {
            None => None,
            Some(a) => {
                let mut r = ResolvedArgs {
                    links: a.links,
                    op: OpArgIds {
                        dims: value(a.op[0]),
                        types: value(a.op[1]),
                        strides: value(a.op[2]),
                        concrete: value(a.op[3]),
                    },
                    kernel: (a.kernel != NONE).then(|| strings[a.kernel as usize]),
                    ..ResolvedArgs::default()
                };
                if a.extra != NONE {
                    let x = std::mem::take(&mut p.extras[a.extra as usize]);
                    for (slot, t) in r.collective.iter_mut().zip(x.collective) {
                        *slot = t.map(|t| p.text(t)).transpose()?;
                    }
                    r.meta_name = x.meta_name;
                    r.meta_labels = x.meta_labels;
                }
                Some(r)
            }
        };
        let mut ev = ResolvedEvent {
            cat: e.cat,
            ph: e.ph,
            name: (e.name != NONE).then(|| strings[e.name as usize]),
            pid: idents[e.pid as usize],
            tid: idents[e.tid as usize],
            ts: e.ts,
            dur: e.dur,
            flow_id: e.flow_id,
            args,
        };
        b.push_resolved(index, &mut ev, &mut parse_value)?;
    }
    p.items = items;
    p.error.take().map_or(Ok(()), Err)
}

/// A batch's local tables interned in the builder: the builder's handle
/// of each local string, pid/tid and value, by local index.
struct Handles {
    strings: Vec<StrId>,
    idents: Vec<IdentId>,
    values: Vec<Option<ValueId>>,
}

impl Handles {
    /// Interns the batch's strings, then its pids/tids, then its values,
    /// each table in local order.
    fn intern(b: &mut TraceBuilder, p: &Parsed) -> Result<Handles, String> {
        let strings: Vec<StrId> = p
            .strings
            .iter()
            .map(|&t| Ok(b.intern_name(p.text(t)?)))
            .collect::<Result<_, String>>()?;
        let idents: Vec<IdentId> = p
            .idents
            .iter()
            .map(|&i| {
                Ok(b.intern_ident(match i {
                    LocalIdent::Null => IdentRef::Null,
                    LocalIdent::Int(v) => IdentRef::Int(v),
                    LocalIdent::Str(t) => IdentRef::Str(p.text(t)?),
                }))
            })
            .collect::<Result<_, String>>()?;
        let values: Vec<Option<ValueId>> = p
            .values
            .iter()
            .map(|&t| Ok(b.intern_value(p.text(t)?, &mut parse_value)))
            .collect::<Result<_, String>>()?;
        Ok(Handles {
            strings,
            idents,
            values,
        })
    }
}

/// What is merged, in input order.
// Nearly every element is a batch: boxing it would allocate for each.
#[allow(clippy::large_enum_variant)]
enum Element {
    /// A parsed batch.
    Events(Parsed),
    /// A top-level key other than `traceEvents`.
    Other { key: String, json: Vec<u8> },
}

/// The merge: the decoder that builds the trace, and the size hint not
/// yet used to size its tables.
struct Merger {
    d: Decoder,
    size_hint: Option<u64>,
}

impl Merge for Merger {
    type Item = Element;
    type Spare = Parsed;
    type Error = String;

    fn merge(&mut self, element: Element) -> Result<Option<Parsed>, String> {
        let mut p = match element {
            Element::Events(p) => p,
            Element::Other { key, json } => return self.d.other(&key, &json).map(|()| None),
        };
        if let Some(total) = self.size_hint.take() {
            // Tables sized once from the first batch's density: no copy of
            // a half-built table each time it doubles.
            let per_byte = |n: usize| n as f64 / p.buf.len().max(1) as f64;
            let count = |f: fn(&Item) -> bool| {
                let n = p.items.iter().filter(|i| f(i)).count();
                (per_byte(n) * total as f64 * 1.02) as usize
            };
            let kept = count(|i| matches!(i, Item::Full(_)));
            let stubs = count(|i| matches!(i, Item::Stub(_)));
            let args = count(|i| matches!(i, Item::Full(Local { args: Some(_), .. })));
            self.d.builder.reserve(kept, stubs, args);
        }
        merge(&mut self.d, &mut p)?;
        // Cleared, it goes back to the splitter with its pages.
        p.clear();
        Ok(Some(p))
    }

    fn internal(what: &str) -> String {
        format!("internal error: {what}")
    }
}

/// The splitter's sink: packs events into batches and sends them to the
/// workers, numbered for the ordered merge.
struct BatchSink<'m> {
    jobs: Sender<Job>,
    ordered: &'m Ordered<Merger>,
    /// The batch being filled.
    batch: Parsed,
}

impl BatchSink<'_> {
    fn flush(&mut self) -> Result<(), String> {
        if self.batch.ends.is_empty() {
            return Ok(());
        }
        let seq = self.ordered.place()?;
        let next = self.ordered.spare().unwrap_or_else(Parsed::with_room);
        let job = Job {
            batch: std::mem::replace(&mut self.batch, next),
            seq,
        };
        if self.jobs.send(job).is_err() {
            return Err(self.ordered.lost(seq).into());
        }
        Ok(())
    }
}

impl Sink for BatchSink<'_> {
    fn event(&mut self, index: usize, json: &[u8], ascii: bool) -> Result<(), String> {
        let b = &mut self.batch;
        if b.ends.is_empty() {
            b.first_index = index;
        }
        let size = crate::load::append_to_batch(&mut b.buf, &mut b.ends, json, || {
            format!("event #{index} of traceEvents")
        })?;
        b.ascii.push(ascii);
        if size >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn other(&mut self, key: &str, json: &[u8]) -> Result<(), String> {
        self.flush()?;
        let other = Element::Other {
            key: key.to_string(),
            json: json.to_vec(),
        };
        Ok(self.ordered.add_own(other)?)
    }
}

/// Splits on the calling thread, parses on workers, merges in input order
/// on whichever thread finishes the next batch (see the module docs).
pub(super) fn split_and_build<R: Read>(
    reader: &mut R,
    packing: Packing,
    needs: &Needs,
    size_hint: Option<u64>,
) -> Result<(Decoder, scan::Outline), LoadError> {
    let workers = crate::load::worker_count();
    let (jobs_tx, jobs_rx) = channel::<Job>();
    let jobs_rx = Mutex::new(jobs_rx);
    let merger = Merger {
        d: Decoder::new(needs),
        size_hint,
    };
    // A batch for every worker and two more: more held more memory for no
    // speed.
    let ordered = Ordered::new(merger, workers + 2);
    let work = |job: Job| {
        ordered.work(job.seq, || Element::Events(parse(job.batch, needs)));
    };
    std::thread::scope(|scope| {
        crate::load::spawn_workers(scope, &jobs_rx, &work)?;
        let mut sink = BatchSink {
            jobs: jobs_tx,
            ordered: &ordered,
            batch: Parsed::with_room(),
        };
        let split = scan::split(reader, &mut sink);
        // Events before a syntax error are still checked: their errors come first.
        let flushed = sink.flush();
        drop(sink);
        Ok((split, flushed))
    })
    .and_then(|(split, flushed)| {
        let decoder = ordered.into_merged().map_err(LoadError::Invalid)?.d;
        let outline = split.map_err(|e| crate::load::scan_error(packing, e))?;
        flushed.map_err(LoadError::Invalid)?;
        Ok((decoder, outline))
    })
}
