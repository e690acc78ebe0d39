//! `gpudoctor toolkit`: the CUDA toolkits and libraries, and which one is used.

use super::gather::focused;
use super::options::{exit_code, ViewFormat};
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::render::{self, Style};
use crate::rules::View;

/// Probes the toolkit view needs: the driver version, GPU names, WSL, the toolkits, and
/// torch's CUDA (the toolkit extension builds use must match it: GD047).
const TOOLKIT_PROBES: &[&str] = &[
    "platform",
    "kernel_module",
    "environment",
    "toolkits",
    "libraries",
    "pytorch",
];

pub(super) fn toolkit(g: &Settings) -> Result<u8, CliError> {
    let format = ViewFormat::of(g);
    let (snapshot, _, findings) = focused(g, TOOLKIT_PROBES, View::Toolkit)?;
    let view = render::toolkit::view(&snapshot, &findings);
    let text = match format {
        ViewFormat::Json => render::toolkit::render_json(&view),
        ViewFormat::Markdown => render::toolkit::render_markdown(&view),
        ViewFormat::Human => render::toolkit::render_human(
            &view,
            &Style::for_stdout(),
            g.verbose >= 1,
            render::width::for_stdout(),
        ),
    };
    emit_report(g, text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}
