//! Verdicts: what the findings say about each subject, computed once for every output.
//!
//! Renderers ask here how to mark a line; they never judge a fact themselves. A subject's
//! verdict is the worst finding that cites it or anything under it (a summary line is as
//! bad as its worst part); with no finding it passed if a rule that judges it ran, and is
//! not judged otherwise.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::facts::smoke::{SmokeDevice, Step};
use crate::findings::{Finding, Severity};
use crate::rules::{Check, CheckStatus};
use crate::snapshot::Snapshot;
use crate::subject::{SmokeStep, Subject};

/// How a line is marked: ordered from "nothing to say" to "will fail".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No rule judged this (context, or the check did not apply).
    NotJudged,
    Passed,
    Info,
    Warning,
    Error,
}

impl Verdict {
    pub fn of(severity: Severity) -> Verdict {
        match severity {
            Severity::Info => Verdict::Info,
            Severity::Warning => Verdict::Warning,
            Severity::Error => Verdict::Error,
        }
    }

    /// Passed outright: no warning or error (an info note is context, not a fault).
    pub fn passed(self) -> bool {
        matches!(self, Verdict::Passed | Verdict::Info)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::NotJudged => "not_judged",
            Verdict::Passed => "passed",
            Verdict::Info => "info",
            Verdict::Warning => "warning",
            Verdict::Error => "error",
        }
    }
}

/// The rules that judge the subject's kind (`Rule::judges`): when one of them ran and cited
/// nothing, the subject passed.
fn judged_by(s: &Subject) -> impl Iterator<Item = &'static str> {
    let kind = s.kind();
    crate::rules::RULES
        .iter()
        .filter(move |r| kind.is_some_and(|k| r.judges.contains(&k)))
        .map(|r| r.name)
}

/// The findings' verdict on every subject they cite, rolled up into its summaries.
#[derive(Debug, Clone, Default)]
pub struct Verdicts {
    worst: BTreeMap<Subject, Severity>,
    /// Rules that looked (passed or failed), by name.
    ran: BTreeSet<String>,
}

impl Verdicts {
    pub fn new(findings: &[Finding], checks: &[Check]) -> Verdicts {
        let mut worst: BTreeMap<Subject, Severity> = BTreeMap::new();
        for f in findings {
            let cited: BTreeSet<Subject> = f
                .evidence
                .iter()
                .filter_map(|e| e.fact.clone())
                .flat_map(|s| s.with_ancestors())
                .collect();
            for s in cited {
                let w = worst.entry(s).or_insert(f.severity);
                *w = (*w).max(f.severity);
            }
        }
        let ran = checks
            .iter()
            .filter(|c| matches!(c.status, CheckStatus::Passed | CheckStatus::Failed))
            .map(|c| c.rule.clone())
            .collect();
        Verdicts { worst, ran }
    }

    /// The worst finding citing this subject or anything under it.
    pub fn worst(&self, s: &Subject) -> Option<Severity> {
        self.worst.get(s).copied()
    }

    /// The verdict on one subject.
    pub fn of(&self, s: &Subject) -> Verdict {
        match self.worst(s) {
            Some(sev) => Verdict::of(sev),
            None if judged_by(s).any(|r| self.ran.contains(r)) => Verdict::Passed,
            None => Verdict::NotJudged,
        }
    }

    /// The verdict on a fact that may be absent: a missing node or module is never called
    /// passed by default, only marked by a finding that cites it.
    pub fn of_fact<'a>(
        &self,
        subjects: impl IntoIterator<Item = &'a Subject>,
        present: bool,
    ) -> Verdict {
        let subjects: Vec<&Subject> = subjects.into_iter().collect();
        match subjects.iter().filter_map(|s| self.worst(s)).max() {
            Some(sev) => Verdict::of(sev),
            None if present => self.of_all(subjects),
            None => Verdict::NotJudged,
        }
    }

    /// The worst of several subjects (a line that stands for several facts).
    pub fn of_all<'a>(&self, subjects: impl IntoIterator<Item = &'a Subject>) -> Verdict {
        subjects
            .into_iter()
            .map(|s| self.of(s))
            .max()
            .unwrap_or(Verdict::NotJudged)
    }
}

/// One GPU's smoke-test verdict, step by step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SmokeGpuVerdict {
    /// CUDA's ordinal.
    pub ordinal: u32,
    /// The steps the GPU reached, in order.
    pub steps: Vec<StepVerdict>,
    pub overall: Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepVerdict {
    pub step: SmokeStep,
    pub verdict: Verdict,
}

/// Whether a step finished, stopped short, or was never run.
fn step_state<T>(s: &Option<Step<T>>) -> Option<bool> {
    match s {
        Some(Step::Ok(_)) => Some(true),
        Some(Step::Failed { .. }) => Some(false),
        Some(Step::Skipped { .. }) | None => None,
    }
}

/// The steps a device reached, in order, with whether each completed (None: skipped).
pub fn steps_reached(d: &SmokeDevice) -> Vec<(SmokeStep, Option<bool>)> {
    let mut out = Vec::new();
    if d.info_error.is_some() {
        out.push((SmokeStep::Device, Some(false)));
    }
    let steps = [
        (
            SmokeStep::Context,
            d.context.is_some(),
            step_state(&d.context),
        ),
        (
            SmokeStep::Kernels,
            d.module.is_some(),
            step_state(&d.module),
        ),
        (SmokeStep::Matmul, d.matmul.is_some(), step_state(&d.matmul)),
        (SmokeStep::Memory, d.memory.is_some(), step_state(&d.memory)),
        (
            SmokeStep::Transfer,
            d.transfer.is_some(),
            step_state(&d.transfer),
        ),
    ];
    for (step, present, state) in steps {
        if present {
            out.push((step, state));
        }
    }
    if let Some(step) = d.running.as_deref().and_then(SmokeStep::from_worker_name) {
        if !out.iter().any(|(s, _)| *s == step) {
            out.push((step, Some(false)));
        }
    }
    out
}

impl Verdicts {
    /// Each tested GPU's verdict: a step is as bad as the findings citing it; a completed
    /// step no finding cites passed; a step that stopped short with no finding is not
    /// called passed (and neither is its GPU).
    pub fn smoke_gpus(&self, snap: &Snapshot) -> Vec<SmokeGpuVerdict> {
        let Some(run) = snap.smoke.as_ref().and_then(|p| p.run()) else {
            return Vec::new();
        };
        run.devices
            .iter()
            .map(|d| {
                let reached = steps_reached(d);
                let steps: Vec<StepVerdict> = reached
                    .iter()
                    .map(|&(step, completed)| {
                        let subject = Subject::SmokeStep(d.ordinal, step);
                        let verdict = match (self.worst(&subject), completed) {
                            (Some(sev), _) => Verdict::of(sev),
                            (None, Some(true)) => self.of(&subject),
                            (None, _) => Verdict::NotJudged,
                        };
                        StepVerdict { step, verdict }
                    })
                    .collect();
                let stopped_unjudged = steps.iter().zip(&reached).any(|(s, (_, completed))| {
                    s.verdict == Verdict::NotJudged && *completed == Some(false)
                });
                let overall = match self.worst(&Subject::SmokeGpu(d.ordinal)) {
                    Some(sev) => Verdict::of(sev),
                    None if !d.finished || stopped_unjudged => Verdict::NotJudged,
                    None if steps.iter().any(|s| s.verdict == Verdict::Passed) => Verdict::Passed,
                    None => Verdict::NotJudged,
                };
                SmokeGpuVerdict {
                    ordinal: d.ordinal,
                    steps,
                    overall,
                }
            })
            .collect()
    }
}

/// One ordered GPU pair's peer-copy verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PeerVerdict {
    pub from: u32,
    pub to: u32,
    pub verdict: Verdict,
}

impl Verdicts {
    /// Each pair of the peer step: as bad as the findings citing it; a finished pair no
    /// finding cites passed when the peer rule ran; an unfinished or skipped one is not
    /// judged.
    pub fn smoke_peers(&self, snap: &Snapshot) -> Vec<PeerVerdict> {
        let Some(run) = snap.smoke.as_ref().and_then(|p| p.run()) else {
            return Vec::new();
        };
        run.peers
            .iter()
            .map(|p| {
                let s = Subject::SmokePeer(p.from, p.to);
                let skipped = matches!(p.copy, Some(Step::Skipped { .. }));
                let verdict = match (self.worst(&s), p.finished) {
                    (Some(sev), _) => Verdict::of(sev),
                    (None, true) if !skipped => self.of(&s),
                    (None, _) => Verdict::NotJudged,
                };
                PeerVerdict {
                    from: p.from,
                    to: p.to,
                    verdict,
                }
            })
            .collect()
    }
}

/// How many tested GPUs passed, passed with warnings, failed, or could not be judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SmokeTally {
    pub gpus: usize,
    pub passed: usize,
    pub warnings: usize,
    pub failed: usize,
    pub not_judged: usize,
}

impl SmokeTally {
    pub fn of(gpus: &[SmokeGpuVerdict]) -> SmokeTally {
        let mut t = SmokeTally {
            gpus: gpus.len(),
            ..SmokeTally::default()
        };
        for g in gpus {
            match g.overall {
                Verdict::Passed | Verdict::Info => t.passed += 1,
                Verdict::Warning => t.warnings += 1,
                Verdict::Error => t.failed += 1,
                Verdict::NotJudged => t.not_judged += 1,
            }
        }
        t
    }

    /// "7 of 8 GPU(s) passed, 1 failed".
    pub fn text(&self) -> String {
        let mut s = format!("{} of {} GPU(s) passed", self.passed, self.gpus);
        for (n, what) in [
            (self.warnings, "with warnings"),
            (self.failed, "failed"),
            (self.not_judged, "not judged"),
        ] {
            if n > 0 {
                s.push_str(&format!(", {n} {what}"));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_judging_rule_exists() {
        let mut subjects = vec![
            Subject::module("nvidia"),
            Subject::module("nvidia_uvm"),
            Subject::DriverVersion,
            Subject::pci("0000:18:00.0"),
            Subject::GpuNodes,
            Subject::node("/dev/nvidia0"),
            Subject::Nvml,
            Subject::Gpu(0),
            Subject::NvccOnPath,
            Subject::CudaHome,
            Subject::library("libcuda.so.1"),
            Subject::library("libcudart.so.12"),
            Subject::torch("/site-packages"),
            Subject::PythonImport,
            Subject::env("CUDA_VISIBLE_DEVICES"),
            Subject::Environment,
            Subject::Smoke,
            Subject::SmokeGpu(0),
            Subject::SmokePeer(0, 1),
            Subject::Shm,
        ];
        subjects.extend(SmokeStep::ALL.map(|s| Subject::SmokeStep(0, s)));
        for s in subjects {
            assert!(judged_by(&s).next().is_some(), "nothing judges {s}");
        }
    }

    #[test]
    fn a_step_finding_marks_its_gpu_and_the_run() {
        let f = Finding::new(crate::codes::GD057, Severity::Error, "bits flipped").evidence(
            Subject::SmokeStep(1, SmokeStep::Memory),
            "3 mismatches",
            "smoke test",
        );
        let v = Verdicts::new(&[f], &[]);
        assert_eq!(
            v.of(&Subject::SmokeStep(1, SmokeStep::Memory)),
            Verdict::Error
        );
        assert_eq!(v.of(&Subject::SmokeGpu(1)), Verdict::Error);
        assert_eq!(v.of(&Subject::Smoke), Verdict::Error);
        assert_eq!(v.of(&Subject::SmokeGpu(0)), Verdict::NotJudged);
    }

    /// `✗ NVML driver 580.95.05, CUDA 13.0, 8 GPU(s)` called a library that answered failed
    /// because one GPU under it could not be opened: the mark is the GPU row's.
    #[test]
    fn a_gpu_finding_marks_its_row_not_the_nvml_line() {
        let f = Finding::new(
            crate::codes::GD032,
            Severity::Error,
            "GPU 2: NVML cannot open it",
        )
        .evidence(Subject::Gpu(2), "unknown error", "NVML");
        let v = Verdicts::new(&[f], &[]);
        assert_eq!(v.of(&Subject::Gpu(2)), Verdict::Error);
        assert_ne!(v.of(&Subject::Nvml), Verdict::Error);
    }

    #[test]
    fn no_finding_passes_only_where_a_judging_rule_ran() {
        let ran = Check {
            rule: "smoke_matmul".into(),
            codes: vec![crate::codes::GD056.into()],
            status: CheckStatus::Passed,
            detail: String::new(),
        };
        let v = Verdicts::new(&[], &[ran]);
        assert_eq!(
            v.of(&Subject::SmokeStep(0, SmokeStep::Matmul)),
            Verdict::Passed
        );
        assert_eq!(
            v.of(&Subject::SmokeStep(0, SmokeStep::Memory)),
            Verdict::NotJudged
        );
    }
}
