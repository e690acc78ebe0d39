//! CUDA toolkit ↔ NVIDIA driver: minimum drivers per toolkit release,
//! minor-version compatibility per CUDA major, the CUDA version each driver
//! branch reports, and the forward-compatibility (cuda-compat) matrix.
//! Facts from NVIDIA's CUDA Toolkit Release Notes (Table 2 and Table 3, "CUDA Toolkit and
//! Corresponding Driver Versions":
//! https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html, and the
//! current notes' "Corresponding Driver Branch" table for 13.3 on) and the CUDA Compatibility
//! guide (https://docs.nvidia.com/deploy/cuda-compatibility/: minor-version and forward
//! compatibility); every row names its source.

use super::versions::{CudaVersion, DriverVersion};
use serde::Serialize;

/// One row of "CUDA Toolkit and Corresponding Driver Versions" (Linux/Windows x86_64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ToolkitDriverRow {
    /// The release as NVIDIA names it, e.g. "12.2 Update 1".
    pub toolkit: &'static str,
    pub version: CudaVersion,
    /// Minimum Linux driver; a bare branch ("615") where only the branch is published.
    pub min_linux: &'static str,
    /// None where Table 3 says N/A (all 13.x: the Windows driver is no longer bundled).
    pub min_windows: Option<&'static str>,
    pub source: &'static str,
}

// The rows of TOOLKIT_DRIVERS, FAMILY_MINIMUMS, DRIVER_BRANCHES and FORWARD_COMPAT_MATRIX:
// src/compat/data/driver.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/driver.rs"));

/// The minimum driver of a CUDA minor release: its GA row (release
/// candidates skipped), or the bare branch where only that is known.
pub fn toolkit_min_driver(v: CudaVersion) -> Option<&'static ToolkitDriverRow> {
    TOOLKIT_DRIVERS
        .iter()
        .find(|r| r.version == v && !r.toolkit.contains("RC"))
}

/// The driver a whole CUDA major family needs for minor-version compatibility.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FamilyMinimum {
    pub major: u32,
    pub min_linux: &'static str,
    /// The Windows driver (WSL runs on it); None where the release notes give none (13.x:
    /// the driver branch decides, as for the toolkit rows).
    pub min_windows: Option<&'static str>,
    pub source: &'static str,
}

pub fn family_minimum(major: u32) -> Option<&'static FamilyMinimum> {
    FAMILY_MINIMUMS.iter().find(|f| f.major == major)
}

/// A driver branch and the CUDA version nvidia-smi reports for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BranchRow {
    pub branch: u32,
    pub max_cuda: CudaVersion,
    pub source: &'static str,
}

/// The newest CUDA a driver supports without a compat package.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MaxCuda {
    pub cuda: CudaVersion,
    pub branch_row: &'static BranchRow,
    /// The driver's branch is above the newest branch in the table: it
    /// supports *at least* `cuda`.
    pub newer_than_known: bool,
}

/// The row with the greatest branch <= the driver's branch; None below R410.
/// Jetson/L4T version strings ("36.4.3") are not desktop driver versions and
/// also give None.
pub fn max_cuda_for_driver(d: &DriverVersion) -> Option<MaxCuda> {
    let b = d.branch();
    let row = DRIVER_BRANCHES.iter().rev().find(|r| r.branch <= b)?;
    let newest = DRIVER_BRANCHES.last().map_or(0, |r| r.branch);
    Some(MaxCuda {
        cuda: row.max_cuda,
        branch_row: row,
        newer_than_known: b > newest,
    })
}

/// Whether a CUDA runtime of a given version can run on a driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum DriverVerdict {
    /// The driver is at least the toolkit's own minimum.
    Supported,
    /// Below the toolkit's minimum but at or above its family minimum: works,
    /// except that PTX newer than the driver cannot be JIT-compiled
    /// (cudaErrorUnsupportedPtxVersion, 222) and calls needing a newer driver
    /// fail with cudaErrorCallRequiresNewerDriver (36).
    MinorVersionCompat { needs: &'static str },
    /// The runtime refuses to start: cudaErrorInsufficientDriver (35).
    TooOld {
        needs: &'static str,
        family_min: Option<&'static str>,
    },
    /// The toolkit is not in the table (unreleased, or newer than known).
    Unknown,
}

/// Which driver a version number belongs to: WSL runs on the Windows driver, whose numbers
/// differ from the Linux driver of the same branch (CUDA 12.4: 550.54.14 / 551.61).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverOs {
    Linux,
    Windows,
}

/// [`driver_verdict_on`] for a Linux driver.
#[cfg(test)]
pub fn driver_verdict(tk: CudaVersion, d: &DriverVersion) -> DriverVerdict {
    driver_verdict_on(tk, d, DriverOs::Linux)
}

/// Whether a CUDA runtime of version `tk` runs on a Linux or a Windows driver. Where the
/// release notes give no Windows version (13.x), the Windows driver's branch must reach the
/// Linux minimum's branch.
pub fn driver_verdict_on(tk: CudaVersion, d: &DriverVersion, os: DriverOs) -> DriverVerdict {
    let Some(row) = toolkit_min_driver(tk) else {
        return DriverVerdict::Unknown;
    };
    let meets = |min: &'static str| -> bool {
        DriverVersion::parse(min).is_some_and(|m| match os {
            DriverOs::Linux => *d >= m,
            DriverOs::Windows => d.branch() >= m.branch(),
        })
    };
    let (needs, meets_needs) = match (os, row.min_windows) {
        (DriverOs::Windows, Some(w)) => (w, DriverVersion::parse(w).is_some_and(|m| *d >= m)),
        _ => (row.min_linux, meets(row.min_linux)),
    };
    if meets_needs {
        return DriverVerdict::Supported;
    }
    let family = family_minimum(tk.major).map(|f| match (os, f.min_windows) {
        (DriverOs::Windows, Some(w)) => (w, DriverVersion::parse(w).is_some_and(|m| *d >= m)),
        _ => (f.min_linux, meets(f.min_linux)),
    });
    if let Some((_, true)) = family {
        return DriverVerdict::MinorVersionCompat { needs };
    }
    DriverVerdict::TooOld {
        needs,
        family_min: family.map(|(min, _)| min),
    }
}

// Forward compatibility: https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html
// (copy as of CUDA 13.4).

/// The base-driver columns of the forward-compatibility matrix. Branches not
/// listed are end of life and not supported targets.
#[cfg(test)]
pub static FORWARD_COMPAT_BASES: &[u32] = &[535, 570, 580, 590, 595, 610, 615];

/// A `cuda-compat-X-Y` package and the base branches it is marked C for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ForwardCompatRow {
    pub package: CudaVersion,
    pub compatible_bases: &'static [u32],
}

/// Whether a `cuda-compat` package helps on a base driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ForwardCompat {
    Compatible,
    /// The package is the base driver's own CUDA version.
    NotNeeded,
    /// "X" in the matrix: the package is older than the driver's CUDA, or the
    /// base branch is not a supported target (end of life). Applications may
    /// still run through backward or minor-version compatibility.
    NotSupported,
    /// Package or driver newer than the matrix.
    Unknown,
}

/// Only the driver side: whether the GPU supports forward compatibility at
/// all is [`super::arch::ProductClass::supports_forward_compat`] (else error 804).
pub fn forward_compat(pkg: CudaVersion, d: &DriverVersion) -> ForwardCompat {
    let Some(mc) = max_cuda_for_driver(d) else {
        // Below R410: long end of life.
        return ForwardCompat::NotSupported;
    };
    if mc.newer_than_known {
        // Its CUDA is at least mc.cuda; an older package is certainly refused.
        return if pkg < mc.cuda {
            ForwardCompat::NotSupported
        } else {
            ForwardCompat::Unknown
        };
    }
    if pkg == mc.cuda {
        return ForwardCompat::NotNeeded;
    }
    if pkg < mc.cuda {
        return ForwardCompat::NotSupported;
    }
    match FORWARD_COMPAT_MATRIX.iter().find(|r| r.package == pkg) {
        None => ForwardCompat::Unknown,
        Some(r) if r.compatible_bases.contains(&mc.branch_row.branch) => ForwardCompat::Compatible,
        Some(_) => ForwardCompat::NotSupported,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> DriverVersion {
        DriverVersion::parse(s).unwrap()
    }

    fn v(major: u32, minor: u32) -> CudaVersion {
        CudaVersion::new(major, minor)
    }

    #[test]
    fn every_driver_string_parses() {
        for r in TOOLKIT_DRIVERS {
            assert!(DriverVersion::parse(r.min_linux).is_some(), "{}", r.toolkit);
            if let Some(w) = r.min_windows {
                assert!(DriverVersion::parse(w).is_some(), "{}", r.toolkit);
            }
            assert!(!r.source.is_empty());
        }
        for f in FAMILY_MINIMUMS {
            assert!(DriverVersion::parse(f.min_linux).is_some());
        }
    }

    #[test]
    fn tables_are_sorted() {
        for w in TOOLKIT_DRIVERS.windows(2) {
            assert!(
                w[0].version <= w[1].version,
                "{} / {}",
                w[0].toolkit,
                w[1].toolkit
            );
            assert!(d(w[0].min_linux) <= d(w[1].min_linux), "{}", w[1].toolkit);
        }
        let windows: Vec<DriverVersion> = TOOLKIT_DRIVERS
            .iter()
            .filter_map(|r| r.min_windows.map(d))
            .collect();
        assert!(windows.windows(2).all(|w| w[0] <= w[1]));
        for w in DRIVER_BRANCHES.windows(2) {
            assert!(w[0].branch < w[1].branch);
            assert!(w[0].max_cuda < w[1].max_cuda);
        }
        for w in FORWARD_COMPAT_MATRIX.windows(2) {
            assert!(w[0].package < w[1].package);
        }
    }

    #[test]
    fn branches_agree_with_toolkit_rows() {
        // A toolkit's own driver reports that toolkit's CUDA version, on Linux and Windows.
        for r in TOOLKIT_DRIVERS {
            for drv in std::iter::once(r.min_linux).chain(r.min_windows) {
                let mc = max_cuda_for_driver(&d(drv)).unwrap();
                assert_eq!(mc.cuda, r.version, "{} driver {drv}", r.toolkit);
                assert!(!mc.newer_than_known);
            }
        }
        // And each branch row matches the toolkit whose minimum driver is in it.
        for b in DRIVER_BRANCHES {
            let rows: Vec<_> = TOOLKIT_DRIVERS
                .iter()
                .filter(|r| d(r.min_linux).branch() == b.branch)
                .collect();
            if rows.is_empty() {
                assert_eq!(b.branch, 565, "only R565 (CUDA 12.7) has no toolkit");
            }
            for r in rows {
                assert_eq!(r.version, b.max_cuda, "R{}", b.branch);
            }
        }
    }

    #[test]
    fn max_cuda_lookup() {
        let mc = |s| max_cuda_for_driver(&d(s)).map(|m| m.cuda);
        assert_eq!(mc("535.104.05"), Some(v(12, 2)));
        assert_eq!(mc("550.54.14"), Some(v(12, 4)));
        assert_eq!(mc("565.57.01"), Some(v(12, 7)));
        assert_eq!(mc("580.95.05"), Some(v(13, 0)));
        assert_eq!(mc("616.00"), Some(v(13, 4)));
        assert_eq!(mc("410.48"), Some(v(10, 0)));
        assert_eq!(mc("396.26"), None);
        assert_eq!(mc("36.4.3"), None);
        let newer = max_cuda_for_driver(&d("625.10")).unwrap();
        assert_eq!(newer.cuda, v(13, 5));
        assert!(newer.newer_than_known);
        assert_eq!(newer.branch_row.branch, 620);
        assert!(
            !max_cuda_for_driver(&d("620.70.06"))
                .unwrap()
                .newer_than_known
        );
    }

    #[test]
    fn min_driver_lookup() {
        assert_eq!(toolkit_min_driver(v(12, 2)).unwrap().min_linux, "535.54.03");
        // The RC row is skipped: 11.0's minimum is the GA driver.
        assert_eq!(toolkit_min_driver(v(11, 0)).unwrap().min_linux, "450.51.05");
        assert_eq!(toolkit_min_driver(v(12, 8)).unwrap().min_linux, "570.26");
        assert_eq!(toolkit_min_driver(v(13, 0)).unwrap().min_windows, None);
        let r134 = toolkit_min_driver(v(13, 4)).unwrap();
        assert_eq!(r134.min_linux, "615");
        assert!(r134.source.contains("UNCONFIRMED"));
        let r135 = toolkit_min_driver(v(13, 5)).unwrap();
        assert_eq!(r135.min_linux, "620");
        assert!(r135.source.contains("UNCONFIRMED"));
        assert!(toolkit_min_driver(v(13, 3))
            .unwrap()
            .source
            .contains("UNCONFIRMED"));
        assert!(toolkit_min_driver(v(12, 7)).is_none());
        assert!(toolkit_min_driver(v(13, 6)).is_none());
        assert!(toolkit_min_driver(v(9, 2)).is_none());
    }

    #[test]
    fn windows_drivers_are_judged_by_the_windows_columns() {
        let w = |tk: CudaVersion, drv: &str| {
            driver_verdict_on(tk, &DriverVersion::parse(drv).unwrap(), DriverOs::Windows)
        };
        // CUDA 12.4 needs 551.61 on Windows; 528.33 is the 12.x family's minimum.
        assert_eq!(w(v(12, 4), "551.86"), DriverVerdict::Supported);
        assert_eq!(
            w(v(12, 4), "537.58"),
            DriverVerdict::MinorVersionCompat { needs: "551.61" }
        );
        assert_eq!(
            w(v(12, 4), "528.24"),
            DriverVerdict::TooOld {
                needs: "551.61",
                family_min: Some("528.33")
            }
        );
        // The same number read as a Linux driver would pass the family minimum (525.60.13).
        assert!(matches!(
            driver_verdict(v(12, 4), &DriverVersion::parse("528.24").unwrap()),
            DriverVerdict::MinorVersionCompat { .. }
        ));
        // 13.x has no Windows column: the branch decides.
        assert_eq!(w(v(13, 0), "581.15"), DriverVerdict::Supported);
        assert!(matches!(
            w(v(13, 0), "573.42"),
            DriverVerdict::TooOld { .. }
        ));
    }

    #[test]
    fn family_minimums() {
        assert_eq!(family_minimum(13).unwrap().min_linux, "580.65.06");
        assert_eq!(family_minimum(12).unwrap().min_linux, "525.60.13");
        assert_eq!(family_minimum(11).unwrap().min_linux, "450.80.02");
        assert!(family_minimum(10).is_none());
        assert!(family_minimum(9).is_none());
        assert!(family_minimum(14).is_none());
    }

    #[test]
    fn verdicts() {
        use DriverVerdict::*;
        assert_eq!(driver_verdict(v(12, 2), &d("535.104.05")), Supported);
        assert_eq!(driver_verdict(v(12, 4), &d("550.54.14")), Supported);
        assert_eq!(
            driver_verdict(v(12, 4), &d("525.60.13")),
            MinorVersionCompat { needs: "550.54.14" }
        );
        assert_eq!(
            driver_verdict(v(12, 0), &d("470.82.01")),
            TooOld {
                needs: "525.60.13",
                family_min: Some("525.60.13")
            }
        );
        assert_eq!(driver_verdict(v(10, 2), &d("440.33")), Supported);
        assert_eq!(
            driver_verdict(v(10, 2), &d("418.39")),
            TooOld {
                needs: "440.33",
                family_min: None
            }
        );
        // 11.0 GA predates the 11.x family minimum.
        assert_eq!(driver_verdict(v(11, 0), &d("450.51.05")), Supported);
        assert_eq!(
            driver_verdict(v(11, 1), &d("450.51.05")),
            TooOld {
                needs: "455.23",
                family_min: Some("450.80.02")
            }
        );
        assert_eq!(
            driver_verdict(v(11, 8), &d("470.82.01")),
            MinorVersionCompat { needs: "520.61.05" }
        );
        assert_eq!(
            driver_verdict(v(13, 2), &d("580.65.06")),
            MinorVersionCompat { needs: "595.45.04" }
        );
        assert_eq!(
            driver_verdict(v(13, 0), &d("575.57.08")),
            TooOld {
                needs: "580.65.06",
                family_min: Some("580.65.06")
            }
        );
        assert_eq!(driver_verdict(v(13, 4), &d("615.31")), Supported);
        assert_eq!(driver_verdict(v(13, 4), &d("616.00")), Supported);
        assert_eq!(
            driver_verdict(v(13, 4), &d("610.57.04")),
            MinorVersionCompat { needs: "615" }
        );
        assert_eq!(driver_verdict(v(12, 2), &d("580.95.05")), Supported);
        assert_eq!(driver_verdict(v(13, 6), &d("620.70.06")), Unknown);
        assert_eq!(driver_verdict(v(12, 7), &d("565.57.01")), Unknown);
    }

    #[test]
    fn matrix_follows_its_rule() {
        // C exactly where the package is newer than the base column's CUDA.
        for row in FORWARD_COMPAT_MATRIX {
            for &base in FORWARD_COMPAT_BASES {
                let base_cuda = DRIVER_BRANCHES
                    .iter()
                    .find(|b| b.branch == base)
                    .unwrap()
                    .max_cuda;
                assert_eq!(
                    row.compatible_bases.contains(&base),
                    row.package > base_cuda,
                    "cuda-compat-{} on R{base}",
                    row.package
                );
            }
        }
    }

    #[test]
    fn forward_compat_cases() {
        use ForwardCompat::*;
        assert_eq!(forward_compat(v(13, 4), &d("535.216.03")), Compatible);
        assert_eq!(forward_compat(v(12, 4), &d("580.95.05")), NotSupported);
        assert_eq!(forward_compat(v(12, 2), &d("535.104.05")), NotNeeded);
        assert_eq!(forward_compat(v(12, 9), &d("570.124.06")), Compatible);
        assert_eq!(forward_compat(v(12, 6), &d("570.124.06")), NotSupported);
        assert_eq!(forward_compat(v(13, 3), &d("615.31")), NotSupported);
        // 12.4 is paired with R550: N/A even though R550 is not a column.
        assert_eq!(forward_compat(v(12, 4), &d("550.54.14")), NotNeeded);
        // R550 is end of life, so not a target for newer packages.
        assert_eq!(forward_compat(v(12, 6), &d("550.54.14")), NotSupported);
        assert_eq!(forward_compat(v(12, 4), &d("470.82.01")), NotSupported);
        // Packages outside the matrix.
        assert_eq!(forward_compat(v(13, 5), &d("580.95.05")), Unknown);
        assert_eq!(forward_compat(v(11, 8), &d("470.82.01")), Unknown);
        assert_eq!(forward_compat(v(13, 5), &d("620.70.06")), NotNeeded);
        // A driver newer than the table.
        assert_eq!(forward_compat(v(13, 4), &d("625.1")), NotSupported);
        assert_eq!(forward_compat(v(13, 6), &d("625.1")), Unknown);
        assert_eq!(forward_compat(v(13, 4), &d("390.87")), NotSupported);
    }
}
