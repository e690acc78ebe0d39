//! `gpudoctor config`: the effective configuration, each value with where it came from.

use super::args::Format;
use super::config::SYSTEM_CONFIG;
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::render::width::wrap;
use crate::render::Style;

pub(super) fn config(g: &Settings) -> Result<u8, CliError> {
    let text = match g.format {
        Format::Json => {
            let v = serde_json::json!({
                "schema_version": crate::report::SCHEMA_VERSION,
                "files": g.files,
                "values": g.origins,
            });
            let mut s = serde_json::to_string_pretty(&v)
                .map_err(|e| CliError::Internal(format!("configuration as JSON: {e}")))?;
            s.push('\n');
            s
        }
        _ => {
            let st = Style::for_stdout();
            st.finish(human(g, &st, crate::render::width::for_stdout()))
        }
    };
    emit_report(g, text.as_bytes())?;
    Ok(0)
}

fn human(g: &Settings, st: &Style, width: usize) -> String {
    let mut s = String::new();
    if g.no_config {
        s.push_str(&format!(
            "{} none read (--no-config)\n",
            st.bold("Configuration files:")
        ));
    } else if g.files.is_empty() {
        s.push_str(&wrap(
            &format!(
                "{} none (looked for {})",
                st.bold("Configuration files:"),
                looked_for(g)
            ),
            width,
            "",
            "  ",
        ));
        s.push('\n');
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
    let column = g
        .origins
        .iter()
        .map(|o| o.key.len() + 3 + value_text(&o.value).chars().count())
        .max()
        .unwrap_or(0);
    for o in &g.origins {
        // An unset value is written as a comment, so the output stays valid TOML.
        let kv = match &o.value {
            serde_json::Value::Null => format!("# {} unset", o.key),
            v => format!("{} = {}", o.key, value_text(v)),
        };
        let pad = column.saturating_sub(kv.chars().count());
        let line = format!(
            "{kv}{}  {}",
            " ".repeat(pad),
            st.dim(&format!("# {}", o.source))
        );
        // A long source wraps under itself, still a comment.
        let indent = format!("{}  # ", " ".repeat(column.min(width / 2)));
        s.push_str(&wrap(&line, width, "", &indent));
        s.push('\n');
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

/// The files looked for, as paths on this machine (not `$XDG_CONFIG_HOME/…`), and where a
/// named one would come from.
fn looked_for(g: &Settings) -> String {
    let mut names: Vec<String> = g
        .looked_for
        .iter()
        .map(|(p, _)| crate::render::printable(&p.display().to_string()).into_owned())
        .collect();
    if names.is_empty() {
        names.push(SYSTEM_CONFIG.to_string());
    }
    if !g.looked_for.iter().any(|(_, named)| *named) {
        names.push("a file named by --config or $GPUDOCTOR_CONFIG".into());
    }
    names.join(", ")
}
