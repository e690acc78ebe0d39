//! GD041–GD043: whether the installed torch can use this GPU at all. A CPU-only build on a
//! GPU machine (tests/it/pytorch.rs cpu_only_torch_on_a_gpu_machine); a torch CUDA newer than the driver runs (driver_too_old_for_torch); a GPU
//! whose architecture torch was not compiled for, too new or too old (gpu_newer_than_the_build,
//! gpu_older_than_the_build).

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::driver::{driver_verdict_on, max_cuda_for_driver, DriverVerdict};
use crate::compat::torch::{builds_of, covers, Platform};
use crate::compat::CudaVersion;
use crate::facts::pytorch::{PythonEnv, Torch};
use crate::findings::{Finding, Severity};
use crate::recommend::{self, Machine};
use crate::snapshot::{DriverFact, Snapshot};
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "pytorch_build",
    codes: &[codes::GD041, codes::GD042, codes::GD043],
    views: &[],
    checks: "the installed torch is a CUDA build the driver runs, compiled for this GPU",
    judges: &[SubjectKind::Torch],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(envs) = &snap.python else {
        return Outcome::NotApplicable("the pytorch probe did not run".into());
    };
    let with_torch: Vec<(&PythonEnv, &Torch)> = envs
        .iter()
        .filter_map(|e| e.torch.as_ref().map(|t| (e, t)))
        .collect();
    if with_torch.is_empty() {
        return Outcome::NotApplicable("no torch installed in the environments found".into());
    }
    if !snap.nvidia_hardware_seen() && snap.nvml_system().is_none() {
        return Outcome::NotApplicable("no NVIDIA GPU found".into());
    }
    let driver = snap.driver_version();
    let gpus = snap.known_gpus();
    // Official wheels exist for x86_64 and aarch64 only; an unreadable architecture is
    // taken as x86_64, the common case. The installed wheel's own tag wins (per environment).
    let host_platform = match snap.platform.as_ref().and_then(|p| p.arch.get()) {
        Some(a) => Platform::from_arch(a),
        None => Some(Platform::X86_64),
    };
    let many = with_torch.len() > 1;
    let mut out = Vec::new();
    for (env, t) in with_torch {
        let where_ = if many {
            format!(" in {}", env.site)
        } else {
            String::new()
        };
        let version = t
            .version
            .get()
            .cloned()
            .unwrap_or_else(|| t.dist_version.clone());
        let key = Subject::torch(&env.site);
        let platform = match t.wheel_machine.as_deref() {
            Some(m) => Platform::from_arch(m),
            None => host_platform,
        };
        // The build to install, with the torchvision/torchaudio already installed: the one
        // recommender `gpudoctor recommend` uses, for this environment.
        let with: Vec<&str> = env
            .companions
            .iter()
            .map(|c| c.name.as_str())
            .filter(|n| *n == "torchvision" || *n == "torchaudio")
            .collect();
        let rec = recommend::torch::recommend(&Machine::for_env(snap, env), &with);
        let rec_cuda = rec
            .pick
            .as_ref()
            .and_then(|p| p.cuda.clone())
            .unwrap_or_else(|| "?".into());
        // A CPU build is no fix for these findings.
        let cuda_pick = rec.pick.as_ref().filter(|p| p.cuda.is_some());
        match t.kind() {
            "rocm" => out.push(
                Finding::new(codes::GD041, Severity::Error, format!("torch {version}{where_} is a ROCm (AMD) build: it cannot use NVIDIA GPUs"))
                    .detail("torch.version.hip is set: this build talks to AMD's ROCm, not CUDA, and torch.cuda.is_available() is False on NVIDIA hardware.")
                    .evidence(key.clone(), format!("torch {version}, hip {}", t.hip.as_deref().unwrap_or("?")), t.version.source.clone()),
            ),
            "cpu" => {
                let mut f = Finding::new(codes::GD041, Severity::Error, format!("torch {version}{where_} is a CPU-only build, but this machine has an NVIDIA GPU"))
                    .detail("torch.version.cuda is None: this wheel has no CUDA code, so torch.cuda.is_available() is False and .cuda() raises \"Torch not compiled with CUDA enabled\". pip resolved the CPU wheel (Windows PyPI wheels are CPU-only; some indexes and lockfiles pin +cpu), or conda installed pytorch-mutex=cpu. A CUDA toolkit elsewhere on the machine does not change that.")
                    .evidence(key.clone(), format!("torch {version}: torch.version.cuda = None"), t.version.source.clone());
                if let Some(m) = t.conda_mutex.as_deref().filter(|m| *m == "cpu") {
                    f = f.evidence(key.clone(), format!("conda pytorch-mutex={m} (build {})", t.conda_build.as_deref().unwrap_or("?")), format!("{}/conda-meta", env.site));
                }
                if let Some(p) = cuda_pick {
                    f = rec.add_fix(f, format!("Install the CUDA build {} (CUDA {rec_cuda}, which {} runs)", p.label, driver_name(&driver)));
                }
                out.push(f);
            }
            _ => {
                let Some(tc) = t.cuda.as_deref().and_then(CudaVersion::parse) else { continue };
                // GD042: the driver cannot run this CUDA at all.
                if let Some(d) = &driver {
                    if let DriverVerdict::TooOld { needs, family_min } = driver_verdict_on(tc, &d.version, d.os()) {
                        let found = max_cuda_for_driver(&d.version).map_or("?".into(), |m| (m.cuda.major * 1000 + m.cuda.minor * 10).to_string());
                        let needed = family_min.unwrap_or(needs);
                        let mut f = Finding::new(codes::GD042, Severity::Error, format!("torch {version}{where_} needs CUDA {tc}, but driver {} is too old for it", d.version.as_str()))
                            .detail(format!("torch reports \"The NVIDIA driver on your system is too old (found version {found})\" and torch.cuda.is_available() is False. {}", if family_min.is_some() { format!("CUDA {}.x builds run on any driver from {needed} (minor-version compatibility); this one is older.", tc.major) } else { format!("This CUDA needs driver {needed}.") }))
                            .evidence(key.clone(), format!("torch.version.cuda = {tc}"), t.version.source.clone())
                            .evidence(Subject::DriverVersion, driver_text(&driver), d.source.clone())
                            .fix_text(d.upgrade_to(needed));
                        if let Some(p) = cuda_pick {
                            f = rec.add_fix(f, format!("Or install {} (CUDA {rec_cuda}), which this driver runs", p.label));
                        }
                        out.push(f);
                    }
                }
                // GD043: the GPU's architecture is not in the build.
                let (sass, ptx, list, source) = match t.arches.as_ref().and_then(|a| a.get().map(|s| (s, a.source.clone()))) {
                    Some((s, src)) if !s.arch_list.is_empty() => {
                        let num = |prefix: &str| -> Vec<u32> {
                            s.arch_list.iter().filter_map(|a| a.strip_prefix(prefix)?.parse().ok()).collect()
                        };
                        (num("sm_"), num("compute_"), s.arch_list.join(" "), src)
                    }
                    // A conda package is not PyPI's build of that release: its list is its own.
                    _ => match crate::compat::torch::build_variant(&version, t.cuda.as_deref())
                        .filter(|_| t.conda_build.is_none())
                        .zip(platform)
                        .and_then(|(v, p)| builds_of(&version, p).find(|b| b.variant == v))
                    {
                        Some(b) => (b.sass.to_vec(), b.ptx.to_vec(), b.arch_list(), format!("official torch {} {} {} build ({})", b.release, b.variant, b.platform.as_str(), b.source)),
                        None => continue,
                    },
                };
                let mut seen = Vec::new();
                for g in &gpus {
                    if seen.contains(&g.cc) || covers(&sass, &ptx, g.cc) {
                        continue;
                    }
                    seen.push(g.cc);
                    // Against every entry, SASS or PTX: a PTX-only list is still a range of GPUs.
                    let arch = g.cc.major * 10 + g.cc.minor;
                    let all = || sass.iter().chain(&ptx).copied();
                    let why = match (all().min(), all().max()) {
                        (_, Some(newest)) if arch > newest => "The GPU is newer than this build.",
                        (Some(oldest), _) if arch < oldest => "This build dropped support for the GPU's architecture.",
                        (Some(_), Some(_)) => "This build skips the GPU's architecture: it has kernels for older and newer GPUs, not this one.",
                        _ => "",
                    };
                    let mut f = Finding::new(
                        codes::GD043,
                        Severity::Error,
                        format!("torch {version}{where_} has no kernels for {} ({}): \"no kernel image is available for execution on the device\"", g.name, g.cc.sm()),
                    )
                    .detail(format!(
                        "The build's architectures are {list}. A GPU runs SASS compiled for its own major version and an equal or lower minor, or PTX the driver compiles; {} has neither. torch warns \"{} with CUDA capability {} is not compatible with the current PyTorch installation\" and every kernel fails. {}",
                        g.cc.sm(), g.name, g.cc.sm(), why
                    ))
                    .evidence(key.clone(), format!("compiled for {list}"), source.clone())
                    .evidence(Subject::GpuModel(g.name.clone()), format!("{}: compute capability {}", g.name, g.cc), g.source.clone());
                    if !crate::compat::sources::is_confirmed(&source) {
                        f.detail = format!("{} This architecture list is a table row that no primary source confirms (no release file, no scanned wheel); `python -c \"import torch; print(torch._C._cuda_getArchFlags())\"` prints the build's own.", f.detail);
                    }
                    f = match cuda_pick {
                        Some(p) => {
                            let confirmed = p.pins.first().and_then(|pin| builds_of(&pin.version, platform.unwrap_or(Platform::X86_64))
                                .find(|b| p.torch_backend.as_deref() == Some(b.variant)))
                                .is_none_or(|b| b.confirmed());
                            rec.add_fix(f, format!("Install {} (CUDA {rec_cuda}), which has {} kernels{}", p.label, g.cc.sm(), if confirmed { "" } else { " (an architecture list not confirmed by a primary source)" }))
                        }
                        _ => f.fix_text(format!("No official torch build supports {} with this driver: build from source with TORCH_CUDA_ARCH_LIST={}.{} or upgrade the driver (`gpudoctor recommend torch` says which)", g.cc.sm(), g.cc.major, g.cc.minor)),
                    };
                    out.push(f);
                }
            }
        }
    }
    Outcome::Checked(out)
}

/// "driver 550.54.15", or "the driver".
fn driver_name(driver: &Option<DriverFact>) -> String {
    match driver {
        Some(d) => format!("driver {}", d.version.as_str()),
        None => "the driver".into(),
    }
}

/// "driver 550.54.15 (CUDA 12.4)": the version and the newest CUDA it runs natively.
fn driver_text(driver: &Option<DriverFact>) -> String {
    match driver {
        Some(d) => match max_cuda_for_driver(&d.version) {
            Some(m) => format!("driver {} (CUDA {})", d.version.as_str(), m.cuda),
            None => format!("driver {}", d.version.as_str()),
        },
        None => "the driver".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;
    use crate::facts::nvml::Field;
    use crate::testing::*;

    fn with_torch(t: Torch) -> Snapshot {
        let mut s = healthy();
        primary_env(&mut s).torch = Some(t);
        s
    }

    fn gpus_named(s: &mut Snapshot, name: &str, cc: &str) {
        for i in 0..2 {
            let g = nvml_gpu(s, i);
            g.name = Field::Value(name.into());
            g.compute_capability = Field::Value(cc.into());
        }
    }

    #[test]
    fn the_wheels_platform_picks_the_builds() {
        // A Turing GPU and torch 2.15.0+cu126 with no fatbin read: the x86_64 build has
        // sm_75, the aarch64 one starts at sm_80.
        let mut t = torch("2.15.0+cu126", Some("12.6"));
        t.wheel_machine = Some("aarch64".into());
        let mut s = with_torch(t.clone());
        gpus_named(&mut s, "NVIDIA T4", "7.5");
        let f = only(run(&s), codes::GD043, Severity::Error);
        assert!(
            f.evidence[0].source.contains("cu126 aarch64 build"),
            "{:?}",
            f.evidence
        );
        t.wheel_machine = Some("x86_64".into());
        let mut s = with_torch(t);
        gpus_named(&mut s, "NVIDIA T4", "7.5");
        assert_clean(run(&s));
    }

    #[test]
    fn healthy_torch_runs_here() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_cpu_build_is_an_error_with_the_cuda_wheel() {
        let mut t = torch("2.4.1+cpu", None);
        t.conda_mutex = Some("cpu".into());
        let f = only(run(&with_torch(t)), codes::GD041, Severity::Error);
        assert!(f.title.contains("CPU-only build"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "pip install --force-reinstall torch==2.4.1 torchvision==0.19.1 --index-url https://download.pytorch.org/whl/cu124"
        );
        assert!(evidence_mentions(&f, "pytorch-mutex=cpu"));
    }

    #[test]
    fn a_rocm_build_is_an_error() {
        let mut t = torch("2.4.1+rocm6.1", None);
        t.hip = Some("6.1.40091".into());
        let f = only(run(&with_torch(t)), codes::GD041, Severity::Error);
        assert!(f.title.contains("ROCm (AMD) build"), "{}", f.title);
    }

    #[test]
    fn a_driver_too_old_for_torchs_cuda_is_an_error() {
        let mut s = healthy();
        gpus_named(&mut s, "NVIDIA A100-SXM4-80GB", "8.0");
        set_driver(&mut s, "470.82.01");
        let f = only(run(&s), codes::GD042, Severity::Error);
        assert!(
            f.title.contains("driver 470.82.01 is too old"),
            "{}",
            f.title
        );
        assert!(
            f.fix[0]
                .text
                .starts_with("Upgrade the NVIDIA driver to 525"),
            "{:?}",
            f.fix
        );
        assert!(
            first_cmd(&f)
                .contains("torch==2.4.1 torchvision==0.19.1 --index-url https://download.pytorch.org/whl/cu118"),
            "{}",
            first_cmd(&f)
        );
        // The driver is named once: not "driver 470.82.01 (driver 470.82.01 (CUDA 11.4))".
        let driver = f
            .evidence
            .iter()
            .find(|e| e.fact == Some(Subject::DriverVersion))
            .unwrap();
        assert_eq!(driver.value, "driver 470.82.01 (CUDA 11.4)");
        for fix in &f.fix {
            assert!(fix.text.matches("driver").count() <= 1, "{}", fix.text);
        }
    }

    #[test]
    fn a_driver_older_than_the_gpu_gets_only_the_upgrade() {
        // R470 runs no Hopper GPU: no torch build helps until the driver is upgraded.
        let mut s = healthy();
        set_driver(&mut s, "470.82.01");
        let f = only(run(&s), codes::GD042, Severity::Error);
        assert_eq!(f.fix.len(), 1, "{:?}", f.fix);
        assert!(f.fix[0]
            .text
            .starts_with("Upgrade the NVIDIA driver to 525"));
    }

    #[test]
    fn a_gpu_newer_than_the_builds_arches_is_an_error() {
        let mut s = healthy();
        torch_mut(&mut s).arches = Some(Fact::value(
            "libtorch_cuda.so",
            arches(&["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"]),
        ));
        let f = only(run(&s), codes::GD043, Severity::Error);
        assert!(
            f.title
                .contains("has no kernels for NVIDIA H100 80GB HBM3 (sm_90)"),
            "{}",
            f.title
        );
        assert!(f.detail.contains("newer than this build"), "{}", f.detail);
        assert!(
            first_cmd(&f).starts_with("pip install --force-reinstall torch=="),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn a_gpu_older_than_the_builds_arches_is_an_error() {
        let mut s = healthy();
        gpus_named(&mut s, "Tesla K80", "3.7");
        let f = only(run(&s), codes::GD043, Severity::Error);
        assert!(f.title.contains("Tesla K80 (sm_37)"), "{}", f.title);
        assert!(f.detail.contains("dropped support"), "{}", f.detail);
    }

    #[test]
    fn without_a_scan_the_official_builds_arches_decide() {
        let mut s = healthy();
        torch_mut(&mut s).arches = None;
        assert_clean(run(&s));
        gpus_named(&mut s, "NVIDIA GeForce RTX 5090", "12.0");
        only(run(&s), codes::GD043, Severity::Error);
    }

    #[test]
    fn pypis_unlabelled_build_is_judged_by_its_cuda_and_a_conda_one_is_not() {
        // PyPI's torch 2.5.1 is the cu124 build without the label: no sm_120 in it.
        let mut s = with_torch(torch("2.5.1", Some("12.4")));
        gpus_named(&mut s, "NVIDIA GeForce RTX 5090", "12.0");
        torch_mut(&mut s).arches = None;
        let f = only(run(&s), codes::GD043, Severity::Error);
        assert!(
            f.evidence[0].source.contains("2.5.1 cu124 x86_64 build"),
            "{:?}",
            f.evidence
        );
        // conda's pytorch 2.5.1 is built with its own architecture list.
        torch_mut(&mut s).conda_build = Some("cuda124_py312h0".into());
        assert_clean(run(&s));
    }

    #[test]
    fn several_environments_are_named() {
        let mut s = healthy();
        let mut other = primary_env(&mut s).clone();
        other.primary = false;
        other.site = "/opt/conda/lib/python3.11/site-packages".into();
        other.torch = Some(torch("2.4.1+cpu", None));
        s.python.as_mut().unwrap().push(other);
        let f = only(run(&s), codes::GD041, Severity::Error);
        assert!(
            f.title
                .contains("in /opt/conda/lib/python3.11/site-packages"),
            "{}",
            f.title
        );
    }

    #[test]
    fn not_applicable_without_torch_or_gpu() {
        let mut s = healthy();
        s.python = None;
        assert_na(run(&s));
        let mut s = healthy();
        primary_env(&mut s).torch = None;
        assert_na(run(&s));
        let mut s = no_gpu();
        s.python = healthy().python;
        assert_na(run(&s));
    }

    #[test]
    fn a_ptx_only_build_too_new_for_an_old_gpu_says_dropped() {
        let mut s = healthy();
        gpus_named(&mut s, "Tesla K80", "3.7");
        torch_mut(&mut s).arches = Some(Fact::value("libtorch_cuda.so", arches(&["compute_70"])));
        let f = only(run(&s), codes::GD043, Severity::Error);
        assert!(f.detail.contains("dropped support"), "{}", f.detail);
    }

    #[test]
    fn a_gpu_between_the_builds_arches_is_skipped_not_newer() {
        let mut s = healthy();
        gpus_named(&mut s, "NVIDIA A100-SXM4-80GB", "8.0");
        torch_mut(&mut s).arches = Some(Fact::value(
            "libtorch_cuda.so",
            arches(&["sm_70", "compute_90"]),
        ));
        let f = only(run(&s), codes::GD043, Severity::Error);
        assert!(
            f.detail.contains("skips the GPU's architecture"),
            "{}",
            f.detail
        );
    }
}
