//! vLLM releases on PyPI, one row per release and platform: the x86_64 and aarch64 wheels
//! (`cp38-abi3`, manylinux_2_28) are built for different GPUs. The torch pin and
//! Requires-Python are the wheel's METADATA; CUDA and SASS are read from its
//! `vllm/_C_stable_libtorch.abi3.so` and agree with the build lists in the release's sdist
//! (`.buildkite/release-pipeline.yaml`); min_cc is `docs/.../gpu.cuda.inc.md` in that sdist.

use super::{Delivery, PackageRelease};
use crate::compat::torch::Platform;

/// Requires-Python `<3.15,>=3.10` (0.26.0 to 0.31.0). The wheel is abi3: every CPython in
/// that range, all of which the pinned torch has wheels for (cp310 to cp314).
const PY310: &[u32] = &[10, 11, 12, 13, 14];
/// Requires-Python `<3.15,>=3.11` (0.32.0 on).
const PY311: &[u32] = &[11, 12, 13, 14];

const X86: &[Platform] = &[Platform::X86_64];
const ARM: &[Platform] = &[Platform::Aarch64];

/// CUDA_ARCH_X86 of the release pipeline; the fatbin has these sm_* (plus sm_90a, sm_100f,
/// sm_120f kernels and compute_80/89/90 PTX).
const X86_SASS: &[u32] = &[75, 80, 86, 89, 90, 100, 120];
/// CUDA_ARCH_AARCH64: no sm_75 (the docs' 7.5 minimum is x86_64's) and PTX from compute_80.
/// From 0.28.0 the fatbin also has some sm_86 kernels; sm_80 code runs on 8.6 either way.
const ARM_SASS: &[u32] = &[80, 87, 89, 90, 100, 110, 120];

const X86_SOURCE: &str = "the release's vllm-VERSION-cp38-abi3-manylinux_2_28_x86_64.whl on \
    PyPI: METADATA Requires-Dist torch, Requires-Python; vllm/_C_stable_libtorch.abi3.so needs \
    libcudart.so.13, PTX .version 9.0 (CUDA 13.0), fatbin sm_75 to sm_120. Its sdist: \
    .buildkite/release-pipeline.yaml \"Build wheel - x86_64 - CUDA 13.0\" (CUDA_VERSION=13.0.2, \
    CUDA_ARCH_X86 \"7.5 8.0 8.6 8.9 9.0 10.0 12.0\"); docs/getting_started/installation/\
    gpu.cuda.inc.md \"compute capability 7.5 or higher\" (its \"compiled with CUDA 12.9\" does \
    not match the wheel)";
const ARM_SOURCE: &str = "the release's vllm-VERSION-cp38-abi3-manylinux_2_28_aarch64.whl on \
    PyPI: METADATA Requires-Dist torch, Requires-Python; vllm/_C_stable_libtorch.abi3.so needs \
    libcudart.so.13, PTX .version 9.0 (CUDA 13.0), fatbin lowest sm_80 and compute_80. Its \
    sdist: .buildkite/release-pipeline.yaml \"Build wheel - aarch64 - CUDA 13.0\" \
    (CUDA_VERSION=13.0.2, CUDA_ARCH_AARCH64 \"8.0 8.7 8.9 9.0 10.0 11.0 12.0\")";

const fn r(
    version: &'static str,
    requirement: &'static str,
    torch: &'static str,
    pythons: &'static [u32],
    platforms: &'static [Platform],
) -> PackageRelease {
    let x86 = matches!(platforms[0], Platform::X86_64);
    PackageRelease {
        package: "vllm",
        version,
        requirement,
        index_url: None,
        delivery: Delivery::Wheel,
        cuda: Some("13.0"),
        cudnn_major: None,
        min_driver: None,
        pythons,
        platforms,
        sass: if x86 { X86_SASS } else { ARM_SASS },
        ptx: if x86 { &[80, 89, 90] } else { &[80] },
        exact: &[],
        min_cc: Some(if x86 { 75 } else { 80 }),
        torch: Some(torch),
        source: if x86 { X86_SOURCE } else { ARM_SOURCE },
    }
}

pub static RELEASES: &[PackageRelease] = &[
    r("0.33.0", "vllm==0.33.0", "==2.14.0", PY311, X86),
    r("0.33.0", "vllm==0.33.0", "==2.14.0", PY311, ARM),
    r("0.32.0", "vllm==0.32.0", "==2.13.0", PY311, X86),
    r("0.32.0", "vllm==0.32.0", "==2.13.0", PY311, ARM),
    r("0.31.0", "vllm==0.31.0", "==2.13.0", PY310, X86),
    r("0.31.0", "vllm==0.31.0", "==2.13.0", PY310, ARM),
    r("0.30.0", "vllm==0.30.0", "==2.13.0", PY310, X86),
    r("0.30.0", "vllm==0.30.0", "==2.13.0", PY310, ARM),
    r("0.29.0", "vllm==0.29.0", "==2.13.0", PY310, X86),
    r("0.29.0", "vllm==0.29.0", "==2.13.0", PY310, ARM),
    r("0.28.0", "vllm==0.28.0", "==2.13.0", PY310, X86),
    r("0.28.0", "vllm==0.28.0", "==2.13.0", PY310, ARM),
    r("0.27.1", "vllm==0.27.1", "==2.13.0", PY310, X86),
    r("0.27.1", "vllm==0.27.1", "==2.13.0", PY310, ARM),
    r("0.27.0", "vllm==0.27.0", "==2.13.0", PY310, X86),
    r("0.27.0", "vllm==0.27.0", "==2.13.0", PY310, ARM),
    r("0.26.0", "vllm==0.26.0", "==2.11.0", PY310, X86),
    r("0.26.0", "vllm==0.26.0", "==2.11.0", PY310, ARM),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_platform_per_row() {
        for r in RELEASES {
            assert_eq!(r.requirement, format!("vllm=={}", r.version));
            assert_eq!(r.platforms.len(), 1);
        }
    }

    #[test]
    fn aarch64_wheels_leave_out_turing() {
        let row = |v: &str, p: Platform| {
            RELEASES
                .iter()
                .find(|r| r.version == v && r.platforms == [p])
                .unwrap()
        };
        assert!(row("0.33.0", Platform::X86_64).sass.contains(&75));
        assert!(!row("0.33.0", Platform::Aarch64).sass.contains(&75));
        assert!(row("0.33.0", Platform::Aarch64).sass.contains(&110));
        assert_eq!(row("0.33.0", Platform::X86_64).torch, Some("==2.14.0"));
        assert_eq!(row("0.26.0", Platform::Aarch64).torch, Some("==2.11.0"));
        assert!(RELEASES.iter().all(|r| r.cuda == Some("13.0")));
    }
}
