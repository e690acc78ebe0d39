//! GD060: a CUDA-using native module of a Python environment that the loader will refuse,
//! predicted from the linkage probe: a needed library no search step finds ("cannot open
//! shared object file"), a library without a version node the module needs ("version
//! `X' not found"), or without a versioned symbol it imports ("undefined symbol: X,
//! version Y"). One finding per cause, naming every module it breaks. Where the emulation or
//! the walk of the environment stopped at a bound, probe_health's GD016 says what was not
//! judged.

use crate::codes;
use std::collections::BTreeMap;

use super::{Outcome, Rule};
use crate::facts::linkage::{Failed, Linkage, Module, FILES_GIVEN};
use crate::facts::pytorch::PythonEnv;
use crate::findings::{Finding, Severity};
use crate::loader::{file_name, Failure, How};
use crate::pyversion::holds;
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "extension_loading",
    codes: &[codes::GD060],
    views: &[super::View::Libs],
    checks: "every CUDA-using native module in the Python environments finds its libraries, versions and symbols",
    judges: &[SubjectKind::Extension],
    run,
};

/// Libraries the NVIDIA driver installs: their absence is the driver's finding (no
/// driver, a container started without GPUs), not the environment's.
pub const DRIVER_SONAMES: &[&str] = &["libcuda.so.1", "libcuda.so", "libnvidia-ml.so.1"];

/// A failure's cause: (kind, library or soname, version, symbol).
type CauseKey = (u8, String, String, String);

fn run(snap: &Snapshot) -> Outcome {
    let Some(linkages) = &snap.linkage else {
        return Outcome::NotApplicable("the linkage probe did not run".into());
    };
    if linkages.is_empty() {
        return Outcome::NotApplicable(
            "no CUDA-using native module in any Python environment".into(),
        );
    }
    let mut out = Vec::new();
    for l in linkages {
        let env = snap
            .python
            .as_ref()
            .and_then(|envs| envs.iter().find(|e| e.site == l.site));
        // One finding per cause: (kind, the library or soname, the version, the symbol).
        let mut causes: BTreeMap<CauseKey, Vec<(&Module, &Failed)>> = BTreeMap::new();
        for m in &l.modules {
            // glibc stops at a module's first undefined symbol: the rest are its evidence.
            let first_undefined = m
                .failures
                .iter()
                .position(|f| matches!(f.failure, Failure::UndefinedSymbol { .. }));
            for (k, f) in m.failures.iter().enumerate() {
                if matches!(f.failure, Failure::UndefinedSymbol { .. })
                    && Some(k) != first_undefined
                {
                    continue;
                }
                let key = match &f.failure {
                    Failure::Missing { needed, .. }
                        if DRIVER_SONAMES.contains(&needed.as_str()) =>
                    {
                        (4, needed.clone(), String::new(), String::new())
                    }
                    // torch pins the wheel that ships it and it is not installed: GD044's
                    // verdict, which names the wheels and this same loader message.
                    Failure::Missing { needed, .. }
                        if env.is_some_and(|e| torch_pin_missing(e, needed)) =>
                    {
                        continue
                    }
                    Failure::Missing { needed, .. } => {
                        (0, needed.clone(), String::new(), String::new())
                    }
                    Failure::VersionNotFound {
                        version, library, ..
                    } => (1, library.clone(), version.clone(), String::new()),
                    Failure::UndefinedSymbol {
                        symbol,
                        version,
                        library,
                        ..
                    } => (2, library.clone(), version.clone(), symbol.clone()),
                    Failure::Unloadable { path, .. } => {
                        (3, path.clone(), String::new(), String::new())
                    }
                    Failure::Limit { .. } => continue,
                };
                causes.entry(key).or_default().push((m, f));
            }
        }
        for ((kind, soname, _, _), hits) in causes {
            out.push(if kind == 4 {
                driver_library(l, &soname, &hits)
            } else {
                finding(snap, l, env, &hits)
            });
        }
    }
    Outcome::Checked(out)
}

/// A driver library no step finds: those modules load only where the NVIDIA driver is
/// installed (or injected into the container). Whether that is wrong here is the driver
/// findings' verdict; this says which modules depend on it.
fn driver_library(l: &Linkage, soname: &str, hits: &[(&Module, &Failed)]) -> Finding {
    let packages = modules_text(hits);
    let site = if l.site == FILES_GIVEN {
        "the files given".to_string()
    } else {
        l.site.clone()
    };
    let mut f = Finding::new(
        codes::GD060,
        Severity::Info,
        format!(
            "{packages} {} {soname}, which comes with the NVIDIA driver and is not on this machine's loader path",
            if packages.contains(", ") { "need" } else { "needs" }
        ),
    )
    .detail(format!(
        "{soname} is installed by the NVIDIA driver (or injected into a container by the NVIDIA runtime), not by a Python package. These modules load only where it is; whether its absence is a fault here is what the driver findings of `gpudoctor check` say."
    ));
    for (m, failed) in hits {
        f = f.evidence(
            Subject::Extension(m.path.clone()),
            failed.failure.loader_message(),
            site.clone(),
        );
    }
    f
}

/// "torch 2.15.0, torchvision 0.29.2": the distributions whose modules a cause breaks.
fn modules_text(hits: &[(&Module, &Failed)]) -> String {
    let mut packages: Vec<String> = Vec::new();
    for (m, _) in hits {
        let label = m.dist.clone().unwrap_or_else(|| m.package.clone());
        if !packages.contains(&label) {
            packages.push(label);
        }
    }
    packages.join(", ")
}

fn finding(
    snap: &Snapshot,
    l: &Linkage,
    env: Option<&PythonEnv>,
    hits: &[(&Module, &Failed)],
) -> Finding {
    let packages = modules_text(hits);
    // A cause exists because a module failed with it: never empty.
    let (_, first) = hits[0];
    // Every module it breaks is optional: a feature fails, the import does not.
    let optional: Vec<&str> = hits
        .iter()
        .filter_map(|(m, _)| m.optional.as_deref())
        .collect();
    let all_optional = optional.len() == hits.len();
    let severity = if all_optional {
        Severity::Warning
    } else {
        Severity::Error
    };
    let subject = match &first.failure {
        Failure::Missing { needed, .. } => Subject::library(needed),
        Failure::UndefinedSymbol { library, by, .. } if library.is_empty() => {
            Subject::Extension(by.clone())
        }
        Failure::VersionNotFound { library, .. } | Failure::UndefinedSymbol { library, .. } => {
            Subject::library(file_name(library))
        }
        Failure::Unloadable { path, .. } => Subject::File(path.clone()),
        Failure::Limit { .. } => Subject::Environment,
    };
    let site = if l.site == FILES_GIVEN {
        "the files given".to_string()
    } else {
        l.site.clone()
    };
    let consequence = if all_optional {
        format!(
            "The import works, but {}.",
            optional.first().copied().unwrap_or("a feature is disabled")
        )
    } else if l.site == FILES_GIVEN {
        "dlopen of these files fails.".to_string()
    } else {
        "Importing it fails (or, for a library the package opens later, the feature that opens it fails).".to_string()
    };
    let title_what = match &first.failure {
        Failure::Missing { needed, .. } => format!("needs {needed}, which the loader cannot find"),
        Failure::VersionNotFound {
            version, library, ..
        } => format!(
            "needs version {version} of {}, which the copy the loader picks does not define",
            file_name(library)
        ),
        Failure::UndefinedSymbol {
            symbol, library, ..
        } if torch_abi(&first.failure) => format!(
            "was built against another torch than the installed {}: it needs {symbol}, which torch's {} does not define",
            torch_version(env).unwrap_or_else(|| "one".into()),
            if library.is_empty() { "libraries" } else { file_name(library) }
        ),
        Failure::UndefinedSymbol {
            symbol,
            version,
            library,
            ..
        } if version.is_empty() => {
            if library.is_empty() {
                format!("needs {symbol}, which no library it loads defines")
            } else {
                format!(
                    "needs {symbol}, which the {} the loader picks does not define",
                    file_name(library)
                )
            }
        }
        Failure::UndefinedSymbol {
            symbol,
            version,
            library,
            ..
        } => format!(
            "needs {symbol}@{version}, which the {} the loader picks does not define",
            file_name(library)
        ),
        Failure::Unloadable { path, reason } => format!("cannot load {path}: {reason}"),
        Failure::Limit { detail } => detail.clone(),
    };
    let built_for = if torch_abi(&first.failure) {
        format!(" {}", built_for(env, hits))
    } else {
        String::new()
    };
    let mut f = Finding::new(codes::GD060, severity, format!("{packages} {title_what}"))
        .detail(format!(
            "The loader will print \"{}\". {consequence}{built_for}",
            first.failure.loader_message()
        ))
        .evidence(
            subject,
            match (&first.failure, &first.picked_how) {
                (
                    Failure::VersionNotFound { library, .. }
                    | Failure::UndefinedSymbol { library, .. },
                    Some(how),
                ) => format!("the loader picks {library} ({})", how.describe()),
                (Failure::Missing { needed, .. }, _) => {
                    format!("no step of the loader's search finds {needed}")
                }
                _ => first.failure.loader_message(),
            },
            "the dynamic loader, emulated on the files (gpudoctor libs)",
        );
    for (m, failed) in hits {
        f = f.evidence(
            Subject::Extension(m.path.clone()),
            failed.failure.loader_message(),
            site.clone(),
        );
    }
    for w in &first.would_work {
        f = f.context(format!("would work: {w}"), "the files on disk");
    }
    // The module's further undefined symbols (glibc stops at the first).
    for (m, _) in hits {
        let more: Vec<&str> = m
            .failures
            .iter()
            .filter_map(|x| match &x.failure {
                Failure::UndefinedSymbol { symbol, .. } => Some(symbol.as_str()),
                _ => None,
            })
            .skip(1)
            .collect();
        if !more.is_empty() {
            f = f.context(
                format!(
                    "{} also needs, undefined as well: {}",
                    file_name(&m.path),
                    more.join(", ")
                ),
                "the dynamic loader, emulated on the files (gpudoctor libs)",
            );
        }
    }
    fixes(snap, f, l, env, hits)
}

fn fixes(
    snap: &Snapshot,
    mut f: Finding,
    l: &Linkage,
    env: Option<&PythonEnv>,
    hits: &[(&Module, &Failed)],
) -> Finding {
    let Some((_, first)) = hits.first() else {
        return f;
    };
    match &first.failure {
        Failure::Missing { needed, .. } => {
            let cuda_major = env
                .and_then(|e| e.torch.as_ref())
                .and_then(|t| t.cuda.as_deref())
                .and_then(|c| c.split('.').next()?.parse::<u32>().ok());
            match provider(needed, cuda_major) {
                Some((wheel, spec)) => {
                    let pinned = env
                        .and_then(|e| e.torch.as_ref())
                        .and_then(|t| t.requires.iter().find(|r| r.name == wheel));
                    let installed =
                        env.and_then(|e| e.nvidia_wheels.iter().find(|d| d.name == wheel));
                    match pinned {
                        // torch pins this wheel at a release without the needed major: the two
                        // cannot share the environment.
                        Some(r) if !r.spec.is_empty() && !spec_overlaps(&r.spec, &spec) => {
                            f = f.context(
                                format!(
                                    "torch pins {}{} (Requires-Dist), which excludes {wheel}{spec}",
                                    r.name, r.spec
                                ),
                                "torch METADATA",
                            );
                            let Some(framework) = framework_of(hits) else {
                                return f.fix_cmd(
                                    "Choose the torch build for the CUDA libraries installed here",
                                    "gpudoctor recommend torch",
                                );
                            };
                            f = f
                                .fix_cmd(
                                    "Choose releases that agree on this library's major (torch and the other framework)",
                                    crate::sh!("gpudoctor recommend torch {}", framework),
                                )
                                .fix_text("Or give the other framework its own environment");
                            // The recommender's release of that framework for torch's majors,
                            // where it has the framework's table.
                            if let Some(env) = env.filter(|_| {
                                crate::compat::packages::tables()
                                    .iter()
                                    .any(|(n, _)| *n == framework)
                            }) {
                                let rec = crate::recommend::frameworks::recommend(
                                    &crate::recommend::Machine::for_env(snap, env),
                                    &framework,
                                );
                                if let Some(p) = &rec.pick {
                                    f = rec.add_fix(
                                        f,
                                        format!(
                                            "Or install {}, built for the majors torch uses",
                                            p.label
                                        ),
                                    );
                                }
                            }
                        }
                        _ => {
                            if let Some(d) = installed {
                                f = f.context(format!("{} {} is installed but does not provide {needed} where the loader looks", d.name, d.version), "site-packages");
                            }
                            f = f.fix_cmd(
                                format!("Install the wheel that provides {needed}"),
                                match env {
                                    Some(env) => crate::recommend::commands::install_into(
                                        env,
                                        &[format!("{wheel}{spec}")],
                                        false,
                                        false,
                                    ),
                                    None => crate::sh!("pip install {}", format!("{wheel}{spec}")),
                                },
                            );
                        }
                    }
                }
                None => {
                    f = f.fix_text(format!(
                        "Install the package that provides {needed} (your distribution's package manager), or add its directory to LD_LIBRARY_PATH"
                    ));
                }
            }
        }
        Failure::UndefinedSymbol { .. } if torch_abi(&first.failure) => {
            f = abi_fixes(snap, f, env, hits);
        }
        Failure::VersionNotFound { library, .. } | Failure::UndefinedSymbol { library, .. } => {
            match &first.picked_how {
                Some(How::LdLibraryPath { entry, .. }) => {
                    let text = format!(
                        "Remove {entry} from LD_LIBRARY_PATH for this program{}{}",
                        if l.site == FILES_GIVEN {
                            ""
                        } else {
                            " (PyTorch's and NVIDIA's wheels need none)"
                        },
                        first
                            .would_work
                            .first()
                            .map(|w| format!("; the loader then takes {w}"))
                            .unwrap_or_default()
                    );
                    f = match super::ld_library_path_without(
                        snap,
                        std::path::Path::new(entry.trim_end_matches('/')),
                    ) {
                        Some(cmd) => f.fix_cmd(text, cmd),
                        None => f.fix_text(text),
                    };
                }
                Some(How::AlreadyLoaded) => {
                    f = f.fix_text(format!(
                        "{} was loaded first by another module of the process (torch or a framework imported before); install versions of both that need the same {} release",
                        library,
                        file_name(library)
                    ));
                }
                _ if library.is_empty() => {
                    f = f.fix_text("Reinstall the package built against the libraries installed here (the module was built against a library that defined this symbol)");
                }
                _ => {
                    let soname = file_name(library);
                    let wheel = provider(soname, None).map(|(w, _)| w);
                    f = f.fix_text(match wheel {
                        Some(w) => format!(
                            "Install a newer {w} (the module was built against a newer {soname})"
                        ),
                        None => format!(
                            "Install a newer {soname} (the module was built against a newer one)"
                        ),
                    });
                }
            }
        }
        _ => {}
    }
    f
}

/// An unversioned symbol of PyTorch's C++ namespaces that the installed torch lacks: the
/// module was compiled against another torch (or the other C++ ABI).
/// An unversioned symbol one of torch's own libraries would define: the module was built
/// against another torch.
pub(super) fn torch_abi(f: &Failure) -> bool {
    matches!(f, Failure::UndefinedSymbol { symbol, version, .. }
        if version.is_empty() && crate::loader::torch_library_of(symbol).is_some())
}

fn torch_version(env: Option<&PythonEnv>) -> Option<String> {
    let t = env?.torch.as_ref()?;
    Some(
        t.version
            .get()
            .cloned()
            .unwrap_or_else(|| t.dist_version.clone()),
    )
}

/// The installed distribution a module belongs to ("torchvision 0.27.1" → its Dist).
fn dist_of<'e>(env: Option<&'e PythonEnv>, m: &Module) -> Option<&'e crate::facts::pytorch::Dist> {
    let name = m.dist.as_deref()?.split(' ').next()?;
    env?.companions
        .iter()
        .chain(&env?.frameworks)
        .find(|d| d.name.eq_ignore_ascii_case(name))
}

/// Which torch the modules say they were built for: their METADATA's torch pin.
fn built_for(env: Option<&PythonEnv>, hits: &[(&Module, &Failed)]) -> String {
    let tv = torch_version(env).unwrap_or_else(|| "installed".into());
    let mut pins = Vec::new();
    for (m, _) in hits {
        if let Some(d) = dist_of(env, m) {
            let said = match &d.requires_torch {
                Some(spec) => format!("{} {} declares torch{spec}", d.name, d.version),
                None => format!("{} {} declares no torch requirement, so which torch it was built against is not recorded", d.name, d.version),
            };
            if !pins.contains(&said) {
                pins.push(said);
            }
        }
    }
    let pins = if pins.is_empty() {
        String::new()
    } else {
        format!(" {} (METADATA).", pins.join("; "))
    };
    let abi = hits.iter().find_map(|(_, f)| match &f.failure {
        Failure::UndefinedSymbol {
            symbol,
            other_abi: Some(other),
            ..
        } => Some((symbol.contains("__cxx11"), other.clone())),
        _ => None,
    });
    let abi = match abi {
        Some((module_cxx11, other)) => format!(
            " This torch defines the same function for the other C++ ABI ({other}): the module was compiled with _GLIBCXX_USE_CXX11_ABI={}, torch with {}.",
            u8::from(module_cxx11),
            u8::from(!module_cxx11)
        ),
        None => String::new(),
    };
    format!("Compiled extensions link against the exact C++ symbols of the torch they were built with; torch {tv} does not define this one.{pins}{abi}")
}

/// The release built for the installed torch: the companion recommender for torchvision
/// and torchaudio; for other extensions, a rebuild against this torch.
fn abi_fixes(
    snap: &Snapshot,
    mut f: Finding,
    env: Option<&PythonEnv>,
    hits: &[(&Module, &Failed)],
) -> Finding {
    let tv = torch_version(env).unwrap_or_else(|| "installed".into());
    let mut done: Vec<String> = Vec::new();
    for (m, _) in hits {
        let Some(d) = dist_of(env, m) else { continue };
        if done.contains(&d.name) {
            continue;
        }
        done.push(d.name.clone());
        let Some(env) = env else { continue };
        if d.name == "torchvision" || d.name == "torchaudio" {
            let rec = crate::recommend::torch::recommend_companion(
                &crate::recommend::Machine::for_env(snap, env),
                &d.name,
            );
            f = match &rec.pick {
                Some(_) => rec.add_fix(f, format!("Install the {} built for torch {tv}", d.name)),
                None => f.fix_text(format!(
                    "Reinstall torch and {} together from one index and release line",
                    d.name
                )),
            };
        } else {
            let python = env
                .interpreter
                .clone()
                .or_else(|| env.python.clone())
                .unwrap_or_else(|| "python".into());
            // Text, not a command: which wheel fits is the project's to say, and a source
            // build needs a CUDA toolkit and the project's build requirements.
            f = f.fix_text(format!(
                "Reinstall {name} built for torch {tv}: the wheel its project publishes for torch {tv}, or a build against this torch ({python} -m pip install --force-reinstall --no-deps --no-build-isolation --no-cache-dir --no-binary {name} {name}=={version}, which compiles it with a CUDA toolkit)",
                name = d.name,
                version = d.version,
            ));
        }
    }
    if done.is_empty() {
        f = f.fix_text(format!(
            "Reinstall the package that ships this module built for torch {tv}, or rebuild it against this torch"
        ));
    }
    f
}

/// Whether torch's METADATA pins the wheel that provides `soname` and it is not installed.
pub(crate) fn torch_pin_missing(env: &PythonEnv, soname: &str) -> bool {
    let Some(t) = &env.torch else { return false };
    t.requires.iter().any(|r| {
        let cuda = r.name.rsplit_once("-cu").and_then(|(_, m)| m.parse().ok());
        provider(soname, cuda).is_some_and(|(wheel, _)| wheel == r.name)
            && !env.nvidia_wheels.iter().any(|d| d.name == r.name)
    })
}

/// The distribution, other than torch, whose modules a cause breaks.
fn framework_of(hits: &[(&Module, &Failed)]) -> Option<String> {
    hits.iter()
        .filter(|(m, _)| m.package != "torch")
        .find_map(|(m, _)| {
            m.dist
                .as_ref()
                .and_then(|d| d.split(' ').next())
                .map(str::to_string)
        })
}

/// Whether two specifiers can both hold: tried on the versions each names.
fn spec_overlaps(a: &str, b: &str) -> bool {
    let versions = |s: &str| -> Vec<String> {
        s.split(',')
            .map(|p| {
                p.trim()
                    .trim_start_matches(|c: char| "<>=!~".contains(c))
                    .to_string()
            })
            .filter(|v| !v.is_empty())
            .collect()
    };
    versions(a)
        .iter()
        .chain(versions(b).iter())
        .any(|v| holds(v, a) && holds(v, b))
}

/// The pip wheel that ships a soname, with the version range that gives that soname's
/// major: NVIDIA's CUDA 12 wheels carry `-cu12`; CUDA 13's toolkit libraries are
/// unsuffixed, cuDNN, NCCL, cuSPARSELt and NVSHMEM keep `-cu13`.
pub fn provider(soname: &str, cuda_major: Option<u32>) -> Option<(String, String)> {
    let (stem, after) = soname.split_once(".so.")?;
    let major: u32 = after.split('.').next()?.parse().ok()?;
    // Libraries whose soname major is the CUDA major.
    let cuda_named = [
        ("libcudart", "nvidia-cuda-runtime"),
        ("libcublas", "nvidia-cublas"),
        ("libcublasLt", "nvidia-cublas"),
        ("libnvrtc", "nvidia-cuda-nvrtc"),
        ("libnvJitLink", "nvidia-nvjitlink"),
        ("libcupti", "nvidia-cuda-cupti"),
        ("libnvjpeg", "nvidia-nvjpeg"),
    ];
    let suffix = |cuda: u32, keeps: bool| -> String {
        if cuda >= 13 && !keeps {
            String::new()
        } else {
            format!("-cu{cuda}")
        }
    };
    if let Some((_, wheel)) = cuda_named.iter().find(|(s, _)| *s == stem) {
        return Some((
            format!("{wheel}{}", suffix(major, false)),
            format!(">={major},<{}", major + 1),
        ));
    }
    let cuda = cuda_major.unwrap_or(12);
    let other = [
        ("libcudnn", "nvidia-cudnn", true),
        ("libnccl", "nvidia-nccl", true),
        ("libcusparseLt", "nvidia-cusparselt", true),
        ("libnvshmem_host", "nvidia-nvshmem", true),
        ("libcufft", "nvidia-cufft", false),
        ("libcufftw", "nvidia-cufft", false),
        ("libcurand", "nvidia-curand", false),
        ("libcusolver", "nvidia-cusolver", false),
        ("libcusparse", "nvidia-cusparse", false),
        ("libcufile", "nvidia-cufile", false),
    ];
    let stem_family = if stem.starts_with("libcudnn") {
        "libcudnn"
    } else {
        stem
    };
    let (_, wheel, keeps) = other.iter().find(|(s, _, _)| *s == stem_family)?;
    Some((
        format!("{wheel}{}", suffix(cuda, *keeps)),
        format!(">={major},<{}", major + 1),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::Object;
    use crate::testing::*;

    fn missing(needed: &str, by: &str) -> Failure {
        Failure::Missing {
            needed: needed.into(),
            by: by.into(),
        }
    }

    fn with(s: &mut Snapshot, modules: Vec<Module>) {
        let objects = (0..4)
            .map(|i| Object::for_test(&format!("{SITE}/m{i}.so"), None, How::Path, Vec::new()))
            .collect();
        s.linkage = Some(vec![linkage(modules, objects, Vec::new())]);
    }

    #[test]
    fn nothing_to_judge_without_modules() {
        assert_na(run(&healthy()));
    }

    #[test]
    fn a_missing_cuda_library_is_an_error_with_the_wheel_that_provides_it() {
        let mut s = healthy();
        with(
            &mut s,
            vec![linked_module(
                "onnxruntime",
                "onnxruntime-gpu 1.20.1",
                1,
                vec![missing("libcublasLt.so.12", "x")],
            )],
        );
        let f = only(run(&s), codes::GD060, Severity::Error);
        assert!(
            f.title
                .contains("onnxruntime-gpu 1.20.1 needs libcublasLt.so.12"),
            "{}",
            f.title
        );
        assert_eq!(first_cmd(&f), "pip install \"nvidia-cublas-cu12>=12,<13\"");
    }

    #[test]
    fn a_major_torch_pins_otherwise_asks_for_a_compatible_pair() {
        let mut s = healthy();
        // torch pins cuDNN 8; onnxruntime-gpu's provider needs libcudnn.so.9.
        torch_mut(&mut s).requires = vec![requirement("nvidia-cudnn-cu12", "==8.9.2.26")];
        with(
            &mut s,
            vec![linked_module(
                "onnxruntime",
                "onnxruntime-gpu 1.20.1",
                1,
                vec![missing("libcudnn.so.9", "x")],
            )],
        );
        let f = only(run(&s), codes::GD060, Severity::Error);
        assert_eq!(first_cmd(&f), "gpudoctor recommend torch onnxruntime-gpu");
        assert!(f
            .evidence
            .iter()
            .any(|e| e.value.contains("torch pins nvidia-cudnn-cu12==8.9.2.26")));
    }

    fn abi(symbol: &str, library: &str) -> Failure {
        Failure::UndefinedSymbol {
            symbol: symbol.into(),
            version: String::new(),
            library: library.into(),
            by: format!("{SITE}/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so"),
            other_abi: None,
        }
    }

    #[test]
    fn an_extension_built_for_another_torch_says_so_and_how_to_rebuild() {
        let mut s = healthy();
        let mut fa = dist("flash-attn", "2.7.4.post1");
        fa.requires_torch = None;
        primary_env(&mut s).frameworks.push(fa);
        with(
            &mut s,
            vec![linked_module(
                "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so",
                "flash-attn 2.7.4.post1",
                1,
                vec![abi(
                    "_ZNK3c1010TensorImpl4sizeEl",
                    &format!("{SITE}/torch/lib/libc10.so"),
                )],
            )],
        );
        let f = only(run(&s), codes::GD060, Severity::Error);
        assert!(
            f.title.starts_with(
                "flash-attn 2.7.4.post1 was built against another torch than the installed"
            ) && f
                .title
                .contains("_ZNK3c1010TensorImpl4sizeEl, which torch's libc10.so does not define"),
            "{}",
            f.title
        );
        assert!(
            f.detail
                .contains("undefined symbol: _ZNK3c1010TensorImpl4sizeEl\""),
            "{}",
            f.detail
        );
        assert!(
            f.detail.contains("declares no torch requirement"),
            "{}",
            f.detail
        );
        let fix = format!("{:?}", f.fix);
        assert!(
            fix.contains("--no-cache-dir --no-binary flash-attn flash-attn==2.7.4.post1"),
            "{fix}"
        );
        // Built with the other C++ ABI: the same function is there under the other spelling.
        let new = "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE";
        let mut failure = abi(new, &format!("{SITE}/torch/lib/libc10.so"));
        if let Failure::UndefinedSymbol { other_abi, .. } = &mut failure {
            *other_abi = Some("_ZN3c106detail14torchCheckFailEPKcS2_jRKSs".into());
        }
        with(
            &mut s,
            vec![linked_module(
                "flash_attn_2_cuda.so",
                "flash-attn 2.7.4.post1",
                1,
                vec![failure],
            )],
        );
        let f = only(run(&s), codes::GD060, Severity::Error);
        assert!(
            f.detail
                .contains("compiled with _GLIBCXX_USE_CXX11_ABI=1, torch with 0"),
            "{}",
            f.detail
        );
        // An unversioned symbol outside torch's namespaces reads as the loader's fact only.
        with(
            &mut s,
            vec![linked_module(
                "x",
                "x 1.0",
                1,
                vec![abi("cuda_helper_v2", "")],
            )],
        );
        let f = only(run(&s), codes::GD060, Severity::Error);
        assert!(
            f.title
                .ends_with("needs cuda_helper_v2, which no library it loads defines"),
            "{}",
            f.title
        );
    }

    #[test]
    fn an_optional_module_only_loses_a_feature() {
        let mut s = healthy();
        let mut m = linked_module(
            "torchvision",
            "torchvision 0.19.1",
            1,
            vec![missing("libnvjpeg.so.12", "x")],
        );
        m.optional = Some("torchvision.io's image decoding".into());
        with(&mut s, vec![m]);
        let f = only(run(&s), codes::GD060, Severity::Warning);
        assert!(
            f.detail
                .contains("The import works, but torchvision.io's image decoding"),
            "{}",
            f.detail
        );
    }

    #[test]
    fn a_missing_driver_library_is_context_for_the_driver_findings() {
        let mut s = healthy();
        with(
            &mut s,
            vec![linked_module(
                "torch",
                "torch 2.4.1",
                1,
                vec![missing("libcuda.so.1", "x")],
            )],
        );
        let f = only(run(&s), codes::GD060, Severity::Info);
        assert!(
            f.title.contains("comes with the NVIDIA driver"),
            "{}",
            f.title
        );
    }

    #[test]
    fn an_undefined_symbol_from_ld_library_path_says_which_entry_to_drop() {
        let mut s = healthy();
        let mut m = linked_module(
            "torch",
            "torch 2.4.1",
            1,
            vec![Failure::UndefinedSymbol {
                symbol: "__nvJitLinkAddData_12_1".into(),
                version: "libnvJitLink.so.12".into(),
                library: "/opt/cuda-12.0/lib64/libnvJitLink.so.12".into(),
                by: format!("{SITE}/nvidia/cusparse/lib/libcusparse.so.12"),
                other_abi: None,
            }],
        );
        m.failures[0].picked_how = Some(How::LdLibraryPath {
            index: 1,
            entry: "/opt/cuda-12.0/lib64".into(),
        });
        m.failures[0].would_work = vec![format!("{SITE}/nvidia/nvjitlink/lib/libnvJitLink.so.12")];
        with(&mut s, vec![m]);
        let f = only(run(&s), codes::GD060, Severity::Error);
        assert!(
            f.title
                .contains("needs __nvJitLinkAddData_12_1@libnvJitLink.so.12"),
            "{}",
            f.title
        );
        assert!(
            f.fix[0]
                .text
                .starts_with("Remove /opt/cuda-12.0/lib64 from LD_LIBRARY_PATH"),
            "{:?}",
            f.fix
        );
        assert!(f.fix[0]
            .text
            .contains("nvidia/nvjitlink/lib/libnvJitLink.so.12"));
        // The variable's value is known: the fix is the command that drops the entry.
        set_env(
            &mut s,
            "LD_LIBRARY_PATH",
            "/opt/cuda-12.0/lib64:/opt/tools/lib",
        );
        let f = only(run(&s), codes::GD060, Severity::Error);
        assert_eq!(first_cmd(&f), "export LD_LIBRARY_PATH=/opt/tools/lib");
    }

    #[test]
    fn providers_follow_the_wheel_names() {
        assert_eq!(
            provider("libcudnn.so.9", Some(12)),
            Some(("nvidia-cudnn-cu12".into(), ">=9,<10".into()))
        );
        assert_eq!(
            provider("libcudnn_ops.so.9", Some(13)),
            Some(("nvidia-cudnn-cu13".into(), ">=9,<10".into()))
        );
        assert_eq!(
            provider("libnvJitLink.so.12", None),
            Some(("nvidia-nvjitlink-cu12".into(), ">=12,<13".into()))
        );
        assert_eq!(
            provider("libcublas.so.13", None),
            Some(("nvidia-cublas".into(), ">=13,<14".into()))
        );
        assert_eq!(
            provider("libcusparse.so.12", Some(13)),
            Some(("nvidia-cusparse".into(), ">=12,<13".into()))
        );
        assert_eq!(provider("libfoo.so.1", None), None);
    }

    #[test]
    fn pins_that_exclude_a_major_do_not_overlap() {
        assert!(!spec_overlaps("==8.9.2.26", ">=9,<10"));
        assert!(spec_overlaps("==9.1.0.70", ">=9,<10"));
        assert!(spec_overlaps(">=9.1", ">=9,<10"));
    }
}
