//! `check --baseline OLD.json`: the link error counters of the earlier report, kept in the
//! snapshot so the link_counters rule judges what grew since then (and a replay with `--from`
//! judges the same). Read from the saved report's own facts, only when it is this machine's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::facts::nvml::NvLinkErrors;
use crate::facts::topology::AerCounters;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CountersBaseline {
    /// The baseline report as named on the command line.
    pub report: String,
    /// When it was made (its `snapshot.node.time`).
    pub time: Option<String>,
    /// Seconds from it to this run; None where either time is unknown.
    pub elapsed_s: Option<f64>,
    /// Why its counters are not compared (another machine, no counters), when they are not.
    pub not_compared: Option<String>,
    /// Its PCIe AER counters (`snapshot.topology.aer`).
    pub aer: Vec<AerCounters>,
    /// Its NVML link counters, per GPU by UUID.
    pub gpus: Vec<BaselineGpu>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BaselineGpu {
    pub uuid: String,
    pub pcie_replay_counter: Option<u32>,
    /// Per NVLink in link order; None for a link that was down.
    pub nvlink_errors: Vec<Option<NvLinkErrors>>,
}

/// The counters of the saved report `old` (as JSON), set against this run's machine id (its
/// node name where either report has none) and time.
pub fn from_report(
    report: &str,
    old: &serde_json::Value,
    node: &crate::facts::node::Node,
) -> CountersBaseline {
    let (machine_id, now) = (node.machine_id.as_deref(), node.time.as_str());
    let snap = &old["snapshot"];
    let time = snap["node"]["time"].as_str().map(str::to_string);
    let elapsed_s = time.as_deref().and_then(|t| {
        let then = humantime::parse_rfc3339_weak(t).ok()?;
        let now = humantime::parse_rfc3339_weak(now).ok()?;
        now.duration_since(then).ok().map(|d| d.as_secs_f64())
    });
    let mut out = CountersBaseline {
        report: report.to_string(),
        time,
        elapsed_s,
        not_compared: None,
        aer: Vec::new(),
        gpus: Vec::new(),
    };
    let theirs = snap["node"]["machine_id"].as_str();
    let other = match (theirs, machine_id) {
        (Some(a), Some(b)) => (a != b).then(|| {
            format!(
                "machine id {} there, {} here",
                a.chars().take(8).collect::<String>(),
                b.chars().take(8).collect::<String>()
            )
        }),
        _ => {
            let name = snap["node"]["name"].as_str().unwrap_or("");
            (name != node.name).then(|| format!("node {name} there, {} here", node.name))
        }
    };
    if let Some(why) = other {
        out.not_compared = Some(format!("it is another machine's ({why})"));
        return out;
    }
    out.aer = serde_json::from_value(snap["topology"]["aer"].clone()).unwrap_or_default();
    let system = &snap["nvml"]["result"];
    let devices = system["system"]["devices"]
        .as_array()
        .or_else(|| system["partial"]["devices"].as_array());
    for d in devices.into_iter().flatten() {
        let field = |k: &str| d[k]["value"].clone();
        let Some(uuid) = field("uuid").as_str().map(str::to_string) else {
            continue;
        };
        let nvlink_errors: Vec<Option<NvLinkErrors>> =
            serde_json::from_value(field("nvlink_errors")).unwrap_or_default();
        out.gpus.push(BaselineGpu {
            uuid,
            pcie_replay_counter: field("pcie_replay_counter").as_u64().map(|n| n as u32),
            nvlink_errors,
        });
    }
    if out.aer.is_empty() && out.gpus.is_empty() {
        out.not_compared = Some("it holds no link error counter".into());
    }
    out
}
