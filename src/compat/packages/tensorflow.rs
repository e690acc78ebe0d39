//! TensorFlow with NVIDIA's CUDA wheels (`tensorflow[and-cuda]`), 2.15 to 2.21: the newest patch
//! of each minor. CUDA, cuDNN and the compute capabilities come from the x86_64 wheel's
//! tensorflow/python/platform/build_info.py (they match the "tested build configurations" table
//! of install/source.md); pythons from the wheel list on PyPI; the driver from install/pip.md.
//! Linux aarch64 wheels on PyPI declare the `and-cuda` extra too, but their build_info says
//! `is_cuda_build: False` (2.15 ones are shims for tensorflow-cpu-aws): x86_64 only.

use super::super::torch::Platform;
use super::{Delivery, PackageRelease};

const X86: &[Platform] = &[Platform::X86_64];

// build_info `cuda_compute_capabilities`, SASS entries; each list ends with the PTX of the
// next one up (compute_80 for 2.15, compute_90 from 2.16), which newer GPUs JIT-compile.
const SM_2_15: &[u32] = &[50, 60, 70, 75];
const SM_2_16: &[u32] = &[50, 60, 70, 80];
const SM_2_17: &[u32] = &[60, 70, 80, 89];

const DRIVER: &str = "525.60.13";

/// Newest first.
pub static RELEASES: &[PackageRelease] = &[
    r(
        "2.21.0",
        "tensorflow[and-cuda]==2.21.0",
        "12.5",
        9,
        &[10, 11, 12, 13],
        SM_2_17,
        "tensorflow-2.21.0 x86_64 wheel: build_info.py (cuda 12.5.1, cudnn 9, sm_60 sm_70 sm_80 \
         sm_89 compute_90), METADATA and-cuda (nvidia-cudnn-cu12<10.0,>=9.3.0.75); file list; \
         tensorflow/docs install/pip.md (driver >= 525.60.13 for Linux)",
    )
    .with_ptx(&[90]),
    r(
        "2.20.0",
        "tensorflow[and-cuda]==2.20.0",
        "12.5",
        9,
        &[9, 10, 11, 12, 13],
        SM_2_17,
        "tensorflow-2.20.0 x86_64 wheel: build_info.py (cuda 12.5.1, cudnn 9, sm_60 sm_70 sm_80 \
         sm_89 compute_90), METADATA and-cuda (nvidia-cudnn-cu12<10.0,>=9.3.0.75); file list; \
         tensorflow/docs install/pip.md (driver >= 525.60.13 for Linux)",
    )
    .with_ptx(&[90]),
    r(
        "2.19.1",
        "tensorflow[and-cuda]==2.19.1",
        "12.5",
        9,
        &[9, 10, 11, 12],
        SM_2_17,
        "tensorflow-2.19.1 x86_64 wheel: build_info.py (cuda 12.5.1, cudnn 9, sm_60 sm_70 sm_80 \
         sm_89 compute_90), METADATA and-cuda (nvidia-cudnn-cu12==9.3.0.75); file list; \
         tensorflow/docs install/pip.md (driver >= 525.60.13 for Linux)",
    )
    .with_ptx(&[90]),
    r(
        "2.18.1",
        "tensorflow[and-cuda]==2.18.1",
        "12.5",
        9,
        &[9, 10, 11, 12],
        SM_2_17,
        "tensorflow-2.18.1 x86_64 wheel: build_info.py (cuda 12.5.1, cudnn 9, sm_60 sm_70 sm_80 \
         sm_89 compute_90), METADATA and-cuda (nvidia-cudnn-cu12==9.3.0.75); file list; \
         tensorflow/docs install/pip.md (driver >= 525.60.13 for Linux)",
    )
    .with_ptx(&[90]),
    r(
        "2.17.1",
        "tensorflow[and-cuda]==2.17.1",
        "12.3",
        8,
        &[9, 10, 11, 12],
        SM_2_17,
        "tensorflow-2.17.1 x86_64 wheel: build_info.py (cuda 12.3, cudnn 8, sm_60 sm_70 sm_80 \
         sm_89 compute_90), METADATA and-cuda (nvidia-cudnn-cu12==8.9.7.29); file list; \
         tensorflow/docs install/pip.md (driver >= 525.60.13 for Linux)",
    )
    .with_ptx(&[90]),
    r(
        "2.16.2",
        "tensorflow[and-cuda]==2.16.2",
        "12.3",
        8,
        &[9, 10, 11, 12],
        SM_2_16,
        "tensorflow-2.16.2 x86_64 wheel: build_info.py (cuda 12.3, cudnn 8, sm_50 sm_60 sm_70 \
         sm_80 compute_90), METADATA and-cuda (nvidia-cudnn-cu12==8.9.7.29); file list; \
         tensorflow/docs install/pip.md (driver >= 525.60.13 for Linux)",
    )
    .with_ptx(&[90]),
    r(
        "2.15.1",
        "tensorflow[and-cuda]==2.15.1",
        "12.2",
        8,
        &[9, 10, 11],
        SM_2_15,
        "tensorflow-2.15.1 x86_64 wheel: build_info.py (cuda 12.2, cudnn 8, sm_50 sm_60 sm_70 \
         sm_75 compute_80), METADATA and-cuda (nvidia-cudnn-cu12==8.9.4.25; 2.15.0 also pinned \
         tensorrt==8.6.1.post1, dropped in 2.15.0.post1); file list; tensorflow/docs \
         install/pip.md (driver >= 525.60.13 for Linux)",
    )
    .with_ptx(&[80]),
];

const fn r(
    version: &'static str,
    requirement: &'static str,
    cuda: &'static str,
    cudnn_major: u32,
    pythons: &'static [u32],
    sass: &'static [u32],
    source: &'static str,
) -> PackageRelease {
    PackageRelease {
        package: "tensorflow",
        version,
        requirement,
        index_url: None,
        delivery: Delivery::Wheel,
        cuda: Some(cuda),
        cudnn_major: Some(cudnn_major),
        min_driver: Some(DRIVER),
        pythons,
        platforms: X86,
        sass,
        ptx: &[],
        exact: &[],
        // The lowest SASS of build_info; the PTX of the list's top covers newer GPUs.
        min_cc: Some(sass[0]),
        torch: None,
        companions: &[],
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyversion::cmp_versions;
    use std::cmp::Ordering;

    #[test]
    fn x86_64_only() {
        assert!(RELEASES.iter().all(|r| r.platforms == [Platform::X86_64]));
        assert!(RELEASES
            .iter()
            .all(|r| r.requirement == format!("tensorflow[and-cuda]=={}", r.version)));
    }

    #[test]
    fn cudnn_9_from_2_18() {
        for r in RELEASES {
            let want = if cmp_versions(r.version, "2.18.0") == Ordering::Less {
                8
            } else {
                9
            };
            assert_eq!(r.cudnn_major, Some(want), "{}", r.version);
        }
        // 2.17 dropped Maxwell (sm_50).
        let r = RELEASES.iter().find(|r| r.version == "2.17.1").unwrap();
        assert_eq!(r.min_cc, Some(60));
    }
}
