//! GD050: two frameworks in one environment that need different CUDA or cuDNN majors.
//! Each loads its libraries by soname into the same process; whichever is imported first
//! decides, and the other fails ("libcudnn.so.9: cannot open shared object file",
//! "Could not load library libcudnn_ops_infer.so.8").

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::packages;
use crate::compat::CudaVersion;
use crate::facts::pytorch::{Dist, PythonEnv};
use crate::findings::{Finding, Severity};
use crate::pyversion::cmp_versions;
use crate::recommend::{self, Machine};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "frameworks",
    codes: &[codes::GD050],
    views: &[],
    checks: "the CUDA frameworks in one environment agree on CUDA and cuDNN majors",
    judges: &[],
    run,
};

/// (CUDA major, cuDNN major) a framework distribution needs, where its name or release
/// says so: cupy-cudaNNx and jax-cudaNN-plugin by name; onnxruntime-gpu and TensorFlow by
/// their release's row in compat::packages (read from the wheels), else by the releases
/// their install pages name: onnxruntime-gpu ≥ 1.19 and TensorFlow ≥ 2.18 build on CUDA 12 +
/// cuDNN 9, TensorFlow 2.15–2.17 on CUDA 12 + cuDNN 8.
fn needs(d: &Dist) -> Option<(u32, Option<u32>)> {
    let n = d.name.as_str();
    if matches!(n, "onnxruntime-gpu" | "tensorflow") {
        if let Some(r) = packages::release_of(n, &d.version) {
            let major = CudaVersion::parse(r.cuda?)?.major;
            return Some((major, r.cudnn_major));
        }
    }
    let digits = |s: &str| -> Option<u32> {
        s.chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
            .parse()
            .ok()
    };
    if let Some(rest) = n.strip_prefix("cupy-cuda") {
        let v = digits(rest)?;
        return Some((if v >= 100 { v / 10 } else { v }, None));
    }
    if let Some(rest) = n.strip_prefix("jax-cuda") {
        return Some((digits(rest)?, None));
    }
    let ge = |v: &str| cmp_versions(&d.version, v) != std::cmp::Ordering::Less;
    match n {
        "onnxruntime-gpu" if ge("1.19") => Some((12, Some(9))),
        "tensorflow" if ge("2.18") => Some((12, Some(9))),
        "tensorflow" if ge("2.15") => Some((12, Some(8))),
        _ => None,
    }
}

fn torch_needs(env: &PythonEnv) -> Option<(u32, Option<u32>)> {
    let t = env.torch.as_ref()?;
    let cuda: u32 = t.cuda.as_deref()?.split('.').next()?.parse().ok()?;
    let cudnn = env
        .nvidia_wheels
        .iter()
        .find(|w| w.name.starts_with("nvidia-cudnn"))
        .and_then(|w| w.version.split('.').next()?.parse().ok());
    Some((cuda, cudnn))
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(envs) = &snap.python else {
        return Outcome::NotApplicable("the pytorch probe did not run".into());
    };
    let mut out = Vec::new();
    for env in envs {
        let Some((tc, tn)) = torch_needs(env) else {
            continue;
        };
        let tv = env
            .torch
            .as_ref()
            .map(|t| t.dist_version.clone())
            .unwrap_or_default();
        // JAX's plugin and PJRT wheels are one framework: one finding.
        let mut reported: Vec<&str> = Vec::new();
        for d in &env.frameworks {
            let Some((fc, fnn)) = needs(d) else { continue };
            let cudnn_clash = matches!((tn, fnn), (Some(a), Some(b)) if a != b);
            if fc == tc && !cudnn_clash {
                continue;
            }
            let group = if d.name.starts_with("jax") {
                "jax"
            } else {
                d.name.as_str()
            };
            if reported.contains(&group) {
                continue;
            }
            // The loader's verdict on this framework's modules, opened after torch's, where
            // the linkage probe saw them: a failure is GD060's error; modules that all load
            // make the clash a note.
            let linked: Vec<&crate::facts::linkage::Module> = snap
                .linkage
                .iter()
                .flatten()
                .filter(|l| l.site == env.site)
                .flat_map(|l| &l.modules)
                .filter(|m| {
                    m.dist
                        .as_deref()
                        .and_then(|x| x.split(' ').next())
                        .is_some_and(|n| n == d.name || (group == "jax" && n.starts_with("jax")))
                })
                .collect();
            if linked.iter().any(|m| !m.loads() && m.optional.is_none()) {
                continue;
            }
            reported.push(group);
            let loads = !linked.is_empty();
            let what = if fc != tc {
                format!("CUDA {fc} (torch uses CUDA {tc})")
            } else {
                format!(
                    "cuDNN {} (torch's wheel is cuDNN {})",
                    fnn.unwrap_or(0),
                    tn.unwrap_or(0)
                )
            };
            let (severity, detail) = if loads {
                (Severity::Info, format!("The loader finds what each needs: every native module of {} loads after torch's (gpudoctor libs shows the bindings). Two majors of the CUDA libraries then live in one process, which costs memory and load time.", d.name))
            } else {
                (Severity::Warning, "Both load CUDA libraries by soname into one process. Whichever framework is imported first loads its majors, and the other then fails to find its own (\"libcudnn.so.9: cannot open shared object file\") or runs against the wrong ones.".to_string())
            };
            out.push(
                Finding::new(codes::GD050, severity, format!("{} {} needs {what} in the same environment as torch {tv}", d.name, d.version))
                    .detail(detail)
                    .evidence(Subject::torch(&env.site), format!("{} {} vs torch {tv}", d.name, d.version), env.site.clone())
                    .fix_text("Use one environment per framework, or versions built for the same CUDA and cuDNN majors"),
            );
            // The release of the framework built for torch's majors, where gpudoctor has
            // its table: the one recommender's answer for this environment.
            let package = if d.name.starts_with("jax") {
                "jax"
            } else {
                d.name.as_str()
            };
            if packages::tables().iter().any(|(n, _)| *n == package) {
                let rec = recommend::frameworks::recommend(&Machine::for_env(snap, env), package);
                if let Some(p) = &rec.pick {
                    if let Some(f) = out.last_mut() {
                        *f = rec.add_fix(
                            f.clone(),
                            format!(
                                "Or install {}, built for the CUDA and cuDNN majors torch uses",
                                p.label
                            ),
                        );
                    }
                }
            }
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn with_framework(name: &str, version: &str) -> Snapshot {
        let mut s = healthy();
        primary_env(&mut s).frameworks.push(dist(name, version));
        s
    }

    #[test]
    fn torch_alone_or_with_matching_frameworks_is_clean() {
        assert_clean(run(&healthy()));
        assert_clean(run(&with_framework("tensorflow", "2.18.0")));
        assert_clean(run(&with_framework("jax-cuda12-plugin", "0.4.30")));
        assert_clean(run(&with_framework("cupy-cuda12x", "13.2.0")));
    }

    #[test]
    fn another_cuda_major_is_a_warning() {
        let f = only(
            run(&with_framework("cupy-cuda11x", "13.2.0")),
            codes::GD050,
            Severity::Warning,
        );
        assert!(
            f.title.contains("needs CUDA 11 (torch uses CUDA 12)"),
            "{}",
            f.title
        );
        let f = only(
            run(&with_framework("cupy-cuda111", "9.6.0")),
            codes::GD050,
            Severity::Warning,
        );
        assert!(f.title.contains("needs CUDA 11"), "{}", f.title);
    }

    #[test]
    fn another_cudnn_major_is_a_warning() {
        let f = only(
            run(&with_framework("tensorflow", "2.16.1")),
            codes::GD050,
            Severity::Warning,
        );
        assert!(
            f.title.contains("cuDNN 8 (torch's wheel is cuDNN 9)"),
            "{}",
            f.title
        );
    }

    #[test]
    fn the_loaders_verdict_replaces_the_guess() {
        use crate::loader::{Failure, How, Object};
        let objects = vec![Object::for_test(
            "/x/_pywrap.so",
            None,
            How::Path,
            Vec::new(),
        )];
        // Its modules all load after torch's: a note.
        let mut s = with_framework("tensorflow", "2.16.1");
        let m = linked_module("tensorflow", "tensorflow 2.16.1", 0, Vec::new());
        s.linkage = Some(vec![linkage(vec![m], objects.clone(), Vec::new())]);
        let f = only(run(&s), codes::GD050, Severity::Info);
        assert!(
            f.detail.contains("every native module of tensorflow loads"),
            "{}",
            f.detail
        );
        // One fails: GD060 reports it, not this rule.
        let missing = Failure::Missing {
            needed: "libcudnn.so.8".into(),
            by: "/x/_pywrap.so".into(),
        };
        let m = linked_module("tensorflow", "tensorflow 2.16.1", 0, vec![missing]);
        s.linkage = Some(vec![linkage(vec![m], objects, Vec::new())]);
        assert_clean(run(&s));
    }

    #[test]
    fn a_cpu_torch_has_nothing_to_clash_with() {
        let mut s = with_framework("cupy-cuda11x", "13.2.0");
        primary_env(&mut s).torch = Some(torch("2.4.1+cpu", None));
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_the_pytorch_probe() {
        let mut s = healthy();
        s.python = None;
        assert_na(run(&s));
    }
}
