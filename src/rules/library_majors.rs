//! GD026/GD028: CUDA libraries on the loader path that do not fit together. A toolkit's
//! lib directory of another CUDA major ahead on LD_LIBRARY_PATH, a family whose only
//! reachable major differs from the toolkit's (cuDNN 8 vs 9, CUDA 11 vs 12 runtime), and a
//! library whose own dependencies the loader cannot find ("libcublasLt.so.12: cannot open
//! shared object file").

use crate::codes;
use std::path::Path;

use super::{Outcome, Rule};
use crate::facts::libraries::{family_of, soname_major, Libraries};
use crate::facts::toolkits::ToolkitKind;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "library_majors",
    codes: &[codes::GD026, codes::GD028],
    views: &[super::View::Toolkit],
    checks: "CUDA libraries on the loader path match the toolkit's major version and find their dependencies",
    judges: &[SubjectKind::Library],
    run,
};

/// Families whose soname major is the CUDA major they belong to.
const CUDA_MAJOR_FAMILIES: &[&str] = &[
    "libcudart",
    "libcublas",
    "libcublasLt",
    "libnvrtc",
    "libnvJitLink",
];

fn run(snap: &Snapshot) -> Outcome {
    let Some(libs) = &snap.libraries else {
        return Outcome::NotApplicable("the libraries probe did not run".into());
    };
    let mut findings = Vec::new();
    if let (Some(tk), Some(t)) = (&snap.toolkits, snap.toolkit_in_use()) {
        if let Some(major) = t.cuda.map(|v| v.major) {
            // A lib directory of another major's toolkit on LD_LIBRARY_PATH.
            for (i, entry) in libs.search.ld_library_path.iter().enumerate() {
                // Compare resolved paths: /usr/local/cuda/lib64 is some cuda-X.Y's directory.
                let resolved = libs
                    .search
                    .ld_library_path_resolved
                    .get(i)
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| entry.clone());
                let owner = tk.installs.iter().find(|o| {
                    o.lib_dirs.iter().any(|d| same_dir(d, &resolved)) && o.root != t.root
                });
                if let Some(o) = owner.filter(|o| o.cuda.is_some_and(|v| v.major != major)) {
                    let ov = o.cuda.map(|v| v.to_string()).unwrap_or_default();
                    findings.push(
                        Finding::new(codes::GD026, Severity::Warning, format!("LD_LIBRARY_PATH puts CUDA {ov} libraries ({entry}) on the path while builds use CUDA {}", t.cuda.map(|v| v.to_string()).unwrap_or_default()))
                            .detail("Programs built with the toolkit in use need its major's libraries (libcublas.so.N, libcudart.so.N …). LD_LIBRARY_PATH is searched first, so another toolkit's directory there wins for every soname it has, and programs fail to start or load mismatched libraries.")
                            .evidence(Subject::env("LD_LIBRARY_PATH"), format!("entry {}: {entry}", i + 1), "env LD_LIBRARY_PATH")
                            .context(format!("toolkit in use: CUDA {} at {}", t.cuda.map(|v| v.to_string()).unwrap_or_default(), t.root), t.version.source.clone())
                            .fix_text(match t.lib_dirs.first() {
                                Some(d) => format!("Replace {entry} with {d} in LD_LIBRARY_PATH (or drop it)"),
                                None => format!("Drop {entry} from LD_LIBRARY_PATH"),
                            }),
                    );
                }
            }
            // A family reachable only in another major. Conda and pip toolkits reach their
            // libraries through RPATH and the distribution's are on the default path already.
            let system_toolkit = t.kind == ToolkitKind::Nvidia;
            for family in CUDA_MAJOR_FAMILIES.iter().filter(|_| system_toolkit) {
                let reachable: Vec<(u32, String)> = libs
                    .family(family)
                    .filter(|l| l.loaded().is_some())
                    .filter_map(|l| Some((l.major()?, l.soname.clone())))
                    .collect();
                if reachable.is_empty() || reachable.iter().any(|(m, _)| *m == major) {
                    continue;
                }
                let names: Vec<&str> = reachable.iter().map(|(_, s)| s.as_str()).collect();
                findings.push(
                    Finding::new(codes::GD026, Severity::Warning, format!("Only {} is on the loader path; CUDA {major} programs need the {major}.x {family}", names.join(", ")))
                        .detail(format!("The toolkit in use is CUDA {major}, so what it builds links against {family}.so.{major}; the loader finds only another major's copy and such programs fail with \"{family}.so.{major}: cannot open shared object file\"."))
                        .evidence(Subject::library(family), names.join(", "), "/etc/ld.so.cache, LD_LIBRARY_PATH")
                        .context(format!("toolkit in use: CUDA {major} at {}", t.root), t.version.source.clone())
                        .fix_cmd(
                            "Register the toolkit's library directory with the loader",
                            crate::sh!(
                                "printf '%s\\n' {} | sudo tee /etc/ld.so.conf.d/gpudoctor-cuda-{}.conf && sudo ldconfig",
                                t.lib_dirs.first().map(String::as_str).unwrap_or(&t.root),
                                major
                            ),
                        ),
                );
            }
        }
    }
    // cuDNN majors: several reachable is worth knowing; which one a program gets depends on its link.
    let cudnn: Vec<String> = libs
        .family("libcudnn")
        .filter(|l| l.soname.starts_with("libcudnn.so.") && l.loaded().is_some())
        .map(|l| {
            format!(
                "{} → {}",
                l.soname,
                l.loaded()
                    .and_then(|c| c.version.clone())
                    .unwrap_or_else(|| "version unknown".into())
            )
        })
        .collect();
    if cudnn.len() > 1 {
        findings.push(
            Finding::new(codes::GD026, Severity::Info, format!("{} cuDNN majors are on the loader path", cudnn.len()))
                .detail("Each program loads the major it was linked against (cuDNN 8 for older frameworks, 9 for current ones); a framework that dlopens plain libcudnn.so gets whichever the dev link points to.")
                .evidence(Subject::library("libcudnn"), cudnn.join("; "), "/etc/ld.so.cache, LD_LIBRARY_PATH"),
        );
    }
    findings.extend(missing_dependencies(libs));
    Outcome::Checked(findings)
}

fn same_dir(a: &str, b: &str) -> bool {
    Path::new(a.trim_end_matches('/')) == Path::new(b.trim_end_matches('/'))
}

/// GD028: a loaded CUDA library's DT_NEEDED entries from the CUDA families that the loader
/// cannot resolve (the same directory counts: many are linked with RPATH $ORIGIN).
fn missing_dependencies(libs: &Libraries) -> Vec<crate::findings::Finding> {
    let mut out = Vec::new();
    for lib in &libs.libraries {
        let Some(c) = lib.loaded() else { continue };
        for needed in &c.needed {
            if family_of(needed).is_none() || soname_major(needed).is_none() {
                continue;
            }
            let resolvable = libs.by_soname(needed).is_some_and(|l| {
                l.loaded().is_some()
                    || l.elsewhere
                        .iter()
                        .any(|e| Path::new(&e.path).parent() == Path::new(&c.path).parent())
            });
            if resolvable {
                continue;
            }
            out.push(
                Finding::new(codes::GD028, Severity::Error, format!("{} needs {needed}, which the loader cannot find", lib.soname))
                    .detail(format!("Loading {} fails with \"{needed}: cannot open shared object file: No such file or directory\", and so does every program or framework that loads it.", c.path))
                    .evidence(Subject::library(&lib.soname), format!("{} needs {needed}", c.target.as_deref().unwrap_or(&c.path)), c.path.clone())
                    .fix_text(format!("Install the library that provides {needed} (the CUDA {} runtime libraries), or add its directory to the loader path and run sudo ldconfig", soname_major(needed).unwrap_or(0))),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::libraries::Via;
    use crate::testing::*;

    #[test]
    fn healthy_libraries_fit_together() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn another_majors_lib_dir_on_ld_library_path_is_a_warning() {
        let mut s = healthy();
        toolkits_mut(&mut s)
            .installs
            .push(toolkit("/usr/local/cuda-11.8", "11.8.89", true));
        let search = &mut libs_mut(&mut s).search;
        search.ld_library_path = vec!["/usr/local/cuda-11.8/lib64".into()];
        search.ld_library_path_resolved = vec![Some("/usr/local/cuda-11.8/lib64".into())];
        let f = only(run(&s), codes::GD026, Severity::Warning);
        assert!(f.title.contains("puts CUDA 11.8 libraries"), "{}", f.title);
        assert!(
            f.fix[0]
                .text
                .contains("Replace /usr/local/cuda-11.8/lib64 with /usr/local/cuda-12.4/lib64"),
            "{:?}",
            f.fix
        );
    }

    #[test]
    fn a_family_only_in_another_major_is_a_warning() {
        let mut s = healthy();
        put_library(
            &mut s,
            library(
                "libcudart",
                "libcudart.so.11.0",
                candidate(
                    LIB_DIR,
                    "libcudart.so.11.0",
                    "libcudart.so.11.8.89",
                    Via::LdSoCache,
                ),
            ),
        );
        let f = only(run(&s), codes::GD026, Severity::Warning);
        assert!(f.title.contains("Only libcudart.so.11.0"), "{}", f.title);
        assert!(
            first_cmd(&f).contains("/etc/ld.so.conf.d/gpudoctor-cuda-12.conf"),
            "{}",
            first_cmd(&f)
        );
    }

    #[test]
    fn a_conda_toolkit_reaches_its_libraries_by_rpath() {
        let mut s = healthy();
        toolkits_mut(&mut s).installs[0].kind = crate::facts::toolkits::ToolkitKind::Conda;
        put_library(
            &mut s,
            library(
                "libcudart",
                "libcudart.so.11.0",
                candidate(
                    LIB_DIR,
                    "libcudart.so.11.0",
                    "libcudart.so.11.8.89",
                    Via::LdSoCache,
                ),
            ),
        );
        assert_clean(run(&s));
    }

    #[test]
    fn two_cudnn_majors_are_info() {
        let mut s = healthy();
        for (so, file) in [
            ("libcudnn.so.8", "libcudnn.so.8.9.7"),
            ("libcudnn.so.9", "libcudnn.so.9.1.0"),
        ] {
            put_library(
                &mut s,
                library("libcudnn", so, candidate(LIB_DIR, so, file, Via::LdSoCache)),
            );
        }
        let f = only(run(&s), codes::GD026, Severity::Info);
        assert!(f.title.contains("2 cuDNN majors"), "{}", f.title);
    }

    #[test]
    fn a_missing_dependency_is_an_error_unless_it_sits_beside() {
        let mut s = healthy();
        let mut c = candidate(
            LIB_DIR,
            "libcublas.so.12",
            "libcublas.so.12.4.2.65",
            Via::LdSoCache,
        );
        c.needed = vec!["libcublasLt.so.12".into(), "libc.so.6".into()];
        put_library(&mut s, library("libcublas", "libcublas.so.12", c));
        let f = only(run(&s), codes::GD028, Severity::Error);
        assert!(
            f.title.contains("libcublas.so.12 needs libcublasLt.so.12"),
            "{}",
            f.title
        );
        let mut lt = library(
            "libcublasLt",
            "libcublasLt.so.12",
            candidate(
                LIB_DIR,
                "libcublasLt.so.12",
                "libcublasLt.so.12.4.2.65",
                Via::LdSoCache,
            ),
        );
        lt.elsewhere = std::mem::take(&mut lt.candidates);
        lt.winner = None;
        put_library(&mut s, lt);
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_the_libraries_probe() {
        let mut s = healthy();
        s.libraries = None;
        assert_na(run(&s));
    }
}
