//! One written form for facts several views print: a PCIe link, a bus id, a finding's
//! heading, a verdict's mark.

use super::Style;
use crate::facts::nvml::Gpu;
use crate::findings::Severity;
use crate::verdict::Verdict;

/// The link a GPU runs at now, and its maximum when that differs: "Gen5 x16", or
/// "Gen4 x8 (max Gen5 x16)". None when NVML gave neither figure.
pub fn pcie_link(g: &Gpu) -> Option<String> {
    let cur = (g.pcie.generation.get(), g.pcie.width.get());
    let max = (g.pcie.max_generation.get(), g.pcie.max_width.get());
    let text = |gen: Option<&u32>, w: Option<&u32>| {
        format!(
            "Gen{} x{}",
            gen.map_or("?".to_string(), u32::to_string),
            w.map_or("?".to_string(), u32::to_string)
        )
    };
    match (cur, max) {
        ((None, None), (None, None)) => None,
        ((None, None), (mg, mw)) => Some(format!("max {}", text(mg, mw))),
        ((g_, w), (None, None)) => Some(text(g_, w)),
        ((g_, w), (mg, mw)) if (g_, w) == (mg, mw) => Some(text(g_, w)),
        ((g_, w), (mg, mw)) => Some(format!("{} (max {})", text(g_, w), text(mg, mw))),
    }
}

/// A PCI bus id as sysfs and lspci write it (`0000:18:00.0`; NVML writes `00000000:18:00.0`).
pub fn bus_id(id: &str) -> String {
    crate::facts::pci::sysfs_address(id)
}

/// `error[GD057]` — the heading every view gives a finding.
pub fn finding_heading(severity: Severity, code: &str, st: &Style) -> String {
    // A code read back from a report is data: printed inert.
    let head = format!("{}[{}]", severity.as_str(), super::printable(code));
    match severity {
        Severity::Error => st.red(&head),
        Severity::Warning => st.yellow(&head),
        Severity::Info => st.cyan(&head),
    }
}

/// The plain symbol of a verdict: ✓ passed, ! warning, ✗ error, i info, · not judged.
pub fn symbol(v: Verdict) -> &'static str {
    match v {
        Verdict::Passed => "✓",
        Verdict::Warning => "!",
        Verdict::Error => "✗",
        Verdict::Info => "i",
        Verdict::NotJudged => "·",
    }
}

/// The verdict's symbol in its colour (its ASCII stand-in where the terminal needs one).
pub fn mark(v: Verdict, st: &Style) -> String {
    let s = if st.ascii {
        super::term::to_ascii(symbol(v))
    } else {
        symbol(v).into()
    };
    let s = s.as_ref();
    match v {
        Verdict::Passed => st.green(s),
        Verdict::Warning => st.yellow(s),
        Verdict::Error => st.red(s),
        Verdict::Info => st.cyan(s),
        Verdict::NotJudged => st.dim(s),
    }
}

/// GPU ordinals as ranges: "0–7", "0–2,4–7", "3".
pub fn ordinals(list: &[u32]) -> String {
    let mut sorted = list.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for n in sorted {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => runs.push((n, n)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_as_ranges() {
        assert_eq!(ordinals(&[0, 1, 2, 3, 4, 5, 6, 7]), "0–7");
        assert_eq!(ordinals(&[7, 0, 1, 2, 4, 5, 6]), "0–2,4–7");
        assert_eq!(ordinals(&[3]), "3");
        assert_eq!(ordinals(&[1, 3, 5]), "1,3,5");
        assert_eq!(ordinals(&[]), "");
    }
}
