//! GD033: GPU memory health from ECC — uncorrectable errors, pages waiting to be retired
//! or rows waiting to be remapped (a reset applies them), a failed row remap (RMA), and a
//! retired-page count at DCGM's threshold.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "memory_health",
    codes: &[codes::GD033],
    views: &[super::View::Devices],
    checks: "no uncorrectable ECC errors, pending retirements or remaps, or failed remaps",
    judges: &[SubjectKind::Gpu],
    run,
};

/// DCGM's memory health watch fails a GPU at 60 retired pages (DCGM_LIMIT_MAX_RETIRED_PAGES
/// in dcgm_structs.h; the same figure NVIDIA's dynamic page retirement guide gives for RMA).
pub const RETIRED_PAGE_LIMIT: u32 = 60;

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    let mut out = Vec::new();
    for g in sys.devices.iter().filter(|g| g.handle_error.is_none()) {
        let key = Subject::Gpu(g.index);
        let mut problems: Vec<(Severity, String)> = Vec::new();
        if let Some(n) = g.ecc.volatile_uncorrected.get().filter(|n| **n > 0) {
            problems.push((
                Severity::Error,
                format!("{n} uncorrectable ECC error(s) since the last driver load"),
            ));
        }
        if let Some(r) = g.remapped_rows.get() {
            if r.failure {
                problems.push((
                    Severity::Error,
                    "a row remap failed: the memory has run out of spare rows (RMA)".into(),
                ));
            }
            if r.pending {
                problems.push((
                    Severity::Error,
                    "a row remap is pending: it takes effect at the next GPU reset".into(),
                ));
            }
        }
        if g.retired_pages_pending.get() == Some(&true) {
            problems.push((
                Severity::Error,
                "pages are pending retirement: they are retired at the next GPU reset".into(),
            ));
        }
        if let Some(r) = g.retired_pages.get() {
            // Widened: a crafted snapshot may hold counts near u32::MAX.
            let total = u64::from(r.single_bit) + u64::from(r.double_bit);
            if total >= u64::from(RETIRED_PAGE_LIMIT) {
                problems.push((
                    Severity::Error,
                    format!("{total} retired pages (DCGM fails a GPU at {RETIRED_PAGE_LIMIT})"),
                ));
            }
        }
        if problems.is_empty() {
            if let Some(n) = g.ecc.aggregate_uncorrected.get().filter(|n| **n > 0) {
                problems.push((
                    Severity::Warning,
                    format!("{n} uncorrectable ECC error(s) over the GPU's lifetime"),
                ));
            }
        }
        let Some(worst) = problems.iter().map(|(s, _)| *s).max() else {
            continue;
        };
        let mut f = Finding::new(codes::GD033, worst, format!("{}: {}", g.label(), problems[0].1))
            .detail("Uncorrectable ECC errors kill the process that touched the memory (\"uncorrectable ECC error encountered\", Xid 48/63/64/94/95) and can corrupt results silently before that. Pending retirements and remaps protect the GPU only after a reset; a failed remap or too many retired pages mean the memory is wearing out.")
            .evidence(key.clone(), problems.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>().join("; "), "NVML");
        f = f
            .fix_text(format!(
                "Drain GPU {} (move its jobs elsewhere): a reset needs no process on it",
                g.index
            ))
            .fix_cmd(
                "Reset it so pending retirements and remaps apply",
                super::identity::reset_command(snap, g),
            )
            .fix_cmd("Then re-check", "gpudoctor devices --detail");
        if problems
            .iter()
            .any(|(_, p)| p.contains("RMA") || p.contains("DCGM"))
        {
            f = match g.serial.get().map(|s| s.trim()).filter(|s| !s.is_empty()) {
                Some(serial) => f.fix_text(format!(
                    "The GPU needs replacement: open an RMA for serial {serial}"
                )),
                None => f.fix_cmd(
                    "The GPU needs replacement: open an RMA with its serial number",
                    crate::sh!(
                        "nvidia-smi -q -i {} | grep -i serial",
                        super::identity::smi_target(snap, g)
                    ),
                ),
            };
        }
        out.push(f);
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::{Field, RemappedRows, RetiredPages};
    use crate::testing::*;

    #[test]
    fn healthy_memory_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn volatile_uncorrectable_errors_are_an_error() {
        let mut s = healthy();
        nvml_gpu(&mut s, 1).ecc.volatile_uncorrected = Field::Value(3);
        let f = only(run(&s), codes::GD033, Severity::Error);
        assert!(f.title.contains("GPU 1"), "{}", f.title);
        assert!(
            f.title.contains("3 uncorrectable ECC error(s)"),
            "{}",
            f.title
        );
        // The reset names the GPU: nothing is left to fill in, so --fix-script keeps it.
        assert_eq!(first_cmd(&f), "sudo nvidia-smi -r -i 1");
        assert!(!f.fix.iter().any(|x| x.text.contains('<')), "{:?}", f.fix);
    }

    #[test]
    fn a_failed_remap_or_too_many_retired_pages_mean_rma() {
        let mut s = healthy();
        nvml_gpu(&mut s, 0).remapped_rows = Field::Value(RemappedRows {
            correctable: 0,
            uncorrectable: 8,
            pending: false,
            failure: true,
        });
        let f = only(run(&s), codes::GD033, Severity::Error);
        assert!(f.title.contains("row remap failed"), "{}", f.title);
        assert!(fixes_mention(&f, "RMA"));
        let mut s = healthy();
        nvml_gpu(&mut s, 0).retired_pages = Field::Value(RetiredPages {
            single_bit: 40,
            double_bit: RETIRED_PAGE_LIMIT - 40,
        });
        let f = only(run(&s), codes::GD033, Severity::Error);
        assert!(f.title.contains("60 retired pages"), "{}", f.title);
        assert!(
            fixes_mention(&f, "open an RMA for serial 1650000000000"),
            "{:?}",
            f.fix
        );
        // Without the serial from NVML, the command that reads it.
        nvml_gpu(&mut s, 0).serial = Field::NotSupported;
        let f = only(run(&s), codes::GD033, Severity::Error);
        assert!(f
            .fix
            .iter()
            .any(|x| x.command.as_deref() == Some("nvidia-smi -q -i 0 | grep -i serial")));
    }

    #[test]
    fn pending_retirement_is_an_error_without_rma() {
        let mut s = healthy();
        nvml_gpu(&mut s, 0).retired_pages_pending = Field::Value(true);
        let f = only(run(&s), codes::GD033, Severity::Error);
        assert!(f.title.contains("pending retirement"), "{}", f.title);
        assert!(!fixes_mention(&f, "RMA"));
    }

    #[test]
    fn lifetime_errors_alone_are_a_warning() {
        let mut s = healthy();
        nvml_gpu(&mut s, 0).ecc.aggregate_uncorrected = Field::Value(2);
        let f = only(run(&s), codes::GD033, Severity::Warning);
        assert!(f.title.contains("over the GPU's lifetime"), "{}", f.title);
    }

    #[test]
    fn a_gpu_without_a_handle_is_skipped() {
        let mut s = healthy();
        let g = nvml_gpu(&mut s, 0);
        g.handle_error = Some("gpu_is_lost".into());
        g.ecc.volatile_uncorrected = Field::Value(3);
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_nvml() {
        assert_na(run(&no_gpu()));
    }

    #[test]
    fn huge_retired_page_counts_do_not_overflow() {
        let mut s = healthy();
        nvml_gpu(&mut s, 0).retired_pages = Field::Value(RetiredPages {
            single_bit: u32::MAX,
            double_bit: 1,
        });
        let f = only(run(&s), codes::GD033, Severity::Error);
        assert!(f.title.contains("retired pages"), "{}", f.title);
    }
}
