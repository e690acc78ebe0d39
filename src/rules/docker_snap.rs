//! GD067: Docker installed as a snap on a GPU host. The snap is confined: it brings its own
//! copy of the NVIDIA Container Toolkit and gives containers GPUs only through its `nvidia`
//! runtime, and since snap release 29.2.0 it fails to start GPU containers when the host also
//! has the toolkit installed as a Debian package (canonical/docker-snap README, "NVIDIA
//! support", and its issue #357). A host toolkit's hook run from the snap cannot load the
//! host's libnvidia-ml ("load library failed: libnvidia-ml.so.1: cannot open shared object
//! file", canonical/docker-snap issue #148).

use super::{container_host, Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "docker_snap",
    codes: &[codes::GD067],
    views: &[],
    checks: "Docker, if installed as a snap, can give containers the GPUs",
    judges: &[],
    run,
};

/// The first snap release that fails with the host's toolkit packages installed.
const CONFLICT_SINCE: (u32, u32, u32) = (29, 2, 0);
const README: &str = "https://github.com/canonical/docker-snap#nvidia-support";

fn version_triple(v: &str) -> Option<(u32, u32, u32)> {
    let mut it = v.split(['.', '+', '-', '~']).map(|p| p.parse::<u32>().ok());
    Some((
        it.next()??,
        it.next().flatten().unwrap_or(0),
        it.next().flatten().unwrap_or(0),
    ))
}

fn run(snap: &Snapshot) -> Outcome {
    let host = match container_host(snap) {
        Ok(h) => h,
        Err(na) => return na,
    };
    let Some(ds) = &host.docker.snap else {
        return Outcome::Checked(vec![]);
    };
    let version = ds.version.get().cloned();
    let shown = version
        .clone()
        .unwrap_or_else(|| "of unknown version".into());
    let evidence = ds.evidence.join(", ");
    let host_pkgs: Vec<String> = crate::facts::container_host::TOOLKIT_PACKAGES
        .iter()
        .filter_map(|n| host.package(n))
        .map(|p| format!("{} {}", p.name, p.version))
        .collect();
    let conflicting = version
        .as_deref()
        .and_then(version_triple)
        .is_none_or(|v| v >= CONFLICT_SINCE);
    let remove_snap = (
        "Or remove the snap and install Docker from Docker's apt repository (or the distribution's docker.io), then the NVIDIA Container Toolkit: `sudo snap remove --purge docker`",
        "sudo snap remove --purge docker",
    );
    if !host_pkgs.is_empty() && conflicting {
        return Outcome::Checked(vec![Finding::new(codes::GD067, Severity::Error, "Docker is a snap and the host also has the NVIDIA Container Toolkit packages: GPU containers fail to start")
            .detail(format!("The Docker snap ({shown}) brings its own NVIDIA Container Toolkit. Since snap release 29.2.0 it fails to launch containers with GPUs when the toolkit is also installed on the host as a Debian package ({README}). With a host toolkit's hook, the confined daemon cannot load the host's driver library either: \"nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file\"."))
            .evidence(Subject::File(crate::facts::container_host::SNAP_META.into()), format!("Docker snap {shown}"), ds.version.source.clone())
            .context(format!("host packages: {}", host_pkgs.join(", ")), crate::facts::container_host::DPKG_STATUS)
            .context(format!("snap files: {evidence}"), evidence.clone())
            .fix_cmd("Remove the host's toolkit packages so the snap's own is used, then reboot", "sudo apt remove libnvidia-container1 libnvidia-container-tools nvidia-container-toolkit-base nvidia-container-toolkit")
            .fix_cmd("Or keep them and name the snap's hook as the GPU driver for each container", "docker run --rm --runtime nvidia --gpus=\"all,driver=nvidia.runtime-hook\" IMAGE nvidia-smi")
            .fix_cmd(remove_snap.0, remove_snap.1)]);
    }
    Outcome::Checked(vec![Finding::new(codes::GD067, Severity::Warning, "Docker is installed as a snap: GPUs reach its containers only through the snap's nvidia runtime")
        .detail(format!("The Docker snap ({shown}) is confined and does not use the host's NVIDIA Container Toolkit: it sets up its own and gives containers GPUs only with `--runtime nvidia` ({README}). Instructions written for Docker from packages (`docker run --gpus all` alone, `nvidia-ctk runtime configure`, /etc/docker/daemon.json) do not apply to it, and a host toolkit hook run from the snap fails with \"load library failed: libnvidia-ml.so.1: cannot open shared object file\"."))
        .evidence(Subject::File(crate::facts::container_host::SNAP_META.into()), format!("Docker snap {shown}"), ds.version.source.clone())
        .context(format!("snap files: {evidence}"), evidence)
        .fix_cmd("Run GPU containers with the snap's nvidia runtime", "docker run --rm --runtime nvidia --gpus all IMAGE nvidia-smi")
        .fix_cmd(remove_snap.0, remove_snap.1)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;
    use crate::facts::container_host::*;
    use crate::testing::*;

    fn snap_docker(version: &str) -> Snapshot {
        let mut s = healthy();
        host_mut(&mut s).docker.snap = Some(DockerSnap {
            evidence: vec![SNAP_DOCKER.into()],
            version: Fact::value(SNAP_META, version.to_string()),
        });
        s
    }

    #[test]
    fn no_snap_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_snap_alone_is_a_warning_pointing_at_its_runtime() {
        let f = only(run(&snap_docker("28.4.0")), codes::GD067, Severity::Warning);
        assert_eq!(
            first_cmd(&f),
            "docker run --rm --runtime nvidia --gpus all IMAGE nvidia-smi"
        );
        assert!(fixes_mention(&f, "sudo snap remove --purge docker"));
    }

    #[test]
    fn a_new_snap_with_the_host_toolkit_is_an_error() {
        let mut s = snap_docker("29.2.1");
        with_toolkit(&mut s, "1.17.8");
        let f = only(run(&s), codes::GD067, Severity::Error);
        assert!(first_cmd(&f).starts_with("sudo apt remove libnvidia-container1"));
        assert!(f.detail.contains("libnvidia-ml.so.1"));
        // An older snap with the same packages: a warning.
        let mut s = snap_docker("28.1.1");
        with_toolkit(&mut s, "1.17.8");
        only(run(&s), codes::GD067, Severity::Warning);
    }

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(version_triple("29.2.0"), Some((29, 2, 0)));
        assert_eq!(version_triple("28.1.1+1"), Some((28, 1, 1)));
        assert_eq!(version_triple("x"), None);
    }

    #[test]
    fn not_applicable_in_a_container() {
        let mut s = snap_docker("29.2.1");
        in_container(&mut s, "docker");
        assert_na(run(&s));
    }
}
