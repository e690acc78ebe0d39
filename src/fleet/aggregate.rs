//! The fleet's judgement: its shape, the nodes that differ from their peers (same GPU
//! model), and the findings grouped by code across nodes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::{natural_cmp, FindingIn, Problem, Problems, SnapshotIn, StepIn};
use crate::findings::Severity;

/// The problem kind of a second report of one machine: listed, but its node is counted once
/// (from its newest report), so it does not make the fleet's state unknown.
pub const DUPLICATE: &str = "duplicate";

/// A node's smoke figure below this share of its peers' median is an outlier.
pub const SLOW_SHARE: f64 = 0.7;
/// Node names listed per finding group before "… and N more".
const NAMES_SHOWN: usize = 12;

/// What one node report says, in the terms the fleet compares.
/// The model of a GPU the driver counts whose name NVML could not read.
pub const UNNAMED_GPU: &str = "GPU NVML could not name";

/// GPUs per model name on one node, sorted by name (a map in JSON). Nodes alike share one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Models(Arc<[(Arc<str>, usize)]>);

impl Models {
    pub fn new(mut entries: Vec<(Arc<str>, usize)>) -> Self {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Models(entries.into())
    }

    pub fn entries(&self) -> &[(Arc<str>, usize)] {
        &self.0
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, usize)> {
        self.0.iter().map(|(m, n)| (&**m, *n))
    }

    pub fn total(&self) -> usize {
        self.0.iter().map(|(_, n)| n).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Models {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeFacts {
    pub name: Arc<str>,
    pub source: String,
    pub hostname: Option<String>,
    pub slurm_job: Option<String>,
    pub kubernetes_pod: Option<String>,
    /// The most common GPU model on the node: its peer group ("no GPU" when none).
    pub gpu_model: Arc<str>,
    /// GPUs the driver runs (NVML's count, else the driver's list).
    pub gpus: usize,
    /// GPUs per model name on this node.
    pub models: Models,
    /// NVIDIA GPU functions on the PCI bus, driver or not.
    pub pci_gpus: usize,
    /// Their most common PCI device id ("10de:2330").
    #[serde(skip)]
    pub pci_id: Option<Arc<str>>,
    pub machine_id: Option<String>,
    /// When the report was made.
    pub time: Option<String>,
    pub driver: Option<Arc<str>>,
    /// The newest CUDA the driver supports (NVML).
    pub cuda: Option<Arc<str>>,
    /// The toolkit builds use (CUDA_HOME / nvcc).
    pub toolkit: Option<Arc<str>>,
    pub torch: Option<Arc<str>>,
    /// The slowest GPU's matmul GFLOP/s and pinned copy GB/s, when the smoke test ran,
    /// with the matrix size and copy size they were measured at (figures are compared
    /// only between nodes that used the same).
    pub matmul_gflops: Option<f64>,
    pub matmul_n: Option<u32>,
    pub pinned_gbps: Option<f64>,
    pub transfer_bytes: Option<u64>,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Which of the expected shape the node's own check judged: GPU count, driver, model.
    #[serde(skip)]
    pub judged: Judged,
    /// The node's findings, after the fleet's policy (the HTML view's cells).
    #[serde(skip)]
    pub findings: Vec<Arc<FindingIn>>,
}

/// What a node's own check expected (`snapshot.expect`): the fleet does not judge an
/// expectation twice, but judges one the node held to another value.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    pub gpus: Option<u32>,
    pub driver: Option<String>,
    pub gpu_model: Option<String>,
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

/// Reports whose identities collide: different machines under one name, or one machine
/// id under several names.
#[derive(Debug, Clone, Serialize)]
pub struct IdentityNote {
    /// same_name, same_machine_id.
    pub kind: String,
    pub nodes: Vec<String>,
    pub detail: String,
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
    pub node_names: Vec<Arc<str>>,
    /// The root causes that explain it on some nodes (`caused_by` of their reports), and on
    /// how many nodes it is such a consequence.
    pub caused_by: Vec<String>,
    pub explained_nodes: usize,
    /// The first fix command, from the first node (natural order) whose finding has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<GroupFix>,
}

/// A finding's first fix command across the nodes that have it.
#[derive(Debug, Clone, Serialize)]
pub struct GroupFix {
    pub command: String,
    /// The node it is taken from.
    pub node: String,
    /// Whether every node with a command has this one (else each node's report has its own:
    /// a GPU index, a path).
    pub same_on_every_node: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub schema_version: u32,
    pub gpudoctor_version: &'static str,
    pub shape: Shape,
    pub outliers: Vec<Outlier>,
    pub findings: Vec<FindingGroup>,
    /// Reports that could not be used (missing, unreadable, another schema, duplicate):
    /// the first ones; `problems_by_kind` counts every one.
    pub problems: Vec<Problem>,
    /// Problems counted but not in `problems`.
    pub problems_not_listed: usize,
    pub problems_by_kind: BTreeMap<String, usize>,
    pub identity: Vec<IdentityNote>,
    pub nodes: Vec<NodeFacts>,
    /// Nodes with an error; without one, nodes that differ from their peers (an outlier:
    /// a GPU fewer, another driver, toolkit or torch, a slow figure); of the rest, nodes
    /// with a warning; and nodes with none of these. Every node is in one of the four.
    pub nodes_with_errors: usize,
    pub deviating_nodes: usize,
    pub nodes_with_warnings: usize,
    pub clean_nodes: usize,
}

impl Fleet {
    /// "7 with errors, 2 deviating, 3 with warnings, 38 clean": the headline's counts.
    pub fn counts_text(&self) -> String {
        format!(
            "{} with errors, {} deviating, {} with warnings, {} clean",
            self.nodes_with_errors,
            self.deviating_nodes,
            self.nodes_with_warnings,
            self.clean_nodes
        )
    }

    /// The worst finding on any node.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// Reports that could not be used: missing, unreadable, not a report, another schema.
    /// A duplicate is listed but not counted: its node is counted once, from its newest report.
    pub fn unusable_reports(&self) -> usize {
        let duplicates = self.duplicate_reports();
        self.problems_by_kind.values().sum::<usize>() - duplicates
    }

    /// Second reports of a machine already counted.
    pub fn duplicate_reports(&self) -> usize {
        self.problems_by_kind.get(DUPLICATE).copied().unwrap_or(0)
    }

    /// The fleet's verdict, which its exit code and every view's summary mark follow: an
    /// error when any node has one, when a report could not be used (a node whose state is
    /// unknown) or when there is no usable report at all (no evidence of health); else the
    /// worst finding.
    pub fn verdict(&self) -> Option<Severity> {
        if self.unusable_reports() > 0 || self.nodes.is_empty() {
            Some(Severity::Error)
        } else {
            self.worst()
        }
    }

    /// Names of the first nodes in a group, for one line of text.
    pub fn names_line(names: &[impl AsRef<str>]) -> String {
        let mut s = names
            .iter()
            .take(NAMES_SHOWN)
            .map(|n| n.as_ref())
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > NAMES_SHOWN {
            s.push_str(&format!(", … and {} more", names.len() - NAMES_SHOWN));
        }
        s
    }
}

/// What the fleet compares, from one report (finding counts left at zero: `aggregate`
/// counts them once `--only`/`--skip` have applied).
pub(super) fn facts(source: &str, s: &SnapshotIn, d: &crate::report::Derived) -> NodeFacts {
    let node = s.node.as_ref();
    let name: Arc<str> = node
        .map(|n| n.name.as_str())
        .filter(|n| !n.is_empty() && *n != "unknown")
        .map(Arc::from)
        .unwrap_or_else(|| {
            std::path::Path::new(source)
                .file_stem()
                .map(|f| f.to_string_lossy().into())
                .unwrap_or_else(|| source.into())
        });
    let nvml = s
        .nvml
        .as_ref()
        .and_then(|n| n.result.system.as_ref().or(n.result.partial.as_ref()));
    let driver_gpus = s.kernel_module.as_ref().and_then(|k| k.gpus.value.as_ref());
    // The most common model among the node's GPUs: NVML's names, else the driver's.
    let mut models: BTreeMap<&str, usize> = BTreeMap::new();
    for n in nvml
        .iter()
        .flat_map(|n| &n.devices)
        .filter_map(|g| g.name.get())
    {
        *models.entry(n).or_default() += 1;
    }
    if models.is_empty() {
        for m in driver_gpus
            .into_iter()
            .flatten()
            .filter_map(|g| g.model.as_ref())
        {
            *models.entry(m).or_default() += 1;
        }
    }
    // GPUs the driver counts but NVML could not name still count, so the models add up
    // to the node's GPU count.
    let counted = d.driver_gpu_count.as_ref().map_or(0, |c| c.count);
    let named: usize = models.values().sum();
    if named > 0 && named < counted {
        *models.entry(UNNAMED_GPU).or_default() += counted - named;
    }
    let gpu_model: Arc<str> = models
        .iter()
        .filter(|(m, _)| **m != UNNAMED_GPU)
        .max_by_key(|(_, n)| **n)
        .map(|(m, _)| Arc::from(*m))
        .unwrap_or_else(|| "no GPU".into());
    let models = Models::new(models.into_iter().map(|(m, n)| (m.into(), n)).collect());
    let pci: Vec<&str> = s
        .pci
        .as_ref()
        .and_then(|p| p.devices.value.as_ref())
        .into_iter()
        .flatten()
        .filter(|d| d.role == "gpu")
        .map(|d| d.device_id.as_str())
        .collect();
    let pci_id = mode(pci.iter().copied()).map(Arc::from);
    // The node's own report says what it derived; nothing is worked out again here.
    let gpus = d.driver_gpu_count.as_ref().map_or(0, |c| c.count);
    let driver = d.driver.as_ref().map(|d| d.version.as_str().into());
    let toolkit = d
        .toolkit_in_use
        .as_ref()
        .and_then(|t| t.cuda.as_deref())
        .map(Arc::from);
    let smoke = s.smoke.as_ref().and_then(|p| p.result.run.as_ref());
    let min = |xs: &mut dyn Iterator<Item = f64>| xs.filter(|x| x.is_finite()).reduce(f64::min);
    let matmuls: Vec<_> = smoke
        .into_iter()
        .flat_map(|run| &run.devices)
        .filter_map(|d| match &d.matmul {
            Some(StepIn::Ok(m)) => Some(m),
            _ => None,
        })
        .collect();
    let transfers: Vec<_> = smoke
        .into_iter()
        .flat_map(|run| &run.devices)
        .filter_map(|d| match &d.transfer {
            Some(StepIn::Ok(t)) => Some(t),
            _ => None,
        })
        .collect();
    let matmul_gflops = min(&mut matmuls.iter().map(|m| m.gflops));
    let pinned_gbps = min(&mut transfers
        .iter()
        .flat_map(|t| [t.pinned_h2d_gbps, t.pinned_d2h_gbps])
        .flatten());
    NodeFacts {
        name,
        source: source.to_string(),
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
        cuda: d.cuda_driver_version.as_deref().map(Arc::from),
        toolkit,
        torch: s.python.as_ref().and_then(|envs| {
            envs.iter()
                .find(|e| e.primary && e.torch.is_some())?
                .torch
                .as_ref()?
                .version
                .value
                .as_deref()
                .map(Arc::from)
        }),
        matmul_gflops,
        matmul_n: matmuls.first().map(|m| m.n),
        pinned_gbps,
        transfer_bytes: transfers.first().map(|t| t.bytes),
        errors: 0,
        warnings: 0,
        infos: 0,
        judged: s.expect.as_ref().map_or_else(Judged::default, |e| Judged {
            gpus: e.gpus.as_ref().map(|x| x.value),
            driver: e.driver.as_ref().map(|x| x.value.clone()),
            gpu_model: e.gpu_model.as_ref().map(|x| x.value.clone()),
        }),
        findings: Vec::new(),
    }
}

/// Node counts per value; `absent` names the nodes without one ("unknown", "none").
fn counts<'a>(values: impl Iterator<Item = Option<&'a str>>, absent: &'a str) -> Vec<Count> {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *m.entry(v.unwrap_or(absent)).or_default() += 1;
    }
    let mut out: Vec<Count> = m
        .into_iter()
        .map(|(value, nodes)| Count {
            value: value.to_string(),
            nodes,
        })
        .collect();
    out.sort_by(|a, b| b.nodes.cmp(&a.nodes).then(natural_cmp(&a.value, &b.value)));
    out
}

/// The value most nodes have; a tie goes to the higher version (upgrades lead).
fn mode<'a>(values: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *m.entry(v).or_default() += 1;
    }
    m.into_iter()
        .max_by(|(a, n), (b, k)| n.cmp(k).then(natural_cmp(a, b)))
        .map(|(v, _)| v)
}

/// The median of `sorted` (ascending, at least two values) with one copy of `v` left out:
/// a node is compared with its peers, not with itself.
fn median_without(sorted: &[f64], v: f64) -> f64 {
    let skip = sorted.partition_point(|x| x.total_cmp(&v).is_lt());
    let at = |k: usize| sorted[if k < skip { k } else { k + 1 }];
    let m = sorted.len() - 1;
    if m % 2 == 1 {
        at(m / 2)
    } else {
        (at(m / 2 - 1) + at(m / 2)) / 2.0
    }
}

/// Reports of the same node (same name, and the same machine id where both have one):
/// the newest counts, the others are listed as duplicates. Different machines that share a
/// name (images cloned with one hostname) are all counted, told apart by their machine
/// id; names that share a machine id (a cloned /etc/machine-id) are noted.
fn one_report_per_machine(
    per_report: &mut [NodeFacts],
    problems: &mut Problems,
) -> (Vec<bool>, Vec<IdentityNote>) {
    let mut keep = vec![true; per_report.len()];
    let mut notes = Vec::new();
    // Reports by name (then input order), without a map entry per node.
    let mut by_name: Vec<usize> = (0..per_report.len()).collect();
    by_name.sort_by(|&a, &b| per_report[a].name.cmp(&per_report[b].name).then(a.cmp(&b)));
    let mut runs = Vec::new();
    let mut start = 0;
    for run in by_name.chunk_by(|&a, &b| per_report[a].name == per_report[b].name) {
        runs.push(start..start + run.len());
        start += run.len();
    }
    for run in runs {
        let members = &by_name[run];
        let name = per_report[members[0]].name.clone();
        let ids: std::collections::BTreeSet<&str> = members
            .iter()
            .filter_map(|&i| per_report[i].machine_id.as_deref())
            .collect();
        let distinct = ids.len() > 1;
        // One machine per id; with a single id (or none), every report is that machine.
        let mut machines: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &i in members {
            let key = if distinct {
                per_report[i].machine_id.as_deref().unwrap_or("")
            } else {
                ""
            };
            machines.entry(key).or_default().push(i);
        }
        let mut renames = Vec::new();
        for (id, reports) in &machines {
            let winner = *reports
                .iter()
                .max_by(|&&a, &&b| per_report[a].time.cmp(&per_report[b].time).then(a.cmp(&b)))
                .expect("a machine has a report");
            for &i in reports.iter().filter(|&&i| i != winner) {
                keep[i] = false;
                let (w, n) = (&per_report[winner], &per_report[i]);
                let newer = if w.time == n.time {
                    "made at the same time and read later"
                } else {
                    "newer"
                };
                problems.push(Problem {
                    source: n.source.clone(),
                    kind: DUPLICATE.into(),
                    detail: format!(
                        "node {name} is also reported by {} ({}), which is {newer} and is the one counted",
                        w.source,
                        w.time.as_deref().unwrap_or("no time")
                    ),
                });
            }
            if distinct {
                let tag = if id.is_empty() {
                    "no machine id".to_string()
                } else {
                    id.chars().take(8).collect()
                };
                renames.push((winner, format!("{name} [{tag}]")));
            }
        }
        if distinct {
            let names: Vec<String> = renames.iter().map(|(_, n)| n.clone()).collect();
            for (i, new) in renames {
                per_report[i].name = new.into();
            }
            notes.push(IdentityNote {
                kind: "same_name".into(),
                detail: format!(
                    "{} machines report the name {name}; they are counted apart by machine id",
                    names.len()
                ),
                nodes: names,
            });
        }
    }
    let mut by_id: Vec<(&str, &str)> = per_report
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .filter_map(|(n, _)| Some((n.machine_id.as_deref()?, &*n.name)))
        .collect();
    by_id.sort_by(|a, b| a.0.cmp(b.0));
    for same in by_id.chunk_by(|a, b| a.0 == b.0).filter(|v| v.len() > 1) {
        let mut nodes: Vec<String> = same.iter().map(|(_, n)| n.to_string()).collect();
        nodes.sort_by(|a, b| natural_cmp(a, b));
        notes.push(IdentityNote {
            kind: "same_machine_id".into(),
            detail: format!(
                "{} report the same machine id: an image cloned with its /etc/machine-id, or one machine under several names",
                Fleet::names_line(&nodes)
            ),
            nodes,
        });
    }
    (keep, notes)
}

/// The fleet from its node reports (`nodes` in input order, with their findings after the
/// policy).
pub fn aggregate(mut per_report: Vec<NodeFacts>, mut problems: Problems) -> Fleet {
    for n in &mut per_report {
        let count = |sev: Severity| n.findings.iter().filter(|f| f.severity == sev).count();
        (n.errors, n.warnings, n.infos) = (
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info),
        );
    }
    let (keep, identity) = one_report_per_machine(&mut per_report, &mut problems);
    // A node whose driver sees no GPU still has them on the PCI bus: it belongs with the
    // nodes whose GPUs carry the same PCI device id.
    let mut model_of_pci: BTreeMap<Arc<str>, Arc<str>> = BTreeMap::new();
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
                format!("NVIDIA {} (no driver)", n.pci_id.as_deref().unwrap_or("?")).into()
            });
    }
    // Findings by code and severity (a code can be an error on one node and a warning on
    // another): every node, the most common title. A node's findings are visited together,
    // so "this node was already counted" is whether it was the last one counted.
    struct Acc<'a> {
        titles: BTreeMap<&'a str, usize>,
        nodes: Vec<Arc<str>>,
        last_node: Option<usize>,
        causes: Vec<String>,
        explained: usize,
        last_explained: Option<usize>,
        /// (node, its first fix command), the first node in natural order.
        fix: Option<(Arc<str>, &'a str)>,
        commands: std::collections::HashSet<&'a str>,
    }
    let mut by_code: BTreeMap<(&str, Severity), Acc> = BTreeMap::new();
    for (i, n) in per_report.iter().enumerate().filter(|(i, _)| keep[*i]) {
        for f in &n.findings {
            let acc = by_code
                .entry((f.code.as_str(), f.severity))
                .or_insert_with(|| Acc {
                    titles: BTreeMap::new(),
                    nodes: Vec::new(),
                    last_node: None,
                    causes: Vec::new(),
                    explained: 0,
                    last_explained: None,
                    fix: None,
                    commands: Default::default(),
                });
            if let Some(cmd) = f.fix.iter().find_map(|x| x.command.as_deref()) {
                acc.commands.insert(cmd);
                let first = match &acc.fix {
                    Some((node, _)) => natural_cmp(&n.name, node).is_lt(),
                    None => true,
                };
                if first {
                    acc.fix = Some((n.name.clone(), cmd));
                }
            }
            *acc.titles.entry(f.title.as_str()).or_default() += 1;
            if let Some(c) = &f.caused_by {
                if !acc.causes.contains(c) {
                    acc.causes.push(c.clone());
                }
                if acc.last_explained.replace(i) != Some(i) {
                    acc.explained += 1;
                }
            }
            if acc.last_node.replace(i) != Some(i) {
                acc.nodes.push(n.name.clone());
            }
        }
    }
    let mut findings: Vec<FindingGroup> = by_code
        .into_iter()
        .map(|((code, severity), mut acc)| {
            acc.nodes.sort_by(|a, b| natural_cmp(a, b));
            FindingGroup {
                code: code.to_string(),
                severity,
                title: acc
                    .titles
                    .iter()
                    .max_by_key(|(_, n)| **n)
                    .map(|(t, _)| t.to_string())
                    .unwrap_or_default(),
                nodes: acc.nodes.len(),
                node_names: acc.nodes,
                caused_by: acc.causes,
                explained_nodes: acc.explained,
                fix: acc.fix.map(|(node, command)| GroupFix {
                    command: command.to_string(),
                    node: node.to_string(),
                    same_on_every_node: acc.commands.len() == 1,
                }),
            }
        })
        .collect();
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(b.nodes.cmp(&a.nodes))
            .then(a.code.cmp(&b.code))
    });

    let mut kept = keep.iter();
    let mut nodes = per_report;
    nodes.retain(|_| kept.next().copied().unwrap_or(true));
    nodes.sort_by(|a, b| natural_cmp(&a.name, &b.name));

    // GPUs counted by their own model names; a node counts toward each model it has.
    let mut by_model: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for n in &nodes {
        for (m, c) in n.models.iter() {
            let e = by_model.entry(m.to_string()).or_default();
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
        drivers: counts(nodes.iter().map(|n| n.driver.as_deref()), "unknown"),
        cuda: counts(nodes.iter().map(|n| n.cuda.as_deref()), "unknown"),
        toolkits: counts(nodes.iter().map(|n| n.toolkit.as_deref()), "none"),
        torch: counts(nodes.iter().map(|n| n.torch.as_deref()), "none"),
        gpu_counts: counts(
            gpu_count_strings.iter().map(|c| Some(c.as_str())),
            "unknown",
        ),
        oldest_report: times.iter().min().map(|t| t.to_string()),
        newest_report: times.iter().max().map(|t| t.to_string()),
    };

    let mut outliers = Vec::new();
    let mut groups: BTreeMap<&str, Vec<&NodeFacts>> = BTreeMap::new();
    for n in &nodes {
        groups.entry(&n.gpu_model).or_default().push(n);
    }
    for (model, members) in &groups {
        if members.len() < 2 {
            continue;
        }
        type Get = fn(&NodeFacts) -> Option<Cow<'_, str>>;
        // The name a missing value goes by, as in the fleet's shape.
        let fields: [(&str, &str, Get); 5] = [
            ("driver", "unknown", |n| {
                n.driver.as_deref().map(Cow::Borrowed)
            }),
            ("cuda", "unknown", |n| n.cuda.as_deref().map(Cow::Borrowed)),
            ("toolkit", "none", |n| {
                n.toolkit.as_deref().map(Cow::Borrowed)
            }),
            ("torch", "none", |n| n.torch.as_deref().map(Cow::Borrowed)),
            ("gpu_count", "unknown", |n| Some(n.gpus.to_string().into())),
        ];
        for (what, absent, get) in fields {
            let values: Vec<(&NodeFacts, Option<Cow<str>>)> =
                members.iter().map(|n| (*n, get(n))).collect();
            let present = values.iter().filter(|(_, v)| v.is_some()).count();
            let Some(common) = mode(values.iter().filter_map(|(_, v)| v.as_deref())) else {
                continue;
            };
            // A node lacking what most of its peers have (a toolkit mount that failed, a
            // lost torch environment) differs as much as one with another version.
            let absent_differs = present * 2 > members.len();
            for (n, v) in &values {
                let value = match v {
                    Some(v) if *v != common => v.to_string(),
                    None if absent_differs => absent.to_string(),
                    _ => continue,
                };
                let value = if what == "gpu_count" && n.pci_gpus > n.gpus {
                    format!("{value} ({} on the PCI bus)", n.pci_gpus)
                } else {
                    value
                };
                outliers.push(Outlier {
                    node: n.name.to_string(),
                    what: what.into(),
                    value,
                    peers: common.to_string(),
                    group: model.to_string(),
                    peer_nodes: members.len() - 1,
                });
            }
        }
        // Figures are compared between nodes measured with the same setting (matrix size,
        // copy size), each against the median of the others.
        type Figure = fn(&NodeFacts) -> Option<(f64, u64)>;
        let figures: [(&str, &str, Figure); 2] = [
            ("matmul", "GFLOP/s", |n| {
                Some((n.matmul_gflops?, u64::from(n.matmul_n?)))
            }),
            ("bandwidth", "GB/s pinned", |n| {
                Some((n.pinned_gbps?, n.transfer_bytes?))
            }),
        ];
        for (what, unit, get) in figures {
            let mut by_setting: BTreeMap<u64, Vec<(&NodeFacts, f64)>> = BTreeMap::new();
            for n in members {
                if let Some((v, setting)) = get(n).filter(|(v, _)| v.is_finite()) {
                    by_setting.entry(setting).or_default().push((*n, v));
                }
            }
            for values in by_setting.values().filter(|v| v.len() >= 2) {
                let mut sorted: Vec<f64> = values.iter().map(|(_, v)| *v).collect();
                sorted.sort_by(f64::total_cmp);
                for (n, v) in values {
                    let mid = median_without(&sorted, *v);
                    if *v < mid * SLOW_SHARE {
                        outliers.push(Outlier {
                            node: n.name.to_string(),
                            what: what.into(),
                            value: format!("{v:.1} {unit}"),
                            peers: format!(
                                "median {mid:.1} {unit} of {} peer(s)",
                                values.len() - 1
                            ),
                            group: model.to_string(),
                            peer_nodes: values.len() - 1,
                        });
                    }
                }
            }
        }
    }
    outliers.sort_by(|a, b| natural_cmp(&a.node, &b.node).then(a.what.cmp(&b.what)));

    let (listed, problems_by_kind) = problems.into_parts();
    let problems_not_listed = problems_by_kind.values().sum::<usize>() - listed.len();
    let nodes_with_errors = nodes.iter().filter(|n| n.errors > 0).count();
    let outlying: std::collections::BTreeSet<&str> =
        outliers.iter().map(|o| o.node.as_str()).collect();
    let deviating_nodes = nodes
        .iter()
        .filter(|n| n.errors == 0 && outlying.contains(&*n.name))
        .count();
    let nodes_with_warnings = nodes
        .iter()
        .filter(|n| n.errors == 0 && n.warnings > 0 && !outlying.contains(&*n.name))
        .count();
    Fleet {
        schema_version: crate::report::SCHEMA_VERSION,
        gpudoctor_version: env!("CARGO_PKG_VERSION"),
        clean_nodes: nodes.len() - nodes_with_errors - deviating_nodes - nodes_with_warnings,
        nodes_with_errors,
        deviating_nodes,
        nodes_with_warnings,
        shape,
        outliers,
        findings,
        problems: listed,
        problems_not_listed,
        problems_by_kind,
        identity,
        nodes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_prefers_the_majority_then_the_newer_version() {
        let m = |v: &[&str]| mode(v.iter().copied()).map(str::to_string);
        assert_eq!(m(&["535.1", "550.2", "535.1"]).as_deref(), Some("535.1"));
        assert_eq!(m(&["535.1", "550.2"]).as_deref(), Some("550.2"));
        assert_eq!(m(&["580.9", "580.10"]).as_deref(), Some("580.10"));
        assert_eq!(m(&[]), None);
    }

    #[test]
    fn the_median_leaves_the_node_out() {
        let s = [10.0, 20.0, 30.0, 40.0];
        assert_eq!(median_without(&s, 10.0), 30.0);
        assert_eq!(median_without(&s, 40.0), 20.0);
        assert_eq!(median_without(&s, 20.0), 30.0);
        assert_eq!(median_without(&[5.0, 9.0], 5.0), 9.0);
        assert_eq!(median_without(&[7.0, 7.0, 7.0], 7.0), 7.0);
        assert_eq!(median_without(&[1.0, 2.0, 3.0, 4.0, 5.0], 3.0), 3.0);
    }
}
