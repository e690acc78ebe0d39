//! GD066: a container engine on a GPU host with no NVIDIA integration. Docker's `--gpus`
//! needs the toolkit's hook (or an `nvidia` runtime, or CDI with `features.cdi`), Podman
//! needs a CDI spec (or the OCI hook), and containerd or CRI-O under Kubernetes need an
//! `nvidia` runtime (or CDI). Without one, every GPU container fails to start.

use super::{container_host, toolkit_packaging, Outcome, Rule};
use crate::codes;
use crate::facts::container_host::{ContainerHost, DAEMON_JSON, PODMAN_HOOKS};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "container_engine",
    codes: &[codes::GD066],
    views: &[],
    checks: "every container engine on this GPU host can give containers the GPUs",
    judges: &[],
    run,
};

const HOOKS: &[&str] = &["nvidia-container-runtime-hook", "nvidia-container-runtime"];

fn run(snap: &Snapshot) -> Outcome {
    let host = match container_host(snap) {
        Ok(h) => h,
        Err(na) => return na,
    };
    let mut out = Vec::new();
    let has_spec = !host.nvidia_specs().is_empty();
    let pkg = toolkit_packaging(snap);
    if host.docker_outside_snap() {
        if let Some(f) = docker(host, has_spec, pkg.repository, pkg.install) {
            out.push(f);
        }
    }
    if host.podman_installed() && !has_spec && host.podman.nvidia_hooks.is_empty() {
        let podman = &host.podman.binaries[0];
        out.push(
            Finding::new(codes::GD066, Severity::Error, "Podman has no NVIDIA CDI specification: GPU containers will not start")
                .detail("Podman gives containers GPUs through CDI (`--device nvidia.com/gpu=all`), which needs a specification of the GPUs in /etc/cdi or /var/run/cdi, or through NVIDIA's OCI hook. There is neither, so GPU containers fail with \"Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all\".")
                .context(format!("Podman at {}", podman.path), podman.path.clone())
                .context("no CDI specification of kind nvidia.com/gpu", host.cdi.dirs.join(", "))
                .context("no NVIDIA OCI hook", PODMAN_HOOKS.join(", "))
                .fix_cmd("Add NVIDIA's package repository", pkg.repository)
                .fix_cmd("Install the NVIDIA Container Toolkit", pkg.install)
                .fix_cmd("Generate the CDI specification of this host's GPUs", "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml")
                .fix_cmd("Check that Podman sees them", "nvidia-ctk cdi list"),
        );
    }
    if !host.kubernetes.is_empty() {
        for c in &host.containerd {
            let Some(config) = c.config.get() else {
                continue;
            };
            if config.runtimes.contains_key("nvidia") || has_spec && config.enable_cdi == Some(true)
            {
                continue;
            }
            let (runtime, service) = match c.flavor.as_str() {
                "k3s" => ("containerd", "k3s"),
                "rke2" => ("containerd", "rke2-server"),
                _ => ("containerd", "containerd"),
            };
            let mut f = Finding::new(codes::GD066, Severity::Error, format!("{}'s containerd has no nvidia runtime: GPU pods will not start", c.flavor))
                .detail(format!("This host is a Kubernetes node, and the containerd configuration {} defines no `nvidia` runtime{}. The NVIDIA device plugin and GPU pods need that runtime (or CDI) to get the GPUs; without it pods fail to start or see no GPU.", c.config.source, if has_spec { " and does not enable CDI" } else { " and there is no CDI specification" }))
                .evidence(Subject::File(c.config.source.clone()), format!("runtimes: {}", names(config.runtimes.keys())), c.config.source.clone())
                .context(format!("Kubernetes: {}", host.kubernetes.join(", ")), host.kubernetes.join(", "));
            if c.flavor == "containerd" {
                f = f
                    .fix_cmd("Install the NVIDIA Container Toolkit", pkg.install)
                    .fix_cmd(
                        "Add the nvidia runtime to containerd",
                        crate::sh!("sudo nvidia-ctk runtime configure --runtime={}", runtime),
                    )
                    .fix_cmd(
                        "Restart containerd",
                        crate::sh!("sudo systemctl restart {}", service),
                    );
            } else {
                f = f
                    .fix_cmd("Install the NVIDIA Container Toolkit (k3s and RKE2 add an nvidia runtime when they find nvidia-container-runtime)", pkg.install)
                    .fix_cmd(format!("Restart {} so it regenerates its containerd configuration", c.flavor), crate::sh!("sudo systemctl restart {}", service));
            }
            out.push(f);
        }
        if host.crio_installed() {
            let read: Vec<_> = host
                .crio
                .configs
                .iter()
                .filter_map(|f| Some((f.source.as_str(), f.get()?)))
                .collect();
            let nvidia = read.iter().any(|(_, c)| c.runtimes.contains_key("nvidia"));
            if !nvidia && !has_spec && host.podman.nvidia_hooks.is_empty() {
                let sources = if read.is_empty() {
                    "/etc/crio/crio.conf".to_string()
                } else {
                    read.iter().map(|(s, _)| *s).collect::<Vec<_>>().join(", ")
                };
                out.push(
                    Finding::new(codes::GD066, Severity::Error, "CRI-O has no nvidia runtime: GPU pods will not start")
                        .detail("This host is a Kubernetes node running CRI-O, whose configuration defines no `nvidia` runtime, and there is neither a CDI specification of the GPUs nor NVIDIA's OCI hook. GPU pods fail to start or see no GPU.")
                        .evidence(Subject::File(sources.clone()), "no [crio.runtime.runtimes.nvidia]", sources)
                        .fix_cmd("Install the NVIDIA Container Toolkit", pkg.install)
                        .fix_cmd("Add the nvidia runtime to CRI-O", "sudo nvidia-ctk runtime configure --runtime=crio")
                        .fix_cmd("Restart CRI-O", "sudo systemctl restart crio"),
                );
            }
        }
    }
    Outcome::Checked(out)
}

fn names<'a>(it: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = it.map(String::as_str).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Docker's `--gpus` works through the toolkit's hook, an `nvidia` runtime, or CDI.
fn docker(
    host: &ContainerHost,
    has_spec: bool,
    repository: &'static str,
    install: &'static str,
) -> Option<Finding> {
    let hook = HOOKS.iter().find_map(|h| host.toolkit_binary(h));
    let runtime = host
        .daemon_configs()
        .any(|(_, c)| c.runtimes.contains_key("nvidia"));
    let cdi = has_spec && host.daemon_configs().any(|(_, c)| c.cdi == Some(true));
    if hook.is_some() || runtime || cdi {
        return None;
    }
    let docker = host
        .docker
        .packages
        .first()
        .map(|p| {
            (
                format!("Docker ({} {})", p.name, p.version),
                p.source.clone(),
            )
        })
        .or_else(|| {
            host.docker
                .binaries
                .first()
                .map(|b| (format!("Docker at {}", b.path), b.path.clone()))
        })?;
    let daemon = host
        .docker
        .daemon_configs
        .iter()
        .find(|f| f.source == DAEMON_JSON)
        .map(|f| match (f.get(), f.missing_info()) {
            (Some(c), _) => format!("runtimes: {}", names(c.runtimes.keys())),
            (_, Some(m)) => format!("{} ({})", m.reason.as_str(), m.detail),
            _ => String::new(),
        })
        .unwrap_or_default();
    Some(
        Finding::new(codes::GD066, Severity::Error, "Docker has no NVIDIA integration: `docker run --gpus` will fail")
            .detail("Docker gives containers GPUs through the NVIDIA Container Toolkit: its hook (nvidia-container-runtime-hook), an `nvidia` runtime in daemon.json, or CDI specifications with `features.cdi`. None is installed or configured, so `docker run --gpus all` fails with `docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]]`.")
            .context(docker.0, docker.1)
            .context("no nvidia-container-runtime-hook or nvidia-container-runtime", crate::facts::container_host::BIN_DIRS.join(", "))
            .evidence(Subject::File(DAEMON_JSON.into()), format!("daemon.json: {daemon}"), DAEMON_JSON)
            .fix_cmd("Add NVIDIA's package repository", repository)
            .fix_cmd("Install the NVIDIA Container Toolkit", install)
            .fix_cmd("Register the nvidia runtime with Docker", "sudo nvidia-ctk runtime configure --runtime=docker")
            .fix_cmd("Restart Docker", "sudo systemctl restart docker"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;
    use crate::facts::container_host::*;
    use crate::testing::*;

    #[test]
    fn no_engine_is_clean_and_docker_with_the_toolkit_is_clean() {
        assert_clean(run(&healthy()));
        let mut s = healthy();
        with_docker(&mut s);
        with_toolkit(&mut s, "1.17.8");
        assert_clean(run(&s));
    }

    #[test]
    fn docker_without_the_toolkit_is_an_error() {
        let mut s = healthy();
        with_docker(&mut s);
        let f = only(run(&s), codes::GD066, Severity::Error);
        assert!(
            f.detail.contains("could not select device driver"),
            "{}",
            f.detail
        );
        assert!(first_cmd(&f).contains("nvidia.github.io/libnvidia-container"));
        assert!(fixes_mention(
            &f,
            "sudo apt-get update && sudo apt-get install -y nvidia-container-toolkit"
        ));
        assert!(fixes_mention(
            &f,
            "sudo nvidia-ctk runtime configure --runtime=docker"
        ));
        assert!(fixes_mention(&f, "sudo systemctl restart docker"));
    }

    #[test]
    fn the_hook_alone_or_an_nvidia_runtime_is_integration() {
        let mut s = healthy();
        with_docker(&mut s);
        host_mut(&mut s).toolkit.binaries = vec![bin("nvidia-container-runtime-hook")];
        assert_clean(run(&s));
    }

    #[test]
    fn fixes_follow_the_distribution() {
        let mut s = healthy();
        with_docker(&mut s);
        if let crate::fact::Outcome::Value(os) = &mut s.platform.as_mut().unwrap().os.outcome {
            os.id = Some("rocky".into());
        }
        let f = only(run(&s), codes::GD066, Severity::Error);
        assert!(fixes_mention(
            &f,
            "sudo dnf install -y nvidia-container-toolkit"
        ));
    }

    #[test]
    fn podman_without_a_spec_or_hook_is_an_error_and_a_spec_fixes_it() {
        let mut s = healthy();
        host_mut(&mut s).podman.binaries = vec![bin("podman")];
        let f = only(run(&s), codes::GD066, Severity::Error);
        assert!(f.detail.contains("unresolvable CDI devices"));
        assert!(fixes_mention(
            &f,
            "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"
        ));
        nvidia_spec(&mut s, "/etc/cdi/nvidia.yaml", DRIVER, &[]);
        assert_clean(run(&s));
    }

    #[test]
    fn containerd_on_a_kubernetes_node_needs_an_nvidia_runtime() {
        let mut s = healthy();
        let h = host_mut(&mut s);
        h.kubernetes = vec!["/var/lib/kubelet".into()];
        h.containerd = vec![Containerd {
            flavor: "containerd".into(),
            binaries: vec![bin("containerd")],
            config: Fact::value("/etc/containerd/config.toml", ContainerdConfig::default()),
        }];
        let f = only(run(&s), codes::GD066, Severity::Error);
        assert!(fixes_mention(
            &f,
            "sudo nvidia-ctk runtime configure --runtime=containerd"
        ));
        // Docker's own containerd on a machine that is not a node is not judged.
        host_mut(&mut s).kubernetes.clear();
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_in_a_container_or_without_a_gpu() {
        let mut s = healthy();
        with_docker(&mut s);
        in_container(&mut s, "docker");
        assert_na(run(&s));
        let mut s = no_gpu();
        with_docker(&mut s);
        assert_na(run(&s));
        let mut s = healthy();
        s.container_host = None;
        assert_na(run(&s));
    }
}
