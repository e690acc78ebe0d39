//! What the `nvml` probe (src/probes/nvml.rs) records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One NVML answer: the value, "not supported" (normal on many GPUs), the driver lacks
/// the function (an older driver), or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Field_of_{T}")]
pub enum Field<T> {
    Value(T),
    NotSupported,
    NotInDriver,
    Error(String),
}

impl<T> Field<T> {
    pub fn get(&self) -> Option<&T> {
        match self {
            Field::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Field<U> {
        match self {
            Field::Value(v) => Field::Value(f(v)),
            Field::NotSupported => Field::NotSupported,
            Field::NotInDriver => Field::NotInDriver,
            Field::Error(e) => Field::Error(e),
        }
    }

    /// How a missing value reads in a table.
    /// NVML's error for this field, when the query failed (not "not supported").
    pub fn error(&self) -> Option<&str> {
        match self {
            Field::Error(e) => Some(e),
            _ => None,
        }
    }

    pub fn why_missing(&self) -> &str {
        match self {
            Field::Value(_) => "",
            Field::NotSupported => "not supported",
            Field::NotInDriver => "not in this driver",
            Field::Error(e) => e,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NvmlSystem {
    pub driver_version: Field<String>,
    /// The newest CUDA the driver supports ("13.0"), as nvmlSystemGetCudaDriverVersion_v2 says.
    pub cuda_driver_version: Field<String>,
    pub nvml_version: Field<String>,
    pub device_count: Field<u32>,
    pub devices: Vec<Gpu>,
    /// Every GPU pair: how they connect and whether P2P reads work.
    pub topology: Vec<TopologyPair>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Gpu {
    /// NVML's index (PCI bus order).
    pub index: u32,
    /// Set when NVML could not even give a handle (e.g. "gpu_is_lost": Xid 79).
    pub handle_error: Option<String>,
    pub name: Field<String>,
    pub uuid: Field<String>,
    pub serial: Field<String>,
    pub pci_bus_id: Field<String>,
    pub pci_device_id: Field<String>,
    pub minor_number: Field<u32>,
    pub architecture: Field<String>,
    pub compute_capability: Field<String>,
    pub memory: Field<Memory>,
    pub bar1: Field<Bar1>,
    pub pcie: Pcie,
    pub temperature_c: Field<u32>,
    pub temperature_slowdown_c: Field<u32>,
    pub temperature_shutdown_c: Field<u32>,
    pub power_usage_mw: Field<u32>,
    pub power_limit_mw: Field<u32>,
    pub clocks: Clocks,
    pub throttle: Field<Throttle>,
    pub ecc: Ecc,
    pub retired_pages: Field<RetiredPages>,
    pub retired_pages_pending: Field<bool>,
    pub remapped_rows: Field<RemappedRows>,
    pub persistence_mode: Field<bool>,
    pub compute_mode: Field<String>,
    pub mig: Mig,
    pub processes: Field<Vec<Process>>,
    /// Active state of each NVLink, in link order.
    pub nvlinks: Field<Vec<bool>>,
    /// For each NVLink in link order, the PCI bus id at its other end when it is active
    /// (a peer GPU, or an NVSwitch).
    #[serde(default = "not_recorded::<Vec<Option<String>>>")]
    pub nvlink_remotes: Field<Vec<Option<String>>>,
    pub fabric: Field<Fabric>,
    pub recovery_action: Field<String>,
    /// nvmlDeviceGetPcieReplayCounter: the PCIe link's replays (retransmitted packets).
    #[serde(default = "not_recorded::<u32>")]
    pub pcie_replay_counter: Field<u32>,
    /// Per NVLink in link order, its error counters (nvmlDeviceGetNvLinkErrorCounter); None
    /// for a link that is down.
    #[serde(default = "not_recorded::<Vec<Option<NvLinkErrors>>>")]
    pub nvlink_errors: Field<Vec<Option<NvLinkErrors>>>,
}

/// One NVLink's data-link error counters (nvmlNvLinkErrorCounter_t).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NvLinkErrors {
    pub replay: u64,
    pub recovery: u64,
    pub crc_flit: u64,
    pub crc_data: u64,
}

/// A GPU's link error counters as a second read gives them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuCounters {
    pub index: u32,
    pub pcie_replay_counter: Field<u32>,
    pub nvlink_errors: Field<Vec<Option<NvLinkErrors>>>,
}

/// The link error counters read again after the smoke test (`__nvml-worker --counters`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CountersAgain {
    /// What ran between the two reads.
    pub after: String,
    /// Milliseconds between the NVML probe and the second read.
    pub elapsed_ms: u64,
    /// The GPUs read; empty with `error` set when the second read failed.
    pub gpus: Vec<GpuCounters>,
    pub error: Option<String>,
}

impl Gpu {
    pub fn label(&self) -> String {
        match self.name.get() {
            Some(n) => format!("GPU {} ({n})", self.index),
            None => format!("GPU {}", self.index),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Memory {
    pub total: u64,
    pub used: u64,
    pub free: u64,
    pub reserved: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bar1 {
    pub total: u64,
    pub used: u64,
    pub free: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pcie {
    pub generation: Field<u32>,
    pub max_generation: Field<u32>,
    pub width: Field<u32>,
    pub max_width: Field<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Clocks {
    pub sm_mhz: Field<u32>,
    pub memory_mhz: Field<u32>,
    pub max_sm_mhz: Field<u32>,
    pub max_memory_mhz: Field<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Throttle {
    pub bits: u64,
    /// NVML's reason names (GPU_IDLE, SW_POWER_CAP, HW_SLOWDOWN, SW_THERMAL_SLOWDOWN, …).
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ecc {
    pub enabled: Field<bool>,
    pub pending: Field<bool>,
    pub volatile_corrected: Field<u64>,
    pub volatile_uncorrected: Field<u64>,
    pub aggregate_corrected: Field<u64>,
    pub aggregate_uncorrected: Field<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RetiredPages {
    pub single_bit: u32,
    pub double_bit: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RemappedRows {
    pub correctable: u32,
    pub uncorrectable: u32,
    pub pending: bool,
    pub failure: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Mig {
    pub enabled: Field<bool>,
    pub pending: Field<bool>,
    pub instances: Vec<MigInstance>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MigInstance {
    pub index: u32,
    pub uuid: Field<String>,
    pub memory_total: Field<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Process {
    pub pid: u32,
    /// "compute" or "graphics".
    pub kind: String,
    /// From /proc/PID/comm; None when the process is in another PID namespace or gone.
    pub name: Option<String>,
    pub used_memory: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Fabric {
    /// not_started, in_progress, completed.
    pub state: String,
    /// The NVML return code of the fabric registration, as a name ("success", …).
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TopologyPair {
    pub a: u32,
    pub b: u32,
    pub common_ancestor: Field<String>,
    pub p2p_read: Field<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NvmlProbe {
    /// The library asked for: a path from --nvml-lib, or the loader's libnvidia-ml.so.1.
    pub library: String,
    pub result: NvmlResult,
    /// The link error counters read again after the smoke test ran (None when it did not).
    #[serde(default)]
    pub counters_again: Option<CountersAgain>,
    /// `gpudoctor devices` asked to see the GPUs: finding none fails it, as `smoke` fails
    /// when it tested nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requested: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum NvmlResult {
    Ok {
        system: NvmlSystem,
    },
    NotProbed {
        reason: String,
    },
    /// nvmlInit failed; `code` is the NVML error in snake case (driver_not_loaded,
    /// lib_rm_version_mismatch, no_permission, library_not_found, …).
    InitFailed {
        code: String,
        message: String,
    },
    TimedOut {
        seconds: f64,
        /// What NVML answered before the call that hung (system facts, the GPUs before it).
        #[serde(default)]
        partial: Option<NvmlSystem>,
        /// Where it hung ("GPU 3", "topology", "the system queries"), as far as the answers say.
        #[serde(default)]
        stuck_at: Option<String>,
    },
    Crashed {
        signal: i32,
        stderr: String,
    },
    WorkerFailed {
        detail: String,
    },
}

impl NvmlProbe {
    /// NVML's facts: complete, or what came before a hang.
    pub fn system(&self) -> Option<&NvmlSystem> {
        match &self.result {
            NvmlResult::Ok { system } => Some(system),
            NvmlResult::TimedOut {
                partial: Some(system),
                ..
            } => Some(system),
            _ => None,
        }
    }
}

/// A field a snapshot from an older gpudoctor does not have.
pub(crate) fn not_recorded<T>() -> Field<T> {
    Field::Error("not recorded in this snapshot".into())
}
