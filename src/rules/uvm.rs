//! GD006: CUDA needs nvidia_uvm and /dev/nvidia-uvm; without them cuInit fails with
//! CUDA_ERROR_UNKNOWN (999) even though nvidia-smi works.

use super::{requires_nvidia_hardware, Outcome, Rule};
use crate::codes;
use crate::facts::kernel_module::MODULES_FILE;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "uvm",
    codes: &[codes::GD006],
    views: &[super::View::Devices, super::View::Smoke],
    checks: "nvidia_uvm is loaded and /dev/nvidia-uvm exists",
    judges: &[SubjectKind::UvmModule],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    if let Some(na) = requires_nvidia_hardware(snap) {
        return na;
    }
    if snap.is_wsl() {
        return Outcome::NotApplicable("WSL does not use nvidia_uvm".into());
    }
    let (Some(km), Some(nodes)) = (&snap.kernel_module, &snap.device_nodes) else {
        return Outcome::NotApplicable("kernel_module or device_nodes probe did not run".into());
    };
    let nvidia_present = km.nvidia_loaded() == Some(true) || nodes.is_present("/dev/nvidiactl");
    if !nvidia_present {
        return Outcome::NotApplicable("the nvidia driver is not loaded (see GD002/GD003)".into());
    }
    let uvm_loaded = km.is_loaded("nvidia_uvm");
    let node_present = nodes.is_present("/dev/nvidia-uvm");
    if uvm_loaded != Some(false) && node_present {
        return Outcome::Checked(vec![]);
    }
    let in_container = snap.container_kind().is_some();
    let title = match (uvm_loaded, node_present) {
        (Some(false), _) => "nvidia_uvm is not loaded: CUDA cannot initialise",
        _ => "/dev/nvidia-uvm is missing: CUDA cannot initialise",
    };
    let mut f = Finding::new(codes::GD006, Severity::Error, title)
        .detail("CUDA needs the Unified Memory module and its device node. Without them nvidia-smi still works (it only needs /dev/nvidiactl) but cuInit fails: PyTorch says \"CUDA unknown error - this may be due to an incorrectly set up environment\" and finds zero devices. It happens when nothing ran nvidia-modprobe -u (headless servers, podman), and after a suspend/resume.");
    f = match uvm_loaded {
        Some(false) => f.evidence(
            Subject::module("nvidia_uvm"),
            "nvidia_uvm not loaded",
            MODULES_FILE,
        ),
        Some(true) => f.context("nvidia_uvm loaded", MODULES_FILE),
        None => f.evidence(
            Subject::module("nvidia_uvm"),
            "nvidia_uvm: unknown (/proc/modules unreadable)",
            MODULES_FILE,
        ),
    };
    f = f.evidence(
        Subject::node("/dev/nvidia-uvm"),
        if node_present {
            "/dev/nvidia-uvm present"
        } else {
            "/dev/nvidia-uvm missing"
        },
        "/dev/nvidia-uvm",
    );
    if nodes.is_present("/dev/nvidiactl") {
        f = f.context(
            "/dev/nvidiactl present (the driver itself is reachable)",
            "/dev/nvidiactl",
        );
    }
    if in_container && uvm_loaded == Some(true) {
        f = f
            .fix_text("The host has nvidia_uvm loaded but this container was not given /dev/nvidia-uvm: recreate it with the NVIDIA runtime (--gpus all) or pass the node explicitly")
            .fix_cmd("Pass the UVM nodes explicitly", "docker run --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools IMAGE")
            .fix_cmd("With CDI (podman, containerd), regenerate the spec on the host after loading nvidia_uvm", "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml");
    } else {
        f = f
            .fix_cmd(
                "Load the module and create the device nodes",
                "sudo nvidia-modprobe -u -c=0",
            )
            .fix_cmd("Or load it with modprobe", "sudo modprobe nvidia_uvm")
            .fix_cmd(
                "After a suspend/resume, reload it",
                "sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm",
            );
        if in_container {
            f = f.fix_text("In a container: do this on the host, make sure the host has /dev/nvidia-uvm before the container starts, and pass it in (CDI spec or --device)");
        }
    }
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn healthy_host_has_uvm() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn module_not_loaded_is_an_error_with_nvidia_modprobe() {
        let mut s = healthy();
        remove_module(&mut s, "nvidia_uvm");
        let f = only(run(&s), codes::GD006, Severity::Error);
        assert!(f.title.contains("nvidia_uvm is not loaded"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo nvidia-modprobe -u -c=0");
    }

    #[test]
    fn node_missing_with_the_module_loaded() {
        let mut s = healthy();
        remove_node(&mut s, "/dev/nvidia-uvm");
        let f = only(run(&s), codes::GD006, Severity::Error);
        assert!(
            f.title.contains("/dev/nvidia-uvm is missing"),
            "{}",
            f.title
        );
    }

    #[test]
    fn in_a_container_the_node_must_be_passed_in() {
        let mut s = healthy();
        in_container(&mut s, "docker");
        remove_node(&mut s, "/dev/nvidia-uvm");
        let f = only(run(&s), codes::GD006, Severity::Error);
        assert!(
            first_cmd(&f).contains("--device /dev/nvidia-uvm"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn not_applicable_on_wsl_without_gpu_or_driver() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        make_wsl(&mut s);
        assert_na(run(&s));
        let mut s = healthy();
        unload_nvidia(&mut s);
        remove_node(&mut s, "/dev/nvidiactl");
        assert_na(run(&s));
    }
}
