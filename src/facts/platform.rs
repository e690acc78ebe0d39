//! What the `platform` probe (src/probes/platform.rs) records.

use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Platform {
    pub os: Fact<OsRelease>,
    pub kernel_release: Fact<String>,
    pub arch: Fact<String>,
    pub container: Container,
    pub wsl: Wsl,
    /// Size of the /dev/shm tmpfs in KiB (from /proc/mounts); NCCL needs room there.
    #[serde(default)]
    pub shm_kib: Option<Fact<u64>>,
    /// Signs that this is a virtual machine (the CPU's hypervisor flag, the DMI vendor);
    /// empty on bare metal or when nothing could be read.
    #[serde(default)]
    pub virtual_machine: Vec<Hint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OsRelease {
    pub id: Option<String>,
    pub version_id: Option<String>,
    pub pretty_name: String,
}

/// A piece of evidence for a container or WSL: what was seen and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hint {
    pub kind: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Container {
    /// docker, podman, kubernetes, containerd, cri-o, apptainer, enroot, lxc, systemd-nspawn;
    /// None when none was seen.
    pub kind: Option<String>,
    pub hints: Vec<Hint>,
    /// What the runtime handed the container (src/probes/container.rs); None outside one.
    #[serde(default)]
    pub given: Option<Box<crate::facts::container::ContainerView>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Wsl {
    pub detected: bool,
    /// 1 or 2 when detected.
    pub version: Option<u8>,
    pub hints: Vec<Hint>,
}
