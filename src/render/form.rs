//! One written form for facts several views print: a PCIe link, a bus id, a finding's
//! heading, a verdict's mark.

use super::Style;
use crate::findings::Severity;
use crate::probes::nvml::Gpu;
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
    crate::probes::pci::sysfs_address(id)
}

/// `error[GD057]` — the heading every view gives a finding.
pub fn finding_heading(severity: Severity, code: &str, st: &Style) -> String {
    let head = format!("{}[{code}]", severity.as_str());
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
