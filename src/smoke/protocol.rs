//! What the smoke worker (`gpudoctor __smoke-worker`, worker.rs) tells its parent (the
//! smoke probe, src/probes/smoke.rs): one JSON line per event, flushed as it happens, so a
//! hang keeps every finished step.

use serde::{Deserialize, Serialize};

use crate::facts::smoke::{
    CudaError, DeviceInfo, Matmul, MemoryProbe, PeerCopy, Step, Timing, Transfer,
};

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
