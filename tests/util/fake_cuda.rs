//! The fake libcuda (tests/fake_cuda/): where `cargo test` built it, and a typed,
//! serialisable config with presets. Point the fake at a config with
//! `.env(FAKE_CUDA_ENV, cfg.write(dir))`.

use std::fs;
use std::path::{Path, PathBuf};

// The schema types live with the cdylib, so reader and writer share one definition.
#[path = "../fake_cuda/config.rs"]
mod config;
pub use config::*;

use super::fake_nvml::gpu_uuid;

/// The variable naming the JSON config the fake reads at cuInit.
pub const FAKE_CUDA_ENV: &str = "GPUDOCTOR_FAKE_CUDA";

const MIB: u64 = 1 << 20;

/// target/<profile>/examples/libfake_cuda.so next to the running test binary
/// (target/<profile>/deps/<test>-<hash>); `FAKE_CUDA_LIB` overrides.
pub fn fake_cuda_lib() -> PathBuf {
    super::example_cdylib("fake_cuda", "FAKE_CUDA_LIB")
}

/// `dir/libcuda.so.1` (and `.so`) linking to the fake, for loader-path lookups.
pub fn install_libcuda(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).expect("mkdir");
    let lib = fake_cuda_lib();
    for name in ["libcuda.so.1", "libcuda.so"] {
        let p = dir.join(name);
        let _ = fs::remove_file(&p);
        std::os::unix::fs::symlink(&lib, &p).expect("symlink");
    }
    dir.join("libcuda.so.1")
}

impl FakeCuda {
    /// Writes `dir/fake-cuda.json` and returns its path (the value for FAKE_CUDA_ENV).
    pub fn write(&self, dir: &Path) -> PathBuf {
        fs::create_dir_all(dir).expect("mkdir");
        let p = dir.join("fake-cuda.json");
        fs::write(&p, serde_json::to_string_pretty(self).expect("json")).expect("write");
        p
    }

    pub fn device(&mut self, i: usize) -> &mut Device {
        &mut self.devices[i]
    }

    /// `n` H100 80GB (cc 9.0, 132 SMs) with 256 MiB each, driver 12.4. UUIDs and bus ids
    /// are those of `FakeNvml::hgx_h100_8gpu()` and `FakeRoot::healthy(n)` (0000:18:00.0 up).
    pub fn h100(n_gpus: u32) -> FakeCuda {
        FakeCuda {
            devices: (0..n_gpus).map(Device::h100).collect(),
            ..FakeCuda::default()
        }
    }

    /// 1× GeForce RTX 4090 (cc 8.9, 128 SMs) with 256 MiB at 0000:01:00.0, driver 12.4.
    pub fn rtx4090() -> FakeCuda {
        FakeCuda {
            devices: vec![Device::rtx4090()],
            ..FakeCuda::default()
        }
    }
}

impl Device {
    /// An "NVIDIA H100 80GB HBM3" at index `i` of an HGX board, with 256 MiB.
    pub fn h100(i: u32) -> Device {
        Device {
            name: "NVIDIA H100 80GB HBM3".into(),
            uuid: gpu_uuid(i),
            pci_bus_id: format!("0000:{:02x}:00.0", 0x18 + i),
            compute_capability: [9, 0],
            sm_count: 132,
            total_memory: 256 * MIB,
            ..Device::default()
        }
    }

    /// An "NVIDIA GeForce RTX 4090" at 0000:01:00.0, with 256 MiB.
    pub fn rtx4090() -> Device {
        Device {
            name: "NVIDIA GeForce RTX 4090".into(),
            uuid: gpu_uuid(0),
            pci_bus_id: "0000:01:00.0".into(),
            compute_capability: [8, 9],
            sm_count: 128,
            total_memory: 256 * MIB,
            ..Device::default()
        }
    }
}
