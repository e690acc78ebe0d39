//! What the `kernel_module` probe (src/probes/kernel_module.rs) records.

use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const VERSION_FILE: &str = "/proc/driver/nvidia/version";

pub const MODULES_FILE: &str = "/proc/modules";

pub const SYS_VERSION_FILE: &str = "/sys/module/nvidia/version";

pub const DRIVER_GPUS_DIR: &str = "/proc/driver/nvidia/gpus";

/// In-kernel drivers that claim an NVIDIA GPU and keep nvidia.ko from it: nouveau, nova
/// (its Rust successor) and the legacy framebuffer drivers. GD003 names the loaded ones.
pub const CONFLICTING_DRIVERS: &[&str] = &["nouveau", "nova_core", "nvidiafb", "rivafb", "rivatv"];

/// Parks a GPU for a virtual machine: worth showing, not a conflict.
pub const PASSTHROUGH_DRIVERS: &[&str] = &["vfio_pci"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KernelModule {
    pub version_file: Fact<NvrmVersion>,
    pub modules: Fact<Vec<LoadedModule>>,
    pub sys_version: Fact<String>,
    pub gpus: Fact<Vec<DriverGpu>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NvrmVersion {
    /// The first line as the kernel wrote it.
    pub raw: String,
    pub version: String,
    /// `proprietary` or `open` (the open GPU kernel modules).
    pub flavor: String,
    pub arch: Option<String>,
    pub build_date: Option<String>,
    /// The `GCC version:` line: the compiler the module was built with.
    pub compiler: Option<String>,
    /// Jetson/L4T modules carry an L4T release, not a desktop driver number.
    pub l4t: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadedModule {
    pub name: String,
    pub size: Option<u64>,
    pub refcount: Option<u64>,
    pub used_by: Vec<String>,
    /// Live, Loading or Unloading.
    pub state: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DriverGpu {
    pub bus_id: String,
    pub model: Option<String>,
    pub uuid: Option<String>,
    pub video_bios: Option<String>,
    pub device_minor: Option<u32>,
    pub source: String,
}

impl KernelModule {
    /// Whether `name` is loaded; None when /proc/modules could not be read.
    pub fn is_loaded(&self, name: &str) -> Option<bool> {
        self.modules.get().map(|m| m.iter().any(|m| m.name == name))
    }

    /// The nvidia module is loaded by any sign: /proc/modules, or the version files it creates.
    pub fn nvidia_loaded(&self) -> Option<bool> {
        if self.version_file.get().is_some() || self.sys_version.get().is_some() {
            return Some(true);
        }
        self.is_loaded("nvidia")
    }
}
