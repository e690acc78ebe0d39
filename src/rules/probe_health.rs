//! GD016: be honest about what could not be seen — a probe that ran out of time,
//! or a file a probe needed that could not be read.

use super::{Outcome, Rule};
use crate::fact::{Fact, MissingReason};
use crate::findings::{Finding, Severity};
use crate::snapshot::{ProbeStatus, Snapshot};
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "probe_health",
    codes: &["GD016"],
    views: &[],
    checks: "every probe finished and could read what it needed",
    run,
};

fn unreadable<T>(fact: &Fact<T>) -> Option<String> {
    let m = fact.missing_info()?;
    matches!(
        m.reason,
        MissingReason::PermissionDenied
            | MissingReason::Unreadable
            | MissingReason::Malformed
            | MissingReason::TimedOut
    )
    .then(|| format!("{} ({})", m.detail, m.reason.as_str()))
}

fn run(snap: &Snapshot) -> Outcome {
    let mut out = Vec::new();
    for (name, run) in &snap.probes {
        if run.status == ProbeStatus::TimedOut || run.status == ProbeStatus::Failed {
            // An error: a report that could not look must not pass a CI gate.
            let f = Finding::new("GD016", Severity::Error, format!("the {name} probe did not finish ({})", run.status.as_str().replace('_', " ")))
                .detail(format!("{} Its facts are missing from this report, and the rules that need them were not applied.", run.detail.clone().unwrap_or_default()))
                .evidence(Subject::Probe(name.clone()), run.status.as_str(), "probe runner");
            out.push(if run.status == ProbeStatus::TimedOut {
                f.fix_cmd("Give it more time", "gpudoctor check --timeout 30")
                    .fix_text("A read that hangs usually means a hung network filesystem or a wedged driver: check `dmesg` for hung tasks")
            } else {
                f.fix_cmd("This is a gpudoctor bug: attach this report to a bug report", "gpudoctor check --format markdown")
            });
        }
    }
    let mut unread = Vec::new();
    if let Some(k) = &snap.kernel_module {
        unread.extend(unreadable(&k.modules).map(|d| (k.modules.source.clone(), d)));
        unread.extend(unreadable(&k.version_file).map(|d| (k.version_file.source.clone(), d)));
    }
    if let Some(p) = &snap.pci {
        unread.extend(unreadable(&p.devices).map(|d| (p.devices.source.clone(), d)));
    }
    if let Some(l) = &snap.libraries {
        let cache = &l.search.cache;
        unread.extend(unreadable(cache).map(|d| (cache.source.clone(), d)));
    }
    if let Some(t) = &snap.toolkits {
        for tk in &t.installs {
            unread.extend(unreadable(&tk.version).map(|d| (tk.version.source.clone(), d)));
        }
    }
    for t in snap
        .python
        .iter()
        .flatten()
        .filter_map(|e| e.torch.as_ref())
    {
        for p in &t.requires_problems {
            unread.push((p.source.clone(), format!("{} (malformed)", p.detail)));
        }
    }
    if let Some(n) = &snap.device_nodes {
        if let Some(e) = &n.listing_error {
            unread.push(("/dev".into(), e.clone()));
        }
        for node in &n.nodes {
            if let Some(e) = &node.error {
                unread.push((node.path.clone(), e.clone()));
            }
        }
    }
    if !unread.is_empty() {
        let mut f = Finding::new("GD016", Severity::Warning, format!("{} file(s) could not be read; the report is incomplete", unread.len()))
            .detail("gpudoctor could not read some of the files it inspects, so the checks that depend on them may be missing or less certain.");
        for (source, detail) in unread {
            f = f.evidence(Subject::File(source.clone()), detail, source);
        }
        out.push(f.fix_text("Run gpudoctor as a user who can read these files, or check the filesystem they live on"));
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::*;
    use crate::snapshot::ProbeRun;

    fn with_probe(status: ProbeStatus) -> Snapshot {
        let mut s = healthy();
        s.probes.insert(
            "nvml".into(),
            ProbeRun {
                status,
                elapsed_us: 5_000_000,
                detail: Some("did not finish".into()),
            },
        );
        s
    }

    #[test]
    fn healthy_probes_are_clean() {
        assert_clean(run(&healthy()));
        assert_clean(run(&no_gpu()));
    }

    #[test]
    fn a_timed_out_probe_is_an_error_suggesting_more_time() {
        let f = only(
            run(&with_probe(ProbeStatus::TimedOut)),
            "GD016",
            Severity::Error,
        );
        assert!(
            f.title
                .contains("the nvml probe did not finish (timed out)"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "gpudoctor check --timeout 30");
    }

    #[test]
    fn a_failed_probe_is_an_error_asking_for_a_report() {
        let f = only(
            run(&with_probe(ProbeStatus::Failed)),
            "GD016",
            Severity::Error,
        );
        assert_eq!(first_cmd(&f), "gpudoctor check --format markdown");
    }

    #[test]
    fn skipped_probes_and_absent_files_are_not_findings() {
        assert_clean(run(&with_probe(ProbeStatus::Skipped)));
    }

    #[test]
    fn unreadable_files_are_a_warning() {
        let mut s = healthy();
        kernel_module_mut(&mut s).modules = Fact::missing(
            crate::probes::kernel_module::MODULES_FILE,
            MissingReason::PermissionDenied,
            "denied",
        );
        nodes_mut(&mut s).nodes[0].error = Some("permission denied".into());
        let f = only(run(&s), "GD016", Severity::Warning);
        assert!(
            f.title.contains("2 file(s) could not be read"),
            "{}",
            f.title
        );
    }

    #[test]
    fn a_torch_requirement_that_could_not_be_judged_is_a_warning() {
        let mut s = healthy();
        torch_mut(&mut s)
            .requires_problems
            .push(crate::probes::pytorch::MetadataProblem {
                source: format!("{SITE}/torch-2.8.0.dist-info/METADATA"),
                detail: "Requires-Dist on line 9: marker too deeply nested (more than 32 levels of parentheses); not judged".into(),
            });
        let f = only(run(&s), "GD016", Severity::Warning);
        assert!(f.evidence[0].value.contains("too deeply nested"), "{f:?}");
    }

    #[test]
    fn never_not_applicable_even_with_nothing_probed() {
        assert_clean(run(&Snapshot::default()));
    }
}
