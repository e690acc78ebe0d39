//! glibc's dynamic loader, emulated on files: which file each DT_NEEDED entry binds to, in
//! which order the loader looked, and whether the result would load (missing sonames,
//! missing version nodes, missing versioned symbols). Nothing is loaded or executed.
//!
//! The search order follows glibc's elf/dl-load.c (`_dl_map_object`):
//! 1. a name with a slash is opened as a path;
//! 2. a loaded object whose soname or load name matches is reused (process-wide);
//! 3. DT_RPATH of the requesting object and of each object up its chain of loaders, then
//!    the executable's, unless the requesting object has DT_RUNPATH;
//! 4. LD_LIBRARY_PATH;
//! 5. DT_RUNPATH of the requesting object only (not inherited);
//! 6. /etc/ld.so.cache, then the default directories, unless the object is DF_1_NODEFLIB.
//!
//! Each directory is tried with its glibc-hwcaps subdirectories first (glibc ≥ 2.33), and a
//! file of another ELF class or machine is skipped, as `open_verify` does. After mapping,
//! versions are checked as `_dl_check_map_versions` does (a needed version node missing
//! from a library that has version definitions fails the load), and, for NVIDIA-style
//! versions named after a soname (`libnvJitLink.so.12`), every non-weak imported symbol
//! must be defined at that version: the `undefined symbol: X, version Y` failure of an
//! RTLD_NOW load (Python and ctypes open libraries with RTLD_NOW). GNU-style version nodes
//! (GLIBC_2.34, GLIBCXX_3.4.30) only ever gain symbols, so the node check is exact there.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::dynsym::SymbolTable;
use crate::elf::{self, DynamicInfo};
use crate::envvars::{self, Env};
use crate::fsys::HostFs;
use crate::ldcache::{self, LdCache};

pub const LD_SO_CACHE: &str = "/etc/ld.so.cache";

/// glibc's trusted directories, searched after the cache (multiarch first, as Debian
/// and Ubuntu build it; lib64 for Fedora/RHEL/SUSE).
#[cfg(target_arch = "aarch64")]
pub const DEFAULT_DIRS: &[&str] = &[
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];
#[cfg(not(target_arch = "aarch64"))]
pub const DEFAULT_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// Objects mapped into one emulated process at most: real processes with torch map about
/// 150; this bounds hostile inputs (thousands of libraries, long DT_NEEDED chains).
const MAX_OBJECTS: usize = 4000;
/// DT_NEEDED entries looked at per object.
const MAX_NEEDED: usize = 512;
const CACHE_READ_LIMIT: u64 = 16 * 1024 * 1024;
/// Undefined symbols listed per object (glibc names the first; the rest show the extent).
const MAX_UNDEFINED: usize = 20;
/// Symbol tables open at once in one emulated process (each holds a file descriptor).
const MAX_TABLES: usize = 256;
/// Files kept open between reading an object's dynamic section and its symbol table: one
/// open per file, within a file-descriptor budget that leaves room for the other probes.
const MAX_KEPT_FILES: usize = 128;

/// How the loader found a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum How {
    /// Opened by the path given (dlopen of a path, or a DT_NEEDED with a slash).
    Path,
    /// A loaded object already answers to this name: every later lookup gets it.
    AlreadyLoaded,
    /// DT_RPATH of `owner` (the requesting object or one up its chain).
    Rpath {
        owner: String,
        entry: String,
    },
    /// LD_LIBRARY_PATH entry `index` (1-based) as written.
    LdLibraryPath {
        index: usize,
        entry: String,
    },
    /// DT_RUNPATH of the requesting object.
    Runpath {
        entry: String,
    },
    LdSoCache,
    DefaultDir,
}

impl How {
    pub fn describe(&self) -> String {
        match self {
            How::Path => "by path".into(),
            How::AlreadyLoaded => "already loaded".into(),
            How::Rpath { owner, entry } => format!("RPATH {entry} of {}", file_name(owner)),
            How::LdLibraryPath { index, entry } => {
                format!("LD_LIBRARY_PATH entry {index} ({entry})")
            }
            How::Runpath { entry } => format!("RUNPATH {entry}"),
            How::LdSoCache => "ld.so.cache".into(),
            How::DefaultDir => "default directory".into(),
        }
    }
}

pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// One DT_NEEDED entry of an object and what it bound to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Binding {
    pub needed: String,
    /// Index of the object it bound to; None when nothing was found.
    pub object: Option<usize>,
    pub how: Option<How>,
    /// Files passed over on the way (another ELF class, not ELF, unreadable), with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// The directories searched, in order, when nothing was found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub searched: Vec<String>,
}

impl Binding {
    /// A name not resolved yet.
    pub fn unresolved(needed: &str) -> Binding {
        Binding {
            needed: needed.to_string(),
            object: None,
            how: None,
            skipped: Vec::new(),
            searched: Vec::new(),
        }
    }
}

/// A mapped object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Object {
    /// The path the loader opened (its directory is `$ORIGIN`).
    pub path: String,
    /// The file that path leads to.
    pub target: String,
    pub soname: Option<String>,
    /// Index of the object whose DT_NEEDED brought it in (None for a root).
    pub loader: Option<usize>,
    pub how: How,
    pub deps: Vec<Binding>,
    /// Still mapped: objects of a failed dlopen are unmapped again, as dlopen does.
    pub live: bool,
    #[serde(skip)]
    names: Vec<String>,
    #[serde(skip)]
    info: DynamicInfo,
}

impl Object {
    /// NCCL's library, by soname or else by file name.
    pub fn is_libnccl(&self) -> bool {
        self.soname
            .as_deref()
            .unwrap_or_else(|| file_name(&self.path))
            .starts_with("libnccl.so")
    }

    /// A mapped object for rule tests.
    #[cfg(test)]
    pub fn for_test(path: &str, soname: Option<&str>, how: How, deps: Vec<Binding>) -> Object {
        Object {
            path: path.into(),
            target: path.into(),
            soname: soname.map(str::to_string),
            loader: None,
            how,
            deps,
            live: true,
            names: soname.map(str::to_string).into_iter().collect(),
            info: DynamicInfo::default(),
        }
    }
}

/// Why a load fails, in the loader's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Failure {
    /// "NEEDED: cannot open shared object file: No such file or directory"
    Missing { needed: String, by: String },
    /// "version `VERSION' not found (required by BY)"
    VersionNotFound {
        version: String,
        library: String,
        by: String,
    },
    /// "BY: undefined symbol: SYMBOL, version VERSION" (", version" only for a versioned
    /// reference)
    UndefinedSymbol {
        symbol: String,
        /// Empty for an unversioned reference.
        version: String,
        /// The library that should define it (the file its version is required of, or the
        /// torch library of its C++ namespace); empty when the symbol does not say.
        library: String,
        /// The same function under the other C++ standard-library ABI, which the lookup scope
        /// does define: the module was compiled with the other `_GLIBCXX_USE_CXX11_ABI`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        other_abi: Option<String>,
        by: String,
    },
    /// The file itself cannot be loaded (not ELF, another machine, unreadable).
    Unloadable { path: String, reason: String },
    /// The emulation stopped at a bound (too many objects).
    Limit { detail: String },
}

impl Failure {
    /// The message glibc's dlerror() gives for it.
    pub fn loader_message(&self) -> String {
        match self {
            Failure::Missing { needed, .. } => {
                format!("{needed}: cannot open shared object file: No such file or directory")
            }
            Failure::VersionNotFound {
                version,
                library,
                by,
            } => {
                format!("{library}: version `{version}' not found (required by {by})")
            }
            Failure::UndefinedSymbol {
                symbol,
                version,
                by,
                ..
            } if version.is_empty() => format!("{by}: undefined symbol: {symbol}"),
            Failure::UndefinedSymbol {
                symbol,
                version,
                by,
                ..
            } => format!("{by}: undefined symbol: {symbol}, version {version}"),
            Failure::Unloadable { path, reason } => format!("{path}: {reason}"),
            Failure::Limit { detail } => detail.clone(),
        }
    }
}

/// One dlopen: the root, what it mapped, and every failure found (glibc reports the first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Opened {
    pub path: String,
    pub object: Option<usize>,
    /// Objects this dlopen mapped (unmapped again when it failed).
    pub mapped: Vec<usize>,
    pub failures: Vec<Failure>,
}

/// Where the loader looks: read once per run and shared by every emulated process.
#[derive(Clone)]
pub struct SearchConfig {
    /// LD_LIBRARY_PATH entries as written, with the directory each means (None: not
    /// searched, e.g. a relative entry under --root).
    pub ld_library_path: Vec<(String, Option<PathBuf>)>,
    pub cache: Option<LdCache>,
    pub default_dirs: Vec<PathBuf>,
    /// glibc-hwcaps subdirectories this CPU supports, best first.
    pub hwcaps: Vec<&'static str>,
    /// `$LIB` and `$PLATFORM`.
    pub lib: String,
    pub platform: String,
    /// The executable (python), whose DT_RPATH ends every chain.
    pub main: Option<(String, DynamicInfo)>,
}

impl SearchConfig {
    pub fn new(fs: &HostFs, env: &Env) -> SearchConfig {
        let ld_library_path = env
            .get_str(envvars::LD_LIBRARY_PATH)
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.split(':')
                    .map(|d| (d.to_string(), search_dir(fs, d)))
                    .collect()
            })
            .unwrap_or_default();
        let cache = fs
            .read_bytes(Path::new(LD_SO_CACHE), CACHE_READ_LIMIT)
            .ok()
            .and_then(|b| ldcache::parse(&b).ok());
        let default_dirs = DEFAULT_DIRS
            .iter()
            .map(PathBuf::from)
            .filter(|d| fs.metadata(d).is_ok_and(|m| m.is_dir()))
            .collect();
        let multiarch = if cfg!(target_arch = "aarch64") {
            "lib/aarch64-linux-gnu"
        } else {
            "lib/x86_64-linux-gnu"
        };
        // $LIB is glibc's build-time slibdir: the multiarch directory on Debian/Ubuntu,
        // lib64 on Fedora/RHEL/SUSE.
        let lib = if fs.exists(&Path::new("/").join(multiarch)) {
            multiarch.to_string()
        } else {
            "lib64".to_string()
        };
        SearchConfig {
            ld_library_path,
            cache,
            default_dirs,
            hwcaps: hwcaps(fs),
            lib,
            platform: std::env::consts::ARCH.to_string(),
            main: None,
        }
    }

    /// The same search for a process whose executable is `main` (its DT_RPATH counts).
    pub fn with_main(&self, fs: &HostFs, main: Option<&Path>) -> SearchConfig {
        let main = main.and_then(|p| {
            let real = fs.canonical(p).ok()?;
            let info = elf::read_dynamic(fs, &real).ok()?;
            Some((real.display().to_string(), info))
        });
        SearchConfig {
            main,
            ..self.clone()
        }
    }
}

/// A search-path entry as a directory: relative ones are relative to the working
/// directory, which means nothing for a tree under --root.
fn search_dir(fs: &HostFs, entry: &str) -> Option<PathBuf> {
    let d = if entry.is_empty() { "." } else { entry };
    if d.starts_with('/') {
        return Some(PathBuf::from(d));
    }
    if fs.root().is_some() {
        return None;
    }
    std::env::current_dir().ok().map(|cwd| cwd.join(d))
}

/// The x86-64 micro-architecture levels /proc/cpuinfo's flags support, best first
/// (glibc's sysdeps/x86/get-isa-level.h; the flags are the kernel's names).
fn hwcaps(fs: &HostFs) -> Vec<&'static str> {
    if !cfg!(target_arch = "x86_64") {
        return Vec::new();
    }
    let Ok(text) = fs.read_text(Path::new("/proc/cpuinfo")) else {
        return Vec::new();
    };
    let Some(flags) = text
        .text
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, f)| f.split_whitespace().collect::<HashSet<_>>())
    else {
        return Vec::new();
    };
    let has = |names: &[&str]| names.iter().all(|n| flags.contains(n));
    let v2 = has(&["cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"]);
    let v3 = v2
        && has(&[
            "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave",
        ]);
    let v4 = v3 && has(&["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"]);
    [("x86-64-v4", v4), ("x86-64-v3", v3), ("x86-64-v2", v2)]
        .into_iter()
        .filter(|(_, ok)| *ok)
        .map(|(n, _)| n)
        .collect()
}

/// Where a program without DT_RPATH or DT_RUNPATH of its own (gpudoctor) finds `name`:
/// LD_LIBRARY_PATH, the cache, the default directories; None when no step has a loadable
/// copy, in which case its dlopen fails.
pub fn find_for_program(fs: &HostFs, cfg: &SearchConfig, name: &str) -> Option<String> {
    let mut process = Process::new(fs, cfg);
    let mut binding = Binding::unresolved(name);
    // A stand-in requester with no search paths of its own.
    process.objects.push(Object {
        path: "gpudoctor".into(),
        target: "gpudoctor".into(),
        soname: None,
        loader: None,
        how: How::Path,
        deps: Vec::new(),
        live: false,
        names: Vec::new(),
        info: DynamicInfo::default(),
    });
    process
        .search(0, name, &mut binding)
        .map(|(found, _)| found.path)
}

/// One emulated process: objects mapped so far, in load order.
pub struct Process<'a> {
    fs: &'a HostFs,
    cfg: &'a SearchConfig,
    pub objects: Vec<Object>,
    elf: HashMap<PathBuf, Result<DynamicInfo, String>>,
    listings: HashMap<PathBuf, Option<HashSet<String>>>,
    /// Files `dynamic` read, left open for `table` (by target; at most MAX_KEPT_FILES).
    kept_files: HashMap<String, std::fs::File>,
    /// Symbol tables by target, for resolving undefined symbols.
    tables: HashMap<String, Result<SymbolTable, String>>,
    /// Objects opened RTLD_GLOBAL: they join every later lookup scope.
    global: Vec<usize>,
    main_scope: Option<Vec<String>>,
    /// Resolve undefined symbols after a dlopen (off for the executable's own closure).
    check_symbols: bool,
    /// Directories (with a trailing slash) whose objects' undefined symbols are not judged.
    pub unjudged_dirs: Vec<String>,
}

/// A file the search accepted, before it is mapped.
struct Found {
    path: String,
    target: PathBuf,
    how: How,
}

impl<'a> Process<'a> {
    pub fn new(fs: &'a HostFs, cfg: &'a SearchConfig) -> Process<'a> {
        // The program's own dynamic section was read when it was named.
        let elf = cfg
            .main
            .iter()
            .map(|(path, info)| (PathBuf::from(path), Ok(info.clone())))
            .collect();
        Process {
            fs,
            cfg,
            objects: Vec::new(),
            elf,
            listings: HashMap::new(),
            kept_files: HashMap::new(),
            tables: HashMap::new(),
            global: Vec::new(),
            main_scope: None,
            check_symbols: true,
            unjudged_dirs: Vec::new(),
        }
    }

    pub fn object(&self, i: usize) -> Option<&Object> {
        self.objects.get(i)
    }

    /// The live object a name refers to, as `_dl_name_match_p` matches: its path, a name
    /// it was loaded by, or its soname.
    pub fn loaded(&self, name: &str) -> Option<usize> {
        self.objects
            .iter()
            .position(|o| o.live && (o.path == name || o.names.iter().any(|n| n == name)))
    }

    fn dynamic(&mut self, target: &Path) -> Result<DynamicInfo, String> {
        if let Some(r) = self.elf.get(target) {
            return r.clone();
        }
        let (r, file) = elf::read_dynamic_keeping_file(self.fs, target);
        if let Some(file) = file.filter(|_| self.kept_files.len() < MAX_KEPT_FILES) {
            self.kept_files.insert(target.display().to_string(), file);
        }
        self.elf.insert(target.to_path_buf(), r.clone());
        r
    }

    fn listed(&mut self, dir: &Path, name: &str) -> bool {
        if !self.listings.contains_key(dir) {
            let names = self.fs.read_dir(dir).ok().map(|n| {
                n.iter()
                    .map(|s| s.to_string_lossy().into_owned())
                    .collect::<HashSet<_>>()
            });
            self.listings.insert(dir.to_path_buf(), names);
        }
        self.listings
            .get(dir)
            .and_then(Option::as_ref)
            .is_some_and(|n| n.contains(name))
    }

    /// dlopen(path) with RTLD_NOW: maps the file and its closure; on failure unmaps what
    /// it mapped, as dlopen does, but keeps the record.
    pub fn dlopen(&mut self, path: &Path) -> Opened {
        let text = path.display().to_string();
        let mut opened = Opened {
            path: text.clone(),
            object: None,
            mapped: Vec::new(),
            failures: Vec::new(),
        };
        if let Some(i) = self.loaded(&text) {
            opened.object = Some(i);
            return opened;
        }
        let target = match self.fs.canonical(path) {
            Ok(t) => t,
            Err(e) => {
                opened.failures.push(Failure::Unloadable {
                    path: text,
                    reason: match e.kind {
                        crate::fsys::FsErrorKind::NotFound => {
                            "cannot open shared object file: No such file or directory".into()
                        }
                        _ => e.message,
                    },
                });
                return opened;
            }
        };
        if let Some(i) = self.same_file(&target) {
            opened.object = Some(i);
            return opened;
        }
        let info = match self.dynamic(&target) {
            Ok(info) if info.loadable_here() => info,
            Ok(info) => {
                opened.failures.push(Failure::Unloadable {
                    path: text,
                    reason: format!(
                        "wrong ELF class or machine ({})",
                        elf::machine_name(info.machine, info.class64)
                    ),
                });
                return opened;
            }
            Err(e) => {
                opened.failures.push(Failure::Unloadable {
                    path: text,
                    reason: e,
                });
                return opened;
            }
        };
        let root = self.map(
            Found {
                path: text,
                target,
                how: How::Path,
            },
            info,
            None,
            None,
        );
        opened.object = Some(root);
        opened.mapped.push(root);
        // Breadth first, as _dl_map_object_deps maps them.
        let mut next = 0;
        'objects: while next < opened.mapped.len() {
            let at = opened.mapped[next];
            next += 1;
            let all = &self.objects[at].info.needed;
            if all.len() > MAX_NEEDED {
                opened.failures.push(Failure::Limit {
                    detail: format!(
                        "{} lists {} DT_NEEDED entries, more than {MAX_NEEDED}; the rest were not \
                         followed",
                        self.objects[at].path,
                        all.len()
                    ),
                });
            }
            let needed: Vec<String> = all.iter().take(MAX_NEEDED).cloned().collect();
            for name in needed {
                if self.objects.len() >= MAX_OBJECTS {
                    opened.failures.push(Failure::Limit {
                        detail: format!(
                            "more than {MAX_OBJECTS} objects; the rest was not followed"
                        ),
                    });
                    break 'objects;
                }
                let binding = self.bind(at, &name, &mut opened.mapped);
                if binding.object.is_none() {
                    opened.failures.push(Failure::Missing {
                        needed: name.clone(),
                        by: self.objects[at].path.clone(),
                    });
                }
                self.objects[at].deps.push(binding);
            }
        }
        let mapped = opened.mapped.clone();
        for &i in &mapped {
            self.check_versions(i, &mut opened.failures);
        }
        if self.check_symbols {
            self.resolve_symbols(&mut opened);
        }
        if !opened.failures.is_empty() {
            for &i in &mapped {
                self.objects[i].live = false;
            }
        }
        opened
    }

    /// dlopen without the relocation step: the objects are mapped and their versions
    /// checked; `resolve_symbols` finishes the load for the ones worth its cost.
    pub fn dlopen_unrelocated(&mut self, path: &Path) -> Opened {
        let was = self.check_symbols;
        self.check_symbols = false;
        let opened = self.dlopen(path);
        self.check_symbols = was;
        opened
    }

    /// The relocation step of a dlopen (RTLD_NOW): undefined symbols fail the load, and
    /// what it mapped is unmapped again. Relocation comes after mapping and the version
    /// check, which stop a load first.
    pub fn resolve_symbols(&mut self, opened: &mut Opened) {
        let (Some(root), true) = (opened.object, opened.failures.is_empty()) else {
            return;
        };
        if opened.mapped.is_empty() {
            return;
        }
        let mapped = opened.mapped.clone();
        self.check_undefined(root, &mapped, &mut opened.failures);
        if !opened.failures.is_empty() {
            for &i in &mapped {
                self.objects[i].live = false;
            }
        }
    }

    /// dlopen with RTLD_GLOBAL (torch's `libtorch_global_deps.so`): what it maps joins the
    /// lookup scope of every later load.
    pub fn dlopen_global(&mut self, path: &Path) -> Opened {
        let opened = self.dlopen(path);
        if opened.failures.is_empty() {
            if let Some(root) = opened.object {
                if !self.global.contains(&root) {
                    self.global.push(root);
                }
            }
        }
        opened
    }

    fn same_file(&self, target: &Path) -> Option<usize> {
        let t = target.display().to_string();
        self.objects.iter().position(|o| o.live && o.target == t)
    }

    fn map(
        &mut self,
        found: Found,
        info: DynamicInfo,
        loader: Option<usize>,
        name: Option<&str>,
    ) -> usize {
        let mut names: Vec<String> = name.map(str::to_string).into_iter().collect();
        if let Some(s) = &info.soname {
            if !names.contains(s) {
                names.push(s.clone());
            }
        }
        self.objects.push(Object {
            path: found.path,
            target: found.target.display().to_string(),
            soname: info.soname.clone(),
            loader,
            how: found.how,
            deps: Vec::new(),
            live: true,
            names,
            info,
        });
        self.objects.len() - 1
    }

    /// Resolves one DT_NEEDED entry of object `by`, mapping a new object when needed.
    fn bind(&mut self, by: usize, name: &str, mapped: &mut Vec<usize>) -> Binding {
        let mut binding = Binding::unresolved(name);
        if !name.contains('/') {
            if let Some(i) = self.loaded(name) {
                binding.object = Some(i);
                binding.how = Some(How::AlreadyLoaded);
                return binding;
            }
        }
        let Some((found, info)) = self.search(by, name, &mut binding) else {
            return binding;
        };
        // The same file under another name is reused (glibc compares device and inode).
        if let Some(i) = self.same_file(&found.target) {
            if !self.objects[i].names.iter().any(|n| n == name) {
                self.objects[i].names.push(name.to_string());
            }
            binding.object = Some(i);
            binding.how = Some(found.how);
            return binding;
        }
        binding.how = Some(found.how.clone());
        let i = self.map(found, info, Some(by), Some(name));
        mapped.push(i);
        binding.object = Some(i);
        binding
    }

    fn search(
        &mut self,
        by: usize,
        name: &str,
        binding: &mut Binding,
    ) -> Option<(Found, DynamicInfo)> {
        let requester = &self.objects[by];
        let origin = parent(&requester.path);
        if name.contains('/') {
            let path = self.expand(name, &origin)?;
            return self.try_file(&path, How::Path, binding);
        }
        let mut steps: Vec<(PathBuf, How)> = Vec::new();
        if requester.info.runpath.is_none() {
            // RPATH of the requester, then of each object up its chain of loaders.
            let mut at = Some(by);
            let mut seen = HashSet::new();
            while let Some(i) = at {
                if !seen.insert(i) {
                    break;
                }
                let o = &self.objects[i];
                if let Some(rpath) = o.info.rpath.clone() {
                    let owner = o.path.clone();
                    for entry in rpath.split(':') {
                        if let Some(dir) = self.expand(entry, &parent(&owner)) {
                            steps.push((
                                dir,
                                How::Rpath {
                                    owner: owner.clone(),
                                    entry: entry.to_string(),
                                },
                            ));
                        }
                    }
                }
                at = o.loader;
            }
            // Then the executable's.
            if let Some((exe, info)) = &self.cfg.main {
                if let Some(rpath) = info.rpath.clone() {
                    for entry in rpath.split(':') {
                        if let Some(dir) = self.expand(entry, &parent(exe)) {
                            steps.push((
                                dir,
                                How::Rpath {
                                    owner: exe.clone(),
                                    entry: entry.to_string(),
                                },
                            ));
                        }
                    }
                }
            }
        }
        for (i, (entry, dir)) in self.cfg.ld_library_path.iter().enumerate() {
            if let Some(dir) = dir {
                steps.push((
                    dir.clone(),
                    How::LdLibraryPath {
                        index: i + 1,
                        entry: entry.clone(),
                    },
                ));
            }
        }
        let requester = &self.objects[by];
        if let Some(runpath) = requester.info.runpath.clone() {
            for entry in runpath.split(':') {
                if let Some(dir) = self.expand(entry, &origin) {
                    steps.push((
                        dir,
                        How::Runpath {
                            entry: entry.to_string(),
                        },
                    ));
                }
            }
        }
        for (dir, how) in steps {
            if let Some(found) = self.try_dir(&dir, how, name, binding) {
                return Some(found);
            }
        }
        if self.objects[by].info.nodeflib {
            return None;
        }
        let cached = self.cache_paths(name);
        if self.cfg.cache.is_some() {
            binding.searched.push(LD_SO_CACHE.to_string());
        }
        for path in cached {
            if let Some(found) = self.try_file(Path::new(&path), How::LdSoCache, binding) {
                return Some(found);
            }
        }
        for dir in self.cfg.default_dirs.clone() {
            if let Some(found) = self.try_dir(&dir, How::DefaultDir, name, binding) {
                return Some(found);
            }
        }
        None
    }

    /// One search directory: its glibc-hwcaps subdirectories this CPU supports first.
    fn try_dir(
        &mut self,
        dir: &Path,
        how: How,
        name: &str,
        binding: &mut Binding,
    ) -> Option<(Found, DynamicInfo)> {
        binding.searched.push(dir.display().to_string());
        if self.listed(dir, "glibc-hwcaps") {
            for sub in self.cfg.hwcaps.clone() {
                let hw = dir.join("glibc-hwcaps").join(sub);
                if self.listed(&hw, name) {
                    if let Some(found) = self.try_file(&hw.join(name), how.clone(), binding) {
                        return Some(found);
                    }
                }
            }
        }
        if self.listed(dir, name) {
            return self.try_file(&dir.join(name), how, binding);
        }
        None
    }

    /// Cache entries for a name, hwcaps subdirectories this CPU supports first (best
    /// first), then the plain entries in cache order.
    fn cache_paths(&self, name: &str) -> Vec<String> {
        let Some(cache) = &self.cfg.cache else {
            return Vec::new();
        };
        let arch = ldcache::host_arch();
        let entries: Vec<&ldcache::CacheEntry> = cache.lookup(name, arch).collect();
        let mut out = Vec::new();
        for level in &self.cfg.hwcaps {
            let marker = format!("/glibc-hwcaps/{level}/");
            out.extend(
                entries
                    .iter()
                    .filter(|e| e.path.contains(&marker))
                    .map(|e| e.path.clone()),
            );
        }
        out.extend(
            entries
                .iter()
                .filter(|e| !e.path.contains("/glibc-hwcaps/"))
                .map(|e| e.path.clone()),
        );
        out
    }

    fn try_file(
        &mut self,
        path: &Path,
        how: How,
        binding: &mut Binding,
    ) -> Option<(Found, DynamicInfo)> {
        let target = match self.fs.canonical(path) {
            Ok(t) => t,
            Err(_) => {
                binding
                    .skipped
                    .push(format!("{}: broken link or missing", path.display()));
                return None;
            }
        };
        match self.dynamic(&target) {
            Ok(info) if info.loadable_here() => Some((
                Found {
                    path: path.display().to_string(),
                    target,
                    how,
                },
                info,
            )),
            Ok(info) => {
                binding.skipped.push(format!(
                    "{}: wrong ELF class or machine ({})",
                    path.display(),
                    elf::machine_name(info.machine, info.class64)
                ));
                None
            }
            Err(e) => {
                binding.skipped.push(e);
                None
            }
        }
    }

    /// `$ORIGIN`, `$LIB`, `$PLATFORM` (and their braced forms) expanded; relative results
    /// are relative to the working directory.
    fn expand(&self, entry: &str, origin: &str) -> Option<PathBuf> {
        let mut s = entry.to_string();
        for (token, value) in [
            ("ORIGIN", origin),
            ("LIB", self.cfg.lib.as_str()),
            ("PLATFORM", self.cfg.platform.as_str()),
        ] {
            s = s
                .replace(&format!("${{{token}}}"), value)
                .replace(&format!("${token}"), value);
        }
        search_dir(self.fs, &s).map(|p| normalize(&p))
    }

    /// Version nodes and NVIDIA-style versioned symbols of object `i` against what it got.
    fn check_versions(&mut self, i: usize, failures: &mut Vec<Failure>) {
        let needs = self.objects[i].info.verneed.clone();
        let by = self.objects[i].path.clone();
        // (needed file, the library it bound to, the soname-style versions to check).
        let mut symbol_checks: Vec<(String, usize, Vec<String>)> = Vec::new();
        for need in needs {
            let Some(dep) = self.objects[i]
                .deps
                .iter()
                .find(|b| b.needed == need.file)
                .and_then(|b| b.object)
                .or_else(|| self.loaded(&need.file))
            else {
                continue;
            };
            let Some(defined) = &self.objects[dep].info.verdef else {
                // No version definitions at all: glibc accepts the library (it says "no
                // version information available" only when asked to be verbose).
                continue;
            };
            let mut symbol_versions = Vec::new();
            for v in &need.versions {
                if !defined.contains(v) {
                    failures.push(Failure::VersionNotFound {
                        version: v.clone(),
                        library: self.objects[dep].path.clone(),
                        by: by.clone(),
                    });
                } else if soname_style(v) {
                    symbol_versions.push(v.clone());
                }
            }
            if !symbol_versions.is_empty() {
                symbol_checks.push((need.file.clone(), dep, symbol_versions));
            }
        }
        if symbol_checks.is_empty() {
            return;
        }
        // One pass over the consumer's undefined symbols for every library it checks.
        let consumer = self.objects[i].target.clone();
        let Ok(imports) = self.table(&consumer).and_then(|t| t.imports(false)) else {
            return;
        };
        for (file, dep, versions) in &symbol_checks {
            let (target, library) = (
                self.objects[*dep].target.clone(),
                self.objects[*dep].path.clone(),
            );
            // Looked up as glibc's check_match does, through the library's own hash table.
            let Ok(table) = self.table(&target) else {
                continue;
            };
            // (Weak references are not among the imports: they never fail a load.)
            for imp in imports.iter().filter(|m| m.file.as_ref() == Some(file)) {
                let Some(version) = imp.version.as_ref().filter(|v| versions.contains(v)) else {
                    continue;
                };
                // A table that cannot be read is not judged.
                if !table.defines(&imp.name, Some(version)).unwrap_or(true) {
                    failures.push(Failure::UndefinedSymbol {
                        symbol: imp.name.clone(),
                        version: version.clone(),
                        library: library.clone(),
                        by: by.clone(),
                        other_abi: None,
                    });
                }
            }
        }
    }

    /// The symbol table of a mapped file, opened once per process (each keeps its file
    /// open: past MAX_TABLES the rest are not judged).
    fn table(&mut self, target: &str) -> Result<&mut SymbolTable, String> {
        if !self.tables.contains_key(target) {
            if self.tables.len() >= MAX_TABLES {
                return Err(format!(
                    "{target}: more than {MAX_TABLES} symbol tables open"
                ));
            }
            let t = match self.kept_files.remove(target) {
                Some(file) => SymbolTable::from_file(file, Path::new(target)),
                None => SymbolTable::open(self.fs, Path::new(target)),
            };
            self.tables.insert(target.to_string(), t);
        }
        match self.tables.get_mut(target) {
            Some(Ok(t)) => Ok(t),
            Some(Err(e)) => Err(e.clone()),
            None => Err(format!("{target}: not opened")),
        }
    }

    /// The executable and its DT_NEEDED closure, the start of every lookup scope; empty
    /// when the program is not known.
    fn main_scope(&mut self) -> Vec<String> {
        if let Some(s) = &self.main_scope {
            return s.clone();
        }
        let mut scope = Vec::new();
        if let Some((exe, _)) = &self.cfg.main {
            let mut p = Process::new(self.fs, self.cfg);
            p.check_symbols = false;
            // The program's closure in a process of its own, sharing what was read.
            p.elf = std::mem::take(&mut self.elf);
            p.kept_files = std::mem::take(&mut self.kept_files);
            p.listings = std::mem::take(&mut self.listings);
            let opened = p.dlopen(Path::new(exe));
            // A program whose own libraries are not all found is not known.
            if opened.failures.is_empty() {
                scope = opened
                    .mapped
                    .iter()
                    .map(|&i| p.objects[i].target.clone())
                    .collect();
            }
            self.elf = p.elf;
            self.kept_files = p.kept_files;
            self.listings = p.listings;
        }
        self.main_scope = Some(scope.clone());
        scope
    }

    /// glibc's lookup scope for what a dlopen of `root` maps: the global scope (the
    /// executable's closure, then libraries opened RTLD_GLOBAL), then the root's own
    /// breadth-first closure, already-loaded objects included.
    fn scope(&mut self, root: usize) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for t in self.main_scope() {
            if seen.insert(t.clone()) {
                out.push((t, usize::MAX));
            }
        }
        let mut queue: Vec<usize> = self.global.clone();
        queue.push(root);
        let mut at = 0;
        let mut visited = HashSet::new();
        while at < queue.len() {
            let i = queue[at];
            at += 1;
            if !visited.insert(i) {
                continue;
            }
            let o = &self.objects[i];
            if seen.insert(o.target.clone()) {
                out.push((o.target.clone(), i));
            }
            queue.extend(o.deps.iter().filter_map(|b| b.object));
        }
        out
    }

    /// The unversioned undefined symbols of the objects a dlopen mapped, resolved in its
    /// lookup scope as an RTLD_NOW load relocates them: one nothing in scope defines is
    /// glibc's `undefined symbol: X` (a C++ extension built against another torch).
    /// Versioned imports are `check_versions`' (nodes, and symbols of soname-named nodes).
    /// Unversioned C symbols are judged only when the executable is known (it exports the
    /// Python API); C++ symbols (`_Z…`) always. Objects under `unjudged_dirs` (libraries
    /// built and shipped together) and objects whose table cannot be read are not judged.
    fn check_undefined(&mut self, root: usize, mapped: &[usize], failures: &mut Vec<Failure>) {
        let judged: Vec<usize> = mapped
            .iter()
            .copied()
            .filter(|&i| {
                let t = &self.objects[i].target;
                !self.unjudged_dirs.iter().any(|d| t.starts_with(d.as_str()))
            })
            .collect();
        if judged.is_empty() {
            return;
        }
        let scope = self.scope(root);
        // Unversioned C imports are judged only where the program is a Python that exports
        // its API (an ELF launcher or a wrapper script would leave every Py* "undefined").
        let program_known = scope
            .iter()
            .filter(|(_, i)| *i == usize::MAX)
            .map(|(t, _)| t.clone())
            .collect::<Vec<_>>()
            .iter()
            .any(|t| {
                self.table(t)
                    .and_then(|tab| tab.defines("PyObject_GetAttr", None))
                    .unwrap_or(false)
            });
        // Objects are relocated dependencies first.
        for &i in judged.iter().rev() {
            let target = self.objects[i].target.clone();
            let Ok(imports) = self.table(&target).and_then(|t| t.imports(true)) else {
                continue;
            };
            let imports = imports
                .into_iter()
                .filter(|imp| program_known || imp.name.starts_with("_Z"));
            let mut missing: Vec<crate::dynsym::Import> = Vec::new();
            'imports: for imp in imports {
                for (t, _) in &scope {
                    match self
                        .table(t)
                        .and_then(|tab| tab.defines(&imp.name, imp.version.as_deref()))
                    {
                        Ok(true) => continue 'imports,
                        Ok(false) => {}
                        // Part of the scope cannot be read: this symbol is not judged.
                        Err(_) => continue 'imports,
                    }
                }
                missing.push(imp);
            }
            if missing.is_empty() {
                continue;
            }
            // Only a symbol a relocation refers to is looked up; glibc names the first. An
            // object whose relocations cannot be read is not judged.
            let Ok(order) = self.table(&target).and_then(|t| t.relocation_order()) else {
                continue;
            };
            let position: HashMap<u32, usize> =
                order.iter().enumerate().map(|(k, &s)| (s, k)).collect();
            missing.retain(|m| position.contains_key(&m.index));
            missing.sort_by_key(|m| position[&m.index]);
            let by = self.objects[i].path.clone();
            for imp in missing.iter().take(MAX_UNDEFINED) {
                let other_abi = other_abi_spelling(&imp.name).filter(|other| {
                    scope.iter().any(|(t, _)| {
                        self.table(t)
                            .and_then(|tab| tab.defines(other, None))
                            .unwrap_or(false)
                    })
                });
                failures.push(Failure::UndefinedSymbol {
                    symbol: imp.name.clone(),
                    version: imp.version.clone().unwrap_or_default(),
                    library: self.library_for(imp, &scope),
                    by: by.clone(),
                    other_abi,
                });
            }
        }
    }

    /// The library that should define an import: the file its version is required of, or,
    /// for PyTorch's C++ namespaces, the torch library that defines them; "" when the
    /// symbol does not say.
    fn library_for(&self, imp: &crate::dynsym::Import, scope: &[(String, usize)]) -> String {
        let wanted = match &imp.file {
            Some(f) => f.clone(),
            None => match torch_library_of(&imp.name) {
                Some(s) => s.to_string(),
                None => return String::new(),
            },
        };
        scope
            .iter()
            .filter(|(_, i)| *i != usize::MAX)
            .map(|(_, i)| &self.objects[*i])
            .find(|o| o.soname.as_deref() == Some(wanted.as_str()) || o.names.contains(&wanted))
            .map(|o| o.path.clone())
            .unwrap_or(wanted)
    }

    /// Whether the file at `path` defines `symbol` at `version` (for naming the copy that
    /// would have worked).
    pub fn defines(&mut self, path: &str, symbol: &str, version: &str) -> bool {
        let Ok(target) = self.fs.canonical(Path::new(path)) else {
            return false;
        };
        self.table(&target.display().to_string())
            .is_ok_and(|t| t.defines(symbol, Some(version)).unwrap_or(false))
    }

    /// Whether the file at `path` defines version node `version`.
    pub fn defines_version(&mut self, path: &str, version: &str) -> bool {
        let Ok(target) = self.fs.canonical(Path::new(path)) else {
            return false;
        };
        match self.dynamic(&target) {
            Ok(info) => info.verdef.is_none_or(|d| d.iter().any(|v| v == version)),
            Err(_) => false,
        }
    }
}

/// libstdc++'s `std::string` under the C++11 ABI (`std::__cxx11::basic_string<char>`) and
/// under the old one (`Ss`), as they are mangled.
const CXX11_STRING: &str = "NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE";
const OLD_STRING: &str = "Ss";

/// A C++ symbol with `std::string` spelled for the other `_GLIBCXX_USE_CXX11_ABI`, where it
/// takes one. Substitution indices after the string can differ between the two manglings,
/// so a match proves the ABI difference while no match proves nothing.
pub fn other_abi_spelling(symbol: &str) -> Option<String> {
    if !symbol.starts_with("_Z") {
        return None;
    }
    if symbol.contains(CXX11_STRING) {
        return Some(symbol.replace(CXX11_STRING, OLD_STRING));
    }
    // `Ss` as a whole component: after a qualifier (RK, K, P, R) or at a parameter boundary.
    ["RKSs", "PKSs", "RSs", "PSs"]
        .iter()
        .find(|p| symbol.contains(**p))
        .map(|p| symbol.replace(p, &p.replace(OLD_STRING, CXX11_STRING)))
}

/// The torch library that defines a C++ symbol of PyTorch's namespaces (c10, at, torch),
/// by the first name in its mangled nested name.
pub fn torch_library_of(symbol: &str) -> Option<&'static str> {
    let rest = symbol.strip_prefix("_Z")?;
    // Skip the mangling's prefixes (vtable TV, typeinfo TI, nested N, const K, …).
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    if start > 4 {
        return None;
    }
    let name = &rest[start..];
    [
        ("3c104cuda", "libc10_cuda.so"),
        ("3c10", "libc10.so"),
        ("2at4cuda", "libtorch_cuda.so"),
        ("2at6native4cuda", "libtorch_cuda.so"),
        ("2at", "libtorch_cpu.so"),
        ("5torch4cuda", "libtorch_cuda.so"),
        ("5torch3jit", "libtorch_cpu.so"),
        ("5torch6detail", "libtorch_python.so"),
        ("5torch6python", "libtorch_python.so"),
        ("5torch5utils", "libtorch_python.so"),
        ("5torch", "libtorch_cpu.so"),
    ]
    .into_iter()
    .find(|(p, _)| name.starts_with(p))
    .map(|(_, l)| l)
}

/// A version named after a soname (`libcudart.so.12`, `libnvJitLink.so.12`): NVIDIA puts
/// every symbol of a major under one such node, so the node alone says nothing about a
/// symbol added in a later minor.
pub fn soname_style(version: &str) -> bool {
    version.starts_with("lib") && version.contains(".so")
}

fn parent(path: &str) -> String {
    match path.rsplit_once('/') {
        Some(("", _)) => "/".to_string(),
        Some((dir, _)) => dir.to_string(),
        None => ".".to_string(),
    }
}

/// `a/b/../c` → `a/c` on the text, so expanded `$ORIGIN/../..` paths stay inside --root and
/// read as written. The kernel applies `..` after following links: the two differ only
/// when a directory on the path is a link (docs/libs.md, Limits).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soname_style_versions() {
        assert!(soname_style("libnvJitLink.so.12"));
        assert!(soname_style("libcudart.so.13"));
        assert!(!soname_style("GLIBC_2.34"));
        assert!(!soname_style("GLIBCXX_3.4.30"));
    }

    #[test]
    fn std_string_is_spelled_for_the_other_abi() {
        // c10's torchCheckFail(const char*, const char*, unsigned, const std::string&): libc10.so
        // of a cxx11-ABI torch exports the first, of an old-ABI torch the second.
        let new = "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE";
        let old = "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs";
        assert_eq!(other_abi_spelling(new).as_deref(), Some(old));
        assert_eq!(other_abi_spelling(old).as_deref(), Some(new));
        assert_eq!(other_abi_spelling("_ZN3c1010TensorImpl4sizeEl"), None);
        assert_eq!(other_abi_spelling("PyInit__C"), None);
    }

    #[test]
    fn torch_symbols_name_their_library() {
        let of = torch_library_of;
        assert_eq!(
            of("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb"),
            Some("libc10_cuda.so")
        );
        assert_eq!(of("_ZNK3c1010TensorImpl4sizeEl"), Some("libc10.so"));
        assert_eq!(of("_ZTVN3c1011StorageImplE"), Some("libc10.so"));
        assert_eq!(
            of("_ZN2at4_ops3add4callERKNS_6TensorES4_RKN3c106ScalarE"),
            Some("libtorch_cpu.so")
        );
        assert_eq!(of("_ZN5torch8autograd4NodeD2Ev"), Some("libtorch_cpu.so"));
        assert_eq!(of("_ZNSt6vectorIiSaIiEE9push_backEOi"), None);
        assert_eq!(of("PyInit__C"), None);
    }

    #[test]
    fn parents_and_normal_forms() {
        assert_eq!(parent("/a/b/libx.so"), "/a/b");
        assert_eq!(parent("/libx.so"), "/");
        assert_eq!(
            normalize(Path::new("/a/torch/lib/../../nvidia/cu13/lib")),
            PathBuf::from("/a/nvidia/cu13/lib")
        );
    }

    /// A real ELF shared object of this machine to copy into fake trees.
    use crate::testing::system_libc as system_library;

    #[test]
    fn a_program_finds_nvml_on_ld_library_path_then_the_default_dirs_or_not_at_all() {
        let Some(lib) = system_library() else { return };
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let put = |rel: &str, from: Option<&Path>| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            match from {
                Some(f) => std::fs::copy(f, &p).map(|_| ()).unwrap(),
                None => std::fs::write(&p, b"not an ELF file").unwrap(),
            }
        };
        let fs = HostFs::new(Some(root.to_path_buf()));
        let default = format!("{}/libnvidia-ml.so.1", DEFAULT_DIRS[1]);
        let find = |ld: &str| {
            let env = Env::from_pairs([("LD_LIBRARY_PATH", ld)]);
            let cfg = SearchConfig::new(&fs, &env);
            find_for_program(&fs, &cfg, "libnvidia-ml.so.1")
        };
        assert_eq!(find("/opt/x"), None);
        put(&default[1..], Some(lib));
        assert_eq!(find("/opt/x").as_deref(), Some(default.as_str()));
        // Not ELF: the loader skips it and goes on.
        put("opt/x/libnvidia-ml.so.1", None);
        assert_eq!(find("/opt/x").as_deref(), Some(default.as_str()));
        put("opt/y/libnvidia-ml.so.1", Some(lib));
        assert_eq!(
            find("/opt/x:/opt/y").as_deref(),
            Some("/opt/y/libnvidia-ml.so.1")
        );
    }

    #[test]
    fn loader_messages_read_like_glibc() {
        let f = Failure::UndefinedSymbol {
            symbol: "__nvJitLinkAddData_12_1".into(),
            version: "libnvJitLink.so.12".into(),
            library: "/x/libnvJitLink.so.12".into(),
            by: "/y/libcusparse.so.12".into(),
            other_abi: None,
        };
        assert_eq!(
            f.loader_message(),
            "/y/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12"
        );
    }
}
