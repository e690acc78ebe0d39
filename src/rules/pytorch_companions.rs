//! GD046: torchvision/torchaudio that do not belong to the installed torch: another CUDA
//! variant ("PyTorch and torchvision were compiled with different CUDA versions") or another
//! release (torchvision 0.N pairs with torch 2.(N-15); "operator torchvision::nms does not exist").

use super::{Outcome, Rule};
use crate::compat::torch::{local_variant, release_minor, torchvision_for};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;

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
                    .evidence(format!("torch:{}", env.site), format!("torch {tv}, {} {}", c.name, c.version), env.site.clone());
            f = match &expected {
                Some(want) => f.fix_cmd("Install the matching build from the same index as torch", format!("pip install --force-reinstall {}=={want}.* --index-url https://download.pytorch.org/whl/{index}", c.name)),
                None => f.fix_text(format!("Reinstall {} from the same index and release line as torch", c.name)),
            };
            out.push(f);
        }
    }
    Outcome::Checked(out)
}
