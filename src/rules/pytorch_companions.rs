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
        let torch_variant = local_variant(&tv).map(str::to_string);
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
            let expected = match c.name.as_str() {
                "torchvision" => torchvision_for(&tv),
                _ => release_minor(&tv).map(|(ma, mi)| format!("{ma}.{mi}")),
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
            out.push(
                Finding::new("GD046", Severity::Error, format!("{} {} does not match torch {tv}: {}", c.name, c.version, problems.join("; ")))
                    .detail(format!("{} ships compiled operators linked against one torch build. A different CUDA variant fails at import with \"PyTorch and torchvision were compiled with different CUDA versions\"; a different release fails with errors like \"operator torchvision::nms does not exist\" or undefined symbols.", c.name))
                    .evidence(format!("torch:{}", env.site), format!("torch {tv}, {} {}", c.name, c.version), env.site.clone())
                    .fix_cmd("Install the matching build from the same index as torch", format!("pip install --force-reinstall {}=={}.* --index-url https://download.pytorch.org/whl/{index}", c.name, expected.unwrap_or_default())),
            );
        }
    }
    Outcome::Checked(out)
}
