//! The hidden subcommands the binary re-executes itself with: driver work (NVML, the
//! smoke test) runs in a child so that a hang or crash in a vendor library is a finding.

use super::CliError;
use crate::probes;

/// `__nvml-worker`: NVML's facts as JSON on stdout.
pub(super) fn nvml_worker(lib: &str) -> Result<u8, CliError> {
    crate::nvml_worker::main(lib)
        .map(|_| 0)
        .map_err(|e| CliError::Internal(format!("NVML worker: writing the answer: {e}")))
}

/// `__smoke-worker`: the smoke test's results as JSON lines on stdout.
pub(super) fn smoke_worker(
    lib: String,
    settings: probes::smoke::SmokeSettings,
    shared_gpus: Vec<String>,
) -> Result<u8, CliError> {
    crate::smoke::worker::main(crate::smoke::worker::WorkerArgs {
        lib,
        settings,
        shared_gpus,
    })
    .map(|_| 0)
    .map_err(|e| CliError::Internal(format!("smoke worker: {e}")))
}
