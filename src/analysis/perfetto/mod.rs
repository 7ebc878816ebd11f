//! The Perfetto report: the sheets of the reference's three pftrace
//! reports (`hip_api`, `hip_activity`, `memory_copy`) in one, over the
//! slices of a rocprofv3 Perfetto trace ([`PerfettoData`]) read as the
//! reference reads traceconv's JSON of it.
//!
//! Times are the slices' `begin_ns`/`delta_ns` arguments where present
//! (exact ns), else their `ts`/`dur` (µs). GPUs are numbered by first
//! appearance of their `agent` argument.

pub(crate) mod activity;
pub(crate) mod events;
mod hip_api;
pub(crate) mod memory_copy;
mod stats;

use std::sync::OnceLock;

use activity::Activity;
use events::Events;

use crate::analysis::common::quality::TraceQuality;
use crate::analysis::common::timeline::{self, Bucket, BucketIntervals, Timeline};
use crate::analysis::diagnosis::Diagnosis;
use crate::analysis::diagnosis::device::{self, DeviceTrace};
use crate::analysis::diagnosis::health::GpuEvents;
use crate::analysis::{Pass, Report, ReportOptions, run_passes};
use crate::names::perfetto::{COPY_DIRECTION_COLUMNS, GPU_AGENT_COLUMNS, GPU_ID, sheet};
use crate::table::{Table, Value};
use crate::trace::Cat;
use crate::trace::Trace;
use crate::trace::perfetto::PerfettoData;

/// The reference's default `--exclude_kernel_regex`: the address
/// sanitizer's redzone checker.
pub const DEFAULT_EXCLUDE_KERNEL_REGEX: &str = r"(?:^|\W)redzone_checker_kernel(?:\W|$)";

/// What `kernel_summary`'s `Time %` is a share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KernelBaseline {
    /// All GPU kernel time, communication included.
    #[default]
    Total,
    /// Kernel time without communication.
    Compute,
}

/// How `kernel_summary` groups kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KernelGroup {
    /// By name and launch configuration (grid, block, registers, LDS, scratch).
    #[default]
    Config,
    /// By name alone.
    Name,
}

/// How `hip_summary` groups HIP calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HipGroup {
    /// By name.
    #[default]
    Name,
    /// By name and stream.
    NameStream,
    /// By name and operation.
    NameOp,
    /// By name, stream and operation.
    NameStreamOp,
}

/// The options of the Perfetto report (the reference's pftrace flags).
#[derive(Debug, Clone)]
pub struct PerfettoOptions {
    /// Kernels whose name this matches (a search) are left out of
    /// `api_kernel_summary`; None keeps all.
    pub exclude_kernel: Option<regex::Regex>,
    /// Every kernel of a launch in `api_kernel_summary`, not only the first.
    pub allow_multi_kernel_per_api: bool,
    /// HIP calls that launch nothing get rows too.
    pub include_nonlaunch_apis: bool,
    /// Kernel names with their digits removed in `xla_top` and `kernel_summary`.
    pub merge_kernels: bool,
    /// Events of threads below this are left out of the activity sheets.
    pub min_tid: i64,
    /// Events of threads above this are left out of the activity sheets.
    pub max_tid: i64,
    /// Events shorter than this (ns) are left out of the activity totals.
    pub min_event_ns: i64,
    /// Write `kernel_summary`.
    pub kernel_summary: bool,
    /// Communication kernels in `kernel_summary` too.
    pub kernel_summary_include_rccl: bool,
    /// `kernel_summary`'s baseline.
    pub kernel_summary_baseline: KernelBaseline,
    /// `kernel_summary`'s grouping.
    pub kernel_summary_group: KernelGroup,
    /// Write `hip_summary`.
    pub hip_summary: bool,
    /// `hip_summary`'s grouping.
    pub hip_summary_group: HipGroup,
    /// Rows of `xla_top`.
    pub top_xla: usize,
    /// Rows of the kernel summary on the Markdown page.
    pub kernel_summary_top: usize,
    /// Rows of the HIP summary on the Markdown page.
    pub hip_summary_top: usize,
}

impl Default for PerfettoOptions {
    fn default() -> Self {
        PerfettoOptions {
            exclude_kernel: Some(
                regex::Regex::new(DEFAULT_EXCLUDE_KERNEL_REGEX).expect("a valid pattern"),
            ),
            allow_multi_kernel_per_api: false,
            include_nonlaunch_apis: false,
            merge_kernels: false,
            min_tid: -1_000_000_000,
            max_tid: 1_000_000_000,
            min_event_ns: 5000,
            kernel_summary: true,
            kernel_summary_include_rccl: false,
            kernel_summary_baseline: KernelBaseline::Total,
            kernel_summary_group: KernelGroup::Config,
            hip_summary: true,
            hip_summary_group: HipGroup::Name,
            top_xla: 30,
            kernel_summary_top: 200,
            hip_summary_top: 200,
        }
    }
}

/// What the passes read.
struct Context<'a> {
    ev: Events<'a>,
    opts: &'a PerfettoOptions,
    activity: OnceLock<Activity>,
    /// `gpu_timeline` and `gpu_events_averages`.
    timeline_sheets: Vec<Table>,
}

impl Context<'_> {
    fn activity(&self) -> &Activity {
        self.activity
            .get_or_init(|| Activity::of(&self.ev, self.opts))
    }
}

/// The passes: the GPU timeline of each GPU and their mean (ours, as the
/// JAX report has them), the reference's sheets in its order (hip_api's,
/// hip_activity's, memory_copy's), then two more of ours: the GPUs' agents
/// and the copies with their agents named.
fn report_passes<'a>() -> [Pass<Context<'a>>; 9] {
    [
        Pass {
            name: crate::names::sheet::GPU_TIMELINE,
            run: |cx| cx.timeline_sheets.clone().into(),
        },
        Pass {
            name: sheet::API_KERNEL_SUMMARY,
            run: |cx| hip_api::api_kernel_summary(&cx.ev, cx.opts).into(),
        },
        Pass {
            name: sheet::CATEGORY_SUMMARY,
            run: |cx| cx.activity().category_summary().into(),
        },
        Pass {
            name: sheet::XLA_TOP,
            run: |cx| cx.activity().xla_top_sheet(cx.opts.top_xla).into(),
        },
        Pass {
            name: sheet::KERNEL_SUMMARY,
            run: |cx| {
                (cx.opts.kernel_summary)
                    .then(|| cx.activity().kernel_summary(cx.opts))
                    .into()
            },
        },
        Pass {
            name: sheet::HIP_SUMMARY,
            run: |cx| {
                (cx.opts.hip_summary)
                    .then(|| cx.activity().hip_summary(cx.opts))
                    .into()
            },
        },
        Pass {
            name: sheet::MEMORY_COPY_BY_COPY_BYTES,
            run: |cx| memory_copy::memory_copy_by_copy_bytes(&cx.ev).into(),
        },
        Pass {
            name: sheet::GPU_AGENTS,
            run: |cx| gpu_agents(cx.activity()).into(),
        },
        Pass {
            name: sheet::MEMORY_COPY_BY_DIRECTION,
            run: |cx| memory_copy_by_direction(&cx.ev).into(),
        },
    ]
}

/// Every sheet of the Perfetto report.
pub fn run_report(trace: &Trace, opts: &ReportOptions) -> Report {
    let empty = PerfettoData::default();
    let data = trace.perfetto().unwrap_or(&empty);
    let ev = Events::new(data);
    let (timeline_sheets, timeline) = timelines(&ev, opts.micro_idle_thresh_us);
    let cx = Context {
        ev,
        opts: &opts.perfetto,
        activity: OnceLock::new(),
        timeline_sheets,
    };
    let out = run_passes(&cx, &report_passes());
    let (diagnosis, gpu_events) = diagnose(trace, &cx.ev, timeline.as_ref());
    let mut warnings = trace.warnings().to_vec();
    warnings.extend(out.warnings);
    Report {
        sheets: out.sheets,
        timeline,
        diagnosis,
        quality: TraceQuality {
            gpu_events,
            warnings,
            ..Default::default()
        },
    }
}

/// `gpu_agents`: per GPU its agent and kernel time (ms): compute,
/// communication, communication not overlapped by compute (the
/// activity report's rules), and whether a FlashAttention v3 backward
/// kernel ran anywhere.
fn gpu_agents(activity: &Activity) -> Table {
    let mut t = Table::new(sheet::GPU_AGENTS, &GPU_AGENT_COLUMNS);
    for (g, (agent, compute, comm, exposed)) in activity.per_gpu().into_iter().enumerate() {
        let ms = |ns: i64| Value::Float(ns as f64 / 1e6);
        t.push_row(vec![
            Value::Int(g as i64),
            Value::Text(agent.into()),
            ms(compute),
            ms(comm),
            ms(exposed),
            Value::Bool(activity.used_fav3),
        ]);
    }
    t
}

/// `memory_copy_by_direction`: the copies per direction with their agents
/// as the trace names them (count, bytes), in order of first appearance.
fn memory_copy_by_direction(ev: &Events) -> Table {
    let mut rows: Vec<(String, i64, i64)> = Vec::new();
    for (bytes, e) in memory_copy::copies(ev) {
        let label = memory_copy::named_direction(ev, e);
        match rows.iter_mut().find(|r| r.0 == label) {
            Some(r) => {
                r.1 += 1;
                r.2 += bytes;
            }
            None => rows.push((label, 1, bytes)),
        }
    }
    let mut t = Table::new(sheet::MEMORY_COPY_BY_DIRECTION, &COPY_DIRECTION_COLUMNS);
    for (label, count, bytes) in rows {
        t.push_row(vec![
            Value::Text(label.into()),
            Value::Int(count),
            Value::Int(bytes),
        ]);
    }
    t
}

/// The GPU of a copy: its device side (the destination of a host-to-device
/// copy, else the source), by agent.
fn copy_gpu(
    ev: &Events,
    agents: &events::Agents,
    e: &crate::trace::perfetto::PerfettoEvent,
) -> Option<usize> {
    let to_device = ev.name(e).to_uppercase().contains("HOST_TO_DEVICE");
    let key = if to_device {
        ev.k.dst_agent
    } else {
        ev.k.src_agent
    };
    agents.gpu_of_value(ev.d, ev.arg(e, key))
}

/// Each GPU's timeline (kernels split into computation and communication,
/// copies booked to their device side) as `gpu_timeline` rows with the
/// GPU's number, their mean as `gpu_events_averages`, and the mean.
fn timelines(ev: &Events, micro_idle_thresh_us: Option<f64>) -> (Vec<Table>, Option<Timeline>) {
    let agents = ev.agents();
    let mut buckets: Vec<BucketIntervals> = (0..agents.names.len())
        .map(|_| BucketIntervals::default())
        .collect();
    for e in &ev.d.events {
        let (gpu, bucket) = match ev.gpu_of(agents, e) {
            Some(g) => (g, timeline::classify(Cat::Kernel, ev.name(e))),
            None if ev.cat(e) == "memory_copy" => match copy_gpu(ev, agents, e) {
                Some(g) => (g, Bucket::Memcpy),
                None => continue,
            },
            None => continue,
        };
        let Some((begin, end, dur)) = ev.api_times(e) else {
            continue;
        };
        if dur > 0 {
            buckets[gpu].push((begin as f64 / 1e3, end as f64 / 1e3), bucket);
        }
    }
    let gpus: Vec<(i64, Timeline)> = buckets
        .into_iter()
        .enumerate()
        .filter_map(|(g, b)| Some((g as i64, b.timeline(micro_idle_thresh_us)?)))
        .collect();
    timeline::per_gpu_sheets(&gpus, GPU_ID)
}

/// The health checks of the GPU work (kernels on their agent and queue,
/// copies on none) and why the findings cannot be told; the number of GPU
/// events.
fn diagnose(trace: &Trace, ev: &Events, timeline: Option<&Timeline>) -> (Diagnosis, usize) {
    let agents = ev.agents();
    let queue = ev.d.lookup("queue");
    let mut work = Vec::new();
    for e in &ev.d.events {
        let stream = if let Some(gpu) = ev.gpu_of(agents, e) {
            Some((gpu as i64, ev.int_arg(e, queue).unwrap_or(-1)))
        } else if ev.cat(e) == "memory_copy" {
            None
        } else {
            continue;
        };
        let Some((begin, end, dur)) = ev.api_times(e) else {
            continue;
        };
        if dur <= 0 {
            continue;
        }
        work.push((stream, begin as f64 / 1e3, end as f64 / 1e3, None));
    }
    let n = work.len();
    let diagnosis = device::diagnose(&DeviceTrace {
        format: "rocprofv3 Perfetto",
        trace,
        gpu: GpuEvents::of_keyed(work),
        launch: None,
        shapes: None,
        timeline,
    });
    (diagnosis, n)
}
