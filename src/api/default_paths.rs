//! The default output paths built from an input's name: the report's
//! workbook and replay's folder beside the trace, diff's folder, the
//! summary folder of a trace. Each is built from the bytes of the input's
//! own file name (a name that is not UTF-8 keeps its bytes) and replaces
//! only that file name, so the output stays in the input's folder.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::compare::InputKind;

/// A trace's file name without its format suffix: everything from the last
/// `.xplane.pb`, else the last `_results.json` (rocprofv3), else the last
/// `.json`, is dropped (`trace.json.gz` → `trace`, `908_results.json` →
/// `908`, `p.xplane.pb` → `p`); a name with none of them is kept whole.
pub fn trace_stem(trace: &Path) -> OsString {
    let name = trace.file_name().unwrap_or(OsStr::new(""));
    let bytes = name.as_encoded_bytes();
    let end = [b".xplane.pb".as_slice(), b"_results.json", b".json"]
        .iter()
        .find_map(|suffix| rfind(bytes, suffix))
        .unwrap_or(bytes.len());
    prefix(name, end)
}

/// `trace`'s stem ([`trace_stem`]) followed by `suffix`, beside the trace.
pub fn beside_trace(trace: &Path, suffix: &str) -> PathBuf {
    let mut name = trace_stem(trace);
    name.push(suffix);
    trace.with_file_name(name)
}

/// The report's default workbook: `<stem>_perf_report.xlsx` beside the
/// trace (the reference's name).
pub fn default_workbook(trace: &Path) -> PathBuf {
    beside_trace(trace, "_perf_report.xlsx")
}

/// `replay`'s default folder: `<stem>_replay` beside the trace.
pub fn default_replay_dir(trace: &Path) -> PathBuf {
    beside_trace(trace, "_replay")
}

/// The folder name of a trace's summary: its file name without the trace
/// suffixes ([`trace_stem`]), or the whole file name when that stem would
/// not name a folder of its own (empty, `.`, `..`).
pub fn summary_name(trace: &Path) -> OsString {
    let stem = trace_stem(trace);
    if !matches!(stem.as_encoded_bytes(), b"" | b"." | b"..") {
        return stem;
    }
    match trace.file_name() {
        Some(name) if !matches!(name.as_encoded_bytes(), b"." | b"..") => name.to_os_string(),
        _ => OsString::from("trace"),
    }
}

/// The reference's default tag, `splitext(basename(path))[0]`, as the
/// bytes of the file name; for a trace, everything from the first `.json`
/// or `.xplane.pb` after the first character is dropped (`a.json.gz` →
/// `a`).
pub fn tag_name(path: &Path, kind: InputKind) -> OsString {
    let name = path.file_name().unwrap_or(path.as_os_str());
    let bytes = name.as_encoded_bytes();
    if kind == InputKind::Trace {
        for ext in [b".json".as_slice(), b".xplane.pb"] {
            if let Some(i) = find(bytes, ext)
                && i > 0
            {
                return prefix(name, i);
            }
        }
    }
    match rfind(bytes, b".") {
        Some(i) if i > 0 => prefix(name, i),
        _ => name.to_os_string(),
    }
}

/// `diff`'s default folder: `<base>_vs_<variant>_diff` from the two tags
/// ([`tag_name`]), in the current folder.
pub fn default_diff_dir(base: &Path, variant: &Path) -> PathBuf {
    let mut name = tag_name(base, InputKind::Trace);
    name.push("_vs_");
    name.push(tag_name(variant, InputKind::Trace));
    name.push("_diff");
    PathBuf::from(name)
}

/// The first `end` bytes of `name`, cut where an ASCII match starts (a
/// character boundary).
#[cfg(unix)]
fn prefix(name: &OsStr, end: usize) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    OsStr::from_bytes(&name.as_bytes()[..end]).to_os_string()
}

/// The first `end` bytes of `name`: elsewhere a name that is not Unicode
/// keeps replacement characters (its encoded bytes are no public format).
#[cfg(not(unix))]
fn prefix(name: &OsStr, end: usize) -> OsString {
    String::from_utf8_lossy(&name.as_encoded_bytes()[..end])
        .into_owned()
        .into()
}

/// Where `needle` last starts in `hay`.
fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Where `needle` first starts in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(p: PathBuf) -> String {
        p.to_string_lossy().into_owned()
    }

    #[test]
    fn stems_of_ordinary_names_are_the_references() {
        assert_eq!(
            s(default_workbook(Path::new("a/trace.json.gz"))),
            "a/trace_perf_report.xlsx"
        );
        assert_eq!(
            s(default_workbook(Path::new("a/908_results.json"))),
            "a/908_perf_report.xlsx"
        );
        assert_eq!(
            s(default_workbook(Path::new("p.xplane.pb"))),
            "p_perf_report.xlsx"
        );
        assert_eq!(
            s(default_workbook(Path::new("./t.zip"))),
            "./t.zip_perf_report.xlsx"
        );
        assert_eq!(s(default_replay_dir(Path::new("d/t.json"))), "d/t_replay");
        assert_eq!(
            s(default_diff_dir(
                Path::new("x/a.json.gz"),
                Path::new("b.pb")
            )),
            "a_vs_b_diff"
        );
    }

    #[test]
    fn a_suffix_in_the_folder_name_stays_there() {
        let p = Path::new("runs.json.d/t.gz");
        assert_eq!(s(default_workbook(p)), "runs.json.d/t.gz_perf_report.xlsx");
        assert_eq!(s(default_replay_dir(p)), "runs.json.d/t.gz_replay");
    }

    #[test]
    fn summary_names_never_leave_their_folder() {
        assert_eq!(summary_name(Path::new("../x.json")), "x");
        assert_eq!(summary_name(Path::new("d/..json")), "..json");
        assert_eq!(summary_name(Path::new("d/.json")), ".json");
        assert_eq!(
            summary_name(Path::new("d/._results.json")),
            "._results.json"
        );
        assert_eq!(summary_name(Path::new("r1.json.gz")), "r1");
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_keep_their_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let t = Path::new(OsStr::from_bytes(b"d\xff/t\xfe.json"));
        let book = default_workbook(t);
        assert_eq!(book.as_os_str().as_bytes(), b"d\xff/t\xfe_perf_report.xlsx");
        assert_eq!(summary_name(t).as_bytes(), b"t\xfe");
    }
}
