//! Model tests, worked by hand from the reference's formulas (the numbers are
//! the reference's: its `op_conv` of `jax_conv_minimal_08`, and the
//! reference's own formulas on the TE shapes unpacked).

use super::*;
use crate::analysis::jax::args::{GemmDims, Tensor};
use crate::analysis::jax::test_support::kernel_trace;

fn tensor(dtype: &str, dims: &[i64]) -> Tensor {
    Tensor {
        dtype: dtype.into(),
        dims: dims.to_vec(),
    }
}

/// The arguments of a bf16 GEMM of one batch, without bias.
fn bf16_gemm(m: i64, n: i64, k: i64) -> KernelArgs {
    KernelArgs {
        model: ModelKind::Gemm,
        gemm: Some(GemmDims {
            batch: 1,
            m,
            n,
            k,
            beta: 0,
            dtype: Some("bf16".into()),
        }),
        ..KernelArgs::empty()
    }
}

fn param<'a>(out: &'a ModelOutput, key: &str) -> &'a Py {
    &out.params.iter().find(|(k, _)| *k == key).unwrap().1
}

#[test]
fn conv_loses_the_input_channels() {
    // Input (1,16,32,60,104), filter (1,2,2), output
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
    // M=2048, N=4096, K=6144 bf16 → GFLOPS 103.079215104,
    // Data Moved 88.0 MB; the Tensile name says A transposed.
    let args = bf16_gemm(2048, 4096, 6144);
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

/// Convolution arguments: input `x` of `dtype`, weight, output.
fn conv(dtype: &str, x: &[i64]) -> KernelArgs {
    KernelArgs {
        model: ModelKind::Conv,
        tensors: vec![tensor(dtype, x), tensor(dtype, &[8, 4, 3, 3])],
        output: Some(tensor(dtype, &[2, 8, 30, 30])),
        filter: vec![3, 3],
        ..KernelArgs::empty()
    }
}

/// Evaluated once per distinct (arguments, name), the op sheets and
/// warnings are those of evaluating every kernel on its own: kernels
/// sharing arguments, equal arguments held apart (one group), names that
/// change a GEMM's params or leave out its `transpose` (a column with
/// missing cells), an unknown element size (None among ints), a zero
/// duration (NaN rates), failing models counted per kernel, and an
/// unmodelled kernel.
#[test]
fn memoized_models_give_the_per_kernel_sheets() {
    let x = [2, 4, 32, 32];
    let a1 = Arc::new(conv("bf16", &x));
    let a2 = Arc::new(conv("bf16", &x));
    let s8 = Arc::new(conv("s8", &x));
    let bad = Arc::new(conv("bf16", &[2, 4]));
    let g = Arc::new(bf16_gemm(64, 32, 16));
    let rest = Arc::new(KernelArgs::empty());
    let kernels: [(&str, f64, &Arc<KernelArgs>); 15] = [
        ("conv_a", 10.0, &a1),
        ("conv_a", 12.5, &a1),
        ("conv_a", 0.0, &a2),
        ("conv_b", 5.0, &a1),
        ("conv_a", 7.0, &s8),
        ("conv_a", 3.0, &bad),
        ("Cijk_Alik_Bljk_x", 4.0, &g),
        ("gemm_plain", 6.0, &g),
        ("nvjet_x", 2.0, &g),
        ("Cijk_Alik_Bljk_x", 4.5, &g),
        ("conv_a", 11.0, &a1),
        ("some_fusion", 1.0, &rest),
        ("conv_a", 3.5, &bad),
        ("Cijk_Ailk_Bljk_y", 8.0, &g),
        ("conv_a", 9.0, &s8),
    ];
    let named: Vec<(&str, f64)> = kernels.iter().map(|&(n, d, _)| (n, d)).collect();
    let trace = kernel_trace(&named);
    let jt = JaxTrace::new(&trace);
    assert_eq!(jt.kernels.len(), kernels.len());
    let args: Vec<Arc<KernelArgs>> = kernels.iter().map(|(_, _, a)| Arc::clone(a)).collect();
    let memoized = op_sheets(&jt, &args);
    let per_kernel = op_sheets_by(&jt, &args, &|i, _: &Kernel, _: &KernelArgs| i);
    assert_eq!(memoized, per_kernel);
    let (sheets, warnings) = memoized;
    let names: Vec<&str> = sheets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["op_gemm", "op_conv"]);
    // GEMM: three names, two transposes and none; conv: a1 and a2 as
    // one group per name, s8 apart.
    assert_eq!(sheets[0].nrows(), 3);
    assert_eq!(sheets[1].nrows(), 3);
    assert_eq!(
        warnings,
        [
            "1 kernel(s) left out of op_gemm: jax_gemm: cannot parse nvjet transpose from \"nvjet_x\"",
            "2 kernel(s) left out of op_conv: jax_conv: Unknown convolution dimension: 2",
        ]
    );
}
