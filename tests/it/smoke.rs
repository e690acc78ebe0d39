//! The smoke test (GD053–GD059, `gpudoctor smoke`, the smoke part of `check`) through the
//! real binary loading the fake libcuda (tests/fake_cuda) with `--cuda-lib`, next to the
//! fake NVML for the link widths and processes.

use crate::util;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::util::fake_cuda::{self, FAKE_CUDA_ENV};
use crate::util::fake_nvml::{self, FAKE_NVML_ENV};
use crate::util::gpu_node::GpuNode;
use crate::util::*;
use serde_json::Value;

const MIB: u64 = 1 << 20;

type Node = GpuNode;

/// `check --json` on the node.
fn check(node: &GpuNode) -> (i32, Value) {
    json(node.cmd().arg("check"))
}

fn smoke(v: &Value) -> &Value {
    &v["snapshot"]["smoke"]
}

fn run_of(v: &Value) -> &Value {
    &smoke(v)["result"]["run"]
}

fn device(v: &Value, i: usize) -> &Value {
    &run_of(v)["devices"][i]
}

fn smoke_codes(v: &Value) -> Vec<String> {
    codes(v)
        .into_iter()
        .filter(|c| ("GD053".."GD060").contains(&c.as_str()))
        .collect()
}

/// How long a killed worker may take to die before gpudoctor calls it unkillable
/// (src/runner.rs): the most a deadline may be overrun by.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// A node whose GPUs hold 16 MiB: the CPU-emulated memory probe, most of a healthy run,
/// then takes a fraction of a second, so deadlines can be short.
fn small_node(n: u32) -> Node {
    let mut node = Node::new(n);
    for d in &mut node.cuda().devices {
        d.total_memory = 16 * MIB;
    }
    node
}

/// What `args` cost on a healthy copy of the node, measured now, so that deadlines and
/// bounds grow with the load on the machine instead of guessing at it.
struct Baseline {
    /// The whole command, by the test's clock.
    wall: Duration,
    /// The smoke worker's own run, by its clock.
    worker: Duration,
}

fn baseline(node: &Node, args: &[&str]) -> Baseline {
    let t = Instant::now();
    let (_, v) = json(node.cmd().args(args));
    let wall = t.elapsed();
    let run = if v["snapshot"].is_object() {
        run_of(&v)
    } else {
        &v["result"]["run"]
    };
    assert_eq!(
        run["finished"], true,
        "the healthy baseline did not finish: {v:#}"
    );
    let worker = Duration::from_secs_f64(run["elapsed_ms"].as_f64().unwrap() / 1e3);
    Baseline { wall, worker }
}

impl Baseline {
    /// A deadline (whole seconds, at least `floor`) leaving the work before a hang five
    /// times the room it took healthy.
    fn deadline(&self, floor: u64) -> u64 {
        floor.max((self.worker.as_secs_f64() * 5.0).ceil() as u64)
    }

    /// The longest a command hung in the smoke worker may take: the work before it went
    /// silent (at most the healthy worker's run), the deadline, the kill's grace, and the
    /// rest of the command (at most the healthy run, four times over for a load that changes
    /// between the two runs).
    fn bound(&self, deadline: u64) -> Duration {
        Duration::from_secs(deadline) + KILL_GRACE + self.wall * 4 + self.worker
    }
}

/// The smoke probe of a `check` report was killed `deadline` after the worker went silent
/// and reaped within the grace (its own clock, so the rest of the check does not count):
/// at most `work` (what the healthy run took) went on before the silence.
fn killed_at_deadline(v: &Value, deadline: u64, work: Duration) {
    let took = Duration::from_micros(
        v["snapshot"]["probes"]["smoke"]["elapsed_us"]
            .as_u64()
            .unwrap(),
    );
    let deadline = Duration::from_secs(deadline);
    assert!(
        took >= deadline && took < deadline + KILL_GRACE + work,
        "the smoke probe took {took:?} with a {deadline:?} deadline"
    );
    assert_eq!(smoke(v)["result"]["unkillable"], false);
}

#[test]
fn a_healthy_node_passes_every_step_on_every_gpu() {
    let node = Node::new(2);
    let (code, v) = check(&node);
    assert_eq!(smoke(&v)["result"]["status"], "ran", "{:#}", smoke(&v));
    assert!(smoke_codes(&v).is_empty(), "{:?}", codes(&v));
    assert_eq!(code, 0, "{:?}", codes(&v));
    let run = run_of(&v);
    assert_eq!(run["driver_version"], 13000);
    assert_eq!(run["device_count"], 2);
    assert!(run["loaded_from"]
        .as_str()
        .unwrap()
        .ends_with("libfake_cuda.so"));
    for i in 0..2 {
        let d = device(&v, i);
        assert_eq!(d["finished"], true);
        assert_eq!(d["info"]["name"], "NVIDIA H100 80GB HBM3");
        assert_eq!(d["info"]["compute_capability"], "9.0");
        assert_eq!(
            d["info"]["pci_bus_id"],
            format!("0000:{:02x}:00.0", 0x18 + i)
        );
        assert!(d["context"]["ok"]["ms"].is_number());
        let m = &d["matmul"]["ok"];
        assert_eq!(m["correct"], true, "{m:#}");
        assert_eq!(m["n"], 48);
        assert_eq!(m["wrong_elements"], 0);
        assert!(m["gflops"].as_f64().unwrap() > 0.0);
        let mem = &d["memory"]["ok"];
        assert_eq!(mem["mismatches"], 0);
        // 90 % of the free 64 MiB less the margin (5 % of free), every byte reached.
        let target = mem["target"].as_u64().unwrap();
        assert!((50 * MIB..=58 * MIB).contains(&target), "{mem:#}");
        assert_eq!(mem["allocated"], target);
        assert!(mem["alloc_error"].is_null());
        assert!(mem["lowered_because"].is_null());
        let t = &d["transfer"]["ok"];
        assert_eq!(t["bytes"], 4 * MIB);
        for k in [
            "pinned_h2d_gbps",
            "pinned_d2h_gbps",
            "pageable_h2d_gbps",
            "pageable_d2h_gbps",
        ] {
            assert!(t[k].as_f64().unwrap() > 0.0, "{k}: {t:#}");
        }
    }
    assert_eq!(v["snapshot"]["probes"]["smoke"]["status"], "ok");
}

#[test]
fn smoke_subcommand_reports_per_gpu_and_device_selects_one() {
    let node = Node::new(2);
    let r = run(node.cmd().arg("smoke"));
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("2 of 2 GPU(s) passed"), "{}", r.stdout);
    // A row per GPU in the grid of steps; the figures of what passed are in the other formats.
    let row = r
        .stdout
        .lines()
        .find(|l| l.starts_with("✓ 1 "))
        .unwrap_or_else(|| panic!("GPU 1's row:\n{}", r.stdout));
    assert!(row.contains("H100 80GB HBM3  0000:19:00.0"), "{row}");
    assert!(!r.stdout.contains("48×48 FP32"), "{}", r.stdout);
    let md = run(node.cmd().args(["smoke", "--format", "markdown"]));
    assert!(md.stdout.contains("48×48 FP32"), "{}", md.stdout);
    assert!(r.stdout.contains("No GPU problems found."), "{}", r.stdout);
    // stderr is not a terminal: no progress line.
    assert!(!r.stderr.contains("smoke test:"), "{}", r.stderr);

    let (code, v) = json(node.cmd().args(["smoke", "--device", "1"]));
    assert_eq!(code, 0);
    let devs = v["result"]["run"]["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 1);
    assert_eq!(devs[0]["ordinal"], 1);
    assert_eq!(v["settings"]["device"], 1);
    assert_eq!(v["links"][0]["nvml_index"], 1);
    assert_eq!(v["links"][0]["link"]["generation"], 5);

    // Its UUID, a unique prefix of it, or its PCI bus id in any form pick the same GPU.
    let uuid = devs[0]["info"]["uuid"].as_str().unwrap().to_string();
    for id in [
        uuid.as_str(),
        uuid.trim_start_matches("GPU-"),
        "0000:19:00.0",
        "00000000:19:00.0",
        "19:00.0",
    ] {
        let (code, v) = json(node.cmd().args(["smoke", "--device", id]));
        assert_eq!(code, 0, "{id}");
        let devs = v["result"]["run"]["devices"].as_array().unwrap();
        assert_eq!(devs.len(), 1, "{id}");
        assert_eq!(devs[0]["ordinal"], 1, "{id}");
    }
    // What no GPU has, several share, or cannot name a GPU is a usage error saying so.
    for (id, says) in [
        (
            "0000:5e:00.0",
            "--device 0000:5e:00.0: no GPU is at PCI address 0000:5e:00.0",
        ),
        (&uuid[..uuid.len() - 3], "is the start of 2 UUIDs"),
        ("a b", "name a GPU by its CUDA ordinal, UUID"),
    ] {
        let r = run(node.cmd().args(["smoke", "--device", id]));
        assert_eq!(r.code, 2, "{id}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{id}: {}", r.stderr);
    }

    // A device beyond the visible ones is a typo, not a broken GPU: a usage error that
    // names the valid ordinals (it used to be a GD055 error with exit 1).
    let r = run(node.cmd().args(["smoke", "--device", "5"]));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("--device 5: CUDA sees 2 GPU(s), ordinals 0–1"),
        "{}",
        r.stderr
    );

    // Markdown is a real table: one row per GPU and step, marked as `check` marks it.
    let r = run(node.cmd().args(["smoke", "--format", "markdown"]));
    assert!(r.stdout.starts_with("## gpudoctor smoke"), "{}", r.stdout);
    assert!(!r.stdout.contains("```"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("| ✓ | GPU 1  NVIDIA H100 80GB HBM3  cc 9.0  0000:19:00.0 | matmul |"),
        "{}",
        r.stdout
    );
}

#[test]
fn no_smoke_and_quick_skip_it_and_start_no_worker() {
    let node = Node::new(1);
    for flag in ["--no-smoke", "--quick"] {
        let (_, v) = json(node.cmd().args(["check", flag]));
        assert!(smoke(&v).is_null(), "{flag}");
        let p = &v["snapshot"]["probes"]["smoke"];
        assert_eq!(p["status"], "skipped");
        assert!(p["detail"].as_str().unwrap().contains(flag));
    }
    // --skip smoke too.
    let (_, v) = json(node.cmd().args(["check", "--skip", "smoke"]));
    assert_eq!(v["snapshot"]["probes"]["smoke"]["status"], "skipped");
}

#[test]
fn cuinit_errors_map_to_their_causes_and_fixes() {
    // (code, name in the title, a phrase of the fix)
    let cases: &[(i32, &str, &str)] = &[
        (100, "CUDA_ERROR_NO_DEVICE", "CUDA_VISIBLE_DEVICES"),
        (
            35,
            "cudaErrorInsufficientDriver",
            "Upgrade the NVIDIA driver",
        ),
        (802, "CUDA_ERROR_SYSTEM_NOT_READY", "nvidia-fabricmanager"),
        (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cuda-compat"),
        (
            804,
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "/usr/local/cuda/compat",
        ),
        // nvidia_uvm is loaded on this node: the other cause, an Xid, is what is left.
        (999, "CUDA_ERROR_UNKNOWN", "dmesg | grep -i xid"),
        (34, "CUDA_ERROR_STUB_LIBRARY", "stubs"),
        (
            3,
            "CUDA_ERROR_NOT_INITIALIZED",
            "/proc/driver/nvidia/version",
        ),
    ];
    for &(rc, name, fix) in cases {
        let mut node = Node::new(1);
        node.cuda().init_error = Some(rc);
        let (code, v) = check(&node);
        assert_eq!(code, 1, "{rc}: {:?}", codes(&v));
        let f = findings(&v, "GD053");
        assert_eq!(f.len(), 1, "{rc}: {:#}", v["findings"]);
        assert_eq!(f[0]["severity"], "error");
        assert!(any_title(&f, name), "{rc}: {}", f[0]["title"]);
        assert!(
            fix_commands(f[0]).contains(fix),
            "{rc}: {}",
            fix_commands(f[0])
        );
        assert_eq!(run_of(&v)["init_error"]["code"], rc);
        // No device work after a failed cuInit, and nothing else blamed on it.
        assert!(run_of(&v)["devices"].as_array().unwrap().is_empty());
        assert_eq!(smoke_codes(&v), vec!["GD053"], "{rc}");
    }
}

#[test]
fn no_device_with_visible_devices_set_blames_the_variable() {
    let node = Node::new(2);
    // The driver (fake) hides everything for an invalid first entry, like the real one.
    let (code, v) = json(
        node.cmd()
            .env("CUDA_VISIBLE_DEVICES", "GPU-nonexistent")
            .arg("check"),
    );
    assert_eq!(code, 1);
    // cuInit itself says NO_DEVICE (as the real driver does), and the fix names the variable.
    let f = findings(&v, "GD053");
    assert!(any_title(&f, "CUDA_ERROR_NO_DEVICE"), "{:#}", v["findings"]);
    assert!(
        fix_commands(f[0]).contains("unset CUDA_VISIBLE_DEVICES"),
        "{}",
        fix_commands(f[0])
    );
    assert_eq!(run_of(&v)["cuda_visible_devices"], "GPU-nonexistent");
    // One visible GPU of two: no count mismatch (CUDA_VISIBLE_DEVICES explains it).
    let (code, v) = json(node.cmd().env("CUDA_VISIBLE_DEVICES", "1").arg("check"));
    assert!(findings(&v, "GD054").is_empty(), "{:#}", v["findings"]);
    assert_eq!(run_of(&v)["device_count"], 1);
    assert_eq!(device(&v, 0)["info"]["pci_bus_id"], "0000:19:00.0");
    assert!(!codes(&v).contains(&"GD053".to_string()), "{code}");
}

#[test]
fn context_failures_are_per_gpu_and_the_others_still_run() {
    for (rc, name, fix) in [
        (46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "-c DEFAULT"),
        (2, "CUDA_ERROR_OUT_OF_MEMORY", "--query-compute-apps"),
        (214, "CUDA_ERROR_ECC_UNCORRECTABLE", "ROW_REMAPPER"),
    ] {
        let mut node = Node::new(2);
        node.cuda().device(1).ctx_error = Some(rc);
        let (code, v) = check(&node);
        assert_eq!(code, 1);
        let f = findings(&v, "GD055");
        assert_eq!(f.len(), 1, "{:#}", v["findings"]);
        assert!(
            any_title(&f, "CUDA device 1") && any_title(&f, name),
            "{}",
            f[0]["title"]
        );
        assert!(fix_commands(f[0]).contains(fix), "{}", fix_commands(f[0]));
        assert_eq!(device(&v, 1)["context"]["failed"]["error"]["code"], rc);
        assert!(device(&v, 1)["matmul"].is_null());
        assert_eq!(device(&v, 0)["matmul"]["ok"]["correct"], true);
    }
}

#[test]
fn exclusive_gpu_held_by_another_process_is_named() {
    let mut node = Node::new(1);
    node.cuda().device(0).ctx_error = Some(46);
    node.nvml.gpu(0).compute_mode = Some(3); // EXCLUSIVE_PROCESS
    node.nvml.gpu(0).compute_processes = Some(vec![fake_nvml::Process {
        pid: 4242,
        used_memory: Some(1 << 30),
        gpu_instance_id: None,
        compute_instance_id: None,
    }]);
    let (_, v) = check(&node);
    let f = findings(&v, "GD055");
    let ev = f[0]["evidence"].to_string();
    assert!(ev.contains("held by 4242"), "{ev}");
    assert!(ev.to_lowercase().contains("exclusive"), "{ev}");
}

#[test]
fn kernels_that_do_not_load_skip_the_compute_steps_with_the_jit_log() {
    let mut node = Node::new(1);
    // A driver whose JIT is older than the PTX (ISA 6.0).
    node.cuda().max_ptx_version = Some("5.0".into());
    let (code, v) = check(&node);
    assert_eq!(code, 1);
    let f = findings(&v, "GD055");
    assert!(
        any_title(&f, "cannot load PTX kernels")
            && any_title(&f, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
        "{:#}",
        v["findings"]
    );
    assert!(fix_commands(f[0]).contains("Update the NVIDIA driver"));
    let d = device(&v, 0);
    assert_eq!(d["module"]["failed"]["error"]["code"], 222);
    assert!(d["matmul"]["skipped"]["reason"]
        .as_str()
        .unwrap()
        .contains("did not load"));
    assert!(d["memory"]["skipped"].is_object());
    // Copies need no kernels: the transfer test still ran.
    assert!(d["transfer"]["ok"].is_object());

    let mut node = Node::new(1);
    node.cuda().device(0).module_error = Some(209);
    let (_, v) = check(&node);
    let f = findings(&v, "GD055");
    assert!(any_title(&f, "CUDA_ERROR_NO_BINARY_FOR_GPU"));
    assert!(
        f[0]["evidence"].to_string().contains("fake JIT: error 209"),
        "{}",
        f[0]["evidence"]
    );
}

#[test]
fn a_wrong_product_is_an_error_with_the_error_size() {
    let mut node = Node::new(2);
    node.cuda().device(0).matmul_wrong = true;
    let (code, v) = check(&node);
    assert_eq!(code, 1);
    let f = findings(&v, "GD056");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    assert!(any_title(&f, "CUDA device 0") && any_title(&f, "wrong matrix product"));
    let m = &device(&v, 0)["matmul"]["ok"];
    assert_eq!(m["correct"], false);
    assert_eq!(m["freivalds_passed"], false);
    assert!(m["wrong_elements"].as_u64().unwrap() > 0);
    assert!(m["max_abs_error"].as_f64().unwrap() >= 0.99, "{m:#}");
    assert!(
        fix_commands(f[0]).contains("nvidia-smi -i 0 -rgc"),
        "{}",
        fix_commands(f[0])
    );
    assert_eq!(device(&v, 1)["matmul"]["ok"]["correct"], true);
}

#[test]
fn flipped_bits_are_counted_exactly() {
    let mut node = Node::new(1);
    node.cuda().device(0).bit_flips = 3;
    let (code, v) = check(&node);
    assert_eq!(code, 1);
    let m = &device(&v, 0)["memory"]["ok"];
    let chunks = m["chunks"].as_u64().unwrap();
    assert!(chunks >= 1);
    // Three words per chunk per pass (pattern, then its complement).
    assert_eq!(m["mismatches"].as_u64().unwrap(), 3 * chunks * 2, "{m:#}");
    let f = findings(&v, "GD057");
    assert!(
        any_title(&f, "memory words read back wrong"),
        "{:#}",
        v["findings"]
    );
    assert!(fix_commands(f[0]).contains("ECC,ROW_REMAPPER"));
}

#[test]
fn allocation_failing_well_below_free_memory_is_a_warning() {
    let mut node = Node::new(1);
    node.cuda().device(0).oom_after_bytes = Some(20 * MIB);
    let (code, v) = check(&node);
    let m = &device(&v, 0)["memory"]["ok"];
    assert_eq!(m["alloc_error"]["name"], "CUDA_ERROR_OUT_OF_MEMORY");
    assert!(m["allocated"].as_u64().unwrap() <= 20 * MIB, "{m:#}");
    // Smaller pieces were tried after the first failure.
    assert!(m["allocated"].as_u64().unwrap() >= 16 * MIB, "{m:#}");
    let f = findings(&v, "GD057");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    assert!(any_title(&f, "could allocate only"));
    assert_eq!(code, 0);
    // The memory that was allocated was still verified.
    assert_eq!(m["mismatches"], 0);
    assert!(m["verify_gbps"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_gpu_other_processes_use_gets_a_lower_target() {
    let mut node = Node::new(1);
    node.nvml.gpu(0).compute_processes = Some(vec![fake_nvml::Process {
        pid: 777,
        used_memory: Some(2 << 30),
        gpu_instance_id: None,
        compute_instance_id: None,
    }]);
    let (_, v) = check(&node);
    let m = &device(&v, 0)["memory"]["ok"];
    assert_eq!(m["fraction"], 0.5);
    assert!(m["lowered_because"]
        .as_str()
        .unwrap()
        .contains("other compute processes"));
    assert!(m["target"].as_u64().unwrap() <= 32 * MIB);
}

#[test]
fn slow_pinned_copies_against_the_link_are_a_warning() {
    // A gen1 x4 link carries 1 GB/s per direction; the fake pins host-to-device at 0.3.
    let slow = |h2d: Option<f64>| {
        let mut node = Node::new(1);
        if let Some(p) = node.nvml.gpu(0).pcie.as_mut() {
            p.gen = 1;
            p.max_gen = 1;
            p.width = 4;
            p.max_width = 4;
        }
        node.cuda().device(0).h2d_gbps = h2d;
        let mut c = node.cmd();
        c.args(["check", "--transfer-size", "32"]);
        json(&mut c).1
    };
    let v = slow(Some(0.3));
    let f = findings(&v, "GD058");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    assert!(
        any_title(&f, "host→device") && any_title(&f, "PCIe gen1 x4"),
        "{}",
        f[0]["title"]
    );
    assert!(!f[0]["title"].as_str().unwrap().contains("device→host"));
    let t = &device(&v, 0)["transfer"]["ok"];
    assert!(t["pinned_h2d_gbps"].as_f64().unwrap() < 0.35, "{t:#}");
    // Unthrottled copies fill the same link: no finding.
    let v = slow(None);
    assert!(findings(&v, "GD058").is_empty(), "{:#}", v["findings"]);
    // Small copies are not judged.
    let node = Node::new(1);
    let (_, v) = check(&node);
    let checks = v["checks"].to_string();
    assert!(checks.contains("too small to saturate"), "{checks}");
}

/// The device-local step: cuMemcpyDtoD timed by the GPU's events (the fake's clock runs at
/// `device_copy_gbps`), judged against DCGM's minimum for the SKU by NVML's PCI device id.
#[test]
fn device_memory_below_dcgms_minimum_is_a_warning() {
    let copy = |gbps: Option<f64>, device_id: Option<u32>| {
        let mut node = Node::new(2);
        if let Some(g) = gbps {
            node.cuda().device(1).device_copy_gbps = g;
        }
        if let Some(id) = device_id {
            for i in 0..2 {
                if let Some(p) = node.nvml.gpu(i).pci.as_mut() {
                    p.device_id = id;
                }
            }
        }
        let mut c = node.cmd();
        c.args(["check", "--transfer-size", "32"]);
        json(&mut c).1
    };
    // An H100 80GB HBM3 (10de:2330): healthy copies reach 2540 GB/s, DCGM's minimum is 1905.
    let v = copy(Some(1000.0), None);
    let f = findings(&v, "GD090");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.starts_with("CUDA device 1 "), "{title}");
    assert!(
        title.contains("at 1000 GB/s, below the 1905 GB/s a healthy H100 80GB HBM3 reaches"),
        "{title}"
    );
    let evidence = f[0]["evidence"].to_string();
    assert!(evidence.contains("diag-skus.yaml.in"), "{evidence}");
    let gbps = |v: &Value, i| {
        device(v, i)["transfer"]["ok"]["device_gbps"]
            .as_f64()
            .unwrap()
    };
    assert!((gbps(&v, 1) - 1000.0).abs() < 1.0, "{}", gbps(&v, 1));
    // The fake's default, 2900 GB/s: quiet, and the check says it judged.
    let v = copy(None, None);
    assert!(findings(&v, "GD090").is_empty(), "{:#}", v["findings"]);
    assert!((gbps(&v, 0) - 2900.0).abs() < 1.0, "{}", gbps(&v, 0));
    let check = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule"] == "smoke_device_memory")
        .unwrap();
    assert_eq!(check["status"], "passed", "{check}");
    // No room for a second buffer even of 8 MiB: not a fault of the memory, not judged, and
    // said so.
    let mut node = Node::new(2);
    for i in 0..2 {
        node.cuda().device(i).oom_after_bytes = Some(36 << 20);
    }
    let (_, v) = json(node.cmd().args(["check", "--transfer-size", "32"]));
    assert!(findings(&v, "GD090").is_empty(), "{:#}", v["findings"]);
    let checks = v["checks"].to_string();
    assert!(
        checks
            .contains("no room on the GPU for a second buffer of 8 MiB (CUDA_ERROR_OUT_OF_MEMORY)"),
        "{checks}"
    );
    // A GeForce RTX 4090 (10de:2684): DCGM has no figure, so even a slow copy is not judged.
    let v = copy(Some(10.0), Some(0x2684_10DE));
    assert!(findings(&v, "GD090").is_empty(), "{:#}", v["findings"]);
    let checks = v["checks"].to_string();
    assert!(checks.contains("no row for its PCI device id"), "{checks}");
}

#[test]
fn a_hang_in_context_creation_is_bounded_and_keeps_the_other_gpu() {
    let mut node = small_node(2);
    let base = baseline(&node, &["check"]);
    // GPU 0 must finish everything before the deadline.
    let deadline = base.deadline(3);
    node.cuda().device(1).hang_in = Some("cuDevicePrimaryCtxRetain".into());
    let t = Instant::now();
    let (code, v) = json(
        node.cmd()
            .args(["check", "--timeout", &deadline.to_string()]),
    );
    assert!(t.elapsed() < base.bound(deadline), "{:?}", t.elapsed());
    killed_at_deadline(&v, deadline, base.worker);
    assert_eq!(code, 1);
    let r = &smoke(&v)["result"];
    assert_eq!(r["status"], "timed_out", "{r:#}");
    assert_eq!(
        r["stuck_at"][0],
        "CUDA device 1 (NVIDIA H100 80GB HBM3): context"
    );
    let f = findings(&v, "GD059");
    assert!(
        any_title(&f, &format!("did not answer within {deadline}.0 s")),
        "{:#}",
        v["findings"]
    );
    assert_eq!(device(&v, 0)["finished"], true, "{r:#}");
    assert_eq!(device(&v, 0)["matmul"]["ok"]["correct"], true);
    // The rest of the report is there.
    assert_eq!(v["snapshot"]["nvml"]["result"]["status"], "ok");
}

#[test]
fn hangs_in_init_and_in_a_kernel_name_where() {
    let base = baseline(&small_node(1), &["smoke"]);
    // The matmul hang needs the context and the module before the deadline.
    let deadline = base.deadline(2);
    for (sym, stuck) in [("cuInit", "cuInit"), ("cuCtxSynchronize", "matmul")] {
        let mut node = small_node(1);
        node.cuda().hang_in = Some(sym.into());
        let t = Instant::now();
        let (code, v) = json(
            node.cmd()
                .args(["smoke", "--timeout", &deadline.to_string()]),
        );
        assert!(
            t.elapsed() < base.bound(deadline),
            "{sym}: {:?}",
            t.elapsed()
        );
        assert_eq!(code, 1);
        let stuck_at = v["result"]["stuck_at"].to_string();
        assert!(stuck_at.contains(stuck), "{sym}: {stuck_at}");
        assert!(!findings(&v, "GD059").is_empty());
    }
}

#[test]
fn a_crash_in_the_driver_is_reported_with_the_step() {
    let mut node = Node::new(1);
    node.cuda().crash_in = Some("cuLaunchKernel".into());
    let (code, v) = check(&node);
    assert_eq!(code, 1);
    let r = &smoke(&v)["result"];
    assert_eq!(r["status"], "crashed", "{r:#}");
    assert_eq!(r["signal"], 11);
    assert!(r["during"].to_string().contains("matmul"), "{r:#}");
    let f = findings(&v, "GD059");
    assert!(any_title(&f, "signal 11"), "{:#}", v["findings"]);
    // The context step that finished before the crash is kept.
    assert!(device(&v, 0)["context"]["ok"].is_object());
}

#[test]
fn cuda_seeing_fewer_gpus_than_nvml_is_an_error() {
    let mut node = Node::new(3);
    node.cuda().devices.truncate(2);
    let (code, v) = check(&node);
    assert_eq!(code, 1);
    let f = findings(&v, "GD054");
    assert!(
        any_title(&f, "CUDA sees 2 GPU(s) but NVML sees 3"),
        "{:#}",
        v["findings"]
    );
    assert_eq!(f[0]["severity"], "error");
}

#[test]
fn libcuda_from_another_driver_than_nvml_is_a_warning() {
    let mut node = Node::new(1);
    node.cuda().driver_version = 12040;
    let (code, v) = check(&node);
    let f = findings(&v, "GD054");
    assert!(
        any_title(
            &f,
            "libcuda speaks CUDA 12.4 but the driver (NVML) says CUDA 13.0"
        ),
        "{:#}",
        v["findings"]
    );
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(code, 0);
}

#[test]
fn a_missing_or_foreign_library_is_reported_not_loaded() {
    let node = Node::new(1);
    let (code, v) = json(
        node.cmd()
            .args(["check", "--cuda-lib", "/nonexistent/libcuda.so.1"]),
    );
    assert_eq!(code, 1);
    assert_eq!(smoke(&v)["result"]["status"], "load_failed");
    assert_eq!(smoke(&v)["result"]["code"], "library_not_found");
    assert!(any_title(&findings(&v, "GD053"), "does not exist"));
    // NVML's library has no cuInit.
    let (_, v) = json(
        node.cmd()
            .arg("check")
            .arg("--cuda-lib")
            .arg(fake_nvml::fake_nvml_lib()),
    );
    assert_eq!(smoke(&v)["result"]["code"], "symbol_missing");
    assert!(smoke(&v)["result"]["message"]
        .as_str()
        .unwrap()
        .contains("has no cu"));
    assert!(any_title(
        &findings(&v, "GD053"),
        "not a usable CUDA driver library"
    ));
}

#[test]
fn under_root_nothing_is_loaded_from_the_tree() {
    let node = Node::new(1);
    let inside = node.root.p("usr/lib/x86_64-linux-gnu/libcuda.so.1");
    let (_, v) = json(node.cmd().arg("check").arg("--cuda-lib").arg(&inside));
    let reason = smoke(&v)["result"]["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("lies under --root"), "{reason}");
    let (_, v) = json(node.cmd().args(["check", "--cuda-lib", "libcuda.so.1"]));
    assert!(smoke(&v)["result"]["reason"]
        .as_str()
        .unwrap()
        .contains("bare name"));
    // Without --cuda-lib: not run, and no finding claims anything about CUDA.
    let mut c = node.root.cmd();
    let (_, v) = json(c.arg("check"));
    assert_eq!(smoke(&v)["result"]["status"], "not_run");
    assert!(smoke_codes(&v).is_empty());
}

#[test]
fn the_environment_variable_names_the_library() {
    let node = Node::new(1);
    let cuda = node
        .cuda
        .as_ref()
        .unwrap()
        .write(&node.dir.path().join("cuda"));
    let nvml = node.nvml.write(&node.dir.path().join("nvml"));
    let (code, v) = json(
        node.root
            .cmd()
            .args(["check", "--matmul-size", "32", "--transfer-size", "4"])
            .arg("--nvml-lib")
            .arg(fake_nvml::fake_nvml_lib())
            .env(FAKE_NVML_ENV, nvml)
            .env("GPUDOCTOR_CUDA_LIB", fake_cuda::fake_cuda_lib())
            .env(FAKE_CUDA_ENV, cuda),
    );
    assert_eq!(smoke(&v)["result"]["status"], "ran", "{:#}", smoke(&v));
    assert_eq!(code, 0);
}

#[test]
fn eight_gpus_run_concurrently() {
    let mut node = Node::new(8);
    for d in &mut node.cuda().devices {
        d.total_memory = 24 * MIB;
    }
    let (code, v) = check(&node);
    assert_eq!(code, 0, "{:#}", v["findings"]);
    let run = run_of(&v);
    let devs = run["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 8);
    // Concurrent: the whole run takes less than the sum of the GPUs' own times.
    let sum: f64 = devs.iter().map(|d| d["elapsed_ms"].as_f64().unwrap()).sum();
    let whole = run["elapsed_ms"].as_f64().unwrap();
    assert!(whole < sum, "whole {whole} ms vs sum {sum} ms");
}

#[test]
fn bad_settings_are_usage_errors() {
    let node = Node::new(1);
    for args in [
        ["--matmul-size", "8"],
        ["--matmul-size", "9000"],
        ["--mem-fraction", "0.99"],
        ["--mem-fraction", "NaN"],
        ["--transfer-size", "0"],
    ] {
        let r = run(node.cmd().arg("smoke").args(args));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
    let r = run(gpudoctor().args(["smoke", "--from", "x.json"]));
    assert_eq!(r.code, 2);
}

#[test]
fn a_check_with_a_smoke_run_reads_back_through_from() {
    let mut node = Node::new(1);
    node.cuda().device(0).matmul_wrong = true;
    let r = run(node.cmd().args(["check", "--json"]));
    let dir = tempfile::tempdir().unwrap();
    let saved: PathBuf = dir.path().join("r.json");
    std::fs::write(&saved, &r.stdout).unwrap();
    let (code, v) = json(gpudoctor().args(["check", "--from"]).arg(&saved));
    assert_eq!(code, 1);
    assert!(!findings(&v, "GD056").is_empty());
}

/// Runs `gpudoctor ARGS` under `script`, so stdout and stderr are a terminal.
fn on_a_terminal(node: &Node, args: &str) -> String {
    on_a_terminal_with(node, "", args)
}

/// `on_a_terminal` with `vars` (`NAME=value …`) set for the command.
fn on_a_terminal_with(node: &Node, vars: &str, args: &str) -> String {
    let nvml = node.nvml.write(&node.dir.path().join("nvml"));
    let cuda = node
        .cuda
        .as_ref()
        .unwrap()
        .write(&node.dir.path().join("cuda"));
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let line = format!(
        "{vars} {} --root {} --nvml-lib {} --cuda-lib {} {args}",
        bin.display(),
        node.root.path().display(),
        fake_nvml::fake_nvml_lib().display(),
        fake_cuda::fake_cuda_lib().display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .env(FAKE_NVML_ENV, nvml)
        .env(FAKE_CUDA_ENV, cuda)
        .output()
        .expect("run script(1)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn progress_shows_on_a_terminal_for_slow_steps_and_never_in_json() {
    if which::which("script").is_err() {
        crate::util::skip(format_args!("script(1) is not installed"));
        return;
    }
    let mut node = Node::new(1);
    // Five pinned copies of 32 MiB at 0.2 GB/s: the transfer step takes about a second.
    node.cuda().device(0).h2d_gbps = Some(0.2);
    let text = on_a_terminal(&node, "smoke --transfer-size 32 --matmul-size 32");
    assert!(text.contains("smoke test: GPU 0 transfer"), "{text}");
    // The status line is erased before the report.
    assert!(text.contains("\u{1b}[K"), "{text:?}");
    // The slow copies are a GD058 warning, and the headline says so.
    assert!(
        text.contains("0 of 1 GPU(s) passed, 1 with warnings"),
        "{text}"
    );
    let text = on_a_terminal(&node, "smoke --json --transfer-size 32 --matmul-size 32");
    assert!(!text.contains("smoke test: GPU"), "{text}");
    assert!(text.contains("\"status\": \"ran\""), "{text}");
    // A dumb terminal cannot erase a line: no live progress, no escape sequence at all.
    let text = on_a_terminal_with(
        &node,
        "TERM=dumb",
        "smoke --transfer-size 32 --matmul-size 32",
    );
    assert!(!text.contains("smoke test: GPU 0 transfer"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(text.contains("0 of 1 GPU(s) passed"), "{text}");
}

/// What a terminal `columns` wide shows after `bytes`: each line as it is left, and the
/// widest any line was drawn. A tiny emulator: `\r` returns to the first column, `ESC [ K`
/// erases to the end of the line, `\n` starts the next line, and a character written past
/// the last column wraps onto a new physical line, as a terminal does.
fn screen(bytes: &str, columns: usize) -> (Vec<String>, usize) {
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let mut col = 0;
    let mut widest = 0;
    let mut chars = bytes.chars().peekable();
    while let Some(c) = chars.next() {
        let line = lines.last_mut().unwrap();
        match c {
            '\r' => col = 0,
            '\n' => {
                lines.push(Vec::new());
                col = 0;
            }
            '\u{1b}' => {
                // CSI: parameters, then one final byte.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    let mut fin = ' ';
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() || c == '~' {
                            fin = c;
                            break;
                        }
                    }
                    if fin == 'K' {
                        line.truncate(col);
                    }
                }
            }
            c => {
                if col == columns {
                    // Past the last column: the terminal wraps.
                    lines.push(Vec::new());
                    col = 0;
                }
                let line = lines.last_mut().unwrap();
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
                widest = widest.max(col);
            }
        }
    }
    (
        lines.into_iter().map(|l| l.into_iter().collect()).collect(),
        widest,
    )
}

#[test]
fn the_screen_emulator_redraws_erases_and_wraps() {
    let (lines, widest) = screen("abc\r\u{1b}[Kxy\nlong line\r\u{1b}[K\r\n", 80);
    assert_eq!(lines, ["xy", "", ""]);
    assert_eq!(widest, 9);
    let (lines, _) = screen(&format!("{}\r\u{1b}[K", "x".repeat(100)), 80);
    // The wrapped part stays on the screen: what a too-long progress line leaves behind.
    assert_eq!(lines, ["x".repeat(80), String::new()]);
}

#[test]
fn eight_gpus_of_progress_fit_an_80_column_terminal_and_leave_nothing() {
    if which::which("script").is_err() {
        crate::util::skip(format_args!("script(1) is not installed"));
        return;
    }
    let mut node = Node::new(8);
    // 56 peer copies of 32 MiB on the CPU would outlast the deadline: not this test's subject.
    node.without_peer_access();
    for d in &mut node.cuda().devices {
        // Room for the 32 MiB copies (a buffer larger than the device fails at once).
        d.total_memory = 40 * MIB;
        // Pinned copies of 32 MiB at 1 GB/s: the transfer step takes seconds, so the GPUs
        // overlap long enough for the progress line to summarise them.
        d.h2d_gbps = Some(1.0);
    }
    // stdout goes elsewhere: the terminal shows stderr, where the progress line is drawn.
    let report = node.dir.path().join("report.txt");
    let smoke = format!(
        "smoke --transfer-size 32 --matmul-size 32 > {}",
        report.display()
    );
    let raw = on_a_terminal_with(&node, "stty cols 80 rows 24;", &smoke);
    // The progress was drawn, summarised to fit.
    assert!(raw.contains("smoke test: "), "no progress line: {raw:?}");
    // Summarised once several GPUs run at once (which ones overlap depends on the machine).
    let most = raw
        .split(" GPUs running")
        .filter_map(|before| before.rsplit(' ').next()?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    assert!(most >= 4, "{raw:?}");
    let (lines, widest) = screen(&raw, 80);
    assert!(
        widest < 80,
        "a line was drawn {widest} columns wide on an 80-column terminal: {raw:?}"
    );
    let stale: Vec<&String> = lines.iter().filter(|l| !l.trim().is_empty()).collect();
    assert!(stale.is_empty(), "left on the screen: {stale:#?}\n{raw:?}");
    let report = std::fs::read_to_string(&report).unwrap();
    assert!(report.contains("8 GPU(s) passed"), "{report}");

    // COLUMNS names the width when the terminal does not say (stty cols 0).
    let raw = on_a_terminal_with(
        &node,
        "stty cols 0 rows 0; COLUMNS=60; export COLUMNS;",
        &smoke,
    );
    assert!(raw.contains("smoke test: "), "no progress line: {raw:?}");
    let (lines, widest) = screen(&raw, 60);
    assert!(widest < 60, "{widest} columns at COLUMNS=60: {raw:?}");
    assert!(lines.iter().all(|l| l.trim().is_empty()), "{lines:#?}");
}

#[test]
fn the_gpu_check_script_runs_end_to_end_against_the_fakes() {
    let node = Node::new(2);
    let nvml = node.nvml.write(&node.dir.path().join("nvml"));
    let cuda = node
        .cuda
        .as_ref()
        .unwrap()
        .write(&node.dir.path().join("cuda"));
    let out = node.dir.path().join("out");
    // Arguments every subcommand the script runs takes; the smoke test's own settings come
    // through their variables (`devices` takes no smoke-test option).
    let extra = format!(
        "--root {} --nvml-lib {}",
        node.root.path().display(),
        fake_nvml::fake_nvml_lib().display(),
    );
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gpu-check.sh");
    let status = std::process::Command::new("bash")
        .arg(&script)
        .arg(&out)
        .env("GPUDOCTOR_BIN", assert_cmd::cargo::cargo_bin("gpudoctor"))
        .env("GPUDOCTOR_EXTRA_ARGS", extra)
        .env("GPUDOCTOR_NO_HYPERFINE", "1")
        .env("GPUDOCTOR_CUDA_LIB", fake_cuda::fake_cuda_lib())
        .env("GPUDOCTOR_NCCL_LIB", util::fake_nccl::fake_nccl_lib())
        .env("GPUDOCTOR_MATMUL_SIZE", "32")
        .env("GPUDOCTOR_TRANSFER_SIZE", "2")
        .env(FAKE_NVML_ENV, nvml)
        .env(FAKE_CUDA_ENV, cuda)
        .status()
        .expect("run tests/gpu-check.sh");
    assert!(status.success());
    let smoke: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("smoke.json")).unwrap()).unwrap();
    assert_eq!(
        smoke["result"]["run"]["devices"].as_array().unwrap().len(),
        2
    );
    let gpu0: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("smoke-gpu0.json")).unwrap())
            .unwrap();
    assert_eq!(
        gpu0["result"]["run"]["devices"].as_array().unwrap().len(),
        1
    );
    let check: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("check.json")).unwrap()).unwrap();
    assert_eq!(check["snapshot"]["smoke"]["result"]["status"], "ran");
    let quick: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("check-quick.json")).unwrap())
            .unwrap();
    assert!(quick["snapshot"]["smoke"].is_null());
    let nccl: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("smoke-nccl.json")).unwrap())
            .unwrap();
    assert_eq!(
        nccl["result"]["run"]["nccl"]["all_reduce"]["ranks"], 2,
        "{nccl:#}"
    );
    let preflight: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("preflight.json")).unwrap())
            .unwrap();
    let p = &preflight["snapshot"]["preflight"];
    assert!(
        p["elapsed_s"].as_f64().unwrap() <= p["budget_s"].as_f64().unwrap(),
        "{p}"
    );
    let copies = std::fs::read_to_string(out.join("copies.txt")).unwrap();
    assert_eq!(copies.lines().count(), 2, "{copies}");
    // The fake's device clock: 2900 GB/s, less the rounding of its nanoseconds and of f32 ms.
    for line in copies.lines() {
        let local: f64 = line
            .split("device_local=")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{copies}"));
        assert!((local - 2900.0).abs() < 29.0, "{copies}");
    }
    let timings = std::fs::read_to_string(out.join("timings.txt")).unwrap();
    assert_eq!(timings.lines().count(), 9, "{timings}");
    // Every command ran (a healthy node: exit 0 everywhere, `devices` included).
    for line in timings.lines() {
        assert!(line.contains(" rc=0 "), "{timings}");
    }
    let devices: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("devices.json")).unwrap()).unwrap();
    assert_eq!(
        devices["gpus"].as_array().map(Vec::len),
        Some(2),
        "{devices:#}"
    );
    assert!(std::fs::read_to_string(out.join("smoke-human.txt"))
        .unwrap()
        .contains("2 of 2 GPU(s) passed"));
    // The peer step's figures, a line per ordered pair.
    let peers = std::fs::read_to_string(out.join("peers.txt")).unwrap();
    assert_eq!(peers.lines().count(), 2, "{peers}");
    assert!(
        peers.starts_with("0->1 0000:18:00.0->0000:19:00.0 can_access=True enable=ok copy="),
        "{peers}"
    );
    assert!(peers.contains("verified=True finished=True"), "{peers}");
}

#[test]
fn failed_copies_and_unpinnable_memory_are_findings() {
    // 100 MiB copies on a 64 MiB GPU: the copy buffer cannot be allocated.
    let node = Node::new(1);
    let (code, v) = json(node.cmd().args(["check", "--transfer-size", "100"]));
    assert!(device(&v, 0)["transfer"]["failed"].is_object());
    let f = findings(&v, "GD058");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    assert!(any_title(
        &f,
        "host↔GPU copies failed: CUDA_ERROR_OUT_OF_MEMORY"
    ));
    assert_eq!(code, 1);
    // cuMemHostAlloc refused: a warning pointing at host and cgroup memory (the driver pins
    // it itself; `ulimit -l` bounds mlock and RDMA, not this).
    let mut node = Node::new(1);
    node.cuda().device(0).host_alloc_error = Some(2);
    let (_, v) = check(&node);
    let t = &device(&v, 0)["transfer"]["ok"];
    assert!(t["pinned_h2d_gbps"].is_null() && t["pageable_h2d_gbps"].is_number());
    let f = findings(&v, "GD058");
    assert!(
        any_title(&f, "no pinned host memory"),
        "{:#}",
        v["findings"]
    );
    assert_eq!(f[0]["severity"], "warning");
    let fixes = fix_commands(f[0]);
    assert!(
        fixes.contains("memory.max") && !fixes.contains("ulimit"),
        "{fixes}"
    );
}

#[test]
fn a_hang_while_reading_device_properties_names_the_gpu() {
    let mut node = small_node(2);
    let base = baseline(&node, &["smoke"]);
    // GPU 0 finishes before the deadline: nothing is left for a driver teardown.
    let deadline = base.deadline(3).to_string();
    node.cuda().device(1).hang_in = Some("cuDeviceGetName".into());
    let (_, v) = json(node.cmd().args(["smoke", "--timeout", &deadline]));
    assert_eq!(v["result"]["status"], "timed_out", "{:#}", v["result"]);
    let stuck = v["result"]["stuck_at"].to_string();
    assert_eq!(
        v["result"]["stuck_at"],
        serde_json::json!(["CUDA device 1: device properties"]),
        "{stuck}"
    );
    // A hang in the device count names that call, not cuInit.
    let mut node = small_node(1);
    node.cuda().hang_in = Some("cuDeviceGetCount".into());
    let (_, v) = json(node.cmd().args(["smoke", "--timeout", &deadline]));
    assert_eq!(v["result"]["stuck_at"][0], "cuDeviceGetCount");
}

#[test]
fn jit_disabled_is_a_setting_not_a_broken_gpu() {
    let mut node = Node::new(1);
    node.cuda().device(0).module_error = Some(223);
    let (_, v) = json(node.cmd().env("CUDA_DISABLE_PTX_JIT", "1").arg("check"));
    let f = findings(&v, "GD055");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    assert!(any_title(&f, "CUDA_ERROR_JIT_COMPILATION_DISABLED"));
    assert!(f[0]["evidence"]
        .to_string()
        .contains("CUDA_DISABLE_PTX_JIT=1"));
    assert!(fix_commands(f[0]).contains("unset CUDA_DISABLE_PTX_JIT"));
}

#[test]
fn a_gpu_with_almost_no_free_memory_is_not_called_passed_by_the_memory_probe() {
    let mut node = Node::new(1);
    node.cuda().device(0).used_by_others = 64 * MIB - MIB;
    let (_, v) = check(&node);
    let reason = device(&v, 0)["memory"]["skipped"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains("too little to probe"),
        "{:#}",
        device(&v, 0)["memory"]
    );
}

// ------------------------------------------------------------------ second review

/// Error 999 with nvidia_uvm missing: load it (with uvm loaded the fix is the Xid check,
/// above). The fix used to say "load nvidia_uvm" whether or not it was loaded.
#[test]
fn unknown_error_without_uvm_loads_it() {
    let mut node = Node::new(1);
    node.root
        .modules(&["nvidia_drm", "nvidia_modeset", "nvidia"])
        .remove("dev/nvidia-uvm");
    node.cuda().init_error = Some(999);
    let (_, v) = check(&node);
    let f = findings(&v, "GD053");
    let fixes = fix_commands(f[0]);
    assert!(fixes.contains("modprobe nvidia_uvm"), "{fixes}");
    assert!(!fixes.contains("grep -i xid"), "{fixes}");
}

/// Slurm sets CUDA_VISIBLE_DEVICES=0 in every GPU job: with the kernel module not loaded,
/// "unset CUDA_VISIBLE_DEVICES" sent the user the wrong way.
#[test]
fn no_device_blames_the_machine_before_a_valid_visible_devices() {
    let mut node = Node::new(1);
    node.root
        .modules(&[])
        .remove("proc/driver/nvidia")
        .remove("sys/module/nvidia");
    node.cuda().init_error = Some(100);
    let (_, v) = json(node.cmd().env("CUDA_VISIBLE_DEVICES", "0").arg("check"));
    // libcuda is not loaded without the module (run as root it would create /dev nodes):
    // the module's own finding blames the machine.
    assert_eq!(smoke(&v)["result"]["status"], "not_run", "{:#}", smoke(&v));
    assert!(smoke(&v)["result"]["reason"]
        .as_str()
        .unwrap()
        .contains("kernel module is not loaded"));
    let all = v["findings"].as_array().unwrap();
    let fixes: String = all.iter().map(fix_commands).collect();
    assert!(fixes.contains("modprobe nvidia"), "{fixes}");
    assert!(!fixes.contains("unset CUDA_VISIBLE_DEVICES"), "{fixes}");
    // A valid list on a machine whose driver is fine is named, not blamed.
    let mut node = Node::new(1);
    node.cuda().init_error = Some(100);
    let (_, v) = json(node.cmd().env("CUDA_VISIBLE_DEVICES", "0").arg("check"));
    let f = findings(&v, "GD053");
    assert!(!fix_commands(f[0]).contains("unset CUDA_VISIBLE_DEVICES"));
    assert!(
        f[0].to_string()
            .contains("CUDA_VISIBLE_DEVICES=0 names GPUs that exist"),
        "{:#}",
        f[0]
    );
}

/// A driver (or shim) answering cuDeviceGetCount with 2³¹−1 made the worker plan a thread
/// per ordinal and the parent a line per missing one: 41 MB of JSON, or an abort. A
/// negative count passed as "0 of 0 GPU(s) passed … No GPU problems found".
#[test]
fn impossible_device_counts_are_findings_and_bounded() {
    let base = baseline(&Node::new(1), &["check"]);
    for count in [i32::MAX, -3] {
        let mut node = Node::new(1);
        node.cuda().device_count = Some(count);
        let start = Instant::now();
        let mut c = node.cmd();
        c.args(["check", "--timeout", "10"]);
        let (code, v) = json(&mut c);
        assert!(
            start.elapsed() < base.bound(10),
            "{count}: took {:?}",
            start.elapsed()
        );
        assert_eq!(code, 1, "{count}");
        let f = findings(&v, "GD054");
        assert!(
            any_title(
                &f,
                &format!("cuDeviceGetCount returned an impossible {count}")
            ),
            "{count}: {:#}",
            v["findings"]
        );
        assert_eq!(f[0]["severity"], "error");
        let tested = run_of(&v)["devices"].as_array().map_or(0, Vec::len);
        assert!(tested <= 128, "{count}: {tested} ordinals tested");
        assert!(v.to_string().len() < 4 << 20, "{count}: report too large");
    }
}

/// The GD058 fix printed `cat /sys/bus/pci/devices/:18:00.0/numa_node`: NVML's 8-digit
/// domain lost all its zeros.
#[test]
fn the_slow_link_fix_names_the_sysfs_device() {
    let mut node = Node::new(1);
    if let Some(p) = node.nvml.gpu(0).pcie.as_mut() {
        p.gen = 1;
        p.max_gen = 1;
        p.width = 4;
        p.max_width = 4;
    }
    node.cuda().device(0).h2d_gbps = Some(0.3);
    let mut c = node.cmd();
    c.args(["check", "--transfer-size", "32"]);
    let (_, v) = json(&mut c);
    let f = findings(&v, "GD058");
    let fixes = fix_commands(f[0]);
    assert!(
        fixes.contains("cat /sys/bus/pci/devices/0000:18:00.0/numa_node"),
        "{fixes}"
    );
}

/// Allocation stopping at a fraction of the target is a GD057 warning; the memory row was
/// marked ✓ and the headline said "1 of 1 GPU(s) passed".
#[test]
fn a_short_allocation_is_not_shown_as_passed() {
    let mut node = Node::new(1);
    node.cuda().device(0).oom_after_bytes = Some(8 * MIB);
    let r = run(node.cmd().arg("smoke"));
    assert!(
        r.stdout.contains("0 of 1 GPU(s) passed, 1 with warnings"),
        "{}",
        r.stdout
    );
    // A step's row, with the lines its text wrapped onto (indented under the text).
    let mut rows: Vec<String> = Vec::new();
    for l in r.stdout.lines() {
        match rows.last_mut() {
            Some(row) if l.starts_with(&" ".repeat(14)) => {
                row.push(' ');
                row.push_str(l.trim());
            }
            _ => rows.push(l.to_string()),
        }
    }
    let row = rows
        .iter()
        .find(|l| l.contains("memory") && l.contains("allocation failed"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(!row.contains('✓'), "{row}");
}

/// NVML answered but gave no link for the GPU: nothing was compared, so GD058 must not
/// count as passed.
#[test]
fn bandwidth_without_a_known_link_is_not_a_pass() {
    let mut node = Node::new(1);
    node.nvml.gpu(0).pcie = None;
    let mut c = node.cmd();
    c.args(["check", "--transfer-size", "32"]);
    let (_, v) = json(&mut c);
    let check = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule"] == "smoke_transfer")
        .unwrap();
    assert_eq!(check["status"], "not_applicable", "{check:#}");
    assert!(
        check["detail"].as_str().unwrap().contains("link"),
        "{check:#}"
    );
}

/// A corrupt libcuda.so.1 the loader finds was reported as "not on the loader path": only
/// glibc's "cannot open shared object file" for the name itself means not found.
#[test]
fn a_corrupt_libcuda_on_the_loader_path_is_unloadable_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("libcuda.so.1"), "not an ELF file\n").unwrap();
    // The loader path is the host's, so no --root; without an NVIDIA module here libcuda
    // would not be loaded at all, so one is shown in a private mount namespace.
    let module_here = std::fs::read_to_string("/proc/modules")
        .is_ok_and(|m| m.lines().any(|l| l.starts_with("nvidia ")))
        || std::path::Path::new("/proc/driver/nvidia").exists();
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let mut c = if module_here {
        std::process::Command::new(bin)
    } else {
        // SAFETY: geteuid only reads credentials.
        if unsafe { libc::geteuid() } != 0 {
            crate::util::skip(format_args!(
                "no NVIDIA module here and not root to show one"
            ));
            return;
        }
        let mut c = std::process::Command::new("unshare");
        c.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(concat!(
                "mount -t tmpfs none /proc/driver && mkdir /proc/driver/nvidia && ",
                "echo 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.261.03  Release Build' ",
                "> /proc/driver/nvidia/version && exec \"$@\""
            ))
            .arg("sh")
            .arg(bin);
        c
    };
    c.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LD_LIBRARY_PATH", dir.path())
        .args(["smoke", "--skip", "nvml"]);
    let (_, v) = json(&mut assert_cmd::Command::from_std(c));
    assert_eq!(
        v["result"]["code"], "library_unloadable",
        "{:#}",
        v["result"]
    );
    assert!(
        any_title(&findings(&v, "GD053"), "libcuda.so.1 could not be loaded"),
        "{:#}",
        v["findings"]
    );
}

#[test]
fn eight_gpus_with_two_broken_fit_80_columns_and_end_with_the_recap() {
    let mut node = Node::new(8);
    node.cuda().device(2).bit_flips = 6;
    node.cuda().device(5).matmul_wrong = true;
    let r = run(node.cmd().env("COLUMNS", "80").args([
        "smoke",
        "--color",
        "never",
        "--matmul-size",
        "48",
        "--transfer-size",
        "4",
    ]));
    assert_eq!(r.code, 1, "{}", r.stdout);
    for line in r.stdout.lines() {
        // Commands are never broken; everything else fits.
        if !line.trim_start().starts_with("$ ") {
            assert!(line.chars().count() <= 80, "{line:?}");
        }
    }
    // A row per GPU in the grid, not a block of lines each.
    assert!(r.stdout.lines().count() < 70, "{}", r.stdout);
    let last: Vec<&str> = r.stdout.lines().rev().take(5).collect();
    let last = last.join("\n");
    for needle in [
        "GD056 GPU 5 0000:1d:00.0",
        "GD057 GPU 2 0000:1a:00.0",
        "$ nvidia-smi -q -i 2",
    ] {
        assert!(
            last.contains(needle),
            "{needle} not on the last lines:\n{last}"
        );
    }
}

/// `--timeout` is the longest the driver may go without answering: eight GPUs whose copies
/// are slow take several timeouts in all, each step answering in time, and pass — no GD059,
/// which a fixed deadline for the whole run gave. A driver that stops answering is still
/// called hung one timeout after its last answer.
#[test]
fn a_slow_node_that_keeps_answering_is_not_called_hung() {
    let mut node = small_node(8);
    // 1 MiB copies at 20 MB/s: 52 ms each, 20 in a GPU's transfer step (four kinds, a
    // warm-up and four timed), about a second a step; the pinned copies take turns.
    for d in &mut node.cuda().devices {
        d.h2d_gbps = Some(0.02);
        d.d2h_gbps = Some(0.02);
        d.pageable_gbps = Some(0.02);
    }
    let t = Instant::now();
    let (code, v) = json(
        node.cmd()
            .args(["smoke", "--timeout", "2", "--transfer-size", "1"]),
    );
    let took = t.elapsed();
    assert!(
        took > Duration::from_secs(4),
        "the node is not slow: {took:?}"
    );
    assert_eq!(v["result"]["status"], "ran", "{:#}", v["result"]);
    assert!(findings(&v, "GD059").is_empty(), "{:#}", v["findings"]);
    assert_eq!(code, 0, "{:#}", v["findings"]);

    // The same node, GPU 5 hanging in its matmul: killed 2 s after its last answer.
    node.cuda().device(5).hang_in = Some("cuCtxSynchronize".into());
    let (code, v) = json(
        node.cmd()
            .args(["smoke", "--timeout", "2", "--transfer-size", "1"]),
    );
    assert_eq!(code, 1);
    assert_eq!(v["result"]["status"], "timed_out", "{:#}", v["result"]);
    let stuck = v["result"]["stuck_at"].to_string();
    assert!(stuck.contains("CUDA device 5"), "{stuck}");
    let f = findings(&v, "GD059");
    assert!(
        any_title(&f, "did not answer within 2.0 s"),
        "{:#}",
        v["findings"]
    );
}
