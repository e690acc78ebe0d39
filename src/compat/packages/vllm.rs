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

// The rows: src/compat/data/vllm.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/vllm.rs"));

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
