//! What the `smoke` probe (src/probes/smoke.rs) records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The library the smoke test loads without --cuda-lib: the soname the CUDA runtime opens.
pub const DEFAULT_LIB: &str = "libcuda.so.1";

/// A failed driver call: which call, the CUresult, and the driver's own words for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CudaError {
    pub call: String,
    pub code: i32,
    /// CUDA_ERROR_OUT_OF_MEMORY, from cuGetErrorName (or gpudoctor's table when the
    /// driver has no name for it).
    pub name: String,
    pub message: String,
}

impl std::fmt::Display for CudaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} returned {} ({}: {})",
            self.call, self.code, self.name, self.message
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SmokeSettings {
    /// N of the N×N FP32 matmul.
    pub matmul_size: u32,
    /// Share of the free memory the allocation probe aims for.
    pub mem_fraction: f64,
    /// Bytes per transfer-bandwidth copy.
    pub transfer_bytes: u64,
    /// Only this CUDA ordinal (None: every visible GPU, concurrently).
    pub device: Option<u32>,
    /// Only the GPU with this UUID (or unique prefix) or PCI bus id, as CUDA lists them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    /// Asked for by `gpudoctor smoke`: a test that proves nothing is an error then.
    #[serde(default)]
    pub requested: bool,
}

impl Default for SmokeSettings {
    fn default() -> Self {
        SmokeSettings {
            matmul_size: 1024,
            mem_fraction: 0.9,
            transfer_bytes: 256 << 20,
            device: None,
            device_id: None,
            requested: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SmokeProbe {
    /// The library asked for: a --cuda-lib path, or the loader's libcuda.so.1.
    pub library: String,
    pub settings: SmokeSettings,
    pub result: SmokeResult,
    /// `--nccl`: the NCCL all-reduce step asked for (what the worker ran is in the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl: Option<crate::smoke::nccl::NcclRequest>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SmokeResult {
    /// The worker finished (each device's steps may still have failed).
    Ran {
        run: SmokeRun,
    },
    NotRun {
        reason: String,
    },
    /// libcuda could not be loaded or lacks an entry point.
    LoadFailed {
        code: String,
        message: String,
    },
    TimedOut {
        seconds: f64,
        /// What the worker reported before it was killed.
        run: SmokeRun,
        /// Where each unfinished GPU was stuck ("cuInit", "GPU 1: context").
        stuck_at: Vec<String>,
        /// SIGKILL did not end the worker: it is stuck inside the kernel driver.
        #[serde(default)]
        unkillable: bool,
    },
    Crashed {
        signal: i32,
        stderr: String,
        run: SmokeRun,
        /// The step each unfinished GPU was in when the process died.
        during: Vec<String>,
    },
    WorkerFailed {
        detail: String,
    },
}

impl SmokeProbe {
    /// The facts gathered, complete or partial.
    pub fn run(&self) -> Option<&SmokeRun> {
        match &self.result {
            SmokeResult::Ran { run }
            | SmokeResult::TimedOut { run, .. }
            | SmokeResult::Crashed { run, .. } => Some(run),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SmokeRun {
    /// The file the loader mapped for the library asked for.
    pub loaded_from: Option<String>,
    /// Whether cuInit answered at all (false: the worker died or hung before it).
    pub init_done: bool,
    pub init_error: Option<CudaError>,
    /// cuDriverGetVersion: 12040 for CUDA 12.4.
    pub driver_version: Option<i32>,
    pub device_count: Option<i32>,
    pub count_error: Option<CudaError>,
    /// CUDA_VISIBLE_DEVICES as the worker saw it.
    pub cuda_visible_devices: Option<String>,
    /// The last driver call announced before the GPUs' own work.
    #[serde(default)]
    pub stage: Option<String>,
    pub devices: Vec<SmokeDevice>,
    /// Peer-to-peer copies between every ordered pair of tested GPUs (two or more), in the
    /// order they ran; a pair that started and never reported has `finished: false`.
    #[serde(default)]
    pub peers: Vec<PeerCopy>,
    /// `--nccl`: the all-reduce over every tested GPU, after their own steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl: Option<crate::smoke::nccl::NcclRun>,
    pub finished: bool,
    pub elapsed_ms: f64,
}

impl SmokeRun {
    /// The peer pair the worker was in when it stopped (a hang or crash in its calls).
    pub fn peer_unfinished(&self) -> Option<&PeerCopy> {
        self.peers.iter().find(|p| !p.finished)
    }

    /// The peer pair from CUDA device `from` to `to`.
    pub fn peer(&self, from: u32, to: u32) -> Option<&PeerCopy> {
        self.peers.iter().find(|p| p.from == from && p.to == to)
    }

    /// "12.4" from 12040.
    pub fn driver_cuda(&self) -> Option<String> {
        self.driver_version
            .and_then(|v| crate::compat::CudaVersion::from_encoded(i64::from(v)))
            .map(|c| c.to_string())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SmokeDevice {
    /// CUDA's ordinal (after CUDA_VISIBLE_DEVICES).
    pub ordinal: u32,
    pub info: Option<DeviceInfo>,
    pub info_error: Option<CudaError>,
    pub context: Option<Step<Timing>>,
    pub module: Option<Step<Timing>>,
    pub matmul: Option<Step<Matmul>>,
    pub memory: Option<Step<MemoryProbe>>,
    pub transfer: Option<Step<Transfer>>,
    /// The step that started and never reported (a hang or crash inside it).
    pub running: Option<String>,
    pub finished: bool,
    pub elapsed_ms: f64,
}

impl SmokeDevice {
    pub fn label(&self) -> String {
        match self.info.as_ref().map(|i| i.name.as_str()) {
            Some(n) if !n.is_empty() => format!("CUDA device {} ({n})", self.ordinal),
            _ => format!("CUDA device {}", self.ordinal),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceInfo {
    pub name: String,
    pub uuid: Option<String>,
    pub pci_bus_id: Option<String>,
    pub compute_capability: Option<String>,
    pub sm_count: Option<i32>,
    pub total_memory: Option<u64>,
    /// CU_DEVICE_ATTRIBUTE_INTEGRATED: the GPU shares the host's memory.
    #[serde(default)]
    pub integrated: Option<bool>,
}

/// One step's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Step_of_{T}")]
pub enum Step<T> {
    Ok(T),
    Failed {
        error: CudaError,
        /// The JIT log for a module that failed to load, and the like.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        // Absent rather than null when there is none.
        #[schemars(with = "String")]
        detail: Option<String>,
    },
    Skipped {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timing {
    pub ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Matmul {
    pub n: u32,
    /// Median of the timed launches.
    pub ms: f64,
    pub gflops: f64,
    pub checked_rows: u32,
    pub wrong_elements: u64,
    pub max_abs_error: f64,
    /// Largest error over its tolerance (≤ 1 passes).
    pub max_error_ratio: f64,
    pub freivalds_passed: bool,
    pub correct: bool,
    pub tolerance: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryProbe {
    pub total: u64,
    pub free_before: u64,
    pub fraction: f64,
    /// Why the fraction was lowered (other processes on the GPU).
    pub lowered_because: Option<String>,
    pub target: u64,
    pub chunk_bytes: u64,
    pub chunks: u32,
    pub allocated: u64,
    /// The allocation that failed before the target, and how much was held then.
    pub alloc_error: Option<CudaError>,
    pub failed_at: Option<u64>,
    /// Both passes (pattern and its complement) over everything allocated.
    pub fill_gbps: Option<f64>,
    pub verify_gbps: Option<f64>,
    pub mismatches: u64,
    /// A kernel error during fill/verify (the memory was still freed).
    pub kernel_error: Option<CudaError>,
    pub ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Transfer {
    pub bytes: u64,
    /// The size was cut so every GPU's copies fit in half the host's available memory.
    #[serde(default)]
    pub host_memory_cap: bool,
    pub iterations: u32,
    /// Median GB/s (10⁹ B/s) of each direction and host-memory kind.
    pub pinned_h2d_gbps: Option<f64>,
    pub pinned_d2h_gbps: Option<f64>,
    pub pageable_h2d_gbps: Option<f64>,
    pub pageable_d2h_gbps: Option<f64>,
    /// Pinned host memory could not be had (the pinned figures are then missing).
    pub pinned_error: Option<CudaError>,
    /// The CPUs the copying thread ran on: those sysfs lists as local to the GPU.
    #[serde(default)]
    pub cpu_affinity: Option<String>,
    /// Device-memory bandwidth: median GB/s of `cuMemcpyDtoD` between two buffers of `bytes`
    /// on the GPU, timed by the GPU's own events and counted as bytes read plus bytes
    /// written (2 × bytes per copy, as CUDA's bandwidthTest counts a device-to-device copy).
    #[serde(default)]
    pub device_gbps: Option<f64>,
    /// The size of those copies: `bytes`, or less where the GPU had no room for a second
    /// buffer that size.
    #[serde(default)]
    pub device_bytes: Option<u64>,
    /// Why there is no device-to-device figure when no copy was tried (no room for a second
    /// buffer even of 8 MiB).
    #[serde(default)]
    pub device_skipped: Option<String>,
    /// The device-to-device copy failed (the host figures stand).
    #[serde(default)]
    pub device_error: Option<CudaError>,
}

/// One ordered pair of the peer step: can `from` reach `to`'s memory directly, and what a
/// copy `from` → `to` delivered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PeerCopy {
    /// CUDA ordinals of the source and destination GPU.
    pub from: u32,
    pub to: u32,
    /// cuDeviceGetPCIBusId of each ("0000:18:00.0").
    pub from_bus_id: Option<String>,
    pub to_bus_id: Option<String>,
    /// cuDeviceCanAccessPeer(from, to): true, false (copies are staged through host
    /// memory), or the call's error. None: not asked (the pair was skipped).
    pub can_access: Option<Step<bool>>,
    /// cuCtxEnablePeerAccess from `from`'s primary context to `to`'s; None when access was
    /// not offered. An already enabled access counts as done.
    pub enable: Option<Step<Timing>>,
    /// The timed, verified cuMemcpyPeerAsync; None when access was not offered or enabling
    /// it failed.
    pub copy: Option<Step<PeerBandwidth>>,
    /// The driver call announced and not answered (set while the pair runs; kept when the
    /// worker hung or died in it).
    pub running: Option<String>,
    pub finished: bool,
}

impl PeerCopy {
    /// "CUDA device 0 → 1".
    pub fn label(&self) -> String {
        format!("CUDA device {} → {}", self.from, self.to)
    }

    /// cuDeviceCanAccessPeer said yes.
    pub fn access_offered(&self) -> bool {
        matches!(self.can_access, Some(Step::Ok(true)))
    }

    /// What went wrong on this pair (GD074's cases), if anything. `timed_out`: the worker
    /// was killed at its deadline, so a pair left unfinished hung (after a crash it is the
    /// crash's, GD059).
    pub fn fault(&self, timed_out: bool) -> Option<PeerFault> {
        if !self.finished {
            return timed_out.then_some(PeerFault::Hung);
        }
        match (&self.can_access, &self.enable, &self.copy) {
            (Some(Step::Failed { .. }), _, _) => Some(PeerFault::AccessQueryFailed),
            (_, Some(Step::Failed { .. }), _) => Some(PeerFault::EnableFailed),
            (_, _, Some(Step::Failed { .. })) => Some(PeerFault::CopyFailed),
            (_, _, Some(Step::Ok(c))) if !c.verified => Some(PeerFault::WrongData),
            _ => None,
        }
    }
}

/// A peer pair's fault, as GD074 reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerFault {
    /// The worker was killed at its deadline inside this pair's calls (`running` names the call).
    Hung,
    /// cuDeviceCanAccessPeer returned an error.
    AccessQueryFailed,
    /// Access was offered and cuCtxEnablePeerAccess failed.
    EnableFailed,
    /// A peer copy (or its fill, stream or verify call) returned an error.
    CopyFailed,
    /// The copy arrived with mismatched words.
    WrongData,
}

impl PeerFault {
    /// What happened, after the pair's label ("CUDA device 0 → 1 hung").
    pub fn describe(self) -> &'static str {
        match self {
            PeerFault::Hung => "hung",
            PeerFault::AccessQueryFailed => "could not query peer access",
            PeerFault::EnableFailed => "could not enable peer access",
            PeerFault::CopyFailed => "failed",
            PeerFault::WrongData => "delivered wrong data",
        }
    }
}

impl SmokeProbe {
    /// Every peer pair with a fault, in the order the pairs ran.
    pub fn peer_faults(&self) -> Vec<(&PeerCopy, PeerFault)> {
        let timed_out = matches!(self.result, SmokeResult::TimedOut { .. });
        self.run()
            .map(|r| {
                r.peers
                    .iter()
                    .filter_map(|p| Some((p, p.fault(timed_out)?)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PeerBandwidth {
    /// Bytes per copy.
    pub bytes: u64,
    /// Timed copies after one warm-up.
    pub iterations: u32,
    /// Median of the timed copies (each to cuStreamSynchronize), and the GB/s (10⁹ B/s) it gives.
    pub ms: f64,
    pub gbps: f64,
    /// Words of the destination that differ from the source's pattern after the copies.
    pub mismatches: u64,
    /// Every word arrived as sent.
    pub verified: bool,
}

/// The NVML GPU a CUDA device is: same UUID, else same PCI address (NVML writes an
/// 8-digit domain, CUDA a 4-digit one).
pub fn nvml_gpu<'a>(
    sys: &'a crate::facts::nvml::NvmlSystem,
    d: &SmokeDevice,
) -> Option<&'a crate::facts::nvml::Gpu> {
    let info = d.info.as_ref()?;
    let norm = crate::facts::pci::sysfs_address;
    sys.devices
        .iter()
        .find(|g| match (g.uuid.get(), &info.uuid) {
            (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        })
        .or_else(|| {
            let bus = norm(info.pci_bus_id.as_deref()?);
            sys.devices
                .iter()
                .find(|g| g.pci_bus_id.get().is_some_and(|b| norm(b) == bus))
        })
}

/// The host link's theoretical bandwidth per direction, from NVML's maximum PCIe
/// generation and width.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    pub generation: u32,
    pub width: u32,
    pub gbps: f64,
}

pub fn link(gpu: &crate::facts::nvml::Gpu) -> Option<Link> {
    let generation = *gpu.pcie.max_generation.get()?;
    let width = *gpu.pcie.max_width.get()?;
    let lane = crate::smoke::pcie_lane_gbps(generation)?;
    (width > 0).then_some(Link {
        generation,
        width,
        gbps: lane * width as f64,
    })
}
