//! The install command for a pick, in the form each installer takes: pip (`--index-url`), uv
//! (`--torch-backend`, or an index in pyproject.toml for a uv project), conda/mamba (pip inside
//! the environment: PyTorch publishes no conda packages since 2.6), poetry and pdm (an explicit
//! source for the index). Printed, never run.

use serde::Serialize;

use super::machine::{Installer, Machine};
use super::{Pick, Pin};
use crate::facts::pytorch::PythonEnv;
use crate::findings::{sh_quote, Shell};

#[derive(Debug, Clone, Serialize)]
pub struct InstallCommand {
    pub installer: super::Installer,
    /// Shell lines, in order.
    pub lines: Vec<String>,
    /// For a project the installer manages (a uv or pdm pyproject.toml): what to add to the
    /// file, then the command that adds the packages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectSnippet>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectSnippet {
    pub path: String,
    pub text: String,
    pub command: String,
}

/// The environment a command installs into: its interpreter and, when a project tool
/// syncs it, the project. Without one (`recommend --fresh`, no environment found) a command
/// names the installer alone, as the user's shell finds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// `/home/alice/venv/bin/python`.
    pub python: Option<String>,
    /// The directory of the project whose `.venv` this is (pyproject.toml and a lockfile).
    pub project: Option<String>,
    /// A conda environment's prefix (its `conda-meta` directory was seen).
    pub conda_prefix: Option<String>,
}

impl Target {
    pub fn of(env: &PythonEnv) -> Target {
        let conda_prefix = env
            .installer
            .as_ref()
            .filter(|i| i.get().is_some_and(|n| n == "conda"))
            .and_then(|i| {
                std::path::Path::new(&i.source)
                    .parent()
                    .map(|p| p.display().to_string())
            });
        Target {
            python: env.interpreter.clone(),
            project: env.project.clone(),
            conda_prefix,
        }
    }

    /// pip as this environment runs it: `PYTHON -m pip` (no other environment's pip on PATH
    /// can take the command), else `pip`.
    fn pip(&self) -> String {
        match &self.python {
            Some(py) => format!("{} -m pip", sh_quote(py)),
            None => "pip".into(),
        }
    }

    /// uv's pip interface aimed at this interpreter (uv would otherwise pick the active or the
    /// working directory's environment).
    fn uv_python(&self) -> String {
        match &self.python {
            Some(py) => format!(" --python {}", sh_quote(py)),
            None => String::new(),
        }
    }
}

/// The installer that manages `env` (pip when nothing says otherwise).
pub fn installer_of(env: &PythonEnv) -> Installer {
    env.installer
        .as_ref()
        .and_then(|f| Installer::from_name(f.get()?))
        .unwrap_or(Installer::Pip)
}

/// `pip install REQS` (with `--force-reinstall --no-deps` when asked) in the form `env`'s
/// installer takes, aimed at `env`: what a rule prints for a wheel to install from PyPI.
pub fn install_into(env: &PythonEnv, reqs: &[String], reinstall: bool, no_deps: bool) -> Shell {
    let pins = reqs
        .iter()
        .map(|r| Pin {
            name: requirement_name(r).to_string(),
            version: String::new(),
            requirement: r.clone(),
        })
        .collect();
    let pick = Pick {
        label: String::new(),
        pins,
        index_url: None,
        torch_backend: None,
        cuda: None,
        reason: String::new(),
        source: String::new(),
        reinstall,
        no_deps,
        build_env: Vec::new(),
        no_build_isolation: false,
        uninstall: Vec::new(),
        conda_remove: Vec::new(),
    };
    let c = command(installer_of(env), &Target::of(env), &pick);
    Shell::recommended(&c.lines)
}

/// The distribution a requirement names (`nvidia-cublas-cu12>=12,<13` → `nvidia-cublas-cu12`).
fn requirement_name(req: &str) -> &str {
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    &req[..end]
}

/// Every installer's command, the one in use first.
pub fn all(m: &Machine, p: &Pick) -> Vec<InstallCommand> {
    let mut order = vec![m.installer.value];
    order.extend(
        Installer::ALL
            .into_iter()
            .filter(|i| *i != m.installer.value),
    );
    // The project is the one its own tool syncs; another installer's command is for the venv.
    order
        .into_iter()
        .map(|i| {
            let mut t = m.target.clone();
            if i != m.installer.value {
                t.project = None;
            }
            command(i, &t, p)
        })
        .collect()
}

/// A requirement quoted for the shell when it has brackets or comparison signs; one read
/// from an environment's METADATA that holds shell syntax is quoted as a single word.
fn quoted(req: &str) -> String {
    if req.contains(['$', '`', '"', '\\', '\'', '\n']) {
        sh_quote(req)
    } else if req.contains(['[', ']', '<', '>', '*', ' ', ';', '!', '~']) {
        format!("\"{req}\"")
    } else {
        req.to_string()
    }
}

fn env_prefix(p: &Pick) -> String {
    p.build_env
        .iter()
        .map(|(k, v)| format!("{k}={v} "))
        .collect()
}

/// The source name an index gets in pyproject.toml: "pytorch-cu126".
fn source_name(p: &Pick) -> String {
    match &p.torch_backend {
        Some(b) => format!("pytorch-{b}"),
        None => "extra".into(),
    }
}

/// The installer's command, after the removals the pick needs: conda's own torch (pip must
/// not install over it) and distributions that would stay loaded beside the new ones.
pub fn command(installer: Installer, t: &Target, p: &Pick) -> InstallCommand {
    let mut c = command_body(installer, t, p);
    let mut first = Vec::new();
    if !p.conda_remove.is_empty() {
        // Names read from the environment: quoted, like every value in a command.
        let names: Vec<String> = p.conda_remove.iter().map(|n| sh_quote(n)).collect();
        let env = match &t.conda_prefix {
            Some(prefix) => format!(" -p {}", sh_quote(prefix)),
            None => String::new(),
        };
        first.push(format!("conda remove{env} --force {}", names.join(" ")));
    }
    if !p.uninstall.is_empty() {
        let names: Vec<String> = p.uninstall.iter().map(|n| sh_quote(n)).collect();
        let names = names.join(" ");
        first.push(match (installer, &t.project) {
            (Installer::Pip | Installer::Conda, _) => format!("{} uninstall -y {names}", t.pip()),
            (Installer::Uv, Some(dir)) => format!("uv remove --project {} {names}", sh_quote(dir)),
            (Installer::Uv, None) => format!("uv pip uninstall{} {names}", t.uv_python()),
            (Installer::Poetry, _) => format!("poetry {}remove {names}", poetry_dir(t)),
            (Installer::Pdm, _) => format!("pdm remove {names}"),
        });
    }
    if !first.is_empty() {
        match (&mut c.project, c.lines.is_empty()) {
            (Some(proj), true) => {
                proj.command = format!("{} && {}", first.join(" && "), proj.command)
            }
            _ => {
                first.append(&mut c.lines);
                c.lines = first;
            }
        }
    }
    c
}

/// poetry's `--directory` for a known project: the command works from any directory.
fn poetry_dir(t: &Target) -> String {
    match &t.project {
        Some(dir) => format!("--directory {} ", sh_quote(dir)),
        None => String::new(),
    }
}

fn command_body(installer: Installer, t: &Target, p: &Pick) -> InstallCommand {
    let reqs: Vec<String> = p.pins.iter().map(|x| quoted(&x.requirement)).collect();
    let reqs = reqs.join(" ");
    let names: Vec<String> = p.pins.iter().map(|x| format!("\"{}\"", x.name)).collect();
    let env = env_prefix(p);
    // pip's and uv's install lines differ in the reinstall flag and how the index is named.
    let install_line = |tool: &str, reinstall_flag: &str| {
        let mut line = format!("{env}{tool} install");
        if p.reinstall {
            line.push_str(reinstall_flag);
        }
        if p.no_deps {
            line.push_str(" --no-deps");
        }
        if p.no_build_isolation {
            line.push_str(" --no-build-isolation");
        }
        line.push(' ');
        line.push_str(&reqs);
        line
    };
    let pip_like = |tool: &str| {
        let mut line = install_line(tool, " --force-reinstall");
        if let Some(u) = &p.index_url {
            line.push_str(&format!(" --index-url {}", sh_quote(u)));
        }
        line
    };
    match installer {
        Installer::Pip => InstallCommand {
            installer,
            lines: vec![pip_like(&t.pip())],
            project: None,
        },
        Installer::Conda => InstallCommand {
            installer,
            // pip inside the environment; conda's own solver knows nothing of it.
            lines: vec![pip_like(&match &t.python {
                Some(_) => t.pip(),
                None => "python -m pip".into(),
            })],
            project: None,
        },
        // A uv project: `uv add` changes pyproject.toml and uv.lock, then syncs; a change to
        // the venv alone is undone by the next `uv sync`.
        Installer::Uv if t.project.is_some() && !p.no_build_isolation => {
            let dir = t.project.as_deref().unwrap_or_default();
            let mut line = format!("{env}uv add --project {} {reqs}", sh_quote(dir));
            if let Some(u) = &p.index_url {
                line.push_str(&format!(" --index {}={}", source_name(p), sh_quote(u)));
            }
            if p.reinstall {
                for pin in &p.pins {
                    line.push_str(&format!(" --reinstall-package {}", sh_quote(&pin.name)));
                }
            }
            InstallCommand {
                installer,
                lines: vec![line],
                project: None,
            }
        }
        Installer::Uv => {
            // The index by URL, as for pip: `--torch-backend` is a preview feature of uv
            // that reaches download.pytorch.org whatever index or mirror is configured.
            let mut line = install_line("uv pip", " --reinstall");
            if let Some(u) = &p.index_url {
                line.push_str(&format!(" --index-url {}", sh_quote(u)));
            }
            line.push_str(&t.uv_python());
            let project = p.index_url.as_ref().map(|u| {
                let name = source_name(p);
                let sources: Vec<String> = p
                    .pins
                    .iter()
                    .map(|x| format!("{} = [{{ index = \"{name}\" }}]", x.name))
                    .collect();
                ProjectSnippet {
                    path: "pyproject.toml".into(),
                    text: format!(
                        "[[tool.uv.index]]\nname = \"{name}\"\nurl = \"{u}\"\nexplicit = true\n\n[tool.uv.sources]\n{}\n",
                        sources.join("\n")
                    ),
                    command: format!("{env}uv add {reqs}"),
                }
            });
            // A source build compiled against the installed torch: uv must not isolate it.
            let project = project.or_else(|| {
                p.no_build_isolation.then(|| {
                    let names: Vec<String> =
                        p.pins.iter().map(|x| format!("\"{}\"", x.name)).collect();
                    ProjectSnippet {
                        path: "pyproject.toml".into(),
                        text: format!(
                            "[tool.uv]\nno-build-isolation-package = [{}]\n",
                            names.join(", ")
                        ),
                        command: format!("{env}uv add {reqs}"),
                    }
                })
            });
            InstallCommand {
                installer,
                lines: vec![line],
                project,
            }
        }
        // poetry cannot turn build isolation off: pip in poetry's environment builds it.
        Installer::Poetry if p.no_build_isolation => InstallCommand {
            installer,
            lines: vec![pip_like(&match &t.python {
                Some(_) => t.pip(),
                None => "poetry run pip".into(),
            })],
            project: None,
        },
        Installer::Poetry => {
            let poetry = format!("poetry {}", poetry_dir(t));
            let mut lines = Vec::new();
            let mut add = format!("{env}{poetry}add");
            if let Some(u) = &p.index_url {
                let name = source_name(p);
                lines.push(format!(
                    "{poetry}source add --priority=explicit {} {}",
                    sh_quote(&name),
                    sh_quote(u)
                ));
                add.push_str(&format!(" --source {}", sh_quote(&name)));
            }
            add.push(' ');
            add.push_str(&reqs);
            lines.push(add);
            InstallCommand {
                installer,
                lines,
                project: None,
            }
        }
        Installer::Pdm => {
            let isolation = if p.no_build_isolation {
                " --no-isolation"
            } else {
                ""
            };
            let add = format!("{env}pdm add{isolation} {reqs}");
            match &p.index_url {
                Some(u) => InstallCommand {
                    installer,
                    lines: Vec::new(),
                    project: Some(ProjectSnippet {
                        path: "pyproject.toml".into(),
                        text: format!(
                            "[[tool.pdm.source]]\nname = \"{}\"\nurl = \"{u}\"\ninclude_packages = [{}]\nexclude_packages = [\"*\"]\n",
                            source_name(p),
                            names.join(", ")
                        ),
                        command: add,
                    }),
                },
                None => InstallCommand {
                    installer,
                    lines: vec![add],
                    project: None,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::Pin;

    fn pick(index: Option<&str>, backend: Option<&str>) -> Pick {
        Pick {
            label: "x".into(),
            pins: vec![Pin {
                name: "torch".into(),
                version: "2.15.0".into(),
                requirement: "torch==2.15.0".into(),
            }],
            index_url: index.map(String::from),
            torch_backend: backend.map(String::from),
            cuda: None,
            reason: String::new(),
            source: String::new(),
            reinstall: true,
            no_deps: false,
            build_env: Vec::new(),
            no_build_isolation: false,
            uninstall: Vec::new(),
            conda_remove: Vec::new(),
        }
    }

    #[test]
    fn each_installer_has_its_form() {
        let p = pick(
            Some("https://download.pytorch.org/whl/cu126"),
            Some("cu126"),
        );
        assert_eq!(
            command(Installer::Pip, &Target::default(), &p).lines,
            ["pip install --force-reinstall torch==2.15.0 --index-url https://download.pytorch.org/whl/cu126"]
        );
        assert_eq!(
            command(Installer::Uv, &Target::default(), &p).lines,
            ["uv pip install --reinstall torch==2.15.0 --index-url https://download.pytorch.org/whl/cu126"]
        );
        let poetry = command(Installer::Poetry, &Target::default(), &p).lines;
        assert_eq!(poetry[0], "poetry source add --priority=explicit pytorch-cu126 https://download.pytorch.org/whl/cu126");
        assert_eq!(poetry[1], "poetry add --source pytorch-cu126 torch==2.15.0");
        let pdm = command(Installer::Pdm, &Target::default(), &p)
            .project
            .unwrap();
        assert!(pdm.text.contains("include_packages = [\"torch\"]"));
        assert_eq!(pdm.command, "pdm add torch==2.15.0");
        assert_eq!(quoted("jax[cuda12]==0.7.2"), "\"jax[cuda12]==0.7.2\"");
    }

    #[test]
    fn commands_name_the_environment_they_install_into() {
        let p = pick(
            Some("https://download.pytorch.org/whl/cu126"),
            Some("cu126"),
        );
        let venv = Target {
            python: Some("/home/a/venv/bin/python".into()),
            ..Target::default()
        };
        assert_eq!(
            command(Installer::Pip, &venv, &p).lines,
            ["/home/a/venv/bin/python -m pip install --force-reinstall torch==2.15.0 --index-url https://download.pytorch.org/whl/cu126"]
        );
        assert_eq!(
            command(Installer::Uv, &venv, &p).lines,
            ["uv pip install --reinstall torch==2.15.0 --index-url https://download.pytorch.org/whl/cu126 --python /home/a/venv/bin/python"]
        );
        // A uv project changes pyproject.toml and uv.lock: `uv sync` keeps the fix.
        let project = Target {
            python: Some("/home/a/proj/.venv/bin/python".into()),
            project: Some("/home/a/proj".into()),
            conda_prefix: None,
        };
        assert_eq!(
            command(Installer::Uv, &project, &p).lines,
            ["uv add --project /home/a/proj torch==2.15.0 --index pytorch-cu126=https://download.pytorch.org/whl/cu126 --reinstall-package torch"]
        );
        let poetry = command(Installer::Poetry, &project, &p).lines;
        assert_eq!(
            poetry[1],
            "poetry --directory /home/a/proj add --source pytorch-cu126 torch==2.15.0"
        );
        // conda's own torch goes first, from that environment.
        let mut conda_pick = p.clone();
        conda_pick.conda_remove = vec!["pytorch".into(), "pytorch-cuda".into()];
        let conda = Target {
            python: Some("/opt/conda/envs/ml/bin/python".into()),
            project: None,
            conda_prefix: Some("/opt/conda/envs/ml".into()),
        };
        assert_eq!(
            command(Installer::Conda, &conda, &conda_pick).lines,
            [
                "conda remove -p /opt/conda/envs/ml --force pytorch pytorch-cuda",
                "/opt/conda/envs/ml/bin/python -m pip install --force-reinstall torch==2.15.0 --index-url https://download.pytorch.org/whl/cu126"
            ]
        );
        // A path with a space stays one word.
        let spaced = Target {
            python: Some("/home/a/my env/bin/python".into()),
            ..Target::default()
        };
        assert!(command(Installer::Pip, &spaced, &p).lines[0]
            .starts_with("'/home/a/my env/bin/python' -m pip "));
    }

    #[test]
    fn a_requirement_read_from_metadata_cannot_become_shell_syntax() {
        assert_eq!(quoted("evil==1$(reboot)"), "'evil==1$(reboot)'");
        assert_eq!(
            requirement_name("nvidia-cublas-cu12>=12,<13"),
            "nvidia-cublas-cu12"
        );
    }
}
