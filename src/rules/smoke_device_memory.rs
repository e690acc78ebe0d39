//! GD090: device-to-device copies on a GPU that fail, or that its memory serves far below
//! what a healthy GPU of the same SKU delivers (DCGM's per-SKU minimum: a memory clock held
//! down, a degraded HBM stack, a GPU that needs service).

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::memory_bandwidth::{self, MemoryBandwidthRow};
use crate::facts::smoke::{nvml_gpu, SmokeDevice, Step, Transfer};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::{SmokeStep, Subject, SubjectKind};

pub const RULE: Rule = Rule {
    name: "smoke_device_memory",
    codes: &[codes::GD090],
    views: &[super::View::Smoke],
    checks: "device-to-device copies work and reach DCGM's minimum for the GPU's SKU (75 % of what a healthy one delivers)",
    judges: &[SubjectKind::SmokeTransfer],
    run,
};

/// Copies smaller than this are dominated by launch latency and do not judge the memory
/// (DCGM calibrated its figures with 100 MiB buffers).
pub const MIN_BYTES: u64 = 32 << 20;

fn run(snap: &Snapshot) -> Outcome {
    let run = match super::smoke_run(snap) {
        Ok(r) => r,
        Err(na) => return na,
    };
    let mut out = Vec::new();
    let mut judged = false;
    let mut unjudged = Vec::new();
    for d in &run.devices {
        let Some(Step::Ok(t)) = &d.transfer else {
            continue;
        };
        if let Some(e) = &t.device_error {
            out.push(
                Finding::new(codes::GD090, Severity::Error, format!("{}: device-to-device copies failed: {}", d.label(), e.name))
                    .detail("cuMemcpyDtoD between two buffers of the GPU's own memory failed, while copies to and from the host worked. Frameworks copy on the device all the time (a tensor's .clone(), a contiguous()); an illegal address or an ECC error here points at the GPU's memory: look for Xid 48, 63, 64, 94 or 95 in the kernel log.")
                    .evidence(Subject::SmokeStep(d.ordinal, SmokeStep::Transfer), e.to_string(), "smoke test")
                    .fix_cmd("Look for the GPU's memory errors in the kernel log", "sudo dmesg | grep -i -E 'xid|nvrm'"),
            );
            continue;
        }
        if let Some(why) = &t.device_skipped {
            unjudged.push(format!("{}: {why}", d.label()));
            continue;
        }
        let Some(gbps) = t.device_gbps else { continue };
        let bytes = t.device_bytes.unwrap_or(t.bytes);
        if bytes < MIN_BYTES {
            unjudged.push(format!(
                "{}: copies of {} MiB are too small to judge its memory (at least {} MiB)",
                d.label(),
                bytes >> 20,
                MIN_BYTES >> 20
            ));
            continue;
        }
        let Some(row) = sku(snap, d) else {
            unjudged.push(format!(
                "{}: DCGM's table of healthy figures has no row for its PCI device id",
                d.label()
            ));
            continue;
        };
        judged = true;
        if gbps * 1000.0 < f64::from(row.minimum_mbps) {
            out.push(slow(snap, d, t, gbps, row));
        }
    }
    if judged || !out.is_empty() {
        return Outcome::Checked(out);
    }
    Outcome::NotApplicable(if unjudged.is_empty() {
        "no device-to-device copy figure (an older report, or no GPU finished its copies)".into()
    } else {
        format!("not judged: {}", unjudged.join("; "))
    })
}

/// The table's row for the smoke device's GPU, by NVML's PCI device id.
fn sku(snap: &Snapshot, d: &SmokeDevice) -> Option<&'static MemoryBandwidthRow> {
    let g = nvml_gpu(snap.nvml_system()?, d)?;
    memory_bandwidth::for_pci_device_id(g.pci_device_id.get()?)
}

fn slow(
    snap: &Snapshot,
    d: &SmokeDevice,
    t: &Transfer,
    gbps: f64,
    row: &MemoryBandwidthRow,
) -> Finding {
    let min = f64::from(row.minimum_mbps) / 1000.0;
    let healthy = (row.healthy_mbps > 0).then(|| f64::from(row.healthy_mbps) / 1000.0);
    let f = Finding::new(
        codes::GD090,
        Severity::Warning,
        format!(
            "{}: its memory serves device-to-device copies at {gbps:.0} GB/s, below the {min:.0} GB/s a healthy {} reaches",
            d.label(),
            row.name
        ),
    )
    .detail(format!(
        "Copies of {} MiB between two buffers in the GPU's own memory, timed by the GPU's events and counted as bytes read plus bytes written, reached {gbps:.0} GB/s. DCGM's memory bandwidth diagnostic fails this SKU below {min:.0} GB/s, 75 % of what NVIDIA measured on a healthy one{}. Every kernel that streams through memory (most of training and inference) slows with it: a memory clock held down (power or thermal limits, an application clock set low), a degraded memory stack, or a GPU that needs service.",
        t.device_bytes.unwrap_or(t.bytes) >> 20,
        healthy.map_or(String::new(), |h| format!(" ({h:.0} GB/s)")),
    ))
    .evidence(
        Subject::SmokeStep(d.ordinal, SmokeStep::Transfer),
        format!("device-to-device {gbps:.0} GB/s"),
        "smoke test (median of timed copies)",
    )
    .context(
        format!(
            "{}: minimum {min:.0} GB/s{}",
            row.name,
            healthy.map_or(String::new(), |h| format!(", healthy {h:.0} GB/s"))
        ),
        format!("{}, line {}", memory_bandwidth::SOURCE, row.line),
    );
    let bus = snap
        .nvml_system()
        .and_then(|s| nvml_gpu(s, d))
        .and_then(|g| g.pci_bus_id.get().cloned());
    let target = bus.unwrap_or_else(|| d.ordinal.to_string());
    f.fix_cmd(
            "See the memory clock and what holds it down",
            crate::sh!("nvidia-smi -q -d CLOCK,PERFORMANCE -i {}", target),
        )
        .fix_cmd(
            "Confirm with DCGM's memory bandwidth test",
            crate::sh!("dcgmi diag -r memory_bandwidth -i {}", d.ordinal),
        )
        .fix_text("If the memory clock is at its maximum and the copies stay slow, drain the node and have the GPU serviced")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::nvml_gpu;
    use crate::testing::*;

    #[test]
    fn a_healthy_h100s_copies_are_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn slow_device_memory_is_a_warning_against_dcgms_minimum() {
        let mut s = healthy();
        smoke_transfer(&mut s, 1).device_gbps = Some(1200.0);
        let f = only(run(&s), codes::GD090, Severity::Warning);
        assert!(
            f.title
                .contains("1200 GB/s, below the 1905 GB/s a healthy H100 80GB HBM3 reaches"),
            "{}",
            f.title
        );
        assert!(f.detail.contains("(2540 GB/s)"), "{}", f.detail);
        assert!(
            first_cmd(&f).starts_with("nvidia-smi -q -d CLOCK,PERFORMANCE -i "),
            "{}",
            first_cmd(&f)
        );
        // At the minimum is healthy.
        smoke_transfer(&mut s, 1).device_gbps = Some(1905.0);
        assert_clean(run(&s));
    }

    #[test]
    fn a_failed_device_copy_is_an_error() {
        let mut s = healthy();
        let t = smoke_transfer(&mut s, 0);
        t.device_gbps = None;
        t.device_error = Some(cuda_error(
            "cuMemcpyDtoD",
            700,
            "CUDA_ERROR_ILLEGAL_ADDRESS",
        ));
        let f = only(run(&s), codes::GD090, Severity::Error);
        assert!(
            f.title.contains("device-to-device copies failed"),
            "{}",
            f.title
        );
    }

    #[test]
    fn a_gpu_dcgm_has_no_figure_for_is_not_judged() {
        let mut s = healthy();
        for i in 0..smoke_run_mut(&mut s).devices.len() {
            nvml_gpu(&mut s, i).pci_device_id =
                crate::facts::nvml::Field::Value("0x268410DE".into());
            smoke_transfer(&mut s, i).device_gbps = Some(10.0);
        }
        match run(&s) {
            Outcome::NotApplicable(why) => {
                assert!(why.contains("no row for its PCI device id"), "{why}")
            }
            _ => panic!("judged a GPU DCGM has no figure for"),
        }
    }
}
