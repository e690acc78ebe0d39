//! CUDA toolkits: every install on the machine, the routes that lead to each, each one's
//! version (from files first; `nvcc --version` only when no file says), and which one
//! wins for the shell's `nvcc` and for torch's extension builder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::compat::CudaVersion;
use crate::envvars::{self, Env};
use crate::fact::{Fact, MissingReason};
use crate::facts::python_sites::Site;
use crate::facts::toolkits::{
    CondaPackage, CudaHome, ExtensionPackage, Found, NvccOnPath, Rejected, Route, Toolkit,
    ToolkitKind, Toolkits, VersionReading,
};
use crate::fsys::HostFs;
use crate::runner::{RunError, Runner};

/// Where NVIDIA's installers, distributions and HPC SDKs put toolkits.
pub const USR_LOCAL_CUDA: &str = "/usr/local/cuda";
pub const DEBIAN_TOOLKIT: &str = "/usr/lib/nvidia-cuda-toolkit";
pub const DEBIAN_CUDA_DIR: &str = "/usr/lib/cuda";
const OPT_NVIDIA: &str = "/opt/nvidia";
/// Packages whose install or first use compiles CUDA code with nvcc (torch.utils.cpp_extension
/// or their own build): without a toolkit they fail with "CUDA_HOME environment variable is not set".
pub const EXTENSION_BUILDERS: &[&str] = &[
    "flash-attn",
    "apex",
    "xformers",
    "deepspeed",
    "mamba-ssm",
    "causal-conv1d",
    "detectron2",
    "pytorch3d",
    "bmtrain",
    "tinycudann",
    "nvdiffrast",
    "gsplat",
    "torch-scatter",
    "torch-sparse",
    "apex-cuda",
];

struct Discovery<'a> {
    fs: &'a HostFs,
    /// The active conda env's CUDA packages (read once).
    conda_packages: Vec<CondaPackage>,
    installs: Vec<Toolkit>,
    rejected: Vec<Rejected>,
    nvcc_timeout: Duration,
}

/// The first compiled module (`*.so`) a distribution's RECORD lists, outside the libraries
/// it vendors (`*.libs/`).
fn compiled_module(fs: &HostFs, record: &Path) -> Option<String> {
    let text = fs.read_text(record).ok()?.text;
    text.lines()
        .filter_map(|l| l.split(',').next())
        .find(|path| {
            let file = path.rsplit('/').next().unwrap_or(path);
            (file.ends_with(".so") || file.contains(".so."))
                && !path.split('/').any(|d| d.ends_with(".libs"))
        })
        .map(str::to_string)
}

pub fn probe(fs: &HostFs, env: &Env, sites: &[Site], budget: Duration) -> Toolkits {
    let mut d = Discovery {
        fs,
        conda_packages: Vec::new(),
        installs: Vec::new(),
        rejected: Vec::new(),
        // Half the probe budget: a hung nvcc is reported, and the report still comes.
        nvcc_timeout: budget / 2,
    };
    let var = |v| env.get_str(v).filter(|s: &String| !s.is_empty());

    for (v, route) in [
        (envvars::CUDA_HOME, Route::CudaHome),
        (envvars::CUDA_PATH, Route::CudaPath),
        (envvars::CUDA_ROOT, Route::CudaRoot),
    ] {
        if let Some(dir) = var(v) {
            d.consider(Path::new(&dir), route, &dir);
        }
    }

    let nvcc = first_on_path(fs, var(envvars::PATH).as_deref(), "nvcc");
    let mut nvcc_on_path = None;
    if let Some(found) = &nvcc {
        let resolved = fs.canonical(found).unwrap_or_else(|_| found.clone());
        let root = nvcc_root(fs, &resolved);
        let index = d.consider(&root, Route::NvccOnPath, &found.display().to_string());
        nvcc_on_path = Some(NvccOnPath {
            path: found.display().to_string(),
            resolved: resolved.display().to_string(),
            toolkit: index,
        });
    }

    let usr_local_cuda = fs
        .symlink_metadata(Path::new(USR_LOCAL_CUDA))
        .ok()
        .map(|m| {
            if m.file_type().is_symlink() {
                fs.canonical(Path::new(USR_LOCAL_CUDA))
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|e| format!("broken link: {}", e.message))
            } else {
                USR_LOCAL_CUDA.to_string()
            }
        });
    if usr_local_cuda.is_some() {
        d.consider(
            Path::new(USR_LOCAL_CUDA),
            Route::UsrLocalCuda,
            USR_LOCAL_CUDA,
        );
    }
    for (parent, route) in [
        ("/usr/local", Route::VersionedDir),
        ("/opt", Route::OptCuda),
    ] {
        let Ok(names) = fs.read_dir(Path::new(parent)) else {
            continue;
        };
        for name in names {
            let name = name.to_string_lossy();
            if name.starts_with("cuda-") || (route == Route::OptCuda && name == "cuda") {
                let dir = Path::new(parent).join(name.as_ref());
                d.consider(&dir, route, &dir.display().to_string());
            }
        }
    }
    d.scan_opt_nvidia();
    if fs.exists(Path::new(DEBIAN_TOOLKIT)) || fs.exists(Path::new(DEBIAN_CUDA_DIR)) {
        d.consider(
            Path::new(DEBIAN_TOOLKIT),
            Route::DebianPackage,
            DEBIAN_TOOLKIT,
        );
    }

    if let Some(prefix) = var(envvars::CONDA_PREFIX) {
        d.conda_packages = conda_cuda_packages(fs, Path::new(&prefix));
        let prefix_path = Path::new(&prefix);
        let has_nvcc = fs.is_executable_file(&prefix_path.join("bin/nvcc"));
        if has_nvcc || !d.conda_packages.is_empty() {
            d.consider(prefix_path, Route::Conda, &prefix);
        }
    }

    let mut extension_builders = Vec::new();
    for site in sites {
        for (dir, dist) in [
            ("nvidia/cu13", "nvidia-cuda-nvcc"),
            ("nvidia/cuda_nvcc", ""),
        ] {
            let root = Path::new(&site.path).join(dir);
            if fs.exists(&root.join("bin/nvcc")) || fs.exists(&root.join("bin/ptxas")) {
                let index = d.consider(&root, Route::PipWheel, &root.display().to_string());
                let wheel = if dist.is_empty() {
                    site.dists_with_prefix("nvidia-cuda-nvcc-cu")
                        .into_iter()
                        .next()
                } else {
                    site.dist(dist).map(|v| (dist.to_string(), v))
                };
                if let (Some(i), Some((name, version))) = (index, wheel) {
                    d.installs[i].set_wheel_version(&site.path, &name, &version);
                }
            }
        }
        for (entry, (name, version)) in site
            .entries
            .iter()
            .filter_map(|e| crate::facts::python_sites::parse_dist_info(e).map(|d| (e, d)))
        {
            if EXTENSION_BUILDERS.contains(&name.as_str()) {
                let record = Path::new(&site.path).join(entry).join("RECORD");
                extension_builders.push(ExtensionPackage {
                    name,
                    version,
                    site: site.path.clone(),
                    compiled: compiled_module(fs, &record),
                });
            }
        }
    }

    let cuda_home = cuda_home(&d, env, nvcc.as_deref());
    let Discovery {
        installs,
        rejected,
        conda_packages,
        ..
    } = d;
    Toolkits {
        installs,
        rejected,
        nvcc_on_path,
        cuda_home,
        usr_local_cuda,
        conda_packages,
        extension_builders,
    }
}

/// torch's `_find_cuda_home`, evaluated against what was found.
fn cuda_home(d: &Discovery, env: &Env, nvcc: Option<&Path>) -> CudaHome {
    let var = |v| env.get_str(v).filter(|s: &String| !s.is_empty());
    let (path, via) = if let Some(p) = var(envvars::CUDA_HOME) {
        (Some(PathBuf::from(p)), envvars::CUDA_HOME.name)
    } else if let Some(p) = var(envvars::CUDA_PATH) {
        (Some(PathBuf::from(p)), envvars::CUDA_PATH.name)
    } else if let Some(n) = nvcc {
        (
            n.parent().and_then(Path::parent).map(Path::to_path_buf),
            "the nvcc on PATH",
        )
    } else if d.fs.exists(Path::new(USR_LOCAL_CUDA)) {
        (Some(PathBuf::from(USR_LOCAL_CUDA)), "/usr/local/cuda")
    } else {
        (
            None,
            "nothing: CUDA_HOME and CUDA_PATH unset, no nvcc on PATH, no /usr/local/cuda",
        )
    };
    // `/usr` (from Debian's /usr/bin/nvcc) is the distribution toolkit's public face.
    let toolkit = path.as_deref().and_then(|p| {
        d.index_of(p)
            .or_else(|| d.index_of(&nvcc_root(d.fs, &p.join("bin/nvcc"))))
    });
    CudaHome {
        path: path.map(|p| p.display().to_string()),
        via: via.to_string(),
        toolkit,
    }
}

impl Discovery<'_> {
    /// Records that `route` leads to `dir`; returns the toolkit's index, or None (and a
    /// rejection) when nothing there is a toolkit.
    fn consider(&mut self, dir: &Path, route: Route, named: &str) -> Option<usize> {
        let found = Found {
            route,
            path: named.to_string(),
        };
        let canonical = match self.fs.canonical(dir) {
            // CUDA_HOME=/usr is how Debian's toolkit is named for builds.
            Ok(c) if c == Path::new("/usr") && self.fs.exists(Path::new(DEBIAN_TOOLKIT)) => {
                PathBuf::from(DEBIAN_TOOLKIT)
            }
            Ok(c) => c,
            Err(e) => {
                self.rejected.push(Rejected {
                    route,
                    path: named.to_string(),
                    reason: format!("{}: {}", dir.display(), e.message),
                });
                return None;
            }
        };
        if let Some(i) = self.index_of(&canonical) {
            if !self.installs[i].found.contains(&found) {
                self.installs[i].found.push(found);
            }
            return Some(i);
        }
        match self.inspect(&canonical, route) {
            Ok(mut toolkit) => {
                toolkit.found.push(found);
                self.installs.push(toolkit);
                Some(self.installs.len() - 1)
            }
            Err(reason) => {
                self.rejected.push(Rejected {
                    route,
                    path: named.to_string(),
                    reason,
                });
                None
            }
        }
    }

    fn index_of(&self, dir: &Path) -> Option<usize> {
        let canonical = self.fs.canonical(dir).ok()?;
        let text = canonical.display().to_string();
        self.installs.iter().position(|t| t.root == text)
    }

    fn inspect(&self, root: &Path, route: Route) -> Result<Toolkit, String> {
        let fs = self.fs;
        if !fs.metadata(root).is_ok_and(|m| m.is_dir()) {
            return Err(format!("{} is not a directory", root.display()));
        }
        let kind = match route {
            Route::Conda => ToolkitKind::Conda,
            Route::PipWheel => ToolkitKind::PipWheel,
            _ if root == Path::new(DEBIAN_TOOLKIT) || root == Path::new("/usr") => {
                ToolkitKind::Distribution
            }
            _ => ToolkitKind::Nvidia,
        };
        let include_dirs = self.include_dirs(root, kind);
        let lib_dirs = self.lib_dirs(root, kind);
        let nvcc = [root.join("bin/nvcc")]
            .into_iter()
            .find(|p| fs.is_executable_file(p));
        let headers = include_dirs
            .iter()
            .any(|d| fs.exists(&d.join("cuda_runtime_api.h")));
        let mut readings = self.version_readings(root, &include_dirs, &lib_dirs);
        if kind == ToolkitKind::Conda {
            readings.extend(conda_version(&self.conda_packages, root));
        }
        if nvcc.is_none() && !headers && readings.is_empty() && kind != ToolkitKind::PipWheel {
            return Err(format!(
                "{} holds no CUDA toolkit: no bin/nvcc, version.json, version.txt or include/cuda_runtime_api.h",
                root.display()
            ));
        }
        // A header says only major.minor; a later source with the same major.minor and a
        // patch level (the runtime's file name) is just as right and more precise.
        if let Some(first) = readings.first() {
            let short = first.version.split('.').count() < 3;
            let cuda = CudaVersion::parse(&first.version);
            if let Some(i) = readings.iter().position(|r| {
                short && CudaVersion::parse(&r.version) == cuda && r.version.split('.').count() >= 3
            }) {
                readings.swap(0, i);
            }
        }
        let version = match readings.first() {
            Some(r) => Fact::value(r.source.clone(), r.version.clone()),
            None => match &nvcc {
                Some(n) => self.nvcc_version(n),
                None => Fact::missing(
                    root.display().to_string(),
                    MissingReason::NotFound,
                    "no version file, header or versioned libcudart, and no nvcc to ask",
                ),
            },
        };
        let cuda = version.get().and_then(|v| CudaVersion::parse(v));
        let disagreements = readings
            .iter()
            .skip(1)
            .filter(|r| CudaVersion::parse(&r.version) != cuda)
            .cloned()
            .collect();
        Ok(Toolkit {
            root: root.display().to_string(),
            kind,
            found: Vec::new(),
            version,
            cuda,
            disagreements,
            nvcc: nvcc.map(|p| p.display().to_string()),
            headers,
            lib_dirs: lib_dirs.iter().map(|p| p.display().to_string()).collect(),
        })
    }

    fn include_dirs(&self, root: &Path, kind: ToolkitKind) -> Vec<PathBuf> {
        let mut dirs = vec![root.join("include")];
        dirs.extend(self.target_dirs(root, "include"));
        if kind == ToolkitKind::Distribution {
            dirs.push(PathBuf::from("/usr/include"));
        }
        dirs
    }

    fn lib_dirs(&self, root: &Path, kind: ToolkitKind) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = [root.join("lib64"), root.join("lib")]
            .into_iter()
            .filter(|d| self.fs.metadata(d).is_ok_and(|m| m.is_dir()))
            .collect();
        dirs.extend(self.target_dirs(root, "lib"));
        if kind == ToolkitKind::Distribution {
            dirs.extend(
                ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"]
                    .iter()
                    .map(PathBuf::from)
                    .filter(|d| self.fs.exists(d)),
            );
        }
        dirs
    }

    /// `targets/<triple>/{include,lib}`: conda's and cross toolkits' layout.
    fn target_dirs(&self, root: &Path, leaf: &str) -> Vec<PathBuf> {
        let targets = root.join("targets");
        let Ok(names) = self.fs.read_dir(&targets) else {
            return Vec::new();
        };
        names
            .iter()
            .map(|n| targets.join(n).join(leaf))
            .filter(|d| self.fs.exists(d))
            .collect()
    }

    /// Version statements on disk, most trusted first.
    fn version_readings(
        &self,
        root: &Path,
        include_dirs: &[PathBuf],
        lib_dirs: &[PathBuf],
    ) -> Vec<VersionReading> {
        let fs = self.fs;
        let mut out = Vec::new();
        let json = root.join("version.json");
        if let Ok(f) = fs.read_text(&json) {
            if let Some(v) = parse_version_json(&f.text) {
                out.push(VersionReading {
                    source: json.display().to_string(),
                    version: v,
                });
            }
        }
        let txt = root.join("version.txt");
        if let Ok(f) = fs.read_text(&txt) {
            if let Some(v) = parse_version_txt(&f.text) {
                out.push(VersionReading {
                    source: txt.display().to_string(),
                    version: v,
                });
            }
        }
        for (header, define) in [
            ("cuda.h", "CUDA_VERSION"),
            ("cuda_runtime_api.h", "CUDART_VERSION"),
        ] {
            for dir in include_dirs {
                let path = dir.join(header);
                let Ok(f) = fs.read_text(&path) else { continue };
                if let Some(v) = parse_define(&f.text, define).and_then(CudaVersion::from_encoded) {
                    out.push(VersionReading {
                        source: format!("{} ({define})", path.display()),
                        version: v.to_string(),
                    });
                    break;
                }
            }
        }
        for dir in lib_dirs {
            let Ok(names) = fs.read_dir(dir) else {
                continue;
            };
            let best = names
                .iter()
                .filter_map(|n| {
                    let n = n.to_string_lossy();
                    let v = n.strip_prefix("libcudart.so.")?;
                    (v.split('.').count() >= 3 && v.split('.').all(|p| p.parse::<u32>().is_ok()))
                        .then(|| (n.to_string(), v.to_string()))
                })
                .max_by_key(|(_, v)| CudaVersion::parse(v));
            if let Some((name, v)) = best {
                out.push(VersionReading {
                    source: dir.join(name).display().to_string(),
                    version: v,
                });
                break;
            }
        }
        out
    }

    fn nvcc_version(&self, nvcc: &Path) -> Fact<String> {
        let source = format!("{} --version", nvcc.display());
        if self.fs.root().is_some() {
            return Fact::missing(
                source,
                MissingReason::NotProbed,
                "programs under --root are never run, and no file states the version",
            );
        }
        match Runner::new(None).run(nvcc, &["--version"], self.nvcc_timeout) {
            Ok(out) => match parse_nvcc_version(&out.stdout) {
                Some(v) => Fact::value(source, v),
                None => Fact::missing(
                    source,
                    MissingReason::Malformed,
                    format!(
                        "no \"release X.Y, VX.Y.Z\" line in its output (exit {}{})",
                        out.exit_code.map_or("by signal".into(), |c| c.to_string()),
                        if out.truncated {
                            ", output cut at the cap"
                        } else {
                            ""
                        }
                    ),
                ),
            },
            Err(e @ RunError::TimedOut { .. }) => {
                Fact::missing(source, MissingReason::TimedOut, e.to_string())
            }
            Err(e) => Fact::missing(source, MissingReason::Unreadable, e.to_string()),
        }
    }

    /// HPC SDK and similar layouts: `/opt/nvidia/**/cuda/<X.Y>` and `/opt/nvidia/*/bin/nvcc`,
    /// a bounded walk (depth 5, 400 directories) so a huge /opt costs little.
    fn scan_opt_nvidia(&mut self) {
        let mut queue = vec![(PathBuf::from(OPT_NVIDIA), 0usize)];
        let mut visited = 0;
        let mut roots = Vec::new();
        while let Some((dir, depth)) = queue.pop() {
            visited += 1;
            if visited > 400 {
                break;
            }
            if self.fs.is_executable_file(&dir.join("bin/nvcc")) {
                roots.push(dir);
                continue;
            }
            if depth >= 5 {
                continue;
            }
            let Ok(names) = self.fs.read_dir(&dir) else {
                continue;
            };
            for name in names.iter().rev() {
                let child = dir.join(name);
                if self.fs.symlink_metadata(&child).is_ok_and(|m| m.is_dir()) {
                    queue.push((child, depth + 1));
                }
            }
        }
        for root in roots {
            self.consider(&root, Route::OptNvidia, &root.display().to_string());
        }
    }
}

/// The toolkit directory an nvcc belongs to: `bin/..`; Debian's `/usr/bin/nvcc` belongs to
/// the distribution toolkit under /usr/lib/nvidia-cuda-toolkit.
fn nvcc_root(fs: &HostFs, resolved: &Path) -> PathBuf {
    let root = resolved
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"));
    if root == Path::new("/usr") && fs.exists(Path::new(DEBIAN_TOOLKIT)) {
        return PathBuf::from(DEBIAN_TOOLKIT);
    }
    root
}

pub fn first_on_path(fs: &HostFs, path: Option<&str>, name: &str) -> Option<PathBuf> {
    // Relative PATH entries depend on the caller's directory; a doctor skips them.
    path?
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(|d| Path::new(d).join(name))
        .find(|p| fs.is_executable_file(p))
}

/// `cuda-*` and `cudatoolkit` packages from `conda-meta/NAME-VERSION-BUILD.json` file names.
fn conda_cuda_packages(fs: &HostFs, prefix: &Path) -> Vec<CondaPackage> {
    let Ok(names) = fs.read_dir(&prefix.join("conda-meta")) else {
        return Vec::new();
    };
    names
        .iter()
        .filter_map(|n| {
            let n = n.to_string_lossy();
            let stem = n.strip_suffix(".json")?;
            let (rest, _build) = stem.rsplit_once('-')?;
            let (name, version) = rest.rsplit_once('-')?;
            (name == "cudatoolkit" || name.starts_with("cuda-")).then(|| CondaPackage {
                name: name.to_string(),
                version: version.to_string(),
            })
        })
        .collect()
}

/// conda's `cuda-version` metapackage, else `cuda-nvcc` / `cudatoolkit`, names the toolkit.
fn conda_version(packages: &[CondaPackage], prefix: &Path) -> Option<VersionReading> {
    ["cuda-version", "cuda-nvcc", "cuda-cudart", "cudatoolkit"]
        .iter()
        .find_map(|want| packages.iter().find(|p| p.name == *want))
        .map(|p| VersionReading {
            source: format!("{}/conda-meta ({})", prefix.display(), p.name),
            version: p.version.clone(),
        })
}

/// `cuda.version` from version.json; its third part is sometimes a date, so callers use
/// major.minor. Falls back to the runtime's or compiler's component version.
pub fn parse_version_json(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let get = |key: &str| {
        v.get(key)?
            .get("version")?
            .as_str()
            .filter(|s| CudaVersion::parse(s).is_some())
            .map(str::to_string)
    };
    get("cuda")
        .or_else(|| get("cuda_cudart"))
        .or_else(|| get("cuda_nvcc"))
}

/// `CUDA Version 10.0.130`.
pub fn parse_version_txt(text: &str) -> Option<String> {
    let rest = text.trim().strip_prefix("CUDA Version")?.trim();
    CudaVersion::parse(rest).map(|_| rest.to_string())
}

/// `#define NAME 12040` → 12040.
pub fn parse_define(text: &str, name: &str) -> Option<i64> {
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next()? == "#define" && words.next()? == name)
            .then(|| words.next()?.parse().ok())
            .flatten()
    })
}

/// `Cuda compilation tools, release 12.4, V12.4.131` → "12.4.131".
pub fn parse_nvcc_version(out: &str) -> Option<String> {
    out.lines().find_map(|line| {
        let (_, rest) = line.split_once("release ")?;
        let (short, full) = rest.split_once(", V")?;
        let full = full.split_whitespace().next()?;
        CudaVersion::parse(short)?;
        Some(if CudaVersion::parse(full).is_some() {
            full.to_string()
        } else {
            short.to_string()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_formats() {
        let json = r#"{"cuda":{"name":"CUDA SDK","version":"12.6.20241114"},"cuda_cudart":{"version":"12.6.77"}}"#;
        assert_eq!(parse_version_json(json).as_deref(), Some("12.6.20241114"));
        assert_eq!(
            parse_version_json(r#"{"cuda_cudart":{"version":"11.8.89"}}"#).as_deref(),
            Some("11.8.89")
        );
        assert_eq!(parse_version_json("{not json"), None);
        assert_eq!(parse_version_json(r#"{"cuda":{"version":"soon"}}"#), None);
        assert_eq!(
            parse_version_txt("CUDA Version 10.0.130\n").as_deref(),
            Some("10.0.130")
        );
        assert_eq!(
            parse_define("#define CUDA_VERSION 12040\n", "CUDA_VERSION"),
            Some(12040)
        );
        assert_eq!(
            parse_define("#define CUDA_VERSION_X 1", "CUDA_VERSION"),
            None
        );
        let nvcc = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.5, V13.5.37\nBuild cuda_13.5.r13.5/compiler.39125733_0\n";
        assert_eq!(parse_nvcc_version(nvcc).as_deref(), Some("13.5.37"));
        assert_eq!(parse_nvcc_version("garbage"), None);
    }
}
