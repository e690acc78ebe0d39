//! GD016: be honest about what could not be seen — a probe that ran out of time,
//! or a file a probe needed that could not be read.

use super::{Outcome, Rule};
use crate::fact::{Fact, MissingReason};
use crate::findings::{Finding, Severity};
use crate::snapshot::{ProbeStatus, Snapshot};

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
                .evidence(format!("probe:{name}"), run.status.as_str(), "probe runner");
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
            f = f.evidence(format!("file:{source}"), detail, source);
        }
        out.push(f.fix_text("Run gpudoctor as a user who can read these files, or check the filesystem they live on"));
    }
    Outcome::Checked(out)
}
