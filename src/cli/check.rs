//! `gpudoctor check` (the default): every probe and rule, the whole report.

use std::time::Duration;

use super::args::Format;
use super::gather::gather;
use super::options::{exit_code, probe_timeout, selection};
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::envvars::Env;
use crate::render::{self, Style};
use crate::report::Report;
use crate::rules;

pub(super) fn check(g: &Settings) -> Result<u8, CliError> {
    // A bad --output is a usage error before any probing (the smoke test takes seconds).
    if let Some(path) = &g.output {
        let text = path.to_string_lossy();
        if text.ends_with('/') || (!text.contains("{host}") && path.is_dir()) {
            return Err(CliError::Usage(format!(
                "--output {}: a directory; name the file, e.g. {}/{{host}}.json",
                path.display(),
                text.trim_end_matches('/')
            )));
        }
    }
    // So is a baseline that cannot be compared.
    let baseline = match &g.baseline {
        Some(path) => {
            if matches!(g.format, Format::Junit | Format::Prometheus | Format::Html)
                && !g.fix_script
            {
                return Err(CliError::Usage(format!(
                    "--baseline shows the changes in the human, json and markdown reports, not in --format {}",
                    g.format.name()
                )));
            }
            let old = crate::diff::load_baseline(path)
                .map_err(|e| CliError::Usage(format!("--baseline {e}")))?;
            Some((path, old))
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let sel = selection(g)?;
    let env = Env::from_process();
    let mut snapshot = gather(g, &sel, &sel.probes, &env, None)?;
    if let Some(budget) = g.preflight {
        let (probes_s, smoke_s) = super::options::preflight_split(budget);
        snapshot.preflight = Some(crate::snapshot::Preflight {
            budget_s: budget,
            probes_s,
            smoke_s,
            elapsed_s: started.elapsed().as_secs_f64(),
        });
    }
    if let (Some((path, old)), Some(node)) = (&baseline, &snapshot.node) {
        snapshot.counters_baseline = Some(crate::facts::baseline::from_report(
            &path.display().to_string(),
            old,
            node,
        ));
    }
    let wants = |code: &str| sel.wants(code);
    let (checks, findings) = rules::evaluate(&snapshot, &wants);
    let findings = sel.adjust(findings);
    let mut report = Report::new(snapshot, checks, findings);
    let changes = match &baseline {
        Some((path, old)) => Some(
            crate::diff::against_baseline(path, old, &report)
                .map_err(|e| CliError::Usage(format!("--baseline {e}")))?,
        ),
        None => None,
    };
    // JSON carries the changes inside the report; the other formats append them.
    if let Some(d) = &changes {
        report.baseline = Some(
            serde_json::to_value(d)
                .map_err(|e| CliError::Internal(format!("the baseline diff as JSON: {e}")))?,
        );
    }
    let width = render::width::terminal_width(env.get_str(crate::envvars::COLUMNS).as_deref());

    let format = g.format;
    let human = |style: Style| {
        let mut text = render::human::render(
            &report,
            &render::human::Options {
                verbose: g.verbose >= 1,
                style,
                width,
            },
        );
        if g.verbose >= 2 {
            text.push_str(&render::timings::render_human(&report.snapshot, &style));
        }
        if let Some(d) = &changes {
            text.push('\n');
            text.push_str(&render::diff::render_human_after_report(d, &style, width));
        }
        text
    };
    let render_as = |format: Format, style: Style| match format {
        Format::Json => render::json::render(&report),
        Format::Markdown => {
            let mut text = render::markdown::render(&report, g.verbose >= 1);
            if let Some(d) = &changes {
                text.push('\n');
                text.push_str(&render::diff::render_markdown(d));
            }
            text
        }
        Format::Junit => render::junit::render(&report, std::time::SystemTime::now()),
        Format::Prometheus => render::prometheus::render(&report, std::time::SystemTime::now()),
        Format::Html => render::report_html::render(&report, g.verbose >= 1),
        Format::Human => human(style),
    };
    match &g.output {
        // The file gets the chosen format; the terminal (or the job log) the human report,
        // which reaches it even when the file cannot be written.
        Some(path) => {
            emit_report(g, human(Style::for_stdout()).as_bytes())?;
            // The node's name, safe as a file name.
            let host = report
                .snapshot
                .node
                .as_ref()
                .map(|n| crate::probes::node::file_name(&n.name))
                .unwrap_or_else(|| "unknown".into());
            // A FIFO or device gets as long as a probe: --timeout.
            let timeout = Duration::from_secs_f64(probe_timeout(g));
            let text = render_as(format, Style::plain());
            let written = crate::fsys::write_report(path, &host, &text, timeout)
                .map_err(|e| CliError::Usage(format!("--output {e}")))?;
            if !g.quiet {
                eprintln!("gpudoctor: report written to {}", written.display());
            }
        }
        None if g.fix_script => {
            emit_report(g, render::fix_script::render(&report).as_bytes())?;
        }
        None => {
            emit_report(g, render_as(format, Style::for_stdout()).as_bytes())?;
        }
    }
    Ok(exit_code(g, report.worst()))
}
