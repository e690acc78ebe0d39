//! What the `linkage` probe (src/probes/linkage.rs) records.

use crate::loader::{self, Failure, How, Object};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

pub fn is_cuda_soname(name: &str) -> bool {
    CUDA_PREFIXES.iter().any(|p| name.starts_with(p))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Linkage {
    /// The site-packages directory, or "files given" for `gpudoctor libs FILE…`.
    pub site: String,
    /// The interpreter whose DT_RPATH the loader also searches, when found.
    pub python: Option<String>,
    /// LD_LIBRARY_PATH as the emulated process sees it.
    pub ld_library_path: Vec<String>,
    /// CUDA-using modules in the order they were opened.
    pub modules: Vec<Module>,
    /// Every object mapped (and unmapped again after a failed open), indexed by modules
    /// and bindings.
    pub objects: Vec<Object>,
    /// Where the walk stopped early (bounds on entries or modules).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
    /// Versions of the CUDA libraries mapped, where the files say them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<LibraryVersion>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LibraryVersion {
    pub object: usize,
    pub version: String,
    /// The wheel, header or file name that says it.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Module {
    /// Top-level package directory (or the file's own name at the top of site-packages).
    pub package: String,
    /// The installed distribution it belongs to, "name version".
    pub dist: Option<String>,
    pub path: String,
    pub object: Option<usize>,
    pub mapped: Vec<usize>,
    pub failures: Vec<Failed>,
    /// Why a failure only disables a feature (a module the package loads in a try block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<String>,
}

impl Module {
    pub fn loads(&self) -> bool {
        self.failures.is_empty()
    }
}

/// A failure with what the files say about a way out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failed {
    pub failure: Failure,
    /// How the library that failed the check was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picked_how: Option<How>,
    /// Other files on disk (this environment's wheels, other search-path entries) that
    /// provide the soname, or define the missing version or symbol.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub would_work: Vec<String>,
}

impl Linkage {
    pub fn object(&self, i: usize) -> Option<&Object> {
        self.objects.get(i)
    }

    /// Keeps the objects that are, or lead to, a CUDA library (and every module's root and
    /// failure): what the rules read. A torch process maps about 150 objects, most of them
    /// libc, libstdc++ and their kin; a report keeps the 40 or so that matter.
    pub fn keep_cuda_paths(&mut self) {
        let n = self.objects.len();
        let mut keep: Vec<bool> = self
            .objects
            .iter()
            .map(|o| {
                o.soname
                    .as_deref()
                    .map_or(is_cuda_soname(loader::file_name(&o.path)), is_cuda_soname)
            })
            .collect();
        for m in &self.modules {
            if let Some(i) = m.object.filter(|&i| i < n) {
                keep[i] = true;
            }
        }
        // Up the bindings until nothing changes (the graph may have cycles).
        loop {
            let mut changed = false;
            for i in 0..n {
                if keep[i] {
                    continue;
                }
                let leads = self.objects[i].deps.iter().any(|b| {
                    b.object
                        .is_some_and(|j| keep.get(j).copied().unwrap_or(false))
                });
                if leads {
                    keep[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut index = vec![None; n];
        let mut next = 0;
        for (i, k) in keep.iter().enumerate() {
            if *k {
                index[i] = Some(next);
                next += 1;
            }
        }
        let remap = |i: usize| index.get(i).copied().flatten();
        let objects = std::mem::take(&mut self.objects);
        self.objects = objects
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep[*i])
            .map(|(_, mut o)| {
                o.loader = o.loader.and_then(remap);
                o.deps.retain(|b| {
                    b.object
                        .is_none_or(|j| keep.get(j).copied().unwrap_or(false))
                });
                for b in &mut o.deps {
                    b.object = b.object.and_then(remap);
                }
                o
            })
            .collect();
        for m in &mut self.modules {
            m.object = m.object.and_then(remap);
            m.mapped = m.mapped.iter().filter_map(|&i| remap(i)).collect();
        }
        self.versions.retain_mut(|v| match remap(v.object) {
            Some(i) => {
                v.object = i;
                true
            }
            None => false,
        });
    }

    pub fn version_of(&self, object: usize) -> Option<&LibraryVersion> {
        self.versions.iter().find(|v| v.object == object)
    }

    /// Every object a module reaches, itself first, each once.
    pub fn closure(&self, module: &Module) -> Vec<usize> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack: Vec<usize> = module.object.into_iter().collect();
        while let Some(i) = stack.pop() {
            if !seen.insert(i) {
                continue;
            }
            out.push(i);
            if let Some(o) = self.objects.get(i) {
                for b in o.deps.iter().rev() {
                    if let Some(j) = b.object {
                        stack.push(j);
                    }
                }
            }
        }
        out
    }
}

/// The `site` of a linkage made from files given on the command line.
pub const FILES_GIVEN: &str = "files given";

/// Soname prefixes of NVIDIA's CUDA libraries (and the driver's): a module whose closure
/// reaches one is a CUDA-using module.
pub const CUDA_PREFIXES: &[&str] = &[
    "libcuda.",
    "libcudart",
    "libcublas",
    "libcudnn",
    "libcufft",
    "libcufile",
    "libcupti",
    "libcurand",
    "libcusolver",
    "libcusparse",
    "libcutensor",
    "libnccl",
    "libnpp",
    "libnvJitLink",
    "libnvToolsExt",
    "libnvblas",
    "libnvidia-ml",
    "libnvinfer",
    "libnvjpeg",
    "libnvonnxparser",
    "libnvrtc",
    "libnvshmem",
    "libnvptxcompiler",
];
