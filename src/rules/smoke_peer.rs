//! GD074: a peer-to-peer copy between two GPUs hung, failed or delivered wrong data, or
//! peer access was offered and could not be enabled. GD075: peer copies far below what the
//! pair's link should carry, or CUDA and NVML disagreeing about peer access.

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::nvml::{Gpu, NvmlSystem};
use crate::facts::smoke::{
    link, nvml_gpu, CudaError, PeerCopy, PeerFault, SmokeResult, SmokeRun, Step,
};
use crate::facts::topology::IommuMode;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;
use crate::topology::{GpuPair, LinkClass};

pub const RULE: Rule = Rule {
    name: "smoke_peer",
    codes: &[codes::GD074, codes::GD075],
    views: &[super::View::Smoke],
    checks: "peer-to-peer copies between every GPU pair finish, arrive intact, and reach a quarter of what the pair's link should carry",
    judges: &[SubjectKind::SmokePeer],
    run,
};

/// PCIe peer copies reach 70–85 % of the narrower GPU link's theoretical bandwidth behind
/// one switch or root port; half of it is the lower bound a healthy pair meets.
pub const PCIE_SHARE: f64 = 0.5;
/// Across the CPUs' interconnect (NVML's common ancestor "system") peer copies are
/// forwarded by both sockets: half again.
pub const CROSS_SOCKET_SHARE: f64 = 0.5;
/// One NVLink per direction at its slowest generation (NVLink 1.0, P100): 20 GB/s. NVML
/// does not say how many of a GPU's links reach a given peer (on a mesh some pairs have
/// none and go over PCIe), so an NVLink pair is held to at least the PCIe bound or one link.
pub const NVLINK_LINK_GBPS: f64 = 20.0;
/// Copies below this fraction of the lower bound are a warning: far enough below that a
/// busy GPU or timing noise does not explain it.
pub const SLOW_FRACTION: f64 = 0.25;

fn run(snap: &Snapshot) -> Outcome {
    let run = match super::smoke_run(snap) {
        Ok(r) => r,
        Err(na) => return na,
    };
    if run.peers.is_empty() {
        return Outcome::NotApplicable("fewer than two GPUs reached the peer step".into());
    }
    let mut out = Vec::new();
    let hung = hung_seconds(snap);
    for p in &run.peers {
        if let Some(f) = failure(snap, p, hung) {
            out.push(f);
            continue;
        }
        let Some(sys) = snap.nvml_system() else {
            continue;
        };
        out.extend(disagreement(sys, run, p));
        out.extend(slow(snap, sys, run, p));
    }
    Outcome::Checked(out)
}

/// How long the worker waited before it was killed, when it timed out.
fn hung_seconds(snap: &Snapshot) -> Option<f64> {
    match &snap.smoke.as_ref()?.result {
        SmokeResult::TimedOut { seconds, .. } => Some(*seconds),
        _ => None,
    }
}

/// The timed-out worker could not be killed (stuck in the kernel driver).
fn unkillable(snap: &Snapshot) -> bool {
    matches!(
        snap.smoke.as_ref().map(|s| &s.result),
        Some(SmokeResult::TimedOut {
            unkillable: true,
            ..
        })
    )
}

/// A step's error, when it failed.
fn failed<T>(s: &Option<Step<T>>) -> Option<&CudaError> {
    match s {
        Some(Step::Failed { error, .. }) => Some(error),
        _ => None,
    }
}

fn subject(p: &PeerCopy) -> Subject {
    Subject::SmokePeer(p.from, p.to)
}

/// "0000:18:00.0 → 0000:19:00.0", as far as CUDA said.
fn buses(p: &PeerCopy) -> String {
    let b = |x: &Option<String>| x.clone().unwrap_or_else(|| "?".into());
    format!("{} → {}", b(&p.from_bus_id), b(&p.to_bus_id))
}

/// GD074 for one pair: a hang, a failed call, or wrong data.
fn failure(snap: &Snapshot, p: &PeerCopy, hung: Option<f64>) -> Option<Finding> {
    let (title, detail, evidence) = match p.fault(hung.is_some())? {
        PeerFault::Hung => {
            let seconds = hung.unwrap_or_default();
            let call = p.running.as_deref().unwrap_or("the peer step");
            (
                format!(
                    "Peer copy {} hung in {call} (no answer within {seconds:.1} s)",
                    p.label()
                ),
                format!("The driver never returned from a peer-to-peer call between these two GPUs. NCCL (and so PyTorch DDP/FSDP) uses the same peer-to-peer path for its all-reduce between them and will hang the same way, usually with no error, until its watchdog kills the job. Typical causes: PCIe Access Control Services on a switch port between the GPUs redirecting peer traffic to a root complex that drops it, an IOMMU translating DMA, or a GPU or switch in a bad state.{}", if unkillable(snap) { " The worker could not be killed: it is stuck inside the kernel driver, and the GPUs need a reset (`sudo nvidia-smi -r`) or a reboot before anything else runs on them." } else { "" }),
                format!("stopped in {call}"),
            )
        }
        PeerFault::AccessQueryFailed => {
            let error = failed(&p.can_access)?;
            (
                format!("{}: cuDeviceCanAccessPeer failed: {}", p.label(), error.name),
                "The driver could not say whether these GPUs reach each other's memory; NCCL asks the same question before every peer-to-peer connection.".to_string(),
                error.to_string(),
            )
        }
        PeerFault::EnableFailed => {
            let error = failed(&p.enable)?;
            (
                format!(
                    "{}: peer access is offered but cannot be enabled: {}",
                    p.label(),
                    error.name
                ),
                format!(
                    "cuDeviceCanAccessPeer said yes and cuCtxEnablePeerAccess failed{}. Programs that enable peer access (NCCL, PyTorch's peer copies) fail or fall back here.",
                    match error.code {
                        711 => ": the GPU has reached its limit of peer mappings (8 on most GPUs), so processes spanning more GPUs than that cannot map them all",
                        217 => ": the driver refuses peer access between these devices although it reported it possible",
                        _ => "",
                    }
                ),
                error.to_string(),
            )
        }
        PeerFault::CopyFailed => {
            let error = failed(&p.copy)?;
            (
                format!("{}: peer copy failed: {}", p.label(), error.name),
                "cuMemcpyPeerAsync between these GPUs (or the fill, stream or verify around it) returned an error. NCCL's peer-to-peer transport uses the same copies and will fail the same way.".to_string(),
                error.to_string(),
            )
        }
        PeerFault::WrongData => {
            let Some(Step::Ok(c)) = &p.copy else {
                return None;
            };
            (
                format!(
                    "Peer copy {} delivered wrong data: {} of {} words differ",
                    p.label(),
                    c.mismatches,
                    c.bytes / 4
                ),
                "The destination GPU did not receive what the source GPU sent. Gradients exchanged over this path are silently corrupted: training diverges or produces wrong models with no error. Typical causes: a PCIe switch or bridge with broken peer-to-peer forwarding, ACS or IOMMU settings that route peer traffic through a root complex that mangles it, or failing hardware.".to_string(),
                format!(
                    "{} mismatched words after {} copies of {} MiB",
                    c.mismatches,
                    c.iterations + 1,
                    c.bytes >> 20
                ),
            )
        }
    };
    let f = Finding::new(codes::GD074, Severity::Error, title)
        .detail(detail)
        .evidence(subject(p), evidence, "smoke test (peer step)")
        .context(buses(p), "cuDeviceGetPCIBusId");
    Some(peer_fixes(snap, p, f))
}

/// The topology's view of a peer pair (link class, the ports between them and their ACS
/// state), found by the pair's PCI bus ids.
pub(crate) fn topo_pair(snap: &Snapshot, p: &PeerCopy) -> Option<GpuPair> {
    snap.gpu_pair(p.from_bus_id.as_deref()?, p.to_bus_id.as_deref()?)
}

/// GD074's fixes, in order: the immediate workaround, then the cause the topology probe
/// saw on this pair's path (ACS redirect at named ports, an IOMMU translating DMA), else
/// what to check on the host.
pub(crate) fn peer_fixes(snap: &Snapshot, p: &PeerCopy, mut f: Finding) -> Finding {
    let on_host = if snap.place().is_contained() {
        "On the host (not in this container): "
    } else {
        ""
    };
    let pair = topo_pair(snap, p);
    let redirecting = pair
        .as_ref()
        .map(|g| g.acs_redirecting.clone())
        .unwrap_or_default();
    let iommu = snap.topology.as_ref().map(|t| t.iommu.mode);
    f = f.fix_cmd(
        "Work around it now: NCCL then moves data between the GPUs through host memory (slower, but correct)",
        "export NCCL_P2P_DISABLE=1",
    );
    if redirecting.is_empty() {
        f = f.fix_cmd(
            format!("{on_host}Check for PCIe Access Control Services on the bridges between {} (ACSCtl with ReqRedir+ or CmpltRedir+ sends peer traffic to the root complex); turn ACS off on those ports in the BIOS", buses(p)),
            "sudo lspci -vvv | grep -E '^[0-9a-f]|ACSCtl'",
        );
    } else {
        f.detail.push_str(&format!(
            " ACS request/completion redirect is on at {} between these two GPUs (GD072): that is the likely cause.",
            redirecting.join(", ")
        ));
        f = f.fix_cmd(
            format!("{on_host}Turn ACS redirect off at the ports between them until the next boot, then rerun the smoke test (GD072 has the permanent fix)"),
            super::topology::acs_off_command(&redirecting),
        );
    }
    match iommu {
        Some(IommuMode::Off | IommuMode::Passthrough) => {}
        Some(IommuMode::Translated) => {
            f = f.fix_text(format!("{on_host}The IOMMU translates DMA here (GD073): add `iommu=pt` to the kernel command line and reboot"));
        }
        _ => {
            f = f.fix_cmd(
                format!("{on_host}Check the IOMMU mode: DMA translation (intel_iommu=on or amd_iommu=on without iommu=pt) breaks peer-to-peer on many platforms"),
                "cat /proc/cmdline",
            );
        }
    }
    f.fix_cmd(
        "Look for the Xid, AER and DMAR errors the copy caused",
        "sudo dmesg | grep -i -E 'xid|aer|dmar|iommu'",
    )
    .fix_text("Update the NVIDIA driver and the system BIOS and PCIe switch firmware; peer-to-peer faults are often fixed there")
}

/// The NVML GPUs of the pair's two CUDA devices. None with MIG on either: CUDA then
/// enumerates MIG instances, which have no peer access, and NVML's pair facts are about
/// whole GPUs.
fn nvml_pair<'a>(sys: &'a NvmlSystem, run: &SmokeRun, p: &PeerCopy) -> Option<(&'a Gpu, &'a Gpu)> {
    let dev = |o: u32| run.devices.iter().find(|d| d.ordinal == o);
    let (a, b) = (nvml_gpu(sys, dev(p.from)?)?, nvml_gpu(sys, dev(p.to)?)?);
    let mig = |g: &Gpu| g.mig.enabled.get() == Some(&true);
    (!mig(a) && !mig(b)).then_some((a, b))
}

/// NVML's topology facts for two GPUs: (common ancestor, P2P read status).
fn nvml_topology<'a>(sys: &'a NvmlSystem, a: &Gpu, b: &Gpu) -> (Option<&'a str>, Option<&'a str>) {
    let t = sys
        .topology
        .iter()
        .find(|t| (t.a, t.b) == (a.index, b.index) || (t.b, t.a) == (a.index, b.index));
    (
        t.and_then(|t| t.common_ancestor.get()).map(String::as_str),
        t.and_then(|t| t.p2p_read.get()).map(String::as_str),
    )
}

/// NVML said where each of the GPU's NVLinks goes (nvmlDeviceGetNvLinkRemotePciInfo).
fn remotes_known(g: &Gpu) -> bool {
    g.nvlink_remotes.get().is_some()
}

fn has_nvlink(g: &Gpu) -> bool {
    g.nvlinks.get().is_some_and(|l| l.contains(&true))
}

/// What a pair's peer copies should at least reach, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// "NVLink", "PCIe gen5 x16".
    pub class: String,
    pub lower_gbps: f64,
    pub why: String,
}

/// The lower bound for the pair's link class. `link` is the topology's class of the pair
/// (NVLink count from NVML's remote PCI info, else the PCIe path); without it, NVML's
/// NVLink states and common ancestor decide. PCIe from the maximum generation and width of
/// both GPUs.
pub fn expected(
    a: &Gpu,
    b: &Gpu,
    common_ancestor: Option<&str>,
    class: Option<LinkClass>,
) -> Option<Expected> {
    let (la, lb) = (link(a)?, link(b)?);
    let narrow = if la.gbps <= lb.gbps { la } else { lb };
    let mut pcie = narrow.gbps * PCIE_SHARE;
    let mut why = format!(
        "{:.0} % of the narrower PCIe link (gen{} x{}, {:.1} GB/s)",
        PCIE_SHARE * 100.0,
        narrow.generation,
        narrow.width,
        narrow.gbps
    );
    let crosses_sockets = match class {
        Some(l) => l == LinkClass::Sys,
        None => common_ancestor == Some("system"),
    };
    if crosses_sockets {
        pcie *= CROSS_SOCKET_SHARE;
        why.push_str(", halved because the path crosses the CPUs' interconnect (SYS)");
    }
    match class {
        Some(LinkClass::Nvlink(n)) => {
            let links = NVLINK_LINK_GBPS * f64::from(n);
            return Some(Expected {
                class: format!("NVLink (NV{n})"),
                lower_gbps: pcie.max(links),
                why: format!("{n} NVLink(s) between them at least {NVLINK_LINK_GBPS:.0} GB/s each, and never less than the PCIe path's {why}"),
            });
        }
        // The NVLinks' far ends are known and none joins this pair (on a mesh, both
        // GPUs' links may go elsewhere): the PCIe bound.
        Some(_) if remotes_known(a) && remotes_known(b) => {}
        _ if has_nvlink(a) && has_nvlink(b) => {
            let lower = pcie.max(NVLINK_LINK_GBPS);
            return Some(Expected {
                class: "NVLink".into(),
                lower_gbps: lower,
                why: format!("both GPUs have active NVLinks: at least one link ({NVLINK_LINK_GBPS:.0} GB/s) and never less than the PCIe path's {why}"),
            });
        }
        _ => {}
    }
    Some(Expected {
        class: format!("PCIe gen{} x{}", narrow.generation, narrow.width),
        lower_gbps: pcie,
        why,
    })
}

/// GD075: copies under a quarter of the lower bound.
fn slow(snap: &Snapshot, sys: &NvmlSystem, run: &SmokeRun, p: &PeerCopy) -> Option<Finding> {
    let Some(Step::Ok(c)) = &p.copy else {
        return None;
    };
    // Smaller copies are dominated by the call's latency.
    if c.bytes < super::smoke_transfer::MIN_BYTES {
        return None;
    }
    let (a, b) = nvml_pair(sys, run, p)?;
    let (ancestor, _) = nvml_topology(sys, a, b);
    let e = expected(a, b, ancestor, topo_pair(snap, p).and_then(|g| g.link))?;
    let floor = e.lower_gbps * SLOW_FRACTION;
    if c.gbps >= floor {
        return None;
    }
    Some(
        Finding::new(
            codes::GD075,
            Severity::Warning,
            format!(
                "Peer copies {} reach only {:.1} GB/s: under a quarter of the {:.1} GB/s a pair on {} should at least carry",
                p.label(),
                c.gbps,
                e.lower_gbps,
                e.class
            ),
        )
        .detail(format!(
            "Expected at least {:.1} GB/s: {}. Below {:.0} % of that the path is not what the topology says: peer traffic redirected through the root complex (PCIe ACS), an IOMMU translating DMA, a link trained below its width or generation (GD034), or NVLinks down. NCCL's all-reduce between these GPUs runs at this speed, so multi-GPU training slows down with it.",
            e.lower_gbps,
            e.why,
            SLOW_FRACTION * 100.0
        ))
        .evidence(
            subject(p),
            format!("{:.1} GB/s (median of {} copies of {} MiB)", c.gbps, c.iterations, c.bytes >> 20),
            "smoke test (peer step)",
        )
        .context(
            format!(
                "GPU {} ↔ GPU {}: {}{}",
                a.index,
                b.index,
                e.class,
                ancestor.map_or(String::new(), |x| format!(", common ancestor {x}"))
            ),
            "NVML",
        )
        .context(buses(p), "cuDeviceGetPCIBusId")
        .fix_cmd("See how the driver connects the two GPUs (NV# is NVLink; PHB, NODE, SYS go through the host)", "nvidia-smi topo -m")
        .fix_cmd(
            "Check for PCIe Access Control Services redirecting peer traffic (ACSCtl with ReqRedir+ or CmpltRedir+)",
            "sudo lspci -vvv | grep -E '^[0-9a-f]|ACSCtl'",
        )
        .fix_cmd("Check the NVLinks are all up", "nvidia-smi nvlink --status"),
    )
}

/// GD075: cuDeviceCanAccessPeer and NVML's P2P read status disagree.
fn disagreement(sys: &NvmlSystem, run: &SmokeRun, p: &PeerCopy) -> Option<Finding> {
    let Some(Step::Ok(cuda)) = &p.can_access else {
        return None;
    };
    let (a, b) = nvml_pair(sys, run, p)?;
    let (_, read) = nvml_topology(sys, a, b);
    let read = read?;
    let nvml_ok = read == "ok";
    if *cuda == nvml_ok {
        return None;
    }
    let nvml_fact = format!("GPU {} ↔ GPU {}: P2P read {read}", a.index, b.index);
    let f = if *cuda {
        let proved = match &p.copy {
            Some(Step::Ok(c)) if c.verified => {
                format!(" and the copy arrived intact at {:.1} GB/s", c.gbps)
            }
            _ => String::new(),
        };
        Finding::new(
            codes::GD075,
            Severity::Info,
            format!("{}: CUDA offers peer access but NVML reports P2P read {read}", p.label()),
        )
        .detail(format!(
            "CUDA is believed: cuDeviceCanAccessPeer is the answer NCCL and PyTorch act on{proved}. NVML's P2P status is a separate report of the platform's capability (chipset and topology tables) and can be stale or conservative; tools that read it (nvidia-smi topo -p2p r) will show this pair as unsupported."
        ))
    } else {
        Finding::new(
            codes::GD075,
            Severity::Warning,
            format!("{}: no peer access although NVML reports P2P read supported", p.label()),
        )
        .detail("CUDA is believed: cuDeviceCanAccessPeer is the answer NCCL and PyTorch act on, so data between these GPUs is staged through host memory, which is slower and costs host memory bandwidth. NVML says the platform supports peer reads between them: something below the topology turns it off (a hypervisor that hides peer-to-peer from a VM, an IOMMU translating DMA, PCIe ACS, or a driver setting).")
        .fix_cmd("See the driver's peer-to-peer matrix", "nvidia-smi topo -p2p r")
        .fix_cmd(
            "Check for PCIe Access Control Services on the bridges between the GPUs",
            "sudo lspci -vvv | grep -E '^[0-9a-f]|ACSCtl'",
        )
    };
    Some(
        f.evidence(
            subject(p),
            format!("cuDeviceCanAccessPeer = {}", u8::from(*cuda)),
            "smoke test (peer step)",
        )
        .context(nvml_fact, "NVML")
        .context(buses(p), "cuDeviceGetPCIBusId"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::{Field, TopologyPair};
    use crate::facts::smoke::PeerBandwidth;
    use crate::testing::*;

    fn peer(s: &mut Snapshot, from: u32, to: u32) -> &mut PeerCopy {
        smoke_run_mut(s)
            .peers
            .iter_mut()
            .find(|p| p.from == from && p.to == to)
            .unwrap()
    }

    fn bandwidth(s: &mut Snapshot, from: u32, to: u32) -> &mut PeerBandwidth {
        match &mut peer(s, from, to).copy {
            Some(Step::Ok(c)) => c,
            _ => unreachable!(),
        }
    }

    fn topology(s: &mut Snapshot, ancestor: &str, read: &str) {
        nvml_sys(s).topology = vec![TopologyPair {
            a: 0,
            b: 1,
            common_ancestor: Field::Value(ancestor.into()),
            p2p_read: Field::Value(read.into()),
        }];
    }

    #[test]
    fn verified_copies_at_link_speed_are_clean() {
        let mut s = healthy();
        topology(&mut s, "node", "ok");
        assert_clean(run(&s));
    }

    #[test]
    fn a_hang_in_a_peer_stage_names_the_pair_and_is_the_one_verdict() {
        let mut s = healthy();
        let mut r = smoke_run();
        r.peers[1].finished = false;
        r.peers[1].copy = None;
        r.peers[1].running = Some("cuMemcpyPeerAsync".into());
        r.finished = false;
        smoke_probe(&mut s).result = SmokeResult::TimedOut {
            seconds: 30.0,
            run: r,
            stuck_at: vec!["peer copy CUDA device 1 → 0: cuMemcpyPeerAsync".into()],
            unkillable: false,
        };
        let f = only(run(&s), codes::GD074, Severity::Error);
        assert!(
            f.title
                .contains("Peer copy CUDA device 1 → 0 hung in cuMemcpyPeerAsync"),
            "{}",
            f.title
        );
        assert!(f.detail.contains("NCCL"), "{}", f.detail);
        assert_eq!(first_cmd(&f), "export NCCL_P2P_DISABLE=1");
        assert!(f
            .evidence
            .iter()
            .any(|e| e.fact == Some(Subject::SmokePeer(1, 0))));
    }

    #[test]
    fn wrong_data_and_a_failed_enable_are_errors() {
        let mut s = healthy();
        let c = bandwidth(&mut s, 0, 1);
        c.mismatches = 8;
        c.verified = false;
        let f = only(run(&s), codes::GD074, Severity::Error);
        assert!(
            f.title.contains("delivered wrong data: 8 of"),
            "{}",
            f.title
        );
        assert!(fixes_mention(&f, "ACSCtl"));
        let mut s = healthy();
        let p = peer(&mut s, 1, 0);
        p.enable = Some(Step::Failed {
            error: cuda_error("cuCtxEnablePeerAccess", 711, "CUDA_ERROR_TOO_MANY_PEERS"),
            detail: None,
        });
        p.copy = None;
        let f = only(run(&s), codes::GD074, Severity::Error);
        assert!(f
            .title
            .contains("cannot be enabled: CUDA_ERROR_TOO_MANY_PEERS"));
        assert!(f.detail.contains("limit of peer mappings"), "{}", f.detail);
    }

    #[test]
    fn fixes_for_the_host_say_so_in_a_container() {
        let mut s = healthy();
        in_container(&mut s, "docker");
        let c = bandwidth(&mut s, 0, 1);
        c.verified = false;
        c.mismatches = 1;
        let f = only(run(&s), codes::GD074, Severity::Error);
        assert!(fixes_mention(&f, "On the host (not in this container)"));
    }

    #[test]
    fn slow_copies_warn_below_a_quarter_of_the_lower_bound() {
        // Gen5 x16 (63.0 GB/s): PCIe lower bound 31.5, warning under 7.9 GB/s.
        let mut s = healthy();
        topology(&mut s, "node", "ok");
        bandwidth(&mut s, 0, 1).gbps = 8.0;
        assert_clean(run(&s));
        bandwidth(&mut s, 0, 1).gbps = 7.0;
        let f = only(run(&s), codes::GD075, Severity::Warning);
        assert!(
            f.title.contains("31.5 GB/s a pair on PCIe gen5 x16"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "nvidia-smi topo -m");
        // Across the sockets the bound halves: 7.0 GB/s is then above 3.9.
        topology(&mut s, "system", "ok");
        assert_clean(run(&s));
        // NVLink on both: never under one link's 20 GB/s, nor the PCIe bound.
        topology(&mut s, "node", "ok");
        for i in 0..2 {
            crate::testing::nvml_gpu(&mut s, i).nvlinks = Field::Value(vec![true; 18]);
        }
        let f = only(run(&s), codes::GD075, Severity::Warning);
        assert!(f.title.contains("a pair on NVLink"), "{}", f.title);
        // Copies too small to fill a link are not judged.
        bandwidth(&mut s, 0, 1).bytes = 4 << 20;
        assert_clean(run(&s));
    }

    #[test]
    fn the_lower_bound_per_link_class() {
        let (a, mut b) = (gpu(0), gpu(1));
        let e = expected(&a, &b, Some("node"), None).unwrap();
        assert!((e.lower_gbps - 31.5).abs() < 0.1, "{e:?}");
        b.pcie.max_generation = Field::Value(4);
        let e = expected(&a, &b, Some("system"), None).unwrap();
        assert!((e.lower_gbps - 31.5 / 4.0).abs() < 0.1, "{e:?}");
        assert_eq!(e.class, "PCIe gen4 x16");
        b.pcie.max_width = Field::NotSupported;
        assert_eq!(expected(&a, &b, None, None), None);
    }

    #[test]
    fn the_topology_class_decides_over_nvml_link_states() {
        let (mut a, mut b) = (gpu(0), gpu(1));
        a.nvlinks = Field::Value(vec![true; 4]);
        b.nvlinks = Field::Value(vec![true; 4]);
        // NV4: four links of at least 20 GB/s.
        let e = expected(&a, &b, Some("node"), Some(LinkClass::Nvlink(4))).unwrap();
        assert_eq!(e.class, "NVLink (NV4)");
        assert!((e.lower_gbps - 80.0).abs() < 0.1, "{e:?}");
        // NVML's common ancestor alone does not rule NVLink out: at least one link.
        let e = expected(&a, &b, Some("node"), Some(LinkClass::Node)).unwrap();
        assert_eq!(e.class, "NVLink");
        // Both GPUs' links go elsewhere (a mesh): the PCIe bound.
        a.nvlink_remotes = Field::Value(vec![Some("0000:99:00.0".into()); 4]);
        b.nvlink_remotes = Field::Value(vec![Some("0000:98:00.0".into()); 4]);
        let e = expected(&a, &b, Some("node"), Some(LinkClass::Node)).unwrap();
        assert!(e.class.starts_with("PCIe"), "{e:?}");
        assert!((e.lower_gbps - 31.5).abs() < 0.1, "{e:?}");
        // SYS from the topology halves it even where NVML's ancestor is unknown.
        let e = expected(&a, &b, None, Some(LinkClass::Sys)).unwrap();
        assert!((e.lower_gbps - 31.5 / 2.0).abs() < 0.1, "{e:?}");
        // Without a class, NVML's link states: at least one link.
        let e = expected(&a, &b, Some("node"), None).unwrap();
        assert_eq!(e.class, "NVLink");
    }

    #[test]
    fn cuda_and_nvml_disagreeing() {
        // CUDA yes, NVML no: CUDA is believed and the copy proved it: context only.
        let mut s = healthy();
        topology(&mut s, "system", "chipset_not_supported");
        let out = findings(run(&s));
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out
            .iter()
            .all(|f| f.code == codes::GD075 && f.severity == Severity::Info));
        assert!(out[0].detail.contains("CUDA is believed"));
        // NVML yes, CUDA no: staged through host memory, a warning.
        let mut s = healthy();
        topology(&mut s, "node", "ok");
        let p = peer(&mut s, 0, 1);
        p.can_access = Some(Step::Ok(false));
        p.enable = None;
        p.copy = None;
        let f = only(run(&s), codes::GD075, Severity::Warning);
        assert!(
            f.title.contains("no peer access although NVML"),
            "{}",
            f.title
        );
        // MIG instances have no peer access, whatever NVML says of the whole GPUs.
        crate::testing::nvml_gpu(&mut s, 0).mig.enabled = Field::Value(true);
        assert_clean(run(&s));
        crate::testing::nvml_gpu(&mut s, 0).mig.enabled = Field::Value(false);
        // Both no: consistent, nothing to say.
        topology(&mut s, "system", "chipset_not_supported");
        for (a, b) in [(0, 1), (1, 0)] {
            let p = peer(&mut s, a, b);
            p.can_access = Some(Step::Ok(false));
            p.copy = None;
            p.enable = None;
        }
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_with_one_gpu_or_no_run() {
        let mut s = healthy();
        smoke_run_mut(&mut s).peers.clear();
        assert!(assert_na(run(&s)).contains("fewer than two"));
        assert_na(run(&no_gpu()));
    }
}
