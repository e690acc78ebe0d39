//! GD047: building CUDA extensions with a toolkit of another CUDA major than torch's
//! (torch.utils.cpp_extension: "The detected CUDA version (X) mismatches the version that
//! was used to compile PyTorch (Y)"; tests/it/pytorch.rs
//! extension_toolkit_of_another_major).

use super::{Outcome, Rule, View};
use crate::codes;
use crate::compat::CudaVersion;
use crate::facts::toolkits::cuda_home_value;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "pytorch_extensions",
    codes: &[codes::GD047],
    views: &[View::Toolkit],
    checks: "the toolkit extension builds use has torch's CUDA major",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(envs) = &snap.python else {
        return Outcome::NotApplicable("the pytorch probe did not run".into());
    };
    let Some(tk) = snap.toolkit_in_use() else {
        return Outcome::NotApplicable("no toolkit in use".into());
    };
    let Some(tv) = tk.cuda else {
        return Outcome::NotApplicable("the toolkit's version is unknown".into());
    };
    let builders = snap
        .toolkits
        .as_ref()
        .map(|t| t.extension_builders.iter().filter(|p| p.builds()).count())
        .unwrap_or(0);
    let mut out = Vec::new();
    for env in envs.iter().filter(|e| e.primary) {
        let Some(t) = &env.torch else { continue };
        let Some(torch_cuda) = t.cuda.as_deref().and_then(CudaVersion::parse) else {
            continue;
        };
        let version = t
            .version
            .get()
            .cloned()
            .unwrap_or_else(|| t.dist_version.clone());
        // torch 1.x compared major.minor; 2.x accepts any minor within the major.
        let torch1 = crate::compat::torch::release_minor(&version).is_some_and(|(ma, _)| ma < 2);
        let same = if torch1 {
            torch_cuda == tv
        } else {
            torch_cuda.major == tv.major
        };
        if same {
            continue;
        }
        let alt = snap.toolkits.as_ref().and_then(|all| {
            all.installs
                .iter()
                .filter(|i| i.nvcc.is_some() && i.cuda.map(|c| c.major) == Some(torch_cuda.major))
                .max_by_key(|i| i.cuda)
        });
        let mut f = Finding::new(
            codes::GD047,
            if builders > 0 { Severity::Error } else { Severity::Warning },
            format!("Extensions would build with CUDA {tv} ({}), but torch {version} was built with CUDA {torch_cuda}", tk.root),
        )
        .detail(format!("torch.utils.cpp_extension checks the toolkit it found (CUDA_HOME → {}) against torch.version.cuda and stops: \"The detected CUDA version ({tv}) mismatches the version that was used to compile PyTorch ({torch_cuda}). Please make sure to use the same CUDA versions.\"", tk.root))
        .evidence(Subject::toolkit(&tk.root), format!("CUDA {tv}"), tk.version.source.clone())
        .evidence(Subject::torch(&env.site), format!("torch.version.cuda = {torch_cuda}"), t.version.source.clone());
        f = match alt {
            Some(a) => f.fix_cmd(format!("Build with the installed CUDA {}", a.cuda.map_or("?".into(), |c| c.to_string())), crate::sh!("export CUDA_HOME={} PATH={}/bin:\"$PATH\"", cuda_home_value(a), a.root)),
            None => f.fix_text(format!("Install a CUDA {}.x toolkit (conda install -c nvidia cuda-toolkit={torch_cuda}) and point CUDA_HOME at it", torch_cuda.major)),
        };
        out.push(f);
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    /// Builds use a CUDA 11.8 toolkit (index 0); `alt` adds the 12.4 one as index 1.
    fn builds_with_11_8(alt: bool) -> Snapshot {
        let mut s = healthy();
        let tk = toolkits_mut(&mut s);
        tk.installs = vec![toolkit("/usr/local/cuda-11.8", "11.8.89", true)];
        if alt {
            tk.installs.push(toolkit(TOOLKIT_ROOT, "12.4.131", true));
        }
        s
    }

    #[test]
    fn healthy_toolkit_matches_torch() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn another_major_is_a_warning_and_an_error_when_something_builds() {
        let mut s = builds_with_11_8(false);
        let f = only(run(&s), codes::GD047, Severity::Warning);
        assert!(
            f.title.contains("Extensions would build with CUDA 11.8"),
            "{}",
            f.title
        );
        assert!(
            f.fix[0].text.contains("Install a CUDA 12.x toolkit"),
            "{:?}",
            f.fix
        );
        toolkits_mut(&mut s)
            .extension_builders
            .push(crate::facts::toolkits::ExtensionPackage {
                name: "apex".into(),
                version: "0.1".into(),
                site: SITE.into(),
                compiled: None,
            });
        only(run(&s), codes::GD047, Severity::Error);
    }

    #[test]
    fn an_installed_toolkit_of_torchs_major_is_offered() {
        let f = only(
            run(&builds_with_11_8(true)),
            codes::GD047,
            Severity::Warning,
        );
        assert_eq!(
            first_cmd(&f),
            "export CUDA_HOME=/usr/local/cuda-12.4 PATH=/usr/local/cuda-12.4/bin:\"$PATH\""
        );
    }

    #[test]
    fn torch_2_accepts_any_minor_but_torch_1_does_not() {
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0] = toolkit(TOOLKIT_ROOT, "12.1.105", true);
        assert_clean(run(&s));
        primary_env(&mut s).torch = Some(torch("1.13.1+cu117", Some("11.7")));
        toolkits_mut(&mut s).installs[0] = toolkit(TOOLKIT_ROOT, "11.8.89", true);
        only(run(&s), codes::GD047, Severity::Warning);
    }

    #[test]
    fn not_applicable_without_torch_toolkit_or_its_version() {
        let mut s = healthy();
        s.python = None;
        assert_na(run(&s));
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0].cuda = None;
        assert_na(run(&s));
    }
}
