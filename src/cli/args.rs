//! The command line as clap parses it: each subcommand takes the options it uses, built
//! from shared groups; only --color, -q, -v and the configuration switches are global.
//!
//! Every value here is optional: what was not given comes from the environment, the
//! configuration files or the default (`settings.rs` merges them and says which).

use std::path::PathBuf;

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser, ValueHint};
use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

/// Each example: the command, then what it does, each line short enough for a 60-column
/// terminal (clap re-wraps longer lines without the indent).
const EXAMPLES: &str = "Examples:
  gpudoctor
      same as `gpudoctor check`
  gpudoctor check --json > report.json
      machine-readable report for CI
  gpudoctor check -q || echo broken
      only the exit code
  gpudoctor check --fail-on warning
      exit 1 on warnings too
  gpudoctor check --format markdown > report.md
      for an issue, or >> \"$GITHUB_STEP_SUMMARY\" in CI
  gpudoctor check --format junit > gpudoctor-junit.xml
      one testcase per check for CI test reports
  gpudoctor check --format prometheus > gpudoctor.prom
      node_exporter textfile-collector metrics
  gpudoctor check --root /mnt/image
      inspect an image or chroot (nothing in it is run)
  sudo gpudoctor check --user alice
      judge device access for another account
  gpudoctor check --from report.json
      re-run the rules on a saved report
  gpudoctor check --baseline good.json
      what changed since the report that worked
  gpudoctor check --fix-script > fix.sh
      the fixes as a script to review, then run
  gpudoctor check --only device_nodes,GD012
      run one probe, report one code
  gpudoctor smoke
      prove every GPU computes (matmul, memory, copies)
  srun gpudoctor check --json --output out/{host}.json
  gpudoctor fleet out/
      one report per node, then the fleet's outliers
  gpudoctor diff old.json new.json
      the facts and findings that differ
  gpudoctor explain GD006
      what a finding means and how to fix it
  gpudoctor config
      the configuration and where each value came from
  gpudoctor completions bash > gpudoctor.bash
      a completion script (also zsh, fish, …)

Configuration: /etc/gpudoctor/config.toml, then $XDG_CONFIG_HOME/gpudoctor/config.toml, then --config FILE (or GPUDOCTOR_CONFIG), then GPUDOCTOR_* variables, then flags.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 usage or internal error.";

#[derive(Debug, Parser)]
#[command(
    name = "gpudoctor",
    version,
    about = "Doctor and device inspector for NVIDIA GPU / CUDA / PyTorch environments",
    long_about = "Doctor and device inspector for NVIDIA GPU / CUDA / PyTorch environments.\n\nProbes the kernel module, device nodes, PCI bindings, NVML, CUDA toolkits and libraries, PyTorch and the environment, then reports every problem with the command that fixes it. When a GPU is present, check also runs a short on-device smoke test (matmul, memory, transfers; --no-smoke skips it). It loads no module, changes no setting and runs or loads nothing from an inspected --root.\n\nWithout a subcommand it runs `check`, and takes check's options: `gpudoctor check --help` lists them.",
    after_long_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `gpudoctor [OPTIONS]` is `gpudoctor check [OPTIONS]`; options before a subcommand
    /// apply to it when it takes them.
    #[command(flatten)]
    pub check: CheckArgs,
    #[command(flatten)]
    pub global: GlobalOpts,
}

/// The switches every subcommand shares.
#[derive(Debug, Clone, Args)]
pub struct GlobalOpts {
    /// Colour: auto (the default), always or never
    ///
    /// auto honours NO_COLOR, CLICOLOR, CLICOLOR_FORCE and whether stdout is a terminal.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        hide_possible_values = true
    )]
    pub color: Option<ColorChoice>,
    /// Print no report: only the exit code says the outcome
    ///
    /// Errors still go to stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// More detail (each command says which in its own help)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Read this configuration file after the system's and the user's (also GPUDOCTOR_CONFIG)
    #[arg(long, global = true, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub config: Option<PathBuf>,
    /// Read no configuration file and no GPUDOCTOR_* policy variable
    #[arg(long, global = true, conflicts_with = "config")]
    pub no_config: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run every probe and rule and print the report (the default)
    Check(Box<CheckArgs>),
    /// Every CUDA toolkit, and which one nvcc and the loader pick
    ///
    /// Also which one CUDA_HOME names, and the CUDA libraries in the loader's order.
    Toolkit(ToolkitArgs),
    /// What the loader binds for each CUDA module, and whether it loads
    ///
    /// Every CUDA-using native module of the Python environments (or the FILEs given, opened in order), as the dynamic loader would bind it.
    Libs(LibsArgs),
    /// The GPUs as NVML sees them, or everything about one of them
    ///
    /// A table; everything about one GPU (by NVML index, UUID or a unique prefix of it, or PCI bus id); or everything about all of them (--detail).
    Devices(DevicesArgs),
    /// Prove the GPUs compute: matmul, memory, transfer bandwidth
    ///
    /// An FP32 matmul checked against the CPU, a memory-allocation probe, host↔device and GPU↔GPU copies, and an NCCL all-reduce with --nccl.
    Smoke(SmokeCmdArgs),
    /// What to install (torch, jax, vllm, …), and why
    ///
    /// For this machine, or one described by --driver/--gpu/--python/--platform: torch with torchvision/torchaudio, jax, tensorflow, onnxruntime-gpu, vllm, flash-attn, xformers, bitsandbytes.
    Recommend(RecommendArgs),
    /// Node reports together: the fleet's shape, outliers, findings
    ///
    /// Aggregates the reports of `check --format json`: the fleet's shape, outlier nodes, findings by code across nodes.
    Fleet(FleetArgs),
    /// The facts and findings that differ between two saved reports
    ///
    /// Both are reports saved by `check --format json`.
    Diff(DiffArgs),
    /// Explain a finding code (GD012, gd012 or 12), or list every code
    Explain(ExplainArgs),
    /// Print the effective configuration and where each value came from
    Config(ConfigArgs),
    /// Print the JSON Schema of the report `check --format json` prints
    Schema,
    /// Pack a redacted support bundle for a bug report
    ///
    /// The JSON and terminal reports, the GPUs, the libraries and a MANIFEST, in one archive (mode 0600).
    Bundle(BundleArgs),
    /// Serve the read-only commands to AI assistants over MCP (stdio)
    ///
    /// check, explain, recommend, libs, devices and diff, over the Model Context Protocol on stdin and stdout; nothing is changed.
    Mcp,
    /// Print the shell completion script for SHELL
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the manual page (roff), e.g. `gpudoctor man | man -l -`
    Man,
    /// Internal: print the compatibility tables and their sources as JSON (.ci/compat-refresh)
    #[command(name = "__compat-tables", hide = true)]
    CompatTables,
    /// Internal: print the GPU architectures compiled into a shared library's fatbins as JSON (.ci/compat-refresh)
    #[command(name = "__fatbin", hide = true)]
    Fatbin { path: std::path::PathBuf },
    /// Internal: load NVML in this child process and print its facts as JSON
    #[command(name = "__nvml-worker", hide = true)]
    NvmlWorker {
        #[arg(long)]
        lib: String,
        /// Only the link error counters (the second read after the smoke test)
        #[arg(long)]
        counters: bool,
    },
    /// Internal: run the smoke test in this child process and stream its results as JSON lines
    #[command(name = "__smoke-worker", hide = true)]
    SmokeWorker {
        #[arg(long)]
        lib: String,
        #[arg(long)]
        device: Option<u32>,
        #[arg(long)]
        device_id: Option<String>,
        #[arg(long)]
        matmul_size: u32,
        #[arg(long)]
        mem_fraction: f64,
        #[arg(long)]
        transfer_bytes: u64,
        #[arg(long)]
        shared_gpu: Vec<String>,
        #[arg(long)]
        nccl_lib: Option<String>,
        #[arg(long)]
        nccl_debug_file: Option<String>,
    },
}

impl Command {
    /// The name the user typed (for messages).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Check(_) => "check",
            Command::Toolkit(_) => "toolkit",
            Command::Libs(_) => "libs",
            Command::Devices(_) => "devices",
            Command::Smoke(_) => "smoke",
            Command::Recommend(_) => "recommend",
            Command::Fleet(_) => "fleet",
            Command::Diff(_) => "diff",
            Command::Explain(_) => "explain",
            Command::Config(_) => "config",
            Command::Schema => "schema",
            Command::Mcp => "mcp",
            Command::Bundle(_) => "bundle",
            Command::Completions { .. } => "completions",
            Command::Man => "man",
            Command::CompatTables => "__compat-tables",
            Command::Fatbin { .. } => "__fatbin",
            Command::NvmlWorker { .. } => "__nvml-worker",
            Command::SmokeWorker { .. } => "__smoke-worker",
        }
    }
}

/// Every format a report can take; each subcommand accepts its own subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
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
    /// One self-contained HTML page (check, devices, smoke, fleet)
    Html,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Junit => "junit",
            Format::Prometheus => "prometheus",
            Format::Html => "html",
        }
    }
}

/// The formats of a view (`toolkit`, `devices`, `smoke`, `fleet`, `diff`, `explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ViewFormatArg {
    /// For a terminal
    Human,
    /// JSON
    Json,
    /// Markdown
    Markdown,
    /// One self-contained HTML page (devices, smoke, fleet)
    Html,
    /// Accepted only to point at `check --format junit`
    #[value(hide = true)]
    Junit,
    /// Accepted only to point at `check --format prometheus`
    #[value(hide = true)]
    Prometheus,
}

/// The formats of `config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DataFormatArg {
    /// For a terminal
    Human,
    /// JSON
    Json,
}

impl From<ViewFormatArg> for Format {
    fn from(f: ViewFormatArg) -> Format {
        match f {
            ViewFormatArg::Human => Format::Human,
            ViewFormatArg::Json => Format::Json,
            ViewFormatArg::Markdown => Format::Markdown,
            ViewFormatArg::Html => Format::Html,
            ViewFormatArg::Junit => Format::Junit,
            ViewFormatArg::Prometheus => Format::Prometheus,
        }
    }
}

impl From<DataFormatArg> for Format {
    fn from(f: DataFormatArg) -> Format {
        match f {
            DataFormatArg::Human => Format::Human,
            DataFormatArg::Json => Format::Json,
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    #[default]
    Error,
    Warning,
    Never,
}

/// `check`'s options (also the options of a bare `gpudoctor`).
#[derive(Debug, Clone, Args, Default)]
pub struct CheckArgs {
    /// Output format
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Shorthand for --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub inspect: InspectArgs,
    #[command(flatten)]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub user: UserArgs,
    #[command(flatten)]
    pub nvml: NvmlArgs,
    #[command(flatten)]
    pub python: PythonArgs,
    #[command(flatten)]
    pub smoke: SmokeArgs,
    /// Judge a container image (OCI layout directory, OCI archive, or `docker save`/`podman save` tarball; PATH:TAG picks one of several) against this host (or the host tree --root names), without running it
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath, conflicts_with_all = ["from", "python_import"])]
    pub image: Option<PathBuf>,
    /// `check` without the on-device smoke test
    #[arg(long)]
    pub no_smoke: bool,
    /// A quick static check: no smoke test (same as --no-smoke)
    #[arg(long)]
    pub quick: bool,
    /// A gate for a scheduler (Slurm prolog, Kubernetes init container): the static checks, the kernel log, the link counters and a short smoke test, all within SECS seconds [default: 15]
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "15", conflicts_with_all = ["from", "image", "no_smoke", "quick", "python_import", "timeout"])]
    pub preflight: Option<f64>,
    /// Judge the kernel log from TIME on: RFC 3339 (`2026-12-07T10:00:00Z`; `2026-12-07 10:00:00` is UTC) or a span before now (`2h`, `30min`, `1day`)
    #[arg(long, value_name = "TIME", conflicts_with_all = ["from", "since_boot"])]
    pub since: Option<String>,
    /// Judge only this boot's kernel log (a syslog file's earlier boots are left out)
    #[arg(long, conflicts_with = "from")]
    pub since_boot: bool,
    /// Also write the report (in --format) to PATH, `{host}` replaced by the node's name; stdout gets the human report
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub output: Option<PathBuf>,
    /// After the report, show what differs from this saved report (`check --format json`)
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath, conflicts_with = "quiet")]
    pub baseline: Option<PathBuf>,
    /// Print the fixes of the findings as a shell script to review and run (never run by gpudoctor)
    #[arg(long, conflicts_with_all = ["format", "json", "baseline", "quiet", "output"])]
    pub fix_script: bool,
    #[command(flatten)]
    pub expect: ExpectArgs,
}

/// The node's expected shape.
#[derive(Debug, Clone, Args, Default)]
pub struct ExpectArgs {
    /// Expect N GPUs on each node: fewer is an error (GD087) naming the missing ones (also gpus_per_node in the configuration, GPUDOCTOR_EXPECT_GPUS)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub expect_gpus: Option<u32>,
}

/// Which findings count and when they fail the run.
#[derive(Debug, Clone, Args, Default)]
pub struct PolicyArgs {
    /// Exit 1 when a finding at or above this severity exists [default: error]
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
    /// Run only these probes and/or report only these codes (comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "NAMES", value_parser = names_parser(), hide_possible_values = true)]
    pub only: Vec<String>,
    /// Skip these probes and/or codes (comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "NAMES", value_parser = names_parser(), hide_possible_values = true)]
    pub skip: Vec<String>,
}

/// Where to look and for how long.
#[derive(Debug, Clone, Args, Default)]
pub struct InspectArgs {
    /// Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub root: Option<PathBuf>,
    /// Overall time budget in seconds (default 5); a probe still running then is reported as timed out
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
}

#[derive(Debug, Clone, Args, Default)]
pub struct ReplayArgs {
    /// Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub from: Option<PathBuf>,
}

#[derive(Debug, Clone, Args, Default)]
pub struct UserArgs {
    /// Judge device-node access for this user (name or uid) instead of the caller
    #[arg(long, value_name = "USER", value_hint = ValueHint::Username)]
    pub user: Option<String>,
}

#[derive(Debug, Clone, Args, Default)]
pub struct NvmlArgs {
    /// Load NVML from this file instead of the loader's libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub nvml_lib: Option<PathBuf>,
}

#[derive(Debug, Clone, Args, Default)]
pub struct PythonArgs {
    /// The Python interpreter whose environment to inspect first (default: python or python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::ExecutablePath)]
    pub python: Option<PathBuf>,
    /// Also import torch in that interpreter (never under --root) and compare its answers; the default --timeout becomes 60 s
    #[arg(long)]
    pub python_import: bool,
}

/// The on-device smoke test's settings.
#[derive(Debug, Clone, Args, Default)]
pub struct SmokeArgs {
    /// Load libcuda from this file instead of the loader's libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub cuda_lib: Option<PathBuf>,
    /// Smoke test: N of the N×N FP32 matmul (16–8192) [default: 1024]
    #[arg(long, value_name = "N")]
    pub matmul_size: Option<u32>,
    /// Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU) [default: 0.9]
    #[arg(long, value_name = "F")]
    pub mem_fraction: Option<f64>,
    /// Smoke test: MiB per host↔device copy in the bandwidth test, per GPU↔GPU peer copy (up to 64), and per GPU in --nccl's all-reduce (1–4096) [default: 256]
    #[arg(long, value_name = "MIB")]
    pub transfer_size: Option<u64>,
    /// Smoke test: also run an NCCL all-reduce over every tested GPU (checked, timed, transports named)
    #[arg(long)]
    pub nccl: bool,
    /// With --nccl: load this libnccl instead of the one the loader gives torch (also GPUDOCTOR_NCCL_LIB); never from inside --root
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub nccl_lib: Option<PathBuf>,
}

/// The output format of a view.
#[derive(Debug, Clone, Args, Default)]
pub struct ViewOutput {
    /// Output format
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ViewFormatArg>,
    /// Shorthand for --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ToolkitArgs {
    #[command(flatten)]
    pub output: ViewOutput,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub inspect: InspectArgs,
    #[command(flatten)]
    pub replay: ReplayArgs,
}

#[derive(Debug, Clone, Args)]
pub struct BundleArgs {
    /// Where to write the archive (default ./gpudoctor-bundle.tar.gz)
    #[arg(short = 'o', long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub output: Option<PathBuf>,
    /// Also run the on-device smoke test and include its result
    #[arg(long)]
    pub smoke: bool,
    /// Keep host names, user names, addresses and token-looking strings (they are replaced by placeholders by default)
    #[arg(long)]
    pub no_redact: bool,
    /// The Python interpreter whose environment to inspect
    #[arg(long, value_name = "PATH", value_hint = ValueHint::ExecutablePath)]
    pub python: Option<PathBuf>,
    /// Load libcuda from this file for the smoke test
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub cuda_lib: Option<PathBuf>,
    #[command(flatten)]
    pub inspect: InspectArgs,
    #[command(flatten)]
    pub user: UserArgs,
    #[command(flatten)]
    pub nvml: NvmlArgs,
}

#[derive(Debug, Clone, Args)]
pub struct LibsArgs {
    /// Shared objects to open, in this order, into one emulated process (instead of the Python environments' modules)
    #[arg(value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub files: Vec<PathBuf>,
    /// Show every library bound, not only the CUDA libraries and the failures
    #[arg(long)]
    pub all: bool,
    /// The Python interpreter whose environment to inspect first (default: python or python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::ExecutablePath)]
    pub python: Option<PathBuf>,
    #[command(flatten)]
    pub output: ViewOutput,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub inspect: InspectArgs,
    #[command(flatten)]
    pub replay: ReplayArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RecommendArgs {
    /// The packages to install [default: torch, with torchvision and torchaudio]
    #[arg(value_name = "PACKAGE", value_parser = package_parser())]
    pub packages: Vec<String>,
    /// Answer for this NVIDIA driver version (e.g. 550.54.15) instead of the installed one
    #[arg(long, value_name = "VERSION")]
    pub driver: Option<String>,
    /// Answer for these GPUs: compute capabilities (sm_120, 9.0) or names (RTX 5090), comma-separated
    #[arg(long, value_name = "GPU", value_delimiter = ',')]
    pub gpu: Vec<String>,
    /// The Python: a version (3.12), or the interpreter whose environment to inspect
    #[arg(long, value_name = "VERSION|PATH")]
    pub python: Option<String>,
    /// The CPU architecture to answer for (x86_64, aarch64)
    #[arg(long, value_name = "ARCH")]
    pub platform: Option<String>,
    /// The installer whose commands to print [default: the one that manages the environment, else pip]
    #[arg(long, value_enum)]
    pub installer: Option<crate::recommend::Installer>,
    /// The CUDA wanted: a major (12) or major.minor (12.8, cu128)
    #[arg(long, value_name = "VERSION")]
    pub cuda: Option<String>,
    /// Answer for a new environment: ignore what the current one has installed
    #[arg(long)]
    pub fresh: bool,
    #[command(flatten)]
    pub output: ViewOutput,
    #[command(flatten)]
    pub inspect: InspectArgs,
    #[command(flatten)]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub nvml: NvmlArgs,
}

#[derive(Debug, Clone, Args)]
pub struct DevicesArgs {
    /// Show everything about this GPU: its NVML index, UUID (or a unique prefix of it) or PCI bus id, as nvidia-smi -i takes them
    #[arg(value_name = "GPU")]
    pub gpu: Option<String>,
    /// Show everything about every GPU
    #[arg(long)]
    pub detail: bool,
    /// Show every column of the table, however wide
    #[arg(long, conflicts_with_all = ["gpu", "detail", "json"])]
    pub wide: bool,
    /// Show how the GPUs connect: a link matrix like `nvidia-smi topo -m`, with NUMA and CPU affinity, RDMA NICs and the IOMMU
    #[arg(long, conflicts_with_all = ["gpu", "detail", "wide"])]
    pub topo: bool,
    #[command(flatten)]
    pub output: ViewOutput,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub inspect: InspectArgs,
    #[command(flatten)]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub user: UserArgs,
    #[command(flatten)]
    pub nvml: NvmlArgs,
}

#[derive(Debug, Clone, Args)]
pub struct SmokeCmdArgs {
    /// Only this GPU: its CUDA ordinal (after CUDA_VISIBLE_DEVICES), UUID (or a unique prefix) or PCI bus id; default: every visible GPU at once
    #[arg(long, value_name = "GPU")]
    pub device: Option<String>,
    #[command(flatten)]
    pub output: ViewOutput,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub inspect: InspectArgs,
    #[command(flatten)]
    pub nvml: NvmlArgs,
    #[command(flatten)]
    pub smoke: SmokeArgs,
}

#[derive(Debug, Clone, Args)]
pub struct FleetArgs {
    /// Report files, directories (searched for *.json) or `-` for newline-delimited JSON on stdin
    #[arg(required = true, value_name = "REPORTS", value_hint = ValueHint::AnyPath)]
    pub reports: Vec<PathBuf>,
    #[command(flatten)]
    pub output: ViewOutput,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub expect: ExpectArgs,
}

#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The earlier report (`-` for stdin)
    #[arg(value_name = "OLD", value_hint = ValueHint::FilePath)]
    pub old: PathBuf,
    /// The later report
    #[arg(value_name = "NEW", value_hint = ValueHint::FilePath)]
    pub new: PathBuf,
    #[command(flatten)]
    pub output: ViewOutput,
    /// Exit 1 only when a finding at or above this severity appeared or got worse (without it: when anything differs, as diff(1))
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// The code to explain; without one, every code is listed
    #[arg(value_name = "CODE", value_parser = code_parser(), hide_possible_values = true)]
    pub code: Option<String>,
    /// List every code with its one-line title
    #[arg(long, conflicts_with = "code")]
    pub list: bool,
    #[command(flatten)]
    pub output: ViewOutput,
}

#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    /// Output format
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<DataFormatArg>,
    /// Shorthand for --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

/// Any string, offered in completions as every probe name and finding code.
fn names_parser() -> impl TypedValueParser<Value = String> {
    Completing {
        values: crate::probes::PROBE_NAMES
            .iter()
            .map(|p| PossibleValue::new(*p).help("probe"))
            .chain(code_values())
            .collect(),
    }
}

/// A package `recommend` has a table for, by its PyPI name or a common alias (pytorch,
/// flash_attn, onnxruntime), normalised to the PyPI name.
fn package_parser() -> impl TypedValueParser<Value = String> {
    let mut values: Vec<PossibleValue> = crate::recommend::known_packages()
        .into_iter()
        .map(PossibleValue::new)
        .collect();
    values.extend(
        ["pytorch", "flash_attn", "onnxruntime", "tf"]
            .into_iter()
            .map(|a| PossibleValue::new(a).hide(true)),
    );
    clap::builder::PossibleValuesParser::new(values).map(|s| crate::recommend::normalise(&s))
}

/// Any string (`explain` accepts GD012, gd012 or 12), offered in completions as the codes
/// with their titles.
fn code_parser() -> impl TypedValueParser<Value = String> {
    Completing {
        values: code_values().collect(),
    }
}

fn code_values() -> impl Iterator<Item = PossibleValue> {
    crate::codes::CODES
        .iter()
        .map(|c| PossibleValue::new(c.code).help(c.title))
}

/// A free-form string whose completion candidates are `values` (checked after parsing).
#[derive(Clone)]
struct Completing {
    values: Vec<PossibleValue>,
}

impl TypedValueParser for Completing {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.values.iter().cloned()))
    }
}
