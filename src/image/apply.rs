//! Applying one layer's tar stream to the tree in the private directory, as overlayfs would
//! stack it, without ever writing outside that directory or through a symlink.
//!
//! Every parent component of an entry is resolved inside the root, as if the root were `/`:
//! symlinks are followed (absolute targets from the root, `..` clamped at the root, at most
//! [`MAX_LINKS`] of them); missing directories are created. The final component is never
//! followed: what is there is removed first and the new file is created with
//! `O_CREAT|O_EXCL|O_NOFOLLOW`. The directory is private (mode 0700, made by us), so nothing else
//! changes it between the check and the write.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Symlinks followed while resolving one path, as Linux's `ELOOP` limit.
pub(crate) const MAX_LINKS: u32 = 40;

/// Why an entry could not be applied.
#[derive(Debug)]
pub(crate) enum EntryError {
    /// The entry's path, or a hard link's target, climbs out of the root with `..`.
    Escape(String),
    /// A symlink loop (or more than [`MAX_LINKS`] links) in a parent.
    Loop(String),
    /// The entry's type or shape is not applied; recorded, the layer goes on.
    Skip(String),
    /// Reading the layer or writing the tree failed.
    Io(io::Error),
}

impl From<io::Error> for EntryError {
    fn from(e: io::Error) -> Self {
        EntryError::Io(e)
    }
}

/// A path's components in lexical normal form: leading `/` and `./` dropped, `a/..` folded;
/// `None` when a `..` climbs above the top.
pub(crate) fn normalise(path: &Path) -> Option<Vec<OsString>> {
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::Normal(p) => out.push(p.to_os_string()),
        }
    }
    Some(out)
}

fn rel(parts: &[OsString]) -> PathBuf {
    parts.iter().collect()
}

/// A directory resolved inside the root.
enum Parent {
    /// Its path relative to the root, every symlink resolved.
    Dir(PathBuf),
    /// It does not exist (only when not creating).
    Missing,
    /// A component is something other than a directory.
    NotDir(PathBuf),
}

/// The tree being built and what the current layer did to it.
pub(crate) struct Tree<'a> {
    pub root: &'a Path,
    /// Paths (relative to the root) the current layer wrote or went through: an opaque
    /// whiteout keeps them, and a whiteout of one of them is ignored.
    touched: HashSet<PathBuf>,
}

/// What applying an entry did.
pub(crate) enum Applied {
    /// Written (`bytes` of file data).
    Written { bytes: u64 },
    /// A whiteout (or the root itself): nothing written.
    Nothing,
}

impl<'a> Tree<'a> {
    pub(crate) fn new(root: &'a Path) -> Self {
        Tree {
            root,
            touched: HashSet::new(),
        }
    }

    /// Starts a new layer.
    pub(crate) fn next_layer(&mut self) {
        self.touched.clear();
    }

    /// Resolves the directory `parts` inside the root, creating what is missing when `create`.
    fn resolve_dir(&mut self, parts: &[OsString], create: bool) -> Result<Parent, EntryError> {
        let mut cur: Vec<OsString> = Vec::new();
        let mut queue: std::collections::VecDeque<OsString> = parts.iter().cloned().collect();
        let mut links = 0u32;
        while let Some(c) = queue.pop_front() {
            if c.is_empty() || c == "." {
                continue;
            }
            if c == ".." {
                cur.pop();
                continue;
            }
            cur.push(c);
            let here = rel(&cur);
            let full = self.root.join(&here);
            match fs::symlink_metadata(&full) {
                Ok(m) if m.file_type().is_symlink() => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(EntryError::Loop(format!(
                            "too many levels of symbolic links (more than {MAX_LINKS}) at /{}",
                            here.display()
                        )));
                    }
                    let target = fs::read_link(&full)?;
                    cur.pop();
                    if target.is_absolute() {
                        cur.clear();
                    }
                    for c in target.components().rev() {
                        match c {
                            Component::Normal(p) => queue.push_front(p.to_os_string()),
                            Component::ParentDir => queue.push_front(OsString::from("..")),
                            _ => {}
                        }
                    }
                }
                Ok(m) if m.is_dir() => {
                    self.touched.insert(here);
                }
                Ok(_) => return Ok(Parent::NotDir(here)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if !create {
                        return Ok(Parent::Missing);
                    }
                    make_dir(&full)?;
                    self.touched.insert(here);
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Parent::Dir(rel(&cur)))
    }

    /// Applies one tar entry.
    pub(crate) fn apply<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        budget: u64,
    ) -> Result<Applied, EntryError> {
        let path = entry.path()?.into_owned();
        let Some(mut parts) = normalise(&path) else {
            return Err(EntryError::Escape(
                "its path climbs out of the image root with `..`".into(),
            ));
        };
        let Some(name) = parts.pop() else {
            return Ok(Applied::Nothing); // the root itself
        };
        let kind = entry.header().entry_type();

        // Whiteouts.
        if let Some(hidden) = name.as_bytes().strip_prefix(b".wh.") {
            let opaque = hidden == b".wh..opq";
            if !opaque && (hidden.is_empty() || hidden == b"." || hidden == b"..") {
                return Err(EntryError::Escape(format!(
                    "a whiteout of {:?} is not a name in its directory",
                    OsStr::from_bytes(hidden)
                )));
            }
            let parent = match self.resolve_dir(&parts, opaque)? {
                Parent::Dir(p) => p,
                Parent::Missing | Parent::NotDir(_) => return Ok(Applied::Nothing),
            };
            if opaque {
                self.clear_opaque(&parent)?;
                return Ok(Applied::Nothing);
            }
            let target = parent.join(OsStr::from_bytes(hidden));
            if !self.touched.contains(&target) {
                remove_any(&self.root.join(&target))?;
            }
            return Ok(Applied::Nothing);
        }

        let skip_kind = match kind {
            tar::EntryType::Char => Some("character device"),
            tar::EntryType::Block => Some("block device"),
            tar::EntryType::Fifo => Some("fifo"),
            tar::EntryType::XGlobalHeader => return Ok(Applied::Nothing),
            _ => None,
        };
        if let Some(what) = skip_kind {
            return Err(EntryError::Skip(format!("{what} not created")));
        }

        let parent = match self.resolve_dir(&parts, true)? {
            Parent::Dir(p) => p,
            Parent::Missing => return Err(EntryError::Skip("its parent is absent".into())),
            Parent::NotDir(p) => {
                return Err(EntryError::Skip(format!(
                    "its parent /{} is not a directory",
                    p.display()
                )))
            }
        };
        let here = parent.join(&name);
        let full = self.root.join(&here);
        let existing = match fs::symlink_metadata(&full) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        };

        if kind.is_dir() {
            match existing {
                Some(m) if m.is_dir() => {
                    fs::set_permissions(&full, fs::Permissions::from_mode(0o755))?;
                }
                Some(_) => {
                    remove_any(&full)?;
                    make_dir(&full)?;
                }
                None => make_dir(&full)?,
            }
            self.touched.insert(here);
            return Ok(Applied::Written { bytes: 0 });
        }

        if kind.is_hard_link() {
            let target = entry
                .link_name()?
                .ok_or_else(|| EntryError::Skip("hard link without a target".into()))?
                .into_owned();
            let Some(mut tparts) = normalise(&target) else {
                return Err(EntryError::Escape(format!(
                    "its hard link target {} climbs out of the image root with `..`",
                    target.display()
                )));
            };
            let Some(tname) = tparts.pop() else {
                return Err(EntryError::Skip("hard link to the root directory".into()));
            };
            let tparent = match self.resolve_dir(&tparts, false)? {
                Parent::Dir(p) => p,
                _ => {
                    return Err(EntryError::Skip(format!(
                        "hard link target /{} is absent",
                        rel(&normalise(&target).unwrap_or_default()).display()
                    )))
                }
            };
            let there = tparent.join(&tname);
            match fs::symlink_metadata(self.root.join(&there)) {
                Ok(m) if m.is_dir() => {
                    return Err(EntryError::Skip(format!(
                        "hard link to the directory /{}",
                        there.display()
                    )))
                }
                Ok(_) => {}
                Err(_) => {
                    return Err(EntryError::Skip(format!(
                        "hard link target /{} is absent",
                        there.display()
                    )))
                }
            }
            if there == here {
                return Ok(Applied::Nothing);
            }
            if existing.is_some() {
                remove_any(&full)?;
            }
            fs::hard_link(self.root.join(&there), &full)?;
            self.touched.insert(here);
            return Ok(Applied::Written { bytes: 0 });
        }

        if kind.is_symlink() {
            let target = entry
                .link_name()?
                .ok_or_else(|| EntryError::Skip("symlink without a target".into()))?
                .into_owned();
            if existing.is_some() {
                remove_any(&full)?;
            }
            std::os::unix::fs::symlink(&target, &full)?;
            self.touched.insert(here);
            return Ok(Applied::Written { bytes: 0 });
        }

        if kind.is_file() || kind == tar::EntryType::Continuous {
            let size = entry.size();
            if size > budget {
                return Err(EntryError::Io(io::Error::other(BudgetExceeded(size))));
            }
            if existing.is_some() {
                remove_any(&full)?;
            }
            let mode = entry.header().mode().unwrap_or(0o644) & 0o755;
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
                .open(&full)?;
            let written = io::copy(&mut entry.take(budget.saturating_add(1)), &mut file)?;
            if written > budget {
                return Err(EntryError::Io(io::Error::other(BudgetExceeded(written))));
            }
            if written < size {
                return Err(EntryError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("its data ends after {written} of {size} bytes"),
                )));
            }
            file.flush()?;
            file.set_permissions(fs::Permissions::from_mode(mode))?;
            self.touched.insert(here);
            return Ok(Applied::Written { bytes: written });
        }

        Err(EntryError::Skip(format!(
            "entry type {:?} not applied",
            kind.as_byte() as char
        )))
    }

    /// An opaque whiteout in `dir`: everything lower layers put there goes; what this layer
    /// wrote stays.
    fn clear_opaque(&mut self, dir: &Path) -> io::Result<()> {
        for child in fs::read_dir(self.root.join(dir))? {
            let child = child?;
            let here = dir.join(child.file_name());
            if self.touched.contains(&here) {
                if child.file_type()?.is_dir() {
                    self.clear_opaque(&here)?;
                }
            } else {
                remove_any(&child.path())?;
            }
        }
        Ok(())
    }
}

/// A file larger than what the limits leave (the size in bytes).
#[derive(Debug)]
pub(crate) struct BudgetExceeded(pub u64);

impl std::fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a file of {} bytes exceeds the unpacked-size limit",
            self.0
        )
    }
}

impl std::error::Error for BudgetExceeded {}

/// `mkdir` with mode 0755 whatever the umask.
fn make_dir(path: &Path) -> io::Result<()> {
    fs::DirBuilder::new().mode(0o755).create(path)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
}

/// Removes what is at `path` (a directory with its contents), never following a symlink;
/// nothing there is fine.
fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_folds_and_refuses_climbing_out() {
        let p = |s: &str| normalise(Path::new(s)).map(|v| rel(&v));
        assert_eq!(p("/usr/lib/x"), Some(PathBuf::from("usr/lib/x")));
        assert_eq!(p("./a/./b/../c"), Some(PathBuf::from("a/c")));
        assert_eq!(p("../escape"), None);
        assert_eq!(p("a/../../b"), None);
        assert_eq!(p("./"), Some(PathBuf::new()));
    }

    #[test]
    fn parents_resolve_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("usr/lib")).unwrap();
        std::os::unix::fs::symlink("usr/lib", root.join("lib")).unwrap();
        std::os::unix::fs::symlink("/", root.join("up")).unwrap();
        std::os::unix::fs::symlink("../../../..", root.join("usr/climb")).unwrap();
        std::os::unix::fs::symlink("a", root.join("b")).unwrap();
        std::os::unix::fs::symlink("b", root.join("a")).unwrap();
        let mut tree = Tree::new(root);
        let parts = |s: &str| normalise(Path::new(s)).unwrap();
        let dir_of = |t: &mut Tree, s: &str| match t.resolve_dir(&parts(s), true) {
            Ok(Parent::Dir(p)) => p,
            Ok(_) => panic!("{s}: not a directory"),
            Err(e) => panic!("{s}: {e:?}"),
        };
        assert_eq!(dir_of(&mut tree, "lib"), PathBuf::from("usr/lib"));
        assert_eq!(dir_of(&mut tree, "up/etc"), PathBuf::from("etc"));
        assert_eq!(dir_of(&mut tree, "usr/climb/tmp"), PathBuf::from("tmp"));
        assert!(root.join("etc").is_dir() && root.join("tmp").is_dir());
        assert!(matches!(
            tree.resolve_dir(&parts("a/x"), true),
            Err(EntryError::Loop(_))
        ));
        fs::write(root.join("file"), "x").unwrap();
        assert!(matches!(
            tree.resolve_dir(&parts("file/x"), true),
            Ok(Parent::NotDir(p)) if p == Path::new("file")
        ));
        assert!(matches!(
            tree.resolve_dir(&parts("nope/x"), false),
            Ok(Parent::Missing)
        ));
    }
}
