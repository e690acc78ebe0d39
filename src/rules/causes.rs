//! Which finding explains which. A consequence names its root cause (`Finding::caused_by`),
//! so every format leads with the one fix that removes both: a node upgraded without a
//! reboot reports GD018 "reboot" first and GD017 "driver too old" under it, not the other
//! way round. Decided here, once, after every rule ran (`rules::evaluate`); renderers only
//! show it, and the exit code still counts every finding.

use super::RULES;
use crate::codes;
use crate::facts::nvml::NvmlResult;
use crate::facts::pytorch_live::LiveResult;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

/// "`cause` explains `effects` when `explains` holds for the effect on this snapshot."
struct Chain {
    cause: &'static str,
    effects: &'static [&'static str],
    explains: fn(&Snapshot, &Finding) -> bool,
    /// The sentence the consequence carries (`cause_note`).
    note: fn(&Snapshot) -> String,
}

/// In order: an effect takes the first chain whose cause is present and explains it. Each
/// predicate names the fact that makes the effect this cause's, so an unrelated failure of
/// the same code (NVML refusing a user, a GPU off the bus) stays a root with its own fix.
const CHAINS: &[Chain] = &[
    // A conflicting driver (nouveau, vfio-pci) holding the GPU keeps nvidia from loading.
    Chain {
        cause: codes::GD003,
        effects: &[codes::GD002, codes::GD030, codes::GD048, codes::GD053],
        explains: no_driver_symptom,
        note: |_| {
            "Another driver holds the GPU, so the NVIDIA driver cannot bind it: once nvidia owns the GPU this goes away too.".into()
        },
    },
    Chain {
        cause: codes::GD002,
        effects: &[codes::GD030, codes::GD048, codes::GD053],
        explains: no_driver_symptom,
        note: |_| "The NVIDIA kernel module is not loaded: loading it removes this too.".into(),
    },
    // After a reboot the module is the libraries' version: whatever judged the old module
    // and passes on the new one was the reboot's consequence.
    Chain {
        cause: codes::GD018,
        effects: &[codes::GD017, codes::GD042, codes::GD063],
        explains: gone_after_reboot,
        note: after_reboot_note,
    },
    // A container running on a driver its image's NVIDIA_REQUIRE_CUDA rejects: the image's
    // toolkit and torch being newer than the driver are that one fact.
    Chain {
        cause: codes::GD063,
        effects: &[codes::GD017, codes::GD042],
        explains: image_cuda_on_this_driver,
        note: |_| {
            "The image's CUDA is newer than this driver, as its NVIDIA_REQUIRE_CUDA says: a newer driver, or an image for the driver's CUDA, removes this too.".into()
        },
    },
    // A GPU the loaded module flavour refuses: the driver skips it, so it has no driver,
    // its bring-up fails in the log, and NVML's GPUs and the /dev nodes disagree.
    Chain {
        cause: codes::GD089,
        effects: &[codes::GD005, codes::GD083, codes::GD040, codes::GD007],
        explains: refused_by_the_module_flavour,
        note: |_| {
            "The loaded kernel module flavour cannot drive this GPU: the other flavour removes this too.".into()
        },
    },
    // A torchvision/torchaudio built for another torch: its undefined torch symbol is that.
    Chain {
        cause: codes::GD046,
        effects: &[codes::GD060],
        explains: companion_built_for_another_torch,
        note: |_| {
            "It was built for another torch (see its cause): the release built for this torch removes this too.".into()
        },
    },
    // CUDA refuses to start while module and libraries differ.
    Chain {
        cause: codes::GD018,
        effects: &[codes::GD048, codes::GD053],
        explains: mismatch_symptom,
        note: |_| {
            "CUDA refuses to start while the kernel module and the driver libraries differ: the reboot removes this too.".into()
        },
    },
    // torch's pinned nvidia-* wheels missing: `import torch` fails on a library they ship.
    Chain {
        cause: codes::GD044,
        effects: &[codes::GD048],
        explains: import_failed_on_missing_wheel,
        note: |_| {
            "torch cannot load a CUDA library of the nvidia-* wheels it pins: installing them removes this too.".into()
        },
    },
];

/// Sets `caused_by`/`cause_note` on every finding a present finding explains, naming the
/// root cause (a chain's cause that is itself explained passes its own cause on).
pub(crate) fn link(snap: &Snapshot, findings: &mut [Finding]) {
    // A cause is at least as severe as what it explains, so the roots alone carry the
    // report's verdict.
    let present = |code: &str, effect: &Finding, findings: &[Finding]| {
        findings
            .iter()
            .any(|f| f.code == code && f.severity >= effect.severity)
    };
    let mut links: Vec<Option<(&'static str, String)>> = vec![None; findings.len()];
    for (i, f) in findings.iter().enumerate() {
        // A note is context; a consequence is something that fails or hurts.
        if f.severity == Severity::Info {
            continue;
        }
        links[i] = CHAINS
            .iter()
            .filter(|c| c.cause != f.code && c.effects.contains(&f.code.as_str()))
            .find(|c| present(c.cause, f, findings) && (c.explains)(snap, f))
            .map(|c| (c.cause, (c.note)(snap)));
    }
    // Follow a cause that is itself explained up to its root (GD003 → GD002 → GD006).
    let caused_by = |code: &str| -> Option<&'static str> {
        findings
            .iter()
            .zip(&links)
            .find(|(f, _)| f.code == code)
            .and_then(|(_, l)| l.as_ref().map(|(c, _)| *c))
    };
    let mut roots: Vec<Option<(&'static str, String)>> = Vec::with_capacity(links.len());
    for link in &links {
        roots.push(link.as_ref().map(|(cause, note)| {
            let mut root = *cause;
            for _ in 0..CHAINS.len() {
                match caused_by(root) {
                    Some(up) if up != root => root = up,
                    _ => break,
                }
            }
            // Through another cause: say which one this note is about.
            let note = if root == *cause {
                note.clone()
            } else {
                format!("Through {cause}, which {root} causes: {note}")
            };
            (root, note)
        }));
    }
    for (f, root) in findings.iter_mut().zip(roots) {
        if let Some((cause, note)) = root {
            f.caused_by = Some(cause.to_string());
            f.cause_note = Some(note);
        }
    }
}

/// GD089's GPUs: their missing driver and log refusal, and the node-wide symptoms when the
/// module refuses every GPU.
fn refused_by_the_module_flavour(snap: &Snapshot, effect: &Finding) -> bool {
    let refused = super::module_flavour::refused_gpus(snap);
    if refused.is_empty() {
        return false;
    }
    // No /dev/nvidiaN at all is this when the module refuses every GPU.
    let gpus = snap
        .pci
        .as_ref()
        .and_then(|p| p.devices.get())
        .map_or(0, |d| {
            d.iter()
                .filter(|d| d.role == crate::facts::pci::PciRole::Gpu)
                .count()
        });
    (effect.code == codes::GD007 && refused.len() == gpus)
        || effect.code == codes::GD040
        || refused.iter().any(|a| {
            effect.title.contains(a.as_str())
                || effect.title.contains(a.trim_start_matches("0000:"))
        })
}

/// GD060 about a torchvision or torchaudio module whose load fails on a symbol of torch's own
/// libraries (built against another torch), read from the linkage the finding names.
fn companion_built_for_another_torch(snap: &Snapshot, effect: &Finding) -> bool {
    let modules: Vec<&str> = effect
        .evidence
        .iter()
        .filter_map(|e| match &e.fact {
            Some(Subject::Extension(path)) => Some(path.as_str()),
            _ => None,
        })
        .collect();
    snap.linkage
        .iter()
        .flatten()
        .flat_map(|l| &l.modules)
        .filter(|m| matches!(m.package.as_str(), "torchvision" | "torchaudio"))
        .filter(|m| modules.contains(&m.path.as_str()))
        .any(|m| {
            m.failures
                .first()
                .is_some_and(|f| super::extension_loading::torch_abi(&f.failure))
        })
}

/// torch imported and sees no CUDA (not an import error, which is torch's own).
fn cuda_unavailable(snap: &Snapshot) -> bool {
    matches!(
        snap.python_live.as_ref().map(|l| &l.result),
        Some(LiveResult::Ok { answer }) if answer.import_error.is_none() && answer.is_available == Some(false)
    )
}

/// The smoke test's cuInit failed with one of these CUDA error codes.
fn cuinit_failed_with(snap: &Snapshot, codes: &[i32]) -> bool {
    snap.smoke
        .as_ref()
        .and_then(|s| s.run())
        .and_then(|r| r.init_error.as_ref())
        .is_some_and(|e| codes.contains(&e.code))
}

/// What having no NVIDIA driver bound looks like: NVML "driver not loaded", cuInit
/// CUDA_ERROR_NO_DEVICE (100), torch seeing no CUDA.
fn no_driver_symptom(snap: &Snapshot, effect: &Finding) -> bool {
    match effect.code.as_str() {
        codes::GD002 => true,
        codes::GD030 => matches!(
            snap.nvml.as_ref().map(|n| &n.result),
            Some(NvmlResult::InitFailed { code, .. }) if code == "driver_not_loaded"
        ),
        codes::GD053 => cuinit_failed_with(snap, &[100]),
        codes::GD048 => cuda_unavailable(snap),
        _ => false,
    }
}

/// What a module/library version mismatch looks like to CUDA: cuInit
/// CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803), torch seeing no CUDA.
fn mismatch_symptom(snap: &Snapshot, effect: &Finding) -> bool {
    match effect.code.as_str() {
        codes::GD053 => cuinit_failed_with(snap, &[803]),
        codes::GD048 => cuda_unavailable(snap),
        _ => false,
    }
}

/// `import torch` failed on a library ("libcublas.so.12: cannot open shared object file")
/// that a wheel torch pins, and that wheel is missing.
fn import_failed_on_missing_wheel(snap: &Snapshot, effect: &Finding) -> bool {
    let Some(live) = &snap.python_live else {
        return false;
    };
    let LiveResult::Ok { answer } = &live.result else {
        return false;
    };
    let Some(error) = &answer.import_error else {
        return false;
    };
    let missing = error
        .split(|c: char| c.is_whitespace() || c == ':' || c == '\'' || c == '"')
        .filter(|w| w.starts_with("lib") && w.contains(".so"))
        .any(|soname| {
            snap.python.iter().flatten().any(|env| {
                env.torch.is_some() && super::extension_loading::torch_pin_missing(env, soname)
            })
        });
    effect.severity == Severity::Error && missing
}

/// The snapshot as the machine will be after a reboot: the kernel module at the version of
/// the user-space libraries.
fn after_reboot(snap: &Snapshot) -> Option<Snapshot> {
    let pending = super::driver_userspace::version_after_reboot(snap)?;
    let mut s = snap.clone();
    let km = s.kernel_module.as_mut()?;
    if let crate::fact::Outcome::Value(v) = &mut km.version_file.outcome {
        v.version = pending.as_str().to_string();
    }
    if let crate::fact::Outcome::Value(v) = &mut km.sys_version.outcome {
        *v = pending.as_str().to_string();
    }
    Some(s)
}

/// Whether the rule that reported `effect` stays silent about the same subject once the
/// module is the libraries' version.
/// In a running container (not `--image`, where GD063 is about the next start), the image's
/// toolkit or torch judged against this driver.
fn image_cuda_on_this_driver(snap: &Snapshot, _effect: &Finding) -> bool {
    snap.container_kind().is_some() && !snap.is_image() && !snap.container_without_gpus()
}

fn gone_after_reboot(snap: &Snapshot, effect: &Finding) -> bool {
    // A host reboot changes neither a container's libraries nor those LD_LIBRARY_PATH picks.
    if snap.container_kind().is_some() || libcuda_from_ld_library_path(snap) {
        return false;
    }
    let Some(rebooted) = after_reboot(snap) else {
        return false;
    };
    let Some(rule) = RULES
        .iter()
        .find(|r| r.codes.contains(&effect.code.as_str()))
    else {
        return false;
    };
    let subject = |f: &Finding| f.evidence.iter().find_map(|e| e.fact.clone());
    match (rule.run)(&rebooted) {
        super::Outcome::NotApplicable(_) => true,
        super::Outcome::Checked(found) => !found
            .iter()
            .any(|f| f.code == effect.code && subject(f) == subject(effect)),
    }
}

fn libcuda_from_ld_library_path(snap: &Snapshot) -> bool {
    snap.libraries
        .as_ref()
        .and_then(|l| l.by_soname("libcuda.so.1"))
        .and_then(|l| l.loaded())
        .is_some_and(|c| c.via == crate::facts::libraries::Via::LdLibraryPath)
}

fn after_reboot_note(snap: &Snapshot) -> String {
    match super::driver_userspace::version_after_reboot(snap) {
        Some(v) => format!(
            "It judges the kernel module still loaded; after the reboot the driver is {}, the version of its libraries, and this passes.",
            v.as_str()
        ),
        None => "It judges the kernel module still loaded; the reboot removes it.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    /// The healthy snapshot with nvmlInit failing with this code.
    fn nvml_failed(code: &str) -> Snapshot {
        let mut snap = healthy();
        if let Some(n) = snap.nvml.as_mut() {
            n.result = NvmlResult::InitFailed {
                code: code.into(),
                message: code.into(),
            };
        }
        snap
    }

    fn codes_of(findings: &[Finding]) -> Vec<(String, Option<String>)> {
        findings
            .iter()
            .map(|f| (f.code.clone(), f.caused_by.clone()))
            .collect()
    }

    #[test]
    fn every_chain_names_registered_codes_and_no_code_explains_itself() {
        for c in CHAINS {
            assert!(crate::codes::lookup(c.cause).is_some(), "{}", c.cause);
            for e in c.effects {
                assert!(crate::codes::lookup(e).is_some(), "{e}");
                assert_ne!(*e, c.cause);
            }
        }
    }

    #[test]
    fn a_cause_that_is_explained_passes_its_own_cause_on() {
        let snap = nvml_failed("driver_not_loaded");
        let mut found = vec![
            Finding::new(codes::GD030, Severity::Error, "NVML: driver not loaded"),
            Finding::new(codes::GD002, Severity::Error, "no module"),
            Finding::new(codes::GD003, Severity::Error, "nouveau"),
        ];
        link(&snap, &mut found);
        assert_eq!(
            codes_of(&found),
            vec![
                (codes::GD030.into(), Some(codes::GD003.into())),
                (codes::GD002.into(), Some(codes::GD003.into())),
                (codes::GD003.into(), None),
            ]
        );
        crate::findings::sort_findings(&mut found);
        let order: Vec<&str> = found.iter().map(|f| f.code.as_str()).collect();
        assert_eq!(order, [codes::GD003, codes::GD002, codes::GD030]);
    }

    #[test]
    fn an_unrelated_failure_of_an_effect_code_stays_a_root() {
        let snap = nvml_failed("no_permission");
        let mut found = vec![
            Finding::new(codes::GD030, Severity::Error, "NVML: no permission"),
            Finding::new(codes::GD002, Severity::Error, "no module"),
            Finding::new(codes::GD053, Severity::Error, "cuInit failed"),
            Finding::new(codes::GD018, Severity::Error, "mismatch"),
        ];
        link(&snap, &mut found);
        assert!(found.iter().all(Finding::is_root), "{:?}", codes_of(&found));
    }

    #[test]
    fn chains_have_no_cycle() {
        for c in CHAINS {
            let mut seen = vec![c.cause];
            let mut frontier = vec![c.cause];
            while let Some(code) = frontier.pop() {
                for next in CHAINS.iter().filter(|n| n.cause == code) {
                    for e in next.effects {
                        assert_ne!(*e, c.cause, "{} explains itself through {code}", c.cause);
                        if !seen.contains(e) {
                            seen.push(e);
                            frontier.push(e);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_info_note_neither_causes_nor_is_caused() {
        let snap = healthy();
        let mut found = vec![
            Finding::new(codes::GD030, Severity::Info, "no driver, no hardware"),
            Finding::new(codes::GD002, Severity::Error, "no module"),
        ];
        link(&snap, &mut found);
        assert!(found.iter().all(Finding::is_root));
        let mut found = vec![
            Finding::new(codes::GD002, Severity::Warning, "not an error"),
            Finding::new(codes::GD003, Severity::Info, "a note"),
        ];
        link(&snap, &mut found);
        assert!(found.iter().all(Finding::is_root));
    }

    #[test]
    fn without_its_cause_a_finding_stays_a_root() {
        let mut found = vec![Finding::new(codes::GD002, Severity::Error, "no module")];
        link(&healthy(), &mut found);
        assert!(found[0].is_root());
    }
}
