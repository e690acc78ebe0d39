//! What the `identity` probe (src/probes/identity.rs) records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
    /// Supplementary groups (the primary group included).
    pub groups: Vec<u32>,
    pub user_name: Option<String>,
    /// How the identity was found: the process credentials or `--user`.
    pub source: String,
    /// True when judging the running process itself (its access can be asked of the kernel).
    pub is_process: bool,
    /// Whether the process runs in a user namespace (rootless containers), from /proc/self/uid_map.
    pub in_user_namespace: Option<bool>,
}
