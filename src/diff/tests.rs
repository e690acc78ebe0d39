use crate::codes;
use serde_json::{json, Value};

use super::*;

/// A small report in the shape `check --format json` writes (schema_version 1), with two
/// GPUs, a torch venv with two wheels, a toolkit and one finding.
fn report() -> Value {
    json!({
        "schema_version": 1,
        "gpudoctor_version": "0.1.0",
        "snapshot": {
            "root": null,
            "node": {"name": "gpu1", "hostname": "gpu1", "machine_id": "abc", "time": "2026-01-01T00:00:00Z",
                     "gpudoctor_version": "0.1.0", "slurm": null, "kubernetes": null},
            "probes": {},
            "identity": {"uid": 1000, "gid": 1000, "groups": [1000, 44], "user_name": "ana",
                         "source": "process credentials", "is_process": true, "in_user_namespace": false},
            "platform": {
                "os": {"source": "/etc/os-release", "value": {"id": "ubuntu", "version_id": "22.04", "pretty_name": "Ubuntu 22.04.4 LTS"}},
                "kernel_release": {"source": "uname(2)", "value": "6.8.0-45-generic"},
                "arch": {"source": "uname(2)", "value": "x86_64"},
                "container": {"kind": null, "hints": []},
                "wsl": {"detected": false, "version": null, "hints": []},
                "shm_kib": {"source": "/proc/mounts", "value": 1048576},
                "virtual_machine": []
            },
            "kernel_module": {
                "version_file": {"source": "/proc/driver/nvidia/version", "value": {
                    "raw": "NVRM version: …", "version": "580.95.05", "flavor": "open", "arch": "x86_64",
                    "build_date": null, "compiler": null, "l4t": false}},
                "modules": {"source": "/proc/modules", "value": [
                    {"name": "nvidia_uvm", "size": 1, "refcount": 0, "used_by": [], "state": "Live"},
                    {"name": "nvidia", "size": 1, "refcount": 0, "used_by": [], "state": "Live"}]},
                "gpus": {"source": "/proc/driver/nvidia/gpus", "value": [
                    {"bus_id": "0000:18:00.0", "model": "NVIDIA H100 80GB HBM3", "uuid": "GPU-0", "video_bios": "96.00.74.00.01", "device_minor": 0, "source": "x"},
                    {"bus_id": "0000:19:00.0", "model": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1", "video_bios": "96.00.74.00.01", "device_minor": 1, "source": "x"}]}
            },
            "pci": {"devices": {"source": "/sys/bus/pci/devices", "value": [
                {"address": "0000:18:00.0", "device_id": "10de:2330", "class": "030200", "role": "gpu", "driver": "nvidia", "subsystem": null, "source": "x"},
                {"address": "0000:19:00.0", "device_id": "10de:2330", "class": "030200", "role": "gpu", "driver": "nvidia", "subsystem": null, "source": "x"}]}},
            "device_nodes": {"nodes": [
                {"path": "/dev/nvidia0", "present": true, "kind": "char_device", "mode": "0666", "owner": "root", "group": "root",
                 "access": {"read_write": true, "method": "access(2)", "detail": ""}, "error": null}], "listing_error": null},
            "environment": {"variables": [
                {"name": "CUDA_VISIBLE_DEVICES", "value": "0,1", "category": "visibility", "redacted": false, "lossy": false},
                {"name": "NO_COLOR", "value": "1", "category": "tool", "redacted": false, "lossy": false}]},
            "toolkits": {
                "installs": [{"root": "/usr/local/cuda-12.8", "kind": "nvidia", "found": [],
                              "version": {"source": "version.json", "value": "12.8.1"}, "cuda": "12.8"}],
                "rejected": [], "nvcc_on_path": null,
                "cuda_home": {"path": "/usr/local/cuda", "via": "/usr/local/cuda", "toolkit": 0},
                "usr_local_cuda": "/usr/local/cuda-12.8", "conda_packages": [], "extension_builders": []
            },
            "libraries": {"libraries": [
                {"family": "libcuda", "soname": "libcuda.so.1", "winner": 0, "elsewhere": [], "candidates": [
                    {"path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "target": "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", "version": "580.95.05"}]}]},
            "nvml": {"library": "libnvidia-ml.so.1", "result": {"status": "ok", "system": {
                "driver_version": {"value": "580.95.05"}, "cuda_driver_version": {"value": "13.0"},
                "nvml_version": {"value": "13.580.95.05"}, "device_count": {"value": 2},
                "devices": [gpu(0), gpu(1)], "topology": []}}},
            "python": [{
                "site": "/venv/lib/python3.12/site-packages", "found_by": "VIRTUAL_ENV", "python": "3.12", "primary": true,
                "torch": {"dist_version": "2.8.0", "version": {"source": "version.py", "value": "2.8.0+cu128"}, "cuda": "12.8",
                          "hip": null, "requires": []},
                "nvidia_wheels": [{"name": "nvidia-cublas-cu12", "version": "12.8.4.1"},
                                  {"name": "nvidia-cudnn-cu12", "version": "9.10.2.21"}],
                "companions": [], "frameworks": []}],
            "python_live": null,
            "smoke": null
        },
        "derived": {
            "driver": {"version": "580.95.05", "source": "/proc/driver/nvidia/version", "kernel": true},
            "cuda_driver_version": "13.0",
            "gpu_count": {"count": 2, "source": "NVML"},
            "driver_gpu_count": {"count": 2, "source": "NVML"},
            "toolkit_in_use": {"root": "/usr/local/cuda-12.8", "cuda": "12.8"},
            "known_gpus": []
        },
        "checks": [],
        "findings": [finding(codes::GD038, "info", "Persistence mode is off", &["gpu:0"])],
        "summary": {"errors": 0, "warnings": 0, "infos": 1}
    })
}

fn gpu(i: u32) -> Value {
    json!({
        "index": i, "handle_error": null,
        "name": {"value": "NVIDIA H100 80GB HBM3"},
        "uuid": {"value": format!("GPU-{i}")},
        "pci_bus_id": {"value": format!("00000000:{:02x}:00.0", 0x18 + i)},
        "compute_capability": {"value": "9.0"},
        "memory": {"value": {"total": 85520809984u64, "used": 4194304, "free": 1, "reserved": 0}},
        "pcie": {"generation": {"value": 5}, "max_generation": {"value": 5},
                 "width": {"value": 16}, "max_width": {"value": 16}},
        "temperature_c": {"value": 34 + i},
        "ecc": {"enabled": {"value": true}, "aggregate_uncorrected": {"value": 0}},
        "retired_pages_pending": "not_supported",
        "persistence_mode": {"value": false},
        "compute_mode": {"value": "default"},
        "mig": {"enabled": {"value": false}, "pending": {"value": false}, "instances": []},
        "processes": {"value": []}
    })
}

fn finding(code: &str, severity: &str, title: &str, facts: &[&str]) -> Value {
    let evidence: Vec<Value> = facts
        .iter()
        .map(|f| json!({"fact": f, "value": "v", "source": "s"}))
        .collect();
    json!({"code": code, "severity": severity, "title": title, "detail": "",
           "evidence": evidence, "fix": []})
}

fn set(v: &mut Value, pointer: &str, to: Value) {
    *v.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}")) = to;
}

fn remove(v: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let obj = v.pointer_mut(parent).unwrap();
    match obj {
        Value::Object(o) => {
            o.remove(key).unwrap_or_else(|| panic!("no {pointer}"));
        }
        Value::Array(a) => {
            a.remove(key.parse::<usize>().unwrap());
        }
        _ => panic!("{parent} holds nothing"),
    }
}

/// Each change as "key: old → new" (the absent word for a missing side).
fn lines(d: &ReportDiff) -> Vec<String> {
    d.changes
        .iter()
        .map(|c| format!("{}: {} → {}", c.key, c.old_text(), c.new_text()))
        .collect()
}

#[test]
fn identical_reports_have_no_differences() {
    let d = compare(&report(), &report()).unwrap();
    assert!(d.is_empty(), "{:#?}", d);
    assert!(d.not_compared.is_empty(), "{:#?}", d.not_compared);
    assert_eq!(d.old.label, "old report");
    assert_eq!(d.new.hostname.as_deref(), Some("gpu1"));
    assert_eq!(d.old.schema_version, 1);
}

#[test]
fn volatile_readings_are_not_differences() {
    let mut new = report();
    set(
        &mut new,
        "/snapshot/nvml/result/system/devices/0/temperature_c",
        json!({"value": 80}),
    );
    set(
        &mut new,
        "/snapshot/node/time",
        json!("2026-02-01T00:00:00Z"),
    );
    set(
        &mut new,
        "/snapshot/probes",
        json!({"nvml": {"status": "ok", "elapsed_us": 5, "detail": null}}),
    );
    assert!(compare(&report(), &new).unwrap().is_empty());
}

#[test]
fn a_driver_change_is_listed_with_both_versions() {
    let mut new = report();
    set(&mut new, "/derived/driver/version", json!("570.86.15"));
    set(
        &mut new,
        "/snapshot/kernel_module/version_file/value/version",
        json!("570.86.15"),
    );
    set(&mut new, "/derived/cuda_driver_version", json!("12.8"));
    let d = compare(&report(), &new).unwrap();
    assert_eq!(
        lines(&d),
        [
            "driver.version: 580.95.05 → 570.86.15",
            "driver.cuda: 13.0 → 12.8",
            "kernel_module.version: 580.95.05 → 570.86.15",
        ]
    );
    let c = &d.changes[0];
    assert_eq!(
        (c.label.as_str(), c.kind, c.section),
        ("Driver version", ChangeKind::Changed, Section::Driver)
    );
}

#[test]
fn a_gpu_that_went_away_is_one_change_not_one_per_fact() {
    let mut new = report();
    for p in [
        "/snapshot/nvml/result/system/devices/1",
        "/snapshot/kernel_module/gpus/value/1",
        "/snapshot/pci/devices/value/1",
    ] {
        remove(&mut new, p);
    }
    set(&mut new, "/derived/gpu_count/count", json!(1));
    let d = compare(&report(), &new).unwrap();
    assert_eq!(
        lines(&d),
        [
            "driver.gpu_count: 2 → 1",
            "gpu[GPU-1]: NVIDIA H100 80GB HBM3 (GPU-1) → not present",
        ]
    );
    assert_eq!(d.changes[1].kind, ChangeKind::Removed);
    assert_eq!(d.changes[1].label, "GPU 0000:19:00.0");
    // And the other way round it appeared.
    let d = compare(&new, &report()).unwrap();
    assert_eq!(d.changes[1].kind, ChangeKind::Added);
    assert!(d.not_compared.is_empty(), "{:#?}", d.not_compared);
}

#[test]
fn a_gpu_keeps_its_identity_when_nvml_stops_answering() {
    // NVML failed in the new report: the GPUs are still seen (driver list, PCI), and NVML's
    // per-GPU facts are neither "changed" nor "not compared": NVML's status says why.
    let mut new = report();
    set(
        &mut new,
        "/snapshot/nvml/result",
        json!({"status": "init_failed", "code": "lib_rm_version_mismatch", "message": "m"}),
    );
    let d = compare(&report(), &new).unwrap();
    assert_eq!(
        lines(&d),
        ["nvml.status: answered → init failed: lib_rm_version_mismatch"]
    );
    assert!(d.not_compared.is_empty(), "{:#?}", d.not_compared);
    // With only PCI left (no UUIDs), the GPUs are matched by bus id to their UUIDs.
    remove(&mut new, "/snapshot/kernel_module/gpus/value");
    let d = compare(&report(), &new).unwrap();
    assert!(
        !d.changes.iter().any(|c| c.key.starts_with("gpu[")),
        "{:#?}",
        d.changes
    );
}

#[test]
fn a_narrower_pcie_link_and_other_gpu_facts() {
    let mut new = report();
    let g = "/snapshot/nvml/result/system/devices/0";
    set(&mut new, &format!("{g}/pcie/width"), json!({"value": 8}));
    set(
        &mut new,
        &format!("{g}/persistence_mode"),
        json!({"value": true}),
    );
    set(
        &mut new,
        &format!("{g}/mig/enabled"),
        json!({"value": true}),
    );
    set(
        &mut new,
        &format!("{g}/ecc/aggregate_uncorrected"),
        json!({"error": "unknown"}),
    );
    set(
        &mut new,
        "/snapshot/pci/devices/value/0/driver",
        json!(null),
    );
    let d = compare(&report(), &new).unwrap();
    assert_eq!(
        lines(&d),
        [
            "gpu[GPU-0].pcie.width: x16 → x8",
            "gpu[GPU-0].persistence_mode: off → on",
            "gpu[GPU-0].mig.mode: off → on",
            "gpu[GPU-0].ecc.uncorrected: 0 → error: unknown",
            "gpu[GPU-0].bound_driver: nvidia → none",
        ]
    );
    assert_eq!(d.changes[0].label, "GPU 0000:18:00.0: PCIe link width");
    assert_eq!(d.changes[0].section, Section::Gpus);
}

#[test]
fn wheels_changed_added_and_removed() {
    let mut new = report();
    let env = "/snapshot/python/0";
    set(
        &mut new,
        &format!("{env}/nvidia_wheels"),
        json!([{"name": "nvidia-cudnn-cu12", "version": "9.11.0.1"},
               {"name": "nvidia-nccl-cu12", "version": "2.27.3"}]),
    );
    set(
        &mut new,
        &format!("{env}/torch/version/value"),
        json!("2.9.0+cu130"),
    );
    set(&mut new, &format!("{env}/torch/cuda"), json!("13.0"));
    let d = compare(&report(), &new).unwrap();
    let site = "python[/venv/lib/python3.12/site-packages]";
    let want: Vec<String> = [
        "torch: 2.8.0+cu128 → 2.9.0+cu130",
        "torch.cuda: 12.8 → 13.0",
        "wheel[nvidia-cudnn-cu12]: 9.10.2.21 → 9.11.0.1",
        "wheel[nvidia-nccl-cu12]: not installed → 2.27.3",
        "wheel[nvidia-cublas-cu12]: 12.8.4.1 → not installed",
    ]
    .iter()
    .map(|l| format!("{site}.{l}"))
    .collect();
    assert_eq!(lines(&d), want);
    // One environment: labels do not name its site.
    let labels: Vec<&str> = d.changes.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "torch",
            "torch CUDA build",
            "nvidia-cudnn-cu12",
            "nvidia-nccl-cu12",
            "nvidia-cublas-cu12"
        ]
    );
    assert_eq!(d.changes[3].kind, ChangeKind::Added);
    assert_eq!(d.changes[4].kind, ChangeKind::Removed);
}

#[test]
fn torch_uninstalled_is_one_change() {
    let mut new = report();
    set(&mut new, "/snapshot/python/0/torch", json!(null));
    let d = compare(&report(), &new).unwrap();
    assert_eq!(
        lines(&d),
        ["python[/venv/lib/python3.12/site-packages].torch: 2.8.0+cu128 → not installed"]
    );
}

#[test]
fn environment_variables_set_unset_and_changed_but_not_gpudoctors_own() {
    let mut new = report();
    set(
        &mut new,
        "/snapshot/environment/variables",
        json!([
            {"name": "CUDA_LAUNCH_BLOCKING", "value": "1", "category": "debug", "redacted": false, "lossy": false},
            {"name": "CUDA_VISIBLE_DEVICES", "value": "0", "category": "visibility", "redacted": false, "lossy": false},
            {"name": "COLUMNS", "value": "80", "category": "tool", "redacted": false, "lossy": false}
        ]),
    );
    let d = compare(&report(), &new).unwrap();
    assert_eq!(
        lines(&d),
        [
            "env[CUDA_LAUNCH_BLOCKING]: unset → 1",
            "env[CUDA_VISIBLE_DEVICES]: 0,1 → 0",
        ]
    );
}

#[test]
fn place_hostname_and_toolkits() {
    let mut new = report();
    set(&mut new, "/snapshot/node/hostname", json!("gpu2"));
    set(
        &mut new,
        "/snapshot/platform/container",
        json!({"kind": "docker", "hints": []}),
    );
    set(
        &mut new,
        "/snapshot/toolkits/installs/0",
        json!({"root": "/usr/local/cuda-13.0", "version": {"source": "v", "value": "13.0.2"}}),
    );
    set(
        &mut new,
        "/derived/toolkit_in_use",
        json!({"root": "/usr/local/cuda-13.0", "cuda": "13.0"}),
    );
    let d = compare(&report(), &new).unwrap();
    assert_eq!(
        lines(&d),
        [
            "host.hostname: gpu1 → gpu2",
            "host.place: host → container (docker)",
            "toolkits.in_use: /usr/local/cuda-12.8 (CUDA 12.8) → /usr/local/cuda-13.0 (CUDA 13.0)",
            "toolkit[/usr/local/cuda-13.0]: not installed → 13.0.2",
            "toolkit[/usr/local/cuda-12.8]: 12.8.1 → not installed",
        ]
    );
}

#[test]
fn findings_appeared_went_away_and_changed_severity() {
    let mut new = report();
    set(
        &mut new,
        "/findings",
        json!([
            finding(
                codes::GD034,
                "warning",
                "GPU 0: PCIe link is x8, not x16",
                &["gpu:0"]
            ),
            finding(
                codes::GD038,
                "warning",
                "Persistence mode is off",
                &["gpu:0"]
            ),
            finding(
                codes::GD002,
                "error",
                "The kernel module is not loaded",
                &[]
            ),
        ]),
    );
    let mut old = report();
    let mut list = old["findings"].as_array().unwrap().clone();
    list.push(finding(
        codes::GD012,
        "warning",
        "CUDA_LAUNCH_BLOCKING=1",
        &["env:CUDA_LAUNCH_BLOCKING"],
    ));
    // The same code about another GPU is another finding.
    list.push(finding(
        codes::GD034,
        "warning",
        "GPU 1: PCIe link is x8",
        &["gpu:1"],
    ));
    set(&mut old, "/findings", Value::Array(list));
    let d = compare(&old, &new).unwrap();
    let f = &d.findings;
    let codes = |v: &[FindingRef]| -> Vec<String> {
        v.iter()
            .map(|f| format!("{}/{}", f.code, f.subject.as_deref().unwrap_or("-")))
            .collect()
    };
    // Worst first.
    assert_eq!(codes(&f.appeared), ["GD002/-", "GD034/gpu:0"]);
    assert_eq!(
        codes(&f.went_away),
        ["GD012/env:CUDA_LAUNCH_BLOCKING", "GD034/gpu:1"]
    );
    assert_eq!(f.severity_changed.len(), 1);
    let s = &f.severity_changed[0];
    assert_eq!(
        (s.code.as_str(), s.old, s.new),
        (codes::GD038, Severity::Info, Severity::Warning)
    );
    assert!(!d.is_empty());
    assert!(d.changes.is_empty());
}

#[test]
fn an_older_report_with_fewer_fields_is_read_and_its_gaps_are_not_changes() {
    // What an older gpudoctor wrote: no derived, no shm, no device nodes list, no
    // per-GPU MIG facts, no wheels list.
    let mut old = report();
    remove(&mut old, "/derived");
    remove(&mut old, "/snapshot/platform/shm_kib");
    remove(&mut old, "/snapshot/device_nodes");
    remove(&mut old, "/snapshot/nvml/result/system/devices/0/mig");
    remove(&mut old, "/snapshot/python/0/nvidia_wheels");
    let d = compare(&old, &report()).unwrap();
    assert!(d.is_empty(), "{:#?}", d.changes);
    let gaps: Vec<String> = d
        .not_compared
        .iter()
        .map(|n| format!("{} ({:?})", n.key, n.recorded_in))
        .collect();
    assert_eq!(
        gaps,
        [
            "host.shm (New)",
            "driver.version (New)",
            "driver.cuda (New)",
            "driver.gpu_count (New)",
            "driver.gpus_initialised (New)",
            "dev (New)",
            "gpu[GPU-0].mig.mode (New)",
            "gpu[GPU-0].mig.instances (New)",
            "toolkits.in_use (New)",
            "python[/venv/lib/python3.12/site-packages].nvidia_wheels (New)",
        ]
    );
    // A real change is still seen through the gaps.
    let mut new = report();
    set(
        &mut new,
        "/snapshot/kernel_module/version_file/value/version",
        json!("570.1"),
    );
    let d = compare(&old, &new).unwrap();
    assert_eq!(lines(&d), ["kernel_module.version: 580.95.05 → 570.1"]);
}

#[test]
fn a_newer_schema_is_refused_and_names_the_file() {
    let mut new = report();
    set(&mut new, "/schema_version", json!(SCHEMA_VERSION + 1));
    let e = compare(&report(), &new).unwrap_err();
    assert_eq!(e.kind(), "newer_schema");
    assert_eq!(
        e.to_string(),
        format!(
            "new report: schema_version {} is newer than this gpudoctor reads (1 to {SCHEMA_VERSION}): \
             compare with the gpudoctor that wrote it, or a newer one",
            SCHEMA_VERSION + 1
        )
    );
}

#[test]
fn what_is_not_a_report_is_refused_and_named() {
    let not = |v: Value| compare(&v, &report()).unwrap_err();
    for (v, why) in [
        (json!([1, 2]), "a JSON array, not an object"),
        (json!({"name": "x"}), "no \"schema_version\""),
        (json!({"probes": {}}), "a bare snapshot"),
        (
            json!({"schema_version": "1", "snapshot": {}}),
            "schema_version \"1\" is not a version",
        ),
        (
            json!({"schema_version": 0, "snapshot": {}}),
            "schema_version 0 is not a version",
        ),
        (json!({"schema_version": 1}), "no \"snapshot\" object"),
        (
            json!({"schema_version": 1, "snapshot": {}, "findings": {}}),
            "\"findings\" is not a list",
        ),
        (
            json!({"schema_version": 1, "snapshot": {}, "findings": [{"code": codes::GD001}]}),
            "findings[0] has no code or no known severity",
        ),
    ] {
        let e = not(v);
        assert_eq!(e.kind(), "not_a_report", "{e}");
        let text = e.to_string();
        assert!(
            text.starts_with("old report: not a gpudoctor report: "),
            "{text}"
        );
        assert!(text.contains(why), "{text} lacks {why}");
    }
}

#[test]
fn files_are_read_and_errors_name_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("before.json");
    let bad = dir.path().join("notes.txt");
    std::fs::write(&good, report().to_string()).unwrap();
    std::fs::write(&bad, "driver was fine yesterday").unwrap();
    let d = compare_files(&good, &good).unwrap();
    assert!(d.is_empty());
    assert_eq!(d.old.label, good.display().to_string());
    let e = compare_files(&good, &bad).unwrap_err();
    assert_eq!(e.kind(), "not_json");
    assert!(
        e.to_string()
            .starts_with(&format!("{}: not JSON: ", bad.display())),
        "{e}"
    );
    let missing = dir.path().join("gone.json");
    let e = compare_files(&missing, &good).unwrap_err();
    assert_eq!(e.kind(), "unreadable");
    assert!(
        e.to_string().starts_with(&missing.display().to_string()),
        "{e}"
    );
}

#[test]
fn a_fresh_report_compares_with_itself_saved() {
    // check --baseline: the report this build makes, saved and read back, is no change.
    let snap = crate::snapshot::Snapshot::default();
    let report = Report::new(snap, Vec::new(), Vec::new());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baseline.json");
    std::fs::write(&path, crate::render::json::render(&report)).unwrap();
    let old = load_baseline(&path).unwrap();
    let d = against_baseline(&path, &old, &report).unwrap();
    assert!(d.is_empty(), "{:#?}", d);
    assert_eq!(d.new.label, "this run");
}

#[test]
fn the_json_of_a_diff_names_its_version_and_each_side() {
    let mut new = report();
    set(&mut new, "/derived/driver/version", json!("570.86.15"));
    let d = compare(&report(), &new).unwrap();
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["diff_version"], DIFF_VERSION);
    assert_eq!(v["old"]["gpudoctor_version"], "0.1.0");
    assert_eq!(
        v["changes"][0],
        json!({"section": "driver", "key": "driver.version", "label": "Driver version",
               "kind": "changed", "old": "580.95.05", "new": "570.86.15"})
    );
    assert_eq!(v["findings"]["appeared"], json!([]));
}

#[test]
fn device_nodes_and_the_libraries_the_loader_picks() {
    let mut new = report();
    set(
        &mut new,
        "/snapshot/device_nodes/nodes/0/mode",
        json!("0660"),
    );
    set(
        &mut new,
        "/snapshot/device_nodes/nodes/0/access/read_write",
        json!(false),
    );
    set(
        &mut new,
        "/snapshot/libraries/libraries/0/candidates/0/target",
        json!("/usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15"),
    );
    set(
        &mut new,
        "/snapshot/libraries/libraries/0/candidates/0/version",
        json!("570.86.15"),
    );
    let d = compare(&report(), &new).unwrap();
    assert_eq!(
        lines(&d),
        [
            "dev[/dev/nvidia0]: 0666 root:root → 0660 root:root",
            "dev[/dev/nvidia0].access: yes → no",
            "lib[libcuda.so.1]: 580.95.05 (/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05) → \
             570.86.15 (/usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15)",
        ]
    );
    // A node found absent, or a library not found, reads as missing / not found.
    set(
        &mut new,
        "/snapshot/device_nodes/nodes/0/present",
        json!(false),
    );
    set(
        &mut new,
        "/snapshot/libraries/libraries/0/winner",
        json!(null),
    );
    let d = compare(&report(), &new).unwrap();
    let shown: Vec<String> = d
        .changes
        .iter()
        .map(|c| format!("{}: {} → {}", c.label, c.old_text(), c.new_text()))
        .collect();
    assert_eq!(
        shown,
        [
            "/dev/nvidia0: 0666 root:root → missing",
            "libcuda.so.1 loads: 580.95.05 (/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05) → not found",
        ]
    );
}

#[test]
fn saved_reports_of_an_earlier_release_diff_as_they_did() {
    // tests/fixtures/reports: reports an earlier gpudoctor wrote, pinned change by change.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reports");
    let d = compare_files(
        Path::new(&format!("{dir}/debian-cuda-tree.json")),
        Path::new(&format!("{dir}/host-with-torch-venv.json")),
    )
    .unwrap();
    let lib = |v: &str, file: &str| format!("{v} ({file})");
    let nv = "/usr/lib/x86_64-linux-gnu/nvidia/current";
    let want = [
        "host.hostname: none → vm".to_string(),
        "host.machine_id: none → 9ec90bbf3b90b6c2a2ce64f087ea554a".into(),
        "host.root: /work/main/target/debian-cuda-tree → this system".into(),
        "host.place: host → container (docker)".into(),
        "host.os: missing (not found) → Debian GNU/Linux 12 (bookworm)".into(),
        "host.kernel: missing (not found) → 6.18.44-fc-v657".into(),
        "host.arch: missing (not found) → x86_64".into(),
        "host.user: uid 0 → root (uid 0)".into(),
        "host.shm: missing (not found) → 24105 MiB".into(),
        "driver.version: 535.261.03 → none".into(),
        "kernel_module.version: 535.261.03 → missing (not found)".into(),
        "nvml.status: not probed: under --root nothing is loaded from the inspected tree; \
         --nvml-lib names a library outside it → init failed: library_not_found"
            .into(),
        "dev[/dev/nvidiactl]: missing → 0666 root:root".into(),
        format!(
            "lib[libcuda.so]: {} → not found",
            lib("535.261.03", &format!("{nv}/libcuda.so.535.261.03"))
        ),
        format!(
            "lib[libcuda.so.1]: {} → not found",
            lib("535.261.03", &format!("{nv}/libcuda.so.535.261.03"))
        ),
        format!(
            "lib[libnvidia-ml.so.1]: {} → not found",
            lib("535.261.03", &format!("{nv}/libnvidia-ml.so.535.261.03"))
        ),
        format!(
            "lib[libnvidia-ptxjitcompiler.so.1]: {} → not found",
            lib(
                "535.261.03",
                &format!("{nv}/libnvidia-ptxjitcompiler.so.535.261.03")
            )
        ),
        format!(
            "lib[libcudart.so.11.0]: {} → not found",
            lib("11.8.89", "/usr/lib/x86_64-linux-gnu/libcudart.so.11.8.89")
        ),
        "toolkits.in_use: /usr/lib/nvidia-cuda-toolkit (CUDA 11.8) → none".into(),
        "toolkits.cuda_home: /usr → nothing".into(),
        "toolkits.nvcc: /usr/bin/nvcc → none".into(),
        "toolkit[/usr/lib/nvidia-cuda-toolkit]: 11.8.89 → not installed".into(),
        "python[/root/.cache/gpudoctor/torch-venv/lib/python3.11/site-packages]: not found → \
         Python 3.11"
            .into(),
        "python[/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages]: not found → \
         Python 3.11"
            .into(),
    ];
    assert_eq!(lines(&d), want);
    assert!(d.not_compared.is_empty(), "{:#?}", d.not_compared);
    let codes = |v: &[FindingRef]| -> Vec<String> {
        v.iter()
            .map(|f| format!("{}/{}", f.code, f.subject.as_deref().unwrap_or("-")))
            .collect()
    };
    assert_eq!(
        codes(&d.findings.appeared),
        ["GD001/nodes, pci, platform:container"]
    );
    assert_eq!(
        codes(&d.findings.went_away),
        ["GD016/file:/dev", "GD001/nodes, pci"]
    );
}
