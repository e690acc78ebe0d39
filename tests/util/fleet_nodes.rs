//! Node reports as a Slurm or Kubernetes run writes them (`check --format json --output
//! DIR/{host}.json` on fake nodes), and a small fleet of them, for the fleet views' tests.

use std::path::Path;

use super::fake_nvml::{self, FakeNvml, FAKE_NVML_ENV};
use super::gpu_node::hgx;
use super::{run, FakeRoot, Run};

/// Writes one node's report into `dir` the way a Slurm or Kubernetes run would, and
/// returns what `check` printed on stdout.
pub fn node_report(
    dir: &Path,
    name: &str,
    root: &FakeRoot,
    nvml: Option<&FakeNvml>,
    env: &[(&str, &str)],
) -> Run {
    root.file("etc/hostname", &format!("{name}\n"))
        .file("etc/machine-id", &format!("{}\n", machine_id(name)));
    let cfg_dir = tempfile::tempdir().unwrap();
    let mut c = root.cmd();
    c.args(["check", "--format", "json", "--output"])
        .arg(dir.join("{host}.json"));
    if let Some(nvml) = nvml {
        c.arg("--nvml-lib")
            .arg(fake_nvml::fake_nvml_lib())
            .env(FAKE_NVML_ENV, nvml.write(cfg_dir.path()));
    }
    for (k, v) in env {
        c.env(k, v);
    }
    run(&mut c)
}

/// A distinct, valid /etc/machine-id per node name.
pub fn machine_id(name: &str) -> String {
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!("{h:016x}{:016x}", h.rotate_left(17))
}

/// Nine nodes: five healthy 8×H100 nodes, one on an older driver, one with a GPU
/// missing, one without nvidia_uvm, and two RTX 4090 workstations.
pub fn build_fleet(dir: &Path) {
    for i in 1..=5 {
        let r = node_report(
            dir,
            &format!("node{i:03}"),
            &FakeRoot::healthy(8),
            Some(&hgx(8)),
            &[],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    // An older driver: the kernel module and NVML both say 550.
    let old = FakeRoot::healthy(8);
    old.nvidia_version("550.127.05").driver_libs("550.127.05");
    let mut nvml = hgx(8);
    nvml.system.driver_version = Some("550.127.05".into());
    nvml.system.cuda_driver_version = Some(12040);
    node_report(dir, "node006", &old, Some(&nvml), &[]);
    // A GPU fell off: seven of eight.
    node_report(dir, "node007", &FakeRoot::healthy(7), Some(&hgx(7)), &[]);
    // nvidia_uvm not loaded (GD006).
    let broken = FakeRoot::healthy(8);
    broken.modules(&["nvidia_drm", "nvidia_modeset", "nvidia"]);
    node_report(dir, "node010", &broken, Some(&hgx(8)), &[]);
    for name in ["ws1", "ws2"] {
        let ws = FakeRoot::healthy(1);
        node_report(dir, name, &ws, Some(&FakeNvml::consumer_rtx4090()), &[]);
    }
}
