//! The report's first line: the outcome in words ("CUDA will not work here: 2 blockers
//! (GD006, GD008)", "Ready: 8× H100 80GB HBM3, driver 580.95.05 — 1 warning (GD038)"),
//! decided once from the findings and the facts the rules derived, so every format leads
//! with the same verdict and no renderer decides it.

use crate::codes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::facts::pytorch_live::LiveResult;
use crate::facts::smoke::SmokeResult;
use crate::findings::{Finding, Severity};
use crate::report::Derived;
use crate::rules::Check;
use crate::snapshot::{ProbeStatus, Snapshot};
use crate::subject::{SmokeStep, Subject};
use crate::verdict::{SmokeTally, Verdict, Verdicts};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Headline {
    pub kind: HeadlineKind,
    /// The outcome in one line, as the human and Markdown reports print it first.
    pub text: String,
    /// The findings the line counts, each code once, worst first: the root-cause errors
    /// when there are any, else the root-cause warnings (empty when there are neither). A
    /// finding another explains (`caused_by`) is named after "which also causes".
    pub codes: Vec<String>,
}

/// Which outcome, from worst to best.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeadlineKind {
    /// An error that stops every CUDA program here (no driver, no usable device node or
    /// libcuda, every GPU hidden or failing), and no GPU passed the smoke test.
    CudaWillNotWork,
    /// Errors, but CUDA itself is not shown broken: one GPU's fault, torch's build, or a
    /// GPU that passed the smoke test next to them.
    NotReady,
    /// No NVIDIA GPU: no PCI function, no /dev/nvidiaN node, none registered by a driver.
    NoGpu,
    /// GPUs and no error, but nothing was run on them: the smoke test was skipped, not
    /// allowed (--root), or did not finish on every GPU.
    #[default]
    NotProvenOnDevice,
    /// GPUs, no error, and every GPU the smoke test ran on passed it.
    Ready,
}

/// The most codes the text names; the JSON lists them all.
const CODES_SHOWN: usize = 5;

impl Headline {
    pub fn of(
        snap: &Snapshot,
        derived: &Derived,
        findings: &[Finding],
        checks: &[Check],
    ) -> Headline {
        let codes_of = |severity: Severity| {
            let mut codes: Vec<String> = Vec::new();
            for f in findings
                .iter()
                .filter(|f| f.severity == severity && f.is_root())
            {
                if !codes.contains(&f.code) {
                    codes.push(f.code.clone());
                }
            }
            codes
        };
        let roots_of = |severity: Severity| {
            findings
                .iter()
                .filter(|f| f.severity == severity && f.is_root())
                .count()
        };
        let errors = roots_of(Severity::Error);
        let warnings = roots_of(Severity::Warning);
        // What the counted causes explain: "…, which also causes GD017".
        let consequences = |severity: Severity| {
            let mut codes: Vec<String> = Vec::new();
            for f in findings.iter().filter(|f| {
                f.severity >= severity
                    && f.caused_by.as_ref().is_some_and(|c| {
                        findings
                            .iter()
                            .any(|r| r.code == *c && r.severity == severity)
                    })
            }) {
                if !codes.contains(&f.code) {
                    codes.push(f.code.clone());
                }
            }
            if codes.is_empty() {
                String::new()
            } else {
                let verb = if roots_of(severity) == 1 {
                    "causes"
                } else {
                    "cause"
                };
                format!(", which also {verb} {}", listed(&codes))
            }
        };
        let smoke_gpus = Verdicts::new(findings, checks).smoke_gpus(snap);
        let smoke = SmokeTally::of(&smoke_gpus);
        // CUDA itself failed on every GPU tested: none got a context and its kernels. A GPU
        // that computed wrongly or copied slowly still ran CUDA.
        let cuda_failed_everywhere = !smoke_gpus.is_empty()
            && smoke_gpus.iter().all(|g| {
                g.steps
                    .iter()
                    .filter(|s| matches!(s.step, SmokeStep::Context | SmokeStep::Kernels))
                    .any(|s| s.verdict == Verdict::Error)
                    || !g
                        .steps
                        .iter()
                        .any(|s| s.step == SmokeStep::Kernels && s.verdict != Verdict::NotJudged)
            });
        let machine = Machine::of(snap, derived);

        if errors > 0 {
            let codes = codes_of(Severity::Error);
            let proven = smoke.passed + smoke.warnings > 0;
            let all_failed = smoke.gpus > 0 && smoke.failed == smoke.gpus && cuda_failed_everywhere;
            let stops_all = findings.iter().any(|f| {
                f.severity == Severity::Error
                    && codes::CODES
                        .iter()
                        .any(|c| c.code == f.code && c.stops_all_cuda)
                    && !about_some_gpus_only(f, derived.gpu_count.as_ref().map(|c| c.count))
            });
            let (kind, lead) = if !proven && (stops_all || all_failed) {
                (HeadlineKind::CudaWillNotWork, "CUDA will not work here")
            } else {
                (HeadlineKind::NotReady, "Not ready")
            };
            let text = format!(
                "{lead}: {} ({}){}",
                counted(errors, "blocker", "blockers"),
                listed(&codes),
                consequences(Severity::Error)
            );
            return Headline { kind, text, codes };
        }

        let codes = codes_of(Severity::Warning);
        let warned = if warnings > 0 {
            format!(
                " — {} ({}){}",
                counted(warnings, "warning", "warnings"),
                listed(&codes),
                consequences(Severity::Warning)
            )
        } else {
            String::new()
        };
        let (kind, text) = if machine.no_gpu {
            let place = match snap.container_kind() {
                Some(kind) => format!("No NVIDIA GPU visible in this container ({kind})"),
                None => "No NVIDIA GPU here".to_string(),
            };
            (HeadlineKind::NoGpu, place)
        } else if smoke.gpus > 0 && smoke.passed + smoke.warnings == smoke.gpus {
            (
                HeadlineKind::Ready,
                format!("Ready: {}", machine.describe()),
            )
        } else {
            (
                HeadlineKind::NotProvenOnDevice,
                format!(
                    "No blockers found, but not proven on-device ({}): {}",
                    smoke_gap(snap, &smoke),
                    machine.describe()
                ),
            )
        };
        Headline {
            kind,
            text: format!("{text}{warned}"),
            codes,
        }
    }

    /// The mark the line gets: an error for blockers, a warning when warnings were
    /// counted, passed when ready, not judged otherwise (no GPU, nothing proven).
    pub fn verdict(&self) -> Verdict {
        match self.kind {
            HeadlineKind::CudaWillNotWork | HeadlineKind::NotReady => Verdict::Error,
            _ if !self.codes.is_empty() => Verdict::Warning,
            HeadlineKind::Ready => Verdict::Passed,
            HeadlineKind::NoGpu | HeadlineKind::NotProvenOnDevice => Verdict::NotJudged,
        }
    }
}

/// Whether a finding cites single GPUs only (a GPU's device node or PCI function), fewer
/// than the machine has: the others may still work.
fn about_some_gpus_only(f: &Finding, gpus: Option<usize>) -> bool {
    let mut cited: Vec<Subject> = f.evidence.iter().filter_map(|e| e.fact.clone()).collect();
    let one_gpu = |s: &Subject| match s {
        Subject::Gpu(_)
        | Subject::PciFunction(_)
        | Subject::SmokeGpu(_)
        | Subject::SmokeStep(..) => true,
        Subject::Node(path) => path
            .strip_prefix("/dev/nvidia")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
        _ => false,
    };
    cited.sort();
    cited.dedup();
    !cited.is_empty() && cited.iter().all(one_gpu) && gpus.is_some_and(|n| cited.len() < n)
}

/// "1 blocker", "2 blockers".
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "GD006, GD008", or the first few and how many more.
fn listed(codes: &[String]) -> String {
    if codes.len() <= CODES_SHOWN {
        return codes.join(", ");
    }
    format!(
        "{}, and {} more",
        codes[..CODES_SHOWN].join(", "),
        codes.len() - CODES_SHOWN
    )
}

/// Why nothing is proven on the GPUs, in a few words.
fn smoke_gap(snap: &Snapshot, smoke: &SmokeTally) -> String {
    let skipped = snap
        .probes
        .get("smoke")
        .is_some_and(|p| p.status == ProbeStatus::Skipped);
    match snap.smoke.as_ref().map(|p| &p.result) {
        None if skipped => "smoke test skipped".into(),
        None => "no smoke test".into(),
        Some(SmokeResult::NotRun { .. }) if snap.root.is_some() => {
            "smoke test not run under --root".into()
        }
        Some(SmokeResult::NotRun { .. }) => "smoke test not run".into(),
        Some(SmokeResult::Ran { .. }) if smoke.gpus == 0 => "the smoke test found no GPU".into(),
        Some(SmokeResult::Ran { .. }) => format!(
            "smoke test passed on {} of {} GPUs",
            smoke.passed + smoke.warnings,
            smoke.gpus
        ),
        Some(_) => "the smoke test did not finish".into(),
    }
}

/// What the line says about the machine: its GPUs, driver and torch.
struct Machine {
    no_gpu: bool,
    gpus: Option<String>,
    driver: Option<String>,
    torch: Option<String>,
}

impl Machine {
    fn of(snap: &Snapshot, derived: &Derived) -> Machine {
        let hardware_probed =
            snap.pci.is_some() || snap.device_nodes.is_some() || snap.kernel_module.is_some();
        let smoke_devices = snap
            .smoke
            .as_ref()
            .and_then(|p| p.run())
            .is_some_and(|r| !r.devices.is_empty());
        let nvml_devices = snap
            .nvml_system()
            .and_then(|s| s.device_count.get())
            .is_some_and(|n| *n > 0);
        let no_gpu =
            hardware_probed && !snap.nvidia_hardware_seen() && !nvml_devices && !smoke_devices;
        Machine {
            no_gpu,
            gpus: gpu_summary(snap, derived),
            driver: derived.driver.as_ref().map(|d| d.version.clone()),
            torch: torch_version(snap),
        }
    }

    /// "8× H100 80GB HBM3, driver 580.95.05, torch 2.8.0+cu128".
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        parts.push(
            self.gpus
                .clone()
                .unwrap_or_else(|| "GPUs not inspected".into()),
        );
        if let Some(d) = &self.driver {
            parts.push(format!("driver {d}"));
        }
        if let Some(t) = &self.torch {
            parts.push(format!("torch {t}"));
        }
        parts.join(", ")
    }
}

/// Each model with its count, in the order first seen: "8× H100 80GB HBM3", "2× A100-SXM4-80GB,
/// 1× T4". NVML's names, else the driver's, else a count.
fn gpu_summary(snap: &Snapshot, derived: &Derived) -> Option<String> {
    let mut names: Vec<String> = snap
        .nvml_system()
        .map(|s| {
            s.devices
                .iter()
                .filter_map(|g| g.name.get().cloned())
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        names = snap
            .kernel_module
            .as_ref()
            .and_then(|k| k.gpus.get())
            .map(|g| g.iter().filter_map(|g| g.model.clone()).collect())
            .unwrap_or_default();
    }
    if names.is_empty() {
        let n = derived.gpu_count.as_ref()?.count;
        return Some(counted(n, "GPU", "GPUs"));
    }
    let mut groups: Vec<(String, usize)> = Vec::new();
    for n in names {
        let short = n.strip_prefix("NVIDIA ").unwrap_or(&n).trim().to_string();
        match groups.iter_mut().find(|(name, _)| *name == short) {
            Some((_, count)) => *count += 1,
            None => groups.push((short, 1)),
        }
    }
    Some(
        groups
            .iter()
            .map(|(name, n)| format!("{n}× {name}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The torch that runs: what `import torch` said (--python-import), else the primary
/// environment's files.
fn torch_version(snap: &Snapshot) -> Option<String> {
    if let Some(LiveResult::Ok { answer }) = snap.python_live.as_ref().map(|l| &l.result) {
        if let Some(t) = &answer.torch {
            return Some(t.clone());
        }
    }
    let env = snap.python.as_deref()?.iter().find(|e| e.primary)?;
    let t = env.torch.as_ref()?;
    Some(
        t.version
            .get()
            .cloned()
            .unwrap_or_else(|| t.dist_version.clone()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_beyond_five_are_counted() {
        let codes: Vec<String> = (1..=7).map(|i| format!("GD00{i}")).collect();
        assert_eq!(
            listed(&codes),
            "GD001, GD002, GD003, GD004, GD005, and 2 more"
        );
        assert_eq!(listed(&codes[..2]), "GD001, GD002");
    }

    #[test]
    fn a_blocker_about_some_gpus_leaves_the_others() {
        let node = |path: &str| {
            Finding::new(codes::GD008, Severity::Error, "no access").evidence(
                Subject::node(path),
                "0600",
                "/dev",
            )
        };
        assert!(about_some_gpus_only(&node("/dev/nvidia1"), Some(8)));
        // Every GPU's node, or the control node every GPU needs: all of CUDA.
        assert!(!about_some_gpus_only(&node("/dev/nvidia0"), Some(1)));
        assert!(!about_some_gpus_only(&node("/dev/nvidiactl"), Some(8)));
        assert!(!about_some_gpus_only(&node("/dev/nvidia-uvm"), Some(8)));
        assert!(!about_some_gpus_only(&node("/dev/nvidia1"), None));
        let context = Finding::new(codes::GD002, Severity::Error, "no module");
        assert!(!about_some_gpus_only(&context, Some(8)));
    }

    #[test]
    fn the_codes_that_stop_all_cuda_are_those_of_no_driver_node_library_or_init() {
        let stops: Vec<&str> = codes::CODES
            .iter()
            .filter(|c| c.stops_all_cuda)
            .map(|c| c.code)
            .collect();
        assert_eq!(
            stops,
            [
                codes::GD002,
                codes::GD003,
                codes::GD004,
                codes::GD006,
                codes::GD007,
                codes::GD008,
                codes::GD009,
                codes::GD011,
                codes::GD017,
                codes::GD018,
                codes::GD024,
                codes::GD027,
                codes::GD042,
                codes::GD053,
                codes::GD059,
                codes::GD088,
            ]
        );
    }
}
