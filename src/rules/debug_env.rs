//! GD012–GD013: debugging and profiling switches left set, which slow or alter
//! every CUDA process (the variables DCGM's diagnostic also warns about).

use super::{Outcome, Rule};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;

pub const RULE: Rule = Rule {
    name: "debug_env",
    codes: &["GD012", "GD013"],
    views: &[],
    checks: "no debugging or profiling variable is left set",
    run,
};

/// (variable, counts as set only when truthy, what it does to every CUDA process)
const DEBUG_VARS: &[(&str, bool, &str)] = &[
    ("NSIGHT_CUDA_DEBUGGER", false, "marks the process as running under the CUDA debugger, which changes how the driver schedules and reports work"),
    ("CUDA_INJECTION64_PATH", false, "makes every CUDA process load this library at start-up (a profiler or sanitizer), which adds overhead and can change behaviour"),
    ("CUDA_INJECTION32_PATH", false, "makes every 32-bit CUDA process load this library at start-up (a profiler or sanitizer)"),
    ("CUDA_AUTO_BOOST", false, "overrides the GPU's boost-clock policy (a legacy switch)"),
    ("CUDA_ENABLE_COREDUMP_ON_EXCEPTION", true, "writes a GPU core dump on every device exception, which is slow and fills the disk"),
    ("CUDA_COREDUMP_FILE", false, "names where GPU core dumps go: core dumps are being configured"),
    ("CUDA_DEVICE_WAITS_ON_EXCEPTION", true, "makes a faulting kernel wait for a debugger to attach instead of failing: jobs hang instead of erroring"),
    ("CUDA_PROFILE", true, "turns on the legacy command-line profiler, which serialises and logs every launch"),
    ("COMPUTE_PROFILE", true, "turns on the legacy command-line profiler, which serialises and logs every launch"),
    ("OPENCL_PROFILE", true, "turns on the legacy OpenCL profiler"),
    ("PYTORCH_NO_CUDA_MEMORY_CACHING", true, "disables PyTorch's caching allocator: every tensor allocation calls cudaMalloc/cudaFree, a large slowdown"),
];

fn is_truthy(v: &str) -> bool {
    let v = v.trim();
    !(v.is_empty()
        || v == "0"
        || v.eq_ignore_ascii_case("false")
        || v.eq_ignore_ascii_case("off")
        || v.eq_ignore_ascii_case("no"))
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(env) = &snap.environment else {
        return Outcome::NotApplicable("environment probe did not run".into());
    };
    let mut out = Vec::new();
    if let Some(v) = env.value("CUDA_LAUNCH_BLOCKING").filter(|v| is_truthy(v)) {
        out.push(
            Finding::new("GD012", Severity::Warning, format!("CUDA_LAUNCH_BLOCKING={v} is set: every kernel launch is synchronous"))
                .detail("CUDA_LAUNCH_BLOCKING makes the CPU wait for each kernel to finish before launching the next. That is how you find which kernel failed while debugging, and it costs throughput everywhere else (often 2x or worse); some multi-GPU jobs hang with it. It is often left in train.py or a shell profile.")
                .evidence("env:CUDA_LAUNCH_BLOCKING", format!("CUDA_LAUNCH_BLOCKING={v}"), "environment")
                .fix_cmd("Unset it unless you are debugging a kernel error right now", "unset CUDA_LAUNCH_BLOCKING")
                .fix_cmd("Find where it is set", "grep -rn CUDA_LAUNCH_BLOCKING ~/.bashrc ~/.profile ~/.zshrc . 2>/dev/null"),
        );
    }
    for (name, truthy_only, effect) in DEBUG_VARS {
        let Some(v) = env.value(name) else { continue };
        if *truthy_only && !is_truthy(v) {
            continue;
        }
        out.push(
            Finding::new("GD013", Severity::Warning, format!("{name} is set"))
                .detail(format!(
                    "{name} {effect}. Leave it set only while debugging or profiling."
                ))
                .evidence(format!("env:{name}"), format!("{name}={v}"), "environment")
                .fix_cmd(
                    format!("Unset {name} unless you are debugging or profiling"),
                    format!("unset {name}"),
                ),
        );
    }
    Outcome::Checked(out)
}
