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

#[cfg(test)]
const fn cc(major: u32, minor: u32) -> ComputeCapability {
    ComputeCapability::new(major, minor)
}

// The rows of CAPABILITIES: src/compat/data/capabilities.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/capabilities.rs"));

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
