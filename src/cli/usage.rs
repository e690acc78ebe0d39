//! What the command line prints about itself: each command's help in its own words (a short
//! top-level summary; check's options under `check -h`), and clap's usage errors in the
//! tool's one error style, `gpudoctor: error: …` then a hint.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, Command};

const TOP_AFTER_HELP: &str =
    "Without a command, gpudoctor runs check: `gpudoctor check -h` lists its options.";

/// What `-v` adds, for the commands where it adds something.
fn verbose_help(command: &str) -> Option<&'static str> {
    Some(match command {
        "check" => "More detail: passing checks, each fact's source, every registered variable (-vv: the probes' timings)",
        "toolkit" => "More detail: every candidate path of each CUDA library, not only the one the loader picks",
        "recommend" => "More detail: every version considered for each pick",
        // The top level lists commands; what -v adds is in each command's help.
        "" => "More detail (-vv: more still)",
        _ => return None,
    })
}

/// The time budget as each command spends it.
fn timeout_help(command: &str) -> Option<&'static str> {
    Some(match command {
        "check" => "Time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out. The smoke test's driver calls may go this long without answering (default 30) before a GPU is reported as hung",
        "smoke" => "How long the driver may go without answering, in seconds (default 30; 60 with --nccl), before a GPU is reported as hung; a slow GPU that keeps answering runs to its end",
        _ => return None,
    })
}

/// `cmd` (the visible command tree) with each command's help in its own words.
pub fn shape(cmd: Command) -> Command {
    let globals: Vec<Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    cmd.after_help(TOP_AFTER_HELP)
        // check's options are taken at the top level (a bare `gpudoctor` is `check`) but
        // listed only in check's own help; completions still offer them.
        .mut_args(|a| {
            if a.is_global_set() {
                let a = if matches!(a.get_id().as_str(), "config" | "no_config") {
                    a.hide_short_help(true)
                } else {
                    a
                };
                return own_words(a, "");
            }
            own_words(a.hide_short_help(true).hide_long_help(true), "check")
        })
        .mut_subcommands(|sc| {
            let name = sc.get_name().to_string();
            // A global option given to a command before the tree is built keeps the
            // command's own copy, so each command states what -v does for it.
            let mut sc = sc;
            for g in &globals {
                if sc.get_arguments().any(|a| a.get_id() == g.get_id()) {
                    continue;
                }
                sc = sc.arg(own_words(g.clone(), &name));
            }
            sc.mut_args(|a| own_words(a, &name))
        })
}

/// One option's help as `command` uses it.
fn own_words(a: Arg, command: &str) -> Arg {
    match a.get_id().as_str() {
        "verbose" => match verbose_help(command) {
            Some(h) => a.help(h),
            // Accepted (it is global) but changes nothing here: not documented here.
            None => a.hide(true),
        },
        "timeout" => match timeout_help(command) {
            Some(h) => a.help(h),
            None => a,
        },
        _ => a,
    }
}

/// The subcommand `args` name (the first word that is one), for hints.
fn subcommand_of<'a>(cmd: &'a Command, args: &[std::ffi::OsString]) -> Option<&'a Command> {
    args.iter().skip(1).find_map(|a| {
        let a = a.to_str()?;
        cmd.get_subcommands()
            .find(|s| !s.is_hide_set() && s.get_name() == a)
    })
}

/// The visible commands that take `--long` (or `-s`).
fn commands_taking<'a>(cmd: &'a Command, flag: &str) -> Vec<&'a str> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .filter(|s| s.get_arguments().any(|a| takes(a, flag)))
        .map(|s| s.get_name())
        .collect()
}

fn takes(a: &Arg, flag: &str) -> bool {
    if let Some(long) = flag.strip_prefix("--") {
        let long = long.split('=').next().unwrap_or(long);
        a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|al| al.contains(&long))
    } else if let Some(short) = flag.strip_prefix('-') {
        let mut chars = short.chars();
        chars.next().is_some_and(|c| a.get_short() == Some(c))
    } else {
        false
    }
}

/// "`check` and `smoke`" (or "`a`, `b` or `c`" with `word` "or").
fn listed(names: &[&str], word: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} {word} {last}", rest.join(", ")),
    }
}

/// Where a flag given to `command` belongs, when it belongs elsewhere:
/// "--nccl is an option of `check` and `smoke`, not of `devices`".
pub fn belongs_elsewhere(cmd: &Command, flag: &str, command: &str) -> Option<String> {
    let takers = commands_taking(cmd, flag);
    if takers.is_empty() || takers.contains(&command) {
        return None;
    }
    let flag = flag.split('=').next().unwrap_or(flag);
    Some(format!(
        "{flag} is an option of {}, not of `{command}`",
        listed(&takers, "and")
    ))
}

/// The commands nearest a mistyped one, by edit distance (ties in the listed order).
pub fn nearest_commands<'a>(cmd: &'a Command, typed: &str) -> Vec<&'a str> {
    let typed = typed.to_lowercase();
    let limit = (typed.chars().count() / 3).max(2);
    let mut near: Vec<(usize, usize, &str)> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name())
        .enumerate()
        .map(|(i, name)| (strsim::levenshtein(&typed, name), i, name))
        .filter(|(d, _, name)| *d <= limit || name.starts_with(&typed))
        .collect();
    near.sort();
    near.into_iter().map(|(_, _, n)| n).take(3).collect()
}

fn context_string(e: &clap::Error, kind: ContextKind) -> Option<String> {
    match e.get(kind)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::Strings(v) => v.first().cloned(),
        _ => None,
    }
}

/// clap's error `e` in the tool's style: `gpudoctor: error: …`, clap's detail lines, then
/// one hint (which command takes a misplaced option, the nearest command, or the usage).
pub fn render_error(e: &clap::Error, cmd: &Command, args: &[std::ffi::OsString]) -> String {
    let text = e.render().to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let mut message = vec![first.strip_prefix("error: ").unwrap_or(first).to_string()];
    let mut clap_tip = None;
    let mut usage = None;
    for line in lines {
        let t = line.trim();
        if let Some(tip) = t.strip_prefix("tip: ") {
            clap_tip.get_or_insert_with(|| tip.to_string());
        } else if let Some(u) = t.strip_prefix("Usage: ") {
            usage = Some(u.to_string());
        } else if !t.is_empty() && !t.starts_with("For more information") && usage.is_none() {
            message.push(line.to_string());
        }
    }
    let sub = subcommand_of(cmd, args);
    let here = sub.map_or("gpudoctor".to_string(), |s| {
        format!("gpudoctor {}", s.get_name())
    });
    let hint = match e.kind() {
        ErrorKind::UnknownArgument => {
            let flag = context_string(e, ContextKind::InvalidArg).unwrap_or_default();
            let suggested = context_string(e, ContextKind::SuggestedArg);
            let elsewhere = belongs_elsewhere(cmd, &flag, sub.map_or("check", |s| s.get_name()));
            match (suggested, elsewhere) {
                (Some(s), _) => Some(format!("did you mean `{s}`?")),
                (None, Some(elsewhere)) => Some(elsewhere),
                (None, None) => None,
            }
        }
        ErrorKind::InvalidSubcommand => {
            let typed = context_string(e, ContextKind::InvalidSubcommand).unwrap_or_default();
            let near = nearest_commands(cmd, &typed);
            (!near.is_empty()).then(|| format!("did you mean {}?", listed(&near, "or")))
        }
        _ => clap_tip.filter(|t| !t.starts_with("to pass '")),
    };
    let mut out = format!("gpudoctor: error: {}\n", message.join("\n"));
    if let Some(h) = hint {
        out.push_str(&format!("hint: {h}\n"));
    }
    match usage {
        Some(u) => out.push_str(&format!("usage: {u} (`{here} -h` lists the options)\n")),
        None => out.push_str(&format!("hint: `{here} -h` lists the options\n")),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Command {
        super::super::completions::visible_command()
    }

    #[test]
    fn each_command_keeps_its_own_copy_of_the_global_switches() {
        use clap::FromArgMatches;
        for args in [
            &["gpudoctor", "toolkit", "-vv"][..],
            &["gpudoctor", "-vv", "toolkit"],
            &["gpudoctor", "devices", "-v", "-v"],
        ] {
            let m = tree().try_get_matches_from(args).unwrap();
            let cli = super::super::Cli::from_arg_matches(&m).unwrap();
            assert_eq!(cli.global.verbose, 2, "{args:?}");
        }
        let m = tree()
            .try_get_matches_from(["gpudoctor", "smoke", "-q", "--color", "never"])
            .unwrap();
        let cli = super::super::Cli::from_arg_matches(&m).unwrap();
        assert!(cli.global.quiet);
    }

    #[test]
    fn a_typo_ranks_by_edit_distance() {
        let cmd = tree();
        assert_eq!(nearest_commands(&cmd, "chek"), ["check"]);
        assert_eq!(nearest_commands(&cmd, "devics"), ["devices"]);
        assert_eq!(nearest_commands(&cmd, "smok")[0], "smoke");
        assert!(nearest_commands(&cmd, "frobnicate").is_empty());
    }

    #[test]
    fn an_option_of_another_command_is_named_with_its_commands() {
        let cmd = tree();
        assert_eq!(
            belongs_elsewhere(&cmd, "--nccl", "devices").as_deref(),
            Some("--nccl is an option of `check` and `smoke`, not of `devices`")
        );
        assert_eq!(belongs_elsewhere(&cmd, "--nccl", "smoke"), None);
        assert_eq!(belongs_elsewhere(&cmd, "--no-such", "devices"), None);
    }
}
