//! Probe: what a container's runtime handed it. The NVIDIA driver files bind-mounted from
//! the host (`/proc/self/mountinfo`), the device cgroup's rules, the pod it runs in. Which
//! runtime it is comes from the platform probe; this one says what that runtime gave.

use std::path::Path;

use crate::fact::{Fact, MissingReason};
use crate::facts::container::{ContainerView, DeviceCgroup, InjectedMount, MountKind};
use crate::fsys::{FsError, HostFs, TextFile};

/// `mountinfo`: /proc/self/mountinfo as the platform probe read it (it is read once).
pub fn probe(fs: &HostFs, mountinfo: &Result<TextFile, FsError>) -> ContainerView {
    ContainerView {
        nvidia_mounts: nvidia_mounts(mountinfo),
        device_cgroup: device_cgroup(fs),
        pod_namespace: pod_namespace(fs),
        apptainer_nv_libs: apptainer_libs(fs),
    }
}

pub const MOUNTINFO: &str = "/proc/self/mountinfo";

/// Large enough for a node with thousands of mounts (Kubernetes hosts with many pods).
pub const MOUNTINFO_LIMIT: u64 = 4 << 20;

fn nvidia_mounts(mountinfo: &Result<TextFile, FsError>) -> Fact<Vec<InjectedMount>> {
    match mountinfo {
        Ok(f) if f.binary => Fact::missing(MOUNTINFO, MissingReason::Malformed, "binary content"),
        Ok(f) => Fact::value(
            MOUNTINFO,
            f.text.lines().filter_map(parse_mountinfo_line).collect(),
        ),
        Err(e) => Fact::from_fs_error(e),
    }
}

/// One mountinfo line (proc(5)): `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS`;
/// Some when its mount point is an NVIDIA piece.
pub fn parse_mountinfo_line(line: &str) -> Option<InjectedMount> {
    let (left, right) = line.split_once(" - ")?;
    let mut l = left.split(' ');
    let root = unescape(l.nth(3)?);
    let point = unescape(l.next()?);
    let fstype = right.split(' ').next()?.to_string();
    let kind = classify(&point)?;
    Some(InjectedMount {
        path: point,
        source_path: root,
        fstype,
        kind,
    })
}

/// mountinfo escapes space, tab, newline and backslash as \ooo.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let oct = &bytes[i + 1..i + 4];
            if oct.iter().all(|b| (b'0'..=b'7').contains(b)) {
                let text = std::str::from_utf8(oct).unwrap_or("");
                if let Ok(v) = u8::from_str_radix(text, 8) {
                    out.push(v);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn classify(point: &str) -> Option<MountKind> {
    let name = point.rsplit('/').next().unwrap_or(point);
    if point.starts_with("/dev/nvidia") {
        return Some(MountKind::DeviceNode);
    }
    if point.starts_with("/proc/driver/nvidia") {
        return Some(MountKind::DriverProc);
    }
    if point.starts_with("/lib/firmware/nvidia") || point.starts_with("/usr/lib/firmware/nvidia") {
        return Some(MountKind::Firmware);
    }
    if point.starts_with("/run/nvidia-persistenced") || point.contains("nvidia-mps") {
        return Some(MountKind::Socket);
    }
    const LIBS: &[&str] = &[
        "libcuda.so",
        "libcudadebugger.so",
        "libnvidia-",
        "libnvcuvid.so",
        "libnvoptix.so",
        "libGLX_nvidia.so",
        "libEGL_nvidia.so",
        "libGLESv2_nvidia.so",
        "libGLESv1_CM_nvidia.so",
        "libvdpau_nvidia.so",
    ];
    if name.contains(".so") && LIBS.iter().any(|p| name.starts_with(p)) {
        return Some(MountKind::DriverLibrary);
    }
    const PROGRAMS: &[&str] = &[
        "nvidia-smi",
        "nvidia-debugdump",
        "nvidia-persistenced",
        "nvidia-cuda-mps-control",
        "nvidia-cuda-mps-server",
    ];
    if PROGRAMS.contains(&name) {
        return Some(MountKind::Program);
    }
    None
}

fn device_cgroup(fs: &HostFs) -> Fact<DeviceCgroup> {
    const V2: &str = "/sys/fs/cgroup/cgroup.controllers";
    const V1: &str = "/sys/fs/cgroup/devices/devices.list";
    match fs.read_text_limited(Path::new(V1), 1 << 20) {
        Ok(f) if !f.binary => {
            return Fact::value(
                V1,
                DeviceCgroup {
                    version: 1,
                    rules: f
                        .text
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(str::to_string)
                        .collect(),
                },
            )
        }
        Ok(_) => return Fact::missing(V1, MissingReason::Malformed, "binary content"),
        Err(_) => {}
    }
    if fs.exists(Path::new(V2)) {
        return Fact::missing(
            V2,
            MissingReason::NotFound,
            "cgroup v2: device access is an eBPF program attached to the cgroup, which cannot be read from inside it",
        );
    }
    Fact::missing(
        V1,
        MissingReason::NotFound,
        "no device cgroup is mounted here",
    )
}

fn pod_namespace(fs: &HostFs) -> Option<Fact<String>> {
    const NS: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
    match fs.read_text_limited(Path::new(NS), 4096) {
        Ok(f) if !f.binary && !f.text.trim().is_empty() => {
            Some(Fact::value(NS, f.text.trim().to_string()))
        }
        _ => None,
    }
}

fn apptainer_libs(fs: &HostFs) -> Vec<String> {
    const DIR: &str = "/.singularity.d/libs";
    let mut names: Vec<String> = fs
        .read_dir(Path::new(DIR))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|n| n.into_string().ok())
        .filter(|n| classify(&format!("/{n}")) == Some(MountKind::DriverLibrary))
        .map(|n| format!("{DIR}/{n}"))
        .collect();
    names.sort();
    names.truncate(200);
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_libraries_bind_mounted_by_the_nvidia_runtime_are_found() {
        // Lines from `docker run --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 cat /proc/self/mountinfo`.
        let lib = "1041 1023 259:2 /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro";
        let m = parse_mountinfo_line(lib).unwrap();
        assert_eq!(m.kind, MountKind::DriverLibrary);
        assert_eq!(m.path, "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15");
        assert_eq!(m.fstype, "ext4");
        let smi = "1036 1023 259:2 /usr/bin/nvidia-smi /usr/bin/nvidia-smi ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p2 rw";
        assert_eq!(parse_mountinfo_line(smi).unwrap().kind, MountKind::Program);
        let proc_ = "1050 1026 0:22 /driver/nvidia/gpus/0000:01:00.0 /proc/driver/nvidia/gpus/0000:01:00.0 ro,nosuid,nodev,noexec master:13 - proc proc rw";
        assert_eq!(
            parse_mountinfo_line(proc_).unwrap().kind,
            MountKind::DriverProc
        );
        let plain = "1023 1004 0:120 / / rw,relatime master:552 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/X";
        assert!(parse_mountinfo_line(plain).is_none());
        assert!(parse_mountinfo_line("garbage").is_none());
        assert!(parse_mountinfo_line("1 2 3 - x").is_none());
    }

    #[test]
    fn escaped_mount_points_are_decoded() {
        let l = "1 2 0:1 /a\\040b /usr/lib/libnvidia-ml.so.1 ro - ext4 /dev/x rw";
        assert_eq!(parse_mountinfo_line(l).unwrap().source_path, "/a b");
        assert_eq!(unescape("x\\"), "x\\");
        assert_eq!(unescape("x\\04"), "x\\04");
    }

    #[test]
    fn cgroup_v1_rules_decide_access_to_a_node() {
        let docker_default = DeviceCgroup {
            version: 1,
            rules: vec![
                "c 1:5 rwm".into(),
                "c 136:* rwm".into(),
                "c 195:0 rw".into(),
            ],
        };
        assert!(docker_default.allows(195, 0));
        assert!(!docker_default.allows(195, 255));
        let all = DeviceCgroup {
            version: 1,
            rules: vec!["a *:* rwm".into()],
        };
        assert!(all.allows(195, 255));
        let read_only = DeviceCgroup {
            version: 1,
            rules: vec!["c 195:* r".into(), "b 195:* rwm".into(), "junk".into()],
        };
        assert!(!read_only.allows(195, 0));
    }
}
