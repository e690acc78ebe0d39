//! `gpudoctor recommend`: which build of a package to install on a machine, and why each
//! other build was passed over. The one recommender: `check`'s fixes for a torch build
//! that cannot use the GPU (GD041–GD043), a companion built for another torch (GD046) and a
//! framework needing another cuDNN (GD050) come from here, so a fix and `recommend` agree.
//!
//! Candidates come from the tables in `src/compat/` (newest first); each is judged against
//! the machine (driver, GPUs, Python, platform, what the environment already pins) and the
//! first that passes every test is chosen. When none does, each test is dropped in turn to
//! say what must change and what that would allow.

pub mod commands;
pub mod frameworks;
pub mod machine;
pub mod torch;

use serde::Serialize;

pub use machine::{Installed, Installer, Machine};

/// What `recommend` says about one package.
#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    /// The package asked for ("torch", "jax").
    pub package: String,
    /// The build to install; None when nothing fits this machine.
    pub pick: Option<Pick>,
    /// The candidates judged, in the order tried, each with why it was passed over.
    pub considered: Vec<Considered>,
    /// Candidates judged but not listed in `considered` (older ones, each passed over too).
    pub not_listed: usize,
    /// When nothing fits: each change that would make a build fit, and which.
    pub must_change: Vec<Change>,
    pub notes: Vec<String>,
    /// How to install `pick` with the installer in use (and the others, in JSON).
    pub commands: Vec<commands::InstallCommand>,
}

impl Recommendation {
    /// For an installer whose command needs pyproject.toml edited first: the edit and the
    /// command, as one instruction.
    pub fn fix_text(&self) -> Option<String> {
        let c = self.commands.first()?;
        let p = c.project.as_ref()?;
        Some(format!(
            "Add to {}:\n{}then run: {}",
            p.path, p.text, p.command
        ))
    }

    /// `f` with this recommendation's fix: the command, or the edit-then-command text.
    pub fn add_fix(&self, f: crate::findings::Finding, title: String) -> crate::findings::Finding {
        let lines = self.commands.first().map(|c| c.lines.as_slice());
        match (lines.filter(|l| !l.is_empty()), self.fix_text()) {
            (Some(lines), _) => f.fix_cmd(title, crate::findings::Shell::recommended(lines)),
            (None, Some(text)) => f.fix_text(format!("{title}. {text}")),
            (None, None) => f,
        }
    }
}

/// The chosen build.
#[derive(Debug, Clone, Serialize)]
pub struct Pick {
    /// "torch 2.15.0+cu126", "jax 0.7.2 (CUDA 12)".
    pub label: String,
    pub pins: Vec<Pin>,
    /// The index every pin comes from (None: PyPI).
    pub index_url: Option<String>,
    /// PyTorch's name for the index variant ("cu126"): the pyproject source name.
    pub torch_backend: Option<String>,
    /// The CUDA the build runs ("12.6"), when it has one.
    pub cuda: Option<String>,
    /// Why this one.
    pub reason: String,
    /// The table row's source (the wheel, the release file, the release notes).
    pub source: String,
    /// Already installed in another build: the command must replace it.
    pub reinstall: bool,
    /// Only the named packages change; their dependencies (torch) stay as installed.
    pub no_deps: bool,
    /// Environment variables for a source build (`FLASH_ATTN_CUDA_ARCHS=90`).
    pub build_env: Vec<(String, String)>,
    /// A source build that needs the installed torch at build time (`--no-build-isolation`).
    pub no_build_isolation: bool,
    /// Installed distributions to uninstall first (another CUDA major's JAX plugin).
    pub uninstall: Vec<String>,
    /// conda packages to remove first: pip must not install over conda's torch.
    pub conda_remove: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pin {
    pub name: String,
    pub version: String,
    /// The requirement as installed: "torch==2.15.0", "jax[cuda12]==0.7.2".
    pub requirement: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Considered {
    pub candidate: String,
    pub chosen: bool,
    /// Why it was passed over (empty for the chosen one).
    pub rejected_because: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// "a driver ≥ 580.65.06 (this is 550.54.15)".
    pub what: String,
    /// What would then be chosen.
    pub then: Option<String>,
}

/// The kinds of test a candidate can fail; each but `Gpu` and `Build` can be changed by
/// the user, so dropping it says what must change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Test {
    /// The CUDA asked for with --cuda.
    Cuda,
    Python,
    Platform,
    Driver,
    /// No code for a GPU of this machine.
    Gpu,
    /// Something the environment has pins another version (vllm pins torch; torch's cuDNN).
    Pin,
    /// The toolkit a source build needs.
    Build,
}

pub(crate) struct Failure {
    pub test: Test,
    pub text: String,
    /// What the user must change for this test to pass ("a driver ≥ 580.65.06").
    pub change: Option<String>,
}

impl Failure {
    pub fn new(test: Test, text: impl Into<String>) -> Failure {
        Failure {
            test,
            text: text.into(),
            change: None,
        }
    }

    pub fn change(mut self, what: impl Into<String>) -> Failure {
        self.change = Some(what.into());
        self
    }
}

/// A candidate of another CUDA than `--cuda` asked for.
pub(crate) fn wanted_cuda_failure(m: &Machine, c: crate::compat::CudaVersion) -> Option<Failure> {
    let w = m.cuda?;
    (!w.accepts(c)).then(|| {
        Failure::new(
            Test::Cuda,
            format!("CUDA {c}, not the {} asked for", w.text()),
        )
        .change(format!(
            "--cuda {}.{} instead of {}",
            c.major,
            c.minor,
            w.text()
        ))
    })
}

/// One candidate and the tests it failed.
pub(crate) struct Judged<T> {
    pub item: T,
    pub label: String,
    pub failures: Vec<Failure>,
}

/// How many rejected candidates `considered` lists when nothing fits.
const LISTED_WHEN_NOTHING_FITS: usize = 12;

/// The first candidate that passes, the list of what was tried, and — when none passes —
/// the changes that would let one pass.
pub(crate) fn choose<T>(
    judged: Vec<Judged<T>>,
) -> (Option<Judged<T>>, Vec<Considered>, usize, Vec<Change>) {
    let chosen_at = judged.iter().position(|j| j.failures.is_empty());
    let considered_of = |j: &Judged<T>| Considered {
        candidate: j.label.clone(),
        chosen: j.failures.is_empty(),
        rejected_because: j.failures.iter().map(|f| f.text.clone()).collect(),
    };
    match chosen_at {
        Some(i) => {
            let considered = judged[..=i].iter().map(considered_of).collect();
            let pick = judged.into_iter().nth(i);
            (pick, considered, 0, Vec::new())
        }
        None => {
            // Each test the user can change, dropped alone: the first candidate failing
            // only that test is what the change buys (for the driver, each distinct driver
            // that buys something: the least change may buy an older build).
            let mut changes: Vec<Change> = Vec::new();
            let mut near: Vec<usize> = Vec::new();
            for test in [
                Test::Driver,
                Test::Python,
                Test::Cuda,
                Test::Pin,
                Test::Platform,
                Test::Build,
            ] {
                let limit = if test == Test::Driver { 3 } else { 1 };
                let mut found = 0;
                for (i, j) in judged.iter().enumerate() {
                    if found == limit || !j.failures.iter().all(|f| f.test == test) {
                        continue;
                    }
                    let mut what: Vec<String> =
                        j.failures.iter().filter_map(|f| f.change.clone()).collect();
                    if what.is_empty() {
                        what = j.failures.iter().map(|f| f.text.clone()).collect();
                    }
                    let what = what.join("; ");
                    if changes.iter().any(|c| c.what == what) {
                        continue;
                    }
                    changes.push(Change {
                        what,
                        then: Some(j.label.clone()),
                    });
                    near.push(i);
                    found += 1;
                }
            }
            // No single change is enough: the first candidate failing only tests the user can
            // change needs all of them.
            if changes.is_empty() {
                if let Some(i) = judged
                    .iter()
                    .position(|j| j.failures.iter().all(|f| f.test != Test::Gpu))
                {
                    let what: Vec<String> = judged[i]
                        .failures
                        .iter()
                        .filter_map(|f| f.change.clone())
                        .collect();
                    if !what.is_empty() {
                        changes.push(Change {
                            what: what.join("; and "),
                            then: Some(judged[i].label.clone()),
                        });
                        near.push(i);
                    }
                }
            }
            let mut listed: Vec<usize> = (0..judged.len().min(LISTED_WHEN_NOTHING_FITS)).collect();
            for i in near {
                if !listed.contains(&i) {
                    listed.push(i);
                }
            }
            listed.sort_unstable();
            let considered = listed.iter().map(|&i| considered_of(&judged[i])).collect();
            let not_listed = judged.len() - listed.len();
            (None, considered, not_listed, changes)
        }
    }
}

/// What to recommend for the package names asked. torch and the companions named with it
/// form one install line. Asked together with torch, the other frameworks are one install:
/// the torch they pin constrains torch's choice, and they are then judged against the torch
/// chosen (its CUDA major, its cuDNN), so that the answer is a set that works together.
pub fn recommend(machine: &Machine, packages: &[String]) -> Vec<Recommendation> {
    let asked: Vec<String> = if packages.is_empty() {
        vec!["torch".into()]
    } else {
        packages.iter().map(|p| normalise(p)).collect()
    };
    let frameworks = asked
        .iter()
        .filter(|a| !matches!(a.as_str(), "torch" | "torchvision" | "torchaudio"))
        .count();
    let torch = asked.iter().any(|a| a == "torch");
    // Packages installed together share one CUDA major (one set of nvidia-* libraries in one
    // process): the newest major every one of them has a build for.
    if machine.cuda.is_none() && (frameworks >= 2 || (torch && frameworks >= 1)) {
        for major in [13, 12, 11] {
            let mut m = machine.clone();
            m.shared_cuda_major = Some(major);
            let mut recs = recommend_set(&m, &asked);
            if recs.iter().all(|r| r.pick.is_some()) {
                if let Some(r) = recs.first_mut() {
                    r.notes.push(format!("CUDA {major}.x for every package: the newest CUDA major all of them have a fitting build for (one process loads one set of CUDA libraries)."));
                }
                return recs;
            }
        }
    }
    recommend_set(machine, &asked)
}

/// The packages asked, each judged as described above, on this machine.
fn recommend_set(machine: &Machine, asked: &[String]) -> Vec<Recommendation> {
    let named: Vec<&str> = ["torchvision", "torchaudio"]
        .into_iter()
        .filter(|c| asked.iter().any(|a| a == c))
        .collect();
    let others: Vec<&str> = asked
        .iter()
        .map(String::as_str)
        .filter(|a| !matches!(*a, "torch" | "torchvision" | "torchaudio"))
        .collect();
    let mut out = Vec::new();
    if !asked.iter().any(|a| a == "torch") {
        for c in &named {
            out.push(torch::recommend_companion(machine, c));
        }
        for a in &others {
            out.push(frameworks::recommend(machine, a));
        }
        return out;
    }
    let with = if named.is_empty() {
        torch::default_companions(machine)
    } else {
        named
    };
    // torch will be (re)installed: the frameworks' own choice does not depend on the
    // installed one, and the torch each then pins joins what torch must satisfy.
    let without_torch = machine.without_torch();
    let mut for_torch = machine.clone();
    for a in &others {
        let r = frameworks::recommend(&without_torch, a);
        if let Some(p) = &r.pick {
            let major = p
                .cuda
                .as_deref()
                .and_then(crate::compat::CudaVersion::parse);
            if let (Some(c), false) = (major, p.no_build_isolation) {
                for_torch.with_frameworks.push((p.label.clone(), c.major));
            }
        }
        let pinned = r.pick.as_ref().and_then(|p| {
            let pin = p.pins.first()?;
            let row = crate::compat::packages::release_of(&pin.name, &pin.version)?;
            Some((pin.clone(), row.torch?))
        });
        if let Some((pin, spec)) = pinned {
            for_torch.installed.retain(|i| i.name != pin.name);
            for_torch.installed.push(Installed {
                name: pin.name,
                version: pin.version,
                requires_torch: Some(spec.to_string()),
            });
        }
    }
    let torch_rec = torch::recommend(&for_torch, &with);
    let after = match &torch_rec.pick {
        Some(p) => machine.with_torch(p),
        None => without_torch,
    };
    out.push(torch_rec);
    for a in &others {
        out.push(frameworks::recommend(&after, a));
    }
    out
}

/// The packages `recommend` knows, as users type them.
pub fn known_packages() -> Vec<&'static str> {
    let mut v = vec!["torch", "torchvision", "torchaudio"];
    v.extend(crate::compat::packages::tables().iter().map(|(n, _)| *n));
    v
}

/// PyPI's normalised name (PEP 503), with the common aliases: "flash_attn" → "flash-attn",
/// "onnxruntime" → "onnxruntime-gpu", "pytorch" → "torch".
pub fn normalise(name: &str) -> String {
    let n = name.trim().to_ascii_lowercase().replace(['_', '.'], "-");
    match n.as_str() {
        "pytorch" => "torch".into(),
        "onnxruntime" => "onnxruntime-gpu".into(),
        "tf" => "tensorflow".into(),
        _ => n,
    }
}

/// `3.10–3.14` from minors of 3.x.
pub(crate) fn python_range(minors: &[u32]) -> String {
    match (minors.iter().min(), minors.iter().max()) {
        (Some(a), Some(b)) if a == b => format!("3.{a}"),
        (Some(a), Some(b)) => format!("3.{a}–3.{b}"),
        _ => "none".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(label: &str, fails: &[(Test, &str)]) -> Judged<()> {
        Judged {
            item: (),
            label: label.into(),
            failures: fails
                .iter()
                .map(|(t, s)| Failure::new(*t, *s).change(format!("change {s}")))
                .collect(),
        }
    }

    #[test]
    fn the_first_that_passes_wins_and_the_rest_are_not_listed() {
        let (pick, considered, _, changes) = choose(vec![
            j("a", &[(Test::Driver, "old driver")]),
            j("b", &[]),
            j("c", &[]),
        ]);
        assert_eq!(pick.unwrap().label, "b");
        assert_eq!(considered.len(), 2);
        assert_eq!(considered[0].rejected_because, vec!["old driver"]);
        assert!(changes.is_empty());
    }

    #[test]
    fn nothing_fits_says_what_each_change_buys() {
        let (pick, _, _, changes) = choose(vec![
            j("new", &[(Test::Driver, "d"), (Test::Python, "p")]),
            j("mid", &[(Test::Driver, "d")]),
            j("old", &[(Test::Python, "p")]),
            j("gpu", &[(Test::Gpu, "g")]),
        ]);
        assert!(pick.is_none());
        let said: Vec<(String, Option<String>)> =
            changes.into_iter().map(|c| (c.what, c.then)).collect();
        assert_eq!(
            said,
            vec![
                ("change d".to_string(), Some("mid".to_string())),
                ("change p".to_string(), Some("old".to_string())),
            ]
        );
    }

    #[test]
    fn names_normalise_as_pypi_does() {
        assert_eq!(normalise("Flash_Attn"), "flash-attn");
        assert_eq!(normalise("pytorch"), "torch");
        assert_eq!(python_range(&[10, 11, 12, 13, 14]), "3.10–3.14");
    }
}
