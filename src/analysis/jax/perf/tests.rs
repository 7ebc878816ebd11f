//! Model tests, worked by hand from spec 05 §1.9 and 03 (the numbers are
//! the reference's: its `op_conv` of `jax_conv_minimal_08`, and the
//! reference's own formulas on the TE shapes unpacked).

use super::*;
use crate::analysis::jax::args::{GemmDims, Tensor};

fn tensor(dtype: &str, dims: &[i64]) -> Tensor {
    Tensor {
        dtype: dtype.into(),
        dims: dims.to_vec(),
    }
}

fn param<'a>(out: &'a ModelOutput, key: &str) -> &'a Py {
    &out.params.iter().find(|(k, _)| *k == key).unwrap().1
}

#[test]
fn conv_loses_the_input_channels() {
    // Spec 05 §1.9: input (1,16,32,60,104), filter (1,2,2), output
    // (1,5120,34,31,53) bf16 ⇒ FLOPs 2·prod(out)·prod(filter[1:]) =
    // 2 288 107 520; bytes (prod(x) + prod(filter) + prod(out))·2 =
    // 578 416 648.
    let args = KernelArgs {
        model: ModelKind::Conv,
        tensors: vec![
            tensor("bf16", &[1, 16, 32, 60, 104]),
            tensor("bf16", &[5120, 16, 1, 2, 2]),
        ],
        output: Some(tensor("bf16", &[1, 5120, 34, 31, 53])),
        filter: vec![1, 2, 2],
        ..KernelArgs::empty()
    };
    let out = conv_model(&args, false).unwrap();
    assert_eq!(out.flops, 2_288_107_520.0);
    assert_eq!(out.bytes, Some(578_416_648.0));
    assert_eq!(param(&out, "convNd"), &Py::Str("conv3d".into()));
    assert_eq!(param(&out, "filter_shape").repr(), "(1, 2, 2)");
    assert_eq!(param(&out, "bias"), &Py::Bool(false));
    assert_eq!(param(&out, "bytes_per_element"), &Py::Int(2));
    // The reference's op_conv: Data Moved (MB) 551.6211013793945.
    assert_eq!(578_416_648.0 / 1048576.0, 551.6211013793945);
}

#[test]
fn gemm_numbers() {
    // Spec 05 §1.9: M=2048, N=4096, K=6144 bf16 → GFLOPS 103.079215104,
    // Data Moved 88.0 MB; the Tensile name says A transposed.
    let args = KernelArgs {
        model: ModelKind::Gemm,
        gemm: Some(GemmDims {
            batch: 1,
            m: 2048,
            n: 4096,
            k: 6144,
            beta: 0,
            dtype: Some("bf16".into()),
        }),
        ..KernelArgs::empty()
    };
    let out = gemm_model(
        &args,
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64",
    )
    .unwrap();
    assert_eq!(out.flops / 1e9, 103.079215104);
    assert_eq!(out.bytes.unwrap() / 1048576.0, 88.0);
    assert_eq!(param(&out, "transpose").repr(), "(True, False)");
    assert_eq!(param(&out, "dtype_A_B").repr(), "('bf16', 'bf16')");
    assert_eq!(param(&out, "simulation_dtype"), &Py::Str("bf16".into()));
    // No type: the reference fails on `None.lower()`.
    let untyped = KernelArgs {
        gemm: Some(GemmDims {
            dtype: None,
            ..args.gemm.clone().unwrap()
        }),
        ..args
    };
    assert!(gemm_model(&untyped, "k").is_err());
}

#[test]
fn packed_qkv_is_unpacked() {
    let packed = vec![vec![2, 2048, 3, 16, 128], vec![0], vec![0]];
    let bshd = vec![2, 2048, 16, 128];
    let want = [bshd.clone(), bshd.clone(), bshd.clone()];
    assert_eq!(qkv_shapes(&packed, Some(5)).unwrap(), want);
    assert_eq!(qkv_shapes(&packed, None).unwrap(), want);
    // BSH3D: the packing axis is 3.
    let bsh3d = vec![vec![2, 2048, 16, 3, 128], vec![0], vec![0]];
    assert_eq!(qkv_shapes(&bsh3d, Some(6)).unwrap(), want);
    // BSHD_BS2HD: Q apart, K and V packed.
    let kv = vec![bshd.clone(), vec![2, 2048, 2, 16, 128], vec![0]];
    assert_eq!(qkv_shapes(&kv, Some(7)).unwrap(), want);
    // Separate tensors stay as they are; too few is the reference's error.
    let sep = vec![bshd.clone(), bshd.clone(), bshd.clone()];
    assert_eq!(qkv_shapes(&sep, Some(9)).unwrap(), want);
    assert!(qkv_shapes(&packed[..1], Some(5)).is_err());
    // Sequence-first and THD layouts are not modelled.
    assert!(qkv_shapes(&sep, Some(4)).is_err());
    assert!(qkv_shapes(&sep, Some(10)).is_err());
    // Not unpacked, the placeholders cannot be read.
    assert!(sdpa_sizes(&[packed[0].clone(), vec![0], vec![0]]).is_err());
}

#[test]
fn te_attention_numbers() {
    // B=2, S=2048, H=16, D=128 bf16 (jax_te_fused_attn): forward
    // 4·B·H·S²·D = 68 719 476 736 FLOPs and 4 tensors of 8 Mi elements
    // (64 MiB); backward (flash) 171 798 691 840 FLOPs and 7 tensors (112 MiB).
    let args = KernelArgs {
        model: ModelKind::TeBwd,
        tensors: vec![
            tensor("bf16", &[2, 2048, 3, 16, 128]),
            tensor("bf16", &[0]),
            tensor("bf16", &[0]),
            tensor("bf16", &[0]),
        ],
        concrete: Py::Tuple(vec![Py::ints(&[0])]),
        ..KernelArgs::empty()
    };
    let fwd = te_model(&args, Some(5), false).unwrap();
    assert_eq!(fwd.flops, 68_719_476_736.0);
    assert_eq!(fwd.bytes.unwrap() / 1048576.0, 64.0);
    let bwd = te_model(&args, Some(5), true).unwrap();
    assert_eq!(bwd.flops, 171_798_691_840.0);
    assert_eq!(bwd.bytes.unwrap() / 1048576.0, 112.0);
    assert_eq!(param(&bwd, "bias").repr(), "((0,),)");
    assert_eq!(
        param(&bwd, "dtype_A_B").repr(),
        "('c10::bfloat16', 'c10::bfloat16')"
    );
    let keys: Vec<&str> = bwd.params.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        keys,
        [
            "B",
            "N_Q",
            "H_Q",
            "N_KV",
            "H_KV",
            "d_h_qk",
            "d_h_v",
            "bias",
            "dtype_A_B",
            "causal",
            "flash_impl",
            "fused",
            "bytes_per_element"
        ]
    );
}

#[test]
fn layout_from_the_backend_config() {
    assert_eq!(
        qkv_layout(Some(
            "backend_config={attn_heads = 16 : i64,qkv_layout = 5 : i64}"
        )),
        Some(5)
    );
    assert_eq!(qkv_layout(Some("backend_config={}")), None);
    assert_eq!(qkv_layout(None), None);
}
