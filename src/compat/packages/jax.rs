//! JAX with NVIDIA's CUDA wheels (`jax[cuda12]`, `jax[cuda13]`): the newest patch of each minor.
//! Pythons and platforms: the `jax-cudaN-plugin` and `jaxlib` wheel lists on PyPI; cuDNN: the
//! plugin's `with-cuda` Requires-Dist; CUDA: the release's .bazelrc (HERMETIC_CUDA_VERSION) and
//! the PTX ISA of the plugin wheel's `_prng.so`; `sass`: that fatbin (the plugin's own kernels;
//! XLA compiles the model's kernels at run time for the GPU present, so `min_cc` from the
//! install page, docs/installation.md at the release tag, is the bound that matters).

use super::super::torch::Platform;
use super::{Delivery, PackageRelease};

const BOTH: &[Platform] = &[Platform::X86_64, Platform::Aarch64];

// `_prng.so` SASS (each list also has the PTX of its last entry: compute_90 / compute_120).
const CU12_0_5: &[u32] = &[50, 60, 70, 80, 90];
const CU12_0_6: &[u32] = &[50, 60, 70, 80, 90, 100, 120];
const CU12_0_10: &[u32] = &[50, 60, 70, 80, 90, 100, 101, 120];
const CU13_0_7: &[u32] = &[75, 80, 90, 100, 120];
const CU13_0_10: &[u32] = &[75, 80, 90, 100, 110, 120];

const PY_0_11: &[u32] = &[12, 13, 14, 15];
const PY_0_7: &[u32] = &[11, 12, 13, 14];
const PY_0_5: &[u32] = &[10, 11, 12, 13];
/// The last release for Python 3.9 (0.4.31 on: Requires-Python >=3.10).
const PY_0_4_30: &[u32] = &[9, 10, 11, 12];

const S0_12_13: &str =
    "UNCONFIRMED: docs/installation.md not read at the 0.12.0.1 tag (main cec06d11 \
                        of 2026-08-08: CUDA 13 needs SM 7.5+, driver >= 580); wheels: \
                        jax_cuda13_plugin-0.12.0.1 METADATA (nvidia-cudnn-cu13>=9.12.0.46), \
                        _prng.so fatbin (PTX ISA 9.0 = CUDA 13.0), file list";
const S0_12_12: &str =
    "UNCONFIRMED: docs/installation.md not read at the 0.12.0.1 tag (main cec06d11 \
                        of 2026-08-08: CUDA 12 needs SM 5.2+, driver >= 525); wheels: \
                        jax_cuda12_plugin-0.12.0.1 METADATA (nvidia-cudnn-cu12>=9.10.2.21), \
                        _prng.so fatbin (PTX ISA 8.8 = CUDA 12.9), file list";
const S0_11_13: &str =
    "UNCONFIRMED: docs/installation.md not read at the 0.11.2 tag (jax-v0.11.0 and \
                        main cec06d11: CUDA 13 needs SM 7.5+, driver >= 580); wheels: \
                        jax_cuda13_plugin-0.11.2 METADATA (nvidia-cudnn-cu13>=9.12.0.46), _prng.so \
                        fatbin (PTX ISA 9.0 = CUDA 13.0), file list";
const S0_11_12: &str =
    "UNCONFIRMED: docs/installation.md not read at the 0.11.2 tag (jax-v0.11.0 and \
                        main cec06d11: CUDA 12 needs SM 5.2+, driver >= 525); wheels: \
                        jax_cuda12_plugin-0.11.2 METADATA (nvidia-cudnn-cu12>=9.10.2.21), _prng.so \
                        fatbin (PTX ISA 8.8 = CUDA 12.9), file list";
const S0_10_13: &str = "jax-v0.10.2 docs/installation.md (SM 7.5+, driver >= 580) and .bazelrc \
                        (cuda_v13: 13.0.0, cuDNN 9.12.0); jax_cuda13_plugin-0.10.2 METADATA \
                        (nvidia-cudnn-cu13>=9.12.0.46), _prng.so fatbin, file list";
const S0_10_12: &str = "jax-v0.10.2 docs/installation.md (SM 5.2+, driver >= 525) and .bazelrc \
                        (cuda_v12: 12.9.1, cuDNN 9.8.0); jax_cuda12_plugin-0.10.2 METADATA \
                        (nvidia-cudnn-cu12>=9.8), _prng.so fatbin, file list";
const S0_9_13: &str = "jax-v0.9.2 docs/installation.md (SM 7.5+, driver >= 580) and .bazelrc \
                       (cuda_v13: 13.0.0); jax_cuda13_plugin-0.9.2 METADATA \
                       (nvidia-cudnn-cu13>=9.12.0.46), _prng.so fatbin, file list";
const S0_9_12: &str = "jax-v0.9.2 docs/installation.md (SM 5.2+, driver >= 525) and .bazelrc \
                       (cuda_v12: 12.9.1); jax_cuda12_plugin-0.9.2 METADATA \
                       (nvidia-cudnn-cu12>=9.8), _prng.so fatbin, file list";
const S0_8_13: &str = "jax-v0.8.3 docs/installation.md (SM 7.5+, driver >= 580) and .bazelrc \
                       (cuda_v13: 13.0.0); jax_cuda13_plugin-0.8.3 METADATA \
                       (nvidia-cudnn-cu13>=9.12.0.46), _prng.so fatbin, file list";
const S0_8_12: &str = "jax-v0.8.3 docs/installation.md (SM 5.2+, driver >= 525) and .bazelrc \
                       (cuda_v12: 12.9.1); jax_cuda12_plugin-0.8.3 METADATA \
                       (nvidia-cudnn-cu12>=9.8), _prng.so fatbin, file list";
const S0_7_13: &str =
    "UNCONFIRMED: docs/installation.md at jax-v0.7.2 names no CUDA 13 driver or SM \
                       (from jax-v0.8.0: SM 7.5+, driver >= 580); jax-v0.7.2 .bazelrc (cuda_v13: \
                       13.0.0), jax_cuda13_plugin-0.7.2 METADATA (nvidia-cudnn-cu13>=9.12.0.46), \
                       _prng.so fatbin, file list";
const S0_7_12: &str =
    "jax-v0.7.2 docs/installation.md (SM 5.2+, driver >= 525.60.13) and .bazelrc \
                       (cuda_v12: 12.9.1); jax_cuda12_plugin-0.7.2 METADATA \
                       (nvidia-cudnn-cu12>=9.8), _prng.so fatbin, file list";
const S0_6: &str = "jax-v0.6.2 docs/installation.md (SM 5.2+, driver >= 525.60.13) and .bazelrc \
                    (12.8.0, cuDNN 9.8.0); jax_cuda12_plugin-0.6.2 METADATA \
                    (nvidia-cudnn-cu12>=9.8), _prng.so fatbin, file list";
const S0_4_30: &str = "jax-v0.4.30 docs/installation.md (SM 5.2+, driver >= 525.60.13) and \
                       .bazelrc (TF_CUDA_COMPUTE_CAPABILITIES sm_50..sm_80, compute_90); \
                       jax-0.4.30 METADATA (Requires-Python >=3.9, extra cuda12: jaxlib \
                       ==0.4.30, jax-cuda12-plugin[with_cuda] ==0.4.30); jax_cuda12_plugin-0.4.30 \
                       METADATA (nvidia-cudnn-cu12 <10.0,>=9.0), _prng.so fatbin (sm_50 to sm_90, \
                       compute_90; PTX ISA 8.3 = CUDA 12.3), cp39 to cp312 wheel list";
const S0_5: &str = "jax-v0.5.3 docs/installation.md (SM 5.2+, driver >= 525.60.13) and .bazelrc \
                    (12.3.2, cuDNN 9.1.1); jax_cuda12_plugin-0.5.3 METADATA \
                    (nvidia-cudnn-cu12>=9.1), _prng.so fatbin, file list";

/// Newest first; within a release, CUDA 13 first.
pub static RELEASES: &[PackageRelease] = &[
    r(
        "0.12.0.1",
        "jax[cuda13]==0.12.0.1",
        "13.0",
        "580",
        PY_0_11,
        CU13_0_10,
        75,
        S0_12_13,
    )
    .with_ptx(&[120]),
    r(
        "0.12.0.1",
        "jax[cuda12]==0.12.0.1",
        "12.9",
        "525",
        PY_0_11,
        CU12_0_10,
        52,
        S0_12_12,
    )
    .with_ptx(&[120]),
    r(
        "0.11.2",
        "jax[cuda13]==0.11.2",
        "13.0",
        "580",
        PY_0_11,
        CU13_0_10,
        75,
        S0_11_13,
    )
    .with_ptx(&[120]),
    r(
        "0.11.2",
        "jax[cuda12]==0.11.2",
        "12.9",
        "525",
        PY_0_11,
        CU12_0_10,
        52,
        S0_11_12,
    )
    .with_ptx(&[120]),
    r(
        "0.10.2",
        "jax[cuda13]==0.10.2",
        "13.0",
        "580",
        PY_0_7,
        CU13_0_10,
        75,
        S0_10_13,
    )
    .with_ptx(&[120]),
    r(
        "0.10.2",
        "jax[cuda12]==0.10.2",
        "12.9",
        "525",
        PY_0_7,
        CU12_0_10,
        52,
        S0_10_12,
    )
    .with_ptx(&[120]),
    r(
        "0.9.2",
        "jax[cuda13]==0.9.2",
        "13.0",
        "580",
        PY_0_7,
        CU13_0_7,
        75,
        S0_9_13,
    )
    .with_ptx(&[120]),
    r(
        "0.9.2",
        "jax[cuda12]==0.9.2",
        "12.9",
        "525",
        PY_0_7,
        CU12_0_6,
        52,
        S0_9_12,
    )
    .with_ptx(&[120]),
    r(
        "0.8.3",
        "jax[cuda13]==0.8.3",
        "13.0",
        "580",
        PY_0_7,
        CU13_0_7,
        75,
        S0_8_13,
    )
    .with_ptx(&[120]),
    r(
        "0.8.3",
        "jax[cuda12]==0.8.3",
        "12.9",
        "525",
        PY_0_7,
        CU12_0_6,
        52,
        S0_8_12,
    )
    .with_ptx(&[120]),
    r(
        "0.7.2",
        "jax[cuda13]==0.7.2",
        "13.0",
        "580",
        PY_0_7,
        CU13_0_7,
        75,
        S0_7_13,
    )
    .with_ptx(&[120]),
    r(
        "0.7.2",
        "jax[cuda12]==0.7.2",
        "12.9",
        "525.60.13",
        PY_0_7,
        CU12_0_6,
        52,
        S0_7_12,
    )
    .with_ptx(&[120]),
    r(
        "0.6.2",
        "jax[cuda12]==0.6.2",
        "12.8",
        "525.60.13",
        PY_0_5,
        CU12_0_6,
        52,
        S0_6,
    )
    .with_ptx(&[120]),
    r(
        "0.5.3",
        "jax[cuda12]==0.5.3",
        "12.3",
        "525.60.13",
        PY_0_5,
        CU12_0_5,
        52,
        S0_5,
    )
    .with_ptx(&[90]),
    r(
        "0.4.30",
        "jax[cuda12]==0.4.30",
        "12.3",
        "525.60.13",
        PY_0_4_30,
        CU12_0_5,
        52,
        S0_4_30,
    )
    .with_ptx(&[90]),
];

#[allow(clippy::too_many_arguments)]
const fn r(
    version: &'static str,
    requirement: &'static str,
    cuda: &'static str,
    min_driver: &'static str,
    pythons: &'static [u32],
    sass: &'static [u32],
    min_cc: u32,
    source: &'static str,
) -> PackageRelease {
    PackageRelease {
        package: "jax",
        version,
        requirement,
        index_url: None,
        delivery: Delivery::Wheel,
        cuda: Some(cuda),
        cudnn_major: Some(9),
        min_driver: Some(min_driver),
        pythons,
        platforms: BOTH,
        sass,
        ptx: &[],
        exact: &[],
        min_cc: Some(min_cc),
        torch: None,
        companions: &[],
        source,
    }
}

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
