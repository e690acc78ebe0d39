//! GD055: a GPU on which CUDA could not create a context or load gpudoctor's kernels, with
//! the cause its CUresult points at (busy exclusive GPU, ECC, Fabric Manager, an old JIT).

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::cuda_errors;
use crate::facts::smoke::{SmokeDevice, Step};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::SubjectKind;
use crate::subject::{SmokeStep, Subject};

pub const RULE: Rule = Rule {
    name: "smoke_context",
    codes: &[codes::GD055],
    views: &[super::View::Smoke],
    checks: "every GPU accepted a CUDA context and JIT-compiled the smoke-test kernels",
    judges: &[SubjectKind::SmokeGpu],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let run = match super::smoke_run(snap) {
        Ok(r) => r,
        Err(na) => return na,
    };
    // After an impossible cuDeviceGetCount (GD054), ordinals the driver cannot open are what
    // that count implies, not faults of as many GPUs.
    let count_impossible = run
        .device_count
        .is_some_and(|n| !(0..=crate::smoke::MAX_DEVICES).contains(&n));
    let mut out = Vec::new();
    for d in &run.devices {
        if let Some(e) = d.info_error.as_ref().filter(|_| !count_impossible) {
            out.push(
                Finding::new(
                    codes::GD055,
                    Severity::Error,
                    format!("{}: CUDA cannot open it: {}", d.label(), e.name),
                )
                .evidence(
                    Subject::SmokeStep(d.ordinal, SmokeStep::Device),
                    e.to_string(),
                    "smoke worker",
                )
                .fix_text(
                    cuda_errors::lookup(e.code)
                        .map_or("Check `sudo dmesg | grep -i xid`", |k| k.fix),
                ),
            );
        }
        if let Some(Step::Failed { error, .. }) = &d.context {
            out.push(failure(
                snap,
                d,
                SmokeStep::Context,
                "cannot create a CUDA context",
                error,
                None,
            ));
        }
        if let Some(Step::Failed { error, detail }) = &d.module {
            out.push(failure(
                snap,
                d,
                SmokeStep::Kernels,
                "cannot load PTX kernels",
                error,
                detail.as_deref(),
            ));
        }
    }
    Outcome::Checked(out)
}

fn failure(
    snap: &Snapshot,
    d: &SmokeDevice,
    step: SmokeStep,
    what: &str,
    e: &crate::facts::smoke::CudaError,
    log: Option<&str>,
) -> Finding {
    let known = cuda_errors::lookup(e.code);
    // JIT switched off by the environment is a setting, not a broken GPU.
    let severity = if e.code == 223 {
        Severity::Warning
    } else {
        Severity::Error
    };
    let mut f = Finding::new(
        codes::GD055,
        severity,
        format!("{}: {what}: {}", d.label(), e.name),
    )
    .detail(format!(
        "{} Every CUDA program, PyTorch included, fails the same way on this GPU.",
        known.map_or("The driver refused.", |k| k.cause)
    ))
    .evidence(
        Subject::SmokeStep(d.ordinal, step),
        e.to_string(),
        "smoke worker",
    );
    if let Some(log) = log.filter(|l| !l.is_empty()) {
        f = f.context(
            format!(
                "JIT log: {}",
                log.lines().take(3).collect::<Vec<_>>().join(" ")
            ),
            "cuModuleLoadDataEx",
        );
    }
    let nvml = snap
        .nvml_system()
        .and_then(|s| crate::facts::smoke::nvml_gpu(s, d));
    if e.code == 46 {
        if let Some(g) = nvml {
            if let Some(mode) = g.compute_mode.get() {
                f = f.context(format!("compute mode {mode}"), "NVML");
            }
            if let Some(ps) = g.processes.get().filter(|p| !p.is_empty()) {
                let list: Vec<String> = ps
                    .iter()
                    .map(|p| format!("{} ({})", p.pid, p.name.as_deref().unwrap_or("?")))
                    .collect();
                f = f.context(format!("held by {}", list.join(", ")), "NVML");
            }
        }
    }
    if e.code == 223 {
        if let Some(v) = snap.env_value(crate::envvars::CUDA_DISABLE_PTX_JIT.name) {
            f = f.context(format!("CUDA_DISABLE_PTX_JIT={v}"), "environment");
        }
    }
    if e.code == 214 {
        if let Some(n) = nvml.and_then(|g| g.ecc.volatile_uncorrected.get()) {
            f = f.context(format!("{n} volatile uncorrectable ECC errors"), "NVML");
        }
    }
    match known {
        Some(k) => f.fix_text(k.fix),
        None => f.fix_cmd(
            "Look for the GPU's error in the kernel log",
            "sudo dmesg | grep -i xid",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::{Field, Process};
    use crate::facts::smoke::SmokeResult;
    use crate::testing::*;

    fn failed<T>(code: i32, name: &str, detail: Option<&str>) -> Option<Step<T>> {
        Some(Step::Failed {
            error: cuda_error("cuCtxCreate", code, name),
            detail: detail.map(str::to_string),
        })
    }

    #[test]
    fn healthy_contexts_and_kernels_load() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_device_cuda_cannot_open_is_an_error() {
        let mut s = healthy();
        smoke_dev(&mut s, 1).info_error =
            Some(cuda_error("cuDeviceGet", 101, "CUDA_ERROR_INVALID_DEVICE"));
        let f = only(run(&s), codes::GD055, Severity::Error);
        assert!(f.title.contains("CUDA device 1"), "{}", f.title);
        assert!(
            f.title
                .contains("CUDA cannot open it: CUDA_ERROR_INVALID_DEVICE"),
            "{}",
            f.title
        );
    }

    #[test]
    fn after_an_impossible_count_the_ordinals_it_implies_are_not_gpus() {
        let mut s = healthy();
        let n = smoke_run_mut(&mut s).devices.len();
        for ordinal in 0..n {
            smoke_dev(&mut s, ordinal).info_error =
                Some(cuda_error("cuDeviceGet", 101, "CUDA_ERROR_INVALID_DEVICE"));
        }
        smoke_run_mut(&mut s).device_count = Some(4096);
        assert_clean(run(&s));
        // A possible count keeps them: one finding per ordinal.
        smoke_run_mut(&mut s).device_count = Some(n as i32);
        let Outcome::Checked(found) = run(&s) else {
            panic!("not checked")
        };
        assert_eq!(found.len(), n);
        assert!(found.iter().all(|f| f.code == codes::GD055));
    }

    #[test]
    fn a_busy_exclusive_gpu_names_its_holder() {
        let mut s = healthy();
        let g = nvml_gpu(&mut s, 0);
        g.compute_mode = Field::Value("exclusive_process".into());
        g.processes = Field::Value(vec![Process {
            pid: 4242,
            kind: "compute".into(),
            name: Some("python".into()),
            used_memory: None,
        }]);
        smoke_dev(&mut s, 0).context = failed(46, "CUDA_ERROR_DEVICE_UNAVAILABLE", None);
        let f = only(run(&s), codes::GD055, Severity::Error);
        assert!(
            f.title
                .contains("cannot create a CUDA context: CUDA_ERROR_DEVICE_UNAVAILABLE"),
            "{}",
            f.title
        );
        assert!(evidence_mentions(&f, "compute mode exclusive_process"));
        assert!(evidence_mentions(&f, "held by 4242 (python)"));
    }

    #[test]
    fn jit_disabled_by_the_environment_is_a_warning() {
        let mut s = healthy();
        set_env(&mut s, "CUDA_DISABLE_PTX_JIT", "1");
        smoke_dev(&mut s, 0).module = failed(
            223,
            "CUDA_ERROR_JIT_COMPILATION_DISABLED",
            Some("ptxas disabled\nline 2"),
        );
        let f = only(run(&s), codes::GD055, Severity::Warning);
        assert!(f.title.contains("cannot load PTX kernels"), "{}", f.title);
        assert!(evidence_mentions(&f, "CUDA_DISABLE_PTX_JIT=1"));
        assert!(evidence_mentions(&f, "JIT log: ptxas disabled line 2"));
    }

    #[test]
    fn an_unknown_code_points_at_the_kernel_log() {
        let mut s = healthy();
        smoke_dev(&mut s, 0).context = failed(12345, "CUDA_ERROR_FROM_THE_FUTURE", None);
        let f = only(run(&s), codes::GD055, Severity::Error);
        assert_eq!(first_cmd(&f), "sudo dmesg | grep -i xid");
    }

    #[test]
    fn a_crashed_run_is_still_judged() {
        let mut s = healthy();
        smoke_dev(&mut s, 0).context = failed(999, "CUDA_ERROR_UNKNOWN", None);
        let run_ = smoke_run_mut(&mut s).clone();
        smoke_probe(&mut s).result = SmokeResult::Crashed {
            signal: 11,
            stderr: String::new(),
            run: run_,
            during: vec!["cuCtxCreate".into()],
        };
        only(run(&s), codes::GD055, Severity::Error);
    }

    #[test]
    fn not_applicable_when_the_smoke_test_did_not_reach_the_gpus() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        s.smoke = None;
        assert_na(run(&s));
        smoke_failures_are_not_applicable(SmokeResult::LoadFailed {
            code: "library_not_found".into(),
            message: "x".into(),
        });
        smoke_failures_are_not_applicable(SmokeResult::WorkerFailed { detail: "x".into() });
    }

    fn smoke_failures_are_not_applicable(result: SmokeResult) {
        let mut s = healthy();
        smoke_probe(&mut s).result = result;
        assert_na(run(&s));
    }
}
