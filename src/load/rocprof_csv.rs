//! rocprofv3's kernel-trace CSV (`<prefix>_kernel_trace.csv`, written with
//! `--output-format csv`) as a rocprof trace: one dispatch per row, each
//! kernel id named by its first row, on agent 0 (the CSV names agents as
//! text, which the rocprof report does not read), profiling from the
//! first start to the last end. GPUs are counted from the agent-info CSV
//! beside it when there is one.

use std::io::Read;
use std::path::Path;

use super::rocprof::DispatchRecords;
use crate::error::LoadError;
use crate::trace::dispatch::{KernelDispatch, LaunchConfig};
use crate::trace::{Needs, Trace};

/// The columns every row must have.
const REQUIRED: [&str; 11] = [
    "Kernel_Id",
    "Kernel_Name",
    "Start_Timestamp",
    "End_Timestamp",
    "Dispatch_Id",
    "Thread_Id",
    "Grid_Size_X",
    "Grid_Size_Y",
    "Grid_Size_Z",
    "Workgroup_Size_X",
    "Workgroup_Size_Y",
];

/// The last geometry column, and the stream (0 when the CSV has none).
const WORKGROUP_Z: &str = "Workgroup_Size_Z";
const STREAM: &str = "Stream_Id";

/// Reads the kernel-trace CSV at `path` (and counts the GPU rows of
/// `agent_info`, when given and present).
pub fn read_kernel_trace(
    path: &Path,
    agent_info: Option<&Path>,
    needs: &Needs,
) -> Result<Trace, LoadError> {
    let file = std::fs::File::open(path).map_err(LoadError::Io)?;
    let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let gpu_agents = match agent_info.filter(|p| p.is_file()) {
        Some(p) => count_gpu_agents(std::fs::File::open(p).map_err(LoadError::Io)?)
            .map_err(|e| LoadError::Invalid(format!("{}: {e}", p.display())))?,
        None => 0,
    };
    decode(file, bytes, gpu_agents, needs)
}

/// [`read_kernel_trace`] of CSV text from `reader` (`bytes` long).
pub fn decode<R: Read>(
    reader: R,
    bytes: u64,
    gpu_agents: usize,
    needs: &Needs,
) -> Result<Trace, LoadError> {
    let mut csv = csv::ReaderBuilder::new().flexible(true).from_reader(reader);
    let headers = csv.headers().map_err(csv_error)?.clone();
    let column = |name: &str| headers.iter().position(|h| h == name);
    let mut idx = [0usize; REQUIRED.len()];
    for (slot, name) in idx.iter_mut().zip(REQUIRED) {
        *slot = column(name).ok_or_else(|| {
            LoadError::NotATrace(format!("not a kernel-trace CSV: no {name} column"))
        })?;
    }
    let wg_z = column(WORKGROUP_Z).ok_or_else(|| {
        LoadError::NotATrace(format!("not a kernel-trace CSV: no {WORKGROUP_Z} column"))
    })?;
    let stream = column(STREAM);
    let mut records = DispatchRecords::new();
    let (mut init, mut fini) = (None::<i64>, None::<i64>);
    let mut record = csv::StringRecord::new();
    let mut row = 1u64;
    while csv.read_record(&mut record).map_err(csv_error)? {
        row += 1;
        let at = |what: String| LoadError::Invalid(format!("row {row}: {what}"));
        let field =
            |i: usize, name: &str| record.get(i).ok_or_else(|| at(format!("no {name} value")));
        let int = |i: usize, name: &str| -> Result<i64, LoadError> {
            let text = field(i, name)?;
            parse_int(text).ok_or_else(|| at(format!("{name} {text:?} is not an integer")))
        };
        let [kid, kname, start, end, dispatch, thread, gx, gy, gz, bx, by] = idx;
        let kernel_id = int(kid, REQUIRED[0])?;
        let kernel_id = u64::try_from(kernel_id)
            .map_err(|_| at(format!("Kernel_Id {kernel_id} is negative")))?;
        let k = KernelDispatch {
            name: 0,
            config: 0,
            start_ns: int(start, "Start_Timestamp")?,
            end_ns: int(end, "End_Timestamp")?,
            dispatch_id: int(dispatch, "Dispatch_Id")?,
        };
        let config = LaunchConfig {
            stream: match stream {
                Some(i) => int(i, STREAM)?,
                None => 0,
            },
            grid: [
                int(gx, "Grid_Size_X")?,
                int(gy, "Grid_Size_Y")?,
                int(gz, "Grid_Size_Z")?,
            ],
            block: [
                int(bx, "Workgroup_Size_X")?,
                int(by, "Workgroup_Size_Y")?,
                int(wg_z, WORKGROUP_Z)?,
            ],
            agent_id: 0,
            thread_id: int(thread, "Thread_Id")?,
        };
        init = Some(init.map_or(k.start_ns, |v| v.min(k.start_ns)));
        fini = Some(fini.map_or(k.end_ns, |v| v.max(k.end_ns)));
        let name = field(kname, "Kernel_Name")?;
        records.push(kernel_id, name, k, config).map_err(at)?;
    }
    // An empty CSV profiled nothing: from 0 to 0.
    records.finish(init.or(Some(0)), fini.or(Some(0)), gpu_agents, bytes, needs)
}

/// The rows of an agent-info CSV whose `Agent_Type` is `GPU`.
fn count_gpu_agents<R: Read>(reader: R) -> Result<usize, String> {
    let mut csv = csv::ReaderBuilder::new().flexible(true).from_reader(reader);
    let headers = csv.headers().map_err(|e| e.to_string())?.clone();
    let Some(kind) = headers.iter().position(|h| h == "Agent_Type") else {
        return Ok(0);
    };
    let mut n = 0;
    for r in csv.records() {
        let r = r.map_err(|e| e.to_string())?;
        n += usize::from(r.get(kind) == Some("GPU"));
    }
    Ok(n)
}

/// An integer as Python's `int()` reads text, within `i64`.
fn parse_int(text: &str) -> Option<i64> {
    crate::numeric::py_int(text).and_then(|v| i64::try_from(v).ok())
}

fn csv_error(e: csv::Error) -> LoadError {
    if e.is_io_error() {
        match e.into_kind() {
            csv::ErrorKind::Io(io) => return LoadError::Io(io),
            _ => return LoadError::Internal,
        }
    }
    LoadError::Syntax(format!("bad CSV: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"\n";

    fn trace(rows: &str) -> Result<Trace, LoadError> {
        let text = format!("{HEADER}{rows}");
        decode(text.as_bytes(), text.len() as u64, 1, &Needs::default())
    }

    #[test]
    fn rows_become_dispatches_named_by_the_first_row_of_their_id() {
        let t = trace(concat!(
            "\"KERNEL_DISPATCH\",\"Agent 1\",1,3,77,1,5,\"k<a, b>\",1,100,150,64,1,1,4096,1,1\n",
            "\"KERNEL_DISPATCH\",\"Agent 1\",1,3,77,2,5,\"renamed\",2,40,90,64,1,1,4096,1,1\n",
            "\"KERNEL_DISPATCH\",\"Agent 1\",1,0,78,3,6,\"other\",3,200,260,32,2,1,8,1,1\n",
        ))
        .unwrap();
        let d = t.dispatches().unwrap();
        assert_eq!(d.kernels.len(), 3);
        assert_eq!(d.name(&d.kernels[1]), "k<a, b>");
        assert_eq!(d.name(&d.kernels[2]), "other");
        assert_eq!((d.init_time_ns, d.fini_time_ns), (Some(40), Some(260)));
        let c = d.config(&d.kernels[2]);
        assert_eq!((c.stream, c.thread_id, c.agent_id), (0, 78, 0));
        assert_eq!((c.grid, c.block), ([8, 1, 1], [32, 2, 1]));
        assert_eq!(d.kernels[0].dur_ns(), 50);
    }

    #[test]
    fn bad_rows_say_which_row_and_column() {
        let e =
            trace("\"KERNEL_DISPATCH\",\"Agent 1\",1,0,77,1,5,\"k\",1,1x0,150,64,1,1,4096,1,1\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("row 2") && e.contains("Start_Timestamp"), "{e}");
        let e =
            trace("\"KERNEL_DISPATCH\",\"Agent 1\",1,0,77,1,5,\"k\",1,200,150,64,1,1,4096,1,1\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("row 2") && e.contains("before"), "{e}");
        let e = decode(&b"a,b\n1,2\n"[..], 8, 0, &Needs::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no Kernel_Id column"), "{e}");
    }

    #[test]
    fn integers_read_as_python_reads_them() {
        assert_eq!(parse_int(" 42 "), Some(42));
        assert_eq!(parse_int("+7"), Some(7));
        assert_eq!(parse_int("-1_000"), Some(-1000));
        for bad in ["", "1.0", "_1", "1__0", "0x10", "--1"] {
            assert_eq!(parse_int(bad), None, "{bad}");
        }
    }

    #[test]
    fn gpu_agents_are_counted_by_type() {
        let text = "\"Node_Id\",\"Agent_Type\",\"Name\"\n0,\"CPU\",\"cpu\"\n1,\"GPU\",\"gfx942\"\n2,\"GPU\",\"gfx942\"\n";
        assert_eq!(count_gpu_agents(text.as_bytes()), Ok(2));
    }
}
