//! A streaming splitter for the top level of a trace document.
//!
//! Traces are large (hundreds of MB) but flat: one object whose `traceEvents`
//! array holds small objects. Instead of building a document tree, the splitter
//! walks the bytes with a tiny state machine, hands each element of
//! `traceEvents` to a callback as a byte slice (parsed strictly by serde_json
//! there), and keeps other top-level values as text. Memory stays at one
//! buffer, however large the input.

use std::io::Read;

/// What went wrong while splitting.
#[derive(Debug)]
pub enum ScanError {
    /// The reader failed (I/O, decompression).
    Io(std::io::Error),
    /// The bytes are not the JSON shape of a trace; the text says where and why.
    Syntax(String),
    /// The callback rejected an element.
    Callback(String),
}

impl From<std::io::Error> for ScanError {
    fn from(e: std::io::Error) -> Self {
        ScanError::Io(e)
    }
}

/// Receives the pieces of the document.
pub trait Sink {
    /// One element of `traceEvents` (its JSON text), with its index.
    fn event(&mut self, index: usize, json: &[u8]) -> Result<(), String>;
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
}

impl<R: Read> Input<R> {
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
            let n = self.buf.len() * 2;
            self.buf.resize(n, 0);
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
            while self.pos < self.end {
                let b = self.buf[self.pos];
                if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                    return Ok(Some(b));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
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
    fn skip_value(&mut self, what: &str) -> Result<usize, ScanError> {
        let first = self.expect_nonws(what)?;
        self.mark = Some(self.pos);
        match first {
            b'{' | b'[' => self.skip_container()?,
            b'"' => {
                self.pos += 1;
                self.skip_string_body(what)?;
            }
            _ => self.skip_scalar()?,
        }
        let m = self.mark.take().unwrap_or(0);
        Ok(m)
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
        // then parsed strictly), so a SIMD search for three bytes suffices.
        let (open, close) = if self.buf[self.pos] == b'{' {
            (b'{', b'}')
        } else {
            (b'[', b']')
        };
        let mut depth: usize = 0;
        loop {
            while let Some(i) = memchr::memchr3(b'"', open, close, &self.buf[self.pos..self.end]) {
                let b = self.buf[self.pos + i];
                self.pos += i + 1;
                if b == b'"' {
                    self.skip_string_body("inside a string")?;
                } else if b == open {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
            }
            self.pos = self.end;
            if !self.fill()? {
                return Err(self.truncated("inside an object or array"));
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

fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// Splits the document read from `reader`, feeding `sink`.
pub fn split<R: Read>(reader: R, sink: &mut dyn Sink) -> Result<Outline, ScanError> {
    let mut inp = Input {
        reader,
        buf: vec![0; INITIAL_BUF],
        pos: 0,
        end: 0,
        mark: None,
        base: 0,
    };
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
    let mut first_key = true;
    loop {
        let b = inp.expect_nonws("inside the top-level object")?;
        if b == b'}' && first_key {
            inp.pos += 1;
            return Ok(has_trace_events);
        }
        let key = member_key(inp, b)?;
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
        first_key = false;
        match inp.expect_nonws("inside the top-level object")? {
            b',' => inp.pos += 1,
            b'}' => {
                inp.pos += 1;
                return Ok(has_trace_events);
            }
            b => return Err(inp.unexpected(b, "',' or '}'")),
        }
    }
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
    let mut index = 0usize;
    if inp.expect_nonws("inside \"traceEvents\"")? == b']' {
        inp.pos += 1;
        return Ok(());
    }
    loop {
        let start = inp.skip_value("inside \"traceEvents\"")?;
        sink.event(index, &inp.buf[start..inp.pos])
            .map_err(ScanError::Callback)?;
        index += 1;
        match inp.expect_nonws("inside \"traceEvents\"")? {
            b',' => inp.pos += 1,
            b']' => {
                inp.pos += 1;
                return Ok(());
            }
            b => return Err(inp.unexpected(b, "',' or ']' between events")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect {
        events: Vec<String>,
        others: Vec<(String, String)>,
    }

    impl Sink for Collect {
        fn event(&mut self, _i: usize, json: &[u8]) -> Result<(), String> {
            self.events.push(String::from_utf8_lossy(json).into_owned());
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

    #[test]
    fn accepts_empty_and_bare_arrays() {
        assert_eq!(run(r#"{"traceEvents": []}"#, 5).unwrap().events.len(), 0);
        assert_eq!(run(r#"[{"a":1},{"b":2}]"#, 5).unwrap().events.len(), 2);
        assert_eq!(run("{}", 5).unwrap().events.len(), 0);
    }
}
