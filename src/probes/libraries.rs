//! CUDA shared libraries as the dynamic loader would find them: for each soname, every
//! candidate in the loader's order (LD_LIBRARY_PATH, /etc/ld.so.cache, the default
//! directories), the one it would load, and copies elsewhere (pip wheels, conda, toolkits)
//! that only some programs load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::elf::{self, DynamicInfo};
use crate::envvars::{self, Env};
use crate::fact::{Fact, MissingReason};
use crate::facts::python_sites::Site;
use crate::facts::toolkits::Toolkits;
use crate::fsys::{FsErrorKind, HostFs};
use crate::ldcache::{self};

use crate::facts::libraries::{
    family_of, soname_major, version_from_file_name, CacheInfo, Candidate, Executable, Family,
    Libraries, Library, SearchPath, Via, FAMILIES, WSL_LIB_DIR,
};
pub use crate::loader::{DEFAULT_DIRS, LD_SO_CACHE};

/// A real loader cache is tens of KiB; 16 MiB leaves room for the largest hosts.
const CACHE_READ_LIMIT: u64 = 16 * 1024 * 1024;

/// Directory listings and ELF reads, each done once.
struct Scan<'a> {
    fs: &'a HostFs,
    listings: BTreeMap<PathBuf, Vec<String>>,
    elf: BTreeMap<PathBuf, Result<DynamicInfo, String>>,
}

impl Scan<'_> {
    fn list(&mut self, dir: &Path) -> &[String] {
        if !self.listings.contains_key(dir) {
            let names = self
                .fs
                .read_dir(dir)
                .map(|n| {
                    let mut names: Vec<String> = n
                        .iter()
                        .map(|s| s.to_string_lossy().into_owned())
                        .filter(|s| family_of(s).is_some())
                        .collect();
                    names.sort();
                    names
                })
                .unwrap_or_default();
            self.listings.insert(dir.to_path_buf(), names);
        }
        self.listings.get(dir).map(Vec::as_slice).unwrap_or(&[])
    }

    fn has(&mut self, dir: &Path, name: &str) -> bool {
        self.list(dir)
            .binary_search_by(|n| n.as_str().cmp(name))
            .is_ok()
    }

    fn dynamic(&mut self, target: &Path) -> Result<DynamicInfo, String> {
        if let Some(r) = self.elf.get(target) {
            return r.clone();
        }
        let r = elf::read_dynamic(self.fs, target);
        self.elf.insert(target.to_path_buf(), r.clone());
        r
    }

    fn candidate(&mut self, path: &Path, via: Via, detail: Option<String>) -> Candidate {
        let fs = self.fs;
        let text = path.display().to_string();
        let mut c = Candidate {
            path: text.clone(),
            via,
            detail,
            target: None,
            version: None,
            version_source: None,
            elf_soname: None,
            needed: Vec::new(),
            size: None,
            stub: path.components().any(|p| p.as_os_str() == "stubs"),
            forward_compat: is_forward_compat_dir(path),
            problem: None,
        };
        let target = match fs.canonical(path) {
            Ok(t) => t,
            Err(e) => {
                c.problem = Some(match e.kind {
                    FsErrorKind::NotFound => {
                        "missing on disk (a broken link or a stale cache entry)".into()
                    }
                    _ => e.message,
                });
                return c;
            }
        };
        c.stub |= target.components().any(|p| p.as_os_str() == "stubs");
        c.forward_compat |= is_forward_compat_dir(&target);
        c.size = fs.metadata(&target).ok().map(|m| m.len());
        match self.dynamic(&target) {
            Ok(info) => {
                if !info.loadable_here() {
                    c.problem = Some(format!(
                        "the loader would skip it: wrong ELF class or machine ({})",
                        elf::machine_name(info.machine, info.class64)
                    ));
                }
                c.elf_soname = info.soname;
                c.needed = info.needed;
            }
            Err(e) => c.problem = Some(format!("the loader would skip it: {e}")),
        }
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(v) = version_from_file_name(&name) {
            c.version = Some(v);
            c.version_source = Some(target.display().to_string());
        }
        c.target = Some(target.display().to_string());
        c
    }
}

fn is_forward_compat_dir(path: &Path) -> bool {
    let parent = path.parent();
    parent
        .and_then(Path::file_name)
        .is_some_and(|n| n == "compat")
        && parent
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n.to_string_lossy().starts_with("cuda"))
}

pub fn probe(fs: &HostFs, env: &Env, sites: &[Site], toolkits: Option<&Toolkits>) -> Libraries {
    let mut headers = HeaderTexts::new();
    let ld_library_path: Vec<String> = env
        .get_str(envvars::LD_LIBRARY_PATH)
        .filter(|v| !v.is_empty())
        .map(|v| v.split(':').map(str::to_string).collect())
        .unwrap_or_default();
    // (entry number, directory searched): glibc reads an empty entry as ".", and relative
    // entries against the working directory.
    let ld_dirs: Vec<(usize, PathBuf)> = ld_library_path
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let d = if d.is_empty() { "." } else { d.as_str() };
            if d.starts_with('/') {
                return Some((i, PathBuf::from(d)));
            }
            if fs.root().is_some() {
                return None;
            }
            std::env::current_dir().ok().map(|cwd| (i, cwd.join(d)))
        })
        .collect();
    let ld_library_path_resolved: Vec<Option<String>> = (0..ld_library_path.len())
        .map(|i| {
            let (_, dir) = ld_dirs.iter().find(|(j, _)| *j == i)?;
            fs.canonical(dir).ok().map(|p| p.display().to_string())
        })
        .collect();
    let (cache, cache_fact) = read_cache(fs);
    let default_dirs: Vec<String> = DEFAULT_DIRS
        .iter()
        .filter(|d| fs.metadata(Path::new(d)).is_ok_and(|m| m.is_dir()))
        .map(|d| d.to_string())
        .collect();
    let arch = ldcache::host_arch();

    let mut scan = Scan {
        fs,
        listings: BTreeMap::new(),
        elf: BTreeMap::new(),
    };

    // Off-path places, each with what they are.
    let mut elsewhere_dirs: Vec<(PathBuf, Via, String)> = Vec::new();
    for site in sites {
        for (dir, dist) in wheel_lib_dirs(fs, site) {
            elsewhere_dirs.push((dir, Via::PipWheel, dist));
        }
    }
    if let Some(prefix) = env.get_str(envvars::CONDA_PREFIX).filter(|p| !p.is_empty()) {
        elsewhere_dirs.push((Path::new(&prefix).join("lib"), Via::Conda, prefix.clone()));
    }
    if let Some(t) = toolkits {
        for tk in &t.installs {
            for dir in &tk.lib_dirs {
                elsewhere_dirs.push((PathBuf::from(dir), Via::Toolkit, tk.root.clone()));
                let compat = Path::new(&tk.root).join("compat");
                if fs.exists(&compat) {
                    elsewhere_dirs.push((
                        compat,
                        Via::Toolkit,
                        format!("{} (forward compatibility)", tk.root),
                    ));
                }
            }
        }
    }
    if fs.exists(Path::new(WSL_LIB_DIR)) {
        elsewhere_dirs.push((PathBuf::from(WSL_LIB_DIR), Via::Wsl, WSL_LIB_DIR.into()));
    }

    // Every soname in play: cache keys plus names that are their own file's SONAME.
    let mut sonames: Vec<String> = Vec::new();
    let mut seen_sonames: std::collections::HashSet<String> = std::collections::HashSet::new();
    if let Some(cache) = &cache {
        for e in &cache.entries {
            // Unversioned dev links are for the linker; only libcuda.so is also dlopened.
            let versioned = e.soname.contains(".so.") || e.soname == "libcuda.so";
            if versioned && family_of(&e.soname).is_some() && seen_sonames.insert(e.soname.clone())
            {
                sonames.push(e.soname.clone());
            }
        }
    }
    let all_dirs: Vec<PathBuf> = ld_dirs
        .iter()
        .map(|(_, d)| d.clone())
        .chain(default_dirs.iter().map(PathBuf::from))
        .chain(elsewhere_dirs.iter().map(|(d, _, _)| d.clone()))
        .collect();
    for dir in &all_dirs {
        let names: Vec<String> = scan.list(dir).to_vec();
        for name in names {
            if seen_sonames.contains(&name) {
                continue;
            }
            let path = dir.join(&name);
            let Ok(target) = fs.canonical(&path) else {
                continue;
            };
            let is_soname = match scan.dynamic(&target) {
                Ok(info) => info.soname.as_deref() == Some(name.as_str()),
                // Unreadable: keep names shaped like a soname (lib*.so.N) so it is reported.
                Err(_) => soname_major(&name).is_some() && version_from_file_name(&name).is_none(),
            };
            // The unversioned libcuda.so is what dlopen("libcuda.so") and the linker use.
            if is_soname || name == "libcuda.so" {
                seen_sonames.insert(name.clone());
                sonames.push(name);
            }
        }
    }
    sonames.sort_by(|a, b| {
        let fa = FAMILIES
            .iter()
            .position(|f| Some(f.name) == family_of(a).map(|f| f.name));
        let fb = FAMILIES
            .iter()
            .position(|f| Some(f.name) == family_of(b).map(|f| f.name));
        fa.cmp(&fb).then_with(|| a.cmp(b))
    });

    let mut libraries = Vec::new();
    for soname in sonames {
        let Some(family) = family_of(&soname) else {
            continue;
        };
        let mut candidates: Vec<Candidate> = Vec::new();
        for (i, dir) in &ld_dirs {
            if scan.has(dir, &soname) {
                let c = scan.candidate(
                    &dir.join(&soname),
                    Via::LdLibraryPath,
                    Some(format!("entry {} ({})", i + 1, ld_library_path[*i])),
                );
                candidates.push(c);
            }
        }
        if let Some(cache) = &cache {
            for e in cache.lookup(&soname, arch) {
                let c = scan.candidate(Path::new(&e.path), Via::LdSoCache, None);
                candidates.push(c);
            }
        }
        for dir in &default_dirs {
            if scan.has(Path::new(dir), &soname) {
                let c = scan.candidate(&Path::new(dir).join(&soname), Via::DefaultDir, None);
                candidates.push(c);
            }
        }
        dedup_by_target(&mut candidates);
        let mut elsewhere = Vec::new();
        for (dir, via, detail) in &elsewhere_dirs {
            if scan.has(dir, &soname) {
                let mut c = scan.candidate(&dir.join(&soname), *via, Some(detail.clone()));
                let already = candidates
                    .iter()
                    .any(|k| k.target.is_some() && k.target == c.target);
                if already {
                    continue;
                }
                if c.version.is_none() && *via == Via::PipWheel {
                    if let Some((site, wheel)) = wheel_version(sites, dir, family) {
                        c.version = Some(wheel.1.clone());
                        c.version_source = Some(format!("{site} ({})", wheel.0));
                    }
                }
                elsewhere.push(c);
            }
        }
        dedup_by_target(&mut elsewhere);
        for c in candidates.iter_mut().chain(elsewhere.iter_mut()) {
            if c.version.is_none() {
                header_version(fs, c, &soname, &mut headers);
            }
        }
        let winner = candidates.iter().position(|c| c.problem.is_none());
        libraries.push(Library {
            family: family.name.to_string(),
            soname,
            candidates,
            winner,
            elsewhere,
        });
    }

    // Unknown (None) without a readable cache: the loader's view cannot be judged then.
    let in_ld_path = ld_library_path
        .iter()
        .any(|d| d.trim_end_matches('/') == WSL_LIB_DIR);
    let wsl_lib_searched = match (&cache, fs.exists(Path::new(WSL_LIB_DIR))) {
        (_, false) => None,
        (_, true) if in_ld_path => Some(true),
        (Some(c), true) => Some(
            c.entries
                .iter()
                .any(|e| Path::new(&e.path).parent() == Some(Path::new(WSL_LIB_DIR))),
        ),
        (None, true) => None,
    };

    Libraries {
        search: SearchPath {
            ld_library_path,
            ld_library_path_resolved,
            cache: cache_fact,
            default_dirs,
            wsl_lib_searched,
        },
        nvidia_smi: crate::probes::toolkits::first_on_path(
            fs,
            env.get_str(envvars::PATH).as_deref(),
            "nvidia-smi",
        )
        .map(|p| Executable {
            resolved: fs
                .canonical(&p)
                .unwrap_or_else(|_| p.clone())
                .display()
                .to_string(),
            path: p.display().to_string(),
        }),
        libraries,
    }
}

fn dedup_by_target(candidates: &mut Vec<Candidate>) {
    let mut seen: Vec<String> = Vec::new();
    candidates.retain(|c| match &c.target {
        Some(t) if seen.contains(t) => false,
        Some(t) => {
            seen.push(t.clone());
            true
        }
        None => true,
    });
}

fn read_cache(fs: &HostFs) -> (Option<ldcache::LdCache>, Fact<CacheInfo>) {
    let path = Path::new(LD_SO_CACHE);
    match fs.read_bytes(path, CACHE_READ_LIMIT) {
        Ok(bytes) if bytes.len() as u64 > CACHE_READ_LIMIT => (
            None,
            Fact::missing(
                LD_SO_CACHE,
                MissingReason::Unreadable,
                "larger than 16 MiB; not read",
            ),
        ),
        Ok(bytes) => match ldcache::parse(&bytes) {
            Ok(cache) => {
                let info = CacheInfo {
                    format: cache.format,
                    entries: cache.entries.len(),
                };
                (Some(cache), Fact::value(LD_SO_CACHE, info))
            }
            Err(e) => (
                None,
                Fact::missing(LD_SO_CACHE, MissingReason::Malformed, e.to_string()),
            ),
        },
        Err(e) => (None, Fact::from_fs_error(&e)),
    }
}

/// `site-packages/nvidia/<component>/lib` (CUDA 12 wheels) and `nvidia/cu13/lib` (CUDA 13),
/// each with the wheel directory it belongs to.
fn wheel_lib_dirs(fs: &HostFs, site: &Site) -> Vec<(PathBuf, String)> {
    if !site.entries.iter().any(|e| e == "nvidia") {
        return Vec::new();
    }
    let nvidia = Path::new(&site.path).join("nvidia");
    let Ok(names) = fs.read_dir(&nvidia) else {
        return Vec::new();
    };
    names
        .iter()
        .map(|n| nvidia.join(n).join("lib"))
        .filter(|d| fs.metadata(d).is_ok_and(|m| m.is_dir()))
        .map(|d| {
            let label = format!("{} in {}", d.display(), site.found_by);
            (d, label)
        })
        .collect()
}

/// The `nvidia-*` wheel a pip library came from, by the family's project-name prefix.
pub(crate) fn wheel_version<'a>(
    sites: &'a [Site],
    dir: &Path,
    family: &Family,
) -> Option<(&'a str, (String, String))> {
    let prefix = family.wheel?;
    let site = sites.iter().find(|s| dir.starts_with(&s.path))?;
    let dists = site.dists_with_prefix(prefix);
    // CUDA 13 wheels are unsuffixed (or -cu13) and live under nvidia/cu13; CUDA 11/12 ones
    // carry -cu11/-cu12 and live under nvidia/<component>. Both can be installed at once.
    let cu13_dir = dir.components().any(|c| c.as_os_str() == "cu13");
    let best = dists
        .into_iter()
        .find(|(n, _)| match n.strip_prefix(prefix) {
            Some("") | Some("-cu13") => cu13_dir,
            Some(rest) => !cu13_dir && (rest == "-cu12" || rest == "-cu11"),
            None => false,
        })?;
    Some((site.path.as_str(), best))
}

/// cuDNN and NCCL libraries in wheels and distributions are named by major only; their
/// headers carry the full version.
fn header_version(fs: &HostFs, c: &mut Candidate, soname: &str, read: &mut HeaderTexts) {
    if let Some((version, source)) = header_version_of(fs, &c.path, soname, read) {
        c.version = Some(version);
        c.version_source = Some(source);
    }
}

/// The full version of a cuDNN or NCCL library from the header installed beside it
/// (`../include/cudnn_version.h`, or /usr/include for the default directories), with the
/// header's path.
/// Headers already read, by path (None: unreadable), so that cuDNN's eleven libraries read
/// their one header once.
pub type HeaderTexts = std::collections::HashMap<PathBuf, Option<String>>;

pub fn header_version_of(
    fs: &HostFs,
    lib_path: &str,
    soname: &str,
    read: &mut HeaderTexts,
) -> Option<(String, String)> {
    let (header, defines): (&str, [&str; 3]) = if soname.starts_with("libcudnn") {
        (
            "cudnn_version.h",
            ["CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"],
        )
    } else if soname.starts_with("libnccl") {
        ("nccl.h", ["NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"])
    } else {
        return None;
    };
    let dir = Path::new(lib_path).parent()?;
    let mut places = vec![dir.join("../include").join(header)];
    if DEFAULT_DIRS.iter().any(|d| Path::new(d) == dir) {
        places.push(Path::new("/usr/include").join(header));
        if let Some(triplet) = dir.file_name() {
            places.push(Path::new("/usr/include").join(triplet).join(header));
        }
    }
    for place in places {
        let text = read
            .entry(place.clone())
            .or_insert_with(|| fs.read_text(&place).ok().map(|f| f.text));
        let Some(text) = text else {
            continue;
        };
        let parts: Option<Vec<i64>> = defines
            .iter()
            .map(|d| crate::probes::toolkits::parse_define(text, d))
            .collect();
        let Some(parts) = parts else { continue };
        if soname_major(soname).map(i64::from) != parts.first().copied() {
            continue;
        }
        return Some((
            format!("{}.{}.{}", parts[0], parts[1], parts[2]),
            place.display().to_string(),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_versions() {
        assert_eq!(
            family_of("libcudnn_ops.so.9").map(|f| f.name),
            Some("libcudnn")
        );
        assert_eq!(
            family_of("libcublasLt.so.12").map(|f| f.name),
            Some("libcublasLt")
        );
        assert_eq!(
            family_of("libcublas.so.12.4.5.8").map(|f| f.name),
            Some("libcublas")
        );
        assert_eq!(family_of("libcuda.so").map(|f| f.name), Some("libcuda"));
        assert!(family_of("libcudadebugger.so.1").is_none());
        assert!(family_of("libnvrtc-builtins.so.12.4").is_none());
        assert!(family_of("libcuda.sox").is_none());
        assert_eq!(
            version_from_file_name("libcuda.so.535.104.05").as_deref(),
            Some("535.104.05")
        );
        assert_eq!(version_from_file_name("libcudart.so.11.0"), None);
        assert_eq!(version_from_file_name("libcudnn.so.9"), None);
        assert_eq!(
            version_from_file_name("libcudart.so.11.8.89").as_deref(),
            Some("11.8.89")
        );
        assert_eq!(soname_major("libcudart.so.11.0"), Some(11));
        assert!(is_forward_compat_dir(Path::new(
            "/usr/local/cuda-12.4/compat/libcuda.so.1"
        )));
        assert!(!is_forward_compat_dir(Path::new(
            "/opt/compat/libcuda.so.1"
        )));
    }
}
