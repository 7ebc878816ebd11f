//! PLACEHOLDER: being implemented.
use super::{Evaluation, ModelError, ModelResult, OpInput};
/// Evaluates a model of this family.
pub fn evaluate(class: &str, _input: &OpInput, _bwd: bool) -> ModelResult<Evaluation> {
    Err(ModelError::Invalid(format!("{class} not implemented yet")))
}
