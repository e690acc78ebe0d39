//! GD058: host↔device copies that fail, pinned memory that cannot be had, or pinned
//! bandwidth far below what the GPU's PCIe link can carry (a degraded link, the wrong NUMA
//! node, an IOMMU in translation mode, a bad riser).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::smoke::{link, nvml_gpu, Step};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::SubjectKind;
use crate::subject::{SmokeStep, Subject};

pub const RULE: Rule = Rule {
    name: "smoke_transfer",
    codes: &[codes::GD058],
    views: &[super::View::Smoke],
    checks:
        "host↔GPU copies work, from pinned memory too, at 60 % or more of the PCIe link's bandwidth",
    judges: &[SubjectKind::SmokeTransfer],
    run,
};

/// Below this share of the link's theoretical bandwidth is a warning: 75 % (DCGM's margin for
/// its memory test) of the ≈ 80 % healthy pinned copies reach. Measured healthy copy-engine
/// figures: 25–26 GB/s on gen4 x16 (31.5 GB/s; NVIDIA/nvbandwidth README and issue #53,
/// A100-SXM4-80GB device→host) and 55–57 GB/s host→device on an H100 (gen5 x16, 63 GB/s;
/// nvbandwidth issue #6), i.e. 79–90 %.
pub const MIN_SHARE: f64 = 0.6;
/// Copies smaller than this are dominated by latency and do not judge the link.
pub const MIN_BYTES: u64 = 32 << 20;

fn run(snap: &Snapshot) -> Outcome {
    let run = match super::smoke_run(snap) {
        Ok(r) => r,
        Err(na) => return na,
    };
    let mut out = failures(run);
    // Judging the bandwidth needs the link (NVML) and copies big enough to fill it: the
    // size each GPU really copied, which the host-memory fit may have cut below the setting.
    let Some(sys) = snap.nvml_system() else {
        return if out.is_empty() {
            Outcome::NotApplicable(
                "NVML did not answer: the link's width and generation are unknown".into(),
            )
        } else {
            Outcome::Checked(out)
        };
    };
    let mut too_small = None;
    let mut judged = false;
    for d in &run.devices {
        let Some(Step::Ok(t)) = &d.transfer else {
            continue;
        };
        if t.bytes < MIN_BYTES {
            too_small = Some(t.bytes);
            continue;
        }
        // Judged only when NVML gives this GPU's link.
        let Some(g) = nvml_gpu(sys, d) else { continue };
        let Some(l) = link(g) else { continue };
        judged = true;
        let slow: Vec<(&str, f64)> = [
            ("host→device", t.pinned_h2d_gbps),
            ("device→host", t.pinned_d2h_gbps),
        ]
        .into_iter()
        .filter_map(|(dir, v)| v.map(|v| (dir, v)))
        .filter(|(_, v)| *v < l.gbps * MIN_SHARE)
        .collect();
        if slow.is_empty() {
            continue;
        }
        let figures: Vec<String> = slow
            .iter()
            .map(|(dir, v)| format!("{dir} {v:.1} GB/s ({:.0} %)", v / l.gbps * 100.0))
            .collect();
        let mut f = Finding::new(
            codes::GD058,
            Severity::Warning,
            format!("{}: pinned copies reach only {} of a PCIe gen{} x{} link", d.label(), figures.join(", "), l.generation, l.width),
        )
        .detail(format!(
            "Pinned-memory copies of {} MiB should reach well over {:.0} % of the link's {:.1} GB/s per direction (about 80 % is typical). Lower figures come from a link trained below its maximum (GD034), the process running on the far NUMA node from the GPU, an IOMMU in translation mode, or a failing riser or cable; data loading and multi-GPU traffic through the host slow down with it.",
            t.bytes >> 20,
            MIN_SHARE * 100.0,
            l.gbps
        ))
        .evidence(Subject::SmokeStep(d.ordinal, SmokeStep::Transfer), figures.join(", "), "smoke test (median of timed copies)")
        .context(format!("link max gen{} x{} = {:.1} GB/s", l.generation, l.width, l.gbps), "NVML");
        if let (Some(gen), Some(width)) = (g.pcie.generation.get(), g.pcie.width.get()) {
            f = f.context(format!("link now gen{gen} x{width}"), "NVML");
        }
        out.push(
            f.fix_cmd("Check the GPU's NUMA node and CPU affinity", match g.pci_bus_id.get() {
                Some(b) => crate::sh!("nvidia-smi topo -m; cat /sys/bus/pci/devices/{}/numa_node", crate::facts::pci::sysfs_address(b)),
                None => "nvidia-smi topo -m; cat /sys/bus/pci/devices/<bus id>/numa_node".into(),
            })
                .fix_text("Run the job with `numactl --cpunodebind=N --membind=N` on the GPU's node; if the link is below its maximum width, reseat the card or riser"),
        );
    }
    if judged || !out.is_empty() {
        return Outcome::Checked(out);
    }
    Outcome::NotApplicable(match too_small {
        Some(bytes) => format!(
            "copies of {} MiB are too small to saturate a link (at least {} MiB)",
            bytes >> 20,
            MIN_BYTES >> 20
        ),
        None => "no GPU's copies could be set against its link (NVML gave no link width and generation for them)".into(),
    })
}

/// Copies that failed outright, and pinned memory that could not be had.
fn failures(run: &crate::facts::smoke::SmokeRun) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in &run.devices {
        let fact = Subject::SmokeStep(d.ordinal, SmokeStep::Transfer);
        match &d.transfer {
            Some(Step::Failed { error, .. }) => out.push(
                Finding::new(codes::GD058, Severity::Error, format!("{}: host↔GPU copies failed: {}", d.label(), error.name))
                    .detail("The smoke test could not copy between host and GPU memory. Out of memory means the copy buffer did not fit (a smaller --transfer-size tells); an illegal address or unknown error on a plain copy points at DMA: the IOMMU, the PCIe link or the GPU (look for AER and Xid lines in the kernel log).")
                    .evidence(fact, error.to_string(), "smoke test")
                    .fix_cmd("Look for PCIe (AER), IOMMU (DMAR) and GPU (Xid) errors", "sudo dmesg | grep -i -E 'aer|dmar|iommu|xid'"),
            ),
            Some(Step::Ok(t)) => {
                if let Some(e) = &t.pinned_error {
                    out.push(
                        Finding::new(codes::GD058, Severity::Warning, format!("{}: no pinned host memory: {}", d.label(), e.name))
                            .detail("cuMemHostAlloc could not page-lock host memory for the copies. PyTorch's pin_memory=True DataLoaders and NCCL's host buffers need it. The driver pins this memory itself, so `ulimit -l` (which bounds mlock and RDMA registrations) does not usually decide it: the host or this process's cgroup is short of memory that can be pinned, WSL's pinned-memory ceiling was reached, or the driver refused (it logs why).")
                            .evidence(fact, e.to_string(), "smoke test")
                            .fix_cmd("See the host's and the cgroup's free memory", "free -g; cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory.current 2>/dev/null")
                            .fix_cmd("See what the driver logged", "sudo dmesg | grep -i -E 'nvrm|nvidia' | tail"),
                    );
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn copies_near_the_links_bandwidth_are_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn slow_pinned_copies_are_a_warning_with_the_numa_node() {
        let mut s = healthy();
        smoke_transfer(&mut s, 0).pinned_h2d_gbps = Some(10.0);
        let f = only(run(&s), codes::GD058, Severity::Warning);
        assert!(
            f.title
                .contains("pinned copies reach only host→device 10.0 GB/s"),
            "{}",
            f.title
        );
        assert!(f.title.contains("PCIe gen5 x16"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "nvidia-smi topo -m; cat /sys/bus/pci/devices/0000:01:00.0/numa_node"
        );
    }

    #[test]
    fn failed_copies_are_an_error_even_without_nvml() {
        let mut s = healthy();
        smoke_dev(&mut s, 1).transfer = Some(Step::Failed {
            error: cuda_error("cuMemcpyHtoD", 700, "CUDA_ERROR_ILLEGAL_ADDRESS"),
            detail: None,
        });
        s.nvml = None;
        let f = only(run(&s), codes::GD058, Severity::Error);
        assert!(f.title.contains("host↔GPU copies failed"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "sudo dmesg | grep -i -E 'aer|dmar|iommu|xid'"
        );
    }

    #[test]
    fn no_pinned_memory_is_a_warning() {
        let mut s = healthy();
        let t = smoke_transfer(&mut s, 0);
        t.pinned_error = Some(cuda_error("cuMemHostAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY"));
        t.pinned_h2d_gbps = None;
        t.pinned_d2h_gbps = None;
        let f = only(run(&s), codes::GD058, Severity::Warning);
        assert!(f.title.contains("no pinned host memory"), "{}", f.title);
    }

    #[test]
    fn not_applicable_without_link_facts_or_big_enough_copies() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        s.nvml = None;
        assert_na(run(&s));
        let mut s = healthy();
        for i in 0..2 {
            smoke_transfer(&mut s, i).bytes = MIN_BYTES / 2;
        }
        assert!(assert_na(run(&s)).contains("too small"));
        let mut s = healthy();
        for i in 0..2 {
            crate::testing::nvml_gpu(&mut s, i).pcie.max_width =
                crate::facts::nvml::Field::NotSupported;
        }
        assert_na(run(&s));
    }
}
