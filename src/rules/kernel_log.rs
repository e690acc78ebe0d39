//! GD080–GD083: what NVIDIA's driver and the kernel's PCIe error reporting wrote to the
//! kernel log. GD080: Xid and SXid faults of the GPU, its memory, NVLink or firmware;
//! GD081: a program's fault on a GPU (the GPU is fine); GD082: PCIe AER errors on a GPU or
//! a bridge above one; GD083: the driver could not bring a GPU up (RmInitAdapter, GSP
//! timeouts, "fallen off the bus", the open kernel modules required). Events of an earlier
//! boot are history (info); where the log does not tell the boots apart, a fault that
//! would be an error is a warning.

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::xid::{self, XidAction};
use crate::facts::kernel_log::{EventGroup, EventKind, LogScan};
use crate::facts::pci::sysfs_address;
use crate::findings::{Finding, Severity};
use crate::snapshot::{Place, Snapshot};
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "kernel_log",
    codes: &[codes::GD080, codes::GD081, codes::GD082, codes::GD083],
    views: &[super::View::Devices],
    checks:
        "the kernel log holds no Xid, SXid, GSP, adapter-initialisation or PCIe AER error for a GPU",
    judges: &[
        SubjectKind::PciFunction,
        SubjectKind::KernelLog,
        SubjectKind::Gpu,
    ],
    run,
};

/// Corrected AER errors on one device in one boot from which the link counts as marginal.
const CORRECTED_STORM: u64 = 100;

fn run(snap: &Snapshot) -> Outcome {
    let Some(log) = &snap.kernel_log else {
        return Outcome::NotApplicable("the kernel_log probe did not run".into());
    };
    let Some(scan) = log.scan.get() else {
        let why = log
            .scan
            .missing_info()
            .map_or_else(String::new, |m| m.detail.clone());
        return Outcome::NotApplicable(format!("Xid and AER events were not looked for: {why}"));
    };
    let gpus = GpuNames::of(snap);
    let mut out = Vec::new();
    for g in &scan.groups {
        let found = match g.kind {
            EventKind::Xid => xid_finding(snap, &gpus, scan, g),
            EventKind::Sxid => Some(sxid_finding(g)),
            EventKind::Aer => aer_finding(snap, &gpus, g),
            // A line that repeats what a more telling one says rides on it.
            EventKind::FallenOffBus if covered(scan, g, EventKind::Xid, Some(79)) => None,
            EventKind::GspTimeout if covered(scan, g, EventKind::Xid, Some(119)) => None,
            EventKind::InitFailed if covered(scan, g, EventKind::OpenModulesRequired, None) => None,
            EventKind::InitFailed
            | EventKind::FallenOffBus
            | EventKind::GspTimeout
            | EventKind::OpenModulesRequired => Some(bring_up_finding(snap, &gpus, g)),
        };
        if let Some(f) = found {
            let f = match g.device.as_deref().and_then(|d| gpus.identity(d)) {
                // What a service request or an RMA names the board by.
                Some(id) if g.kind != EventKind::Aer => f.context(id, "NVML"),
                _ => f,
            };
            out.push(with_log_evidence(f, log.scan.source.as_str(), scan, g));
        }
    }
    Outcome::Checked(out)
}

/// The GPUs by PCI address: NVML's index and name where NVML answered, else the driver's
/// model name.
pub(super) struct GpuNames {
    gpus: Vec<(String, Option<u32>, Option<String>)>,
    /// NVML's UUID and board serial number by PCI address.
    ids: Vec<(String, Option<String>, Option<String>)>,
}

impl GpuNames {
    pub(super) fn of(snap: &Snapshot) -> GpuNames {
        let (mut gpus, mut ids) = (Vec::new(), Vec::new());
        if let Some(sys) = snap.nvml_system() {
            for g in &sys.devices {
                if let Some(bus) = g.pci_bus_id.get() {
                    gpus.push((sysfs_address(bus), Some(g.index), g.name.get().cloned()));
                    ids.push((
                        sysfs_address(bus),
                        g.uuid.get().cloned(),
                        g.serial.get().cloned(),
                    ));
                }
            }
        }
        if let Some(list) = snap.kernel_module.as_ref().and_then(|k| k.gpus.get()) {
            for d in list {
                let address = sysfs_address(&d.bus_id);
                if !gpus.iter().any(|(a, ..)| *a == address) {
                    gpus.push((address, None, d.model.clone()));
                }
            }
        }
        GpuNames { gpus, ids }
    }

    /// "UUID GPU-…, serial 1654…" of the GPU at `address`, as far as NVML told.
    pub(super) fn identity(&self, address: &str) -> Option<String> {
        let (_, uuid, serial) = self.ids.iter().find(|(a, ..)| a == address)?;
        let parts: Vec<String> = [
            uuid.as_ref().map(|u| format!("UUID {u}")),
            serial.as_ref().map(|s| format!("serial {s}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    pub(super) fn find(&self, address: &str) -> Option<&(String, Option<u32>, Option<String>)> {
        self.gpus.iter().find(|(a, ..)| a == address)
    }

    /// "GPU 3 (NVIDIA H100 80GB HBM3, 0000:1b:00.0)", "the GPU at 0000:1b:00.0".
    pub(super) fn label(&self, address: Option<&str>) -> String {
        let Some(address) = address else {
            return "a GPU the log does not name".into();
        };
        match self.find(address) {
            Some((_, Some(i), Some(n))) => format!("GPU {i} ({n}, {address})"),
            Some((_, Some(i), None)) => format!("GPU {i} ({address})"),
            Some((_, None, Some(n))) => format!("the {n} at {address}"),
            _ => format!("the GPU at {address}"),
        }
    }

    /// A GPU, or a bridge on the path to one, by PCI address: its label and subject; None
    /// for any other device.
    pub(super) fn link_place(&self, snap: &Snapshot, dev: &str) -> Option<(String, Subject)> {
        let topo_gpus = snap.topology.as_ref().and_then(|t| t.gpus.get());
        let a_gpu = topo_gpus.is_some_and(|list| list.iter().any(|t| t.address == dev));
        if self.find(dev).is_some() || a_gpu {
            return Some((self.label(Some(dev)), self.subject(Some(dev))));
        }
        let below =
            topo_gpus.and_then(|list| list.iter().find(|t| t.path.iter().any(|b| b == dev)))?;
        Some((
            format!(
                "the bridge {dev} above {}",
                self.label(Some(&below.address))
            ),
            Subject::pci(dev),
        ))
    }

    /// The GPU's subject: its NVML index where known, else its PCI function.
    pub(super) fn subject(&self, address: Option<&str>) -> Subject {
        match address {
            Some(a) => match self.find(a) {
                Some((_, Some(i), _)) => Subject::Gpu(*i),
                _ => Subject::pci(a),
            },
            None => Subject::KernelLog,
        }
    }
}

/// How much an event of this boot, an earlier one, or one the log cannot place weighs.
fn by_boot(this_boot: Option<bool>, now: Severity) -> Severity {
    match (this_boot, now) {
        (Some(true), s) => s,
        (Some(false), _) => Severity::Info,
        (None, Severity::Error) => Severity::Warning,
        (None, _) => Severity::Info,
    }
}

fn when(g: &EventGroup) -> &'static str {
    match g.this_boot {
        Some(true) => "since boot",
        Some(false) => "in an earlier boot",
        None => "in the log (the boot is not recorded)",
    }
}

fn times(g: &EventGroup) -> String {
    if g.count == 1 {
        "once".into()
    } else {
        format!("{} times", g.count)
    }
}

/// Whether the log holds an event of `kind` (and `code`) for the same device in the same boot.
fn covered(scan: &LogScan, g: &EventGroup, kind: EventKind, code: Option<u32>) -> bool {
    scan.groups.iter().any(|x| {
        x.kind == kind && x.code == code && x.device == g.device && x.this_boot == g.this_boot
    })
}

fn xid_finding(
    snap: &Snapshot,
    gpus: &GpuNames,
    scan: &LogScan,
    g: &EventGroup,
) -> Option<Finding> {
    let code = g.code?;
    let dev = g.device.as_deref();
    let gpu = gpus.label(dev);
    let subject = gpus.subject(dev);
    if code == xid::RECOVERY_ACTION_XID {
        return recovery_finding(snap, gpus, scan, g);
    }
    let Some(info) = xid::lookup(code) else {
        let severity = by_boot(g.this_boot, Severity::Warning);
        return Some(
            Finding::new(codes::GD080, severity, format!("{gpu}: Xid {code} {} ({}), a number gpudoctor's Xid table does not know", when(g), times(g)))
                .detail("The driver reported an Xid this version of gpudoctor has no entry for. NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors) says what it means and what to do; the logged line below is the driver's own words.")
                .evidence(subject, format!("Xid {code}"), "kernel log"),
        );
    };
    let name = info.name;
    if info.application {
        let who = if g.processes.is_empty() {
            String::new()
        } else {
            format!(" by {}", g.processes.join(", "))
        };
        let detail = if info.action == XidAction::None {
            "The driver cleaned up the channels of programs hit by another error; this line is a consequence, not a fault of its own. Look for the error logged just before it."
        } else {
            "NVIDIA counts this Xid as a program's fault (an illegal address, a kernel that hung or was killed): the GPU itself stays healthy, and NVIDIA's device plugin keeps it in service. The program saw it as a CUDA error such as \"an illegal memory access was encountered\". If it recurs across programs that used to work, test the GPU."
        };
        return Some(
            Finding::new(codes::GD081, Severity::Info, format!("{gpu}: Xid {code} ({name}) {}, {}{who}", when(g), times(g)))
                .detail(detail)
                .evidence(subject, format!("Xid {code} {name}"), info.source)
                .fix_text("Rerun the program with CUDA_LAUNCH_BLOCKING=1 (and compute-sanitizer) to find the kernel that faulted; no action on the GPU is needed"),
        );
    }
    let (now, what, fix) = match info.action {
        XidAction::None | XidAction::RestartApp => (
            Severity::Warning,
            "The work running on the GPU failed; restart it. If it recurs with programs that used to work, the GPU or its driver is at fault.",
            Fix::Diagnose,
        ),
        XidAction::ResetWhenConvenient => (
            Severity::Warning,
            "The error was contained: the program that met it failed, other work runs on, and the GPU should be reset when it is idle (a pending row remap takes effect at the reset).",
            Fix::Reset,
        ),
        XidAction::RunDiagnostics => (
            Severity::Warning,
            "The GPU still works, but the error rate points at failing hardware: run the field diagnostics and replace the GPU if they fail.",
            Fix::Diagnose,
        ),
        XidAction::ResetGpu => (
            Severity::Error,
            "Work on this GPU fails until it is reset (or the node rebooted). If it recurs after a reset, the GPU needs service (RMA).",
            Fix::Reset,
        ),
        XidAction::RebootNode => (
            Severity::Error,
            "The GPU is unusable until the node is rebooted (or powered off, for a power cable). If it recurs, check the slot, riser, power and cooling, then the GPU itself.",
            Fix::Reboot,
        ),
    };
    let severity = by_boot(g.this_boot, now);
    let f = Finding::new(
        codes::GD080,
        severity,
        format!("{gpu}: Xid {code} ({name}) {}, {}", when(g), times(g)),
    )
    .detail(history_note(g, what))
    .evidence(subject, format!("Xid {code} {name}"), info.source);
    Some(fix.apply(f, snap.place(), dev, g))
}

/// Xid 154: the driver asks for a recovery action; only the newest per GPU counts.
fn recovery_finding(
    snap: &Snapshot,
    gpus: &GpuNames,
    scan: &LogScan,
    g: &EventGroup,
) -> Option<Finding> {
    let newest = scan
        .groups
        .iter()
        .filter(|x| {
            x.kind == EventKind::Xid
                && x.code == g.code
                && x.device == g.device
                && x.this_boot == g.this_boot
        })
        .max_by_key(|x| x.last_record)?;
    if !std::ptr::eq(newest, g) {
        return None;
    }
    let action = g
        .detail
        .as_deref()
        .unwrap_or("an action the line does not name");
    if action.eq_ignore_ascii_case("none") {
        return None;
    }
    let dev = g.device.as_deref();
    let lower = action.to_ascii_lowercase();
    let (fix, what) = if lower.contains("reboot") {
        (Fix::Reboot, "a node reboot")
    } else if lower.contains("drain") && !lower.contains("reset") {
        (Fix::Drain, "draining peer-to-peer traffic")
    } else {
        (Fix::Reset, "a GPU reset")
    };
    let f = Finding::new(
        codes::GD080,
        by_boot(g.this_boot, Severity::Error),
        format!("{}: the driver asks for {what} (Xid 154: {action}) {}", gpus.label(dev), when(g)),
    )
    .detail(history_note(g, "The driver met an error it cannot recover from by itself and logged the action that will. Until it is taken, work on this GPU fails or runs degraded."))
    .evidence(gpus.subject(dev), format!("Xid 154 recovery action {action}"), xid::RECOVERY_ACTION_SOURCE);
    Some(fix.apply(f, snap.place(), dev, g))
}

fn sxid_finding(g: &EventGroup) -> Finding {
    let code = g.code.unwrap_or_default();
    let fatal = g
        .detail
        .as_deref()
        .is_some_and(|d| d.eq_ignore_ascii_case("fatal"));
    let now = if fatal {
        Severity::Error
    } else {
        Severity::Warning
    };
    let switch = g.device.as_deref().map_or("an NVSwitch".to_string(), |d| {
        format!("the NVSwitch at {d}")
    });
    let subject = g.device.as_deref().map_or(Subject::KernelLog, Subject::pci);
    Finding::new(
        codes::GD080,
        by_boot(g.this_boot, now),
        format!("{switch}: SXid {code} ({}) {}, {}", g.detail.as_deref().unwrap_or("severity not given"), when(g), times(g)),
    )
    .detail(history_note(g, if fatal {
        "A fatal NVSwitch error: the GPUs behind the switch lose NVLink traffic, and jobs spanning them fail. Fabric Manager usually needs the GPUs reset (or the node rebooted) before the fabric is usable again."
    } else {
        "A non-fatal NVSwitch error: traffic continues; a link that keeps logging them is degrading."
    }))
    .evidence(subject, format!("SXid {code}"), "kernel log (nvidia-nvswitch)")
    .fix_cmd("See the fabric's state and the links' error counters", "nvidia-smi nvlink -e")
    .fix_text(if fatal {
        "Drain the node, reset the GPUs (or reboot) and restart nvidia-fabricmanager; if it recurs, report it to the system vendor with the SXid lines"
    } else {
        "Watch the count; if it keeps growing, schedule the node for service"
    })
}

fn aer_finding(snap: &Snapshot, gpus: &GpuNames, g: &EventGroup) -> Option<Finding> {
    let dev = g.device.as_deref()?;
    // Only a GPU or a bridge on the path to one: other devices are not this tool's concern.
    let (place, subject) = gpus.link_place(snap, dev)?;
    let kind = g.detail.as_deref().unwrap_or("unknown severity");
    let (now, what) = if kind.contains("Fatal") && !kind.contains("Non-Fatal") {
        (Severity::Error, "An uncorrectable fatal PCIe error: the link was reset or the device lost; work on the GPU behind it has failed and the GPU may have fallen off the bus.")
    } else if kind.starts_with("Uncorrected") {
        (Severity::Warning, "An uncorrectable non-fatal PCIe error: a transaction was lost and the driver had to recover; it points at the slot, riser, cable or retimer.")
    } else if g.count >= CORRECTED_STORM {
        (Severity::Warning, "Corrected PCIe errors in these numbers mean a marginal link: every one is a replay, and transfers slow down; the link may also train down or drop. Reseat the GPU or riser, check the cable or retimer, and update the BIOS.")
    } else {
        (
            Severity::Info,
            "A few corrected PCIe errors are normal on a busy link; this is context, not a fault.",
        )
    };
    let severity = by_boot(g.this_boot, now);
    let mut f = Finding::new(
        codes::GD082,
        severity,
        format!("{place}: PCIe AER {kind} error {}, {}", when(g), times(g)),
    )
    .detail(history_note(g, what))
    .evidence(
        subject,
        format!("AER {kind} ×{}", g.count),
        "kernel log (PCIe AER)",
    );
    if severity != Severity::Info {
        f = f
            .fix_cmd("Read the device's AER counters", crate::sh!("cat /sys/bus/pci/devices/{}/aer_dev_correctable /sys/bus/pci/devices/{}/aer_dev_nonfatal /sys/bus/pci/devices/{}/aer_dev_fatal", dev, dev, dev))
            .fix_text("Reseat the GPU (and riser or cable) in a maintenance window; if the errors follow the slot, it is the board; if they follow the GPU, service the GPU");
    }
    Some(f)
}

fn bring_up_finding(snap: &Snapshot, gpus: &GpuNames, g: &EventGroup) -> Finding {
    let dev = g.device.as_deref();
    let gpu = gpus.label(dev);
    let (title, what, fix) = match g.kind {
        EventKind::InitFailed => (
            "the driver could not initialise it (RmInitAdapter failed)",
            "The nvidia module is loaded but could not bring this GPU up, so NVML and CUDA do not see it (or see it and fail). The lines around it in the log say why: a firmware (GSP) error, a driver branch that does not support the GPU, insufficient power, or a GPU that is failing.",
            Fix::Reboot,
        ),
        EventKind::FallenOffBus => (
            "it has fallen off the bus",
            "The driver can no longer reach the GPU over PCIe. Every process using it fails until the node is rebooted. Causes: power delivery, overheating, a failing riser or slot, or the GPU itself.",
            Fix::Reboot,
        ),
        EventKind::GspTimeout => (
            "its GSP firmware stopped answering (RPC timeout)",
            "The GPU System Processor did not answer the driver. The GPU is hung until it is reset; if it recurs, try the other kernel-module flavour's firmware path (NVreg_EnableGpuFirmware=0 on the proprietary modules, where the GPU allows it) or a newer driver branch.",
            Fix::Reset,
        ),
        EventKind::OpenModulesRequired => (
            "it needs the NVIDIA open kernel modules",
            "This GPU (Blackwell and later) is supported only by the open kernel modules; the proprietary ones refuse it, so the driver loads and sees no usable GPU.",
            Fix::OpenModules,
        ),
        _ => unreachable!("bring_up_finding is called for driver events only"),
    };
    let f = Finding::new(
        codes::GD083,
        by_boot(g.this_boot, Severity::Error),
        format!("{gpu}: {title} {}", when(g)),
    )
    .detail(history_note(g, what))
    .evidence(gpus.subject(dev), title.to_string(), "kernel log (NVRM)");
    fix.apply(f, snap.place(), dev, g)
}

/// The explanation, and for history how to read it.
fn history_note(g: &EventGroup, what: &str) -> String {
    match g.this_boot {
        Some(false) => format!("{what} This was logged in an earlier boot: it is history unless it recurs in this one."),
        None => format!("{what} The log read does not say which boot this was in; if the node has been rebooted since, it is history."),
        Some(true) => format!("{what} If the GPU has been reset since, check that it works (`gpudoctor check --smoke`) before treating this as current."),
    }
}

fn with_log_evidence(mut f: Finding, source: &str, scan: &LogScan, g: &EventGroup) -> Finding {
    let span = match (&g.first, &g.last) {
        (Some(a), Some(b)) if g.count > 1 && a != b => format!(" first at {a}, last at {b}"),
        (Some(a), _) => format!(" at {a}"),
        _ => String::new(),
    };
    f = f.context(format!("logged{span}: {}", g.example), source.to_string());
    if scan.truncated || scan.events_not_grouped > 0 {
        let mut notes = Vec::new();
        if scan.truncated {
            notes.push("a bound stopped the read, so older lines were not seen".to_string());
        }
        if scan.events_not_grouped > 0 {
            notes.push(format!(
                "{} more events were past the bound of groups kept",
                scan.events_not_grouped
            ));
        }
        f = f.context(notes.join("; "), source.to_string());
    }
    f.evidence(
        Subject::KernelLog,
        format!("{} ({})", source, scan.span),
        source.to_string(),
    )
}

#[derive(Clone, Copy)]
enum Fix {
    Reset,
    Reboot,
    Drain,
    Diagnose,
    OpenModules,
}

impl Fix {
    fn apply(self, f: Finding, place: Place, dev: Option<&str>, g: &EventGroup) -> Finding {
        if g.this_boot == Some(false) {
            return f.fix_text("Nothing to do unless it recurs; if it does, treat it as below and track the GPU (its serial: nvidia-smi -q | grep -i serial)");
        }
        if place.is_contained() {
            return f.fix_text("The GPU failed on the host, not in this container: reset or reboot there (run `gpudoctor check` on the host, or `kubectl debug node/NODE`)");
        }
        match self {
            Fix::Reset => match dev {
                Some(d) => f
                    .fix_cmd("Stop the GPU's processes (drain the node), then reset it", crate::sh!("sudo nvidia-smi -r -i {}", d))
                    .fix_text("If the reset fails or the error recurs, reboot the node; if it still recurs, the GPU needs service (RMA)"),
                None => f.fix_text("Drain the node and reset the GPU (sudo nvidia-smi -r -i BUS_ID) or reboot it; if it recurs, the GPU needs service (RMA)"),
            },
            Fix::Reboot => f
                .fix_cmd("Drain the node and reboot it", "sudo systemctl reboot")
                .fix_text("If it recurs, check the slot, riser, power cables and cooling, then have the GPU serviced (RMA)"),
            Fix::Drain => f.fix_text("Stop the jobs that use peer-to-peer or NVLink on this GPU, then reset it when idle (sudo nvidia-smi -r)"),
            Fix::Diagnose => f
                .fix_cmd("Run NVIDIA's diagnostics on the GPU", "dcgmi diag -r 3")
                .fix_text("If the diagnostics fail or the error recurs, have the GPU serviced (RMA)"),
            Fix::OpenModules => f.fix_text(
                "Install the same driver version's open kernel modules (Ubuntu: the nvidia-driver-NNN-open package; NVIDIA's repositories: nvidia-open; the .run installer: -m=kernel-open), then reboot",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn with_log(kmsg: &str) -> Snapshot {
        let mut s = healthy();
        s.kernel_log = Some(kernel_log(kmsg));
        s
    }

    fn findings(s: &Snapshot) -> Vec<Finding> {
        match run(s) {
            Outcome::Checked(f) => f,
            Outcome::NotApplicable(why) => panic!("not applicable: {why}"),
        }
    }

    fn xid_line(seq: u32, gpu: u32, code: u32, text: &str) -> String {
        // bus_id(i) is 0000:0N:00.0; an Xid names the bus without the function.
        let bus = bus_id(gpu);
        let bus = bus.trim_end_matches(".0");
        format!(
            "3,{seq},{}000000,-;NVRM: Xid (PCI:{bus}): {code}, {text}\n",
            seq
        )
    }

    #[test]
    fn a_clean_log_is_silent() {
        let s = with_log("6,1,0,-;Linux version 6.8.0\n6,2,1000,-;nvidia: module verification failed\n6,3,2000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.86.15\n");
        assert!(findings(&s).is_empty());
        assert!(
            findings(&healthy()).is_empty(),
            "the healthy fixture stays quiet"
        );
    }

    #[test]
    fn hardware_xids_are_errors_on_the_named_gpu() {
        let log = xid_line(1, 1, 79, "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
            + "3,2,2000000,-;NVRM: GPU 0000:02:00.0: GPU has fallen off the bus.\n"
            + &xid_line(3, 0, 48, "pid=77, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.");
        let f = findings(&with_log(&log));
        assert_eq!(
            f.len(),
            2,
            "the fallen-off line rides on its Xid 79: {f:#?}"
        );
        let x79 = f.iter().find(|f| f.title.contains("Xid 79")).unwrap();
        assert_eq!(
            (x79.code.as_str(), x79.severity),
            (codes::GD080, Severity::Error)
        );
        assert!(x79.title.starts_with("GPU 1 ("), "{}", x79.title);
        assert!(x79.evidence.iter().any(|e| e.fact == Some(Subject::Gpu(1))));
        assert!(x79
            .fix
            .iter()
            .any(|x| x.command.as_deref() == Some("sudo systemctl reboot")));
        let x48 = f.iter().find(|f| f.title.contains("Xid 48")).unwrap();
        assert_eq!(x48.severity, Severity::Error);
        assert!(
            x48.fix
                .iter()
                .any(|x| x.command.as_deref() == Some("sudo nvidia-smi -r -i 0000:01:00.0")),
            "{:?}",
            x48.fix
        );
    }

    #[test]
    fn application_xids_are_context_naming_the_programs() {
        let log = xid_line(1, 0, 13, "pid=10, name=python3, Graphics SM Warp Exception")
            + &xid_line(
                2,
                0,
                13,
                "pid=11, name=train.py, Graphics SM Warp Exception",
            )
            + &xid_line(3, 0, 45, "pid=11, name=train.py, Ch 00000010");
        let f = findings(&with_log(&log));
        assert!(
            f.iter()
                .all(|f| f.code == codes::GD081 && f.severity == Severity::Info),
            "{f:#?}"
        );
        assert!(
            f[0].title.contains("2 times by python3, train.py"),
            "{}",
            f[0].title
        );
    }

    #[test]
    fn contained_and_rate_xids_are_warnings() {
        let log = xid_line(
            1,
            0,
            94,
            "pid=10, name=python3, Contained: CE User Channel (0x9). RST: No, D-RST: No",
        ) + &xid_line(
            2,
            0,
            92,
            "pid=10, name=python3, High single-bit ECC error rate",
        );
        let f = findings(&with_log(&log));
        assert!(f.iter().all(|f| f.severity == Severity::Warning), "{f:#?}");
    }

    #[test]
    fn an_unknown_xid_is_reported_as_unknown() {
        let f = findings(&with_log(&xid_line(
            1,
            0,
            999,
            "pid=1, name=x, something new",
        )));
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].title.contains("does not know"));
    }

    #[test]
    fn the_newest_recovery_action_counts() {
        let asked = xid_line(
            1,
            0,
            154,
            "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
        );
        let f = findings(&with_log(&asked));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(f[0].title.contains("a GPU reset"), "{}", f[0].title);
        let cleared = asked
            + &xid_line(
                2,
                0,
                154,
                "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)",
            );
        assert!(findings(&with_log(&cleared)).is_empty());
    }

    #[test]
    fn an_earlier_boot_is_history() {
        let mut s = healthy();
        let log = "Dec  1 10:00:00 gpu7 kernel: [   10.000000] NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\nDec  2 08:00:00 gpu7 kernel: [    0.000000] Linux version 6.8.0-45-generic\n";
        s.kernel_log = Some(crate::testing::kernel_log_from_text(log));
        let f = findings(&s);
        assert_eq!(f[0].severity, Severity::Info);
        assert!(f[0].title.contains("in an earlier boot"));
        // Without the boot line the log cannot place it: a warning, not an error.
        let log = "Dec  1 10:00:00 gpu7 kernel: [   10.000000] NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";
        s.kernel_log = Some(crate::testing::kernel_log_from_text(log));
        assert_eq!(findings(&s)[0].severity, Severity::Warning);
    }

    #[test]
    fn aer_is_judged_for_gpus_and_ignored_elsewhere() {
        let mut log = String::new();
        for i in 0..150 {
            log.push_str(&format!("4,{i},{i}000,-;nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"));
        }
        log.push_str("4,200,300000,-;nvme 0000:c1:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)\n");
        log.push_str("4,201,300001,-;nvidia 0000:02:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n");
        let f = findings(&with_log(&log));
        assert_eq!(f.len(), 2, "{f:#?}");
        let storm = f.iter().find(|f| f.title.contains("150 times")).unwrap();
        assert_eq!(
            (storm.code.as_str(), storm.severity),
            (codes::GD082, Severity::Warning)
        );
        assert!(f
            .iter()
            .any(|f| f.title.contains("once") && f.severity == Severity::Info));
    }

    #[test]
    fn aer_on_a_bridge_above_a_gpu_names_the_gpu() {
        let mut s = crate::rules::topology::tests::acs_switch();
        s.kernel_log = Some(kernel_log("3,1,1000,-;pcieport 0000:11:08.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)\n3,2,1000,-;pcieport 0000:00:1c.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)\n"));
        let f = findings(&s);
        assert_eq!(f.len(), 1, "a bridge above no GPU is not judged: {f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].title
                .starts_with("the bridge 0000:11:08.0 above GPU 0 ("),
            "{}",
            f[0].title
        );
        assert!(f[0]
            .evidence
            .iter()
            .any(|e| e.fact == Subject::parse("pci:0000:11:08.0")));
    }

    #[test]
    fn bring_up_failures_are_errors() {
        let log = "3,1,1000000,-;NVRM: GPU 0000:02:00.0: RmInitAdapter failed! (0x62:0x55:2477)\n";
        let f = findings(&with_log(log));
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].code.as_str(), f[0].severity),
            (codes::GD083, Severity::Error)
        );
        assert!(f[0].title.starts_with("GPU 1 ("), "{}", f[0].title);
        // As /dev/kmsg writes it: one record, its newline escaped; the RmInitAdapter failure
        // that follows is its consequence and rides on it.
        let open = "3,3,1000000,-;NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85)\\x0aNVRM: installed in this system requires use of the NVIDIA open kernel modules.\n3,4,1000001,-;NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)\n";
        let f = findings(&with_log(open));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].title.contains("open kernel modules"), "{}", f[0].title);
        assert!(f[0].title.starts_with("GPU 0 ("), "{}", f[0].title);
    }

    #[test]
    fn an_unreadable_log_says_so() {
        let mut s = healthy();
        s.kernel_log = Some(crate::facts::kernel_log::KernelLog {
            scan: crate::fact::Fact::missing(
                "/dev/kmsg",
                crate::fact::MissingReason::PermissionDenied,
                "no kernel log could be read (/dev/kmsg: Operation not permitted)",
            ),
            passed_over: vec![],
        });
        match run(&s) {
            Outcome::NotApplicable(why) => {
                assert!(why.contains("Operation not permitted"), "{why}")
            }
            Outcome::Checked(_) => panic!("an unread log is not a clean one"),
        }
    }
}
