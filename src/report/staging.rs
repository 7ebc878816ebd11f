//! All-or-nothing output: every file of a run is written to a temporary
//! path beside its target and renamed into place only when all of them were
//! written. Dropping a [`Staging`] without [`Staging::commit`] removes the
//! temporary files and the directories it created, so a failed run leaves
//! nothing behind.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Rendered, WriteError};

type Result<T> = std::result::Result<T, WriteError>;

/// Output files being written.
#[derive(Debug, Default)]
pub struct Staging {
    staged: Vec<(PathBuf, PathBuf)>,
    created_dirs: Vec<PathBuf>,
    committed: bool,
}

impl Staging {
    /// Nothing staged yet.
    pub fn new() -> Staging {
        Staging::default()
    }

    /// A temporary path beside `target` to write instead of it; renamed onto
    /// `target` by [`Staging::commit`].
    pub fn stage(&mut self, target: &Path) -> PathBuf {
        // Process id plus a counter: concurrent writers never share a name.
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
        self.staged.push((tmp.clone(), target.to_path_buf()));
        tmp
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
        for p in missing.into_iter().rev() {
            fs::create_dir(&p).map_err(WriteError::io(format!(
                "cannot create directory {}",
                p.display()
            )))?;
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
        fs::write(self.stage(path), bytes).map_err(WriteError::io(what()))
    }

    /// Stages `files` (targets inside `dir`), creating `dir` first.
    pub fn put_all(&mut self, dir: &Path, files: &[Rendered]) -> Result<()> {
        self.create_dir_all(dir)?;
        for f in files {
            let tmp = self.stage(&f.name);
            let mut file = fs::File::create(&tmp).map_err(WriteError::io(format!(
                "cannot create {}",
                f.name.display()
            )))?;
            file.write_all(&f.bytes)
                .and_then(|()| file.flush())
                .map_err(WriteError::io(format!("cannot write {}", f.name.display())))?;
        }
        Ok(())
    }

    /// Renames every staged file onto its target. A target that is a
    /// directory fails the commit before any file is moved.
    pub fn commit(mut self) -> Result<()> {
        if let Some((_, t)) = self.staged.iter().find(|(_, t)| t.is_dir()) {
            return Err(WriteError::io(format!("cannot write {}", t.display()))(
                std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a directory"),
            ));
        }
        let staged = std::mem::take(&mut self.staged);
        for (i, (tmp, target)) in staged.iter().enumerate() {
            if let Err(e) = fs::rename(tmp, target) {
                // Put the rest back for cleanup by Drop.
                self.staged = staged[i..].to_vec();
                return Err(WriteError::io(format!(
                    "cannot move {} to {}",
                    tmp.display(),
                    target.display()
                ))(e));
            }
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        // Best effort: the error being reported matters more than cleanup.
        for (tmp, _) in &self.staged {
            let _ = fs::remove_file(tmp);
        }
        for d in self.created_dirs.iter().rev() {
            let _ = fs::remove_dir(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_renames_and_drop_cleans_up() {
        let root = std::env::temp_dir().join(format!("tl-staging-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        let target = root.join("a/b/out.txt");
        {
            let mut s = Staging::new();
            s.create_dir_all(target.parent().unwrap()).unwrap();
            let tmp = s.stage(&target);
            fs::write(&tmp, "x").unwrap();
            // Dropped without commit: temp file and both new directories go.
        }
        assert!(!root.join("a").exists());
        let mut s = Staging::new();
        s.create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(s.stage(&target), "y").unwrap();
        s.commit().unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "y");
        assert_eq!(fs::read_dir(target.parent().unwrap()).unwrap().count(), 1);
        fs::remove_dir_all(&root).unwrap();
    }
}
