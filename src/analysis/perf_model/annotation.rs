//! Chunk statistics of an inference step, read from the name of the
//! `user_annotation` range the serving engine records around it; parsed in
//! [`crate::trace::annotation`], which the capture merge shares.

pub use crate::trace::annotation::{ChunkStats, chunk_stats};
