//! Typed errors of the library (the binary alone uses untyped errors).
//!
//! Every message is one line. An error either puts its cause in its own
//! message or returns it from `source()`, never both, so a printer that
//! walks the chain (`message: cause: cause`, as the binary prints) shows
//! each cause once.

use std::io;
use std::path::PathBuf;

/// Why a trace could not be loaded. The message never includes the path;
/// callers add it.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The input could not be opened or read.
    #[error("{}", io_text(.0))]
    Io(#[source] io::Error),
    /// The path names a directory.
    #[error("is a directory, not a trace file")]
    IsDirectory,
    /// The input has no bytes.
    #[error("empty file")]
    Empty,
    /// A zip archive that cannot be read, or holds no trace.
    #[error("{0}")]
    Zip(String),
    /// Reading failed part way (truncated or corrupt compressed data).
    #[error("{what}: {source}")]
    Read {
        /// What was being read, e.g. "truncated or corrupt gzip data".
        what: &'static str,
        /// The failure.
        source: io::Error,
    },
    /// The bytes are not well-formed for the format; the text says where and why.
    #[error("{0}")]
    Syntax(String),
    /// Valid syntax, but not a trace (e.g. a JSON object without
    /// `traceEvents`): a file a directory scan may skip.
    #[error("{0}")]
    NotATrace(String),
    /// A trace whose content is invalid (a bad event, a negative duration).
    #[error("invalid trace: {0}")]
    Invalid(String),
    /// A trace without events.
    #[error("the trace has no events (\"traceEvents\" is empty)")]
    NoEvents,
    /// A bug: a loader thread panicked.
    #[error("internal error: the parser thread panicked")]
    Internal,
}

fn io_text(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// Why output could not be rendered or written (staging and the `report` writers).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file or directory could not be created, written or moved; the
    /// message says which.
    #[error("{what}")]
    Io {
        /// What failed, naming the path.
        what: String,
        /// The failure.
        #[source]
        source: io::Error,
    },
    /// The workbook library refused the content.
    #[error(transparent)]
    Xlsx(#[from] rust_xlsxwriter::XlsxError),
    /// A row or column number past what the format can address.
    #[error(transparent)]
    Limit(#[from] std::num::TryFromIntError),
    /// Content that cannot be written as asked (past Excel's limits, two
    /// sheets for one file, a chart without its data).
    #[error("{0}")]
    Invalid(String),
    /// Where inside a file the error happened (a sheet, a chart).
    #[error("{what}")]
    In {
        /// The place, e.g. `sheet "ops_summary" of r.xlsx`.
        what: String,
        /// The failure there.
        #[source]
        source: Box<WriteError>,
    },
}

impl WriteError {
    /// An I/O failure while doing `what`.
    pub fn io(what: impl Into<String>) -> impl FnOnce(io::Error) -> WriteError {
        let what = what.into();
        move |source| WriteError::Io { what, source }
    }

    /// This error, placed at `what`.
    pub fn at(self, what: impl Into<String>) -> WriteError {
        WriteError::In {
            what: what.into(),
            source: Box::new(self),
        }
    }
}

/// Why a report (CSV folder or xlsx workbook) could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A file or folder could not be read.
    #[error("cannot read {}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The failure.
        #[source]
        source: io::Error,
    },
    /// The CSV reader refused the text.
    #[error("not a valid CSV file: {0}")]
    Csv(csv::Error),
    /// A CSV record wider than the header.
    #[error("line {line} has {fields} fields, the header has {header}")]
    Width {
        /// 1-based line of the record.
        line: u64,
        /// Fields of the record.
        fields: usize,
        /// Fields of the header.
        header: usize,
    },
    /// An error in the file `path`.
    #[error("{}", .path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: Box<ReadError>,
    },
    /// A file that is not a readable workbook.
    #[error("{}: not a readable workbook: {error}", .path.display())]
    Workbook {
        /// The file.
        path: PathBuf,
        /// Why the workbook reader refused it.
        error: calamine::XlsxError,
    },
    /// A folder without per-sheet CSVs.
    #[error("{}: not a report: the folder holds no <sheet>.csv files", .0.display())]
    NotAReport(PathBuf),
    /// A worksheet that cannot be read.
    #[error("{}: sheet {sheet:?}: {error}", .path.display())]
    Sheet {
        /// The file.
        path: PathBuf,
        /// The worksheet's name.
        sheet: String,
        /// Why the workbook reader refused it.
        error: calamine::XlsxError,
    },
}

impl ReadError {
    /// An I/O failure reading `path`.
    pub fn io(path: &std::path::Path) -> impl FnOnce(io::Error) -> ReadError {
        let path = path.to_path_buf();
        move |source| ReadError::Io { path, source }
    }
}
