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

/// Sorted by `fixed_in`.
pub const ADVISORIES: &[Advisory] = &[
    Advisory {
        fixed_in: (1, 16, 2),
        cves: &["CVE-2024-0132", "CVE-2024-0133"],
        what: "a crafted container image can reach the host's file system (container escape)",
        source: "NVIDIA Container Toolkit release notes, 1.16.2 (NVIDIA/cloud-native-docs container-toolkit/release-notes.md): security bulletin https://nvidia.custhelp.com/app/answers/detail/a_id/5582",
    },
    Advisory {
        fixed_in: (1, 17, 0),
        cves: &["CVE-2024-0134"],
        what: "symlinks created as a container starts can escape the container root",
        source: "NVIDIA Container Toolkit release notes, 1.17.0: security bulletin https://nvidia.custhelp.com/app/answers/detail/a_id/5585",
    },
    Advisory {
        fixed_in: (1, 17, 3),
        cves: &["CVE-2024-0135", "CVE-2024-0136", "CVE-2024-0137"],
        what: "vulnerabilities in the container hooks and libnvidia-container",
        source: "NVIDIA Container Toolkit release notes, 1.17.3: security bulletin https://nvidia.custhelp.com/app/answers/detail/a_id/5599",
    },
    Advisory {
        fixed_in: (1, 17, 4),
        cves: &["CVE-2025-23359"],
        what: "a crafted image's symlink makes libnvidia-container mount host directories into the container",
        source: "NVIDIA Container Toolkit release notes, 1.17.4: security bulletin https://nvidia.custhelp.com/app/answers/detail/a_id/5616",
    },
    Advisory {
        fixed_in: (1, 17, 8),
        cves: &["CVE-2025-23266", "CVE-2025-23267"],
        what: "a container can run code on the host through a toolkit hook, and a crafted image can make the update-ldcache hook follow links",
        source: "NVIDIA GPU Operator release notes, 25.3.2 (NVIDIA/cloud-native-docs gpu-operator/release-notes.rst): security bulletin https://nvidia.custhelp.com/app/answers/detail/a_id/5659; that release moved to toolkit 1.17.8 (NVIDIA/gpu-operator PR #1466), and distributions ship 1.17.8 to resolve CVE-2025-23266 (microsoft/azurelinux PR #14382). The toolkit's own 1.17.8 notes name no CVE.",
    },
];

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
