//! bitsandbytes releases on PyPI, one row per release and platform. Each Linux wheel is
//! `py3-none` and bundles one `libbitsandbytes_cudaXYZ.so` per CUDA release (listed in the
//! source), loading the one for torch's CUDA (same major, nearest minor): the CUDA and driver
//! are torch's, so `cuda` is None. `sass` is every architecture any bundled library has. The
//! torch requirement is the wheel's METADATA; min_cc the installation guide on huggingface.co.

use super::{Delivery, PackageRelease};
use crate::compat::torch::Platform;

const X86: &[Platform] = &[Platform::X86_64];
const ARM: &[Platform] = &[Platform::Aarch64];

/// x86_64: cuda118 to cuda126 sm_60 to sm_90, cuda128/129 sm_70 to sm_120, cuda130/132 sm_75
/// to sm_120; no PTX.
const X86_SASS: &[u32] = &[60, 70, 75, 80, 86, 89, 90, 100, 120];
/// aarch64 0.48.x: cuda118 to cuda126 sm_75/80/90, cuda128/129 add sm_100/120, cuda130 sm_110.
const ARM_SASS_048: &[u32] = &[75, 80, 90, 100, 110, 120];
/// aarch64 from 0.49.0: cuda130 (and cuda132) also sm_121.
const ARM_SASS: &[u32] = &[75, 80, 90, 100, 110, 120, 121];

const X86_048: &str = "bitsandbytes-VERSION-py3-none-manylinux_2_24_x86_64.whl on PyPI: \
    METADATA Requires-Dist torch<3,>=2.3, Requires-Python >=3.9 (0.49: >=3.10); bundles \
    libbitsandbytes_cuda118, 120-126, 128, 129, 130 .so; fatbins: cuda118-126 sm_60-sm_90, \
    cuda128/129 sm_70-sm_120, cuda130 sm_75-sm_120, no PTX; docs v0.48.1 installation: \
    \"Compute Capability 6.0+\", \"Maxwell support is not included in PyPI distributions from \
    v0.48.0 on\"; v0.50.0 the same 6.0+";
const ARM_048: &str = "bitsandbytes-VERSION-py3-none-manylinux_2_24_aarch64.whl on PyPI: \
    METADATA Requires-Dist torch<3,>=2.3; bundles libbitsandbytes_cuda118, 120-126, 128, 129, \
    130 .so; fatbins: cuda118-126 sm_75/80/90, cuda128/129 add sm_100/120, cuda130 adds sm_110 \
    (0.49: and sm_121), no PTX: lowest sm_75 though the docs say 6.0+";
const X86_050: &str = "bitsandbytes-VERSION-py3-none-manylinux_2_24_x86_64.whl on PyPI: \
    METADATA Requires-Dist torch<3,>=2.4, Requires-Python >=3.10; bundles libbitsandbytes_cuda118, \
    121, 124, 126, 128, 130, 132 .so (no 120/122/123/125/129); fatbins: cuda118-126 \
    sm_60-sm_90, cuda128 sm_70-sm_120, cuda130/132 sm_75-sm_120, no PTX; docs v0.50.0 \
    installation: Compute Capability 6.0+";
const ARM_050: &str = "bitsandbytes-VERSION-py3-none-manylinux_2_24_aarch64.whl on PyPI: \
    METADATA Requires-Dist torch<3,>=2.4; bundles libbitsandbytes_cuda118, 121, 124, 126, 128, \
    130, 132 .so; fatbins: cuda118-126 sm_75/80/90, cuda128 adds sm_100/120, cuda130/132 \
    sm_75-sm_121 with sm_110, no PTX: lowest sm_75 though the docs say 6.0+";

const fn r(
    version: &'static str,
    requirement: &'static str,
    platforms: &'static [Platform],
    sass: &'static [u32],
    min_cc: u32,
    torch: &'static str,
    source: &'static str,
) -> PackageRelease {
    PackageRelease {
        package: "bitsandbytes",
        version,
        requirement,
        index_url: None,
        delivery: Delivery::Wheel,
        // 0.50.2 wheel, bitsandbytes/cextension.py get_cuda_bnb_library_path: exact match, else the highest
        // packaged version <= torch's in the same major, else the lowest above; never across
        // majors.
        cuda: None,
        cudnn_major: None,
        min_driver: None,
        pythons: &[],
        platforms,
        sass,
        ptx: &[],
        exact: &[],
        min_cc: Some(min_cc),
        torch: Some(torch),
        companions: &[],
        source,
    }
}

pub static RELEASES: &[PackageRelease] = &[
    r(
        "0.50.2",
        "bitsandbytes==0.50.2",
        X86,
        X86_SASS,
        60,
        "<3,>=2.4",
        X86_050,
    ),
    r(
        "0.50.2",
        "bitsandbytes==0.50.2",
        ARM,
        ARM_SASS,
        75,
        "<3,>=2.4",
        ARM_050,
    ),
    r(
        "0.50.1",
        "bitsandbytes==0.50.1",
        X86,
        X86_SASS,
        60,
        "<3,>=2.4",
        X86_050,
    ),
    r(
        "0.50.1",
        "bitsandbytes==0.50.1",
        ARM,
        ARM_SASS,
        75,
        "<3,>=2.4",
        ARM_050,
    ),
    r(
        "0.50.0",
        "bitsandbytes==0.50.0",
        X86,
        X86_SASS,
        60,
        "<3,>=2.4",
        X86_050,
    ),
    r(
        "0.50.0",
        "bitsandbytes==0.50.0",
        ARM,
        ARM_SASS,
        75,
        "<3,>=2.4",
        ARM_050,
    ),
    r(
        "0.49.2",
        "bitsandbytes==0.49.2",
        X86,
        X86_SASS,
        60,
        "<3,>=2.3",
        X86_048,
    ),
    r(
        "0.49.2",
        "bitsandbytes==0.49.2",
        ARM,
        ARM_SASS,
        75,
        "<3,>=2.3",
        ARM_048,
    ),
    r(
        "0.49.1",
        "bitsandbytes==0.49.1",
        X86,
        X86_SASS,
        60,
        "<3,>=2.3",
        X86_048,
    ),
    r(
        "0.49.1",
        "bitsandbytes==0.49.1",
        ARM,
        ARM_SASS,
        75,
        "<3,>=2.3",
        ARM_048,
    ),
    r(
        "0.49.0",
        "bitsandbytes==0.49.0",
        X86,
        X86_SASS,
        60,
        "<3,>=2.3",
        X86_048,
    ),
    r(
        "0.49.0",
        "bitsandbytes==0.49.0",
        ARM,
        ARM_SASS,
        75,
        "<3,>=2.3",
        ARM_048,
    ),
    r(
        "0.48.2",
        "bitsandbytes==0.48.2",
        X86,
        X86_SASS,
        60,
        "<3,>=2.3",
        X86_048,
    ),
    r(
        "0.48.2",
        "bitsandbytes==0.48.2",
        ARM,
        ARM_SASS_048,
        75,
        "<3,>=2.3",
        ARM_048,
    ),
    r(
        "0.48.1",
        "bitsandbytes==0.48.1",
        X86,
        X86_SASS,
        60,
        "<3,>=2.3",
        X86_048,
    ),
    r(
        "0.48.1",
        "bitsandbytes==0.48.1",
        ARM,
        ARM_SASS_048,
        75,
        "<3,>=2.3",
        ARM_048,
    ),
    r(
        "0.48.0",
        "bitsandbytes==0.48.0",
        X86,
        X86_SASS,
        60,
        "<3,>=2.3",
        X86_048,
    ),
    r(
        "0.48.0",
        "bitsandbytes==0.48.0",
        ARM,
        ARM_SASS_048,
        75,
        "<3,>=2.3",
        ARM_048,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyversion::cmp_versions;
    use std::cmp::Ordering;

    #[test]
    fn py3_none_wheels_named_by_version() {
        for r in RELEASES {
            assert_eq!(r.requirement, format!("bitsandbytes=={}", r.version));
            assert!(r.pythons.is_empty(), "py3-none wheels");
        }
    }

    #[test]
    fn pascal_only_on_x86_64_and_cuda_13_2_from_0_50() {
        for r in RELEASES {
            let x86 = r.platforms == [Platform::X86_64];
            assert_eq!(r.min_cc, Some(if x86 { 60 } else { 75 }), "{}", r.version);
            assert_eq!(r.cuda, None, "follows torch's CUDA");
            let cu132 = cmp_versions(r.version, "0.50.0") != Ordering::Less;
            assert_eq!(r.source.contains("132"), cu132, "{}", r.version);
            assert_eq!(r.sass.first(), r.min_cc.as_ref(), "{}", r.version);
        }
    }
}
