//! The hidden subcommands the binary re-executes itself with: driver work (NVML, the
//! smoke test) runs in a child so that a hang or crash in a vendor library is a finding.

use super::{CliError, Command};

/// Runs a worker subcommand (Ok: its result), or hands any other command back.
#[allow(clippy::result_large_err)]
pub(super) fn run_if_worker(command: Command) -> Result<Result<u8, CliError>, Command> {
    match command {
        Command::SmokeWorker {
            lib,
            device,
            device_id,
            matmul_size,
            mem_fraction,
            transfer_bytes,
            shared_gpu,
            nccl_lib,
            nccl_debug_file,
        } => Ok(smoke_worker(
            lib,
            crate::facts::smoke::SmokeSettings {
                matmul_size,
                mem_fraction,
                transfer_bytes,
                device,
                device_id,
                requested: false,
            },
            shared_gpu,
            (nccl_lib, nccl_debug_file),
        )),
        Command::NvmlWorker { lib, counters } => Ok(nvml_worker(&lib, counters)),
        Command::CompatTables => Ok(compat_tables()),
        Command::Fatbin { path } => Ok(fatbin(&path)),
        other => Err(other),
    }
}

/// `__compat-tables`: the compatibility tables as JSON on stdout.
fn compat_tables() -> Result<u8, CliError> {
    let text = serde_json::to_string_pretty(&crate::compat::sources::tables_json())
        .map_err(|e| CliError::Internal(format!("serialising the tables: {e}")))?;
    super::emit(format!("{text}\n").as_bytes())
}

/// `__fatbin FILE`: the fatbin summary of one shared library as JSON on stdout (what the
/// PyTorch probe reads from libtorch_cuda.so, for any library).
fn fatbin(path: &std::path::Path) -> Result<u8, CliError> {
    let fs = crate::fsys::HostFs::new(None);
    let summary = crate::fatbin::scan(&fs, path)
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    let text = serde_json::to_string_pretty(&summary)
        .map_err(|e| CliError::Internal(format!("serialising the summary: {e}")))?;
    super::emit(format!("{text}\n").as_bytes())
}

/// `__nvml-worker`: NVML's facts as JSON on stdout.
fn nvml_worker(lib: &str, counters: bool) -> Result<u8, CliError> {
    crate::nvml_worker::main(lib, counters)
        .map(|_| 0)
        .map_err(|e| CliError::Internal(format!("NVML worker: writing the answer: {e}")))
}

/// `__smoke-worker`: the smoke test's results as JSON lines on stdout.
fn smoke_worker(
    lib: String,
    settings: crate::facts::smoke::SmokeSettings,
    shared_gpus: Vec<String>,
    (nccl_lib, nccl_debug_file): (Option<String>, Option<String>),
) -> Result<u8, CliError> {
    crate::smoke::worker::main(crate::smoke::worker::WorkerArgs {
        lib,
        settings,
        shared_gpus,
        nccl_lib,
        nccl_debug_file,
    })
    .map(|_| 0)
    .map_err(|e| CliError::Internal(format!("smoke worker: {e}")))
}
