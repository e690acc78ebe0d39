//! GD089: the loaded NVIDIA kernel module's flavour cannot drive a GPU. NVIDIA ships two
//! flavours of nvidia.ko since R515: the proprietary one, required for Maxwell, Pascal and
//! Volta, and the open one, for Turing and newer only; Blackwell is supported by the open
//! one alone (NVIDIA driver installation guide, "Kernel Modules"; the architecture table's
//! `kernel_modules` column, src/compat/data/arch.toml). Judged from each GPU's PCI device id
//! (pci.ids → compute capability → architecture) and the flavour
//! `/proc/driver/nvidia/version` names. When no GPU is left the module may not stay loaded;
//! then the kernel log's "requires use of the NVIDIA open kernel modules" is GD083's.

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::arch::{arch_row, ArchRow, KernelModules};
use crate::compat::pci_ids::{gpu_from_pci_id_text, PciGpu};
use crate::facts::kernel_log::EventKind;
use crate::facts::kernel_module::{NvrmVersion, VERSION_FILE};
use crate::facts::pci::{PciDevice, PciRole};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::{Subject, SubjectKind};

pub const RULE: Rule = Rule {
    name: "module_flavour",
    codes: &[codes::GD089],
    views: &[super::View::Devices],
    checks: "the loaded NVIDIA kernel module flavour (open or proprietary) supports every GPU's architecture",
    judges: &[SubjectKind::PciFunction],
    run,
};

const SOURCE: &str = "NVIDIA driver installation guide, Kernel Modules (docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html)";

/// A GPU the loaded flavour refuses.
struct Refusal<'a> {
    device: &'a PciDevice,
    gpu: PciGpu,
    row: &'static ArchRow,
    /// What the flavour does to it, for the title.
    refused: &'static str,
}

/// The loaded module's version file, and the GPUs its flavour refuses among those the PCI bus
/// lists within the branches that support them at all; Err: why it cannot be judged.
fn refusals(snap: &Snapshot) -> Result<(&NvrmVersion, Vec<Refusal<'_>>), String> {
    let Some(version) = snap
        .kernel_module
        .as_ref()
        .and_then(|k| k.version_file.get())
    else {
        return Err(format!(
            "{VERSION_FILE} was not read (the nvidia module is not loaded)"
        ));
    };
    let Some(devices) = snap.pci.as_ref().and_then(|p| p.devices.get()) else {
        return Err("PCI devices could not be listed".into());
    };
    let open = version.flavor == "open";
    let branch: Option<u32> = version
        .version
        .split('.')
        .next()
        .and_then(|b| b.parse().ok());
    let mut out = Vec::new();
    for d in devices.iter().filter(|d| d.role == PciRole::Gpu) {
        let Some(gpu) = gpu_from_pci_id_text(&d.device_id) else {
            continue;
        };
        let Some(row) = gpu.cc.and_then(arch_row) else {
            continue;
        };
        // A branch that supports the GPU in neither flavour is not the flavour's fault.
        let in_branch = branch.is_none_or(|b| {
            row.min_driver_branch.is_none_or(|m| b >= m)
                && row.last_driver_branch.is_none_or(|l| b <= l)
        });
        if !in_branch {
            continue;
        }
        let refused = match (row.kernel_modules, open) {
            (KernelModules::OpenOnly, false) => "needs the NVIDIA open kernel modules",
            (KernelModules::ProprietaryOnly, true) => {
                "is not supported by the NVIDIA open kernel modules"
            }
            _ => continue,
        };
        out.push(Refusal {
            device: d,
            gpu,
            row,
            refused,
        });
    }
    Ok((version, out))
}

/// The bus ids of the GPUs the loaded flavour refuses (what GD089 reports).
pub(crate) fn refused_gpus(snap: &Snapshot) -> Vec<String> {
    refusals(snap)
        .map(|(_, r)| r.iter().map(|r| r.device.address.clone()).collect())
        .unwrap_or_default()
}

fn run(snap: &Snapshot) -> Outcome {
    let (version, refused) = match refusals(snap) {
        Ok(r) => r,
        Err(why) => return Outcome::NotApplicable(why),
    };
    let open = version.flavor == "open";
    let mut out = Vec::new();
    for Refusal {
        device: d,
        gpu,
        row,
        refused,
    } in refused
    {
        let loaded = if open { "open" } else { "proprietary" };
        let mut f = Finding::new(
            codes::GD089,
            Severity::Error,
            format!(
                "GPU {} ({}, {}) {refused}; the loaded nvidia {} is the {loaded} flavour",
                d.address,
                gpu.display_name(),
                row.arch,
                version.version
            ),
        )
        .detail(if open {
            format!("The open kernel modules support Turing and newer only; {} GPUs need the proprietary flavour of the same driver. The driver skips this GPU, so CUDA and NVML do not see it.", row.arch)
        } else {
            format!("{} GPUs are supported only by the open kernel modules; the proprietary flavour refuses them (\"requires use of the NVIDIA open kernel modules\"), so the driver loads and this GPU stays unusable: CUDA and NVML do not see it.", row.arch)
        })
        .evidence(
            Subject::pci(&d.address),
            format!("PCI {} is {} (compute capability {})", d.device_id, gpu.name, row.cc),
            format!("{} and the embedded pci.ids", d.source),
        )
        .evidence(Subject::module("nvidia"), version.raw.clone(), VERSION_FILE)
        .context(
            format!("{} GPUs: {}", row.arch, kernel_modules_text(row.kernel_modules)),
            SOURCE,
        );
        // The driver's own words, where the kernel log holds them for this GPU.
        if let Some(g) = snap
            .kernel_log
            .as_ref()
            .and_then(|l| l.scan.get())
            .and_then(|s| {
                s.groups.iter().find(|g| {
                    g.kind == EventKind::OpenModulesRequired
                        && g.device.as_deref().is_some_and(|x| same_bus(x, &d.address))
                })
            })
        {
            f = f.context(format!("logged: {}", g.example), "kernel log (NVRM)");
        }
        out.push(fixes(snap, f, open, &version.version));
    }
    Outcome::Checked(out)
}

/// PCI addresses as the log and sysfs write them ("0000:01:00.0", "01:00.0", any case).
fn same_bus(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.to_ascii_lowercase();
        if s.matches(':').count() == 1 {
            format!("0000:{s}")
        } else {
            s
        }
    };
    norm(a) == norm(b)
}

fn kernel_modules_text(k: KernelModules) -> &'static str {
    match k {
        KernelModules::OpenOnly => "open kernel modules only",
        KernelModules::ProprietaryOnly => "proprietary kernel modules only",
        KernelModules::Either => "either flavour",
        KernelModules::NotApplicable => "Jetson's own driver",
        KernelModules::Unknown => "not known",
    }
}

/// The other flavour of the same driver, in the distribution's packaging (NVIDIA's guide's
/// table for its repositories; Ubuntu's and Debian's own package names), then a reboot.
fn fixes(snap: &Snapshot, f: Finding, want_proprietary: bool, version: &str) -> Finding {
    if snap.place().is_contained() {
        return f.fix_text("The kernel module is the host's: install the other flavour on the host (run `gpudoctor check` there)");
    }
    let branch = version.split('.').next().unwrap_or(version);
    let os_id = snap.os_id();
    let f = if want_proprietary {
        let f = match os_id.as_str() {
            "ubuntu" | "pop" | "linuxmint" => f.fix_cmd(
                format!("Install the proprietary flavour of driver {branch} (Ubuntu's package without -open)"),
                crate::sh!("sudo apt install nvidia-driver-{}", branch),
            ),
            "debian" => f.fix_cmd(
                "Install the proprietary flavour (Debian's nvidia-kernel-dkms in place of nvidia-open-kernel-dkms)",
                "sudo apt install nvidia-kernel-dkms",
            ),
            _ => f.fix_text(format!("Install the proprietary flavour of driver {branch} (NVIDIA's repositories: the branch's non-open kernel module package; the .run installer: -m=kernel)")),
        };
        if branch.parse::<u32>().is_ok_and(|b| b > 580) {
            f.context(
                "NVIDIA's R580 is the last branch for Maxwell, Pascal and Volta: a later branch supports this GPU in neither flavour",
                SOURCE,
            )
        } else {
            f
        }
    } else {
        match os_id.as_str() {
            "ubuntu" | "pop" | "linuxmint" => f.fix_cmd(
                format!("Install the open flavour of driver {branch} (Ubuntu's -open package)"),
                crate::sh!("sudo apt install nvidia-driver-{}-open", branch),
            ),
            "debian" => f.fix_cmd(
                "Install the open flavour (Debian's nvidia-open-kernel-dkms; NVIDIA's repository: nvidia-open)",
                "sudo apt install nvidia-open-kernel-dkms",
            ),
            "rhel" | "rocky" | "almalinux" | "ol" | "amzn" | "fedora" | "centos" => f.fix_cmd(
                "Install the open flavour from NVIDIA's repository (RHEL 8/9 first: sudo dnf module enable nvidia-driver:open-dkms)",
                "sudo dnf install nvidia-open",
            ),
            _ => f.fix_text(format!("Install the open flavour of driver {branch} (NVIDIA's repositories: nvidia-open; the .run installer: -m=kernel-open)")),
        }
    };
    f.fix_cmd("Reboot so the other flavour's module loads", "sudo reboot")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn with_gpu(s: &mut Snapshot, device_id: &str, flavor: &str) {
        let mut g = pci_gpu(0, None);
        g.device_id = device_id.into();
        s.pci = Some(crate::facts::pci::Pci {
            devices: crate::fact::Fact::value(crate::facts::pci::PCI_DEVICES_DIR, vec![g]),
        });
        let v = kernel_module_mut(s)
            .version_file
            .get()
            .cloned()
            .expect("version file");
        let mut v = v;
        v.flavor = flavor.into();
        // A branch that supports Pascal (≤ 580) and Blackwell (≥ 570).
        v.version = "580.95.05".into();
        kernel_module_mut(s).version_file = crate::fact::Fact::value(VERSION_FILE, v);
    }

    #[test]
    fn a_blackwell_gpu_on_the_proprietary_modules_is_an_error_with_the_open_flavour() {
        let mut s = healthy();
        // 10de:2b85: GB202 [GeForce RTX 5090].
        with_gpu(&mut s, "10de:2b85", "proprietary");
        let f = only(run(&s), codes::GD089, Severity::Error);
        assert!(
            f.title.contains("needs the NVIDIA open kernel modules"),
            "{}",
            f.title
        );
        assert!(f.title.contains("Blackwell"), "{}", f.title);
        assert!(format!("{:?}", f.fix).contains("open"), "{:?}", f.fix);
    }

    #[test]
    fn a_pascal_gpu_on_the_open_modules_is_an_error_with_the_proprietary_flavour() {
        let mut s = healthy();
        // 10de:15f8: GP100GL [Tesla P100 PCIe 16GB].
        with_gpu(&mut s, "10de:15f8", "open");
        let f = only(run(&s), codes::GD089, Severity::Error);
        assert!(
            f.title
                .contains("is not supported by the NVIDIA open kernel modules"),
            "{}",
            f.title
        );
        assert!(f.title.contains("Pascal"), "{}", f.title);
    }

    #[test]
    fn a_branch_that_supports_the_gpu_in_neither_flavour_is_not_judged_here() {
        let mut s = healthy();
        with_gpu(&mut s, "10de:2b85", "proprietary");
        // R535 predates Blackwell in both flavours.
        let mut v = kernel_module_mut(&mut s)
            .version_file
            .get()
            .cloned()
            .unwrap();
        v.version = "535.247.01".into();
        kernel_module_mut(&mut s).version_file = crate::fact::Fact::value(VERSION_FILE, v);
        assert_clean(run(&s));
    }

    #[test]
    fn every_gpu_its_flavour_supports_is_quiet() {
        for (id, flavor) in [
            ("10de:2b85", "open"),
            ("10de:15f8", "proprietary"),
            ("10de:2330", "open"),
            ("10de:2330", "proprietary"),
        ] {
            let mut s = healthy();
            with_gpu(&mut s, id, flavor);
            assert_clean(run(&s));
        }
        assert_clean(run(&healthy()));
    }
}
