//! The per-instruction records the reference derives from an HLO module
//!: it has xprof print the module as text and parses each
//! line with regular expressions. We render the few parts of a line that
//! the parser reads from the decoded `HloProto` and run the same
//! expressions on them, so the records (and their quirks) come out as the
//! reference's:
//!
//! - the `ROOT` instruction of every computation gets no record;
//! - only lines mentioning one of a few type names (`bf16`, `f32`, `s32`,
//!   `pred`, …) or `get-tuple-element` get one, so an instruction whose
//!   line shows only `u8` or `s8` types has none;
//! - an operand is replaced by its defining instruction's output text,
//!   except at positions 5, 10, 15, … where XLA prints a `/*index=N*/`
//!   comment in front of the name and the reference leaves the text as is.
//!
//! What we do not render (instruction attributes such as `dimensions=`,
//! literals of constants, parameter numbers, computation header lines)
//! never reaches a record field a sheet reads; `docs/deviations.md` lists it.

use std::sync::OnceLock;

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::trace::xla::{HloInstruction, HloModule, HloShape};

/// What the reference keeps of one HLO instruction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HloRecord {
    /// The output shape text without spaces, e.g.
    /// `(bf16[1,5120,34,31,53]{4,3,2,1,0},u8[7150336]{0})`.
    pub output: String,
    /// One text per operand: the operand's output text, or the raw text
    /// where it was not resolved (`/*index=5*/%x`, literals).
    pub operands: Vec<String>,
    /// A GEMM custom call (target mentions `matmul` or `cublas`).
    pub gemm: bool,
    /// The GEMM's element type (`bf16`, `f16`, `f32`, `f8`, `fp8`), when
    /// it is a GEMM and the type was found.
    pub gemm_type: Option<String>,
    /// `backend_config={…`, cut at the first character the reference's
    /// expression does not accept.
    pub backend_config: Option<String>,
    /// `custom_call_target="…"`, quotes included.
    pub custom_call_target: Option<String>,
}

/// The records of one module by key (`%` + instruction name), and what
/// went wrong building them.
#[derive(Debug, Clone, Default)]
pub struct ModuleRecords {
    records: FxHashMap<String, HloRecord>,
    /// Messages about instructions the reference would have stopped on.
    pub warnings: Vec<String>,
}

/// The text name of an XLA `PrimitiveType` (`xla_data.proto`).
pub fn element_type_name(t: i32) -> &'static str {
    match t {
        1 => "pred",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        12 => "f64",
        13 => "tuple",
        14 => "opaque",
        15 => "c64",
        16 => "bf16",
        17 => "token",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        21 => "s4",
        22 => "u4",
        23 => "f8e4m3b11fnuz",
        24 => "f8e5m2fnuz",
        25 => "f8e4m3fnuz",
        26 => "s2",
        27 => "u2",
        28 => "f8e4m3",
        29 => "f8e3m4",
        30 => "s1",
        31 => "u1",
        32 => "f4e2m1fn",
        33 => "f8e8m0fnu",
        _ => "invalid",
    }
}

/// XLA's text of a shape: `bf16[1,2]{1,0}`, `f32[]` (no layout for
/// scalars), tuples as `(s0, s1)`.
pub fn shape_text(s: &HloShape) -> String {
    if s.element_type == 13 {
        let parts: Vec<String> = s.tuple.iter().map(shape_text).collect();
        return format!("({})", parts.join(", "));
    }
    let dims: Vec<String> = s.dims.iter().map(i64::to_string).collect();
    let mut out = format!("{}[{}]", element_type_name(s.element_type), dims.join(","));
    if let Some(layout) = s.minor_to_major.as_ref().filter(|_| !s.dims.is_empty()) {
        let l: Vec<String> = layout.iter().map(i64::to_string).collect();
        out.push_str(&format!("{{{}}}", l.join(",")));
    }
    out
}

/// An array shape with XLA's default (row-major) layout.
pub fn array_shape(element_type: i32, dims: &[i64]) -> HloShape {
    HloShape {
        element_type,
        dims: dims.to_vec(),
        minor_to_major: Some((0..dims.len() as i64).rev().collect()),
        tuple: Vec::new(),
    }
}

/// A tuple shape.
pub fn tuple_shape(parts: Vec<HloShape>) -> HloShape {
    HloShape {
        element_type: 13,
        tuple: parts,
        ..Default::default()
    }
}

/// An instruction with the fields every one has (no target, no config).
pub fn instruction(
    id: i64,
    name: &str,
    opcode: &str,
    shape: HloShape,
    operand_ids: &[i64],
) -> HloInstruction {
    HloInstruction {
        id,
        name: name.to_string(),
        opcode: opcode.to_string(),
        shape,
        operand_ids: operand_ids.to_vec(),
        ..Default::default()
    }
}

/// A regular expression compiled once.
fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

/// The substrings that make the reference parse a line.
const LINE_HINTS: [&str; 11] = [
    "get-tuple-element",
    "bf16",
    "f8",
    "f16",
    "f32",
    "f64",
    "s32",
    "s64",
    "u32",
    "u64",
    "pred",
];

/// Whether the reference parses a (stripped) line: not a module header or
/// `ROOT` line; one with `metadata` not ending in `)`, or one mentioning a
/// type hint.
pub fn parses_line(line: &str) -> bool {
    if line.is_empty() || line.starts_with("HloModule ") || line.starts_with("ROOT") {
        return false;
    }
    if line.contains("metadata") && !line.ends_with(')') {
        return true;
    }
    LINE_HINTS.iter().any(|h| line.contains(h))
}

/// The line of an instruction as xprof prints it, without the attributes
/// no record field reads: `%name = SHAPE opcode(%a, %b), custom_call_target=…,
/// backend_config=…`. Operand `i` (for `i` a positive multiple of 5)
/// carries XLA's `/*index=i*/` comment.
pub fn instruction_line(inst: &HloInstruction, operand_name: impl Fn(i64) -> String) -> String {
    let operands: Vec<String> = inst
        .operand_ids
        .iter()
        .enumerate()
        .map(|(i, &id)| {
            let comment = if i > 0 && i % 5 == 0 {
                format!("/*index={i}*/")
            } else {
                String::new()
            };
            format!("{comment}%{}", operand_name(id))
        })
        .collect();
    let mut line = format!(
        "%{} = {} {}({})",
        inst.name,
        shape_text(&inst.shape),
        inst.opcode,
        operands.join(", ")
    );
    if let Some(t) = &inst.custom_call_target {
        line.push_str(&format!(", custom_call_target=\"{t}\""));
    }
    if let Some(bc) = inst.backend_config.as_deref().filter(|b| !b.is_empty()) {
        if bc.starts_with('{') {
            line.push_str(&format!(", backend_config={bc}"));
        } else {
            line.push_str(&format!(", backend_config={:?}", bc));
        }
    }
    line
}

/// The reference's normalisation before it splits a line at spaces:
/// `),` to `)`, `, ` to `,`, ` %` to `%`.
fn squeeze(line: &str) -> String {
    line.replace("),", ")")
        .replace(", ", ",")
        .replace(" %", "%")
}

/// `get_operands`: the text between the first `(` and the next `)`, as the
/// shape tokens it holds (`bf16[…]{…}`) when there are any, else split at
/// commas.
fn operand_texts(token: &str) -> Vec<String> {
    static OPEN: OnceLock<Regex> = OnceLock::new();
    static CLOSE: OnceLock<Regex> = OnceLock::new();
    static TOKENS: OnceLock<Regex> = OnceLock::new();
    let s = re(&OPEN, r"^.*?\(").replace(token, "");
    let s = re(&CLOSE, r"\).*$").replace(&s, "");
    let found: Vec<String> = re(&TOKENS, r"[bfs][0-9\[\]{,a-z]*\}")
        .find_iter(&s)
        .map(|m| m.as_str().to_string())
        .collect();
    if found.is_empty() {
        s.split(',').map(str::to_string).collect()
    } else {
        found
    }
}

/// The record fields a line yields (`get_dict`), before operand
/// resolution and the GEMM type; None for a line too short to split.
pub fn parse_line(line: &str) -> Option<(String, HloRecord)> {
    static BACKEND: OnceLock<Regex> = OnceLock::new();
    static TARGET: OnceLock<Regex> = OnceLock::new();
    let line = squeeze(line);
    let backend = re(
        &BACKEND,
        r#"backend_config=\{[a-zA-Z_="()/ @.,:\[\]{}0-9-]*"#,
    )
    .find(&line)
    .map(|m| m.as_str().to_string());
    let target = re(&TARGET, r#"custom_call_target="[a-zA-Z_="()/ @.$0-9-]*"#)
        .find(&line)
        .map(|m| m.as_str().to_string());
    let tokens: Vec<&str> = line.split(' ').collect();
    if tokens.len() < 4 {
        return None;
    }
    let gemm = target
        .as_deref()
        .is_some_and(|t| t.contains("matmul") || t.contains("cublas"));
    let rec = HloRecord {
        output: tokens[2].to_string(),
        operands: operand_texts(tokens[3]),
        gemm,
        gemm_type: None,
        backend_config: backend,
        custom_call_target: target,
    };
    Some((tokens[0].to_string(), rec))
}

/// The dtypes the GEMM type is read from, in the order they are tested.
const GEMM_DTYPES: [&str; 5] = ["bf16", "f16", "f32", "f8", "fp8"];

/// The GEMM dtype a text starts with.
pub fn gemm_dtype_prefix(text: &str) -> Option<&'static str> {
    GEMM_DTYPES.iter().copied().find(|t| text.starts_with(t))
}

/// `get_operand_type`: the type of an operand reference, from the output
/// of the record it names (records made so far); Err when it has none.
fn operand_type(
    records: &FxHashMap<String, HloRecord>,
    operand: &str,
) -> Result<Option<&'static str>, String> {
    if let Some(t) = gemm_dtype_prefix(operand) {
        return Ok(Some(t));
    }
    match records.get(operand) {
        Some(r) => Ok(gemm_dtype_prefix(&r.output)),
        None => Err(format!("no record for GEMM operand {operand}")),
    }
}

/// The `type` of a GEMM record: `fp8` for an `f8` target, else the common
/// type of its operands (the reference stops on a mismatch; we leave the
/// type out and say so).
fn gemm_type(
    records: &FxHashMap<String, HloRecord>,
    rec: &HloRecord,
) -> Result<Option<String>, String> {
    if rec
        .custom_call_target
        .as_deref()
        .is_some_and(|t| t.contains("f8"))
    {
        return Ok(Some("fp8".to_string()));
    }
    let Some(first) = rec.operands.first() else {
        return Ok(None);
    };
    let t = operand_type(records, first)?;
    for o in &rec.operands[1..] {
        if operand_type(records, o)? != t {
            return Err("GEMM operand types differ".to_string());
        }
    }
    Ok(t.map(str::to_string))
}

impl ModuleRecords {
    /// The records of every instruction of `module` the reference parses.
    pub fn build(module: &HloModule) -> ModuleRecords {
        let mut out = ModuleRecords::default();
        let names: FxHashMap<i64, &str> = module
            .computations
            .iter()
            .flat_map(|c| c.instructions.iter().map(|i| (i.id, i.name.as_str())))
            .collect();
        let name_of = |id: i64| names.get(&id).map_or(format!("#{id}"), |n| n.to_string());
        for comp in &module.computations {
            for inst in &comp.instructions {
                if inst.id == comp.root_id {
                    continue;
                }
                let line = instruction_line(inst, name_of);
                if !parses_line(&line) {
                    continue;
                }
                let Some((key, mut rec)) = parse_line(&line) else {
                    continue;
                };
                if rec.gemm {
                    match gemm_type(&out.records, &rec) {
                        Ok(t) => rec.gemm_type = t,
                        Err(e) => out
                            .warnings
                            .push(format!("{} {}: {e}", module.name, inst.name)),
                    }
                }
                out.records.insert(key, rec);
            }
        }
        out.resolve_operands();
        out
    }

    /// Replaces each `%name` operand by the output text of its record.
    fn resolve_operands(&mut self) {
        let outputs: FxHashMap<String, String> = self
            .records
            .iter()
            .map(|(k, r)| (k.clone(), r.output.clone()))
            .collect();
        for rec in self.records.values_mut() {
            for o in &mut rec.operands {
                if o.starts_with('%')
                    && let Some(out) = outputs.get(o.as_str())
                {
                    *o = out.clone();
                }
            }
        }
    }

    /// The record under `key` (`%` + name).
    pub fn get(&self, key: &str) -> Option<&HloRecord> {
        self.records.get(key)
    }

    /// The keys starting with `prefix`, sorted.
    fn sorted_keys_with(&self, prefix: &str) -> Vec<&str> {
        let mut keys: Vec<&str> = self
            .records
            .keys()
            .map(String::as_str)
            .filter(|k| k.starts_with(prefix))
            .collect();
        keys.sort_unstable();
        keys
    }

    /// The `-start` keys of an async collective family, or its `-done`
    /// keys when it has no start keys.
    fn collective_keys(&self, family: &str) -> Vec<&str> {
        let start = self.sorted_keys_with(&format!("%{family}-start"));
        if start.is_empty() {
            self.sorted_keys_with(&format!("%{family}-done"))
        } else {
            start
        }
    }

    /// The aliases of numbered collective ops of the trace (`all-gather.3`)
    /// that the module has no record of: sorted by number, mapped in turn
    /// onto the family's sorted `-start` keys (the extra ones onto the last).
    pub fn collective_aliases<'a>(
        &self,
        trace_ops: impl IntoIterator<Item = &'a str>,
    ) -> FxHashMap<String, String> {
        let ops: std::collections::BTreeSet<String> =
            trace_ops.into_iter().map(normalise_key).collect();
        let mut aliases = FxHashMap::default();
        for family in COLLECTIVE_FAMILIES {
            let prefix = format!("%{family}.");
            let mut numbered: Vec<(u64, &String)> = ops
                .iter()
                .filter(|k| !self.records.contains_key(k.as_str()))
                .filter_map(|k| {
                    let n = k.strip_prefix(&prefix)?;
                    let all_digits = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
                    all_digits.then(|| (n.parse().unwrap_or(u64::MAX), k))
                })
                .collect();
            let keys = self.collective_keys(family);
            if numbered.is_empty() || keys.is_empty() {
                continue;
            }
            numbered.sort();
            for (i, (_, k)) in numbered.iter().enumerate() {
                let target = keys[i.min(keys.len() - 1)];
                aliases.insert((*k).clone(), target.to_string());
            }
        }
        aliases
    }

    /// The key of the record of a trace's `hlo_op` (`resolve_hlo_op_key`):
    /// exact, then through `aliases`, then a numbered collective's first
    /// `-start` key.
    pub fn lookup_key<'s>(
        &'s self,
        hlo_op: &str,
        aliases: &'s FxHashMap<String, String>,
    ) -> Option<&'s str> {
        let key = normalise_key(hlo_op);
        if let Some((k, _)) = self.records.get_key_value(&key) {
            return Some(k);
        }
        if let Some(a) = aliases
            .get(&key)
            .filter(|a| self.records.contains_key(a.as_str()))
        {
            return Some(a);
        }
        let bare = key.trim_start_matches('%');
        let (family, n) = bare.rsplit_once('.')?;
        let numbered = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        if numbered && COLLECTIVE_FAMILIES.contains(&family) {
            return self.collective_keys(family).first().copied();
        }
        None
    }
}

/// The async collective families whose trace names differ from the HLO's.
const COLLECTIVE_FAMILIES: [&str; 3] = ["all-to-all", "reduce-scatter", "all-gather"];

/// `%` + op, unless it starts with `%` already.
fn normalise_key(op: &str) -> String {
    if op.starts_with('%') {
        op.to_string()
    } else {
        format!("%{op}")
    }
}

#[cfg(test)]
mod tests;
