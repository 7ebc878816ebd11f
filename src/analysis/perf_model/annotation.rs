//! Chunk statistics of an inference step, read from the name of the
//! `user_annotation` range the serving engine records around it (the
//! reference's `IterationAnnotation.chunk_stats`).
//!
//! Three formats carry them; the first that matches at the start of the
//! name decides (other formats, e.g. `execute_context_2(6144)_generation_3(3)`
//! or `step[DECODE bs=64]`, carry none):
//!
//! * vLLM: `execute_<n>_context_<r>(sq<a>sk<b>sqsq<c>sqsk<d>)_generation_<r>(sq…sk…sqsq…sqsk…)`;
//! * SGLang: `step[EXTEND|DECODE|MIXED …]` with `sqsq=<digits>` before the
//!   first `]`, then `key=<digits>` pairs (`c_sq=…`, `g_sk=…`; absent ones 0);
//! * ATOM: `prefill[…]` / `decode[…]` with both `sqsq=` and `sqsk=` keys:
//!   `tok` is the phase's `sq`, `sk`/`sqsq`/`sqsk` its other sums.
//!
//! Digits are ASCII here (Python's `\d` also takes other scripts' digits).

use super::elementwise::py_int;

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
    let kv = int_pairs(body);
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

fn atom(name: &str) -> Option<ChunkStats> {
    let line = name.split('\n').next().unwrap_or(name);
    let (decode, rest) = match line.strip_prefix("prefill[") {
        Some(r) => (false, r),
        None => (true, line.strip_prefix("decode[")?),
    };
    let body = &rest[..rest.rfind(']')?];
    let kv = atom_pairs(body);
    let find = |k: &str| kv.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    if find("sqsq").is_none() || find("sqsk").is_none() {
        return None;
    }
    let int = |k: &str| find(k).and_then(|v| py_int(v).ok()).unwrap_or(0);
    let (sq, sk, sqsq, sqsk) = (int("tok"), int("sk"), int("sqsq"), int("sqsk"));
    let mut s = ChunkStats::default();
    if decode {
        (s.g_sq, s.g_sk, s.g_sqsq, s.g_sqsk) = (sq, sk, sqsq, sqsk);
    } else {
        (s.c_sq, s.c_sk, s.c_sqsq, s.c_sqsk) = (sq, sk, sqsq, sqsk);
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
