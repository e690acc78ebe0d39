//! GD077: a node with NVIDIA GPUs and InfiniBand/RoCE HCAs but no GPUDirect RDMA module
//! (nvidia_peermem, or the legacy nv_peer_mem). NCCL then stages every inter-node transfer
//! through host memory.
//!
//! Sources: CUDA's GPUDirect RDMA guide, "Using nvidia-peermem"
//! (https://docs.nvidia.com/cuda/gpudirect-rdma/), the GPU Operator's "GPUDirect RDMA and
//! GPUDirect Storage" (DMA-BUF needs the open kernel modules and Linux 5.12 or later, and is
//! what NVIDIA recommends where supported), NCCL's NCCL_DMABUF_ENABLE (since 2.13, on by
//! default where the kernel and driver support it).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::nccl::PEERMEM_MODULES;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "nccl_peermem",
    codes: &[codes::GD077],
    views: &[],
    checks: "a node with InfiniBand/RoCE HCAs and NVIDIA GPUs has GPUDirect RDMA (nvidia_peermem or DMA-BUF)",
    judges: &[],
    run,
};

/// NVIDIA/Mellanox HCAs, the ones nvidia_peermem serves: it plugs into the peer-memory API
/// of MLNX_OFED / DOCA-OFED's mlx4/mlx5 drivers. Other RDMA devices (Intel irdma, Broadcom
/// bnxt_re, software rxe/siw, AWS EFA) register GPU memory through DMA-BUF or their own
/// path, if at all. By the PCI driver when sysfs shows it (rdma-core may rename devices),
/// else by the kernel's device name.
fn is_hca(d: &crate::facts::nccl::IbDevice) -> bool {
    match &d.driver {
        Some(driver) => driver.starts_with("mlx4") || driver.starts_with("mlx5"),
        None => d.name.starts_with("mlx4_") || d.name.starts_with("mlx5_"),
    }
}

/// "5.15.0-91-generic" → (5, 15).
fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(host) = &snap.nccl else {
        return Outcome::NotApplicable("the nccl probe did not run".into());
    };
    let Some(devices) = host.ib_devices.get() else {
        return Outcome::NotApplicable("/sys/class/infiniband could not be read".into());
    };
    let hcas: Vec<&str> = devices
        .iter()
        .filter(|d| is_hca(d))
        .map(|d| d.name.as_str())
        .collect();
    if hcas.is_empty() {
        return Outcome::NotApplicable("no InfiniBand/RoCE HCA here".into());
    }
    let gpus = snap.gpu_count().map(|c| c.count).unwrap_or(0);
    if gpus == 0 {
        return Outcome::NotApplicable("no NVIDIA GPU here".into());
    }
    let km = snap.kernel_module.as_ref();
    // /proc/modules is the host kernel's list, inside a container too.
    let in_proc = km.and_then(|k| k.modules.get()).map(|mods| {
        mods.iter()
            .any(|m| PEERMEM_MODULES.contains(&m.name.as_str()))
    });
    let in_sys = host.peermem_sysfs.get().map(|m| !m.is_empty());
    match (in_proc, in_sys) {
        (Some(true), _) | (_, Some(true)) => return Outcome::Checked(vec![]),
        (None, None) => {
            return Outcome::NotApplicable(
                "neither /proc/modules nor /sys/module could be read".into(),
            )
        }
        _ => {}
    }
    let open = km
        .and_then(|k| k.version_file.get())
        .is_some_and(|v| v.flavor == "open");
    let kernel = snap
        .platform
        .as_ref()
        .and_then(|p| p.kernel_release.get())
        .cloned();
    let dmabuf = open
        && kernel
            .as_deref()
            .and_then(kernel_version)
            .is_some_and(|v| v >= (5, 12));
    let listed = hcas.join(", ");
    let mut f = if dmabuf {
        Finding::new(codes::GD077, Severity::Info, format!("nvidia_peermem is not loaded; GPUDirect RDMA can use DMA-BUF here ({listed})"))
            .detail(format!("This node runs the open NVIDIA kernel modules on Linux {}, so NCCL 2.13 and later can register GPU memory with the HCAs through DMA-BUF (NCCL_DMABUF_ENABLE, on by default) without nvidia_peermem; NVIDIA recommends DMA-BUF where it is supported. The HCA driver (MLNX_OFED or the inbox mlx5 driver) must support it too: `NCCL_DEBUG=INFO` shows \"DMA-BUF is available\" and \"GPU Direct RDMA Enabled\" when it works.", kernel.as_deref().unwrap_or("?")))
    } else {
        Finding::new(codes::GD077, Severity::Warning, format!("GPUDirect RDMA is off: nvidia_peermem is not loaded on a node with HCAs ({listed})"))
            .detail("Without nvidia_peermem (or DMA-BUF, which needs the open NVIDIA kernel modules and Linux 5.12 or later) the HCAs cannot read or write GPU memory, so NCCL copies every inter-node transfer through host memory: lower bandwidth, higher latency and CPU load for multi-node jobs. NCCL_DEBUG=INFO shows \"NET/IB : GPU Direct RDMA Disabled\". Single-node jobs are not affected.")
            .fix_cmd("Load the GPUDirect RDMA module (it ships with the driver since R470 and needs the HCA driver of MLNX_OFED / DOCA-OFED: with the kernel's inbox mlx5 driver it fails with \"Unknown symbol ib_register_peer_memory_client\", and DMA-BUF is the way there)", "sudo modprobe nvidia-peermem")
            .fix_cmd("Load it at every boot", "echo nvidia-peermem | sudo tee /etc/modules-load.d/nvidia-peermem.conf")
    };
    f = f
        .evidence(
            Subject::module("nvidia_peermem"),
            "nvidia_peermem not loaded (nor nv_peer_mem)".to_string(),
            crate::facts::kernel_module::MODULES_FILE,
        )
        .evidence(
            Subject::Environment,
            format!("RDMA devices: {listed}"),
            crate::facts::nccl::INFINIBAND_DIR,
        );
    if snap.place().is_contained() {
        f = f.context(
            "the module list is the host kernel's; only the host can load a module",
            "gpudoctor",
        );
    }
    super::fit_fixes::fit(snap.place(), &mut f);
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;
    use crate::facts::nccl::{IbDevice, INFINIBAND_DIR};
    use crate::testing::*;

    fn with_hca(s: &mut Snapshot) {
        s.nccl.as_mut().unwrap().ib_devices = Fact::value(
            INFINIBAND_DIR,
            vec![IbDevice {
                name: "mlx5_0".into(),
                driver: Some("mlx5_core".into()),
                ports: Vec::new(),
            }],
        );
    }

    #[test]
    fn no_hca_or_no_gpu_is_not_applicable() {
        assert_na(run(&healthy()));
        let mut s = no_gpu();
        with_hca(&mut s);
        assert_na(run(&s));
    }

    #[test]
    fn hcas_without_peermem_are_a_warning_with_the_host_fix() {
        let mut s = healthy();
        with_hca(&mut s);
        let f = only(run(&s), codes::GD077, Severity::Warning);
        assert_eq!(first_cmd(&f), "sudo modprobe nvidia-peermem");
        assert!(fixes_mention(&f, "/etc/modules-load.d/nvidia-peermem.conf"));
        // In a container the fix is the host's.
        in_container(&mut s, "docker");
        let f = only(run(&s), codes::GD077, Severity::Warning);
        assert!(f.fix.iter().all(|x| x.command.is_none()), "{:?}", f.fix);
        assert!(fixes_mention(&f, "On the host"));
    }

    #[test]
    fn only_mellanox_hcas_are_held_to_nvidia_peermem() {
        // Intel's irdma (E810) and Broadcom's bnxt_re cannot use nvidia_peermem; a renamed
        // mlx5 device is still one, by its PCI driver.
        for (name, driver, judged) in [
            ("irdma0", Some("ice"), false),
            ("bnxt_re0", Some("bnxt_en"), false),
            ("rocep59s0f0", Some("mlx5_core"), true),
            ("mlx5_0", None, true),
            ("rxe0", None, false),
        ] {
            let mut s = healthy();
            s.nccl.as_mut().unwrap().ib_devices = Fact::value(
                INFINIBAND_DIR,
                vec![IbDevice {
                    name: name.into(),
                    driver: driver.map(String::from),
                    ports: Vec::new(),
                }],
            );
            if judged {
                only(run(&s), codes::GD077, Severity::Warning);
            } else {
                assert_na(run(&s));
            }
        }
    }

    #[test]
    fn peermem_or_the_legacy_module_is_clean() {
        for name in ["nvidia_peermem", "nv_peer_mem"] {
            let mut s = healthy();
            with_hca(&mut s);
            let km = kernel_module_mut(&mut s);
            let mut mods = km.modules.get().unwrap().clone();
            mods.push(crate::facts::kernel_module::LoadedModule {
                name: name.into(),
                size: None,
                refcount: None,
                used_by: Vec::new(),
                state: None,
            });
            km.modules = Fact::value(crate::facts::kernel_module::MODULES_FILE, mods);
            assert_clean(run(&s));
        }
        let mut s = healthy();
        with_hca(&mut s);
        s.nccl.as_mut().unwrap().peermem_sysfs =
            Fact::value("/sys/module", vec!["nvidia_peermem".into()]);
        assert_clean(run(&s));
    }

    #[test]
    fn open_modules_on_a_new_kernel_can_use_dmabuf() {
        let mut s = healthy();
        with_hca(&mut s);
        let km = kernel_module_mut(&mut s);
        let mut v = km.version_file.get().unwrap().clone();
        v.flavor = "open".into();
        km.version_file = Fact::value(crate::facts::kernel_module::VERSION_FILE, v);
        s.platform.as_mut().unwrap().kernel_release =
            Fact::value("uname", "6.8.0-45-generic".to_string());
        let f = only(run(&s), codes::GD077, Severity::Info);
        assert!(f.detail.contains("DMA-BUF"), "{}", f.detail);
        s.platform.as_mut().unwrap().kernel_release = Fact::value("uname", "5.4.0-1".to_string());
        only(run(&s), codes::GD077, Severity::Warning);
        assert_eq!(kernel_version("5.15.0-91-generic"), Some((5, 15)));
    }
}
