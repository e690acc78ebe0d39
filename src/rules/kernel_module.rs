//! GD002: an NVIDIA GPU is on the PCI bus but the nvidia kernel module is not loaded.

use super::{requires_nvidia_hardware, Outcome, Rule};
use crate::codes;
use crate::facts::kernel_module::{MODULES_FILE, VERSION_FILE};
use crate::facts::pci::PciRole;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "kernel_module",
    codes: &[codes::GD002],
    views: &[super::View::Devices],
    checks: "the nvidia kernel module is loaded",
    judges: &[SubjectKind::NvidiaModule, SubjectKind::DriverVersion],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    if let Some(na) = requires_nvidia_hardware(snap) {
        return na;
    }
    if snap.is_wsl() {
        return Outcome::NotApplicable(
            "WSL reaches the GPU through /dev/dxg and the Windows driver, not a Linux module"
                .into(),
        );
    }
    let Some(km) = &snap.kernel_module else {
        return Outcome::NotApplicable("kernel_module probe did not run".into());
    };
    match km.nvidia_loaded() {
        Some(true) => return Outcome::Checked(vec![]),
        None => return Outcome::NotApplicable("/proc/modules could not be read".into()),
        Some(false) => {}
    }
    // A GPU that another driver claimed is explained by GD003/GD004; only unbound ones wait for nvidia.
    let unclaimed: Vec<String> = snap
        .pci
        .as_ref()
        .and_then(|p| p.devices.get())
        .map(|d| {
            d.iter()
                .filter(|d| d.role == PciRole::Gpu)
                .filter(|d| d.driver.as_deref().is_none_or(|drv| drv == "nvidia"))
                .map(|d| format!("{} ({})", d.address, d.device_id))
                .collect()
        })
        .unwrap_or_default();
    let has_pci_gpus = snap.pci.as_ref().is_some_and(|p| !p.gpus().is_empty());
    if has_pci_gpus && unclaimed.is_empty() {
        return Outcome::Checked(vec![]);
    }
    let mut f = Finding::new(codes::GD002, Severity::Error, "NVIDIA GPU present but the nvidia kernel module is not loaded")
        .detail("Without nvidia.ko nothing can talk to the GPU: nvidia-smi says \"couldn't communicate with the NVIDIA driver\" and torch.cuda.is_available() is False. Usual causes: the driver is not installed, its DKMS module was not built for the running kernel (a kernel update), or Secure Boot refused the unsigned module.")
        .evidence(Subject::module("nvidia"), "nvidia not in /proc/modules", MODULES_FILE)
        .evidence(Subject::DriverVersion, format!("{VERSION_FILE} absent"), VERSION_FILE);
    if !unclaimed.is_empty() {
        f = f.evidence(
            Subject::Pci,
            format!(
                "NVIDIA GPU(s) waiting for a driver: {}",
                unclaimed.join(", ")
            ),
            crate::facts::pci::PCI_DEVICES_DIR,
        );
    }
    if snap.container_kind().is_some() {
        f = f.fix_text("This is a container: the kernel module belongs to the host. Load or install the driver on the host, then restart the container");
    }
    f = f
        .fix_cmd("Try loading the module and read why it fails", "sudo modprobe nvidia && lsmod | grep nvidia")
        .fix_cmd("Look for the kernel's reason (Secure Boot, version mismatch, no device probed)", "sudo dmesg | grep -iE 'nvrm|nvidia'")
        .fix_cmd("Check whether the module was built for the running kernel", "dkms status; uname -r")
        .fix_cmd("With Secure Boot on, an unsigned module is refused: enrol the DKMS key or sign the module", "mokutil --sb-state");
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn unloaded_with_unbound_gpus() -> Snapshot {
        let mut s = healthy();
        unload_nvidia(&mut s);
        for d in pci_devices_mut(&mut s) {
            d.driver = None;
        }
        s
    }

    #[test]
    fn healthy_host_has_the_module_loaded() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn gpu_without_the_module_is_an_error_with_modprobe() {
        let f = only(
            run(&unloaded_with_unbound_gpus()),
            codes::GD002,
            Severity::Error,
        );
        assert!(f.title.contains("not loaded"), "{}", f.title);
        assert!(
            first_cmd(&f).contains("modprobe nvidia"),
            "{}",
            first_cmd(&f)
        );
        assert!(evidence_mentions(&f, "0000:01:00.0"));
    }

    #[test]
    fn in_a_container_the_host_is_named_first() {
        let mut s = unloaded_with_unbound_gpus();
        in_container(&mut s, "docker");
        let f = only(run(&s), codes::GD002, Severity::Error);
        assert!(f.fix[0].text.contains("container"), "{:?}", f.fix[0]);
    }

    #[test]
    fn gpus_claimed_by_another_driver_are_left_to_pci_binding() {
        let mut s = healthy();
        unload_nvidia(&mut s);
        for d in pci_devices_mut(&mut s) {
            d.driver = Some("nouveau".into());
        }
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_gpu_on_wsl_or_unreadable_modules() {
        assert_na(run(&no_gpu()));
        let mut s = unloaded_with_unbound_gpus();
        make_wsl(&mut s);
        assert_na(run(&s));
        let mut s = unloaded_with_unbound_gpus();
        kernel_module_mut(&mut s).modules = crate::fact::Fact::missing(
            MODULES_FILE,
            crate::fact::MissingReason::PermissionDenied,
            "denied",
        );
        assert_na(run(&s));
    }
}
