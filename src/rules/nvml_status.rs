//! GD029–GD031: whether NVML answered at all. The library missing although the kernel
//! module is loaded (driver user space not installed, or not passed into a container);
//! nvmlInit failing (driver not loaded, no permission); NVML hanging or crashing.
//! A driver/library version mismatch is GD018 (driver_userspace.rs).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::nvml::NvmlResult;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "nvml_status",
    codes: &[codes::GD029, codes::GD030, codes::GD031],
    views: &[super::View::Devices],
    checks: "NVML loads, initialises and answers within the budget",
    judges: &[SubjectKind::Nvml, SubjectKind::Gpu],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(n) = &snap.nvml else {
        return Outcome::NotApplicable("the nvml probe did not run".into());
    };
    let module_loaded = snap
        .kernel_module
        .as_ref()
        .and_then(|k| k.nvidia_loaded())
        .unwrap_or(false)
        || snap.driver_version().is_some_and(|d| d.kernel);
    if snap.container_without_gpus() {
        return Outcome::NotApplicable("a container given no GPU (GD062)".into());
    }
    if super::device_cgroup::revoked(snap).is_some() {
        return Outcome::NotApplicable(
            "the container's device cgroup revoked its GPUs (GD065)".into(),
        );
    }
    let lib = n.library.clone();
    let f = match &n.result {
        NvmlResult::Ok { .. } => return Outcome::Checked(vec![]),
        NvmlResult::NotProbed { reason } => return Outcome::NotApplicable(reason.clone()),
        NvmlResult::InitFailed { code, .. } if code == "lib_rm_version_mismatch" => {
            return Outcome::NotApplicable("a driver/library version mismatch (GD018)".into())
        }
        NvmlResult::InitFailed { code, message } if code == "library_not_found" => {
            if !snap.is_image()
                && snap.judges_container_start()
                && !super::driver_capabilities::grants(snap, "utility")
            {
                return Outcome::NotApplicable(
                    "NVIDIA_DRIVER_CAPABILITIES leaves out utility (GD064)".into(),
                );
            }
            if !module_loaded {
                return Outcome::NotApplicable(
                    "no NVIDIA kernel module is loaded, so no NVML is expected".into(),
                );
            }
            let mut f = Finding::new(codes::GD029, Severity::Error, format!("The NVIDIA kernel module is loaded but NVML ({lib}) cannot be loaded"))
                .detail("The driver's user-space half (libnvidia-ml, libcuda, nvidia-smi) is missing or not on the loader path, so nvidia-smi fails and CUDA finds no driver. In a container it means the NVIDIA runtime did not mount the driver libraries.")
                .evidence(Subject::Nvml, message.clone(), lib.clone());
            // Where the loader looked, from the libraries probe.
            if let Some(l) = snap.libraries.as_ref() {
                let searched = format!(
                    "libnvidia-ml.so.1: not in LD_LIBRARY_PATH ({}), {} or {}",
                    if l.search.ld_library_path.is_empty() { "unset".to_string() } else { l.search.ld_library_path.join(":") },
                    l.search.cache.source,
                    l.search.default_dirs.join(" ")
                );
                if l.by_soname("libnvidia-ml.so.1").and_then(|x| x.loaded()).is_none() {
                    f = f.context(searched, "libraries probe");
                }
            }
            f = if snap.container_kind().is_some() {
                f.fix_cmd("Start the container with the GPUs and driver libraries (NVIDIA Container Toolkit on the host)", "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility IMAGE")
                    .fix_text("NVIDIA_DRIVER_CAPABILITIES must include utility (NVML, nvidia-smi) and compute (libcuda)")
            } else {
                f.fix_text("Install the user-space package of the same driver version as the kernel module (libnvidia-compute-NNN / nvidia-utils-NNN on Ubuntu, libcuda1 + libnvidia-ml1 on Debian), then run sudo ldconfig")
            };
            f
        }
        NvmlResult::InitFailed { code, message } => {
            let (title, fix_text, fix_cmd): (String, &str, Option<&str>) = match code.as_str() {
                "driver_not_loaded" if snap.place().is_contained() => (
                    "NVML says the NVIDIA driver is not loaded: the host's driver did not reach this container".into(),
                    "Start the container with the GPUs (docker run --gpus all, or a pod limit nvidia.com/gpu); if that already is so, the host's driver is not loaded: run `gpudoctor check` on the host",
                    None,
                ),
                "driver_not_loaded" => (
                    "NVML says the NVIDIA driver is not loaded".into(),
                    "Load the kernel module (see GD002 for why it may not load)",
                    Some("sudo modprobe nvidia"),
                ),
                "no_permission" => (
                    "NVML is not permitted to open the GPUs (Insufficient Permissions)".into(),
                    "Give the user read+write access to /dev/nvidia* (see GD008), or run in a container started with the GPUs",
                    None,
                ),
                "library_unloadable" => (
                    format!("The NVML library {lib} exists but cannot be loaded"),
                    "Point --nvml-lib at the driver's libnvidia-ml.so.1, or reinstall the driver's user-space package (the file may be truncated, of another architecture, or missing a dependency)",
                    None,
                ),
                "gpu_is_lost" => (
                    "NVML reports a GPU has fallen off the bus".into(),
                    "Reset or reboot; see GD032",
                    None,
                ),
                _ => (
                    format!("NVML failed to initialise ({code})"),
                    "Check `dmesg | grep -i nvrm` for the driver's own message",
                    Some("sudo dmesg | grep -iE 'nvrm|xid'"),
                ),
            };
            // No NVIDIA hardware and no module: "driver not loaded" is the expected answer.
            let severity = if code == "driver_not_loaded" && !snap.nvidia_hardware_seen() {
                Severity::Info
            } else {
                Severity::Error
            };
            let mut f = Finding::new(codes::GD030, severity, title)
                .detail(format!("nvmlInit failed: {message}. Without NVML, nvidia-smi and every monitoring tool fail, and CUDA usually fails the same way."))
                .evidence(Subject::Nvml, format!("{code}: {message}"), lib.clone())
                .fix_text(fix_text);
            if let Some(c) = fix_cmd {
                let title = if c.contains("dmesg") {
                    "Read the driver's own message in the kernel log"
                } else {
                    "Load the kernel module"
                };
                f = f.fix_cmd(title, c);
            }
            f
        }
        NvmlResult::TimedOut { seconds, stuck_at, partial } => Finding::new(codes::GD031, Severity::Error, format!("NVML did not answer within {seconds:.1} s{}", stuck_at.as_deref().map(|a| format!(" (hung at {a})")).unwrap_or_default()))
            .detail(format!("An NVML call blocked. That happens when a GPU has fallen off the bus or the driver is wedged (Xid 79, 119 or 154 in the kernel log), and every CUDA program will block the same way. gpudoctor ran NVML in a child process and killed it.{}", match partial {
                Some(p) => format!(" The report keeps what NVML answered before: the system facts and {} GPU(s).", p.devices.len()),
                None => String::new(),
            }))
            .evidence(Subject::Nvml, format!("timed out after {seconds:.1} s"), lib.clone())
            .fix_cmd("Look for Xid errors", "sudo dmesg | grep -iE 'xid|nvrm'")
            .fix_cmd("If persistence mode is off, initialising many GPUs can take seconds: give it longer", "gpudoctor check --timeout 30")
            .fix_text("Drain the node and reset the GPU (nvidia-smi -r) or reboot; if it recurs, the GPU or its slot is failing"),
        NvmlResult::Crashed { signal, stderr } => Finding::new(codes::GD031, Severity::Error, format!("NVML crashed with signal {signal}"))
            .detail(format!("Loading or calling {lib} killed the process (signal {signal}). A corrupt or mismatched driver installation is the usual cause.{}", if stderr.is_empty() { String::new() } else { format!(" Its last words: {stderr}") }))
            .evidence(Subject::Nvml, format!("signal {signal}"), lib.clone())
            .fix_text("Reinstall the NVIDIA driver packages of one version, then reboot"),
        NvmlResult::WorkerFailed { detail } => Finding::new(codes::GD031, Severity::Warning, "NVML could not be queried")
            .detail(detail.clone())
            .evidence(Subject::Nvml, detail.clone(), lib.clone())
            .fix_cmd("This is likely a gpudoctor bug: attach the report", "gpudoctor check --format markdown"),
    };
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn failed(code: &str) -> Snapshot {
        let mut s = healthy();
        set_nvml(
            &mut s,
            NvmlResult::InitFailed {
                code: code.into(),
                message: format!("{code} (test)"),
            },
        );
        s
    }

    #[test]
    fn healthy_nvml_answered() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn library_missing_with_the_module_loaded_is_an_error() {
        let f = only(
            run(&failed("library_not_found")),
            codes::GD029,
            Severity::Error,
        );
        assert!(f.title.contains("cannot be loaded"), "{}", f.title);
        assert!(f.fix[0].text.contains("user-space package"), "{:?}", f.fix);
        let mut s = failed("library_not_found");
        in_container(&mut s, "docker");
        let f = only(run(&s), codes::GD029, Severity::Error);
        assert!(
            first_cmd(&f).contains("NVIDIA_DRIVER_CAPABILITIES=compute,utility"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn init_failures_are_errors_with_their_own_fix() {
        let f = only(
            run(&failed("driver_not_loaded")),
            codes::GD030,
            Severity::Error,
        );
        assert!(f.title.contains("driver is not loaded"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo modprobe nvidia");
        let f = only(run(&failed("no_permission")), codes::GD030, Severity::Error);
        assert!(f.title.contains("Insufficient Permissions"), "{}", f.title);
        let f = only(run(&failed("unknown")), codes::GD030, Severity::Error);
        assert!(
            f.title.contains("NVML failed to initialise (unknown)"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo dmesg | grep -iE 'nvrm|xid'");
    }

    #[test]
    fn driver_not_loaded_without_gpu_is_only_info() {
        let mut s = no_gpu();
        set_nvml(
            &mut s,
            NvmlResult::InitFailed {
                code: "driver_not_loaded".into(),
                message: "Driver Not Loaded".into(),
            },
        );
        only(run(&s), codes::GD030, Severity::Info);
    }

    #[test]
    fn hangs_and_crashes() {
        let mut s = healthy();
        set_nvml(
            &mut s,
            NvmlResult::TimedOut {
                seconds: 5.0,
                partial: None,
                stuck_at: Some("nvmlDeviceGetHandleByIndex".into()),
            },
        );
        let f = only(run(&s), codes::GD031, Severity::Error);
        assert!(
            f.title
                .contains("within 5.0 s (hung at nvmlDeviceGetHandleByIndex)"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo dmesg | grep -iE 'xid|nvrm'");
        set_nvml(
            &mut s,
            NvmlResult::Crashed {
                signal: 11,
                stderr: String::new(),
            },
        );
        let f = only(run(&s), codes::GD031, Severity::Error);
        assert!(f.title.contains("signal 11"), "{}", f.title);
        set_nvml(
            &mut s,
            NvmlResult::WorkerFailed {
                detail: "no answer".into(),
            },
        );
        let f = only(run(&s), codes::GD031, Severity::Warning);
        assert_eq!(first_cmd(&f), "gpudoctor check --format markdown");
    }

    #[test]
    fn not_applicable_when_not_probed_mismatched_or_not_expected() {
        let mut s = healthy();
        s.nvml = None;
        assert_na(run(&s));
        let mut s = healthy();
        set_nvml(
            &mut s,
            NvmlResult::NotProbed {
                reason: "--root".into(),
            },
        );
        assert_eq!(assert_na(run(&s)), "--root");
        assert_na(run(&failed("lib_rm_version_mismatch")));
        assert_na(run(&no_gpu()));
    }
}
