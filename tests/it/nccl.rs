//! NCCL through the real binary: the environment lint (GD076) and GPUDirect RDMA (GD077)
//! on fake roots, and `smoke --nccl` (GD079) with the fake libcuda and the fake libnccl
//! (tests/fake_nccl) loaded by --nccl-lib.

use crate::util;

use std::time::{Duration, Instant};

use crate::util::fake_nccl::{self, FakeNccl, FAKE_NCCL_ENV};
use crate::util::gpu_node::GpuNode;
use crate::util::*;
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// A node whose GPUs hold 16 MiB, so the CPU-emulated steps are quick.
fn node(n: u32) -> GpuNode {
    let mut node = GpuNode::new(n);
    for d in &mut node.cuda().devices {
        d.total_memory = 16 * MIB;
    }
    node
}

/// `smoke --nccl --json` with the fake libnccl configured as `nccl`.
fn smoke_nccl(node: &GpuNode, nccl: &FakeNccl, extra: &[&str]) -> (i32, Value, Duration) {
    let cfg = nccl.write(&node.dir.path().join("nccl"));
    let t = Instant::now();
    let (code, v) = json(
        node.cmd()
            .args(["smoke", "--nccl", "--nccl-lib"])
            .arg(fake_nccl::fake_nccl_lib())
            .args(extra)
            .env(FAKE_NCCL_ENV, cfg),
    );
    (code, v, t.elapsed())
}

fn nccl_run(v: &Value) -> &Value {
    &v["result"]["run"]["nccl"]
}

#[test]
fn a_healthy_all_reduce_is_checked_timed_and_names_its_transport() {
    let node = node(2);
    let (code, v, _) = smoke_nccl(&node, &FakeNccl::default(), &[]);
    assert_eq!(code, 0, "{v:#}");
    assert!(findings(&v, "GD079").is_empty(), "{:?}", codes(&v));
    let n = nccl_run(&v);
    assert_eq!(n["finished"], true, "{n:#}");
    assert_eq!(n["version"], 22105);
    assert_eq!(n["ranks"], serde_json::json!([0, 1]));
    let a = &n["all_reduce"];
    // --transfer-size 4 (GpuNode): 4 MiB per GPU, every element equal to 1 + 2.
    assert_eq!(a["bytes"], 4 * MIB);
    assert_eq!(a["expected"], 3.0);
    assert_eq!(a["wrong_elements"], 0);
    assert_eq!(a["iterations"], 5);
    let (alg, bus) = (
        a["algbw_gbps"].as_f64().unwrap(),
        a["busbw_gbps"].as_f64().unwrap(),
    );
    assert!(
        alg > 0.0 && (bus - alg).abs() < 1e-9 * alg.max(1.0),
        "2 ranks: busbw = algbw ({alg}, {bus})"
    );
    // The request and what NCCL_DEBUG=INFO said.
    assert_eq!(v["nccl"]["chosen_by"], "--nccl-lib");
    assert_eq!(v["nccl"]["verdict"], "passed");
    assert_eq!(
        v["nccl"]["debug"]["transports"],
        serde_json::json!(["P2P/CUMEM/read"])
    );
    assert!(v["nccl"]["debug"]["version_line"]
        .as_str()
        .unwrap()
        .contains("2.21.5"));
    // The human view shows the figures with the verdict's mark.
    let cfg = FakeNccl::default().write(&node.dir.path().join("nccl"));
    let out = run(node
        .cmd()
        .args(["smoke", "--nccl", "--nccl-lib"])
        .arg(fake_nccl::fake_nccl_lib())
        .env(FAKE_NCCL_ENV, cfg));
    assert!(
        out.stdout
            .contains("NCCL all-reduce: 2 GPUs, 4 MiB each: sum correct; busbw"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("via P2P/CUMEM/read; NCCL 2.21.5"),
        "{}",
        out.stdout
    );
}

#[test]
fn p2p_disabled_is_measured_as_configured_and_named() {
    let node = node(2);
    let cfg = FakeNccl::default().write(&node.dir.path().join("nccl"));
    let (code, v) = json(
        node.cmd()
            .args(["check", "--nccl", "--nccl-lib"])
            .arg(fake_nccl::fake_nccl_lib())
            .env(FAKE_NCCL_ENV, cfg)
            .env("NCCL_P2P_DISABLE", "1"),
    );
    let req = &v["snapshot"]["smoke"]["nccl"];
    assert_eq!(
        req["environment"],
        serde_json::json!(["NCCL_P2P_DISABLE=1"])
    );
    assert_eq!(
        req["debug"]["transports"],
        serde_json::json!(["SHM/direct/direct"])
    );
    assert!(req["debug"]["settings"]
        .to_string()
        .contains("NCCL_P2P_DISABLE set by environment to 1"));
    // The lint judges the variable (a warning with two GPUs); the all-reduce passed.
    let f = findings(&v, "GD076");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    assert_eq!(f[0]["severity"], "warning");
    assert!(findings(&v, "GD079").is_empty());
    assert_eq!(code, 0);
}

#[test]
fn a_wrong_sum_is_an_error_with_the_element() {
    let node = node(2);
    let nccl = FakeNccl {
        wrong_sum: true,
        ..FakeNccl::default()
    };
    let (code, v, _) = smoke_nccl(&node, &nccl, &[]);
    assert_eq!(code, 1);
    let f = findings(&v, "GD079");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    assert_eq!(f[0]["severity"], "error");
    assert!(
        f[0]["title"].as_str().unwrap().contains("wrong sum (1 of"),
        "{}",
        f[0]["title"]
    );
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("first on GPU 1, element 7: 4 instead of 3"));
    assert_eq!(v["nccl"]["verdict"], "error");
}

#[test]
fn an_init_failure_carries_nccls_own_words() {
    let node = node(2);
    let nccl = FakeNccl {
        init_error: Some(2),
        init_message: Some("Bootstrap : no socket interface found".into()),
        ..FakeNccl::default()
    };
    let (code, v, _) = smoke_nccl(&node, &nccl, &[]);
    assert_eq!(code, 1);
    let f = findings(&v, "GD079");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("could not initialise a communicator (ncclCommInitAll: ncclSystemError)"),
        "{title}"
    );
    let detail = f[0]["detail"].as_str().unwrap();
    assert!(detail.contains("unhandled system error"), "{detail}");
    assert!(
        detail.contains("last error: Bootstrap : no socket interface found"),
        "{detail}"
    );
    assert_eq!(nccl_run(&v)["error"]["name"], "ncclSystemError");
    // The NCCL WARN line from the debug file is context.
    assert!(
        f[0].to_string().contains("NCCL WARN Bootstrap"),
        "{:#}",
        f[0]
    );
    // An unhandled CUDA error the same way.
    let nccl = FakeNccl {
        init_error: Some(1),
        init_message: Some("Cuda failure 'out of memory'".into()),
        ..FakeNccl::default()
    };
    let (_, v, _) = smoke_nccl(&node, &nccl, &[]);
    assert!(findings(&v, "GD079")[0]["title"]
        .as_str()
        .unwrap()
        .contains("ncclUnhandledCudaError"));
}

#[test]
fn a_hang_is_bounded_by_the_timeout_and_names_the_call() {
    let node = node(2);
    for sym in ["ncclGroupEnd", "ncclCommInitAll"] {
        let nccl = FakeNccl {
            hang_in: Some(sym.into()),
            ..FakeNccl::default()
        };
        let (code, v, took) = smoke_nccl(&node, &nccl, &["--timeout", "4"]);
        assert!(took < Duration::from_secs(20), "{sym}: took {took:?}");
        assert_eq!(code, 1, "{sym}");
        assert_eq!(v["result"]["status"], "timed_out");
        let stuck = v["result"]["stuck_at"].to_string();
        assert!(stuck.contains(&format!("NCCL: {sym}")), "{sym}: {stuck}");
        let f = findings(&v, "GD079");
        assert_eq!(f.len(), 1, "{sym}: {:?}", codes(&v));
        assert!(
            f[0]["title"].as_str().unwrap().contains("hung"),
            "{}",
            f[0]["title"]
        );
        assert!(
            f[0]["detail"].as_str().unwrap().contains("GPU 0,1"),
            "{}",
            f[0]["detail"]
        );
        // One verdict: the generic hang (GD059) defers to it.
        assert!(findings(&v, "GD059").is_empty(), "{sym}: {:?}", codes(&v));
        // The GPUs' own steps finished and passed.
        assert_eq!(v["result"]["run"]["devices"][1]["finished"], true);
    }
}

#[test]
fn teardown_that_hangs_does_not_fail_the_run() {
    let node = node(2);
    let nccl = FakeNccl {
        hang_in: Some("ncclCommDestroy".into()),
        ..FakeNccl::default()
    };
    let (code, v, _) = smoke_nccl(&node, &nccl, &["--timeout", "10"]);
    assert_eq!(code, 0, "{:?}", codes(&v));
    assert_eq!(v["result"]["status"], "ran");
    assert_eq!(nccl_run(&v)["finished"], true);
}

#[test]
fn a_missing_library_is_an_error_and_under_root_nothing_is_loaded_from_the_tree() {
    let node = node(1);
    let missing = node.dir.path().join("no/libnccl.so.2");
    let (code, v) = json(
        node.cmd()
            .args(["smoke", "--nccl", "--nccl-lib"])
            .arg(&missing),
    );
    assert_eq!(code, 1);
    let f = findings(&v, "GD079");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("could not be loaded: not found"));
    assert_eq!(nccl_run(&v)["load_error"]["code"], "library_not_found");
    // GpuNode inspects a fake --root: without --nccl-lib the step is refused, the GPUs'
    // own steps still run.
    let (code, v) = json(node.cmd().args(["smoke", "--nccl"]));
    let refused = v["nccl"]["refused"].as_str().unwrap();
    assert!(
        refused.contains("under --root nothing is loaded"),
        "{refused}"
    );
    assert!(v["result"]["run"]["nccl"].is_null());
    assert_eq!(v["result"]["status"], "ran");
    let f = findings(&v, "GD079");
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(code, 0);
    // A path inside the tree is refused too.
    let inside = node.root.p("usr/lib/libnccl.so.2");
    let (_, v) = json(
        node.cmd()
            .args(["smoke", "--nccl", "--nccl-lib"])
            .arg(&inside),
    );
    assert!(v["nccl"]["refused"]
        .as_str()
        .unwrap()
        .contains("lies under --root"));
}

#[test]
fn the_environment_variable_names_the_library() {
    let node = node(2);
    let (_, v) = json(
        node.cmd()
            .args(["smoke", "--nccl"])
            .env("GPUDOCTOR_NCCL_LIB", fake_nccl::fake_nccl_lib()),
    );
    assert_eq!(nccl_run(&v)["all_reduce"]["wrong_elements"], 0, "{v:#}");
}

// ---- the static rules on fake roots ---------------------------------------------------

fn host_with_interfaces(interfaces: &[&str]) -> FakeRoot {
    let r = FakeRoot::healthy(2);
    for i in interfaces {
        r.dir(&format!("sys/class/net/{i}"));
    }
    r
}

#[test]
fn socket_ifname_naming_no_interface_is_an_error() {
    let r = host_with_interfaces(&["eth0", "lo"]);
    let (code, v) = json(r.cmd().arg("check").env("NCCL_SOCKET_IFNAME", "=ib0"));
    let f = findings(&v, "GD076");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    assert_eq!(f[0]["severity"], "error");
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("Bootstrap : no socket interface found"));
    assert!(f[0].to_string().contains("interfaces here: eth0, lo"));
    assert_eq!(code, 1);
    // Prefixes and exclusions that leave an interface are clean.
    for ok in ["eth", "^docker,lo", "=eth0"] {
        let (_, v) = json(r.cmd().arg("check").env("NCCL_SOCKET_IFNAME", ok));
        assert!(findings(&v, "GD076").is_empty(), "{ok}: {:?}", codes(&v));
    }
}

#[test]
fn ib_hca_naming_no_device_is_a_warning_and_disabled_transports_are_named() {
    let r = host_with_interfaces(&["eth0"]);
    r.file("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
        .file(
            "sys/class/infiniband/mlx5_0/ports/1/link_layer",
            "InfiniBand\n",
        )
        .modules(&["nvidia_uvm", "nvidia", "nvidia_peermem"]);
    let (_, v) = json(r.cmd().arg("check").env("NCCL_IB_HCA", "=mlx5_4"));
    let f = findings(&v, "GD076");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0].to_string().contains("mlx5_0 (active ports: mlx5_0:1)"));
    let (_, v) = json(r.cmd().arg("check").env("NCCL_IB_HCA", "mlx5_0:1"));
    assert!(findings(&v, "GD076").is_empty(), "{:?}", codes(&v));
    let (_, v) = json(
        r.cmd()
            .arg("check")
            .env("NCCL_IB_DISABLE", "1")
            .env("NCCL_P2P_DISABLE", "1"),
    );
    let f = findings(&v, "GD076");
    assert_eq!(f.len(), 2, "{:?}", codes(&v));
    assert!(f.iter().all(|f| f["severity"] == "warning"));
}

#[test]
fn hcas_without_peermem_are_a_warning_with_the_host_fix() {
    let r = FakeRoot::healthy(2);
    r.dir("sys/class/infiniband/mlx5_0/ports/1");
    // The open kernel modules on Linux 6.8: DMA-BUF can stand in for the module.
    let (_, v) = json(r.cmd().arg("check"));
    let f = findings(&v, "GD077");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    assert_eq!(f[0]["severity"], "info");
    assert!(f[0]["detail"].as_str().unwrap().contains("DMA-BUF"));
    // The proprietary modules cannot.
    r.file(
        "proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Release Build  (dvs-builder@U22-I3-H04-03-1)  Sat Sep 20 00:47:16 UTC 2025\n",
    );
    let (_, v) = json(r.cmd().arg("check"));
    let f = findings(&v, "GD077");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    assert_eq!(f[0]["severity"], "warning");
    let fixes = fix_commands(f[0]);
    assert!(fixes.contains("sudo modprobe nvidia-peermem"), "{fixes}");
    assert!(
        fixes.contains("/etc/modules-load.d/nvidia-peermem.conf"),
        "{fixes}"
    );
    // Loaded (or the legacy module, or seen in /sys/module): clean.
    r.modules(&["nvidia_uvm", "nvidia", "nv_peer_mem"]);
    let (_, v) = json(r.cmd().arg("check"));
    assert!(findings(&v, "GD077").is_empty(), "{:?}", codes(&v));
    r.modules(&["nvidia_uvm", "nvidia"])
        .dir("sys/module/nvidia_peermem");
    let (_, v) = json(r.cmd().arg("check"));
    assert!(findings(&v, "GD077").is_empty(), "{:?}", codes(&v));
    // No HCA: nothing to say.
    let (_, v) = json(FakeRoot::healthy(2).cmd().arg("check"));
    assert!(findings(&v, "GD077").is_empty());
}

#[test]
fn check_shows_the_all_reduce_under_the_smoke_test_with_its_verdict() {
    let node = node(2);
    let nccl = FakeNccl {
        wrong_sum: true,
        ..FakeNccl::default()
    };
    let cfg = nccl.write(&node.dir.path().join("nccl"));
    let out = run(node
        .cmd()
        .args(["check", "--color", "never", "--nccl-lib"])
        .arg(fake_nccl::fake_nccl_lib())
        .env(FAKE_NCCL_ENV, cfg));
    assert_eq!(out.code, 1);
    let line = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("✗ NCCL"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(line.contains("1 wrong elements"), "{line}");
    assert!(out.stdout.contains("error[GD079]"), "{}", out.stdout);
}

#[test]
fn a_crash_inside_libnccl_is_its_finding_not_the_drivers() {
    let node = node(2);
    let nccl = FakeNccl {
        crash_in: Some("ncclAllReduce".into()),
        ..FakeNccl::default()
    };
    let (code, v, _) = smoke_nccl(&node, &nccl, &[]);
    assert_eq!(code, 1);
    assert_eq!(v["result"]["status"], "crashed");
    let f = findings(&v, "GD079");
    assert_eq!(f.len(), 1, "{:?}", codes(&v));
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("crashed the smoke test (signal 11, NCCL: ncclAllReduce (GPU 0))"),
        "{title}"
    );
    assert!(findings(&v, "GD059").is_empty(), "{:?}", codes(&v));
}

#[test]
fn nccl_flags_are_refused_where_nothing_runs() {
    let r = FakeRoot::healthy(1);
    let saved = r.p("report.json");
    let out = run(r.cmd().args(["check", "--json", "--output"]).arg(&saved));
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let out = run(gpudoctor().args(["check", "--nccl", "--from"]).arg(&saved));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--nccl"), "{}", out.stderr);
    // `devices` has no smoke test to add it to.
    let out = run(gpudoctor().args(["devices", "--nccl"]));
    assert_eq!(out.code, 2);
}

#[test]
fn a_slow_nccl_call_shows_on_a_terminal() {
    if which::which("script").is_err() {
        crate::util::skip(format_args!("script(1) is not installed"));
        return;
    }
    let node = node(2);
    let nccl = FakeNccl {
        hang_in: Some("ncclCommInitAll".into()),
        ..FakeNccl::default()
    };
    let nccl_cfg = nccl.write(&node.dir.path().join("nccl"));
    let nvml = node.nvml.write(&node.dir.path().join("nvml"));
    let cuda = node
        .cuda
        .as_ref()
        .unwrap()
        .write(&node.dir.path().join("cuda"));
    let line = format!(
        "{} smoke --root {} --nvml-lib {} --cuda-lib {} --nccl-lib {} --matmul-size 48 --transfer-size 4 --timeout 3",
        assert_cmd::cargo::cargo_bin("gpudoctor").display(),
        node.root.path().display(),
        util::fake_nvml::fake_nvml_lib().display(),
        util::fake_cuda::fake_cuda_lib().display(),
        fake_nccl::fake_nccl_lib().display(),
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .env(util::fake_nvml::FAKE_NVML_ENV, nvml)
        .env(util::fake_cuda::FAKE_CUDA_ENV, cuda)
        .env(FAKE_NCCL_ENV, nccl_cfg)
        .output()
        .expect("run script(1)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("smoke test: NCCL ncclCommInitAll"), "{text}");
    assert!(
        text.contains("NCCL all-reduce: stopped in NCCL: ncclCommInitAll"),
        "{text}"
    );
}

#[test]
fn torch_bound_to_a_system_nccl_of_another_version_is_a_warning() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let r = FakeRoot::healthy(1);
    let site = r.torch_venv("2.5.1+cu124", Some("12.4"), &["nvidia-nccl-cu12==2.21.5"]);
    r.dist(&site, "nvidia-nccl-cu12", "2.21.5");
    // A libtorch_cuda.so without the RUNPATH into the wheel: the loader cache decides.
    r.bytes(
        &format!("{site}/torch/lib/libtorch_cuda.so"),
        &util::elf::shared_object("libtorch_cuda.so", &["libnccl.so.2"]),
    );
    r.lib(
        "usr/lib/x86_64-linux-gnu",
        "libnccl.so.2.18.3",
        "libnccl.so.2",
        &[],
    )
    .ld_cache(&[
        ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
        ("libnccl.so.2", "/usr/lib/x86_64-linux-gnu/libnccl.so.2"),
    ]);
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["check", "--no-smoke"]),
    );
    let f = findings(&v, "GD078");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("torch loads NCCL 2.18.3 from /usr/lib/x86_64-linux-gnu/libnccl.so.2")
            && title.contains("nvidia-nccl-cu12==2.21.5"),
        "{title}"
    );
    // `libs` reports it too.
    let (_, v) = json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("libs"));
    assert_eq!(findings(&v, "GD078").len(), 1, "{:#}", v["findings"]);
}
