//! What the dynamic loader will bind for every CUDA-using native module of each Python
//! environment, predicted from the files (src/loader.rs emulates glibc). The modules are
//! opened into one emulated process in the order a program imports them: torch first
//! (`libtorch_global_deps.so`, then `torch/_C`, as `import torch` does), then the other
//! packages' extension modules and shared libraries; so a framework imported after torch
//! gets torch's copies of every soname they share, as it does in a real process.
//! `gpudoctor libs FILE…` opens given files instead, in the order given.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::facts::linkage::{is_cuda_soname, Failed, LibraryVersion, Linkage, Module, FILES_GIVEN};
use crate::facts::python_sites::{parse_dist_info, Site};
use crate::fsys::{EntryKind, HostFs};
use crate::loader::{self, Failure, How, Process, SearchConfig};
use crate::probes::python_sites::normalize;

/// Directory entries walked per environment, and ELF files opened: a torch environment
/// has about 30,000 entries (torch/include alone 20,000 of them, skipped) and 150 modules.
const MAX_ENTRIES: usize = 60_000;
const MAX_MODULES: usize = 2_000;
const MAX_DEPTH: usize = 5;

/// Directories that hold no modules a program loads: headers, tests, data, caches.
const SKIP_DIRS: &[&str] = &[
    "include",
    "__pycache__",
    "tests",
    "test",
    "testing",
    "share",
    "headers",
    "data",
    "datasets",
    "docs",
    "examples",
    "benchmarks",
];

/// A module that the package loads inside a try block: its failure disables a feature,
/// not the import. (package directory, file-name prefix, what stops working, source)
pub const OPTIONAL_MODULES: &[(&str, &str, &str)] = &[
    (
        "torchvision",
        "image",
        "torchvision.io's image decoding (decode_jpeg/decode_png, on the GPU too); torchvision/extension.py `_load_library` catches the OSError",
    ),
    (
        "torchvision",
        "video_reader",
        "torchvision.io's video reader; torchvision/extension.py `_load_library` catches the OSError",
    ),
];

/// The interpreter of an environment: PREFIX/bin/pythonX.Y (or python3, python) for
/// PREFIX/lib/pythonX.Y/site-packages.
fn interpreter(fs: &HostFs, site: &Site) -> Option<PathBuf> {
    let prefix = Path::new(&site.path).parent()?.parent()?.parent()?;
    let mut names = Vec::new();
    if let Some(v) = &site.python {
        names.push(format!("python{v}"));
    }
    names.extend(["python3".to_string(), "python".to_string()]);
    names
        .into_iter()
        .map(|n| prefix.join("bin").join(n))
        .find(|p| fs.is_executable_file(p))
}

/// `full`: every object mapped (`gpudoctor libs`); otherwise only what leads to a CUDA
/// library (`keep_cuda_paths`), which is what the rules read.
pub fn probe(fs: &HostFs, search: &SearchConfig, sites: &[Site], full: bool) -> Vec<Linkage> {
    // Each environment is its own process; they are emulated side by side.
    let linkages: Vec<Linkage> = std::thread::scope(|scope| {
        let handles: Vec<_> = sites
            .iter()
            .map(|site| {
                scope.spawn(move || {
                    let mut l = probe_site(fs, search, site);
                    if !full {
                        l.keep_cuda_paths();
                    }
                    l
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(sites)
            .map(|(h, site)| {
                h.join().unwrap_or_else(|_| Linkage {
                    site: site.path.clone(),
                    python: None,
                    ld_library_path: Vec::new(),
                    modules: Vec::new(),
                    objects: Vec::new(),
                    limits: vec![format!("{}: the emulation failed (a bug)", site.path)],
                    versions: Vec::new(),
                })
            })
            .collect()
    });
    linkages
        .into_iter()
        .filter(|l| !l.modules.is_empty() || !l.limits.is_empty())
        .collect()
}

fn probe_site(fs: &HostFs, search: &SearchConfig, site: &Site) -> Linkage {
    let python = interpreter(fs, site);
    let cfg = search.with_main(fs, python.as_deref());
    let mut limits = Vec::new();
    let roots = roots(fs, site, &mut limits);
    let mut linkage = open_all(fs, &cfg, &site.path, roots, |p| wheel_copies(fs, site, p));
    linkage.python = cfg.main.as_ref().map(|(p, _)| p.clone());
    linkage.limits.extend(limits);
    linkage.versions = versions(fs, &linkage, std::slice::from_ref(site));
    linkage
}

/// `gpudoctor libs FILE…`: the files opened in order into one process.
pub fn probe_files(fs: &HostFs, search: &SearchConfig, files: &[PathBuf]) -> Linkage {
    let cfg = search;
    let roots = files
        .iter()
        .map(|f| Root {
            package: f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            dist: None,
            path: f.clone(),
            optional: None,
        })
        .collect();
    // Every file asked about is shown, CUDA or not.
    let mut l = open_all(fs, cfg, FILES_GIVEN, roots, |_| Vec::new());
    l.versions = versions(fs, &l, &[]);
    l
}

/// The version of each CUDA library mapped: from the file name past the soname
/// (libcudart.so.12.4.127), the header beside it (cuDNN, NCCL), or the nvidia-* wheel it
/// came from.
fn versions(fs: &HostFs, l: &Linkage, sites: &[Site]) -> Vec<LibraryVersion> {
    use crate::facts::libraries::{family_of, version_from_file_name};
    use crate::probes::libraries::{header_version_of, wheel_version};
    let mut out = Vec::new();
    let mut headers = crate::probes::libraries::HeaderTexts::new();
    for (i, o) in l.objects.iter().enumerate() {
        let Some(soname) = o.soname.as_deref().filter(|s| is_cuda_soname(s)) else {
            continue;
        };
        let from_name =
            version_from_file_name(file_name_of(&o.target)).map(|v| (v, o.target.clone()));
        let found = from_name
            .or_else(|| header_version_of(fs, &o.path, soname, &mut headers))
            .or_else(|| {
                let family = family_of(soname)?;
                let dir = Path::new(&o.path).parent()?;
                let (site, (name, version)) = wheel_version(sites, dir, family)?;
                Some((version, format!("{name} in {site}")))
            });
        if let Some((version, source)) = found {
            out.push(LibraryVersion {
                object: i,
                version,
                source,
            });
        }
    }
    out
}

fn file_name_of(path: &str) -> &str {
    loader::file_name(path)
}

struct Root {
    package: String,
    dist: Option<String>,
    path: PathBuf,
    optional: Option<String>,
}

fn open_all(
    fs: &HostFs,
    cfg: &SearchConfig,
    site: &str,
    roots: Vec<Root>,
    elsewhere: impl Fn(&str) -> Vec<String>,
) -> Linkage {
    let files_given = site == FILES_GIVEN;
    let mut process = Process::new(fs, cfg);
    // Libraries built and shipped together (torch's own, NVIDIA's wheels, the
    // distribution's) resolve each other's symbols by construction; their versioned
    // imports are still checked. Judging them all would read megabytes of string tables.
    let mut built_together: Vec<PathBuf> = cfg.default_dirs.clone();
    if !files_given {
        built_together.push(Path::new(site).join("torch/lib"));
        built_together.push(Path::new(site).join("nvidia"));
    }
    process.unjudged_dirs = built_together
        .iter()
        .map(|d| fs.canonical(d).unwrap_or_else(|_| d.clone()))
        .map(|d| format!("{}/", d.display()))
        .collect();
    let mut modules = Vec::new();
    for root in roots {
        // torch's _load_global_deps() opens it with ctypes.RTLD_GLOBAL (torch/__init__.py).
        let global = !files_given
            && root.package == "torch"
            && root
                .path
                .file_name()
                .is_some_and(|n| n == "libtorch_global_deps.so");
        let mut opened = if global {
            process.dlopen_global(&root.path)
        } else {
            process.dlopen_unrelocated(&root.path)
        };
        let reaches_cuda = {
            let mut seen = HashSet::new();
            let mut stack: Vec<usize> = opened.object.into_iter().collect();
            let mut cuda = opened.failures.iter().any(|f| match f {
                Failure::Missing { needed, .. } => is_cuda_soname(needed),
                Failure::VersionNotFound { library, .. }
                | Failure::UndefinedSymbol { library, .. } => {
                    is_cuda_soname(loader::file_name(library))
                }
                _ => false,
            });
            while let Some(i) = stack.pop() {
                if cuda || !seen.insert(i) {
                    continue;
                }
                if let Some(o) = process.object(i) {
                    cuda |= o.deps.iter().any(|b| is_cuda_soname(&b.needed));
                    stack.extend(o.deps.iter().filter_map(|b| b.object));
                }
            }
            cuda
        };
        // A module already in the process through another's closure adds nothing.
        let already = opened.mapped.is_empty() && opened.failures.is_empty();
        if !files_given && (!reaches_cuda || already) {
            continue;
        }
        // Symbols are resolved only for the modules reported: the rest stay mapped
        // unchecked, as an import that nothing here judges. (The global deps were resolved
        // by their own dlopen.)
        if !global {
            process.resolve_symbols(&mut opened);
        }
        let failures = opened
            .failures
            .iter()
            .map(|f| explain(&mut process, f, &elsewhere))
            .collect();
        modules.push(Module {
            package: root.package,
            dist: root.dist,
            path: opened.path.clone(),
            object: opened.object,
            mapped: opened.mapped.clone(),
            failures,
            optional: root.optional,
        });
    }
    let mut objects = process.objects;
    for o in &mut objects {
        for b in &mut o.deps {
            if b.object.is_some() {
                b.searched.clear();
            }
        }
    }
    Linkage {
        site: site.to_string(),
        python: None,
        ld_library_path: cfg.ld_library_path.iter().map(|(e, _)| e.clone()).collect(),
        modules,
        objects,
        limits: Vec::new(),
        versions: Vec::new(),
    }
}

/// Adds what the files say about a failure: how the picked library was found, and copies
/// on disk that would have worked.
fn explain(process: &mut Process, f: &Failure, elsewhere: &impl Fn(&str) -> Vec<String>) -> Failed {
    let mut out = Failed {
        failure: f.clone(),
        picked_how: None,
        would_work: Vec::new(),
    };
    match f {
        Failure::Missing { needed, .. } => out.would_work = elsewhere(needed),
        Failure::VersionNotFound {
            version, library, ..
        } => {
            out.picked_how = how_of(process, library);
            let soname = soname_of(process, library);
            out.would_work = elsewhere(&soname)
                .into_iter()
                .filter(|p| p != library && process.defines_version(p, version))
                .collect();
        }
        Failure::UndefinedSymbol {
            symbol,
            version,
            library,
            ..
        } => {
            out.picked_how = how_of(process, library);
            // An unversioned symbol belongs to no soname's wheel copy: nothing to point at.
            if !version.is_empty() {
                let soname = soname_of(process, library);
                out.would_work = elsewhere(&soname)
                    .into_iter()
                    .filter(|p| p != library && process.defines(p, symbol, version))
                    .collect();
            }
        }
        _ => {}
    }
    out
}

fn how_of(process: &Process, path: &str) -> Option<How> {
    process
        .objects
        .iter()
        .rev()
        .find(|o| o.path == path)
        .map(|o| o.how.clone())
}

fn soname_of(process: &Process, path: &str) -> String {
    process
        .objects
        .iter()
        .rev()
        .find(|o| o.path == path)
        .and_then(|o| o.soname.clone())
        .unwrap_or_else(|| loader::file_name(path).to_string())
}

/// Files named `soname` in this environment's `nvidia/*/lib` wheel directories and in the
/// top-level `*.libs` directories, as places a fix can point the loader at.
fn wheel_copies(fs: &HostFs, site: &Site, soname: &str) -> Vec<String> {
    let base = Path::new(&site.path);
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Ok(names) = fs.read_dir(&base.join("nvidia")) {
        for n in names {
            dirs.push(base.join("nvidia").join(n).join("lib"));
        }
    }
    for e in &site.entries {
        if e.ends_with(".libs") {
            dirs.push(base.join(e));
        }
    }
    dirs.push(base.join("torch/lib"));
    dirs.sort();
    dirs.into_iter()
        .map(|d| d.join(soname))
        .filter(|p| fs.exists(p))
        .map(|p| p.display().to_string())
        .collect()
}

/// The modules of an environment in import order: torch's global deps and `_C` first,
/// torch's other libraries, then every other package's ELF modules (sorted), then ELF
/// modules at the top of site-packages.
fn roots(fs: &HostFs, site: &Site, limits: &mut Vec<String>) -> Vec<Root> {
    let base = Path::new(&site.path);
    // Distributions by normalised name (the first of duplicates, in the listing's order):
    // one lookup per package, not a scan.
    let mut dists: std::collections::BTreeMap<String, String> = Default::default();
    for (name, version) in site.entries.iter().filter_map(|e| parse_dist_info(e)) {
        dists.entry(name).or_insert(version);
    }
    let mut walked = 0usize;
    // The installers' RECORD files list every file a distribution put here: reading them
    // replaces a walk of tens of thousands of entries. Packages no RECORD mentions
    // (conda, copied trees) are walked.
    let (recorded, covered) = recorded_modules(fs, site);
    let dist_of = |package: &str| -> Option<String> {
        if let Some(label) = covered.get(package) {
            return Some(label.clone());
        }
        let p = normalize(package);
        // The first name with this prefix, in name order.
        let prefixed = |prefix: &str| {
            dists
                .range(prefix.to_string()..)
                .next()
                .filter(|(n, _)| n.starts_with(prefix))
        };
        dists
            .get_key_value(&p)
            .or_else(|| prefixed(&format!("{p}-")))
            .or_else(|| match package {
                "jax_plugins" => prefixed("jax-cuda"),
                _ => None,
            })
            .map(|(n, v)| format!("{n} {v}"))
    };
    // The recorded modules by their top-level entry, grouped once.
    let mut recorded_by_package: HashMap<&str, Vec<&String>> = HashMap::new();
    for r in &recorded {
        let top = r.split('/').next().unwrap_or(r);
        recorded_by_package.entry(top).or_default().push(r);
    }
    let mut out: Vec<Root> = Vec::new();
    let mut packages: Vec<&String> = site
        .entries
        .iter()
        .filter(|e| {
            !e.ends_with(".dist-info")
                && !e.ends_with(".egg-info")
                && !e.ends_with(".libs")
                && !e.starts_with('_')
                && !matches!(e.as_str(), "nvidia" | "__pycache__")
        })
        .collect();
    packages.sort_by_key(|p| (p.as_str() != "torch", p.as_str()));
    let mut top_files = Vec::new();
    for package in packages {
        let path = base.join(package);
        if is_module_name(package) {
            top_files.push((package.clone(), path));
            continue;
        }
        let mut files = Vec::new();
        if covered.contains_key(package.as_str()) {
            files.extend(
                recorded_by_package
                    .get(package.as_str())
                    .into_iter()
                    .flatten()
                    .map(|r| base.join(r)),
            );
        } else {
            walk(fs, &path, 0, &mut files, &mut walked);
        }
        files.sort();
        files.dedup();
        if package == "torch" {
            // import torch: _load_global_deps() opens libtorch_global_deps.so, then _C.
            let rank = |p: &PathBuf| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if name == "libtorch_global_deps.so" {
                    0
                } else if name.starts_with("_C.") && p.parent() == Some(path.as_path()) {
                    1
                } else {
                    2
                }
            };
            files.sort_by_key(|p| (rank(p), p.clone()));
        }
        let dist = dist_of(package);
        for f in files {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let optional = OPTIONAL_MODULES
                .iter()
                .find(|(pkg, prefix, _)| pkg == package && name.starts_with(prefix))
                .map(|(_, _, why)| why.to_string());
            out.push(Root {
                package: package.clone(),
                dist: dist.clone(),
                path: f,
                optional,
            });
        }
    }
    for (name, path) in top_files {
        let stem = name.split('.').next().unwrap_or(&name).to_string();
        let dist = covered
            .get(&name)
            .cloned()
            .or_else(|| dist_of(stem.trim_end_matches("_cuda").trim_end_matches("_2")));
        out.push(Root {
            package: stem,
            dist,
            path,
            optional: None,
        });
    }
    if walked >= MAX_ENTRIES {
        limits.push(format!(
            "{}: stopped after {MAX_ENTRIES} directory entries",
            site.path
        ));
    }
    if out.len() > MAX_MODULES {
        // Name what is left out, so the warning says which packages were not judged.
        let mut left: Vec<(&str, usize)> = Vec::new();
        for r in &out[MAX_MODULES..] {
            match left.iter_mut().find(|(p, _)| *p == r.package) {
                Some((_, n)) => *n += 1,
                None => left.push((&r.package, 1)),
            }
        }
        let named: Vec<String> = left
            .iter()
            .take(8)
            .map(|(p, n)| format!("{p} ({n})"))
            .collect();
        let more = left.len().saturating_sub(named.len());
        limits.push(format!(
            "{}: {} native modules; the first {MAX_MODULES} were opened, not those of {}{}",
            site.path,
            out.len(),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more package(s)")
            } else {
                String::new()
            }
        ));
        out.truncate(MAX_MODULES);
    }
    out
}

/// Native modules listed in the RECORD files of the site's distributions (relative
/// paths inside the site, outside `nvidia/` and vendored `*.libs/`), and the top-level
/// entries those files cover, each with the distribution ("name version") that installed it.
fn recorded_modules(fs: &HostFs, site: &Site) -> (Vec<String>, HashMap<String, String>) {
    let base = Path::new(&site.path);
    let mut modules = Vec::new();
    let mut covered = HashMap::new();
    for e in site.entries.iter().filter(|e| e.ends_with(".dist-info")) {
        let Some((name, version)) = parse_dist_info(e) else {
            continue;
        };
        let label = format!("{name} {version}");
        let Ok(record) = fs.read_bytes(&base.join(e).join("RECORD"), RECORD_LIMIT) else {
            continue;
        };
        // Lines are grouped by top-level entry: a set insert per change, not per line.
        let mut last_top: &[u8] = b"";
        for line in record.split(|&b| b == b'\n') {
            let path = match line.strip_prefix(b"\"") {
                Some(rest) => rest.split(|&b| b == b'"').next().unwrap_or(b""),
                None => line.split(|&b| b == b',').next().unwrap_or(b""),
            };
            if path.is_empty() || path.starts_with(b"/") || path.starts_with(b"..") {
                continue;
            }
            let top = path.split(|&b| b == b'/').next().unwrap_or(path);
            if top != last_top {
                covered
                    .entry(String::from_utf8_lossy(top).into_owned())
                    .or_insert_with(|| label.clone());
                last_top = top;
            }
            let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
            if !name.windows(3).any(|w| w == b".so") || top.len() == path.len() {
                continue;
            }
            let Ok(path) = std::str::from_utf8(path) else {
                continue;
            };
            let name = path.rsplit('/').next().unwrap_or(path);
            let top = path.split('/').next().unwrap_or(path);
            if is_module_name(name)
                && top != "nvidia"
                && !top.ends_with(".libs")
                && !path.split('/').any(|c| SKIP_DIRS.contains(&c))
            {
                modules.push(path.to_string());
            }
        }
    }
    (modules, covered)
}

/// A RECORD larger than this is not read (torch's is 1.5 MB).
const RECORD_LIMIT: u64 = 32 * 1024 * 1024;

/// `x.so`, `x.so.1`, `x.cpython-311-x86_64-linux-gnu.so`, `x.abi3.so`.
fn is_module_name(name: &str) -> bool {
    name.ends_with(".so") || name.contains(".so.")
}

fn walk(fs: &HostFs, dir: &Path, depth: usize, out: &mut Vec<PathBuf>, walked: &mut usize) {
    if depth > MAX_DEPTH || *walked >= MAX_ENTRIES {
        return;
    }
    let Ok(entries) = fs.read_dir_kinds(dir) else {
        return;
    };
    for (n, kind) in entries {
        *walked += 1;
        if *walked >= MAX_ENTRIES {
            return;
        }
        let name = n.to_string_lossy();
        match kind {
            // Links are not followed: a link to a directory could lead out or loop.
            EntryKind::Dir if !SKIP_DIRS.contains(&name.as_ref()) => {
                walk(fs, &dir.join(&*name), depth + 1, out, walked)
            }
            EntryKind::File if is_module_name(&name) => out.push(dir.join(&*name)),
            _ => {}
        }
    }
}
