//! `gpudoctor libs`: what the loader binds for each CUDA-using native module, and whether
//! it will load.

use super::gather::focused;
use super::options::{exit_code, ViewFormat};
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::render::{self, Style};
use crate::rules::View;

/// The linkage probe, the libraries and pytorch probes its rules read (GD044/GD045 pins
/// and shadowing), and the environment variables.
const LIBS_PROBES: &[&str] = &["platform", "environment", "libraries", "pytorch", "linkage"];

pub(super) fn libs(g: &Settings, all: bool) -> Result<u8, CliError> {
    let format = ViewFormat::of(g);
    let (snapshot, checks, findings) = focused(g, LIBS_PROBES, View::Libs)?;
    let view = render::libs::view(&snapshot, &checks, &findings);
    let text = match format {
        ViewFormat::Json => render::libs::render_json(&view),
        ViewFormat::Markdown => render::libs::render_markdown(&view, all),
        ViewFormat::Human => render::libs::render_human(
            &view,
            &Style::for_stdout(),
            all,
            render::width::for_stdout(),
        ),
    };
    emit_report(g, text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}
