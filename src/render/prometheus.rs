//! Prometheus text exposition (0.0.4) for node_exporter's textfile collector: every metric a
//! gauge named `gpudoctor_*`, each family with HELP and TYPE and its samples together. A
//! family with no sample (no active finding, no smoke run, driver unknown) is left out
//! whole, as exporters do: absent series are what alerts on `absent()` and `or` expect.

use std::fmt::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::facts::smoke::Step;
use crate::findings::Severity;
use crate::report::Report;
use crate::rules::CheckStatus;
use crate::verdict::Verdicts;

type Labels = Vec<(&'static str, String)>;

struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Labels, String)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }

    fn add(&mut self, labels: Labels, value: impl ToString) -> &mut Self {
        self.samples.push((labels, value.to_string()));
        self
    }

    /// A measured figure; NaN and infinities are not figures, so they are left out.
    fn add_f64(&mut self, labels: Labels, value: Option<f64>) {
        if let Some(v) = value.filter(|v| v.is_finite()) {
            self.add(labels, v);
        }
    }
}

/// `now` stands in for the time of a report that carries none (an old `--from` replay).
pub fn render(report: &Report, now: SystemTime) -> String {
    let snap = &report.snapshot;
    let mut families = Vec::new();
    let node = snap.node.as_ref();

    let mut info = Family::new(
        "gpudoctor_info",
        "gpudoctor version and node name of the last check (always 1).",
    );
    info.add(
        vec![
            ("version", report.gpudoctor_version.clone()),
            ("node", node.map_or("unknown", |n| n.name.as_str()).into()),
        ],
        1,
    );
    families.push(info);

    let mut time = Family::new(
        "gpudoctor_last_run_timestamp_seconds",
        "When the last check ran, in seconds since the Unix epoch.",
    );
    // The report's own time (also right for --from replays); now if it cannot be read.
    let when = node
        .and_then(|n| humantime::parse_rfc3339(&n.time).ok())
        .unwrap_or(now);
    time.add(
        vec![],
        when.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    );
    families.push(time);

    let mut by_severity = Family::new(
        "gpudoctor_findings",
        "Findings of the last check by severity.",
    );
    let sum = &report.summary;
    for (s, n) in [
        (Severity::Error, sum.errors),
        (Severity::Warning, sum.warnings),
        (Severity::Info, sum.infos),
    ] {
        by_severity.add(vec![("severity", s.as_str().into())], n);
    }
    families.push(by_severity);

    let mut by_code = Family::new(
        "gpudoctor_finding",
        "Active findings by code and severity (`gpudoctor explain CODE` says what each means); caused_by names the finding that explains this one, empty for a root cause.",
    );
    let mut counted: Vec<(&str, Severity, &str, usize)> = Vec::new();
    for f in &report.findings {
        let cause = f.caused_by.as_deref().unwrap_or_default();
        match counted
            .iter_mut()
            .find(|(c, s, by, _)| *c == f.code && *s == f.severity && *by == cause)
        {
            Some(entry) => entry.3 += 1,
            None => counted.push((&f.code, f.severity, cause, 1)),
        }
    }
    for (code, severity, cause, n) in counted {
        let mut labels = vec![
            ("code", code.into()),
            ("severity", severity.as_str().into()),
        ];
        if !cause.is_empty() {
            labels.push(("caused_by", cause.into()));
        }
        by_code.add(labels, n);
    }
    families.push(by_code);

    let mut checks = Family::new(
        "gpudoctor_checks",
        "Checks of the last run by outcome (a check with only info findings passed).",
    );
    for (status, word) in [
        (CheckStatus::Passed, "passed"),
        (CheckStatus::Failed, "failed"),
        (CheckStatus::NotApplicable, "not_applicable"),
        (CheckStatus::Skipped, "skipped"),
    ] {
        let n = report.checks.iter().filter(|c| c.status == status).count();
        checks.add(vec![("status", word.into())], n);
    }
    families.push(checks);

    let mut gpus = Family::new(
        "gpudoctor_gpus",
        "NVIDIA GPUs seen (NVML's count, else /dev/nvidiaN nodes, else PCI functions).",
    );
    gpus.add(
        vec![],
        report.derived.gpu_count.as_ref().map_or(0, |g| g.count),
    );
    families.push(gpus);

    let mut driver = Family::new(
        "gpudoctor_driver_info",
        "The NVIDIA driver version and the newest CUDA it supports (always 1; absent when no driver is found).",
    );
    if let Some(d) = &report.derived.driver {
        let cuda = report
            .derived
            .cuda_driver_version
            .clone()
            .unwrap_or_default();
        driver.add(
            vec![
                ("driver_version", d.version.clone()),
                ("cuda_version", cuda),
            ],
            1,
        );
    }
    families.push(driver);

    families.extend(smoke_families(report));

    let mut out = String::new();
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(f.help));
        let _ = writeln!(out, "# TYPE {} gauge", f.name);
        for (labels, value) in &f.samples {
            out.push_str(f.name);
            if !labels.is_empty() {
                let body: Vec<String> = labels
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                    .collect();
                let _ = write!(out, "{{{}}}", body.join(","));
            }
            let _ = writeln!(out, " {value}");
        }
    }
    out
}

/// Per-GPU figures of the smoke test, when it got as far as the GPUs (a run that timed out
/// or crashed still reports the steps that finished).
fn smoke_families(report: &Report) -> Vec<Family> {
    let mut passed = Family::new(
        "gpudoctor_smoke_passed",
        "1 when no warning or error finding cites this GPU's smoke-test steps and they finished, else 0; the verdict label says which (passed, info, warning, error, not_judged), as check and smoke mark the GPU.",
    );
    let mut gflops = Family::new(
        "gpudoctor_smoke_matmul_gflops",
        "FP32 matmul throughput of the smoke test (median launch), in GFLOP/s.",
    );
    let mut correct = Family::new(
        "gpudoctor_smoke_matmul_correct",
        "1 when the smoke-test matmul matched the CPU's result, else 0.",
    );
    let mut mismatches = Family::new(
        "gpudoctor_smoke_memory_mismatches",
        "Memory words the smoke test's allocation probe read back wrong.",
    );
    let mut allocated = Family::new(
        "gpudoctor_smoke_memory_allocated_bytes",
        "GPU memory the smoke test's allocation probe allocated and verified, in bytes.",
    );
    let mut transfer = Family::new(
        "gpudoctor_smoke_transfer_gbps",
        "Copy bandwidth of the smoke test (median), in GB/s (1e9 bytes per second): host-device by direction and host memory, and device-local (direction d2d, memory device; bytes read plus written).",
    );
    let devices = report
        .snapshot
        .smoke
        .as_ref()
        .and_then(|p| p.run())
        .map_or(&[][..], |r| &r.devices[..]);
    let verdicts = Verdicts::new(&report.findings, &report.checks).smoke_gpus(&report.snapshot);
    for d in devices {
        let info = d.info.as_ref();
        let gpu = || -> Labels {
            vec![
                ("gpu", d.ordinal.to_string()),
                (
                    "uuid",
                    info.and_then(|i| i.uuid.clone()).unwrap_or_default(),
                ),
                ("name", info.map(|i| i.name.clone()).unwrap_or_default()),
            ]
        };
        if let Some(v) = verdicts.iter().find(|v| v.ordinal == d.ordinal) {
            let mut labels = gpu();
            labels.push(("verdict", v.overall.as_str().into()));
            passed.add(labels, u8::from(v.overall.passed()));
        }
        if let Some(Step::Ok(m)) = &d.matmul {
            gflops.add_f64(gpu(), Some(m.gflops));
            correct.add(gpu(), u8::from(m.correct));
        }
        if let Some(Step::Ok(m)) = &d.memory {
            mismatches.add(gpu(), m.mismatches);
            allocated.add(gpu(), m.allocated);
        }
        if let Some(Step::Ok(t)) = &d.transfer {
            for (direction, memory, v) in [
                ("h2d", "pinned", t.pinned_h2d_gbps),
                ("d2h", "pinned", t.pinned_d2h_gbps),
                ("h2d", "pageable", t.pageable_h2d_gbps),
                ("d2h", "pageable", t.pageable_d2h_gbps),
                ("d2d", "device", t.device_gbps),
            ] {
                let mut labels = gpu();
                labels.push(("direction", direction.into()));
                labels.push(("memory", memory.into()));
                transfer.add_f64(labels, v);
            }
        }
    }
    vec![passed, gflops, correct, mismatches, allocated, transfer]
}

/// HELP text: backslash and line feed escaped, and what hides text (`hides_text`) written as
/// visible `\u{…}` text.
fn escape_help(s: &str) -> String {
    escape(s, false)
}

/// A label value: backslash, double quote and line feed escaped as the format requires.
/// Other control characters are legal there but break log lines and terminals; values come
/// from the inspected system, so they are written as visible `\u{…}` text (its backslash
/// escaped in turn).
fn escape_label(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, label: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' if label => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if super::hides_text(c) => {
                let _ = write!(out, "\\\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_hides_itself_is_escaped_in_labels_and_help() {
        assert_eq!(escape_label("a\u{202e}b"), "a\\\\u{202e}b");
        assert_eq!(escape_help("a\u{2066}b\nc"), "a\\\\u{2066}b\\nc");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label(r#"a"b\c"#), r#"a\"b\\c"#);
        assert_eq!(escape_label("x\ny"), "x\\ny");
        assert_eq!(escape_label("bell\u{7}"), "bell\\\\u{7}");
        assert_eq!(escape_help("a\\b\nc"), "a\\\\b\\nc");
    }
}
