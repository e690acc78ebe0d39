//! `gpudoctor completions SHELL`: the shell completion script, generated from the clap
//! definitions (the copies in completions/ are checked against it).

use std::fmt::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use super::args::Cli;
use super::settings::Settings;
use super::{emit_report, CliError};

pub(super) fn completions(g: &Settings, shell: Shell) -> Result<u8, CliError> {
    emit_report(g, script(shell).as_bytes())
}

/// The command as users see it: the hidden worker subcommands are left out entirely, so
/// no shell offers them (zsh and fish list hidden subcommands otherwise).
pub fn visible_command() -> clap::Command {
    let full = Cli::command();
    let mut cmd = clap::Command::new("gpudoctor")
        .version(full.get_version().unwrap_or_default().to_string())
        .about(full.get_about().cloned().unwrap_or_default())
        .long_about(full.get_long_about().cloned().unwrap_or_default())
        .after_long_help(full.get_after_long_help().cloned().unwrap_or_default());
    for a in full.get_arguments() {
        cmd = cmd.arg(a.clone());
    }
    for s in full.get_subcommands().filter(|s| !s.is_hide_set()) {
        cmd = cmd.subcommand(s.clone());
    }
    super::usage::shape(cmd)
}

/// The script for `shell`.
pub fn script(shell: Shell) -> String {
    let mut cmd = visible_command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "gpudoctor", &mut buf);
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    if shell == Shell::Fish {
        text.push_str(&fish_positionals(&cmd));
    }
    text
}

/// fish's generator completes only options' values: the positional arguments with known
/// values (`explain CODE`, `completions SHELL`) get their own lines.
fn fish_positionals(cmd: &clap::Command) -> String {
    let mut out = String::new();
    for sub in cmd.get_subcommands() {
        for arg in sub.get_positionals() {
            let values = arg.get_possible_values();
            if values.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "complete -c gpudoctor -n \"__fish_gpudoctor_using_subcommand {}\" -f -a \"{}\"",
                sub.get_name(),
                values
                    .iter()
                    .map(|v| match v.get_help() {
                        Some(h) => format!("{}\\t'{}'", v.get_name(), fish_quote(&h.to_string())),
                        None => v.get_name().to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
    out
}

/// Text inside fish's single quotes (itself inside double quotes).
fn fish_quote(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\'', "\\'")
        .replace('"', "\\\"")
        .replace('$', "\\$")
}
