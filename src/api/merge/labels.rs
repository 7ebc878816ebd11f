//! The merged trace's process labels: `RANK <r> - GPU` or `RANK <r> - CPU`
//! for every process, and a sort index that puts each rank's CPU process
//! above its GPU, ranks in order.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use crate::api::event_text::object::{self, Kind, Object};

/// The categories of GPU work: a process with any of them is a GPU.
const GPU_CATS: [&str; 3] = ["kernel", "gpu_memcpy", "gpu_memset"];

/// What the labels are made from, gathered as events are written.
#[derive(Debug, Default)]
pub(super) struct Labels {
    /// Each integer pid of a non-metadata event, with the rank of its first
    /// event.
    rank_of: BTreeMap<i128, usize>,
    /// The pids with GPU work.
    gpu: BTreeSet<i128>,
}

impl Labels {
    /// Notes a kept (rewritten) event of `rank`.
    pub(super) fn observe(&mut self, e: &Object, rank: usize) {
        if e.get("ph").and_then(object::as_str).as_deref() == Some("M") {
            return;
        }
        let Some(Kind::Int(pid)) = e.get("pid").map(object::kind) else {
            return;
        };
        self.rank_of.entry(pid).or_insert(rank);
        let cat = e.get("cat").and_then(object::as_str);
        if cat.is_some_and(|c| GPU_CATS.contains(&c.as_ref())) {
            self.gpu.insert(pid);
        }
    }

    /// The number of processes labelled.
    pub(super) fn len(&self) -> usize {
        self.rank_of.len()
    }

    /// Writes the `process_name` and `process_sort_index` events, by (rank,
    /// pid), separated by `sep`, the first one too when `after_events`.
    pub(super) fn write(
        &self,
        out: &mut dyn Write,
        sep: &[u8],
        mut after_events: bool,
    ) -> io::Result<()> {
        let mut order: Vec<(usize, i128)> = self.rank_of.iter().map(|(&p, &r)| (r, p)).collect();
        order.sort_unstable();
        for (rank, pid) in order {
            let gpu = self.gpu.contains(&pid);
            let label = if gpu { "GPU" } else { "CPU" };
            let index = rank * 2 + usize::from(gpu);
            if after_events {
                out.write_all(sep)?;
            }
            after_events = true;
            write!(
                out,
                r#"{{"name":"process_name","ph":"M","pid":{pid},"tid":0,"args":{{"name":"RANK {rank} - {label}"}}}}"#
            )?;
            out.write_all(sep)?;
            write!(
                out,
                r#"{{"name":"process_sort_index","ph":"M","pid":{pid},"tid":0,"args":{{"sort_index":{index}}}}}"#
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_by_rank_then_pid_gpu_after_cpu() {
        let mut l = Labels::default();
        for (t, r) in [
            (r#"{"ph":"X","pid":1000003,"cat":"kernel"}"#, 1),
            (r#"{"ph":"X","pid":1031337,"cat":"cpu_op"}"#, 1),
            (r#"{"ph":"M","pid":5,"name":"thread_name"}"#, 0),
            (r#"{"ph":"X","pid":"Spans"}"#, 0),
            (r#"{"ph":"X","pid":31337}"#, 0),
        ] {
            l.observe(&Object::parse(t).unwrap(), r);
        }
        let mut out = Vec::new();
        l.write(&mut out, b"\n", false).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 6);
        assert!(lines[0].contains(r#""pid":31337"#) && lines[0].contains("RANK 0 - CPU"));
        assert!(lines[2].contains(r#""pid":1000003"#) && lines[2].contains("RANK 1 - GPU"));
        assert!(lines[3].contains(r#""sort_index":3"#));
        assert!(lines[5].contains(r#""sort_index":2"#));
    }
}
