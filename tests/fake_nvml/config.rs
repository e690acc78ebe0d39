//! The fake NVML's configuration (the JSON named by `GPUDOCTOR_FAKE_NVML`).
//!
//! Shared by the cdylib (which reads it) and the tests (tests/util/fake_nvml.rs writes it),
//! so the two cannot drift. Every `Option` left out answers NVML_ERROR_NOT_SUPPORTED.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FakeNvml {
    pub system: System,
    pub faults: Faults,
    pub devices: Vec<Gpu>,
    pub topology: Topology,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct System {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvml_version: Option<String>,
    /// 13000 for CUDA 13.0 (both GetCudaDriverVersion and _v2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_driver_version: Option<i32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// nvmlInit_v2 / nvmlInitWithFlags return this NVML code (9, 18, 4, 999, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_error: Option<u32>,
    /// This exported symbol sleeps forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hang_in: Option<String>,
    /// This exported symbol raises SIGSEGV.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_in: Option<String>,
    /// These exported symbols answer NVML_ERROR_FUNCTION_NOT_FOUND (still exported).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Gpu {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci: Option<Pci>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minor_number: Option<u32>,
    /// nvmlDeviceArchitecture_t: 7 Ampere, 8 Ada, 9 Hopper, 10 Blackwell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub architecture: Option<u32>,
    /// [major, minor].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<[i32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<Memory>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bar1: Option<Bar1>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcie: Option<Pcie>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_temp_c: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shutdown_temp_c: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_usage_mw: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_limit_mw: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clocks: Option<Clocks>,
    /// nvmlClocksThrottleReason* bits (also the ClocksEventReasons answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_reasons: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecc: Option<Ecc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired_pages: Option<RetiredPages>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remapped_rows: Option<RemappedRows>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistence_mode: Option<bool>,
    /// nvmlComputeMode_t: 0 default, 1 exclusive thread, 2 prohibited, 3 exclusive process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_mode: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig: Option<Mig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_processes: Option<Vec<Process>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graphics_processes: Option<Vec<Process>>,
    /// One entry per link (true = active); links past the end are INVALID_ARGUMENT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvlinks: Option<Vec<bool>>,
    /// Per link, the PCI bus id nvmlDeviceGetNvLinkRemotePciInfo_v2 answers ("00000000:19:00.0");
    /// null or past the end → NOT_SUPPORTED for that link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvlink_remotes: Option<Vec<Option<String>>>,
    /// nvmlDeviceGetPcieReplayCounter; absent → NOT_SUPPORTED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_replay_counter: Option<u32>,
    /// Per link, nvmlDeviceGetNvLinkErrorCounter's [replay, recovery, CRC FLIT, CRC data];
    /// absent or past the end → NOT_SUPPORTED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_errors: Option<Vec<[u64; 4]>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric: Option<Fabric>,
    /// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: 0 none, 1 GPU reset, 2 node reboot,
    /// 3 drain P2P, 4 drain and reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_action: Option<u32>,
    /// nvmlDeviceGetHandleByIndex_v2 answers NVML_ERROR_GPU_IS_LOST.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
    /// nvmlDeviceGetHandleByIndex_v2 answers this nvmlReturn_t (4 no permission, 999 unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle_error: Option<u32>,
    /// Symbols answering NVML_ERROR_NOT_SUPPORTED for this GPU (and its MIG devices).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_supported: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Pci {
    /// "00000000:18:00.0"; NVML answers it re-rendered in upper-case hex.
    pub bus_id: String,
    /// 0x233010DE (device << 16 | vendor).
    pub device_id: u32,
    pub subsystem_id: u32,
}

/// Bytes. The v1 call answers used + reserved as `used`, as NVML does.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Memory {
    pub total: u64,
    pub free: u64,
    pub used: u64,
    pub reserved: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Bar1 {
    pub total: u64,
    pub free: u64,
    pub used: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Pcie {
    pub gen: u32,
    pub max_gen: u32,
    pub width: u32,
    pub max_width: u32,
}

/// MHz. NVML_CLOCK_GRAPHICS answers the SM values; VIDEO is not supported.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Clocks {
    pub sm: u32,
    pub mem: u32,
    pub max_sm: u32,
    pub max_mem: u32,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Ecc {
    pub current: bool,
    pub pending: bool,
    /// DRAM totals (nvmlDeviceGetTotalEccErrors); absent → NOT_SUPPORTED.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volatile: Option<EccCounts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<EccCounts>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct EccCounts {
    pub corrected: u64,
    pub uncorrected: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RetiredPages {
    /// Page addresses retired for multiple single-bit errors.
    pub sbe: Vec<u64>,
    /// Page addresses retired for a double-bit error.
    pub dbe: Vec<u64>,
    pub pending: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RemappedRows {
    pub correctable: u32,
    pub uncorrectable: u32,
    pub pending: bool,
    pub failure: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Mig {
    pub current: bool,
    pub pending: bool,
    /// nvmlDeviceGetMaxMigDeviceCount while MIG is on (0 while off).
    pub max_devices: u32,
    /// Slot i = MIG device index i; slots past the list answer NOT_FOUND.
    pub instances: Vec<MigInstance>,
}

impl Default for Mig {
    fn default() -> Mig {
        Mig {
            current: false,
            pending: false,
            max_devices: 7,
            instances: Vec::new(),
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct MigInstance {
    pub uuid: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<Memory>,
    pub gpu_instance_id: u32,
    pub compute_instance_id: u32,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Process {
    pub pid: u32,
    /// Bytes; absent → NVML_VALUE_NOT_AVAILABLE (u64::MAX).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_memory: Option<u64>,
    /// MIG placement; absent → 0xFFFFFFFF. A MIG device lists the processes of its GI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_instance_id: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_instance_id: Option<u32>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FabricState {
    NotSupported,
    #[default]
    NotStarted,
    InProgress,
    Completed,
}

impl FabricState {
    // The cdylib's answer; the tests write the enum by name.
    #[allow(dead_code)]
    pub fn code(self) -> u8 {
        match self {
            FabricState::NotSupported => 0,
            FabricState::NotStarted => 1,
            FabricState::InProgress => 2,
            FabricState::Completed => 3,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Fabric {
    /// 32 hex digits, dashes allowed.
    pub cluster_uuid: String,
    /// An NVML return code: 0 = registered successfully.
    pub status: u32,
    pub clique_id: u32,
    pub state: FabricState,
    /// Only in nvmlDeviceGetGpuFabricInfoV (v2/v3).
    pub health_mask: u32,
    pub health_summary: u8,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Topology {
    /// nvmlGpuTopologyLevel_t for pairs not listed; absent → NOT_SUPPORTED.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_level: Option<u32>,
    pub pairs: Vec<TopoPair>,
}

/// One unordered GPU pair (by index); the last entry for a pair wins.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TopoPair {
    pub a: u32,
    pub b: u32,
    /// 0 internal, 10 single, 20 multiple, 30 hostbridge, 40 node, 50 system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
    /// nvmlGpuP2PStatus_t for every capability index; absent → the default rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p2p: Option<u32>,
}
