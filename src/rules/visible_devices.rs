//! GD009–GD011: CUDA_VISIBLE_DEVICES. The parse mirrors CUDA's as PyTorch models it
//! (torch/cuda/__init__.py `_parse_visible_devices`): entries are read left to right;
//! a negative or non-numeric entry ends the list, a repeated entry empties it, a
//! UUID list ends at the first entry without the GPU-/MIG- prefix, and (CUDA
//! programming guide, "CUDA Environment Variables") an index beyond the GPUs present
//! ends it too, as does a UUID NVML does not list.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "visible_devices",
    codes: &[codes::GD009, codes::GD010, codes::GD011],
    views: &[super::View::Devices],
    checks: "CUDA_VISIBLE_DEVICES is unset or names existing GPUs",
    judges: &[SubjectKind::RuledVariables],
    run,
};

fn fact() -> Subject {
    Subject::env("CUDA_VISIBLE_DEVICES")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Empty value, `-1`, `NoDevFiles` or another entry CUDA reads as "no device".
    Hidden(String),
    /// An index at or beyond the GPU count.
    OutOfRange(String),
    /// The same device twice: CUDA then sees none.
    Repeated(String),
    /// An entry that is neither an index nor a UUID of the list's kind.
    Invalid(String),
    /// A UUID (or prefix) that no GPU or MIG instance here has.
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisibleDevices {
    /// The entries CUDA will use, in order.
    pub visible: Vec<String>,
    /// Why the list ended early, and at which entry position.
    pub stop: Option<(usize, Stop)>,
    /// Entries carrying spaces or trailing characters that CUDA tolerates.
    pub sloppy: Vec<String>,
    pub uuid_mode: bool,
}

/// Parses like CUDA; `gpu_count` (when known) bounds the indices.
pub fn parse_visible_devices(value: &str, gpu_count: Option<usize>) -> VisibleDevices {
    let uuid_prefix = ["GPU-", "MIG-"].into_iter().find(|p| value.starts_with(p));
    let mut out = VisibleDevices {
        visible: Vec::new(),
        stop: None,
        sloppy: Vec::new(),
        uuid_mode: uuid_prefix.is_some(),
    };
    if value.trim().is_empty() {
        out.stop = Some((0, Stop::Hidden(value.to_string())));
        return out;
    }
    for (pos, raw) in value.split(',').enumerate() {
        let stop = match uuid_prefix {
            Some(prefix) => {
                if !raw.starts_with(prefix) {
                    Some(Stop::Invalid(raw.to_string()))
                } else if out.visible.iter().any(|v| v == raw) {
                    Some(Stop::Repeated(raw.to_string()))
                } else {
                    out.visible.push(raw.to_string());
                    None
                }
            }
            None => {
                // `_strtoul`: an optional sign, then digits; no digits reads as -1.
                let trimmed = raw.trim();
                let (sign, rest) = match trimmed.strip_prefix(['+', '-']) {
                    Some(r) => (&trimmed[..1], r),
                    None => ("", trimmed),
                };
                let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                let is_zero = !digits.is_empty() && digits.bytes().all(|b| b == b'0');
                if digits.is_empty() || (sign == "-" && !is_zero) {
                    let later = value.split(',').skip(pos + 1).any(|e| !e.trim().is_empty());
                    if trimmed.is_empty() && !out.visible.is_empty() && !later {
                        None // a trailing comma loses nothing
                    } else if sign == "-"
                        || trimmed.eq_ignore_ascii_case("NoDevFiles")
                        || trimmed.is_empty()
                    {
                        Some(Stop::Hidden(raw.to_string()))
                    } else {
                        Some(Stop::Invalid(raw.to_string()))
                    }
                } else {
                    if trimmed != raw || sign == "+" || digits.len() != rest.len() {
                        out.sloppy.push(raw.to_string());
                    }
                    let shown = digits.trim_start_matches('0');
                    let shown = if shown.is_empty() { "0" } else { shown }.to_string();
                    let index: Option<u64> = shown.parse().ok();
                    if out.visible.contains(&shown) {
                        Some(Stop::Repeated(shown))
                    } else if gpu_count.is_some_and(|n| index.is_none_or(|i| i >= n as u64)) {
                        Some(Stop::OutOfRange(shown))
                    } else {
                        out.visible.push(shown);
                        None
                    }
                }
            }
        };
        if let Some(stop) = stop {
            if matches!(stop, Stop::Repeated(_)) {
                out.visible.clear();
            }
            out.stop = Some((pos, stop));
            break;
        }
    }
    out
}

/// NVML's GPU UUIDs and MIG-instance UUIDs.
fn nvml_uuids(sys: &crate::facts::nvml::NvmlSystem) -> (Vec<&str>, Vec<&str>) {
    let gpus = sys
        .devices
        .iter()
        .filter_map(|g| g.uuid.get().map(String::as_str))
        .collect();
    let migs = sys
        .devices
        .iter()
        .flat_map(|g| g.mig.instances.iter())
        .filter_map(|m| m.uuid.get().map(String::as_str))
        .collect();
    (gpus, migs)
}

/// Whether a CUDA_VISIBLE_DEVICES UUID entry (or a unique prefix, as CUDA accepts) names a
/// GPU or MIG instance NVML lists; a MIG- entry only matches MIG instances.
pub fn names_a_known_uuid(sys: &crate::facts::nvml::NvmlSystem, entry: &str) -> bool {
    let (gpus, migs) = nvml_uuids(sys);
    let known = if entry.starts_with("MIG-") {
        migs
    } else {
        gpus
    };
    known.iter().any(|u| u.starts_with(entry))
}

/// CUDA also stops at the first UUID no GPU here has, keeping the entries before it; that
/// comes before any later stop the parse found (a repeat after it is never reached).
fn stop_at_unknown_uuid(
    parsed: &mut VisibleDevices,
    value: &str,
    sys: &crate::facts::nvml::NvmlSystem,
) {
    let read = parsed.stop.as_ref().map_or(usize::MAX, |(pos, _)| *pos);
    let entries: Vec<&str> = value.split(',').take(read).collect();
    if let Some(pos) = entries
        .iter()
        .position(|e| !names_a_known_uuid(sys, e.trim()))
    {
        parsed.visible = entries[..pos].iter().map(|e| e.to_string()).collect();
        parsed.stop = Some((pos, Stop::Unknown(entries[pos].to_string())));
    }
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(env) = &snap.environment else {
        return Outcome::NotApplicable("environment probe did not run".into());
    };
    let Some(value) = env.value(crate::envvars::CUDA_VISIBLE_DEVICES.name) else {
        return Outcome::Checked(vec![]);
    };
    // Without a GPU, hiding GPUs is harmless (CPU-only CI sets CUDA_VISIBLE_DEVICES=-1 on purpose).
    if let Some(na) = super::requires_nvidia_hardware(snap) {
        return na;
    }
    let count = snap.gpu_count();
    let mut parsed = parse_visible_devices(value, count.as_ref().map(|c| c.count));
    let nvml = snap.nvml.as_ref().and_then(|n| n.system());
    if let (true, Some(sys)) = (parsed.uuid_mode, nvml) {
        stop_at_unknown_uuid(&mut parsed, value, sys);
    }
    let shown = format!("CUDA_VISIBLE_DEVICES={value:?}");
    let count_evidence = |f: Finding| match &count {
        Some(c) => f.evidence(
            Subject::GpuCount,
            format!("{} GPU(s) on this system", c.count),
            c.source.clone(),
        ),
        None => f,
    };
    let none_left = parsed.visible.is_empty();
    let visible_note = if none_left {
        "CUDA sees no GPU".to_string()
    } else {
        format!("CUDA sees only {}", parsed.visible.join(","))
    };
    let mut out = Vec::new();
    let unset_fix = |f: Finding| {
        f.fix_cmd("Unset it to use every GPU", "unset CUDA_VISIBLE_DEVICES")
            .fix_text("Remove hard-coded exports from launch scripts, shell profiles and os.environ[...] lines")
    };
    match &parsed.stop {
        Some((_, Stop::Hidden(entry))) if none_left => {
            let why = if value.trim().is_empty() {
                "is set but empty".to_string()
            } else if entry.trim().eq_ignore_ascii_case("NoDevFiles") {
                "is NoDevFiles (Slurm sets this when the job was given no GPU)".to_string()
            } else {
                format!("starts with {:?}", entry.trim())
            };
            let mut f = Finding::new(codes::GD009, Severity::Error, format!("CUDA_VISIBLE_DEVICES {why}: every GPU is hidden"))
                .detail("CUDA reads CUDA_VISIBLE_DEVICES left to right and stops at the first entry that is not a device; here that is the first one, so CUDA reports no device (\"no CUDA-capable device is detected\", torch.cuda.is_available() is False).")
                .evidence(fact(), shown.clone(), "environment");
            f = unset_fix(count_evidence(f));
            if entry.trim().eq_ignore_ascii_case("NoDevFiles") {
                f = f.fix_cmd(
                    "Under Slurm, request GPUs for the job",
                    "srun --gres=gpu:1 COMMAND",
                );
            }
            out.push(f);
        }
        Some((pos, Stop::OutOfRange(index))) => {
            let n = count.as_ref().map(|c| c.count).unwrap_or(0);
            let existing = if n == 0 {
                "none".to_string()
            } else {
                (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
            };
            let severity = if none_left {
                Severity::Error
            } else {
                Severity::Warning
            };
            let title = if none_left {
                format!(
                    "CUDA_VISIBLE_DEVICES={value} but GPU {index} does not exist: no GPU visible"
                )
            } else {
                format!(
                    "CUDA_VISIBLE_DEVICES names GPU {index}, which does not exist: {visible_note}"
                )
            };
            let f = Finding::new(codes::GD010, severity, title)
                .detail(format!("This system has {n} GPU(s) (indices {existing}). CUDA stops at the first index that does not exist (entry {} here) and ignores everything after it, so {visible_note}. PyTorch then says \"No CUDA GPUs are available\".", pos + 1))
                .evidence(fact(), shown.clone(), "environment");
            let valid = if n == 0 {
                "0".to_string()
            } else {
                existing.clone()
            };
            out.push(unset_fix(count_evidence(f)).fix_cmd(
                "Or name GPUs that exist",
                crate::sh!("export CUDA_VISIBLE_DEVICES={}", valid),
            ));
        }
        Some((pos, stop @ (Stop::Repeated(_) | Stop::Invalid(_) | Stop::Hidden(_)))) => {
            let (what, why) = match stop {
                Stop::Repeated(e) => (format!("repeats {e}"), "A repeated device makes CUDA see none at all.".to_string()),
                Stop::Invalid(e) if parsed.uuid_mode => (
                    format!("mixes UUIDs with {:?}", e),
                    "A list that starts with a GPU-/MIG- UUID must hold only UUIDs of that kind, without spaces: CUDA stops at the first entry that is not.".to_string(),
                ),
                Stop::Invalid(e) => (
                    format!("has an invalid entry {:?}", e),
                    "Entries are GPU indices (0,1), GPU-/MIG- UUIDs, never names, ranges or a mix of indices and UUIDs: CUDA stops at the first entry it cannot read.".to_string(),
                ),
                Stop::Hidden(e) => (format!("has {:?} after valid entries", e), "A negative or empty entry ends the list.".to_string()),
                Stop::OutOfRange(i) | Stop::Unknown(i) => (format!("names {i}"), String::new()),
            };
            let severity = if none_left {
                Severity::Error
            } else {
                Severity::Warning
            };
            let f = Finding::new(
                codes::GD011,
                severity,
                format!("CUDA_VISIBLE_DEVICES {what}: {visible_note}"),
            )
            .detail(format!(
                "{why} The list ends at entry {}, so {visible_note}.",
                pos + 1
            ))
            .evidence(fact(), shown.clone(), "environment");
            let f = unset_fix(count_evidence(f))
                .fix_text("Write a comma-separated list without spaces, e.g. CUDA_VISIBLE_DEVICES=0,1 or CUDA_VISIBLE_DEVICES=GPU-8e1f...,GPU-33a0...");
            out.push(f);
        }
        Some((pos, Stop::Unknown(entry))) => {
            let (gpu_uuids, mig_uuids) = nvml.map(nvml_uuids).unwrap_or_default();
            let severity = if none_left {
                Severity::Error
            } else {
                Severity::Warning
            };
            let mig_on_plain = entry.starts_with("MIG-") && mig_uuids.is_empty();
            let title = if mig_on_plain {
                format!("CUDA_VISIBLE_DEVICES names MIG instance {entry}, but no GPU here has MIG enabled")
            } else {
                format!("CUDA_VISIBLE_DEVICES names {entry}, which no GPU here has")
            };
            let title = if none_left {
                title
            } else {
                format!("{title}: {visible_note}")
            };
            let mut f = Finding::new(codes::GD010, severity, title)
                .detail(format!("CUDA matches each UUID (or a unique prefix of one) against the GPUs present and stops at the first it cannot find (entry {} here); that entry and everything after it stay hidden, so {visible_note}. UUIDs change when a GPU is replaced and differ between nodes, so lists copied from another machine fail here.", pos + 1))
                .evidence(fact(), shown.clone(), "environment");
            for u in gpu_uuids.iter().chain(mig_uuids.iter()) {
                f = f.context(format!("present: {u}"), "NVML");
            }
            out.push(
                f.fix_cmd("List the UUIDs this node has", "nvidia-smi -L")
                    .fix_cmd("Or use indices", "export CUDA_VISIBLE_DEVICES=0"),
            );
        }
        None => {}
    }
    if !parsed.sloppy.is_empty() && out.iter().all(|f| f.code != codes::GD011) {
        out.push(
            Finding::new(codes::GD011, Severity::Warning, format!("CUDA_VISIBLE_DEVICES has spaces or stray characters: {}", parsed.sloppy.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")))
                .detail("CUDA reads the leading digits of each entry and skips the rest, so this works by accident; other readers (Slurm, MPI launchers, frameworks that parse the variable themselves) may not agree.")
                .evidence(fact(), shown.clone(), "environment")
                .fix_cmd("Write it without spaces", crate::sh!("export CUDA_VISIBLE_DEVICES={}", parsed.visible.join(","))),
        );
    }
    if out.is_empty() && count.is_none() && !parsed.uuid_mode {
        return Outcome::NotApplicable(
            "the GPU count is unknown, so the indices could not be range-checked".into(),
        );
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_semantics() {
        let p = parse_visible_devices("0,1", Some(2));
        assert_eq!(p.visible, ["0", "1"]);
        assert!(p.stop.is_none());
        assert_eq!(
            parse_visible_devices("2", Some(1)).stop,
            Some((0, Stop::OutOfRange("2".into())))
        );
        let p = parse_visible_devices("0,2,1", Some(2));
        assert_eq!(p.visible, ["0"]);
        assert_eq!(p.stop, Some((1, Stop::OutOfRange("2".into()))));
        assert!(parse_visible_devices("0,0", Some(2)).visible.is_empty());
        assert!(parse_visible_devices("-1", None).visible.is_empty());
        assert!(parse_visible_devices("", None).visible.is_empty());
        assert!(parse_visible_devices("NoDevFiles", None).visible.is_empty());
        assert_eq!(parse_visible_devices("1,-1,0", Some(2)).visible, ["1"]);
        let p = parse_visible_devices("GPU-abc,0", Some(2));
        assert_eq!(p.visible, ["GPU-abc"]);
        assert!(matches!(p.stop, Some((1, Stop::Invalid(_)))));
        let p = parse_visible_devices("0, 1", Some(2));
        assert_eq!(p.visible, ["0", "1"]);
        assert_eq!(p.sloppy, [" 1"]);
        assert_eq!(parse_visible_devices("5", None).visible, ["5"]);
        assert_eq!(parse_visible_devices("+1", Some(2)).visible, ["1"]);
        assert_eq!(parse_visible_devices("-0", Some(2)).visible, ["0"]);
        let p = parse_visible_devices("0,1,", Some(2));
        assert_eq!((p.visible.len(), p.stop.is_none()), (2, true));
        assert!(matches!(
            parse_visible_devices("0,,1", Some(2)).stop,
            Some((1, Stop::Hidden(_)))
        ));
        assert_eq!(
            parse_visible_devices("99999999999999999999999", Some(2)).stop,
            Some((0, Stop::OutOfRange("99999999999999999999999".into())))
        );
        assert!(matches!(
            parse_visible_devices("gpu0", None).stop,
            Some((0, Stop::Invalid(_)))
        ));
    }

    mod on_snapshots {
        use super::super::*;
        use crate::facts::nvml::{Field, MigInstance};
        use crate::testing::*;

        fn with(value: &str) -> Snapshot {
            let mut s = healthy();
            set_env(&mut s, "CUDA_VISIBLE_DEVICES", value);
            s
        }

        #[test]
        fn unset_or_valid_is_clean() {
            assert_clean(run(&healthy()));
            assert_clean(run(&with("0,1")));
            assert_clean(run(&with(&uuid(1))));
            assert_clean(run(&with(&uuid(0)[..12])));
        }

        #[test]
        fn hiding_every_gpu_is_an_error() {
            let f = only(run(&with("-1")), codes::GD009, Severity::Error);
            assert!(f.title.contains("every GPU is hidden"), "{}", f.title);
            assert_eq!(first_cmd(&f), "unset CUDA_VISIBLE_DEVICES");
            let f = only(run(&with("NoDevFiles")), codes::GD009, Severity::Error);
            assert!(fixes_mention(&f, "srun --gres=gpu:1"));
            only(run(&with("")), codes::GD009, Severity::Error);
        }

        #[test]
        fn an_index_past_the_gpus_is_an_error_when_nothing_is_left() {
            let f = only(run(&with("2")), codes::GD010, Severity::Error);
            assert!(f.title.contains("GPU 2 does not exist"), "{}", f.title);
            assert!(fixes_mention(&f, "export CUDA_VISIBLE_DEVICES=0,1"));
            let f = only(run(&with("0,2")), codes::GD010, Severity::Warning);
            assert!(f.title.contains("CUDA sees only 0"), "{}", f.title);
        }

        #[test]
        fn repeated_invalid_and_sloppy_entries() {
            let f = only(run(&with("0,0")), codes::GD011, Severity::Error);
            assert!(f.title.contains("repeats 0"), "{}", f.title);
            let f = only(run(&with("0,gpu1")), codes::GD011, Severity::Warning);
            assert!(f.title.contains("invalid entry"), "{}", f.title);
            let f = only(run(&with("0, 1")), codes::GD011, Severity::Warning);
            assert!(f.title.contains("spaces"), "{}", f.title);
            assert_eq!(first_cmd(&f), "export CUDA_VISIBLE_DEVICES=0,1");
        }

        #[test]
        fn unknown_uuids_are_errors() {
            let f = only(run(&with("GPU-deadbeef")), codes::GD010, Severity::Error);
            assert!(f.title.contains("which no GPU here has"), "{}", f.title);
            assert_eq!(first_cmd(&f), "nvidia-smi -L");
            let f = only(run(&with("MIG-deadbeef")), codes::GD010, Severity::Error);
            assert!(
                f.title.contains("no GPU here has MIG enabled"),
                "{}",
                f.title
            );
        }

        fn with_mig(value: &str) -> Snapshot {
            let mut s = with(value);
            let g = nvml_gpu(&mut s, 0);
            g.mig.enabled = Field::Value(true);
            g.mig.instances = vec![MigInstance {
                index: 0,
                uuid: Field::Value(MIG.into()),
                memory_total: Field::Value(10 * GIB),
            }];
            s
        }

        const MIG: &str = "MIG-00000000-aaaa-bbbb-cccc-dddddddddddd";

        // Like "0,2" on one GPU: CUDA keeps the entries before the first it cannot find.
        #[test]
        fn an_unknown_entry_after_a_known_one_is_a_warning() {
            let f = only(run(&with("0,2")), codes::GD010, Severity::Warning);
            assert!(f.title.contains("CUDA sees only 0"), "{}", f.title);
            let v = format!("{},GPU-deadbeef,{}", uuid(0), uuid(1));
            let f = only(run(&with(&v)), codes::GD010, Severity::Warning);
            assert!(
                f.title.contains(&format!("CUDA sees only {}", uuid(0))),
                "{}",
                f.title
            );
            assert!(f.detail.contains("entry 2"), "{}", f.detail);
            let f = only(
                run(&with_mig(&format!("{MIG},MIG-deadbeef"))),
                codes::GD010,
                Severity::Warning,
            );
            assert!(
                f.title.contains(&format!("CUDA sees only {MIG}")),
                "{}",
                f.title
            );
        }

        #[test]
        fn an_unknown_first_entry_is_an_error() {
            only(run(&with("2,0")), codes::GD010, Severity::Error);
            let v = format!("GPU-deadbeef,{}", uuid(0));
            only(run(&with(&v)), codes::GD010, Severity::Error);
            let f = only(
                run(&with_mig(&format!("MIG-deadbeef,{MIG}"))),
                codes::GD010,
                Severity::Error,
            );
            assert!(f.title.contains("which no GPU here has"), "{}", f.title);
            assert_clean(run(&with_mig(MIG)));
        }

        // CUDA stops at the unknown UUID and never reaches the repeat after it.
        #[test]
        fn an_unknown_uuid_comes_before_a_later_repeat() {
            let v = format!("{},GPU-deadbeef,{}", uuid(0), uuid(0));
            only(run(&with(&v)), codes::GD010, Severity::Warning);
        }

        #[test]
        fn not_applicable_without_environment_gpu_or_count() {
            let mut s = healthy();
            s.environment = None;
            assert_na(run(&s));
            let mut s = no_gpu();
            set_env(&mut s, "CUDA_VISIBLE_DEVICES", "-1");
            assert_na(run(&s));
            // A GPU only the driver lists: the count is unknown, indices cannot be checked.
            let mut s = with("0");
            s.nvml = None;
            s.pci = None;
            nodes_mut(&mut s).nodes.clear();
            assert_na(run(&s));
        }
    }
}
