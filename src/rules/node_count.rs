//! GD040: the driver's GPUs (NVML) and the /dev/nvidiaN nodes this process sees disagree:
//! a cgroup, device plugin or container runtime passed in fewer GPUs than exist, or left
//! stale nodes behind.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "node_count",
    codes: &[codes::GD040],
    views: &[super::View::Devices],
    checks: "the /dev/nvidiaN nodes match the GPUs NVML reports",
    judges: &[],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let (Some(sys), Some(nodes)) = (snap.nvml_system(), &snap.device_nodes) else {
        return Outcome::NotApplicable("NVML or the device_nodes probe did not answer".into());
    };
    let Some(nvml) = sys.device_count.get().map(|n| *n as usize) else {
        return Outcome::NotApplicable("NVML gave no device count".into());
    };
    let present = nodes.gpu_nodes().len();
    if present == nvml || snap.is_wsl() {
        return Outcome::Checked(vec![]);
    }
    // Containers often see all nodes but NVML only the granted GPUs, or the reverse.
    Outcome::Checked(vec![Finding::new(codes::GD040, Severity::Warning, format!("NVML reports {nvml} GPU(s) but {present} /dev/nvidiaN node(s) exist"))
        .detail("Each GPU the driver manages has a /dev/nvidiaN node. A mismatch means the process sees a different set than the driver: a container or Kubernetes device plugin passed in only some nodes, a cgroup device rule hides some, or nodes were left from a GPU that is gone. CUDA then fails on the GPUs it cannot open, or shows fewer than expected.")
        .evidence(Subject::GpuCount, format!("{nvml} GPU(s) in NVML"), "NVML")
        .evidence(Subject::GpuNodes, format!("{present} node(s) /dev/nvidia[0-9]*"), "/dev")
        .fix_text("In containers request the GPUs explicitly (--gpus all / nvidia.com/gpu limits); on hosts run sudo nvidia-modprobe -c N for missing nodes")])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::Field;
    use crate::testing::*;

    #[test]
    fn nodes_match_nvml() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn fewer_nodes_than_gpus_is_a_warning() {
        let mut s = healthy();
        remove_node(&mut s, "/dev/nvidia1");
        let f = only(run(&s), codes::GD040, Severity::Warning);
        assert!(
            f.title.contains("NVML reports 2 GPU(s) but 1"),
            "{}",
            f.title
        );
    }

    #[test]
    fn wsl_has_no_per_gpu_nodes() {
        let mut s = healthy();
        make_wsl(&mut s);
        remove_node(&mut s, "/dev/nvidia0");
        remove_node(&mut s, "/dev/nvidia1");
        assert_clean(run(&s));
    }

    #[test]
    fn not_applicable_without_nvml_nodes_or_count() {
        assert_na(run(&no_gpu()));
        let mut s = healthy();
        s.device_nodes = None;
        assert_na(run(&s));
        let mut s = healthy();
        nvml_sys(&mut s).device_count = Field::NotSupported;
        assert_na(run(&s));
    }
}
