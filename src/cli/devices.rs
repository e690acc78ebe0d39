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
    let gpus = &sys.devices;
    if let Ok(i) = text.parse::<u32>() {
        if !text.contains(':') {
            return if gpus.iter().any(|d| d.index == i) {
                Ok(i)
            } else {
                Err(format!(
                    "there is no GPU {i}: NVML reports {} GPU(s)",
                    gpus.len()
                ))
            };
        }
    }
    if let Some(bus) = bus_id_form(text) {
        return gpus
            .iter()
            .find(|d| {
                d.pci_bus_id
                    .get()
                    .is_some_and(|b| crate::facts::pci::sysfs_address(b) == bus)
            })
            .map(|d| d.index)
            .ok_or_else(|| {
                format!(
                    "no GPU is at PCI address {bus}: NVML lists {}",
                    list(gpus.iter().filter_map(|d| {
                        d.pci_bus_id
                            .get()
                            .map(|b| crate::facts::pci::sysfs_address(b))
                    }))
                )
            });
    }
    // UUIDs compare without case and with or without their `GPU-` prefix.
    let want = text.to_ascii_lowercase();
    let bare = |u: &str| {
        let u = u.to_ascii_lowercase();
        u.strip_prefix("gpu-").map(str::to_string).unwrap_or(u)
    };
    let matches: Vec<(u32, &String)> = gpus
        .iter()
        .filter_map(|d| Some((d.index, d.uuid.get()?)))
        .filter(|(_, u)| {
            let u = u.to_ascii_lowercase();
            u.starts_with(&want) || bare(&u).starts_with(&bare(&want))
        })
        .collect();
    match matches.as_slice() {
        [(i, _)] => Ok(*i),
        [] => Err(format!(
            "no GPU has the index, UUID or bus id {text:?}: GPUs are 0–{} by index, UUIDs {}",
            gpus.len().saturating_sub(1),
            list(gpus.iter().filter_map(|d| d.uuid.get().cloned()))
        )),
        many => Err(format!(
            "{text:?} is the start of {} UUIDs: {}; give more of it",
            many.len(),
            many.iter()
                .map(|(i, u)| format!("GPU {i} {u}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// `text` as a sysfs PCI address (`0000:1a:00.0`) when it has the form of one:
/// `[domain:]bus:device.function`, in hex, with NVML's 8-digit or sysfs' 4-digit domain.
fn bus_id_form(text: &str) -> Option<String> {
    let (head, function) = text.rsplit_once('.')?;
    let parts: Vec<&str> = head.split(':').collect();
    let hex = |s: &str, max: usize| {
        !s.is_empty() && s.len() <= max && s.chars().all(|c| c.is_ascii_hexdigit())
    };
    let (domain, bus, device) = match parts.as_slice() {
        [d, b, dev] if hex(d, 8) => (*d, *b, *dev),
        [b, dev] => ("0", *b, *dev),
        _ => return None,
    };
    if !(hex(bus, 2) && hex(device, 2) && hex(function, 1)) {
        return None;
    }
    let n = |s: &str| u32::from_str_radix(s, 16).ok();
    Some(format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        n(domain)?,
        n(bus)?,
        n(device)?,
        n(function)?
    ))
}

/// Up to eight items, then how many more.
fn list(items: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = items.collect();
    let mut text = all.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
    if all.len() > 8 {
        text.push_str(&format!(" and {} more", all.len() - 8));
    }
    if text.is_empty() {
        text = "none".into();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids_in_every_form_read_as_sysfs_writes_them() {
        for form in [
            "00000000:1A:00.0",
            "0000:1a:00.0",
            "1a:00.0",
            "1A:00.0",
            "0:1a:0.0",
        ] {
            assert_eq!(bus_id_form(form).as_deref(), Some("0000:1a:00.0"), "{form}");
        }
        assert_eq!(bus_id_form("0001:c1:00.0").as_deref(), Some("0001:c1:00.0"));
        for not in [
            "3",
            "GPU-8e1f",
            "1a:00",
            "zz:00.0",
            "1a:00.0.0",
            "0000:1a:00.10",
        ] {
            assert_eq!(bus_id_form(not), None, "{not}");
        }
    }
}
