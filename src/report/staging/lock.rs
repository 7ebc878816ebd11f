//! Advisory locks serialising commits into one output folder, so that two
//! runs writing the same folder at once leave it holding one run's files,
//! never a mix.
//!
//! The lock is the folder's own: the folder is opened read-only and
//! locked (`flock` on Unix), which leaves nothing behind. Folders are
//! locked in the order of their resolved paths, so two runs sharing two
//! folders cannot wait on each other. Where a folder cannot be opened or
//! its file system has no locks, the commit goes on unlocked, as before.

use std::fs::{self, File, TryLockError};
use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::WriteError;

/// How long a commit waits for another run's commit into the same folder.
pub(super) const WAIT: Duration = Duration::from_secs(60);

/// Locks held until dropped.
#[derive(Debug)]
pub(super) struct FolderLocks(#[allow(dead_code)] Vec<File>);

/// Locks each of `dirs` that exists, waiting up to `wait` for each; fails
/// with one error naming the folder still locked after that.
pub(super) fn lock_folders(
    dirs: impl IntoIterator<Item = PathBuf>,
    wait: Duration,
) -> Result<FolderLocks, WriteError> {
    let mut resolved: Vec<PathBuf> = dirs
        .into_iter()
        .filter_map(|d| fs::canonicalize(d).ok())
        .collect();
    resolved.sort();
    resolved.dedup();
    let deadline = Instant::now() + wait;
    let mut held = Vec::with_capacity(resolved.len());
    for dir in resolved {
        let Ok(file) = File::open(&dir) else { continue };
        loop {
            match file.try_lock() {
                Ok(()) => {
                    held.push(file);
                    break;
                }
                // No locks here (some network file systems): unlocked.
                Err(TryLockError::Error(_)) => break,
                Err(TryLockError::WouldBlock) if Instant::now() >= deadline => {
                    return Err(WriteError::io(format!(
                        "cannot write into {}",
                        dir.display()
                    ))(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "another run kept committing into this folder for {} s; try again",
                            wait.as_secs()
                        ),
                    )));
                }
                Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
    Ok(FolderLocks(held))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_locked_folder_waits_then_fails_naming_it() {
        let root = tempfile::tempdir().unwrap();
        let other = File::open(root.path()).unwrap();
        other.lock().unwrap();
        let t = Instant::now();
        let err =
            lock_folders([root.path().to_path_buf()], Duration::from_millis(200)).unwrap_err();
        assert!(t.elapsed() >= Duration::from_millis(200));
        let dir = fs::canonicalize(root.path()).unwrap();
        assert!(
            err.to_string().contains(&dir.display().to_string()),
            "{err}"
        );
        // Released: taken at once; a missing folder is skipped.
        other.unlock().unwrap();
        let gone = root.path().join("gone");
        assert!(lock_folders([root.path().to_path_buf(), gone], Duration::ZERO).is_ok());
    }
}
