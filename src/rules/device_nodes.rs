//! GD007–GD008: the /dev/nvidia* nodes CUDA opens must exist and be read+write for the user.

use super::{requires_nvidia_hardware, Outcome, Rule};
use crate::codes;
use crate::facts::device_nodes::DeviceNode;
use crate::facts::kernel_module::MODULES_FILE;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "device_nodes",
    codes: &[codes::GD007, codes::GD008],
    views: &[super::View::Devices],
    checks: "the NVIDIA device nodes exist and this user can read and write them",
    judges: &[SubjectKind::DeviceNodes],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    if let Some(na) = requires_nvidia_hardware(snap) {
        return na;
    }
    let Some(nodes) = &snap.device_nodes else {
        return Outcome::NotApplicable("device_nodes probe did not run".into());
    };
    let mut out = Vec::new();
    if let Some(f) = missing_nodes(snap) {
        out.push(f);
    }
    // Nodes CUDA opens; nvidia-uvm-tools, nvidia-modeset and nvidia-caps are deliberately restricted.
    let denied: Vec<&DeviceNode> = nodes
        .nodes
        .iter()
        .filter(|n| n.present)
        .filter(|n| {
            let name = n.path.trim_start_matches("/dev/");
            name == "nvidiactl"
                || name == "nvidia-uvm"
                || name == "dxg"
                || crate::facts::device_nodes::is_gpu_node_name(name)
        })
        .filter(|n| n.access.as_ref().is_some_and(|a| !a.read_write))
        .collect();
    if !denied.is_empty() {
        out.push(denied_finding(snap, &denied));
    }
    Outcome::Checked(out)
}

fn missing_nodes(snap: &Snapshot) -> Option<Finding> {
    if snap.is_wsl() {
        return None;
    }
    let km = snap.kernel_module.as_ref()?;
    let nodes = snap.device_nodes.as_ref()?;
    if km.nvidia_loaded() != Some(true) {
        return None;
    }
    let ctl = nodes.is_present("/dev/nvidiactl");
    let gpu_nodes = nodes.gpu_nodes();
    // Each GPU the driver registered has a minor number: /dev/nvidia<minor> must exist for it.
    let expected: Vec<(String, u32)> = km
        .gpus
        .get()
        .map(|g| {
            g.iter()
                .filter_map(|g| g.device_minor.map(|m| (g.bus_id.clone(), m)))
                .collect()
        })
        .unwrap_or_default();
    let in_container = snap.container_kind().is_some();
    let missing: Vec<&(String, u32)> = if in_container {
        Vec::new() // a container holds only the GPUs it was given
    } else {
        expected
            .iter()
            .filter(|(_, m)| !nodes.is_present(&format!("/dev/nvidia{m}")))
            .collect()
    };
    let missing_minor: Vec<String> = missing
        .iter()
        .map(|(bus, m)| format!("/dev/nvidia{m} (GPU {bus})"))
        .collect();
    if ctl && !gpu_nodes.is_empty() && missing_minor.is_empty() {
        return None;
    }
    let severity = if ctl && !gpu_nodes.is_empty() {
        Severity::Warning
    } else {
        Severity::Error
    };
    let title = if !ctl && gpu_nodes.is_empty() {
        "nvidia is loaded but /dev/nvidiactl and /dev/nvidia[0-9]* are missing".to_string()
    } else if !ctl {
        "/dev/nvidiactl is missing".to_string()
    } else if gpu_nodes.is_empty() {
        "no /dev/nvidia[0-9]* node: CUDA sees no GPU".to_string()
    } else {
        format!("{} GPU device node(s) missing", missing_minor.len())
    };
    let mut f = Finding::new(codes::GD007, severity, title)
        .detail("The driver is loaded, but CUDA and NVML reach GPUs only through /dev/nvidiactl and one /dev/nvidiaN per GPU. On a host, nvidia-modprobe (run by nvidia-smi, nvidia-persistenced or a udev rule) creates them; in a container the runtime must pass them in.")
        .context("nvidia loaded", MODULES_FILE);
    f = if ctl {
        f.context("/dev/nvidiactl present", "/dev/nvidiactl")
    } else {
        f.evidence(
            Subject::node("/dev/nvidiactl"),
            "/dev/nvidiactl missing",
            "/dev/nvidiactl",
        )
    };
    f = f.evidence(
        Subject::GpuNodes,
        format!("{} /dev/nvidia[0-9]* node(s)", gpu_nodes.len()),
        "/dev",
    );
    for m in &missing_minor {
        f = f.evidence(
            Subject::GpuNodes,
            format!("missing {m}"),
            crate::facts::kernel_module::DRIVER_GPUS_DIR,
        );
    }
    if in_container {
        f = f
            .fix_cmd("Docker: start the container with the GPUs", "docker run --gpus all IMAGE")
            .fix_cmd("Podman (CDI)", "podman run --device nvidia.com/gpu=all IMAGE")
            .fix_text("Kubernetes: request nvidia.com/gpu in resources.limits; check the NVIDIA device plugin pod on the node");
    } else {
        // One -c per missing minor; with no per-GPU list from the driver, GPU 0.
        let minors: Vec<u32> = if !missing.is_empty() {
            missing.iter().map(|(_, m)| *m).collect()
        } else if !expected.is_empty() {
            expected.iter().map(|(_, m)| *m).collect()
        } else {
            vec![0]
        };
        let flags: Vec<String> = minors.iter().map(|m| format!("-c={m}")).collect();
        f = f
            .fix_cmd("Create the control and per-GPU nodes", crate::sh!("sudo nvidia-modprobe {}", flags))
            .fix_cmd("Or let nvidia-smi create them (it runs nvidia-modprobe)", "sudo nvidia-smi")
            .fix_text("To have them at every boot, enable nvidia-persistenced or install the driver's udev rules");
    }
    Some(f)
}

fn denied_finding(snap: &Snapshot, denied: &[&DeviceNode]) -> Finding {
    let ident = snap.identity.as_ref();
    let user = ident
        .and_then(|i| i.user_name.clone())
        .or_else(|| ident.map(|i| format!("uid {}", i.uid)))
        .unwrap_or_else(|| "this user".into());
    let gpu_denied: Vec<&&DeviceNode> = denied.iter().filter(|n| n.is_gpu_node()).collect();
    let mut names: Vec<String> = denied
        .iter()
        .filter(|n| !n.is_gpu_node())
        .map(|n| n.path.clone())
        .collect();
    match gpu_denied.len() {
        0 => {}
        1..=2 => names.extend(gpu_denied.iter().map(|n| n.path.clone())),
        n => names.push(format!("{n} GPU nodes (/dev/nvidia[0-9]*)")),
    }
    let mut f = Finding::new(
        codes::GD008,
        Severity::Error,
        format!("{user} cannot read and write {}", names.join(", ")),
    )
    .detail("CUDA and NVML open these nodes read+write. Without access, nvidia-smi says \"Failed to initialize NVML: Insufficient Permissions\" and CUDA finds no device. Distributions that create the nodes as 0660 root:video (openSUSE, some HPC images) need the user in that group; rootless containers drop supplementary groups unless told to keep them.");
    let describe = |n: &DeviceNode| {
        let how = n
            .access
            .as_ref()
            .map(|a| a.detail.clone())
            .unwrap_or_default();
        format!(
            "mode {} {}; {how}",
            n.mode.as_deref().unwrap_or("?"),
            n.owner_group()
        )
    };
    // GPU nodes that look alike are one line of evidence, not one per GPU.
    let gpu_alike = gpu_denied.len() > 2
        && gpu_denied
            .windows(2)
            .all(|w| describe(w[0]) == describe(w[1]));
    for n in denied {
        let is_gpu = n.is_gpu_node();
        if is_gpu && gpu_alike {
            continue;
        }
        f = f.evidence(
            Subject::node(&n.path),
            format!("{} {}", n.path, describe(n)),
            n.path.clone(),
        );
    }
    if gpu_alike {
        let first = &gpu_denied[0].path;
        let last = gpu_denied[gpu_denied.len() - 1]
            .path
            .trim_start_matches("/dev/");
        f = f.evidence(
            Subject::GpuNodes,
            format!(
                "{first}…{last} ({} nodes) {}",
                gpu_denied.len(),
                describe(gpu_denied[0])
            ),
            "/dev",
        );
    }
    if let Some(i) = ident {
        f = f.evidence(
            Subject::Identity,
            format!("uid {} groups {:?}", i.uid, i.groups),
            i.source.clone(),
        );
    }
    // The group that would grant access, when the group bits allow read+write.
    let grant_group = denied.iter().find_map(|n| {
        let mode = u32::from_str_radix(n.mode.as_deref()?, 8).ok()?;
        (mode & 0o060 == 0o060).then(|| n.group.clone().or(n.gid.map(|g| g.to_string())))?
    });
    let rootless = ident.is_some_and(|i| i.in_user_namespace == Some(true))
        || snap.container_kind() == Some("podman");
    if let Some(group) = &grant_group {
        let (who, who_arg) = match ident.and_then(|i| i.user_name.clone()) {
            Some(name) => (name.clone(), crate::sh!("{}", name)),
            None => ("the user".to_string(), "\"$USER\"".into()),
        };
        f = f.fix_cmd(
            format!("Add {who} to the {group} group, then log out and in again"),
            crate::sh!("sudo usermod -aG {} {}", group, who_arg),
        );
    }
    if rootless {
        f = f.fix_cmd(
            "Rootless podman: keep the caller's supplementary groups inside the container",
            "podman run --group-add keep-groups IMAGE",
        );
    }
    f.fix_cmd(
        "Or make the driver create world-accessible nodes (less strict), then rebuild the initramfs and reboot",
        "echo 'options nvidia NVreg_DeviceFileMode=0666' | sudo tee /etc/modprobe.d/nvidia-device-mode.conf",
    )
    .fix_text("On openSUSE the setting lives in /etc/modprobe.d/50-nvidia-default.conf (change 660 to 666, then mkinitrd)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn healthy_host_has_accessible_nodes() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn one_missing_gpu_node_is_a_warning_naming_its_minor() {
        let mut s = healthy();
        remove_node(&mut s, "/dev/nvidia1");
        let f = only(run(&s), codes::GD007, Severity::Warning);
        assert!(
            f.title.contains("1 GPU device node(s) missing"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo nvidia-modprobe -c=1");
    }

    #[test]
    fn missing_control_node_is_an_error() {
        let mut s = healthy();
        remove_node(&mut s, "/dev/nvidiactl");
        let f = only(run(&s), codes::GD007, Severity::Error);
        assert!(f.title.contains("/dev/nvidiactl is missing"), "{}", f.title);
    }

    #[test]
    fn no_nodes_at_all_creates_every_minor() {
        let mut s = healthy();
        nodes_mut(&mut s).nodes.clear();
        let f = only(run(&s), codes::GD007, Severity::Error);
        assert!(
            f.title
                .contains("/dev/nvidiactl and /dev/nvidia[0-9]* are missing"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo nvidia-modprobe -c=0 -c=1");
    }

    #[test]
    fn in_a_container_without_gpu_nodes_the_runtime_must_pass_them() {
        let mut s = healthy();
        in_container(&mut s, "docker");
        remove_node(&mut s, "/dev/nvidia0");
        remove_node(&mut s, "/dev/nvidia1");
        let f = only(run(&s), codes::GD007, Severity::Error);
        assert!(f.title.contains("no /dev/nvidia[0-9]* node"), "{}", f.title);
        assert_eq!(first_cmd(&f), "docker run --gpus all IMAGE");
    }

    #[test]
    fn denied_gpu_nodes_suggest_the_group() {
        let mut s = healthy();
        for p in ["/dev/nvidia0", "/dev/nvidia1"] {
            remove_node(&mut s, p);
            nodes_mut(&mut s).nodes.push(node(p, false));
        }
        let f = only(run(&s), codes::GD008, Severity::Error);
        assert!(
            f.title
                .contains("alice cannot read and write /dev/nvidia0, /dev/nvidia1"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo usermod -aG video alice");
    }

    #[test]
    fn many_denied_gpu_nodes_are_summarised_and_rootless_podman_keeps_groups() {
        let mut s = healthy();
        in_container(&mut s, "podman");
        nodes_mut(&mut s).nodes.retain(|n| !n.is_gpu_node());
        for i in 0..4 {
            nodes_mut(&mut s)
                .nodes
                .push(node(&format!("/dev/nvidia{i}"), false));
        }
        let f = findings(run(&s));
        let f = one_of(&f, codes::GD008, Severity::Error);
        assert!(f.title.contains("4 GPU nodes"), "{}", f.title);
        assert!(fixes_mention(f, "podman run --group-add keep-groups"));
    }

    #[test]
    fn restricted_nodes_that_cuda_does_not_open_are_fine() {
        let mut s = healthy();
        remove_node(&mut s, "/dev/nvidia-uvm-tools");
        nodes_mut(&mut s)
            .nodes
            .push(node("/dev/nvidia-uvm-tools", false));
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_gpu() {
        assert_na(run(&no_gpu()));
        assert_na(run(&without_hardware_probes(healthy())));
    }

    #[test]
    fn without_a_group_to_join_the_driver_setting_is_offered() {
        let mut s = healthy();
        s.identity = None;
        remove_node(&mut s, "/dev/nvidiactl");
        let mut n = node("/dev/nvidiactl", false);
        n.mode = Some("0600".into());
        nodes_mut(&mut s).nodes.push(n);
        let f = only(run(&s), codes::GD008, Severity::Error);
        assert!(
            f.title
                .starts_with("this user cannot read and write /dev/nvidiactl"),
            "{}",
            f.title
        );
        assert!(
            first_cmd(&f).contains("NVreg_DeviceFileMode=0666"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn group_fix_without_a_user_name_uses_the_shell_user() {
        let mut s = healthy();
        s.identity.as_mut().unwrap().user_name = None;
        remove_node(&mut s, "/dev/nvidia0");
        nodes_mut(&mut s).nodes.push(node("/dev/nvidia0", false));
        let f = only(run(&s), codes::GD008, Severity::Error);
        assert!(f.title.starts_with("uid 1000 cannot"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo usermod -aG video \"$USER\"");
    }
}
