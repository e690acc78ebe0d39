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

const RN: &str = "CUDA RN 13.2.2 Table 3";
const RN_13_3: &str = "UNCONFIRMED-primary: CUDA 13.3 RN as quoted by secondary copies; \
                       RN 13.4 Update 1 gives only branch R610";

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

const fn tk(
    toolkit: &'static str,
    major: u32,
    minor: u32,
    min_linux: &'static str,
    min_windows: Option<&'static str>,
    source: &'static str,
) -> ToolkitDriverRow {
    ToolkitDriverRow {
        toolkit,
        version: CudaVersion::new(major, minor),
        min_linux,
        min_windows,
        source,
    }
}

/// CUDA RN Table 3, every row, in release order. 12.7 was never released.
pub static TOOLKIT_DRIVERS: &[ToolkitDriverRow] = &[
    tk("10.0.130", 10, 0, "410.48", Some("411.31"), RN),
    tk(
        "10.1 (10.1.105 GA and updates)",
        10,
        1,
        "418.39",
        Some("418.96"),
        RN,
    ),
    tk("10.2.89", 10, 2, "440.33", Some("441.22"), RN),
    tk("11.0.1 RC", 11, 0, "450.36.06", Some("451.22"), RN),
    tk("11.0.2 GA", 11, 0, "450.51.05", Some("451.48"), RN),
    tk("11.0.3 Update 1", 11, 0, "450.51.06", Some("451.82"), RN),
    tk("11.1 GA", 11, 1, "455.23", Some("456.38"), RN),
    tk("11.1.1 Update 1", 11, 1, "455.32", Some("456.81"), RN),
    tk("11.2.0 GA", 11, 2, "460.27.03", Some("460.82"), RN),
    tk("11.2.1 Update 1", 11, 2, "460.32.03", Some("461.09"), RN),
    tk("11.2.2 Update 2", 11, 2, "460.32.03", Some("461.33"), RN),
    tk("11.3.0 GA", 11, 3, "465.19.01", Some("465.89"), RN),
    tk("11.3.1 Update 1", 11, 3, "465.19.01", Some("465.89"), RN),
    tk("11.4.0 GA", 11, 4, "470.42.01", Some("471.11"), RN),
    tk("11.4 Update 1", 11, 4, "470.57.02", Some("471.41"), RN),
    tk("11.4 Update 2", 11, 4, "470.57.02", Some("471.41"), RN),
    tk("11.4 Update 3", 11, 4, "470.82.01", Some("472.50"), RN),
    tk("11.4 Update 4", 11, 4, "470.82.01", Some("472.50"), RN),
    tk("11.5 GA", 11, 5, "495.29.05", Some("496.04"), RN),
    tk("11.5 Update 1", 11, 5, "495.29.05", Some("496.13"), RN),
    tk("11.5 Update 2", 11, 5, "495.29.05", Some("496.13"), RN),
    tk("11.6 GA", 11, 6, "510.39.01", Some("511.23"), RN),
    tk("11.6 Update 1", 11, 6, "510.47.03", Some("511.65"), RN),
    tk("11.6 Update 2", 11, 6, "510.47.03", Some("511.65"), RN),
    tk("11.7 GA", 11, 7, "515.43.04", Some("516.01"), RN),
    tk("11.7 Update 1", 11, 7, "515.48.07", Some("516.31"), RN),
    tk("11.8 GA", 11, 8, "520.61.05", Some("520.06"), RN),
    tk("12.0 GA", 12, 0, "525.60.13", Some("527.41"), RN),
    tk("12.0 Update 1", 12, 0, "525.85.12", Some("528.33"), RN),
    tk("12.1 GA", 12, 1, "530.30.02", Some("531.14"), RN),
    tk("12.1 Update 1", 12, 1, "530.30.02", Some("531.14"), RN),
    tk("12.2 GA", 12, 2, "535.54.03", Some("536.25"), RN),
    tk("12.2 Update 1", 12, 2, "535.86.09", Some("536.67"), RN),
    tk("12.2 Update 2", 12, 2, "535.104.05", Some("537.13"), RN),
    tk("12.3 GA", 12, 3, "545.23.06", Some("545.84"), RN),
    tk("12.3 Update 1", 12, 3, "545.23.08", Some("546.12"), RN),
    tk("12.4 GA", 12, 4, "550.54.14", Some("551.61"), RN),
    tk("12.4 Update 1", 12, 4, "550.54.15", Some("551.78"), RN),
    tk("12.5 GA", 12, 5, "555.42.02", Some("555.85"), RN),
    tk("12.5 Update 1", 12, 5, "555.42.06", Some("555.85"), RN),
    tk("12.6 GA", 12, 6, "560.28.03", Some("560.76"), RN),
    tk("12.6 Update 1", 12, 6, "560.35.03", Some("560.94"), RN),
    tk("12.6 Update 2", 12, 6, "560.35.03", Some("560.94"), RN),
    tk("12.6 Update 3", 12, 6, "560.35.05", Some("561.17"), RN),
    tk("12.8 GA", 12, 8, "570.26", Some("570.65"), RN),
    tk("12.8 Update 1", 12, 8, "570.124.06", Some("572.61"), RN),
    tk("12.9 GA", 12, 9, "575.51.03", Some("576.02"), RN),
    tk("12.9 Update 1", 12, 9, "575.57.08", Some("576.57"), RN),
    tk("13.0 GA", 13, 0, "580.65.06", None, RN),
    tk("13.0 Update 1", 13, 0, "580.82.07", None, RN),
    tk("13.0 Update 2", 13, 0, "580.95.05", None, RN),
    tk("13.1 GA", 13, 1, "590.44.01", None, RN),
    tk("13.1 Update 1", 13, 1, "590.48.01", None, RN),
    tk("13.2 GA", 13, 2, "595.45.04", None, RN),
    tk("13.2 Update 1", 13, 2, "595.58.03", None, RN),
    tk("13.2 Update 2", 13, 2, "595.71.05", None, RN),
    tk("13.3 GA", 13, 3, "610.43.02", None, RN_13_3),
    tk("13.3 Update 1", 13, 3, "610.43.02", None, RN_13_3),
    tk(
        "13.4 GA / Update 1",
        13,
        4,
        "615",
        None,
        "CUDA RN 13.4 Update 1 §2.2: branch R615 only, exact minimum version UNCONFIRMED \
         (not published; the Linux driver is no longer bundled from 13.4)",
    ),
    tk(
        "13.5",
        13,
        5,
        "620",
        None,
        "UNCONFIRMED: 13.5 RN driver table not retrieved; inferred from \
         redistrib_620.70.06.json shipping cuda_compat variant cuda13.5",
    ),
];

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

/// Minor-version compatibility, per CUDA major: CUDA RN Table 2 and
/// https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html.
/// CUDA 10 and older have no minor-version compatibility.
pub static FAMILY_MINIMUMS: &[FamilyMinimum] = &[
    FamilyMinimum {
        major: 11,
        min_linux: "450.80.02",
        min_windows: Some("452.39"),
        source:
            "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html \
                 (Tesla Recommended Drivers 450.80.02 / 452.39)",
    },
    FamilyMinimum {
        major: 12,
        min_linux: "525.60.13",
        min_windows: Some("528.33"),
        source: "CUDA 12 release notes, Table 2 \"CUDA 12.x: >=525.60.13 (Linux), >=528.33 \
                 (Windows)\"; CUDA 13.2.2 release notes Table 3 row \"CUDA 12.0 GA\" (>= \
                 525.60.13), https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/",
    },
    FamilyMinimum {
        major: 13,
        min_linux: "580.65.06",
        min_windows: None,
        source: "CUDA 13.2.2 release notes, Table 2 (>= 580) and Table 3 row \"CUDA 13.0 GA\" \
                 (>= 580.65.06), https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/",
    },
];

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

const fn br(branch: u32, major: u32, minor: u32, source: &'static str) -> BranchRow {
    BranchRow {
        branch,
        max_cuda: CudaVersion::new(major, minor),
        source,
    }
}

const T3: &str = "derived from CUDA RN 13.2.2 Table 3";

/// The CUDA version each driver branch reports (the driver of toolkit X reports CUDA X, CUDA RN
/// Table 3), by branch.
pub static DRIVER_BRANCHES: &[BranchRow] = &[
    br(410, 10, 0, T3),
    br(418, 10, 1, T3),
    br(440, 10, 2, T3),
    br(450, 11, 0, T3),
    br(455, 11, 1, T3),
    br(460, 11, 2, T3),
    br(465, 11, 3, T3),
    br(470, 11, 4, T3),
    br(495, 11, 5, T3),
    br(510, 11, 6, T3),
    br(515, 11, 7, T3),
    br(520, 11, 8, T3),
    br(525, 12, 0, T3),
    br(530, 12, 1, T3),
    br(
        535,
        12,
        2,
        "derived from CUDA RN 13.2.2 Table 3; forward-compat table \"535+ (CUDA 12.2)\"",
    ),
    br(545, 12, 3, T3),
    br(550, 12, 4, T3),
    br(555, 12, 5, T3),
    br(560, 12, 6, T3),
    br(
        565,
        12,
        7,
        "secondary: observed nvidia-smi \"Driver Version: 565.57.01 CUDA Version: 12.7\" \
         (12.7 was never released)",
    ),
    br(
        570,
        12,
        8,
        "derived from CUDA RN 13.2.2 Table 3; forward-compat table \"570+ (CUDA 12.8)\"",
    ),
    br(575, 12, 9, T3),
    br(
        580,
        13,
        0,
        "derived from CUDA RN 13.2.2 Table 3; forward-compat table \"580+ (CUDA 13.0)\"",
    ),
    br(
        590,
        13,
        1,
        "derived from CUDA RN 13.2.2 Table 3; forward-compat table",
    ),
    br(
        595,
        13,
        2,
        "derived from CUDA RN 13.2.2 Table 3; forward-compat table",
    ),
    br(
        610,
        13,
        3,
        "CUDA RN 13.4 Update 1 branch table; forward-compat table \"610+ (CUDA 13.3)\"",
    ),
    br(
        615,
        13,
        4,
        "CUDA RN 13.4 Update 1 branch table; forward-compat table \"615+ (CUDA 13.4)\" \
         (the R616 developer driver also reports 13.4)",
    ),
    br(
        620,
        13,
        5,
        "UNCONFIRMED: redistrib_620.70.06.json ships cuda_compat variant cuda13.5",
    ),
];

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

const fn fc(major: u32, minor: u32, compatible_bases: &'static [u32]) -> ForwardCompatRow {
    ForwardCompatRow {
        package: CudaVersion::new(major, minor),
        compatible_bases,
    }
}

/// The support matrix of
/// https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html: its "C" cells
/// (the diagonal is N/A, the rest X).
pub static FORWARD_COMPAT_MATRIX: &[ForwardCompatRow] = &[
    fc(12, 2, &[]),
    fc(12, 3, &[535]),
    fc(12, 4, &[535]),
    fc(12, 5, &[535]),
    fc(12, 6, &[535]),
    fc(12, 8, &[535]),
    fc(12, 9, &[535, 570]),
    fc(13, 0, &[535, 570]),
    fc(13, 1, &[535, 570, 580]),
    fc(13, 2, &[535, 570, 580, 590]),
    fc(13, 3, &[535, 570, 580, 590, 595]),
    fc(13, 4, &[535, 570, 580, 590, 595, 610]),
];

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
