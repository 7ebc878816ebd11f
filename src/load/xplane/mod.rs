//! JAX / XLA profiles: the XSpace protobuf (`*.xplane.pb`).

use std::io::Read;

use super::Packing;
use crate::error::LoadError;
use crate::trace::{Needs, Trace};

/// Decodes an XSpace protobuf from `reader` (already unpacked).
pub fn decode<R: Read>(reader: R, packing: Packing, needs: &Needs) -> Result<Trace, LoadError> {
    let _ = (reader, packing, needs);
    Err(LoadError::NotATrace(
        "XPlane input is not supported yet".into(),
    ))
}
