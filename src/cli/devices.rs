//! `gpudoctor devices`: the GPUs as NVML sees them.

use super::args::Format;
use super::gather::focused;
use super::options::{exit_code, ViewFormat};
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::render::{self, Style};
use crate::rules::View;

/// Probes the devices view needs: the driver and what it logged, device nodes (and whose
/// access), NVML.
const DEVICES_PROBES: &[&str] = &[
    "identity",
    "platform",
    "kernel_module",
    "kernel_log",
    "pci",
    "topology",
    "device_nodes",
    "environment",
    "libraries",
    "nvml",
];

pub(super) fn devices(
    g: &Settings,
    gpu: Option<&str>,
    detail: bool,
    wide: bool,
    topo: bool,
) -> Result<u8, CliError> {
    let format = ViewFormat::of(g);
    let (snapshot, checks, findings) = focused(g, DEVICES_PROBES, View::Devices)?;
    // A GPU no identifier names is a usage error, whether NVML or only the nodes/PCI count them.
    let index = match gpu {
        None => None,
        Some(text) => Some(select_gpu(&snapshot, text).map_err(CliError::Usage)?),
    };
    let view = render::devices::view(&snapshot, &findings, &checks, index);
    let text = match format {
        _ if g.format == Format::Html => render::devices::render_html(&view),
        ViewFormat::Json => render::devices::render_json(&view),
        ViewFormat::Markdown => render::devices::render_markdown(&view),
        ViewFormat::Human => render::devices::render_human(
            &view,
            &render::devices::Options {
                style: Style::for_stdout(),
                detail: detail || index.is_some(),
                width: render::width::for_stdout(),
                wide,
                topo,
            },
        ),
    };
    emit_report(g, text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}

/// The NVML index a user's GPU identifier names, as `nvidia-smi -i` reads it: an index, a
/// UUID (`GPU-…`, `MIG-…`, or a unique prefix with or without `GPU-`), or a PCI bus id in any
/// form NVML and sysfs print (`00000000:1A:00.0`, `0000:1a:00.0`, `1a:00.0`). Without NVML only
/// an index below the count of device nodes or PCI functions is accepted.
pub(crate) fn select_gpu(snapshot: &crate::snapshot::Snapshot, text: &str) -> Result<u32, String> {
    let text = text.trim();
    let Some(sys) = snapshot.nvml_system() else {
        let count = snapshot.gpu_count();
        return match (text.parse::<u32>(), count) {
            (Ok(i), Some(c)) if (i as usize) < c.count => Ok(i),
            (Ok(i), Some(c)) => Err(format!("there is no GPU {i}: {} GPU(s) by {}", c.count, c.source)),
            (Ok(i), None) => Err(format!("there is no GPU {i}: no NVIDIA GPU was found")),
            (Err(_), _) => Err(format!(
                "{text:?} can only be matched by NVML's UUIDs and bus ids, and NVML did not answer here: name the GPU by its index"
            )),
        };
    };
    crate::gpu_id::select(&crate::gpu_id::nvml_known(sys), text, "NVML")
}
