//! flash-attn (FlashAttention-2) releases on PyPI: source distributions only, compiled by pip
//! with the local nvcc against the installed torch (`pip install flash-attn
//! --no-build-isolation`, README). The toolkit floor and the architectures are the setup.py in
//! each sdist; the GPUs are the README's, as the `flash_attention_2` row of capabilities.rs.

use super::{Delivery, PackageRelease};
use crate::compat::torch::Platform;

// The rows: src/compat/data/flash_attn.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/flash_attn.rs"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::capabilities::CAPABILITIES;

    #[test]
    fn built_from_source() {
        for r in RELEASES {
            assert_eq!(r.delivery, Delivery::SourceBuild);
            assert_eq!(r.requirement, format!("flash-attn=={}", r.version));
            assert!(r.pythons.is_empty() && r.cuda.is_none());
        }
    }

    #[test]
    fn gpu_floor_matches_the_capability_row() {
        let fa2 = CAPABILITIES
            .iter()
            .find(|c| c.key == "flash_attention_2")
            .unwrap();
        let floor = fa2.min_cc.major * 10 + fa2.min_cc.minor;
        assert!(RELEASES.iter().all(|r| r.min_cc == Some(floor)));
        assert!(!SASS.contains(&75));
    }
}
