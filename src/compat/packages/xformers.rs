//! xformers releases on PyPI. PyPI has Linux wheels for x86_64 only (plus win_amd64). The torch
//! pin and Requires-Python are each wheel's METADATA; CUDA, the torch it was built against and
//! TORCH_CUDA_ARCH_LIST are its own `xformers/cpp_lib.json` (written by setup.py from `nvcc -V`),
//! and the SASS matches the fatbin of `xformers/_C.so`. The README only lists the PyTorch
//! indexes (cu126/cu128/cu130), not the CUDA of the PyPI wheel.

use super::{Delivery, PackageRelease};
use crate::compat::torch::Platform;

// The rows: src/compat/data/xformers.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/xformers.rs"));

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
