//! `gpudoctor devices`: the GPUs as NVML sees them — a compact table, or everything about
//! one or all GPUs (`devices N`, `--detail`) — with what each can do and the findings about
//! them. JSON carries the same facts.

use std::fmt::Write as _;

use serde::Serialize;

use super::width::{display_width, pad, wrap};
use super::{form, printable, Style};
use crate::compat::capabilities::{capabilities_for, Support};
use crate::compat::ComputeCapability;
use crate::facts::nvml::{Field, Gpu, NvmlProbe, NvmlResult, TopologyPair};
use crate::findings::{Finding, Summary};
use crate::report::SCHEMA_VERSION;
use crate::rules::Check;
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::verdict::{Verdict, Verdicts};

#[derive(Serialize)]
pub struct DevicesView<'a> {
    pub schema_version: u32,
    pub gpudoctor_version: &'static str,
    pub nvml: Option<&'a NvmlProbe>,
    /// CUDA's numbering: FASTEST_FIRST (default) or PCI_BUS_ID (CUDA_DEVICE_ORDER).
    pub cuda_device_order: &'a str,
    pub gpus: Vec<GpuView<'a>>,
    pub topology: &'a [TopologyPair],
    /// The topology probe: GPUs' PCI paths, bridges with ACS, IOMMU, RDMA NICs.
    pub pci_topology: Option<&'a crate::facts::topology::Topology>,
    /// Every GPU pair's link class (NV#, PIX, PXB, PHB, NODE, SYS), which facts decided
    /// it, the bridges between them and their ACS, with the findings' verdict on the pair.
    pub gpu_pairs: Vec<PairView>,
    /// How each GPU reaches each RDMA NIC.
    pub nic_links: Vec<crate::topology::NicLink>,
    pub findings: &'a [Finding],
    pub summary: Summary,
}

#[derive(Serialize)]
pub struct GpuView<'a> {
    /// CUDA's index for this GPU (None when CUDA_VISIBLE_DEVICES would hide it is not
    /// judged here; the order alone).
    pub cuda_index: usize,
    /// The findings' verdict on this GPU, as `check` marks its line.
    pub verdict: Verdict,
    #[serde(flatten)]
    pub gpu: &'a Gpu,
    pub capabilities: Vec<CapabilityView>,
}

#[derive(Serialize)]
pub struct PairView {
    #[serde(flatten)]
    pub pair: crate::topology::GpuPair,
    /// The findings' verdict on this pair (GD072, GD073).
    pub verdict: Verdict,
}

#[derive(Serialize)]
pub struct CapabilityView {
    pub key: &'static str,
    pub title: &'static str,
    pub support: Support,
}

/// CUDA's default order puts the fastest GPU first (an unspecified heuristic; compute
/// capability is its main input); PCI_BUS_ID keeps NVML's order.
pub fn cuda_order(gpus: &[Gpu], pci_bus_order: bool) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..gpus.len()).collect();
    if !pci_bus_order {
        idx.sort_by_key(|&i| {
            let cc = gpus[i]
                .compute_capability
                .get()
                .and_then(|c| ComputeCapability::parse(c));
            (std::cmp::Reverse(cc), i)
        });
    }
    // cuda_index for NVML position i is the position of i in the sorted list.
    let mut out = vec![0; gpus.len()];
    for (cuda, nvml) in idx.into_iter().enumerate() {
        out[nvml] = cuda;
    }
    out
}

pub fn view<'a>(
    snap: &'a Snapshot,
    findings: &'a [Finding],
    checks: &[Check],
    only: Option<u32>,
) -> DevicesView<'a> {
    let verdicts = Verdicts::new(findings, checks);
    let order = snap
        .env_value("CUDA_DEVICE_ORDER")
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .unwrap_or("FASTEST_FIRST");
    let sys = snap.nvml_system();
    let devices: &[Gpu] = sys.map(|s| s.devices.as_slice()).unwrap_or(&[]);
    let cuda = cuda_order(devices, order.eq_ignore_ascii_case("PCI_BUS_ID"));
    let gpus = devices
        .iter()
        .zip(cuda)
        .filter(|(g, _)| only.is_none_or(|o| g.index == o))
        .map(|(g, cuda_index)| GpuView {
            cuda_index,
            verdict: verdicts.of(&Subject::Gpu(g.index)),
            gpu: g,
            capabilities: g
                .compute_capability
                .get()
                .and_then(|c| ComputeCapability::parse(c))
                .map(|cc| {
                    capabilities_for(cc)
                        .into_iter()
                        .map(|(c, support)| CapabilityView {
                            key: c.key,
                            title: c.title,
                            support,
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    DevicesView {
        schema_version: SCHEMA_VERSION,
        gpudoctor_version: env!("CARGO_PKG_VERSION"),
        nvml: snap.nvml.as_ref(),
        cuda_device_order: order,
        gpus,
        topology: sys.map(|s| s.topology.as_slice()).unwrap_or(&[]),
        pci_topology: snap.topology.as_ref(),
        gpu_pairs: snap
            .gpu_pairs()
            .into_iter()
            .map(|pair| PairView {
                verdict: verdicts.of(&Subject::gpu_pair(&pair.a.address, &pair.b.address)),
                pair,
            })
            .collect(),
        nic_links: snap.nic_links(),
        findings,
        summary: Summary::of(findings),
    }
}

pub fn render_json(v: &DevicesView) -> String {
    super::json::pretty(v, "devices view")
}

fn gib(b: u64) -> String {
    format!("{:.1}", b as f64 / (1u64 << 30) as f64)
}

fn f<T: std::fmt::Display>(field: &Field<T>) -> String {
    match field.get() {
        Some(v) => v.to_string(),
        None => field.why_missing().to_string(),
    }
}

fn onoff(field: &Field<bool>) -> String {
    match field.get() {
        Some(true) => "on".into(),
        Some(false) => "off".into(),
        None => field.why_missing().to_string(),
    }
}

fn nvml_status(n: Option<&NvmlProbe>) -> Result<String, String> {
    let Some(n) = n else {
        return Err("the nvml probe did not run".into());
    };
    match &n.result {
        NvmlResult::Ok { system } => Ok(format!(
            "NVML {} · driver {} · CUDA {} · {} GPU(s)",
            f(&system.nvml_version),
            f(&system.driver_version),
            f(&system.cuda_driver_version),
            f(&system.device_count)
        )),
        NvmlResult::NotProbed { reason } => Err(format!("NVML not probed: {reason}")),
        NvmlResult::InitFailed { code, message } => {
            Err(format!("NVML ({}) failed: {code}: {message}", n.library))
        }
        NvmlResult::TimedOut {
            seconds, stuck_at, ..
        } => Err(format!(
            "NVML ({}) did not answer within {seconds:.1} s{}: a GPU or the driver is hung",
            n.library,
            stuck_at
                .as_deref()
                .map(|a| format!(" (hung at {a})"))
                .unwrap_or_default()
        )),
        NvmlResult::Crashed { signal, .. } => {
            Err(format!("NVML ({}) crashed with signal {signal}", n.library))
        }
        NvmlResult::WorkerFailed { detail } => Err(format!("NVML could not be queried: {detail}")),
    }
}

/// How `devices` prints for a person.
pub struct Options {
    pub style: Style,
    /// Everything about each GPU (`devices N`, `--detail`) instead of the table.
    pub detail: bool,
    /// The terminal's width (`render::width::terminal_width`).
    pub width: usize,
    /// Every column of the table, however wide; otherwise columns are shortened, then
    /// left out, until the table fits the width.
    pub wide: bool,
    /// The GPU×GPU link matrix (`--topo`) instead of the table.
    pub topo: bool,
}

/// `gpudoctor devices` for a terminal (ASCII where it needs it).
pub fn render_human(v: &DevicesView, opts: &Options) -> String {
    opts.style.finish(human_text(v, opts))
}

fn human_text(v: &DevicesView, opts: &Options) -> String {
    let st = &opts.style;
    let w = opts.width;
    let mut out = String::new();
    if opts.topo {
        if let Err(why) = nvml_status(v.nvml) {
            let text = format!(
                "NVLinks are not seen without NVML ({why}); the PCIe classes come from sysfs."
            );
            out.push_str(&wrap(&st.dim(&printable(&text)), w, "", "  "));
            out.push_str("\n\n");
        }
        out.push_str(&topo_matrix(v, st, w));
        out.push_str(&findings_block(v.findings, st, true, w));
        return out;
    }
    match nvml_status(v.nvml) {
        Ok(line) => out.push_str(&format!(
            "{}\n{}",
            wrap(&st.bold(&line), w, "", "  "),
            if opts.detail { "" } else { "\n" }
        )),
        Err(why) => {
            out.push_str(&format!(
                "{}\n",
                wrap(&st.red(&printable(&why)), w, "", "  ")
            ));
            if v.gpus.is_empty() {
                out.push_str(&wrap("No GPU details without NVML; `gpudoctor check` shows what the kernel, PCI bus and device nodes say.", w, "", ""));
                out.push('\n');
            } else {
                out.push_str("What NVML answered before it stopped:\n\n");
            }
        }
    }
    let order_differs = v.gpus.iter().any(|g| g.cuda_index != g.gpu.index as usize);
    if !v.gpus.is_empty() && !opts.detail {
        out.push_str(&table(v, order_differs, opts));
    }
    if opts.detail {
        for g in &v.gpus {
            out.push_str(&detail_block(g, v.topology, st, w));
        }
    }
    if order_differs {
        let text = format!(
            "CUDA numbers these GPUs differently ({}): the CUDA column is how CUDA_VISIBLE_DEVICES indices (and, with it unset, torch.cuda.device(N)) count them; set CUDA_DEVICE_ORDER=PCI_BUS_ID to make them match nvidia-smi.",
            v.cuda_device_order
        );
        out.push_str(&format!("\n{}\n", wrap(&text, w, "", "")));
    }
    let looked = v.nvml.is_some_and(|n| n.system().is_some());
    out.push_str(&findings_block(v.findings, st, looked, w));
    out
}

/// One matrix row or column: a GPU by its NVML index (else its place in address order).
struct TopoDevice {
    label: String,
    address: String,
}

/// The GPUs of the pair list and the topology probe, NVML's order where it answered.
fn topo_devices(v: &DevicesView) -> Vec<TopoDevice> {
    let mut by_addr: std::collections::BTreeMap<String, Option<u32>> = Default::default();
    for p in &v.gpu_pairs {
        for g in [&p.pair.a, &p.pair.b] {
            by_addr.insert(g.address.clone(), g.nvml_index);
        }
    }
    if let Some(gpus) = v.pci_topology.and_then(|t| t.gpus.get()) {
        for g in gpus {
            by_addr.entry(g.address.clone()).or_insert(None);
        }
    }
    let mut list: Vec<(String, Option<u32>)> = by_addr.into_iter().collect();
    list.sort_by_key(|(a, i)| (i.is_none(), *i, a.clone()));
    list.into_iter()
        .enumerate()
        .map(|(n, (address, i))| TopoDevice {
            label: format!("GPU{}", i.map_or(n as u32, |i| i)),
            address,
        })
        .collect()
}

/// `devices --topo`: the link class of every GPU pair (`nvidia-smi topo -m`'s cells and
/// legend), each cell marked with the findings' verdict on that pair, then the GPUs' CPU
/// and NUMA affinity, the GPU↔NIC classes and the IOMMU mode.
fn topo_matrix(v: &DevicesView, st: &Style, width: usize) -> String {
    let devices = topo_devices(v);
    let mut out = String::new();
    if devices.is_empty() {
        out.push_str(&wrap(
            "No NVIDIA GPU on the PCI bus: no topology to show.",
            width,
            "",
            "",
        ));
        out.push('\n');
        return out;
    }
    let pair = |a: &str, b: &str| {
        v.gpu_pairs.iter().find(|p| {
            (p.pair.a.address == a && p.pair.b.address == b)
                || (p.pair.a.address == b && p.pair.b.address == a)
        })
    };
    let gpu = |a: &str| {
        v.pci_topology
            .and_then(|t| t.gpus.get())
            .and_then(|g| g.iter().find(|g| g.address == a))
    };
    let cell = |a: &TopoDevice, b: &TopoDevice| -> (String, usize) {
        if a.address == b.address {
            return ("X".into(), 1);
        }
        let Some(p) = pair(&a.address, &b.address) else {
            return (st.dim("?"), 1);
        };
        let label = p.pair.link.map_or_else(|| "?".to_string(), |l| l.label());
        match p.verdict {
            Verdict::Warning | Verdict::Error | Verdict::Info => {
                let w = display_width(&label) + 1;
                (format!("{label}{}", form::mark(p.verdict, st)), w)
            }
            _ => {
                let w = display_width(&label);
                (label, w)
            }
        }
    };
    let name_w = devices.iter().map(|d| d.label.len()).max().unwrap_or(4);
    let col_w = 5;
    let mut head = pad("", name_w);
    for d in &devices {
        head.push(' ');
        head.push_str(&pad(&d.label, col_w));
    }
    head.push_str(" NUMA CPU affinity");
    out.push_str(&st.bold(head.trim_end()));
    out.push('\n');
    let used = name_w + devices.len() * (col_w + 1) + 6;
    for a in &devices {
        let mut line = pad(&a.label, name_w);
        for b in &devices {
            let (c, w) = cell(a, b);
            line.push(' ');
            line.push_str(&c);
            line.push_str(&" ".repeat(col_w.saturating_sub(w)));
        }
        let g = gpu(&a.address);
        let numa = g
            .and_then(|g| g.numa_node.get())
            .map_or("?".to_string(), |n| {
                if *n < 0 {
                    "N/A".into()
                } else {
                    n.to_string()
                }
            });
        let mut cpus = g
            .and_then(|g| g.local_cpulist.get())
            .cloned()
            .unwrap_or_else(|| "?".into());
        let room = width.saturating_sub(used).max(4);
        if display_width(&cpus) > room {
            cpus = format!("{}…", cpus.chars().take(room - 1).collect::<String>());
        }
        line.push_str(&format!(" {} {cpus}", pad(&numa, 4)));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    // GPU↔NIC classes: a second block, so the GPU matrix keeps its width.
    let mut nics: Vec<&str> = v.nic_links.iter().map(|l| l.nic.as_str()).collect();
    nics.dedup();
    if !nics.is_empty() {
        out.push('\n');
        let nic_w = nics.iter().map(|n| n.len()).max().unwrap_or(4).max(4);
        let mut head = pad("", name_w);
        for n in &nics {
            head.push(' ');
            head.push_str(&pad(n, nic_w));
        }
        out.push_str(&st.bold(head.trim_end()));
        out.push('\n');
        for a in &devices {
            let mut line = pad(&a.label, name_w);
            for n in &nics {
                let l = v
                    .nic_links
                    .iter()
                    .find(|l| l.gpu == a.address && l.nic == *n)
                    .and_then(|l| l.link)
                    .map_or("?".to_string(), |l| l.label());
                line.push(' ');
                line.push_str(&pad(&l, nic_w));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if let Some(list) = v.pci_topology.and_then(|t| t.nics.get()) {
            for n in list {
                let kind = if n.link_layers.iter().any(|l| l == "InfiniBand") {
                    "InfiniBand"
                } else if n.link_layers.iter().any(|l| l == "Ethernet") {
                    "RoCE"
                } else {
                    "RDMA"
                };
                let text = format!(
                    "{}: {kind} at {}{}",
                    n.name,
                    n.address.as_deref().unwrap_or("?"),
                    if n.netdevs.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", n.netdevs.join(", "))
                    }
                );
                out.push_str(&wrap(&text, width, "  ", "    "));
                out.push('\n');
            }
        }
    }
    out.push('\n');
    // Each GPU's address whole on one line: entries are packed, never split.
    let mut line = String::new();
    for d in &devices {
        let entry = format!("{} {}", d.label, d.address);
        if !line.is_empty() && display_width(&line) + 2 + display_width(&entry) > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(&entry);
    }
    out.push_str(&line);
    out.push('\n');
    if let Some(t) = v.pci_topology {
        out.push_str(&wrap(
            &format!("IOMMU: {} ({})", t.iommu.mode.as_str(), t.iommu.mode_source),
            width,
            "",
            "  ",
        ));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&st.bold("Legend:"));
    out.push('\n');
    // "?" and "N/A" are explained only where a cell or column shows them.
    let shown: std::collections::HashSet<String> = super::width::strip_ansi(&out)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    for (k, text) in TOPO_LEGEND {
        if matches!(k, "?" | "N/A") && !shown.contains(k) {
            continue;
        }
        out.push_str(&wrap(&format!("{k:<5} {text}"), width, "  ", "        "));
        out.push('\n');
    }
    let sources: Vec<&str> = {
        let mut s: Vec<&str> = v
            .gpu_pairs
            .iter()
            .filter_map(|p| p.pair.source.map(|s| s.describe()))
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    if !sources.is_empty() {
        out.push_str(&wrap(
            &format!(
                "Decided by: {}. A mark after a cell is a finding about that pair (below).",
                sources.join("; ")
            ),
            width,
            "",
            "",
        ));
        out.push('\n');
    }
    out
}

/// `nvidia-smi topo -m`'s legend, in its own words where they fit.
pub const TOPO_LEGEND: [(&str, &str); 9] = [
    ("X", "the GPU itself"),
    (
        "SYS",
        "through PCIe and the SMP interconnect between NUMA nodes (QPI/UPI, Infinity Fabric)",
    ),
    (
        "NODE",
        "through PCIe and the interconnect between PCIe host bridges within a NUMA node",
    ),
    (
        "PHB",
        "through PCIe and a PCIe host bridge (typically the CPU)",
    ),
    (
        "PXB",
        "through several PCIe bridges, without a PCIe host bridge",
    ),
    ("PIX", "through at most one PCIe bridge (one switch)"),
    ("NV#", "through a bonded set of # NVLinks"),
    (
        "?",
        "not known: neither NVML nor sysfs said (a link, a NUMA node, the CPUs)",
    ),
    (
        "N/A",
        "no NUMA node: the kernel gives the device none (one NUMA node, or the firmware names none)",
    ),
];

/// The table as Markdown: real rows under the header.
pub fn render_markdown(v: &DevicesView) -> String {
    let mut out = String::from("## gpudoctor devices\n\n");
    match nvml_status(v.nvml) {
        Ok(line) => out.push_str(&format!("**{}**\n\n", super::markdown::cell(&line))),
        Err(why) => out.push_str(&format!("**{}**\n\n", super::markdown::cell(&why))),
    }
    let order_differs = v.gpus.iter().any(|g| g.cuda_index != g.gpu.index as usize);
    let rows = table_rows(v, order_differs);
    if let Some((head, body)) = rows.split_first() {
        out.push_str(&format!("| {} |\n", head.join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
        for r in body {
            let mut cells: Vec<String> = r.iter().map(|c| super::markdown::cell(c)).collect();
            cells.resize(head.len(), String::new());
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out.push('\n');
    }
    out.push_str(&super::markdown::findings_section(v.findings));
    out
}

/// The table for a terminal: every column when it fits (or `wide`); otherwise the short
/// forms (name without "NVIDIA ", memory as its total), then the least telling columns left
/// out, until it fits the width.
fn table(v: &DevicesView, order_differs: bool, opts: &Options) -> String {
    // Cells as the terminal will show them (ASCII where needed), so columns line up.
    let full: Vec<Vec<String>> = escaped(table_rows(v, order_differs))
        .into_iter()
        .map(|r| r.iter().map(|c| opts.style.text(c).into_owned()).collect())
        .collect();
    if opts.wide || table_width(&full) <= opts.width {
        return layout(&full, opts.width);
    }
    let mut rows = short_forms(full, v);
    let mut left_out = Vec::new();
    for name in DROPPED_FIRST {
        if table_width(&rows) <= opts.width {
            break;
        }
        if let Some(c) = rows[0].iter().position(|h| h == name) {
            // A spanning row (an unreachable GPU) has no cell in these columns.
            let cols = rows[0].len();
            for r in rows.iter_mut().filter(|r| r.len() == cols) {
                r.remove(c);
            }
            left_out.push(*name);
        }
    }
    let mut out = layout(&rows, opts.width);
    if !left_out.is_empty() {
        let note = format!(
            "Left out at this width: {} (--wide shows every column).",
            left_out.join(", ")
        );
        out.push_str(&wrap(&opts.style.dim(&note), opts.width, "", ""));
        out.push('\n');
    }
    out
}

/// The table's header and one row per GPU: the verdict's mark first, as `check` marks it.
fn table_rows(v: &DevicesView, order_differs: bool) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = vec![vec![
        String::new(),
        "GPU".into(),
        "CUDA".into(),
        "Name".into(),
        "Bus".into(),
        "CC".into(),
        "Memory used/total GiB".into(),
        "Temp".into(),
        "Power W".into(),
        "PCIe".into(),
        "ECC".into(),
        "Mode".into(),
    ]];
    for gv in &v.gpus {
        let g = gv.gpu;
        if let Some(e) = &g.handle_error {
            rows.push(vec![
                form::symbol(gv.verdict).into(),
                g.index.to_string(),
                gv.cuda_index.to_string(),
                format!("unreachable: {e}"),
            ]);
            continue;
        }
        let mem = g
            .memory
            .get()
            .map(|m| format!("{}/{}", gib(m.used), gib(m.total)))
            .unwrap_or_else(|| g.memory.why_missing().into());
        let power = match (g.power_usage_mw.get(), g.power_limit_mw.get()) {
            (Some(u), Some(l)) => format!("{}/{}", u / 1000, l / 1000),
            _ => "n/a".into(),
        };
        let pcie = form::pcie_link(g).unwrap_or_else(|| "n/a".into());
        let ecc = match (g.ecc.enabled.get(), g.ecc.volatile_uncorrected.get()) {
            (Some(true), Some(0)) => "on".into(),
            (Some(true), Some(n)) => format!("on, {n} uncorr."),
            (Some(true), None) => "on".into(),
            (Some(false), _) => "off".into(),
            (None, _) => "n/a".into(),
        };
        let mut mode = vec![g
            .compute_mode
            .get()
            .cloned()
            .unwrap_or_else(|| "n/a".into())];
        if g.mig.enabled.get() == Some(&true) {
            mode.push(format!("MIG×{}", g.mig.instances.len()));
        }
        if g.persistence_mode.get() == Some(&true) {
            mode.push("persistent".into());
        }
        rows.push(vec![
            form::symbol(gv.verdict).into(),
            g.index.to_string(),
            gv.cuda_index.to_string(),
            f(&g.name),
            g.pci_bus_id.get().map_or_else(
                || g.pci_bus_id.why_missing().to_string(),
                |b| form::bus_id(b),
            ),
            f(&g.compute_capability),
            mem,
            g.temperature_c
                .get()
                .map(|t| format!("{t}°C"))
                .unwrap_or_else(|| "n/a".into()),
            power,
            pcie,
            ecc,
            mode.join(", "),
        ]);
    }
    if !order_differs {
        for r in &mut rows {
            if r.len() > 2 {
                r.remove(2);
            }
        }
    }
    rows
}

/// The columns left out first when the table is too wide (least telling first); the mark,
/// index, name, compute capability and memory always stay.
const DROPPED_FIRST: &[&str] = &["Mode", "ECC", "Power W", "Temp", "PCIe", "Bus"];

/// Every cell escaped, so the widths are those of what is printed.
fn escaped(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|r| r.iter().map(|c| printable(c).into_owned()).collect())
        .collect()
}

/// The short forms: the name without "NVIDIA ", the memory as its total ("80 GiB").
fn short_forms(mut rows: Vec<Vec<String>>, v: &DevicesView) -> Vec<Vec<String>> {
    let head = rows[0].clone();
    let col = |name: &str| head.iter().position(|h| h == name);
    let (name, memory) = (col("Name"), col("Memory used/total GiB"));
    if let Some(m) = memory {
        rows[0][m] = "Memory".into();
    }
    for (r, gv) in rows.iter_mut().skip(1).zip(&v.gpus) {
        if r.len() != head.len() {
            continue;
        }
        if let Some(n) = name {
            if let Some(short) = r[n].strip_prefix("NVIDIA ") {
                r[n] = short.to_string();
            }
        }
        if let (Some(m), Some(mem)) = (memory, gv.gpu.memory.get()) {
            r[m] = format!("{:.0} GiB", mem.total as f64 / (1u64 << 30) as f64);
        }
    }
    rows
}

/// Each column's width: its widest cell among the full rows.
fn column_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let cols = rows.first().map_or(0, Vec::len);
    (0..cols)
        .map(|c| {
            rows.iter()
                .filter(|r| r.len() == cols)
                .map(|r| display_width(&r[c]))
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// The printed width of the table's widest row (a spanning row's text can wrap).
fn table_width(rows: &[Vec<String>]) -> usize {
    let widths = column_widths(rows);
    widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

/// Columns padded to their widest cell; a row with fewer cells (an unreachable GPU) ends
/// in one cell that spans the rest, wrapped under itself.
fn layout(rows: &[Vec<String>], width: usize) -> String {
    let widths = column_widths(rows);
    let cols = widths.len();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, cell) in r.iter().enumerate() {
            if i + 1 < r.len() {
                line.push_str(&pad(cell, widths[i]));
                line.push_str("  ");
            } else if r.len() == cols {
                line.push_str(cell);
            } else {
                let indent = " ".repeat(display_width(&line));
                line = wrap(cell, width, &line, &indent);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One line of the detail block: the key in a column of 16, the value wrapped under itself.
fn detail_line(key: &str, value: &str, width: usize) -> String {
    let prefix = format!("  {} ", pad(key, 15));
    let indent = " ".repeat(display_width(&prefix));
    format!("{}\n", wrap(&printable(value), width, &prefix, &indent))
}

fn detail_block(gv: &GpuView, topology: &[TopologyPair], st: &Style, width: usize) -> String {
    let g = gv.gpu;
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, v: String| lines.push((k.to_string(), v));
    add(
        "index",
        format!("NVML {} · CUDA {}", g.index, gv.cuda_index),
    );
    // An unreachable GPU has no other facts: one line says why.
    if let Some(e) = &g.handle_error {
        add("state", format!("unreachable: {e}"));
        let mut out = format!(
            "\n{}\n",
            wrap(
                &st.bold(&printable(&g.label())),
                width,
                &format!("{} ", form::mark(gv.verdict, st)),
                "  "
            )
        );
        for (k, v) in lines {
            out.push_str(&detail_line(&k, &v, width));
        }
        return out;
    }
    add("uuid", f(&g.uuid));
    add("serial", f(&g.serial));
    add(
        "pci",
        format!(
            "{} (device id {})",
            g.pci_bus_id.get().map_or_else(
                || g.pci_bus_id.why_missing().to_string(),
                |b| form::bus_id(b)
            ),
            f(&g.pci_device_id)
        ),
    );
    add(
        "architecture",
        format!(
            "{} · compute capability {}",
            f(&g.architecture),
            f(&g.compute_capability)
        ),
    );
    add(
        "memory",
        match g.memory.get() {
            Some(m) => format!(
                "{} GiB total · {} used · {} free · {} reserved",
                gib(m.total),
                gib(m.used),
                gib(m.free),
                gib(m.reserved)
            ),
            None => g.memory.why_missing().into(),
        },
    );
    add(
        "bar1",
        match g.bar1.get() {
            Some(b) => format!("{} GiB total · {} used", gib(b.total), gib(b.used)),
            None => g.bar1.why_missing().into(),
        },
    );
    add(
        "pcie",
        form::pcie_link(g).unwrap_or_else(|| g.pcie.generation.why_missing().to_string()),
    );
    add(
        "temperature",
        format!(
            "{} °C (slowdown {} °C, shutdown {} °C)",
            f(&g.temperature_c),
            f(&g.temperature_slowdown_c),
            f(&g.temperature_shutdown_c)
        ),
    );
    add(
        "power",
        match (g.power_usage_mw.get(), g.power_limit_mw.get()) {
            (Some(u), Some(l)) => {
                format!("{:.0} W of {:.0} W", *u as f64 / 1000.0, *l as f64 / 1000.0)
            }
            _ => format!(
                "{} / {}",
                g.power_usage_mw.why_missing(),
                g.power_limit_mw.why_missing()
            ),
        },
    );
    add(
        "clocks",
        format!(
            "SM {} MHz (max {}) · memory {} MHz (max {})",
            f(&g.clocks.sm_mhz),
            f(&g.clocks.max_sm_mhz),
            f(&g.clocks.memory_mhz),
            f(&g.clocks.max_memory_mhz)
        ),
    );
    add(
        "throttle",
        match g.throttle.get() {
            Some(t) if t.reasons.is_empty() => "none".into(),
            Some(t) => t.reasons.join(", "),
            None => g.throttle.why_missing().into(),
        },
    );
    add("ecc", format!(
        "{} (pending {}) · volatile corrected {} uncorrected {} · aggregate corrected {} uncorrected {}",
        onoff(&g.ecc.enabled), onoff(&g.ecc.pending), f(&g.ecc.volatile_corrected), f(&g.ecc.volatile_uncorrected), f(&g.ecc.aggregate_corrected), f(&g.ecc.aggregate_uncorrected)
    ));
    add(
        "retired pages",
        match g.retired_pages.get() {
            Some(r) => format!(
                "{} single-bit · {} double-bit · pending {}",
                r.single_bit,
                r.double_bit,
                f(&g.retired_pages_pending)
            ),
            None => g.retired_pages.why_missing().into(),
        },
    );
    add(
        "remapped rows",
        match g.remapped_rows.get() {
            Some(r) => format!(
                "{} correctable · {} uncorrectable · pending {} · failure {}",
                r.correctable, r.uncorrectable, r.pending, r.failure
            ),
            None => g.remapped_rows.why_missing().into(),
        },
    );
    add("persistence", onoff(&g.persistence_mode));
    add("compute mode", f(&g.compute_mode));
    add(
        "mig",
        format!(
            "{} (pending {})",
            onoff(&g.mig.enabled),
            onoff(&g.mig.pending)
        ),
    );
    for m in &g.mig.instances {
        add(
            &format!("  instance {}", m.index),
            format!(
                "{} ({} GiB)",
                f(&m.uuid),
                m.memory_total
                    .get()
                    .map(|b| gib(*b))
                    .unwrap_or_else(|| "?".into())
            ),
        );
    }
    add(
        "processes",
        match g.processes.get() {
            Some(p) if p.is_empty() => "none".into(),
            Some(p) => p
                .iter()
                .map(|p| {
                    format!(
                        "{} {} ({}){}",
                        p.kind,
                        p.pid,
                        p.name.as_deref().unwrap_or("?"),
                        p.used_memory
                            .map(|m| format!(" {} GiB", gib(m)))
                            .unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            None => g.processes.why_missing().into(),
        },
    );
    add(
        "nvlink",
        match g.nvlinks.get() {
            Some(l) if l.is_empty() => "no links".into(),
            Some(l) => format!(
                "{} of {} links active",
                l.iter().filter(|u| **u).count(),
                l.len()
            ),
            None => g.nvlinks.why_missing().into(),
        },
    );
    add(
        "fabric",
        match g.fabric.get() {
            Some(fb) => format!("{} ({})", fb.state, fb.status),
            None => g.fabric.why_missing().into(),
        },
    );
    add("recovery action", f(&g.recovery_action));
    let peers: Vec<String> = topology
        .iter()
        .filter(|t| t.a == g.index || t.b == g.index)
        .map(|t| {
            let other = if t.a == g.index { t.b } else { t.a };
            format!(
                "GPU {other}: {} (P2P read {})",
                f(&t.common_ancestor),
                f(&t.p2p_read)
            )
        })
        .collect();
    if !peers.is_empty() {
        add("topology", peers.join("; "));
    }
    let can: Vec<&str> = gv
        .capabilities
        .iter()
        .filter(|c| c.support == Support::Yes)
        .map(|c| c.title)
        .collect();
    let cannot: Vec<&str> = gv
        .capabilities
        .iter()
        .filter(|c| c.support != Support::Yes)
        .map(|c| c.title)
        .collect();
    if !gv.capabilities.is_empty() {
        add("can", can.join(", "));
        add("cannot", cannot.join(", "));
    }
    let mut out = format!(
        "\n{}\n",
        wrap(
            &st.bold(&printable(&g.label())),
            width,
            &format!("{} ", form::mark(gv.verdict, st)),
            "  "
        )
    );
    for (k, v) in lines {
        out.push_str(&detail_line(&k, &v, width));
    }
    out
}

/// Under a focused view's findings: where the rest of each finding is.
pub(crate) const FOCUSED_FOOTER: &str =
    "`gpudoctor check -v` shows each finding's reasons and every fix; `gpudoctor explain CODE` explains it.";

/// The findings, worst first, each as `check` shows it. `looked` says whether the view saw
/// what it exists to show: with no finding it says "no problems" only then.
pub(crate) fn findings_block(
    findings: &[Finding],
    st: &Style,
    looked: bool,
    width: usize,
) -> String {
    let mut out = String::from("\n");
    if findings.is_empty() {
        let text = if looked {
            st.green("No GPU problems found.")
        } else {
            st.yellow("No GPU was examined, so nothing is known to be right or wrong.")
        };
        out.push_str(&format!("{}\n", wrap(&text, width, "", "")));
        return out;
    }
    // Each finding's block starts with its blank line.
    let mut out = super::human::findings_blocks(findings, st, width);
    out.push_str(&format!(
        "\n{}\n",
        wrap(&st.dim(FOCUSED_FOOTER), width, "", "")
    ));
    out
}

/// `gpudoctor devices --format html`: the GPU table, the topology matrix and the findings.
pub fn render_html(v: &DevicesView) -> String {
    let mut body = String::from("<h1>gpudoctor devices</h1>\n");
    body.push_str(&html_body(v));
    body.push_str(&super::html::findings(v.findings));
    super::html::page("gpudoctor devices", &body)
}

/// The GPU table (each row marked with the findings' verdict on that GPU) and the matrix of
/// how each pair of GPUs is connected, as NVML reports it; shared with `check`'s page.
pub fn html_body(v: &DevicesView) -> String {
    use super::html::{esc, mark_cell};
    let mut out = String::from("<h2 id=\"gpus\">GPUs</h2>\n");
    match nvml_status(v.nvml) {
        Ok(line) | Err(line) => {
            let _ = writeln!(out, "<p>{}</p>", esc(&line));
        }
    }
    let order_differs = v.gpus.iter().any(|g| g.cuda_index != g.gpu.index as usize);
    let rows = table_rows(v, order_differs);
    if let Some((head, body)) = rows.split_first() {
        out.push_str("<table class=\"sortable\"><thead><tr>");
        for h in head {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr></thead><tbody>\n");
        for (r, gv) in body.iter().zip(&v.gpus) {
            out.push_str("<tr class=\"row\">");
            out.push_str(&mark_cell(gv.verdict));
            for c in r.iter().skip(1) {
                let _ = write!(out, "<td>{}</td>", esc(c));
            }
            let _ = write!(
                out,
                "{}",
                "<td></td>".repeat(head.len().saturating_sub(r.len()))
            );
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
    }
    if !v.topology.is_empty() && v.gpus.len() > 1 {
        out.push_str("<h2 id=\"topology\">Topology</h2>\n<p class=\"dim\">How each pair of GPUs is connected, in <code>nvidia-smi topo -m</code>'s classes (NV# NVLinks, PIX one PCIe switch, PXB several bridges, PHB a host bridge, NODE between host bridges of a NUMA node, SYS across NUMA nodes), and whether NVML reports peer-to-peer reads between them.</p>\n<table class=\"topo\"><thead><tr><th></th>");
        let indices: Vec<u32> = v.gpus.iter().map(|g| g.gpu.index).collect();
        for i in &indices {
            let _ = write!(out, "<th>GPU {i}</th>");
        }
        out.push_str("</tr></thead><tbody>\n");
        for a in &indices {
            let _ = write!(out, "<tr><th>GPU {a}</th>");
            for b in &indices {
                if a == b {
                    out.push_str("<td class=\"dim\">—</td>");
                    continue;
                }
                let pair = v
                    .topology
                    .iter()
                    .find(|p| (p.a == *a && p.b == *b) || (p.a == *b && p.b == *a));
                // The class every view shows (NVLink, else NVML's common ancestor, else sysfs).
                let class = v.gpu_pairs.iter().find(|p| {
                    let (x, y) = (p.pair.a.nvml_index, p.pair.b.nvml_index);
                    (x == Some(*a) && y == Some(*b)) || (x == Some(*b) && y == Some(*a))
                });
                let label = class
                    .and_then(|c| c.pair.link)
                    .map_or_else(|| "?".to_string(), |l| l.label());
                let mark = class
                    .filter(|c| {
                        matches!(c.verdict, Verdict::Warning | Verdict::Error | Verdict::Info)
                    })
                    .map(|c| format!(" {}", form::symbol(c.verdict)))
                    .unwrap_or_default();
                match pair {
                    Some(p) => {
                        let _ = write!(
                            out,
                            "<td>{}{}<br><span class=\"dim\">P2P read: {}</span></td>",
                            esc(&label),
                            esc(&mark),
                            esc(&f(&p.p2p_read))
                        );
                    }
                    None if class.is_some() => {
                        let _ = write!(out, "<td>{}{}</td>", esc(&label), esc(&mark));
                    }
                    None => out.push_str("<td class=\"dim\">n/a</td>"),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    fn human(snap: &Snapshot, detail: bool, width: usize, wide: bool) -> String {
        let (checks, findings) = crate::rules::evaluate(snap, &|_: &str| true);
        let v = view(snap, &findings, &checks, None);
        render_human(
            &v,
            &Options {
                style: Style::plain(),
                detail,
                width,
                wide,
                topo: false,
            },
        )
    }

    fn header(text: &str) -> &str {
        text.lines()
            .find(|l| l.contains("GPU") && l.contains("Name"))
            .unwrap_or_else(|| panic!("no table header in\n{text}"))
    }

    #[test]
    fn the_table_shortens_then_leaves_columns_out_to_fit() {
        let snap = testing::healthy();
        let text = human(&snap, false, 80, false);
        let head = header(&text);
        assert!(
            head.contains("Memory") && !head.contains("used/total"),
            "{head}"
        );
        assert!(!head.contains("Mode"), "{head}");
        assert!(text.contains("Left out at this width: Mode"), "{text}");
        assert!(
            text.contains("H100 80GB HBM3") && !text.contains("NVIDIA H100"),
            "{text}"
        );
        for l in text.lines() {
            assert!(display_width(l) <= 80, "{l}");
        }
    }

    #[test]
    fn wide_shows_every_column_in_full() {
        let snap = testing::healthy();
        let text = human(&snap, false, 80, true);
        let head = header(&text);
        for col in [
            "Bus",
            "Memory used/total GiB",
            "Temp",
            "Power W",
            "PCIe",
            "ECC",
            "Mode",
        ] {
            assert!(head.contains(col), "{head}");
        }
        assert!(text.contains("NVIDIA H100 80GB HBM3"), "{text}");
        assert!(!text.contains("Left out"), "{text}");
        // With room for it, the full table without asking.
        assert_eq!(header(&human(&snap, false, 200, false)), head);
    }

    #[test]
    fn an_unreachable_gpu_row_wraps_under_its_text() {
        let mut snap = testing::healthy();
        testing::nvml_gpu(&mut snap, 1).handle_error =
            Some("unknown: an internal driver error occurred while opening the device".into());
        let text = human(&snap, false, 40, false);
        let row = text
            .lines()
            .position(|l| l.contains("unreachable:"))
            .unwrap_or_else(|| panic!("{text}"));
        let lines: Vec<&str> = text.lines().collect();
        let at = lines[row].find("unreachable:").unwrap();
        let column = display_width(&lines[row][..at]);
        assert!(display_width(lines[row]) <= 40, "{text}");
        let next = lines[row + 1];
        assert_eq!(next.len() - next.trim_start().len(), column, "{text}");
    }
}
