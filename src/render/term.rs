//! What the terminal can show, decided once from the flag and the environment: colour, and
//! whether ✓ ✗ · → … × — can be printed or ASCII stands in for them. Also the width of
//! stderr, for the one live line (the smoke test's progress).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::envvars::{self, Env, EnvVar};

/// `--color`: auto follows the environment and whether stdout is a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// `--color` for this process (set once by the command line; `Style::for_stdout` reads it).
static COLOR_WHEN: AtomicU8 = AtomicU8::new(0);

/// Records `--color` for every `Style::for_stdout()` that follows.
pub fn set_color_when(when: ColorWhen) {
    let v = match when {
        ColorWhen::Auto => 0,
        ColorWhen::Always => 1,
        ColorWhen::Never => 2,
    };
    COLOR_WHEN.store(v, Ordering::Relaxed);
}

/// What `set_color_when` recorded (auto when nothing was).
pub fn color_when() -> ColorWhen {
    match COLOR_WHEN.load(Ordering::Relaxed) {
        1 => ColorWhen::Always,
        2 => ColorWhen::Never,
        _ => ColorWhen::Auto,
    }
}

/// A variable that is set to something (an empty value counts as unset, as NO_COLOR's
/// own definition says).
fn set(env: &Env, var: EnvVar) -> Option<String> {
    env.get_str(var).filter(|v| !v.is_empty())
}

/// Whether output is coloured. From first to last, the first that speaks decides:
///
/// | `--color always` / `never`                     | on / off |
/// | `NO_COLOR` non-empty                           | off      |
/// | `CLICOLOR_FORCE` or `FORCE_COLOR` set, not `0`/`false` | on |
/// | `CLICOLOR=0`                                   | off      |
/// | `TERM=dumb`                                    | off      |
/// | stdout is a terminal                           | on, else off |
///
/// NO_COLOR beats the force variables (no-color.org: a user's "no" wins over a tool's
/// default), and only the explicit flag beats NO_COLOR.
pub fn color_enabled(flag: ColorWhen, env: &Env, stdout_is_tty: bool) -> bool {
    match flag {
        ColorWhen::Always => return true,
        ColorWhen::Never => return false,
        ColorWhen::Auto => {}
    }
    if set(env, envvars::NO_COLOR).is_some() {
        return false;
    }
    let forces = |var| set(env, var).is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"));
    if forces(envvars::CLICOLOR_FORCE) || forces(envvars::FORCE_COLOR) {
        return true;
    }
    if set(env, envvars::CLICOLOR).is_some_and(|v| v.trim() == "0") {
        return false;
    }
    if dumb_terminal(env) {
        return false;
    }
    stdout_is_tty
}

fn dumb_terminal(env: &Env) -> bool {
    set(env, envvars::TERM).is_some_and(|t| t.trim() == "dumb")
}

/// Whether human output must be ASCII: `TERM=dumb`, or a locale that names a character set
/// other than UTF-8. The locale is the first non-empty of LC_ALL, LC_CTYPE and LANG, as
/// setlocale(3) picks it. `C`, `POSIX` and `en_US.ISO-8859-1` are not UTF-8; `C.UTF-8` and
/// `en_US.utf8` are.
///
/// With none of the three set, the output stays UTF-8. ls and git would read that as the C
/// locale and print ASCII, but an unset locale is almost never a choice: it is a container,
/// a CI runner, a cron job or an ssh session that forwarded no LANG, and whatever shows
/// their output (a modern terminal, a browser showing the job log) reads UTF-8 — the same
/// reasoning as Python's PEP 538, which treats the unset C locale as UTF-8. A locale set to
/// something else is a choice, and is honoured.
pub fn ascii_only(env: &Env) -> bool {
    if dumb_terminal(env) {
        return true;
    }
    let locale = [envvars::LC_ALL, envvars::LC_CTYPE, envvars::LANG]
        .into_iter()
        .find_map(|v| set(env, v));
    match locale {
        Some(l) => {
            let l = l.to_ascii_lowercase();
            !(l.contains("utf-8") || l.contains("utf8"))
        }
        None => false,
    }
}

/// The ASCII stand-in for each non-ASCII character the human output writes itself; text
/// from the inspected system (a GPU's name, a path) is left as it is.
fn ascii_for(c: char) -> Option<&'static str> {
    Some(match c {
        '✓' => "+",
        '✗' => "x",
        '·' => "-",
        '→' => "->",
        '←' => "<-",
        '↔' => "<->",
        '…' => "...",
        '×' => "x",
        '—' => "--",
        '–' | '−' => "-",
        '≥' => ">=",
        '≤' => "<=",
        '≠' => "!=",
        '≈' => "~",
        '±' => "+/-",
        '°' => "",
        '§' => "sec. ",
        '‖' => "||",
        '√' => "sqrt",
        'Σ' => "sum ",
        _ => return None,
    })
}

/// Superscript digits and minus (`2⁻²⁴`), as `^-24` after the first.
fn superscript(c: char) -> Option<char> {
    Some(match c {
        '⁰' => '0',
        '¹' => '1',
        '²' => '2',
        '³' => '3',
        '⁴' => '4',
        '⁵' => '5',
        '⁶' => '6',
        '⁷' => '7',
        '⁸' => '8',
        '⁹' => '9',
        '⁻' => '-',
        _ => return None,
    })
}

/// Subscript letters (`sₖ`, `aᵢₖ`) as `_k`, `_ik`.
fn subscript(c: char) -> Option<char> {
    Some(match c {
        'ₖ' => 'k',
        'ᵢ' => 'i',
        'ⱼ' => 'j',
        'ₙ' => 'n',
        '₀' => '0',
        '₁' => '1',
        '₂' => '2',
        _ => return None,
    })
}

/// `text` with ASCII in place of the marks, arrows, dashes and ellipses the output uses.
pub fn to_ascii(text: &str) -> Cow<'_, str> {
    let special =
        |c: char| ascii_for(c).is_some() || superscript(c).is_some() || subscript(c).is_some();
    if !text.chars().any(special) {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        if let Some(d) = superscript(c) {
            if prev.and_then(superscript).is_none() {
                out.push('^');
            }
            out.push(d);
        } else if let Some(d) = subscript(c) {
            if prev.and_then(subscript).is_none() {
                out.push('_');
            }
            out.push(d);
        } else if c == '·'
            && prev.is_some_and(|p| !p.is_whitespace())
            && next.is_some_and(|n| !n.is_whitespace())
        {
            // Between two terms it is a product (`10·2⁻²⁴`); between spaces a separator.
            out.push('*');
        } else {
            match ascii_for(c) {
                Some(a) => out.push_str(a),
                None => out.push(c),
            }
        }
    }
    Cow::Owned(out)
}

/// Columns of the terminal on stderr: the terminal's own answer, else COLUMNS, else 80
/// (unclamped: the progress line must fit however narrow the terminal is).
pub fn stderr_columns(env: &Env) -> usize {
    super::width::columns_from(
        super::width::tty_columns(std::io::stderr()),
        env.get_str(envvars::COLUMNS).as_deref(),
    )
    .unwrap_or(super::width::DEFAULT_WIDTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().map(|(k, v)| (*k, *v)))
    }

    #[test]
    fn colour_precedence() {
        use ColorWhen::*;
        // (flag, environment, stdout is a terminal, coloured)
        type Case = (
            ColorWhen,
            &'static [(&'static str, &'static str)],
            bool,
            bool,
        );
        let table: &[Case] = &[
            (Auto, &[], true, true),
            (Auto, &[], false, false),
            (Always, &[], false, true),
            (Never, &[], true, false),
            // NO_COLOR: off on a terminal, over the force variables; the flag beats it.
            (Auto, &[("NO_COLOR", "1")], true, false),
            (Auto, &[("NO_COLOR", "")], true, true),
            (
                Auto,
                &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")],
                false,
                false,
            ),
            (
                Auto,
                &[("NO_COLOR", "1"), ("FORCE_COLOR", "1")],
                true,
                false,
            ),
            (Always, &[("NO_COLOR", "1")], false, true),
            // The force variables: on a pipe too, over CLICOLOR=0 and TERM=dumb.
            (Auto, &[("CLICOLOR_FORCE", "1")], false, true),
            (Auto, &[("CLICOLOR_FORCE", "0")], false, false),
            (Auto, &[("CLICOLOR_FORCE", "")], false, false),
            (Auto, &[("FORCE_COLOR", "true")], false, true),
            (Auto, &[("FORCE_COLOR", "false")], false, false),
            (Auto, &[("FORCE_COLOR", "0")], true, true),
            (
                Auto,
                &[("CLICOLOR", "0"), ("CLICOLOR_FORCE", "1")],
                false,
                true,
            ),
            (
                Auto,
                &[("TERM", "dumb"), ("CLICOLOR_FORCE", "1")],
                false,
                true,
            ),
            (Never, &[("CLICOLOR_FORCE", "1")], true, false),
            // CLICOLOR=0 and TERM=dumb: off on a terminal.
            (Auto, &[("CLICOLOR", "0")], true, false),
            (Auto, &[("CLICOLOR", "1")], true, true),
            (Auto, &[("CLICOLOR", "1")], false, false),
            (Auto, &[("TERM", "dumb")], true, false),
            (Auto, &[("TERM", "xterm-256color")], true, true),
            (Always, &[("CLICOLOR", "0"), ("TERM", "dumb")], false, true),
        ];
        for (flag, vars, tty, want) in table {
            assert_eq!(
                color_enabled(*flag, &env(vars), *tty),
                *want,
                "{flag:?} {vars:?} tty={tty}"
            );
        }
    }

    #[test]
    fn ascii_for_a_dumb_terminal_or_a_locale_that_is_not_utf8() {
        let table: &[(&[(&str, &str)], bool)] = &[
            (&[], false),
            (&[("LANG", "en_US.UTF-8")], false),
            (&[("LANG", "C.utf8")], false),
            (&[("LANG", "de_DE.ISO-8859-1")], true),
            (&[("LANG", "C")], true),
            (&[("LANG", "POSIX")], true),
            // LC_ALL, else LC_CTYPE, else LANG; an empty one is skipped.
            (&[("LC_ALL", "C"), ("LANG", "en_US.UTF-8")], true),
            (&[("LC_ALL", "en_US.UTF-8"), ("LANG", "C")], false),
            (
                &[("LC_ALL", ""), ("LC_CTYPE", "C"), ("LANG", "en_US.UTF-8")],
                true,
            ),
            (&[("LC_CTYPE", "C.UTF-8"), ("LANG", "C")], false),
            (&[("TERM", "dumb")], true),
            (&[("TERM", "dumb"), ("LANG", "en_US.UTF-8")], true),
            (&[("TERM", "xterm")], false),
        ];
        for (vars, want) in table {
            assert_eq!(ascii_only(&env(vars)), *want, "{vars:?}");
        }
    }

    #[test]
    fn ascii_stands_in_for_marks_arrows_and_dashes_only() {
        assert_eq!(
            to_ascii("✓ GPU 0…7 — 8× H100 → nvidia · 0–7"),
            "+ GPU 0...7 -- 8x H100 -> nvidia - 0-7"
        );
        assert_eq!(to_ascii("/home/zoë"), "/home/zoë");
        // Formulas keep their meaning: a product stays a product.
        assert_eq!(
            to_ascii("|gpu − ref| ≤ 10·2⁻²⁴·√(Σₖ sₖ²)"),
            "|gpu - ref| <= 10*2^-24*sqrt(sum _k s_k^2)"
        );
        assert!(matches!(to_ascii("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn stderr_width_falls_back_to_columns_then_80() {
        // The test's stderr may be a terminal: only check the fallbacks when it is not.
        use std::io::IsTerminal;
        if std::io::stderr().is_terminal() {
            return;
        }
        assert_eq!(stderr_columns(&env(&[("COLUMNS", "132")])), 132);
        assert_eq!(stderr_columns(&env(&[("COLUMNS", "x")])), 80);
        assert_eq!(stderr_columns(&env(&[])), 80);
    }
}
