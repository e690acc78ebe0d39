//! What the `pci` probe (src/probes/pci.rs) records.

use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const PCI_DEVICES_DIR: &str = "/sys/bus/pci/devices";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pci {
    /// NVIDIA functions only, sorted by address.
    pub devices: Fact<Vec<PciDevice>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PciDevice {
    pub address: String,
    pub device_id: String,
    pub class: String,
    pub role: PciRole,
    /// The bound driver's name; None when no driver is bound.
    pub driver: Option<String>,
    pub subsystem: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PciRole {
    /// A display or 3D controller: the GPU itself.
    Gpu,
    /// The HDMI/DP audio function of a graphics card.
    Audio,
    /// USB-C / VirtualLink controller on some cards.
    Usb,
    /// USB-C UCSI controller on some cards.
    SerialBus,
    /// NVSwitch and other bridges.
    Bridge,
    Other,
}

impl PciRole {
    pub(crate) fn from_class(class: u32) -> PciRole {
        match class >> 8 {
            0x0300 | 0x0302 | 0x0380 => PciRole::Gpu,
            0x0403 => PciRole::Audio,
            0x0c03 => PciRole::Usb,
            0x0c80 => PciRole::SerialBus,
            c if c >> 8 == 0x06 => PciRole::Bridge,
            _ => PciRole::Other,
        }
    }
}

impl Pci {
    pub fn gpus(&self) -> Vec<&PciDevice> {
        self.devices
            .get()
            .map(|d| d.iter().filter(|d| d.role == PciRole::Gpu).collect())
            .unwrap_or_default()
    }
}

/// A PCI address as sysfs names it (`0000:18:00.0`): NVML writes an 8-digit domain
/// (`00000000:18:00.0`), CUDA a 4-digit one, either case. Anything else is only lowercased.
pub fn sysfs_address(bus_id: &str) -> String {
    let b = bus_id.trim().to_ascii_lowercase();
    match b.split_once(':') {
        Some((domain, rest)) => match u32::from_str_radix(domain, 16) {
            Ok(d) => format!("{d:04x}:{rest}"),
            Err(_) => b,
        },
        None => b,
    }
}
