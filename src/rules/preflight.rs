//! GD086: `check --preflight` ran past the budget it was given. A scheduler's gate that
//! overruns delays every job it guards; the probes that took the time are named.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "preflight",
    codes: &[codes::GD086],
    views: &[],
    checks: "check --preflight finished within its budget",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(p) = &snap.preflight else {
        return Outcome::NotApplicable("not a --preflight run".into());
    };
    if p.elapsed_s <= p.budget_s {
        return Outcome::Checked(Vec::new());
    }
    let mut slow: Vec<(&String, u64)> = snap
        .probes
        .iter()
        .map(|(name, run)| (name, run.elapsed_us))
        .collect();
    slow.sort_by_key(|s| std::cmp::Reverse(s.1));
    let named: Vec<String> = slow
        .iter()
        .take(3)
        .map(|(n, us)| format!("{n} {:.1} s", *us as f64 / 1e6))
        .collect();
    Outcome::Checked(vec![Finding::new(
        codes::GD086,
        Severity::Warning,
        format!("The preflight gate took {:.1} s, over its {:.0} s budget", p.elapsed_s, p.budget_s),
    )
    .detail("Each probe and the smoke test have deadlines carved from the budget; what overran is the time outside them (starting the workers, reading the counters again). A gate that overruns delays every job it guards.")
    .evidence(Subject::Probe("preflight".into()), format!("slowest: {}", named.join(", ")), "the probes' timings")
    .fix_text("Give the gate a larger budget (--preflight SECS), or find the slow probe with `gpudoctor check -vv`")])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Preflight;
    use crate::testing::healthy;

    fn run_with(elapsed_s: f64) -> Outcome {
        let mut s = healthy();
        s.preflight = Some(Preflight {
            budget_s: 15.0,
            probes_s: 3.75,
            smoke_s: 7.5,
            elapsed_s,
        });
        run(&s)
    }

    #[test]
    fn within_the_budget_is_silent_and_over_it_a_warning() {
        assert!(matches!(run_with(4.2), Outcome::Checked(f) if f.is_empty()));
        match run_with(16.5) {
            Outcome::Checked(f) => {
                assert_eq!(f[0].severity, Severity::Warning);
                assert!(
                    f[0].title.contains("16.5 s, over its 15 s budget"),
                    "{}",
                    f[0].title
                );
            }
            Outcome::NotApplicable(why) => panic!("{why}"),
        }
        assert!(matches!(run(&healthy()), Outcome::NotApplicable(_)));
    }
}
