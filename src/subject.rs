//! What a finding is about: the one key that rules cite as evidence and every view
//! looks up to mark its lines, so a rule and a renderer cannot disagree about a fact.
//!
//! The JSON report carries the key as text (`evidence[].fact`), written by `Display`.

use std::fmt;

/// One step of the on-device smoke test, as its report line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SmokeStep {
    /// Reading the device's properties (name, bus id, memory).
    Device,
    Context,
    Kernels,
    Matmul,
    Memory,
    Transfer,
}

impl SmokeStep {
    pub const ALL: [SmokeStep; 6] = [
        SmokeStep::Device,
        SmokeStep::Context,
        SmokeStep::Kernels,
        SmokeStep::Matmul,
        SmokeStep::Memory,
        SmokeStep::Transfer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SmokeStep::Device => "device",
            SmokeStep::Context => "context",
            SmokeStep::Kernels => "kernels",
            SmokeStep::Matmul => "matmul",
            SmokeStep::Memory => "memory",
            SmokeStep::Transfer => "transfer",
        }
    }

    /// The step the worker names while it runs ("module" is the kernels step).
    pub fn from_worker_name(name: &str) -> Option<SmokeStep> {
        match name {
            "device" | "device properties" => Some(SmokeStep::Device),
            "context" => Some(SmokeStep::Context),
            "module" | "kernels" => Some(SmokeStep::Kernels),
            "matmul" => Some(SmokeStep::Matmul),
            "memory" => Some(SmokeStep::Memory),
            "transfer" => Some(SmokeStep::Transfer),
            _ => None,
        }
    }
}

/// The kinds of subject a rule judges (`Rule::judges`): when a rule that judges a kind ran and
/// cited nothing of it, each subject of that kind passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectKind {
    /// The `nvidia` kernel module.
    NvidiaModule,
    /// The `nvidia_uvm` kernel module.
    UvmModule,
    DriverVersion,
    PciFunction,
    KernelLog,
    /// The device nodes, as a set and one by one.
    DeviceNodes,
    Nvml,
    /// One GPU by NVML index.
    Gpu,
    /// GPU pairs and the IOMMU: how the GPUs reach each other.
    Topology,
    NvccOnPath,
    CudaHome,
    /// libcuda.so.1.
    Libcuda,
    /// Any other library by soname.
    Library,
    Extension,
    Torch,
    PythonImport,
    /// The environment and the variables rules read (visibility, debugging, the allocator).
    RuledVariables,
    /// NCCL's variables.
    NcclVariables,
    Smoke,
    /// One CUDA device's start in the smoke test: the device, its context, its kernels.
    SmokeGpu,
    SmokeMatmul,
    SmokeMemory,
    SmokeTransfer,
    SmokePeer,
    SmokeNccl,
    Shm,
    Container,
    Image,
}

/// The subject of a report line and of the evidence that marks it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subject {
    Os,
    Kernel,
    Container,
    Wsl,
    /// The image `check --image` judges (its platform, its configuration).
    Image,
    /// The user whose access is judged.
    Identity,
    /// A kernel module by name (`nvidia`, `nvidia_uvm`, `nouveau`, …).
    Module(String),
    /// The kernel driver's version (/proc/driver/nvidia/version or /sys/module).
    DriverVersion,
    /// The PCI bus as a whole (no NVIDIA function, or it could not be listed).
    Pci,
    /// One PCI function by address (`0000:18:00.0`).
    PciFunction(String),
    /// The per-GPU device nodes as a set (`/dev/nvidia[0-9]*`).
    GpuNodes,
    /// One device node by path.
    Node(String),
    /// NVML: the library and what it answered as a whole.
    Nvml,
    /// One GPU by NVML index.
    Gpu(u32),
    /// A GPU model by name (what a build or toolkit supports is a property of the model).
    GpuModel(String),
    /// How many GPUs this system has (NVML, nodes or PCI).
    GpuCount,
    /// The CUDA toolkits as a set (none found).
    Toolkits,
    /// One toolkit by its root directory.
    Toolkit(String),
    NvccOnPath,
    CudaHome,
    /// The dynamic loader's search path (LD_LIBRARY_PATH, /etc/ld.so.cache).
    LoaderPath,
    /// A shared library by soname.
    Library(String),
    /// A native module (Python extension or shared library) of a Python environment, by
    /// path: what `gpudoctor libs` shows a line for.
    Extension(String),
    /// A program on PATH (nvidia-smi).
    Program(String),
    /// The live `import torch` in the primary Python.
    PythonImport,
    /// The torch install of one Python environment, by site-packages directory.
    Torch(String),
    /// A Python distribution by name.
    Package(String),
    /// The process environment as a whole.
    Environment,
    /// An environment variable by name.
    Env(String),
    /// The smoke test as a whole: the library, cuInit, the device count, the worker.
    Smoke,
    /// One CUDA device's part of the smoke test, by CUDA ordinal.
    SmokeGpu(u32),
    /// One step on one CUDA device.
    SmokeStep(u32, SmokeStep),
    /// The smoke test's peer copy from one CUDA device to another (ordinals).
    SmokePeer(u32, u32),
    /// The smoke test's NCCL all-reduce over every tested GPU (`--nccl`).
    SmokeNccl,
    /// A probe that failed or timed out, by name.
    Probe(String),
    /// /dev/shm.
    Shm,
    /// A file that could not be read, by path.
    File(String),
    /// Two GPUs as a pair, by PCI address, lower first: how they reach each other.
    GpuPair(String, String),
    /// The IOMMU (its mode, the GPUs' groups).
    Iommu,
    /// The kernel's log (what the driver and PCIe error reporting wrote).
    KernelLog,
}

impl Subject {
    /// The kind rules judge this subject as; None for context no rule passes.
    pub fn kind(&self) -> Option<SubjectKind> {
        use crate::envvars::Category;
        Some(match self {
            Subject::Module(m) if m == "nvidia" => SubjectKind::NvidiaModule,
            Subject::Module(m) if m == "nvidia_uvm" => SubjectKind::UvmModule,
            Subject::DriverVersion => SubjectKind::DriverVersion,
            Subject::PciFunction(_) => SubjectKind::PciFunction,
            Subject::KernelLog => SubjectKind::KernelLog,
            Subject::GpuNodes | Subject::Node(_) => SubjectKind::DeviceNodes,
            Subject::Nvml => SubjectKind::Nvml,
            Subject::Gpu(_) => SubjectKind::Gpu,
            Subject::GpuPair(..) | Subject::Iommu => SubjectKind::Topology,
            Subject::NvccOnPath => SubjectKind::NvccOnPath,
            Subject::CudaHome => SubjectKind::CudaHome,
            Subject::Library(l) if l == "libcuda.so.1" => SubjectKind::Libcuda,
            Subject::Library(_) => SubjectKind::Library,
            Subject::Extension(_) => SubjectKind::Extension,
            Subject::Torch(_) => SubjectKind::Torch,
            Subject::PythonImport => SubjectKind::PythonImport,
            // Only the variables the rules read are judged; the rest are context.
            Subject::Env(name)
                if matches!(
                    crate::envvars::category_of(name),
                    Some(Category::Visibility | Category::Debug | Category::Allocator)
                ) =>
            {
                SubjectKind::RuledVariables
            }
            Subject::Env(name) if crate::envvars::category_of(name) == Some(Category::Nccl) => {
                SubjectKind::NcclVariables
            }
            Subject::Environment => SubjectKind::RuledVariables,
            Subject::SmokeNccl => SubjectKind::SmokeNccl,
            Subject::Smoke => SubjectKind::Smoke,
            Subject::SmokeGpu(_)
            | Subject::SmokeStep(_, SmokeStep::Device | SmokeStep::Context | SmokeStep::Kernels) => {
                SubjectKind::SmokeGpu
            }
            Subject::SmokeStep(_, SmokeStep::Matmul) => SubjectKind::SmokeMatmul,
            Subject::SmokeStep(_, SmokeStep::Memory) => SubjectKind::SmokeMemory,
            Subject::SmokeStep(_, SmokeStep::Transfer) => SubjectKind::SmokeTransfer,
            Subject::SmokePeer(..) => SubjectKind::SmokePeer,
            Subject::Shm => SubjectKind::Shm,
            Subject::Container => SubjectKind::Container,
            Subject::Image => SubjectKind::Image,
            _ => return None,
        })
    }
}

impl Subject {
    pub fn module(name: &str) -> Subject {
        Subject::Module(name.to_string())
    }
    pub fn env(name: &str) -> Subject {
        Subject::Env(name.to_string())
    }
    pub fn node(path: &str) -> Subject {
        Subject::Node(path.to_string())
    }
    pub fn library(soname: &str) -> Subject {
        Subject::Library(soname.to_string())
    }
    pub fn toolkit(root: &str) -> Subject {
        Subject::Toolkit(root.to_string())
    }
    pub fn torch(site: &str) -> Subject {
        Subject::Torch(site.to_string())
    }
    pub fn pci(address: &str) -> Subject {
        Subject::PciFunction(address.to_string())
    }
    /// A GPU pair by PCI address, in either order.
    pub fn gpu_pair(a: &str, b: &str) -> Subject {
        let (x, y) = if a <= b { (a, b) } else { (b, a) };
        Subject::GpuPair(x.to_string(), y.to_string())
    }

    /// The summary this subject rolls up into: a summary line is as bad as its worst part.
    pub fn parent(&self) -> Option<Subject> {
        match self {
            Subject::SmokeStep(gpu, _) => Some(Subject::SmokeGpu(*gpu)),
            Subject::SmokeGpu(_) => Some(Subject::Smoke),
            Subject::SmokePeer(..) => Some(Subject::Smoke),
            Subject::SmokeNccl => Some(Subject::Smoke),
            // Not NVML: its line says whether the library answered, and a GPU's fault is
            // marked on that GPU's own row.
            Subject::Node(path) if is_gpu_node(path) => Some(Subject::GpuNodes),
            Subject::PciFunction(_) => Some(Subject::Pci),
            Subject::Env(_) => Some(Subject::Environment),
            _ => None,
        }
    }

    /// This subject and every summary above it, nearest first.
    pub fn with_ancestors(&self) -> Vec<Subject> {
        let mut out = vec![self.clone()];
        while let Some(p) = out.last().and_then(Subject::parent) {
            out.push(p);
        }
        out
    }

    /// Reads a key back from a saved report (`evidence[].fact`); None for keys this
    /// version does not know.
    pub fn parse(key: &str) -> Option<Subject> {
        let fixed = match key {
            "platform:os" => Some(Subject::Os),
            "platform:kernel" => Some(Subject::Kernel),
            "platform:container" => Some(Subject::Container),
            "image" => Some(Subject::Image),
            "platform:wsl" => Some(Subject::Wsl),
            "identity" => Some(Subject::Identity),
            "module:version" => Some(Subject::DriverVersion),
            "pci" => Some(Subject::Pci),
            "nodes" => Some(Subject::GpuNodes),
            "nvml" => Some(Subject::Nvml),
            "gpus" => Some(Subject::GpuCount),
            "toolkit" => Some(Subject::Toolkits),
            "nvcc on PATH" => Some(Subject::NvccOnPath),
            "CUDA_HOME" => Some(Subject::CudaHome),
            "loader path" => Some(Subject::LoaderPath),
            "python" => Some(Subject::PythonImport),
            "smoke" => Some(Subject::Smoke),
            "smoke:nccl" => Some(Subject::SmokeNccl),
            "shm" => Some(Subject::Shm),
            "env" => Some(Subject::Environment),
            "iommu" => Some(Subject::Iommu),
            "kernel_log" => Some(Subject::KernelLog),
            _ => None,
        };
        if fixed.is_some() {
            return fixed;
        }
        let (kind, rest) = key.split_once(':')?;
        let owned = rest.to_string();
        match kind {
            "module" => Some(Subject::Module(owned)),
            "pci" => Some(Subject::PciFunction(owned)),
            "node" => Some(Subject::Node(owned)),
            "gpu" => rest.parse().ok().map(Subject::Gpu),
            "toolkit" => Some(Subject::Toolkit(owned)),
            "library" => Some(Subject::Library(owned)),
            "extension" => Some(Subject::Extension(owned)),
            "program" => Some(Subject::Program(owned)),
            "torch" => Some(Subject::Torch(owned)),
            "package" => Some(Subject::Package(owned)),
            "env" => Some(Subject::Env(owned)),
            "probe" => Some(Subject::Probe(owned)),
            "model" => Some(Subject::GpuModel(owned)),
            "file" => Some(Subject::File(owned)),
            "gpupair" => rest
                .split_once(',')
                .map(|(a, b)| Subject::GpuPair(a.to_string(), b.to_string())),
            "smoke" if rest.starts_with("peer:") => {
                let (from, to) = rest.strip_prefix("peer:")?.split_once('-')?;
                Some(Subject::SmokePeer(from.parse().ok()?, to.parse().ok()?))
            }
            "smoke" => match rest.split_once(':') {
                None => rest.parse().ok().map(Subject::SmokeGpu),
                Some((gpu, step)) => {
                    let gpu = gpu.parse().ok()?;
                    let step = SmokeStep::ALL.into_iter().find(|s| s.as_str() == step)?;
                    Some(Subject::SmokeStep(gpu, step))
                }
            },
            _ => None,
        }
    }
}

/// `/dev/nvidiaN`: one GPU's node (not nvidiactl, nvidia-uvm, nvidia-caps/…).
pub fn is_gpu_node(path: &str) -> bool {
    path.strip_prefix("/dev/nvidia")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Os => f.write_str("platform:os"),
            Subject::Kernel => f.write_str("platform:kernel"),
            Subject::Container => f.write_str("platform:container"),
            Subject::Image => f.write_str("image"),
            Subject::Wsl => f.write_str("platform:wsl"),
            Subject::Identity => f.write_str("identity"),
            Subject::Module(n) => write!(f, "module:{n}"),
            Subject::DriverVersion => f.write_str("module:version"),
            Subject::Pci => f.write_str("pci"),
            Subject::PciFunction(a) => write!(f, "pci:{a}"),
            Subject::GpuNodes => f.write_str("nodes"),
            Subject::Node(p) => write!(f, "node:{p}"),
            Subject::Nvml => f.write_str("nvml"),
            Subject::Gpu(i) => write!(f, "gpu:{i}"),
            Subject::GpuModel(m) => write!(f, "model:{m}"),
            Subject::GpuCount => f.write_str("gpus"),
            Subject::Toolkits => f.write_str("toolkit"),
            Subject::Toolkit(r) => write!(f, "toolkit:{r}"),
            Subject::NvccOnPath => f.write_str("nvcc on PATH"),
            Subject::CudaHome => f.write_str("CUDA_HOME"),
            Subject::LoaderPath => f.write_str("loader path"),
            Subject::Library(s) => write!(f, "library:{s}"),
            Subject::Extension(p) => write!(f, "extension:{p}"),
            Subject::Program(p) => write!(f, "program:{p}"),
            Subject::PythonImport => f.write_str("python"),
            Subject::Torch(s) => write!(f, "torch:{s}"),
            Subject::Package(p) => write!(f, "package:{p}"),
            Subject::Environment => f.write_str("env"),
            Subject::Env(n) => write!(f, "env:{n}"),
            Subject::Smoke => f.write_str("smoke"),
            Subject::SmokeGpu(g) => write!(f, "smoke:{g}"),
            Subject::SmokeStep(g, s) => write!(f, "smoke:{g}:{}", s.as_str()),
            Subject::SmokePeer(a, b) => write!(f, "smoke:peer:{a}-{b}"),
            Subject::SmokeNccl => f.write_str("smoke:nccl"),
            Subject::Probe(p) => write!(f, "probe:{p}"),
            Subject::Shm => f.write_str("shm"),
            Subject::File(p) => write!(f, "file:{p}"),
            Subject::GpuPair(a, b) => write!(f, "gpupair:{a},{b}"),
            Subject::Iommu => f.write_str("iommu"),
            Subject::KernelLog => f.write_str("kernel_log"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_reads_back_as_itself() {
        let all = [
            Subject::Os,
            Subject::Kernel,
            Subject::Container,
            Subject::Wsl,
            Subject::Image,
            Subject::Identity,
            Subject::module("nvidia_uvm"),
            Subject::DriverVersion,
            Subject::Pci,
            Subject::pci("0000:18:00.0"),
            Subject::GpuNodes,
            Subject::node("/dev/nvidia-uvm"),
            Subject::Nvml,
            Subject::Gpu(3),
            Subject::GpuModel("NVIDIA H100 80GB HBM3".into()),
            Subject::GpuCount,
            Subject::Toolkits,
            Subject::toolkit("/usr/local/cuda-12.4"),
            Subject::NvccOnPath,
            Subject::CudaHome,
            Subject::LoaderPath,
            Subject::library("libcuda.so.1"),
            Subject::Program("nvidia-smi".into()),
            Subject::PythonImport,
            Subject::torch("/venv/lib/python3.11/site-packages"),
            Subject::Package("flash-attn".into()),
            Subject::Environment,
            Subject::env("CUDA_VISIBLE_DEVICES"),
            Subject::Smoke,
            Subject::SmokeGpu(1),
            Subject::SmokeStep(7, SmokeStep::Transfer),
            Subject::SmokePeer(0, 7),
            Subject::SmokeNccl,
            Subject::Probe("nvml".into()),
            Subject::Shm,
            Subject::File("/proc/modules".into()),
            Subject::gpu_pair("0000:19:00.0", "0000:18:00.0"),
            Subject::Iommu,
            Subject::KernelLog,
        ];
        for s in all {
            assert_eq!(Subject::parse(&s.to_string()), Some(s.clone()), "{s}");
        }
    }

    #[test]
    fn summaries_sit_above_their_parts() {
        assert_eq!(
            Subject::SmokeStep(1, SmokeStep::Memory).with_ancestors(),
            vec![
                Subject::SmokeStep(1, SmokeStep::Memory),
                Subject::SmokeGpu(1),
                Subject::Smoke
            ]
        );
        assert_eq!(
            Subject::node("/dev/nvidia3").parent(),
            Some(Subject::GpuNodes)
        );
        assert_eq!(Subject::node("/dev/nvidiactl").parent(), None);
        // A GPU's fault is its own row's, not the NVML library line's.
        assert_eq!(Subject::Gpu(0).parent(), None);
    }
}
