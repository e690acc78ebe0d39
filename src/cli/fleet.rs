//! `gpudoctor fleet`: saved node reports aggregated into the fleet's shape and outliers.

use std::path::PathBuf;

use super::args::Format;
use super::options::{exit_code, selection, ViewFormat};
use super::settings::Settings;
use super::{emit_report, emit_report_streamed, CliError};
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
    // The policy judges every node alike: codes selected, severities as configured. It is
    // applied as each report is read, so nodes alike share their findings.
    let policy = |f: &mut crate::fleet::FindingIn| {
        if !sel.wants(&f.code) {
            return false;
        }
        if let Some((sev, _)) = sel.severity_of(&f.code) {
            f.severity = sev;
        }
        true
    };
    let (mut nodes, problems) = crate::fleet::load(reports, &policy);
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
    // The expected shape judges every node on what its own check did not judge.
    let gd087 = crate::codes::GD087;
    for n in nodes.iter_mut().filter(|_| sel.wants(gd087)) {
        use crate::rules::expected_gpus as shape;
        let judged = n.judged.clone();
        let mut found = Vec::new();
        if let Some((gpus, from)) = g
            .expect_gpus
            .as_ref()
            .filter(|(gpus, _)| judged.gpus != Some(*gpus))
        {
            let expected = *gpus as usize;
            if n.gpus < expected {
                let off_bus = expected.saturating_sub(n.pci_gpus.max(n.gpus));
                found.push(shape::finding(n.gpus, expected, &[], off_bus, from));
            }
        }
        if let (Some((expected, from)), Some(driver)) = (
            g.expect_driver
                .as_ref()
                .filter(|(e, _)| judged.driver.as_ref() != Some(e)),
            &n.driver,
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
            let total = n.models.total();
            let other: Vec<(&str, usize)> = n
                .models
                .iter()
                .filter(|(m, _)| *m != crate::fleet::aggregate::UNNAMED_GPU)
                .filter(|(m, _)| !crate::snapshot::Expect::model_matches(expected, m))
                .collect();
            if let Some((name, _)) = other.first() {
                let count = other.iter().map(|(_, c)| *c).sum();
                found.push(shape::model_mismatch(count, total, name, expected, from));
            }
        }
        for f in found {
            n.findings
                .push(std::sync::Arc::new(crate::fleet::FindingIn {
                    code: f.code.to_string(),
                    severity: sel.severity_of(&f.code).map_or(f.severity, |(s, _)| s),
                    title: f.title,
                    evidence: f.evidence,
                    fix: f.fix,
                    caused_by: None,
                }));
        }
    }
    let fleet = crate::fleet::aggregate::aggregate(nodes, problems);
    let text = match format {
        _ if g.format == Format::Html => render::fleet_html::render(&fleet),
        // Every node is in it (65 MB for 100,000 nodes): written as it is serialised.
        ViewFormat::Json => {
            emit_report_streamed(g, |w| render::fleet::write_json(&fleet, w))?;
            return Ok(exit_code(g, fleet.verdict()));
        }
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
