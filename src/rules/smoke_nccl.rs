//! GD079: the smoke test's NCCL all-reduce (`--nccl`) failed: libnccl could not be loaded,
//! the communicator did not initialise, the sum came back wrong, or the all-reduce hung
//! past the smoke test's deadline. Each is what torch.distributed's NCCL backend would hit
//! on these GPUs with this environment. The bandwidth it measured is shown by the smoke
//! view, not judged: what an interconnect should give depends on the machine.

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::smoke::{SmokeResult, Step};
use crate::findings::{Finding, Severity};
use crate::smoke::nccl::{NcclRequest, NcclRun};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "smoke_nccl",
    codes: &[codes::GD079],
    views: &[super::View::Smoke],
    checks: "with --nccl, NCCL loads, initialises over every tested GPU and all-reduces the right sum within the deadline",
    judges: &[SubjectKind::SmokeNccl],
    run,
};

const SOURCE: &str = "smoke worker (NCCL step)";

/// The NCCL wheel torch pins here ("nvidia-nccl-cu13==2.28.9"), for the install fixes.
/// The install command for the NCCL wheel torch pins, aimed at torch's environment.
fn pinned_wheel(snap: &Snapshot, reinstall: bool) -> Option<crate::findings::Shell> {
    snap.python.iter().flatten().find_map(|env| {
        let t = env.torch.as_ref()?;
        let r = t
            .requires
            .iter()
            .find(|r| r.name.starts_with("nvidia-nccl-"))?;
        Some(crate::recommend::commands::install_into(
            env,
            &[format!("{}{}", r.name, r.spec)],
            reinstall,
            false,
        ))
    })
}

/// The ports with ACS redirect on between GPU pairs whose peer traffic would stay inside a
/// PCIe switch (GD072): the first suspect for a hung or wrong collective.
fn acs_suspects(snap: &Snapshot) -> String {
    let mut ports: Vec<String> = snap
        .gpu_pairs()
        .into_iter()
        .filter(|p| p.over_pcie() && p.link.is_some_and(|l| l.stays_below_root()))
        .flat_map(|p| p.acs_redirecting)
        .collect();
    ports.sort();
    ports.dedup();
    if ports.is_empty() {
        String::new()
    } else {
        format!(
            " ACS redirect is on at {} between GPUs here (GD072): the likely cause.",
            ports.join(", ")
        )
    }
}

/// "GPUs 0,1 over P2P/CUMEM/read with NCCL_P2P_DISABLE=1": the configuration measured.
fn configuration(req: &NcclRequest, run: &NcclRun) -> String {
    let gpus: Vec<String> = run.ranks.iter().map(u32::to_string).collect();
    let mut s = format!("GPU {}", gpus.join(","));
    if let Some(d) = &req.debug {
        if !d.transports.is_empty() {
            s.push_str(&format!(" over {}", d.transports.join(", ")));
        }
    }
    if !req.environment.is_empty() {
        s.push_str(&format!(" with {}", req.environment.join(" ")));
    }
    if let Some(v) = run.version_text() {
        s.push_str(&format!(", NCCL {v}"));
    }
    s
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(p) = &snap.smoke else {
        return super::smoke_not_run(snap);
    };
    let Some(req) = &p.nccl else {
        return Outcome::NotApplicable("the NCCL step runs only with --nccl".into());
    };
    if let Some(why) = &req.refused {
        return Outcome::Checked(vec![Finding::new(
            codes::GD079,
            Severity::Warning,
            "The NCCL all-reduce did not run (--nccl)".to_string(),
        )
        .detail(format!("{why}. Nothing about NCCL on this machine was tested."))
        .evidence(Subject::SmokeNccl, why.clone(), "gpudoctor")
        .fix_text("Run `gpudoctor smoke --nccl` on the machine itself, or name a libnccl outside the tree with --nccl-lib")]);
    }
    let run = match super::smoke_run(snap) {
        Ok(r) => r,
        Err(na) => return na,
    };
    let Some(n) = &run.nccl else {
        return Outcome::NotApplicable("the smoke worker stopped before the NCCL step".into());
    };
    let config = configuration(req, n);
    let library = n.loaded_from.clone().unwrap_or_else(|| req.library.clone());
    let mut out = Vec::new();
    if let Some(e) = &n.load_error {
        out.push(
            Finding::new(codes::GD079, Severity::Error, format!("libnccl could not be loaded: {}", if e.code == "library_not_found" { "not found" } else { "unusable" }))
                .detail(format!("The NCCL step loads the libnccl torch would load ({}). {} torch.distributed's NCCL backend needs the same library.", req.chosen_by, e.message))
                .evidence(Subject::SmokeNccl, e.message.clone(), SOURCE)
                .fix_cmd("Install the NCCL wheel torch pins (`pip show torch` lists it under Requires)", match pinned_wheel(snap, false) {
                    Some(install) => install,
                    None => "pip show torch".into(),
                })
                .fix_text("Or name a libnccl.so.2 with --nccl-lib PATH"),
        );
    } else if let Some(e) = &n.error {
        // A GPU that refused its context already has its verdict (GD055).
        let context_failed = run
            .devices
            .iter()
            .any(|d| matches!(d.context, Some(Step::Failed { .. })));
        if e.call == "ncclCommInitAll" && context_failed {
            return Outcome::Checked(vec![]);
        }
        let what = if e.call == "ncclCommInitAll" {
            "NCCL could not initialise a communicator"
        } else {
            "The NCCL all-reduce failed"
        };
        let mut f = Finding::new(codes::GD079, Severity::Error, format!("{what} ({}: {})", e.call, e.name))
            .detail(format!("{e}. Measured with {config}. torch.distributed.init_process_group(\"nccl\") and the first collective fail the same way here. NCCL_DEBUG=INFO shows the step that failed (\"NCCL WARN\" lines)."))
            .evidence(Subject::SmokeNccl, e.to_string(), SOURCE);
        if let Some(d) = &req.debug {
            for w in d.warnings.iter().rev().take(3).rev() {
                f = f.context(format!("NCCL WARN {w}"), "NCCL_DEBUG=INFO");
            }
        }
        out.push(
            f.fix_text("Fix what NCCL's message names: an interface (NCCL_SOCKET_IFNAME), /dev/shm (ncclSystemError in a container), or a CUDA error in the driver")
                .fix_cmd("See NCCL's own account of it (NCCL writes its log to that file)", "NCCL_DEBUG=INFO NCCL_DEBUG_FILE=/tmp/nccl.%h.%p.log gpudoctor smoke --nccl"),
        );
    } else if let Some(a) = n.all_reduce.as_ref().filter(|a| !a.correct()) {
        let first = a
            .first_wrong
            .map(|(gpu, i, x)| {
                format!(
                    "; first on GPU {gpu}, element {i}: {x} instead of {}",
                    a.expected
                )
            })
            .unwrap_or_default();
        out.push(
            Finding::new(codes::GD079, Severity::Error, format!("The NCCL all-reduce returned a wrong sum ({} of {} elements)", a.wrong_elements, a.bytes / 4 * u64::from(a.ranks)))
                .detail(format!("Every rank added its own constant and every element of every rank must hold {}{first}. Measured with {config}. Wrong data from a collective corrupts training silently: a broken P2P path (PCIe ACS or an IOMMU redirecting peer traffic, a bad NVLink), or a faulty GPU.{}", a.expected, acs_suspects(snap)))
                .evidence(Subject::SmokeNccl, format!("{} wrong elements", a.wrong_elements), SOURCE)
                .fix_cmd("Check whether the direct path is at fault: rerun with P2P off", "NCCL_P2P_DISABLE=1 gpudoctor smoke --nccl")
                .fix_text("If that passes, fix P2P (ACS/IOMMU settings in the BIOS or kernel, `nvidia-smi topo -m`); else test each GPU alone"),
        );
    }
    if let SmokeResult::Crashed { signal, stderr, .. } = &p.result {
        if let Some(stuck) = crate::smoke::nccl::stuck_at(n) {
            let mut f = Finding::new(codes::GD079, Severity::Error, format!("The NCCL step crashed the smoke test (signal {signal}, {stuck})"))
                .detail(format!("The smoke worker died of signal {signal} while in {stuck}, with {config}. torch.distributed's NCCL backend crashes the same way here: a libnccl built for another CUDA major than the driver or torch, or a broken install."))
                .evidence(Subject::SmokeNccl, format!("signal {signal} in {stuck}"), SOURCE);
            if let Some(last) = stderr.lines().last().filter(|l| !l.trim().is_empty()) {
                f = f.context(last.to_string(), "smoke worker stderr");
            }
            f = match pinned_wheel(snap, true) {
                Some(install) => f.fix_cmd("Reinstall the NCCL wheel torch pins", install),
                None => f.fix_text("Reinstall the NCCL wheel torch pins (`pip show torch` lists it under Requires)"),
            };
            out.push(f.fix_text(format!(
                "Or test another library with --nccl-lib; library: {library}"
            )));
        }
    }
    if let SmokeResult::TimedOut {
        seconds,
        unkillable,
        ..
    } = &p.result
    {
        if let Some(stuck) = crate::smoke::nccl::stuck_at(n) {
            let unkillable = if *unkillable {
                " The worker could not be killed: it is stuck inside the kernel driver, and the GPUs need a reset (`sudo nvidia-smi -r`) or a reboot before anything else runs on them."
            } else {
                ""
            };
            out.push(
                Finding::new(codes::GD079, Severity::Error, format!("The NCCL all-reduce hung: no answer within {seconds:.1} s ({stuck})"))
                    .detail(format!("The NCCL step was killed at the smoke test's deadline while in {stuck}, with {config}. A collective that never completes hangs torch.distributed jobs the same way, usually in P2P or shared-memory transfers the platform does not deliver (PCIe ACS or an IOMMU on peer traffic, a virtual machine without P2P, a too small /dev/shm).{}{unkillable}", acs_suspects(snap)))
                    .evidence(Subject::SmokeNccl, stuck.clone(), SOURCE)
                    .fix_cmd("Rerun with P2P off to see whether the direct path hangs", "NCCL_P2P_DISABLE=1 gpudoctor smoke --nccl")
                    .fix_cmd("Then with shared memory off too", "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 gpudoctor smoke --nccl")
                    .fix_text(format!("Library: {library}; rerun with a longer --timeout if the node is merely slow to initialise")),
            );
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke::nccl::{AllReduce, NcclDebug, NcclError, NcclLoadError};
    use crate::testing::*;

    fn with_nccl(s: &mut Snapshot, n: NcclRun) {
        smoke_probe(s).nccl = Some(NcclRequest {
            library: "libnccl.so.2".into(),
            chosen_by: "the loader's libnccl.so.2".into(),
            refused: None,
            environment: vec!["NCCL_P2P_DISABLE=1".into()],
            debug: Some(NcclDebug {
                transports: vec!["SHM/direct/direct".into()],
                ..NcclDebug::default()
            }),
        });
        smoke_run_mut(s).nccl = Some(n);
    }

    fn ran(all_reduce: Option<AllReduce>) -> NcclRun {
        NcclRun {
            loaded_from: Some("/usr/lib/libnccl.so.2".into()),
            version: Some(22105),
            ranks: vec![0, 1],
            finished: true,
            all_reduce,
            ..NcclRun::default()
        }
    }

    fn sum(wrong: u64) -> AllReduce {
        AllReduce {
            bytes: 1 << 20,
            ranks: 2,
            expected: 3.0,
            wrong_elements: wrong,
            first_wrong: (wrong > 0).then_some((1, 5, 4.0)),
            iterations: 5,
            ms: 1.0,
            algbw_gbps: 1.0,
            busbw_gbps: 1.0,
        }
    }

    #[test]
    fn without_nccl_it_does_not_apply_and_a_good_sum_is_clean() {
        assert_na(run(&healthy()));
        let mut s = healthy();
        with_nccl(&mut s, ran(Some(sum(0))));
        assert_clean(run(&s));
    }

    #[test]
    fn a_wrong_sum_is_an_error_naming_the_configuration() {
        let mut s = healthy();
        with_nccl(&mut s, ran(Some(sum(7))));
        let f = only(run(&s), codes::GD079, Severity::Error);
        assert!(f.title.contains("wrong sum (7 of 524288"), "{}", f.title);
        assert!(
            f.detail
                .contains("GPU 0,1 over SHM/direct/direct with NCCL_P2P_DISABLE=1, NCCL 2.21.5"),
            "{}",
            f.detail
        );
        assert!(
            f.detail.contains("element 5: 4 instead of 3"),
            "{}",
            f.detail
        );
    }

    #[test]
    fn init_failures_and_missing_libraries_are_errors() {
        let mut s = healthy();
        let mut n = ran(None);
        n.error = Some(NcclError {
            call: "ncclCommInitAll".into(),
            code: 2,
            name: "ncclSystemError".into(),
            message: "unhandled system error".into(),
            last_error: Some("Bootstrap : no socket interface found".into()),
            cuda: None,
        });
        with_nccl(&mut s, n);
        let f = only(run(&s), codes::GD079, Severity::Error);
        assert!(f.title.contains("could not initialise"), "{}", f.title);
        assert!(
            f.detail.contains("no socket interface found"),
            "{}",
            f.detail
        );
        let mut s = healthy();
        let mut n = ran(None);
        n.load_error = Some(NcclLoadError {
            code: "library_not_found".into(),
            message: "dlopen(libnccl.so.2): not found".into(),
        });
        with_nccl(&mut s, n);
        let f = only(run(&s), codes::GD079, Severity::Error);
        // Without a pin in torch's metadata: where to look it up; with one, that wheel.
        assert_eq!(first_cmd(&f), "pip show torch");
        torch_mut(&mut s)
            .requires
            .push(requirement("nvidia-nccl-cu13", "==2.28.9"));
        let f = only(run(&s), codes::GD079, Severity::Error);
        assert_eq!(first_cmd(&f), "pip install nvidia-nccl-cu13==2.28.9");
    }

    #[test]
    fn a_hang_in_nccl_is_an_error_and_refusal_a_warning() {
        let mut s = healthy();
        let mut n = ran(None);
        n.finished = false;
        n.stage = Some("ncclGroupEnd".into());
        with_nccl(&mut s, n);
        let r = smoke_run_mut(&mut s).clone();
        smoke_probe(&mut s).result = SmokeResult::TimedOut {
            seconds: 5.0,
            run: r,
            stuck_at: vec!["NCCL: ncclGroupEnd".into()],
            unkillable: false,
        };
        let f = only(run(&s), codes::GD079, Severity::Error);
        assert!(
            f.title.contains("hung") && f.title.contains("NCCL: ncclGroupEnd"),
            "{}",
            f.title
        );
        let mut s = healthy();
        with_nccl(&mut s, ran(None));
        smoke_probe(&mut s).nccl.as_mut().unwrap().refused = Some("under --root".into());
        only(run(&s), codes::GD079, Severity::Warning);
    }
}
