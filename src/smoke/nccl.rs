//! The smoke test's NCCL step (`--nccl`): after the per-GPU steps the worker loads the
//! libnccl torch would load, builds one communicator over the tested GPUs
//! (ncclCommInitAll), runs a float32 sum all-reduce, checks every element of every rank,
//! and times a few more like nccl-tests does (algbw = bytes / time; busbw = algbw ·
//! 2(n−1)/n, nccl-tests' doc/PERFORMANCE.md). Every NCCL call is announced first, so a hang
//! names the call. The parent runs the worker with NCCL_DEBUG=INFO into a private file and
//! reads the transports NCCL chose from it.
//!
//! NCCL's C API (nccl.h): ncclResult_t is an int (0 success, 1 ncclUnhandledCudaError,
//! 2 ncclSystemError, 3 ncclInternalError, 4 ncclInvalidArgument, 5 ncclInvalidUsage,
//! 6 ncclRemoteError, 7 ncclInProgress); ncclFloat32 = 7, ncclSum = 0;
//! ncclGetLastError since 2.13.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::driver::Driver;
use crate::facts::smoke::CudaError;
use crate::smoke::protocol::WorkerLine;
use crate::worker::AnswerOut;

/// The soname torch's libtorch_cuda.so needs, and the loader's default.
pub const DEFAULT_LIB: &str = "libnccl.so.2";
/// Timed all-reduces after the verified one.
const ITERATIONS: usize = 5;
/// How long teardown (ncclCommDestroy/ncclCommAbort) may take before the worker leaves
/// without it: the answer is out, and the process's exit frees everything.
const TEARDOWN_WAIT: Duration = Duration::from_secs(2);
const NCCL_FLOAT32: c_int = 7;
const NCCL_SUM: c_int = 0;

// ---------------------------------------------------------------------------------------
// Facts (shared by the worker, the parent and the rules).

/// What the parent asked for and saw around the worker (snapshot: `smoke.nccl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclRequest {
    /// The libnccl the worker was told to load: a path, or the soname for the loader.
    pub library: String,
    /// Why that one: "--nccl-lib", the loader's binding for torch, or the loader's soname.
    pub chosen_by: String,
    /// Why the NCCL step did not run at all.
    pub refused: Option<String>,
    /// NCCL_* variables the worker inherited that steer transports (NCCL_P2P_DISABLE=1…).
    pub environment: Vec<String>,
    /// What NCCL_DEBUG=INFO said, when gpudoctor set it (not when the user set NCCL_DEBUG).
    pub debug: Option<NcclDebug>,
}

/// What NCCL logged about its choices.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclDebug {
    /// "NCCL version 2.21.5+cuda12.4".
    pub version_line: Option<String>,
    /// Distinct transports of the channel set-up lines, as NCCL names them
    /// ("P2P/CUMEM/read", "SHM/direct/direct", "NET/IB/0/GDRDMA").
    pub transports: Vec<String>,
    /// Settings NCCL reports taking from the environment ("NCCL_P2P_DISABLE set by
    /// environment to 1").
    pub settings: Vec<String>,
    /// NCCL's own warnings (lines with "NCCL WARN"), the last few.
    pub warnings: Vec<String>,
}

/// What the worker did (snapshot: `smoke.result.run.nccl`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclRun {
    /// The file the loader mapped.
    pub loaded_from: Option<String>,
    /// libnccl could not be loaded: library_not_found, library_unloadable or symbol_missing.
    pub load_error: Option<NcclLoadError>,
    /// ncclGetVersion: 22105 for 2.21.5.
    pub version: Option<i32>,
    /// The CUDA ordinals in the communicator.
    pub ranks: Vec<u32>,
    /// The last NCCL (or driver) call announced.
    pub stage: Option<String>,
    pub error: Option<NcclError>,
    pub skipped: Option<String>,
    pub all_reduce: Option<AllReduce>,
    pub finished: bool,
}

impl NcclRun {
    /// "2.21.5" from ncclGetVersion's code (X·10000 + Y·100 + Z from 2.9 on, X·1000 + Y·100 + Z before).
    pub fn version_text(&self) -> Option<String> {
        let v = self.version?;
        Some(if v >= 20900 {
            format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
        } else {
            format!("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100)
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclLoadError {
    pub code: String,
    pub message: String,
}

/// A failed call: NCCL's result code and its own words, or the driver's error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclError {
    pub call: String,
    pub code: i32,
    /// ncclSystemError, …
    pub name: String,
    /// ncclGetErrorString.
    pub message: String,
    /// ncclGetLastError: the detail NCCL kept ("Bootstrap : no socket interface found").
    pub last_error: Option<String>,
    /// The driver call that failed instead (allocation, copy, synchronise).
    pub cuda: Option<Box<CudaError>>,
}

impl std::fmt::Display for NcclError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(c) = &self.cuda {
            return write!(f, "{c}");
        }
        write!(
            f,
            "{} returned {} ({}: {})",
            self.call, self.code, self.name, self.message
        )?;
        if let Some(l) = self.last_error.as_deref().filter(|l| !l.is_empty()) {
            write!(f, "; last error: {l}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AllReduce {
    /// Bytes per rank (float32 elements · 4).
    pub bytes: u64,
    pub ranks: u32,
    /// The value every element must hold: Σ (rank + 1).
    pub expected: f32,
    /// Elements of all ranks that differ from it.
    pub wrong_elements: u64,
    /// The first wrong element: (CUDA ordinal, index, value).
    pub first_wrong: Option<(u32, u64, f32)>,
    pub iterations: u32,
    /// Median time of one all-reduce over every rank.
    pub ms: f64,
    /// nccl-tests' algorithm bandwidth: bytes / time, GB/s (10⁹ B/s).
    pub algbw_gbps: f64,
    /// nccl-tests' bus bandwidth: algbw · 2(n−1)/n.
    pub busbw_gbps: f64,
}

impl AllReduce {
    pub fn correct(&self) -> bool {
        self.wrong_elements == 0
    }
}

/// The NCCL part of the worker's answer (`{"kind":"nccl","event":…}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum NcclLine {
    Stage {
        call: String,
    },
    LoadFailed {
        code: String,
        message: String,
    },
    Loaded {
        path: String,
        version: Option<i32>,
        ranks: Vec<u32>,
    },
    Failed {
        error: NcclError,
    },
    Skipped {
        reason: String,
    },
    Result {
        all_reduce: AllReduce,
    },
    Done,
}

/// Folds one line into the run the parent assembles.
pub fn apply(run: &mut Option<NcclRun>, line: NcclLine) {
    let r = run.get_or_insert_with(NcclRun::default);
    match line {
        NcclLine::Stage { call } => r.stage = Some(call),
        NcclLine::LoadFailed { code, message } => {
            r.load_error = Some(NcclLoadError { code, message })
        }
        NcclLine::Loaded {
            path,
            version,
            ranks,
        } => {
            r.loaded_from = Some(path);
            r.version = version;
            r.ranks = ranks;
        }
        NcclLine::Failed { error } => r.error = Some(error),
        NcclLine::Skipped { reason } => r.skipped = Some(reason),
        NcclLine::Result { all_reduce } => r.all_reduce = Some(all_reduce),
        NcclLine::Done => r.finished = true,
    }
}

/// Where an unfinished NCCL step stopped ("NCCL: ncclGroupEnd").
pub fn stuck_at(run: &NcclRun) -> Option<String> {
    (!run.finished).then(|| format!("NCCL: {}", run.stage.as_deref().unwrap_or("starting")))
}

/// Reads NCCL_DEBUG=INFO output: the transport of every channel line
/// (`Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read`), the settings taken from the
/// environment, the version and the warnings.
pub fn parse_debug(text: &str) -> NcclDebug {
    let mut d = NcclDebug::default();
    for line in text.lines().take(200_000) {
        if let Some(i) = line.find("NCCL version ") {
            d.version_line
                .get_or_insert_with(|| line[i..].trim().to_string());
        }
        if line.contains("Channel") {
            if let Some((_, via)) = line.rsplit_once(" via ") {
                let t = via.split_whitespace().next().unwrap_or("").to_string();
                if !t.is_empty() && !d.transports.contains(&t) && d.transports.len() < 32 {
                    d.transports.push(t);
                }
            }
        }
        if let Some(i) = line.find("NCCL_") {
            let s = line[i..].trim();
            if s.contains(" set by environment to ")
                && !d.settings.iter().any(|x| x == s)
                && d.settings.len() < 32
            {
                d.settings.push(s.to_string());
            }
        }
        if let Some(i) = line.find("NCCL WARN ") {
            d.warnings.push(line[i + 10..].trim().to_string());
            if d.warnings.len() > 8 {
                d.warnings.remove(0);
            }
        }
    }
    d
}

/// The NCCL_* variables that decide transports, as `NAME=value` (to name the configuration
/// a hang or a slow result was measured with).
pub const TRANSPORT_VARIABLES: &[&str] = &[
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL",
    "NCCL_SHM_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_NET",
    "NCCL_SOCKET_IFNAME",
    "NCCL_IB_HCA",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_ALGO",
    "NCCL_PROTO",
];

// ---------------------------------------------------------------------------------------
// The worker's side.

type Comm = *mut c_void;

struct Api {
    get_version: unsafe extern "C" fn(*mut c_int) -> c_int,
    get_error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    get_last_error: Option<unsafe extern "C" fn(Comm) -> *const c_char>,
    comm_init_all: unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> c_int,
    comm_destroy: unsafe extern "C" fn(Comm) -> c_int,
    comm_abort: unsafe extern "C" fn(Comm) -> c_int,
    comm_get_async_error: unsafe extern "C" fn(Comm, *mut c_int) -> c_int,
    group_start: unsafe extern "C" fn() -> c_int,
    group_end: unsafe extern "C" fn() -> c_int,
    #[allow(clippy::type_complexity)]
    all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        *mut c_void,
    ) -> c_int,
    path: String,
    _lib: libloading::os::unix::Library,
}

fn load(lib: &str) -> Result<Api, (String, String)> {
    let library = super::driver::open_library(lib).map_err(|e| (e.code, e.message))?;
    macro_rules! sym {
        ($name:literal) => {{
            // SAFETY: typed as nccl.h declares it.
            let s = unsafe { library.get(concat!($name, "\0").as_bytes()) }.map_err(|_| {
                (
                    "symbol_missing".to_string(),
                    format!(
                        "{lib} has no {}: it is not libnccl, or one older than NCCL 2.4",
                        $name
                    ),
                )
            })?;
            *s
        }};
    }
    let get_version: unsafe extern "C" fn(*mut c_int) -> c_int = sym!("ncclGetVersion");
    // SAFETY: as above; absent before NCCL 2.13.
    let get_last_error = unsafe { library.get(b"ncclGetLastError\0") }
        .ok()
        .map(|s: libloading::os::unix::Symbol<unsafe extern "C" fn(Comm) -> *const c_char>| *s);
    let api = Api {
        get_version,
        get_error_string: sym!("ncclGetErrorString"),
        get_last_error,
        comm_init_all: sym!("ncclCommInitAll"),
        comm_destroy: sym!("ncclCommDestroy"),
        comm_abort: sym!("ncclCommAbort"),
        comm_get_async_error: sym!("ncclCommGetAsyncError"),
        group_start: sym!("ncclGroupStart"),
        group_end: sym!("ncclGroupEnd"),
        all_reduce: sym!("ncclAllReduce"),
        path: super::driver::loaded_path(get_version as *const c_void)
            .unwrap_or_else(|| lib.to_string()),
        _lib: library,
    };
    Ok(api)
}

fn result_name(code: c_int) -> String {
    match code {
        1 => "ncclUnhandledCudaError",
        2 => "ncclSystemError",
        3 => "ncclInternalError",
        4 => "ncclInvalidArgument",
        5 => "ncclInvalidUsage",
        6 => "ncclRemoteError",
        7 => "ncclInProgress",
        _ => return format!("ncclResult_t {code}"),
    }
    .to_string()
}

fn text(p: *const c_char) -> Option<String> {
    // SAFETY: NCCL returns NUL-terminated static (or per-comm) strings, or null.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

impl Api {
    fn error(&self, call: &str, code: c_int) -> NcclError {
        // SAFETY: both take a plain value and return a string NCCL owns.
        let message = text(unsafe { (self.get_error_string)(code) })
            .unwrap_or_else(|| "no description from NCCL".into());
        let last_error = self
            .get_last_error
            // SAFETY: a null comm asks for the last error of any.
            .and_then(|f| text(unsafe { f(std::ptr::null_mut()) }))
            .filter(|s| !s.is_empty());
        NcclError {
            call: call.into(),
            code,
            name: result_name(code),
            message,
            last_error,
            cuda: None,
        }
    }

    fn check(&self, call: &str, rc: c_int) -> Result<(), NcclError> {
        if rc == 0 {
            Ok(())
        } else {
            Err(self.error(call, rc))
        }
    }
}

fn cuda(e: CudaError) -> NcclError {
    NcclError {
        call: e.call.clone(),
        code: e.code,
        name: e.name.clone(),
        message: e.message.clone(),
        last_error: None,
        cuda: Some(Box::new(e)),
    }
}

/// The NCCL step over `ordinals`, `bytes` per rank, with `lib`.
/// Host memory the result is read back through, per piece.
const READ_BACK_BYTES: usize = 64 << 20;

/// The NCCL step does not run, and why.
pub fn skip(out: &AnswerOut, reason: String) {
    out.emit(&WorkerLine::Nccl(NcclLine::Skipped { reason }));
    out.emit(&WorkerLine::Nccl(NcclLine::Done));
}

pub fn run(drv: &Driver, lib: &str, ordinals: &[u32], bytes: u64, out: &AnswerOut) {
    let emit = |line: NcclLine| out.emit(&WorkerLine::Nccl(line));
    let stage = |call: &str| emit(NcclLine::Stage { call: call.into() });
    if ordinals.is_empty() {
        emit(NcclLine::Skipped {
            reason: "no GPU to run an all-reduce on".into(),
        });
        emit(NcclLine::Done);
        return;
    }
    stage(&format!("loading {lib}"));
    let api = match load(lib) {
        Ok(a) => a,
        Err((code, message)) => {
            emit(NcclLine::LoadFailed { code, message });
            emit(NcclLine::Done);
            return;
        }
    };
    stage("ncclGetVersion");
    let mut v = 0;
    // SAFETY: v is a valid out-pointer.
    let version = (unsafe { (api.get_version)(&mut v) } == 0).then_some(v);
    emit(NcclLine::Loaded {
        path: api.path.clone(),
        version,
        ranks: ordinals.to_vec(),
    });
    let mut comms: Vec<Comm> = vec![std::ptr::null_mut(); ordinals.len()];
    let outcome = all_reduce(drv, &api, ordinals, bytes, &mut comms, &stage);
    let failed = outcome.is_err();
    match outcome {
        Ok(r) => emit(NcclLine::Result { all_reduce: r }),
        Err(e) => emit(NcclLine::Failed { error: e }),
    }
    teardown(&api, &comms, failed, &stage);
    emit(NcclLine::Done);
    // The library stays mapped: unloading it runs NCCL's own teardown.
    std::mem::forget(api);
}

/// ncclCommDestroy (ncclCommAbort after a failure) on a thread of its own, waited for at
/// most TEARDOWN_WAIT: a communicator stuck in a failed collective can block its
/// teardown, and the worker leaves with _exit anyway.
fn teardown(api: &Api, comms: &[Comm], failed: bool, stage: &dyn Fn(&str)) {
    let live: Vec<usize> = comms
        .iter()
        .filter(|c| !c.is_null())
        .map(|&c| c as usize)
        .collect();
    if live.is_empty() {
        return;
    }
    let (call, f) = if failed {
        ("ncclCommAbort", api.comm_abort)
    } else {
        ("ncclCommDestroy", api.comm_destroy)
    };
    stage(call);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for c in live {
            // SAFETY: each comm came from ncclCommInitAll and is torn down once.
            unsafe { f(c as Comm) };
        }
        let _ = tx.send(());
    });
    let _ = rx.recv_timeout(TEARDOWN_WAIT);
}

/// A device buffer on one GPU; the memory goes with the process (the worker _exits).
struct Rank {
    ordinal: u32,
    send: u64,
    recv: u64,
}

fn all_reduce(
    drv: &Driver,
    api: &Api,
    ordinals: &[u32],
    bytes: u64,
    comms: &mut [Comm],
    stage: &dyn Fn(&str),
) -> Result<AllReduce, NcclError> {
    let n = ordinals.len();
    let count = (bytes / 4) as usize;
    let bytes = count as u64 * 4;
    let devlist: Vec<c_int> = ordinals.iter().map(|&o| o as c_int).collect();
    stage("ncclCommInitAll");
    // SAFETY: comms holds n slots; devlist n ordinals.
    api.check("ncclCommInitAll", unsafe {
        (api.comm_init_all)(comms.as_mut_ptr(), n as c_int, devlist.as_ptr())
    })?;
    let mut ranks = Vec::with_capacity(n);
    for (r, &o) in ordinals.iter().enumerate() {
        stage(&format!("GPU {o}: buffers"));
        let dev = drv.device(o as i32).map_err(cuda)?;
        drv.primary_context(dev).map_err(cuda)?;
        let send = drv.alloc(bytes).map_err(cuda)?;
        let recv = drv.alloc(bytes).map_err(cuda)?;
        let value = (r as f32 + 1.0).to_bits();
        drv.memset_d32(send, value, count).map_err(cuda)?;
        drv.memset_d32(recv, 0, count).map_err(cuda)?;
        ranks.push(Rank {
            ordinal: o,
            send,
            recv,
        });
    }
    sync_all(drv, &ranks, stage)?;
    let once = || -> Result<f64, NcclError> {
        let t = Instant::now();
        stage("ncclGroupStart");
        // SAFETY: plain NCCL calls on the communicators and buffers made above.
        api.check("ncclGroupStart", unsafe { (api.group_start)() })?;
        for (r, rank) in ranks.iter().enumerate() {
            stage(&format!("ncclAllReduce (GPU {})", rank.ordinal));
            // SAFETY: send and recv hold `count` floats on the comm's GPU; the null
            // stream is that device's default stream.
            api.check("ncclAllReduce", unsafe {
                (api.all_reduce)(
                    rank.send as *const c_void,
                    rank.recv as *mut c_void,
                    count,
                    NCCL_FLOAT32,
                    NCCL_SUM,
                    comms[r],
                    std::ptr::null_mut(),
                )
            })?;
        }
        stage("ncclGroupEnd");
        // SAFETY: closes the group opened above.
        api.check("ncclGroupEnd", unsafe { (api.group_end)() })?;
        sync_all(drv, &ranks, stage)?;
        for (r, rank) in ranks.iter().enumerate() {
            let mut async_rc = 0;
            // SAFETY: a live comm and a valid out-pointer.
            unsafe { (api.comm_get_async_error)(comms[r], &mut async_rc) };
            if async_rc != 0 {
                let mut e = api.error("ncclCommGetAsyncError", async_rc);
                e.call = format!("ncclCommGetAsyncError (GPU {})", rank.ordinal);
                return Err(e);
            }
        }
        Ok(t.elapsed().as_secs_f64())
    };
    once()?;
    // Every element of every rank.
    let expected = (n * (n + 1) / 2) as f32;
    let mut wrong = 0u64;
    let mut first_wrong = None;
    // Read back in pieces: a 4 GiB buffer must not take 4 GiB of host memory.
    let piece = (READ_BACK_BYTES / 4).min(count).max(1);
    let mut host = vec![0f32; piece];
    for rank in &ranks {
        stage(&format!("GPU {}: reading the result", rank.ordinal));
        let dev = drv.device(rank.ordinal as i32).map_err(cuda)?;
        drv.primary_context(dev).map_err(cuda)?;
        let mut done = 0usize;
        while done < count {
            let n_el = piece.min(count - done);
            let src = rank.recv + (done * 4) as u64;
            // SAFETY: host holds n_el floats; recv holds count floats, done + n_el ≤ count.
            unsafe { drv.dtoh(host.as_mut_ptr().cast(), src, n_el * 4) }.map_err(cuda)?;
            for (i, &x) in host[..n_el].iter().enumerate() {
                if x != expected {
                    wrong += 1;
                    first_wrong.get_or_insert((rank.ordinal, (done + i) as u64, x));
                }
            }
            done += n_el;
        }
    }
    let mut times = Vec::with_capacity(ITERATIONS);
    for _ in 0..ITERATIONS {
        times.push(once()?);
    }
    let secs = super::median(&mut times).unwrap_or(f64::NAN);
    let algbw = if secs > 0.0 {
        bytes as f64 / secs / 1e9
    } else {
        0.0
    };
    let busbw = algbw * 2.0 * (n as f64 - 1.0) / n as f64;
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    Ok(AllReduce {
        bytes,
        ranks: n as u32,
        expected,
        wrong_elements: wrong,
        first_wrong,
        iterations: ITERATIONS as u32,
        ms: finite(secs * 1e3),
        algbw_gbps: finite(algbw),
        busbw_gbps: finite(busbw),
    })
}

/// Waits for every GPU's work (the all-reduce runs on each device's default stream).
fn sync_all(drv: &Driver, ranks: &[Rank], stage: &dyn Fn(&str)) -> Result<(), NcclError> {
    for rank in ranks {
        stage(&format!("cuCtxSynchronize (GPU {})", rank.ordinal));
        let dev = drv.device(rank.ordinal as i32).map_err(cuda)?;
        drv.primary_context(dev).map_err(cuda)?;
        drv.synchronize().map_err(cuda)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_debug_log_names_transports_settings_and_warnings() {
        let log = "\
h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
h:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1
h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct
h:1:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via SHM/direct/direct
h:1:2 [1] NCCL INFO Channel 01/0 : 1[1] -> 0[0] via P2P/CUMEM/read
h:1:1 [0] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found
";
        let d = parse_debug(log);
        assert_eq!(
            d.version_line.as_deref(),
            Some("NCCL version 2.21.5+cuda12.4")
        );
        assert_eq!(d.transports, vec!["SHM/direct/direct", "P2P/CUMEM/read"]);
        assert_eq!(d.settings, vec!["NCCL_P2P_DISABLE set by environment to 1"]);
        assert_eq!(d.warnings, vec!["Bootstrap : no socket interface found"]);
        assert_eq!(parse_debug("garbage\n\u{0}"), NcclDebug::default());
    }

    #[test]
    fn versions_read_both_encodings() {
        let run = |v| NcclRun {
            version: Some(v),
            ..NcclRun::default()
        };
        assert_eq!(run(22105).version_text().as_deref(), Some("2.21.5"));
        assert_eq!(run(2804).version_text().as_deref(), Some("2.8.4"));
    }

    #[test]
    fn lines_fold_into_a_run_and_an_unfinished_one_names_its_call() {
        let mut run = None;
        apply(
            &mut run,
            NcclLine::Stage {
                call: "ncclGroupEnd".into(),
            },
        );
        assert_eq!(
            stuck_at(run.as_ref().unwrap()).as_deref(),
            Some("NCCL: ncclGroupEnd")
        );
        apply(&mut run, NcclLine::Done);
        assert_eq!(stuck_at(run.as_ref().unwrap()), None);
        let line =
            serde_json::to_string(&WorkerLine::Nccl(NcclLine::Stage { call: "x".into() })).unwrap();
        assert_eq!(line, r#"{"kind":"nccl","event":"stage","call":"x"}"#);
    }
}
