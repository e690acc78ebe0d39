//! GD019/GD020: which toolkit wins. The shell's `nvcc` and torch's extension builder
//! (CUDA_HOME) can pick different installs, and the one that wins can be older than the
//! one the user installed last (/usr/bin/nvcc 10.1 over /usr/local/cuda 11.4: tests/it/toolkits.rs
//! gd019_gd020_old_usr_bin_nvcc_shadows_usr_local_cuda).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::toolkits::{cuda_home_value, Route, Toolkit, ToolkitKind};
use crate::findings::{Finding, Severity, Shell};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "toolkit_choice",
    codes: &[codes::GD019, codes::GD020],
    views: &[super::View::Toolkit],
    checks: "the nvcc on PATH and CUDA_HOME name the same toolkit, and it is the newest installed",
    judges: &[SubjectKind::NvccOnPath, SubjectKind::CudaHome],
    run,
};

/// The shell line that makes a shell and torch's builds use toolkit `t`.
fn use_toolkit(t: &Toolkit) -> Shell {
    crate::sh!(
        "export CUDA_HOME={} PATH={}/bin:\"$PATH\"",
        cuda_home_value(t),
        t.root
    )
}

fn version(t: &Toolkit) -> String {
    t.cuda
        .map_or("of unknown version".into(), |v| v.to_string())
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(tk) = &snap.toolkits else {
        return Outcome::NotApplicable("the toolkits probe did not run".into());
    };
    if tk.installs.is_empty() {
        return Outcome::NotApplicable("no CUDA toolkit found".into());
    }
    let mut findings = Vec::new();
    let nvcc = tk.nvcc_on_path.as_ref();
    let nvcc_tk = nvcc.and_then(|n| tk.get(n.toolkit));
    let home_tk = tk.get(tk.cuda_home.toolkit);

    // GD019: CUDA_HOME (or /usr/local/cuda) and the nvcc on PATH disagree.
    if let (Some(n), Some(a), Some(b)) = (nvcc, nvcc_tk, home_tk) {
        if a.root != b.root && a.cuda != b.cuda {
            let home = tk.cuda_home.path.clone().unwrap_or_default();
            findings.push(
                Finding::new(
                    codes::GD019,
                    Severity::Warning,
                    format!(
                        "nvcc on PATH is CUDA {} ({}) but CUDA_HOME resolves to CUDA {} ({})",
                        version(a),
                        n.path,
                        version(b),
                        home
                    ),
                )
                .detail(format!("torch.utils.cpp_extension and most build systems take the toolkit from {}, while anything that runs `nvcc` directly gets the other one. An extension build then compiles with one toolkit's nvcc and another's headers and libraries, or torch refuses: \"The detected CUDA version (X) mismatches the version that was used to compile PyTorch (Y)\".", tk.cuda_home.via))
                .evidence(Subject::NvccOnPath, format!("{} → CUDA {}", n.resolved, version(a)), a.version.source.clone())
                .evidence(Subject::toolkit(&a.root), format!("CUDA {} at {}", version(a), a.root), a.version.source.clone())
                .evidence(Subject::CudaHome, format!("{home} (via {}) → CUDA {}", tk.cuda_home.via, version(b)), b.version.source.clone())
                .fix_cmd(
                    format!("Use CUDA {} for both", version(b)),
                    use_toolkit(b),
                )
                .fix_cmd(
                    format!("Or use CUDA {} for both", version(a)),
                    use_toolkit(a),
                ),
            );
        }
    }

    // GD019 too: no CUDA_HOME, nvcc from one toolkit and an older /usr/local/cuda, which
    // Makefiles and CMake's last-resort search use. (A newer /usr/local/cuda is GD020.)
    let usr_local = tk
        .installs
        .iter()
        .find(|t| t.found.iter().any(|f| f.route == Route::UsrLocalCuda));
    if let (Some(n), Some(a), Some(u)) = (nvcc, nvcc_tk, usr_local) {
        let derived = tk.cuda_home.via == "the nvcc on PATH";
        if derived && a.root != u.root && u.cuda.is_some() && u.cuda < a.cuda {
            findings.push(
                Finding::new(
                    codes::GD019,
                    Severity::Warning,
                    format!(
                        "nvcc on PATH is CUDA {} ({}) but /usr/local/cuda is CUDA {}",
                        version(a),
                        n.path,
                        version(u)
                    ),
                )
                .detail("With CUDA_HOME unset, torch's extension builder follows the nvcc on PATH, while Makefiles, CMake's last-resort search and many install scripts use /usr/local/cuda. The same machine then builds with two toolkits depending on the tool.")
                .evidence(Subject::NvccOnPath, format!("{} → CUDA {}", n.resolved, version(a)), a.version.source.clone())
                .evidence(Subject::toolkit(&u.root), format!("/usr/local/cuda → CUDA {}", version(u)), u.version.source.clone())
                .fix_cmd(
                    format!("Name CUDA {} everywhere", version(a)),
                    use_toolkit(a),
                )
                .fix_text(format!("Or point /usr/local/cuda at {} (update-alternatives --config cuda on NVIDIA's packages)", a.root)),
            );
        }
    }

    // GD020: the toolkit builds use is older than another installed one.
    let in_use = home_tk.or(nvcc_tk);
    let newest = tk
        .installs
        .iter()
        .filter(|t| t.nvcc.is_some() && t.cuda.is_some())
        .max_by_key(|t| t.cuda);
    if let (Some(used), Some(newest)) = (in_use, newest) {
        if used.cuda.is_some() && newest.cuda > used.cuda && newest.root != used.root {
            let chosen = matches!(tk.cuda_home.via.as_str(), "CUDA_HOME" | "CUDA_PATH");
            let major_differs = newest.cuda.map(|v| v.major) != used.cuda.map(|v| v.major);
            let severity = if chosen || !major_differs {
                Severity::Info
            } else {
                Severity::Warning
            };
            let mut f = Finding::new(
                codes::GD020,
                severity,
                format!(
                    "Builds use CUDA {} ({}) while CUDA {} is installed at {}",
                    version(used),
                    used.root,
                    version(newest),
                    newest.root
                ),
            )
            .detail(format!(
                "The toolkit that wins is picked by {}{}. Extensions built with it must match the CUDA version PyTorch was built with (same major), and it cannot compile for GPUs newer than it knows.",
                tk.cuda_home.via,
                if chosen { ", which you set" } else { ", not by which toolkit is newest" }
            ))
            .evidence(Subject::toolkit(&used.root), format!("CUDA {} at {}", version(used), used.root), used.version.source.clone())
            .context(format!("newer: CUDA {} at {}", version(newest), newest.root), newest.version.source.clone())
            .fix_cmd(
                format!("Use CUDA {}", version(newest)),
                use_toolkit(newest),
            );
            if used.kind == ToolkitKind::Distribution {
                f = f.fix_cmd(
                    "Or remove the distribution's older toolkit (it owns /usr/bin/nvcc)",
                    "sudo apt remove nvidia-cuda-toolkit",
                );
            }
            findings.push(f);
        }
    }
    Outcome::Checked(findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    /// /usr/local/cuda-11.8 (index 0) and /usr/local/cuda-12.4 (index 1).
    fn two_toolkits(nvcc: usize, home: usize, via: &str) -> Snapshot {
        let mut s = healthy();
        let tk = toolkits_mut(&mut s);
        let old = toolkit("/usr/local/cuda-11.8", "11.8.89", true);
        let new = toolkit(TOOLKIT_ROOT, "12.4.131", true);
        tk.installs = vec![old, new];
        let n = tk.nvcc_on_path.as_mut().unwrap();
        n.toolkit = Some(nvcc);
        n.resolved = format!("{}/bin/nvcc", tk.installs[nvcc].root);
        tk.cuda_home.toolkit = Some(home);
        tk.cuda_home.path = Some(tk.installs[home].root.clone());
        tk.cuda_home.via = via.into();
        s
    }

    #[test]
    fn healthy_single_toolkit_is_clean() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn nvcc_and_cuda_home_disagreeing_is_a_warning() {
        let s = two_toolkits(0, 1, "CUDA_HOME");
        let f = only(run(&s), codes::GD019, Severity::Warning);
        assert!(f.title.contains("nvcc on PATH is CUDA 11.8"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "export CUDA_HOME=/usr/local/cuda-12.4 PATH=/usr/local/cuda-12.4/bin:\"$PATH\""
        );
    }

    #[test]
    fn an_older_usr_local_cuda_than_nvcc_is_a_warning() {
        let mut s = two_toolkits(1, 1, "the nvcc on PATH");
        toolkits_mut(&mut s).installs[0]
            .found
            .push(crate::facts::toolkits::Found {
                route: Route::UsrLocalCuda,
                path: "/usr/local/cuda".into(),
            });
        let f = only(run(&s), codes::GD019, Severity::Warning);
        assert!(
            f.title.contains("/usr/local/cuda is CUDA 11.8"),
            "{}",
            f.title
        );
    }

    #[test]
    fn builds_on_an_older_major_by_accident_is_a_warning() {
        let s = two_toolkits(0, 0, "the nvcc on PATH");
        let f = only(run(&s), codes::GD020, Severity::Warning);
        assert!(f.title.contains("Builds use CUDA 11.8"), "{}", f.title);
        assert_eq!(
            first_cmd(&f),
            "export CUDA_HOME=/usr/local/cuda-12.4 PATH=/usr/local/cuda-12.4/bin:\"$PATH\""
        );
    }

    #[test]
    fn an_older_toolkit_chosen_by_cuda_home_is_only_info() {
        let s = two_toolkits(0, 0, "CUDA_HOME");
        only(run(&s), codes::GD020, Severity::Info);
    }

    #[test]
    fn the_distribution_toolkit_can_be_removed() {
        let mut s = two_toolkits(0, 0, "the nvcc on PATH");
        toolkits_mut(&mut s).installs[0].kind = ToolkitKind::Distribution;
        let f = only(run(&s), codes::GD020, Severity::Warning);
        assert!(fixes_mention(&f, "sudo apt remove nvidia-cuda-toolkit"));
    }

    #[test]
    fn not_applicable_without_toolkits() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        s.toolkits = None;
        assert_na(run(&s));
    }

    #[test]
    fn an_older_minor_of_the_same_major_is_only_info() {
        let mut s = two_toolkits(0, 0, "the nvcc on PATH");
        let old = &mut toolkits_mut(&mut s).installs[0];
        old.cuda = crate::compat::CudaVersion::parse("12.1");
        old.root = "/usr/local/cuda-12.1".into();
        let f = only(run(&s), codes::GD020, Severity::Info);
        assert!(f.title.contains("Builds use CUDA 12.1"), "{}", f.title);
    }
}
