//! All-or-nothing output: every file of a run is written first into one
//! hidden folder per target folder (`DIR/.tracelens-staging-PID-N/`, on the
//! target's file system so the final renames are atomic) and moved into
//! place only when all of them were written.
//!
//! [`Staging::commit`] checks every target before moving anything, moves
//! each existing target aside into the hidden folder, renames the new file
//! in, and on any failure puts every old file back and removes the new
//! ones. Dropping a [`Staging`] without committing removes the hidden
//! folders and the folders it created. A signal handler can do the same for
//! every live run with [`discard_all_and_exit`].

use std::collections::HashSet;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{Rendered, WriteError};

type Result<T> = std::result::Result<T, WriteError>;

/// Prefix of the hidden staging folders.
pub const STAGING_PREFIX: &str = ".tracelens-staging-";

/// What must go when the process is interrupted: a staging folder (with
/// everything in it) or a folder a run created (only while empty).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Live {
    Staging(PathBuf),
    Created(PathBuf),
}

/// Every live run's staging and created folders, in creation order. A
/// commit holds the lock from its first move to its last, so a signal
/// handler never sees a half-committed run.
static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<Live>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// For a signal handler: waits for a running commit to finish, removes
/// every live staging folder and every still-empty folder a run created,
/// then exits the process with `code`. Holding the lock until the exit
/// keeps other threads from staging anything new.
pub fn discard_all_and_exit(code: i32) -> ! {
    discard_and_exit(live(), code)
}

/// Removes what `live` (the held lock) lists, then exits with `code`.
fn discard_and_exit(live: MutexGuard<'static, Vec<Live>>, code: i32) -> ! {
    for entry in live.iter().rev() {
        match entry {
            Live::Staging(d) => {
                // A writer thread may add a file while the folder is being
                // emptied; a few tries win that race.
                for _ in 0..5 {
                    if fs::remove_dir_all(d).is_ok() || !d.exists() {
                        break;
                    }
                }
            }
            Live::Created(d) => {
                let _ = fs::remove_dir(d);
            }
        }
    }
    std::process::exit(code)
}

/// For a panic hook (a panic aborts the binary, so nothing is dropped):
/// [`discard_all_and_exit`], unless the lock stays taken for a second,
/// which it does when the panicking thread holds it (a panic inside a
/// commit); then it exits with `code` and leaves the folders.
pub fn discard_all_after_panic(code: i32) -> ! {
    for _ in 0..1000 {
        match LIVE.try_lock() {
            Ok(live) => discard_and_exit(live, code),
            Err(std::sync::TryLockError::Poisoned(p)) => discard_and_exit(p.into_inner(), code),
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
    std::process::exit(code)
}

/// One staged output: the new file and where it goes.
#[derive(Debug, Clone)]
struct Staged {
    tmp: PathBuf,
    target: PathBuf,
}

/// A move done by a commit, undone in reverse order on failure.
#[derive(Debug)]
enum Step {
    /// An existing file moved aside to a backup.
    Aside { from: PathBuf, backup: PathBuf },
    /// A new file renamed onto its target.
    Placed(PathBuf),
}

/// Output files being written.
#[derive(Debug, Default)]
pub struct Staging {
    staged: Vec<Staged>,
    /// (target folder, its hidden staging folder).
    dirs: Vec<(PathBuf, PathBuf)>,
    created_dirs: Vec<PathBuf>,
    /// (folder, extension): `*.ext` files there that this run does not
    /// write are removed by the commit.
    replaced: Vec<(PathBuf, String)>,
    /// Committed, or discarded after a failed commit: nothing left to do.
    done: bool,
    /// A rollback could not restore every old file: keep the staging
    /// folders holding the backups.
    keep: bool,
    /// Test hook: the commit's rename number N (0-based) fails.
    #[cfg(test)]
    fail_rename: Option<usize>,
}

/// The folder of `target` (`.` for a bare file name).
fn parent_of(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `target` with its folder resolved (links, `..`), for comparing paths.
fn key_of(target: &Path) -> PathBuf {
    let dir = parent_of(target);
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match target.file_name() {
        Some(name) => dir.join(name),
        None => dir,
    }
}

impl Staging {
    /// Nothing staged yet.
    pub fn new() -> Staging {
        Staging::default()
    }

    /// The hidden staging folder inside `parent`, created on first use.
    fn staging_dir(&mut self, parent: &Path, live: &mut Vec<Live>) -> Result<PathBuf> {
        if let Some((_, d)) = self.dirs.iter().find(|(p, _)| p == parent) {
            return Ok(d.clone());
        }
        // Process id plus a counter: concurrent runs never share a folder.
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("{STAGING_PREFIX}{}-{n}", std::process::id()));
        fs::create_dir(&dir).map_err(WriteError::io(format!(
            "cannot create a staging folder in {}",
            parent.display()
        )))?;
        live.push(Live::Staging(dir.clone()));
        self.dirs.push((parent.to_path_buf(), dir.clone()));
        Ok(dir)
    }

    /// A new path in the hidden staging folder beside `target` to write
    /// instead of it; renamed onto `target` by [`Staging::commit`]. The
    /// target's folder must exist (see [`Staging::create_dir_all`]).
    pub fn stage(&mut self, target: &Path) -> Result<PathBuf> {
        let mut live = live();
        let dir = self
            .staging_dir(parent_of(target), &mut live)
            .map_err(|e| e.at(format!("cannot write {}", target.display())))?;
        let tmp = dir.join(format!("new-{}", self.staged.len()));
        self.staged.push(Staged {
            tmp: tmp.clone(),
            target: target.to_path_buf(),
        });
        Ok(tmp)
    }

    /// Creates `dir` and its missing parents, remembering which were new so
    /// that an aborted run removes them again.
    pub fn create_dir_all(&mut self, dir: &Path) -> Result<()> {
        let mut missing = Vec::new();
        let mut d = Some(dir);
        while let Some(p) = d {
            if p.as_os_str().is_empty() || p.exists() {
                break;
            }
            missing.push(p.to_path_buf());
            d = p.parent();
        }
        let mut live = live();
        for p in missing.into_iter().rev() {
            fs::create_dir(&p).map_err(WriteError::io(format!(
                "cannot create directory {}",
                p.display()
            )))?;
            live.push(Live::Created(p.clone()));
            self.created_dirs.push(p);
        }
        Ok(())
    }

    /// Stages the file `path` with `bytes`, creating its directory.
    pub fn put(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        let what = || format!("cannot write {}", path.display());
        if let Some(parent) = path.parent() {
            self.create_dir_all(parent).map_err(|e| e.at(what()))?;
        }
        self.create(path)?
            .write_all(bytes)
            .map_err(WriteError::io(what()))
    }

    /// A new file staged for `target` ([`Staging::stage`]), open for
    /// writing; its folder must exist.
    pub fn create(&mut self, target: &Path) -> Result<fs::File> {
        let tmp = self.stage(target)?;
        fs::File::create(&tmp).map_err(WriteError::io(format!(
            "cannot create {}",
            target.display()
        )))
    }

    /// Stages `files` (targets inside `dir`), creating `dir` first.
    pub fn put_all(&mut self, dir: &Path, files: &[Rendered]) -> Result<()> {
        self.create_dir_all(dir)?;
        for f in files {
            self.put(&f.name, &f.bytes)?;
        }
        Ok(())
    }

    /// Makes this run own the `*.ext` files directly in `dir`: the commit
    /// removes those it does not write (with the same rollback as the
    /// renames), so a re-run replaces a folder's sheets as a unit. Hidden
    /// files, folders, links and other names are left alone.
    pub fn replace_all(&mut self, dir: &Path, ext: &str) {
        self.replaced.push((dir.to_path_buf(), ext.to_string()));
    }

    /// Moves every staged file onto its target, all or nothing.
    ///
    /// Every target is checked first (its folder exists, it is not a
    /// directory, no two outputs share a path); then each existing target
    /// is moved aside into the staging folder and the new file renamed in.
    /// On any failure the new files are removed and every old file is put
    /// back; on success the old files are deleted.
    pub fn commit(mut self) -> Result<()> {
        let mut live = live();
        let result = self.commit_locked(&mut live);
        self.discard(&mut live);
        result
    }

    fn commit_locked(&mut self, live: &mut Vec<Live>) -> Result<()> {
        let keys = self.check_targets()?;
        let stale = self.stale_files(&keys)?;
        let mut steps = Vec::new();
        match self.apply(&stale, &mut steps, live) {
            Ok(()) => {
                // The old files sit in the staging folders removed next.
                live.retain(|l| !matches!(l, Live::Created(d) if self.created_dirs.contains(d)));
                self.created_dirs.clear();
                Ok(())
            }
            Err(e) => Err(self.roll_back(steps, e)),
        }
    }

    /// The checks before the first move; returns each target's resolved
    /// path.
    fn check_targets(&self) -> Result<Vec<PathBuf>> {
        let mut seen = HashSet::new();
        let mut keys = Vec::with_capacity(self.staged.len());
        for s in &self.staged {
            let what = || format!("cannot write {}", s.target.display());
            let dir = parent_of(&s.target);
            if !dir.is_dir() {
                return Err(WriteError::io(what())(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("its folder {} is gone", dir.display()),
                )));
            }
            if fs::metadata(&s.target).is_ok_and(|m| m.is_dir()) {
                return Err(WriteError::io(what())(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a directory",
                )));
            }
            let key = key_of(&s.target);
            if !seen.insert(key.clone()) {
                return Err(WriteError::Invalid(format!(
                    "{}: two outputs of this run would be written to this path",
                    s.target.display()
                )));
            }
            keys.push(key);
        }
        Ok(keys)
    }

    /// The files of the replaced folders that this run does not write.
    fn stale_files(&self, keys: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let targets: HashSet<&PathBuf> = keys.iter().collect();
        let mut stale = Vec::new();
        for (dir, ext) in &self.replaced {
            let entries = match fs::read_dir(dir) {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(WriteError::io(format!("cannot list {}", dir.display()))(e)),
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let ours = !name.starts_with('.')
                    && Path::new(&*name)
                        .extension()
                        .is_some_and(|e| e == ext.as_str())
                    && entry.file_type().is_ok_and(|t| t.is_file());
                let path = dir.join(entry.file_name());
                if ours && !targets.contains(&key_of(&path)) {
                    stale.push(path);
                }
            }
        }
        Ok(stale)
    }

    /// Renames `from` to `to`, failing on purpose where a unit test asks.
    fn rename(&self, from: &Path, to: &Path, count: &mut usize) -> io::Result<()> {
        #[cfg(test)]
        if self.fail_rename == Some(*count) {
            return Err(io::Error::other("injected failure"));
        }
        *count += 1;
        fs::rename(from, to)
    }

    /// Moves old files aside and new files in, recording each move.
    fn apply(
        &mut self,
        stale: &[PathBuf],
        steps: &mut Vec<Step>,
        live: &mut Vec<Live>,
    ) -> Result<()> {
        let mut count = 0;
        let staged = self.staged.clone();
        for (i, s) in staged.iter().enumerate() {
            let what = || format!("cannot write {}", s.target.display());
            if fs::symlink_metadata(&s.target).is_ok() {
                let backup = self.staging_dir(parent_of(&s.target), live)?;
                let backup = backup.join(format!("old-{i}"));
                self.rename(&s.target, &backup, &mut count)
                    .map_err(WriteError::io(what()))?;
                steps.push(Step::Aside {
                    from: s.target.clone(),
                    backup,
                });
            }
            self.rename(&s.tmp, &s.target, &mut count)
                .map_err(WriteError::io(what()))?;
            steps.push(Step::Placed(s.target.clone()));
        }
        for (i, path) in stale.iter().enumerate() {
            let backup = self.staging_dir(parent_of(path), live)?;
            let backup = backup.join(format!("stale-{i}"));
            self.rename(path, &backup, &mut count)
                .map_err(WriteError::io(format!("cannot remove {}", path.display())))?;
            steps.push(Step::Aside {
                from: path.clone(),
                backup,
            });
        }
        Ok(())
    }

    /// Undoes `steps` after `err`; the error says whether every old file
    /// is back.
    fn roll_back(&mut self, steps: Vec<Step>, err: WriteError) -> WriteError {
        let mut lost = Vec::new();
        for step in steps.into_iter().rev() {
            match step {
                Step::Placed(t) => {
                    let _ = fs::remove_file(&t);
                }
                Step::Aside { from, backup } => {
                    if fs::rename(&backup, &from).is_err() {
                        lost.push(format!(
                            "{} is kept at {}",
                            from.display(),
                            backup.display()
                        ));
                    }
                }
            }
        }
        if lost.is_empty() {
            return with_note(err, "no output was changed");
        }
        self.keep = true;
        with_note(
            err,
            &format!("could not restore every old file: {}", lost.join(", ")),
        )
    }

    /// Removes the staging folders (unless they hold backups that could not
    /// be restored) and the folders this run created, and forgets them.
    fn discard(&mut self, live: &mut Vec<Live>) {
        self.done = true;
        for (_, d) in self.dirs.drain(..) {
            if !self.keep {
                // Best effort: the error being reported matters more.
                let _ = fs::remove_dir_all(&d);
            }
            live.retain(|l| *l != Live::Staging(d.clone()));
        }
        for d in self.created_dirs.drain(..).rev() {
            let _ = fs::remove_dir(&d);
            live.retain(|l| *l != Live::Created(d.clone()));
        }
    }
}

/// `err` with `note` added to its message, before the cause.
fn with_note(err: WriteError, note: &str) -> WriteError {
    match err {
        WriteError::Io { what, source } => WriteError::Io {
            what: format!("{what} ({note})"),
            source,
        },
        WriteError::In { what, source } => WriteError::In {
            what: format!("{what} ({note})"),
            source,
        },
        other => other.at(note),
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            let mut live = live();
            self.discard(&mut live);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of `e` and its causes.
    fn chain(e: &WriteError) -> String {
        let mut s = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(c) = src {
            s.push_str(&format!(": {c}"));
            src = c.source();
        }
        s
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn commit_renames_and_drop_cleans_up() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("a/b/out.txt");
        {
            let mut s = Staging::new();
            s.put(&target, b"x").unwrap();
            assert_eq!(
                names(target.parent().unwrap()).len(),
                1,
                "one staging folder"
            );
            // Dropped without commit: staging folder and both new folders go.
        }
        assert!(names(root.path()).is_empty());
        let mut s = Staging::new();
        s.put(&target, b"y").unwrap();
        s.commit().unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "y");
        assert_eq!(names(target.parent().unwrap()), ["out.txt"]);
    }

    #[test]
    fn failed_rename_rolls_everything_back() {
        let root = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            root.path().join("a.txt"),
            root.path().join("sub/b.txt"),
            root.path().join("c.txt"),
        );
        fs::create_dir(root.path().join("sub")).unwrap();
        fs::write(&a, "old a").unwrap();
        fs::write(&b, "old b").unwrap();
        // Renames: a aside, a in, b aside, b in, c in (c is new).
        for fail in 0..5 {
            let mut s = Staging::new();
            s.fail_rename = Some(fail);
            for p in [&a, &b, &c] {
                s.put(p, b"new").unwrap();
            }
            let err = s.commit().unwrap_err();
            assert!(chain(&err).contains("no output was changed"), "{err:#}");
            assert_eq!(fs::read_to_string(&a).unwrap(), "old a", "fail at {fail}");
            assert_eq!(fs::read_to_string(&b).unwrap(), "old b", "fail at {fail}");
            assert!(!c.exists(), "fail at {fail}");
            assert_eq!(names(root.path()), ["a.txt", "sub"]);
            assert_eq!(names(&root.path().join("sub")), ["b.txt"]);
        }
    }

    #[test]
    fn target_turned_directory_moves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a.txt"), root.path().join("b.txt"));
        fs::write(&a, "old a").unwrap();
        let mut s = Staging::new();
        s.put(&a, b"new").unwrap();
        s.put(&b, b"new").unwrap();
        fs::create_dir(&b).unwrap();
        let err = s.commit().unwrap_err();
        assert!(chain(&err).contains("it is a directory"), "{}", chain(&err));
        assert_eq!(fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(names(root.path()), ["a.txt", "b.txt"]);
    }

    #[test]
    fn replaced_folder_loses_stale_files_only_on_success() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("csv");
        fs::create_dir(&dir).unwrap();
        for f in ["old.csv", "keep.csv", "notes.txt", ".hidden.csv"] {
            fs::write(dir.join(f), "before").unwrap();
        }
        let files = [Rendered {
            name: dir.join("keep.csv"),
            bytes: b"after".to_vec(),
        }];
        let mut s = Staging::new();
        s.put_all(&dir, &files).unwrap();
        s.replace_all(&dir, "csv");
        s.fail_rename = Some(2); // after keep.csv is in, before old.csv goes
        s.commit().unwrap_err();
        assert_eq!(
            names(&dir),
            [".hidden.csv", "keep.csv", "notes.txt", "old.csv"]
        );
        assert_eq!(fs::read_to_string(dir.join("keep.csv")).unwrap(), "before");
        let mut s = Staging::new();
        s.put_all(&dir, &files).unwrap();
        s.replace_all(&dir, "csv");
        s.commit().unwrap();
        assert_eq!(names(&dir), [".hidden.csv", "keep.csv", "notes.txt"]);
        assert_eq!(fs::read_to_string(dir.join("keep.csv")).unwrap(), "after");
    }

    #[test]
    fn two_outputs_on_one_path_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let p = root.path().join("x.md");
        let mut s = Staging::new();
        s.put(&p, b"1").unwrap();
        s.put(&root.path().join("./x.md"), b"2").unwrap();
        assert!(s.commit().is_err());
        assert!(names(root.path()).is_empty());
    }
}
