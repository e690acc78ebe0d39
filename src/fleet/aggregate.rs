//! The fleet's judgement: its shape, the nodes that differ from their peers (same GPU
//! model), and the findings grouped by code across nodes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{natural_cmp, NodeReport, Problem, StepIn};
use crate::findings::Severity;

/// A node's smoke figure below this share of its peers' median is an outlier.
pub const SLOW_SHARE: f64 = 0.7;
/// Node names listed per finding group before "… and N more".
const NAMES_SHOWN: usize = 12;

/// What one node report says, in the terms the fleet compares.
#[derive(Debug, Clone, Serialize)]
pub struct NodeFacts {
    pub name: String,
    pub source: String,
    pub hostname: Option<String>,
    pub slurm_job: Option<String>,
    pub kubernetes_pod: Option<String>,
    /// The most common GPU model on the node: its peer group ("no GPU" when none).
    pub gpu_model: String,
    /// GPUs the driver runs (NVML's count, else the driver's list).
    pub gpus: usize,
    /// GPUs per model name on this node.
    pub models: BTreeMap<String, usize>,
    /// NVIDIA GPU functions on the PCI bus, driver or not.
    pub pci_gpus: usize,
    /// Their most common PCI device id ("10de:2330").
    #[serde(skip)]
    pub pci_id: Option<String>,
    pub machine_id: Option<String>,
    /// When the report was made.
    pub time: Option<String>,
    pub driver: Option<String>,
    /// The newest CUDA the driver supports (NVML).
    pub cuda: Option<String>,
    /// The toolkit builds use (CUDA_HOME / nvcc).
    pub toolkit: Option<String>,
    pub torch: Option<String>,
    /// The slowest GPU's matmul GFLOP/s and pinned copy GB/s, when the smoke test ran.
    pub matmul_gflops: Option<f64>,
    pub pinned_gbps: Option<f64>,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub value: String,
    pub nodes: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelCount {
    pub model: String,
    pub gpus: usize,
    pub nodes: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Shape {
    pub nodes: usize,
    pub gpus: usize,
    pub gpus_by_model: Vec<ModelCount>,
    pub drivers: Vec<Count>,
    pub cuda: Vec<Count>,
    pub toolkits: Vec<Count>,
    pub torch: Vec<Count>,
    pub gpu_counts: Vec<Count>,
    /// The span of the reports' times: a node whose report is old was not rechecked.
    pub oldest_report: Option<String>,
    pub newest_report: Option<String>,
}

/// A node that differs from its peers (the nodes with the same GPU model).
#[derive(Debug, Clone, Serialize)]
pub struct Outlier {
    pub node: String,
    /// driver, cuda, toolkit, torch, gpu_count, matmul, bandwidth.
    pub what: String,
    pub value: String,
    /// What most peers have (or their median, for the smoke figures).
    pub peers: String,
    pub group: String,
    pub peer_nodes: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct FindingGroup {
    pub code: String,
    pub severity: Severity,
    /// The title the most nodes share (titles name node-specific details).
    pub title: String,
    pub nodes: usize,
    /// Every node with the finding, in natural order.
    pub node_names: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub schema_version: u32,
    pub gpudoctor_version: &'static str,
    pub shape: Shape,
    pub outliers: Vec<Outlier>,
    pub findings: Vec<FindingGroup>,
    /// Reports that could not be used: missing, unreadable, another schema.
    pub problems: Vec<Problem>,
    pub nodes: Vec<NodeFacts>,
    /// Nodes with an error, a warning (and no error), or neither.
    pub nodes_with_errors: usize,
    pub nodes_with_warnings: usize,
    pub clean_nodes: usize,
}

impl Fleet {
    /// The worst finding on any node.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// Names of the first nodes in a group, for one line of text.
    pub fn names_line(names: &[String]) -> String {
        let mut s = names
            .iter()
            .take(NAMES_SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > NAMES_SHOWN {
            s.push_str(&format!(", … and {} more", names.len() - NAMES_SHOWN));
        }
        s
    }
}

fn facts(r: &NodeReport) -> NodeFacts {
    let s = &r.snapshot;
    let node = s.node.as_ref();
    let name = node
        .map(|n| n.name.clone())
        .filter(|n| !n.is_empty() && n != "unknown")
        .unwrap_or_else(|| {
            std::path::Path::new(&r.source)
                .file_stem()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| r.source.clone())
        });
    let nvml = s
        .nvml
        .as_ref()
        .and_then(|n| n.result.system.as_ref().or(n.result.partial.as_ref()));
    let driver_gpus = s.kernel_module.as_ref().and_then(|k| k.gpus.value.as_ref());
    // The most common model among the node's GPUs: NVML's names, else the driver's.
    let mut models: BTreeMap<String, usize> = BTreeMap::new();
    for n in nvml
        .iter()
        .flat_map(|n| &n.devices)
        .filter_map(|g| g.name.get())
    {
        *models.entry(n.clone()).or_default() += 1;
    }
    if models.is_empty() {
        for m in driver_gpus
            .into_iter()
            .flatten()
            .filter_map(|g| g.model.as_ref())
        {
            *models.entry(m.clone()).or_default() += 1;
        }
    }
    let gpu_model = models
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(m, _)| m.clone())
        .unwrap_or_else(|| "no GPU".into());
    let pci: Vec<&str> = s
        .pci
        .as_ref()
        .and_then(|p| p.devices.value.as_ref())
        .into_iter()
        .flatten()
        .filter(|d| d.role == "gpu")
        .map(|d| d.device_id.as_str())
        .collect();
    let pci_id = mode(pci.iter().copied());
    let gpus = nvml
        .and_then(|n| n.device_count.get().map(|c| *c as usize))
        .or_else(|| driver_gpus.map(Vec::len))
        .unwrap_or(0);
    // The loaded kernel module is the driver; NVML's answer when it is unreadable.
    let driver = s
        .kernel_module
        .as_ref()
        .and_then(|k| k.version_file.value.as_ref())
        .filter(|v| !v.l4t)
        .map(|v| v.version.clone())
        .or_else(|| nvml.and_then(|n| n.driver_version.get().cloned()));
    let toolkit = s.toolkits.as_ref().and_then(|t| {
        let i = t
            .cuda_home
            .toolkit
            .or(t.nvcc_on_path.as_ref().and_then(|n| n.toolkit))?;
        t.installs.get(i)?.cuda.clone()
    });
    let smoke = s.smoke.as_ref().and_then(|p| p.result.run.as_ref());
    let min = |xs: &mut dyn Iterator<Item = f64>| xs.filter(|x| x.is_finite()).reduce(f64::min);
    let matmul_gflops = smoke.and_then(|run| {
        min(&mut run.devices.iter().filter_map(|d| match &d.matmul {
            Some(StepIn::Ok(m)) => Some(m.gflops),
            _ => None,
        }))
    });
    let pinned_gbps = smoke.and_then(|run| {
        min(&mut run
            .devices
            .iter()
            .filter_map(|d| match &d.transfer {
                Some(StepIn::Ok(t)) => Some([t.pinned_h2d_gbps, t.pinned_d2h_gbps]),
                _ => None,
            })
            .flatten()
            .flatten())
    });
    let count = |sev: Severity| r.findings.iter().filter(|f| f.severity == sev).count();
    NodeFacts {
        name,
        source: r.source.clone(),
        hostname: node.and_then(|n| n.hostname.clone()),
        slurm_job: node.and_then(|n| n.slurm.as_ref()?.job_id.clone()),
        kubernetes_pod: node.and_then(|n| n.kubernetes.as_ref()?.pod_name.clone()),
        gpu_model,
        gpus,
        models,
        pci_gpus: pci.len(),
        pci_id,
        machine_id: node.and_then(|n| n.machine_id.clone()),
        time: node.map(|n| n.time.clone()).filter(|t| !t.is_empty()),
        driver,
        cuda: nvml.and_then(|n| n.cuda_driver_version.get().cloned()),
        toolkit,
        torch: s.python.as_ref().and_then(|envs| {
            envs.iter()
                .find(|e| e.primary && e.torch.is_some())?
                .torch
                .as_ref()?
                .version
                .value
                .clone()
        }),
        matmul_gflops,
        pinned_gbps,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        infos: count(Severity::Info),
    }
}

/// Node counts per value; `absent` names the nodes without one ("unknown", "none").
fn counts<'a>(values: impl Iterator<Item = Option<&'a String>>, absent: &str) -> Vec<Count> {
    let mut m: BTreeMap<String, usize> = BTreeMap::new();
    for v in values {
        *m.entry(v.cloned().unwrap_or_else(|| absent.into()))
            .or_default() += 1;
    }
    let mut out: Vec<Count> = m
        .into_iter()
        .map(|(value, nodes)| Count { value, nodes })
        .collect();
    out.sort_by(|a, b| b.nodes.cmp(&a.nodes).then(natural_cmp(&a.value, &b.value)));
    out
}

/// The value most nodes have; a tie goes to the higher version (upgrades lead).
fn mode<'a>(values: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *m.entry(v).or_default() += 1;
    }
    m.into_iter()
        .max_by(|(a, n), (b, k)| n.cmp(k).then(natural_cmp(a, b)))
        .map(|(v, _)| v.to_string())
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    crate::smoke::median(&mut xs)
}

pub fn aggregate(reports: &[NodeReport], mut problems: Vec<Problem>) -> Fleet {
    let mut per_report: Vec<NodeFacts> = reports.iter().map(facts).collect();
    // One node, one report: the newest wins; the others are listed, not counted twice.
    let mut keep = vec![true; per_report.len()];
    let mut newest: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, n) in per_report.iter().enumerate() {
        match newest.get(n.name.as_str()) {
            None => {
                newest.insert(&n.name, i);
            }
            Some(&j) => {
                let (winner, loser) = if n.time > per_report[j].time {
                    (i, j)
                } else {
                    (j, i)
                };
                keep[loser] = false;
                newest.insert(&per_report[winner].name, winner);
            }
        }
    }
    for (i, n) in per_report.iter().enumerate() {
        if !keep[i] {
            let winner = &per_report[newest[n.name.as_str()]];
            problems.push(Problem {
                source: n.source.clone(),
                kind: "duplicate".into(),
                detail: format!(
                    "node {} is also reported by {} ({}), which is newer and is the one counted",
                    n.name,
                    winner.source,
                    winner.time.as_deref().unwrap_or("no time")
                ),
            });
        }
    }
    // A node whose driver sees no GPU still has them on the PCI bus: it belongs with the
    // nodes whose GPUs carry the same PCI device id.
    let mut model_of_pci: BTreeMap<String, String> = BTreeMap::new();
    for n in &per_report {
        if let (Some(id), false) = (&n.pci_id, n.models.is_empty()) {
            model_of_pci
                .entry(id.clone())
                .or_insert_with(|| n.gpu_model.clone());
        }
    }
    for n in per_report
        .iter_mut()
        .filter(|n| n.models.is_empty() && n.pci_gpus > 0)
    {
        n.gpu_model = n
            .pci_id
            .as_ref()
            .and_then(|id| model_of_pci.get(id).cloned())
            .unwrap_or_else(|| {
                format!("NVIDIA {} (no driver)", n.pci_id.as_deref().unwrap_or("?"))
            });
    }
    let kept: Vec<usize> = (0..per_report.len()).filter(|i| keep[*i]).collect();
    let mut nodes: Vec<NodeFacts> = kept.iter().map(|i| per_report[*i].clone()).collect();
    nodes.sort_by(|a, b| natural_cmp(&a.name, &b.name));

    // GPUs counted by their own model names; a node counts toward each model it has.
    let mut by_model: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for n in &nodes {
        for (m, c) in &n.models {
            let e = by_model.entry(m.clone()).or_default();
            e.0 += c;
            e.1 += 1;
        }
        if n.models.is_empty() && n.pci_gpus > 0 {
            by_model
                .entry(format!("{} without a driver", n.gpu_model))
                .or_default()
                .1 += 1;
        }
    }
    let mut gpus_by_model: Vec<ModelCount> = by_model
        .into_iter()
        .map(|(model, (gpus, nodes))| ModelCount { model, gpus, nodes })
        .collect();
    gpus_by_model.sort_by(|a, b| b.gpus.cmp(&a.gpus).then(a.model.cmp(&b.model)));
    let gpu_count_strings: Vec<String> = nodes.iter().map(|n| n.gpus.to_string()).collect();
    let times: Vec<&str> = nodes.iter().filter_map(|n| n.time.as_deref()).collect();
    let shape = Shape {
        nodes: nodes.len(),
        gpus: nodes.iter().map(|n| n.gpus).sum(),
        gpus_by_model,
        drivers: counts(nodes.iter().map(|n| n.driver.as_ref()), "unknown"),
        cuda: counts(nodes.iter().map(|n| n.cuda.as_ref()), "unknown"),
        toolkits: counts(nodes.iter().map(|n| n.toolkit.as_ref()), "none"),
        torch: counts(nodes.iter().map(|n| n.torch.as_ref()), "none"),
        gpu_counts: counts(gpu_count_strings.iter().map(Some), "unknown"),
        oldest_report: times.iter().min().map(|t| t.to_string()),
        newest_report: times.iter().max().map(|t| t.to_string()),
    };

    let mut outliers = Vec::new();
    let mut groups: BTreeMap<&str, Vec<&NodeFacts>> = BTreeMap::new();
    for n in &nodes {
        groups.entry(n.gpu_model.as_str()).or_default().push(n);
    }
    for (model, members) in &groups {
        if members.len() < 2 {
            continue;
        }
        type Get = fn(&NodeFacts) -> Option<String>;
        let fields: [(&str, Get); 5] = [
            ("driver", |n| n.driver.clone()),
            ("cuda", |n| n.cuda.clone()),
            ("toolkit", |n| n.toolkit.clone()),
            ("torch", |n| n.torch.clone()),
            ("gpu_count", |n| Some(n.gpus.to_string())),
        ];
        for (what, get) in fields {
            let values: Vec<(&NodeFacts, String)> =
                members.iter().filter_map(|n| Some((*n, get(n)?))).collect();
            let Some(common) = mode(values.iter().map(|(_, v)| v.as_str())) else {
                continue;
            };
            for (n, v) in &values {
                if *v != common {
                    let value = if what == "gpu_count" && n.pci_gpus > n.gpus {
                        format!("{v} ({} on the PCI bus)", n.pci_gpus)
                    } else {
                        v.clone()
                    };
                    outliers.push(Outlier {
                        node: n.name.clone(),
                        what: what.into(),
                        value,
                        peers: common.clone(),
                        group: model.to_string(),
                        peer_nodes: members.len() - 1,
                    });
                }
            }
        }
        type Figure = fn(&NodeFacts) -> Option<f64>;
        let figures: [(&str, &str, Figure); 2] = [
            ("matmul", "GFLOP/s", |n| n.matmul_gflops),
            ("bandwidth", "GB/s pinned", |n| n.pinned_gbps),
        ];
        for (what, unit, get) in figures {
            let values: Vec<(&NodeFacts, f64)> =
                members.iter().filter_map(|n| Some((*n, get(n)?))).collect();
            if values.len() < 2 {
                continue;
            }
            let Some(mid) = median(values.iter().map(|(_, v)| *v).collect()) else {
                continue;
            };
            for (n, v) in &values {
                if *v < mid * SLOW_SHARE {
                    outliers.push(Outlier {
                        node: n.name.clone(),
                        what: what.into(),
                        value: format!("{v:.1} {unit}"),
                        peers: format!("median {mid:.1} {unit}"),
                        group: model.to_string(),
                        peer_nodes: members.len() - 1,
                    });
                }
            }
        }
    }
    outliers.sort_by(|a, b| natural_cmp(&a.node, &b.node).then(a.what.cmp(&b.what)));

    // Findings by code and severity (a code can be an error on one node and a warning on
    // another): every node, the most common title.
    struct Acc {
        titles: BTreeMap<String, usize>,
        nodes: Vec<String>,
        seen: std::collections::HashSet<String>,
    }
    let mut by_code: BTreeMap<(String, Severity), Acc> = BTreeMap::new();
    for (r, n) in reports
        .iter()
        .zip(&per_report)
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(x, _)| x)
    {
        for f in &r.findings {
            let acc = by_code
                .entry((f.code.clone(), f.severity))
                .or_insert_with(|| Acc {
                    titles: BTreeMap::new(),
                    nodes: Vec::new(),
                    seen: Default::default(),
                });
            *acc.titles.entry(f.title.clone()).or_default() += 1;
            if acc.seen.insert(n.name.clone()) {
                acc.nodes.push(n.name.clone());
            }
        }
    }
    let mut findings: Vec<FindingGroup> = by_code
        .into_iter()
        .map(|((code, severity), mut acc)| {
            acc.nodes.sort_by(|a, b| natural_cmp(a, b));
            FindingGroup {
                code,
                severity,
                title: acc
                    .titles
                    .iter()
                    .max_by_key(|(_, n)| **n)
                    .map(|(t, _)| t.clone())
                    .unwrap_or_default(),
                nodes: acc.nodes.len(),
                node_names: acc.nodes,
            }
        })
        .collect();
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(b.nodes.cmp(&a.nodes))
            .then(a.code.cmp(&b.code))
    });

    let nodes_with_errors = nodes.iter().filter(|n| n.errors > 0).count();
    let nodes_with_warnings = nodes
        .iter()
        .filter(|n| n.errors == 0 && n.warnings > 0)
        .count();
    Fleet {
        schema_version: crate::report::SCHEMA_VERSION,
        gpudoctor_version: env!("CARGO_PKG_VERSION"),
        clean_nodes: nodes.len() - nodes_with_errors - nodes_with_warnings,
        nodes_with_errors,
        nodes_with_warnings,
        shape,
        outliers,
        findings,
        problems,
        nodes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_prefers_the_majority_then_the_newer_version() {
        let m = |v: &[&str]| mode(v.iter().copied());
        assert_eq!(m(&["535.1", "550.2", "535.1"]).as_deref(), Some("535.1"));
        assert_eq!(m(&["535.1", "550.2"]).as_deref(), Some("550.2"));
        assert_eq!(m(&["580.9", "580.10"]).as_deref(), Some("580.10"));
        assert_eq!(m(&[]), None);
    }
}
