//! `gpudoctor explain` in JSON and Markdown: the code registry and one code's text.

use serde::Serialize;

use crate::codes::{CodeInfo, CODES};

/// One code as `explain --format json` prints it.
#[derive(Debug, Serialize)]
pub struct Explained<'a> {
    pub code: &'a str,
    pub title: &'a str,
    /// The explanation without its heading, as written (Markdown).
    pub text: String,
    /// The commands the explanation gives, in order.
    pub fixes: Vec<FixLine>,
}

#[derive(Debug, Serialize)]
pub struct FixLine {
    pub command: String,
    /// The comment written after the command, if any.
    pub note: Option<String>,
}

/// The commands of the explanation: its indented (code) lines.
pub fn fixes(info: &CodeInfo) -> Vec<FixLine> {
    info.body()
        .lines()
        .filter_map(|l| l.strip_prefix("    "))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once("  #") {
            Some((cmd, note)) => FixLine {
                command: cmd.trim().to_string(),
                note: Some(note.trim().to_string()),
            },
            None => FixLine {
                command: l.to_string(),
                note: None,
            },
        })
        .collect()
}

pub fn explained(info: &CodeInfo) -> Explained<'_> {
    Explained {
        code: info.code,
        title: info.title,
        text: info.body().to_string(),
        fixes: fixes(info),
    }
}

fn json(v: &impl Serialize) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("\"{e}\""));
    s.push('\n');
    s
}

pub fn explain_json(info: &CodeInfo) -> String {
    #[derive(Serialize)]
    struct Versioned<'a> {
        schema_version: u32,
        #[serde(flatten)]
        code: Explained<'a>,
    }
    json(&Versioned {
        schema_version: crate::report::SCHEMA_VERSION,
        code: explained(info),
    })
}

pub fn explain_markdown(info: &CodeInfo) -> String {
    format!("## {}: {}\n\n{}\n", info.code, info.title, info.body())
}

pub fn list_json() -> String {
    #[derive(Serialize)]
    struct Entry<'a> {
        code: &'a str,
        title: &'a str,
    }
    #[derive(Serialize)]
    struct List<'a> {
        schema_version: u32,
        codes: Vec<Entry<'a>>,
    }
    json(&List {
        schema_version: crate::report::SCHEMA_VERSION,
        codes: CODES
            .iter()
            .map(|c| Entry {
                code: c.code,
                title: c.title,
            })
            .collect(),
    })
}

pub fn list_markdown() -> String {
    let mut s = String::from("| Code | Title |\n|---|---|\n");
    for c in CODES {
        s.push_str(&format!(
            "| {} | {} |\n",
            c.code,
            super::markdown::cell(c.title)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixes_are_the_indented_commands_with_their_notes() {
        let info = crate::codes::lookup(crate::codes::GD006).unwrap();
        let f = fixes(info);
        assert_eq!(f[0].command, "sudo nvidia-modprobe -u -c=0");
        assert_eq!(
            f[0].note.as_deref(),
            Some("load nvidia_uvm and create the nodes")
        );
        assert!(!info.body().starts_with('#'));
    }

    #[test]
    fn every_code_lists_in_every_format() {
        let v: serde_json::Value = serde_json::from_str(&list_json()).unwrap();
        assert_eq!(v["schema_version"], crate::report::SCHEMA_VERSION);
        assert_eq!(v["codes"].as_array().unwrap().len(), CODES.len());
        assert_eq!(list_markdown().lines().count(), CODES.len() + 2);
    }
}
