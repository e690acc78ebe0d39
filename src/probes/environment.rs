//! Probe: the environment variables in the registry (src/envvars.rs) that are set.
//! Secret-looking values are redacted here, so no output can ever carry them.

use crate::envvars::{self, Category, Env};
use crate::facts::environment::{EnvValue, Environment};

pub const REDACTED: &str = "<redacted>";

pub fn probe(env: &Env) -> Environment {
    let variables = env
        .registered_set()
        .into_iter()
        .map(|(name, raw)| {
            let redacted = envvars::is_secret_name(&name);
            let lossy = raw.to_str().is_none();
            let value = if redacted {
                REDACTED.to_string()
            } else {
                raw.to_string_lossy().into_owned()
            };
            let category = envvars::category_of(&name).unwrap_or(Category::Tool);
            EnvValue {
                name,
                value,
                category,
                redacted,
                lossy,
            }
        })
        .collect();
    Environment { variables }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_at_the_source() {
        let env = Env::from_pairs([
            ("NCCL_SOCKET_TOKEN", "hunter2"),
            ("CUDA_LAUNCH_BLOCKING", "1"),
        ]);
        let e = probe(&env);
        assert_eq!(e.value("NCCL_SOCKET_TOKEN"), Some(REDACTED));
        assert_eq!(e.value("CUDA_LAUNCH_BLOCKING"), Some("1"));
    }
}
