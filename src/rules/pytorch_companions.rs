//! GD046: torchvision/torchaudio that do not belong to the installed torch: another CUDA
//! variant ("PyTorch and torchvision were compiled with different CUDA versions") or a torch
//! its wheel does not declare ("operator torchvision::nms does not exist"). Which torch a
//! companion needs is what it says itself: its METADATA's `Requires-Dist: torch…`, else the
//! same fact from compat::companions; the fix is the newest companion release that accepts
//! this torch.

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::companions;
use crate::compat::torch::{build_variant, local_variant, variant_cuda};
use crate::findings::{Finding, Severity};
use crate::pyversion::satisfies;
use crate::recommend::{self, Machine};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "pytorch_companions",
    codes: &[codes::GD046],
    views: &[],
    checks: "torchvision and torchaudio belong to the installed torch (the torch they declare, and the CUDA variant)",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(envs) = &snap.python else {
        return Outcome::NotApplicable("the pytorch probe did not run".into());
    };
    let mut out = Vec::new();
    for env in envs {
        let Some(t) = &env.torch else { continue };
        let tv = t
            .version
            .get()
            .cloned()
            .unwrap_or_else(|| t.dist_version.clone());
        let torch_variant = build_variant(&tv, t.cuda.as_deref());
        for c in env
            .companions
            .iter()
            .filter(|c| c.name == "torchvision" || c.name == "torchaudio")
        {
            let mut problems = Vec::new();
            // A CUDA-minor difference fails only where the companion's import check compares
            // the minor; later releases import and run on torch's runtime of the same major.
            let mut severity = Severity::Error;
            let mut consequence = None;
            let cv = local_variant(&c.version).map(str::to_string);
            if let (Some(a), Some(b)) = (&torch_variant, &cv) {
                if a != b {
                    problems.push(format!("it is built for {b}, torch for {a}"));
                    let (tc, cc) = (variant_cuda(a), variant_cuda(b));
                    if let Some((tc, cc)) = tc.zip(cc).filter(|(t, c)| t.major == c.major) {
                        if !companions::checks_cuda_minor(&c.name, &c.version) {
                            let loads = format!(
                                "{} {} compares only the CUDA major at import, so it loads",
                                c.name, c.version
                            );
                            if cc > tc {
                                severity = Severity::Warning;
                                consequence = Some(format!("{loads}; its kernels were built against the CUDA {cc} runtime and run on torch's CUDA {tc} libraries, where a call the older runtime lacks fails when it is made."));
                            } else {
                                severity = Severity::Info;
                                consequence = Some(format!("{loads} and runs: it was built against CUDA {cc} and torch's CUDA {tc} runtime is newer, which CUDA keeps compatible. Reinstalling it from torch's index keeps the pair uniform."));
                            }
                        }
                    }
                }
            }
            let row = companions::release(&c.name, &c.version);
            let declared = match (&c.requires_torch, row) {
                (Some(spec), _) => Some((
                    spec.clone(),
                    format!("{}/{}-{}.dist-info/METADATA", env.site, c.name, c.version),
                )),
                (None, Some(r)) if !r.requires_torch.is_empty() => {
                    Some((r.requires_torch.to_string(), r.source()))
                }
                _ => None,
            };
            let mut evidence = format!("torch {tv}, {} {}", c.name, c.version);
            let mut evidence_source = env.site.clone();
            if let Some((spec, from)) = &declared {
                evidence = format!("{evidence} (Requires-Dist: torch{spec})");
                evidence_source = from.clone();
                match satisfies(&tv, spec) {
                    Ok(true) => {}
                    Ok(false) => {
                        problems.push(format!("it requires torch{spec}"));
                        severity = Severity::Error;
                        consequence = None;
                    }
                    // What the wheel accepts is unknown: a warning unless something else
                    // already fails.
                    Err(e) => {
                        if problems.is_empty() {
                            severity = Severity::Warning;
                            consequence = Some(format!("Its METADATA declares a torch requirement that is no PEP 440 specifier, so whether it accepts torch {tv} cannot be told; pip 24.1 and later refuse such metadata (\"Invalid requirement\"), so reinstalling or upgrading this environment with it fails. A release of {} from torch's index declares a valid pin.", c.name));
                        }
                        problems.push(format!("its torch requirement cannot be judged: {e}"));
                    }
                }
            }
            if problems.is_empty() {
                continue;
            }
            let detail = consequence.unwrap_or_else(|| format!("{} ships compiled operators linked against one torch build. A different CUDA variant fails at import with \"PyTorch and {} were compiled with different CUDA versions\" (a different CUDA major, for releases that compare only the major); a torch its wheel does not declare fails with errors like \"operator torchvision::nms does not exist\" or undefined symbols.", c.name, c.name));
            let mut f = Finding::new(
                codes::GD046,
                severity,
                format!(
                    "{} {} does not match torch {tv}: {}",
                    c.name,
                    c.version,
                    problems.join("; ")
                ),
            )
            .detail(detail)
            .evidence(Subject::torch(&env.site), evidence, evidence_source);
            // The one recommender: the newest release declaring this torch, from torch's
            // index, --no-deps so that torch stays.
            let rec = recommend::torch::recommend_companion(&Machine::for_env(snap, env), &c.name);
            f = match &rec.pick {
                Some(p) => {
                    let spec = p
                        .pins
                        .first()
                        .and_then(|pin| companions::release(&c.name, &pin.version))
                        .map_or(String::new(), |r| r.requires_torch.to_string());
                    rec.add_fix(f, format!("Install the {} that declares torch{spec} (the newest that accepts torch {tv}), from the same index as torch", c.name))
                }
                _ => f.fix_text(format!("No {} release on PyPI declares a torch this old or new; reinstall torch and {} together from one index and release line", c.name, c.name)),
            };
            out.push(f);
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn companion(name: &str, version: &str) -> Snapshot {
        let mut s = healthy();
        let env = primary_env(&mut s);
        env.companions.retain(|d| d.name != name);
        env.companions.push(dist(name, version));
        s
    }

    #[test]
    fn matching_companions_are_clean() {
        assert_clean(run(&healthy()));
        assert_clean(run(&companion("torchaudio", "2.4.1+cu124")));
    }

    #[test]
    fn another_cuda_major_is_an_error() {
        let f = only(
            run(&companion("torchvision", "0.19.1+cu118")),
            codes::GD046,
            Severity::Error,
        );
        assert!(
            f.title.contains("built for cu118, torch for cu124"),
            "{}",
            f.title
        );
        assert_eq!(
            first_cmd(&f),
            "pip install --force-reinstall --no-deps torchvision==0.19.1 --index-url https://download.pytorch.org/whl/cu124"
        );
    }

    #[test]
    fn a_local_label_from_the_files_never_becomes_part_of_a_command() {
        // torch's version is read from the environment; its +label must not reach the index URL.
        let mut s = companion("torchvision", "0.19.1+cu118");
        torch_mut(&mut s).version =
            crate::fact::Fact::value("version.py", "2.4.1+cu124;touch${IFS}PWNED|sh".to_string());
        if let Outcome::Checked(found) = run(&s) {
            for f in &found {
                for fix in &f.fix {
                    let cmd = fix.command.as_deref().unwrap_or("");
                    assert!(!cmd.contains("PWNED"), "{cmd}");
                }
            }
        }
    }

    #[test]
    fn another_cuda_minor_is_judged_by_the_companions_own_check() {
        // torchvision >= 0.16 compares the major only: an older minor loads and runs (info),
        // a newer one loads but may call what torch's older runtime lacks (warning).
        let f = only(
            run(&companion("torchvision", "0.19.1+cu121")),
            codes::GD046,
            Severity::Info,
        );
        assert!(
            f.detail.contains("compares only the CUDA major"),
            "{}",
            f.detail
        );
        let mut s = companion("torchvision", "0.19.1+cu124");
        primary_env(&mut s).torch = Some(torch("2.4.1+cu121", Some("12.1")));
        let f = only(run(&s), codes::GD046, Severity::Warning);
        assert!(f.detail.contains("CUDA 12.4 runtime"), "{}", f.detail);
        // torchvision 0.15 (torch 2.0) still refuses another minor at import.
        let mut s = companion("torchvision", "0.15.2+cu117");
        primary_env(&mut s).torch = Some(torch("2.0.1+cu118", Some("11.8")));
        only(run(&s), codes::GD046, Severity::Error);
        // So does every torchaudio before 2.11.1.
        let mut s = companion("torchaudio", "2.4.1+cu121");
        primary_env(&mut s)
            .companions
            .retain(|c| c.name != "torchvision");
        only(run(&s), codes::GD046, Severity::Error);
    }

    #[test]
    fn a_torch_the_companion_does_not_declare_is_an_error() {
        let f = only(
            run(&companion("torchvision", "0.18.1+cu124")),
            codes::GD046,
            Severity::Error,
        );
        assert!(f.title.contains("it requires torch==2.3.1"), "{}", f.title);
        let f = only(
            run(&companion("torchaudio", "2.3.1+cu124")),
            codes::GD046,
            Severity::Error,
        );
        assert!(
            first_cmd(&f).contains("torchaudio==2.4.1 "),
            "{}",
            first_cmd(&f)
        );
    }

    fn torch_2_15(s: &mut Snapshot) -> &mut crate::facts::pytorch::PythonEnv {
        let env = primary_env(s);
        env.torch = Some(torch("2.15.0", Some("13.2")));
        env
    }

    #[test]
    fn companions_that_accept_a_newer_torch_are_clean() {
        // torchaudio's last release is 2.11.1 (torch>=2.11); torchvision 0.29.2 takes
        // torch>=2.14.0. A formula (torchaudio 2.15, torchvision 0.30) names releases that
        // do not exist.
        let mut s = healthy();
        let env = torch_2_15(&mut s);
        env.companions = vec![dist("torchvision", "0.29.2"), dist("torchaudio", "2.11.1")];
        assert_clean(run(&s));
        // torchaudio 2.11.0 declares no torch at all: nothing says it does not fit.
        torch_2_15(&mut s).companions = vec![dist("torchaudio", "2.11.0")];
        assert_clean(run(&s));
    }

    #[test]
    fn the_installed_metadata_pin_decides_and_the_fix_exists() {
        let mut s = healthy();
        let mut tv = dist("torchvision", "0.29.0");
        tv.requires_torch = Some("==2.14.0".into());
        torch_2_15(&mut s).companions = vec![tv];
        let f = only(run(&s), codes::GD046, Severity::Error);
        assert!(f.title.contains("requires torch==2.14.0"), "{}", f.title);
        assert!(
            f.evidence[0]
                .source
                .ends_with("torchvision-0.29.0.dist-info/METADATA"),
            "{:?}",
            f.evidence
        );
        assert_eq!(
            first_cmd(&f),
            "pip install --no-deps torchvision==0.29.2 --index-url https://download.pytorch.org/whl/cu132"
        );
        // A METADATA pin is believed over the table (a local build of 0.29.2 pinned to 2.13).
        let mut tv = dist("torchvision", "0.29.2");
        tv.requires_torch = Some("==2.13.0".into());
        torch_2_15(&mut s).companions = vec![tv];
        only(run(&s), codes::GD046, Severity::Error);
    }

    #[test]
    fn an_unparsable_torch_pin_is_reported_never_satisfied() {
        let mut s = healthy();
        let mut tv = dist("torchvision", "0.29.0");
        tv.requires_torch = Some(">=2.x".into());
        torch_2_15(&mut s).companions = vec![tv];
        let f = only(run(&s), codes::GD046, Severity::Warning);
        assert!(
            f.title.contains("its torch requirement cannot be judged"),
            "{}",
            f.title
        );
        assert!(f.detail.contains("pip 24.1"), "{}", f.detail);
        assert!(!first_cmd(&f).is_empty());
        // With a CUDA-variant mismatch as well, the mismatch decides: an error.
        let mut tv = dist("torchvision", "0.29.2+cu126");
        tv.requires_torch = Some(">=2.x".into());
        torch_2_15(&mut s).companions = vec![tv];
        only(run(&s), codes::GD046, Severity::Error);
    }

    #[test]
    fn a_cpu_torch_gets_companions_from_the_cpu_index() {
        let mut s = healthy();
        let env = primary_env(&mut s);
        env.torch = Some(torch("2.4.1+cpu", None));
        env.companions = vec![dist("torchvision", "0.19.1+cu124")];
        let f = only(run(&s), codes::GD046, Severity::Error);
        assert!(first_cmd(&f).ends_with("/whl/cpu"), "{}", first_cmd(&f));
    }

    #[test]
    fn a_pypi_default_torch_takes_its_variant_from_torch_version_cuda() {
        let mut s = companion("torchvision", "0.19.1+cu121");
        primary_env(&mut s).torch = Some(torch("2.4.1", Some("12.1")));
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_the_pytorch_probe() {
        let mut s = healthy();
        s.python = None;
        assert_na(run(&s));
    }
}
