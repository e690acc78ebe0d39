//! Command line: parsing, dispatch, output and exit codes (0 healthy, 1 findings at
//! or above --fail-on, 2 usage or internal error).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

use crate::codes;
use crate::envvars::{self, Env};
use crate::findings::Severity;
use crate::probes::{self, ProbeOptions, PROBE_NAMES};
use crate::render::{self, Style};
use crate::report::{Report, SCHEMA_VERSION};
use crate::rules::{self, View};
use crate::snapshot::Snapshot;

const EXAMPLES: &str = "Examples:
  gpudoctor                                  same as `gpudoctor check`
  gpudoctor check --json > report.json       machine-readable report for CI
  gpudoctor check --fail-on warning          exit 1 on warnings too
  gpudoctor check --format markdown >> \"$GITHUB_STEP_SUMMARY\"
  gpudoctor check --format junit > gpudoctor-junit.xml   one testcase per check for CI test reports
  gpudoctor check --format prometheus > gpudoctor.prom   node_exporter textfile-collector metrics
  gpudoctor check --root /mnt/image          inspect a container image or chroot (nothing in it is run)
  sudo gpudoctor check --user alice          judge device access for another account
  gpudoctor check --from report.json         re-run the rules on a saved report
  gpudoctor check --only device_nodes,GD012  run one probe, report one code
  gpudoctor smoke                            prove every GPU computes (matmul, memory, transfers)
  srun gpudoctor check --json --output out/{host}.json; gpudoctor fleet out/
                                             one report per node, then the fleet's outliers
  gpudoctor explain GD006                    what a finding means and how to fix it
  gpudoctor schema > report.schema.json      the JSON Schema of `check --format json`
  gpudoctor completions bash > ~/.local/share/bash-completion/completions/gpudoctor

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 usage or internal error.";

#[derive(Debug, Parser)]
#[command(
    name = "gpudoctor",
    version,
    about = "Doctor and device inspector for NVIDIA GPU / CUDA / PyTorch environments",
    long_about = "Doctor and device inspector for NVIDIA GPU / CUDA / PyTorch environments.\n\nProbes the kernel module, device nodes, PCI bindings, NVML, CUDA toolkits and libraries, PyTorch and the environment, then reports every problem with the command that fixes it. When a GPU is present, check also runs a short on-device smoke test (matmul, memory, transfers; --no-smoke skips it). It loads no module, changes no setting and runs or loads nothing from an inspected --root.",
    after_long_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub global: GlobalOpts,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run every probe and rule and print the report (the default)
    Check,
    /// Explain a finding code (GD012, gd012 or 12), or list every code
    Explain {
        /// The code to explain
        #[arg(required_unless_present = "list")]
        code: Option<String>,
        /// List every code with its one-line title
        #[arg(long)]
        list: bool,
    },
    /// Show every CUDA toolkit, which one nvcc / CUDA_HOME / the loader picks, and the CUDA libraries in the loader's order
    Toolkit,
    /// The GPUs as NVML sees them: a table, or everything about GPU N / all (--detail)
    Devices {
        /// Show everything about this GPU (NVML index)
        index: Option<u32>,
        /// Show everything about every GPU
        #[arg(long)]
        detail: bool,
    },
    /// Prove the GPUs compute: FP32 matmul checked against the CPU, a memory-allocation probe, transfer bandwidth
    Smoke {
        /// Only this GPU (CUDA's ordinal, after CUDA_VISIBLE_DEVICES); default: every visible GPU at once
        #[arg(long, value_name = "N")]
        device: Option<u32>,
    },
    /// Aggregate node reports (`check --format json`): the fleet's shape, outlier nodes, findings by code across nodes
    Fleet {
        /// Report files, directories (searched for *.json) or `-` for newline-delimited JSON on stdin
        #[arg(required = true, value_name = "REPORTS")]
        reports: Vec<PathBuf>,
    },
    /// Print the JSON Schema of the report `check --format json` prints
    Schema,
    /// Internal: load NVML in this child process and print its facts as JSON
    #[command(name = "__nvml-worker", hide = true)]
    NvmlWorker {
        #[arg(long)]
        lib: String,
    },
    /// Internal: run the smoke test in this child process and stream its results as JSON lines
    #[command(name = "__smoke-worker", hide = true)]
    SmokeWorker {
        #[arg(long)]
        lib: String,
        #[arg(long)]
        device: Option<u32>,
        #[arg(long)]
        matmul_size: u32,
        #[arg(long)]
        mem_fraction: f64,
        #[arg(long)]
        transfer_bytes: u64,
        #[arg(long)]
        shared_gpu: Vec<String>,
    },
    /// Print the shell completion script for SHELL
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The report for a terminal
    Human,
    /// The JSON report (a stable contract)
    Json,
    /// The report as Markdown, for an issue or a CI step summary
    Markdown,
    /// JUnit XML, one testcase per check (check only)
    Junit,
    /// Prometheus text format for the node_exporter textfile collector (check only)
    Prometheus,
}

impl Format {
    /// --json wins (clap refuses it together with --format).
    fn of(g: &GlobalOpts) -> Format {
        if g.json {
            Format::Json
        } else {
            g.format
        }
    }
}

/// What `toolkit`, `devices` and `smoke` print. JUnit and Prometheus describe a whole check:
/// for these subcommands they would report a handful of rules as if they were the node's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ViewFormat {
    Human,
    Json,
    Markdown,
}

impl ViewFormat {
    fn of(g: &GlobalOpts, command: &str) -> Result<ViewFormat, CliError> {
        match Format::of(g) {
            Format::Human => Ok(ViewFormat::Human),
            Format::Json => Ok(ViewFormat::Json),
            Format::Markdown => Ok(ViewFormat::Markdown),
            f @ (Format::Junit | Format::Prometheus) => {
                let name = f
                    .to_possible_value()
                    .map(|v| v.get_name().to_string())
                    .unwrap_or_default();
                Err(CliError::Usage(format!(
                    "--format {name} reports a whole check: use `gpudoctor check --format {name}` (`gpudoctor {command}` prints human, json or markdown)"
                )))
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Never,
}

#[derive(Debug, Args)]
pub struct GlobalOpts {
    /// Output format
    #[arg(long, global = true, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Shorthand for --format json
    #[arg(long, global = true, conflicts_with = "format")]
    pub json: bool,
    /// Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out
    #[arg(long, global = true, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Exit 1 when a finding at or above this severity exists
    #[arg(long, global = true, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Also show passing checks, every fact's source, and all registered variables
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Run only these probes and/or report only these codes (comma-separated)
    #[arg(long, global = true, value_delimiter = ',', value_name = "NAMES")]
    pub only: Vec<String>,
    /// Skip these probes and/or codes (comma-separated)
    #[arg(long, global = true, value_delimiter = ',', value_name = "NAMES")]
    pub skip: Vec<String>,
    /// Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing
    #[arg(long, global = true, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Judge device-node access for this user (name or uid) instead of the caller
    #[arg(long, global = true, value_name = "USER")]
    pub user: Option<String>,
    /// Load NVML from this file instead of the loader's libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root
    #[arg(long, global = true, value_name = "PATH")]
    pub nvml_lib: Option<PathBuf>,
    /// The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s
    #[arg(long, global = true)]
    pub python_import: bool,
    /// Load libcuda from this file instead of the loader's libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root
    #[arg(long, global = true, value_name = "PATH")]
    pub cuda_lib: Option<PathBuf>,
    /// `check` without the on-device smoke test
    #[arg(long, global = true)]
    pub no_smoke: bool,
    /// A quick static check: no smoke test (same as --no-smoke)
    #[arg(long, global = true)]
    pub quick: bool,
    /// Also write the report (in --format) to PATH, `{host}` replaced by the node's name; stdout gets the human report
    #[arg(long, global = true, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Smoke test: N of the N×N FP32 matmul (16–8192)
    #[arg(long, global = true, value_name = "N", default_value_t = 1024)]
    pub matmul_size: u32,
    /// Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)
    #[arg(long, global = true, value_name = "F", default_value_t = 0.9)]
    pub mem_fraction: f64,
    /// Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)
    #[arg(long, global = true, value_name = "MIB", default_value_t = 256)]
    pub transfer_size: u64,
}

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
        Command::Check => check(g),
        Command::Toolkit => toolkit(g),
        Command::Devices { index, detail } => devices(g, index, detail),
        Command::Smoke { device } => smoke(g, device),
        Command::Fleet { reports } => fleet(g, &reports),
        Command::SmokeWorker {
            lib,
            device,
            matmul_size,
            mem_fraction,
            transfer_bytes,
            shared_gpu,
        } => crate::smoke::worker::main(crate::smoke::worker::WorkerArgs {
            lib,
            settings: probes::smoke::SmokeSettings {
                matmul_size,
                mem_fraction,
                transfer_bytes,
                device,
            },
            shared_gpus: shared_gpu,
        })
        .map(|_| 0)
        .map_err(|e| CliError::Internal(format!("smoke worker: {e}"))),
        Command::NvmlWorker { lib } => crate::nvml_worker::main(&lib)
            .map(|_| 0)
            .map_err(|e| CliError::Internal(format!("NVML worker: writing the answer: {e}"))),
        Command::Explain { code, list } => explain(code.as_deref(), list),
        Command::Schema => emit(crate::report::json_schema().as_bytes()),
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "gpudoctor", &mut buf);
            emit(&buf)
        }
    }
}

/// Writes to stdout; a closed pipe (`gpudoctor check | head -1`) ends quietly.
fn emit(bytes: &[u8]) -> Result<u8, CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(0),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(CliError::Internal(format!("writing to stdout: {e}"))),
    }
}

fn explain(code: Option<&str>, list: bool) -> Result<u8, CliError> {
    if list {
        let mut s = String::new();
        for c in codes::CODES {
            s.push_str(&format!("{}  {}\n", c.code, c.title));
        }
        return emit(s.as_bytes());
    }
    let code = code.unwrap_or_default();
    match codes::lookup(code) {
        Some(info) => emit(info.explanation.as_bytes()),
        None => Err(CliError::Usage(format!(
            "unknown finding code {code:?}; `gpudoctor explain --list` lists them all"
        ))),
    }
}

/// What --only/--skip select, split into probe names and codes.
struct Selection {
    probes: Vec<&'static str>,
    /// Probe names were given (saved reports cannot honour them).
    names_probes: bool,
    only_codes: Vec<String>,
    skip_codes: Vec<String>,
}

fn selection(g: &GlobalOpts) -> Result<Selection, CliError> {
    let classify = |names: &[String]| -> Result<(Vec<&'static str>, Vec<String>), CliError> {
        let mut probes = Vec::new();
        let mut codes_ = Vec::new();
        for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            if let Some(p) = PROBE_NAMES.iter().find(|p| p.eq_ignore_ascii_case(n)) {
                probes.push(*p);
            } else if let Some(c) = codes::lookup(n) {
                codes_.push(c.code.to_string());
            } else {
                return Err(CliError::Usage(format!(
                    "{n:?} is neither a probe ({}) nor a finding code (see `gpudoctor explain --list`)",
                    PROBE_NAMES.join(", ")
                )));
            }
        }
        Ok((probes, codes_))
    };
    let (only_probes, only_codes) = classify(&g.only)?;
    let (skip_probes, skip_codes) = classify(&g.skip)?;
    let mut probes: Vec<&'static str> = PROBE_NAMES
        .iter()
        .copied()
        .filter(|p| only_probes.is_empty() || only_probes.contains(p))
        .filter(|p| !skip_probes.contains(p))
        .collect();
    // Device-node access is judged for a user: the device_nodes probe needs identity.
    if probes.contains(&"device_nodes") && !probes.contains(&"identity") {
        probes.insert(0, "identity");
    }
    Ok(Selection {
        probes,
        names_probes: !only_probes.is_empty() || !skip_probes.is_empty(),
        only_codes,
        skip_codes,
    })
}

/// Probes the toolkit view needs: the driver version, GPU names, WSL, and the toolkits.
const TOOLKIT_PROBES: &[&str] = &[
    "platform",
    "kernel_module",
    "environment",
    "toolkits",
    "libraries",
];

/// A focused subcommand: only `probes` run, only the codes of `view`'s rules are judged
/// (both still narrowed by --only/--skip).
fn focused(
    g: &GlobalOpts,
    probes: &[&str],
    view: View,
) -> Result<(Snapshot, Vec<crate::findings::Finding>), CliError> {
    focused_with(g, probes, view, None)
}

/// `focused`, with `smoke_cmd` for the smoke subcommand (Some(--device)).
fn focused_with(
    g: &GlobalOpts,
    probes: &[&str],
    view: View,
    smoke_cmd: Option<Option<u32>>,
) -> Result<(Snapshot, Vec<crate::findings::Finding>), CliError> {
    let sel = selection(g)?;
    let env = Env::from_process();
    let wanted: Vec<&'static str> = sel
        .probes
        .iter()
        .copied()
        .filter(|p| probes.contains(p))
        .collect();
    if smoke_cmd.is_some() && !wanted.contains(&"smoke") {
        return Err(CliError::Usage(
            "`gpudoctor smoke` with the smoke probe skipped has nothing to do".into(),
        ));
    }
    let snapshot = gather(g, &sel, &wanted, &env, smoke_cmd)?;
    let codes = view.codes();
    let wants = |code: &str| codes.contains(&code) && sel.wants(code);
    let (_, findings) = rules::evaluate(&snapshot, &wants);
    Ok((snapshot, findings))
}

fn toolkit(g: &GlobalOpts) -> Result<u8, CliError> {
    let format = ViewFormat::of(g, "toolkit")?;
    let (snapshot, findings) = focused(g, TOOLKIT_PROBES, View::Toolkit)?;
    let view = render::toolkit::view(&snapshot, &findings);
    let text = match format {
        ViewFormat::Json => render::toolkit::render_json(&view),
        ViewFormat::Markdown => render::toolkit::render_markdown(&view),
        ViewFormat::Human => render::toolkit::render_human(&view, &Style::for_stdout(), g.verbose),
    };
    emit(text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}

/// Probes the devices view needs: the driver, device nodes (and whose access), NVML.
const DEVICES_PROBES: &[&str] = &[
    "identity",
    "platform",
    "kernel_module",
    "pci",
    "device_nodes",
    "environment",
    "libraries",
    "nvml",
];

fn devices(g: &GlobalOpts, index: Option<u32>, detail: bool) -> Result<u8, CliError> {
    let format = ViewFormat::of(g, "devices")?;
    let (snapshot, findings) = focused(g, DEVICES_PROBES, View::Devices)?;
    if let (Some(i), Some(sys)) = (index, snapshot.nvml_system()) {
        if !sys.devices.iter().any(|d| d.index == i) {
            return Err(CliError::Usage(format!(
                "there is no GPU {i}: NVML reports {} GPU(s)",
                sys.devices.len()
            )));
        }
    }
    let view = render::devices::view(&snapshot, &findings, index);
    let text = match format {
        ViewFormat::Json => render::devices::render_json(&view),
        ViewFormat::Markdown => format!(
            "# gpudoctor devices\n\n```text\n{}```\n",
            render::devices::render_human(&view, &Style::plain(), detail || index.is_some())
        ),
        ViewFormat::Human => {
            render::devices::render_human(&view, &Style::for_stdout(), detail || index.is_some())
        }
    };
    emit(text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}

/// Probes the smoke test needs: the driver and devices (for its judgement), NVML (link
/// widths, other processes), the libraries (forward-compat libcuda) and the test itself.
const SMOKE_PROBES: &[&str] = &[
    "platform",
    "kernel_module",
    "pci",
    "device_nodes",
    "environment",
    "libraries",
    "nvml",
    "smoke",
];

fn smoke(g: &GlobalOpts, device: Option<u32>) -> Result<u8, CliError> {
    let format = ViewFormat::of(g, "smoke")?;
    if g.from.is_some() {
        return Err(CliError::Usage(
            "`gpudoctor smoke` runs on the GPUs now; replay a saved report with `gpudoctor check --from`".into(),
        ));
    }
    let (snapshot, findings) = focused_with(g, SMOKE_PROBES, View::Smoke, Some(device))?;
    // A --device CUDA does not have is a typo, not a broken GPU (no GPU at all is GD053's).
    let count = snapshot
        .smoke
        .as_ref()
        .and_then(|p| p.run())
        .and_then(|r| r.device_count);
    if let (Some(d), Some(n)) = (
        device,
        count.filter(|n| (1..=crate::smoke::MAX_DEVICES).contains(n)),
    ) {
        if d >= n as u32 {
            return Err(CliError::Usage(format!(
                "--device {d}: CUDA sees {n} GPU(s), ordinals 0–{} (counted after CUDA_VISIBLE_DEVICES)",
                n - 1
            )));
        }
    }
    let view = render::smoke::view(&snapshot, &findings);
    let text = match format {
        ViewFormat::Json => render::smoke::render_json(&view),
        ViewFormat::Markdown => render::smoke::render_markdown(&view),
        ViewFormat::Human => render::smoke::render_human(&view, &Style::for_stdout()),
    };
    emit(text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}

fn exit_code(g: &GlobalOpts, worst: Option<Severity>) -> u8 {
    let threshold = match g.fail_on {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Never => None,
    };
    u8::from(matches!((threshold, worst), (Some(t), Some(w)) if w >= t))
}

impl Selection {
    fn wants(&self, code: &str) -> bool {
        (self.only_codes.is_empty() || self.only_codes.iter().any(|c| c == code))
            && !self.skip_codes.iter().any(|c| c == code)
    }
}

fn check(g: &GlobalOpts) -> Result<u8, CliError> {
    // A bad --output is a usage error before any probing (the smoke test takes seconds).
    if let Some(path) = &g.output {
        let text = path.to_string_lossy();
        if text.ends_with('/') || (!text.contains("{host}") && path.is_dir()) {
            return Err(CliError::Usage(format!(
                "--output {}: a directory; name the file, e.g. {}/{{host}}.json",
                path.display(),
                text.trim_end_matches('/')
            )));
        }
    }
    let sel = selection(g)?;
    let env = Env::from_process();
    let snapshot = gather(g, &sel, &sel.probes, &env, None)?;
    let wants = |code: &str| sel.wants(code);
    let (checks, findings) = rules::evaluate(&snapshot, &wants);
    let report = Report::new(snapshot, checks, findings);

    let format = Format::of(g);
    let human = |style: Style| {
        render::human::render(
            &report,
            &render::human::Options {
                verbose: g.verbose,
                style,
                width: terminal_width(&env),
            },
        )
    };
    let render_as = |format: Format, style: Style| match format {
        Format::Json => render::json::render(&report),
        Format::Markdown => render::markdown::render(&report, g.verbose),
        Format::Junit => render::junit::render(&report),
        Format::Prometheus => render::prometheus::render(&report),
        Format::Human => human(style),
    };
    match &g.output {
        // The file gets the chosen format; the terminal (or the job log) the human report,
        // which reaches it even when the file cannot be written.
        Some(path) => {
            emit(human(Style::for_stdout()).as_bytes())?;
            let written = write_output(path, &report, &render_as(format, Style::plain()))?;
            eprintln!("gpudoctor: report written to {}", written.display());
        }
        None => {
            emit(render_as(format, Style::for_stdout()).as_bytes())?;
        }
    }
    Ok(exit_code(g, report.worst()))
}

/// Writes `text` to `path` with `{host}` replaced by the node's name (safe as a file
/// name), creating the directory, atomically: a shared filesystem never shows a half
/// report to `gpudoctor fleet`.
fn write_output(path: &Path, report: &Report, text: &str) -> Result<PathBuf, CliError> {
    let host = report
        .snapshot
        .node
        .as_ref()
        .map(|n| crate::probes::node::file_name(&n.name))
        .unwrap_or_else(|| "unknown".into());
    let expanded = PathBuf::from(path.to_string_lossy().replace("{host}", &host));
    write_file(&expanded, &host, text, 0)?;
    Ok(expanded)
}

/// Links followed before giving up (a loop of links never ends).
const OUTPUT_LINK_HOPS: u32 = 16;

fn write_file(path: &Path, host: &str, text: &str, hops: u32) -> Result<(), CliError> {
    use std::io::Write as _;
    let fail = |what: &str, e: std::io::Error| {
        CliError::Usage(format!("--output {}: {what}: {e}", path.display()))
    };
    // A link is written through, as the shell's `>` would: its target is replaced (and
    // created when the link dangles), never the link. A device, FIFO or socket
    // (/dev/null, /dev/stdout) is written to, never renamed over.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            if hops >= OUTPUT_LINK_HOPS {
                return Err(CliError::Usage(format!(
                    "--output {}: too many levels of symbolic links",
                    path.display()
                )));
            }
            let target = std::fs::read_link(path).map_err(|e| fail("reading the link", e))?;
            let target = match path.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            return write_file(&target, host, text, hops + 1);
        } else if meta.is_dir() {
            return Err(CliError::Usage(format!(
                "--output {}: a directory; name the file, e.g. {}/{{host}}.json",
                path.display(),
                path.display()
            )));
        } else if !meta.is_file() {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| fail("opening", e))?;
            f.write_all(text.as_bytes())
                .map_err(|e| fail("writing", e))?;
            return Ok(());
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| fail("creating its directory", e))?;
    }
    let name = path
        .file_name()
        .ok_or_else(|| CliError::Usage(format!("--output {}: not a file name", path.display())))?;
    // Host and pid: containers on a shared filesystem can share pids.
    let tmp = path.with_file_name(format!(
        ".{}.tmp.{host}.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    // On the disk before the rename: after a crash the name holds the old report or the
    // whole new one. A failed write leaves no temp file behind.
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .map_err(|e| fail("writing", e))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| fail("renaming into place", e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn fleet(g: &GlobalOpts, reports: &[PathBuf]) -> Result<u8, CliError> {
    // (`run` refuses --output outside `check`.)
    if g.root.is_some() || g.from.is_some() {
        return Err(CliError::Usage(
            "`gpudoctor fleet` reads saved reports: --root and --from do not apply".into(),
        ));
    }
    let format = ViewFormat::of(g, "fleet")?;
    // Codes in --only/--skip narrow what each node's findings count; probes ran long ago.
    let sel = selection(g)?;
    if sel.names_probes {
        return Err(CliError::Usage(
            "`gpudoctor fleet` reads saved reports: probe names in --only/--skip do not apply (codes do)".into(),
        ));
    }
    let (mut nodes, problems) = crate::fleet::load(reports);
    for n in &mut nodes {
        n.findings.retain(|f| sel.wants(&f.code));
    }
    let has_problems = !problems.is_empty();
    let fleet = crate::fleet::aggregate::aggregate(&nodes, problems);
    let text = match format {
        ViewFormat::Json => render::fleet::render_json(&fleet),
        ViewFormat::Markdown => render::fleet::render_markdown(&fleet),
        ViewFormat::Human => render::fleet::render_human(&fleet, &Style::for_stdout()),
    };
    emit(text.as_bytes())?;
    // A report that could not be read is a node whose state is unknown, and no report at
    // all is no evidence of health. (Duplicates are listed but counted once: no failure.)
    let code = exit_code(g, fleet.worst());
    let unusable = has_problems || fleet.nodes.is_empty();
    Ok(if unusable && g.fail_on != FailOn::Never {
        1
    } else {
        code
    })
}

/// The snapshot to judge: replayed from --from, or probed now (under --root if given).
fn gather(
    g: &GlobalOpts,
    sel: &Selection,
    probes_wanted: &[&'static str],
    env: &Env,
    smoke_cmd: Option<Option<u32>>,
) -> Result<Snapshot, CliError> {
    // Importing torch (--python-import) takes seconds: its default budget is longer.
    let timeout = g
        .timeout
        .unwrap_or(if g.python_import { 60.0 } else { 5.0 });
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= MAX_TIMEOUT_SECS) {
        return Err(CliError::Usage(format!(
            "--timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT_SECS}, not {timeout}"
        )));
    }
    let snapshot = match &g.from {
        Some(path) => {
            let probing = g.root.is_some()
                || g.user.is_some()
                || g.nvml_lib.is_some()
                || g.python.is_some()
                || g.python_import
                || g.cuda_lib.is_some()
                || sel.names_probes;
            if probing {
                return Err(CliError::Usage(
                    "--from replays a saved snapshot: --root, --user, --nvml-lib and probe names in --only/--skip do not apply (codes do)".into(),
                ));
            }
            load_snapshot(path)?
        }
        None => {
            if let Some(root) = &g.root {
                if !root.is_dir() {
                    return Err(CliError::Usage(format!(
                        "--root {}: not a directory",
                        root.display()
                    )));
                }
            }
            let opts = ProbeOptions {
                root: g
                    .root
                    .as_ref()
                    .map(|r| std::path::absolute(r).unwrap_or_else(|_| r.clone())),
                user: g.user.clone(),
                // Importing torch takes seconds; the live probe needs room.
                timeout: Duration::from_secs_f64(timeout),
                enabled: probes_wanted.to_vec(),
                // The flag wins; the variable (when set and not empty) stands in for it.
                nvml_lib: g.nvml_lib.clone().or_else(|| {
                    env.get_str(envvars::GPUDOCTOR_NVML_LIB)
                        .filter(|v| !v.is_empty())
                        .map(PathBuf::from)
                }),
                python: g.python.clone(),
                python_import: g.python_import,
                smoke: smoke_mode(g, env, smoke_cmd)?,
            };
            probes::collect(&opts, env).map_err(|e| CliError::Usage(e.to_string()))?
        }
    };
    Ok(snapshot)
}

/// The smoke test's settings from the command line, validated.
fn smoke_mode(
    g: &GlobalOpts,
    env: &Env,
    smoke_cmd: Option<Option<u32>>,
) -> Result<probes::SmokeMode, CliError> {
    if smoke_cmd.is_none() && (g.no_smoke || g.quick) {
        let flag = if g.quick { "--quick" } else { "--no-smoke" };
        return Ok(probes::SmokeMode::Off(format!("skipped ({flag})")));
    }
    if !(16..=8192).contains(&g.matmul_size) {
        return Err(CliError::Usage(format!(
            "--matmul-size must be between 16 and 8192, not {}",
            g.matmul_size
        )));
    }
    if !(g.mem_fraction.is_finite() && (0.01..=0.95).contains(&g.mem_fraction)) {
        return Err(CliError::Usage(format!(
            "--mem-fraction must be between 0.01 and 0.95, not {}",
            g.mem_fraction
        )));
    }
    if !(1..=4096).contains(&g.transfer_size) {
        return Err(CliError::Usage(format!(
            "--transfer-size must be between 1 and 4096 MiB, not {}",
            g.transfer_size
        )));
    }
    let format = Format::of(g);
    Ok(probes::SmokeMode::On(probes::SmokeOptions {
        lib: g.cuda_lib.clone().or_else(|| {
            env.get_str(envvars::GPUDOCTOR_CUDA_LIB)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        }),
        settings: probes::smoke::SmokeSettings {
            matmul_size: g.matmul_size,
            mem_fraction: g.mem_fraction,
            transfer_bytes: g.transfer_size << 20,
            device: smoke_cmd.flatten(),
        },
        // Context creation on a multi-GPU node without persistence takes seconds: the
        // smoke test's own default budget is longer than the static probes'.
        timeout: Duration::from_secs_f64(g.timeout.unwrap_or(SMOKE_TIMEOUT_SECS)),
        always: smoke_cmd.is_some(),
        progress: format == Format::Human && probes::smoke::stderr_is_terminal(),
    }))
}

/// The smoke test's deadline when --timeout is not given.
const SMOKE_TIMEOUT_SECS: f64 = 30.0;

/// A day: longer budgets are typos, and they must not overflow a deadline.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Largest report or snapshot accepted by --from: the size `fleet` accepts.
const FROM_LIMIT: u64 = crate::fleet::REPORT_LIMIT;

fn load_snapshot(path: &Path) -> Result<Snapshot, CliError> {
    // The user named this file: pipes and process substitutions are fine here.
    let read = if path == Path::new("-") {
        crate::fsys::read_stream_limited(io::stdin().lock(), FROM_LIMIT, 0)
    } else {
        std::fs::File::open(path).and_then(|f| {
            let size = f.metadata().map_or(0, |m| m.len());
            crate::fsys::read_stream_limited(f, FROM_LIMIT, size)
        })
    };
    let bytes = read
        .map_err(|e| CliError::Usage(format!("--from {}: {e}", path.display())))?
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--from {}: larger than {} MiB",
                path.display(),
                FROM_LIMIT >> 20
            ))
        })?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| CliError::Usage(format!("--from {}: not JSON: {e}", path.display())))?;
    let snapshot_value = match value.get("snapshot") {
        Some(s) => {
            let version = value.get("schema_version").and_then(|v| v.as_u64());
            if version != Some(SCHEMA_VERSION as u64) {
                return Err(CliError::Usage(format!(
                    "--from {}: schema_version {} is not supported (this gpudoctor reads {SCHEMA_VERSION})",
                    path.display(),
                    version.map(|v| v.to_string()).unwrap_or_else(|| "missing".into())
                )));
            }
            s.clone()
        }
        // A bare snapshot (the report's "snapshot" object) always records its probes.
        None if value.get("probes").is_some_and(|p| p.is_object()) => value,
        None => {
            return Err(CliError::Usage(format!(
                "--from {}: not a gpudoctor report (no \"snapshot\") or snapshot (no \"probes\")",
                path.display()
            )))
        }
    };
    serde_json::from_value(snapshot_value).map_err(|e| {
        CliError::Usage(format!(
            "--from {}: not a gpudoctor report or snapshot: {e}",
            path.display()
        ))
    })
}

fn terminal_width(env: &Env) -> usize {
    // SAFETY: TIOCGWINSZ fills a winsize struct for a terminal fd and fails otherwise.
    let tty = unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        (libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) == 0 && ws.ws_col > 0)
            .then_some(ws.ws_col as usize)
    };
    tty.or_else(|| {
        env.get_str(envvars::COLUMNS)
            .and_then(|c| c.trim().parse().ok())
    })
    .unwrap_or(100)
    .clamp(60, 120)
}
