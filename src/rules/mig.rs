//! GD037: MIG. With MIG on, CUDA sees MIG instances, not the GPU: CUDA_VISIBLE_DEVICES must
//! name MIG UUIDs, a process uses one instance (older PyTorch: only the first), and a
//! pending mode change needs a GPU reset.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "mig",
    codes: &[codes::GD037],
    views: &[super::View::Devices],
    checks: "MIG mode is settled and CUDA_VISIBLE_DEVICES fits it",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    let cvd = snap.env_value(crate::envvars::CUDA_VISIBLE_DEVICES.name);
    let mut out = Vec::new();
    for g in sys.devices.iter().filter(|g| g.handle_error.is_none()) {
        let (Some(on), pending) = (g.mig.enabled.get(), g.mig.pending.get()) else {
            continue;
        };
        let key = Subject::Gpu(g.index);
        if pending.is_some_and(|p| p != on) {
            out.push(
                Finding::new(codes::GD037, Severity::Warning, format!("{}: MIG mode change is pending ({} → {})", g.label(), if *on { "on" } else { "off" }, if *on { "off" } else { "on" }))
                    .detail("The new MIG mode takes effect only after a GPU reset or reboot; until then the GPU keeps the old mode.")
                    .evidence(key.clone(), "MIG current ≠ pending", "NVML")
                    .fix_cmd("Reset the GPU (no process may use it)", crate::sh!("sudo nvidia-smi -r -i {}", g.index)),
            );
        }
        if !*on {
            continue;
        }
        let uuids: Vec<String> = g
            .mig
            .instances
            .iter()
            .filter_map(|m| m.uuid.get().cloned())
            .collect();
        // A warning only when CUDA_VISIBLE_DEVICES selects this GPU as a whole (its index or
        // GPU UUID): CUDA then sees none of its instances.
        let selects_whole_gpu = cvd.is_some_and(|v| {
            v.split(',').map(str::trim).any(|e| {
                e == g.index.to_string()
                    || (e.starts_with("GPU-") && g.uuid.get().is_some_and(|u| u.starts_with(e)))
            })
        });
        let severity = if selects_whole_gpu {
            Severity::Warning
        } else {
            Severity::Info
        };
        let mut f = Finding::new(
            codes::GD037,
            severity,
            if uuids.is_empty() {
                format!("{} has MIG enabled but no MIG instance: CUDA sees no device on it", g.label())
            } else {
                format!("{} has MIG enabled with {} instance(s): CUDA sees instances, not the GPU", g.label(), uuids.len())
            },
        )
        .detail("With MIG on, each process uses one MIG instance. Select it with CUDA_VISIBLE_DEVICES=MIG-<uuid> (indices name whole GPUs, not instances); PyTorch before 2.x used only the first visible instance. A GPU with MIG on and no instances gives CUDA nothing to run on.")
        .evidence(key, format!("MIG on, {} instance(s)", uuids.len()), "NVML");
        for u in &uuids {
            f = f.context(u.clone(), "NVML");
        }
        f = match uuids.first() {
            Some(u) => f.fix_cmd(
                "Pick an instance",
                crate::sh!("export CUDA_VISIBLE_DEVICES={}", u),
            ),
            None => f.fix_cmd(
                "Create instances (an administrator)",
                crate::sh!("sudo nvidia-smi mig -i {} -cgi 19,19 -C", g.index),
            ),
        };
        out.push(f);
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::{Field, MigInstance};
    use crate::testing::*;

    fn mig_on(instances: u32) -> Snapshot {
        let mut s = healthy();
        let g = nvml_gpu(&mut s, 0);
        g.mig.enabled = Field::Value(true);
        g.mig.pending = Field::Value(true);
        g.mig.instances = (0..instances)
            .map(|i| MigInstance {
                index: i,
                uuid: Field::Value(format!("MIG-{i}0000000-aaaa-bbbb-cccc-dddddddddddd")),
                memory_total: Field::Value(10 * GIB),
            })
            .collect();
        s
    }

    #[test]
    fn healthy_gpus_without_mig_are_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_pending_mode_change_is_a_warning() {
        let mut s = healthy();
        nvml_gpu(&mut s, 1).mig.pending = Field::Value(true);
        let f = only(run(&s), codes::GD037, Severity::Warning);
        assert!(
            f.title.contains("MIG mode change is pending (off → on)"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo nvidia-smi -r -i 1");
    }

    #[test]
    fn mig_with_instances_is_info_naming_one() {
        let f = only(run(&mig_on(2)), codes::GD037, Severity::Info);
        assert!(f.title.contains("with 2 instance(s)"), "{}", f.title);
        assert!(
            first_cmd(&f).starts_with("export CUDA_VISIBLE_DEVICES=MIG-0"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn selecting_the_whole_mig_gpu_is_a_warning() {
        let mut s = mig_on(2);
        set_env(&mut s, "CUDA_VISIBLE_DEVICES", "0");
        only(run(&s), codes::GD037, Severity::Warning);
        let mut s = mig_on(2);
        set_env(&mut s, "CUDA_VISIBLE_DEVICES", &uuid(0));
        only(run(&s), codes::GD037, Severity::Warning);
        let mut s = mig_on(2);
        set_env(&mut s, "CUDA_VISIBLE_DEVICES", "1");
        only(run(&s), codes::GD037, Severity::Info);
    }

    #[test]
    fn mig_without_instances_says_how_to_create_them() {
        let f = only(run(&mig_on(0)), codes::GD037, Severity::Info);
        assert!(f.title.contains("no MIG instance"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo nvidia-smi mig -i 0 -cgi 19,19 -C");
    }

    #[test]
    fn gpus_without_mig_support_are_skipped() {
        let mut s = healthy();
        nvml_gpu(&mut s, 0).mig.enabled = Field::NotSupported;
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_nvml() {
        assert_na(run(&no_gpu()));
    }
}
