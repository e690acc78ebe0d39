//! `gpudoctor recommend`: what to install, for this machine or one described by flags.
//! Exit 0 when every package asked for has a build that fits, 1 when one has none.

use super::args::RecommendArgs;
use super::gather::gather;
use super::options::{selection, ViewFormat};
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::envvars::Env;
use crate::recommend::{self, machine::Overrides, Machine};
use crate::render::{self, Style};

/// What the machine's facts come from: the driver and GPUs, the CPU, the environment's
/// Python and packages, and the nvcc a source build would use.
const RECOMMEND_PROBES: &[&str] = &[
    "platform",
    "kernel_module",
    "pci",
    "environment",
    "toolkits",
    "nvml",
    "pytorch",
];

pub(super) fn recommend(g: &Settings, a: &RecommendArgs) -> Result<u8, CliError> {
    if let Some(p) = a.python.as_deref() {
        if recommend::machine::looks_like_version(p)
            && recommend::machine::parse_python(p).is_none()
        {
            return Err(CliError::Usage(format!(
                "--python {p}: not a Python version (3.12) or an interpreter's path"
            )));
        }
    }
    let overrides = Overrides {
        driver: a.driver.clone(),
        gpus: a.gpu.clone(),
        python: a
            .python
            .clone()
            .filter(|p| recommend::machine::parse_python(p).is_some()),
        platform: a.platform.clone(),
        installer: a.installer,
        cuda: a.cuda.clone(),
        fresh: a.fresh,
    };
    // The driver and GPUs given on the command line need no look at the hardware.
    let described = a.driver.is_some() && !a.gpu.is_empty();
    let probes: Vec<&str> = RECOMMEND_PROBES
        .iter()
        .copied()
        .filter(|p| !(described && matches!(*p, "kernel_module" | "pci" | "nvml")))
        .collect();
    let sel = selection(g)?;
    let wanted: Vec<&'static str> = sel
        .probes
        .iter()
        .copied()
        .filter(|p| probes.contains(p))
        .collect();
    let snapshot = gather(g, &sel, &wanted, &Env::from_process(), None)?;
    let machine = Machine::from_snapshot(&snapshot, &overrides).map_err(CliError::Usage)?;
    let recs = recommend::recommend(&machine, &a.packages);
    let text = match ViewFormat::of(g) {
        ViewFormat::Json => render::recommend::render_json(&machine, &recs),
        ViewFormat::Markdown => render::recommend::render_markdown(&machine, &recs),
        ViewFormat::Human => render::recommend::render_human(
            &machine,
            &recs,
            &Style::for_stdout(),
            render::width::for_stdout(),
            g.verbose >= 1,
        ),
    };
    emit_report(g, text.as_bytes())?;
    Ok(if recs.iter().all(|r| r.pick.is_some()) {
        0
    } else {
        1
    })
}
