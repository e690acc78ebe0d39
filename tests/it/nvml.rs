//! The NVML probe, its rules (GD018, GD029–GD040) and `gpudoctor devices`, through the real
//! binary loading the fake libnvidia-ml (tests/fake_nvml) with `--nvml-lib`.

use crate::util;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::util::fake_nvml::*;
use crate::util::*;
use serde_json::Value;
use tempfile::TempDir;

/// A fake root with `n` GPUs (kernel module, nodes, PCI) plus the fake NVML described by `cfg`.
struct Node {
    root: FakeRoot,
    _cfg_dir: TempDir,
    cfg: PathBuf,
}

impl Node {
    fn new(n: usize, cfg: &FakeNvml) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let path = cfg.write(dir.path());
        Node {
            root: FakeRoot::healthy(n),
            _cfg_dir: dir,
            cfg: path,
        }
    }

    fn cmd(&self) -> assert_cmd::Command {
        let mut c = self.root.cmd();
        c.arg("--nvml-lib")
            .arg(fake_nvml_lib())
            .env(FAKE_NVML_ENV, &self.cfg);
        c
    }

    fn check(&self) -> (i32, Value) {
        json(self.cmd().arg("check"))
    }
}

/// A process holding `bytes` of GPU memory, optionally in a MIG GPU instance.
fn process(pid: u32, bytes: u64, gpu_instance: Option<u32>) -> Process {
    Process {
        pid,
        used_memory: Some(bytes),
        gpu_instance_id: gpu_instance,
        compute_instance_id: gpu_instance.map(|_| 0),
    }
}

fn nvml(v: &Value) -> &Value {
    &v["snapshot"]["nvml"]
}

/// How long a killed worker may take to die before gpudoctor calls it unkillable
/// (src/runner.rs).
const KILL_GRACE: Duration = Duration::from_secs(2);
/// The share of --timeout the NVML worker gets (src/probes/mod.rs).
const NVML_SHARE: f64 = 0.8;

/// What `check` costs on `n` GPUs of `cfg` without its faults, measured now, so deadlines
/// and bounds grow with the load on the machine instead of guessing at it.
struct Baseline {
    /// The whole check, by the test's clock.
    wall: Duration,
    /// The NVML probe, by gpudoctor's clock.
    nvml: Duration,
}

fn baseline(n: usize, cfg: &FakeNvml) -> Baseline {
    let mut healthy = cfg.clone();
    healthy.faults = Faults::default();
    let node = Node::new(n, &healthy);
    let t = Instant::now();
    let (_, v) = node.check();
    let wall = t.elapsed();
    assert_eq!(nvml(&v)["result"]["status"], "ok", "{:#}", nvml(&v));
    Baseline {
        wall,
        nvml: probe_time(&v),
    }
}

impl Baseline {
    /// A --timeout (whole seconds, at least `floor`) whose NVML share leaves the queries
    /// before a hang five times the room they took healthy.
    fn deadline(&self, floor: u64) -> u64 {
        floor.max((self.nvml.as_secs_f64() * 5.0 / NVML_SHARE).ceil() as u64)
    }

    /// The longest a check hung in NVML may take: the deadline, the kill's grace, and the
    /// rest of the check (at most the healthy run, four times over for a load that changes
    /// between the two runs).
    fn bound(&self, deadline: u64) -> Duration {
        Duration::from_secs(deadline) + KILL_GRACE + self.wall * 4
    }
}

/// How long the NVML probe of a `check` report took, by gpudoctor's clock.
fn probe_time(v: &Value) -> Duration {
    Duration::from_micros(
        v["snapshot"]["probes"]["nvml"]["elapsed_us"]
            .as_u64()
            .unwrap(),
    )
}

/// The NVML worker was killed at its share of the deadline and reaped within the grace.
fn killed_at_deadline(v: &Value, deadline: u64) {
    let took = probe_time(v);
    let budget = Duration::from_secs(deadline).mul_f64(NVML_SHARE);
    assert!(
        took >= budget && took < budget + KILL_GRACE,
        "the NVML probe took {took:?} with a {budget:?} budget"
    );
}

#[test]
fn hgx_node_is_healthy_and_every_fact_arrives() {
    let node = Node::new(8, &FakeNvml::hgx_h100_8gpu());
    // GPUDOCTOR_BENCH_NVML=FILE keeps this config for the hyperfine figures in docs/performance.md.
    if let Some(keep) = std::env::var_os("GPUDOCTOR_BENCH_NVML") {
        std::fs::copy(&node.cfg, keep).expect("copy the config");
    }
    let (code, v) = node.check();
    assert_eq!(nvml(&v)["result"]["status"], "ok", "{:#}", nvml(&v));
    let sys = &nvml(&v)["result"]["system"];
    assert_eq!(sys["driver_version"]["value"], "580.95.05");
    assert_eq!(sys["cuda_driver_version"]["value"], "13.0");
    assert_eq!(sys["device_count"]["value"], 8);
    assert_eq!(sys["topology"].as_array().unwrap().len(), 28);
    let g = &sys["devices"][3];
    assert_eq!(g["name"]["value"], "NVIDIA H100 80GB HBM3");
    assert_eq!(g["compute_capability"]["value"], "9.0");
    assert_eq!(g["pcie"]["max_generation"]["value"], 5);
    assert_eq!(g["nvlinks"]["value"].as_array().unwrap().len(), 18);
    assert_eq!(g["fabric"]["value"]["state"], "completed");
    assert_eq!(g["ecc"]["enabled"]["value"], true);
    let codes = codes(&v);
    assert!(
        codes
            .iter()
            .all(|c| !("GD029".."GD041").contains(&c.as_str())),
        "{:#}",
        v["findings"]
    );
    assert_eq!(code, 0, "{:#}", v["findings"]);

    let out = run(node.cmd().arg("devices"));
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out
        .stdout
        .contains("NVML 13.580.95.05 · driver 580.95.05 · CUDA 13.0 · 8 GPU(s)"));
    // (At 100 columns the table drops the "NVIDIA " prefix to fit.)
    assert_eq!(
        out.stdout.matches("H100 80GB HBM3").count(),
        8,
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("No GPU problems found."));
    let (_, d) = json(node.cmd().arg("devices"));
    assert_eq!(d["gpus"].as_array().unwrap().len(), 8);
    let caps = d["gpus"][0]["capabilities"].as_array().unwrap();
    let fp8 = caps
        .iter()
        .find(|c| c["key"] == "fp8_tensor_cores")
        .unwrap();
    assert_eq!(fp8["support"], "yes");
    let detail = run(node.cmd().args(["devices", "5"]));
    assert!(
        detail.stdout.contains("GPU 5 (NVIDIA H100 80GB HBM3)"),
        "{}",
        detail.stdout
    );
    assert!(detail.stdout.contains("18 of 18 links active"));
    assert!(!detail.stdout.contains("GPU 4 (NVIDIA"));
    let bad = run(node.cmd().args(["devices", "9"]));
    assert_eq!(bad.code, 2);
}

/// `devices GPU` takes what `nvidia-smi -i` takes: an index, a UUID (whole, or a unique
/// prefix with or without `GPU-`) or a PCI bus id in NVML's, sysfs' or the short form; an
/// ambiguous prefix is a usage error listing the GPUs it starts.
#[test]
fn devices_takes_an_index_a_uuid_or_a_bus_id() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    let uuid5 = "GPU-5b2d0c4e-1111-2222-3333-444455556666";
    cfg.gpu(5).uuid = Some(uuid5.into());
    let node = Node::new(8, &cfg);
    for id in [
        "5",
        uuid5,
        &uuid5.to_ascii_uppercase(),
        "GPU-5b2d",
        "5b2d0c",
        "5B2D0C4E-1111",
        "00000000:1D:00.0",
        "0000:1d:00.0",
        "1d:00.0",
    ] {
        let out = run(node.cmd().args(["devices", id]));
        assert_eq!(out.code, 0, "devices {id}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("GPU 5 (NVIDIA H100 80GB HBM3)")
                && !out.stdout.contains("GPU 4 (NVIDIA"),
            "devices {id}: {}",
            out.stdout
        );
    }
    let ambiguous = run(node.cmd().args(["devices", "GPU-8e1f"]));
    assert_eq!(ambiguous.code, 2, "{}", ambiguous.stderr);
    assert!(
        ambiguous.stderr.contains("is the start of 7 UUIDs")
            && ambiguous.stderr.contains(&format!("GPU 7 {}", gpu_uuid(7))),
        "{}",
        ambiguous.stderr
    );
    for missing in ["GPU-00000000", "0000:99:00.0", "8"] {
        let out = run(node.cmd().args(["devices", missing]));
        assert_eq!(out.code, 2, "devices {missing}: {}", out.stderr);
        assert!(!out.stderr.contains("invalid digit"), "{}", out.stderr);
    }
    let out = run(node.cmd().args(["devices", "0000:99:00.0"]));
    assert!(
        out.stderr.contains("no GPU is at PCI address 0000:99:00.0")
            && out.stderr.contains("0000:18:00.0"),
        "{}",
        out.stderr
    );
}

#[test]
fn consumer_card_not_supported_fields_are_not_errors() {
    let node = Node::new(1, &FakeNvml::consumer_rtx4090());
    let (code, v) = node.check();
    let g = &nvml(&v)["result"]["system"]["devices"][0];
    assert_eq!(g["ecc"]["enabled"], "not_supported");
    assert_eq!(g["nvlinks"], "not_supported");
    // Persistence off: a note, not a failure.
    let f = findings(&v, "GD038");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["severity"], "info");
    assert_eq!(code, 0, "{:#}", v["findings"]);
    let detail = run(node.cmd().args(["devices", "--detail"]));
    assert!(detail.stdout.contains("not supported"), "{}", detail.stdout);
}

#[test]
fn mig_instances_and_cuda_visible_devices() {
    let node = Node::new(1, &FakeNvml::mig_a100());
    let (_, v) = node.check();
    let f = findings(&v, "GD037");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "info");
    let mig = nvml(&v)["result"]["system"]["devices"][0]["mig"].clone();
    assert_eq!(mig["instances"].as_array().unwrap().len(), 2);
    let first = mig["instances"][0]["uuid"]["value"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(fix_commands(f[0]).contains(&first));

    // An index with MIG on: a warning, the fix names a MIG UUID.
    let (_, v) = json(node.cmd().env("CUDA_VISIBLE_DEVICES", "0").arg("check"));
    assert_eq!(findings(&v, "GD037")[0]["severity"], "warning");
    // A MIG UUID that is not here: GD010.
    let (code, v) = json(
        node.cmd()
            .env(
                "CUDA_VISIBLE_DEVICES",
                "MIG-00000000-dead-beef-0000-000000000000",
            )
            .arg("check"),
    );
    let f = findings(&v, "GD010");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    assert_eq!(code, 1);
    // The real one (a unique prefix is enough for CUDA): fine.
    let (_, v) = json(
        node.cmd()
            .env("CUDA_VISIBLE_DEVICES", &first[..20])
            .arg("check"),
    );
    assert!(findings(&v, "GD010").is_empty(), "{:#}", v["findings"]);
}

#[test]
fn gpu_uuid_not_on_this_node() {
    let node = Node::new(8, &FakeNvml::hgx_h100_8gpu());
    let (_, v) = json(
        node.cmd()
            .env(
                "CUDA_VISIBLE_DEVICES",
                "GPU-ffffffff-0000-0000-0000-000000000000",
            )
            .arg("check"),
    );
    let f = findings(&v, "GD010");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("which no GPU here has"));
}

/// CUDA keeps the UUIDs before the first it cannot find, as it keeps "0" of "0,2": a
/// warning with exit 0, and an error only when the unknown UUID comes first.
#[test]
fn an_unknown_uuid_after_a_known_one_is_a_warning() {
    let node = Node::new(8, &FakeNvml::hgx_h100_8gpu());
    let unknown = "GPU-ffffffff-0000-0000-0000-000000000000";
    let cvd = |value: String| json(node.cmd().env("CUDA_VISIBLE_DEVICES", value).arg("check"));
    let (code, v) = cvd(format!("{},{unknown},{}", gpu_uuid(0), gpu_uuid(1)));
    let f = findings(&v, "GD010");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains(&format!("CUDA sees only {}", gpu_uuid(0))),
        "{title}"
    );
    assert_eq!(code, 0);
    let (code, v) = cvd(format!("{unknown},{}", gpu_uuid(0)));
    assert_eq!(findings(&v, "GD010")[0]["severity"], "error");
    assert_eq!(code, 1);

    let node = Node::new(1, &FakeNvml::mig_a100());
    let (_, v) = node.check();
    let mig = nvml(&v)["result"]["system"]["devices"][0]["mig"]["instances"][0]["uuid"]["value"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, v) = json(
        node.cmd()
            .env(
                "CUDA_VISIBLE_DEVICES",
                format!("{mig},MIG-00000000-dead-beef-0000-000000000000"),
            )
            .arg("check"),
    );
    let f = findings(&v, "GD010");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(code, 0, "{:#}", v["findings"]);
}

#[test]
fn pcie_width_always_generation_only_under_load() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.gpu(3).pcie.as_mut().unwrap().width = 4;
    // GPU 5 at Gen2 while idle: power saving, not a fault.
    cfg.gpu(5).pcie.as_mut().unwrap().gen = 2;
    cfg.gpu(5).throttle_reasons = Some(THROTTLE_GPU_IDLE);
    let node = Node::new(8, &cfg);
    let (code, v) = node.check();
    let f = findings(&v, "GD034");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"].as_str().unwrap().contains("GPU 3"));
    assert!(f[0]["title"].as_str().unwrap().contains("x4, not x16"));
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(code, 0);

    // Gen2 with no GPU_IDLE but no process either: still not judged (no evidence of load).
    cfg.gpu(5).throttle_reasons = Some(THROTTLE_SW_POWER_CAP);
    let node = Node::new(8, &cfg);
    let (_, v) = node.check();
    assert_eq!(findings(&v, "GD034").len(), 1, "{:#}", v["findings"]);
    // Gen2 under load (a compute process, no GPU_IDLE): reported.
    cfg.gpu(5).compute_processes = Some(vec![process(1, 1 << 30, None)]);
    let node = Node::new(8, &cfg);
    let (_, v) = node.check();
    let f = findings(&v, "GD034");
    assert!(any_title(&f, "Gen2 under load"), "{:#}", v["findings"]);
}

#[test]
fn ecc_failures_call_for_reset_or_rma() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.gpu(1)
        .ecc
        .as_mut()
        .unwrap()
        .volatile
        .as_mut()
        .unwrap()
        .uncorrected = 2;
    cfg.gpu(2).remapped_rows = Some(RemappedRows {
        correctable: 0,
        uncorrectable: 1,
        pending: true,
        failure: false,
    });
    cfg.gpu(6).remapped_rows = Some(RemappedRows {
        correctable: 0,
        uncorrectable: 8,
        pending: false,
        failure: true,
    });
    let node = Node::new(8, &cfg);
    let (code, v) = node.check();
    let f = findings(&v, "GD033");
    assert_eq!(f.len(), 3, "{:#}", v["findings"]);
    assert!(f.iter().all(|f| f["severity"] == "error"));
    let by_gpu = |i: u32| {
        f.iter()
            .find(|f| {
                f["title"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("GPU {i} "))
            })
            .unwrap_or_else(|| panic!("no finding for GPU {i}"))
    };
    assert!(by_gpu(1)["title"]
        .as_str()
        .unwrap()
        .contains("2 uncorrectable ECC"));
    assert!(by_gpu(2)["title"]
        .as_str()
        .unwrap()
        .contains("row remap is pending"));
    assert!(fix_commands(by_gpu(2)).contains("nvidia-smi -r"));
    assert!(fix_commands(by_gpu(6)).contains("RMA"));
    assert_eq!(code, 1);
}

#[test]
fn version_mismatch_after_an_upgrade() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.init_error = Some(18);
    let node = Node::new(1, &cfg);
    let (code, v) = node.check();
    assert_eq!(nvml(&v)["result"]["code"], "lib_rm_version_mismatch");
    let f = findings(&v, "GD018");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["value"]
            .as_str()
            .unwrap()
            .contains("Driver/library version mismatch")));
    assert!(fix_commands(f[0]).contains("Reboot"));
    assert!(findings(&v, "GD030").is_empty());
    assert_eq!(code, 1);
}

#[test]
fn init_failures_name_their_cause() {
    for (err, code, needle) in [
        (9, "driver_not_loaded", "driver is not loaded"),
        (4, "no_permission", "not permitted"),
        (999, "unknown", "failed to initialise"),
    ] {
        let mut cfg = FakeNvml::hgx_h100_8gpu();
        cfg.faults.init_error = Some(err);
        let node = Node::new(1, &cfg);
        let (exit, v) = node.check();
        assert_eq!(nvml(&v)["result"]["code"], code);
        let f = findings(&v, "GD030");
        assert_eq!(f.len(), 1, "{:#}", v["findings"]);
        assert_eq!(f[0]["severity"], "error");
        assert!(
            f[0]["title"].as_str().unwrap().contains(needle),
            "{}",
            f[0]["title"]
        );
        assert_eq!(exit, 1);
    }
}

#[test]
fn a_hung_driver_is_reported_within_the_budget() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    let base = baseline(1, &cfg);
    let deadline = base.deadline(2);
    let timeout = deadline.to_string();
    cfg.faults.hang_in = Some("nvmlDeviceGetName".into());
    let node = Node::new(1, &cfg);
    let start = Instant::now();
    let (code, v) = json(node.cmd().args(["--timeout", &timeout, "check"]));
    assert!(
        start.elapsed() < base.bound(deadline),
        "took {:?}",
        start.elapsed()
    );
    killed_at_deadline(&v, deadline);
    assert_eq!(nvml(&v)["result"]["status"], "timed_out");
    let f = findings(&v, "GD031");
    assert_eq!(f.len(), 1);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("did not answer within"));
    assert_eq!(code, 1);
    // The rest of the report is there.
    assert_eq!(v["snapshot"]["probes"]["device_nodes"]["status"], "ok");
    let out = run(node.cmd().args(["--timeout", &timeout, "devices"]));
    assert!(out.stdout.contains("did not answer"), "{}", out.stdout);
}

#[test]
fn a_crashing_driver_is_a_finding_not_a_crash() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.crash_in = Some("nvmlDeviceGetUUID".into());
    let node = Node::new(1, &cfg);
    let (code, v) = node.check();
    assert_eq!(nvml(&v)["result"]["status"], "crashed");
    assert_eq!(nvml(&v)["result"]["signal"], 11);
    let f = findings(&v, "GD031");
    assert!(f[0]["title"].as_str().unwrap().contains("signal 11"));
    assert_eq!(code, 1);
}

#[test]
fn missing_library_with_the_module_loaded() {
    let root = FakeRoot::healthy(1);
    root.file("proc/1/cgroup", "0::/docker/0123456789abcdef\n")
        .file(".dockerenv", "");
    let (code, v) = json(
        root.cmd()
            .arg("--nvml-lib")
            .arg("/nonexistent/libnvidia-ml.so.1")
            .arg("check"),
    );
    assert_eq!(nvml(&v)["result"]["code"], "library_not_found");
    let f = findings(&v, "GD029");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(
        fix_commands(f[0]).contains("--gpus all"),
        "{}",
        fix_commands(f[0])
    );
    assert_eq!(code, 1);
}

#[test]
fn exclusive_gpu_already_held() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    // NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3; pid 1 stands in for the DIGITS process.
    cfg.gpu(0).compute_mode = Some(3);
    cfg.gpu(0).compute_processes = Some(vec![process(1, 70 << 30, None)]);
    let node = Node::new(8, &cfg);
    let (code, v) = node.check();
    let f = findings(&v, "GD036");
    let busy = f
        .iter()
        .find(|f| f["title"].as_str().unwrap().contains("Exclusive_Process"))
        .unwrap_or_else(|| panic!("{:#}", v["findings"]));
    assert_eq!(busy["severity"], "error");
    assert!(busy["title"].as_str().unwrap().contains("pid 1"));
    assert!(fix_commands(busy).contains("CUDA_VISIBLE_DEVICES"));
    // 70 of 80 GiB held: the memory warning too.
    assert!(f.iter().any(|f| f["severity"] == "warning"
        && f["title"]
            .as_str()
            .unwrap()
            .contains("other processes hold")));
    assert_eq!(code, 1);
}

#[test]
fn lost_gpu_throttling_fabric_and_node_count() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.gpu(5).lost = true;
    cfg.gpu(2).throttle_reasons = Some(THROTTLE_HW_SLOWDOWN | THROTTLE_SW_POWER_CAP);
    cfg.gpu(7).fabric.as_mut().unwrap().state = FabricState::InProgress;
    // Only 6 nodes for 8 GPUs.
    let node = Node::new(8, &cfg);
    node.root.remove("dev/nvidia6").remove("dev/nvidia7");
    let (code, v) = node.check();
    let f = findings(&v, "GD032");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("GPU 5 has fallen off the bus"));
    let f = findings(&v, "GD035");
    assert_eq!(f.len(), 1);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("hardware slowdown"));
    let f = findings(&v, "GD039");
    assert_eq!(f.len(), 1);
    assert!(f[0]["title"].as_str().unwrap().contains("GPU 7"));
    assert!(fix_commands(f[0]).contains("nvidia-fabricmanager"));
    let f = findings(&v, "GD040");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"].as_str().unwrap().contains("8 GPU(s) but 6"));
    assert_eq!(code, 1);
    let out = run(node.cmd().arg("devices"));
    assert!(
        out.stdout.contains("unreachable: gpu_is_lost"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_older_driver_without_a_function_is_not_an_error() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.missing = vec![
        "nvmlDeviceGetRemappedRows".into(),
        "nvmlDeviceGetGpuFabricInfo".into(),
    ];
    let node = Node::new(8, &cfg);
    let (code, v) = node.check();
    let g = &nvml(&v)["result"]["system"]["devices"][0];
    assert_eq!(g["remapped_rows"], "not_in_driver");
    assert_eq!(g["fabric"], "not_in_driver");
    assert_eq!(code, 0, "{:#}", v["findings"]);
}

#[test]
fn cuda_order_differs_from_nvml_order() {
    // A slow card on the first bus, a fast one behind it: CUDA's default puts the fast first.
    let mut cfg = FakeNvml::consumer_rtx4090();
    let mut h100 = Gpu::h100(1);
    h100.pci.as_mut().unwrap().bus_id = "00000000:19:00.0".into();
    cfg.devices.push(h100);
    let node = Node::new(2, &cfg);
    let (_, d) = json(node.cmd().arg("devices"));
    assert_eq!(d["gpus"][0]["cuda_index"], 1);
    assert_eq!(d["gpus"][1]["cuda_index"], 0);
    let out = run(node.cmd().arg("devices"));
    assert!(
        out.stdout.contains("CUDA_DEVICE_ORDER=PCI_BUS_ID"),
        "{}",
        out.stdout
    );
    let (_, d) = json(
        node.cmd()
            .env("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
            .arg("devices"),
    );
    assert_eq!(d["gpus"][0]["cuda_index"], 0);
}

#[test]
fn toolkit_rules_use_nvml_compute_capability() {
    // The driver's model name is unknown to the name table; NVML's CC decides.
    let mut cfg = FakeNvml::consumer_rtx4090();
    cfg.gpu(0).name = Some("NVIDIA Engineering Sample".into());
    let node = Node::new(1, &cfg);
    node.root
        .driver_gpu("0000:18:00.0", "NVIDIA Engineering Sample", 0)
        .toolkit("usr/local/cuda-11.5", "11.5.2")
        .remove("usr/local/cuda")
        .link("/usr/local/cuda-11.5", "usr/local/cuda");
    let (_, v) = node.check();
    let f = findings(&v, "GD023");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"].as_str().unwrap().contains("sm_89"));
}

// ---- regressions from review ------------------------------------------------------------

fn unique_fake_lib(dir: &std::path::Path) -> PathBuf {
    // A copy under a unique name, so this test's worker can be found in /proc.
    let lib = dir.join(format!("libfake-{}.so", std::process::id()));
    std::fs::copy(fake_nvml_lib(), &lib).unwrap();
    lib
}

fn workers_running(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(needle))
        .count()
}

#[test]
fn a_hung_worker_dies_with_gpudoctor() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.hang_in = Some("nvmlInit_v2".into());
    let dir = tempfile::tempdir().unwrap();
    let cfg_path = cfg.write(dir.path());
    let lib = unique_fake_lib(dir.path());
    let needle = lib.display().to_string();
    // A tree with the module loaded: without one the library is never loaded.
    let root = FakeRoot::healthy(1);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpudoctor"))
        .arg("--root")
        .arg(root.path())
        .arg("--nvml-lib")
        .arg(&lib)
        .args(["--timeout", "60", "check"])
        .env(FAKE_NVML_ENV, &cfg_path)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while workers_running(&needle) == 0 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(workers_running(&needle) > 0, "the worker never started");
    child.kill().unwrap();
    child.wait().unwrap();
    let start = Instant::now();
    while workers_running(&needle) > 0 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        workers_running(&needle),
        0,
        "the NVML worker outlived gpudoctor"
    );
}

#[test]
fn a_bare_library_name_is_refused_under_root() {
    let node = Node::new(1, &FakeNvml::hgx_h100_8gpu());
    install_libnvidia_ml(&node.root.p("usr/lib"));
    // A bare name is refused under --root.
    let (_, v) = json(
        node.root
            .cmd()
            .args(["--nvml-lib", "libnvidia-ml.so.1", "check"]),
    );
    assert_eq!(nvml(&v)["result"]["status"], "not_probed", "{:#}", nvml(&v));
    assert!(nvml(&v)["result"]["reason"]
        .as_str()
        .unwrap()
        .contains("bare name"));
}

#[test]
fn the_environment_variable_is_a_default_not_a_flag() {
    let node = Node::new(1, &FakeNvml::consumer_rtx4090());
    let (_, v) = json(
        node.root
            .cmd()
            .env("GPUDOCTOR_NVML_LIB", fake_nvml_lib())
            .env(FAKE_NVML_ENV, &node.cfg)
            .arg("check"),
    );
    assert_eq!(nvml(&v)["result"]["status"], "ok");
    // Saved and replayed with the variable still set: --from is not refused.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("r.json");
    std::fs::write(&saved, serde_json::to_string(&v).unwrap()).unwrap();
    let r = run(gpudoctor()
        .env("GPUDOCTOR_NVML_LIB", fake_nvml_lib())
        .args(["check", "--from"])
        .arg(&saved));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("GPU 0"), "{}", r.stdout);
    // An empty value is unset.
    let r = run(gpudoctor()
        .env("GPUDOCTOR_NVML_LIB", "")
        .args(["check", "--json"]));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
}

#[test]
fn mig_warning_only_when_the_mig_gpu_is_selected_whole() {
    let mut cfg = FakeNvml::mig_a100();
    let mut h100 = Gpu::h100(1);
    h100.pci.as_mut().unwrap().bus_id = "00000000:19:00.0".into();
    cfg.devices.push(h100);
    let node = Node::new(2, &cfg);
    let (_, v) = json(node.cmd().env("CUDA_VISIBLE_DEVICES", "1").arg("check"));
    let f = findings(&v, "GD037");
    assert_eq!(f[0]["severity"], "info", "{:#}", v["findings"]);
    let (_, v) = json(node.cmd().env("CUDA_VISIBLE_DEVICES", "0").arg("check"));
    assert_eq!(findings(&v, "GD037")[0]["severity"], "warning");
}

#[test]
fn graphics_contexts_and_mig_memory_are_not_held_against_the_gpu() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.gpu(0).compute_mode = Some(3);
    cfg.gpu(0).compute_processes = Some(Vec::new());
    cfg.gpu(0).graphics_processes = Some(vec![process(1, 1 << 30, None)]);
    let node = Node::new(8, &cfg);
    let (_, v) = node.check();
    assert!(findings(&v, "GD036").is_empty(), "{:#}", v["findings"]);

    // MIG instances each with their own memory: no "other processes hold" sum.
    let mut cfg = FakeNvml::mig_a100();
    for gi in [1, 2] {
        cfg.gpu(0)
            .compute_processes
            .get_or_insert_with(Vec::new)
            .push(process(1, 19 << 30, Some(gi)));
    }
    let node = Node::new(1, &cfg);
    let (_, v) = node.check();
    assert!(findings(&v, "GD036").is_empty(), "{:#}", v["findings"]);
}

#[test]
fn shutdown_hangs_lose_nothing_and_half_answers_count() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.hang_in = Some("nvmlShutdown".into());
    // Compute answers [], graphics is not supported: an empty list, not "not supported".
    cfg.gpu(0).compute_processes = Some(Vec::new());
    cfg.gpu(0).graphics_processes = None;
    // Every query must be answered before the deadline.
    let timeout = baseline(8, &cfg).deadline(3).to_string();
    let node = Node::new(8, &cfg);
    let (_, v) = json(node.cmd().args(["--timeout", &timeout, "check"]));
    assert_eq!(nvml(&v)["result"]["status"], "ok", "{:#}", nvml(&v));
    let procs = &nvml(&v)["result"]["system"]["devices"][0]["processes"];
    assert_eq!(procs["value"], serde_json::json!([]), "{procs:#}");
}

#[test]
fn a_file_that_is_no_library_is_not_missing() {
    let root = FakeRoot::healthy(1);
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("libnvidia-ml.so.1");
    std::fs::write(&junk, "not a library").unwrap();
    let (_, v) = json(root.cmd().arg("--nvml-lib").arg(&junk).arg("check"));
    assert_eq!(
        nvml(&v)["result"]["code"],
        "library_unloadable",
        "{:#}",
        nvml(&v)
    );
    let f = findings(&v, "GD030");
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("exists but cannot be loaded"));
    assert!(findings(&v, "GD029").is_empty());
}

#[test]
fn detail_of_a_lost_gpu_and_of_mig_instances_reads_well() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.gpu(5).lost = true;
    let node = Node::new(8, &cfg);
    let out = run(node.cmd().args(["devices", "5"]));
    // Once in the GPU's detail (its finding's evidence says it again, as in `check`).
    let detail = out.stdout.split("error[").next().unwrap();
    assert_eq!(detail.matches("gpu_is_lost").count(), 1, "{}", out.stdout);
    let node = Node::new(1, &FakeNvml::mig_a100());
    let out = run(node.cmd().args(["devices", "0"]));
    assert!(!out.stdout.contains("\\n"), "{}", out.stdout);
    assert!(out.stdout.contains("  instance 0"), "{}", out.stdout);
}

#[test]
fn a_hang_keeps_what_nvml_answered_before_it() {
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    let base = baseline(8, &cfg);
    // Every GPU must be answered before the deadline.
    let deadline = base.deadline(2);
    let timeout = deadline.to_string();
    cfg.faults.hang_in = Some("nvmlDeviceGetTopologyCommonAncestor".into());
    let node = Node::new(8, &cfg);
    let start = Instant::now();
    let (code, v) = json(node.cmd().args(["--timeout", &timeout, "check"]));
    assert!(start.elapsed() < base.bound(deadline));
    killed_at_deadline(&v, deadline);
    let r = &nvml(&v)["result"];
    assert_eq!(r["status"], "timed_out");
    assert_eq!(r["stuck_at"], "the GPU-pair topology");
    assert_eq!(r["partial"]["devices"].as_array().unwrap().len(), 8);
    let f = findings(&v, "GD031");
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("hung at the GPU-pair topology"));
    assert_eq!(code, 1);
    // devices still shows the eight GPUs it got.
    let out = run(node.cmd().args(["--timeout", &timeout, "devices"]));
    // (At 100 columns the table drops the "NVIDIA " prefix to fit.)
    assert_eq!(
        out.stdout.matches("H100 80GB HBM3").count(),
        8,
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("What NVML answered before it stopped"));

    // A hang on the first GPU's name: the system facts survive, no GPU.
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.hang_in = Some("nvmlDeviceGetName".into());
    let node = Node::new(8, &cfg);
    let (_, v) = json(node.cmd().args(["--timeout", &timeout, "check"]));
    let r = &nvml(&v)["result"];
    assert_eq!(r["stuck_at"], "GPU 0");
    assert_eq!(r["partial"]["driver_version"]["value"], "580.95.05");
}

/// Run as root, the driver's libraries create missing /dev/nvidia* nodes; with no NVIDIA
/// kernel module on the machine (nothing in /proc/modules, no /proc/driver/nvidia) neither
/// NVML nor libcuda is loaded, and the report says why. GPUs on the bus still get the
/// module's own finding; WSL (/dev/dxg), which runs CUDA without the module, still loads.
#[test]
fn without_the_kernel_module_no_driver_library_is_loaded() {
    let node = Node::new(2, &FakeNvml::hgx_h100_8gpu());
    node.root
        .modules(&[])
        .remove("proc/driver/nvidia")
        .remove("sys/module/nvidia");
    let (_, v) = json(
        node.cmd()
            .arg("--cuda-lib")
            .arg(util::fake_cuda::fake_cuda_lib())
            .arg("check"),
    );
    let result = &nvml(&v)["result"];
    assert_eq!(result["status"], "not_probed", "{result:#}");
    let reason = result["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "the NVIDIA kernel module is not loaded (not in /proc/modules, no /proc/driver/nvidia)"
        ),
        "{reason}"
    );
    let smoke = &v["snapshot"]["smoke"]["result"];
    assert_eq!(smoke["status"], "not_run", "{smoke:#}");
    assert_eq!(smoke["reason"], reason);
    for code in ["GD029", "GD030", "GD031"] {
        assert!(findings(&v, code).is_empty(), "{code}: {:#}", v["findings"]);
    }
    let fixes: String = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(fix_commands)
        .collect();
    assert!(fixes.contains("modprobe nvidia"), "{fixes}");
    // `devices` says why too.
    let out = run(node.cmd().arg("devices"));
    assert!(
        out.stdout
            .contains("the NVIDIA kernel module is not loaded"),
        "{}",
        out.stdout
    );
    // WSL has no nvidia module: NVML answers through /dev/dxg.
    node.root.node("dxg", 0o666);
    let (_, v) = node.check();
    assert_eq!(nvml(&v)["result"]["status"], "ok", "{:#}", nvml(&v));
}
