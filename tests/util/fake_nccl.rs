//! The fake libnccl (tests/fake_nccl/): where `cargo test` built it, and its typed config.
//! Point the fake at a config with `.env(FAKE_NCCL_ENV, cfg.write(dir))`.

use std::fs;
use std::path::{Path, PathBuf};

#[path = "../fake_nccl/config.rs"]
mod config;
pub use config::*;

/// The variable naming the JSON config the fake reads at its first call.
pub const FAKE_NCCL_ENV: &str = "GPUDOCTOR_FAKE_NCCL";

/// target/<profile>/examples/libfake_nccl.so; `FAKE_NCCL_LIB` overrides.
pub fn fake_nccl_lib() -> PathBuf {
    super::example_cdylib("fake_nccl", "FAKE_NCCL_LIB")
}

impl FakeNccl {
    /// Writes `dir/fake-nccl.json` and returns its path (the value for FAKE_NCCL_ENV).
    pub fn write(&self, dir: &Path) -> PathBuf {
        fs::create_dir_all(dir).expect("mkdir");
        let p = dir.join("fake-nccl.json");
        fs::write(&p, serde_json::to_string_pretty(self).expect("json")).expect("write");
        p
    }
}
