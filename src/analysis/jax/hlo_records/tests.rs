//! Record builder tests. Expected texts were read off the reference's
//! records for `jax_te_fused_attn` (its `JaxProfileProcessor` run on
//! xprof's text of the module) and worked by hand for the small modules
//! here; the convolution module's records are checked in
//! `tests/jax_report.rs`.

use super::*;
use crate::trace::xla::HloComputation;

const BF16: i32 = 16;
const U8: i32 = 6;
const S32: i32 = 4;
const F32: i32 = 11;

use super::{array_shape as arr, instruction as inst, tuple_shape as tuple};

#[test]
fn shape_texts() {
    assert_eq!(shape_text(&arr(BF16, &[1, 2])), "bf16[1,2]{1,0}");
    assert_eq!(shape_text(&arr(F32, &[])), "f32[]");
    let no_layout = HloShape {
        minor_to_major: None,
        ..arr(S32, &[3])
    };
    assert_eq!(shape_text(&no_layout), "s32[3]");
    let t = tuple(vec![arr(BF16, &[1, 5120, 34, 31, 53]), arr(U8, &[7150336])]);
    assert_eq!(
        shape_text(&t),
        "(bf16[1,5120,34,31,53]{4,3,2,1,0}, u8[7150336]{0})"
    );
    assert_eq!(element_type_name(20), "f8e4m3fn");
    assert_eq!(element_type_name(1), "pred");
}

#[test]
fn every_fifth_operand_stays_unresolved() {
    // te_fused_attn_forward_ffi.10 has 13 operands; the reference's
    // operands 5 and 10 are '/*index=5*/%input_concatenate_fusion' and
    // '/*index=10*/%constant_11_0'.
    let mut instructions = vec![
        inst(
            1,
            "qkv.1",
            "parameter",
            arr(BF16, &[2, 2048, 3, 16, 128]),
            &[],
        ),
        inst(2, "constant_12_0", "constant", arr(BF16, &[0]), &[]),
        inst(3, "input_concatenate_fusion", "fusion", arr(S32, &[3]), &[]),
        inst(4, "constant_11_0", "constant", arr(F32, &[0]), &[]),
    ];
    let mut te = inst(
        5,
        "te_fused_attn_forward_ffi.10",
        "custom-call",
        tuple(vec![arr(BF16, &[2, 2048, 16, 128]), arr(U8, &[1])]),
        &[1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4],
    );
    te.custom_call_target = Some("te_fused_attn_forward_ffi".into());
    te.backend_config = Some("{attn_heads = 16 : i64, qkv_layout = 5 : i64, scaling_factor = 0.088388347648318433 : f64}".into());
    instructions.push(te);
    instructions.push(inst(6, "root", "tuple", tuple(vec![]), &[5]));
    let m = HloModule {
        name: "jit_loss_fn".into(),
        computations: vec![HloComputation {
            name: "main.7".into(),
            instructions,
            root_id: 6,
        }],
        ..Default::default()
    };
    let r = ModuleRecords::build(&m);
    let te = r.get("%te_fused_attn_forward_ffi.10").unwrap();
    assert_eq!(te.operands.len(), 12);
    assert_eq!(te.operands[0], "bf16[2,2048,3,16,128]{4,3,2,1,0}");
    assert_eq!(te.operands[4], "s32[3]{0}");
    assert_eq!(te.operands[5], "/*index=5*/%input_concatenate_fusion");
    assert_eq!(te.operands[10], "/*index=10*/%constant_11_0");
    assert_eq!(te.operands[11], "f32[0]{0}");
    // `, ` collapsed inside the attribute text too.
    assert_eq!(
        te.backend_config.as_deref(),
        Some(
            "backend_config={attn_heads = 16 : i64,qkv_layout = 5 : i64,scaling_factor = 0.088388347648318433 : f64}"
        )
    );
}

#[test]
fn gemm_records_know_their_type() {
    let mut gemm = inst(
        3,
        "custom-call.1",
        "custom-call",
        tuple(vec![arr(BF16, &[4096, 2048]), arr(2, &[67108864])]),
        &[1, 2],
    );
    gemm.custom_call_target = Some("__cublas$gemm".into());
    let mut mixed = gemm.clone();
    mixed.id = 4;
    mixed.name = "custom-call.2".into();
    mixed.operand_ids = vec![1, 5];
    let m = HloModule {
        name: "m".into(),
        computations: vec![HloComputation {
            name: "main".into(),
            instructions: vec![
                inst(1, "a", "parameter", arr(BF16, &[4096, 6144]), &[]),
                inst(2, "b", "parameter", arr(BF16, &[2048, 6144]), &[]),
                inst(5, "c", "parameter", arr(F32, &[2048, 6144]), &[]),
                gemm,
                mixed,
                inst(9, "root", "tuple", tuple(vec![]), &[]),
            ],
            root_id: 9,
        }],
        ..Default::default()
    };
    let r = ModuleRecords::build(&m);
    let g = r.get("%custom-call.1").unwrap();
    assert!(g.gemm);
    assert_eq!(g.gemm_type.as_deref(), Some("bf16"));
    assert_eq!(g.output, "(bf16[4096,2048]{1,0},s8[67108864]{0})");
    // Mixed operand types: the reference stops; we keep the record untyped.
    assert_eq!(r.get("%custom-call.2").unwrap().gemm_type, None);
    assert_eq!(r.warnings.len(), 1);
}

#[test]
fn line_filter_and_split() {
    assert!(parses_line("%x = bf16[2]{0} negate(%y)"));
    assert!(parses_line("%x = u8[2]{0} get-tuple-element(%y), index=1"));
    assert!(!parses_line("%x = u8[2]{0} negate(%y)"));
    assert!(!parses_line("ROOT %x = bf16[2]{0} negate(%y)"));
    assert!(parses_line(
        "%x = u8[2]{0} negate(%y), metadata={op_name=\"a\"}"
    ));
    // A nested tuple output is cut at the space `),` leaves behind.
    let (key, rec) =
        parse_line("%w = ((bf16[2]{0}, f32[]), s32[]) while(%a, %b), body=%b").unwrap();
    assert_eq!(key, "%w");
    assert_eq!(rec.output, "((bf16[2]{0},f32[])");
    // Operand text with shape tokens keeps the tokens only.
    let (_, rec) = parse_line("%c = bf16[2]{0} custom-call(bf16[2]{0} %a, f32[] %b)").unwrap();
    assert_eq!(rec.operands, vec!["bf16[2]{0}".to_string()]);
}

#[test]
fn collective_ops_resolve_to_start_keys() {
    let m = HloModule {
        name: "m".into(),
        computations: vec![HloComputation {
            name: "main".into(),
            instructions: vec![
                inst(
                    1,
                    "all-gather-start",
                    "all-gather-start",
                    arr(BF16, &[8]),
                    &[],
                ),
                inst(
                    2,
                    "all-gather-start.1",
                    "all-gather-start",
                    arr(BF16, &[8]),
                    &[],
                ),
                inst(3, "add.1", "add", arr(BF16, &[8]), &[]),
                inst(4, "root", "tuple", tuple(vec![]), &[]),
            ],
            root_id: 4,
        }],
        ..Default::default()
    };
    let r = ModuleRecords::build(&m);
    let aliases = r.collective_aliases(["all-gather.7", "all-gather.3", "all-gather.9", "add.1"]);
    assert_eq!(
        aliases.get("%all-gather.3").map(String::as_str),
        Some("%all-gather-start")
    );
    assert_eq!(
        aliases.get("%all-gather.7").map(String::as_str),
        Some("%all-gather-start.1")
    );
    assert_eq!(
        aliases.get("%all-gather.9").map(String::as_str),
        Some("%all-gather-start.1")
    );
    assert!(!aliases.contains_key("%add.1"));
    assert_eq!(r.lookup_key("add.1", &aliases), Some("%add.1"));
    assert_eq!(
        r.lookup_key("all-gather.9", &aliases),
        Some("%all-gather-start.1")
    );
    // Not aliased (no alias map): the family's first start key.
    let none = FxHashMap::default();
    assert_eq!(
        r.lookup_key("all-gather.12", &none),
        Some("%all-gather-start")
    );
    assert_eq!(r.lookup_key("reduce-scatter.1", &none), None);
    assert_eq!(r.lookup_key("missing", &none), None);
}
