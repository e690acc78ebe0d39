//! Probe: operating system, kernel, CPU architecture, container and WSL.

use std::path::Path;

use crate::envvars::{self, Env};
use crate::fact::{Fact, MissingReason};
use crate::facts::platform::{Container, Hint, OsRelease, Platform, Wsl};
use crate::fsys::HostFs;

pub fn probe(fs: &HostFs, env: &Env) -> Platform {
    let proc_version = fs
        .read_text(Path::new("/proc/version"))
        .ok()
        .map(|f| f.text);
    Platform {
        os: os_release(fs),
        kernel_release: kernel_release(fs),
        arch: arch(fs),
        container: container(fs, env),
        wsl: wsl(fs, proc_version.as_deref()),
        shm_kib: Some(shm(fs)),
        virtual_machine: virtual_machine(fs),
    }
}

/// DMI vendors and products of common hypervisors (lower case).
const HYPERVISOR_DMI: &[&str] = &[
    "kvm",
    "qemu",
    "vmware",
    "virtualbox",
    "xen",
    "microsoft corporation",
    "amazon ec2",
    "google compute engine",
    "openstack",
    "bochs",
    "parallels",
];

/// The hypervisor flag in /proc/cpuinfo and hypervisor names in DMI; GPU passthrough and
/// vGPU fail in their own ways, so the rules say which.
fn virtual_machine(fs: &HostFs) -> Vec<Hint> {
    let mut hints = Vec::new();
    if let Ok(f) = fs.read_text_limited(Path::new("/proc/cpuinfo"), 1 << 20) {
        let flagged = f
            .text
            .lines()
            .any(|l| l.starts_with("flags") && l.split_whitespace().any(|w| w == "hypervisor"));
        if flagged {
            hints.push(Hint {
                kind: "cpu flag hypervisor".into(),
                source: "/proc/cpuinfo".into(),
            });
        }
    }
    for path in [
        "/sys/class/dmi/id/sys_vendor",
        "/sys/class/dmi/id/product_name",
    ] {
        if let Ok(f) = fs.read_text_limited(Path::new(path), 4096) {
            let v = f.text.trim().to_ascii_lowercase();
            if let Some(h) = HYPERVISOR_DMI.iter().find(|h| v.contains(**h)) {
                hints.push(Hint {
                    kind: format!("DMI {h}"),
                    source: path.into(),
                });
            }
        }
    }
    hints
}

pub(crate) fn os_release(fs: &HostFs) -> Fact<OsRelease> {
    let mut last = None;
    for path in ["/etc/os-release", "/usr/lib/os-release"] {
        match fs.read_text(Path::new(path)) {
            Ok(f) if f.binary => {
                return Fact::missing(
                    path,
                    MissingReason::Malformed,
                    "binary content, not os-release text",
                )
            }
            Ok(f) => match parse_os_release(&f.text) {
                Some(os) => return Fact::value(path, os),
                None => {
                    return Fact::missing(
                        path,
                        MissingReason::Malformed,
                        "no NAME or PRETTY_NAME line",
                    )
                }
            },
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => Fact::from_fs_error(&e),
        None => Fact::missing("/etc/os-release", MissingReason::NotFound, "not found"),
    }
}

/// `/dev/shm`'s tmpfs `size=` from /proc/mounts (`65536k`, `1g`, `64m`).
fn shm(fs: &HostFs) -> Fact<u64> {
    const MOUNTS: &str = "/proc/mounts";
    let text = match fs.read_text(Path::new(MOUNTS)) {
        Ok(f) => f.text,
        Err(e) => return Fact::from_fs_error(&e),
    };
    let line = text
        .lines()
        .rev()
        .find(|l| l.split_whitespace().nth(1) == Some("/dev/shm"));
    let Some(line) = line else {
        return Fact::missing(
            MOUNTS,
            MissingReason::NotFound,
            "/dev/shm is not a separate mount",
        );
    };
    let size = line
        .split_whitespace()
        .nth(3)
        .and_then(|opts| opts.split(',').find_map(|o| o.strip_prefix("size=")))
        .and_then(parse_size_kib);
    match size {
        Some(k) => Fact::value(MOUNTS, k),
        None => Fact::missing(
            MOUNTS,
            MissingReason::Malformed,
            format!("no size= in {line:?}"),
        ),
    }
}

/// tmpfs sizes: a number with an optional k/m/g suffix (bytes without one).
pub fn parse_size_kib(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()?.to_ascii_lowercase() {
        'k' => (&s[..s.len() - 1], 1),
        'm' => (&s[..s.len() - 1], 1024),
        'g' => (&s[..s.len() - 1], 1024 * 1024),
        _ => return s.parse::<u64>().ok().map(|b| b / 1024),
    };
    num.parse::<u64>().ok()?.checked_mul(mul)
}

pub fn parse_os_release(text: &str) -> Option<OsRelease> {
    let mut id = None;
    let mut version_id = None;
    let mut pretty = None;
    let mut name = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value
            .trim()
            .trim_matches('"')
            .trim_matches('\'')
            .to_string();
        match key.trim() {
            "ID" => id = Some(value),
            "VERSION_ID" => version_id = Some(value),
            "PRETTY_NAME" => pretty = Some(value),
            "NAME" => name = Some(value),
            _ => {}
        }
    }
    let pretty_name = pretty.or(name)?;
    Some(OsRelease {
        id,
        version_id,
        pretty_name,
    })
}

fn kernel_release(fs: &HostFs) -> Fact<String> {
    if fs.root().is_none() {
        if let Some(u) = uname() {
            return Fact::value("uname(2)", u.0);
        }
    }
    read_one_line(fs, "/proc/sys/kernel/osrelease")
}

fn arch(fs: &HostFs) -> Fact<String> {
    if fs.root().is_none() {
        if let Some(u) = uname() {
            return Fact::value("uname(2)", u.1);
        }
    }
    let from_proc = read_one_line(fs, "/proc/sys/kernel/arch");
    if from_proc.get().is_some() {
        return from_proc;
    }
    // An image root without /proc: the architecture its shell was built for.
    match fs.read_bytes(Path::new("/bin/sh"), 64) {
        Ok(bytes) => match elf_machine(&bytes) {
            Some(m) => Fact::value("/bin/sh (ELF header)", m.to_string()),
            None => Fact::missing(
                "/bin/sh",
                MissingReason::Malformed,
                "not an ELF file of a known architecture",
            ),
        },
        Err(e) => Fact::from_fs_error(&e),
    }
}

fn elf_machine(bytes: &[u8]) -> Option<&'static str> {
    if bytes.len() < 20 || &bytes[..4] != b"\x7fELF" {
        return None;
    }
    let machine = if bytes[5] == 2 {
        u16::from_be_bytes([bytes[18], bytes[19]])
    } else {
        u16::from_le_bytes([bytes[18], bytes[19]])
    };
    match machine {
        62 => Some("x86_64"),
        183 => Some("aarch64"),
        3 => Some("i686"),
        21 => Some("ppc64le"),
        243 => Some("riscv64"),
        _ => None,
    }
}

fn read_one_line(fs: &HostFs, path: &str) -> Fact<String> {
    match fs.read_text(Path::new(path)) {
        Ok(f) => match f
            .text
            .lines()
            .next()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !f.binary)
        {
            Some(line) => Fact::value(path, line.to_string()),
            None => Fact::missing(path, MissingReason::Malformed, "empty or binary"),
        },
        Err(e) => Fact::from_fs_error(&e),
    }
}

fn uname() -> Option<(String, String)> {
    let u = rustix::system::uname();
    let release = u.release().to_string_lossy().into_owned();
    let machine = u.machine().to_string_lossy().into_owned();
    Some((release, machine))
}

fn container(fs: &HostFs, env: &Env) -> Container {
    let mut hints = Vec::new();
    let mut kind: Option<&str> = None;
    let mut note = |k: &'static str, what: String, source: String, hints: &mut Vec<Hint>| {
        kind.get_or_insert(k);
        hints.push(Hint { kind: what, source });
    };
    if fs.exists(Path::new("/.dockerenv")) {
        note("docker", "docker".into(), "/.dockerenv".into(), &mut hints);
    }
    if let Ok(f) = fs.read_text_limited(Path::new("/run/.containerenv"), 64 * 1024) {
        let engine = f.text.lines().find_map(|l| {
            l.strip_prefix("engine=")
                .map(|v| v.trim_matches('"').to_string())
        });
        let what = match engine {
            Some(e) => format!("podman ({e})"),
            None => "podman".to_string(),
        };
        note("podman", what, "/run/.containerenv".into(), &mut hints);
    }
    // The caller's environment describes the caller, not an inspected --root tree.
    let own_env = fs.root().is_none();
    if own_env && env.get(envvars::KUBERNETES_SERVICE_HOST).is_some() {
        note(
            "kubernetes",
            "kubernetes".into(),
            "env KUBERNETES_SERVICE_HOST".into(),
            &mut hints,
        );
    }
    if let Some(value) = env.get_str(envvars::container).filter(|_| own_env) {
        let k = match value.as_str() {
            "podman" => "podman",
            "docker" => "docker",
            "lxc" | "lxc-libvirt" => "lxc",
            "systemd-nspawn" => "systemd-nspawn",
            _ => "container",
        };
        note(k, value.clone(), "env container".into(), &mut hints);
    }
    if fs.exists(Path::new("/.singularity.d")) {
        note(
            "apptainer",
            "apptainer".into(),
            "/.singularity.d".into(),
            &mut hints,
        );
    }
    if own_env {
        for var in [envvars::APPTAINER_CONTAINER, envvars::SINGULARITY_CONTAINER] {
            if env.get(var).is_some() {
                note(
                    "apptainer",
                    "apptainer".into(),
                    format!("env {}", var.name),
                    &mut hints,
                );
            }
        }
    }
    if let Ok(f) = fs.read_text_limited(Path::new("/proc/1/cgroup"), 64 * 1024) {
        for (needle, k) in [
            ("kubepods", "kubernetes"),
            ("docker", "docker"),
            ("libpod", "podman"),
            ("crio-", "cri-o"),
            ("containerd", "containerd"),
            ("lxc", "lxc"),
        ] {
            if f.text.contains(needle) {
                note(
                    k,
                    format!("cgroup path mentions {needle}"),
                    "/proc/1/cgroup".into(),
                    &mut hints,
                );
                break;
            }
        }
    }
    // enroot (Slurm's pyxis) leaves no marker file: its root is a directory bind-mounted
    // from ENROOT_DATA_PATH (`.../enroot-data/...` or `.../enroot/...`).
    let mountinfo = fs.read_text_limited(
        Path::new(super::container::MOUNTINFO),
        super::container::MOUNTINFO_LIMIT,
    );
    if hints.is_empty() {
        if let Ok(f) = &mountinfo {
            let root_line = f.text.lines().find(|l| l.split(' ').nth(4) == Some("/"));
            if root_line.is_some_and(|l| l.split(' ').nth(3).is_some_and(|r| r.contains("enroot")))
            {
                note(
                    "enroot",
                    "root filesystem from an enroot data directory".into(),
                    "/proc/self/mountinfo".into(),
                    &mut hints,
                );
            }
        }
    }
    let given = kind.map(|_| Box::new(super::container::probe(fs, &mountinfo)));
    Container {
        kind: kind.map(str::to_string),
        hints,
        given,
    }
}

fn wsl(fs: &HostFs, proc_version: Option<&str>) -> Wsl {
    let mut hints = Vec::new();
    let mut version = None;
    if let Some(text) = proc_version {
        if text.contains("microsoft") || text.contains("Microsoft") || text.contains("WSL") {
            // WSL 1 reports Windows' own build ("4.4.0-19041-Microsoft … #1237-Microsoft");
            // WSL 2 a Linux kernel built by Microsoft ("5.15.153.1-microsoft-standard-WSL2").
            let windows_kernel = text.contains("-Microsoft")
                && !text.contains("WSL2")
                && !text.contains("microsoft-standard");
            version = Some(if windows_kernel { 1 } else { 2 });
            hints.push(Hint {
                kind: "kernel built by Microsoft".into(),
                source: "/proc/version".into(),
            });
        }
    }
    if fs.exists(Path::new("/usr/lib/wsl/lib")) {
        // Only WSL 2 mounts the Windows driver's libraries.
        version = Some(2);
        hints.push(Hint {
            kind: "WSL GPU libraries".into(),
            source: "/usr/lib/wsl/lib".into(),
        });
    }
    if fs.exists(Path::new("/dev/dxg")) {
        version = Some(2);
        hints.push(Hint {
            kind: "DirectX GPU paravirtualisation device".into(),
            source: "/dev/dxg".into(),
        });
    }
    Wsl {
        detected: !hints.is_empty(),
        version: if hints.is_empty() {
            None
        } else {
            version.or(Some(2))
        },
        hints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_parsing() {
        let os = parse_os_release("NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n").unwrap();
        assert_eq!(os.pretty_name, "Debian GNU/Linux 12 (bookworm)");
        assert_eq!(os.id.as_deref(), Some("debian"));
        assert!(parse_os_release("garbage\n\u{0}\u{1}").is_none());
    }

    #[test]
    fn elf_machine_of_x86_64() {
        let mut hdr = vec![0u8; 20];
        hdr[..4].copy_from_slice(b"\x7fELF");
        hdr[5] = 1;
        hdr[18] = 62;
        assert_eq!(elf_machine(&hdr), Some("x86_64"));
        assert_eq!(elf_machine(b"#!/bin/sh"), None);
    }
}
