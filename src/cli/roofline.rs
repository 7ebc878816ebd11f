//! `tracelens roofline`: FLOPs, bytes and the roofline of one operation
//! given by its sizes, without a trace.

use anyhow::Result;
use clap::{Args, Subcommand};

use tracelens::RooflineQuery;
use tracelens::report::view::calculator;

/// Options of `tracelens roofline`.
#[derive(Args)]
pub(crate) struct RooflineArgs {
    #[command(subcommand)]
    op: RooflineOp,
    /// GPU spec: a bundled name (MI300X, H100, …) or a JSON file.
    #[arg(long, global = true, value_name = "NAME|FILE", aliases = ["gpu_arch_json_path", "gpu_arch_platform"])]
    gpu_arch: Option<String>,
    /// Measured kernel time, for achieved TFLOP/s, TB/s and % of roofline.
    #[arg(long, global = true, value_name = "US")]
    time_us: Option<f64>,
    /// Data type: bf16, fp16, fp32, fp64, fp8.
    #[arg(long, global = true, default_value = "bf16")]
    dtype: String,
}

#[derive(Subcommand)]
pub(crate) enum RooflineOp {
    /// [batch ×] (M×K)·(K×N) matrix multiply (aten::mm / addmm / bmm / baddbmm).
    Gemm {
        /// Rows of A and of the output.
        #[arg(long)]
        m: i64,
        /// Columns of B and of the output.
        #[arg(long)]
        n: i64,
        /// The reduction dimension.
        #[arg(long)]
        k: i64,
        /// Batch count (bmm).
        #[arg(long)]
        batch: Option<i64>,
        /// Add a bias (addmm / baddbmm).
        #[arg(long)]
        bias: bool,
    },
    /// Scaled dot-product attention (flash layout).
    Sdpa {
        /// Batch size.
        #[arg(long)]
        batch: i64,
        /// Query heads.
        #[arg(long)]
        heads: i64,
        /// Key/value heads (grouped-query attention) [default: heads].
        #[arg(long)]
        kv_heads: Option<i64>,
        /// Query sequence length.
        #[arg(long)]
        seq_q: i64,
        /// Key/value sequence length [default: seq-q].
        #[arg(long)]
        seq_kv: Option<i64>,
        /// Head dimension.
        #[arg(long)]
        head_dim: i64,
        /// Causal mask (halves the FLOPs; needs seq-q == seq-kv).
        #[arg(long)]
        causal: bool,
    },
    /// Forward convolution (aten::convolution).
    Conv {
        /// Input shape N,C,H,W (or N,C,L / N,C,D,H,W).
        #[arg(long, value_delimiter = ',', required = true)]
        input: Vec<i64>,
        /// Weight shape C_out,C_in/groups,R,S.
        #[arg(long, value_delimiter = ',', required = true)]
        weight: Vec<i64>,
        /// Stride per spatial dimension [default: 1].
        #[arg(long, value_delimiter = ',')]
        stride: Vec<i64>,
        /// Padding per spatial dimension [default: 0].
        #[arg(long, value_delimiter = ',')]
        padding: Vec<i64>,
        /// Dilation per spatial dimension [default: 1].
        #[arg(long, value_delimiter = ',')]
        dilation: Vec<i64>,
        /// Groups.
        #[arg(long, default_value_t = 1)]
        groups: i64,
    },
}

/// The library's operation for a `roofline` subcommand: the same variant
/// with the same fields.
macro_rules! library_op {
    ($op:expr; $($variant:ident { $($field:ident),* }),*) => {
        match $op {
            $(RooflineOp::$variant { $($field),* } => tracelens::RooflineOp::$variant { $($field),* },)*
        }
    };
}

/// The library's question for `roofline` arguments.
pub(crate) fn roofline_query(a: RooflineArgs) -> RooflineQuery {
    let op = library_op!(a.op;
        Gemm { m, n, k, batch, bias },
        Sdpa { batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal },
        Conv { input, weight, stride, padding, dilation, groups });
    RooflineQuery {
        op,
        dtype: a.dtype,
        gpu_arch: a.gpu_arch,
        time_us: a.time_us,
    }
}

/// Runs the subcommand.
pub(crate) fn run(a: RooflineArgs) -> Result<()> {
    let r = tracelens::roofline(&roofline_query(a))?;
    super::stdout::write(&calculator::text(&r.eval, &r.figures()))
}
