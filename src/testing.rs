//! Hand-built snapshots for the rules' unit tests: a healthy two-GPU host (driver 550,
//! two H100s, CUDA 12.4 toolkit, torch 2.4.1+cu124, a clean smoke test) and small helpers
//! that break one fact at a time, plus assertions on a rule's Outcome.

#![allow(dead_code)]

use std::collections::BTreeMap;

use crate::compat::CudaVersion;
use crate::envvars::Category;
use crate::fact::{Fact, MissingReason};
use crate::facts::device_nodes::{Access, DeviceNode, DeviceNodes};
use crate::facts::environment::{EnvValue, Environment};
use crate::facts::identity::Identity;
use crate::facts::kernel_module::{DriverGpu, KernelModule, LoadedModule, NvrmVersion};
use crate::facts::libraries::{CacheInfo, Candidate, Libraries, Library, SearchPath, Via};
use crate::facts::nvml::{
    Clocks, Ecc, Fabric, Field, Gpu, Memory, Mig, NvmlProbe, NvmlResult, NvmlSystem, Pcie,
    RemappedRows, RetiredPages, Throttle,
};
use crate::facts::pci::{Pci, PciDevice, PciRole};
use crate::facts::platform::{Container, OsRelease, Platform, Wsl};
use crate::facts::pytorch::{Dist, PythonEnv, Requirement, Torch};
use crate::facts::smoke::CudaError;
use crate::facts::smoke::{
    DeviceInfo, Matmul, MemoryProbe, SmokeDevice, SmokeProbe, SmokeResult, SmokeRun, SmokeSettings,
    Step, Timing, Transfer,
};
use crate::facts::toolkits::{CudaHome, Found, NvccOnPath, Route, Toolkit, ToolkitKind, Toolkits};
use crate::fatbin::FatbinSummary;
use crate::findings::{Finding, Severity};
use crate::ldcache::CacheFormat;
use crate::rules::Outcome;
use crate::snapshot::{ProbeRun, ProbeStatus, Snapshot};

pub const DRIVER: &str = "550.54.15";
pub const GPU_NAME: &str = "NVIDIA H100 80GB HBM3";
pub const SITE: &str = "/home/alice/venv/lib/python3.11/site-packages";
pub const TOOLKIT_ROOT: &str = "/usr/local/cuda-12.4";
pub const LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu";
pub const GIB: u64 = 1 << 30;

/// This machine's libc, a real shared object for ELF tests (None where it is elsewhere).
pub fn system_libc() -> Option<&'static std::path::Path> {
    [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/aarch64-linux-gnu/libc.so.6",
        "/lib64/libc.so.6",
    ]
    .into_iter()
    .map(std::path::Path::new)
    .find(|p| p.exists())
}

pub fn uuid(i: u32) -> String {
    format!("GPU-{i}{i}{i}{i}{i}{i}{i}{i}-aaaa-bbbb-cccc-dddddddddddd")
}

pub fn bus_id(i: u32) -> String {
    format!("0000:{:02x}:00.0", i + 1)
}

/// A healthy host: every probe ran and found nothing wrong.
/// What `check --image` records about an image built for `arch` (amd64, arm64).
pub fn image_info(arch: &str, matches_host: bool) -> crate::image::ImageInfo {
    crate::image::ImageInfo {
        path: "/tmp/cuda-image.tar".into(),
        format: crate::image::ImageFormat::DockerArchive,
        reference: Some("example/cuda:12.8".into()),
        manifest_digest: None,
        config_digest: "sha256:0".into(),
        os: "linux".into(),
        architecture: arch.into(),
        variant: None,
        platforms: vec![],
        matches_host,
        env: vec![],
        user: None,
        working_dir: None,
        entrypoint: vec![],
        cmd: vec![],
        labels: Default::default(),
        layers: vec![],
        skipped: vec![],
        skipped_more: 0,
        unpacked_bytes: 0,
    }
}

pub fn healthy() -> Snapshot {
    let probes: BTreeMap<String, ProbeRun> = crate::probes::PROBE_NAMES
        .iter()
        .map(|n| {
            (
                n.to_string(),
                ProbeRun {
                    status: ProbeStatus::Ok,
                    elapsed_us: 10,
                    detail: None,
                },
            )
        })
        .collect();
    Snapshot {
        root: None,
        image: None,
        node: None,
        probes,
        identity: Some(identity()),
        platform: Some(platform()),
        kernel_module: Some(kernel_module()),
        kernel_log: Some(kernel_log("")),
        pci: Some(pci()),
        topology: None,
        device_nodes: Some(device_nodes()),
        container_host: Some(container_host()),
        environment: Some(Environment {
            variables: Vec::new(),
        }),
        nccl: Some(nccl_host()),
        toolkits: Some(toolkits()),
        libraries: Some(libraries()),
        linkage: Some(Vec::new()),
        python_sites: None,
        nvml: Some(NvmlProbe {
            library: "libnvidia-ml.so.1".into(),
            result: NvmlResult::Ok {
                system: nvml_system(),
            },
            counters_again: None,
            requested: false,
        }),
        python: Some(vec![python_env()]),
        python_live: None,
        smoke: Some(smoke()),
        preflight: None,
        counters_baseline: None,
        expect: None,
    }
}

/// /dev/kmsg holding these records (`prio,seq,usec,-;message` lines).
pub fn kernel_log(kmsg: &str) -> crate::facts::kernel_log::KernelLog {
    use crate::probes::kernel_log::{scan_kmsg, KMSG};
    crate::facts::kernel_log::KernelLog {
        scan: Fact::value(KMSG, scan_kmsg(kmsg, false)),
        passed_over: Vec::new(),
    }
}

/// /var/log/kern.log holding these lines (syslog format).
pub fn kernel_log_from_text(log: &str) -> crate::facts::kernel_log::KernelLog {
    crate::facts::kernel_log::KernelLog {
        scan: Fact::value(
            "/var/log/kern.log",
            crate::probes::kernel_log::scan_text_log(log, false),
        ),
        passed_over: Vec::new(),
    }
}

/// A host with eth0 and lo, no RDMA device and no GPUDirect RDMA module.
pub fn nccl_host() -> crate::facts::nccl::NcclHost {
    use crate::facts::nccl::{INFINIBAND_DIR, NET_DIR, SYS_MODULE_DIR};
    crate::facts::nccl::NcclHost {
        net_interfaces: Fact::value(NET_DIR, vec!["eth0".into(), "lo".into()]),
        ib_devices: Fact::value(INFINIBAND_DIR, Vec::new()),
        peermem_sysfs: Fact::value(SYS_MODULE_DIR, Vec::new()),
    }
}

/// A machine where every probe ran and saw no NVIDIA hardware, driver or Python.
pub fn no_gpu() -> Snapshot {
    let mut s = healthy();
    s.kernel_module = Some(KernelModule {
        version_file: Fact::missing(
            crate::facts::kernel_module::VERSION_FILE,
            MissingReason::NotFound,
            "no such file",
        ),
        modules: Fact::value(crate::facts::kernel_module::MODULES_FILE, Vec::new()),
        sys_version: Fact::missing(
            crate::facts::kernel_module::SYS_VERSION_FILE,
            MissingReason::NotFound,
            "no such file",
        ),
        gpus: Fact::missing(
            crate::facts::kernel_module::DRIVER_GPUS_DIR,
            MissingReason::NotFound,
            "no such directory",
        ),
    });
    s.pci = Some(Pci {
        devices: Fact::value(crate::facts::pci::PCI_DEVICES_DIR, Vec::new()),
    });
    s.device_nodes = Some(DeviceNodes {
        nodes: Vec::new(),
        listing_error: None,
    });
    s.nvml = Some(NvmlProbe {
        library: "libnvidia-ml.so.1".into(),
        result: NvmlResult::InitFailed {
            code: "library_not_found".into(),
            message: "libnvidia-ml.so.1: cannot open shared object file".into(),
        },
        counters_again: None,
        requested: false,
    });
    s.libraries.as_mut().unwrap().libraries.clear();
    s.toolkits = Some(Toolkits {
        installs: Vec::new(),
        rejected: Vec::new(),
        nvcc_on_path: None,
        cuda_home: CudaHome {
            path: None,
            via: "nothing: CUDA_HOME and CUDA_PATH unset, no nvcc on PATH, no /usr/local/cuda"
                .into(),
            toolkit: None,
        },
        usr_local_cuda: None,
        conda_packages: Vec::new(),
        extension_builders: Vec::new(),
    });
    s.python = Some(Vec::new());
    s.smoke = Some(SmokeProbe {
        library: crate::facts::smoke::DEFAULT_LIB.into(),
        settings: SmokeSettings::default(),
        result: SmokeResult::NotRun {
            reason: "no NVIDIA GPU seen".into(),
        },
        nccl: None,
    });
    s
}

/// The hardware-facing probes (pci, device_nodes, kernel_module) did not run.
pub fn without_hardware_probes(mut s: Snapshot) -> Snapshot {
    s.pci = None;
    s.device_nodes = None;
    s.kernel_module = None;
    s
}

fn identity() -> Identity {
    Identity {
        uid: 1000,
        gid: 1000,
        groups: vec![1000, 27],
        user_name: Some("alice".into()),
        source: "/proc/self/status".into(),
        is_process: true,
        in_user_namespace: Some(false),
    }
}

fn platform() -> Platform {
    Platform {
        os: Fact::value(
            "/etc/os-release",
            OsRelease {
                id: Some("ubuntu".into()),
                version_id: Some("22.04".into()),
                pretty_name: "Ubuntu 22.04.4 LTS".into(),
            },
        ),
        kernel_release: Fact::value("uname(2)", "6.5.0-35-generic".to_string()),
        arch: Fact::value("uname(2)", "x86_64".to_string()),
        container: Container {
            kind: None,
            hints: Vec::new(),
            given: None,
        },
        wsl: Wsl {
            detected: false,
            version: None,
            hints: Vec::new(),
        },
        shm_kib: Some(Fact::value("/proc/mounts", 32 * 1024 * 1024)),
        virtual_machine: Vec::new(),
    }
}

fn kernel_module() -> KernelModule {
    use crate::facts::kernel_module::{
        DRIVER_GPUS_DIR, MODULES_FILE, SYS_VERSION_FILE, VERSION_FILE,
    };
    let module = |name: &str| LoadedModule {
        name: name.into(),
        size: Some(1000),
        refcount: Some(1),
        used_by: Vec::new(),
        state: Some("Live".into()),
    };
    KernelModule {
        version_file: Fact::value(
            VERSION_FILE,
            NvrmVersion {
                raw: format!("NVRM version: NVIDIA UNIX x86_64 Kernel Module  {DRIVER}  Thu Feb 22 01:44:30 UTC 2024"),
                version: DRIVER.into(),
                flavor: "proprietary".into(),
                arch: Some("x86_64".into()),
                build_date: None,
                compiler: None,
                l4t: false,
            },
        ),
        modules: Fact::value(
            MODULES_FILE,
            vec![
                module("nvidia"),
                module("nvidia_uvm"),
                module("nvidia_modeset"),
                module("nvidia_drm"),
            ],
        ),
        sys_version: Fact::value(SYS_VERSION_FILE, DRIVER.to_string()),
        gpus: Fact::value(
            DRIVER_GPUS_DIR,
            (0..2)
                .map(|i| DriverGpu {
                    bus_id: bus_id(i),
                    model: Some(GPU_NAME.into()),
                    uuid: Some(uuid(i)),
                    video_bios: None,
                    device_minor: Some(i),
                    source: format!("{DRIVER_GPUS_DIR}/{}/information", bus_id(i)),
                })
                .collect(),
        ),
    }
}

pub fn pci_gpu(i: u32, driver: Option<&str>) -> PciDevice {
    PciDevice {
        address: bus_id(i),
        device_id: "10de:2330".into(),
        class: "030200".into(),
        role: PciRole::Gpu,
        driver: driver.map(str::to_string),
        subsystem: None,
        source: format!("{}/{}", crate::facts::pci::PCI_DEVICES_DIR, bus_id(i)),
    }
}

fn pci() -> Pci {
    Pci {
        devices: Fact::value(
            crate::facts::pci::PCI_DEVICES_DIR,
            vec![pci_gpu(0, Some("nvidia")), pci_gpu(1, Some("nvidia"))],
        ),
    }
}

pub fn node(path: &str, read_write: bool) -> DeviceNode {
    DeviceNode {
        path: path.into(),
        present: true,
        kind: Some("char".into()),
        mode: Some(if read_write { "0666" } else { "0660" }.into()),
        uid: Some(0),
        gid: Some(44),
        owner: Some("root".into()),
        group: Some("video".into()),
        major: Some(195),
        minor: Some(0),
        access: Some(Access {
            read_write,
            method: "mode bits".into(),
            detail: format!(
                "alice is judged as other: {}",
                if read_write {
                    "read+write"
                } else {
                    "no read+write"
                }
            ),
        }),
        error: None,
    }
}

fn device_nodes() -> DeviceNodes {
    DeviceNodes {
        nodes: [
            "/dev/nvidiactl",
            "/dev/nvidia-uvm",
            "/dev/nvidia-uvm-tools",
            "/dev/nvidia-modeset",
            "/dev/nvidia0",
            "/dev/nvidia1",
        ]
        .iter()
        .map(|p| node(p, true))
        .collect(),
        listing_error: None,
    }
}

pub fn toolkit(root: &str, version: &str, nvcc: bool) -> Toolkit {
    Toolkit {
        root: root.into(),
        kind: ToolkitKind::Nvidia,
        found: vec![Found {
            route: Route::VersionedDir,
            path: root.into(),
        }],
        version: Fact::value(format!("{root}/version.json"), version.to_string()),
        cuda: CudaVersion::parse(version),
        disagreements: Vec::new(),
        nvcc: nvcc.then(|| format!("{root}/bin/nvcc")),
        headers: true,
        lib_dirs: vec![format!("{root}/lib64")],
    }
}

fn toolkits() -> Toolkits {
    let mut tk = toolkit(TOOLKIT_ROOT, "12.4.131", true);
    tk.found.insert(
        0,
        Found {
            route: Route::UsrLocalCuda,
            path: "/usr/local/cuda".into(),
        },
    );
    Toolkits {
        installs: vec![tk],
        rejected: Vec::new(),
        nvcc_on_path: Some(NvccOnPath {
            path: "/usr/local/cuda/bin/nvcc".into(),
            resolved: format!("{TOOLKIT_ROOT}/bin/nvcc"),
            toolkit: Some(0),
        }),
        cuda_home: CudaHome {
            path: Some("/usr/local/cuda".into()),
            via: "the nvcc on PATH".into(),
            toolkit: Some(0),
        },
        usr_local_cuda: Some(TOOLKIT_ROOT.into()),
        conda_packages: Vec::new(),
        extension_builders: Vec::new(),
    }
}

/// A candidate file for a library: `name` in `dir`, resolved to `target_name` there.
pub fn candidate(dir: &str, name: &str, target_name: &str, via: Via) -> Candidate {
    Candidate {
        path: format!("{dir}/{name}"),
        via,
        detail: None,
        target: Some(format!("{dir}/{target_name}")),
        version: crate::facts::libraries::version_from_file_name(target_name),
        version_source: Some(format!("{dir}/{target_name}")),
        elf_soname: Some(name.into()),
        needed: Vec::new(),
        size: Some(1 << 20),
        stub: dir.contains("/stubs"),
        forward_compat: dir.ends_with("/compat"),
        problem: None,
    }
}

/// A library the loader resolves to `winner`.
pub fn library(family: &str, soname: &str, winner: Candidate) -> Library {
    Library {
        family: family.into(),
        soname: soname.into(),
        candidates: vec![winner],
        winner: Some(0),
        elsewhere: Vec::new(),
    }
}

fn libraries() -> Libraries {
    let so = |v: &str| format!("libcuda.so.{v}");
    Libraries {
        search: SearchPath {
            ld_library_path: Vec::new(),
            ld_library_path_resolved: Vec::new(),
            cache: Fact::value(
                crate::probes::libraries::LD_SO_CACHE,
                CacheInfo {
                    format: CacheFormat::New,
                    entries: 500,
                },
            ),
            default_dirs: vec!["/lib".into(), "/usr/lib".into()],
            wsl_lib_searched: None,
        },
        libraries: vec![
            library(
                "libcuda",
                "libcuda.so.1",
                candidate(LIB_DIR, "libcuda.so.1", &so(DRIVER), Via::LdSoCache),
            ),
            library(
                "libnvidia-ml",
                "libnvidia-ml.so.1",
                candidate(
                    LIB_DIR,
                    "libnvidia-ml.so.1",
                    &format!("libnvidia-ml.so.{DRIVER}"),
                    Via::LdSoCache,
                ),
            ),
        ],
        nvidia_smi: Some(crate::facts::libraries::Executable {
            path: "/usr/bin/nvidia-smi".into(),
            resolved: "/usr/bin/nvidia-smi".into(),
        }),
    }
}

pub fn gpu(i: u32) -> Gpu {
    let v = |x: u32| Field::Value(x);
    Gpu {
        index: i,
        handle_error: None,
        name: Field::Value(GPU_NAME.into()),
        uuid: Field::Value(uuid(i)),
        serial: Field::Value(format!("165000000000{i}")),
        pci_bus_id: Field::Value(format!("0000{}", bus_id(i))),
        pci_device_id: Field::Value("0x233010DE".into()),
        minor_number: v(i),
        architecture: Field::Value("hopper".into()),
        compute_capability: Field::Value("9.0".into()),
        memory: Field::Value(Memory {
            total: 80 * GIB,
            used: GIB / 2,
            free: 80 * GIB - GIB / 2,
            reserved: GIB / 2,
        }),
        bar1: Field::NotSupported,
        pcie: Pcie {
            generation: v(5),
            max_generation: v(5),
            width: v(16),
            max_width: v(16),
        },
        temperature_c: v(35),
        temperature_slowdown_c: v(87),
        temperature_shutdown_c: v(92),
        power_usage_mw: v(70_000),
        power_limit_mw: v(700_000),
        clocks: Clocks {
            sm_mhz: v(345),
            memory_mhz: v(2619),
            max_sm_mhz: v(1980),
            max_memory_mhz: v(2619),
        },
        throttle: Field::Value(Throttle {
            bits: 1,
            reasons: vec!["GPU_IDLE".into()],
        }),
        ecc: Ecc {
            enabled: Field::Value(true),
            pending: Field::Value(true),
            volatile_corrected: Field::Value(0),
            volatile_uncorrected: Field::Value(0),
            aggregate_corrected: Field::Value(0),
            aggregate_uncorrected: Field::Value(0),
        },
        retired_pages: Field::Value(RetiredPages {
            single_bit: 0,
            double_bit: 0,
        }),
        retired_pages_pending: Field::Value(false),
        remapped_rows: Field::Value(RemappedRows {
            correctable: 0,
            uncorrectable: 0,
            pending: false,
            failure: false,
        }),
        persistence_mode: Field::Value(true),
        compute_mode: Field::Value("default".into()),
        mig: Mig {
            enabled: Field::Value(false),
            pending: Field::Value(false),
            instances: Vec::new(),
        },
        processes: Field::Value(Vec::new()),
        nvlinks: Field::NotSupported,
        nvlink_remotes: Field::NotSupported,
        fabric: Field::Value(Fabric {
            state: "not_supported".into(),
            status: "success".into(),
        }),
        recovery_action: Field::Value("none".into()),
        pcie_replay_counter: Field::Value(0),
        nvlink_errors: Field::NotSupported,
    }
}

fn nvml_system() -> NvmlSystem {
    NvmlSystem {
        driver_version: Field::Value(DRIVER.into()),
        cuda_driver_version: Field::Value("12.4".into()),
        nvml_version: Field::Value(format!("12.{DRIVER}")),
        device_count: Field::Value(2),
        devices: vec![gpu(0), gpu(1)],
        topology: Vec::new(),
    }
}

pub fn dist(name: &str, version: &str) -> Dist {
    Dist {
        name: name.into(),
        version: version.into(),
        requires_torch: None,
    }
}

pub fn requirement(name: &str, spec: &str) -> Requirement {
    Requirement {
        name: name.into(),
        extras: Vec::new(),
        spec: spec.into(),
        via: None,
    }
}

pub fn arches(list: &[&str]) -> FatbinSummary {
    FatbinSummary {
        containers: 100,
        counts: Vec::new(),
        arch_list: list.iter().map(|s| s.to_string()).collect(),
        extras: Vec::new(),
        bytes_read: 4096,
        entries: 800,
        compressed_entries: 0,
        section_size: 1 << 30,
        majority_percent: 50,
        complete: true,
        notes: Vec::new(),
    }
}

pub fn torch(version: &str, cuda: Option<&str>) -> Torch {
    Torch {
        dist_version: version.into(),
        version: Fact::value(format!("{SITE}/torch/version.py"), version.to_string()),
        cuda: cuda.map(str::to_string),
        hip: None,
        git_version: None,
        debug: Some(false),
        requires: Vec::new(),
        requires_problems: Vec::new(),
        wheel_machine: None,
        arches: None,
        conda_build: None,
        conda_mutex: None,
    }
}

fn python_env() -> PythonEnv {
    let mut t = torch("2.4.1+cu124", Some("12.4"));
    t.requires = vec![
        requirement("nvidia-cudnn-cu12", "==9.1.0.70"),
        requirement("nvidia-cublas-cu12", "==12.4.2.65"),
        requirement("triton", "==3.0.0"),
    ];
    t.arches = Some(Fact::value(
        format!("{SITE}/torch/lib/libtorch_cuda.so"),
        arches(&[
            "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90",
        ]),
    ));
    PythonEnv {
        site: SITE.into(),
        found_by: "python on PATH".into(),
        python: Some("/home/alice/venv/bin/python".into()),
        primary: true,
        torch: Some(t),
        nvidia_wheels: vec![
            dist("nvidia-cudnn-cu12", "9.1.0.70"),
            dist("nvidia-cublas-cu12", "12.4.2.65"),
        ],
        companions: vec![dist("triton", "3.0.0"), dist("torchvision", "0.19.1+cu124")],
        frameworks: Vec::new(),
        installer: None,
        interpreter: None,
        project: None,
    }
}

pub fn smoke_device(i: u32) -> SmokeDevice {
    SmokeDevice {
        ordinal: i,
        info: Some(DeviceInfo {
            name: GPU_NAME.into(),
            uuid: Some(uuid(i)),
            pci_bus_id: Some(bus_id(i)),
            compute_capability: Some("9.0".into()),
            sm_count: Some(132),
            total_memory: Some(80 * GIB),
            integrated: Some(false),
        }),
        info_error: None,
        context: Some(Step::Ok(Timing { ms: 150.0 })),
        module: Some(Step::Ok(Timing { ms: 2.0 })),
        matmul: Some(Step::Ok(Matmul {
            n: 1024,
            ms: 1.0,
            gflops: 2000.0,
            checked_rows: 16,
            wrong_elements: 0,
            max_abs_error: 1e-5,
            max_error_ratio: 0.01,
            freivalds_passed: true,
            correct: true,
            tolerance: "1e-3 relative".into(),
        })),
        memory: Some(Step::Ok(MemoryProbe {
            total: 80 * GIB,
            free_before: 79 * GIB,
            fraction: 0.9,
            lowered_because: None,
            target: 71 * GIB,
            chunk_bytes: GIB,
            chunks: 71,
            allocated: 71 * GIB,
            alloc_error: None,
            failed_at: None,
            fill_gbps: Some(2000.0),
            verify_gbps: Some(2000.0),
            mismatches: 0,
            kernel_error: None,
            ms: 200.0,
        })),
        transfer: Some(Step::Ok(Transfer {
            bytes: 256 << 20,
            host_memory_cap: false,
            iterations: 5,
            pinned_h2d_gbps: Some(52.0),
            pinned_d2h_gbps: Some(53.0),
            pageable_h2d_gbps: Some(20.0),
            pageable_d2h_gbps: Some(20.0),
            pinned_error: None,
            cpu_affinity: None,
            device_gbps: Some(2900.0),
            device_bytes: Some(256 << 20),
            device_skipped: None,
            device_error: None,
        })),
        running: None,
        finished: true,
        elapsed_ms: 400.0,
    }
}

pub fn smoke_run() -> SmokeRun {
    SmokeRun {
        loaded_from: Some(format!("{LIB_DIR}/libcuda.so.{DRIVER}")),
        init_done: true,
        init_error: None,
        driver_version: Some(12040),
        device_count: Some(2),
        count_error: None,
        cuda_visible_devices: None,
        stage: None,
        devices: vec![smoke_device(0), smoke_device(1)],
        peers: vec![smoke_peer(0, 1), smoke_peer(1, 0)],
        nccl: None,
        finished: true,
        elapsed_ms: 900.0,
    }
}

/// A verified 64 MiB peer copy at 40 GB/s (a PCIe Gen5 pair).
pub fn smoke_peer(from: u32, to: u32) -> crate::facts::smoke::PeerCopy {
    use crate::facts::smoke::{PeerBandwidth, PeerCopy, Step, Timing};
    PeerCopy {
        from,
        to,
        from_bus_id: Some(bus_id(from)),
        to_bus_id: Some(bus_id(to)),
        can_access: Some(Step::Ok(true)),
        enable: Some(Step::Ok(Timing { ms: 2.0 })),
        copy: Some(Step::Ok(PeerBandwidth {
            bytes: 64 << 20,
            iterations: 4,
            ms: 1.68,
            gbps: 40.0,
            mismatches: 0,
            verified: true,
        })),
        running: None,
        finished: true,
    }
}

fn smoke() -> SmokeProbe {
    SmokeProbe {
        library: crate::facts::smoke::DEFAULT_LIB.into(),
        settings: SmokeSettings::default(),
        result: SmokeResult::Ran { run: smoke_run() },
        nccl: None,
    }
}

pub fn cuda_error(call: &str, code: i32, name: &str) -> CudaError {
    CudaError {
        call: call.into(),
        code,
        name: name.into(),
        message: format!("{name} (test)"),
    }
}

// --- tweaks -------------------------------------------------------------------------

pub fn set_env(s: &mut Snapshot, name: &str, value: &str) {
    let env = s.environment.get_or_insert_with(|| Environment {
        variables: Vec::new(),
    });
    env.variables.retain(|v| v.name != name);
    env.variables.push(EnvValue {
        name: name.into(),
        value: value.into(),
        category: crate::envvars::category_of(name).unwrap_or(Category::Tool),
        redacted: false,
        lossy: false,
    });
}

pub fn in_container(s: &mut Snapshot, kind: &str) {
    s.platform.as_mut().unwrap().container.kind = Some(kind.into());
}

pub fn make_wsl(s: &mut Snapshot) {
    let p = s.platform.as_mut().unwrap();
    p.wsl.detected = true;
    p.wsl.version = Some(2);
}

pub fn nvml_sys(s: &mut Snapshot) -> &mut NvmlSystem {
    match &mut s.nvml.as_mut().unwrap().result {
        NvmlResult::Ok { system } => system,
        _ => panic!("NVML did not answer in this snapshot"),
    }
}

pub fn nvml_gpu(s: &mut Snapshot, i: usize) -> &mut Gpu {
    &mut nvml_sys(s).devices[i]
}

pub fn set_nvml(s: &mut Snapshot, result: NvmlResult) {
    s.nvml.as_mut().unwrap().result = result;
}

pub fn smoke_probe(s: &mut Snapshot) -> &mut SmokeProbe {
    s.smoke.as_mut().unwrap()
}

pub fn smoke_run_mut(s: &mut Snapshot) -> &mut SmokeRun {
    match &mut smoke_probe(s).result {
        SmokeResult::Ran { run }
        | SmokeResult::TimedOut { run, .. }
        | SmokeResult::Crashed { run, .. } => run,
        _ => panic!("the smoke test did not run in this snapshot"),
    }
}

pub fn smoke_dev(s: &mut Snapshot, i: usize) -> &mut SmokeDevice {
    &mut smoke_run_mut(s).devices[i]
}

/// The transfer step's figures of smoke device `i` (the step passed in `healthy()`).
pub fn smoke_transfer(s: &mut Snapshot, i: usize) -> &mut crate::facts::smoke::Transfer {
    match &mut smoke_dev(s, i).transfer {
        Some(Step::Ok(t)) => t,
        _ => panic!("smoke device {i}'s transfer step did not pass"),
    }
}

pub fn primary_env(s: &mut Snapshot) -> &mut PythonEnv {
    s.python
        .as_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e.primary)
        .unwrap()
}

pub fn torch_mut(s: &mut Snapshot) -> &mut Torch {
    primary_env(s).torch.as_mut().unwrap()
}

pub fn toolkits_mut(s: &mut Snapshot) -> &mut Toolkits {
    s.toolkits.as_mut().unwrap()
}

pub fn libs_mut(s: &mut Snapshot) -> &mut Libraries {
    s.libraries.as_mut().unwrap()
}

/// Replaces (or adds) the library with this soname.
pub fn put_library(s: &mut Snapshot, lib: Library) {
    let libs = libs_mut(s);
    libs.libraries.retain(|l| l.soname != lib.soname);
    libs.libraries.push(lib);
}

pub fn kernel_module_mut(s: &mut Snapshot) -> &mut KernelModule {
    s.kernel_module.as_mut().unwrap()
}

/// The nvidia module not loaded: no version files, no nvidia* in /proc/modules.
pub fn unload_nvidia(s: &mut Snapshot) {
    let km = kernel_module_mut(s);
    km.version_file = Fact::missing(
        crate::facts::kernel_module::VERSION_FILE,
        MissingReason::NotFound,
        "no such file",
    );
    km.sys_version = Fact::missing(
        crate::facts::kernel_module::SYS_VERSION_FILE,
        MissingReason::NotFound,
        "no such file",
    );
    km.modules = Fact::value(crate::facts::kernel_module::MODULES_FILE, Vec::new());
    km.gpus = Fact::missing(
        crate::facts::kernel_module::DRIVER_GPUS_DIR,
        MissingReason::NotFound,
        "no such directory",
    );
}

/// Every place the driver version shows: the kernel module, libcuda, libnvidia-ml, NVML.
pub fn set_driver(s: &mut Snapshot, version: &str) {
    let km = kernel_module_mut(s);
    if let crate::fact::Outcome::Value(v) = &mut km.version_file.outcome {
        v.version = version.into();
    }
    km.sys_version = Fact::value(
        crate::facts::kernel_module::SYS_VERSION_FILE,
        version.to_string(),
    );
    for lib in &mut libs_mut(s).libraries {
        if lib.soname == "libcuda.so.1" || lib.soname == "libnvidia-ml.so.1" {
            for c in &mut lib.candidates {
                c.version = Some(version.into());
            }
        }
    }
    if let Some(NvmlResult::Ok { system }) = s.nvml.as_mut().map(|n| &mut n.result) {
        system.driver_version = Field::Value(version.into());
    }
}

pub fn remove_module(s: &mut Snapshot, name: &str) {
    if let crate::fact::Outcome::Value(m) = &mut kernel_module_mut(s).modules.outcome {
        m.retain(|m| m.name != name);
    }
}

pub fn nodes_mut(s: &mut Snapshot) -> &mut DeviceNodes {
    s.device_nodes.as_mut().unwrap()
}

pub fn remove_node(s: &mut Snapshot, path: &str) {
    nodes_mut(s).nodes.retain(|n| n.path != path);
}

pub fn pci_devices_mut(s: &mut Snapshot) -> &mut Vec<PciDevice> {
    match &mut s.pci.as_mut().unwrap().devices.outcome {
        crate::fact::Outcome::Value(d) => d,
        _ => panic!("PCI devices missing in this snapshot"),
    }
}

// --- the host's container stack ----------------------------------------------------------

/// A host with no container engine, no toolkit and no CDI spec.
pub fn container_host() -> crate::facts::container_host::ContainerHost {
    use crate::facts::container_host::*;
    ContainerHost {
        packages: Fact::value(DPKG_STATUS, Vec::new()),
        rpm_db: None,
        docker: Docker {
            binaries: Vec::new(),
            packages: Vec::new(),
            snap: None,
            daemon_configs: vec![Fact::missing(
                DAEMON_JSON,
                MissingReason::NotFound,
                "no such file",
            )],
        },
        podman: Podman {
            binaries: Vec::new(),
            nvidia_hooks: Vec::new(),
        },
        containerd: Vec::new(),
        crio: Crio {
            binaries: Vec::new(),
            configs: Vec::new(),
        },
        kubernetes: Vec::new(),
        toolkit: ContainerToolkit {
            binaries: Vec::new(),
            config: Fact::missing(TOOLKIT_CONFIG, MissingReason::NotFound, "no such file"),
        },
        cdi: Cdi {
            dirs: CDI_DIRS.iter().map(|d| d.to_string()).collect(),
            specs: Vec::new(),
            notes: Vec::new(),
        },
        dev_char: DevChar {
            listing: Fact::value("/dev/char", 0),
            nodes: [
                ("/dev/nvidiactl", "195:255"),
                ("/dev/nvidia0", "195:0"),
                ("/dev/nvidia1", "195:1"),
                ("/dev/nvidia-uvm", "510:0"),
            ]
            .iter()
            .map(|(p, mm)| CharNode {
                path: p.to_string(),
                major_minor: Some(mm.to_string()),
                link: Some(format!("/dev/char/{mm}")),
            })
            .collect(),
        },
        cgroup: Fact::value(CGROUP_CONTROLLERS, "v2".to_string()),
    }
}

pub fn host_mut(s: &mut Snapshot) -> &mut crate::facts::container_host::ContainerHost {
    s.container_host.as_mut().unwrap()
}

pub fn bin(name: &str) -> crate::facts::container_host::Binary {
    crate::facts::container_host::Binary {
        name: name.into(),
        path: format!("/usr/bin/{name}"),
    }
}

pub fn dpkg(name: &str, version: &str) -> crate::facts::container_host::Package {
    crate::facts::container_host::Package {
        name: name.into(),
        version: version.into(),
        source: crate::facts::container_host::DPKG_STATUS.into(),
    }
}

/// Docker from docker-ce, without any NVIDIA integration.
pub fn with_docker(s: &mut Snapshot) {
    let h = host_mut(s);
    h.docker.binaries = vec![bin("dockerd"), bin("docker")];
    h.docker.packages = vec![dpkg("docker-ce", "5:27.3.1-1~ubuntu.22.04~jammy")];
}

/// The toolkit installed at `version` (packages and binaries) and Docker configured for it.
pub fn with_toolkit(s: &mut Snapshot, version: &str) {
    use crate::facts::container_host::*;
    let h = host_mut(s);
    let pkgs: Vec<Package> = TOOLKIT_PACKAGES
        .iter()
        .map(|n| dpkg(n, &format!("{version}-1")))
        .collect();
    if let crate::fact::Outcome::Value(p) = &mut h.packages.outcome {
        p.extend(pkgs);
    }
    h.toolkit.binaries = TOOLKIT_BINARIES.iter().map(|n| bin(n)).collect();
    let mut runtimes = std::collections::BTreeMap::new();
    runtimes.insert(
        "nvidia".to_string(),
        Some("nvidia-container-runtime".to_string()),
    );
    h.docker.daemon_configs = vec![Fact::value(
        DAEMON_JSON,
        DaemonConfig {
            runtimes,
            ..DaemonConfig::default()
        },
    )];
}

/// A CDI spec for nvidia.com/gpu generated for `driver`, whose files exist unless listed in `missing`.
pub fn nvidia_spec(s: &mut Snapshot, path: &str, driver: &str, missing: &[&str]) {
    use crate::facts::container_host::*;
    let lib = format!("{LIB_DIR}/libcuda.so.{driver}");
    let paths = [
        ("/dev/nvidiactl".to_string(), "device_node"),
        ("/dev/nvidia0".to_string(), "device_node"),
        (lib, "mount"),
        (format!("{LIB_DIR}/libnvidia-ml.so.{driver}"), "mount"),
        ("/usr/bin/nvidia-cdi-hook".to_string(), "hook"),
    ];
    let spec = CdiSpec {
        cdi_version: Some("0.5.0".into()),
        kind: Some("nvidia.com/gpu".into()),
        device_count: 3,
        devices: vec!["0".into(), uuid(0), "all".into()],
        hooks: vec!["create-symlinks".into(), "update-ldcache".into()],
        driver_version: Some(driver.into()),
        host_paths: paths
            .iter()
            .map(|(p, k)| HostPath {
                path: p.clone(),
                kind: k.to_string(),
                exists: !missing.contains(&p.as_str()),
            })
            .collect(),
        notes: Vec::new(),
    };
    host_mut(s).cdi.specs.push(Fact::value(path, spec));
}

// --- assertions ---------------------------------------------------------------------

/// The findings of a rule that applied; panics on NotApplicable.
#[track_caller]
pub fn findings(o: Outcome) -> Vec<Finding> {
    match o {
        Outcome::Checked(f) => f,
        Outcome::NotApplicable(why) => panic!("expected Checked, got NotApplicable: {why}"),
    }
}

#[track_caller]
pub fn assert_clean(o: Outcome) {
    let f = findings(o);
    assert!(f.is_empty(), "expected no finding, got {f:#?}");
}

/// Asserts NotApplicable and returns its reason.
#[track_caller]
pub fn assert_na(o: Outcome) -> String {
    match o {
        Outcome::NotApplicable(why) => why,
        Outcome::Checked(f) => panic!("expected NotApplicable, got Checked({f:#?})"),
    }
}

/// Asserts the rule found exactly one finding, with this code and severity.
#[track_caller]
pub fn only(o: Outcome, code: &str, severity: Severity) -> Finding {
    let mut f = findings(o);
    assert_eq!(f.len(), 1, "expected exactly one finding, got {f:#?}");
    let f = f.remove(0);
    assert_eq!((f.code.as_str(), f.severity), (code, severity), "{f:#?}");
    f
}

/// The one finding with this code and severity among several.
#[track_caller]
pub fn one_of<'a>(f: &'a [Finding], code: &str, severity: Severity) -> &'a Finding {
    let hits: Vec<&Finding> = f
        .iter()
        .filter(|f| f.code == code && f.severity == severity)
        .collect();
    assert_eq!(hits.len(), 1, "expected one {code} {severity:?} in {f:#?}");
    hits[0]
}

/// The command of the finding's first fix that has one.
#[track_caller]
pub fn first_cmd(f: &Finding) -> &str {
    f.fix
        .iter()
        .find_map(|x| x.command.as_deref())
        .unwrap_or_else(|| panic!("no fix with a command in {f:#?}"))
}

/// Whether any fix's text or command contains `s`.
pub fn fixes_mention(f: &Finding, s: &str) -> bool {
    f.fix
        .iter()
        .any(|x| x.text.contains(s) || x.command.as_deref().is_some_and(|c| c.contains(s)))
}

/// Whether any evidence value contains `s`.
pub fn evidence_mentions(f: &Finding, s: &str) -> bool {
    f.evidence.iter().any(|e| e.value.contains(s))
}

/// The healthy snapshot passes every rule, with nothing worse than info.
#[test]
fn healthy_host_has_no_findings() {
    let s = healthy();
    for rule in crate::rules::RULES {
        if let Outcome::Checked(f) = (rule.run)(&s) {
            assert!(f.is_empty(), "{}: {f:#?}", rule.name);
        }
    }
}

/// Every NVML field unanswered, every smoke step missing, every fact unreadable: the rules
/// still decide (or decline) without panicking.
#[test]
fn unanswered_facts_never_panic() {
    let mut s = healthy();
    let blank = |g: &mut Gpu| {
        let e = || Field::Error("unknown".into());
        *g = Gpu {
            index: g.index,
            handle_error: Some("unknown error".into()),
            name: e(),
            uuid: e(),
            serial: e(),
            pci_bus_id: e(),
            pci_device_id: e(),
            minor_number: Field::NotSupported,
            architecture: e(),
            compute_capability: e(),
            memory: Field::NotSupported,
            bar1: Field::NotSupported,
            pcie: Pcie {
                generation: Field::NotInDriver,
                max_generation: Field::NotInDriver,
                width: Field::NotInDriver,
                max_width: Field::NotInDriver,
            },
            temperature_c: Field::NotSupported,
            temperature_slowdown_c: Field::NotSupported,
            temperature_shutdown_c: Field::NotSupported,
            power_usage_mw: Field::NotSupported,
            power_limit_mw: Field::NotSupported,
            clocks: Clocks {
                sm_mhz: Field::NotSupported,
                memory_mhz: Field::NotSupported,
                max_sm_mhz: Field::NotSupported,
                max_memory_mhz: Field::NotSupported,
            },
            throttle: Field::NotSupported,
            ecc: Ecc {
                enabled: Field::NotSupported,
                pending: Field::NotSupported,
                volatile_corrected: Field::NotSupported,
                volatile_uncorrected: Field::NotSupported,
                aggregate_corrected: Field::NotSupported,
                aggregate_uncorrected: Field::NotSupported,
            },
            retired_pages: Field::NotSupported,
            retired_pages_pending: Field::NotSupported,
            remapped_rows: Field::NotSupported,
            persistence_mode: Field::NotSupported,
            compute_mode: Field::NotSupported,
            mig: Mig {
                enabled: Field::NotSupported,
                pending: Field::NotSupported,
                instances: Vec::new(),
            },
            processes: Field::NotSupported,
            nvlinks: Field::NotSupported,
            nvlink_remotes: Field::NotSupported,
            fabric: Field::NotSupported,
            recovery_action: Field::NotSupported,
            pcie_replay_counter: Field::NotSupported,
            nvlink_errors: Field::NotSupported,
        };
    };
    nvml_sys(&mut s).devices.iter_mut().for_each(blank);
    nvml_sys(&mut s).device_count = Field::Error("unknown".into());
    for d in &mut smoke_run_mut(&mut s).devices {
        *d = SmokeDevice {
            ordinal: d.ordinal,
            info: None,
            info_error: None,
            context: None,
            module: None,
            matmul: None,
            memory: None,
            transfer: None,
            running: Some("cuCtxCreate".into()),
            finished: false,
            elapsed_ms: 0.0,
        };
    }
    let km = kernel_module_mut(&mut s);
    km.version_file = Fact::missing("v", MissingReason::Malformed, "garbage");
    km.modules = Fact::missing("m", MissingReason::PermissionDenied, "denied");
    km.gpus = Fact::missing("g", MissingReason::TimedOut, "hung");
    set_env(
        &mut s,
        "CUDA_VISIBLE_DEVICES",
        ",,,-0,99999999999999999999,GPU-",
    );
    set_env(&mut s, "PYTORCH_CUDA_ALLOC_CONF", ":::,[,]]");
    torch_mut(&mut s).version = Fact::missing("version.py", MissingReason::Malformed, "x");
    torch_mut(&mut s).dist_version = "not.a.version".into();
    torch_mut(&mut s).cuda = Some("12".into());
    for rule in crate::rules::RULES {
        let _ = (rule.run)(&s);
    }
}

/// A linkage of the primary environment (SITE): objects and the modules opened, in order.
pub fn linkage(
    modules: Vec<crate::facts::linkage::Module>,
    objects: Vec<crate::loader::Object>,
    versions: Vec<(usize, &str)>,
) -> crate::facts::linkage::Linkage {
    crate::facts::linkage::Linkage {
        site: SITE.into(),
        python: None,
        ld_library_path: Vec::new(),
        modules,
        objects,
        limits: Vec::new(),
        versions: versions
            .into_iter()
            .map(|(object, v)| crate::facts::linkage::LibraryVersion {
                object,
                version: v.into(),
                source: "test".into(),
            })
            .collect(),
    }
}

/// A module of `package` (dist "name version") whose root is object `object`.
pub fn linked_module(
    package: &str,
    dist: &str,
    object: usize,
    failures: Vec<crate::loader::Failure>,
) -> crate::facts::linkage::Module {
    crate::facts::linkage::Module {
        package: package.into(),
        dist: Some(dist.into()),
        path: format!("{SITE}/{package}/module{object}.so"),
        object: Some(object),
        mapped: vec![object],
        failures: failures
            .into_iter()
            .map(|failure| crate::facts::linkage::Failed {
                failure,
                picked_how: None,
                would_work: Vec::new(),
            })
            .collect(),
        optional: None,
    }
}

/// The primary environment's linkage: torch's `_C` (object 0) bound to
/// /opt/cudnn/lib/libcudnn.so.9 (object 1, of `version` when given) found `how`, with the
/// module's `failures`.
pub fn torch_bound_to_cudnn(
    s: &mut Snapshot,
    how: crate::loader::How,
    version: Option<&str>,
    failures: Vec<crate::loader::Failure>,
) {
    use crate::loader::{How, Object};
    let objects = vec![
        Object::for_test(
            &format!("{SITE}/torch/_C.so"),
            None,
            How::Path,
            vec![binding("libcudnn.so.9", Some(1), how.clone())],
        ),
        Object::for_test(
            "/opt/cudnn/lib/libcudnn.so.9",
            Some("libcudnn.so.9"),
            how,
            Vec::new(),
        ),
    ];
    let m = linked_module("torch", "torch 2.4.1", 0, failures);
    let versions = version.map(|v| vec![(1, v)]).unwrap_or_default();
    s.linkage = Some(vec![linkage(vec![m], objects, versions)]);
}

/// A DT_NEEDED entry bound to object `to` (None: not found).
pub fn binding(needed: &str, to: Option<usize>, how: crate::loader::How) -> crate::loader::Binding {
    crate::loader::Binding {
        needed: needed.into(),
        object: to,
        how: to.map(|_| how),
        skipped: Vec::new(),
        searched: Vec::new(),
    }
}
