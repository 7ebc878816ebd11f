//! Names and messages made safe to print on one line: a file name can hold
//! a newline (forging a second log line), terminal escapes, invisible or
//! bidirectional controls that reorder what is shown, or bytes that are not
//! UTF-8. [`quoted`] renders a path or name for a message; [`one_line`]
//! makes a whole message one line.

use std::ffi::OsStr;

/// `name` as a message shows it: unchanged when every character prints as
/// itself; otherwise in double quotes, with control, invisible and
/// bidirectional characters escaped (`\n`, `\t`, `\u{202e}`), bytes that are
/// not UTF-8 as `\xNN`, and `"` and `\` escaped.
pub fn quoted<S: AsRef<OsStr> + ?Sized>(name: &S) -> String {
    let name = name.as_ref();
    if let Some(text) = name.to_str()
        && !text.chars().any(needs_escape)
    {
        return text.to_string();
    }
    let mut out = String::from("\"");
    for piece in utf8_pieces(name) {
        match piece {
            Ok(text) => {
                for c in text.chars() {
                    match c {
                        '"' | '\\' => {
                            out.push('\\');
                            out.push(c);
                        }
                        c => push_char(&mut out, c),
                    }
                }
            }
            Err(bytes) => {
                for b in bytes {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

/// `text` with every control, invisible or bidirectional character escaped
/// as [`quoted`] escapes it, so it prints as exactly one line; text without
/// such characters is returned unchanged.
pub fn one_line(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_char(&mut out, c);
    }
    out
}

/// Whether `c` must be escaped: it does not print as itself (controls,
/// line and paragraph separators, zero-width and bidirectional marks).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// Pushes `c`, escaped when [`needs_escape`] says so.
fn push_char(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// `name` as runs of valid UTF-8 (`Ok`) and of bytes that are not (`Err`).
#[cfg(unix)]
fn utf8_pieces(name: &OsStr) -> Vec<Result<&str, &[u8]>> {
    use std::os::unix::ffi::OsStrExt;
    name.as_bytes()
        .utf8_chunks()
        .flat_map(|chunk| {
            let valid = Some(Ok(chunk.valid())).filter(|_| !chunk.valid().is_empty());
            let invalid = Some(Err(chunk.invalid())).filter(|_| !chunk.invalid().is_empty());
            valid.into_iter().chain(invalid)
        })
        .collect()
}

/// `name` as text: elsewhere a name that is not Unicode (unpaired UTF-16
/// surrogates) is shown as one replacement character.
#[cfg(not(unix))]
fn utf8_pieces(name: &OsStr) -> Vec<Result<&str, &[u8]>> {
    vec![Ok(name.to_str().unwrap_or("\u{fffd}"))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_names_are_unchanged() {
        for name in ["t.json", "a b/ü.json.gz", "C:\\x", "say \"hi\"", ""] {
            assert_eq!(quoted(name), name);
            assert_eq!(one_line(name), name);
        }
    }

    #[test]
    fn odd_names_are_quoted_and_escaped() {
        assert_eq!(quoted("a\nb.json"), "\"a\\nb.json\"");
        assert_eq!(quoted("x\r\ty"), "\"x\\r\\ty\"");
        assert_eq!(quoted("ab\u{202e}c"), "\"ab\\u{202e}c\"");
        assert_eq!(quoted("z\u{200b}"), "\"z\\u{200b}\"");
        assert_eq!(quoted("e\u{1b}[31m\""), "\"e\\u{1b}[31m\\\"\"");
        assert_eq!(quoted("q\\\n"), "\"q\\\\\\n\"");
    }

    #[cfg(unix)]
    #[test]
    fn bytes_that_are_not_utf8_are_hex() {
        use std::os::unix::ffi::OsStrExt;
        let name = OsStr::from_bytes(b"d\xff/t\xc3.json");
        assert_eq!(quoted(name), "\"d\\xff/t\\xc3.json\"");
    }

    #[test]
    fn a_message_becomes_one_line() {
        let line = one_line("bad\ntrace: x\u{2028}y");
        assert_eq!(line, "bad\\ntrace: x\\u{2028}y");
        assert!(!line.contains('\n'));
    }
}
