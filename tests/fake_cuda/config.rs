//! The fake libcuda's configuration (the JSON named by `GPUDOCTOR_FAKE_CUDA`).
//!
//! Shared by the cdylib (which reads it) and the tests (tests/util/fake_cuda.rs writes it),
//! so the two cannot drift. Fields left out take the `Default` values below.

use serde::{Deserialize, Serialize};

const GIB: u64 = 1 << 30;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FakeCuda {
    /// cuDriverGetVersion: 1000 * major + 10 * minor (12040 = CUDA 12.4).
    pub driver_version: i32,
    /// cuInit returns this CUresult (after the config has been read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_error: Option<i32>,
    /// cuDeviceGetCount answers this instead of the visible devices (a broken driver or
    /// shim: negative, or more GPUs than any machine has).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_count: Option<i32>,
    /// "X.Y": modules whose `.version` is higher fail with 222 (UNSUPPORTED_PTX_VERSION).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ptx_version: Option<String>,
    /// This exported symbol sleeps forever (any device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hang_in: Option<String>,
    /// This exported symbol raises SIGSEGV (any device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_in: Option<String>,
    pub devices: Vec<Device>,
    /// Faults of ordered GPU pairs in the peer-to-peer calls; pairs not listed can reach
    /// each other and copy correctly at memcpy speed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<PeerPair>,
}

/// One ordered pair (config indices, `from` → `to`) of the peer-to-peer calls.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PeerPair {
    pub from: u32,
    pub to: u32,
    /// cuDeviceCanAccessPeer's answer (false: cuCtxEnablePeerAccess then answers 217).
    pub can_access: bool,
    /// cuCtxEnablePeerAccess returns this (711 TOO_MANY_PEERS, 217 PEER_ACCESS_UNSUPPORTED).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_error: Option<i32>,
    /// cuMemcpyPeerAsync returns this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_error: Option<i32>,
    /// cuMemcpyPeerAsync sleeps forever.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hang: bool,
    /// cuMemcpyPeerAsync flips bit k of word k * words / 8 of the destination, k < 8.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub corrupt: bool,
    /// GB/s (1e9 bytes) of cuMemcpyPeerAsync: a copy sleeps until bytes / rate has passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gbps: Option<f64>,
}

impl Default for PeerPair {
    fn default() -> PeerPair {
        PeerPair {
            from: 0,
            to: 1,
            can_access: true,
            enable_error: None,
            copy_error: None,
            hang: false,
            corrupt: false,
            gbps: None,
        }
    }
}

impl Default for FakeCuda {
    fn default() -> FakeCuda {
        FakeCuda {
            driver_version: 12040,
            init_error: None,
            device_count: None,
            max_ptx_version: None,
            hang_in: None,
            crash_in: None,
            devices: Vec::new(),
            peers: Vec::new(),
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Device {
    pub name: String,
    /// "GPU-" and 32 hex digits (dashes anywhere).
    pub uuid: String,
    /// "0000:18:00.0" (or NVML's "00000000:18:00.0"); cuDeviceGetPCIBusId returns it verbatim.
    pub pci_bus_id: String,
    /// [major, minor].
    pub compute_capability: [u32; 2],
    pub sm_count: i32,
    /// Bytes. Allocations are real, zeroed host memory: keep it small.
    pub total_memory: u64,
    /// Bytes taken by "other processes": cuMemGetInfo's free leaves them out.
    pub used_by_others: u64,
    /// cuDevicePrimaryCtxRetain returns this (46, 2, 802, 804, 214, 999, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctx_error: Option<i32>,
    /// cuModuleLoadDataEx returns this (209, 218, 222) and logs "fake JIT: error <code>".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module_error: Option<i32>,
    /// cuMemHostAlloc returns this (2 for a locked-memory limit) while this device's context is current.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_alloc_error: Option<i32>,
    /// cuMemAlloc_v2 returns 2 once this device's live allocations would exceed N bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oom_after_bytes: Option<u64>,
    /// gd_matmul_f32 adds 1.0 to every computed C[i] with i % 97 == 0.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub matmul_wrong: bool,
    /// gd_fill_u32 then flips bit k % 32 of word k * words / bit_flips, k < min(bit_flips, words).
    #[serde(skip_serializing_if = "is_zero")]
    pub bit_flips: u64,
    /// This symbol sleeps forever when called for this device (the dev argument, or the
    /// current context's device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hang_in: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_in: Option<String>,
    /// GB/s (1e9 bytes) floors for copies from/to cuMemHostAlloc memory: a copy sleeps
    /// until bytes / rate has passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h2d_gbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d2h_gbps: Option<f64>,
    /// The same for copies whose host side is not cuMemHostAlloc memory (both directions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pageable_gbps: Option<f64>,
    /// What a cuMemcpyDtoD reaches in GB/s, counting bytes read and written, as the device's
    /// events report it (the copy itself runs on the CPU): by default 87 % of an H100 SXM's
    /// 3.35 TB/s.
    #[serde(default = "healthy_device_copy")]
    pub device_copy_gbps: f64,
}

fn healthy_device_copy() -> f64 {
    2_900.0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for Device {
    /// An idle H100 (cc 9.0, 132 SMs) with 1 GiB.
    fn default() -> Device {
        Device {
            name: "NVIDIA H100 80GB HBM3".into(),
            uuid: "GPU-00000000-0000-0000-0000-000000000000".into(),
            pci_bus_id: "0000:18:00.0".into(),
            compute_capability: [9, 0],
            sm_count: 132,
            total_memory: GIB,
            used_by_others: 0,
            ctx_error: None,
            module_error: None,
            host_alloc_error: None,
            oom_after_bytes: None,
            matmul_wrong: false,
            bit_flips: 0,
            hang_in: None,
            crash_in: None,
            h2d_gbps: None,
            d2h_gbps: None,
            pageable_gbps: None,
            device_copy_gbps: healthy_device_copy(),
        }
    }
}
