//! What a finding is: a claim about where GPU time goes and what to do
//! about it, with the numbers and events behind it, how much time it
//! could give back, and the commands that verify it.

use super::health::Evidence;
use crate::trace::EventId;

/// How much a finding matters, from its mid impact as a share of the
/// time it is measured against ([`Impact::base_ms`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Context, no time to gain by itself (e.g. which op dominates).
    Info,
    /// Under [`MID_SHARE_PCT`] of the base.
    Low,
    /// From [`MID_SHARE_PCT`] to [`HIGH_SHARE_PCT`].
    Medium,
    /// From [`HIGH_SHARE_PCT`] on.
    High,
}

/// A mid impact from this share (%) of the base on is [`Severity::Medium`].
pub const MID_SHARE_PCT: f64 = 2.0;

/// A mid impact from this share (%) of the base on is [`Severity::High`].
pub const HIGH_SHARE_PCT: f64 = 10.0;

impl Severity {
    /// The severity as written in sheets and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }

    /// The severity of a gain of `share_pct` (%) of the base.
    pub fn of_share(share_pct: f64) -> Severity {
        if share_pct >= HIGH_SHARE_PCT {
            Severity::High
        } else if share_pct >= MID_SHARE_PCT {
            Severity::Medium
        } else {
            Severity::Low
        }
    }
}

/// How sure a finding is of its cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
    /// The trace suggests it; other causes fit too.
    Low,
    /// The trace shows it for most of the time claimed.
    Medium,
    /// The trace shows it directly (the events are named).
    High,
}

impl Confidence {
    /// The confidence as written in sheets and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// The GPU time a fix could give back, ms: a low, mid and high estimate,
/// and the time they are a share of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impact {
    /// The least a fix gives back, ms.
    pub low_ms: f64,
    /// The likely gain, ms (findings rank by it).
    pub mid_ms: f64,
    /// The most a fix could give back, ms.
    pub high_ms: f64,
    /// What the shares are of, ms: the trace's GPU span (first GPU event
    /// start to last end).
    pub base_ms: f64,
}

impl Impact {
    /// `ms` as a share (%) of the base; 0 without a base.
    pub fn share_pct(&self, ms: f64) -> f64 {
        if self.base_ms > 0.0 {
            100.0 * ms / self.base_ms
        } else {
            0.0
        }
    }

    /// No time to gain (an informational finding).
    pub fn none(base_ms: f64) -> Impact {
        Impact {
            low_ms: 0.0,
            mid_ms: 0.0,
            high_ms: 0.0,
            base_ms,
        }
    }
}

/// One argument of a suggested command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// The trace the report was made of (its file name when shown).
    Trace,
    /// A literal argument.
    Text(String),
}

/// A `tracelens` command that verifies or explores a finding, e.g.
/// `tracelens replay TRACE --uid 42`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The arguments after `tracelens`.
    pub args: Vec<Arg>,
}

impl Command {
    /// `tracelens SUB TRACE ARGS…`.
    pub fn on_trace(sub: &str, args: &[&str]) -> Command {
        let mut all = vec![Arg::Text(sub.into()), Arg::Trace];
        all.extend(args.iter().map(|a| Arg::Text((*a).into())));
        Command { args: all }
    }

    /// The command as one line, the trace written as `trace`; arguments
    /// with characters a shell would read are single-quoted.
    pub fn line(&self, trace: &str) -> String {
        let mut out = String::from("tracelens");
        for a in &self.args {
            out.push(' ');
            out.push_str(&shell_word(match a {
                Arg::Trace => trace,
                Arg::Text(t) => t,
            }));
        }
        out
    }
}

/// `word` as one shell word: unchanged when it holds only characters no
/// shell treats specially, else single-quoted.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Stable id, e.g. `idle.sync`.
    pub id: &'static str,
    /// How much it matters.
    pub severity: Severity,
    /// How sure the cause is.
    pub confidence: Confidence,
    /// One sentence for people, with the numbers.
    pub summary: String,
    /// What it is about, when one thing: an op name, a kernel name.
    pub subject: Option<String>,
    /// The op's input shapes, when about one op and shape.
    pub shape: Option<String>,
    /// The GPU time a fix could give back.
    pub impact: Impact,
    /// The numbers.
    pub evidence: Vec<Evidence>,
    /// Up to [`super::health::MAX_EVENTS`] events behind it (their UIDs
    /// in the sheets; `tracelens tree --uid`, `replay --uid`).
    pub events: Vec<EventId>,
    /// What to try, most likely first.
    pub actions: Vec<&'static str>,
    /// Commands that verify or explore it.
    pub commands: Vec<Command>,
}

impl Finding {
    /// A finding with severity from its impact's mid share (Info when the
    /// impact is none), no subject, events, actions or commands yet.
    pub fn new(
        id: &'static str,
        confidence: Confidence,
        summary: String,
        impact: Impact,
        evidence: Vec<Evidence>,
    ) -> Finding {
        let severity = if impact.high_ms > 0.0 {
            Severity::of_share(impact.share_pct(impact.mid_ms))
        } else {
            Severity::Info
        };
        Finding {
            id,
            severity,
            confidence,
            summary,
            subject: None,
            shape: None,
            impact,
            evidence,
            events: Vec::new(),
            actions: Vec::new(),
            commands: Vec::new(),
        }
    }
}

/// Sorts findings by mid impact, most first; informational ones last;
/// ties by id, then subject (a stable order for tests and diffs).
pub fn rank(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (a.severity == Severity::Info)
            .cmp(&(b.severity == Severity::Info))
            .then(b.impact.mid_ms.total_cmp(&a.impact.mid_ms))
            .then(a.id.cmp(b.id))
            .then(a.subject.cmp(&b.subject))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_follows_the_mid_share() {
        let at = |mid: f64| Impact {
            low_ms: mid / 2.0,
            mid_ms: mid,
            high_ms: mid * 2.0,
            base_ms: 100.0,
        };
        let f = |mid| Finding::new("x", Confidence::High, String::new(), at(mid), vec![]);
        assert_eq!(f(1.0).severity, Severity::Low);
        assert_eq!(f(2.0).severity, Severity::Medium);
        assert_eq!(f(10.0).severity, Severity::High);
        assert_eq!(f(0.0).severity, Severity::Info);
    }

    #[test]
    fn ranked_by_mid_impact_with_info_last() {
        let imp = |mid: f64| Impact {
            low_ms: 0.0,
            mid_ms: mid,
            high_ms: mid,
            base_ms: 10.0,
        };
        let mut v = vec![
            Finding::new(
                "b",
                Confidence::Low,
                String::new(),
                Impact::none(10.0),
                vec![],
            ),
            Finding::new("a", Confidence::Low, String::new(), imp(1.0), vec![]),
            Finding::new("c", Confidence::Low, String::new(), imp(3.0), vec![]),
        ];
        rank(&mut v);
        let ids: Vec<_> = v.iter().map(|f| f.id).collect();
        assert_eq!(ids, ["c", "a", "b"]);
    }

    #[test]
    fn commands_quote_what_a_shell_would_read() {
        let c = Command::on_trace("replay", &["--uid", "42"]);
        assert_eq!(c.line("t.json"), "tracelens replay t.json --uid 42");
        assert_eq!(
            c.line("a b'$(x).json"),
            r"tracelens replay 'a b'\''$(x).json' --uid 42"
        );
    }
}
