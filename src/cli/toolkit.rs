//! `gpudoctor toolkit`: the CUDA toolkits and libraries, and which one is used.

use super::args::GlobalOpts;
use super::gather::focused;
use super::options::{exit_code, ViewFormat};
use super::{emit, CliError};
use crate::render::{self, Style};
use crate::rules::View;

/// Probes the toolkit view needs: the driver version, GPU names, WSL, and the toolkits.
const TOOLKIT_PROBES: &[&str] = &[
    "platform",
    "kernel_module",
    "environment",
    "toolkits",
    "libraries",
];

pub(super) fn toolkit(g: &GlobalOpts) -> Result<u8, CliError> {
    let format = ViewFormat::of(g, "toolkit")?;
    let (snapshot, _, findings) = focused(g, TOOLKIT_PROBES, View::Toolkit)?;
    let view = render::toolkit::view(&snapshot, &findings);
    let text = match format {
        ViewFormat::Json => render::toolkit::render_json(&view),
        ViewFormat::Markdown => render::toolkit::render_markdown(&view),
        ViewFormat::Human => render::toolkit::render_human(
            &view,
            &Style::for_stdout(),
            g.verbose,
            render::width::for_stdout(),
        ),
    };
    emit(text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}
