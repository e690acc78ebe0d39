//! GD012–GD013: debugging and profiling switches left set, which slow or alter
//! every CUDA process (the variables DCGM's diagnostic also warns about).

use super::{Outcome, Rule};
use crate::codes;
use crate::envvars;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "debug_env",
    codes: &[codes::GD012, codes::GD013],
    views: &[],
    checks: "no debugging or profiling variable is left set",
    judges: &[SubjectKind::RuledVariables],
    run,
};

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
    if let Some(v) = env
        .value(envvars::CUDA_LAUNCH_BLOCKING.name)
        .filter(|v| is_truthy(v))
    {
        out.push(
            Finding::new(codes::GD012, Severity::Warning, format!("CUDA_LAUNCH_BLOCKING={v} is set: every kernel launch is synchronous"))
                .detail("CUDA_LAUNCH_BLOCKING makes the CPU wait for each kernel to finish before launching the next. That is how you find which kernel failed while debugging, and it costs throughput everywhere else (often 2x or worse); some multi-GPU jobs hang with it. It is often left in train.py or a shell profile.")
                .evidence(Subject::env("CUDA_LAUNCH_BLOCKING"), format!("CUDA_LAUNCH_BLOCKING={v}"), "environment")
                .fix_cmd("Unset it unless you are debugging a kernel error right now", "unset CUDA_LAUNCH_BLOCKING")
                .fix_cmd("Find where it is set", "grep -rn CUDA_LAUNCH_BLOCKING ~/.bashrc ~/.profile ~/.zshrc . 2>/dev/null"),
        );
    }
    // The registry marks the switches GD013 reports.
    for (name, left_set) in envvars::ALL
        .iter()
        .filter_map(|var| Some((var.name, var.left_set?)))
    {
        let Some(v) = env.value(name) else { continue };
        if left_set.truthy_only && !is_truthy(v) {
            continue;
        }
        let effect = left_set.effect;
        out.push(
            Finding::new(codes::GD013, Severity::Warning, format!("{name} is set"))
                .detail(format!(
                    "{name} {effect}. Leave it set only while debugging or profiling."
                ))
                .evidence(Subject::env(name), format!("{name}={v}"), "environment")
                .fix_cmd(
                    format!("Unset {name} unless you are debugging or profiling"),
                    crate::sh!("unset {}", name),
                ),
        );
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn healthy_environment_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn launch_blocking_is_a_warning() {
        let mut s = healthy();
        set_env(&mut s, "CUDA_LAUNCH_BLOCKING", "1");
        let f = only(run(&s), codes::GD012, Severity::Warning);
        assert!(f.title.contains("synchronous"), "{}", f.title);
        assert_eq!(first_cmd(&f), "unset CUDA_LAUNCH_BLOCKING");
    }

    #[test]
    fn false_values_do_not_count() {
        let mut s = healthy();
        set_env(&mut s, "CUDA_LAUNCH_BLOCKING", "0");
        set_env(&mut s, "PYTORCH_NO_CUDA_MEMORY_CACHING", "false");
        assert_clean(run(&s));
    }

    #[test]
    fn debugger_and_injection_variables_are_warnings() {
        let mut s = healthy();
        set_env(&mut s, "CUDA_INJECTION64_PATH", "/opt/nsight/libinj.so");
        let f = only(run(&s), codes::GD013, Severity::Warning);
        assert!(
            f.title.contains("CUDA_INJECTION64_PATH is set"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "unset CUDA_INJECTION64_PATH");
        set_env(&mut s, "PYTORCH_NO_CUDA_MEMORY_CACHING", "1");
        assert_eq!(findings(run(&s)).len(), 2);
    }

    #[test]
    fn not_applicable_without_the_environment_probe() {
        let mut s = healthy();
        s.environment = None;
        assert_na(run(&s));
    }
}
