//! A streaming splitter for the top level of a trace document.
//!
//! Traces are large (hundreds of MB) but flat: one object whose `traceEvents`
//! array holds small objects. Instead of building a document tree, the splitter
//! walks the bytes with a tiny state machine, hands each element of
//! `traceEvents` to a callback as a byte slice (parsed strictly by serde_json
//! there), and keeps other top-level values as text. Memory stays at one
//! buffer, however large the input.
//!
//! One value the splitter collects (an event, a key, another top-level
//! value) may not exceed [`max_value_bytes`] (`TRACELENS_MAX_VALUE_MB`,
//! default 256 MiB): a hostile input cannot make the buffer grow without
//! bound, and growing it never aborts the process (fallible reservation).
//! Nesting needs no bound here: containers are skipped with a counter, not
//! by recursion (serde_json, which parses each event, stops at depth 128).

use std::io::Read;

use super::structural::Brackets;

/// What went wrong while splitting.
#[derive(Debug)]
pub enum ScanError {
    /// The reader failed (I/O, decompression).
    Io(std::io::Error),
    /// The bytes are not the JSON shape of a trace; the text says where and why.
    Syntax(String),
    /// The callback rejected an element.
    Callback(String),
    /// A value larger than the limit, or one that memory cannot hold.
    Limit(String),
}

/// The environment variable that sets [`max_value_bytes`], in MiB.
pub const MAX_VALUE_ENV: &str = "TRACELENS_MAX_VALUE_MB";

/// The default limit on one JSON value, in MiB.
pub const DEFAULT_MAX_VALUE_MB: usize = 256;

/// The largest JSON value (an event, a key, a string) the loaders accept,
/// in bytes: `TRACELENS_MAX_VALUE_MB` MiB, default 256.
pub fn max_value_bytes() -> Result<usize, String> {
    limit_from_env(MAX_VALUE_ENV, DEFAULT_MAX_VALUE_MB)
}

/// A limit in bytes from the environment variable `var`, in MiB; unset or
/// empty: `default_mb`.
pub(crate) fn limit_from_env(var: &str, default_mb: usize) -> Result<usize, String> {
    parse_limit_mb(var, &std::env::var(var).unwrap_or_default(), default_mb)
}

/// [`limit_from_env`] for the variable's text: anything but a whole number
/// >= 1 is an error.
fn parse_limit_mb(var: &str, text: &str, default_mb: usize) -> Result<usize, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(default_mb << 20);
    }
    text.parse::<usize>()
        .ok()
        .filter(|&mb| mb >= 1)
        .and_then(|mb| mb.checked_mul(1 << 20))
        .ok_or_else(|| format!("{var} must be a whole number of MiB (>= 1), not {text:?}"))
}

/// The error for a value over `limit` bytes starting at byte `at`.
pub fn too_large(limit: usize, at: u64) -> String {
    format!(
        "a JSON value larger than {} at byte {at} (raise the limit with {MAX_VALUE_ENV})",
        mib(limit)
    )
}

/// `n` bytes in MiB (or bytes, below 1 MiB), for messages.
pub(crate) fn mib(n: usize) -> String {
    if n < 1 << 20 {
        format!("{n} bytes")
    } else if n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{:.1} MiB", n as f64 / (1 << 20) as f64)
    }
}

impl From<std::io::Error> for ScanError {
    fn from(e: std::io::Error) -> Self {
        ScanError::Io(e)
    }
}

/// Receives the pieces of the document.
pub trait Sink {
    /// One element of `traceEvents` (its JSON text), with its index;
    /// `ascii` when the splitter saw only ASCII bytes in it (then it is
    /// UTF-8 without a check), false when it did not look.
    fn event(&mut self, index: usize, json: &[u8], ascii: bool) -> Result<(), String>;
    /// A top-level key other than `traceEvents`, with its JSON text.
    fn other(&mut self, key: &str, json: &[u8]) -> Result<(), String>;
}

/// What the document turned out to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outline {
    /// True when a `traceEvents` array was found (or the document is a bare array).
    pub has_trace_events: bool,
}

const INITIAL_BUF: usize = 1 << 20;

struct Input<R: Read> {
    reader: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Start of the value being collected; bytes from here on are kept on refill.
    mark: Option<usize>,
    /// Absolute offset of `buf[0]` in the stream, for error messages.
    base: u64,
    /// The largest value the buffer may grow to hold.
    max_value: usize,
    /// The last value [`Self::skip_value`] passed is an object or array
    /// of ASCII bytes only.
    ascii: bool,
}

impl<R: Read> Input<R> {
    fn new(reader: R, max_value: usize) -> Input<R> {
        Input {
            reader,
            buf: vec![0; INITIAL_BUF.min(max_value.max(1))],
            pos: 0,
            end: 0,
            mark: None,
            base: 0,
            max_value,
            ascii: false,
        }
    }

    /// Reads more bytes; false at end of input.
    fn fill(&mut self) -> Result<bool, ScanError> {
        let keep = self.mark.unwrap_or(self.pos);
        if keep > 0 {
            self.buf.copy_within(keep..self.end, 0);
            self.end -= keep;
            self.pos -= keep;
            if let Some(m) = self.mark.as_mut() {
                *m -= keep;
            }
            self.base += keep as u64;
        }
        if self.end == self.buf.len() {
            self.grow()?;
        }
        loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ScanError::Io(e)),
            }
        }
    }

    /// Doubles the buffer, which is full of the value being collected,
    /// up to the limit; past it, or when memory runs out, an error.
    fn grow(&mut self) -> Result<(), ScanError> {
        let at = self.base + self.mark.unwrap_or(0) as u64;
        let len = self.buf.len();
        if len >= self.max_value {
            return Err(ScanError::Limit(too_large(self.max_value, at)));
        }
        let n = len.saturating_mul(2).min(self.max_value);
        if self.buf.try_reserve_exact(n - len).is_err() {
            return Err(ScanError::Limit(format!(
                "out of memory: cannot hold a JSON value of {} at byte {at}",
                mib(n)
            )));
        }
        self.buf.resize(n, 0);
        Ok(())
    }

    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn truncated(&self, what: &str) -> ScanError {
        ScanError::Syntax(format!(
            "truncated JSON: input ended {what} (after {} bytes)",
            self.offset()
        ))
    }

    /// The next non-whitespace byte, not consumed; None at end of input.
    fn peek_nonws(&mut self) -> Result<Option<u8>, ScanError> {
        loop {
            if let Some(b) = self.nonws_in_buffer() {
                return Ok(Some(b));
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// The next non-whitespace byte if the buffer holds it (not consumed;
    /// the whitespace before it is); None when the buffer ends first.
    #[inline(always)]
    fn nonws_in_buffer(&mut self) -> Option<u8> {
        self.pos = crate::load::fast_json::whitespace_end(&self.buf[..self.end], self.pos);
        self.buf[..self.end].get(self.pos).copied()
    }

    /// [`Self::expect_nonws`], without a call when the buffer holds the
    /// byte (between the elements of a big array).
    #[inline(always)]
    fn next_nonws(&mut self, what: &str) -> Result<u8, ScanError> {
        match self.nonws_in_buffer() {
            Some(b) => Ok(b),
            None => self.expect_nonws(what),
        }
    }

    fn expect_nonws(&mut self, what: &str) -> Result<u8, ScanError> {
        match self.peek_nonws()? {
            Some(b) => Ok(b),
            None => Err(self.truncated(what)),
        }
    }

    fn unexpected(&self, b: u8, expected: &str) -> ScanError {
        ScanError::Syntax(format!(
            "invalid JSON at byte {}: expected {expected}, found {}",
            self.offset(),
            describe(b)
        ))
    }

    /// Skips one JSON value starting at `pos` (after whitespace). The value's
    /// bytes are `buf[start..pos]` afterwards, where `start` is the returned mark.
    #[inline(always)]
    fn skip_value(&mut self, what: &str) -> Result<usize, ScanError> {
        let first = self.next_nonws(what)?;
        // The usual case, once for each of millions of events: a container
        // that ends inside the buffer, so no refill and no mark. Otherwise
        // the walk starts again the general way, which words every error.
        if matches!(first, b'{' | b'[') {
            let mut walk = Brackets::new(first);
            if let Some(n) = walk.find_end(&self.buf[self.pos..self.end]) {
                let start = self.pos;
                self.pos += n;
                self.ascii = walk.ascii();
                return Ok(start);
            }
        }
        self.ascii = false;
        self.mark = Some(self.pos);
        self.pass(first, what)?;
        let m = self.mark.take().unwrap_or(0);
        Ok(m)
    }

    /// Moves past one JSON value starting at `pos` (after whitespace)
    /// without keeping it: the buffer does not grow to hold it.
    fn pass_value(&mut self, what: &str) -> Result<(), ScanError> {
        let first = self.expect_nonws(what)?;
        self.pass(first, what)
    }

    /// Moves past the value whose first byte, `first`, is at `pos`.
    #[inline(always)]
    fn pass(&mut self, first: u8, what: &str) -> Result<(), ScanError> {
        match first {
            b'{' | b'[' => self.skip_container(),
            b'"' => {
                self.pos += 1;
                self.skip_string_body(what)
            }
            _ => self.skip_scalar(),
        }
    }

    /// Skips past the closing quote of a string whose opening quote was consumed.
    fn skip_string_body(&mut self, what: &str) -> Result<(), ScanError> {
        loop {
            match memchr::memchr2(b'"', b'\\', &self.buf[self.pos..self.end]) {
                Some(i) => {
                    let at = self.pos + i;
                    if self.buf[at] == b'"' {
                        self.pos = at + 1;
                        return Ok(());
                    }
                    // A backslash escapes the next byte, which may not be read yet.
                    if at + 1 < self.end {
                        self.pos = at + 2;
                    } else {
                        self.pos = at;
                        if !self.fill()? {
                            return Err(self.truncated(what));
                        }
                    }
                }
                None => {
                    self.pos = self.end;
                    if !self.fill()? {
                        return Err(self.truncated(what));
                    }
                }
            }
        }
    }

    fn skip_container(&mut self) -> Result<(), ScanError> {
        // The end of a container depends only on strings and its own kind of
        // bracket (the other kind is balanced inside it, and every event is
        // then parsed strictly).
        let mut walk = Brackets::new(self.buf[self.pos]);
        loop {
            if let Some(n) = walk.find_end(&self.buf[self.pos..self.end]) {
                self.pos += n;
                self.ascii = walk.ascii();
                return Ok(());
            }
            self.pos = self.end;
            if !self.fill()? {
                return Err(self.truncated(if walk.in_string() {
                    "inside a string"
                } else {
                    "inside an object or array"
                }));
            }
        }
    }

    fn skip_scalar(&mut self) -> Result<(), ScanError> {
        loop {
            while self.pos < self.end {
                match self.buf[self.pos] {
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' => return Ok(()),
                    _ => self.pos += 1,
                }
            }
            if !self.fill()? {
                return Ok(());
            }
        }
    }
}

/// A value over the limit, carried inside an `io::Error` by [`TokenLimit`].
#[derive(Debug)]
pub struct LimitError(pub String);

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LimitError {}

/// Where [`TokenLimit`] is in the JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    Outside,
    InString,
    Escape,
}

/// A reader that passes JSON text through and fails (with a [`LimitError`])
/// when one string or scalar is longer than the limit: streaming parsers
/// such as serde_json's `from_reader` collect a string, key or number in a
/// buffer that grows without bound.
pub struct TokenLimit<R> {
    inner: R,
    limit: usize,
    /// Absolute offset of the next byte read.
    offset: u64,
    lex: Lex,
    /// Length of the string or scalar being read, and where it started.
    run: usize,
    run_start: u64,
}

impl<R: Read> TokenLimit<R> {
    /// Wraps `inner`; no token may exceed `limit` bytes.
    pub fn new(inner: R, limit: usize) -> Self {
        TokenLimit {
            inner,
            limit,
            offset: 0,
            lex: Lex::Outside,
            run: 0,
            run_start: 0,
        }
    }

    /// Follows the tokens of `bytes`; false when one grows past the limit.
    fn track(&mut self, bytes: &[u8]) -> bool {
        let mut i = 0;
        while i < bytes.len() {
            match self.lex {
                Lex::InString => match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                    Some(k) => {
                        self.run += k + 1;
                        self.lex = if bytes[i + k] == b'"' {
                            Lex::Outside
                        } else {
                            Lex::Escape
                        };
                        i += k + 1;
                    }
                    None => {
                        self.run += bytes.len() - i;
                        i = bytes.len();
                    }
                },
                Lex::Escape => {
                    self.run += 1;
                    self.lex = Lex::InString;
                    i += 1;
                }
                Lex::Outside => {
                    let b = bytes[i];
                    if matches!(b, b'{' | b'}' | b'[' | b']' | b',' | b':')
                        || b.is_ascii_whitespace()
                    {
                        self.run = 0;
                    } else {
                        if self.run == 0 {
                            self.run_start = self.offset + i as u64;
                        }
                        self.run += 1;
                        if b == b'"' {
                            self.lex = Lex::InString;
                        }
                    }
                    i += 1;
                }
            }
            if self.run > self.limit {
                return false;
            }
        }
        true
    }
}

impl<R: Read> Read for TokenLimit<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        if !self.track(&out[..n]) {
            let e = LimitError(too_large(self.limit, self.run_start));
            return Err(std::io::Error::other(e));
        }
        self.offset += n as u64;
        Ok(n)
    }
}

fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// Splits the document read from `reader`, feeding `sink`; one value may
/// not exceed [`max_value_bytes`].
pub fn split<R: Read>(reader: R, sink: &mut dyn Sink) -> Result<Outline, ScanError> {
    let max_value = max_value_bytes().map_err(ScanError::Limit)?;
    split_with_limit(reader, sink, max_value)
}

/// [`split`] with the limit on one value given, in bytes.
pub fn split_with_limit<R: Read>(
    reader: R,
    sink: &mut dyn Sink,
    max_value: usize,
) -> Result<Outline, ScanError> {
    let mut inp = Input::new(reader, max_value);
    let first = match inp.peek_nonws()? {
        Some(b) => b,
        None => return Err(ScanError::Syntax("empty input: no JSON document".into())),
    };
    let has_trace_events = match first {
        b'[' => {
            // A bare array of events: accepted as a convenience.
            inp.pos += 1;
            events_array(&mut inp, sink)?;
            true
        }
        b'{' => {
            inp.pos += 1;
            top_level_object(&mut inp, sink)?
        }
        b => {
            return Err(ScanError::Syntax(format!(
                "not a JSON object: the document starts with {}",
                describe(b)
            )));
        }
    };
    if let Some(b) = inp.peek_nonws()? {
        return Err(inp.unexpected(b, "end of input after the document"));
    }
    Ok(Outline { has_trace_events })
}

/// The members of the top-level object (after its `{`, through its `}`):
/// `traceEvents` goes event by event to the sink, every other member whole.
/// Returns whether `traceEvents` was there.
fn top_level_object<R: Read>(inp: &mut Input<R>, sink: &mut dyn Sink) -> Result<bool, ScanError> {
    let mut has_trace_events = false;
    members(inp, "inside the top-level object", |inp, key| {
        if key == "traceEvents" {
            let b = inp.expect_nonws("after \"traceEvents\":")?;
            if b != b'[' {
                return Err(ScanError::Syntax(
                    "\"traceEvents\" is not an array".to_string(),
                ));
            }
            inp.pos += 1;
            events_array(inp, sink)?;
            has_trace_events = true;
        } else {
            let start = inp.skip_value("inside a top-level value")?;
            sink.other(&key, &inp.buf[start..inp.pos])
                .map_err(ScanError::Callback)?;
        }
        Ok(())
    })?;
    Ok(has_trace_events)
}

/// The members of an object (after its `{`, through its `}`): `each` gets
/// each key and reads its value.
#[inline]
fn members<R: Read>(
    inp: &mut Input<R>,
    what: &str,
    mut each: impl FnMut(&mut Input<R>, String) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    let mut first_key = true;
    loop {
        let b = inp.expect_nonws(what)?;
        if b == b'}' && first_key {
            inp.pos += 1;
            return Ok(());
        }
        let key = member_key(inp, b)?;
        each(inp, key)?;
        first_key = false;
        match inp.expect_nonws(what)? {
            b',' => inp.pos += 1,
            b'}' => {
                inp.pos += 1;
                return Ok(());
            }
            b => return Err(inp.unexpected(b, "',' or '}'")),
        }
    }
}

/// The elements of an array (after its `[`, through its `]`): `each` gets
/// each element's index and reads the element.
#[inline]
fn elements<R: Read>(
    inp: &mut Input<R>,
    what: &str,
    mut each: impl FnMut(&mut Input<R>, usize) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    if inp.expect_nonws(what)? == b']' {
        inp.pos += 1;
        return Ok(());
    }
    for index in 0.. {
        each(inp, index)?;
        match inp.next_nonws(what)? {
            b',' => inp.pos += 1,
            b']' => {
                inp.pos += 1;
                break;
            }
            b => return Err(inp.unexpected(b, "',' or ']' between elements")),
        }
    }
    Ok(())
}

/// A member's key and its `:` (`b`: the byte the key should start at).
fn member_key<R: Read>(inp: &mut Input<R>, b: u8) -> Result<String, ScanError> {
    if b != b'"' {
        return Err(inp.unexpected(b, "a key string"));
    }
    let start = inp.skip_value("inside a key")?;
    let key: String = serde_json::from_slice(&inp.buf[start..inp.pos])
        .map_err(|e| ScanError::Syntax(format!("invalid key: {e}")))?;
    let b = inp.expect_nonws("after a key")?;
    if b != b':' {
        return Err(inp.unexpected(b, "':'"));
    }
    inp.pos += 1;
    Ok(key)
}

fn events_array<R: Read>(inp: &mut Input<R>, sink: &mut dyn Sink) -> Result<(), ScanError> {
    const WHAT: &str = "inside \"traceEvents\"";
    elements(inp, WHAT, |inp, index| {
        let start = inp.skip_value(WHAT)?;
        sink.event(index, &inp.buf[start..inp.pos], inp.ascii)
            .map_err(ScanError::Callback)
    })
}

/// How [`split_shaped`] reads a value of a nested document.
#[derive(Debug)]
pub enum Shape {
    /// Handed whole to the sink ([`ShapeSink::whole`]).
    Whole,
    /// An array whose elements go one at a time to the sink
    /// ([`ShapeSink::element`]).
    Elements,
    /// An object: the members named here are read as their nodes say, the
    /// others passed over unread.
    Object(&'static [(&'static str, Node)]),
    /// An array: its first element is read as the node says, the others
    /// passed over; the sink is told how many there were
    /// ([`ShapeSink::count`]).
    First(&'static Node),
}

/// A value of a nested document where [`split_shaped`] expects one.
#[derive(Debug)]
pub struct Node {
    /// Where the value is (`a[0].b`), for the sink and for messages; empty
    /// for the document itself.
    pub label: &'static str,
    /// What the value should be, for messages ("a list of records").
    pub expecting: &'static str,
    /// How it is read.
    pub shape: Shape,
}

/// Receives the pieces [`split_shaped`] finds, in document order.
pub trait ShapeSink {
    /// A [`Shape::Whole`] value, as JSON text.
    fn whole(&mut self, node: &'static Node, json: &[u8]) -> Result<(), String>;
    /// Element `index` of a [`Shape::Elements`] array, as JSON text.
    fn element(&mut self, node: &'static Node, index: usize, json: &[u8]) -> Result<(), String>;
    /// The number of elements of a [`Shape::First`] array.
    fn count(&mut self, node: &'static Node, n: usize) -> Result<(), String>;
}

/// Splits a nested document (rocprofv3's) read from `reader` as `root`
/// describes it, feeding `sink`: the large arrays element by element,
/// small values whole, the rest passed over without being kept. One value
/// may not exceed `max_value` bytes. A value of the wrong JSON type is a
/// [`ScanError::Callback`] naming its node.
pub fn split_shaped<R: Read>(
    reader: R,
    root: &'static Node,
    sink: &mut dyn ShapeSink,
    max_value: usize,
) -> Result<(), ScanError> {
    let mut inp = Input::new(reader, max_value);
    if inp.peek_nonws()?.is_none() {
        return Err(ScanError::Syntax("empty input: no JSON document".into()));
    }
    walk(&mut inp, root, sink)?;
    if let Some(b) = inp.peek_nonws()? {
        return Err(inp.unexpected(b, "end of input after the document"));
    }
    Ok(())
}

/// Reads the value at `pos` as `node` says.
fn walk<R: Read>(
    inp: &mut Input<R>,
    node: &'static Node,
    sink: &mut dyn ShapeSink,
) -> Result<(), ScanError> {
    let what = if node.label.is_empty() {
        "inside the document".to_string()
    } else {
        format!("inside {}", node.label)
    };
    let what = what.as_str();
    let b = inp.expect_nonws(what)?;
    let open = match node.shape {
        Shape::Whole => {
            let start = inp.skip_value(what)?;
            return sink
                .whole(node, &inp.buf[start..inp.pos])
                .map_err(ScanError::Callback);
        }
        Shape::Object(_) => b'{',
        Shape::Elements | Shape::First(_) => b'[',
    };
    if b != open {
        let start = inp.skip_value(what)?;
        return Err(wrong_type(node, &inp.buf[start..inp.pos]));
    }
    inp.pos += 1;
    match node.shape {
        Shape::Whole => Ok(()),
        Shape::Object(fields) => members(inp, what, |inp, key| {
            match fields.iter().find(|(k, _)| *k == key) {
                Some((_, child)) => walk(inp, child, sink),
                None => inp.pass_value(what),
            }
        }),
        Shape::Elements => elements(inp, what, |inp, index| {
            let start = inp.skip_value(what)?;
            sink.element(node, index, &inp.buf[start..inp.pos])
                .map_err(ScanError::Callback)
        }),
        Shape::First(child) => {
            let mut n = 0;
            elements(inp, what, |inp, index| {
                n = index + 1;
                if index == 0 {
                    walk(inp, child, sink)
                } else {
                    inp.pass_value(what)
                }
            })?;
            sink.count(node, n).map_err(ScanError::Callback)
        }
    }
}

/// The error for `json` (a whole value) where `node` wants another type,
/// in serde's words: `label: invalid type: map, expected ...`.
fn wrong_type(node: &Node, json: &[u8]) -> ScanError {
    use serde::de::Unexpected;
    use serde_json::Value;
    let value: Value = match serde_json::from_slice(json) {
        Ok(v) => v,
        Err(e) => return ScanError::Syntax(format!("invalid JSON: {e}")),
    };
    let found = match &value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => Unexpected::Bool(*b).to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Unexpected::Signed(i).to_string(),
            (_, Some(u), _) => Unexpected::Unsigned(u).to_string(),
            (_, _, f) => Unexpected::Float(f.unwrap_or(f64::NAN)).to_string(),
        },
        Value::String(s) => Unexpected::Str(s).to_string(),
        Value::Array(_) => Unexpected::Seq.to_string(),
        Value::Object(_) => Unexpected::Map.to_string(),
    };
    let prefix = if node.label.is_empty() {
        String::new()
    } else {
        format!("{}: ", node.label)
    };
    ScanError::Callback(format!(
        "{prefix}invalid type: {found}, expected {}",
        node.expecting
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect {
        events: Vec<String>,
        /// Each event's `ascii` flag.
        ascii: Vec<bool>,
        others: Vec<(String, String)>,
    }

    impl Sink for Collect {
        fn event(&mut self, _i: usize, json: &[u8], ascii: bool) -> Result<(), String> {
            self.events.push(String::from_utf8_lossy(json).into_owned());
            self.ascii.push(ascii);
            Ok(())
        }
        fn other(&mut self, key: &str, json: &[u8]) -> Result<(), String> {
            self.others
                .push((key.to_string(), String::from_utf8_lossy(json).into_owned()));
            Ok(())
        }
    }

    /// A reader that returns at most `n` bytes per call, to exercise refills.
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn run(doc: &str, chunk: usize) -> Result<Collect, ScanError> {
        let mut c = Collect::default();
        split(Trickle(doc.as_bytes(), chunk), &mut c)?;
        Ok(c)
    }

    /// Events are flagged ASCII when they are, within one buffer or across
    /// refills, and never when a byte of theirs is not; values that are
    /// not objects or arrays are not flagged.
    #[test]
    fn events_carry_whether_they_are_ascii() {
        let long = "y".repeat(3000);
        let doc = format!(
            "{{\"traceEvents\": [{{\"name\": \"a\"}}, {{\"name\": \"é\"}}, \
             {{\"name\": \"{long}\"}}, [1, \"ü\"], \"s\", {{\"k\": \"\\\"x{long}é\"}}]}}"
        );
        for chunk in [1, 3, 64, 1000, 1 << 20] {
            let c = run(&doc, chunk).unwrap();
            assert_eq!(c.events.len(), 6);
            assert_eq!(
                c.ascii,
                [true, false, true, false, false, false],
                "chunks of {chunk}"
            );
        }
    }

    /// What a split gives, as text: the events and other keys, or the error.
    fn outcome(doc: &str, chunk: usize) -> String {
        match run(doc, chunk) {
            Ok(c) => format!("{:?} {:?}", c.events, c.others),
            Err(e) => format!("error: {e:?}"),
        }
    }

    #[test]
    fn the_short_path_splits_and_fails_as_the_general_one() {
        // Read a byte at a time, no element is whole in the buffer when the
        // splitter reaches it, so every one goes the general way; read at
        // once, the usual ones take the short path. Both must agree on
        // every document, errors and their offsets included.
        let seed = r#"{"traceEvents": [{"ph": "X", "args": {"a": [1, {"b": "}"}]}},
  {"name": "x\"}"}, 7, "s", [1, {}],
  {"ts": 1}], "z": {"k": [true]}}"#;
        let alphabet = b"{}[],:\" \n\\x1";
        let mut next = crate::test_support::draws(0x2545_f491_4f6c_dd1d);
        let (mut oks, mut errors) = (0, 0);
        for _ in 0..3000 {
            let mut doc = seed.as_bytes().to_vec();
            for _ in 0..=next(2) {
                if doc.is_empty() {
                    break;
                }
                let at = next(doc.len());
                match next(3) {
                    0 => {
                        doc.remove(at);
                    }
                    1 => doc.insert(at, alphabet[next(alphabet.len())]),
                    _ => doc.truncate(at),
                }
            }
            let Ok(doc) = String::from_utf8(doc) else {
                continue;
            };
            let general = outcome(&doc, 1);
            assert_eq!(outcome(&doc, 1 << 20), general, "{doc}");
            if general.starts_with("error") {
                errors += 1;
            } else {
                oks += 1;
            }
        }
        assert!(oks > 200 && errors > 1000, "{oks} {errors}");
    }

    #[test]
    fn splits_events_and_other_keys_at_any_chunk_size() {
        let doc = r#" {"a": {"x": [1, "]}\""]}, "traceEvents": [ {"name": "k\"}", "ts": 1.5},
            {"args": {"s": [[1,2],[]]}} ], "z": 3 } "#;
        for chunk in [1, 2, 3, 7, 64, 4096] {
            let c = run(doc, chunk).unwrap();
            assert_eq!(c.events.len(), 2, "chunk {chunk}");
            assert_eq!(c.events[0], r#"{"name": "k\"}", "ts": 1.5}"#);
            assert_eq!(c.events[1], r#"{"args": {"s": [[1,2],[]]}}"#);
            assert_eq!(
                c.others[0],
                ("a".to_string(), r#"{"x": [1, "]}\""]}"#.to_string())
            );
            assert_eq!(c.others[1], ("z".to_string(), "3".to_string()));
        }
    }

    #[test]
    fn reports_truncation_and_garbage() {
        for doc in [
            r#"{"traceEvents": [{"a": 1}"#,
            r#"{"traceEvents": [{"a": "x"#,
            r#"{"#,
        ] {
            match run(doc, 3) {
                Err(ScanError::Syntax(m)) => assert!(m.contains("truncated"), "{m}"),
                other => panic!("expected truncation for {doc}: {:?}", other.is_ok()),
            }
        }
        assert!(matches!(run("", 3), Err(ScanError::Syntax(_))));
        assert!(matches!(run("42", 3), Err(ScanError::Syntax(_))));
        assert!(matches!(
            run(r#"{"traceEvents": []} x"#, 3),
            Err(ScanError::Syntax(_))
        ));
        assert!(matches!(
            run(r#"{"traceEvents": 5}"#, 3),
            Err(ScanError::Syntax(_))
        ));
    }

    fn run_limited(doc: &str, limit: usize) -> Result<Collect, ScanError> {
        let mut c = Collect::default();
        split_with_limit(Trickle(doc.as_bytes(), 5), &mut c, limit)?;
        Ok(c)
    }

    #[test]
    fn one_value_may_not_exceed_the_limit() {
        let big = "x".repeat(100);
        let cases = [
            // (document, byte where the large value starts)
            (
                format!(r#"{{"traceEvents": [{{"a": 1}}, {{"s": "{big}"}}]}}"#),
                27,
            ),
            (format!(r#"{{"traceEvents": [], "{big}": 1}}"#), 20),
            (format!(r#"{{"meta": ["{big}"]}}"#), 9),
            (format!("[{}", "[".repeat(200)), 1),
        ];
        for (doc, at) in cases {
            match run_limited(&doc, 64) {
                Err(ScanError::Limit(m)) => assert_eq!(
                    m,
                    format!(
                        "a JSON value larger than 64 bytes at byte {at} (raise the limit with {MAX_VALUE_ENV})"
                    )
                ),
                other => panic!("expected the limit for {doc}: {:?}", other.is_ok()),
            }
            // The same document passes under a larger limit (or fails on its syntax).
            assert!(!matches!(run_limited(&doc, 4096), Err(ScanError::Limit(_))));
        }
        let c = run_limited(r#"{"traceEvents": [{"a": "0123456789"}]}"#, 20).unwrap();
        assert_eq!(c.events.len(), 1);
    }

    #[test]
    fn deep_nesting_is_counted_not_recursed() {
        let deep = format!("[{}{}]", "[".repeat(1 << 20), "]".repeat(1 << 20));
        let c = run_limited(&deep, 8 << 20).unwrap();
        assert_eq!(c.events.len(), 1);
        let open = format!("[{}", "[".repeat(1 << 20));
        assert!(
            matches!(run_limited(&open, 8 << 20), Err(ScanError::Syntax(m)) if m.contains("truncated"))
        );
    }

    fn through_limit(doc: &str, limit: usize) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        TokenLimit::new(Trickle(doc.as_bytes(), 3), limit).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn token_limit_passes_json_through_and_stops_long_tokens() {
        let doc = r#"{"key": ["a\"b", 12345, true, {"k2": "\\"}], "x": null}"#;
        assert_eq!(through_limit(doc, 8).unwrap(), doc.as_bytes());
        for (doc, at) in [
            (r#"{"k": "0123456789"}"#, 6),
            (r#"{"0123456789": 1}"#, 1),
            (r#"[1, 12345678901]"#, 4),
            (r#"["\"\"\"\"\""]"#, 1),
        ] {
            let e = through_limit(doc, 8).unwrap_err();
            let m = e.get_ref().unwrap().downcast_ref::<LimitError>().unwrap();
            assert!(m.0.contains(&format!("at byte {at} ")), "{doc}: {}", m.0);
        }
    }

    #[test]
    fn limits_in_mib() {
        let v = "TRACELENS_X_MB";
        assert_eq!(parse_limit_mb(v, " 3 ", 256), Ok(3 << 20));
        assert_eq!(parse_limit_mb(v, "", 256), Ok(256 << 20));
        for bad in ["0", "-1", "lots", "1.5", "99999999999999999999"] {
            let e = parse_limit_mb(v, bad, 256).unwrap_err();
            assert_eq!(
                e,
                format!("TRACELENS_X_MB must be a whole number of MiB (>= 1), not {bad:?}")
            );
        }
        assert_eq!(mib(64), "64 bytes");
        assert_eq!(mib(3 << 20), "3 MiB");
    }

    /// What [`split_shaped`] handed over, as text.
    #[derive(Default)]
    struct Pieces(Vec<String>);

    impl ShapeSink for Pieces {
        fn whole(&mut self, node: &'static Node, json: &[u8]) -> Result<(), String> {
            let json = String::from_utf8_lossy(json);
            self.0.push(format!("{} = {json}", node.label));
            Ok(())
        }
        fn element(&mut self, node: &'static Node, i: usize, json: &[u8]) -> Result<(), String> {
            let json = String::from_utf8_lossy(json);
            self.0.push(format!("{}[{i}] = {json}", node.label));
            Ok(())
        }
        fn count(&mut self, node: &'static Node, n: usize) -> Result<(), String> {
            self.0.push(format!("{} has {n}", node.label));
            Ok(())
        }
    }

    static NESTED: Node = Node {
        label: "",
        expecting: "an object",
        shape: Shape::Object(&[(
            "list",
            Node {
                label: "list",
                expecting: "a list",
                shape: Shape::First(&Node {
                    label: "list[0]",
                    expecting: "an object",
                    shape: Shape::Object(&[
                        (
                            "meta",
                            Node {
                                label: "meta",
                                expecting: "",
                                shape: Shape::Whole,
                            },
                        ),
                        (
                            "rows",
                            Node {
                                label: "rows",
                                expecting: "a list of rows",
                                shape: Shape::Elements,
                            },
                        ),
                    ]),
                }),
            },
        )]),
    };

    fn shaped(doc: &str, chunk: usize, limit: usize) -> Result<Vec<String>, ScanError> {
        let mut p = Pieces::default();
        split_shaped(Trickle(doc.as_bytes(), chunk), &NESTED, &mut p, limit)?;
        Ok(p.0)
    }

    #[test]
    fn shaped_split_hands_over_the_named_values_only() {
        let skipped = format!(r#""{}""#, "s".repeat(500));
        let doc = format!(
            r#"{{"x": {skipped}, "list": [{{"rows": [{{"a": "]"}}, [1], 2], "other": [{skipped}],
                "meta": {{"k": "}}"}}, "rows": []}}, {{"rows": [{skipped}]}}, 3]}}"#
        );
        for chunk in [1, 3, 64, 4096] {
            // Values passed over are not kept: the limit of 64 bytes is
            // only for what is handed over.
            assert_eq!(
                shaped(&doc, chunk, 64).unwrap(),
                [
                    r#"rows[0] = {"a": "]"}"#,
                    "rows[1] = [1]",
                    "rows[2] = 2",
                    r#"meta = {"k": "}"}"#,
                    "list has 3",
                ],
                "chunk {chunk}"
            );
        }
        assert_eq!(shaped("{}", 2, 64).unwrap(), Vec::<String>::new());
        let too_big = format!(r#"{{"list": [{{"meta": [{skipped}]}}]}}"#);
        assert!(matches!(shaped(&too_big, 7, 64), Err(ScanError::Limit(_))));
    }

    #[test]
    fn shaped_split_names_values_of_the_wrong_type() {
        let wrong = |doc: &str| match shaped(doc, 5, 1 << 20) {
            Err(ScanError::Callback(m)) => m,
            other => panic!("{doc}: {:?}", other.map_err(|e| format!("{e:?}"))),
        };
        assert_eq!(
            wrong(r#"{"list": {"a": 1}}"#),
            "list: invalid type: map, expected a list"
        );
        assert_eq!(
            wrong(r#"{"list": ["x\"y"]}"#),
            r#"list[0]: invalid type: string "x\"y", expected an object"#
        );
        assert_eq!(
            wrong(r#"{"list": [{"rows": -3}]}"#),
            "rows: invalid type: integer `-3`, expected a list of rows"
        );
        assert_eq!(
            wrong(r#"[true]"#),
            "invalid type: sequence, expected an object"
        );
        for doc in [r#"{"list": [{"rows": [1}]}"#, r#"{"list": [{"#, "", "{} {}"] {
            assert!(
                matches!(shaped(doc, 5, 1 << 20), Err(ScanError::Syntax(_))),
                "{doc}"
            );
        }
    }

    #[test]
    fn accepts_empty_and_bare_arrays() {
        assert_eq!(run(r#"{"traceEvents": []}"#, 5).unwrap().events.len(), 0);
        assert_eq!(run(r#"[{"a":1},{"b":2}]"#, 5).unwrap().events.len(), 2);
        assert_eq!(run("{}", 5).unwrap().events.len(), 0);
    }
}
