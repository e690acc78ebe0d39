//! What the `environment` probe (src/probes/environment.rs) records.

use crate::envvars::Category;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    /// Set variables only, sorted by name; an unset variable is absent.
    pub variables: Vec<EnvValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EnvValue {
    pub name: String,
    pub value: String,
    pub category: Category,
    pub redacted: bool,
    /// The value was not valid UTF-8 and is shown with replacement characters.
    pub lossy: bool,
}

impl Environment {
    pub fn get(&self, name: &str) -> Option<&EnvValue> {
        self.variables.iter().find(|v| v.name == name)
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.get(name).map(|v| v.value.as_str())
    }
}
