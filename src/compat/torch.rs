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

// The rows: src/compat/data/torch.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/torch.rs"));

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
