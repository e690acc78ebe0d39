//! Options checked beyond what clap checks: --only/--skip split into probes and codes,
//! the output format a subcommand accepts, --fail-on as an exit code, the time budgets
//! and smoke-test settings, terminal width.

use std::path::PathBuf;
use std::time::Duration;

use super::args::{FailOn, Format};
use super::config::SeverityOverride;
use super::settings::Settings;
use super::CliError;
use crate::codes;
use crate::envvars::{self, Env};
use crate::findings::{Finding, Severity};
use crate::probes::{self, PROBE_NAMES};

/// What `toolkit`, `devices` and `smoke` print. JUnit and Prometheus describe a whole check:
/// for these subcommands they would report a handful of rules as if they were the node's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ViewFormat {
    Human,
    Json,
    Markdown,
}

impl ViewFormat {
    /// The settings' format (already checked against what the command can produce).
    pub(super) fn of(g: &Settings) -> ViewFormat {
        match g.format {
            Format::Json => ViewFormat::Json,
            Format::Markdown => ViewFormat::Markdown,
            _ => ViewFormat::Human,
        }
    }
}

/// What --only/--skip select, split into probe names and codes.
pub(super) struct Selection {
    pub(super) probes: Vec<&'static str>,
    /// Probe names were given (saved reports cannot honour them).
    pub(super) names_probes: bool,
    only_codes: Vec<String>,
    skip_codes: Vec<String>,
    /// Per-code severities set by the configuration, with where each came from.
    severity: std::collections::BTreeMap<String, (SeverityOverride, String)>,
}

pub(super) fn selection(g: &Settings) -> Result<Selection, CliError> {
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
        severity: g
            .severity
            .iter()
            .map(|(code, (sev, source))| (code.clone(), (*sev, source.to_string())))
            .collect(),
    })
}

impl Selection {
    pub(super) fn wants(&self, code: &str) -> bool {
        (self.only_codes.is_empty() || self.only_codes.iter().any(|c| c == code))
            && !self.skip_codes.iter().any(|c| c == code)
            && !matches!(self.severity.get(code), Some((SeverityOverride::Ignore, _)))
    }

    /// The configured severity of `code`, if the policy changes it: (severity, where set).
    pub(super) fn severity_of(&self, code: &str) -> Option<(Severity, &str)> {
        let (sev, source) = self.severity.get(code)?;
        let sev = match sev {
            SeverityOverride::Error => Severity::Error,
            SeverityOverride::Warning => Severity::Warning,
            SeverityOverride::Info => Severity::Info,
            SeverityOverride::Ignore => return None,
        };
        Some((sev, source))
    }

    /// Findings as the policy sees them: severities the configuration sets are applied,
    /// and the finding says so (every output then agrees on the new severity).
    pub(super) fn adjust(&self, findings: Vec<Finding>) -> Vec<Finding> {
        let mut findings: Vec<Finding> = findings
            .into_iter()
            .filter(|f| self.wants(&f.code))
            .map(|mut f| {
                if let Some((sev, source)) = self.severity_of(&f.code) {
                    if sev != f.severity {
                        let note = format!(
                            "Reported as {} by the configuration ({source}); gpudoctor rates it {}.",
                            sev.as_str(),
                            f.severity.as_str()
                        );
                        f.detail = if f.detail.is_empty() {
                            note
                        } else {
                            format!("{} {note}", f.detail)
                        };
                        f.severity = sev;
                    }
                }
                f
            })
            .collect();
        crate::findings::unlink_weaker_causes(&mut findings);
        crate::findings::sort_findings(&mut findings);
        findings
    }
}

pub(super) fn exit_code(g: &Settings, worst: Option<Severity>) -> u8 {
    let threshold = match g.fail_on {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Never => None,
    };
    u8::from(matches!((threshold, worst), (Some(t), Some(w)) if w >= t))
}

/// The static probes' budget: --timeout (checked when resolved), else the default.
pub(super) fn probe_timeout(g: &Settings) -> f64 {
    if let Some(budget) = g.preflight {
        return preflight_split(budget).0;
    }
    // Importing torch (--python-import) takes seconds: its default budget is longer.
    g.timeout
        .unwrap_or(if g.python_import { 60.0 } else { 5.0 })
}

/// How `--preflight SECS` divides its budget: the static probes (at most 5 s, a quarter of
/// it), the smoke test (what is left after both), and the second read of the link
/// counters after the smoke test (as long as the static probes).
pub(super) fn preflight_split(budget: f64) -> (f64, f64) {
    let probes = (budget / 4.0).min(5.0);
    (probes, budget - 2.0 * probes)
}

/// The smoke test's settings.
pub(super) fn smoke_mode(
    g: &Settings,
    env: &Env,
    smoke_cmd: Option<&super::gather::SmokeCmd>,
) -> Result<probes::SmokeMode, CliError> {
    if let (None, Some(why)) = (smoke_cmd, &g.smoke_off) {
        return Ok(probes::SmokeMode::Off(format!("skipped ({why})")));
    }
    // The settings were checked when they were resolved (settings.rs), naming their source.
    let format = g.format;
    Ok(probes::SmokeMode::On(probes::SmokeOptions {
        lib: g.cuda_lib.clone().or_else(|| {
            env.get_str(envvars::GPUDOCTOR_CUDA_LIB)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        }),
        settings: crate::facts::smoke::SmokeSettings {
            matmul_size: g.matmul_size,
            mem_fraction: g.mem_fraction,
            transfer_bytes: g.transfer_size << 20,
            device: smoke_cmd.and_then(|c| c.device),
            device_id: smoke_cmd.and_then(|c| c.device_id.clone()),
            requested: smoke_cmd.is_some(),
        },
        // Context creation on a multi-GPU node without persistence takes seconds: the
        // smoke test's own default budget is longer than the static probes'.
        timeout: Duration::from_secs_f64(match g.preflight {
            Some(budget) => preflight_split(budget).1,
            None => g.timeout.unwrap_or(if g.nccl {
                SMOKE_NCCL_TIMEOUT_SECS
            } else {
                SMOKE_TIMEOUT_SECS
            }),
        }),
        // --preflight promises a scheduler an end by its budget.
        hard_deadline: g.preflight.is_some(),
        nccl: g.nccl.then(|| probes::NcclOptions {
            lib: g.nccl_lib.clone().or_else(|| {
                env.get_str(envvars::GPUDOCTOR_NCCL_LIB)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            }),
        }),
        always: smoke_cmd.is_some(),
        // A dumb terminal cannot erase a line: no live progress there.
        progress: (format == Format::Human
            && !g.quiet
            && env.get_str(envvars::TERM).as_deref() != Some("dumb")
            && probes::smoke::stderr_is_terminal())
        .then(|| crate::render::smoke_progress::live_line(env)),
    }))
}

/// The smoke test's deadline when --timeout is not given.
const SMOKE_TIMEOUT_SECS: f64 = 30.0;
/// With --nccl: ncclCommInitAll over 8 GPUs sets up every channel and transport, seconds on
/// top of the GPUs' own steps; a slow start must not read as a hang.
const SMOKE_NCCL_TIMEOUT_SECS: f64 = 60.0;

/// A day: longer budgets are typos, and they must not overflow a deadline.
pub(super) const MAX_TIMEOUT_SECS: f64 = 86_400.0;
