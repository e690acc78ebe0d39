//! `gpudoctor fleet` over real node reports written by `check --format json --output
//! DIR/{host}.json` from fake nodes of several shapes (fake roots, the fake NVML, the fake
//! libcuda), a few of them broken.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::util::fake_cuda::{self, FakeCuda, FAKE_CUDA_ENV};
use crate::util::fake_nvml::{self, FAKE_NVML_ENV};
use crate::util::fleet_nodes::{build_fleet, machine_id, node_report};
use crate::util::gpu_node::hgx;
use crate::util::*;
use serde_json::Value;

fn fleet(args: &[&Path]) -> (i32, Value) {
    let mut c = gpudoctor();
    c.arg("fleet");
    for a in args {
        c.arg(a);
    }
    json(&mut c)
}

#[test]
fn output_writes_the_report_under_the_node_name_and_prints_the_human_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reports/sub");
    let r = node_report(&out, "gpu-a17", &FakeRoot::healthy(2), None, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // stdout: the human report; the file: the JSON.
    assert!(r.stdout.contains("Devices"), "{}", r.stdout);
    assert!(r.stderr.contains("report written to"), "{}", r.stderr);
    let file = out.join("gpu-a17.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let node = &v["snapshot"]["node"];
    assert_eq!(node["name"], "gpu-a17");
    assert_eq!(node["hostname"], "gpu-a17");
    assert_eq!(node["gpudoctor_version"], env!("CARGO_PKG_VERSION"));
    assert!(node["time"].as_str().unwrap().ends_with('Z'));
    // The machine id is hashed, never the raw value.
    let id = node["machine_id"].as_str().unwrap();
    assert_eq!(id.len(), 32);
    assert!(!v.to_string().contains(&machine_id("gpu-a17")));
    // No temporary file left behind.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn scheduler_context_arrives_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = FakeRoot::healthy(1);
    node_report(
        dir.path(),
        "ignored-hostname",
        &root,
        None,
        &[
            ("SLURM_JOB_ID", "4711"),
            ("SLURMD_NODENAME", "gpu017"),
            ("SLURM_PROCID", "0"),
            ("SLURM_CLUSTER_NAME", "big"),
        ],
    );
    // The scheduler's node name wins for {host}.
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("gpu017.json")).unwrap())
            .unwrap();
    let node = &v["snapshot"]["node"];
    assert_eq!(node["name"], "gpu017");
    assert_eq!(node["hostname"], "ignored-hostname");
    assert_eq!(node["slurm"]["job_id"], "4711");
    assert_eq!(node["slurm"]["proc_id"], "0");
    assert_eq!(node["slurm"]["cluster_name"], "big");
    assert!(node["kubernetes"].is_null());

    let k8s = tempfile::tempdir().unwrap();
    node_report(
        k8s.path(),
        "pod-hostname",
        &root,
        None,
        &[
            ("NODE_NAME", "k8s-node-3"),
            ("POD_NAME", "gpudoctor-x7"),
            ("POD_NAMESPACE", "gpu-health"),
            ("KUBERNETES_SERVICE_HOST", "10.0.0.1"),
        ],
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(k8s.path().join("k8s-node-3.json")).unwrap())
            .unwrap();
    let k = &v["snapshot"]["node"]["kubernetes"];
    assert_eq!(k["node_name"], "k8s-node-3");
    assert_eq!(k["pod_name"], "gpudoctor-x7");
    assert_eq!(k["namespace"], "gpu-health");
    assert_eq!(k["in_pod"], true);
}

#[test]
fn fleet_finds_the_shape_the_outliers_and_groups_findings() {
    let dir = tempfile::tempdir().unwrap();
    build_fleet(dir.path());
    // GPUDOCTOR_FLEET_SAMPLE=DIR keeps these reports (the example output in docs/fleet.md).
    if let Some(keep) = std::env::var_os("GPUDOCTOR_FLEET_SAMPLE") {
        std::fs::create_dir_all(&keep).unwrap();
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), Path::new(&keep).join(e.file_name())).unwrap();
        }
    }
    let (code, v) = fleet(&[dir.path()]);
    assert_eq!(code, 1, "GD006 on node010 is an error");
    let shape = &v["shape"];
    assert_eq!(shape["nodes"], 10);
    assert_eq!(shape["gpus"], 8 * 5 + 8 + 7 + 8 + 2);
    assert_eq!(shape["gpus_by_model"][0]["model"], "NVIDIA H100 80GB HBM3");
    assert_eq!(shape["gpus_by_model"][0]["gpus"], 63);
    assert_eq!(shape["gpus_by_model"][0]["nodes"], 8);
    assert_eq!(
        shape["gpus_by_model"][1]["model"],
        "NVIDIA GeForce RTX 4090"
    );
    assert_eq!(shape["drivers"][0]["value"], "580.95.05");
    assert_eq!(shape["drivers"][0]["nodes"], 9);
    assert_eq!(shape["drivers"][1]["value"], "550.127.05");

    let outliers = v["outliers"].as_array().unwrap();
    let has = |node: &str, what: &str| {
        outliers
            .iter()
            .any(|o| o["node"] == node && o["what"] == what)
    };
    assert!(has("node006", "driver"), "{outliers:#?}");
    assert!(has("node006", "cuda"), "{outliers:#?}");
    assert!(has("node007", "gpu_count"), "{outliers:#?}");
    let o7 = outliers.iter().find(|o| o["node"] == "node007").unwrap();
    assert_eq!(o7["value"], "7");
    assert_eq!(o7["peers"], "8");
    // The workstations are their own group: not outliers of the H100 nodes.
    assert!(
        !outliers
            .iter()
            .any(|o| o["node"] == "ws1" || o["node"] == "ws2"),
        "{outliers:#?}"
    );
    // Healthy H100 nodes are nobody's outliers.
    assert!(!outliers.iter().any(|o| o["node"] == "node001"));

    let groups = v["findings"].as_array().unwrap();
    let gd006 = groups
        .iter()
        .find(|g| g["code"] == "GD006")
        .expect("GD006 grouped");
    assert_eq!(gd006["severity"], "error");
    assert_eq!(gd006["nodes"], 1);
    assert_eq!(gd006["node_names"][0], "node010");
    // Worst first.
    assert_eq!(groups[0]["severity"], "error");
    assert!(v["nodes_with_errors"].as_u64().unwrap() >= 1);
    assert!(v["problems"].as_array().unwrap().is_empty());

    // Human and Markdown say the same.
    let r = run(gpudoctor().arg("fleet").arg(dir.path()));
    assert!(
        r.stdout.contains("Fleet: 10 nodes, 65 GPUs"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("error[GD006] on 1 of 10 nodes: node010"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("node007 gpu_count"), "{}", r.stdout);
    let r = run(gpudoctor()
        .args(["fleet", "--format", "markdown"])
        .arg(dir.path()));
    assert!(
        r.stdout.contains("| GD006 | error | 1 of 10 |"),
        "{}",
        r.stdout
    );
}

#[test]
fn unusable_reports_are_listed_never_dropped() {
    let dir = tempfile::tempdir().unwrap();
    node_report(dir.path(), "good1", &FakeRoot::healthy(1), None, &[]);
    std::fs::write(
        dir.path().join("truncated.json"),
        "{\"schema_version\": 1, \"snap",
    )
    .unwrap();
    std::fs::write(dir.path().join("other.json"), "{\"hello\": 1}").unwrap();
    let good = std::fs::read_to_string(dir.path().join("good1.json")).unwrap();
    std::fs::write(
        dir.path().join("future.json"),
        good.replacen("\"schema_version\": 1", "\"schema_version\": 99", 1),
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a report, not looked at").unwrap();
    let missing = dir.path().join("node404.json");
    let (code, v) = fleet(&[dir.path(), &missing]);
    assert_eq!(code, 1, "unusable reports fail the gate");
    assert_eq!(v["shape"]["nodes"], 1);
    let problems = v["problems"].as_array().unwrap();
    let kind = |file: &str| {
        problems
            .iter()
            .find(|p| p["source"].as_str().unwrap().ends_with(file))
            .map(|p| p["kind"].as_str().unwrap().to_string())
    };
    assert_eq!(
        kind("truncated.json").as_deref(),
        Some("not_json"),
        "{problems:#?}"
    );
    assert_eq!(kind("other.json").as_deref(), Some("not_a_report"));
    assert_eq!(kind("future.json").as_deref(), Some("incompatible_schema"));
    assert_eq!(kind("node404.json").as_deref(), Some("missing"));
    assert_eq!(problems.len(), 4, "{problems:#?}");
    // --fail-on never: informative only.
    let r = run(gpudoctor()
        .args(["fleet", "--fail-on", "never"])
        .arg(dir.path()));
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("Reports not used"), "{}", r.stdout);
}

#[test]
fn newline_delimited_reports_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a1", "a2"] {
        node_report(dir.path(), name, &FakeRoot::healthy(1), None, &[]);
    }
    let mut ndjson = String::new();
    for name in ["a1", "a2"] {
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        ndjson.push_str(&v.to_string());
        ndjson.push('\n');
    }
    ndjson.push_str("garbage\n\n");
    let r = run(gpudoctor()
        .args(["fleet", "--json", "-"])
        .write_stdin(ndjson));
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["shape"]["nodes"], 2);
    assert_eq!(v["problems"][0]["source"], "stdin:3");
    assert_eq!(v["problems"][0]["kind"], "not_json");
}

/// A report with the smoke test run on the fake libcuda, written under `name`.
fn smoke_report(dir: &Path, name: &str) -> PathBuf {
    let root = FakeRoot::healthy(2);
    root.file("etc/hostname", name);
    let cfg = tempfile::tempdir().unwrap();
    let mut cuda = FakeCuda::h100(2);
    cuda.driver_version = 13000;
    for d in &mut cuda.devices {
        d.total_memory = 16 << 20;
    }
    let mut c = root.cmd();
    c.args([
        "check",
        "--format",
        "json",
        "--matmul-size",
        "32",
        "--transfer-size",
        "1",
        "--output",
    ])
    .arg(dir.join("{host}.json"))
    .arg("--nvml-lib")
    .arg(fake_nvml::fake_nvml_lib())
    .env(FAKE_NVML_ENV, hgx(2).write(cfg.path()))
    .arg("--cuda-lib")
    .arg(fake_cuda::fake_cuda_lib())
    .env(FAKE_CUDA_ENV, cuda.write(cfg.path()));
    let r = run(&mut c);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    dir.join(format!("{name}.json"))
}

/// Sets every GPU's figure at `path` (a JSON pointer below each device) in a report.
fn set_figure(v: &mut Value, step: &str, key: &str, x: f64) {
    for d in v["snapshot"]["smoke"]["result"]["run"]["devices"]
        .as_array_mut()
        .unwrap()
    {
        d[step]["ok"][key] = serde_json::json!(x);
    }
}

#[test]
fn smoke_figures_far_below_the_peers_are_outliers() {
    let dir = tempfile::tempdir().unwrap();
    let real = smoke_report(dir.path(), "template");
    let template: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    std::fs::remove_file(&real).unwrap();
    // Same figures on five nodes (the fake's own are CPU noise), then one slow in each way.
    for (i, (gflops, gbps)) in [
        (5000.0, 50.0),
        (5100.0, 51.0),
        (4900.0, 49.0),
        (5050.0, 50.5),
        (1200.0, 50.0),
        (5000.0, 9.0),
    ]
    .into_iter()
    .enumerate()
    {
        let mut v = template.clone();
        let name = format!("hgx{}", i + 1);
        v["snapshot"]["node"]["name"] = Value::String(name.clone());
        set_figure(&mut v, "matmul", "gflops", gflops);
        set_figure(&mut v, "transfer", "pinned_h2d_gbps", gbps);
        set_figure(&mut v, "transfer", "pinned_d2h_gbps", gbps);
        std::fs::write(dir.path().join(format!("{name}.json")), v.to_string()).unwrap();
    }
    let (_, v) = fleet(&[dir.path()]);
    let outliers = v["outliers"].as_array().unwrap();
    let slow: Vec<(String, String)> = outliers
        .iter()
        .filter(|o| o["what"] == "matmul" || o["what"] == "bandwidth")
        .map(|o| {
            (
                o["node"].as_str().unwrap().to_string(),
                o["what"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        slow,
        vec![
            ("hgx5".to_string(), "matmul".to_string()),
            ("hgx6".to_string(), "bandwidth".to_string())
        ],
        "{outliers:#?}"
    );
    let m = outliers.iter().find(|o| o["node"] == "hgx5").unwrap();
    assert_eq!(m["value"], "1200.0 GFLOP/s");
    assert_eq!(m["peers"], "median 5000.0 GFLOP/s of 5 peer(s)");
}

#[test]
fn ten_thousand_reports_aggregate() {
    // docs/performance.md's figure is measured on a release build with hyperfine; here the debug
    // build only has to finish in reasonable time with every node counted.
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("seed");
    // Findings common to every node (persistence off: GD038) make the grouping work too.
    let mut nvml = hgx(8);
    for g in &mut nvml.devices {
        g.persistence_mode = Some(false);
    }
    node_report(&real, "seed", &FakeRoot::healthy(8), Some(&nvml), &[]);
    let text = std::fs::read_to_string(real.join("seed.json")).unwrap();
    let seed_id = serde_json::from_str::<Value>(&text).unwrap()["snapshot"]["node"]["machine_id"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_dir_all(&real).unwrap();
    let reports = dir.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    // Each node its own name and machine id, as real nodes have.
    for i in 0..10_000 {
        let name = format!("n{i:05}");
        std::fs::write(
            reports.join(format!("{name}.json")),
            text.replace("\"name\": \"seed\"", &format!("\"name\": \"{name}\""))
                .replace(&seed_id, &format!("{i:032x}")),
        )
        .unwrap();
    }
    // GPUDOCTOR_BENCH_FLEET=DIR keeps the reports for docs/performance.md's hyperfine figure.
    if let Some(keep) = std::env::var_os("GPUDOCTOR_BENCH_FLEET") {
        let _ = std::fs::remove_dir_all(&keep);
        std::fs::rename(&reports, &keep).unwrap();
        return;
    }
    let t = Instant::now();
    let (code, v) = fleet(&[&reports]);
    let took = t.elapsed();
    assert_eq!(code, 0);
    assert_eq!(v["shape"]["nodes"], 10_000);
    assert_eq!(v["identity"], serde_json::json!([]), "distinct machines");
    assert_eq!(v["findings"][0]["code"], "GD038");
    assert_eq!(v["findings"][0]["nodes"], 10_000);
    assert_eq!(v["shape"]["gpus"], 80_000);
    assert!(v["outliers"].as_array().unwrap().is_empty());
    assert!(took < Duration::from_secs(60), "{took:?}");
}

/// Peak resident memory (KiB) and exit code of `fleet -` over `n` copies of `report`, each
/// under its own name and machine id.
fn fleet_peak_kib(report: &Value, n: usize, dir: &Path) -> (u64, i32) {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    let stream = dir.join(format!("fleet-{n}.jsonl"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&stream).unwrap());
    let mut v = report.clone();
    for i in 0..n {
        v["snapshot"]["node"]["name"] = format!("n{i:06}").into();
        v["snapshot"]["node"]["machine_id"] = format!("{i:032x}").into();
        serde_json::to_writer(&mut f, &v).unwrap();
        f.write_all(b"\n").unwrap();
    }
    f.into_inner().unwrap().sync_all().unwrap();
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpudoctor"))
        .arg("fleet")
        .arg("-")
        .env_clear()
        .env("NO_COLOR", "1")
        .stdin(std::fs::File::open(&stream).unwrap())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills; the pid is our own child's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; waits for that child only.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    // Reaped by wait4 above; the handle has nothing left to wait for.
    drop(child);
    let _ = std::fs::remove_file(&stream);
    let code = std::process::ExitStatus::from_raw(status)
        .code()
        .unwrap_or(-1);
    (usage.ru_maxrss as u64, code)
}

/// The fleet keeps per node only what its views need, and one copy of what nodes share (a
/// model name, a driver version, a finding with its evidence): the memory `fleet` needs
/// grows by about 0.8 KiB per report on an idle machine, up to twice that beside a busy test
/// suite (the allocator's per-thread heaps). Keeping each node's strings and findings whole
/// took 7 KiB per report here (275 MiB for the 100,000 reports of `.ci/bench fleet`).
#[test]
fn fleet_memory_per_report_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("seed");
    let mut nvml = hgx(8);
    for g in &mut nvml.devices {
        g.persistence_mode = Some(false);
    }
    node_report(&seed, "seed", &FakeRoot::healthy(8), Some(&nvml), &[]);
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(seed.join("seed.json")).unwrap()).unwrap();
    // What the fleet reads of a report but NVML's (27 KB), so the debug build parses 40,000
    // of them quickly: the node, the driver's GPUs, the PCI bus, what the report derived and
    // its findings.
    let snapshot = &mut report["snapshot"];
    let keep = ["node", "kernel_module", "pci"];
    snapshot
        .as_object_mut()
        .unwrap()
        .retain(|k, _| keep.contains(&k.as_str()));
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["code"] == "GD038"),
        "every node has a finding with evidence and a fix: {findings:?}"
    );
    let (small, code) = fleet_peak_kib(&report, 10_000, dir.path());
    assert_eq!(code, 0);
    let (large, code) = fleet_peak_kib(&report, 40_000, dir.path());
    assert_eq!(code, 0);
    let per_report = large.saturating_sub(small) as f64 * 1024.0 / 30_000.0;
    eprintln!("{per_report:.0} B per report ({small} KiB for 10,000, {large} KiB for 40,000)");
    assert!(
        per_report < 2500.0,
        "{per_report:.0} B per report ({small} KiB for 10,000, {large} KiB for 40,000)"
    );
}

#[test]
fn a_gpu_nvml_cannot_name_still_counts_toward_the_models() {
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let good = FakeRoot::healthy(8);
    node_report(&reports, "node1", &good, Some(&hgx(8)), &[]);
    let odd = FakeRoot::healthy(8);
    let mut nvml = hgx(8);
    nvml.gpu(2).handle_error = Some(999);
    node_report(&reports, "node2", &odd, Some(&nvml), &[]);
    let (_, v) = fleet(&[&reports]);
    let shape = &v["shape"];
    assert_eq!(shape["gpus"], 16, "{shape:#}");
    let by_model: u64 = shape["gpus_by_model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["gpus"].as_u64().unwrap())
        .sum();
    assert_eq!(by_model, 16, "the models add up to the GPUs: {shape:#}");
    assert!(
        shape["gpus_by_model"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["model"] == "GPU NVML could not name" && m["gpus"] == 1),
        "{shape:#}"
    );
}

#[test]
fn a_node_missing_a_gpu_deviates_and_an_expected_count_makes_it_an_error() {
    let dir = tempfile::tempdir().unwrap();
    build_fleet(dir.path());
    // node007 has 7 of the 8 GPUs its peers have: deviating, never clean.
    let (_, v) = fleet(&[dir.path()]);
    let count = |k: &str| v[k].as_u64().unwrap();
    assert_eq!(
        count("deviating_nodes"),
        1,
        "node007 (node006 has an error)"
    );
    assert_eq!(count("nodes_with_errors"), 2, "node006, node010");
    assert_eq!(
        count("nodes_with_errors")
            + count("deviating_nodes")
            + count("nodes_with_warnings")
            + count("clean_nodes"),
        10
    );
    assert_eq!(count("clean_nodes"), 7);
    let r = run(gpudoctor().arg("fleet").arg(dir.path()));
    assert!(
        r.stdout
            .contains("2 with errors, 1 deviating, 0 with warnings, 7 clean"),
        "{}",
        r.stdout
    );
    // --expect-gpus 8: node007 and the two 1-GPU workstations miss GPUs: errors.
    let (code, v) = json(
        gpudoctor()
            .args(["fleet", "--expect-gpus", "8"])
            .arg(dir.path()),
    );
    assert_eq!(code, 1);
    let gd087 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["code"] == "GD087")
        .expect("GD087 grouped");
    assert_eq!(gd087["severity"], "error");
    assert_eq!(
        gd087["node_names"],
        serde_json::json!(["node007", "ws1", "ws2"])
    );
    assert_eq!(v["nodes_with_errors"], 5);
    assert_eq!(v["deviating_nodes"], 0);
    // The same from the configuration file.
    let cfg = tempfile::tempdir().unwrap();
    let file = cfg.path().join("site.toml");
    let with_config = |text: &str| {
        std::fs::write(&file, text).unwrap();
        json(
            gpudoctor()
                .arg("fleet")
                .arg(dir.path())
                .arg("--config")
                .arg(&file),
        )
        .1
    };
    let v = with_config("gpus_per_node = 8\n");
    assert_eq!(v["nodes_with_errors"], 5);
    // The driver branch and the GPU model a site expects: node006 runs 550, the
    // workstations have RTX 4090s.
    let v = with_config("driver = \"580\"\ngpu_model = \"H100\"\n");
    let gd087 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["code"] == "GD087")
        .flat_map(|g| g["node_names"].as_array().unwrap().iter())
        .map(|n| n.as_str().unwrap().to_string())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(
        gd087.into_iter().collect::<Vec<_>>(),
        ["node006", "ws1", "ws2"],
        "{:#}",
        v["findings"]
    );
}

#[test]
fn check_with_an_expected_count_names_the_gpu_the_driver_did_not_bring_up() {
    // The PCI bus lists 8 GPUs; NVML counts 7.
    let root = FakeRoot::healthy(8);
    let cfg = tempfile::tempdir().unwrap();
    let nvml = hgx(7);
    // `check --no-smoke` with these arguments and variables, NVML counting 7 GPUs.
    let check = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = root.cmd();
        c.args(["check", "--no-smoke"])
            .args(args)
            .envs(env.iter().copied())
            .arg("--nvml-lib")
            .arg(fake_nvml::fake_nvml_lib())
            .env(FAKE_NVML_ENV, nvml.write(cfg.path()));
        c
    };
    let plain = run(&mut check(&[], &[]));
    assert!(!plain.stdout.contains("GD087"), "{}", plain.stdout);
    let r = run(&mut check(&["--expect-gpus", "8"], &[]));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("7 of the 8 expected GPUs: 0000:1f:00.0 on the PCI bus but not up"),
        "{}",
        r.stdout
    );
    // The same expectation from the environment, and in the JSON report for replays.
    let (code, v) = json(&mut check(&[], &[("GPUDOCTOR_EXPECT_GPUS", "8")]));
    assert_eq!(code, 1);
    assert_eq!(v["snapshot"]["expect"]["gpus"]["value"], 8);
    assert_eq!(
        v["snapshot"]["expect"]["gpus"]["from"],
        "$GPUDOCTOR_EXPECT_GPUS"
    );
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "GD087")
        .expect("GD087");
    assert!(
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["fact"] == "pci:0000:1f:00.0"),
        "{f:#}"
    );
    // The printed command, run by bash: it finds the driver's reason for that GPU in the
    // kernel log (`sudo` and `dmesg` stand-ins print a log as the driver writes it).
    let cmd = f["fix"][0]["command"].as_str().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("kmsg.txt");
    std::fs::write(
        &log,
        "[    4.120331] nvme 0000:1e:00.0: platform quirk: setting simple suspend\n         [    9.871022] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05\n         [   12.004417] NVRM: GPU 0000:1f:00.0: RmInitAdapter failed! (0x22:0x56:742)\n         [   12.004455] NVRM: GPU 0000:1f:00.0: rm_init_adapter failed, device minor number 7\n         [   15.330001] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n",
    )
    .unwrap();
    for (name, body) in [
        ("sudo", "#!/bin/sh\nexec \"$@\"\n".to_string()),
        (
            "dmesg",
            format!("#!/bin/sh\nexec cat '{}'\n", log.display()),
        ),
    ] {
        let p = bin.path().join(name);
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", cmd])
        .env("PATH", path)
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&out.stdout);
    assert!(
        found.contains("NVRM: GPU 0000:1f:00.0: RmInitAdapter failed!"),
        "`{cmd}` found:\n{found}"
    );
    assert!(
        !found.contains("usb 1-1") && !found.contains("nvme"),
        "`{cmd}`:\n{found}"
    );
    // The driver a site expects, from the environment: this node runs 580.95.05.
    let r = run(&mut check(&[], &[("GPUDOCTOR_EXPECT_DRIVER", "550")]));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("error[GD087]: Driver 580.95.05 is loaded, not the expected 550"),
        "{}",
        r.stdout
    );
    // Bad values are usage errors.
    for bad in ["0", "eight"] {
        let r = run(root
            .cmd()
            .args(["check", "--no-smoke", "--expect-gpus", bad]));
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
    }
}
/// A node that judged itself against part of the expected shape (its own driver
/// expectation) is still judged by the fleet on the rest (its GPU count), and not twice on
/// the part it judged.
#[test]
fn the_fleet_judges_what_a_node_did_not_judge_itself() {
    let dir = tempfile::tempdir().unwrap();
    // 8 GPUs on the bus, NVML counts 7; the node's own check expected driver 550.
    let root = FakeRoot::healthy(8);
    let r = node_report(
        dir.path(),
        "node011",
        &root,
        Some(&hgx(7)),
        &[("GPUDOCTOR_EXPECT_DRIVER", "550")],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    // node012: the same 7 GPUs, its own check expecting 4.
    let root = FakeRoot::healthy(8);
    let r = node_report(
        dir.path(),
        "node012",
        &root,
        Some(&hgx(7)),
        &[("GPUDOCTOR_EXPECT_GPUS", "4")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let errors_of = |v: &Value, node: &str| {
        v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == node)
            .unwrap()["errors"]
            .as_u64()
            .unwrap()
    };
    let errors = |v: &Value| errors_of(v, "node011");
    let (_, plain) = fleet(&[dir.path()]);
    assert_eq!(errors(&plain), 1, "its own GD087 (driver)");
    assert_eq!(errors_of(&plain, "node012"), 0);
    // The fleet's GPU count adds a GD087; its driver expectation does not judge again.
    let cfg = tempfile::tempdir().unwrap();
    let file = cfg.path().join("site.toml");
    std::fs::write(&file, "driver = \"580\"\n").unwrap();
    let (_, v) = json(
        gpudoctor()
            .args(["fleet", "--expect-gpus", "8", "--config"])
            .arg(&file)
            .arg(dir.path()),
    );
    assert_eq!(errors(&v), 2, "{:#}", v["findings"]);
    // The site's 8 is not the 4 node012 held itself to: judged again.
    assert_eq!(errors_of(&v, "node012"), 1, "{:#}", v["findings"]);
}

/// The fleet's text ends as `check` does: what to fix, worst first — each code that is a
/// root cause with its nodes and first fix command, the nodes that deviate from their peers
/// — then the counts again, so the last screen names every blocker.
#[test]
fn the_fleet_text_ends_with_what_to_fix_and_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    crate::util::fleet_nodes::build_fleet(dir.path());
    // node011: node010's fault, its fix written for another GPU index (as a reset names one).
    let ten = std::fs::read_to_string(dir.path().join("node010.json")).unwrap();
    let eleven = ten.replace("node010", "node011").replace(
        "sudo nvidia-modprobe -u -c=0",
        "sudo nvidia-modprobe -u -c=1",
    );
    std::fs::write(dir.path().join("node011.json"), eleven).unwrap();
    let r = run(gpudoctor()
        .arg("fleet")
        .arg(dir.path())
        .args(["--color", "never"])
        .env("COLUMNS", "80"));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let recap = r
        .stdout
        .split("\nTo fix, worst first (")
        .nth(1)
        .unwrap_or_else(|| panic!("no recap:\n{}", r.stdout));
    let lines: Vec<&str> = recap.lines().collect();
    assert!(
        lines[1].starts_with("✗ GD006 on node010, node011: nvidia_uvm is not loaded"),
        "{recap}"
    );
    // The command differs between the nodes: the first node's, named.
    assert_eq!(
        lines[2], "    node010: $ sudo nvidia-modprobe -u -c=0",
        "{recap}"
    );
    assert!(lines[3].starts_with("✗ GD017 on node006: "), "{recap}");
    let deviation = lines
        .iter()
        .position(|l| *l == "≠ node007: gpu_count 7 (peers: 8)");
    let warning_or_end = lines.iter().position(|l| l.is_empty()).unwrap();
    assert!(deviation.is_some_and(|d| d < warning_or_end), "{recap}");
    // The counts end the screen.
    let last = r.stdout.lines().last().unwrap();
    assert_eq!(
        last,
        "11 nodes: 3 with errors, 1 deviating, 0 with warnings, 7 clean"
    );
    // JSON: the group's command, its node, and whether every node has the same one.
    let (_, v) = json(gpudoctor().arg("fleet").arg(dir.path()));
    let g = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["code"] == "GD006")
        .unwrap();
    assert_eq!(g["fix"]["command"], "sudo nvidia-modprobe -u -c=0");
    assert_eq!(g["fix"]["node"], "node010");
    assert_eq!(g["fix"]["same_on_every_node"], false);
}
