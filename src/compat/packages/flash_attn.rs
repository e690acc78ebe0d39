//! Placeholder until the table is written.

use super::PackageRelease;

pub static RELEASES: &[PackageRelease] = &[];
