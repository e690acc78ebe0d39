//! Inside a container: what the runtime gave (GD062 no GPUs, GD063 NVIDIA_REQUIRE_CUDA,
//! GD064 driver capabilities, GD065 device access revoked), through the real binary on fake
//! roots laid out as the runtimes lay out a container.

use crate::util::fake_nvml::*;
use crate::util::*;

const REQUIRE_12_8: &str = "cuda>=12.8 brand=unknown,driver>=470,driver<471 brand=grid,driver>=470,driver<471 brand=tesla,driver>=470,driver<471 brand=nvidia,driver>=470,driver<471 brand=unknown,driver>=535,driver<536 brand=tesla,driver>=535,driver<536 brand=nvidia,driver>=535,driver<536 brand=unknown,driver>=550,driver<551 brand=tesla,driver>=550,driver<551 brand=unknown,driver>=560,driver<561 brand=tesla,driver>=560,driver<561 brand=unknown,driver>=565,driver<566 brand=tesla,driver>=565,driver<566";

/// A GPU host seen from a container started without GPUs: the host's PCI functions and
/// driver are visible through /sys and /proc, but no /dev/nvidia* node and no driver library.
fn container_without_gpus(marker: &str) -> FakeRoot {
    container_without_gpus_on(marker, "580.95.05")
}

fn container_without_gpus_on(marker: &str, driver: &str) -> FakeRoot {
    let root = FakeRoot::new();
    root.modules(&["nvidia_uvm", "nvidia"])
        .nvidia_version(driver)
        .gpu("0000:18:00.0", Some("nvidia"))
        .driver_gpu("0000:18:00.0", "NVIDIA H100 80GB HBM3", 0);
    match marker {
        "docker" => {
            root.file(".dockerenv", "");
        }
        "podman" => {
            root.file("run/.containerenv", "engine=\"podman-4.9.3\"\n");
        }
        "kubernetes" => {
            root.file(
                "proc/1/cgroup",
                "0::/kubepods/besteffort/pod8d1c/cri-containerd-0f3a\n",
            );
        }
        "apptainer" => {
            root.dir(".singularity.d/env");
        }
        _ => unreachable!(),
    }
    root
}

#[test]
fn a_cuda_image_started_without_gpus_is_one_error_with_the_runtimes_flag() {
    for (marker, command) in [
        ("docker", "docker run --gpus all IMAGE"),
        ("podman", "podman run --device nvidia.com/gpu=all IMAGE"),
        ("apptainer", "apptainer exec --nv IMAGE.sif COMMAND"),
    ] {
        let root = container_without_gpus(marker);
        let (code, report) = json(
            root.cmd()
                .arg("check")
                .env("NVIDIA_VISIBLE_DEVICES", "all")
                .env("CUDA_VERSION", "12.8.1")
                .env("NVIDIA_REQUIRE_CUDA", REQUIRE_12_8),
        );
        assert_eq!(code, 1, "{marker}");
        // One verdict: the missing nodes, NVML, UVM and libcuda are all this one fact.
        assert_eq!(serious_codes(&report), ["GD062"], "{marker}: {report:#}");
        let f = findings(&report, "GD062")[0];
        assert_eq!(f["severity"], "error");
        assert!(
            fix_commands(f).contains(command),
            "{marker}: {}",
            fix_commands(f)
        );
        assert!(f["evidence"].to_string().contains("CUDA_VERSION=12.8.1"));
    }
}

/// A CPU worker of a GPU image: NVIDIA_VISIBLE_DEVICES=void, none or empty withholds the
/// GPUs on purpose (the NVIDIA Container Toolkit's documented values). The check notes it and
/// passes; the same image started with `all` and given no GPU fails.
#[test]
fn a_cpu_worker_of_a_gpu_image_is_not_a_failure() {
    for (marker, value) in [("kubernetes", "void"), ("docker", "none"), ("podman", "")] {
        let root = container_without_gpus(marker);
        root.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
        let check = |visible: &str| {
            json(
                root.cmd()
                    .args(["--python", "/venv/bin/python", "check"])
                    .env("NVIDIA_VISIBLE_DEVICES", visible)
                    .env("CUDA_VERSION", "12.8.1")
                    .env("NVIDIA_REQUIRE_CUDA", REQUIRE_12_8),
            )
        };
        let (code, report) = check(value);
        assert_eq!(code, 0, "{marker} {value:?}: {:#}", report["findings"]);
        assert!(serious_codes(&report).is_empty(), "{marker}: {report:#}");
        let f = findings(&report, "GD062")[0];
        assert_eq!(f["severity"], "info");
        assert!(
            f["title"].as_str().unwrap().contains("on purpose"),
            "{}",
            f["title"]
        );
        let (code, report) = check("all");
        assert_eq!(code, 1, "{marker}");
        assert_eq!(findings(&report, "GD062")[0]["severity"], "error");
    }
}

#[test]
fn a_pod_without_a_gpu_limit_is_told_about_the_device_plugin() {
    let root = container_without_gpus("kubernetes");
    let site = root.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    let (code, report) = json(
        root.cmd()
            .args(["--python", "/venv/bin/python", "check"])
            .env("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
    );
    assert_eq!(code, 1);
    let f = findings(&report, "GD062")[0];
    assert_eq!(f["severity"], "error");
    let text = f.to_string();
    assert!(text.contains("nvidia.com/gpu: 1"), "{text}");
    assert!(text.contains("built for CUDA 12.8"), "{text}");
    assert!(text.contains(&site), "{text}");
}

#[test]
fn a_plain_container_without_gpus_is_an_info() {
    let root = container_without_gpus("docker");
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 0);
    assert_eq!(codes(&report), ["GD022", "GD062"]);
    assert_eq!(findings(&report, "GD062")[0]["severity"], "info");
    let (_, text) = human(&root, root.cmd().arg("check"));
    assert!(text.contains("started without GPUs"), "{text}");
}

/// A container given one GPU by the NVIDIA runtime, on a host with driver `driver`.
fn container_with_gpu(driver: &str) -> FakeRoot {
    let root = gpu_host(driver, "NVIDIA H100 80GB HBM3");
    root.driver_libs(driver)
        .ld_cache(&[
            ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
            ("libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"),
        ])
        .file(".dockerenv", "")
        .file(
            "proc/self/mountinfo",
            &format!("1041 1023 259:2 /usr/lib/x86_64-linux-gnu/libcuda.so.{driver} /usr/lib/x86_64-linux-gnu/libcuda.so.{driver} ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p2 rw\n"),
        );
    root
}

#[test]
fn an_image_needing_a_newer_driver_than_the_hosts_is_refused_in_the_runtimes_words() {
    // Started without its GPUs: its next start with them is what the runtime checks. 545 is
    // outside the branches the image lists for forward compatibility.
    let root = container_without_gpus_on("docker", "545.29.06");
    let (code, report) = json(
        root.cmd()
            .arg("check")
            .env("NVIDIA_REQUIRE_CUDA", REQUIRE_12_8),
    );
    assert_eq!(code, 1);
    let f = findings(&report, "GD063")[0];
    assert_eq!(f["severity"], "error");
    let text = f.to_string();
    assert!(
        text.contains("unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container"),
        "{text}"
    );
    assert!(text.contains("nvidia/cuda:12.3.x"), "{text}");
    assert!(text.contains("NVIDIA_DISABLE_REQUIRE=1"), "{text}");

    // A listed branch depends on the GPU's brand, which is not read: undecided, not failed.
    let root = container_without_gpus_on("docker", "550.54.15");
    let (_, report) = json(
        root.cmd()
            .arg("check")
            .env("NVIDIA_REQUIRE_CUDA", REQUIRE_12_8),
    );
    assert!(findings(&report, "GD063").is_empty(), "{report:#}");

    // A driver of CUDA 12.8 or newer satisfies it.
    let root = container_without_gpus_on("docker", "570.133.20");
    let (_, report) = json(
        root.cmd()
            .arg("check")
            .env("NVIDIA_REQUIRE_CUDA", REQUIRE_12_8),
    );
    assert!(findings(&report, "GD063").is_empty(), "{report:#}");

    // A container that runs with its GPUs although 545 is no listed branch: the check was
    // not made, and CUDA 12.8 runs on 545 through minor-version compatibility (a warning).
    let root = container_with_gpu("545.29.06");
    let (_, report) = json(
        root.cmd()
            .arg("check")
            .env("NVIDIA_REQUIRE_CUDA", REQUIRE_12_8),
    );
    let f = findings(&report, "GD063");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(
        f[0]["title"].as_str().unwrap().contains("runs although"),
        "{}",
        f[0]["title"]
    );
}

#[test]
fn without_the_compute_capability_there_is_no_libcuda() {
    let root = container_with_gpu("570.133.20");
    root.remove("usr/lib/x86_64-linux-gnu/libcuda.so.1")
        .remove("usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20")
        .ld_cache(&[(
            "libnvidia-ml.so.1",
            "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        )]);
    let (code, report) = json(
        root.cmd()
            .arg("check")
            .env("NVIDIA_DRIVER_CAPABILITIES", "utility"),
    );
    assert_eq!(code, 1);
    let f = findings(&report, "GD064")[0];
    assert_eq!(f["severity"], "error");
    assert!(fix_commands(f).contains("NVIDIA_DRIVER_CAPABILITIES=compute,utility"));
}

#[test]
fn a_device_cgroup_rewritten_by_a_systemd_reload_is_named() {
    // devices.list as it reads after `systemctl daemon-reload` (NVIDIA/nvidia-container-toolkit#251).
    let root = container_with_gpu("570.133.20");
    root.file(
        "sys/fs/cgroup/devices/devices.list",
        "c 1:3 rwm\nc 195:* m\n",
    );
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 1);
    let f = findings(&report, "GD065")[0];
    assert_eq!(f["severity"], "error");
    assert!(f.to_string().contains("does not allow c 195:0"), "{f:#}");
    assert!(fix_commands(f).contains("On the host"), "{f:#}");
    assert!(fix_commands(f).contains("nvidia-ctk system create-dev-char-symlinks --create-all"));

    // The same container before the reload.
    root.file(
        "sys/fs/cgroup/devices/devices.list",
        "c 1:3 rwm\nc 195:0 rw\nc 195:255 rw\n",
    );
    let (_, report) = json(root.cmd().arg("check"));
    assert!(findings(&report, "GD065").is_empty());
}

#[test]
fn nvml_unknown_error_with_the_nodes_there_is_the_revoked_cgroup_not_a_driver_fault() {
    let root = container_with_gpu("570.133.20");
    // cgroup v2: nothing to read, NVML's answer tells.
    root.file(
        "sys/fs/cgroup/cgroup.controllers",
        "cpuset cpu io memory pids\n",
    );
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.init_error = Some(999);
    let dir = tempfile::tempdir().unwrap();
    let path = cfg.write(dir.path());
    let (code, report) = json(
        root.cmd()
            .arg("--nvml-lib")
            .arg(fake_nvml_lib())
            .env(FAKE_NVML_ENV, &path)
            .arg("check"),
    );
    assert_eq!(code, 1);
    let f = findings(&report, "GD065")[0];
    assert!(f.to_string().contains("eBPF"), "{f:#}");
    // NVML's failure is this fact, not a second one.
    assert!(findings(&report, "GD030").is_empty(), "{report:#}");
}

/// The lines of `code`'s finding block in a human report: its heading to the blank line.
fn finding_block(text: &str, code: &str) -> String {
    let start = text
        .find(&format!("[{code}]: "))
        .unwrap_or_else(|| panic!("no {code} in:\n{text}"));
    let start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let block = &text[start..];
    block.split("\n\n").next().unwrap().to_string()
}

#[test]
fn one_finding_reads_the_same_in_every_view() {
    // GD062 is judged by check, devices and smoke alike.
    let root = container_without_gpus("docker");
    let view = |args: &[&str]| {
        let r = run(root
            .cmd()
            .args(args)
            .env("COLUMNS", "80")
            .env("CUDA_VERSION", "12.8.1")
            .env("NO_COLOR", "1"));
        assert_eq!(r.code, 1, "{args:?}: {}", r.stdout);
        finding_block(&r.stdout, "GD062")
    };
    let check = view(&["check", "--no-smoke"]);
    // Heading, evidence, then fixes, each command after `$` on its own line.
    let kinds: Vec<&str> = check
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            [
                ("error[", "heading"),
                ("-->", "evidence"),
                ("= fix:", "fix"),
                ("$ ", "command"),
            ]
            .into_iter()
            .find(|(p, _)| t.starts_with(p))
            .map(|(_, k)| k)
        })
        .collect();
    assert_eq!(kinds[0], "heading", "{check}");
    let first_fix = kinds.iter().position(|k| *k == "fix").unwrap();
    assert!(
        kinds[1..first_fix].iter().all(|k| *k == "evidence"),
        "{check}"
    );
    assert!(kinds.contains(&"command"), "{check}");
    for args in [&["devices"][..], &["smoke"]] {
        assert_eq!(
            view(args),
            check,
            "gpudoctor {args:?} lays GD062 out otherwise"
        );
    }
    // diff: the finding appeared since a report without it.
    let dir = tempfile::tempdir().unwrap();
    let r = run(root
        .cmd()
        .args(["check", "--no-smoke", "--json"])
        .env("CUDA_VERSION", "12.8.1"));
    let new = dir.path().join("new.json");
    std::fs::write(&new, &r.stdout).unwrap();
    let mut before: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    before["findings"] = serde_json::json!([]);
    let old = dir.path().join("old.json");
    std::fs::write(&old, before.to_string()).unwrap();
    let d = run(gpudoctor()
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .env("COLUMNS", "80")
        .env("NO_COLOR", "1"));
    assert!(d.stdout.contains("Findings that appeared"), "{}", d.stdout);
    assert_eq!(
        finding_block(&d.stdout, "GD062"),
        check,
        "gpudoctor diff lays GD062 out otherwise"
    );
}

/// A CUDA container that runs with its GPUs on a driver its NVIDIA_REQUIRE_CUDA rejects
/// (the runtime's check skipped: NVIDIA_DISABLE_REQUIRE, CDI injection, another runtime).
fn running_container_on(driver: &str, cuda: &str) -> FakeRoot {
    let r = FakeRoot::new();
    r.modules(&["nvidia_uvm", "nvidia"])
        .nvidia_version(driver)
        .file(".dockerenv", "");
    r.node("nvidiactl", 0o666)
        .node("nvidia-uvm", 0o666)
        .node("nvidia0", 0o666)
        .gpu("0000:18:00.0", Some("nvidia"))
        .driver_gpu("0000:18:00.0", "NVIDIA H100 80GB HBM3", 0);
    let dir = format!("usr/local/cuda-{cuda}");
    r.toolkit(&dir, &format!("{cuda}.1"))
        .link(&format!("/{dir}"), "usr/local/cuda")
        .driver_libs(driver)
        .ld_cache(&[
            ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
            (
                "libnvidia-ml.so.1",
                "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
            ),
        ]);
    r
}

/// Inside a running container whose NVIDIA_REQUIRE_CUDA the host's driver does not meet (the
/// runtime's check skipped), the report says so, why it runs anyway, and rates it by what the
/// image's CUDA does on this driver: minor-version compatibility is a warning, a CUDA major
/// beyond the driver an error. The toolkit's own finding is its consequence.
#[test]
fn a_running_container_names_the_requirement_its_driver_does_not_meet() {
    let check = |driver: &str, cuda: &str, disable: Option<&str>| {
        let r = running_container_on(driver, cuda);
        let mut c = r.cmd();
        c.args(["check", "--no-smoke"])
            .env("CUDA_VERSION", format!("{cuda}.1"))
            .env(
                "NVIDIA_REQUIRE_CUDA",
                format!("cuda>={cuda} brand=tesla,driver>=470,driver<471"),
            );
        if let Some(v) = disable {
            c.env("NVIDIA_DISABLE_REQUIRE", v);
        }
        json(&mut c)
    };
    let gd = |report: &serde_json::Value, code: &str| -> serde_json::Value {
        findings(report, code)
            .first()
            .map(|f| (*f).clone())
            .unwrap_or_else(|| panic!("no {code}: {:#}", report["findings"]))
    };
    // CUDA 12.9 on driver 570 (CUDA 12.8), the check disabled: runs, with limits.
    let (code, report) = check("570.133.20", "12.9", Some("1"));
    assert_eq!(code, 0, "{:#}", report["findings"]);
    let f = gd(&report, "GD063");
    assert_eq!(f["severity"], "warning");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("NVIDIA_DISABLE_REQUIRE"),
        "{f:#}"
    );
    assert_eq!(gd(&report, "GD017")["caused_by"], "GD063");
    // CUDA 13.0 on driver 550 (CUDA 12.4), no NVIDIA_DISABLE_REQUIRE: the check was
    // bypassed, and CUDA cannot initialise.
    let (code, report) = check("550.54.15", "13.0", None);
    assert_eq!(code, 1);
    let f = gd(&report, "GD063");
    assert_eq!(f["severity"], "error");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.contains("runs although driver 550.54.15")
            && title.contains("NVIDIA_REQUIRE_CUDA (cuda>=13.0)"),
        "{title}"
    );
    assert!(
        f["detail"].as_str().unwrap().contains("CDI injection"),
        "{f:#}"
    );
    assert!(
        !f["fix"].to_string().contains("NVIDIA_DISABLE_REQUIRE"),
        "{f:#}"
    );
    assert_eq!(gd(&report, "GD017")["caused_by"], "GD063");
    // The requirement met: nothing to say.
    let (code, report) = check("570.133.20", "12.8", None);
    assert_eq!(code, 0);
    assert!(
        findings(&report, "GD063").is_empty(),
        "{:#}",
        report["findings"]
    );
}
