//! The driver and GPUs as NVML sees them. NVML runs in a child process (`gpudoctor
//! __nvml-worker`, src/nvml_worker.rs, started by src/worker.rs) under a deadline: a GPU
//! fallen off the bus makes NVML calls block, and a vendor library can crash; either
//! becomes a fact here, never a hang.

use std::path::Path;
use std::time::Duration;

use crate::facts::nvml::{CountersAgain, GpuCounters, NvmlProbe, NvmlResult, NvmlSystem};
use crate::fsys::HostFs;
use crate::nvml_worker::WorkerLine;
use crate::worker::{self, Outcome};

/// The library NVML comes from when --nvml-lib is not given: the loader's choice.
pub const DEFAULT_LIB: &str = "libnvidia-ml.so.1";
/// The worker's JSON for a big node is tens of KiB; this leaves room for MIG-heavy ones.
const WORKER_OUTPUT_LIMIT: usize = 8 * 1024 * 1024;

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
        requested: false,
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
        requested: false,
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
            progress_cap: None,
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
            progress_cap: None,
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
