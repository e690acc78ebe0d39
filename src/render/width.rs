//! Fitting human output to the terminal: its width (`terminal_size`), the display width of
//! text (`unicode-width`; colour escapes take no column, ✓ and — take one, CJK takes two),
//! and one word-wrapping helper every human view uses (lines broken by `textwrap`).
//!
//! Wrapping only moves line breaks: it never splits a word, and a word (or a shell command
//! kept whole) wider than the line stays whole on a line of its own rather than being cut.

use std::os::fd::AsFd;

use textwrap::core::Fragment;
use unicode_width::UnicodeWidthChar;

/// The width when neither the terminal nor `COLUMNS` says.
pub const DEFAULT_WIDTH: usize = 80;
/// Narrower than this, hanging indents leave no room for text.
pub const MIN_WIDTH: usize = 40;
/// Wider than this, lines stop being readable (and `COLUMNS=100000` is a typo).
pub const MAX_WIDTH: usize = 400;
/// Sentences (a finding's reasons and fixes, the recap, the summary) wrap at most this wide
/// on a wider terminal, as prose is set; tables and fact lines use the whole width.
pub const PROSE_WIDTH: usize = 100;

/// The width human output is wrapped to: the terminal's when stdout is one (TIOCGWINSZ),
/// else `COLUMNS` (pass the variable's value), else 80; clamped to 40–400.
pub fn terminal_width(columns_env: Option<&str>) -> usize {
    width_from(stdout_tty_columns(), columns_env)
}

/// [`terminal_width`] with `COLUMNS` read from the process environment.
pub fn for_stdout() -> usize {
    let env = crate::envvars::Env::from_process();
    terminal_width(env.get_str(crate::envvars::COLUMNS).as_deref())
}

/// [`terminal_width`] without the ioctl: the terminal's columns if known, else `COLUMNS`,
/// else 80; clamped to 40–400.
pub fn width_from(tty_columns: Option<usize>, columns_env: Option<&str>) -> usize {
    columns_from(tty_columns, columns_env)
        .unwrap_or(DEFAULT_WIDTH)
        .clamp(MIN_WIDTH, MAX_WIDTH)
}

/// The terminal's columns if known, else a positive `COLUMNS`; unclamped.
pub fn columns_from(tty_columns: Option<usize>, columns_env: Option<&str>) -> Option<usize> {
    tty_columns.filter(|&c| c > 0).or_else(|| {
        columns_env
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
    })
}

/// The columns of the terminal on stdout; None when stdout is not a terminal.
fn stdout_tty_columns() -> Option<usize> {
    tty_columns(std::io::stdout())
}

/// The columns of the terminal on `fd`; None when it is not a terminal.
pub fn tty_columns(fd: impl AsFd) -> Option<usize> {
    terminal_size::terminal_size_of(fd).map(|(w, _)| usize::from(w.0))
}

/// The columns `s` takes on a terminal: ANSI escape sequences take none, combining marks
/// none, East Asian wide characters and emoji two, everything else one.
pub fn display_width(s: &str) -> usize {
    let mut w = 0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_escape(&mut chars);
        } else {
            w += char_width(c);
        }
    }
    w
}

/// Consumes the rest of an escape sequence whose ESC was just read: CSI (`ESC [ … final`),
/// OSC (`ESC ] … BEL` or `ESC ] … ESC \`), or a two-character escape.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\x40'..='\x7e').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\x07' {
                    break;
                }
                if c == '\x1b' && chars.peek() == Some(&'\\') {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

/// The columns one character takes (see [`display_width`]); control characters take none.
fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Text to wrap: `Words` may break at any whitespace; `Whole` (a shell command a user will
/// copy) never breaks inside, and moves to a line of its own when it does not fit.
#[derive(Debug, Clone, Copy)]
pub enum Piece<'a> {
    Words(&'a str),
    Whole(&'a str),
}

/// `text` word-wrapped to `width` columns: the first line starts with `first_prefix`, the
/// others with `hanging_indent`. Words are never split (one wider than the line stays whole
/// on its own line); whitespace inside a line is kept as written, a newline in `text`
/// breaks the line. Colour escapes take no column, and a colour open at a break is closed
/// at the end of the line and reopened after the indent. No trailing newline.
pub fn wrap(text: &str, width: usize, first_prefix: &str, hanging_indent: &str) -> String {
    wrap_pieces(&[Piece::Words(text)], width, first_prefix, hanging_indent)
}

/// [`wrap`] over several pieces, joined by one space; see [`Piece`].
///
/// textwrap chooses the breaks (first fit); what it has no notion of stays here: a figure
/// kept with its unit, a command never broken, a long word moved left out of an indent, and
/// colour closed at a break and reopened after the indent.
pub fn wrap_pieces(
    pieces: &[Piece],
    width: usize,
    first_prefix: &str,
    hanging_indent: &str,
) -> String {
    // The tokens of each line of the input (a newline in the text breaks it).
    let mut paragraphs: Vec<Vec<Token>> = vec![Vec::new()];
    for piece in pieces {
        match *piece {
            Piece::Words(text) => {
                let mut sep = " ";
                for (i, line) in text.split('\n').enumerate() {
                    if i > 0 {
                        paragraphs.push(Vec::new());
                        sep = "";
                    }
                    for (s, word) in words(line) {
                        let before = if s.is_empty() { sep } else { s };
                        push_token(&mut paragraphs, before, word);
                        sep = " ";
                    }
                }
            }
            Piece::Whole(text) if !text.is_empty() => push_token(&mut paragraphs, " ", text),
            Piece::Whole(_) => {}
        }
    }
    let mut out = Lines::new(width, first_prefix, hanging_indent);
    let hanging_width = display_width(hanging_indent) as f64;
    for (p, tokens) in paragraphs.iter_mut().enumerate() {
        if p > 0 {
            out.hard_break();
        }
        // A long first word that must move left leaves a prefix on a line of its own.
        if p == 0
            && tokens.first().is_some_and(|t| out.moves_left(t.width))
            && display_width(out.cur.trim()) > 0
        {
            out.hard_break();
        }
        for i in 1..tokens.len() {
            tokens[i - 1].after = display_width(tokens[i].before);
        }
        let line_widths = [
            width as f64 - out.cur_width as f64,
            width as f64 - hanging_width,
        ];
        let lines = textwrap::wrap_algorithms::wrap_first_fit(tokens, &line_widths);
        for (l, line) in lines.iter().enumerate() {
            if l > 0 {
                out.hard_break();
            }
            for (i, token) in line.iter().enumerate() {
                if i == 0 {
                    out.move_left_for(token.width);
                } else {
                    out.append(token.before);
                }
                out.append(token.text);
                out.has_word = true;
            }
        }
    }
    out.finish()
}

/// A word or a whole piece, with the whitespace written before it.
#[derive(Debug)]
struct Token<'a> {
    before: &'a str,
    text: &'a str,
    width: usize,
    /// The width of the whitespace after it (the next token's `before`).
    after: usize,
}

impl Fragment for Token<'_> {
    fn width(&self) -> f64 {
        self.width as f64
    }
    fn whitespace_width(&self) -> f64 {
        self.after as f64
    }
    fn penalty_width(&self) -> f64 {
        0.0
    }
}

fn push_token<'a>(paragraphs: &mut [Vec<Token<'a>>], before: &'a str, text: &'a str) {
    if let Some(last) = paragraphs.last_mut() {
        last.push(Token {
            before,
            text,
            width: display_width(text),
            after: 0,
        });
    }
}

/// (whitespace before, word) pairs of one line; the whitespace before the first word is
/// returned empty (the prefix or the joining space stands for it).
fn words(line: &str) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    let mut rest = line;
    let mut first = true;
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        let (sep, tail) = rest.split_at(start);
        if tail.is_empty() {
            break;
        }
        let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
        let (word, after) = tail.split_at(end);
        let offset = |w: &str| w.as_ptr() as usize - line.as_ptr() as usize;
        // A figure and its unit ("19 %", "3.1 s", "80 GiB") stay on one line.
        match out.last_mut() {
            Some((_, prev))
                if sep == " "
                    && UNITS.contains(&word)
                    && prev.ends_with(|c: char| c.is_ascii_digit()) =>
            {
                *prev = &line[offset(prev)..offset(word) + word.len()];
            }
            _ => out.push((if first { "" } else { sep }, word)),
        }
        first = false;
        rest = after;
    }
    out
}

/// Units written after a figure with a space.
const UNITS: &[&str] = &[
    "%", "s", "ms", "µs", "B", "KiB", "MiB", "GiB", "TiB", "MB", "GB", "GB/s", "MB/s", "°C", "W",
];

/// How far left a long word may move out of an indented block to fit (see `Wrapper::push`).
const OUTDENT_FLOOR: usize = 2;

/// The output lines, built left to right.
struct Lines<'a> {
    width: usize,
    hanging: &'a str,
    lines: Vec<String>,
    cur: String,
    cur_width: usize,
    /// The current line holds a word (not only its prefix).
    has_word: bool,
    /// Colour escapes in force (since the last reset), to reopen after a break.
    active: String,
}

impl<'a> Lines<'a> {
    fn new(width: usize, first_prefix: &str, hanging: &'a str) -> Lines<'a> {
        let mut w = Lines {
            width,
            hanging,
            lines: Vec::new(),
            cur: String::new(),
            cur_width: 0,
            has_word: false,
            active: String::new(),
        };
        w.append(first_prefix);
        w
    }

    fn append(&mut self, s: &str) {
        self.cur.push_str(s);
        self.cur_width += display_width(s);
        track_sgr(&mut self.active, s);
    }

    /// A word this wide, first on the current line, fits the width but not after the
    /// (blank) indent, and may move left, though not further than two columns.
    fn moves_left(&self, word_width: usize) -> bool {
        let floor = display_width(self.hanging).min(OUTDENT_FLOOR);
        self.cur_width + word_width > self.width
            && floor + word_width <= self.width
            && self.hanging.chars().all(|c| c == ' ')
    }

    /// Starts the line (only its indent so far) where a word this wide ends at the width,
    /// if it must move left (a path).
    fn move_left_for(&mut self, word_width: usize) {
        if !self.moves_left(word_width) {
            return;
        }
        let active = std::mem::take(&mut self.active);
        self.cur = " ".repeat(self.width - word_width);
        self.cur_width = self.width - word_width;
        self.cur.push_str(&active);
        self.active = active;
    }

    fn hard_break(&mut self) {
        if !self.active.is_empty() {
            self.cur.push_str("\x1b[0m");
        }
        self.lines.push(std::mem::take(&mut self.cur));
        self.cur_width = 0;
        self.has_word = false;
        let active = std::mem::take(&mut self.active);
        self.append(self.hanging);
        self.cur.push_str(&active);
        self.active = active;
    }

    fn finish(mut self) -> String {
        if self.has_word || self.lines.is_empty() || !self.cur.trim().is_empty() {
            self.lines.push(std::mem::take(&mut self.cur));
        }
        let lines: Vec<&str> = self.lines.iter().map(|l| l.trim_end()).collect();
        lines.join("\n")
    }
}

/// Follows the SGR (colour) escapes in `s`: a reset clears `active`, others add to it.
fn track_sgr(active: &mut String, s: &str) {
    let mut rest = s;
    while let Some(i) = rest.find("\x1b[") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(|c: char| ('\x40'..='\x7e').contains(&c)) else {
            return;
        };
        let params = &after[..end];
        if after[end..].starts_with('m') {
            if params.is_empty() || params == "0" {
                active.clear();
            } else {
                active.push_str(&rest[i..i + 2 + end + 1]);
            }
        }
        rest = &after[end + 1..];
    }
}

/// `s` padded with spaces to `width` display columns (unchanged when wider).
pub fn pad(s: &str, width: usize) -> String {
    let w = display_width(s);
    format!("{s}{}", " ".repeat(width.saturating_sub(w)))
}

/// `s` without its colour escapes.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_escape(&mut chars);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(s: &str) -> usize {
        s.lines().map(display_width).max().unwrap_or(0)
    }

    #[test]
    fn a_figure_keeps_its_unit() {
        assert_eq!(
            wrap("copies reached 19 % of the link", 17, "", ""),
            "copies reached\n19 % of the link"
        );
    }

    fn words_of(s: &str) -> Vec<String> {
        strip_ansi(s)
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn width_comes_from_the_terminal_then_columns_then_80() {
        assert_eq!(width_from(Some(132), Some("90")), 132);
        assert_eq!(width_from(None, Some("90")), 90);
        assert_eq!(width_from(None, Some(" 120 ")), 120);
        assert_eq!(width_from(None, None), 80);
        assert_eq!(width_from(None, Some("wide")), 80);
        assert_eq!(width_from(None, Some("0")), 80);
        assert_eq!(width_from(Some(0), None), 80);
        assert_eq!(width_from(None, Some("10")), MIN_WIDTH);
        assert_eq!(width_from(None, Some("100000")), MAX_WIDTH);
        assert_eq!(width_from(Some(1000), None), MAX_WIDTH);
    }

    #[test]
    fn hanging_indent() {
        let text = "CUDA needs the Unified Memory module and its device node. Without them nvidia-smi still works";
        let out = wrap(text, 40, "  = why: ", "         ");
        assert_eq!(
            out,
            "  = why: CUDA needs the Unified Memory\n         module and its device node.\n         Without them nvidia-smi still\n         works"
        );
        assert!(widest(&out) <= 40);
        assert_eq!(words_of(&out), words_of(&format!("= why: {text}")));
    }

    #[test]
    fn fits_on_one_line_unchanged() {
        assert_eq!(wrap("a b c", 80, "- ", "  "), "- a b c");
        assert_eq!(wrap("", 80, "  x  ", "  "), "  x");
        // Spacing inside a line is kept as written.
        assert_eq!(
            wrap("nvcc: none   compiles", 80, "", ""),
            "nvcc: none   compiles"
        );
    }

    #[test]
    fn a_word_longer_than_the_line_stays_whole_on_its_own_line() {
        let long = "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.580.95.05";
        let out = wrap(&format!("see {long} now"), 40, "", "    ");
        assert_eq!(out, format!("see\n    {long}\n    now"));
        // Alone after a prefix, it stays on the first line: no empty line.
        let out = wrap(long, 40, "  ✓ lib  ", "         ");
        assert_eq!(out, format!("  ✓ lib  {long}"));
    }

    #[test]
    fn a_word_that_fits_the_width_but_not_the_indent_moves_left() {
        let path = "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05";
        let out = wrap(
            &format!("580.95.05 ({path})"),
            50,
            "  ✓ libcuda.so.1  ",
            "                  ",
        );
        assert_eq!(out, format!("  ✓ libcuda.so.1  580.95.05\n  ({path})"));
        assert!(widest(&out) <= 50);
        // First on the line, it leaves the prefix on a line of its own.
        let out = wrap(path, 50, "  = fix: ", "         ");
        assert_eq!(out, format!("  = fix:\n    {path}"));
        // A command line (an indent, no prefix) just moves left.
        let cmd = "$ sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm";
        let out = wrap_pieces(&[Piece::Whole(cmd)], 60, "         ", "         ");
        assert_eq!(out, format!("   {cmd}"));
        // An indent that is not blank (a comment's "# ") is never given up.
        let out = wrap_pieces(&[Piece::Whole(cmd)], 60, "#        ", "#        ");
        assert_eq!(out, format!("#        {cmd}"));
        let out = wrap(&format!("see {cmd}"), 60, "# ", "#   ");
        assert!(out.lines().all(|l| l.starts_with('#')), "{out}");
        // Not further left than two columns: it stays where it was and is wider.
        let out = wrap_pieces(&[Piece::Whole(cmd)], 58, "         ", "         ");
        assert_eq!(out, format!("         {cmd}"));
    }

    #[test]
    fn colour_escapes_take_no_column() {
        let plain = "error[GD006]: /dev/nvidia-uvm is missing: CUDA cannot initialise at all";
        let coloured = "\x1b[31;1merror[GD006]\x1b[0m: \x1b[1m/dev/nvidia-uvm is missing: CUDA cannot initialise at all\x1b[0m";
        let a = wrap(plain, 40, "", "    ");
        let b = wrap(coloured, 40, "", "    ");
        assert_eq!(strip_ansi(&b), a);
        assert!(widest(&b) <= 40);
        // The bold title spans a break: closed at the end of the line, reopened after the indent.
        let first = b.lines().next().unwrap();
        assert!(first.ends_with("\x1b[0m"), "{first:?}");
        let second = b.lines().nth(1).unwrap();
        assert!(second.starts_with("    \x1b[1m"), "{second:?}");
    }

    #[test]
    fn multibyte_symbols_are_one_column() {
        assert_eq!(display_width("✓ ✗ × — → … · °"), 15);
        assert_eq!(display_width("\x1b[32m✓\x1b[0m"), 1);
        assert_eq!(display_width("GPU 0…7"), 7);
        assert_eq!(display_width("日本"), 4);
        assert_eq!(display_width("e\u{301}"), 1);
        let out = wrap("✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓", 9, "", "");
        assert_eq!(out, "✓ ✓ ✓ ✓ ✓\n✓ ✓ ✓ ✓ ✓");
        let out = wrap("日本語 日本語 日本語", 14, "", "");
        assert_eq!(out, "日本語 日本語\n日本語");
    }

    #[test]
    fn a_command_is_kept_whole() {
        let cmd = "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility IMAGE";
        let out = wrap_pieces(
            &[
                Piece::Words("fix: Start the container with the GPUs:"),
                Piece::Whole(cmd),
            ],
            60,
            "    ",
            "         ",
        );
        assert_eq!(
            out,
            format!("    fix: Start the container with the GPUs:\n         {cmd}")
        );
        let out = wrap_pieces(
            &[
                Piece::Words("fix: Load it:"),
                Piece::Whole("sudo modprobe x"),
            ],
            60,
            "    ",
            "         ",
        );
        assert_eq!(out, "    fix: Load it: sudo modprobe x");
    }

    #[test]
    fn newlines_break_lines() {
        assert_eq!(wrap("a b\nc d", 80, "> ", "  "), "> a b\n  c d");
    }

    #[test]
    fn padding_counts_columns() {
        assert_eq!(pad("34°C", 6), "34°C  ");
        assert_eq!(pad("\x1b[1mab\x1b[0m", 3), "\x1b[1mab\x1b[0m ");
    }
}
