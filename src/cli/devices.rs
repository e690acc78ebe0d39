//! `gpudoctor devices`: the GPUs as NVML sees them.

use super::args::GlobalOpts;
use super::gather::focused;
use super::options::{exit_code, ViewFormat};
use super::{emit, CliError};
use crate::render::{self, Style};
use crate::rules::View;

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

pub(super) fn devices(g: &GlobalOpts, index: Option<u32>, detail: bool) -> Result<u8, CliError> {
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
