//! What a healthy GPU's memory delivers to a device-to-device copy, by PCI device id: the
//! figure NVIDIA measured and DCGM's minimum (75 % of it), from DCGM's per-SKU diagnostics
//! file. A GPU not listed is not judged.

pub struct MemoryBandwidthRow {
    /// The PCI device id, four lowercase hex digits ("2330").
    pub device_id: &'static str,
    /// The SKU's label in DCGM's file.
    pub name: &'static str,
    /// What NVIDIA measured on a healthy one, in MB/s (0: DCGM's file gives no figure).
    pub healthy_mbps: u32,
    /// DCGM's `minimum_bandwidth`, in MB/s.
    pub minimum_mbps: u32,
    /// The line of the minimum in DCGM's file.
    pub line: u32,
}

/// Where the rows come from.
pub const SOURCE: &str =
    "NVIDIA/DCGM nvvs/diag-skus.yaml.in (DCGM 4.6.0, commit 72fa3fe), memory_bandwidth.minimum_bandwidth";

// The rows: src/compat/data/memory_bandwidth.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/memory_bandwidth.rs"));

/// The row of the GPU whose NVML PCI device id is `pci_device_id` ("0x233010DE": device id in
/// the upper 16 bits, vendor in the lower).
pub fn for_pci_device_id(pci_device_id: &str) -> Option<&'static MemoryBandwidthRow> {
    let hex = pci_device_id
        .trim()
        .strip_prefix("0x")
        .or_else(|| pci_device_id.trim().strip_prefix("0X"))?;
    let id = u32::from_str_radix(hex, 16).ok()?;
    if id & 0xFFFF != 0x10DE {
        return None;
    }
    let device = format!("{:04x}", id >> 16);
    MEMORY_BANDWIDTH
        .binary_search_by(|r| r.device_id.cmp(device.as_str()))
        .ok()
        .map(|i| &MEMORY_BANDWIDTH[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sorted_by_device_id_and_the_minimum_is_three_quarters() {
        for w in MEMORY_BANDWIDTH.windows(2) {
            assert!(w[0].device_id < w[1].device_id, "{}", w[1].device_id);
        }
        for r in MEMORY_BANDWIDTH.iter().filter(|r| r.healthy_mbps > 0) {
            let share = f64::from(r.minimum_mbps) / f64::from(r.healthy_mbps);
            assert!((0.74..=0.76).contains(&share), "{} {share}", r.device_id);
        }
    }

    #[test]
    fn docs_smoke_md_shows_every_row() {
        let doc = include_str!("../../docs/smoke.md");
        for r in MEMORY_BANDWIDTH {
            let row = format!("| 10de:{} | {} |", r.device_id, r.name);
            let line = doc
                .lines()
                .find(|l| l.starts_with(&row))
                .unwrap_or_else(|| panic!("docs/smoke.md lacks {row}"));
            assert!(line.ends_with(&format!("| {} |", r.line)), "{line}");
        }
    }

    #[test]
    fn lookup_by_nvmls_device_id() {
        assert_eq!(
            for_pci_device_id("0x233010DE").unwrap().name,
            "H100 80GB HBM3"
        );
        assert_eq!(
            for_pci_device_id("0x20B210DE").unwrap().minimum_mbps,
            1_173_000
        );
        assert!(
            for_pci_device_id("0x268410DE").is_none(),
            "RTX 4090: not in DCGM's file"
        );
        assert!(for_pci_device_id("0x23301002").is_none(), "another vendor");
        assert!(for_pci_device_id("2330").is_none());
    }
}
