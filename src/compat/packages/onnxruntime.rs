//! onnxruntime-gpu on PyPI, 1.17 to 1.31: the newest patch of each minor. Every fact is read
//! from the wheel: CUDA from capi/build_and_package_info.py (1.21+) or the PTX ISA of
//! libonnxruntime_providers_cuda.so's fatbin (7.8 = CUDA 11.8, 8.2 = 12.2), cuDNN from the
//! libcudnn.so.N that library names or the `cudnn` extra, SASS from its fatbin, pythons and
//! platforms from the file list. 1.21+ declare `cuda` and `cudnn` extras (nvidia-* wheels).
//! The CUDA 12 builds of 1.17/1.18 on Microsoft's Azure feed are left out.

use super::super::torch::Platform;
use super::{Delivery, PackageRelease};

// The rows: src/compat/data/onnxruntime.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/onnxruntime.rs"));

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
