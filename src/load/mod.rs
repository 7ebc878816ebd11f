//! Loading traces from files or stdin: input bytes -> decoder -> trace.
//!
//! The packing is detected from the content (gzip and zip magic bytes), not
//! from the file name. Gzip is inflated on the thread that reads the
//! decoded bytes, as it reads them (`gzip.rs`); a zip member is read on a
//! thread of its own and handed over through a bounded channel. The format
//! is then sniffed from the first decoded bytes ([`Format`]), and the decoder
//! of that format feeds a [`TraceBuilder`](crate::trace::TraceBuilder), which
//! keeps what the [`Needs`] ask for.
//!
//! Adding an input format: one decoder module (like `kineto`) and one arm
//! in [`Format`].

mod fast_json;
mod gzip;
pub mod kineto;
mod ordered;
pub(crate) mod pages;
pub mod perfetto_json;
pub mod pftrace;
pub mod rocprof;
pub mod rocprof_csv;
pub mod scan;
mod structural;
pub mod xplane;

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::mpsc;

pub use crate::error::LoadError;
use crate::trace::{Needs, Trace};
use kineto::Threads;

impl LoadError {
    /// A read failure part way through input packed as `packing`.
    pub(crate) fn read(packing: Packing, source: io::Error) -> LoadError {
        if let Some(limit) = source
            .get_ref()
            .and_then(|e| e.downcast_ref::<scan::LimitError>())
        {
            return LoadError::Limit(limit.0.clone());
        }
        if source.kind() == io::ErrorKind::OutOfMemory {
            return LoadError::Limit("out of memory reading the input".to_string());
        }
        let what = match packing {
            Packing::Gzip => "truncated or corrupt gzip data",
            Packing::Zip => "cannot read the zip member",
            Packing::Plain => "read error",
        };
        LoadError::Read { what, source }
    }
}

/// How the bytes of the input are packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Plain bytes.
    Plain,
    /// gzip (one or more members).
    Gzip,
    /// A zip archive holding the trace.
    Zip,
}

impl Packing {
    /// Detects the packing from the first bytes of the input.
    pub fn sniff(head: &[u8]) -> Packing {
        if head.starts_with(&[0x1f, 0x8b]) {
            Packing::Gzip
        } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
            Packing::Zip
        } else {
            Packing::Plain
        }
    }
}

/// The format of the unpacked input: which decoder reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// PyTorch profiler (Kineto) JSON, the Chrome trace format.
    KinetoJson,
    /// JAX / XLA profile: an XSpace protobuf (`*.xplane.pb`).
    XPlane,
    /// rocprofv3 JSON (top-level key `rocprofiler-sdk-tool`).
    RocprofJson,
    /// rocprofv3's Perfetto protobuf (`.pftrace`).
    Pftrace,
    /// Perfetto-style JSON: `traceconv json` of a rocprofv3 `.pftrace`.
    PerfettoJson,
}

/// The formats, as named on the command line and in messages.
pub const SUPPORTED_FORMATS: &str = "PyTorch/Kineto JSON, JAX XPlane protobuf (.xplane.pb), rocprofv3 JSON, rocprofv3 Perfetto protobuf (.pftrace) or its traceconv JSON";

impl Format {
    /// Detects the format from the first unpacked bytes; None when they
    /// look like none of the formats.
    ///
    /// JSON is recognised by its first non-blank byte (`{`, or `[` for the
    /// array form), and rocprofv3 JSON by its first key. XPlane is a
    /// protobuf whose first field is an XSpace field (`planes`, `errors`,
    /// `warnings`, `hostnames`: tags 0x0a, 0x12, 0x1a, 0x22) with a length
    /// that fits the varint rules. A Perfetto trace also starts with tag
    /// 0x0a (`Trace.packet`): the first packet's fields tell them apart.
    /// Perfetto-style JSON is JSON whose first events carry rocprofv3's
    /// slice categories and `begin_ns` arguments.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
        match text.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => {
                return Some(if first_json_key(text) == Some(b"rocprofiler-sdk-tool") {
                    Format::RocprofJson
                } else if perfetto_json::looks_like(text) {
                    Format::PerfettoJson
                } else {
                    Format::KinetoJson
                });
            }
            Some(b'[') => return Some(Format::KinetoJson),
            _ => {}
        }
        if pftrace::sniff(head) {
            return Some(Format::Pftrace);
        }
        if matches!(head.first(), Some(0x0a | 0x12 | 0x1a | 0x22)) && varint_len(&head[1..]) {
            return Some(Format::XPlane);
        }
        None
    }

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::KinetoJson => "kineto",
            Format::XPlane => "xplane",
            Format::RocprofJson => "rocprof",
            Format::Pftrace => "pftrace",
            Format::PerfettoJson => "perfetto-json",
        }
    }
}

/// The first key of the JSON object `text` starts with (after blanks),
/// when it is within `text` and has no escapes.
fn first_json_key(text: &[u8]) -> Option<&[u8]> {
    let mut rest = text;
    let skip = |r: &[u8]| -> usize { r.iter().take_while(|b| b.is_ascii_whitespace()).count() };
    rest = &rest[skip(rest)..];
    rest = rest.strip_prefix(b"{")?;
    rest = &rest[skip(rest)..];
    rest = rest.strip_prefix(b"\"")?;
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    Some(&rest[..end])
}

/// True when `bytes` start with a complete varint of at most 10 bytes
/// (a protobuf length prefix).
fn varint_len(bytes: &[u8]) -> bool {
    // A length still being written at the end of a short input is no length.
    bytes.iter().take(10).any(|b| b & 0x80 == 0)
}

/// Bytes of unpacked input the format is detected from.
const SNIFF_BYTES: usize = 1 << 16;

/// Loads a trace from `path` (`-` for stdin), keeping what `needs` asks for.
/// The format is detected from the content.
pub fn load(path: &Path, needs: &Needs) -> Result<Trace, LoadError> {
    load_as(path, needs, None)
}

/// [`load`], with the format given (`--format`) instead of detected.
pub fn load_as(path: &Path, needs: &Needs, format: Option<Format>) -> Result<Trace, LoadError> {
    let Opened {
        reader,
        packing,
        size_hint,
    } = open(path)?;
    let pick = |head: &[u8]| -> Result<Format, LoadError> {
        format.or_else(|| Format::sniff(head)).ok_or_else(|| {
            LoadError::NotATrace(format!(
                "not a recognised trace (it starts with {}); supported: {SUPPORTED_FORMATS}",
                describe_head(head)
            ))
        })
    };
    // Collectives-only loads run many ranks in parallel and keep little of
    // each: one thread per load. The splitter reads the unpacked bytes
    // straight into its buffer (large reads bypass this small one); gzip
    // is inflated on its thread too: a separate inflate thread cost a copy
    // of every byte and 4 MiB blocks in flight for no gain in wall time.
    let threads = if needs.collectives_only {
        Threads::One
    } else {
        Threads::Parallel
    };
    // The head is read whole (a pipe or an inflater may hand out a few
    // bytes at a time): sniffing a Perfetto trace reads its first packet,
    // a Perfetto-style JSON its first events.
    let mut reader = reader;
    let mut head = vec![0u8; SNIFF_BYTES];
    let n = read_up_to(&mut reader, &mut head).map_err(|e| LoadError::read(packing, e))?;
    head.truncate(n);
    let format = pick(&head)?;
    let input = BufReader::with_capacity(1 << 16, Cursor::new(head).chain(reader));
    match format {
        Format::KinetoJson => kineto::decode_sized(input, packing, needs, threads, size_hint),
        Format::XPlane => xplane::decode(input, packing, needs, size_hint),
        Format::RocprofJson => rocprof::decode(input, packing, needs),
        Format::Pftrace => pftrace::decode_trace(input, packing),
        Format::PerfettoJson => perfetto_json::decode(input, packing),
    }
}

/// The unpacked bytes of the input at `path` (`-` for stdin), whole:
/// gzip and zip unpacked as for [`load`], bounded by [`max_input_bytes`].
/// For commands that rewrite a trace's JSON rather than analyse it
/// (`merge`).
pub fn read_unpacked(path: &Path) -> Result<Vec<u8>, LoadError> {
    let Opened {
        mut reader,
        packing,
        size_hint,
    } = open(path)?;
    read_whole(&mut reader, packing, size_hint)
}

/// All of `reader` in one buffer, read into place at once rather than
/// copied on each doubling (a hint that memory refuses is only a hint).
pub(crate) fn read_whole(
    reader: &mut impl Read,
    packing: Packing,
    size_hint: Option<u64>,
) -> Result<Vec<u8>, LoadError> {
    let mut bytes = Vec::new();
    if let Some(n) = size_hint.and_then(|n| usize::try_from(n).ok()) {
        let _ = bytes.try_reserve_exact(n.saturating_add(1));
    }
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| LoadError::read(packing, e))?;
    Ok(bytes)
}

/// Parsing threads of a parallel loader: as many as the machine has
/// cores, at most 8.
pub(crate) fn worker_count() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 8))
}

/// Starts a loader thread named `name` in `scope`.
pub(crate) fn spawn_loader_thread<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> Result<std::thread::ScopedJoinHandle<'scope, T>, LoadError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(scope, f)
        .map_err(|e| LoadError::Limit(format!("cannot start a loader thread: {e}")))
}

/// Starts [`worker_count`] parsing threads in `scope`, each taking jobs
/// from `jobs` and running `work` on them until the channel closes.
pub(crate) fn spawn_workers<'scope, J: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    jobs: &'scope std::sync::Mutex<std::sync::mpsc::Receiver<J>>,
    work: &'scope (dyn Fn(J) + Sync),
) -> Result<(), LoadError> {
    for _ in 0..worker_count() {
        spawn_loader_thread(scope, "tracelens-parse", move || {
            loop {
                // The lock is held only while taking a job.
                let job = match jobs.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok(job) = job else { return };
                work(job);
            }
        })?;
    }
    Ok(())
}

/// Appends one element's JSON text to a batch (`buf`, with each element's
/// end in `ends`); the batch's new size. An element may be as large as the
/// splitter's limit: no abort when memory cannot hold a copy, but an error
/// naming it (`what`).
pub(crate) fn append_to_batch(
    buf: &mut Vec<u8>,
    ends: &mut Vec<usize>,
    json: &[u8],
    what: impl FnOnce() -> String,
) -> Result<usize, String> {
    buf.try_reserve(json.len())
        .map_err(|_| format!("{}: out of memory copying {} bytes", what(), json.len()))?;
    buf.extend_from_slice(json);
    ends.push(buf.len());
    Ok(buf.len())
}

/// A splitter error as a [`LoadError`].
pub(crate) fn scan_error(packing: Packing, e: scan::ScanError) -> LoadError {
    match e {
        scan::ScanError::Io(io) => LoadError::read(packing, io),
        scan::ScanError::Syntax(m) => LoadError::Syntax(m),
        scan::ScanError::Callback(m) => LoadError::Invalid(m),
        scan::ScanError::Limit(m) => LoadError::Limit(m),
    }
}

/// The first bytes of an unrecognised input, for the error message.
fn describe_head(head: &[u8]) -> String {
    match head.first() {
        None => "nothing".to_string(),
        Some(b) if b.is_ascii_graphic() => format!("'{}'", *b as char),
        Some(b) => format!("byte 0x{b:02x}"),
    }
}

const BLOCK: usize = 4 << 20;

/// Reads `reader` into blocks sent on `tx`; blocks the reader has finished
/// with come back on `spare` and are reused (less allocation, lower RSS).
fn pump(
    reader: &mut dyn Read,
    tx: mpsc::SyncSender<io::Result<Vec<u8>>>,
    spare: mpsc::Receiver<Vec<u8>>,
) {
    loop {
        let mut block = spare.try_recv().unwrap_or_default();
        block.resize(BLOCK, 0);
        let mut filled = 0;
        while filled < BLOCK {
            match reader.read(&mut block[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        block.truncate(filled);
        let done = filled < BLOCK;
        if filled > 0 && tx.send(Ok(block)).is_err() {
            return; // the decoder stopped early (an error); nothing more to do
        }
        if done {
            return;
        }
    }
}

/// A `Read` over blocks arriving on a channel.
struct ChannelReader {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    /// Where finished blocks go back to the producer.
    spare: mpsc::Sender<Vec<u8>>,
    block: Vec<u8>,
    pos: usize,
}

impl ChannelReader {
    fn new(rx: mpsc::Receiver<io::Result<Vec<u8>>>, spare: mpsc::Sender<Vec<u8>>) -> Self {
        ChannelReader {
            rx,
            spare,
            block: Vec::new(),
            pos: 0,
        }
    }

    /// Makes unread bytes available unless the input is finished.
    fn fill(&mut self) -> io::Result<()> {
        while self.pos == self.block.len() {
            match self.rx.recv() {
                Ok(Ok(b)) => {
                    let done = std::mem::replace(&mut self.block, b);
                    // The producer may have finished; then the block is just dropped.
                    let _ = self.spare.send(done);
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// The next unread bytes, without consuming them (empty at the end).
    fn peek(&mut self) -> io::Result<&[u8]> {
        self.fill()?;
        Ok(&self.block[self.pos..])
    }
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.fill()?;
        let n = out.len().min(self.block.len() - self.pos);
        out[..n].copy_from_slice(&self.block[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Opens the input and wraps it in the right decompressor.
/// An opened input: its unpacked bytes, how it was packed, and the size of
/// the unpacked bytes when cheap to know (plain files: their length; gzip
/// files: the size their trailer records, modulo 4 GiB), to size tables.
struct Opened {
    reader: Box<dyn Read + Send>,
    packing: Packing,
    size_hint: Option<u64>,
}

fn open(path: &Path) -> Result<Opened, LoadError> {
    if path.as_os_str() == "-" {
        let limit = max_input_bytes()?;
        let mut raw: Box<dyn Read + Send> = Box::new(io::stdin());
        let head = read_head(&mut raw)?;
        let packing = Packing::sniff(&head);
        let joined: Box<dyn Read + Send> = Box::new(Cursor::new(head).chain(raw));
        let reader = match packing {
            Packing::Zip => open_zip(Cursor::new(buffer_stdin_zip(joined)?))?,
            _ => unpack(joined, packing),
        };
        return Ok(Opened {
            reader: Box::new(InputLimit::new(reader, limit)),
            packing,
            size_hint: None,
        });
    }
    let meta = std::fs::metadata(path).map_err(LoadError::Io)?;
    if meta.is_dir() {
        return Err(LoadError::IsDirectory);
    }
    // A FIFO (or a device) could block forever, or never end.
    if !meta.is_file() {
        return Err(LoadError::NotRegular);
    }
    let mut file = File::open(path).map_err(LoadError::Io)?;
    let head = read_head(&mut file)?;
    let packing = Packing::sniff(&head);
    let size_hint = match packing {
        Packing::Plain => Some(meta.len()),
        Packing::Gzip => gzip_isize(&mut file, meta.len()),
        Packing::Zip => None,
    };
    // A regular file is seekable: start again from its first byte.
    file.seek(SeekFrom::Start(0)).map_err(LoadError::Io)?;
    let reader = match packing {
        // A plain file is bounded by its size: read as it is, unwrapped.
        Packing::Plain => Box::new(file),
        // zip needs random access: the archive is read in place.
        Packing::Zip => bounded(open_zip(file)?)?,
        Packing::Gzip => bounded(unpack(Box::new(file), packing))?,
    };
    Ok(Opened {
        reader,
        packing,
        size_hint,
    })
}

/// The uncompressed size a gzip file's trailer records (its last four
/// bytes, little-endian, modulo 4 GiB; the last member's only): a hint,
/// None when it cannot be read.
fn gzip_isize(file: &mut File, len: u64) -> Option<u64> {
    if len < 18 {
        return None;
    }
    file.seek(SeekFrom::Start(len - 4)).ok()?;
    let mut trailer = [0u8; 4];
    file.read_exact(&mut trailer).ok()?;
    Some(u64::from(u32::from_le_bytes(trailer)))
}

/// The first (up to 4) bytes of the input; an error when there are none.
fn read_head(raw: &mut dyn Read) -> Result<Vec<u8>, LoadError> {
    let mut head = [0u8; 4];
    let n = read_up_to(raw, &mut head).map_err(LoadError::Io)?;
    if n == 0 {
        return Err(LoadError::Empty);
    }
    Ok(head[..n].to_vec())
}

/// `raw` unpacked: plain bytes as they are, gzip through its decoder.
fn unpack(raw: Box<dyn Read + Send>, packing: Packing) -> Box<dyn Read + Send> {
    match packing {
        Packing::Gzip => Box::new(gzip::Gunzip::new(BufReader::with_capacity(1 << 16, raw))),
        _ => raw,
    }
}

fn read_up_to(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The environment variable that caps the unpacked bytes of one input
/// read from stdin or inflated from a packed file, in MiB.
pub const MAX_INPUT_ENV: &str = "TRACELENS_MAX_INPUT_MB";

/// The smallest default of [`MAX_INPUT_ENV`], in MiB: 4 GiB.
const MIN_DEFAULT_MAX_INPUT_MB: usize = 4 << 10;

/// The most unpacked bytes one input may have: `TRACELENS_MAX_INPUT_MB`
/// MiB, by default half the machine's memory and at least 4 GiB. What the
/// loaders keep grows with the bytes they read, so an endless stream on
/// stdin or a gzip bomb ends with one line instead of an aborted allocation.
pub fn max_input_bytes() -> Result<u64, LoadError> {
    let default_mb = (physical_memory() >> 21).max(MIN_DEFAULT_MAX_INPUT_MB as u64);
    let default_mb = usize::try_from(default_mb).unwrap_or(usize::MAX >> 20);
    let limit = scan::limit_from_env(MAX_INPUT_ENV, default_mb).map_err(LoadError::Limit)?;
    Ok(limit as u64)
}

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`); 0 when
/// unknown.
fn physical_memory() -> u64 {
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else {
        return 0;
    };
    info.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map_or(0, |kb| kb.saturating_mul(1024))
}

/// `reader` under [`max_input_bytes`].
fn bounded(reader: Box<dyn Read + Send>) -> Result<Box<dyn Read + Send>, LoadError> {
    Ok(Box::new(InputLimit::new(reader, max_input_bytes()?)))
}

/// A reader that fails (with a [`scan::LimitError`], which
/// [`LoadError::read`] turns into [`LoadError::Limit`]) once its input has
/// given more than `limit` bytes. It counts, it never copies.
struct InputLimit<R> {
    inner: R,
    left: u64,
    limit: u64,
}

impl<R> InputLimit<R> {
    fn new(inner: R, limit: u64) -> Self {
        InputLimit {
            inner,
            left: limit,
            limit,
        }
    }
}

impl<R: Read> Read for InputLimit<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        // One byte more than the limit allows tells a longer input from
        // one exactly at the limit.
        let room = usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX);
        let n = out.len().min(room);
        let got = self.inner.read(&mut out[..n])?;
        if got as u64 > self.left {
            let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
            return Err(io::Error::other(scan::LimitError(format!(
                "the input is larger than {} unpacked (raise the limit with {MAX_INPUT_ENV})",
                scan::mib(limit)
            ))));
        }
        self.left -= got as u64;
        Ok(got)
    }
}

/// The environment variable that caps a zip archive read from stdin, in MiB.
pub const MAX_STDIN_ZIP_ENV: &str = "TRACELENS_MAX_STDIN_ZIP_MB";

/// The default of [`MAX_STDIN_ZIP_ENV`].
const DEFAULT_MAX_STDIN_ZIP_MB: usize = 1024;

/// A zip archive from stdin, which cannot seek, held in memory: at most
/// `TRACELENS_MAX_STDIN_ZIP_MB` MiB (default 1024), read with fallible
/// allocation.
fn buffer_stdin_zip(input: Box<dyn Read + Send>) -> Result<Vec<u8>, LoadError> {
    let limit = scan::limit_from_env(MAX_STDIN_ZIP_ENV, DEFAULT_MAX_STDIN_ZIP_MB)
        .map_err(LoadError::Limit)? as u64;
    let mut bytes = Vec::new();
    input
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| LoadError::read(Packing::Zip, e))?;
    if bytes.len() as u64 > limit {
        return Err(LoadError::Limit(format!(
            "a zip archive on stdin larger than {} (give it as a file, \
             or raise the limit with {MAX_STDIN_ZIP_ENV})",
            scan::mib(limit as usize)
        )));
    }
    Ok(bytes)
}

/// Picks the trace inside a zip archive (the first member whose name ends
/// in `.json` or `.json.gz`, else the only member) and streams it: a thread
/// owns the archive and sends the member's bytes through a channel, so
/// neither the archive nor the member is read into memory (a gzip member
/// is unpacked on the way).
fn open_zip<R: Read + Seek + Send + 'static>(input: R) -> Result<Box<dyn Read + Send>, LoadError> {
    let mut archive = zip::ZipArchive::new(input)
        .map_err(|e| LoadError::Zip(format!("invalid zip archive: {e}")))?;
    let names: Vec<String> = archive
        .file_names()
        .map(|s| s.map(|c| c.into_owned()).unwrap_or_default())
        .collect();
    let pick = names
        .iter()
        .position(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
        .or(if names.len() == 1 { Some(0) } else { None })
        .ok_or_else(|| {
            LoadError::Zip(format!(
                "zip archive holds no .json trace (members: {})",
                names.join(", ")
            ))
        })?;
    // Header errors (unsupported compression, encryption) are found here,
    // before the thread starts.
    if let Err(e) = archive.by_index(pick) {
        let name = &names[pick];
        return Err(LoadError::Zip(format!(
            "cannot read zip member {name}: {e}"
        )));
    }
    let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(3);
    let (spare_tx, spare_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || match archive.by_index(pick) {
        Ok(mut member) => pump(&mut member, tx, spare_rx),
        Err(e) => {
            let _ = tx.send(Err(io::Error::other(e)));
        }
    });
    let mut member = ChannelReader::new(rx, spare_tx);
    let head = member
        .peek()
        .map_err(|e| LoadError::read(Packing::Zip, e))?;
    Ok(if Packing::sniff(head) == Packing::Gzip {
        Box::new(gzip::Gunzip::new(BufReader::with_capacity(1 << 16, member)))
    } else {
        Box::new(member)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyfmt::{py_repr, py_str};
    use crate::trace::{ArgValue, Cat, EventId};

    fn load_str(doc: &str, needs: &Needs) -> Result<Trace, LoadError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        std::fs::write(&p, doc).unwrap();
        load(&p, needs)
    }

    const RANK: &str = r#"{"distributedInfo": {"rank": 3, "world_size": 8},
      "deviceProperties": [{}, {}],
      "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic", "ts": 10, "dur": 5,
         "args": {"correlation": 1, "stream": 7, "Collective name": "allreduce",
                  "Process Group Ranks": [0, 1], "In split size": "[]", "Group size": 2}},
        {"ph": "X", "cat": "kernel", "name": "NCCL_thing", "ts": 11.5, "dur": 1, "args": {"stream": 7}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 12, "dur": 1, "args": {"correlation": 2}},
        {"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "ts": 12, "dur": 1, "args": {"External id": 2}},
        {"ph": "X", "cat": "python_function", "name": "f", "ts": 12, "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "void vllm::cross_device_reduce_1stage<float>", "ts": 20.25, "dur": 3,
         "args": {"External id": 4, "Collective name": null}}
      ]}"#;

    #[test]
    fn device_names_and_memory_are_read() {
        let doc = r#"{"deviceProperties": [
            {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936},
            {"id": 1}, 7, {"name": 3, "totalGlobalMem": "big"}],
          "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "f", "ts": 1, "dur": 1}]}"#;
        let t = load_str(doc, &Needs::ALL).unwrap();
        assert_eq!(t.info().device_count, 4);
        let none = (String::new(), None);
        assert_eq!(
            t.info().devices,
            [
                ("NVIDIA H100 80GB HBM3".to_string(), Some(85018279936)),
                none.clone(),
                none.clone(),
                none
            ]
        );
    }

    #[test]
    fn collectives_only_keeps_only_linked_collective_kernels() {
        let t = load_str(RANK, &Needs::collectives_only()).unwrap();
        assert_eq!(t.info().rank, Some(3));
        assert_eq!(t.info().world_size, Some(8));
        assert_eq!(t.info().device_count, 2);
        assert_eq!(t.len(), 2, "nothing else is kept");
        let (a, b) = (EventId::new(0), EventId::new(1));
        assert_eq!(t.name(a), "ncclDevKernel_Generic");
        assert_eq!((t.event(a).ts, t.event(a).ts_is_int), (10.0, true));
        assert_eq!(t.args(a).unwrap().stream(), Some(7));
        let c = t.collective_args(a).unwrap();
        assert_eq!(c.coll_name, Some(ArgValue::Str("allreduce".into())));
        assert_eq!(py_repr(c.pg_ranks.as_ref().unwrap(), true), "(0, 1)");
        assert_eq!(py_str(c.in_split.as_ref().unwrap(), true), "[]");
        assert_eq!(c.group_size, Some(ArgValue::Int(2)));
        assert_eq!((t.event(b).ts, t.event(b).ts_is_int), (20.25, false));
        assert!(t.collective_args(b).is_none(), "null is absent");
    }

    #[test]
    fn full_load_keeps_every_uid() {
        let t = load_str(RANK, &Needs::ALL).unwrap();
        assert_eq!(t.len(), 6);
        assert_eq!(t.name(EventId::new(4)), "f");
        assert_eq!(t.info().rank, Some(3));
        // Python frames as stubs: the UID numbering stays.
        let t = load_str(RANK, &Needs::EVENTS).unwrap();
        assert_eq!(t.len(), 6);
        let stub = t.event(EventId::new(4));
        assert_eq!(
            (stub.cat, t.name(EventId::new(4))),
            (Cat::PythonFunction, "")
        );
        assert_eq!(
            t.name(EventId::new(5)),
            "void vllm::cross_device_reduce_1stage<float>"
        );
    }

    #[test]
    fn errors_keep_their_messages() {
        let e = load_str(r#"{"a": 1}"#, &Needs::ALL).unwrap_err();
        assert!(matches!(e, LoadError::NotATrace(_)));
        assert_eq!(
            e.to_string(),
            "not a trace: the JSON object has no \"traceEvents\" array"
        );
        let e = load_str(r#"{"traceEvents": [{"cat": "kernel""#, &Needs::COLLECTIVES);
        assert!(matches!(e, Err(LoadError::Syntax(_))), "{e:?}");
        // A string time is an error, whatever is kept.
        let doc = r#"{"traceEvents": [{"cat": "kernel", "name": "nccl", "ts": "5", "dur": 1, "args": {"correlation": 1}}]}"#;
        for needs in [Needs::ALL, Needs::COLLECTIVES] {
            let e = load_str(doc, &needs).unwrap_err().to_string();
            assert_eq!(
                e,
                "invalid trace: event #0 of traceEvents: invalid type: string \"5\", expected a number"
            );
        }
        // No events: an error for a report, not for the collective report.
        let empty = r#"{"traceEvents": []}"#;
        assert_eq!(
            load_str(empty, &Needs::ALL).unwrap_err().to_string(),
            "the trace has no events (\"traceEvents\" is empty)"
        );
        assert!(load_str(empty, &Needs::COLLECTIVES).unwrap().is_empty());
        assert_eq!(
            load_str("", &Needs::ALL).unwrap_err().to_string(),
            "empty file"
        );
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            load(dir.path(), &Needs::ALL).unwrap_err().to_string(),
            "is a directory, not a trace file"
        );
        assert_eq!(
            load(&dir.path().join("nope.json"), &Needs::ALL)
                .unwrap_err()
                .to_string(),
            "no such file"
        );
    }

    #[test]
    fn collectives_only_warnings() {
        let doc = r#"{"traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "nccl_a", "dur": 5, "args": {"correlation": 1}},
            {"ph": "X", "cat": "kernel", "name": "nccl_b", "ts": 1, "args": {"correlation": 2}},
            {"ph": "Q", "cat": "cpu_op", "name": "x"}
        ]}"#;
        let t = load_str(doc, &Needs::COLLECTIVES).unwrap();
        assert_eq!(t.len(), 1);
        let k = t.event(EventId::new(0));
        assert_eq!((k.dur, k.dur_is_int), (0.0, true));
        assert_eq!(
            t.warnings(),
            [
                "1 collective kernel(s) without \"ts\" were left out",
                "1 collective kernel(s) without \"dur\" were counted as zero-length"
            ]
        );
        let t = load_str(doc, &Needs::ALL).unwrap();
        assert_eq!(
            t.warnings(),
            [
                "1 event(s) with unknown phase \"Q\" were ignored",
                "1 GPU event(s) without \"dur\" were counted as zero-length"
            ]
        );
    }

    #[test]
    fn sniffing() {
        assert_eq!(Packing::sniff(&[0x1f, 0x8b, 8]), Packing::Gzip);
        assert_eq!(Packing::sniff(b"PK\x03\x04"), Packing::Zip);
        assert_eq!(Packing::sniff(b"{\"tr"), Packing::Plain);
        let kineto = Some(Format::KinetoJson);
        assert_eq!(Format::sniff(b"{\"traceEvents\""), kineto);
        assert_eq!(Format::sniff(b"\n \t{\"schemaVersion\": 1"), kineto);
        assert_eq!(Format::sniff(b"[{\"ph\": \"X\"}]"), kineto);
        assert_eq!(
            Format::sniff(b"{\n  \"rocprofiler-sdk-tool\": ["),
            Some(Format::RocprofJson)
        );
        // An XSpace: field 1 (planes), length 0x21, then plane fields.
        assert_eq!(
            Format::sniff(b"\x0a\x21\x12\x0e/host:metadata"),
            Some(Format::XPlane)
        );
        // Protobuf of another message, text, an unfinished varint: none.
        assert_eq!(Format::sniff(b"\x08\x96\x01"), None);
        assert_eq!(Format::sniff(b"hello"), None);
        assert_eq!(Format::sniff(b"\x0a\xff\xff"), None);
        assert_eq!(Format::sniff(b""), None);
    }
}
