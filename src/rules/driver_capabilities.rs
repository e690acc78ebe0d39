//! GD064: NVIDIA_DRIVER_CAPABILITIES decides which host driver files the NVIDIA runtime
//! mounts: `compute` brings libcuda (CUDA), `utility` brings libnvidia-ml and nvidia-smi.
//! Unset or empty means `utility,compute` (NVIDIA Container Toolkit user guide, "Driver
//! capabilities"). Without `compute` every CUDA program fails to find a driver (error); without
//! `utility` nvidia-smi and NVML-based tools are missing (warning).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::nvml::NvmlResult;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "driver_capabilities",
    codes: &[codes::GD064],
    views: &[],
    checks:
        "NVIDIA_DRIVER_CAPABILITIES lets the runtime mount libcuda (compute) and NVML (utility)",
    judges: &[],
    run,
};

const KNOWN: &[&str] = &[
    "compute", "compat32", "graphics", "utility", "video", "display", "ngx", "all",
];

/// The capabilities the runtime grants: None when NVIDIA_DRIVER_CAPABILITIES is unset or empty.
pub fn capabilities(snap: &Snapshot) -> Option<Vec<String>> {
    let v = snap.env_value("NVIDIA_DRIVER_CAPABILITIES")?.trim();
    if v.is_empty() {
        return None;
    }
    Some(
        v.split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty())
            .collect(),
    )
}

/// Whether the runtime mounts the libraries of `cap` ("compute", "utility").
pub fn grants(snap: &Snapshot, cap: &str) -> bool {
    match capabilities(snap) {
        None => true,
        Some(caps) => caps.iter().any(|c| c == cap || c == "all"),
    }
}

/// In a container with GPUs: `compute` left out and no libcuda on the loader path.
pub fn compute_missing(snap: &Snapshot) -> bool {
    snap.container_kind().is_some()
        && !snap.is_wsl()
        && !snap.container_without_gpus()
        && !grants(snap, "compute")
        && libcuda_missing(snap)
}

fn libcuda_missing(snap: &Snapshot) -> bool {
    snap.libraries.as_ref().is_some_and(|l| {
        l.by_soname("libcuda.so.1")
            .and_then(|x| x.loaded())
            .is_none()
    })
}

fn run(snap: &Snapshot) -> Outcome {
    let image = snap.is_image();
    if !image && (snap.container_kind().is_none() || snap.is_wsl()) {
        return Outcome::NotApplicable("not in a container or an image".into());
    }
    if !image && snap.container_without_gpus() {
        return Outcome::NotApplicable("the container has no GPU (GD062)".into());
    }
    let Some(caps) = capabilities(snap) else {
        return Outcome::Checked(vec![]);
    };
    let value = caps.join(",");
    let evidence = format!("NVIDIA_DRIVER_CAPABILITIES={value}");
    let mut out = Vec::new();
    let unknown: Vec<&String> = caps
        .iter()
        .filter(|c| !KNOWN.contains(&c.as_str()))
        .collect();
    if !grants(snap, "compute") && (image || libcuda_missing(snap)) {
        let f = Finding::new(codes::GD064, Severity::Error, "NVIDIA_DRIVER_CAPABILITIES leaves out compute: the runtime mounts no libcuda, so CUDA cannot start")
            .detail("The NVIDIA runtime mounts only the driver libraries of the capabilities asked for. Without `compute` there is no libcuda.so.1 in the container: CUDA programs fail with \"found no NVIDIA driver on your system\" (error 35/100) and torch.cuda.is_available() is False, although the GPU's device nodes are there.")
            .evidence(Subject::env("NVIDIA_DRIVER_CAPABILITIES"), evidence.clone(), "environment");
        out.push(super::container_gpus::with_env_fix(
            f,
            snap,
            "NVIDIA_DRIVER_CAPABILITIES",
            "compute,utility",
            "Start the container with the compute capability (utility for nvidia-smi); unset also means compute,utility",
        ));
    }
    let nvml_missing = image
        || snap.nvml.as_ref().is_some_and(|n| {
            matches!(&n.result, NvmlResult::InitFailed { code, .. } if code == "library_not_found")
        });
    if !grants(snap, "utility") && nvml_missing {
        let f = Finding::new(codes::GD064, Severity::Warning, "NVIDIA_DRIVER_CAPABILITIES leaves out utility: no nvidia-smi and no NVML in the container")
            .detail("Without `utility` the runtime mounts neither libnvidia-ml.so.1 nor nvidia-smi. CUDA still works, but nvidia-smi, NVML-based monitoring (DCGM exporters, pynvml, torch.cuda.device_memory_used) and gpudoctor's own GPU checks fail with \"libnvidia-ml.so.1: cannot open shared object file\".")
            .evidence(Subject::env("NVIDIA_DRIVER_CAPABILITIES"), evidence.clone(), "environment");
        out.push(super::container_gpus::with_env_fix(
            f,
            snap,
            "NVIDIA_DRIVER_CAPABILITIES",
            "compute,utility",
            "Add utility to the capabilities",
        ));
    }
    if !unknown.is_empty() && out.is_empty() {
        let names: Vec<&str> = unknown.iter().map(|s| s.as_str()).collect();
        out.push(
            Finding::new(codes::GD064, Severity::Warning, format!("NVIDIA_DRIVER_CAPABILITIES names capabilities the runtime does not know: {}", names.join(", ")))
                .detail(format!("Known capabilities are {}. The runtime ignores the others, so what they were meant to bring is not mounted.", KNOWN.join(", ")))
                .evidence(Subject::env("NVIDIA_DRIVER_CAPABILITIES"), evidence, "environment")
                .fix_text("Spell the capabilities as the NVIDIA Container Toolkit does, e.g. compute,utility"),
        );
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn container() -> Snapshot {
        let mut s = healthy();
        in_container(&mut s, "docker");
        s
    }

    #[test]
    fn unset_means_compute_and_utility() {
        assert_clean(run(&container()));
        let mut s = container();
        set_env(&mut s, "NVIDIA_DRIVER_CAPABILITIES", "all");
        assert_clean(run(&s));
    }

    #[test]
    fn without_compute_and_without_libcuda_is_an_error() {
        let mut s = container();
        set_env(&mut s, "NVIDIA_DRIVER_CAPABILITIES", "utility");
        // libcuda present (healthy): the capability is not what broke anything.
        assert_clean(run(&s.clone()));
        libs_mut(&mut s)
            .libraries
            .retain(|l| l.soname != "libcuda.so.1");
        let f = only(run(&s), codes::GD064, Severity::Error);
        assert!(first_cmd(&f).contains("NVIDIA_DRIVER_CAPABILITIES=compute,utility"));
    }

    #[test]
    fn without_utility_and_without_nvml_is_a_warning() {
        let mut s = container();
        set_env(&mut s, "NVIDIA_DRIVER_CAPABILITIES", "compute");
        set_nvml(
            &mut s,
            NvmlResult::InitFailed {
                code: "library_not_found".into(),
                message: "libnvidia-ml.so.1: cannot open shared object file".into(),
            },
        );
        let f = only(run(&s), codes::GD064, Severity::Warning);
        assert!(f.title.contains("utility"));
    }

    #[test]
    fn misspelt_capabilities_are_named() {
        let mut s = container();
        set_env(&mut s, "NVIDIA_DRIVER_CAPABILITIES", "compute,utilities");
        let f = only(run(&s), codes::GD064, Severity::Warning);
        assert!(f.title.contains("utilities"), "{}", f.title);
    }

    #[test]
    fn not_applicable_on_a_host() {
        let mut s = healthy();
        set_env(&mut s, "NVIDIA_DRIVER_CAPABILITIES", "utility");
        assert_na(run(&s));
    }
}
