//! GD078: the libnccl.so.2 the loader gives torch is not the nvidia-nccl wheel torch's
//! METADATA pins but another copy (the system's, through the loader cache or a default
//! directory, or another environment's through an RPATH), of another version. What
//! GD044 (the wheel itself missing or at another version) and GD045 (a copy on
//! LD_LIBRARY_PATH) judge is left to them. The version comes from the linkage probe
//! (the wheel's METADATA, nccl.h beside the library, or its file name: libnccl.so.2.21.5).

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::loader::How;
use crate::pyversion::holds;
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "nccl_library",
    codes: &[codes::GD078],
    views: &[super::View::Libs],
    checks: "the libnccl the loader gives torch is the version torch pins",
    judges: &[],
    run,
};

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
            .find(|r| r.name.starts_with("nvidia-nccl-") && !r.spec.is_empty())
        else {
            continue;
        };
        // The wheel missing is GD044's.
        if !env.nvidia_wheels.iter().any(|d| d.name == pin.name) {
            continue;
        }
        let Some(l) = linkages.iter().find(|l| l.site == env.site) else {
            continue;
        };
        let bound = l
            .modules
            .iter()
            .filter(|m| m.package == "torch")
            .flat_map(|m| l.closure(m))
            .find(|&i| l.object(i).is_some_and(|o| o.is_libnccl()));
        let Some(i) = bound else { continue };
        let Some(o) = l.object(i) else { continue };
        judged = true;
        // The wheel's own copy (GD044 judges its version) or LD_LIBRARY_PATH's (GD045).
        if std::path::Path::new(&o.path).starts_with(&env.site)
            || matches!(o.how, How::LdLibraryPath { .. })
        {
            continue;
        }
        let Some(v) = l.version_of(i) else { continue };
        if holds(&v.version, &pin.spec) {
            continue;
        }
        out.push(
            Finding::new(codes::GD078, Severity::Warning, format!("torch loads NCCL {} from {}, not the {}{} it pins", v.version, o.path, pin.name, pin.spec))
                .detail(format!("The loader gives torch's libtorch_cuda.so this libnccl.so.2 ({}) instead of the copy in the {} wheel. torch was built and tested against the pinned NCCL; another version works for most collectives but can differ in protocol, performance and bugs, and ranks on nodes with different NCCL versions can hang or fail at initialisation.", o.how.describe(), pin.name))
                .evidence(Subject::torch(&env.site), format!("{} {} pins {}{}", "torch", t.dist_version, pin.name, pin.spec), env.site.clone())
                .evidence(Subject::library("libnccl.so.2"), format!("{} {} ({})", o.path, v.version, o.how.describe()), v.source.clone())
                .fix_text(format!("Find why the loader prefers {} (an RPATH or a library directory ahead of torch's own: `gpudoctor libs` shows each step), and remove that path or that copy", o.path))
                .fix_cmd("Then check that the pinned wheel is intact in this environment", crate::recommend::commands::install_into(env, &[format!("{}{}", pin.name, pin.spec)], true, true)),
        );
    }
    if !judged {
        return Outcome::NotApplicable(
            "no torch environment whose libnccl the linkage probe saw bound".into(),
        );
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::Object;
    use crate::testing::*;

    /// torch's _C (object 0) bound to `path` (object 1, NCCL `version`) found `how`, with
    /// torch pinning nvidia-nccl-cu12==2.21.5 and the wheel installed.
    fn bound(path: &str, version: &str, how: How) -> Snapshot {
        let mut s = healthy();
        torch_mut(&mut s)
            .requires
            .push(requirement("nvidia-nccl-cu12", "==2.21.5"));
        primary_env(&mut s)
            .nvidia_wheels
            .push(dist("nvidia-nccl-cu12", "2.21.5"));
        let objects = vec![
            Object::for_test(
                &format!("{SITE}/torch/_C.so"),
                None,
                How::Path,
                vec![binding("libnccl.so.2", Some(1), how.clone())],
            ),
            Object::for_test(path, Some("libnccl.so.2"), how, Vec::new()),
        ];
        let m = linked_module("torch", "torch 2.4.1", 0, Vec::new());
        s.linkage = Some(vec![linkage(vec![m], objects, vec![(1, version)])]);
        s
    }

    #[test]
    fn the_pinned_wheel_or_its_version_is_clean() {
        let wheel = format!("{SITE}/nvidia/nccl/lib/libnccl.so.2");
        let runpath = How::Runpath {
            entry: "$ORIGIN/../../nvidia/nccl/lib".into(),
        };
        assert_clean(run(&bound(&wheel, "2.21.5", runpath.clone())));
        // The wheel's own copy at another version is GD044's.
        assert_clean(run(&bound(&wheel, "2.20.5", runpath)));
        // A system copy of the pinned version is fine too.
        assert_clean(run(&bound(
            "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
            "2.21.5",
            How::LdSoCache,
        )));
    }

    #[test]
    fn a_system_copy_of_another_version_is_a_warning() {
        let s = bound(
            "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
            "2.18.3",
            How::LdSoCache,
        );
        let f = only(run(&s), codes::GD078, Severity::Warning);
        assert!(
            f.title.contains("NCCL 2.18.3 from /usr/lib/x86_64-linux-gnu/libnccl.so.2, not the nvidia-nccl-cu12==2.21.5"),
            "{}",
            f.title
        );
        assert_eq!(
            first_cmd(&f),
            "pip install --force-reinstall --no-deps nvidia-nccl-cu12==2.21.5"
        );
    }

    #[test]
    fn ld_library_path_and_a_missing_wheel_are_left_to_gd045_and_gd044() {
        let s = bound(
            "/opt/nccl/lib/libnccl.so.2",
            "2.18.3",
            How::LdLibraryPath {
                index: 1,
                entry: "/opt/nccl/lib".into(),
            },
        );
        assert_clean(run(&s));
        let mut s = bound("/usr/lib/libnccl.so.2", "2.18.3", How::LdSoCache);
        primary_env(&mut s)
            .nvidia_wheels
            .retain(|d| d.name != "nvidia-nccl-cu12");
        assert_na(run(&s));
    }
}
