//! `gpudoctor fleet`: saved node reports aggregated into the fleet's shape and outliers.

use std::path::PathBuf;

use super::args::FailOn;
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
    // The policy judges every node alike: codes selected, severities as configured.
    for n in &mut nodes {
        n.findings.retain(|f| sel.wants(&f.code));
        for f in &mut n.findings {
            if let Some((sev, _)) = sel.severity_of(&f.code) {
                f.severity = sev;
            }
        }
    }
    let has_problems = !problems.is_empty();
    let fleet = crate::fleet::aggregate::aggregate(&nodes, problems);
    let text = match format {
        ViewFormat::Json => render::fleet::render_json(&fleet),
        ViewFormat::Markdown => render::fleet::render_markdown(&fleet),
        ViewFormat::Human => {
            render::fleet::render_human(&fleet, &Style::for_stdout(), render::width::for_stdout())
        }
    };
    emit_report(g, text.as_bytes())?;
    // A report that could not be read is a node whose state is unknown, and no report at
    // all is no evidence of health. (Duplicates are listed but counted once: no failure.)
    let code = exit_code(g, fleet.worst());
    let unusable = has_problems || fleet.nodes.is_empty();
    Ok(if unusable && g.fail_on != FailOn::Never {
        1
    } else {
        code
    })
}
