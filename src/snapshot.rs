//! The single data model: everything the probes saw, serialisable and versioned.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compat::DriverVersion;
use crate::facts::device_nodes::DeviceNodes;
use crate::facts::environment::Environment;
use crate::facts::identity::Identity;
use crate::facts::kernel_module::KernelModule;
use crate::facts::libraries::Libraries;
use crate::facts::nvml::NvmlProbe;
use crate::facts::pci::{Pci, PciRole};
// For readers of saved reports (src/diff/): PCI addresses as sysfs spells them.
use crate::facts::platform::Platform;
use crate::facts::python_sites::Site;
use crate::facts::pytorch::PythonEnv;
use crate::facts::toolkits::{Toolkit, Toolkits};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Snapshot {
    /// The `--root` the facts were read under; None for the running system.
    pub root: Option<String>,
    /// `check --image`: the image whose userland this snapshot holds, judged on this host.
    #[serde(default)]
    pub image: Option<crate::image::ImageInfo>,
    /// Who and where: host, hashed machine id, Slurm/Kubernetes context, time, version.
    pub node: Option<crate::facts::node::Node>,
    /// How each probe went, by probe name.
    pub probes: BTreeMap<String, ProbeRun>,
    pub identity: Option<Identity>,
    pub platform: Option<Platform>,
    pub kernel_module: Option<KernelModule>,
    /// What the driver and PCIe error reporting wrote to the kernel's log (Xid, AER, …).
    #[serde(default)]
    pub kernel_log: Option<crate::facts::kernel_log::KernelLog>,
    pub pci: Option<Pci>,
    /// Where the GPUs sit on the PCI bus: bridges and their ACS, NUMA, IOMMU, RDMA NICs.
    #[serde(default)]
    pub topology: Option<crate::facts::topology::Topology>,
    pub device_nodes: Option<DeviceNodes>,
    /// What the host's container stack provides for GPUs (engines, toolkit, CDI specs).
    #[serde(default)]
    pub container_host: Option<crate::facts::container_host::ContainerHost>,
    pub environment: Option<Environment>,
    /// What NCCL's variables can name here: IP interfaces, RDMA devices, the GPUDirect
    /// RDMA module.
    #[serde(default)]
    pub nccl: Option<crate::facts::nccl::NcclHost>,
    pub toolkits: Option<Toolkits>,
    pub libraries: Option<Libraries>,
    /// Per Python environment, what the loader binds for its CUDA-using native modules
    /// (the linkage probe); `gpudoctor libs FILE…` fills it from the files given.
    pub linkage: Option<Vec<crate::facts::linkage::Linkage>>,
    /// Python site-packages directories the toolkit and library probes looked in.
    pub python_sites: Option<Vec<Site>>,
    pub nvml: Option<NvmlProbe>,
    /// Python environments and the PyTorch in each (the pytorch probe).
    pub python: Option<Vec<PythonEnv>>,
    /// --python-import: what torch said about itself in a real interpreter.
    pub python_live: Option<crate::facts::pytorch_live::LiveTorch>,
    /// The on-device smoke test (matmul, memory, transfers), or why it did not run.
    pub smoke: Option<crate::facts::smoke::SmokeProbe>,
    /// `check --preflight`: the budget and how long the probes took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<Preflight>,
    /// `check --baseline OLD.json`: the earlier report's link error counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_baseline: Option<crate::facts::baseline::CountersBaseline>,
    /// The shape the node must have (--expect-gpus, gpus_per_node): kept in the report, so a
    /// replay judges against it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
}

/// What the site says every node has, each with where it was said (`--expect-gpus`,
/// `$GPUDOCTOR_EXPECT_GPUS`, `FILE:LINE`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Expect {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<Said<u32>>,
    /// A driver version (580.95.05) or branch (580).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<Said<String>>,
    /// A part of every GPU's name (H100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<Said<String>>,
}

/// An expected value and where it was said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Said<T> {
    pub value: T,
    pub from: String,
}

impl Expect {
    /// Whether `driver` (a full version) is the expected one: the same version, or of the
    /// expected branch.
    pub fn driver_matches(expected: &str, driver: &str) -> bool {
        driver == expected || driver.starts_with(&format!("{expected}."))
    }

    /// Whether a GPU named `name` is of the expected model (a part of its name, any case).
    pub fn model_matches(expected: &str, name: &str) -> bool {
        name.to_lowercase().contains(&expected.to_lowercase())
    }
}

/// A `check --preflight` run: its budget, how it was divided, and the time it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Preflight {
    pub budget_s: f64,
    /// The static probes' share (each probe's deadline).
    pub probes_s: f64,
    /// The smoke test's share.
    pub smoke_s: f64,
    /// From the start of the run until every probe, the smoke test and the second read of
    /// the counters had finished.
    pub elapsed_s: f64,
}

/// A GPU model as far as the rules need it.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownGpu {
    pub name: String,
    pub cc: crate::compat::ComputeCapability,
    pub class: crate::compat::ProductClass,
    pub source: String,
}

/// A driver version with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverFact {
    pub version: DriverVersion,
    pub source: String,
    /// Read from the loaded kernel module (else from the user-space library on disk).
    pub kernel: bool,
    /// The Windows driver a WSL distribution runs on (its numbers are Windows' own).
    pub windows: bool,
}

impl DriverFact {
    /// Which release-notes column the version is compared with.
    pub fn os(&self) -> crate::compat::driver::DriverOs {
        if self.windows {
            crate::compat::driver::DriverOs::Windows
        } else {
            crate::compat::driver::DriverOs::Linux
        }
    }

    /// "Upgrade the NVIDIA driver to X", said where it is done.
    pub fn upgrade_to(&self, version: &str) -> String {
        if self.windows {
            format!("On Windows, upgrade the NVIDIA driver to {version} or newer (WSL runs on it)")
        } else {
            format!("Upgrade the NVIDIA driver to {version} or newer")
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeRun {
    pub status: ProbeStatus,
    pub elapsed_us: u64,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStatus {
    Ok,
    Skipped,
    TimedOut,
    Failed,
}

impl ProbeStatus {
    /// The same word the JSON uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeStatus::Ok => "ok",
            ProbeStatus::Skipped => "skipped",
            ProbeStatus::TimedOut => "timed_out",
            ProbeStatus::Failed => "failed",
        }
    }
}

/// Where gpudoctor runs: decides which fixes can work (a container cannot load a kernel
/// module; a pod gets GPUs from its resource request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Host,
    VirtualMachine,
    Container,
    KubernetesPod,
    Wsl,
}

impl Place {
    /// Inside something that got its GPUs and driver from a host it cannot change.
    pub fn is_contained(self) -> bool {
        matches!(self, Place::Container | Place::KubernetesPod | Place::Wsl)
    }
}

/// How many GPUs this system exposes, and which fact says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuCount {
    pub count: usize,
    pub source: String,
}

impl Snapshot {
    /// GPUs visible to CUDA before CUDA_VISIBLE_DEVICES: device nodes first (they are what a
    /// container was given), then NVIDIA display/3D PCI functions.
    pub fn gpu_count(&self) -> Option<GpuCount> {
        // NVML counts what the driver initialised; it is the best count when it answered.
        if let Some(n) = self
            .nvml
            .as_ref()
            .and_then(|n| n.system())
            .and_then(|s| s.device_count.get())
        {
            return Some(GpuCount {
                count: *n as usize,
                source: "NVML (nvmlDeviceGetCount)".into(),
            });
        }
        if let Some(nodes) = &self.device_nodes {
            let n = nodes.gpu_nodes().len();
            if n > 0 {
                return Some(GpuCount {
                    count: n,
                    source: "/dev/nvidia[0-9]*".into(),
                });
            }
        }
        if let Some(pci) = &self.pci {
            let n = pci.gpus().len();
            if n > 0 {
                return Some(GpuCount {
                    count: n,
                    source: crate::facts::pci::PCI_DEVICES_DIR.into(),
                });
            }
        }
        None
    }

    /// Where this process runs, for fixes that fit it (no modprobe inside a container).
    /// os-release's ID ("ubuntu", "rhel"), empty when unknown.
    pub fn os_id(&self) -> String {
        self.platform
            .as_ref()
            .and_then(|p| p.os.get())
            .and_then(|o| o.id.clone())
            .unwrap_or_default()
    }

    pub fn place(&self) -> Place {
        if self.is_wsl() {
            return Place::Wsl;
        }
        let kubernetes = self
            .env_value("KUBERNETES_SERVICE_HOST")
            .is_some_and(|v| !v.is_empty())
            || self.container_kind() == Some("kubernetes");
        if kubernetes {
            return Place::KubernetesPod;
        }
        if self.container_kind().is_some() {
            return Place::Container;
        }
        let vm = self
            .platform
            .as_ref()
            .is_some_and(|p| !p.virtual_machine.is_empty());
        if vm {
            Place::VirtualMachine
        } else {
            Place::Host
        }
    }

    /// GPUs the driver initialised: NVML's count, else the driver's own list
    /// (/proc/driver/nvidia/gpus). None when neither answered (no driver loaded).
    pub fn driver_gpu_count(&self) -> Option<GpuCount> {
        if let Some(n) = self.nvml_system().and_then(|s| s.device_count.get()) {
            return Some(GpuCount {
                count: *n as usize,
                source: "NVML (nvmlDeviceGetCount)".into(),
            });
        }
        let gpus = self.kernel_module.as_ref()?.gpus.get()?;
        Some(GpuCount {
            count: gpus.len(),
            source: crate::facts::kernel_module::DRIVER_GPUS_DIR.into(),
        })
    }

    pub fn is_wsl(&self) -> bool {
        self.platform.as_ref().is_some_and(|p| p.wsl.detected)
    }

    pub fn container_kind(&self) -> Option<&str> {
        self.platform
            .as_ref()
            .and_then(|p| p.container.kind.as_deref())
    }

    /// A container (not WSL) that was given no GPU: neither /dev/nvidiactl nor a
    /// /dev/nvidiaN node is in it. GD062 speaks for it; the rules about missing nodes, NVML,
    /// UVM and the smoke test's cuInit stay quiet, since they would all be this one fact.
    pub fn container_without_gpus(&self) -> bool {
        if self.is_wsl() || self.container_kind().is_none() {
            return false;
        }
        self.device_nodes
            .as_ref()
            .is_some_and(|n| !n.is_present("/dev/nvidiactl") && n.gpu_nodes().is_empty())
    }

    /// Whether this snapshot describes an image judged for this host (`check --image`).
    pub fn is_image(&self) -> bool {
        self.image.is_some()
    }

    /// Whether what the NVIDIA runtime checks when it starts a container is judged: inside
    /// a container (its next start) or for an image.
    pub fn judges_container_start(&self) -> bool {
        self.is_image() || (self.container_kind().is_some() && !self.is_wsl())
    }

    /// Any sign of NVIDIA GPU hardware: PCI GPUs, GPU device nodes, the driver's GPU list, WSL's dxg.
    pub fn nvidia_hardware_seen(&self) -> bool {
        let pci = self.pci.as_ref().is_some_and(|p| {
            p.devices
                .get()
                .is_some_and(|d| d.iter().any(|d| d.role == PciRole::Gpu))
        });
        let nodes = self
            .device_nodes
            .as_ref()
            .is_some_and(|n| !n.gpu_nodes().is_empty() || n.is_present("/dev/dxg"));
        let driver = self
            .kernel_module
            .as_ref()
            .is_some_and(|k| k.gpus.get().is_some_and(|g| !g.is_empty()));
        pci || nodes || driver
    }

    /// The NVIDIA driver version and where it was read: the loaded kernel module first
    /// (authoritative), else the user-space libcuda the loader would pick.
    pub fn driver_version(&self) -> Option<DriverFact> {
        // WSL has no NVIDIA kernel module and an unversioned libcuda: NVML reports the
        // Windows driver.
        if self.is_wsl() {
            let sys = self.nvml_system()?;
            return Some(DriverFact {
                version: DriverVersion::parse(sys.driver_version.get()?)?,
                source: "NVML (the Windows driver WSL runs on)".into(),
                kernel: false,
                windows: true,
            });
        }
        if let Some(km) = &self.kernel_module {
            if let Some(v) = km.version_file.get().filter(|v| !v.l4t) {
                if let Some(version) = DriverVersion::parse(&v.version) {
                    return Some(DriverFact {
                        version,
                        source: km.version_file.source.clone(),
                        kernel: true,
                        windows: false,
                    });
                }
            }
            if let Some(version) = km.sys_version.get().and_then(|v| DriverVersion::parse(v)) {
                return Some(DriverFact {
                    version,
                    source: km.sys_version.source.clone(),
                    kernel: true,
                    windows: false,
                });
            }
        }
        let lib = self
            .libraries
            .as_ref()?
            .by_soname("libcuda.so.1")?
            .loaded()?;
        if lib.stub || lib.forward_compat {
            return None;
        }
        Some(DriverFact {
            version: DriverVersion::parse(lib.version.as_deref()?)?,
            source: lib.target.clone().unwrap_or_else(|| lib.path.clone()),
            kernel: false,
            windows: false,
        })
    }

    /// NVML's view, when it answered.
    /// `gpudoctor devices` asked to see the GPUs (its NVML probe says so).
    pub fn devices_requested(&self) -> bool {
        self.nvml.as_ref().is_some_and(|n| n.requested)
    }

    /// `gpudoctor devices` or `gpudoctor smoke`: asked to examine GPUs, so seeing none fails.
    pub fn gpus_asked_for(&self) -> bool {
        self.devices_requested() || self.smoke.as_ref().is_some_and(|s| s.settings.requested)
    }

    pub fn nvml_system(&self) -> Option<&crate::facts::nvml::NvmlSystem> {
        self.nvml.as_ref().and_then(|n| n.system())
    }

    /// GPU model names: NVML's, else the driver's (/proc/driver/nvidia/gpus/*/information).
    pub fn gpu_names(&self) -> Vec<String> {
        if let Some(sys) = self.nvml_system() {
            let mut names: Vec<String> = sys
                .devices
                .iter()
                .filter_map(|g| g.name.get().cloned())
                .collect();
            names.dedup();
            if !names.is_empty() {
                return names;
            }
        }
        let mut names: Vec<String> = self
            .kernel_module
            .as_ref()
            .and_then(|k| k.gpus.get())
            .map(|g| g.iter().filter_map(|g| g.model.clone()).collect())
            .unwrap_or_default();
        names.dedup();
        names
    }

    /// Each GPU model with its compute capability and product class: NVML's capability when
    /// it answered, else looked up from the model name (compat::arch), else from the PCI
    /// device id (compat::pci_ids).
    pub fn known_gpus(&self) -> Vec<KnownGpu> {
        let from_nvml: Vec<KnownGpu> = self
            .nvml_system()
            .map(|s| {
                s.devices
                    .iter()
                    .filter_map(|g| {
                        let name = g.name.get()?.clone();
                        let by_name = crate::compat::gpu_from_name(&name);
                        let cc = g
                            .compute_capability
                            .get()
                            .and_then(|c| crate::compat::ComputeCapability::parse(c))
                            .or(by_name.as_ref().map(|m| m.cc))?;
                        Some(KnownGpu {
                            name,
                            cc,
                            class: by_name
                                .map_or(crate::compat::ProductClass::Unknown, |m| m.class),
                            source: "NVML".into(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !from_nvml.is_empty() {
            return from_nvml;
        }
        let from_names: Vec<KnownGpu> = self
            .gpu_names()
            .into_iter()
            .filter_map(|name| {
                let m = crate::compat::gpu_from_name(&name)?;
                Some(KnownGpu {
                    name,
                    cc: m.cc,
                    class: m.class,
                    source: m.source.to_string(),
                })
            })
            .collect();
        if !from_names.is_empty() {
            return from_names;
        }
        self.known_gpus_from_pci()
    }

    /// The GPU functions on the PCI bus through the pci.ids table (compat::pci_ids): what
    /// is left when neither NVML nor the kernel module names a GPU whose compute capability
    /// is known (no driver loaded, a container or `--root` image, a new model's name).
    fn known_gpus_from_pci(&self) -> Vec<KnownGpu> {
        use crate::compat::pci_ids;
        let Some(pci) = &self.pci else {
            return Vec::new();
        };
        pci.gpus()
            .into_iter()
            .filter_map(|d| {
                let g = pci_ids::gpu_from_pci_id_text(&d.device_id)?;
                Some(KnownGpu {
                    name: g.display_name().to_string(),
                    cc: g.cc?,
                    class: g.class,
                    source: format!(
                        "PCI id {} at {} (pci.ids {}: {})",
                        d.device_id,
                        d.source,
                        pci_ids::table_version(),
                        g.name
                    ),
                })
            })
            .collect()
    }

    /// The toolkit builds use: torch's CUDA_HOME choice, else the shell's nvcc.
    pub fn toolkit_in_use(&self) -> Option<&Toolkit> {
        let t = self.toolkits.as_ref()?;
        t.get(t.cuda_home.toolkit)
            .or_else(|| t.get(t.nvcc_on_path.as_ref()?.toolkit))
    }

    pub fn env_value(&self, name: &str) -> Option<&str> {
        self.environment.as_ref().and_then(|e| e.value(name))
    }
}
