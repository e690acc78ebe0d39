//! The command line as clap parses it: subcommands, global flags and their value enums.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

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
