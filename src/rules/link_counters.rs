//! GD084: the PCIe AER error counters of the GPUs and of the bridges on their paths
//! (`/sys/bus/pci/devices/*/aer_dev_*`). The topology probe reads them, and they are read
//! again after the other probes and the smoke test: a counter that grew in between is a link
//! failing now (a fatal one an error, non-fatal or a burst of corrected ones a warning). A
//! count that did not grow is history since boot: one note lists them.
//! GD085: the same for NVML's PCIe replay counter and each NVLink's CRC, replay and recovery
//! counters, read by the NVML probe and again after the smoke test.

use super::kernel_log::GpuNames;
use super::{Outcome, Rule};
use crate::codes;
use crate::facts::topology::AerCounters;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "link_counters",
    codes: &[codes::GD084, codes::GD085],
    views: &[super::View::Devices],
    checks: "no PCIe AER, PCIe replay or NVLink error counter of a GPU's links grows while gpudoctor runs",
    judges: &[SubjectKind::PciFunction, SubjectKind::Gpu],
    run,
};

/// Corrected errors between the two reads from which the link counts as replaying now.
const CORRECTED_BURST: u64 = 10;

const SOURCE: &str = "/sys/bus/pci/devices/*/aer_dev_{correctable,nonfatal,fatal}";

fn run(snap: &Snapshot) -> Outcome {
    let aer = snap.topology.as_ref().filter(|t| !t.aer.is_empty());
    let nvml = nvml_counters(snap);
    if aer.is_none() && nvml.is_empty() {
        return Outcome::NotApplicable(
            "no link error counter could be read: no GPU or bridge above one exposes AER counters (Linux 4.19+ with AER enabled) and NVML gave no PCIe replay or NVLink counter".into(),
        );
    }
    let mut out = aer.map_or_else(Vec::new, |_| aer_findings(snap));
    out.extend(nvml_findings(snap, &nvml));
    out.extend(baseline_findings(snap));
    Outcome::Checked(out)
}

/// Corrected AER errors, PCIe replays or NVLink CRC errors and replays since a baseline report
/// from which the link counts as failing (hours or days apart, a few are normal).
const BASELINE_BURST: u64 = 100;

/// "3 h", "2 days": the time between the baseline and this run.
fn span_text(seconds: Option<f64>) -> String {
    match seconds {
        Some(s) if s >= 2.0 * 86_400.0 => format!("{:.0} days", s / 86_400.0),
        Some(s) if s >= 3600.0 => format!("{:.0} h", s / 3600.0),
        Some(s) => format!("{:.0} min", (s / 60.0).max(1.0)),
        None => "an unknown time".into(),
    }
}

/// What grew since `check --baseline OLD.json` (snapshot.counters_baseline): the AER counters
/// of the GPUs and bridges, NVML's PCIe replays and NVLink counters per GPU (by UUID). A
/// counter lower than in the baseline was reset (a reboot, a driver reload): not compared.
fn baseline_findings(snap: &Snapshot) -> Vec<Finding> {
    let Some(b) = snap
        .counters_baseline
        .as_ref()
        .filter(|b| b.not_compared.is_none())
    else {
        return Vec::new();
    };
    let since = format!(
        "since the baseline report {} ({})",
        b.report,
        b.time.as_deref().unwrap_or("time unknown")
    );
    let took = span_text(b.elapsed_s);
    let mut out = Vec::new();
    let gpus = GpuNames::of(snap);
    let current_aer = snap.topology.as_ref().map_or(&[][..], |t| t.aer.as_slice());
    for now in current_aer {
        let Some(then) = b.aer.iter().find(|d| d.address == now.address) else {
            continue;
        };
        let reset = [
            (then.correctable, now.correctable),
            (then.nonfatal, now.nonfatal),
            (then.fatal, now.fatal),
        ]
        .iter()
        .any(|(a, b)| matches!((a, b), (Some(a), Some(b)) if b < a));
        if reset {
            continue;
        }
        let Some(g) = growth(then, now) else { continue };
        let Some((place, subject)) = gpus.link_place(snap, &now.address) else {
            continue;
        };
        out.push(growing(
            &place,
            subject,
            then,
            &Window {
                during: since.clone(),
                took: took.clone(),
                when: "since the baseline report",
                corrected_bound: BASELINE_BURST,
                now: Some(now),
            },
            g,
        ));
    }
    let Some(sys) = snap.nvml_system() else {
        return out;
    };
    for g in &sys.devices {
        let Some(then) = g
            .uuid
            .get()
            .and_then(|u| b.gpus.iter().find(|t| t.uuid.eq_ignore_ascii_case(u)))
        else {
            continue;
        };
        let mut grown: Vec<(String, u64, u64)> = Vec::new();
        if let (Some(a), Some(n)) = (then.pcie_replay_counter, g.pcie_replay_counter.get()) {
            grown.push(("PCIe replays".into(), u64::from(a), u64::from(*n)));
        }
        if let Some(links) = g.nvlink_errors.get() {
            for (link, (a, n)) in then.nvlink_errors.iter().zip(links).enumerate() {
                let (Some(a), Some(n)) = (a, n) else { continue };
                for (what, x, y) in [
                    ("CRC FLIT errors", a.crc_flit, n.crc_flit),
                    ("CRC data errors", a.crc_data, n.crc_data),
                    ("replays", a.replay, n.replay),
                    ("recoveries", a.recovery, n.recovery),
                ] {
                    grown.push((format!("NVLink {link} {what}"), x, y));
                }
            }
        }
        for (what, a, n) in grown.into_iter().filter(|(_, a, n)| n > a) {
            let grew = n - a;
            let failing = if what.ends_with("recoveries") {
                grew >= 1
            } else {
                grew >= BASELINE_BURST
            };
            let severity = if failing {
                Severity::Warning
            } else {
                Severity::Info
            };
            let mut f = Finding::new(
                codes::GD085,
                severity,
                format!("{}: {what} grew {since} (+{grew} in {took})", g.label()),
            )
            .detail(if failing {
                "The link's error counter grew since the earlier report in these numbers: the link retries or retrains, which costs bandwidth and can end in an NVLink or PCIe error that stops jobs (Xid 74 for NVLink)."
            } else {
                "A few link errors since the earlier report; occasional retries are normal."
            })
            .evidence(
                Subject::Gpu(g.index),
                format!("{what} {a} → {n} in {took}"),
                "NVML (nvmlDeviceGetPcieReplayCounter, nvmlDeviceGetNvLinkErrorCounter), against the baseline report",
            );
            if failing {
                f = f
                    .fix_cmd("See every link's error counters", crate::sh!("nvidia-smi nvlink -e -i {}", g.index))
                    .fix_text("Reseat the NVLink bridge, or have the baseboard checked (SXM), in a maintenance window; if the errors follow the GPU, service it");
            }
            out.push(f);
        }
    }
    out
}

fn aer_findings(snap: &Snapshot) -> Vec<Finding> {
    let Some(topo) = &snap.topology else {
        return Vec::new();
    };
    let gpus = GpuNames::of(snap);
    let mut out = Vec::new();
    let mut history = Vec::new();
    for first in &topo.aer {
        let Some((place, subject)) = gpus.link_place(snap, &first.address) else {
            continue;
        };
        let again = topo.aer_again.as_ref().and_then(|r| {
            r.devices
                .iter()
                .find(|d| d.address == first.address)
                .map(|d| (r, d))
        });
        let grown = again.and_then(|(r, d)| growth(first, d).map(|g| (r, g)));
        match grown {
            Some((r, g)) => out.push(growing(
                &place,
                subject,
                first,
                &Window {
                    during: format!("during {}", r.after),
                    took: format!("{} ms", r.elapsed_ms),
                    when: "while gpudoctor ran",
                    corrected_bound: CORRECTED_BURST,
                    now: None,
                },
                g,
            )),
            None => {
                let totals = nonzero(first);
                if !totals.is_empty() {
                    history.push((place, subject, totals));
                }
            }
        }
    }
    if !history.is_empty() {
        let mut f = Finding::new(
            codes::GD084,
            Severity::Info,
            format!(
                "PCIe AER counters since boot, not growing: {}",
                history
                    .iter()
                    .map(|(p, _, t)| format!("{p}: {t}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        )
        .detail("These errors were counted at some time since boot and did not grow while gpudoctor ran. That is history, not a link failing now; compare with a later report (`gpudoctor check --baseline OLD.json`) to see whether they still grow.");
        for (p, subject, t) in history {
            f = f.evidence(subject, format!("{p}: {t}"), SOURCE);
        }
        out.push(f);
    }
    out
}

/// One counter of one GPU's link as NVML gave it, with the second read's value.
struct NvmlCounter {
    gpu: u32,
    label: String,
    /// `PCIe replays`, `NVLink 3 CRC FLIT errors`, …
    what: String,
    first: u64,
    again: Option<u64>,
    /// From this growth on, the counter says the link is failing now.
    burst: u64,
}

fn nvml_counters(snap: &Snapshot) -> Vec<NvmlCounter> {
    let Some(sys) = snap.nvml_system() else {
        return Vec::new();
    };
    let again = snap.nvml.as_ref().and_then(|p| p.counters_again.as_ref());
    let mut out = Vec::new();
    for g in &sys.devices {
        let second = again.and_then(|a| a.gpus.iter().find(|c| c.index == g.index));
        if let Some(n) = g.pcie_replay_counter.get() {
            out.push(NvmlCounter {
                gpu: g.index,
                label: g.label(),
                what: "PCIe replays".into(),
                first: u64::from(*n),
                again: second
                    .and_then(|c| c.pcie_replay_counter.get())
                    .map(|n| u64::from(*n)),
                burst: CORRECTED_BURST,
            });
        }
        let Some(links) = g.nvlink_errors.get() else {
            continue;
        };
        let second_links = second.and_then(|c| c.nvlink_errors.get());
        for (link, counts) in links.iter().enumerate() {
            let Some(c) = counts else { continue };
            let later = second_links.and_then(|l| l.get(link).copied().flatten());
            for (what, first, again, burst) in [
                (
                    "CRC FLIT errors",
                    c.crc_flit,
                    later.map(|l| l.crc_flit),
                    CORRECTED_BURST,
                ),
                (
                    "CRC data errors",
                    c.crc_data,
                    later.map(|l| l.crc_data),
                    CORRECTED_BURST,
                ),
                (
                    "replays",
                    c.replay,
                    later.map(|l| l.replay),
                    CORRECTED_BURST,
                ),
                // A recovery retrains the link: one is already a failure.
                ("recoveries", c.recovery, later.map(|l| l.recovery), 1),
            ] {
                out.push(NvmlCounter {
                    gpu: g.index,
                    label: g.label(),
                    what: format!("NVLink {link} {what}"),
                    first,
                    again,
                    burst,
                });
            }
        }
    }
    out
}

fn nvml_findings(snap: &Snapshot, counters: &[NvmlCounter]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut history: Vec<&NvmlCounter> = Vec::new();
    let after = snap
        .nvml
        .as_ref()
        .and_then(|p| p.counters_again.as_ref())
        .map(|a| (a.after.clone(), a.elapsed_ms));
    for c in counters {
        match (c.again, &after) {
            (Some(b), Some((during, ms))) if b > c.first => {
                let grew = b - c.first;
                let severity = if grew >= c.burst {
                    Severity::Warning
                } else {
                    Severity::Info
                };
                let mut f = Finding::new(
                    codes::GD085,
                    severity,
                    format!("{}: {} grew during {during} (+{grew} in {ms} ms)", c.label, c.what),
                )
                .detail(if severity == Severity::Warning {
                    "The link's error counter grew while the GPUs worked: the link is retrying or retraining now, which costs bandwidth and can end in an NVLink or PCIe error that stops jobs (Xid 74 for NVLink)."
                } else {
                    "A few errors counted while the GPUs worked; one-off retries are normal."
                })
                .evidence(
                    Subject::Gpu(c.gpu),
                    format!("{} {} → {b}", c.what, c.first),
                    "NVML (nvmlDeviceGetPcieReplayCounter, nvmlDeviceGetNvLinkErrorCounter)",
                );
                if severity == Severity::Warning {
                    f = f
                        .fix_cmd("See every link's error counters", crate::sh!("nvidia-smi nvlink -e -i {}", c.gpu))
                        .fix_text("Reseat the NVLink bridge, or have the baseboard checked (SXM), in a maintenance window; if the errors follow the GPU, service it");
                }
                out.push(f);
            }
            _ if c.first > 0 => history.push(c),
            _ => {}
        }
    }
    if !history.is_empty() {
        let listed: Vec<String> = history
            .iter()
            .map(|c| format!("GPU {} {} {}", c.gpu, c.what, c.first))
            .collect();
        let mut f = Finding::new(
            codes::GD085,
            Severity::Info,
            format!(
                "Link error counters since the driver loaded, not seen growing: {}",
                listed.join("; ")
            ),
        )
        .detail("NVML counts these since the driver loaded. A count that did not grow while gpudoctor ran (or was read once: the second read follows the smoke test) is history; run `gpudoctor check --smoke` to see whether it grows under load.");
        for c in history {
            f = f.evidence(
                Subject::Gpu(c.gpu),
                format!("{} {}", c.what, c.first),
                "NVML",
            );
        }
        out.push(f);
    }
    out
}

struct Growth {
    correctable: u64,
    nonfatal: u64,
    fatal: u64,
}

fn growth(first: &AerCounters, again: &AerCounters) -> Option<Growth> {
    let d = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => 0,
    };
    let g = Growth {
        correctable: d(first.correctable, again.correctable),
        nonfatal: d(first.nonfatal, again.nonfatal),
        fatal: d(first.fatal, again.fatal),
    };
    (g.correctable + g.nonfatal + g.fatal > 0).then_some(g)
}

fn nonzero(c: &AerCounters) -> String {
    [
        (c.fatal, "fatal"),
        (c.nonfatal, "non-fatal"),
        (c.correctable, "corrected"),
    ]
    .into_iter()
    .filter_map(|(n, what)| n.filter(|n| *n > 0).map(|n| format!("{n} {what}")))
    .collect::<Vec<_>>()
    .join(", ")
}

/// Between which two reads a counter grew, for the finding's words and bounds.
struct Window<'a> {
    /// "during the smoke test", "since the baseline report FILE (TIME)".
    during: String,
    /// "1200 ms", "26 h".
    took: String,
    /// The same in a clause: "while gpudoctor ran", "since the baseline report".
    when: &'static str,
    /// Corrected errors from which the link counts as replaying now.
    corrected_bound: u64,
    /// The later read where it is not the finding's own `first` (a baseline's "now").
    now: Option<&'a AerCounters>,
}

fn growing(place: &str, subject: Subject, first: &AerCounters, w: &Window, g: Growth) -> Finding {
    let when = w.when;
    let (severity, what) = if g.fatal > 0 {
        (Severity::Error, format!("A fatal PCIe error {when}: the link was reset or the device lost, and work on the GPU behind it fails."))
    } else if g.nonfatal > 0 {
        (Severity::Warning, format!("An uncorrectable non-fatal PCIe error {when}: a transaction was lost and recovered; the link is failing."))
    } else if g.correctable >= w.corrected_bound {
        (Severity::Warning, format!("Corrected PCIe errors counted {when}: the link is replaying, which costs bandwidth and may end in a retrain or a drop."))
    } else {
        (Severity::Info, format!("A few corrected PCIe errors counted {when}; occasional replays are normal on a busy link."))
    };
    let mut grew = Vec::new();
    for (n, kind) in [
        (g.fatal, "fatal"),
        (g.nonfatal, "non-fatal"),
        (g.correctable, "corrected"),
    ] {
        if n > 0 {
            grew.push(format!("+{n} {kind}"));
        }
    }
    let grew = grew.join(", ");
    let before = match w.now {
        Some(now) => format!(
            "then: {}; now: {}",
            or_none(&nonzero(first)),
            or_none(&nonzero(now))
        ),
        None => format!("since boot before: {}", or_none(&nonzero(first))),
    };
    let mut f = Finding::new(
        codes::GD084,
        severity,
        format!("{place}: PCIe AER errors grew {} ({grew} in {})", w.during, w.took),
    )
    .detail(format!("{what} The counters are the kernel's AER statistics of the device; an error may be counted by the link's other end, which is why the bridges above each GPU are read too."))
    .evidence(subject, format!("{grew} in {} ({before})", w.took), SOURCE);
    if severity != Severity::Info {
        let dev = first.address.as_str();
        f = f
            .fix_cmd("Watch the counters grow", crate::sh!("grep -H TOTAL /sys/bus/pci/devices/{}/aer_dev_*", dev))
            .fix_text("Reseat the GPU (and its riser or cable) in a maintenance window, update the BIOS and retimer firmware; if the errors follow the slot it is the board, if they follow the GPU it is the GPU");
    }
    f
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "none"
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::topology::AerReread;
    use crate::testing::*;

    fn counters(address: &str, cor: u64, nonfatal: u64, fatal: u64) -> AerCounters {
        AerCounters {
            address: address.into(),
            correctable: Some(cor),
            nonfatal: Some(nonfatal),
            fatal: Some(fatal),
        }
    }

    /// acs_switch(): GPU 0 behind root port 0000:00:01.0, switch 0000:10:00.0, port 0000:11:08.0.
    fn with(first: Vec<AerCounters>, again: Vec<AerCounters>) -> Snapshot {
        let mut s = crate::rules::topology::tests::acs_switch();
        let t = s.topology.as_mut().unwrap();
        t.aer = first;
        t.aer_again = Some(AerReread {
            after: "the smoke test".into(),
            elapsed_ms: 4200,
            devices: again,
        });
        s
    }

    fn findings(s: &Snapshot) -> Vec<Finding> {
        match run(s) {
            Outcome::Checked(f) => f,
            Outcome::NotApplicable(why) => panic!("not applicable: {why}"),
        }
    }

    #[test]
    fn quiet_counters_are_silent() {
        let zero = vec![
            counters(&bus_id(0), 0, 0, 0),
            counters("0000:00:01.0", 0, 0, 0),
        ];
        assert!(findings(&with(zero.clone(), zero)).is_empty());
    }

    #[test]
    fn a_counter_growing_during_the_run_names_the_link() {
        let first = vec![
            counters(&bus_id(0), 2, 0, 0),
            counters("0000:11:08.0", 0, 0, 0),
        ];
        let again = vec![
            counters(&bus_id(0), 2, 0, 0),
            counters("0000:11:08.0", 40, 0, 0),
        ];
        let f = findings(&with(first, again));
        assert_eq!(f.len(), 2, "{f:#?}");
        let grew = f.iter().find(|f| f.severity == Severity::Warning).unwrap();
        assert!(
            grew.title
                .starts_with("the bridge 0000:11:08.0 above GPU 0 ("),
            "{}",
            grew.title
        );
        assert!(
            grew.title.contains("+40 corrected in 4200 ms"),
            "{}",
            grew.title
        );
        assert!(
            grew.title.contains("during the smoke test"),
            "{}",
            grew.title
        );
        // The GPU's own old count is history.
        let old = f.iter().find(|f| f.severity == Severity::Info).unwrap();
        assert!(old.title.contains("2 corrected"), "{}", old.title);
    }

    #[test]
    fn fatal_growth_is_an_error_and_a_few_corrected_are_context() {
        let f = findings(&with(
            vec![counters(&bus_id(0), 0, 0, 0)],
            vec![counters(&bus_id(0), 0, 0, 1)],
        ));
        assert_eq!(f[0].severity, Severity::Error);
        let f = findings(&with(
            vec![counters(&bus_id(0), 0, 0, 0)],
            vec![counters(&bus_id(0), 3, 0, 0)],
        ));
        assert_eq!(f[0].severity, Severity::Info);
    }

    #[test]
    fn devices_off_the_gpus_paths_are_not_judged() {
        let f = findings(&with(
            vec![counters("0000:c1:00.0", 0, 0, 0)],
            vec![counters("0000:c1:00.0", 0, 0, 5)],
        ));
        assert!(f.is_empty(), "{f:#?}");
    }

    fn nvlink(crc_flit: u64, recovery: u64) -> Option<crate::facts::nvml::NvLinkErrors> {
        Some(crate::facts::nvml::NvLinkErrors {
            crc_flit,
            recovery,
            ..Default::default()
        })
    }

    /// GPU 0 with two NVLinks and a PCIe replay count, read twice around a smoke test.
    fn nvml_twice(first: (u32, u64, u64), again: (u32, u64, u64)) -> Snapshot {
        use crate::facts::nvml::{CountersAgain, Field, GpuCounters};
        let mut s = healthy();
        let g = nvml_gpu(&mut s, 0);
        g.pcie_replay_counter = Field::Value(first.0);
        g.nvlink_errors = Field::Value(vec![nvlink(first.1, first.2), None]);
        s.nvml.as_mut().unwrap().counters_again = Some(CountersAgain {
            after: "the smoke test".into(),
            elapsed_ms: 3100,
            gpus: vec![GpuCounters {
                index: 0,
                pcie_replay_counter: Field::Value(again.0),
                nvlink_errors: Field::Value(vec![nvlink(again.1, again.2), None]),
            }],
            error: None,
        });
        s
    }

    #[test]
    fn nvml_counters_that_do_not_move_are_silent_or_history() {
        assert!(findings(&nvml_twice((0, 0, 0), (0, 0, 0))).is_empty());
        let f = findings(&nvml_twice((12, 0, 0), (12, 0, 0)));
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].code.as_str(), f[0].severity),
            (codes::GD085, Severity::Info)
        );
        assert!(
            f[0].title.contains("GPU 0 PCIe replays 12"),
            "{}",
            f[0].title
        );
    }

    #[test]
    fn nvlink_crc_growth_and_a_recovery_are_warnings_naming_the_link() {
        let f = findings(&nvml_twice((0, 5, 0), (0, 405, 1)));
        let crc = f.iter().find(|f| f.title.contains("CRC FLIT")).unwrap();
        assert_eq!(crc.severity, Severity::Warning);
        assert!(
            crc.title
                .contains("NVLink 0 CRC FLIT errors grew during the smoke test (+400 in 3100 ms)"),
            "{}",
            crc.title
        );
        assert!(crc
            .fix
            .iter()
            .any(|x| x.command.as_deref() == Some("nvidia-smi nvlink -e -i 0")));
        let rec = f.iter().find(|f| f.title.contains("recoveries")).unwrap();
        assert_eq!(rec.severity, Severity::Warning);
        // Three new PCIe replays are context.
        let f = findings(&nvml_twice((0, 0, 0), (3, 0, 0)));
        assert_eq!(f[0].severity, Severity::Info);
    }

    #[test]
    fn without_counters_the_rule_says_why() {
        let mut s = crate::rules::topology::tests::acs_switch();
        s.topology.as_mut().unwrap().aer.clear();
        for g in &mut nvml_sys(&mut s).devices {
            g.pcie_replay_counter = crate::facts::nvml::Field::NotSupported;
        }
        assert!(matches!(run(&s), Outcome::NotApplicable(_)));
    }
}
