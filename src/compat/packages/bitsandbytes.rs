//! bitsandbytes releases on PyPI, one row per release and platform. Each Linux wheel is
//! `py3-none` and bundles one `libbitsandbytes_cudaXYZ.so` per CUDA release (listed in the
//! source), loading the one for torch's CUDA (same major, nearest minor): the CUDA and driver
//! are torch's, so `cuda` is None. `sass` is every architecture any bundled library has. The
//! torch requirement is the wheel's METADATA; min_cc the installation guide on huggingface.co.

use super::{Delivery, PackageRelease};
use crate::compat::torch::Platform;

// The rows: src/compat/data/bitsandbytes.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/bitsandbytes.rs"));

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
