//! GD063: an image's `NVIDIA_REQUIRE_*` conditions against this host's driver. The NVIDIA
//! container runtime checks them before it starts the container and refuses with
//! "unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an
//! earlier cuda container" (the language: src/compat/require_cuda.rs). Judged in a container
//! (the next start with the NVIDIA runtime) and for `check --image`.

use super::{Outcome, Rule};
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
    codes: &["GD063"],
    views: &[],
    checks: "the image's NVIDIA_REQUIRE_* conditions hold for this host's driver",
    run,
};

/// Each condition the runtime checks: (variable, value). NVIDIA_REQUIRE_CUDA, or `cuda>=X.Y`
/// from CUDA_VERSION when an older CUDA image has no NVIDIA_REQUIRE_CUDA.
fn requirements(snap: &Snapshot) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = snap
        .environment
        .iter()
        .flat_map(|e| e.variables.iter())
        .filter(|v| v.name.starts_with("NVIDIA_REQUIRE_") && !v.value.trim().is_empty())
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

fn run(snap: &Snapshot) -> Outcome {
    if !snap.judges_container_start() {
        return Outcome::NotApplicable("not in a container or an image".into());
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
    let archs: Vec<String> = snap
        .known_gpus()
        .iter()
        .map(|g| format!("{}.{}", g.cc.major, g.cc.minor))
        .collect();
    let mut findings = Vec::new();
    for (name, text) in reqs {
        let req = match require_cuda::parse(&text) {
            Ok(r) => r,
            Err(e) => {
                if !disabled {
                    findings.push(
                        Finding::new("GD063", Severity::Error, format!("{name} is not a condition the NVIDIA runtime can read"))
                            .detail(format!("The NVIDIA container runtime parses {name} before it starts the container and stops with \"invalid expression\" when it cannot: {e}."))
                            .evidence(Subject::env(&name), format!("{name}={text}"), "environment")
                            .fix_text(format!("Fix or remove {name} in the image (or override it with -e {name}=...)")),
                    );
                }
                continue;
            }
        };
        // Every GPU must satisfy it; with none known, the driver alone decides.
        let hosts: Vec<Host> = if archs.is_empty() {
            vec![host(&driver, cuda.clone(), None)]
        } else {
            archs
                .iter()
                .map(|a| host(&driver, cuda.clone(), Some(a.clone())))
                .collect()
        };
        let failed = hosts
            .iter()
            .find_map(|h| match require_cuda::evaluate(&req, h) {
                Verdict::Unsatisfied(f) => Some(f),
                _ => None,
            });
        if let Some(failed) = failed {
            findings.push(unsatisfied(
                snap,
                &name,
                &req,
                &driver,
                cuda.as_deref(),
                disabled,
                &failed,
            ));
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

fn unsatisfied(
    snap: &Snapshot,
    name: &str,
    req: &Requirement,
    driver: &DriverFact,
    cuda: Option<&str>,
    disabled: bool,
    failed: &[String],
) -> Finding {
    let first = req.first_alternative();
    let wanted = req.cuda_minimum().and_then(CudaVersion::parse);
    let have = cuda.unwrap_or("unknown");
    let message = if first.starts_with("cuda>=") {
        format!("unsatisfied condition: {first}, please update your driver to a newer version, or use an earlier cuda container")
    } else {
        format!("unsatisfied condition: {first}")
    };
    let minor_compat = wanted.map(|w| driver_verdict_on(w, &driver.version, driver.os()));
    let mut f = if disabled {
        let works = matches!(minor_compat, Some(DriverVerdict::MinorVersionCompat { .. }));
        let (severity, what) = if works {
            (Severity::Warning, "the image's CUDA runs on this driver only through minor-version compatibility: PTX newer than the driver cannot be JIT-compiled (error 222) and calls that need a newer driver fail (error 36)")
        } else {
            (Severity::Error, "the image's CUDA cannot initialise on this driver: cudaErrorInsufficientDriver (35), \"CUDA driver version is insufficient for CUDA runtime version\"")
        };
        Finding::new("GD063", severity, format!("NVIDIA_DISABLE_REQUIRE skips the runtime's check, and this driver (CUDA {have}) does not meet {first}"))
            .detail(format!("The NVIDIA runtime would refuse this container ({message}); NVIDIA_DISABLE_REQUIRE turns that check off, so the container starts, but {what}."))
    } else {
        Finding::new("GD063", Severity::Error, format!("The NVIDIA runtime will refuse to start this image here: {name} needs {first}, the driver gives CUDA {have}"))
            .detail(format!("Before it starts a container, the NVIDIA container runtime checks the image's {name} against the host's driver. No alternative holds here, so `docker run --gpus` (or a Kubernetes pod) fails with: {message}."))
    };
    f = f
        .evidence(
            Subject::env(name),
            format!("{name}={}", short(&req.text)),
            "environment",
        )
        .evidence(
            Subject::DriverVersion,
            format!("driver {} (CUDA {have})", driver.version.as_str()),
            driver.source.clone(),
        );
    for c in failed.iter().take(3) {
        f = f.context(format!("fails: {c}"), "the runtime's condition language");
    }
    if let Some(w) = wanted {
        if let Some(row) = toolkit_min_driver(w) {
            f = f.fix_text(format!("On the host: {}", driver.upgrade_to(row.min_linux)));
        }
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
                f = f.fix_cmd("Or skip the check: the image's CUDA runs on this driver through minor-version compatibility (no PTX JIT of newer code, no APIs newer than the driver)", "docker run --gpus all -e NVIDIA_DISABLE_REQUIRE=1 IMAGE");
            }
            _ => {
                f = f.fix_text("NVIDIA_DISABLE_REQUIRE=1 would not help: minor-version compatibility does not cover this pair, so CUDA would fail at initialisation instead (error 35); only forward compatibility (a data-center GPU and the image's cuda-compat package, within its support matrix) would");
            }
        }
    }
    let _ = snap;
    f
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
    use crate::rules::testing::*;

    fn container_with(require: &str, driver: &str) -> Snapshot {
        let mut s = healthy();
        in_container(&mut s, "docker");
        set_driver(&mut s, driver);
        nvml_sys(&mut s).cuda_driver_version = crate::probes::nvml::Field::NotSupported;
        set_env(&mut s, "NVIDIA_REQUIRE_CUDA", require);
        s
    }

    #[test]
    fn a_cuda_12_8_image_on_a_545_driver_is_refused_with_the_runtimes_words() {
        let s = container_with(PUBLISHED[1].1, "545.29.06");
        let f = only(run(&s), "GD063", Severity::Error);
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
        let f = only(run(&s), "GD063", Severity::Error);
        assert!(fixes_mention(&f, "would not help"));
        let mut s = s;
        set_env(&mut s, "NVIDIA_DISABLE_REQUIRE", "true");
        let f = only(run(&s), "GD063", Severity::Error);
        assert!(f.detail.contains("insufficient"), "{}", f.detail);
        let mut s = container_with(PUBLISHED[1].1, "545.29.06");
        set_env(&mut s, "NVIDIA_DISABLE_REQUIRE", "1");
        only(run(&s), "GD063", Severity::Warning);
    }

    #[test]
    fn cuda_version_alone_is_required_like_the_runtime_does() {
        let mut s = healthy();
        in_container(&mut s, "docker");
        set_driver(&mut s, "535.104.05");
        nvml_sys(&mut s).cuda_driver_version = crate::probes::nvml::Field::NotSupported;
        set_env(&mut s, "CUDA_VERSION", "12.4.1");
        let f = only(run(&s), "GD063", Severity::Error);
        assert!(f.title.contains("cuda>=12.4"), "{}", f.title);
    }

    #[test]
    fn a_malformed_condition_stops_the_container() {
        let s = container_with("cuda>=twelve", "570.133.20");
        let f = only(run(&s), "GD063", Severity::Error);
        assert!(f.detail.contains("invalid expression"));
    }

    #[test]
    fn not_applicable_on_a_host() {
        let mut s = healthy();
        set_env(&mut s, "NVIDIA_REQUIRE_CUDA", "cuda>=99.0");
        assert_na(run(&s));
    }
}
