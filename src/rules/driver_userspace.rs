//! GD018: the loaded kernel module and the user-space driver libraries on disk differ: the
//! driver was upgraded without a reboot. NVML fails with "Driver/library version mismatch"
//! and CUDA cannot initialise (tests/it/toolkits.rs gd018_driver_upgraded_without_reboot).

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::DriverVersion;
use crate::facts::nvml::NvmlResult;
use crate::findings::{Finding, Severity};
use crate::snapshot::{DriverFact, Snapshot};
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "driver_userspace",
    codes: &[codes::GD018],
    views: &[super::View::Toolkit, super::View::Devices],
    checks: "the kernel module and the user-space driver libraries (libcuda, libnvidia-ml) have the same version",
    judges: &[SubjectKind::DriverVersion],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    // NVML's own verdict (error 18) needs no version on disk to be believed.
    let nvml_says = snap.nvml.as_ref().and_then(|n| match &n.result {
        NvmlResult::InitFailed { code, message } if code == "lib_rm_version_mismatch" => {
            Some((n.library.clone(), message.clone()))
        }
        _ => None,
    });
    let Some(driver) = snap.driver_version().filter(|d| d.kernel) else {
        return match nvml_says {
            Some((lib, message)) => {
                Outcome::Checked(vec![finding(None, &[], Some((lib, message)))])
            }
            None => Outcome::NotApplicable("no loaded NVIDIA kernel module version known".into()),
        };
    };
    let (checked, mismatched) = mismatched_libraries(snap, &driver.version);
    if mismatched.is_empty() && nvml_says.is_none() {
        return if checked == 0 {
            Outcome::NotApplicable(
                "no versioned libcuda.so.1 or libnvidia-ml.so.1 on the loader path".into(),
            )
        } else {
            Outcome::Checked(vec![])
        };
    }
    Outcome::Checked(vec![finding(Some(&driver), &mismatched, nvml_says)])
}

/// The driver libraries the loader picks whose version is not the loaded module's: (soname,
/// version, path), and how many versioned ones were compared.
fn mismatched_libraries(
    snap: &Snapshot,
    module: &DriverVersion,
) -> (usize, Vec<(&'static str, DriverVersion, String)>) {
    let libs = snap.libraries.as_ref();
    let mut mismatched = Vec::new();
    let mut checked = 0;
    for soname in ["libcuda.so.1", "libnvidia-ml.so.1"] {
        let Some(c) = libs
            .and_then(|l| l.by_soname(soname))
            .and_then(|l| l.loaded())
        else {
            continue;
        };
        // Forward-compat libcuda is meant to differ (GD025); stubs are GD024.
        if c.stub || c.forward_compat {
            continue;
        }
        let Some(v) = c.version.as_deref().and_then(DriverVersion::parse) else {
            continue;
        };
        checked += 1;
        if v != *module {
            mismatched.push((
                soname,
                v,
                c.target.clone().unwrap_or_else(|| c.path.clone()),
            ));
        }
    }
    (checked, mismatched)
}

/// The driver a reboot brings up: the version of the user-space libraries (libcuda first),
/// when they differ from the loaded kernel module.
pub(crate) fn version_after_reboot(snap: &Snapshot) -> Option<DriverVersion> {
    let module = snap.driver_version().filter(|d| d.kernel)?;
    let (_, mismatched) = mismatched_libraries(snap, &module.version);
    mismatched.into_iter().next().map(|(_, v, _)| v)
}

fn finding(
    driver: Option<&DriverFact>,
    mismatched: &[(&str, DriverVersion, String)],
    nvml_says: Option<(String, String)>,
) -> Finding {
    let mut versions: Vec<&str> = mismatched.iter().map(|(_, v, _)| v.as_str()).collect();
    versions.dedup();
    let title = match (driver, versions.is_empty()) {
        (Some(d), false) => format!(
            "Kernel module {} does not match the user-space driver libraries {}: the driver was upgraded without a reboot",
            d.version.as_str(),
            versions.join(", ")
        ),
        _ => "Driver/library version mismatch: the driver was upgraded without a reboot".to_string(),
    };
    let mut f = Finding::new(codes::GD018, Severity::Error, title)
    .detail("The loaded nvidia.ko is one version and the libcuda/libnvidia-ml the loader picks are another. NVML refuses to start (\"Failed to initialize NVML: Driver/library version mismatch\"), nvidia-smi fails the same way, and new CUDA processes cannot initialise; processes started before the upgrade keep running. The kernel log says \"NVRM: API mismatch: the client has the version X, but this kernel module has the version Y\". An unattended upgrade of the driver packages is the usual cause.")
    ;
    if let Some(d) = driver {
        f = f.evidence(
            Subject::DriverVersion,
            format!("nvidia.ko {}", d.version.as_str()),
            d.source.clone(),
        );
    }
    if let Some((lib, message)) = nvml_says {
        f = f.evidence(Subject::Nvml, message, lib);
    }
    for (soname, v, path) in mismatched {
        f = f.evidence(
            Subject::library(soname),
            format!("{soname} is {}", v.as_str()),
            path.clone(),
        );
    }
    f = f
        .fix_text("Reboot: the new kernel module loads and matches the libraries")
        .fix_cmd(
            "Or, with every GPU process stopped, reload the modules",
            "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia && sudo modprobe nvidia_uvm",
        )
        .fix_text("Prevent it: hold the driver packages (apt-mark hold / dnf versionlock) or exclude them from unattended upgrades");
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn healthy_libraries_match_the_module() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_newer_libcuda_than_the_module_is_an_error() {
        let mut s = healthy();
        libs_mut(&mut s).libraries[0].candidates[0].version = Some("560.35.03".into());
        let f = only(run(&s), codes::GD018, Severity::Error);
        assert!(f.title.contains("upgraded without a reboot"), "{}", f.title);
        assert!(evidence_mentions(&f, "libcuda.so.1 is 560.35.03"));
        assert!(
            first_cmd(&f).starts_with("sudo rmmod nvidia_uvm"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn nvml_saying_mismatch_is_believed_without_versions() {
        let mut s = healthy();
        unload_nvidia(&mut s);
        set_nvml(
            &mut s,
            NvmlResult::InitFailed {
                code: "lib_rm_version_mismatch".into(),
                message: "Driver/library version mismatch".into(),
            },
        );
        let f = only(run(&s), codes::GD018, Severity::Error);
        assert!(
            f.title.starts_with("Driver/library version mismatch"),
            "{}",
            f.title
        );
    }

    #[test]
    fn a_forward_compat_libcuda_is_left_to_gd025() {
        let mut s = healthy();
        let c = &mut libs_mut(&mut s).libraries[0].candidates[0];
        c.version = Some("570.86.10".into());
        c.forward_compat = true;
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_a_module_version_or_libraries() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        s.libraries = None;
        assert_na(run(&s));
    }
}
