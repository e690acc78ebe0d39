//! GD057: the memory-allocation probe found corrupted words, a kernel error, or could not
//! allocate what the driver said was free (fragmentation, MIG limits, a racing process).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::smoke::Step;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::SubjectKind;
use crate::subject::{SmokeStep, Subject};

pub const RULE: Rule = Rule {
    name: "smoke_memory",
    codes: &[codes::GD057],
    views: &[super::View::Smoke],
    checks: "every GPU allocated its free memory and read back what it wrote",
    judges: &[SubjectKind::SmokeMemory],
    run,
};

/// Reaching less than this share of the target counts as failing "well below" free memory.
const REACHED_SHARE: f64 = 0.9;

/// Allocation failed before reaching REACHED_SHARE of the target (the GD057 warning).
pub fn fell_short(m: &crate::facts::smoke::MemoryProbe) -> bool {
    m.alloc_error.is_some() && (m.allocated as f64) < m.target as f64 * REACHED_SHARE
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

fn run(snap: &Snapshot) -> Outcome {
    let run = match super::smoke_run(snap) {
        Ok(r) => r,
        Err(na) => return na,
    };
    let mut out = Vec::new();
    for d in &run.devices {
        let fact = Subject::SmokeStep(d.ordinal, SmokeStep::Memory);
        let m = match &d.memory {
            Some(Step::Ok(m)) => m,
            Some(Step::Failed { error, .. }) => {
                out.push(
                    Finding::new(
                        codes::GD057,
                        Severity::Error,
                        format!("{}: the memory probe failed: {}", d.label(), error.name),
                    )
                    .evidence(fact, error.to_string(), "smoke test")
                    .fix_text(
                        crate::compat::cuda_errors::lookup(error.code)
                            .map_or("Check `sudo dmesg | grep -i xid`", |k| k.fix),
                    ),
                );
                continue;
            }
            _ => continue,
        };
        if m.mismatches > 0 {
            out.push(
                Finding::new(codes::GD057, Severity::Error, format!("{}: {} memory words read back wrong", d.label(), m.mismatches))
                    .detail(format!(
                        "gpudoctor filled {} of GPU memory with an address-dependent pattern and its complement and read both back on the GPU; {} words differed. That is failing GPU memory (or a memory controller), the kind of fault ECC should have caught: check the ECC and row-remapping counters.",
                        gib(m.allocated), m.mismatches
                    ))
                    .evidence(fact.clone(), format!("{} mismatches in {}", m.mismatches, gib(m.allocated)), "smoke test")
                    .fix_cmd("Read the ECC and row-remapper state", match super::identity::gpu_of_cuda_device(snap, d.ordinal) {
                        Some(g) => crate::sh!("nvidia-smi -q -i {} -d ECC,ROW_REMAPPER", super::identity::smi_target(snap, g)),
                        None => "nvidia-smi -q -d ECC,ROW_REMAPPER".into(),
                    })
                    .fix_text("Drain the GPU and run `dcgmi diag -r 3`; replace it if errors recur after a reset"),
            );
        }
        if let Some(e) = &m.kernel_error {
            out.push(
                Finding::new(
                    codes::GD057,
                    Severity::Error,
                    format!(
                        "{}: the memory check's kernel failed: {}",
                        d.label(),
                        e.name
                    ),
                )
                .evidence(fact.clone(), e.to_string(), "smoke test")
                .fix_cmd(
                    "Look for the GPU's error in the kernel log",
                    "sudo dmesg | grep -i xid",
                ),
            );
        }
        if let (Some(e), Some(at)) = (&m.alloc_error, m.failed_at) {
            if fell_short(m) {
                let mig = snap
                    .nvml_system()
                    .and_then(|s| crate::facts::smoke::nvml_gpu(s, d))
                    .is_some_and(|g| g.mig.enabled.get() == Some(&true));
                let mut f = Finding::new(
                    codes::GD057,
                    Severity::Warning,
                    format!("{}: could allocate only {} of the {} free", d.label(), gib(m.allocated), gib(m.free_before)),
                )
                .detail(format!(
                    "The driver reported {} free and gpudoctor aimed for {} in {} pieces; allocation failed with {} once {} were held, and smaller pieces got only to {}. Allocations failing well below free memory mean fragmentation, a MIG slice or vGPU profile smaller than the reported figure, or another process allocating at the same time — jobs sized to the free figure will OOM.",
                    gib(m.free_before), gib(m.target), gib(m.chunk_bytes), e.name, gib(at), gib(m.allocated)
                ))
                .evidence(fact.clone(), format!("{} of {} target", gib(m.allocated), gib(m.target)), "smoke test");
                if mig {
                    f = f.context("MIG is enabled on this GPU", "NVML");
                }
                out.push(f.fix_cmd(
                    "See which processes hold or race for the memory",
                    "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
                ));
            }
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::smoke::MemoryProbe;
    use crate::testing::*;

    fn memory(s: &mut Snapshot) -> &mut MemoryProbe {
        match &mut smoke_dev(s, 0).memory {
            Some(Step::Ok(m)) => m,
            _ => unreachable!(),
        }
    }

    fn fell_short_at(s: &mut Snapshot, allocated: u64) {
        let m = memory(s);
        m.alloc_error = Some(cuda_error("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY"));
        m.failed_at = Some(allocated);
        m.allocated = allocated;
    }

    #[test]
    fn a_clean_memory_probe_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn words_read_back_wrong_are_an_error() {
        let mut s = healthy();
        memory(&mut s).mismatches = 7;
        let f = only(run(&s), codes::GD057, Severity::Error);
        assert!(
            f.title.contains("7 memory words read back wrong"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "nvidia-smi -q -i 0 -d ECC,ROW_REMAPPER");
    }

    #[test]
    fn a_failed_check_kernel_or_step_is_an_error() {
        let mut s = healthy();
        memory(&mut s).kernel_error = Some(cuda_error(
            "cuLaunchKernel",
            700,
            "CUDA_ERROR_ILLEGAL_ADDRESS",
        ));
        let f = only(run(&s), codes::GD057, Severity::Error);
        assert!(
            f.title.contains("the memory check's kernel failed"),
            "{}",
            f.title
        );
        let mut s = healthy();
        smoke_dev(&mut s, 0).memory = Some(Step::Failed {
            error: cuda_error("cuMemGetInfo", 999, "CUDA_ERROR_UNKNOWN"),
            detail: None,
        });
        let f = only(run(&s), codes::GD057, Severity::Error);
        assert!(
            f.title
                .contains("the memory probe failed: CUDA_ERROR_UNKNOWN"),
            "{}",
            f.title
        );
    }

    #[test]
    fn allocating_well_below_free_is_a_warning() {
        let mut s = healthy();
        fell_short_at(&mut s, 20 * GIB);
        let f = only(run(&s), codes::GD057, Severity::Warning);
        assert!(
            f.title
                .contains("could allocate only 20.00 GiB of the 79.00 GiB free"),
            "{}",
            f.title
        );
        assert!(!evidence_mentions(&f, "MIG"));
        nvml_gpu(&mut s, 0).mig.enabled = crate::facts::nvml::Field::Value(true);
        let f = only(run(&s), codes::GD057, Severity::Warning);
        assert!(evidence_mentions(&f, "MIG is enabled"));
    }

    #[test]
    fn stopping_near_the_target_is_fine() {
        let mut s = healthy();
        fell_short_at(&mut s, 70 * GIB);
        assert!(!fell_short(memory(&mut s)));
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_a_smoke_run() {
        assert_na(run(&no_gpu()));
    }
}
