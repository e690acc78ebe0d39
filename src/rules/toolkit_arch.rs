//! GD023: the toolkit builds use cannot compile for the GPU in this machine, e.g. nvcc 11.5
//! and an sm_89 card ("nvcc fatal : Unsupported gpu architecture 'compute_89'"), or CUDA 13
//! and a Pascal card it dropped. Compiler targets per toolkit: src/compat/arch.rs
//! (from each release's `ptxas --help` / `nvcc --list-gpu-code`).

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::arch::{compiler_targets, ARCHITECTURES};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "toolkit_arch",
    codes: &[codes::GD023],
    views: &[super::View::Toolkit],
    checks: "the toolkit in use can compile for every GPU's architecture",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(t) = snap.toolkit_in_use() else {
        return Outcome::NotApplicable("no toolkit in use".into());
    };
    let Some(v) = t.cuda else {
        return Outcome::NotApplicable("the toolkit's version is unknown".into());
    };
    let Some(targets) = compiler_targets(v) else {
        return Outcome::NotApplicable(format!("no architecture list known for CUDA {v}"));
    };
    let gpus = snap.known_gpus();
    if gpus.is_empty() {
        return Outcome::NotApplicable("no GPU whose compute capability is known".into());
    }
    let mut findings = Vec::new();
    let mut seen = Vec::new();
    for model in gpus {
        let (name, cc) = (model.name.clone(), model.cc);
        if seen.contains(&cc) || targets.supports(cc) {
            continue;
        }
        seen.push(cc);
        let row = ARCHITECTURES.iter().find(|r| r.cc == cc);
        // Too new: the architecture arrived after this toolkit; dropped: it left before it.
        // Whichever the architecture table says; the list's ends decide for unknown rows.
        let too_new = match row.and_then(|r| r.first_cuda) {
            Some(first) => first > v,
            None => cc > targets.max(),
        };
        let dropped = match row.and_then(|r| r.last_cuda) {
            Some(last) => last < v,
            None => cc < targets.min(),
        };
        if !too_new && !dropped {
            continue;
        }
        let (severity, title, fix) = if too_new {
            let first = row.and_then(|r| r.first_cuda);
            (
                Severity::Warning,
                format!(
                    "CUDA {v}'s nvcc cannot compile for {name} ({}, compute capability {cc})",
                    cc.sm()
                ),
                format!(
                    "Install {} for native {} code",
                    first.map_or("a newer toolkit".into(), |f| format!("CUDA {f} or newer")),
                    cc.sm()
                ),
            )
        } else {
            let last = row.and_then(|r| r.last_cuda);
            (
                Severity::Error,
                format!(
                    "CUDA {v} no longer supports {name} ({}, compute capability {cc})",
                    cc.sm()
                ),
                match last {
                    Some(l) => format!(
                        "Build with CUDA {l} or older, the last toolkit for {}",
                        cc.sm()
                    ),
                    None => format!("Build with an older toolkit that still targets {}", cc.sm()),
                },
            )
        };
        let detail = if too_new {
            format!("nvcc {v} knows {} to {}; asking it for {} fails with \"nvcc fatal : Unsupported gpu architecture '{}'\". Code built for an older architecture as PTX still runs through the driver's JIT, slower to start and without the newer architecture's features.", targets.min().sm(), targets.max().sm(), cc.sm(), cc.sm().replace("sm_", "compute_"))
        } else {
            format!("nvcc {v} compiles for {} to {} only; nothing it builds runs on this GPU (\"no kernel image is available for execution on the device\").", targets.min().sm(), targets.max().sm())
        };
        findings.push(
            Finding::new(codes::GD023, severity, title)
                .detail(detail)
                .evidence(
                    Subject::toolkit(&t.root),
                    format!("CUDA {v} at {}", t.root),
                    t.version.source.clone(),
                )
                .evidence(
                    Subject::GpuModel(name.to_string()),
                    format!("{name}: compute capability {cc}"),
                    model.source,
                )
                .fix_text(fix),
        );
    }
    Outcome::Checked(findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn healthy_toolkit_compiles_for_the_gpu() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_toolkit_older_than_the_gpu_is_a_warning() {
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0] = toolkit(TOOLKIT_ROOT, "11.7.99", true);
        let f = only(run(&s), codes::GD023, Severity::Warning);
        assert!(f.title.contains("cannot compile for"), "{}", f.title);
        assert!(f.title.contains("sm_90"), "{}", f.title);
        assert!(f.fix[0].text.contains("or newer"), "{:?}", f.fix);
    }

    #[test]
    fn a_toolkit_that_dropped_the_gpu_is_an_error() {
        let mut s = healthy();
        for i in 0..2 {
            let g = nvml_gpu(&mut s, i);
            g.name = crate::facts::nvml::Field::Value("Tesla K80".into());
            g.compute_capability = crate::facts::nvml::Field::Value("3.7".into());
        }
        let f = only(run(&s), codes::GD023, Severity::Error);
        assert!(
            f.title.contains("no longer supports Tesla K80"),
            "{}",
            f.title
        );
        assert!(f.fix[0].text.contains("or older"), "{:?}", f.fix);
    }

    #[test]
    fn not_applicable_without_toolkit_version_or_known_gpu() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0].cuda = None;
        assert_na(run(&s));
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0] = toolkit(TOOLKIT_ROOT, "99.1", true);
        assert_na(run(&s));
        let mut s = healthy();
        s.nvml = None;
        if let crate::fact::Outcome::Value(g) = &mut kernel_module_mut(&mut s).gpus.outcome {
            g.iter_mut()
                .for_each(|g| g.model = Some("Mystery Accelerator".into()));
        }
        // An id whose die has no listed compute capability (GB20B): still nothing known.
        pci_devices_mut(&mut s)
            .iter_mut()
            .for_each(|d| d.device_id = "10de:2e2a".into());
        assert_na(run(&s));
    }
}
