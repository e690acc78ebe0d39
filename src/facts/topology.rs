//! What the `topology` probe (src/probes/topology.rs) records.

use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const IOMMU_GROUPS_DIR: &str = "/sys/kernel/iommu_groups";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Topology {
    /// Every NVIDIA GPU function the pci probe lists, with its place on the bus.
    pub gpus: Fact<Vec<TopoGpu>>,
    /// Every bridge on some GPU's path to its host bridge, by address.
    pub bridges: Vec<Bridge>,
    pub iommu: Iommu,
    /// RDMA-capable NICs (/sys/class/infiniband): InfiniBand or RoCE.
    pub nics: Fact<Vec<Nic>>,
    /// The PCIe AER error counters of every GPU and every bridge on a GPU's path, as this
    /// probe read them (an error may be counted by the link's other end, so both are read).
    #[serde(default)]
    pub aer: Vec<AerCounters>,
    /// The same counters read again after the other probes (and the smoke test, when it
    /// ran): what grew in between is happening now.
    #[serde(default)]
    pub aer_again: Option<AerReread>,
}

/// One device's AER statistics (`aer_dev_correctable`, `aer_dev_nonfatal`,
/// `aer_dev_fatal`: Linux 4.19+, Documentation/ABI/testing/sysfs-bus-pci-devices-aer-stats),
/// each file's `TOTAL_ERR_*` line; None where the file is absent or unreadable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AerCounters {
    pub address: String,
    pub correctable: Option<u64>,
    pub nonfatal: Option<u64>,
    pub fatal: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AerReread {
    /// What ran between the two reads: `the smoke test` or `the other probes`.
    pub after: String,
    /// Milliseconds between the two reads.
    pub elapsed_ms: u64,
    pub devices: Vec<AerCounters>,
}

impl Topology {
    /// The GPUs and the bridges on their paths, each once: whose AER counters are read.
    pub fn link_devices(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for g in self.gpus.get().into_iter().flatten() {
            for d in g.path.iter().chain(std::iter::once(&g.address)) {
                if !out.contains(d) {
                    out.push(d.clone());
                }
            }
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TopoGpu {
    /// PCI address as sysfs names it (`0000:18:00.0`).
    pub address: String,
    /// The host bridge (root complex) it hangs off, as sysfs names it (`pci0000:17`).
    pub host_bridge: Option<String>,
    /// Bridges from the host bridge down to the GPU (root port first), by address.
    pub path: Vec<String>,
    /// The resolved sysfs directory the path was read from.
    pub source: String,
    /// `numa_node`: -1 when the platform does not say.
    pub numa_node: Fact<i32>,
    pub local_cpulist: Fact<String>,
    /// The IOMMU group number (the `iommu_group` link); None without an IOMMU.
    pub iommu_group: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bridge {
    pub address: String,
    /// `10b5:9716` (vendor:device), from the config space.
    pub id: Option<String>,
    pub kind: BridgeKind,
    /// The ACS registers; the value None is a bridge without an ACS capability (it never
    /// redirects); missing is unknown (config space unreadable, short, lost, malformed).
    pub acs: Fact<Option<Acs>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BridgeKind {
    RootPort,
    SwitchUpstream,
    SwitchDownstream,
    /// A PCIe-to-PCI bridge, or another port type.
    OtherPcie,
    /// A bridge without a PCI Express capability (conventional PCI).
    Conventional,
    /// The config space could not be read far enough to say.
    Unknown,
}

impl BridgeKind {
    pub fn describe(self) -> &'static str {
        match self {
            BridgeKind::RootPort => "PCIe root port",
            BridgeKind::SwitchUpstream => "PCIe switch upstream port",
            BridgeKind::SwitchDownstream => "PCIe switch downstream port",
            BridgeKind::OtherPcie => "PCIe bridge",
            BridgeKind::Conventional => "PCI bridge",
            BridgeKind::Unknown => "bridge",
        }
    }
}

/// The ACS extended capability (ID 0x000D): capability and control registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Acs {
    /// Offset of the capability in config space (`ECAP_ACS` for setpci).
    pub offset: u16,
    /// ACS Capability register (offset +4).
    pub capability: u16,
    /// ACS Control register (offset +6).
    pub control: u16,
}

impl Acs {
    /// Request or completion redirect is on: peer requests go up to the root complex
    /// instead of across the bridge.
    pub fn redirects(&self) -> bool {
        self.control & (ACS_REQUEST_REDIRECT | ACS_COMPLETION_REDIRECT) != 0
    }

    /// The control bits that are set, as lspci names them.
    pub fn control_names(&self) -> Vec<&'static str> {
        const NAMES: [(u16, &str); 7] = [
            (ACS_SOURCE_VALIDATION, "SrcValid"),
            (ACS_TRANSLATION_BLOCKING, "TransBlk"),
            (ACS_REQUEST_REDIRECT, "ReqRedir"),
            (ACS_COMPLETION_REDIRECT, "CmpltRedir"),
            (ACS_UPSTREAM_FORWARDING, "UpstreamFwd"),
            (ACS_EGRESS_CONTROL, "EgressCtrl"),
            (ACS_DIRECT_TRANSLATED, "DirectTrans"),
        ];
        NAMES
            .iter()
            .filter(|(bit, _)| self.control & bit != 0)
            .map(|(_, n)| *n)
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Iommu {
    /// /sys/class/iommu entries (`dmar0` Intel VT-d, `ivhd0` AMD-Vi, others).
    pub units: Fact<Vec<IommuUnit>>,
    /// The IOMMU groups the GPUs are in.
    pub groups: Vec<IommuGroup>,
    /// IOMMU- and ACS-related words of /proc/cmdline.
    pub cmdline: Fact<Vec<String>>,
    pub mode: IommuMode,
    /// What decided the mode (the group types, the command line, no IOMMU units).
    pub mode_source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IommuUnit {
    pub name: String,
    /// `intel_vtd`, `amd_vi` or `other`.
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IommuGroup {
    pub number: u32,
    /// `DMA`, `DMA-FQ`, `identity`, `blocked`, `unmanaged`, as the kernel writes it.
    pub kind: Fact<String>,
    /// Every PCI function in the group.
    pub devices: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IommuMode {
    /// No IOMMU translates DMA (none present, or turned off).
    Off,
    /// Identity mapping: devices' addresses are physical addresses (`iommu=pt`).
    Passthrough,
    /// DMA addresses are translated (DMA, DMA-FQ domains).
    Translated,
    Unknown,
}

impl IommuMode {
    pub fn as_str(self) -> &'static str {
        match self {
            IommuMode::Off => "off",
            IommuMode::Passthrough => "passthrough",
            IommuMode::Translated => "translated",
            IommuMode::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Nic {
    /// The RDMA device name (`mlx5_0`).
    pub name: String,
    pub address: Option<String>,
    pub host_bridge: Option<String>,
    pub path: Vec<String>,
    pub numa_node: Option<i32>,
    /// `InfiniBand` or `Ethernet` (RoCE), per port.
    pub link_layers: Vec<String>,
    /// Network interfaces of the device (`ib0`, `ens1f0np0`).
    pub netdevs: Vec<String>,
}

pub const ACS_SOURCE_VALIDATION: u16 = 1 << 0;

pub const ACS_TRANSLATION_BLOCKING: u16 = 1 << 1;

pub const ACS_REQUEST_REDIRECT: u16 = 1 << 2;

pub const ACS_COMPLETION_REDIRECT: u16 = 1 << 3;

pub const ACS_UPSTREAM_FORWARDING: u16 = 1 << 4;

pub const ACS_EGRESS_CONTROL: u16 = 1 << 5;

pub const ACS_DIRECT_TRANSLATED: u16 = 1 << 6;
