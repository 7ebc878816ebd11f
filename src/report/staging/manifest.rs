//! The manifest of an output folder, `.tracelens-manifest`: the names of
//! the files tracelens wrote there, so that a later run replacing the
//! folder's sheets (or scripts, or plots) removes only files an earlier
//! run wrote, never the user's own.
//!
//! The file is text: a header line, then one name per line, each byte
//! outside printable ASCII (and `%` and `#`) written as `%XX`, so any name
//! (a newline in it, invalid UTF-8) is one line, and a line starting with
//! `#` is a comment. Reading is forgiving and
//! strict at once: a line that does not decode, or decodes to anything but
//! a plain name directly in the folder (no `/`, not `.`/`..`, not hidden),
//! is ignored, so a manipulated manifest cannot name a file elsewhere.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// The manifest's file name, inside the folder it describes.
pub const MANIFEST_NAME: &str = ".tracelens-manifest";

/// The first line of every manifest; a file without it names nothing.
const HEADER: &str = "# tracelens manifest 1: files tracelens wrote in this folder";

/// The most bytes of a manifest read (a folder of millions of names).
const MAX_BYTES: u64 = 64 << 20;

/// The bytes of a name (the OS's own on Unix; UTF-8 elsewhere).
fn name_bytes(name: &OsStr) -> Option<Vec<u8>> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(name.as_bytes().to_vec())
    }
    #[cfg(not(unix))]
    {
        name.to_str().map(|s| s.as_bytes().to_vec())
    }
}

/// The name of `bytes` ([`name_bytes`] reversed).
fn name_of(bytes: Vec<u8>) -> Option<OsString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(OsString::from_vec(bytes))
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(bytes).ok().map(OsString::from)
    }
}

/// Whether `name` is a plain, visible file name: one normal path
/// component, no separator, no NUL, not starting with `.` (which also
/// leaves out `.`, `..`, the staging folders and the manifest).
pub(super) fn is_plain_name(name: &OsStr) -> bool {
    let Some(bytes) = name_bytes(name) else {
        return false;
    };
    let bad_byte = |b: &u8| *b == b'/' || *b == 0 || (cfg!(windows) && *b == b'\\');
    let mut parts = Path::new(name).components();
    !bytes.is_empty()
        && bytes[0] != b'.'
        && !bytes.iter().any(bad_byte)
        && matches!(parts.next(), Some(Component::Normal(_)))
        && parts.next().is_none()
}

/// One name as a manifest line (without its line break).
pub(super) fn escape(bytes: &[u8]) -> String {
    let mut line = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'%' && b != b'#' {
            line.push(char::from(b));
        } else {
            line.push_str(&format!("%{b:02X}"));
        }
    }
    line
}

/// The name a manifest line spells, if it is well formed.
fn unescape(line: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if b == b'%' {
            let hex = std::str::from_utf8(line.get(i + 1..i + 3)?).ok()?;
            if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else if b.is_ascii_graphic() {
            out.push(b);
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

/// The manifest text listing `names` (sorted, each once).
pub(super) fn encode(names: &BTreeSet<OsString>) -> Vec<u8> {
    let mut text = format!("{HEADER}\n");
    for bytes in names.iter().filter_map(|n| name_bytes(n)) {
        text.push_str(&escape(&bytes));
        text.push('\n');
    }
    text.into_bytes()
}

/// The plain names a manifest's bytes list; anything else in it is
/// ignored (see the module's note).
pub(super) fn parse(bytes: &[u8]) -> BTreeSet<OsString> {
    let mut lines = bytes.split(|&b| b == b'\n');
    if lines.next() != Some(HEADER.as_bytes()) {
        return BTreeSet::new();
    }
    lines
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .filter_map(unescape)
        .filter_map(name_of)
        .filter(|n| is_plain_name(n))
        .collect()
}

/// The names the manifest of `dir` lists; none when it is absent or not
/// a regular file (a link is never followed).
pub(super) fn read(dir: &Path) -> io::Result<BTreeSet<OsString>> {
    let path = dir.join(MANIFEST_NAME);
    match fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Ok(BTreeSet::new()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(e),
    }
    let mut bytes = Vec::new();
    fs::File::open(&path)?
        .take(MAX_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(parse(&bytes))
}

/// What a commit does to a folder replaced as a unit.
#[derive(Debug)]
pub(super) struct Plan {
    /// Files to remove: listed by the old manifest, still regular files
    /// directly in the folder, with an extension the run owns, and not
    /// written by it.
    pub stale: Vec<PathBuf>,
    /// The new manifest: the files the run writes, and the listed files
    /// that stay (other extensions).
    pub text: Vec<u8>,
}

/// The [`Plan`] for `dir` (resolved) when a run writing the files
/// `written` there owns its files with the extensions `exts`.
pub(super) fn plan(dir: &Path, exts: &[&str], written: BTreeSet<OsString>) -> io::Result<Plan> {
    let mut listed = written;
    let mut stale = Vec::new();
    for name in read(dir)? {
        let path = dir.join(&name);
        // Gone, or no longer a plain file (a link, a folder): forgotten.
        if listed.contains(&name) || !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let ext = Path::new(&name).extension();
        if ext.is_some_and(|e| exts.iter().any(|x| e == *x)) {
            stale.push(path);
        } else {
            listed.insert(name);
        }
    }
    Ok(Plan {
        stale,
        text: encode(&listed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&[u8]]) -> BTreeSet<OsString> {
        names.iter().map(|n| name_of(n.to_vec()).unwrap()).collect()
    }

    #[test]
    fn odd_names_survive_a_round_trip() {
        let names: &[&[u8]] = &[
            b"gpu_timeline.csv",
            b"two\nlines.csv",
            b"cr\r.csv",
            b"100%.csv",
            b"%41.csv",
            b"sp ace.py",
            b"tab\t.svg",
            "caf\u{e9}.csv".as_bytes(),
            b"\xff\xfe.csv",
            b"# not a comment.csv",
        ];
        let names = set(names);
        let text = encode(&names);
        assert_eq!(
            text.iter().filter(|&&b| b == b'\n').count(),
            names.len() + 1
        );
        assert!(
            text.iter()
                .all(|b| b.is_ascii_graphic() || b" \n".contains(b))
        );
        assert_eq!(parse(&text), names);
    }

    #[test]
    fn names_outside_the_folder_are_ignored() {
        let text = format!(
            "{HEADER}\n../x.csv\n/etc/passwd.csv\nsub/a.csv\n..\n.\n.hidden.csv\n\
             %2E%2E%2Fx.csv\n%2Fabs.csv\na%00b.csv\n%zz.csv\n%4.csv\nok.csv\n\n"
        );
        assert_eq!(parse(text.as_bytes()), set(&[b"ok.csv"]));
        // No header: not a manifest.
        assert!(parse(b"ok.csv\n").is_empty());
        assert!(parse(b"").is_empty());
    }

    /// Every byte string a manifest might hold parses without a panic, to
    /// plain names only; what it yields encodes and parses back the same.
    #[test]
    fn odd_bytes_never_yield_an_unsafe_name() {
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet: &[u8] = b"%/.\\\n\r\0 #aZ09\xff\x80";
        for _ in 0..20_000 {
            let mut text = format!("{HEADER}\n").into_bytes();
            for _ in 0..(next() % 40) {
                let r = next();
                let b = if r % 3 == 0 {
                    (r >> 8) as u8
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                };
                text.push(b);
            }
            let names = parse(&text);
            for n in &names {
                assert!(is_plain_name(n), "{n:?} from {text:?}");
                let bytes = name_bytes(n).unwrap();
                assert!(!bytes.contains(&b'/') && bytes[0] != b'.', "{n:?}");
            }
            assert_eq!(parse(&encode(&names)), names);
        }
    }
}
