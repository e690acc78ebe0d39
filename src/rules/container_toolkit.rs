//! GD070: the NVIDIA Container Toolkit installed on the host is a release with known
//! container-escape vulnerabilities, or one too old to generate CDI specifications
//! (compat::container_toolkit holds the releases and their sources).

use super::{container_host, toolkit_packaging, Outcome, Rule};
use crate::codes;
use crate::compat::container_toolkit::{
    open_advisories, parse_version, CDI_GENERATE_SINCE, CDI_GENERATE_SOURCE,
};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "container_toolkit",
    codes: &[codes::GD070],
    views: &[],
    checks: "the NVIDIA Container Toolkit is a release without known container escapes",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let host = match container_host(snap) {
        Ok(h) => h,
        Err(na) => return na,
    };
    let Some(pkg) = host.toolkit_package() else {
        return Outcome::NotApplicable(match &host.rpm_db {
            Some(_) => "the toolkit's version is unknown: the rpm database is not read".into(),
            None => "no NVIDIA Container Toolkit package installed".into(),
        });
    };
    let Some(version) = parse_version(&pkg.version) else {
        return Outcome::NotApplicable(format!(
            "{} version {:?} is not a release number",
            pkg.name, pkg.version
        ));
    };
    let open = open_advisories(version);
    let wants_cdi = !host.nvidia_specs().is_empty() || host.podman_installed();
    let no_cdi_generate = version < CDI_GENERATE_SINCE && wants_cdi;
    if open.is_empty() && !no_cdi_generate {
        return Outcome::Checked(vec![]);
    }
    let shown = format!("{} {}", pkg.name, pkg.version);
    let title = if open.is_empty() {
        format!("The NVIDIA Container Toolkit ({shown}) is too old to generate CDI specifications")
    } else {
        format!("The NVIDIA Container Toolkit ({shown}) has known container-escape vulnerabilities")
    };
    let mut detail = String::new();
    if let Some(latest) = open.last() {
        let cves: Vec<&str> = open.iter().flat_map(|a| a.cves.iter().copied()).collect();
        detail.push_str(&format!(
            "This release is exposed to {}: {}. A malicious or compromised image run with GPUs can reach the host. Releases from {}.{}.{} on fix them.",
            cves.join(", "),
            open.iter().map(|a| a.what).collect::<Vec<_>>().join("; "),
            latest.fixed_in.0,
            latest.fixed_in.1,
            latest.fixed_in.2
        ));
    }
    if no_cdi_generate {
        if !detail.is_empty() {
            detail.push(' ');
        }
        detail.push_str(&format!(
            "It also predates `nvidia-ctk cdi generate` ({}.{}.{}), so the CDI specifications Podman and CDI-enabled engines need cannot be generated with it.",
            CDI_GENERATE_SINCE.0, CDI_GENERATE_SINCE.1, CDI_GENERATE_SINCE.2
        ));
    }
    let mut f = Finding::new(codes::GD070, Severity::Warning, title)
        .detail(detail)
        .evidence(Subject::File(pkg.source.clone()), shown, pkg.source.clone());
    for a in &open {
        f = f.context(
            format!(
                "{} fixed in {}.{}.{}",
                a.cves.join(", "),
                a.fixed_in.0,
                a.fixed_in.1,
                a.fixed_in.2
            ),
            a.source,
        );
    }
    if no_cdi_generate {
        f = f.context("nvidia-ctk cdi generate since 1.12.0", CDI_GENERATE_SOURCE);
    }
    let pkgs = toolkit_packaging(snap);
    f = f
        .fix_cmd(
            "Upgrade the NVIDIA Container Toolkit packages together",
            pkgs.upgrade,
        )
        .fix_cmd(
            "If the packages are not found, add NVIDIA's package repository first",
            pkgs.repository,
        );
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn a_current_toolkit_is_clean() {
        let mut s = healthy();
        with_toolkit(&mut s, "1.17.8");
        assert_clean(run(&s));
    }

    #[test]
    fn a_vulnerable_toolkit_is_a_warning_with_the_upgrade() {
        let mut s = healthy();
        with_toolkit(&mut s, "1.16.1");
        let f = only(run(&s), codes::GD070, Severity::Warning);
        assert!(f.detail.contains("CVE-2024-0132") && f.detail.contains("CVE-2025-23266"));
        assert!(
            first_cmd(&f).contains("apt-get install --only-upgrade -y nvidia-container-toolkit")
        );
        let mut s = healthy();
        with_toolkit(&mut s, "1.17.4");
        let f = only(run(&s), codes::GD070, Severity::Warning);
        assert!(!f.detail.contains("CVE-2025-23359"), "{}", f.detail);
    }

    #[test]
    fn a_toolkit_before_cdi_generate_says_so_where_cdi_is_wanted() {
        let mut s = healthy();
        with_toolkit(&mut s, "1.11.0");
        host_mut(&mut s).podman.binaries = vec![bin("podman")];
        let f = only(run(&s), codes::GD070, Severity::Warning);
        assert!(f.detail.contains("predates `nvidia-ctk cdi generate`"));
    }

    #[test]
    fn not_applicable_without_a_package_or_in_a_container() {
        assert_na(run(&healthy()));
        let mut s = healthy();
        with_toolkit(&mut s, "1.16.1");
        in_container(&mut s, "docker");
        assert_na(run(&s));
    }
}
