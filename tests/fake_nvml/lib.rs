//! A fake libnvidia-ml for gpudoctor's tests: exports the NVML C functions gpudoctor calls
//! (NVML's exact C ABI, types from nvml-wrapper-sys) and answers them from a JSON file.
//!
//! Built by `cargo test` as target/<profile>/examples/libfake_nvml.so (an `[[example]]`
//! cdylib). Load it with `Nvml::builder().lib_path(..)`, or link it as libnvidia-ml.so.1.
//!
//! # Config
//!
//! `GPUDOCTOR_FAKE_NVML` names a JSON file, read at nvmlInit (again at each init while no
//! init is outstanding). Missing or bad → nvmlInit answers NVML_ERROR_UNKNOWN and says why
//! on stderr. Types: tests/fake_nvml/config.rs. Every optional field left out makes its
//! getter answer NVML_ERROR_NOT_SUPPORTED, as real NVML does for unsupported fields.
//!
//! ```json
//! { "system": { "driver_version": "580.95.05", "nvml_version": "13.580.95.05",
//!               "cuda_driver_version": 13000 },
//!   "faults": { "init_error": 9, "hang_in": "nvmlDeviceGetName",
//!               "crash_in": "nvmlDeviceGetUUID", "missing": ["nvmlDeviceGetRemappedRows"] },
//!   "devices": [ {
//!     "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-…", "serial": "1654…",
//!     "pci": { "bus_id": "00000000:18:00.0", "device_id": 590418142, "subsystem_id": 0 },
//!     "minor_number": 0, "architecture": 9, "compute_capability": [9, 0],
//!     "memory": { "total": 0, "free": 0, "used": 0, "reserved": 0 },
//!     "bar1": { "total": 0, "free": 0, "used": 0 },
//!     "pcie": { "gen": 5, "max_gen": 5, "width": 16, "max_width": 16 },
//!     "temperature_c": 34, "slowdown_temp_c": 87, "shutdown_temp_c": 92,
//!     "power_usage_mw": 70000, "power_limit_mw": 700000,
//!     "clocks": { "sm": 1980, "mem": 2619, "max_sm": 1980, "max_mem": 2619 },
//!     "throttle_reasons": 1,
//!     "ecc": { "current": true, "pending": true,
//!              "volatile": { "corrected": 0, "uncorrected": 0 }, "aggregate": { … } },
//!     "retired_pages": { "sbe": [4096], "dbe": [], "pending": false },
//!     "remapped_rows": { "correctable": 0, "uncorrectable": 0, "pending": false,
//!                        "failure": false },
//!     "persistence_mode": true, "compute_mode": 0,
//!     "mig": { "current": true, "pending": true, "max_devices": 7, "instances": [
//!              { "uuid": "MIG-…", "name": "…", "memory": { … },
//!                "gpu_instance_id": 1, "compute_instance_id": 0 } ] },
//!     "compute_processes": [ { "pid": 4242, "used_memory": 1048576,
//!                              "gpu_instance_id": 1, "compute_instance_id": 0 } ],
//!     "graphics_processes": [],
//!     "nvlinks": [true, true, false],
//!     "nvlink_remotes": ["00000000:19:00.0", "00000000:19:00.0", null],
//!     "fabric": { "cluster_uuid": "…32 hex…", "status": 0, "clique_id": 1,
//!                 "state": "COMPLETED", "health_mask": 0, "health_summary": 0 },
//!     "recovery_action": 0,
//!     "lost": false,
//!     "not_supported": ["nvmlDeviceGetPowerUsage"] } ],
//!   "topology": { "default_level": 50,
//!                 "pairs": [ { "a": 0, "b": 1, "level": 40, "p2p": 0 } ] } }
//! ```
//!
//! Rules worth knowing:
//! - `faults` apply to any exported symbol by name. `missing` answers
//!   NVML_ERROR_FUNCTION_NOT_FOUND: a cdylib cannot un-export a symbol, so a real old driver
//!   (where dlsym fails and nvml-wrapper says `FailedToLoadSymbol`) is not reproduced.
//! - `crash_in` resets SIGSEGV to its default action and raises it (a host handler, such
//!   as Rust's stack-overflow one, would swallow a raised signal). `hang_in` sleeps forever.
//! - Handles are opaque non-null values encoding the GPU and MIG slot; anything else,
//!   including NULL, is NVML_ERROR_INVALID_ARGUMENT. A lost GPU gives no handle.
//! - MIG device handles answer name, UUID, memory, processes (those of their GPU instance),
//!   GPU/compute instance ids and the parent handle; other getters NOT_SUPPORTED.
//! - Topology: the same GPU is INTERNAL; pairs (unordered, the last entry for a pair
//!   wins) use `level`, else `default_level`.
//!   P2P: a pair's `p2p` for every capability, else OK when both GPUs have an active NVLink
//!   or level ≤ MULTIPLE (same switch), else CHIPSET_NOT_SUPPORTED; the NVLINK capability
//!   is OK only with NVLink on both sides (else NOT_SUPPORTED).
//! - nvmlDeviceGetMaxMigDeviceCount answers 0 when MIG is off or absent (as NVML does).

// A C library's double: each entry point trusts its C caller's pointers as the real library
// does (its contract is the API's, not Rust's), so the bodies are not split into one
// documented unsafe block per dereference as the product's code is.
#![allow(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![allow(non_snake_case)]
// NVML's C names.
// Entry points of a C ABI: the safety contract is NVML's (valid pointers, true lengths).
#![allow(clippy::missing_safety_doc)]

mod config;

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, CStr};
use std::mem::size_of;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

use config::{FakeNvml, Gpu, MigInstance, Process};
use nvml_wrapper_sys::bindings::{
    nvmlBAR1Memory_t, nvmlClockType_t, nvmlComputeMode_t, nvmlDeviceArchitecture_t, nvmlDevice_st,
    nvmlDevice_t, nvmlEccCounterType_t, nvmlEnableState_t, nvmlFieldValue_t, nvmlGpuFabricInfoV_t,
    nvmlGpuFabricInfo_t, nvmlGpuFabricInfo_v2_t, nvmlGpuFabricInfo_v3_t, nvmlGpuP2PCapsIndex_t,
    nvmlGpuP2PStatus_t, nvmlGpuTopologyLevel_t, nvmlMemoryErrorType_t, nvmlMemory_t,
    nvmlMemory_v2_t, nvmlPageRetirementCause_t, nvmlPciInfo_t, nvmlProcessInfo_t, nvmlReturn_t,
    nvmlTemperatureSensors_t, nvmlTemperatureThresholds_t, nvmlValue_t,
};

const ENV: &str = "GPUDOCTOR_FAKE_NVML";

// nvmlReturn_t values.
const SUCCESS: u32 = 0;
const UNINITIALIZED: u32 = 1;
const INVALID_ARGUMENT: u32 = 2;
const NOT_SUPPORTED: u32 = 3;
const NOT_FOUND: u32 = 6;
const INSUFFICIENT_SIZE: u32 = 7;
const FUNCTION_NOT_FOUND: u32 = 13;
const GPU_IS_LOST: u32 = 15;
const ARGUMENT_VERSION_MISMATCH: u32 = 25;
const UNKNOWN: u32 = 999;

const FI_DEV_GET_GPU_RECOVERY_ACTION: u32 = 230;
const VALUE_TYPE_UNSIGNED_INT: u32 = 1;
const NO_ID: u32 = 0xFFFF_FFFF;
const TOPOLOGY_MULTIPLE: u32 = 20;
const P2P_OK: u32 = 0;
const P2P_CHIPSET_NOT_SUPPORTED: u32 = 1;
const P2P_NOT_SUPPORTED: u32 = 5;
const P2P_CAPS_NVLINK: u32 = 2;
const P2P_CAPS_LAST: u32 = 4;

/// Handles are `TAG | gpu << 8 | (mig slot + 1)`.
const HANDLE_TAG: usize = 0xF00D_0000;

type R = Result<(), nvmlReturn_t>;

struct State {
    cfg: Option<Arc<FakeNvml>>,
    refs: u32,
}

static STATE: Mutex<State> = Mutex::new(State { cfg: None, refs: 0 });

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn load() -> Result<FakeNvml, String> {
    let path = std::env::var_os(ENV).ok_or_else(|| format!("{ENV} is not set"))?;
    let shown = std::path::Path::new(&path).display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let cfg: FakeNvml = serde_json::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    validate(&cfg).map_err(|e| format!("{shown}: {e}"))?;
    Ok(cfg)
}

fn validate(cfg: &FakeNvml) -> Result<(), String> {
    if cfg.devices.len() > 255 {
        return Err("at most 255 devices".into());
    }
    for (i, g) in cfg.devices.iter().enumerate() {
        if let Some(p) = &g.pci {
            parse_bus_id(&p.bus_id)
                .ok_or_else(|| format!("devices[{i}].pci.bus_id {:?} is not D:B:D.F", p.bus_id))?;
        }
        if let Some(f) = &g.fabric {
            parse_uuid(&f.cluster_uuid)
                .ok_or_else(|| format!("devices[{i}].fabric.cluster_uuid is not 32 hex digits"))?;
        }
        if g.mig.as_ref().is_some_and(|m| m.instances.len() > 254) {
            return Err(format!("devices[{i}]: at most 254 MIG instances"));
        }
    }
    for p in &cfg.topology.pairs {
        if p.a as usize >= cfg.devices.len() || p.b as usize >= cfg.devices.len() {
            return Err(format!("topology pair {}-{} names no device", p.a, p.b));
        }
    }
    Ok(())
}

/// "00000000:18:00.0" or "0000:18:00.0" → (domain, bus, device, function).
fn parse_bus_id(s: &str) -> Option<(u32, u32, u32, u32)> {
    let parts: Vec<&str> = s.split(':').collect();
    let (domain, bus, rest) = match parts.as_slice() {
        [d, b, r] => (u32::from_str_radix(d, 16).ok()?, *b, *r),
        [b, r] => (0, *b, *r),
        _ => return None,
    };
    let (dev, func) = rest.split_once('.')?;
    Some((
        domain,
        u32::from_str_radix(bus, 16).ok()?,
        u32::from_str_radix(dev, 16).ok()?,
        u32::from_str_radix(func, 16).ok()?,
    ))
}

fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = s.bytes().filter(|b| *b != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

fn crash() -> ! {
    // SAFETY: plain libc calls; the process is meant to die here.
    unsafe {
        libc::signal(libc::SIGSEGV, libc::SIG_DFL);
        libc::raise(libc::SIGSEGV);
    }
    std::process::abort()
}

fn hang() -> ! {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// The configured fault for `sym`, if any (crash and hang never return).
fn fault(cfg: &FakeNvml, sym: &str) -> Option<nvmlReturn_t> {
    let f = &cfg.faults;
    if f.crash_in.as_deref() == Some(sym) {
        crash();
    }
    if f.hang_in.as_deref() == Some(sym) {
        hang();
    }
    f.missing
        .iter()
        .any(|m| m == sym)
        .then_some(FUNCTION_NOT_FOUND)
}

fn code(r: R) -> nvmlReturn_t {
    r.err().unwrap_or(SUCCESS)
}

/// Runs `f` for an initialised library, after the faults; panics become UNKNOWN.
fn guarded(sym: &str, f: impl FnOnce(&FakeNvml) -> R) -> nvmlReturn_t {
    catch_unwind(AssertUnwindSafe(|| {
        let (cfg, live) = {
            let s = state();
            (s.cfg.clone(), s.refs > 0)
        };
        let Some(cfg) = cfg else {
            return UNINITIALIZED;
        };
        if let Some(rc) = fault(&cfg, sym) {
            return rc;
        }
        if !live {
            return UNINITIALIZED;
        }
        code(f(&cfg))
    }))
    .unwrap_or(UNKNOWN)
}

fn handle(gpu: usize, mig: Option<usize>) -> nvmlDevice_t {
    std::ptr::without_provenance_mut::<nvmlDevice_st>(
        HANDLE_TAG | gpu << 8 | mig.map_or(0, |m| m + 1),
    )
}

type Target<'a> = (usize, &'a Gpu, Option<&'a MigInstance>);

/// A handle's GPU (and MIG instance), honouring the GPU's `lost` and `not_supported`.
fn lookup<'a>(cfg: &'a FakeNvml, h: nvmlDevice_t, sym: &str) -> Result<Target<'a>, u32> {
    let a = h.addr();
    if a & !0xFFFF != HANDLE_TAG {
        return Err(INVALID_ARGUMENT);
    }
    let (i, slot) = ((a >> 8) & 0xFF, a & 0xFF);
    let g = cfg.devices.get(i).ok_or(INVALID_ARGUMENT)?;
    if g.lost {
        return Err(GPU_IS_LOST);
    }
    let mig = match slot {
        0 => None,
        s => Some(
            g.mig
                .as_ref()
                .and_then(|m| m.instances.get(s - 1))
                .ok_or(INVALID_ARGUMENT)?,
        ),
    };
    if g.not_supported.iter().any(|s| s == sym) {
        return Err(NOT_SUPPORTED);
    }
    Ok((i, g, mig))
}

/// A handle that must be a whole GPU (MIG devices answer NOT_SUPPORTED).
fn lookup_gpu<'a>(cfg: &'a FakeNvml, h: nvmlDevice_t, sym: &str) -> Result<(usize, &'a Gpu), u32> {
    match lookup(cfg, h, sym)? {
        (i, g, None) => Ok((i, g)),
        _ => Err(NOT_SUPPORTED),
    }
}

fn dev(sym: &str, h: nvmlDevice_t, f: impl FnOnce(&FakeNvml, Target<'_>) -> R) -> nvmlReturn_t {
    guarded(sym, |cfg| f(cfg, lookup(cfg, h, sym)?))
}

fn gpu(sym: &str, h: nvmlDevice_t, f: impl FnOnce(&Gpu) -> R) -> nvmlReturn_t {
    guarded(sym, |cfg| f(lookup_gpu(cfg, h, sym)?.1))
}

unsafe fn put<T>(p: *mut T, v: T) -> R {
    if p.is_null() {
        return Err(INVALID_ARGUMENT);
    }
    p.write(v);
    Ok(())
}

unsafe fn opt<T>(p: *mut T, v: Option<T>) -> R {
    put(p, v.ok_or(NOT_SUPPORTED)?)
}

/// A NUL-terminated copy into a caller buffer of `len` bytes.
unsafe fn put_str(buf: *mut c_char, len: c_uint, s: Option<&str>) -> R {
    let s = s.ok_or(NOT_SUPPORTED)?;
    if buf.is_null() {
        return Err(INVALID_ARGUMENT);
    }
    let b = s.as_bytes();
    if b.len() >= len as usize {
        return Err(INSUFFICIENT_SIZE);
    }
    std::ptr::copy_nonoverlapping(b.as_ptr().cast::<c_char>(), buf, b.len());
    buf.add(b.len()).write(0);
    Ok(())
}

fn fill(dst: &mut [c_char], s: &str) {
    let room = dst.len().saturating_sub(1);
    for (d, b) in dst.iter_mut().zip(s.bytes().take(room)) {
        *d = b as c_char;
    }
}

fn enable(b: bool) -> nvmlEnableState_t {
    b as nvmlEnableState_t
}

fn struct_version<T>(v: u32) -> u32 {
    size_of::<T>() as u32 | v << 24
}

// ---- init, shutdown, errors ----

fn init(sym: &str) -> nvmlReturn_t {
    catch_unwind(|| {
        let cfg = {
            let mut s = state();
            if s.refs == 0 {
                // A new config may take the address of the one before.
                *PAIRS.lock().unwrap_or_else(|e| e.into_inner()) = None;
                match load() {
                    Ok(c) => s.cfg = Some(Arc::new(c)),
                    Err(e) => {
                        eprintln!("fake-nvml: {e}");
                        s.cfg = None;
                        return UNKNOWN;
                    }
                }
            }
            s.cfg.clone()
        };
        let Some(cfg) = cfg else { return UNKNOWN };
        if let Some(rc) = fault(&cfg, sym) {
            return rc;
        }
        if let Some(e) = cfg.faults.init_error {
            return e;
        }
        state().refs += 1;
        SUCCESS
    })
    .unwrap_or(UNKNOWN)
}

#[no_mangle]
pub unsafe extern "C" fn nvmlInit_v2() -> nvmlReturn_t {
    init("nvmlInit_v2")
}

#[no_mangle]
pub unsafe extern "C" fn nvmlInitWithFlags(_flags: c_uint) -> nvmlReturn_t {
    init("nvmlInitWithFlags")
}

#[no_mangle]
pub unsafe extern "C" fn nvmlShutdown() -> nvmlReturn_t {
    guarded("nvmlShutdown", |_| {
        let mut s = state();
        s.refs = s.refs.checked_sub(1).ok_or(UNINITIALIZED)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlErrorString(result: nvmlReturn_t) -> *const c_char {
    let text: &'static CStr = match result {
        0 => c"Success",
        1 => c"Uninitialized",
        2 => c"Invalid Argument",
        3 => c"Not Supported",
        4 => c"Insufficient Permissions",
        5 => c"Already Initialized",
        6 => c"Not Found",
        7 => c"Insufficient Size",
        8 => c"Insufficient External Power",
        9 => c"Driver Not Loaded",
        10 => c"Timeout",
        11 => c"Interrupt request issue",
        12 => c"NVML Shared Library Not Found",
        13 => c"Function Not Found",
        14 => c"Corrupted infoROM",
        15 => c"GPU is lost",
        16 => c"GPU requires restart",
        17 => c"The operating system has blocked the request.",
        18 => c"RM has detected an NVML/RM version mismatch.",
        19 => c"In use by another client",
        20 => c"Insufficient Memory",
        21 => c"No data",
        25 => c"Argument version mismatch",
        _ => c"Unknown Error",
    };
    let cfg = state().cfg.clone();
    if let Some(cfg) = cfg {
        let _ = catch_unwind(AssertUnwindSafe(|| fault(&cfg, "nvmlErrorString")));
    }
    text.as_ptr()
}

// ---- system ----

#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetDriverVersion(
    version: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    guarded("nvmlSystemGetDriverVersion", |c| {
        put_str(version, length, c.system.driver_version.as_deref())
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetNVMLVersion(
    version: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    guarded("nvmlSystemGetNVMLVersion", |c| {
        put_str(version, length, c.system.nvml_version.as_deref())
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion(v: *mut c_int) -> nvmlReturn_t {
    guarded("nvmlSystemGetCudaDriverVersion", |c| {
        opt(v, c.system.cuda_driver_version)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion_v2(v: *mut c_int) -> nvmlReturn_t {
    guarded("nvmlSystemGetCudaDriverVersion_v2", |c| {
        opt(v, c.system.cuda_driver_version)
    })
}

// ---- handles ----

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(count: *mut c_uint) -> nvmlReturn_t {
    guarded("nvmlDeviceGetCount_v2", |c| {
        put(count, c.devices.len() as c_uint)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(
    index: c_uint,
    device: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    guarded("nvmlDeviceGetHandleByIndex_v2", |c| {
        let i = index as usize;
        let g = c.devices.get(i).ok_or(INVALID_ARGUMENT)?;
        if g.lost {
            return Err(GPU_IS_LOST);
        }
        if let Some(code) = g.handle_error {
            return Err(code);
        }
        put(device, handle(i, None))
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByUUID(
    uuid: *const c_char,
    device: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    guarded("nvmlDeviceGetHandleByUUID", |c| {
        if uuid.is_null() {
            return Err(INVALID_ARGUMENT);
        }
        let want = CStr::from_ptr(uuid)
            .to_str()
            .map_err(|_| INVALID_ARGUMENT)?;
        for (i, g) in c.devices.iter().enumerate() {
            let mut migs = g.mig.iter().flat_map(|m| m.instances.iter()).enumerate();
            let found = if g.uuid.as_deref() == Some(want) {
                Some(None)
            } else {
                migs.find(|(_, m)| m.uuid == want).map(|(s, _)| Some(s))
            };
            if let Some(slot) = found {
                if g.lost {
                    return Err(GPU_IS_LOST);
                }
                return put(device, handle(i, slot));
            }
        }
        Err(NOT_FOUND)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetIndex(
    device: nvmlDevice_t,
    index: *mut c_uint,
) -> nvmlReturn_t {
    guarded("nvmlDeviceGetIndex", |c| {
        let (i, _) = lookup_gpu(c, device, "nvmlDeviceGetIndex")?;
        put(index, i as c_uint)
    })
}

// ---- identity ----

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetName(
    device: nvmlDevice_t,
    name: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    dev("nvmlDeviceGetName", device, |_, (_, g, m)| {
        let s = match m {
            Some(m) => m.name.as_deref(),
            None => g.name.as_deref(),
        };
        put_str(name, length, s)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUUID(
    device: nvmlDevice_t,
    uuid: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    dev("nvmlDeviceGetUUID", device, |_, (_, g, m)| {
        let s = match m {
            Some(m) => Some(m.uuid.as_str()),
            None => g.uuid.as_deref(),
        };
        put_str(uuid, length, s)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetSerial(
    device: nvmlDevice_t,
    serial: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetSerial", device, |g| {
        put_str(serial, length, g.serial.as_deref())
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(
    device: nvmlDevice_t,
    pci: *mut nvmlPciInfo_t,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetPciInfo_v3", device, |g| {
        let p = g.pci.as_ref().ok_or(NOT_SUPPORTED)?;
        let (domain, bus, device, func) = parse_bus_id(&p.bus_id).ok_or(UNKNOWN)?;
        // SAFETY: plain C data; all-zero is valid.
        let mut info: nvmlPciInfo_t = std::mem::zeroed();
        fill(
            &mut info.busIdLegacy,
            &format!("{domain:04X}:{bus:02X}:{device:02X}.{func:X}"),
        );
        fill(
            &mut info.busId,
            &format!("{domain:08X}:{bus:02X}:{device:02X}.{func:X}"),
        );
        info.domain = domain;
        info.bus = bus;
        info.device = device;
        info.pciDeviceId = p.device_id;
        info.pciSubSystemId = p.subsystem_id;
        put(pci, info)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCudaComputeCapability(
    device: nvmlDevice_t,
    major: *mut c_int,
    minor: *mut c_int,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetCudaComputeCapability", device, |g| {
        let [ma, mi] = g.compute_capability.ok_or(NOT_SUPPORTED)?;
        if minor.is_null() {
            return Err(INVALID_ARGUMENT);
        }
        put(major, ma)?;
        put(minor, mi)
    })
}

/// A device getter answering one value of a GPU (not of a MIG device).
macro_rules! gpu_getter {
    ($sym:ident: $ty:ty = |$g:ident| $val:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $sym(device: nvmlDevice_t, out: *mut $ty) -> nvmlReturn_t {
            gpu(stringify!($sym), device, |$g| opt(out, $val))
        }
    };
}

gpu_getter!(nvmlDeviceGetMinorNumber: c_uint = |g| g.minor_number);
gpu_getter!(nvmlDeviceGetArchitecture: nvmlDeviceArchitecture_t = |g| g.architecture);
gpu_getter!(nvmlDeviceGetCurrPcieLinkGeneration: c_uint = |g| g.pcie.as_ref().map(|p| p.gen));
gpu_getter!(nvmlDeviceGetMaxPcieLinkGeneration: c_uint = |g| g.pcie.as_ref().map(|p| p.max_gen));
gpu_getter!(nvmlDeviceGetCurrPcieLinkWidth: c_uint = |g| g.pcie.as_ref().map(|p| p.width));
gpu_getter!(nvmlDeviceGetMaxPcieLinkWidth: c_uint = |g| g.pcie.as_ref().map(|p| p.max_width));
gpu_getter!(nvmlDeviceGetPowerUsage: c_uint = |g| g.power_usage_mw);
gpu_getter!(nvmlDeviceGetEnforcedPowerLimit: c_uint = |g| g.power_limit_mw);
gpu_getter!(nvmlDeviceGetCurrentClocksThrottleReasons: c_ulonglong = |g| g.throttle_reasons);
gpu_getter!(nvmlDeviceGetCurrentClocksEventReasons: c_ulonglong = |g| g.throttle_reasons);
gpu_getter!(nvmlDeviceGetPersistenceMode: nvmlEnableState_t = |g| g.persistence_mode.map(enable));
gpu_getter!(nvmlDeviceGetComputeMode: nvmlComputeMode_t = |g| g.compute_mode);
gpu_getter!(nvmlDeviceGetRetiredPagesPendingStatus: nvmlEnableState_t = |g| g
    .retired_pages
    .as_ref()
    .map(|r| enable(r.pending)));

// ---- memory ----

fn memory_of<'a>(g: &'a Gpu, m: Option<&'a MigInstance>) -> Option<&'a config::Memory> {
    match m {
        Some(m) => m.memory.as_ref(),
        None => g.memory.as_ref(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo(
    device: nvmlDevice_t,
    memory: *mut nvmlMemory_t,
) -> nvmlReturn_t {
    dev("nvmlDeviceGetMemoryInfo", device, |_, (_, g, m)| {
        let mem = memory_of(g, m).ok_or(NOT_SUPPORTED)?;
        put(
            memory,
            nvmlMemory_t {
                total: mem.total,
                free: mem.free,
                used: mem.used.saturating_add(mem.reserved),
            },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(
    device: nvmlDevice_t,
    memory: *mut nvmlMemory_v2_t,
) -> nvmlReturn_t {
    dev("nvmlDeviceGetMemoryInfo_v2", device, |_, (_, g, m)| {
        if memory.is_null() {
            return Err(INVALID_ARGUMENT);
        }
        if (*memory).version != struct_version::<nvmlMemory_v2_t>(2) {
            return Err(ARGUMENT_VERSION_MISMATCH);
        }
        let mem = memory_of(g, m).ok_or(NOT_SUPPORTED)?;
        let out = &mut *memory;
        out.total = mem.total;
        out.reserved = mem.reserved;
        out.free = mem.free;
        out.used = mem.used;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetBAR1MemoryInfo(
    device: nvmlDevice_t,
    bar1: *mut nvmlBAR1Memory_t,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetBAR1MemoryInfo", device, |g| {
        let b = g.bar1.as_ref().ok_or(NOT_SUPPORTED)?;
        put(
            bar1,
            nvmlBAR1Memory_t {
                bar1Total: b.total,
                bar1Free: b.free,
                bar1Used: b.used,
            },
        )
    })
}

// ---- thermals and clocks ----

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTemperature(
    device: nvmlDevice_t,
    sensor: nvmlTemperatureSensors_t,
    temp: *mut c_uint,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetTemperature", device, |g| match sensor {
        0 => opt(temp, g.temperature_c),
        _ => Err(INVALID_ARGUMENT),
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTemperatureThreshold(
    device: nvmlDevice_t,
    kind: nvmlTemperatureThresholds_t,
    temp: *mut c_uint,
) -> nvmlReturn_t {
    gpu(
        "nvmlDeviceGetTemperatureThreshold",
        device,
        |g| match kind {
            0 => opt(temp, g.shutdown_temp_c),
            1 => opt(temp, g.slowdown_temp_c),
            2..=7 => Err(NOT_SUPPORTED),
            _ => Err(INVALID_ARGUMENT),
        },
    )
}

unsafe fn clock(g: &Gpu, kind: nvmlClockType_t, max: bool, out: *mut c_uint) -> R {
    let c = g.clocks.as_ref().ok_or(NOT_SUPPORTED)?;
    let v = match (kind, max) {
        (0 | 1, false) => c.sm,
        (0 | 1, true) => c.max_sm,
        (2, false) => c.mem,
        (2, true) => c.max_mem,
        (3, _) => return Err(NOT_SUPPORTED),
        _ => return Err(INVALID_ARGUMENT),
    };
    put(out, v)
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetClockInfo(
    device: nvmlDevice_t,
    kind: nvmlClockType_t,
    mhz: *mut c_uint,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetClockInfo", device, |g| {
        clock(g, kind, false, mhz)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMaxClockInfo(
    device: nvmlDevice_t,
    kind: nvmlClockType_t,
    mhz: *mut c_uint,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetMaxClockInfo", device, |g| {
        clock(g, kind, true, mhz)
    })
}

// ---- ECC, retired pages, remapped rows ----

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetEccMode(
    device: nvmlDevice_t,
    current: *mut nvmlEnableState_t,
    pending: *mut nvmlEnableState_t,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetEccMode", device, |g| {
        let e = g.ecc.as_ref().ok_or(NOT_SUPPORTED)?;
        if pending.is_null() {
            return Err(INVALID_ARGUMENT);
        }
        put(current, enable(e.current))?;
        put(pending, enable(e.pending))
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTotalEccErrors(
    device: nvmlDevice_t,
    error_type: nvmlMemoryErrorType_t,
    counter_type: nvmlEccCounterType_t,
    count: *mut c_ulonglong,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetTotalEccErrors", device, |g| {
        if error_type > 1 || counter_type > 1 {
            return Err(INVALID_ARGUMENT);
        }
        let e = g.ecc.as_ref().ok_or(NOT_SUPPORTED)?;
        let counts = if counter_type == 0 {
            &e.volatile
        } else {
            &e.aggregate
        };
        let c = counts.as_ref().ok_or(NOT_SUPPORTED)?;
        put(
            count,
            if error_type == 0 {
                c.corrected
            } else {
                c.uncorrected
            },
        )
    })
}

unsafe fn retired(
    g: &Gpu,
    cause: nvmlPageRetirementCause_t,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
    timestamps: *mut c_ulonglong,
) -> R {
    let r = g.retired_pages.as_ref().ok_or(NOT_SUPPORTED)?;
    let list = match cause {
        0 => &r.sbe,
        1 => &r.dbe,
        _ => return Err(INVALID_ARGUMENT),
    };
    if count.is_null() {
        return Err(INVALID_ARGUMENT);
    }
    let room = *count as usize;
    *count = list.len() as c_uint;
    if room < list.len() {
        return Err(INSUFFICIENT_SIZE);
    }
    if !list.is_empty() && addresses.is_null() {
        return Err(INVALID_ARGUMENT);
    }
    for (i, a) in list.iter().enumerate() {
        addresses.add(i).write(*a);
        if !timestamps.is_null() {
            timestamps.add(i).write(1_700_000_000_000_000 + i as u64);
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages(
    device: nvmlDevice_t,
    cause: nvmlPageRetirementCause_t,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetRetiredPages", device, |g| {
        retired(g, cause, count, addresses, std::ptr::null_mut())
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages_v2(
    device: nvmlDevice_t,
    cause: nvmlPageRetirementCause_t,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
    timestamps: *mut c_ulonglong,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetRetiredPages_v2", device, |g| {
        retired(g, cause, count, addresses, timestamps)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRemappedRows(
    device: nvmlDevice_t,
    corr: *mut c_uint,
    unc: *mut c_uint,
    pending: *mut c_uint,
    failure: *mut c_uint,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetRemappedRows", device, |g| {
        let r = g.remapped_rows.as_ref().ok_or(NOT_SUPPORTED)?;
        if [corr, unc, pending, failure].iter().any(|p| p.is_null()) {
            return Err(INVALID_ARGUMENT);
        }
        put(corr, r.correctable)?;
        put(unc, r.uncorrectable)?;
        put(pending, r.pending as c_uint)?;
        put(failure, r.failure as c_uint)
    })
}

// ---- MIG ----

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: nvmlDevice_t,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetMigMode", device, |g| {
        let m = g.mig.as_ref().ok_or(NOT_SUPPORTED)?;
        if pending.is_null() {
            return Err(INVALID_ARGUMENT);
        }
        put(current, m.current as c_uint)?;
        put(pending, m.pending as c_uint)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMaxMigDeviceCount(
    device: nvmlDevice_t,
    count: *mut c_uint,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetMaxMigDeviceCount", device, |g| {
        let n = g
            .mig
            .as_ref()
            .filter(|m| m.current)
            .map_or(0, |m| m.max_devices);
        put(count, n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigDeviceHandleByIndex(
    device: nvmlDevice_t,
    index: c_uint,
    mig: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    let sym = "nvmlDeviceGetMigDeviceHandleByIndex";
    guarded(sym, |c| {
        let (i, g) = lookup_gpu(c, device, sym)?;
        let m = g.mig.as_ref().ok_or(NOT_SUPPORTED)?;
        let slot = index as usize;
        if !m.current || index >= m.max_devices {
            return Err(INVALID_ARGUMENT);
        }
        if slot >= m.instances.len() {
            return Err(NOT_FOUND);
        }
        put(mig, handle(i, Some(slot)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceIsMigDeviceHandle(
    device: nvmlDevice_t,
    is_mig: *mut c_uint,
) -> nvmlReturn_t {
    dev("nvmlDeviceIsMigDeviceHandle", device, |_, (_, _, m)| {
        put(is_mig, m.is_some() as c_uint)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetDeviceHandleFromMigDeviceHandle(
    mig: nvmlDevice_t,
    device: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    dev(
        "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
        mig,
        |_, (i, _, m)| {
            m.ok_or(INVALID_ARGUMENT)?;
            put(device, handle(i, None))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGpuInstanceId(
    device: nvmlDevice_t,
    id: *mut c_uint,
) -> nvmlReturn_t {
    dev("nvmlDeviceGetGpuInstanceId", device, |_, (_, _, m)| {
        opt(id, m.map(|m| m.gpu_instance_id))
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeInstanceId(
    device: nvmlDevice_t,
    id: *mut c_uint,
) -> nvmlReturn_t {
    dev("nvmlDeviceGetComputeInstanceId", device, |_, (_, _, m)| {
        opt(id, m.map(|m| m.compute_instance_id))
    })
}

// ---- processes ----

/// NVML's two-call protocol: too small a buffer (or NULL) → INSUFFICIENT_SIZE and the count.
unsafe fn processes(
    list: Option<&Vec<Process>>,
    mig: Option<&MigInstance>,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> R {
    let list = list.ok_or(NOT_SUPPORTED)?;
    if count.is_null() {
        return Err(INVALID_ARGUMENT);
    }
    let chosen: Vec<&Process> = list
        .iter()
        .filter(|p| mig.is_none_or(|m| p.gpu_instance_id == Some(m.gpu_instance_id)))
        .collect();
    let room = *count as usize;
    *count = chosen.len() as c_uint;
    if chosen.is_empty() {
        return Ok(());
    }
    if infos.is_null() || room < chosen.len() {
        return Err(INSUFFICIENT_SIZE);
    }
    for (i, p) in chosen.iter().enumerate() {
        infos.add(i).write(nvmlProcessInfo_t {
            pid: p.pid,
            usedGpuMemory: p.used_memory.unwrap_or(u64::MAX),
            gpuInstanceId: p.gpu_instance_id.unwrap_or(NO_ID),
            computeInstanceId: p.compute_instance_id.unwrap_or(NO_ID),
        });
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v3(
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    dev(
        "nvmlDeviceGetComputeRunningProcesses_v3",
        device,
        |_, (_, g, m)| processes(g.compute_processes.as_ref(), m, count, infos),
    )
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGraphicsRunningProcesses_v3(
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    dev(
        "nvmlDeviceGetGraphicsRunningProcesses_v3",
        device,
        |_, (_, g, m)| processes(g.graphics_processes.as_ref(), m, count, infos),
    )
}

// ---- interconnect ----

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkState(
    device: nvmlDevice_t,
    link: c_uint,
    active: *mut nvmlEnableState_t,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetNvLinkState", device, |g| {
        let links = g.nvlinks.as_ref().ok_or(NOT_SUPPORTED)?;
        let up = links.get(link as usize).ok_or(INVALID_ARGUMENT)?;
        put(active, enable(*up))
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkErrorCounter(
    device: nvmlDevice_t,
    link: c_uint,
    counter: c_uint,
    value: *mut u64,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetNvLinkErrorCounter", device, |g| {
        let links = g.nvlink_errors.as_ref().ok_or(NOT_SUPPORTED)?;
        let counts = links.get(link as usize).ok_or(NOT_SUPPORTED)?;
        // nvmlNvLinkErrorCounter_t: DL_REPLAY 0, DL_RECOVERY 1, DL_CRC_FLIT 2, DL_CRC_DATA 3.
        let n = counts.get(counter as usize).ok_or(INVALID_ARGUMENT)?;
        put(value, *n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPcieReplayCounter(
    device: nvmlDevice_t,
    value: *mut c_uint,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetPcieReplayCounter", device, |g| {
        put(value, g.pcie_replay_counter.ok_or(NOT_SUPPORTED)?)
    })
}

/// The PCI info of a bus id, as nvmlDeviceGetPciInfo_v3 fills it.
fn pci_info(bus_id: &str) -> Option<nvmlPciInfo_t> {
    let (domain, bus, device, func) = parse_bus_id(bus_id)?;
    // SAFETY: plain C data; all-zero is valid.
    let mut info: nvmlPciInfo_t = unsafe { std::mem::zeroed() };
    fill(
        &mut info.busIdLegacy,
        &format!("{domain:04X}:{bus:02X}:{device:02X}.{func:X}"),
    );
    fill(
        &mut info.busId,
        &format!("{domain:08X}:{bus:02X}:{device:02X}.{func:X}"),
    );
    info.domain = domain;
    info.bus = bus;
    info.device = device;
    Some(info)
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkRemotePciInfo_v2(
    device: nvmlDevice_t,
    link: c_uint,
    pci: *mut nvmlPciInfo_t,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetNvLinkRemotePciInfo_v2", device, |g| {
        let links = g.nvlinks.as_ref().ok_or(NOT_SUPPORTED)?;
        if link as usize >= links.len() {
            return Err(INVALID_ARGUMENT);
        }
        let remote = g
            .nvlink_remotes
            .as_ref()
            .and_then(|r| r.get(link as usize).cloned().flatten())
            .ok_or(NOT_SUPPORTED)?;
        put(pci, pci_info(&remote).ok_or(UNKNOWN)?)
    })
}

/// The topology's pairs by (lower, higher) GPU index, for the config at this address: a
/// 255-GPU node asks for all 32,385 pairs twice, and a scan per question is quadratic.
type PairIndex = (usize, std::collections::HashMap<(usize, usize), usize>);
static PAIRS: Mutex<Option<PairIndex>> = Mutex::new(None);

fn pair(cfg: &FakeNvml, i: usize, j: usize) -> Option<&config::TopoPair> {
    let key = (i.min(j), i.max(j));
    let at = cfg as *const FakeNvml as usize;
    let mut index = PAIRS.lock().unwrap_or_else(|e| e.into_inner());
    if index.as_ref().is_none_or(|(for_cfg, _)| *for_cfg != at) {
        // The last entry for a pair wins, so tests can append overrides to a preset.
        let by_pair = cfg
            .topology
            .pairs
            .iter()
            .enumerate()
            .map(|(n, p)| {
                (
                    (
                        (p.a as usize).min(p.b as usize),
                        (p.a as usize).max(p.b as usize),
                    ),
                    n,
                )
            })
            .collect();
        *index = Some((at, by_pair));
    }
    let n = *index.as_ref()?.1.get(&key)?;
    cfg.topology.pairs.get(n)
}

fn level(cfg: &FakeNvml, i: usize, j: usize) -> Option<u32> {
    if i == j {
        return Some(0);
    }
    pair(cfg, i, j)
        .and_then(|p| p.level)
        .or(cfg.topology.default_level)
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTopologyCommonAncestor(
    device1: nvmlDevice_t,
    device2: nvmlDevice_t,
    path: *mut nvmlGpuTopologyLevel_t,
) -> nvmlReturn_t {
    let sym = "nvmlDeviceGetTopologyCommonAncestor";
    guarded(sym, |c| {
        let (i, _) = lookup_gpu(c, device1, sym)?;
        let (j, _) = lookup_gpu(c, device2, sym)?;
        opt(path, level(c, i, j))
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetP2PStatus(
    device1: nvmlDevice_t,
    device2: nvmlDevice_t,
    cap: nvmlGpuP2PCapsIndex_t,
    status: *mut nvmlGpuP2PStatus_t,
) -> nvmlReturn_t {
    let sym = "nvmlDeviceGetP2PStatus";
    guarded(sym, |c| {
        let (i, g1) = lookup_gpu(c, device1, sym)?;
        let (j, g2) = lookup_gpu(c, device2, sym)?;
        if cap > P2P_CAPS_LAST {
            return Err(INVALID_ARGUMENT);
        }
        let nvlink = |g: &Gpu| g.nvlinks.as_ref().is_some_and(|l| l.contains(&true));
        let both = nvlink(g1) && nvlink(g2);
        let s = match pair(c, i, j).and_then(|p| p.p2p) {
            Some(s) => s,
            None if cap == P2P_CAPS_NVLINK => {
                if both {
                    P2P_OK
                } else {
                    P2P_NOT_SUPPORTED
                }
            }
            None if both || level(c, i, j).is_some_and(|l| l <= TOPOLOGY_MULTIPLE) => P2P_OK,
            None => P2P_CHIPSET_NOT_SUPPORTED,
        };
        put(status, s)
    })
}

fn fabric_of(g: &Gpu) -> Result<(&config::Fabric, [u8; 16]), u32> {
    let f = g.fabric.as_ref().ok_or(NOT_SUPPORTED)?;
    Ok((f, parse_uuid(&f.cluster_uuid).ok_or(UNKNOWN)?))
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGpuFabricInfo(
    device: nvmlDevice_t,
    info: *mut nvmlGpuFabricInfo_t,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetGpuFabricInfo", device, |g| {
        let (f, uuid) = fabric_of(g)?;
        put(
            info,
            nvmlGpuFabricInfo_t {
                clusterUuid: uuid,
                status: f.status,
                cliqueId: f.clique_id,
                state: f.state.code(),
            },
        )
    })
}

/// The versioned call: accepts v2 and v3 structs (NVML_STRUCT_VERSION).
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGpuFabricInfoV(
    device: nvmlDevice_t,
    info: *mut nvmlGpuFabricInfoV_t,
) -> nvmlReturn_t {
    gpu("nvmlDeviceGetGpuFabricInfoV", device, |g| {
        if info.is_null() {
            return Err(INVALID_ARGUMENT);
        }
        let version = (*info).version;
        let (f, uuid) = fabric_of(g)?;
        let v2 = nvmlGpuFabricInfo_v2_t {
            version,
            clusterUuid: uuid,
            status: f.status,
            cliqueId: f.clique_id,
            state: f.state.code(),
            healthMask: f.health_mask,
        };
        if version == struct_version::<nvmlGpuFabricInfo_v3_t>(3) {
            info.write(nvmlGpuFabricInfo_v3_t {
                version,
                clusterUuid: uuid,
                status: f.status,
                cliqueId: f.clique_id,
                state: f.state.code(),
                healthMask: f.health_mask,
                healthSummary: f.health_summary,
            });
        } else if version == struct_version::<nvmlGpuFabricInfo_v2_t>(2) {
            info.cast::<nvmlGpuFabricInfo_v2_t>().write(v2);
        } else {
            return Err(ARGUMENT_VERSION_MISMATCH);
        }
        Ok(())
    })
}

// ---- field values ----

/// Only NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (230) is known; others answer NOT_SUPPORTED
/// in their own nvmlReturn.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetFieldValues(
    device: nvmlDevice_t,
    count: c_int,
    values: *mut nvmlFieldValue_t,
) -> nvmlReturn_t {
    dev("nvmlDeviceGetFieldValues", device, |_, (_, g, m)| {
        if count <= 0 || values.is_null() {
            return Err(INVALID_ARGUMENT);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        for k in 0..count as usize {
            let v = &mut *values.add(k);
            v.timestamp = now;
            v.latencyUsec = 0;
            v.value = nvmlValue_t { ullVal: 0 };
            match g.recovery_action {
                Some(a) if v.fieldId == FI_DEV_GET_GPU_RECOVERY_ACTION && m.is_none() => {
                    v.valueType = VALUE_TYPE_UNSIGNED_INT;
                    v.value.uiVal = a;
                    v.nvmlReturn = SUCCESS;
                }
                _ => v.nvmlReturn = NOT_SUPPORTED,
            }
        }
        Ok(())
    })
}
