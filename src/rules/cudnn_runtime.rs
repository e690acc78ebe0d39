//! GD061: the cuDNN the loader gives torch is one torch refuses at its first cuDNN call
//! ("cuDNN version incompatibility: PyTorch was compiled against (9, 10, 2) but found
//! runtime version (9, 1, 0)"). torch was built against the cuDNN its METADATA pins; the
//! runtime one is the libcudnn.so.N the linkage probe saw bound, with its version from the
//! wheel, the header beside it or its file name. The rule is src/compat/cudnn.rs.

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::cudnn::{major_minor, torch_accepts, TORCH_RULE_SOURCE};
use crate::findings::{Finding, Severity};
use crate::loader::How;
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use std::path::Path;

pub const RULE: Rule = Rule {
    name: "cudnn_runtime",
    codes: &[codes::GD061],
    views: &[super::View::Libs],
    checks: "the cuDNN the loader gives torch is one torch accepts",
    judges: &[],
    run,
};

const SKIP_CHECK: &str = "PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK";

fn run(snap: &Snapshot) -> Outcome {
    let (Some(envs), Some(linkages)) = (&snap.python, &snap.linkage) else {
        return Outcome::NotApplicable("the pytorch or linkage probe did not run".into());
    };
    let mut out = Vec::new();
    let mut judged = false;
    for env in envs {
        let Some(t) = &env.torch else { continue };
        let Some(pin) = t
            .requires
            .iter()
            .find(|r| r.name.starts_with("nvidia-cudnn-") && r.spec.starts_with("=="))
        else {
            continue;
        };
        let compiled_text = pin.spec.trim_start_matches("==").to_string();
        let Some(compiled) = major_minor(&compiled_text) else {
            continue;
        };
        let Some(l) = linkages.iter().find(|l| l.site == env.site) else {
            continue;
        };
        // The libcudnn.so.N torch's modules bound.
        let soname = format!("libcudnn.so.{}", compiled.0);
        let bound = l
            .modules
            .iter()
            .filter(|m| m.package == "torch")
            .flat_map(|m| l.closure(m))
            .find(|&i| {
                l.object(i)
                    .is_some_and(|o| o.soname.as_deref() == Some(&soname))
            });
        let Some(i) = bound else { continue };
        let Some(o) = l.object(i) else { continue };
        let Some(v) = l.version_of(i) else { continue };
        let Some(runtime) = major_minor(&v.version) else {
            continue;
        };
        judged = true;
        if torch_accepts(compiled, runtime) {
            continue;
        }
        let skipped = snap.env_value(SKIP_CHECK) == Some("1");
        let severity = if skipped {
            Severity::Warning
        } else {
            Severity::Error
        };
        let version = t
            .version
            .get()
            .cloned()
            .unwrap_or_else(|| t.dist_version.clone());
        let mut f = Finding::new(
            codes::GD061,
            severity,
            format!(
                "torch {version} was built against cuDNN {compiled_text} but the loader gives it cuDNN {} ({})",
                v.version, o.path
            ),
        )
        .detail(format!(
            "torch accepts another cuDNN only of the same major with a minor at least the one it was built with (from cuDNN 7 on; {TORCH_RULE_SOURCE}). {}",
            if skipped {
                format!("{SKIP_CHECK}=1 skips that check, so torch runs against it; kernels the older cuDNN lacks fail or fall back.")
            } else {
                "The first cuDNN call (any convolution, RNN or attention that uses cuDNN) raises \"RuntimeError: cuDNN version incompatibility: PyTorch was compiled against … but found runtime version …\".".to_string()
            }
        ))
        .evidence(
            Subject::library(&soname),
            format!("{} {} ({})", o.path, v.version, o.how.describe()),
            v.source.clone(),
        )
        .context(
            format!("torch pins {}{}", pin.name, pin.spec),
            format!("{}/torch-{}.dist-info/METADATA", env.site, t.dist_version),
        );
        f = match &o.how {
            How::LdLibraryPath { entry, .. } => {
                // Without the pinned wheel, dropping the entry leaves torch no cuDNN at all.
                let wheel_installed = env
                    .nvidia_wheels
                    .iter()
                    .any(|d| d.name == pin.name && pin.spec.trim_start_matches("==") == d.version);
                if !wheel_installed {
                    f = f.fix_cmd(
                        "Install the cuDNN torch pins",
                        crate::recommend::commands::install_into(
                            env,
                            &[format!("{}{}", pin.name, pin.spec)],
                            false,
                            false,
                        ),
                    );
                }
                let text = format!(
                    "{} {entry} from LD_LIBRARY_PATH for Python (torch then loads its own wheel's cuDNN)",
                    if wheel_installed { "Remove" } else { "Then remove" }
                );
                match super::ld_library_path_without(snap, Path::new(entry.trim_end_matches('/'))) {
                    Some(cmd) => f.fix_cmd(text, cmd),
                    None => f.fix_text(text),
                }
            }
            _ => f.fix_cmd(
                "Install the cuDNN torch pins",
                crate::recommend::commands::install_into(
                    env,
                    &[format!("{}{}", pin.name, pin.spec)],
                    false,
                    false,
                ),
            ),
        };
        out.push(f);
    }
    if !judged && out.is_empty() {
        return Outcome::NotApplicable(
            "no torch with a pinned cuDNN whose bound libcudnn has a known version".into(),
        );
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::How;
    use crate::testing::*;

    /// torch (pinning cuDNN 9.1.0.70 in the test snapshot) whose modules bound libcudnn.so.9
    /// of `version`, found `how`.
    fn bound(version: &str, how: How) -> Snapshot {
        let mut s = healthy();
        torch_bound_to_cudnn(&mut s, how, Some(version), Vec::new());
        s
    }

    #[test]
    fn an_older_minor_than_torch_was_built_with_is_an_error() {
        let entry = How::LdLibraryPath {
            index: 1,
            entry: "/opt/cudnn/lib".into(),
        };
        let f = only(run(&bound("9.0.0", entry)), codes::GD061, Severity::Error);
        assert!(
            f.title
                .contains("built against cuDNN 9.1.0.70 but the loader gives it cuDNN 9.0.0"),
            "{}",
            f.title
        );
        assert!(f.fix[0]
            .text
            .starts_with("Remove /opt/cudnn/lib from LD_LIBRARY_PATH"));
        // Without the pinned wheel it comes first, then the entry goes.
        let mut s = bound(
            "9.0.0",
            How::LdLibraryPath {
                index: 1,
                entry: "/opt/cudnn/lib".into(),
            },
        );
        primary_env(&mut s).nvidia_wheels.clear();
        let f = only(run(&s), codes::GD061, Severity::Error);
        assert_eq!(
            first_cmd(&f),
            "pip install nvidia-cudnn-cu12==9.1.0.70",
            "{:?}",
            f.fix
        );
        assert!(f.fix[1]
            .text
            .starts_with("Then remove /opt/cudnn/lib from LD_LIBRARY_PATH"));
        // With the variable's value known the fix is the command that drops the entry.
        let mut s = bound(
            "9.0.0",
            How::LdLibraryPath {
                index: 1,
                entry: "/opt/cudnn/lib/".into(),
            },
        );
        set_env(&mut s, "LD_LIBRARY_PATH", "/usr/local/lib:/opt/cudnn/lib/");
        let f = only(run(&s), codes::GD061, Severity::Error);
        assert_eq!(f.fix.len(), 1, "{:?}", f.fix);
        assert_eq!(first_cmd(&f), "export LD_LIBRARY_PATH=/usr/local/lib");
        set_env(&mut s, "LD_LIBRARY_PATH", "/opt/cudnn/lib");
        let f = only(run(&s), codes::GD061, Severity::Error);
        assert_eq!(first_cmd(&f), "unset LD_LIBRARY_PATH");
    }

    #[test]
    fn a_newer_minor_is_accepted() {
        assert_clean(run(&bound("9.5.1", How::LdSoCache)));
    }

    #[test]
    fn the_skip_variable_makes_it_a_warning() {
        let mut s = bound("9.0.0", How::LdSoCache);
        set_env(&mut s, SKIP_CHECK, "1");
        let f = only(run(&s), codes::GD061, Severity::Warning);
        assert_eq!(first_cmd(&f), "pip install nvidia-cudnn-cu12==9.1.0.70");
    }
}
