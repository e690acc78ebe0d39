//! The smoke test as facts: does each GPU compute, hold memory and move data? The work
//! runs in a child process (`gpudoctor __smoke-worker`, src/smoke/worker.rs, started by
//! src/worker.rs) under a deadline; a hang, a crash or a driver error becomes a fact here,
//! and what the worker streamed before it is kept.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::facts::smoke::{
    PeerCopy, SmokeDevice, SmokeProbe, SmokeResult, SmokeRun, SmokeSettings, DEFAULT_LIB,
};
use crate::smoke::progress::{ProgressEvent, ProgressSink};
use crate::smoke::protocol::WorkerLine;
use crate::worker::{self, Outcome};

const WORKER_OUTPUT_LIMIT: usize = 4 * 1024 * 1024;

/// The whole smoke run may take this many timeouts: a bound for a driver that keeps
/// answering forever (a device count it never stops at), far past any real run's length.
const PROGRESS_CAP_FACTOR: u32 = 100;

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
    /// The longest silence between two lines of the worker; with `hard_deadline`, the
    /// whole run's budget.
    pub timeout: Duration,
    pub hard_deadline: bool,
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
    if let Some(d) = &s.device_id {
        args.push(format!("--device-id={d}"));
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
            // The worker prints a line before every driver call and after every step: the
            // timeout is the silence that means a hung driver, so a slow device that keeps
            // answering is never called hung, however many GPUs and however large the sizes.
            progress_cap: (!req.hard_deadline)
                .then(|| req.timeout.saturating_mul(PROGRESS_CAP_FACTOR)),
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
    use crate::facts::smoke::PeerFault;

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
