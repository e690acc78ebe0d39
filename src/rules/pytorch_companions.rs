//! GD046: torchvision/torchaudio that do not belong to the installed torch: another CUDA
//! variant ("PyTorch and torchvision were compiled with different CUDA versions") or another
//! release (torchvision 0.N pairs with torch 2.(N-15); "operator torchvision::nms does not exist").

use super::{Outcome, Rule};
use crate::compat::torch::{local_variant, release_minor, torchvision_for};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "pytorch_companions",
    codes: &["GD046"],
    views: &[],
    checks: "torchvision and torchaudio belong to the installed torch (release and CUDA variant)",
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
        // PyPI's default builds have no +cuXYZ label: torch.version.cuda says which they are.
        let torch_variant = local_variant(&tv).map(str::to_string).or_else(|| {
            t.cuda
                .as_deref()
                .map(|c| format!("cu{}", c.replace('.', "")))
        });
        for c in env
            .companions
            .iter()
            .filter(|c| c.name == "torchvision" || c.name == "torchaudio")
        {
            let mut problems = Vec::new();
            let cv = local_variant(&c.version).map(str::to_string);
            if let (Some(a), Some(b)) = (&torch_variant, &cv) {
                if a != b {
                    problems.push(format!("it is built for {b}, torch for {a}"));
                }
            }
            // torch 2.m ↔ torchvision 0.(m+15), torchaudio 2.m; torch 1.m ↔ torchvision 0.(m+1),
            // torchaudio 0.m.
            let expected = match (c.name.as_str(), release_minor(&tv)) {
                ("torchvision", Some((2, _))) => torchvision_for(&tv),
                ("torchvision", Some((1, mi))) => Some(format!("0.{}", mi + 1)),
                (_, Some((2, mi))) => Some(format!("2.{mi}")),
                (_, Some((1, mi))) => Some(format!("0.{mi}")),
                _ => None,
            };
            if let (Some(want), Some((ma, mi))) = (&expected, release_minor(&c.version)) {
                if format!("{ma}.{mi}") != *want {
                    problems.push(format!(
                        "{} {ma}.{mi} belongs to another torch (torch {} needs {} {want}.x)",
                        c.name,
                        release_minor(&tv).map_or("?".into(), |(a, b)| format!("{a}.{b}")),
                        c.name
                    ));
                }
            }
            if problems.is_empty() {
                continue;
            }
            let index = torch_variant
                .clone()
                .filter(|v| v.starts_with("cu"))
                .unwrap_or_else(|| "cu128".into());
            let mut f = Finding::new("GD046", Severity::Error, format!("{} {} does not match torch {tv}: {}", c.name, c.version, problems.join("; ")))
                    .detail(format!("{} ships compiled operators linked against one torch build. A different CUDA variant fails at import with \"PyTorch and torchvision were compiled with different CUDA versions\"; a different release fails with errors like \"operator torchvision::nms does not exist\" or undefined symbols.", c.name))
                    .evidence(Subject::torch(&env.site), format!("torch {tv}, {} {}", c.name, c.version), env.site.clone());
            f = match &expected {
                Some(want) => f.fix_cmd("Install the matching build from the same index as torch", format!("pip install --force-reinstall {}=={want}.* --index-url https://download.pytorch.org/whl/{index}", c.name)),
                None => f.fix_text(format!("Reinstall {} from the same index and release line as torch", c.name)),
            };
            out.push(f);
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::*;

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
    fn another_cuda_variant_is_an_error() {
        let f = only(
            run(&companion("torchvision", "0.19.1+cu121")),
            "GD046",
            Severity::Error,
        );
        assert!(
            f.title.contains("built for cu121, torch for cu124"),
            "{}",
            f.title
        );
        assert_eq!(
            first_cmd(&f),
            "pip install --force-reinstall torchvision==0.19.* --index-url https://download.pytorch.org/whl/cu124"
        );
    }

    #[test]
    fn another_release_is_an_error() {
        let f = only(
            run(&companion("torchvision", "0.18.1+cu124")),
            "GD046",
            Severity::Error,
        );
        assert!(f.title.contains("belongs to another torch"), "{}", f.title);
        let f = only(
            run(&companion("torchaudio", "2.3.1+cu124")),
            "GD046",
            Severity::Error,
        );
        assert!(
            first_cmd(&f).contains("torchaudio==2.4.*"),
            "{}",
            first_cmd(&f)
        );
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
