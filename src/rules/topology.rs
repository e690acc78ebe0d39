//! GD072: PCIe Access Control Services redirect peer traffic between GPUs behind a PCIe
//! switch up to the root complex. GD073: the IOMMU translates DMA on a multi-GPU host, and
//! GPUs share an IOMMU group.
//!
//! NCCL's troubleshooting guide (docs.nvidia.com/deeplearning/nccl/user-guide/docs/
//! troubleshooting.html, "PCI Access Control Services (ACS)"): IO virtualization (VT-d,
//! IOMMU) can interfere with GPU Direct by redirecting all PCI point-to-point traffic to
//! the CPU root complex, causing a significant performance reduction or even a hang; if PCI
//! switches have ACS enabled it needs to be disabled (BIOS, or `setpci -s BDF
//! ECAP_ACS+0x6.w=0000` after each boot). Linux turns ACS redirect on whenever an IOMMU is
//! active (drivers/pci/pci.c pci_enable_acs, requested by the VT-d/AMD-Vi drivers) and
//! clears it for the ports named in `pci=disable_acs_redir=` (Linux 5.1+,
//! Documentation/admin-guide/kernel-parameters.txt).
//!
//! One verdict per fact: a redirecting bridge between two GPUs is GD072's; GD073's warning
//! about the translating IOMMU speaks only when GD072 does not (GD072's fixes then include
//! the IOMMU's). GPUs sharing an IOMMU group are a separate fact (GD073 info).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::topology::{IommuMode, Topology};
use crate::findings::{Finding, Severity, Shell};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;
use crate::topology::GpuPair;

pub const RULE: Rule = Rule {
    name: "topology",
    codes: &[codes::GD072, codes::GD073],
    views: &[super::View::Devices],
    checks: "no PCIe bridge between two GPUs redirects their peer traffic (ACS), and the IOMMU does not translate peer traffic on a multi-GPU host",
    judges: &[SubjectKind::Topology],
    run,
};

/// The topology facts, or why they say nothing about GPU pairs here.
fn multi_gpu(snap: &Snapshot) -> Result<(&Topology, Vec<GpuPair>), Outcome> {
    if snap.is_wsl() {
        return Err(Outcome::NotApplicable(
            "WSL shows no PCI topology of the GPUs".into(),
        ));
    }
    let Some(topo) = &snap.topology else {
        return Err(Outcome::NotApplicable(
            "the topology probe did not run".into(),
        ));
    };
    let gpus = match topo.gpus.get() {
        Some(g) => g,
        None => {
            let why = topo
                .gpus
                .missing_info()
                .map(|m| m.detail.clone())
                .unwrap_or_default();
            return Err(Outcome::NotApplicable(format!(
                "the GPUs' PCI paths could not be read ({why})"
            )));
        }
    };
    if gpus.is_empty() && snap.place().is_contained() && snap.gpu_count().is_some() {
        return Err(Outcome::NotApplicable(
            "inside a container that does not show the host's PCI devices under /sys".into(),
        ));
    }
    if gpus.len() < 2 {
        return Err(Outcome::NotApplicable(format!(
            "{} NVIDIA GPU(s) on the PCI bus: peer-to-peer needs two",
            gpus.len()
        )));
    }
    Ok((topo, snap.gpu_pairs()))
}

fn run(snap: &Snapshot) -> Outcome {
    let (topo, pairs) = match multi_gpu(snap) {
        Ok(t) => t,
        Err(na) => return na,
    };
    let mut out = Vec::new();
    let acs = acs_redirect(snap, topo, &pairs);
    let acs_spoke = matches!(&acs, Ok(Some(_)));
    match acs {
        Ok(Some(f)) => out.push(f),
        Ok(None) => {}
        Err(unknown) => {
            if let Some(f) = iommu_translates(snap, topo, &pairs) {
                out.push(f);
            }
            out.extend(shared_groups(topo));
            // Nothing else to say: the ACS state is what is unknown.
            if out.is_empty() {
                return Outcome::NotApplicable(unknown);
            }
            return Outcome::Checked(out);
        }
    }
    if !acs_spoke {
        out.extend(iommu_translates(snap, topo, &pairs));
    }
    out.extend(shared_groups(topo));
    Outcome::Checked(out)
}

/// A bridge as a finding names it: address, what it is, its id and ACS control bits.
fn bridge_words(topo: &Topology, address: &str) -> (String, String) {
    let Some(b) = topo.bridges.iter().find(|b| b.address == address) else {
        return (address.to_string(), String::new());
    };
    let bits = b
        .acs
        .get()
        .and_then(|a| a.as_ref())
        .map(|a| format!("ACSCtl {}", a.control_names().join("+ ") + "+"))
        .unwrap_or_default();
    let id =
        b.id.as_deref()
            .map(|i| format!(" [{i}]"))
            .unwrap_or_default();
    (
        format!("{address} ({}{id}): {bits}", b.kind.describe()),
        b.acs.source.clone(),
    )
}

fn pair_words(p: &GpuPair) -> String {
    format!(
        "{} ↔ {}",
        p.a.label(),
        p.b.label().trim_start_matches("GPU ")
    )
}

/// GD072. Err: the ACS state of a bridge between GPU pairs could not be read.
fn acs_redirect(
    snap: &Snapshot,
    topo: &Topology,
    pairs: &[GpuPair],
) -> Result<Option<Finding>, String> {
    let affected: Vec<&GpuPair> = pairs
        .iter()
        .filter(|p| p.over_pcie() && p.link.is_some_and(|l| l.stays_below_root()))
        .filter(|p| !p.acs_redirecting.is_empty())
        .collect();
    if affected.is_empty() {
        let unknown: Vec<&str> = pairs
            .iter()
            .filter(|p| p.over_pcie() && p.link.is_some_and(|l| l.stays_below_root()))
            .flat_map(|p| p.acs_unknown.iter().map(String::as_str))
            .collect();
        if let Some(first) = unknown.first() {
            let why = topo
                .bridges
                .iter()
                .find(|b| b.address == *first)
                .and_then(|b| b.acs.missing_info())
                .map(|m| m.detail.clone())
                .unwrap_or_default();
            let mut names = unknown.clone();
            names.sort_unstable();
            names.dedup();
            return Err(format!(
                "the ACS state of {} between GPUs is not known: {why}",
                names.join(", ")
            ));
        }
        return Ok(None);
    }
    let mut bridges: Vec<&str> = affected
        .iter()
        .flat_map(|p| p.acs_redirecting.iter().map(String::as_str))
        .collect();
    bridges.sort_unstable();
    bridges.dedup();
    let title = if affected.len() == 1 {
        format!(
            "ACS redirects peer-to-peer traffic between {} to the root complex",
            pair_words(affected[0])
        )
    } else {
        format!(
            "ACS redirects peer-to-peer traffic between {} GPU pairs behind PCIe switches to the root complex",
            affected.len()
        )
    };
    let failed = failed_peer_copies(snap, &affected);
    let consequence = if failed.is_empty() {
        "A warning: it slows or stalls multi-GPU jobs rather than stopping CUDA.".to_string()
    } else {
        format!(
            "An error here: the smoke test's peer copies across these ports failed ({}), and NCCL's peer-to-peer transport (PyTorch DDP/FSDP) takes the same path.",
            failed.join("; ")
        )
    };
    let severity = if failed.is_empty() {
        Severity::Warning
    } else {
        Severity::Error
    };
    let mut f = Finding::new(codes::GD072, severity, title).detail(format!(
        "These GPUs share PCIe switches, so their peer-to-peer traffic could go straight across them, but Access Control Services request/completion redirect is on at {} switch port(s) between them: every peer request goes up to the root complex (and through the IOMMU when it translates) and back down. NCCL and torch peer-to-peer copies then run at a fraction of the switch's bandwidth or hang (NCCL troubleshooting guide, \"PCI Access Control Services\"). {consequence}",
        bridges.len()
    ));
    for p in &affected {
        f = f.evidence(
            Subject::gpu_pair(&p.a.address, &p.b.address),
            format!(
                "{}: {} through {}",
                pair_words(p),
                p.link.map(|l| l.label()).unwrap_or_default(),
                p.acs_redirecting.join(", ")
            ),
            p.source.map(|s| s.describe()).unwrap_or("sysfs"),
        );
    }
    // Context, not evidence: the copy's own verdict is GD074's.
    for what in &failed {
        f = f.context(what.clone(), "smoke test (peer step)");
    }
    for b in &bridges {
        let (value, source) = bridge_words(topo, b);
        f = f.context(value, source);
    }
    f = f.fix_text("In the BIOS/firmware setup, disable ACS for the PCIe switch ports (on many boards: turn off \"ACS\", or IO virtualization / VT-d / AMD-Vi when no VM needs it)");
    let translated = topo.iommu.mode == IommuMode::Translated;
    f = f.fix_text(format!(
        "Keep it off across reboots (Linux 5.1+): add `pci=disable_acs_redir={}`{} to GRUB_CMDLINE_LINUX in /etc/default/grub, run `sudo update-grub` (or `sudo grub2-mkconfig -o /boot/grub2/grub.cfg`) and reboot",
        bridges.join(";"),
        if translated { " and `iommu=pt`" } else { "" }
    ));
    f = f.fix_cmd(
        "Turn redirect off now, until the next reboot (setpci, as NCCL's guide does)",
        acs_off_command(&bridges),
    );
    f = f.fix_cmd(
        "Until then, make NCCL copy through host memory instead (slower, but it does not hang)",
        "export NCCL_P2P_DISABLE=1",
    );
    if snap.place().is_contained() {
        f.detail.push_str(" The ports and the kernel command line belong to the host: the fixes are for whoever runs it.");
    }
    Ok(Some(f))
}

/// The setpci command that clears the ACS control register of `ports` until the next boot
/// (GD072's fix, and GD074's when a peer copy failed across them).
pub(crate) fn acs_off_command<S: AsRef<str>>(ports: &[S]) -> Shell {
    let ports: Vec<&str> = ports.iter().map(AsRef::as_ref).collect();
    match ports.as_slice() {
        [one] => crate::sh!("sudo setpci -s {} ECAP_ACS+6.w=0000", one),
        many => crate::sh!(
            "for port in {}; do sudo setpci -s \"$port\" ECAP_ACS+6.w=0000; done",
            many
        ),
    }
}

/// The smoke test's peer copies that failed or hung between the given pairs ("CUDA device
/// 0 → 1 hung"): they turn GD072 from what will hurt into what failed.
fn failed_peer_copies(snap: &Snapshot, affected: &[&GpuPair]) -> Vec<String> {
    let Some(smoke) = &snap.smoke else {
        return Vec::new();
    };
    smoke
        .peer_faults()
        .into_iter()
        .filter_map(|(p, fault)| {
            let pair = snap.gpu_pair(p.from_bus_id.as_deref()?, p.to_bus_id.as_deref()?)?;
            affected
                .iter()
                .any(|a| a.a == pair.a && a.b == pair.b)
                .then(|| format!("{} {}", p.label(), fault.describe()))
        })
        .collect()
}

/// The kernel option that turns the IOMMU off on this CPU's vendor, from its units' names.
fn iommu_off_flag(topo: &Topology) -> &'static str {
    let amd = topo
        .iommu
        .units
        .get()
        .is_some_and(|u| u.iter().any(|u| u.kind == "amd_vi"));
    if amd {
        "amd_iommu=off"
    } else {
        "intel_iommu=off"
    }
}

/// GD073 warning: DMA translated by the IOMMU on a host whose GPUs would talk over PCIe.
fn iommu_translates(snap: &Snapshot, topo: &Topology, pairs: &[GpuPair]) -> Option<Finding> {
    if topo.iommu.mode != IommuMode::Translated {
        return None;
    }
    let pcie_pairs = pairs.iter().filter(|p| p.over_pcie()).count();
    if pcie_pairs == 0 {
        return None;
    }
    let kinds: Vec<String> = topo
        .iommu
        .groups
        .iter()
        .filter_map(|g| Some(format!("group {}: {}", g.number, g.kind.get()?)))
        .collect();
    let gpus = topo.gpus.get().map_or(0, Vec::len);
    let mut f = Finding::new(
        codes::GD073,
        Severity::Warning,
        format!("The IOMMU translates DMA on a host with {gpus} GPUs: peer-to-peer traffic goes through it"),
    )
    .detail(format!(
        "{pcie_pairs} GPU pair(s) would exchange peer-to-peer traffic over PCIe, and the IOMMU is in translation mode (DMA domains): Linux enables ACS redirect on the ports it manages, peer requests are sent to the root complex to be translated, and NCCL's troubleshooting guide names IO virtualization as a cause of much lower bandwidth or hangs. Passthrough (`iommu=pt`) keeps the IOMMU for VMs and VFIO while devices of the host use physical addresses. A warning: it slows multi-GPU jobs rather than stopping them."
    ))
    .evidence(
        Subject::Iommu,
        format!("mode {} ({})", topo.iommu.mode.as_str(), kinds.join(", ")),
        topo.iommu.mode_source.clone(),
    );
    if let Some(c) = topo.iommu.cmdline.get() {
        f = f.context(
            format!(
                "kernel command line: {}",
                if c.is_empty() {
                    "no IOMMU option".to_string()
                } else {
                    c.join(" ")
                }
            ),
            topo.iommu.cmdline.source.clone(),
        );
    }
    f = f
        .fix_text("Add `iommu=pt` to GRUB_CMDLINE_LINUX in /etc/default/grub, run `sudo update-grub` (or `sudo grub2-mkconfig -o /boot/grub2/grub.cfg`) and reboot: passthrough for the host's devices, translation kept for VMs")
        .fix_text(format!(
            "Where no VM or VFIO device needs the IOMMU, turn it off instead: `{}` on the kernel command line (then reboot), or disable VT-d / AMD-Vi in the BIOS",
            iommu_off_flag(topo)
        ));
    if snap.place().is_contained() {
        f.detail
            .push_str(" The IOMMU belongs to the host: the fixes are for whoever runs it.");
    }
    Some(f)
}

/// GD073 info: GPUs in one IOMMU group (no ACS isolation between them).
fn shared_groups(topo: &Topology) -> Vec<Finding> {
    if matches!(topo.iommu.mode, IommuMode::Off) {
        return Vec::new();
    }
    let gpus: Vec<&str> = topo
        .gpus
        .get()
        .map(|g| g.iter().map(|g| g.address.as_str()).collect())
        .unwrap_or_default();
    topo.iommu
        .groups
        .iter()
        .filter_map(|g| {
            let members: Vec<&str> = g
                .devices
                .iter()
                .map(String::as_str)
                .filter(|d| gpus.contains(d))
                .collect();
            if members.len() < 2 {
                return None;
            }
            let others: Vec<&str> = g
                .devices
                .iter()
                .map(String::as_str)
                .filter(|d| !gpus.contains(d))
                .collect();
            let mut f = Finding::new(
                codes::GD073,
                Severity::Info,
                format!(
                    "GPUs {} share IOMMU group {}",
                    members.join(", "),
                    g.number
                ),
            )
            .detail("The kernel put these GPUs in one IOMMU group because nothing between them isolates their traffic (no ACS on the switch ports, or a device that cannot be isolated): peer-to-peer between them can go straight across the switch, and VFIO can only pass them to a virtual machine together, with every other device of the group. Context for GPU passthrough and isolation, not a fault.")
            .context(
                format!(
                    "group {}: {}{}",
                    g.number,
                    g.devices.join(", "),
                    g.kind.get().map(|k| format!(" (type {k})")).unwrap_or_default()
                ),
                format!("{}/{}/devices", crate::facts::topology::IOMMU_GROUPS_DIR, g.number),
            );
            if !others.is_empty() {
                f = f.context(
                    format!("also in the group: {}", others.join(", ")),
                    format!("{}/{}/devices", crate::facts::topology::IOMMU_GROUPS_DIR, g.number),
                );
            }
            for pair in members.windows(2) {
                f = f.evidence(
                    Subject::gpu_pair(pair[0], pair[1]),
                    format!("IOMMU group {}", g.number),
                    format!("{}/{}/devices", crate::facts::topology::IOMMU_GROUPS_DIR, g.number),
                );
            }
            Some(f)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fact::{Fact, MissingReason};
    use crate::facts::topology::{Acs, Bridge, BridgeKind, Iommu, IommuGroup, IommuUnit, TopoGpu};
    use crate::testing::*;

    fn gpu(addr: &str, path: &[&str], group: Option<u32>) -> TopoGpu {
        TopoGpu {
            address: addr.into(),
            host_bridge: Some("pci0000:00".into()),
            path: path.iter().map(|s| s.to_string()).collect(),
            source: format!("/sys/devices/pci0000:00/{addr}"),
            numa_node: Fact::value("numa_node", 0),
            local_cpulist: Fact::value("local_cpulist", "0-15".into()),
            iommu_group: group,
        }
    }

    fn bridge(addr: &str, kind: BridgeKind, control: Option<u16>) -> Bridge {
        Bridge {
            address: addr.into(),
            id: Some("10b5:9716".into()),
            kind,
            acs: Fact::value(
                format!("/sys/devices/pci0000:00/{addr}/config"),
                control.map(|control| Acs {
                    offset: 0xf24,
                    capability: 0x7f,
                    control,
                }),
            ),
        }
    }

    /// healthy()'s two GPUs (0000:01:00.0, 0000:02:00.0) behind one PLX switch whose
    /// downstream ports have ACS redirect on, IOMMU in DMA-FQ mode, one group each.
    pub(crate) fn acs_switch() -> Snapshot {
        let mut s = healthy();
        let (rp, us, d1, d2) = (
            "0000:00:01.0",
            "0000:10:00.0",
            "0000:11:08.0",
            "0000:11:10.0",
        );
        s.topology = Some(Topology {
            gpus: Fact::value(
                "/sys/bus/pci/devices",
                vec![
                    gpu(&bus_id(0), &[rp, us, d1], Some(20)),
                    gpu(&bus_id(1), &[rp, us, d2], Some(21)),
                ],
            ),
            bridges: vec![
                bridge(rp, BridgeKind::RootPort, Some(0x1d)),
                bridge(us, BridgeKind::SwitchUpstream, None),
                bridge(d1, BridgeKind::SwitchDownstream, Some(0x1d)),
                bridge(d2, BridgeKind::SwitchDownstream, Some(0x1d)),
            ],
            iommu: Iommu {
                units: Fact::value(
                    "/sys/class/iommu",
                    vec![IommuUnit {
                        name: "dmar0".into(),
                        kind: "intel_vtd".into(),
                    }],
                ),
                groups: vec![
                    IommuGroup {
                        number: 20,
                        kind: Fact::value("t", "DMA-FQ".into()),
                        devices: vec![bus_id(0)],
                    },
                    IommuGroup {
                        number: 21,
                        kind: Fact::value("t", "DMA-FQ".into()),
                        devices: vec![bus_id(1)],
                    },
                ],
                cmdline: Fact::value("/proc/cmdline", vec!["intel_iommu=on".into()]),
                mode: IommuMode::Translated,
                mode_source: "groups".into(),
            },
            nics: Fact::value("/sys/class/infiniband", vec![]),
            aer: Vec::new(),
            aer_again: None,
        });
        s
    }

    fn topo(s: &mut Snapshot) -> &mut Topology {
        s.topology.as_mut().unwrap()
    }

    fn findings(o: Outcome) -> Vec<Finding> {
        match o {
            Outcome::Checked(f) => f,
            Outcome::NotApplicable(r) => panic!("not applicable: {r}"),
        }
    }

    #[test]
    fn redirect_on_a_switch_is_one_warning_naming_the_ports() {
        let f = findings(run(&acs_switch()));
        assert_eq!(f.len(), 1, "{f:?}");
        let f = &f[0];
        assert_eq!(
            (f.code.as_str(), f.severity),
            (codes::GD072, Severity::Warning)
        );
        assert!(
            f.title.contains("GPU 0 (0000:01:00.0) ↔ 1 (0000:02:00.0)"),
            "{}",
            f.title
        );
        // The root port is above the switch: not on the pair's path.
        let cmd = f.fix[2].command.as_deref().unwrap();
        assert_eq!(
            cmd,
            "for port in 0000:11:08.0 0000:11:10.0; do sudo setpci -s \"$port\" ECAP_ACS+6.w=0000; done"
        );
        assert!(
            f.fix[1]
                .text
                .contains("pci=disable_acs_redir=0000:11:08.0;0000:11:10.0` and `iommu=pt`"),
            "{}",
            f.fix[1].text
        );
        assert_eq!(
            f.fix[3].command.as_deref(),
            Some("export NCCL_P2P_DISABLE=1")
        );
        assert!(f.evidence.iter().any(|e| e.value.contains("0000:11:08.0 (PCIe switch downstream port [10b5:9716]): ACSCtl SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+")), "{:?}", f.evidence);
    }

    #[test]
    fn without_redirect_the_translating_iommu_speaks() {
        let mut s = acs_switch();
        for b in &mut topo(&mut s).bridges {
            b.acs = Fact::value(
                "c",
                Some(Acs {
                    offset: 0xf24,
                    capability: 0x7f,
                    control: 0x01,
                }),
            );
        }
        let f = findings(run(&s));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].code.as_str(), f[0].severity),
            (codes::GD073, Severity::Warning)
        );
        assert!(
            f[0].fix[1].text.contains("intel_iommu=off"),
            "{:?}",
            f[0].fix
        );
        topo(&mut s).iommu.mode = IommuMode::Passthrough;
        assert!(findings(run(&s)).is_empty());
    }

    #[test]
    fn nvlink_pairs_are_not_judged_for_acs() {
        let mut s = acs_switch();
        for (i, peer) in [(0, 1), (1, 0)] {
            let g = nvml_gpu(&mut s, i);
            g.nvlinks = crate::facts::nvml::Field::Value(vec![true; 4]);
            g.nvlink_remotes =
                crate::facts::nvml::Field::Value(vec![Some(format!("0000{}", bus_id(peer))); 4]);
        }
        let pairs = s.gpu_pairs();
        assert_eq!(pairs[0].link.unwrap().label(), "NV4");
        // NVLink between the only pair: no PCIe peer traffic, nothing to say.
        assert!(findings(run(&s)).is_empty());
    }

    #[test]
    fn unreadable_acs_is_not_applicable_never_off() {
        let mut s = acs_switch();
        topo(&mut s).iommu.mode = IommuMode::Off;
        for b in &mut topo(&mut s).bridges {
            b.acs = Fact::missing("c", MissingReason::PermissionDenied, "only 64 bytes of config space were readable: the extended space, where ACS is, is readable by root only");
        }
        match run(&s) {
            Outcome::NotApplicable(r) => assert!(r.contains("readable by root only"), "{r}"),
            Outcome::Checked(f) => panic!("{f:?}"),
        }
    }

    #[test]
    fn shared_groups_are_info() {
        let mut s = acs_switch();
        for b in &mut topo(&mut s).bridges {
            b.acs = Fact::value("c", None);
        }
        let t = topo(&mut s);
        t.iommu.mode = IommuMode::Passthrough;
        t.iommu.groups = vec![IommuGroup {
            number: 7,
            kind: Fact::value("t", "identity".into()),
            devices: vec![bus_id(0), "0000:01:00.1".into(), bus_id(1)],
        }];
        let f = findings(run(&s));
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].code.as_str(), f[0].severity),
            (codes::GD073, Severity::Info)
        );
        assert!(f[0].title.contains("share IOMMU group 7"));
    }

    #[test]
    fn not_applicable_with_fewer_than_two_gpus_or_no_probe() {
        let mut s = acs_switch();
        if let crate::fact::Outcome::Value(g) = &mut topo(&mut s).gpus.outcome {
            g.pop();
        }
        assert!(matches!(run(&s), Outcome::NotApplicable(r) if r.contains("two")));
        assert!(matches!(run(&healthy()), Outcome::NotApplicable(_)));
        let mut s = acs_switch();
        make_wsl(&mut s);
        assert!(matches!(run(&s), Outcome::NotApplicable(r) if r.contains("WSL")));
    }

    #[test]
    fn in_a_container_the_fixes_are_the_hosts() {
        let mut s = acs_switch();
        in_container(&mut s, "docker");
        let (_, found) = crate::rules::evaluate(&s, &|c: &str| c == codes::GD072);
        let f = &found[0];
        assert!(
            f.fix
                .iter()
                .all(|x| x.command.as_deref().is_none_or(|c| !c.contains("setpci"))),
            "{:?}",
            f.fix
        );
        assert!(
            f.fix.iter().any(|x| x.text.starts_with("On the host")
                && x.text.contains("setpci -s \"$port\"")
                && x.text.contains("0000:11:08.0")),
            "{:?}",
            f.fix
        );
    }
}
