//! GD027: on WSL the driver comes from Windows through /usr/lib/wsl/lib. If the loader
//! does not search it, or a Linux driver package's libcuda shadows it, CUDA fails
//! ("GPU access blocked by the operating system", CUDA_ERROR_NOT_SUPPORTED or no device).
//! GD088: WSL 1 (Linux programs on Windows' own kernel, `4.4.0-NNNNN-Microsoft`) has no
//! GPU path at all — no /dev/dxg, no /usr/lib/wsl — so only converting the distribution
//! to WSL 2 helps; none of WSL 2's fixes apply.

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::libraries::WSL_LIB_DIR;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "wsl_driver",
    codes: &[codes::GD027, codes::GD088],
    views: &[super::View::Toolkit, super::View::Devices, super::View::Smoke],
    checks: "on WSL, it is WSL 2 and the loader uses the Windows driver's libraries from /usr/lib/wsl/lib",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    if !snap.is_wsl() {
        return Outcome::NotApplicable("not WSL".into());
    }
    if snap.platform.as_ref().and_then(|p| p.wsl.version) == Some(1) {
        return Outcome::Checked(vec![wsl_1(snap)]);
    }
    let Some(libs) = &snap.libraries else {
        return Outcome::NotApplicable("the libraries probe did not run".into());
    };
    let mut findings = Vec::new();
    if libs.search.wsl_lib_searched == Some(false) {
        findings.push(
            Finding::new(codes::GD027, Severity::Error, format!("{WSL_LIB_DIR} is not on the loader path: CUDA cannot reach the Windows driver"))
                .detail("WSL exposes the Windows NVIDIA driver as libraries in /usr/lib/wsl/lib, registered through /etc/ld.so.conf.d/ld.wsl.conf. Without it the loader finds no libcuda.so.1 (or a wrong one) and CUDA reports no device.")
                .evidence(Subject::LoaderPath, format!("{WSL_LIB_DIR} neither in LD_LIBRARY_PATH nor in /etc/ld.so.cache"), "/etc/ld.so.cache")
                .fix_cmd("Register it and rebuild the cache", crate::sh!("printf '%s\\n' {} | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig", WSL_LIB_DIR))
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
                Finding::new(codes::GD027, Severity::Error, format!("A Linux NVIDIA driver's libcuda ({}) shadows the Windows driver's in WSL", c.path))
                    .detail("Inside WSL the only working libcuda is the one Windows provides in /usr/lib/wsl/lib. A Linux driver package (libnvidia-compute-*, cuda-drivers, nvidia-driver-*) installed in the distribution puts its own libcuda.so.1 first, and CUDA fails with \"GPU access blocked by the operating system\" or finds no device. In WSL, install only the toolkit (cuda-toolkit-X-Y), never a driver.")
                    .evidence(Subject::library("libcuda.so.1"), format!("libcuda.so.1 → {} ({})", c.target.as_deref().unwrap_or(&c.path), c.version.as_deref().unwrap_or("version unknown")), c.path.clone())
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
                fact: Some(crate::subject::Subject::Program("nvidia-smi".into())),
                value: evidence,
                source: "env PATH".into(),
            }),
            None => findings.push(
                Finding::new(codes::GD027, Severity::Warning, format!("A Linux nvidia-smi ({}) is installed in WSL", e.path))
                    .detail("WSL's nvidia-smi is /usr/lib/wsl/lib/nvidia-smi, provided by the Windows driver. One from a Linux driver package fails (\"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\") or reports a driver that is not the one in use, and its package usually brings a libcuda that breaks CUDA too.")
                    .evidence(Subject::Program("nvidia-smi".into()), evidence, "env PATH")
                    .fix_cmd("Remove the Linux driver utilities", "sudo apt remove --purge 'nvidia-utils-*'"),
            ),
        }
    }
    Outcome::Checked(findings)
}

/// GD088: WSL 1, with the command that converts this distribution (its name from
/// WSL_DISTRO_NAME, which WSL sets in every session).
fn wsl_1(snap: &Snapshot) -> Finding {
    let mut f = Finding::new(codes::GD088, Severity::Error, "This is WSL 1, which has no GPU: CUDA runs only in WSL 2")
        .detail("WSL 1 runs Linux programs on the Windows kernel itself, translating their system calls; it has no GPU device and no way to reach the Windows driver. GPU support (the /dev/dxg device and the driver's libraries in /usr/lib/wsl/lib) exists only in WSL 2, which runs a real Linux kernel. Every CUDA program here fails with no device, whatever is installed in the distribution.");
    if let Some(p) = &snap.platform {
        if let Some(release) = p.kernel_release.get() {
            f = f.evidence(
                Subject::Wsl,
                format!("kernel {release}: the Windows kernel's own build, not a Linux kernel"),
                p.kernel_release.source.clone(),
            );
        }
        for h in &p.wsl.hints {
            f = f.evidence(Subject::Wsl, h.kind.clone(), h.source.clone());
        }
    }
    f = f.evidence(
        Subject::Wsl,
        "no /dev/dxg and no /usr/lib/wsl: WSL 2's GPU path is absent",
        "/dev, /usr/lib/wsl",
    );
    let distro = snap
        .env_value("WSL_DISTRO_NAME")
        .map(str::trim)
        .filter(|d| !d.is_empty());
    f = match distro {
        Some(d) => f.fix_cmd(
            "In Windows PowerShell, convert this distribution to WSL 2; its files are kept",
            crate::sh!("wsl --set-version {} 2", d),
        ),
        None => f
            .fix_cmd(
                "In Windows PowerShell, list the distributions and their WSL version",
                "wsl -l -v",
            )
            .fix_text(
                "Then convert this one: wsl --set-version DISTRIBUTION 2 (its files are kept)",
            ),
    };
    f.fix_text("WSL 2 gets CUDA from the NVIDIA driver installed in Windows: keep that driver current and install no Linux NVIDIA driver in the distribution")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::libraries::Via;
    use crate::testing::*;

    fn healthy_wsl() -> Snapshot {
        let mut s = healthy();
        make_wsl(&mut s);
        put_library(
            &mut s,
            library(
                "libcuda",
                "libcuda.so.1",
                candidate(
                    WSL_LIB_DIR,
                    "libcuda.so.1",
                    "libcuda.so.1.1",
                    Via::LdSoCache,
                ),
            ),
        );
        let l = libs_mut(&mut s);
        l.search.wsl_lib_searched = Some(true);
        l.nvidia_smi = Some(crate::facts::libraries::Executable {
            path: format!("{WSL_LIB_DIR}/nvidia-smi"),
            resolved: format!("{WSL_LIB_DIR}/nvidia-smi"),
        });
        s
    }

    #[test]
    fn wsl_1_is_one_error_whose_fix_converts_the_distribution() {
        let mut s = healthy_wsl();
        s.platform.as_mut().unwrap().wsl.version = Some(1);
        // Even with WSL 2's loader path missing: that fix does not apply to WSL 1.
        libs_mut(&mut s).search.wsl_lib_searched = Some(false);
        let f = only(run(&s), codes::GD088, Severity::Error);
        assert_eq!(first_cmd(&f), "wsl -l -v");
        set_env(&mut s, "WSL_DISTRO_NAME", "Ubuntu 24.04");
        let f = only(run(&s), codes::GD088, Severity::Error);
        assert_eq!(first_cmd(&f), "wsl --set-version 'Ubuntu 24.04' 2");
        // WSL 2 never gets it.
        assert_clean(run(&healthy_wsl()));
    }

    #[test]
    fn healthy_wsl_uses_the_windows_driver() {
        assert_clean(run(&healthy_wsl()));
    }

    #[test]
    fn wsl_lib_off_the_loader_path_is_an_error() {
        let mut s = healthy_wsl();
        libs_mut(&mut s).search.wsl_lib_searched = Some(false);
        let f = only(run(&s), codes::GD027, Severity::Error);
        assert!(f.title.contains("is not on the loader path"), "{}", f.title);
        assert!(
            first_cmd(&f).contains("/etc/ld.so.conf.d/ld.wsl.conf"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn a_linux_libcuda_shadowing_the_windows_one_is_an_error_with_smi_as_evidence() {
        let mut s = healthy();
        make_wsl(&mut s);
        let f = only(run(&s), codes::GD027, Severity::Error);
        assert!(
            f.title.contains("shadows the Windows driver"),
            "{}",
            f.title
        );
        assert!(first_cmd(&f).starts_with("sudo apt remove --purge 'libnvidia-compute-*'"));
        assert!(evidence_mentions(&f, "/usr/bin/nvidia-smi"));
    }

    #[test]
    fn a_linux_nvidia_smi_alone_is_a_warning() {
        let mut s = healthy_wsl();
        libs_mut(&mut s).nvidia_smi = Some(crate::facts::libraries::Executable {
            path: "/usr/bin/nvidia-smi".into(),
            resolved: "/usr/bin/nvidia-smi".into(),
        });
        let f = only(run(&s), codes::GD027, Severity::Warning);
        assert!(f.title.contains("A Linux nvidia-smi"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo apt remove --purge 'nvidia-utils-*'");
    }

    #[test]
    fn not_applicable_off_wsl_or_without_libraries() {
        assert_na(run(&healthy()));
        let mut s = healthy_wsl();
        s.libraries = None;
        assert_na(run(&s));
    }
}
