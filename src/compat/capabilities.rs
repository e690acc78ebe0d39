//! What a GPU can do, derived from its compute capability: tensor-core data
//! types, PyTorch features and attention kernels. Every row names its source;
//! `UNCONFIRMED` marks what was not checked against a primary source.
//!
//! A CC says what the architecture offers. Individual products can differ
//! (e.g. GTX 16xx is CC 7.5 without tensor cores), and a library only uses a
//! feature if its build carries kernels for the GPU.

use super::versions::ComputeCapability;
use serde::Serialize;

/// How a capability is available on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    Yes,
    No,
    /// Works but is not accelerated, e.g. bf16 math on sm_75.
    Emulated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Capability {
    pub key: &'static str,
    pub title: &'static str,
    /// Lowest CC that has it.
    pub min_cc: ComputeCapability,
    /// When not "everything from `min_cc` up": exactly these CCs have it.
    pub only: Option<&'static [ComputeCapability]>,
    /// What CCs below `min_cc` get.
    pub below: Support,
    pub note: &'static str,
    pub source: &'static str,
}

impl Capability {
    /// This capability evaluated for one GPU.
    pub fn support(&self, cc: ComputeCapability) -> Support {
        if cc < self.min_cc {
            return self.below;
        }
        match self.only {
            Some(list) if !list.contains(&cc) => Support::No,
            _ => Support::Yes,
        }
    }
}

/// Everything, evaluated for one GPU, in table order.
pub fn capabilities_for(cc: ComputeCapability) -> Vec<(&'static Capability, Support)> {
    CAPABILITIES.iter().map(|c| (c, c.support(cc))).collect()
}

/// Looks a row up by key.
#[cfg(test)]
pub fn capability(key: &str) -> Option<&'static Capability> {
    CAPABILITIES.iter().find(|c| c.key == key)
}

const fn cc(major: u32, minor: u32) -> ComputeCapability {
    ComputeCapability::new(major, minor)
}

/// Known CCs in PyTorch's SDPA range [sm80, sm121] (`check_sm_version`
/// compares major.minor, so every 10.x/11.x is inside).
const SM80_TO_SM121: &[ComputeCapability] = &[
    cc(8, 0),
    cc(8, 6),
    cc(8, 7),
    cc(8, 8),
    cc(8, 9),
    cc(9, 0),
    cc(10, 0),
    cc(10, 1),
    cc(10, 3),
    cc(10, 7),
    cc(11, 0),
    cc(12, 0),
    cc(12, 1),
];

/// Known CCs in PyTorch's memory-efficient SDPA range [sm50, sm121].
const SM50_TO_SM121: &[ComputeCapability] = &[
    cc(5, 0),
    cc(5, 2),
    cc(5, 3),
    cc(6, 0),
    cc(6, 1),
    cc(6, 2),
    cc(7, 0),
    cc(7, 2),
    cc(7, 5),
    cc(8, 0),
    cc(8, 6),
    cc(8, 7),
    cc(8, 8),
    cc(8, 9),
    cc(9, 0),
    cc(10, 0),
    cc(10, 1),
    cc(10, 3),
    cc(10, 7),
    cc(11, 0),
    cc(12, 0),
    cc(12, 1),
];

const SDP_UTILS: &str = "pytorch aten/src/ATen/native/transformers/cuda/sdp_utils.cpp (v2.14)";

pub static CAPABILITIES: &[Capability] = &[
    // --- Tensor cores -----------------------------------------------------
    Capability {
        key: "fp16_tensor_cores",
        title: "FP16 tensor cores",
        min_cc: cc(7, 0),
        only: None,
        below: Support::No,
        note: "Volta and newer (wmma/mma.sync). GTX 16xx (TU116/TU117) report CC 7.5 but have no \
               tensor cores.",
        source: "CUDA C++ Programming Guide, Warp Matrix Functions (\"compute capability 7.0 or \
                 higher\"); clang BuiltinsNVPTX.def __hmma_* = SM_70; GTX 16xx exception \
                 UNCONFIRMED",
    },
    Capability {
        key: "int8_tensor_cores",
        title: "INT8 tensor cores",
        min_cc: cc(7, 2),
        only: None,
        below: Support::No,
        note: "Jetson Xavier (7.2) and Turing (7.5) onward; V100 (7.0) has none. INT4/INT1 from \
               7.5. Blackwell Ultra (10.3) cuts INT8 throughput (UNCONFIRMED).",
        source: "clang BuiltinsNVPTX.def (__imma_*_s8 = AND(SM_72,PTX63), sub-byte = SM_75); \
                 CUTLASS wmma_sm72.h / wmma_sm75.h",
    },
    Capability {
        key: "tf32_tensor_cores",
        title: "TF32 tensor cores",
        min_cc: cc(8, 0),
        only: None,
        below: Support::No,
        note: "Ampere and newer. Below 8.0 torch's allow_tf32 has no effect (plain FP32).",
        source: "clang BuiltinsNVPTX.def (tf32/bf16/dmma WMMA = AND(SM_80,PTX70)); CUTLASS \
                 mma_sm80.h (mma.sync ... .tf32); NVIDIA A100 Tensor Core GPU Architecture \
                 whitepaper",
    },
    Capability {
        key: "bf16_tensor_cores",
        title: "BF16 tensor cores",
        min_cc: cc(8, 0),
        only: None,
        below: Support::No,
        note: "Ampere and newer. Older GPUs can store bf16 but compute it without tensor cores.",
        source: "https://nvidia.github.io/TransformerEngine/support_matrix.html (\"BF16 requires \
                 compute capability 8.0 or higher\"); clang BuiltinsNVPTX.def __mma_bf16_* = SM_80; \
                 CUTLASS CuTe DSL MmaF16BF16Op \"sm_80+\"",
    },
    Capability {
        key: "sparse_tensor_cores",
        title: "2:4 structured-sparsity tensor cores",
        min_cc: cc(8, 0),
        only: None,
        below: Support::No,
        note: "mma.sp; used via cuSPARSELt / torch.sparse.to_sparse_semi_structured.",
        source: "NVIDIA A100 Tensor Core GPU Architecture whitepaper (fine-grained structured \
                 sparsity); PTX ISA mma.sp (sm_80) — per-CC list UNCONFIRMED",
    },
    Capability {
        key: "fp8_tensor_cores",
        title: "FP8 (E4M3/E5M2) tensor cores",
        min_cc: cc(8, 9),
        only: None,
        below: Support::No,
        note: "Ada 8.9 (mma.sync) and Hopper 9.0 (wgmma) onward. Ampere incl. Jetson Orin (8.7) \
               has none.",
        source: "https://nvidia.github.io/TransformerEngine/support_matrix.html (FP8 \"requires \
                 compute capability 8.9 or higher\"); CUTLASS CuTe DSL MmaFP8Op \"FP8 warp-level \
                 MMA (SM89)\"",
    },
    Capability {
        key: "fp4_fp6_tensor_cores",
        title: "FP4/FP6 (incl. MXFP4/NVFP4) tensor cores",
        min_cc: cc(10, 0),
        only: None,
        below: Support::No,
        note: "Blackwell: tcgen05 kind::f8f6f4/mxf4nvf4 on 10.x, block-scaled mma.sync on 12.x. \
               Needs arch-specific (sm_100a/sm_120a or f) code. TE lists NVFP4 on 12.0 as \
               partial. 10.1/10.7/11.0/12.1 UNCONFIRMED.",
        source: "https://nvidia.github.io/TransformerEngine/support_matrix.html (NVFP4: 10.0/10.3 \
                 yes, 12.0 partial); CUTLASS blackwell_functionality.md (tcgen05.mma \
                 kind::f8f6f4, SM100); CUTLASS CuTe DSL MmaMXF4Op (MmaSM120BlockScaledOp)",
    },
    Capability {
        key: "wgmma",
        title: "Warpgroup MMA (wgmma.mma_async)",
        min_cc: cc(9, 0),
        only: Some(&[cc(9, 0)]),
        below: Support::No,
        note: "Hopper only (sm_90a); Blackwell uses tcgen05 (10.x) or mma.sync (12.x). Kernels \
               built for sm_90a do not run on 10.x/12.x.",
        source: "PTX ISA, wgmma.mma_async Target ISA notes (\"requires sm_90a\"); CUDA C++ \
                 Programming Guide (arch-specific `a` targets run only on that CC)",
    },
    Capability {
        key: "thread_block_clusters",
        title: "Thread block clusters, distributed shared memory, TMA",
        min_cc: cc(9, 0),
        only: None,
        below: Support::No,
        note: "Hopper and newer.",
        source: "CUDA C++ Programming Guide, Thread Block Clusters (\"compute capability 9.0\"); \
                 https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html",
    },
    // --- Memory / execution -------------------------------------------------
    Capability {
        key: "unified_memory_paging",
        title: "Unified memory with on-demand paging / oversubscription",
        min_cc: cc(6, 0),
        only: None,
        below: Support::No,
        note: "Pascal and newer, Linux only (concurrentManagedAccess); Windows/WSL and Kepler/\
               Maxwell get managed memory without page faulting. Tegra differs (UNCONFIRMED).",
        source: "CUDA C++ Programming Guide, Unified Memory (\"devices of compute capability 6.x \
                 and higher\" support on-demand page migration) — UNCONFIRMED exact wording",
    },
    Capability {
        key: "cuda_graphs",
        title: "CUDA graphs (torch.cuda.CUDAGraph)",
        min_cc: cc(3, 0),
        only: None,
        below: Support::No,
        note: "No CC requirement: any GPU the CUDA runtime (>= 10.0) supports. min_cc is the \
               oldest CC in the architecture table.",
        source: "CUDA C++ Programming Guide, CUDA Graphs (no CC restriction); \
                 https://pytorch.org/docs/stable/notes/cuda.html#cuda-graphs — min_cc by \
                 inference",
    },
    // --- PyTorch ------------------------------------------------------------
    Capability {
        key: "torch_bf16",
        title: "PyTorch bfloat16 / bf16 autocast",
        min_cc: cc(8, 0),
        only: None,
        below: Support::Emulated,
        note: "torch.cuda.is_bf16_supported() is True natively from 8.0. Below, the default \
               (including_emulation=True) still returns True if a bf16 tensor can be created, \
               so bf16 runs slowly; is_bf16_supported(including_emulation=False) returns False.",
        source: "pytorch torch/cuda/__init__.py is_bf16_supported (major >= 8, else \
                 _check_bf16_tensor_supported), torch 2.13/2.14",
    },
    Capability {
        key: "torch_compile_triton",
        title: "torch.compile default GPU backend (Inductor + Triton)",
        min_cc: cc(7, 0),
        only: None,
        below: Support::No,
        note: "PyTorch refuses major < 7 (GPUTooOldForTriton). Triton officially lists 8.0+; \
               on 7.x tl.dot falls back to FMA (no tensor cores). Volta also needs a torch \
               build with sm_70 kernels (not cu128 >= 2.11 or cu13x).",
        source: "pytorch torch/_dynamo/device_interface.py CudaInterface.is_triton_capable \
                 (major >= 7) and torch/_inductor/exc.py GPUTooOldForTriton; triton README \
                 \"NVIDIA GPUs (Compute Capability 8.0+)\"; triton-lang/triton PR #5066",
    },
    Capability {
        key: "torch_scaled_mm_fp8",
        title: "FP8 matmul torch._scaled_mm",
        min_cc: cc(8, 9),
        only: None,
        below: Support::No,
        note: "Errors below 8.9: \"torch._scaled_mm is only supported on CUDA devices with \
               compute capability >= 9.0 or 8.9, or ROCm MI300+\".",
        source: "pytorch aten/src/ATen/native/cuda/Blas.cpp _scaled_mm_out_cuda \
                 (_scaled_mm_allowed_device)",
    },
    Capability {
        key: "sdpa_flash",
        title: "scaled_dot_product_attention: flash backend",
        min_cc: cc(8, 0),
        only: Some(SM80_TO_SM121),
        below: Support::No,
        note: "fp16/bf16 only. torch 2.14 range [sm80, sm121]; older releases stopped at sm90, \
               so Blackwell needs a recent torch.",
        source: SDP_UTILS,
    },
    Capability {
        key: "sdpa_mem_efficient",
        title: "scaled_dot_product_attention: memory-efficient backend",
        min_cc: cc(5, 0),
        only: Some(SM50_TO_SM121),
        below: Support::No,
        note: "Range [sm50, sm121]; bf16 inputs only from 8.0 (fp16/fp32 below).",
        source: SDP_UTILS,
    },
    Capability {
        key: "sdpa_cudnn",
        title: "scaled_dot_product_attention: cuDNN backend",
        min_cc: cc(8, 0),
        only: Some(SM80_TO_SM121),
        below: Support::No,
        note: "Range [sm80, sm121]; needs cuDNN >= 8.9.3.",
        source: SDP_UTILS,
    },
    // --- flash-attn package -------------------------------------------------
    Capability {
        key: "flash_attention_1",
        title: "FlashAttention 1.x (flash-attn < 2)",
        min_cc: cc(7, 5),
        only: Some(&[cc(7, 5), cc(8, 0), cc(8, 6), cc(8, 7)]),
        below: Support::No,
        note: "Turing and Ampere; bf16 only on Ampere. The option for Turing (T4, RTX 20xx), \
               along with the separate flash-attention-turing repo. Ada/Hopper not listed.",
        source: "Dao-AILab/flash-attention README (1.x: \"Turing or Ampere GPUs (e.g., A100, RTX \
                 3090, T4, RTX 2080)\"; 2.x: \"use FlashAttention 1.x for Turing GPUs\")",
    },
    Capability {
        key: "flash_attention_2",
        title: "FlashAttention-2 (flash-attn 2.x)",
        min_cc: cc(8, 0),
        only: None,
        below: Support::No,
        note: "Ampere, Ada, Hopper, and Blackwell through the sm_100/110/120 code its setup.py \
               builds by default (the README lists only up to Hopper).",
        source: "Dao-AILab/flash-attention README (\"Ampere, Ada, or Hopper GPUs (e.g., A100, RTX \
                 3090, RTX 4090, H100)\"); setup.py at 0251105a, cuda_archs(): \
                 FLASH_ATTN_CUDA_ARCHS default \"80;90;100;110;120\" (sm_100/110/120 from CUDA 12.8/13)",
    },
    Capability {
        key: "flash_attention_3",
        title: "FlashAttention-3 (flash_attn_3, hopper/)",
        min_cc: cc(8, 0),
        only: Some(&[cc(8, 0), cc(8, 6), cc(8, 9), cc(9, 0)]),
        below: Support::No,
        note: "Built from source: sm_90a kernels (fp16, bf16, fp8) and, by default, sm_80 kernels \
               (fp16 and bf16 only) that run on 8.x; the sm80 ones are left out with \
               FLASH_ATTENTION_DISABLE_SM80=TRUE. Not Blackwell (no sm_10x/12x build of the full \
               kernel set). The README names only H100/H800.",
        source: "Dao-AILab/flash-attention hopper/setup.py at 0251105a (\"-gencode \
                 arch=compute_80,code=sm_80\" for *_sm80.cu, sm_90a for *_sm90.cu, \
                 FLASH_ATTENTION_DISABLE_SM80) and hopper/flash_api.cpp (`dprops->major >= 8`, \
                 \"FlashAttention on Ampere/Ada cards only supports fp16 and bf16\")",
    },
    Capability {
        key: "flash_attention_4",
        title: "FlashAttention-4 (CuTe DSL)",
        min_cc: cc(8, 0),
        only: Some(SM80_TO_SM121),
        below: Support::No,
        note: "Kernels JIT-compiled by CuTe DSL for sm80, sm90, sm100/110 and sm120; FP8 only on \
               10.x.",
        source: "flash_attn_4-4.0.0b36-py3-none-any.whl on PyPI, flash_attn/cute/interface.py \
                 (`assert arch // 10 in [8, 9, 10, 11, 12], \"Unsupported compute capability. \
                 Supported: 8.x, 9.x, 10.x, 11.x, 12.x\"`; flash_fwd_sm90.py, \
                 flash_fwd_sm100.py, flash_fwd_sm120.py)",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::arch::ARCHITECTURES;
    use std::collections::HashSet;

    fn support(key: &str, c: ComputeCapability) -> Support {
        capability(key).expect(key).support(c)
    }

    #[test]
    fn table_sanity() {
        let mut keys = HashSet::new();
        for c in CAPABILITIES {
            assert!(keys.insert(c.key), "duplicate key {}", c.key);
            assert!(!c.key.is_empty() && !c.title.is_empty(), "{}", c.key);
            assert!(!c.source.trim().is_empty(), "{} has no source", c.key);
            assert!(!c.note.trim().is_empty(), "{} has no note", c.key);
            if let Some(only) = c.only {
                assert!(only.contains(&c.min_cc), "{}: only lacks min_cc", c.key);
                assert!(only.iter().all(|o| *o >= c.min_cc), "{}", c.key);
            }
            // Below min_cc a row answers `below`, at min_cc it is supported.
            assert_eq!(c.support(cc(2, 0)), c.below, "{}", c.key);
            assert_eq!(c.support(c.min_cc), Support::Yes, "{}", c.key);
        }
        let all = capabilities_for(cc(9, 0));
        assert_eq!(all.len(), CAPABILITIES.len());
        assert!(all
            .iter()
            .zip(CAPABILITIES)
            .all(|((a, _), b)| a.key == b.key));
    }

    /// The explicit SDPA lists cover every known CC in torch's ranges.
    #[test]
    fn sdpa_ranges_match_arch_table() {
        for r in ARCHITECTURES {
            assert_eq!(
                SM80_TO_SM121.contains(&r.cc),
                r.cc >= cc(8, 0) && r.cc <= cc(12, 1),
                "{}",
                r.cc
            );
            assert_eq!(
                SM50_TO_SM121.contains(&r.cc),
                r.cc >= cc(5, 0) && r.cc <= cc(12, 1),
                "{}",
                r.cc
            );
        }
    }

    const TENSOR_CORES: &[&str] = &[
        "fp16_tensor_cores",
        "int8_tensor_cores",
        "tf32_tensor_cores",
        "bf16_tensor_cores",
        "sparse_tensor_cores",
        "fp8_tensor_cores",
        "fp4_fp6_tensor_cores",
    ];

    #[test]
    fn gtx_1080_sm61() {
        let c = cc(6, 1);
        for k in TENSOR_CORES {
            assert_eq!(support(k, c), Support::No, "{k}");
        }
        assert_eq!(support("torch_bf16", c), Support::Emulated);
        assert_eq!(support("torch_compile_triton", c), Support::No);
        assert_eq!(support("sdpa_flash", c), Support::No);
        assert_eq!(support("sdpa_mem_efficient", c), Support::Yes);
        assert_eq!(support("flash_attention_2", c), Support::No);
        assert_eq!(support("cuda_graphs", c), Support::Yes);
    }

    #[test]
    fn v100_sm70() {
        let c = cc(7, 0);
        assert_eq!(support("fp16_tensor_cores", c), Support::Yes);
        assert_eq!(support("int8_tensor_cores", c), Support::No);
        assert_eq!(support("torch_compile_triton", c), Support::Yes);
        assert_eq!(support("flash_attention_1", c), Support::No);
    }

    #[test]
    fn t4_sm75() {
        let c = cc(7, 5);
        assert_eq!(support("fp16_tensor_cores", c), Support::Yes);
        assert_eq!(support("int8_tensor_cores", c), Support::Yes);
        assert_eq!(support("tf32_tensor_cores", c), Support::No);
        assert_eq!(support("bf16_tensor_cores", c), Support::No);
        assert_eq!(support("fp8_tensor_cores", c), Support::No);
        assert_eq!(support("torch_bf16", c), Support::Emulated);
        assert_eq!(support("sdpa_flash", c), Support::No);
        assert_eq!(support("sdpa_mem_efficient", c), Support::Yes);
        assert_eq!(support("flash_attention_1", c), Support::Yes);
        assert_eq!(support("flash_attention_2", c), Support::No);
    }

    #[test]
    fn a100_sm80() {
        let c = cc(8, 0);
        for k in [
            "tf32_tensor_cores",
            "bf16_tensor_cores",
            "sparse_tensor_cores",
            "torch_bf16",
            "sdpa_flash",
            "sdpa_cudnn",
            "flash_attention_2",
        ] {
            assert_eq!(support(k, c), Support::Yes, "{k}");
        }
        for k in [
            "fp8_tensor_cores",
            "torch_scaled_mm_fp8",
            "fp4_fp6_tensor_cores",
            "wgmma",
            "thread_block_clusters",
        ] {
            assert_eq!(support(k, c), Support::No, "{k}");
        }
        // hopper/setup.py builds sm_80 kernels by default; FA4 asserts major 8..12.
        assert_eq!(support("flash_attention_3", c), Support::Yes);
        assert_eq!(support("flash_attention_4", c), Support::Yes);
    }

    #[test]
    fn orin_sm87_has_no_fp8() {
        assert_eq!(support("fp8_tensor_cores", cc(8, 7)), Support::No);
        assert_eq!(support("bf16_tensor_cores", cc(8, 7)), Support::Yes);
    }

    #[test]
    fn l4_rtx4090_sm89() {
        let c = cc(8, 9);
        assert_eq!(support("fp8_tensor_cores", c), Support::Yes);
        assert_eq!(support("torch_scaled_mm_fp8", c), Support::Yes);
        assert_eq!(support("flash_attention_2", c), Support::Yes);
        assert_eq!(support("flash_attention_3", c), Support::Yes);
        assert_eq!(support("fp4_fp6_tensor_cores", c), Support::No);
        assert_eq!(support("wgmma", c), Support::No);
    }

    #[test]
    fn h100_sm90() {
        let c = cc(9, 0);
        for k in [
            "fp8_tensor_cores",
            "flash_attention_3",
            "flash_attention_4",
            "wgmma",
            "thread_block_clusters",
            "sdpa_flash",
        ] {
            assert_eq!(support(k, c), Support::Yes, "{k}");
        }
        assert_eq!(support("fp4_fp6_tensor_cores", c), Support::No);
    }

    #[test]
    fn blackwell_sm100_sm120() {
        for c in [cc(10, 0), cc(12, 0)] {
            for k in [
                "fp4_fp6_tensor_cores",
                "fp8_tensor_cores",
                "bf16_tensor_cores",
                "sdpa_flash",
                "flash_attention_2",
            ] {
                assert_eq!(support(k, c), Support::Yes, "{k} on {c}");
            }
            assert_eq!(support("flash_attention_3", c), Support::No, "{c}");
            assert_eq!(support("wgmma", c), Support::No, "{c}");
        }
        assert_eq!(support("flash_attention_4", cc(10, 0)), Support::Yes);
        assert_eq!(support("flash_attention_4", cc(12, 0)), Support::Yes);
        assert_eq!(support("flash_attention_4", cc(7, 5)), Support::No);
        // Orin (8.7, Tegra) cannot run sm_80 SASS.
        assert_eq!(support("flash_attention_3", cc(8, 7)), Support::No);
    }

    #[test]
    fn serializes_snake_case() {
        assert_eq!(
            serde_json::to_string(&Support::Emulated).unwrap(),
            "\"emulated\""
        );
        let row = serde_json::to_value(capability("wgmma").unwrap()).unwrap();
        assert_eq!(row["min_cc"], "9.0");
        assert_eq!(row["only"][0], "9.0");
    }
}
