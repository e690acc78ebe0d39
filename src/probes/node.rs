//! Who and where a report is from: the host, a stable machine identifier (hashed, never the
//! raw /etc/machine-id), the scheduler context (Slurm, Kubernetes), the time and the
//! gpudoctor version. `gpudoctor fleet` groups node reports by it.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::envvars::{self, Env};
use crate::facts::node::{Kubernetes, Node, Slurm};
use crate::fsys::HostFs;

pub fn probe(fs: &HostFs, env: &Env) -> Node {
    let get = |v| {
        env.get_str(v)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let slurm = Slurm {
        job_id: get(envvars::SLURM_JOB_ID),
        job_name: get(envvars::SLURM_JOB_NAME),
        step_id: get(envvars::SLURM_STEP_ID),
        proc_id: get(envvars::SLURM_PROCID),
        node_name: get(envvars::SLURMD_NODENAME),
        cluster_name: get(envvars::SLURM_CLUSTER_NAME),
    };
    let slurm = (slurm != Slurm::default()).then_some(slurm);
    let kubernetes = Kubernetes {
        node_name: get(envvars::NODE_NAME),
        pod_name: get(envvars::POD_NAME),
        namespace: get(envvars::POD_NAMESPACE),
        in_pod: get(envvars::KUBERNETES_SERVICE_HOST).is_some(),
    };
    let kubernetes = (kubernetes != Kubernetes::default()).then_some(kubernetes);
    let hostname = hostname(fs);
    let name = slurm
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .or_else(|| kubernetes.as_ref().and_then(|k| k.node_name.clone()))
        .or_else(|| hostname.clone())
        .unwrap_or_else(|| "unknown".into());
    Node {
        name,
        hostname,
        machine_id: machine_id(fs),
        slurm,
        kubernetes,
        time: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        gpudoctor_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// The inspected system's /etc/hostname under --root; the running kernel's name otherwise.
fn hostname(fs: &HostFs) -> Option<String> {
    if fs.root().is_some() {
        return fs
            .read_text(Path::new("/etc/hostname"))
            .ok()
            .and_then(|f| f.text.lines().next().map(|l| l.trim().to_string()))
            .filter(|h| !h.is_empty() && !h.chars().any(char::is_control));
    }
    // gethostname(2) is uname(2)'s nodename.
    let uname = rustix::system::uname();
    let name = uname.nodename().to_string_lossy().trim().to_string();
    (!name.is_empty()).then_some(name)
}

fn machine_id(fs: &HostFs) -> Option<String> {
    let text = fs.read_text(Path::new("/etc/machine-id")).ok()?.text;
    let id = text.trim();
    // machine-id(5): 32 lowercase hex digits; "uninitialized" and empty files are not ids.
    if id.len() != 32 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let digest = Sha256::digest(format!("gpudoctor:{}", id.to_ascii_lowercase()).as_bytes());
    Some(digest[..16].iter().map(|b| format!("{b:02x}")).collect())
}

/// The longest `{host}`: HOST_NAME_MAX, and twice it still fits the writer's temp file
/// name in NAME_MAX (255 bytes).
const FILE_NAME_MAX: usize = 64;

/// A node name safe as a file name: `{host}` in --output. A longer name (an /etc/hostname
/// under --root can hold anything) is cut and ends in a hash of the whole name, so two
/// names that share their start still get two files.
pub fn file_name(name: &str) -> String {
    let safe = safe_chars(name);
    if safe.len() <= FILE_NAME_MAX {
        return safe;
    }
    let digest = Sha256::digest(name.as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    // ASCII only by now: any byte index is a character boundary.
    let kept = safe[..FILE_NAME_MAX - hash.len() - 1].trim_end_matches('.');
    format!("{kept}-{hash}")
}

fn safe_chars(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match cleaned.trim_matches('.') {
        "" => "unknown".into(),
        s => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_safe_file_names() {
        assert_eq!(file_name("node017"), "node017");
        assert_eq!(file_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(file_name(".."), "unknown");
        assert_eq!(file_name("gpu node/1"), "gpu_node_1");
    }

    #[test]
    fn long_names_are_cut_and_stay_apart() {
        let long = "n".repeat(300);
        let a = file_name(&format!("{long}a"));
        let b = file_name(&format!("{long}b"));
        assert_eq!(a.len(), FILE_NAME_MAX);
        assert!(a.starts_with("nnnnnnnn"), "{a}");
        assert_ne!(a, b);
        assert_eq!(
            file_name(&"x".repeat(FILE_NAME_MAX)),
            "x".repeat(FILE_NAME_MAX)
        );
    }
}
