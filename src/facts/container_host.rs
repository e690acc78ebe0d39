//! What the `container_host` probe (src/probes/container_host.rs) records.

use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the engines' and the toolkit's binaries are installed.
pub const BIN_DIRS: &[&str] = &["/usr/bin", "/usr/local/bin", "/usr/sbin", "/snap/bin"];

pub const DPKG_STATUS: &str = "/var/lib/dpkg/status";

pub const DAEMON_JSON: &str = "/etc/docker/daemon.json";

pub const SNAP_META: &str = "/snap/docker/current/meta/snap.yaml";

pub const PODMAN_HOOKS: &[&str] = &[
    "/usr/share/containers/oci/hooks.d/oci-nvidia-hook.json",
    "/etc/containers/oci/hooks.d/oci-nvidia-hook.json",
];

pub const TOOLKIT_PACKAGES: &[&str] = &[
    "nvidia-container-toolkit",
    "nvidia-container-toolkit-base",
    "libnvidia-container1",
    "libnvidia-container-tools",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContainerHost {
    /// Engine and toolkit packages from dpkg's database, when it was read.
    pub packages: Fact<Vec<Package>>,
    /// The rpm database, when there is one: it is SQLite (or Berkeley DB) and not read.
    pub rpm_db: Option<Fact<Vec<Package>>>,
    pub docker: Docker,
    pub podman: Podman,
    /// containerd, k3s's and RKE2's containerd: those installed or configured.
    pub containerd: Vec<Containerd>,
    pub crio: Crio,
    /// Signs that this host is a Kubernetes node (a kubelet's files, k3s, RKE2).
    pub kubernetes: Vec<String>,
    pub toolkit: ContainerToolkit,
    pub cdi: Cdi,
    pub dev_char: DevChar,
    /// `v2` (unified) or `v1`.
    pub cgroup: Fact<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Package {
    pub name: String,
    pub version: String,
    pub source: String,
}

/// A binary found on disk (never run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Binary {
    pub name: String,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Docker {
    pub binaries: Vec<Binary>,
    /// docker-ce, docker.io or moby-engine, from the package database.
    pub packages: Vec<Package>,
    pub snap: Option<DockerSnap>,
    /// /etc/docker/daemon.json and the snap's, each read or why not.
    pub daemon_configs: Vec<Fact<DaemonConfig>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DockerSnap {
    /// The files that show the snap.
    pub evidence: Vec<String>,
    /// The snap's version, from its meta/snap.yaml.
    pub version: Fact<String>,
}

/// What daemon.json says about runtimes, CDI and cgroups.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DaemonConfig {
    /// Runtime names and their paths.
    pub runtimes: BTreeMap<String, Option<String>>,
    pub default_runtime: Option<String>,
    /// `features.cdi`, when set.
    pub cdi: Option<bool>,
    /// From `exec-opts`: `native.cgroupdriver=systemd|cgroupfs`.
    pub cgroup_driver: Option<String>,
    pub cdi_spec_dirs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Podman {
    pub binaries: Vec<Binary>,
    /// NVIDIA OCI hooks Podman would run.
    pub nvidia_hooks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Containerd {
    /// `containerd`, `k3s` or `rke2`.
    pub flavor: String,
    pub binaries: Vec<Binary>,
    pub config: Fact<ContainerdConfig>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContainerdConfig {
    /// The config's `version` (1, 2 or 3).
    pub version: Option<i64>,
    /// CRI runtime names and their BinaryName, from the file and its imports.
    pub runtimes: BTreeMap<String, Option<String>>,
    pub default_runtime_name: Option<String>,
    /// SystemdCgroup of the default runtime (runc when none is named).
    pub systemd_cgroup: Option<bool>,
    pub enable_cdi: Option<bool>,
    pub cdi_spec_dirs: Vec<String>,
    pub imports: Vec<String>,
    /// Imported files that could not be read or parsed.
    pub import_errors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Crio {
    pub binaries: Vec<Binary>,
    /// crio.conf and each crio.conf.d/*.conf, in the order CRI-O applies them.
    pub configs: Vec<Fact<CrioConfig>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CrioConfig {
    /// `[crio.runtime.runtimes.NAME]` and their runtime_path.
    pub runtimes: BTreeMap<String, Option<String>>,
    pub default_runtime: Option<String>,
    pub cgroup_manager: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContainerToolkit {
    pub binaries: Vec<Binary>,
    pub config: Fact<ToolkitConfig>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolkitConfig {
    /// `[nvidia-container-runtime] mode`: auto, legacy, cdi, csv.
    pub mode: Option<String>,
    /// `[nvidia-container-cli] no-cgroups`.
    pub no_cgroups: Option<bool>,
    /// `[nvidia-container-cli] ldconfig`.
    pub ldconfig: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cdi {
    /// The directories searched.
    pub dirs: Vec<String>,
    /// Each spec file, parsed or why not.
    pub specs: Vec<Fact<CdiSpec>>,
    /// Directories that could not be listed (other than absent), and files left out.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CdiSpec {
    pub cdi_version: Option<String>,
    /// `nvidia.com/gpu` for NVIDIA's GPUs.
    pub kind: Option<String>,
    pub device_count: usize,
    /// The first device names (`0`, `all`, `GPU-…`).
    pub devices: Vec<String>,
    /// Hook subcommands (`create-symlinks`, `update-ldcache`, …).
    pub hooks: Vec<String>,
    /// The driver the spec was generated for (from libcuda.so.X / libnvidia-ml.so.X).
    pub driver_version: Option<String>,
    /// Mounted files, device nodes and hook binaries, and whether each exists.
    pub host_paths: Vec<HostPath>,
    /// What was left out (too many devices or paths, aliases not followed).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HostPath {
    pub path: String,
    /// `mount`, `device_node` or `hook`.
    pub kind: String,
    pub exists: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DevChar {
    /// How many entries /dev/char has, or why it could not be listed.
    pub listing: Fact<usize>,
    pub nodes: Vec<CharNode>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CharNode {
    pub path: String,
    /// `MAJ:MIN` when the node is a character device.
    pub major_minor: Option<String>,
    /// The /dev/char entry pointing at it.
    pub link: Option<String>,
}

impl ContainerHost {
    pub fn docker_installed(&self) -> bool {
        !self.docker.binaries.is_empty()
            || !self.docker.packages.is_empty()
            || self.docker.snap.is_some()
    }

    /// Docker from a package or a binary outside /snap.
    pub fn docker_outside_snap(&self) -> bool {
        !self.docker.packages.is_empty()
            || self
                .docker
                .binaries
                .iter()
                .any(|b| !b.path.starts_with("/snap/"))
    }

    pub fn podman_installed(&self) -> bool {
        !self.podman.binaries.is_empty()
    }

    pub fn crio_installed(&self) -> bool {
        !self.crio.binaries.is_empty()
    }

    pub fn toolkit_binary(&self, name: &str) -> Option<&Binary> {
        self.toolkit.binaries.iter().find(|b| b.name == name)
    }

    pub fn package(&self, name: &str) -> Option<&Package> {
        self.packages.get()?.iter().find(|p| p.name == name)
    }

    /// The toolkit's version: nvidia-container-toolkit, else -base, else libnvidia-container.
    pub fn toolkit_package(&self) -> Option<&Package> {
        TOOLKIT_PACKAGES.iter().find_map(|n| self.package(n))
    }

    /// The daemon.json files that were read.
    pub fn daemon_configs(&self) -> impl Iterator<Item = (&str, &DaemonConfig)> {
        self.docker
            .daemon_configs
            .iter()
            .filter_map(|f| Some((f.source.as_str(), f.get()?)))
    }

    /// Parsed CDI specs of `nvidia.com/gpu`, with their paths.
    pub fn nvidia_specs(&self) -> Vec<(&str, &CdiSpec)> {
        self.cdi
            .specs
            .iter()
            .filter_map(|f| Some((f.source.as_str(), f.get()?)))
            .filter(|(_, s)| s.kind.as_deref() == Some("nvidia.com/gpu"))
            .collect()
    }

    pub fn cgroup_v2(&self) -> Option<bool> {
        self.cgroup.get().map(|v| v == "v2")
    }
}

pub const SNAP_DOCKER: &str = "/snap/docker/current";

pub const TOOLKIT_CONFIG: &str = "/etc/nvidia-container-runtime/config.toml";

/// The directories every CDI-aware engine reads by default.
pub const CDI_DIRS: &[&str] = &["/etc/cdi", "/var/run/cdi"];

pub const CGROUP_CONTROLLERS: &str = "/sys/fs/cgroup/cgroup.controllers";

pub const TOOLKIT_BINARIES: &[&str] = &[
    "nvidia-container-runtime",
    "nvidia-container-runtime-hook",
    "nvidia-ctk",
    "nvidia-container-cli",
    "nvidia-cdi-hook",
];
