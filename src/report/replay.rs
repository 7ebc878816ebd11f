//! `tracelens replay` outputs: one self-contained Python script per op, or
//! a batched runner with the JSON list of ops (the reference's
//! `event_replay_ir.json` entries plus ours: uid, overload, traced time).
//! Both carry the same runner (`replay_runner.py`).

use std::path::PathBuf;

use serde_json::{Value as Json, json};

use super::{Document, Rendered, WriteError, Writer};
use crate::analysis::commands::replay::{DTYPES, IrArg, IrValue, ReplayOp};
use crate::pyfmt::{Block, block_literal, str_repr};

/// An argument value as the reference's IR JSON writes it.
fn value_json(v: &IrValue) -> Json {
    match v {
        IrValue::None => Json::Null,
        IrValue::Bool(b) => json!(b),
        IrValue::Int(i) => json!(i),
        IrValue::Float(f) => json!(f),
        IrValue::Str(s) => json!(s),
        IrValue::Ints(v) => json!(v),
        IrValue::Bools(v) => json!(v),
        IrValue::Tensor(t) => json!({
            "shape": t.shape, "dtype": t.dtype, "strides": t.strides, "init": t.init,
        }),
    }
}

fn args_json(args: &[IrArg]) -> Json {
    args.iter()
        .map(|a| json!({"arg_name": a.name, "arg_type": a.ty, "value": value_json(&a.value)}))
        .collect()
}

/// The reference's `get_repro_info()` of `op`: `{"op_name", "replay_ir":
/// {"list_pos_args", "list_kwargs"}}`.
pub fn ir_json(op: &ReplayOp) -> Json {
    json!({
        "op_name": op.op_name,
        "replay_ir": {"list_pos_args": args_json(&op.positional), "list_kwargs": args_json(&op.keyword)},
    })
}

/// What a replay script needs to know of a traced op besides its IR.
#[derive(Debug, Clone)]
pub struct Traced<'a> {
    /// The event's uid.
    pub uid: usize,
    /// Mean GPU kernel time per call in the trace, µs.
    pub kernel_us: f64,
    /// Calls with these arguments in the trace.
    pub count: i64,
    /// Names of the kernels it launched.
    pub kernels: &'a [String],
    /// The trace's file name.
    pub trace: &'a str,
}

/// One entry of `replay_ops.json` (and the `OP` of a single-op script):
/// the reference's IR plus `uid`, `overload`, `schema`,
/// `traced_kernel_us`, `count`, `kernels` and `trace`.
pub fn entry_json(op: &ReplayOp, t: &Traced) -> Json {
    let mut entry = ir_json(op);
    let overload = if op.schema.overload.is_empty() {
        "default"
    } else {
        &op.schema.overload
    };
    let extra = json!({
        "uid": t.uid,
        "overload": overload,
        "schema": op.schema.text,
        "traced_kernel_us": t.kernel_us,
        "count": t.count,
        "kernels": t.kernels,
        "trace": t.trace,
    });
    if let (Some(e), Json::Object(x)) = (entry.as_object_mut(), extra) {
        e.extend(x);
    }
    entry
}

/// The runner shared by every script.
const RUNNER: &str = include_str!("replay_runner.py");

/// File name of the batched runner.
pub const BATCHED_SCRIPT: &str = "replay_batched.py";
/// File name of the batched runner's op list.
pub const OPS_JSON: &str = "replay_ops.json";

/// The runner with its dtype table and default device filled in.
fn runner(device: &str) -> String {
    let dtypes: Vec<String> = DTYPES
        .iter()
        .map(|(t, d)| format!("    {}: {},", str_repr(t), str_repr(d)))
        .collect();
    RUNNER
        .replace("__DTYPES__", &format!("{{\n{}\n}}", dtypes.join("\n")))
        .replace("__DEVICE__", &str_repr(device))
}

/// The JSON text of `entry` as a Python literal ([`block_literal`], a raw
/// block for ordinary text): a `'` can only sit inside a JSON string, where
/// `\u0027` means the same.
fn json_literal(entry: &Json) -> String {
    let text = serde_json::to_string_pretty(entry).unwrap_or_default();
    block_literal(&text.replace('\'', "\\u0027"), Block::Raw)
}

/// The script that replays one op: run it with `python3 SCRIPT [--device
/// cpu] [--iters N]`.
///
/// Every text from the trace or the command line (the op and trace names,
/// the command) reaches the script inside a literal built by
/// [`block_literal`] or [`str_repr`], never as code.
pub fn op_script(entry: &Json, device: &str, command: &str) -> String {
    let doc = format!(
        "Replays {name} with the inputs it was traced with (uid {uid}, trace {trace}).\n\n\
         Written by `{command}`: random tensors of the recorded shapes, dtypes\n\
         and strides, the recorded scalar arguments, the same ATen overload.\n\
         Needs only PyTorch: no model, code or weights.\n",
        name = entry["op_name"].as_str().unwrap_or("?"),
        uid = entry["uid"],
        trace = entry["trace"].as_str().unwrap_or("?"),
    );
    format!(
        "#!/usr/bin/env python3\n{doc}\n\n{runner}\n\
         OP = json.loads({json})\n\n\
         if __name__ == \"__main__\":\n    sys.exit(main_single(OP))\n",
        doc = block_literal(&doc, Block::Doc),
        runner = runner(device),
        json = json_literal(entry),
    )
}

/// The batched runner: replays every op of `replay_ops.json` and writes a
/// CSV of measured against traced times.
pub fn batched_script(device: &str, command: &str) -> String {
    let doc = format!(
        "Replays every op listed in {OPS_JSON} (written with this script by\n\
         `{command}`) and writes measured against traced times to a CSV.\n\
         Needs only PyTorch.\n"
    );
    format!(
        "#!/usr/bin/env python3\n{doc}\n\n{runner}\n\
         if __name__ == \"__main__\":\n    sys.exit(main_batched())\n",
        doc = block_literal(&doc, Block::Doc),
        runner = runner(device),
    )
}

/// The batched runner's op list.
pub fn ops_json(entries: &[&Json]) -> String {
    serde_json::to_string_pretty(entries).unwrap_or_default() + "\n"
}

/// The reproducers of one run, as the [`ReplayScripts`] writer writes
/// them.
#[derive(Debug, Clone)]
pub struct Scripts<'a> {
    /// Each replayable op's script name ([`script_name`]) and entry
    /// ([`entry_json`]), in order.
    pub ops: Vec<(String, Json)>,
    /// One runner ([`BATCHED_SCRIPT`]) and the list of ops ([`OPS_JSON`])
    /// instead of one script per op.
    pub batched: bool,
    /// The device the scripts run on unless told otherwise.
    pub device: &'a str,
    /// The command line that wrote them, for their headers.
    pub command: &'a str,
}

/// Writes a document's replay scripts into `dir`.
#[derive(Debug, Clone)]
pub struct ReplayScripts {
    /// The folder the scripts go to.
    pub dir: PathBuf,
}

impl Writer for ReplayScripts {
    /// One script per op, or the batched runner and its list of ops; none
    /// without scripts.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        let Some(s) = &doc.replay else {
            return Ok(Vec::new());
        };
        let file = |name: &str, text: String| Rendered {
            name: self.dir.join(name),
            bytes: text.into_bytes(),
        };
        if s.batched {
            let entries: Vec<&Json> = s.ops.iter().map(|(_, e)| e).collect();
            return Ok(vec![
                file(BATCHED_SCRIPT, batched_script(s.device, s.command)),
                file(OPS_JSON, ops_json(&entries)),
            ]);
        }
        Ok(s.ops
            .iter()
            .map(|(name, e)| file(name, op_script(e, s.device, s.command)))
            .collect())
    }
}

/// The file name of op number `index` (from 1): `03_aten_addmm_uid48.py`.
pub fn script_name(index: usize, op: &str, uid: usize) -> String {
    let slug: String = op
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .split('_')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    format!("{index:02}_{slug}_uid{uid}.py")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addmm_gives_the_reference_ir() {
        use crate::analysis::commands::replay::replay_op;
        use crate::test_support::arg_value;
        // The reference's sample, from a resnet trace.
        let v = [
            arg_value("[[1000], [10, 512], [512, 1000], [], []]"),
            arg_value(r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#),
            arg_value("[[1], [512, 1], [1, 512], [], []]"),
            arg_value(r#"["", "", "", "1", "1"]"#),
        ];
        let args = crate::trace::OpArgs {
            dims: Some(&v[0]),
            types: Some(&v[1]),
            strides: Some(&v[2]),
            concrete: Some(&v[3]),
        };
        let op = replay_op("aten::addmm", &args).unwrap();
        let expected: Json = serde_json::from_str(r#"{"op_name": "aten::addmm", "replay_ir": {"list_pos_args": [
  {"arg_name": "self", "arg_type": "Tensor", "value": {"shape": [1000], "dtype": "c10::BFloat16", "strides": [1], "init": "normal"}},
  {"arg_name": "mat1", "arg_type": "Tensor", "value": {"shape": [10, 512], "dtype": "c10::BFloat16", "strides": [512, 1], "init": "normal"}},
  {"arg_name": "mat2", "arg_type": "Tensor", "value": {"shape": [512, 1000], "dtype": "c10::BFloat16", "strides": [1, 512], "init": "normal"}}],
 "list_kwargs": [{"arg_name": "beta", "arg_type": "Scalar", "value": 1.0},
                 {"arg_name": "alpha", "arg_type": "Scalar", "value": 1.0}]}}"#).unwrap();
        assert_eq!(ir_json(&op), expected);
        let kernels = vec!["gemm".to_string()];
        let t = Traced {
            uid: 7,
            kernel_us: 2.5,
            count: 3,
            kernels: &kernels,
            trace: "t.json",
        };
        let e = entry_json(&op, &t);
        assert_eq!(
            (e["uid"].clone(), e["overload"].clone()),
            (json!(7), json!("default"))
        );
        assert_eq!(e["replay_ir"], expected["replay_ir"]);
    }

    #[test]
    fn names_and_literals() {
        assert_eq!(script_name(3, "aten::addmm", 48), "03_aten_addmm_uid48.py");
        let e: Json = serde_json::json!({"op_name": "a'b"});
        assert!(json_literal(&e).contains(r"a\u0027b"));
        let r = runner("cuda");
        assert!(
            r.contains("'c10::BFloat16': 'bfloat16',") && r.contains("DEFAULT_DEVICE = 'cuda'")
        );
        assert!(!r.contains("__DTYPES__"));
    }
}
