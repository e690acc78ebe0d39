//! The child side of the smoke test (`gpudoctor __smoke-worker`): loads libcuda, then on
//! every visible GPU at once (a thread each) creates the context, loads the embedded PTX,
//! runs the matmul check, the memory-allocation probe and the transfer test, and streams
//! each result as a JSON line. The parent (src/probes/smoke.rs) bounds it and keeps what
//! was streamed if it hangs or dies.

use std::ffi::{c_void, CStr};
use std::sync::RwLock;
use std::time::Instant;

use cudarc::driver::sys::{CUdevice_attribute, CUdeviceptr, CUfunction};

use super::driver::Driver;
use super::peer::Ready;
use super::{check_matmul, matmul_inputs, median, MATMUL_TOLERANCE};
use crate::facts::smoke::{
    CudaError, DeviceInfo, Matmul, MemoryProbe, SmokeSettings, Step, Timing, Transfer,
};
use crate::smoke::protocol::WorkerLine;
use crate::worker::AnswerOut;

const MIB: u64 = 1 << 20;
/// Timed repetitions of the matmul and of each copy (after one warm-up).
const REPEATS: usize = 4;
/// Rows of the product compared exactly (the rest through Freivalds' test).
const CHECKED_ROWS: usize = 64;
/// The memory probe never takes memory others may need: this much of the free memory is
/// left on top of the fraction (at most 5 % of what is free).
const MEMORY_MARGIN: u64 = 256 * MIB;
/// With other compute processes on a GPU, the probe takes at most this share of free memory.
const SHARED_GPU_FRACTION: f64 = 0.5;

pub struct WorkerArgs {
    pub lib: String,
    pub settings: SmokeSettings,
    pub shared_gpus: Vec<String>,
    /// `--nccl`: the libnccl to run the all-reduce step with (src/smoke/nccl.rs).
    pub nccl_lib: Option<String>,
    /// Where NCCL_DEBUG=INFO goes (None: the user's own NCCL_DEBUG, or no NCCL step).
    pub nccl_debug_file: Option<String>,
}

/// The worker's arguments with what it decided once for all GPUs.
struct Plan<'a> {
    settings: &'a SmokeSettings,
    shared_gpus: &'a [String],
    /// Copy size per GPU and whether host memory made it smaller than asked.
    transfer: (u64, bool),
}

/// Runs the worker; the answer goes to the original stdout, and the vendor library gets
/// stderr as its stdout so nothing it prints can corrupt the answer.
pub fn main(args: WorkerArgs) -> std::io::Result<()> {
    // Before any thread exists and before libnccl reads its environment.
    if let Some(file) = &args.nccl_debug_file {
        std::env::set_var("NCCL_DEBUG", "INFO");
        std::env::set_var("NCCL_DEBUG_FILE", file);
    }
    let out = AnswerOut::take_stdout()?;
    run(&args, &out);
    Ok(())
}

fn run(args: &WorkerArgs, out: &AnswerOut) {
    let start = Instant::now();
    let drv = match Driver::load(&args.lib) {
        Ok(d) => d,
        Err(e) => {
            out.emit(&WorkerLine::LoadFailed {
                code: e.code,
                message: e.message,
            });
            return;
        }
    };
    out.emit(&WorkerLine::Loaded {
        path: drv.path.clone(),
    });
    let visible = std::env::var(crate::envvars::CUDA_VISIBLE_DEVICES.name).ok();
    // Each call is announced first, so a hang names the call it hung in.
    let stage = |call: &str| out.emit(&WorkerLine::Stage { call: call.into() });
    stage("cuInit");
    let init = drv.init();
    // cuDriverGetVersion answers even when cuInit failed.
    stage("cuDriverGetVersion");
    let driver_version = drv.driver_version().ok();
    let (count, count_error) = match &init {
        Ok(()) => {
            stage("cuDeviceGetCount");
            match drv.device_count() {
                Ok(n) => (Some(n), None),
                Err(e) => (None, Some(e)),
            }
        }
        Err(_) => (None, None),
    };
    out.emit(&WorkerLine::Init {
        error: init.err(),
        driver_version,
        device_count: count,
        count_error,
        cuda_visible_devices: visible,
    });
    let ordinals = match &args.settings.device_id {
        // A UUID or bus id: the ordinal whose CUDA device has it (none: nothing is tested,
        // and the parent says so).
        Some(id) => chosen_by_id(&drv, id, count).into_iter().collect(),
        None => crate::smoke::ordinals(args.settings.device, count),
    };
    let nccl_lib = args.nccl_lib.as_deref();
    let nccl_bytes = args.settings.transfer_bytes;
    let plan = Plan {
        settings: &args.settings,
        shared_gpus: &args.shared_gpus,
        transfer: fit_transfer(args.settings.transfer_bytes, ordinals.len()),
    };
    let args = &plan;
    let ready: Vec<Ready> = std::thread::scope(|s| {
        let threads: Vec<_> = ordinals
            .iter()
            .map(|&o| {
                let drv = &drv;
                s.spawn(move || {
                    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        device(drv, o, args, out)
                    }));
                    if caught.is_err() {
                        eprintln!("gpudoctor smoke worker: GPU {o}: internal error (a bug)");
                    }
                    caught.ok().flatten()
                })
            })
            .collect();
        threads
            .into_iter()
            .filter_map(|t| t.join().ok().flatten())
            .collect()
    });
    // Peer copies between every pair, once every GPU's own steps are done.
    super::peer::run(
        &drv,
        &ordinals,
        &ready,
        super::peer::copy_bytes(args.transfer.0),
        out,
    );
    // --nccl: one all-reduce over every GPU, after their own steps; not over a GPU whose
    // own steps failed (its finding is already there, and NCCL would fail or hang on it).
    if let Some(lib) = nccl_lib {
        let failed: Vec<String> = ordinals
            .iter()
            .filter(|o| !ready.iter().any(|r| r.ordinal == **o))
            .map(u32::to_string)
            .collect();
        if failed.is_empty() {
            super::nccl::run(&drv, lib, &ordinals, nccl_bytes, out);
        } else {
            super::nccl::skip(
                out,
                format!(
                    "CUDA device {} did not pass its own steps (context or kernels)",
                    failed.join(", ")
                ),
            );
        }
    }
    out.emit(&WorkerLine::Done {
        elapsed_ms: ms(start),
    });
    // Unloading libcuda or running its exit handlers is driver teardown, which can hang
    // like any driver call: the answer is out, so leave at once and let the kernel driver
    // clean up after the process.
    std::mem::forget(drv);
    // SAFETY: _exit ends the process without running atexit handlers; every line above
    // was flushed when it was written.
    unsafe { libc::_exit(0) }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

pub(super) struct Kernels {
    matmul: CUfunction,
    pub fill: CUfunction,
    pub verify: CUfunction,
}

/// One GPU's own steps; what the peer step needs when its context and kernels work.
fn device(drv: &Driver, o: u32, args: &Plan, out: &AnswerOut) -> Option<Ready> {
    let start = Instant::now();
    out.emit(&WorkerLine::Started {
        ordinal: o,
        step: "device properties".into(),
    });
    let done = |out: &AnswerOut| {
        out.emit(&WorkerLine::DeviceDone {
            ordinal: o,
            elapsed_ms: ms(start),
        })
    };
    let dev = match drv.device(o as i32) {
        Ok(d) => d,
        Err(e) => {
            out.emit(&WorkerLine::Device {
                ordinal: o,
                info: None,
                error: Some(e),
            });
            done(out);
            return None;
        }
    };
    let attr = |a: CUdevice_attribute| drv.attribute(dev, a).ok();
    let cc = match (
        attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
        attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
    ) {
        (Some(a), Some(b)) => Some(format!("{a}.{b}")),
        _ => None,
    };
    let sm_count = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    let (name, name_error) = match drv.device_name(dev) {
        Ok(n) => (n, None),
        Err(e) => (String::new(), Some(e)),
    };
    let uuid = drv.uuid(dev).ok();
    let bus_id = drv.pci_bus_id(dev).ok();
    // Integrated GPUs (Jetson, Grace-less iGPUs) share the host's RAM: the memory probe
    // would take the host's memory.
    let integrated = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_INTEGRATED).map(|v| v != 0);
    out.emit(&WorkerLine::Device {
        ordinal: o,
        info: Some(DeviceInfo {
            name,
            uuid: uuid.clone(),
            pci_bus_id: bus_id.clone(),
            integrated,
            compute_capability: cc,
            sm_count,
            total_memory: drv.total_mem(dev).ok(),
        }),
        error: name_error,
    });

    let started = |step: &str| {
        out.emit(&WorkerLine::Started {
            ordinal: o,
            step: step.into(),
        })
    };
    started("context");
    let t = Instant::now();
    let ctx = match drv.primary_context(dev) {
        Ok(c) => c,
        Err(e) => {
            out.emit(&WorkerLine::Context {
                ordinal: o,
                step: Step::Failed {
                    error: e,
                    detail: None,
                },
            });
            done(out);
            return None;
        }
    };
    out.emit(&WorkerLine::Context {
        ordinal: o,
        step: Step::Ok(Timing { ms: ms(t) }),
    });

    started("module");
    let t = Instant::now();
    let kernels = load_kernels(drv);
    let kernels = match kernels {
        Ok(k) => {
            out.emit(&WorkerLine::Module {
                ordinal: o,
                step: Step::Ok(Timing { ms: ms(t) }),
            });
            Some(k)
        }
        Err((error, log)) => {
            out.emit(&WorkerLine::Module {
                ordinal: o,
                step: Step::Failed {
                    error,
                    detail: (!log.is_empty()).then_some(log),
                },
            });
            None
        }
    };
    let blocks = sm_count.unwrap_or(16).clamp(1, 1024) as u32 * 8;
    let no_kernels = || "the kernels did not load (see the module step)".to_string();

    started("matmul");
    let step = match &kernels {
        Some(k) => matmul(drv, k.matmul, args.settings.matmul_size),
        None => Step::Skipped {
            reason: no_kernels(),
        },
    };
    out.emit(&WorkerLine::Matmul { ordinal: o, step });

    started("memory");
    let shared = uuid
        .as_ref()
        .is_some_and(|u| args.shared_gpus.iter().any(|s| s.eq_ignore_ascii_case(u)));
    let step = match &kernels {
        _ if integrated == Some(true) => Step::Skipped {
            reason: "an integrated GPU's memory is the host's RAM: not probed".into(),
        },
        Some(k) => memory(drv, k, blocks, args.settings.mem_fraction, shared),
        None => Step::Skipped {
            reason: no_kernels(),
        },
    };
    out.emit(&WorkerLine::Memory { ordinal: o, step });

    started("transfer");
    let step = transfer(
        drv,
        &TransferPlan {
            bytes: args.transfer.0,
            host_memory_cap: args.transfer.1,
            pci_bus_id: bus_id.as_deref(),
        },
    );
    out.emit(&WorkerLine::Transfer { ordinal: o, step });
    done(out);
    kernels.map(|kernels| Ready {
        ordinal: o,
        dev,
        ctx,
        kernels,
        blocks,
        bus_id,
    })
}

fn load_kernels(drv: &Driver) -> Result<Kernels, (CudaError, String)> {
    let image = CStr::from_bytes_with_nul(super::KERNELS_PTX.as_bytes())
        .expect("KERNELS_PTX ends with its only NUL");
    let module = drv.load_module(image)?;
    // SAFETY: module was just loaded and is never unloaded.
    let get = |name: &CStr| unsafe { drv.function(module, name) }.map_err(|e| (e, String::new()));
    Ok(Kernels {
        matmul: get(c"gd_matmul_f32")?,
        fill: get(c"gd_fill_u32")?,
        verify: get(c"gd_verify_u32")?,
    })
}

/// A device allocation freed when dropped.
struct DevBuf<'a> {
    drv: &'a Driver,
    ptr: CUdeviceptr,
    bytes: u64,
}

impl<'a> DevBuf<'a> {
    fn new(drv: &'a Driver, bytes: u64) -> Result<DevBuf<'a>, CudaError> {
        Ok(DevBuf {
            drv,
            ptr: drv.alloc(bytes)?,
            bytes,
        })
    }
}

impl Drop for DevBuf<'_> {
    fn drop(&mut self) {
        let _ = self.drv.free(self.ptr);
    }
}

fn failed<T>(error: CudaError) -> Step<T> {
    Step::Failed {
        error,
        detail: None,
    }
}

fn arg<T>(v: &mut T) -> *mut c_void {
    (v as *mut T).cast()
}

fn matmul(drv: &Driver, f: CUfunction, n: u32) -> Step<Matmul> {
    match try_matmul(drv, f, n) {
        Ok(m) => Step::Ok(m),
        Err(e) => failed(e),
    }
}

fn try_matmul(drv: &Driver, f: CUfunction, n: u32) -> Result<Matmul, CudaError> {
    let nn = n as usize;
    let (a, b) = matmul_inputs(nn);
    let bytes = (nn * nn * 4) as u64;
    let da = DevBuf::new(drv, bytes)?;
    let db = DevBuf::new(drv, bytes)?;
    let dc = DevBuf::new(drv, bytes)?;
    // SAFETY: each buffer holds n·n floats.
    unsafe {
        drv.htod(da.ptr, a.as_ptr().cast(), bytes as usize)?;
        drv.htod(db.ptr, b.as_ptr().cast(), bytes as usize)?;
    }
    let (mut pa, mut pb, mut pc, mut pn) = (da.ptr, db.ptr, dc.ptr, n);
    let tiles = n.div_ceil(16);
    let mut launch = || -> Result<f64, CudaError> {
        let mut params = [arg(&mut pa), arg(&mut pb), arg(&mut pc), arg(&mut pn)];
        let t = Instant::now();
        // SAFETY: the parameters match gd_matmul_f32(const float*, const float*, float*, unsigned).
        unsafe { drv.launch(f, (tiles, tiles), (16, 16), &mut params)? };
        drv.synchronize()?;
        Ok(t.elapsed().as_secs_f64())
    };
    launch()?;
    let mut times = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        times.push(launch()?);
    }
    let mut c = vec![0f32; nn * nn];
    // SAFETY: c holds n·n floats.
    unsafe { drv.dtoh(c.as_mut_ptr().cast(), dc.ptr, bytes as usize)? };
    let secs = median(&mut times).unwrap_or(f64::NAN);
    let check = check_matmul(&a, &b, &c, nn, CHECKED_ROWS);
    Ok(Matmul {
        n,
        ms: finite(secs * 1e3),
        gflops: finite(2.0 * (n as f64).powi(3) / secs / 1e9),
        checked_rows: check.checked_rows as u32,
        wrong_elements: check.wrong_elements as u64,
        max_abs_error: finite(check.max_abs_error),
        max_error_ratio: finite(check.max_error_ratio),
        freivalds_passed: check.freivalds_passed,
        correct: check.correct(),
        tolerance: MATMUL_TOLERANCE.into(),
    })
}

/// JSON has no infinity: a NaN or infinite error is reported as f64::MAX.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        f64::MAX
    }
}

fn memory(
    drv: &Driver,
    k: &Kernels,
    blocks: u32,
    fraction: f64,
    shared: bool,
) -> Step<MemoryProbe> {
    match try_memory(drv, k, blocks, fraction, shared) {
        // Nothing allocated because nothing was free enough to try: say so, not "passed".
        Ok(m) if m.target == 0 => Step::Skipped {
            reason: format!("only {} MiB free: too little to probe", m.free_before / MIB),
        },
        Ok(m) => Step::Ok(m),
        Err(e) => failed(e),
    }
}

fn round_down(x: u64, to: u64) -> u64 {
    x / to * to
}

fn try_memory(
    drv: &Driver,
    k: &Kernels,
    blocks: u32,
    fraction: f64,
    shared: bool,
) -> Result<MemoryProbe, CudaError> {
    let t0 = Instant::now();
    // The counter first: it must not be what fails.
    let counter = DevBuf::new(drv, 8)?;
    let (free, total) = drv.mem_info()?;
    let (fraction, lowered_because) = if shared && fraction > SHARED_GPU_FRACTION {
        (
            SHARED_GPU_FRACTION,
            Some(format!(
                "other compute processes use this GPU (NVML): the probe took at most {:.0} % of the free memory",
                SHARED_GPU_FRACTION * 100.0
            )),
        )
    } else {
        (fraction, None)
    };
    let margin = MEMORY_MARGIN.min(free / 20);
    let target = round_down(
        ((free as f64 * fraction) as u64).saturating_sub(margin),
        2 * MIB,
    );
    if target == 0 {
        // Too little free to probe (`memory` reports it skipped): no fill or verify.
        return Ok(MemoryProbe {
            total,
            free_before: free,
            fraction,
            lowered_because,
            target,
            chunk_bytes: 0,
            chunks: 0,
            allocated: 0,
            alloc_error: None,
            failed_at: None,
            fill_gbps: None,
            verify_gbps: None,
            mismatches: 0,
            kernel_error: None,
            ms: ms(t0),
        });
    }
    let first_chunk = round_down((target / 16).clamp(64 * MIB, 1024 * MIB), 2 * MIB).min(target);
    let mut chunk = first_chunk;
    let mut bufs: Vec<DevBuf> = Vec::new();
    let mut allocated = 0u64;
    let (mut alloc_error, mut failed_at) = (None, None);
    while allocated < target && chunk > 0 {
        let size = chunk.min(target - allocated);
        match DevBuf::new(drv, size) {
            Ok(b) => {
                allocated += size;
                bufs.push(b);
            }
            Err(e) => {
                if alloc_error.is_none() {
                    failed_at = Some(allocated);
                    alloc_error = Some(e);
                }
                // Smaller pieces tell fragmentation from a real shortage, down to 1/1024
                // of the target (a bounded number of calls on a big GPU).
                chunk = round_down(chunk / 2, 2 * MIB);
                if chunk < (target / 1024).max(2 * MIB) {
                    break;
                }
            }
        }
    }
    let mut mismatches = 0u64;
    let (mut fill_s, mut verify_s) = (0f64, 0f64);
    let mut kernel_error = None;
    'passes: for invert in [0u32, 1] {
        let t = Instant::now();
        for (i, b) in bufs.iter().enumerate() {
            let (mut p, mut words, mut seed, mut inv) = (b.ptr, b.bytes / 4, chunk_seed(i), invert);
            let mut params = [arg(&mut p), arg(&mut words), arg(&mut seed), arg(&mut inv)];
            let launched =
                // SAFETY: gd_fill_u32(unsigned*, unsigned long long, unsigned, unsigned).
                unsafe { drv.launch(k.fill, (grid(words, blocks), 1), (256, 1), &mut params) };
            if let Err(e) = launched {
                kernel_error = Some(e);
                break 'passes;
            }
        }
        if let Err(e) = drv.synchronize() {
            kernel_error = Some(e);
            break;
        }
        fill_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        if let Err(e) = drv.memset_d32(counter.ptr, 0, 2) {
            kernel_error = Some(e);
            break;
        }
        for (i, b) in bufs.iter().enumerate() {
            let (mut p, mut words, mut seed, mut inv, mut c) =
                (b.ptr, b.bytes / 4, chunk_seed(i), invert, counter.ptr);
            let mut params = [
                arg(&mut p),
                arg(&mut words),
                arg(&mut seed),
                arg(&mut inv),
                arg(&mut c),
            ];
            let launched =
                // SAFETY: gd_verify_u32(const unsigned*, unsigned long long, unsigned, unsigned, unsigned long long*).
                unsafe { drv.launch(k.verify, (grid(words, blocks), 1), (256, 1), &mut params) };
            if let Err(e) = launched {
                kernel_error = Some(e);
                break 'passes;
            }
        }
        let mut count = 0u64;
        let read = drv.synchronize().and_then(|_| {
            // SAFETY: the counter holds one u64.
            unsafe { drv.dtoh((&mut count as *mut u64).cast(), counter.ptr, 8) }
        });
        if let Err(e) = read {
            kernel_error = Some(e);
            break;
        }
        verify_s += t.elapsed().as_secs_f64();
        mismatches += count;
    }
    let chunks = bufs.len() as u32;
    drop(bufs);
    let rate = |secs: f64| {
        (kernel_error.is_none() && secs > 0.0 && allocated > 0)
            .then(|| 2.0 * allocated as f64 / secs / 1e9)
    };
    Ok(MemoryProbe {
        total,
        free_before: free,
        fraction,
        lowered_because,
        target,
        chunk_bytes: first_chunk,
        chunks,
        allocated,
        alloc_error,
        failed_at,
        fill_gbps: rate(fill_s),
        verify_gbps: rate(verify_s),
        mismatches,
        kernel_error: kernel_error.clone(),
        ms: ms(t0),
    })
}

/// A different pattern per chunk, so memory that answers for another chunk's addresses shows.
fn chunk_seed(i: usize) -> u32 {
    0x5EED_C0DE ^ (i as u32).wrapping_mul(0x9E37_79B9)
}

/// Blocks of 256 threads for a grid-stride loop over `words`: enough to fill the GPU.
pub(super) fn grid(words: u64, blocks: u32) -> u32 {
    (words.div_ceil(256).max(1)).min(blocks as u64) as u32
}

/// Pinned copies are timed one GPU at a time, and while no other GPU copies at all: GPUs
/// behind one PCIe switch share its uplink (and all share host memory), so timing them
/// together would halve each one's figure. Pageable copies (not judged against the link)
/// share the lock with each other.
static COPIES: RwLock<()> = RwLock::new(());

/// What the transfer step is given: the size (already fitted to host memory) and where the
/// GPU sits.
struct TransferPlan<'a> {
    bytes: u64,
    host_memory_cap: bool,
    pci_bus_id: Option<&'a str>,
}

fn transfer(drv: &Driver, plan: &TransferPlan) -> Step<Transfer> {
    match try_transfer(drv, plan) {
        Ok(t) => Step::Ok(t),
        Err(e) => failed(e),
    }
}

fn try_transfer(drv: &Driver, plan: &TransferPlan) -> Result<Transfer, CudaError> {
    let bytes = plan.bytes;
    let n = bytes as usize;
    // Host buffers on the GPU's own NUMA node: run this thread on the CPUs next to it.
    let cpu_affinity = plan.pci_bus_id.and_then(bind_near);
    let dev = DevBuf::new(drv, bytes)?;
    let time = |host: *mut u8, h2d: bool| -> Result<Option<f64>, CudaError> {
        let mut times = Vec::with_capacity(REPEATS);
        for i in 0..=REPEATS {
            let t = Instant::now();
            // SAFETY: host and dev both hold `bytes` bytes.
            unsafe {
                if h2d {
                    drv.htod(dev.ptr, host, n)?;
                } else {
                    drv.dtoh(host, dev.ptr, n)?;
                }
            }
            // A pageable host-to-device copy may return before its DMA ends.
            drv.synchronize()?;
            if i > 0 {
                times.push(t.elapsed().as_secs_f64());
            }
        }
        Ok(median(&mut times).map(|s| finite(bytes as f64 / s / 1e9)))
    };
    // Pageable first, freed before the pinned buffer exists: one host buffer at a time.
    let (pageable_h2d, pageable_d2h) = {
        // Touched, so page faults are not timed.
        let mut pageable = vec![0xA5u8; n];
        let _shared = COPIES.read().unwrap_or_else(|e| e.into_inner());
        (
            time(pageable.as_mut_ptr(), true)?,
            time(pageable.as_mut_ptr(), false)?,
        )
    };
    let (mut pinned_h2d, mut pinned_d2h, mut pinned_error) = (None, None, None);
    match drv.host_alloc(n) {
        Ok(p) => {
            // SAFETY: p holds n bytes.
            unsafe { std::ptr::write_bytes(p, 0x5A, n) };
            let r = {
                let _alone = COPIES.write().unwrap_or_else(|e| e.into_inner());
                time(p, true).and_then(|h| Ok((h, time(p, false)?)))
            };
            // SAFETY: p came from host_alloc.
            let _ = unsafe { drv.host_free(p) };
            let (h, d) = r?;
            pinned_h2d = h;
            pinned_d2h = d;
        }
        Err(e) => pinned_error = Some(e),
    }
    let (device, device_error) = match device_copy(drv, &dev) {
        Ok(d) => (d, None),
        Err(e) => (DeviceCopy::default(), Some(e)),
    };
    Ok(Transfer {
        bytes,
        host_memory_cap: plan.host_memory_cap,
        iterations: REPEATS as u32,
        pinned_h2d_gbps: pinned_h2d,
        pinned_d2h_gbps: pinned_d2h,
        pageable_h2d_gbps: pageable_h2d,
        pageable_d2h_gbps: pageable_d2h,
        pinned_error,
        cpu_affinity,
        device_gbps: device.gbps,
        device_bytes: device.bytes,
        device_skipped: device.skipped,
        device_error,
    })
}

#[derive(Default)]
struct DeviceCopy {
    gbps: Option<f64>,
    bytes: Option<u64>,
    skipped: Option<String>,
}

/// The smallest second buffer the device-local copy is measured with.
const MIN_DEVICE_COPY: u64 = 8 << 20;

/// Device-memory bandwidth: `cuMemcpyDtoD` from `src` into a second buffer of its size (half
/// that, and so on, where the GPU has no room for it: that is not a fault), timed by the
/// GPU's events, the first copy a warm-up; GB/s counts bytes read and written.
fn device_copy(drv: &Driver, src: &DevBuf) -> Result<DeviceCopy, CudaError> {
    let mut size = src.bytes;
    let dst = loop {
        match DevBuf::new(drv, size) {
            Ok(b) => break b,
            Err(e) if e.name == "CUDA_ERROR_OUT_OF_MEMORY" && size / 2 >= MIN_DEVICE_COPY => {
                size /= 2;
            }
            Err(e) if e.name == "CUDA_ERROR_OUT_OF_MEMORY" => {
                return Ok(DeviceCopy {
                    skipped: Some(format!(
                        "no room on the GPU for a second buffer of {} MiB ({})",
                        size >> 20,
                        e.name
                    )),
                    ..DeviceCopy::default()
                })
            }
            Err(e) => return Err(e),
        }
    };
    let n = size as usize;
    let mut times = Vec::with_capacity(REPEATS);
    for i in 0..=REPEATS {
        // SAFETY: both buffers are this context's allocations of `n` bytes, apart.
        let s = drv.gpu_time(|| unsafe { drv.dtod(dst.ptr, src.ptr, n) })?;
        if i > 0 && s > 0.0 {
            times.push(s);
        }
    }
    Ok(DeviceCopy {
        gbps: median(&mut times).map(|s| finite(2.0 * size as f64 / s / 1e9)),
        bytes: Some(size),
        skipped: None,
    })
}

/// Runs the calling thread on the CPUs sysfs lists as local to the GPU at `bus` and returns
/// that list; None when sysfs does not say (no such device here, a VM without NUMA info).
fn bind_near(bus: &str) -> Option<String> {
    let bus = crate::facts::pci::sysfs_address(bus);
    let path = format!("/sys/bus/pci/devices/{bus}/local_cpulist");
    let list = std::fs::read_to_string(path).ok()?.trim().to_string();
    let cpus = parse_cpulist(&list)?;
    let mut set = rustix::thread::CpuSet::new();
    for &c in &cpus {
        if (c as usize) < rustix::thread::CpuSet::MAX_CPU {
            set.set(c as usize);
        }
    }
    // None: this thread.
    rustix::thread::sched_setaffinity(None, &set).ok()?;
    Some(list)
}

/// "0-23,48-71" → [0, 1, …]; None for anything else.
fn parse_cpulist(list: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 4096 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The copy size each GPU can have when all copy at once without taking more than half of
/// the host's available memory (MemAvailable).
fn fit_transfer(bytes: u64, gpus: usize) -> (u64, bool) {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map(|kib| kib * 1024)
    });
    match available {
        Some(avail) if gpus > 0 && bytes * gpus as u64 > avail / 2 => {
            let fitted = round_down(avail / 2 / gpus as u64, MIB).max(MIB);
            (fitted, true)
        }
        _ => (bytes, false),
    }
}

/// The CUDA ordinal whose device has the UUID (or unique prefix) or PCI bus id `id`.
fn chosen_by_id(drv: &Driver, id: &str, count: Option<i32>) -> Option<u32> {
    let known: Vec<crate::gpu_id::Known> = crate::smoke::ordinals(None, count)
        .into_iter()
        .filter_map(|o| {
            let dev = drv.device(o as i32).ok()?;
            Some(crate::gpu_id::Known {
                index: o,
                uuid: drv.uuid(dev).ok(),
                bus_id: drv.pci_bus_id(dev).ok(),
            })
        })
        .collect();
    match crate::gpu_id::select(&known, id, "CUDA") {
        Ok(o) => Some(o),
        Err(why) => {
            eprintln!("gpudoctor smoke worker: --device {id}: {why}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_cover_small_buffers_and_cap_large_ones() {
        assert_eq!(grid(1, 100), 1);
        assert_eq!(grid(257, 100), 2);
        assert_eq!(grid(1 << 30, 1056), 1056);
        assert_ne!(chunk_seed(0), chunk_seed(1));
        assert_eq!(parse_cpulist("0-3,8"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("x"), None);
        assert_eq!(fit_transfer(1 << 20, 1), (1 << 20, false));
        let (fitted, capped) = fit_transfer(u64::MAX / 64, 8);
        assert!(capped && fitted >= MIB);
    }
}
