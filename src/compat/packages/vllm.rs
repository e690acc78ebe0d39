//! vLLM releases on PyPI, one row per release and platform: the x86_64 and aarch64 wheels
//! (`cp38-abi3`) are built for different GPUs. The torch, torchvision and torchaudio pins and
//! Requires-Python are the wheel's METADATA; CUDA and SASS are read from its
//! `vllm/_C_stable_libtorch.abi3.so` and agree with the build lists in the release's sdist
//! (`.buildkite/release-pipeline.yaml`); min_cc is `docs/.../gpu.cuda.inc.md` in that sdist.
//!
//! Two release lines: the CUDA 13 one (0.20.0 on; the table keeps 0.26.0 and newer) and the
//! CUDA 12 one, whose last release is 0.19.1 (0.20.0's `_C_stable_libtorch.abi3.so` needs
//! libcudart.so.13, 0.19.1's libcudart.so.12): the newest vLLM a CUDA 12 driver (525-575)
//! runs.

use super::{Delivery, PackageRelease};
use crate::compat::torch::Platform;

/// Requires-Python `<3.15,>=3.10` (0.26.0 to 0.31.0). The wheel is abi3: every CPython in
/// that range, all of which the pinned torch has wheels for (cp310 to cp314).
const PY310: &[u32] = &[10, 11, 12, 13, 14];
/// Requires-Python `<3.15,>=3.11` (0.32.0 on).
const PY311: &[u32] = &[11, 12, 13, 14];

/// Requires-Python `<3.14,>=3.10` (0.19.1).
const PY310_313: &[u32] = &[10, 11, 12, 13];

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

/// 0.19.1's wheels, read the same way: libcudart.so.12, no PTX, CUDA_VERSION=12.9.1 in
/// both "Build wheel - … - CUDA 12.9" steps of the sdist's release pipeline.
const X86_SASS_CU12: &[u32] = &[70, 75, 80, 89, 90, 100, 120];
const ARM_SASS_CU12: &[u32] = &[87, 89, 90, 100, 120];
const CU12_SOURCE: &str = "vllm-0.19.1-cp38-abi3-manylinux_2_31_{x86_64,aarch64}.whl on PyPI: \
    METADATA Requires-Dist torch==2.10.0, torchaudio==2.10.0, torchvision==0.25.0, \
    Requires-Python <3.14,>=3.10; vllm/_C_stable_libtorch.abi3.so needs libcudart.so.12, fatbin \
    sm_70 sm_75 sm_80 sm_89 sm_90 sm_100 sm_120 (x86_64), sm_87 sm_89 sm_90 sm_100 sm_120 \
    (aarch64), no PTX. Its sdist: .buildkite/release-pipeline.yaml \"Build wheel - x86_64 - CUDA \
    12.9\" (CUDA_VERSION=12.9.1); docs/getting_started/installation/gpu.cuda.inc.md \"compute \
    capability 7.0 or higher\", \"compiled with CUDA 12.9\"";

/// The torchvision and torchaudio each release pins (METADATA Requires-Dist, equal on both
/// platforms).
const PINS_2_14: &[(&str, &str)] = &[("torchvision", "0.29.0"), ("torchaudio", "2.11.0")];
const PINS_2_13: &[(&str, &str)] = &[("torchvision", "0.28.0"), ("torchaudio", "2.11.0")];
const PINS_2_11: &[(&str, &str)] = &[("torchvision", "0.26.0"), ("torchaudio", "2.11.0")];
const PINS_2_10: &[(&str, &str)] = &[("torchvision", "0.25.0"), ("torchaudio", "2.10.0")];

const fn pins_of(torch: &str) -> &'static [(&'static str, &'static str)] {
    match torch.as_bytes() {
        b"==2.14.0" => PINS_2_14,
        b"==2.13.0" => PINS_2_13,
        b"==2.11.0" => PINS_2_11,
        b"==2.10.0" => PINS_2_10,
        // A row of another torch must have its pins written in; the test below fails on it.
        _ => &[],
    }
}

/// The CUDA 12 line's last release (0.19.1) for one platform.
const fn cu12(platforms: &'static [Platform]) -> PackageRelease {
    let x86 = matches!(platforms[0], Platform::X86_64);
    PackageRelease {
        package: "vllm",
        version: "0.19.1",
        requirement: "vllm==0.19.1",
        index_url: None,
        delivery: Delivery::Wheel,
        cuda: Some("12.9"),
        cudnn_major: None,
        min_driver: None,
        pythons: PY310_313,
        platforms,
        sass: if x86 { X86_SASS_CU12 } else { ARM_SASS_CU12 },
        ptx: &[],
        exact: &[],
        min_cc: Some(if x86 { 70 } else { 87 }),
        torch: Some("==2.10.0"),
        companions: PINS_2_10,
        source: CU12_SOURCE,
    }
}

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
        companions: pins_of(torch),
        source: if x86 { X86_SOURCE } else { ARM_SOURCE },
    }
}

pub static RELEASES: &[PackageRelease] = &[
    r("0.34.0", "vllm==0.34.0", "==2.14.0", PY311, X86),
    // 0.34.0's aarch64 fatbin also has compute_89 and compute_90 PTX.
    r("0.34.0", "vllm==0.34.0", "==2.14.0", PY311, ARM).with_ptx(&[80, 89, 90]),
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
    cu12(X86),
    cu12(ARM),
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
        let cu12: Vec<_> = RELEASES.iter().filter(|r| r.cuda != Some("13.0")).collect();
        assert_eq!(cu12.len(), 2);
        assert!(cu12
            .iter()
            .all(|r| r.version == "0.19.1" && r.torch == Some("==2.10.0")));
    }

    #[test]
    fn companion_pins_follow_the_torch_pin() {
        for r in RELEASES {
            let tv = r
                .companions
                .iter()
                .find(|(n, _)| *n == "torchvision")
                .unwrap()
                .1;
            let declared = crate::compat::companions::RELEASES
                .iter()
                .find(|c| c.package == "torchvision" && c.version == tv)
                .unwrap();
            assert_eq!(Some(declared.requires_torch), r.torch, "vllm {}", r.version);
        }
    }
}
