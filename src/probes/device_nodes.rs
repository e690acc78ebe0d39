//! Probe: the NVIDIA device nodes (/dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm,
//! /dev/nvidia-uvm-tools, /dev/nvidia-modeset, /dev/nvidia-caps/*, WSL's /dev/dxg):
//! present, type, mode, owner, group, and whether the judged user can open them read+write.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use crate::facts::device_nodes::{is_gpu_node_name, Access, DeviceNode, DeviceNodes};
use crate::facts::identity::Identity;
use crate::fsys::{FsErrorKind, HostFs};
use crate::probes::identity::Accounts;

/// Nodes CUDA needs on every Linux host; reported even when missing.
pub const REQUIRED_NODES: &[&str] = &["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"];

pub fn probe(fs: &HostFs, identity: Option<&Identity>, accounts: &Accounts) -> DeviceNodes {
    let mut paths: Vec<String> = REQUIRED_NODES.iter().map(|s| s.to_string()).collect();
    let mut listing_error = None;
    match fs.read_dir(Path::new("/dev")) {
        Ok(names) => {
            for name in names {
                let name = name.to_string_lossy();
                if is_gpu_node_name(&name) || name == "nvidia-modeset" || name == "dxg" {
                    paths.push(format!("/dev/{name}"));
                }
            }
        }
        Err(e) => listing_error = Some(e.to_string()),
    }
    if let Ok(caps) = fs.read_dir(Path::new("/dev/nvidia-caps")) {
        paths.extend(
            caps.iter()
                .map(|c| format!("/dev/nvidia-caps/{}", c.to_string_lossy())),
        );
    }
    paths.sort_by_key(|p| node_sort_key(p));
    paths.dedup();
    let nodes = paths
        .into_iter()
        .map(|p| inspect(fs, &p, identity, accounts))
        .collect();
    DeviceNodes {
        nodes,
        listing_error,
    }
}

/// Orders nvidiactl, nvidia0, nvidia1, …, nvidia10 numerically, then the rest by name.
fn node_sort_key(path: &str) -> (u8, u64, String) {
    let name = path.trim_start_matches("/dev/");
    if name == "nvidiactl" {
        return (0, 0, String::new());
    }
    if is_gpu_node_name(name) {
        return (1, name[6..].parse().unwrap_or(u64::MAX), String::new());
    }
    (2, 0, name.to_string())
}

fn inspect(
    fs: &HostFs,
    path: &str,
    identity: Option<&Identity>,
    accounts: &Accounts,
) -> DeviceNode {
    let mut node = DeviceNode {
        path: path.to_string(),
        present: false,
        kind: None,
        mode: None,
        uid: None,
        gid: None,
        owner: None,
        group: None,
        major: None,
        minor: None,
        access: None,
        error: None,
    };
    let meta = match fs.metadata(Path::new(path)) {
        Ok(m) => m,
        Err(e) if e.kind == FsErrorKind::NotFound => return node,
        Err(e) => {
            node.error = Some(e.to_string());
            return node;
        }
    };
    let ft = meta.file_type();
    node.present = true;
    node.kind = Some(
        if ft.is_char_device() {
            "char_device"
        } else if ft.is_file() {
            "regular_file"
        } else if ft.is_dir() {
            "directory"
        } else {
            "other"
        }
        .to_string(),
    );
    node.mode = Some(format!("{:04o}", meta.mode() & 0o7777));
    node.uid = Some(meta.uid());
    node.gid = Some(meta.gid());
    node.owner = accounts.user_name(meta.uid()).map(str::to_string);
    node.group = accounts.group_name(meta.gid()).map(str::to_string);
    if ft.is_char_device() {
        let rdev = meta.rdev();
        node.major = Some(rustix::fs::major(rdev));
        node.minor = Some(rustix::fs::minor(rdev));
    }
    if !ft.is_dir() {
        node.access = identity.map(|id| judge_access(fs, path, &meta, id));
    }
    node
}

fn judge_access(fs: &HostFs, path: &str, meta: &std::fs::Metadata, id: &Identity) -> Access {
    if id.is_process && fs.root().is_none() {
        if let Ok(c) = CString::new(Path::new(path).as_os_str().as_bytes()) {
            let rc = rustix::fs::accessat(
                rustix::fs::CWD,
                c.as_c_str(),
                rustix::fs::Access::READ_OK | rustix::fs::Access::WRITE_OK,
                rustix::fs::AtFlags::EACCESS,
            );
            return Access {
                read_write: rc.is_ok(),
                method: "access(2)".into(),
                detail: match rc {
                    Ok(()) => "the kernel grants read+write to this process".into(),
                    Err(e) => format!(
                        "the kernel refuses read+write to this process: {}",
                        std::io::Error::from(e)
                    ),
                },
            };
        }
    }
    mode_bits_access(meta.mode(), meta.uid(), meta.gid(), id)
}

/// Unmapped ids show up as the overflow id inside a user namespace.
const OVERFLOW_ID: u32 = 65534;

pub fn mode_bits_access(mode: u32, uid: u32, gid: u32, id: &Identity) -> Access {
    let who = id
        .user_name
        .clone()
        .unwrap_or_else(|| format!("uid {}", id.uid));
    // Root overrides permission bits, except in a user namespace on files whose
    // owner is not mapped into it (rootless containers).
    let unmapped = id.in_user_namespace == Some(true) && (uid == OVERFLOW_ID || gid == OVERFLOW_ID);
    if id.uid == 0 && !unmapped {
        return Access {
            read_write: true,
            method: "mode bits".into(),
            detail: format!("{who} is root"),
        };
    }
    let (bits, class) = if id.uid == uid {
        ((mode >> 6) & 0o7, "owner")
    } else if id.groups.contains(&gid) {
        ((mode >> 3) & 0o7, "group")
    } else {
        (mode & 0o7, "other")
    };
    let ok = bits & 0o6 == 0o6;
    Access {
        read_write: ok,
        method: "mode bits".into(),
        detail: format!(
            "{who} is judged as {class} (mode {:04o}): {}",
            mode & 0o7777,
            if ok { "read+write" } else { "no read+write" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ident(uid: u32, groups: &[u32]) -> Identity {
        Identity {
            uid,
            gid: 100,
            groups: groups.to_vec(),
            user_name: Some("alice".into()),
            source: String::new(),
            is_process: false,
            in_user_namespace: Some(false),
        }
    }

    #[test]
    fn group_and_other_bits() {
        assert!(!mode_bits_access(0o20660, 0, 44, &ident(1000, &[100])).read_write);
        assert!(mode_bits_access(0o20660, 0, 44, &ident(1000, &[44, 100])).read_write);
        assert!(mode_bits_access(0o20666, 0, 0, &ident(1000, &[100])).read_write);
        assert!(mode_bits_access(0o20600, 0, 0, &ident(0, &[0])).read_write);
    }

    #[test]
    fn rootless_root_is_not_all_powerful() {
        let mut id = ident(0, &[0]);
        id.in_user_namespace = Some(true);
        assert!(!mode_bits_access(0o20660, OVERFLOW_ID, OVERFLOW_ID, &id).read_write);
    }

    #[test]
    fn gpu_node_names() {
        assert!(is_gpu_node_name("nvidia0"));
        assert!(is_gpu_node_name("nvidia15"));
        assert!(!is_gpu_node_name("nvidiactl"));
        assert!(!is_gpu_node_name("nvidia-uvm"));
        assert!(!is_gpu_node_name("nvidia"));
    }
}
