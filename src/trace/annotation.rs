//! The names of the `user_annotation` ranges inference servers record
//! around each step (the reference's `TraceUtils/annotation_utils.py`):
//! which names are execution roots, the step's batch size and its chunk
//! statistics; and the capture annotations of capture traces.
//!
//! Formats, tried in the reference's priority order, each matched at the
//! start of the name:
//!
//! * vLLM detailed: `execute_<n>_context_<r>(sq<a>sk<b>sqsq<c>sqsk<d>)_generation_<r>(sq…sk…sqsq…sqsk…)`;
//! * vLLM native: `execute_context_<r>(<sq>)_generation_<r>(<sq>)`;
//! * SGLang detailed: `step[EXTEND|DECODE|MIXED …]` with `sqsq=<digits>`
//!   before the first `]`, then `key=<digits>` pairs (`c_sq=…`, `g_sk=…`;
//!   absent ones 0); SGLang native: `step[DECODE bs=64]`, `step[EXTEND bs=2 toks=14721]`;
//! * ATOM: `prefill[…]` / `decode[…]` (`tok` is the phase's `sq`; detailed
//!   when both `sqsq=` and `sqsk=` are present);
//! * diffusion: `execute_diffusion_<bs>_<w>x<h>`.
//!
//! Only the detailed formats carry chunk statistics. Digits are ASCII here
//! (Python's `\d` also takes other scripts' digits).

use std::sync::LazyLock;

use regex::Regex;

use crate::numeric::py_int;

/// Context (`c_*`) and generation (`g_*`) aggregates of one step: token
/// counts `sq`, KV lengths `sk`, and the sums of `sq·sq` and `sq·sk`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkStats {
    /// Context query tokens.
    pub c_sq: i128,
    /// Context KV tokens.
    pub c_sk: i128,
    /// Σ sq² over context requests.
    pub c_sqsq: i128,
    /// Σ sq·sk over context requests.
    pub c_sqsk: i128,
    /// Generation query tokens.
    pub g_sq: i128,
    /// Generation KV tokens.
    pub g_sk: i128,
    /// Σ sq² over generation requests.
    pub g_sqsq: i128,
    /// Σ sq·sk over generation requests.
    pub g_sqsk: i128,
}

impl ChunkStats {
    /// The eight aggregates in the reference's key order.
    pub fn items(&self) -> [(&'static str, i128); 8] {
        [
            ("c_sq", self.c_sq),
            ("c_sk", self.c_sk),
            ("c_sqsq", self.c_sqsq),
            ("c_sqsk", self.c_sqsk),
            ("g_sq", self.g_sq),
            ("g_sk", self.g_sk),
            ("g_sqsq", self.g_sqsq),
            ("g_sqsk", self.g_sqsk),
        ]
    }
}

/// The chunk statistics an annotation name carries, if any.
pub fn chunk_stats(name: &str) -> Option<ChunkStats> {
    if name.starts_with("execute_") {
        vllm(name)
    } else if name.starts_with("step[") {
        sglang(name)
    } else if name.starts_with("prefill[") || name.starts_with("decode[") {
        atom(name)
    } else {
        None
    }
}

/// Consumes `lit` at the front of `s`.
fn lit<'s>(s: &'s str, lit: &str) -> Option<&'s str> {
    s.strip_prefix(lit)
}

/// Consumes one or more digits at the front of `s`.
fn digits(s: &str) -> Option<(i128, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    // `\d+` of any length; beyond i128 the reference's int is huge anyway.
    let v = s[..end].parse().unwrap_or(i128::MAX);
    Some((v, &s[end..]))
}

/// `(sq<a>sk<b>sqsq<c>sqsk<d>)` at the front of `s`.
fn group(s: &str) -> Option<([i128; 4], &str)> {
    let s = lit(s, "(sq")?;
    let (a, s) = digits(s)?;
    let (b, s) = digits(lit(s, "sk")?)?;
    let (c, s) = digits(lit(s, "sqsq")?)?;
    let (d, s) = digits(lit(s, "sqsk")?)?;
    Some(([a, b, c, d], lit(s, ")")?))
}

fn vllm(name: &str) -> Option<ChunkStats> {
    let (_, s) = digits(lit(name, "execute_")?)?;
    let (_, s) = digits(lit(s, "_context_")?)?;
    let ([c_sq, c_sk, c_sqsq, c_sqsk], s) = group(s)?;
    let (_, s) = digits(lit(s, "_generation_")?)?;
    let ([g_sq, g_sk, g_sqsq, g_sqsk], _) = group(s)?;
    Some(ChunkStats {
        c_sq,
        c_sk,
        c_sqsq,
        c_sqsk,
        g_sq,
        g_sk,
        g_sqsq,
        g_sqsk,
    })
}

/// A word character of Python's `\w` (ASCII subset).
fn word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `re.findall(r"(\w+)=(\d+)", body)`, later keys winning like `dict()`.
fn int_pairs(body: &str) -> Vec<(&str, i128)> {
    let b = body.as_bytes();
    let mut out: Vec<(&str, i128)> = Vec::new();
    let mut i = 0;
    while i < body.len() {
        if !body.is_char_boundary(i) || !body[i..].starts_with(word) {
            i += 1;
            continue;
        }
        let key_end = body[i..].find(|c| !word(c)).map_or(body.len(), |e| i + e);
        if b.get(key_end) == Some(&b'=')
            && let Some((v, rest)) = digits(&body[key_end + 1..])
        {
            let key = &body[i..key_end];
            out.retain(|(k, _)| *k != key);
            out.push((key, v));
            i = body.len() - rest.len();
        } else {
            i = key_end.max(i + 1);
        }
    }
    out
}

fn get(pairs: &[(&str, i128)], key: &str) -> i128 {
    pairs.iter().find(|(k, _)| *k == key).map_or(0, |(_, v)| *v)
}

fn sglang(name: &str) -> Option<ChunkStats> {
    let kv = sglang_pairs(name)?;
    Some(ChunkStats {
        c_sq: get(&kv, "c_sq"),
        c_sk: get(&kv, "c_sk"),
        c_sqsq: get(&kv, "c_sqsq"),
        c_sqsk: get(&kv, "c_sqsk"),
        g_sq: get(&kv, "g_sq"),
        g_sk: get(&kv, "g_sk"),
        g_sqsq: get(&kv, "g_sqsq"),
        g_sqsk: get(&kv, "g_sqsk"),
    })
}

/// The `key=<digits>` pairs of an SGLang detailed name; None for other names.
fn sglang_pairs(name: &str) -> Option<Vec<(&str, i128)>> {
    let rest = lit(name, "step[")?;
    let after = ["EXTEND", "DECODE", "MIXED"]
        .iter()
        .find_map(|m| rest.strip_prefix(m))?;
    // `\b`: the mode word must end here.
    if !after.starts_with(|c: char| !word(c)) {
        return None;
    }
    // `[^\]]*sqsq=\d+[^\]]*\]`: before the first `]`.
    let close = after.find(']')?;
    let seg = &after[..close];
    let has = seg
        .match_indices("sqsq=")
        .any(|(k, _)| seg[k + 5..].starts_with(|c: char| c.is_ascii_digit()));
    if !has {
        return None;
    }
    // The key=value pairs come from everything between the first `[` and
    // the last `]` of the whole name.
    let body = &name[name.find('[')? + 1..name.rfind(']')?];
    Some(int_pairs(body))
}

/// `re.findall(r"(\w+)=(\[[^\]]*\](?:\.\.\.\+\d+)?|\S+)", body)` as a
/// dict: bracketed lists or runs of non-space characters.
fn atom_pairs(body: &str) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    let mut i = 0;
    while i < body.len() {
        if !body.is_char_boundary(i) || !body[i..].starts_with(word) {
            i += 1;
            continue;
        }
        let key_end = body[i..].find(|c| !word(c)).map_or(body.len(), |e| i + e);
        let value = body[key_end..].strip_prefix('=').and_then(atom_value);
        match value {
            Some(v) => {
                let key = &body[i..key_end];
                out.retain(|(k, _)| *k != key);
                out.push((key, v));
                i = key_end + 1 + v.len();
            }
            None => i = key_end.max(i + 1),
        }
    }
    out
}

/// One ATOM value at the front of `s`.
fn atom_value(s: &str) -> Option<&str> {
    if s.starts_with('[')
        && let Some(close) = s.find(']')
    {
        let mut end = close + 1;
        if let Some(tail) = s[end..].strip_prefix("...+")
            && let Some(n) = tail
                .find(|c: char| !c.is_ascii_digit())
                .or(Some(tail.len()))
            && n > 0
        {
            end += 4 + n;
        }
        return Some(&s[..end]);
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

/// An ATOM name (`^(prefill|decode)\[(.*)\]` on its first line): whether
/// it is a decode step, and its key/value pairs.
fn atom_parts(name: &str) -> Option<(bool, Vec<(&str, &str)>)> {
    let line = name.split('\n').next().unwrap_or(name);
    let (decode, rest) = match line.strip_prefix("prefill[") {
        Some(r) => (false, r),
        None => (true, line.strip_prefix("decode[")?),
    };
    let body = &rest[..rest.rfind(']')?];
    Some((decode, atom_pairs(body)))
}

/// `_safe_int(kv.get(key, 0))` over ATOM pairs.
fn atom_int(kv: &[(&str, &str)], key: &str) -> i128 {
    kv.iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| py_int(v))
        .unwrap_or(0)
}

fn atom(name: &str) -> Option<ChunkStats> {
    let (decode, kv) = atom_parts(name)?;
    let has = |k: &str| kv.iter().any(|(key, _)| *key == k);
    if !has("sqsq") || !has("sqsk") {
        return None;
    }
    let int = |k: &str| atom_int(&kv, k);
    let (sq, sk, sqsq, sqsk) = (int("tok"), int("sk"), int("sqsq"), int("sqsk"));
    let mut s = ChunkStats::default();
    if decode {
        (s.g_sq, s.g_sk, s.g_sqsq, s.g_sqsk) = (sq, sk, sqsq, sqsk);
    } else {
        (s.c_sq, s.c_sk, s.c_sqsq, s.c_sqsk) = (sq, sk, sqsq, sqsk);
    }
    Some(s)
}

/// A pattern matched at the start of a name (Python's `re.match`).
fn prefix_re(pattern: &str) -> Regex {
    Regex::new(&format!("^(?:{pattern})")).expect("a valid built-in pattern")
}

/// The detailed execution-root patterns (vLLM, ATOM, SGLang), tried first.
static DETAILED: LazyLock<[Regex; 3]> = LazyLock::new(|| {
    [
        prefix_re(
            r"execute_[0-9]+_context_[0-9]+\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\)_generation_[0-9]+\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\)",
        ),
        prefix_re(r"(prefill|decode)\[.*sqsq=[0-9]+.*\]"),
        prefix_re(r"step\[(?:EXTEND|DECODE|MIXED)\b[^\]]*sqsq=[0-9]+[^\]]*\]"),
    ]
});

/// The native execution-root patterns (vLLM, SGLang, ATOM, diffusion), used
/// when no name matches a detailed one.
static NATIVE: LazyLock<[Regex; 4]> = LazyLock::new(|| {
    [
        prefix_re(r"execute_context_([0-9]+)\(([0-9]+)\)_generation_([0-9]+)\(([0-9]+)\)"),
        prefix_re(r"step\[(?:EXTEND|DECODE|MIXED)\b.*\]"),
        prefix_re(r"(prefill|decode)\[(.*)\]"),
        prefix_re(r"execute_diffusion_([0-9]+)_([0-9]+x[0-9]+)"),
    ]
});

/// `step[<word> bs=<n>( toks=<n>)?]`: the fields of an SGLang native name.
static SGLANG_NATIVE: LazyLock<Regex> =
    LazyLock::new(|| prefix_re(r"step\[(\w+)\s+bs=([0-9]+)(?:\s+toks=([0-9]+))?\]"));

/// `capture_<bs>_<mode>`: the annotation of a capture trace.
static CAPTURE: LazyLock<Regex> = LazyLock::new(|| prefix_re(r"capture_([0-9]+)_(.*)"));

/// Which pattern tier an execution-root name matches: the reference takes
/// the roots of the first tier that matches any `user_annotation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RootTier {
    /// A detailed format (carries chunk statistics).
    Detailed,
    /// A native format, or a diffusion step.
    Native,
}

/// The tier of the execution-root patterns `name` matches, if any.
pub fn root_tier(name: &str) -> Option<RootTier> {
    if DETAILED.iter().any(|r| r.is_match(name)) {
        Some(RootTier::Detailed)
    } else if NATIVE.iter().any(|r| r.is_match(name)) {
        Some(RootTier::Native)
    } else {
        None
    }
}

/// The batch size of the step an execution-root name describes: the first
/// format that parses it decides (vLLM: context plus generation tokens;
/// SGLang: those, else `toks`, else `bs`; ATOM: `tok`; diffusion: its batch);
/// for other names the second `_`-separated field when it is an integer.
pub fn batch_size(name: &str) -> Option<i128> {
    iteration_batch_size(name).or_else(|| {
        let field = name.split('_').nth(1)?;
        let digits = field.trim_start_matches('-');
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        py_int(field)
    })
}

/// `IterationAnnotation(name).batch_size` when a format matches.
fn iteration_batch_size(name: &str) -> Option<i128> {
    if let Some(s) = vllm(name) {
        return Some(s.c_sq + s.g_sq);
    }
    if let Some(c) = NATIVE[0].captures(name) {
        let int = |i: usize| py_int(&c[i]).unwrap_or(0);
        return Some(int(2) + int(4));
    }
    if let Some(kv) = sglang_pairs(name) {
        let sum = get(&kv, "c_sq") + get(&kv, "g_sq");
        let or = |a: i128, b: i128| if a != 0 { a } else { b };
        return Some(or(or(sum, get(&kv, "toks")), get(&kv, "bs")));
    }
    if NATIVE[1].is_match(name)
        && let Some(c) = SGLANG_NATIVE.captures(name)
    {
        let bs = py_int(&c[2]).unwrap_or(0);
        let toks = c.get(3).and_then(|t| py_int(t.as_str())).unwrap_or(0);
        let sq = if &c[1] == "DECODE" { bs } else { toks };
        return Some(if sq != 0 { sq } else { bs });
    }
    if NATIVE[2].is_match(name)
        && let Some((_, kv)) = atom_parts(name)
    {
        return Some(atom_int(&kv, "tok"));
    }
    NATIVE[3].captures(name).and_then(|c| py_int(&c[1]))
}

/// The batch size and mode of a capture annotation (`capture_32_FULL` →
/// 32, `FULL`); the mode is the raw rest of the first line.
pub fn capture_annotation(name: &str) -> Option<(i128, &str)> {
    let c = CAPTURE.captures(name)?;
    let bs = py_int(&c[1])?;
    Some((bs, c.get(2).map_or("", |m| m.as_str())))
}

/// The request and token counts of one serving step, as its execution-root
/// name gives them (the reference's `IterationAnnotation.iter_details()`):
/// a name no format parses counts as one decode request of batch 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepCounts {
    /// Tokens in the step's batch.
    pub batch_size: i128,
    /// Prefill (context) requests.
    pub context_requests: i128,
    /// Prefill tokens.
    pub context_sum: i128,
    /// Decode (generation) requests.
    pub generation_requests: i128,
    /// Decode tokens.
    pub generation_sum: i128,
}

impl StepCounts {
    /// The counts of a name no format parses: one decode-equivalent step.
    const UNPARSED: StepCounts = StepCounts {
        batch_size: 1,
        context_requests: 0,
        context_sum: 0,
        generation_requests: 1,
        generation_sum: 1,
    };

    /// Requests in the step (prefill plus decode).
    pub fn num_requests(&self) -> i128 {
        self.context_requests + self.generation_requests
    }

    /// The step runs at least one prefill request.
    pub fn has_context(&self) -> bool {
        self.context_requests > 0
    }

    /// The step runs at least one decode request.
    pub fn has_generation(&self) -> bool {
        self.generation_requests > 0
    }

    /// Prefill and decode requests in one step.
    pub fn is_mixed(&self) -> bool {
        self.has_context() && self.has_generation()
    }

    /// Decode requests only.
    pub fn is_decode_only(&self) -> bool {
        self.has_generation() && !self.has_context()
    }

    /// Prefill requests only.
    pub fn is_prefill_only(&self) -> bool {
        self.has_context() && !self.has_generation()
    }

    /// The step's phase as the reference names it: `prefilldecode`,
    /// `prefill_only` or `decode_only`; None for a step with no request.
    pub fn phase(&self) -> Option<&'static str> {
        match (self.has_context(), self.has_generation()) {
            (true, true) => Some("prefilldecode"),
            (true, false) => Some("prefill_only"),
            (false, true) => Some("decode_only"),
            (false, false) => None,
        }
    }
}

/// The counts of the step an execution-root name describes: the first
/// format (in the reference's priority order) whose pattern matches and
/// whose fields parse decides.
pub fn step_counts(name: &str) -> StepCounts {
    let zero = StepCounts {
        batch_size: 0,
        context_requests: 0,
        context_sum: 0,
        generation_requests: 0,
        generation_sum: 0,
    };
    if DETAILED[0].is_match(name) {
        let t = tokens(name);
        let (c_sq, g_sq) = (t(5), t(13));
        return StepCounts {
            batch_size: c_sq + g_sq,
            context_requests: t(3),
            context_sum: c_sq,
            generation_requests: t(11),
            generation_sum: g_sq,
        };
    }
    if NATIVE[0].is_match(name) {
        let t = tokens(name);
        let (c_sum, g_sum) = (t(3), t(7));
        return StepCounts {
            batch_size: c_sum + g_sum,
            context_requests: t(2),
            context_sum: c_sum,
            generation_requests: t(6),
            generation_sum: g_sum,
        };
    }
    if let Some(kv) = sglang_pairs(name) {
        let body = &name[name.find('[').unwrap_or(0) + 1..name.rfind(']').unwrap_or(name.len())];
        let mode = body.split_whitespace().next().unwrap_or("");
        let v = |k: &str| get(&kv, k);
        let (c_sq, g_sq) = (v("c_sq"), v("g_sq"));
        let mut s = zero;
        match mode {
            "DECODE" => (s.generation_requests, s.generation_sum) = (v("bs"), g_sq),
            "EXTEND" => (s.context_requests, s.context_sum) = (v("bs"), c_sq),
            _ => {
                (s.context_requests, s.generation_requests) = (v("c"), v("g"));
                (s.context_sum, s.generation_sum) = (c_sq, g_sq);
            }
        }
        s.batch_size = first_nonzero(&[c_sq + g_sq, v("toks"), v("bs")]);
        return s;
    }
    if NATIVE[1].is_match(name)
        && let Some(c) = SGLANG_NATIVE.captures(name)
    {
        let bs = py_int(&c[2]).unwrap_or(0);
        let toks = c.get(3).and_then(|t| py_int(t.as_str())).unwrap_or(0);
        let mut s = zero;
        if &c[1] == "DECODE" {
            (s.generation_requests, s.generation_sum) = (bs, bs);
            s.batch_size = first_nonzero(&[bs, bs]);
        } else {
            (s.context_requests, s.context_sum) = (bs, toks);
            s.batch_size = first_nonzero(&[toks, bs]);
        }
        return s;
    }
    if (DETAILED[1].is_match(name) || NATIVE[2].is_match(name))
        && let Some((decode, kv)) = atom_parts(name)
    {
        let bs = kv
            .iter()
            .find(|(k, _)| *k == "bs")
            .map_or(0, |(_, v)| first_int(v));
        let tok = atom_int(&kv, "tok");
        let mut s = zero;
        if decode {
            (s.generation_requests, s.generation_sum) = (bs, tok);
        } else {
            (s.context_requests, s.context_sum) = (bs, tok);
        }
        s.batch_size = tok;
        return s;
    }
    if let Some(c) = NATIVE[3].captures(name) {
        return StepCounts {
            batch_size: py_int(&c[1]).unwrap_or(0),
            ..zero
        };
    }
    StepCounts::UNPARSED
}

/// The first non-zero value (Python's `a or b or c`), else the last.
fn first_nonzero(values: &[i128]) -> i128 {
    values
        .iter()
        .copied()
        .find(|v| *v != 0)
        .unwrap_or(*values.last().unwrap_or(&0))
}

/// The first run of digits in `text` as an integer (0 without one): the
/// real batch of a CUDA-graph padded `bs=117/128`.
fn first_int(text: &str) -> i128 {
    let Some(start) = text.find(|c: char| c.is_ascii_digit()) else {
        return 0;
    };
    digits(&text[start..]).map_or(0, |(v, _)| v)
}

/// The reference's tokens of a vLLM name: `(` and `)` become `_`, every
/// run of the letters s, q, k becomes `_`, split on `_`; field `i` as an
/// integer (0 when absent or not one).
fn tokens(name: &str) -> impl Fn(usize) -> i128 {
    let mut flat = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        let c = if c == '(' || c == ')' { '_' } else { c };
        if matches!(c, 's' | 'q' | 'k') {
            if !in_run {
                flat.push('_');
            }
            in_run = true;
        } else {
            flat.push(c);
            in_run = false;
        }
    }
    let fields: Vec<i128> = flat.split('_').map(|f| py_int(f).unwrap_or(0)).collect();
    move |i| fields.get(i).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected counts printed by the reference's `IterationAnnotation`
    /// on the same names: [batch, context requests, context tokens,
    /// generation requests, generation tokens].
    #[test]
    fn step_counts_follow_each_format_as_the_reference_reads_it() {
        let cases: [(&str, [i128; 5]); 14] = [
            (
                "execute_7_context_3(sq128sk256sqsq1sqsk1)_generation_2(sq1sk300sqsq1sqsk1)",
                [129, 3, 128, 2, 1],
            ),
            (
                "execute_context_2(14721)_generation_3(3)",
                [14724, 2, 14721, 3, 3],
            ),
            (
                "step[EXTEND bs=2 toks=14721 c_sq=14721 c_sqsq=108745533 c_sqsk=108745533 c_sk=14721]",
                [14721, 2, 14721, 0, 0],
            ),
            (
                "step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]",
                [128, 0, 0, 64, 128],
            ),
            (
                "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
                [6, 1, 5, 1, 1],
            ),
            ("step[DECODE bs=32]", [32, 0, 0, 32, 32]),
            ("step[EXTEND bs=2 toks=14721]", [14721, 2, 14721, 0, 0]),
            ("step[MIXED bs=2]", [2, 2, 0, 0, 0]),
            (
                "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]",
                [14721, 2, 14721, 0, 0],
            ),
            ("decode[bs=117/128 tok=117 d=117]", [117, 0, 0, 117, 117]),
            (
                "prefill[bs=6 tok=17408 ctx=[4096, 4096, 4096]...+3]",
                [17408, 6, 17408, 0, 0],
            ),
            ("execute_diffusion_4_1024x1024", [4, 0, 0, 0, 0]),
            ("aten::mm", [1, 0, 0, 1, 1]),
            ("step[DECODE bs=x]", [1, 0, 0, 1, 1]),
        ];
        for (name, want) in cases {
            let c = step_counts(name);
            let got = [
                c.batch_size,
                c.context_requests,
                c.context_sum,
                c.generation_requests,
                c.generation_sum,
            ];
            assert_eq!(got, want, "{name}");
        }
        let mixed = step_counts("step[MIXED bs=2 c=1 g=1 c_sq=5 c_sqsq=25 g_sq=1]");
        assert!(mixed.is_mixed() && !mixed.is_decode_only() && !mixed.is_prefill_only());
        assert_eq!(mixed.num_requests(), 2);
    }

    fn stats(c: [i128; 4], g: [i128; 4]) -> ChunkStats {
        ChunkStats {
            c_sq: c[0],
            c_sk: c[1],
            c_sqsq: c[2],
            c_sqsk: c[3],
            g_sq: g[0],
            g_sk: g[1],
            g_sqsq: g[2],
            g_sqsk: g[3],
        }
    }

    /// Each name's chunk statistics (None: the name carries none).
    fn check(cases: &[(&str, Option<ChunkStats>)]) {
        for (name, expected) in cases {
            assert_eq!(chunk_stats(name), *expected, "{name}");
        }
    }

    #[test]
    fn vllm_detailed_annotations() {
        check(&[
            (
                "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
                Some(stats([0; 4], [32, 55086, 32, 55086])),
            ),
            (
                "execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3(sq3sk6144sqsq3sqsk6144)_tail",
                Some(stats([6144, 7144, 20971520, 23019520], [3, 6144, 3, 6144])),
            ),
            // The native format has no sq/sk sums.
            ("execute_context_2(6144)_generation_3(3)", None),
            ("execute_diffusion_1_1024x1024", None),
            ("None", None),
        ]);
    }

    #[test]
    fn sglang_detailed_annotations() {
        check(&[
            (
                "step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]",
                Some(stats([0; 4], [128, 131072, 256, 262144])),
            ),
            (
                "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
                Some(stats([5, 8, 25, 40], [1, 12, 1, 12])),
            ),
            // Without sqsq= there are no sums; nor when the mode word runs on.
            ("step[DECODE bs=32]", None),
            ("step[DECODEX g_sqsq=1]", None),
        ]);
    }

    #[test]
    fn atom_detailed_annotations() {
        check(&[
            (
                "decode[bs=32 tok=128 d=32 spec=3 sqsq=512 sqsk=262144 sk=65536]",
                Some(stats([0; 4], [128, 65536, 512, 262144])),
            ),
            (
                "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]",
                Some(stats([14721, 14721, 108745533, 108745533], [0; 4])),
            ),
            ("decode[bs=117/128 tok=117 d=117]", None),
        ]);
    }

    #[test]
    fn root_tiers() {
        let vllm =
            "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)";
        assert_eq!(root_tier(vllm), Some(RootTier::Detailed));
        assert_eq!(
            root_tier("step[DECODE bs=64 g_sqsq=256]"),
            Some(RootTier::Detailed)
        );
        assert_eq!(root_tier("decode[bs=1 sqsq=5]"), Some(RootTier::Detailed));
        assert_eq!(
            root_tier("execute_context_2(6144)_generation_3(3)"),
            Some(RootTier::Native)
        );
        assert_eq!(root_tier("step[MIXED bs=2]"), Some(RootTier::Native));
        assert_eq!(root_tier("decode[bs=1]"), Some(RootTier::Native));
        assert_eq!(
            root_tier("execute_diffusion_1_256x256"),
            Some(RootTier::Native)
        );
        // Prefix match: a tail is allowed, a head is not.
        assert_eq!(
            root_tier("execute_diffusion_1_256x256_x"),
            Some(RootTier::Native)
        );
        assert_eq!(root_tier("x_execute_diffusion_1_256x256"), None);
        assert_eq!(root_tier("step[DECODEX bs=1]"), None);
        assert_eq!(root_tier("capture_32_FULL"), None);
    }

    #[test]
    fn batch_sizes() {
        // vLLM detailed: c_sq + g_sq (0 + 32).
        assert_eq!(
            batch_size(
                "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"
            ),
            Some(32)
        );
        // vLLM native: the two parenthesised token counts, 6144 + 3.
        assert_eq!(
            batch_size("execute_context_2(6144)_generation_3(3)"),
            Some(6147)
        );
        // SGLang detailed: c_sq + g_sq, else toks, else bs.
        assert_eq!(
            batch_size("step[DECODE bs=64 g_sq=128 g_sqsq=256]"),
            Some(128)
        );
        assert_eq!(batch_size("step[EXTEND bs=2 toks=9 c_sqsq=4]"), Some(9));
        assert_eq!(batch_size("step[EXTEND bs=2 c_sqsq=4]"), Some(2));
        // SGLang native: DECODE -> bs; EXTEND -> toks, or bs when 0.
        assert_eq!(batch_size("step[DECODE bs=64]"), Some(64));
        assert_eq!(batch_size("step[EXTEND bs=2 toks=14721]"), Some(14721));
        assert_eq!(batch_size("step[MIXED bs=2]"), Some(2));
        // ATOM: tok (detailed or not).
        assert_eq!(batch_size("decode[bs=117/128 tok=117 d=117]"), Some(117));
        assert_eq!(batch_size("prefill[bs=2 ctx=[1, 2]]"), Some(0));
        // Diffusion: its batch.
        assert_eq!(batch_size("execute_diffusion_4_256x256"), Some(4));
        // Other names: the second `_` field when an integer.
        assert_eq!(batch_size("run_8_steps"), Some(8));
        assert_eq!(batch_size("run_-3"), Some(-3));
        assert_eq!(batch_size("run_x"), None);
        assert_eq!(batch_size("step[EXTEND bs=2 toks=x]"), None);
        assert_eq!(batch_size("plain"), None);
    }

    #[test]
    fn capture_annotations() {
        assert_eq!(capture_annotation("capture_32_FULL"), Some((32, "FULL")));
        assert_eq!(
            capture_annotation("capture_256_mixed_prefill"),
            Some((256, "mixed_prefill"))
        );
        assert_eq!(capture_annotation("capture_x_FULL"), None);
        assert_eq!(capture_annotation("my_capture_1_FULL"), None);
    }
}
