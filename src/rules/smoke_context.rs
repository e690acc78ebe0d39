//! GD055: a GPU on which CUDA could not create a context or load gpudoctor's kernels, with
//! the cause its CUresult points at (busy exclusive GPU, ECC, Fabric Manager, an old JIT).

use super::{Outcome, Rule};
use crate::compat::cuda_errors;
use crate::findings::{Finding, Severity};
use crate::probes::smoke::{SmokeDevice, Step};
use crate::snapshot::Snapshot;

pub const RULE: Rule = Rule {
    name: "smoke_context",
    codes: &["GD055"],
    views: &[super::View::Smoke],
    checks: "every GPU accepted a CUDA context and JIT-compiled the smoke-test kernels",
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let run = match super::smoke_run(snap) {
        Ok(r) => r,
        Err(na) => return na,
    };
    let mut out = Vec::new();
    for d in &run.devices {
        if let Some(e) = &d.info_error {
            out.push(
                Finding::new(
                    "GD055",
                    Severity::Error,
                    format!("{}: CUDA cannot open it: {}", d.label(), e.name),
                )
                .evidence(
                    format!("smoke:{}:device", d.ordinal),
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
                "context",
                "cannot create a CUDA context",
                error,
                None,
            ));
        }
        if let Some(Step::Failed { error, detail }) = &d.module {
            out.push(failure(
                snap,
                d,
                "kernels",
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
    step: &str,
    what: &str,
    e: &crate::smoke::driver::CudaError,
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
        "GD055",
        severity,
        format!("{}: {what}: {}", d.label(), e.name),
    )
    .detail(format!(
        "{} Every CUDA program, PyTorch included, fails the same way on this GPU.",
        known.map_or("The driver refused.", |k| k.cause)
    ))
    .evidence(
        format!("smoke:{}:{step}", d.ordinal),
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
        .and_then(|s| crate::probes::smoke::nvml_gpu(s, d));
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
