//! GD032: a GPU NVML counts but cannot open or query (fallen off the bus, Xid 79; no
//! permission; an adapter the driver could not initialise), or for which the driver asks
//! for a recovery action (reset, reboot, drain).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::nvml::Gpu;
use crate::findings::{Finding, Severity};
use crate::snapshot::{Place, Snapshot};
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "gpu_recovery",
    codes: &[codes::GD032],
    views: &[super::View::Devices],
    checks: "every GPU NVML counts can be opened and answers, and none asks for a reset or reboot",
    judges: &[SubjectKind::Gpu],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    let mut out = Vec::new();
    for g in &sys.devices {
        let lost = g
            .handle_error
            .as_deref()
            .filter(|e| e.starts_with("gpu_is_lost"));
        if let Some(e) = lost {
            out.push(
                Finding::new(codes::GD032, Severity::Error, format!("GPU {} has fallen off the bus (NVML: GPU is lost)", g.index))
                    .detail("The driver lost contact with the GPU (Xid 79, \"GPU has fallen off the bus\"). Every process using it fails, and CUDA calls on it may hang. Causes: power delivery, overheating, a failing riser or slot, or the GPU itself.")
                    .evidence(Subject::Gpu(g.index), e.to_string(), "NVML")
                    .fix_cmd("Confirm in the kernel log", "sudo dmesg | grep -iE 'xid|fallen off'")
                    .fix_cmd("Drain the node, then reset the GPU (or reboot); if it recurs, reseat or replace the card (RMA)", super::identity::reset_command(snap, g)),
            );
            continue;
        }
        if let Some(e) = &g.handle_error {
            out.push(unreachable(snap, g.index, e, "NVML cannot open it"));
            continue;
        }
        if let Some(e) = every_query_failed(g) {
            out.push(unreachable(
                snap,
                g.index,
                &e,
                "NVML opened it but every query failed",
            ));
            continue;
        }
        if let Some(action) = g.recovery_action.get().filter(|a| a.as_str() != "none") {
            let (severity, what) = match action.as_str() {
                "gpu_reset" => (Severity::Error, "a GPU reset"),
                "node_reboot" => (Severity::Error, "a node reboot"),
                "drain_p2p" => (Severity::Warning, "draining peer-to-peer traffic"),
                "drain_and_reset" => (Severity::Error, "draining the GPU and resetting it"),
                _ => (Severity::Warning, "a recovery action"),
            };
            let f = Finding::new(codes::GD032, severity, format!("{} needs {what} (driver recovery action: {action})", g.label()))
                    .detail("The driver has seen an error it cannot recover from by itself and reports the action that will (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION). Until then jobs on this GPU fail or run degraded.")
                    .evidence(Subject::Gpu(g.index), format!("recovery action {action}"), "NVML");
            out.push(match action.as_str() {
                "node_reboot" => f.fix_text("Drain the node and reboot it"),
                "drain_p2p" => f.fix_cmd(
                    "Stop jobs that use peer-to-peer/NVLink on this GPU, then reset it when idle",
                    super::identity::reset_command(snap, g),
                ),
                _ => f.fix_cmd(
                    "Drain the GPU, then reset it",
                    super::identity::reset_command(snap, g),
                ),
            });
        }
    }
    Outcome::Checked(out)
}

/// The first error when NVML answered none of the GPU's facts (a handle that opens but a
/// GPU that does not respond).
fn every_query_failed(g: &Gpu) -> Option<String> {
    let errors = [
        g.name.error(),
        g.uuid.error(),
        g.pci_bus_id.error(),
        g.memory.error(),
        g.compute_capability.error(),
    ];
    if errors.iter().all(Option::is_some) {
        errors[0].map(str::to_string)
    } else {
        None
    }
}

/// A GPU NVML counts but cannot use: what NVML's error means where gpudoctor runs, and
/// the fixes that can work there.
fn unreachable(snap: &Snapshot, index: u32, error: &str, what: &str) -> Finding {
    let code = error.split(':').next().unwrap_or(error).trim();
    let place = snap.place();
    let meaning = match code {
        "no_permission" => "NVML may not open the GPU: this user cannot open its device node, or the container's device rules do not include it.",
        "insufficient_power" => "The board reports that its auxiliary power cables are not connected or not delivering enough power; the driver will not use it.",
        "irq_issue" => "The driver gets no interrupts from the GPU (MSI routing); in a VM this is usually the passthrough or the host's IOMMU/interrupt remapping.",
        "reset_required" => "The GPU needs a reset before it can be used again.",
        "timeout" => "The GPU did not answer NVML in time: the driver or the GPU is hung.",
        "corrupted_inforom" => "The GPU's InfoROM is corrupted; the driver may refuse the GPU or lose ECC and power settings.",
        "in_use" => "Another process holds the GPU in a way that blocks NVML.",
        _ => "The driver knows the GPU exists (it counts it) but could not initialise or talk to it. The kernel log says why (\"RmInitAdapter failed\", an Xid, a firmware error).",
    };
    let mut f = Finding::new(
        codes::GD032,
        Severity::Error,
        format!("GPU {index}: {what} ({error})"),
    )
    .detail(format!(
        "{meaning} Every CUDA program that touches this GPU fails, and with CUDA_VISIBLE_DEVICES unset that is every program that enumerates the GPUs."
    ))
    .evidence(Subject::Gpu(index), error.to_string(), "NVML (nvmlDeviceGetHandleByIndex and queries)");
    f = match (place, code) {
        (Place::Container, "no_permission") => f
            .fix_cmd("Start the container with the GPUs passed in by the NVIDIA runtime (on the host)", "docker run --gpus all IMAGE")
            .fix_text("With podman or CDI, pass the devices explicitly: --device nvidia.com/gpu=all"),
        (Place::KubernetesPod, "no_permission") => f
            .fix_text("Request the GPUs in the pod spec (resources.limits: nvidia.com/gpu: N) instead of mounting /dev/nvidia* by hand; the device plugin then grants access"),
        (Place::Host | Place::VirtualMachine, "no_permission") => f
            .fix_cmd("See who may open the GPU's node", crate::sh!("ls -l /dev/nvidia{} /dev/nvidiactl", index))
            .fix_text("Add the user to the group that owns the nodes (often video or render), then log in again"),
        (Place::Host, "insufficient_power") => f
            .fix_text("Power the node off and connect (or reseat) the GPU's auxiliary power cables"),
        (Place::Host | Place::VirtualMachine, "reset_required") => f
            .fix_cmd("Reset the GPU when no process uses it", crate::sh!("sudo nvidia-smi -r -i {}", index)),
        (Place::VirtualMachine, _) => f
            .fix_cmd("Read the driver's reason in the guest's kernel log", "sudo dmesg | grep -iE 'nvrm|xid|rminitadapter'")
            .fix_text("On the hypervisor, check the passthrough: the GPU bound to vfio-pci, its IOMMU group passed whole, MSI/interrupt remapping enabled, and for vGPU a valid licence and a guest driver of the host's branch"),
        (Place::Container | Place::KubernetesPod, _) => f
            .fix_text("The GPU failed on the host, not in this container: run `gpudoctor check` on the host (or `kubectl debug node/NODE`), and read the host's kernel log for Xid errors"),
        (Place::Wsl, _) => f
            .fix_text("Update the Windows NVIDIA driver and restart WSL (wsl --shutdown in Windows); Device Manager on Windows says whether the GPU works there"),
        (Place::Host, _) => f
            .fix_cmd("Read the driver's reason in the kernel log", "sudo dmesg | grep -iE 'nvrm|xid|rminitadapter'")
            .fix_cmd("Drain the node, then reset the GPU (or reboot); if it recurs, reseat or replace the card", crate::sh!("sudo nvidia-smi -r -i {}", index)),
    };
    f
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::Field;
    use crate::testing::*;

    fn action(a: &str) -> Snapshot {
        let mut s = healthy();
        nvml_gpu(&mut s, 1).recovery_action = Field::Value(a.into());
        s
    }

    #[test]
    fn healthy_gpus_need_no_recovery() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_lost_gpu_is_an_error() {
        let mut s = healthy();
        nvml_gpu(&mut s, 0).handle_error = Some("gpu_is_lost: GPU is lost".into());
        let f = only(run(&s), codes::GD032, Severity::Error);
        assert!(
            f.title.contains("GPU 0 has fallen off the bus"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo dmesg | grep -iE 'xid|fallen off'");
        assert_eq!(f.fix[1].command.as_deref(), Some("sudo nvidia-smi -r -i 0"));
    }

    #[test]
    fn recovery_actions_by_severity() {
        let f = only(run(&action("node_reboot")), codes::GD032, Severity::Error);
        assert!(f.title.contains("needs a node reboot"), "{}", f.title);
        assert_eq!(f.fix[0].text, "Drain the node and reboot it");
        let f = only(run(&action("gpu_reset")), codes::GD032, Severity::Error);
        assert!(f.title.contains("GPU 1"), "{}", f.title);
        // The GPU is named in the command, not left as a placeholder to fill in.
        assert_eq!(first_cmd(&f), "sudo nvidia-smi -r -i 1");
        assert!(!f.fix.iter().any(|x| x.text.contains("<index>")));
        let f = only(run(&action("drain_p2p")), codes::GD032, Severity::Warning);
        assert_eq!(first_cmd(&f), "sudo nvidia-smi -r -i 1");
        let f = only(
            run(&action("future_action")),
            codes::GD032,
            Severity::Warning,
        );
        assert!(f.title.contains("a recovery action"), "{}", f.title);
    }

    #[test]
    fn not_applicable_without_nvml() {
        assert_na(run(&no_gpu()));
    }

    fn unopenable(error: &str) -> Snapshot {
        let mut s = healthy();
        nvml_gpu(&mut s, 1).handle_error = Some(error.into());
        s
    }

    #[test]
    fn a_gpu_nvml_cannot_open_is_an_error_naming_it_and_nvmls_error() {
        let f = only(
            run(&unopenable("unknown: an unknown error occurred")),
            codes::GD032,
            Severity::Error,
        );
        assert!(
            f.title.starts_with("GPU 1: NVML cannot open it"),
            "{}",
            f.title
        );
        assert!(f.title.contains("unknown error"), "{}", f.title);
        assert!(f.detail.contains("RmInitAdapter"), "{}", f.detail);
        assert_eq!(
            first_cmd(&f),
            "sudo dmesg | grep -iE 'nvrm|xid|rminitadapter'"
        );
        assert_eq!(f.evidence[0].fact, Some(Subject::Gpu(1)));
    }

    #[test]
    fn no_permission_fix_fits_where_gpudoctor_runs() {
        let host = only(
            run(&unopenable("no_permission: Insufficient Permissions")),
            codes::GD032,
            Severity::Error,
        );
        assert_eq!(first_cmd(&host), "ls -l /dev/nvidia1 /dev/nvidiactl");

        let mut s = unopenable("no_permission: Insufficient Permissions");
        in_container(&mut s, "docker");
        let f = only(run(&s), codes::GD032, Severity::Error);
        assert_eq!(first_cmd(&f), "docker run --gpus all IMAGE");

        let mut s = unopenable("no_permission: Insufficient Permissions");
        in_container(&mut s, "kubernetes");
        let f = only(run(&s), codes::GD032, Severity::Error);
        assert!(fixes_mention(&f, "nvidia.com/gpu"), "{:?}", f.fix);
        assert!(f.fix.iter().all(|x| x.command.is_none()), "{:?}", f.fix);
    }

    #[test]
    fn in_a_vm_the_passthrough_is_named() {
        let mut s = unopenable("unknown: an unknown error occurred");
        s.platform
            .as_mut()
            .unwrap()
            .virtual_machine
            .push(crate::facts::platform::Hint {
                kind: "cpu flag hypervisor".into(),
                source: "/proc/cpuinfo".into(),
            });
        let f = only(run(&s), codes::GD032, Severity::Error);
        assert!(fixes_mention(&f, "vfio-pci"), "{:?}", f.fix);
    }

    #[test]
    fn a_gpu_whose_every_query_fails_is_an_error() {
        let mut s = healthy();
        let g = nvml_gpu(&mut s, 0);
        fn e<T>() -> Field<T> {
            Field::Error("unknown: an unknown error occurred".into())
        }
        g.name = e();
        g.uuid = e();
        g.pci_bus_id = e();
        g.memory = e();
        g.compute_capability = e();
        let f = only(run(&s), codes::GD032, Severity::Error);
        assert!(f.title.contains("every query failed"), "{}", f.title);
    }
}
