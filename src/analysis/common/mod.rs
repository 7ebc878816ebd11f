//! What the report families' sheets share: interval arithmetic on GPU
//! activity, the GPU timeline, op categories and the reference's op
//! registry, user kernel-name categories, per-position kernel statistics,
//! argument cells and trace-quality facts.

pub mod arg_cells;
pub mod intervals;
pub mod kernel_categories;
pub mod kernel_stats;
pub mod op_categories;
pub mod op_registry;
pub mod op_summaries;
pub mod perf_cells;
pub mod quality;
pub mod timeline;
