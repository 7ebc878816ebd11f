//! Loading traces from files or stdin.
//!
//! The input format is detected from the content (gzip and zip magic bytes,
//! then JSON), not from the file name. Decompression runs on its own thread
//! and feeds the parser through a bounded channel, so the two overlap.

pub mod collectives;
pub mod pytorch;
pub mod scan;

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;
use std::sync::mpsc;

use crate::trace::Trace;

/// Why a trace could not be loaded. The message never includes the path;
/// callers add it.
#[derive(Debug)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// How the bytes of the input are packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Plain JSON text.
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

pub use pytorch::LoadOptions;

/// Loads a PyTorch profiler (Kineto) trace from `path` (`-` for stdin).
pub fn load_trace(path: &Path) -> Result<Trace, LoadError> {
    load_trace_with(path, &LoadOptions::default())
}

/// Loads a trace, leaving out what `opts` says no pass will read.
pub fn load_trace_with(path: &Path, opts: &LoadOptions) -> Result<Trace, LoadError> {
    let (reader, packing) = open(path)?;
    let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(3);
    // Decompression on its own thread: the parser never waits for inflate
    // unless inflate is the slower of the two.
    let (spare_tx, spare_rx) = mpsc::channel::<Vec<u8>>();
    let producer = std::thread::spawn(move || pump(reader, tx, spare_rx));
    let result = pytorch::parse(ChannelReader::new(rx, spare_tx), packing, opts);
    let _ = producer.join();
    result
}

const BLOCK: usize = 4 << 20;

/// Reads `reader` into blocks sent on `tx`; blocks the reader has finished
/// with come back on `spare` and are reused (less allocation, lower RSS).
fn pump(
    mut reader: Box<dyn Read + Send>,
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
            return; // the parser stopped early (an error); nothing more to do
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
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.block.len() {
            match self.rx.recv() {
                Ok(Ok(b)) => {
                    let done = std::mem::replace(&mut self.block, b);
                    // The producer may have finished; then the block is just dropped.
                    let _ = self.spare.send(done);
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.block.len() - self.pos);
        out[..n].copy_from_slice(&self.block[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn io_error(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// Opens the input and wraps it in the right decoder.
pub(crate) fn open(path: &Path) -> Result<(Box<dyn Read + Send>, Packing), LoadError> {
    let mut raw: Box<dyn Read + Send> = if path.as_os_str() == "-" {
        Box::new(io::stdin())
    } else {
        if path.is_dir() {
            return Err(LoadError("is a directory, not a trace file".into()));
        }
        let f = File::open(path).map_err(|e| LoadError(io_error(&e)))?;
        Box::new(f)
    };
    let mut head = [0u8; 4];
    let n = read_up_to(&mut raw, &mut head).map_err(|e| LoadError(io_error(&e)))?;
    if n == 0 {
        return Err(LoadError("empty file".into()));
    }
    let head = head[..n].to_vec();
    let packing = Packing::sniff(&head);
    let joined: Box<dyn Read + Send> = Box::new(Cursor::new(head).chain(raw));
    let reader: Box<dyn Read + Send> = match packing {
        Packing::Plain => joined,
        Packing::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(
            1 << 16,
            joined,
        ))),
        Packing::Zip => open_zip(joined)?,
    };
    Ok((reader, packing))
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

/// Picks the trace inside a zip archive: the first member whose name ends in
/// `.json` or `.json.gz`, else the only member.
fn open_zip(mut input: Box<dyn Read + Send>) -> Result<Box<dyn Read + Send>, LoadError> {
    // zip needs random access; archives are read into memory.
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .map_err(|e| LoadError(io_error(&e)))?;
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| LoadError(format!("invalid zip archive: {e}")))?;
    let names: Vec<String> = archive
        .file_names()
        .map(|s| s.map(|c| c.into_owned()).unwrap_or_default())
        .collect();
    let pick = names
        .iter()
        .position(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
        .or(if names.len() == 1 { Some(0) } else { None })
        .ok_or_else(|| {
            LoadError(format!(
                "zip archive holds no .json trace (members: {})",
                names.join(", ")
            ))
        })?;
    let mut member = archive
        .by_index(pick)
        .map_err(|e| LoadError(format!("cannot read zip member {}: {e}", names[pick])))?;
    let mut data = Vec::new();
    member
        .read_to_end(&mut data)
        .map_err(|e| LoadError(format!("cannot read zip member {}: {e}", names[pick])))?;
    if Packing::sniff(&data) == Packing::Gzip {
        Ok(Box::new(flate2::read::MultiGzDecoder::new(Cursor::new(
            data,
        ))))
    } else {
        Ok(Box::new(Cursor::new(data)))
    }
}
