//! Renderers only format: one Report in, text out.

pub mod codes;
pub mod devices;
// Until src/cli wires `gpudoctor diff`, `check --baseline` and `check --fix-script`.
pub mod diff;
pub mod explain;
pub mod fix_script;
pub mod fleet;
pub mod fleet_html;
pub mod form;
pub mod html;
pub mod human;
pub mod json;
pub mod junit;
pub mod libs;
pub mod markdown;
pub mod prometheus;
pub mod recap;
pub mod recommend;
pub mod reference;
pub mod report_html;
pub mod smoke;
pub mod smoke_progress;
pub mod term;
pub mod timings;
pub mod toolkit;
pub mod view;
pub mod width;

use std::borrow::Cow;
use std::io::IsTerminal;

use owo_colors::OwoColorize;

/// Escapes control characters (escape sequences, newlines, bells) in text that came
/// from the inspected system, so a hostile --root cannot rewrite the terminal.
pub fn printable(s: &str) -> Cow<'_, str> {
    if s.chars().any(hides_text) {
        Cow::Owned(
            s.chars()
                .map(|c| {
                    if c.is_control() {
                        c.escape_default().to_string()
                    } else if hides_text(c) {
                        format!("\\u{{{:x}}}", c as u32)
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

/// Characters that make what a reader sees differ from what is there: control characters
/// (Cc), and the invisible format characters that reorder or hide text: the bidirectional
/// embeddings, overrides and isolates (U+202A–E, U+2066–9), the marks (U+200E/F, U+061C),
/// zero-width spaces and joiners (U+200B–D, U+2060–4), the soft hyphen (U+00AD), the
/// Mongolian vowel separator (U+180E), the line and paragraph separators (U+2028/9), the
/// interlinear annotation marks (U+FFF9–B), the tag characters (U+E0000–7F), the blank Hangul
/// fillers (U+115F/60, U+3164, U+FFA0) and the byte-order mark (U+FEFF). Every surface shows
/// text from the inspected machine with these escaped.
pub fn hides_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// How human output is written: `enabled` colours it (false for `--color never`, pipes and
/// NO_COLOR), `ascii` puts ASCII in place of ✓ ✗ · → … (TERM=dumb, a locale that is not
/// UTF-8). Both are decided in `render::term`.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub enabled: bool,
    pub ascii: bool,
}

impl Style {
    /// For stdout: `--color` (`term::set_color_when`), the environment, and whether stdout
    /// is a terminal.
    pub fn for_stdout() -> Style {
        Style::from_env(
            term::color_when(),
            &crate::envvars::Env::from_process(),
            std::io::stdout().is_terminal(),
        )
    }

    pub fn from_env(
        flag: term::ColorWhen,
        env: &crate::envvars::Env,
        stdout_is_tty: bool,
    ) -> Style {
        Style {
            enabled: term::color_enabled(flag, env, stdout_is_tty),
            ascii: term::ascii_only(env),
        }
    }

    pub fn plain() -> Style {
        Style {
            enabled: false,
            ascii: false,
        }
    }

    /// Finished human output as this terminal can show it (ASCII stand-ins when it must).
    pub fn finish(&self, text: String) -> String {
        if self.ascii {
            term::to_ascii(&text).into_owned()
        } else {
            text
        }
    }

    /// Text as it will be printed, for measuring before padding (`finish` changes widths:
    /// … becomes ...).
    pub fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.ascii {
            term::to_ascii(s)
        } else {
            Cow::Borrowed(s)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_controls_and_text_that_hides_itself() {
        assert_eq!(printable("GPU 0"), "GPU 0");
        assert_eq!(printable("a\nb"), "a\\nb");
        assert_eq!(printable("evil\u{202e}gpj.exe"), "evil\\u{202e}gpj.exe");
        assert_eq!(printable("x\u{2066}y\u{2069}"), "x\\u{2066}y\\u{2069}");
        assert_eq!(printable("\u{feff}bom"), "\\u{feff}bom");
        // Other non-ASCII text is text.
        assert_eq!(printable("Müller → é"), "Müller → é");
    }
}
