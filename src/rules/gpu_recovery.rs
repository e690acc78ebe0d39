//! GD032: a GPU NVML cannot reach (fallen off the bus, Xid 79) or for which the driver
//! asks for a recovery action (reset, reboot, drain).

use super::{Outcome, Rule};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;

pub const RULE: Rule = Rule {
    name: "gpu_recovery",
    codes: &["GD032"],
    views: &[super::View::Devices],
    checks: "every GPU answers NVML and none asks for a reset or reboot",
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
                Finding::new("GD032", Severity::Error, format!("GPU {} has fallen off the bus (NVML: GPU is lost)", g.index))
                    .detail("The driver lost contact with the GPU (Xid 79, \"GPU has fallen off the bus\"). Every process using it fails, and CUDA calls on it may hang. Causes: power delivery, overheating, a failing riser or slot, or the GPU itself.")
                    .evidence(format!("gpu:{}", g.index), e.to_string(), "NVML")
                    .fix_cmd("Confirm in the kernel log", "sudo dmesg | grep -iE 'xid|fallen off'")
                    .fix_text("Drain the node, then reset the GPU (sudo nvidia-smi -r -i N) or reboot; if it recurs, reseat or replace the card (RMA)"),
            );
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
            out.push(
                Finding::new("GD032", severity, format!("{} needs {what} (driver recovery action: {action})", g.label()))
                    .detail("The driver has seen an error it cannot recover from by itself and reports the action that will (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION). Until then jobs on this GPU fail or run degraded.")
                    .evidence(format!("gpu:{}", g.index), format!("recovery action {action}"), "NVML")
                    .fix_text(match action.as_str() {
                        "node_reboot" => "Drain the node and reboot it",
                        "drain_p2p" => "Stop jobs that use peer-to-peer/NVLink on this GPU, then reset it when idle",
                        _ => "Drain the GPU, then reset it: sudo nvidia-smi -r -i <index>",
                    }),
            );
        }
    }
    Outcome::Checked(out)
}
