//! Filesystem access for probes: every logical path is resolved under `--root` by the
//! call that opens it (openat2 RESOLVE_IN_ROOT, or a walk of O_PATH descriptors where
//! that is missing), so neither an absolute link nor a link swapped in mid-run leads
//! out of the root; reads are bounded, and only regular files are read (a FIFO would
//! block forever).
//! Also the one writer: `--output` reports, replaced atomically.

use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::fs::{self, Metadata};
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

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

/// Why a small file could not be read whole (`read_regular_limited`).
#[derive(Debug, thiserror::Error)]
pub enum SmallFileError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not a regular file ({0}); name a file")]
    NotRegular(&'static str),
    #[error("larger than {} KiB", .0 / 1024)]
    TooLarge(u64),
}

/// What a file that is not a regular file is, for a message ("a FIFO").
pub fn kind_name(kind: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_file() {
        "a regular file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Reads a regular file of at most `limit` bytes. The open never waits (a FIFO, a device or a
/// socket named, or linked to, is refused without reading: `/dev/zero` would never end) and a
/// file past the limit is refused before it is read, or when it grows past it while read.
pub fn read_regular_limited(path: &Path, limit: u64) -> Result<Vec<u8>, SmallFileError> {
    // Opening a device may act (a tape rewinds, a watchdog arms): judge the kind first, and
    // again on what was opened, in case the path changed between.
    let kind = fs::metadata(path)?.file_type();
    if !kind.is_file() {
        return Err(SmallFileError::NotRegular(kind_name(kind)));
    }
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(SmallFileError::NotRegular(kind_name(kind)));
    }
    if meta.len() > limit {
        return Err(SmallFileError::TooLarge(limit));
    }
    read_stream_limited(file, limit, meta.len())?.ok_or(SmallFileError::TooLarge(limit))
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
/// report to `gpudoctor fleet`. A FIFO, device or socket is written in place within
/// `timeout`. Returns the path written.
pub fn write_report(
    path: &Path,
    host: &str,
    text: &str,
    timeout: Duration,
) -> Result<PathBuf, WriteError> {
    let expanded = PathBuf::from(path.to_string_lossy().replace("{host}", host));
    let report = Report {
        host,
        text: text.as_bytes(),
        deadline: Instant::now() + timeout,
        timeout,
        private: false,
    };
    write_atomically(&expanded, &report, 0)?;
    Ok(expanded)
}

/// Writes `bytes` to `path` as `write_report` does (atomically, links followed only where
/// the kernel's protected_symlinks rule would, a FIFO written in place within `timeout`),
/// readable by the owner only (mode 0600, also when it replaces a file): a support bundle.
pub fn write_private(path: &Path, bytes: &[u8], timeout: Duration) -> Result<PathBuf, WriteError> {
    let report = Report {
        host: "bundle",
        text: bytes,
        deadline: Instant::now() + timeout,
        timeout,
        private: true,
    };
    write_atomically(path, &report, 0)?;
    Ok(path.to_path_buf())
}

struct Report<'a> {
    host: &'a str,
    text: &'a [u8],
    deadline: Instant,
    timeout: Duration,
    /// Mode 0600 whatever the file had.
    private: bool,
}

/// Links followed before giving up (a loop of links never ends).
const WRITE_LINK_HOPS: u32 = 16;

fn write_atomically(path: &Path, report: &Report, hops: u32) -> Result<(), WriteError> {
    use std::io::Write as _;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (host, text) = (report.host, report.text);
    let fail = |what: &str, e: io::Error| WriteError::new(path, format!("{what}: {e}"));
    // A link is written through, as the shell's `>` would: its target is replaced (and
    // created when the link dangles), never the link. A device, FIFO or socket
    // (/dev/null, /dev/stdout) is written to, never renamed over.
    let mut replaced = None;
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            if hops >= WRITE_LINK_HOPS {
                return Err(WriteError::new(path, "too many levels of symbolic links"));
            }
            refuse_untrusted_link(path, &meta)?;
            // /dev/stdout on a pipe ends in a link with no name to follow ("pipe:[…]"):
            // the kernel opens what it names.
            if let Ok(end) = fs::metadata(path) {
                if !end.is_file() && !end.is_dir() {
                    return write_in_place(path, &end, report);
                }
            }
            let target = fs::read_link(path).map_err(|e| fail("reading the link", e))?;
            let target = match path.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            return write_atomically(&target, report, hops + 1);
        } else if meta.is_dir() {
            return Err(WriteError::new(
                path,
                format!(
                    "a directory; name the file, e.g. {}/{{host}}.json",
                    path.display()
                ),
            ));
        } else if !meta.is_file() {
            return write_in_place(path, &meta, report);
        }
        replaced = Some(meta);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|e| fail("creating its directory", e))?;
    }
    let name = path
        .file_name()
        .ok_or_else(|| WriteError::new(path, "not a file name"))?;
    // The report replacing a file keeps that file's permissions: no wider (a private
    // report stays private) and no narrower.
    let mode = if report.private {
        Some(0o600)
    } else {
        replaced.as_ref().map(|m| m.mode() & 0o777)
    };
    // Host and pid: containers on a shared filesystem can share pids. Created new, never
    // opened through a name someone else made first (a link planted in /tmp). The name is
    // cut so that the temp name fits NAME_MAX whenever the name does.
    let shown: String = name.to_string_lossy().chars().take(64).collect();
    let stem = format!(".{shown}.tmp.{host}.{}", std::process::id());
    let mut attempt = 0;
    let (tmp, file) = loop {
        let tmp = match attempt {
            0 => path.with_file_name(&stem),
            n => path.with_file_name(format!("{stem}.{n}")),
        };
        let opened = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode.unwrap_or(0o666))
            .open(&tmp);
        match opened {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
            Err(e) => return Err(fail("writing", e)),
            Ok(file) => break (tmp, file),
        }
    };
    // On the disk before the rename: after a crash the name holds the old report or the
    // whole new one. A failed write leaves no temp file behind.
    let written = mode
        .map_or(Ok(()), |mode| {
            file.set_permissions(fs::Permissions::from_mode(mode))
        })
        .and_then(|()| (&file).write_all(text))
        .and_then(|()| file.sync_all())
        .map_err(|e| fail("writing", e))
        .and_then(|()| fs::rename(&tmp, path).map_err(|e| fail("renaming into place", e)));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// The kernel's protected_symlinks rule, kept here because this writer follows links
/// itself: in a sticky world-writable directory (/tmp) a link is followed only when the
/// caller, root or the directory's owner owns it. Another user's link there is a trap
/// that would have the report replace a file of the caller's choosing.
fn refuse_untrusted_link(link: &Path, meta: &Metadata) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt;
    let dir = link
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir_meta = fs::metadata(dir)
        .map_err(|e| WriteError::new(link, format!("reading its directory: {e}")))?;
    let shared = (Mode::SVTX | Mode::WOTH).bits();
    let me = rustix::process::geteuid().as_raw();
    if dir_meta.mode() & shared == shared && ![me, 0, dir_meta.uid()].contains(&meta.uid()) {
        return Err(WriteError::new(
            link,
            format!(
                "a link owned by another user (uid {}) in a sticky world-writable directory; \
                 not followed (the kernel's protected_symlinks rule): remove it or name another file",
                meta.uid()
            ),
        ));
    }
    Ok(())
}

/// Writes to a FIFO, device or socket without ever waiting past the deadline: opening a
/// FIFO blocks until a reader comes, and a reader that stops reading blocks the write.
fn write_in_place(path: &Path, meta: &Metadata, report: &Report) -> Result<(), WriteError> {
    use std::io::Write as _;
    use std::os::unix::fs::FileTypeExt;
    let fail = |what: &str, e: io::Error| WriteError::new(path, format!("{what}: {e}"));
    let file = fs::OpenOptions::new()
        .write(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32)
        .open(path)
        .map_err(|e| match Errno::from_io_error(&e) {
            Some(Errno::NXIO) if meta.file_type().is_fifo() => WriteError::new(
                path,
                "a FIFO that nothing reads; start the reader first, or name a file",
            ),
            Some(Errno::NXIO) if meta.file_type().is_socket() => {
                WriteError::new(path, "a socket; name a file")
            }
            _ => fail("opening", e),
        })?;
    let mut rest = report.text;
    while !rest.is_empty() {
        match (&file).write(rest) {
            Ok(0) => return Err(WriteError::new(path, "writing: nothing was taken")),
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let left = report.deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(WriteError::new(
                        path,
                        format!(
                            "the reader took {} of {} bytes within the {} s timeout",
                            report.text.len() - rest.len(),
                            report.text.len(),
                            report.timeout.as_secs_f64()
                        ),
                    ));
                }
                use rustix::event::{PollFd, PollFlags, Timespec};
                let left = left.max(Duration::from_millis(1));
                let timeout = Timespec {
                    tv_sec: left.as_secs().min(i64::MAX as u64) as i64,
                    tv_nsec: i64::from(left.subsec_nanos()),
                };
                // Its result is the next write's to tell (EINTR, a timeout: try again).
                let _ =
                    rustix::event::poll(&mut [PollFd::new(&file, PollFlags::OUT)], Some(&timeout));
            }
            Err(e) => return Err(fail("writing", e)),
        }
    }
    Ok(())
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
            _ if Errno::from_io_error(err) == Some(Errno::LOOP) => FsErrorKind::SymlinkLoop,
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

/// A cache's lock; a panic elsewhere while it was held leaves entries that are still true.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Listings by directory (device, inode): two logical paths to one directory share one.
type Listings = Arc<Mutex<HashMap<(u64, u64), Vec<OsString>>>>;

/// The `--root` directory, held open: every path is resolved against this one directory
/// while it is opened, so a link swapped in mid-run cannot lead outside.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    dir: Result<OwnedFd, Errno>,
}

/// What a directory entry is, as its listing says (links are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File,
    Symlink,
    Other,
}

#[derive(Debug, Clone)]
pub struct HostFs {
    root: Option<Arc<Root>>,
    /// Directory listings already read: several probes list the same library and
    /// toolkit directories, and each is read from disk once per run.
    listings: Listings,
    /// `canonical`'s answers by logical path.
    canonicals: Arc<Mutex<HashMap<PathBuf, PathBuf>>>,
}

impl HostFs {
    pub fn new(root: Option<PathBuf>) -> Self {
        let root = root.map(|path| {
            let dir = open_at(
                None,
                &path,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            )
            .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO));
            Arc::new(Root { path, dir })
        });
        HostFs {
            root,
            listings: Listings::default(),
            canonicals: Default::default(),
        }
    }

    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref().map(|r| r.path.as_path())
    }

    /// Opens `logical` (under the root when there is one) with `flags`; a link in the last
    /// component is followed only with `follow_last`.
    fn open(&self, logical: &Path, follow_last: bool, flags: OFlags) -> Result<OwnedFd, FsError> {
        let opened = match &self.root {
            None => open_at(
                None,
                logical,
                flags | nofollow(follow_last) | OFlags::CLOEXEC,
            ),
            Some(root) => match &root.dir {
                Ok(dir) => open_in_root(dir.as_fd(), logical, follow_last, flags),
                Err(errno) => Err(io::Error::from(*errno)),
            },
        };
        opened.map_err(|e| FsError::from_io(logical, &e))
    }

    fn stat(&self, logical: &Path, follow_last: bool) -> Result<Metadata, FsError> {
        if self.root.is_none() {
            // One statx, not an O_PATH open, a statx and a close.
            let m = if follow_last {
                fs::metadata(logical)
            } else {
                fs::symlink_metadata(logical)
            };
            return m.map_err(|e| FsError::from_io(logical, &e));
        }
        let fd = self.open(logical, follow_last, OFlags::PATH)?;
        fs::File::from(fd)
            .metadata()
            .map_err(|e| FsError::from_io(logical, &e))
    }

    pub fn metadata(&self, logical: &Path) -> Result<Metadata, FsError> {
        self.stat(logical, true)
    }

    pub fn exists(&self, logical: &Path) -> bool {
        self.metadata(logical).is_ok()
    }

    pub fn read_link(&self, logical: &Path) -> Result<PathBuf, FsError> {
        let fd = self.open(logical, false, OFlags::PATH)?;
        read_link_fd(fd.as_fd()).map_err(|e| FsError::from_io(logical, &e))
    }

    pub fn symlink_metadata(&self, logical: &Path) -> Result<Metadata, FsError> {
        self.stat(logical, false)
    }

    /// The logical path with every symlink resolved (inside the root), like realpath(3).
    /// Remembered for the run, and built from the parent's: a path below one already
    /// resolved costs one lstat, not a readlink for each component of the prefix again.
    pub fn canonical(&self, logical: &Path) -> Result<PathBuf, FsError> {
        if let Some(real) = lock(&self.canonicals).get(logical) {
            return Ok(real.clone());
        }
        let real = match (logical.parent(), logical.file_name()) {
            (Some(parent), Some(name)) if logical.is_absolute() => {
                if self.symlink_metadata(logical)?.file_type().is_symlink() {
                    self.resolve(logical)?
                } else {
                    self.canonical(parent)?.join(name)
                }
            }
            // "/", a relative path, or one ending in "..".
            _ => self.resolve(logical)?,
        };
        lock(&self.canonicals).insert(logical.to_path_buf(), real.clone());
        Ok(real)
    }

    fn resolve(&self, logical: &Path) -> Result<PathBuf, FsError> {
        let Some(root) = &self.root else {
            return fs::canonicalize(logical).map_err(|e| FsError::from_io(logical, &e));
        };
        let dir = root
            .dir
            .as_ref()
            .map_err(|errno| FsError::from_io(logical, &io::Error::from(*errno)))?;
        let (_, names) = walk_in_root(dir.as_fd(), logical, true, OFlags::PATH)
            .map_err(|e| FsError::from_io(logical, &e))?;
        let mut canonical = PathBuf::from("/");
        canonical.extend(names);
        Ok(canonical)
    }

    /// A regular file that is executable by someone (what a PATH search accepts).
    pub fn is_executable_file(&self, logical: &Path) -> bool {
        use std::os::unix::fs::PermissionsExt;
        self.metadata(logical)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }

    /// Opens a regular file for reading (whole, or by range for formats like ELF).
    pub fn open_regular(&self, logical: &Path) -> Result<fs::File, FsError> {
        use std::os::unix::fs::MetadataExt;
        let not_regular =
            || FsError::new(logical, FsErrorKind::NotRegularFile, "not a regular file");
        // Looked at before it is opened: opening a device can have effects.
        let seen = self.metadata(logical)?;
        if !seen.is_file() {
            return Err(not_regular());
        }
        // O_NONBLOCK: the name could be given to a FIFO before the open.
        let fd = self.open(
            logical,
            true,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
        )?;
        let file = fs::File::from(fd);
        let opened = file.metadata().map_err(|e| FsError::from_io(logical, &e))?;
        if (opened.dev(), opened.ino()) != (seen.dev(), seen.ino()) {
            return Err(FsError::new(
                logical,
                FsErrorKind::Other,
                "replaced while being opened",
            ));
        }
        Ok(file)
    }

    /// Entry names of a directory, sorted (non-UTF-8 names kept as they are).
    pub fn read_dir(&self, logical: &Path) -> Result<Vec<OsString>, FsError> {
        use std::os::unix::fs::MetadataExt;
        let fd = self.open(
            logical,
            true,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK,
        )?;
        let dir = fs::File::from(fd);
        let meta = dir.metadata().map_err(|e| FsError::from_io(logical, &e))?;
        let key = (meta.dev(), meta.ino());
        if let Some(names) = self.listings.lock().ok().and_then(|l| l.get(&key).cloned()) {
            return Ok(names);
        }
        let mut names = list_dir(dir.into()).map_err(|e| FsError::from_io(logical, &e))?;
        names.sort();
        if let Ok(mut l) = self.listings.lock() {
            l.insert(key, names.clone());
        }
        Ok(names)
    }

    /// Entry names with what they are, from the directory listing itself (no stat per
    /// entry); an entry the file system does not type is looked at with lstat.
    pub fn read_dir_kinds(&self, logical: &Path) -> Result<Vec<(OsString, EntryKind)>, FsError> {
        let fd = self.open(
            logical,
            true,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK,
        )?;
        let entries = list_dir_typed(fd).map_err(|e| FsError::from_io(logical, &e))?;
        Ok(entries
            .into_iter()
            .map(|(name, t)| {
                let kind = match t {
                    FileType::Directory => EntryKind::Dir,
                    FileType::RegularFile => EntryKind::File,
                    FileType::Symlink => EntryKind::Symlink,
                    FileType::Unknown => match self.symlink_metadata(&logical.join(&name)) {
                        Ok(m) if m.is_dir() => EntryKind::Dir,
                        Ok(m) if m.is_file() => EntryKind::File,
                        Ok(m) if m.file_type().is_symlink() => EntryKind::Symlink,
                        _ => EntryKind::Other,
                    },
                    _ => EntryKind::Other,
                };
                (name, kind)
            })
            .collect())
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

/// `openat(2)`; `dir` None is the working directory.
fn open_at(dir: Option<BorrowedFd>, path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let path = c_path(path)?;
    let dir = dir.unwrap_or(rustix::fs::CWD);
    Ok(rustix::fs::openat(
        dir,
        path.as_c_str(),
        flags,
        Mode::empty(),
    )?)
}

/// `path` for a system call; a NUL byte in it is refused here, with that said.
fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in the path"))
}

/// O_NOFOLLOW unless a link in the last component is to be followed.
fn nofollow(follow_last: bool) -> OFlags {
    if follow_last {
        OFlags::empty()
    } else {
        OFlags::NOFOLLOW
    }
}

/// Set once openat2(2) is known to be missing (Linux before 5.6).
static OPENAT2_MISSING: AtomicBool = AtomicBool::new(false);

/// Opens `logical` inside the directory `root` as if `root` were `/`: absolute links are
/// re-rooted and `..` stops at the root, whatever changes in the tree meanwhile.
fn open_in_root(
    root: BorrowedFd,
    logical: &Path,
    follow_last: bool,
    flags: OFlags,
) -> io::Result<OwnedFd> {
    if !OPENAT2_MISSING.load(Ordering::Relaxed) {
        match openat2_in_root(root, logical, follow_last, flags) {
            Err(e) if Errno::from_io_error(&e) == Some(Errno::NOSYS) => {
                OPENAT2_MISSING.store(true, Ordering::Relaxed);
            }
            // A seccomp filter (some container runtimes) denies the call.
            Err(e) if Errno::from_io_error(&e) == Some(Errno::PERM) => {}
            opened => return opened,
        }
    }
    walk_in_root(root, logical, follow_last, flags).map(|(fd, _)| fd)
}

/// openat2(2) with RESOLVE_IN_ROOT: the kernel resolves and opens in one step.
fn openat2_in_root(
    root: BorrowedFd,
    logical: &Path,
    follow_last: bool,
    flags: OFlags,
) -> io::Result<OwnedFd> {
    let path = c_path(logical)?;
    let flags = flags | nofollow(follow_last) | OFlags::CLOEXEC;
    let resolve = ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS;
    // EAGAIN: a rename elsewhere in the tree raced a `..`; the kernel asks for a retry.
    for _ in 0..64 {
        match rustix::fs::openat2(root, path.as_c_str(), flags, Mode::empty(), resolve) {
            Err(Errno::AGAIN) => {}
            opened => return Ok(opened?),
        }
    }
    Err(Errno::AGAIN.into())
}

/// Where openat2(2) is missing: one component at a time, each opened without following a
/// link (O_PATH | O_NOFOLLOW) relative to the directory before it, links read and resolved
/// here. Returns the file opened with `flags` and its path's components inside the root.
fn walk_in_root(
    root: BorrowedFd,
    logical: &Path,
    follow_last: bool,
    flags: OFlags,
) -> io::Result<(OwnedFd, Vec<OsString>)> {
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, logical);
    // The directories entered below the root, each with its name.
    let mut dirs: Vec<(OwnedFd, OsString)> = Vec::new();
    let mut hops = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            dirs.pop();
            continue;
        }
        let parent = dirs.last().map_or(root, |(fd, _)| fd.as_fd());
        let fd = open_at(
            Some(parent),
            Path::new(&name),
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        )?;
        let is_last = pending.is_empty();
        let file = fs::File::from(fd);
        let is_link = file.metadata()?.is_symlink();
        let fd = OwnedFd::from(file);
        if is_link && (follow_last || !is_last) {
            hops += 1;
            if hops > MAX_SYMLINK_HOPS {
                return Err(Errno::LOOP.into());
            }
            let target = read_link_fd(fd.as_fd())?;
            if target.is_absolute() {
                dirs.clear();
            }
            push_components(&mut pending, &target);
            continue;
        }
        if is_last {
            // Opened again by name with the caller's flags; O_NOFOLLOW refuses a link
            // swapped in since, and whatever is there now is inside `parent`.
            let fd = if flags == OFlags::PATH {
                fd
            } else {
                open_at(
                    Some(parent),
                    Path::new(&name),
                    flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                )?
            };
            let mut names: Vec<OsString> = dirs.into_iter().map(|(_, n)| n).collect();
            names.push(name);
            return Ok((fd, names));
        }
        dirs.push((fd, name));
    }
    // The path ended at the root or after a `..`: open the directory reached.
    let dir = dirs.last().map_or(root, |(fd, _)| fd.as_fd());
    let fd = open_at(Some(dir), Path::new("."), flags | OFlags::CLOEXEC)?;
    Ok((fd, dirs.into_iter().map(|(_, n)| n).collect()))
}

/// The target of the link that `link` (opened O_PATH | O_NOFOLLOW) is.
fn read_link_fd(link: BorrowedFd) -> io::Result<PathBuf> {
    // An empty path names `link` itself.
    match rustix::fs::readlinkat(link, c"", Vec::new()) {
        Ok(target) => Ok(PathBuf::from(OsString::from_vec(target.into_bytes()))),
        // Not a link: the kernel says ENOENT, readlink(2) on a path EINVAL.
        Err(Errno::NOENT) => Err(Errno::INVAL.into()),
        Err(e) => Err(e.into()),
    }
}

/// The entry names of the directory open as `dir`, "." and ".." left out.
fn list_dir(dir: OwnedFd) -> io::Result<Vec<OsString>> {
    Ok(list_dir_typed(dir)?.into_iter().map(|(n, _)| n).collect())
}

/// Names with their type as the listing says (`FileType::Unknown` where the file system
/// does not say).
fn list_dir_typed(dir: OwnedFd) -> io::Result<Vec<(OsString, FileType)>> {
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::new(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push((OsString::from_vec(name.to_vec()), entry.file_type()));
        }
    }
    Ok(names)
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
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStringExt;
    use std::os::unix::fs::{symlink, FileTypeExt};

    /// The deadline for writing to a FIFO or device.
    const T: Duration = Duration::from_secs(5);

    /// A socket cannot be opened at all (ENXIO): that it is named as a socket shows the kind
    /// is judged before the open, which for a device could act.
    #[test]
    fn what_is_no_regular_file_is_named_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let e = read_regular_limited(&sock, 1024).unwrap_err().to_string();
        assert_eq!(e, "not a regular file (a socket); name a file");
        let e = read_regular_limited(Path::new("/dev/null"), 1024)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a character device"), "{e}");
    }

    #[test]
    fn report_is_written_whole_with_host_and_directory() {
        let dir = tempfile::tempdir().unwrap();
        let template = dir.path().join("out/{host}.json");
        let written = write_report(&template, "node-1", "{}\n", T).unwrap();
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
        write_report(&path, "h", "new", T).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn report_is_written_through_links_dangling_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("latest.json");
        symlink("reports/r.json", &link).unwrap();
        write_report(&link, "h", "one", T).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            fs::read_to_string(dir.path().join("reports/r.json")).unwrap(),
            "one"
        );
        write_report(&link, "h", "two", T).unwrap();
        assert_eq!(fs::read_to_string(&link).unwrap(), "two");
    }

    #[test]
    fn a_link_planted_at_the_temp_name_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "untouched").unwrap();
        let planted = dir
            .path()
            .join(format!(".r.json.tmp.h.{}", std::process::id()));
        symlink(&victim, &planted).unwrap();
        write_report(&dir.path().join("r.json"), "h", "report", T).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched");
        let written = dir.path().join("r.json");
        assert!(fs::symlink_metadata(&written).unwrap().is_file());
        assert_eq!(fs::read_to_string(&written).unwrap(), "report");
    }

    #[test]
    fn a_name_as_long_as_the_filesystem_allows_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("{}.json", "r".repeat(250)));
        write_report(&path, &"h".repeat(64), "report", T).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "report");
    }

    #[test]
    fn report_to_a_device_is_written_not_renamed_over() {
        write_report(Path::new("/dev/null"), "h", "x", T).unwrap();
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn report_refuses_a_directory_and_a_link_loop() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_report(dir.path(), "h", "x", T).unwrap_err();
        assert_eq!(e.path, dir.path());
        assert!(e.message.starts_with("a directory; name the file"), "{e}");
        let a = dir.path().join("a");
        symlink("b", &a).unwrap();
        symlink("a", dir.path().join("b")).unwrap();
        let e = write_report(&a, "h", "x", T).unwrap_err();
        assert_eq!(e.message, "too many levels of symbolic links");
    }

    #[test]
    fn report_write_failure_names_the_file_and_the_step() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        fs::write(&blocker, "").unwrap();
        let e = write_report(&blocker.join("r.json"), "h", "x", T).unwrap_err();
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
        fs::write(root.join("etc/passwd"), "root:x:0:0").unwrap();
        let escaping = Path::new("/usr/local/cuda/../../../../etc/passwd");
        assert_eq!(fs.read_text(escaping).unwrap().text, "root:x:0:0");
        assert_eq!(fs.canonical(escaping).unwrap(), Path::new("/etc/passwd"));
    }

    /// The identity of what a resolver opened, or its errno.
    fn opened(r: io::Result<OwnedFd>) -> Result<(u64, u64), Errno> {
        use std::os::unix::fs::MetadataExt;
        let m = fs::File::from(r.map_err(|e| Errno::from_io_error(&e).unwrap())?)
            .metadata()
            .unwrap();
        Ok((m.dev(), m.ino()))
    }

    #[test]
    fn the_kernel_and_the_walk_resolve_alike() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("usr/lib/x86_64-linux-gnu")).unwrap();
        fs::write(root.join("usr/lib/x86_64-linux-gnu/libcuda.so.1"), "elf").unwrap();
        symlink("usr/lib", root.join("lib")).unwrap();
        symlink("/usr/lib/x86_64-linux-gnu", root.join("usr/multiarch")).unwrap();
        symlink(
            "libcuda.so.1",
            root.join("usr/lib/x86_64-linux-gnu/libcuda.so"),
        )
        .unwrap();
        symlink("../../../../..", root.join("usr/up")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("/loop1", root.join("loop2")).unwrap();
        symlink("/nowhere", root.join("dangling")).unwrap();
        let root_fd = open_at(None, root, OFlags::PATH | OFlags::DIRECTORY).unwrap();
        // Each logical path and what it must open, relative to the root, or the errno.
        let cases: [(&str, Result<&str, Errno>); 8] = [
            ("/", Ok("")),
            (
                "/lib/x86_64-linux-gnu/libcuda.so",
                Ok("usr/lib/x86_64-linux-gnu/libcuda.so.1"),
            ),
            ("/usr/multiarch/../../lib", Ok("usr/lib")),
            ("/usr/up/usr/../../../lib", Ok("usr/lib")),
            ("/../../usr", Ok("usr")),
            ("/usr/multiarch/libcuda.so/x", Err(Errno::NOTDIR)),
            ("/loop1", Err(Errno::LOOP)),
            ("/dangling", Err(Errno::NOENT)),
        ];
        for (logical, expected) in cases {
            let expected = expected.map(|p| {
                use std::os::unix::fs::MetadataExt;
                let m = fs::metadata(root.join(p)).unwrap();
                (m.dev(), m.ino())
            });
            let walked = walk_in_root(root_fd.as_fd(), Path::new(logical), true, OFlags::PATH);
            assert_eq!(
                opened(walked.map(|(fd, _)| fd)),
                expected,
                "walk: {logical}"
            );
            let kernel = openat2_in_root(root_fd.as_fd(), Path::new(logical), true, OFlags::PATH);
            if !matches!(&kernel, Err(e) if Errno::from_io_error(e) == Some(Errno::NOSYS)) {
                assert_eq!(opened(kernel), expected, "openat2: {logical}");
            }
        }
        // Not following the last link opens the link itself, by either resolver.
        let link = |fd: OwnedFd| read_link_fd(fd.as_fd()).unwrap();
        let (fd, names) =
            walk_in_root(root_fd.as_fd(), Path::new("/lib"), false, OFlags::PATH).unwrap();
        assert_eq!(
            (link(fd), names),
            (PathBuf::from("usr/lib"), vec![OsString::from("lib")])
        );
        let fs = HostFs::new(Some(root.to_path_buf()));
        assert_eq!(
            fs.read_link(Path::new("/lib")).unwrap(),
            Path::new("usr/lib")
        );
        assert_eq!(
            fs.canonical(Path::new("/usr/multiarch/libcuda.so"))
                .unwrap(),
            Path::new("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
        );
        assert_eq!(
            fs.read_dir(Path::new("/usr/up/lib")).unwrap(),
            ["x86_64-linux-gnu"]
        );
    }

    /// Swaps names in the tree for links out of it while the tree is read: what is read
    /// comes from inside the root or not at all. Bounded by time, not by count.
    #[test]
    fn a_link_swapped_in_mid_read_never_leads_out_of_the_root() {
        use std::sync::atomic::AtomicBool;
        use std::time::{Duration, Instant};
        let dir = tempfile::tempdir().unwrap();
        let host = dir.path();
        fs::write(host.join("secret"), "HOST SECRET").unwrap();
        fs::create_dir_all(host.join("host-lib")).unwrap();
        fs::write(host.join("host-lib/os-release"), "HOST SECRET").unwrap();
        let root = host.join("root");
        fs::create_dir_all(root.join("etc")).unwrap();
        fs::create_dir_all(root.join("lib")).unwrap();
        fs::write(root.join("etc/os-release"), "ID=tree").unwrap();
        fs::write(root.join("lib/os-release"), "ID=tree").unwrap();
        // The other halves of each swap: an absolute link to a host file, and a relative
        // one that climbs above the root into a host directory.
        symlink(host.join("secret"), root.join("etc/.swap")).unwrap();
        symlink("../host-lib", root.join(".swap")).unwrap();
        let pairs: Vec<(CString, CString)> = [("etc/os-release", "etc/.swap"), ("lib", ".swap")]
            .iter()
            .map(|(a, b)| {
                let c = |p: &str| CString::new(root.join(p).into_os_string().into_vec()).unwrap();
                (c(a), c(b))
            })
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    for (a, b) in &pairs {
                        let cwd = rustix::fs::CWD;
                        let exchange = rustix::fs::RenameFlags::EXCHANGE;
                        let r = rustix::fs::renameat_with(
                            cwd,
                            a.as_c_str(),
                            cwd,
                            b.as_c_str(),
                            exchange,
                        );
                        assert_eq!(r, Ok(()));
                    }
                }
            })
        };
        let hostfs = HostFs::new(Some(root.clone()));
        let root_fd = open_at(None, &root, OFlags::PATH | OFlags::DIRECTORY).unwrap();
        let by_api = |logical: &Path| hostfs.read_text(logical).ok().map(|t| t.text);
        let by_walk = |logical: &Path| {
            let (fd, _) = walk_in_root(
                root_fd.as_fd(),
                logical,
                true,
                OFlags::RDONLY | OFlags::NONBLOCK,
            )
            .ok()?;
            fs::read_to_string(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
        };
        type Read<'a> = &'a dyn Fn(&Path) -> Option<String>;
        let readers: [(&str, Read); 2] = [("openat2", &by_api), ("walk", &by_walk)];
        let mut tally = Vec::new();
        for (name, read) in readers {
            let (mut runs, mut inside, mut escapes) = (0u64, 0u64, 0u64);
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(1500) {
                for logical in ["/etc/os-release", "/lib/os-release"] {
                    runs += 1;
                    match read(Path::new(logical)) {
                        Some(text) if text.contains("SECRET") => escapes += 1,
                        Some(_) => inside += 1,
                        None => {}
                    }
                }
            }
            eprintln!("{name}: {runs} reads, {inside} from the tree, {escapes} escapes");
            tally.push((name, runs, inside, escapes));
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        for (name, runs, inside, escapes) in tally {
            assert_eq!(
                escapes, 0,
                "{name}: {escapes} of {runs} reads left the root"
            );
            // The swaps really raced the reads: some reads found the tree's file.
            assert!(inside > 0 && inside < runs, "{name}: {inside} of {runs}");
        }
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
        let mode = Mode::from_raw_mode(0o644);
        let made = rustix::fs::mknodat(rustix::fs::CWD, &fifo, FileType::Fifo, mode, 0);
        assert_eq!(made, Ok(()));
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
