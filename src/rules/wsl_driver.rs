//! GD027: on WSL the driver comes from Windows through /usr/lib/wsl/lib. If the loader
//! does not search it, or a Linux driver package's libcuda shadows it, CUDA fails
//! ("GPU access blocked by the operating system", CUDA_ERROR_NOT_SUPPORTED or no device).

use super::{Outcome, Rule};
use crate::findings::{Finding, Severity};
use crate::probes::libraries::WSL_LIB_DIR;
use crate::snapshot::Snapshot;

pub const RULE: Rule = Rule {
    name: "wsl_driver",
    codes: &["GD027"],
    views: &[super::View::Toolkit],
    checks: "on WSL, the loader uses the Windows driver's libraries from /usr/lib/wsl/lib",
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    if !snap.is_wsl() {
        return Outcome::NotApplicable("not WSL".into());
    }
    let Some(libs) = &snap.libraries else {
        return Outcome::NotApplicable("the libraries probe did not run".into());
    };
    let mut findings = Vec::new();
    if libs.search.wsl_lib_searched == Some(false) {
        findings.push(
            Finding::new("GD027", Severity::Error, format!("{WSL_LIB_DIR} is not on the loader path: CUDA cannot reach the Windows driver"))
                .detail("WSL exposes the Windows NVIDIA driver as libraries in /usr/lib/wsl/lib, registered through /etc/ld.so.conf.d/ld.wsl.conf. Without it the loader finds no libcuda.so.1 (or a wrong one) and CUDA reports no device.")
                .evidence("loader path", format!("{WSL_LIB_DIR} neither in LD_LIBRARY_PATH nor in /etc/ld.so.cache"), "/etc/ld.so.cache")
                .fix_cmd("Register it and rebuild the cache", format!("echo {WSL_LIB_DIR} | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig"))
                .fix_text("Or restart the distribution (wsl --shutdown in Windows), which recreates ld.wsl.conf"),
        );
    }
    let smi = libs
        .nvidia_smi
        .as_ref()
        .filter(|e| !std::path::Path::new(&e.resolved).starts_with(WSL_LIB_DIR));
    if let Some(c) = libs.by_soname("libcuda.so.1").and_then(|l| l.loaded()) {
        let from_wsl = std::path::Path::new(&c.path).starts_with(WSL_LIB_DIR);
        if !from_wsl && !c.stub && !c.forward_compat {
            findings.push(
                Finding::new("GD027", Severity::Error, format!("A Linux NVIDIA driver's libcuda ({}) shadows the Windows driver's in WSL", c.path))
                    .detail("Inside WSL the only working libcuda is the one Windows provides in /usr/lib/wsl/lib. A Linux driver package (libnvidia-compute-*, cuda-drivers, nvidia-driver-*) installed in the distribution puts its own libcuda.so.1 first, and CUDA fails with \"GPU access blocked by the operating system\" or finds no device. In WSL, install only the toolkit (cuda-toolkit-X-Y), never a driver.")
                    .evidence("library:libcuda.so.1", format!("libcuda.so.1 → {} ({})", c.target.as_deref().unwrap_or(&c.path), c.version.as_deref().unwrap_or("version unknown")), c.path.clone())
                    .fix_cmd("Remove the Linux driver packages from the distribution", "sudo apt remove --purge 'libnvidia-compute-*' 'nvidia-driver-*' 'nvidia-utils-*' cuda-drivers && sudo ldconfig")
                    .fix_text("Keep the NVIDIA driver up to date on the Windows side only"),
            );
        }
    }
    // A distro nvidia-smi: with the libcuda finding it is one more piece of evidence,
    // alone it is a warning (it reports a driver that is not the one in use).
    if let Some(e) = smi {
        let evidence = format!("{} → {}", e.path, e.resolved);
        match findings.iter_mut().find(|f| f.title.contains("shadows")) {
            Some(f) => f.evidence.push(crate::findings::Evidence {
                fact: Some("nvidia-smi".into()),
                value: evidence,
                source: "env PATH".into(),
            }),
            None => findings.push(
                Finding::new("GD027", Severity::Warning, format!("A Linux nvidia-smi ({}) is installed in WSL", e.path))
                    .detail("WSL's nvidia-smi is /usr/lib/wsl/lib/nvidia-smi, provided by the Windows driver. One from a Linux driver package fails (\"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\") or reports a driver that is not the one in use, and its package usually brings a libcuda that breaks CUDA too.")
                    .evidence("nvidia-smi", evidence, "env PATH")
                    .fix_cmd("Remove the Linux driver utilities", "sudo apt remove --purge 'nvidia-utils-*'"),
            ),
        }
    }
    Outcome::Checked(findings)
}
