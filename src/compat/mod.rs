//! CUDA compatibility knowledge as data: toolkit ↔ driver, compute
//! capability ↔ toolkit, GPU names, and the error codes. Each table row carries the
//! source it was taken from; `UNCONFIRMED` in a source marks a fact not
//! checked against a primary source.

pub mod arch;
pub mod capabilities;
pub mod companions;
pub mod container_toolkit;
pub mod cuda_errors;
pub mod cudnn;
pub mod driver;
pub mod memory_bandwidth;
pub mod packages;
pub mod pci_ids;
pub mod require_cuda;
pub mod sources;
pub mod torch;
pub mod torch_pythons;
pub mod versions;
pub mod xid;

pub use arch::{gpu_from_name, ptx_runs_on, sass_runs_on, ProductClass};
pub use versions::{ComputeCapability, CudaVersion, DriverVersion};

#[cfg(test)]
mod tests {
    use super::arch::compiler_targets;
    use super::driver::{driver_verdict, forward_compat, max_cuda_for_driver};
    use super::*;

    /// The tables' versions and pins are read by the PEP 440 implementation, which says no to
    /// anything it cannot parse: a typo in a row would silently exclude it.
    #[test]
    fn every_table_version_and_pin_is_pep440() {
        use crate::pyversion::{parse_version, satisfies};
        for (name, rows) in packages::tables() {
            for r in rows {
                parse_version(r.version).unwrap_or_else(|e| panic!("{name}: {e}"));
                if let Some(spec) = r.torch {
                    satisfies("2.0", spec).unwrap_or_else(|e| panic!("{name} {}: {e}", r.version));
                }
            }
        }
        for r in companions::RELEASES {
            parse_version(r.version).unwrap_or_else(|e| panic!("{e}"));
            satisfies("2.0", r.requires_torch).unwrap_or_else(|e| panic!("{}: {e}", r.version));
        }
        for b in torch::BUILDS {
            parse_version(b.release).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// These parse values read from broken machines: none may panic on any input.
    #[test]
    fn parsers_never_panic() {
        const ALPHABET: &[&str] = &[
            "0",
            "1",
            "9",
            ".",
            "sm_",
            "compute_",
            "a",
            "f",
            "V",
            " ",
            "-",
            "NVIDIA",
            "RTX",
            "GeForce",
            "TITAN",
            "Jetson",
            "PRO",
            "#define CUDNN_MAJOR ",
            "/*",
            "*/",
            "//",
            "\n",
            "é",
            "😀",
            "\u{0}",
            "99999999999",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..(seed % 12) {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                s.push_str(ALPHABET[(seed >> 33) as usize % ALPHABET.len()]);
            }
            let _ = CudaVersion::parse(&s);
            let _ = ComputeCapability::parse_target(&s);
            let _ = gpu_from_name(&s);
            if let Some(d) = DriverVersion::parse(&s) {
                let _ = max_cuda_for_driver(&d);
                let _ = driver_verdict(CudaVersion::new(12, 4), &d);
                let _ = forward_compat(CudaVersion::new(13, 4), &d);
            }
            let n = seed as i64;
            let _ = CudaVersion::from_encoded(n);
            let _ = compiler_targets(CudaVersion::new((seed % 20) as u32, (seed % 13) as u32));
        }
    }
}
