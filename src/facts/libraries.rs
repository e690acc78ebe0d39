//! What the `libraries` probe (src/probes/libraries.rs) records.

use crate::fact::Fact;
use crate::ldcache::CacheFormat;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const WSL_LIB_DIR: &str = "/usr/lib/wsl/lib";

/// The family a file name belongs to (`libcudnn_ops.so.9` → libcudnn).
pub fn family_of(file: &str) -> Option<&'static Family> {
    let (stem, _) = file.split_once(".so")?;
    let after = &file[stem.len() + 3..];
    if !(after.is_empty() || after.starts_with('.')) {
        return None;
    }
    FAMILIES
        .iter()
        .find(|f| stem == f.name || (f.name == "libcudnn" && stem.starts_with("libcudnn_")))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    LdLibraryPath,
    LdSoCache,
    DefaultDir,
    PipWheel,
    Conda,
    Toolkit,
    Wsl,
}

impl Via {
    pub fn describe(self) -> &'static str {
        match self {
            Via::LdLibraryPath => "LD_LIBRARY_PATH",
            Via::LdSoCache => "ld.so.cache",
            Via::DefaultDir => "default directory",
            Via::PipWheel => "pip wheel",
            Via::Conda => "conda env",
            Via::Toolkit => "toolkit",
            Via::Wsl => "WSL driver directory",
        }
    }

    /// Whether a program with no RPATH of its own finds the library this way.
    pub fn on_search_path(self) -> bool {
        matches!(self, Via::LdLibraryPath | Via::LdSoCache | Via::DefaultDir)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// The path the loader would open.
    pub path: String,
    pub via: Via,
    /// Which LD_LIBRARY_PATH entry, which wheel, which toolkit.
    pub detail: Option<String>,
    /// The file its symlinks lead to.
    pub target: Option<String>,
    pub version: Option<String>,
    pub version_source: Option<String>,
    /// SONAME from the ELF dynamic section.
    pub elf_soname: Option<String>,
    /// DT_NEEDED: the libraries this one needs in turn.
    pub needed: Vec<String>,
    pub size: Option<u64>,
    /// Under a `stubs` directory: link-time stand-ins that fail at run time (error 34).
    pub stub: bool,
    /// Under a toolkit's `compat` directory: the forward-compatibility driver.
    pub forward_compat: bool,
    /// Why the loader would skip it (broken link, unreadable, not ELF).
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Library {
    pub family: String,
    pub soname: String,
    /// On the loader's search path, in its order.
    pub candidates: Vec<Candidate>,
    /// Index into `candidates` of the copy the loader would load.
    pub winner: Option<usize>,
    /// Copies off the search path: found only by programs that point at them.
    pub elsewhere: Vec<Candidate>,
}

impl Library {
    pub fn loaded(&self) -> Option<&Candidate> {
        self.winner.and_then(|i| self.candidates.get(i))
    }

    /// The soname's major: `libcudart.so.12` → 12, `libcudart.so.11.0` → 11.
    pub fn major(&self) -> Option<u32> {
        soname_major(&self.soname)
    }
}

pub fn soname_major(soname: &str) -> Option<u32> {
    let (_, after) = soname.split_once(".so.")?;
    after.split('.').next()?.parse().ok()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheInfo {
    pub format: CacheFormat,
    pub entries: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchPath {
    /// LD_LIBRARY_PATH's entries as written (an empty one means the working directory).
    pub ld_library_path: Vec<String>,
    /// Each entry with its links resolved; None when it is not searched (missing, or
    /// relative under --root, where the working directory means nothing).
    pub ld_library_path_resolved: Vec<Option<String>>,
    pub cache: Fact<CacheInfo>,
    pub default_dirs: Vec<String>,
    /// Whether WSL's driver directory is searched (LD_LIBRARY_PATH or the cache); None off WSL.
    pub wsl_lib_searched: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Libraries {
    pub search: SearchPath,
    pub libraries: Vec<Library>,
    /// The first `nvidia-smi` on PATH and where its links lead: the driver's user-space
    /// tool (on WSL it must be the one in /usr/lib/wsl/lib).
    pub nvidia_smi: Option<Executable>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Executable {
    pub path: String,
    pub resolved: String,
}

impl Libraries {
    pub fn by_soname(&self, soname: &str) -> Option<&Library> {
        self.libraries.iter().find(|l| l.soname == soname)
    }

    pub fn family<'a>(&'a self, family: &'a str) -> impl Iterator<Item = &'a Library> + 'a {
        self.libraries.iter().filter(move |l| l.family == family)
    }
}

/// The version a file name carries past its soname: `libcuda.so.535.104.05` → 535.104.05,
/// `libcudart.so.12.4.127` → 12.4.127, `libcudnn.so.9` → None (just the major).
pub fn version_from_file_name(name: &str) -> Option<String> {
    let (_, after) = name.split_once(".so.")?;
    let parts: Vec<&str> = after.split('.').collect();
    if parts.len() < 2
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    // CUDA 11 sonames carry ".0" (libcudart.so.11.0) without being a full version.
    if parts.len() == 2 && parts[1] == "0" {
        return None;
    }
    Some(after.to_string())
}

/// A library family: its file-name prefix, and the pip wheel that ships it.
pub struct Family {
    pub name: &'static str,
    /// Project-name prefix of the `nvidia-*` wheel that ships it.
    pub wheel: Option<&'static str>,
}

pub const FAMILIES: &[Family] = &[
    // CUDA driver API (installed with the NVIDIA driver)
    Family {
        name: "libcuda",
        wheel: None,
    },
    // NVML (installed with the NVIDIA driver)
    Family {
        name: "libnvidia-ml",
        wheel: None,
    },
    // PTX JIT compiler (installed with the NVIDIA driver)
    Family {
        name: "libnvidia-ptxjitcompiler",
        wheel: None,
    },
    // CUDA runtime
    Family {
        name: "libcudart",
        wheel: Some("nvidia-cuda-runtime"),
    },
    // cuBLAS
    Family {
        name: "libcublas",
        wheel: Some("nvidia-cublas"),
    },
    // cuBLASLt
    Family {
        name: "libcublasLt",
        wheel: Some("nvidia-cublas"),
    },
    // cuDNN
    Family {
        name: "libcudnn",
        wheel: Some("nvidia-cudnn"),
    },
    // NCCL
    Family {
        name: "libnccl",
        wheel: Some("nvidia-nccl"),
    },
    // nvJitLink
    Family {
        name: "libnvJitLink",
        wheel: Some("nvidia-nvjitlink"),
    },
    // NVRTC runtime compiler
    Family {
        name: "libnvrtc",
        wheel: Some("nvidia-cuda-nvrtc"),
    },
];
