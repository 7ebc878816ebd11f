//! What reading one `.xlsx` workbook may inflate and hold.
//!
//! A workbook is a zip archive: a few kilobytes can inflate to gigabytes,
//! and one shared string can be used by every cell. Reading is charged to
//! one [`Budget`] (`TRACELENS_MAX_XLSX_MB`, default 4096 MiB): each zip
//! member the workbook reader opens, at its declared inflated size (the zip
//! reader fails a member that inflates past it), charged before a byte of
//! it is inflated ([`Metered`]), and each cell, text and grid the sheets
//! become. Members that are never opened (sheets not asked for) cost
//! nothing. No member may exceed a quarter of the budget: its text is held
//! up to three times while it is parsed.

use std::cell::RefCell;
use std::io::{self, Read, Seek, SeekFrom};
use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::load::scan::{limit_from_env, mib};

/// The environment variable that sets the budget of one workbook, in MiB.
pub const MAX_XLSX_ENV: &str = "TRACELENS_MAX_XLSX_MB";

/// The default budget of one workbook, in MiB.
const DEFAULT_MAX_XLSX_MB: usize = 4096;

/// The most text one cell may hold: 1 MiB (Excel's own limit is 32,767
/// characters).
pub const MAX_CELL_TEXT: usize = 1 << 20;

/// Bytes left to inflate and hold while reading one workbook; the first
/// limit hit, once one is.
#[derive(Debug)]
pub struct Budget {
    left: u64,
    limit: u64,
    over: Option<String>,
}

/// A [`Budget`] shared by the archive reader and the cell reader.
pub type SharedBudget = Rc<RefCell<Budget>>;

impl Budget {
    /// The budget `TRACELENS_MAX_XLSX_MB` sets.
    pub fn from_env() -> Result<SharedBudget, String> {
        let limit = limit_from_env(MAX_XLSX_ENV, DEFAULT_MAX_XLSX_MB)? as u64;
        Ok(Rc::new(RefCell::new(Budget {
            left: limit,
            limit,
            over: None,
        })))
    }

    /// The most one zip member may inflate to.
    pub fn member_cap(&self) -> u64 {
        self.limit / 4
    }

    /// Takes `bytes` for `what` (e.g. "the text of sheet \"x\"") from the
    /// budget; past it, the error (also kept as [`Budget::over`]).
    pub fn charge(&mut self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), String> {
        if let Some(over) = &self.over {
            return Err(over.clone());
        }
        if bytes <= self.left {
            self.left -= bytes;
            return Ok(());
        }
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        Err(self.fail(format!(
            "{} would take the workbook past {} read and held \
             (raise the limit with {MAX_XLSX_ENV})",
            what(),
            mib(limit)
        )))
    }

    /// Records `problem` as the limit hit; returns it.
    pub fn fail(&mut self, problem: String) -> String {
        self.over.get_or_insert(problem).clone()
    }

    /// The limit hit, if one was.
    pub fn over(&self) -> Option<&str> {
        self.over.as_deref()
    }
}

/// A zip member: its name and declared inflated size.
struct Member {
    name: String,
    size: u64,
}

/// The workbook file as the workbook reader reads it: a seek to the data of
/// a zip member charges the member's declared inflated size to the budget
/// (the zip reader always seeks there before inflating a member, and fails
/// one that inflates past its declared size), and refuses a member over the
/// budget's member cap.
pub struct Metered<R> {
    inner: R,
    /// Members by the offset of their data (the largest of members
    /// sharing one).
    members: FxHashMap<u64, Member>,
    budget: SharedBudget,
}

impl<R: Read + Seek> Metered<R> {
    /// Wraps `inner`, the archive, after listing its members with a reader
    /// of its own (`list`, the same file). Shared-string tables are charged
    /// here for the entries they declare ([`declared_strings`]).
    /// A limit hit is kept in the budget ([`Budget::over`]).
    pub fn new<L: Read + Seek>(
        inner: R,
        list: L,
        budget: SharedBudget,
    ) -> Result<Self, calamine::XlsxError> {
        let mut archive = zip::ZipArchive::new(list)?;
        let mut members: FxHashMap<u64, Member> = FxHashMap::default();
        let cap = budget.borrow().member_cap();
        for i in 0..archive.len() {
            let file = archive.by_index_raw(i)?;
            let name = file.name().map(|n| n.into_owned()).unwrap_or_default();
            let (size, start) = (file.size(), file.data_start());
            drop(file);
            if is_shared_strings(&name) && size <= cap {
                let declared = declared_strings(archive.by_index(i)?);
                let bytes = declared.saturating_mul(std::mem::size_of::<String>() as u64);
                budget
                    .borrow_mut()
                    .charge(bytes, || {
                        format!("{name:?} declaring {declared} shared strings")
                    })
                    .map_err(|e| calamine::XlsxError::Io(io::Error::other(e)))?;
            }
            let Some(start) = start else { continue };
            let entry = members.entry(start).or_insert(Member {
                name: String::new(),
                size: 0,
            });
            if size >= entry.size {
                *entry = Member { name, size };
            }
        }
        Ok(Metered {
            inner,
            members,
            budget,
        })
    }
}

impl<R> Metered<R> {
    /// Charges the member whose data starts at `at`, if one does.
    fn charge(&mut self, at: u64) -> io::Result<()> {
        let Some(m) = self.members.get(&at) else {
            return Ok(());
        };
        let mut budget = self.budget.borrow_mut();
        let cap = budget.member_cap();
        let result = if m.size > cap {
            let problem = format!(
                "{:?} inflates to {}, more than one workbook part may ({}; \
                 raise the limit with {MAX_XLSX_ENV})",
                m.name,
                mib(usize::try_from(m.size).unwrap_or(usize::MAX)),
                mib(usize::try_from(cap).unwrap_or(usize::MAX)),
            );
            Err(budget.fail(problem))
        } else {
            budget.charge(m.size, || format!("inflating {:?}", m.name))
        };
        result.map_err(io::Error::other)
    }
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.inner.read(out)
    }
}

impl<R: Seek> Seek for Metered<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let at = self.inner.seek(pos)?;
        self.charge(at)?;
        Ok(at)
    }
}

/// Whether zip member `name` may be read as a shared-string table (the
/// workbook reader finds it by a case-insensitive name in the workbook's
/// folder).
fn is_shared_strings(name: &str) -> bool {
    name.replace('\\', "/")
        .to_ascii_lowercase()
        .ends_with("sharedstrings.xml")
}

/// The largest number of entries a shared-string table declares in any
/// `uniqueCount` attribute (the workbook reader reserves room for that many
/// strings before reading one): the digits of every quoted value following
/// `uniqueCount` and `=`, wherever in the member, saturating.
fn declared_strings(mut member: impl Read) -> u64 {
    const KEY: &[u8] = b"uniqueCount";
    #[derive(Clone, Copy)]
    enum State {
        /// `k` bytes of the key matched.
        Key(usize),
        /// After the key, before `=`.
        Eq,
        /// After `=`, before the quote.
        Quote,
        /// In the value, closed by this quote.
        Value(u8),
    }
    let (mut state, mut value, mut most) = (State::Key(0), 0u64, 0u64);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match member.read(&mut buf) {
            Ok(0) | Err(_) => return most,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            state = match state {
                State::Key(k) if b == KEY[k] => {
                    if k + 1 == KEY.len() {
                        State::Eq
                    } else {
                        State::Key(k + 1)
                    }
                }
                State::Key(_) => State::Key(usize::from(b == KEY[0])),
                State::Eq if b.is_ascii_whitespace() => State::Eq,
                State::Eq if b == b'=' => State::Quote,
                State::Quote if b.is_ascii_whitespace() => State::Quote,
                State::Quote if b == b'"' || b == b'\'' => {
                    value = 0;
                    State::Value(b)
                }
                State::Value(q) if b == q => {
                    most = most.max(value);
                    State::Key(0)
                }
                State::Value(q) => {
                    if b.is_ascii_digit() {
                        value = value.saturating_mul(10).saturating_add(u64::from(b - b'0'));
                    }
                    State::Value(q)
                }
                _ => State::Key(usize::from(b == KEY[0])),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_strings_finds_every_unique_count() {
        let count = |s: &str| declared_strings(s.as_bytes());
        assert_eq!(count(r#"<sst count="9" uniqueCount="7">"#), 7);
        assert_eq!(count("<sst uniqueCount = '12' >"), 12);
        assert_eq!(count(r#"<!-- uniqueCount="5" --><sst uniqueCount="3">"#), 5);
        assert_eq!(count(r#"<sst uniqueCountuniqueCount="4">"#), 4);
        assert_eq!(
            count(r#"<sst uniqueCount="99999999999999999999999">"#),
            u64::MAX
        );
        assert_eq!(count("<sst count=\"4\">"), 0);
        assert!(is_shared_strings("xl/SharedStrings.XML"));
        assert!(!is_shared_strings("xl/styles.xml"));
    }
}
