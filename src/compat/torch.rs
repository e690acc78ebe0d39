//! PyTorch releases: CUDA variants and the architectures each official Linux build (x86_64
//! and aarch64/sbsa) was compiled for. Each row names its source: the PyPI wheel itself (the
//! `.nv_fatbin` of `libtorch_cuda.so`, read by src/fatbin.rs), the release's own
//! PYTORCH_RELEASES_CODE_CC table (torch/cuda/__init__.py, from 2.11), the release branches'
//! build_cuda.sh, or the pull request that set the list. `.ci/compat-refresh --scan-torch V`
//! reads a wheel again and reports any difference.

use super::{ptx_runs_on, sass_runs_on, ComputeCapability, CudaVersion};

/// The CPU architecture a wheel is built for: the builds differ per platform (aarch64
/// "sbsa" wheels start later and leave out older GPUs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    X86_64,
    Aarch64,
}

impl Platform {
    /// From `uname -m` / the ELF machine ("x86_64", "aarch64", "arm64").
    pub fn from_arch(arch: &str) -> Option<Platform> {
        match arch.trim().to_ascii_lowercase().as_str() {
            "x86_64" | "x86-64" | "amd64" => Some(Platform::X86_64),
            "aarch64" | "arm64" => Some(Platform::Aarch64),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Platform::X86_64 => "x86_64",
            Platform::Aarch64 => "aarch64",
        }
    }
}

/// One official Linux build: release, CUDA variant, platform, compiled SASS architectures,
/// PTX ones.
pub struct TorchBuild {
    /// The newest patch release of that minor ("2.8.0").
    pub release: &'static str,
    pub variant: &'static str,
    pub platform: Platform,
    pub sass: &'static [u32],
    pub ptx: &'static [u32],
    pub source: &'static str,
}

const KEPLER_TO_HOPPER: &[u32] = &[37, 50, 60, 70, 75, 80, 86, 90];
const MAXWELL_TO_HOPPER: &[u32] = &[50, 60, 70, 75, 80, 86, 90];
const VOLTA_TO_BLACKWELL: &[u32] = &[70, 75, 80, 86, 90, 100, 120];
const TURING_TO_BLACKWELL: &[u32] = &[75, 80, 86, 90, 100, 120];

const ARM_CU13: &[u32] = &[80, 90, 100, 110, 120];
const ARM_CU128: &[u32] = &[80, 90, 100, 120];
const ARM_CU126: &[u32] = &[80, 90];

// Sources. "wheel": the PyPI wheel itself, its libtorch_cuda.so fatbins read by
// src/fatbin.rs (no PTX in any release from 2.0.1 to 2.15.0: the nightlies' `+PTX` entries are
// removed for releases, pytorch#145792, #157516, #175567, #188925). "release table":
// PYTORCH_RELEASES_CODE_CC in the release wheel's torch/cuda/__init__.py (from 2.13 keyed
// by platform): what the release says of its other variants, whose wheels were not scanned,
// so such a row counts as unconfirmed (an answer resting on it says so). "builder": pytorch/builder manywheel/build_cuda.sh on the release branch.
const W2_15: &str = "torch-2.15.0 wheel on PyPI (+cu132, the default): libtorch_cuda.so fatbins";
const T2_15: &str = "UNCONFIRMED by a wheel: the release's variant table, torch-2.15.0 wheel, \
                    torch/cuda/__init__.py PYTORCH_RELEASES_CODE_CC (line 389); this \
                    variant's own wheel not scanned";
const W2_14: &str = "torch-2.14.1 wheel on PyPI (+cu130, the default): libtorch_cuda.so fatbins";
const T2_14: &str = "UNCONFIRMED by a wheel: the release's variant table, torch-2.14.1 wheel, \
                    torch/cuda/__init__.py PYTORCH_RELEASES_CODE_CC (line 376); this \
                    variant's own wheel not scanned";
const W2_13: &str = "torch-2.13.0 wheel on PyPI (+cu130, the default): libtorch_cuda.so fatbins \
                     (449, none with PTX: pytorch#188925 removed compute_120 before the release)";
const T2_13: &str = "UNCONFIRMED by a wheel: the release's variant table, torch-2.13.0 wheel, \
                    torch/cuda/__init__.py PYTORCH_RELEASES_CODE_CC (line 326); this \
                    variant's own wheel not scanned";
const W2_12: &str = "torch-2.12.1 wheel on PyPI (+cu130, the default): libtorch_cuda.so fatbins";
const T2_12: &str = "UNCONFIRMED by a wheel: the release's variant table, torch-2.12.1 wheel, \
                    torch/cuda/__init__.py PYTORCH_RELEASES_CODE_CC (line 325); this \
                    variant's own wheel not scanned";
const W2_11: &str = "torch-2.11.0 wheel on PyPI (+cu130, the default): libtorch_cuda.so fatbins";
const W2_10: &str = "torch-2.10.0 wheel on PyPI (+cu128, the default): libtorch_cuda.so fatbins";
const W2_9: &str = "torch-2.9.1 wheel on PyPI (+cu128, the default): libtorch_cuda.so fatbins";
const W2_8: &str = "torch-2.8.0 wheel on PyPI (+cu128, the default): libtorch_cuda.so fatbins \
                    (sm_70 is back, pytorch#157516)";
const W2_7: &str = "torch-2.7.1 wheel on PyPI (+cu126, the default): libtorch_cuda.so fatbins";
const CU128_2_7: &str = "pytorch#146265 (cu128 drops sm_50/60), pytorch#147607 (drops sm_70, \
                         merged 2025-03-05 before the 2.7 branch cut), pytorch#145792 (no PTX in \
                         2.7.0 stable)";
const ARM_2_7: &str = "pytorch/test-infra release/2.7 generate_binary_build_matrix.py line 53 \
                       (\"12.8-aarch64\" only); pytorch#146378 (sbsa CUDA_ARCH 9.0, 10.0, 12.0)";
const W2_6: &str = "torch-2.6.0 wheel on PyPI (+cu124, the default): libtorch_cuda.so fatbins";
const CU126_2_6: &str =
    "pytorch#141142 (CUDA 12.6 builds), pytorch#145616 (release-only: no PTX in \
                         Linux CUDA 12.6)";
const W2_5: &str = "torch-2.5.1 wheel on PyPI (+cu124, the default): libtorch_cuda.so fatbins";
const B2_5: &str = "pytorch/builder release/2.5 manywheel/build_cuda.sh (aec5fb5d) lines 60-80";
const B2_4: &str = "pytorch/builder release/2.4 manywheel/build_cuda.sh (4ce1afeb) lines 60-80";
const W2_4: &str = "torch-2.4.1 wheel on PyPI (+cu121, the default): libtorch_cuda.so fatbins";
const B2_3: &str = "pytorch/builder release/2.3 manywheel/build_cuda.sh (ba10bae9) lines 60-72";
const W2_3: &str = "torch-2.3.1 wheel on PyPI (+cu121, the default): libtorch_cuda.so fatbins";
const B2_2: &str = "pytorch/builder release/2.2 manywheel/build_cuda.sh (af60d114) lines 60-72";
const W2_2: &str = "torch-2.2.2 wheel on PyPI (+cu121, the default): libtorch_cuda.so fatbins";
const B2_1: &str = "pytorch/builder release/2.1 manywheel/build_cuda.sh (55d40b1b) lines 59-71";
const W2_1: &str = "torch-2.1.2 wheel on PyPI (+cu121, the default): libtorch_cuda.so fatbins";
const B2_0: &str = "pytorch/builder release/2.0 manywheel/build_cuda.sh (9f0fad92) lines 59-67";
const W2_0: &str = "torch-2.0.1 wheel on PyPI (+cu117, the default): libtorch_cuda.so fatbins";
// Rows no release file or wheel states; each names the nearest source.
const CU13_X86_PTX: &str = "UNCONFIRMED: the list of pytorch .ci/manywheel/build_env_setup.py \
                            (00505f29, main); whether the release removed the nightlies' \
                            12.0+PTX is not documented before 2.11 (pytorch#175567)";
const CU126_MAIN: &str = "UNCONFIRMED: pytorch .ci/manywheel/build_cuda.sh (00c7a380, main, \
                          12.6 case), not read at the release tag";
const CU129_MAIN: &str = "UNCONFIRMED: pytorch .ci/manywheel/build_cuda.sh (00c7a380, main, \
                          12.9 case), not read at the release tag";
const CU128_2_11: &str = "UNCONFIRMED: PyTorch dev-discuss \"Dropping Volta support from \
                          CUDA-12.8 binaries for release 2.11\"; the 2.11.0 wheel's own \
                          PYTORCH_RELEASES_CODE_CC says {70,80,86,90,100,120} and is stale \
                          (pytorch#182369)";
const CU126_2_11: &str = "UNCONFIRMED: as the 2.10/2.12 cu126 builds; the 2.11.0 wheel's stale \
                          PYTORCH_RELEASES_CODE_CC (pytorch#182369) omits sm_75";
const CU132_2_12: &str = "UNCONFIRMED: the 2.12.1 wheel's PYTORCH_RELEASES_CODE_CC gives one \
                          set per CUDA for both platforms ({75,80,86,90,100,110,120}); sm_110 is \
                          aarch64-only in 2.13's per-platform table";
const CU118_LATE: &str = "UNCONFIRMED: pytorch/builder main (7aafdf05^) manywheel/build_cuda.sh \
                          \"11.8\" case, copied into pytorch by pytorch#138103; not read at the \
                          release tag";
const ARM_LATE: &str = "UNCONFIRMED: pytorch/test-infra release branch \
                        generate_binary_build_matrix.py (aarch64 variants) with the aarch64 \
                        filter of pytorch#166044; not read at the release tag";
const ARM_2_9_CU126: &str = "pytorch#163764 (release/2.9 cherry-pick of pytorch#162455: aarch64 \
                             CUDA 12.6 arch list 8.0;9.0)";

/// Newest first; within a release, newest CUDA first, x86_64 then aarch64.
pub static BUILDS: &[TorchBuild] = &[
    b("2.15.0", "cu132", TURING_TO_BLACKWELL, W2_15),
    b("2.15.0", "cu130", TURING_TO_BLACKWELL, T2_15),
    b("2.15.0", "cu126", MAXWELL_TO_HOPPER, T2_15),
    a("2.15.0", "cu132", ARM_CU13, W2_15),
    a("2.15.0", "cu130", ARM_CU13, T2_15),
    a("2.15.0", "cu126", ARM_CU126, T2_15),
    b("2.14.1", "cu132", TURING_TO_BLACKWELL, T2_14),
    b("2.14.1", "cu130", TURING_TO_BLACKWELL, W2_14),
    b("2.14.1", "cu126", MAXWELL_TO_HOPPER, T2_14),
    a("2.14.1", "cu132", ARM_CU13, T2_14),
    a("2.14.1", "cu130", ARM_CU13, W2_14),
    a("2.14.1", "cu126", ARM_CU126, T2_14),
    b("2.13.0", "cu132", TURING_TO_BLACKWELL, T2_13),
    b("2.13.0", "cu130", TURING_TO_BLACKWELL, W2_13),
    b("2.13.0", "cu126", MAXWELL_TO_HOPPER, T2_13),
    a("2.13.0", "cu132", ARM_CU13, T2_13),
    a("2.13.0", "cu130", ARM_CU13, W2_13),
    a("2.13.0", "cu126", ARM_CU126, T2_13),
    b("2.12.1", "cu132", TURING_TO_BLACKWELL, CU132_2_12),
    b("2.12.1", "cu130", TURING_TO_BLACKWELL, W2_12),
    b("2.12.1", "cu126", MAXWELL_TO_HOPPER, T2_12),
    a("2.12.1", "cu132", ARM_CU13, CU132_2_12),
    a("2.12.1", "cu130", ARM_CU13, W2_12),
    a("2.12.1", "cu126", ARM_CU126, ARM_LATE),
    b("2.11.0", "cu130", TURING_TO_BLACKWELL, W2_11),
    b("2.11.0", "cu128", TURING_TO_BLACKWELL, CU128_2_11),
    b("2.11.0", "cu126", MAXWELL_TO_HOPPER, CU126_2_11),
    a("2.11.0", "cu130", ARM_CU13, W2_11),
    a("2.11.0", "cu128", ARM_CU128, ARM_LATE),
    a("2.11.0", "cu126", ARM_CU126, ARM_LATE),
    b("2.10.0", "cu130", TURING_TO_BLACKWELL, CU13_X86_PTX),
    b("2.10.0", "cu128", VOLTA_TO_BLACKWELL, W2_10),
    b("2.10.0", "cu126", MAXWELL_TO_HOPPER, CU126_MAIN),
    a("2.10.0", "cu130", ARM_CU13, ARM_LATE),
    a("2.10.0", "cu128", ARM_CU128, ARM_LATE),
    a("2.10.0", "cu126", ARM_CU126, ARM_LATE),
    b("2.9.1", "cu130", TURING_TO_BLACKWELL, CU13_X86_PTX),
    b("2.9.1", "cu128", VOLTA_TO_BLACKWELL, W2_9),
    b("2.9.1", "cu126", MAXWELL_TO_HOPPER, CU126_MAIN),
    a("2.9.1", "cu130", ARM_CU13, ARM_LATE),
    a("2.9.1", "cu128", ARM_CU128, ARM_LATE),
    a("2.9.1", "cu126", ARM_CU126, ARM_2_9_CU126),
    b("2.8.0", "cu129", VOLTA_TO_BLACKWELL, CU129_MAIN),
    b("2.8.0", "cu128", VOLTA_TO_BLACKWELL, W2_8),
    b("2.8.0", "cu126", MAXWELL_TO_HOPPER, CU126_MAIN),
    b("2.7.1", "cu128", TURING_TO_BLACKWELL, CU128_2_7),
    b("2.7.1", "cu126", MAXWELL_TO_HOPPER, W2_7),
    b("2.7.1", "cu118", KEPLER_TO_HOPPER, CU118_LATE),
    a("2.7.1", "cu128", &[90, 100, 120], ARM_2_7),
    b("2.6.0", "cu126", MAXWELL_TO_HOPPER, CU126_2_6),
    b("2.6.0", "cu124", MAXWELL_TO_HOPPER, W2_6),
    b("2.6.0", "cu118", KEPLER_TO_HOPPER, CU118_LATE),
    b("2.5.1", "cu124", MAXWELL_TO_HOPPER, W2_5),
    b("2.5.1", "cu121", MAXWELL_TO_HOPPER, B2_5),
    b("2.5.1", "cu118", KEPLER_TO_HOPPER, B2_5),
    b("2.4.1", "cu124", MAXWELL_TO_HOPPER, B2_4),
    b("2.4.1", "cu121", MAXWELL_TO_HOPPER, W2_4),
    b("2.4.1", "cu118", KEPLER_TO_HOPPER, B2_4),
    b("2.3.1", "cu121", MAXWELL_TO_HOPPER, W2_3),
    b("2.3.1", "cu118", KEPLER_TO_HOPPER, B2_3),
    b("2.2.2", "cu121", MAXWELL_TO_HOPPER, W2_2),
    b("2.2.2", "cu118", KEPLER_TO_HOPPER, B2_2),
    b("2.1.2", "cu121", MAXWELL_TO_HOPPER, W2_1),
    b("2.1.2", "cu118", KEPLER_TO_HOPPER, B2_1),
    b("2.0.1", "cu118", KEPLER_TO_HOPPER, B2_0),
    b("2.0.1", "cu117", &[37, 50, 60, 70, 75, 80, 86], W2_0),
];

const fn b(
    release: &'static str,
    variant: &'static str,
    sass: &'static [u32],
    source: &'static str,
) -> TorchBuild {
    TorchBuild {
        release,
        variant,
        platform: Platform::X86_64,
        sass,
        ptx: &[],
        source,
    }
}

/// An aarch64 (sbsa) build.
const fn a(
    release: &'static str,
    variant: &'static str,
    sass: &'static [u32],
    source: &'static str,
) -> TorchBuild {
    TorchBuild {
        platform: Platform::Aarch64,
        ..b(release, variant, sass, source)
    }
}

impl TorchBuild {
    /// Whether the row's source names a primary source (or a scanned wheel).
    pub fn confirmed(&self) -> bool {
        super::sources::is_confirmed(self.source)
    }
}

impl TorchBuild {
    pub fn cuda(&self) -> Option<CudaVersion> {
        variant_cuda(self.variant)
    }

    pub fn runs_on(&self, cc: ComputeCapability) -> bool {
        covers(self.sass, self.ptx, cc)
    }

    pub fn arch_list(&self) -> String {
        self.sass
            .iter()
            .map(|a| format!("sm_{a}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Whether code compiled for these SASS/PTX targets runs on `cc` (binary compatibility:
/// same major, minor ≥ compiled; PTX JIT-compiles to any newer GPU).
pub fn covers(sass: &[u32], ptx: &[u32], cc: ComputeCapability) -> bool {
    let to_cc = |a: u32| ComputeCapability::new(a / 10, a % 10);
    sass.iter().any(|a| sass_runs_on(to_cc(*a), cc))
        || ptx.iter().any(|a| ptx_runs_on(to_cc(*a), cc))
}

/// The official builds of one release ("2.8.0+cu128" → release 2.8) for a platform.
pub fn builds_of(
    version: &str,
    platform: Platform,
) -> impl Iterator<Item = &'static TorchBuild> + '_ {
    let minor = release_minor(version);
    BUILDS.iter().filter(move |b| {
        b.platform == platform && minor.is_some() && release_minor(b.release) == minor
    })
}

/// `2.8.0+cu128` → (2, 8).
pub fn release_minor(version: &str) -> Option<(u32, u32)> {
    let base = version.split('+').next()?;
    let mut it = base.split('.');
    Some((
        it.next()?.trim().parse().ok()?,
        it.next()?.trim().parse().ok()?,
    ))
}

/// A wheel variant's CUDA: "cu124" → 12.4, "cu132" → 13.2; "cpu" → None.
pub fn variant_cuda(variant: &str) -> Option<CudaVersion> {
    let digits = variant.strip_prefix("cu")?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some(CudaVersion::new(major.parse().ok()?, minor.parse().ok()?))
}

/// `2.8.0+cu128` → "cu128"; `+cpu` → "cpu"; none → None.
pub fn local_variant(version: &str) -> Option<&str> {
    version.split_once('+').map(|(_, v)| v)
}

/// The wheel variant a torch is: its local label (`2.8.0+cu128` → "cu128"), else, for PyPI's
/// default builds, which carry none, the CUDA that torch.version.cuda names ("12.8" → "cu128").
pub fn build_variant(version: &str, cuda: Option<&str>) -> Option<String> {
    local_variant(version)
        .map(str::to_string)
        .or_else(|| cuda.map(|c| format!("cu{}", c.replace('.', ""))))
}

/// The newest official build for the platform that runs on `cc` and whose CUDA the driver
/// can run (`ok_cuda`): the tables' own order, checked by the tests below.
#[cfg(test)]
pub fn newest_build_for(
    cc: ComputeCapability,
    platform: Platform,
    ok_cuda: impl Fn(CudaVersion) -> bool,
) -> Option<&'static TorchBuild> {
    BUILDS
        .iter()
        .find(|b| b.platform == platform && b.runs_on(cc) && b.cuda().is_some_and(&ok_cuda))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_coverage_follows_binary_compatibility() {
        let b = builds_of("2.6.0+cu126", Platform::X86_64).next().unwrap();
        assert_eq!(b.variant, "cu126");
        // sm_120 (RTX 5090) on a cu126 build: no sm_12x code, no PTX (tests/it/pytorch.rs gpu_newer_than_the_build).
        assert!(!b.runs_on(ComputeCapability::new(12, 0)));
        // Ada (8.9) runs the sm_86 SASS.
        assert!(b.runs_on(ComputeCapability::new(8, 9)));
        let cu128 = builds_of("2.8.0+cu128", Platform::X86_64)
            .find(|b| b.variant == "cu128")
            .unwrap();
        // GTX 1050 (6.1) on cu128: dropped (gpu_older_than_the_build).
        assert!(!cu128.runs_on(ComputeCapability::new(6, 1)));
        assert_eq!(cu128.cuda(), Some(CudaVersion::new(12, 8)));
    }

    #[test]
    fn newest_build_for_a_gpu_and_driver() {
        // Pascal: the newest build with sm_60 is a cu126 one.
        let b = newest_build_for(ComputeCapability::new(6, 1), Platform::X86_64, |_| true).unwrap();
        assert_eq!((b.release, b.variant), ("2.15.0", "cu126"));
        // 2.7.1+cu128 dropped sm_50/60/70 (pytorch#146265, #147607).
        let cu128 = builds_of("2.7.1", Platform::X86_64)
            .find(|b| b.variant == "cu128")
            .unwrap();
        assert!(!cu128.runs_on(ComputeCapability::new(6, 1)));
        assert!(!cu128.runs_on(ComputeCapability::new(7, 0)));
        // Blackwell with a CUDA 12 driver: cu128.
        let b = newest_build_for(ComputeCapability::new(12, 0), Platform::X86_64, |c| {
            c.major == 12
        })
        .unwrap();
        assert_eq!((b.release, b.variant), ("2.11.0", "cu128"));
        assert_eq!(local_variant("2.8.0+cu128"), Some("cu128"));
    }

    #[test]
    fn aarch64_builds_are_their_own() {
        let cc = ComputeCapability::new;
        // GH200 (9.0) and GB200 (10.0): the newest aarch64 build.
        let b = newest_build_for(cc(9, 0), Platform::Aarch64, |_| true).unwrap();
        assert_eq!((b.release, b.variant), ("2.15.0", "cu132"));
        // Jetson Thor (11.0): sm_110 is in the aarch64 cu13x list, not in the x86_64 one.
        assert!(newest_build_for(cc(11, 0), Platform::Aarch64, |_| true).is_some());
        assert!(newest_build_for(cc(11, 0), Platform::X86_64, |_| true).is_none());
        // Turing on aarch64: no official build since the sbsa lists start at sm_80.
        assert!(newest_build_for(cc(7, 5), Platform::Aarch64, |_| true).is_none());
        // A CUDA 12 driver on GH200: cu126's {80, 90}.
        let b = newest_build_for(cc(9, 0), Platform::Aarch64, |c| c.major == 12).unwrap();
        assert_eq!((b.release, b.variant), ("2.15.0", "cu126"));
        assert_eq!(Platform::from_arch("arm64"), Some(Platform::Aarch64));
        assert_eq!(Platform::from_arch("ppc64le"), None);
    }

    #[test]
    fn table_is_newest_first() {
        for w in BUILDS.windows(2) {
            assert!(release_minor(w[0].release) >= release_minor(w[1].release));
            assert!(w[0].cuda().is_some());
        }
    }
}
