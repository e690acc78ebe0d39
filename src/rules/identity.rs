//! Names every GPU a finding is about the way an admin acts on it: NVML index, PCI bus id,
//! UUID and serial. A CUDA ordinal (the smoke test's) is mapped to its NVML GPU through the
//! UUID or the bus id, so `CUDA_VISIBLE_DEVICES` renumbering cannot point at the wrong
//! board. Run once over all findings by `rules::evaluate`, so no rule can forget it.

use crate::facts::nvml::Gpu;
use crate::facts::smoke::{nvml_gpu, SmokeDevice, SmokeRun};
use crate::findings::{Evidence, Finding, Shell};
use crate::snapshot::{Place, Snapshot};
use crate::subject::Subject;

/// More GPUs than this in one finding are counted, not listed.
const MAX_LISTED: usize = 8;

/// The `-i` argument of nvidia-smi for this GPU: its index on the host, its UUID wherever
/// the index may be another one than the host's (a container or pod numbers its GPUs from 0).
pub fn smi_target(snap: &Snapshot, g: &Gpu) -> String {
    let index = || g.index.to_string();
    if snap.place() == Place::Host || snap.place() == Place::VirtualMachine {
        return index();
    }
    g.uuid
        .get()
        .or(g.pci_bus_id.get())
        .cloned()
        .unwrap_or_else(index)
}

/// `sudo nvidia-smi -r -i TARGET`: reset one GPU (no process may hold it).
pub fn reset_command(snap: &Snapshot, g: &Gpu) -> Shell {
    crate::sh!("sudo nvidia-smi -r -i {}", smi_target(snap, g))
}

/// The NVML GPU the smoke test's CUDA device `ordinal` is.
pub fn gpu_of_cuda_device(snap: &Snapshot, ordinal: u32) -> Option<&Gpu> {
    let device = smoke_devices(snap)?.iter().find(|d| d.ordinal == ordinal)?;
    nvml_gpu(snap.nvml_system()?, device)
}

fn smoke_devices(snap: &Snapshot) -> Option<&[SmokeDevice]> {
    snap.smoke
        .as_ref()
        .and_then(|p| p.run())
        .map(|r: &SmokeRun| r.devices.as_slice())
}

/// "bus 0000:18:00.0, uuid GPU-…, serial 1652…" from what NVML answered.
fn nvml_names(g: &Gpu) -> String {
    let mut parts = Vec::new();
    if let Some(b) = g.pci_bus_id.get() {
        parts.push(format!("bus {}", crate::facts::pci::sysfs_address(b)));
    }
    if let Some(u) = g.uuid.get() {
        parts.push(format!("uuid {u}"));
    }
    if let Some(s) = g.serial.get().filter(|s| !s.trim().is_empty()) {
        parts.push(format!("serial {}", s.trim()));
    }
    parts.join(", ")
}

/// One GPU a finding names, as the line its evidence gets.
#[derive(PartialEq)]
enum Named {
    Nvml(u32),
    Cuda(u32),
}

fn line(snap: &Snapshot, n: &Named) -> Option<(String, &'static str)> {
    let sys = snap.nvml_system();
    match n {
        Named::Nvml(i) => {
            let g = sys?.devices.iter().find(|g| g.index == *i)?;
            let names = nvml_names(g);
            (!names.is_empty()).then(|| (format!("GPU {i}: {names}"), "NVML"))
        }
        Named::Cuda(o) => {
            let d = smoke_devices(snap)?.iter().find(|d| d.ordinal == *o)?;
            if let Some(g) = sys.and_then(|s| nvml_gpu(s, d)) {
                let names = nvml_names(g);
                return Some((
                    format!("CUDA device {o} is GPU {}: {names}", g.index),
                    "NVML",
                ));
            }
            // No NVML: what CUDA itself says about the device.
            let info = d.info.as_ref()?;
            let mut parts = Vec::new();
            if let Some(b) = &info.pci_bus_id {
                parts.push(format!("bus {}", crate::facts::pci::sysfs_address(b)));
            }
            if let Some(u) = &info.uuid {
                parts.push(format!("uuid {u}"));
            }
            (!parts.is_empty()).then(|| (format!("CUDA device {o}: {}", parts.join(", ")), "CUDA"))
        }
    }
}

/// Adds one identity line per GPU the finding's evidence is about.
pub fn name_gpus(snap: &Snapshot, findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        let mut named: Vec<Named> = Vec::new();
        for e in &f.evidence {
            let subject = e.fact.clone();
            let gpus = match subject {
                Some(Subject::Gpu(i)) => vec![Named::Nvml(i)],
                Some(Subject::SmokeGpu(o) | Subject::SmokeStep(o, _)) => vec![Named::Cuda(o)],
                Some(Subject::SmokePeer(a, b)) => vec![Named::Cuda(a), Named::Cuda(b)],
                _ => Vec::new(),
            };
            for g in gpus {
                if !named.contains(&g) {
                    named.push(g);
                }
            }
        }
        let lines: Vec<(String, &str)> = named.iter().filter_map(|n| line(snap, n)).collect();
        let listed = lines.len().min(MAX_LISTED);
        let mut add = |value: String, source: &str| {
            if !f.evidence.iter().any(|e| e.value == value) {
                f.evidence.push(Evidence {
                    fact: None,
                    value,
                    source: source.into(),
                });
            }
        };
        for (text, source) in lines.iter().take(listed) {
            add(text.clone(), source);
        }
        if lines.len() > listed {
            add(format!("and {} more GPU(s)", lines.len() - listed), "NVML");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::Field;
    use crate::findings::Severity;
    use crate::testing::{healthy, in_container};

    fn about(subject: Subject) -> Finding {
        Finding::new(crate::codes::GD033, Severity::Error, "x").evidence(subject, "v", "NVML")
    }

    #[test]
    fn an_nvml_gpu_is_named_by_bus_uuid_and_serial() {
        let mut s = healthy();
        crate::testing::nvml_gpu(&mut s, 1).serial = Field::Value("1652321012345".into());
        let mut f = vec![about(Subject::Gpu(1))];
        name_gpus(&s, &mut f);
        let last = f[0].evidence.last().unwrap();
        assert!(last.value.starts_with("GPU 1: bus "), "{}", last.value);
        assert!(last.value.contains("uuid GPU-"), "{}", last.value);
        assert!(
            last.value.ends_with("serial 1652321012345"),
            "{}",
            last.value
        );
        // Idempotent: a second pass adds nothing.
        let before = f[0].evidence.len();
        name_gpus(&s, &mut f);
        assert_eq!(f[0].evidence.len(), before);
    }

    #[test]
    fn a_finding_about_no_gpu_is_left_alone() {
        let s = healthy();
        let mut f = vec![about(Subject::Nvml)];
        name_gpus(&s, &mut f);
        assert_eq!(f[0].evidence.len(), 1);
    }

    #[test]
    fn the_reset_names_the_index_on_a_host_and_the_uuid_in_a_container() {
        let s = healthy();
        let g = &s.nvml_system().unwrap().devices[1];
        assert_eq!(reset_command(&s, g).as_str(), "sudo nvidia-smi -r -i 1");
        let mut c = healthy();
        in_container(&mut c, "docker");
        let g = &c.nvml_system().unwrap().devices[1];
        let uuid = g.uuid.get().unwrap().clone();
        assert_eq!(
            reset_command(&c, g).as_str(),
            format!("sudo nvidia-smi -r -i {uuid}")
        );
    }
}
