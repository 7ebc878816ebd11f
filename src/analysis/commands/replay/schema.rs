//! The ATen operator schemas replay matches traced ops against: a table
//! dumped once from `torch._C._jit_get_all_schemas()` (aten:: only; the
//! torch version is on its first line), parsed on first use.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

/// The bundled schema table, one schema string per line.
const TABLE: &str = include_str!("aten_schemas.txt");

/// One argument of a schema: `<type> <name>[=<default>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaArg {
    /// The type as written: `Tensor`, `Tensor(a!)`, `Scalar?`, `SymInt[2]`, …
    pub ty: String,
    /// The argument's name.
    pub name: String,
    /// The default as written (`None`, `1`, `"none"`), if any.
    pub default: Option<String>,
}

/// One operator overload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    /// The op name without overload: `aten::add`.
    pub name: String,
    /// The overload name (`Tensor`, `out`, …); empty for the default one.
    pub overload: String,
    /// Arguments before the `*`.
    pub positional: Vec<SchemaArg>,
    /// Keyword-only arguments (after the `*`).
    pub keyword: Vec<SchemaArg>,
    /// The schema as torch prints it.
    pub text: String,
}

impl Schema {
    /// Every argument, positional first.
    pub fn args(&self) -> impl Iterator<Item = &SchemaArg> {
        self.positional.iter().chain(&self.keyword)
    }

    /// Number of arguments.
    pub fn arity(&self) -> usize {
        self.positional.len() + self.keyword.len()
    }
}

/// Splits `text` at commas outside brackets and quotes (a default such as
/// `int[2] stride=[1, 1]` keeps its comma).
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '[' | '(' if !quoted => depth += 1,
            ']' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// One argument from `<type> <name>[=<default>]`.
fn parse_arg(text: &str) -> Option<SchemaArg> {
    let (decl, default) = match text.split_once('=') {
        Some((d, v)) => (d.trim(), Some(v.trim().to_string())),
        None => (text.trim(), None),
    };
    let (ty, name) = decl.rsplit_once(' ')?;
    Some(SchemaArg {
        ty: ty.trim().to_string(),
        name: name.trim().to_string(),
        default,
    })
}

/// Parses `name[.overload](args) -> returns`; None for a line that is not
/// a schema of this shape (varargs `(...)` included).
pub fn parse(line: &str) -> Option<Schema> {
    let open = line.find('(')?;
    let close = line.rfind(") ->")?;
    let full = &line[..open];
    let (name, overload) = full.split_once('.').unwrap_or((full, ""));
    let args = &line[open + 1..close];
    if args.contains("...") {
        return None;
    }
    let mut positional = Vec::new();
    let mut keyword = Vec::new();
    let mut after_star = false;
    for part in split_top_level(args) {
        if part == "*" {
            after_star = true;
            continue;
        }
        let arg = parse_arg(part)?;
        if after_star {
            keyword.push(arg);
        } else {
            positional.push(arg);
        }
    }
    Some(Schema {
        name: name.to_string(),
        overload: overload.to_string(),
        positional,
        keyword,
        text: line.to_string(),
    })
}

/// Every overload of each op name, in torch's order.
pub fn table() -> &'static FxHashMap<String, Vec<Schema>> {
    static TABLE_BY_NAME: OnceLock<FxHashMap<String, Vec<Schema>>> = OnceLock::new();
    TABLE_BY_NAME.get_or_init(|| {
        let mut by_name: FxHashMap<String, Vec<Schema>> = FxHashMap::default();
        for s in TABLE
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(parse)
        {
            by_name.entry(s.name.clone()).or_default().push(s);
        }
        by_name
    })
}

/// The torch version the table was dumped from.
pub fn torch_version() -> &'static str {
    TABLE
        .lines()
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .unwrap_or("unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_positional_keyword_and_defaults_with_commas() {
        let s = parse("aten::slow_conv3d(Tensor self, Tensor weight, SymInt[3] kernel_size, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], *, Tensor(a!) out) -> Tensor(a!)").unwrap();
        assert_eq!(
            (s.name.as_str(), s.overload.as_str()),
            ("aten::slow_conv3d", "")
        );
        let names: Vec<&str> = s.positional.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["self", "weight", "kernel_size", "bias", "stride"]);
        assert_eq!(s.positional[4].ty, "SymInt[3]");
        assert_eq!(
            s.keyword,
            [SchemaArg {
                ty: "Tensor(a!)".into(),
                name: "out".into(),
                default: None
            }]
        );
        assert_eq!(s.positional[4].default.as_deref(), Some("[1, 1, 1]"));
        let add = parse("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
            .unwrap();
        assert_eq!(add.overload, "Tensor");
        assert_eq!(add.arity(), 3);
        assert!(parse("aten::has_torch_function(...) -> bool").is_none());
    }

    #[test]
    fn the_table_holds_every_overload_in_order() {
        let addmm = &table()["aten::addmm"];
        assert_eq!(addmm[0].overload, "");
        assert!(addmm.iter().any(|s| s.overload == "out"));
        assert!(table()["aten::add"].iter().any(|s| s.overload == "Tensor"));
        assert!(torch_version().starts_with("2."));
    }
}
