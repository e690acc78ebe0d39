//! The settings a command runs with: flags, then GPUDOCTOR_* variables, then the
//! configuration files, then the defaults — each value with where it came from, which
//! `gpudoctor config` prints.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory};

use super::args::{CheckArgs, Cli, ColorChoice, Command, FailOn, Format, PolicyArgs};
use super::config::{self, Loaded, Paths, SeverityOverride};
use super::CliError;
use crate::envvars::{self, Env, EnvVar};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    /// A default that depends on the command, said in words.
    DefaultNote(&'static str),
    /// `FILE:LINE`.
    File(String),
    Env(&'static str),
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::DefaultNote(note) => write!(f, "default: {note}"),
            Source::File(at) => f.write_str(at),
            Source::Env(v) => write!(f, "${v}"),
            Source::Flag(flag) => f.write_str(flag),
        }
    }
}

impl serde::Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One effective value, as `gpudoctor config` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Origin {
    pub key: String,
    pub value: serde_json::Value,
    pub source: Source,
}

/// Everything a command needs to know from the command line, the environment and the
/// configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    pub command: &'static str,
    pub format: Format,
    pub color: ColorChoice,
    pub quiet: bool,
    pub verbose: u8,
    pub fail_on: FailOn,
    pub only: Vec<String>,
    pub skip: Vec<String>,
    /// Per-code severity, with where each came from.
    pub severity: BTreeMap<String, (SeverityOverride, Source)>,
    pub root: Option<PathBuf>,
    pub timeout: Option<f64>,
    pub from: Option<PathBuf>,
    pub user: Option<String>,
    pub nvml_lib: Option<PathBuf>,
    pub python: Option<PathBuf>,
    pub python_import: bool,
    pub cuda_lib: Option<PathBuf>,
    /// --nccl: the smoke test's NCCL all-reduce step, and --nccl-lib.
    pub nccl: bool,
    pub nccl_lib: Option<PathBuf>,
    pub matmul_size: u32,
    pub mem_fraction: f64,
    pub transfer_size: u64,
    /// Why `check` runs no smoke test (`--no-smoke`, a configuration line…), if it does not.
    pub smoke_off: Option<String>,
    /// `check --preflight`: the whole run's budget in seconds.
    pub preflight: Option<f64>,
    /// `check --since-boot`, `--since TIME`: the part of the kernel log judged.
    pub log_window: crate::probes::kernel_log::LogWindow,
    pub output: Option<PathBuf>,
    pub baseline: Option<PathBuf>,
    pub fix_script: bool,
    /// `gpudoctor libs FILE…`: the files to open instead of the environments' modules.
    pub libs_files: Vec<PathBuf>,
    /// `check --image`: the image whose userland is judged against this host.
    pub image: Option<PathBuf>,
    /// The GPUs each node must have (--expect-gpus, gpus_per_node), and where that was said.
    pub expect_gpus: Option<(u32, String)>,
    /// The driver (version or branch) and GPU model each node must have, and where that was said.
    pub expect_driver: Option<(String, String)>,
    pub expect_gpu_model: Option<(String, String)>,
    /// The configuration files read, in order.
    pub files: Vec<PathBuf>,
    /// Every file looked for, in order, and whether it was named (--config,
    /// GPUDOCTOR_CONFIG): `gpudoctor config` names them when none was there.
    pub looked_for: Vec<(PathBuf, bool)>,
    /// --no-config: no file and no policy variable was read.
    pub no_config: bool,
    pub origins: Vec<Origin>,
}

/// What the command line gave, whichever subcommand took it.
#[derive(Debug, Clone, Default)]
struct Given {
    format: Option<Format>,
    policy: PolicyArgs,
    root: Option<PathBuf>,
    timeout: Option<f64>,
    from: Option<PathBuf>,
    user: Option<String>,
    nvml_lib: Option<PathBuf>,
    python: Option<PathBuf>,
    python_import: bool,
    cuda_lib: Option<PathBuf>,
    nccl: bool,
    nccl_lib: Option<PathBuf>,
    matmul_size: Option<u32>,
    mem_fraction: Option<f64>,
    transfer_size: Option<u64>,
    no_smoke: bool,
    quick: bool,
    preflight: Option<f64>,
    since: Option<String>,
    since_boot: bool,
    output: Option<PathBuf>,
    baseline: Option<PathBuf>,
    fix_script: bool,
    libs_files: Vec<PathBuf>,
    image: Option<PathBuf>,
    expect_gpus: Option<u32>,
}

impl Given {
    fn of_check(c: &CheckArgs) -> Given {
        Given {
            format: if c.json { Some(Format::Json) } else { c.format },
            policy: c.policy.clone(),
            root: c.inspect.root.clone(),
            timeout: c.inspect.timeout,
            from: c.replay.from.clone(),
            user: c.user.user.clone(),
            nvml_lib: c.nvml.nvml_lib.clone(),
            python: c.python.python.clone(),
            python_import: c.python.python_import,
            cuda_lib: c.smoke.cuda_lib.clone(),
            nccl: c.smoke.nccl,
            nccl_lib: c.smoke.nccl_lib.clone(),
            matmul_size: c.smoke.matmul_size,
            mem_fraction: c.smoke.mem_fraction,
            transfer_size: c.smoke.transfer_size,
            no_smoke: c.no_smoke,
            quick: c.quick,
            preflight: c.preflight,
            since: c.since.clone(),
            since_boot: c.since_boot,
            output: c.output.clone(),
            baseline: c.baseline.clone(),
            fix_script: c.fix_script,
            libs_files: Vec::new(),
            image: c.image.clone(),
            expect_gpus: c.expect.expect_gpus,
        }
    }

    fn of_command(command: &Command) -> Given {
        let view = |o: &super::args::ViewOutput| {
            if o.json {
                Some(Format::Json)
            } else {
                o.format.map(Format::from)
            }
        };
        match command {
            Command::Check(c) => Given::of_check(c),
            Command::Toolkit(a) => Given {
                format: view(&a.output),
                policy: a.policy.clone(),
                root: a.inspect.root.clone(),
                timeout: a.inspect.timeout,
                from: a.replay.from.clone(),
                ..Given::default()
            },
            Command::Libs(a) => Given {
                format: view(&a.output),
                policy: a.policy.clone(),
                root: a.inspect.root.clone(),
                timeout: a.inspect.timeout,
                from: a.replay.from.clone(),
                python: a.python.clone(),
                libs_files: a.files.clone(),
                ..Given::default()
            },
            Command::Devices(a) => Given {
                format: view(&a.output),
                policy: a.policy.clone(),
                root: a.inspect.root.clone(),
                timeout: a.inspect.timeout,
                from: a.replay.from.clone(),
                user: a.user.user.clone(),
                nvml_lib: a.nvml.nvml_lib.clone(),
                ..Given::default()
            },
            Command::Smoke(a) => Given {
                format: view(&a.output),
                policy: a.policy.clone(),
                root: a.inspect.root.clone(),
                timeout: a.inspect.timeout,
                nvml_lib: a.nvml.nvml_lib.clone(),
                cuda_lib: a.smoke.cuda_lib.clone(),
                nccl: a.smoke.nccl,
                nccl_lib: a.smoke.nccl_lib.clone(),
                matmul_size: a.smoke.matmul_size,
                mem_fraction: a.smoke.mem_fraction,
                transfer_size: a.smoke.transfer_size,
                ..Given::default()
            },
            Command::Recommend(a) => Given {
                format: view(&a.output),
                root: a.inspect.root.clone(),
                timeout: a.inspect.timeout,
                from: a.replay.from.clone(),
                nvml_lib: a.nvml.nvml_lib.clone(),
                // A version (3.12) is the recommender's; a path names the environment.
                python: a
                    .python
                    .as_deref()
                    .filter(|p| crate::recommend::machine::parse_python(p).is_none())
                    .map(PathBuf::from),
                ..Given::default()
            },
            Command::Fleet(a) => Given {
                format: view(&a.output),
                policy: a.policy.clone(),
                expect_gpus: a.expect.expect_gpus,
                ..Given::default()
            },
            Command::Diff(a) => Given {
                format: view(&a.output),
                policy: PolicyArgs {
                    fail_on: a.fail_on,
                    ..PolicyArgs::default()
                },
                ..Given::default()
            },
            Command::Explain(a) => Given {
                format: view(&a.output),
                ..Given::default()
            },
            Command::Config(a) => Given {
                format: if a.json {
                    Some(Format::Json)
                } else {
                    a.format.map(Format::from)
                },
                ..Given::default()
            },
            _ => Given::default(),
        }
    }

    /// This command line's values, falling back to `top`'s (options before the subcommand).
    fn or(self, top: Given) -> Given {
        let vec_or = |a: Vec<String>, b: Vec<String>| if a.is_empty() { b } else { a };
        Given {
            format: self.format.or(top.format),
            policy: PolicyArgs {
                fail_on: self.policy.fail_on.or(top.policy.fail_on),
                only: vec_or(self.policy.only, top.policy.only),
                skip: vec_or(self.policy.skip, top.policy.skip),
            },
            root: self.root.or(top.root),
            timeout: self.timeout.or(top.timeout),
            expect_gpus: self.expect_gpus.or(top.expect_gpus),
            from: self.from.or(top.from),
            user: self.user.or(top.user),
            nvml_lib: self.nvml_lib.or(top.nvml_lib),
            python: self.python.or(top.python),
            python_import: self.python_import || top.python_import,
            cuda_lib: self.cuda_lib.or(top.cuda_lib),
            nccl: self.nccl || top.nccl,
            nccl_lib: self.nccl_lib.or(top.nccl_lib),
            matmul_size: self.matmul_size.or(top.matmul_size),
            mem_fraction: self.mem_fraction.or(top.mem_fraction),
            transfer_size: self.transfer_size.or(top.transfer_size),
            no_smoke: self.no_smoke || top.no_smoke,
            quick: self.quick || top.quick,
            preflight: self.preflight.or(top.preflight),
            since: self.since.or(top.since),
            since_boot: self.since_boot || top.since_boot,
            output: self.output.or(top.output),
            baseline: self.baseline.or(top.baseline),
            fix_script: self.fix_script || top.fix_script,
            libs_files: self.libs_files,
            image: self.image.or(top.image),
        }
    }
}

/// The formats each command can produce.
pub fn formats_of(command: &str) -> &'static [Format] {
    match command {
        "check" => &[
            Format::Human,
            Format::Json,
            Format::Markdown,
            Format::Junit,
            Format::Prometheus,
            Format::Html,
        ],
        "fleet" | "devices" | "smoke" => {
            &[Format::Human, Format::Json, Format::Markdown, Format::Html]
        }
        "toolkit" | "libs" | "recommend" | "diff" | "explain" => {
            &[Format::Human, Format::Json, Format::Markdown]
        }
        "config" => &[Format::Human, Format::Json],
        _ => &[],
    }
}

/// Options given before the subcommand must be options the subcommand takes.
pub fn check_leading_options(matches: &ArgMatches, command: &Command) -> Result<(), CliError> {
    if matches!(command, Command::Check(_)) {
        return Ok(());
    }
    let cli = Cli::command();
    let Some(sub) = cli.find_subcommand(command.name()) else {
        return Ok(());
    };
    for arg in cli.get_arguments().filter(|a| !a.is_global_set()) {
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let flag = arg
            .get_long()
            .map(|l| format!("--{l}"))
            .unwrap_or_else(|| id.to_string());
        if !sub.get_arguments().any(|a| a.get_id() == id) {
            let visible = super::completions::visible_command();
            let elsewhere = super::usage::belongs_elsewhere(&visible, &flag, command.name())
                .unwrap_or_else(|| format!("{flag} is not an option of `{}`", command.name()));
            return Err(CliError::Usage(format!(
                "{elsewhere}\nhint: `gpudoctor {} -h` lists its options",
                command.name()
            )));
        }
    }
    Ok(())
}

impl Settings {
    /// Whether --fail-on (or its variable or configuration) set the threshold.
    pub fn fail_on_given(&self) -> bool {
        self.origins
            .iter()
            .any(|o| o.key == "fail_on" && o.source != Source::Default)
    }

    /// The flags the command line gave for these keys (`--timeout`, …).
    pub fn flags_given(&self, keys: &[&str]) -> Vec<&str> {
        self.origins
            .iter()
            .filter(|o| keys.contains(&o.key.as_str()))
            .filter_map(|o| match o.source {
                Source::Flag(flag) => Some(flag),
                _ => None,
            })
            .collect()
    }

    /// Whether --color itself chose the colour mode.
    pub fn color_from_flag(&self) -> bool {
        self.origins
            .iter()
            .any(|o| o.key == "color" && matches!(o.source, Source::Flag(_)))
    }

    /// Resolves the settings of `command` from the parsed command line, `env` and the
    /// configuration files `paths` (None: --no-config).
    pub fn resolve(
        cli: &Cli,
        command: &Command,
        bare: bool,
        env: &Env,
        paths: Option<&Paths>,
    ) -> Result<Settings, CliError> {
        let name = command.name();
        // A bare `gpudoctor` is `check` with the top-level options; before a subcommand
        // they fill in what it was not given.
        let given = if bare {
            Given::of_check(&cli.check)
        } else {
            Given::of_command(command).or(Given::of_check(&cli.check))
        };
        let files = match paths {
            Some(p) => config::load(p)?,
            None => Vec::new(),
        };
        let policy_env = paths.is_some();
        let mut r = Resolver {
            env,
            files: &files,
            policy_env,
            origins: Vec::new(),
            errors: Vec::new(),
        };

        let formats = formats_of(name);
        if let Some(f) = given.format {
            if !formats.contains(&f) {
                let names = or_list(&formats.iter().map(|f| f.name()).collect::<Vec<_>>());
                return Err(CliError::Usage(match f {
                    Format::Junit | Format::Prometheus => format!(
                        "--format {} reports a whole check: use `gpudoctor check --format {}` (`gpudoctor {name}` prints {})",
                        f.name(),
                        f.name(),
                        names
                    ),
                    _ => format!(
                        "--format {}: `gpudoctor {name}` prints {}",
                        f.name(),
                        names
                    ),
                }));
            }
        }
        // A configured format is a default: a command that cannot produce it prints its own.
        let format = r.pick(
            "format",
            given.format,
            "--format",
            envvars::GPUDOCTOR_FORMAT,
            parse_enum::<Format>,
            |f| f.format.as_ref().map(|s| (*s.get_ref(), s.span())),
            Format::Human,
        );
        let format = if formats.contains(&format) {
            format
        } else {
            Format::Human
        };
        let color = r.pick(
            "color",
            cli.global.color,
            "--color",
            envvars::GPUDOCTOR_COLOR,
            parse_enum::<ColorChoice>,
            |f| f.color.as_ref().map(|s| (*s.get_ref(), s.span())),
            ColorChoice::Auto,
        );
        let fail_on = r.pick(
            "fail_on",
            given.policy.fail_on,
            "--fail-on",
            envvars::GPUDOCTOR_FAIL_ON,
            parse_enum::<FailOn>,
            |f| f.fail_on.as_ref().map(|s| (*s.get_ref(), s.span())),
            FailOn::Error,
        );
        let list = |v: &str| -> Result<Vec<String>, String> {
            Ok(v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect())
        };
        let only = r.pick(
            "only",
            (!given.policy.only.is_empty()).then(|| given.policy.only.clone()),
            "--only",
            envvars::GPUDOCTOR_ONLY,
            list,
            |f| f.only.as_ref().map(|s| (s.get_ref().clone(), s.span())),
            Vec::new(),
        );
        let skip = r.pick(
            "skip",
            (!given.policy.skip.is_empty()).then(|| given.policy.skip.clone()),
            "--skip",
            envvars::GPUDOCTOR_SKIP,
            list,
            |f| f.skip.as_ref().map(|s| (s.get_ref().clone(), s.span())),
            Vec::new(),
        );
        let timeout = r.pick_opt(
            "timeout",
            given.timeout,
            "--timeout",
            envvars::GPUDOCTOR_TIMEOUT,
            |v| v.trim().parse::<f64>().map_err(|e| e.to_string()),
            |f| f.timeout.as_ref().map(|s| (s.get_ref().0, s.span())),
        );
        if timeout.is_none() {
            r.origins.push(Origin {
                key: "timeout".into(),
                value: serde_json::Value::Null,
                source: Source::DefaultNote(
                    "5 s; 60 s with --python-import; 30 s for the smoke test",
                ),
            });
        }
        let origin_of = |r: &Resolver, key: &str| {
            r.origins
                .iter()
                .rev()
                .find(|o| o.key == key)
                .map(|o| o.source.to_string())
                .unwrap_or_default()
        };
        let expect_gpus = r
            .pick_opt(
                "gpus_per_node",
                given.expect_gpus,
                "--expect-gpus",
                envvars::GPUDOCTOR_EXPECT_GPUS,
                |v| match v.trim().parse::<u32>() {
                    Ok(n) if (1..=4096).contains(&n) => Ok(n),
                    Ok(n) => Err(format!("{n} is not in 1..=4096")),
                    Err(e) => Err(e.to_string()),
                },
                |f| f.gpus_per_node.as_ref().map(|s| (*s.get_ref(), s.span())),
            )
            .map(|n| (n, origin_of(&r, "gpus_per_node")));
        let not_empty = |v: &str| {
            let v = v.trim();
            if v.is_empty() {
                Err("empty".to_string())
            } else {
                Ok(v.to_string())
            }
        };
        let expect_driver = r
            .pick_opt(
                "driver",
                None,
                "",
                envvars::GPUDOCTOR_EXPECT_DRIVER,
                not_empty,
                |f| {
                    f.driver
                        .as_ref()
                        .map(|s| (s.get_ref().trim().to_string(), s.span()))
                },
            )
            .map(|v| (v, origin_of(&r, "driver")));
        let expect_gpu_model = r
            .pick_opt(
                "gpu_model",
                None,
                "",
                envvars::GPUDOCTOR_EXPECT_GPU_MODEL,
                not_empty,
                |f| {
                    f.gpu_model
                        .as_ref()
                        .map(|s| (s.get_ref().trim().to_string(), s.span()))
                },
            )
            .map(|v| (v, origin_of(&r, "gpu_model")));
        let matmul_size = r.pick(
            "smoke.matmul_size",
            given.matmul_size,
            "--matmul-size",
            envvars::GPUDOCTOR_MATMUL_SIZE,
            |v| v.trim().parse::<u32>().map_err(|e| e.to_string()),
            |f| {
                f.smoke
                    .matmul_size
                    .as_ref()
                    .map(|s| (*s.get_ref(), s.span()))
            },
            1024,
        );
        let mem_fraction = r.pick(
            "smoke.mem_fraction",
            given.mem_fraction,
            "--mem-fraction",
            envvars::GPUDOCTOR_MEM_FRACTION,
            |v| v.trim().parse::<f64>().map_err(|e| e.to_string()),
            |f| {
                f.smoke
                    .mem_fraction
                    .as_ref()
                    .map(|s| (s.get_ref().0, s.span()))
            },
            // A preflight gate fills a quarter of the memory: the pattern test's time grows
            // with it, and a scheduler waits for the gate.
            if given.preflight.is_some() { 0.25 } else { 0.9 },
        );
        let transfer_size = r.pick(
            "smoke.transfer_size",
            given.transfer_size,
            "--transfer-size",
            envvars::GPUDOCTOR_TRANSFER_SIZE,
            |v| v.trim().parse::<u64>().map_err(|e| e.to_string()),
            |f| {
                f.smoke
                    .transfer_size
                    .as_ref()
                    .map(|s| (*s.get_ref(), s.span()))
            },
            if given.preflight.is_some() { 64 } else { 256 },
        );
        // A preflight gate always runs the smoke test (--preflight conflicts with --no-smoke).
        let flag_off = if given.preflight.is_some() {
            Some(true)
        } else {
            (given.quick || given.no_smoke).then_some(false)
        };
        let smoke_enabled = r.pick(
            "smoke.enabled",
            flag_off,
            if given.preflight.is_some() {
                "--preflight"
            } else if given.quick {
                "--quick"
            } else {
                "--no-smoke"
            },
            envvars::GPUDOCTOR_SMOKE,
            parse_bool,
            |f| f.smoke.enabled.as_ref().map(|s| (*s.get_ref(), s.span())),
            true,
        );
        let smoke_off = (!smoke_enabled).then(|| {
            r.origins
                .iter()
                .find(|o| o.key == "smoke.enabled")
                .map(|o| o.source.to_string())
                .unwrap_or_default()
        });
        let severity = r.severity()?;
        if !r.errors.is_empty() {
            return Err(r.errors.remove(0));
        }
        // Values out of range are refused naming where they were set (a flag, a variable
        // or FILE:LINE), before anything runs.
        let bad = |key: &str, value: String, rule: &str| {
            let source = r
                .origins
                .iter()
                .find(|o| o.key == key)
                .map(|o| o.source.to_string())
                .unwrap_or_default();
            CliError::Usage(format!("{key} = {value} ({source}): {rule}"))
        };
        if let Some(t) = timeout {
            if !(t.is_finite() && t > 0.0 && t <= super::options::MAX_TIMEOUT_SECS) {
                return Err(bad(
                    "timeout",
                    if t.abs() < 1e6 {
                        t.to_string()
                    } else {
                        format!("{t:e}")
                    },
                    "must be a number of seconds above 0 and at most 86400",
                ));
            }
        }
        let log_window = match (&given.since, given.since_boot) {
            (Some(t), _) => {
                crate::probes::kernel_log::LogWindow::since(t, std::time::SystemTime::now())
                    .map_err(CliError::Usage)?
            }
            (None, true) => crate::probes::kernel_log::LogWindow::ThisBoot,
            (None, false) => crate::probes::kernel_log::LogWindow::All,
        };
        if let Some(b) = given.preflight {
            if !(b.is_finite() && (3.0..=3600.0).contains(&b)) {
                return Err(CliError::Usage(format!(
                    "--preflight {b}: the budget must be between 3 and 3600 seconds"
                )));
            }
        }
        if !(16..=8192).contains(&matmul_size) {
            return Err(bad(
                "smoke.matmul_size",
                matmul_size.to_string(),
                "must be between 16 and 8192",
            ));
        }
        if !(mem_fraction.is_finite() && (0.01..=0.95).contains(&mem_fraction)) {
            return Err(bad(
                "smoke.mem_fraction",
                mem_fraction.to_string(),
                "must be between 0.01 and 0.95",
            ));
        }
        if !(1..=4096).contains(&transfer_size) {
            return Err(bad(
                "smoke.transfer_size",
                transfer_size.to_string(),
                "must be between 1 and 4096 (MiB)",
            ));
        }
        for (key, names) in [("only", &only), ("skip", &skip)] {
            for n in names {
                let known = crate::probes::PROBE_NAMES
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case(n.trim()))
                    || crate::codes::lookup(n).is_some();
                if !known {
                    return Err(bad(
                        key,
                        format!("{n:?}"),
                        &format!(
                            "neither a probe ({}) nor a finding code (see `gpudoctor explain`)",
                            crate::probes::PROBE_NAMES.join(", ")
                        ),
                    ));
                }
            }
        }

        Ok(Settings {
            command: name,
            format,
            color,
            quiet: cli.global.quiet,
            verbose: cli.global.verbose,
            fail_on,
            only,
            skip,
            severity,
            root: given.root,
            timeout,
            from: given.from,
            user: given.user,
            nvml_lib: given.nvml_lib,
            python: given.python,
            python_import: given.python_import,
            cuda_lib: given.cuda_lib,
            nccl: given.nccl || given.nccl_lib.is_some(),
            nccl_lib: given.nccl_lib,
            matmul_size,
            mem_fraction,
            transfer_size,
            smoke_off,
            preflight: given.preflight,
            log_window,
            output: given.output,
            baseline: given.baseline,
            fix_script: given.fix_script,
            libs_files: given.libs_files,
            image: given.image,
            expect_gpus,
            expect_driver,
            expect_gpu_model,
            files: files.iter().map(|f| f.path.clone()).collect(),
            looked_for: paths.map(|p| p.files.clone()).unwrap_or_default(),
            no_config: paths.is_none(),
            origins: std::mem::take(&mut r.origins),
        })
    }
}

/// Picks each value from the first layer that has it, recording where it came from.
struct Resolver<'a> {
    env: &'a Env,
    files: &'a [Loaded],
    /// --no-config also turns off the GPUDOCTOR_* policy variables.
    policy_env: bool,
    origins: Vec<Origin>,
    /// Bad GPUDOCTOR_* values, as usage errors (the first ends the run).
    errors: Vec<CliError>,
}

type Span = std::ops::Range<usize>;

impl Resolver<'_> {
    #[allow(clippy::too_many_arguments)]
    fn pick<T: Clone + serde::Serialize>(
        &mut self,
        key: &str,
        flag: Option<T>,
        flag_name: &'static str,
        var: EnvVar,
        parse: impl Fn(&str) -> Result<T, String>,
        in_file: impl Fn(&config::ConfigFile) -> Option<(T, Span)>,
        default: T,
    ) -> T {
        self.pick_opt(key, flag, flag_name, var, parse, in_file)
            .unwrap_or_else(|| {
                self.record(key, &default, Source::Default);
                default
            })
    }

    fn pick_opt<T: Clone + serde::Serialize>(
        &mut self,
        key: &str,
        flag: Option<T>,
        flag_name: &'static str,
        var: EnvVar,
        parse: impl Fn(&str) -> Result<T, String>,
        in_file: impl Fn(&config::ConfigFile) -> Option<(T, Span)>,
    ) -> Option<T> {
        if let Some(v) = flag {
            self.record(key, &v, Source::Flag(flag_name));
            return Some(v);
        }
        if self.policy_env {
            if let Some(raw) = self.env.get_str(var).filter(|v| !v.trim().is_empty()) {
                match parse(&raw) {
                    Ok(v) => {
                        self.record(key, &v, Source::Env(var.name));
                        return Some(v);
                    }
                    Err(e) => {
                        self.errors
                            .push(CliError::Usage(format!("{}={raw:?}: {e}", var.name)));
                        return None;
                    }
                }
            }
        }
        for file in self.files.iter().rev() {
            if let Some((v, span)) = in_file(&file.file) {
                let at = format!("{}:{}", file.path.display(), file.line_at(span.start));
                self.record(key, &v, Source::File(at));
                return Some(v);
            }
        }
        None
    }

    fn record<T: serde::Serialize>(&mut self, key: &str, v: &T, source: Source) {
        self.origins.push(Origin {
            key: key.to_string(),
            value: serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
            source,
        });
    }

    /// `[severity]` of every file (later files win per code), then GPUDOCTOR_SEVERITY.
    fn severity(&mut self) -> Result<BTreeMap<String, (SeverityOverride, Source)>, CliError> {
        let mut map = BTreeMap::new();
        for file in self.files {
            for (code, sev) in &file.file.severity {
                let code = crate::codes::lookup(code.get_ref())
                    .map(|c| c.code.to_string())
                    .unwrap_or_else(|| code.get_ref().clone());
                map.insert(
                    code,
                    (
                        *sev.get_ref(),
                        Source::File(format!(
                            "{}:{}",
                            file.path.display(),
                            file.line_at(sev.span().start)
                        )),
                    ),
                );
            }
        }
        if self.policy_env {
            if let Some(raw) = self
                .env
                .get_str(envvars::GPUDOCTOR_SEVERITY)
                .filter(|v| !v.trim().is_empty())
            {
                for item in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let bad = || {
                        CliError::Usage(format!(
                            "GPUDOCTOR_SEVERITY: {item:?} is not CODE=error|warning|info|ignore"
                        ))
                    };
                    let (code, sev) = item.split_once('=').ok_or_else(bad)?;
                    let code = crate::codes::lookup(code.trim()).ok_or_else(|| {
                        CliError::Usage(format!(
                            "GPUDOCTOR_SEVERITY: {:?} is not a finding code (see `gpudoctor explain`)",
                            code.trim()
                        ))
                    })?;
                    let sev = SeverityOverride::parse(sev).ok_or_else(bad)?;
                    map.insert(
                        code.code.to_string(),
                        (sev, Source::Env(envvars::GPUDOCTOR_SEVERITY.name)),
                    );
                }
            }
        }
        for (code, (sev, source)) in &map {
            self.origins.push(Origin {
                key: format!("severity.{code}"),
                value: serde_json::Value::String(sev.name().into()),
                source: source.clone(),
            });
        }
        Ok(map)
    }
}

fn parse_enum<T: clap::ValueEnum>(v: &str) -> Result<T, String> {
    T::from_str(v.trim(), true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        format!("expected one of {}", names.join(", "))
    })
}

fn parse_bool(v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err("expected 0, 1, true or false".into()),
    }
}

/// "a, b or c".
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
