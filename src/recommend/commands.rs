//! The install command for a pick, in the form each installer takes: pip (`--index-url`), uv
//! (`--torch-backend`, or an index in pyproject.toml for a uv project), conda/mamba (pip inside
//! the environment: PyTorch publishes no conda packages since 2.6), poetry and pdm (an explicit
//! source for the index). Printed, never run.

use serde::Serialize;

use super::machine::{Installer, Machine};
use super::Pick;
use crate::findings::sh_quote;

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

/// Every installer's command, the one in use first.
pub fn all(m: &Machine, p: &Pick) -> Vec<InstallCommand> {
    let mut order = vec![m.installer.value];
    order.extend(
        Installer::ALL
            .into_iter()
            .filter(|i| *i != m.installer.value),
    );
    order.into_iter().map(|i| command(i, p)).collect()
}

/// A requirement quoted for the shell when it has brackets or comparison signs.
fn quoted(req: &str) -> String {
    if req.contains(['[', ']', '<', '>', '*', ' ', ';']) {
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
pub fn command(installer: Installer, p: &Pick) -> InstallCommand {
    let mut c = command_body(installer, p);
    let mut first = Vec::new();
    if !p.conda_remove.is_empty() {
        // Names read from the environment: quoted, like every value in a command.
        let names: Vec<String> = p.conda_remove.iter().map(|n| sh_quote(n)).collect();
        first.push(format!("conda remove --force {}", names.join(" ")));
    }
    if !p.uninstall.is_empty() {
        let names: Vec<String> = p.uninstall.iter().map(|n| sh_quote(n)).collect();
        let names = names.join(" ");
        first.push(match installer {
            Installer::Pip => format!("pip uninstall -y {names}"),
            Installer::Conda => format!("python -m pip uninstall -y {names}"),
            Installer::Uv => format!("uv pip uninstall {names}"),
            Installer::Poetry => format!("poetry remove {names}"),
            Installer::Pdm => format!("pdm remove {names}"),
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

fn command_body(installer: Installer, p: &Pick) -> InstallCommand {
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
            lines: vec![pip_like("pip")],
            project: None,
        },
        Installer::Conda => InstallCommand {
            installer,
            // pip inside the activated environment; conda's own solver knows nothing of it.
            lines: vec![pip_like("python -m pip")],
            project: None,
        },
        Installer::Uv => {
            let mut line = install_line("uv pip", " --reinstall");
            match (&p.torch_backend, &p.index_url) {
                (Some(b), _) => line.push_str(&format!(" --torch-backend={}", sh_quote(b))),
                (None, Some(u)) => line.push_str(&format!(" --index-url {}", sh_quote(u))),
                (None, None) => {}
            }
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
            lines: vec![pip_like("poetry run pip")],
            project: None,
        },
        Installer::Poetry => {
            let mut lines = Vec::new();
            let mut add = format!("{env}poetry add");
            if let Some(u) = &p.index_url {
                let name = source_name(p);
                lines.push(format!(
                    "poetry source add --priority=explicit {} {}",
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
            command(Installer::Pip, &p).lines,
            ["pip install --force-reinstall torch==2.15.0 --index-url https://download.pytorch.org/whl/cu126"]
        );
        assert_eq!(
            command(Installer::Uv, &p).lines,
            ["uv pip install --reinstall torch==2.15.0 --torch-backend=cu126"]
        );
        let poetry = command(Installer::Poetry, &p).lines;
        assert_eq!(poetry[0], "poetry source add --priority=explicit pytorch-cu126 https://download.pytorch.org/whl/cu126");
        assert_eq!(poetry[1], "poetry add --source pytorch-cu126 torch==2.15.0");
        let pdm = command(Installer::Pdm, &p).project.unwrap();
        assert!(pdm.text.contains("include_packages = [\"torch\"]"));
        assert_eq!(pdm.command, "pdm add torch==2.15.0");
        assert_eq!(quoted("jax[cuda12]==0.7.2"), "\"jax[cuda12]==0.7.2\"");
    }
}
