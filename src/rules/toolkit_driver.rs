//! GD017: a CUDA toolkit (or the runtime the loader picks) newer than the driver supports.
//! Within a major family, minor-version compatibility lets it run with caveats (warning);
//! below the family minimum it fails with "CUDA driver version is insufficient for CUDA
//! runtime version" (error). Facts: src/compat/driver.rs (CUDA Toolkit Release Notes Tables 2
//! and 3; NVIDIA's minor-version compatibility guide).

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::driver::{driver_verdict_on, max_cuda_for_driver, DriverVerdict};
use crate::compat::{CudaVersion, DriverVersion};
use crate::findings::{Finding, Severity};
use crate::snapshot::{DriverFact, Snapshot};
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "toolkit_driver",
    codes: &[codes::GD017],
    views: &[super::View::Toolkit],
    checks:
        "every CUDA toolkit and the CUDA runtime on the loader path run on the installed driver",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(mut driver) = snap.driver_version() else {
        return Outcome::NotApplicable("no NVIDIA driver version known".into());
    };
    // A forward-compatibility libcuda is the CUDA driver programs get: judge against it
    // (whether it may be used at all is GD025's question).
    if let Some(c) = snap
        .libraries
        .as_ref()
        .and_then(|l| l.by_soname("libcuda.so.1"))
        .and_then(|l| l.loaded())
        .filter(|c| c.forward_compat && !c.stub)
    {
        if let Some(v) = c.version.as_deref().and_then(DriverVersion::parse) {
            driver = DriverFact {
                version: v,
                source: c.target.clone().unwrap_or_else(|| c.path.clone()),
                kernel: false,
                windows: false,
            };
        }
    }
    let Some(toolkits) = &snap.toolkits else {
        return Outcome::NotApplicable("the toolkits probe did not run".into());
    };
    let in_use = snap.toolkit_in_use().map(|t| t.root.clone());
    // What to compare: each toolkit, and the libcudart each soname resolves to.
    let mut subjects: Vec<(Subject, String, CudaVersion, String, bool)> = Vec::new();
    for t in &toolkits.installs {
        if let Some(v) = t.cuda {
            let used = in_use.as_deref() == Some(t.root.as_str()) || toolkits.installs.len() == 1;
            subjects.push((
                Subject::toolkit(&t.root),
                if t.nvcc.is_some() {
                    format!("CUDA toolkit {v} at {}", t.root)
                } else {
                    format!("CUDA runtime {v} in {}", t.root)
                },
                v,
                t.version.source.clone(),
                used,
            ));
        }
    }
    if let Some(libs) = &snap.libraries {
        for lib in libs.family("libcudart") {
            let Some(c) = lib.loaded() else { continue };
            let Some(v) = c.version.as_deref().and_then(CudaVersion::parse) else {
                continue;
            };
            if subjects.iter().any(|(_, _, sv, _, _)| *sv == v) {
                continue;
            }
            subjects.push((
                Subject::library(&lib.soname),
                format!(
                    "CUDA runtime {} ({})",
                    c.version.as_deref().unwrap_or_default(),
                    c.path
                ),
                v,
                c.version_source.clone().unwrap_or_else(|| c.path.clone()),
                true,
            ));
        }
    }
    let max = max_cuda_for_driver(&driver.version);
    let driver_line = match &max {
        Some(m) => format!(
            "driver {} supports CUDA {}{}",
            driver.version.as_str(),
            m.cuda,
            if m.newer_than_known { " or newer" } else { "" }
        ),
        None => format!("driver {}", driver.version.as_str()),
    };
    let mut findings = Vec::new();
    for (key, what, v, source, used) in subjects {
        match driver_verdict_on(v, &driver.version, driver.os()) {
            DriverVerdict::Supported | DriverVerdict::Unknown => {}
            DriverVerdict::MinorVersionCompat { needs } => findings.push(
                Finding::new(
                    codes::GD017,
                    Severity::Warning,
                    format!("{what} is newer than driver {} and runs only under minor-version compatibility", driver.version.as_str()),
                )
                .detail(format!("CUDA {v} was released with driver {needs}. The installed driver is older but in the same major family, so programs built with this toolkit run, with limits: PTX that needs a newer driver cannot be JIT-compiled (cudaErrorUnsupportedPtxVersion, 222: \"the provided PTX was compiled with an unsupported toolchain.\"), newer APIs return cudaErrorCallRequiresNewerDriver (36), and the kernels must be compiled for the GPU's architecture (SASS)."))
                .evidence(key.clone(), format!("CUDA {v}"), source.clone())
                .evidence(Subject::DriverVersion, driver_line.clone(), driver.source.clone())
                .fix_text(format!("{} for full support", driver.upgrade_to(needs)))
                .fix_text(format!("Or compile with a toolkit no newer than the driver's CUDA {}", max.as_ref().map_or("version".into(), |m| m.cuda.to_string()))),
            ),
            DriverVerdict::TooOld { needs, family_min } => {
                let severity = if used { Severity::Error } else { Severity::Warning };
                let mut f = Finding::new(
                    codes::GD017,
                    severity,
                    format!("{what} needs driver {needs} or newer; the installed driver {} is too old", driver.version.as_str()),
                )
                .detail(format!("Programs built with CUDA {v} fail on this driver with \"CUDA driver version is insufficient for CUDA runtime version\" (cudaErrorInsufficientDriver, 35); PyTorch reports \"The NVIDIA driver on your system is too old\" and torch.cuda.is_available() returns False.{}", match family_min {
                    Some(m) => format!(" Minor-version compatibility does not help: the whole CUDA {}.x family needs at least {m}.", v.major),
                    None => " CUDA 10 and older have no minor-version compatibility: each release needs its own driver.".to_string(),
                }))
                .evidence(key.clone(), format!("CUDA {v}"), source.clone())
                .evidence(Subject::DriverVersion, driver_line.clone(), driver.source.clone())
                .fix_text(driver.upgrade_to(needs));
                if let Some(m) = &max {
                    f = f.fix_text(format!("Or use a CUDA toolkit / PyTorch build for CUDA {} or older", m.cuda));
                }
                if !used {
                    f = f.fix_text("This toolkit is not the one builds use now; remove it if nothing needs it");
                }
                findings.push(f);
            }
        }
    }
    Outcome::Checked(findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn healthy_toolkit_runs_on_the_driver() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_newer_minor_in_the_family_is_a_warning() {
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0] = toolkit(TOOLKIT_ROOT, "12.8.61", true);
        let f = only(run(&s), codes::GD017, Severity::Warning);
        assert!(
            f.title.contains("minor-version compatibility"),
            "{}",
            f.title
        );
        assert!(
            f.fix[0].text.contains("Upgrade the NVIDIA driver"),
            "{:?}",
            f.fix
        );
    }

    #[test]
    fn a_driver_below_the_family_minimum_is_an_error_for_the_toolkit_in_use() {
        let mut s = healthy();
        set_driver(&mut s, "470.82.01");
        let f = only(run(&s), codes::GD017, Severity::Error);
        assert!(f.title.contains("too old"), "{}", f.title);
        assert!(
            f.fix[0].text.contains("Upgrade the NVIDIA driver"),
            "{:?}",
            f.fix
        );
    }

    #[test]
    fn an_unused_toolkit_too_new_is_a_warning() {
        let mut s = healthy();
        set_driver(&mut s, "470.82.01");
        let tk = toolkits_mut(&mut s);
        tk.installs[0] = toolkit(TOOLKIT_ROOT, "11.4.4", true);
        tk.installs
            .push(toolkit("/usr/local/cuda-12.4", "12.4.131", true));
        tk.installs[1].root = "/opt/cuda-12.4".into();
        let f = only(run(&s), codes::GD017, Severity::Warning);
        assert!(f.title.contains("/opt/cuda-12.4"), "{}", f.title);
        assert!(fixes_mention(&f, "not the one builds use"));
    }

    #[test]
    fn a_loaded_cudart_newer_than_the_driver_counts_too() {
        let mut s = healthy();
        set_driver(&mut s, "470.82.01");
        toolkits_mut(&mut s).installs.clear();
        put_library(
            &mut s,
            library(
                "libcudart",
                "libcudart.so.12",
                candidate(
                    "/opt/lib",
                    "libcudart.so.12",
                    "libcudart.so.12.4.127",
                    crate::facts::libraries::Via::LdLibraryPath,
                ),
            ),
        );
        let f = only(run(&s), codes::GD017, Severity::Error);
        assert!(f.title.contains("CUDA runtime 12.4.127"), "{}", f.title);
    }

    #[test]
    fn not_applicable_without_driver_or_toolkits() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        s.toolkits = None;
        assert_na(run(&s));
    }
}
