//! Trace events kept as their JSON text: a document's events as slices of
//! the input and objects read with their keys in order, so that a command
//! that copies or rewrites events (merge, split) keeps every field and its
//! bytes without loading the trace model.

pub(crate) mod object;

use serde_json::value::RawValue;

use crate::error::LoadError;
pub(crate) use object::{Kind, Object};

/// A trace document: its events as JSON text, its clock base and its
/// top-level object.
pub(crate) struct Document<'a> {
    /// The top-level object, keys in order (empty for a bare array).
    pub(crate) top: Object<'a>,
    /// The events, each as its JSON text.
    pub(crate) events: Vec<&'a RawValue>,
    /// The trace's `baseTimeNanoseconds`, when an integer.
    pub(crate) base_time_ns: Option<i128>,
}

impl<'a> Document<'a> {
    /// Reads `bytes` as `{"traceEvents": [...], ...}` or, as Chrome's trace
    /// format allows, a bare array of events.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Document<'a>, LoadError> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            LoadError::Syntax(format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ))
        })?;
        let syntax = |e: serde_json::Error| LoadError::Syntax(format!("invalid JSON: {e}"));
        if text.trim_start().starts_with('[') {
            let events = serde_json::from_str(text).map_err(syntax)?;
            return Ok(Document {
                top: Object::default(),
                events,
                base_time_ns: None,
            });
        }
        let top = Object::parse(text).map_err(syntax)?;
        let Some(events) = top.borrowed("traceEvents") else {
            return Err(LoadError::NotATrace(
                "not a PyTorch trace: no \"traceEvents\"".to_string(),
            ));
        };
        let events = serde_json::from_str(events)
            .map_err(|_| LoadError::Invalid("\"traceEvents\" is not an array".to_string()))?;
        let base_time_ns = match top.get("baseTimeNanoseconds").map(object::kind) {
            Some(Kind::Int(n)) => Some(n),
            _ => None,
        };
        Ok(Document {
            top,
            events,
            base_time_ns,
        })
    }
}
