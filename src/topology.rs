//! How each pair of GPUs is connected, derived from the snapshot: NVLink (NVML's links and
//! the PCI bus id at each link's far end), else NVML's common ancestor, else the sysfs
//! paths of the topology probe; plus the bridges a PCIe peer transfer between them crosses
//! and which of those redirect it (ACS). The classes are `nvidia-smi topo -m`'s legend:
//! NV# (bonded NVLinks), PIX (at most one PCIe bridge / one switch), PXB (several bridges,
//! no host bridge), PHB (through a PCIe host bridge), NODE (between host bridges of one
//! NUMA node), SYS (across the SMP interconnect between NUMA nodes).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::pci::sysfs_address;
use crate::facts::topology::{Bridge, TopoGpu};
use crate::snapshot::Snapshot;

/// Serialised as its `nvidia-smi topo -m` cell (`NV18`, `PIX`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LinkClass {
    /// NVLink, with the number of links bonded between the pair (through NVSwitches: the
    /// links each GPU has to the switches).
    Nvlink(u32),
    Pix,
    Pxb,
    Phb,
    Node,
    Sys,
}

impl Serialize for LinkClass {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.label())
    }
}

impl LinkClass {
    /// The cell `nvidia-smi topo -m` prints.
    pub fn label(self) -> String {
        match self {
            LinkClass::Nvlink(n) => format!("NV{n}"),
            LinkClass::Pix => "PIX".into(),
            LinkClass::Pxb => "PXB".into(),
            LinkClass::Phb => "PHB".into(),
            LinkClass::Node => "NODE".into(),
            LinkClass::Sys => "SYS".into(),
        }
    }

    /// Peer traffic between such a pair would stay below the root complex (inside one or
    /// more PCIe switches), unless a bridge redirects it.
    pub fn stays_below_root(self) -> bool {
        matches!(self, LinkClass::Pix | LinkClass::Pxb)
    }

    /// NVML's nvmlGpuTopologyLevel_t as the worker writes it.
    fn from_nvml(level: &str) -> Option<LinkClass> {
        Some(match level {
            "internal" | "single" => LinkClass::Pix,
            "multiple" => LinkClass::Pxb,
            "host_bridge" => LinkClass::Phb,
            "node" => LinkClass::Node,
            "system" => LinkClass::Sys,
            _ => return None,
        })
    }
}

/// Which facts decided a pair's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkSource {
    /// NVML's NVLink states and remote PCI bus ids.
    NvmlNvlink,
    /// nvmlDeviceGetTopologyCommonAncestor.
    NvmlTopology,
    /// The sysfs paths (/sys/devices/pciDDDD:BB/…) and NUMA nodes.
    Sysfs,
}

impl LinkSource {
    pub fn describe(self) -> &'static str {
        match self {
            LinkSource::NvmlNvlink => "NVML (NVLink states and remote PCI info)",
            LinkSource::NvmlTopology => "NVML (nvmlDeviceGetTopologyCommonAncestor)",
            LinkSource::Sysfs => "sysfs (/sys/devices PCI paths, numa_node)",
        }
    }
}

/// One GPU of a pair: its PCI address (sysfs form) and NVML index when NVML answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuRef {
    pub address: String,
    pub nvml_index: Option<u32>,
}

impl GpuRef {
    pub fn label(&self) -> String {
        match self.nvml_index {
            Some(i) => format!("GPU {i} ({})", self.address),
            None => format!("GPU {}", self.address),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuPair {
    /// The lower PCI address first.
    pub a: GpuRef,
    pub b: GpuRef,
    /// None when no source could say.
    pub link: Option<LinkClass>,
    pub source: Option<LinkSource>,
    /// Bridges a PCIe peer transfer between the two crosses (sysfs): those below the lowest
    /// common one on both sides and that one; both whole paths when they meet only at or
    /// above a host bridge.
    pub pcie_bridges: Vec<String>,
    /// Of those, the ones whose ACS control has request or completion redirect on.
    pub acs_redirecting: Vec<String>,
    /// Of those, the ones whose ACS state could not be read.
    pub acs_unknown: Vec<String>,
}

/// How one GPU reaches one RDMA NIC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NicLink {
    pub gpu: String,
    pub nic: String,
    pub link: Option<LinkClass>,
}

impl GpuPair {
    /// Peer-to-peer traffic would go over PCIe (no NVLink between them).
    pub fn over_pcie(&self) -> bool {
        !matches!(self.link, Some(LinkClass::Nvlink(_)))
    }
}

/// The sysfs class of two GPUs' paths and the bridges a transfer between them crosses.
fn sysfs_class(a: &TopoGpu, b: &TopoGpu) -> (Option<LinkClass>, Vec<String>) {
    let (Some(ha), Some(hb)) = (&a.host_bridge, &b.host_bridge) else {
        return (None, Vec::new());
    };
    if ha != hb {
        let both: Vec<String> = a.path.iter().chain(&b.path).cloned().collect();
        let class = match (a.numa_node.get(), b.numa_node.get()) {
            (Some(x), Some(y)) if x == y => LinkClass::Node,
            (Some(_), Some(_)) => LinkClass::Sys,
            _ => return (None, both),
        };
        return (Some(class), both);
    }
    let common = a
        .path
        .iter()
        .zip(&b.path)
        .take_while(|(x, y)| x == y)
        .count();
    if common == 0 {
        let both = a.path.iter().chain(&b.path).cloned().collect();
        return (Some(LinkClass::Phb), both);
    }
    let below_a = &a.path[common..];
    let below_b = &b.path[common..];
    let mut crossed: Vec<String> = below_a.to_vec();
    crossed.push(a.path[common - 1].clone());
    crossed.extend(below_b.iter().cloned());
    // One switch: each side leaves the common port through at most one downstream port.
    let class = if below_a.len() <= 1 && below_b.len() <= 1 {
        LinkClass::Pix
    } else {
        LinkClass::Pxb
    };
    (Some(class), crossed)
}

/// NVLinks from `a` to `b`: direct links, else (through NVSwitches) the fewer of the two
/// GPUs' links that end on something that is not a GPU. `gpus` is sorted.
fn nvlink_count(
    remotes: &BTreeMap<String, Vec<String>>,
    gpus: &[String],
    a: &str,
    b: &str,
) -> Option<u32> {
    let ra = remotes.get(a)?;
    let rb = remotes.get(b)?;
    let direct = ra.iter().filter(|r| r.as_str() == b).count() as u32;
    if direct > 0 {
        return Some(direct);
    }
    // `gpus` is sorted: a far end that is no GPU is a switch.
    let to_switch =
        |r: &Vec<String>| r.iter().filter(|x| gpus.binary_search(x).is_err()).count() as u32;
    let n = to_switch(ra).min(to_switch(rb));
    (n > 0).then_some(n)
}

impl Snapshot {
    /// Every GPU pair (lower address first), in address order. Empty with fewer than two
    /// GPUs.
    pub fn gpu_pairs(&self) -> Vec<GpuPair> {
        let topo_gpus: Vec<&TopoGpu> = self
            .topology
            .as_ref()
            .and_then(|t| t.gpus.get())
            .map(|g| g.iter().collect())
            .unwrap_or_default();
        let bridges: BTreeMap<&str, &Bridge> = self
            .topology
            .as_ref()
            .map(|t| t.bridges.iter().map(|b| (b.address.as_str(), b)).collect())
            .unwrap_or_default();
        // NVML's GPUs by sysfs address, with their NVLink far ends.
        let mut nvml_index: BTreeMap<String, u32> = BTreeMap::new();
        let mut remotes: BTreeMap<String, Vec<String>> = BTreeMap::new();
        if let Some(sys) = self.nvml_system() {
            for g in &sys.devices {
                let Some(bus) = g.pci_bus_id.get() else {
                    continue;
                };
                let addr = sysfs_address(bus);
                nvml_index.insert(addr.clone(), g.index);
                if let (Some(up), Some(far)) = (g.nvlinks.get(), g.nvlink_remotes.get()) {
                    let ends = up
                        .iter()
                        .zip(far)
                        .filter(|(u, _)| **u)
                        .filter_map(|(_, r)| r.as_deref().map(sysfs_address))
                        .collect();
                    remotes.insert(addr, ends);
                }
            }
        }
        // Every GPU either source names, once, in address order.
        let addresses: Vec<String> = topo_gpus
            .iter()
            .map(|g| g.address.clone())
            .chain(nvml_index.keys().cloned())
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect();
        let by_addr: BTreeMap<&str, &TopoGpu> =
            topo_gpus.iter().map(|g| (g.address.as_str(), *g)).collect();
        let nvml_levels: BTreeMap<(u32, u32), &str> = self
            .nvml_system()
            .map(|s| {
                s.topology
                    .iter()
                    .filter_map(|p| {
                        let l = p.common_ancestor.get()?.as_str();
                        Some([((p.a, p.b), l), ((p.b, p.a), l)])
                    })
                    .flatten()
                    .collect()
            })
            .unwrap_or_default();
        let mut out = Vec::new();
        for (i, a) in addresses.iter().enumerate() {
            for b in &addresses[i + 1..] {
                let (sys_class, crossed) = match (by_addr.get(a.as_str()), by_addr.get(b.as_str()))
                {
                    (Some(x), Some(y)) => sysfs_class(x, y),
                    _ => (None, Vec::new()),
                };
                let (ia, ib) = (nvml_index.get(a).copied(), nvml_index.get(b).copied());
                let nvml_class = ia
                    .zip(ib)
                    .and_then(|k| nvml_levels.get(&k))
                    .and_then(|l| LinkClass::from_nvml(l));
                let (link, source) = if let Some(n) = nvlink_count(&remotes, &addresses, a, b) {
                    (Some(LinkClass::Nvlink(n)), Some(LinkSource::NvmlNvlink))
                } else if let Some(c) = nvml_class {
                    (Some(c), Some(LinkSource::NvmlTopology))
                } else {
                    (sys_class, sys_class.map(|_| LinkSource::Sysfs))
                };
                let state = |pick: fn(&Bridge) -> bool| -> Vec<String> {
                    crossed
                        .iter()
                        .filter(|x| bridges.get(x.as_str()).is_some_and(|b| pick(b)))
                        .cloned()
                        .collect()
                };
                let acs_redirecting = state(|b| {
                    b.acs
                        .get()
                        .is_some_and(|a| a.is_some_and(|a| a.redirects()))
                });
                let acs_unknown = state(|b| b.acs.get().is_none());
                out.push(GpuPair {
                    a: GpuRef {
                        address: a.clone(),
                        nvml_index: ia,
                    },
                    b: GpuRef {
                        address: b.clone(),
                        nvml_index: ib,
                    },
                    link,
                    source,
                    pcie_bridges: crossed,
                    acs_redirecting,
                    acs_unknown,
                });
            }
        }
        out
    }

    /// The pair of two GPUs by PCI bus id, in any form NVML, CUDA or sysfs writes it
    /// (`00000000:18:00.0`, `0000:18:00.0`), in either order.
    pub fn gpu_pair(&self, a: &str, b: &str) -> Option<GpuPair> {
        let (a, b) = (sysfs_address(a), sysfs_address(b));
        self.gpu_pairs().into_iter().find(|p| {
            (p.a.address == a && p.b.address == b) || (p.a.address == b && p.b.address == a)
        })
    }

    /// How each GPU reaches each RDMA NIC (sysfs paths; the same classes as GPU pairs).
    pub fn nic_links(&self) -> Vec<NicLink> {
        let Some(topo) = &self.topology else {
            return Vec::new();
        };
        let (Some(gpus), Some(nics)) = (topo.gpus.get(), topo.nics.get()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for g in gpus {
            for n in nics {
                let as_gpu = TopoGpu {
                    address: n.address.clone().unwrap_or_default(),
                    host_bridge: n.host_bridge.clone(),
                    path: n.path.clone(),
                    source: String::new(),
                    numa_node: match n.numa_node {
                        Some(v) => crate::fact::Fact::value("numa_node", v),
                        None => crate::fact::Fact::missing(
                            "numa_node",
                            crate::fact::MissingReason::NotFound,
                            "unknown",
                        ),
                    },
                    local_cpulist: crate::fact::Fact::value("local_cpulist", String::new()),
                    iommu_group: None,
                };
                out.push(NicLink {
                    gpu: g.address.clone(),
                    nic: n.name.clone(),
                    link: sysfs_class(g, &as_gpu).0,
                });
            }
        }
        out
    }

    /// The pair of two GPUs by NVML index, in either order.
    pub fn gpu_pair_by_nvml(&self, a: u32, b: u32) -> Option<GpuPair> {
        self.gpu_pairs().into_iter().find(|p| {
            let (x, y) = (p.a.nvml_index, p.b.nvml_index);
            (x == Some(a) && y == Some(b)) || (x == Some(b) && y == Some(a))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;

    fn gpu(addr: &str, host: &str, path: &[&str], numa: i32) -> TopoGpu {
        TopoGpu {
            address: addr.into(),
            host_bridge: Some(host.into()),
            path: path.iter().map(|s| s.to_string()).collect(),
            source: String::new(),
            numa_node: Fact::value("n", numa),
            local_cpulist: Fact::value("c", "0-7".into()),
            iommu_group: None,
        }
    }

    #[test]
    fn classes_from_paths() {
        let rp = "0000:00:01.0";
        let us = "0000:01:00.0";
        let a = gpu("0000:03:00.0", "pci0000:00", &[rp, us, "0000:02:08.0"], 0);
        let b = gpu("0000:04:00.0", "pci0000:00", &[rp, us, "0000:02:10.0"], 0);
        let (c, crossed) = sysfs_class(&a, &b);
        assert_eq!(c, Some(LinkClass::Pix));
        assert_eq!(crossed, ["0000:02:08.0", us, "0000:02:10.0"]);
        // Two levels of switches below one root port.
        let d = gpu(
            "0000:07:00.0",
            "pci0000:00",
            &[rp, us, "0000:02:18.0", "0000:05:00.0", "0000:06:00.0"],
            0,
        );
        assert_eq!(sysfs_class(&a, &d).0, Some(LinkClass::Pxb));
        let e = gpu("0000:41:00.0", "pci0000:00", &["0000:00:03.0"], 0);
        assert_eq!(sysfs_class(&a, &e).0, Some(LinkClass::Phb));
        let f = gpu("0000:81:00.0", "pci0000:80", &["0000:80:01.0"], 0);
        assert_eq!(sysfs_class(&a, &f).0, Some(LinkClass::Node));
        let g = gpu("0000:c1:00.0", "pci0000:c0", &["0000:c0:01.0"], 1);
        assert_eq!(sysfs_class(&a, &g).0, Some(LinkClass::Sys));
        let mut h = g.clone();
        h.numa_node = Fact::missing("n", crate::fact::MissingReason::NotFound, "gone");
        assert_eq!(sysfs_class(&a, &h).0, None);
    }

    #[test]
    fn nvlinks_direct_and_through_switches() {
        let gpus = vec!["a".to_string(), "b".into(), "c".into()];
        let mut r = BTreeMap::new();
        r.insert(
            "a".to_string(),
            vec!["b".to_string(), "b".into(), "c".into()],
        );
        r.insert("b".to_string(), vec!["a".to_string(), "a".into()]);
        r.insert("c".to_string(), vec!["a".to_string()]);
        assert_eq!(nvlink_count(&r, &gpus, "a", "b"), Some(2));
        assert_eq!(nvlink_count(&r, &gpus, "b", "c"), None);
        let mut s = BTreeMap::new();
        s.insert("a".to_string(), vec!["sw1".to_string(); 18]);
        s.insert("b".to_string(), vec!["sw2".to_string(); 18]);
        assert_eq!(nvlink_count(&s, &gpus, "a", "b"), Some(18));
    }
}
