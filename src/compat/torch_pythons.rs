//! Placeholder until the table is written.

use super::torch::Platform;

pub fn pythons(_release: &str, _platform: Platform) -> Option<&'static [u32]> {
    None
}
