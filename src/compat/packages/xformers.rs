//! xformers releases on PyPI. PyPI has Linux wheels for x86_64 only (plus win_amd64). The torch
//! pin and Requires-Python are each wheel's METADATA; CUDA, the torch it was built against and
//! TORCH_CUDA_ARCH_LIST are its own `xformers/cpp_lib.json` (written by setup.py from `nvcc -V`),
//! and the SASS matches the fatbin of `xformers/_C.so`. The README only lists the PyTorch
//! indexes (cu126/cu128/cu130), not the CUDA of the PyPI wheel.

use super::{Delivery, PackageRelease};
use crate::compat::torch::Platform;

const X86: &[Platform] = &[Platform::X86_64];

/// cp39-abi3 wheels, Requires-Python >=3.9: every CPython the pinned torch has a Linux wheel
/// for (torch 2.7.1/2.8.0: cp39 to cp313; 2.9.x/2.10.0: cp310 to cp314).
const PY39: &[u32] = &[9, 10, 11, 12, 13];
const PY310: &[u32] = &[10, 11, 12, 13, 14];

/// TORCH_CUDA_ARCH_LIST "7.5 8.0+PTX 9.0a" (from 0.0.33.post1 "7.5 8.0+PTX 8.0 9.0a"): sm_75,
/// sm_80, sm_90a and compute_80 PTX.
const TURING_HOPPER: &[u32] = &[75, 80, 90];
/// 0.0.33 only: "7.5 8.0+PTX 8.0 9.0a 10.0a 10.3a 11.0a 12.0a 12.1a" (all `a` but 7.5/8.0).
const TURING_BLACKWELL: &[u32] = &[75, 80, 90, 100, 103, 110, 120, 121];

const fn r(
    version: &'static str,
    requirement: &'static str,
    cuda: &'static str,
    pythons: &'static [u32],
    sass: &'static [u32],
    torch: &'static str,
    source: &'static str,
) -> PackageRelease {
    PackageRelease {
        package: "xformers",
        version,
        requirement,
        index_url: None,
        delivery: Delivery::Wheel,
        cuda: Some(cuda),
        cudnn_major: None,
        min_driver: None,
        pythons,
        platforms: X86,
        sass,
        // compute_80 PTX in every build; the `a` entries are arch-specific.
        ptx: &[80],
        exact: if sass.len() > 3 {
            &[90, 100, 103, 110, 120, 121]
        } else {
            &[90]
        },
        min_cc: None,
        torch: Some(torch),
        companions: &[],
        source,
    }
}

pub static RELEASES: &[PackageRelease] = &[
    r(
        "0.0.35",
        "xformers==0.0.35",
        "12.8",
        &[],
        TURING_HOPPER,
        ">=2.10",
        "xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl on PyPI: METADATA Requires-Dist \
         torch>=2.10 (py39-none: one build for every CPython); cpp_lib.json cuda 1208, torch \
         2.10.0+cu128; no flash_attn_3 in the wheel",
    ),
    r(
        "0.0.34",
        "xformers==0.0.34",
        "12.8",
        PY310,
        TURING_HOPPER,
        "==2.10.0",
        "xformers-0.0.34-cp39-abi3-manylinux_2_28_x86_64.whl on PyPI: METADATA Requires-Dist \
         torch==2.10.0; cpp_lib.json cuda 1208, torch 2.10.0+cu128",
    ),
    r(
        "0.0.33.post2",
        "xformers==0.0.33.post2",
        "12.8",
        PY310,
        TURING_HOPPER,
        "==2.9.1",
        "xformers-0.0.33.post2-cp39-abi3-manylinux_2_28_x86_64.whl on PyPI: METADATA \
         Requires-Dist torch==2.9.1; cpp_lib.json cuda 1208, torch 2.9.1+cu128",
    ),
    r(
        "0.0.33.post1",
        "xformers==0.0.33.post1",
        "12.8",
        PY310,
        TURING_HOPPER,
        "==2.9.0",
        "xformers-0.0.33.post1-cp39-abi3-manylinux_2_28_x86_64.whl on PyPI: METADATA \
         Requires-Dist torch==2.9.0; cpp_lib.json cuda 1208, torch 2.9.0+cu128",
    ),
    r(
        "0.0.33",
        "xformers==0.0.33",
        "13.0",
        PY310,
        TURING_BLACKWELL,
        "==2.9.0",
        "xformers-0.0.33-cp39-abi3-manylinux_2_28_x86_64.whl on PyPI: METADATA Requires-Dist \
         torch==2.9.0; cpp_lib.json cuda 1300, torch 2.9.0+cu130 (PyPI's torch 2.9.0 is cu128; \
         0.0.33.post1 went back to CUDA 12.8 the next day)",
    ),
    r(
        "0.0.32.post2",
        "xformers==0.0.32.post2",
        "12.8",
        PY39,
        TURING_HOPPER,
        "==2.8.0",
        "xformers-0.0.32.post2-cp39-abi3-manylinux_2_28_x86_64.whl on PyPI: METADATA \
         Requires-Dist torch==2.8.0; cpp_lib.json cuda 1208, torch 2.8.0+cu128",
    ),
    r(
        "0.0.32.post1",
        "xformers==0.0.32.post1",
        "12.8",
        PY39,
        TURING_HOPPER,
        "==2.8.0",
        "xformers-0.0.32.post1-cp39-abi3-manylinux_2_28_x86_64.whl on PyPI: METADATA \
         Requires-Dist torch==2.8.0; cpp_lib.json cuda 1208, torch 2.8.0+cu128",
    ),
    r(
        "0.0.31.post1",
        "xformers==0.0.31.post1",
        "12.8",
        PY39,
        TURING_HOPPER,
        "==2.7.1",
        "xformers-0.0.31.post1-cp39-abi3-manylinux_2_28_x86_64.whl on PyPI: METADATA \
         Requires-Dist torch==2.7.1; cpp_lib.json cuda 1208 (nvcc 12.8) against torch \
         2.7.1+cu126",
    ),
    r(
        "0.0.31",
        "xformers==0.0.31",
        "12.8",
        PY39,
        TURING_HOPPER,
        "==2.7.1",
        "xformers-0.0.31-cp39-abi3-manylinux_2_28_x86_64.whl on PyPI: METADATA Requires-Dist \
         torch==2.7.1; cpp_lib.json cuda 1208 (nvcc 12.8) against torch 2.7.1+cu126",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_0_0_33_was_built_with_cuda_13() {
        let cu13: Vec<&str> = RELEASES
            .iter()
            .filter(|r| r.cuda == Some("13.0"))
            .map(|r| r.version)
            .collect();
        assert_eq!(cu13, ["0.0.33"]);
        let newest = &RELEASES[0];
        assert!(newest.pythons.is_empty());
        assert_eq!(newest.torch, Some(">=2.10"));
    }
}
