//! What the `node` probe (src/probes/node.rs) records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Node {
    /// The scheduler's node name when there is one, else the host name: what `fleet` and
    /// `--output …/{host}.json` call this node.
    pub name: String,
    pub hostname: Option<String>,
    /// SHA-256 of "gpudoctor:" + /etc/machine-id, first 32 hex digits: stable per machine,
    /// not the identifier itself (machine-id(5) asks not to expose it).
    pub machine_id: Option<String>,
    pub slurm: Option<Slurm>,
    pub kubernetes: Option<Kubernetes>,
    /// When the report was made (RFC 3339, UTC).
    pub time: String,
    pub gpudoctor_version: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Slurm {
    pub job_id: Option<String>,
    pub job_name: Option<String>,
    pub step_id: Option<String>,
    pub proc_id: Option<String>,
    pub node_name: Option<String>,
    pub cluster_name: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Kubernetes {
    pub node_name: Option<String>,
    pub pod_name: Option<String>,
    pub namespace: Option<String>,
    /// KUBERNETES_SERVICE_HOST is set: this is a pod even without the downward API.
    pub in_pod: bool,
}
