//! PyTorch releases: CUDA variants, the architectures each official Linux x86_64 build was
//! compiled for, and the torchvision that belongs to each. Sources: PyTorch's RELEASE.md
//! compatibility matrix, the release branches' build_cuda.sh (pytorch/builder, then pytorch
//! .ci/manywheel), https://pytorch.org/get-started/previous-versions, and the PyPI wheels
//! themselves (`torch/version.py`, METADATA, the `.nv_fatbin` of `libtorch_cuda.so`).

use super::{ptx_runs_on, sass_runs_on, ComputeCapability, CudaVersion};

/// One official build: release, CUDA variant, compiled SASS architectures, PTX ones.
pub struct TorchBuild {
    /// The newest patch release of that minor ("2.8.0").
    pub release: &'static str,
    pub variant: &'static str,
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
        sass,
        ptx: &[],
        source,
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

/// The official builds of one release ("2.8.0+cu128" → release 2.8).
pub fn builds_of(version: &str) -> impl Iterator<Item = &'static TorchBuild> + '_ {
    let minor = release_minor(version);
    BUILDS
        .iter()
        .filter(move |b| minor.is_some() && release_minor(b.release) == minor)
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

/// The newest official build that runs on `cc` and whose CUDA the driver can run (`ok_cuda`).
pub fn newest_build_for(
    cc: ComputeCapability,
    ok_cuda: impl Fn(CudaVersion) -> bool,
) -> Option<&'static TorchBuild> {
    BUILDS
        .iter()
        .find(|b| b.runs_on(cc) && b.cuda().is_some_and(&ok_cuda))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_coverage_follows_binary_compatibility() {
        let b = builds_of("2.6.0+cu126").next().unwrap();
        assert_eq!(b.variant, "cu126");
        // sm_120 (RTX 5090) on a cu126 build: no sm_12x code, no PTX (tests/pytorch.rs gpu_newer_than_the_build_case_01).
        assert!(!b.runs_on(ComputeCapability::new(12, 0)));
        // Ada (8.9) runs the sm_86 SASS.
        assert!(b.runs_on(ComputeCapability::new(8, 9)));
        let cu128 = builds_of("2.8.0+cu128")
            .find(|b| b.variant == "cu128")
            .unwrap();
        // GTX 1050 (6.1) on cu128: dropped (gpu_older_than_the_build_case_02).
        assert!(!cu128.runs_on(ComputeCapability::new(6, 1)));
        assert_eq!(cu128.cuda(), Some(CudaVersion::new(12, 8)));
    }

    #[test]
    fn newest_build_for_a_gpu_and_driver() {
        // Pascal: the newest build with sm_60 is a cu126 one.
        let b = newest_build_for(ComputeCapability::new(6, 1), |_| true).unwrap();
        assert_eq!((b.release, b.variant), ("2.14.1", "cu126"));
        // Blackwell with a CUDA 12 driver: cu128.
        let b = newest_build_for(ComputeCapability::new(12, 0), |c| c.major == 12).unwrap();
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
