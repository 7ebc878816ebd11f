//! What an output path names before it is written: nothing yet or a
//! regular file (replaced by a rename), a character device or FIFO
//! (written through, never replaced), or something a run must not touch
//! (a symbolic link to a file, a socket, a block device), refused.

use std::fs::{self, FileType};
use std::io;
use std::path::Path;

/// How a run may write an output file's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// Absent or a regular file: staged beside it and renamed over it.
    Replace,
    /// A character device or a FIFO, possibly through a link: its bytes
    /// are written into it at commit time.
    WriteThrough,
    /// Anything else: the reason, to follow the path in a message.
    Refuse(String),
}

/// Whether `t` is a character device or a FIFO.
fn is_stream(t: FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        t.is_char_device() || t.is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = t;
        false
    }
}

/// What `t` is, for a message (`a socket`, `a FIFO`).
fn kind_of(t: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let special = [
            (t.is_fifo(), "a FIFO"),
            (t.is_char_device(), "a character device"),
            (t.is_block_device(), "a block device"),
            (t.is_socket(), "a socket"),
        ];
        if let Some((_, name)) = special.iter().find(|(is, _)| *is) {
            return name;
        }
    }
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

/// The message refusing to replace a path of type `t`.
fn refusal(t: FileType) -> String {
    format!(
        "is {}, not a regular file; refusing to replace it",
        kind_of(t)
    )
}

const LINK_REFUSAL: &str = "is a symbolic link; refusing to replace it (name its target instead)";

/// How a run may write the output file `path`. A directory counts as
/// [`Target::Replace`]: the commit refuses it with its own message.
pub(super) fn classify(path: &Path) -> Target {
    let Ok(own) = fs::symlink_metadata(path) else {
        return Target::Replace;
    };
    let t = own.file_type();
    if t.is_file() || t.is_dir() {
        return Target::Replace;
    }
    if is_stream(t) {
        return Target::WriteThrough;
    }
    if !t.is_symlink() {
        return Target::Refuse(refusal(t));
    }
    // A link: written through when it leads to a device or FIFO (as
    // `/dev/stdout` does), else never replaced.
    match fs::metadata(path) {
        Ok(m) if is_stream(m.file_type()) => Target::WriteThrough,
        Ok(m) if m.is_dir() => Target::Replace,
        _ => Target::Refuse(LINK_REFUSAL.to_string()),
    }
}

/// Whether the output file `path` is a character device or FIFO (or a
/// link to one) that a run writes through instead of replacing, as
/// `--md /dev/stdout` or `-o /dev/null`.
pub fn writes_through(path: &Path) -> bool {
    classify(path) == Target::WriteThrough
}

/// Checks, before any work, that a run may write the output `path`: a
/// file output (`folder` false) may be absent, a regular file, a
/// directory (refused later, at the commit), a character device or a
/// FIFO; a folder output may be absent or a folder (also through a link).
/// Returns the reason for refusing, to follow the path in a message
/// (`is a symbolic link; refusing to replace it (name its target
/// instead)`).
pub fn check_output(path: &Path, folder: bool) -> Result<(), String> {
    if !folder {
        return match classify(path) {
            Target::Refuse(why) => Err(why),
            _ => Ok(()),
        };
    }
    match (fs::symlink_metadata(path), fs::metadata(path)) {
        (Err(_), _) => Ok(()),
        (Ok(_), Ok(m)) if m.is_dir() => Ok(()),
        (Ok(own), Ok(m)) if own.file_type().is_symlink() => Err(format!(
            "is a symbolic link to {}, not to a folder",
            kind_of(m.file_type())
        )),
        (Ok(own), Err(_)) if own.file_type().is_symlink() => {
            Err("is a symbolic link to nothing, not a folder".to_string())
        }
        (Ok(own), _) => Err(format!("is {}, not a folder", kind_of(own.file_type()))),
    }
}

/// The guard of the commit's rename onto `path`: only an absent path or
/// a regular file is replaced. A directory (also through a link) is
/// refused as such; anything else (a link, a FIFO that appeared since the
/// run began) is never renamed over.
pub(super) fn check_replaceable(path: &Path) -> io::Result<()> {
    let Ok(own) = fs::symlink_metadata(path) else {
        return Ok(());
    };
    if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    let t = own.file_type();
    if t.is_file() {
        return Ok(());
    }
    let why = if t.is_symlink() {
        LINK_REFUSAL.to_string()
    } else if is_stream(t) {
        format!(
            "{} appeared here since the run began; refusing to replace it",
            kind_of(t)
        )
    } else {
        refusal(t)
    };
    Err(io::Error::other(why))
}

/// Opens the device or FIFO `path` for writing through at commit time,
/// and checks that what was opened is still one (not a regular file
/// swapped in since the run began, which writing without truncating
/// would corrupt). A FIFO's open waits for its reader.
pub(super) fn open_write_through(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A terminal opened here must not become the controlling one.
        options.custom_flags(libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    if !is_stream(file.metadata()?.file_type()) {
        return Err(io::Error::other(
            "it is no longer a device or FIFO; refusing to write into it",
        ));
    }
    Ok(file)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_path_is_classified() {
        let root = tempfile::tempdir().unwrap();
        let p = |n: &str| root.path().join(n);
        fs::write(p("file"), "x").unwrap();
        fs::create_dir(p("dir")).unwrap();
        std::os::unix::fs::symlink(p("file"), p("to_file")).unwrap();
        std::os::unix::fs::symlink(p("dir"), p("to_dir")).unwrap();
        std::os::unix::fs::symlink(p("gone"), p("dangling")).unwrap();
        std::os::unix::fs::symlink("/dev/null", p("to_null")).unwrap();
        let _sock = std::os::unix::net::UnixListener::bind(p("sock")).unwrap();
        assert_eq!(classify(&p("absent")), Target::Replace);
        assert_eq!(classify(&p("file")), Target::Replace);
        assert_eq!(classify(Path::new("/dev/null")), Target::WriteThrough);
        assert_eq!(classify(&p("to_null")), Target::WriteThrough);
        for refused in ["to_file", "dangling", "sock"] {
            assert!(
                matches!(classify(&p(refused)), Target::Refuse(_)),
                "{refused}"
            );
        }
        assert!(check_output(&p("to_dir"), true).is_ok());
        assert!(check_output(&p("absent"), true).is_ok());
        assert_eq!(
            check_output(&p("file"), true).unwrap_err(),
            "is a regular file, not a folder"
        );
        assert!(check_output(&p("to_file"), true).is_err());
        assert!(check_output(&p("dangling"), true).is_err());
        assert!(check_replaceable(&p("to_null")).is_err());
        assert!(check_replaceable(&p("file")).is_ok());
        assert!(open_write_through(&p("file")).is_err());
    }
}
