//! The JSON report is a contract. Its shape is docs/report.schema.json (closed objects, every
//! field written required), blessed from the crate's types: any change to a field changes that
//! file (tests/it/docs.rs) and every report here must validate against it (tests/it/schema.rs's
//! validator). Renaming or removing a field also needs a SCHEMA_VERSION bump. This file checks
//! what a shape cannot: the values rich scenarios write.

use crate::util;

use crate::util::*;
use serde_json::Value;

const EXPECTED_SCHEMA_VERSION: u64 = 1;

/// The report, valid against the blessed schema.
fn parse(stdout: &str) -> Value {
    let report: Value = serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("the JSON report is not JSON: {e}\n{stdout}"));
    crate::schema::assert_valid(&crate::schema::validator(), "report", &report);
    report
}

/// A string field, "" when it is not one.
fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[test]
fn every_field_of_a_rich_report_matches_the_contract() {
    let root = FakeRoot::healthy(2);
    root.chmod("dev/nvidia1", 0o600).file(
        "proc/driver/nvidia/gpus/0000:18:00.0/information",
        "Model: \t\t NVIDIA H100\nDevice Minor: \t 0\n",
    );
    root.gpu("0000:c1:00.0", Some("vfio-pci")).pci(
        "0000:18:00.1",
        "22a3",
        "040300",
        Some("snd_hda_intel"),
    );
    // A torch whose CUDA runtime is missing and a cuDNN found: the linkage probe's
    // bindings, failures and versions are in the report.
    let site = root.torch_venv(
        "2.9.0+cu130",
        Some("13.0"),
        &["nvidia-cudnn-cu13==9.13.0.50"],
    );
    root.lib(
        &format!("{site}/torch/lib"),
        "libtorch_global_deps.so",
        "libtorch_global_deps.so",
        &["libcublas.so.13", "libcudnn.so.9"],
    )
    .lib(
        "usr/lib/x86_64-linux-gnu",
        "libcudnn.so.9.1.0",
        "libcudnn.so.9",
        &[],
    );
    let r = run(root
        .cmd()
        .args(["check", "--json", "--user", ALICE])
        .env("VIRTUAL_ENV", "/venv")
        .env("CUDA_LAUNCH_BLOCKING", "1")
        .env("NCCL_SOCKET_TOKEN", "x"));
    let report = parse(&r.stdout);
    let linkage = &report["snapshot"]["linkage"][0];
    assert_eq!(
        linkage["modules"][0]["failures"].as_array().map(Vec::len),
        Some(1),
        "{}",
        r.stdout
    );
    assert!(
        linkage["versions"]
            .as_array()
            .is_some_and(|v| !v.is_empty()),
        "{}",
        r.stdout
    );
    assert_eq!(
        report["schema_version"], EXPECTED_SCHEMA_VERSION,
        "schema_version changed: bless docs/report.schema.json and update this test"
    );
    assert_eq!(
        report["schema_version"],
        u64::from(gpudoctor::report::SCHEMA_VERSION)
    );
    assert_eq!(report["gpudoctor_version"], env!("CARGO_PKG_VERSION"));
    let findings = report["findings"].as_array().unwrap();
    let count = |sev: &str| findings.iter().filter(|f| f["severity"] == sev).count();
    assert_eq!(report["summary"]["errors"], count("error"));
    assert_eq!(report["summary"]["warnings"], count("warning"));
    assert_eq!(report["summary"]["infos"], 0);
    assert_eq!(r.code, 1);

    let s = &report["snapshot"];
    assert!(s["root"].is_string());
    let probes = s["probes"].as_object().unwrap();
    assert_eq!(probes.len(), 17);
    // The kernel log: read, or why not, naming every source tried.
    let klog = &s["kernel_log"];
    match (klog["scan"].get("value"), klog["scan"].get("missing")) {
        (Some(scan), None) => assert!(
            scan["records"].as_u64() > Some(0) || scan["groups"].as_array().unwrap().is_empty()
        ),
        (None, Some(m)) => {
            assert!(str_at(m, "/detail").contains("/dev/kmsg"), "{m}");
            assert!(klog["passed_over"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p.as_str().unwrap().starts_with("/var/log/kern.log")));
        }
        _ => panic!("a fact is a value or a reason"),
    }
    assert!(s["topology"]["gpus"]["value"]
        .as_array()
        .is_some_and(|g| !g.is_empty()));
    assert_eq!(
        s["container_host"]["cdi"]["dirs"],
        serde_json::json!(["/etc/cdi", "/var/run/cdi"])
    );
    // Under --root without --cuda-lib the smoke test is recorded as not run, with why.
    let smoke = &s["smoke"];
    assert_eq!(smoke["library"], "libcuda.so.1");
    assert_eq!(smoke["result"]["status"], "not_run");
    assert!(str_at(smoke, "/result/reason").contains("--root"));
    assert_eq!(s["nvml"]["library"], "libnvidia-ml.so.1");
    assert_eq!(s["nvml"]["result"]["status"], "not_probed");
    let tk = &s["toolkits"];
    assert_eq!(tk["installs"].as_array().unwrap().len(), 1);
    assert_eq!(tk["installs"][0]["cuda"], "13.0");
    assert!(tk["installs"][0]["version"]["value"].is_string());
    assert_eq!(tk["cuda_home"]["toolkit"], 0);
    let libs = &s["libraries"];
    assert_eq!(libs["search"]["cache"]["value"]["entries"], 3);
    let cuda = libs["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["soname"] == "libcuda.so.1")
        .expect("libcuda");
    let winner = &cuda["candidates"][cuda["winner"].as_u64().expect("winner") as usize];
    assert_eq!(winner["version"], "580.95.05");
    assert_eq!(winner["via"], "ld_so_cache");
    assert!(probes
        .iter()
        .filter(|(name, _)| *name != "pytorch_live" && *name != "smoke")
        .all(|(_, p)| p["status"] == "ok"
            && p["detail"].is_null()
            && p["elapsed_us"].as_u64() < Some(5_000_000)));
    assert_eq!(probes["smoke"]["status"], "skipped");
    assert_eq!(probes["pytorch_live"]["status"], "skipped");
    let id = &s["identity"];
    assert_eq!(
        (&id["uid"], &id["gid"], &id["user_name"], &id["is_process"]),
        (
            &Value::from(4242),
            &Value::from(4242),
            &Value::from("alice"),
            &Value::from(false)
        )
    );
    assert!(id["groups"]
        .as_array()
        .unwrap()
        .contains(&Value::from(4242)));
    assert!(!str_at(id, "/source").is_empty() && id["in_user_namespace"].is_null());

    let p = &s["platform"];
    let os = &p["os"]["value"];
    assert_eq!(
        (&os["id"], &os["version_id"], &os["pretty_name"]),
        (
            &Value::from("ubuntu"),
            &Value::from("22.04"),
            &Value::from("Ubuntu 22.04.4 LTS")
        )
    );
    assert_eq!(p["kernel_release"]["value"], "6.8.0-45-generic");
    assert_eq!(p["arch"]["source"], "/proc/sys/kernel/arch");
    assert!(p["container"]["kind"].is_null() && p["container"]["hints"] == serde_json::json!([]));
    assert!(p["wsl"]["detected"] == false && p["wsl"]["version"].is_null());
    assert!(p["wsl"]["hints"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| !str_at(h, "/kind").is_empty()));

    let km = &s["kernel_module"];
    let v = &km["version_file"]["value"];
    assert_eq!(
        (&v["version"], &v["flavor"], &v["arch"], &v["l4t"]),
        (
            &Value::from("580.95.05"),
            &Value::from("open"),
            &Value::from("x86_64"),
            &Value::from(false)
        )
    );
    assert!(
        str_at(v, "/raw").starts_with("NVRM version:")
            && v["build_date"].is_string()
            && v["compiler"].is_string()
    );
    assert!(km["modules"]["value"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "nvidia_uvm"
            && m["size"] == 1000
            && m["refcount"] == 0
            && m["used_by"] == serde_json::json!([])
            && m["state"] == "Live"));
    assert_eq!(km["sys_version"]["value"], "580.95.05");
    let gpus = km["gpus"]["value"].as_array().unwrap();
    assert_eq!(gpus.len(), 2);
    assert!(gpus.iter().all(|g| g["model"].is_string()
        && g["device_minor"].is_u64()
        && !str_at(g, "/source").is_empty()
        && !str_at(g, "/bus_id").is_empty()));
    assert!(gpus[1]["uuid"].is_string() && gpus[1]["video_bios"].is_string());

    let devices = s["pci"]["devices"]["value"].as_array().unwrap();
    assert_eq!(devices.len(), 4);
    let audio = devices
        .iter()
        .find(|d| d["address"] == "0000:18:00.1")
        .unwrap();
    assert_eq!(
        (&audio["role"], &audio["class"], &audio["device_id"]),
        (
            &Value::from("audio"),
            &Value::from("040300"),
            &Value::from("10de:22a3")
        )
    );
    assert!(devices
        .iter()
        .all(|d| d["subsystem"] == "10de:1234" && !str_at(d, "/source").is_empty()));
    assert!(devices.iter().any(|d| d["driver"] == "vfio-pci"));

    let nodes = &s["device_nodes"];
    assert!(nodes["listing_error"].is_null());
    let n1 = nodes["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["path"] == "/dev/nvidia1")
        .unwrap();
    assert!(n1["present"] == true && n1["kind"] == "regular_file" && n1["mode"] == "0600");
    assert!(
        n1["uid"].is_u64() && n1["gid"].is_u64() && n1["owner"] == "root" && n1["group"] == "video"
    );
    assert!(n1["major"].is_null() && n1["minor"].is_null() && n1["error"].is_null());
    let a = &n1["access"];
    assert!(
        a["read_write"] == false
            && a["method"] == "mode bits"
            && str_at(a, "/detail").contains("alice")
    );

    let token = s["environment"]["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "NCCL_SOCKET_TOKEN")
        .unwrap();
    assert!(
        token["redacted"] == true
            && token["value"] == "<redacted>"
            && token["category"] == "nccl"
            && token["lossy"] == false
    );

    let checks = report["checks"].as_array().unwrap();
    assert!(
        checks
            .iter()
            .any(|c| c["rule"] == "device_nodes" && c["status"] == "failed"),
        "{checks:?}"
    );
    assert!(checks.iter().all(|c| {
        c["codes"].as_array().is_some_and(|c| !c.is_empty()) && !str_at(c, "/detail").is_empty()
    }));

    let codes: Vec<&str> = findings.iter().map(|f| str_at(f, "/code")).collect();
    assert_eq!(
        codes,
        ["GD008", "GD044", "GD060", "GD061", "GD004", "GD012"],
        "worst first, then by code"
    );
    for f in findings {
        let code = str_at(f, "/code");
        let (evidence, fix) = (
            f["evidence"].as_array().unwrap(),
            f["fix"].as_array().unwrap(),
        );
        assert!(
            !str_at(f, "/title").is_empty()
                && !str_at(f, "/detail").is_empty()
                && !evidence.is_empty()
                && !fix.is_empty(),
            "{code}"
        );
        assert!(evidence
            .iter()
            .all(|e| !str_at(e, "/value").is_empty() && !str_at(e, "/source").is_empty()));
        assert!(evidence.iter().any(|e| e["fact"].is_string()));
        assert!(fix.iter().all(|x| !str_at(x, "/text").is_empty()));
        assert!(fix.iter().any(|x| x["command"].is_string()), "{code}");
    }
}

#[test]
fn container_and_wsl_hints_name_their_source() {
    let root = FakeRoot::new();
    root.file(".dockerenv", "")
        .file(
            "proc/version",
            "Linux version 5.15.153.1-microsoft-standard-WSL2\n",
        )
        .file(
            "proc/self/mountinfo",
            "1041 1023 259:2 /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p2 rw\n",
        )
        .file("sys/fs/cgroup/devices/devices.list", "c 195:* m\n")
        .file(
            "var/run/secrets/kubernetes.io/serviceaccount/namespace",
            "training\n",
        )
        .file(".singularity.d/libs/libcuda.so.1", "");
    let report = parse(&run(root.cmd().args(["check", "--json"])).stdout);
    let p = &report["snapshot"]["platform"];
    assert_eq!(p["container"]["kind"], "docker");
    assert_eq!(p["container"]["hints"][0]["source"], "/.dockerenv");
    let given = &p["container"]["given"];
    assert!(given.is_object(), "what the runtime gave: {p}");
    let mount = &given["nvidia_mounts"]["value"][0];
    assert_eq!(
        mount["source_path"],
        "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"
    );
    assert_eq!(mount["kind"], "driver_library");
    assert_eq!(mount["path"], mount["source_path"]);
    assert_eq!(mount["fstype"], "ext4");
    let cgroup = &given["device_cgroup"]["value"];
    assert_eq!(
        (&cgroup["version"], &cgroup["rules"]),
        (&Value::from(1), &serde_json::json!(["c 195:* m"]))
    );
    assert_eq!(given["pod_namespace"]["value"], "training");
    assert_eq!(
        given["apptainer_nv_libs"],
        serde_json::json!(["/.singularity.d/libs/libcuda.so.1"])
    );
    assert_eq!(
        (&p["wsl"]["detected"], &p["wsl"]["version"]),
        (&Value::from(true), &Value::from(2))
    );
    assert_eq!(p["wsl"]["hints"][0]["source"], "/proc/version");
}

/// A consequence carries `caused_by` and `cause_note`; a root cause has neither.
#[test]
fn a_consequence_names_its_root_cause() {
    let root = FakeRoot::new();
    root.modules(&["nvidia_uvm", "nvidia"])
        .nvidia_version("550.127.05")
        .driver_libs("580.95.05")
        .toolkit("usr/local/cuda-13.0", "13.0.2")
        .link("/usr/local/cuda-13.0", "usr/local/cuda");
    root.gpu("0000:18:00.0", Some("nvidia"))
        .driver_gpu("0000:18:00.0", "NVIDIA H100 80GB HBM3", 0);
    let multi = "/usr/lib/x86_64-linux-gnu";
    root.ld_cache(&[
        ("libcuda.so.1", &format!("{multi}/libcuda.so.1")),
        ("libnvidia-ml.so.1", &format!("{multi}/libnvidia-ml.so.1")),
    ]);
    let r = run(root.cmd().args(["check", "--json"]));
    let report = parse(&r.stdout);
    let by_code = |code: &str| {
        let f = report["findings"].as_array().unwrap().iter();
        f.clone().find(|f| f["code"] == code).unwrap()
    };
    assert_eq!(by_code("GD017")["caused_by"], "GD018");
    assert!(str_at(by_code("GD017"), "/cause_note").contains("reboot"));
    // A root cause has neither field.
    let root_cause = by_code("GD018").as_object().unwrap();
    assert!(!root_cause.contains_key("caused_by") && !root_cause.contains_key("cause_note"));
}

#[test]
fn missing_facts_carry_a_reason() {
    let root = FakeRoot::new();
    root.remove("proc/modules")
        .bytes("proc/driver/nvidia/version", b"\x00\x01garbage\xff");
    let r = run(root.cmd().args(["check", "--json"]));
    let report = parse(&r.stdout);
    let km = &report["snapshot"]["kernel_module"];
    let m = &km["modules"]["missing"];
    assert!(km["modules"].get("value").is_none());
    assert_eq!(m["reason"], "not_found");
    assert!(str_at(m, "/detail").contains("not found"));
    assert_eq!(km["modules"]["source"], "/proc/modules");
    assert_eq!(km["version_file"]["missing"]["reason"], "malformed");
}

#[test]
fn a_smoke_run_matches_the_contract() {
    use util::fake_cuda::{fake_cuda_lib, FakeCuda, FAKE_CUDA_ENV};
    let root = FakeRoot::healthy(2);
    let dir = tempfile::tempdir().unwrap();
    let mut cuda = FakeCuda::h100(2);
    for d in &mut cuda.devices {
        d.total_memory = 32 << 20;
    }
    // Every step shape: ok on GPU 0; failed (with the JIT log) and skipped on GPU 1.
    cuda.devices[1].module_error = Some(209);
    let cfg = cuda.write(dir.path());
    let cmd = |extra: &[&str]| {
        let mut c = root.cmd();
        c.args([
            "check",
            "--json",
            "--matmul-size",
            "32",
            "--transfer-size",
            "2",
        ])
        .args(extra)
        .arg("--cuda-lib")
        .arg(fake_cuda_lib())
        .env(FAKE_CUDA_ENV, &cfg);
        c
    };
    let report = parse(&run(&mut cmd(&[])).stdout);
    let smoke = &report["snapshot"]["smoke"];
    assert_eq!(smoke["result"]["status"], "ran");
    let run = &smoke["result"]["run"];
    let devices = run["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2);
    assert!(devices[0]["matmul"]["ok"].is_object());
    assert!(devices[1]["module"]["failed"]["detail"].is_string());
    assert!(devices[1]["memory"]["skipped"].is_object());
    // Both peer pairs are skipped: GPU 1 has no kernels.
    let peers = run["peers"].as_array().unwrap();
    assert_eq!(peers.len(), 2);
    assert!(peers
        .iter()
        .all(|p| p["finished"] == true && p["copy"]["skipped"].is_object()));
    assert_eq!(report["snapshot"]["probes"]["smoke"]["status"], "ok");
    assert!(smoke.get("nccl").is_none_or(Value::is_null));

    // --nccl: the request and the worker's all-reduce.
    let mut ok = cuda.clone();
    ok.devices[1].module_error = None;
    ok.write(dir.path());
    let nccl_lib = util::fake_nccl::fake_nccl_lib();
    let report = parse(&util::run(&mut cmd(&["--nccl-lib", nccl_lib.to_str().unwrap()])).stdout);
    let smoke = &report["snapshot"]["smoke"];
    let req = &smoke["nccl"];
    assert_eq!(req["chosen_by"], "--nccl-lib");
    assert_eq!(
        req["debug"]["transports"],
        serde_json::json!(["P2P/CUMEM/read"])
    );
    assert_eq!(smoke["result"]["status"], "ran");
    let n = &smoke["result"]["run"]["nccl"];
    assert_eq!(n["finished"], true, "{n}");
    assert_eq!(n["all_reduce"]["wrong_elements"], 0);
    assert!(report["snapshot"]["nccl"].is_object());

    // A hang keeps the partial run in the same shape.
    let mut hung = cuda.clone();
    hung.devices[1].module_error = None;
    hung.devices[1].hang_in = Some("cuDevicePrimaryCtxRetain".into());
    hung.write(dir.path());
    let report = parse(&util::run(&mut cmd(&["--timeout", "2"])).stdout);
    let result = &report["snapshot"]["smoke"]["result"];
    assert_eq!(result["status"], "timed_out");
    assert_eq!(result["stuck_at"].as_array().map(Vec::len), Some(1));
    let devices = &result["run"]["devices"];
    assert!(devices[0]["finished"] == true && devices[1]["finished"] == false);
    assert_eq!(devices[1]["running"], "context");
}

#[test]
fn an_image_report_matches_the_contract() {
    use std::process::Command;
    if !util::image_tools::have("umoci") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let layout = dir.path().join("layout");
    let image = format!("{}:v1", layout.display());
    let ok = |c: &mut Command| assert!(c.status().unwrap().success(), "{c:?}");
    ok(Command::new("umoci")
        .args(["init", "--layout"])
        .arg(&layout));
    ok(Command::new("umoci").args(["new", "--image", &image]));
    ok(Command::new("umoci").args([
        "config",
        "--image",
        &image,
        "--config.env=CUDA_VERSION=12.8.1",
        "--config.user=1000",
        "--config.workingdir=/work",
        "--config.label=org.opencontainers.image.title=cuda",
        "--config.entrypoint=/bin/sh",
        "--config.cmd=-c",
    ]));
    let root = FakeRoot::new();
    let r = run(root.cmd().args(["check", "--json", "--image"]).arg(&layout));
    let report = parse(&r.stdout);
    let img = &report["snapshot"]["image"];
    assert_eq!(img["path"], layout.display().to_string());
    assert_eq!(img["format"], "oci_layout");
    assert_eq!(img["reference"], "v1");
    assert!(str_at(img, "/manifest_digest").starts_with("sha256:"));
    assert!(str_at(img, "/config_digest").starts_with("sha256:"));
    assert_eq!(img["os"], "linux");
    assert!(!str_at(img, "/architecture").is_empty() && img["variant"].is_null());
    assert!(
        img["platforms"].as_array().unwrap().len() <= 1 && img["matches_host"] == true,
        "{}",
        img["platforms"]
    );
    assert!(img["env"]
        .as_array()
        .unwrap()
        .contains(&Value::from("CUDA_VERSION=12.8.1")));
    assert_eq!(img["user"], "1000");
    assert_eq!(img["working_dir"], "/work");
    assert_eq!(
        (&img["entrypoint"], &img["cmd"]),
        (&serde_json::json!(["/bin/sh"]), &serde_json::json!(["-c"]))
    );
    assert_eq!(img["labels"]["org.opencontainers.image.title"], "cuda");
    let layers = img["layers"].as_array().unwrap();
    for l in layers {
        assert!(
            str_at(l, "/digest").starts_with("sha256:") && !str_at(l, "/media_type").is_empty()
        );
        assert!(
            l["compressed_bytes"].as_u64() > Some(0)
                && l["unpacked_bytes"].as_u64() >= l["entries"].as_u64()
        );
    }
    assert!(img["skipped"] == serde_json::json!([]) && img["skipped_more"] == 0);
    assert_eq!(
        img["unpacked_bytes"].as_u64(),
        Some(
            layers
                .iter()
                .filter_map(|l| l["unpacked_bytes"].as_u64())
                .sum()
        )
    );
}
