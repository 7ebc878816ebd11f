//! Reading Perfetto-style events as the reference's pftrace reports read
//! their JSON dicts: the argument keys they look up, their two ways of
//! finding an event's times, and the GPU numbering by agent.

use rustc_hash::FxHashMap;

use crate::trace::perfetto::{PerfettoData, PerfettoEvent, PyKey, PyValue, TextId};

/// The ids of the argument keys the reports read (None: no event has it).
pub(crate) struct Keys {
    pub begin_ns: Option<TextId>,
    pub end_ns: Option<TextId>,
    pub delta_ns: Option<TextId>,
    pub agent: Option<TextId>,
    pub tid: Option<TextId>,
    /// Correlation id, by its spellings in the order they are tried.
    pub corr: [Option<TextId>; 4],
    /// `corr_id` alone (what marks a HIP API event).
    pub corr_id: Option<TextId>,
    /// Kernel name, by its spellings in the order they are tried.
    pub kernel_name: [Option<TextId>; 5],
    /// Device id, by its spellings in the order they are tried.
    pub device: [Option<TextId>; 6],
    pub grid_size: Option<TextId>,
    pub workgroup_size: Option<TextId>,
    pub vgpr: Option<TextId>,
    pub accum_vgpr: Option<TextId>,
    pub sgpr: Option<TextId>,
    pub lds: Option<TextId>,
    pub scratch: Option<TextId>,
    pub stream: Option<TextId>,
    pub operation: Option<TextId>,
    pub copy_bytes: Option<TextId>,
    pub src_agent: Option<TextId>,
    pub dst_agent: Option<TextId>,
}

impl Keys {
    /// The key ids of `d`.
    pub fn of(d: &PerfettoData) -> Keys {
        let k = |s: &str| d.lookup(s);
        Keys {
            begin_ns: k("begin_ns"),
            end_ns: k("end_ns"),
            delta_ns: k("delta_ns"),
            agent: k("agent"),
            tid: k("tid"),
            corr: [
                k("corr_id"),
                k("correlation_id"),
                k("correlationId"),
                k("CorrId"),
            ],
            corr_id: k("corr_id"),
            kernel_name: [
                k("kernel_name"),
                k("KernelName"),
                k("symbol"),
                k("symbol_name"),
                k("funcName"),
            ],
            device: [
                k("device_id"),
                k("deviceId"),
                k("dev_id"),
                k("DevId"),
                k("gpu_id"),
                k("gpuId"),
            ],
            grid_size: k("grid_size"),
            workgroup_size: k("workgroup_size"),
            vgpr: k("VGPR_Count"),
            accum_vgpr: k("Accum_VGPR_Count"),
            sgpr: k("SGPR_Count"),
            lds: k("LDS_Block_Size"),
            scratch: k("Scratch_Size"),
            stream: k("stream_ID"),
            operation: k("operation"),
            copy_bytes: k("copy_bytes"),
            src_agent: k("src_agent"),
            dst_agent: k("dst_agent"),
        }
    }
}

/// The data and its keys: what every Perfetto sheet reads.
pub(crate) struct Events<'a> {
    pub d: &'a PerfettoData,
    pub k: Keys,
    /// The GPUs, found once.
    agents: std::sync::OnceLock<Agents>,
}

/// A value that is present and not `None` (Python's `x is not None`).
fn given(v: PyValue) -> Option<PyValue> {
    v.is_given().then_some(v)
}

impl<'a> Events<'a> {
    /// The events of `d` with their keys looked up.
    pub fn new(d: &'a PerfettoData) -> Events<'a> {
        Events {
            d,
            k: Keys::of(d),
            agents: std::sync::OnceLock::new(),
        }
    }

    /// `args.get(key)`.
    pub fn arg(&self, e: &PerfettoEvent, key: Option<TextId>) -> PyValue {
        self.d.arg(e, key)
    }

    /// `int(args[key])` where it parses; None where absent or not a number.
    pub fn int_arg(&self, e: &PerfettoEvent, key: Option<TextId>) -> Option<i64> {
        self.d.py_int(self.arg(e, key))
    }

    /// The first of `keys` present whose value parses as an integer.
    pub fn first_int(&self, e: &PerfettoEvent, keys: &[Option<TextId>]) -> Option<i64> {
        keys.iter().find_map(|&k| self.int_arg(e, k))
    }

    /// `str(v)` for a name (`""` when missing).
    pub fn py_str(&self, v: PyValue) -> String {
        match v {
            PyValue::Missing | PyValue::Other => String::new(),
            PyValue::Null => "None".to_string(),
            PyValue::Bool(b) => if b { "True" } else { "False" }.to_string(),
            PyValue::Int(i) => i.to_string(),
            PyValue::Float(f) => crate::pyfmt::float_repr(f),
            PyValue::Str(id) => self.d.text(id).to_string(),
        }
    }

    /// The event's category, `""` unless a string.
    pub fn cat(&self, e: &PerfettoEvent) -> &'a str {
        self.d.str_or_empty(e.cat)
    }

    /// The event's name, `""` unless a string.
    pub fn name(&self, e: &PerfettoEvent) -> &'a str {
        self.d.str_or_empty(e.name)
    }

    /// (begin, end, duration) in ns as the HIP API report reads them: the
    /// `begin_ns`/`end_ns`/`delta_ns` arguments (the duration derived when
    /// only it is missing), else `ts`/`dur` cut to whole µs and scaled.
    pub fn api_times(&self, e: &PerfettoEvent) -> Option<(i64, i64, i64)> {
        let k = &self.k;
        let int = |v: Option<PyValue>| v.and_then(|v| self.d.py_int(v));
        let b = given(self.arg(e, k.begin_ns));
        let en = given(self.arg(e, k.end_ns));
        let d = given(self.arg(e, k.delta_ns));
        let from_args = match (int(b), int(en), d) {
            (Some(b), Some(en), None) => Some((b, en, en.checked_sub(b)?)),
            (Some(b), Some(en), Some(d)) => int(Some(d)).map(|d| (b, en, d)),
            _ => None,
        };
        if from_args.is_some() {
            return from_args;
        }
        let ts = self.d.py_int(given(e.ts)?)?;
        let dur = self.d.py_int(given(e.dur)?)?;
        let b = ts.checked_mul(1000)?;
        let d = dur.checked_mul(1000)?;
        Some((b, b.checked_add(d)?, d))
    }

    /// (start, duration) in ns as the activity report reads them: the
    /// `begin_ns` and `delta_ns` arguments when both are there, else `ts`
    /// and `dur` cut to whole numbers, taken as µs below 10^10 and as ns
    /// from there on.
    pub fn activity_times(&self, e: &PerfettoEvent) -> (i64, i64) {
        let k = &self.k;
        let b = self.arg(e, k.begin_ns);
        let d = self.arg(e, k.delta_ns);
        if b != PyValue::Missing
            && d != PyValue::Missing
            && let (Some(b), Some(d)) = (self.d.py_int(b), self.d.py_int(d))
        {
            return (b, d);
        }
        let int0 = |v: PyValue| self.d.py_int(v).unwrap_or(0);
        let ts = int0(e.ts);
        let dur = int0(e.dur);
        if ts < 10_000_000_000 {
            (ts.saturating_mul(1000), dur.saturating_mul(1000))
        } else {
            (ts, dur)
        }
    }

    /// `int(e.get("tid", default))`.
    pub fn tid_or(&self, e: &PerfettoEvent, default: i64) -> i64 {
        if e.tid == PyValue::Missing {
            return default;
        }
        self.d.py_int(e.tid).unwrap_or(default)
    }

    /// `int(e.get("pid", default))`.
    pub fn pid_or(&self, e: &PerfettoEvent, default: i64) -> i64 {
        if e.pid == PyValue::Missing {
            return default;
        }
        self.d.py_int(e.pid).unwrap_or(default)
    }

    /// The GPUs: each distinct `agent` argument (truthy ones only), in
    /// order of first appearance, numbered from 0.
    pub fn agents(&self) -> &Agents {
        self.agents.get_or_init(|| self.find_agents())
    }

    fn find_agents(&self) -> Agents {
        let mut index = FxHashMap::default();
        let mut names = Vec::new();
        for e in &self.d.events {
            let v = self.arg(e, self.k.agent);
            if !self.d.truthy(v) {
                continue;
            }
            let Some(key) = self.d.key(v) else { continue };
            index.entry(key).or_insert_with(|| {
                names.push(self.py_str(v));
                names.len() - 1
            });
        }
        Agents { index, names }
    }

    /// The GPU of an event by its `agent` argument.
    pub fn gpu_of(&self, agents: &Agents, e: &PerfettoEvent) -> Option<usize> {
        agents.gpu_of_value(self.d, self.arg(e, self.k.agent))
    }
}

/// The GPUs of a trace, as agents.
pub(crate) struct Agents {
    index: FxHashMap<PyKey, usize>,
    /// The agents' names, by GPU number.
    pub names: Vec<String>,
}

impl Agents {
    /// The GPU an agent value names (a copy's `src_agent`, say).
    pub fn gpu_of_value(&self, d: &PerfettoData, v: PyValue) -> Option<usize> {
        if !d.truthy(v) {
            return None;
        }
        self.index.get(&d.key(v)?).copied()
    }
}
