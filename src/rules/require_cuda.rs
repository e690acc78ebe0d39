//! GD063: an image's `NVIDIA_REQUIRE_*` conditions against this host's driver. The NVIDIA
//! container runtime checks them before it starts the container and refuses with
//! "unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an
//! earlier cuda container" (the language: src/compat/require_cuda.rs). Judged in a container
//! (the next start with the NVIDIA runtime), for `check --image`, and in a container that
//! runs with its GPUs although the condition fails: the check was skipped
//! (NVIDIA_DISABLE_REQUIRE, CDI injection, another runtime), rated by what the image's CUDA
//! does on this driver.

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::driver::{
    driver_verdict_on, max_cuda_for_driver, toolkit_min_driver, DriverVerdict,
};
use crate::compat::require_cuda::{self, Host, Requirement, Verdict};
use crate::compat::CudaVersion;
use crate::findings::{Finding, Severity};
use crate::snapshot::{DriverFact, Snapshot};
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "require_cuda",
    codes: &[codes::GD063],
    views: &[],
    checks: "the image's NVIDIA_REQUIRE_* conditions hold for this host's driver",
    judges: &[],
    run,
};

/// Each condition the runtime checks: (variable, value). NVIDIA_REQUIRE_CUDA, or `cuda>=X.Y`
/// from CUDA_VERSION when an older CUDA image has no NVIDIA_REQUIRE_CUDA. NVIDIA_REQUIRE_JETPACK*
/// are skipped, as the runtime skips them (nvidia-container-toolkit,
/// internal/config/image/cuda_image.go).
fn requirements(snap: &Snapshot) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = snap
        .environment
        .iter()
        .flat_map(|e| e.variables.iter())
        .filter(|v| {
            v.name.starts_with("NVIDIA_REQUIRE_")
                && !v.name.starts_with("NVIDIA_REQUIRE_JETPACK")
                && !v.value.trim().is_empty()
        })
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect();
    if !out.iter().any(|(n, _)| n == "NVIDIA_REQUIRE_CUDA") {
        if let Some(cuda) = snap.env_value("CUDA_VERSION").and_then(CudaVersion::parse) {
            out.push((
                "CUDA_VERSION".into(),
                format!("cuda>={}.{}", cuda.major, cuda.minor),
            ));
        }
    }
    out
}

/// Why the runtime's check does not apply here, if it does not.
fn not_checked(snap: &Snapshot) -> Option<String> {
    if snap.is_image() {
        let cdi_mode = snap
            .container_host
            .as_ref()
            .and_then(|h| h.toolkit.config.get())
            .and_then(|c| c.mode.as_deref())
            == Some("cdi");
        return cdi_mode.then(|| "the host's NVIDIA runtime is in CDI mode, which does not check NVIDIA_REQUIRE_* (GD017 and GD042 judge the image's CUDA)".into());
    }
    if snap.container_kind().is_none() || snap.is_wsl() {
        return Some("not in a container or an image".into());
    }
    if snap.container_kind() == Some("apptainer") {
        return Some("Apptainer does not check NVIDIA_REQUIRE_*".into());
    }
    None
}

/// A container that is running with its GPUs: if its condition fails, the runtime's check
/// was not made.
fn running_with_gpus(snap: &Snapshot) -> bool {
    !snap.is_image() && !snap.container_without_gpus()
}

fn run(snap: &Snapshot) -> Outcome {
    if let Some(why) = not_checked(snap) {
        return Outcome::NotApplicable(why);
    }
    let reqs = requirements(snap);
    if reqs.is_empty() {
        return Outcome::NotApplicable("no NVIDIA_REQUIRE_* or CUDA_VERSION is set".into());
    }
    let Some(driver) = snap.driver_version() else {
        return Outcome::NotApplicable("the host's driver version is unknown".into());
    };
    let cuda = snap
        .nvml_system()
        .and_then(|s| s.cuda_driver_version.get().cloned())
        .or_else(|| {
            max_cuda_for_driver(&driver.version)
                .map(|m| format!("{}.{}", m.cuda.major, m.cuda.minor))
        });
    let disabled = snap
        .env_value("NVIDIA_DISABLE_REQUIRE")
        .and_then(require_cuda::parse_bool)
        .unwrap_or(false);
    let running = running_with_gpus(snap);
    let archs: Vec<String> = snap
        .known_gpus()
        .iter()
        .map(|g| format!("{}.{}", g.cc.major, g.cc.minor))
        .collect();
    // Every GPU must satisfy it; with none known, the driver alone decides.
    let hosts: Vec<Host> = if archs.is_empty() {
        vec![host(&driver, cuda.clone(), None)]
    } else {
        archs
            .iter()
            .map(|a| host(&driver, cuda.clone(), Some(a.clone())))
            .collect()
    };
    let mut findings = Vec::new();
    for (name, text) in reqs {
        let mut failed = None;
        for h in &hosts {
            match require_cuda::evaluate(&text, h) {
                Verdict::Invalid(e) => {
                    if !disabled && !running {
                        findings.push(
                            Finding::new(codes::GD063, Severity::Error, format!("{name} is not a condition the NVIDIA runtime can read"))
                                .detail(format!("The NVIDIA container runtime evaluates {name} before it starts the container and stops with \"invalid expression\" when it reaches one it cannot read: {e}."))
                                .evidence(Subject::env(&name), format!("{name}={}", short(&text)), "environment")
                                .fix_text(format!("Fix or remove {name} in the image, or override it when starting the container")),
                        );
                    }
                    failed = None;
                    break;
                }
                Verdict::Unsatisfied(f) => {
                    failed = Some(f);
                    break;
                }
                _ => {}
            }
        }
        if let Some(failed) = failed {
            let req = require_cuda::parse(&text).unwrap_or(Requirement {
                text: text.clone(),
                alternatives: Vec::new(),
            });
            if let Some(f) = unsatisfied(
                snap,
                &name,
                &req,
                &driver,
                cuda.as_deref(),
                Skipped::of(disabled, running),
                &failed,
            ) {
                findings.push(f);
            }
        }
    }
    Outcome::Checked(findings)
}

fn host(driver: &DriverFact, cuda: Option<String>, arch: Option<String>) -> Host {
    Host {
        cuda,
        driver: Some(driver.version.as_str().to_string()),
        arch,
        // NVML's brand is not probed; conditions on it stay undecided, never failed.
        brand: None,
    }
}

/// Why the runtime's check did not stop the container, if it did not.
#[derive(Clone, Copy, PartialEq)]
enum Skipped {
    /// It will stop the next start with GPUs.
    No,
    /// NVIDIA_DISABLE_REQUIRE turns it off.
    Disabled,
    /// The container runs with its GPUs: started without the check.
    Bypassed,
}

impl Skipped {
    fn of(disabled: bool, running: bool) -> Skipped {
        match (disabled, running) {
            (true, _) => Skipped::Disabled,
            (false, true) => Skipped::Bypassed,
            (false, false) => Skipped::No,
        }
    }
}

fn unsatisfied(
    snap: &Snapshot,
    name: &str,
    req: &Requirement,
    driver: &DriverFact,
    cuda: Option<&str>,
    skipped: Skipped,
    failed: &[String],
) -> Option<Finding> {
    let first = req.first_alternative();
    let wanted = first
        .split(',')
        .find_map(|c| c.strip_prefix("cuda>="))
        .and_then(CudaVersion::parse);
    let have = match cuda {
        Some(c) => format!("driver {} (CUDA {c})", driver.version.as_str()),
        None => format!("driver {}", driver.version.as_str()),
    };
    let message = if first.starts_with("cuda>=") {
        format!("unsatisfied condition: {first}, please update your driver to a newer version, or use an earlier cuda container")
    } else {
        format!("unsatisfied condition: {first}")
    };
    let minor_compat = wanted.map(|w| driver_verdict_on(w, &driver.version, driver.os()));
    let disabled = skipped != Skipped::No;
    let mut f = if disabled {
        // Without the check only the image's CUDA against the driver matters; other
        // conditions (driver, arch, brand) have no known consequence once skipped.
        wanted?;
        let works = matches!(minor_compat, Some(DriverVerdict::MinorVersionCompat { .. }));
        let (severity, what) = if works {
            (Severity::Warning, "the image's CUDA runs on this driver only through minor-version compatibility: PTX newer than the driver cannot be JIT-compiled (error 222) and calls that need a newer driver fail (error 36)")
        } else {
            (Severity::Error, "the image's CUDA cannot initialise on this driver: cudaErrorInsufficientDriver (35), \"CUDA driver version is insufficient for CUDA runtime version\"")
        };
        if skipped == Skipped::Disabled {
            Finding::new(codes::GD063, severity, format!("NVIDIA_DISABLE_REQUIRE skips the runtime's check, and {have} does not meet {first}"))
                .detail(format!("The NVIDIA runtime would refuse this container ({message}); NVIDIA_DISABLE_REQUIRE turns that check off, so the container starts, but {what}."))
        } else {
            Finding::new(codes::GD063, severity, format!("This container runs although {have} does not meet its {name} ({first}): the runtime's check was not made"))
                .detail(format!("The NVIDIA runtime refuses to start a container whose {name} the host's driver does not meet ({message}). This one runs with its GPUs, so it was started without that check — CDI injection (`--device nvidia.com/gpu=…`, or the runtime in CDI mode), another runtime, or a restart that bypassed the hook — and {what}."))
        }
    } else {
        Finding::new(codes::GD063, Severity::Error, format!("The NVIDIA runtime will refuse to start this image here: {name} needs {first}, and {have} does not meet it"))
            .detail(format!("Before it starts a container with GPUs, the NVIDIA container runtime's hook (nvidia-container-cli) checks the image's {name} against the host's driver and GPUs. No alternative holds here, so `docker run --gpus` (or a Kubernetes pod under NVIDIA's runtime) fails with: {message}. CDI injection and Apptainer do not check it; the image's CUDA then meets the driver at initialisation instead."))
    };
    f = f
        .evidence(
            Subject::env(name),
            format!("{name}={}", short(&req.text)),
            "environment",
        )
        .evidence(Subject::DriverVersion, have.clone(), driver.source.clone());
    for c in failed.iter().take(3) {
        f = f.context(format!("fails: {c}"), "the runtime's condition language");
    }
    let Some(w) = wanted else {
        return Some(f
            .fix_text(format!("Run it on a host whose driver and GPUs meet {first}"))
            .fix_text(format!("Or, if the image does not need it, override {name} when starting the container (an empty value turns the condition off)")));
    };
    if let Some(row) = toolkit_min_driver(w) {
        f = f.fix_text(format!("On the host: {}", driver.upgrade_to(row.min_linux)));
    }
    if let Some(mc) = max_cuda_for_driver(&driver.version) {
        f = f.fix_text(format!(
            "Use an image built for CUDA {}.{} or older (for NVIDIA's images, a nvidia/cuda:{}.{}.x tag)",
            mc.cuda.major, mc.cuda.minor, mc.cuda.major, mc.cuda.minor
        ));
    }
    if !disabled {
        match minor_compat {
            Some(DriverVerdict::MinorVersionCompat { .. }) => {
                f = super::container_gpus::with_env_fix(f, snap, "NVIDIA_DISABLE_REQUIRE", "1", "Or skip the check: the image's CUDA runs on this driver through minor-version compatibility (no PTX JIT of newer code, no APIs newer than the driver)");
            }
            _ => {
                f = f.fix_text("NVIDIA_DISABLE_REQUIRE=1 would not help: minor-version compatibility does not cover this pair, so CUDA would fail at initialisation instead (error 35); only forward compatibility (a data-center GPU and the image's cuda-compat package, within its support matrix) would");
            }
        }
    }
    Some(f)
}

fn short(text: &str) -> String {
    let first: Vec<&str> = text.split(' ').filter(|s| !s.is_empty()).collect();
    if first.len() <= 2 {
        text.to_string()
    } else {
        format!("{} … ({} alternatives)", first[0], first.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::require_cuda::PUBLISHED;
    use crate::testing::*;

    /// A container started without its GPUs on a host with `driver`: its next start with
    /// them is what the runtime checks.
    fn container_with(require: &str, driver: &str) -> Snapshot {
        let mut s = healthy();
        in_container(&mut s, "docker");
        nodes_mut(&mut s).nodes.clear();
        set_driver(&mut s, driver);
        nvml_sys(&mut s).cuda_driver_version = crate::facts::nvml::Field::NotSupported;
        set_env(&mut s, "NVIDIA_REQUIRE_CUDA", require);
        s
    }

    #[test]
    fn a_cuda_12_8_image_on_a_545_driver_is_refused_with_the_runtimes_words() {
        let s = container_with(PUBLISHED[1].1, "545.29.06");
        let f = only(run(&s), codes::GD063, Severity::Error);
        assert!(
            f.detail
                .contains("unsatisfied condition: cuda>=12.8, please update your driver"),
            "{}",
            f.detail
        );
        assert!(f.title.contains("CUDA 12.3"), "{}", f.title);
        assert!(
            fixes_mention(&f, "570.26") || fixes_mention(&f, "570."),
            "{:?}",
            f.fix
        );
        assert!(fixes_mention(&f, "nvidia/cuda:12.3.x"));
        // Same major: minor-version compatibility lets NVIDIA_DISABLE_REQUIRE work.
        assert!(f.fix.iter().any(|x| x.command.as_deref()
            == Some("docker run --gpus all -e NVIDIA_DISABLE_REQUIRE=1 IMAGE")));
    }

    #[test]
    fn a_new_enough_driver_is_clean_and_a_listed_branch_is_not_failed() {
        assert_clean(run(&container_with(PUBLISHED[1].1, "570.133.20")));
        // 535 is listed for every data-center brand, but the brand is not probed: undecided.
        assert_clean(run(&container_with(PUBLISHED[1].1, "535.183.01")));
    }

    #[test]
    fn a_cuda_13_image_on_a_cuda_12_driver_cannot_be_rescued_by_disabling_the_check() {
        let s = container_with(PUBLISHED[2].1, "550.54.15");
        let f = only(run(&s), codes::GD063, Severity::Error);
        assert!(fixes_mention(&f, "would not help"));
        let mut s = s;
        set_env(&mut s, "NVIDIA_DISABLE_REQUIRE", "true");
        let f = only(run(&s), codes::GD063, Severity::Error);
        assert!(f.detail.contains("insufficient"), "{}", f.detail);
        let mut s = container_with(PUBLISHED[1].1, "545.29.06");
        set_env(&mut s, "NVIDIA_DISABLE_REQUIRE", "1");
        only(run(&s), codes::GD063, Severity::Warning);
    }

    #[test]
    fn cuda_version_alone_is_required_like_the_runtime_does() {
        let mut s = healthy();
        in_container(&mut s, "docker");
        nodes_mut(&mut s).nodes.clear();
        set_driver(&mut s, "535.104.05");
        nvml_sys(&mut s).cuda_driver_version = crate::facts::nvml::Field::NotSupported;
        set_env(&mut s, "CUDA_VERSION", "12.4.1");
        let f = only(run(&s), codes::GD063, Severity::Error);
        assert!(f.title.contains("cuda>=12.4"), "{}", f.title);
    }

    #[test]
    fn a_malformed_condition_stops_the_container() {
        let s = container_with("cuda>=twelve", "570.133.20");
        let f = only(run(&s), codes::GD063, Severity::Error);
        assert!(f.detail.contains("invalid expression"));
    }

    #[test]
    fn jetpack_conditions_are_skipped_as_the_runtime_skips_them() {
        let mut s = container_with("cuda>=12.0", "570.133.20");
        set_env(&mut s, "NVIDIA_REQUIRE_JETPACK_HOST_MOUNTS", "csv-mounts");
        assert_clean(run(&s));
    }

    #[test]
    fn a_failed_driver_condition_is_worded_as_one() {
        let s = container_with("driver>=580", "570.133.20");
        let f = only(run(&s), codes::GD063, Severity::Error);
        assert!(
            f.title.contains("needs driver>=580, and driver 570.133.20"),
            "{}",
            f.title
        );
        assert!(!fixes_mention(&f, "nvidia/cuda:"), "{:?}", f.fix);
        assert!(fixes_mention(&f, "meet driver>=580"));
    }

    #[test]
    fn where_nothing_checks_it_there_is_no_verdict() {
        // A running container with its GPUs: it started, so the check was not made, and
        // what the image's CUDA does on this driver is the verdict.
        let mut s = healthy();
        in_container(&mut s, "docker");
        set_env(&mut s, "NVIDIA_REQUIRE_CUDA", "cuda>=99.0");
        let f = only(run(&s), codes::GD063, Severity::Error);
        assert!(f.title.contains("runs although"), "{}", f.title);
        let mut s = container_with("cuda>=99.0", "570.133.20");
        in_container(&mut s, "apptainer");
        assert!(assert_na(run(&s)).contains("Apptainer"));
    }

    #[test]
    fn an_image_is_judged_unless_the_host_runtime_is_in_cdi_mode() {
        let mut s = healthy();
        s.image = Some(image_info("amd64", true));
        set_driver(&mut s, "545.29.06");
        nvml_sys(&mut s).cuda_driver_version = crate::facts::nvml::Field::NotSupported;
        set_env(&mut s, "NVIDIA_REQUIRE_CUDA", PUBLISHED[1].1);
        let f = only(run(&s), codes::GD063, Severity::Error);
        // Not in a container: the fix names docker and the pod spec, not this container.
        assert!(f.fix.iter().any(|x| x.command.as_deref()
            == Some("docker run --gpus all -e NVIDIA_DISABLE_REQUIRE=1 IMAGE")));
        let mut host = container_host();
        host.toolkit.config = crate::fact::Fact::value(
            "/etc/nvidia-container-runtime/config.toml",
            crate::facts::container_host::ToolkitConfig {
                mode: Some("cdi".into()),
                ..Default::default()
            },
        );
        s.container_host = Some(host);
        assert!(assert_na(run(&s)).contains("CDI mode"));
    }

    #[test]
    fn not_applicable_on_a_host() {
        let mut s = healthy();
        set_env(&mut s, "NVIDIA_REQUIRE_CUDA", "cuda>=99.0");
        assert_na(run(&s));
    }
}
