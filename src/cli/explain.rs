//! `gpudoctor explain`: a finding code's long explanation, or every code's title.

use super::options::ViewFormat;
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::codes;
use crate::render::{self, Style};

pub(super) fn explain(g: &Settings, code: Option<&str>, list: bool) -> Result<u8, CliError> {
    let format = ViewFormat::of(g);
    let code = match code {
        Some(c) if !list => c,
        _ => {
            let text = match format {
                ViewFormat::Json => render::codes::list_json(),
                ViewFormat::Markdown => render::codes::list_markdown(),
                ViewFormat::Human => {
                    render::explain::render_list(&Style::for_stdout(), render::width::for_stdout())
                }
            };
            return emit_report(g, text.as_bytes());
        }
    };
    let info = codes::lookup(code).ok_or_else(|| {
        CliError::Usage(format!(
            "unknown finding code {code:?}; `gpudoctor explain` lists them all"
        ))
    })?;
    let text = match format {
        ViewFormat::Json => render::codes::explain_json(info),
        ViewFormat::Markdown => render::codes::explain_markdown(info),
        ViewFormat::Human => {
            render::explain::render_human(info, &Style::for_stdout(), render::width::for_stdout())
        }
    };
    emit_report(g, text.as_bytes())
}
