//! The CPython versions of each torch release's Linux wheels on PyPI, per platform: read from
//! PyPI's simple API file list (`torch-V-cpXY-cpXY-manylinux…_x86_64|aarch64.whl`). Normal
//! CPython only; the free-threaded `cp313t`, `cp314t`, `cp315t` wheels are left out.
//! Up to 2.10 PyPI's aarch64 wheels are CPU builds (their nvidia-* Requires-Dist are marked
//! `platform_machine == "x86_64"`); the CUDA aarch64 wheels of those releases are on
//! download.pytorch.org, not read here. From 2.11 PyPI's aarch64 wheel is the CUDA 13 build.

use super::torch::{release_minor, Platform};

pub struct TorchPythons {
    pub release: &'static str,
    /// CPython minors of 3.x (10 → 3.10) with a manylinux x86_64 wheel.
    pub x86_64: &'static [u32],
    /// CPython minors with a manylinux aarch64 wheel.
    pub aarch64: &'static [u32],
    pub source: &'static str,
}

// The rows: src/compat/data/torch_pythons.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/torch_pythons.rs"));

/// The CPython minors with a PyPI wheel of this release ("2.8.0+cu128" → 2.8) for the platform.
pub fn pythons(release: &str, platform: Platform) -> Option<&'static [u32]> {
    let minor = release_minor(release)?;
    let row = TORCH_PYTHONS
        .iter()
        .find(|r| release_minor(r.release) == Some(minor))?;
    Some(match platform {
        Platform::X86_64 => row.x86_64,
        Platform::Aarch64 => row.aarch64,
    })
}

#[cfg(test)]
mod tests {
    use super::super::torch::BUILDS;
    use super::*;

    #[test]
    fn every_torch_build_release_has_a_row() {
        for b in BUILDS {
            let row = TORCH_PYTHONS.iter().find(|r| r.release == b.release);
            assert!(row.is_some(), "{}", b.release);
        }
        for w in TORCH_PYTHONS.windows(2) {
            assert!(release_minor(w[0].release) > release_minor(w[1].release));
        }
        for r in TORCH_PYTHONS {
            assert!(r.x86_64.windows(2).all(|p| p[0] < p[1]));
            assert!(r.aarch64.windows(2).all(|p| p[0] < p[1]));
        }
    }

    #[test]
    fn known_python_ranges() {
        // 2.15 drops 3.10 and adds 3.15; 2.5.1 has cp313 for x86_64 only.
        assert_eq!(
            pythons("2.15.0", Platform::X86_64),
            Some(&[11, 12, 13, 14, 15][..])
        );
        assert_eq!(
            pythons("2.5.1+cu124", Platform::X86_64),
            Some(&[9, 10, 11, 12, 13][..])
        );
        assert_eq!(
            pythons("2.5.1", Platform::Aarch64),
            Some(&[9, 10, 11, 12][..])
        );
        assert_eq!(
            pythons("2.0.1", Platform::X86_64),
            Some(&[8, 9, 10, 11][..])
        );
        assert_eq!(pythons("1.13.1", Platform::X86_64), None);
    }
}
