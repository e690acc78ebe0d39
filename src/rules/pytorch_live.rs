//! GD048/GD049: what torch said about itself (--python-import). Import failing or CUDA
//! unavailable with torch's own words; and the static probe and the live answer disagreeing —
//! another torch than the files say, or CUDA libraries loaded from outside torch's wheels
//! (LD_LIBRARY_PATH, LD_PRELOAD, a system cuDNN).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::pytorch_live::LiveResult;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "pytorch_live",
    codes: &[codes::GD048, codes::GD049],
    views: &[],
    checks: "torch imports, sees CUDA, and loads the libraries its files say",
    judges: &[SubjectKind::PythonImport],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(live) = &snap.python_live else {
        return Outcome::NotApplicable("--python-import was not given".into());
    };
    let a = match &live.result {
        LiveResult::Ok { answer } => answer,
        LiveResult::NotProbed { reason } => return Outcome::NotApplicable(reason.clone()),
        LiveResult::TimedOut { seconds } => {
            return Outcome::Checked(vec![Finding::new(codes::GD048, Severity::Warning, format!("Importing torch in {} did not finish within {seconds:.1} s", live.python))
                .detail("A first import after installation or on a network filesystem can take long; an import that hangs usually waits on a wedged driver or a lock.")
                .evidence(Subject::PythonImport, format!("timed out after {seconds:.1} s"), live.python.clone())
                .fix_cmd("Give it more time", crate::sh!("gpudoctor check --python {} --python-import --timeout 180", live.python))])
        }
        LiveResult::Failed { detail } => {
            return Outcome::Checked(vec![Finding::new(codes::GD048, Severity::Warning, format!("Could not ask {} about torch", live.python))
                .detail(detail.clone())
                .evidence(Subject::PythonImport, detail.clone(), live.python.clone())])
        }
    };
    let mut out = Vec::new();
    if let Some(e) = &a.import_error {
        if !a.no_torch() {
            out.push(
                Finding::new(codes::GD048, Severity::Error, format!("`import torch` fails in {}: {}", live.python, e.lines().next().unwrap_or(e)))
                    .detail(format!("Python {} raised {e}. The static findings above usually name the cause (a missing nvidia-* wheel, a library shadowed by LD_LIBRARY_PATH).", a.python_version.as_deref().unwrap_or("?")))
                    .evidence(Subject::PythonImport, e.clone(), live.python.clone()),
            );
        }
    } else if a.cuda.is_some()
        && a.is_available == Some(false)
        && (snap.nvidia_hardware_seen() || snap.nvml_system().is_some())
        && super::container_cause(snap).is_none()
    {
        let mut f = Finding::new(codes::GD048, Severity::Error, format!("torch {} imports but torch.cuda.is_available() is False", a.torch.as_deref().unwrap_or("?")))
            .detail("This machine has an NVIDIA GPU and torch is a CUDA build, yet torch cannot use it. torch's own warnings (below) and the driver, device-node and library findings in this report say why.")
            .evidence(Subject::PythonImport, format!("is_available() = False in {}", live.python), live.python.clone());
        for w in &a.warnings {
            f = f.context(format!("torch warned: {w}"), live.python.clone());
        }
        out.push(f);
    }
    // Static vs live.
    let envs = snap.python.as_deref().unwrap_or(&[]);
    if let (Some(live_v), Some(env)) = (&a.torch, envs.iter().find(|e| e.primary)) {
        if let Some(t) = &env.torch {
            let static_v = t
                .version
                .get()
                .cloned()
                .unwrap_or_else(|| t.dist_version.clone());
            if *live_v != static_v {
                out.push(
                    Finding::new(codes::GD049, Severity::Warning, format!("{} imports torch {live_v}, not the torch {static_v} in {}", live.python, env.site))
                        .detail("The interpreter finds torch somewhere else than the environment gpudoctor read (PYTHONPATH, a user site-packages, another venv activated in the shell), so what you inspect is not what runs.")
                        .evidence(Subject::torch(&env.site), format!("files: {static_v}; import: {live_v}"), live.python.clone())
                        .fix_cmd("See where it comes from", crate::sh!("{} -c 'import torch; print(torch.__file__)'", live.python)),
                );
            }
            // CUDA libraries mapped from outside the environment's wheels.
            let foreign: Vec<&String> = a
                .loaded
                .iter()
                .filter(|p| {
                    [
                        "libcudnn",
                        "libcublas",
                        "libnccl",
                        "libnvJitLink",
                        "libcudart",
                    ]
                    .iter()
                    .any(|k| p.contains(k))
                })
                .filter(|p| !p.starts_with(&env.site))
                .collect();
            if !foreign.is_empty() && t.kind() == "cuda" && !env.nvidia_wheels.is_empty() {
                let mut f = Finding::new(codes::GD049, Severity::Warning, format!("torch loaded CUDA libraries from outside its wheels: {}", foreign.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")))
                    .detail("torch's nvidia-* wheels are installed, but the running process mapped other copies — LD_LIBRARY_PATH, LD_PRELOAD or a system library came first. Versions other than the pinned ones cause undefined-symbol errors and subtle numerical differences.")
                    .evidence(Subject::torch(&env.site), "loaded from outside the environment", "/proc/self/maps of the import");
                for p in &foreign {
                    f = f.context((*p).clone(), "/proc/self/maps");
                }
                out.push(f.fix_text("Remove CUDA/cuDNN directories from LD_LIBRARY_PATH (and LD_PRELOAD) in the environment that runs Python"));
            }
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::pytorch_live::{LiveAnswer, LiveTorch};
    use crate::testing::*;

    const PY: &str = "/home/alice/venv/bin/python";

    fn answer() -> LiveAnswer {
        LiveAnswer {
            python_version: Some("3.11.9".into()),
            torch: Some("2.4.1+cu124".into()),
            cuda: Some("12.4".into()),
            is_available: Some(true),
            device_count: Some(2),
            arch_flags: None,
            cudnn: Some(90100),
            warnings: Vec::new(),
            import_error: None,
            loaded: vec![format!("{SITE}/nvidia/cudnn/lib/libcudnn.so.9")],
        }
    }

    fn live(result: LiveResult) -> Snapshot {
        let mut s = healthy();
        s.python_live = Some(LiveTorch {
            python: PY.into(),
            result,
        });
        s
    }

    fn with(edit: impl FnOnce(&mut LiveAnswer)) -> Snapshot {
        let mut a = answer();
        edit(&mut a);
        live(LiveResult::Ok { answer: a })
    }

    #[test]
    fn a_working_import_is_clean() {
        assert_clean(run(&with(|_| {})));
        assert_clean(run(&with(|a| {
            a.import_error = Some("ModuleNotFoundError: No module named 'torch'".into())
        })));
    }

    #[test]
    fn a_failed_import_is_an_error() {
        let f = only(
            run(&with(|a| {
                a.import_error =
                    Some("ImportError: libcudnn.so.9: cannot open shared object file\nmore".into())
            })),
            codes::GD048,
            Severity::Error,
        );
        assert!(f.title.contains("`import torch` fails"), "{}", f.title);
        assert!(
            f.title.ends_with("cannot open shared object file"),
            "{}",
            f.title
        );
    }

    #[test]
    fn cuda_unavailable_on_a_gpu_host_is_an_error() {
        let s = with(|a| {
            a.is_available = Some(false);
            a.warnings = vec!["CUDA initialization: CUDA unknown error".into()];
        });
        let f = only(run(&s), codes::GD048, Severity::Error);
        assert!(
            f.title.contains("torch.cuda.is_available() is False"),
            "{}",
            f.title
        );
        assert!(evidence_mentions(&f, "CUDA unknown error"));
    }

    #[test]
    fn cuda_unavailable_in_a_container_given_no_gpu_is_gd062s_fact() {
        let mut s = with(|a| a.is_available = Some(false));
        in_container(&mut s, "docker");
        nodes_mut(&mut s).nodes.clear();
        assert_clean(run(&s));
        // The same container without `compute`: GD064's fact.
        let mut s = with(|a| a.is_available = Some(false));
        in_container(&mut s, "docker");
        set_env(&mut s, "NVIDIA_DRIVER_CAPABILITIES", "utility");
        libs_mut(&mut s)
            .libraries
            .retain(|l| l.soname != "libcuda.so.1");
        assert_clean(run(&s));
    }

    #[test]
    fn cuda_unavailable_without_a_gpu_is_expected() {
        let mut s = no_gpu();
        s.python_live = with(|a| a.is_available = Some(false)).python_live;
        assert_clean(run(&s));
    }

    #[test]
    fn a_hang_or_a_failure_to_ask_is_a_warning() {
        let f = only(
            run(&live(LiveResult::TimedOut { seconds: 60.0 })),
            codes::GD048,
            Severity::Warning,
        );
        assert!(
            f.title.contains("did not finish within 60.0 s"),
            "{}",
            f.title
        );
        assert_eq!(
            first_cmd(&f),
            "gpudoctor check --python /home/alice/venv/bin/python --python-import --timeout 180"
        );
        let f = only(
            run(&live(LiveResult::Failed {
                detail: "exec failed".into(),
            })),
            codes::GD048,
            Severity::Warning,
        );
        assert!(f.title.contains("Could not ask"), "{}", f.title);
    }

    #[test]
    fn another_torch_than_the_files_say_is_a_warning() {
        let f = only(
            run(&with(|a| a.torch = Some("2.5.0+cu121".into()))),
            codes::GD049,
            Severity::Warning,
        );
        assert!(
            f.title
                .contains("imports torch 2.5.0+cu121, not the torch 2.4.1+cu124"),
            "{}",
            f.title
        );
        assert_eq!(
            first_cmd(&f),
            format!("{PY} -c 'import torch; print(torch.__file__)'")
        );
    }

    #[test]
    fn cuda_libraries_from_outside_the_wheels_are_a_warning() {
        let s = with(|a| a.loaded.push(format!("{LIB_DIR}/libcudnn.so.9.0.0")));
        let f = only(run(&s), codes::GD049, Severity::Warning);
        assert!(f.title.contains("from outside its wheels"), "{}", f.title);
        assert!(evidence_mentions(
            &f,
            "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.0.0"
        ));
    }

    #[test]
    fn not_applicable_without_python_import() {
        assert_na(run(&healthy()));
        let reason = assert_na(run(&live(LiveResult::NotProbed {
            reason: "under --root nothing is executed".into(),
        })));
        assert!(reason.contains("--root"), "{reason}");
    }
}
