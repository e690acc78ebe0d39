//! GD003–GD005: which kernel driver owns each NVIDIA GPU (the PCI `driver` link).

use super::{requires_nvidia_hardware, Outcome, Rule};
use crate::codes;
use crate::facts::kernel_module::{CONFLICTING_DRIVERS, MODULES_FILE};
use crate::facts::pci::PciDevice;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "pci_binding",
    codes: &[codes::GD003, codes::GD004, codes::GD005],
    views: &[super::View::Devices],
    checks: "every NVIDIA GPU is bound to the nvidia driver",
    judges: &[SubjectKind::PciFunction],
    run,
};

/// vfio-pci and its variant drivers (nvgrace-gpu-vfio-pci, …) and pci-stub park a GPU for a VM.
fn is_passthrough(driver: &str) -> bool {
    driver.contains("vfio") || driver == "pci-stub"
}

/// Any driver other than nvidia that is not a passthrough driver keeps nvidia from the GPU.
fn is_conflicting(driver: &str) -> bool {
    driver != "nvidia" && !is_passthrough(driver)
}

fn run(snap: &Snapshot) -> Outcome {
    if let Some(na) = requires_nvidia_hardware(snap) {
        return na;
    }
    let Some(pci) = &snap.pci else {
        return Outcome::NotApplicable("pci probe did not run".into());
    };
    let Some(devices) = pci.devices.get() else {
        return Outcome::NotApplicable("PCI devices could not be listed".into());
    };
    let gpus: Vec<&PciDevice> = devices
        .iter()
        .filter(|d| d.role == crate::facts::pci::PciRole::Gpu)
        .collect();
    let km = snap.kernel_module.as_ref();
    let nvidia_loaded = km.and_then(|k| k.nvidia_loaded());
    let conflicting_loaded: Vec<String> = km
        .and_then(|k| k.modules.get())
        .map(|m| {
            m.iter()
                .filter(|m| CONFLICTING_DRIVERS.contains(&m.name.as_str()))
                .map(|m| m.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();

    let bound_elsewhere: Vec<&&PciDevice> = gpus
        .iter()
        .filter(|g| g.driver.as_deref().is_some_and(is_conflicting))
        .collect();
    // nouveau loaded without nvidia, and GPUs left unbound: nouveau probably took them and failed.
    let unbound_with_conflict = nvidia_loaded == Some(false)
        && !conflicting_loaded.is_empty()
        && gpus.iter().any(|g| g.driver.is_none());
    if !bound_elsewhere.is_empty() || unbound_with_conflict {
        let owner = bound_elsewhere
            .first()
            .and_then(|g| g.driver.clone())
            .or_else(|| conflicting_loaded.first().cloned())
            .unwrap_or_else(|| "nouveau".into());
        let mut f = Finding::new(codes::GD003, Severity::Error, format!("GPU is bound to {owner} instead of nvidia"))
            .detail(format!("The in-kernel {owner} driver claimed the GPU before nvidia.ko could, so the NVIDIA driver's probe never ran (the kernel log says \"NVRM: The NVIDIA probe routine was not called\" and nvidia-smi \"couldn't communicate with the NVIDIA driver\"). CUDA cannot use a GPU that nvidia does not own."));
        for g in &bound_elsewhere {
            f = f.evidence(
                Subject::pci(&g.address),
                format!(
                    "{} bound to {}",
                    g.device_id,
                    g.driver.as_deref().unwrap_or("?")
                ),
                format!("{}/driver", g.source),
            );
        }
        for m in &conflicting_loaded {
            f = f.evidence(Subject::module(m), format!("{m} loaded"), MODULES_FILE);
        }
        if nvidia_loaded == Some(false) {
            f = f.evidence(Subject::module("nvidia"), "nvidia not loaded", MODULES_FILE);
        }
        let os_id = snap.os_id();
        // Module names are [a-z0-9_-]; anything else read from the tree is not put in a command.
        let plain = !owner.is_empty()
            && owner
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        f = if plain {
            f.fix_cmd(
                "Blacklist the conflicting driver",
                crate::sh!(
                    "printf {} | sudo tee /etc/modprobe.d/blacklist-{}.conf",
                    format!("blacklist {owner}\\noptions {owner} modeset=0\\n"),
                    owner
                ),
            )
        } else {
            f.fix_text(
                "Blacklist the driver that owns the GPU in /etc/modprobe.d/ (blacklist NAME)",
            )
        };
        f = match initramfs_command(&os_id) {
            Some((cmd, note)) => f.fix_cmd(format!("Rebuild the initramfs so the blacklist applies at boot{note}"), cmd),
            None => f.fix_text("Rebuild the initramfs (update-initramfs -u on Debian/Ubuntu, dracut --force on Fedora/RHEL/SUSE, mkinitcpio -P on Arch)"),
        };
        f = f
            .fix_text(format!(
                "On dracut systems also add rd.driver.blacklist={owner} to the kernel command line"
            ))
            .fix_cmd(
                "Reboot, then confirm nvidia owns the GPU",
                "sudo reboot  # then: lspci -k -d 10de: | grep 'in use'",
            );
        out.push(f);
    }

    for g in gpus
        .iter()
        .filter(|g| g.driver.as_deref().is_some_and(is_passthrough))
    {
        let drv = g.driver.as_deref().unwrap_or_default();
        out.push(
            Finding::new(codes::GD004, Severity::Warning, format!("GPU {} is reserved for VM passthrough ({drv})", g.address))
                .detail(format!("{drv} holds this GPU so a virtual machine can take it; processes on this host cannot use it. That is right on a hypervisor that passes GPUs to guests, and wrong on a machine meant to run CUDA itself."))
                .evidence(Subject::pci(&g.address), format!("{} bound to {drv}", g.device_id), format!("{}/driver", g.source))
                .fix_text("If the GPU should serve this host: remove its PCI id from vfio-pci.ids= (kernel command line or /etc/modprobe.d) and reboot")
                .fix_cmd("Or hand it back now", crate::sh!("printf '%s\\n' {} | sudo tee /sys/bus/pci/drivers/{}/unbind && printf '%s\\n' {} | sudo tee /sys/bus/pci/drivers/nvidia/bind", g.address, drv, g.address)),
        );
    }

    if nvidia_loaded == Some(true) {
        for g in gpus.iter().filter(|g| g.driver.is_none()) {
            out.push(
                Finding::new(codes::GD005, Severity::Error, format!("nvidia is loaded but GPU {} has no driver", g.address))
                    .detail("The nvidia module is loaded yet did not bind this GPU. Usually the installed driver branch does not support the GPU (too new: e.g. Blackwell needs R570+ with the open kernel modules; too old: Kepler ended with R470), or initialisation failed (RmInitAdapter failed, GSP firmware error, a GPU fallen off the bus).")
                    .evidence(Subject::pci(&g.address), format!("{} has no driver bound", g.device_id), format!("{}/driver", g.source))
                    .context("nvidia loaded", MODULES_FILE)
                    .fix_cmd("Read the driver's reason for skipping the GPU", "sudo dmesg | grep -iE 'NVRM|nvidia' | tail -n 30")
                    .fix_text("If the log says the GPU is not supported by this release, install a driver branch that supports it (and the open kernel modules for Turing and newer on R560+)")
                    .fix_cmd("Try binding it by hand to see the error", crate::sh!("printf '%s\\n' {} | sudo tee /sys/bus/pci/drivers/nvidia/bind", g.address)),
            );
        }
    }
    Outcome::Checked(out)
}

fn initramfs_command(os_id: &str) -> Option<(&'static str, &'static str)> {
    match os_id {
        "debian" | "ubuntu" | "linuxmint" | "pop" => {
            Some(("sudo update-initramfs -u", " (Debian/Ubuntu)"))
        }
        "fedora"
        | "rhel"
        | "centos"
        | "rocky"
        | "almalinux"
        | "opensuse-tumbleweed"
        | "opensuse-leap"
        | "sles"
        | "amzn" => Some(("sudo dracut --force", " (dracut)")),
        "arch" | "manjaro" | "endeavouros" => Some(("sudo mkinitcpio -P", " (Arch)")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn nouveau_host(os: &str) -> Snapshot {
        let mut s = healthy();
        unload_nvidia(&mut s);
        pci_devices_mut(&mut s)[0].driver = Some("nouveau".into());
        pci_devices_mut(&mut s)[1].driver = Some("nouveau".into());
        if let crate::fact::Outcome::Value(m) = &mut kernel_module_mut(&mut s).modules.outcome {
            m.push(crate::facts::kernel_module::LoadedModule {
                name: "nouveau".into(),
                size: None,
                refcount: None,
                used_by: Vec::new(),
                state: None,
            });
        }
        if let crate::fact::Outcome::Value(o) = &mut s.platform.as_mut().unwrap().os.outcome {
            o.id = Some(os.into());
        }
        s
    }

    #[test]
    fn healthy_host_binds_every_gpu_to_nvidia() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn nouveau_owning_the_gpu_is_an_error_with_a_blacklist() {
        let f = only(run(&nouveau_host("ubuntu")), codes::GD003, Severity::Error);
        assert!(f.title.contains("bound to nouveau"), "{}", f.title);
        assert!(
            first_cmd(&f).contains("blacklist nouveau"),
            "{}",
            first_cmd(&f)
        );
        assert!(fixes_mention(&f, "sudo update-initramfs -u"));
    }

    #[test]
    fn the_initramfs_command_follows_the_distribution() {
        let f = only(run(&nouveau_host("fedora")), codes::GD003, Severity::Error);
        assert!(fixes_mention(&f, "sudo dracut --force"));
        let f = only(run(&nouveau_host("gentoo")), codes::GD003, Severity::Error);
        assert!(fixes_mention(&f, "mkinitcpio -P on Arch"));
    }

    #[test]
    fn unbound_gpus_with_nouveau_loaded_blame_nouveau() {
        let mut s = nouveau_host("ubuntu");
        for d in pci_devices_mut(&mut s) {
            d.driver = None;
        }
        let f = only(run(&s), codes::GD003, Severity::Error);
        assert!(f.title.contains("nouveau"), "{}", f.title);
    }

    #[test]
    fn a_driver_name_that_is_not_plain_stays_out_of_commands() {
        let mut s = nouveau_host("ubuntu");
        pci_devices_mut(&mut s)[0].driver = Some("x;rm -rf".into());
        pci_devices_mut(&mut s)[1].driver = Some("x;rm -rf".into());
        let f = only(run(&s), codes::GD003, Severity::Error);
        assert!(f
            .fix
            .iter()
            .all(|x| x.command.as_deref().is_none_or(|c| !c.contains("rm -rf"))));
    }

    #[test]
    fn vfio_is_a_passthrough_warning_with_an_unbind_command() {
        let mut s = healthy();
        pci_devices_mut(&mut s)[1].driver = Some("vfio-pci".into());
        let f = only(run(&s), codes::GD004, Severity::Warning);
        assert!(f.title.contains("VM passthrough (vfio-pci)"), "{}", f.title);
        assert!(first_cmd(&f).contains("/sys/bus/pci/drivers/vfio-pci/unbind"));
    }

    #[test]
    fn nvidia_loaded_but_a_gpu_unbound_is_an_error() {
        let mut s = healthy();
        pci_devices_mut(&mut s)[1].driver = None;
        let f = only(run(&s), codes::GD005, Severity::Error);
        assert!(
            f.title.contains("0000:02:00.0 has no driver"),
            "{}",
            f.title
        );
        assert!(fixes_mention(
            &f,
            "printf '%s\\n' 0000:02:00.0 | sudo tee /sys/bus/pci/drivers/nvidia/bind"
        ));
    }

    #[test]
    fn not_applicable_without_gpu_or_pci_listing() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        s.pci = None;
        assert_na(run(&s));
        let mut s = healthy();
        s.pci.as_mut().unwrap().devices = crate::fact::Fact::missing(
            crate::facts::pci::PCI_DEVICES_DIR,
            crate::fact::MissingReason::PermissionDenied,
            "denied",
        );
        assert_na(run(&s));
    }
}
