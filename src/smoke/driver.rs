//! The CUDA driver API entry points the smoke test calls, resolved from one named libcuda.
//!
//! The ABI types (CUdevice, CUdeviceptr, CUuuid, the attribute and JIT-option enums) come
//! from cudarc's bindings (feature cuda-11040: nothing newer than an R470 driver has). The
//! entry points are resolved here with libloading instead of through cudarc's loader,
//! because that loader (0.19):
//! - always tries `libcuda.so` before `libcuda.so.1`, so a toolkit's stub or another
//!   driver's dev link wins over the library the CUDA runtime really loads, and it has no
//!   way to name a file (`--cuda-lib`);
//! - declares CUresult as a Rust enum: a newer driver returning a code that enum lacks
//!   (46, CUDA_ERROR_DEVICE_UNAVAILABLE, is not in the 11.4 list) is undefined behaviour;
//! - panics on a missing symbol.
//!
//! Here every call returns a plain `c_int`, a missing symbol is an error at load time, and
//! nothing newer than CUDA 11.4's API is called (timing uses the host clock, so no
//! cuEventElapsedTime_v2).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use crate::compat::cuda_errors;
use crate::facts::smoke::CudaError;
use cudarc::driver::sys::{
    CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction, CUjit_option,
    CUmodule, CUstream, CUuuid,
};
use libloading::os::unix::{Library, Symbol, RTLD_LOCAL, RTLD_NOW};

/// Why the library could not be used at all.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    /// library_not_found, library_unloadable or symbol_missing.
    pub code: String,
    pub message: String,
}

macro_rules! entry_points {
    ($( $field:ident : $sym:literal => fn($($arg:ty),*) ; )*) => {
        struct Fns {
            $( $field: unsafe extern "C" fn($($arg),*) -> c_int, )*
        }

        impl Fns {
            /// Resolves every entry point, or names the first one the library lacks.
            fn resolve(lib: &Library) -> Result<Fns, String> {
                Ok(Fns {
                    $( $field: {
                        let s: Symbol<unsafe extern "C" fn($($arg),*) -> c_int> =
                            // SAFETY: the symbol is typed as the CUDA driver API declares it.
                            unsafe { lib.get(concat!($sym, "\0").as_bytes()) }
                                .map_err(|_| $sym.to_string())?;
                        *s
                    }, )*
                })
            }
        }
    };
}

entry_points! {
    init: "cuInit" => fn(c_uint);
    driver_get_version: "cuDriverGetVersion" => fn(*mut c_int);
    device_get_count: "cuDeviceGetCount" => fn(*mut c_int);
    device_get: "cuDeviceGet" => fn(*mut CUdevice, c_int);
    device_get_name: "cuDeviceGetName" => fn(*mut c_char, c_int, CUdevice);
    device_get_attribute: "cuDeviceGetAttribute" => fn(*mut c_int, CUdevice_attribute, CUdevice);
    device_total_mem: "cuDeviceTotalMem_v2" => fn(*mut usize, CUdevice);
    device_get_uuid: "cuDeviceGetUuid" => fn(*mut CUuuid, CUdevice);
    device_get_pci_bus_id: "cuDeviceGetPCIBusId" => fn(*mut c_char, c_int, CUdevice);
    primary_ctx_retain: "cuDevicePrimaryCtxRetain" => fn(*mut CUcontext, CUdevice);
    ctx_set_current: "cuCtxSetCurrent" => fn(CUcontext);
    ctx_synchronize: "cuCtxSynchronize" => fn();
    module_load_data_ex: "cuModuleLoadDataEx" => fn(*mut CUmodule, *const c_void, c_uint, *mut CUjit_option, *mut *mut c_void);
    module_get_function: "cuModuleGetFunction" => fn(*mut CUfunction, CUmodule, *const c_char);
    mem_get_info: "cuMemGetInfo_v2" => fn(*mut usize, *mut usize);
    mem_alloc: "cuMemAlloc_v2" => fn(*mut CUdeviceptr, usize);
    mem_free: "cuMemFree_v2" => fn(CUdeviceptr);
    mem_host_alloc: "cuMemHostAlloc" => fn(*mut *mut c_void, usize, c_uint);
    mem_free_host: "cuMemFreeHost" => fn(*mut c_void);
    memcpy_htod: "cuMemcpyHtoD_v2" => fn(CUdeviceptr, *const c_void, usize);
    memcpy_dtoh: "cuMemcpyDtoH_v2" => fn(*mut c_void, CUdeviceptr, usize);
    memcpy_dtod: "cuMemcpyDtoD_v2" => fn(CUdeviceptr, CUdeviceptr, usize);
    event_create: "cuEventCreate" => fn(*mut CUevent, c_uint);
    event_record: "cuEventRecord" => fn(CUevent, CUstream);
    event_synchronize: "cuEventSynchronize" => fn(CUevent);
    event_elapsed_time: "cuEventElapsedTime" => fn(*mut f32, CUevent, CUevent);
    event_destroy: "cuEventDestroy_v2" => fn(CUevent);
    memset_d32: "cuMemsetD32_v2" => fn(CUdeviceptr, c_uint, usize);
    launch_kernel: "cuLaunchKernel" => fn(CUfunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CUstream, *mut *mut c_void, *mut *mut c_void);
    device_can_access_peer: "cuDeviceCanAccessPeer" => fn(*mut c_int, CUdevice, CUdevice);
    ctx_enable_peer_access: "cuCtxEnablePeerAccess" => fn(CUcontext, c_uint);
    stream_create: "cuStreamCreate" => fn(*mut CUstream, c_uint);
    stream_synchronize: "cuStreamSynchronize" => fn(CUstream);
    stream_destroy: "cuStreamDestroy_v2" => fn(CUstream);
    memcpy_peer_async: "cuMemcpyPeerAsync" => fn(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, usize, CUstream);
    get_error_name: "cuGetErrorName" => fn(c_int, *mut *const c_char);
    get_error_string: "cuGetErrorString" => fn(c_int, *mut *const c_char);
}

/// One loaded libcuda. The library stays loaded for the life of the value.
pub struct Driver {
    fns: Fns,
    /// The file the dynamic loader really mapped (dladdr of cuInit).
    pub path: String,
    _lib: Library,
}

// SAFETY: the driver API is thread-safe; the struct holds only function pointers and the
// library handle.
unsafe impl Sync for Driver {}
// SAFETY: as for Sync: nothing in it belongs to one thread.
unsafe impl Send for Driver {}

/// Opens `lib` (a path, or a soname for the loader to search) with every symbol bound now;
/// the error says whether it was not found or found and unusable (libcuda, libnccl).
pub(crate) fn open_library(lib: &str) -> Result<Library, LoadError> {
    // SAFETY: loading a shared library runs its initialisers; that is the point here,
    // and it happens in the worker process, never in gpudoctor itself.
    unsafe { Library::open(Some(lib), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| {
        // A path: whether the file is there. A soname: glibc says "<name>: cannot open
        // shared object file" only when the search found nothing usable; a corrupt
        // copy, or a missing dependency (named in the message), is unloadable.
        let exists = if lib.contains('/') {
            std::path::Path::new(lib).exists()
        } else {
            !e.to_string()
                .contains(&format!("{lib}: cannot open shared object file"))
        };
        LoadError {
            code: if exists {
                "library_unloadable"
            } else {
                "library_not_found"
            }
            .into(),
            message: format!("dlopen({lib}): {e}"),
        }
    })
}

impl Driver {
    /// Loads `lib` (a path, or a soname for the loader to search) with every symbol bound now.
    pub fn load(lib: &str) -> Result<Driver, LoadError> {
        let library = open_library(lib)?;
        let fns = Fns::resolve(&library).map_err(|sym| LoadError {
            code: "symbol_missing".into(),
            message: format!("{lib} has no {sym}: it is not a CUDA driver library, or one older than CUDA 11.4 (R470)"),
        })?;
        let path = loaded_path(fns.init as *const c_void).unwrap_or_else(|| lib.to_string());
        Ok(Driver {
            fns,
            path,
            _lib: library,
        })
    }

    /// The CudaError for a non-zero result of `call`.
    pub fn error(&self, call: &str, code: c_int) -> CudaError {
        let ask = |f: unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int| {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: the driver writes a pointer to a static string, or fails.
            let rc = unsafe { f(code, &mut p) };
            (rc == 0 && !p.is_null())
                // SAFETY: a non-null answer is a NUL-terminated static string.
                .then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        let known = cuda_errors::lookup(code);
        CudaError {
            call: call.to_string(),
            code,
            name: ask(self.fns.get_error_name)
                .or_else(|| known.map(|k| k.name.to_string()))
                .unwrap_or_else(|| format!("CUresult {code}")),
            message: ask(self.fns.get_error_string)
                .or_else(|| known.map(|k| k.message.to_string()))
                .unwrap_or_else(|| "no description from the driver".into()),
        }
    }

    fn check(&self, call: &str, rc: c_int) -> Result<(), CudaError> {
        if rc == 0 {
            Ok(())
        } else {
            Err(self.error(call, rc))
        }
    }

    pub fn init(&self) -> Result<(), CudaError> {
        // SAFETY: plain driver call.
        self.check("cuInit", unsafe { (self.fns.init)(0) })
    }

    pub fn driver_version(&self) -> Result<i32, CudaError> {
        let mut v = 0;
        // SAFETY: v is a valid out-pointer.
        self.check("cuDriverGetVersion", unsafe {
            (self.fns.driver_get_version)(&mut v)
        })?;
        Ok(v)
    }

    pub fn device_count(&self) -> Result<i32, CudaError> {
        let mut n = 0;
        // SAFETY: n is a valid out-pointer.
        self.check("cuDeviceGetCount", unsafe {
            (self.fns.device_get_count)(&mut n)
        })?;
        Ok(n)
    }

    pub fn device(&self, ordinal: i32) -> Result<CUdevice, CudaError> {
        let mut d: CUdevice = 0;
        // SAFETY: d is a valid out-pointer.
        self.check("cuDeviceGet", unsafe {
            (self.fns.device_get)(&mut d, ordinal)
        })?;
        Ok(d)
    }

    pub fn device_name(&self, dev: CUdevice) -> Result<String, CudaError> {
        let mut buf = [0 as c_char; 256];
        // SAFETY: the buffer and its length match.
        self.check("cuDeviceGetName", unsafe {
            (self.fns.device_get_name)(buf.as_mut_ptr(), buf.len() as c_int - 1, dev)
        })?;
        Ok(c_buf(&buf))
    }

    pub fn attribute(&self, dev: CUdevice, attr: CUdevice_attribute) -> Result<i32, CudaError> {
        let mut v = 0;
        // SAFETY: v is a valid out-pointer; attr is a value of the driver's enum.
        self.check("cuDeviceGetAttribute", unsafe {
            (self.fns.device_get_attribute)(&mut v, attr, dev)
        })?;
        Ok(v)
    }

    pub fn total_mem(&self, dev: CUdevice) -> Result<u64, CudaError> {
        let mut v = 0usize;
        // SAFETY: v is a valid out-pointer.
        self.check("cuDeviceTotalMem", unsafe {
            (self.fns.device_total_mem)(&mut v, dev)
        })?;
        Ok(v as u64)
    }

    /// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and nvidia-smi print it.
    pub fn uuid(&self, dev: CUdevice) -> Result<String, CudaError> {
        let mut u = CUuuid { bytes: [0; 16] };
        // SAFETY: u is a valid out-pointer.
        self.check("cuDeviceGetUuid", unsafe {
            (self.fns.device_get_uuid)(&mut u, dev)
        })?;
        let b: Vec<u8> = u.bytes.iter().map(|&c| c as u8).collect();
        let hex =
            |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
        Ok(format!(
            "GPU-{}-{}-{}-{}-{}",
            hex(0..4),
            hex(4..6),
            hex(6..8),
            hex(8..10),
            hex(10..16)
        ))
    }

    pub fn pci_bus_id(&self, dev: CUdevice) -> Result<String, CudaError> {
        let mut buf = [0 as c_char; 64];
        // SAFETY: the buffer and its length match.
        self.check("cuDeviceGetPCIBusId", unsafe {
            (self.fns.device_get_pci_bus_id)(buf.as_mut_ptr(), buf.len() as c_int - 1, dev)
        })?;
        Ok(c_buf(&buf))
    }

    /// Retains the device's primary context (the one the CUDA runtime uses) and makes it
    /// current on this thread.
    pub fn primary_context(&self, dev: CUdevice) -> Result<CUcontext, CudaError> {
        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: ctx is a valid out-pointer.
        self.check("cuDevicePrimaryCtxRetain", unsafe {
            (self.fns.primary_ctx_retain)(&mut ctx, dev)
        })?;
        // SAFETY: ctx came from the driver.
        self.check("cuCtxSetCurrent", unsafe {
            (self.fns.ctx_set_current)(ctx)
        })?;
        Ok(ctx)
    }

    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: plain driver call on the current context.
        self.check("cuCtxSynchronize", unsafe { (self.fns.ctx_synchronize)() })
    }

    /// Loads a NUL-terminated PTX image; on failure the JIT's log is returned with the error.
    pub fn load_module(&self, image: &CStr) -> Result<CUmodule, (CudaError, String)> {
        let mut log = vec![0u8; 16 * 1024];
        let mut options = [
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
        let mut module: CUmodule = std::ptr::null_mut();
        // SAFETY: image is NUL-terminated; options and values have the same length and
        // the log buffer outlives the call.
        let rc = unsafe {
            (self.fns.module_load_data_ex)(
                &mut module,
                image.as_ptr().cast(),
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if rc != 0 {
            let text = CStr::from_bytes_until_nul(&log)
                .map(|c| c.to_string_lossy().trim().to_string())
                .unwrap_or_default();
            return Err((self.error("cuModuleLoadDataEx", rc), text));
        }
        Ok(module)
    }

    /// # Safety
    /// `module` came from load_module and is still loaded.
    pub unsafe fn function(&self, module: CUmodule, name: &CStr) -> Result<CUfunction, CudaError> {
        let mut f: CUfunction = std::ptr::null_mut();
        // SAFETY: module came from load_module; name is NUL-terminated.
        self.check("cuModuleGetFunction", unsafe {
            (self.fns.module_get_function)(&mut f, module, name.as_ptr())
        })?;
        Ok(f)
    }

    /// (free, total) bytes on the current context's device.
    pub fn mem_info(&self) -> Result<(u64, u64), CudaError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        self.check("cuMemGetInfo", unsafe {
            (self.fns.mem_get_info)(&mut free, &mut total)
        })?;
        Ok((free as u64, total as u64))
    }

    pub fn alloc(&self, bytes: u64) -> Result<CUdeviceptr, CudaError> {
        let mut p: CUdeviceptr = 0;
        // SAFETY: p is a valid out-pointer.
        self.check("cuMemAlloc", unsafe {
            (self.fns.mem_alloc)(&mut p, bytes as usize)
        })?;
        Ok(p)
    }

    pub fn free(&self, p: CUdeviceptr) -> Result<(), CudaError> {
        // SAFETY: p came from alloc and is freed once.
        self.check("cuMemFree", unsafe { (self.fns.mem_free)(p) })
    }

    /// Page-locked host memory of `bytes` bytes.
    pub fn host_alloc(&self, bytes: usize) -> Result<*mut u8, CudaError> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: p is a valid out-pointer; flags 0 = plain pinned memory.
        self.check("cuMemHostAlloc", unsafe {
            (self.fns.mem_host_alloc)(&mut p, bytes, 0)
        })?;
        Ok(p.cast())
    }

    /// # Safety
    /// `p` came from host_alloc and is freed once.
    pub unsafe fn host_free(&self, p: *mut u8) -> Result<(), CudaError> {
        // SAFETY: the caller's contract (from host_alloc, freed once).
        self.check("cuMemFreeHost", unsafe {
            (self.fns.mem_free_host)(p.cast())
        })
    }

    /// # Safety
    /// `dst` is a device allocation of at least `bytes`; `src` is readable for `bytes`.
    pub unsafe fn htod(
        &self,
        dst: CUdeviceptr,
        src: *const u8,
        bytes: usize,
    ) -> Result<(), CudaError> {
        self.check(
            "cuMemcpyHtoD",
            // SAFETY: the caller's contract (both buffers hold `bytes`).
            unsafe { (self.fns.memcpy_htod)(dst, src.cast(), bytes) },
        )
    }

    /// # Safety
    /// `src` is a device allocation of at least `bytes`; `dst` is writable for `bytes`.
    pub unsafe fn dtoh(
        &self,
        dst: *mut u8,
        src: CUdeviceptr,
        bytes: usize,
    ) -> Result<(), CudaError> {
        self.check(
            "cuMemcpyDtoH",
            // SAFETY: the caller's contract (both buffers hold `bytes`).
            unsafe { (self.fns.memcpy_dtoh)(dst.cast(), src, bytes) },
        )
    }

    /// # Safety
    /// `dst` and `src` are device allocations of the current context, each of at least
    /// `bytes`, not overlapping.
    pub unsafe fn dtod(
        &self,
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
    ) -> Result<(), CudaError> {
        self.check(
            "cuMemcpyDtoD",
            // SAFETY: the caller's contract.
            unsafe { (self.fns.memcpy_dtod)(dst, src, bytes) },
        )
    }

    /// Seconds the GPU took for the work `f` queues on the default stream, as its own
    /// clock measures (two events around it, `cuEventElapsedTime`): host-side timers also
    /// count the launch and the wait.
    pub fn gpu_time(&self, f: impl FnOnce() -> Result<(), CudaError>) -> Result<f64, CudaError> {
        let (start, end) = (self.event()?, self.event());
        let end = match end {
            Ok(e) => e,
            Err(e) => {
                self.event_destroy(start);
                return Err(e);
            }
        };
        let timed = (|| {
            // SAFETY: the events came from cuEventCreate; the null stream is the
            // context's default stream.
            self.check("cuEventRecord", unsafe {
                (self.fns.event_record)(start, std::ptr::null_mut())
            })?;
            f()?;
            // SAFETY: as above.
            self.check("cuEventRecord", unsafe {
                (self.fns.event_record)(end, std::ptr::null_mut())
            })?;
            // SAFETY: end was recorded.
            self.check("cuEventSynchronize", unsafe {
                (self.fns.event_synchronize)(end)
            })?;
            let mut ms = 0f32;
            // SAFETY: ms is a valid out-pointer; both events were recorded.
            self.check("cuEventElapsedTime", unsafe {
                (self.fns.event_elapsed_time)(&mut ms, start, end)
            })?;
            Ok(f64::from(ms) / 1e3)
        })();
        self.event_destroy(start);
        self.event_destroy(end);
        timed
    }

    fn event(&self) -> Result<CUevent, CudaError> {
        let mut e: CUevent = std::ptr::null_mut();
        // SAFETY: e is a valid out-pointer; flags 0 = default (timing enabled).
        self.check("cuEventCreate", unsafe {
            (self.fns.event_create)(&mut e, 0)
        })?;
        Ok(e)
    }

    fn event_destroy(&self, e: CUevent) {
        // SAFETY: e came from cuEventCreate and is destroyed once.
        let _ = unsafe { (self.fns.event_destroy)(e) };
    }

    pub fn memset_d32(&self, dst: CUdeviceptr, value: u32, words: usize) -> Result<(), CudaError> {
        // SAFETY: callers pass their own allocations with at least `words` words.
        self.check("cuMemsetD32", unsafe {
            (self.fns.memset_d32)(dst, value, words)
        })
    }

    /// # Safety
    /// `params` point at values of exactly the kernel's parameter types, alive for the call.
    pub unsafe fn launch(
        &self,
        f: CUfunction,
        grid: (u32, u32),
        block: (u32, u32),
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        self.check(
            "cuLaunchKernel",
            // SAFETY: the caller's contract (params match the kernel's types); no stream, no
            // shared memory, no extra arguments.
            unsafe {
                (self.fns.launch_kernel)(
                    f,
                    grid.0,
                    grid.1,
                    1,
                    block.0,
                    block.1,
                    1,
                    0,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            },
        )
    }
}

/// CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: the access asked for is already there.
pub const PEER_ACCESS_ALREADY_ENABLED: c_int = 704;

/// The peer-to-peer calls of the smoke test's peer step.
impl Driver {
    /// Makes a context from primary_context current on this thread.
    pub fn set_current(&self, ctx: CUcontext) -> Result<(), CudaError> {
        // SAFETY: ctx came from the driver.
        self.check("cuCtxSetCurrent", unsafe {
            (self.fns.ctx_set_current)(ctx)
        })
    }

    /// cuDeviceCanAccessPeer: whether `dev` can address `peer`'s memory directly.
    pub fn can_access_peer(&self, dev: CUdevice, peer: CUdevice) -> Result<bool, CudaError> {
        let mut v = 0;
        // SAFETY: v is a valid out-pointer.
        self.check("cuDeviceCanAccessPeer", unsafe {
            (self.fns.device_can_access_peer)(&mut v, dev, peer)
        })?;
        Ok(v != 0)
    }

    /// cuCtxEnablePeerAccess from the current context to `peer`; an access already enabled
    /// is success.
    pub fn enable_peer_access(&self, peer: CUcontext) -> Result<(), CudaError> {
        // SAFETY: peer came from primary_context; flags must be 0.
        match unsafe { (self.fns.ctx_enable_peer_access)(peer, 0) } {
            PEER_ACCESS_ALREADY_ENABLED => Ok(()),
            rc => self.check("cuCtxEnablePeerAccess", rc),
        }
    }

    /// A stream on the current context.
    pub fn stream_create(&self) -> Result<CUstream, CudaError> {
        let mut s: CUstream = std::ptr::null_mut();
        // SAFETY: s is a valid out-pointer; flags 0 = default stream semantics.
        self.check("cuStreamCreate", unsafe {
            (self.fns.stream_create)(&mut s, 0)
        })?;
        Ok(s)
    }

    pub fn stream_synchronize(&self, s: CUstream) -> Result<(), CudaError> {
        // SAFETY: s came from stream_create.
        self.check("cuStreamSynchronize", unsafe {
            (self.fns.stream_synchronize)(s)
        })
    }

    pub fn stream_destroy(&self, s: CUstream) -> Result<(), CudaError> {
        // SAFETY: s came from stream_create and is destroyed once.
        self.check("cuStreamDestroy", unsafe { (self.fns.stream_destroy)(s) })
    }

    /// # Safety
    /// `dst` is an allocation of `dst_ctx` and `src` one of `src_ctx`, both of at least
    /// `bytes`; `stream` came from stream_create.
    pub unsafe fn memcpy_peer_async(
        &self,
        dst: CUdeviceptr,
        dst_ctx: CUcontext,
        src: CUdeviceptr,
        src_ctx: CUcontext,
        bytes: usize,
        stream: CUstream,
    ) -> Result<(), CudaError> {
        self.check(
            "cuMemcpyPeerAsync",
            // SAFETY: the caller's contract (allocations of their contexts, a live stream).
            unsafe { (self.fns.memcpy_peer_async)(dst, dst_ctx, src, src_ctx, bytes, stream) },
        )
    }
}

fn c_buf(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The file that holds `addr`, as the dynamic loader mapped it.
pub(crate) fn loaded_path(addr: *const c_void) -> Option<String> {
    // SAFETY: Dl_info is plain C data (pointers and integers); all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string owned by the loader.
    let name = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    Some(
        std::fs::canonicalize(&name)
            .map(|p| p.display().to_string())
            .unwrap_or(name),
    )
}
