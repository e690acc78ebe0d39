//! `gpudoctor smoke`: the on-device smoke test now, on every GPU or one.

use super::args::Format;
use super::gather::{focused_with, SmokeCmd};
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

pub(super) fn smoke(g: &Settings, device: Option<&str>) -> Result<u8, CliError> {
    let format = ViewFormat::of(g);
    if g.from.is_some() {
        return Err(CliError::Usage(
            "`gpudoctor smoke` runs on the GPUs now; replay a saved report with `gpudoctor check --from`".into(),
        ));
    }
    // An ordinal is CUDA's count; a UUID or bus id the worker matches against CUDA's list.
    let cmd = match device.map(str::trim) {
        None => SmokeCmd::default(),
        Some(d) if d.parse::<u32>().is_ok() => SmokeCmd {
            device: d.parse().ok(),
            device_id: None,
        },
        Some(d) if crate::gpu_id::plausible(d) => SmokeCmd {
            device: None,
            device_id: Some(d.to_string()),
        },
        Some(d) => {
            return Err(CliError::Usage(format!(
                "--device {d:?}: name a GPU by its CUDA ordinal, UUID (or a unique prefix) or PCI bus id"
            )))
        }
    };
    let device = cmd.device;
    let (snapshot, checks, findings) = focused_with(g, SMOKE_PROBES, View::Smoke, Some(&cmd))?;
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
    // A UUID or bus id CUDA's list does not have: said with what NVML knows of it.
    let run = snapshot.smoke.as_ref().and_then(|p| p.run());
    if let (Some(id), Some(run)) = (&cmd.device_id, run) {
        let seen = run.device_count.unwrap_or(0);
        if run.devices.is_empty() && seen > 0 {
            let why = match snapshot.nvml_system() {
                Some(sys) => match crate::gpu_id::select(&crate::gpu_id::nvml_known(sys), id, "NVML") {
                    Ok(i) => format!("NVML's GPU {i} has it, but none of the {seen} GPU(s) CUDA sees here does (CUDA_VISIBLE_DEVICES hides it?)"),
                    Err(e) => e,
                },
                None => format!("none of the {seen} GPU(s) CUDA sees has it, or several do"),
            };
            return Err(CliError::Usage(format!("--device {id}: {why}")));
        }
    }
    let view = render::smoke::view(&snapshot, &findings, &checks);
    let text = match format {
        _ if g.format == Format::Html => render::smoke::render_html(&view),
        ViewFormat::Json => render::smoke::render_json(&view),
        ViewFormat::Markdown => render::smoke::render_markdown(&view),
        ViewFormat::Human => render::smoke::render_human(
            &view,
            &snapshot,
            &Style::for_stdout(),
            render::width::for_stdout(),
        ),
    };
    emit_report(g, text.as_bytes())?;
    Ok(exit_code(g, findings.iter().map(|f| f.severity).max()))
}
