//! The recap that ends a human report (`check`, `smoke`): one line per root cause, worst
//! first, with the GPUs it is about (NVML index and bus id) and its first fix command, so the
//! screen a user is left with names every blocker. The findings above it stay complete; the
//! recap only points back at them (its titles are cut to one line).
//!
//! Which findings are root causes, and how bad, is the rules' word (`Finding::caused_by`,
//! severity); this module only finds the GPUs a finding's evidence names.

use std::fmt::Write;

use super::width::{display_width, wrap_pieces, Piece};
use super::{form, printable, Style};
use crate::facts::pci::sysfs_address;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::verdict::Verdict;

/// Terminal rows the recap's causes may take: an 80×24 screen holds them with the heading,
/// a blank line, a summary of two rows and the prompt. Past it the rest are counted ("… and
/// 3 more above").
pub const ROWS: usize = 18;

/// A GPU a finding is about: NVML's index where known (else CUDA's ordinal), and its bus id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GpuRef {
    /// "GPU 5" (NVML index) or "CUDA device 5" (only the smoke test saw it).
    pub label: String,
    pub bus: Option<String>,
}

/// One recap line: a root finding, the GPUs its evidence names, and how many findings
/// it explains.
pub struct Cause<'a> {
    pub finding: &'a Finding,
    pub gpus: Vec<GpuRef>,
    pub consequences: usize,
}

/// The report's root causes that are errors or warnings, in report order (worst first).
pub fn causes<'a>(snap: &Snapshot, findings: &'a [Finding]) -> Vec<Cause<'a>> {
    let mut out: Vec<Cause> = findings
        .iter()
        .filter(|f| f.is_root() && f.severity >= Severity::Warning)
        .map(|f| Cause {
            finding: f,
            gpus: gpus_of(snap, f),
            consequences: findings
                .iter()
                .filter(|c| c.caused_by.as_deref() == Some(f.code.as_str()))
                .count(),
        })
        .collect();
    out.sort_by_key(|c| std::cmp::Reverse(c.finding.severity));
    out
}

/// The GPUs a finding's evidence marks, by NVML index and bus id, in index order.
pub fn gpus_of(snap: &Snapshot, f: &Finding) -> Vec<GpuRef> {
    let mut out: Vec<GpuRef> = Vec::new();
    let mut add = |g: GpuRef| {
        if !out.contains(&g) {
            out.push(g);
        }
    };
    for subject in f.evidence.iter().filter_map(|e| e.fact.as_ref()) {
        match subject {
            Subject::Gpu(i) => add(nvml_index(snap, *i)),
            Subject::SmokeGpu(o) | Subject::SmokeStep(o, _) => add(cuda_ordinal(snap, *o)),
            Subject::SmokePeer(a, b) => {
                add(cuda_ordinal(snap, *a));
                add(cuda_ordinal(snap, *b));
            }
            Subject::PciFunction(bus) => add(by_bus(snap, bus)),
            Subject::GpuPair(a, b) => {
                add(by_bus(snap, a));
                add(by_bus(snap, b));
            }
            Subject::Node(path) => {
                if let Some(g) = node_minor(path).and_then(|m| by_minor(snap, m)) {
                    add(g);
                }
            }
            _ => {}
        }
    }
    out.sort_by_key(|g| {
        let n: Option<u32> = g.label.rsplit(' ').next().and_then(|n| n.parse().ok());
        (g.label.starts_with("CUDA"), n)
    });
    out
}

fn nvml_gpus(snap: &Snapshot) -> &[crate::facts::nvml::Gpu] {
    snap.nvml_system().map_or(&[], |s| s.devices.as_slice())
}

fn nvml_index(snap: &Snapshot, index: u32) -> GpuRef {
    let bus = nvml_gpus(snap)
        .iter()
        .find(|g| g.index == index)
        .and_then(|g| g.pci_bus_id.get())
        .map(|b| sysfs_address(b));
    GpuRef {
        label: format!("GPU {index}"),
        bus,
    }
}

fn cuda_ordinal(snap: &Snapshot, ordinal: u32) -> GpuRef {
    let device = snap
        .smoke
        .as_ref()
        .and_then(|p| p.run())
        .and_then(|r| r.devices.iter().find(|d| d.ordinal == ordinal));
    if let (Some(d), Some(sys)) = (device, snap.nvml_system()) {
        if let Some(g) = crate::facts::smoke::nvml_gpu(sys, d) {
            return nvml_index(snap, g.index);
        }
    }
    GpuRef {
        label: format!("CUDA device {ordinal}"),
        bus: device
            .and_then(|d| d.info.as_ref())
            .and_then(|i| i.pci_bus_id.as_deref())
            .map(sysfs_address),
    }
}

fn by_bus(snap: &Snapshot, bus: &str) -> GpuRef {
    let bus = sysfs_address(bus);
    match nvml_gpus(snap)
        .iter()
        .find(|g| g.pci_bus_id.get().is_some_and(|b| sysfs_address(b) == bus))
    {
        Some(g) => nvml_index(snap, g.index),
        None => GpuRef {
            label: "GPU".into(),
            bus: Some(bus),
        },
    }
}

/// `/dev/nvidia3` → 3.
fn node_minor(path: &str) -> Option<u32> {
    path.strip_prefix("/dev/nvidia")?.parse().ok()
}

fn by_minor(snap: &Snapshot, minor: u32) -> Option<GpuRef> {
    nvml_gpus(snap)
        .iter()
        .find(|g| g.minor_number.get() == Some(&minor))
        .map(|g| nvml_index(snap, g.index))
}

/// "GPU 5 0000:1d:00.0", "GPU 0 0000:18:00.0, GPU 7 0000:df:00.0", or past three GPUs
/// "GPUs 0,2,5,7" (their bus ids are in the findings above).
pub fn where_text(gpus: &[GpuRef]) -> String {
    let one = |g: &GpuRef| match &g.bus {
        Some(b) if g.label == "GPU" => format!("GPU {b}"),
        Some(b) => format!("{} {b}", g.label),
        None => g.label.clone(),
    };
    if gpus.len() <= 3 {
        return gpus.iter().map(one).collect::<Vec<_>>().join(", ");
    }
    let indices: Option<Vec<u32>> = gpus
        .iter()
        .map(|g| g.label.strip_prefix("GPU ")?.parse().ok())
        .collect();
    match indices {
        Some(i) => format!("GPUs {}", form::ordinals(&i)),
        None => format!("{} GPUs", gpus.len()),
    }
}

/// The recap block: a heading, then per root cause its mark, code, GPUs and title on one
/// line (the title cut to `width`) and its first command on the next, never broken. Empty
/// when no error or warning is a root cause.
pub fn render(snap: &Snapshot, findings: &[Finding], st: &Style, width: usize) -> String {
    let causes = causes(snap, findings);
    if causes.is_empty() {
        return String::new();
    }
    let blocks: Vec<String> = causes.iter().map(|c| cause_lines(c, st, width)).collect();
    budgeted(&blocks, st, width)
}

/// "To fix, worst first (N root causes):" and as many of the causes' `blocks` as fit in
/// `ROWS` terminal rows, the rest counted.
pub(crate) fn budgeted(blocks: &[String], st: &Style, width: usize) -> String {
    let mut out = String::new();
    let heading = if blocks.len() == 1 {
        "To fix:".to_string()
    } else {
        format!("To fix, worst first ({} root causes):", blocks.len())
    };
    let _ = writeln!(out, "{}", st.bold(&heading));
    let rows = |b: &String| -> usize {
        b.lines()
            .map(|l| display_width(&st.text(l)).max(1).div_ceil(width.max(1)))
            .sum()
    };
    let all: usize = blocks.iter().map(rows).sum();
    // Every cause when they fit; else as many as leave a row for the count.
    let budget = if all <= ROWS { ROWS } else { ROWS - 1 };
    let mut used = 0;
    let mut shown = 0;
    for b in blocks {
        let r = rows(b);
        if used + r > budget {
            break;
        }
        out.push_str(b);
        used += r;
        shown += 1;
    }
    if shown < blocks.len() {
        let _ = writeln!(out, "  … and {} more above", blocks.len() - shown);
    }
    out
}

/// One cause: its mark, code, GPUs and title cut to one line, then its first command.
fn cause_lines(c: &Cause, st: &Style, width: usize) -> String {
    let f = c.finding;
    let verdict = match f.severity {
        Severity::Error => Verdict::Error,
        Severity::Warning => Verdict::Warning,
        Severity::Info => Verdict::Info,
    };
    let mark = form::mark(verdict, st);
    let code = match f.severity {
        Severity::Error => st.red(&f.code),
        _ => st.yellow(&f.code),
    };
    let mut head = format!("{mark} {code}");
    let place = where_text(&c.gpus);
    if !place.is_empty() {
        let _ = write!(head, " {place}");
    }
    head.push_str(": ");
    let mut title = printable(&f.title).into_owned();
    // "GPU 2: GPU 2: NVML cannot open it" says the GPU once.
    if let [g] = c.gpus.as_slice() {
        title = without_gpu_prefix(&title, g).to_string();
    }
    if c.consequences > 0 {
        let _ = write!(title, " (+{} caused by it)", c.consequences);
    }
    let room = width.saturating_sub(display_width(&st.text(&head)));
    let mut out = format!("{head}{}\n", cut(&title, room));
    if let Some(cmd) = f.fix.iter().find_map(|x| x.command.as_deref()) {
        let cmd = st.bold(&format!("$ {}", printable(cmd)));
        let _ = writeln!(
            out,
            "{}",
            wrap_pieces(&[Piece::Whole(&cmd)], width, "    ", "    ")
        );
    }
    out
}

/// A title without the GPU `g` it starts with ("GPU 5 (NVIDIA H100 80GB HBM3): 4
/// uncorrectable…", "CUDA device 7 (NVIDIA H100 80GB HBM3) computed…", "GPU 2: NVML
/// cannot…"): the recap line names the GPU before it. "GPU N" must be `g` itself; a CUDA
/// ordinal is `g` by the UUID match that named it. A bus id ("GPU 0000:1f:00.0 is…") is
/// kept.
fn without_gpu_prefix<'t>(title: &'t str, g: &GpuRef) -> &'t str {
    for label in ["GPU ", "CUDA device "] {
        let Some(rest) = title.strip_prefix(label) else {
            continue;
        };
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || (label == "GPU " && g.label != format!("GPU {}", &rest[..digits])) {
            continue;
        }
        let rest = &rest[digits..];
        let rest = if let Some(named) = rest.strip_prefix(" (") {
            match named.find(')') {
                Some(end) => named[end + 1..]
                    .strip_prefix(':')
                    .unwrap_or(&named[end + 1..]),
                None => continue,
            }
        } else if let Some(after) = rest.strip_prefix(": ") {
            after
        } else {
            continue;
        };
        let rest = rest.trim_start();
        if !rest.is_empty() {
            return rest;
        }
    }
    title
}

/// `text` cut to `room` columns, ending in "…" when cut.
pub(crate) fn cut(text: &str, room: usize) -> String {
    if display_width(text) <= room {
        return text.to_string();
    }
    let mut out = String::new();
    for ch in text.chars() {
        let next = format!("{out}{ch}");
        if display_width(&next) + 1 > room {
            break;
        }
        out = next;
    }
    let trimmed = out.trim_end();
    format!("{trimmed}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_cut_to_the_room_left() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("four uncorrectable errors", 10), "four unco…");
        assert!(display_width(&cut("four uncorrectable errors", 10)) <= 10);
        assert_eq!(cut("ab", 0), "…");
    }

    #[test]
    fn gpus_read_as_index_and_bus_or_as_a_list() {
        let g = |i: u32, b: &str| GpuRef {
            label: format!("GPU {i}"),
            bus: Some(b.into()),
        };
        assert_eq!(where_text(&[g(5, "0000:1d:00.0")]), "GPU 5 0000:1d:00.0");
        assert_eq!(
            where_text(&[g(0, "0000:18:00.0"), g(7, "0000:df:00.0")]),
            "GPU 0 0000:18:00.0, GPU 7 0000:df:00.0"
        );
        let four: Vec<GpuRef> = [0, 2, 5, 7].iter().map(|&i| g(i, "x")).collect();
        assert_eq!(where_text(&four), "GPUs 0,2,5,7");
        assert_eq!(where_text(&[]), "");
        let bare = GpuRef {
            label: "GPU".into(),
            bus: Some("0000:3b:00.0".into()),
        };
        assert_eq!(where_text(&[bare]), "GPU 0000:3b:00.0");
    }

    #[test]
    fn a_title_loses_the_gpu_the_line_already_names() {
        let gpu = |i: u32| GpuRef {
            label: format!("GPU {i}"),
            bus: None,
        };
        for (title, g, rest) in [
            (
                "GPU 5 (NVIDIA H100 80GB HBM3): 4 uncorrectable ECC",
                5,
                "4 uncorrectable ECC",
            ),
            (
                "CUDA device 7 (NVIDIA H100 80GB HBM3) computed a wrong",
                7,
                "computed a wrong",
            ),
            (
                "CUDA device 0 (NVIDIA H100 80GB HBM3) computed a wrong",
                1,
                "computed a wrong",
            ),
            ("GPU 2: NVML cannot open it", 2, "NVML cannot open it"),
            (
                "GPU 2: NVML cannot open it",
                3,
                "GPU 2: NVML cannot open it",
            ),
            (
                "GPU 0000:1f:00.0 is reserved",
                0,
                "GPU 0000:1f:00.0 is reserved",
            ),
            (
                "GPU pairs without peer access",
                0,
                "GPU pairs without peer access",
            ),
            ("GPU 3 (unclosed: no", 3, "GPU 3 (unclosed: no"),
            ("GPU 3 is slow", 3, "GPU 3 is slow"),
            (
                "alice cannot read /dev/nvidia0",
                0,
                "alice cannot read /dev/nvidia0",
            ),
        ] {
            assert_eq!(without_gpu_prefix(title, &gpu(g)), rest, "{title}");
        }
    }

    #[test]
    fn node_names_give_their_minor() {
        assert_eq!(node_minor("/dev/nvidia3"), Some(3));
        assert_eq!(node_minor("/dev/nvidia-uvm"), None);
        assert_eq!(node_minor("/dev/nvidiactl"), None);
    }
}
