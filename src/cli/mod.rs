//! Command line: parsing, dispatch, output and exit codes (0 healthy, 1 findings at
//! or above --fail-on, 2 usage or internal error).
//!
//! `args` is what clap parses, `options` what is checked beyond it, `gather` the
//! snapshot a command judges; each subcommand has its own file.

mod args;
mod check;
mod completions;
mod devices;
mod explain;
mod fleet;
mod gather;
mod options;
mod schema;
mod smoke;
mod toolkit;
mod workers;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

pub use args::{Cli, ColorChoice, Command, FailOn, Format, GlobalOpts};

use crate::probes;

/// A failure that ends the run with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Internal(String),
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = std::panic::catch_unwind(|| run(cli));
    match result {
        Ok(Ok(code)) => ExitCode::from(code),
        Ok(Err(CliError::Usage(m))) => {
            eprintln!("gpudoctor: error: {m}");
            ExitCode::from(2)
        }
        Ok(Err(CliError::Internal(m))) => {
            eprintln!("gpudoctor: internal error: {m}");
            ExitCode::from(2)
        }
        Err(_) => {
            eprintln!("gpudoctor: internal error (a bug): please report it with the message above");
            ExitCode::from(2)
        }
    }
}

pub fn run(cli: Cli) -> Result<u8, CliError> {
    let g = &cli.global;
    match g.color {
        ColorChoice::Always => owo_colors::set_override(true),
        ColorChoice::Never => owo_colors::set_override(false),
        ColorChoice::Auto => {}
    }
    let command = cli.command.unwrap_or(Command::Check);
    if g.output.is_some() && !matches!(command, Command::Check) {
        return Err(CliError::Usage(
            "--output writes the report of `gpudoctor check` (what `gpudoctor fleet` reads); other subcommands print to stdout".into(),
        ));
    }
    match command {
        Command::Check => check::check(g),
        Command::Toolkit => toolkit::toolkit(g),
        Command::Devices { index, detail } => devices::devices(g, index, detail),
        Command::Smoke { device } => smoke::smoke(g, device),
        Command::Fleet { reports } => fleet::fleet(g, &reports),
        Command::SmokeWorker {
            lib,
            device,
            matmul_size,
            mem_fraction,
            transfer_bytes,
            shared_gpu,
        } => workers::smoke_worker(
            lib,
            probes::smoke::SmokeSettings {
                matmul_size,
                mem_fraction,
                transfer_bytes,
                device,
                requested: false,
            },
            shared_gpu,
        ),
        Command::NvmlWorker { lib } => workers::nvml_worker(&lib),
        Command::Explain { code, list } => explain::explain(code.as_deref(), list),
        Command::Schema => schema::schema(),
        Command::Completions { shell } => completions::completions(shell),
    }
}

/// Writes to stdout; a closed pipe (`gpudoctor check | head -1`) ends quietly.
pub(super) fn emit(bytes: &[u8]) -> Result<u8, CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(0),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(CliError::Internal(format!("writing to stdout: {e}"))),
    }
}
