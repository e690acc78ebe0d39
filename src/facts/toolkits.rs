//! What the `toolkits` probe (src/probes/toolkits.rs) records.

use crate::compat::CudaVersion;
use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    CudaHome,
    CudaPath,
    CudaRoot,
    NvccOnPath,
    UsrLocalCuda,
    VersionedDir,
    OptCuda,
    OptNvidia,
    DebianPackage,
    Conda,
    PipWheel,
}

impl Route {
    pub fn describe(self) -> &'static str {
        match self {
            Route::CudaHome => "CUDA_HOME",
            Route::CudaPath => "CUDA_PATH",
            Route::CudaRoot => "CUDA_ROOT",
            Route::NvccOnPath => "nvcc on PATH",
            Route::UsrLocalCuda => "/usr/local/cuda",
            Route::VersionedDir => "/usr/local/cuda-*",
            Route::OptCuda => "/opt/cuda",
            Route::OptNvidia => "/opt/nvidia",
            Route::DebianPackage => "distribution package",
            Route::Conda => "conda environment",
            Route::PipWheel => "pip wheel",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolkitKind {
    /// NVIDIA's runfile, .deb/.rpm repository or container layout.
    Nvidia,
    /// A distribution's own packaging (Debian/Ubuntu `nvidia-cuda-toolkit`).
    Distribution,
    Conda,
    PipWheel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    pub route: Route,
    /// The path as the route names it (`$CUDA_HOME`, the nvcc on PATH, the symlink).
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Toolkit {
    /// The install's directory with symlinks resolved; two routes to it are one toolkit.
    pub root: String,
    pub kind: ToolkitKind,
    pub found: Vec<Found>,
    /// The version as written where it was read (`12.6.3`, `11.8.89`); source says where.
    pub version: Fact<String>,
    /// major.minor of that version.
    pub cuda: Option<CudaVersion>,
    /// Other places that state a version and disagree (a half-upgraded install).
    pub disagreements: Vec<VersionReading>,
    /// The toolkit's compiler driver, when it has one.
    pub nvcc: Option<String>,
    /// Has `cuda_runtime_api.h`: something can be compiled against it.
    pub headers: bool,
    pub lib_dirs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VersionReading {
    pub source: String,
    pub version: String,
}

/// A route that names a directory holding no toolkit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rejected {
    pub route: Route,
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NvccOnPath {
    /// The first `nvcc` on PATH, as PATH names it.
    pub path: String,
    /// Where its symlinks lead.
    pub resolved: String,
    /// Index into `installs` of the toolkit it belongs to.
    pub toolkit: Option<usize>,
}

/// The toolkit `torch.utils.cpp_extension` builds with: `CUDA_HOME`, else `CUDA_PATH`,
/// else `dirname(dirname(which nvcc))` (symlinks not resolved), else `/usr/local/cuda`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CudaHome {
    pub path: Option<String>,
    pub via: String,
    pub toolkit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CondaPackage {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExtensionPackage {
    pub name: String,
    pub version: String,
    pub site: String,
    /// A compiled module its RECORD lists (a `.so`): it came as a built wheel or was built
    /// at install, so running it needs no toolkit. None: it builds at install or at first
    /// use (JIT), or its RECORD was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled: Option<String>,
}

impl ExtensionPackage {
    /// Whether it still needs a toolkit: nothing compiled was installed with it.
    pub fn builds(&self) -> bool {
        self.compiled.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Toolkits {
    pub installs: Vec<Toolkit>,
    pub rejected: Vec<Rejected>,
    pub nvcc_on_path: Option<NvccOnPath>,
    pub cuda_home: CudaHome,
    /// Where `/usr/local/cuda` points (often an alternatives chain).
    pub usr_local_cuda: Option<String>,
    /// CUDA packages in the active conda environment (`conda-meta`).
    pub conda_packages: Vec<CondaPackage>,
    /// Installed packages that compile CUDA code and so need a toolkit.
    pub extension_builders: Vec<ExtensionPackage>,
}

impl Toolkits {
    pub fn get(&self, index: Option<usize>) -> Option<&Toolkit> {
        index.and_then(|i| self.installs.get(i))
    }
}

/// The CUDA_HOME that makes builds find this toolkit's nvcc, headers and libraries:
/// Debian's packaging spreads them over /usr, so it is `/usr` there.
pub fn cuda_home_value(t: &Toolkit) -> String {
    if t.kind == ToolkitKind::Distribution {
        "/usr".to_string()
    } else {
        t.root.clone()
    }
}

impl Toolkit {
    pub(crate) fn set_wheel_version(&mut self, site: &str, dist: &str, version: &str) {
        if self.version.get().is_none() {
            self.version = Fact::value(format!("{site}/{dist} (pip)"), version.to_string());
            self.cuda = CudaVersion::parse(version);
        }
    }
}
