//! `gpudoctor completions SHELL`: the shell completion script, generated from the clap
//! definitions (the copies in completions/ are checked against it).

use clap::CommandFactory;
use clap_complete::Shell;

use super::args::Cli;
use super::settings::Settings;
use super::{emit_report, CliError};

pub(super) fn completions(g: &Settings, shell: Shell) -> Result<u8, CliError> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "gpudoctor", &mut buf);
    emit_report(g, &buf)
}
