//! Typed errors of the library (the binary alone uses untyped errors).
//!
//! Every message is one line. An error either puts its cause in its own
//! message or returns it from `source()`, never both, so a printer that
//! walks the chain (`message: cause: cause`, as the binary prints) shows
//! each cause once.

use std::io;
use std::path::PathBuf;

use crate::quote::quoted;

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
    #[error("cannot read {}", quoted(&.path))]
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
    #[error("{}: sheet {sheet:?}: {problem}", quoted(&.path))]
    SparseSheet {
        /// The file.
        path: PathBuf,
        /// The worksheet's name.
        sheet: String,
        /// What is wrong.
        problem: String,
    },
    /// An error in the file `path`.
    #[error("{}", quoted(&.path))]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: Box<ReadError>,
    },
    /// A workbook whose reading would inflate or hold more than its limits
    /// allow; the text says which limit, and how to raise it.
    #[error("{}: {problem}", quoted(&.path))]
    WorkbookLimit {
        /// The file.
        path: PathBuf,
        /// Which limit, and where it was hit.
        problem: String,
    },
    /// A file that is not a readable workbook.
    #[error("{}: not a readable workbook: {error}", quoted(&.path))]
    Workbook {
        /// The file.
        path: PathBuf,
        /// Why the workbook reader refused it.
        error: calamine::XlsxError,
    },
    /// A Parquet file that cannot be read.
    #[error("{}: not a readable Parquet file: {error}", quoted(&.path))]
    Parquet {
        /// The file.
        path: PathBuf,
        /// Why the Parquet reader refused it.
        error: String,
    },
    /// A folder without per-sheet CSVs.
    #[error("{}: not a report: the folder holds no <sheet>.csv files", quoted(&.0))]
    NotAReport(PathBuf),
    /// A worksheet that cannot be read.
    #[error("{}: sheet {sheet:?}: {error}", quoted(&.path))]
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
    #[error("{}: {error}", quoted(&.path))]
    Load {
        /// The trace file (`-` for stdin).
        path: PathBuf,
        /// Why.
        error: LoadError,
    },
    /// A GPU spec name that is neither bundled nor a readable spec file
    /// (the command line prints its flag first).
    #[error("{0}")]
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
    #[error(transparent)]
    Collectives(#[from] CollectivesError),
    /// Two traces could not be diffed.
    #[error(transparent)]
    Diff(#[from] DiffInputError),
    /// Trace summaries that cannot be found, read or merged.
    #[error(transparent)]
    Fleet(#[from] FleetError),
    /// An op selection that finds nothing to replay.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A sheet of the report would have more rows than the output format
    /// holds (Excel); found right after loading, before the analysis.
    #[error(
        "{}: sheet {sheet} would have {rows} rows, more than an Excel worksheet holds \
         ({limit})",
        quoted(&.path)
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
    /// Output paths that would overwrite or remove an input, or each
    /// other (checked before any work).
    #[error(transparent)]
    OutputPath(#[from] OutputPathError),
    /// A setting out of its range (a NaN threshold).
    /// The critical path could not be found.
    #[error(transparent)]
    CriticalPath(#[from] crate::analysis::pytorch::critical_path::Failure),
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// Traces that could not be merged into one timeline.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// A trace that could not be split.
    #[error(transparent)]
    Split(#[from] SplitError),
    /// An output file that could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The capture folder could not be read or merged.
    #[error("{}: {msg}", quoted(&.dir))]
    Capture {
        /// The capture folder.
        dir: PathBuf,
        /// What went wrong, naming the file when one is at fault.
        msg: String,
    },
}

/// Why traces could not be merged (a trace that cannot be read is an
/// [`Error::Load`] naming it).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No trace was given.
    #[error("no traces to merge")]
    NoTraces,
    /// The merged trace could not be written.
    #[error("cannot write the merged trace")]
    Write(#[source] io::Error),
    /// Clocks to align, but a trace records no clock base.
    #[error(
        "{}: --align-clock: the trace records no baseTimeNanoseconds, so its clock cannot be \
         aligned with rank 0's",
        quoted(.0)
    )]
    NoClock(PathBuf),
}

/// Why a trace could not be split (a trace that cannot be read is an
/// [`Error::Load`] naming it).
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// No roots, or no window, to write: nothing was written.
    #[error("{}: {why}; nothing written", quoted(.path))]
    NothingFound {
        /// The trace.
        path: PathBuf,
        /// What was (not) found.
        why: String,
    },
    /// An iteration range that names no iteration.
    #[error("-i {given}: {why}")]
    Range {
        /// The range as given.
        given: String,
        /// Why it names nothing.
        why: String,
    },
    /// A setting out of its range.
    #[error("{0}")]
    Setting(String),
}

/// Why the collective analysis refused the ranks' traces: its reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CollectivesError(pub String);

/// Why two traces could not be diffed.
#[derive(Debug, thiserror::Error)]
pub enum DiffInputError {
    /// Both traces named as stdin.
    #[error("stdin (-) can be only one of the two traces")]
    BothStdin,
    /// A trace without CPU ops to align.
    #[error(
        "{}: no CPU ops (cpu_op events) to align; diff needs traces recorded with the \
         PyTorch profiler's CPU activity",
        quoted(&.0)
    )]
    NoCpuOps(PathBuf),
    /// A JAX profile: no PyTorch call tree.
    #[error("{}: a JAX profile; diff compares PyTorch (Kineto) call trees", quoted(&.0))]
    Jax(PathBuf),
    /// A rocprofv3 trace: no CPU call tree.
    #[error(
        "{}: a rocprofv3 trace has no CPU call tree; diff compares PyTorch (Kineto) call trees",
        quoted(&.0)
    )]
    Rocprof(PathBuf),
    /// A rocprofv3 Perfetto trace: no CPU call tree.
    #[error(
        "{}: a rocprofv3 Perfetto trace has no CPU call tree; diff compares PyTorch (Kineto) call trees",
        quoted(&.0)
    )]
    Perfetto(PathBuf),
    /// The merged tree nests deeper than the limit.
    #[error("the call trees nest deeper than {0} levels")]
    TooDeep(usize),
}

/// Why an op selection finds nothing to replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// No op of that name launches GPU work.
    #[error(
        "{}: no op named {op} launches GPU work (names as in ops_unique_args, e.g. aten::addmm)",
        quoted(&.path)
    )]
    NoSuchOp {
        /// The trace.
        path: PathBuf,
        /// The op name asked for.
        op: String,
    },
    /// A uid that is not a cpu_op of the trace.
    #[error(
        "{}: uid {uid} is not a cpu_op of this trace (use a UID or ex_UID of the report's sheets)",
        quoted(&.path)
    )]
    NotACpuOp {
        /// The trace.
        path: PathBuf,
        /// The uid asked for.
        uid: usize,
    },
}

/// Why trace summaries cannot be found, read or merged. Messages say what
/// is wrong; how to write summaries is the caller's to add (the command
/// line names `tracelens summarize`).
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The summaries path is not a folder.
    #[error("{}: not a folder of summaries", quoted(&.0))]
    NotAFolder(PathBuf),
    /// A folder that could not be listed; the failure is part of the text.
    #[error("{}: cannot list: {error}", quoted(&.dir))]
    List {
        /// The folder.
        dir: PathBuf,
        /// The failure.
        error: io::Error,
    },
    /// A folder without summary folders.
    #[error("{}: no summaries (folders with {marker})", quoted(&.dir))]
    NoSummaries {
        /// The folder.
        dir: PathBuf,
        /// The file that marks a summary folder.
        marker: &'static str,
    },
    /// A summary folder without its marker table.
    #[error("{}: no {marker}", quoted(&.dir))]
    NoInfo {
        /// The summary folder.
        dir: PathBuf,
        /// The marker table's file name.
        marker: &'static str,
    },
    /// A marker table that is not one row.
    #[error("{}: {marker} has {rows} rows, not 1", quoted(&.dir))]
    InfoRows {
        /// The summary folder.
        dir: PathBuf,
        /// The marker table's file name.
        marker: &'static str,
        /// Its rows.
        rows: usize,
    },
    /// A summary table without a column it must have.
    #[error("{}: {table}.parquet has no column {column:?} (not a tracelens summary?)", quoted(&.dir))]
    NoColumn {
        /// The summary folder.
        dir: PathBuf,
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// A collective argument cell that is not JSON text.
    #[error("{}: collectives.parquet: {column} is not JSON: {text:?}", quoted(&.dir))]
    NotJson {
        /// The summary folder.
        dir: PathBuf,
        /// The column.
        column: &'static str,
        /// The cell's text.
        text: String,
    },
    /// Summaries without profiler steps cannot be compared.
    #[error("cannot compare: {} has no profiler steps (ProfilerStep#N ranges)", quoted(&.0))]
    NoSteps(PathBuf),
    /// A summary's health or findings table that cannot be read back.
    #[error("{}: {why}", quoted(&.dir))]
    Diagnosis {
        /// The summary folder.
        dir: PathBuf,
        /// What is wrong with it.
        why: String,
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

impl World {
    /// The world size and where it came from, `name` spelling the setting.
    fn text(&self, name: Namer) -> String {
        match self {
            World::Given(n) => format!("{} is {n}", name("world_size")),
            World::Traced { size, path } => {
                format!("{} says world_size {size}", quoted(path))
            }
            World::Counted(n) => format!("{n} rank traces were found"),
        }
    }
}

impl std::fmt::Display for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(&field))
    }
}

/// How a message spells the setting whose library name (the field of
/// the options struct, e.g. `rank_regex`) it is given: [`field`] in the
/// library's own messages; the command line spells its flag instead.
pub type Namer<'a> = &'a dyn Fn(&str) -> String;

/// A setting named as its field: `rank_regex`.
pub fn field(name: &str) -> String {
    name.to_string()
}

/// Why the traces of a multi-rank job could not be found or assigned to
/// ranks. Messages name the settings of [`crate::CollectivesOptions`] by
/// their field (`rank_regex`); [`RankError::text`] spells them as a caller
/// does (the command line: `--rank-regex`).
#[derive(Debug)]
pub enum RankError {
    /// The trace directory is not a directory.
    NotADirectory(PathBuf),
    /// The rank pattern does not compile.
    BadPattern {
        /// The pattern.
        pattern: String,
        /// The compiler's reason.
        why: String,
    },
    /// The rank pattern has no group to read the rank from.
    PatternWithoutGroup(String),
    /// A directory could not be listed.
    List {
        /// The directory.
        dir: PathBuf,
        /// The failure.
        source: io::Error,
    },
    /// A directory entry whose type could not be read.
    Io(io::Error),
    /// No `.json` / `.json.gz` files in the directory.
    NoTraces {
        /// The directory.
        dir: PathBuf,
        /// True when it has subdirectories that were not searched.
        subdirs: bool,
    },
    /// The rank pattern matches none of the files.
    NoneMatch {
        /// Trace files found.
        count: usize,
        /// The directory.
        dir: PathBuf,
        /// One of the files.
        example: String,
    },
    /// A trace of another job.
    WorldSize {
        /// The trace file.
        path: PathBuf,
        /// The trace's world size.
        trace: i64,
        /// The world size of the run.
        given: World,
    },
    /// A trace whose rank neither its content nor its name tells.
    UnknownRank(PathBuf),
    /// A rank outside `0..world_size`.
    OutOfRange {
        /// The trace file.
        path: PathBuf,
        /// Its rank.
        rank: i64,
        /// The world size.
        world: World,
    },
    /// Two traces claim one rank.
    Duplicate {
        /// The rank.
        rank: i64,
        /// The first trace for it.
        first: PathBuf,
        /// The second.
        second: PathBuf,
    },
    /// No world size given, none in the traces and no trace found.
    NoWorldSize(PathBuf),
    /// Ranks without a trace.
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

impl RankError {
    /// The message, `name` spelling the settings it names.
    pub fn text(&self, name: Namer) -> String {
        let (trace_dir, rank_regex) = (name("trace_dir"), name("rank_regex"));
        match self {
            RankError::NotADirectory(d) => {
                format!("{} {}: not a directory", trace_dir, quoted(d))
            }
            RankError::BadPattern { pattern, why } => {
                format!("{}: invalid pattern {pattern:?}: {why}", rank_regex)
            }
            RankError::PatternWithoutGroup(p) => format!(
                "{} {p:?} has no group for the rank: write it like 'step3_(?P<rank>\\d+)'",
                rank_regex
            ),
            RankError::List { dir, .. } => format!("cannot list {}", quoted(dir)),
            RankError::Io(e) => e.to_string(),
            RankError::NoTraces { dir, subdirs } => {
                let hint = match subdirs {
                    true => format!(" (use {} to look in its subdirectories)", name("recursive")),
                    false => String::new(),
                };
                format!("no trace files (.json, .json.gz) in {}{hint}", quoted(dir))
            }
            RankError::NoneMatch {
                count,
                dir,
                example,
            } => format!(
                "none of the {count} trace files in {} matches {} (e.g. {example})",
                quoted(dir),
                rank_regex
            ),
            RankError::WorldSize { path, trace, given } => format!(
                "{}: the trace says world_size {trace} (distributedInfo) but {}: a trace from another job?",
                quoted(path),
                given.text(name)
            ),
            RankError::UnknownRank(p) => format!(
                "{}: cannot tell its rank: no distributedInfo.rank in the trace and no rank in the name (like rank3, rank_3, worker3); use {}",
                quoted(p),
                rank_regex
            ),
            RankError::OutOfRange { path, rank, world } => format!(
                "{}: rank {rank} is outside ranks 0..{} ({})",
                quoted(path),
                world.size() - 1,
                world.text(name)
            ),
            RankError::Duplicate {
                rank,
                first,
                second,
            } => format!(
                "rank {rank} has two traces: {} and {} (move one away or use {})",
                quoted(first),
                quoted(second),
                rank_regex
            ),
            RankError::NoWorldSize(d) => format!(
                "{}: cannot tell the world size: no file is a rank trace; use {} N",
                quoted(d),
                name("world_size")
            ),
            RankError::Missing {
                first,
                count,
                world,
                dir,
            } => format!(
                "no trace for {} in {} ({})",
                missing_ranks(first, *count),
                quoted(dir),
                world.text(name)
            ),
        }
    }
}

/// The ranks without a trace as a message names them: `rank 3`, or
/// `ranks 3, 5, … and N more` past the first eight.
fn missing_ranks(first: &[String], count: i64) -> String {
    format!(
        "rank{} {}{}",
        if count > 1 { "s" } else { "" },
        first.join(", "),
        if count > 8 {
            format!(" and {} more", count - 8)
        } else {
            String::new()
        }
    )
}

impl std::fmt::Display for RankError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(&field))
    }
}

impl std::error::Error for RankError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RankError::List { source, .. } => Some(source),
            // The I/O error is this error's message: its cause is its own.
            RankError::Io(e) => e.source(),
            _ => None,
        }
    }
}

impl From<io::Error> for RankError {
    fn from(e: io::Error) -> RankError {
        RankError::Io(e)
    }
}

/// Why the inputs of a comparison could not be read. Messages name the
/// tags by their argument (`names`); [`CompareInputError::text`] spells it
/// as a caller does (the command line: `--names`).
#[derive(Debug)]
pub enum CompareInputError {
    /// An input that cannot be looked at.
    Stat {
        /// The input.
        path: PathBuf,
        /// The failure (its text is part of this message).
        error: io::Error,
    },
    /// Not one tag per input.
    TagCount {
        /// Tags given.
        names: usize,
        /// Inputs given.
        inputs: usize,
    },
    /// Two inputs with one tag.
    TagRepeats(String),
    /// More than one input on stdin.
    StdinTwice,
    /// An input that cannot be used, named by its role: `baseline` or
    /// `variant N`; the message names the file and the problem.
    Unusable {
        /// `baseline` or `variant N` (1-based).
        role: String,
        /// The file and the problem.
        msg: String,
    },
    /// A report whose sheets compare cannot trust: the file, then the
    /// problem.
    BadSheet(String),
    /// A bug: an input's reader panicked.
    Internal,
}

impl CompareInputError {
    /// The message, `name` spelling the settings it names.
    pub fn text(&self, name: Namer) -> String {
        match self {
            CompareInputError::Stat { path, error } => {
                format!("{}: {}", quoted(path), stat_text(error))
            }
            CompareInputError::TagCount { names, inputs } => {
                format!("{} gives {names} names for {inputs} inputs", name("names"))
            }
            CompareInputError::TagRepeats(t) => {
                format!("{} must be unique (\"{t}\" repeats)", name("names"))
            }
            CompareInputError::StdinTwice => "only one input can be read from stdin (-)".into(),
            CompareInputError::Unusable { role, msg } => format!("{role} {msg}"),
            CompareInputError::BadSheet(msg) => msg.clone(),
            CompareInputError::Internal => "internal error while reading an input".into(),
        }
    }
}

impl std::fmt::Display for CompareInputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(&field))
    }
}

impl std::error::Error for CompareInputError {}

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

/// Why a roofline query has no answer. Messages name the settings of
/// [`crate::RooflineQuery`] and its operation by their field (`seq_q`);
/// [`RooflineError::text`] spells them as a caller does (the command
/// line: `--seq-q`).
#[derive(Debug)]
pub enum RooflineError {
    /// An unknown data type name.
    UnknownDtype {
        /// The name given.
        given: String,
        /// The names known.
        known: &'static str,
    },
    /// A size that must be positive.
    NotPositive {
        /// The option.
        what: &'static str,
        /// Its value.
        value: i64,
    },
    /// Convolution shapes of the wrong rank.
    ConvRank,
    /// The model refuses the shapes; the text is the model's reason.
    Model(String),
    /// A measured time that is not positive.
    TimeNotPositive,
}

impl RooflineError {
    /// The message, `name` spelling the settings it names.
    pub fn text(&self, name: Namer) -> String {
        match self {
            RooflineError::UnknownDtype { given, known } => {
                format!("{}: unknown \"{given}\" (known: {known})", name("dtype"))
            }
            RooflineError::NotPositive { what, value } => {
                format!("{} must be positive, got {value}", name(what))
            }
            RooflineError::ConvRank => format!(
                "{} needs 3 to 5 dimensions (N,C,spatial…) and {} as many",
                name("input"),
                name("weight")
            ),
            RooflineError::Model(why) => format!("the model rejects these shapes: {why}"),
            RooflineError::TimeNotPositive => format!("{} must be positive", name("time_us")),
        }
    }
}

impl std::fmt::Display for RooflineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(&field))
    }
}

impl std::error::Error for RooflineError {}

/// Why the output paths of a run were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputPathError {
    /// An output is an input (or, through links, the same file or folder).
    IsInput {
        /// The output's path.
        path: PathBuf,
        /// Its setting.
        setting: String,
    },
    /// An input lies directly in an output folder that would remove or
    /// overwrite it.
    InOutputDir {
        /// The input.
        input: PathBuf,
        /// The setting of the folder.
        setting: String,
        /// The folder.
        dir: PathBuf,
    },
    /// An output lies in (or is) an input folder whose files of an
    /// extension it writes or replaces are read.
    InInputDir {
        /// The output (a folder, or a file).
        dir: PathBuf,
        /// Its setting.
        setting: String,
        /// The input folder.
        input: PathBuf,
        /// The extension.
        ext: &'static str,
    },
    /// Two outputs on one path.
    Clash {
        /// The path.
        path: PathBuf,
        /// The earlier output's setting.
        first: String,
        /// The later output's setting.
        second: String,
    },
}

impl OutputPathError {
    /// The message, `name` spelling the settings it names.
    pub fn text(&self, name: Namer) -> String {
        match self {
            OutputPathError::IsInput { path, setting } => format!(
                "{}: {} names an input; refusing to overwrite it",
                quoted(path),
                name(setting)
            ),
            OutputPathError::InOutputDir {
                input,
                setting,
                dir,
            } => format!(
                "{}: an input in the folder {} {} writes; refusing to remove or overwrite it",
                quoted(input),
                quoted(dir),
                name(setting)
            ),
            OutputPathError::InInputDir {
                dir,
                setting,
                input,
                ext,
            } => format!(
                "{}: {} is inside the input folder {}, whose .{ext} files are read; \
                 refusing to replace them",
                quoted(dir),
                name(setting),
                quoted(input)
            ),
            OutputPathError::Clash {
                path,
                first,
                second,
            } => format!(
                "{}: {} and {} would both be written to this path",
                quoted(path),
                name(first),
                name(second)
            ),
        }
    }
}

impl std::fmt::Display for OutputPathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(&field))
    }
}

impl std::error::Error for OutputPathError {}

/// A setting whose value is out of its range.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingError {
    /// The setting, as a library field (`fail_above`); the caller spells it.
    pub setting: &'static str,
    /// What it must be, e.g. "a percentage of 0 or more".
    pub expected: &'static str,
    /// The value given.
    pub value: f64,
}

impl SettingError {
    /// The message, `name` spelling the setting.
    pub fn text(&self, name: Namer) -> String {
        format!(
            "{} must be {}, got {}",
            name(self.setting),
            self.expected,
            self.value
        )
    }
}

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(&field))
    }
}

impl std::error::Error for SettingError {}
