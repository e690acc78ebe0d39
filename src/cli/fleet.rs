//! `gpudoctor fleet`: saved node reports aggregated into the fleet's shape and outliers.

use std::path::PathBuf;

use super::args::Format;
use super::options::{exit_code, selection, ViewFormat};
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::render::{self, Style};

pub(super) fn fleet(g: &Settings, reports: &[PathBuf]) -> Result<u8, CliError> {
    let format = ViewFormat::of(g);
    // Codes in --only/--skip narrow what each node's findings count; probes ran long ago.
    let sel = selection(g)?;
    if sel.names_probes {
        return Err(CliError::Usage(
            "`gpudoctor fleet` reads saved reports: probe names in --only/--skip do not apply (codes do)".into(),
        ));
    }
    let (mut nodes, problems) = crate::fleet::load(reports);
    // Nothing usable at all: the inputs were mistyped or not reports (one line each), not
    // a fleet of broken nodes. A missing file beside usable reports is a node's problem.
    if nodes.is_empty() {
        let lines = problems.lines();
        return Err(CliError::Usage(if lines.is_empty() {
            "no report found: name saved `gpudoctor check --json` reports, directories of them, or - for stdin".into()
        } else {
            format!("no usable report:\n  {}", lines.join("\n  "))
        }));
    }
    // The policy judges every node alike: codes selected, severities as configured.
    for n in &mut nodes {
        n.findings.retain(|f| sel.wants(&f.code));
        for f in &mut n.findings {
            if let Some((sev, _)) = sel.severity_of(&f.code) {
                f.severity = sev;
            }
        }
    }
    // The expected shape judges every node on what its own check did not judge.
    let gd087 = crate::codes::GD087;
    for n in nodes.iter_mut().filter(|_| sel.wants(gd087)) {
        use crate::rules::expected_gpus as shape;
        let judged = n.facts.judged.clone();
        let mut found = Vec::new();
        if let Some((gpus, from)) = g
            .expect_gpus
            .as_ref()
            .filter(|(gpus, _)| judged.gpus != Some(*gpus))
        {
            let expected = *gpus as usize;
            if n.facts.gpus < expected {
                let off_bus = expected.saturating_sub(n.facts.pci_gpus.max(n.facts.gpus));
                found.push(shape::finding(n.facts.gpus, expected, &[], off_bus, from));
            }
        }
        if let (Some((expected, from)), Some(driver)) = (
            g.expect_driver
                .as_ref()
                .filter(|(e, _)| judged.driver.as_ref() != Some(e)),
            &n.facts.driver,
        ) {
            if !crate::snapshot::Expect::driver_matches(expected, driver) {
                found.push(shape::driver_mismatch(driver, expected, from));
            }
        }
        if let Some((expected, from)) = g
            .expect_gpu_model
            .as_ref()
            .filter(|(e, _)| judged.gpu_model.as_ref() != Some(e))
        {
            let total: usize = n.facts.models.values().sum();
            let other: Vec<(&String, &usize)> = n
                .facts
                .models
                .iter()
                .filter(|(m, _)| m.as_str() != crate::fleet::aggregate::UNNAMED_GPU)
                .filter(|(m, _)| !crate::snapshot::Expect::model_matches(expected, m))
                .collect();
            if let Some((name, _)) = other.first() {
                let count = other.iter().map(|(_, c)| **c).sum();
                found.push(shape::model_mismatch(count, total, name, expected, from));
            }
        }
        for f in found {
            n.findings.push(crate::fleet::FindingIn {
                code: f.code.to_string(),
                severity: sel.severity_of(&f.code).map_or(f.severity, |(s, _)| s),
                title: f.title,
                evidence: f.evidence,
                fix: f.fix,
                caused_by: None,
            });
        }
    }
    let fleet = crate::fleet::aggregate::aggregate(&nodes, problems);
    let text = match format {
        _ if g.format == Format::Html => render::fleet_html::render(&fleet, &nodes),
        ViewFormat::Json => render::fleet::render_json(&fleet),
        ViewFormat::Markdown => render::fleet::render_markdown(&fleet),
        ViewFormat::Human => {
            render::fleet::render_human(&fleet, &Style::for_stdout(), render::width::for_stdout())
        }
    };
    emit_report(g, text.as_bytes())?;
    // The fleet's verdict (Fleet::verdict): an unusable report, or no report at all, is an
    // error, so it fails unless --fail-on never.
    Ok(exit_code(g, fleet.verdict()))
}
