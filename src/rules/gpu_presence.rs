//! GD001: no NVIDIA GPU anywhere — said once, plainly, so the GPU rules can stay quiet.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "gpu_presence",
    codes: &[codes::GD001],
    views: &[super::View::Devices],
    checks: "an NVIDIA GPU is present",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    if snap.pci.is_none() && snap.device_nodes.is_none() && snap.kernel_module.is_none() {
        return Outcome::NotApplicable(
            "the pci, device_nodes and kernel_module probes did not run".into(),
        );
    }
    if snap.container_without_gpus() {
        return Outcome::NotApplicable("a container given no GPU (GD062)".into());
    }
    if snap.platform.as_ref().and_then(|p| p.wsl.version) == Some(1) {
        return Outcome::NotApplicable("WSL 1, which has no GPU path (GD088)".into());
    }
    if snap.nvidia_hardware_seen() {
        return Outcome::Checked(vec![]);
    }
    // On a machine without GPUs a check passes; `gpudoctor devices` examined nothing.
    let mut f = if snap.devices_requested() {
        Finding::new(
            codes::GD001,
            Severity::Error,
            "No NVIDIA GPU found: no GPU to show",
        )
    } else {
        Finding::new(
            codes::GD001,
            Severity::Info,
            "No NVIDIA GPU found: GPU checks skipped",
        )
    };
    f = f
        .detail("No NVIDIA PCI display device, no /dev/nvidia[0-9]* node and no GPU registered by the driver was found, so CUDA has nothing to run on. GPU-dependent checks were skipped.");
    if let Some(pci) = &snap.pci {
        match pci.devices.get() {
            Some(d) => {
                f = f.evidence(
                    Subject::Pci,
                    format!("{} NVIDIA display/3D functions", d.len()),
                    pci.devices.source.clone(),
                )
            }
            None => {
                let why = pci
                    .devices
                    .missing_info()
                    .map(|m| m.detail.clone())
                    .unwrap_or_default();
                f = f.evidence(
                    Subject::Pci,
                    format!("could not list PCI devices: {why}"),
                    pci.devices.source.clone(),
                )
            }
        }
    }
    if snap.device_nodes.is_some() {
        f = f.evidence(Subject::GpuNodes, "no /dev/nvidia[0-9]* nodes", "/dev");
    }
    let hidden_by_runtime = snap
        .env_value(crate::envvars::NVIDIA_VISIBLE_DEVICES.name)
        .filter(|v| matches!(v.trim(), "void" | "none" | ""));
    if let Some(v) = hidden_by_runtime {
        f = f.evidence(
            Subject::env("NVIDIA_VISIBLE_DEVICES"),
            format!("NVIDIA_VISIBLE_DEVICES={v:?}"),
            "environment",
        );
    }
    match snap.container_kind() {
        Some(kind) => {
            f = f
                .evidence(Subject::Container, kind.to_string(), "platform probe")
                .detail("This process runs in a container and no NVIDIA device was passed into it. The GPUs, if the host has any, must be requested when the container starts.")
                .fix_cmd("Docker: start the container with the GPUs (needs the NVIDIA Container Toolkit on the host)", "docker run --gpus all IMAGE")
                .fix_cmd("Podman (CDI): pass the GPUs by their CDI name", "podman run --device nvidia.com/gpu=all IMAGE")
                .fix_text("Kubernetes: request `nvidia.com/gpu` in the pod's resources.limits (the NVIDIA device plugin must run on the node)");
            if hidden_by_runtime.is_some() {
                f = f.fix_text("NVIDIA_VISIBLE_DEVICES is void/none: the NVIDIA runtime was told to pass no GPU; set it to `all` or to GPU indices/UUIDs");
            }
        }
        None => {
            f = f
                .fix_cmd("If this machine should have an NVIDIA GPU, check that the PCI bus sees it", "lspci -nn | grep -i nvidia")
                .fix_text("A GPU missing from lspci is a hardware, BIOS (above-4G decoding, PCIe slot) or virtual-machine passthrough problem, not a driver one");
        }
    }
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn healthy_host_has_a_gpu() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn no_gpu_on_a_host_is_an_info_pointing_at_lspci() {
        let f = only(run(&no_gpu()), codes::GD001, Severity::Info);
        assert!(f.title.contains("No NVIDIA GPU"), "{}", f.title);
        assert_eq!(first_cmd(&f), "lspci -nn | grep -i nvidia");
    }

    #[test]
    fn no_gpu_fails_devices_which_then_shows_nothing() {
        let mut s = no_gpu();
        s.nvml.as_mut().unwrap().requested = true;
        let f = only(run(&s), codes::GD001, Severity::Error);
        assert!(f.title.contains("no GPU to show"), "{}", f.title);
    }

    #[test]
    fn a_container_without_gpus_is_left_to_gd062() {
        let mut s = no_gpu();
        in_container(&mut s, "docker");
        assert!(assert_na(run(&s)).contains(codes::GD062));
    }

    #[test]
    fn no_gpu_in_a_container_says_how_to_pass_gpus_in() {
        // Only the PCI probe ran: whether nodes were passed in is unknown.
        let mut s = no_gpu();
        in_container(&mut s, "docker");
        s.device_nodes = None;
        set_env(&mut s, "NVIDIA_VISIBLE_DEVICES", "void");
        let f = only(run(&s), codes::GD001, Severity::Info);
        assert_eq!(first_cmd(&f), "docker run --gpus all IMAGE");
        assert!(fixes_mention(&f, "NVIDIA_VISIBLE_DEVICES is void"));
        assert!(evidence_mentions(&f, "NVIDIA_VISIBLE_DEVICES=\"void\""));
    }

    #[test]
    fn a_gpu_seen_only_by_its_device_nodes_counts() {
        let mut s = no_gpu();
        nodes_mut(&mut s).nodes.push(node("/dev/nvidia0", true));
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_the_hardware_probes() {
        assert_na(run(&without_hardware_probes(healthy())));
    }
}
