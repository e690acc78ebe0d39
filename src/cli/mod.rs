//! Command line: parsing, dispatch, output and exit codes (0 healthy, 1 findings at
//! or above --fail-on, 2 usage or internal error).
//!
//! `args` is what clap parses, `options` what is checked beyond it, `gather` the
//! snapshot a command judges; each subcommand has its own file.

mod args;
mod bundle;
mod check;
mod completions;
pub(crate) mod config;
mod config_cmd;
mod devices;
mod diff;
mod explain;
mod fleet;
mod gather;
mod libs;
mod man;
pub(crate) mod mcp;
mod options;
mod recommend;
mod schema;
mod settings;
mod smoke;
mod toolkit;
mod usage;
mod workers;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

pub use args::{Cli, ColorChoice, Command, FailOn, Format, GlobalOpts};
pub use completions::visible_command;
pub use settings::Settings;

use crate::envvars::{self, Env};

/// A failure that ends the run with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Internal(String),
}

pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The hidden workers are parsed only when asked for by name, so that no suggestion for
    // a mistyped subcommand names them.
    let worker = args
        .get(1)
        .is_some_and(|a| a.to_string_lossy().starts_with("__"));
    let command = if worker {
        Cli::command()
    } else {
        completions::visible_command()
    };
    let env = Env::from_process();
    // Help and usage errors wrap and colour as reports do.
    let command = command
        .term_width(crate::render::width::terminal_width(
            env.get_str(envvars::COLUMNS).as_deref(),
        ))
        .color(clap_color(&args));
    let mut command = command;
    let parsed = command
        .try_get_matches_from_mut(&args)
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (m, cli)));
    let (matches, cli) = match parsed {
        Ok(p) => p,
        // Help and the version go to stdout as clap writes them.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprint!("{}", usage::render_error(&e, &command, &args));
            return ExitCode::from(2);
        }
    };
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&matches, cli, &env)));
    match result {
        Ok(Ok(code)) => ExitCode::from(code),
        // Messages quote paths and names from the machine: shown escaped, line by line.
        Ok(Err(CliError::Usage(m))) => {
            eprintln!("gpudoctor: error: {}", printable_lines(&m));
            ExitCode::from(2)
        }
        Ok(Err(CliError::Internal(m))) => {
            eprintln!("gpudoctor: internal error: {}", printable_lines(&m));
            ExitCode::from(2)
        }
        Err(_) => {
            eprintln!("gpudoctor: internal error (a bug): please report it with the message above");
            ExitCode::from(2)
        }
    }
}

fn printable_lines(m: &str) -> String {
    m.split('\n')
        .map(crate::render::printable)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--color` as written on the command line (before parsing), for clap's own help and
/// errors; NO_COLOR, CLICOLOR and the terminal are honoured by clap under `auto`.
fn clap_color(args: &[std::ffi::OsString]) -> clap::ColorChoice {
    let mut choice = clap::ColorChoice::Auto;
    let mut next_is_value = false;
    for a in args.iter().map(|a| a.to_string_lossy()) {
        let value = if next_is_value {
            next_is_value = false;
            Some(a.to_string())
        } else if a == "--color" {
            next_is_value = true;
            None
        } else {
            a.strip_prefix("--color=").map(str::to_string)
        };
        match value.as_deref() {
            Some("never") => choice = clap::ColorChoice::Never,
            Some("always") => choice = clap::ColorChoice::Always,
            Some("auto") => choice = clap::ColorChoice::Auto,
            _ => {}
        }
    }
    choice
}

pub fn run(matches: &clap::ArgMatches, mut cli: Cli, env: &Env) -> Result<u8, CliError> {
    let bare = cli.command.is_none();
    let command = cli
        .command
        .take()
        .unwrap_or_else(|| Command::Check(Box::new(cli.check.clone())));
    // The hidden workers take exactly what their parent passes; nothing is configured.
    let command = match workers::run_if_worker(command) {
        Ok(result) => return result,
        Err(command) => command,
    };
    settings::check_leading_options(matches, &command)?;
    let paths = (!cli.global.no_config).then(|| {
        let named = cli.global.config.clone().or_else(|| {
            env.get_str(envvars::GPUDOCTOR_CONFIG)
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from)
        });
        config::Paths::standard(
            env.get_str(envvars::XDG_CONFIG_HOME).as_deref(),
            env.get_str(envvars::HOME).as_deref(),
            named,
        )
    });
    let g = Settings::resolve(&cli, &command, bare, env, paths.as_ref())?;
    // --color wins over every variable; a configured `always` does not beat the user's own
    // NO_COLOR (https://no-color.org: user-level configuration may override it, files set
    // by a site may not).
    let no_color = env
        .get_str(envvars::NO_COLOR)
        .is_some_and(|v| !v.is_empty());
    crate::render::term::set_color_when(match g.color {
        ColorChoice::Always if no_color && !g.color_from_flag() => {
            crate::render::term::ColorWhen::Auto
        }
        ColorChoice::Always => crate::render::term::ColorWhen::Always,
        ColorChoice::Never => crate::render::term::ColorWhen::Never,
        ColorChoice::Auto => crate::render::term::ColorWhen::Auto,
    });
    match command {
        Command::Check(_) => check::check(&g),
        Command::Toolkit(_) => toolkit::toolkit(&g),
        Command::Libs(a) => libs::libs(&g, a.all),
        Command::Devices(a) => devices::devices(&g, a.gpu.as_deref(), a.detail, a.wide, a.topo),
        Command::Smoke(a) => smoke::smoke(&g, a.device.as_deref()),
        Command::Recommend(a) => recommend::recommend(&g, &a),
        Command::Fleet(a) => fleet::fleet(&g, &a.reports),
        Command::Diff(a) => diff::diff(&g, &a.old, &a.new),
        Command::Explain(a) => explain::explain(&g, a.code.as_deref(), a.list),
        Command::Config(_) => config_cmd::config(&g),
        Command::Schema => schema::schema(&g),
        Command::Mcp => mcp::mcp(&g),
        Command::Bundle(a) => bundle::bundle(&g, &a),
        Command::Completions { shell } => completions::completions(&g, shell),
        Command::Man => man::man(&g),
        Command::NvmlWorker { .. }
        | Command::SmokeWorker { .. }
        | Command::CompatTables
        | Command::Fatbin { .. } => Err(CliError::Internal(
            "a worker subcommand reached the dispatcher".into(),
        )),
    }
}

/// Writes a report to stdout unless --quiet.
pub(super) fn emit_report(g: &Settings, bytes: &[u8]) -> Result<u8, CliError> {
    if g.quiet {
        return Ok(0);
    }
    emit(bytes)
}

/// Writes to stdout as `write` produces it, for output too large to hold whole (a fleet's
/// JSON); a closed pipe ends quietly.
pub(super) fn emit_report_streamed(
    g: &Settings,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<u8, CliError> {
    if g.quiet {
        return Ok(0);
    }
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match write(&mut out).and_then(|_| out.flush()) {
        Ok(()) => Ok(0),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(CliError::Internal(format!("writing to stdout: {e}"))),
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
