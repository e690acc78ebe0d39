//! torchvision and torchaudio releases and the torch each one declares it needs: the
//! `Requires-Dist: torch…` line of its Linux x86_64 wheel's METADATA on PyPI, and whether the
//! wheel is Python-independent (`py3-none`, built against torch's stable ABI) or built per
//! CPython (`cpXY`). Every row was read from the wheel itself (`.ci/compat-refresh` reads
//! them again and reports any difference); the wheel is the source a reader can open:
//! https://pypi.org/project/torchvision/VERSION/#files.
//!
//! The pairing is not a version formula: torchvision 0.3.0 needs torch ≥ 1.1.0 and 0.4.0
//! needs exactly 1.2.0 (0.4.1 is for 1.3.0); torchaudio stops at 2.11 (2.11.1 takes any torch
//! ≥ 2.11) and torchvision 0.29.2 any torch ≥ 2.14.0.

use crate::pyversion::{cmp_versions, holds};

/// Whether this companion release refuses a torch of another CUDA minor at import.
pub fn checks_cuda_minor(package: &str, version: &str) -> bool {
    let base = version.split('+').next().unwrap_or(version);
    MAJOR_ONLY_CUDA_CHECK
        .iter()
        .find(|(p, _, _)| *p == package)
        .is_none_or(|(_, from, _)| cmp_versions(base, from) == std::cmp::Ordering::Less)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompanionRelease {
    pub package: &'static str,
    pub version: &'static str,
    /// The Requires-Dist specifier for torch ("==2.7.1", ">=2.14.0"); "" when the wheel
    /// declares none (torchaudio 2.11.0).
    pub requires_torch: &'static str,
    /// A `py3-none` wheel: one build for every CPython, against torch's stable ABI.
    pub stable_abi: bool,
}

// The rows of RELEASES and MAJOR_ONLY_CUDA_CHECK: src/compat/data/companions.toml, compiled
// by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/companions.rs"));

impl CompanionRelease {
    /// Where the row was read, for a finding's evidence.
    pub fn source(&self) -> String {
        format!(
            "Requires-Dist of the {}-{} wheel on PyPI (https://pypi.org/project/{}/{}/#files)",
            self.package, self.version, self.package, self.version
        )
    }
}

/// "2.8.0+cu128" → "2.8.0": a companion's pin names a release, the index decides the build.
fn torch_release(torch: &str) -> &str {
    torch.split('+').next().unwrap_or(torch)
}

/// The row of an installed companion ("0.23.0+cu128" finds 0.23.0).
pub fn release(package: &str, version: &str) -> Option<&'static CompanionRelease> {
    let base = version.split('+').next().unwrap_or(version);
    RELEASES
        .iter()
        .find(|r| r.package == package && r.version == base)
}

/// The newest release of `package` whose declared torch requirement this torch satisfies;
/// releases that declare none are never proposed (nothing says they fit).
pub fn newest_for(package: &str, torch: &str) -> Option<&'static CompanionRelease> {
    RELEASES
        .iter()
        .filter(|r| r.package == package && !r.requires_torch.is_empty())
        .filter(|r| holds(torch_release(torch), r.requires_torch))
        .max_by(|a, b| cmp_versions(a.version, b.version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_follow_the_wheels_own_pins() {
        let pick = |p: &str, t: &str| newest_for(p, t).map(|r| r.version);
        assert_eq!(pick("torchvision", "1.1.0"), Some("0.3.0"));
        assert_eq!(pick("torchvision", "1.2.0"), Some("0.4.0"));
        assert_eq!(pick("torchvision", "1.3.0"), Some("0.4.1"));
        assert_eq!(pick("torchvision", "2.7.1+cu126"), Some("0.22.1"));
        assert_eq!(pick("torchvision", "2.8.0+cu128"), Some("0.23.0"));
        assert_eq!(pick("torchvision", "2.15.0"), Some("0.29.2"));
        assert_eq!(pick("torchaudio", "2.7.1+cu128"), Some("2.7.1"));
        // No torchaudio 2.12 or later exists: 2.11.1 declares torch >= 2.11.
        assert_eq!(pick("torchaudio", "2.15.0+cu132"), Some("2.11.1"));
        assert_eq!(pick("torchaudio", "2.13.0"), Some("2.11.1"));
        // A torch older than every pinned release gets nothing, not a guess.
        assert_eq!(pick("torchvision", "0.4.1"), None);
    }

    #[test]
    fn installed_companions_are_judged_by_their_pin() {
        let accepts = |p: &str, v: &str, torch: &str| {
            let r = release(p, v).unwrap();
            r.requires_torch.is_empty() || holds(torch, r.requires_torch)
        };
        assert!(release("torchvision", "0.29.2+cu132").unwrap().stable_abi);
        assert!(accepts("torchvision", "0.29.2+cu132", "2.15.0+cu132"));
        assert!(!accepts("torchvision", "0.29.2", "2.13.0"));
        assert!(!accepts("torchvision", "0.29.0", "2.15.0"));
        assert!(accepts("torchaudio", "2.11.0", "2.15.0"));
        assert!(release("torchvision", "0.30.0").is_none());
    }

    #[test]
    fn which_releases_check_the_cuda_minor() {
        assert!(checks_cuda_minor("torchvision", "0.15.2+cu118"));
        assert!(!checks_cuda_minor("torchvision", "0.16.0+cu121"));
        assert!(checks_cuda_minor("torchaudio", "2.11.0"));
        assert!(!checks_cuda_minor("torchaudio", "2.11.1+cu132"));
    }

    #[test]
    fn table_is_sorted_per_package() {
        for w in RELEASES.windows(2) {
            if w[0].package == w[1].package {
                assert_eq!(
                    cmp_versions(w[0].version, w[1].version),
                    std::cmp::Ordering::Less,
                    "{} {} before {}",
                    w[0].package,
                    w[0].version,
                    w[1].version
                );
            }
        }
    }
}
