//! GD059: the smoke test itself hung or crashed inside the driver, or a GPU never finished:
//! the same call would hang or kill a training job.

use super::{Outcome, Rule};
use crate::findings::{Finding, Severity};
use crate::probes::smoke::SmokeResult;
use crate::snapshot::Snapshot;

pub const RULE: Rule = Rule {
    name: "smoke_health",
    codes: &["GD059"],
    views: &[super::View::Smoke],
    checks: "the smoke test finished on every GPU within its deadline",
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(p) = &snap.smoke else {
        return super::smoke_not_run(snap);
    };
    let f = match &p.result {
        SmokeResult::NotRun { reason } => return Outcome::NotApplicable(reason.clone()),
        SmokeResult::TimedOut { seconds, stuck_at, unkillable, .. } => Finding::new(
            "GD059",
            Severity::Error,
            format!(
                "The CUDA driver did not answer within {seconds:.1} s (stuck in {}){}",
                stuck_at.join("; "),
                if *unkillable { "; the process could not be killed: it is stuck inside the kernel driver" } else { "" }
            ),
        )
        .detail("The smoke test runs in a child process and was killed at its deadline. A driver call that never returns — usually context creation on a GPU in a bad state, or a kernel that never finishes — will hang any CUDA program here the same way.")
        .evidence("smoke", format!("stuck in {}", stuck_at.join("; ")), "smoke worker")
        .fix_cmd("Look for Xid errors and hung-task reports", "sudo dmesg | grep -i -E 'xid|nvrm|hung'")
        .fix_text("Reset the GPU (`sudo nvidia-smi -r -i N`) or reboot; rerun with a longer --timeout if the node is merely slow"),
        SmokeResult::Crashed { signal, stderr, during, .. } => {
            let mut f = Finding::new(
                "GD059",
                Severity::Error,
                format!("The CUDA driver crashed the smoke test (signal {signal})"),
            )
            .detail("The smoke test's process died inside the driver. The same calls crash CUDA programs on this machine: the user-space driver is broken or mismatched.")
            .evidence("smoke", format!("signal {signal}{}", if during.is_empty() { String::new() } else { format!(" during {}", during.join("; ")) }), "smoke worker");
            if !stderr.trim().is_empty() {
                f = f.context(stderr.lines().last().unwrap_or_default().to_string(), "smoke worker stderr");
            }
            f.fix_text("Reinstall the driver's user-space libraries at the kernel module's version, then rerun")
        }
        SmokeResult::WorkerFailed { detail } => Finding::new(
            "GD059",
            Severity::Warning,
            "The smoke test could not report".to_string(),
        )
        .evidence("smoke", detail.clone(), "smoke worker")
        .fix_text("Rerun with -v; report a gpudoctor bug if it persists"),
        SmokeResult::Ran { run } => {
            let unfinished: Vec<String> = run.devices.iter().filter(|d| !d.finished).map(|d| d.label()).collect();
            if unfinished.is_empty() {
                return Outcome::Checked(vec![]);
            }
            Finding::new("GD059", Severity::Warning, format!("The smoke test did not finish on {}", unfinished.join(", ")))
                .evidence("smoke", unfinished.join(", "), "smoke worker")
                .fix_text("Rerun `gpudoctor smoke`; report a gpudoctor bug if it persists")
        }
        SmokeResult::LoadFailed { .. } => return Outcome::Checked(vec![]),
    };
    Outcome::Checked(vec![f])
}
