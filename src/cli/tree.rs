//! `tracelens tree`: the call tree or the nn.Module tree of a trace, as
//! text on stdout.

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::Args;

use tracelens::CallTree;
use tracelens::analysis::commands::tree_view::TreeViewOptions;
use tracelens::report::Document;
use tracelens::report::text::Text;
use tracelens::report::view::tree as tree_view;

/// Options of `tracelens tree`.
#[derive(Args)]
pub(crate) struct TreeArgs {
    /// Trace file: .json, .json.gz or .zip; - for stdin.
    trace: PathBuf,
    /// Show the nn.Module hierarchy with GPU time per module (µs).
    #[arg(long)]
    modules: bool,
    /// Print at most N levels below each root.
    #[arg(long, value_name = "N")]
    depth: Option<usize>,
    /// Print only subtrees whose root name matches this regular expression.
    #[arg(long, value_name = "PATTERN")]
    grep: Option<String>,
    /// Also show branches that launch no GPU work.
    #[arg(long)]
    all: bool,
}

/// Compiles `--grep`; regex errors span several lines, the last one says
/// what is wrong.
fn grep_pattern(p: &str) -> Result<regex::Regex> {
    regex::Regex::new(p).map_err(|e| {
        let msg = e.to_string();
        let why = msg
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .trim_start_matches("error: ")
            .to_string();
        anyhow!("--grep: invalid pattern {p:?}: {why}")
    })
}

/// Runs the subcommand.
pub(crate) fn run(a: TreeArgs) -> Result<()> {
    // Check the pattern before the (possibly long) load.
    let grep = a.grep.as_deref().map(grep_pattern).transpose()?;
    let CallTree { trace, tree } = tracelens::load_tree(&a.trace)?;
    let opts = TreeViewOptions {
        depth: a.depth,
        grep,
        show_all: a.all,
    };
    let outline = if a.modules {
        tree_view::module_tree(&trace, &tree, &opts)
    } else {
        tree_view::call_tree(&trace, &tree, &opts)
    };
    let doc = Document {
        outline: Some(outline),
        ..Document::default()
    };
    let text = super::render_text(&Text { path: "-".into() }, &doc)?;
    if text.is_empty() && a.modules {
        return Err(anyhow!(
            "{}: no nn.Module frames with GPU work (profile with with_stack=True and with_modules=True)",
            tracelens::quote::quoted(&a.trace)
        ));
    }
    if text.is_empty() {
        eprintln!(
            "tracelens: nothing to show: no frame launches GPU work{} (use --all to show every frame)",
            if opts.grep.is_some() {
                " under a matching root"
            } else {
                ""
            }
        );
    }
    super::stdout::write(&text)
}
