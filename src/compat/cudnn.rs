//! cuDNN ↔ CUDA: which CUDA majors a cuDNN release is built for (cuDNN ships
//! one build per CUDA major), and reading the cuDNN version from its header
//! or from the integer `torch.backends.cudnn.version()` returns.

use super::versions::ComputeCapability;
use serde::Serialize;

/// One range of cuDNN minor releases and the CUDA builds NVIDIA lists for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CudnnSupport {
    /// First cuDNN (major, minor) of the range.
    pub first: (u32, u32),
    /// Last one; None for the newest range (open-ended).
    pub last: Option<(u32, u32)>,
    /// CUDA majors with a build of this cuDNN.
    pub cuda_majors: &'static [u32],
    /// The CUDA toolkits the support matrix lists, as text.
    pub cuda_listed: &'static str,
    /// Lowest compute capability supported; None where not established.
    pub min_cc: Option<ComputeCapability>,
    pub source: &'static str,
}

const fn cc(major: u32, minor: u32) -> Option<ComputeCapability> {
    Some(ComputeCapability::new(major, minor))
}

/// compat.md §4a, plus the cuDNN 8.0–8.4 support matrices for the rows it lacks.
pub static CUDNN_SUPPORT: &[CudnnSupport] = &[
    CudnnSupport {
        first: (8, 0),
        last: Some((8, 4)),
        cuda_majors: &[10, 11],
        cuda_listed: "10.2 (SM 3.0+; 8.0.2–8.0.3 also 10.1 Update 2); 11.0–11.6 (SM 3.5+)",
        min_cc: cc(3, 0),
        source: "cuDNN 8.0.3, 8.2.2 and 8.4.0 support matrices \
                 (docs.nvidia.com/deeplearning/cudnn/archives/cudnn-803, -822, -840); not in compat.md",
    },
    CudnnSupport {
        first: (8, 5),
        last: Some((8, 7)),
        cuda_majors: &[11],
        cuda_listed: "11.0–11.7 (8.5.0); 8.6–8.7 and any CUDA 10.2 builds UNCONFIRMED",
        min_cc: cc(3, 5),
        source: "cudnn-850 support matrix PDF (compat.md §4a); 8.6–8.7 UNCONFIRMED",
    },
    CudnnSupport {
        first: (8, 8),
        last: Some((8, 8)),
        cuda_majors: &[11, 12],
        cuda_listed: "11.x and 12.0 (UNCONFIRMED)",
        min_cc: None,
        source: "UNCONFIRMED: compat.md §4a rule of thumb (cuDNN 8 ↔ CUDA 11/12); no 8.8 matrix checked",
    },
    CudnnSupport {
        first: (8, 9),
        last: Some((8, 9)),
        cuda_majors: &[11, 12],
        cuda_listed: "12.0–12.2 (>= 525.60.13); 11.0–11.8 (>= 450.80.02)",
        min_cc: cc(5, 0),
        source: "cuDNN 8.9.5/8.9.6 support matrices (compat.md §4a); 8.9.7 is the last 8.x",
    },
    CudnnSupport {
        first: (9, 0),
        last: Some((9, 10)),
        cuda_majors: &[11, 12],
        cuda_listed: "12.0–12.6 (9.0–9.5), 12.0–12.9 (9.10.2; 12.8+ adds CC 10.0/12.0 at \
                      >= 570.26); 11.8 (11.0–11.7 without static linking)",
        min_cc: cc(5, 0),
        source: "cuDNN v9.0.0, v9.5.0, v9.5.1 and 9.10.2 support matrices (compat.md §4a); \
                 9.6–9.9 assumed alike; nvidia-cudnn-cu11 ends at 9.10.2.21",
    },
    CudnnSupport {
        first: (9, 11),
        last: Some((9, 11)),
        cuda_majors: &[12],
        cuda_listed: "12.x; CUDA 11 dropped (UNCONFIRMED)",
        min_cc: None,
        source: "UNCONFIRMED: nvidia-cudnn-cu11 stops at 9.10.2.21 and the first nvidia-cudnn-cu13 \
                 is 9.12.0.46 (PyPI); the release that dropped CUDA 11 and pre-Turing lies \
                 between 9.10.2 and 9.17.0 (compat.md §4a)",
    },
    CudnnSupport {
        first: (9, 12),
        last: Some((9, 16)),
        cuda_majors: &[12, 13],
        cuda_listed: "12.x; 13.x (first nvidia-cudnn-cu13 = 9.12.0.46)",
        min_cc: None,
        source: "PyPI nvidia-cudnn-cu13 versions (compat.md §4a); minimum CC UNCONFIRMED",
    },
    CudnnSupport {
        first: (9, 17),
        last: None,
        cuda_majors: &[12, 13],
        cuda_listed: "13.0–13.1 (Linux >= 580.65.06); 12.0–12.9 (>= 525.60.13)",
        min_cc: cc(7, 5),
        source: "https://docs.nvidia.com/deeplearning/sdk/cudnn-support-matrix/index.html \
                 (9.17.0 copy, compat.md §4a): Turing and newer only",
    },
];

/// Which CUDA majors a cuDNN major.minor is built for. None for cuDNN 7 and
/// older, and for majors newer than 9.
pub fn cudnn_cuda_majors(cudnn: (u32, u32)) -> Option<&'static CudnnSupport> {
    CUDNN_SUPPORT
        .iter()
        .find(|r| r.first <= cudnn && r.last.is_none_or(|l| cudnn <= l) && r.first.0 == cudnn.0)
}

/// The cuDNN version from `cudnn_version.h` (cuDNN 8+) or `cudnn.h` (7 and
/// older): the `#define CUDNN_MAJOR/MINOR/PATCHLEVEL` lines, comments and
/// spacing tolerated. All three must be present.
pub fn cudnn_version_from_header(text: &str) -> Option<(u32, u32, u32)> {
    let code = strip_comments(text);
    let (mut major, mut minor, mut patch) = (None, None, None);
    for line in code.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        let value = value.trim_start_matches('(').trim_end_matches(')');
        if !value.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(n) = value.parse::<u32>() else {
            continue;
        };
        // The first definition wins, as for the preprocessor.
        let slot = match name {
            "CUDNN_MAJOR" => &mut major,
            "CUDNN_MINOR" => &mut minor,
            "CUDNN_PATCHLEVEL" => &mut patch,
            _ => continue,
        };
        slot.get_or_insert(n);
    }
    Some((major?, minor?, patch?))
}

/// Removes `/* */` and `//` comments, keeping line breaks.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_block = false;
    while let Some(c) = chars.next() {
        if in_block {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                in_block = false;
                out.push(' ');
            } else if c == '\n' {
                out.push('\n');
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            in_block = true;
        } else if c == '/' && chars.peek() == Some(&'/') {
            while chars.peek().is_some_and(|&c| c != '\n') {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes `CUDNN_VERSION` / `torch.backends.cudnn.version()`: cuDNN 9 uses
/// `major * 10000 + minor * 100 + patch` (9.19.0 → 91900), cuDNN 8 and 7
/// `major * 1000 + minor * 100 + patch` (8.9.2 → 8902).
pub fn cudnn_version_from_int(v: i64) -> Option<(u32, u32, u32)> {
    let v = u32::try_from(v).ok()?;
    // cuDNN 6 and older are not decoded: no need to guess their encoding.
    let (major, rest) = match v {
        90_000..=99_999 => (v / 10_000, v % 10_000),
        7_000..=8_999 => (v / 1000, v % 1000),
        _ => return None,
    };
    Some((major, rest / 100, rest % 100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_contiguous() {
        for w in CUDNN_SUPPORT.windows(2) {
            let last = w[0].last.unwrap();
            assert!(w[0].first <= last);
            assert!(last < w[1].first);
            // No gaps inside a major.
            if last.0 == w[1].first.0 {
                assert_eq!(last.1 + 1, w[1].first.1);
            }
        }
        assert!(CUDNN_SUPPORT.last().unwrap().last.is_none());
    }

    #[test]
    fn majors_per_release() {
        let majors = |a, b| cudnn_cuda_majors((a, b)).map(|r| r.cuda_majors);
        assert_eq!(majors(8, 2), Some(&[10, 11][..]));
        assert_eq!(majors(8, 5), Some(&[11][..]));
        assert_eq!(majors(8, 9), Some(&[11, 12][..]));
        assert_eq!(majors(9, 1), Some(&[11, 12][..]));
        assert_eq!(majors(9, 10), Some(&[11, 12][..]));
        assert_eq!(majors(9, 11), Some(&[12][..]));
        assert_eq!(majors(9, 13), Some(&[12, 13][..]));
        assert_eq!(majors(9, 17), Some(&[12, 13][..]));
        assert_eq!(majors(9, 28), Some(&[12, 13][..]));
        assert_eq!(majors(7, 6), None);
        assert_eq!(majors(10, 0), None);
        assert_eq!(majors(8, 10), None);
        let r917 = cudnn_cuda_majors((9, 17)).unwrap();
        assert_eq!(r917.min_cc, Some(ComputeCapability::new(7, 5)));
        assert!(cudnn_cuda_majors((8, 8))
            .unwrap()
            .source
            .contains("UNCONFIRMED"));
        assert!(cudnn_cuda_majors((9, 11))
            .unwrap()
            .source
            .contains("UNCONFIRMED"));
    }

    #[test]
    fn header_parsing() {
        let h9 = "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n\
                  #define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n\n\
                  #define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n\
                  #define CUDNN_MAX_SM_MAJOR_NUMBER 12\n#endif\n";
        assert_eq!(cudnn_version_from_header(h9), Some((9, 1, 0)));
        let messy = "  #  define   CUDNN_MAJOR\t8   // major\r\n\
                     /* #define CUDNN_MINOR 1 */\n\
                     #define CUDNN_MINOR 9 /* minor */\r\n\
                     /* multi\n#define CUDNN_PATCHLEVEL 7\nline */\n\
                     #define CUDNN_PATCHLEVEL (2)\n";
        assert_eq!(cudnn_version_from_header(messy), Some((8, 9, 2)));
        assert_eq!(cudnn_version_from_header(""), None);
        assert_eq!(
            cudnn_version_from_header("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n"),
            None
        );
        assert_eq!(
            cudnn_version_from_header(
                "#define CUDNN_MAJOR x\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n"
            ),
            None
        );
        assert_eq!(
            cudnn_version_from_header(
                "#define CUDNN_MAJOR 99999999999\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0"
            ),
            None
        );
        assert_eq!(cudnn_version_from_header("/* unterminated"), None);
        assert_eq!(
            cudnn_version_from_header("#\n#define\n#define CUDNN_MAJOR\n"),
            None
        );
    }

    #[test]
    fn integer_versions() {
        assert_eq!(cudnn_version_from_int(91900), Some((9, 19, 0)));
        assert_eq!(cudnn_version_from_int(90100), Some((9, 1, 0)));
        assert_eq!(cudnn_version_from_int(8902), Some((8, 9, 2)));
        assert_eq!(cudnn_version_from_int(7605), Some((7, 6, 5)));
        assert_eq!(cudnn_version_from_int(0), None);
        assert_eq!(cudnn_version_from_int(-1), None);
        assert_eq!(cudnn_version_from_int(50000), None);
        assert_eq!(cudnn_version_from_int(5005), None);
        assert_eq!(cudnn_version_from_int(i64::MAX), None);
    }
}
