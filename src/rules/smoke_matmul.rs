//! GD056: the GPU computed a wrong FP32 matrix product, or the kernel failed on it. Wrong
//! results from a fixed kernel and fixed inputs mean bad hardware, a bad driver or an
//! unstable overclock — the failure users otherwise meet as NaN losses.

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::smoke::Step;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::SubjectKind;
use crate::subject::{SmokeStep, Subject};

pub const RULE: Rule = Rule {
    name: "smoke_matmul",
    codes: &[codes::GD056],
    views: &[super::View::Smoke],
    checks: "every GPU's FP32 matmul matched the CPU reference within tolerance",
    judges: &[SubjectKind::SmokeMatmul],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let run = match super::smoke_run(snap) {
        Ok(r) => r,
        Err(na) => return na,
    };
    let mut out = Vec::new();
    for d in &run.devices {
        let fact = Subject::SmokeStep(d.ordinal, SmokeStep::Matmul);
        match &d.matmul {
            Some(Step::Ok(m)) if !m.correct => out.push(
                Finding::new(codes::GD056, Severity::Error, format!("{} computed a wrong matrix product", d.label()))
                    .detail(format!(
                        "gpudoctor multiplied two fixed {n}×{n} FP32 matrices on the GPU and compared the result with the CPU: {} of {} elements in {} exactly checked rows were outside the tolerance ({}), and Freivalds' whole-matrix check {}. A fixed kernel on fixed inputs gives wrong numbers only on faulty memory or SMs, a broken driver, or clocks pushed past stability; training on it produces silent corruption or NaN losses.",
                        m.wrong_elements,
                        m.checked_rows as u64 * m.n as u64,
                        m.checked_rows,
                        m.tolerance,
                        if m.freivalds_passed { "passed" } else { "failed" },
                        n = m.n
                    ))
                    .evidence(fact, format!("max error {:.3e} ({:.1}× the tolerance)", m.max_abs_error, m.max_error_ratio), "smoke test")
                    .fix_cmd("Reset any overclock and application clocks, then rerun", match super::identity::gpu_of_cuda_device(snap, d.ordinal) {
                        Some(g) => {
                            let i = super::identity::smi_target(snap, g);
                            crate::sh!("sudo nvidia-smi -i {} -rgc && sudo nvidia-smi -i {} -rmc", i, i)
                        }
                        None => "sudo nvidia-smi -rgc && sudo nvidia-smi -rmc".into(),
                    })
                    .fix_text("If it still fails: drain the node, run `dcgmi diag -r 3` and replace the GPU if that fails too"),
            ),
            Some(Step::Failed { error, .. }) => out.push(
                Finding::new(codes::GD056, Severity::Error, format!("{}: the matmul failed: {}", d.label(), error.name))
                    .detail("The smoke test's matmul could not run to the end. gpudoctor's kernel and inputs are fixed, so a launch failure or illegal address here points at the GPU or driver (an Xid in the kernel log), and an out-of-memory at memory held by others.")
                    .evidence(fact, error.to_string(), "smoke test")
                    .fix_text(crate::compat::cuda_errors::lookup(error.code).map_or("Check `sudo dmesg | grep -i xid` and reset the GPU", |k| k.fix)),
            ),
            _ => {}
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn a_correct_product_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_wrong_product_is_an_error() {
        let mut s = healthy();
        if let Some(Step::Ok(m)) = &mut smoke_dev(&mut s, 1).matmul {
            m.correct = false;
            m.wrong_elements = 12;
            m.freivalds_passed = false;
        }
        let f = only(run(&s), codes::GD056, Severity::Error);
        assert!(f.title.contains("CUDA device 1"), "{}", f.title);
        assert!(
            f.title.contains("computed a wrong matrix product"),
            "{}",
            f.title
        );
        assert_eq!(
            first_cmd(&f),
            "sudo nvidia-smi -i 1 -rgc && sudo nvidia-smi -i 1 -rmc"
        );
    }

    #[test]
    fn a_failed_kernel_is_an_error() {
        let mut s = healthy();
        smoke_dev(&mut s, 0).matmul = Some(Step::Failed {
            error: cuda_error("cuLaunchKernel", 700, "CUDA_ERROR_ILLEGAL_ADDRESS"),
            detail: None,
        });
        let f = only(run(&s), codes::GD056, Severity::Error);
        assert!(
            f.title
                .contains("the matmul failed: CUDA_ERROR_ILLEGAL_ADDRESS"),
            "{}",
            f.title
        );
    }

    #[test]
    fn a_skipped_matmul_is_not_judged() {
        let mut s = healthy();
        smoke_dev(&mut s, 0).matmul = Some(Step::Skipped {
            reason: "context failed".into(),
        });
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_a_smoke_run() {
        assert_na(run(&no_gpu()));
    }
}
