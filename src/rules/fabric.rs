//! GD039: NVSwitch systems (HGX/DGX) need Fabric Manager to set up the NVLink fabric;
//! until it finishes, CUDA fails with "system not yet initialized" (error 802).

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "fabric",
    codes: &[codes::GD039],
    views: &[super::View::Devices],
    checks: "on NVSwitch systems, the GPU fabric is set up",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    let mut not_ready = Vec::new();
    for g in &sys.devices {
        let Some(f) = g.fabric.get() else { continue };
        if f.state == "not_supported" {
            continue;
        }
        if f.state != "completed" || f.status != "success" {
            not_ready.push((
                g.index,
                format!("fabric state {}, status {}", f.state, f.status),
            ));
        }
    }
    if not_ready.is_empty() {
        return Outcome::Checked(vec![]);
    }
    let list = not_ready
        .iter()
        .map(|(i, _)| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut f = Finding::new(codes::GD039, Severity::Error, format!("The NVLink fabric is not ready on GPU {list}: Fabric Manager has not set it up"))
        .detail("On NVSwitch systems the GPUs join the NVLink fabric through Fabric Manager. Until registration completes, every CUDA program fails with \"system not yet initialized\" (cudaErrorSystemNotReady, 802). Fabric Manager must run and be the same version as the driver.");
    for (i, what) in &not_ready {
        f = f.evidence(Subject::Gpu(*i), what.clone(), "NVML");
    }
    Outcome::Checked(vec![f
        .fix_cmd(
            "Start Fabric Manager",
            "sudo systemctl enable --now nvidia-fabricmanager",
        )
        .fix_cmd(
            "Check why it did not",
            "sudo journalctl -u nvidia-fabricmanager --no-pager | tail -20",
        )
        .fix_text(
            "Its package version must equal the driver's (e.g. nvidia-fabricmanager-580 580.95.05)",
        )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::{Fabric, Field};
    use crate::testing::*;

    fn fabric(s: &mut Snapshot, i: usize, state: &str, status: &str) {
        nvml_gpu(s, i).fabric = Field::Value(Fabric {
            state: state.into(),
            status: status.into(),
        });
    }

    #[test]
    fn no_fabric_or_a_completed_one_is_clean() {
        assert_clean(run(&healthy()));
        let mut s = healthy();
        fabric(&mut s, 0, "completed", "success");
        fabric(&mut s, 1, "completed", "success");
        assert_clean(run(&s));
    }

    #[test]
    fn an_unfinished_fabric_is_an_error() {
        let mut s = healthy();
        fabric(&mut s, 0, "in_progress", "success");
        fabric(&mut s, 1, "completed", "failure");
        let f = only(run(&s), codes::GD039, Severity::Error);
        assert!(f.title.contains("not ready on GPU 0,1"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "sudo systemctl enable --now nvidia-fabricmanager"
        );
    }

    #[test]
    fn not_applicable_without_nvml() {
        assert_na(run(&no_gpu()));
    }
}
