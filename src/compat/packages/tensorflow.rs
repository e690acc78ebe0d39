//! TensorFlow with NVIDIA's CUDA wheels (`tensorflow[and-cuda]`), 2.15 to 2.21: the newest patch
//! of each minor. CUDA, cuDNN and the compute capabilities come from the x86_64 wheel's
//! tensorflow/python/platform/build_info.py (they match the "tested build configurations" table
//! of install/source.md); pythons from the wheel list on PyPI; the driver from install/pip.md.
//! Linux aarch64 wheels on PyPI declare the `and-cuda` extra too, but their build_info says
//! `is_cuda_build: False` (2.15 ones are shims for tensorflow-cpu-aws): x86_64 only.

use super::super::torch::Platform;
use super::{Delivery, PackageRelease};

// The rows: src/compat/data/tensorflow.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/tensorflow.rs"));

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
