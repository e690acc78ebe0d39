//! torch, torchvision and torchaudio: the official build (release × CUDA variant) for this
//! driver, these GPUs, this Python and platform, with the companions whose wheels declare
//! that torch, from PyTorch's index for the variant.

use super::machine::{Installed, Machine};
use super::{
    choose, commands, python_range, wanted_cuda_failure, Failure, Judged, Pick, Pin,
    Recommendation, Test,
};
use crate::compat::companions::{self, CompanionRelease};
use crate::compat::driver::{driver_verdict_on, DriverVerdict};
use crate::compat::torch::{build_variant, covers, release_minor, Platform, TorchBuild, BUILDS};
use crate::compat::torch_pythons;
use crate::compat::DriverVersion;
use crate::pyversion::{cmp_versions, holds};

pub const INDEX: &str = "https://download.pytorch.org/whl";

/// The driver test every CUDA candidate shares: the driver runs this CUDA (minor-version
/// compatibility included: no official wheel carries PTX) and runs every GPU. The change
/// named is the larger of what the CUDA and the GPUs need.
pub(crate) fn driver_failures(m: &Machine, cuda: crate::compat::CudaVersion) -> Vec<Failure> {
    let Some(d) = &m.driver else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cuda_needs = None;
    if let DriverVerdict::TooOld { needs, family_min } = driver_verdict_on(cuda, &d.version, d.os())
    {
        let (needed, family) = match family_min {
            Some(f) => (f, format!("CUDA {}.x", cuda.major)),
            None => (needs, format!("CUDA {cuda}")),
        };
        cuda_needs = DriverVersion::parse(needed);
        out.push(Failure::new(
            Test::Driver,
            format!(
                "{family} needs driver ≥ {needed}; this is {}",
                d.version.as_str()
            ),
        ));
    }
    let gpu = gpu_driver_failures(m);
    let gpu_needs = gpu_branch_needed(m);
    let cuda_wins = match (&cuda_needs, gpu_needs) {
        (Some(c), Some(b)) => c.branch() >= b,
        (Some(_), None) => true,
        _ => false,
    };
    if cuda_wins {
        if let (Some(f), Some(n)) = (out.first_mut(), &cuda_needs) {
            f.change = Some(format!(
                "a driver ≥ {} (this is {})",
                n.as_str(),
                d.version.as_str()
            ));
        }
        out.extend(gpu.into_iter().map(|mut f| {
            f.change = None;
            f
        }));
    } else {
        out.extend(gpu);
    }
    out
}

/// The newest driver branch the GPUs' architectures need, where the driver is older.
fn gpu_branch_needed(m: &Machine) -> Option<u32> {
    let d = m.driver.as_ref()?;
    m.gpus
        .iter()
        .filter_map(|g| crate::compat::arch::arch_row(g.cc)?.min_driver_branch)
        .filter(|b| d.version.branch() < *b)
        .max()
}

/// A driver branch older than a GPU's architecture runs nothing on it.
pub(crate) fn gpu_driver_failures(m: &Machine) -> Vec<Failure> {
    let Some(d) = &m.driver else {
        return Vec::new();
    };
    let mut out: Vec<Failure> = Vec::new();
    for g in &m.gpus {
        let Some(row) = crate::compat::arch::arch_row(g.cc) else {
            continue;
        };
        if let Some(min) = row.min_driver_branch.filter(|b| d.version.branch() < *b) {
            let text = format!(
                "driver {} does not run {} GPUs (sm_{}{}): R{min} or newer does",
                d.version.as_str(),
                row.arch,
                g.cc.major,
                g.cc.minor
            );
            if !out.iter().any(|f| f.text == text) {
                out.push(Failure::new(Test::Driver, text));
            }
        }
    }
    if let (Some(f), Some(b)) = (out.first_mut(), gpu_branch_needed(m)) {
        f.change = Some(format!(
            "a driver of branch R{b} or newer (this is {})",
            d.version.as_str()
        ));
    }
    out
}

/// The GPUs a build has no code for.
fn gpu_failures(m: &Machine, b: &TorchBuild) -> Vec<Failure> {
    let mut out: Vec<Failure> = Vec::new();
    for g in &m.gpus {
        if b.runs_on(g.cc) {
            continue;
        }
        let text = format!(
            "no kernels for sm_{}{} (compiled: {})",
            g.cc.major,
            g.cc.minor,
            b.arch_list()
        );
        if !out.iter().any(|f| f.text == text) {
            out.push(Failure::new(Test::Gpu, text));
        }
    }
    out
}

fn python_failure(m: &Machine, release: &str, platform: Platform) -> Option<Failure> {
    let p = m.python.as_ref()?;
    let minors = torch_pythons::pythons(release, platform)?;
    let (major, minor) = p.value;
    (major != 3 || !minors.contains(&minor)).then(|| {
        Failure::new(
            Test::Python,
            format!(
                "no wheel for Python {major}.{minor} (it has {})",
                python_range(minors)
            ),
        )
        .change(format!(
            "Python {} (this is {major}.{minor})",
            python_range(minors)
        ))
    })
}

/// What the environment pins: a distribution whose Requires-Dist excludes this torch
/// (`skip` are reinstalled with it).
pub(crate) fn pin_failures(m: &Machine, release: &str, skip: &[&str]) -> Vec<Failure> {
    m.installed
        .iter()
        .filter(|i| i.name != "torch" && !skip.contains(&i.name.as_str()))
        .filter_map(|i: &Installed| {
            let spec = i.requires_torch.as_deref()?;
            (!holds(release, spec)).then(|| {
                Failure::new(
                    Test::Pin,
                    format!("{} {} requires torch{spec}", i.name, i.version),
                )
                .change(format!(
                    "{} {} gone or upgraded (it requires torch{spec}); or --fresh for a new environment",
                    i.name, i.version
                ))
            })
        })
        .collect()
}

/// The companions that come with torch when none is named: those installed beside an
/// installed torch (what `check`'s fixes reinstall), else both.
pub fn default_companions(m: &Machine) -> Vec<&'static str> {
    match m.installed("torch") {
        Some(_) => ["torchvision", "torchaudio"]
            .into_iter()
            .filter(|c| m.installed(c).is_some())
            .collect(),
        None => vec!["torchvision", "torchaudio"],
    }
}

/// The exact torch an installed or co-installed distribution pins, where it is another patch
/// of `release`'s minor.
fn exact_pin_in_minor(m: &Machine, release: &str, skip: &[&str]) -> Option<String> {
    m.installed
        .iter()
        .filter(|i| i.name != "torch" && !skip.contains(&i.name.as_str()))
        .filter_map(|i| i.requires_torch.as_deref()?.trim().strip_prefix("=="))
        .map(|v| v.trim().to_string())
        .find(|v| !v.contains(['*', ',']) && release_minor(v) == release_minor(release))
}

/// Another build of the same release is installed (`2.7.1+cpu` for `2.7.1+cu126`): pip
/// considers `torch==2.7.1` met and must be told to replace it. A different release needs no
/// such flag.
fn needs_reinstall(m: &Machine, pins: &[Pin], variant: &str) -> bool {
    pins.iter().any(|p| {
        m.installed(&p.name).is_some_and(|i| {
            i.version.split('+').next() == Some(p.version.as_str())
                && !same_build(m, i, &p.version, variant)
        })
    })
}

/// pip must not install over a torch conda manages.
fn conda_remove(m: &Machine) -> Vec<String> {
    if m.torch_from_conda {
        vec!["pytorch".into()]
    } else {
        Vec::new()
    }
}

/// torch with `with` (torchvision, torchaudio) at the releases that declare it.
pub fn recommend(m: &Machine, with: &[&str]) -> Recommendation {
    if !m.gpu_seen && m.driver.is_none() && m.cuda.is_none() {
        return recommend_cpu(m, with);
    }
    let platform = m.platform.as_ref().map(|p| p.value);
    let rows_platform = platform.unwrap_or(Platform::X86_64);
    let installed = m.installed("torch").map(|t| t.version.clone());
    // The installed release first (a fix keeps it where a build of it fits), then newest.
    let installed_minor = installed.as_deref().and_then(release_minor);
    let mut rows: Vec<&'static TorchBuild> = BUILDS
        .iter()
        .filter(|b| b.platform == rows_platform)
        .collect();
    // Within it, the installed build itself first: a working variant is not replaced.
    let installed_variant = m.installed("torch").cloned();
    // Then, among a release's builds, those whose architecture list a primary source confirms:
    // an unconfirmed row is picked only where no confirmed build of that release fits.
    let release_rank = |b: &TorchBuild| {
        BUILDS
            .iter()
            .position(|x| x.platform == b.platform && x.release == b.release)
    };
    rows.sort_by_key(|b| {
        let other_release =
            installed_minor.is_none() || release_minor(b.release) != installed_minor;
        let other_build = !installed_variant
            .as_ref()
            .is_some_and(|i| same_build(m, i, b.release, b.variant));
        (other_release, other_build, release_rank(b), !b.confirmed())
    });
    let judged: Vec<Judged<(&'static TorchBuild, String)>> = rows
        .into_iter()
        .map(|b| {
            // A row stands for its minor release: an exact pin of another patch of it
            // (vllm's torch==2.14.0) is that row's build at the pinned patch.
            let release = exact_pin_in_minor(m, b.release, with).unwrap_or(b.release.to_string());
            let mut failures = Vec::new();
            if platform.is_none() {
                failures.push(
                    Failure::new(
                        Test::Platform,
                        format!("no official CUDA build of torch for {}", m.platform_name),
                    )
                    .change("an x86_64 or aarch64 machine"),
                );
            }
            let cuda = b.cuda();
            if let Some(c) = cuda {
                failures.extend(wanted_cuda_failure(m, c));
            }
            failures.extend(python_failure(m, b.release, rows_platform));
            if let Some(c) = cuda {
                failures.extend(driver_failures(m, c));
            }
            failures.extend(gpu_failures(m, b));
            failures.extend(pin_failures(m, &release, with));
            if let (Some(mj), Some(c)) = (m.shared_cuda_major, cuda) {
                if c.major != mj {
                    failures.push(Failure::new(
                        Test::Pin,
                        format!(
                            "CUDA {c}: the packages asked for together are tried at CUDA {mj}.x"
                        ),
                    ));
                }
            }
            for (label, major) in &m.with_frameworks {
                if cuda.is_some_and(|c| c.major != *major) {
                    failures.push(
                        Failure::new(Test::Pin, format!("{label} is built on CUDA {major}"))
                            .change(format!(
                                "{label} for another CUDA, or a separate environment"
                            )),
                    );
                }
            }
            Judged {
                label: format!("torch {release}+{}", b.variant),
                item: (b, release),
                failures,
            }
        })
        .collect();
    // The newest build that fits a new environment, when the installed release is kept.
    let newest_fresh = installed_minor.and_then(|minor| {
        judged
            .iter()
            .find(|j| release_minor(j.item.0.release) != Some(minor) && j.failures.is_empty())
            .map(|j| j.label.clone())
    });
    let all_gpu = !judged.is_empty()
        && judged
            .iter()
            .all(|j| j.failures.iter().any(|f| f.test == Test::Gpu));
    let (chosen, considered, not_listed, must_change) = choose(judged);
    let mut notes = Vec::new();
    if all_gpu {
        let ccs: Vec<String> = m
            .gpus
            .iter()
            .map(|g| format!("sm_{}{}", g.cc.major, g.cc.minor))
            .collect();
        notes.push(format!(
            "No official {} build of torch has code for {}: build torch from source with TORCH_CUDA_ARCH_LIST set to it, or use a GPU the builds cover.",
            rows_platform.as_str(),
            ccs.join(", ")
        ));
    }
    if m.python.is_none() {
        notes.push("The Python version is unknown (no environment found): pass --python to check that a wheel exists for it.".into());
    }
    if m.driver.is_none() {
        notes.push("No NVIDIA driver was seen: the CUDA variant is chosen for the GPUs only; pass --driver to check it against a driver.".into());
    }
    if m.gpus.is_empty() {
        notes.push(if m.gpu_seen {
            "An NVIDIA GPU is present but its model was not identified: the build is chosen without its architecture; pass --gpu (sm_90, a name) to check it.".to_string()
        } else {
            "No GPU was identified: the build is chosen for the driver only; pass --gpu (sm_90, a name) to check its architectures.".to_string()
        });
    }
    let pick = chosen.map(|j| {
        let (b, release) = j.item;
        let pins = torch_pins(m, &release, with, &mut notes);
        if !b.confirmed() {
            notes.push(format!(
                "Unconfirmed: the CUDA version and architecture list of {} are not read from its own wheel (its source is in --format json). After installing, `python -c \"import torch; print(torch.version.cuda, torch.cuda.get_arch_list())\"` prints both.",
                j.label
            ));
        }
        let kept = installed_minor.is_some() && release_minor(&release) == installed_minor;
        if kept {
            if let Some(newer) = &newest_fresh {
                notes.push(format!("A newer build fits this machine too: {newer} (`--fresh` answers for a new environment)."));
            }
        }
        let installed_same = pins.iter().all(|p| {
            m.installed(&p.name)
                .is_some_and(|i| same_build(m, i, &p.version, b.variant))
        });
        let lacks = installed_same && installed_lacks_gpus(m);
        let reinstall = needs_reinstall(m, &pins, b.variant) || lacks;
        if installed_same && !lacks {
            notes.push("This build is what the environment has: nothing to install.".into());
        }
        let gpus: Vec<String> = m.gpus.iter().map(|g| format!("sm_{}{}", g.cc.major, g.cc.minor)).fold(Vec::new(), |mut v, s| { if !v.contains(&s) { v.push(s) } v });
        let mut why = Vec::new();
        if kept {
            why.push(format!("keeps the installed release {release}"));
        } else {
            why.push("the newest build that fits".to_string());
        }
        why.push(format!("CUDA {}", b.variant_cuda_text()));
        if let Some(d) = &m.driver {
            why.push(format!("runs on driver {}", d.version.as_str()));
        }
        if !gpus.is_empty() {
            why.push(format!("has code for {}", gpus.join(", ")));
        }
        if let Some(p) = &m.python {
            why.push(format!("has a wheel for Python {}.{}", p.value.0, p.value.1));
        }
        Pick {
            label: j.label,
            pins,
            index_url: Some(format!("{INDEX}/{}", b.variant)),
            torch_backend: Some(b.variant.into()),
            cuda: b.cuda().map(|c| c.to_string()),
            reason: why.join(", "),
            source: b.source.to_string(),
            reinstall,
            no_deps: false,
            build_env: Vec::new(),
            no_build_isolation: false,
            uninstall: Vec::new(),
            conda_remove: conda_remove(m),
        }
    });
    finish("torch", m, pick, considered, not_listed, must_change, notes)
}

/// Whether an installed distribution is this release of this variant: its `+cuXYZ` label,
/// else (PyPI's default builds have none) torch's own CUDA.
fn same_build(m: &Machine, i: &Installed, version: &str, variant: &str) -> bool {
    let (base, label) = match i.version.split_once('+') {
        Some((b, l)) => (b, Some(l.to_string())),
        None => (i.version.as_str(), None),
    };
    // A torch without a local label (conda's, a source build's) is the build its
    // version.py names: CUDA X.Y, else no CUDA at all, which no CUDA variant is.
    let label = label.or_else(|| {
        (i.name == "torch").then(|| match m.torch_cuda.as_deref() {
            Some(c) => format!("cu{}", c.replace('.', "")),
            None => "cpu".into(),
        })
    });
    base == version && label.is_none_or(|l| l == variant)
}

/// The installed torch's binary, as read, has no code for a GPU here (a build labelled
/// like an official one but compiled for fewer architectures).
fn installed_lacks_gpus(m: &Machine) -> bool {
    m.torch_arches
        .as_ref()
        .is_some_and(|(sass, ptx)| m.gpus.iter().any(|g| !covers(sass, ptx, g.cc)))
}

/// No GPU and no driver seen: the CPU build of the newest release with a wheel for this
/// Python (a CUDA build would only add gigabytes of unused libraries).
fn recommend_cpu(m: &Machine, with: &[&str]) -> Recommendation {
    let platform = m.platform.as_ref().map_or(Platform::X86_64, |p| p.value);
    let mut releases: Vec<&'static str> = BUILDS.iter().map(|b| b.release).collect();
    releases.dedup();
    // The installed release first, as for the CUDA builds.
    let installed_minor = m.installed("torch").and_then(|t| release_minor(&t.version));
    releases.sort_by_key(|r| installed_minor.is_none() || release_minor(r) != installed_minor);
    let judged: Vec<Judged<&'static str>> = releases
        .into_iter()
        .map(|r| {
            let mut failures: Vec<Failure> = python_failure(m, r, platform).into_iter().collect();
            if m.platform.is_none() {
                failures.push(
                    Failure::new(
                        Test::Platform,
                        format!("no official build of torch for {}", m.platform_name),
                    )
                    .change("an x86_64 or aarch64 machine"),
                );
            }
            failures.extend(pin_failures(m, r, with));
            Judged {
                item: r,
                label: format!("torch {r}+cpu"),
                failures,
            }
        })
        .collect();
    let (chosen, considered, not_listed, must_change) = choose(judged);
    let mut notes = vec!["No NVIDIA GPU or driver was seen: this is the CPU build. Pass --gpu and --driver to answer for a GPU machine.".to_string()];
    let pick = chosen.map(|j| {
        let pins = torch_pins(m, j.item, with, &mut notes);
        let reinstall = needs_reinstall(m, &pins, "cpu");
        let installed_same = pins.iter().all(|p| {
            m.installed(&p.name)
                .is_some_and(|i| i.version == format!("{}+cpu", p.version))
        });
        if installed_same {
            notes.push("This build is what the environment has: nothing to install.".into());
        }
        Pick {
            label: j.label,
            pins,
            index_url: Some(format!("{INDEX}/cpu")),
            torch_backend: Some("cpu".into()),
            cuda: None,
            reason: if installed_minor.is_some() && release_minor(j.item) == installed_minor {
                format!(
                    "no NVIDIA GPU or driver seen, keeps the installed release {}",
                    j.item
                )
            } else {
                "no NVIDIA GPU or driver seen, the newest release with a wheel for this Python"
                    .into()
            },
            source: "PyTorch's CPU index, download.pytorch.org/whl/cpu".into(),
            reinstall,
            no_deps: false,
            build_env: Vec::new(),
            no_build_isolation: false,
            uninstall: Vec::new(),
            conda_remove: conda_remove(m),
        }
    });
    finish("torch", m, pick, considered, not_listed, must_change, notes)
}

trait CudaText {
    fn variant_cuda_text(&self) -> String;
}

impl CudaText for TorchBuild {
    fn variant_cuda_text(&self) -> String {
        self.cuda()
            .map_or_else(|| self.variant.to_string(), |c| c.to_string())
    }
}

/// torch at `release` and each companion at the release a package to be installed with it
/// pins (vllm's torchvision==0.29.0: anything else pip would replace), else at the newest
/// release whose wheel declares it.
fn torch_pins(m: &Machine, release: &str, with: &[&str], notes: &mut Vec<String>) -> Vec<Pin> {
    let mut pins = vec![Pin {
        name: "torch".into(),
        version: release.into(),
        requirement: format!("torch=={release}"),
    }];
    // (who pins, "torchvision==0.29.0") for the note.
    let mut pinned_by: Vec<(String, String)> = Vec::new();
    for name in with {
        let pinned = m.installed.iter().find_map(|i| {
            let row = crate::compat::packages::release_of(&i.name, &i.version)?;
            let (_, v) = row.companions.iter().find(|(n, _)| n == name)?;
            let r = companions::RELEASES
                .iter()
                .find(|c| c.package == *name && c.version == *v)?;
            // Only where that release takes this torch (a pin for another torch is GD046's).
            let declared = r.requires_torch;
            (declared.is_empty() || crate::pyversion::holds(release, declared))
                .then(|| (r, format!("{} {}", i.name, i.version)))
        });
        if let Some((r, by)) = pinned {
            pinned_by.push((by, format!("{}=={}", r.package, r.version)));
            pins.push(pin_of(r));
            continue;
        }
        match companions::newest_for(name, release) {
            Some(r) => pins.push(pin_of(r)),
            None => notes.push(format!(
                "No {name} release on PyPI declares torch {release}: it is left out."
            )),
        }
    }
    if let Some((by, _)) = pinned_by.first() {
        let which: Vec<&str> = pinned_by.iter().map(|(_, p)| p.as_str()).collect();
        notes.push(format!(
            "{by} pins {}: these are installed with torch, so installing {by} keeps them.",
            which.join(" and ")
        ));
        // An older companion that compares CUDA minors at import must match torch's build.
        for p in pins.iter().skip(1) {
            if pinned_by.iter().any(|(_, w)| *w == p.requirement)
                && companions::checks_cuda_minor(&p.name, &p.version)
            {
                notes.push(format!(
                    "{} refuses a torch of another CUDA minor at import: take it from torch's index as above; if that index has no {}, install {by} alone, which takes torch and {} from PyPI.",
                    p.requirement, p.requirement, p.name
                ));
            }
        }
    }
    pins
}

fn pin_of(r: &CompanionRelease) -> Pin {
    Pin {
        name: r.package.into(),
        version: r.version.into(),
        requirement: format!("{}=={}", r.package, r.version),
    }
}

/// A PyTorch index variant as PyTorch names them: `cu126`, `cpu`, `rocm6.2`, `rocm6.2.4`.
fn is_variant_label(v: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match v {
        "cpu" => true,
        _ => match (v.strip_prefix("cu"), v.strip_prefix("rocm")) {
            (Some(n), _) => digits(n),
            (_, Some(n)) => n.split('.').all(digits),
            _ => false,
        },
    }
}

/// torchvision or torchaudio alone, for the installed torch: the newest release that
/// declares it, from torch's own index, with `--no-deps` so torch stays. Without torch, torch
/// and the companion together.
pub fn recommend_companion(m: &Machine, name: &str) -> Recommendation {
    let Some(torch) = m.installed("torch") else {
        let mut r = recommend(m, &[name]);
        r.package = name.into();
        return r;
    };
    let tv = torch.version.clone();
    let base = tv.split('+').next().unwrap_or(&tv).to_string();
    let variant = build_variant(&tv, m.torch_cuda.as_deref());
    // Newest first; a release declaring no torch is never proposed (nothing says it fits).
    let mut rows: Vec<&'static CompanionRelease> = companions::RELEASES
        .iter()
        .filter(|r| r.package == name)
        .collect();
    rows.sort_by(|a, b| cmp_versions(b.version, a.version));
    let judged: Vec<Judged<&'static CompanionRelease>> = rows
        .into_iter()
        .map(|r| {
            let mut failures = Vec::new();
            if r.requires_torch.is_empty() {
                failures.push(Failure::new(Test::Pin, "declares no torch requirement"));
            } else if !holds(&base, r.requires_torch) {
                failures.push(
                    Failure::new(
                        Test::Pin,
                        format!(
                            "requires torch{}; torch {tv} is installed",
                            r.requires_torch
                        ),
                    )
                    .change(format!("torch{} in place of {tv}", r.requires_torch)),
                );
            }
            Judged {
                item: r,
                label: format!("{} {}", r.package, r.version),
                failures,
            }
        })
        .collect();
    let (chosen, considered, not_listed, must_change) = choose(judged);
    let pick = chosen.map(|j| {
        let r = j.item;
        // The label comes from the installed files: only a well-formed variant names an index
        // (it becomes part of a command).
        let index = variant.as_deref().filter(|v| is_variant_label(v));
        // Only the same release in another build needs pip told to replace it.
        let reinstall = m
            .installed(name)
            .is_some_and(|i| i.version.split('+').next() == Some(r.version) && Some(i.version.as_str()) != variant.as_deref().map(|v| format!("{}+{v}", r.version)).as_deref());
        Pick {
            label: j.label,
            pins: vec![pin_of(r)],
            index_url: index.map(|v| format!("{INDEX}/{v}")),
            torch_backend: index.map(str::to_string),
            cuda: variant.as_deref().and_then(crate::compat::torch::variant_cuda).map(|c| c.to_string()),
            reason: format!(
                "the newest {name} that declares the installed torch {tv} (torch{}), from torch's index",
                r.requires_torch
            ),
            source: r.source(),
            reinstall,
            no_deps: true,
            build_env: Vec::new(),
            no_build_isolation: false,
            uninstall: Vec::new(),
            conda_remove: Vec::new(),
        }
    });
    finish(
        name,
        m,
        pick,
        considered,
        not_listed,
        must_change,
        Vec::new(),
    )
}

pub(crate) fn finish(
    package: &str,
    m: &Machine,
    pick: Option<Pick>,
    considered: Vec<super::Considered>,
    not_listed: usize,
    must_change: Vec<super::Change>,
    notes: Vec<String>,
) -> Recommendation {
    let commands = pick
        .as_ref()
        .map(|p| commands::all(m, p))
        .unwrap_or_default();
    Recommendation {
        package: package.into(),
        pick,
        considered,
        not_listed,
        must_change,
        notes,
        commands,
    }
}
