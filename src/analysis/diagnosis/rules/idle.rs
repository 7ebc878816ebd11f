//! GPU idle the host caused, by cause, and host copies the GPU waits on.
//! Each reads the host-wait gaps of the idle analysis, counting only the
//! part of a gap where the whole GPU is idle (a stream waiting while
//! another runs costs nothing).

use rustc_hash::FxHashMap;

use super::super::health::{Evidence, GpuEvents, MAX_EVENTS};
use super::super::{Command, Confidence, Finding, Inputs};
use super::{impact, worth};
use crate::analysis::common::intervals::{covered, length, subtract, union};
use crate::analysis::pytorch::idle_causes::{Cause, IdleGap};
use crate::trace::EventId;

/// GPU idle while the host was late for reasons of its own.
pub const HOST_BOUND: &str = "idle.host_bound";
/// GPU idle while the host waited in a synchronisation.
pub const SYNC: &str = "idle.sync";
/// Copy time the GPU waits on: exposed copies and blocking host copies.
pub const MEMCPY_EXPOSED: &str = "memcpy.exposed";
/// Copies to or from pageable host memory.
pub const MEMCPY_PAGEABLE: &str = "memcpy.pageable";

/// A host op is named as a finding's subject when the gaps it was in
/// hold at least this share of the idle.
pub const SUBJECT_SHARE: f64 = 0.25;

/// The GPU-wide idle time of one host-wait gap, µs.
pub fn idle_us(gpu: &GpuEvents, w: &IdleGap) -> f64 {
    if w.end.partial_cmp(&w.start) != Some(std::cmp::Ordering::Greater) {
        return 0.0;
    }
    (w.end - w.start) - covered(&gpu.busy, (w.start, w.end))
}

/// The time (ms) the whole GPU is idle within any of `gaps`: the union
/// of the gaps less the GPU's busy time (gaps of two streams at once count
/// once).
pub fn idle_ms<'a>(gpu: &GpuEvents, gaps: impl IntoIterator<Item = &'a IdleGap>) -> f64 {
    let ivs = gaps
        .into_iter()
        .filter(|w| w.end > w.start)
        .map(|w| (w.start, w.end))
        .collect();
    length(&subtract(&union(ivs), &gpu.busy)) / 1e3
}

/// The host-wait gaps of `causes`, each with its GPU-wide idle (µs), the
/// longest first.
fn gaps_of<'a>(inputs: &'a Inputs, gpu: &GpuEvents, causes: &[Cause]) -> Vec<(f64, &'a IdleGap)> {
    let mut v: Vec<(f64, &IdleGap)> = inputs
        .idle_gaps
        .iter()
        .filter(|w| w.wait().is_some_and(|c| causes.contains(&c)))
        .map(|w| (idle_us(gpu, w), w))
        .filter(|(us, _)| *us > 0.0)
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.start.total_cmp(&b.1.start)));
    v
}

/// The events behind the longest gaps: each gap's host call (or op) and
/// the GPU event after it.
fn gap_events(gaps: &[(f64, &IdleGap)]) -> Vec<EventId> {
    let mut out = Vec::new();
    for (_, w) in gaps {
        out.extend(w.cause.and_then(|c| c.call.or(c.op)));
        out.push(w.next);
        if out.len() >= MAX_EVENTS {
            break;
        }
    }
    out.truncate(MAX_EVENTS);
    out
}

/// The name whose gaps hold the most GPU idle, by `key`, with that idle
/// (ms).
fn top_name(
    inputs: &Inputs,
    gpu: &GpuEvents,
    gaps: &[(f64, &IdleGap)],
    key: impl Fn(&IdleGap) -> Option<EventId>,
) -> Option<(String, f64)> {
    let mut by: FxHashMap<&str, Vec<&IdleGap>> = FxHashMap::default();
    for (_, w) in gaps {
        if let Some(e) = key(w) {
            by.entry(inputs.trace.name(e)).or_default().push(w);
        }
    }
    let mut v: Vec<(&str, f64)> = by
        .into_iter()
        .map(|(n, ws)| (n, idle_ms(gpu, ws)))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    v.first().map(|(n, ms)| (n.to_string(), *ms))
}

/// The command listing every gap with what the host was doing.
fn gaps_command() -> Command {
    Command::on_trace("report", &["--idle-details", "--csv", "idle_report"])
}

/// The command printing the call tree under every op named `name`.
pub fn tree_command(name: &str) -> Command {
    let pattern = format!("^{}$", regex::escape(name));
    Command::on_trace("tree", &["--grep", &pattern, "--all"])
}

/// Whether the trace links GPU work to host launches at all: without,
/// what the GPU waited for cannot be told.
pub fn has_host_side(inputs: &Inputs) -> Result<(), String> {
    let q = inputs.quality;
    if q.gpu_events == 0 || q.gpu_events > q.unlinked_gpu_events {
        Ok(())
    } else {
        Err("no GPU work is linked to a host launch: what the GPU waited for cannot be told".into())
    }
}

/// `idle.host_bound`: GPU idle in host-wait gaps where the host was in CPU
/// ops, in a long launch, another runtime call, or the trace does not say.
pub fn host_bound(inputs: &Inputs, gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    has_host_side(inputs)?;
    let causes = [
        Cause::HostBusy,
        Cause::LongLaunch,
        Cause::OtherRuntime,
        Cause::Unknown,
    ];
    let mut gaps = gaps_of(inputs, gpu, &causes);
    // Those are `kernels.launch_bound`'s.
    gaps.retain(|g| !super::launch::is_launch_bound(inputs, g.1));
    let ms = idle_ms(gpu, gaps.iter().map(|g| g.1));
    if !worth(inputs, ms) {
        return Ok(Vec::new());
    }
    let of = |c: Cause| {
        idle_ms(
            gpu,
            gaps.iter().filter(|g| g.1.wait() == Some(c)).map(|g| g.1),
        )
    };
    let busy_ms = of(Cause::HostBusy);
    // The cause is shown when CPU ops cover most of the idle.
    let confidence = if busy_ms >= 0.5 * ms {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    // A name is shown only where it holds a good part of the idle.
    let top = top_name(inputs, gpu, &gaps, |w| w.cause?.op).filter(|t| t.1 >= SUBJECT_SHARE * ms);
    let imp = impact(inputs, ms, 0.25, 0.5, 1.0);
    let mut summary = format!(
        "the GPU sat idle {ms:.3} ms ({:.1}% of the GPU span) waiting for the host to launch work, in {} gap(s); CPU ops covered {busy_ms:.3} ms of it",
        imp.share_pct(ms),
        gaps.len()
    );
    if let Some((name, us)) = &top {
        summary.push_str(&format!(
            "; the host op holding the most of it: {name} ({us:.3} ms)"
        ));
    }
    let mut f = Finding::new(
        HOST_BOUND,
        confidence,
        summary,
        imp,
        vec![
            Evidence::new("gpu_idle_waiting_for_host", ms, "ms"),
            Evidence::new("gaps", gaps.len() as f64, "count"),
            Evidence::new("host_busy_in_cpu_ops", busy_ms, "ms"),
            Evidence::new("long_launch_calls", of(Cause::LongLaunch), "ms"),
            Evidence::new("other_runtime_calls", of(Cause::OtherRuntime), "ms"),
            Evidence::new("cause_not_in_trace", of(Cause::Unknown), "ms"),
            Evidence::new("longest_gap", gaps[0].0 / 1e3, "ms"),
        ],
    );
    f.subject = top.map(|(n, _)| n);
    f.events = gap_events(&gaps);
    f.actions = vec![
        "move host work off the launch path (data loading, logging, .item()/.cpu() calls) or overlap it with the previous step",
        "capture the steady-state step in a CUDA/HIP graph or torch.compile(mode=\"reduce-overhead\") so that launches do not wait on Python",
    ];
    f.commands = vec![gaps_command(), Command::on_trace("critical-path", &[])];
    f.commands.extend(f.subject.as_deref().map(tree_command));
    Ok(vec![f])
}

/// `idle.sync`: GPU idle while the host waited in a device, stream or
/// event synchronisation.
pub fn sync(inputs: &Inputs, gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    has_host_side(inputs)?;
    let gaps = gaps_of(inputs, gpu, &[Cause::Sync]);
    let ms = idle_ms(gpu, gaps.iter().map(|g| g.1));
    if !worth(inputs, ms) {
        return Ok(Vec::new());
    }
    let top = top_name(inputs, gpu, &gaps, |w| w.cause?.call);
    let caller = top_name(inputs, gpu, &gaps, |w| w.cause?.op);
    let imp = impact(inputs, ms, 0.5, 0.75, 1.0);
    let mut summary = format!(
        "the GPU sat idle {ms:.3} ms ({:.1}% of the GPU span) while the host waited in synchronisation calls ({} gap(s))",
        imp.share_pct(ms),
        gaps.len()
    );
    if let Some((name, _)) = &top {
        summary.push_str(&format!("; the most idle after {name}"));
    }
    if let Some((op, _)) = &caller {
        summary.push_str(&format!(", called in {op}"));
    }
    let mut f = Finding::new(
        SYNC,
        Confidence::High,
        summary,
        imp,
        vec![
            Evidence::new("gpu_idle_after_sync", ms, "ms"),
            Evidence::new("syncs", gaps.len() as f64, "count"),
            Evidence::new("longest_gap", gaps[0].0 / 1e3, "ms"),
        ],
    );
    f.subject = top.map(|(n, _)| n);
    f.events = gap_events(&gaps);
    f.actions = vec![
        "remove synchronisations the step does not need (.item(), .cpu(), print of a tensor, torch.cuda.synchronize() in the loop)",
        "queue the next step's work before the sync, or replace it by an event the consumer waits on (non_blocking copies with pinned memory)",
    ];
    f.commands = vec![gaps_command(), Command::on_trace("critical-path", &[])];
    Ok(vec![f])
}

/// Copy events' time (ms) and count whose name says pageable memory.
fn pageable(inputs: &Inputs) -> (f64, usize, Vec<EventId>) {
    let (mut us, mut n, mut events) = (0.0, 0, Vec::new());
    for (id, e) in inputs.trace.events() {
        if e.cat.is_gpu() && inputs.trace.name_of(e).contains("Pageable") {
            us += e.dur;
            n += 1;
            if events.len() < MAX_EVENTS {
                events.push(id);
            }
        }
    }
    (us / 1e3, n, events)
}

/// `memcpy.exposed`: copy time not hidden under compute or communication,
/// and GPU idle while the host was in a blocking copy.
pub fn memcpy_exposed(inputs: &Inputs, gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    let Some(t) = inputs.timeline else {
        return Ok(Vec::new());
    };
    let exposed_ms = t.exposed_memcpy / 1e3;
    let gaps = gaps_of(inputs, gpu, &[Cause::BlockingCopy]);
    let blocking_ms = idle_ms(gpu, gaps.iter().map(|g| g.1));
    let ms = exposed_ms + blocking_ms;
    if !worth(inputs, ms) {
        return Ok(Vec::new());
    }
    let imp = impact(inputs, ms, 0.25, 0.5, 1.0);
    let mut summary = format!(
        "the GPU waited {ms:.3} ms ({:.1}% of the GPU span) on copies: {exposed_ms:.3} ms of copies ran with no compute beside them",
        imp.share_pct(ms)
    );
    if !gaps.is_empty() {
        summary.push_str(&format!(
            ", and it sat idle {blocking_ms:.3} ms while the host was in {} blocking copies",
            gaps.len()
        ));
    }
    let mut f = Finding::new(
        MEMCPY_EXPOSED,
        if blocking_ms > 0.0 {
            Confidence::High
        } else {
            Confidence::Medium
        },
        summary,
        imp,
        vec![
            Evidence::new("exposed_memcpy", exposed_ms, "ms"),
            Evidence::new("total_memcpy", t.total_memcpy / 1e3, "ms"),
            Evidence::new("gpu_idle_in_blocking_copies", blocking_ms, "ms"),
            Evidence::new("blocking_copies", gaps.len() as f64, "count"),
        ],
    );
    f.events = gap_events(&gaps);
    f.actions = vec![
        "copy from pinned memory with non_blocking=True and overlap the copy with compute (a side stream, prefetching the next batch)",
        "keep tensors on the GPU between steps instead of moving them back and forth",
    ];
    f.commands = vec![gaps_command()];
    Ok(vec![f])
}

/// `memcpy.pageable`: copies to or from pageable host memory, which run
/// at a fraction of the link's speed and block the host.
pub fn memcpy_pageable(inputs: &Inputs, _gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    let (ms, n, events) = pageable(inputs);
    if n == 0 || !worth(inputs, ms) {
        return Ok(Vec::new());
    }
    // Pinned memory typically doubles a host copy's speed.
    let imp = impact(inputs, ms, 0.3, 0.5, 0.7);
    let summary = format!(
        "{n} copies to or from pageable host memory took {ms:.3} ms of GPU time ({:.1}% of the GPU span)",
        imp.share_pct(ms)
    );
    let mut f = Finding::new(
        MEMCPY_PAGEABLE,
        Confidence::High,
        summary,
        imp,
        vec![
            Evidence::new("pageable_copies", n as f64, "count"),
            Evidence::new("pageable_copy_time", ms, "ms"),
        ],
    );
    f.subject = events.first().map(|&e| inputs.trace.name(e).to_string());
    f.events = events;
    f.actions = vec![
        "allocate the host tensors in pinned memory (pin_memory=True in the DataLoader, tensor.pin_memory()) and copy with non_blocking=True",
    ];
    f.commands = vec![gaps_command()];
    Ok(vec![f])
}
