//! GD021/GD022: the toolkit a build would use does not exist. A CUDA_HOME pointing at a
//! missing or non-toolkit directory, or no toolkit at all — fine for prebuilt wheels, fatal
//! for packages that compile CUDA code (tests/it/toolkits.rs gd022_no_toolkit_info_or_warning: "CUDA_HOME environment variable
//! is not set").

use super::{Outcome, Rule};
use crate::codes;
use crate::envvars;
use crate::facts::toolkits::{cuda_home_value, Route, ToolkitKind};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "cuda_home",
    codes: &[codes::GD021, codes::GD022],
    views: &[super::View::Toolkit],
    checks: "CUDA_HOME/CUDA_PATH name a real toolkit with nvcc, or nothing needs one",
    judges: &[SubjectKind::CudaHome],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(tk) = &snap.toolkits else {
        return Outcome::NotApplicable("the toolkits probe did not run".into());
    };
    // A package installed with its compiled modules (a built wheel) needs no toolkit to run;
    // one with none builds at install or first use (JIT) and does.
    let builders: Vec<String> = tk
        .extension_builders
        .iter()
        .filter(|p| p.builds())
        .map(|p| format!("{} {}", p.name, p.version))
        .collect();
    let arch_list = snap.env_value(envvars::TORCH_CUDA_ARCH_LIST.name);
    let builds = !builders.is_empty() || arch_list.is_some();
    let builders_note = if builders.is_empty() {
        "packages that compile CUDA code (flash-attn, apex, xformers, DeepSpeed ops, custom torch extensions)".to_string()
    } else {
        builders.join(", ")
    };
    let mut findings = Vec::new();

    for r in &tk.rejected {
        let var = match r.route {
            Route::CudaHome => "CUDA_HOME",
            Route::CudaPath => "CUDA_PATH",
            Route::CudaRoot => "CUDA_ROOT",
            _ => continue,
        };
        // CUDA_PATH only counts when CUDA_HOME is unset; CUDA_ROOT only for older build systems.
        let used_by_torch =
            var == "CUDA_HOME" || (var == "CUDA_PATH" && tk.cuda_home.via == "CUDA_PATH");
        let severity = if used_by_torch && builds {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut f = Finding::new(codes::GD021, severity, format!("{var}={} does not point at a CUDA toolkit", r.path))
            .detail(format!("{} Builds that read {var} fail: torch.utils.cpp_extension runs $CUDA_HOME/bin/nvcc and reads its headers from there.", r.reason))
            .evidence(Subject::env(var), format!("{var}={}", r.path), format!("env {var}"));
        f = match snap
            .toolkit_in_use()
            .filter(|t| t.nvcc.is_some())
            .or_else(|| tk.installs.iter().find(|t| t.nvcc.is_some()))
        {
            Some(t) => f.fix_cmd(
                format!(
                    "Point it at an installed toolkit (CUDA {})",
                    t.cuda.map_or("?".into(), |v| v.to_string())
                ),
                crate::sh!("export {}={}", var, cuda_home_value(t)),
            ),
            None => f.fix_cmd(
                "Unset it until a toolkit is installed",
                crate::sh!("unset {}", var),
            ),
        };
        findings.push(f);
    }

    // No CUDA_HOME: torch takes the directory above the nvcc on PATH, without resolving
    // links, so an nvcc linked into /usr/bin makes it look for headers under /usr.
    if let (Some(home), None, Some(n)) =
        (&tk.cuda_home.path, tk.cuda_home.toolkit, &tk.nvcc_on_path)
    {
        let real = tk.get(n.toolkit);
        let mut f = Finding::new(
            codes::GD021,
            if builds { Severity::Error } else { Severity::Warning },
            format!("With CUDA_HOME unset, torch extension builds would use {home}, which is not a toolkit"),
        )
        .detail(format!("torch.utils.cpp_extension sets CUDA_HOME to the directory above the first nvcc on PATH ({}) without following links, so it looks for {home}/include/cuda_runtime.h and {home}/lib64 and the build fails on missing headers or libraries.", n.path))
        .evidence(Subject::NvccOnPath, format!("{} → {}", n.path, n.resolved), "env PATH");
        f = match real {
            Some(t) => f.fix_cmd(
                format!(
                    "Name the real toolkit (CUDA {})",
                    t.cuda.map_or("?".into(), |v| v.to_string())
                ),
                crate::sh!("export CUDA_HOME={}", t.root),
            ),
            None => f.fix_text("Set CUDA_HOME to the toolkit that nvcc belongs to"),
        };
        findings.push(f);
    }

    // CUDA_HOME resolves to a toolkit without a compiler (conda's runtime-only cudatoolkit).
    if let Some(t) = tk.get(tk.cuda_home.toolkit) {
        if t.nvcc.is_none() {
            findings.push(
                {
                    // A runtime-only install (a -runtime container image, conda's cudatoolkit)
                    // is normal until something compiles.
                    let f = Finding::new(codes::GD021, if builds { Severity::Error } else { Severity::Info }, format!("CUDA_HOME resolves to {}, which has no nvcc", t.root))
                        .detail(format!("The CUDA install found through {} holds runtime libraries but no compiler (runtime container images, conda's cudatoolkit and pip's nvidia-* wheels are like this). Running programs works; {builders_note} cannot be built with it.", tk.cuda_home.via))
                        .evidence(Subject::CudaHome, format!("{} (no bin/nvcc)", t.root), t.version.source.clone());
                    let f = match (t.kind, t.cuda) {
                        (ToolkitKind::Conda, _) => f.fix_cmd("Add the compiler to the conda env", "conda install -c nvidia cuda-nvcc"),
                        (_, Some(v)) => f.fix_cmd(
                            format!("Install CUDA {v}'s compiler (NVIDIA's apt repository; in containers use the -devel image)"),
                            crate::sh!("sudo apt install cuda-nvcc-{}-{}", v.major, v.minor),
                        ),
                        _ => f,
                    };
                    f.fix_text("Or point CUDA_HOME at a full toolkit (NVIDIA's runfile or apt/dnf packages install one under /usr/local/cuda-X.Y)")
                },
            );
        }
    }

    let has_compiler = tk.installs.iter().any(|t| t.nvcc.is_some());
    // A toolkit exists, but torch's rule finds none: CUDA_HOME unset, no nvcc on PATH and
    // no /usr/local/cuda. Builds fail exactly as if there were no toolkit.
    if tk.cuda_home.path.is_none() && builds {
        if let Some(t) = tk
            .installs
            .iter()
            .filter(|t| t.nvcc.is_some())
            .max_by_key(|t| t.cuda)
        {
            findings.push(
                Finding::new(codes::GD022, Severity::Warning, format!("CUDA {} is installed at {}, but torch extension builds cannot find it", t.cuda.map_or("?".into(), |v| v.to_string()), t.root))
                    .detail(format!("CUDA_HOME and CUDA_PATH are unset, no nvcc is on PATH and /usr/local/cuda does not exist, so torch.utils.cpp_extension raises \"OSError: CUDA_HOME environment variable is not set\" while building {builders_note}."))
                    .evidence(Subject::toolkit(&t.root), format!("CUDA toolkit at {}", t.root), t.version.source.clone())
                    .fix_cmd("Point builds at it", crate::sh!("export CUDA_HOME={} PATH={}/bin:\"$PATH\"", cuda_home_value(t), t.root)),
            );
        }
    }
    if tk.cuda_home.path.is_none()
        && !has_compiler
        && tk
            .rejected
            .iter()
            .all(|r| !matches!(r.route, Route::CudaHome | Route::CudaPath))
    {
        // The note is for GPU machines with a working driver; elsewhere it is noise.
        if !builds && (!snap.nvidia_hardware_seen() || snap.driver_version().is_none()) {
            return Outcome::Checked(findings);
        }
        let severity = if builds {
            Severity::Warning
        } else {
            Severity::Info
        };
        let mut f = Finding::new(
            codes::GD022,
            severity,
            if builds {
                format!("No CUDA toolkit found, but {builders_note} need one to build")
            } else {
                "No CUDA toolkit (nvcc) found: fine for prebuilt wheels, needed to build CUDA extensions".to_string()
            },
        )
        .detail("CUDA_HOME and CUDA_PATH are unset, no nvcc is on PATH and /usr/local/cuda does not exist. PyTorch's pip and conda packages bring the CUDA runtime libraries they need, so running models works; compiling CUDA code does not: torch.utils.cpp_extension raises \"OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\"")
        .context("CUDA_HOME, CUDA_PATH: unset", "environment")
        .context("nvcc: not on PATH", "env PATH");
        if let Some(a) = arch_list {
            f = f.evidence(
                Subject::env("TORCH_CUDA_ARCH_LIST"),
                format!("TORCH_CUDA_ARCH_LIST={a} (an extension build is configured)"),
                "env TORCH_CUDA_ARCH_LIST",
            );
        }
        for p in tk.extension_builders.iter().filter(|p| p.builds()) {
            f = f.evidence(
                Subject::Package(p.name.clone()),
                format!(
                    "{} {} compiles CUDA code at install or first use: its RECORD lists no compiled module",
                    p.name, p.version
                ),
                p.site.clone(),
            );
        }
        f = f
            .fix_text("Install a CUDA toolkit whose major.minor matches torch.version.cuda")
            .fix_cmd("In a conda env", "conda install -c nvidia cuda-toolkit")
            .fix_cmd(
                "Then point builds at it",
                "export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:\"$PATH\"",
            );
        findings.push(f);
    }
    Outcome::Checked(findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::toolkits::Rejected;
    use crate::testing::*;

    fn rejected(var: Route) -> Snapshot {
        let mut s = healthy();
        toolkits_mut(&mut s).rejected.push(Rejected {
            route: var,
            path: "/opt/missing".into(),
            reason: "/opt/missing: No such file or directory".into(),
        });
        s
    }

    fn builds(s: &mut Snapshot) {
        toolkits_mut(s)
            .extension_builders
            .push(crate::facts::toolkits::ExtensionPackage {
                name: "flash-attn".into(),
                version: "2.6.3".into(),
                site: SITE.into(),
                compiled: None,
            });
    }

    fn no_toolkit_found(s: &mut Snapshot) {
        let tk = toolkits_mut(s);
        tk.cuda_home.path = None;
        tk.cuda_home.toolkit = None;
        tk.cuda_home.via = "nothing".into();
        tk.nvcc_on_path = None;
    }

    #[test]
    fn healthy_cuda_home_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_cuda_home_that_is_no_toolkit_warns_and_errs_when_builds_need_it() {
        let f = only(
            run(&rejected(Route::CudaHome)),
            codes::GD021,
            Severity::Warning,
        );
        assert!(
            f.title
                .contains("CUDA_HOME=/opt/missing does not point at a CUDA toolkit"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "export CUDA_HOME=/usr/local/cuda-12.4");
        let mut s = rejected(Route::CudaHome);
        builds(&mut s);
        only(run(&s), codes::GD021, Severity::Error);
        // CUDA_PATH counts for torch only when it is what CUDA_HOME came from.
        let mut s = rejected(Route::CudaPath);
        builds(&mut s);
        only(run(&s), codes::GD021, Severity::Warning);
    }

    #[test]
    fn a_cuda_home_without_a_toolkit_anywhere_says_unset() {
        let mut s = rejected(Route::CudaHome);
        toolkits_mut(&mut s).installs[0].nvcc = None;
        let f = findings(run(&s));
        let f = one_of(&f, codes::GD021, Severity::Warning);
        assert_eq!(first_cmd(f), "unset CUDA_HOME");
    }

    #[test]
    fn nvcc_linked_into_usr_bin_makes_torch_look_under_usr() {
        let mut s = healthy();
        let tk = toolkits_mut(&mut s);
        tk.cuda_home.path = Some("/usr".into());
        tk.cuda_home.toolkit = None;
        tk.nvcc_on_path.as_mut().unwrap().path = "/usr/bin/nvcc".into();
        let f = only(run(&s), codes::GD021, Severity::Warning);
        assert!(
            f.title.contains("would use /usr, which is not a toolkit"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "export CUDA_HOME=/usr/local/cuda-12.4");
        set_env(&mut s, "TORCH_CUDA_ARCH_LIST", "9.0");
        only(run(&s), codes::GD021, Severity::Error);
    }

    #[test]
    fn a_runtime_only_install_is_info_until_something_builds() {
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0].nvcc = None;
        let f = only(run(&s), codes::GD021, Severity::Info);
        assert!(f.title.contains("has no nvcc"), "{}", f.title);
        assert_eq!(first_cmd(&f), "sudo apt install cuda-nvcc-12-4");
        toolkits_mut(&mut s).installs[0].kind = ToolkitKind::Conda;
        builds(&mut s);
        let f = only(run(&s), codes::GD021, Severity::Error);
        assert_eq!(first_cmd(&f), "conda install -c nvidia cuda-nvcc");
    }

    #[test]
    fn a_toolkit_torch_cannot_find_is_a_warning_when_builds_need_it() {
        let mut s = healthy();
        no_toolkit_found(&mut s);
        assert_clean(run(&s));
        builds(&mut s);
        let f = only(run(&s), codes::GD022, Severity::Warning);
        assert!(f.title.contains("cannot find it"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "export CUDA_HOME=/usr/local/cuda-12.4 PATH=/usr/local/cuda-12.4/bin:\"$PATH\""
        );
    }

    #[test]
    fn no_toolkit_on_a_gpu_host_is_info_and_a_warning_when_builds_need_one() {
        let mut s = healthy();
        no_toolkit_found(&mut s);
        toolkits_mut(&mut s).installs.clear();
        let f = only(run(&s), codes::GD022, Severity::Info);
        assert!(f.title.contains("fine for prebuilt wheels"), "{}", f.title);
        assert_eq!(first_cmd(&f), "conda install -c nvidia cuda-toolkit");
        set_env(&mut s, "TORCH_CUDA_ARCH_LIST", "9.0");
        let f = only(run(&s), codes::GD022, Severity::Warning);
        assert!(f.title.contains("need one to build"), "{}", f.title);
    }

    #[test]
    fn no_toolkit_without_a_gpu_is_not_worth_a_note() {
        assert_clean(run(&no_gpu()));
    }

    #[test]
    fn not_applicable_without_the_toolkits_probe() {
        let mut s = healthy();
        s.toolkits = None;
        assert_na(run(&s));
    }

    // Nothing fails until something compiles, so a runtime-only CUDA_HOME is info (not the
    // warning an earlier GD021.md gave it); the explanation must say the same.
    #[test]
    fn a_runtime_only_cuda_home_is_info_as_the_explanation_says() {
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0].nvcc = None;
        only(run(&s), codes::GD021, Severity::Info);
        set_env(&mut s, "TORCH_CUDA_ARCH_LIST", "9.0");
        only(run(&s), codes::GD021, Severity::Error);
        let doc = crate::codes::lookup(codes::GD021).expect("GD021 is documented");
        let doc = doc.explanation.split_whitespace().collect::<Vec<_>>();
        assert!(
            doc.join(" ").contains("a runtime-only toolkit is info"),
            "GD021.md disagrees with the rule"
        );
    }
}
