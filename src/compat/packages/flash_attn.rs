//! flash-attn (FlashAttention-2) releases on PyPI: source distributions only, compiled by pip
//! with the local nvcc against the installed torch (`pip install flash-attn
//! --no-build-isolation`, README). The toolkit floor and the architectures are the setup.py in
//! each sdist; the GPUs are the README's, as the `flash_attention_2` row of capabilities.rs.

use super::{Delivery, PackageRelease};
use crate::compat::torch::Platform;

/// setup.py cuda_archs(): FLASH_ATTN_CUDA_ARCHS default "80;90;100;120"; sm_90 is built only
/// with nvcc >= 11.8, sm_100 and sm_120 only with nvcc >= 12.8. (The "110" in the default that
/// capabilities.rs cites is from main at 0251105a; no release here has it.)
const SASS: &[u32] = &[80, 90, 100, 120];

/// The README asks for Linux and names no CPU; a source build is not tied to one.
const LINUX: &[Platform] = &[Platform::X86_64, Platform::Aarch64];

const SOURCE: &str = "flash_attn-VERSION.tar.gz on PyPI (no wheels): PKG-INFO Requires-Dist \
    torch (no version), einops, Requires-Python >=3.9; setup.py raises \"FlashAttention is \
    only supported on CUDA 11.7 and above\" (nvcc -V), cuda_archs() default \"80;90;100;120\", \
    and first tries a prebuilt wheel from the GitHub release (FLASH_ATTENTION_FORCE_BUILD=TRUE \
    skips it); README: \"pip install flash-attn --no-build-isolation\", \"PyTorch 2.2 and \
    above\", NVIDIA \"CUDA 12.0 and above\", \"Ampere, Ada, or Hopper GPUs\" (capabilities.rs \
    flash_attention_2)";

const fn r(version: &'static str, requirement: &'static str) -> PackageRelease {
    PackageRelease {
        package: "flash-attn",
        version,
        requirement,
        index_url: None,
        delivery: Delivery::SourceBuild,
        cuda: None,
        cudnn_major: None,
        min_driver: None,
        pythons: &[],
        platforms: LINUX,
        sass: SASS,
        ptx: &[],
        exact: &[],
        min_cc: Some(80),
        torch: None,
        companions: &[],
        source: SOURCE,
    }
}

pub static RELEASES: &[PackageRelease] = &[
    r("2.8.3.post2", "flash-attn==2.8.3.post2"),
    r("2.8.3.post1", "flash-attn==2.8.3.post1"),
    r("2.8.3", "flash-attn==2.8.3"),
    r("2.8.2", "flash-attn==2.8.2"),
    r("2.8.1", "flash-attn==2.8.1"),
    r("2.8.0.post2", "flash-attn==2.8.0.post2"),
    r("2.7.4.post1", "flash-attn==2.7.4.post1"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::capabilities::CAPABILITIES;

    #[test]
    fn built_from_source() {
        for r in RELEASES {
            assert_eq!(r.delivery, Delivery::SourceBuild);
            assert_eq!(r.requirement, format!("flash-attn=={}", r.version));
            assert!(r.pythons.is_empty() && r.cuda.is_none());
        }
    }

    #[test]
    fn gpu_floor_matches_the_capability_row() {
        let fa2 = CAPABILITIES
            .iter()
            .find(|c| c.key == "flash_attention_2")
            .unwrap();
        let floor = fa2.min_cc.major * 10 + fa2.min_cc.minor;
        assert!(RELEASES.iter().all(|r| r.min_cc == Some(floor)));
        assert!(!SASS.contains(&75));
    }
}
