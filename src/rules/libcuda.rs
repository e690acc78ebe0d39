//! GD024/GD025: which libcuda the loader picks. A toolkit's link-time stub ahead of the
//! driver fails every call (CUDA_ERROR_STUB_LIBRARY, 34); a forward-compatibility libcuda
//! (`cuda-X.Y/compat`) works only on data-center GPUs within its support matrix
//! (https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html, encoded in
//! src/compat/driver.rs; 803/804 otherwise).

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::arch::ProductClass;
use crate::compat::driver::{forward_compat, max_cuda_for_driver, ForwardCompat};
use crate::compat::{CudaVersion, DriverVersion};
use crate::facts::libraries::{Candidate, SearchPath, Via};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "libcuda",
    codes: &[codes::GD024, codes::GD025],
    views: &[super::View::Toolkit, super::View::Smoke],
    checks: "the loader picks the driver's libcuda, not a stub or an unsupported forward-compatibility copy",
    judges: &[SubjectKind::Libcuda],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(libs) = &snap.libraries else {
        return Outcome::NotApplicable("the libraries probe did not run".into());
    };
    let mut findings = Vec::new();
    let real = libs.by_soname("libcuda.so.1").and_then(|l| l.loaded());

    if let Some(c) = real.filter(|c| c.stub) {
        findings.push(stub_finding(
            c,
            &libs.search,
            Severity::Error,
            "libcuda.so.1",
        ));
    } else if let Some(c) = libs
        .by_soname("libcuda.so")
        .and_then(|l| l.loaded())
        .filter(|c| c.stub && c.via == Via::LdLibraryPath)
    {
        findings.push(stub_finding(
            c,
            &libs.search,
            Severity::Warning,
            "libcuda.so",
        ));
    }

    if let Some(c) = real.filter(|c| c.forward_compat && !c.stub) {
        findings.push(forward_compat_finding(snap, c));
    }
    Outcome::Checked(findings)
}

fn stub_finding(c: &Candidate, search: &SearchPath, severity: Severity, soname: &str) -> Finding {
    let parent = |p: &str| {
        std::path::Path::new(p)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    let dir = parent(&c.path);
    let real_dir = c
        .target
        .as_deref()
        .map(parent)
        .unwrap_or_else(|| dir.clone());
    // The LD_LIBRARY_PATH entries as written (trailing slash, links) that lead there.
    let entries: Vec<&str> = search
        .ld_library_path
        .iter()
        .zip(&search.ld_library_path_resolved)
        .filter(|(raw, resolved)| {
            resolved.as_deref() == Some(real_dir.as_str())
                || raw.trim_end_matches('/') == dir.trim_end_matches('/')
        })
        .map(|(raw, _)| raw.as_str())
        .collect();
    let mut f = Finding::new(
        codes::GD024,
        severity,
        format!("The loader finds the CUDA stub library {} for {soname} before the real driver", c.path),
    )
    .detail(format!("Toolkits ship lib64/stubs/libcuda.so so programs can be linked on machines without a driver; it implements nothing. A process that loads it fails every CUDA call with CUDA_ERROR_STUB_LIBRARY (34, \"CUDA driver is a stub library\"){}. It is reached through {}.",
        if soname == "libcuda.so" { " — here for programs that dlopen(\"libcuda.so\"), such as some JIT compilers" } else { "" },
        c.detail.as_deref().map_or(c.via.describe().to_string(), |d| format!("{} {d}", c.via.describe()))))
    .evidence(Subject::library(soname), format!("{soname} → {}", c.target.as_deref().unwrap_or(&c.path)), c.path.clone());
    f = match c.via {
        Via::LdLibraryPath => f.fix_cmd(
            "Keep the stubs directory out of LD_LIBRARY_PATH at run time (it is for linking only)",
            crate::sh!(
                "export LD_LIBRARY_PATH=$(printf %s \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -vxF{} | paste -sd:)",
                crate::findings::Shell::join(
                    if entries.is_empty() { vec![dir.clone()] } else { entries.iter().map(|e| e.to_string()).collect() }
                        .iter()
                        .map(|e| crate::sh!(" -e {}", e)),
                    ""
                )
            ),
        ),
        _ => f.fix_text(format!("Remove {dir} from /etc/ld.so.conf.d and any libcuda.so.1 link placed in it, then run sudo ldconfig")),
    };
    f
}

fn forward_compat_finding(snap: &Snapshot, c: &Candidate) -> Finding {
    // The package's CUDA: from cuda-X.Y/compat, else from the compat libcuda's driver branch.
    let pkg = std::path::Path::new(&c.path)
        .parent()
        .and_then(|p| p.parent())
        .and_then(|p| p.file_name())
        .and_then(|n| CudaVersion::parse(n.to_string_lossy().trim_start_matches("cuda-")))
        .or_else(|| {
            let v = DriverVersion::parse(c.version.as_deref()?)?;
            Some(max_cuda_for_driver(&v)?.cuda)
        });
    let base = snap.driver_version().filter(|d| d.kernel);
    let classes: Vec<(String, ProductClass, String)> = snap
        .known_gpus()
        .into_iter()
        .map(|g| (g.name, g.class, g.source))
        .filter(|(_, c, _)| *c != ProductClass::Unknown)
        .collect();
    let unsupported_gpu = classes
        .iter()
        .find(|(_, c, _)| matches!(c, ProductClass::GeForce | ProductClass::Workstation));
    let verdict = match (pkg, &base) {
        (Some(p), Some(b)) => forward_compat(p, &b.version),
        _ => ForwardCompat::Unknown,
    };
    let pkg_text = pkg.map_or("unknown CUDA".into(), |p| format!("CUDA {p}"));
    let base_text = base
        .as_ref()
        .map_or("unknown".into(), |b| b.version.as_str().to_string());
    let (severity, title, why) = if let Some((name, _, _)) = unsupported_gpu {
        (Severity::Error, format!("A forward-compatibility libcuda ({pkg_text}) is loaded, but {name} does not support forward compatibility"),
         "Forward compatibility works only on data-center GPUs, select NGC-ready RTX cards and Jetson. On this GPU every CUDA program fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804): \"forward compatibility was attempted on non supported HW\".".to_string())
    } else {
        match verdict {
            ForwardCompat::NotSupported => (Severity::Error, format!("The forward-compatibility libcuda ({pkg_text}) does not support the installed driver {base_text}"),
                "A compat package must be newer than the base driver's CUDA and the base branch must be a supported target; otherwise CUDA fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803) or behaves unpredictably. Older compat packages are not supported on newer drivers.".to_string()),
            ForwardCompat::NotNeeded => (Severity::Warning, format!("A forward-compatibility libcuda ({pkg_text}) is loaded although driver {base_text} already supports that CUDA"),
                "The base driver needs no compat package for this CUDA version. The compat libcuda still replaces the driver's own, so the user-space and kernel drivers differ for no gain; remove it from the loader path.".to_string()),
            ForwardCompat::Compatible if !classes.is_empty() && classes.iter().all(|(_, c, _)| *c == ProductClass::DataCenter) =>
                (Severity::Info, format!("A forward-compatibility libcuda ({pkg_text}) runs on driver {base_text}"),
                 "This is the supported setup: a data-center GPU, a base driver branch the package supports. PTX JIT works; CUDA–OpenGL/Vulkan interop does not.".to_string()),
            _ => (Severity::Warning, format!("A forward-compatibility libcuda ({pkg_text}) is loaded on driver {base_text}"),
                "Forward compatibility works only on data-center GPUs (and select NGC-ready RTX cards) and only with base driver branches in its support matrix; elsewhere CUDA fails with 804 (unsupported hardware) or 803 (driver mismatch). The GPU model could not be checked here.".to_string()),
        }
    };
    let mut f = Finding::new(codes::GD025, severity, title)
        .detail(why)
        .evidence(
            Subject::library("libcuda.so.1"),
            format!(
                "libcuda.so.1 → {} ({})",
                c.target.as_deref().unwrap_or(&c.path),
                c.version.as_deref().unwrap_or("version unknown")
            ),
            c.path.clone(),
        );
    if let Some(b) = &base {
        f = f.evidence(
            Subject::DriverVersion,
            format!("kernel module {}", b.version.as_str()),
            b.source.clone(),
        );
    }
    for (name, class, source) in &classes {
        f = f.context(format!("{name}: {class:?}"), source.clone());
    }
    if severity > Severity::Info {
        f = f.fix_text(format!("Take {} off the loader path (LD_LIBRARY_PATH or /etc/ld.so.conf.d, then sudo ldconfig)", std::path::Path::new(&c.path).parent().map(|p| p.display().to_string()).unwrap_or_default()))
            .fix_text("Or upgrade the NVIDIA driver to one that supports this CUDA version natively");
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn stub_first(via: Via) -> Snapshot {
        let mut s = healthy();
        let dir = "/usr/local/cuda-12.4/lib64/stubs";
        put_library(
            &mut s,
            library(
                "libcuda",
                "libcuda.so.1",
                candidate(dir, "libcuda.so.1", "libcuda.so", via),
            ),
        );
        let search = &mut libs_mut(&mut s).search;
        search.ld_library_path = vec![format!("{dir}/")];
        search.ld_library_path_resolved = vec![Some(dir.into())];
        s
    }

    fn compat_libcuda(pkg: &str, version: &str) -> Snapshot {
        let mut s = healthy();
        let dir = format!("/usr/local/cuda-{pkg}/compat");
        put_library(
            &mut s,
            library(
                "libcuda",
                "libcuda.so.1",
                candidate(
                    &dir,
                    "libcuda.so.1",
                    &format!("libcuda.so.{version}"),
                    Via::LdLibraryPath,
                ),
            ),
        );
        s
    }

    #[test]
    fn healthy_loader_picks_the_driver() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn the_stub_on_ld_library_path_is_an_error_with_a_path_filter() {
        let f = only(
            run(&stub_first(Via::LdLibraryPath)),
            codes::GD024,
            Severity::Error,
        );
        assert!(f.title.contains("stub library"), "{}", f.title);
        assert!(
            first_cmd(&f).contains("grep -vxF -e /usr/local/cuda-12.4/lib64/stubs/"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn the_stub_in_the_cache_says_where_to_remove_it() {
        let f = only(
            run(&stub_first(Via::LdSoCache)),
            codes::GD024,
            Severity::Error,
        );
        assert!(f.fix[0].text.contains("/etc/ld.so.conf.d"), "{:?}", f.fix);
    }

    #[test]
    fn an_unversioned_stub_is_a_warning() {
        let mut s = healthy();
        put_library(
            &mut s,
            library(
                "libcuda",
                "libcuda.so",
                candidate(
                    "/usr/local/cuda/lib64/stubs",
                    "libcuda.so",
                    "libcuda.so",
                    Via::LdLibraryPath,
                ),
            ),
        );
        let f = only(run(&s), codes::GD024, Severity::Warning);
        assert!(f.title.contains("for libcuda.so before"), "{}", f.title);
    }

    #[test]
    fn forward_compat_on_a_supported_base_and_data_center_gpu_is_info() {
        let mut s = compat_libcuda("12.8", "570.86.10");
        set_driver(&mut s, "535.183.01");
        let f = only(run(&s), codes::GD025, Severity::Info);
        assert!(f.title.contains("runs on driver 535.183.01"), "{}", f.title);
        assert!(f.fix.is_empty());
    }

    #[test]
    fn forward_compat_on_an_unsupported_base_is_an_error() {
        let f = only(
            run(&compat_libcuda("12.8", "570.86.10")),
            codes::GD025,
            Severity::Error,
        );
        assert!(
            f.title
                .contains("does not support the installed driver 550.54.15"),
            "{}",
            f.title
        );
    }

    #[test]
    fn forward_compat_on_a_geforce_is_an_error() {
        let mut s = compat_libcuda("12.8", "570.86.10");
        set_driver(&mut s, "535.183.01");
        for i in 0..2 {
            nvml_gpu(&mut s, i).name =
                crate::facts::nvml::Field::Value("NVIDIA GeForce RTX 4090".into());
            nvml_gpu(&mut s, i).compute_capability = crate::facts::nvml::Field::Value("8.9".into());
        }
        let f = only(run(&s), codes::GD025, Severity::Error);
        assert!(
            f.title.contains("does not support forward compatibility"),
            "{}",
            f.title
        );
    }

    #[test]
    fn forward_compat_the_driver_does_not_need_is_a_warning() {
        let f = only(
            run(&compat_libcuda("12.4", "550.54.15")),
            codes::GD025,
            Severity::Warning,
        );
        assert!(f.title.contains("already supports"), "{}", f.title);
    }

    #[test]
    fn not_applicable_without_the_libraries_probe() {
        let mut s = healthy();
        s.libraries = None;
        assert_na(run(&s));
    }
}
