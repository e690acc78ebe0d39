//! Probe: what the host's container stack provides for GPUs. Docker (packages, binaries, the
//! snap, daemon.json), Podman (binary, NVIDIA OCI hook), containerd (plain, k3s, RKE2), CRI-O,
//! the NVIDIA Container Toolkit (packages, binaries, config.toml), CDI specifications, the
//! /dev/char links of the NVIDIA device nodes and the cgroup version. Everything is read from
//! files; no engine or toolkit binary is run.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::fact::{Fact, MissingReason};
use crate::facts::container_host::{
    Binary, Cdi, CdiSpec, CharNode, ContainerHost, ContainerToolkit, Containerd, ContainerdConfig,
    Crio, CrioConfig, DaemonConfig, DevChar, Docker, DockerSnap, HostPath, Package, Podman,
    ToolkitConfig, BIN_DIRS, CDI_DIRS, CGROUP_CONTROLLERS, DAEMON_JSON, DPKG_STATUS, PODMAN_HOOKS,
    SNAP_DOCKER, SNAP_META, TOOLKIT_BINARIES, TOOLKIT_CONFIG, TOOLKIT_PACKAGES,
};
use crate::fsys::{FsErrorKind, HostFs};

pub const RPM_DB_DIR: &str = "/var/lib/rpm";
pub const SNAP_DAEMON_JSON: &str = "/var/snap/docker/current/config/daemon.json";

pub const SNAPS_DIR: &str = "/var/lib/snapd/snaps";
pub const CRIO_CONF: &str = "/etc/crio/crio.conf";
pub const CRIO_CONF_D: &str = "/etc/crio/crio.conf.d";

/// containerd's configuration per distribution of it: plain, k3s, RKE2.
pub const CONTAINERD_CONFIGS: &[(&str, &str, &str)] = &[
    ("containerd", "containerd", "/etc/containerd/config.toml"),
    (
        "k3s",
        "k3s",
        "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
    ),
    (
        "rke2",
        "rke2",
        "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
    ),
];

pub const DOCKER_PACKAGES: &[&str] = &["docker-ce", "docker.io", "moby-engine"];

/// A CDI spec, daemon.json or config.toml larger than this is not parsed.
const CONFIG_LIMIT: u64 = 1024 * 1024;
/// dpkg's status file lists every package of the system: a few MiB.
const DPKG_LIMIT: u64 = 64 * 1024 * 1024;
/// Spec files read per CDI directory, device names kept per spec, host paths checked per spec.
const MAX_SPEC_FILES: usize = 64;
const MAX_DEVICE_NAMES: usize = 64;
const MAX_HOST_PATHS: usize = 4096;
/// containerd drop-in files followed through `imports`.
const MAX_IMPORTS: usize = 32;

pub fn probe(fs: &HostFs) -> ContainerHost {
    let (packages, rpm_db) = read_packages(fs);
    let pkgs = |names: &[&str]| -> Vec<Package> {
        packages
            .get()
            .map(|p| {
                p.iter()
                    .filter(|p| names.contains(&p.name.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let docker = Docker {
        binaries: find_binaries(fs, &["dockerd", "docker"]),
        packages: pkgs(DOCKER_PACKAGES),
        snap: docker_snap(fs),
        daemon_configs: [DAEMON_JSON, SNAP_DAEMON_JSON]
            .iter()
            .filter(|p| **p == DAEMON_JSON || fs.exists(Path::new(p)))
            .map(|p| read_daemon_json(fs, p))
            .collect(),
    };
    let podman = Podman {
        binaries: find_binaries(fs, &["podman"]),
        nvidia_hooks: PODMAN_HOOKS
            .iter()
            .filter(|p| fs.exists(Path::new(p)))
            .map(|p| p.to_string())
            .collect(),
    };
    let containerd: Vec<Containerd> = CONTAINERD_CONFIGS
        .iter()
        .filter_map(|(flavor, bin, conf)| {
            let binaries = find_binaries(fs, &[bin]);
            let config = read_containerd(fs, conf);
            let configured =
                config.missing_info().map(|m| m.reason) != Some(MissingReason::NotFound);
            (configured || !binaries.is_empty()).then(|| Containerd {
                flavor: flavor.to_string(),
                binaries,
                config,
            })
        })
        .collect();
    let crio = Crio {
        binaries: find_binaries(fs, &["crio"]),
        configs: crio_configs(fs),
    };
    let mut kubernetes: Vec<String> = ["/var/lib/kubelet", "/etc/kubernetes/kubelet.conf"]
        .iter()
        .filter(|p| fs.exists(Path::new(p)))
        .map(|p| p.to_string())
        .collect();
    kubernetes.extend(
        find_binaries(fs, &["kubelet", "k3s", "rke2"])
            .into_iter()
            .map(|b| b.path),
    );
    for (flavor, _, conf) in &CONTAINERD_CONFIGS[1..] {
        if fs.exists(Path::new(conf)) {
            kubernetes.push(format!("{conf} ({flavor})"));
        }
    }
    let toolkit = ContainerToolkit {
        binaries: find_binaries(fs, TOOLKIT_BINARIES),
        config: read_toolkit_config(fs),
    };
    let mut dirs: Vec<String> = CDI_DIRS.iter().map(|d| d.to_string()).collect();
    for f in &docker.daemon_configs {
        if let Some(c) = f.get() {
            dirs.extend(c.cdi_spec_dirs.iter().cloned());
        }
    }
    for c in &containerd {
        if let Some(c) = c.config.get() {
            dirs.extend(c.cdi_spec_dirs.iter().cloned());
        }
    }
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let keep = d.starts_with('/') && !seen.contains(d);
        seen.push(d.clone());
        keep
    });
    let cdi = read_cdi(fs, dirs);
    ContainerHost {
        packages,
        rpm_db,
        docker,
        podman,
        containerd,
        crio,
        kubernetes,
        toolkit,
        cdi,
        dev_char: dev_char(fs),
        cgroup: cgroup_version(fs),
    }
}

fn find_binaries(fs: &HostFs, names: &[&str]) -> Vec<Binary> {
    let mut out = Vec::new();
    for name in names {
        for dir in BIN_DIRS {
            let path = format!("{dir}/{name}");
            if fs.is_executable_file(Path::new(&path)) {
                out.push(Binary {
                    name: name.to_string(),
                    path,
                });
                break;
            }
        }
    }
    out
}

fn read_packages(fs: &HostFs) -> (Fact<Vec<Package>>, Option<Fact<Vec<Package>>>) {
    let rpm_db = fs.exists(Path::new(RPM_DB_DIR)).then(|| {
        Fact::missing(
            RPM_DB_DIR,
            MissingReason::NotProbed,
            "the rpm database is SQLite (or Berkeley DB) and is not read; packages are known from their files only",
        )
    });
    let dpkg = match fs.read_text_limited(Path::new(DPKG_STATUS), DPKG_LIMIT) {
        Err(e) => Fact::from_fs_error(&e),
        Ok(t) if t.binary => Fact::missing(
            DPKG_STATUS,
            MissingReason::Malformed,
            "binary data, not dpkg's status file",
        ),
        Ok(t) => {
            let mut wanted: Vec<&str> = DOCKER_PACKAGES.to_vec();
            wanted.extend(TOOLKIT_PACKAGES);
            Fact::value(DPKG_STATUS, parse_dpkg_status(&t.text, &wanted))
        }
    };
    (dpkg, rpm_db)
}

/// Installed packages among `wanted` from dpkg's status file (stanzas of `Field: value`).
pub fn parse_dpkg_status(text: &str, wanted: &[&str]) -> Vec<Package> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let (mut name, mut status, mut version) = (None, None, None);
        for line in stanza.lines() {
            if let Some(v) = line.strip_prefix("Package:") {
                name = Some(v.trim());
            } else if let Some(v) = line.strip_prefix("Status:") {
                status = Some(v.trim());
            } else if let Some(v) = line.strip_prefix("Version:") {
                version = Some(v.trim());
            }
        }
        let (Some(name), Some(status), Some(version)) = (name, status, version) else {
            continue;
        };
        if wanted.contains(&name) && status.ends_with(" installed") {
            out.push(Package {
                name: name.to_string(),
                version: version.to_string(),
                source: DPKG_STATUS.into(),
            });
        }
    }
    out
}

fn docker_snap(fs: &HostFs) -> Option<DockerSnap> {
    let mut evidence = Vec::new();
    if fs.exists(Path::new(SNAP_DOCKER)) {
        evidence.push(SNAP_DOCKER.to_string());
    }
    if fs.symlink_metadata(Path::new("/snap/bin/docker")).is_ok() {
        evidence.push("/snap/bin/docker".to_string());
    }
    if let Ok(names) = fs.read_dir(Path::new(SNAPS_DIR)) {
        for n in names.iter().take(10_000) {
            let n = n.to_string_lossy();
            if n.starts_with("docker_") && n.ends_with(".snap") {
                evidence.push(format!("{SNAPS_DIR}/{n}"));
                break;
            }
        }
    }
    if evidence.is_empty() {
        return None;
    }
    let version = match fs.read_text_limited(Path::new(SNAP_META), 64 * 1024) {
        Err(e) => Fact::from_fs_error(&e),
        Ok(t) => match t.text.lines().find_map(|l| l.strip_prefix("version:")) {
            Some(v) => Fact::value(
                SNAP_META,
                v.trim().trim_matches(|c| c == '"' || c == '\'').to_string(),
            ),
            None => Fact::missing(SNAP_META, MissingReason::Malformed, "no `version:` line"),
        },
    };
    Some(DockerSnap { evidence, version })
}

/// A config file's text, or the Fact saying why there is none.
fn read_config<T>(fs: &HostFs, path: &str) -> Result<String, Fact<T>> {
    match fs.read_text_limited(Path::new(path), CONFIG_LIMIT) {
        Err(e) => Err(Fact::from_fs_error(&e)),
        Ok(t) if t.truncated => Err(Fact::missing(
            path,
            MissingReason::Unreadable,
            format!("larger than {} KiB: not parsed", CONFIG_LIMIT / 1024),
        )),
        Ok(t) if t.binary => Err(Fact::missing(
            path,
            MissingReason::Malformed,
            "binary data, not text",
        )),
        Ok(t) => Ok(t.text),
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawDaemon {
    runtimes: BTreeMap<String, RawDockerRuntime>,
    #[serde(rename = "default-runtime")]
    default_runtime: Option<String>,
    features: BTreeMap<String, serde_json::Value>,
    #[serde(rename = "exec-opts")]
    exec_opts: Vec<String>,
    #[serde(rename = "cdi-spec-dirs")]
    cdi_spec_dirs: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawDockerRuntime {
    path: Option<String>,
}

fn read_daemon_json(fs: &HostFs, path: &str) -> Fact<DaemonConfig> {
    let text = match read_config(fs, path) {
        Ok(t) => t,
        Err(f) => return f,
    };
    match parse_daemon_json(&text) {
        Ok(c) => Fact::value(path, c),
        Err(e) => Fact::missing(path, MissingReason::Malformed, e),
    }
}

pub fn parse_daemon_json(text: &str) -> Result<DaemonConfig, String> {
    if text.trim().is_empty() {
        return Ok(DaemonConfig::default());
    }
    let raw: RawDaemon = serde_json::from_str(text).map_err(|e| format!("not daemon.json: {e}"))?;
    let cgroup_driver = raw.exec_opts.iter().find_map(|o| {
        let (k, v) = o.split_once('=')?;
        (k.trim() == "native.cgroupdriver").then(|| v.trim().to_string())
    });
    Ok(DaemonConfig {
        runtimes: raw
            .runtimes
            .into_iter()
            .map(|(name, r)| (name, r.path))
            .collect(),
        default_runtime: raw.default_runtime,
        cdi: raw.features.get("cdi").and_then(|v| v.as_bool()),
        cgroup_driver,
        cdi_spec_dirs: raw.cdi_spec_dirs,
    })
}

fn toml_get<'a>(t: &'a toml::Table, path: &[&str]) -> Option<&'a toml::Value> {
    let (last, init) = path.split_last()?;
    let mut cur = t;
    for k in init {
        cur = cur.get(*k)?.as_table()?;
    }
    cur.get(*last)
}

fn toml_str(t: &toml::Table, path: &[&str]) -> Option<String> {
    toml_get(t, path)?.as_str().map(str::to_string)
}

fn toml_strings(t: &toml::Table, path: &[&str]) -> Vec<String> {
    toml_get(t, path)
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn parse_toml(text: &str) -> Result<toml::Table, String> {
    text.parse::<toml::Table>()
        .map_err(|e| format!("not TOML: {}", e.message()))
}

fn read_containerd(fs: &HostFs, path: &str) -> Fact<ContainerdConfig> {
    let text = match read_config(fs, path) {
        Ok(t) => t,
        Err(f) => return f,
    };
    let table = match parse_toml(&text) {
        Ok(t) => t,
        Err(e) => return Fact::missing(path, MissingReason::Malformed, e),
    };
    let mut config = ContainerdConfig {
        version: toml_get(&table, &["version"]).and_then(|v| v.as_integer()),
        imports: toml_strings(&table, &["imports"]),
        ..ContainerdConfig::default()
    };
    merge_containerd(&table, &mut config);
    // Drop-in files (`imports = ["/etc/containerd/conf.d/*.toml"]`) add runtimes.
    for file in expand_imports(fs, &config.imports.clone()) {
        match read_config::<()>(fs, &file).and_then(|t| {
            parse_toml(&t).map_err(|e| Fact::missing(&file, MissingReason::Malformed, e))
        }) {
            Ok(t) => merge_containerd(&t, &mut config),
            Err(f) => config.import_errors.push(format!(
                "{}: {}",
                file,
                f.missing_info().map(|m| m.detail.as_str()).unwrap_or("")
            )),
        }
    }
    Fact::value(path, config)
}

/// `imports` entries: a path, or a directory and a `*` pattern in the file name.
fn expand_imports(fs: &HostFs, imports: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for imp in imports.iter().take(MAX_IMPORTS) {
        let p = Path::new(imp);
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
            continue;
        };
        let name = name.to_string_lossy();
        match name.split_once('*') {
            None => out.push(imp.clone()),
            Some((pre, post)) => {
                if let Ok(entries) = fs.read_dir(dir) {
                    for e in entries {
                        let e = e.to_string_lossy();
                        if e.starts_with(pre)
                            && e.ends_with(post)
                            && e.len() >= pre.len() + post.len()
                        {
                            out.push(dir.join(e.as_ref()).display().to_string());
                        }
                    }
                }
            }
        }
    }
    out.truncate(MAX_IMPORTS);
    out
}

/// The CRI plugin's settings: v1/v2 `io.containerd.grpc.v1.cri` (v1 also `cri`), v3
/// `io.containerd.cri.v1.runtime`.
fn merge_containerd(table: &toml::Table, config: &mut ContainerdConfig) {
    for plugin in [
        "io.containerd.grpc.v1.cri",
        "io.containerd.cri.v1.runtime",
        "cri",
    ] {
        let Some(p) = toml_get(table, &["plugins", plugin]).and_then(|v| v.as_table()) else {
            continue;
        };
        if let Some(v) = toml_get(p, &["enable_cdi"]).and_then(|v| v.as_bool()) {
            config.enable_cdi = Some(v);
        }
        let dirs = toml_strings(p, &["cdi_spec_dirs"]);
        if !dirs.is_empty() {
            config.cdi_spec_dirs = dirs;
        }
        if let Some(d) = toml_str(p, &["containerd", "default_runtime_name"]) {
            config.default_runtime_name = Some(d);
        }
        if let Some(rts) = toml_get(p, &["containerd", "runtimes"]).and_then(|v| v.as_table()) {
            for (name, rt) in rts {
                let Some(rt) = rt.as_table() else { continue };
                config
                    .runtimes
                    .insert(name.clone(), toml_str(rt, &["options", "BinaryName"]));
            }
            let default = config.default_runtime_name.clone().unwrap_or("runc".into());
            let systemd = |name: &str| {
                rts.get(name)
                    .and_then(|v| v.as_table())
                    .and_then(|rt| toml_get(rt, &["options", "SystemdCgroup"]))
                    .and_then(|v| v.as_bool())
            };
            if let Some(v) = systemd(&default).or_else(|| systemd("runc")) {
                config.systemd_cgroup = Some(v);
            }
        }
    }
}

fn crio_configs(fs: &HostFs) -> Vec<Fact<CrioConfig>> {
    let mut paths = Vec::new();
    if fs.exists(Path::new(CRIO_CONF)) {
        paths.push(CRIO_CONF.to_string());
    }
    if let Ok(names) = fs.read_dir(Path::new(CRIO_CONF_D)) {
        for n in names.iter().take(MAX_SPEC_FILES) {
            let n = n.to_string_lossy();
            if n.ends_with(".conf") {
                paths.push(format!("{CRIO_CONF_D}/{n}"));
            }
        }
    }
    paths
        .into_iter()
        .map(|p| {
            let text = match read_config(fs, &p) {
                Ok(t) => t,
                Err(f) => return f,
            };
            match parse_toml(&text) {
                Err(e) => Fact::missing(&p, MissingReason::Malformed, e),
                Ok(t) => Fact::value(
                    &p,
                    CrioConfig {
                        runtimes: toml_get(&t, &["crio", "runtime", "runtimes"])
                            .and_then(|v| v.as_table())
                            .map(|rts| {
                                rts.iter()
                                    .map(|(n, rt)| {
                                        let path = rt
                                            .as_table()
                                            .and_then(|rt| toml_str(rt, &["runtime_path"]));
                                        (n.clone(), path)
                                    })
                                    .collect()
                            })
                            .unwrap_or_default(),
                        default_runtime: toml_str(&t, &["crio", "runtime", "default_runtime"]),
                        cgroup_manager: toml_str(&t, &["crio", "runtime", "cgroup_manager"]),
                    },
                ),
            }
        })
        .collect()
}

fn read_toolkit_config(fs: &HostFs) -> Fact<ToolkitConfig> {
    let text = match read_config(fs, TOOLKIT_CONFIG) {
        Ok(t) => t,
        Err(f) => return f,
    };
    match parse_toml(&text) {
        Err(e) => Fact::missing(TOOLKIT_CONFIG, MissingReason::Malformed, e),
        Ok(t) => Fact::value(
            TOOLKIT_CONFIG,
            ToolkitConfig {
                mode: toml_str(&t, &["nvidia-container-runtime", "mode"]),
                no_cgroups: toml_get(&t, &["nvidia-container-cli", "no-cgroups"])
                    .and_then(|v| v.as_bool()),
                ldconfig: toml_str(&t, &["nvidia-container-cli", "ldconfig"]),
            },
        ),
    }
}

fn read_cdi(fs: &HostFs, dirs: Vec<String>) -> Cdi {
    let mut specs = Vec::new();
    let mut notes = Vec::new();
    for dir in &dirs {
        let names = match fs.read_dir(Path::new(dir)) {
            Ok(n) => n,
            Err(e) if e.kind == FsErrorKind::NotFound => continue,
            Err(e) => {
                notes.push(format!("{dir}: {e}"));
                continue;
            }
        };
        let files: Vec<String> = names
            .iter()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml") || n.ends_with(".json"))
            .collect();
        if files.len() > MAX_SPEC_FILES {
            notes.push(format!(
                "{dir}: {} spec files, only the first {MAX_SPEC_FILES} read",
                files.len()
            ));
        }
        for name in files.into_iter().take(MAX_SPEC_FILES) {
            let path = format!("{dir}/{name}");
            specs.push(read_cdi_spec(fs, &path));
        }
    }
    Cdi { dirs, specs, notes }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawSpec {
    #[serde(rename = "cdiVersion")]
    cdi_version: Option<String>,
    kind: Option<String>,
    devices: Vec<RawDevice>,
    #[serde(rename = "containerEdits")]
    container_edits: RawEdits,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawDevice {
    name: Option<String>,
    #[serde(rename = "containerEdits")]
    container_edits: RawEdits,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawEdits {
    #[serde(rename = "deviceNodes")]
    device_nodes: Vec<RawNode>,
    mounts: Vec<RawMount>,
    hooks: Vec<RawHook>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawNode {
    path: Option<String>,
    #[serde(rename = "hostPath")]
    host_path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawMount {
    #[serde(rename = "hostPath")]
    host_path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawHook {
    path: Option<String>,
    args: Vec<String>,
}

fn read_cdi_spec(fs: &HostFs, path: &str) -> Fact<CdiSpec> {
    let text = match read_config(fs, path) {
        Ok(t) => t,
        Err(f) => return f,
    };
    let parsed = if path.ends_with(".json") {
        serde_json::from_str::<RawSpec>(&text)
            .map(|s| (s, 0))
            .map_err(|e| format!("not a CDI spec: {e}"))
    } else {
        yaml_to_json(&text).and_then(|(v, aliases)| {
            serde_json::from_value::<RawSpec>(v)
                .map(|s| (s, aliases))
                .map_err(|e| format!("not a CDI spec: {e}"))
        })
    };
    match parsed {
        Ok((raw, aliases)) => {
            let mut spec = summarize_spec(fs, raw);
            if aliases > 0 {
                spec.notes.push(format!(
                    "{aliases} YAML aliases not followed (nvidia-ctk writes none)"
                ));
            }
            Fact::value(path, spec)
        }
        Err(e) => Fact::missing(path, MissingReason::Malformed, e),
    }
}

fn summarize_spec(fs: &HostFs, raw: RawSpec) -> CdiSpec {
    let mut spec = CdiSpec {
        cdi_version: raw.cdi_version,
        kind: raw.kind,
        device_count: raw.devices.len(),
        ..CdiSpec::default()
    };
    spec.devices = raw
        .devices
        .iter()
        .take(MAX_DEVICE_NAMES)
        .map(|d| d.name.clone().unwrap_or_default())
        .collect();
    if raw.devices.len() > MAX_DEVICE_NAMES {
        spec.notes.push(format!(
            "{} devices; the first {MAX_DEVICE_NAMES} names kept",
            raw.devices.len()
        ));
    }
    let mut wanted: Vec<(String, &'static str)> = Vec::new();
    let edits =
        std::iter::once(&raw.container_edits).chain(raw.devices.iter().map(|d| &d.container_edits));
    for e in edits {
        for n in &e.device_nodes {
            if let Some(p) = n
                .host_path
                .as_ref()
                .filter(|p| !p.is_empty())
                .or(n.path.as_ref())
            {
                wanted.push((p.clone(), "device_node"));
            }
        }
        for m in &e.mounts {
            if let Some(p) = &m.host_path {
                wanted.push((p.clone(), "mount"));
            }
        }
        for h in &e.hooks {
            if let Some(p) = &h.path {
                wanted.push((p.clone(), "hook"));
            }
            let sub = match h.args.first().map(|a| a.rsplit('/').next().unwrap_or(a)) {
                Some("nvidia-cdi-hook") => h.args.get(1),
                Some("nvidia-ctk") if h.args.get(1).map(String::as_str) == Some("hook") => {
                    h.args.get(2)
                }
                _ => None,
            };
            if let Some(sub) = sub {
                if !spec.hooks.contains(sub) && spec.hooks.len() < 32 {
                    spec.hooks.push(sub.clone());
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    wanted.retain(|(p, _)| seen.insert(p.clone()));
    if wanted.len() > MAX_HOST_PATHS {
        spec.notes.push(format!(
            "{} host paths; the first {MAX_HOST_PATHS} checked",
            wanted.len()
        ));
        wanted.truncate(MAX_HOST_PATHS);
    }
    for (path, kind) in wanted {
        if spec.driver_version.is_none() {
            spec.driver_version = driver_version_of(&path);
        }
        let exists = path.starts_with('/') && fs.exists(Path::new(&path));
        spec.host_paths.push(HostPath {
            path,
            kind: kind.to_string(),
            exists,
        });
    }
    spec
}

/// `…/libcuda.so.550.54.15` → `550.54.15` (also libnvidia-ml).
pub fn driver_version_of(path: &str) -> Option<String> {
    let name = path.rsplit('/').next()?;
    let v = name
        .strip_prefix("libcuda.so.")
        .or_else(|| name.strip_prefix("libnvidia-ml.so."))?;
    let parts: Vec<&str> = v.split('.').collect();
    let ok = parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    ok.then(|| v.to_string())
}

/// YAML into JSON values: every scalar a string (CDI's fields are), plain `null`/`~` null.
/// Aliases are not followed (their count is returned): an alias can expand a small file into
/// an enormous tree.
pub fn yaml_to_json(text: &str) -> Result<(serde_json::Value, usize), String> {
    use serde_json::Value;
    use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
    use yaml_rust2::scanner::{Marker, TScalarStyle};

    enum Frame {
        Seq(Vec<Value>),
        Map(serde_json::Map<String, Value>, Option<String>),
    }
    struct Builder {
        stack: Vec<Frame>,
        root: Option<Value>,
        aliases: usize,
    }
    impl Builder {
        fn push(&mut self, v: Value) {
            match self.stack.last_mut() {
                None => {
                    if self.root.is_none() {
                        self.root = Some(v);
                    }
                }
                Some(Frame::Seq(items)) => items.push(v),
                Some(Frame::Map(map, key)) => match key.take() {
                    None => {
                        *key = Some(match v {
                            Value::String(s) => s,
                            other => other.to_string(),
                        })
                    }
                    Some(k) => {
                        map.insert(k, v);
                    }
                },
            }
        }
    }
    impl MarkedEventReceiver for Builder {
        fn on_event(&mut self, ev: Event, _mark: Marker) {
            match ev {
                Event::Scalar(s, style, _, _) => {
                    let v = if style == TScalarStyle::Plain
                        && (s == "null" || s == "~" || s.is_empty())
                    {
                        Value::Null
                    } else {
                        Value::String(s)
                    };
                    self.push(v);
                }
                Event::SequenceStart(..) => self.stack.push(Frame::Seq(Vec::new())),
                Event::MappingStart(..) => {
                    self.stack.push(Frame::Map(serde_json::Map::new(), None))
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let v = match self.stack.pop() {
                        Some(Frame::Seq(items)) => Value::Array(items),
                        Some(Frame::Map(map, _)) => Value::Object(map),
                        None => Value::Null,
                    };
                    self.push(v);
                }
                Event::Alias(_) => {
                    self.aliases += 1;
                    self.push(Value::Null);
                }
                _ => {}
            }
        }
    }
    let mut b = Builder {
        stack: Vec::new(),
        root: None,
        aliases: 0,
    };
    Parser::new_from_str(text)
        .load(&mut b, false)
        .map_err(|e| format!("not YAML: {e}"))?;
    Ok((b.root.unwrap_or(Value::Null), b.aliases))
}

fn dev_char(fs: &HostFs) -> DevChar {
    let mut nodes = Vec::new();
    if let Ok(names) = fs.read_dir(Path::new("/dev")) {
        for n in names {
            let n = n.to_string_lossy();
            if !n.starts_with("nvidia") {
                continue;
            }
            let path = format!("/dev/{n}");
            let Ok(meta) = fs.metadata(Path::new(&path)) else {
                continue;
            };
            if meta.is_dir() {
                continue;
            }
            let major_minor = meta.file_type().is_char_device().then(|| {
                let rdev = meta.rdev();
                format!("{}:{}", rustix::fs::major(rdev), rustix::fs::minor(rdev))
            });
            nodes.push(CharNode {
                path,
                major_minor,
                link: None,
            });
        }
    }
    let listing = match fs.read_dir(Path::new("/dev/char")) {
        Err(e) => Fact::from_fs_error(&e),
        Ok(entries) => {
            for e in entries.iter().take(100_000) {
                let name = e.to_string_lossy();
                let link = format!("/dev/char/{name}");
                let Ok(target) = fs.read_link(Path::new(&link)) else {
                    continue;
                };
                let target = resolve(Path::new("/dev/char"), &target);
                if let Some(node) = nodes.iter_mut().find(|n| Path::new(&n.path) == target) {
                    node.link.get_or_insert(link);
                }
            }
            for node in nodes.iter_mut().filter(|n| n.link.is_none()) {
                if let Some(mm) = &node.major_minor {
                    let link = format!("/dev/char/{mm}");
                    if fs.exists(Path::new(&link)) {
                        node.link = Some(link);
                    }
                }
            }
            Fact::value("/dev/char", entries.len())
        }
    };
    DevChar { listing, nodes }
}

/// A link target made absolute against the link's directory, `..` folded.
fn resolve(dir: &Path, target: &Path) -> PathBuf {
    let joined = if target.is_absolute() {
        target.to_path_buf()
    } else {
        dir.join(target)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

fn cgroup_version(fs: &HostFs) -> Fact<String> {
    if fs.exists(Path::new(CGROUP_CONTROLLERS)) {
        Fact::value(CGROUP_CONTROLLERS, "v2".to_string())
    } else if fs.exists(Path::new("/sys/fs/cgroup")) {
        Fact::value("/sys/fs/cgroup (no cgroup.controllers)", "v1".to_string())
    } else {
        Fact::missing("/sys/fs/cgroup", MissingReason::NotFound, "not mounted")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpkg_stanzas_keep_installed_wanted_packages() {
        let text = "Package: nvidia-container-toolkit\nStatus: install ok installed\nVersion: 1.17.8-1\n\nPackage: docker-ce\nStatus: deinstall ok config-files\nVersion: 5:27.0.3-1~ubuntu.22.04~jammy\n\nPackage: libc6\nStatus: install ok installed\nVersion: 2.35\n";
        let p = parse_dpkg_status(text, &["nvidia-container-toolkit", "docker-ce"]);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].version, "1.17.8-1");
    }

    #[test]
    fn daemon_json_as_nvidia_ctk_writes_it() {
        let c = parse_daemon_json(
            r#"{"runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}, "exec-opts": ["native.cgroupdriver=systemd"], "features": {"cdi": true}, "other": 1}"#,
        )
        .unwrap();
        assert_eq!(
            c.runtimes["nvidia"].as_deref(),
            Some("nvidia-container-runtime")
        );
        assert_eq!(c.cgroup_driver.as_deref(), Some("systemd"));
        assert_eq!(c.cdi, Some(true));
        assert!(parse_daemon_json("{garbage").is_err());
        assert!(parse_daemon_json(r#"{"runtimes": 5}"#).is_err());
    }

    #[test]
    fn containerd_v2_and_v3_runtimes() {
        let v2 = r#"version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
default_runtime_name = "nvidia"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
BinaryName = "/usr/bin/nvidia-container-runtime"
SystemdCgroup = true
"#;
        let mut c = ContainerdConfig::default();
        merge_containerd(&parse_toml(v2).unwrap(), &mut c);
        assert_eq!(
            c.runtimes["nvidia"].as_deref(),
            Some("/usr/bin/nvidia-container-runtime")
        );
        assert_eq!(c.systemd_cgroup, Some(true));
        let v3 = r#"version = 3
[plugins."io.containerd.cri.v1.runtime"]
enable_cdi = true
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]
BinaryName = "/usr/bin/nvidia-container-runtime"
"#;
        let mut c = ContainerdConfig::default();
        merge_containerd(&parse_toml(v3).unwrap(), &mut c);
        assert!(c.runtimes.contains_key("nvidia"));
        assert_eq!(c.enable_cdi, Some(true));
    }

    #[test]
    fn yaml_scalars_are_strings_and_aliases_are_not_followed() {
        let (v, aliases) = yaml_to_json("a: &x [1, 2]\nb: *x\nc: ~\nd: \"0\"\n").unwrap();
        assert_eq!(aliases, 1);
        assert_eq!(v["a"][0], "1");
        assert!(v["b"].is_null() && v["c"].is_null());
        assert_eq!(v["d"], "0");
        assert!(yaml_to_json("a: [\n").is_err());
    }

    #[test]
    fn driver_versions_from_library_names() {
        assert_eq!(
            driver_version_of("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15").as_deref(),
            Some("550.54.15")
        );
        assert_eq!(driver_version_of("/usr/lib/libnvidia-ml.so.1"), None);
        assert_eq!(
            driver_version_of("/usr/lib/libnvidia-gpucomp.so.550.54.15"),
            None
        );
    }

    #[test]
    fn link_targets_resolve_against_dev_char() {
        assert_eq!(
            resolve(Path::new("/dev/char"), Path::new("../nvidia0")),
            PathBuf::from("/dev/nvidia0")
        );
        assert_eq!(
            resolve(Path::new("/dev/char"), Path::new("/dev/nvidiactl")),
            PathBuf::from("/dev/nvidiactl")
        );
    }
}
