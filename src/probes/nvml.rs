//! The driver and GPUs as NVML sees them. NVML runs in a child process (`gpudoctor
//! __nvml-worker`, src/nvml_worker.rs, started by src/worker.rs) under a deadline: a GPU
//! fallen off the bus makes NVML calls block, and a vendor library can crash; either
//! becomes a fact here, never a hang.

use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::fsys::HostFs;
use crate::worker::{self, Outcome};

/// The library NVML comes from when --nvml-lib is not given: the loader's choice.
pub const DEFAULT_LIB: &str = "libnvidia-ml.so.1";
/// The worker's JSON for a big node is tens of KiB; this leaves room for MIG-heavy ones.
const WORKER_OUTPUT_LIMIT: usize = 8 * 1024 * 1024;

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

/// A field a snapshot from an older gpudoctor does not have.
fn not_recorded<T>() -> Field<T> {
    Field::Error("not recorded in this snapshot".into())
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

/// One line of the worker's answer (JSON lines, in this order: system, one per GPU,
/// topology, done; or init_failed alone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkerLine {
    InitFailed {
        code: String,
        message: String,
    },
    System {
        driver_version: Field<String>,
        cuda_driver_version: Field<String>,
        nvml_version: Field<String>,
        device_count: Field<u32>,
    },
    Gpu {
        gpu: Box<Gpu>,
    },
    Topology {
        pairs: Vec<TopologyPair>,
    },
    /// `--counters`: one GPU's link error counters.
    Counters {
        counters: GpuCounters,
    },
    Done,
}

/// What the lines add up to: the system (possibly partial), whether it finished, or
/// nvmlInit's failure.
enum Answer {
    System { system: NvmlSystem, done: bool },
    InitFailed { code: String, message: String },
    Nothing,
}

/// The NVML worker's side of the protocol.
struct Nvml;

impl worker::Protocol for Nvml {
    const NAME: &'static str = "NVML worker";
    type Line = WorkerLine;
    type Answer = Answer;

    fn assemble(&self, lines: Vec<WorkerLine>) -> Answer {
        let mut system: Option<NvmlSystem> = None;
        let mut done = false;
        for line in lines {
            match line {
                WorkerLine::InitFailed { code, message } => {
                    return Answer::InitFailed { code, message }
                }
                WorkerLine::System {
                    driver_version,
                    cuda_driver_version,
                    nvml_version,
                    device_count,
                } => {
                    system = Some(NvmlSystem {
                        driver_version,
                        cuda_driver_version,
                        nvml_version,
                        device_count,
                        devices: Vec::new(),
                        topology: Vec::new(),
                    })
                }
                WorkerLine::Gpu { gpu } => {
                    if let Some(s) = system.as_mut() {
                        s.devices.push(*gpu);
                    }
                }
                WorkerLine::Topology { pairs } => {
                    if let Some(s) = system.as_mut() {
                        s.topology = pairs;
                    }
                }
                WorkerLine::Counters { .. } => {}
                WorkerLine::Done => done = true,
            }
        }
        match system {
            Some(system) => Answer::System { system, done },
            None => Answer::Nothing,
        }
    }

    fn stuck_at(&self, answer: &Answer) -> Vec<String> {
        vec![match answer {
            Answer::System { system, .. } => {
                let n = system.device_count.get().copied().unwrap_or(0) as usize;
                let got = system.devices.len();
                if got < n {
                    format!("GPU {got}")
                } else {
                    "the GPU-pair topology".to_string()
                }
            }
            _ => "nvmlInit or the system queries".to_string(),
        }]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NvmlProbe {
    /// The library asked for: a path from --nvml-lib, or the loader's libnvidia-ml.so.1.
    pub library: String,
    pub result: NvmlResult,
    /// The link error counters read again after the smoke test ran (None when it did not).
    #[serde(default)]
    pub counters_again: Option<CountersAgain>,
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

/// Runs the worker on `lib` (None: the loader's default) within `timeout`, unless
/// `no_driver` says why the library must not be loaded.
/// The result dlopen would give when no loader step finds the library, without spawning
/// the worker to hear it.
pub fn not_found(cfg: &crate::loader::SearchConfig) -> NvmlProbe {
    let mut places: Vec<String> = cfg
        .ld_library_path
        .iter()
        .filter(|(_, d)| d.is_some())
        .map(|(e, _)| format!("LD_LIBRARY_PATH entry {e}"))
        .collect();
    if cfg.cache.is_some() {
        places.push(crate::probes::libraries::LD_SO_CACHE.to_string());
    }
    places.extend(cfg.default_dirs.iter().map(|d| d.display().to_string()));
    NvmlProbe {
        library: DEFAULT_LIB.to_string(),
        result: NvmlResult::InitFailed {
            code: "library_not_found".into(),
            message: format!(
                "{DEFAULT_LIB}: cannot open shared object file: No such file or directory (no loader step finds it: {}; not loaded)",
                places.join(", ")
            ),
        },
        counters_again: None,
    }
}

pub fn probe(
    fs: &HostFs,
    lib: Option<&Path>,
    timeout: Duration,
    no_driver: Option<String>,
) -> NvmlProbe {
    let (lib, library) = worker::library_to_load(lib, DEFAULT_LIB);
    let result = run(fs, lib.as_deref(), &library, timeout, no_driver);
    NvmlProbe {
        library,
        result,
        counters_again: None,
    }
}

/// The counters half of the protocol: `__nvml-worker --counters`.
struct NvmlCounters;

impl worker::Protocol for NvmlCounters {
    const NAME: &'static str = "NVML worker (counters)";
    type Line = WorkerLine;
    type Answer = (Vec<GpuCounters>, bool, Option<String>);

    fn assemble(&self, lines: Vec<WorkerLine>) -> Self::Answer {
        let mut gpus = Vec::new();
        let mut done = false;
        let mut failed = None;
        for line in lines {
            match line {
                WorkerLine::Counters { counters } => gpus.push(counters),
                WorkerLine::InitFailed { code, message } => {
                    failed = Some(format!("{code}: {message}"))
                }
                WorkerLine::Done => done = true,
                _ => {}
            }
        }
        (gpus, done, failed)
    }

    fn stuck_at(&self, answer: &Self::Answer) -> Vec<String> {
        vec![format!("GPU {}", answer.0.len())]
    }
}

/// Reads every GPU's link error counters again in a fresh worker (after the smoke test):
/// what grew since the probe is happening now.
pub fn read_counters_again(
    probe: &NvmlProbe,
    timeout: Duration,
    clean_loader_env: bool,
    after: &str,
    elapsed_ms: u64,
) -> CountersAgain {
    let args = [
        "__nvml-worker".to_string(),
        format!("--lib={}", probe.library),
        "--counters".to_string(),
    ];
    let outcome = worker::run(
        &NvmlCounters,
        worker::Request {
            args: &args,
            timeout,
            output_limit: WORKER_OUTPUT_LIMIT,
            clean_loader_env,
            on_line: None,
        },
    );
    let (gpus, error) = match outcome {
        Outcome::Exited {
            answer: (gpus, true, None),
            ..
        } => (gpus, None),
        Outcome::Exited {
            answer: (_, _, Some(e)),
            ..
        } => (Vec::new(), Some(e)),
        Outcome::Exited { exit, .. } => (Vec::new(), Some(exit.without_answer())),
        Outcome::TimedOut { seconds, .. } => {
            (Vec::new(), Some(format!("no answer within {seconds} s")))
        }
        Outcome::FailedToStart { detail } => (Vec::new(), Some(detail)),
        Outcome::Crashed { signal, .. } => (
            Vec::new(),
            Some(format!("the worker crashed (signal {signal})")),
        ),
    };
    CountersAgain {
        after: after.into(),
        elapsed_ms,
        gpus,
        error,
    }
}

fn run(
    fs: &HostFs,
    lib: Option<&Path>,
    library: &str,
    timeout: Duration,
    no_driver: Option<String>,
) -> NvmlResult {
    if let Some(reason) = worker::refuse_under_root(fs.root(), lib, "--nvml-lib").or(no_driver) {
        return NvmlResult::NotProbed { reason };
    }
    let args = ["__nvml-worker".to_string(), format!("--lib={library}")];
    let outcome = worker::run(
        &Nvml,
        worker::Request {
            args: &args,
            timeout,
            output_limit: WORKER_OUTPUT_LIMIT,
            clean_loader_env: fs.root().is_some(),
            on_line: None,
        },
    );
    match outcome {
        Outcome::TimedOut {
            answer,
            stuck_at,
            seconds,
            ..
        } => NvmlResult::TimedOut {
            seconds,
            partial: match answer {
                Answer::System { system, .. } => Some(system),
                _ => None,
            },
            stuck_at: stuck_at.into_iter().next(),
        },
        Outcome::FailedToStart { detail } => NvmlResult::WorkerFailed { detail },
        Outcome::Crashed { signal, stderr, .. } => NvmlResult::Crashed { signal, stderr },
        Outcome::Exited { answer, exit } => match answer {
            Answer::System { system, done: true } => NvmlResult::Ok { system },
            Answer::InitFailed { code, message } => NvmlResult::InitFailed { code, message },
            _ => NvmlResult::WorkerFailed {
                detail: exit.without_answer(),
            },
        },
    }
}
