//! Regressions from the review of fleet, --output and the CI formats: each test pins a
//! defect an adversarial review found (all failed before their fixes) and says what the
//! user saw.

use crate::util;

use std::path::Path;

use crate::util::fake_nvml::{self, FakeNvml, FAKE_NVML_ENV};
use crate::util::gpu_node::hgx;
use crate::util::*;
use serde_json::{json as j, Value};

/// `check --format json --output DIR/{host}.json` for a fake node; returns the file.
fn node_report(dir: &Path, name: &str, root: &FakeRoot, nvml: Option<&FakeNvml>) -> Value {
    let r = util::fleet_nodes::node_report(dir, name, root, nvml, &[]);
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

/// `gpudoctor fleet /nonexistent` printed six empty shape rows and exited 1: inputs that are
/// missing or not reports, with nothing usable beside them, are a usage error (exit 2), one
/// line per input and nothing on stdout.
#[test]
fn a_fleet_of_nothing_usable_is_a_usage_error_naming_each_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.json"), "{\"hello\": 1}").unwrap();
    let r = run(gpudoctor()
        .args(["fleet", "/nonexistent/reports"])
        .arg(dir.path()));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr
            .starts_with("gpudoctor: error: no usable report:\n")
            && r.stderr.contains("  /nonexistent/reports: missing: ")
            && r.stderr.contains("notes.json: not a report: "),
        "{}",
        r.stderr
    );
}

// ------------------------------------------------------------------ fleet: duplicates

/// The Kubernetes recipe in docs/fleet.md writes /reports/{host}.json (DaemonSet) and
/// /reports/smoke/{host}.json (Job) to the same claim, then says `gpudoctor fleet /reports`.
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
    assert_eq!(v["shape"]["nodes"], 3, "{:#}", v["shape"]);
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0]["kind"], "duplicate");
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
        crate::util::skip(format_args!("needs root for mknod"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let c = std::ffi::CString::new(null.to_str().unwrap()).unwrap();
    // SAFETY: a valid path and the (1, 3) device number of /dev/null.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if rc != 0 {
        crate::util::skip(format_args!("mknod failed (nodev mount?)"));
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
        let failures: Vec<_> = case
            .children()
            .filter(|n| n.has_tag_name("failure"))
            .collect();
        let name = case.attribute("name").unwrap_or("?");
        assert!(
            failures.len() <= 1,
            "{name} has {} <failure> elements",
            failures.len()
        );
        // Both findings of the debug_env check are in its one failure.
        if name.starts_with("debug_env") {
            assert_eq!(failures.len(), 1, "{name}");
            let message = failures[0].attribute("message").unwrap();
            assert!(
                message.contains("GD012") && message.contains("GD013"),
                "{message}"
            );
        }
    }
    assert!(r.stdout.contains("name=\"debug_env"), "{}", r.stdout);
}

// ------------------------------------------------------------------ second review

/// A healthy HGX report with a toolkit (12.4 at /usr/local/cuda) and torch 2.5.1+cu124,
/// to derive nodes from by editing the JSON.
fn template() -> Value {
    let dir = tempfile::tempdir().unwrap();
    let root = FakeRoot::healthy(8);
    root.toolkit("usr/local/cuda-12.4", "12.4")
        .link("cuda-12.4", "usr/local/cuda");
    root.torch_venv("2.5.1+cu124", Some("12.4"), &[]);
    root.file("etc/hostname", "template\n");
    let cfg = tempfile::tempdir().unwrap();
    let r = run(root
        .cmd()
        .env("VIRTUAL_ENV", "/venv")
        .args(["check", "--format", "json", "--output"])
        .arg(dir.path().join("{host}.json"))
        .arg("--nvml-lib")
        .arg(fake_nvml::fake_nvml_lib())
        .env(FAKE_NVML_ENV, hgx(8).write(cfg.path())));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    serde_json::from_str(&std::fs::read_to_string(dir.path().join("template.json")).unwrap())
        .unwrap()
}

fn named(t: &Value, name: &str, machine: &str) -> Value {
    let mut v = t.clone();
    v["snapshot"]["node"]["name"] = j!(name);
    v["snapshot"]["node"]["machine_id"] = j!(machine);
    v
}

fn with_error(mut v: Value, code: &str) -> Value {
    v["findings"].as_array_mut().unwrap().push(j!({
        "code": code, "severity": "error", "title": "nvidia_uvm is not loaded",
        "detail": "", "evidence": [], "fixes": []
    }));
    v
}

/// Nodes cloned from one image all call themselves `localhost`: the broken one was dropped
/// as an older "duplicate" of the healthy one, and the gate passed with exit 0.
#[test]
fn machines_sharing_a_name_are_all_counted() {
    let t = template();
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("a.json"),
        &with_error(named(&t, "localhost", &"a".repeat(32)), "GD006"),
    );
    let mut b = named(&t, "localhost", &"b".repeat(32));
    b["snapshot"]["node"]["time"] = j!("2099-01-01T00:00:00Z");
    write(&dir.path().join("b.json"), &b);
    // The same machine reported twice is still one node.
    let mut b_again = b.clone();
    b_again["snapshot"]["node"]["time"] = j!("2098-01-01T00:00:00Z");
    write(&dir.path().join("b-old.json"), &b_again);

    let (code, v) = fleet(&[dir.path()]);
    assert_eq!(code, 1, "the broken machine passed the gate: {v:#}");
    assert_eq!(v["shape"]["nodes"], 2, "{:#}", v["nodes"]);
    let group = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["code"] == "GD006")
        .expect("GD006 counted");
    assert_eq!(group["node_names"], j!(["localhost [aaaaaaaa]"]));
    assert_eq!(v["identity"][0]["kind"], "same_name", "{:#}", v["identity"]);
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0]["kind"], "duplicate");
    assert!(problems[0]["source"]
        .as_str()
        .unwrap()
        .ends_with("b-old.json"));
}

/// Two names, one /etc/machine-id: a cloned image that kept it (journald, DHCP and
/// gpudoctor's own de-duplication all rely on it), or one machine under two names.
#[test]
fn names_sharing_a_machine_id_are_noted() {
    let t = template();
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("n1.json"),
        &named(&t, "n1", &"c".repeat(32)),
    );
    write(
        &dir.path().join("n2.json"),
        &named(&t, "n2", &"c".repeat(32)),
    );
    let (_, v) = fleet(&[dir.path()]);
    assert_eq!(v["shape"]["nodes"], 2);
    assert_eq!(v["identity"][0]["kind"], "same_machine_id");
    assert_eq!(v["identity"][0]["nodes"], j!(["n1", "n2"]));
}

fn fleet_bounded(args: &[&Path]) -> Run {
    let mut c = gpudoctor();
    c.arg("fleet").arg("--json");
    for a in args {
        c.arg(a);
    }
    c.timeout(std::time::Duration::from_secs(20));
    run(&mut c)
}

/// `latest -> .` in the reports directory (or a link to a parent) made the walk recurse
/// until the path was too long: 80 "duplicates" from two files, or a hang with two links.
#[test]
fn a_link_loop_in_the_report_directory_is_walked_once() {
    let t = template();
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("n1.json"),
        &named(&t, "n1", &"1".repeat(32)),
    );
    write(
        &dir.path().join("n2.json"),
        &named(&t, "n2", &"2".repeat(32)),
    );
    std::os::unix::fs::symlink(".", dir.path().join("a")).unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("b")).unwrap();
    let r = fleet_bounded(&[dir.path()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["shape"]["nodes"], 2);
    assert_eq!(v["problems"], j!([]), "{:#}", v["problems"]);
}

/// A FIFO named *.json in the directory blocked `fleet` forever; a device named on the
/// command line was read until memory ran out (its length is 0, so the size check passed).
#[test]
fn pipes_and_devices_cannot_stall_or_exhaust_fleet() {
    let t = template();
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("n1.json"),
        &named(&t, "n1", &"1".repeat(32)),
    );
    let fifo = dir.path().join("stuck.json");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(ok.success());
    let r = fleet_bounded(&[dir.path(), Path::new("/dev/zero")]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["shape"]["nodes"], 1);
    let problems = v["problems"].as_array().unwrap();
    let detail = |src: &str| {
        problems
            .iter()
            .find(|p| p["source"].as_str().unwrap().ends_with(src))
            .unwrap_or_else(|| panic!("{src} not listed: {problems:#?}"))["detail"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(detail("stuck.json").contains("not a regular file"));
    assert!(detail("/dev/zero").contains("larger than 64 MiB"));
}

/// A node whose /usr/local/cuda mount failed, or whose torch environment is gone, among
/// peers that have both: fleet said "Every node is healthy and alike."
#[test]
fn a_node_missing_what_its_peers_have_is_an_outlier() {
    let t = template();
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=4 {
        let name = format!("n{i}");
        write(
            &dir.path().join(format!("{name}.json")),
            &named(&t, &name, &format!("{i:032}")),
        );
    }
    let mut bare = named(&t, "n5", &format!("{:032}", 5));
    let tk = &mut bare["snapshot"]["toolkits"];
    tk["installs"] = j!([]);
    tk["cuda_home"]["toolkit"] = Value::Null;
    tk["nvcc_on_path"] = Value::Null;
    bare["snapshot"]["python"] = j!([]);
    // What the node itself derived from those facts.
    bare["derived"]["toolkit_in_use"] = Value::Null;
    write(&dir.path().join("n5.json"), &bare);

    let (_, v) = fleet(&[dir.path()]);
    assert_eq!(
        v["shape"]["toolkits"][0],
        j!({"value": "12.4", "nodes": 4}),
        "the template has no toolkit: {:#}",
        v["shape"]
    );
    assert_eq!(
        v["shape"]["torch"][0],
        j!({"value": "2.5.1+cu124", "nodes": 4})
    );
    let outliers: Vec<(String, String, String)> = v["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["node"].as_str().unwrap().into(),
                o["what"].as_str().unwrap().into(),
                o["value"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        outliers,
        [
            ("n5".into(), "toolkit".into(), "none".into()),
            ("n5".into(), "torch".into(), "none".into())
        ],
        "{:#}",
        v["outliers"]
    );
}

fn stdin_fleet(input: &[u8]) -> (i32, Value) {
    let mut c = gpudoctor();
    c.args(["fleet", "-"]).write_stdin(input.to_vec());
    json(&mut c)
}

/// `cat reports/*.json | gpudoctor fleet -` — gpudoctor's own pretty-printed reports were
/// read line by line (1,392 "not JSON" problems), and one non-UTF-8 byte anywhere on
/// stdin lost every report.
#[test]
fn stdin_takes_concatenated_reports_and_one_bad_one_costs_only_itself() {
    let t = template();
    let mut input = Vec::new();
    input.extend(
        serde_json::to_string_pretty(&named(&t, "n1", &"1".repeat(32)))
            .unwrap()
            .bytes(),
    );
    input.extend(b"\ngarbage \xff here\n");
    input.extend(
        serde_json::to_string(&named(&t, "n2", &"2".repeat(32)))
            .unwrap()
            .bytes(),
    );
    input.push(b'\n');
    input.extend(
        serde_json::to_string_pretty(&named(&t, "n3", &"3".repeat(32)))
            .unwrap()
            .bytes(),
    );
    let (code, v) = stdin_fleet(&input);
    assert_eq!(v["shape"]["nodes"], 3, "{:#}", v["problems"]);
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0]["kind"], "unreadable");
    assert_eq!(problems[0]["detail"], "not UTF-8 text");
    let line = 1 + serde_json::to_string_pretty(&t).unwrap().lines().count();
    assert_eq!(problems[0]["source"], format!("stdin:{line}"));
    assert_eq!(code, 1, "an unreadable report fails the gate");
}

/// A report from a shared directory any node can write to put terminal escapes and
/// Markdown rows into the fleet view through its finding code.
#[test]
fn a_hostile_finding_code_is_printed_inert() {
    let t = template();
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("n1.json"),
        &with_error(
            named(&t, "n1", &"1".repeat(32)),
            "\u{1b}]0;owned\u{7}GD006|x\n## injected",
        ),
    );
    let human = run(gpudoctor().arg("fleet").arg(dir.path()));
    assert!(!human.stdout.contains('\u{1b}'), "{:?}", human.stdout);
    let md = run(gpudoctor()
        .args(["fleet", "--format", "markdown"])
        .arg(dir.path()));
    assert!(!md.stdout.contains("\n## injected"), "{}", md.stdout);
    assert!(!md.stdout.contains("GD006|x"), "{}", md.stdout);
}

/// `--skip GD038` to accept persistence mode off fleet-wide was accepted and ignored.
#[test]
fn fleet_honours_codes_in_only_and_skip() {
    let t = template();
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("n1.json"),
        &with_error(named(&t, "n1", &"1".repeat(32)), "GD006"),
    );
    let gate = |args: &[&str]| run(gpudoctor().arg("fleet").args(args).arg(dir.path())).code;
    assert_eq!(gate(&[]), 1);
    assert_eq!(gate(&["--skip", "GD006"]), 0);
    assert_eq!(gate(&["--only", "GD001"]), 0);
    assert_eq!(gate(&["--only", "GD006"]), 1);
    assert_eq!(
        gate(&["--skip", "smoke"]),
        2,
        "probe names cannot apply to saved reports"
    );
    // `identity` is put back whenever device_nodes runs, so counting probes missed it.
    assert_eq!(gate(&["--skip", "identity"]), 2);
}

/// With two peers the median included the node itself: 60 % of its only peer was no
/// outlier. And a node re-run with `--matmul-size 256` was compared with peers at 1024.
#[test]
fn smoke_figures_are_compared_with_the_other_peers_at_the_same_setting() {
    let t = template();
    let dir = tempfile::tempdir().unwrap();
    let smoked = |name: &str, gflops: f64, n: u32| {
        let mut v = named(&t, name, &format!("{:0>32}", name));
        v["snapshot"]["smoke"] = j!({"result": {"status": "ran", "run": {"devices": [
            {"matmul": {"ok": {"n": n, "gflops": gflops}}, "transfer": null}
        ]}}});
        write(&dir.path().join(format!("{name}.json")), &v);
    };
    smoked("a1", 50000.0, 1024);
    smoked("a2", 30000.0, 1024);
    smoked("b1", 50000.0, 4096);
    smoked("b2", 9000.0, 256);
    let (_, v) = fleet(&[dir.path()]);
    let slow: Vec<&str> = v["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["what"] == "matmul")
        .map(|o| o["node"].as_str().unwrap())
        .collect();
    assert_eq!(slow, ["a2"], "{:#}", v["outliers"]);
}

/// A full disk left `.NAME.tmp.HOST.PID` behind on every failed hourly run. A file-size
/// limit (with SIGXFSZ ignored) makes the write fail the same way.
#[test]
fn a_failed_output_write_leaves_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = FakeRoot::healthy(1);
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 1; exec \"$@\"")
        .arg("bash")
        .arg(&bin)
        .arg("--root")
        .arg(root.path())
        .args(["check", "--format", "json", "--output"])
        .arg(dir.path().join("r.json"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A dangling link at the --output path was replaced by a regular file, unlike `>`.
#[test]
fn output_through_a_dangling_link_creates_its_target() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("real/report.json", dir.path().join("latest.json")).unwrap();
    let r = run(FakeRoot::healthy(1)
        .cmd()
        .args(["check", "--format", "json", "--output"])
        .arg(dir.path().join("latest.json")));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let link = std::fs::symlink_metadata(dir.path().join("latest.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("real/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(v["schema_version"], 1);
}

/// /proc/driver/nvidia/version unreadable and NVML down: `check` still names the driver
/// from /sys/module/nvidia/version, and the fleet said "unknown" (an outlier among peers).
#[test]
fn the_fleet_reads_the_driver_where_check_does() {
    let t = template();
    let mut v = named(&t, "n1", &"1".repeat(32));
    let km = &mut v["snapshot"]["kernel_module"];
    assert!(km["sys_version"]["value"].is_string(), "{km:#}");
    km["version_file"] = j!({"source": "/proc/driver/nvidia/version", "missing": {"reason": "permission_denied", "detail": "EACCES"}});
    v["snapshot"]["nvml"] = Value::Null;
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("n1.json"), &v);
    let (_, f) = fleet(&[dir.path()]);
    assert_eq!(
        f["shape"]["drivers"],
        j!([{"value": "580.95.05", "nodes": 1}]),
        "{:#}",
        f["problems"]
    );
}

// ------------------------------------------------------------------ saved reports: depth and numbers

/// JSON nested 100,000 deep in a fleet directory was listed as "no snapshot" (serde_json
/// skips a field nobody reads without its depth limit); one in `--from` must not crash either.
#[test]
fn a_report_nested_100k_deep_is_not_json_in_fleet_and_from() {
    let dir = tempfile::tempdir().unwrap();
    let n = 100_000;
    let object = format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
    let array = format!(
        r#"{{"schema_version": 1, "snapshot": {}1{}}}"#,
        "[".repeat(n),
        "]".repeat(n)
    );
    std::fs::write(dir.path().join("object.json"), &object).unwrap();
    std::fs::write(dir.path().join("array.json"), &array).unwrap();
    // Alone they are no fleet: a usage error naming each.
    let alone = run(gpudoctor().arg("fleet").arg(dir.path()));
    assert_eq!(alone.code, 2, "{}", alone.stderr);
    assert_eq!(
        alone
            .stderr
            .matches("nested more than 127 levels deep")
            .count(),
        2
    );
    node_report(dir.path(), "good", &FakeRoot::healthy(1), None);
    let (code, v) = fleet(&[dir.path()]);
    assert_eq!(code, 1, "{v:#}");
    let problems: Vec<(String, &Value, &Value)> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let file = p["source"].as_str().unwrap().rsplit('/').next().unwrap();
            (file.to_string(), &p["kind"], &p["detail"])
        })
        .collect();
    let deep: Value = "nested more than 127 levels deep".into();
    let not_json: Value = "not_json".into();
    assert_eq!(
        problems,
        [
            ("array.json".to_string(), &not_json, &deep),
            ("object.json".to_string(), &not_json, &deep)
        ]
    );
    for name in ["object.json", "array.json"] {
        let r = run(gpudoctor()
            .args(["check", "--from"])
            .arg(dir.path().join(name)));
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr
                .ends_with(": not JSON: nested more than 127 levels deep\n"),
            "{}",
            r.stderr
        );
    }
}

/// `schema_version` 2^70 read back as a float: the error quoted 1.1805916207174113e+21,
/// a number the file does not contain.
#[test]
fn a_schema_version_past_u64_is_quoted_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    std::fs::write(
        &file,
        r#"{"schema_version": 1180591620717411303424, "snapshot": {}}"#,
    )
    .unwrap();
    let said = "schema_version 1180591620717411303424 is not supported (this gpudoctor reads 1)";
    let r = run(gpudoctor().args(["check", "--from"]).arg(&file));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!("gpudoctor: error: --from {}: {said}\n", file.display())
    );
    node_report(dir.path(), "good", &FakeRoot::healthy(1), None);
    let (_, v) = fleet(&[dir.path()]);
    assert_eq!(v["problems"][0]["kind"], "incompatible_schema", "{v:#}");
    assert_eq!(v["problems"][0]["detail"], said);
}

/// A million junk documents on stdin printed a 116 MB list, one line each: the list stops
/// at 100 and every format says how many more there were, by kind.
#[test]
fn the_unusable_list_is_capped_and_the_rest_counted_in_every_format() {
    // One usable report: a fleet with unusable inputs beside it, not a usage error.
    let dir = tempfile::tempdir().unwrap();
    let good = node_report(dir.path(), "good", &FakeRoot::healthy(1), None);
    let mut input = format!("{}\n", serde_json::to_string(&good).unwrap());
    input.push_str(&"{}\n".repeat(140));
    input.push_str(&"{bad\n".repeat(10));
    let (code, v) = stdin_fleet(input.as_bytes());
    assert_eq!(code, 1);
    assert_eq!(v["problems"].as_array().unwrap().len(), 100);
    assert_eq!(v["problems_not_listed"], 50);
    assert_eq!(
        v["problems_by_kind"],
        j!({"not_a_report": 140, "not_json": 10})
    );
    for format in ["human", "markdown"] {
        let mut c = gpudoctor();
        c.args(["fleet", "-", "--format", format])
            .write_stdin(input.clone());
        let r = run(&mut c);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stdout.contains("150 report(s) unusable"), "{}", r.stdout);
        assert!(
            r.stdout.contains(
                "… and 50 more not listed (all 150 by kind: not_a_report: 140, not_json: 10)"
            ),
            "{format}: {}",
            r.stdout
        );
        assert_eq!(
            r.stdout.matches("not_a_report").count(),
            101,
            "{}",
            r.stdout
        );
    }
}
