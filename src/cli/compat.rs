//! Compatibility with the reference's console scripts (the PyTorch,
//! inference, rocprofv3, JAX and three pftrace reports, the comparison,
//! the multi-rank collective report, Genesis and the inference splitter):
//! every long flag is also accepted spelled with underscores, as the
//! reference spells them; the reference's flags with another name are
//! hidden aliases on the flag they match (declared with the flag); and the
//! reference's flags that tracelens has no use for are accepted and ignored
//! (tracelens always does what they switch on), or refused with one line
//! saying what replaces them.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

/// What tracelens does with a reference flag that has no tracelens flag.
#[derive(Debug, Clone, Copy)]
enum Handling {
    /// Accepted and ignored: tracelens always behaves as the flag asks.
    Ignored,
    /// Refused: the text says what replaces it.
    Refused(&'static str),
}

/// How many values a reference flag takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Values {
    /// A switch.
    None,
    /// One value.
    One,
    /// One or more (argparse's `nargs="+"`).
    Many,
}

/// A reference flag without a tracelens flag of the same meaning.
#[derive(Debug, Clone, Copy)]
struct RefFlag {
    /// The reference's spelling, without the leading dashes.
    name: &'static str,
    /// The values it takes.
    values: Values,
    /// Accepted or refused.
    handling: Handling,
}

const fn ignored(name: &'static str, takes_value: bool) -> RefFlag {
    RefFlag {
        name,
        values: if takes_value {
            Values::One
        } else {
            Values::None
        },
        handling: Handling::Ignored,
    }
}

const fn refused(name: &'static str, takes_value: bool, instead: &'static str) -> RefFlag {
    RefFlag {
        name,
        values: if takes_value {
            Values::One
        } else {
            Values::None
        },
        handling: Handling::Refused(instead),
    }
}

const fn refused_list(name: &'static str, instead: &'static str) -> RefFlag {
    RefFlag {
        name,
        values: Values::Many,
        handling: Handling::Refused(instead),
    }
}

/// The flags of the reference's report scripts (PyTorch, inference,
/// rocprofv3, JAX, pftrace) that `tracelens report` does not have.
const REPORT: &[RefFlag] = &[
    ignored("enable_kernel_summary", false),
    // The rocprofv3 report always has its kernel_details sheet.
    ignored("kernel_details", false),
    refused(
        "topk_kernels",
        true,
        "not supported: kernel_details keeps every dispatch, longest first (read its first N rows)",
    ),
    refused(
        "disable_kernel_summary",
        false,
        "not supported: the kernel_summary sheets are always written",
    ),
    refused_list(
        "kernel_metadata_keyword_filters",
        "not supported: every kernel is analysed (filter the sheets by their op and metadata columns instead)",
    ),
    refused(
        "comparison_capture_folder",
        true,
        "not supported: make each report with its own --capture-dir, then `tracelens compare BASELINE VARIANT`",
    ),
    // Perfetto traces are decoded natively: no converter to name.
    ignored("traceconv", true),
    refused(
        "write_md",
        false,
        "use --md FILE (the Markdown page goes where you name it)",
    ),
    ignored("short_kernel_study", false),
    refused(
        "topk_ops",
        true,
        "not supported: ops_unique_args keeps every row (filter the CSV or sheet instead)",
    ),
    refused(
        "topk_roofline_ops",
        true,
        "not supported: the roofline sheets keep every row (filter the CSV or sheet instead)",
    ),
    refused(
        "comparison_json_path",
        true,
        "use `tracelens diff BASELINE VARIANT` (TraceDiff) or `tracelens compare BASELINE VARIANT`",
    ),
    refused(
        "extension_file",
        true,
        "not supported: tracelens has no Python extensions; see docs/kernel-categories.md for --kernel-categories-file",
    ),
    refused(
        "python_path",
        true,
        "not supported: tracelens has no GEMM simulator (roofline columns come from --gpu-arch)",
    ),
    refused(
        "enable-origami",
        false,
        "not supported: tracelens has no Origami simulation (roofline columns come from --gpu-arch)",
    ),
    refused(
        "enable_origami",
        false,
        "not supported: tracelens has no Origami simulation (roofline columns come from --gpu-arch)",
    ),
    refused(
        "inductor_cache_dir",
        true,
        "not supported: Triton kernels are modelled from the trace alone",
    ),
    refused(
        "include_overlap_info",
        false,
        "not supported: tracelens writes no kernel-launch overlap sheets",
    ),
    refused(
        "detect_recompute",
        false,
        "not supported: tracelens has no is_recompute column",
    ),
    refused(
        "include_first_occurrence_time",
        false,
        "not supported: tracelens has no first_occurrence_time column",
    ),
];

/// `generate_multi_rank_collective_report_pytorch`'s flags that
/// `tracelens collectives` does not have.
const COLLECTIVES: &[RefFlag] = &[
    ignored("detailed_analysis", false),
    ignored("use_multiprocessing", false),
    ignored("max_workers", true),
    refused(
        "trace_pattern",
        true,
        "use --trace-dir DIR (with --rank-regex RX to take ranks from the file names)",
    ),
    refused(
        "trace_glob",
        true,
        "use --trace-dir DIR --recursive (with --rank-regex RX to take ranks from the file names)",
    ),
    refused(
        "all2allv_heatmap",
        false,
        "not supported: tracelens writes no nccl_all2allv_heatmap sheet",
    ),
];

/// The reference flags of the subcommand `name`.
fn table(name: &str) -> &'static [RefFlag] {
    match name {
        "report" => REPORT,
        "collectives" => COLLECTIVES,
        _ => &[],
    }
}

/// The argument id of a reference flag (never a field of ours).
fn id(f: &RefFlag) -> String {
    format!("reference:{}", f.name)
}

/// `cmd` with the reference's spellings: underscore aliases on every long
/// flag of every subcommand, and the reference flags of [`REPORT`] and
/// [`COLLECTIVES`], all hidden from `--help`.
pub(crate) fn with_reference_flags(cmd: Command) -> Command {
    let mut cmd = underscore_aliases(cmd);
    for name in ["report", "collectives"] {
        if cmd.find_subcommand(name).is_none() {
            continue;
        }
        cmd = cmd.mut_subcommand(name, |sub| {
            table(name).iter().fold(sub, |sub, f| {
                let arg = Arg::new(id(f)).long(f.name).hide(true);
                sub.arg(match f.values {
                    Values::None => arg.action(ArgAction::SetTrue),
                    Values::One => arg.action(ArgAction::Set).value_name("VALUE"),
                    Values::Many => arg
                        .action(ArgAction::Append)
                        .num_args(1..)
                        .value_name("VALUE"),
                })
            })
        });
    }
    cmd
}

/// `cmd` and its subcommands with each long flag `--a-b` also accepted as
/// `--a_b` (hidden).
fn underscore_aliases(cmd: Command) -> Command {
    cmd.mut_args(|arg| {
        let snake = arg
            .get_long()
            .filter(|l| l.contains('-'))
            .map(|l| l.replace('-', "_"));
        match snake {
            Some(s)
                if !arg
                    .get_all_aliases()
                    .unwrap_or_default()
                    .contains(&s.as_str()) =>
            {
                arg.alias(s)
            }
            _ => arg,
        }
    })
    .mut_subcommands(underscore_aliases)
}

/// Refuses a reference flag that tracelens has no equivalent for, given
/// to the subcommand of `matches`: the message names the flag and what
/// replaces it.
pub(crate) fn check(matches: &ArgMatches) -> Result<(), String> {
    let Some((name, sub)) = matches.subcommand() else {
        return Ok(());
    };
    for f in table(name) {
        if sub.value_source(&id(f)) == Some(ValueSource::CommandLine) {
            refusal(f)?;
        }
    }
    Ok(())
}

/// The refusal of a command line that clap did not accept, when it holds a
/// refused reference flag: the reference's command lines often lack an
/// argument tracelens requires (`--trace_pattern` instead of
/// `--trace-dir`), and the line that says what replaces the flag helps
/// more than the missing argument's. `args` follow the program name.
pub(crate) fn refusal_in(args: &[std::ffi::OsString]) -> Option<String> {
    let mut words = args.iter().filter_map(|a| a.to_str());
    let sub = words.by_ref().find(|w| !w.starts_with('-'))?;
    let table = table(sub);
    words
        .filter_map(|w| w.strip_prefix("--"))
        .map(|w| w.split_once('=').map_or(w, |(flag, _)| flag))
        .find_map(|w| table.iter().find(|f| f.name == w))
        .and_then(|f| refusal(f).err())
}

/// `Err` with the line that refuses `f`, when it is refused.
fn refusal(f: &RefFlag) -> Result<(), String> {
    match f.handling {
        Handling::Refused(instead) => Err(format!(
            "--{} (from the Python TraceLens): {instead}",
            f.name
        )),
        Handling::Ignored => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_flags_are_unique_and_hidden_flags_parse() {
        for t in [REPORT, COLLECTIVES] {
            for (i, f) in t.iter().enumerate() {
                assert!(t[..i].iter().all(|g| g.name != f.name), "{}", f.name);
            }
        }
        let cmd = with_reference_flags(Command::new("t").subcommand(
            Command::new("report").arg(Arg::new("x_y").long("x-y").action(ArgAction::SetTrue)),
        ));
        let m = cmd
            .clone()
            .try_get_matches_from(["t", "report", "--x_y", "--short_kernel_study"])
            .unwrap();
        assert!(m.subcommand_matches("report").unwrap().get_flag("x_y"));
        assert!(check(&m).is_ok());
        let m = cmd
            .try_get_matches_from(["t", "report", "--topk_ops", "5"])
            .unwrap();
        assert!(check(&m).unwrap_err().contains("--topk_ops"));
    }
}
