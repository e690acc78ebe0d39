//! What the `pytorch` probe (src/probes/pytorch.rs) records.

use crate::fact::Fact;
use crate::fatbin::FatbinSummary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PythonEnv {
    pub site: String,
    pub found_by: String,
    pub python: Option<String>,
    /// The environment `python` on PATH (else the first found) gives a user.
    pub primary: bool,
    pub torch: Option<Torch>,
    /// Every installed `nvidia-*` and `cuda-*` distribution (name, version).
    pub nvidia_wheels: Vec<Dist>,
    /// torchvision, torchaudio, triton.
    pub companions: Vec<Dist>,
    /// jax/jaxlib/jax-cuda*-plugin, tensorflow, cupy-cuda*, onnxruntime-gpu, vllm,
    /// xformers, flash-attn, bitsandbytes (with the torch each pins).
    pub frameworks: Vec<Dist>,
    /// The tool that manages the environment ("pip", "uv", "conda", "poetry", "pdm"), and
    /// the file that says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installer: Option<Fact<String>>,
    /// The environment's interpreter (`PREFIX/bin/python`): install commands run it, so that
    /// they cannot land in another environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<String>,
    /// The project directory whose lockfile manages this environment (a uv, poetry or pdm
    /// project's `.venv`): a fix changes the project, or the next sync reverts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dist {
    pub name: String,
    pub version: String,
    /// The `Requires-Dist: torch…` specifier of a companion's or framework's METADATA
    /// ("==2.7.1", ">=2.14.0"); None when it declares none or has no METADATA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_torch: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Torch {
    /// Version from the dist-info directory name / METADATA.
    pub dist_version: String,
    /// torch/version.py, as torch itself reports them.
    pub version: Fact<String>,
    /// `torch.version.cuda` ("12.8"); None for CPU-only and ROCm builds.
    pub cuda: Option<String>,
    pub hip: Option<String>,
    pub git_version: Option<String>,
    pub debug: Option<bool>,
    /// METADATA Requires-Dist entries that apply on Linux.
    pub requires: Vec<Requirement>,
    /// Requires-Dist lines that could not be judged (a marker nested too deeply), in torch's
    /// METADATA or a meta-package's it expands: they are missing from `requires`.
    #[serde(default)]
    pub requires_problems: Vec<MetadataProblem>,
    /// The CPU architecture of the installed wheel, from the platform tag in its dist-info
    /// WHEEL file (`manylinux_2_28_aarch64` → "aarch64"); None for pure or unknown tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wheel_machine: Option<String>,
    /// Architectures in libtorch_cuda.so's .nv_fatbin (absent for CPU-only builds).
    pub arches: Option<Fact<FatbinSummary>>,
    /// conda's `pytorch` package build string (`py3.10_cuda12.1_cudnn8.9.2_0`, `py3.10_cpu_0`)
    /// and `pytorch-mutex` (`cpu` / `cuda`), when conda installed torch.
    #[serde(default)]
    pub conda_build: Option<String>,
    #[serde(default)]
    pub conda_mutex: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Requirement {
    /// Normalised project name (`nvidia-cudnn-cu12`, `cuda-toolkit`).
    pub name: String,
    /// Extras asked for (`cuda-toolkit[cublas,cudart]`).
    pub extras: Vec<String>,
    /// Version specifier as written (`==9.10.2.21`, `>=13.1.0.3,<=13.1.1.3`).
    pub spec: String,
    /// Set when the pin comes from a dependency's extras (`cuda-toolkit[cudart]`).
    pub via: Option<String>,
}

/// A METADATA line gpudoctor could not read, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetadataProblem {
    /// The METADATA file.
    pub source: String,
    /// Which line, and what was wrong with it.
    pub detail: String,
}

impl Torch {
    /// Kind of build: "cuda", "cpu" or "rocm".
    pub fn kind(&self) -> &'static str {
        if self.hip.is_some() {
            "rocm"
        } else if self.cuda.is_some() {
            "cuda"
        } else {
            "cpu"
        }
    }
}
