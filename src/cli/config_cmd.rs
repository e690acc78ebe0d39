//! `gpudoctor config`: the effective configuration, each value with where it came from.

use super::args::Format;
use super::config::SYSTEM_CONFIG;
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::render::Style;

pub(super) fn config(g: &Settings) -> Result<u8, CliError> {
    let text = match g.format {
        Format::Json => {
            let v = serde_json::json!({
                "files": g.files,
                "values": g.origins,
            });
            let mut s = serde_json::to_string_pretty(&v)
                .map_err(|e| CliError::Internal(format!("configuration as JSON: {e}")))?;
            s.push('\n');
            s
        }
        _ => human(g, &Style::for_stdout()),
    };
    emit_report(g, text.as_bytes())?;
    Ok(0)
}

fn human(g: &Settings, st: &Style) -> String {
    let mut s = String::new();
    if g.files.is_empty() {
        s.push_str(&format!(
            "{} none (looked for {SYSTEM_CONFIG}, $XDG_CONFIG_HOME/gpudoctor/config.toml, --config / $GPUDOCTOR_CONFIG)\n",
            st.bold("Configuration files:")
        ));
    } else {
        s.push_str(&format!(
            "{}\n",
            st.bold("Configuration files, in order read:")
        ));
        for f in &g.files {
            s.push_str(&format!("  {}\n", f.display()));
        }
    }
    s.push('\n');
    let width = g
        .origins
        .iter()
        .map(|o| o.key.len() + 3 + value_text(&o.value).chars().count())
        .max()
        .unwrap_or(0);
    for o in &g.origins {
        let kv = format!("{} = {}", o.key, value_text(&o.value));
        let pad = width.saturating_sub(kv.chars().count());
        s.push_str(&format!(
            "{kv}{}  {}\n",
            " ".repeat(pad),
            st.dim(&format!("# {}", o.source))
        ));
    }
    s
}

/// A value as TOML would write it.
fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "(none)".into(),
        other => other.to_string(),
    }
}
