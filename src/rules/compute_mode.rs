//! GD036: who else is on the GPU. Exclusive_Process with a process already holding it
//! refuses every new context ("all CUDA-capable devices are busy or unavailable", error 46;
//! tests/it/nvml.rs exclusive_gpu_already_held); Prohibited refuses all; other processes holding most of the memory
//! make the next allocation run out.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "compute_mode",
    codes: &[codes::GD036],
    views: &[super::View::Devices],
    checks: "every GPU accepts new CUDA contexts and has most of its memory free",
    judges: &[SubjectKind::Gpu],
    run,
};

/// Memory other processes may hold before a new job is likely to run out.
const BUSY_FRACTION: f64 = 0.5;

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    let me = std::process::id();
    let mut out = Vec::new();
    for g in sys.devices.iter().filter(|g| g.handle_error.is_none()) {
        // Exclusive modes limit compute contexts; a display server's graphics context does not
        // count.
        let procs: Vec<_> = g
            .processes
            .get()
            .map(|p| {
                p.iter()
                    .filter(|p| p.pid != me && p.kind == "compute")
                    .collect()
            })
            .unwrap_or_default();
        let holders = procs
            .iter()
            .map(|p| {
                format!(
                    "pid {} ({})",
                    p.pid,
                    p.name.as_deref().unwrap_or("name unknown")
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let key = Subject::Gpu(g.index);
        match g.compute_mode.get().map(String::as_str) {
            Some("prohibited") => out.push(
                Finding::new(codes::GD036, Severity::Error, format!("{} is in Prohibited compute mode: no process may use it", g.label()))
                    .detail("In Prohibited mode the driver refuses every CUDA context on this GPU (\"all CUDA-capable devices are busy or unavailable\", error 46).")
                    .evidence(key.clone(), "compute mode prohibited", "NVML")
                    .fix_cmd("If you administer the node and the GPU should be usable", crate::sh!("sudo nvidia-smi -i {} -c DEFAULT", g.index)),
            ),
            Some(mode @ ("exclusive_process" | "exclusive_thread")) if !procs.is_empty() => out.push(
                Finding::new(codes::GD036, Severity::Error, format!("{} is in Exclusive_Process mode and already held by {holders}", g.label()))
                    .detail("An exclusive GPU accepts one process at a time; every other process fails to create a context with \"all CUDA-capable devices are busy or unavailable\" (cudaErrorDevicesUnavailable, 46) until the holder exits.")
                    .evidence(key.clone(), format!("compute mode {mode}; in use by {holders}"), "NVML")
                    .fix_cmd("Use another GPU", "export CUDA_VISIBLE_DEVICES=<a free GPU's index>")
                    .fix_text("Or stop the holding process")
                    .fix_cmd("If sharing is intended and you administer the node (or run the jobs under MPS)", crate::sh!("sudo nvidia-smi -i {} -c DEFAULT", g.index)),
            ),
            _ => {}
        }
        // Under MIG each instance has its own memory: the GPU-wide sum says nothing.
        let mig = g.mig.enabled.get() == Some(&true);
        if let (Some(mem), false, false) = (g.memory.get(), procs.is_empty(), mig) {
            // Saturating: a crafted snapshot's sizes can overflow a plain sum.
            let held = procs
                .iter()
                .filter_map(|p| p.used_memory)
                .fold(0u64, u64::saturating_add);
            if mem.total > 0 && held as f64 > BUSY_FRACTION * mem.total as f64 {
                let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
                out.push(
                    Finding::new(codes::GD036, Severity::Warning, format!("{}: other processes hold {:.1} of {:.1} GiB", g.label(), gib(held), gib(mem.total)))
                        .detail("A job started on this GPU gets what is left and fails with \"CUDA out of memory\" sooner than its size suggests. Leftover processes from crashed runs or notebooks are the usual holders.")
                        .evidence(key.clone(), format!("{holders} hold {:.1} GiB", gib(held)), "NVML")
                        .fix_cmd("See who holds it", "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv")
                        .fix_text("Stop stale processes, or pick another GPU with CUDA_VISIBLE_DEVICES"),
                );
            }
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::{Field, Process};
    use crate::testing::*;

    fn held(s: &mut Snapshot, pid: u32, bytes: u64) {
        nvml_gpu(s, 0).processes = Field::Value(vec![Process {
            pid,
            kind: "compute".into(),
            name: Some("python".into()),
            used_memory: Some(bytes),
        }]);
    }

    fn mode(s: &mut Snapshot, m: &str) {
        nvml_gpu(s, 0).compute_mode = Field::Value(m.into());
    }

    #[test]
    fn healthy_gpus_accept_contexts() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn prohibited_mode_is_an_error() {
        let mut s = healthy();
        mode(&mut s, "prohibited");
        let f = only(run(&s), codes::GD036, Severity::Error);
        assert!(f.title.contains("Prohibited compute mode"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo nvidia-smi -i 0 -c DEFAULT");
    }

    #[test]
    fn an_exclusive_gpu_held_by_another_process_is_an_error() {
        let mut s = healthy();
        mode(&mut s, "exclusive_process");
        assert_clean(run(&s));
        held(&mut s, 4242, GIB);
        let f = only(run(&s), codes::GD036, Severity::Error);
        assert!(
            f.title.contains("already held by pid 4242 (python)"),
            "{}",
            f.title
        );
        assert_eq!(
            first_cmd(&f),
            "export CUDA_VISIBLE_DEVICES=<a free GPU's index>"
        );
    }

    #[test]
    fn others_holding_most_memory_is_a_warning() {
        let mut s = healthy();
        held(&mut s, 4242, 60 * GIB);
        let f = only(run(&s), codes::GD036, Severity::Warning);
        assert!(
            f.title.contains("other processes hold 60.0 of 80.0 GiB"),
            "{}",
            f.title
        );
        // Under MIG the GPU-wide sum says nothing.
        nvml_gpu(&mut s, 0).mig.enabled = Field::Value(true);
        assert_clean(run(&s));
    }

    #[test]
    fn this_process_does_not_count() {
        let mut s = healthy();
        mode(&mut s, "exclusive_process");
        held(&mut s, std::process::id(), 60 * GIB);
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_nvml() {
        assert_na(run(&no_gpu()));
    }

    #[test]
    fn huge_used_memory_does_not_overflow() {
        let mut s = healthy();
        let p = |pid| Process {
            pid,
            kind: "compute".into(),
            name: None,
            used_memory: Some(u64::MAX / 2 + 1),
        };
        nvml_gpu(&mut s, 0).processes = Field::Value(vec![p(1), p(2)]);
        only(run(&s), codes::GD036, Severity::Warning);
    }
}
