//! A fake libnccl for gpudoctor's `smoke --nccl` tests: exports the NCCL functions the
//! smoke worker calls, with their C ABI, and sums on the fake libcuda's device memory
//! (tests/fake_cuda: a CUdeviceptr is the address of zeroed host memory).
//!
//! Built by `cargo test` as target/<profile>/examples/libfake_nccl.so (an `[[example]]`
//! cdylib); loaded with `--nccl-lib`.
//!
//! # Config
//!
//! `GPUDOCTOR_FAKE_NCCL` names a JSON file read at the first call (types and defaults:
//! tests/fake_nccl/config.rs); unset, the fake works. Faults:
//! `{"init_error": 2, "init_message": "Bootstrap : no socket interface found"}`,
//! `{"hang_in": "ncclGroupEnd"}`, `{"crash_in": "ncclAllReduce"}`, `{"wrong_sum": true}`, `{"version": 21805}`.
//!
//! With NCCL_DEBUG=INFO it writes NCCL-style lines ("NCCL version …", "… set by
//! environment to …", "Channel 00/0 : 0[0] -> 1[1] via …", "NCCL WARN …") to
//! NCCL_DEBUG_FILE (stderr when unset).
//!
//! Rules: ncclAllReduce only queues (float32 sum only, else ncclInvalidArgument); the
//! queued operations run at ncclGroupEnd, or at once when every rank has queued one.

// A C library's double: each entry point trusts its C caller's pointers as the real library
// does (its contract is the API's, not Rust's), so the bodies are not split into one
// documented unsafe block per dereference as the product's code is.
#![allow(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

mod config;

use std::ffi::{c_char, c_int, c_void, CString};
use std::io::Write;
use std::sync::{Mutex, OnceLock};

use config::FakeNccl;

const ENV: &str = "GPUDOCTOR_FAKE_NCCL";

const SUCCESS: c_int = 0;
const INVALID_ARGUMENT: c_int = 4;
const INVALID_USAGE: c_int = 5;
const FLOAT32: c_int = 7;
const SUM: c_int = 0;

struct Comm {
    rank: usize,
    ranks: usize,
}

struct Op {
    send: usize,
    recv: usize,
    count: usize,
    rank: usize,
    ranks: usize,
}

struct State {
    group_depth: u32,
    queued: Vec<Op>,
    last_error: Option<CString>,
}

static STATE: Mutex<State> = Mutex::new(State {
    group_depth: 0,
    queued: Vec::new(),
    last_error: None,
});

fn cfg() -> &'static FakeNccl {
    static CFG: OnceLock<FakeNccl> = OnceLock::new();
    CFG.get_or_init(|| {
        let Some(path) = std::env::var_os(ENV) else {
            return FakeNccl::default();
        };
        match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!(
                    "fake libnccl: {}: {e}",
                    std::path::Path::new(&path).display()
                );
                FakeNccl::default()
            }
        }
    })
}

fn fault(sym: &str) {
    if cfg().crash_in.as_deref() == Some(sym) {
        // SAFETY: the default action for SIGSEGV, then raise it: the process dies as a
        // segfaulting library would make it.
        unsafe {
            libc::signal(libc::SIGSEGV, libc::SIG_DFL);
            libc::raise(libc::SIGSEGV);
        }
    }
    if cfg().hang_in.as_deref() == Some(sym) {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// An NCCL_DEBUG=INFO/WARN line, as the real library writes it.
fn log(dev: i32, level: &str, text: &str) {
    let wanted = std::env::var("NCCL_DEBUG").map(|v| v.to_ascii_uppercase());
    let show = match wanted.as_deref() {
        Ok("INFO") | Ok("TRACE") => true,
        Ok("WARN") => level == "WARN",
        _ => false,
    };
    if !show {
        return;
    }
    let line = format!(
        "fakehost:{}:{} [{dev}] NCCL {level} {text}\n",
        std::process::id(),
        1
    );
    match std::env::var_os("NCCL_DEBUG_FILE") {
        Some(p) => {
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
            {
                let _ = f.write_all(line.as_bytes());
            }
        }
        None => eprint!("{line}"),
    }
}

fn version_text(v: i32) -> String {
    format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
}

#[no_mangle]
pub unsafe extern "C" fn ncclGetVersion(version: *mut c_int) -> c_int {
    fault("ncclGetVersion");
    if version.is_null() {
        return INVALID_ARGUMENT;
    }
    *version = cfg().version;
    SUCCESS
}

#[no_mangle]
pub extern "C" fn ncclGetErrorString(code: c_int) -> *const c_char {
    let s: &'static std::ffi::CStr = match code {
        0 => c"no error",
        1 => c"unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
        2 => c"unhandled system error (run with NCCL_DEBUG=INFO for details)",
        3 => c"internal error - please report this issue to the NCCL developers",
        4 => c"invalid argument (run with NCCL_DEBUG=WARN for details)",
        5 => c"invalid usage (run with NCCL_DEBUG=WARN for details)",
        6 => c"remote process exited or there was a network error",
        7 => c"NCCL operation in progress",
        _ => c"unknown result code",
    };
    s.as_ptr()
}

#[no_mangle]
pub extern "C" fn ncclGetLastError(_comm: *mut c_void) -> *const c_char {
    // The string lives in the static state; it changes only at the next failed init.
    match &state().last_error {
        Some(s) => s.as_ptr(),
        None => c"".as_ptr(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommInitAll(
    comms: *mut *mut c_void,
    ndev: c_int,
    devlist: *const c_int,
) -> c_int {
    fault("ncclCommInitAll");
    let c = cfg();
    log(
        0,
        "INFO",
        &format!("NCCL version {}+cuda12.4", version_text(c.version)),
    );
    if comms.is_null() || ndev <= 0 {
        return INVALID_ARGUMENT;
    }
    if let Some(code) = c.init_error {
        let msg = c
            .init_message
            .clone()
            .unwrap_or_else(|| "fake init failure".into());
        log(0, "WARN", &msg);
        state().last_error = Some(CString::new(msg).unwrap_or_default());
        return code;
    }
    let p2p_off = std::env::var("NCCL_P2P_DISABLE").is_ok_and(|v| v.trim() == "1");
    if p2p_off {
        log(0, "INFO", "NCCL_P2P_DISABLE set by environment to 1");
    }
    let transport = if p2p_off {
        "SHM/direct/direct"
    } else {
        c.transport.as_str()
    };
    let n = ndev as usize;
    let devs: Vec<i32> = (0..n)
        .map(|i| {
            if devlist.is_null() {
                i as i32
            } else {
                *devlist.add(i)
            }
        })
        .collect();
    for r in 0..n {
        *comms.add(r) = Box::into_raw(Box::new(Comm { rank: r, ranks: n })).cast();
        if n > 1 {
            let next = (r + 1) % n;
            log(
                devs[r],
                "INFO",
                &format!(
                    "Channel 00/0 : {r}[{}] -> {next}[{}] via {transport}",
                    devs[r], devs[next]
                ),
            );
        }
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommDestroy(comm: *mut c_void) -> c_int {
    fault("ncclCommDestroy");
    if !comm.is_null() {
        drop(Box::from_raw(comm.cast::<Comm>()));
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommAbort(comm: *mut c_void) -> c_int {
    fault("ncclCommAbort");
    if !comm.is_null() {
        drop(Box::from_raw(comm.cast::<Comm>()));
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommGetAsyncError(_comm: *mut c_void, result: *mut c_int) -> c_int {
    fault("ncclCommGetAsyncError");
    if !result.is_null() {
        *result = SUCCESS;
    }
    SUCCESS
}

#[no_mangle]
pub extern "C" fn ncclGroupStart() -> c_int {
    fault("ncclGroupStart");
    state().group_depth += 1;
    SUCCESS
}

#[no_mangle]
pub extern "C" fn ncclGroupEnd() -> c_int {
    fault("ncclGroupEnd");
    let mut s = state();
    if s.group_depth == 0 {
        return INVALID_USAGE;
    }
    s.group_depth -= 1;
    if s.group_depth > 0 {
        return SUCCESS;
    }
    let ops = std::mem::take(&mut s.queued);
    drop(s);
    run_ops(ops)
}

/// Sums the queued ranks' buffers into every rank's result.
fn run_ops(ops: Vec<Op>) -> c_int {
    if ops.is_empty() {
        return SUCCESS;
    }
    let ranks = ops[0].ranks;
    let count = ops[0].count;
    if ops.len() != ranks || ops.iter().any(|o| o.count != count || o.ranks != ranks) {
        return INVALID_USAGE;
    }
    let mut sum = vec![0f32; count];
    let mut ordered: Vec<&Op> = ops.iter().collect();
    ordered.sort_by_key(|o| o.rank);
    for o in &ordered {
        // SAFETY: the fake libcuda's device pointers are host addresses of `count` floats.
        let send = unsafe { std::slice::from_raw_parts(o.send as *const f32, count) };
        for (acc, x) in sum.iter_mut().zip(send) {
            *acc += x;
        }
    }
    for o in &ordered {
        // SAFETY: as above; recv holds `count` floats.
        let recv = unsafe { std::slice::from_raw_parts_mut(o.recv as *mut f32, count) };
        recv.copy_from_slice(&sum);
        if cfg().wrong_sum && o.rank + 1 == ranks && count > 7 {
            recv[7] += 1.0;
        }
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn ncclAllReduce(
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    datatype: c_int,
    op: c_int,
    comm: *mut c_void,
    _stream: *mut c_void,
) -> c_int {
    fault("ncclAllReduce");
    if comm.is_null() || send.is_null() || recv.is_null() || datatype != FLOAT32 || op != SUM {
        return INVALID_ARGUMENT;
    }
    let c = &*comm.cast::<Comm>();
    let mut s = state();
    s.queued.push(Op {
        send: send as usize,
        recv: recv as usize,
        count,
        rank: c.rank,
        ranks: c.ranks,
    });
    if s.group_depth == 0 && s.queued.len() == c.ranks {
        let ops = std::mem::take(&mut s.queued);
        drop(s);
        return run_ops(ops);
    }
    SUCCESS
}
