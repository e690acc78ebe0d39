//! Where an image's files come from: a directory (an OCI layout, or an extracted `docker save`),
//! or a tar of one, indexed once (name → offset and size) and then read by seeking.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

use super::ImageError;

/// One member of an outer tar: its data's offset and size, or a link to another member.
#[derive(Debug, Clone)]
pub(crate) enum Member {
    File { offset: u64, size: u64 },
    Link(String),
}

pub(crate) enum Source {
    /// A layout directory, as a canonical path: a member is read only where it resolves, links
    /// followed, to a regular file inside it.
    Dir(PathBuf),
    Tar {
        file: PathBuf,
        members: HashMap<String, Member>,
        /// The decompressed copy of a gzip-compressed archive, removed with the source.
        _scratch: Option<tempfile::NamedTempFile>,
    },
}

/// A member name in normal form: no leading `/` or `./`, no `.` components; `None` when it
/// climbs out with `..` or is empty.
pub(crate) fn normal_name(name: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    (!out.is_empty()).then(|| out.join("/"))
}

impl Source {
    /// Indexes the tar at `file` (entries once, seeking over their data).
    pub(crate) fn index_tar(
        file: &Path,
        shown: &str,
        scratch: Option<tempfile::NamedTempFile>,
        max_entries: u64,
    ) -> Result<Source, ImageError> {
        let io_err = |e: io::Error| ImageError::Read {
            what: shown.to_string(),
            source: e,
        };
        let f = File::open(file).map_err(io_err)?;
        let mut archive = tar::Archive::new(f);
        let mut members = HashMap::new();
        let mut count = 0u64;
        for entry in archive.entries_with_seek().map_err(io_err)? {
            let entry = entry.map_err(|e| ImageError::NotAnImage {
                path: shown.to_string(),
                why: format!(
                    "not a readable tar archive: {}",
                    super::excerpt(&e.to_string())
                ),
            })?;
            count += 1;
            if count > max_entries {
                return Err(ImageError::Limit {
                    what: shown.to_string(),
                    why: format!("the archive has more than {max_entries} entries"),
                });
            }
            let path = entry.path().map_err(io_err)?;
            let Some(name) = path.to_str().and_then(normal_name) else {
                continue;
            };
            let kind = entry.header().entry_type();
            let member = if kind.is_file() || kind == tar::EntryType::Continuous {
                Member::File {
                    offset: entry.raw_file_position(),
                    size: entry.size(),
                }
            } else if kind.is_symlink() || kind.is_hard_link() {
                let Some(target) = entry.link_name().map_err(io_err)? else {
                    continue;
                };
                let Some(target) = target.to_str() else {
                    continue;
                };
                let resolved = if kind.is_symlink() && !target.starts_with('/') {
                    // Relative to the link's directory.
                    match name.rsplit_once('/') {
                        Some((dir, _)) => format!("{dir}/{target}"),
                        None => target.to_string(),
                    }
                } else {
                    target.to_string()
                };
                match normal_name(&resolved) {
                    Some(t) => Member::Link(t),
                    None => continue,
                }
            } else {
                continue;
            };
            members.insert(name, member);
        }
        Ok(Source::Tar {
            file: file.to_path_buf(),
            members,
            _scratch: scratch,
        })
    }

    fn lookup(&self, name: &str) -> Option<(u64, u64)> {
        let Source::Tar { members, .. } = self else {
            return None;
        };
        let mut name = name.to_string();
        for _ in 0..16 {
            match members.get(&name)? {
                Member::File { offset, size } => return Some((*offset, *size)),
                Member::Link(t) => name = t.clone(),
            }
        }
        None
    }

    /// A layout directory, its path made canonical so that links can be held inside it.
    pub(crate) fn dir(path: &Path) -> io::Result<Source> {
        Ok(Source::Dir(std::fs::canonicalize(path)?))
    }

    /// Whether the member or file `name` exists.
    pub(crate) fn has(&self, name: &str) -> bool {
        match self {
            Source::Dir(dir) => matches!(resolve(dir, name), Ok(Some(p)) if p.is_file()),
            Source::Tar { .. } => self.lookup(name).is_some(),
        }
    }

    /// What `name` is where it exists but cannot be read as a member ("a FIFO", "a link out of
    /// the layout"); None where it is absent or a regular file.
    pub(crate) fn not_a_member(&self, name: &str) -> Option<&'static str> {
        let Source::Dir(dir) = self else {
            return None;
        };
        let path = member_path(dir, name)?;
        std::fs::symlink_metadata(&path).ok()?;
        match resolve(dir, name) {
            Err(_) => Some("a link out of the layout"),
            Ok(None) => Some("a dangling link"),
            Ok(Some(p)) => {
                let kind = std::fs::metadata(p).ok()?.file_type();
                (!kind.is_file()).then(|| crate::fsys::kind_name(kind))
            }
        }
    }

    /// Opens `name` (a path inside the layout or archive): its reader and size, or `None`
    /// when it is absent.
    pub(crate) fn open(&self, name: &str) -> io::Result<Option<(Box<dyn Read + '_>, u64)>> {
        match self {
            Source::Dir(dir) => {
                let Some(path) = resolve(dir, name)? else {
                    return Ok(None);
                };
                // O_NONBLOCK: a fifo planted as a blob must not block the open. O_NOFOLLOW: the
                // path is resolved already; a link swapped in since is not followed.
                let opened = {
                    use rustix::fs::OFlags;
                    use std::os::unix::fs::OpenOptionsExt;
                    std::fs::OpenOptions::new()
                        .read(true)
                        .custom_flags((OFlags::NONBLOCK | OFlags::NOFOLLOW).bits() as i32)
                        .open(&path)
                };
                match opened {
                    Ok(f) => {
                        let meta = f.metadata()?;
                        if !meta.is_file() {
                            return Ok(None);
                        }
                        Ok(Some((Box::new(f), meta.len())))
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e),
                }
            }
            Source::Tar { file, .. } => {
                let Some((offset, size)) = self.lookup(name) else {
                    return Ok(None);
                };
                let mut f = File::open(file)?;
                f.seek(SeekFrom::Start(offset))?;
                Ok(Some((Box::new(f.take(size)), size)))
            }
        }
    }
}

/// Where `name` resolves inside the canonical `dir`, links followed; None where nothing is
/// there. A link that leaves `dir` (`layer.tar -> /etc/shadow`) is an error, never read: a
/// layout names only its own files.
fn resolve(dir: &Path, name: &str) -> io::Result<Option<PathBuf>> {
    let Some(path) = member_path(dir, name) else {
        return Ok(None);
    };
    match std::fs::canonicalize(&path) {
        Ok(real) if real.starts_with(dir) => Ok(Some(real)),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{name} is a link to a file outside the image layout; it is not read"),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `dir/name`, for a name that stays inside `dir`.
fn member_path(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut path = dir.to_path_buf();
    for c in Path::new(name).components() {
        match c {
            Component::Normal(p) => path.push(OsString::from(p)),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_and_never_climb_out() {
        assert_eq!(
            normal_name("./blobs/sha256/ab").as_deref(),
            Some("blobs/sha256/ab")
        );
        assert_eq!(
            normal_name("/manifest.json").as_deref(),
            Some("manifest.json")
        );
        assert_eq!(normal_name("a/../b").as_deref(), Some("b"));
        assert_eq!(normal_name("../etc/passwd"), None);
        assert_eq!(normal_name("./"), None);
        assert!(member_path(Path::new("/x"), "../y").is_none());
        assert!(member_path(Path::new("/x"), "/etc/passwd").is_none());
    }
}
