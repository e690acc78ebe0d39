//! What the `nccl` probe (src/probes/nccl.rs) records.

use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const NET_DIR: &str = "/sys/class/net";

pub const INFINIBAND_DIR: &str = "/sys/class/infiniband";

pub const SYS_MODULE_DIR: &str = "/sys/module";

/// The GPUDirect RDMA modules: the driver's own (R470 on) and the MLNX_OFED-era one.
pub const PEERMEM_MODULES: &[&str] = &["nvidia_peermem", "nv_peer_mem"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclHost {
    /// IP interface names in this network namespace (what NCCL_SOCKET_IFNAME matches).
    pub net_interfaces: Fact<Vec<String>>,
    /// RDMA devices (what NCCL_IB_HCA matches); a missing directory is an empty list.
    pub ib_devices: Fact<Vec<IbDevice>>,
    /// Which of PEERMEM_MODULES /sys/module lists (a module built into the kernel shows
    /// only here).
    pub peermem_sysfs: Fact<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IbDevice {
    /// mlx5_0
    pub name: String,
    /// The kernel driver of its PCI function (`device/driver`): mlx5_core, irdma, bnxt_en…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    pub ports: Vec<IbPort>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IbPort {
    pub number: u32,
    /// "4: ACTIVE" as sysfs writes it; None when unreadable.
    pub state: Option<String>,
    /// InfiniBand or Ethernet (RoCE).
    pub link_layer: Option<String>,
}

impl IbPort {
    pub fn active(&self) -> bool {
        self.state.as_deref().is_some_and(|s| s.contains("ACTIVE"))
    }
}
