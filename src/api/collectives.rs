//! `tracelens collectives`: finds one trace per rank in a directory, loads
//! their collective kernels in parallel and runs the multi-rank analysis.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use regex::Regex;

use crate::analysis::commands::collectives::{
    CollectiveOptions, CollectiveReport, analyze, collective_kernel_count,
};
use crate::error::{CollectivesError, Error, LoadError, Namer, RankError, World, field};
use crate::load;
use crate::table::agg::Agg;
use crate::trace::{Needs, Trace};

/// The multi-rank analysis reads only collective kernels.
const RANK_NEEDS: Needs = Needs::COLLECTIVES;

/// Ranks named in file names: `rank3`, `rank_3`, `rank-3`, `rank[3]`,
/// `worker3`, … in any case.
const NAME_RANK: &str = r"(?i)(?:rank|worker)[\[\-_/]?(\d+)";

/// Where the rank traces of a job are and how to tell their ranks.
#[derive(Debug, Clone, Default)]
pub struct CollectivesOptions {
    /// Directory holding one trace per rank (.json or .json.gz, any names).
    pub trace_dir: PathBuf,
    /// Number of ranks of the job; every rank 0..N-1 needs a trace. None:
    /// the traces' `distributedInfo.world_size`, else the number of rank
    /// traces found.
    pub world_size: Option<usize>,
    /// Also look for traces in the subdirectories.
    pub recursive: bool,
    /// Take each file's rank from its name with this regular expression
    /// (group `rank`, else the first group) instead of distributedInfo.rank.
    pub rank_regex: Option<String>,
    /// GPUs per node [default: from rank 0's deviceProperties].
    pub gpus_per_node: Option<usize>,
    /// The aggregations of the summary sheets [default: mean, median,
    /// min, max].
    pub agg_metrics: Option<Vec<Agg>>,
}

/// The multi-rank collective report and what was odd on the way.
pub struct CollectivesRun {
    /// The report.
    pub report: CollectiveReport,
    /// Warnings about the files (skipped, ranks disagreeing, no kernels).
    pub warnings: Vec<RankWarning>,
}

/// Something odd about a job's files that did not stop the analysis.
/// Messages name the settings of [`CollectivesOptions`] by their field
/// (`rank_regex`); [`RankWarning::text`] spells them as a caller does (the
/// command line: `--rank-regex`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankWarning {
    /// Files that the rank pattern does not match, left out.
    Unmatched {
        /// How many.
        count: usize,
        /// The first few, relative to the folder.
        names: String,
    },
    /// The rank pattern and the trace's `distributedInfo.rank` disagree;
    /// the pattern's rank is used.
    PatternDisagrees {
        /// The trace.
        path: PathBuf,
        /// The pattern's rank.
        named: i64,
        /// distributedInfo.rank.
        info: i64,
    },
    /// Any other warning, complete in itself.
    Note(String),
}

impl RankWarning {
    /// The message, `name` spelling the settings it names.
    pub fn text(&self, name: Namer) -> String {
        match self {
            RankWarning::Unmatched { count, names } => format!(
                "ignoring {count} file(s) that {} does not match: {names}",
                name("rank_regex")
            ),
            RankWarning::PatternDisagrees { path, named, info } => format!(
                "{}: {} gives rank {named}, distributedInfo.rank says {info}; using {named}",
                crate::quote::quoted(path),
                name("rank_regex")
            ),
            RankWarning::Note(text) => text.clone(),
        }
    }
}

impl std::fmt::Display for RankWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(&field))
    }
}

/// Called with (traces loaded, traces to load) as loading goes on; from
/// several threads.
pub type LoadProgress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Finds, loads and analyses the rank traces of a job.
pub fn collectives(
    opts: &CollectivesOptions,
    progress: Option<LoadProgress>,
) -> Result<CollectivesRun, Error> {
    let (found, mut warnings) = discover_rank_files(opts, progress)?;
    let (paths, ranks): (Vec<PathBuf>, Vec<Trace>) = found.into_iter().unzip();
    warn_empty_ranks(&ranks.iter().collect::<Vec<_>>(), &mut warnings);
    let defaults = CollectiveOptions::default();
    let copts = CollectiveOptions {
        world_size: ranks.len(),
        gpus_per_node: opts.gpus_per_node,
        agg_metrics: opts.agg_metrics.clone().unwrap_or(defaults.agg_metrics),
        rank_traces: paths.iter().map(|p| p.display().to_string()).collect(),
    };
    let report = analyze(&ranks, &copts).map_err(CollectivesError)?;
    warnings.extend(report.warnings.iter().cloned().map(RankWarning::Note));
    Ok(CollectivesRun { report, warnings })
}

/// A file that may hold one rank's trace.
struct Candidate {
    path: PathBuf,
    /// The path below the trace directory, for rank patterns and messages.
    rel: String,
}

/// Finds one trace per rank and loads its collective kernels: index =
/// rank. Warnings are returned, not printed, so that a failure is one line.
pub fn discover_ranks(
    opts: &CollectivesOptions,
    progress: Option<LoadProgress>,
) -> Result<(Vec<Trace>, Vec<RankWarning>), Error> {
    let (found, mut warnings) = discover_rank_files(opts, progress)?;
    let ranks: Vec<Trace> = found.into_iter().map(|(_, t)| t).collect();
    warn_empty_ranks(&ranks.iter().collect::<Vec<_>>(), &mut warnings);
    Ok((ranks, warnings))
}

/// Finds one trace per rank as [`discover_ranks`] does (by
/// `rank_regex`, `distributedInfo.rank` or the file name; every rank
/// `0..world_size` present) and returns their files: index = rank.
/// `gpus_per_node` and `agg_metrics` are not read.
pub fn discover_rank_paths(
    opts: &CollectivesOptions,
    progress: Option<LoadProgress>,
) -> Result<(Vec<PathBuf>, Vec<RankWarning>), Error> {
    let (found, warnings) = discover_rank_files(opts, progress)?;
    Ok((found.into_iter().map(|(p, _)| p).collect(), warnings))
}

/// Each rank's trace with its file, index = rank.
type RankFiles = Vec<(PathBuf, Trace)>;

/// [`discover_ranks`], each trace with its file.
fn discover_rank_files(
    opts: &CollectivesOptions,
    progress: Option<LoadProgress>,
) -> Result<(RankFiles, Vec<RankWarning>), Error> {
    let mut warnings = Vec::new();
    let dir = &opts.trace_dir;
    if !dir.is_dir() {
        return Err(RankError::NotADirectory(dir.clone()).into());
    }
    let user_rx = opts.rank_regex.as_deref().map(rank_pattern).transpose()?;
    let (found, has_subdirs) = find_traces(dir, opts.recursive)?;
    if found.is_empty() {
        return Err(RankError::NoTraces {
            dir: dir.clone(),
            subdirs: has_subdirs && !opts.recursive,
        }
        .into());
    }
    let files = select_files(&found, user_rx.as_ref(), dir, &mut warnings)?;
    let list: Vec<&Candidate> = files.iter().map(|f| f.0).collect();
    let loaded = load_all(&list, progress);
    let world = world_size(opts.world_size, &files, &loaded, dir)?;
    let by_rank = assign_ranks(&files, loaded, &world, &mut warnings)?;
    check_complete(&by_rank, &world, dir)?;
    let ranks: RankFiles = by_rank
        .into_values()
        .map(|(i, t)| (files[i].0.path.clone(), t))
        .collect();
    Ok((ranks, warnings))
}

/// The world size: `given`, else the first loaded trace's
/// `distributedInfo.world_size`, else the number of traces loaded.
fn world_size(
    given: Option<usize>,
    files: &[(&Candidate, Option<i64>)],
    loaded: &[Result<Trace, LoadError>],
    dir: &Path,
) -> Result<World, RankError> {
    if let Some(n) = given {
        return Ok(World::Given(n as i64));
    }
    let traced = files.iter().zip(loaded).find_map(|((c, _), t)| {
        let size = t.as_ref().ok()?.info().world_size?;
        Some(World::Traced {
            size,
            path: c.path.clone(),
        })
    });
    if let Some(w) = traced {
        return Ok(w);
    }
    match loaded.iter().filter(|t| t.is_ok()).count() {
        0 => Err(RankError::NoWorldSize(dir.to_path_buf())),
        n => Ok(World::Counted(n as i64)),
    }
}

/// Compiles `--rank-regex`, which needs a group for the rank.
fn rank_pattern(p: &str) -> Result<Regex, RankError> {
    let rx = Regex::new(p).map_err(|e| {
        let msg = e.to_string();
        RankError::BadPattern {
            pattern: p.to_string(),
            why: msg.lines().last().unwrap_or("").trim().to_string(),
        }
    })?;
    if rx.captures_len() < 2 {
        return Err(RankError::PatternWithoutGroup(p.to_string()));
    }
    Ok(rx)
}

/// The trace files (`.json`, `.json.gz`) in `dir` (and its subdirectories
/// when `recursive`), sorted by their path below `dir`.
pub fn trace_files(dir: &Path, recursive: bool) -> Result<Vec<PathBuf>, Error> {
    let (found, has_subdirs) = find_traces(dir, recursive)?;
    if found.is_empty() {
        return Err(RankError::NoTraces {
            dir: dir.to_path_buf(),
            subdirs: has_subdirs && !recursive,
        }
        .into());
    }
    Ok(found.into_iter().map(|c| c.path).collect())
}

/// The rank in a trace's file name (`rank3`, `worker_3`, …), for traces
/// without `distributedInfo.rank`.
pub(crate) fn rank_in_file_name(path: &Path) -> Option<i64> {
    static RX: std::sync::LazyLock<Regex> =
        std::sync::LazyLock::new(|| Regex::new(NAME_RANK).expect("NAME_RANK is a valid pattern"));
    let base = path.file_name()?.to_string_lossy().into_owned();
    RX.captures(&base)?.get(1)?.as_str().parse().ok()
}

/// The trace files (`.json`, `.json.gz`) in `dir`, sorted, and whether it
/// has subdirectories; hidden files are skipped (our own temporary outputs
/// are hidden).
fn find_traces(dir: &Path, recursive: bool) -> Result<(Vec<Candidate>, bool), RankError> {
    let mut out = Vec::new();
    let mut has_subdirs = false;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let list_error = |source| RankError::List {
            dir: d.clone(),
            source,
        };
        for e in std::fs::read_dir(&d).map_err(list_error)? {
            let e = e.map_err(list_error)?;
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = e.path();
            // Never follow directory links: they can loop.
            if e.file_type()?.is_dir() {
                has_subdirs = true;
                if recursive {
                    stack.push(path);
                }
                continue;
            }
            let lower = name.to_ascii_lowercase();
            if (lower.ends_with(".json") || lower.ends_with(".json.gz")) && path.is_file() {
                let rel = path.strip_prefix(dir).unwrap_or(&path);
                let rel = rel.to_string_lossy().into_owned();
                out.push(Candidate { path, rel });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((out, has_subdirs))
}

/// The files to read, each with the rank `user_rx` finds in its name; with
/// a pattern only the files it names are read.
fn select_files<'c>(
    found: &'c [Candidate],
    user_rx: Option<&Regex>,
    dir: &Path,
    warnings: &mut Vec<RankWarning>,
) -> Result<Vec<(&'c Candidate, Option<i64>)>, RankError> {
    let Some(rx) = user_rx else {
        return Ok(found.iter().map(|c| (c, None)).collect());
    };
    let mut files = Vec::new();
    let mut unmatched = Vec::new();
    for c in found {
        match rank_from_name(rx, c) {
            Some(r) => files.push((c, Some(r))),
            None => unmatched.push(c.rel.as_str()),
        }
    }
    if !unmatched.is_empty() {
        if files.is_empty() {
            return Err(RankError::NoneMatch {
                count: found.len(),
                dir: dir.to_path_buf(),
                example: unmatched[0].to_string(),
            });
        }
        warnings.push(RankWarning::Unmatched {
            count: unmatched.len(),
            names: short_list(&unmatched),
        });
    }
    Ok(files)
}

/// The rank a pattern finds in the file name, else in the path below DIR.
fn rank_from_name(rx: &Regex, c: &Candidate) -> Option<i64> {
    let base = c.path.file_name()?.to_string_lossy().into_owned();
    let caps = rx.captures(&base).or_else(|| rx.captures(&c.rel))?;
    let m = caps.name("rank").or_else(|| caps.get(1))?;
    m.as_str().parse().ok()
}

/// Loads the candidates' collective kernels in parallel.
fn load_all(files: &[&Candidate], progress: Option<LoadProgress>) -> Vec<Result<Trace, LoadError>> {
    let done = AtomicUsize::new(0);
    let total = files.len();
    let tell = |n| {
        if let Some(p) = progress {
            p(n, total);
        }
    };
    tell(0);
    files
        .par_iter()
        .map(|c| {
            let r = load::load(&c.path, &RANK_NEEDS);
            tell(done.fetch_add(1, Ordering::Relaxed) + 1);
            r
        })
        .collect()
}

/// Loaded traces by rank, with the index of their file.
type ByRank = BTreeMap<i64, (usize, Trace)>;

/// Gives each loaded trace its rank; files that are not traces are skipped
/// with a warning.
fn assign_ranks(
    files: &[(&Candidate, Option<i64>)],
    loaded: Vec<Result<Trace, LoadError>>,
    world: &World,
    warnings: &mut Vec<RankWarning>,
) -> Result<ByRank, Error> {
    let name_rx = Regex::new(NAME_RANK).expect("NAME_RANK is a valid pattern");
    // A map, not a Vec of world-size slots: the world size may be absurd.
    let mut by_rank = ByRank::new();
    let mut skipped = Vec::new();
    for (i, ((c, named), res)) in files.iter().zip(loaded).enumerate() {
        let trace = match res {
            Ok(t) => t,
            Err(LoadError::NotATrace(_)) => {
                skipped.push(c.rel.as_str());
                continue;
            }
            Err(error) => {
                let path = c.path.clone();
                return Err(Error::Load { path, error });
            }
        };
        for w in trace.warnings() {
            warnings.push(RankWarning::Note(format!(
                "{}: {w}",
                crate::quote::quoted(&c.path)
            )));
        }
        let rank = rank_of(c, *named, &trace, world, &name_rx, warnings)?;
        if let Some((j, _)) = by_rank.get(&rank) {
            return Err(RankError::Duplicate {
                rank,
                first: files[*j].0.path.clone(),
                second: c.path.clone(),
            }
            .into());
        }
        by_rank.insert(rank, (i, trace));
    }
    if !skipped.is_empty() {
        warnings.push(RankWarning::Note(format!(
            "skipping {} JSON file(s) that are not traces (no traceEvents): {}",
            skipped.len(),
            short_list(&skipped)
        )));
    }
    Ok(by_rank)
}

/// The rank of the trace in `c`: the pattern's (`named`), else the trace's
/// distributedInfo.rank, else the one in its name.
fn rank_of(
    c: &Candidate,
    named: Option<i64>,
    trace: &Trace,
    world: &World,
    name_rx: &Regex,
    warnings: &mut Vec<RankWarning>,
) -> Result<i64, RankError> {
    if let Some(ws) = trace.info().world_size
        && ws != world.size()
    {
        return Err(RankError::WorldSize {
            path: c.path.clone(),
            trace: ws,
            given: world.clone(),
        });
    }
    let rank = match (named, trace.info().rank) {
        (Some(r), info) => {
            if let Some(info) = info
                && info != r
            {
                warnings.push(RankWarning::PatternDisagrees {
                    path: c.path.clone(),
                    named: r,
                    info,
                });
            }
            r
        }
        (None, Some(info)) => {
            if let Some(r) = rank_from_name(name_rx, c)
                && r != info
            {
                warnings.push(RankWarning::Note(format!(
                    "{}: the file name says rank {r}, distributedInfo.rank says {info}; using {info}",
                    crate::quote::quoted(&c.path)
                )));
            }
            info
        }
        (None, None) => {
            rank_from_name(name_rx, c).ok_or_else(|| RankError::UnknownRank(c.path.clone()))?
        }
    };
    if rank < 0 || rank >= world.size() {
        let path = c.path.clone();
        let world = world.clone();
        return Err(RankError::OutOfRange { path, rank, world });
    }
    Ok(rank)
}

/// Every rank `0..world` needs a trace.
fn check_complete(by_rank: &ByRank, world: &World, dir: &Path) -> Result<(), RankError> {
    let count = world.size() - by_rank.len() as i64;
    if count <= 0 {
        return Ok(());
    }
    let first: Vec<String> = (0..world.size())
        .filter(|r| !by_rank.contains_key(r))
        .take(8)
        .map(|r| r.to_string())
        .collect();
    Err(RankError::Missing {
        first,
        count,
        world: world.clone(),
        dir: dir.to_path_buf(),
    })
}

/// Warns about ranks without collective kernels, unless no rank has any.
fn warn_empty_ranks(ranks: &[&Trace], warnings: &mut Vec<RankWarning>) {
    let empty: Vec<String> = ranks
        .iter()
        .enumerate()
        .filter(|(_, r)| collective_kernel_count(r) == 0)
        .map(|(i, _)| i.to_string())
        .collect();
    if !empty.is_empty() && empty.len() < ranks.len() {
        warnings.push(RankWarning::Note(format!(
            "no collective kernels in the trace of rank{} {}",
            if empty.len() > 1 { "s" } else { "" },
            short_list(&empty.iter().map(|s| s.as_str()).collect::<Vec<_>>())
        )));
    }
}

/// At most eight items, then how many more.
fn short_list(items: &[&str]) -> String {
    let mut s = items.iter().take(8).copied().collect::<Vec<_>>().join(", ");
    if items.len() > 8 {
        s.push_str(&format!(" and {} more", items.len() - 8));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library names its settings by field; a caller's namer spells
    /// them its own way.
    #[test]
    fn warnings_name_settings_through_the_namer() {
        let w = RankWarning::Unmatched {
            count: 2,
            names: "a.json, b.json".into(),
        };
        assert_eq!(
            w.to_string(),
            "ignoring 2 file(s) that rank_regex does not match: a.json, b.json"
        );
        let flag = |f: &str| format!("--{}", f.replace('_', "-"));
        let p = RankWarning::PatternDisagrees {
            path: "d/r1.json".into(),
            named: 1,
            info: 0,
        };
        assert_eq!(
            p.text(&flag),
            "d/r1.json: --rank-regex gives rank 1, distributedInfo.rank says 0; using 1"
        );
        assert_eq!(RankWarning::Note("x".into()).text(&flag), "x");
    }
}
