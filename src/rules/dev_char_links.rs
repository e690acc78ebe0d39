//! GD069: NVIDIA device nodes without /dev/char/MAJ:MIN links on a host whose container
//! engine lets systemd manage container cgroups. runc hands systemd the device rules as
//! /dev/char paths and drops those that do not exist; after a `systemctl daemon-reload`
//! systemd re-applies the rules it knows, and running GPU containers lose their GPUs
//! ("Failed to initialize NVML: Unknown Error"). NVIDIA's notice:
//! github.com/NVIDIA/nvidia-container-toolkit/issues/48 (and nvidia-docker#1671 for the
//! udev rule quoted below).

use super::{container_host, Outcome, Rule};
use crate::codes;
use crate::facts::container_host::ContainerHost;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "dev_char_links",
    codes: &[codes::GD069],
    views: &[],
    checks: "NVIDIA device nodes have /dev/char links where systemd manages container cgroups",
    judges: &[],
    run,
};

pub const UDEV_RULE: &str = "ACTION==\"add\", DEVPATH==\"/bus/pci/drivers/nvidia\", RUN+=\"/usr/bin/nvidia-ctk system create-dev-char-symlinks --create-all\"";
pub const UDEV_FILE: &str = "/lib/udev/rules.d/71-nvidia-dev-char.rules";

/// Engines whose containers' cgroups systemd manages, with why. Docker defaults to the systemd
/// driver on cgroup v2 (moby/moby pull request 40846); CRI-O's default cgroup_manager is
/// systemd (cri-o internal/config/cgmgr: DefaultCgroupManager).
fn systemd_engines(host: &ContainerHost) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if host.docker_outside_snap() {
        let explicit = host
            .daemon_configs()
            .find_map(|(src, c)| Some((src, c.cgroup_driver.clone()?)));
        match explicit {
            Some((src, d)) if d == "systemd" => out.push((
                "Docker".into(),
                format!("native.cgroupdriver=systemd ({src})"),
            )),
            None if host.cgroup_v2() == Some(true) => out.push((
                "Docker".into(),
                format!(
                    "cgroup v2 ({}), where Docker's default cgroup driver is systemd",
                    host.cgroup.source
                ),
            )),
            _ => {}
        }
    }
    if !host.kubernetes.is_empty() {
        for c in &host.containerd {
            if c.config.get().and_then(|c| c.systemd_cgroup) == Some(true) {
                out.push((
                    format!("{}'s containerd", c.flavor),
                    format!("SystemdCgroup = true ({})", c.config.source),
                ));
            }
        }
    }
    if host.crio_installed() {
        let manager = host
            .crio
            .configs
            .iter()
            .filter_map(|f| Some((f.source.as_str(), f.get()?.cgroup_manager.clone()?)))
            .next_back();
        match manager {
            Some((src, m)) if m == "systemd" => out.push((
                "CRI-O".into(),
                format!("cgroup_manager = \"systemd\" ({src})"),
            )),
            None => out.push((
                "CRI-O".into(),
                "cgroup_manager unset: CRI-O's default is systemd".into(),
            )),
            _ => {}
        }
    }
    out
}

fn run(snap: &Snapshot) -> Outcome {
    let host = match container_host(snap) {
        Ok(h) => h,
        Err(na) => return na,
    };
    let legacy_path = ["nvidia-container-runtime-hook", "nvidia-container-runtime"]
        .iter()
        .any(|b| host.toolkit_binary(b).is_some());
    if !legacy_path {
        return Outcome::NotApplicable("no NVIDIA container runtime or hook installed".into());
    }
    if let Some(mode) = host.toolkit.config.get().and_then(|c| c.mode.as_deref()) {
        if mode == "cdi" {
            return Outcome::NotApplicable(
                "the NVIDIA runtime injects GPUs through CDI (mode = \"cdi\")".into(),
            );
        }
    }
    if let Some(m) = host.dev_char.listing.missing_info() {
        if m.reason != crate::fact::MissingReason::NotFound {
            return Outcome::NotApplicable(format!("/dev/char could not be listed: {}", m.detail));
        }
    }
    let unlinked: Vec<&str> = host
        .dev_char
        .nodes
        .iter()
        .filter(|n| n.link.is_none())
        .map(|n| n.path.as_str())
        .collect();
    let engines = systemd_engines(host);
    if unlinked.is_empty() || engines.is_empty() {
        return Outcome::Checked(vec![]);
    }
    let names: Vec<&str> = engines.iter().map(|(e, _)| e.as_str()).collect();
    let mut f = Finding::new(codes::GD069, Severity::Warning, "NVIDIA device nodes have no /dev/char links: GPU containers lose their GPUs on a systemd reload")
        .detail(format!("{} lets systemd manage container cgroups, and runc passes device rules to systemd as /dev/char/MAJ:MIN paths, dropping those that do not exist. {} of the NVIDIA device nodes have no such link, so after a `systemctl daemon-reload` (which package upgrades run) running GPU containers lose access to their GPUs: \"Failed to initialize NVML: Unknown Error\" until they are restarted.", names.join(" and "), unlinked.len()))
        .evidence(Subject::File("/dev/char".into()), format!("no /dev/char link for {}", unlinked.join(", ")), host.dev_char.listing.source.clone());
    for (engine, why) in &engines {
        f = f.context(format!("{engine}: {why}"), why.clone());
    }
    f = f
        .fix_cmd("Create the /dev/char links for every NVIDIA device node now", "sudo nvidia-ctk system create-dev-char-symlinks --create-all")
        .fix_cmd(format!("Create them whenever the driver loads, with the udev rule NVIDIA documents ({UDEV_FILE})"), crate::sh!("printf '%s\\n' {} | sudo tee {}", UDEV_RULE, UDEV_FILE))
        .fix_text("Or give containers GPUs through CDI (`--device nvidia.com/gpu=all`, or mode = \"cdi\" in /etc/nvidia-container-runtime/config.toml), or use the cgroupfs cgroup driver (Docker: \"exec-opts\": [\"native.cgroupdriver=cgroupfs\"] in /etc/docker/daemon.json)");
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;
    use crate::facts::container_host::*;
    use crate::testing::*;

    fn unlinked() -> Snapshot {
        let mut s = healthy();
        with_docker(&mut s);
        with_toolkit(&mut s, "1.17.8");
        for n in &mut host_mut(&mut s).dev_char.nodes {
            n.link = None;
        }
        s
    }

    #[test]
    fn linked_nodes_are_clean() {
        let mut s = healthy();
        with_docker(&mut s);
        with_toolkit(&mut s, "1.17.8");
        assert_clean(run(&s));
    }

    #[test]
    fn docker_on_cgroup_v2_without_links_is_a_warning() {
        let f = only(run(&unlinked()), codes::GD069, Severity::Warning);
        assert_eq!(
            first_cmd(&f),
            "sudo nvidia-ctk system create-dev-char-symlinks --create-all"
        );
        assert!(fixes_mention(&f, UDEV_FILE));
        assert!(fixes_mention(&f, "DEVPATH==\"/bus/pci/drivers/nvidia\""));
        assert!(evidence_mentions(&f, "/dev/nvidia0"));
    }

    #[test]
    fn cgroupfs_or_cdi_mode_is_clean() {
        let mut s = unlinked();
        host_mut(&mut s).cgroup = Fact::value("/sys/fs/cgroup", "v1".to_string());
        assert_clean(run(&s));
        let mut s = unlinked();
        if let crate::fact::Outcome::Value(c) =
            &mut host_mut(&mut s).docker.daemon_configs[0].outcome
        {
            c.cgroup_driver = Some("cgroupfs".into());
        }
        assert_clean(run(&s));
        let mut s = unlinked();
        host_mut(&mut s).toolkit.config = Fact::value(
            TOOLKIT_CONFIG,
            ToolkitConfig {
                mode: Some("cdi".into()),
                ..ToolkitConfig::default()
            },
        );
        assert_na(run(&s));
    }

    #[test]
    fn not_applicable_without_the_toolkit_or_in_a_container() {
        let mut s = healthy();
        with_docker(&mut s);
        assert_na(run(&s));
        let mut s = unlinked();
        in_container(&mut s, "kubernetes");
        assert_na(run(&s));
    }
}
