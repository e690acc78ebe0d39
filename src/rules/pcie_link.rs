//! GD034: PCIe link trained below what the GPU and slot can do. Width is fixed at boot,
//! so a narrow link is always a fault; generation drops at idle to save power, so a low
//! generation is judged only when the GPU is busy (tests/it/nvml.rs
//! pcie_width_always_generation_only_under_load).

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "pcie_link",
    codes: &[codes::GD034],
    views: &[super::View::Devices],
    checks: "every GPU's PCIe link runs at its full width (and generation when busy)",
    judges: &[SubjectKind::Gpu],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    let mut out = Vec::new();
    for g in sys.devices.iter().filter(|g| g.handle_error.is_none()) {
        let p = &g.pcie;
        let (Some(gen), Some(max_gen), Some(w), Some(max_w)) = (
            p.generation.get(),
            p.max_generation.get(),
            p.width.get(),
            p.max_width.get(),
        ) else {
            continue;
        };
        // Busy means positive evidence: a compute process on it and no GPU_IDLE reason.
        // Without that the low generation may be power saving, which is normal.
        let busy = g
            .processes
            .get()
            .is_some_and(|p| p.iter().any(|p| p.kind == "compute"))
            && g.throttle
                .get()
                .is_some_and(|t| !t.reasons.iter().any(|r| r == "GPU_IDLE"));
        let link = format!("Gen{gen} x{w} (max Gen{max_gen} x{max_w})");
        let key = Subject::Gpu(g.index);
        if w < max_w {
            out.push(
                Finding::new(codes::GD034, Severity::Warning, format!("{}: PCIe link is x{w}, not x{max_w}", g.label()))
                    .detail("The link trained narrower than the GPU supports: host↔device copies get a fraction of their bandwidth, and nothing logs an error. A slot wired for fewer lanes, a riser, a dirty or badly seated card, or a BIOS bifurcation setting are the usual causes.")
                    .evidence(key.clone(), link.clone(), "NVML")
                    .fix_text("Reseat the card or riser, use a slot wired x16 to the CPU, check the BIOS PCIe/bifurcation settings")
                    .fix_cmd("Confirm what the link trained to", "sudo lspci -vv | grep -E 'LnkCap|LnkSta'"),
            );
        } else if gen < max_gen && busy {
            out.push(
                Finding::new(codes::GD034, Severity::Warning, format!("{}: PCIe link runs at Gen{gen} under load (max Gen{max_gen})", g.label()))
                    .detail("Links drop generation when idle to save power, but this GPU is not idle. A link stuck at a lower generation gives a fraction of the copy bandwidth without any error (a link pinned with Hardware Autonomous Speed Disable, a riser, signal integrity).")
                    .evidence(key, link, "NVML")
                    .fix_text("Re-check while a job runs (idle links downtrain by design); if it stays low, reseat the card/riser and check BIOS PCIe speed settings")
                    .fix_cmd("Watch the trained speed under load", "nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.gen.max,utilization.gpu --format=csv -l 1"),
            );
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::{Field, Process, Throttle};
    use crate::testing::*;

    fn busy(s: &mut Snapshot, i: usize) {
        let g = nvml_gpu(s, i);
        g.processes = Field::Value(vec![Process {
            pid: 4242,
            kind: "compute".into(),
            name: Some("python".into()),
            used_memory: Some(GIB),
        }]);
        g.throttle = Field::Value(Throttle {
            bits: 0,
            reasons: Vec::new(),
        });
    }

    #[test]
    fn healthy_links_run_at_full_width() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_narrow_link_is_a_warning() {
        let mut s = healthy();
        nvml_gpu(&mut s, 1).pcie.width = Field::Value(8);
        let f = only(run(&s), codes::GD034, Severity::Warning);
        assert!(f.title.contains("PCIe link is x8, not x16"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo lspci -vv | grep -E 'LnkCap|LnkSta'");
    }

    #[test]
    fn a_low_generation_counts_only_under_load() {
        let mut s = healthy();
        nvml_gpu(&mut s, 0).pcie.generation = Field::Value(1);
        assert_clean(run(&s));
        busy(&mut s, 0);
        let f = only(run(&s), codes::GD034, Severity::Warning);
        assert!(f.title.contains("runs at Gen1 under load"), "{}", f.title);
    }

    #[test]
    fn unknown_link_facts_are_skipped() {
        let mut s = healthy();
        let g = nvml_gpu(&mut s, 0);
        g.pcie.width = Field::Value(1);
        g.pcie.max_width = Field::NotSupported;
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_nvml() {
        assert_na(run(&no_gpu()));
    }
}
