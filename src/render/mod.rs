//! Renderers only format: one Report in, text out.

pub mod codes;
pub mod devices;
// Until src/cli wires `gpudoctor diff`, `check --baseline` and `check --fix-script`.
pub mod diff;
pub mod explain;
pub mod fix_script;
pub mod fleet;
pub mod form;
pub mod human;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod prometheus;
pub mod smoke;
pub mod timings;
pub mod toolkit;
pub mod view;
pub mod width;

use std::borrow::Cow;

use owo_colors::{OwoColorize, Stream};

/// Escapes control characters (escape sequences, newlines, bells) in text that came
/// from the inspected system, so a hostile --root cannot rewrite the terminal.
pub fn printable(s: &str) -> Cow<'_, str> {
    if s.chars().any(char::is_control) {
        Cow::Owned(
            s.chars()
                .map(|c| {
                    if c.is_control() {
                        c.escape_default().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

/// Colour decisions in one place; `enabled` is false for `--color never` and pipes.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub enabled: bool,
}

impl Style {
    pub fn for_stdout() -> Style {
        // owo-colors' supports-color check honours NO_COLOR, CLICOLOR_FORCE, FORCE_COLOR
        // and whether stdout is a terminal; `set_override` (from --color) wins over it.
        let probe = "x"
            .if_supports_color(Stream::Stdout, |t| t.red())
            .to_string();
        Style {
            enabled: probe != "x",
        }
    }

    pub fn plain() -> Style {
        Style { enabled: false }
    }

    fn paint(&self, s: &str, f: impl Fn(&str) -> String) -> String {
        if self.enabled {
            f(s)
        } else {
            s.to_string()
        }
    }

    pub fn red(&self, s: &str) -> String {
        self.paint(s, |s| s.red().bold().to_string())
    }
    pub fn yellow(&self, s: &str) -> String {
        self.paint(s, |s| s.yellow().bold().to_string())
    }
    pub fn green(&self, s: &str) -> String {
        self.paint(s, |s| s.green().to_string())
    }
    pub fn cyan(&self, s: &str) -> String {
        self.paint(s, |s| s.cyan().to_string())
    }
    pub fn bold(&self, s: &str) -> String {
        self.paint(s, |s| s.bold().to_string())
    }
    pub fn dim(&self, s: &str) -> String {
        self.paint(s, |s| s.dimmed().to_string())
    }
}
