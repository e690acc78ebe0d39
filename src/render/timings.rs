//! `-vv`: how long each probe took, slowest first (the probes run in parallel, so the
//! check takes about as long as the slowest one).

use std::fmt::Write;

use super::Style;
use crate::snapshot::Snapshot;

pub fn render_human(snap: &Snapshot, st: &Style) -> String {
    let mut runs: Vec<_> = snap.probes.iter().collect();
    runs.sort_by(|a, b| b.1.elapsed_us.cmp(&a.1.elapsed_us).then(a.0.cmp(b.0)));
    let width = runs.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out = format!("\n{}\n", st.bold("Probe timings"));
    for (name, run) in runs {
        let _ = writeln!(
            out,
            "  {name:<width$}  {:>9.1} ms  {}",
            run.elapsed_us as f64 / 1000.0,
            st.dim(&run.status.as_str().replace('_', " "))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{ProbeRun, ProbeStatus};

    #[test]
    fn slowest_first_in_milliseconds() {
        let mut snap = Snapshot::default();
        for (name, us) in [("pci", 1_500), ("nvml", 41_250), ("identity", 80)] {
            snap.probes.insert(
                name.into(),
                ProbeRun {
                    status: ProbeStatus::Ok,
                    elapsed_us: us,
                    detail: None,
                },
            );
        }
        let text = render_human(&snap, &Style::plain());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "Probe timings");
        assert_eq!(lines[2], "  nvml           41.2 ms  ok");
        assert_eq!(lines[4], "  identity        0.1 ms  ok");
    }
}
