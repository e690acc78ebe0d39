//! Probe: how the GPUs hang together on the PCI bus, from files only. For every NVIDIA GPU
//! function: the chain of bridges up to its host bridge (the link /sys/bus/pci/devices/ADDR
//! points into /sys/devices/pciDDDD:BB/…), its NUMA node and local CPUs, and its IOMMU
//! group; for every bridge on those chains: what kind of port it is and its PCIe Access
//! Control Services registers, read from its binary `config` file. Then the IOMMU (units,
//! the GPUs' group types, the kernel command line) and the RDMA NICs
//! (/sys/class/infiniband). `Snapshot::gpu_pairs` turns this into per-pair link classes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::fact::{Fact, MissingReason};
use crate::facts::pci::PCI_DEVICES_DIR;
use crate::facts::topology::{
    Acs, AerCounters, Bridge, BridgeKind, Iommu, IommuGroup, IommuMode, IommuUnit, Nic, TopoGpu,
    Topology, IOMMU_GROUPS_DIR,
};
use crate::fsys::{FsErrorKind, HostFs};
use crate::probes::pci::is_pci_address;

pub const IOMMU_CLASS_DIR: &str = "/sys/class/iommu";
pub const INFINIBAND_DIR: &str = "/sys/class/infiniband";
pub const CMDLINE: &str = "/proc/cmdline";
/// PCIe extended configuration space: 4096 bytes; nothing past it is read.
pub const CONFIG_SPACE_SIZE: usize = 4096;

/// The AER counters of these PCI functions; devices that expose none are left out.
pub fn read_aer(fs: &HostFs, addresses: &[String]) -> Vec<AerCounters> {
    let total = |address: &str, file: &str, key: &str| -> Option<u64> {
        let path = Path::new(PCI_DEVICES_DIR).join(address).join(file);
        let text = fs.read_text_limited(&path, 4096).ok()?.text;
        text.lines().find_map(|l| {
            let (name, n) = l.split_once(' ')?;
            (name == key).then(|| n.trim().parse().ok()).flatten()
        })
    };
    addresses
        .iter()
        .map(|a| AerCounters {
            address: a.clone(),
            correctable: total(a, "aer_dev_correctable", "TOTAL_ERR_COR"),
            nonfatal: total(a, "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL"),
            fatal: total(a, "aer_dev_fatal", "TOTAL_ERR_FATAL"),
        })
        .filter(|c| c.correctable.is_some() || c.nonfatal.is_some() || c.fatal.is_some())
        .collect()
}

/// What the config-space parser found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSpace {
    pub vendor: u16,
    pub device: u16,
    /// Header type with the multi-function bit cleared (0 endpoint, 1 bridge).
    pub header_type: u8,
    /// The PCI Express capability's device/port type (bits 7:4 of its flags), if present.
    pub port_type: Option<u8>,
    /// The capability list was readable (256 bytes or more): without it, whether the
    /// device is PCI Express at all is unknown.
    pub capabilities_read: bool,
    pub acs: AcsRead,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcsRead {
    Found(Acs),
    /// The extended list was read to its end without an ACS capability.
    Absent,
    Unknown(MissingReason, String),
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        *b.get(at + 3)?,
    ]))
}

/// Parses a config space as sysfs gives it: 64 bytes to an unprivileged reader, 256 for
/// conventional PCI, 4096 for PCIe read as root. Every pointer is bounded and every list
/// walk stops at a repeat, so a lost device (all 0xFF) or a corrupt list cannot loop.
pub fn parse_config(b: &[u8]) -> Result<ConfigSpace, (MissingReason, String)> {
    let b = &b[..b.len().min(CONFIG_SPACE_SIZE)];
    if b.len() < 64 {
        return Err((
            MissingReason::Malformed,
            format!(
                "config space is {} bytes, shorter than the 64-byte header",
                b.len()
            ),
        ));
    }
    let vendor = u16_at(b, 0).unwrap_or(0xffff);
    if vendor == 0xffff {
        return Err((
            MissingReason::Unreadable,
            "config space reads as all 0xFF: the device is gone (surprise removal, link down or a fatal error)".into(),
        ));
    }
    let device = u16_at(b, 2).unwrap_or(0xffff);
    let header_type = b[0x0e] & 0x7f;
    let status = u16_at(b, 0x06).unwrap_or(0);
    let classic_end = b.len().min(256);
    let mut port_type = None;
    if status & 0x10 != 0 {
        let mut ptr = (b[0x34] & 0xfc) as usize;
        let mut seen = BTreeSet::new();
        // 48 four-byte capabilities fill the 192 bytes after the header.
        for _ in 0..48 {
            if ptr < 0x40 || ptr + 2 > classic_end || !seen.insert(ptr) {
                break;
            }
            if b[ptr] == 0x10 {
                if let Some(flags) = u16_at(b, ptr + 2) {
                    port_type = Some(((flags >> 4) & 0xf) as u8);
                }
                break;
            }
            ptr = (b[ptr + 1] & 0xfc) as usize;
        }
    }
    let capabilities_read = b.len() >= 256;
    let acs = if capabilities_read && port_type.is_none() {
        // Conventional PCI has no extended space.
        AcsRead::Absent
    } else if b.len() < 256 {
        // sysfs gives other users the first 64 bytes (128 for CardBus bridges).
        AcsRead::Unknown(
            MissingReason::PermissionDenied,
            format!(
                "only {} bytes of config space were readable: the extended space, where ACS is, is readable by root only",
                b.len()
            ),
        )
    } else if b.len() == 256 {
        AcsRead::Unknown(
            MissingReason::Unreadable,
            "only the 256-byte conventional config space is accessible: no extended config access (MMCONFIG/ECAM off, or a hypervisor that hides it)".into(),
        )
    } else {
        walk_extended(b)
    };
    Ok(ConfigSpace {
        vendor,
        device,
        header_type,
        port_type,
        capabilities_read,
        acs,
    })
}

/// Walks the extended capability list from 0x100 as Linux does (next pointer & 0xffc,
/// stop below 0x100), with a repeat check on top of its iteration bound.
fn walk_extended(b: &[u8]) -> AcsRead {
    let mut at = 0x100usize;
    let mut seen = BTreeSet::new();
    // (4096 - 256) / 8: the kernel's own bound for this walk.
    for _ in 0..480 {
        if !seen.insert(at) {
            return AcsRead::Unknown(
                MissingReason::Malformed,
                format!("the extended capability list loops back to 0x{at:03x}"),
            );
        }
        let Some(header) = u32_at(b, at) else {
            return AcsRead::Unknown(
                MissingReason::Malformed,
                format!("an extended capability points past the end (0x{at:03x})"),
            );
        };
        if header == 0 || header == 0xffff_ffff {
            return AcsRead::Absent;
        }
        if header & 0xffff == 0x000d {
            return match (u16_at(b, at + 4), u16_at(b, at + 6)) {
                (Some(capability), Some(control)) => AcsRead::Found(Acs {
                    offset: at as u16,
                    capability,
                    control,
                }),
                _ => AcsRead::Unknown(
                    MissingReason::Malformed,
                    format!("the ACS capability at 0x{at:03x} is cut off"),
                ),
            };
        }
        let next = ((header >> 20) & 0xffc) as usize;
        if next < 0x100 {
            return AcsRead::Absent;
        }
        at = next;
    }
    AcsRead::Unknown(
        MissingReason::Malformed,
        "the extended capability list does not end".into(),
    )
}

fn bridge_kind(c: &ConfigSpace) -> BridgeKind {
    if !c.capabilities_read {
        return BridgeKind::Unknown;
    }
    match c.port_type {
        Some(4) => BridgeKind::RootPort,
        Some(5) => BridgeKind::SwitchUpstream,
        Some(6) => BridgeKind::SwitchDownstream,
        Some(_) => BridgeKind::OtherPcie,
        None => BridgeKind::Conventional,
    }
}

/// Reads one bridge's config file and what it says.
fn read_bridge(fs: &HostFs, address: &str, dir: &Path) -> Bridge {
    let file = dir.join("config");
    let source = file.display().to_string();
    let bytes = match fs.read_bytes(&file, CONFIG_SPACE_SIZE as u64) {
        Ok(b) => b,
        Err(e) => {
            let mut fact = Fact::from_fs_error(&e);
            if e.kind == FsErrorKind::PermissionDenied {
                fact = Fact::missing(
                    source,
                    MissingReason::PermissionDenied,
                    "config space is readable by root only",
                );
            }
            return Bridge {
                address: address.into(),
                id: None,
                kind: BridgeKind::Unknown,
                acs: fact,
            };
        }
    };
    match parse_config(&bytes) {
        Ok(c) => Bridge {
            address: address.into(),
            id: Some(format!("{:04x}:{:04x}", c.vendor, c.device)),
            kind: bridge_kind(&c),
            acs: match c.acs {
                AcsRead::Found(a) => Fact::value(source, Some(a)),
                AcsRead::Absent => Fact::value(source, None),
                AcsRead::Unknown(reason, detail) => Fact::missing(source, reason, detail),
            },
        },
        Err((reason, detail)) => Bridge {
            address: address.into(),
            id: None,
            kind: BridgeKind::Unknown,
            acs: Fact::missing(source, reason, detail),
        },
    }
}

/// A device's place: its host bridge and the PCI functions above it, from the resolved
/// sysfs path (`/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0`).
struct Place {
    host_bridge: Option<String>,
    /// Every PCI function on the path, the device last.
    chain: Vec<(String, PathBuf)>,
    resolved: PathBuf,
}

fn place_of(fs: &HostFs, link: &Path) -> Result<Place, crate::fsys::FsError> {
    let resolved = fs.canonical(link)?;
    let mut host_bridge = None;
    let mut chain = Vec::new();
    let mut dir = PathBuf::from("/");
    for comp in resolved.components() {
        dir.push(comp);
        let name = comp.as_os_str().to_string_lossy();
        if host_bridge.is_none() && name.starts_with("pci") && name.contains(':') {
            host_bridge = Some(name.to_string());
        } else if is_pci_address(&name) {
            chain.push((name.to_string(), dir.clone()));
        }
    }
    Ok(Place {
        host_bridge,
        chain,
        resolved,
    })
}

fn read_int(fs: &HostFs, path: &Path) -> Fact<i32> {
    match fs.read_text_limited(path, 64) {
        Ok(t) => match t.text.trim().parse() {
            Ok(n) => Fact::value(path.display().to_string(), n),
            Err(_) => Fact::missing(
                path.display().to_string(),
                MissingReason::Malformed,
                format!("not a number: {:?}", t.text.trim()),
            ),
        },
        Err(e) => Fact::from_fs_error(&e),
    }
}

fn read_word(fs: &HostFs, path: &Path) -> Fact<String> {
    match fs.read_text_limited(path, 4096) {
        Ok(t) => Fact::value(path.display().to_string(), t.text.trim().to_string()),
        Err(e) => Fact::from_fs_error(&e),
    }
}

fn group_of(fs: &HostFs, dir: &Path) -> Option<u32> {
    let target = fs.read_link(&dir.join("iommu_group")).ok()?;
    target.file_name()?.to_str()?.parse().ok()
}

/// `gpus`: the GPU functions' addresses (the pci probe's).
pub fn probe(fs: &HostFs, gpus: &[String]) -> Topology {
    let mut bridges: BTreeMap<String, Bridge> = BTreeMap::new();
    let mut topo_gpus = Vec::new();
    let mut first_error = None;
    for address in gpus {
        let link = Path::new(PCI_DEVICES_DIR).join(address);
        let place = match place_of(fs, &link) {
            Ok(p) => p,
            Err(e) => {
                first_error.get_or_insert(e);
                continue;
            }
        };
        let dev_dir = place.resolved.clone();
        let mut path = Vec::new();
        for (name, dir) in &place.chain {
            if name == address {
                break;
            }
            path.push(name.clone());
            if !bridges.contains_key(name) {
                bridges.insert(name.clone(), read_bridge(fs, name, dir));
            }
        }
        topo_gpus.push(TopoGpu {
            address: address.clone(),
            host_bridge: place.host_bridge,
            path,
            source: place.resolved.display().to_string(),
            numa_node: read_int(fs, &dev_dir.join("numa_node")),
            local_cpulist: read_word(fs, &dev_dir.join("local_cpulist")),
            iommu_group: group_of(fs, &dev_dir),
        });
    }
    let gpus_fact = match (topo_gpus.is_empty(), first_error) {
        (true, Some(e)) if !gpus.is_empty() => Fact::from_fs_error(&e),
        _ => Fact::value(PCI_DEVICES_DIR, topo_gpus),
    };
    let groups: BTreeSet<u32> = gpus_fact
        .get()
        .map(|g| g.iter().filter_map(|g| g.iommu_group).collect())
        .unwrap_or_default();
    let iommu = iommu(fs, &groups);
    let mut topo = Topology {
        gpus: gpus_fact,
        bridges: bridges.into_values().collect(),
        iommu,
        nics: nics(fs),
        aer: Vec::new(),
        aer_again: None,
    };
    topo.aer = read_aer(fs, &topo.link_devices());
    topo
}

/// The words of the kernel command line that decide the IOMMU's and ACS's state.
fn cmdline_flags(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| {
            w.starts_with("iommu")
                || w.starts_with("intel_iommu=")
                || w.starts_with("amd_iommu=")
                || w.starts_with("pci=")
                || w.starts_with("pcie_acs_override=")
                || w.starts_with("disable_acs_redir=")
        })
        .map(str::to_string)
        .collect()
}

fn iommu(fs: &HostFs, gpu_groups: &BTreeSet<u32>) -> Iommu {
    let units = match fs.read_dir(Path::new(IOMMU_CLASS_DIR)) {
        Ok(names) => Fact::value(
            IOMMU_CLASS_DIR,
            names
                .iter()
                .map(|n| {
                    let name = n.to_string_lossy().into_owned();
                    let kind = if name.starts_with("dmar") {
                        "intel_vtd"
                    } else if name.starts_with("ivhd") {
                        "amd_vi"
                    } else {
                        "other"
                    };
                    IommuUnit {
                        name,
                        kind: kind.into(),
                    }
                })
                .collect(),
        ),
        Err(e) => Fact::from_fs_error(&e),
    };
    let groups: Vec<IommuGroup> = gpu_groups
        .iter()
        .map(|n| {
            let dir = Path::new(IOMMU_GROUPS_DIR).join(n.to_string());
            let devices = fs
                .read_dir(&dir.join("devices"))
                .map(|d| {
                    d.iter()
                        .map(|n| n.to_string_lossy().into_owned())
                        .filter(|n| is_pci_address(n))
                        .collect()
                })
                .unwrap_or_default();
            IommuGroup {
                number: *n,
                kind: read_word(fs, &dir.join("type")),
                devices,
            }
        })
        .collect();
    let cmdline = match fs.read_text_limited(Path::new(CMDLINE), 8192) {
        Ok(t) => Fact::value(CMDLINE, cmdline_flags(&t.text)),
        Err(e) => Fact::from_fs_error(&e),
    };
    let (mode, mode_source) = iommu_mode(&units, &groups, &cmdline);
    Iommu {
        units,
        groups,
        cmdline,
        mode,
        mode_source,
    }
}

/// The group types are what the kernel applied; the command line is only what was asked.
fn iommu_mode(
    units: &Fact<Vec<IommuUnit>>,
    groups: &[IommuGroup],
    cmdline: &Fact<Vec<String>>,
) -> (IommuMode, String) {
    let kinds: Vec<&str> = groups
        .iter()
        .filter_map(|g| g.kind.get().map(String::as_str))
        .collect();
    if kinds.iter().any(|k| k.starts_with("DMA")) {
        return (
            IommuMode::Translated,
            format!("{IOMMU_GROUPS_DIR}/N/type of the GPUs' groups"),
        );
    }
    if !kinds.is_empty() && kinds.iter().all(|k| *k == "identity") {
        return (
            IommuMode::Passthrough,
            format!("{IOMMU_GROUPS_DIR}/N/type of the GPUs' groups"),
        );
    }
    let flags = cmdline.get().cloned().unwrap_or_default();
    let has = |w: &str| flags.iter().any(|f| f == w);
    if has("iommu=off") || has("intel_iommu=off") || has("amd_iommu=off") {
        return (IommuMode::Off, format!("{CMDLINE} ({})", flags.join(" ")));
    }
    match units.get() {
        Some(u) if u.is_empty() && groups.is_empty() => {
            (IommuMode::Off, format!("{IOMMU_CLASS_DIR} lists no IOMMU"))
        }
        _ if has("iommu=pt") || has("iommu.passthrough=1") => (
            IommuMode::Passthrough,
            format!("{CMDLINE} ({})", flags.join(" ")),
        ),
        _ => (
            IommuMode::Unknown,
            "no IOMMU group type of a GPU was readable".into(),
        ),
    }
}

fn nics(fs: &HostFs) -> Fact<Vec<Nic>> {
    let dir = Path::new(INFINIBAND_DIR);
    let names = match fs.read_dir(dir) {
        Ok(n) => n,
        Err(e) if e.kind == FsErrorKind::NotFound => return Fact::value(INFINIBAND_DIR, vec![]),
        Err(e) => return Fact::from_fs_error(&e),
    };
    // A bound on what a listing can make us read.
    let out = names
        .iter()
        .take(256)
        .map(|n| {
            let name = n.to_string_lossy().into_owned();
            let base = dir.join(n);
            let place = place_of(fs, &base.join("device")).ok();
            let address = place
                .as_ref()
                .and_then(|p| p.chain.last().map(|c| c.0.clone()));
            let path = place
                .as_ref()
                .map(|p| {
                    p.chain
                        .iter()
                        .map(|c| c.0.clone())
                        .filter(|a| Some(a) != address.as_ref())
                        .collect()
                })
                .unwrap_or_default();
            let link_layers = fs
                .read_dir(&base.join("ports"))
                .map(|ports| {
                    ports
                        .iter()
                        .take(64)
                        .filter_map(|p| {
                            let f = base.join("ports").join(p).join("link_layer");
                            Some(fs.read_text_limited(&f, 64).ok()?.text.trim().to_string())
                        })
                        .collect()
                })
                .unwrap_or_default();
            let netdevs = fs
                .read_dir(&base.join("device/net"))
                .map(|d| d.iter().map(|n| n.to_string_lossy().into_owned()).collect())
                .unwrap_or_default();
            Nic {
                name,
                numa_node: place
                    .as_ref()
                    .and_then(|p| read_int(fs, &p.resolved.join("numa_node")).get().copied()),
                host_bridge: place.and_then(|p| p.host_bridge),
                address,
                path,
                link_layers,
                netdevs,
            }
        })
        .collect();
    Fact::value(INFINIBAND_DIR, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A type-1 header with a capability list: `caps` are (offset, id, extra bytes).
    fn bridge(port_type: u8, ext: &[(usize, u16, usize)], len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[0..4].copy_from_slice(&[0xb5, 0x10, 0x16, 0x97]);
        b[0x06] = 0x10;
        b[0x0e] = 0x01;
        b[0x34] = 0x40;
        // PM at 0x40 → PCIe at 0x68, as the PLX PEX 9716 downstream port has them.
        b[0x40] = 0x01;
        b[0x41] = 0x68;
        b[0x68] = 0x10;
        b[0x69] = 0x00;
        b[0x6a] = (port_type << 4) | 0x2;
        for &(at, id, next) in ext {
            if at + 4 <= len {
                let h = id as u32 | (1 << 16) | ((next as u32) << 20);
                b[at..at + 4].copy_from_slice(&h.to_le_bytes());
            }
        }
        b
    }

    fn set_acs(b: &mut [u8], at: usize, cap: u16, ctl: u16) {
        b[at + 4..at + 6].copy_from_slice(&cap.to_le_bytes());
        b[at + 6..at + 8].copy_from_slice(&ctl.to_le_bytes());
    }

    #[test]
    fn finds_acs_behind_other_extended_capabilities() {
        // The PEX 9716's list: DSN, AER at 0xfb4, then back down to ACS at 0xf24.
        let mut b = bridge(
            6,
            &[
                (0x100, 0x3, 0xfb4),
                (0xfb4, 0x1, 0x148),
                (0x148, 0x2, 0xf24),
                (0xf24, 0xd, 0),
            ],
            4096,
        );
        set_acs(&mut b, 0xf24, 0x7f, 0x1d);
        let c = parse_config(&b).unwrap();
        assert_eq!(c.port_type, Some(6));
        let AcsRead::Found(acs) = c.acs else {
            panic!("{:?}", c.acs)
        };
        assert_eq!(acs.offset, 0xf24);
        assert!(acs.redirects());
        assert_eq!(
            acs.control_names(),
            ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"]
        );
    }

    #[test]
    fn acs_present_but_off_does_not_redirect() {
        let mut b = bridge(4, &[(0x100, 0x1, 0x140), (0x140, 0xd, 0)], 4096);
        set_acs(&mut b, 0x140, 0x0f, 0);
        let AcsRead::Found(acs) = parse_config(&b).unwrap().acs else {
            panic!()
        };
        assert!(!acs.redirects());
    }

    #[test]
    fn no_acs_capability_is_absent() {
        let b = bridge(5, &[(0x100, 0x3, 0xfb4), (0xfb4, 0x1, 0)], 4096);
        assert_eq!(parse_config(&b).unwrap().acs, AcsRead::Absent);
    }

    #[test]
    fn short_reads_are_unknown_never_off() {
        let b = bridge(6, &[], 4096);
        match parse_config(&b[..64]).unwrap().acs {
            AcsRead::Unknown(MissingReason::PermissionDenied, d) => {
                assert!(d.contains("root only"), "{d}")
            }
            other => panic!("{other:?}"),
        }
        // 256 bytes as root: no extended config access at all.
        let c = parse_config(&b[..256]).unwrap();
        assert_eq!(c.port_type, Some(6));
        match c.acs {
            AcsRead::Unknown(MissingReason::Unreadable, d) => {
                assert!(d.contains("MMCONFIG"), "{d}")
            }
            other => panic!("{other:?}"),
        }
        // Below the header nothing is said at all.
        assert!(parse_config(&b[..40]).is_err());
        assert!(parse_config(&[]).is_err());
    }

    #[test]
    fn a_lost_device_reads_all_ones() {
        let (reason, detail) = parse_config(&[0xff; 4096]).unwrap_err();
        assert_eq!(reason, MissingReason::Unreadable);
        assert!(detail.contains("gone"), "{detail}");
    }

    #[test]
    fn loops_and_wild_pointers_end() {
        let b = bridge(6, &[(0x100, 0x1, 0x200), (0x200, 0x2, 0x100)], 4096);
        assert!(matches!(
            parse_config(&b).unwrap().acs,
            AcsRead::Unknown(MissingReason::Malformed, ref d) if d.contains("loops")
        ));
        // A self-loop, a pointer past a 512-byte read, an ACS cut off at the end.
        let b = bridge(6, &[(0x100, 0x1, 0x100)], 4096);
        assert!(matches!(
            parse_config(&b).unwrap().acs,
            AcsRead::Unknown(..)
        ));
        let b = bridge(6, &[(0x100, 0x1, 0x800)], 512);
        assert!(matches!(
            parse_config(&b).unwrap().acs,
            AcsRead::Unknown(..)
        ));
        let b = bridge(6, &[(0x1fc, 0xd, 0)], 0x200);
        let mut b2 = b.clone();
        b2[0x100..0x104].copy_from_slice(&(0x1u32 | (0x1fc << 20)).to_le_bytes());
        assert!(matches!(
            parse_config(&b2).unwrap().acs,
            AcsRead::Unknown(_, ref d) if d.contains("cut off")
        ));
        // A classic list that loops, and a pointer into the header.
        let mut b = bridge(6, &[], 4096);
        b[0x41] = 0x40;
        b[0x40] = 0x01;
        assert_eq!(parse_config(&b).unwrap().port_type, None);
        b[0x34] = 0x04;
        assert_eq!(parse_config(&b).unwrap().port_type, None);
    }

    #[test]
    fn a_real_broken_extended_list_is_bounded() {
        // ATI RS690 host bridge (pciutils tests/broken-ecaps): 0x100 holds 0x79111002, a
        // misaligned next pointer the kernel masks to 0x790.
        let mut b = vec![0u8; 4096];
        b[0..4].copy_from_slice(&[0x02, 0x10, 0x10, 0x79]);
        b[0x06] = 0x20;
        b[0x100..0x104].copy_from_slice(&0x7911_1002u32.to_le_bytes());
        b[0x790..0x794].copy_from_slice(&0x40d0_0000u32.to_le_bytes());
        b[0x40c..0x410].copy_from_slice(&0x0000_0020u32.to_le_bytes());
        let c = parse_config(&b).unwrap();
        assert_eq!(c.port_type, None);
        assert_eq!(c.acs, AcsRead::Absent);
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in [0, 1, 63, 64, 65, 255, 256, 257, 300, 4095, 4096, 5000] {
            for _ in 0..200 {
                let b: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        seed as u8
                    })
                    .collect();
                let _ = parse_config(&b);
            }
        }
    }

    #[test]
    fn the_mode_comes_from_group_types_then_the_command_line() {
        let group = |kind: &str| IommuGroup {
            number: 1,
            kind: Fact::value("t", kind.to_string()),
            devices: vec![],
        };
        let units = Fact::value("u", vec![]);
        let none = Fact::value("c", vec![]);
        assert_eq!(
            iommu_mode(&units, &[group("DMA-FQ")], &none).0,
            IommuMode::Translated
        );
        assert_eq!(
            iommu_mode(&units, &[group("identity")], &none).0,
            IommuMode::Passthrough
        );
        assert_eq!(iommu_mode(&units, &[], &none).0, IommuMode::Off);
        let off = Fact::value("c", cmdline_flags("ro quiet intel_iommu=off"));
        let some = Fact::value(
            "u",
            vec![IommuUnit {
                name: "dmar0".into(),
                kind: "intel_vtd".into(),
            }],
        );
        assert_eq!(iommu_mode(&some, &[], &off).0, IommuMode::Off);
        assert_eq!(iommu_mode(&some, &[], &none).0, IommuMode::Unknown);
        assert_eq!(
            cmdline_flags("BOOT_IMAGE=/vmlinuz iommu=pt pci=noacs quiet"),
            ["iommu=pt", "pci=noacs"]
        );
    }
}
