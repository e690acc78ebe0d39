//! The single data model: everything the probes saw, serialisable and versioned.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::probes::device_nodes::DeviceNodes;
use crate::probes::environment::Environment;
use crate::probes::identity::Identity;
use crate::probes::kernel_module::KernelModule;
use crate::probes::libraries::Libraries;
use crate::probes::python_sites::Site;
use crate::probes::toolkits::Toolkits;
use crate::probes::pci::{Pci, PciRole};
use crate::probes::platform::Platform;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Snapshot {
    /// The `--root` the facts were read under; None for the running system.
    pub root: Option<String>,
    /// How each probe went, by probe name.
    pub probes: BTreeMap<String, ProbeRun>,
    pub identity: Option<Identity>,
    pub platform: Option<Platform>,
    pub kernel_module: Option<KernelModule>,
    pub pci: Option<Pci>,
    pub device_nodes: Option<DeviceNodes>,
    pub environment: Option<Environment>,
    pub toolkits: Option<Toolkits>,
    pub libraries: Option<Libraries>,
    /// Python site-packages directories the toolkit and library probes looked in.
    pub python_sites: Option<Vec<Site>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRun {
    pub status: ProbeStatus,
    pub elapsed_us: u64,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStatus {
    Ok,
    Skipped,
    TimedOut,
    Failed,
}

impl ProbeStatus {
    /// The same word the JSON uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeStatus::Ok => "ok",
            ProbeStatus::Skipped => "skipped",
            ProbeStatus::TimedOut => "timed_out",
            ProbeStatus::Failed => "failed",
        }
    }
}

/// How many GPUs this system exposes, and which fact says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuCount {
    pub count: usize,
    pub source: String,
}

impl Snapshot {
    /// GPUs visible to CUDA before CUDA_VISIBLE_DEVICES: device nodes first (they are what a
    /// container was given), then NVIDIA display/3D PCI functions.
    pub fn gpu_count(&self) -> Option<GpuCount> {
        if let Some(nodes) = &self.device_nodes {
            let n = nodes.gpu_nodes().len();
            if n > 0 {
                return Some(GpuCount {
                    count: n,
                    source: "/dev/nvidia[0-9]*".into(),
                });
            }
        }
        if let Some(pci) = &self.pci {
            let n = pci.gpus().len();
            if n > 0 {
                return Some(GpuCount {
                    count: n,
                    source: crate::probes::pci::PCI_DEVICES_DIR.into(),
                });
            }
        }
        None
    }

    pub fn is_wsl(&self) -> bool {
        self.platform.as_ref().is_some_and(|p| p.wsl.detected)
    }

    pub fn container_kind(&self) -> Option<&str> {
        self.platform
            .as_ref()
            .and_then(|p| p.container.kind.as_deref())
    }

    /// Any sign of NVIDIA GPU hardware: PCI GPUs, GPU device nodes, the driver's GPU list, WSL's dxg.
    pub fn nvidia_hardware_seen(&self) -> bool {
        let pci = self.pci.as_ref().is_some_and(|p| {
            p.devices
                .get()
                .is_some_and(|d| d.iter().any(|d| d.role == PciRole::Gpu))
        });
        let nodes = self
            .device_nodes
            .as_ref()
            .is_some_and(|n| !n.gpu_nodes().is_empty() || n.is_present("/dev/dxg"));
        let driver = self
            .kernel_module
            .as_ref()
            .is_some_and(|k| k.gpus.get().is_some_and(|g| !g.is_empty()));
        pci || nodes || driver
    }

    pub fn env_value(&self, name: &str) -> Option<&str> {
        self.environment.as_ref().and_then(|e| e.value(name))
    }
}
