//! CUDA driver-API results (CUresult) the smoke test can meet, with what they usually mean
//! on a real machine and the fix. Names, values and descriptions: `cuda.h` of the
//! nvidia-cuda-runtime-cu12 12.9.79 wheel; the runtime's `cudaGetErrorString` texts from that
//! wheel's libcudart.so.12 (12.9.79); PyTorch's messages from c10/cuda/CUDAFunctions.cpp (the
//! strings are in libc10_cuda.so of the torch 2.13.0 and 2.15.0 wheels); and the sources given
//! per row.

pub struct CuResultInfo {
    pub code: i32,
    pub name: &'static str,
    /// cuda.h's description (the driver's cuGetErrorString says much the same).
    pub message: &'static str,
    /// What it usually means when a health check meets it.
    pub cause: &'static str,
    pub fix: &'static str,
    pub source: &'static str,
}

const CUDA_H: &str = "cuda.h of the nvidia-cuda-runtime-cu12 12.9.79 wheel";
/// The peer-access rows: names from cuda.h, messages as the real driver's cuGetErrorString
/// words them (the strings in Debian's libcuda1 535).
const PEER_SOURCE: &str =
    "cuda.h of the nvidia-cuda-runtime-cu12 12.9.79 wheel; cuGetErrorString of Debian's libcuda1 535";

pub static CU_RESULTS: &[CuResultInfo] = &[
    CuResultInfo {
        code: 2,
        name: "CUDA_ERROR_OUT_OF_MEMORY",
        message: "unable to allocate enough memory",
        cause: "the GPU's memory is taken (another process, a leaked context, a MIG slice smaller than expected)",
        fix: "See what holds the memory with `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` and stop it, or use another GPU",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 3,
        name: "CUDA_ERROR_NOT_INITIALIZED",
        message: "the CUDA driver has not been initialized with cuInit() or that initialization has failed",
        cause: "the driver could not initialise (a broken install, or user space newer than the kernel module)",
        fix: "Compare `cat /proc/driver/nvidia/version` with the libcuda version and reinstall or reboot so they match",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 34,
        name: "CUDA_ERROR_STUB_LIBRARY",
        message: "the CUDA driver that the application has loaded is a stub library",
        cause: "the toolkit's link-time stub (lib64/stubs/libcuda.so) was loaded instead of the driver's libcuda.so.1",
        fix: "Remove the toolkit's stubs directory from LD_LIBRARY_PATH; stubs are for linking only",
        source: CUDA_H,
    },
    CuResultInfo {
        // Not a CUresult (cuda.h has no 35 or 36); the runtime's
        // cudaErrorInsufficientDriver (driver_types.h). Kept so a shim that returns it is still named.
        code: 35,
        name: "cudaErrorInsufficientDriver",
        message: "CUDA driver version is insufficient for CUDA runtime version",
        cause: "the driver is older than the CUDA version the caller was built for",
        fix: "Upgrade the NVIDIA driver, or use a build for an older CUDA",
        source: "driver_types.h and cudaGetErrorString of libcudart 12.9.79 (runtime API; libcuda itself never returns 35)",
    },
    CuResultInfo {
        code: 46,
        name: "CUDA_ERROR_DEVICE_UNAVAILABLE",
        message: "device unavailable",
        cause: "the GPU is in Exclusive_Process mode and another process holds it, or it is Prohibited",
        fix: "Find the holder with `nvidia-smi --query-compute-apps=pid,process_name --format=csv`, or set the default mode: `sudo nvidia-smi -i N -c DEFAULT`",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 100,
        name: "CUDA_ERROR_NO_DEVICE",
        message: "no CUDA-capable device is detected",
        cause: "CUDA sees no GPU: CUDA_VISIBLE_DEVICES hides them all, the container got no /dev/nvidia* nodes, or the driver found none",
        fix: "Check CUDA_VISIBLE_DEVICES and that /dev/nvidia0… exist in this environment (containers: run with --gpus all)",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 101,
        name: "CUDA_ERROR_INVALID_DEVICE",
        message: "invalid device ordinal",
        cause: "the device number is beyond what CUDA_VISIBLE_DEVICES leaves",
        fix: "Pick an ordinal below the visible device count",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 200,
        name: "CUDA_ERROR_INVALID_IMAGE",
        message: "device kernel image is invalid",
        cause: "the driver rejected the module image",
        fix: "Update the NVIDIA driver",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 209,
        name: "CUDA_ERROR_NO_BINARY_FOR_GPU",
        message: "no kernel image is available for execution on the device",
        cause: "the code targets a newer GPU architecture than this one, or the driver's JIT cannot build it for this GPU",
        fix: "Update the NVIDIA driver; software built for this GPU's architecture must contain its SASS or PTX",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 214,
        name: "CUDA_ERROR_ECC_UNCORRECTABLE",
        message: "uncorrectable ECC error encountered",
        cause: "the GPU's memory has an uncorrectable error",
        fix: "Drain the GPU, check `nvidia-smi -q -d ECC,ROW_REMAPPER`, reset it (`sudo nvidia-smi -r -i N`) and replace it if errors recur",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 217,
        name: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
        message: "peer access is not supported between these two devices",
        cause: "the platform does not route peer-to-peer traffic between these GPUs (no common PCIe switch or root port that forwards it, ACS, an IOMMU, or a VM without peer-to-peer)",
        fix: "Run `nvidia-smi topo -p2p r` to see which pairs support it; `export NCCL_P2P_DISABLE=1` makes NCCL stage through host memory",
        source: PEER_SOURCE,
    },
    CuResultInfo {
        code: 218,
        name: "CUDA_ERROR_INVALID_PTX",
        message: "a PTX JIT compilation failed",
        cause: "the driver's PTX compiler failed (a broken libnvidia-ptxjitcompiler, or a driver bug)",
        fix: "Reinstall the driver's user-space libraries (libnvidia-ptxjitcompiler must match libcuda)",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 221,
        name: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
        message: "PTX JIT compiler library not found",
        cause: "libnvidia-ptxjitcompiler.so.1 is missing (containers that mount only libcuda)",
        fix: "Make the driver's libnvidia-ptxjitcompiler.so.1 visible (NVIDIA Container Toolkit mounts it with the 'compute' capability)",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 222,
        name: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        message: "the provided PTX was compiled with an unsupported toolchain",
        cause: "the PTX is newer than this driver's JIT understands",
        fix: "Update the NVIDIA driver",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 223,
        name: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
        message: "PTX JIT compilation was disabled",
        cause: "CUDA_DISABLE_PTX_JIT=1 is set: the driver refuses to compile PTX, so code without SASS for this GPU cannot run (the GPU itself is fine)",
        fix: "Unset CUDA_DISABLE_PTX_JIT unless you are checking that a build carries SASS for this GPU: `unset CUDA_DISABLE_PTX_JIT`",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 700,
        name: "CUDA_ERROR_ILLEGAL_ADDRESS",
        message: "an illegal memory access was encountered",
        cause: "a kernel touched memory it does not own; for gpudoctor's own fixed kernels that points at the GPU or driver",
        fix: "Check `sudo dmesg | grep -i xid` for the Xid behind it; reset the GPU and retest",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 704,
        name: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
        message: "peer access is already enabled",
        cause: "cuCtxEnablePeerAccess was called twice for the same pair (harmless)",
        fix: "Nothing to fix: the access asked for is there",
        source: PEER_SOURCE,
    },
    CuResultInfo {
        code: 711,
        name: "CUDA_ERROR_TOO_MANY_PEERS",
        message: "peer mapping resources exhausted",
        cause: "the GPU has no hardware resources left for another peer mapping (most GPUs map at most 8 peers)",
        fix: "Use at most 8 GPUs per process with peer access, or `export NCCL_P2P_DISABLE=1`",
        source: PEER_SOURCE,
    },
    CuResultInfo {
        code: 719,
        name: "CUDA_ERROR_LAUNCH_FAILED",
        message: "unspecified launch failure",
        cause: "a kernel died on the GPU (an Xid error)",
        fix: "Check `sudo dmesg | grep -i xid`; reset the GPU (`sudo nvidia-smi -r -i N`) and retest",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 802,
        name: "CUDA_ERROR_SYSTEM_NOT_READY",
        message: "system not yet initialized",
        cause: "on NVSwitch systems (HGX/DGX) the Fabric Manager is not running, so CUDA refuses to start",
        fix: "Start the Fabric Manager at the driver's exact version: `sudo systemctl enable --now nvidia-fabricmanager`",
        source: "cuda.h of the nvidia-cuda-runtime-cu12 12.9.79 wheel; NVIDIA Fabric Manager user guide",
    },
    CuResultInfo {
        code: 803,
        name: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        message: "system has unsupported display driver / cuda driver combination",
        cause: "the libcuda loaded is from another driver than the kernel module (often a forward-compat libcuda outside its supported pairing)",
        fix: "Load the libcuda that belongs to the running driver (remove cuda-compat from LD_LIBRARY_PATH), or install matching packages",
        source: CUDA_H,
    },
    CuResultInfo {
        code: 804,
        name: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        message: "forward compatibility was attempted on non supported HW",
        cause: "a forward-compatibility libcuda (cuda-compat) was loaded on a GPU that does not support it (GeForce and most workstation GPUs)",
        fix: "Remove /usr/local/cuda/compat (or the cuda-compat package's directory) from LD_LIBRARY_PATH and the loader config, or upgrade the driver itself",
        source: "cuda.h of the nvidia-cuda-runtime-cu12 12.9.79 wheel; https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
    },
    CuResultInfo {
        code: 999,
        name: "CUDA_ERROR_UNKNOWN",
        message: "unknown error",
        cause: "most often nvidia_uvm is not loaded (no /dev/nvidia-uvm), or the GPU is in a bad state after an Xid",
        fix: "Load the UVM module and create its node: `sudo modprobe nvidia_uvm && sudo nvidia-modprobe -u -c=0`; if it is loaded, check `sudo dmesg | grep -i xid`",
        source: "cuda.h of the nvidia-cuda-runtime-cu12 12.9.79 wheel; PyTorch c10/cuda/CUDAFunctions.cpp (cudaErrorUnknown)",
    },
];

pub fn lookup(code: i32) -> Option<&'static CuResultInfo> {
    CU_RESULTS.iter().find(|r| r.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_named_like_cuda_h() {
        let mut seen = std::collections::HashSet::new();
        for r in CU_RESULTS {
            assert!(seen.insert(r.code), "duplicate {}", r.code);
            assert!(
                r.name.starts_with("CUDA_ERROR_") || r.code == 35,
                "{}",
                r.name
            );
        }
        assert_eq!(
            lookup(804).unwrap().name,
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
        );
        assert!(lookup(0).is_none());
    }
}
