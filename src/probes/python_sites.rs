//! Python site-packages directories a user's `python` would import from, found without
//! starting Python: the active virtualenv, the conda env, `python3` on PATH, `./.venv`.
//! The toolkit and library probes read them for pip-installed CUDA wheels.

use std::path::{Path, PathBuf};

use crate::envvars::{self, Env};
use crate::fsys::HostFs;

use crate::facts::python_sites::Site;
pub use crate::pyversion::normalize;

pub fn discover(fs: &HostFs, env: &Env, python: Option<&Path>) -> Vec<Site> {
    let user_site = env
        .get_str(envvars::HOME)
        .filter(|h| h.starts_with('/'))
        .map(|h| Path::new(&h).join(".local"));
    let mut prefixes: Vec<(PathBuf, String)> = Vec::new();
    // --python names the interpreter; its environment is the one the user asked about.
    if let Some(p) = python.and_then(|exe| prefix_of(fs, env, exe.to_path_buf())) {
        prefixes.push((p, "--python".into()));
    }
    if let Some(v) = env.get_str(envvars::VIRTUAL_ENV).filter(|v| !v.is_empty()) {
        prefixes.push((PathBuf::from(v), "VIRTUAL_ENV".into()));
    }
    if let Some(v) = env.get_str(envvars::CONDA_PREFIX).filter(|v| !v.is_empty()) {
        prefixes.push((PathBuf::from(v), "CONDA_PREFIX".into()));
    }
    let on_path = python_on_path(fs, env);
    let primary_prefix = if python.is_some() {
        prefixes.first().map(|(p, _)| p.clone())
    } else {
        on_path.clone()
    };
    if let Some(prefix) = on_path {
        prefixes.push((prefix, "python on PATH".into()));
    }
    // pip install --user: searched by Python before the system site-packages.
    if let Some(local) = &user_site {
        prefixes.push((local.clone(), "user site (~/.local)".into()));
    }
    // The working directory means nothing for a system inspected under --root.
    if fs.root().is_none() {
        if let Ok(cwd) = std::env::current_dir() {
            let venv = cwd.join(".venv");
            if fs.exists(&venv.join("pyvenv.cfg")) {
                prefixes.push((venv, "./.venv".into()));
            }
        }
    }

    // A system interpreter (not a venv) also imports the user site, before its own.
    let with_user = primary_prefix
        .as_ref()
        .is_some_and(|p| !fs.exists(&p.join("pyvenv.cfg")));
    let primary_dirs: Vec<PathBuf> = primary_prefix
        .iter()
        .chain(user_site.iter().filter(|_| with_user))
        .flat_map(|p| site_dirs(fs, p))
        .map(|(d, _)| fs.canonical(&d).unwrap_or(d))
        .collect();
    let mut sites: Vec<Site> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for (prefix, found_by) in prefixes {
        for (dir, python) in site_dirs(fs, &prefix) {
            let canonical = fs.canonical(&dir).unwrap_or_else(|_| dir.clone());
            if seen.contains(&canonical) {
                continue;
            }
            let Ok(names) = fs.read_dir(&dir) else {
                continue;
            };
            let primary = primary_dirs.contains(&canonical);
            seen.push(canonical);
            sites.push(Site {
                path: dir.display().to_string(),
                found_by: found_by.clone(),
                python,
                primary,
                entries: names
                    .iter()
                    .map(|n| n.to_string_lossy().into_owned())
                    .collect(),
            });
        }
    }
    sites
}

/// The interpreter `python` (else `python3`) names on PATH: what the user types, and what
/// `--python-import` runs, so the static and the live probe look at one Python.
pub fn python_exe_on_path(fs: &HostFs, env: &Env) -> Option<PathBuf> {
    let path = env.get_str(envvars::PATH)?;
    ["python", "python3"].into_iter().find_map(|name| {
        path.split(':')
            .filter(|d| d.starts_with('/'))
            .map(|dir| Path::new(dir).join(name))
            .find(|exe| fs.is_executable_file(exe))
    })
}

/// The prefix of that interpreter.
fn python_on_path(fs: &HostFs, env: &Env) -> Option<PathBuf> {
    prefix_of(fs, env, python_exe_on_path(fs, env)?)
}

/// An interpreter's `sys.prefix`: the venv holding `bin/../pyvenv.cfg`, the version a
/// pyenv shim selects, else the install its real location names.
fn prefix_of(fs: &HostFs, env: &Env, exe: PathBuf) -> Option<PathBuf> {
    let bin = exe.parent()?;
    // pyenv's shims are scripts; the version it selects names the interpreter.
    if bin.file_name().is_some_and(|n| n == "shims") {
        if let Some(prefix) = pyenv_prefix(fs, env, bin) {
            return Some(prefix);
        }
    }
    if fs.exists(&bin.join("../pyvenv.cfg")) {
        return bin.parent().map(Path::to_path_buf);
    }
    // A system interpreter: its real location names the install prefix.
    let real = fs.canonical(&exe).unwrap_or(exe);
    real.parent()?.parent().map(Path::to_path_buf)
}

/// The prefix pyenv's shims run: PYENV_VERSION, else the nearest `.python-version` from the
/// working directory up (not under --root), else `$PYENV_ROOT/version`; the first version
/// named there that is installed under `$PYENV_ROOT/versions`.
fn pyenv_prefix(fs: &HostFs, env: &Env, shims: &Path) -> Option<PathBuf> {
    let root = env
        .get_str(envvars::PYENV_ROOT)
        .filter(|r| r.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| shims.parent().map(Path::to_path_buf))?;
    let mut names: Option<String> = env
        .get_str(envvars::PYENV_VERSION)
        .filter(|v| !v.is_empty());
    if names.is_none() && fs.root().is_none() {
        let mut dir = std::env::current_dir().ok();
        while let Some(d) = dir {
            if let Ok(f) = fs.read_text(&d.join(".python-version")) {
                names = Some(f.text);
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
    }
    let names = names.or_else(|| fs.read_text(&root.join("version")).ok().map(|f| f.text))?;
    names
        .split(|c: char| c.is_whitespace() || c == ':')
        .filter(|n| !n.is_empty() && *n != "system")
        .map(|n| root.join("versions").join(n))
        .find(|p| fs.metadata(p).is_ok_and(|m| m.is_dir()))
}

/// `lib/pythonX.Y/site-packages` under a prefix, plus Debian's dist-packages layout.
fn site_dirs(fs: &HostFs, prefix: &Path) -> Vec<(PathBuf, Option<String>)> {
    let mut out = Vec::new();
    // lib64: where Fedora/RHEL put platform-specific packages such as torch.
    for lib in [
        prefix.join("lib"),
        prefix.join("lib64"),
        prefix.join("local/lib"),
        prefix.join("local/lib64"),
    ] {
        let Ok(names) = fs.read_dir(&lib) else {
            continue;
        };
        for name in names {
            let name = name.to_string_lossy();
            let Some(version) = name.strip_prefix("python") else {
                continue;
            };
            if !version.starts_with('3') {
                continue;
            }
            for leaf in ["site-packages", "dist-packages"] {
                let dir = lib.join(name.as_ref()).join(leaf);
                if fs.metadata(&dir).is_ok_and(|m| m.is_dir()) {
                    out.push((dir, Some(version.to_string())));
                }
            }
        }
    }
    let debian = prefix.join("lib/python3/dist-packages");
    if fs.metadata(&debian).is_ok_and(|m| m.is_dir()) {
        out.push((debian, None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::python_sites::parse_dist_info;

    #[test]
    fn dist_info_names() {
        assert_eq!(
            parse_dist_info("nvidia_cuda_nvcc_cu12-12.4.131.dist-info"),
            Some(("nvidia-cuda-nvcc-cu12".into(), "12.4.131".into()))
        );
        assert_eq!(parse_dist_info("torch"), None);
        assert_eq!(parse_dist_info("-1.0.dist-info"), None);
        assert_eq!(normalize("Flash_Attn"), "flash-attn");
        assert_eq!(normalize("a..b__c"), "a-b-c");
    }
}
