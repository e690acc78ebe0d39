//! GD051: a container's /dev/shm at Docker's 64 MB default. NCCL moves data between the GPUs
//! of one node through shared memory, and PyTorch DataLoader workers pass batches through it;
//! both fail there ("NCCL error: unhandled system error", "Bus error", "DataLoader worker
//! killed").

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "shm",
    codes: &[codes::GD051],
    views: &[],
    checks: "a container's /dev/shm is large enough for NCCL and DataLoader workers",
    judges: &[SubjectKind::Shm],
    run,
};

/// Docker's default /dev/shm is 64 MiB; anything at or below it is the default or smaller.
const SMALL_KIB: u64 = 64 * 1024;

fn run(snap: &Snapshot) -> Outcome {
    let Some(kind) = snap.container_kind() else {
        return Outcome::NotApplicable("not in a container".into());
    };
    let Some(size) = snap
        .platform
        .as_ref()
        .and_then(|p| p.shm_kib.as_ref())
        .and_then(|f| f.get().copied())
    else {
        return Outcome::NotApplicable("the size of /dev/shm is unknown".into());
    };
    let gpus = snap.gpu_count().map(|c| c.count).unwrap_or(0);
    let torch = snap
        .python
        .as_ref()
        .is_some_and(|envs| envs.iter().any(|e| e.torch.is_some()));
    if size > SMALL_KIB || !(gpus > 1 || torch) {
        return Outcome::Checked(vec![]);
    }
    let mib = size / 1024;
    Outcome::Checked(vec![Finding::new(codes::GD051, Severity::Warning, format!("/dev/shm in this {kind} container is only {mib} MiB"))
        .detail(format!("NCCL passes data between the GPUs of one node through /dev/shm, and PyTorch DataLoader workers hand batches over through it. At {mib} MiB multi-GPU jobs fail with \"NCCL error: unhandled system error\" or a bus error, and data loading with \"DataLoader worker ... is killed by signal: Bus error\"."))
        .evidence(Subject::Shm, format!("/dev/shm size {mib} MiB"), "/proc/mounts")
        .fix_cmd("Give the container more shared memory (or share the host's with --ipc=host)", "docker run --shm-size=16g IMAGE")
        .fix_text("Kubernetes: mount an emptyDir with medium: Memory at /dev/shm")])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;
    use crate::testing::*;

    fn container_with_shm(kib: u64) -> Snapshot {
        let mut s = healthy();
        in_container(&mut s, "docker");
        s.platform.as_mut().unwrap().shm_kib = Some(Fact::value("/proc/mounts", kib));
        s
    }

    #[test]
    fn a_large_shm_is_clean() {
        assert_clean(run(&container_with_shm(16 * 1024 * 1024)));
    }

    #[test]
    fn dockers_default_shm_is_a_warning() {
        let f = only(
            run(&container_with_shm(SMALL_KIB)),
            codes::GD051,
            Severity::Warning,
        );
        assert!(
            f.title.contains("docker container is only 64 MiB"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "docker run --shm-size=16g IMAGE");
    }

    #[test]
    fn a_small_shm_matters_only_with_several_gpus_or_torch() {
        let mut s = container_with_shm(SMALL_KIB);
        s.python = Some(Vec::new());
        nvml_sys(&mut s).device_count = crate::facts::nvml::Field::Value(1);
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_outside_a_container_or_without_a_size() {
        assert_na(run(&healthy()));
        let mut s = healthy();
        in_container(&mut s, "docker");
        s.platform.as_mut().unwrap().shm_kib = None;
        assert_na(run(&s));
    }
}
