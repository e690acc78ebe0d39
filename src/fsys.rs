//! Filesystem access for probes: every logical path is resolved under `--root`
//! (symlinks included, so an absolute link target cannot escape the root), reads
//! are bounded, and only regular files are read (a FIFO would block forever).
//! Also the one writer: `--output` reports, replaced atomically.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Default cap on one file read: every file a probe reads is far smaller.
pub const READ_LIMIT: u64 = 1024 * 1024;
const MAX_SYMLINK_HOPS: u32 = 40;

/// Reads a stream the user named (a report file, a pipe, stdin) up to `limit` bytes:
/// `Ok(None)` when there is more. `size_hint` (a regular file's length) saves regrowing.
pub fn read_stream_limited(
    r: impl Read,
    limit: u64,
    size_hint: u64,
) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::with_capacity(size_hint.min(limit) as usize + 1);
    r.take(limit + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Why a report could not be written: the file that failed (a link's target once the
/// link is followed) and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    pub message: String,
}

impl WriteError {
    fn new(path: &Path, message: impl Into<String>) -> Self {
        WriteError {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// Writes `text` to `path` with `{host}` replaced by `host` (the node's name, safe as a
/// file name), creating the directory, atomically: a shared filesystem never shows a half
/// report to `gpudoctor fleet`. Returns the path written.
pub fn write_report(path: &Path, host: &str, text: &str) -> Result<PathBuf, WriteError> {
    let expanded = PathBuf::from(path.to_string_lossy().replace("{host}", host));
    write_atomically(&expanded, host, text, 0)?;
    Ok(expanded)
}

/// Links followed before giving up (a loop of links never ends).
const WRITE_LINK_HOPS: u32 = 16;

fn write_atomically(path: &Path, host: &str, text: &str, hops: u32) -> Result<(), WriteError> {
    use std::io::Write as _;
    let fail = |what: &str, e: io::Error| WriteError::new(path, format!("{what}: {e}"));
    // A link is written through, as the shell's `>` would: its target is replaced (and
    // created when the link dangles), never the link. A device, FIFO or socket
    // (/dev/null, /dev/stdout) is written to, never renamed over.
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            if hops >= WRITE_LINK_HOPS {
                return Err(WriteError::new(path, "too many levels of symbolic links"));
            }
            let target = fs::read_link(path).map_err(|e| fail("reading the link", e))?;
            let target = match path.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            return write_atomically(&target, host, text, hops + 1);
        } else if meta.is_dir() {
            return Err(WriteError::new(
                path,
                format!(
                    "a directory; name the file, e.g. {}/{{host}}.json",
                    path.display()
                ),
            ));
        } else if !meta.is_file() {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| fail("opening", e))?;
            f.write_all(text.as_bytes())
                .map_err(|e| fail("writing", e))?;
            return Ok(());
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|e| fail("creating its directory", e))?;
    }
    let name = path
        .file_name()
        .ok_or_else(|| WriteError::new(path, "not a file name"))?;
    // Host and pid: containers on a shared filesystem can share pids.
    let tmp = path.with_file_name(format!(
        ".{}.tmp.{host}.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    // On the disk before the rename: after a crash the name holds the old report or the
    // whole new one. A failed write leaves no temp file behind.
    let written = fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .map_err(|e| fail("writing", e))
        .and_then(|()| fs::rename(&tmp, path).map_err(|e| fail("renaming into place", e)));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct FsError {
    /// The logical path (as the inspected system names it).
    pub path: String,
    pub kind: FsErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsErrorKind {
    NotFound,
    PermissionDenied,
    SymlinkLoop,
    NotRegularFile,
    Other,
}

impl FsError {
    fn new(path: &Path, kind: FsErrorKind, message: impl Into<String>) -> Self {
        FsError {
            path: path.display().to_string(),
            kind,
            message: message.into(),
        }
    }

    fn from_io(path: &Path, err: &io::Error) -> Self {
        let kind = match err.kind() {
            io::ErrorKind::NotFound => FsErrorKind::NotFound,
            io::ErrorKind::PermissionDenied => FsErrorKind::PermissionDenied,
            _ if err.raw_os_error() == Some(libc::ELOOP) => FsErrorKind::SymlinkLoop,
            _ => FsErrorKind::Other,
        };
        let message = match kind {
            FsErrorKind::NotFound => "not found".to_string(),
            FsErrorKind::PermissionDenied => "permission denied".to_string(),
            FsErrorKind::SymlinkLoop => "too many levels of symbolic links".to_string(),
            _ => err.to_string(),
        };
        FsError::new(path, kind, message)
    }
}

/// Text read from a file, with a note when the read was cut at the limit.
#[derive(Debug, Clone)]
pub struct TextFile {
    pub text: String,
    pub truncated: bool,
    /// The content was not valid UTF-8 or held NUL bytes (binary garbage).
    pub binary: bool,
}

type Listings = Arc<Mutex<HashMap<PathBuf, Vec<OsString>>>>;

#[derive(Debug, Clone)]
pub struct HostFs {
    root: Option<PathBuf>,
    /// Directory listings already read: several probes list the same library and
    /// toolkit directories, and each is read from disk once per run.
    listings: Listings,
}

impl HostFs {
    pub fn new(root: Option<PathBuf>) -> Self {
        HostFs {
            root,
            listings: Listings::default(),
        }
    }

    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Maps a logical absolute path to a real path, following symlinks inside the root.
    pub fn resolve(&self, logical: &Path) -> Result<PathBuf, FsError> {
        match &self.root {
            None => Ok(logical.to_path_buf()),
            Some(root) => resolve_under(root, logical, true),
        }
    }

    /// Like `resolve`, but a symlink in the last component is left as is.
    pub fn resolve_nofollow(&self, logical: &Path) -> Result<PathBuf, FsError> {
        match &self.root {
            None => Ok(logical.to_path_buf()),
            Some(root) => resolve_under(root, logical, false),
        }
    }

    pub fn metadata(&self, logical: &Path) -> Result<Metadata, FsError> {
        let real = self.resolve(logical)?;
        fs::metadata(&real).map_err(|e| FsError::from_io(logical, &e))
    }

    pub fn exists(&self, logical: &Path) -> bool {
        self.metadata(logical).is_ok()
    }

    pub fn read_link(&self, logical: &Path) -> Result<PathBuf, FsError> {
        let real = self.resolve_nofollow(logical)?;
        fs::read_link(&real).map_err(|e| FsError::from_io(logical, &e))
    }

    pub fn symlink_metadata(&self, logical: &Path) -> Result<Metadata, FsError> {
        let real = self.resolve_nofollow(logical)?;
        fs::symlink_metadata(&real).map_err(|e| FsError::from_io(logical, &e))
    }

    /// The logical path with every symlink resolved (inside the root), like realpath(3).
    pub fn canonical(&self, logical: &Path) -> Result<PathBuf, FsError> {
        match &self.root {
            None => fs::canonicalize(logical).map_err(|e| FsError::from_io(logical, &e)),
            Some(root) => {
                let real = resolve_under(root, logical, true)?;
                fs::symlink_metadata(&real).map_err(|e| FsError::from_io(logical, &e))?;
                let rel = real.strip_prefix(root).unwrap_or(&real);
                Ok(Path::new("/").join(rel))
            }
        }
    }

    /// A regular file that is executable by someone (what a PATH search accepts).
    pub fn is_executable_file(&self, logical: &Path) -> bool {
        use std::os::unix::fs::PermissionsExt;
        self.metadata(logical)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }

    /// Opens a regular file for reading (whole, or by range for formats like ELF).
    pub fn open_regular(&self, logical: &Path) -> Result<fs::File, FsError> {
        let real = self.resolve(logical)?;
        let meta = fs::metadata(&real).map_err(|e| FsError::from_io(logical, &e))?;
        if !meta.is_file() {
            return Err(FsError::new(
                logical,
                FsErrorKind::NotRegularFile,
                "not a regular file",
            ));
        }
        // O_NONBLOCK: the file could be swapped for a FIFO between stat and open.
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&real)
            .map_err(|e| FsError::from_io(logical, &e))
    }

    /// Entry names of a directory, sorted (non-UTF-8 names kept as they are).
    pub fn read_dir(&self, logical: &Path) -> Result<Vec<OsString>, FsError> {
        let real = self.resolve(logical)?;
        if let Some(names) = self
            .listings
            .lock()
            .ok()
            .and_then(|l| l.get(&real).cloned())
        {
            return Ok(names);
        }
        let entries = fs::read_dir(&real).map_err(|e| FsError::from_io(logical, &e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| FsError::from_io(logical, &e))?;
            names.push(entry.file_name());
        }
        names.sort();
        if let Ok(mut l) = self.listings.lock() {
            l.insert(real, names.clone());
        }
        Ok(names)
    }

    pub fn read_text(&self, logical: &Path) -> Result<TextFile, FsError> {
        self.read_text_limited(logical, READ_LIMIT)
    }

    pub fn read_text_limited(&self, logical: &Path, limit: u64) -> Result<TextFile, FsError> {
        let bytes = self.read_bytes(logical, limit)?;
        let truncated = bytes.len() as u64 > limit;
        let bytes = &bytes[..bytes.len().min(limit as usize)];
        let (text, binary) = match std::str::from_utf8(bytes) {
            Ok(s) => (s.to_string(), s.contains('\0')),
            Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
        };
        Ok(TextFile {
            text,
            truncated,
            binary,
        })
    }

    /// Reads at most `limit + 1` bytes (the extra byte tells a caller the file was cut).
    pub fn read_bytes(&self, logical: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
        let file = self.open_regular(logical)?;
        let mut buf = Vec::new();
        file.take(limit + 1)
            .read_to_end(&mut buf)
            .map_err(|e| FsError::from_io(logical, &e))?;
        Ok(buf)
    }
}

/// Resolves `logical` inside `root` the way the kernel would inside a chroot.
fn resolve_under(root: &Path, logical: &Path, follow_last: bool) -> Result<PathBuf, FsError> {
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, logical);
    let mut resolved: Vec<OsString> = Vec::new();
    let mut hops = 0;
    while let Some(comp) = pending.pop() {
        if comp == ".." {
            resolved.pop();
            continue;
        }
        let mut candidate = root.to_path_buf();
        candidate.extend(&resolved);
        candidate.push(&comp);
        let is_last = pending.is_empty();
        match fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() && (follow_last || !is_last) => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(FsError::new(
                        logical,
                        FsErrorKind::SymlinkLoop,
                        "too many levels of symbolic links",
                    ));
                }
                let target =
                    fs::read_link(&candidate).map_err(|e| FsError::from_io(logical, &e))?;
                if target.is_absolute() {
                    resolved.clear();
                }
                push_components(&mut pending, &target);
            }
            Ok(_) => resolved.push(comp),
            Err(e) if e.kind() == io::ErrorKind::NotFound && is_last => resolved.push(comp),
            Err(e) => return Err(FsError::from_io(logical, &e)),
        }
    }
    let mut real = root.to_path_buf();
    real.extend(&resolved);
    Ok(real)
}

/// Pushes the components of `path` onto a stack so that the first component pops first.
fn push_components(stack: &mut Vec<OsString>, path: &Path) {
    let comps: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    stack.extend(comps.into_iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, FileTypeExt};

    #[test]
    fn report_is_written_whole_with_host_and_directory() {
        let dir = tempfile::tempdir().unwrap();
        let template = dir.path().join("out/{host}.json");
        let written = write_report(&template, "node-1", "{}\n").unwrap();
        assert_eq!(written, dir.path().join("out/node-1.json"));
        assert_eq!(fs::read_to_string(&written).unwrap(), "{}\n");
        // No temp file is left next to it.
        let names: Vec<_> = fs::read_dir(dir.path().join("out"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["node-1.json"]);
    }

    #[test]
    fn report_replaces_an_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        fs::write(&path, "old report, longer than the new one").unwrap();
        write_report(&path, "h", "new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn report_is_written_through_links_dangling_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("latest.json");
        symlink("reports/r.json", &link).unwrap();
        write_report(&link, "h", "one").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            fs::read_to_string(dir.path().join("reports/r.json")).unwrap(),
            "one"
        );
        write_report(&link, "h", "two").unwrap();
        assert_eq!(fs::read_to_string(&link).unwrap(), "two");
    }

    #[test]
    fn report_to_a_device_is_written_not_renamed_over() {
        write_report(Path::new("/dev/null"), "h", "x").unwrap();
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn report_refuses_a_directory_and_a_link_loop() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_report(dir.path(), "h", "x").unwrap_err();
        assert_eq!(e.path, dir.path());
        assert!(e.message.starts_with("a directory; name the file"), "{e}");
        let a = dir.path().join("a");
        symlink("b", &a).unwrap();
        symlink("a", dir.path().join("b")).unwrap();
        let e = write_report(&a, "h", "x").unwrap_err();
        assert_eq!(e.message, "too many levels of symbolic links");
    }

    #[test]
    fn report_write_failure_names_the_file_and_the_step() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        fs::write(&blocker, "").unwrap();
        let e = write_report(&blocker.join("r.json"), "h", "x").unwrap_err();
        assert_eq!(e.path, blocker.join("r.json"));
        assert!(e.message.starts_with("creating its directory: "), "{e}");
    }

    #[test]
    fn absolute_symlink_stays_inside_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("usr/local/cuda-12.4")).unwrap();
        fs::write(
            root.join("usr/local/cuda-12.4/version.txt"),
            "CUDA Version 12.4.1",
        )
        .unwrap();
        symlink("/usr/local/cuda-12.4", root.join("usr/local/cuda")).unwrap();
        fs::create_dir_all(root.join("etc")).unwrap();
        let fs = HostFs::new(Some(root.to_path_buf()));
        let text = fs
            .read_text(Path::new("/usr/local/cuda/version.txt"))
            .unwrap();
        assert_eq!(text.text, "CUDA Version 12.4.1");
        let real = fs
            .resolve(Path::new("/usr/local/cuda/../../../../etc/passwd"))
            .unwrap();
        assert_eq!(real, root.join("etc/passwd"));
    }

    #[test]
    fn symlink_loop_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        symlink("/b", dir.path().join("a")).unwrap();
        symlink("/a", dir.path().join("b")).unwrap();
        let fs = HostFs::new(Some(dir.path().to_path_buf()));
        let err = fs.read_text(Path::new("/a")).unwrap_err();
        assert_eq!(err.kind, FsErrorKind::SymlinkLoop);
    }

    #[test]
    fn reads_are_bounded_and_fifos_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("big"), vec![b'x'; 5000]).unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let fs = HostFs::new(Some(dir.path().to_path_buf()));
        let t = fs.read_text_limited(Path::new("/big"), 100).unwrap();
        assert!(t.truncated);
        assert_eq!(t.text.len(), 100);
        let err = fs.read_text(Path::new("/fifo")).unwrap_err();
        assert_eq!(err.kind, FsErrorKind::NotRegularFile);
    }

    #[test]
    fn a_directory_is_listed_from_disk_once_per_run() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a"), "").unwrap();
        let fs_ = HostFs::new(Some(dir.path().to_path_buf()));
        assert_eq!(fs_.read_dir(Path::new("/")).unwrap(), ["a"]);
        fs::write(dir.path().join("b"), "").unwrap();
        // The second probe that asks gets the first listing, and clones share it.
        assert_eq!(fs_.clone().read_dir(Path::new("/")).unwrap(), ["a"]);
        assert_eq!(
            HostFs::new(Some(dir.path().to_path_buf()))
                .read_dir(Path::new("/"))
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn binary_content_is_flagged() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("bin"), [0xff, 0xfe, 0, 1, 2]).unwrap();
        let fs = HostFs::new(Some(dir.path().to_path_buf()));
        assert!(fs.read_text(Path::new("/bin")).unwrap().binary);
    }
}
