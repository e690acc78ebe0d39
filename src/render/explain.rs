//! `gpudoctor explain` for a terminal: a code's explanation (Markdown) with its paragraphs
//! and list items re-wrapped to the width; code lines (indented four spaces or more, or
//! inside a ``` fence) are commands and stay exactly as written. The same text as
//! `render::codes` gives the other formats.

use super::width::wrap;
use super::Style;
use crate::codes::{CodeInfo, CODES};

/// `GD006: title` in bold, then the explanation's body, wrapped to `width` (ASCII where the
/// terminal needs it).
pub fn render_human(info: &CodeInfo, st: &Style, width: usize) -> String {
    let head = st.bold(&format!("{}: {}", info.code, info.title));
    st.finish(format!(
        "{}\n\n{}",
        wrap(&head, width, "", "  "),
        rewrap_markdown(info.body(), st, width)
    ))
}

/// `gpudoctor explain` (the list): each code and its title, the title wrapped under itself.
pub fn render_list(st: &Style, width: usize) -> String {
    let mut out = String::new();
    for c in CODES {
        let prefix = format!("{}  ", st.bold(c.code));
        let indent = " ".repeat(c.code.len() + 2);
        out.push_str(&wrap(c.title, width, &prefix, &indent));
        out.push('\n');
    }
    st.finish(out)
}

/// A command as written; when it and its aligned `# comment` overflow the width, the
/// comment goes on its own lines under it, so the command still reads whole.
fn code_line(line: &str, width: usize) -> String {
    if super::width::display_width(line) <= width {
        return line.to_string();
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    match line.find("  #") {
        Some(i) if !line[..i].trim().is_empty() => {
            let (command, comment) = (line[..i].trim_end(), line[i..].trim());
            let comment = wrap(comment, width, indent, &format!("{indent}  "));
            format!("{command}\n{comment}")
        }
        _ => line.to_string(),
    }
}

/// Markdown text with its paragraphs and list items wrapped to `width` and its code lines
/// as written; every line ends in a newline.
fn rewrap_markdown(text: &str, st: &Style, width: usize) -> String {
    let mut out = String::new();
    let mut para = Paragraph::default();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.starts_with("```") {
            para.flush(&mut out, width);
            fenced = !fenced;
            out.push_str(line);
            out.push('\n');
        } else if fenced || (indent >= 4 && !para.in_item()) || line.starts_with('\t') {
            para.flush(&mut out, width);
            out.push_str(&code_line(line, width));
            out.push('\n');
        } else if trimmed.is_empty() {
            para.flush(&mut out, width);
            out.push('\n');
        } else if line.starts_with('#') {
            para.flush(&mut out, width);
            out.push_str(&wrap(&st.bold(line), width, "", "  "));
            out.push('\n');
        } else if let Some(marker) = list_marker(trimmed) {
            para.flush(&mut out, width);
            let lead = &line[..indent + marker.len()];
            para.start(lead, &trimmed[marker.len()..]);
        } else {
            // A paragraph's next line, or an item's continuation (indented or not).
            para.add(trimmed);
        }
    }
    para.flush(&mut out, width);
    out
}

/// "- ", "* " or "12. " at the start of a list item.
fn list_marker(s: &str) -> Option<&str> {
    if s.starts_with("- ") || s.starts_with("* ") {
        return Some(&s[..2]);
    }
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && s[digits..].starts_with(". ")).then(|| &s[..digits + 2])
}

/// The lines of one paragraph or list item, gathered to be wrapped as one text.
#[derive(Default)]
struct Paragraph {
    /// The list marker with its indentation; empty for a plain paragraph.
    lead: String,
    text: String,
    open: bool,
}

impl Paragraph {
    fn in_item(&self) -> bool {
        self.open && !self.lead.is_empty()
    }

    fn start(&mut self, lead: &str, text: &str) {
        self.lead = lead.to_string();
        self.text = text.trim().to_string();
        self.open = true;
    }

    fn add(&mut self, line: &str) {
        if !self.open {
            self.start("", line);
            return;
        }
        if !self.text.is_empty() {
            self.text.push(' ');
        }
        self.text.push_str(line.trim());
    }

    fn flush(&mut self, out: &mut String, width: usize) {
        if !self.open {
            return;
        }
        let hanging = " ".repeat(self.lead.chars().count());
        out.push_str(&wrap(&self.text, width, &self.lead, &hanging));
        out.push('\n');
        *self = Paragraph::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::width::{display_width, strip_ansi};

    fn words(s: &str) -> Vec<String> {
        strip_ansi(s)
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    /// Every explanation at 80 and 60 columns: the same words in the same order, no line
    /// wider than the width unless it is a code line (kept as written) or one long word.
    #[test]
    fn every_explanation_fits_and_keeps_its_words() {
        for c in CODES {
            let code_lines: Vec<&str> = c
                .explanation
                .lines()
                .filter(|l| l.starts_with("    ") || l.starts_with('\t'))
                .collect();
            for width in [60, 80] {
                let out = render_human(c, &Style::plain(), width);
                let plain = format!("{}: {}\n\n{}\n", c.code, c.title, c.body());
                assert_eq!(words(&out), words(&plain), "{} at {width}", c.code);
                for line in out.lines() {
                    let single_word = line.split_whitespace().count() == 1;
                    assert!(
                        display_width(line) <= width || code_lines.contains(&line) || single_word,
                        "{} at {width}: {line:?}",
                        c.code
                    );
                }
            }
        }
    }

    #[test]
    fn the_list_fits_and_names_every_code() {
        let out = render_list(&Style::plain(), 60);
        let unwrapped = render_list(&Style::plain(), crate::render::width::MAX_WIDTH);
        assert_eq!(words(&out), words(&unwrapped));
        assert!(out.lines().all(|l| display_width(l) <= 60), "{out}");
        for c in CODES {
            assert!(out.contains(&format!("{}  ", c.code)), "{}", c.code);
        }
    }

    #[test]
    fn paragraphs_rewrap_and_code_lines_stay() {
        let info = CodeInfo {
            code: "GD999",
            title: "t",
            severities: &[],
            stops_all_cuda: false,
            explanation: "# GD999: a title\n\n## Why\n\nOne two three four five six seven eight nine ten\neleven twelve.\n\n- an item that is long enough to wrap\n  onto a second line;\n- short.\n\n    sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm   # after suspend\n",
        };
        let out = render_human(&info, &Style::plain(), 40);
        assert_eq!(
            out,
            "GD999: t\n\n## Why\n\nOne two three four five six seven eight\nnine ten eleven twelve.\n\n- an item that is long enough to wrap\n  onto a second line;\n- short.\n\n    sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm\n    # after suspend\n"
        );
    }
}

#[cfg(test)]
mod code_line_tests {
    use super::code_line;

    #[test]
    fn a_long_command_keeps_its_line_and_its_comment_goes_under_it() {
        let line = "    sudo dracut --force           # Fedora/RHEL/SUSE; also add rd.driver.blacklist=nouveau";
        assert_eq!(
            code_line(line, 50),
            "    sudo dracut --force\n    # Fedora/RHEL/SUSE; also add\n      rd.driver.blacklist=nouveau"
        );
        assert_eq!(code_line("    ls  # short", 60), "    ls  # short");
    }
}
