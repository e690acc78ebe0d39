//! `gpudoctor check --format html`: the single-node report as one self-contained page — the
//! headline, the findings with their evidence and fixes, every section of the terminal report
//! with the same marks, the GPU table and topology matrix, and the smoke test's figures drawn
//! against each GPU's host link. Marks come from the findings' verdicts, as in the terminal.

use std::fmt::Write as _;

use super::html::{esc, mark_cell, page, verdict_mark};
use super::human::summary_line;
use super::view::sections;
use super::Style;
use crate::report::Report;

pub fn render(report: &Report, verbose: bool) -> String {
    let mut body = String::from("<h1>gpudoctor report</h1>\n");
    let mut meta = format!("gpudoctor {}", esc(&report.gpudoctor_version));
    if let Some(root) = &report.snapshot.root {
        let _ = write!(meta, " · <code>--root {}</code>", esc(root));
    }
    if let Some(node) = &report.snapshot.node {
        let _ = write!(meta, " · {} · {}", esc(&node.name), esc(&node.time));
    }
    let _ = writeln!(body, "<p class=\"dim\">{meta}</p>");
    let (m, class) = verdict_mark(report.headline.verdict());
    let class = if class == "nj" { "i" } else { class };
    let _ = writeln!(
        body,
        "<p class=\"verdict {class}\" id=\"verdict\"><span class=\"mark\">{m}</span> {}</p>",
        esc(&report.headline.text)
    );
    let _ = writeln!(
        body,
        "<p>{}</p>",
        super::html::esc_with_code(&summary_line(report, &Style::plain()))
    );
    body.push_str(&super::html::findings(&report.findings));

    for section in sections(report, verbose) {
        let _ = writeln!(
            body,
            "<h2>{}</h2>\n<table class=\"facts\"><thead><tr><th></th><th>fact</th><th>value</th><th>source</th></tr></thead><tbody>",
            esc(section.title)
        );
        for l in &section.lines {
            let _ = writeln!(
                body,
                "<tr class=\"row\">{}<td>{}</td><td>{}</td><td class=\"dim mono\">{}</td></tr>",
                mark_cell(l.mark),
                esc(&l.label),
                esc(&l.value),
                esc(&l.source)
            );
        }
        body.push_str("</tbody></table>\n");
    }

    let devices = super::devices::view(&report.snapshot, &report.findings, &report.checks, None);
    if !devices.gpus.is_empty() {
        body.push_str(&super::devices::html_body(&devices));
    }
    if report.snapshot.smoke.is_some() {
        let smoke = super::smoke::view(&report.snapshot, &report.findings, &report.checks);
        body.push_str(&super::smoke::html_body(&smoke));
    }
    page(&format!("gpudoctor: {}", report.headline.text), &body)
}
