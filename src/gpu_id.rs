//! A GPU named the ways admins name it — an index, a UUID (`GPU-…`, `MIG-…`, or a unique
//! prefix with or without `GPU-`), a PCI bus id in any form NVML, CUDA and sysfs print — and
//! found among the GPUs NVML or CUDA lists, as `nvidia-smi -i` and `CUDA_VISIBLE_DEVICES` read
//! them. Pure: `devices GPU` matches NVML's list, the smoke worker CUDA's.

/// One GPU as a list names it.
#[derive(Debug, Clone)]
pub struct Known {
    /// NVML's index or CUDA's ordinal.
    pub index: u32,
    pub uuid: Option<String>,
    pub bus_id: Option<String>,
}

/// NVML's GPUs as `select` reads them.
pub fn nvml_known(sys: &crate::facts::nvml::NvmlSystem) -> Vec<Known> {
    sys.devices
        .iter()
        .map(|d| Known {
            index: d.index,
            uuid: d.uuid.get().cloned(),
            bus_id: d.pci_bus_id.get().cloned(),
        })
        .collect()
}

/// The index of the GPU `text` names among `gpus` (`lister`: who listed them, for messages).
pub fn select(gpus: &[Known], text: &str, lister: &str) -> Result<u32, String> {
    let text = text.trim();
    if let Ok(i) = text.parse::<u32>() {
        if !text.contains(':') {
            return if gpus.iter().any(|d| d.index == i) {
                Ok(i)
            } else {
                Err(format!(
                    "there is no GPU {i}: {lister} reports {} GPU(s)",
                    gpus.len()
                ))
            };
        }
    }
    if let Some(bus) = bus_id_form(text) {
        let sysfs = |d: &Known| d.bus_id.as_deref().map(crate::facts::pci::sysfs_address);
        return gpus
            .iter()
            .find(|d| sysfs(d).as_deref() == Some(bus.as_str()))
            .map(|d| d.index)
            .ok_or_else(|| {
                format!(
                    "no GPU is at PCI address {bus}: {lister} lists {}",
                    list(gpus.iter().filter_map(sysfs))
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
        .filter_map(|d| Some((d.index, d.uuid.as_ref()?)))
        .filter(|(_, u)| {
            let u = u.to_ascii_lowercase();
            u.starts_with(&want) || bare(&u).starts_with(&bare(&want))
        })
        .collect();
    match matches.as_slice() {
        [(i, _)] => Ok(*i),
        [] => Err(format!(
            "no GPU has the index, UUID or bus id {text:?}: {lister} lists 0–{} by index, UUIDs {}",
            gpus.len().saturating_sub(1),
            list(gpus.iter().filter_map(|d| d.uuid.clone()))
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
pub fn bus_id_form(text: &str) -> Option<String> {
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

/// Whether `text` can name a GPU at all: an index, a bus id, or something a UUID starts with.
pub fn plausible(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && (t.parse::<u32>().is_ok()
            || bus_id_form(t).is_some()
            || t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
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

    fn two() -> Vec<Known> {
        (0..2)
            .map(|i| Known {
                index: i,
                uuid: Some(format!("GPU-8e1f6a2c-000{i}-aaaa")),
                bus_id: Some(format!("0000:{:02x}:00.0", 0x18 + i)),
            })
            .collect()
    }

    #[test]
    fn an_index_a_uuid_a_prefix_or_a_bus_id_selects_one_gpu() {
        let g = two();
        assert_eq!(select(&g, "1", "CUDA"), Ok(1));
        assert_eq!(select(&g, "GPU-8e1f6a2c-0001", "CUDA"), Ok(1));
        assert_eq!(select(&g, "8e1f6a2c-0000", "CUDA"), Ok(0));
        assert_eq!(select(&g, "00000000:19:00.0", "CUDA"), Ok(1));
        assert!(select(&g, "GPU-8e1f", "CUDA")
            .unwrap_err()
            .contains("the start of 2 UUIDs"));
        assert!(select(&g, "2", "CUDA")
            .unwrap_err()
            .contains("CUDA reports 2 GPU(s)"));
        assert!(plausible("GPU-8e1f") && plausible("0000:19:00.0") && !plausible("a b"));
    }

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
