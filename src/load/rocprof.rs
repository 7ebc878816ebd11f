//! rocprofv3 JSON (`rocprofiler-sdk-tool`).

use std::io::Read;

use super::Packing;
use crate::error::LoadError;
use crate::trace::{Needs, Trace};

/// Decodes a rocprofv3 JSON document from `reader` (already unpacked).
pub fn decode<R: Read>(reader: R, packing: Packing, needs: &Needs) -> Result<Trace, LoadError> {
    let _ = (reader, packing, needs);
    Err(LoadError::NotATrace(
        "rocprofv3 input is not supported yet".into(),
    ))
}
