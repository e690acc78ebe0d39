//! NVIDIA Container Toolkit releases that matter to a host: the first release with
//! `nvidia-ctk cdi generate`, and the releases that fixed container-escape vulnerabilities.
//! Each row cites its source.

/// A toolkit version as (major, minor, patch).
pub type ToolkitVersion = (u32, u32, u32);

/// `nvidia-ctk cdi generate` replaced `nvidia-ctk info generate-cdi` in 1.12.0-rc.2.
pub const CDI_GENERATE_SINCE: ToolkitVersion = (1, 12, 0);
pub const CDI_GENERATE_SOURCE: &str = "NVIDIA/nvidia-container-toolkit CHANGELOG.md, v1.12.0-rc.2: \"Use `nvidia-ctk cdi generate` to generate CDI specifications instead of `nvidia-ctk info generate-cdi`\"";

pub struct Advisory {
    /// The first release without the vulnerabilities.
    pub fixed_in: ToolkitVersion,
    pub cves: &'static [&'static str],
    pub what: &'static str,
    pub source: &'static str,
}

// The rows of ADVISORIES: src/compat/data/container_toolkit.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/container_toolkit.rs"));

/// `1.17.8-1` (dpkg), `1.17.8` → (1, 17, 8).
pub fn parse_version(v: &str) -> Option<ToolkitVersion> {
    let v = v.split(['-', '~', '+']).next()?;
    let mut it = v.split('.').map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next().flatten().unwrap_or(0)))
}

/// The advisories a release is exposed to.
pub fn open_advisories(v: ToolkitVersion) -> Vec<&'static Advisory> {
    ADVISORIES.iter().filter(|a| v < a.fixed_in).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_advisories() {
        assert_eq!(parse_version("1.17.8-1"), Some((1, 17, 8)));
        assert_eq!(parse_version("1.18"), Some((1, 18, 0)));
        assert_eq!(parse_version("garbage"), None);
        assert!(ADVISORIES.windows(2).all(|w| w[0].fixed_in < w[1].fixed_in));
        assert_eq!(open_advisories((1, 17, 8)).len(), 0);
        assert_eq!(open_advisories((1, 17, 4)).len(), 1);
        assert_eq!(open_advisories((1, 16, 1)).len(), 5);
    }
}
