//! What the smoke test tells a live display while it runs: the smoke probe sends these
//! events, `render::smoke_progress` draws them on stderr.

use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub enum ProgressEvent {
    /// GPU `ordinal` started `step` (context, module, matmul, memory, transfer).
    Step { ordinal: u32, step: String },
    /// GPU `ordinal` finished its steps.
    GpuDone { ordinal: u32 },
    /// After the GPUs' own steps: a peer copy or NCCL call in progress ("peer 1 → 0
    /// cuMemcpyPeerAsync", "NCCL ncclGroupEnd").
    AfterGpus { what: String },
    /// That peer copy or NCCL call ended.
    AfterGpusDone,
    /// The smoke test ended: the display clears its line.
    Finished,
}

/// Where the probe sends its events (called from the thread reading the worker).
pub type ProgressSink = Arc<dyn Fn(ProgressEvent) + Send + Sync>;
