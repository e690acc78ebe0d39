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
    index: Option<u32>,
    detail: bool,
    wide: bool,
    topo: bool,
) -> Result<u8, CliError> {
    let format = ViewFormat::of(g);
    let (snapshot, checks, findings) = focused(g, DEVICES_PROBES, View::Devices)?;
    // An index no GPU has is a usage error, whether NVML or only the nodes/PCI count them.
    if let Some(i) = index {
        let missing = match (snapshot.nvml_system(), snapshot.gpu_count()) {
            (Some(sys), _) => (!sys.devices.iter().any(|d| d.index == i))
                .then(|| format!("NVML reports {} GPU(s)", sys.devices.len())),
            (None, Some(c)) => {
                (i as usize >= c.count).then(|| format!("{} GPU(s) by {}", c.count, c.source))
            }
            (None, None) => Some("no NVIDIA GPU was found".into()),
        };
        if let Some(why) = missing {
            return Err(CliError::Usage(format!("there is no GPU {i}: {why}")));
        }
    }
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
