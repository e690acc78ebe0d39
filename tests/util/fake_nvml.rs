//! The fake libnvidia-ml (tests/fake_nvml/): where `cargo test` built it, and a typed,
//! serialisable config with presets. Point the fake at a config with
//! `.env(FAKE_NVML_ENV, cfg.write(dir))`.

use std::fs;
use std::path::{Path, PathBuf};

// The schema types live with the cdylib, so reader and writer share one definition.
#[path = "../fake_nvml/config.rs"]
mod config;
pub use config::*;

/// The variable naming the JSON config the fake reads at nvmlInit.
pub const FAKE_NVML_ENV: &str = "GPUDOCTOR_FAKE_NVML";

// NVML enum values the presets use.
pub const ARCH_AMPERE: u32 = 7;
pub const ARCH_ADA: u32 = 8;
pub const ARCH_HOPPER: u32 = 9;
pub const TOPOLOGY_SINGLE: u32 = 10;
pub const TOPOLOGY_NODE: u32 = 40;
pub const TOPOLOGY_SYSTEM: u32 = 50;
pub const THROTTLE_GPU_IDLE: u64 = 0x1;
pub const THROTTLE_SW_POWER_CAP: u64 = 0x4;
pub const THROTTLE_HW_SLOWDOWN: u64 = 0x8;
pub const THROTTLE_SW_THERMAL: u64 = 0x20;

const MIB: u64 = 1 << 20;

/// target/<profile>/examples/libfake_nvml.so next to the running test binary
/// (target/<profile>/deps/<test>-<hash>); `FAKE_NVML_LIB` overrides.
pub fn fake_nvml_lib() -> PathBuf {
    super::example_cdylib("fake_nvml", "FAKE_NVML_LIB")
}

/// `dir/libnvidia-ml.so.1` (and `.so`) linking to the fake, for loader-path lookups.
pub fn install_libnvidia_ml(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).expect("mkdir");
    let lib = fake_nvml_lib();
    for name in ["libnvidia-ml.so.1", "libnvidia-ml.so"] {
        let p = dir.join(name);
        let _ = fs::remove_file(&p);
        std::os::unix::fs::symlink(&lib, &p).expect("symlink");
    }
    dir.join("libnvidia-ml.so.1")
}

impl FakeNvml {
    /// Writes `dir/fake-nvml.json` and returns its path (the value for FAKE_NVML_ENV).
    pub fn write(&self, dir: &Path) -> PathBuf {
        fs::create_dir_all(dir).expect("mkdir");
        let p = dir.join("fake-nvml.json");
        fs::write(&p, serde_json::to_string_pretty(self).expect("json")).expect("write");
        p
    }

    pub fn gpu(&mut self, i: usize) -> &mut Gpu {
        &mut self.devices[i]
    }

    /// 8× H100 SXM5 80GB on NVSwitch (HGX): all NVLinks up, fabric registered, ECC on and
    /// clean, PCIe Gen5 x16; GPUs 0-3 and 4-7 share a NUMA node (NODE), across is SYSTEM.
    /// Bus ids and UUIDs match `FakeRoot::healthy(8)` (0000:18:00.0 upward).
    pub fn hgx_h100_8gpu() -> FakeNvml {
        let mut pairs = Vec::new();
        for a in 0..8u32 {
            for b in a + 1..8 {
                if a / 4 == b / 4 {
                    pairs.push(TopoPair {
                        a,
                        b,
                        level: Some(TOPOLOGY_NODE),
                        p2p: None,
                    });
                }
            }
        }
        FakeNvml {
            system: System::r580(),
            faults: Faults::default(),
            devices: (0..8).map(Gpu::h100).collect(),
            topology: Topology {
                default_level: Some(TOPOLOGY_SYSTEM),
                pairs,
            },
        }
    }

    /// 1× GeForce RTX 4090: no ECC, NVLink, MIG, fabric or serial (all NOT_SUPPORTED),
    /// persistence off.
    pub fn consumer_rtx4090() -> FakeNvml {
        FakeNvml {
            system: System::r580(),
            faults: Faults::default(),
            devices: vec![Gpu::rtx4090()],
            topology: Topology::default(),
        }
    }

    /// 1× A100-SXM4-40GB with MIG on and two 3g.20gb instances (GPU instances 1 and 2); one
    /// compute process runs in GPU instance 1.
    pub fn mig_a100() -> FakeNvml {
        FakeNvml {
            system: System::r580(),
            faults: Faults::default(),
            devices: vec![Gpu::a100_40gb_mig()],
            topology: Topology::default(),
        }
    }
}

impl System {
    /// Driver 580.95.05, CUDA 13.0.
    pub fn r580() -> System {
        System {
            driver_version: Some("580.95.05".into()),
            nvml_version: Some("13.580.95.05".into()),
            cuda_driver_version: Some(13000),
        }
    }
}

/// "GPU-8e1f6a2c-0000-0000-0000-00000000000i", as `FakeRoot::driver_gpu` writes it.
pub fn gpu_uuid(i: u32) -> String {
    format!("GPU-8e1f6a2c-0000-0000-0000-{i:012x}")
}

/// Memory with `used` and `reserved` taken out of `total`.
pub fn memory(total: u64, used: u64, reserved: u64) -> Memory {
    Memory {
        total,
        free: total - used - reserved,
        used,
        reserved,
    }
}

fn clean_ecc() -> Ecc {
    Ecc {
        current: true,
        pending: true,
        volatile: Some(EccCounts::default()),
        aggregate: Some(EccCounts::default()),
    }
}

impl Gpu {
    /// An idle "NVIDIA H100 80GB HBM3" at index `i` of an HGX board.
    pub fn h100(i: u32) -> Gpu {
        Gpu {
            name: Some("NVIDIA H100 80GB HBM3".into()),
            uuid: Some(gpu_uuid(i)),
            serial: Some(format!("165422300{i:04}")),
            pci: Some(Pci {
                bus_id: format!("00000000:{:02X}:00.0", 0x18 + i),
                device_id: 0x2330_10DE,
                subsystem_id: 0x16C1_10DE,
            }),
            minor_number: Some(i),
            architecture: Some(ARCH_HOPPER),
            compute_capability: Some([9, 0]),
            memory: Some(memory(81559 * MIB, 4 * MIB, 579 * MIB)),
            bar1: Some(Bar1 {
                total: 131072 * MIB,
                free: 131071 * MIB,
                used: MIB,
            }),
            pcie: Some(Pcie {
                gen: 5,
                max_gen: 5,
                width: 16,
                max_width: 16,
            }),
            temperature_c: Some(34),
            slowdown_temp_c: Some(89),
            shutdown_temp_c: Some(92),
            power_usage_mw: Some(70_000),
            power_limit_mw: Some(700_000),
            clocks: Some(Clocks {
                sm: 345,
                mem: 2619,
                max_sm: 1980,
                max_mem: 2619,
            }),
            throttle_reasons: Some(THROTTLE_GPU_IDLE),
            ecc: Some(clean_ecc()),
            // Hopper remaps rows; page retirement answers NOT_SUPPORTED.
            retired_pages: None,
            remapped_rows: Some(RemappedRows::default()),
            persistence_mode: Some(true),
            compute_mode: Some(0),
            mig: Some(Mig::default()),
            compute_processes: Some(Vec::new()),
            graphics_processes: Some(Vec::new()),
            nvlinks: Some(vec![true; 18]),
            nvlink_remotes: None,
            pcie_replay_counter: Some(0),
            nvlink_errors: Some(vec![[0; 4]; 18]),
            fabric: Some(Fabric {
                cluster_uuid: "7f3c9a10-5b2e-4d8f-9c61-0a4e2b7d5e31".into(),
                status: 0,
                clique_id: 1,
                state: FabricState::Completed,
                health_mask: 0,
                health_summary: 1,
            }),
            recovery_action: Some(0),
            lost: false,
            handle_error: None,
            not_supported: Vec::new(),
        }
    }

    /// An idle "NVIDIA GeForce RTX 4090" at 0000:01:00.0.
    pub fn rtx4090() -> Gpu {
        Gpu {
            name: Some("NVIDIA GeForce RTX 4090".into()),
            uuid: Some(gpu_uuid(0)),
            serial: None,
            pci: Some(Pci {
                bus_id: "00000000:01:00.0".into(),
                device_id: 0x2684_10DE,
                subsystem_id: 0x1675_10DE,
            }),
            minor_number: Some(0),
            architecture: Some(ARCH_ADA),
            compute_capability: Some([8, 9]),
            memory: Some(memory(24564 * MIB, 211 * MIB, 334 * MIB)),
            bar1: Some(Bar1 {
                total: 256 * MIB,
                free: 250 * MIB,
                used: 6 * MIB,
            }),
            pcie: Some(Pcie {
                gen: 4,
                max_gen: 4,
                width: 16,
                max_width: 16,
            }),
            temperature_c: Some(38),
            slowdown_temp_c: Some(87),
            shutdown_temp_c: Some(92),
            power_usage_mw: Some(25_000),
            power_limit_mw: Some(450_000),
            clocks: Some(Clocks {
                sm: 210,
                mem: 405,
                max_sm: 3105,
                max_mem: 10501,
            }),
            throttle_reasons: Some(THROTTLE_GPU_IDLE),
            compute_mode: Some(0),
            persistence_mode: Some(false),
            compute_processes: Some(Vec::new()),
            graphics_processes: Some(Vec::new()),
            ..Gpu::default()
        }
    }

    /// "NVIDIA A100-SXM4-40GB" with MIG on: two 3g.20gb instances.
    pub fn a100_40gb_mig() -> Gpu {
        let inst = |gi: u32| MigInstance {
            uuid: format!("MIG-5c1d9e2a-7b3f-5a1c-8d4e-{gi:012x}"),
            name: Some("NVIDIA A100-SXM4-40GB MIG 3g.20gb".into()),
            memory: Some(memory(19968 * MIB, 13 * MIB, 0)),
            gpu_instance_id: gi,
            compute_instance_id: 0,
        };
        Gpu {
            name: Some("NVIDIA A100-SXM4-40GB".into()),
            uuid: Some(gpu_uuid(0)),
            serial: Some("1323520012345".into()),
            pci: Some(Pci {
                bus_id: "00000000:07:00.0".into(),
                device_id: 0x20B0_10DE,
                subsystem_id: 0x134F_10DE,
            }),
            minor_number: Some(0),
            architecture: Some(ARCH_AMPERE),
            compute_capability: Some([8, 0]),
            memory: Some(memory(40960 * MIB, 26 * MIB, 512 * MIB)),
            bar1: Some(Bar1 {
                total: 65536 * MIB,
                free: 65535 * MIB,
                used: MIB,
            }),
            pcie: Some(Pcie {
                gen: 4,
                max_gen: 4,
                width: 16,
                max_width: 16,
            }),
            temperature_c: Some(31),
            slowdown_temp_c: Some(92),
            shutdown_temp_c: Some(95),
            power_usage_mw: Some(55_000),
            power_limit_mw: Some(400_000),
            clocks: Some(Clocks {
                sm: 1410,
                mem: 1215,
                max_sm: 1410,
                max_mem: 1215,
            }),
            throttle_reasons: Some(0),
            ecc: Some(clean_ecc()),
            retired_pages: None,
            remapped_rows: Some(RemappedRows::default()),
            persistence_mode: Some(true),
            compute_mode: Some(0),
            mig: Some(Mig {
                current: true,
                pending: true,
                max_devices: 7,
                instances: vec![inst(1), inst(2)],
            }),
            compute_processes: Some(vec![Process {
                pid: 4242,
                used_memory: Some(1024 * MIB),
                gpu_instance_id: Some(1),
                compute_instance_id: Some(0),
            }]),
            graphics_processes: Some(Vec::new()),
            recovery_action: Some(0),
            ..Gpu::default()
        }
    }
}
