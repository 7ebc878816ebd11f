//! `tracelens collectives`: the multi-rank collective report. Finds the rank
//! traces in a directory, loads their collective kernels in parallel, and
//! writes the reference's sheets (Excel, CSV) and a Markdown summary.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use rayon::prelude::*;
use regex::Regex;

use tracelens::analysis::collectives::{CollectiveOptions, analyze, collective_kernel_count};
use tracelens::load::{self, LoadError};
use tracelens::report::Document;
use tracelens::report::markdown::Markdown;
use tracelens::report::staging::Staging;
use tracelens::report::view::collectives as view;
use tracelens::trace::{Needs, Trace};

/// Options of `tracelens collectives`.
#[derive(Args)]
pub struct CollectivesArgs {
    /// Directory holding one trace per rank (.json or .json.gz, any names).
    #[arg(long, value_name = "DIR")]
    pub trace_dir: PathBuf,
    /// Number of ranks of the job; every rank 0..N-1 needs a trace.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub world_size: u32,
    /// Also look for traces in the subdirectories of DIR.
    #[arg(long)]
    pub recursive: bool,
    /// Take each file's rank from its name with this regular expression (the
    /// group named `rank`, else the first group), instead of the trace's
    /// distributedInfo.rank.
    #[arg(long, value_name = "RX")]
    pub rank_regex: Option<String>,
    /// GPUs per node, for the node_id / node_span columns [default: the
    /// number of deviceProperties entries in rank 0's trace].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub gpus_per_node: Option<u32>,
    /// Excel workbook to write [default: DIR/nccl_analysis_report.xlsx,
    /// unless --csv is given].
    #[arg(short = 'o', long = "output", value_name = "FILE.xlsx")]
    pub output: Option<PathBuf>,
    /// Write one <sheet>.csv per sheet into DIR.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Write a Markdown summary to FILE (- for stdout).
    #[arg(long, value_name = "FILE")]
    pub md: Option<PathBuf>,
    /// Print nothing but warnings and errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Ranks named in file names: `rank3`, `rank_3`, `rank-3`, `rank[3]`,
/// `worker3`, … in any case.
const NAME_RANK: &str = r"(?i)(?:rank|worker)[\[\-_/]?(\d+)";

/// A file that may hold one rank's trace.
struct Candidate {
    path: PathBuf,
    /// The path below the trace directory, for rank patterns and messages.
    rel: String,
}

/// The trace files (`.json`, `.json.gz`) in `dir`, sorted; hidden files are
/// skipped (our own temporary outputs are hidden).
fn find_traces(dir: &Path, recursive: bool) -> Result<(Vec<Candidate>, bool)> {
    let mut out = Vec::new();
    let mut has_subdirs = false;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("cannot list {}", d.display()))?;
        for e in entries {
            let e = e.with_context(|| format!("cannot list {}", d.display()))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = e.path();
            // Never follow directory links: they can loop.
            let ft = e.file_type()?;
            if ft.is_dir() {
                has_subdirs = true;
                if recursive {
                    stack.push(path);
                }
                continue;
            }
            let lower = name.to_ascii_lowercase();
            if (lower.ends_with(".json") || lower.ends_with(".json.gz")) && path.is_file() {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                out.push(Candidate { path, rel });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((out, has_subdirs))
}

/// The rank a pattern finds in the file name, else in the path below DIR.
fn rank_from_name(rx: &Regex, c: &Candidate) -> Option<i64> {
    let base = c.path.file_name()?.to_string_lossy().into_owned();
    let caps = rx.captures(&base).or_else(|| rx.captures(&c.rel))?;
    let m = caps.name("rank").or_else(|| caps.get(1))?;
    m.as_str().parse().ok()
}

/// Loads the candidates in parallel, with a progress line on a terminal.
fn load_all(files: &[&Candidate], quiet: bool) -> Vec<std::result::Result<Trace, LoadError>> {
    let show = !quiet && std::io::stderr().is_terminal();
    let done = AtomicUsize::new(0);
    let line = Mutex::new(());
    let total = files.len();
    if show {
        eprint!("\r\x1b[2Kloading traces: 0/{total}");
    }
    let out = files
        .par_iter()
        .map(|c| {
            let r = load::load(&c.path, &Needs::collectives_only());
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if show && let Ok(_g) = line.lock() {
                eprint!("\r\x1b[2Kloading traces: {n}/{total}");
                let _ = std::io::stderr().flush();
            }
            r
        })
        .collect();
    if show {
        eprint!("\r\x1b[2K");
    }
    out
}

fn warn(msg: &str) {
    eprintln!("tracelens: warning: {msg}");
}

/// Finds one trace per rank and loads it: index = rank. Warnings are
/// returned, not printed, so that a failure is one line.
fn discover(a: &CollectivesArgs) -> Result<(Vec<Trace>, Vec<String>)> {
    let mut warnings = Vec::new();
    let mut warn = |m: String| warnings.push(m);
    let dir = &a.trace_dir;
    if !dir.is_dir() {
        bail!("--trace-dir {}: not a directory", dir.display());
    }
    let world = a.world_size as i64;
    let user_rx = match &a.rank_regex {
        Some(p) => {
            let rx = Regex::new(p).map_err(|e| {
                let msg = e.to_string();
                let why = msg.lines().last().unwrap_or("").trim().to_string();
                anyhow!("--rank-regex: invalid pattern {p:?}: {why}")
            })?;
            if rx.captures_len() < 2 {
                bail!(
                    "--rank-regex {p:?} has no group for the rank: write it like 'step3_(?P<rank>\\d+)'"
                );
            }
            Some(rx)
        }
        None => None,
    };
    let (found, has_subdirs) = find_traces(dir, a.recursive)?;
    if found.is_empty() {
        bail!(
            "no trace files (.json, .json.gz) in {}{}",
            dir.display(),
            if has_subdirs && !a.recursive {
                " (use --recursive to look in its subdirectories)"
            } else {
                ""
            }
        );
    }
    // With --rank-regex only the files it names are read.
    let mut files: Vec<(&Candidate, Option<i64>)> = Vec::new();
    let mut unmatched = Vec::new();
    for c in &found {
        match &user_rx {
            Some(rx) => match rank_from_name(rx, c) {
                Some(r) => files.push((c, Some(r))),
                None => unmatched.push(c.rel.as_str()),
            },
            None => files.push((c, None)),
        }
    }
    if !unmatched.is_empty() {
        if files.is_empty() {
            bail!(
                "none of the {} trace files in {} matches --rank-regex (e.g. {})",
                found.len(),
                dir.display(),
                unmatched[0]
            );
        }
        warn(format!(
            "ignoring {} file(s) that --rank-regex does not match: {}",
            unmatched.len(),
            short_list(&unmatched)
        ));
    }
    let list: Vec<&Candidate> = files.iter().map(|f| f.0).collect();
    let loaded = load_all(&list, a.quiet);
    let name_rx = Regex::new(NAME_RANK).map_err(|e| anyhow!("internal error: {e}"))?;
    // A map, not a Vec of world-size slots: --world-size may be absurd.
    let mut by_rank: std::collections::BTreeMap<i64, (usize, Trace)> =
        std::collections::BTreeMap::new();
    let mut skipped = Vec::new();
    for (i, ((c, named), res)) in files.iter().zip(loaded).enumerate() {
        let rc = match res {
            Ok(rc) => rc,
            Err(LoadError::NotATrace(_)) => {
                skipped.push(c.rel.as_str());
                continue;
            }
            Err(e) => bail!("{}: {e}", c.path.display()),
        };
        for w in rc.warnings() {
            warn(format!("{}: {w}", c.path.display()));
        }
        if let Some(ws) = rc.info().world_size
            && ws != world
        {
            bail!(
                "{}: the trace says world_size {ws} (distributedInfo) but --world-size is {world}: a trace from another job?",
                c.path.display()
            );
        }
        let rank = match (named, rc.info().rank) {
            (Some(r), info) => {
                if let Some(info) = info
                    && info != *r
                {
                    warn(format!(
                        "{}: --rank-regex gives rank {r}, distributedInfo.rank says {info}; using {r}",
                        c.path.display()
                    ));
                }
                *r
            }
            (None, Some(info)) => {
                if let Some(r) = rank_from_name(&name_rx, c)
                    && r != info
                {
                    warn(format!(
                        "{}: the file name says rank {r}, distributedInfo.rank says {info}; using {info}",
                        c.path.display()
                    ));
                }
                info
            }
            (None, None) => rank_from_name(&name_rx, c).ok_or_else(|| {
                anyhow!(
                    "{}: cannot tell its rank: no distributedInfo.rank in the trace and no rank in the name (like rank3, rank_3, worker3); use --rank-regex",
                    c.path.display()
                )
            })?,
        };
        if rank < 0 || rank >= world {
            bail!(
                "{}: rank {rank} is outside --world-size {world} (ranks 0..{})",
                c.path.display(),
                world - 1
            );
        }
        if let Some((j, _)) = by_rank.get(&rank) {
            bail!(
                "rank {rank} has two traces: {} and {} (move one away or use --rank-regex)",
                files[*j].0.path.display(),
                c.path.display()
            );
        }
        by_rank.insert(rank, (i, rc));
    }
    if !skipped.is_empty() {
        warn(format!(
            "skipping {} JSON file(s) that are not traces (no traceEvents): {}",
            skipped.len(),
            short_list(&skipped)
        ));
    }
    let n_missing = world - by_rank.len() as i64;
    if n_missing > 0 {
        let first: Vec<String> = (0..world)
            .filter(|r| !by_rank.contains_key(r))
            .take(8)
            .map(|r| r.to_string())
            .collect();
        bail!(
            "no trace for rank{} {}{} of --world-size {world} in {}",
            if n_missing > 1 { "s" } else { "" },
            first.join(", "),
            if n_missing > 8 {
                format!(" and {} more", n_missing - 8)
            } else {
                String::new()
            },
            dir.display()
        );
    }
    let ranks: Vec<Trace> = by_rank.into_values().map(|(_, rc)| rc).collect();
    let empty: Vec<String> = ranks
        .iter()
        .enumerate()
        .filter(|(_, r)| collective_kernel_count(r) == 0)
        .map(|(i, _)| i.to_string())
        .collect();
    if !empty.is_empty() && empty.len() < ranks.len() {
        warn(format!(
            "no collective kernels in the trace of rank{} {}",
            if empty.len() > 1 { "s" } else { "" },
            short_list(&empty.iter().map(|s| s.as_str()).collect::<Vec<_>>())
        ));
    }
    Ok((ranks, warnings))
}

/// At most eight items, then how many more.
fn short_list(items: &[&str]) -> String {
    let mut s = items.iter().take(8).copied().collect::<Vec<_>>().join(", ");
    if items.len() > 8 {
        s.push_str(&format!(" and {} more", items.len() - 8));
    }
    s
}

/// Runs the subcommand.
pub fn run(a: CollectivesArgs) -> Result<()> {
    let xlsx_path = match (&a.output, &a.csv) {
        (Some(o), _) => Some(o.clone()),
        (None, Some(_)) => None,
        (None, None) => Some(a.trace_dir.join("nccl_analysis_report.xlsx")),
    };
    let (ranks, warnings) = discover(&a)?;
    let opts = CollectiveOptions {
        world_size: a.world_size as usize,
        gpus_per_node: a.gpus_per_node.map(|g| g as usize),
        ..CollectiveOptions::default()
    };
    let report = analyze(&ranks, &opts).map_err(|e| anyhow!("{e}"))?;
    drop(ranks);
    for w in &warnings {
        warn(w);
    }
    if report.kernels == 0 {
        warn(&format!(
            "no collective kernels (NCCL, RCCL, custom all-reduce) in any of the {} traces: the summaries are empty",
            report.ranks
        ));
    }
    let title = a.trace_dir.display().to_string();
    let md_to_stdout = a.md.as_ref().is_some_and(|m| m.as_os_str() == "-");
    // Every file of the run appears together, or none does.
    let mut staging = Staging::new();
    let sheets = Document::of_tables(&report.sheets);
    let mut written = super::stage_sheets(
        &mut staging,
        a.csv.as_deref(),
        &sheets,
        xlsx_path.as_deref(),
        &sheets,
    )?;
    let md_text = match &a.md {
        Some(md) => {
            let page = Document::of_page(view::page(&report, &title));
            Some(super::render_text(&Markdown { path: md.clone() }, &page)?)
        }
        None => None,
    };
    if let (Some(md), Some(text)) = (&a.md, &md_text)
        && !md_to_stdout
    {
        staging.put(md, text.as_bytes())?;
        written.push(md.display().to_string());
    }
    staging.commit()?;
    super::print_results(
        a.quiet,
        md_to_stdout,
        md_text.as_deref(),
        &super::terminal_text(view::terminal(&report))?,
        &written,
    );
    Ok(())
}
