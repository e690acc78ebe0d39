//! Releases of the CUDA frameworks and extensions other than torch that `gpudoctor recommend`
//! chooses between: what each release is installed as, the CUDA/cuDNN it is built on, the
//! driver it needs, the Pythons, platforms and GPUs its wheels cover, and the torch it pins.
//! One file per package; every row names its source (the wheel's METADATA or file list on
//! PyPI, the project's release notes or install page). `.ci/compat-refresh --packages`
//! reads the machine-readable facts again and reports any difference.

use super::torch::Platform;

pub mod bitsandbytes;
pub mod flash_attn;
pub mod jax;
pub mod onnxruntime;
pub mod tensorflow;
pub mod vllm;
pub mod xformers;

/// How a release reaches a machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// A binary wheel on PyPI (or on `index_url`).
    Wheel,
    /// Only a source distribution: pip compiles it with the local nvcc against the installed
    /// torch (flash-attn).
    SourceBuild,
}

/// One release of a package, newest first within its table.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct PackageRelease {
    /// The PyPI name ("jax", "tensorflow", "onnxruntime-gpu").
    pub package: &'static str,
    pub version: &'static str,
    /// What to put on the install line, extras included ("jax[cuda12]==0.7.2",
    /// "tensorflow[and-cuda]==2.20.0", "onnxruntime-gpu==1.22.0").
    pub requirement: &'static str,
    /// Another index the requirement comes from (None: PyPI).
    pub index_url: Option<&'static str>,
    pub delivery: Delivery,
    /// The CUDA the binaries are built with ("12.9"); None when the package ships no CUDA
    /// code of its own or the row does not know.
    pub cuda: Option<&'static str>,
    /// cuDNN major the release loads (8, 9); None when it loads none.
    pub cudnn_major: Option<u32>,
    /// Oldest Linux driver the release runs on ("525.60.13"); None: follow `cuda`'s own
    /// minimum through minor-version compatibility.
    pub min_driver: Option<&'static str>,
    /// CPython minors of 3.x with a wheel (10 → 3.10); empty for a `py3-none` wheel.
    pub pythons: &'static [u32],
    pub platforms: &'static [Platform],
    /// The SASS architectures compiled in (80 → sm_80); empty when not known.
    pub sass: &'static [u32],
    /// The PTX architectures compiled in: the driver JIT-compiles them for any newer GPU.
    pub ptx: &'static [u32],
    /// Entries of `sass` built arch-specific (`sm_90a`, `sm_120a`): they run on that exact
    /// compute capability only.
    pub exact: &'static [u32],
    /// Oldest compute capability it supports (as 75 for 7.5), when the project states one
    /// rather than (or as well as) an architecture list.
    pub min_cc: Option<u32>,
    /// The torch this release pins through Requires-Dist ("==2.9.0"); None when it has no
    /// torch requirement.
    pub torch: Option<&'static str>,
    /// The torchvision/torchaudio releases it pins exactly through Requires-Dist (vllm):
    /// an install next to it must take these, or pip replaces them.
    pub companions: &'static [(&'static str, &'static str)],
    pub source: &'static str,
}

impl PackageRelease {
    /// Whether the compiled code runs on `cc`: SASS of the same major and an equal or lower
    /// minor (arch-specific SASS: the same CC only), or PTX of an equal or lower CC.
    pub fn runs_on(&self, cc: super::ComputeCapability) -> bool {
        let n = cc.major * 10 + cc.minor;
        let general: Vec<u32> = self
            .sass
            .iter()
            .copied()
            .filter(|a| !self.exact.contains(a))
            .collect();
        self.exact.contains(&n) || super::torch::covers(&general, self.ptx, cc)
    }
}

/// Every table, in the order `recommend` lists the packages.
pub fn tables() -> [(&'static str, &'static [PackageRelease]); 7] {
    [
        ("jax", jax::RELEASES),
        ("tensorflow", tensorflow::RELEASES),
        ("onnxruntime-gpu", onnxruntime::RELEASES),
        ("vllm", vllm::RELEASES),
        ("flash-attn", flash_attn::RELEASES),
        ("xformers", xformers::RELEASES),
        ("bitsandbytes", bitsandbytes::RELEASES),
    ]
}

/// The row of an installed release (`+local` labels ignored): the first, where platforms
/// have rows of their own (their CUDA and cuDNN agree).
pub fn release_of(package: &str, version: &str) -> Option<&'static PackageRelease> {
    let base = version.split('+').next().unwrap_or(version);
    tables()
        .into_iter()
        .filter(|(n, _)| *n == package)
        .flat_map(|(_, rows)| rows.iter())
        .find(|r| r.version == base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyversion::cmp_versions;
    use std::cmp::Ordering;

    /// Every table: newest first (the recommender takes the first row that fits), two rows of
    /// one release differ in requirement or platform, and every row names its package, its
    /// version and a source.
    #[test]
    fn every_table_is_newest_first_and_sourced() {
        for (name, rows) in tables() {
            assert!(!rows.is_empty(), "{name}");
            for w in rows.windows(2) {
                let order = cmp_versions(w[0].version, w[1].version);
                assert_ne!(
                    order,
                    Ordering::Less,
                    "{name}: {} before {}",
                    w[0].version,
                    w[1].version
                );
                if order == Ordering::Equal {
                    assert!(
                        w[0].requirement != w[1].requirement || w[0].platforms != w[1].platforms,
                        "{name} {}: two rows alike",
                        w[0].version
                    );
                }
            }
            for r in rows {
                assert_eq!(r.package, name);
                assert!(
                    r.requirement.ends_with(&format!("=={}", r.version)),
                    "{}",
                    r.requirement
                );
                assert!(
                    !r.source.trim().is_empty() && !r.platforms.is_empty(),
                    "{name} {}",
                    r.version
                );
                assert!(
                    r.pythons.windows(2).all(|p| p[0] < p[1]),
                    "{name} {}",
                    r.version
                );
                assert!(
                    r.exact.iter().all(|a| r.sass.contains(a)),
                    "{name} {}",
                    r.version
                );
            }
        }
    }

    #[test]
    fn arch_specific_code_runs_on_its_own_gpu_only() {
        let r = release_of("onnxruntime-gpu", "1.28.0").unwrap();
        let cc = crate::compat::ComputeCapability::new;
        assert!(r.runs_on(cc(10, 0)));
        // sm_100a is not for 10.3, and compute_120 cannot be JIT-compiled for an older GPU.
        assert!(!r.runs_on(cc(10, 3)));
        // compute_120 PTX runs on 12.1.
        assert!(r.runs_on(cc(12, 1)));
    }
}
