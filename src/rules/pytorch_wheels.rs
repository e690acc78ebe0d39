//! GD044/GD045: the CUDA libraries torch loads. Its nvidia-* wheels must be installed at the
//! versions its METADATA pins (a resolver that skipped them gives "libcudnn.so.9: cannot
//! open shared object file", tests/it/pytorch.rs missing_nvidia_wheels), and LD_LIBRARY_PATH must not put other
//! copies ahead of them (searched before torch's RUNPATH: "undefined symbol:
//! __nvJitLinkAddData_12_1").

use crate::codes;
use std::path::Path;

use super::{Outcome, Rule};
use crate::facts::libraries::Via;
use crate::findings::{Finding, Severity};
use crate::pyversion::holds;
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "pytorch_wheels",
    codes: &[codes::GD044, codes::GD045],
    views: &[super::View::Libs],
    checks: "torch's nvidia-* wheels are installed as pinned and nothing on LD_LIBRARY_PATH shadows them",
    judges: &[],
    run,
};

/// The library a wheel provides, for the import error a missing one causes.
fn library_of(wheel: &str, spec: &str) -> Option<String> {
    let major = spec
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split('.')
        .next()
        .unwrap_or("");
    let lib = [
        ("nvidia-cudnn", "libcudnn.so"),
        ("nvidia-cublas", "libcublas.so"),
        ("nvidia-cuda-runtime", "libcudart.so"),
        ("nvidia-cuda-nvrtc", "libnvrtc.so"),
        ("nvidia-cufft", "libcufft.so"),
        ("nvidia-curand", "libcurand.so"),
        ("nvidia-cusolver", "libcusolver.so"),
        ("nvidia-cusparse", "libcusparse.so"),
        ("nvidia-nvjitlink", "libnvJitLink.so"),
    ]
    .iter()
    .find(|(w, _)| wheel.starts_with(w))
    .map(|(_, l)| *l)?;
    if wheel.starts_with("nvidia-nccl") {
        return Some("libnccl.so.2".into());
    }
    Some(if major.is_empty() {
        lib.to_string()
    } else {
        format!("{lib}.{major}")
    })
}

enum Shadow {
    /// Bound from LD_LIBRARY_PATH by these modules, which all load.
    Loads(Vec<String>),
    /// Bound from LD_LIBRARY_PATH by a module that fails to load.
    Breaks,
    /// No module binds it from LD_LIBRARY_PATH.
    Unused,
}

/// What the modules of an environment do with the LD_LIBRARY_PATH copy of `soname`.
fn shadow_verdict(l: &crate::facts::linkage::Linkage, soname: &str) -> Shadow {
    let mut users = Vec::new();
    for m in &l.modules {
        let binds = l.closure(m).into_iter().any(|i| {
            l.object(i).is_some_and(|o| {
                o.soname.as_deref() == Some(soname)
                    && matches!(o.how, crate::loader::How::LdLibraryPath { .. })
            })
        });
        if !binds {
            continue;
        }
        if !m.loads() && m.optional.is_none() {
            return Shadow::Breaks;
        }
        let name = crate::loader::file_name(&m.path).to_string();
        if !users.contains(&name) {
            users.push(name);
        }
    }
    if users.is_empty() {
        Shadow::Unused
    } else {
        Shadow::Loads(users)
    }
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(envs) = &snap.python else {
        return Outcome::NotApplicable("the pytorch probe did not run".into());
    };
    let mut out = Vec::new();
    let mut any = false;
    for env in envs {
        let Some(t) = &env.torch else { continue };
        if t.kind() != "cuda" {
            continue;
        }
        any = true;
        let version = t
            .version
            .get()
            .cloned()
            .unwrap_or_else(|| t.dist_version.clone());
        let installed = |name: &str| {
            env.nvidia_wheels
                .iter()
                .chain(env.companions.iter())
                .find(|d| d.name == name)
        };
        let mut missing = Vec::new();
        let mut wrong = Vec::new();
        let mut triton_missing = Vec::new();
        for r in t.requires.iter().filter(|r| {
            r.name.starts_with("nvidia-") || r.name == "cuda-toolkit" || r.name == "triton"
        }) {
            match installed(&r.name) {
                // torch imports without Triton; torch.compile then fails.
                None if r.name == "triton" => triton_missing.push(r),
                None => missing.push(r),
                Some(d) if !r.spec.is_empty() && !holds(&d.version, &r.spec) => wrong.push((r, d)),
                Some(_) => {}
            }
        }
        if !missing.is_empty() {
            let pins: Vec<String> = missing
                .iter()
                .map(|r| format!("{}{}", r.name, r.spec))
                .collect();
            let lib = missing.iter().find_map(|r| library_of(&r.name, &r.spec));
            let mut f = Finding::new(codes::GD044, Severity::Error, format!("torch {version} needs {} wheel(s) that are not installed: {}", missing.len(), pins.join(", ")))
                .detail(format!("torch's CUDA libraries load these wheels' shared libraries; without them `import torch` fails{}. Installers that resolve dependencies by platform (poetry, some lockfiles, --no-deps, copying site-packages) can leave them out.", lib.map(|l| format!(" with \"ImportError: {l}: cannot open shared object file: No such file or directory\"")).unwrap_or_default()))
                .evidence(Subject::torch(&env.site), format!("Requires-Dist {}", pins.join(", ")), format!("{}/torch-{}.dist-info/METADATA", env.site, t.dist_version));
            for r in &missing {
                if let Some(v) = &r.via {
                    f = f.context(format!("{} comes from {v}", r.name), "METADATA");
                }
            }
            out.push(
                f.fix_cmd(
                    "Install exactly what torch pins",
                    crate::recommend::commands::install_into(env, &pins, false, false),
                )
                .fix_text("Or reinstall torch with pip (which installs its dependencies)"),
            );
        }
        for r in triton_missing {
            out.push(
                Finding::new(codes::GD044, Severity::Warning, format!("torch {version} pins {}{} but it is not installed: torch.compile cannot work", r.name, r.spec))
                    .detail("torch imports without Triton, but torch.compile's GPU backend (Inductor) generates Triton kernels and fails with \"Cannot find a working triton installation\".")
                    .evidence(Subject::torch(&env.site), format!("Requires-Dist {}{}", r.name, r.spec), env.site.clone())
                    .fix_cmd("Install the pinned Triton", crate::recommend::commands::install_into(env, &[format!("{}{}", r.name, r.spec)], false, false)),
            );
        }
        for (r, d) in wrong {
            out.push(
                Finding::new(codes::GD044, Severity::Warning, format!("{} {} is installed but torch {version} pins {}{}", d.name, d.version, r.name, r.spec))
                    .detail("torch was built and tested against the pinned version; another one can fail at import with undefined symbols, or run with different numerics and bugs.")
                    .evidence(Subject::torch(&env.site), format!("{} {} vs {}", d.name, d.version, r.spec), env.site.clone())
                    .fix_cmd("Install the pinned version", crate::recommend::commands::install_into(env, &[format!("{}{}", r.name, r.spec)], false, false)),
            );
        }
        // GD045: LD_LIBRARY_PATH shadowing this env's wheel libraries. With the linkage
        // probe's verdict the consequence is known: a copy that breaks loading is GD060's
        // error, one that satisfies every version and symbol is information.
        let linkage = snap
            .linkage
            .as_ref()
            .and_then(|ls| ls.iter().find(|l| l.site == env.site));
        if let Some(libs) = &snap.libraries {
            for lib in &libs.libraries {
                let wheel = lib
                    .elsewhere
                    .iter()
                    .find(|c| c.via == Via::PipWheel && Path::new(&c.path).starts_with(&env.site));
                let ahead = lib
                    .candidates
                    .iter()
                    .find(|c| c.via == Via::LdLibraryPath && c.problem.is_none());
                let (Some(w), Some(a)) = (wheel, ahead) else {
                    continue;
                };
                let differs = a.version.is_some() && w.version.is_some() && a.version != w.version;
                let versions = if differs {
                    format!(
                        " ({} vs {})",
                        a.version.as_deref().unwrap_or("?"),
                        w.version.as_deref().unwrap_or("?")
                    )
                } else {
                    String::new()
                };
                let verdict = linkage.map(|l| shadow_verdict(l, &lib.soname));
                let f = match verdict {
                    // Bound by a module that fails: GD060 names the failure.
                    Some(Shadow::Breaks) => continue,
                    Some(Shadow::Loads(users)) => Finding::new(codes::GD045, Severity::Info, format!("torch loads {} from LD_LIBRARY_PATH ({}) instead of its wheel's{versions}; every version and symbol it needs is there", lib.soname, a.path))
                        .detail(format!("The loader searches LD_LIBRARY_PATH before the RUNPATH that leads to the wheel, so {} is not used. The copy on LD_LIBRARY_PATH defines every symbol version {} import{}, so loading works; numerics and fixed bugs are those of that copy.", w.path, users.join(", "), if users.len() == 1 { "s" } else { "" })),
                    // Nothing loads it (or no linkage): the consequence is not known.
                    _ => Finding::new(codes::GD045, Severity::Warning, format!("LD_LIBRARY_PATH has another {} ({}) than torch's wheel{versions}", lib.soname, a.path))
                        .detail(format!("torch's libraries find their wheels through RUNPATH, which the loader searches after LD_LIBRARY_PATH; whatever loads {} by name gets the LD_LIBRARY_PATH copy first (nvidia libraries loading each other, extensions, other frameworks): the classic \"undefined symbol: __nvJitLinkAddData_12_1\". `gpudoctor libs` shows which copy each module binds.", lib.soname, )),
                };
                let mut f = f
                    .evidence(
                        Subject::library(&lib.soname),
                        format!(
                            "{} via LD_LIBRARY_PATH {}",
                            a.path,
                            a.detail.as_deref().unwrap_or("")
                        ),
                        "env LD_LIBRARY_PATH",
                    )
                    .context(format!("torch's copy: {}", w.path), env.site.clone());
                f = match without_dir(snap, &a.path) {
                    Some(cmd) => f.fix_cmd(format!("Drop {}'s directory from LD_LIBRARY_PATH in this shell (PyTorch's wheels need none); then remove it where it is set (a shell profile, a module file, the job script)", lib.soname), cmd),
                    None => f.fix_text("Remove the CUDA/cuDNN directories from LD_LIBRARY_PATH in this environment (PyTorch's wheels need none), or unset LD_LIBRARY_PATH before starting Python"),
                };
                out.push(f);
            }
        }
    }
    if !any {
        return Outcome::NotApplicable("no CUDA build of torch installed".into());
    }
    Outcome::Checked(out)
}

/// The shell command that leaves LD_LIBRARY_PATH without the entry `path` was found in
/// (`unset` when no other entry is left); None when no entry names its directory.
fn without_dir(snap: &Snapshot, path: &str) -> Option<crate::findings::Shell> {
    super::ld_library_path_without(snap, Path::new(path).parent()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn healthy_wheels_are_as_pinned() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_missing_nvidia_wheel_is_an_error_naming_its_library() {
        let mut s = healthy();
        primary_env(&mut s)
            .nvidia_wheels
            .retain(|d| d.name != "nvidia-cudnn-cu12");
        let f = only(run(&s), codes::GD044, Severity::Error);
        assert!(
            f.title
                .contains("not installed: nvidia-cudnn-cu12==9.1.0.70"),
            "{}",
            f.title
        );
        assert!(f.detail.contains("libcudnn.so.9"), "{}", f.detail);
        assert_eq!(first_cmd(&f), "pip install nvidia-cudnn-cu12==9.1.0.70");
    }

    #[test]
    fn a_missing_triton_is_a_warning() {
        let mut s = healthy();
        primary_env(&mut s)
            .companions
            .retain(|d| d.name != "triton");
        let f = only(run(&s), codes::GD044, Severity::Warning);
        assert!(f.title.contains("torch.compile cannot work"), "{}", f.title);
        assert_eq!(first_cmd(&f), "pip install triton==3.0.0");
    }

    #[test]
    fn a_wheel_at_another_version_is_a_warning() {
        let mut s = healthy();
        primary_env(&mut s).nvidia_wheels[1].version = "12.1.3.1".into();
        let f = only(run(&s), codes::GD044, Severity::Warning);
        assert!(
            f.title
                .contains("nvidia-cublas-cu12 12.1.3.1 is installed but torch"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "pip install nvidia-cublas-cu12==12.4.2.65");
    }

    /// cuDNN 9.0.0 on LD_LIBRARY_PATH, 9.1.0 in torch's wheel.
    fn shadowed() -> Snapshot {
        let mut s = healthy();
        let mut lib = library(
            "libcudnn",
            "libcudnn.so.9",
            candidate(
                "/opt/cudnn/lib",
                "libcudnn.so.9",
                "libcudnn.so.9.0.0",
                Via::LdLibraryPath,
            ),
        );
        lib.elsewhere.push(candidate(
            &format!("{SITE}/nvidia/cudnn/lib"),
            "libcudnn.so.9",
            "libcudnn.so.9.1.0",
            Via::PipWheel,
        ));
        put_library(&mut s, lib);
        s
    }

    /// The shadowing of the test below, with torch's module bound to the LD_LIBRARY_PATH
    /// copy, loading or not.
    fn shadowed_and_bound(loads: bool) -> Snapshot {
        use crate::loader::{Failure, How};
        let mut s = shadowed();
        let how = How::LdLibraryPath {
            index: 1,
            entry: "/opt/cudnn/lib".into(),
        };
        let failures = if loads {
            Vec::new()
        } else {
            vec![Failure::VersionNotFound {
                version: "libcudnn.so.9.1".into(),
                library: "/opt/cudnn/lib/libcudnn.so.9".into(),
                by: format!("{SITE}/torch/_C.so"),
            }]
        };
        torch_bound_to_cudnn(&mut s, how, None, failures);
        s
    }

    #[test]
    fn shadowing_that_loads_is_information_and_one_that_breaks_is_gd060s() {
        let f = only(run(&shadowed_and_bound(true)), codes::GD045, Severity::Info);
        assert!(
            f.title
                .contains("torch loads libcudnn.so.9 from LD_LIBRARY_PATH"),
            "{}",
            f.title
        );
        assert!(f
            .title
            .contains("every version and symbol it needs is there"));
        assert_clean(run(&shadowed_and_bound(false)));
    }

    #[test]
    fn ld_library_path_shadowing_a_wheel_library_is_a_warning() {
        let s = shadowed();
        let f = only(run(&s), codes::GD045, Severity::Warning);
        assert!(
            f.title
                .contains("another libcudnn.so.9 (/opt/cudnn/lib/libcudnn.so.9)"),
            "{}",
            f.title
        );
        assert!(f.title.contains("(9.0.0 vs 9.1.0)"), "{}", f.title);
    }

    #[test]
    fn not_applicable_without_a_cuda_torch() {
        let mut s = healthy();
        s.python = None;
        assert_na(run(&s));
        let mut s = healthy();
        primary_env(&mut s).torch = Some(torch("2.4.1+cpu", None));
        assert_na(run(&s));
    }
}
