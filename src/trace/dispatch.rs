//! What dispatch-level profilers (rocprofv3) record beyond events: each
//! GPU dispatch's exact integer times and launch geometry. Format-free:
//! the rocprofv3 decoder fills it in, the rocprof report reads it.

/// The dispatch side of a trace.
#[derive(Debug, Clone, Default)]
pub struct DispatchData {
    /// Start of profiling (ns, the profiler's clock), when recorded.
    pub init_time_ns: Option<i64>,
    /// End of profiling (ns), when recorded.
    pub fini_time_ns: Option<i64>,
    /// Distinct kernel names; [`KernelDispatch::name`] indexes them (one
    /// copy per name, not per dispatch).
    pub names: Vec<String>,
    /// Kernel dispatches, in input order.
    pub kernels: Vec<KernelDispatch>,
    /// The distinct launch configurations of the dispatches;
    /// [`KernelDispatch::config`] indexes them.
    pub configs: Vec<LaunchConfig>,
    /// Memory copies, in input order.
    pub copies: Vec<MemoryCopy>,
}

impl DispatchData {
    /// The kernel name of a dispatch.
    pub fn name(&self, k: &KernelDispatch) -> &str {
        &self.names[k.name as usize]
    }

    /// Where and with what geometry a dispatch ran.
    pub fn config(&self, k: &KernelDispatch) -> &LaunchConfig {
        &self.configs[k.config as usize]
    }
}

/// One kernel dispatch (32 bytes: what many dispatches share is one
/// [`LaunchConfig`] of [`DispatchData::configs`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelDispatch {
    /// Index of the kernel name in [`DispatchData::names`] (as the profiler
    /// wrote it; rocprofv3 truncates templates).
    pub name: u32,
    /// Index of its launch configuration in [`DispatchData::configs`].
    pub config: u32,
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Dispatch id.
    pub dispatch_id: i64,
}

/// Where a dispatch ran and with what geometry: a kernel launched again
/// the same way repeats all of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Stream id.
    pub stream: i64,
    /// Grid size x, y, z.
    pub grid: [i64; 3],
    /// Workgroup size x, y, z.
    pub block: [i64; 3],
    /// Agent (device) id.
    pub agent_id: i64,
    /// Host thread that dispatched it.
    pub thread_id: i64,
}

impl KernelDispatch {
    /// Duration, ns.
    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// One memory copy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryCopy {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
}
