//! GD059: the smoke test itself hung or crashed inside the driver, or a GPU never finished:
//! the same call would hang or kill a training job.

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::smoke::SmokeResult;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::SubjectKind;
use crate::subject::{SmokeStep, Subject};

pub const RULE: Rule = Rule {
    name: "smoke_health",
    codes: &[codes::GD059],
    views: &[super::View::Smoke],
    checks: "the smoke test finished on every GPU within its deadline",
    judges: &[SubjectKind::Smoke],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(p) = &snap.smoke else {
        return super::smoke_not_run(snap);
    };
    // A hang or crash in the --nccl step, after every GPU finished its own steps, is GD079's.
    let in_nccl = |run: &crate::facts::smoke::SmokeRun| {
        run.devices.iter().all(|d| d.finished)
            && run
                .nccl
                .as_ref()
                .and_then(crate::smoke::nccl::stuck_at)
                .is_some()
    };
    let f = match &p.result {
        SmokeResult::NotRun { reason } => return Outcome::NotApplicable(reason.clone()),
        // A hang in a peer copy is GD074's (smoke_peer), which names the pair.
        SmokeResult::TimedOut { run, .. } if run.peer_unfinished().is_some() => {
            return Outcome::Checked(vec![])
        }
        SmokeResult::TimedOut { run, .. } | SmokeResult::Crashed { run, .. } if in_nccl(run) => {
            return Outcome::Checked(vec![])
        }
        SmokeResult::TimedOut { seconds, stuck_at, unkillable, .. } => Finding::new(
            codes::GD059,
            Severity::Error,
            format!(
                "The CUDA driver did not answer within {seconds:.1} s (stuck in {}){}",
                stuck_at.join("; "),
                if *unkillable { "; the process could not be killed: it is stuck inside the kernel driver" } else { "" }
            ),
        )
        .detail("The smoke test runs in a child process and was killed at its deadline. A driver call that never returns — usually context creation on a GPU in a bad state, or a kernel that never finishes — will hang any CUDA program here the same way.")
        .evidence(Subject::Smoke, format!("stuck in {}", stuck_at.join("; ")), "smoke worker")
        .fix_cmd("Look for Xid errors and hung-task reports", "sudo dmesg | grep -i -E 'xid|nvrm|hung'")
        .fix_text("Reset the GPU (`sudo nvidia-smi -r -i N`) or reboot; rerun with a longer --timeout if the node is merely slow"),
        SmokeResult::Crashed { signal, stderr, during, .. } => {
            let mut f = Finding::new(
                codes::GD059,
                Severity::Error,
                format!("The CUDA driver crashed the smoke test (signal {signal})"),
            )
            .detail("The smoke test's process died inside the driver. The same calls crash CUDA programs on this machine: the user-space driver is broken or mismatched.")
            .evidence(Subject::Smoke, format!("signal {signal}{}", if during.is_empty() { String::new() } else { format!(" during {}", during.join("; ")) }), "smoke worker");
            if !stderr.trim().is_empty() {
                f = f.context(stderr.lines().last().unwrap_or_default().to_string(), "smoke worker stderr");
            }
            f.fix_text("Reinstall the driver's user-space libraries at the kernel module's version, then rerun")
        }
        SmokeResult::WorkerFailed { detail } => Finding::new(
            codes::GD059,
            Severity::Warning,
            "The smoke test could not report".to_string(),
        )
        .evidence(Subject::Smoke, detail.clone(), "smoke worker")
        .fix_text("Rerun with -v; report a gpudoctor bug if it persists"),
        SmokeResult::Ran { run } => {
            let unfinished: Vec<String> = run.devices.iter().filter(|d| !d.finished).map(|d| d.label()).collect();
            if unfinished.is_empty() {
                return Outcome::Checked(vec![]);
            }
            Finding::new(codes::GD059, Severity::Warning, format!("The smoke test did not finish on {}", unfinished.join(", ")))
                .evidence(Subject::Smoke, unfinished.join(", "), "smoke worker")
                .fix_text("Rerun `gpudoctor smoke`; report a gpudoctor bug if it persists")
        }
        SmokeResult::LoadFailed { .. } => return Outcome::Checked(vec![]),
    };
    // The GPUs that stopped short carry the finding on the step they were in.
    let f = match p.run() {
        Some(run) => run.devices.iter().filter(|d| !d.finished).fold(f, |f, d| {
            let step = d.running.as_deref().and_then(SmokeStep::from_worker_name);
            let subject = match step {
                Some(s) => Subject::SmokeStep(d.ordinal, s),
                None => Subject::SmokeGpu(d.ordinal),
            };
            f.evidence(
                subject,
                format!(
                    "{}: stopped {}",
                    d.label(),
                    d.running
                        .as_deref()
                        .map_or("between steps".to_string(), |s| format!("in the {s} step"))
                ),
                "smoke worker",
            )
        }),
        None => f,
    };
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn result(s: &mut Snapshot, r: SmokeResult) {
        smoke_probe(s).result = r;
    }

    #[test]
    fn a_finished_run_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_hang_is_an_error() {
        let mut s = healthy();
        result(
            &mut s,
            SmokeResult::TimedOut {
                seconds: 30.0,
                run: smoke_run(),
                stuck_at: vec!["cuCtxCreate on device 1".into()],
                unkillable: false,
            },
        );
        let f = only(run(&s), codes::GD059, Severity::Error);
        assert!(
            f.title
                .contains("did not answer within 30.0 s (stuck in cuCtxCreate on device 1)"),
            "{}",
            f.title
        );
        assert!(!f.title.contains("could not be killed"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo dmesg | grep -i -E 'xid|nvrm|hung'");
        result(
            &mut s,
            SmokeResult::TimedOut {
                seconds: 30.0,
                run: smoke_run(),
                stuck_at: vec!["cuCtxCreate".into()],
                unkillable: true,
            },
        );
        let f = only(run(&s), codes::GD059, Severity::Error);
        assert!(f.title.contains("could not be killed"), "{}", f.title);
    }

    #[test]
    fn a_hang_in_a_peer_copy_is_left_to_gd074() {
        let mut s = healthy();
        let mut r = smoke_run();
        r.peers[0].finished = false;
        r.peers[0].running = Some("cuMemcpyPeerAsync".into());
        result(
            &mut s,
            SmokeResult::TimedOut {
                seconds: 30.0,
                run: r,
                stuck_at: vec!["peer copy CUDA device 0 → 1: cuMemcpyPeerAsync".into()],
                unkillable: false,
            },
        );
        assert_clean(run(&s));
    }

    #[test]
    fn a_crash_is_an_error() {
        let mut s = healthy();
        result(
            &mut s,
            SmokeResult::Crashed {
                signal: 11,
                stderr: "first\nSegmentation fault".into(),
                run: smoke_run(),
                during: vec!["cuInit".into()],
            },
        );
        let f = only(run(&s), codes::GD059, Severity::Error);
        assert!(
            f.title.contains("crashed the smoke test (signal 11)"),
            "{}",
            f.title
        );
        assert!(evidence_mentions(&f, "signal 11 during cuInit"));
        assert!(evidence_mentions(&f, "Segmentation fault"));
    }

    #[test]
    fn a_worker_that_did_not_report_or_an_unfinished_gpu_is_a_warning() {
        let mut s = healthy();
        result(
            &mut s,
            SmokeResult::WorkerFailed {
                detail: "no output".into(),
            },
        );
        only(run(&s), codes::GD059, Severity::Warning);
        let mut s = healthy();
        smoke_dev(&mut s, 1).finished = false;
        let f = only(run(&s), codes::GD059, Severity::Warning);
        assert!(
            f.title.contains("did not finish on CUDA device 1"),
            "{}",
            f.title
        );
    }

    #[test]
    fn a_load_failure_is_left_to_gd053() {
        let mut s = healthy();
        result(
            &mut s,
            SmokeResult::LoadFailed {
                code: "library_not_found".into(),
                message: "x".into(),
            },
        );
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_when_the_smoke_test_did_not_run() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        s.smoke = None;
        assert_na(run(&s));
    }
}
