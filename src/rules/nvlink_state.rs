//! GD091: a GPU with fewer NVLinks up than the other GPUs of its model. A link that trained
//! down or was never brought up leaves the GPU's peer traffic on the links that remain
//! (slower all-reduces and peer copies) or, for a peer it no longer reaches, on PCIe. NVML
//! lists every link of the GPU, up or not; a GPU with none up (no NVLink bridge fitted, a
//! PCIe card) is not judged, since a board without links fitted is not a fault.

use std::collections::BTreeMap;

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::nvml::Gpu;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::{Subject, SubjectKind};

pub const RULE: Rule = Rule {
    name: "nvlink_state",
    codes: &[codes::GD091],
    views: &[super::View::Devices],
    checks: "every GPU with NVLinks up has as many up as most GPUs of its model",
    judges: &[SubjectKind::Gpu],
    run,
};

/// A GPU with at least one link up: the links up (by number) and how many it has.
type LinksUp<'a> = (&'a Gpu, Vec<usize>, usize);

fn run(snap: &Snapshot) -> Outcome {
    let Some(sys) = snap.nvml_system() else {
        return Outcome::NotApplicable("NVML did not answer".into());
    };
    // GPUs with at least one link up, by model: (GPU, links up, link count).
    let mut by_model: BTreeMap<&str, Vec<LinksUp>> = BTreeMap::new();
    for g in &sys.devices {
        let Some(links) = g.nvlinks.get() else {
            continue;
        };
        let up: Vec<usize> = (0..links.len()).filter(|&i| links[i]).collect();
        if up.is_empty() {
            continue;
        }
        let model = g.name.get().map_or("", String::as_str);
        by_model
            .entry(model)
            .or_default()
            .push((g, up, links.len()));
    }
    if by_model.is_empty() {
        return Outcome::NotApplicable("no GPU has an NVLink up".into());
    }
    let mut out = Vec::new();
    let mut compared = false;
    for (model, gpus) in &by_model {
        if gpus.len() < 2 {
            continue;
        }
        // The count most of the model's GPUs have up; on a tie, none is the norm.
        let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
        for (_, up, _) in gpus {
            *counts.entry(up.len()).or_default() += 1;
        }
        let (&norm, &holders) = counts
            .iter()
            .max_by_key(|(_, n)| **n)
            .expect("at least two GPUs");
        if holders * 2 <= gpus.len() {
            continue;
        }
        compared = true;
        for (g, up, total) in gpus.iter().filter(|(_, up, _)| up.len() < norm) {
            let down: Vec<String> = (0..*total)
                .filter(|i| !up.contains(i))
                .map(|i| i.to_string())
                .collect();
            let label = match g.pci_bus_id.get() {
                Some(b) => format!("GPU {} ({model}, {b})", g.index),
                None => format!("GPU {} ({model})", g.index),
            };
            out.push(
                Finding::new(
                    codes::GD091,
                    Severity::Warning,
                    format!(
                        "{label}: {} of its NVLinks up, where {holders} of the {} {model} GPUs have {norm}",
                        up.len(),
                        gpus.len()
                    ),
                )
                .detail(format!(
                    "NVML reports links {} of this GPU inactive while the other GPUs of its model have {norm} up. Peer traffic over NVLink (NCCL's all-reduces, peer copies) runs on the links that remain, or over PCIe for a peer no link reaches, and slows accordingly. A link that does not train points at the GPU's NVLink connector or baseboard, a fabric manager that did not bring the fabric up (NVSwitch systems), or a GPU that needs a reset; it usually logs Xid 74 or an SXid.",
                    down.join(", ")
                ))
                .evidence(
                    Subject::Gpu(g.index),
                    format!("{} of {total} links up; down: {}", up.len(), down.join(", ")),
                    "NVML (nvmlDeviceGetNvLinkState)",
                )
                .fix_cmd(
                    "See each link's state and error counters",
                    {
                        let target = g
                            .pci_bus_id
                            .get()
                            .cloned()
                            .unwrap_or_else(|| g.index.to_string());
                        crate::sh!(
                            "nvidia-smi nvlink --status -i {}; nvidia-smi nvlink -e -i {}",
                            target,
                            target
                        )
                    },
                )
                .fix_text("Look for Xid 74 and SXid lines in the kernel log; reset the GPU (or reboot the node) and, if the links stay down, have the board serviced"),
            );
        }
    }
    if compared || !out.is_empty() {
        Outcome::Checked(out)
    } else {
        Outcome::NotApplicable(
            "no GPU model has two or more GPUs with NVLinks up, or none has a majority link count to compare with"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::Field;
    use crate::testing::*;

    /// Four GPUs of one model, every link up but links 3 and 11 of those in `down`.
    fn with_links(down: &[usize]) -> Snapshot {
        let mut s = healthy();
        let sys = nvml_sys(&mut s);
        while sys.devices.len() < 4 {
            let mut g = sys.devices[0].clone();
            g.index = sys.devices.len() as u32;
            sys.devices.push(g);
        }
        let n = 4;
        for i in 0..n {
            nvml_gpu(&mut s, i).nvlinks = Field::Value(vec![true; 18]);
        }
        for &i in down {
            let links = match &mut nvml_gpu(&mut s, i).nvlinks {
                Field::Value(l) => l,
                _ => unreachable!(),
            };
            links[3] = false;
            links[11] = false;
        }
        s
    }

    #[test]
    fn every_gpu_with_its_links_up_is_clean() {
        assert_clean(run(&with_links(&[])));
    }

    #[test]
    fn a_gpu_with_links_down_is_a_warning_naming_them() {
        let s = with_links(&[1]);
        let f = only(run(&s), codes::GD091, Severity::Warning);
        assert!(
            f.title.contains("16 of its NVLinks up, where"),
            "{}",
            f.title
        );
        assert!(f.title.starts_with("GPU 1 "), "{}", f.title);
        assert!(
            f.evidence[0].value.contains("down: 3, 11"),
            "{:?}",
            f.evidence
        );
        assert!(
            first_cmd(&f).starts_with("nvidia-smi nvlink --status -i "),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn gpus_without_links_up_are_not_judged() {
        let mut s = with_links(&[]);
        // A board with no NVLink fitted: every link inactive.
        nvml_gpu(&mut s, 0).nvlinks = Field::Value(vec![false; 18]);
        if let Outcome::Checked(f) = run(&s) {
            assert!(
                f.is_empty(),
                "{:?}",
                f.iter().map(|f| &f.title).collect::<Vec<_>>()
            );
        }
    }
}
