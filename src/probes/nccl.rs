//! Probe: what NCCL's environment variables can name on this machine — the IP interfaces
//! (/sys/class/net, the network namespace's own: a container's inside a container), the
//! RDMA devices and their ports (/sys/class/infiniband), and whether the GPUDirect RDMA
//! module is there (/sys/module/nvidia_peermem or the legacy nv_peer_mem; /proc/modules
//! is read by the kernel_module probe).

use std::path::Path;

use crate::fact::Fact;
use crate::facts::nccl::{
    IbDevice, IbPort, NcclHost, INFINIBAND_DIR, NET_DIR, PEERMEM_MODULES, SYS_MODULE_DIR,
};
use crate::fsys::HostFs;

/// Bounds on what a (possibly hostile) tree can make the probe read.
const MAX_ENTRIES: usize = 4096;
const MAX_PORTS: usize = 64;

pub fn probe(fs: &HostFs) -> NcclHost {
    NcclHost {
        net_interfaces: names(fs, NET_DIR),
        ib_devices: ib_devices(fs),
        peermem_sysfs: match fs.read_dir(Path::new(SYS_MODULE_DIR)) {
            Ok(entries) => Fact::value(
                SYS_MODULE_DIR,
                PEERMEM_MODULES
                    .iter()
                    .filter(|m| entries.iter().any(|e| e.to_str() == Some(m)))
                    .map(|m| m.to_string())
                    .collect(),
            ),
            Err(e) => Fact::from_fs_error(&e),
        },
    }
}

/// Entry names of `dir`, bounded.
fn names(fs: &HostFs, dir: &str) -> Fact<Vec<String>> {
    match fs.read_dir(Path::new(dir)) {
        Ok(entries) => Fact::value(
            dir,
            entries
                .iter()
                .take(MAX_ENTRIES)
                .map(|e| e.to_string_lossy().into_owned())
                .collect(),
        ),
        Err(e) => Fact::from_fs_error(&e),
    }
}

fn ib_devices(fs: &HostFs) -> Fact<Vec<IbDevice>> {
    let devices: Vec<String> = match fs.read_dir(Path::new(INFINIBAND_DIR)) {
        Ok(entries) => entries
            .iter()
            .take(MAX_ENTRIES)
            .map(|e| e.to_string_lossy().into_owned())
            .collect(),
        // No RDMA stack: no devices.
        Err(e) if e.kind == crate::fsys::FsErrorKind::NotFound => Vec::new(),
        Err(e) => return Fact::from_fs_error(&e),
    };
    let read = |p: &str| {
        fs.read_text_limited(Path::new(p), 256)
            .ok()
            .map(|t| t.text.trim().to_string())
            .filter(|t| !t.is_empty())
    };
    let out = devices
        .iter()
        .map(|name| {
            let dir = format!("{INFINIBAND_DIR}/{name}/ports");
            let mut ports: Vec<IbPort> = fs
                .read_dir(Path::new(&dir))
                .map(|ps| {
                    ps.iter()
                        .filter_map(|p| p.to_str()?.parse::<u32>().ok())
                        .take(MAX_PORTS)
                        .map(|number| IbPort {
                            number,
                            state: read(&format!("{dir}/{number}/state")),
                            link_layer: read(&format!("{dir}/{number}/link_layer")),
                        })
                        .collect()
                })
                .unwrap_or_default();
            ports.sort_by_key(|p| p.number);
            let driver = fs
                .read_link(Path::new(&format!("{INFINIBAND_DIR}/{name}/device/driver")))
                .ok()
                .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()));
            IbDevice {
                name: name.clone(),
                driver,
                ports,
            }
        })
        .collect();
    Fact::value(INFINIBAND_DIR, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_interfaces_hcas_ports_and_peermem_under_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in [
            "sys/class/net/eth0",
            "sys/class/net/lo",
            "sys/class/infiniband/mlx5_0/ports/1",
            "sys/class/infiniband/mlx5_0/ports/2",
            "sys/module/nvidia_peermem",
            "sys/module/nvidia",
        ] {
            std::fs::create_dir_all(root.join(p)).unwrap();
        }
        std::fs::write(
            root.join("sys/class/infiniband/mlx5_0/ports/1/state"),
            "4: ACTIVE\n",
        )
        .unwrap();
        std::fs::write(
            root.join("sys/class/infiniband/mlx5_0/ports/1/link_layer"),
            "InfiniBand\n",
        )
        .unwrap();
        let h = probe(&HostFs::new(Some(root.to_path_buf())));
        assert_eq!(h.net_interfaces.get().unwrap(), &vec!["eth0", "lo"]);
        let ib = h.ib_devices.get().unwrap();
        assert_eq!(ib[0].name, "mlx5_0");
        assert_eq!(ib[0].ports.len(), 2);
        assert!(ib[0].ports[0].active() && !ib[0].ports[1].active());
        assert_eq!(h.peermem_sysfs.get().unwrap(), &vec!["nvidia_peermem"]);
        // No RDMA stack at all: no devices, not a missing fact.
        let empty = tempfile::tempdir().unwrap();
        let h = probe(&HostFs::new(Some(empty.path().to_path_buf())));
        assert_eq!(h.ib_devices.get().map(Vec::len), Some(0));
        assert!(h.net_interfaces.get().is_none());
    }
}
