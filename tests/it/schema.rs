//! The published JSON Schema (`gpudoctor schema`, blessed as docs/report.schema.json) against
//! real reports: the report of every scenario here must pass an independent validator (the
//! jsonschema crate), and reports broken on purpose must not.

use crate::util;

use crate::util::fake_nvml::{self, FakeNvml};
use crate::util::gpu_node::GpuNode;
use crate::util::*;
use serde_json::{json, Value};

/// What `gpudoctor schema` prints, parsed.
fn schema() -> Value {
    let r = run(gpudoctor().arg("schema"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).expect("the schema is JSON")
}

/// docs/report.schema.json, parsed; it must be what `gpudoctor schema` prints (but for the
/// version in its description), so reports are validated against both.
pub(crate) fn blessed() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.schema.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let printed = run(gpudoctor().arg("schema")).stdout;
    use crate::docs::without_version;
    assert!(
        without_version(&text) == without_version(&printed),
        "docs/report.schema.json is not what `gpudoctor schema` prints; \
         regenerate it with: UPDATE_DOCS=1 cargo test --test it docs::"
    );
    serde_json::from_str(&text).expect("the blessed schema is JSON")
}

pub(crate) fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&blessed()).expect("the schema compiles")
}

/// Each error as "instance path: message", the first few only.
fn errors(v: &jsonschema::Validator, report: &Value) -> Vec<String> {
    v.iter_errors(report)
        .take(8)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

pub(crate) fn assert_valid(v: &jsonschema::Validator, label: &str, report: &Value) {
    assert_eq!(
        report["schema_version"], 1,
        "{label}: not a report: {report:#}"
    );
    let errs = errors(v, report);
    assert!(errs.is_empty(), "{label}: {}", errs.join("\n"));
}

/// `check --format json` with these arguments, whatever its exit code.
fn report(cmd: &mut assert_cmd::Command) -> Value {
    let r = run(cmd.args(["--format", "json"]));
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", r.stdout, r.stderr))
}

#[test]
fn the_schema_is_a_2020_12_schema_naming_gpudoctor_and_its_version() {
    let s = schema();
    if let Err(e) = jsonschema::meta::validate(&s) {
        panic!("not a valid JSON Schema: {e}");
    }
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(s["$id"], "urn:gpudoctor:report:schema_version:1");
    assert_eq!(s["title"], "gpudoctor report");
    let d = s["description"].as_str().unwrap();
    assert!(d.contains("schema_version 1"), "{d}");
    assert!(
        d.contains(&format!("gpudoctor {}", env!("CARGO_PKG_VERSION"))),
        "{d}"
    );
    assert_eq!(s["properties"]["schema_version"]["const"], 1);
    // The subcommand prints the library's schema, byte for byte.
    let r = run(gpudoctor().arg("schema"));
    assert_eq!(r.stdout, gpudoctor::report::json_schema());
    // Generic types get readable names, one per instantiation.
    let defs = s["$defs"].as_object().unwrap();
    for name in [
        "Fact_of_string",
        "Field_of_uint32",
        "Step_of_Matmul",
        "CudaVersion",
    ] {
        assert!(defs.contains_key(name), "no {name} in {:?}", defs.keys());
    }
}

#[test]
fn reports_of_healthy_and_broken_roots_validate() {
    let v = validator();
    let mut cases: Vec<(&str, Value)> = Vec::new();

    let r = FakeRoot::healthy(2);
    cases.push(("healthy, 2 GPUs", report(&mut r.cmd())));

    // Torch with a fatbin and wheels, a container, Slurm and Kubernetes, set variables.
    let r = FakeRoot::healthy(1);
    let site = r.torch_venv(
        "2.8.0+cu128",
        Some("12.8"),
        &["nvidia-cudnn-cu12==9.10.2.21", "triton==3.4.0"],
    );
    r.dist(&site, "nvidia-cudnn-cu12", "9.10.2.21")
        .dist(&site, "torchvision", "0.23.0+cu128")
        .dist(&site, "jaxlib", "0.4.30");
    {
        use util::fatbin::{elf_with_fatbin, fatbin_section, Kind};
        let arches: Vec<(Kind, u32, bool)> =
            [80, 90].iter().map(|a| (Kind::Elf, *a, false)).collect();
        let section = fatbin_section(&[&arches, &arches]);
        r.bytes(
            &format!("{site}/torch/lib/libtorch_cuda.so"),
            &elf_with_fatbin("libtorch_cuda.so", &section),
        );
    }
    r.file("proc/1/cgroup", "0::/docker/0123456789abcdef\n")
        .file(".dockerenv", "");
    let mut c = r.cmd();
    c.env("VIRTUAL_ENV", "/venv")
        .env("CUDA_VISIBLE_DEVICES", "0")
        .env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
        .env("CUDA_LAUNCH_BLOCKING", "1")
        .env("NCCL_DEBUG", "INFO")
        .env("CUDA_HOME", "/usr/local/cuda")
        .env("SLURM_JOB_ID", "4242")
        .env("SLURMD_NODENAME", "gpu-node-07")
        .env("KUBERNETES_SERVICE_HOST", "10.0.0.1")
        .arg("--python-import")
        .arg("check");
    cases.push(("torch, container, environment", report(&mut c)));

    let r = FakeRoot::new();
    cases.push(("no NVIDIA anything", report(&mut r.cmd())));

    let r = FakeRoot::new();
    r.modules(&["nouveau", "drm_kms_helper"]);
    for addr in ["0000:3b:00.0", "0000:5e:00.0"] {
        r.pci(addr, "1db6", "030200", Some("nouveau"));
    }
    cases.push(("nouveau owns the GPUs", report(&mut r.cmd())));

    let r = FakeRoot::healthy(2);
    r.remove("dev/nvidia1").remove("dev/nvidia-uvm");
    for n in ["nvidiactl", "nvidia0"] {
        r.chmod(&format!("dev/{n}"), 0o660);
    }
    let mut c = r.cmd();
    c.args(["--user", ALICE]);
    cases.push(("nodes missing and 0660 for alice", report(&mut c)));

    // Unreadable and malformed facts: no os-release, a garbled driver version.
    let r = FakeRoot::healthy(1);
    r.remove("etc/os-release")
        .file("proc/driver/nvidia/version", "garbage\n")
        .file("proc/modules", "not a modules line\n");
    cases.push(("missing and malformed facts", report(&mut r.cmd())));

    let r = FakeRoot::new();
    r.file(
        "proc/version",
        "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 12.2.0)\n",
    )
    .dir("usr/lib/wsl/lib")
    .node("dxg", 0o666);
    cases.push(("WSL", report(&mut r.cmd())));

    // A probe past its deadline (its section is null) and one that panicked.
    let r = FakeRoot::healthy(1);
    let mut c = r.cmd();
    c.args(["--timeout", "0.5"])
        .env("GPUDOCTOR_FAULT_PROBE_DELAY", "pci:5000");
    cases.push(("a probe timed out", report(&mut c)));
    let mut c = r.cmd();
    c.env("GPUDOCTOR_FAULT_PROBE_PANIC", "kernel_module");
    cases.push(("a probe panicked", report(&mut c)));

    // --only leaves the other sections null.
    let mut c = r.cmd();
    c.args(["--only", "device_nodes"]);
    cases.push(("--only device_nodes", report(&mut c)));

    // A saved report replayed through --from.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("report.json");
    std::fs::write(&saved, cases[1].1.to_string()).unwrap();
    let mut c = gpudoctor();
    c.arg("check").arg("--from").arg(&saved);
    cases.push(("replayed with --from", report(&mut c)));

    for (label, r) in &cases {
        assert_valid(&v, label, r);
    }
    // The cases reach what they are meant to.
    assert_eq!(
        cases[0].1["summary"]["errors"], 0,
        "{:#}",
        cases[0].1["findings"]
    );
    let by = |l: &str| &cases.iter().find(|c| c.0 == l).unwrap().1["snapshot"];
    let rich = by("torch, container, environment");
    assert!(rich["python"][0]["torch"]["arches"]["value"].is_object());
    assert_eq!(rich["python_live"]["result"]["status"], "not_probed");
    assert_eq!(rich["platform"]["container"]["kind"], "docker");
    assert_eq!(rich["node"]["slurm"]["job_id"], "4242");
    assert_eq!(rich["node"]["kubernetes"]["in_pod"], true);
    assert!(rich["environment"]["variables"].as_array().unwrap().len() >= 6);
    let broken = by("missing and malformed facts");
    assert_eq!(broken["platform"]["os"]["missing"]["reason"], "not_found");
    assert_eq!(
        broken["kernel_module"]["version_file"]["missing"]["reason"],
        "malformed"
    );
    assert_eq!(
        by("a probe timed out")["probes"]["pci"]["status"],
        "timed_out"
    );
    assert!(by("a probe timed out")["pci"].is_null());
    assert_eq!(
        by("a probe panicked")["probes"]["kernel_module"]["status"],
        "failed"
    );
}

/// `check --json ARGS` on the node.
fn check(node: &GpuNode, args: &[&str]) -> Value {
    let mut c = node.cmd();
    c.arg("check").args(args);
    report(&mut c)
}

#[test]
fn reports_with_the_fake_nvml_validate() {
    let v = validator();
    let mut cases: Vec<(String, Value)> = Vec::new();
    let mut add = |label: &str, node: GpuNode| cases.push((label.into(), check(&node, &[])));

    add(
        "HGX H100 ×8",
        GpuNode::nvml_only(8, FakeNvml::hgx_h100_8gpu()),
    );
    add(
        "RTX 4090, much not supported",
        GpuNode::nvml_only(1, FakeNvml::consumer_rtx4090()),
    );
    add(
        "A100 in MIG mode",
        GpuNode::nvml_only(1, FakeNvml::mig_a100()),
    );

    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.gpu(5).lost = true;
    cfg.gpu(2).throttle_reasons =
        Some(fake_nvml::THROTTLE_HW_SLOWDOWN | fake_nvml::THROTTLE_SW_POWER_CAP);
    cfg.gpu(7).fabric.as_mut().unwrap().state = fake_nvml::FabricState::InProgress;
    cfg.gpu(0).compute_mode = Some(3);
    cfg.gpu(0).compute_processes = Some(vec![fake_nvml::Process {
        pid: 4242,
        used_memory: Some(1 << 30),
        gpu_instance_id: None,
        compute_instance_id: None,
    }]);
    add(
        "lost GPU, throttling, fabric, processes",
        GpuNode::nvml_only(8, cfg),
    );

    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.missing = vec![
        "nvmlDeviceGetRemappedRows".into(),
        "nvmlDeviceGetGpuFabricInfo".into(),
    ];
    add("functions not in the driver", GpuNode::nvml_only(2, cfg));

    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.init_error = Some(9);
    add("nvmlInit failed", GpuNode::nvml_only(1, cfg));

    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.faults.crash_in = Some("nvmlDeviceGetUUID".into());
    add("NVML crashed", GpuNode::nvml_only(1, cfg));

    let node = GpuNode::nvml_only(1, FakeNvml::hgx_h100_8gpu());
    let mut c = node.root.cmd();
    c.arg("--nvml-lib").arg("/nonexistent/libnvidia-ml.so.1");
    cases.push(("no NVML library".into(), report(&mut c)));

    for (label, r) in &cases {
        assert_valid(&v, label, r);
    }
    let statuses: Vec<&Value> = cases
        .iter()
        .map(|c| &c.1["snapshot"]["nvml"]["result"]["status"])
        .collect();
    for s in ["ok", "init_failed", "crashed"] {
        assert!(statuses.iter().any(|x| *x == s), "no {s} in {statuses:?}");
    }
}

#[test]
fn reports_with_nvml_timed_out_validate() {
    let v = validator();
    // Hung at the topology (partial holds every GPU) and at the first GPU (no GPU yet).
    for (sym, n) in [
        ("nvmlDeviceGetTopologyCommonAncestor", 4),
        ("nvmlDeviceGetName", 2),
    ] {
        let mut cfg = FakeNvml::hgx_h100_8gpu();
        cfg.faults.hang_in = Some(sym.into());
        let r = check(&GpuNode::nvml_only(n, cfg), &["--timeout", "2"]);
        let result = &r["snapshot"]["nvml"]["result"];
        assert_eq!(result["status"], "timed_out", "{result:#}");
        assert!(result["partial"].is_object(), "{result:#}");
        assert_valid(&v, sym, &r);
    }
}

#[test]
fn reports_with_the_fake_libcuda_smoke_run_validate() {
    let v = validator();
    let mut cases: Vec<(String, Value)> = Vec::new();

    let node = GpuNode::new(2);
    cases.push(("smoke ran on 2 GPUs".into(), check(&node, &[])));

    let mut node = GpuNode::new(2);
    node.cuda().device(1).ctx_error = Some(46);
    cases.push(("context failed on GPU 1".into(), check(&node, &[])));

    // Kernels that do not load: failed with the JIT log, the compute steps skipped.
    let mut node = GpuNode::new(1);
    node.cuda().device(0).module_error = Some(209);
    cases.push(("module failed".into(), check(&node, &[])));

    let mut node = GpuNode::new(1);
    let d = node.cuda().device(0);
    d.matmul_wrong = true;
    d.bit_flips = 3;
    d.host_alloc_error = Some(2);
    cases.push((
        "wrong matmul, flipped bits, no pinned memory".into(),
        check(&node, &[]),
    ));

    let node = GpuNode::new(1);
    cases.push((
        "copies failed".into(),
        check(&node, &["--transfer-size", "100"]),
    ));

    let mut node = GpuNode::new(1);
    node.cuda().crash_in = Some("cuLaunchKernel".into());
    cases.push(("smoke crashed".into(), check(&node, &[])));

    let mut node = GpuNode::new(2);
    node.cuda().device(1).hang_in = Some("cuDevicePrimaryCtxRetain".into());
    cases.push(("smoke timed out".into(), check(&node, &["--timeout", "3"])));

    let mut node = GpuNode::new(1);
    node.cuda().init_error = Some(100);
    cases.push(("cuInit failed".into(), check(&node, &[])));

    let node = GpuNode::new(1);
    cases.push((
        "libcuda missing".into(),
        check(&node, &["--cuda-lib", "/nonexistent/libcuda.so.1"]),
    ));

    for (label, r) in &cases {
        assert_valid(&v, label, r);
    }
    let statuses: Vec<&Value> = cases
        .iter()
        .map(|c| &c.1["snapshot"]["smoke"]["result"]["status"])
        .collect();
    for s in ["ran", "crashed", "timed_out", "load_failed"] {
        assert!(statuses.iter().any(|x| *x == s), "no {s} in {statuses:?}");
    }
    let module = &cases[2].1["snapshot"]["smoke"]["result"]["run"]["devices"][0];
    assert!(
        module["module"]["failed"]["detail"].is_string(),
        "{module:#}"
    );
    assert!(module["matmul"]["skipped"].is_object(), "{module:#}");
}

#[test]
fn this_machines_report_validates() {
    let v = validator();
    // Clean environment, then the one the tests run in.
    assert_valid(&v, "this machine", &report(gpudoctor().arg("check")));
    let mut c = assert_cmd::Command::cargo_bin("gpudoctor").unwrap();
    c.arg("check");
    assert_valid(&v, "this machine, inherited environment", &report(&mut c));
}

/// A change to a report that the schema must refuse.
enum Mutation {
    Set(&'static str, Value),
    Remove(&'static str),
    Add(&'static str, &'static str, Value),
}

impl Mutation {
    /// Applies it; returns where the validator must complain: the value set, or the
    /// object a field was removed from or added to.
    fn apply(&self, report: &mut Value) -> String {
        match self {
            Mutation::Set(at, value) => {
                *report.pointer_mut(at).unwrap_or_else(|| panic!("no {at}")) = value.clone();
                at.to_string()
            }
            Mutation::Remove(at) => {
                let (parent, key) = at.rsplit_once('/').unwrap();
                let obj = report.pointer_mut(parent).and_then(Value::as_object_mut);
                obj.and_then(|o| o.remove(key))
                    .unwrap_or_else(|| panic!("no {at}"));
                parent.to_string()
            }
            Mutation::Add(at, key, value) => {
                let obj = report.pointer_mut(at).and_then(Value::as_object_mut);
                let obj = obj.unwrap_or_else(|| panic!("no object at {at}"));
                assert!(obj.insert((*key).into(), value.clone()).is_none());
                at.to_string()
            }
        }
    }
}

#[test]
fn broken_reports_are_rejected() {
    use Mutation::*;
    let v = validator();
    // A report with a finding, NVML, a toolkit and a smoke run with a failed step.
    let mut node = GpuNode::new(2);
    node.cuda().device(1).ctx_error = Some(46);
    let base = check(&node, &[]);
    assert_valid(&v, "base", &base);
    let mutations = [
        // Wrong types.
        Set("/summary/errors", json!("1")),
        Set("/snapshot/probes/pci/elapsed_us", json!(-5)),
        Set("/snapshot/platform/wsl/detected", json!("no")),
        Set(
            "/snapshot/smoke/result/run/devices/0/matmul/ok/gflops",
            json!("fast"),
        ),
        Set("/snapshot/nvml/result/system/devices/0/index", json!(null)),
        Set("/findings", json!({})),
        // Values outside their enums, patterns and constants.
        Set("/findings/0/severity", json!("fatal")),
        Set("/checks/0/status", json!("broken")),
        Set("/snapshot/probes/pci/status", json!("hung")),
        Set("/snapshot/nvml/result/status", json!("exploded")),
        Set(
            "/snapshot/nvml/result/system/devices/0/ecc/enabled",
            json!("not_supportd"),
        ),
        Set(
            "/snapshot/platform/os",
            json!({"source": "/etc/os-release", "missing": {"reason": "gone", "detail": ""}}),
        ),
        Set("/snapshot/toolkits/installs/0/cuda", json!("13")),
        Set("/schema_version", json!(2)),
        // Required fields removed, Option ones included (they are written as null).
        Remove("/summary/infos"),
        Remove("/findings/0/fix"),
        Remove("/snapshot/node"),
        Remove("/snapshot/platform/os/source"),
        Remove("/snapshot/platform/os/value"),
        Remove("/snapshot/nvml/result/system/devices/0/ecc"),
        Remove("/snapshot/smoke/result/run/devices/1/context/failed/error"),
        // Fields the types do not have, in plain, flattened and tagged objects.
        Add("", "generated_at", json!("now")),
        Add("/snapshot/platform", "shm", json!(1)),
        Add("/snapshot/platform/os", "note", json!("")),
        Add(
            "/snapshot/platform/os",
            "missing",
            json!({"reason": "not_found", "detail": ""}),
        ),
        Add("/snapshot/nvml/result", "seconds", json!(1.0)),
        Add(
            "/snapshot/nvml/result/system/devices/0/memory/value",
            "bar1",
            json!(0),
        ),
        Add(
            "/snapshot/smoke/result/run/devices/0/matmul",
            "skipped",
            json!({"reason": ""}),
        ),
        // A step's detail is absent when there is none, never null.
        Add(
            "/snapshot/smoke/result/run/devices/1/context/failed",
            "detail",
            json!(null),
        ),
    ];
    for m in &mutations {
        let mut broken = base.clone();
        let at = m.apply(&mut broken);
        assert!(!v.is_valid(&broken), "accepted after changing {at}");
        // Among the innermost errors, one is where the change was (or inside it).
        let eval = v.evaluate(&broken);
        let found: Vec<String> = eval
            .iter_errors()
            .map(|e| e.instance_location.as_str().to_string())
            .collect();
        assert!(
            found
                .iter()
                .any(|p| *p == at || p.starts_with(&format!("{at}/"))),
            "{at}: errors elsewhere: {found:?}"
        );
    }
}
