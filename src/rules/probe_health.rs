//! GD016: be honest about what could not be seen — a probe that ran out of time, a file a
//! probe needed that could not be read, or a bound the loader emulation stopped at (a module
//! whose dependencies were not followed to the end is never reported as loading).

use super::{Outcome, Rule};
use crate::codes;
use crate::fact::{Fact, MissingReason};
use crate::facts::linkage::Linkage;
use crate::findings::{Finding, Severity};
use crate::loader::Failure;
use crate::snapshot::{ProbeStatus, Snapshot};
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "probe_health",
    codes: &[codes::GD016],
    views: &[super::View::Libs],
    checks: "every probe finished and could read what it needed",
    judges: &[],
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
    for l in snap.linkage.iter().flatten() {
        out.extend(not_followed(l));
    }
    for (name, run) in &snap.probes {
        if run.status == ProbeStatus::TimedOut || run.status == ProbeStatus::Failed {
            // An error: a report that could not look must not pass a CI gate.
            let f = Finding::new(codes::GD016, Severity::Error, format!("the {name} probe did not finish ({})", run.status.as_str().replace('_', " ")))
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
        let mut f = Finding::new(codes::GD016, Severity::Warning, format!("{} file(s) could not be read; the report is incomplete", unread.len()))
            .detail("gpudoctor could not read some of the files it inspects, so the checks that depend on them may be missing or less certain.");
        for (source, detail) in unread {
            f = f.evidence(Subject::File(source.clone()), detail, source);
        }
        out.push(f.fix_text("Run gpudoctor as a user who can read these files, or check the filesystem they live on"));
    }
    Outcome::Checked(out)
}

/// GD016 for what the bounds left unexamined: the environment's modules past the walk's
/// bounds, and each module whose dependencies were not followed to the end.
fn not_followed(l: &Linkage) -> Vec<Finding> {
    let mut out = Vec::new();
    if !l.limits.is_empty() {
        let mut f = Finding::new(
            codes::GD016,
            Severity::Warning,
            format!("Not every native module in {} was examined", l.site),
        )
        .detail(format!(
            "The walk of the environment stopped at its bounds: {}. The modules it did not open were not judged, so whether they load is unknown.",
            l.limits.join("; ")
        ));
        for limit in &l.limits {
            f = f.evidence(Subject::Environment, limit.clone(), l.site.clone());
        }
        out.push(f.fix_text(
            "Examine the modules that matter one by one: gpudoctor libs --all PATH/TO/MODULE.so …",
        ));
    }
    for m in &l.modules {
        let stopped: Vec<&str> = m
            .failures
            .iter()
            .filter_map(|f| match &f.failure {
                Failure::Limit { detail } => Some(detail.as_str()),
                _ => None,
            })
            .collect();
        if stopped.is_empty() {
            continue;
        }
        out.push(
            Finding::new(
                codes::GD016,
                Severity::Warning,
                format!("Whether {} loads was not judged: its dependencies were not followed to the end", m.path),
            )
            .detail(format!(
                "The loader emulation stops at a bound ({}). The libraries past it were not looked for, and a missing one would make the real loader refuse the module.",
                stopped.join("; ")
            ))
            .evidence(Subject::Extension(m.path.clone()), stopped.join("; "), "loader emulation")
            .fix_cmd(
                "Ask the real loader: ldd prints every library it maps, and `not found` for one it cannot",
                crate::sh!("ldd {}", m.path),
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::{How, Object};
    use crate::snapshot::ProbeRun;
    use crate::testing::*;

    fn with_modules(s: &mut Snapshot, modules: Vec<crate::facts::linkage::Module>) {
        let objects = (0..4)
            .map(|i| Object::for_test(&format!("{SITE}/m{i}.so"), None, How::Path, Vec::new()))
            .collect();
        s.linkage = Some(vec![linkage(modules, objects, Vec::new())]);
    }

    #[test]
    fn a_module_not_followed_to_the_end_is_not_judged_as_loading() {
        let mut s = healthy();
        let detail = "more than 4000 objects; the rest was not followed";
        with_modules(
            &mut s,
            vec![linked_module(
                "deep",
                "deep 1.0",
                1,
                vec![Failure::Limit {
                    detail: detail.into(),
                }],
            )],
        );
        let f = only(run(&s), codes::GD016, Severity::Warning);
        assert!(f.title.contains("was not judged"), "{}", f.title);
        assert!(f.detail.contains(detail), "{}", f.detail);
        assert!(first_cmd(&f).starts_with("ldd "), "{}", first_cmd(&f));
        assert!(f.evidence.iter().any(|e| e
            .fact
            .as_ref()
            .is_some_and(|x| x.to_string().contains("deep"))));
    }

    #[test]
    fn a_walk_stopped_at_its_bound_says_what_was_not_examined() {
        let mut s = healthy();
        with_modules(&mut s, Vec::new());
        let limit = format!("{SITE}: 2400 native modules; the first 2000 were opened");
        s.linkage.as_mut().unwrap()[0].limits = vec![limit.clone()];
        let f = only(run(&s), codes::GD016, Severity::Warning);
        assert!(f.detail.contains(&limit), "{}", f.detail);
    }

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
            codes::GD016,
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
            codes::GD016,
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
            crate::facts::kernel_module::MODULES_FILE,
            MissingReason::PermissionDenied,
            "denied",
        );
        nodes_mut(&mut s).nodes[0].error = Some("permission denied".into());
        let f = only(run(&s), codes::GD016, Severity::Warning);
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
            .push(crate::facts::pytorch::MetadataProblem {
                source: format!("{SITE}/torch-2.8.0.dist-info/METADATA"),
                detail: "Requires-Dist on line 9: marker too deeply nested (more than 32 levels of parentheses); not judged".into(),
            });
        let f = only(run(&s), codes::GD016, Severity::Warning);
        assert!(f.evidence[0].value.contains("too deeply nested"), "{f:?}");
    }

    #[test]
    fn never_not_applicable_even_with_nothing_probed() {
        assert_clean(run(&Snapshot::default()));
    }
}
