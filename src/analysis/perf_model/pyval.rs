//! Python semantics shared by every model: the one number type ([`Num`],
//! ints exact until a float enters, as Python's are), the one literal
//! parser ([`literal_eval`], with `int()`, `float()` and `eval()` of
//! recorded texts), and the one reader of an op's recorded arguments
//! ([`Rec`]). Every reader fails where the reference's indexing, unpacking
//! or arithmetic would raise (a [`ModelError::Invalid`]).

use super::{
    Evaluation, ModelError, ModelResult, OpInput, Precision, Py, bytes_per_element, precision_of,
};
use crate::trace::ArgValue;

/// Shorthand for an [`ModelError::Invalid`] result.
pub(super) fn invalid<T>(msg: impl Into<String>) -> ModelResult<T> {
    Err(ModelError::Invalid(msg.into()))
}

/// `e`, unless a backward model is asked for: the class has none.
pub(super) fn forward_only(bwd: bool, e: Evaluation) -> ModelResult<Evaluation> {
    if bwd {
        return invalid("the class has no backward model");
    }
    Ok(e)
}

/// A Python number: an int or a float, with Python's arithmetic.
///
/// The overflow rule, the one every model uses: Python's ints are
/// unbounded, ours are `i128`; an int result beyond `i128` goes on as the
/// float of the operands (as big as the reference's int, to float
/// precision), which is what the sheets print for such a value anyway.
/// Callers that must keep an exact int (a count printed as an int, a size
/// the reference indexes with) ask for one with [`Num::exact`], which
/// refuses a result that left the ints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    /// A Python int.
    I(i128),
    /// A Python float.
    F(f64),
}

impl From<i128> for Num {
    fn from(i: i128) -> Num {
        Num::I(i)
    }
}

impl From<&i128> for Num {
    fn from(i: &i128) -> Num {
        Num::I(*i)
    }
}

impl From<&i64> for Num {
    fn from(i: &i64) -> Num {
        Num::I(*i as i128)
    }
}

impl From<f64> for Num {
    fn from(x: f64) -> Num {
        Num::F(x)
    }
}

impl Num {
    /// The value as a float (Python's `float(x)`).
    pub(super) fn f64(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(x) => x,
        }
    }

    /// `self + o`; an int sum beyond `i128` goes on as a float.
    pub(super) fn add(self, o: impl Into<Num>) -> Num {
        match (self, o.into()) {
            (Num::I(a), Num::I(b)) if a.checked_add(b).is_some() => Num::I(a + b),
            (a, b) => Num::F(a.f64() + b.f64()),
        }
    }

    /// `self - o`.
    pub(super) fn sub(self, o: impl Into<Num>) -> Num {
        match (self, o.into()) {
            (Num::I(a), Num::I(b)) if a.checked_sub(b).is_some() => Num::I(a - b),
            (a, b) => Num::F(a.f64() - b.f64()),
        }
    }

    /// `self * o`.
    pub(super) fn mul(self, o: impl Into<Num>) -> Num {
        match (self, o.into()) {
            (Num::I(a), Num::I(b)) if a.checked_mul(b).is_some() => Num::I(a * b),
            (a, b) => Num::F(a.f64() * b.f64()),
        }
    }

    /// Python `/`: always a float; ZeroDivisionError on zero.
    pub(super) fn div(self, o: impl Into<Num>) -> ModelResult<Num> {
        let d = o.into().f64();
        if d == 0.0 {
            return invalid("division by zero");
        }
        Ok(Num::F(self.f64() / d))
    }

    /// Python `//` (ints floor exactly; floats as CPython's `float_floor_div`).
    pub(super) fn floor_div(self, o: impl Into<Num>) -> ModelResult<Num> {
        match (self, o.into()) {
            (_, Num::I(0)) => invalid("integer division or modulo by zero"),
            (Num::I(a), Num::I(b)) if a.checked_div(b).is_some() => {
                let q = a / b;
                Ok(Num::I(if a % b != 0 && (a < 0) != (b < 0) {
                    q - 1
                } else {
                    q
                }))
            }
            (a, b) => py_float_floordiv(a.f64(), b.f64()).map(Num::F),
        }
    }

    /// Python `self ** e` for a float base and an int exponent (C `pow`).
    pub(super) fn powf(self, e: Num) -> ModelResult<Num> {
        let (b, x) = (self.f64(), e.f64());
        if b == 0.0 && x < 0.0 {
            return invalid("0.0 cannot be raised to a negative power");
        }
        Ok(Num::F(b.powf(x)))
    }

    /// Python `==` between two numbers (exact, across int and float).
    pub(super) fn eq(self, o: impl Into<Num>) -> bool {
        match (self, o.into()) {
            (Num::I(a), Num::I(b)) => a == b,
            (Num::F(a), Num::F(b)) => a == b,
            (Num::I(i), Num::F(f)) | (Num::F(f), Num::I(i)) => {
                f.fract() == 0.0 && f.abs() < 1e38 && f as i128 == i
            }
        }
    }

    /// An element count as the sheets print it (an int within `i64`):
    /// anything else is refused as too large.
    pub(super) fn count(self) -> ModelResult<i128> {
        match self {
            Num::I(i) if i.unsigned_abs() <= i64::MAX as u128 => Ok(i),
            _ => invalid("element count too large"),
        }
    }

    /// The exact int, for a caller that cannot go on with a float: an int
    /// result that overflowed `i128` (or a float) is refused.
    pub(super) fn exact(self) -> ModelResult<i128> {
        match self {
            Num::I(i) => Ok(i),
            Num::F(_) => invalid("integer overflow"),
        }
    }

    /// The parameter value Python would hold.
    pub(super) fn to_py(self) -> Py {
        match self {
            Num::I(i) => ipy(i),
            Num::F(x) => Py::Float(x),
        }
    }
}

/// CPython's float floor division (`float_floor_div`).
pub(super) fn py_float_floordiv(vx: f64, wx: f64) -> ModelResult<f64> {
    if wx == 0.0 {
        return invalid("float floor division by zero");
    }
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(wx);
    }
    let _ = m;
    Ok(if div != 0.0 {
        let mut fd = div.floor();
        if div - fd > 0.5 {
            fd += 1.0;
        }
        fd
    } else {
        0.0f64.copysign(vx / wx)
    })
}

/// `list[i]` for a non-negative index (IndexError when short).
pub(super) fn item<'a, T>(list: &'a [T], i: usize, what: &str) -> ModelResult<&'a T> {
    match list.get(i) {
        Some(v) => Ok(v),
        None => invalid(format!("{what} index {i} out of range")),
    }
}

/// Python `tuple(v)` of a JSON value: lists become tuples (their elements
/// kept as Python holds them), strings tuples of characters, objects tuples
/// of their keys; anything else is not iterable.
pub(super) fn tuple_of(v: &ArgValue) -> ModelResult<Py> {
    match v {
        ArgValue::List(a) => Ok(Py::Tuple(
            a.iter().map(|x| Py::from_arg(x, false)).collect(),
        )),
        ArgValue::Str(s) => Ok(Py::Tuple(
            s.chars().map(|c| Py::Str(c.to_string())).collect(),
        )),
        ArgValue::Map(o) => Ok(Py::Tuple(
            o.iter().map(|(k, _)| Py::Str(k.to_string())).collect(),
        )),
        other => invalid(format!("{other} is not iterable")),
    }
}

/// The integers of a shape list (anything else is a malformed shape).
pub(super) fn shape_of(v: &ArgValue) -> ModelResult<Vec<i128>> {
    let ArgValue::List(a) = v else {
        return invalid(format!("shape {v} is not a list"));
    };
    a.iter().map(int_of).collect()
}

/// Python's truth value, `bool(x)`, of each kind of value the models
/// handle: recorded arguments, literals and built values.
pub(super) trait Truth {
    /// `bool(self)`: false for `None`, zero, and empty strings and
    /// containers.
    fn truthy(&self) -> bool;
}

/// `bool(v)` of any value with a [`Truth`].
pub(super) fn truthy<T: Truth + ?Sized>(v: &T) -> bool {
    v.truthy()
}

impl Truth for ArgValue {
    fn truthy(&self) -> bool {
        match self {
            ArgValue::Null => false,
            ArgValue::Bool(b) => *b,
            ArgValue::Int(_) | ArgValue::UInt(_) | ArgValue::Float(_) => {
                self.as_f64().is_some_and(|f| f != 0.0)
            }
            ArgValue::Str(s) => !s.is_empty(),
            ArgValue::List(a) => !a.is_empty(),
            ArgValue::Map(o) => !o.is_empty(),
        }
    }
}

impl Truth for Py {
    fn truthy(&self) -> bool {
        match self {
            Py::None => false,
            Py::Bool(b) => *b,
            Py::Int(i) => *i != 0,
            Py::Float(f) => *f != 0.0,
            Py::Str(s) => !s.is_empty(),
            Py::Tuple(v) | Py::List(v) => !v.is_empty(),
        }
    }
}

impl Truth for Lit {
    fn truthy(&self) -> bool {
        match self {
            Lit::Int(i) => *i != 0,
            Lit::Float(f) => *f != 0.0,
            Lit::Bool(b) => *b,
            Lit::None => false,
            Lit::Str(s) => !s.is_empty(),
            Lit::Seq(v) => !v.is_empty(),
        }
    }
}

/// A Python literal as `ast.literal_eval` returns it (the subset traces use).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Lit {
    /// An int.
    Int(i128),
    /// A float.
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// A string.
    Str(String),
    /// A list or tuple.
    Seq(Vec<Lit>),
}

impl Lit {
    /// Python `int(x)`.
    pub(super) fn to_int(&self) -> ModelResult<i128> {
        match self {
            Lit::Int(i) => Ok(*i),
            Lit::Bool(b) => Ok(*b as i128),
            Lit::Float(f) if f.is_finite() && f.abs() < 1e30 => Ok(f.trunc() as i128),
            Lit::Str(s) => py_int(s),
            other => invalid(format!("int() of {other:?}")),
        }
    }

    /// The items of an iterable literal (lists, tuples, strings).
    pub(super) fn items(self) -> ModelResult<Vec<Lit>> {
        match self {
            Lit::Seq(v) => Ok(v),
            Lit::Str(s) => Ok(s.chars().map(|c| Lit::Str(c.to_string())).collect()),
            other => invalid(format!("{other:?} is not iterable")),
        }
    }
}

/// Python `int(text)` of a string: surrounding whitespace, a sign and
/// underscores between digits allowed.
pub(super) fn py_int(text: &str) -> ModelResult<i128> {
    match crate::numeric::py_int(text) {
        Some(v) => Ok(v),
        None => invalid(format!("invalid literal for int(): {text:?}")),
    }
}

/// `ast.literal_eval(text)` for numbers, booleans, None, strings, lists and
/// tuples.
pub(super) fn literal_eval(text: &str) -> ModelResult<Lit> {
    let mut p = LitParser {
        s: text.trim_start_matches([' ', '\t']).as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return invalid(format!("malformed literal {text:?}"));
    }
    Ok(v)
}

/// `[int(x) for x in ast.literal_eval(text)]`.
pub(super) fn parse_int_list(text: &str) -> ModelResult<Vec<i128>> {
    literal_eval(text)?
        .items()?
        .iter()
        .map(Lit::to_int)
        .collect()
}

/// `[bool(x) for x in ast.literal_eval(text)]`.
pub(super) fn parse_bool_list(text: &str) -> ModelResult<Vec<bool>> {
    Ok(literal_eval(text)?
        .items()?
        .iter()
        .map(|l| l.truthy())
        .collect())
}

struct LitParser<'s> {
    s: &'s [u8],
    i: usize,
    /// Nesting depth, bounded so hostile text cannot exhaust the stack.
    depth: usize,
}

/// Deepest literal nesting accepted.
const MAX_DEPTH: usize = 64;

impl LitParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn bad<T>(&self) -> ModelResult<T> {
        invalid(format!(
            "malformed literal {:?}",
            String::from_utf8_lossy(self.s)
        ))
    }

    fn value(&mut self) -> ModelResult<Lit> {
        if self.depth >= MAX_DEPTH {
            return self.bad();
        }
        self.depth += 1;
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> ModelResult<Lit> {
        self.ws();
        match self.peek() {
            Some(b'[') => self.seq(b']', false),
            Some(b'(') => self.seq(b')', true),
            Some(b'\'') | Some(b'"') => self.string(),
            Some(c) if c == b'-' || c == b'+' => {
                self.i += 1;
                match self.value()? {
                    Lit::Int(i) if c == b'-' => Ok(Lit::Int(-i)),
                    Lit::Float(f) if c == b'-' => Ok(Lit::Float(-f)),
                    v @ (Lit::Int(_) | Lit::Float(_)) => Ok(v),
                    _ => self.bad(),
                }
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.i;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.i += 1;
                }
                match &self.s[start..self.i] {
                    b"True" => Ok(Lit::Bool(true)),
                    b"False" => Ok(Lit::Bool(false)),
                    b"None" => Ok(Lit::None),
                    _ => self.bad(),
                }
            }
            _ => self.bad(),
        }
    }

    fn seq(&mut self, close: u8, tuple: bool) -> ModelResult<Lit> {
        self.i += 1;
        let mut items = Vec::new();
        let mut trailing_comma = false;
        loop {
            self.ws();
            if self.peek() == Some(close) {
                self.i += 1;
                break;
            }
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    trailing_comma = true;
                }
                Some(c) if c == close => {
                    self.i += 1;
                    trailing_comma = false;
                    break;
                }
                _ => return self.bad(),
            }
        }
        // `(5)` is the int 5, `(5,)` a 1-tuple.
        if tuple && items.len() == 1 && !trailing_comma {
            return Ok(items.pop().unwrap_or(Lit::None));
        }
        Ok(Lit::Seq(items))
    }

    fn string(&mut self) -> ModelResult<Lit> {
        let quote = self.s[self.i];
        self.i += 1;
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == quote {
                return Ok(Lit::Str(String::from_utf8_lossy(&out).into_owned()));
            }
            if c == b'\\' {
                if let Some(n) = self.peek() {
                    self.i += 1;
                    out.push(n);
                }
                continue;
            }
            out.push(c);
        }
        self.bad()
    }

    fn number(&mut self) -> ModelResult<Lit> {
        let start = self.i;
        let mut float = false;
        while let Some(c) = self.peek() {
            match c {
                b'0'..=b'9' | b'_' => {}
                b'.' => float = true,
                b'e' | b'E' => {
                    float = true;
                    if matches!(self.s.get(self.i + 1), Some(b'+') | Some(b'-')) {
                        self.i += 1;
                    }
                }
                _ => break,
            }
            self.i += 1;
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).replace('_', "");
        if float {
            match text.parse::<f64>() {
                Ok(f) => Ok(Lit::Float(f)),
                Err(_) => self.bad(),
            }
        } else {
            match text.parse::<i128>() {
                Ok(i) => Ok(Lit::Int(i)),
                Err(_) => self.bad(),
            }
        }
    }
}

/// Python `int(s)` of a recorded text where the value must fit `i64`.
pub(super) fn py_i64(s: &str) -> ModelResult<i64> {
    i64::try_from(py_int(s)?).or_else(|_| invalid(format!("int out of range: {s:?}")))
}

/// Python `float(s)` of a recorded text (`'0.'`, `'1e-05'`, `'inf'`, …).
pub(super) fn py_float(s: &str) -> ModelResult<f64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    let special = matches!(body, "inf" | "infinity" | "nan");
    let plain = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    if !(special || plain) {
        return invalid(format!("could not convert string to float: {s:?}"));
    }
    match lower.parse::<f64>() {
        Ok(v) => Ok(v),
        Err(_) => invalid(format!("could not convert string to float: {s:?}")),
    }
}

/// Python `eval(s)` of the literal texts the profiler records for scalar
/// arguments: `True`, `False`, `None`, ints and floats ([`literal_eval`]
/// limited to those). Anything else (the empty text included) fails like
/// the reference's `eval` would.
pub(super) fn py_eval(s: &str) -> ModelResult<Py> {
    match literal_eval(s.trim())? {
        Lit::Bool(b) => Ok(Py::Bool(b)),
        Lit::None => Ok(Py::None),
        Lit::Int(i) => Ok(ipy(i)),
        Lit::Float(f) => Ok(Py::Float(f)),
        _ => invalid(format!("cannot eval {s:?}")),
    }
}

/// An exact int as a parameter value (beyond `i64`, its float).
pub(super) fn ipy(i: i128) -> Py {
    match i64::try_from(i) {
        Ok(v) => Py::Int(v),
        Err(_) => Py::Float(i as f64),
    }
}

/// Python `int` of a recorded value (ints only; `len()`/index results).
pub(super) fn int_of(v: &ArgValue) -> ModelResult<i128> {
    match v {
        ArgValue::Int(i) => Ok(*i as i128),
        ArgValue::UInt(u) => Ok(*u as i128),
        ArgValue::Bool(b) => Ok(*b as i128),
        other => invalid(format!("expected an int, got {other}")),
    }
}

/// The elements of a recorded list (TypeError for anything else).
pub(super) fn list_of(v: &ArgValue) -> ModelResult<&[ArgValue]> {
    match v {
        ArgValue::List(a) => Ok(a),
        other => invalid(format!("{other} is not a list")),
    }
}

/// Python `len(v)` of a recorded value.
pub(super) fn len_of(v: &ArgValue) -> ModelResult<usize> {
    match v {
        ArgValue::List(a) => Ok(a.len()),
        ArgValue::Str(s) => Ok(s.chars().count()),
        ArgValue::Map(m) => Ok(m.len()),
        other => invalid(format!("object {other} has no len()")),
    }
}

/// `v[i]` of a recorded list, negative indices from the end.
pub(super) fn at(v: &ArgValue, i: isize) -> ModelResult<&ArgValue> {
    let items = list_of(v)?;
    let k = if i < 0 { items.len() as isize + i } else { i };
    match usize::try_from(k).ok().and_then(|k| items.get(k)) {
        Some(x) => Ok(x),
        None => invalid(format!("index {i} out of range")),
    }
}

/// `v[i]` of a recorded shape, an int.
pub(super) fn dim_at(v: &ArgValue, i: isize) -> ModelResult<i128> {
    int_of(at(v, i)?)
}

/// The ints of a recorded shape.
pub(super) fn ints(v: &ArgValue) -> ModelResult<Vec<i128>> {
    list_of(v)?.iter().map(int_of).collect()
}

/// `a, b, c = shape`: exactly `N` ints (ValueError otherwise).
pub(super) fn unpack<const N: usize>(v: &ArgValue) -> ModelResult<[i128; N]> {
    let xs = ints(v)?;
    match <[i128; N]>::try_from(xs) {
        Ok(a) => Ok(a),
        Err(xs) => invalid(format!("expected {N} values to unpack, got {}", xs.len())),
    }
}

/// `math.prod(factors)` (1 for none), under [`Num`]'s overflow rule.
pub(super) fn prod<N: Into<Num>>(factors: impl IntoIterator<Item = N>) -> Num {
    factors.into_iter().fold(Num::I(1), |acc, f| acc.mul(f))
}

/// `math.prod(shape)` of a recorded shape (1 for an empty one).
pub(super) fn numel(v: &ArgValue) -> ModelResult<Num> {
    Ok(prod(ints(v)?))
}

/// `name2bpe(dtype)`: the reference's int bytes per element, None when the
/// dtype has no known size.
pub(super) fn bpe(dtype: Option<&str>) -> Option<i128> {
    bytes_per_element(dtype).map(|b| b as i128)
}

/// `name2bpe(dtype)` where the reference multiplies by it unchecked: an
/// unknown size raises (None times a number).
pub(super) fn bpe_req(dtype: Option<&str>) -> ModelResult<Num> {
    match bpe(dtype) {
        Some(b) => Ok(Num::I(b)),
        None => invalid(format!("unknown element size of {dtype:?}")),
    }
}

/// `torch_dtype_map(dtype) if dtype else None`.
pub(super) fn precision(dtype: Option<&str>) -> Option<Precision> {
    dtype
        .filter(|d| !d.is_empty())
        .and_then(|d| precision_of(Some(d)))
}

/// The recorded arguments of an op, read as the reference reads
/// `event["args"]`.
#[derive(Clone, Copy)]
pub(super) struct Rec<'a> {
    input: &'a OpInput<'a>,
}

impl<'a> Rec<'a> {
    /// Wraps an op input.
    pub(super) fn new(input: &'a OpInput<'a>) -> Self {
        Rec { input }
    }

    /// The op's input.
    pub(super) fn input(&self) -> &'a OpInput<'a> {
        self.input
    }

    /// The op name.
    pub(super) fn name(&self) -> &'a str {
        self.input.name
    }

    /// `args["Input Dims"]` (KeyError when absent).
    pub(super) fn dims(&self) -> ModelResult<&'a [ArgValue]> {
        self.input
            .dims
            .ok_or_else(|| ModelError::Invalid("missing 'Input Dims'".into()))
    }

    /// `args.get("Input Dims", [])`.
    pub(super) fn dims_or_empty(&self) -> &'a [ArgValue] {
        self.input.dims.unwrap_or(&[])
    }

    /// `args["Input Dims"][i]`.
    pub(super) fn dim(&self, i: usize) -> ModelResult<&'a ArgValue> {
        match self.dims()?.get(i) {
            Some(v) => Ok(v),
            None => invalid(format!("Input Dims[{i}] out of range")),
        }
    }

    /// `args["Input Dims"][i][j]`, an int.
    pub(super) fn dim_int(&self, i: usize, j: isize) -> ModelResult<i128> {
        dim_at(self.dim(i)?, j)
    }

    /// `args["Input type"]` (KeyError when absent).
    pub(super) fn types(&self) -> ModelResult<&'a [String]> {
        match &self.input.types {
            Some(t) => Ok(t),
            None => invalid("missing 'Input type'"),
        }
    }

    /// `args.get("Input type", [])`.
    pub(super) fn types_or_empty(&self) -> &'a [String] {
        self.input.types.as_deref().unwrap_or(&[])
    }

    /// `args["Input type"][i]`.
    pub(super) fn ty(&self, i: usize) -> ModelResult<&'a str> {
        match self.types()?.get(i) {
            Some(t) => Ok(t),
            None => invalid(format!("Input type[{i}] out of range")),
        }
    }

    /// `types[i] if len(types) > i else default`, types read leniently.
    pub(super) fn ty_or(&self, i: usize, default: &'a str) -> &'a str {
        self.types_or_empty().get(i).map_or(default, String::as_str)
    }

    /// `args["Concrete Inputs"]` (KeyError when absent).
    pub(super) fn concrete(&self) -> ModelResult<&'a [String]> {
        match &self.input.concrete {
            Some(c) => Ok(c),
            None => invalid("missing 'Concrete Inputs'"),
        }
    }

    /// `args.get("Concrete Inputs", [])`.
    pub(super) fn concrete_or_empty(&self) -> &'a [String] {
        self.input.concrete.as_deref().unwrap_or(&[])
    }

    /// `args["Concrete Inputs"][i]`.
    pub(super) fn ci(&self, i: usize) -> ModelResult<&'a str> {
        match self.concrete()?.get(i) {
            Some(c) => Ok(c),
            None => invalid(format!("Concrete Inputs[{i}] out of range")),
        }
    }

    /// `int(args["Concrete Inputs"][i])`.
    pub(super) fn ci_int(&self, i: usize) -> ModelResult<i128> {
        py_int(self.ci(i)?)
    }

    /// `tuple(args["Input Strides"][i])` (KeyError / IndexError raise).
    pub(super) fn stride(&self, i: usize) -> ModelResult<Py> {
        let Some(strides) = self.input.strides else {
            return invalid("missing 'Input Strides'");
        };
        match strides.get(i) {
            Some(v) => tuple_of(v),
            None => invalid(format!("Input Strides[{i}] out of range")),
        }
    }

    /// `tuple(args["Input Strides"][i])` inside `try/except (KeyError,
    /// IndexError)`: None when the key or the slot is missing.
    pub(super) fn stride_or_none(&self, i: usize) -> ModelResult<Py> {
        match self.input.strides.and_then(|s| s.get(i)) {
            Some(v) => tuple_of(v),
            None => Ok(Py::None),
        }
    }

    /// The element size of the first recorded dtype, as several core
    /// models take it: `Input type[0]` (bf16 when there are no types), 2
    /// bytes when that dtype has no size.
    pub(super) fn first_bpe(&self) -> Num {
        let dtype = self
            .types_or_empty()
            .first()
            .map_or("c10::BFloat16", String::as_str);
        let b = if dtype.is_empty() {
            None
        } else {
            bpe(Some(dtype))
        };
        Num::I(b.unwrap_or(2))
    }

    /// The compute precision of `Input type[0]`, None without types.
    pub(super) fn first_precision(&self) -> Option<Precision> {
        precision(self.types_or_empty().first().map(String::as_str))
    }

    /// The extra (non-standard) arg `key`.
    pub(super) fn extra(&self, key: &str) -> Option<&'a ArgValue> {
        self.input.extra_arg(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::arg;

    /// `bool(x)` agrees across the three kinds of values, and a shape
    /// entry is a Python int: `True` counts as 1, a float does not.
    #[test]
    fn one_truth_and_one_int_rule() {
        let cases = [
            (ArgValue::Null, Py::None, Lit::None, false),
            (ArgValue::Int(0), Py::Int(0), Lit::Int(0), false),
            (ArgValue::Int(-3), Py::Int(-3), Lit::Int(-3), true),
            (ArgValue::Float(0.0), Py::Float(0.0), Lit::Float(0.0), false),
            (ArgValue::Bool(true), Py::Bool(true), Lit::Bool(true), true),
            (
                ArgValue::Str("".into()),
                Py::Str("".into()),
                Lit::Str("".into()),
                false,
            ),
            (
                ArgValue::List(vec![].into()),
                Py::Tuple(vec![]),
                Lit::Seq(vec![]),
                false,
            ),
        ];
        for (a, p, l, want) in cases {
            assert_eq!(
                (truthy(&a), truthy(&p), truthy(&l)),
                (want, want, want),
                "{a:?}"
            );
        }
        let shape = ArgValue::List(vec![ArgValue::Int(4), ArgValue::Bool(true)].into());
        assert_eq!(shape_of(&shape).unwrap(), vec![4, 1]);
        assert!(shape_of(&ArgValue::List(vec![ArgValue::Float(2.0)].into())).is_err());
        assert_eq!(
            super::super::gemm::int_value(&ArgValue::Bool(false)).unwrap(),
            0
        );
        assert!(super::super::gemm::int_value(&ArgValue::UInt(u64::MAX)).is_err());
    }

    #[test]
    fn numbers_follow_python() {
        let i = |x: i128| Num::I(x);
        assert_eq!(i(7).floor_div(i(2)).unwrap(), i(3));
        assert_eq!(i(-7).floor_div(i(2)).unwrap(), i(-4));
        assert!(i(1).floor_div(i(0)).is_err());
        assert_eq!(i(1).div(i(4)).unwrap(), Num::F(0.25));
        assert_eq!(i(3).mul(0.5), Num::F(1.5));
        assert!(i(2).eq(2.0) && !i(2).eq(i(3)));
        // (1 - (28/32)^32): float ** int is C pow.
        let p = Num::F(28.0 / 32.0).powf(i(32)).unwrap();
        assert_eq!(p, Num::F((0.875f64).powf(32.0)));
        assert_eq!(i(1 << 70).to_py(), Py::Float(2f64.powi(70)));
    }

    #[test]
    fn shape_readers_fail_like_python() {
        let s = arg!([32, 8, 64]);
        assert_eq!(dim_at(&s, -1).unwrap(), 64);
        assert_eq!(dim_at(&s, -3).unwrap(), 32);
        assert!(dim_at(&s, 3).is_err() && dim_at(&s, -4).is_err());
        assert_eq!(unpack::<3>(&s).unwrap(), [32, 8, 64]);
        assert!(unpack::<2>(&s).is_err());
        assert_eq!(numel(&arg!([])).unwrap(), Num::I(1));
        assert_eq!(tuple_of(&arg!([5])).unwrap().to_str(), "(5,)");
        assert!(int_of(&arg!("x")).is_err());
    }

    #[test]
    fn float_floordiv_like_python() {
        assert_eq!(py_float_floordiv(7.0, 2.0).unwrap(), 3.0);
        assert_eq!(py_float_floordiv(-7.0, 2.0).unwrap(), -4.0);
        assert_eq!(py_float_floordiv(50.0, 3.0).unwrap(), 16.0);
        assert!(py_float_floordiv(1.0, 0.0).is_err());
        assert!(Num::I(3).eq(Num::F(3.0)));
        assert!(!Num::I(3).eq(Num::F(3.5)));
    }
    #[test]
    fn python_text_helpers() {
        assert_eq!(py_i64(" 16 ").unwrap(), 16);
        assert_eq!(py_i64("-2").unwrap(), -2);
        assert!(py_i64("").is_err());
        assert!(py_i64("1.0").is_err());
        assert_eq!(py_float("0.").unwrap(), 0.0);
        assert_eq!(py_float("1e-05").unwrap(), 1e-5);
        assert!(py_float("").is_err());
        assert!(py_float("None").is_err());
        assert_eq!(py_eval("True").unwrap(), Py::Bool(true));
        assert_eq!(py_eval("False").unwrap(), Py::Bool(false));
        assert_eq!(py_eval("1").unwrap(), Py::Int(1));
        assert_eq!(py_eval(" 0. ").unwrap(), Py::Float(0.0));
        assert_eq!(py_eval("-2").unwrap(), Py::Int(-2));
        assert!(py_eval("").is_err());
        assert!(py_eval("true").is_err());
        assert!(py_eval("inf").is_err() && py_eval("'x'").is_err() && py_eval("[1]").is_err());
    }
    #[test]
    fn literals() {
        assert_eq!(parse_int_list("[768]").unwrap(), vec![768]);
        assert_eq!(parse_int_list(" [16, 32, 32]").unwrap(), vec![16, 32, 32]);
        assert_eq!(parse_int_list("(-1,)").unwrap(), vec![-1]);
        assert_eq!(parse_int_list("[]").unwrap(), Vec::<i128>::new());
        assert_eq!(
            parse_bool_list("[True, False, 1, 0]").unwrap(),
            vec![true, false, true, false]
        );
        assert_eq!(
            literal_eval("1.0000000000000001e-05").unwrap(),
            Lit::Float(1e-05)
        );
        assert_eq!(literal_eval("(5)").unwrap(), Lit::Int(5));
        assert_eq!(literal_eval("'ab'").unwrap(), Lit::Str("ab".into()));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for bad in ["", "[1, 2", "[1 2]", "foo", "[1]]", deep.as_str()] {
            assert!(literal_eval(bad).is_err(), "{bad:?}");
        }
        assert!(parse_int_list("5").is_err());
        assert_eq!(py_int(" 4 ").unwrap(), 4);
        assert_eq!(py_int("-1_0").unwrap(), -10);
        assert!(py_int("4.0").is_err());
        assert!(py_int("").is_err());
    }
}
