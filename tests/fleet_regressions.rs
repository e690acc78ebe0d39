//! Regressions from the review of fleet, --output and the CI formats: each test pins a
//! defect an adversarial review found (all failed before their fixes) and says what the
//! user saw.

mod util;

use std::path::Path;

use serde_json::{json as j, Value};
use util::fake_nvml::{self, FakeNvml, FAKE_NVML_ENV};
use util::gpu_node::hgx;
use util::*;

fn machine_id(name: &str) -> String {
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!("{h:016x}{:016x}", h.rotate_left(17))
}

/// `check --format json --output DIR/{host}.json` for a fake node; returns the file.
fn node_report(dir: &Path, name: &str, root: &FakeRoot, nvml: Option<&FakeNvml>) -> Value {
    root.file("etc/hostname", &format!("{name}\n"))
        .file("etc/machine-id", &format!("{}\n", machine_id(name)));
    let cfg = tempfile::tempdir().unwrap();
    let mut c = root.cmd();
    c.args(["check", "--format", "json", "--output"])
        .arg(dir.join("{host}.json"));
    if let Some(nvml) = nvml {
        c.arg("--nvml-lib")
            .arg(fake_nvml::fake_nvml_lib())
            .env(FAKE_NVML_ENV, nvml.write(cfg.path()));
    }
    let r = run(&mut c);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap())
        .unwrap()
}

fn fleet(args: &[&Path]) -> (i32, Value) {
    let mut c = gpudoctor();
    c.arg("fleet");
    for a in args {
        c.arg(a);
    }
    json(&mut c)
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

// ------------------------------------------------------------------ fleet: the gate

/// `srun … --output /shared/$JOB/{host}.json` where every task failed to write (wrong path,
/// read-only mount), or a typo in the directory given to fleet after `mkdir -p`: the fleet
/// gate reads zero reports, prints "Every node is healthy and alike." and exits 0.
#[test]
fn an_empty_report_directory_does_not_pass_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(gpudoctor().arg("fleet").arg(dir.path()));
    assert!(
        !r.stdout.contains("Every node is healthy"),
        "zero reports called healthy:\n{}",
        r.stdout
    );
    assert_ne!(r.code, 0, "zero reports pass the gate:\n{}", r.stdout);
}

// ------------------------------------------------------------------ fleet: duplicates

/// The README's own Kubernetes recipe writes /reports/{host}.json (DaemonSet) and
/// /reports/{host}-smoke.json (Job) to the same claim, then says `gpudoctor fleet /reports`.
/// node017 is then counted as two nodes, compared with itself, and nothing says so.
#[test]
fn a_node_reporting_twice_is_one_node_or_a_listed_problem() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["node001", "node002", "node003"] {
        node_report(dir.path(), name, &FakeRoot::healthy(8), Some(&hgx(8)));
    }
    let again = std::fs::read(dir.path().join("node001.json")).unwrap();
    std::fs::write(dir.path().join("node001-smoke.json"), again).unwrap();
    let (_, v) = fleet(&[dir.path()]);
    let nodes = v["shape"]["nodes"].as_u64().unwrap();
    let problems = v["problems"].as_array().unwrap();
    assert!(
        nodes == 3 || !problems.is_empty(),
        "3 machines counted as {nodes} nodes, {} GPUs, no problem listed: {problems:#?}",
        v["shape"]["gpus"]
    );
}

// ------------------------------------------------------------------ fleet: shape and outliers

/// A node with one H100 and one A100: the shape's "GPUs by model" puts both GPUs under one
/// model (the most common, ties to the alphabetically last), so the fleet's A100 count is
/// wrong and the A100 appears nowhere.
#[test]
fn gpus_by_model_counts_each_gpu_on_a_mixed_node() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = node_report(dir.path(), "mixed1", &FakeRoot::healthy(2), Some(&hgx(2)));
    v["snapshot"]["nvml"]["result"]["system"]["devices"][1]["name"] =
        j!({"value": "NVIDIA A100-SXM4-80GB"});
    write(&dir.path().join("mixed1.json"), &v);
    let (_, f) = fleet(&[dir.path()]);
    let by_model = f["shape"]["gpus_by_model"].as_array().unwrap();
    let a100 = by_model
        .iter()
        .find(|m| m["model"] == "NVIDIA A100-SXM4-80GB");
    assert!(
        a100.is_some_and(|m| m["gpus"] == 1),
        "the A100 is not counted: {by_model:#?}"
    );
}

/// Four 8×H100 nodes; on node004 the nvidia module did not load after a kernel update (PCI
/// still shows its eight H100s). It lands in a "no GPU" group of its own, so it is nobody's
/// outlier: "a node with fewer GPUs than its siblings" misses the node that lost all of them.
#[test]
fn a_node_that_lost_all_its_gpus_is_an_outlier_of_its_siblings() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["node001", "node002", "node003"] {
        node_report(dir.path(), name, &FakeRoot::healthy(8), Some(&hgx(8)));
    }
    let down = FakeRoot::healthy(8);
    down.modules(&[]).remove("proc/driver/nvidia");
    node_report(dir.path(), "node004", &down, None);
    let (_, v) = fleet(&[dir.path()]);
    let outliers = v["outliers"].as_array().unwrap();
    assert!(
        outliers
            .iter()
            .any(|o| o["node"] == "node004" && o["what"] == "gpu_count"),
        "node004 (0 of 8 GPUs usable) is not an outlier: {outliers:#?}\nshape: {:#}",
        v["shape"]
    );
}

// ------------------------------------------------------------------ fleet: findings by code

/// GD055 is an error (context refused) on one node and a warning (CUDA_DISABLE_PTX_JIT) on
/// 20 others: the group reads "error GD055 on 21 of 21 nodes", listing 20 nodes that have
/// only a warning.
#[test]
fn an_error_group_lists_only_nodes_with_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let seed = node_report(dir.path(), "seed", &FakeRoot::healthy(1), None);
    std::fs::remove_file(dir.path().join("seed.json")).unwrap();
    for i in 1..=21 {
        let mut v = seed.clone();
        let name = format!("n{i:02}");
        v["snapshot"]["node"]["name"] = j!(name);
        let (sev, title) = if i == 1 {
            ("error", "GPU 0 refuses a context: out of memory")
        } else {
            ("warning", "CUDA_DISABLE_PTX_JIT is set")
        };
        v["findings"] = j!([{"code": "GD055", "severity": sev, "title": title,
            "detail": "", "evidence": [], "fix": []}]);
        write(&dir.path().join(format!("{name}.json")), &v);
    }
    let (code, v) = fleet(&[dir.path()]);
    assert_eq!(code, 1);
    for g in v["findings"].as_array().unwrap() {
        if g["code"] == "GD055" && g["severity"] == "error" {
            assert_eq!(
                g["node_names"],
                j!(["n01"]),
                "nodes with only a warning listed under an error: {g:#}"
            );
        }
    }
}

// ------------------------------------------------------------------ --output

/// `--output` to an existing symlink (reports/latest.json -> runs/42/node.json, or a
/// /var/lib/... path that is a link on the admin's image) replaces the link with a regular
/// file instead of writing where it points.
#[test]
fn output_writes_through_a_symlink_instead_of_replacing_it() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.json");
    std::fs::write(&target, "old").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let root = FakeRoot::healthy(1);
    let r = run(root
        .cmd()
        .args(["check", "--format", "json", "--output"])
        .arg(&link));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the symlink was replaced by a regular file"
    );
    assert_ne!(std::fs::read_to_string(&target).unwrap(), "old");
}

/// As root (a Slurm prolog, a root CI runner, the DaemonSet), `--output /dev/null` — the
/// natural way to keep only the human report — renames a regular file over /dev/null.
/// Shown here on a private character device (1,3) so the real one is not touched.
#[test]
fn output_to_a_device_node_does_not_replace_it() {
    // SAFETY: geteuid only reads credentials.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root for mknod");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let c = std::ffi::CString::new(null.to_str().unwrap()).unwrap();
    // SAFETY: a valid path and the (1, 3) device number of /dev/null.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if rc != 0 {
        eprintln!("skipped: mknod failed (nodev mount?)");
        return;
    }
    let root = FakeRoot::healthy(1);
    let r = run(root
        .cmd()
        .args(["check", "--format", "json", "--output"])
        .arg(&null));
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
    assert!(
        kind.is_char_device(),
        "the character device was replaced by a regular file (exit {}, {})",
        r.code,
        r.stderr
    );
}

/// `--output` is a global flag, but only `check` honours it: `gpudoctor smoke --output
/// reports/{host}.json` (or toolkit / devices) writes nothing, says nothing, exits 0.
#[test]
fn output_is_not_silently_ignored_by_other_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("toolkit.json");
    let root = FakeRoot::healthy(1);
    let r = run(root
        .cmd()
        .args(["toolkit", "--format", "json", "--output"])
        .arg(&out));
    assert!(
        out.exists() || r.code == 2,
        "--output ignored: exit {}, no file, stderr: {:?}",
        r.code,
        r.stderr
    );
}

// ------------------------------------------------------------------ JUnit

/// Two warnings from one rule (CUDA_LAUNCH_BLOCKING and CUDA_PROFILE, both debug_env) give
/// one <testcase> with two <failure> elements. Jenkins' CaseResult reads only the first
/// (`testCase.element("failure")`), so the second finding is invisible there; the Ant/
/// Surefire XSD allows one failure per testcase.
#[test]
fn junit_has_at_most_one_failure_per_testcase() {
    let root = FakeRoot::healthy(1);
    let r = run(root
        .cmd()
        .args(["check", "--format", "junit"])
        .env("CUDA_LAUNCH_BLOCKING", "1")
        .env("CUDA_PROFILE", "1"));
    let doc = roxmltree::Document::parse(&r.stdout).unwrap();
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        let failures = case
            .children()
            .filter(|n| n.has_tag_name("failure"))
            .count();
        assert!(
            failures <= 1,
            "{} has {failures} <failure> elements",
            case.attribute("name").unwrap_or("?")
        );
    }
}
