//! What the `pytorch_live` probe (src/probes/pytorch_live.rs) records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LiveTorch {
    /// The interpreter that ran.
    pub python: String,
    pub result: LiveResult,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum LiveResult {
    Ok { answer: LiveAnswer },
    NotProbed { reason: String },
    TimedOut { seconds: f64 },
    Failed { detail: String },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LiveAnswer {
    pub python_version: Option<String>,
    pub torch: Option<String>,
    pub cuda: Option<String>,
    pub is_available: Option<bool>,
    pub device_count: Option<u32>,
    /// torch._C._cuda_getArchFlags(): the build's architectures, known without a GPU.
    pub arch_flags: Option<String>,
    pub cudnn: Option<i64>,
    /// Warnings torch emitted on import and is_available() ("too old", "not compatible").
    pub warnings: Vec<String>,
    pub import_error: Option<String>,
    /// CUDA libraries mapped into the process.
    pub loaded: Vec<String>,
}

impl LiveAnswer {
    /// The interpreter has no torch at all: nothing failed to load.
    pub fn no_torch(&self) -> bool {
        self.import_error
            .as_deref()
            .is_some_and(|e| e.starts_with("ModuleNotFoundError: No module named 'torch'"))
    }
}
