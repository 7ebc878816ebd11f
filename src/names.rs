//! Every sheet name and column name the reports use, once.
//!
//! The names are the reference's (AMD TraceLens, pandas): spelled exactly
//! as its sheets spell them, odd spaces, units and casing included, since
//! `compare` and `../shared/tools/conform.py` match them byte for byte.
//! Names built from a base and a suffix (`Kernel Time (µs)` + `_sum`) have
//! a const for the base and one for each full name read in more than one
//! place.

/// Sheet (table) names: one worksheet, one CSV file stem.
pub mod sheet {
    // --- The single-trace report, in output order ---

    /// GPU time split into computation, communication, memcpy and idle.
    pub const GPU_TIMELINE: &str = "gpu_timeline";
    /// One row per profiler step: its CPU range, its GPU figures as
    /// `gpu_timeline` splits them, and what its kernels ran.
    pub const STEP_SUMMARY: &str = "step_summary";
    /// Direct kernel time per op category.
    pub const OPS_SUMMARY_BY_CATEGORY: &str = "ops_summary_by_category";
    /// Direct and subtree kernel time per op name.
    pub const OPS_SUMMARY: &str = "ops_summary";
    /// Kernel time per op name and argument shapes/types.
    pub const OPS_UNIQUE_ARGS: &str = "ops_unique_args";
    /// Every GPU-time-owning op with its perf model, in one table.
    pub const UNIFIED_PERF_SUMMARY: &str = "unified_perf_summary";
    /// Kernel time per kernel name, stream and parent op.
    pub const KERNEL_SUMMARY: &str = "kernel_summary";
    /// Histogram of the short kernels' durations.
    pub const SHORT_KERNEL_HISTOGRAM: &str = "short_kernel_histogram";
    /// Short kernels per parent op and arguments.
    pub const SHORT_KERNELS_SUMMARY: &str = "short_kernels_summary";
    /// The single-trace collectives table (`nccl_summary_long` of rank 0).
    pub const COLL_ANALYSIS: &str = "coll_analysis";
    /// Kernel time per launcher and kernel category (`--kernel-categories`).
    pub const KERNEL_CATEGORY_BY_LAUNCHER: &str = "kernel_category_by_launcher";
    /// The reference's per-op table (not written by `report`; a `compare`
    /// input when a reference report has it).
    pub const OPS_ALL: &str = "ops_all";
    /// Idle time per GPU stream by HTA's categories (host wait, kernel
    /// wait, other), HTA's figures and exact ones.
    pub const IDLE_BREAKDOWN: &str = "idle_breakdown";
    /// Host-wait idle time per stream by cause.
    pub const IDLE_CAUSES: &str = "idle_causes";
    /// The longest host-wait gaps, with what the host was doing.
    pub const IDLE_TOP_GAPS: &str = "idle_top_gaps";
    /// One row per gap between GPU events (`--idle-details`).
    pub const IDLE_GAPS: &str = "idle_gaps";
    /// The time on a step's critical path by what bounds it (HTA's
    /// columns; `critical-path`, `report --critical-path`).
    pub const CRITICAL_PATH_SUMMARY: &str = "critical_path_summary";
    /// The critical path, one row per edge.
    pub const CRITICAL_PATH: &str = "critical_path";
    /// The health checks: whether the trace can be trusted.
    pub const HEALTH: &str = "health";
    /// The ranked findings: where GPU time goes and what to do about it.
    pub const FINDINGS: &str = "findings";

    // --- The JAX report (also `gpu_timeline`) ---

    /// The mean of the per-GPU timelines.
    pub const GPU_EVENTS_AVERAGES: &str = "gpu_events_averages";
    /// Every kernel (in JAX a kernel is its own launcher).
    pub const KERNEL_LAUNCHERS: &str = "kernel_launchers";
    /// Kernel time per kernel name.
    pub const KERNEL_LAUNCHERS_SUMMARY: &str = "kernel_launchers_summary";
    /// Kernel time per kernel category.
    pub const KERNEL_LAUNCHERS_SUMMARY_BY_CATEGORY: &str = "kernel_launchers_summary_by_category";
    /// Kernels grouped by name and shapes.
    pub const KERNEL_LAUNCHERS_UNIQUE_ARGS: &str = "kernel_launchers_unique_args";
    /// The XLA (uncategorised) kernels with their input bytes.
    pub const DF_XLA_PERF: &str = "df_xla_perf";
    /// The XLA kernels by name without digits.
    pub const XLA_SUMMARY: &str = "xla_summary";
    /// Prefix of a perf-model sheet, before the lower-cased category with
    /// `_` for spaces (`op_conv`, `op_fa_bwd`).
    pub const OP_PREFIX: &str = "op_";

    // --- The rocprofv3 report (also `gpu_timeline`, `kernel_summary` and
    // the short-kernel sheets) ---

    /// Kernel time per kernel category.
    pub const KERNEL_SUMMARY_BY_CATEGORY: &str = "kernel_summary_by_category";
    /// One row per kernel dispatch.
    pub const KERNEL_DETAILS: &str = "kernel_details";

    // --- Roofline sheets: one per perf-model family, `_fwd`/`_bwd` for
    // the families with a backward pass ---

    /// Matrix multiplications.
    pub const GEMM: &str = "GEMM";
    /// Scaled-dot-product attention, forward.
    pub const SDPA_FWD: &str = "SDPA_fwd";
    /// Scaled-dot-product attention, backward.
    pub const SDPA_BWD: &str = "SDPA_bwd";
    /// Convolutions, forward.
    pub const CONV_FWD: &str = "CONV_fwd";
    /// Convolutions, backward.
    pub const CONV_BWD: &str = "CONV_bwd";
    /// Unary elementwise ops.
    pub const UNARY_ELEMENTWISE: &str = "UnaryElementwise";
    /// Binary elementwise ops.
    pub const BINARY_ELEMENTWISE: &str = "BinaryElementwise";
    /// Normalization ops.
    pub const NORMALIZATION: &str = "Normalization";
    /// Suffix of a family's forward sheet (`SDPA` + `_fwd`).
    pub const FWD_SUFFIX: &str = "_fwd";
    /// Suffix of a family's backward sheet (`SDPA` + `_bwd`).
    pub const BWD_SUFFIX: &str = "_bwd";

    // --- Roofline plots ---

    /// The plotted points of every roofline sheet (the chart's data).
    pub const ROOFLINE_POINTS: &str = "roofline_points";
    /// The Excel chart sheet of the roofline plot.
    pub const ROOFLINE_CHART: &str = "roofline_chart";

    // --- The multi-rank collectives report ---

    /// Matched collectives summarised per (name, dtype, size).
    pub const NCCL_SUMMARY_IMPLICIT_SYNC: &str = "nccl_summary_implicit_sync";
    /// Per-rank collective kernels summarised per group key.
    pub const NCCL_SUMMARY_LONG: &str = "nccl_summary_long";
    /// all_to_allv collectives summarised per (process group, dtype).
    pub const NCCL_SUMMARY_ALL2ALLV: &str = "nccl_summary_all2allv";
    /// Every collective kernel of every rank.
    pub const NCCL_LONG: &str = "nccl_long";
    /// Every collective matched across ranks, with per-rank timings.
    pub const NCCL_IMPLICIT_SYNC: &str = "nccl_implicit_sync";
    /// Every all_to_allv collective, with per-rank sizes and timings.
    pub const NCCL_ALL2ALLV: &str = "nccl_all2allv";
    /// Per rank: how long it waited and how often it arrived last.
    pub const STRAGGLER_SUMMARY: &str = "straggler_summary";
    /// Per collective type: count, latency, bandwidth, slowest ranks.
    pub const NCCL_SUMMARY_BY_TYPE: &str = "nccl_summary_by_type";

    // --- The comparison ---

    /// Output base name of the compared `UnaryElementwise` sheets.
    pub const UN_ELTWISE: &str = "un_eltwise";
    /// Output base name of the compared `BinaryElementwise` sheets.
    pub const BIN_ELTWISE: &str = "bin_eltwise";
    /// Split part: rows in the baseline and the variant
    /// (`<sheet>_intersect_<tag>`).
    pub const INTERSECT: &str = "intersect";
    /// Split part: rows only in the baseline.
    pub const ONLY_BASELINE: &str = "only_baseline";
    /// Split part: rows only in the variant.
    pub const ONLY_VARIANT: &str = "only_variant";
}

/// Column names.
pub mod col {
    // --- Op identity and argument keys (ops sheets, unified, roofline) ---

    /// Op (or kernel) name.
    pub const NAME: &str = "name";
    /// Op category (`GEMM`, `elementwise`, …).
    pub const OP_CATEGORY: &str = "op category";
    /// Process name from the trace metadata.
    pub const PROCESS_NAME: &str = "process_name";
    /// Process label from the trace metadata.
    pub const PROCESS_LABEL: &str = "process_label";
    /// Thread name from the trace metadata.
    pub const THREAD_NAME: &str = "thread_name";
    /// Input shapes of an op.
    pub const INPUT_DIMS: &str = "Input Dims";
    /// Input dtypes of an op.
    pub const INPUT_TYPE: &str = "Input type";
    /// Input strides of an op.
    pub const INPUT_STRIDES: &str = "Input Strides";
    /// Concrete (scalar) inputs of an op.
    pub const CONCRETE_INPUTS: &str = "Concrete Inputs";
    /// The group keys after `name` and `op category` shared by
    /// `ops_unique_args` and `unified_perf_summary`.
    pub const ARG_KEYS: [&str; 7] = [
        PROCESS_NAME,
        PROCESS_LABEL,
        THREAD_NAME,
        INPUT_DIMS,
        INPUT_TYPE,
        INPUT_STRIDES,
        CONCRETE_INPUTS,
    ];

    // --- gpu_timeline ---

    /// The timeline row label (see [`super::row`]).
    pub const TYPE: &str = "type";
    /// Time in milliseconds.
    pub const TIME_MS: &str = "time ms";
    /// Share of the total time, in percent.
    pub const PERCENT: &str = "percent";

    // --- Op sheets ---

    /// Number of op instances (`ops_summary*`, legacy `kernel_summary`).
    pub const COUNT: &str = "Count";
    /// Lower-case count (histogram bins, collectives summaries).
    pub const COUNT_LC: &str = "count";
    /// Number of op instances in a group (`ops_unique_args`, unified,
    /// `nccl_summary_long`).
    pub const OPERATION_COUNT: &str = "operation_count";
    /// Base of the direct kernel time columns (`…_sum`, `…_mean`, `…_ms`).
    pub const TOTAL_DIRECT_KERNEL_TIME: &str = "total_direct_kernel_time";
    /// Base of the subtree kernel time columns.
    pub const TOTAL_SUBTREE_KERNEL_TIME: &str = "total_subtree_kernel_time";
    /// Direct kernel time, µs, summed.
    pub const TOTAL_DIRECT_KERNEL_TIME_SUM: &str = "total_direct_kernel_time_sum";
    /// Direct kernel time, µs, mean.
    pub const TOTAL_DIRECT_KERNEL_TIME_MEAN: &str = "total_direct_kernel_time_mean";
    /// Direct kernel time in ms.
    pub const TOTAL_DIRECT_KERNEL_TIME_MS: &str = "total_direct_kernel_time_ms";
    /// Subtree kernel time, µs, summed.
    pub const TOTAL_SUBTREE_KERNEL_TIME_SUM: &str = "total_subtree_kernel_time_sum";
    /// Subtree kernel time in ms.
    pub const TOTAL_SUBTREE_KERNEL_TIME_MS: &str = "total_subtree_kernel_time_ms";
    /// The op categories of an op name, as a Python list.
    pub const CATEGORIES: &str = "Categories";
    /// Share of the sheet's total, in percent.
    pub const PERCENTAGE: &str = "Percentage (%)";
    /// Running sum of [`PERCENTAGE`].
    pub const CUMULATIVE_PERCENTAGE: &str = "Cumulative Percentage (%)";
    /// UID of a group's first event.
    pub const EX_UID: &str = "ex_UID";
    /// Per-kernel statistics of a group, as a Python list of dicts.
    pub const KERNEL_DETAILS_SUMMARY: &str = "kernel_details_summary";
    /// [`KERNEL_DETAILS_SUMMARY`] cut short.
    pub const TRUNC_KERNEL_DETAILS: &str = "trunc_kernel_details";

    // --- The inference report's options ---

    /// Number of instances with subtree kernel time (the `_module`
    /// `ops_summary`).
    pub const TOTAL_SUBTREE_KERNEL_TIME_COUNT: &str = "total_subtree_kernel_time_count";
    /// The launcher's nearest nn.Module ancestor, `_<n>` suffixes removed.
    pub const PARENT_MODULE: &str = "parent_module";
    /// The launcher and its nn.Module ancestors, innermost first.
    pub const CALL_STACK: &str = "call_stack";
    /// [`CALL_STACK`] of a group's first launcher.
    pub const CALL_STACK_FIRST: &str = "call_stack_first";
    /// Number of kernels an op launches (direct in `ops_unique_args`, its
    /// whole subtree in the roofline sheets).
    pub const NUM_KERNELS: &str = "num_kernels";
    /// The Python frame an op is dispatched from.
    pub const ENTRY_POINT: &str = "entry_point";
    /// Frames from the root to each kernel of an op (common prefix, then
    /// the diverging tails).
    pub const CALL_STACK_FULL: &str = "call_stack_full";

    // --- unified_perf_summary and the roofline sheets ---

    /// Summed CPU duration of a group's ops, µs.
    pub const TOTAL_DURATION_US: &str = "total_duration_us";
    /// Mean CPU duration, µs.
    pub const MEAN_DURATION_US: &str = "mean_duration_us";
    /// Sample std of the CPU duration, µs.
    pub const STD_DURATION_US: &str = "std_duration_us";
    /// Base of the CPU duration statistics (`duration_us_median`, …).
    pub const DURATION_US: &str = "duration_us";
    /// Modelled GFLOPs of one op.
    pub const GFLOPS: &str = "GFLOPS";
    /// Modelled bytes moved by one op, MB.
    pub const DATA_MOVED_MB: &str = "Data Moved (MB)";
    /// Arithmetic intensity, FLOPs per byte.
    pub const FLOPS_PER_BYTE: &str = "FLOPS/Byte";
    /// The compute roof used (`matrix_bf16`, …).
    pub const COMPUTE_SPEC: &str = "Compute Spec";
    /// `COMPUTE_BOUND` or `MEMORY_BOUND`.
    pub const ROOFLINE_BOUND: &str = "Roofline Bound";
    /// Base of the achieved memory bandwidth statistics, TB/s.
    pub const TB_S: &str = "TB/s";
    /// Base of the achieved compute rate statistics, TFLOP/s.
    pub const TFLOPS_S: &str = "TFLOPS/s";
    /// Base of the kernel time statistics, µs.
    pub const KERNEL_TIME_US: &str = "Kernel Time (µs)";
    /// Base of the percent-of-roofline statistics.
    pub const PCT_ROOFLINE: &str = "Pct Roofline";
    /// Base of the roofline time, µs.
    pub const ROOFLINE_TIME_US: &str = "Roofline Time (µs)";
    /// The model's parameters, as a Python dict.
    pub const PERF_PARAMS: &str = "perf_params";
    /// Whether the op has a perf model.
    pub const HAS_PERF_MODEL: &str = "has_perf_model";
    /// Mean achieved bandwidth.
    pub const TB_S_MEAN: &str = "TB/s_mean";
    /// Mean achieved compute rate.
    pub const TFLOPS_S_MEAN: &str = "TFLOPS/s_mean";
    /// Summed kernel time.
    pub const KERNEL_TIME_US_SUM: &str = "Kernel Time (µs)_sum";
    /// Mean kernel time.
    pub const KERNEL_TIME_US_MEAN: &str = "Kernel Time (µs)_mean";
    /// Mean percent of roofline.
    pub const PCT_ROOFLINE_MEAN: &str = "Pct Roofline_mean";
    /// Roofline time of a group's first op.
    pub const ROOFLINE_TIME_US_FIRST: &str = "Roofline Time (µs)_first";

    // --- Roofline sheets (`GEMM`, `SDPA_fwd`, …) ---

    /// Prefix of a model parameter column (`param: M`).
    pub const PARAM_PREFIX: &str = "param: ";
    /// GFLOPs of a group's first op.
    pub const GFLOPS_FIRST: &str = "GFLOPS_first";
    /// Bytes moved by a group's first op, MB.
    pub const DATA_MOVED_MB_FIRST: &str = "Data Moved (MB)_first";
    /// Arithmetic intensity of a group's first op.
    pub const FLOPS_PER_BYTE_FIRST: &str = "FLOPS/Byte_first";
    /// Process name of a group's first op.
    pub const PROCESS_NAME_FIRST: &str = "process_name_first";
    /// Process label of a group's first op.
    pub const PROCESS_LABEL_FIRST: &str = "process_label_first";
    /// Thread name of a group's first op.
    pub const THREAD_NAME_FIRST: &str = "thread_name_first";
    /// Roofline bound of a group's first op.
    pub const ROOFLINE_BOUND_FIRST: &str = "Roofline Bound_first";
    /// Per-kernel statistics of a group (the roofline sheets' spelling).
    pub const KERNEL_DETAILS_SUMMARIZE: &str = "kernel_details__summarize_kernel_stats";
    /// Input shapes of a group's first op.
    pub const INPUT_DIMS_FIRST: &str = "Input Dims_first";
    /// Input dtypes of a group's first op.
    pub const INPUT_TYPE_FIRST: &str = "Input type_first";
    /// Input strides of a group's first op.
    pub const INPUT_STRIDES_FIRST: &str = "Input Strides_first";
    /// Concrete inputs of a group's first op.
    pub const CONCRETE_INPUTS_FIRST: &str = "Concrete Inputs_first";
    /// Number of ops in a group.
    pub const NAME_COUNT: &str = "name_count";
    /// UID of a group's first op.
    pub const UID_FIRST: &str = "UID_first";

    // --- kernel_summary ---

    /// Category of the kernel's parent op.
    pub const PARENT_OP_CATEGORY: &str = "Parent op category";
    /// Name of the kernel's parent CPU op.
    pub const PARENT_CPU_OP: &str = "Parent cpu_op";
    /// Kernel name.
    pub const KERNEL_NAME: &str = "Kernel name";
    /// Kernel stream.
    pub const KERNEL_STREAM: &str = "Kernel stream";
    /// Base of the kernel duration statistics, µs.
    pub const KERNEL_DURATION_US: &str = "Kernel duration (µs)";
    /// Summed kernel duration.
    pub const KERNEL_DURATION_US_SUM: &str = "Kernel duration (µs)_sum";
    /// Number of kernels.
    pub const KERNEL_DURATION_US_COUNT: &str = "Kernel duration (µs)_count";
    /// Mean kernel duration.
    pub const KERNEL_DURATION_US_MEAN: &str = "Kernel duration (µs)_mean";
    /// Shortest kernel duration.
    pub const KERNEL_DURATION_US_MIN: &str = "Kernel duration (µs)_min";
    /// Longest kernel duration.
    pub const KERNEL_DURATION_US_MAX: &str = "Kernel duration (µs)_max";
    /// Share of all kernel time, in percent.
    pub const PERCENT_OF_KERNELS_TIME: &str = "Percent of kernels time (%)";
    /// Share of the total GPU time, in percent.
    pub const PERCENT_OF_TOTAL_TIME: &str = "Percent of total time (%)";

    // --- Kernel categories (`--kernel-categories`; ours, not the reference's) ---

    /// The kernel-name category of the shared keyword table.
    pub const KERNEL_CATEGORY: &str = "kernel_category";
    /// Number of kernels.
    pub const KERNEL_COUNT: &str = "kernel_count";
    /// Summed kernel time, ms.
    pub const KERNEL_TIME_MS: &str = "kernel_time_ms";
    /// Share of the launcher's kernel time, in percent.
    pub const PERCENT_OF_LAUNCHER_TIME: &str = "Percent of launcher time (%)";

    // --- Older reports' kernel_summary (read by compare) and the rocprofv3
    // report's `kernel_summary` (where the `(µs)` columns hold ns and the
    // `(ms)` one µs, as in the reference) ---

    /// Summed kernel time, ms.
    pub const TOTAL_KERNEL_TIME_MS: &str = "Total Kernel Time (ms)";
    /// Summed kernel time, µs.
    pub const TOTAL_KERNEL_TIME_US: &str = "Total Kernel Time (µs)";
    /// Mean kernel time, µs.
    pub const MEAN_KERNEL_TIME_US: &str = "Mean Kernel Time (µs)";
    /// Median kernel time, µs.
    pub const MEDIAN_KERNEL_TIME_US: &str = "Median Kernel Time (µs)";
    /// Sample std of the kernel time, µs.
    pub const STD_KERNEL_TIME_US: &str = "Std Kernel Time (µs)";
    /// Shortest kernel time, µs.
    pub const MIN_KERNEL_TIME_US: &str = "Min Kernel Time (µs)";
    /// Longest kernel time, µs.
    pub const MAX_KERNEL_TIME_US: &str = "Max Kernel Time (µs)";
    /// Kernel category.
    pub const CATEGORY: &str = "Category";

    // --- The rocprofv3 report: kernel_details (besides `name`,
    // `Kernel duration (µs)` in ns, `stream`) ---

    /// The dispatch's id.
    pub const DISPATCH_ID: &str = "dispatch_id";
    /// Grid size, x.
    pub const GRID_X: &str = "grid_x";
    /// Grid size, y.
    pub const GRID_Y: &str = "grid_y";
    /// Grid size, z.
    pub const GRID_Z: &str = "grid_z";
    /// Workgroup size, x.
    pub const BLOCK_X: &str = "block_x";
    /// Workgroup size, y.
    pub const BLOCK_Y: &str = "block_y";
    /// Workgroup size, z.
    pub const BLOCK_Z: &str = "block_z";
    /// The agent (GPU) that ran the dispatch.
    pub const AGENT_ID: &str = "agent_id";
    /// The host thread that enqueued it.
    pub const THREAD_ID: &str = "thread_id";

    // --- The JAX report: gpu_timeline, kernel_launchers and the sheets
    // built on it ---

    /// The GPU process of a `gpu_timeline` row.
    pub const GPU_PID: &str = "gpu_pid";
    /// Event UID (the kernel's index in the trace).
    pub const UID: &str = "UID";
    /// Kernels a launcher launched directly (always 1 in JAX).
    pub const DIRECT_KERNEL_COUNT: &str = "direct_kernel_count";
    /// Process id.
    pub const PID: &str = "pid";
    /// Thread id.
    pub const TID: &str = "tid";
    /// The kernel's details, as a Python list of dicts.
    pub const KERNEL_DETAILS: &str = "kernel_details";
    /// Kernel start minus its host launch's start, µs.
    pub const GPU_KERNEL_LAUNCH_LATENCY: &str = "GPU_kernel_launch_latency";
    /// [`TOTAL_DIRECT_KERNEL_TIME_MS`] over the number of GPUs.
    pub const TIME_MS_PER_GPU: &str = "time ms per gpu";
    /// Bytes of a kernel's array operands.
    pub const TOTAL_INPUT_BYTES: &str = "total_input_bytes";

    // --- short_kernel_histogram, short_kernels_summary ---

    /// Lower edge of a histogram bin, µs.
    pub const BIN_START: &str = "bin_start";
    /// Upper edge of a histogram bin, µs.
    pub const BIN_END: &str = "bin_end";
    /// Input shapes of the parent op (this sheet's casing).
    pub const INPUT_DIMS_LC: &str = "Input dims";
    /// Input strides of the parent op (this sheet's casing).
    pub const INPUT_STRIDES_LC: &str = "Input strides";
    /// Summed short kernel duration.
    pub const SHORT_KERNEL_DURATION_SUM: &str = "Short Kernel duration (µs) sum";
    /// Number of short kernels.
    pub const SHORT_KERNEL_COUNT: &str = "Short Kernel count";
    /// Mean short kernel duration.
    pub const SHORT_KERNEL_DURATION_MEAN: &str = "Short Kernel duration (µs) mean";
    /// Short kernel time as a share of the total time.
    pub const SHORT_KERNEL_DURATION_PCT_TOTAL: &str =
        "Short Kernel duration (µs) percent of total time";

    // --- roofline_points (the plot's data) ---

    /// Op category of a point.
    pub const CATEGORY_LC: &str = "category";
    /// Op label of a point.
    pub const OP: &str = "op";
    /// Arithmetic intensity axis (the chart's spelling).
    pub const FLOPS_PER_BYTE_AXIS: &str = "FLOPs/Byte";
    /// Achieved compute rate axis (the chart's spelling).
    pub const TFLOP_S_AXIS: &str = "TFLOP/s";

    // --- Collectives: per-kernel keys and values ---

    /// A collective instance's id.
    pub const COLLECTIVE_ID: &str = "collective_id";
    /// Position of a kernel within its process group's sequence.
    pub const INDEX_IN_GROUP: &str = "index_in_group";
    /// Rank.
    pub const RANK: &str = "rank";
    /// Process group name.
    pub const PROCESS_GROUP_NAME: &str = "Process Group Name";
    /// Process group ranks.
    pub const PROCESS_GROUP_RANKS: &str = "Process Group Ranks";
    /// Collective name (`allreduce`, …).
    pub const COLLECTIVE_NAME: &str = "Collective name";
    /// Process group size.
    pub const GROUP_SIZE: &str = "Group size";
    /// Element type.
    pub const DTYPE: &str = "dtype";
    /// Input elements.
    pub const IN_MSG_NELEMS: &str = "In msg nelems";
    /// Output elements.
    pub const OUT_MSG_NELEMS: &str = "Out msg nelems";
    /// Input size, MB.
    pub const IN_MSG_SIZE_MB: &str = "In msg size (MB)";
    /// Output size, MB.
    pub const OUT_MSG_SIZE_MB: &str = "Out msg size (MB)";
    /// Input split sizes.
    pub const IN_SPLIT_SIZE: &str = "In split size";
    /// Output split sizes.
    pub const OUT_SPLIT_SIZE: &str = "Out split size";
    /// CUDA/HIP stream.
    pub const STREAM: &str = "stream";

    // --- The critical-path sheets ---

    /// What bounds the time (HTA's `bound_by`).
    pub const BOUND_BY: &str = "bound_by";
    /// Time, µs (HTA's rounded clock).
    pub const CP_DURATION_US: &str = "duration_us";
    /// Share of the path's time, %.
    pub const PCT_OF_PATH_DURATION: &str = "pct_of_path_duration";
    /// Position on the path.
    pub const CP_POSITION: &str = "position";
    /// HTA's edge type.
    pub const CP_EDGE_TYPE: &str = "edge_type";
    /// The event the edge's time is charged to.
    pub const CP_EVENT: &str = "event";
    /// Where the edge begins, µs, trace time.
    pub const CP_BEGIN_US: &str = "begin (µs)";
    /// Where it ends, µs, trace time.
    pub const CP_END_US: &str = "end (µs)";
    /// A GPU event replayed by a graph launch.
    pub const CP_GRAPH_REPLAY: &str = "graph_replay";

    // --- The idle sheets (`idle_breakdown`, `idle_causes`, the gap rows) ---

    /// HTA's idle category of a gap (`host_wait`, `kernel_wait`, `other`).
    pub const IDLE_CATEGORY: &str = "idle_category";
    /// HTA's idle time, µs, from events rounded to whole µs.
    pub const HTA_IDLE_TIME: &str = "idle_time";
    /// HTA's share of the stream's idle time (2 decimals).
    pub const IDLE_TIME_RATIO: &str = "idle_time_ratio";
    /// GPU events charged with the category under HTA's rules.
    pub const IDLE_KERNELS: &str = "kernels";
    /// Our idle time, µs, from exact times over the whole trace.
    pub const IDLE_TIME_EXACT_US: &str = "idle_time_exact (µs)";
    /// Our share of the stream's idle time.
    pub const IDLE_TIME_RATIO_EXACT: &str = "idle_time_ratio_exact";
    /// GPU events charged with the category under our rules.
    pub const IDLE_KERNELS_EXACT: &str = "kernels_exact";
    /// Why the host was late (`sync`, `blocking_copy`, …).
    pub const IDLE_CAUSE: &str = "cause";
    /// Number of gaps.
    pub const IDLE_GAPS: &str = "gaps";
    /// Idle time, ms.
    pub const IDLE_TIME_MS: &str = "idle_time (ms)";
    /// Share of the stream's host-wait time, %.
    pub const PCT_OF_HOST_WAIT: &str = "pct_of_host_wait";
    /// The gap's category under HTA's rules.
    pub const IDLE_CATEGORY_HTA: &str = "idle_category_hta";
    /// Where the gap starts, trace time, µs.
    pub const GAP_START_TS_US: &str = "gap_start_ts (µs)";
    /// The gap's length, µs, exact.
    pub const GAP_US: &str = "gap (µs)";
    /// The gap's length, µs, under HTA's rules.
    pub const GAP_HTA_US: &str = "gap_hta (µs)";
    /// UID of the GPU event before the gap.
    pub const PREV_KERNEL_UID: &str = "prev_kernel_uid";
    /// The GPU event after the gap.
    pub const NEXT_KERNEL: &str = "next_kernel";
    /// Its UID.
    pub const NEXT_KERNEL_UID: &str = "next_kernel_uid";
    /// Its launch call.
    pub const LAUNCH: &str = "launch";
    /// The launch call's UID.
    pub const LAUNCH_UID: &str = "launch_uid";
    /// The runtime call that shows the cause.
    pub const HOST_CALL: &str = "host_call";
    /// Its UID.
    pub const HOST_CALL_UID: &str = "host_call_uid";
    /// The CPU op the host was in when the gap began.
    pub const HOST_OP: &str = "host_op";
    /// Its UID.
    pub const HOST_OP_UID: &str = "host_op_uid";
    /// The Python frame the host was in when the gap began.
    pub const PYTHON_FRAME: &str = "python_frame";
    /// Its UID.
    pub const PYTHON_FRAME_UID: &str = "python_frame_uid";
    /// Kernel start, µs.
    pub const TS: &str = "ts";
    /// Kernel duration, µs.
    pub const DUR: &str = "dur";
    /// Node of a rank.
    pub const NODE_ID: &str = "node_id";
    /// Whether a process group stays on one node (`intra_node`,
    /// `inter_node`, `unknown`).
    pub const NODE_SPAN: &str = "node_span";
    /// Where the collective's fields came from.
    pub const METADATA: &str = "metadata";
    /// Prefix of per-rank columns (`rank_3_ts`).
    pub const RANK_PREFIX: &str = "rank_";
    /// Per-rank wait time (`rank_<r>_wait_time`).
    pub const WAIT_TIME: &str = "wait_time";

    // --- Collectives: matched collectives ---

    /// Full message size, MB.
    pub const FULL_MSG_SIZE_MB: &str = "Full msg size (MB)";
    /// Communication latency, µs.
    pub const COMM_LATENCY: &str = "comm_latency";
    /// Spread of the ranks' start times, µs.
    pub const SKEW_IN_START_TIME: &str = "skew in start time";
    /// Spread of the ranks' end times, µs.
    pub const SKEW_IN_END_TIME: &str = "skew in end time";
    /// The first rank to arrive.
    pub const EARLIEST_ARRIVAL_RANK: &str = "earliest arrival rank";
    /// Mean wait of the ranks, µs.
    pub const AVG_WAIT_TIME: &str = "avg_wait_time";
    /// Algorithm bandwidth, GB/s.
    pub const ALGO_BW: &str = "algo bw (GB/s)";
    /// Bus bandwidth, GB/s.
    pub const BUS_BW: &str = "bus bw (GB/s)";
    /// Summed latency, ms.
    pub const TOTAL_COMM_LATENCY_MS: &str = "Total comm latency (ms)";
    /// Collective names inferred from kernel names, with counts.
    pub const INFERRED_COLLECTIVE_NAMES: &str = "inferred collective names";

    // --- Collectives: nccl_summary_long ---

    /// First input size of a group, MB.
    pub const IN_MSG_SIZE_MB_FIRST: &str = "In msg size (MB)_first";
    /// First output size of a group, MB.
    pub const OUT_MSG_SIZE_MB_FIRST: &str = "Out msg size (MB)_first";
    /// Summed duration.
    pub const DUR_SUM: &str = "dur_sum";
    /// Mean duration.
    pub const DUR_MEAN: &str = "dur_mean";
    /// Sample std of the duration.
    pub const DUR_STD: &str = "dur_std";
    /// Shortest duration.
    pub const DUR_MIN: &str = "dur_min";
    /// Longest duration.
    pub const DUR_MAX: &str = "dur_max";

    // --- Collectives: all_to_allv ---

    /// Data moved by all ranks, MB.
    pub const TOTAL_DATA_COMMUNICATED_MB: &str = "total data communicated (MB)";
    /// Elements moved by all ranks.
    pub const TOTAL_NELEMS_COMMUNICATED: &str = "total nelems communicated";
    /// First start to last end, µs.
    pub const WALL_TIME_US: &str = "wall_time (us)";
    /// Longest rank duration, µs.
    pub const MAX_RANK_DUR_US: &str = "max_rank_dur (us)";
    /// Shortest rank duration, µs.
    pub const MIN_RANK_DUR_US: &str = "min_rank_dur (us)";
    /// Mean rank duration, µs.
    pub const AVG_RANK_DUR_US: &str = "avg_rank_dur (us)";
    /// Throughput, GB/s.
    pub const THROUGHPUT: &str = "throughput (GB/s)";
    /// Best rank throughput, GB/s.
    pub const MAX_RANK_THROUGHPUT: &str = "max_rank_throughput (GB/s)";
    /// Worst rank throughput, GB/s.
    pub const MIN_RANK_THROUGHPUT: &str = "min_rank_throughput (GB/s)";
    /// Largest over smallest rank size.
    pub const SIZE_IMBALANCE: &str = "size_imbalance";
    /// Summed wall time, µs.
    pub const TOTAL_WALL_TIME_US: &str = "Total wall_time (us)";
    /// Summed wall time, ms.
    pub const TOTAL_WALL_TIME_MS: &str = "Total wall_time (ms)";

    // --- Collectives: straggler_summary ---

    /// A rank's summed wait, µs.
    pub const TOTAL_WAIT_TIME_US: &str = "total_wait_time_us";
    /// A rank's mean wait, µs.
    pub const MEAN_WAIT_TIME_US: &str = "mean_wait_time_us";
    /// How often a rank arrived last.
    pub const TIMES_ARRIVED_LAST: &str = "times_arrived_last";
    /// How often a rank arrived first.
    pub const TIMES_ARRIVED_FIRST: &str = "times_arrived_first";
    /// Share of collectives a rank arrived last in, percent.
    pub const PCT_ARRIVED_LAST: &str = "pct_arrived_last";
    /// Collectives a rank took part in.
    pub const NUM_COLLECTIVES: &str = "num_collectives";
    /// A rank's summed collective kernel time, µs.
    pub const TOTAL_NCCL_DUR_US: &str = "total_nccl_dur_us";

    // --- Collectives: nccl_summary_by_type ---

    /// Collective type.
    pub const COLLECTIVE_TYPE: &str = "collective type";
    /// Mean latency.
    pub const COMM_LATENCY_MEAN: &str = "comm_latency_mean";
    /// Mean algorithm bandwidth.
    pub const ALGO_BW_MEAN: &str = "algo bw (GB/s)_mean";
    /// Mean bus bandwidth.
    pub const BUS_BW_MEAN: &str = "bus bw (GB/s)_mean";
    /// Mean start skew.
    pub const SKEW_IN_START_TIME_MEAN: &str = "skew in start time_mean";
    /// Mean end skew.
    pub const SKEW_IN_END_TIME_MEAN: &str = "skew in end time_mean";
    /// Mean of the mean waits.
    pub const AVG_WAIT_TIME_MEAN: &str = "avg_wait_time_mean";
    /// The collective names of a type.
    pub const COLLECTIVE_NAMES: &str = "Collective names";
    /// How many collectives of a type had an inferred name.
    pub const INFERRED_FROM_KERNEL_NAME: &str = "inferred from kernel name";
    /// The ranks that arrived last most often.
    pub const ARRIVED_LAST_MOST_OFTEN: &str = "arrived last most often (rank)";

    // --- compare: how joined and diffed columns are named ---

    /// Between a report's tag and a column (`base::Count`).
    pub const TAG_SEPARATOR: &str = "::";
    /// Between a column and a variant tag (`Count__new_diff`).
    pub const DIFF_SEPARATOR: &str = "__";
    /// Suffix of a difference column.
    pub const DIFF_SUFFIX: &str = "_diff";
    /// Suffix of a percentage-difference column.
    pub const PCT_SUFFIX: &str = "_pct";
}

/// Row labels read back by name: the `type` column of `gpu_timeline`.
pub mod row {
    /// GPU time in compute kernels.
    pub const COMPUTATION_TIME: &str = "computation_time";
    /// Communication not hidden behind compute.
    pub const EXPOSED_COMM_TIME: &str = "exposed_comm_time";
    /// Memory copies not hidden behind compute or communication.
    pub const EXPOSED_MEMCPY_TIME: &str = "exposed_memcpy_time";
    /// GPU busy time (compared by `compare`'s gate).
    pub const BUSY_TIME: &str = "busy_time";
    /// Idle gaps shorter than the micro-idle threshold.
    pub const MICRO_IDLE_TIME: &str = "micro_idle_time";
    /// Idle gaps from the micro-idle threshold up.
    pub const MACRO_IDLE_TIME: &str = "macro_idle_time";
    /// GPU idle time (without a micro-idle threshold).
    pub const IDLE_TIME: &str = "idle_time";
    /// First GPU event start to last end.
    pub const TOTAL_TIME: &str = "total_time";
    /// All communication time.
    pub const TOTAL_COMM_TIME: &str = "total_comm_time";
    /// All memory copy time.
    pub const TOTAL_MEMCPY_TIME: &str = "total_memcpy_time";

    // --- The rocprofv3 report's gpu_timeline (also `total_time`,
    // `busy_time`) ---

    /// Union of the kernel dispatches.
    pub const KERNEL: &str = "kernel";
    /// Union of the memory copies.
    pub const MEMORY: &str = "memory";
    /// Total minus busy.
    pub const IDLE: &str = "idle";
}

/// The names of the fleet outputs: the per-trace summaries of `tracelens
/// summarize` and the merged tables of `tracelens fleet`.
pub mod fleet {
    /// File stems of the tables.
    pub mod sheet {
        /// A summary's one-row table: the trace, its rank and job.
        pub const TRACE_INFO: &str = "trace_info";
        /// A summary's per-step figures (busy, idle, exposed comm, …).
        pub const STEPS: &str = "steps";
        /// A summary's collective kernels: rank, process group, sequence
        /// number, type, size, start, end.
        pub const COLLECTIVES: &str = "collectives";
        /// Per op: percentiles across traces of time and share.
        pub const FLEET_OPS: &str = "fleet_ops";
        /// Per kernel: percentiles across traces of time and share.
        pub const FLEET_KERNELS: &str = "fleet_kernels";
        /// One row per rank and step: the heatmap's cells.
        pub const FLEET_STEPS: &str = "fleet_steps";
        /// Ranks and steps whose robust z-score is past the threshold.
        pub const FLEET_OUTLIERS: &str = "fleet_outliers";
        /// Two fleets compared: per metric, change, bootstrap interval and
        /// verdict.
        pub const FLEET_COMPARE: &str = "fleet_compare";
        /// One row per trace: its health verdict, the checks that did
        /// not pass and its top finding.
        pub const FLEET_HEALTH: &str = "fleet_health";
        /// One row per finding id: in how many traces, how large.
        pub const FLEET_FINDINGS: &str = "fleet_findings";
    }

    /// The columns of one profiler step's figures (µs), in the field order
    /// of `analysis::commands::steps::StepFigures`: the summary's `steps` table and
    /// the `fleet_steps` sheet.
    pub const STEP_COLUMNS: [&str; 11] = [
        "step",
        "cpu_start_us",
        "cpu_dur_us",
        "gpu_start_us",
        "gpu_span_us",
        "busy_us",
        "computation_us",
        "exposed_comm_us",
        "exposed_memcpy_us",
        "idle_us",
        "gpu_events",
    ];

    /// The columns after [`STEP_COLUMNS`] in the report's `step_summary`
    /// sheet and the summary's `steps` table: what the step's kernels ran,
    /// and for a serving iteration its batch (tokens) and phase.
    pub const STEP_WORK_COLUMNS: [&str; 5] = [
        "kernels",
        "top_category",
        "top_category_us",
        "batch_size",
        "phase",
    ];
}

/// Sheet and column names of the Perfetto reports (rocprofv3 `.pftrace`),
/// the reference's three pftrace reports in one.
pub mod perfetto {
    /// Sheet names.
    pub mod sheet {
        /// Per launch API and kernel: API, queue and kernel latency.
        pub const API_KERNEL_SUMMARY: &str = "api_kernel_summary";
        /// Per GPU: kernel time by category, communication overlap.
        pub const CATEGORY_SUMMARY: &str = "category_summary";
        /// The longest `xla`-category kernels.
        pub const XLA_TOP: &str = "xla_top";
        /// Kernel time per kernel name (and launch configuration).
        pub const KERNEL_SUMMARY: &str = "kernel_summary";
        /// Host time per HIP API call name.
        pub const HIP_SUMMARY: &str = "hip_summary";
        /// Memory copies per size and direction.
        pub const MEMORY_COPY_BY_COPY_BYTES: &str = "memory_copy_by_copy_bytes";
        /// Per GPU: its agent, compute and communication kernel time (not
        /// in the reference).
        pub const GPU_AGENTS: &str = "gpu_agents";
        /// Memory copies per direction, agents named as the trace names
        /// them (not in the reference).
        pub const MEMORY_COPY_BY_DIRECTION: &str = "memory_copy_by_direction";
    }

    /// The GPU number column (`category_summary`, `gpu_agents`,
    /// `gpu_timeline`).
    pub const GPU_ID: &str = "GPU ID";

    /// `gpu_agents` columns, in order.
    pub const GPU_AGENT_COLUMNS: [&str; 6] = [
        GPU_ID,
        "agent",
        "compute_ms",
        "comm_ms",
        "comm_not_overlapped_ms",
        "fa_v3_backward",
    ];

    /// `memory_copy_by_direction` columns, in order.
    pub const COPY_DIRECTION_COLUMNS: [&str; 3] = ["direction", "count", "bytes"];

    /// `api_kernel_summary` columns, in order.
    pub const API_KERNEL_COLUMNS: [&str; 27] = [
        "PID",
        "TID",
        "DevId",
        "Count",
        "QCount",
        "TAvg_ns",
        "TMed_ns",
        "TMin_ns",
        "TMax_ns",
        "TStdDev_ns",
        "AAvg_ns",
        "AMed_ns",
        "AMin_ns",
        "AMax_ns",
        "AStdDev_ns",
        "QAvg_ns",
        "QMed_ns",
        "QMin_ns",
        "QMax_ns",
        "QStdDev_ns",
        "KAvg_ns",
        "KMed_ns",
        "KMin_ns",
        "KMax_ns",
        "KStdDev_ns",
        "API Name",
        "Kernel Name",
    ];

    /// `category_summary` columns, in order.
    pub const CATEGORY_COLUMNS: [&str; 6] = [
        GPU_ID,
        "Category",
        "Total runtime (ms)",
        "Total count",
        "Fraction of compute runtime",
        "Fraction of total runtime",
    ];

    /// `xla_top` columns, in order.
    pub const XLA_TOP_COLUMNS: [&str; 4] =
        ["Kernel", "Total time (ms)", "Count", "Fraction of XLA"];

    /// `memory_copy_by_copy_bytes` columns, in order.
    pub const MEMORY_COPY_COLUMNS: [&str; 3] = ["copy_bytes", "direction", "count"];

    /// The statistics columns that open the kernel and HIP summaries, as
    /// text (`"1.5%"`, `"40.000 μs"`).
    pub const TEXT_STATS: [&str; 8] = [
        "Time",
        "Total Time",
        "Instances",
        "Avg",
        "Med",
        "Min",
        "Max",
        "StdDev",
    ];

    /// The statistics columns that close the kernel and HIP summaries, as
    /// numbers (ns).
    pub const NUMBER_STATS: [&str; 7] = [
        "Time %",
        "Total Time (ns)",
        "Avg (ns)",
        "Med (ns)",
        "Min (ns)",
        "Max (ns)",
        "StdDev (ns)",
    ];

    /// The launch-configuration columns of `kernel_summary` grouped by
    /// configuration, between the text statistics and the name.
    pub const CONFIG_COLUMNS: [&str; 7] = [
        "GridXYZ",
        "BlockXYZ",
        "VGPR",
        "AccumVGPR",
        "SGPR",
        "LDS",
        "Scratch",
    ];

    /// The per-dimension grid and block columns that end `kernel_summary`
    /// grouped by configuration.
    pub const DIMENSION_COLUMNS: [&str; 6] =
        ["GridX", "GridY", "GridZ", "BlockX", "BlockY", "BlockZ"];

    /// Name column of the kernel and HIP summaries.
    pub const NAME: &str = "Name";
    /// Stream column of `hip_summary` grouped by stream.
    pub const STREAM: &str = "Stream";
    /// Operation column of `hip_summary` grouped by operation.
    pub const OP: &str = "Op";
}

/// Names of the `health` and `findings` sheets' columns.
pub mod diagnosis {
    /// Column names of the two sheets.
    pub mod col {
        /// Row position, from 1 (findings: by mid impact).
        pub const RANK: &str = "rank";
        /// A check's or finding's stable id.
        pub const ID: &str = "id";
        /// A check's outcome: pass, warn, cannot_tell, fail.
        pub const STATUS: &str = "status";
        /// A finding's severity: high, medium, low, info; cannot_tell for
        /// a rule that abstained.
        pub const SEVERITY: &str = "severity";
        /// How sure a finding is of its cause: high, medium, low.
        pub const CONFIDENCE: &str = "confidence";
        /// One sentence with the numbers.
        pub const SUMMARY: &str = "summary";
        /// The op or kernel a finding is about.
        pub const SUBJECT: &str = "subject";
        /// The op's input shapes.
        pub const SHAPE: &str = "shape";
        /// The least GPU time a fix gives back, ms.
        pub const IMPACT_LOW_MS: &str = "impact_low_ms";
        /// The likely GPU time a fix gives back, ms.
        pub const IMPACT_MID_MS: &str = "impact_mid_ms";
        /// The most GPU time a fix gives back, ms.
        pub const IMPACT_HIGH_MS: &str = "impact_high_ms";
        /// The mid impact as a share of the GPU span, %.
        pub const IMPACT_MID_PCT: &str = "impact_mid_pct";
        /// The numbers, `name=value unit; …`.
        pub const EVIDENCE: &str = "evidence";
        /// UIDs of the events behind it, as a list `[12, 40]`.
        pub const UIDS: &str = "uids";
        /// The figures a check invalidates, `; `-separated.
        pub const INVALIDATES: &str = "invalidates";
        /// What to try, `; `-separated.
        pub const ACTIONS: &str = "actions";
        /// Commands that verify it, `; `-separated.
        pub const COMMANDS: &str = "commands";
        /// Which input a row is of (`diff`'s health: baseline, variant).
        pub const SIDE: &str = "side";
        /// That input's path.
        pub const TRACE: &str = "trace";
    }
}

/// The names of TraceDiff's outputs (`tracelens diff`).
pub mod diff {
    /// File stems of the two tables.
    pub mod sheet {
        /// One row per GPU event under a cpu_op, with its LCA.
        pub const DIFF_STATS: &str = "diff_stats";
        /// `diff_stats` grouped on its argument columns.
        pub const DIFF_STATS_SUMMARY: &str = "diff_stats_unique_args_summary";
    }

    /// Column names of the two tables.
    pub mod col {
        /// GPU event (kernel or copy) name.
        pub const NAME: &str = "name";
        /// The enclosing cpu_op's name.
        pub const CPU_OP_NAME: &str = "cpu_op_name";
        /// The enclosing cpu_op's UID.
        pub const CPU_OP_UID: &str = "cpu_op_uid";
        /// `trace1` (baseline) or `trace2` (variant).
        pub const SOURCE: &str = "source";
        /// The GPU event's duration (µs).
        pub const KERNEL_TIME: &str = "kernel_time";
        /// Busy time of the side under the LCA (µs).
        pub const BUSY_TIME: &str = "busy_time";
        /// The LCA's name.
        pub const LCA_NAME: &str = "lowest_common_ancestor_name";
        /// The LCA's merged id.
        pub const LCA_ID: &str = "lowest_common_ancestor_id";
        /// The GPU event's UID.
        pub const GPU_OP_UID: &str = "gpu_op_uid";
        /// The op's nn.Module stack, `;`-joined.
        pub const NN_MODULE_STACK: &str = "nn_module_stack";
        /// The innermost nn.Module.
        pub const NN_MODULE_PARENT: &str = "nn_module_parent";
        /// Group size in the summary.
        pub const OPERATION_COUNT: &str = "operation_count";
        /// Mean kernel time of a summary group.
        pub const KERNEL_TIME_MEAN: &str = "kernel_time_mean";
        /// Total kernel time of a summary group.
        pub const KERNEL_TIME_SUM: &str = "kernel_time_sum";

        /// `diff_stats` columns in order.
        pub const STATS: [&str; 15] = [
            NAME,
            CPU_OP_NAME,
            CPU_OP_UID,
            SOURCE,
            super::super::col::INPUT_DIMS,
            super::super::col::INPUT_STRIDES,
            super::super::col::INPUT_TYPE,
            super::super::col::CONCRETE_INPUTS,
            KERNEL_TIME,
            BUSY_TIME,
            LCA_NAME,
            LCA_ID,
            GPU_OP_UID,
            NN_MODULE_STACK,
            NN_MODULE_PARENT,
        ];

        /// The summary's group keys, in `diff_stats` order.
        pub const SUMMARY_KEYS: [&str; 12] = [
            NAME,
            CPU_OP_NAME,
            CPU_OP_UID,
            SOURCE,
            super::super::col::INPUT_DIMS,
            super::super::col::INPUT_STRIDES,
            super::super::col::INPUT_TYPE,
            super::super::col::CONCRETE_INPUTS,
            BUSY_TIME,
            LCA_NAME,
            NN_MODULE_STACK,
            NN_MODULE_PARENT,
        ];

        /// `diff_stats_unique_args_summary` columns in order.
        pub const SUMMARY: [&str; 15] = [
            NAME,
            OPERATION_COUNT,
            CPU_OP_NAME,
            CPU_OP_UID,
            SOURCE,
            super::super::col::INPUT_DIMS,
            super::super::col::INPUT_STRIDES,
            super::super::col::INPUT_TYPE,
            super::super::col::CONCRETE_INPUTS,
            BUSY_TIME,
            LCA_NAME,
            NN_MODULE_STACK,
            NN_MODULE_PARENT,
            KERNEL_TIME_MEAN,
            KERNEL_TIME_SUM,
        ];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_names_match_their_parts() {
        // (base, statistic, the name built from them)
        let built = [
            (col::KERNEL_TIME_US, "sum", col::KERNEL_TIME_US_SUM),
            (col::KERNEL_TIME_US, "mean", col::KERNEL_TIME_US_MEAN),
            (col::TB_S, "mean", col::TB_S_MEAN),
            (col::TFLOPS_S, "mean", col::TFLOPS_S_MEAN),
            (col::PCT_ROOFLINE, "mean", col::PCT_ROOFLINE_MEAN),
            (col::ROOFLINE_TIME_US, "first", col::ROOFLINE_TIME_US_FIRST),
            (col::GFLOPS, "first", col::GFLOPS_FIRST),
            (col::DATA_MOVED_MB, "first", col::DATA_MOVED_MB_FIRST),
            (col::FLOPS_PER_BYTE, "first", col::FLOPS_PER_BYTE_FIRST),
            (col::ROOFLINE_BOUND, "first", col::ROOFLINE_BOUND_FIRST),
            (col::PROCESS_NAME, "first", col::PROCESS_NAME_FIRST),
            (col::PROCESS_LABEL, "first", col::PROCESS_LABEL_FIRST),
            (col::THREAD_NAME, "first", col::THREAD_NAME_FIRST),
            (col::INPUT_DIMS, "first", col::INPUT_DIMS_FIRST),
            (col::INPUT_TYPE, "first", col::INPUT_TYPE_FIRST),
            (col::INPUT_STRIDES, "first", col::INPUT_STRIDES_FIRST),
            (col::CONCRETE_INPUTS, "first", col::CONCRETE_INPUTS_FIRST),
            (col::NAME, "count", col::NAME_COUNT),
            (col::IN_MSG_SIZE_MB, "first", col::IN_MSG_SIZE_MB_FIRST),
            (col::OUT_MSG_SIZE_MB, "first", col::OUT_MSG_SIZE_MB_FIRST),
            (col::DUR, "sum", col::DUR_SUM),
            (col::DUR, "mean", col::DUR_MEAN),
            (col::DUR, "std", col::DUR_STD),
            (col::DUR, "min", col::DUR_MIN),
            (col::DUR, "max", col::DUR_MAX),
            (col::COMM_LATENCY, "mean", col::COMM_LATENCY_MEAN),
            (col::ALGO_BW, "mean", col::ALGO_BW_MEAN),
            (col::BUS_BW, "mean", col::BUS_BW_MEAN),
            (
                col::SKEW_IN_START_TIME,
                "mean",
                col::SKEW_IN_START_TIME_MEAN,
            ),
            (col::SKEW_IN_END_TIME, "mean", col::SKEW_IN_END_TIME_MEAN),
            (col::AVG_WAIT_TIME, "mean", col::AVG_WAIT_TIME_MEAN),
        ];
        for (base, stat, full) in built {
            assert_eq!(format!("{base}_{stat}"), full);
        }
    }

    #[test]
    fn name_families_match_their_parts() {
        for (base, stat, full) in [
            (col::KERNEL_DURATION_US, "sum", col::KERNEL_DURATION_US_SUM),
            (
                col::KERNEL_DURATION_US,
                "count",
                col::KERNEL_DURATION_US_COUNT,
            ),
            (
                col::KERNEL_DURATION_US,
                "mean",
                col::KERNEL_DURATION_US_MEAN,
            ),
            (col::KERNEL_DURATION_US, "min", col::KERNEL_DURATION_US_MIN),
            (col::KERNEL_DURATION_US, "max", col::KERNEL_DURATION_US_MAX),
            (
                col::TOTAL_DIRECT_KERNEL_TIME,
                "sum",
                col::TOTAL_DIRECT_KERNEL_TIME_SUM,
            ),
            (
                col::TOTAL_DIRECT_KERNEL_TIME,
                "mean",
                col::TOTAL_DIRECT_KERNEL_TIME_MEAN,
            ),
            (
                col::TOTAL_DIRECT_KERNEL_TIME,
                "ms",
                col::TOTAL_DIRECT_KERNEL_TIME_MS,
            ),
            (
                col::TOTAL_SUBTREE_KERNEL_TIME,
                "sum",
                col::TOTAL_SUBTREE_KERNEL_TIME_SUM,
            ),
            (
                col::TOTAL_SUBTREE_KERNEL_TIME,
                "ms",
                col::TOTAL_SUBTREE_KERNEL_TIME_MS,
            ),
        ] {
            assert_eq!(format!("{base}_{stat}"), full);
        }
        assert_eq!(format!("SDPA{}", sheet::FWD_SUFFIX), sheet::SDPA_FWD);
        assert_eq!(format!("CONV{}", sheet::BWD_SUFFIX), sheet::CONV_BWD);
    }

    #[test]
    fn sheet_names_are_distinct() {
        let all = [
            sheet::GPU_TIMELINE,
            sheet::OPS_SUMMARY_BY_CATEGORY,
            sheet::OPS_SUMMARY,
            sheet::OPS_UNIQUE_ARGS,
            sheet::UNIFIED_PERF_SUMMARY,
            sheet::KERNEL_SUMMARY,
            sheet::SHORT_KERNEL_HISTOGRAM,
            sheet::SHORT_KERNELS_SUMMARY,
            sheet::COLL_ANALYSIS,
            sheet::OPS_ALL,
            sheet::IDLE_BREAKDOWN,
            sheet::IDLE_CAUSES,
            sheet::IDLE_TOP_GAPS,
            sheet::IDLE_GAPS,
            sheet::HEALTH,
            sheet::FINDINGS,
            sheet::GEMM,
            sheet::SDPA_FWD,
            sheet::SDPA_BWD,
            sheet::CONV_FWD,
            sheet::CONV_BWD,
            sheet::UNARY_ELEMENTWISE,
            sheet::BINARY_ELEMENTWISE,
            sheet::NORMALIZATION,
            sheet::ROOFLINE_POINTS,
            sheet::ROOFLINE_CHART,
            sheet::NCCL_SUMMARY_IMPLICIT_SYNC,
            sheet::NCCL_SUMMARY_LONG,
            sheet::NCCL_SUMMARY_ALL2ALLV,
            sheet::NCCL_LONG,
            sheet::NCCL_IMPLICIT_SYNC,
            sheet::NCCL_ALL2ALLV,
            sheet::STRAGGLER_SUMMARY,
            sheet::NCCL_SUMMARY_BY_TYPE,
        ];
        // Excel limits sheet names to 31 characters.
        assert!(all.iter().all(|s| s.chars().count() <= 31));
        // The JAX and rocprof sheets are the reference's, some longer
        // (the workbook writer cuts them).
        let other = [
            sheet::GPU_EVENTS_AVERAGES,
            sheet::KERNEL_LAUNCHERS,
            sheet::KERNEL_LAUNCHERS_SUMMARY,
            sheet::KERNEL_LAUNCHERS_SUMMARY_BY_CATEGORY,
            sheet::KERNEL_LAUNCHERS_UNIQUE_ARGS,
            sheet::DF_XLA_PERF,
            sheet::XLA_SUMMARY,
            sheet::KERNEL_SUMMARY_BY_CATEGORY,
            sheet::KERNEL_DETAILS,
        ];
        let set: std::collections::HashSet<&str> = all.into_iter().chain(other).collect();
        assert_eq!(set.len(), all.len() + other.len());
    }
}
