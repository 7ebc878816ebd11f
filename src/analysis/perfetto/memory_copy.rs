//! `memory_copy_by_copy_bytes`: memory copies counted per size and
//! direction (host to device, device to host, device to device, with the
//! agents involved).

use std::collections::BTreeMap;

use super::events::Events;
use crate::names::perfetto::{MEMORY_COPY_COLUMNS, sheet};
use crate::table::{Table, Value};
use crate::trace::perfetto::PerfettoEvent;

/// One copy's direction as the reference words it. Agents are read as
/// integers; rocprofv3 from ROCm 6.4 writes `Agent-N` strings, which read
/// as none (`GPU ?`).
pub(crate) fn direction(ev: &Events, e: &PerfettoEvent) -> String {
    let name = ev.name(e).trim().to_uppercase();
    let agent = |key| match ev.int_arg(e, key) {
        Some(n) => n.to_string(),
        None => "?".to_string(),
    };
    if name.contains("MEMORY_COPY_HOST_TO_DEVICE") {
        format!("h2d (GPU {})", agent(ev.k.dst_agent))
    } else if name.contains("MEMORY_COPY_DEVICE_TO_HOST") {
        format!("d2h (GPU {})", agent(ev.k.src_agent))
    } else if name.contains("MEMORY_COPY_DEVICE_TO_DEVICE") {
        format!(
            "d2d (GPU {} -> GPU {})",
            agent(ev.k.src_agent),
            agent(ev.k.dst_agent)
        )
    } else {
        "other".to_string()
    }
}

/// The copies: `memory_copy` events with an integer `copy_bytes`, as
/// (bytes, event).
pub(crate) fn copies<'a>(ev: &'a Events) -> impl Iterator<Item = (i64, &'a PerfettoEvent)> + 'a {
    ev.d.events.iter().filter_map(move |e| {
        if ev.cat(e).trim().to_lowercase() != "memory_copy" {
            return None;
        }
        Some((ev.int_arg(e, ev.k.copy_bytes)?, e))
    })
}

/// The sheet, sorted by size then direction.
pub(crate) fn memory_copy_by_copy_bytes(ev: &Events) -> Table {
    let mut counts: BTreeMap<(i64, String), i64> = BTreeMap::new();
    for (bytes, e) in copies(ev) {
        *counts.entry((bytes, direction(ev, e))).or_default() += 1;
    }
    let mut t = Table::new(sheet::MEMORY_COPY_BY_COPY_BYTES, &MEMORY_COPY_COLUMNS);
    for ((bytes, direction), count) in counts {
        t.push_row(vec![
            Value::Int(bytes),
            Value::Text(direction.into()),
            Value::Int(count),
        ]);
    }
    t
}

/// A copy's direction with its agents named as the trace names them
/// (`Agent-2`, or a number), for the page: what [`direction`] cannot say
/// of `Agent-N` strings.
pub(crate) fn named_direction(ev: &Events, e: &PerfettoEvent) -> String {
    let name = ev.name(e).trim().to_uppercase();
    let agent = |key| {
        let v = ev.arg(e, key);
        if v.is_given() {
            ev.py_str(v)
        } else {
            "an unnamed agent".to_string()
        }
    };
    if name.contains("MEMORY_COPY_HOST_TO_DEVICE") {
        format!("host to device ({})", agent(ev.k.dst_agent))
    } else if name.contains("MEMORY_COPY_DEVICE_TO_HOST") {
        format!("device to host ({})", agent(ev.k.src_agent))
    } else if name.contains("MEMORY_COPY_DEVICE_TO_DEVICE") {
        format!(
            "device to device ({} to {})",
            agent(ev.k.src_agent),
            agent(ev.k.dst_agent)
        )
    } else {
        "other".to_string()
    }
}
