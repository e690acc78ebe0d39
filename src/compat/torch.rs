//! PyTorch releases: CUDA variants, the architectures each official Linux x86_64 build was
//! compiled for, and the torchvision that belongs to each. Sources: PyTorch's RELEASE.md
//! compatibility matrix, the release branches' build_cuda.sh (pytorch/builder, then pytorch
//! .ci/manywheel), https://pytorch.org/get-started/previous-versions, and the PyPI wheels
//! themselves (`torch/version.py`, METADATA, the `.nv_fatbin` of `libtorch_cuda.so`).

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
        match arch.trim() {
            "x86_64" | "amd64" => Some(Platform::X86_64),
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
const MAXWELL_TO_BLACKWELL: &[u32] = &[50, 60, 70, 75, 80, 86, 90, 100, 120];
const VOLTA_TO_BLACKWELL: &[u32] = &[70, 75, 80, 86, 90, 100, 120];
const TURING_TO_BLACKWELL: &[u32] = &[75, 80, 86, 90, 100, 120];

const RN: &str = "PyTorch RELEASE.md, build_cuda.sh";
const BIN: &str = "fatbin scan of the PyPI wheel (libtorch_cuda.so)";
const UNC: &str = "UNCONFIRMED: neither RELEASE.md nor a scanned wheel states it";

/// Newest first; within a release, newest CUDA first.
pub static BUILDS: &[TorchBuild] = &[
    b("2.15.0", "cu132", TURING_TO_BLACKWELL, BIN),
    b("2.15.0", "cu130", TURING_TO_BLACKWELL, RN),
    b("2.14.1", "cu132", TURING_TO_BLACKWELL, RN),
    b("2.14.1", "cu130", TURING_TO_BLACKWELL, BIN),
    b("2.14.1", "cu126", MAXWELL_TO_HOPPER, RN),
    b("2.13.0", "cu132", TURING_TO_BLACKWELL, RN),
    b("2.13.0", "cu130", TURING_TO_BLACKWELL, BIN),
    b("2.13.0", "cu126", MAXWELL_TO_HOPPER, RN),
    b("2.12.1", "cu132", TURING_TO_BLACKWELL, RN),
    b("2.12.1", "cu130", TURING_TO_BLACKWELL, BIN),
    b("2.12.1", "cu126", MAXWELL_TO_HOPPER, RN),
    b("2.11.0", "cu130", TURING_TO_BLACKWELL, BIN),
    b("2.11.0", "cu128", TURING_TO_BLACKWELL, RN),
    b("2.11.0", "cu126", MAXWELL_TO_HOPPER, RN),
    b("2.10.0", "cu130", TURING_TO_BLACKWELL, UNC),
    b("2.10.0", "cu128", VOLTA_TO_BLACKWELL, BIN),
    b("2.10.0", "cu126", MAXWELL_TO_HOPPER, RN),
    b("2.9.1", "cu130", TURING_TO_BLACKWELL, UNC),
    b("2.9.1", "cu128", VOLTA_TO_BLACKWELL, BIN),
    b("2.9.1", "cu126", MAXWELL_TO_HOPPER, RN),
    b("2.8.0", "cu129", VOLTA_TO_BLACKWELL, RN),
    b("2.8.0", "cu128", VOLTA_TO_BLACKWELL, BIN),
    b("2.8.0", "cu126", MAXWELL_TO_HOPPER, RN),
    b("2.7.1", "cu128", MAXWELL_TO_BLACKWELL, UNC),
    b("2.7.1", "cu126", MAXWELL_TO_HOPPER, BIN),
    b("2.7.1", "cu118", KEPLER_TO_HOPPER, UNC),
    b("2.6.0", "cu126", MAXWELL_TO_HOPPER, UNC),
    b("2.6.0", "cu124", MAXWELL_TO_HOPPER, BIN),
    b("2.6.0", "cu118", KEPLER_TO_HOPPER, UNC),
    b("2.5.1", "cu124", MAXWELL_TO_HOPPER, BIN),
    b("2.5.1", "cu121", MAXWELL_TO_HOPPER, RN),
    b("2.5.1", "cu118", KEPLER_TO_HOPPER, RN),
    b("2.4.1", "cu124", MAXWELL_TO_HOPPER, RN),
    b("2.4.1", "cu121", MAXWELL_TO_HOPPER, BIN),
    b("2.4.1", "cu118", KEPLER_TO_HOPPER, RN),
    b("2.3.1", "cu121", MAXWELL_TO_HOPPER, BIN),
    b("2.3.1", "cu118", KEPLER_TO_HOPPER, RN),
    b("2.2.2", "cu121", MAXWELL_TO_HOPPER, BIN),
    b("2.2.2", "cu118", KEPLER_TO_HOPPER, RN),
    b("2.1.2", "cu121", MAXWELL_TO_HOPPER, BIN),
    b("2.1.2", "cu118", KEPLER_TO_HOPPER, RN),
    b("2.0.1", "cu118", KEPLER_TO_HOPPER, RN),
    b("2.0.1", "cu117", &[37, 50, 60, 70, 75, 80, 86], BIN),
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
    /// The same build with PTX for these architectures too.
    const fn with_ptx(self, ptx: &'static [u32]) -> TorchBuild {
        TorchBuild { ptx, ..self }
    }

    /// Whether the row's source names a primary source (or a scanned wheel).
    pub fn confirmed(&self) -> bool {
        !self.source.contains("UNCONFIRMED")
    }
}

impl TorchBuild {
    pub fn cuda(&self) -> Option<CudaVersion> {
        let digits = self.variant.strip_prefix("cu")?;
        let (major, minor) = digits.split_at(digits.len().checked_sub(1)?);
        Some(CudaVersion::new(major.parse().ok()?, minor.parse().ok()?))
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

/// `2.8.0+cu128` → "cu128"; `+cpu` → "cpu"; none → None.
pub fn local_variant(version: &str) -> Option<&str> {
    version.split_once('+').map(|(_, v)| v)
}

/// The newest official build for the platform that runs on `cc` and whose CUDA the driver
/// can run (`ok_cuda`).
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
        // sm_120 (RTX 5090) on a cu126 build: no sm_12x code, no PTX (tests/pytorch.rs gpu_newer_than_the_build_case_01).
        assert!(!b.runs_on(ComputeCapability::new(12, 0)));
        // Ada (8.9) runs the sm_86 SASS.
        assert!(b.runs_on(ComputeCapability::new(8, 9)));
        let cu128 = builds_of("2.8.0+cu128", Platform::X86_64)
            .find(|b| b.variant == "cu128")
            .unwrap();
        // GTX 1050 (6.1) on cu128: dropped (gpu_older_than_the_build_case_02).
        assert!(!cu128.runs_on(ComputeCapability::new(6, 1)));
        assert_eq!(cu128.cuda(), Some(CudaVersion::new(12, 8)));
    }

    #[test]
    fn newest_build_for_a_gpu_and_driver() {
        // Pascal: the newest build with sm_60 is a cu126 one.
        let b = newest_build_for(ComputeCapability::new(6, 1), Platform::X86_64, |_| true).unwrap();
        assert_eq!((b.release, b.variant), ("2.14.1", "cu126"));
        // Blackwell with a CUDA 12 driver: cu128.
        let b = newest_build_for(ComputeCapability::new(12, 0), Platform::X86_64, |c| {
            c.major == 12
        })
        .unwrap();
        assert_eq!((b.release, b.variant), ("2.11.0", "cu128"));
        assert_eq!(local_variant("2.8.0+cu128"), Some("cu128"));
    }

    #[test]
    fn table_is_newest_first() {
        for w in BUILDS.windows(2) {
            assert!(release_minor(w[0].release) >= release_minor(w[1].release));
            assert!(w[0].cuda().is_some());
        }
    }
}
