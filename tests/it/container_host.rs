//! The host's container stack (GD066-GD070) through the real binary, on fake roots holding
//! the files as Docker, containerd, dpkg and `nvidia-ctk` write them.

use crate::util::*;

const DRIVER: &str = "580.95.05";

/// /etc/docker/daemon.json as `nvidia-ctk runtime configure --runtime=docker` writes it.
const DAEMON_JSON: &str = r#"{
    "runtimes": {
        "nvidia": {
            "args": [],
            "path": "nvidia-container-runtime"
        }
    }
}"#;

/// /etc/containerd/config.toml (version 2) after `nvidia-ctk runtime configure --runtime=containerd`.
const CONTAINERD_V2: &str = r#"version = 2

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]

    [plugins."io.containerd.grpc.v1.cri".containerd]

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
          privileged_without_host_devices = false
          runtime_engine = ""
          runtime_root = ""
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
            BinaryName = "/usr/bin/nvidia-container-runtime"
            SystemdCgroup = true

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
            SystemdCgroup = true
"#;

/// containerd 2.x's version 3 configuration, with the runtime under the new plugin name.
const CONTAINERD_V3: &str = r#"version = 3

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"

  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]
    BinaryName = "/usr/bin/nvidia-container-runtime"
"#;

/// A CDI specification as `nvidia-ctk cdi generate` writes it (trimmed to a few libraries).
fn cdi_yaml(driver: &str) -> String {
    format!(
        r#"---
cdiVersion: 0.5.0
containerEdits:
  deviceNodes:
  - path: /dev/nvidia-modeset
  - path: /dev/nvidia-uvm
  - path: /dev/nvidia-uvm-tools
  - path: /dev/nvidiactl
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  hooks:
  - args:
    - nvidia-cdi-hook
    - create-symlinks
    - --link
    - libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so
    hookName: createContainer
    path: /usr/bin/nvidia-cdi-hook
  - args:
    - nvidia-cdi-hook
    - update-ldcache
    - --folder
    - /usr/lib/x86_64-linux-gnu
    hookName: createContainer
    path: /usr/bin/nvidia-cdi-hook
  mounts:
  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.{driver}
    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.{driver}
    options:
    - ro
    - nosuid
    - nodev
    - bind
  - containerPath: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.{driver}
    hostPath: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.{driver}
    options:
    - ro
    - nosuid
    - nodev
    - bind
devices:
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: "0"
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: GPU-8e1f6a2c-0000-0000-0000-000000000000
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: all
kind: nvidia.com/gpu
"#
    )
}

fn dpkg_stanza(name: &str, version: &str) -> String {
    format!("Package: {name}\nStatus: install ok installed\nPriority: optional\nSection: utils\nInstalled-Size: 2500\nMaintainer: NVIDIA CORPORATION <cudatools@nvidia.com>\nArchitecture: amd64\nVersion: {version}\nDescription: NVIDIA container runtime\n\n")
}

fn exe(root: &FakeRoot, rel: &str) {
    root.file(rel, "#!/bin/sh\n").chmod(rel, 0o755);
}

/// A one-GPU host with Docker from docker-ce and nothing from NVIDIA for containers.
fn docker_host() -> FakeRoot {
    let root = FakeRoot::healthy(1);
    exe(&root, "usr/bin/dockerd");
    exe(&root, "usr/bin/docker");
    root.file(
        "var/lib/dpkg/status",
        &dpkg_stanza("docker-ce", "5:27.3.1-1~ubuntu.22.04~jammy"),
    );
    root
}

/// `docker_host` plus the toolkit at `version`, configured for Docker.
fn configured(version: &str) -> FakeRoot {
    let root = docker_host();
    let mut status = dpkg_stanza("docker-ce", "5:27.3.1-1~ubuntu.22.04~jammy");
    for p in [
        "nvidia-container-toolkit",
        "nvidia-container-toolkit-base",
        "libnvidia-container1",
        "libnvidia-container-tools",
    ] {
        status.push_str(&dpkg_stanza(p, &format!("{version}-1")));
    }
    root.file("var/lib/dpkg/status", &status);
    for b in [
        "nvidia-container-runtime",
        "nvidia-container-runtime-hook",
        "nvidia-ctk",
        "nvidia-cdi-hook",
        "nvidia-container-cli",
    ] {
        exe(&root, &format!("usr/bin/{b}"));
    }
    root.file("etc/docker/daemon.json", DAEMON_JSON);
    root
}

fn check(root: &FakeRoot) -> (i32, serde_json::Value) {
    json(root.cmd().args(["check", "--no-smoke"]))
}

const HOST_CODES: &[&str] = &["GD066", "GD067", "GD068", "GD069", "GD070"];

fn host_codes(report: &serde_json::Value) -> Vec<String> {
    codes(report)
        .into_iter()
        .filter(|c| HOST_CODES.contains(&c.as_str()))
        .collect()
}

#[test]
fn docker_with_the_toolkit_configured_is_clean() {
    let (code, report) = check(&configured("1.17.8"));
    assert_eq!(host_codes(&report), Vec::<String>::new(), "{report:#}");
    assert_eq!(code, 0);
    let host = &report["snapshot"]["container_host"];
    assert_eq!(
        host["docker"]["daemon_configs"][0]["value"]["runtimes"]["nvidia"],
        "nvidia-container-runtime"
    );
    assert_eq!(
        report["snapshot"]["probes"]["container_host"]["status"],
        "ok"
    );
}

#[test]
fn no_engine_is_quiet() {
    let (code, report) = check(&FakeRoot::healthy(1));
    assert_eq!(host_codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
}

#[test]
fn docker_without_the_toolkit_is_gd066_with_apt_fixes() {
    let (code, report) = check(&docker_host());
    assert_eq!(code, 1);
    let f = findings(&report, "GD066");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "error");
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("could not select device driver"));
    let fixes = fix_commands(f[0]);
    assert!(
        fixes.contains("sudo apt-get update && sudo apt-get install -y nvidia-container-toolkit"),
        "{fixes}"
    );
    assert!(fixes.contains("sudo nvidia-ctk runtime configure --runtime=docker"));
    assert!(fixes.contains("sudo systemctl restart docker"));
}

#[test]
fn podman_without_cdi_is_gd066_and_a_generated_spec_clears_it() {
    let root = FakeRoot::healthy(1);
    exe(&root, "usr/bin/podman");
    root.file(
        "etc/os-release",
        "NAME=\"Rocky Linux\"\nID=\"rocky\"\nVERSION_ID=\"9.4\"\nPRETTY_NAME=\"Rocky Linux 9.4\"\n",
    );
    let (_, report) = check(&root);
    let f = findings(&report, "GD066");
    assert_eq!(f.len(), 1);
    let fixes = fix_commands(f[0]);
    assert!(
        fixes.contains("sudo dnf install -y nvidia-container-toolkit"),
        "{fixes}"
    );
    assert!(fixes.contains("sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"));
    root.file("etc/cdi/nvidia.yaml", &cdi_yaml(DRIVER));
    // The spec names the toolkit's hook: without the toolkit it is stale.
    let (_, report) = check(&root);
    assert_eq!(host_codes(&report), ["GD068"], "{report:#}");
    exe(&root, "usr/bin/nvidia-cdi-hook");
    let (_, report) = check(&root);
    assert_eq!(host_codes(&report), Vec::<String>::new(), "{report:#}");
    let spec = &report["snapshot"]["container_host"]["cdi"]["specs"][0]["value"];
    assert_eq!(spec["kind"], "nvidia.com/gpu");
    assert_eq!(spec["driver_version"], DRIVER);
    assert_eq!(spec["device_count"], 3);
    assert_eq!(
        spec["hooks"],
        serde_json::json!(["create-symlinks", "update-ldcache"])
    );
}

#[test]
fn containerd_on_a_kubernetes_node_v2_and_v3() {
    for config in [CONTAINERD_V2, CONTAINERD_V3] {
        let root = FakeRoot::healthy(1);
        exe(&root, "usr/bin/containerd");
        root.dir("var/lib/kubelet");
        root.file("etc/containerd/config.toml", config);
        let (_, report) = check(&root);
        assert!(findings(&report, "GD066").is_empty(), "{report:#}");
        // The same node without the nvidia runtime.
        root.file("etc/containerd/config.toml", "version = 2\n");
        let (code, report) = check(&root);
        assert_eq!(code, 1);
        let f = findings(&report, "GD066");
        assert_eq!(f.len(), 1);
        assert!(
            fix_commands(f[0]).contains("sudo nvidia-ctk runtime configure --runtime=containerd")
        );
    }
}

#[test]
fn k3s_without_the_toolkit_is_gd066() {
    let root = FakeRoot::healthy(1);
    exe(&root, "usr/local/bin/k3s");
    root.file(
        "var/lib/rancher/k3s/agent/etc/containerd/config.toml",
        "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n",
    );
    let (_, report) = check(&root);
    let f = findings(&report, "GD066");
    assert_eq!(f.len(), 1, "{report:#}");
    assert!(f[0]["title"].as_str().unwrap().contains("k3s"));
    assert!(fix_commands(f[0]).contains("sudo systemctl restart k3s"));
}

#[test]
fn snap_docker_with_the_host_toolkit_is_gd067_error() {
    let root = configured("1.17.8");
    root.file(
        "snap/docker/current/meta/snap.yaml",
        "name: docker\nversion: '29.2.1'\nsummary: Docker container runtime\n",
    );
    let (code, report) = check(&root);
    assert_eq!(code, 1);
    let f = findings(&report, "GD067");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["severity"], "error");
    assert!(fix_commands(f[0]).contains("sudo snap remove --purge docker"));
    // The snap alone (no host packages): a warning, exit 0.
    let root = FakeRoot::healthy(1);
    root.file(
        "snap/docker/current/meta/snap.yaml",
        "name: docker\nversion: '28.4.0'\n",
    );
    let (code, report) = check(&root);
    let f = findings(&report, "GD067");
    assert_eq!((f.len(), f[0]["severity"].as_str()), (1, Some("warning")));
    assert_eq!(code, 0);
}

#[test]
fn a_spec_for_the_old_driver_is_gd068() {
    let root = configured("1.17.8");
    root.file("etc/cdi/nvidia.yaml", &cdi_yaml("550.54.15"));
    let (code, report) = check(&root);
    assert_eq!(code, 1);
    let f = findings(&report, "GD068");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "error");
    let detail = f[0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("generated for driver 550.54.15 while driver 580.95.05"),
        "{detail}"
    );
    assert!(
        fix_commands(f[0]).contains("sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml")
    );
}

#[test]
fn unlinked_nodes_under_systemd_are_gd069() {
    let root = configured("1.17.8");
    root.file(
        "etc/docker/daemon.json",
        r#"{"exec-opts": ["native.cgroupdriver=systemd"], "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}}"#,
    );
    root.dir("dev/char");
    let (code, report) = check(&root);
    assert_eq!(code, 0, "a warning does not fail the default --fail-on");
    let f = findings(&report, "GD069");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    let fixes = fix_commands(f[0]);
    assert!(fixes.contains("sudo nvidia-ctk system create-dev-char-symlinks --create-all"));
    assert!(fixes.contains("/lib/udev/rules.d/71-nvidia-dev-char.rules"));
    // With every link in place: clean.
    for (name, mm) in [
        ("nvidiactl", "195:255"),
        ("nvidia-uvm", "510:0"),
        ("nvidia-uvm-tools", "510:1"),
        ("nvidia-modeset", "195:254"),
        ("nvidia0", "195:0"),
    ] {
        root.link(&format!("../{name}"), &format!("dev/char/{mm}"));
    }
    let (_, report) = check(&root);
    assert!(findings(&report, "GD069").is_empty(), "{report:#}");
}

#[test]
fn a_vulnerable_toolkit_is_gd070() {
    let (code, report) = check(&configured("1.16.1"));
    assert_eq!(code, 0);
    let f = findings(&report, "GD070");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0]["detail"].as_str().unwrap().contains("CVE-2024-0132"));
    assert!(
        fix_commands(f[0]).contains("apt-get install --only-upgrade -y nvidia-container-toolkit")
    );
    let (_, report) =
        json(
            configured("1.16.1")
                .cmd()
                .args(["check", "--no-smoke", "--fail-on", "warning"]),
        );
    assert_eq!(report["summary"]["warnings"], 1);
}

#[test]
fn inside_a_container_none_of_these_apply() {
    let root = docker_host();
    root.file(".dockerenv", "");
    root.file("etc/cdi/nvidia.yaml", &cdi_yaml("550.54.15"));
    let (_, report) = check(&root);
    assert_eq!(host_codes(&report), Vec::<String>::new());
    for rule in [
        "container_engine",
        "docker_snap",
        "cdi",
        "dev_char_links",
        "container_toolkit",
    ] {
        let c = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["rule"] == rule)
            .unwrap();
        assert_eq!(c["status"], "not_applicable", "{rule}");
    }
}

#[test]
fn hostile_files_are_bounded_notes_not_panics() {
    let root = docker_host();
    root.file("etc/docker/daemon.json", "{\"runtimes\": [garbage");
    root.bytes("etc/cdi/binary.yaml", &[0u8, 159, 146, 150, 0, 1, 2]);
    root.file("etc/cdi/huge.yaml", &"# padding\n".repeat(1_100_000));
    let mut many = String::from("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n");
    for i in 0..100_000 {
        many.push_str(&format!("- name: \"{i}\"\n"));
    }
    root.file("etc/cdi/many.yaml", &many);
    let mut compact =
        String::from("{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[");
    for i in 0..60_000 {
        compact.push_str(&format!(
            "{}{{\"name\":\"{i}\"}}",
            if i > 0 { "," } else { "" }
        ));
    }
    compact.push_str("]}");
    root.file("etc/cdi/compact.json", &compact);
    root.file(
        "etc/cdi/deep.yaml",
        &format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000)),
    );
    root.file("etc/containerd/config.toml", "[[[not toml");
    root.file("etc/nvidia-container-runtime/config.toml", "\u{0}\u{1}");
    let (code, report) = check(&root);
    assert!(code == 0 || code == 1, "{report:#}");
    let host = &report["snapshot"]["container_host"];
    assert_eq!(
        host["docker"]["daemon_configs"][0]["missing"]["reason"],
        "malformed"
    );
    let specs = host["cdi"]["specs"].as_array().unwrap();
    let by = |name: &str| {
        specs
            .iter()
            .find(|s| s["source"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name} in {specs:#?}"))
    };
    assert_eq!(by("binary.yaml")["missing"]["reason"], "malformed");
    assert_eq!(by("huge.yaml")["missing"]["reason"], "unreadable");
    assert!(by("many.yaml")["missing"]["detail"]
        .as_str()
        .unwrap()
        .contains("not parsed"));
    let compact = &by("compact.json")["value"];
    assert_eq!(compact["device_count"], 60_000);
    assert_eq!(compact["devices"].as_array().unwrap().len(), 64);
    assert!(compact["notes"][0]
        .as_str()
        .unwrap()
        .contains("60000 devices"));
    assert_eq!(by("deep.yaml")["missing"]["reason"], "malformed");
    assert_eq!(
        host["containerd"][0]["config"]["missing"]["reason"],
        "malformed"
    );
    assert_eq!(host["toolkit"]["config"]["missing"]["reason"], "malformed");
    // Docker itself is still judged.
    assert_eq!(findings(&report, "GD066").len(), 1);
}
