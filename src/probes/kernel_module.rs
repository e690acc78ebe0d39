//! Probe: the NVIDIA kernel driver — /proc/driver/nvidia/version, the loaded
//! modules that matter for NVIDIA GPUs, /sys/module/nvidia/version, and the
//! GPUs the driver registered under /proc/driver/nvidia/gpus.

use std::path::{Path, PathBuf};

use crate::fact::{Fact, MissingReason};
use crate::facts::kernel_module::{
    DriverGpu, KernelModule, LoadedModule, NvrmVersion, CONFLICTING_DRIVERS, DRIVER_GPUS_DIR,
    MODULES_FILE, PASSTHROUGH_DRIVERS, SYS_VERSION_FILE, VERSION_FILE,
};
use crate::fsys::HostFs;

/// The modules recorded from /proc/modules: every `nvidia*` module, the drivers that
/// compete for NVIDIA GPUs, and nova_drm (built on nova_core).
fn of_interest(name: &str) -> bool {
    name.starts_with("nvidia")
        || CONFLICTING_DRIVERS.contains(&name)
        || PASSTHROUGH_DRIVERS.contains(&name)
        || name == "nova_drm"
        // The GPUDirect RDMA module of MLNX_OFED's era (nvidia_peermem replaced it).
        || name == "nv_peer_mem"
}

pub fn probe(fs: &HostFs) -> KernelModule {
    KernelModule {
        version_file: version_file(fs),
        modules: modules(fs),
        sys_version: sys_version(fs),
        gpus: driver_gpus(fs),
    }
}

fn version_file(fs: &HostFs) -> Fact<NvrmVersion> {
    match fs.read_text_limited(Path::new(VERSION_FILE), 64 * 1024) {
        Ok(f) if f.binary => {
            Fact::missing(VERSION_FILE, MissingReason::Malformed, "binary content")
        }
        Ok(f) => match parse_nvrm_version(&f.text) {
            Some(v) => Fact::value(VERSION_FILE, v),
            None => Fact::missing(
                VERSION_FILE,
                MissingReason::Malformed,
                format!(
                    "no 'NVRM version:' line with a version number (first line: {:?})",
                    first_line(&f.text)
                ),
            ),
        },
        Err(e) => Fact::from_fs_error(&e),
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(120)
        .collect()
}

/// Parses `NVRM version: NVIDIA UNIX [Open ]Kernel Module [for ]ARCH  VERSION  …`.
pub fn parse_nvrm_version(text: &str) -> Option<NvrmVersion> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("NVRM version:"))?;
    let after = line.split_once("Module")?.1;
    let tokens: Vec<&str> = after.split_whitespace().collect();
    let vpos = tokens.iter().position(|t| is_version_number(t))?;
    let version = tokens[vpos].to_string();
    let arch = tokens[..vpos]
        .iter()
        .rev()
        .find(|t| **t != "for")
        .map(|s| s.to_string())
        .or_else(|| {
            line.split_whitespace()
                .find(|t| ["x86_64", "aarch64", "ppc64le"].contains(t))
                .map(str::to_string)
        });
    let rest: Vec<&str> = tokens[vpos + 1..].to_vec();
    let build_date = rest
        .iter()
        .position(|t| ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].contains(t))
        .map(|p| rest[p..].join(" "));
    let compiler = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("GCC version:"))
        .map(|s| s.trim().to_string());
    let flavor = if line.contains("Open Kernel Module") {
        "open"
    } else {
        "proprietary"
    };
    let major: u32 = version.split('.').next()?.parse().ok()?;
    Some(NvrmVersion {
        raw: line.trim().to_string(),
        version,
        flavor: flavor.to_string(),
        arch,
        build_date,
        compiler,
        // Desktop/datacenter branches are ≥ 100; L4T releases are 2-digit (e.g. 34.1.1).
        l4t: major < 100,
    })
}

fn is_version_number(t: &str) -> bool {
    let parts: Vec<&str> = t.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn modules(fs: &HostFs) -> Fact<Vec<LoadedModule>> {
    match fs.read_text(Path::new(MODULES_FILE)) {
        Ok(f) if f.binary => {
            Fact::missing(MODULES_FILE, MissingReason::Malformed, "binary content")
        }
        Ok(f) => Fact::value(MODULES_FILE, parse_proc_modules(&f.text)),
        Err(e) => Fact::from_fs_error(&e),
    }
}

/// Keeps the modules of interest from `/proc/modules` (`name size refcount deps state offset`).
pub fn parse_proc_modules(text: &str) -> Vec<LoadedModule> {
    let mut out = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(&name) = fields.first() else {
            continue;
        };
        if !of_interest(name) {
            continue;
        }
        let used_by = fields
            .get(3)
            .map(|d| {
                d.split(',')
                    .filter(|s| !s.is_empty() && *s != "-")
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        out.push(LoadedModule {
            name: name.to_string(),
            size: fields.get(1).and_then(|s| s.parse().ok()),
            refcount: fields.get(2).and_then(|s| s.parse().ok()),
            used_by,
            state: fields.get(4).map(|s| s.to_string()),
        });
    }
    out
}

fn sys_version(fs: &HostFs) -> Fact<String> {
    match fs.read_text_limited(Path::new(SYS_VERSION_FILE), 4096) {
        Ok(f) => match f.text.trim() {
            v if is_version_number(v) => Fact::value(SYS_VERSION_FILE, v.to_string()),
            other => Fact::missing(
                SYS_VERSION_FILE,
                MissingReason::Malformed,
                format!(
                    "not a version number: {:?}",
                    other.chars().take(60).collect::<String>()
                ),
            ),
        },
        Err(e) => Fact::from_fs_error(&e),
    }
}

fn driver_gpus(fs: &HostFs) -> Fact<Vec<DriverGpu>> {
    let dir = Path::new(DRIVER_GPUS_DIR);
    let names = match fs.read_dir(dir) {
        Ok(n) => n,
        Err(e) => return Fact::from_fs_error(&e),
    };
    let mut gpus = Vec::new();
    for name in names {
        let bus_id = name.to_string_lossy().into_owned();
        let path: PathBuf = dir.join(&name).join("information");
        let source = path.display().to_string();
        let info = fs.read_text_limited(&path, 64 * 1024).ok().map(|f| f.text);
        let field = |key: &str| -> Option<String> {
            info.as_deref()?.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        gpus.push(DriverGpu {
            bus_id,
            model: field("Model"),
            uuid: field("GPU UUID"),
            video_bios: field("Video BIOS"),
            device_minor: field("Device Minor").and_then(|m| m.parse().ok()),
            source,
        });
    }
    Fact::value(DRIVER_GPUS_DIR, gpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_nvidia_modules_and_those_that_compete_for_the_gpu() {
        for name in [
            "nvidia",
            "nvidia_uvm",
            "nvidia_vgpu_vfio",
            "nouveau",
            "nova_core",
            "nova_drm",
            "nvidiafb",
            "rivafb",
            "rivatv",
            "vfio_pci",
        ] {
            assert!(of_interest(name), "{name}");
        }
        for name in ["snd_hda_intel", "amdgpu", "vfio", "nova"] {
            assert!(!of_interest(name), "{name}");
        }
    }

    #[test]
    fn proprietary_and_open_version_lines() {
        let p = parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.216.03  Thu Apr  3 01:14:19 UTC 2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n").unwrap();
        assert_eq!(p.version, "535.216.03");
        assert_eq!(p.flavor, "proprietary");
        assert_eq!(p.arch.as_deref(), Some("x86_64"));
        assert_eq!(p.build_date.as_deref(), Some("Thu Apr 3 01:14:19 UTC 2025"));
        assert_eq!(
            p.compiler.as_deref(),
            Some("gcc version 12.2.0 (Debian 12.2.0-14)")
        );
        let o = parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22-I3-H04-03-1)  Sat Sep 20 00:47:16 UTC 2025\n").unwrap();
        assert_eq!(o.version, "580.95.05");
        assert_eq!(o.flavor, "open");
        assert_eq!(o.arch.as_deref(), Some("x86_64"));
        assert!(!o.l4t);
        let j = parse_nvrm_version("NVRM version: NVIDIA UNIX Kernel Module for aarch64  34.1.1  Release Build  (buildbrain@mobile-u64-5273-d7000)  Wed Mar  2 2022\n").unwrap();
        assert!(j.l4t);
        assert_eq!(j.arch.as_deref(), Some("aarch64"));
    }

    #[test]
    fn garbage_version_file() {
        assert!(parse_nvrm_version("").is_none());
        assert!(parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n").is_none());
        assert!(parse_nvrm_version("\u{0}\u{1}\u{2}").is_none());
    }

    #[test]
    fn proc_modules_keeps_gpu_modules() {
        let m = parse_proc_modules("nvidia_uvm 1531904 0 - Live 0x0000000000000000 (POE)\nnvidia 56823808 17 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\next4 1 1 - Live 0x0\nnouveau 2 0 - Live 0x0\n");
        let names: Vec<_> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["nvidia_uvm", "nvidia", "nouveau"]);
        assert_eq!(m[1].used_by, ["nvidia_uvm", "nvidia_modeset"]);
        assert_eq!(m[1].refcount, Some(17));
    }
}
