//! What the `python_sites` probe (src/probes/python_sites.rs) records.

pub use crate::pyversion::normalize;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Site {
    /// The site-packages (or dist-packages) directory.
    pub path: String,
    /// How it was found: `VIRTUAL_ENV`, `CONDA_PREFIX`, `python3 on PATH`, `./.venv`.
    pub found_by: String,
    /// X.Y from the `lib/pythonX.Y` directory name, when the layout says it.
    pub python: Option<String>,
    /// Part of the environment `python` on PATH (or --python) gives: what a user runs.
    #[serde(default)]
    pub primary: bool,
    /// Entry names, read once and shared by the probes that need them.
    #[serde(skip)]
    pub entries: Vec<String>,
}

impl Site {
    /// `*.dist-info` directories whose normalised project name starts with `prefix`,
    /// as (project name, version).
    pub fn dists_with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        self.entries
            .iter()
            .filter_map(|e| parse_dist_info(e))
            .filter(|(name, _)| name.starts_with(prefix))
            .collect()
    }

    pub fn dist(&self, name: &str) -> Option<String> {
        self.entries
            .iter()
            .filter_map(|e| parse_dist_info(e))
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// `nvidia_cuda_nvcc_cu12-12.4.131.dist-info` → ("nvidia-cuda-nvcc-cu12", "12.4.131").
pub fn parse_dist_info(entry: &str) -> Option<(String, String)> {
    let stem = entry.strip_suffix(".dist-info")?;
    let (name, version) = stem.split_once('-')?;
    if name.is_empty() || version.is_empty() {
        return None;
    }
    Some((normalize(name), version.to_string()))
}
