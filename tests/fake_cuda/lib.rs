//! A fake libcuda (CUDA driver API) for gpudoctor's smoke tests: exports the driver
//! functions the smoke test calls, with their C ABI, and runs its three kernels on the CPU.
//!
//! Built by `cargo test` as target/<profile>/examples/libfake_cuda.so (an `[[example]]`
//! cdylib). dlopen it by path, or link it as libcuda.so.1.
//!
//! # Config
//!
//! `GPUDOCTOR_FAKE_CUDA` names a JSON file, read at cuInit (each cuInit until one read
//! succeeds, then cached). Missing or bad → cuInit answers 999 (CUDA_ERROR_UNKNOWN) and
//! says why on stderr. Types and defaults: tests/fake_cuda/config.rs.
//!
//! ```json
//! { "driver_version": 12040, "init_error": 100, "max_ptx_version": "5.0", "device_count": -3,
//!   "hang_in": "cuCtxSynchronize", "crash_in": "cuMemAlloc_v2",
//!   "devices": [ {
//!     "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-8e1f6a2c-0000-0000-0000-000000000000",
//!     "pci_bus_id": "0000:18:00.0", "compute_capability": [9, 0], "sm_count": 132,
//!     "total_memory": 268435456, "used_by_others": 0,
//!     "ctx_error": 46, "module_error": 218, "oom_after_bytes": 1048576,
//!     "matmul_wrong": true, "bit_flips": 3, "hang_in": "cuLaunchKernel",
//!     "crash_in": "cuMemcpyDtoH_v2", "h2d_gbps": 25.0, "d2h_gbps": 25.0,
//!     "pageable_gbps": 5.0, "device_copy_gbps": 2900.0 } ],
//!   "peers": [ { "from": 0, "to": 1, "can_access": true, "enable_error": 711,
//!     "copy_error": 700, "hang": true, "corrupt": true, "gbps": 2.0 } ] }
//! ```
//!
//! Rules worth knowing:
//! - Each device has its own clock, which only cuMemcpyDtoD advances (by 2 × bytes at
//!   `device_copy_gbps`); cuEventElapsedTime reports it, so the device-memory bandwidth the
//!   smoke test measures is the configured one, whatever the CPU's.
//! - CUDA_VISIBLE_DEVICES is read at the cuInit that succeeds, as the real driver does, and
//!   filters as it does (indices or "GPU-" UUID prefixes, stopping at the first bad entry).
//!   No visible device → cuInit answers 100 (CUDA_ERROR_NO_DEVICE), as the real one does.
//! - Everything but cuInit, cuDriverGetVersion and cuGetError* answers 3 before a
//!   successful cuInit. Context-bound calls without a current context answer 201.
//! - `hang_in`/`crash_in` fire at the top of the named symbol: the global ones always,
//!   a device's when the call is for it (its dev/ctx argument, else the current context).
//!   `crash_in` resets SIGSEGV to its default action and raises it.
//! - Device memory is host memory (zeroed, 256-aligned); a CUdeviceptr is its address.
//!   Releasing a primary context to zero frees its allocations and modules.
//! - Kernels run synchronously on the CPU, on up to 8 threads; unknown kernels answer 999.
//!   Misaligned or out-of-allocation kernel pointers answer 700 (not sticky).
//! - Bad module/function handles answer 400 (CUDA_ERROR_INVALID_HANDLE).
//! - Peers (config indices): every pair of two devices can access each other unless a
//!   `peers` entry says otherwise; cuCtxEnablePeerAccess answers 704 the second time for a
//!   pair. Streams are handles only: work runs when it is issued.

// A C library's double: each entry point trusts its C caller's pointers as the real library
// does (its contract is the API's, not Rust's), so the bodies are not split into one
// documented unsafe block per dereference as the product's code is.
#![allow(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![allow(non_snake_case)]
// Entry points of a C ABI: the safety contract is CUDA's (valid pointers, true lengths).
#![allow(clippy::missing_safety_doc)]

mod config;

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use config::{Device, FakeCuda};

const ENV: &str = "GPUDOCTOR_FAKE_CUDA";

// CUresult values.
const SUCCESS: c_int = 0;
const INVALID_VALUE: c_int = 1;
const OUT_OF_MEMORY: c_int = 2;
const NOT_INITIALIZED: c_int = 3;
const NO_DEVICE: c_int = 100;
const INVALID_DEVICE: c_int = 101;
const INVALID_CONTEXT: c_int = 201;
const NO_BINARY_FOR_GPU: c_int = 209;
const INVALID_PTX: c_int = 218;
const UNSUPPORTED_PTX_VERSION: c_int = 222;
const INVALID_HANDLE: c_int = 400;
const NOT_FOUND: c_int = 500;
const ILLEGAL_ADDRESS: c_int = 700;
const PEER_ACCESS_UNSUPPORTED: c_int = 217;
const PEER_ACCESS_ALREADY_ENABLED: c_int = 704;
const UNKNOWN: c_int = 999;

// CUdevice_attribute values.
const ATTR_SM_COUNT: c_int = 16;
const ATTR_PCI_BUS: c_int = 33;
const ATTR_PCI_DEVICE: c_int = 34;
const ATTR_CC_MAJOR: c_int = 75;
const ATTR_CC_MINOR: c_int = 76;
const ATTR_PCI_DOMAIN: c_int = 50;

// CUjit_option values.
const JIT_ERROR_LOG_BUFFER: c_int = 5;
const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

const DEVICE_ALIGN: usize = 256;
const HOST_ALIGN: usize = 4096;

// Handles are `TAG << 48 | payload`, never null and easy to tell apart.
const CTX_TAG: usize = 0xC7C7;
const MOD_TAG: usize = 0x3D3D;
const FN_TAG: usize = 0xF7F7;
const STREAM_TAG: usize = 0x5757;

type R = Result<(), c_int>;
type CUcontext = *mut c_void;
type CUmodule = *mut c_void;
type CUfunction = *mut c_void;
type CUstream = *mut c_void;

struct Alloc {
    size: usize,
    dev: usize,
}

struct Module {
    dev: usize,
    entries: Vec<String>,
}

struct State {
    cfg: Option<Arc<FakeCuda>>,
    init: bool,
    /// Config indices in CUdevice order.
    visible: Vec<usize>,
    /// Primary-context retain counts, by config index.
    ctx_refs: Vec<u32>,
    /// Device allocations by base address.
    allocs: BTreeMap<u64, Alloc>,
    /// cuMemHostAlloc blocks by base address → size.
    host: BTreeMap<usize, usize>,
    modules: BTreeMap<usize, Module>,
    next_module: usize,
    /// Peer access enabled (from, to), by config index.
    peer_enabled: Vec<(usize, usize)>,
    /// Live streams by id → config index of their context's device.
    streams: BTreeMap<usize, usize>,
    next_stream: usize,
    /// Live events by id → where they were recorded: (config index, the device's clock).
    events: BTreeMap<usize, Option<(usize, u64)>>,
    next_event: usize,
    /// Each device's own clock in ns (by config index): device-to-device copies advance it
    /// by the time the device's memory would take, which events then report.
    clocks: BTreeMap<usize, u64>,
}

static STATE: Mutex<State> = Mutex::new(State {
    cfg: None,
    init: false,
    visible: Vec::new(),
    ctx_refs: Vec::new(),
    allocs: BTreeMap::new(),
    host: BTreeMap::new(),
    modules: BTreeMap::new(),
    next_module: 1,
    peer_enabled: Vec::new(),
    streams: BTreeMap::new(),
    next_stream: 1,
    events: BTreeMap::new(),
    next_event: 1,
    clocks: BTreeMap::new(),
});

thread_local! {
    /// The current context's config index + 1 (0: none), as cuCtxSetCurrent left it.
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

// ---- config ----

fn load() -> Result<FakeCuda, String> {
    let path = std::env::var_os(ENV).ok_or_else(|| format!("{ENV} is not set"))?;
    let shown = std::path::Path::new(&path).display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let cfg: FakeCuda = serde_json::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    validate(&cfg).map_err(|e| format!("{shown}: {e}"))?;
    Ok(cfg)
}

fn validate(cfg: &FakeCuda) -> Result<(), String> {
    if let Some(v) = &cfg.max_ptx_version {
        parse_version(v).ok_or_else(|| format!("max_ptx_version {v:?} is not X.Y"))?;
    }
    for (i, d) in cfg.devices.iter().enumerate() {
        parse_uuid(&d.uuid)
            .ok_or_else(|| format!("devices[{i}].uuid {:?} is not GPU-<32 hex>", d.uuid))?;
        parse_bus_id(&d.pci_bus_id)
            .ok_or_else(|| format!("devices[{i}].pci_bus_id {:?} is not D:B:D.F", d.pci_bus_id))?;
        if d.used_by_others > d.total_memory {
            return Err(format!("devices[{i}].used_by_others exceeds total_memory"));
        }
        for (field, r) in [
            ("h2d_gbps", d.h2d_gbps),
            ("d2h_gbps", d.d2h_gbps),
            ("pageable_gbps", d.pageable_gbps),
            ("device_copy_gbps", Some(d.device_copy_gbps)),
        ] {
            if r.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
                return Err(format!("devices[{i}].{field} must be a positive number"));
            }
        }
    }
    let n = cfg.devices.len() as u32;
    for (i, p) in cfg.peers.iter().enumerate() {
        if p.from >= n || p.to >= n || p.from == p.to {
            return Err(format!(
                "peers[{i}] is not a pair of two configured devices"
            ));
        }
        if p.gbps.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
            return Err(format!("peers[{i}].gbps must be a positive number"));
        }
    }
    Ok(())
}

fn parse_version(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// "GPU-" and 32 hex digits, dashes anywhere after the prefix.
fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = s
        .strip_prefix("GPU-")?
        .bytes()
        .filter(|b| *b != b'-')
        .collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

/// "0000:18:00.0" → (domain, bus, device, function).
fn parse_bus_id(s: &str) -> Option<(u32, u32, u32, u32)> {
    let (domain, rest) = s.split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (dev, func) = rest.split_once('.')?;
    Some((
        u32::from_str_radix(domain, 16).ok()?,
        u32::from_str_radix(bus, 16).ok()?,
        u32::from_str_radix(dev, 16).ok()?,
        u32::from_str_radix(func, 16).ok()?,
    ))
}

/// The devices CUDA_VISIBLE_DEVICES leaves, in its order (config indices).
fn visible(devices: &[Device], cvd: Option<&str>) -> Vec<usize> {
    let Some(cvd) = cvd else {
        return (0..devices.len()).collect();
    };
    let mut out = Vec::new();
    for entry in cvd.split(',') {
        let e = entry.trim();
        let found = if e.starts_with("GPU-") {
            // A UUID prefix must name exactly one device.
            let mut m = devices.iter().enumerate().filter(|(_, d)| {
                d.uuid
                    .to_ascii_lowercase()
                    .starts_with(&e.to_ascii_lowercase())
            });
            match (m.next(), m.next()) {
                (Some((i, _)), None) => Some(i),
                _ => None,
            }
        } else {
            e.parse::<usize>().ok().filter(|i| *i < devices.len())
        };
        match found {
            Some(i) if !out.contains(&i) => out.push(i),
            _ => break,
        }
    }
    out
}

// ---- faults and the call wrapper ----

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
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn fault(hang_in: &Option<String>, crash_in: &Option<String>, sym: &str) {
    if crash_in.as_deref() == Some(sym) {
        crash();
    }
    if hang_in.as_deref() == Some(sym) {
        hang();
    }
}

fn code(r: R) -> c_int {
    r.err().unwrap_or(SUCCESS)
}

/// Which device a call is for, to pick its per-device faults and its target.
enum For {
    /// The current context's device (or none).
    Current,
    /// A CUdevice argument: an ordinal into the visible list (101 when out of range).
    Ordinal(c_int),
    /// A CUcontext argument (201 when not a live context; null means none).
    Ctx(CUcontext),
}

/// The config, and the config index of the device the call is for.
struct Call {
    cfg: Arc<FakeCuda>,
    dev: Option<usize>,
}

impl Call {
    fn device(&self) -> &Device {
        &self.cfg.devices[self.dev.expect("a call for a device")]
    }

    /// The current context's device, or 201.
    fn ctx_dev(&self) -> Result<usize, c_int> {
        self.dev.ok_or(INVALID_CONTEXT)
    }
}

fn current_dev(s: &State) -> Option<usize> {
    let c = CURRENT.with(Cell::get);
    let i = c.checked_sub(1)?;
    (s.ctx_refs.get(i).copied().unwrap_or(0) > 0).then_some(i)
}

fn ctx_handle(dev: usize) -> CUcontext {
    std::ptr::without_provenance_mut(CTX_TAG << 48 | (dev + 1))
}

/// A live primary context's config index.
fn ctx_dev(s: &State, ctx: CUcontext) -> Option<usize> {
    let a = ctx.addr();
    if a >> 48 != CTX_TAG {
        return None;
    }
    let i = (a & 0xFFFF_FFFF).checked_sub(1)?;
    (s.ctx_refs.get(i).copied().unwrap_or(0) > 0).then_some(i)
}

/// Runs `f` for an initialised library, after the global and per-device faults; panics
/// become 999.
fn guarded(sym: &str, target: For, f: impl FnOnce(&Call) -> R) -> c_int {
    catch_unwind(AssertUnwindSafe(|| {
        let Some(cfg) = state().cfg.clone() else {
            return NOT_INITIALIZED;
        };
        fault(&cfg.hang_in, &cfg.crash_in, sym);
        let dev = {
            let s = state();
            if !s.init {
                return NOT_INITIALIZED;
            }
            match target {
                For::Current => current_dev(&s),
                For::Ordinal(o) => match usize::try_from(o).ok().and_then(|o| s.visible.get(o)) {
                    Some(i) => Some(*i),
                    None => return INVALID_DEVICE,
                },
                For::Ctx(c) if c.is_null() => None,
                For::Ctx(c) => match ctx_dev(&s, c) {
                    Some(i) => Some(i),
                    None => return INVALID_CONTEXT,
                },
            }
        };
        if let Some(i) = dev {
            let d = &cfg.devices[i];
            fault(&d.hang_in, &d.crash_in, sym);
        }
        code(f(&Call { cfg, dev }))
    }))
    .unwrap_or(UNKNOWN)
}

/// For the calls allowed before cuInit: global faults only, when a config is loaded.
fn early(sym: &str, f: impl FnOnce() -> R) -> c_int {
    catch_unwind(AssertUnwindSafe(|| {
        if let Some(cfg) = state().cfg.clone() {
            fault(&cfg.hang_in, &cfg.crash_in, sym);
        }
        code(f())
    }))
    .unwrap_or(UNKNOWN)
}

unsafe fn put<T>(p: *mut T, v: T) -> R {
    if p.is_null() {
        return Err(INVALID_VALUE);
    }
    p.write(v);
    Ok(())
}

/// A NUL-terminated copy into a caller buffer of `len` bytes, truncated as the driver does.
unsafe fn put_str(buf: *mut c_char, len: c_int, s: &str) -> R {
    if buf.is_null() || len <= 0 {
        return Err(INVALID_VALUE);
    }
    let n = s.len().min(len as usize - 1);
    std::ptr::copy_nonoverlapping(s.as_ptr().cast::<c_char>(), buf, n);
    buf.add(n).write(0);
    Ok(())
}

// ---- init, version, errors ----

#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> c_int {
    catch_unwind(|| {
        let cfg = {
            let mut s = state();
            if s.cfg.is_none() {
                match load() {
                    Ok(c) => s.cfg = Some(Arc::new(c)),
                    Err(e) => {
                        eprintln!("fake-cuda: {e}");
                        return UNKNOWN;
                    }
                }
            }
            s.cfg.clone().expect("loaded")
        };
        fault(&cfg.hang_in, &cfg.crash_in, "cuInit");
        if flags != 0 {
            return INVALID_VALUE;
        }
        if let Some(e) = cfg.init_error {
            return e;
        }
        let mut s = state();
        if !s.init {
            let cvd = std::env::var("CUDA_VISIBLE_DEVICES").ok();
            let vis = visible(&cfg.devices, cvd.as_deref());
            if vis.is_empty() {
                return NO_DEVICE;
            }
            s.visible = vis;
            s.ctx_refs = vec![0; cfg.devices.len()];
            s.init = true;
        }
        SUCCESS
    })
    .unwrap_or(UNKNOWN)
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(v: *mut c_int) -> c_int {
    // Works before cuInit, so it reads the config itself.
    let loaded = {
        let mut s = state();
        if s.cfg.is_none() {
            match load() {
                Ok(c) => s.cfg = Some(Arc::new(c)),
                Err(e) => {
                    eprintln!("fake-cuda: {e}");
                    return UNKNOWN;
                }
            }
        }
        s.cfg.clone().expect("loaded")
    };
    early("cuDriverGetVersion", || put(v, loaded.driver_version))
}

/// (CUresult, name, description) for the codes gpudoctor names.
const ERRORS: &[(c_int, &CStr, &CStr)] = &[
    (0, c"CUDA_SUCCESS", c"no error"),
    (1, c"CUDA_ERROR_INVALID_VALUE", c"invalid argument"),
    (2, c"CUDA_ERROR_OUT_OF_MEMORY", c"out of memory"),
    (3, c"CUDA_ERROR_NOT_INITIALIZED", c"initialization error"),
    (
        34,
        c"CUDA_ERROR_STUB_LIBRARY",
        c"CUDA driver is a stub library",
    ),
    (
        46,
        c"CUDA_ERROR_DEVICE_UNAVAILABLE",
        c"CUDA-capable device(s) is/are busy or unavailable",
    ),
    (
        100,
        c"CUDA_ERROR_NO_DEVICE",
        c"no CUDA-capable device is detected",
    ),
    (101, c"CUDA_ERROR_INVALID_DEVICE", c"invalid device ordinal"),
    (
        200,
        c"CUDA_ERROR_INVALID_IMAGE",
        c"device kernel image is invalid",
    ),
    (
        201,
        c"CUDA_ERROR_INVALID_CONTEXT",
        c"invalid device context",
    ),
    (
        209,
        c"CUDA_ERROR_NO_BINARY_FOR_GPU",
        c"no kernel image is available for execution on the device",
    ),
    (
        214,
        c"CUDA_ERROR_ECC_UNCORRECTABLE",
        c"uncorrectable ECC error encountered",
    ),
    (
        217,
        c"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
        c"peer access is not supported between these two devices",
    ),
    (
        218,
        c"CUDA_ERROR_INVALID_PTX",
        c"a PTX JIT compilation failed",
    ),
    (
        222,
        c"CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        c"the provided PTX was compiled with an unsupported toolchain.",
    ),
    (
        400,
        c"CUDA_ERROR_INVALID_HANDLE",
        c"invalid resource handle",
    ),
    (500, c"CUDA_ERROR_NOT_FOUND", c"named symbol not found"),
    (
        700,
        c"CUDA_ERROR_ILLEGAL_ADDRESS",
        c"an illegal memory access was encountered",
    ),
    (
        704,
        c"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
        c"peer access is already enabled",
    ),
    (
        711,
        c"CUDA_ERROR_TOO_MANY_PEERS",
        c"peer mapping resources exhausted",
    ),
    (
        719,
        c"CUDA_ERROR_LAUNCH_FAILED",
        c"unspecified launch failure",
    ),
    (
        802,
        c"CUDA_ERROR_SYSTEM_NOT_READY",
        c"system not yet initialized",
    ),
    (
        803,
        c"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        c"system has unsupported display driver / cuda driver combination",
    ),
    (
        804,
        c"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        c"forward compatibility was attempted on non supported HW",
    ),
    (999, c"CUDA_ERROR_UNKNOWN", c"unknown error"),
];

unsafe fn error_text(sym: &str, code: c_int, out: *mut *const c_char, name: bool) -> c_int {
    early(sym, || {
        if out.is_null() {
            return Err(INVALID_VALUE);
        }
        match ERRORS.iter().find(|e| e.0 == code) {
            Some((_, n, s)) => put(out, if name { n.as_ptr() } else { s.as_ptr() }),
            None => {
                // The driver leaves NULL for codes it does not know.
                out.write(std::ptr::null());
                Err(INVALID_VALUE)
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(code: c_int, out: *mut *const c_char) -> c_int {
    error_text("cuGetErrorName", code, out, true)
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(code: c_int, out: *mut *const c_char) -> c_int {
    error_text("cuGetErrorString", code, out, false)
}

// ---- devices ----

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> c_int {
    guarded("cuDeviceGetCount", For::Current, |c| {
        put(
            count,
            c.cfg
                .device_count
                .unwrap_or_else(|| state().visible.len() as c_int),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(dev: *mut c_int, ordinal: c_int) -> c_int {
    guarded("cuDeviceGet", For::Ordinal(ordinal), |_| put(dev, ordinal))
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: c_int) -> c_int {
    guarded("cuDeviceGetName", For::Ordinal(dev), |c| {
        put_str(name, len, &c.device().name)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(v: *mut c_int, attrib: c_int, dev: c_int) -> c_int {
    guarded("cuDeviceGetAttribute", For::Ordinal(dev), |c| {
        let d = c.device();
        let (domain, bus, slot, _) = parse_bus_id(&d.pci_bus_id).expect("validated");
        let value = match attrib {
            ATTR_CC_MAJOR => d.compute_capability[0] as c_int,
            ATTR_CC_MINOR => d.compute_capability[1] as c_int,
            ATTR_SM_COUNT => d.sm_count,
            ATTR_PCI_BUS => bus as c_int,
            ATTR_PCI_DEVICE => slot as c_int,
            ATTR_PCI_DOMAIN => domain as c_int,
            _ => return Err(INVALID_VALUE),
        };
        put(v, value)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: c_int) -> c_int {
    guarded("cuDeviceTotalMem_v2", For::Ordinal(dev), |c| {
        put(bytes, c.device().total_memory as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut [u8; 16], dev: c_int) -> c_int {
    guarded("cuDeviceGetUuid", For::Ordinal(dev), |c| {
        put(uuid, parse_uuid(&c.device().uuid).expect("validated"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(bus: *mut c_char, len: c_int, dev: c_int) -> c_int {
    guarded("cuDeviceGetPCIBusId", For::Ordinal(dev), |c| {
        put_str(bus, len, &c.device().pci_bus_id)
    })
}

// ---- contexts ----

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut CUcontext, dev: c_int) -> c_int {
    guarded("cuDevicePrimaryCtxRetain", For::Ordinal(dev), |c| {
        if ctx.is_null() {
            return Err(INVALID_VALUE);
        }
        if let Some(e) = c.device().ctx_error {
            return Err(e);
        }
        let i = c.dev.expect("ordinal");
        state().ctx_refs[i] += 1;
        put(ctx, ctx_handle(i))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: c_int) -> c_int {
    guarded("cuDevicePrimaryCtxRelease_v2", For::Ordinal(dev), |c| {
        let i = c.dev.expect("ordinal");
        let mut s = state();
        s.ctx_refs[i] = s.ctx_refs[i].checked_sub(1).ok_or(INVALID_CONTEXT)?;
        if s.ctx_refs[i] == 0 {
            // The driver destroys the context's memory and modules with it.
            let gone: Vec<u64> = s
                .allocs
                .iter()
                .filter(|(_, a)| a.dev == i)
                .map(|(p, _)| *p)
                .collect();
            for p in gone {
                let a = s.allocs.remove(&p).expect("listed");
                free_device(p, a.size);
            }
            s.modules.retain(|_, m| m.dev != i);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: CUcontext) -> c_int {
    guarded("cuCtxSetCurrent", For::Ctx(ctx), |c| {
        CURRENT.with(|cur| cur.set(c.dev.map_or(0, |i| i + 1)));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSynchronize() -> c_int {
    // Everything runs synchronously; there is nothing to wait for.
    guarded("cuCtxSynchronize", For::Current, |c| c.ctx_dev().map(drop))
}

// ---- memory ----

fn device_layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes, DEVICE_ALIGN).ok()
}

fn free_device(p: u64, size: usize) {
    // SAFETY: `p` came from alloc_zeroed with this layout and is freed once.
    unsafe {
        dealloc(
            p as usize as *mut u8,
            device_layout(size).expect("allocated"),
        )
    }
}

fn live_bytes(s: &State, dev: usize) -> u64 {
    s.allocs
        .values()
        .filter(|a| a.dev == dev)
        .map(|a| a.size as u64)
        .sum()
}

/// Whether [p, p + len) lies inside one live allocation of `dev` (len > 0).
fn inside(s: &State, dev: usize, p: u64, len: u64) -> bool {
    let Some(end) = p.checked_add(len) else {
        return false;
    };
    s.allocs
        .range(..=p)
        .next_back()
        .is_some_and(|(base, a)| a.dev == dev && end <= base + a.size as u64)
}

/// Whether [p, p + len) lies inside one cuMemHostAlloc block.
fn pinned(s: &State, p: usize, len: usize) -> bool {
    let Some(end) = p.checked_add(len) else {
        return false;
    };
    s.host
        .range(..=p)
        .next_back()
        .is_some_and(|(base, size)| end <= base + size)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> c_int {
    guarded("cuMemGetInfo_v2", For::Current, |c| {
        let dev = c.ctx_dev()?;
        let d = c.device();
        let live = live_bytes(&state(), dev);
        put(
            free,
            (d.total_memory - d.used_by_others).saturating_sub(live) as usize,
        )?;
        put(total, d.total_memory as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut u64, bytes: usize) -> c_int {
    guarded("cuMemAlloc_v2", For::Current, |c| {
        let dev = c.ctx_dev()?;
        if dptr.is_null() || bytes == 0 {
            return Err(INVALID_VALUE);
        }
        let d = c.device();
        let mut s = state();
        let live = live_bytes(&s, dev);
        let free = (d.total_memory - d.used_by_others).saturating_sub(live);
        let after = live.saturating_add(bytes as u64);
        if bytes as u64 > free || d.oom_after_bytes.is_some_and(|n| after > n) {
            return Err(OUT_OF_MEMORY);
        }
        let layout = device_layout(bytes).ok_or(OUT_OF_MEMORY)?;
        let p = alloc_zeroed(layout);
        if p.is_null() {
            return Err(OUT_OF_MEMORY);
        }
        s.allocs.insert(p as u64, Alloc { size: bytes, dev });
        put(dptr, p as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: u64) -> c_int {
    guarded("cuMemFree_v2", For::Current, |_| {
        let a = state().allocs.remove(&dptr).ok_or(INVALID_VALUE)?;
        free_device(dptr, a.size);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    bytes: usize,
    _flags: c_uint,
) -> c_int {
    guarded("cuMemHostAlloc", For::Current, |c| {
        c.ctx_dev()?;
        if pp.is_null() || bytes == 0 {
            return Err(INVALID_VALUE);
        }
        if let Some(rc) = c.device().host_alloc_error {
            return Err(rc);
        }
        let layout = Layout::from_size_align(bytes, HOST_ALIGN).map_err(|_| OUT_OF_MEMORY)?;
        let p = alloc_zeroed(layout);
        if p.is_null() {
            return Err(OUT_OF_MEMORY);
        }
        state().host.insert(p as usize, bytes);
        put(pp, p.cast())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> c_int {
    guarded("cuMemFreeHost", For::Current, |_| {
        let size = state().host.remove(&(p as usize)).ok_or(INVALID_VALUE)?;
        dealloc(
            p.cast(),
            Layout::from_size_align(size, HOST_ALIGN).expect("allocated"),
        );
        Ok(())
    })
}

/// Sleeps out the rest of bytes / rate after a copy that began at `start`.
fn throttle(start: Instant, bytes: usize, gbps: Option<f64>) {
    if let Some(rate) = gbps {
        let want = Duration::from_secs_f64(bytes as f64 / (rate * 1e9));
        if let Some(rest) = want.checked_sub(start.elapsed()) {
            std::thread::sleep(rest);
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, bytes: usize) -> c_int {
    guarded("cuMemcpyHtoD_v2", For::Current, |c| {
        let dev = c.ctx_dev()?;
        if bytes == 0 {
            return Ok(());
        }
        let is_pinned = {
            let s = state();
            if src.is_null() || !inside(&s, dev, dst, bytes as u64) {
                return Err(INVALID_VALUE);
            }
            pinned(&s, src as usize, bytes)
        };
        let start = Instant::now();
        std::ptr::copy(src.cast::<u8>(), dst as usize as *mut u8, bytes);
        let d = c.device();
        throttle(
            start,
            bytes,
            if is_pinned {
                d.h2d_gbps
            } else {
                d.pageable_gbps
            },
        );
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, bytes: usize) -> c_int {
    guarded("cuMemcpyDtoH_v2", For::Current, |c| {
        let dev = c.ctx_dev()?;
        if bytes == 0 {
            return Ok(());
        }
        let is_pinned = {
            let s = state();
            if dst.is_null() || !inside(&s, dev, src, bytes as u64) {
                return Err(INVALID_VALUE);
            }
            pinned(&s, dst as usize, bytes)
        };
        let start = Instant::now();
        std::ptr::copy(src as usize as *const u8, dst.cast::<u8>(), bytes);
        let d = c.device();
        throttle(
            start,
            bytes,
            if is_pinned {
                d.d2h_gbps
            } else {
                d.pageable_gbps
            },
        );
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32_v2(dst: u64, value: c_uint, words: usize) -> c_int {
    guarded("cuMemsetD32_v2", For::Current, |c| {
        let dev = c.ctx_dev()?;
        if words == 0 {
            return Ok(());
        }
        let len = (words as u64).checked_mul(4).ok_or(INVALID_VALUE)?;
        if dst % 4 != 0 || !inside(&state(), dev, dst, len) {
            return Err(INVALID_VALUE);
        }
        let p = std::slice::from_raw_parts_mut(dst as usize as *mut u32, words);
        par_chunks(p, |_, chunk| chunk.fill(value));
        Ok(())
    })
}

// ---- peers and streams ----

/// The configured faults of the ordered pair (config indices), if any.
fn peer_pair(cfg: &FakeCuda, from: usize, to: usize) -> Option<&config::PeerPair> {
    cfg.peers
        .iter()
        .rev()
        .find(|p| (p.from as usize, p.to as usize) == (from, to))
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceCanAccessPeer(can: *mut c_int, dev: c_int, peer: c_int) -> c_int {
    guarded("cuDeviceCanAccessPeer", For::Ordinal(dev), |c| {
        let from = c.dev.expect("ordinal");
        let to = *usize::try_from(peer)
            .ok()
            .and_then(|o| state().visible.get(o).copied())
            .as_ref()
            .ok_or(INVALID_DEVICE)?;
        let yes = from != to && peer_pair(&c.cfg, from, to).is_none_or(|p| p.can_access);
        put(can, c_int::from(yes))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) -> c_int {
    guarded("cuCtxEnablePeerAccess", For::Current, |c| {
        let from = c.ctx_dev()?;
        if flags != 0 {
            return Err(INVALID_VALUE);
        }
        let mut s = state();
        let to = ctx_dev(&s, peer).ok_or(INVALID_CONTEXT)?;
        if let Some(p) = peer_pair(&c.cfg, from, to) {
            if let Some(e) = p.enable_error {
                return Err(e);
            }
            if !p.can_access {
                return Err(PEER_ACCESS_UNSUPPORTED);
            }
        }
        if from == to {
            return Err(INVALID_DEVICE);
        }
        if s.peer_enabled.contains(&(from, to)) {
            return Err(PEER_ACCESS_ALREADY_ENABLED);
        }
        s.peer_enabled.push((from, to));
        Ok(())
    })
}

type CUevent = *mut c_void;
const EVENT_TAG: usize = 0xE7E7;

fn event_id(s: &State, event: CUevent) -> Result<usize, c_int> {
    let a = event.addr();
    let id = a & 0xFFFF_FFFF_FFFF;
    (a >> 48 == EVENT_TAG && s.events.contains_key(&id))
        .then_some(id)
        .ok_or(INVALID_HANDLE)
}

#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(event: *mut CUevent, _flags: c_uint) -> c_int {
    guarded("cuEventCreate", For::Current, |c| {
        c.ctx_dev()?;
        let mut s = state();
        let id = s.next_event;
        s.next_event += 1;
        s.events.insert(id, None);
        put(
            event,
            std::ptr::without_provenance_mut(EVENT_TAG << 48 | id),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(event: CUevent, stream: CUstream) -> c_int {
    guarded("cuEventRecord", For::Current, |c| {
        let dev = c.ctx_dev()?;
        let mut s = state();
        if !stream.is_null() {
            stream_id(&s, stream)?;
        }
        let id = event_id(&s, event)?;
        let now = s.clocks.get(&dev).copied().unwrap_or(0);
        s.events.insert(id, Some((dev, now)));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventSynchronize(event: CUevent) -> c_int {
    // Work runs synchronously: a recorded event has completed.
    guarded("cuEventSynchronize", For::Current, |_| {
        let s = state();
        let id = event_id(&s, event)?;
        s.events[&id].map(drop).ok_or(INVALID_HANDLE)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> c_int {
    guarded("cuEventElapsedTime", For::Current, |_| {
        let s = state();
        let (a, b) = (event_id(&s, start)?, event_id(&s, end)?);
        match (s.events[&a], s.events[&b]) {
            (Some((da, ta)), Some((db, tb))) if da == db => {
                put(ms, (tb.saturating_sub(ta) as f64 / 1e6) as f32)
            }
            _ => Err(INVALID_HANDLE),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(event: CUevent) -> c_int {
    guarded("cuEventDestroy_v2", For::Current, |_| {
        let mut s = state();
        let id = event_id(&s, event)?;
        s.events.remove(&id);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(dst: u64, src: u64, bytes: usize) -> c_int {
    guarded("cuMemcpyDtoD_v2", For::Current, |c| {
        let dev = c.ctx_dev()?;
        if bytes == 0 {
            return Ok(());
        }
        let mut s = state();
        if !inside(&s, dev, src, bytes as u64) || !inside(&s, dev, dst, bytes as u64) {
            return Err(INVALID_VALUE);
        }
        std::ptr::copy(src as usize as *const u8, dst as usize as *mut u8, bytes);
        // Read and written once each, at the device's memory bandwidth.
        let ns = 2.0 * bytes as f64 / c.device().device_copy_gbps;
        *s.clocks.entry(dev).or_default() += ns.ceil() as u64;
        Ok(())
    })
}

fn stream_handle(id: usize) -> CUstream {
    std::ptr::without_provenance_mut(STREAM_TAG << 48 | id)
}

fn stream_id(s: &State, stream: CUstream) -> Result<usize, c_int> {
    let a = stream.addr();
    let id = a & 0xFFFF_FFFF_FFFF;
    (a >> 48 == STREAM_TAG && s.streams.contains_key(&id))
        .then_some(id)
        .ok_or(INVALID_HANDLE)
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut CUstream, _flags: c_uint) -> c_int {
    guarded("cuStreamCreate", For::Current, |c| {
        let dev = c.ctx_dev()?;
        let mut s = state();
        let id = s.next_stream;
        s.next_stream += 1;
        s.streams.insert(id, dev);
        put(stream, stream_handle(id))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(stream: CUstream) -> c_int {
    // Copies and kernels run synchronously: there is nothing to wait for.
    guarded("cuStreamSynchronize", For::Current, |_| {
        stream_id(&state(), stream).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: CUstream) -> c_int {
    guarded("cuStreamDestroy_v2", For::Current, |_| {
        let mut s = state();
        let id = stream_id(&s, stream)?;
        s.streams.remove(&id);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyPeerAsync(
    dst: u64,
    dst_ctx: CUcontext,
    src: u64,
    src_ctx: CUcontext,
    bytes: usize,
    stream: CUstream,
) -> c_int {
    guarded("cuMemcpyPeerAsync", For::Ctx(src_ctx), |c| {
        let from = c.dev.ok_or(INVALID_CONTEXT)?;
        let to = {
            let s = state();
            let to = ctx_dev(&s, dst_ctx).ok_or(INVALID_CONTEXT)?;
            if !stream.is_null() {
                stream_id(&s, stream)?;
            }
            if bytes > 0
                && !(inside(&s, from, src, bytes as u64) && inside(&s, to, dst, bytes as u64))
            {
                return Err(INVALID_VALUE);
            }
            to
        };
        let pair = peer_pair(&c.cfg, from, to);
        if pair.is_some_and(|p| p.hang) {
            hang();
        }
        if let Some(e) = pair.and_then(|p| p.copy_error) {
            return Err(e);
        }
        let start = Instant::now();
        std::ptr::copy(src as usize as *const u8, dst as usize as *mut u8, bytes);
        if pair.is_some_and(|p| p.corrupt) {
            let words = bytes / 4;
            let w = std::slice::from_raw_parts_mut(dst as usize as *mut u32, words);
            for k in 0..8.min(words) {
                w[k * words / 8] ^= 1 << k;
            }
        }
        throttle(start, bytes, pair.and_then(|p| p.gbps));
        Ok(())
    })
}

// ---- modules ----

/// What the PTX text says: `.version`, the `.target` SM number, the entry names.
struct Ptx {
    version: Option<(u32, u32)>,
    sm: Option<u32>,
    entries: Vec<String>,
}

fn parse_ptx(text: &str) -> Ptx {
    let mut ptx = Ptx {
        version: None,
        sm: None,
        entries: Vec::new(),
    };
    for line in text.lines().map(str::trim) {
        if let Some(v) = line.strip_prefix(".version ") {
            ptx.version = ptx.version.or(parse_version(v));
        } else if let Some(t) = line.strip_prefix(".target ") {
            // ".target sm_90a, debug" → 90.
            let sm = t.split([',', ' ', '\t']).find_map(|tok| {
                let digits: String = tok
                    .strip_prefix("sm_")?
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().ok()
            });
            ptx.sm = ptx.sm.or(sm);
        } else if let Some(rest) = line
            .strip_prefix(".visible .entry ")
            .or_else(|| line.strip_prefix(".entry "))
        {
            if let Some((name, _)) = rest.split_once('(') {
                ptx.entries.push(name.trim().to_string());
            }
        }
    }
    ptx
}

/// Writes `msg` into the caller's CU_JIT_ERROR_LOG_BUFFER, if it gave one with a size.
unsafe fn write_log(n: c_uint, options: *mut c_int, values: *mut *mut c_void, msg: &str) {
    if options.is_null() || values.is_null() {
        return;
    }
    let (mut buf, mut size) = (std::ptr::null_mut::<c_char>(), 0usize);
    for i in 0..n as usize {
        match *options.add(i) {
            JIT_ERROR_LOG_BUFFER => buf = (*values.add(i)).cast(),
            JIT_ERROR_LOG_BUFFER_SIZE_BYTES => size = (*values.add(i)).addr(),
            _ => {}
        }
    }
    if !buf.is_null() && size > 0 {
        let _ = put_str(buf, size.min(c_int::MAX as usize) as c_int, msg);
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut CUmodule,
    image: *const c_void,
    n: c_uint,
    options: *mut c_int,
    values: *mut *mut c_void,
) -> c_int {
    guarded("cuModuleLoadDataEx", For::Current, |c| {
        let dev = c.ctx_dev()?;
        if module.is_null() || image.is_null() || (n > 0 && (options.is_null() || values.is_null()))
        {
            return Err(INVALID_VALUE);
        }
        let d = c.device();
        let fail = |code: c_int, msg: String| {
            write_log(n, options, values, &msg);
            Err(code)
        };
        if let Some(e) = d.module_error {
            return fail(e, format!("fake JIT: error {e}"));
        }
        let text = CStr::from_ptr(image.cast()).to_string_lossy();
        let ptx = parse_ptx(&text);
        let Some((major, minor)) = ptx.version else {
            return fail(INVALID_PTX, "ptxas fatal   : no .version directive".into());
        };
        if let Some(max) = c.cfg.max_ptx_version.as_deref().and_then(parse_version) {
            if (major, minor) > max {
                return fail(
                    UNSUPPORTED_PTX_VERSION,
                    format!(
                        "ptxas fatal   : Unsupported .version {major}.{minor}; current version is '{}.{}'",
                        max.0, max.1
                    ),
                );
            }
        }
        let Some(sm) = ptx.sm else {
            return fail(INVALID_PTX, "ptxas fatal   : no .target directive".into());
        };
        let [cc_major, cc_minor] = d.compute_capability;
        if sm > cc_major * 10 + cc_minor {
            return fail(
                NO_BINARY_FOR_GPU,
                format!("ptxas fatal   : .target sm_{sm} is newer than the device (sm_{cc_major}{cc_minor})"),
            );
        }
        write_log(n, options, values, "");
        let mut s = state();
        let id = s.next_module;
        s.next_module += 1;
        s.modules.insert(
            id,
            Module {
                dev,
                entries: ptx.entries,
            },
        );
        put(module, std::ptr::without_provenance_mut(MOD_TAG << 48 | id))
    })
}

fn module_id(m: CUmodule) -> Option<usize> {
    let a = m.addr();
    (a >> 48 == MOD_TAG).then_some(a & 0xFFFF_FFFF_FFFF)
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    f: *mut CUfunction,
    module: CUmodule,
    name: *const c_char,
) -> c_int {
    guarded("cuModuleGetFunction", For::Current, |_| {
        if f.is_null() || name.is_null() {
            return Err(INVALID_VALUE);
        }
        let id = module_id(module).ok_or(INVALID_HANDLE)?;
        let s = state();
        let m = s.modules.get(&id).ok_or(INVALID_HANDLE)?;
        let want = CStr::from_ptr(name).to_string_lossy();
        let e = m.entries.iter().position(|e| *e == want).ok_or(NOT_FOUND)?;
        // Function handles carry the module id (32 bits) and the entry index (16 bits).
        if id >= 1 << 32 || e >= 1 << 16 {
            return Err(UNKNOWN);
        }
        put(
            f,
            std::ptr::without_provenance_mut(FN_TAG << 48 | id << 16 | e),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(module: CUmodule) -> c_int {
    guarded("cuModuleUnload", For::Current, |_| {
        let id = module_id(module).ok_or(INVALID_HANDLE)?;
        state().modules.remove(&id).map(drop).ok_or(INVALID_HANDLE)
    })
}

// ---- kernels, on the CPU ----

/// The grid-stride pattern of src/smoke/kernels.cu (word i of a buffer).
fn pattern(i: u64, seed: u32) -> u32 {
    let mut x = (i as u32) ^ ((i >> 32) as u32).wrapping_mul(0x9E37_79B9) ^ seed;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// The fake repeats the first PERIOD words of the pattern: fill and verify then run as
/// memcpy and memcmp, which stay fast in the unoptimised test build (the kernels' hash per
/// word took most of the test suite's time). Both kernels agree, and no host code computes
/// the pattern, so what the smoke test sees is the same: flipped words, and only those, differ.
const PERIOD: usize = 4096;

/// `pattern(k, seed) ^ mask` for k in 0..PERIOD.
fn period(seed: u32, mask: u32) -> Vec<u32> {
    (0..PERIOD as u64)
        .map(|k| pattern(k, seed) ^ mask)
        .collect()
}

/// Calls `f(range of chunk, range of period)` over `len` words starting at word `first`.
fn by_period(
    first: usize,
    len: usize,
    mut f: impl FnMut(std::ops::Range<usize>, std::ops::Range<usize>),
) {
    let mut j = 0;
    while j < len {
        let start = (first + j) % PERIOD;
        let n = (PERIOD - start).min(len - j);
        f(j..j + n, start..start + n);
        j += n;
    }
}

const SERIAL_BELOW: usize = 1 << 16;

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// Runs `f(first index, chunk)` over `data` split across threads (small data: inline).
fn par_chunks<T: Send>(data: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let t = threads();
    if data.len() < SERIAL_BELOW || t == 1 {
        return f(0, data);
    }
    let per = data.len().div_ceil(t);
    std::thread::scope(|sc| {
        for (k, chunk) in data.chunks_mut(per).enumerate() {
            let f = &f;
            sc.spawn(move || f(k * per, chunk));
        }
    });
}

/// The sum of `f(first index, chunk)` over `data` split across threads.
fn par_sum<T: Sync>(data: &[T], f: impl Fn(usize, &[T]) -> u64 + Sync) -> u64 {
    let t = threads();
    if data.len() < SERIAL_BELOW || t == 1 {
        return f(0, data);
    }
    let per = data.len().div_ceil(t);
    std::thread::scope(|sc| {
        let hs: Vec<_> = data
            .chunks(per)
            .enumerate()
            .map(|(k, chunk)| {
                let f = &f;
                sc.spawn(move || f(k * per, chunk))
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("worker")).sum()
    })
}

struct Launch {
    grid: [u32; 3],
    block: [u32; 3],
    params: *mut *mut c_void,
}

impl Launch {
    /// Kernel argument `i` (params[i] points at its value).
    unsafe fn arg<T: Copy>(&self, i: usize) -> Result<T, c_int> {
        let p = *self.params.add(i);
        if p.is_null() {
            return Err(INVALID_VALUE);
        }
        Ok(p.cast::<T>().read_unaligned())
    }
}

/// Checks that `count` elements of T at `p` lie in one allocation of `dev`, aligned.
fn region<T>(dev: usize, p: u64, count: u64) -> R {
    let bytes = count
        .checked_mul(size_of::<T>() as u64)
        .ok_or(ILLEGAL_ADDRESS)?;
    if p % align_of::<T>() as u64 != 0 || (bytes > 0 && !inside(&state(), dev, p, bytes)) {
        return Err(ILLEGAL_ADDRESS);
    }
    Ok(())
}

fn overlaps(a: u64, a_len: u64, b: u64, b_len: u64) -> bool {
    a < b.saturating_add(b_len) && b < a.saturating_add(a_len)
}

/// acc[j] = fma(x, b[j], acc[j]). Where the CPU has FMA it is inlined and vectorised
/// (plain `mul_add` calls libm's fmaf, ~10× slower); fma rounds once either way.
fn axpy(acc: &mut [f32], x: f32, b: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has FMA.
        return unsafe { axpy_fma(acc, x, b) };
    }
    for (sum, y) in acc.iter_mut().zip(b) {
        *sum = x.mul_add(*y, *sum);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn axpy_fma(acc: &mut [f32], x: f32, b: &[f32]) {
    for (sum, y) in acc.iter_mut().zip(b) {
        *sum = x.mul_add(*y, *sum);
    }
}

unsafe fn matmul(l: &Launch, dev: usize, d: &Device) -> R {
    if l.block != [16, 16, 1] {
        return Err(INVALID_VALUE);
    }
    let (a, b, c, n) = (
        l.arg::<u64>(0)?,
        l.arg::<u64>(1)?,
        l.arg::<u64>(2)?,
        l.arg::<u32>(3)? as usize,
    );
    // Rows and columns the grid covers; the rest of C is left alone, as on a GPU.
    let rows = n.min(l.grid[1] as usize * 16);
    let cols = n.min(l.grid[0] as usize * 16);
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    // Elements touched: A's covered rows, B up to the last covered column, C likewise.
    let (a_len, b_len, c_len) = (rows * n, (n - 1) * n + cols, (rows - 1) * n + cols);
    region::<f32>(dev, a, a_len as u64)?;
    region::<f32>(dev, b, b_len as u64)?;
    region::<f32>(dev, c, c_len as u64)?;
    // Inputs aliasing C are copied first, so no slice overlaps a mutable one.
    let copy_if = |p: u64, len: usize| -> Option<Vec<f32>> {
        overlaps(p, len as u64 * 4, c, c_len as u64 * 4)
            .then(|| std::slice::from_raw_parts(p as usize as *const f32, len).to_vec())
    };
    let (a_copy, b_copy) = (copy_if(a, a_len), copy_if(b, b_len));
    let am: &[f32] = match &a_copy {
        Some(v) => v,
        None => std::slice::from_raw_parts(a as usize as *const f32, a_len),
    };
    let bm: &[f32] = match &b_copy {
        Some(v) => v,
        None => std::slice::from_raw_parts(b as usize as *const f32, b_len),
    };
    let cm = std::slice::from_raw_parts_mut(c as usize as *mut f32, c_len);
    // chunks_mut(n) yields the covered rows (the last one `cols` long).
    let mut out_rows: Vec<&mut [f32]> = cm.chunks_mut(n).collect();
    let per = if rows * n * n < SERIAL_BELOW {
        rows
    } else {
        rows.div_ceil(threads())
    };
    std::thread::scope(|sc| {
        for (k, group) in out_rows.chunks_mut(per).enumerate() {
            sc.spawn(move || {
                let mut acc = vec![0f32; cols];
                for (j, out) in group.iter_mut().enumerate() {
                    let row = k * per + j;
                    acc.fill(0.0);
                    // k-outer keeps each element's fma order k = 0..n, as the kernel's.
                    for kk in 0..n {
                        let x = am[row * n + kk];
                        let brow = &bm[kk * n..kk * n + cols];
                        axpy(&mut acc, x, brow);
                    }
                    out[..cols].copy_from_slice(&acc);
                }
            });
        }
    });
    if d.matmul_wrong {
        for i in (0..c_len).step_by(97) {
            if i % n < cols {
                out_rows[i / n][i % n] += 1.0;
            }
        }
    }
    Ok(())
}

unsafe fn fill(l: &Launch, dev: usize, d: &Device) -> R {
    let (p, words, seed, invert) = (
        l.arg::<u64>(0)?,
        l.arg::<u64>(1)?,
        l.arg::<u32>(2)?,
        l.arg::<u32>(3)?,
    );
    if words == 0 || l.grid[0] as u64 * l.block[0] as u64 == 0 {
        return Ok(());
    }
    region::<u32>(dev, p, words)?;
    let mem = std::slice::from_raw_parts_mut(p as usize as *mut u32, words as usize);
    let block = period(seed, if invert != 0 { u32::MAX } else { 0 });
    par_chunks(mem, |first, chunk| {
        by_period(first, chunk.len(), |c, b| {
            chunk[c].copy_from_slice(&block[b])
        });
    });
    // Injected faults: distinct words while bit_flips <= words.
    for k in 0..d.bit_flips.min(words) {
        let w = (k as u128 * words as u128 / d.bit_flips as u128) as usize;
        mem[w] ^= 1 << (k % 32);
    }
    Ok(())
}

unsafe fn verify(l: &Launch, dev: usize) -> R {
    let (p, words, seed, invert, out) = (
        l.arg::<u64>(0)?,
        l.arg::<u64>(1)?,
        l.arg::<u32>(2)?,
        l.arg::<u32>(3)?,
        l.arg::<u64>(4)?,
    );
    region::<u64>(dev, out, 1)?;
    if words == 0 {
        return Ok(());
    }
    region::<u32>(dev, p, words)?;
    let mem = std::slice::from_raw_parts(p as usize as *const u32, words as usize);
    let block = period(seed, if invert != 0 { u32::MAX } else { 0 });
    let bad = par_sum(mem, |first, chunk| {
        let mut bad = 0;
        by_period(first, chunk.len(), |c, b| {
            let (got, want) = (&chunk[c], &block[b]);
            if got != want {
                bad += got.iter().zip(want).filter(|(g, w)| g != w).count() as u64;
            }
        });
        bad
    });
    let out = out as usize as *mut u64;
    out.write(out.read().wrapping_add(bad));
    Ok(())
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: CUfunction,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    _shared: c_uint,
    _stream: CUstream,
    params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> c_int {
    guarded("cuLaunchKernel", For::Current, |c| {
        let dev = c.ctx_dev()?;
        let a = f.addr();
        if a >> 48 != FN_TAG {
            return Err(INVALID_HANDLE);
        }
        let (id, e) = ((a >> 16) & 0xFFFF_FFFF, a & 0xFFFF);
        let name = {
            let s = state();
            let m = s.modules.get(&id).ok_or(INVALID_HANDLE)?;
            if m.dev != dev {
                return Err(INVALID_HANDLE);
            }
            m.entries.get(e).ok_or(INVALID_HANDLE)?.clone()
        };
        let (grid, block) = ([gx, gy, gz], [bx, by, bz]);
        let threads = block.iter().map(|&b| b as u64).product::<u64>();
        if grid.contains(&0) || threads == 0 || threads > 1024 || params.is_null() {
            return Err(INVALID_VALUE);
        }
        let l = Launch {
            grid,
            block,
            params,
        };
        let d = c.device();
        match name.as_str() {
            "gd_matmul_f32" => matmul(&l, dev, d),
            "gd_fill_u32" => fill(&l, dev, d),
            "gd_verify_u32" => verify(&l, dev),
            other => {
                eprintln!("fake-cuda: no CPU version of kernel {other}");
                Err(UNKNOWN)
            }
        }
    })
}
