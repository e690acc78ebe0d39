//! onnxruntime-gpu on PyPI, 1.17 to 1.31: the newest patch of each minor. Every fact is read
//! from the wheel: CUDA from capi/build_and_package_info.py (1.21+) or the PTX ISA of
//! libonnxruntime_providers_cuda.so's fatbin (7.8 = CUDA 11.8, 8.2 = 12.2), cuDNN from the
//! libcudnn.so.N that library names or the `cudnn` extra, SASS from its fatbin, pythons and
//! platforms from the file list. 1.21+ declare `cuda` and `cudnn` extras (nvidia-* wheels).
//! The CUDA 12 builds of 1.17/1.18 on Microsoft's Azure feed are left out.

use super::super::torch::Platform;
use super::{Delivery, PackageRelease};

const X86: &[Platform] = &[Platform::X86_64];
const ARM: &[Platform] = &[Platform::Aarch64];

// libonnxruntime_providers_cuda.so fatbins. The `a` entries (sm_90a, sm_100a, sm_120a,
// sm_121a) are arch-specific and run on that exact CC only.
/// sm_52 … sm_80, each with its PTX (the rows' `ptx`).
const SM_1_17: &[u32] = &[52, 60, 61, 70, 75, 80];
/// sm_60 … sm_86, sm_90 (sm_90a from 1.23: the rows' `exact`), and compute_90.
const SM_1_21: &[u32] = &[60, 70, 75, 80, 86, 90];
/// sm_75 … sm_89, sm_90a, sm_100a, sm_120a, and compute_120.
const SM_1_27: &[u32] = &[75, 80, 86, 89, 90, 100, 120];
/// x86_64: sm_75 … sm_89, sm_90a, sm_120a; no PTX.
const SM_1_29: &[u32] = &[75, 80, 86, 89, 90, 120];
/// aarch64: sm_89, sm_90a, sm_120a, sm_121a; no PTX.
const SM_1_29_ARM: &[u32] = &[89, 90, 120, 121];

const PY_1_24: &[u32] = &[11, 12, 13, 14];
const PY_1_20: &[u32] = &[10, 11, 12, 13];
const PY_1_17: &[u32] = &[8, 9, 10, 11, 12];

/// Newest first; from 1.29 one row per platform (the aarch64 build has its own GPU list).
pub static RELEASES: &[PackageRelease] = &[
    r(
        "1.31.1",
        "onnxruntime-gpu[cuda,cudnn]==1.31.1",
        "13.0",
        9,
        PY_1_24,
        X86,
        SM_1_29,
        "onnxruntime_gpu-1.31.1 x86_64 wheel: build_and_package_info.py (cuda_version \
         13.0), METADATA extras cuda (nvidia-cuda-runtime~=13.0) and cudnn \
         (nvidia-cudnn-cu13~=9.0), libonnxruntime_providers_cuda.so fatbin (sm_75 sm_80 \
         sm_86 sm_89 sm_90a sm_120a, no PTX), file list",
    )
    .with_exact(&[90, 120]),
    r(
        "1.31.1",
        "onnxruntime-gpu[cuda,cudnn]==1.31.1",
        "13.0",
        9,
        PY_1_24,
        ARM,
        SM_1_29_ARM,
        "onnxruntime_gpu-1.31.1 aarch64 wheel: build_and_package_info.py (cuda_version \
         13.0), METADATA extras cuda (nvidia-cuda-runtime~=13.0) and cudnn \
         (nvidia-cudnn-cu13~=9.0), libonnxruntime_providers_cuda.so fatbin (sm_89 \
         sm_90a sm_120a sm_121a, no PTX), file list",
    )
    .with_exact(&[90, 120, 121]),
    r(
        "1.30.0",
        "onnxruntime-gpu[cuda,cudnn]==1.30.0",
        "13.0",
        9,
        PY_1_24,
        X86,
        SM_1_29,
        "onnxruntime_gpu-1.30.0 x86_64 wheel: build_and_package_info.py (cuda_version \
         13.0), METADATA extras cuda (nvidia-cuda-runtime~=13.0) and cudnn \
         (nvidia-cudnn-cu13~=9.0), libonnxruntime_providers_cuda.so fatbin (sm_75 sm_80 \
         sm_86 sm_89 sm_90a sm_120a, no PTX), file list",
    )
    .with_exact(&[90, 120]),
    r(
        "1.30.0",
        "onnxruntime-gpu[cuda,cudnn]==1.30.0",
        "13.0",
        9,
        PY_1_24,
        ARM,
        SM_1_29_ARM,
        "onnxruntime_gpu-1.30.0 aarch64 wheel: build_and_package_info.py (cuda_version \
         13.0), METADATA extras cuda (nvidia-cuda-runtime~=13.0) and cudnn \
         (nvidia-cudnn-cu13~=9.0), libonnxruntime_providers_cuda.so fatbin (sm_89 \
         sm_90a sm_120a sm_121a, no PTX), file list",
    )
    .with_exact(&[90, 120, 121]),
    r(
        "1.29.0",
        "onnxruntime-gpu[cuda,cudnn]==1.29.0",
        "13.0",
        9,
        PY_1_24,
        X86,
        SM_1_29,
        "onnxruntime_gpu-1.29.0 x86_64 wheel: build_and_package_info.py (cuda_version \
         13.0), METADATA extras cuda (nvidia-cuda-runtime~=13.0) and cudnn \
         (nvidia-cudnn-cu13~=9.0), libonnxruntime_providers_cuda.so fatbin (sm_75 sm_80 \
         sm_86 sm_89 sm_90a sm_120a, no PTX), file list",
    )
    .with_exact(&[90, 120]),
    r(
        "1.29.0",
        "onnxruntime-gpu[cuda,cudnn]==1.29.0",
        "13.0",
        9,
        PY_1_24,
        ARM,
        SM_1_29_ARM,
        "onnxruntime_gpu-1.29.0 aarch64 wheel: build_and_package_info.py (cuda_version \
         13.0), METADATA extras cuda (nvidia-cuda-runtime~=13.0) and cudnn \
         (nvidia-cudnn-cu13~=9.0), libonnxruntime_providers_cuda.so fatbin (sm_89 \
         sm_90a sm_120a sm_121a, no PTX), file list",
    )
    .with_exact(&[90, 120, 121]),
    r(
        "1.28.0",
        "onnxruntime-gpu[cuda,cudnn]==1.28.0",
        "13.0",
        9,
        PY_1_24,
        X86,
        SM_1_27,
        "onnxruntime_gpu-1.28.0 x86_64 wheel: build_and_package_info.py (cuda_version \
         13.0), METADATA extras cuda (nvidia-cuda-runtime~=13.0) and cudnn \
         (nvidia-cudnn-cu13~=9.0), libonnxruntime_providers_cuda.so fatbin (sm_75 sm_80 \
         sm_86 sm_89 sm_90a sm_100a sm_120a compute_120), file list",
    )
    .with_ptx(&[120])
    .with_exact(&[90, 100, 120]),
    r(
        "1.27.0",
        "onnxruntime-gpu[cuda,cudnn]==1.27.0",
        "13.0",
        9,
        PY_1_24,
        X86,
        SM_1_27,
        "onnxruntime_gpu-1.27.0 x86_64 wheel: build_and_package_info.py (cuda_version \
         13.0), METADATA extras cuda (nvidia-cuda-runtime-cu13~=13.0) and cudnn \
         (nvidia-cudnn-cu13~=9.0), libonnxruntime_providers_cuda.so (libcudart.so.13, \
         libcudnn.so.9, fatbin sm_75 sm_80 sm_86 sm_89 sm_90a sm_100a sm_120a \
         compute_120), file list",
    )
    .with_ptx(&[120])
    .with_exact(&[90, 100, 120]),
    r(
        "1.26.0",
        "onnxruntime-gpu[cuda,cudnn]==1.26.0",
        "12.8",
        9,
        PY_1_24,
        X86,
        SM_1_21,
        "onnxruntime_gpu-1.26.0 x86_64 wheel: build_and_package_info.py (cuda_version \
         12.8), METADATA extras cuda (nvidia-cuda-runtime-cu12~=12.0) and cudnn \
         (nvidia-cudnn-cu12~=9.0), libonnxruntime_providers_cuda.so (libcudnn.so.9, \
         fatbin sm_60 sm_70 sm_75 sm_80 sm_86 sm_90a compute_90), file list",
    )
    .with_ptx(&[90])
    .with_exact(&[90]),
    r(
        "1.25.1",
        "onnxruntime-gpu[cuda,cudnn]==1.25.1",
        "12.8",
        9,
        PY_1_24,
        X86,
        SM_1_21,
        "onnxruntime_gpu-1.25.1 x86_64 wheel: build_and_package_info.py (cuda_version \
         12.8), METADATA extras cuda (nvidia-cuda-runtime-cu12~=12.0) and cudnn \
         (nvidia-cudnn-cu12~=9.0), libonnxruntime_providers_cuda.so (libcudnn.so.9, \
         fatbin sm_60 sm_70 sm_75 sm_80 sm_86 sm_90a compute_90), file list",
    )
    .with_ptx(&[90])
    .with_exact(&[90]),
    r(
        "1.24.4",
        "onnxruntime-gpu[cuda,cudnn]==1.24.4",
        "12.8",
        9,
        PY_1_24,
        X86,
        SM_1_21,
        "onnxruntime_gpu-1.24.4 x86_64 wheel: build_and_package_info.py (cuda_version \
         12.8), METADATA extras cuda (nvidia-cuda-runtime-cu12~=12.0) and cudnn \
         (nvidia-cudnn-cu12~=9.0), libonnxruntime_providers_cuda.so (libcudnn.so.9, \
         fatbin sm_60 sm_70 sm_75 sm_80 sm_86 sm_90a compute_90), file list",
    )
    .with_ptx(&[90])
    .with_exact(&[90]),
    r(
        "1.23.2",
        "onnxruntime-gpu[cuda,cudnn]==1.23.2",
        "12.2",
        9,
        PY_1_20,
        X86,
        SM_1_21,
        "onnxruntime_gpu-1.23.2 x86_64 wheel: build_and_package_info.py (cuda_version \
         12.2), METADATA extras cuda (nvidia-cuda-runtime-cu12~=12.0) and cudnn \
         (nvidia-cudnn-cu12~=9.0), libonnxruntime_providers_cuda.so (libcudnn.so.9, \
         fatbin sm_60 sm_70 sm_75 sm_80 sm_86 sm_90a compute_90), file list",
    )
    .with_ptx(&[90])
    .with_exact(&[90]),
    r(
        "1.22.0",
        "onnxruntime-gpu[cuda,cudnn]==1.22.0",
        "12.2",
        9,
        PY_1_20,
        X86,
        SM_1_21,
        "onnxruntime_gpu-1.22.0 x86_64 wheel: build_and_package_info.py (cuda_version \
         12.2), METADATA extras cuda (nvidia-cuda-runtime-cu12~=12.0) and cudnn \
         (nvidia-cudnn-cu12~=9.0), libonnxruntime_providers_cuda.so (libcudnn.so.9, \
         fatbin sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 compute_90), file list",
    )
    .with_ptx(&[90]),
    r(
        "1.21.1",
        "onnxruntime-gpu[cuda,cudnn]==1.21.1",
        "12.2",
        9,
        PY_1_20,
        X86,
        SM_1_21,
        "onnxruntime_gpu-1.21.1 x86_64 wheel: build_and_package_info.py (cuda_version \
         12.2), METADATA extras cuda (nvidia-cuda-runtime-cu12~=12.0) and cudnn \
         (nvidia-cudnn-cu12~=9.0), libonnxruntime_providers_cuda.so (libcudnn.so.9, \
         fatbin sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 compute_90), file list",
    )
    .with_ptx(&[90]),
    r(
        "1.20.2",
        "onnxruntime-gpu==1.20.2",
        "12.2",
        9,
        PY_1_20,
        X86,
        SM_1_17,
        "onnxruntime_gpu-1.20.2 x86_64 wheel: libonnxruntime_providers_cuda.so \
         (libcudart.so.12, libcudnn.so.9, fatbin sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 \
         each with its PTX, PTX ISA 8.2 = CUDA 12.2), no nvidia-* Requires-Dist, file \
         list",
    )
    .with_ptx(SM_1_17),
    r(
        "1.19.2",
        "onnxruntime-gpu==1.19.2",
        "12.2",
        9,
        PY_1_17,
        X86,
        SM_1_17,
        "onnxruntime_gpu-1.19.2 x86_64 wheel: libonnxruntime_providers_cuda.so \
         (libcudart.so.12, libcudnn.so.9, fatbin sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 \
         each with its PTX, PTX ISA 8.2 = CUDA 12.2), no nvidia-* Requires-Dist, file \
         list",
    )
    .with_ptx(SM_1_17),
    r(
        "1.18.1",
        "onnxruntime-gpu==1.18.1",
        "11.8",
        8,
        PY_1_17,
        X86,
        SM_1_17,
        "onnxruntime_gpu-1.18.1 x86_64 wheel: libonnxruntime_providers_cuda.so \
         (libcudart.so.11.0, libcudnn.so.8, fatbin sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 \
         each with its PTX, PTX ISA 7.8 = CUDA 11.8), no nvidia-* Requires-Dist, file \
         list",
    )
    .with_ptx(SM_1_17),
    r(
        "1.17.1",
        "onnxruntime-gpu==1.17.1",
        "11.8",
        8,
        PY_1_17,
        X86,
        SM_1_17,
        "onnxruntime_gpu-1.17.1 x86_64 wheel: libonnxruntime_providers_cuda.so \
         (libcudart.so.11.0, libcudnn.so.8, fatbin sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 \
         each with its PTX, PTX ISA 7.8 = CUDA 11.8), no nvidia-* Requires-Dist, file \
         list; CUDA-ExecutionProvider requirements page (onnxruntime.ai: the default \
         CUDA for 1.17 is 11.8)",
    )
    .with_ptx(SM_1_17),
];

#[allow(clippy::too_many_arguments)]
const fn r(
    version: &'static str,
    requirement: &'static str,
    cuda: &'static str,
    cudnn_major: u32,
    pythons: &'static [u32],
    platforms: &'static [Platform],
    sass: &'static [u32],
    source: &'static str,
) -> PackageRelease {
    PackageRelease {
        package: "onnxruntime-gpu",
        version,
        requirement,
        index_url: None,
        delivery: Delivery::Wheel,
        cuda: Some(cuda),
        cudnn_major: Some(cudnn_major),
        min_driver: None,
        pythons,
        platforms,
        sass,
        ptx: &[],
        exact: &[],
        min_cc: None,
        torch: None,
        companions: &[],
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_and_cudnn_majors() {
        let row = |v: &str| RELEASES.iter().find(|r| r.version == v).unwrap();
        // 1.19 moved PyPI to CUDA 12 and cuDNN 9; 1.18 was CUDA 11.8 and cuDNN 8.
        assert_eq!(
            (row("1.19.2").cuda, row("1.19.2").cudnn_major),
            (Some("12.2"), Some(9))
        );
        assert_eq!(
            (row("1.18.1").cuda, row("1.18.1").cudnn_major),
            (Some("11.8"), Some(8))
        );
        // 1.27 moved PyPI to CUDA 13.
        assert_eq!(row("1.27.0").cuda, Some("13.0"));
        assert_eq!(row("1.26.0").cuda, Some("12.8"));
        // The cuda/cudnn extras exist from 1.21.
        assert_eq!(row("1.20.2").requirement, "onnxruntime-gpu==1.20.2");
        assert_eq!(
            row("1.21.1").requirement,
            "onnxruntime-gpu[cuda,cudnn]==1.21.1"
        );
    }
}
