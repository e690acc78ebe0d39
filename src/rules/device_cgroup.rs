//! GD065: a container whose GPU device nodes are there, with a permissive mode, but whose
//! device cgroup no longer lets it open them. The known cause: the host's container runtime
//! uses the systemd cgroup driver, the NVIDIA runtime added the GPUs' device rules behind
//! systemd's back, and a `systemctl daemon-reload` on the host rewrote the cgroup without them.
//! NVML then fails with "Unknown Error" and CUDA finds no device, until the container is
//! recreated (NVIDIA/nvidia-container-toolkit issue #48).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::container::NVIDIA_MAJOR;
use crate::facts::nvml::NvmlResult;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "device_cgroup",
    codes: &[codes::GD065],
    views: &[super::View::Devices],
    checks: "the container's device cgroup still lets it open the GPU nodes it was given",
    judges: &[SubjectKind::Container],
    run,
};

/// Why the container's GPU access looks revoked: (what, where), or None.
pub fn revoked(snap: &Snapshot) -> Option<Vec<(String, String)>> {
    if snap.container_kind().is_none() || snap.is_wsl() || snap.container_without_gpus() {
        return None;
    }
    let nodes = snap.device_nodes.as_ref()?;
    let present: Vec<_> = nodes
        .nodes
        .iter()
        .filter(|n| n.present && (n.path == "/dev/nvidiactl" || n.is_gpu_node()))
        .collect();
    if present.is_empty()
        || present
            .iter()
            .any(|n| n.access.as_ref().is_some_and(|a| !a.read_write))
    {
        return None; // no nodes, or a plain permission problem (GD008)
    }
    let cgroup = snap
        .platform
        .as_ref()
        .and_then(|p| p.container.given.as_ref())
        .map(|g| &g.device_cgroup);
    let numbers = |n: &&crate::facts::device_nodes::DeviceNode| {
        n.major.zip(n.minor).or_else(|| fixed_numbers(&n.path))
    };
    // A readable v1 list that allows every node acquits the cgroup, whatever NVML says.
    if let Some(rules) = cgroup.and_then(|c| c.get()) {
        if present
            .iter()
            .filter_map(numbers)
            .all(|(major, minor)| rules.allows(major, minor))
        {
            return None;
        }
    }
    let mut why = Vec::new();
    if let Some(n) = &snap.nvml {
        match &n.result {
            NvmlResult::InitFailed { code, message } if code == "unknown" => {
                why.push((format!("nvmlInit: {message}"), n.library.clone()))
            }
            NvmlResult::Ok { system } => {
                for g in &system.devices {
                    if let Some(e) = g
                        .handle_error
                        .as_deref()
                        .filter(|e| e.starts_with("unknown"))
                    {
                        why.push((format!("GPU {}: {e}", g.index), n.library.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(rules) = cgroup.and_then(|c| c.get()) {
        for n in &present {
            let Some((major, minor)) = numbers(n) else {
                continue;
            };
            if major == NVIDIA_MAJOR && !rules.allows(major, minor) {
                why.push((
                    format!(
                        "the device cgroup does not allow c {major}:{minor} ({})",
                        n.path
                    ),
                    cgroup.map(|c| c.source.clone()).unwrap_or_default(),
                ));
            }
        }
    }
    (!why.is_empty()).then_some(why)
}

/// The numbers the NVIDIA driver gives its nodes: nvidiactl 195:255, nvidiaN 195:N.
fn fixed_numbers(path: &str) -> Option<(u32, u32)> {
    if path == "/dev/nvidiactl" {
        return Some((NVIDIA_MAJOR, 255));
    }
    let n = path.strip_prefix("/dev/nvidia")?.parse().ok()?;
    Some((NVIDIA_MAJOR, n))
}

fn run(snap: &Snapshot) -> Outcome {
    if snap.container_kind().is_none() || snap.is_wsl() {
        return Outcome::NotApplicable("not in a container".into());
    }
    let Some(why) = revoked(snap) else {
        return Outcome::Checked(vec![]);
    };
    let mut f = Finding::new(codes::GD065, Severity::Error, "The container's GPU access was revoked by its device cgroup (NVML: Unknown Error)")
        .detail("The GPU device nodes are in this container and their mode allows access, yet opening them fails: the container's device cgroup no longer lists them. This is what happens when the host's container runtime uses the systemd cgroup driver and systemd reloads (`systemctl daemon-reload`, a package upgrade that triggers one): systemd rewrites the cgroup from its own unit, which never knew about the GPUs the NVIDIA runtime added. nvidia-smi prints \"Failed to initialize NVML: Unknown Error\" and CUDA finds no device until the container is recreated.")
        .evidence(Subject::GpuNodes, "GPU device nodes present and read+write by mode", "/dev");
    for (what, source) in why {
        f = f.evidence(Subject::Container, what, source);
    }
    if let Some(m) = snap
        .platform
        .as_ref()
        .and_then(|p| p.container.given.as_ref())
        .and_then(|g| g.device_cgroup.missing_info())
    {
        f = f.context(m.detail.clone(), "/sys/fs/cgroup");
    }
    f = f
        .fix_text("Now: recreate (or restart) the container; it gets the device rules again at start")
        .fix_text("On the host, so that a reload keeps them, create the /dev/char links systemd resolves device rules through: `sudo nvidia-ctk system create-dev-char-symlinks --create-all`, and NVIDIA's udev rule (/lib/udev/rules.d/71-nvidia-dev-char.rules) that runs it for new devices; `gpudoctor check` on the host reports them missing as GD069")
        .fix_text("On the host, or inject the GPUs through CDI, which declares the devices to the runtime itself: `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`")
        .fix_text("On the host, or switch the container runtime to the cgroupfs driver (Docker: \"exec-opts\": [\"native.cgroupdriver=cgroupfs\"] in /etc/docker/daemon.json)");
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;
    use crate::facts::container::{ContainerView, DeviceCgroup};
    use crate::testing::*;

    fn container() -> Snapshot {
        let mut s = healthy();
        in_container(&mut s, "docker");
        for n in &mut nodes_mut(&mut s).nodes {
            if n.path == "/dev/nvidiactl" {
                n.major = Some(195);
                n.minor = Some(255);
            } else if let Some(i) = n
                .path
                .strip_prefix("/dev/nvidia")
                .and_then(|x| x.parse::<u32>().ok())
            {
                n.major = Some(195);
                n.minor = Some(i);
            }
        }
        s
    }

    fn with_cgroup(s: &mut Snapshot, rules: &[&str]) {
        s.platform.as_mut().unwrap().container.given = Some(Box::new(ContainerView {
            nvidia_mounts: Fact::value("/proc/self/mountinfo", vec![]),
            device_cgroup: Fact::value(
                "/sys/fs/cgroup/devices/devices.list",
                DeviceCgroup {
                    version: 1,
                    rules: rules.iter().map(|r| r.to_string()).collect(),
                },
            ),
            pod_namespace: None,
            apptainer_nv_libs: vec![],
        }));
    }

    #[test]
    fn a_working_container_is_clean() {
        let mut s = container();
        with_cgroup(&mut s, &["c 195:* rwm", "c 1:3 rwm"]);
        assert_clean(run(&s));
    }

    #[test]
    fn nvml_unknown_error_with_the_nodes_present_is_the_daemon_reload_failure() {
        let mut s = container();
        set_nvml(
            &mut s,
            NvmlResult::InitFailed {
                code: "unknown".into(),
                message: "Unknown Error".into(),
            },
        );
        let f = only(run(&s), codes::GD065, Severity::Error);
        assert!(evidence_mentions(&f, "Unknown Error"));
        assert!(fixes_mention(
            &f,
            "sudo nvidia-ctk system create-dev-char-symlinks --create-all"
        ));
        // Host commands are advice here, never a command to run in the container.
        assert!(f.fix.iter().all(|x| x.command.is_none()), "{:?}", f.fix);
    }

    #[test]
    fn a_v1_list_allowing_every_node_leaves_nvmls_error_to_the_nvml_rule() {
        let mut s = container();
        with_cgroup(&mut s, &["a *:* rwm"]);
        set_nvml(
            &mut s,
            NvmlResult::InitFailed {
                code: "unknown".into(),
                message: "Unknown Error".into(),
            },
        );
        assert_clean(run(&s));
        assert!(revoked(&s).is_none());
    }

    #[test]
    fn a_cgroup_v1_list_without_the_gpu_is_enough() {
        let mut s = container();
        with_cgroup(&mut s, &["c 1:3 rwm", "c 136:* rwm"]);
        let f = only(run(&s), codes::GD065, Severity::Error);
        assert!(evidence_mentions(&f, "does not allow c 195:"));
    }

    #[test]
    fn not_on_a_host_nor_without_gpus() {
        let mut s = healthy();
        set_nvml(
            &mut s,
            NvmlResult::InitFailed {
                code: "unknown".into(),
                message: "Unknown Error".into(),
            },
        );
        assert_na(run(&s));
        in_container(&mut s, "docker");
        nodes_mut(&mut s).nodes.clear();
        assert_clean(run(&s));
    }
}
