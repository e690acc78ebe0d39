//! Every rule against fake roots through the real binary: code, severity, fix, exit code.

use crate::util;

use crate::util::*;

#[test]
fn healthy_host_passes_with_exit_0() {
    let root = FakeRoot::healthy(2);
    let (code, report) = json(root.cmd().args(["check", "--user", ALICE]));
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(report["summary"]["errors"], 0);
    let failed: Vec<_> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "passed")
        // Not WSL, and NVML is never loaded from a --root tree.
        .filter(|c| {
            !(c["status"] == "not_applicable"
                && (c["rule"] == "wsl_driver"
                    || c["rule"] == "shm"
                    || c["rule"] == "gpu_capabilities"
                    // No Python environment with CUDA-using modules in the tree.
                    || c["rule"] == "extension_loading"
                    || c["rule"] == "cudnn_runtime"
                    // No NVIDIA Container Toolkit in the tree.
                    || c["rule"] == "dev_char_links"
                    || c["rule"] == "container_toolkit"
                    // No RDMA device; no --nccl.
                    || c["rule"] == "nccl_peermem"
                    || c["rule"] == "smoke_nccl"
                    // Not a --preflight run; no GPU count expected.
                    || c["rule"] == "preflight"
                    || c["rule"] == "expected_gpus"
                    || c["rule"] == "nccl_library"
                    || c["rule"].as_str().unwrap_or("").starts_with("pytorch")
                    || c["detail"].as_str().unwrap_or("").contains("NVML")
                    || c["detail"].as_str().unwrap_or("").contains("not in a container")
                    || c["detail"] == "no --image"
                    || c["detail"].as_str().unwrap_or("").contains("--root")))
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn no_gpu_is_one_info_and_gpu_rules_stay_quiet() {
    let root = FakeRoot::new();
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 0);
    assert_eq!(codes(&report), ["GD001"]);
    assert_eq!(findings(&report, "GD001")[0]["severity"], "info");
    let na: Vec<_> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "not_applicable")
        .map(|c| c["rule"].as_str().unwrap())
        .collect();
    assert!(
        na.contains(&"kernel_module") && na.contains(&"uvm") && na.contains(&"device_nodes"),
        "{na:?}"
    );
}

#[test]
fn no_gpu_in_container_says_how_to_pass_gpus() {
    let root = FakeRoot::new();
    root.file(".dockerenv", "");
    let (_, report) = json(
        root.cmd()
            .arg("check")
            .env("NVIDIA_VISIBLE_DEVICES", "void"),
    );
    // Nothing asks for a GPU: one info, from the container rule, and the GPU rules quiet.
    assert_eq!(codes(&report), ["GD062"]);
    let f = findings(&report, "GD062")[0];
    assert_eq!(f["severity"], "info");
    let fixes = fix_commands(f);
    assert!(fixes.contains("docker run --gpus all"), "{fixes}");
    assert!(
        f["evidence"].to_string().contains("told to pass no GPU"),
        "{f:#}"
    );
}

#[test]
fn gpu_without_nvidia_module_is_an_error() {
    let root = FakeRoot::new();
    root.gpu("0000:01:00.0", None);
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 1);
    assert_eq!(codes(&report), ["GD002"]);
    let f = findings(&report, "GD002")[0];
    assert_eq!(f["severity"], "error");
    assert!(fix_commands(f).contains("sudo modprobe nvidia"));
    assert!(fix_commands(f).contains("mokutil --sb-state"));
}

/// No kernel module on a GPU machine whose NVML would say "driver not loaded" and whose
/// cuInit would find no device: the report is GD002 alone, the root cause, not three errors.
#[test]
fn without_the_kernel_module_nvml_and_cuda_failures_are_its_consequences() {
    use util::fake_cuda::FakeCuda;
    use util::fake_nvml::FakeNvml;
    use util::gpu_node::GpuNode;
    let root = FakeRoot::new();
    root.gpu("0000:18:00.0", None);
    let mut nvml = FakeNvml::default();
    nvml.faults.init_error = Some(9); // NVML_ERROR_DRIVER_NOT_LOADED
    let mut cuda = FakeCuda::h100(1);
    cuda.init_error = Some(100); // CUDA_ERROR_NO_DEVICE
    let node = GpuNode {
        root,
        dir: tempfile::tempdir().unwrap(),
        nvml,
        cuda: Some(cuda),
    };
    let (code, report) = json(node.cmd().arg("check"));
    assert_eq!(code, 1);
    assert_eq!(codes(&report), ["GD002"], "{:#}", report["findings"]);
    let snap = &report["snapshot"];
    // Without the module the driver's libraries are not even loaded (as root they would
    // create /dev/nvidia* nodes): nothing downstream fails on its own.
    assert_eq!(
        snap["nvml"]["result"]["status"], "not_probed",
        "{:#}",
        snap["nvml"]
    );
    assert_eq!(
        snap["smoke"]["result"]["status"], "not_run",
        "{:#}",
        snap["smoke"]
    );
    assert_eq!(report["headline"]["codes"], serde_json::json!(["GD002"]));
}

/// case-06: nouveau grabbed the GPUs before nvidia.ko (CentOS, 3x 10de:1db6).
#[test]
fn nouveau_owns_the_gpus() {
    let root = FakeRoot::new();
    root.file("etc/os-release", "NAME=\"CentOS Linux\"\nID=\"centos\"\nVERSION_ID=\"7\"\nPRETTY_NAME=\"CentOS Linux 7 (Core)\"\n");
    root.modules(&["nouveau", "drm_kms_helper"]);
    for addr in ["0000:3b:00.0", "0000:86:00.0", "0000:af:00.0"] {
        root.pci(addr, "1db6", "030200", Some("nouveau"));
    }
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 1);
    // The cause, not its consequence: GD002 stays quiet when nouveau holds every GPU.
    assert_eq!(codes(&report), ["GD003"]);
    let f = findings(&report, "GD003")[0];
    assert_eq!(f["severity"], "error");
    assert!(f["title"].as_str().unwrap().contains("nouveau"));
    let fixes = fix_commands(f);
    assert!(fixes.contains("blacklist nouveau"), "{fixes}");
    assert!(fixes.contains("options nouveau modeset=0"), "{fixes}");
    assert!(
        fixes.contains("sudo dracut --force"),
        "CentOS uses dracut: {fixes}"
    );
    assert!(fixes.contains("rd.driver.blacklist=nouveau"), "{fixes}");
    assert_eq!(
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["value"].as_str().unwrap().contains("bound to nouveau"))
            .count(),
        3
    );
}

#[test]
fn nouveau_loaded_but_gpu_unbound_still_points_at_nouveau() {
    let root = FakeRoot::new();
    root.modules(&["nouveau"]).gpu("0000:01:00.0", None);
    let (_, report) = json(root.cmd().arg("check"));
    assert!(codes(&report).contains(&"GD003".to_string()), "{report:#}");
    assert!(
        fix_commands(findings(&report, "GD003")[0]).contains("update-initramfs -u"),
        "Ubuntu uses update-initramfs"
    );
}

#[test]
fn nova_core_is_a_conflicting_driver_too() {
    let root = FakeRoot::new();
    root.modules(&["nova_core"])
        .gpu("0000:01:00.0", Some("nova_core"));
    let (_, report) = json(root.cmd().arg("check"));
    assert!(findings(&report, "GD003")[0]["title"]
        .as_str()
        .unwrap()
        .contains("nova_core"));
}

#[test]
fn vfio_passthrough_is_a_warning() {
    let root = FakeRoot::new();
    root.modules(&["vfio_pci"])
        .gpu("0000:01:00.0", Some("vfio-pci"));
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(codes(&report), ["GD004"]);
    assert_eq!(findings(&report, "GD004")[0]["severity"], "warning");
    assert_eq!(code, 0, "warnings pass under the default --fail-on error");
    let (code, _) = json(root.cmd().args(["check", "--fail-on", "warning"]));
    assert_eq!(code, 1);
    let (code, _) = json(root.cmd().args(["check", "--fail-on", "never"]));
    assert_eq!(code, 0);
}

#[test]
fn gpu_left_unbound_by_a_loaded_nvidia_module() {
    let root = FakeRoot::healthy(1);
    root.gpu("0000:c1:00.0", None);
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 1);
    let f = findings(&report, "GD005");
    assert_eq!(f.len(), 1, "{report:#}");
    assert!(f[0]["title"].as_str().unwrap().contains("0000:c1:00.0"));
    assert!(fix_commands(f[0]).contains("dmesg"));
}

/// case-07: /dev/nvidia-uvm missing and nvidia_uvm not loaded → 'CUDA unknown error'.
#[test]
fn nvidia_uvm_missing() {
    let root = FakeRoot::healthy(1);
    root.modules(&["nvidia_modeset", "nvidia"])
        .remove("dev/nvidia-uvm")
        .remove("dev/nvidia-uvm-tools");
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 1);
    assert_eq!(codes(&report), ["GD006"]);
    let f = findings(&report, "GD006")[0];
    assert_eq!(f["severity"], "error");
    let fixes = fix_commands(f);
    assert!(fixes.contains("sudo nvidia-modprobe -u -c=0"), "{fixes}");
    assert!(
        fixes.contains("sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm"),
        "{fixes}"
    );
}

#[test]
fn uvm_node_missing_in_a_container_whose_host_has_the_module() {
    let root = FakeRoot::healthy(1);
    root.remove("dev/nvidia-uvm")
        .file("run/.containerenv", "engine=\"podman-4.9.3\"\n");
    let (_, report) = json(root.cmd().arg("check"));
    let f = findings(&report, "GD006")[0];
    assert!(f["title"]
        .as_str()
        .unwrap()
        .contains("/dev/nvidia-uvm is missing"));
    assert!(fix_commands(f).contains("nvidia-ctk cdi generate"));
}

#[test]
fn device_nodes_missing_while_module_loaded() {
    let root = FakeRoot::healthy(1);
    root.remove("dev/nvidiactl").remove("dev/nvidia0");
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 1);
    let f = findings(&report, "GD007")[0];
    assert_eq!(f["severity"], "error");
    assert!(fix_commands(f).contains("sudo nvidia-modprobe -c=0"));
}

#[test]
fn one_gpu_node_missing_is_a_warning_naming_it() {
    let root = FakeRoot::healthy(2);
    root.remove("dev/nvidia1");
    let (_, report) = json(root.cmd().arg("check"));
    let f = findings(&report, "GD007")[0];
    assert_eq!(f["severity"], "warning");
    let ev = serde_json::to_string(&f["evidence"]).unwrap();
    assert!(ev.contains("/dev/nvidia1 (GPU 0000:19:00.0)"), "{ev}");
    let fixes = fix_commands(f);
    assert!(
        fixes.contains("sudo nvidia-modprobe -c=1\n")
            || fixes.ends_with("sudo nvidia-modprobe -c=1"),
        "only the missing minor: {fixes}"
    );
}

/// case-08: openSUSE creates the nodes 0660 root:video; the user is not in video.
#[test]
fn nodes_0660_video_and_user_not_in_video() {
    let root = FakeRoot::healthy(1);
    for n in ["nvidiactl", "nvidia0", "nvidia-uvm", "nvidia-uvm-tools"] {
        root.chmod(&format!("dev/{n}"), 0o660);
    }
    let (code, report) = json(root.cmd().args(["check", "--user", ALICE]));
    assert_eq!(code, 1);
    assert_eq!(codes(&report), ["GD008"]);
    let f = findings(&report, "GD008")[0];
    assert_eq!(f["severity"], "error");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.contains("alice")
            && title.contains("/dev/nvidiactl")
            && title.contains("/dev/nvidia0"),
        "{title}"
    );
    let fixes = fix_commands(f);
    assert!(fixes.contains("sudo usermod -aG video alice"), "{fixes}");
    assert!(fixes.contains("NVreg_DeviceFileMode=0666"), "{fixes}");
    // bob is in video: no finding.
    let (code, report) = json(root.cmd().args(["check", "--user", BOB]));
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn unknown_user_is_a_usage_error() {
    let root = FakeRoot::healthy(1);
    let r = run(root.cmd().args(["check", "--user", "mallory"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("mallory"), "{}", r.stderr);
}

/// case-11: CUDA_LAUNCH_BLOCKING=1 left in train.py.
#[test]
fn cuda_launch_blocking() {
    let root = FakeRoot::healthy(1);
    let (code, report) = json(root.cmd().arg("check").env("CUDA_LAUNCH_BLOCKING", "1"));
    assert_eq!(code, 0, "a warning does not fail by default");
    let f = findings(&report, "GD012")[0];
    assert_eq!(f["severity"], "warning");
    assert!(fix_commands(f).contains("unset CUDA_LAUNCH_BLOCKING"));
    let (code, _) = json(
        root.cmd()
            .args(["check", "--fail-on", "warning"])
            .env("CUDA_LAUNCH_BLOCKING", "1"),
    );
    assert_eq!(code, 1);
    let (_, report) = json(root.cmd().arg("check").env("CUDA_LAUNCH_BLOCKING", "0"));
    assert!(findings(&report, "GD012").is_empty());
}

#[test]
fn debugger_and_injection_variables() {
    let root = FakeRoot::healthy(1);
    let (_, report) = json(
        root.cmd()
            .arg("check")
            .env(
                "CUDA_INJECTION64_PATH",
                "/opt/nsight/libToolsInjection64.so",
            )
            .env("CUDA_DEVICE_WAITS_ON_EXCEPTION", "1")
            .env("CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "0"),
    );
    let titles: Vec<_> = findings(&report, "GD013")
        .iter()
        .map(|f| f["title"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        titles,
        [
            "CUDA_INJECTION64_PATH is set",
            "CUDA_DEVICE_WAITS_ON_EXCEPTION is set"
        ]
    );
}

/// case-12: `export CUDA_VISIBLE_DEVICES=2` on a single-GPU machine.
#[test]
fn visible_devices_names_missing_gpu() {
    let root = FakeRoot::healthy(1);
    let (code, report) = json(root.cmd().arg("check").env("CUDA_VISIBLE_DEVICES", "2"));
    assert_eq!(code, 1);
    let f = findings(&report, "GD010")[0];
    assert_eq!(f["severity"], "error");
    assert!(f["title"]
        .as_str()
        .unwrap()
        .contains("GPU 2 does not exist"));
    let fixes = fix_commands(f);
    assert!(fixes.contains("unset CUDA_VISIBLE_DEVICES"));
    assert!(fixes.contains("export CUDA_VISIBLE_DEVICES=0"));
}

#[test]
fn visible_devices_partly_beyond_the_gpus_is_a_warning() {
    let root = FakeRoot::healthy(2);
    let (code, report) = json(root.cmd().arg("check").env("CUDA_VISIBLE_DEVICES", "1,3,0"));
    assert_eq!(code, 0);
    let f = findings(&report, "GD010")[0];
    assert_eq!(f["severity"], "warning");
    assert!(
        f["title"].as_str().unwrap().contains("CUDA sees only 1"),
        "{}",
        f["title"]
    );
}

#[test]
fn visible_devices_that_hide_everything() {
    let root = FakeRoot::healthy(2);
    for value in ["", "-1", "NoDevFiles"] {
        let (code, report) = json(root.cmd().arg("check").env("CUDA_VISIBLE_DEVICES", value));
        assert_eq!(code, 1, "{value:?}");
        assert_eq!(codes(&report), ["GD009"], "{value:?}");
        assert_eq!(findings(&report, "GD009")[0]["severity"], "error");
    }
}

#[test]
fn malformed_visible_devices() {
    let root = FakeRoot::healthy(2);
    let cases = [
        ("0,0", "error"),
        ("GPU-8e1f6a2c,1", "warning"),
        ("0, 1", "warning"),
        ("gpu0", "error"),
        ("0,1-3", "warning"),
    ];
    for (value, severity) in cases {
        let (_, report) = json(root.cmd().arg("check").env("CUDA_VISIBLE_DEVICES", value));
        let f = findings(&report, "GD011");
        assert_eq!(f.len(), 1, "{value:?}: {report:#}");
        assert_eq!(f[0]["severity"], severity, "{value:?}");
    }
    let (_, report) = json(root.cmd().arg("check").env("CUDA_VISIBLE_DEVICES", "1,0"));
    assert!(codes(&report).is_empty(), "a valid reordering is fine");
}

#[test]
fn visible_devices_counts_gpus_from_pci_when_nodes_are_absent() {
    let root = FakeRoot::new();
    root.gpu("0000:01:00.0", None);
    let (_, report) = json(root.cmd().arg("check").env("CUDA_VISIBLE_DEVICES", "1"));
    let f = findings(&report, "GD010")[0];
    let ev = serde_json::to_string(&f["evidence"]).unwrap();
    assert!(ev.contains("/sys/bus/pci/devices"), "{ev}");
}

#[test]
fn alloc_conf_errors_and_warnings() {
    let root = FakeRoot::healthy(1);
    let (code, report) = json(
        root.cmd()
            .arg("check")
            .env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments=True"),
    );
    assert_eq!(code, 1);
    let f = findings(&report, "GD014")[0];
    assert_eq!(f["severity"], "error");
    assert!(fix_commands(f).contains("expandable_segments:True"));

    let (_, report) = json(
        root.cmd()
            .arg("check")
            .env("PYTORCH_ALLOC_CONF", "max_split_size:128"),
    );
    // The misspelt key is replaced by the one PyTorch knows.
    assert!(fix_commands(findings(&report, "GD014")[0])
        .contains("export PYTORCH_ALLOC_CONF=max_split_size_mb:128"));

    let (code, report) = json(root.cmd().arg("check").env(
        "PYTORCH_CUDA_ALLOC_CONF",
        "backend:cudaMallocAsync,max_split_size_mb:128",
    ));
    assert_eq!(code, 0);
    assert_eq!(findings(&report, "GD015")[0]["severity"], "warning");

    let (_, report) = json(
        root.cmd()
            .arg("check")
            .env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
            .env("PYTORCH_ALLOC_CONF", "max_split_size_mb:256"),
    );
    assert!(findings(&report, "GD015")[0]["title"]
        .as_str()
        .unwrap()
        .contains("both set"));

    let (code, report) = json(root.cmd().arg("check").env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,garbage_collection_threshold:0.6,roundup_power2_divisions:[256:1,512:2,>:8]"));
    assert_eq!(code, 0);
    assert!(codes(&report).is_empty(), "{report:#}");
}

#[test]
fn wsl_does_not_need_the_linux_module_or_uvm() {
    let root = FakeRoot::new();
    root.file(
        "proc/version",
        "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 12.2.0)\n",
    )
    .dir("usr/lib/wsl/lib")
    .node("dxg", 0o666);
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(code, 0, "{report:#}");
    assert!(codes(&report).is_empty(), "{report:#}");
    assert_eq!(report["snapshot"]["platform"]["wsl"]["detected"], true);
}

/// WSL 1 runs Linux programs without a Linux kernel and has no GPU path at all: one error
/// that says so, with the one fix that works (convert the distribution to WSL 2, from
/// Windows, named by WSL_DISTRO_NAME), and none of WSL 2's fixes.
#[test]
fn wsl_1_is_not_wsl_2() {
    let root = FakeRoot::new();
    root.file(
        "proc/version",
        "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) #1237-Microsoft Sat Sep 11 14:32:00 PST 2021\n",
    )
    .file("proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");
    let (code, report) = json(
        root.cmd()
            .arg("check")
            .env("WSL_DISTRO_NAME", "Ubuntu-22.04"),
    );
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["snapshot"]["platform"]["wsl"]["version"], 1);
    assert_eq!(serious_codes(&report), ["GD088"], "{report:#}");
    let f = &report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "GD088")
        .unwrap();
    assert_eq!(f["severity"], "error");
    assert_eq!(f["fix"][0]["command"], "wsl --set-version Ubuntu-22.04 2");
    assert!(
        f["evidence"].to_string().contains("4.4.0-19041-Microsoft"),
        "{f:#}"
    );
    assert!(
        !report["findings"].to_string().contains("ld.wsl.conf"),
        "{report:#}"
    );
    assert!(report["headline"]["text"]
        .as_str()
        .unwrap()
        .starts_with("CUDA will not work here"));
    // `devices` asked to examine GPUs: it fails with the same reason.
    let (code, v) = json(root.cmd().arg("devices"));
    assert_eq!(code, 1, "{v:#}");
    assert!(v["findings"].to_string().contains("GD088"), "{v:#}");
}

#[test]
fn probe_that_outlives_the_budget_is_reported_and_the_rest_still_prints() {
    let root = FakeRoot::healthy(1);
    let start = std::time::Instant::now();
    let (code, report) = json(
        root.cmd()
            .args(["check", "--timeout", "0.5"])
            .env("GPUDOCTOR_FAULT_PROBE_DELAY", "pci:5000"),
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(4),
        "must not wait for the stuck probe"
    );
    assert_eq!(code, 1, "an incomplete report must not pass a CI gate");
    assert_eq!(report["snapshot"]["probes"]["pci"]["status"], "timed_out");
    assert!(report["snapshot"]["pci"].is_null());
    assert_eq!(
        report["snapshot"]["probes"]["kernel_module"]["status"],
        "ok"
    );
    let f = findings(&report, "GD016")[0];
    assert!(f["title"].as_str().unwrap().contains("pci"));
    assert_eq!(f["severity"], "error");
}

#[test]
fn a_probe_that_panics_is_reported_as_failed_at_once() {
    let root = FakeRoot::healthy(1);
    let start = std::time::Instant::now();
    let (code, report) = json(
        root.cmd()
            .args(["check", "--timeout", "5"])
            .env("GPUDOCTOR_FAULT_PROBE_PANIC", "pci"),
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(3),
        "must not wait for the deadline"
    );
    assert_eq!(code, 1);
    assert_eq!(report["snapshot"]["probes"]["pci"]["status"], "failed");
    assert_eq!(report["snapshot"]["probes"]["device_nodes"]["status"], "ok");
    let f = findings(&report, "GD016")[0];
    assert_eq!(f["severity"], "error");
    assert!(
        f["detail"].as_str().unwrap().contains("fault injected"),
        "{f}"
    );
}

#[test]
fn vfio_host_with_nouveau_loaded_is_not_a_nouveau_problem() {
    let root = FakeRoot::new();
    root.modules(&["nouveau", "vfio_pci"]);
    root.gpu("0000:10:00.0", Some("vfio-pci"))
        .gpu("0000:11:00.0", Some("vfio-pci"));
    let (code, report) = json(root.cmd().arg("check"));
    assert_eq!(codes(&report), ["GD004", "GD004"], "{report:#}");
    assert_eq!(code, 0);
}

#[test]
fn vfio_variant_drivers_are_passthrough_not_missing_drivers() {
    let root = FakeRoot::new();
    root.modules(&["nvgrace_gpu_vfio_pci"])
        .gpu("0000:01:00.0", Some("nvgrace-gpu-vfio-pci"));
    let (_, report) = json(root.cmd().arg("check"));
    assert_eq!(codes(&report), ["GD004"], "{report:#}");
}

#[test]
fn gpu_bound_to_an_unexpected_driver_is_a_conflict() {
    let root = FakeRoot::new();
    root.modules(&["simpledrm"])
        .gpu("0000:01:00.0", Some("simpledrm"));
    let (_, report) = json(root.cmd().arg("check"));
    assert_eq!(codes(&report), ["GD003"], "{report:#}");
    assert!(fix_commands(findings(&report, "GD003")[0]).contains("blacklist simpledrm"));
}

#[test]
fn missing_node_fix_names_the_missing_minor() {
    let root = FakeRoot::healthy(2);
    root.driver_gpu("0000:19:00.0", "NVIDIA H100 80GB HBM3", 3)
        .remove("dev/nvidia1");
    let (_, report) = json(root.cmd().arg("check"));
    let f = findings(&report, "GD007")[0];
    assert!(serde_json::to_string(&f["evidence"])
        .unwrap()
        .contains("/dev/nvidia3"));
    let fixes = fix_commands(f);
    assert!(
        fixes.contains("nvidia-modprobe -c=3") && !fixes.contains("-c=1"),
        "{fixes}"
    );
}

#[test]
fn cpu_only_runs_may_hide_gpus_that_do_not_exist() {
    let root = FakeRoot::new();
    for value in ["", "-1"] {
        let (code, report) = json(root.cmd().arg("check").env("CUDA_VISIBLE_DEVICES", value));
        assert_eq!(code, 0, "{value:?}: {report:#}");
        assert_eq!(codes(&report), ["GD001"]);
    }
}

#[test]
fn visible_devices_forms_cuda_accepts() {
    let root = FakeRoot::healthy(2);
    for (value, expect) in [("0,1,", vec![]), ("-0", vec![]), ("+1", vec!["GD011"])] {
        let (_, report) = json(root.cmd().arg("check").env("CUDA_VISIBLE_DEVICES", value));
        assert_eq!(codes(&report), expect, "{value:?}");
        if let Some(f) = findings(&report, "GD011").first() {
            assert_eq!(f["severity"], "warning", "{value:?} still selects a GPU");
        }
    }
}

#[test]
fn lowercase_booleans_are_rejected_like_pytorch_does() {
    let root = FakeRoot::healthy(1);
    let (code, report) = json(
        root.cmd()
            .arg("check")
            .env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:true"),
    );
    assert_eq!(code, 1);
    assert!(fix_commands(findings(&report, "GD014")[0]).contains("expandable_segments:True"));
    let (code, report) = json(root.cmd().arg("check").env(
        "PYTORCH_ALLOC_CONF",
        "expandable_segments:True,max_split_size_mb:512,",
    ));
    assert_eq!(
        (code, codes(&report)),
        (0, vec![]),
        "a trailing comma is fine"
    );
}

#[test]
fn caller_environment_does_not_describe_an_inspected_root() {
    let root = FakeRoot::healthy(2);
    root.remove("dev/nvidia1");
    let (_, report) = json(
        root.cmd()
            .arg("check")
            .env("KUBERNETES_SERVICE_HOST", "10.0.0.1")
            .env("container", "podman"),
    );
    assert!(report["snapshot"]["platform"]["container"]["kind"].is_null());
    assert_eq!(codes(&report), ["GD007"]);
}

#[test]
fn numeric_user_without_an_account() {
    let root = FakeRoot::healthy(1);
    root.chmod("dev/nvidia0", 0o660);
    let (code, report) = json(root.cmd().args(["check", "--user", "3000"]));
    assert_eq!(code, 1);
    assert_eq!(report["snapshot"]["identity"]["uid"], 3000);
    assert!(findings(&report, "GD008")[0]["title"]
        .as_str()
        .unwrap()
        .contains("uid 3000"));
    let (_, report) = json(root.cmd().args(["check", "--user", "3000:4243"]));
    assert_eq!(report["snapshot"]["identity"]["gid"], 4243);
}
