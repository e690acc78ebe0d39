//! The smoke test as facts: does each GPU compute, hold memory and move data? The work
//! runs in a child process (`gpudoctor __smoke-worker`, src/smoke/worker.rs, started by
//! src/worker.rs) under a deadline; a hang, a crash or a driver error becomes a fact here,
//! and what the worker streamed before it is kept.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::smoke::progress::{ProgressEvent, ProgressSink};
use crate::worker::{self, Outcome};

/// The library the smoke test loads without --cuda-lib: the soname the CUDA runtime opens.
pub const DEFAULT_LIB: &str = "libcuda.so.1";
const WORKER_OUTPUT_LIMIT: usize = 4 * 1024 * 1024;

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

/// One line of the worker's answer, flushed as it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkerLine {
    LoadFailed {
        code: String,
        message: String,
    },
    Loaded {
        path: String,
    },
    /// The driver call about to be made before any GPU work (cuInit, cuDeviceGetCount…).
    Stage {
        call: String,
    },
    Init {
        error: Option<CudaError>,
        driver_version: Option<i32>,
        device_count: Option<i32>,
        count_error: Option<CudaError>,
        cuda_visible_devices: Option<String>,
    },
    Device {
        ordinal: u32,
        info: Option<DeviceInfo>,
        error: Option<CudaError>,
    },
    Started {
        ordinal: u32,
        step: String,
    },
    Context {
        ordinal: u32,
        step: Step<Timing>,
    },
    Module {
        ordinal: u32,
        step: Step<Timing>,
    },
    Matmul {
        ordinal: u32,
        step: Step<Matmul>,
    },
    Memory {
        ordinal: u32,
        step: Step<MemoryProbe>,
    },
    Transfer {
        ordinal: u32,
        step: Step<Transfer>,
    },
    DeviceDone {
        ordinal: u32,
        elapsed_ms: f64,
    },
    /// The peer step is about to call `call` for the pair from → to.
    PeerStage {
        from: u32,
        to: u32,
        call: String,
    },
    /// The pair's outcome.
    Peer {
        peer: PeerCopy,
    },
    /// The NCCL step (`--nccl`), after every GPU's own steps.
    Nccl(crate::smoke::nccl::NcclLine),
    Done {
        elapsed_ms: f64,
    },
}

fn with(devices: &mut BTreeMap<u32, SmokeDevice>, ordinal: u32) -> &mut SmokeDevice {
    devices.entry(ordinal).or_insert_with(|| SmokeDevice {
        ordinal,
        ..SmokeDevice::default()
    })
}

enum Assembled {
    LoadFailed { code: String, message: String },
    Run(Box<SmokeRun>),
}

/// The smoke worker's side of the protocol; `device` is the one GPU asked for, if any.
struct Smoke {
    device: Option<u32>,
}

impl worker::Protocol for Smoke {
    const NAME: &'static str = "smoke worker";
    type Line = WorkerLine;
    type Answer = Assembled;

    fn assemble(&self, lines: Vec<WorkerLine>) -> Assembled {
        assemble(lines)
    }

    fn stuck_at(&self, answer: &Assembled) -> Vec<String> {
        match answer {
            Assembled::Run(run) => unfinished(run, self.device),
            Assembled::LoadFailed { .. } => unfinished(&SmokeRun::default(), self.device),
        }
    }
}

fn assemble(lines: Vec<WorkerLine>) -> Assembled {
    let mut run = SmokeRun::default();
    let mut devices: BTreeMap<u32, SmokeDevice> = BTreeMap::new();
    for line in lines {
        match line {
            WorkerLine::LoadFailed { code, message } => {
                return Assembled::LoadFailed { code, message }
            }
            WorkerLine::Loaded { path } => run.loaded_from = Some(path),
            WorkerLine::Stage { call } => run.stage = Some(call),
            WorkerLine::Init {
                error,
                driver_version,
                device_count,
                count_error,
                cuda_visible_devices,
            } => {
                run.init_done = true;
                run.init_error = error;
                run.driver_version = driver_version;
                run.device_count = device_count;
                run.count_error = count_error;
                run.cuda_visible_devices = cuda_visible_devices;
            }
            WorkerLine::Device {
                ordinal,
                info,
                error,
            } => {
                let d = with(&mut devices, ordinal);
                d.info = info;
                d.info_error = error;
            }
            WorkerLine::Started { ordinal, step } => {
                with(&mut devices, ordinal).running = Some(step)
            }
            WorkerLine::Context { ordinal, step } => {
                let d = with(&mut devices, ordinal);
                d.context = Some(step);
                d.running = None;
            }
            WorkerLine::Module { ordinal, step } => {
                let d = with(&mut devices, ordinal);
                d.module = Some(step);
                d.running = None;
            }
            WorkerLine::Matmul { ordinal, step } => {
                let d = with(&mut devices, ordinal);
                d.matmul = Some(step);
                d.running = None;
            }
            WorkerLine::Memory { ordinal, step } => {
                let d = with(&mut devices, ordinal);
                d.memory = Some(step);
                d.running = None;
            }
            WorkerLine::Transfer { ordinal, step } => {
                let d = with(&mut devices, ordinal);
                d.transfer = Some(step);
                d.running = None;
            }
            WorkerLine::DeviceDone {
                ordinal,
                elapsed_ms,
            } => {
                let d = with(&mut devices, ordinal);
                d.finished = true;
                d.running = None;
                d.elapsed_ms = elapsed_ms;
            }
            WorkerLine::PeerStage { from, to, call } => {
                match run.peers.iter_mut().find(|p| p.from == from && p.to == to) {
                    Some(p) => p.running = Some(call),
                    None => run.peers.push(PeerCopy {
                        from,
                        to,
                        running: Some(call),
                        ..PeerCopy::default()
                    }),
                }
            }
            WorkerLine::Peer { peer } => {
                let done = PeerCopy {
                    running: None,
                    finished: true,
                    ..peer
                };
                match run
                    .peers
                    .iter_mut()
                    .find(|p| p.from == done.from && p.to == done.to)
                {
                    Some(p) => *p = done,
                    None => run.peers.push(done),
                }
            }
            WorkerLine::Nccl(line) => crate::smoke::nccl::apply(&mut run.nccl, line),
            WorkerLine::Done { elapsed_ms } => {
                run.finished = true;
                run.elapsed_ms = elapsed_ms;
            }
        }
    }
    // A pair stopped before its report knows its GPUs' bus ids from their own steps.
    let bus = |o: u32| {
        devices
            .get(&o)
            .and_then(|d| d.info.as_ref()?.pci_bus_id.clone())
    };
    for p in &mut run.peers {
        p.from_bus_id = p.from_bus_id.take().or_else(|| bus(p.from));
        p.to_bus_id = p.to_bus_id.take().or_else(|| bus(p.to));
    }
    run.devices = devices.into_values().collect();
    Assembled::Run(Box::new(run))
}

/// Where the unfinished parts of a run were when it stopped.
fn unfinished(run: &SmokeRun, device: Option<u32>) -> Vec<String> {
    if !run.init_done {
        return vec![run
            .stage
            .clone()
            .unwrap_or_else(|| "loading libcuda".into())];
    }
    // A GPU whose thread never reported at all.
    let expected = crate::smoke::ordinals(device, run.device_count);
    let silent: Vec<u32> = expected
        .into_iter()
        .filter(|o| !run.devices.iter().any(|d| d.ordinal == *o))
        .collect();
    let mut out: Vec<String> = match silent.as_slice() {
        [] => Vec::new(),
        [o] => vec![format!("CUDA device {o}: before its first call")],
        [first, .., last] if silent.len() > 4 => vec![format!(
            "{} CUDA devices ({first}…{last}): before their first call",
            silent.len()
        )],
        _ => silent
            .iter()
            .map(|o| format!("CUDA device {o}: before its first call"))
            .collect(),
    };
    out.extend(
        run.devices
            .iter()
            .filter(|d| !d.finished)
            .map(|d| match &d.running {
                Some(step) => format!("{}: {step}", d.label()),
                None => format!("{}: between steps", d.label()),
            }),
    );
    if let Some(p) = run.peer_unfinished() {
        out.push(format!(
            "peer copy {}: {}",
            p.label(),
            p.running.as_deref().unwrap_or("between calls")
        ));
    }
    // --nccl: the all-reduce runs after every GPU's own steps.
    if out.is_empty() {
        out.extend(run.nccl.as_ref().and_then(crate::smoke::nccl::stuck_at));
    }
    if out.is_empty() && !run.finished {
        out.push("after the last GPU finished (driver teardown)".into());
    }
    out
}

/// What the parent passes down: the settings and which GPUs other processes use.
pub struct SmokeRequest<'a> {
    /// --cuda-lib (None: the loader's libcuda.so.1).
    pub lib: Option<&'a Path>,
    pub root: Option<&'a Path>,
    pub settings: SmokeSettings,
    /// UUIDs of GPUs NVML saw other compute processes on.
    pub shared_gpus: Vec<String>,
    pub timeout: Duration,
    /// Told what runs, for a live line on stderr (a terminal, human output).
    pub progress: Option<ProgressSink>,
    /// Why libcuda must not be loaded here (no NVIDIA kernel module: see
    /// `probes::no_kernel_driver`).
    pub no_driver: Option<String>,
    /// `--nccl`: the NCCL all-reduce step, and which libnccl it loads.
    pub nccl: Option<NcclAsk<'a>>,
}

/// What the NCCL step needs from the parent.
pub struct NcclAsk<'a> {
    /// --nccl-lib (None: `torch_binds`, else the loader's libnccl.so.2).
    pub lib: Option<&'a Path>,
    /// The libnccl the loader gives torch (the linkage probe) and which environment.
    pub torch_binds: Option<(String, String)>,
    /// NCCL_* variables of the environment the worker inherits.
    pub environment: Vec<(String, String)>,
}

pub fn probe(req: &SmokeRequest) -> SmokeProbe {
    let (lib, library) = worker::library_to_load(req.lib, DEFAULT_LIB);
    let mut nccl = req.nccl.as_ref().map(|ask| nccl_request(req, ask));
    let result = run(req, lib.as_deref(), &library, nccl.as_mut());
    SmokeProbe {
        library,
        settings: req.settings.clone(),
        result,
        nccl,
    }
}

// ---- --nccl: which libnccl, and NCCL_DEBUG's file -------------------------------------

fn nccl_request(req: &SmokeRequest, ask: &NcclAsk) -> crate::smoke::nccl::NcclRequest {
    let (lib, library) = worker::library_to_load(ask.lib, crate::smoke::nccl::DEFAULT_LIB);
    let chosen_by = match (&lib, &ask.torch_binds) {
        (Some(_), _) => "--nccl-lib".to_string(),
        (None, Some((_, site))) => format!("the library the loader gives torch in {site}"),
        (None, None) => "the loader's libnccl.so.2 (no torch binding found)".to_string(),
    };
    let library = match (&lib, &ask.torch_binds) {
        (None, Some((path, _))) => path.clone(),
        _ => library,
    };
    let refused = worker::refuse_under_root(req.root, lib.as_deref(), "--nccl-lib");
    crate::smoke::nccl::NcclRequest {
        library,
        chosen_by,
        refused,
        environment: ask
            .environment
            .iter()
            .filter(|(k, _)| crate::smoke::nccl::TRANSPORT_VARIABLES.contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        debug: None,
    }
}

/// NCCL_DEBUG=INFO into a private file, unless the user set NCCL_DEBUG: then NCCL logs
/// where they asked and gpudoctor reads nothing.
fn nccl_debug_dir(ask: &NcclAsk) -> Option<tempfile::TempDir> {
    let user_set = ask.environment.iter().any(|(k, _)| k == "NCCL_DEBUG");
    if user_set {
        return None;
    }
    tempfile::Builder::new()
        .prefix("gpudoctor-nccl-")
        .tempdir()
        .ok()
}

const NCCL_DEBUG_FILE: &str = "nccl-debug.txt";
const NCCL_DEBUG_LIMIT: u64 = 4 * 1024 * 1024;

fn run(
    req: &SmokeRequest,
    lib: Option<&Path>,
    library: &str,
    nccl: Option<&mut crate::smoke::nccl::NcclRequest>,
) -> SmokeResult {
    if let Some(reason) =
        worker::refuse_under_root(req.root, lib, "--cuda-lib").or(req.no_driver.clone())
    {
        return SmokeResult::NotRun { reason };
    }
    let s = &req.settings;
    let mut args = vec![
        "__smoke-worker".to_string(),
        format!("--lib={library}"),
        format!("--matmul-size={}", s.matmul_size),
        format!("--mem-fraction={}", s.mem_fraction),
        format!("--transfer-bytes={}", s.transfer_bytes),
    ];
    if let Some(d) = s.device {
        args.push(format!("--device={d}"));
    }
    for u in &req.shared_gpus {
        args.push(format!("--shared-gpu={u}"));
    }
    let nccl_dir = match (&nccl, &req.nccl) {
        (Some(n), Some(ask)) if n.refused.is_none() => {
            args.push(format!("--nccl-lib={}", n.library));
            let dir = nccl_debug_dir(ask);
            if let Some(d) = &dir {
                args.push(format!(
                    "--nccl-debug-file={}",
                    d.path().join(NCCL_DEBUG_FILE).display()
                ));
            }
            dir
        }
        _ => None,
    };
    let on_line = req.progress.clone().map(|sink| {
        Arc::new(move |line: &WorkerLine| {
            if let Some(e) = progress_event(line) {
                sink(e);
            }
        }) as worker::LineHook<WorkerLine>
    });
    let outcome = worker::run(
        &Smoke { device: s.device },
        worker::Request {
            args: &args,
            timeout: req.timeout,
            output_limit: WORKER_OUTPUT_LIMIT,
            clean_loader_env: req.root.is_some(),
            on_line,
        },
    );
    if let Some(sink) = &req.progress {
        sink(ProgressEvent::Finished);
    }
    if let (Some(n), Some(dir)) = (nccl, nccl_dir) {
        let fs = crate::fsys::HostFs::new(None);
        if let Ok(bytes) = fs.read_bytes(&dir.path().join(NCCL_DEBUG_FILE), NCCL_DEBUG_LIMIT) {
            n.debug = Some(crate::smoke::nccl::parse_debug(&String::from_utf8_lossy(
                &bytes,
            )));
        }
    }
    match outcome {
        Outcome::TimedOut {
            answer,
            stuck_at,
            seconds,
            unkillable,
        } => match answer {
            Assembled::LoadFailed { code, message } => SmokeResult::LoadFailed { code, message },
            Assembled::Run(run) => SmokeResult::TimedOut {
                seconds,
                stuck_at,
                unkillable,
                run: *run,
            },
        },
        Outcome::FailedToStart { detail } => SmokeResult::WorkerFailed { detail },
        Outcome::Crashed {
            answer,
            stuck_at,
            signal,
            stderr,
        } => SmokeResult::Crashed {
            signal,
            stderr,
            run: match answer {
                Assembled::Run(r) => *r,
                Assembled::LoadFailed { .. } => SmokeRun::default(),
            },
            during: stuck_at,
        },
        Outcome::Exited { answer, exit } => match answer {
            Assembled::LoadFailed { code, message } => SmokeResult::LoadFailed { code, message },
            Assembled::Run(run) if run.finished => SmokeResult::Ran { run: *run },
            Assembled::Run(_) => SmokeResult::WorkerFailed {
                detail: exit.without_answer(),
            },
        },
    }
}

/// The progress the worker's line reports, if any: a GPU's step started or done, a peer
/// copy's or NCCL call's stage, or its end.
fn progress_event(line: &WorkerLine) -> Option<ProgressEvent> {
    Some(match line {
        WorkerLine::Started { ordinal, step } => ProgressEvent::Step {
            ordinal: *ordinal,
            step: step.clone(),
        },
        WorkerLine::DeviceDone { ordinal, .. } => ProgressEvent::GpuDone { ordinal: *ordinal },
        WorkerLine::PeerStage { from, to, call } => ProgressEvent::AfterGpus {
            what: format!("peer {from} → {to} {call}"),
        },
        WorkerLine::Peer { .. } => ProgressEvent::AfterGpusDone,
        WorkerLine::Nccl(crate::smoke::nccl::NcclLine::Stage { call }) => {
            ProgressEvent::AfterGpus {
                what: format!("NCCL {call}"),
            }
        }
        WorkerLine::Nccl(crate::smoke::nccl::NcclLine::Done) => ProgressEvent::AfterGpusDone,
        _ => return None,
    })
}

/// Whether progress may be drawn: stderr is a terminal.
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_stage_names_the_pair_a_hang_stopped_in() {
        let lines = [
            r#"{"kind":"init","error":null,"driver_version":12040,"device_count":2,"count_error":null,"cuda_visible_devices":null}"#,
            r#"{"kind":"device","ordinal":0,"info":{"name":"G","uuid":null,"pci_bus_id":"0000:18:00.0","compute_capability":"9.0","sm_count":1,"total_memory":1},"error":null}"#,
            r#"{"kind":"device_done","ordinal":0,"elapsed_ms":3.0}"#,
            r#"{"kind":"device_done","ordinal":1,"elapsed_ms":3.0}"#,
            r#"{"kind":"peer_stage","from":0,"to":1,"call":"cuDeviceCanAccessPeer"}"#,
            r#"{"kind":"peer","peer":{"from":0,"to":1,"from_bus_id":"0000:18:00.0","to_bus_id":"0000:19:00.0","can_access":{"ok":false},"enable":null,"copy":null,"running":null,"finished":false}}"#,
            r#"{"kind":"peer_stage","from":1,"to":0,"call":"cuDeviceCanAccessPeer"}"#,
            r#"{"kind":"peer_stage","from":1,"to":0,"call":"cuMemcpyPeerAsync"}"#,
        ];
        let Assembled::Run(run) = assemble(worker::parse_lines(&lines.join("\n"))) else {
            panic!("not a run")
        };
        assert_eq!(run.peers.len(), 2);
        // A reported pair is finished whatever the line said.
        assert!(run.peers[0].finished && run.peers[0].running.is_none());
        let hung = run.peer_unfinished().unwrap();
        assert_eq!((hung.from, hung.to), (1, 0));
        assert_eq!(
            unfinished(&run, None),
            vec!["peer copy CUDA device 1 → 0: cuMemcpyPeerAsync".to_string()]
        );
        assert_eq!(hung.fault(true), Some(PeerFault::Hung));
        assert_eq!(hung.fault(false), None);
        let probe = SmokeProbe {
            library: DEFAULT_LIB.into(),
            settings: SmokeSettings::default(),
            nccl: None,
            result: SmokeResult::TimedOut {
                seconds: 5.0,
                run: *run,
                stuck_at: Vec::new(),
                unkillable: false,
            },
        };
        let faults = probe.peer_faults();
        assert_eq!(faults.len(), 1);
        // The hung pair's bus ids come from its GPUs' device lines.
        assert_eq!(
            (faults[0].0.to_bus_id.as_deref(), faults[0].1),
            (Some("0000:18:00.0"), PeerFault::Hung)
        );
    }

    #[test]
    fn a_partial_stream_keeps_what_came_and_names_the_stuck_step() {
        let lines = [
            r#"{"kind":"loaded","path":"/x/libcuda.so.1"}"#,
            r#"{"kind":"init","error":null,"driver_version":12040,"device_count":2,"count_error":null,"cuda_visible_devices":null}"#,
            r#"{"kind":"device","ordinal":0,"info":{"name":"G","uuid":null,"pci_bus_id":null,"compute_capability":"9.0","sm_count":1,"total_memory":1},"error":null}"#,
            r#"{"kind":"started","ordinal":0,"step":"context"}"#,
            r#"{"kind":"context","ordinal":0,"step":{"ok":{"ms":1.5}}}"#,
            r#"{"kind":"device_done","ordinal":0,"elapsed_ms":3.0}"#,
            r#"{"kind":"started","ordinal":1,"step":"context"}"#,
            "garbage",
        ];
        let Assembled::Run(run) = assemble(worker::parse_lines(&lines.join("\n"))) else {
            panic!("not a run")
        };
        assert_eq!(run.driver_cuda().as_deref(), Some("12.4"));
        assert_eq!(run.devices.len(), 2);
        assert!(run.devices[0].finished);
        assert_eq!(
            unfinished(&run, None),
            vec!["CUDA device 1: context".to_string()]
        );
        let Assembled::Run(nothing) = assemble(Vec::new()) else {
            panic!()
        };
        assert_eq!(
            unfinished(&nothing, None),
            vec!["loading libcuda".to_string()]
        );
    }
}

/// The NVML GPU a CUDA device is: same UUID, else same PCI address (NVML writes an
/// 8-digit domain, CUDA a 4-digit one).
pub fn nvml_gpu<'a>(
    sys: &'a crate::probes::nvml::NvmlSystem,
    d: &SmokeDevice,
) -> Option<&'a crate::probes::nvml::Gpu> {
    let info = d.info.as_ref()?;
    let norm = crate::probes::pci::sysfs_address;
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

pub fn link(gpu: &crate::probes::nvml::Gpu) -> Option<Link> {
    let generation = *gpu.pcie.max_generation.get()?;
    let width = *gpu.pcie.max_width.get()?;
    let lane = crate::smoke::pcie_lane_gbps(generation)?;
    (width > 0).then_some(Link {
        generation,
        width,
        gbps: lane * width as f64,
    })
}
