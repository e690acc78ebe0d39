//! Compute capabilities: architectures and their CUDA/driver support range,
//! the targets each nvcc can compile for, GPU model names → CC, and the
//! SASS/PTX compatibility rules. Facts from NVIDIA's CUDA Toolkit, Driver and Architecture
//! Matrix, the compiler targets the toolkits' own `ptxas --help` / `nvcc --list-gpu-code`
//! print, and NVIDIA's CUDA GPU lists; every row names its source.

#[cfg(test)]
use super::versions::ArchVariant;
use super::versions::{ComputeCapability, CudaVersion};
use serde::Serialize;

/// Which NVIDIA kernel module flavour an architecture can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum KernelModules {
    /// Maxwell, Pascal, Volta (and Kepler, which predates the open modules).
    ProprietaryOnly,
    /// Turing and newer, where the open modules are the default since R560.
    Either,
    /// Blackwell: the proprietary modules are unsupported.
    OpenOnly,
    /// Jetson/Tegra ship their own driver stack.
    NotApplicable,
    Unknown,
}

// Every row's `kernel_modules`: https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html;
// NVIDIA blog "NVIDIA Transitions Fully Towards Open-Source GPU Kernel Modules".

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ArchRow {
    pub cc: ComputeCapability,
    pub arch: &'static str,
    pub examples: &'static str,
    /// First CUDA toolkit that compiles for this CC.
    pub first_cuda: Option<CudaVersion>,
    /// Last one; None while still supported.
    pub last_cuda: Option<CudaVersion>,
    /// Integrated Jetson/Tegra GPU: binary compatibility across minors does
    /// not apply ("not supported for Tegra").
    pub tegra: bool,
    /// First driver branch that runs this CC, where known.
    pub min_driver_branch: Option<u32>,
    /// Last driver branch that runs this CC; None while still supported.
    pub last_driver_branch: Option<u32>,
    pub kernel_modules: KernelModules,
    pub source: &'static str,
}

const fn cc(major: u32, minor: u32) -> ComputeCapability {
    ComputeCapability::new(major, minor)
}

const fn cu(major: u32, minor: u32) -> Option<CudaVersion> {
    Some(CudaVersion::new(major, minor))
}

// The CUDA and driver-branch columns: NVIDIA's CUDA Toolkit, Driver and Architecture Matrix,
// https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html,
// checked against the target lists of the toolkit binaries (VERIFIED_TARGETS below).

/// One row per CC.
pub static ARCHITECTURES: &[ArchRow] = &[
    ArchRow {
        cc: cc(3, 0),
        arch: "Kepler",
        examples: "GeForce GTX 6xx/7xx (GK10x), Tesla K10",
        first_cuda: cu(6, 0),
        last_cuda: cu(10, 2),
        tegra: false,
        min_driver_branch: None,
        last_driver_branch: Some(470),
        kernel_modules: KernelModules::ProprietaryOnly,
        source: "NVIDIA CUDA Toolkit, Driver and Architecture Matrix (first CUDA \"6.0\", supported \
                 earlier; removed in 11.0; last driver R470)",
    },
    ArchRow {
        cc: cc(3, 2),
        arch: "Kepler (Tegra)",
        examples: "Tegra K1",
        first_cuda: cu(6, 0),
        last_cuda: cu(10, 2),
        tegra: true,
        min_driver_branch: None,
        last_driver_branch: None,
        kernel_modules: KernelModules::NotApplicable,
        source: "NVIDIA CUDA Toolkit, Driver and Architecture Matrix (removed in 11.0)",
    },
    ArchRow {
        cc: cc(3, 5),
        arch: "Kepler",
        examples: "Tesla K20, K40, GeForce GTX 780/Titan",
        first_cuda: cu(6, 0),
        last_cuda: cu(11, 8),
        tegra: false,
        min_driver_branch: None,
        last_driver_branch: Some(470),
        kernel_modules: KernelModules::ProprietaryOnly,
        source: "ptxas --help of CUDA 11.8 lists sm_35, that of 12.0 does not; last driver R470 \
                 (NVIDIA CUDA Toolkit, Driver and Architecture Matrix)",
    },
    ArchRow {
        cc: cc(3, 7),
        arch: "Kepler",
        examples: "Tesla K80",
        first_cuda: cu(6, 0),
        last_cuda: cu(11, 8),
        tegra: false,
        min_driver_branch: None,
        last_driver_branch: Some(470),
        kernel_modules: KernelModules::ProprietaryOnly,
        source: "ptxas --help of CUDA 11.8 lists sm_37, that of 12.0 does not; last driver R470 \
                 (NVIDIA CUDA Toolkit, Driver and Architecture Matrix)",
    },
    ArchRow {
        cc: cc(5, 0),
        arch: "Maxwell",
        examples: "GeForce GTX 750/750 Ti, Quadro K2200/K1200/K620",
        first_cuda: cu(6, 5),
        last_cuda: cu(12, 9),
        tegra: false,
        min_driver_branch: None,
        last_driver_branch: Some(580),
        kernel_modules: KernelModules::ProprietaryOnly,
        source: "NVIDIA CUDA Toolkit, Driver and Architecture Matrix (\"Last Driver Support: R580\"); \
                 ptxas --help of CUDA 12.9 lists it, nvcc --list-gpu-code of 13.0 does not",
    },
    ArchRow {
        cc: cc(5, 2),
        arch: "Maxwell",
        examples: "GeForce GTX 9xx, GTX Titan X, Tesla M40, M60",
        first_cuda: cu(6, 5),
        last_cuda: cu(12, 9),
        tegra: false,
        min_driver_branch: None,
        last_driver_branch: Some(580),
        kernel_modules: KernelModules::ProprietaryOnly,
        source: "NVIDIA CUDA Toolkit, Driver and Architecture Matrix (last driver R580); ptxas --help of \
                 CUDA 12.9 lists it, nvcc --list-gpu-code of 13.0 does not",
    },
    ArchRow {
        cc: cc(5, 3),
        arch: "Maxwell (Tegra)",
        examples: "Jetson Nano, Jetson TX1",
        first_cuda: cu(6, 5),
        last_cuda: cu(12, 9),
        tegra: true,
        min_driver_branch: None,
        last_driver_branch: None,
        kernel_modules: KernelModules::NotApplicable,
        source: "ptxas --help of CUDA 12.9 lists it, nvcc --list-gpu-code of 13.0 does not",
    },
    ArchRow {
        cc: cc(6, 0),
        arch: "Pascal",
        examples: "Tesla P100, Quadro GP100",
        first_cuda: cu(8, 0),
        last_cuda: cu(12, 9),
        tegra: false,
        min_driver_branch: None,
        last_driver_branch: Some(580),
        kernel_modules: KernelModules::ProprietaryOnly,
        source: "NVIDIA CUDA Toolkit, Driver and Architecture Matrix (last driver R580); ptxas --help of \
                 CUDA 12.9 lists it, nvcc --list-gpu-code of 13.0 does not",
    },
    ArchRow {
        cc: cc(6, 1),
        arch: "Pascal",
        examples: "GeForce GTX 10xx, Titan Xp, Tesla P40, P4",
        first_cuda: cu(8, 0),
        last_cuda: cu(12, 9),
        tegra: false,
        min_driver_branch: None,
        last_driver_branch: Some(580),
        kernel_modules: KernelModules::ProprietaryOnly,
        source: "NVIDIA CUDA Toolkit, Driver and Architecture Matrix (last driver R580); ptxas --help of \
                 CUDA 12.9 lists it, nvcc --list-gpu-code of 13.0 does not",
    },
    ArchRow {
        cc: cc(6, 2),
        arch: "Pascal (Tegra)",
        examples: "Jetson TX2",
        first_cuda: cu(8, 0),
        last_cuda: cu(12, 9),
        tegra: true,
        min_driver_branch: None,
        last_driver_branch: None,
        kernel_modules: KernelModules::NotApplicable,
        source: "ptxas --help of CUDA 12.9 lists it, nvcc --list-gpu-code of 13.0 does not",
    },
    ArchRow {
        cc: cc(7, 0),
        arch: "Volta",
        examples: "Tesla V100, Titan V, Quadro GV100",
        first_cuda: cu(9, 0),
        last_cuda: cu(12, 9),
        tegra: false,
        min_driver_branch: None,
        last_driver_branch: Some(580),
        kernel_modules: KernelModules::ProprietaryOnly,
        source: "NVIDIA CUDA Toolkit, Driver and Architecture Matrix (last driver R580); ptxas --help of \
                 CUDA 12.9 lists it, nvcc --list-gpu-code of 13.0 does not",
    },
    ArchRow {
        cc: cc(7, 2),
        arch: "Volta (Tegra)",
        examples: "Jetson AGX Xavier, Xavier NX",
        first_cuda: cu(9, 1),
        last_cuda: cu(12, 9),
        tegra: true,
        min_driver_branch: None,
        last_driver_branch: None,
        kernel_modules: KernelModules::NotApplicable,
        source: "first CUDA per clang's MinVersionForOffloadArch (llvm-project \
                 clang/lib/Basic/Cuda.cpp); ptxas --help of CUDA 12.9 lists it, nvcc \
                 --list-gpu-code of 13.0 does not",
    },
    ArchRow {
        cc: cc(7, 5),
        arch: "Turing",
        examples: "Tesla T4, GeForce RTX 20xx, GTX 16xx, Quadro RTX, T400–T1000",
        first_cuda: cu(10, 0),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(410),
        last_driver_branch: None,
        kernel_modules: KernelModules::Either,
        source: "R410 inferred from the CUDA 10.0 driver (CUDA RN Table 3)",
    },
    ArchRow {
        cc: cc(8, 0),
        arch: "Ampere",
        examples: "A100, A30",
        first_cuda: cu(11, 0),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(450),
        last_driver_branch: None,
        kernel_modules: KernelModules::Either,
        source: "R450 inferred from the CUDA 11.0 driver (CUDA RN Table 3)",
    },
    ArchRow {
        cc: cc(8, 6),
        arch: "Ampere",
        examples: "GeForce RTX 30xx, RTX A2000–A6000, A10, A16, A40, A2",
        first_cuda: cu(11, 1),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(455),
        last_driver_branch: None,
        kernel_modules: KernelModules::Either,
        source: "R455 inferred from the CUDA 11.1 driver (CUDA RN Table 3)",
    },
    ArchRow {
        cc: cc(8, 7),
        arch: "Ampere (Tegra)",
        examples: "Jetson AGX Orin, Orin NX, Orin Nano",
        first_cuda: cu(11, 4),
        last_cuda: None,
        tegra: true,
        min_driver_branch: None,
        last_driver_branch: None,
        kernel_modules: KernelModules::NotApplicable,
        source: "first CUDA 11.4 per clang's MinVersionForOffloadArch (llvm-project \
                 clang/lib/Basic/Cuda.cpp) and CUDA 11.4 NVRTC's arch list (cupy/cupy#5434); \
                 nixpkgs' 11.5 is not followed",
    },
    ArchRow {
        cc: cc(8, 8),
        arch: "Ampere-class (Tegra?)",
        examples: "not on NVIDIA's CC lists (product UNCONFIRMED)",
        first_cuda: cu(13, 0),
        last_cuda: None,
        tegra: true,
        min_driver_branch: None,
        last_driver_branch: None,
        kernel_modules: KernelModules::Unknown,
        source: "nvcc --list-gpu-code of CUDA 13.0 lists sm_88; product and Tegra-ness \
                 UNCONFIRMED",
    },
    ArchRow {
        cc: cc(8, 9),
        arch: "Ada Lovelace",
        examples: "L4, L40, L40S, GeForce RTX 40xx, RTX 6000/5000/4500/4000/2000 Ada",
        first_cuda: cu(11, 8),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(520),
        last_driver_branch: None,
        kernel_modules: KernelModules::Either,
        source: "ptxas --help of CUDA 11.8 lists it; R520 inferred from the CUDA 11.8 driver, UNCONFIRMED",
    },
    ArchRow {
        cc: cc(9, 0),
        arch: "Hopper",
        examples: "H100, H200, GH200",
        first_cuda: cu(11, 8),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(520),
        last_driver_branch: None,
        kernel_modules: KernelModules::Either,
        source: "ptxas --help of CUDA 11.8 lists it; R520 inferred from the CUDA 11.8 \
                 driver, UNCONFIRMED; Grace Hopper (GH200) needs the open modules",
    },
    ArchRow {
        cc: cc(10, 0),
        arch: "Blackwell",
        examples: "B200, GB200",
        first_cuda: cu(12, 8),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(570),
        last_driver_branch: None,
        kernel_modules: KernelModules::OpenOnly,
        source: "ptxas --help of CUDA 12.8 lists it; R570 = CUDA 12.8 driver (CUDA RN Table 3); \
                 open modules required (NVIDIA blog on open-source GPU kernel modules)",
    },
    ArchRow {
        cc: cc(10, 1),
        arch: "Blackwell (Tegra, pre-13.0 name of 11.0)",
        examples: "Jetson Thor under CUDA 12.8/12.9",
        first_cuda: cu(12, 8),
        last_cuda: cu(12, 9),
        tegra: true,
        min_driver_branch: None,
        last_driver_branch: None,
        kernel_modules: KernelModules::NotApplicable,
        source: "ptxas --help of CUDA 12.8 and 12.9 lists sm_101; nvcc --list-gpu-code of 13.0 lists sm_110 instead",
    },
    ArchRow {
        cc: cc(10, 3),
        arch: "Blackwell Ultra",
        examples: "B300, GB300",
        first_cuda: cu(12, 9),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(575),
        last_driver_branch: None,
        kernel_modules: KernelModules::OpenOnly,
        source: "ptxas --help of CUDA 12.9 lists it; R575 inferred from the CUDA 12.9 driver, \
                 UNCONFIRMED; open modules required for Blackwell",
    },
    ArchRow {
        cc: cc(10, 7),
        arch: "Rubin",
        examples: "Vera Rubin (NVL72)",
        first_cuda: cu(13, 4),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(615),
        last_driver_branch: None,
        kernel_modules: KernelModules::Unknown,
        source: "nvcc --list-gpu-code of CUDA 13.4 lists sm_107, preview; GA in 13.5; R615 \
                 per NVIDIA/cutlass v4.8.0dev notes",
    },
    ArchRow {
        cc: cc(11, 0),
        arch: "Blackwell (Tegra)",
        examples: "Jetson T5000, T4000 (Thor)",
        first_cuda: cu(13, 0),
        last_cuda: None,
        tegra: true,
        min_driver_branch: None,
        last_driver_branch: None,
        kernel_modules: KernelModules::NotApplicable,
        source: "nvcc --list-gpu-code of CUDA 13.0 lists sm_110; https://developer.nvidia.com/cuda-gpus",
    },
    ArchRow {
        cc: cc(12, 0),
        arch: "Blackwell",
        examples: "GeForce RTX 50xx, RTX PRO 6000/5000/4500/4000/2000 Blackwell",
        first_cuda: cu(12, 8),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(570),
        last_driver_branch: None,
        kernel_modules: KernelModules::OpenOnly,
        source: "ptxas --help of CUDA 12.8 lists it; R570 = CUDA 12.8 driver (CUDA RN Table 3); open modules required",
    },
    ArchRow {
        cc: cc(12, 1),
        arch: "Blackwell",
        examples: "GB10 (DGX Spark)",
        first_cuda: cu(12, 9),
        last_cuda: None,
        tegra: false,
        min_driver_branch: Some(580),
        last_driver_branch: None,
        kernel_modules: KernelModules::OpenOnly,
        source: "ptxas --help of CUDA 12.9 lists it; R580 UNCONFIRMED; open modules \
                 required for Blackwell",
    },
];

pub fn arch_row(cc: ComputeCapability) -> Option<&'static ArchRow> {
    ARCHITECTURES.iter().find(|r| r.cc == cc)
}

fn is_tegra(cc: ComputeCapability) -> bool {
    arch_row(cc).is_some_and(|r| r.tegra)
}

/// Whether a cubin (SASS) for `target` runs on `device`: same major, device
/// minor >= target minor, and never across Tegra parts ("a cubin object
/// generated for compute capability X.y will only execute on devices of
/// compute capability X.z where z≥y"; "not supported for Tegra").
pub fn sass_runs_on(target: ComputeCapability, device: ComputeCapability) -> bool {
    if target == device {
        return true;
    }
    target.major == device.major
        && target.minor <= device.minor
        && !is_tegra(target)
        && !is_tegra(device)
}

/// Like [`sass_runs_on`] for suffixed targets: `sm_XYa` runs only on XY.
#[cfg(test)]
pub fn sass_variant_runs_on(
    target: ComputeCapability,
    variant: ArchVariant,
    device: ComputeCapability,
) -> bool {
    match variant {
        ArchVariant::ArchSpecific => target == device,
        ArchVariant::Generic | ArchVariant::FamilySpecific => sass_runs_on(target, device),
    }
}

/// Whether PTX for `target` can be JIT-compiled for `device`: any CC at or
/// above it, given a driver that knows that PTX ISA version.
pub fn ptx_runs_on(target: ComputeCapability, device: ComputeCapability) -> bool {
    target <= device
}

// SASS and PTX compatibility: CUDA C++ Programming Guide §Binary Compatibility
// (https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility).

/// Real `sm_XY` targets an nvcc release can compile for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompilerTargets {
    pub toolkit: CudaVersion,
    /// Sorted ascending, without the `a`/`f` variants.
    pub targets: Vec<ComputeCapability>,
    /// Set when `toolkit` is newer than known and the list of this release is assumed.
    pub assumed_from: Option<CudaVersion>,
    pub source: &'static str,
}

impl CompilerTargets {
    pub fn min(&self) -> ComputeCapability {
        self.targets.first().copied().unwrap_or(cc(0, 0))
    }

    pub fn max(&self) -> ComputeCapability {
        self.targets.last().copied().unwrap_or(cc(0, 0))
    }

    /// Exactly this `sm_XY` is in the list.
    pub fn supports(&self, target: ComputeCapability) -> bool {
        self.targets.contains(&target)
    }
}

struct VerifiedTargets {
    from: CudaVersion,
    to: CudaVersion,
    /// `sm_XY` numbers as nvcc prints them: 89 is 8.9, 120 is 12.0.
    sms: &'static [u32],
    source: &'static str,
}

impl VerifiedTargets {
    fn targets(&self) -> Vec<ComputeCapability> {
        self.sms.iter().map(|&n| cc(n / 10, n % 10)).collect()
    }
}

const fn v(major: u32, minor: u32) -> CudaVersion {
    CudaVersion::new(major, minor)
}

/// Read from the toolkit binaries: `ptxas --help` (11.7–12.9) and `nvcc --list-gpu-code` (13.x).
static VERIFIED_TARGETS: &[VerifiedTargets] = &[
    VerifiedTargets {
        from: v(11, 7),
        to: v(11, 7),
        sms: &[35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87],
        source: "ptxas --help of CUDA 11.7 (the toolkit binary)",
    },
    VerifiedTargets {
        from: v(11, 8),
        to: v(11, 8),
        sms: &[
            35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90,
        ],
        source: "ptxas --help of CUDA 11.8 (the toolkit binary)",
    },
    VerifiedTargets {
        from: v(12, 0),
        to: v(12, 6),
        sms: &[50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90],
        source: "ptxas --help of CUDA 12.0–12.6 (the toolkit binaries)",
    },
    VerifiedTargets {
        from: v(12, 8),
        to: v(12, 8),
        sms: &[
            50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 120,
        ],
        source: "ptxas --help of CUDA 12.8 (the toolkit binary)",
    },
    VerifiedTargets {
        from: v(12, 9),
        to: v(12, 9),
        sms: &[
            50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121,
        ],
        source: "ptxas --help of CUDA 12.9 (the toolkit binary)",
    },
    VerifiedTargets {
        from: v(13, 0),
        to: v(13, 3),
        sms: &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121],
        source: "nvcc --list-gpu-code of CUDA 13.0–13.3 (the toolkit binaries)",
    },
    VerifiedTargets {
        from: v(13, 4),
        to: v(13, 5),
        sms: &[75, 80, 86, 87, 88, 89, 90, 100, 103, 107, 110, 120, 121],
        source: "nvcc --list-gpu-code of CUDA 13.4–13.5 (the toolkit binaries)",
    },
];

/// The verified rows and the model names, for compat::sources.
pub(super) fn sourced_rows(push: &mut impl FnMut(&'static str, String, &str)) {
    for t in VERIFIED_TARGETS {
        push(
            "compiler targets",
            format!("CUDA {}–{}", t.from, t.to),
            t.source,
        );
    }
    let tables: [(&str, &[Model]); 9] = [
        ("data center", DATA_CENTER),
        ("Quadro", QUADRO),
        ("Quadro RTX", QUADRO_RTX),
        ("RTX A", RTX_A),
        ("T series", T_SERIES),
        ("GeForce RTX", GEFORCE_RTX),
        ("GeForce GTX", GEFORCE_GTX),
        ("GeForce GT", GEFORCE_GT),
        ("GeForce MX", GEFORCE_MX),
    ];
    for (family, models) in tables {
        for m in models {
            push("GPU models", format!("{family} {}", m.word), m.source);
        }
    }
}

/// Each released toolkit's verified target list ("12.8" → [50, 52, …]), as JSON keys.
pub fn verified_target_lists() -> std::collections::BTreeMap<String, Vec<u32>> {
    let mut out = std::collections::BTreeMap::new();
    for t in VERIFIED_TARGETS {
        for tk in all_released() {
            if tk >= t.from && tk <= t.to {
                out.insert(tk.to_string(), t.sms.to_vec());
            }
        }
    }
    out
}

/// Released CUDA minors per major, from 9.0 on (12.7 was never released).
static RELEASED_TOOLKITS: &[(u32, &[u32])] = &[
    (9, &[0, 1, 2]),
    (10, &[0, 1, 2]),
    (11, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
    (12, &[0, 1, 2, 3, 4, 5, 6, 8, 9]),
    (13, &[0, 1, 2, 3, 4, 5]),
];

fn released(tk: CudaVersion) -> bool {
    RELEASED_TOOLKITS
        .iter()
        .any(|(major, minors)| *major == tk.major && minors.contains(&tk.minor))
}

fn newest_released() -> Option<CudaVersion> {
    let (major, minors) = RELEASED_TOOLKITS.last()?;
    Some(v(*major, *minors.last()?))
}

fn all_released() -> Vec<CudaVersion> {
    RELEASED_TOOLKITS
        .iter()
        .flat_map(|(major, minors)| minors.iter().map(|m| v(*major, *m)))
        .collect()
}

const DERIVED_SOURCE: &str =
    "derived from the first/last CUDA columns of ARCHITECTURES in src/compat/arch.rs \
     (no toolkit binary inspected)";

/// The CCs whose first..=last CUDA range contains `tk`.
fn derived_targets(tk: CudaVersion) -> Vec<ComputeCapability> {
    ARCHITECTURES
        .iter()
        .filter(|r| r.first_cuda.is_some_and(|f| f <= tk) && r.last_cuda.is_none_or(|l| tk <= l))
        .map(|r| r.cc)
        .collect()
}

/// The `sm_XY` targets of toolkit `tk`'s nvcc: verified lists for 11.7+,
/// derived from the architecture table for 9.0–11.6. A 13.x newer than the
/// newest known release gets that release's list with `assumed_from` set.
pub fn compiler_targets(tk: CudaVersion) -> Option<CompilerTargets> {
    let newest = newest_released()?;
    let (from, assumed_from) = if released(tk) {
        (tk, None)
    } else if tk.major == newest.major && tk > newest {
        (newest, Some(newest))
    } else {
        return None;
    };
    let (mut targets, source) = match VERIFIED_TARGETS
        .iter()
        .find(|l| l.from <= from && from <= l.to)
    {
        Some(l) => (l.targets(), l.source),
        None => (derived_targets(from), DERIVED_SOURCE),
    };
    targets.sort();
    Some(CompilerTargets {
        toolkit: tk,
        targets,
        assumed_from,
        source,
    })
}

/// Market segment, as far as forward compatibility cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ProductClass {
    DataCenter,
    GeForce,
    Workstation,
    Jetson,
    Unknown,
}

impl ProductClass {
    /// Forward compatibility is for data-center GPUs and Jetson (which has its
    /// own upgrade matrix); GeForce and workstation cards fail with error 804.
    /// The few "NGC Server Ready" RTX SKUs that also support it are not told
    /// apart from other workstation cards.
    pub fn supports_forward_compat(self) -> Option<bool> {
        match self {
            ProductClass::DataCenter | ProductClass::Jetson => Some(true),
            ProductClass::GeForce | ProductClass::Workstation => Some(false),
            ProductClass::Unknown => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GpuModel {
    pub cc: ComputeCapability,
    pub class: ProductClass,
    pub source: &'static str,
}

const GPUS: &str = "https://developer.nvidia.com/cuda-gpus";
const LEGACY: &str = "https://developer.nvidia.com/cuda-legacy-gpus";
const GPUS_OLD: &str =
    "developer.nvidia.com/cuda-gpus (older revision, as copied by third parties)";
const SECONDARY: &str = "secondary: GPU die per press coverage of NVIDIA's announcement; not on \
                         NVIDIA's CC lists";

/// A model word as it appears in the name, e.g. "A100" or "4090".
struct Model {
    word: &'static str,
    cc: ComputeCapability,
    source: &'static str,
}

const fn m(word: &'static str, major: u32, minor: u32, source: &'static str) -> Model {
    Model {
        word,
        cc: cc(major, minor),
        source,
    }
}

static DATA_CENTER: &[Model] = &[
    m("B300", 10, 3, GPUS),
    m("GB300", 10, 3, GPUS),
    m("B200", 10, 0, GPUS),
    m("GB200", 10, 0, GPUS),
    m("H100", 9, 0, GPUS),
    m("H200", 9, 0, GPUS),
    m("GH200", 9, 0, GPUS),
    m("H800", 9, 0, "secondary: export variant of H100"),
    m("H20", 9, 0, "secondary: export variant of Hopper"),
    m("L4", 8, 9, GPUS),
    m("L40", 8, 9, GPUS),
    m("L40S", 8, 9, GPUS),
    m("L20", 8, 9, "secondary: export variant of Ada (AD102)"),
    m("A100", 8, 0, GPUS),
    m("A30", 8, 0, GPUS),
    m("A800", 8, 0, "secondary: export variant of A100"),
    m("A40", 8, 6, GPUS),
    m("A10", 8, 6, GPUS),
    m("A10G", 8, 6, "secondary: AWS variant of A10 (GA102)"),
    m("A16", 8, 6, GPUS),
    m("A2", 8, 6, GPUS),
    m("T4", 7, 5, GPUS_OLD),
    m("V100", 7, 0, LEGACY),
    m("V100S", 7, 0, "secondary: V100S is a V100 (GV100)"),
    m("P100", 6, 0, LEGACY),
    m("P40", 6, 1, LEGACY),
    m("P4", 6, 1, LEGACY),
    m("M60", 5, 2, LEGACY),
    m("M40", 5, 2, LEGACY),
    m("K80", 3, 7, GPUS_OLD),
    m("K40", 3, 5, GPUS_OLD),
    m("K40C", 3, 5, GPUS_OLD),
    m("K40M", 3, 5, GPUS_OLD),
    m("K20", 3, 5, GPUS_OLD),
    m("K20C", 3, 5, GPUS_OLD),
    m("K20M", 3, 5, GPUS_OLD),
    m("K20X", 3, 5, GPUS_OLD),
    m("K20XM", 3, 5, GPUS_OLD),
    m("K10", 3, 0, GPUS_OLD),
];

/// After "Quadro".
static QUADRO: &[Model] = &[
    m("GV100", 7, 0, LEGACY),
    m("GP100", 6, 0, LEGACY),
    m("P6000", 6, 1, LEGACY),
    m("P5200", 6, 1, LEGACY),
    m("P5000", 6, 1, LEGACY),
    m("P4200", 6, 1, LEGACY),
    m("P4000", 6, 1, LEGACY),
    m("P3200", 6, 1, LEGACY),
    m("P3000", 6, 1, LEGACY),
    m("P2200", 6, 1, LEGACY),
    m("P2000", 6, 1, LEGACY),
    m("P1000", 6, 1, LEGACY),
    m("P620", 6, 1, LEGACY),
    m("P600", 6, 1, LEGACY),
    m("P520", 6, 1, LEGACY),
    m("P500", 6, 1, LEGACY),
    m("P400", 6, 1, LEGACY),
    m("M6000", 5, 2, LEGACY),
    m("M5000", 5, 2, LEGACY),
    m("M4000", 5, 2, LEGACY),
    m("M2000", 5, 2, LEGACY),
    m("M5500M", 5, 2, LEGACY),
    m("M2200", 5, 2, LEGACY),
    m("M620", 5, 2, LEGACY),
    m("M1200", 5, 0, LEGACY),
    m("M520", 5, 0, LEGACY),
    m("M5000M", 5, 0, LEGACY),
    m("M4000M", 5, 0, LEGACY),
    m("M3000M", 5, 0, LEGACY),
    m("M2000M", 5, 0, LEGACY),
    m("M1000M", 5, 0, LEGACY),
    m("M600M", 5, 0, LEGACY),
    m("M500M", 5, 0, LEGACY),
    m("K2200", 5, 0, LEGACY),
    m("K1200", 5, 0, LEGACY),
    m("K620", 5, 0, LEGACY),
    m("K620M", 5, 0, LEGACY),
    m("K6000", 3, 5, GPUS_OLD),
    m("K5200", 3, 5, GPUS_OLD),
    m("K5000", 3, 0, GPUS_OLD),
    m("K4200", 3, 0, GPUS_OLD),
    m("K4000", 3, 0, GPUS_OLD),
    m("K2000", 3, 0, GPUS_OLD),
    m("K2000D", 3, 0, GPUS_OLD),
    m("K600", 3, 0, GPUS_OLD),
    m("K420", 3, 0, GPUS_OLD),
];

/// "Quadro RTX nnnn" (Turing).
static QUADRO_RTX: &[Model] = &[
    m("8000", 7, 5, GPUS_OLD),
    m("6000", 7, 5, GPUS_OLD),
    m("5000", 7, 5, GPUS_OLD),
    m("4000", 7, 5, GPUS_OLD),
    m("3000", 7, 5, GPUS_OLD),
];

/// "RTX Annnn" (Ampere workstation, desktop and laptop).
static RTX_A: &[Model] = &[
    m("A6000", 8, 6, GPUS),
    m("A5500", 8, 6, GPUS_OLD),
    m("A5000", 8, 6, GPUS),
    m("A4500", 8, 6, GPUS_OLD),
    m("A4000", 8, 6, GPUS),
    m("A3000", 8, 6, GPUS),
    m("A2000", 8, 6, GPUS),
    m("A1000", 8, 6, GPUS_OLD),
    m("A500", 8, 6, GPUS_OLD),
];

/// Turing workstation cards named "T1000" or "Quadro T1000".
static T_SERIES: &[Model] = &[
    m("T1000", 7, 5, GPUS_OLD),
    m("T600", 7, 5, GPUS_OLD),
    m("T400", 7, 5, GPUS_OLD),
    m("T1200", 7, 5, GPUS_OLD),
    m("T2000", 7, 5, GPUS_OLD),
    m("T500", 7, 5, GPUS_OLD),
    m("T550", 7, 5, GPUS_OLD),
];

/// "GeForce RTX nnnn".
static GEFORCE_RTX: &[Model] = &[
    m("5090", 12, 0, GPUS),
    m("5080", 12, 0, GPUS),
    m("5070", 12, 0, GPUS),
    m("5060", 12, 0, GPUS),
    m("5050", 12, 0, GPUS),
    m("4090", 8, 9, GPUS),
    m("4080", 8, 9, GPUS),
    m("4070", 8, 9, GPUS),
    m("4060", 8, 9, GPUS),
    m("4050", 8, 9, GPUS),
    m("3090", 8, 6, GPUS),
    m("3080", 8, 6, GPUS),
    m("3070", 8, 6, GPUS),
    m("3060", 8, 6, GPUS),
    m("3050", 8, 6, GPUS),
    m("2080", 7, 5, GPUS_OLD),
    m("2070", 7, 5, GPUS_OLD),
    m("2060", 7, 5, GPUS_OLD),
    // Numbered like Turing, but a GA107 (Ampere).
    m("2050", 8, 6, SECONDARY),
];

/// "GeForce GTX nnn(n)".
static GEFORCE_GTX: &[Model] = &[
    m("1660", 7, 5, GPUS_OLD),
    m("1650", 7, 5, GPUS_OLD),
    m("1630", 7, 5, SECONDARY),
    m("1080", 6, 1, LEGACY),
    m("1070", 6, 1, LEGACY),
    m("1060", 6, 1, LEGACY),
    m("1050", 6, 1, LEGACY),
    m("980", 5, 2, LEGACY),
    m("970", 5, 2, LEGACY),
    m("960", 5, 2, LEGACY),
    m("950", 5, 2, LEGACY),
    m("750", 5, 0, LEGACY),
    m("780", 3, 5, GPUS_OLD),
    m("770", 3, 0, GPUS_OLD),
    m("760", 3, 0, GPUS_OLD),
    m("690", 3, 0, GPUS_OLD),
    m("680", 3, 0, GPUS_OLD),
    m("670", 3, 0, GPUS_OLD),
    m("660", 3, 0, GPUS_OLD),
    m("650", 3, 0, GPUS_OLD),
];

/// "GeForce GT nnnn": only the Pascal ones; GT 6xx/7xx mix Fermi and Kepler.
static GEFORCE_GT: &[Model] = &[m("1030", 6, 1, GPUS_OLD)];

/// "GeForce MXnnn" (laptop).
static GEFORCE_MX: &[Model] = &[
    m("MX570", 8, 6, SECONDARY),
    m("MX550", 7, 5, SECONDARY),
    m("MX450", 7, 5, GPUS_OLD),
    m("MX350", 6, 1, GPUS_OLD),
    m("MX330", 6, 1, GPUS_OLD),
    m("MX250", 6, 1, GPUS_OLD),
    m("MX230", 6, 1, GPUS_OLD),
    m("MX150", 6, 1, GPUS_OLD),
    m("MX130", 5, 0, GPUS_OLD),
    m("MX110", 5, 0, GPUS_OLD),
];

fn find(table: &'static [Model], word: &str) -> Option<&'static Model> {
    table.iter().find(|m| m.word == word)
}

fn model(m: &'static Model, class: ProductClass) -> GpuModel {
    GpuModel {
        cc: m.cc,
        class,
        source: m.source,
    }
}

fn fixed(major: u32, minor: u32, class: ProductClass, source: &'static str) -> GpuModel {
    GpuModel {
        cc: cc(major, minor),
        class,
        source,
    }
}

/// Compute capability and product class from a GPU name as the driver
/// reports it ("NVIDIA GeForce RTX 4090", "Tesla V100-SXM2-32GB"). It reads
/// whole words and settles the brand first (Jetson, RTX PRO, TITAN, Quadro,
/// GeForce, RTX), so "RTX A2000" is not the data-center A2 and "RTX 6000 Ada"
/// is not the Quadro RTX 6000. Names it does not know exactly give None.
pub fn gpu_from_name(name: &str) -> Option<GpuModel> {
    use ProductClass::*;
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && *w != "NVIDIA")
        .collect();
    let has = |w: &str| words.contains(&w);
    let after = |w: &str| {
        let i = words.iter().position(|x| *x == w)?;
        words.get(i + 1).copied()
    };

    // Jetson/Tegra first: "Jetson Orin Nano" is Orin, not the Maxwell Nano.
    if ["JETSON", "TEGRA", "ORIN", "XAVIER", "THOR"]
        .iter()
        .any(|w| has(w))
    {
        let r = if has("ORIN") {
            fixed(8, 7, Jetson, GPUS)
        } else if has("XAVIER") {
            fixed(7, 2, Jetson, LEGACY)
        } else if has("THOR") || (has("JETSON") && (has("T5000") || has("T4000"))) {
            // Reports 11.0 from CUDA 13.0 on (10.1 before).
            fixed(11, 0, Jetson, GPUS)
        } else if has("TX2") || (has("TEGRA") && after("TEGRA") == Some("X2")) {
            fixed(6, 2, Jetson, LEGACY)
        } else if has("TX1") || has("NANO") || (has("TEGRA") && after("TEGRA") == Some("X1")) {
            fixed(5, 3, Jetson, LEGACY)
        } else if has("TEGRA") && after("TEGRA") == Some("K1") {
            fixed(
                3,
                2,
                Jetson,
                "NVIDIA CUDA Toolkit, Driver and Architecture Matrix",
            )
        } else {
            return None;
        };
        return Some(r);
    }
    if has("GB10") {
        // Listed in the data-center column of NVIDIA's CC page.
        return Some(fixed(12, 1, DataCenter, GPUS));
    }
    if has("RTX") && has("PRO") {
        if !has("BLACKWELL") {
            return None;
        }
        let class = if has("SERVER") {
            DataCenter
        } else {
            Workstation
        };
        return Some(fixed(12, 0, class, GPUS));
    }
    if has("TITAN") {
        let gtx = has("GTX");
        let r = match after("TITAN") {
            Some("RTX") => fixed(7, 5, GeForce, GPUS_OLD),
            Some("V") => fixed(7, 0, GeForce, LEGACY),
            Some("XP") => fixed(6, 1, GeForce, LEGACY),
            // Maxwell "GeForce GTX TITAN X" vs Pascal "NVIDIA TITAN X (Pascal)".
            Some("X") if gtx => fixed(5, 2, GeForce, LEGACY),
            Some("X") => fixed(6, 1, GeForce, LEGACY),
            Some("Z" | "BLACK") | None if gtx => fixed(3, 5, GeForce, GPUS_OLD),
            _ => return None,
        };
        return Some(r);
    }
    if has("QUADRO") {
        if has("RTX") {
            return find(QUADRO_RTX, after("RTX")?).map(|m| model(m, Workstation));
        }
        return words
            .iter()
            .find_map(|w| find(QUADRO, w).or_else(|| find(T_SERIES, w)))
            .map(|m| model(m, Workstation));
    }
    if has("GEFORCE") {
        return geforce(&words);
    }
    if has("RTX") {
        if has("ADA") {
            return Some(fixed(8, 9, Workstation, GPUS));
        }
        return find(RTX_A, after("RTX")?).map(|m| model(m, Workstation));
    }
    if let Some(m) = words.iter().find_map(|w| find(T_SERIES, w)) {
        return Some(model(m, Workstation));
    }
    words
        .iter()
        .find_map(|w| find(DATA_CENTER, w))
        .map(|m| model(m, DataCenter))
}

fn geforce(words: &[&str]) -> Option<GpuModel> {
    let after = |w: &str| {
        let i = words.iter().position(|x| *x == w)?;
        Some((words.get(i + 1).copied()?, words.get(i + 2).copied()))
    };
    if let Some(m) = words.iter().find_map(|w| find(GEFORCE_MX, w)) {
        return Some(model(m, ProductClass::GeForce));
    }
    let (table, (number, suffix)) = if let Some(a) = after("RTX") {
        (GEFORCE_RTX, a)
    } else if let Some(a) = after("GTX") {
        (GEFORCE_GTX, a)
    } else if let Some(a) = after("GT") {
        (GEFORCE_GT, a)
    } else {
        return None;
    };
    // A lone letter after the number marks a different die: "RTX 3050 A" is
    // an Ada part. "D" (4090 D, 5090 D) is the same die.
    if suffix.is_some_and(|s| s.len() == 1 && s != "D") {
        return None;
    }
    find(table, number).map(|m| model(m, ProductClass::GeForce))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProductClass::*;

    #[test]
    fn architecture_table_is_complete_and_sorted() {
        let ccs: Vec<String> = ARCHITECTURES.iter().map(|r| r.cc.to_string()).collect();
        assert_eq!(
            ccs.join(" "),
            "3.0 3.2 3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.8 8.9 9.0 10.0 \
             10.1 10.3 10.7 11.0 12.0 12.1"
        );
        for r in ARCHITECTURES {
            if let (Some(f), Some(l)) = (r.first_cuda, r.last_cuda) {
                assert!(f <= l, "{}", r.cc);
            }
            assert!(!r.source.is_empty());
        }
        assert_eq!(arch_row(cc(8, 9)).unwrap().arch, "Ada Lovelace");
        assert!(arch_row(cc(8, 7)).unwrap().tegra);
        assert_eq!(arch_row(cc(6, 1)).unwrap().last_driver_branch, Some(580));
        assert_eq!(
            arch_row(cc(12, 0)).unwrap().kernel_modules,
            KernelModules::OpenOnly
        );
        assert!(arch_row(cc(2, 1)).is_none());
    }

    #[test]
    fn verified_lists_match_the_table() {
        // The first/last columns reproduce every binary-verified list, which is
        // what makes the derived pre-11.7 lists trustworthy.
        for l in VERIFIED_TARGETS {
            let range = all_released()
                .into_iter()
                .filter(|t| l.from <= *t && *t <= l.to);
            for tk in range {
                assert_eq!(derived_targets(tk), l.targets(), "CUDA {tk}");
            }
        }
    }

    #[test]
    fn compiler_target_lists() {
        let t = |a, b| compiler_targets(v(a, b)).unwrap();
        let t115 = t(11, 5);
        assert!(t115.supports(cc(8, 6)));
        assert!(t115.supports(cc(8, 7)));
        assert!(!t115.supports(cc(8, 9)));
        assert_eq!(t115.source, DERIVED_SOURCE);
        assert_eq!(t115.min(), cc(3, 5));
        let t130 = t(13, 0);
        assert!(!t130.supports(cc(6, 1)));
        assert!(t130.supports(cc(11, 0)));
        assert!(!t130.supports(cc(10, 1)));
        assert_eq!(t130.min(), cc(7, 5));
        assert_eq!(t130.max(), cc(12, 1));
        assert!(t(12, 8).supports(cc(12, 0)));
        assert!(!t(12, 6).supports(cc(12, 0)));
        assert!(!t(12, 0).supports(cc(3, 7)));
        assert!(t(11, 8).supports(cc(3, 7)));
        assert!(t(10, 2).supports(cc(3, 0)));
        assert!(t(10, 0).supports(cc(7, 5)));
        assert!(!t(9, 2).supports(cc(7, 5)));
        assert!(t(9, 1).supports(cc(7, 2)));
        assert!(!t(9, 0).supports(cc(7, 2)));
        assert!(!t(11, 0).supports(cc(3, 0)));
        assert!(t(11, 0).supports(cc(8, 0)));
        assert!(!t(11, 0).supports(cc(8, 6)));
        assert!(t(11, 1).supports(cc(8, 6)));
        assert!(t(13, 4).supports(cc(10, 7)));
        assert!(!t(13, 3).supports(cc(10, 7)));
        assert!(t(13, 5).assumed_from.is_none());
        assert_eq!(all_released().len(), 30);
        for tk in all_released() {
            let l = t(tk.major, tk.minor);
            assert!(!l.targets.is_empty());
            assert!(l.targets.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn compiler_targets_outside_the_table() {
        let newer = compiler_targets(v(13, 7)).unwrap();
        assert_eq!(newer.assumed_from, Some(v(13, 5)));
        assert_eq!(newer.toolkit, v(13, 7));
        assert_eq!(newer.targets, compiler_targets(v(13, 5)).unwrap().targets);
        assert!(compiler_targets(v(14, 0)).is_none());
        assert!(compiler_targets(v(12, 7)).is_none());
        assert!(compiler_targets(v(8, 0)).is_none());
        assert!(compiler_targets(v(9, 3)).is_none());
        assert!(compiler_targets(v(11, 9)).is_none());
    }

    #[test]
    fn sass_and_ptx_rules() {
        assert!(sass_runs_on(cc(8, 0), cc(8, 6)));
        assert!(sass_runs_on(cc(8, 6), cc(8, 9)));
        assert!(!sass_runs_on(cc(8, 6), cc(8, 0)));
        assert!(!sass_runs_on(cc(8, 0), cc(9, 0)));
        assert!(!sass_runs_on(cc(9, 0), cc(10, 0)));
        assert!(sass_runs_on(cc(10, 0), cc(10, 3)));
        assert!(sass_runs_on(cc(12, 0), cc(12, 1)));
        // Tegra: no binary compatibility across minors.
        assert!(!sass_runs_on(cc(8, 0), cc(8, 7)));
        assert!(!sass_runs_on(cc(7, 0), cc(7, 2)));
        assert!(!sass_runs_on(cc(5, 0), cc(5, 3)));
        assert!(!sass_runs_on(cc(10, 0), cc(10, 1)));
        assert!(!sass_runs_on(cc(7, 2), cc(7, 5)));
        assert!(sass_runs_on(cc(8, 7), cc(8, 7)));
        assert!(ptx_runs_on(cc(8, 0), cc(9, 0)));
        assert!(ptx_runs_on(cc(8, 0), cc(8, 7)));
        assert!(ptx_runs_on(cc(7, 5), cc(12, 0)));
        assert!(!ptx_runs_on(cc(9, 0), cc(8, 9)));
        assert!(!sass_variant_runs_on(
            cc(9, 0),
            ArchVariant::ArchSpecific,
            cc(10, 0)
        ));
        assert!(sass_variant_runs_on(
            cc(9, 0),
            ArchVariant::ArchSpecific,
            cc(9, 0)
        ));
        assert!(!sass_variant_runs_on(
            cc(10, 0),
            ArchVariant::ArchSpecific,
            cc(10, 3)
        ));
        assert!(sass_variant_runs_on(
            cc(10, 0),
            ArchVariant::FamilySpecific,
            cc(10, 3)
        ));
        assert!(!sass_variant_runs_on(
            cc(10, 0),
            ArchVariant::FamilySpecific,
            cc(12, 0)
        ));
    }

    fn g(name: &str) -> Option<(String, ProductClass)> {
        gpu_from_name(name).map(|m| (m.cc.to_string(), m.class))
    }

    fn is(name: &str, want: &str, class: ProductClass) {
        assert_eq!(g(name), Some((want.to_string(), class)), "{name}");
    }

    #[test]
    fn common_product_names_map_to_their_architecture() {
        is("NVIDIA GeForce RTX 4090", "8.9", GeForce);
        is("Tesla V100-SXM2-32GB", "7.0", DataCenter);
        is("NVIDIA H100 80GB HBM3", "9.0", DataCenter);
        is("NVIDIA A100-SXM4-40GB", "8.0", DataCenter);
        is("NVIDIA GeForce GTX 1050", "6.1", GeForce);
        is("Quadro RTX 6000", "7.5", Workstation);
        is("NVIDIA RTX A6000", "8.6", Workstation);
        is("NVIDIA RTX 6000 Ada Generation", "8.9", Workstation);
        is("NVIDIA L4", "8.9", DataCenter);
        is("NVIDIA L40S", "8.9", DataCenter);
        is("NVIDIA H200", "9.0", DataCenter);
        is("NVIDIA B200", "10.0", DataCenter);
        is("NVIDIA GeForce RTX 5090 D", "12.0", GeForce);
        is(
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            "12.0",
            DataCenter,
        );
        is("Tesla T4", "7.5", DataCenter);
        is("Tesla K80", "3.7", DataCenter);
        is("NVIDIA GB10", "12.1", DataCenter);
        is("NVIDIA GeForce RTX 3050 Laptop GPU", "8.6", GeForce);
        is("NVIDIA A10G", "8.6", DataCenter);
        is("NVIDIA GeForce GTX 1650", "7.5", GeForce);
        is("NVIDIA TITAN RTX", "7.5", GeForce);
        is("NVIDIA GeForce MX450", "7.5", GeForce);
    }

    #[test]
    fn more_names() {
        is(
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            "12.0",
            Workstation,
        );
        is(
            "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
            "12.0",
            Workstation,
        );
        is(
            "NVIDIA RTX PRO 4000 Blackwell SFF Edition",
            "12.0",
            Workstation,
        );
        is("NVIDIA RTX 4000 SFF Ada Generation", "8.9", Workstation);
        is("NVIDIA RTX A2000 8GB Laptop GPU", "8.6", Workstation);
        is("Quadro RTX 8000", "7.5", Workstation);
        is("Quadro P4000", "6.1", Workstation);
        is("Quadro GV100", "7.0", Workstation);
        is("Quadro GP100", "6.0", Workstation);
        is("Quadro M6000 24GB", "5.2", Workstation);
        is("Quadro K2200", "5.0", Workstation);
        is("Quadro T1000", "7.5", Workstation);
        is("NVIDIA T1000 8GB", "7.5", Workstation);
        is("NVIDIA T400 4GB", "7.5", Workstation);
        is("NVIDIA TITAN V", "7.0", GeForce);
        is("NVIDIA TITAN Xp", "6.1", GeForce);
        is("TITAN X (Pascal)", "6.1", GeForce);
        is("GeForce GTX TITAN X", "5.2", GeForce);
        is("GeForce GTX TITAN Black", "3.5", GeForce);
        is("GeForce GTX TITAN", "3.5", GeForce);
        is("NVIDIA GeForce RTX 4090 D", "8.9", GeForce);
        is("NVIDIA GeForce RTX 4070 Ti SUPER", "8.9", GeForce);
        is("NVIDIA GeForce RTX 2080 Ti", "7.5", GeForce);
        is("NVIDIA GeForce RTX 2050", "8.6", GeForce);
        is("NVIDIA GeForce RTX 5060 Laptop GPU", "12.0", GeForce);
        is("NVIDIA GeForce GTX 1660 SUPER", "7.5", GeForce);
        is("NVIDIA GeForce GTX 1080 Ti", "6.1", GeForce);
        is("GeForce GTX 980 Ti", "5.2", GeForce);
        is("GeForce GTX 750 Ti", "5.0", GeForce);
        is("GeForce GTX 780", "3.5", GeForce);
        is("GeForce GT 1030", "6.1", GeForce);
        is("NVIDIA GeForce MX570", "8.6", GeForce);
        is("NVIDIA GeForce MX150", "6.1", GeForce);
        is("NVIDIA H100 PCIe", "9.0", DataCenter);
        is("NVIDIA H100 NVL", "9.0", DataCenter);
        is("NVIDIA GH200 480GB", "9.0", DataCenter);
        is("NVIDIA B300 SXM6 AC", "10.3", DataCenter);
        is("NVIDIA A100 80GB PCIe", "8.0", DataCenter);
        is("NVIDIA A100-SXM4-40GB MIG 1g.5gb", "8.0", DataCenter);
        is("NVIDIA A2", "8.6", DataCenter);
        is("NVIDIA A30", "8.0", DataCenter);
        is("GRID T4-16Q", "7.5", DataCenter);
        is("Tesla V100S-PCIE-32GB", "7.0", DataCenter);
        is("Tesla P100-PCIE-16GB", "6.0", DataCenter);
        is("Tesla P4", "6.1", DataCenter);
        is("Tesla M60", "5.2", DataCenter);
        is("Tesla K40m", "3.5", DataCenter);
        is("Tesla K20Xm", "3.5", DataCenter);
        is("Tesla K10.G1.8GB", "3.0", DataCenter);
        is("Orin (nvgpu)", "8.7", Jetson);
        is("NVIDIA Jetson Orin Nano", "8.7", Jetson);
        is("Xavier", "7.2", Jetson);
        is("NVIDIA Tegra X1", "5.3", Jetson);
        is("NVIDIA Jetson Nano", "5.3", Jetson);
        is("NVIDIA Tegra X2", "6.2", Jetson);
        is("NVIDIA Thor", "11.0", Jetson);
        is("NVIDIA Jetson T5000", "11.0", Jetson);
        is("nvidia geforce rtx 4090", "8.9", GeForce);
    }

    #[test]
    fn unknown_or_vague_names() {
        for name in [
            "",
            "NVIDIA",
            "NVIDIA Graphics Device",
            "NVIDIA RTX 6000",
            "NVIDIA RTX PRO 6000",
            "NVIDIA TITAN",
            "NVIDIA GeForce RTX 3050 A Laptop GPU",
            "NVIDIA GeForce GT 730",
            "NVIDIA GeForce GTX 980M",
            "NVIDIA GeForce RTX 9090",
            "NVIDIA GeForce",
            "Quadro Something",
            "NVIDIA Jetson",
            "AMD Radeon RX 7900 XTX",
            "NVIDIA A1000000",
            "NVIDIA T4000",
            "GRID RTX6000-24Q",
            "😀 RTX 4090",
        ] {
            assert_eq!(g(name), None, "{name:?}");
        }
    }

    #[test]
    fn forward_compat_by_class() {
        assert_eq!(DataCenter.supports_forward_compat(), Some(true));
        assert_eq!(Jetson.supports_forward_compat(), Some(true));
        assert_eq!(GeForce.supports_forward_compat(), Some(false));
        assert_eq!(Workstation.supports_forward_compat(), Some(false));
        assert_eq!(Unknown.supports_forward_compat(), None);
    }
}
