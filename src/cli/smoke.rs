//! `gpudoctor smoke`: the on-device smoke test now, on every GPU or one.

use super::args::Format;
use super::gather::focused_with;
use super::options::{exit_code, ViewFormat};
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::render::{self, Style};
use crate::rules::View;

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

pub(super) fn smoke(g: &Settings, device: Option<u32>) -> Result<u8, CliError> {
    let format = ViewFormat::of(g);
    if g.from.is_some() {
        return Err(CliError::Usage(
            "`gpudoctor smoke` runs on the GPUs now; replay a saved report with `gpudoctor check --from`".into(),
        ));
    }
    let (snapshot, checks, findings) = focused_with(g, SMOKE_PROBES, View::Smoke, Some(device))?;
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
    let view = render::smoke::view(&snapshot, &findings, &checks);
    let text = match format {
        _ if g.format == Format::Html => render::smoke::render_html(&view),
        ViewFormat::Json => render::smoke::render_json(&view),
        ViewFormat::Markdown => render::smoke::render_markdown(&view),
        ViewFormat::Human => {
            render::smoke::render_human(&view, &Style::for_stdout(), render::width::for_stdout())
        }
    };
    emit_report(g, text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}
