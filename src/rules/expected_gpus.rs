//! GD087: the node is not the shape the site says it has: fewer GPUs (`--expect-gpus N`,
//! `gpus_per_node`), another GPU model (`gpu_model`) or another driver (`driver`). A node
//! that lost a GPU, or was imaged with the wrong driver, otherwise passes.

use std::collections::BTreeSet;

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::pci::sysfs_address;
use crate::findings::{Finding, Severity};
use crate::snapshot::{Expect, Snapshot};
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "expected_gpus",
    codes: &[codes::GD087],
    views: &[super::View::Devices],
    checks: "the node has the GPUs, model and driver it is expected to (--expect-gpus, gpus_per_node, gpu_model, driver)",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(expect) = snap.expect.as_ref().filter(|e| **e != Expect::default()) else {
        return Outcome::NotApplicable(
            "no node shape is expected (--expect-gpus, gpus_per_node, gpu_model, driver)".into(),
        );
    };
    let mut out = Vec::new();
    if let Some(gpus) = &expect.gpus {
        out.extend(count(snap, gpus.value as usize, &gpus.from));
    }
    if let Some(model) = &expect.gpu_model {
        out.extend(model_finding(snap, &model.value, &model.from));
    }
    if let Some(driver) = &expect.driver {
        out.extend(driver_finding(snap, &driver.value, &driver.from));
    }
    Outcome::Checked(out)
}

/// GPUs of another model than expected, by NVML's names (else the driver's).
fn model_finding(snap: &Snapshot, expected: &str, from: &str) -> Option<Finding> {
    let named: Vec<(String, String, String)> = match snap.nvml_system() {
        Some(sys) => sys
            .devices
            .iter()
            .filter_map(|g| {
                let name = g.name.get()?.clone();
                Some((format!("GPU {}", g.index), name, "NVML".to_string()))
            })
            .collect(),
        None => snap
            .kernel_module
            .as_ref()
            .and_then(|k| k.gpus.get())
            .into_iter()
            .flatten()
            .filter_map(|g| Some((g.bus_id.clone(), g.model.clone()?, g.source.clone())))
            .collect(),
    };
    let other: Vec<&(String, String, String)> = named
        .iter()
        .filter(|(_, name, _)| !Expect::model_matches(expected, name))
        .collect();
    let first = other.first()?;
    let mut f = model_mismatch(other.len(), named.len(), &first.1, expected, from);
    for (gpu, name, source) in &other {
        f = f.evidence(
            Subject::GpuModel(name.clone()),
            format!("{gpu}: {name}"),
            source.clone(),
        );
    }
    Some(f.context(format!("{expected} expected"), from))
}

/// GD087 for `other` of `total` GPUs of another model (the first named `name`), as `check`
/// and `fleet` say it.
pub fn model_mismatch(
    other: usize,
    total: usize,
    name: &str,
    expected: &str,
    from: &str,
) -> Finding {
    Finding::new(
        codes::GD087,
        Severity::Error,
        format!(
            "{other} of {total} GPU(s) {} a {name}, not the expected {expected}",
            if other == 1 { "is" } else { "are" },
        ),
    )
    .detail(format!(
        "This node is expected to have {expected} GPUs ({from}). Jobs sized or tuned for that model (memory, kernels compiled for its architecture, NVLink) will fail or run slowly here."
    ))
    .fix_text("Move the node to the pool of its GPU model, or say what it has in its own configuration (gpu_model)")
}

/// GD087 for driver `driver` where `expected` was said, as `check` and `fleet` say it.
pub fn driver_mismatch(driver: &str, expected: &str, from: &str) -> Finding {
    Finding::new(
        codes::GD087,
        Severity::Error,
        format!("Driver {driver} is loaded, not the expected {expected}"),
    )
    .detail(format!(
        "Every node is expected to run driver {expected} ({from}): a node on another driver supports another newest CUDA, and jobs that pass elsewhere fail or behave differently here."
    ))
    .fix_text(format!(
        "Install driver {expected} on this node (the distribution's package or NVIDIA's installer), then reboot"
    ))
}

/// A driver other than the expected version or branch.
fn driver_finding(snap: &Snapshot, expected: &str, from: &str) -> Option<Finding> {
    let d = snap.driver_version()?;
    let (driver, source) = (d.version.as_str().to_string(), d.source);
    if Expect::driver_matches(expected, &driver) {
        return None;
    }
    Some(
        driver_mismatch(&driver, expected, from)
            .evidence(Subject::DriverVersion, format!("driver {driver}"), source)
            .context(format!("driver {expected} expected"), from),
    )
}

/// Fewer GPUs than `expected`: those on the bus the driver did not bring up, by address.
fn count(snap: &Snapshot, expected: usize, from: &str) -> Option<Finding> {
    // What the driver brought up counts; without a driver, what the nodes or the bus show.
    let (found, source) = match snap.driver_gpu_count().or_else(|| snap.gpu_count()) {
        Some(c) => (c.count, c.source),
        None => (0, "NVML, /dev/nvidia[0-9]* and the PCI bus".to_string()),
    };
    if found >= expected {
        return None;
    }
    let on_bus: Vec<&crate::facts::pci::PciDevice> =
        snap.pci.as_ref().map(|p| p.gpus()).unwrap_or_default();
    let up = brought_up(snap);
    // GPUs on the bus the driver did not bring up, when the driver said which it did.
    let not_up: Vec<&crate::facts::pci::PciDevice> = if up.is_empty() && found > 0 {
        Vec::new()
    } else {
        on_bus
            .iter()
            .copied()
            .filter(|d| !up.contains(&sysfs_address(&d.address)))
            .collect()
    };
    let off_bus = expected.saturating_sub(on_bus.len());
    let addresses: Vec<&str> = not_up.iter().map(|d| d.address.as_str()).collect();
    let off_bus = if snap.pci.is_some() { off_bus } else { 0 };
    let mut f = finding(found, expected, &addresses, off_bus, from)
        .evidence(
            Subject::GpuCount,
            format!("{found} GPU(s), {expected} expected"),
            source,
        )
        .context(format!("{expected} GPUs expected"), from);
    for d in &not_up {
        let driver = d.driver.as_deref().unwrap_or("no driver");
        f = f.evidence(
            Subject::PciFunction(d.address.clone()),
            format!("a GPU on the PCI bus ({driver} bound) that the driver did not bring up"),
            d.source.clone(),
        );
    }
    if snap.pci.is_some() {
        f = f.context(
            format!("{} GPU(s) on the PCI bus", on_bus.len()),
            crate::facts::pci::PCI_DEVICES_DIR,
        );
    }
    if !not_up.is_empty() {
        let pattern = not_up
            .iter()
            .map(|d| d.address.trim_start_matches("0000:").to_string())
            .collect::<Vec<_>>()
            .join("|");
        f = f
            .fix_cmd(
                "See why the driver did not bring it up (an RmInitAdapter failure, an Xid 79, a GSP timeout)",
                crate::sh!("sudo dmesg | grep -iE {}", format!("NVRM|xid|{pattern}")),
            )
            .fix_text("Drain the node, then reboot it; if the GPU stays down, reseat or replace it");
    } else if off_bus > 0 && snap.pci.is_some() {
        f = f
            .fix_cmd(
                "Confirm which GPUs the PCI bus lists",
                "lspci -d 10de: -nn",
            )
            .fix_text("A GPU missing from the PCI bus is a hardware matter (seating, power, a riser, the BIOS): drain the node and have it serviced");
    } else {
        f = f.fix_cmd("List the GPUs the driver sees", "nvidia-smi -L");
    }
    Some(f.fix_text(format!(
        "If this node is meant to have {found} GPU(s), say so for it ({from}); the expectation is a site's, not the driver's"
    )))
}

/// GD087 as `check` and `fleet` say it: `found` of `expected` GPUs, those on the bus but not
/// up named by address, or how many the bus lacks.
pub fn finding(
    found: usize,
    expected: usize,
    not_up: &[&str],
    off_bus: usize,
    from: &str,
) -> Finding {
    let title = if !not_up.is_empty() {
        format!(
            "{found} of the {expected} expected GPUs: {} on the PCI bus but not up",
            not_up.join(", ")
        )
    } else if off_bus > 0 {
        format!("{found} of the {expected} expected GPUs: {off_bus} missing from the PCI bus")
    } else {
        format!(
            "{found} of the {expected} expected GPUs: {} missing",
            expected.saturating_sub(found)
        )
    };
    Finding::new(codes::GD087, Severity::Error, title).detail(format!(
        "This node is expected to have {expected} GPUs ({from}), and {found} can be used. Every GPU that is left may pass its checks, so only the count shows the loss; jobs sized for {expected} GPUs will not start or will wait here."
    ))
}

/// The PCI addresses of the GPUs the driver brought up: NVML's, else the driver's list.
fn brought_up(snap: &Snapshot) -> BTreeSet<String> {
    let mut up: BTreeSet<String> = snap
        .nvml_system()
        .into_iter()
        .flat_map(|s| &s.devices)
        .filter_map(|g| g.pci_bus_id.get())
        .map(|b| sysfs_address(b))
        .collect();
    if up.is_empty() {
        up = snap
            .kernel_module
            .as_ref()
            .and_then(|k| k.gpus.get())
            .into_iter()
            .flatten()
            .map(|g| sysfs_address(&g.bus_id))
            .collect();
    }
    up
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Said;
    use crate::testing::*;

    fn said<T>(value: T) -> Option<Said<T>> {
        Some(Said {
            value,
            from: "site.toml:1".into(),
        })
    }

    fn expecting(mut s: Snapshot, gpus: u32) -> Snapshot {
        s.expect = Some(Expect {
            gpus: said(gpus),
            ..Expect::default()
        });
        s
    }

    #[test]
    fn the_expected_model_and_driver_branch_are_silent_others_are_errors() {
        let mut s = healthy();
        s.expect = Some(Expect {
            gpu_model: said("h100".to_string()),
            driver: said(DRIVER.split('.').next().unwrap().to_string()),
            ..Expect::default()
        });
        assert_clean(run(&s));
        s.expect = Some(Expect {
            gpu_model: said("A100".to_string()),
            driver: said("999.1.2".to_string()),
            ..Expect::default()
        });
        let f = findings(run(&s));
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(
            f[0].title.starts_with("2 of 2 GPU(s) are a "),
            "{}",
            f[0].title
        );
        assert!(
            f[0].title.ends_with("not the expected A100"),
            "{}",
            f[0].title
        );
        assert!(
            f[1].title.contains("not the expected 999.1.2"),
            "{}",
            f[1].title
        );
        assert!(f.iter().all(|f| f.severity == Severity::Error));
    }

    #[test]
    fn without_an_expectation_nothing_is_judged() {
        assert_na(run(&healthy()));
    }

    #[test]
    fn as_many_gpus_as_expected_or_more_is_silent() {
        assert_clean(run(&expecting(healthy(), 2)));
        assert_clean(run(&expecting(healthy(), 1)));
    }

    #[test]
    fn a_gpu_on_the_bus_the_driver_did_not_bring_up_is_named_by_its_bus_id() {
        let mut s = expecting(healthy(), 2);
        let sys = nvml_sys(&mut s);
        sys.devices.truncate(1);
        sys.device_count = crate::facts::nvml::Field::Value(1);
        let f = only(run(&s), codes::GD087, Severity::Error);
        assert!(f.title.contains("1 of the 2 expected GPUs"), "{}", f.title);
        assert!(f.title.contains(&bus_id(1)), "{}", f.title);
        assert!(f
            .evidence
            .iter()
            .any(|e| e.fact == Some(Subject::PciFunction(bus_id(1)))));
        assert!(
            first_cmd(&f).starts_with("sudo dmesg | grep -iE"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn a_gpu_missing_from_the_bus_too_is_a_hardware_matter() {
        let s = expecting(healthy(), 8);
        let f = only(run(&s), codes::GD087, Severity::Error);
        assert!(
            f.title
                .contains("2 of the 8 expected GPUs: 6 missing from the PCI bus"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "lspci -d 10de: -nn");
    }

    #[test]
    fn no_gpu_at_all_on_a_node_that_expects_some_is_an_error() {
        let f = only(run(&expecting(no_gpu(), 4)), codes::GD087, Severity::Error);
        assert!(
            f.title.starts_with("0 of the 4 expected GPUs"),
            "{}",
            f.title
        );
    }
}
