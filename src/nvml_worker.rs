//! The child side of the NVML probe (`gpudoctor __nvml-worker --lib PATH`): loads NVML,
//! asks every question, prints one JSON object. Anything here may hang or crash inside the
//! vendor library; the parent (src/probes/nvml.rs) bounds and reports that.

use std::ffi::OsStr;

use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, P2pCapabilitiesIndex, RetirementCause, TemperatureSensor,
    TemperatureThreshold,
};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};
use nvml_wrapper_sys::bindings::{nvmlFieldValue_t, nvmlGpuFabricInfo_t, NvmlLib};

use crate::facts::nvml::{
    Bar1, Clocks, Ecc, Fabric, Field, Gpu, GpuCounters, Memory, Mig, MigInstance, NvLinkErrors,
    Pcie, Process, RemappedRows, RetiredPages, Throttle, TopologyPair,
};
use crate::worker::AnswerOut;
use serde::{Deserialize, Serialize};

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

/// NVML's most links per GPU (NVML_NVLINK_MAX_LINKS in nvml.h, 18 since Hopper).
const MAX_NVLINKS: u32 = 18;
/// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (nvml.h, R550+).
const FI_RECOVERY_ACTION: u32 = 230;

/// Runs the worker and writes its JSON answer to the original stdout. The vendor library
/// gets stderr as its stdout, so nothing it prints can corrupt the answer.
pub fn main(lib: &str, counters_only: bool) -> std::io::Result<()> {
    let out = AnswerOut::take_stdout()?;
    let nvml = if counters_only {
        counters(lib, &out)
    } else {
        run(lib, &out)
    };
    let written = out.finish();
    // nvmlShutdown can hang or crash like any NVML call; the process is about to exit and
    // the driver cleans up after it, so it is skipped (after the answer is out).
    std::mem::forget(nvml);
    written
}

/// nvmlInit on `lib`; a failure is the answer's only line.
fn init(lib: &str, out: &AnswerOut) -> Option<Nvml> {
    match Nvml::builder().lib_path(OsStr::new(lib)).init() {
        Ok(n) => Some(n),
        Err(e) => {
            out.emit(&WorkerLine::InitFailed {
                code: init_code(&e, lib).to_string(),
                message: init_message(&e, lib),
            });
            None
        }
    }
}

/// Streams the answer as JSON lines (system, one per GPU, topology, done), each flushed,
/// so a call that hangs on one GPU loses only what comes after it. Returns the live NVML
/// handle: the caller decides when to let it go.
pub fn run(lib: &str, out: &AnswerOut) -> Option<Nvml> {
    let nvml = init(lib, out)?;
    let count = field(nvml.device_count());
    let n = count.get().copied().unwrap_or(0);
    out.emit(&WorkerLine::System {
        driver_version: field(nvml.sys_driver_version()),
        cuda_driver_version: field(nvml.sys_cuda_driver_version()).map(|v| {
            crate::compat::CudaVersion::from_encoded(i64::from(v))
                .map_or_else(|| v.to_string(), |c| c.to_string())
        }),
        nvml_version: field(nvml.sys_nvml_version()),
        device_count: count,
    });
    // The raw library for the calls the wrapper lacks (remapped rows, fabric, field values).
    // SAFETY: loading NVML a second time only bumps dlopen's reference count.
    let raw = unsafe { NvmlLib::new(lib) }.ok();
    let mut handles = Vec::new();
    for i in 0..n {
        let g = match nvml.device_by_index(i) {
            Ok(d) => {
                let g = gpu(i, &d, raw.as_ref());
                handles.push((i, d));
                g
            }
            Err(e) => lost(i, &e),
        };
        out.emit(&WorkerLine::Gpu { gpu: Box::new(g) });
    }
    out.emit(&WorkerLine::Topology {
        pairs: topology(&nvml, &handles),
    });
    out.emit(&WorkerLine::Done);
    Some(nvml)
}

/// `--counters`: only each GPU's link error counters, for the second read.
fn counters(lib: &str, out: &AnswerOut) -> Option<Nvml> {
    let nvml = init(lib, out)?;
    let n = nvml.device_count().unwrap_or(0);
    for index in 0..n {
        let Ok(d) = nvml.device_by_index(index) else {
            continue;
        };
        out.emit(&WorkerLine::Counters {
            counters: GpuCounters {
                index,
                pcie_replay_counter: field(d.pcie_replay_counter()),
                nvlink_errors: nvlink_errors(&d),
            },
        });
    }
    out.emit(&WorkerLine::Done);
    Some(nvml)
}

/// Each NVLink's error counters, in link order; None for a link that is down.
fn nvlink_errors(d: &Device) -> Field<Vec<Option<NvLinkErrors>>> {
    use nvml_wrapper::enum_wrappers::nv_link::ErrorCounter;
    let mut links = Vec::new();
    for link in 0..MAX_NVLINKS {
        let wrapper = d.link_wrapper_for(link);
        match wrapper.is_active() {
            Ok(false) => links.push(None),
            Ok(true) => {
                let read = |c| wrapper.error_counter(c);
                let counts = (|| {
                    Ok::<_, NvmlError>(NvLinkErrors {
                        replay: read(ErrorCounter::DlReplay)?,
                        recovery: read(ErrorCounter::DlRecovery)?,
                        crc_flit: read(ErrorCounter::DlCrcFlit)?,
                        crc_data: read(ErrorCounter::DlCrcData)?,
                    })
                })();
                match counts {
                    Ok(c) => links.push(Some(c)),
                    // The first active link says whether this GPU has the counters at all.
                    Err(e) if links.iter().all(Option::is_none) => return field(Err(e)),
                    Err(_) => links.push(None),
                }
            }
            Err(NvmlError::InvalidArg) => break,
            Err(e) if links.is_empty() => return field(Err(e)),
            Err(_) => break,
        }
    }
    Field::Value(links)
}

/// A library that exists but cannot be loaded (not ELF, wrong architecture, missing
/// dependencies) is not "not found".
fn init_code(e: &NvmlError, lib: &str) -> &'static str {
    match e {
        // A named file that exists failed to load for another reason (or a dependency of
        // it is missing, which dlerror also words as "No such file").
        NvmlError::LibloadingError(_)
            if lib.contains('/') && std::path::Path::new(lib).exists() =>
        {
            "library_unloadable"
        }
        other => error_code(other),
    }
}

/// NVML's error as a stable snake-case code for the report.
pub fn error_code(e: &NvmlError) -> &'static str {
    match e {
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound => "library_not_found",
        NvmlError::FailedToLoadSymbol(_) | NvmlError::FunctionNotFound => "function_not_found",
        NvmlError::DriverNotLoaded => "driver_not_loaded",
        NvmlError::LibRmVersionMismatch => "lib_rm_version_mismatch",
        NvmlError::NoPermission => "no_permission",
        NvmlError::GpuLost => "gpu_is_lost",
        NvmlError::NotSupported => "not_supported",
        NvmlError::Uninitialized => "uninitialized",
        NvmlError::InvalidArg => "invalid_argument",
        NvmlError::NotFound => "not_found",
        NvmlError::Timeout => "timeout",
        NvmlError::IrqIssue => "irq_issue",
        NvmlError::CorruptedInfoROM => "corrupted_inforom",
        NvmlError::ResetRequired => "reset_required",
        NvmlError::OperatingSystem => "operating_system",
        NvmlError::InsufficientPower => "insufficient_power",
        NvmlError::InUse => "in_use",
        NvmlError::NoData => "no_data",
        _ => "unknown",
    }
}

fn init_message(e: &NvmlError, lib: &str) -> String {
    match e {
        NvmlError::LibloadingError(inner) if lib.contains('/') => {
            format!("could not load {lib}: {inner}")
        }
        NvmlError::LibloadingError(inner) => format!(
            "could not load {lib}: {inner} (searched as the dynamic loader does: LD_LIBRARY_PATH, /etc/ld.so.cache, the default directories)"
        ),
        NvmlError::LibRmVersionMismatch => {
            "Failed to initialize NVML: Driver/library version mismatch".to_string()
        }
        NvmlError::DriverNotLoaded => {
            "NVIDIA driver is not loaded (NVML_ERROR_DRIVER_NOT_LOADED)".to_string()
        }
        NvmlError::NoPermission => {
            "Insufficient Permissions (NVML_ERROR_NO_PERMISSION)".to_string()
        }
        other => other.to_string(),
    }
}

fn field<T>(r: Result<T, NvmlError>) -> Field<T> {
    match r {
        Ok(v) => Field::Value(v),
        Err(NvmlError::NotSupported) => Field::NotSupported,
        Err(NvmlError::FailedToLoadSymbol(_) | NvmlError::FunctionNotFound) => Field::NotInDriver,
        Err(e) => Field::Error(format!("{}: {e}", error_code(&e))),
    }
}

/// `ExclusiveProcess` → `exclusive_process`.
fn snake(debug: &str) -> String {
    let mut out = String::new();
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn topology(nvml: &Nvml, handles: &[(u32, Device)]) -> Vec<TopologyPair> {
    let mut topology = Vec::new();
    for (x, (a, da)) in handles.iter().enumerate() {
        for (b, db) in handles.iter().skip(x + 1) {
            // SAFETY: both handles stay valid while `nvml` lives; Device is a thin handle.
            let other = unsafe { Device::new(db.handle(), nvml) };
            topology.push(TopologyPair {
                a: *a,
                b: *b,
                common_ancestor: field(da.topology_common_ancestor(other))
                    .map(|l| snake(&format!("{l:?}"))),
                p2p_read: field(da.p2p_status(db, P2pCapabilitiesIndex::Read))
                    .map(|s| snake(&format!("{s:?}"))),
            });
        }
    }
    topology
}

fn lost(index: u32, e: &NvmlError) -> Gpu {
    let m = format!("{}: {e}", error_code(e));
    fn err<T>(m: &str) -> Field<T> {
        Field::Error(m.to_string())
    }
    Gpu {
        index,
        handle_error: Some(m.clone()),
        name: err(&m),
        uuid: err(&m),
        serial: err(&m),
        pci_bus_id: err(&m),
        pci_device_id: err(&m),
        minor_number: err(&m),
        architecture: err(&m),
        compute_capability: err(&m),
        memory: err(&m),
        bar1: err(&m),
        pcie: Pcie {
            generation: err(&m),
            max_generation: err(&m),
            width: err(&m),
            max_width: err(&m),
        },
        temperature_c: err(&m),
        temperature_slowdown_c: err(&m),
        temperature_shutdown_c: err(&m),
        power_usage_mw: err(&m),
        power_limit_mw: err(&m),
        clocks: Clocks {
            sm_mhz: err(&m),
            memory_mhz: err(&m),
            max_sm_mhz: err(&m),
            max_memory_mhz: err(&m),
        },
        throttle: err(&m),
        ecc: Ecc {
            enabled: err(&m),
            pending: err(&m),
            volatile_corrected: err(&m),
            volatile_uncorrected: err(&m),
            aggregate_corrected: err(&m),
            aggregate_uncorrected: err(&m),
        },
        retired_pages: err(&m),
        retired_pages_pending: err(&m),
        remapped_rows: err(&m),
        persistence_mode: err(&m),
        compute_mode: err(&m),
        mig: Mig {
            enabled: err(&m),
            pending: err(&m),
            instances: Vec::new(),
        },
        processes: err(&m),
        nvlinks: err(&m),
        nvlink_remotes: err(&m),
        fabric: err(&m),
        recovery_action: err(&m),
        pcie_replay_counter: err(&m),
        nvlink_errors: err(&m),
    }
}

fn gpu(index: u32, d: &Device, raw: Option<&NvmlLib>) -> Gpu {
    // Converted once, so both fields keep NVML's own error.
    let pci = field(d.pci_info());
    let ecc_mode = field(d.is_ecc_enabled());
    let mig_mode = field(d.mig_mode());
    let mig_enabled = mig_mode.clone().map(|m| m.current == 1);
    let links = nvlinks(d);
    let instances = if mig_enabled.get() == Some(&true) {
        mig_instances(d)
    } else {
        Vec::new()
    };
    Gpu {
        index,
        handle_error: None,
        name: field(d.name()),
        uuid: field(d.uuid()),
        serial: field(d.serial()),
        pci_bus_id: pci.clone().map(|p| p.bus_id),
        pci_device_id: pci.map(|p| format!("{:#010x}", p.pci_device_id)),
        minor_number: field(d.minor_number()),
        architecture: field(d.architecture()).map(|a| format!("{a:?}")),
        compute_capability: field(d.cuda_compute_capability())
            .map(|c| format!("{}.{}", c.major, c.minor)),
        memory: field(d.memory_info()).map(|m| Memory {
            total: m.total,
            used: m.used,
            free: m.free,
            reserved: m.reserved,
        }),
        bar1: field(d.bar1_memory_info()).map(|b| Bar1 {
            total: b.total,
            used: b.used,
            free: b.free,
        }),
        pcie: Pcie {
            generation: field(d.current_pcie_link_gen()),
            max_generation: field(d.max_pcie_link_gen()),
            width: field(d.current_pcie_link_width()),
            max_width: field(d.max_pcie_link_width()),
        },
        temperature_c: field(d.temperature(TemperatureSensor::Gpu)),
        temperature_slowdown_c: field(d.temperature_threshold(TemperatureThreshold::Slowdown)),
        temperature_shutdown_c: field(d.temperature_threshold(TemperatureThreshold::Shutdown)),
        power_usage_mw: field(d.power_usage()),
        power_limit_mw: field(d.enforced_power_limit()),
        clocks: Clocks {
            sm_mhz: field(d.clock_info(Clock::SM)),
            memory_mhz: field(d.clock_info(Clock::Memory)),
            max_sm_mhz: field(d.max_clock_info(Clock::SM)),
            max_memory_mhz: field(d.max_clock_info(Clock::Memory)),
        },
        throttle: field(d.current_throttle_reasons()).map(|t| Throttle {
            bits: t.bits(),
            reasons: t.iter_names().map(|(n, _)| n.to_string()).collect(),
        }),
        ecc: Ecc {
            enabled: ecc_mode.clone().map(|m| m.currently_enabled),
            pending: ecc_mode.map(|m| m.pending_enabled),
            volatile_corrected: field(
                d.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile),
            ),
            volatile_uncorrected: field(
                d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile),
            ),
            aggregate_corrected: field(
                d.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate),
            ),
            aggregate_uncorrected: field(
                d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate),
            ),
        },
        retired_pages: retired(d),
        retired_pages_pending: field(d.are_pages_pending_retired()),
        remapped_rows: remapped_rows(d, raw),
        persistence_mode: field(d.is_in_persistent_mode()),
        compute_mode: field(d.compute_mode()).map(|m| snake(&format!("{m:?}"))),
        mig: Mig {
            enabled: mig_enabled,
            pending: mig_mode.map(|m| m.pending == 1),
            instances,
        },
        processes: processes(d),
        nvlinks: links.0,
        nvlink_remotes: links.1,
        fabric: fabric(d, raw),
        recovery_action: recovery_action(d, raw),
        pcie_replay_counter: field(d.pcie_replay_counter()),
        nvlink_errors: nvlink_errors(d),
    }
}

fn retired(d: &Device) -> Field<RetiredPages> {
    let sbe = field(d.retired_pages(RetirementCause::MultipleSingleBitEccErrors));
    let dbe = field(d.retired_pages(RetirementCause::DoubleBitEccError));
    match (sbe, dbe) {
        (Field::Value(s), Field::Value(b)) => Field::Value(RetiredPages {
            single_bit: s.len() as u32,
            double_bit: b.len() as u32,
        }),
        (Field::Value(_), other) | (other, _) => other.map(|_| RetiredPages {
            single_bit: 0,
            double_bit: 0,
        }),
    }
}

fn mig_instances(d: &Device) -> Vec<MigInstance> {
    let max = d.mig_device_count().unwrap_or(0);
    let mut out = Vec::new();
    for i in 0..max {
        // Empty slots answer NOT_FOUND: only the instances that exist are listed.
        let Ok(m) = d.mig_device_by_index(i) else {
            continue;
        };
        out.push(MigInstance {
            index: i,
            uuid: field(m.uuid()),
            memory_total: field(m.memory_info()).map(|mem| mem.total),
        });
    }
    out
}

fn processes(d: &Device) -> Field<Vec<Process>> {
    let compute = field(d.running_compute_processes());
    let graphics = field(d.running_graphics_processes());
    let mut all = Vec::new();
    let mut any = None;
    let mut answered = 0;
    for (kind, list) in [("compute", compute), ("graphics", graphics)] {
        match list {
            Field::Value(ps) => {
                answered += 1;
                for p in ps {
                    all.push(Process {
                        pid: p.pid,
                        kind: kind.to_string(),
                        name: std::fs::read_to_string(format!("/proc/{}/comm", p.pid))
                            .ok()
                            .map(|s| s.trim().to_string()),
                        used_memory: match p.used_gpu_memory {
                            nvml_wrapper::enums::device::UsedGpuMemory::Used(b) => Some(b),
                            nvml_wrapper::enums::device::UsedGpuMemory::Unavailable => None,
                        },
                    });
                }
            }
            other => any = Some(other.map(|_| Vec::new())),
        }
    }
    // Only when neither list answered is the field missing; one failing (graphics on a
    // compute-only GPU) is normal.
    match (answered, any) {
        (0, Some(other)) => other,
        _ => Field::Value(all),
    }
}

/// Each NVLink's state and, for an active one, the PCI bus id at its other end
/// (nvmlDeviceGetNvLinkRemotePciInfo_v2): a peer GPU or an NVSwitch.
type NvLinks = (Field<Vec<bool>>, Field<Vec<Option<String>>>);

fn nvlinks(d: &Device) -> NvLinks {
    let mut links = Vec::new();
    let mut remotes = Vec::new();
    let mut remote_error = None;
    for link in 0..MAX_NVLINKS {
        let wrapper = d.link_wrapper_for(link);
        match wrapper.is_active() {
            Ok(up) => {
                links.push(up);
                let remote = if up {
                    match wrapper.remote_pci_info() {
                        Ok(info) => Some(info.bus_id),
                        Err(e) => {
                            remote_error.get_or_insert(e);
                            None
                        }
                    }
                } else {
                    None
                };
                remotes.push(remote);
            }
            // Past the last link NVML says invalid argument; a GPU without NVLink says
            // not supported on link 0.
            Err(NvmlError::InvalidArg) => break,
            Err(e) if links.is_empty() => {
                let m = field::<()>(Err(e));
                return (m.clone().map(|_| Vec::new()), m.map(|_| Vec::new()));
            }
            Err(_) => break,
        }
    }
    // Every active link's remote failed: say why rather than a list of unknowns.
    let remotes = match remote_error {
        Some(e) if remotes.iter().all(Option::is_none) => field(Err(e)),
        _ => Field::Value(remotes),
    };
    (Field::Value(links), remotes)
}

fn remapped_rows(d: &Device, raw: Option<&NvmlLib>) -> Field<RemappedRows> {
    let Some(sym) = raw.and_then(|r| r.nvmlDeviceGetRemappedRows.as_ref().ok()) else {
        return Field::NotInDriver;
    };
    let (mut corr, mut unc, mut pending, mut failure) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: the handle is live and the four out-pointers are valid for writes.
    let rc = unsafe { sym(d.handle(), &mut corr, &mut unc, &mut pending, &mut failure) };
    ret(rc).map(|_| RemappedRows {
        correctable: corr,
        uncorrectable: unc,
        pending: pending != 0,
        failure: failure != 0,
    })
}

fn fabric(d: &Device, raw: Option<&NvmlLib>) -> Field<Fabric> {
    let Some(sym) = raw.and_then(|r| r.nvmlDeviceGetGpuFabricInfo.as_ref().ok()) else {
        return Field::NotInDriver;
    };
    // SAFETY: a zeroed nvmlGpuFabricInfo_t is a valid out-parameter (plain C data).
    let mut info: nvmlGpuFabricInfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is live and `info` is valid for writes.
    let rc = unsafe { sym(d.handle(), &mut info) };
    ret(rc).map(|_| Fabric {
        state: match info.state {
            0 => "not_supported".into(),
            1 => "not_started".into(),
            2 => "in_progress".into(),
            3 => "completed".into(),
            s => format!("state_{s}"),
        },
        status: if info.status == 0 {
            "success".into()
        } else {
            format!("nvml_error_{}", info.status)
        },
    })
}

fn recovery_action(d: &Device, raw: Option<&NvmlLib>) -> Field<String> {
    let Some(sym) = raw.and_then(|r| r.nvmlDeviceGetFieldValues.as_ref().ok()) else {
        return Field::NotInDriver;
    };
    // SAFETY: a zeroed nvmlFieldValue_t is valid C data; only fieldId is an input.
    let mut v: nvmlFieldValue_t = unsafe { std::mem::zeroed() };
    v.fieldId = FI_RECOVERY_ACTION;
    // SAFETY: the handle is live and `v` is one valid element.
    let rc = unsafe { sym(d.handle(), 1, &mut v) };
    if let Field::Value(()) = ret(rc) {
        ret(v.nvmlReturn).map(|_| {
            // SAFETY: recovery action is reported as an unsigned int value.
            match unsafe { v.value.uiVal } {
                0 => "none".to_string(),
                1 => "gpu_reset".to_string(),
                2 => "node_reboot".to_string(),
                3 => "drain_p2p".to_string(),
                4 => "drain_and_reset".to_string(),
                n => format!("action_{n}"),
            }
        })
    } else {
        ret(rc).map(|_| String::new())
    }
}

/// An NVML return code from a direct call, as a field.
fn ret(rc: u32) -> Field<()> {
    match rc {
        0 => Field::Value(()),
        3 => Field::NotSupported,
        13 => Field::NotInDriver,
        15 => Field::Error("gpu_is_lost: GPU is lost".into()),
        n => Field::Error(format!("nvml_error_{n}")),
    }
}
