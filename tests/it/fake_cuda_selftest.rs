//! Tests of the fake libcuda itself, through its C ABI loaded with libloading.
//!
//! The fake keeps process-wide state (config, CUDA_VISIBLE_DEVICES, contexts), so every
//! scenario runs in a bounded child process (`util::selftest`) with its config in
//! GPUDOCTOR_FAKE_CUDA; hang and crash faults cannot stall the run.

// Each scenario calls the fake's C ABI as a C caller would, with the API's own contract.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use crate::util::fake_cuda::*;
use crate::util::fake_nvml::gpu_uuid;
use crate::util::selftest::{self, assert_hangs, is_child, run_ok, spawn, MARK};

const EXPECT: &str = "SELFTEST_EXPECT";
const CVD: &str = "CUDA_VISIBLE_DEVICES";
const MIB: usize = 1 << 20;

type Cfg<'a> = selftest::Cfg<'a, FakeCuda>;

fn child_config() -> FakeCuda {
    selftest::child_config()
}

// ---- the driver API, as gpudoctor resolves it ----

type Ctx = *mut c_void;

#[allow(non_snake_case)]
struct Cu {
    cuInit: unsafe extern "C" fn(c_uint) -> c_int,
    cuDriverGetVersion: unsafe extern "C" fn(*mut c_int) -> c_int,
    cuDeviceGetCount: unsafe extern "C" fn(*mut c_int) -> c_int,
    cuDeviceGet: unsafe extern "C" fn(*mut c_int, c_int) -> c_int,
    cuDeviceGetName: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int,
    cuDeviceGetAttribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int,
    cuDeviceTotalMem_v2: unsafe extern "C" fn(*mut usize, c_int) -> c_int,
    cuDeviceGetUuid: unsafe extern "C" fn(*mut [u8; 16], c_int) -> c_int,
    cuDeviceGetPCIBusId: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int,
    cuDevicePrimaryCtxRetain: unsafe extern "C" fn(*mut Ctx, c_int) -> c_int,
    cuDevicePrimaryCtxRelease_v2: unsafe extern "C" fn(c_int) -> c_int,
    cuCtxSetCurrent: unsafe extern "C" fn(Ctx) -> c_int,
    cuCtxSynchronize: unsafe extern "C" fn() -> c_int,
    cuMemGetInfo_v2: unsafe extern "C" fn(*mut usize, *mut usize) -> c_int,
    cuMemAlloc_v2: unsafe extern "C" fn(*mut u64, usize) -> c_int,
    cuMemFree_v2: unsafe extern "C" fn(u64) -> c_int,
    cuMemHostAlloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> c_int,
    cuMemFreeHost: unsafe extern "C" fn(*mut c_void) -> c_int,
    cuMemcpyHtoD_v2: unsafe extern "C" fn(u64, *const c_void, usize) -> c_int,
    cuMemcpyDtoH_v2: unsafe extern "C" fn(*mut c_void, u64, usize) -> c_int,
    cuMemsetD32_v2: unsafe extern "C" fn(u64, c_uint, usize) -> c_int,
    cuModuleLoadDataEx: unsafe extern "C" fn(
        *mut *mut c_void,
        *const c_void,
        c_uint,
        *mut c_int,
        *mut *mut c_void,
    ) -> c_int,
    cuModuleGetFunction:
        unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int,
    cuModuleUnload: unsafe extern "C" fn(*mut c_void) -> c_int,
    #[allow(clippy::type_complexity)]
    cuLaunchKernel: unsafe extern "C" fn(
        *mut c_void,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> c_int,
    cuGetErrorName: unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int,
    cuGetErrorString: unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int,
    cuDeviceCanAccessPeer: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int,
    cuCtxEnablePeerAccess: unsafe extern "C" fn(Ctx, c_uint) -> c_int,
    cuStreamCreate: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int,
    cuStreamSynchronize: unsafe extern "C" fn(*mut c_void) -> c_int,
    cuStreamDestroy_v2: unsafe extern "C" fn(*mut c_void) -> c_int,
    cuMemcpyPeerAsync: unsafe extern "C" fn(u64, Ctx, u64, Ctx, usize, *mut c_void) -> c_int,
}

fn load(path: &Path) -> Cu {
    // Leaked: the function pointers below must outlive every use.
    // SAFETY: loading the fake runs no initialisers that matter.
    let lib: &'static libloading::Library = Box::leak(Box::new(
        unsafe { libloading::Library::new(path) }.expect("dlopen"),
    ));
    macro_rules! syms {
        ($($n:ident),*) => {
            Cu { $($n: sym(lib, stringify!($n))),* }
        };
    }
    syms!(
        cuInit,
        cuDriverGetVersion,
        cuDeviceGetCount,
        cuDeviceGet,
        cuDeviceGetName,
        cuDeviceGetAttribute,
        cuDeviceTotalMem_v2,
        cuDeviceGetUuid,
        cuDeviceGetPCIBusId,
        cuDevicePrimaryCtxRetain,
        cuDevicePrimaryCtxRelease_v2,
        cuCtxSetCurrent,
        cuCtxSynchronize,
        cuMemGetInfo_v2,
        cuMemAlloc_v2,
        cuMemFree_v2,
        cuMemHostAlloc,
        cuMemFreeHost,
        cuMemcpyHtoD_v2,
        cuMemcpyDtoH_v2,
        cuMemsetD32_v2,
        cuModuleLoadDataEx,
        cuModuleGetFunction,
        cuModuleUnload,
        cuLaunchKernel,
        cuGetErrorName,
        cuGetErrorString,
        cuDeviceCanAccessPeer,
        cuCtxEnablePeerAccess,
        cuStreamCreate,
        cuStreamSynchronize,
        cuStreamDestroy_v2,
        cuMemcpyPeerAsync
    )
}

fn sym<T: Copy>(lib: &libloading::Library, name: &str) -> T {
    // SAFETY: the caller's T is the fake's signature for this symbol.
    let s = unsafe { lib.get::<T>(format!("{name}\0").as_bytes()) };
    *s.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn cu() -> Cu {
    load(&fake_cuda_lib())
}

// Convenience wrappers; every call goes through the C ABI and asserts success.
// SAFETY (all): valid out-pointers and sizes, and handles the fake handed out.
impl Cu {
    fn init(&self) {
        assert_eq!(unsafe { (self.cuInit)(0) }, 0);
    }

    fn count(&self) -> c_int {
        let mut n = -1;
        assert_eq!(unsafe { (self.cuDeviceGetCount)(&mut n) }, 0);
        n
    }

    /// Retains device `dev`'s primary context and makes it current.
    fn use_device(&self, dev: c_int) -> Ctx {
        let mut ctx = null_mut();
        assert_eq!(unsafe { (self.cuDevicePrimaryCtxRetain)(&mut ctx, dev) }, 0);
        assert!(!ctx.is_null());
        assert_eq!(unsafe { (self.cuCtxSetCurrent)(ctx) }, 0);
        ctx
    }

    fn alloc(&self, bytes: usize) -> u64 {
        let mut p = 0;
        let rc = unsafe { (self.cuMemAlloc_v2)(&mut p, bytes) };
        assert_eq!(rc, 0, "alloc {bytes}");
        assert_ne!(p, 0);
        p
    }

    fn free_total(&self) -> (usize, usize) {
        let (mut f, mut t) = (0, 0);
        assert_eq!(unsafe { (self.cuMemGetInfo_v2)(&mut f, &mut t) }, 0);
        (f, t)
    }

    fn put<T: Copy>(&self, dst: u64, src: &[T]) {
        let rc = unsafe { (self.cuMemcpyHtoD_v2)(dst, src.as_ptr().cast(), size_of_val(src)) };
        assert_eq!(rc, 0);
    }

    fn get<T: Copy + Default>(&self, src: u64, n: usize) -> Vec<T> {
        let mut v = vec![T::default(); n];
        let rc = unsafe { (self.cuMemcpyDtoH_v2)(v.as_mut_ptr().cast(), src, size_of_val(&v[..])) };
        assert_eq!(rc, 0);
        v
    }

    /// Loads PTX text; returns the CUresult, the module and the error log.
    fn load_module(&self, ptx: &str) -> (c_int, *mut c_void, String) {
        let text = std::ffi::CString::new(ptx).unwrap();
        let mut log = vec![0 as c_char; 256];
        let mut opts = [5 as c_int, 6];
        let mut vals = [
            log.as_mut_ptr().cast::<c_void>(),
            std::ptr::without_provenance_mut::<c_void>(log.len()),
        ];
        let mut m = null_mut();
        let rc = unsafe {
            (self.cuModuleLoadDataEx)(
                &mut m,
                text.as_ptr().cast(),
                2,
                opts.as_mut_ptr(),
                vals.as_mut_ptr(),
            )
        };
        let log = unsafe { CStr::from_ptr(log.as_ptr()) };
        (rc, m, log.to_string_lossy().into_owned())
    }

    fn function(&self, m: *mut c_void, name: &str) -> *mut c_void {
        let name = std::ffi::CString::new(name).unwrap();
        let mut f = null_mut();
        assert_eq!(
            unsafe { (self.cuModuleGetFunction)(&mut f, m, name.as_ptr()) },
            0
        );
        f
    }

    /// Launches `f` with these argument values (each passed by pointer, as CUDA wants).
    fn launch(&self, f: *mut c_void, grid: [u32; 3], block: [u32; 3], args: &[Arg]) -> c_int {
        let mut ptrs: Vec<*mut c_void> = args.iter().map(Arg::ptr).collect();
        unsafe {
            (self.cuLaunchKernel)(
                f,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                0,
                null_mut(),
                ptrs.as_mut_ptr(),
                null_mut(),
            )
        }
    }

    fn name(&self, dev: c_int) -> String {
        let mut buf = [0 as c_char; 128];
        assert_eq!(
            unsafe { (self.cuDeviceGetName)(buf.as_mut_ptr(), 128, dev) },
            0
        );
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    fn uuid(&self, dev: c_int) -> [u8; 16] {
        let mut u = [0u8; 16];
        assert_eq!(unsafe { (self.cuDeviceGetUuid)(&mut u, dev) }, 0);
        u
    }

    fn attr(&self, attrib: c_int, dev: c_int) -> c_int {
        let mut v = -1;
        assert_eq!(
            unsafe { (self.cuDeviceGetAttribute)(&mut v, attrib, dev) },
            0
        );
        v
    }
}

/// A kernel argument value, boxed so its address is stable.
enum Arg {
    U64(Box<u64>),
    U32(Box<u32>),
}

impl Arg {
    fn ptr(&self) -> *mut c_void {
        match self {
            Arg::U64(b) => (&**b as *const u64).cast_mut().cast(),
            Arg::U32(b) => (&**b as *const u32).cast_mut().cast(),
        }
    }
}

fn u64a(v: u64) -> Arg {
    Arg::U64(Box::new(v))
}
fn u32a(v: u32) -> Arg {
    Arg::U32(Box::new(v))
}

/// The three smoke kernels' PTX, reduced to what the fake reads.
fn ptx(version: &str, target: &str) -> String {
    format!(
        "//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version {version}\n.target {target}\n\
         .address_size 64\n\n\t// .globl\tgd_matmul_f32\n.visible .entry gd_matmul_f32(\n\
         \t.param .u64 gd_matmul_f32_param_0,\n\t.param .u32 gd_matmul_f32_param_3\n)\n{{\n\tret;\n}}\n\
         .visible .entry gd_fill_u32(\n\t.param .u64 gd_fill_u32_param_0\n)\n{{\n\tret;\n}}\n\
         .entry gd_verify_u32(\n\t.param .u64 gd_verify_u32_param_0\n)\n{{\n\tret;\n}}\n"
    )
}

/// The same mixer as src/smoke/kernels.cu, written independently of the fake's.
fn pattern(i: u64, seed: u32) -> u32 {
    let mut x = (i as u32) ^ ((i >> 32) as u32).wrapping_mul(0x9E37_79B9) ^ seed;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

fn uuid_bytes(s: &str) -> [u8; 16] {
    let hex: String = s.trim_start_matches("GPU-").replace('-', "");
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    out
}

// ---- presets ----

#[test]
fn presets_survive_json() {
    for p in [FakeCuda::h100(8), FakeCuda::rtx4090(), FakeCuda::default()] {
        let back: FakeCuda = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }
    let h = FakeCuda::h100(8);
    assert_eq!(h.devices[7].uuid, gpu_uuid(7));
    assert_eq!(h.devices[7].pci_bus_id, "0000:1f:00.0");
    assert_eq!(
        serde_json::from_str::<FakeCuda>("{}").unwrap(),
        FakeCuda::default()
    );
}

// ---- init, enumeration ----

#[test]
fn init_versions_and_enumeration() {
    let name = "init_versions_and_enumeration";
    if !is_child(name) {
        let mut c = FakeCuda::h100(2);
        c.driver_version = 13000;
        run_ok(name, Cfg::Json(&c), &[]);
        return;
    }
    let c = cu();
    unsafe {
        let mut n = -1;
        assert_eq!((c.cuDeviceGetCount)(&mut n), 3, "before cuInit");
        let mut v = 0;
        assert_eq!((c.cuDriverGetVersion)(&mut v), 0, "works before cuInit");
        assert_eq!(v, 13000);
        assert_eq!((c.cuInit)(1), 1, "flags must be 0");
        c.init();
        c.init();
        assert_eq!(c.count(), 2);
        let mut d = -1;
        assert_eq!((c.cuDeviceGet)(&mut d, 1), 0);
        assert_eq!(d, 1);
        assert_eq!((c.cuDeviceGet)(&mut d, 2), 101);
        assert_eq!((c.cuDeviceGet)(&mut d, -1), 101);
        assert_eq!((c.cuDeviceGetCount)(null_mut()), 1);
        let mut buf = [0 as c_char; 64];
        assert_eq!((c.cuDeviceGetName)(buf.as_mut_ptr(), 64, 2), 101);
    }
}

#[test]
fn visible_devices_filter() {
    let name = "visible_devices_filter";
    if is_child(name) {
        let cfg = child_config();
        let c = cu();
        let want = std::env::var(EXPECT).unwrap();
        if want.is_empty() {
            // No device left: cuInit says so, and nothing else works.
            assert_eq!(unsafe { (c.cuInit)(0) }, 100);
            let mut n = -1;
            assert_eq!(unsafe { (c.cuDeviceGetCount)(&mut n) }, 3);
            return;
        }
        let want: Vec<usize> = want.split(',').map(|s| s.parse().unwrap()).collect();
        c.init();
        assert_eq!(c.count() as usize, want.len());
        for (ord, i) in want.iter().enumerate() {
            assert_eq!(c.uuid(ord as c_int), uuid_bytes(&cfg.devices[*i].uuid));
        }
        return;
    }
    let mut cfg = FakeCuda::h100(4);
    cfg.device(2).uuid = "GPU-ab0c0000-1111-2222-3333-444444444444".into();
    let u3 = gpu_uuid(3);
    let cases: &[(Option<&str>, &str)] = &[
        (None, "0,1,2,3"),
        (Some("2,0"), "2,0"),
        (Some(" 3 , 1"), "3,1"),
        (Some("1,7,2"), "1"),
        (Some("1,1,2"), "1"),
        (Some("0,bogus,1"), "0"),
        (Some(&u3), "3"),
        (Some(&u3[..20]), ""),
        (Some("GPU-8e1f6a2c-0000-0000-0000-00000000000"), ""),
        (Some("GPU-8e1f6a2c-0000-0000-0000-0000000000011"), ""),
        (Some(""), ""),
        (Some("-1"), ""),
        (Some("4"), ""),
    ];
    for (cvd, want) in cases.iter().copied().chain([
        (Some("GPU-ab,0"), "2,0"),
        (Some("gpu-ab"), ""),
        (Some("3,GPU-AB0C"), "3,2"),
    ]) {
        let mut env = vec![(EXPECT, want)];
        if let Some(v) = cvd {
            env.push((CVD, v));
        }
        run_ok(name, Cfg::Json(&cfg), &env);
    }
}

#[test]
fn device_attributes() {
    let name = "device_attributes";
    if !is_child(name) {
        let mut c = FakeCuda::h100(3);
        c.devices.push(Device::rtx4090());
        run_ok(name, Cfg::Json(&c), &[]);
        return;
    }
    let c = cu();
    c.init();
    assert_eq!(c.name(1), "NVIDIA H100 80GB HBM3");
    assert_eq!(c.name(3), "NVIDIA GeForce RTX 4090");
    assert_eq!(c.uuid(2), uuid_bytes(&gpu_uuid(2)));
    assert_eq!((c.attr(75, 1), c.attr(76, 1)), (9, 0));
    assert_eq!((c.attr(75, 3), c.attr(76, 3)), (8, 9));
    assert_eq!((c.attr(16, 1), c.attr(16, 3)), (132, 128));
    assert_eq!((c.attr(50, 1), c.attr(33, 1), c.attr(34, 1)), (0, 0x19, 0));
    assert_eq!(c.attr(33, 3), 1);
    unsafe {
        let mut v = 0;
        assert_eq!(
            (c.cuDeviceGetAttribute)(&mut v, 1, 0),
            1,
            "unknown attribute"
        );
        assert_eq!((c.cuDeviceGetAttribute)(null_mut(), 75, 0), 1);
        let mut total = 0;
        assert_eq!((c.cuDeviceTotalMem_v2)(&mut total, 0), 0);
        assert_eq!(total, 256 * MIB);
        let mut buf = [0x7f as c_char; 32];
        assert_eq!((c.cuDeviceGetPCIBusId)(buf.as_mut_ptr(), 32, 2), 0);
        assert_eq!(
            CStr::from_ptr(buf.as_ptr()).to_str().unwrap(),
            "0000:1a:00.0"
        );
        // Short buffers truncate, as the driver does.
        assert_eq!((c.cuDeviceGetName)(buf.as_mut_ptr(), 7, 0), 0);
        assert_eq!(CStr::from_ptr(buf.as_ptr()).to_str().unwrap(), "NVIDIA");
        assert_eq!((c.cuDeviceGetName)(buf.as_mut_ptr(), 0, 0), 1);
    }
}

#[test]
fn init_errors_are_returned() {
    let name = "init_errors_are_returned";
    if is_child(name) {
        let want = child_config().init_error.unwrap();
        let c = cu();
        assert_eq!(unsafe { (c.cuInit)(0) }, want);
        let mut n = 0;
        assert_eq!(unsafe { (c.cuDeviceGetCount)(&mut n) }, 3);
        return;
    }
    for code in [100, 999, 34, 804] {
        let mut c = FakeCuda::h100(1);
        c.init_error = Some(code);
        run_ok(name, Cfg::Json(&c), &[]);
    }
}

#[test]
fn bad_config_fails_init_with_a_reason() {
    let name = "bad_config_fails_init_with_a_reason";
    if is_child(name) {
        let c = cu();
        assert_eq!(unsafe { (c.cuInit)(0) }, 999);
        assert_eq!(unsafe { (c.cuInit)(0) }, 999, "re-read, still bad");
        return;
    }
    let out = run_ok(name, Cfg::Unset, &[]);
    assert!(
        out.contains("fake-cuda: GPUDOCTOR_FAKE_CUDA is not set"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = run_ok(name, Cfg::Path(&dir.path().join("absent.json")), &[]);
    assert!(out.contains("fake-cuda: cannot read"), "{out}");
    for (json, says) in [
        (r#"{"devices": [{"nmae": "x"}]}"#, "unknown field `nmae`"),
        (r#"{"devices": [{"uuid": "GPU-12"}]}"#, "devices[0].uuid"),
        (
            r#"{"devices": [{"pci_bus_id": "zz"}]}"#,
            "devices[0].pci_bus_id",
        ),
        (r#"{"max_ptx_version": "8"}"#, "max_ptx_version"),
        (r#"{"devices": [{"h2d_gbps": 0}]}"#, "devices[0].h2d_gbps"),
    ] {
        let p = dir.path().join("bad.json");
        std::fs::write(&p, json).unwrap();
        let out = run_ok(name, Cfg::Path(&p), &[]);
        assert!(out.contains(says), "{json}: {out}");
    }
}

#[test]
fn error_names_and_strings() {
    let name = "error_names_and_strings";
    if !is_child(name) {
        run_ok(name, Cfg::Unset, &[]);
        return;
    }
    let c = cu();
    let text = |f: unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int, code| {
        let mut p = null();
        // SAFETY: a valid out-pointer; the fake returns static strings.
        let rc = unsafe { f(code, &mut p) };
        (rc == 0).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string())
    };
    // Works before (and without) cuInit.
    assert_eq!(
        text(c.cuGetErrorName, 2).as_deref(),
        Some("CUDA_ERROR_OUT_OF_MEMORY")
    );
    assert_eq!(
        text(c.cuGetErrorString, 2).as_deref(),
        Some("out of memory")
    );
    for code in [
        0, 1, 2, 3, 34, 46, 100, 101, 200, 201, 209, 214, 218, 222, 500, 700, 719, 802, 803, 804,
        999,
    ] {
        let n = text(c.cuGetErrorName, code).unwrap_or_else(|| panic!("no name for {code}"));
        assert!(n.starts_with("CUDA_"), "{code}: {n}");
        assert!(text(c.cuGetErrorString, code).is_some(), "{code}");
    }
    assert_eq!(
        text(c.cuGetErrorName, 222).as_deref(),
        Some("CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
    );
    for code in [35, 12345, -1] {
        assert_eq!(text(c.cuGetErrorName, code), None, "{code}");
        assert_eq!(text(c.cuGetErrorString, code), None, "{code}");
    }
    assert_eq!(unsafe { (c.cuGetErrorName)(0, null_mut()) }, 1);
}

// ---- contexts and memory ----

#[test]
fn contexts_and_allocations() {
    let name = "contexts_and_allocations";
    if !is_child(name) {
        let mut c = FakeCuda::h100(3);
        c.device(0).used_by_others = 16 * MIB as u64;
        c.device(1).ctx_error = Some(46);
        c.device(2).oom_after_bytes = Some(3 * MIB as u64);
        run_ok(name, Cfg::Json(&c), &[]);
        return;
    }
    let c = cu();
    c.init();
    unsafe {
        let mut p = 0;
        let (mut f, mut t) = (0, 0);
        assert_eq!((c.cuMemAlloc_v2)(&mut p, 64), 201, "no current context");
        assert_eq!((c.cuMemGetInfo_v2)(&mut f, &mut t), 201);
        assert_eq!((c.cuCtxSynchronize)(), 201);
        let mut ctx = null_mut();
        assert_eq!((c.cuDevicePrimaryCtxRetain)(&mut ctx, 1), 46, "ctx_error");
        assert_eq!((c.cuDevicePrimaryCtxRetain)(&mut ctx, 9), 101);
        assert_eq!((c.cuCtxSetCurrent)(0x1234 as Ctx), 201, "garbage context");

        let ctx0 = c.use_device(0);
        assert_eq!((c.cuCtxSynchronize)(), 0);
        assert_eq!(c.free_total(), (240 * MIB, 256 * MIB));
        let a = c.alloc(10 * MIB);
        assert_eq!(a % 256, 0);
        assert_eq!(c.get::<u32>(a, 4), [0; 4], "zeroed");
        assert_eq!(c.free_total().0, 230 * MIB);
        assert_eq!((c.cuMemAlloc_v2)(&mut p, 231 * MIB), 2, "more than free");
        assert_eq!((c.cuMemAlloc_v2)(&mut p, 0), 1);
        let b = c.alloc(230 * MIB);
        assert_eq!(c.free_total().0, 0);
        assert_eq!((c.cuMemAlloc_v2)(&mut p, 1), 2);
        assert_eq!((c.cuMemFree_v2)(b), 0);
        assert_eq!((c.cuMemFree_v2)(b), 1, "double free");
        assert_eq!((c.cuMemFree_v2)(a + 256), 1, "not a base");
        assert_eq!(c.free_total().0, 230 * MIB);

        // oom_after_bytes counts this device's live allocations only.
        let ctx2 = c.use_device(2);
        assert_ne!(ctx0, ctx2);
        let x = c.alloc(2 * MIB);
        assert_eq!((c.cuMemAlloc_v2)(&mut p, 2 * MIB), 2);
        let y = c.alloc(MIB);
        assert_eq!((c.cuMemAlloc_v2)(&mut p, 1), 2);
        assert_eq!((c.cuMemFree_v2)(x), 0);
        let z = c.alloc(2 * MIB);
        assert_eq!(c.free_total().0, 253 * MIB);

        // Releasing the last reference frees the context's memory; a stale one answers 201.
        assert_eq!((c.cuDevicePrimaryCtxRelease_v2)(2), 0);
        assert_eq!((c.cuMemAlloc_v2)(&mut p, 1), 201);
        assert_eq!((c.cuDevicePrimaryCtxRelease_v2)(2), 201, "not retained");
        assert_eq!((c.cuMemFree_v2)(y), 1, "freed with the context");
        assert_eq!((c.cuMemFree_v2)(z), 1);
        c.use_device(2);
        assert_eq!(c.free_total().0, 256 * MIB);

        // The current context is per thread.
        std::thread::spawn(move || {
            let c = cu();
            let mut p = 0;
            assert_eq!((c.cuMemAlloc_v2)(&mut p, 64), 201);
            c.use_device(0);
            assert_eq!(c.free_total().0, 230 * MIB);
            assert_eq!((c.cuCtxSetCurrent)(null_mut()), 0);
            assert_eq!((c.cuMemAlloc_v2)(&mut p, 64), 201);
        })
        .join()
        .unwrap();
        assert_eq!(c.free_total().0, 256 * MIB, "still device 2 here");
    }
}

#[test]
fn copies_and_memset_check_ranges() {
    let name = "copies_and_memset_check_ranges";
    if !is_child(name) {
        run_ok(name, Cfg::Json(&FakeCuda::h100(2)), &[]);
        return;
    }
    let c = cu();
    c.init();
    c.use_device(1);
    let other = c.alloc(4096);
    c.use_device(0);
    let a = c.alloc(4096);
    let data: Vec<u32> = (0..1024).collect();
    c.put(a, &data);
    assert_eq!(c.get::<u32>(a, 1024), data);
    c.put(a + 8, &[7u32, 8]);
    assert_eq!(c.get::<u32>(a, 4), [0, 1, 7, 8]);
    unsafe {
        let buf = [0u8; 8];
        let mut out = [0u8; 8];
        let h2d = |dst, n| (c.cuMemcpyHtoD_v2)(dst, buf.as_ptr().cast(), n);
        assert_eq!(h2d(a + 4089, 8), 1, "past the end");
        assert_eq!(h2d(a + 4088, 8), 0, "exact end");
        assert_eq!(h2d(a - 8, 8), 1, "before the start");
        assert_eq!(h2d(other, 8), 1, "another device's memory");
        assert_eq!(h2d(0x10, 8), 1);
        assert_eq!(h2d(u64::MAX - 2, 8), 1);
        assert_eq!(h2d(0x10, 0), 0, "empty copy");
        assert_eq!((c.cuMemcpyHtoD_v2)(a, null(), 8), 1);
        assert_eq!((c.cuMemcpyDtoH_v2)(out.as_mut_ptr().cast(), a + 4090, 8), 1);
        assert_eq!((c.cuMemcpyDtoH_v2)(out.as_mut_ptr().cast(), other, 8), 1);

        assert_eq!((c.cuMemsetD32_v2)(a + 4, 0xdead_beef, 3), 0);
        assert_eq!(
            c.get::<u32>(a, 5),
            [0, 0xdead_beef, 0xdead_beef, 0xdead_beef, 4]
        );
        assert_eq!((c.cuMemsetD32_v2)(a, 1, 1025), 1, "past the end");
        assert_eq!((c.cuMemsetD32_v2)(a + 2, 1, 1), 1, "misaligned");
        assert_eq!((c.cuMemsetD32_v2)(other, 1, 1), 1);

        // Pinned memory round trip.
        let mut h: *mut c_void = null_mut();
        assert_eq!((c.cuMemHostAlloc)(&mut h, 4096, 0), 0);
        assert!(!h.is_null());
        h.cast::<u32>().write(42);
        assert_eq!((c.cuMemcpyHtoD_v2)(a, h, 4), 0);
        assert_eq!(c.get::<u32>(a, 1), [42]);
        assert_eq!((c.cuMemFreeHost)(h.cast::<u8>().add(8).cast()), 1);
        assert_eq!((c.cuMemFreeHost)(h), 0);
        assert_eq!((c.cuMemFreeHost)(h), 1);
    }
}

#[test]
fn copy_rates_are_floors() {
    let name = "copy_rates_are_floors";
    if !is_child(name) {
        let mut c = FakeCuda::h100(1);
        c.device(0).pageable_gbps = Some(0.01);
        c.device(0).h2d_gbps = Some(0.02);
        run_ok(name, Cfg::Json(&c), &[]);
        return;
    }
    let c = cu();
    c.init();
    c.use_device(0);
    let n = MIB;
    let a = c.alloc(n);
    let pageable = vec![1u8; n];
    let time = |src: *const c_void| {
        let t = Instant::now();
        assert_eq!(unsafe { (c.cuMemcpyHtoD_v2)(a, src, n) }, 0);
        t.elapsed()
    };
    let slow = time(pageable.as_ptr().cast());
    assert!(slow >= Duration::from_micros(104_857), "{slow:?}");
    let mut h = null_mut();
    assert_eq!(unsafe { (c.cuMemHostAlloc)(&mut h, n, 0) }, 0);
    let pinned = time(h);
    assert!(pinned >= Duration::from_micros(52_428), "{pinned:?}");
    assert!(pinned < slow, "{pinned:?} vs {slow:?}");
    // No d2h_gbps: pinned reads are not held back.
    let t = Instant::now();
    assert_eq!(unsafe { (c.cuMemcpyDtoH_v2)(h, a, n) }, 0);
    assert!(t.elapsed() < Duration::from_millis(50), "{:?}", t.elapsed());
}

// ---- peers ----

#[test]
fn peer_access_copies_and_faults() {
    let name = "peer_access_copies_and_faults";
    if !is_child(name) {
        let mut c = FakeCuda::h100(3);
        c.peers = vec![
            PeerPair {
                from: 0,
                to: 2,
                can_access: false,
                ..PeerPair::default()
            },
            PeerPair {
                from: 2,
                to: 0,
                enable_error: Some(711),
                ..PeerPair::default()
            },
            PeerPair {
                from: 1,
                to: 0,
                corrupt: true,
                gbps: Some(0.01),
                ..PeerPair::default()
            },
        ];
        run_ok(name, Cfg::Json(&c), &[]);
        return;
    }
    let c = cu();
    c.init();
    let can = |a, b| {
        let mut v = -1;
        assert_eq!(unsafe { (c.cuDeviceCanAccessPeer)(&mut v, a, b) }, 0);
        v
    };
    assert_eq!(
        (can(0, 1), can(1, 0), can(0, 2), can(2, 0), can(1, 1)),
        (1, 1, 0, 1, 0)
    );
    let mut v = 0;
    assert_eq!(unsafe { (c.cuDeviceCanAccessPeer)(&mut v, 0, 7) }, 101);
    let ctx: Vec<Ctx> = (0..3).map(|d| c.use_device(d)).collect();
    let bufs: Vec<u64> = (0..3)
        .map(|d| {
            c.use_device(d);
            c.alloc(MIB)
        })
        .collect();
    unsafe {
        // From 0: enabling twice answers 704; refused access answers 217.
        assert_eq!((c.cuCtxSetCurrent)(ctx[0]), 0);
        assert_eq!((c.cuCtxEnablePeerAccess)(ctx[1], 0), 0);
        assert_eq!((c.cuCtxEnablePeerAccess)(ctx[1], 0), 704);
        assert_eq!((c.cuCtxEnablePeerAccess)(ctx[2], 0), 217);
        assert_eq!((c.cuCtxEnablePeerAccess)(ctx[1], 1), 1, "flags must be 0");
        assert_eq!((c.cuCtxSetCurrent)(ctx[2]), 0);
        assert_eq!((c.cuCtxEnablePeerAccess)(ctx[0], 0), 711);
        // A correct copy 0 → 1 on a stream.
        assert_eq!((c.cuCtxSetCurrent)(ctx[0]), 0);
        let data: Vec<u32> = (0..(MIB / 4) as u32).collect();
        c.put(bufs[0], &data);
        let mut s = null_mut();
        assert_eq!((c.cuStreamCreate)(&mut s, 0), 0);
        assert_eq!(
            (c.cuMemcpyPeerAsync)(bufs[1], ctx[1], bufs[0], ctx[0], MIB, s),
            0
        );
        assert_eq!((c.cuStreamSynchronize)(s), 0);
        assert_eq!((c.cuCtxSetCurrent)(ctx[1]), 0);
        assert_eq!(c.get::<u32>(bufs[1], MIB / 4), data);
        // Out of the allocation, or the wrong context for it: 1.
        assert_eq!(
            (c.cuMemcpyPeerAsync)(bufs[1], ctx[1], bufs[0], ctx[0], MIB + 4, s),
            1
        );
        assert_eq!(
            (c.cuMemcpyPeerAsync)(bufs[1], ctx[0], bufs[0], ctx[0], 4, s),
            1
        );
        // 1 → 0 flips 8 words and holds to 0.01 GB/s: 1 MiB takes 105 ms.
        let t = Instant::now();
        c.put(bufs[1], &data);
        assert_eq!(
            (c.cuMemcpyPeerAsync)(bufs[0], ctx[0], bufs[1], ctx[1], MIB, s),
            0
        );
        assert!(
            t.elapsed() >= Duration::from_micros(104_857),
            "{:?}",
            t.elapsed()
        );
        assert_eq!((c.cuCtxSetCurrent)(ctx[0]), 0);
        let got = c.get::<u32>(bufs[0], MIB / 4);
        assert_eq!(got.iter().zip(&data).filter(|(a, b)| a != b).count(), 8);
        assert_eq!((c.cuStreamDestroy_v2)(s), 0);
        assert_eq!((c.cuStreamSynchronize)(s), 400, "a destroyed stream");
    }
}

#[test]
fn a_peer_copy_hangs_when_told() {
    let name = "a_peer_copy_hangs_when_told";
    if is_child(name) {
        let c = cu();
        c.init();
        let a = c.use_device(0);
        let pa = c.alloc(4096);
        let b = c.use_device(1);
        let pb = c.alloc(4096);
        println!("{MARK}");
        unsafe { (c.cuMemcpyPeerAsync)(pb, b, pa, a, 4096, null_mut()) };
        panic!("returned");
    }
    let mut c = FakeCuda::h100(2);
    c.peers = vec![PeerPair {
        from: 0,
        to: 1,
        hang: true,
        ..PeerPair::default()
    }];
    assert_hangs(spawn(name, Cfg::Json(&c), &[]), "peer copy 0 → 1");
}

// ---- modules and kernels ----

#[test]
fn module_loading() {
    let name = "module_loading";
    if !is_child(name) {
        let mut c = FakeCuda::h100(1);
        c.devices.push(Device::rtx4090());
        c.devices.push(Device {
            module_error: Some(218),
            ..Device::h100(2)
        });
        run_ok(name, Cfg::Json(&c), &[]);
        c.max_ptx_version = Some("5.0".into());
        run_ok(name, Cfg::Json(&c), &[]);
        return;
    }
    let cfg = child_config();
    let c = cu();
    c.init();
    let (rc, _, _) = c.load_module(&ptx("6.0", "sm_50"));
    assert_eq!(rc, 201, "no current context");
    c.use_device(0);
    let (rc, m, log) = c.load_module(&ptx("6.0", "sm_50"));
    if cfg.max_ptx_version.is_some() {
        assert_eq!(rc, 222);
        assert!(log.contains("Unsupported .version 6.0"), "{log}");
        let (rc, _, _) = c.load_module(&ptx("5.0", "sm_50"));
        assert_eq!(rc, 0, "at the limit");
        return;
    }
    assert_eq!((rc, log.as_str()), (0, ""));
    assert!(!m.is_null());
    for k in ["gd_matmul_f32", "gd_fill_u32", "gd_verify_u32"] {
        assert!(!c.function(m, k).is_null(), "{k}");
    }
    unsafe {
        let mut f = null_mut();
        assert_eq!((c.cuModuleGetFunction)(&mut f, m, c"gd_nope".as_ptr()), 500);
        assert_eq!(
            (c.cuModuleGetFunction)(&mut f, 0x99 as *mut c_void, c"gd_fill_u32".as_ptr()),
            400
        );
        assert_eq!((c.cuModuleUnload)(m), 0);
        assert_eq!(
            (c.cuModuleGetFunction)(&mut f, m, c"gd_fill_u32".as_ptr()),
            400
        );
        assert_eq!((c.cuModuleUnload)(m), 400);
    }
    assert_eq!(c.load_module(&ptx("8.5", "sm_90a")).0, 0, "H100 runs sm_90");
    assert_eq!(c.load_module("no directives").0, 218);
    c.use_device(1);
    let (rc, _, log) = c.load_module(&ptx("8.5", "sm_90"));
    assert_eq!(rc, 209, "sm_90 on an 8.9 device");
    assert!(log.contains("sm_90"), "{log}");
    assert_eq!(c.load_module(&ptx("8.0", "sm_89")).0, 0);
    c.use_device(2);
    let (rc, _, log) = c.load_module(&ptx("6.0", "sm_50"));
    assert_eq!((rc, log.as_str()), (218, "fake JIT: error 218"));
}

/// C = A·B with the kernel's per-element fma order, over the covered rows and columns.
fn reference_matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize, rows: usize, cols: usize) {
    for r in 0..rows {
        for col in 0..cols {
            let mut acc = 0f32;
            for k in 0..n {
                acc = a[r * n + k].mul_add(b[k * n + col], acc);
            }
            c[r * n + col] = acc;
        }
    }
}

#[test]
fn kernels_match_the_cpu_reference() {
    let name = "kernels_match_the_cpu_reference";
    if !is_child(name) {
        let mut c = FakeCuda::h100(2);
        c.device(1).matmul_wrong = true;
        c.device(1).bit_flips = 5;
        run_ok(name, Cfg::Json(&c), &[]);
        return;
    }
    let c = cu();
    c.init();
    for dev in [0, 1] {
        let faulty = dev == 1;
        c.use_device(dev);
        let (rc, m, _) = c.load_module(&ptx("6.0", "sm_50"));
        assert_eq!(rc, 0);
        let (mm, fill, verify) = (
            c.function(m, "gd_matmul_f32"),
            c.function(m, "gd_fill_u32"),
            c.function(m, "gd_verify_u32"),
        );

        // matmul 33×33: a grid that covers (3×3 tiles) and one that does not (1 col × 2 rows).
        let n = 33usize;
        let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.37 - 1.1).collect();
        let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.91 + 0.013).collect();
        let (da, db, dc) = (c.alloc(n * n * 4), c.alloc(n * n * 4), c.alloc(n * n * 4));
        c.put(da, &a);
        c.put(db, &b);
        for (grid, rows, cols) in [([3, 3, 1], 33, 33), ([1, 2, 1], 32, 16)] {
            let sentinel = vec![-7.5f32; n * n];
            c.put(dc, &sentinel);
            let args = [u64a(da), u64a(db), u64a(dc), u32a(n as u32)];
            assert_eq!(c.launch(mm, grid, [16, 16, 1], &args), 0);
            let mut want = sentinel.clone();
            reference_matmul(&a, &b, &mut want, n, rows, cols);
            if faulty {
                for (i, w) in want.iter_mut().enumerate() {
                    if i % 97 == 0 && i / n < rows && i % n < cols {
                        *w += 1.0;
                    }
                }
            }
            let got: Vec<f32> = c.get(dc, n * n);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "grid {grid:?} on device {dev}");
        }
        let args = [u64a(da), u64a(db), u64a(dc), u32a(n as u32)];
        assert_eq!(
            c.launch(mm, [3, 3, 1], [8, 8, 1], &args),
            1,
            "block must be 16×16"
        );
        assert_eq!(c.launch(mm, [0, 3, 1], [16, 16, 1], &args), 1, "empty grid");
        assert_eq!(
            c.launch(mm, [3, 3, 1], [32, 64, 1], &args),
            1,
            "too many threads"
        );
        let small = c.alloc(64);
        let args = [u64a(da), u64a(db), u64a(small), u32a(n as u32)];
        assert_eq!(
            c.launch(mm, [3, 3, 1], [16, 16, 1], &args),
            700,
            "C too small"
        );

        // fill + verify, plain and inverted; bit flips on the faulty device.
        let words = 100_000u64;
        let p = c.alloc(words as usize * 4);
        let counter = c.alloc(8);
        for (seed, invert) in [(0x1234u32, 0u32), (0xfeed_beef, 1)] {
            let args = [u64a(p), u64a(words), u32a(seed), u32a(invert)];
            assert_eq!(c.launch(fill, [1024, 1, 1], [256, 1, 1], &args), 0);
            let got: Vec<u32> = c.get(p, words as usize);
            let mut bad = 0;
            for (i, w) in got.iter().enumerate() {
                // The fake repeats the kernel's pattern every 4096 words (PERIOD).
                let want = pattern(i as u64 % 4096, seed) ^ if invert != 0 { u32::MAX } else { 0 };
                if *w != want {
                    bad += 1;
                    let k = (bad - 1) as u64;
                    assert_eq!(i as u64, k * words / 5, "flip {k}");
                    assert_eq!(*w ^ want, 1 << (k % 32), "flip {k}");
                }
            }
            assert_eq!(bad, if faulty { 5 } else { 0 }, "device {dev}");
            c.put(counter, &[100u64]);
            let args = [
                u64a(p),
                u64a(words),
                u32a(seed),
                u32a(invert),
                u64a(counter),
            ];
            assert_eq!(c.launch(verify, [4, 1, 1], [128, 1, 1], &args), 0);
            assert_eq!(c.get::<u64>(counter, 1), [100 + bad as u64], "adds");
        }
        c.put(counter, &[0u64]);
        let args = [u64a(p), u64a(words), u32a(1), u32a(0), u64a(counter)];
        assert_eq!(c.launch(verify, [4, 1, 1], [128, 1, 1], &args), 0);
        assert!(c.get::<u64>(counter, 1)[0] > words - 100, "wrong seed");

        // Pointers outside this device's allocations.
        let args = [u64a(p), u64a(words + 1), u32a(1), u32a(0)];
        assert_eq!(
            c.launch(fill, [1, 1, 1], [1, 1, 1], &args),
            700,
            "past the end"
        );
        let args = [u64a(p + 2), u64a(4), u32a(1), u32a(0)];
        assert_eq!(
            c.launch(fill, [1, 1, 1], [1, 1, 1], &args),
            700,
            "misaligned"
        );
        let args = [u64a(p), u64a(4), u32a(1), u32a(0), u64a(0x40)];
        assert_eq!(c.launch(verify, [1, 1, 1], [1, 1, 1], &args), 700);
        unsafe {
            let mut ptrs = [null_mut::<c_void>(); 4];
            let rc = (c.cuLaunchKernel)(
                fill,
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                null_mut(),
                ptrs.as_mut_ptr(),
                null_mut(),
            );
            assert_eq!(rc, 1, "null argument pointers");
            let rc = (c.cuLaunchKernel)(
                0x77 as *mut c_void,
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                null_mut(),
                ptrs.as_mut_ptr(),
                null_mut(),
            );
            assert_eq!(rc, 400);
        }
        assert_eq!(unsafe { (c.cuCtxSynchronize)() }, 0);
    }
    // A function of device 0's module launched in device 1's context.
    c.use_device(0);
    let (_, m0, _) = c.load_module(&ptx("6.0", "sm_50"));
    let f0 = c.function(m0, "gd_fill_u32");
    c.use_device(1);
    let p = c.alloc(16);
    let args = [u64a(p), u64a(4), u32a(1), u32a(0)];
    assert_eq!(c.launch(f0, [1, 1, 1], [1, 1, 1], &args), 400);
}

// ---- hangs and crashes ----

#[test]
fn hang_faults_hang_and_are_bounded() {
    let name = "hang_faults_hang_and_are_bounded";
    if is_child(name) {
        let cfg = child_config();
        let c = cu();
        if cfg.hang_in.as_deref() == Some("cuInit") {
            println!("{MARK}");
            unsafe { (c.cuInit)(0) };
        } else {
            // Device 0 is fine; device 1 hangs in cuCtxSynchronize.
            c.init();
            c.use_device(0);
            assert_eq!(unsafe { (c.cuCtxSynchronize)() }, 0);
            c.use_device(1);
            println!("{MARK}");
            unsafe { (c.cuCtxSynchronize)() };
        }
        panic!("returned");
    }
    let mut c = FakeCuda::h100(2);
    c.hang_in = Some("cuInit".into());
    assert_hangs(spawn(name, Cfg::Json(&c), &[]), "global cuInit");
    let mut c = FakeCuda::h100(2);
    c.device(1).hang_in = Some("cuCtxSynchronize".into());
    assert_hangs(spawn(name, Cfg::Json(&c), &[]), "device 1 cuCtxSynchronize");
}

#[test]
fn crash_faults_are_segfaults() {
    let name = "crash_faults_are_segfaults";
    if is_child(name) {
        let cfg = child_config();
        let c = cu();
        c.init();
        if cfg.crash_in.is_some() {
            c.use_device(0);
            let mut p = 0;
            unsafe { (c.cuMemAlloc_v2)(&mut p, 64) };
        } else {
            // The dev argument picks the device: 0 answers, 1 crashes.
            assert_eq!(c.name(0), "NVIDIA H100 80GB HBM3");
            c.name(1);
        }
        panic!("returned");
    }
    let mut c = FakeCuda::h100(2);
    c.crash_in = Some("cuMemAlloc_v2".into());
    let mut per_dev = FakeCuda::h100(2);
    per_dev.device(1).crash_in = Some("cuDeviceGetName".into());
    for cfg in [c, per_dev] {
        let mut r = spawn(name, Cfg::Json(&cfg), &[]);
        let status = r.wait(Duration::from_secs(60)).expect("child hung");
        assert_eq!(
            status.signal(),
            Some(libc::SIGSEGV),
            "{status:?}:\n{}",
            r.output()
        );
    }
}

#[test]
fn libcuda_link_points_at_the_fake() {
    let name = "libcuda_link_points_at_the_fake";
    if !is_child(name) {
        run_ok(name, Cfg::Json(&FakeCuda::rtx4090()), &[]);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let c = load(&install_libcuda(dir.path()));
    c.init();
    assert_eq!(c.name(0), "NVIDIA GeForce RTX 4090");
}
