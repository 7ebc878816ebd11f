//! `api_kernel_summary`: each HIP launch API call joined to the kernel it
//! launched by correlation id, its latency split as T = A + Q + K (API
//! duration, queue delay from the API's end to the kernel's start, kernel
//! duration), grouped per process, thread, device, API and kernel.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::PerfettoOptions;
use super::events::Events;
use super::stats::Stats;
use crate::names::perfetto::{API_KERNEL_COLUMNS, sheet};
use crate::table::{Table, Value};
use crate::trace::perfetto::{PerfettoEvent, PyValue};

/// The HIP calls that launch GPU work by name; any name matching
/// `Launch.*Kernel` (any case) does too.
const LAUNCH_APIS: [&str; 10] = [
    "hipModuleLaunchKernel",
    "hipLaunchKernelGGL",
    "hipLaunchKernel",
    "hipExtLaunchKernelGGL",
    "hipModuleLaunchCooperativeKernel",
    "hipExtModuleLaunchKernel",
    "hipMemset",
    "hipMemcpyHtoDAsync",
    "hipMemcpyDtoHAsync",
    "hipMemsetD32Async",
];

/// One group's lists: (count, queued count, T, A, Q, K).
#[derive(Default)]
struct Group {
    count: i64,
    queued: i64,
    t: Vec<i64>,
    a: Vec<i64>,
    q: Vec<i64>,
    k: Vec<i64>,
}

/// The sheet.
pub(crate) fn api_kernel_summary(ev: &Events, opts: &PerfettoOptions) -> Table {
    let launch_name = regex::RegexBuilder::new("(?:Launch).*Kernel")
        .case_insensitive(true)
        .build()
        .expect("a valid pattern");
    let agents = ev.agents();
    // Python dict order: an API's place is its correlation id's first sight.
    let mut apis: Vec<(i64, &PerfettoEvent)> = Vec::new();
    let mut api_at: FxHashMap<i64, usize> = FxHashMap::default();
    let mut kernels: FxHashMap<i64, Vec<&PerfettoEvent>> = FxHashMap::default();
    // What a name and category say of an event, worked out once each.
    let mut kinds: FxHashMap<(u32, u32), Kind> = FxHashMap::default();
    for e in &ev.d.events {
        let Some(corr) = ev.first_int(e, &ev.k.corr) else {
            continue;
        };
        let kind = match (e.cat, e.name) {
            (PyValue::Str(c), PyValue::Str(n)) => {
                *kinds.entry((c, n)).or_insert_with(|| Kind::of(ev, e))
            }
            _ => Kind::of(ev, e),
        };
        let gpu_work = kind.kd_symbol
            || (kind.gpu_category && !kind.register && ev.api_times(e).is_some_and(|t| t.2 > 0));
        if gpu_work {
            let name = kernel_name(ev, e);
            if opts
                .exclude_kernel
                .as_ref()
                .is_some_and(|re| re.is_match(&name))
            {
                continue;
            }
            kernels.entry(corr).or_default().push(e);
        } else if (kind.hip_api && ev.arg(e, ev.k.corr_id).is_given()) || kind.cuda_api {
            match api_at.get(&corr) {
                Some(&i) => apis[i].1 = e,
                None => {
                    api_at.insert(corr, apis.len());
                    apis.push((corr, e));
                }
            }
        }
    }

    let mut groups: BTreeMap<(i64, i64, i64, String, String), Group> = BTreeMap::new();
    for &(corr, api) in &apis {
        let api_name = ev.name(api);
        let launches = ev.cat(api) == "hip_api"
            && ev.arg(api, ev.k.corr_id).is_given()
            && (LAUNCH_APIS.contains(&api_name) || launch_name.is_match(api_name));
        if !opts.include_nonlaunch_apis && !launches {
            continue;
        }
        let Some((_, api_end, a)) = ev.api_times(api) else {
            continue;
        };
        let pid = ev.pid_or(api, 0);
        let tid = ev.tid_or(api, 0);
        let matched = kernels.get(&corr).map_or(&[][..], Vec::as_slice);
        if matched.is_empty() {
            if opts.include_nonlaunch_apis {
                let g = groups
                    .entry((pid, tid, 0, api_name.to_string(), String::new()))
                    .or_default();
                g.count += 1;
                g.a.push(a);
                g.q.push(0);
                g.k.push(0);
            }
            continue;
        }
        let mut chosen: Vec<&PerfettoEvent> = matched.to_vec();
        if !opts.allow_multi_kernel_per_api && chosen.len() > 1 {
            // The earliest by begin (stable: the first of equals).
            chosen.sort_by_key(|k| ev.api_times(k).map_or(0, |t| t.0));
            chosen.truncate(1);
        }
        for k in chosen {
            let Some((kb, _, kd)) = ev.api_times(k) else {
                continue;
            };
            // The reference's `or 0`: device 0 also for a missing id.
            let dev = device_id(ev, agents, k).unwrap_or(0);
            let q = (kb - api_end).max(0);
            let g = groups
                .entry((pid, tid, dev, api_name.to_string(), kernel_name(ev, k)))
                .or_default();
            g.count += 1;
            g.queued += 1;
            g.t.push(a + q + kd);
            g.a.push(a);
            g.q.push(q);
            g.k.push(kd);
        }
    }

    let mut t = Table::new(sheet::API_KERNEL_SUMMARY, &API_KERNEL_COLUMNS);
    for ((pid, tid, dev, api, kernel), g) in groups {
        let mut row = vec![
            Value::Int(pid),
            Value::Int(tid),
            Value::Int(dev),
            Value::Int(g.count),
            Value::Int(g.queued),
        ];
        for list in [&g.t, &g.a, &g.q, &g.k] {
            let s = Stats::python(list);
            row.extend([
                Value::Float(s.mean),
                Value::Float(s.median),
                Value::Int(s.min),
                Value::Int(s.max),
                Value::Float(s.std),
            ]);
        }
        row.push(Value::Text(api.into()));
        row.push(Value::Text(kernel.into()));
        t.push_row(row);
    }
    t
}

/// What an event's name and category say of it.
#[derive(Debug, Clone, Copy)]
struct Kind {
    /// A `.kd` symbol name: GPU work whatever its category or duration.
    kd_symbol: bool,
    /// A kernel, dispatch, activity or copy category: GPU work when it
    /// has a positive duration and no `register` in its name.
    gpu_category: bool,
    /// `register` in the (lower-case) name.
    register: bool,
    /// The category is exactly `hip_api` (a host call with a `corr_id`).
    hip_api: bool,
    /// A CUDA API category (`cuda_api`, `cupti`, any case).
    cuda_api: bool,
}

impl Kind {
    fn of(ev: &Events, e: &PerfettoEvent) -> Kind {
        let name = ev.name(e).to_lowercase();
        let cat = ev.cat(e).to_lowercase();
        Kind {
            kd_symbol: name.ends_with(".kd") || name.contains(".kd "),
            gpu_category: ["kernel_dispatch", "gpu_activity", "kernel", "memory_copy"]
                .iter()
                .any(|c| cat.contains(c)),
            register: name.contains("register"),
            hip_api: ev.cat(e) == "hip_api",
            cuda_api: matches!(cat.as_str(), "cuda_api" | "cupti"),
        }
    }
}

/// The kernel's name: the first truthy of its name arguments, else the
/// event name.
fn kernel_name(ev: &Events, e: &PerfettoEvent) -> String {
    for &key in &ev.k.kernel_name {
        let v = ev.arg(e, key);
        if ev.d.truthy(v) {
            return ev.py_str(v);
        }
    }
    ev.name(e).to_string()
}

/// The device: the first of its device-id arguments that is a number,
/// else its agent's GPU number.
fn device_id(ev: &Events, agents: &super::events::Agents, e: &PerfettoEvent) -> Option<i64> {
    ev.first_int(e, &ev.k.device)
        .or_else(|| ev.gpu_of(agents, e).map(|g| g as i64))
}
