//! JAX with NVIDIA's CUDA wheels (`jax[cuda12]`, `jax[cuda13]`): the newest patch of each minor.
//! Pythons and platforms: the `jax-cudaN-plugin` and `jaxlib` wheel lists on PyPI; cuDNN: the
//! plugin's `with-cuda` Requires-Dist; CUDA: the release's .bazelrc (HERMETIC_CUDA_VERSION) and
//! the PTX ISA of the plugin wheel's `_prng.so`; `sass`: that fatbin (the plugin's own kernels;
//! XLA compiles the model's kernels at run time for the GPU present, so `min_cc` from the
//! install page, docs/installation.md at the release tag, is the bound that matters).

use super::super::torch::Platform;
use super::{Delivery, PackageRelease};

// The rows: src/compat/data/jax.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/jax.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirement_names_the_cuda_major() {
        for r in RELEASES {
            let major = r.cuda.unwrap().split('.').next().unwrap();
            assert!(r
                .requirement
                .starts_with(&format!("jax[cuda{major}]=={}", r.version)));
            assert!(r.pythons.windows(2).all(|p| p[0] < p[1]));
        }
    }

    #[test]
    fn cuda13_wheels_drop_pre_turing_gpus() {
        let cu13 = RELEASES
            .iter()
            .find(|r| r.requirement == "jax[cuda13]==0.8.3");
        let cu12 = RELEASES
            .iter()
            .find(|r| r.requirement == "jax[cuda12]==0.8.3");
        assert_eq!(cu13.unwrap().min_cc, Some(75));
        assert_eq!(cu12.unwrap().min_cc, Some(52));
        // 0.7.2 is the first release with a CUDA 13 plugin on PyPI.
        assert!(!RELEASES
            .iter()
            .any(|r| r.requirement == "jax[cuda13]==0.6.2"));
    }
}
