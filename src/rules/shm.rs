//! GD051: a container's /dev/shm at Docker's 64 MB default. NCCL moves data between the GPUs
//! of one node through shared memory, and PyTorch DataLoader workers pass batches through it;
//! both fail there ("NCCL error: unhandled system error", "Bus error", "DataLoader worker
//! killed").

use super::{Outcome, Rule};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;

pub const RULE: Rule = Rule {
    name: "shm",
    codes: &["GD051"],
    views: &[],
    checks: "a container's /dev/shm is large enough for NCCL and DataLoader workers",
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
    Outcome::Checked(vec![Finding::new("GD051", Severity::Warning, format!("/dev/shm in this {kind} container is only {mib} MiB"))
        .detail(format!("NCCL passes data between the GPUs of one node through /dev/shm, and PyTorch DataLoader workers hand batches over through it. At {mib} MiB multi-GPU jobs fail with \"NCCL error: unhandled system error\" or a bus error, and data loading with \"DataLoader worker ... is killed by signal: Bus error\"."))
        .evidence("shm", format!("/dev/shm size {mib} MiB"), "/proc/mounts")
        .fix_cmd("Give the container more shared memory", "docker run --shm-size=16g ... (or --ipc=host)")
        .fix_text("Kubernetes: mount an emptyDir with medium: Memory at /dev/shm")])
}
