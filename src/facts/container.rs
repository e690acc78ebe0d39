//! What the `container` probe (src/probes/container.rs) records.

use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContainerView {
    /// NVIDIA driver files, programs, device nodes and /proc entries mounted into this
    /// mount namespace from outside its root filesystem.
    pub nvidia_mounts: Fact<Vec<InjectedMount>>,
    /// The device cgroup: the allow-list on cgroup v1; on v2 an eBPF program that cannot be
    /// read (the fact is missing, with that reason).
    pub device_cgroup: Fact<DeviceCgroup>,
    /// The Kubernetes namespace, from the mounted service-account token's directory.
    #[serde(default)]
    pub pod_namespace: Option<Fact<String>>,
    /// Driver libraries Apptainer/Singularity's `--nv` bound into `/.singularity.d/libs`.
    #[serde(default)]
    pub apptainer_nv_libs: Vec<String>,
}

/// What kind of NVIDIA piece a mount is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MountKind {
    DriverLibrary,
    Program,
    DeviceNode,
    DriverProc,
    Firmware,
    /// nvidia-persistenced's or the MPS daemon's socket.
    Socket,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InjectedMount {
    /// Where it appears in the container.
    pub path: String,
    /// The path inside the source filesystem (the host's path for a bind mount).
    pub source_path: String,
    pub fstype: String,
    pub kind: MountKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceCgroup {
    /// 1: rules read from devices.list.
    pub version: u8,
    /// `a *:* rwm`, `c 195:* rwm`, …
    pub rules: Vec<String>,
}

/// Character-device majors of the NVIDIA driver's nodes: 195 (nvidia, nvidiactl, modeset);
/// nvidia-uvm and nvidia-caps get dynamic majors and are listed by /proc/devices.
pub const NVIDIA_MAJOR: u32 = 195;

impl DeviceCgroup {
    /// Whether the allow-list lets this process read and write the character device
    /// MAJOR:MINOR (v1 semantics: any matching rule with both r and w).
    pub fn allows(&self, major: u32, minor: u32) -> bool {
        self.rules.iter().any(|r| rule_allows(r, major, minor))
    }
}

pub(crate) fn rule_allows(rule: &str, major: u32, minor: u32) -> bool {
    let mut parts = rule.split_whitespace();
    let (Some(kind), Some(numbers), Some(access)) = (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    if kind != "a" && kind != "c" {
        return false;
    }
    if !(access.contains('r') && access.contains('w')) {
        return false;
    }
    let Some((maj, min)) = numbers.split_once(':') else {
        return false;
    };
    let matches = |pattern: &str, n: u32| pattern == "*" || pattern.parse::<u32>() == Ok(n);
    matches(maj, major) && matches(min, minor)
}
