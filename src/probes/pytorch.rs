//! PyTorch in each Python environment, read from disk without starting Python: torch's
//! version and CUDA build (torch/version.py, dist-info METADATA), the GPU architectures it
//! was compiled for (the .nv_fatbin of libtorch_cuda.so), the nvidia-* wheels it pins and
//! those installed, its companions (torchvision, torchaudio, triton) and other frameworks.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::fact::{Fact, MissingReason};
use crate::facts::python_sites::{parse_dist_info, Site};
use crate::facts::pytorch::{Dist, MetadataProblem, PythonEnv, Requirement, Torch};
use crate::fsys::HostFs;
use crate::probes::python_sites::normalize;
use crate::pyversion::{marker_holds, MarkerEnv};

/// Requirements read from one METADATA, and the lines that could not be judged.
#[derive(Debug, Default)]
pub struct ReadRequires {
    pub requires: Vec<Requirement>,
    /// (1-based line number, why)
    pub problems: Vec<(usize, String)>,
}

impl ReadRequires {
    /// One problem for the file, naming the first line: a hostile METADATA can have
    /// thousands of such lines, and the report needs only to say so.
    fn problem_in(&self, source: &Path) -> Option<MetadataProblem> {
        let (line, e) = self.problems.first()?;
        let more = match self.problems.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more line)".into(),
            n => format!(" (and {n} more lines)"),
        };
        Some(MetadataProblem {
            source: source.display().to_string(),
            detail: format!("Requires-Dist on line {line}{more}: {e}; not judged"),
        })
    }
}

/// Frameworks worth a line, by normalised project-name prefix.
const FRAMEWORKS: &[&str] = &[
    "jax",
    "jaxlib",
    "jax-cuda",
    "tensorflow",
    "cupy-cuda",
    "onnxruntime-gpu",
    "vllm",
    "xformers",
    "flash-attn",
    "bitsandbytes",
];

pub fn probe(fs: &HostFs, sites: &[Site]) -> Vec<PythonEnv> {
    let mut envs: Vec<PythonEnv> = sites.iter().map(|site| env(fs, site)).collect();
    // The torch `python` imports: the user site first (sys.path order), then the
    // interpreter's own; without torch anywhere, its first site.
    let primary = sites
        .iter()
        .zip(&envs)
        .enumerate()
        .filter(|(_, (s, e))| s.primary && e.torch.is_some())
        .min_by_key(|(_, (s, _))| !s.found_by.starts_with("user site"))
        .map(|(i, _)| i)
        .or_else(|| sites.iter().position(|s| s.primary))
        .unwrap_or(0);
    if let Some(e) = envs.get_mut(primary) {
        e.primary = true;
    }
    envs
}

fn env(fs: &HostFs, site: &Site) -> PythonEnv {
    let dists: Vec<(String, String, String)> = site
        .entries
        .iter()
        .filter_map(|e| parse_dist_info(e).map(|(n, v)| (n, v, e.clone())))
        .collect();
    let pick = |pred: &dyn Fn(&str) -> bool| -> Vec<Dist> {
        dists
            .iter()
            .filter(|(n, _, _)| pred(n))
            .map(|(n, v, _)| Dist {
                name: n.clone(),
                version: v.clone(),
                requires_torch: None,
            })
            .collect()
    };
    // Each installed distribution's dist-info directory by normalised name, from the one
    // listing: requirements are looked up here, not by listing the directory again.
    let mut installed: HashMap<&str, &str> = HashMap::new();
    for (name, _, dir) in &dists {
        installed.entry(name).or_insert(dir);
    }
    let python = site.python.as_deref();
    let site_dir = Path::new(&site.path);
    // torch installed by pip (dist-info), by setup.py/older conda (egg-info), or only its
    // package directory: version.py is what torch itself reads.
    let egg = site.entries.iter().find_map(|e| {
        let stem = e.strip_suffix(".egg-info")?.strip_prefix("torch-")?;
        Some((stem.split('-').next()?.to_string(), e.clone()))
    });
    let torch = match dists.iter().find(|(n, _, _)| n == "torch") {
        Some((_, v, dir)) => Some(torch(fs, site_dir, v, Some(dir), &installed, python)),
        None => match egg {
            Some((v, dir)) => Some(torch(fs, site_dir, &v, Some(&dir), &installed, python)),
            None => (site.entries.iter().any(|e| e == "torch")
                && fs.exists(&site_dir.join("torch/version.py")))
            .then(|| torch(fs, site_dir, "", None, &installed, python)),
        },
    };
    PythonEnv {
        site: site.path.clone(),
        found_by: site.found_by.clone(),
        python: site.python.clone(),
        primary: false,
        torch,
        nvidia_wheels: pick(&|n| n.starts_with("nvidia-") || n.starts_with("cuda-")),
        companions: pick(&|n| {
            matches!(
                n,
                "torchvision" | "torchaudio" | "triton" | "pytorch-triton"
            )
        })
        .into_iter()
        .map(|mut d| {
            if let Some(dir) = installed.get(d.name.as_str()) {
                d.requires_torch = torch_pin(fs, &site_dir.join(dir), python);
            }
            d
        })
        .collect(),
        frameworks: pick(&|n| {
            FRAMEWORKS.iter().any(|f| {
                n == *f
                    || n.starts_with(&format!("{f}-"))
                    || (f.ends_with("cuda") && n.starts_with(f))
            })
        })
        .into_iter()
        .map(|mut d| {
            if let Some(dir) = installed.get(d.name.as_str()) {
                d.requires_torch = torch_pin(fs, &site_dir.join(dir), python);
            }
            d
        })
        .collect(),
        installer: installer(
            fs,
            site_dir,
            dists
                .iter()
                .find(|(n, _, _)| n == "torch")
                .map(|(_, _, d)| d.as_str()),
        ),
        interpreter: interpreter(fs, site_dir),
        project: project(fs, site_dir),
    }
}

/// site-packages → pythonX.Y → lib → the prefix (`/usr/lib/python3/dist-packages` → `/usr`).
fn prefix_of_site(site: &Path) -> Option<&Path> {
    site.parent()?.parent()?.parent()
}

/// `PREFIX/bin/python`, else `python3`: a venv's own link (not followed: under --root it
/// names the host's interpreter) or a conda env's binary.
fn interpreter(fs: &HostFs, site: &Path) -> Option<String> {
    let bin = prefix_of_site(site)?.join("bin");
    ["python", "python3"]
        .into_iter()
        .map(|n| bin.join(n))
        .find(|p| fs.symlink_metadata(p).is_ok())
        .map(|p| p.display().to_string())
}

/// The directory of the project a `.venv` belongs to: its parent holds `pyproject.toml`
/// and the lockfile of the tool that syncs it.
fn project(fs: &HostFs, site: &Path) -> Option<String> {
    let prefix = prefix_of_site(site)?;
    if !fs.exists(&prefix.join("pyvenv.cfg")) {
        return None;
    }
    let dir = prefix.parent()?;
    (fs.exists(&dir.join("pyproject.toml"))
        && ["uv.lock", "poetry.lock", "pdm.lock"]
            .iter()
            .any(|l| fs.exists(&dir.join(l))))
    .then(|| dir.display().to_string())
}

/// Which tool manages the environment: conda's `conda-meta` beside `lib/`, uv's line in
/// `pyvenv.cfg`, the lockfile of the project the environment sits in (uv.lock, poetry.lock,
/// pdm.lock), else the INSTALLER file pip, uv, poetry and pdm write into torch's dist-info.
fn installer(fs: &HostFs, site: &Path, torch_dist: Option<&str>) -> Option<Fact<String>> {
    // site-packages → pythonX.Y → lib → the prefix.
    let prefix = site.parent()?.parent()?.parent()?;
    let conda_meta = prefix.join("conda-meta");
    if fs.metadata(&conda_meta).is_ok_and(|m| m.is_dir()) {
        return Some(Fact::value(
            conda_meta.display().to_string(),
            "conda".into(),
        ));
    }
    let cfg = prefix.join("pyvenv.cfg");
    if let Ok(f) = fs.read_text(&cfg) {
        if f.text
            .lines()
            .any(|l| l.split('=').next().is_some_and(|k| k.trim() == "uv"))
        {
            return Some(Fact::value(cfg.display().to_string(), "uv".into()));
        }
    }
    // A project's own environment (`.venv` beside its lockfile): the tool that locks it.
    if let Some(project) = prefix.parent() {
        for (lock, tool) in [
            ("uv.lock", "uv"),
            ("poetry.lock", "poetry"),
            ("pdm.lock", "pdm"),
        ] {
            let path = project.join(lock);
            if fs.exists(&path) {
                return Some(Fact::value(path.display().to_string(), tool.into()));
            }
        }
    }
    let file = site.join(torch_dist?).join("INSTALLER");
    let f = fs.read_text(&file).ok()?;
    let name = f.text.trim().to_ascii_lowercase();
    (!name.is_empty()).then(|| Fact::value(file.display().to_string(), name))
}

/// The machine of a wheel's platform tag (`Tag: cp311-cp311-manylinux_2_28_aarch64`).
fn wheel_machine(fs: &HostFs, wheel: &Path) -> Option<String> {
    let f = fs.read_text(wheel).ok()?;
    f.text.lines().find_map(|l| {
        let tag = l.strip_prefix("Tag:")?.trim();
        let platform = tag.rsplit('-').next()?;
        ["x86_64", "aarch64", "ppc64le", "s390x"]
            .into_iter()
            .find(|m| platform.ends_with(m))
            .map(str::to_string)
    })
}

/// The torch specifier in a companion's METADATA (torchvision's `Requires-Dist: torch==2.7.1`).
fn torch_pin(fs: &HostFs, dist_dir: &Path, python: Option<&str>) -> Option<String> {
    if dist_dir.extension().and_then(|e| e.to_str()) != Some("dist-info") {
        return None;
    }
    let f = fs.read_text(&dist_dir.join("METADATA")).ok()?;
    parse_requires(&f.text, python)
        .requires
        .into_iter()
        .find(|r| r.name == "torch" && !r.spec.is_empty())
        .map(|r| r.spec)
}

fn torch(
    fs: &HostFs,
    site: &Path,
    dist_version: &str,
    dist_dir: Option<&str>,
    installed: &HashMap<&str, &str>,
    python: Option<&str>,
) -> Torch {
    let version_py = site.join("torch/version.py");
    let (version, cuda, hip, git_version, debug) = match fs.read_text(&version_py) {
        Ok(f) => {
            let v = parse_version_py(&f.text);
            let version = match v.version.clone() {
                Some(s) => Fact::value(version_py.display().to_string(), s),
                None => Fact::missing(
                    version_py.display().to_string(),
                    MissingReason::Malformed,
                    "no __version__ line",
                ),
            };
            (version, v.cuda, v.hip, v.git_version, v.debug)
        }
        Err(e) => (Fact::from_fs_error(&e), None, None, None, None),
    };
    // dist-info has METADATA; an egg-info's PKG-INFO lists no requirements.
    let dist_info = dist_dir.filter(|d| d.ends_with(".dist-info"));
    let metadata = dist_info.map(|d| site.join(d).join("METADATA"));
    // The platform the wheel was built for decides its `platform_machine` markers.
    let wheel_machine = dist_info.and_then(|d| wheel_machine(fs, &site.join(d).join("WHEEL")));
    let machine = wheel_machine.as_deref();
    let mut requires = Vec::new();
    let mut requires_problems = Vec::new();
    if let Some(m) = metadata {
        if let Ok(f) = fs.read_text(&m) {
            let read = parse_requires_for(&f.text, python, machine);
            requires_problems.extend(read.problem_in(&m));
            requires = read.requires;
        }
    }
    // Expand meta-packages with extras (torch 2.11+: cuda-toolkit[cublas,…]==13.0.2) into
    // the nvidia-* pins they stand for, from the installed meta-package's METADATA. pip
    // installs a package once with every extra asked of it: one METADATA read per package.
    let mut expanded = Vec::new();
    for (name, extras) in extras_by_package(&requires) {
        let Some(dir) = installed.get(name) else {
            continue;
        };
        let metadata = site.join(dir).join("METADATA");
        let Ok(f) = fs.read_text(&metadata) else {
            continue;
        };
        let read = extra_requires_for(&f.text, &extras, python, machine);
        requires_problems.extend(read.problem_in(&metadata));
        let via = format!("{name}[{}]", extras.join(","));
        expanded.extend(read.requires.into_iter().map(|mut e| {
            e.via = Some(via.clone());
            e
        }));
    }
    requires.extend(expanded);
    let arches = cuda.as_ref().map(|_| {
        let lib = torch_cuda_lib(fs, site);
        match crate::fatbin::scan(fs, &lib) {
            Ok(s) => Fact::value(lib.display().to_string(), s),
            Err(e) => Fact::missing(lib.display().to_string(), MissingReason::Unreadable, e),
        }
    });
    let (conda_build, conda_mutex) = conda_pytorch(fs, site);
    Torch {
        conda_build,
        conda_mutex,
        dist_version: dist_version.to_string(),
        version,
        cuda,
        hip,
        git_version,
        debug,
        requires,
        requires_problems,
        wheel_machine,
        arches,
    }
}

/// Packages asked for with extras, in the order first asked, each with the union of its
/// extras in the order first named.
fn extras_by_package(requires: &[Requirement]) -> Vec<(&str, Vec<String>)> {
    let mut out: Vec<(&str, Vec<String>)> = Vec::new();
    let mut slot: HashMap<&str, usize> = HashMap::new();
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    for r in requires.iter().filter(|r| !r.extras.is_empty()) {
        let i = *slot.entry(&r.name).or_insert_with(|| {
            out.push((&r.name, Vec::new()));
            out.len() - 1
        });
        for e in &r.extras {
            if seen.insert((&r.name, e)) {
                out[i].1.push(e.clone());
            }
        }
    }
    out
}

/// conda-meta of the environment owning `site` (PREFIX/lib/pythonX.Y/site-packages):
/// `pytorch-VERSION-BUILD.json` and `pytorch-mutex-1.0-KIND.json`.
fn conda_pytorch(fs: &HostFs, site: &Path) -> (Option<String>, Option<String>) {
    let Some(prefix) = site.parent().and_then(Path::parent).and_then(Path::parent) else {
        return (None, None);
    };
    let Ok(names) = fs.read_dir(&prefix.join("conda-meta")) else {
        return (None, None);
    };
    let mut build = None;
    let mut mutex = None;
    for n in names.iter().map(|n| n.to_string_lossy().into_owned()) {
        let Some(stem) = n.strip_suffix(".json") else {
            continue;
        };
        if let Some(rest) = stem.strip_prefix("pytorch-mutex-") {
            mutex = rest.rsplit_once('-').map(|(_, kind)| kind.to_string());
        } else if let Some(rest) = stem.strip_prefix("pytorch-") {
            // pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0: version, then the build string.
            if rest.starts_with(|c: char| c.is_ascii_digit()) {
                build = rest.split_once('-').map(|(_, b)| b.to_string());
            }
        }
    }
    (build, mutex)
}

/// libtorch_cuda.so, or the first split `libtorch_cuda_*.so` of older builds.
fn torch_cuda_lib(fs: &HostFs, site: &Path) -> PathBuf {
    let dir = site.join("torch/lib");
    let main = dir.join("libtorch_cuda.so");
    if fs.exists(&main) {
        return main;
    }
    fs.read_dir(&dir)
        .ok()
        .and_then(|names| {
            names
                .iter()
                .map(|n| n.to_string_lossy().into_owned())
                .find(|n| n.starts_with("libtorch_cuda") && n.ends_with(".so"))
        })
        .map(|n| dir.join(n))
        .unwrap_or(main)
}

#[derive(Default)]
pub struct VersionPy {
    pub version: Option<String>,
    pub cuda: Option<String>,
    pub hip: Option<String>,
    pub git_version: Option<String>,
    pub debug: Option<bool>,
}

/// torch/version.py: `__version__ = '2.8.0+cu128'`, `cuda: Optional[str] = '12.8'`, `hip = None`.
pub fn parse_version_py(text: &str) -> VersionPy {
    let mut v = VersionPy::default();
    for line in text.lines() {
        let Some((lhs, rhs)) = line.split_once('=') else {
            continue;
        };
        let name = lhs.split(':').next().unwrap_or("").trim();
        let rhs = rhs.trim();
        let string = || {
            let q = rhs.chars().next().filter(|c| *c == '\'' || *c == '"')?;
            let inner = &rhs[1..];
            inner.find(q).map(|end| inner[..end].to_string())
        };
        match name {
            "__version__" => v.version = string(),
            "cuda" => v.cuda = string(),
            "hip" => v.hip = string(),
            "git_version" => v.git_version = string(),
            "debug" => v.debug = Some(rhs.starts_with("True")),
            _ => {}
        }
    }
    v
}

/// `Requires-Dist:` lines that apply to Linux on gpudoctor's own architecture, without extras.
pub fn parse_requires(metadata: &str, python: Option<&str>) -> ReadRequires {
    parse_requires_for(metadata, python, None)
}

/// `Requires-Dist:` lines that apply to Linux on `machine` ("aarch64"; None: gpudoctor's own
/// architecture), without extras.
pub fn parse_requires_for(
    metadata: &str,
    python: Option<&str>,
    machine: Option<&str>,
) -> ReadRequires {
    let mut out = ReadRequires::default();
    for (n, line) in metadata.lines().enumerate() {
        // Headers end at the first blank line; the description follows.
        if line.trim().is_empty() {
            break;
        }
        let Some(rest) = line.strip_prefix("Requires-Dist:") else {
            continue;
        };
        let (req, marker) = match rest.split_once(';') {
            Some((r, m)) => (r.trim(), m.trim()),
            None => (rest.trim(), ""),
        };
        let env = MarkerEnv::new(python, &[]).with_machine(machine);
        match marker_holds(marker, &env) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                out.problems.push((n + 1, e.to_string()));
                continue;
            }
        }
        let split = req
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(req.len());
        let (name, mut tail) = req.split_at(split);
        let mut extras = Vec::new();
        if let Some(after) = tail.trim_start().strip_prefix('[') {
            if let Some((inside, rest)) = after.split_once(']') {
                extras = inside.split(',').map(|e| e.trim().to_string()).collect();
                tail = rest;
            }
        }
        let spec = tail
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .replace(' ', "");
        // A pin reaches `pip install` commands: a direct URL (`name @ https://…`) from a tree
        // is never something gpudoctor tells a user to install.
        if !is_specifier_list(&spec) {
            out.problems.push((
                n + 1,
                "not a name with a version specifier list (a direct URL reference or a \
                 malformed specifier)"
                    .into(),
            ));
            continue;
        }
        out.requires.push(Requirement {
            name: normalize(name),
            extras,
            spec,
            via: None,
        });
    }
    out
}

/// Requirements of a dependency's own METADATA for the extras asked of it
/// (`cuda-toolkit[cudart]` → its `Requires-Dist: nvidia-cuda-runtime==… ; extra == "cudart"`).
pub fn extra_requires(metadata: &str, extras: &[String], python: Option<&str>) -> ReadRequires {
    extra_requires_for(metadata, extras, python, None)
}

/// [`extra_requires`] for an environment on `machine`.
pub fn extra_requires_for(
    metadata: &str,
    extras: &[String],
    python: Option<&str>,
    machine: Option<&str>,
) -> ReadRequires {
    let env = MarkerEnv::new(python, extras).with_machine(machine);
    let none = MarkerEnv::new(python, &[]).with_machine(machine);
    let mut out = ReadRequires::default();
    for (n, line) in metadata.lines().enumerate() {
        if line.trim().is_empty() {
            break;
        }
        let Some(rest) = line.strip_prefix("Requires-Dist:") else {
            continue;
        };
        let Some((req, marker)) = rest.split_once(';') else {
            continue;
        };
        // Only what the extras add: true with them, false without.
        let added =
            marker_holds(marker, &env).and_then(|with| Ok(with && !marker_holds(marker, &none)?));
        match added {
            Ok(true) => {
                let read = parse_requires_for(&format!("Requires-Dist:{req}"), python, machine);
                out.requires.extend(read.requires);
                out.problems
                    .extend(read.problems.into_iter().map(|(_, e)| (n + 1, e)));
            }
            Ok(false) => {}
            Err(e) => out.problems.push((n + 1, e.to_string())),
        }
    }
    out
}

/// A PEP 440 specifier list without spaces (`==2.5.1`, `>=13.1.0.3,<=13.1.1.3`, `~=1.4`),
/// or nothing.
fn is_specifier_list(spec: &str) -> bool {
    spec.is_empty()
        || spec.split(',').all(|clause| {
            let version = ["===", "~=", "==", "!=", "<=", ">=", "<", ">"]
                .iter()
                .find_map(|op| clause.strip_prefix(op));
            version.is_some_and(|v| {
                !v.is_empty()
                    && v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._*+!-".contains(&b))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_py_and_requirements() {
        let v = parse_version_py("__version__ = '2.8.0+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\ngit_version = 'ba56102'\nhip: Optional[str] = None\n");
        assert_eq!(v.version.as_deref(), Some("2.8.0+cu128"));
        assert_eq!(v.cuda.as_deref(), Some("12.8"));
        assert_eq!(v.hip, None);
        assert_eq!(v.debug, Some(false));
        let md = "Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0\nRequires-Dist: filelock\nRequires-Dist: nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\" and platform_machine == \"x86_64\"\nRequires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\nRequires-Dist: cuda-toolkit[cublas,cudart]==13.0.2; platform_system == \"Linux\"\n\nRequires-Dist: not-a-header\n";
        let r = parse_requires(md, Some("3.11")).requires;
        let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["filelock", "nvidia-cudnn-cu12", "cuda-toolkit"]);
        assert_eq!(r[1].spec, "==9.10.2.21");
        assert_eq!(r[2].extras, ["cublas", "cudart"]);
        let tk = "Name: cuda-toolkit\nRequires-Dist: nvidia-cuda-runtime==13.0.96; extra == \"cudart\" and platform_system == \"Linux\"\nRequires-Dist: nvidia-cufft==12.0.0.61; extra == \"cufft\"\n";
        let e = extra_requires(tk, &["cudart".into()], Some("3.11")).requires;
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].name, "nvidia-cuda-runtime");
    }

    #[test]
    fn a_package_asked_for_twice_is_expanded_once_with_all_its_extras() {
        let md = "Name: torch\nRequires-Dist: cuda-toolkit[cublas]==13.0.2\nRequires-Dist: filelock\nRequires-Dist: Cuda_Toolkit[cudart,cublas]==13.0.2\nRequires-Dist: nvidia-nccl[x]==2\n";
        let r = parse_requires(md, Some("3.11")).requires;
        assert_eq!(
            extras_by_package(&r),
            [
                ("cuda-toolkit", vec!["cublas".to_string(), "cudart".into()]),
                ("nvidia-nccl", vec!["x".into()]),
            ]
        );
    }

    #[test]
    fn a_direct_url_pin_is_a_problem_never_a_requirement() {
        let md = "Name: torch\nRequires-Dist: nvidia-nccl-cu12 @ https://evil.example/x.whl ; platform_system == \"Linux\"\nRequires-Dist: triton (==3.1.0)\nRequires-Dist: sympy==1.13.1;python_version>=\"3.9\"\nRequires-Dist: bad $(x)\n";
        let r = parse_requires(md, Some("3.11"));
        let names: Vec<&str> = r.requires.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["triton", "sympy"]);
        assert_eq!(r.requires[0].spec, "==3.1.0");
        let lines: Vec<usize> = r.problems.iter().map(|p| p.0).collect();
        assert_eq!(lines, [2, 5]);
        assert!(is_specifier_list(">=13.1.0.3,<=13.1.1.3"));
        assert!(is_specifier_list("==12.8.*"));
        assert!(is_specifier_list("===1.0+local"));
        assert!(!is_specifier_list("@https://x"));
        assert!(!is_specifier_list("==1.0,"));
        assert!(!is_specifier_list("=1.0"));
    }
}
