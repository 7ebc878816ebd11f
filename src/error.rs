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
    /// The path names a FIFO, device or socket: reading it could block
    /// forever (stdin is `-`).
    #[error("not a regular file (a FIFO?); pipe it through - instead")]
    NotRegular,
    /// The input has no bytes.
    #[error("empty file")]
    Empty,
    /// The input exceeds a size limit (a JSON value over
    /// `TRACELENS_MAX_VALUE_MB`, a zip archive on stdin over
    /// `TRACELENS_MAX_STDIN_ZIP_MB`), or memory ran out holding it; the
    /// text says which limit and how to raise it.
    #[error("{0}")]
    Limit(String),
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
    /// The zip library could not read back or write a workbook's parts.
    #[error(transparent)]
    Zip(#[from] zip::result::ZipError),
    /// The Parquet library refused the content.
    #[error(transparent)]
    Parquet(#[from] parquet::errors::ParquetError),
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
    /// CSV text that is not UTF-8 (pandas refuses it too).
    #[error("not UTF-8 text (invalid byte at offset {0})")]
    NotUtf8(usize),
    /// CSV text ending inside a quoted field.
    #[error("a quoted field is never closed (the file was cut, or a quote is stray)")]
    UnterminatedQuote,
    /// CSV text whose last line has no line break: the file was cut.
    #[error("truncated: the last line has no line break")]
    Truncated,
    /// A worksheet whose used range is far larger than its cells.
    #[error("{}: sheet {sheet:?}: {problem}", .path.display())]
    SparseSheet {
        /// The file.
        path: PathBuf,
        /// The worksheet's name.
        sheet: String,
        /// What is wrong.
        problem: String,
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
    /// A workbook whose reading would inflate or hold more than its limits
    /// allow; the text says which limit, and how to raise it.
    #[error("{}: {problem}", .path.display())]
    WorkbookLimit {
        /// The file.
        path: PathBuf,
        /// Which limit, and where it was hit.
        problem: String,
    },
    /// A file that is not a readable workbook.
    #[error("{}: not a readable workbook: {error}", .path.display())]
    Workbook {
        /// The file.
        path: PathBuf,
        /// Why the workbook reader refused it.
        error: calamine::XlsxError,
    },
    /// A Parquet file that cannot be read.
    #[error("{}: not a readable Parquet file: {error}", .path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// Why the Parquet reader refused it.
        error: String,
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

/// Why a library call ([`crate::api`]) failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A trace could not be loaded.
    #[error("{}: {error}", .path.display())]
    Load {
        /// The trace file (`-` for stdin).
        path: PathBuf,
        /// Why.
        error: LoadError,
    },
    /// A GPU spec name that is neither bundled nor a readable spec file.
    #[error("--gpu-arch: {0}")]
    GpuArch(String),
    /// A report could not be read back.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The rank traces of a job could not be found or matched to ranks.
    #[error(transparent)]
    Ranks(#[from] RankError),
    /// The inputs of a comparison could not be read.
    #[error(transparent)]
    Compare(#[from] CompareInputError),
    /// A roofline query the models cannot answer.
    #[error(transparent)]
    Roofline(#[from] RooflineError),
    /// The multi-rank collective analysis refused the ranks' traces.
    #[error("{0}")]
    Collectives(String),
    /// Two traces could not be diffed (`tracelens diff`).
    #[error("{0}")]
    Diff(String),
    /// Fleet: summaries that cannot be found, read or merged.
    #[error("{0}")]
    Fleet(String),
    /// Replay: an op selection that finds nothing to replay.
    #[error("{0}")]
    Replay(String),
    /// A sheet of the report would have more rows than the output format
    /// holds (Excel); found right after loading, before the analysis.
    #[error(
        "{}: sheet {sheet} would have {rows} rows, more than an Excel worksheet holds \
         ({limit}); write the sheets as CSV (--csv DIR) instead of xlsx",
        .path.display()
    )]
    TooManyRows {
        /// The trace.
        path: PathBuf,
        /// The sheet.
        sheet: &'static str,
        /// Its rows.
        rows: usize,
        /// The most data rows the format holds.
        limit: usize,
    },
    /// The capture folder could not be read or merged (`--capture-dir`).
    #[error("--capture-dir {}: {msg}", .dir.display())]
    Capture {
        /// The capture folder.
        dir: PathBuf,
        /// What went wrong, naming the file when one is at fault.
        msg: String,
    },
}

/// The world size of a multi-rank job and where it came from, as the
/// error messages of [`RankError`] name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum World {
    /// `--world-size N`.
    Given(i64),
    /// `distributedInfo.world_size` of the trace at `path`.
    Traced {
        /// The world size.
        size: i64,
        /// The first trace that carries it.
        path: PathBuf,
    },
    /// The number of rank traces found (no trace carries a world size).
    Counted(i64),
}

impl World {
    /// The number of ranks.
    pub fn size(&self) -> i64 {
        match self {
            World::Given(n) | World::Counted(n) => *n,
            World::Traced { size, .. } => *size,
        }
    }
}

impl std::fmt::Display for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            World::Given(n) => write!(f, "--world-size is {n}"),
            World::Traced { size, path } => {
                write!(f, "{} says world_size {size}", path.display())
            }
            World::Counted(n) => write!(f, "{n} rank traces were found"),
        }
    }
}

/// Why the traces of a multi-rank job could not be found or assigned to
/// ranks. The option names are those of `tracelens collectives`.
#[derive(Debug, thiserror::Error)]
pub enum RankError {
    /// The trace directory is not a directory.
    #[error("--trace-dir {}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// The rank pattern does not compile.
    #[error("--rank-regex: invalid pattern {pattern:?}: {why}")]
    BadPattern {
        /// The pattern.
        pattern: String,
        /// The compiler's reason.
        why: String,
    },
    /// The rank pattern has no group to read the rank from.
    #[error("--rank-regex {0:?} has no group for the rank: write it like 'step3_(?P<rank>\\d+)'")]
    PatternWithoutGroup(String),
    /// A directory could not be listed.
    #[error("cannot list {}", .dir.display())]
    List {
        /// The directory.
        dir: PathBuf,
        /// The failure.
        #[source]
        source: io::Error,
    },
    /// A directory entry whose type could not be read.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// No `.json` / `.json.gz` files in the directory.
    #[error("no trace files (.json, .json.gz) in {}{}", .dir.display(),
        if *.subdirs { " (use --recursive to look in its subdirectories)" } else { "" })]
    NoTraces {
        /// The directory.
        dir: PathBuf,
        /// True when it has subdirectories that were not searched.
        subdirs: bool,
    },
    /// The rank pattern matches none of the files.
    #[error("none of the {count} trace files in {} matches --rank-regex (e.g. {example})", .dir.display())]
    NoneMatch {
        /// Trace files found.
        count: usize,
        /// The directory.
        dir: PathBuf,
        /// One of the files.
        example: String,
    },
    /// A trace of another job.
    #[error("{}: the trace says world_size {trace} (distributedInfo) but {given}: a trace from another job?", .path.display())]
    WorldSize {
        /// The trace file.
        path: PathBuf,
        /// The trace's world size.
        trace: i64,
        /// The world size of the run.
        given: World,
    },
    /// A trace whose rank neither its content nor its name tells.
    #[error("{}: cannot tell its rank: no distributedInfo.rank in the trace and no rank in the name (like rank3, rank_3, worker3); use --rank-regex", .0.display())]
    UnknownRank(PathBuf),
    /// A rank outside `0..world_size`.
    #[error("{}: rank {rank} is outside ranks 0..{} ({world})", .path.display(), .world.size() - 1)]
    OutOfRange {
        /// The trace file.
        path: PathBuf,
        /// Its rank.
        rank: i64,
        /// The world size.
        world: World,
    },
    /// Two traces claim one rank.
    #[error("rank {rank} has two traces: {} and {} (move one away or use --rank-regex)", .first.display(), .second.display())]
    Duplicate {
        /// The rank.
        rank: i64,
        /// The first trace for it.
        first: PathBuf,
        /// The second.
        second: PathBuf,
    },
    /// No world size given, none in the traces and no trace found.
    #[error("{}: cannot tell the world size: no file is a rank trace; use --world-size N", .0.display())]
    NoWorldSize(PathBuf),
    /// Ranks without a trace.
    #[error("no trace for rank{} {}{} in {} ({world})",
        if *.count > 1 { "s" } else { "" }, .first.join(", "),
        if *.count > 8 { format!(" and {} more", .count - 8) } else { String::new() },
        .dir.display())]
    Missing {
        /// The first (at most eight) missing ranks.
        first: Vec<String>,
        /// How many are missing.
        count: i64,
        /// The world size.
        world: World,
        /// The directory.
        dir: PathBuf,
    },
}

/// Why the inputs of a comparison could not be read. The option names are
/// those of `tracelens compare`.
#[derive(Debug, thiserror::Error)]
pub enum CompareInputError {
    /// An input that cannot be looked at.
    #[error("{}: {}", .path.display(), stat_text(.error))]
    Stat {
        /// The input.
        path: PathBuf,
        /// The failure (its text is part of this message).
        error: io::Error,
    },
    /// Not one tag per input.
    #[error("--names gives {names} names for {inputs} inputs")]
    TagCount {
        /// Tags given.
        names: usize,
        /// Inputs given.
        inputs: usize,
    },
    /// Two inputs with one tag.
    #[error("--names must be unique (\"{0}\" repeats)")]
    TagRepeats(String),
    /// More than one input on stdin.
    #[error("only one input can be read from stdin (-)")]
    StdinTwice,
    /// An input that cannot be used, named by its role: `baseline` or
    /// `variant N`; the message names the file and the problem.
    #[error("{role} {msg}")]
    Unusable {
        /// `baseline` or `variant N` (1-based).
        role: String,
        /// The file and the problem.
        msg: String,
    },
    /// A report whose sheets compare cannot trust: the file, then the
    /// problem.
    #[error("{0}")]
    BadSheet(String),
    /// A bug: an input's reader panicked.
    #[error("internal error while reading an input")]
    Internal,
}

/// `e` and its sources, joined by `: `.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// `stat` failures as `compare` words them.
fn stat_text(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_string(),
        _ => e.to_string(),
    }
}

/// Why a roofline query has no answer. The option names are those of
/// `tracelens roofline`.
#[derive(Debug, thiserror::Error)]
pub enum RooflineError {
    /// An unknown data type name.
    #[error("--dtype: unknown \"{given}\" (known: {known})")]
    UnknownDtype {
        /// The name given.
        given: String,
        /// The names known.
        known: &'static str,
    },
    /// A size that must be positive.
    #[error("--{what} must be positive, got {value}")]
    NotPositive {
        /// The option.
        what: &'static str,
        /// Its value.
        value: i64,
    },
    /// Convolution shapes of the wrong rank.
    #[error("--input needs 3 to 5 dimensions (N,C,spatial…) and --weight as many")]
    ConvRank,
    /// The model refuses the shapes; the text is the model's reason.
    #[error("the model rejects these shapes: {0}")]
    Model(String),
    /// A measured time that is not positive.
    #[error("--time-us must be positive")]
    TimeNotPositive,
}
