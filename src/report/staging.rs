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
//!
//! Only regular files are ever renamed over: a character device or FIFO
//! named as an output is written through at commit time (`target`), a
//! link to a file, a socket or a block device is refused. A folder whose
//! files a run replaces as a unit ([`Staging::replace_all`]) keeps a
//! manifest of the files tracelens wrote there (`manifest`), so a re-run
//! removes only those; commits into one folder are serialised by a lock
//! on the folder (`lock`).

mod lock;
mod manifest;
mod target;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{Rendered, WriteError};
use target::Target;

pub use manifest::MANIFEST_NAME;
pub use target::{check_output, writes_through};

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
    /// The target is a device or FIFO: its bytes are written into it
    /// after the renames, never renamed over it.
    through: bool,
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
    /// Test hook: how long the commit sleeps between working out what to
    /// move and moving it ([`Staging::pause_in_commit`]).
    pause: Option<std::time::Duration>,
    /// Test hook: the commit's rename number N (0-based) fails.
    #[cfg(test)]
    fail_rename: Option<usize>,
    /// Test hook: how long the commit waits for a folder's lock.
    #[cfg(test)]
    lock_wait: Option<std::time::Duration>,
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
        let mut made = fs::create_dir(&dir);
        if made
            .as_ref()
            .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
        {
            // A concurrent run that created the folder failed and removed
            // it again: it is made anew, now as this run's.
            self.create_dirs(parent, live)?;
            made = fs::create_dir(&dir);
        }
        made.map_err(WriteError::io(format!(
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
    ///
    /// A target that is a character device or FIFO (or a link to one) is
    /// written through instead: its bytes wait in a staging folder in the
    /// system's temporary folder (a device's folder, `/dev`, is seldom
    /// writable) and are written into it after the renames. A link to
    /// anything else, a socket or a block device is refused.
    pub fn stage(&mut self, target: &Path) -> Result<PathBuf> {
        let what = || format!("cannot write {}", target.display());
        let refuse = |why: String| WriteError::io(what())(io::Error::other(why));
        let through = match target::classify(target) {
            Target::Replace => false,
            Target::WriteThrough => true,
            Target::Refuse(why) => return Err(refuse(why)),
        };
        if target.file_name().is_some_and(|n| n == MANIFEST_NAME) {
            return Err(refuse("the name of tracelens's folder manifest".into()));
        }
        let parent = match through {
            true => std::env::temp_dir(),
            false => parent_of(target).to_path_buf(),
        };
        let mut live = live();
        let dir = self
            .staging_dir(&parent, &mut live)
            .map_err(|e| e.at(what()))?;
        let tmp = dir.join(format!("new-{}", self.staged.len()));
        self.staged.push(Staged {
            tmp: tmp.clone(),
            target: target.to_path_buf(),
            through,
        });
        Ok(tmp)
    }

    /// Creates `dir` and its missing parents, remembering which were new so
    /// that an aborted run removes them again. A folder another process
    /// creates meanwhile is fine (and not this run's to remove).
    pub fn create_dir_all(&mut self, dir: &Path) -> Result<()> {
        let mut live = live();
        self.create_dirs(dir, &mut live)
    }

    /// [`Staging::create_dir_all`] with the lock of `live` held.
    fn create_dirs(&mut self, dir: &Path, live: &mut Vec<Live>) -> Result<()> {
        let mut missing = Vec::new();
        let mut d = Some(dir);
        while let Some(p) = d {
            if p.as_os_str().is_empty() || p.exists() {
                break;
            }
            missing.push(p.to_path_buf());
            d = p.parent();
        }
        for p in missing.into_iter().rev() {
            match fs::create_dir(&p) {
                Ok(()) => {
                    live.push(Live::Created(p.clone()));
                    self.created_dirs.push(p);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && p.is_dir() => {}
                Err(e) => {
                    let what = format!("cannot create directory {}", p.display());
                    return Err(WriteError::io(what)(e));
                }
            }
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

    /// Makes this run own the `*.ext` files that tracelens wrote directly
    /// in `dir`: the commit removes those of them this run does not write
    /// (with the same rollback as the renames), so a re-run replaces a
    /// folder's sheets as a unit. Which files tracelens wrote is what the
    /// folder's manifest ([`MANIFEST_NAME`]) lists; the commit rewrites it
    /// with this run's files. Files it does not list (the user's), hidden
    /// files, folders and links are left alone.
    pub fn replace_all(&mut self, dir: &Path, ext: &str) {
        self.replaced.push((dir.to_path_buf(), ext.to_string()));
    }

    /// Moves every staged file onto its target, all or nothing.
    ///
    /// Devices and FIFOs written through are opened first (a FIFO waits
    /// for its reader). Then, holding the lock of every target folder,
    /// every target is checked (its folder exists, it is absent or a
    /// regular file, no two outputs share a path), the manifests are read
    /// and rewritten, and each existing target is moved aside into the
    /// staging folder and the new file renamed in. On any failure the new
    /// files are removed and every old file is put back; on success the
    /// old files are deleted and the bytes of devices and FIFOs written.
    pub fn commit(mut self) -> Result<()> {
        let result = self.commit_all();
        let mut live = live();
        self.discard(&mut live);
        result
    }

    /// [`Staging::commit`] but for the final clean-up.
    fn commit_all(&mut self) -> Result<()> {
        // Opened outside every lock: a FIFO's open may wait for its reader,
        // and a signal must still end the run meanwhile.
        let streams = self.open_streams()?;
        {
            let _locks = lock::lock_folders(self.folders(), self.lock_wait())?;
            let mut live = live();
            self.commit_locked(&mut live)?;
        }
        self.write_streams(streams)
    }

    /// How long a commit waits for another run's commit into its folders.
    fn lock_wait(&self) -> std::time::Duration {
        #[cfg(test)]
        if let Some(w) = self.lock_wait {
            return w;
        }
        lock::WAIT
    }

    /// Every folder this commit changes: the folders of the files renamed
    /// into place and the folders replaced as a unit.
    fn folders(&self) -> Vec<PathBuf> {
        let parents = self.staged.iter().filter(|s| !s.through);
        parents
            .map(|s| parent_of(&s.target).to_path_buf())
            .chain(self.replaced.iter().map(|(d, _)| d.clone()))
            .collect()
    }

    /// Opens every device or FIFO written through, before anything moves:
    /// one that cannot be opened fails the commit with nothing changed.
    fn open_streams(&self) -> Result<Vec<(fs::File, usize)>> {
        let mut open = Vec::new();
        for (i, s) in self.staged.iter().enumerate().filter(|(_, s)| s.through) {
            let what = format!(
                "cannot write {} (no output was changed)",
                s.target.display()
            );
            open.push((
                target::open_write_through(&s.target).map_err(WriteError::io(what))?,
                i,
            ));
        }
        Ok(open)
    }

    /// Writes the staged bytes of each device or FIFO into it, once the
    /// other outputs are in place (bytes written to a device cannot be
    /// taken back, so they come last).
    fn write_streams(&self, streams: Vec<(fs::File, usize)>) -> Result<()> {
        let others = self.staged.iter().any(|s| !s.through);
        for (mut out, i) in streams {
            let s = &self.staged[i];
            let note = if others {
                " (the other outputs were written)"
            } else {
                ""
            };
            let what = format!("cannot write {}{note}", s.target.display());
            let mut from = fs::File::open(&s.tmp).map_err(WriteError::io(what.clone()))?;
            io::copy(&mut from, &mut out)
                .and_then(|_| out.flush())
                .map_err(WriteError::io(what))?;
        }
        Ok(())
    }

    /// A test hook: the commit sleeps for `pause` after reading its
    /// folders (manifests, stale files) and before the first move, holding
    /// their locks, so that a test can make concurrent commits overlap.
    #[doc(hidden)]
    pub fn pause_in_commit(&mut self, pause: std::time::Duration) {
        self.pause = Some(pause);
    }

    fn commit_locked(&mut self, live: &mut Vec<Live>) -> Result<()> {
        let keys = self.check_targets()?;
        let stale = self.plan_folders(&keys, live)?;
        if let Some(pause) = self.pause {
            std::thread::sleep(pause);
        }
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
            if !s.through && !dir.is_dir() {
                return Err(WriteError::io(what())(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("its folder {} is gone", dir.display()),
                )));
            }
            if !s.through {
                // The final guard: only a regular file is renamed over.
                target::check_replaceable(&s.target).map_err(WriteError::io(what()))?;
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

    /// Reads the manifest of each folder replaced as a unit and stages
    /// its new one; returns the files that go: those an earlier run wrote
    /// there (as its manifest says) with an extension this run owns in
    /// that folder, which this run does not write.
    fn plan_folders(&mut self, keys: &[PathBuf], live: &mut Vec<Live>) -> Result<Vec<PathBuf>> {
        let mut folders: BTreeMap<PathBuf, Vec<&str>> = BTreeMap::new();
        for (dir, ext) in &self.replaced {
            // A folder that is not there holds nothing to replace.
            if let Ok(real) = fs::canonicalize(dir) {
                folders.entry(real).or_default().push(ext);
            }
        }
        let mut stale = Vec::new();
        let mut manifests = Vec::new();
        for (dir, exts) in &folders {
            let written: BTreeSet<OsString> = keys
                .iter()
                .zip(&self.staged)
                .filter(|(k, s)| !s.through && k.parent() == Some(dir.as_path()))
                .filter_map(|(k, _)| k.file_name().map(OsString::from))
                .collect();
            let plan = manifest::plan(dir, exts, written).map_err(WriteError::io(format!(
                "cannot read {}",
                dir.join(MANIFEST_NAME).display()
            )))?;
            stale.extend(plan.stale);
            manifests.push((dir.clone(), plan.text));
        }
        for (dir, text) in manifests {
            self.stage_manifest(&dir, &text, live)?;
        }
        Ok(stale)
    }

    /// Stages `text` as the manifest of `dir`, renamed in with the outputs.
    fn stage_manifest(&mut self, dir: &Path, text: &[u8], live: &mut Vec<Live>) -> Result<()> {
        let target = dir.join(MANIFEST_NAME);
        let what = || format!("cannot write {}", target.display());
        target::check_replaceable(&target).map_err(WriteError::io(what()))?;
        let tmp = self.staging_dir(dir, live)?.join("manifest");
        fs::write(&tmp, text).map_err(WriteError::io(what()))?;
        self.staged.push(Staged {
            tmp,
            target,
            through: false,
        });
        Ok(())
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
        for (i, s) in staged.iter().enumerate().filter(|(_, s)| !s.through) {
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

    /// Commits `names` (with `bytes`) into `dir`, replacing its `*.csv`.
    fn commit_csvs(dir: &Path, names: &[&str], bytes: &[u8], fail: Option<usize>) -> Result<()> {
        let files: Vec<Rendered> = names
            .iter()
            .map(|n| Rendered {
                name: dir.join(n),
                bytes: bytes.to_vec(),
            })
            .collect();
        let mut s = Staging::new();
        s.put_all(dir, &files).unwrap();
        s.replace_all(dir, "csv");
        s.fail_rename = fail;
        s.commit()
    }

    #[test]
    fn replaced_folder_loses_stale_files_only_on_success() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("csv");
        commit_csvs(&dir, &["old.csv", "keep.csv"], b"before", None).unwrap();
        // The user's files: never listed, never removed.
        for f in ["mine.csv", "notes.txt", ".hidden.csv"] {
            fs::write(dir.join(f), "user").unwrap();
        }
        let before = [
            ".hidden.csv",
            MANIFEST_NAME,
            "keep.csv",
            "mine.csv",
            "notes.txt",
            "old.csv",
        ];
        let manifest = fs::read(dir.join(MANIFEST_NAME)).unwrap();
        // Renames: keep.csv aside and in, the manifest aside and in,
        // old.csv aside.
        for fail in 0..5 {
            commit_csvs(&dir, &["keep.csv"], b"after", Some(fail)).unwrap_err();
            assert_eq!(names(&dir), before, "fail at {fail}");
            assert_eq!(fs::read_to_string(dir.join("keep.csv")).unwrap(), "before");
            assert_eq!(fs::read(dir.join(MANIFEST_NAME)).unwrap(), manifest);
        }
        commit_csvs(&dir, &["keep.csv"], b"after", None).unwrap();
        let after = [
            ".hidden.csv",
            MANIFEST_NAME,
            "keep.csv",
            "mine.csv",
            "notes.txt",
        ];
        assert_eq!(names(&dir), after);
        assert_eq!(fs::read_to_string(dir.join("keep.csv")).unwrap(), "after");
        let listed = manifest::read(&dir).unwrap();
        assert_eq!(listed, BTreeSet::from([OsString::from("keep.csv")]));
    }

    #[test]
    fn a_folder_without_a_manifest_loses_only_files_written_by_name() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("csv");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("a.csv"), "user").unwrap();
        fs::write(dir.join("b.csv"), "user").unwrap();
        commit_csvs(&dir, &["a.csv"], b"new", None).unwrap();
        assert_eq!(names(&dir), [MANIFEST_NAME, "a.csv", "b.csv"]);
        assert_eq!(fs::read_to_string(dir.join("a.csv")).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_manipulated_manifest_removes_nothing_outside_the_folder() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("csv");
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::create_dir(dir.join("dir.csv")).unwrap();
        let outside = root.path().join("x.csv");
        for f in [&outside, &dir.join("sub/a.csv"), &dir.join("notes.txt")] {
            fs::write(f, "keep").unwrap();
        }
        fs::write(dir.join("gone.csv"), "ours").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("link.csv")).unwrap();
        let abs = manifest::escape(outside.to_string_lossy().as_bytes());
        let text = format!(
            "{}../x.csv\n{abs}\n%2E%2E%2Fx.csv\nsub/a.csv\nsub\nlink.csv\ndir.csv\nnotes.txt\ngone.csv\n",
            String::from_utf8(manifest::encode(&BTreeSet::new())).unwrap()
        );
        fs::write(dir.join(MANIFEST_NAME), text).unwrap();
        commit_csvs(&dir, &["new.csv"], b"new", None).unwrap();
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
        assert_eq!(
            names(&dir),
            [
                MANIFEST_NAME,
                "dir.csv",
                "link.csv",
                "new.csv",
                "notes.txt",
                "sub"
            ]
        );
        assert_eq!(names(&dir.join("sub")), ["a.csv"]);
        // The new manifest keeps the listed file of another kind only.
        let listed = manifest::read(&dir).unwrap();
        let expected = ["new.csv", "notes.txt"].map(OsString::from);
        assert_eq!(listed, BTreeSet::from(expected));
    }

    #[cfg(unix)]
    #[test]
    fn a_commit_waits_for_another_commit_into_its_folder() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("a.txt");
        let other = fs::File::open(root.path()).unwrap();
        other.lock().unwrap();
        let mut s = Staging::new();
        s.put(&out, b"x").unwrap();
        s.lock_wait = Some(std::time::Duration::from_millis(100));
        let err = s.commit().unwrap_err();
        let real = fs::canonicalize(root.path()).unwrap();
        assert!(
            chain(&err).contains(&real.display().to_string()),
            "{}",
            chain(&err)
        );
        assert!(names(root.path()).is_empty());
        // Released within the wait: the commit goes through.
        let mut s = Staging::new();
        s.put(&out, b"y").unwrap();
        let unlock = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(other);
        });
        s.commit().unwrap();
        unlock.join().unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "y");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_through_and_a_link_to_a_file_refused() {
        use std::os::unix::fs::FileTypeExt;
        let root = tempfile::tempdir().unwrap();
        let (a, null) = (root.path().join("a.txt"), root.path().join("null"));
        std::os::unix::fs::symlink("/dev/null", &null).unwrap();
        let mut s = Staging::new();
        s.put(&a, b"a").unwrap();
        s.put(&null, b"discarded").unwrap();
        s.put(Path::new("/dev/null"), b"discarded").unwrap();
        s.commit().unwrap();
        assert!(
            fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        assert!(
            fs::symlink_metadata(&null)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(names(root.path()), ["a.txt", "null"]);
        let link = root.path().join("link.txt");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let err = Staging::new().put(&link, b"x").unwrap_err();
        assert!(chain(&err).contains("symbolic link"), "{}", chain(&err));
        assert_eq!(fs::read_to_string(&a).unwrap(), "a");
        // A link that appears after staging is never renamed over.
        let late = root.path().join("late.txt");
        let mut s = Staging::new();
        s.put(&late, b"new").unwrap();
        std::os::unix::fs::symlink(&a, &late).unwrap();
        assert!(chain(&s.commit().unwrap_err()).contains("symbolic link"));
        assert!(
            fs::symlink_metadata(&late)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&a).unwrap(), "a");
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
