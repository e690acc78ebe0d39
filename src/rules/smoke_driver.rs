//! GD053: the smoke test could not start CUDA (libcuda missing or unusable, cuInit failed,
//! no device). GD054: CUDA and NVML disagree about the GPUs or the driver.

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::cuda_errors;
use crate::facts::smoke::CudaError;
use crate::facts::smoke::{SmokeProbe, SmokeResult, SmokeRun};
use crate::findings::{Finding, Severity};
use crate::rules::visible_devices::{names_a_known_uuid, parse_visible_devices};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "smoke_driver",
    codes: &[codes::GD053, codes::GD054],
    views: &[super::View::Smoke],
    checks: "the smoke test loaded libcuda, cuInit succeeded, and CUDA sees the GPUs NVML sees",
    judges: &[SubjectKind::Smoke],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(p) = &snap.smoke else {
        return super::smoke_not_run(snap);
    };
    // A missing libcuda in a container given no GPU (GD062) or without `compute` (GD064), and
    // cuInit's "no device" or "unknown" there or with the GPUs revoked (GD065), are the
    // container rule's fact; a libcuda that is there but broken is still this rule's.
    let cause = super::container_cause(snap);
    let mut out = Vec::new();
    match &p.result {
        SmokeResult::NotRun { reason } if p.settings.requested => {
            return Outcome::Checked(vec![Finding::new(
                codes::GD053,
                Severity::Error,
                format!("The smoke test could not run: {reason}"),
            )
            .detail("`gpudoctor smoke` was asked to prove that the GPUs compute and tested nothing, so nothing is proved.")
            .evidence(Subject::Smoke, reason.clone(), "smoke test")
            .fix_text(not_run_fix(snap))])
        }
        SmokeResult::NotRun { reason } => return Outcome::NotApplicable(reason.clone()),
        SmokeResult::LoadFailed { code, .. }
            if matches!(cause, Some(codes::GD062 | codes::GD064)) && code == "library_not_found" => {}
        SmokeResult::LoadFailed { code, message } => out.push(load_failed(snap, p, code, message)),
        _ => {}
    }
    if let Some(run) = p.run() {
        if let Some(e) = &run.init_error {
            if !(cause.is_some() && matches!(e.code, 100 | 999)) {
                out.push(init_failed(snap, p, run, e));
            }
        } else if let Some(e) = &run.count_error {
            out.push(cuda_error_finding(
                snap,
                p,
                run,
                e,
                "CUDA could not count the GPUs",
            ));
        } else if let Some(n) = run
            .device_count
            .filter(|n| *n < 0 || *n > crate::smoke::MAX_DEVICES)
        {
            out.push(
                Finding::new(codes::GD054, Severity::Error, format!("cuDeviceGetCount returned an impossible {n}"))
                    .detail(format!("libcuda reported success with a GPU count no machine has. The library answering is not a working NVIDIA driver (a shim, an interposer, or a corrupted install); the smoke test tested at most {} ordinals.", crate::smoke::MAX_DEVICES))
                    .evidence(Subject::Smoke, format!("cuDeviceGetCount = {n}"), library_source(p, run))
                    .fix_text("Check which libcuda the loader maps (`gpudoctor toolkit`) and reinstall the driver's user-space libraries"),
            );
        } else if run.device_count == Some(0) {
            out.push(
                Finding::new(codes::GD053, Severity::Error, "CUDA initialised but sees no GPU")
                    .detail("cuInit succeeded and cuDeviceGetCount returned 0: every GPU is hidden from this process.")
                    .evidence(Subject::Smoke, "cuDeviceGetCount = 0", library_source(p, run))
                    .fix_text("Check CUDA_VISIBLE_DEVICES and, in a container, that the GPUs were passed in (--gpus all)"),
            );
        }
        out.extend(count_mismatch(snap, run));
        out.extend(version_mismatch(snap, p, run));
    }
    Outcome::Checked(out)
}

/// What makes a smoke test that did not start runnable, where the user is: under --root
/// (a tree, not a machine), without the kernel driver, or with no GPU in sight (in a
/// container: one started without them).
fn not_run_fix(snap: &Snapshot) -> &'static str {
    if snap.root.is_some() {
        return "Run `gpudoctor smoke` on the machine itself (without --root), with the driver's libcuda on the loader path or named by --cuda-lib";
    }
    let driver_loaded = snap
        .kernel_module
        .as_ref()
        .and_then(|k| k.is_loaded("nvidia"))
        .unwrap_or(false);
    match (snap.nvidia_hardware_seen(), driver_loaded, snap.container_kind().is_some()) {
        (_, _, true) if !snap.nvidia_hardware_seen() => {
            "Start the container with the GPUs: `docker run --gpus all …`, `podman run --device nvidia.com/gpu=all …`, or a Kubernetes limit `nvidia.com/gpu: 1`"
        }
        (false, _, false) => {
            "Run `gpudoctor smoke` on a machine with an NVIDIA GPU: none is on this machine's PCI bus"
        }
        (true, false, _) => {
            "Load the NVIDIA kernel driver first (the driver findings above say how), then run `gpudoctor smoke` again"
        }
        _ => {
            "Put the driver's libcuda.so.1 on the loader path (or name it with --cuda-lib) and run `gpudoctor smoke` again"
        }
    }
}

fn library_source(p: &SmokeProbe, run: &SmokeRun) -> String {
    run.loaded_from.clone().unwrap_or_else(|| p.library.clone())
}

fn load_failed(snap: &Snapshot, p: &SmokeProbe, code: &str, message: &str) -> Finding {
    let hardware = snap.nvidia_hardware_seen();
    let (title, fix) = match code {
        "library_not_found" if p.library == crate::facts::smoke::DEFAULT_LIB && !hardware => (
            "No NVIDIA GPU here and no libcuda.so.1: nothing could be tested".to_string(),
            "Run the smoke test on a machine (or in a container started with --gpus all) that has an NVIDIA GPU and its driver",
        ),
        "library_not_found" if p.library == crate::facts::smoke::DEFAULT_LIB => (
            "libcuda.so.1 is not on the loader path: no CUDA program can start".to_string(),
            if snap.container_kind().is_some() {
                "Run the container with the NVIDIA runtime (`docker run --gpus all …` / the NVIDIA Container Toolkit), which mounts the driver's libcuda"
            } else {
                "Install the driver's CUDA library (Debian/Ubuntu: libcuda1 / libnvidia-compute-<branch>; RHEL: nvidia-driver-cuda-libs) at the kernel module's version"
            },
        ),
        "library_not_found" => (
            format!("{} does not exist", p.library),
            "Point --cuda-lib (or GPUDOCTOR_CUDA_LIB) at an existing libcuda.so.1",
        ),
        "symbol_missing" => (
            format!("{} is not a usable CUDA driver library", p.library),
            "Point --cuda-lib at the driver's libcuda.so.1; a driver older than R470 (CUDA 11.4) lacks entry points gpudoctor needs",
        ),
        _ => (
            format!("{} could not be loaded", p.library),
            "Reinstall the driver's user-space libraries (the dlopen error names what is missing)",
        ),
    };
    Finding::new(
        codes::GD053,
        // Asked for by `gpudoctor smoke`, a test that tested nothing fails the gate.
        if hardware || p.library != crate::facts::smoke::DEFAULT_LIB || p.settings.requested {
            Severity::Error
        } else {
            Severity::Warning
        },
        title,
    )
    .detail("The smoke test loads libcuda the way the CUDA runtime does (dlopen of libcuda.so.1, or the --cuda-lib file) and could not.")
    .evidence(Subject::Smoke, message, "dlopen in the smoke worker")
    .fix_text(fix)
}

fn init_failed(snap: &Snapshot, p: &SmokeProbe, run: &SmokeRun, e: &CudaError) -> Finding {
    cuda_error_finding(snap, p, run, e, "cuInit failed")
}

/// A driver-level CUresult as a finding, with the cause this machine's facts point at.
fn cuda_error_finding(
    snap: &Snapshot,
    p: &SmokeProbe,
    run: &SmokeRun,
    e: &CudaError,
    what: &str,
) -> Finding {
    let known = cuda_errors::lookup(e.code);
    let mut f = Finding::new(
        codes::GD053,
        Severity::Error,
        format!("{what}: {} ({})", e.name, known.map_or(e.message.as_str(), |k| k.message)),
    )
    .detail(format!(
        "The driver API refused to start, so no CUDA program (PyTorch included) can use the GPU. {}",
        known.map_or("", |k| k.cause)
    ))
    .evidence(Subject::Smoke, e.to_string(), library_source(p, run));
    if let Some(k) = known {
        f = f.context(format!("{}: {}", e.name, k.message), k.source);
    }
    let visible = snap
        .env_value(crate::envvars::CUDA_VISIBLE_DEVICES.name)
        .or(run.cuda_visible_devices.as_deref());
    match e.code {
        100 => {
            // The machine's own causes first: Slurm sets CUDA_VISIBLE_DEVICES in every GPU
            // job, so its presence alone does not make it the culprit.
            if snap
                .kernel_module
                .as_ref()
                .is_some_and(|k| k.nvidia_loaded() != Some(true))
            {
                // Not known to be loaded: /proc/driver/nvidia/version is absent too.
                f = f
                    .context(
                        "the nvidia kernel module is not loaded (no /proc/driver/nvidia/version; see GD002)",
                        "/proc/driver/nvidia/version",
                    )
                    .fix_cmd("Load the driver", "sudo modprobe nvidia");
            } else if snap
                .device_nodes
                .as_ref()
                .is_some_and(|n| n.gpu_nodes().is_empty())
            {
                f = f
                    .context("no /dev/nvidiaN device nodes (see GD007)", "/dev")
                    .fix_text("In a container, pass the GPUs in (--gpus all); on a host, run `sudo nvidia-modprobe -c=0`");
            } else if let Some(v) = visible.filter(|v| hides_every_gpu(snap, v)) {
                f = f
                    .context(format!("CUDA_VISIBLE_DEVICES={v} leaves CUDA no GPU (see GD009/GD010)"), "environment")
                    .fix_cmd("CUDA_VISIBLE_DEVICES hides the GPUs: unset it (or list valid indices/UUIDs)", "unset CUDA_VISIBLE_DEVICES");
            } else {
                if let Some(v) = visible {
                    f = f.context(
                        format!("CUDA_VISIBLE_DEVICES={v} names GPUs that exist"),
                        "environment",
                    );
                }
                if let Some(k) = known {
                    f = f.fix_text(k.fix);
                }
            }
        }
        999 => {
            let uvm = snap
                .kernel_module
                .as_ref()
                .and_then(|k| k.is_loaded("nvidia_uvm"));
            match uvm {
                Some(true) => {
                    f = f
                        .context(
                            "nvidia_uvm is loaded: the other cause, a GPU left in a bad state, remains",
                            "/proc/modules",
                        )
                        .fix_cmd(
                            "Look for the Xid the driver logged for this GPU",
                            "sudo dmesg | grep -i xid",
                        )
                        ;
                    f = match xid_device(snap) {
                        Some(bus) => f.fix_cmd(
                            format!("The kernel log has an Xid for {bus} this boot: reset that GPU with no process on it (or reboot the node)"),
                            crate::sh!("sudo nvidia-smi -r -i {}", bus),
                        ),
                        None => f.fix_text("After an Xid, reset the GPU the log line names (nvidia-smi -r -i takes the bus id it prints), with no process on it, or reboot the node"),
                    };
                }
                Some(false) => {
                    f = f
                        .context("nvidia_uvm is not loaded (see GD006)", "/proc/modules")
                        .fix_cmd(
                            "Load the UVM module and create /dev/nvidia-uvm",
                            "sudo modprobe nvidia_uvm && sudo nvidia-modprobe -u -c=0",
                        );
                }
                None => {
                    if let Some(k) = known {
                        f = f.fix_text(k.fix);
                    }
                }
            }
        }
        804 | 803 => {
            let lib = library_source(p, run);
            if lib.contains("/compat/") || is_forward_compat(snap) {
                f = f.context(
                    format!("{lib} is a forward-compatibility libcuda"),
                    "smoke worker (dladdr)",
                );
            }
            if let Some(k) = known {
                f = f.fix_text(k.fix);
            }
        }
        _ => {
            if let Some(k) = known {
                f = f.fix_text(k.fix);
            } else {
                f = f.fix_text(format!(
                    "Look the code up with `gpudoctor explain GD053`; the driver said {:?}",
                    e.message
                ));
            }
        }
    }
    f
}

/// Whether CUDA_VISIBLE_DEVICES=`v` leaves CUDA no GPU on this machine: a list CUDA reads
/// as empty, or a UUID list whose first entry no GPU here has (CUDA stops there).
fn hides_every_gpu(snap: &Snapshot, v: &str) -> bool {
    let parsed = parse_visible_devices(v, snap.gpu_count().map(|c| c.count));
    let Some(first) = parsed.visible.first() else {
        return true;
    };
    if !parsed.uuid_mode {
        return false;
    }
    // CUDA stops at the first UUID no GPU has; NVML must have answered to tell.
    let Some(sys) = snap.nvml.as_ref().and_then(|n| n.system()) else {
        return false;
    };
    !sys.devices.is_empty() && !names_a_known_uuid(sys, first.trim())
}

fn is_forward_compat(snap: &Snapshot) -> bool {
    snap.libraries
        .as_ref()
        .and_then(|l| l.by_soname("libcuda.so.1"))
        .and_then(|l| l.loaded())
        .is_some_and(|c| c.forward_compat)
}

/// CUDA (with CUDA_VISIBLE_DEVICES unset) sees fewer GPUs than NVML.
fn count_mismatch(snap: &Snapshot, run: &SmokeRun) -> Option<Finding> {
    let cuda = run.device_count?;
    let nvml = *snap.nvml_system()?.device_count.get()?;
    if run.cuda_visible_devices.is_some() || cuda < 0 || cuda as u32 >= nvml {
        return None;
    }
    let mig = snap
        .nvml_system()
        .is_some_and(|s| s.devices.iter().any(|g| g.mig.enabled.get() == Some(&true)));
    if mig {
        // With MIG on, CUDA enumerates MIG devices, not GPUs (GD037 judges that).
        return None;
    }
    Some(
        Finding::new(
            codes::GD054,
            Severity::Error,
            format!("CUDA sees {cuda} GPU(s) but NVML sees {nvml}"),
        )
        .detail("With CUDA_VISIBLE_DEVICES unset CUDA should enumerate every GPU the driver has. A GPU NVML lists but CUDA skips is unusable: it failed initialisation (check `sudo dmesg | grep -i -E 'xid|nvrm'`), or the process cannot open its /dev/nvidiaN node (cgroup device rules, a container given some GPUs).")
        .evidence(Subject::Smoke, format!("cuDeviceGetCount = {cuda}"), "smoke worker")
        .evidence(Subject::Nvml, format!("nvmlDeviceGetCount = {nvml}"), "NVML")
        .fix_cmd("Look for the missing GPU's error in the kernel log", "sudo dmesg | grep -i -E 'xid|nvrm'"),
    )
}

/// libcuda's CUDA version differs from NVML's: two drivers' libraries are mixed (unless the
/// libcuda is a forward-compat one, which GD025 judges).
fn version_mismatch(snap: &Snapshot, p: &SmokeProbe, run: &SmokeRun) -> Option<Finding> {
    let api = run.driver_cuda()?;
    let nvml = snap.nvml_system()?.cuda_driver_version.get()?.clone();
    let lib = library_source(p, run);
    if api == nvml || lib.contains("/compat/") || is_forward_compat(snap) {
        return None;
    }
    Some(
        Finding::new(
            codes::GD054,
            Severity::Warning,
            format!("libcuda speaks CUDA {api} but the driver (NVML) says CUDA {nvml}"),
        )
        .detail("cuDriverGetVersion and nvmlSystemGetCudaDriverVersion come from the same driver release, so they agree on a consistent install. Different answers mean the libcuda loaded belongs to another driver than libnvidia-ml: a leftover library on LD_LIBRARY_PATH or in /usr/local/lib, or a container image that ships its own.")
        .evidence(Subject::Smoke, format!("cuDriverGetVersion = {api}"), lib.clone())
        .evidence(Subject::Nvml, format!("CUDA {nvml}"), "NVML")
        .fix_cmd("See which libcuda files exist and remove the one that does not match the driver", crate::sh!("ls -l {} $(ldconfig -p | awk '/libcuda.so.1/{{print $NF}}')", lib)),
    )
}

/// The device of the latest Xid the kernel logged in this boot, as sysfs names it.
fn xid_device(snap: &Snapshot) -> Option<String> {
    use crate::facts::kernel_log::EventKind;
    let scan = snap.kernel_log.as_ref()?.scan.get()?;
    scan.groups
        .iter()
        .filter(|g| g.kind == EventKind::Xid && g.this_boot != Some(false))
        .max_by_key(|g| g.last_record)
        .and_then(|g| g.device.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn load_failed(s: &mut Snapshot, lib: &str, code: &str) {
        let p = smoke_probe(s);
        p.library = lib.into();
        p.result = SmokeResult::LoadFailed {
            code: code.into(),
            message: format!("{lib}: cannot open shared object file"),
        };
    }

    /// A smoke test asked for and not run says what would let it run where the user is.
    #[test]
    fn a_smoke_test_that_did_not_start_is_fixed_where_the_user_is() {
        let fix_of = |s: &Snapshot| {
            let f = only(run(s), codes::GD053, Severity::Error);
            f.fix[0].text.clone()
        };
        let asked = |s: &mut Snapshot| smoke_probe(s).settings.requested = true;

        let mut s = no_gpu();
        asked(&mut s);
        assert!(
            fix_of(&s).contains("a machine with an NVIDIA GPU"),
            "{}",
            fix_of(&s)
        );
        assert!(!fix_of(&s).contains("--root"));

        in_container(&mut s, "docker");
        assert!(fix_of(&s).contains("--gpus all"), "{}", fix_of(&s));

        let mut s = no_gpu();
        asked(&mut s);
        s.root = Some("/srv/tree".into());
        assert!(fix_of(&s).contains("without --root"), "{}", fix_of(&s));

        // GPUs on the bus, no driver loaded.
        let mut s = healthy();
        unload_nvidia(&mut s);
        asked(&mut s);
        smoke_probe(&mut s).result = SmokeResult::NotRun {
            reason: "the NVIDIA kernel module is not loaded".into(),
        };
        assert!(
            fix_of(&s).contains("Load the NVIDIA kernel driver"),
            "{}",
            fix_of(&s)
        );
    }

    #[test]
    fn a_missing_libcuda_in_a_container_is_the_container_rules_fact() {
        // Given no GPU: GD062.
        let mut s = healthy();
        in_container(&mut s, "docker");
        nodes_mut(&mut s).nodes.clear();
        load_failed(
            &mut s,
            crate::facts::smoke::DEFAULT_LIB,
            "library_not_found",
        );
        assert_clean(run(&s.clone()));
        // A libcuda that is there but broken is still this rule's, even there.
        load_failed(
            &mut s,
            crate::facts::smoke::DEFAULT_LIB,
            "library_unloadable",
        );
        only(run(&s), codes::GD053, Severity::Error);
        // Given GPUs but no `compute`: GD064.
        let mut s = healthy();
        in_container(&mut s, "docker");
        set_env(&mut s, "NVIDIA_DRIVER_CAPABILITIES", "utility");
        libs_mut(&mut s)
            .libraries
            .retain(|l| l.soname != "libcuda.so.1");
        load_failed(
            &mut s,
            crate::facts::smoke::DEFAULT_LIB,
            "library_not_found",
        );
        assert_clean(run(&s));
    }

    fn init_error(s: &mut Snapshot, code: i32, name: &str) {
        let run = smoke_run_mut(s);
        run.init_error = Some(cuda_error("cuInit", code, name));
        run.device_count = None;
        run.devices.clear();
    }

    #[test]
    fn healthy_smoke_test_started_cuda() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn libcuda_missing_is_an_error_on_a_gpu_host_and_a_warning_elsewhere() {
        let mut s = healthy();
        load_failed(
            &mut s,
            crate::facts::smoke::DEFAULT_LIB,
            "library_not_found",
        );
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert!(
            f.title.contains("libcuda.so.1 is not on the loader path"),
            "{}",
            f.title
        );
        assert!(
            f.fix[0]
                .text
                .starts_with("Install the driver's CUDA library"),
            "{:?}",
            f.fix
        );
        let mut s = no_gpu();
        load_failed(
            &mut s,
            crate::facts::smoke::DEFAULT_LIB,
            "library_not_found",
        );
        only(run(&s), codes::GD053, Severity::Warning);
    }

    #[test]
    fn a_cuda_lib_that_is_missing_or_unusable_is_an_error() {
        let mut s = no_gpu();
        load_failed(&mut s, "/opt/fake/libcuda.so.1", "library_not_found");
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert!(
            f.title.contains("/opt/fake/libcuda.so.1 does not exist"),
            "{}",
            f.title
        );
        load_failed(&mut s, "/opt/fake/libcuda.so.1", "symbol_missing");
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert!(
            f.title.contains("is not a usable CUDA driver library"),
            "{}",
            f.title
        );
    }

    #[test]
    fn no_device_without_the_module_says_load_it() {
        let mut s = healthy();
        unload_nvidia(&mut s);
        init_error(&mut s, 100, "CUDA_ERROR_NO_DEVICE");
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert!(
            f.title.starts_with("cuInit failed: CUDA_ERROR_NO_DEVICE"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo modprobe nvidia");
    }

    #[test]
    fn no_device_with_every_gpu_hidden_says_unset() {
        let mut s = healthy();
        set_env(&mut s, "CUDA_VISIBLE_DEVICES", "-1");
        init_error(&mut s, 100, "CUDA_ERROR_NO_DEVICE");
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert_eq!(first_cmd(&f), "unset CUDA_VISIBLE_DEVICES");
        // An unknown first UUID hides everything too.
        let mut s = healthy();
        set_env(&mut s, "CUDA_VISIBLE_DEVICES", "GPU-deadbeef");
        init_error(&mut s, 100, "CUDA_ERROR_NO_DEVICE");
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert_eq!(first_cmd(&f), "unset CUDA_VISIBLE_DEVICES");
    }

    #[test]
    fn unknown_error_points_at_uvm_or_an_xid() {
        let mut s = healthy();
        remove_module(&mut s, "nvidia_uvm");
        init_error(&mut s, 999, "CUDA_ERROR_UNKNOWN");
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert_eq!(
            first_cmd(&f),
            "sudo modprobe nvidia_uvm && sudo nvidia-modprobe -u -c=0"
        );
        let mut s = healthy();
        init_error(&mut s, 999, "CUDA_ERROR_UNKNOWN");
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert_eq!(first_cmd(&f), "sudo dmesg | grep -i xid");
    }

    #[test]
    fn a_count_error_is_gd053() {
        let mut s = healthy();
        let run_ = smoke_run_mut(&mut s);
        run_.count_error = Some(cuda_error("cuDeviceGetCount", 999, "CUDA_ERROR_UNKNOWN"));
        run_.device_count = None;
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert!(
            f.title.starts_with("CUDA could not count the GPUs"),
            "{}",
            f.title
        );
    }

    #[test]
    fn zero_devices_is_an_error_and_disagrees_with_nvml() {
        let mut s = healthy();
        smoke_run_mut(&mut s).device_count = Some(0);
        let f = findings(run(&s));
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(one_of(&f, codes::GD053, Severity::Error)
            .title
            .contains("sees no GPU"));
        one_of(&f, codes::GD054, Severity::Error);
    }

    #[test]
    fn fewer_cuda_devices_than_nvml_is_an_error_unless_hidden_or_mig() {
        let mut s = healthy();
        smoke_run_mut(&mut s).device_count = Some(1);
        let f = only(run(&s), codes::GD054, Severity::Error);
        assert!(
            f.title.contains("CUDA sees 1 GPU(s) but NVML sees 2"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "sudo dmesg | grep -i -E 'xid|nvrm'");
        smoke_run_mut(&mut s).cuda_visible_devices = Some("0".into());
        assert_clean(run(&s));
        let mut s = healthy();
        smoke_run_mut(&mut s).device_count = Some(1);
        nvml_gpu(&mut s, 0).mig.enabled = crate::facts::nvml::Field::Value(true);
        assert_clean(run(&s));
    }

    #[test]
    fn an_impossible_count_is_an_error() {
        let mut s = healthy();
        smoke_run_mut(&mut s).device_count = Some(500);
        let f = only(run(&s), codes::GD054, Severity::Error);
        assert!(f.title.contains("impossible 500"), "{}", f.title);
    }

    #[test]
    fn libcuda_of_another_driver_than_nvml_is_a_warning() {
        let mut s = healthy();
        smoke_run_mut(&mut s).driver_version = Some(12020);
        let f = only(run(&s), codes::GD054, Severity::Warning);
        assert!(
            f.title
                .contains("libcuda speaks CUDA 12.2 but the driver (NVML) says CUDA 12.4"),
            "{}",
            f.title
        );
        smoke_run_mut(&mut s).loaded_from = Some("/usr/local/cuda-12.2/compat/libcuda.so.1".into());
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_when_the_smoke_test_did_not_run() {
        let mut s = healthy();
        s.smoke = None;
        s.probes.get_mut("smoke").unwrap().detail = Some("--no-smoke".into());
        assert_eq!(assert_na(run(&s)), "--no-smoke");
        assert_na(run(&no_gpu()));
    }

    #[test]
    fn unsupported_forward_compat_names_the_compat_libcuda() {
        let mut s = healthy();
        init_error(&mut s, 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
        smoke_run_mut(&mut s).loaded_from = Some("/usr/local/cuda-12.8/compat/libcuda.so.1".into());
        let f = only(run(&s), codes::GD053, Severity::Error);
        assert!(
            f.title
                .contains("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
            "{}",
            f.title
        );
        assert!(evidence_mentions(&f, "is a forward-compatibility libcuda"));
    }
}
