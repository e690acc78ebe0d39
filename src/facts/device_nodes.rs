//! What the `device_nodes` probe (src/probes/device_nodes.rs) records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceNodes {
    pub nodes: Vec<DeviceNode>,
    /// Why /dev could not be listed, when it could not.
    pub listing_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceNode {
    pub path: String,
    pub present: bool,
    /// char_device, regular_file (fake roots, broken images), directory, other.
    pub kind: Option<String>,
    /// Permission bits in octal, e.g. "0666".
    pub mode: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub owner: Option<String>,
    pub group: Option<String>,
    pub major: Option<u32>,
    pub minor: Option<u32>,
    pub access: Option<Access>,
    /// Why the node could not be inspected (other than being absent).
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Access {
    pub read_write: bool,
    /// `access(2)` (the kernel's answer for this process) or `mode bits` (computed).
    pub method: String,
    pub detail: String,
}

impl DeviceNode {
    /// `owner:group`, by name where the account databases know it, else by number.
    pub fn owner_group(&self) -> String {
        let owner = self
            .owner
            .clone()
            .or(self.uid.map(|u| u.to_string()))
            .unwrap_or_default();
        let group = self
            .group
            .clone()
            .or(self.gid.map(|g| g.to_string()))
            .unwrap_or_default();
        format!("{owner}:{group}")
    }

    /// `/dev/nvidiaN`: the node of one GPU (a directory of that name is not one).
    pub fn is_gpu_node(&self) -> bool {
        self.kind.as_deref() != Some("directory")
            && is_gpu_node_name(self.path.trim_start_matches("/dev/"))
    }
}

impl DeviceNodes {
    pub fn node(&self, path: &str) -> Option<&DeviceNode> {
        self.nodes.iter().find(|n| n.path == path)
    }

    pub fn is_present(&self, path: &str) -> bool {
        self.node(path).is_some_and(|n| n.present)
    }

    /// `/dev/nvidia0`, `/dev/nvidia1`, …: one per GPU the driver exposes here.
    pub fn gpu_nodes(&self) -> Vec<&DeviceNode> {
        self.nodes
            .iter()
            .filter(|n| n.present && n.is_gpu_node())
            .collect()
    }
}

pub fn is_gpu_node_name(name: &str) -> bool {
    name.strip_prefix("nvidia")
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
}
