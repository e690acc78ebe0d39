//! GD038: persistence mode off on a Linux server: the driver tears the GPUs down when the
//! last client exits, so every first CUDA call or nvidia-smi pays the initialisation again.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "persistence",
    codes: &[codes::GD038],
    views: &[super::View::Devices],
    checks: "persistence mode is on (servers) or irrelevant",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    if snap.is_wsl() {
        return Outcome::NotApplicable("WSL has no persistence mode".into());
    }
    let off: Vec<u32> = sys
        .devices
        .iter()
        .filter(|g| g.persistence_mode.get() == Some(&false))
        .map(|g| g.index)
        .collect();
    if off.is_empty() {
        return Outcome::Checked(vec![]);
    }
    let list = off.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let mut f = Finding::new(codes::GD038, Severity::Info, format!("Persistence mode is off on GPU {list}"))
        .detail("Without persistence the driver unloads the GPU state whenever no process holds it, so each new job (and each nvidia-smi) waits for re-initialisation — seconds on a multi-GPU node — and ECC/clock settings can be lost in between. Desktops with a display server do not need it; servers do.")
        ;
    for i in &off {
        f = f.evidence(Subject::Gpu(*i), "persistence mode off", "NVML");
    }
    Outcome::Checked(vec![f.fix_cmd(
        "Enable the persistence daemon (survives reboots)",
        "sudo systemctl enable --now nvidia-persistenced",
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::Field;
    use crate::testing::*;

    #[test]
    fn persistence_on_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn persistence_off_is_info_with_the_daemon() {
        let mut s = healthy();
        for i in 0..2 {
            nvml_gpu(&mut s, i).persistence_mode = Field::Value(false);
        }
        let f = only(run(&s), codes::GD038, Severity::Info);
        assert!(f.title.contains("off on GPU 0,1"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "sudo systemctl enable --now nvidia-persistenced"
        );
    }

    #[test]
    fn not_applicable_without_nvml_or_on_wsl() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        make_wsl(&mut s);
        nvml_gpu(&mut s, 0).persistence_mode = Field::Value(false);
        assert_na(run(&s));
    }
}
