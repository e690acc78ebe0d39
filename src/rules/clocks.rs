//! GD035: clocks held down by thermal or power protection (hardware slowdown, power brake,
//! software thermal slowdown), not by idleness or a chosen power cap.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "clocks",
    codes: &[codes::GD035],
    views: &[super::View::Devices],
    checks: "no GPU is slowed by thermal or power-brake protection",
    judges: &[SubjectKind::Gpu],
    run,
};

/// NVML's throttle reasons that mean protection kicked in (nvml.h nvmlClocksEventReason*).
const PROTECTIVE: &[(&str, &str)] = &[
    (
        "HW_SLOWDOWN",
        "hardware slowdown (temperature or power too high)",
    ),
    ("HW_THERMAL_SLOWDOWN", "hardware thermal slowdown"),
    (
        "HW_POWER_BRAKE_SLOWDOWN",
        "power brake (the power supply asserted it)",
    ),
    ("SW_THERMAL_SLOWDOWN", "software thermal slowdown"),
];

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    let mut out = Vec::new();
    for g in sys.devices.iter().filter(|g| g.handle_error.is_none()) {
        let Some(t) = g.throttle.get() else { continue };
        let active: Vec<&str> = PROTECTIVE
            .iter()
            .filter(|(name, _)| t.reasons.iter().any(|r| r == name))
            .map(|(_, what)| *what)
            .collect();
        if active.is_empty() {
            continue;
        }
        let mut f = Finding::new(codes::GD035, Severity::Warning, format!("{} is throttled: {}", g.label(), active.join(", ")))
            .detail("The GPU lowered its clocks to protect itself. Jobs run slower than the same GPU elsewhere, and a persistent slowdown points at cooling (fans, airflow, dust, a failed fan) or power delivery.")
            .evidence(Subject::Gpu(g.index), format!("throttle reasons: {}", t.reasons.join(", ")), "NVML");
        if let (Some(c), Some(max)) = (g.temperature_c.get(), g.temperature_slowdown_c.get()) {
            f = f.context(format!("temperature {c} °C (slowdown at {max} °C)"), "NVML");
        }
        if let (Some(sm), Some(max)) = (g.clocks.sm_mhz.get(), g.clocks.max_sm_mhz.get()) {
            f = f.context(format!("SM clock {sm} MHz of {max} MHz"), "NVML");
        }
        out.push(
            f.fix_text("Check cooling (fans, airflow, inlet temperature) and power cabling")
                .fix_cmd("Watch it", "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"),
        );
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::{Field, Throttle};
    use crate::testing::*;

    fn reasons(r: &[&str]) -> Snapshot {
        let mut s = healthy();
        nvml_gpu(&mut s, 0).throttle = Field::Value(Throttle {
            bits: 0,
            reasons: r.iter().map(|x| x.to_string()).collect(),
        });
        s
    }

    #[test]
    fn idle_gpus_are_not_throttled() {
        assert_clean(run(&healthy()));
        assert_clean(run(&reasons(&["SW_POWER_CAP", "GPU_IDLE"])));
    }

    #[test]
    fn protective_slowdown_is_a_warning() {
        let f = only(
            run(&reasons(&["HW_SLOWDOWN", "SW_THERMAL_SLOWDOWN"])),
            codes::GD035,
            Severity::Warning,
        );
        assert!(
            f.title.contains("is throttled: hardware slowdown"),
            "{}",
            f.title
        );
        assert!(f.title.contains("software thermal slowdown"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"
        );
    }

    #[test]
    fn not_applicable_without_nvml() {
        assert_na(run(&no_gpu()));
    }
}
