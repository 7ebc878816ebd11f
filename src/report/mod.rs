//! Output writers: every analysis pass produces [`crate::table::Table`]s;
//! the writers here (`csv`, `xlsx`, `svg`) turn them into files and `read`
//! turns report files back into the same tables. Writers know nothing about
//! traces, passes know nothing about formats.

pub mod csv;
pub mod read;
pub mod staging;
pub mod svg;
pub mod xlsx;
