//! One verdict per fact: over injected faults (fake NVML and fake libcuda), every surface —
//! the human report, the JSON findings, `smoke`'s rows, the Prometheus gauges and JUnit's
//! failures — says the same about every GPU and step. Then the wrong signals these
//! surfaces used to give, each as a regression test.

use crate::util;

use std::collections::BTreeMap;

use crate::util::fake_nvml::{FakeNvml, FAKE_NVML_ENV};
use crate::util::gpu_node::{hgx, GpuNode};
use crate::util::*;
use serde_json::Value;

/// What a surface says about one step: passed, info, warning, error, or not judged.
type Verdicts = BTreeMap<(u32, String), String>;

/// The verdict the JSON findings give each step, worked out here from `evidence[].fact`
/// independently of gpudoctor's own code: the worst finding citing `smoke:N:step`; with
/// none, a completed step passed if its rule ran.
fn from_json(report: &Value) -> (Verdicts, Vec<u32>) {
    let mut worst: BTreeMap<(u32, String), u8> = BTreeMap::new();
    let rank = |s: &str| match s {
        "error" => 3,
        "warning" => 2,
        _ => 1,
    };
    for f in report["findings"].as_array().unwrap() {
        for e in f["evidence"].as_array().unwrap() {
            let Some(fact) = e["fact"].as_str() else {
                continue;
            };
            let parts: Vec<&str> = fact.split(':').collect();
            // GPU pairs (`smoke:peer:0-1`) are no GPU's step: tests/it/smoke_peer.rs checks them.
            if parts.len() == 3 && parts[0] == "smoke" && parts[1] != "peer" {
                let key = (parts[1].parse().unwrap(), parts[2].to_string());
                let r = rank(f["severity"].as_str().unwrap());
                let w = worst.entry(key).or_insert(0);
                *w = (*w).max(r);
            }
        }
    }
    let ran = |rule: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["rule"] == rule && (c["status"] == "passed" || c["status"] == "failed"))
    };
    let mut out = Verdicts::new();
    // GPUs that stopped short with a step no finding explains: never called passed.
    let mut unexplained = Vec::new();
    let devices = report["snapshot"]["smoke"]["result"]["run"]["devices"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for d in devices {
        let ordinal = d["ordinal"].as_u64().unwrap() as u32;
        if d["finished"] != true {
            unexplained.push(ordinal);
        }
        for (field, step, rule) in [
            ("context", "context", "smoke_context"),
            ("module", "kernels", "smoke_context"),
            ("matmul", "matmul", "smoke_matmul"),
            ("memory", "memory", "smoke_memory"),
            ("transfer", "transfer", "smoke_transfer"),
        ] {
            if d[field].is_null() {
                continue;
            }
            let key = (ordinal, step.to_string());
            let v = match worst.get(&key) {
                Some(3) => "error",
                Some(2) => "warning",
                Some(_) => "info",
                None if d[field].get("ok").is_some() && ran(rule) => "passed",
                None => {
                    if d[field].get("failed").is_some() {
                        unexplained.push(ordinal);
                    }
                    "not_judged"
                }
            };
            out.insert(key, v.to_string());
        }
        if let Some(step) = d["running"].as_str() {
            let step = if step == "module" { "kernels" } else { step };
            let key = (ordinal, step.to_string());
            let v = match worst.get(&key) {
                Some(3) => "error",
                Some(2) => "warning",
                Some(_) => "info",
                None => "not_judged",
            };
            out.insert(key, v.to_string());
        }
    }
    (out, unexplained)
}

fn verdict_of_mark(mark: &str) -> &'static str {
    match mark {
        "✓" => "passed",
        "!" => "warning",
        "✗" => "error",
        "i" => "info",
        _ => "not_judged",
    }
}

/// `check -v`'s smoke rows: "  ✗ GPU 1 memory  …".
fn from_human(text: &str) -> Verdicts {
    let mut out = Verdicts::new();
    for line in text.lines() {
        let t = line.trim_start();
        let Some((mark, rest)) = t.split_once(' ') else {
            continue;
        };
        let Some(rest) = rest.strip_prefix("GPU ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(n), Some(step)) = (words.next(), words.next()) else {
            continue;
        };
        let (Ok(n), true) = (
            n.parse::<u32>(),
            [
                "device", "context", "kernels", "matmul", "memory", "transfer",
            ]
            .contains(&step),
        ) else {
            continue;
        };
        out.insert((n, step.to_string()), verdict_of_mark(mark).to_string());
    }
    out
}

/// `check --format markdown`'s smoke rows: "| ✗ | GPU 1 memory | … |".
fn from_markdown(text: &str) -> Verdicts {
    let mut out = Verdicts::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let Some(rest) = cells[2].strip_prefix("GPU ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        if let (Some(n), Some(step)) = (words.next(), words.next()) {
            if let (Ok(n), true) = (
                n.parse::<u32>(),
                [
                    "device", "context", "kernels", "matmul", "memory", "transfer",
                ]
                .contains(&step),
            ) {
                out.insert((n, step.to_string()), verdict_of_mark(cells[1]).to_string());
            }
        }
    }
    out
}

/// `smoke --format json`'s per-GPU verdicts.
fn from_smoke_json(v: &Value) -> Verdicts {
    let mut out = Verdicts::new();
    for g in v["gpus"].as_array().unwrap() {
        let n = g["ordinal"].as_u64().unwrap() as u32;
        for s in g["steps"].as_array().unwrap() {
            out.insert(
                (n, s["step"].as_str().unwrap().to_string()),
                s["verdict"].as_str().unwrap().to_string(),
            );
        }
    }
    out
}

/// `smoke`'s human rows: "  ✗ memory    …" under "✗ GPU 1  …".
fn from_smoke_human(text: &str) -> Verdicts {
    const STEPS: [&str; 6] = [
        "device", "context", "kernels", "matmul", "memory", "transfer",
    ];
    let mut out = Verdicts::new();
    // The grid: a header naming the steps, then a row per GPU with a mark under each.
    let mut columns: Vec<(usize, &str)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("  GPU ") {
            columns = STEPS
                .iter()
                .filter_map(|s| {
                    let at = line.find(&format!(" {s}"))? + 1;
                    Some((line[..at].chars().count(), *s))
                })
                .collect();
            continue;
        }
        if line.trim().is_empty() {
            columns.clear();
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(_), Some(n)) = (
            words.next(),
            words.next().and_then(|w| w.parse::<u32>().ok()),
        ) else {
            continue;
        };
        let chars: Vec<char> = line.chars().collect();
        for (at, step) in &columns {
            match chars.get(*at) {
                Some('–') | None => {}
                Some(mark) => {
                    out.insert(
                        (n, step.to_string()),
                        verdict_of_mark(&mark.to_string()).to_string(),
                    );
                }
            }
        }
    }
    out
}

/// Each GPU's overall verdict from per-step verdicts (what a GPU's row and gauge say): the
/// worst finding; with none, not judged if it stopped short unexplained, else passed.
fn per_gpu(steps: &Verdicts, unexplained: &[u32]) -> BTreeMap<u32, String> {
    let rank = |v: &str| match v {
        "error" => 3,
        "warning" => 2,
        "info" => 1,
        _ => 0,
    };
    let mut out: BTreeMap<u32, String> = BTreeMap::new();
    for ((n, _), v) in steps {
        let e = out.entry(*n).or_insert_with(|| "passed".into());
        if rank(v) > rank(e) {
            *e = v.clone();
        }
    }
    for (n, v) in out.iter_mut() {
        if v == "passed" && unexplained.contains(n) {
            *v = "not_judged".into();
        }
    }
    out
}

/// `gpudoctor_smoke_passed{gpu="N",…,verdict="V"} X` → N → (V, X).
fn from_prometheus(text: &str) -> BTreeMap<u32, (String, u8)> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("gpudoctor_smoke_passed{") else {
            continue;
        };
        let (labels, value) = rest.split_once("} ").unwrap();
        let label = |k: &str| {
            labels
                .split(',')
                .find_map(|kv| kv.strip_prefix(&format!("{k}=\"")))
                .map(|v| v.trim_end_matches('"').to_string())
                .unwrap()
        };
        out.insert(
            label("gpu").parse().unwrap(),
            (label("verdict"), value.trim().parse().unwrap()),
        );
    }
    out
}

/// JUnit testcases that failed, by rule.
fn junit_failures(xml: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter(|n| n.children().any(|c| c.has_tag_name("failure")))
        .map(|n| {
            n.attribute("classname")
                .unwrap()
                .trim_start_matches("gpudoctor.")
                .to_string()
        })
        .collect()
}

fn rule_of(step: &str) -> &'static str {
    match step {
        "matmul" => "smoke_matmul",
        "memory" => "smoke_memory",
        "transfer" => "smoke_transfer",
        _ => "smoke_context",
    }
}

/// Runs every surface on the node and asserts they agree; returns the JSON's verdicts.
fn assert_every_surface_agrees(name: &str, node: &GpuNode, extra: &[&str]) -> Verdicts {
    // Every surface from its own run, all at once; the commands are made first, since
    // making one rewrites the fakes' configuration files.
    let surfaces: [&[&str]; 7] = [
        &["check", "--format", "json"],
        &["check", "-v"],
        &["check", "-v", "--format", "markdown"],
        &["smoke", "--format", "json"],
        &["smoke"],
        &["check", "--format", "prometheus"],
        &["check", "--format", "junit"],
    ];
    let cmds = surfaces
        .iter()
        .map(|args| {
            let mut c = node.cmd();
            c.args(*args).args(extra).env("NO_COLOR", "1");
            c
        })
        .collect();
    let [j, human, md, smoke, smoke_human, prom, junit]: [Run; 7] =
        run_all(cmds).try_into().ok().expect("seven runs");
    let report: Value = serde_json::from_str(&j.stdout).unwrap_or_else(|e| {
        panic!("{name}: {e}\n{}{}", j.stdout, j.stderr);
    });
    let (truth, unexplained) = from_json(&report);
    assert!(!truth.is_empty(), "{name}: no smoke step ran: {}", j.stdout);

    let human = human.stdout;
    assert_eq!(from_human(&human), truth, "{name}: check's marks\n{human}");

    let md = md.stdout;
    assert_eq!(
        from_markdown(&md),
        truth,
        "{name}: check --format markdown\n{md}"
    );

    let sv: Value = serde_json::from_str(&smoke.stdout).unwrap();
    assert_eq!(from_smoke_json(&sv), truth, "{name}: smoke --format json");
    let smoke_human = smoke_human.stdout;
    assert_eq!(
        from_smoke_human(&smoke_human),
        truth,
        "{name}: smoke's rows\n{smoke_human}"
    );

    let gpus = per_gpu(&truth, &unexplained);
    for g in sv["gpus"].as_array().unwrap() {
        let n = g["ordinal"].as_u64().unwrap() as u32;
        assert_eq!(
            g["overall"].as_str().unwrap(),
            gpus[&n],
            "{name}: smoke's verdict on GPU {n}"
        );
    }
    let prom = from_prometheus(&prom.stdout);
    for (n, v) in &gpus {
        let (label, passed) = &prom[n];
        assert_eq!(label, v, "{name}: Prometheus verdict on GPU {n}");
        assert_eq!(
            *passed,
            u8::from(v == "passed" || v == "info"),
            "{name}: gpudoctor_smoke_passed on GPU {n}"
        );
    }

    let failed = junit_failures(&junit.stdout);
    for ((n, step), v) in &truth {
        if v == "warning" || v == "error" {
            let rule = rule_of(step);
            assert!(
                failed.iter().any(|r| r == rule || r == "smoke_health"),
                "{name}: GPU {n} {step} is {v} but JUnit's {rule} passed ({failed:?})"
            );
        }
    }
    for rule in [
        "smoke_matmul",
        "smoke_memory",
        "smoke_transfer",
        "smoke_context",
    ] {
        if failed.iter().any(|r| r == rule) {
            assert!(
                truth
                    .iter()
                    .any(|((_, s), v)| rule_of(s) == rule && (v == "warning" || v == "error")),
                "{name}: JUnit fails {rule} but no step of it is marked"
            );
        }
    }
    truth
}

/// A node whose GPUs have 16 MiB: the fake's memory kernels run on the CPU, seven times a case.
fn small_node(n: u32) -> GpuNode {
    let mut node = GpuNode::new(n);
    for d in &mut node.cuda().devices {
        d.total_memory = 16 << 20;
    }
    node
}

#[test]
fn every_surface_agrees_over_a_matrix_of_faults() {
    let node = small_node(2);
    let t = assert_every_surface_agrees("healthy", &node, &[]);
    assert!(
        t.values().all(|v| v == "passed" || v == "not_judged"),
        "{t:?}"
    );

    let mut node = small_node(2);
    node.cuda().device(1).bit_flips = 3;
    let t = assert_every_surface_agrees("bit flips", &node, &[]);
    assert_eq!(t[&(1, "memory".into())], "error");
    assert_eq!(t[&(0, "memory".into())], "passed");

    let mut node = small_node(2);
    node.cuda().device(0).oom_after_bytes = Some(8 << 20);
    let t = assert_every_surface_agrees("short allocation", &node, &[]);
    assert_eq!(t[&(0, "memory".into())], "warning");

    let mut node = small_node(2);
    node.cuda().device(0).host_alloc_error = Some(2);
    let t = assert_every_surface_agrees("pinned memory refused", &node, &[]);
    assert_eq!(t[&(0, "transfer".into())], "warning");

    let mut node = small_node(1);
    if let Some(p) = node.nvml.gpu(0).pcie.as_mut() {
        (p.gen, p.max_gen, p.width, p.max_width) = (1, 1, 4, 4);
    }
    node.cuda().device(0).h2d_gbps = Some(0.3);
    // Room for the 32 MiB transfer buffers.
    node.cuda().device(0).total_memory = 64 << 20;
    let t = assert_every_surface_agrees("slow link", &node, &["--transfer-size", "32"]);
    assert_eq!(t[&(0, "transfer".into())], "warning");

    let mut node = small_node(2);
    node.cuda().device(1).matmul_wrong = true;
    let t = assert_every_surface_agrees("wrong product", &node, &[]);
    assert_eq!(t[&(1, "matmul".into())], "error");

    let mut node = small_node(2);
    node.cuda().device(1).ctx_error = Some(999);
    let t = assert_every_surface_agrees("context refused", &node, &[]);
    assert_eq!(t[&(1, "context".into())], "error");

    let mut node = small_node(2);
    node.cuda().device(1).hang_in = Some("cuMemAlloc_v2".into());
    let t = assert_every_surface_agrees("hang", &node, &["--timeout", "4"]);
    // The first allocation is the matmul's: GPU 1 hangs there, GPU 0 finishes.
    assert_eq!(
        t.get(&(1, "matmul".into())).map(String::as_str),
        Some("error"),
        "{t:?}"
    );
    assert_eq!(
        t.get(&(0, "memory".into())).map(String::as_str),
        Some("passed"),
        "{t:?}"
    );
}

// ------------------------------------------------------------ the wrong signals, fixed

/// The smoke summary line of `check`, e.g. "✗ smoke test  7 of 8 GPU(s) passed, 1 failed".
fn smoke_summary(text: &str) -> String {
    text.lines()
        .find(|l| l.contains("Smoke test"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[test]
fn a_failed_gpu_turns_the_smoke_summary_red() {
    let mut node = GpuNode::new(8);
    node.cuda().device(1).bit_flips = 3;
    let mut c = node.cmd();
    c.arg("check").env("NO_COLOR", "1");
    let r = run(&mut c);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let line = smoke_summary(&r.stdout);
    assert!(line.starts_with('✗'), "{line}");
    assert!(line.contains("7 of 8 GPU(s) passed, 1 failed"), "{line}");
    // The report names GPU 1's failing step; the Markdown report folds the seven passing
    // GPUs into one line and keeps GPU 1's rows.
    assert!(r.stdout.contains("✗ GPU 1 memory"), "{}", r.stdout);
    assert!(!r.stdout.contains("GPU 0,2–7"), "{}", r.stdout);
    let mut c = node.cmd();
    c.args(["check", "--format", "markdown"]);
    let md = run(&mut c).stdout;
    assert!(md.contains("| ✗ | GPU 1 memory |"), "{md}");
    let seven = md
        .lines()
        .find(|l| l.starts_with("| ✓ | GPU 0,2–7 |"))
        .unwrap_or_else(|| panic!("no shared line for GPUs 0,2–7:\n{md}"));
    assert!(
        seven.contains("7× NVIDIA H100 80GB HBM3: context, kernels, matmul, memory passed"),
        "{seven}"
    );
    assert!(!md.contains("GPU 0 matmul"), "{md}");

    let mut node = GpuNode::new(2);
    node.cuda().device(0).ctx_error = Some(999);
    node.cuda().device(1).ctx_error = Some(999);
    let mut c = node.cmd();
    c.arg("check").env("NO_COLOR", "1");
    let line = smoke_summary(&run(&mut c).stdout);
    assert!(line.starts_with('✗'), "{line}");
    assert!(line.contains("0 of 2 GPU(s) passed, 2 failed"), "{line}");
}

#[test]
fn refused_pinned_memory_is_a_warning_on_every_surface() {
    let mut node = GpuNode::new(1);
    node.cuda().device(0).host_alloc_error = Some(2);
    let mut c = node.cmd();
    c.args(["smoke"]).env("NO_COLOR", "1");
    let r = run(&mut c);
    assert!(r.stdout.contains("! GPU 0 transfer  "), "{}", r.stdout);
    assert!(!r.stdout.contains('✗'), "{}", r.stdout);
    assert_eq!(r.code, 0, "a warning does not fail the default gate");
    let mut c = node.cmd();
    c.args(["check", "--format", "prometheus"]);
    let prom = from_prometheus(&run(&mut c).stdout);
    assert_eq!(prom[&0], ("warning".to_string(), 0));
}

#[test]
fn the_gpu_line_shows_the_link_it_runs_at() {
    let mut nvml = hgx(2);
    if let Some(p) = nvml.gpu(1).pcie.as_mut() {
        p.width = 8;
    }
    let node = GpuNode::nvml_only(2, nvml);
    let mut c = node.cmd();
    c.args(["check", "--no-smoke"]).env("NO_COLOR", "1");
    let r = run(&mut c);
    let gpu1 = r
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("! GPU 1 "))
        .unwrap_or_else(|| panic!("GPU 1 is not marked with GD034's warning:\n{}", r.stdout));
    assert!(gpu1.contains("PCIe Gen5 x8 (max Gen5 x16)"), "{gpu1}");
    let mut c = node.cmd();
    c.arg("devices").env("NO_COLOR", "1");
    let table = run(&mut c).stdout;
    assert!(table.contains("Gen5 x8 (max Gen5 x16)"), "{table}");
    let mut c = node.cmd();
    c.args(["devices", "1"]).env("NO_COLOR", "1");
    let detail = run(&mut c).stdout;
    assert!(detail.contains("Gen5 x8 (max Gen5 x16)"), "{detail}");
}

fn with_handle_error(code: u32) -> (i32, Value, GpuNode) {
    let mut nvml = hgx(2);
    nvml.gpu(1).handle_error = Some(code);
    let node = GpuNode::nvml_only(2, nvml);
    let mut c = node.cmd();
    c.args(["check", "--no-smoke"]);
    let (code, v) = json(&mut c);
    (code, v, node)
}

#[test]
fn a_gpu_nvml_cannot_open_is_an_error_finding() {
    for (code, word) in [(999, "unknown"), (4, "no_permission"), (15, "gpu_is_lost")] {
        let (exit, v, _) = with_handle_error(code);
        assert_eq!(exit, 1, "NVML error {code}");
        let f = findings(&v, "GD032");
        assert_eq!(f.len(), 1, "NVML error {code}: {:#}", v["findings"]);
        assert_eq!(f[0]["severity"], "error");
        assert!(
            f[0]["title"].as_str().unwrap().contains("GPU 1"),
            "{}",
            f[0]["title"]
        );
        assert!(
            f[0]["evidence"][0]["value"]
                .as_str()
                .unwrap()
                .contains(word),
            "{:#}",
            f[0]
        );
    }
    // devices marks the GPU and names the finding.
    let (_, _, node) = with_handle_error(999);
    let mut c = node.cmd();
    c.arg("devices").env("NO_COLOR", "1");
    let r = run(&mut c);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("error[GD032]: GPU 1"), "{}", r.stdout);
    assert!(
        r.stdout.lines().any(|l| l.starts_with("✗  1")),
        "{}",
        r.stdout
    );
}

#[test]
fn smoke_that_proved_nothing_fails() {
    // A GPU node whose libcuda is missing: NVML sees GPUs, nothing computes.
    let node = GpuNode::nvml_only(2, hgx(2));
    let missing = node.dir.path().join("no-such-libcuda.so.1");
    let mut c = node.cmd();
    c.arg("smoke")
        .arg("--cuda-lib")
        .arg(&missing)
        .env("NO_COLOR", "1");
    let r = run(&mut c);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let first = r.stdout.lines().next().unwrap();
    assert!(first.starts_with("✗ Smoke test: nothing tested"), "{first}");

    // No NVIDIA hardware at all: said plainly, and still no pass.
    let root = FakeRoot::new();
    let mut c = root.cmd();
    c.args(["smoke", "--cuda-lib", "/nonexistent/libcuda.so.1"])
        .env("NO_COLOR", "1");
    let r = run(&mut c);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.starts_with("✗ Smoke test: nothing tested"),
        "{}",
        r.stdout
    );

    // Under --root nothing is loaded, so nothing is proved.
    let node = GpuNode::new(1);
    let mut c = node.root.cmd();
    c.arg("smoke");
    let r = run(&mut c);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("GD053"), "{}", r.stdout);
}

#[test]
fn devices_that_examined_no_gpu_exits_1_while_check_passes() {
    let root = FakeRoot::new();
    let r = run(root.cmd().args(["devices", "--color", "never"]));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("error[GD001]: No NVIDIA GPU found: no GPU to show"),
        "{}",
        r.stdout
    );
    let (code, v) = json(root.cmd().arg("devices"));
    assert_eq!(code, 1);
    assert!(v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "GD001" && f["severity"] == "error"));
    // A check on the same machine passes: no GPU is a fact, not a fault.
    let r = run(root.cmd().args(["check", "--no-smoke"]));
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn devices_without_nvml_never_says_no_problems() {
    let root = FakeRoot::healthy(2);
    let mut c = root.cmd();
    c.args(["devices", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"])
        .env("NO_COLOR", "1");
    let r = run(&mut c);
    assert!(!r.stdout.contains("No GPU problems found"), "{}", r.stdout);
    assert_eq!(r.code, 1, "{}", r.stdout);

    // An index no GPU has is a usage error with NVML and without it.
    let mut c = root.cmd();
    c.args([
        "devices",
        "99",
        "--nvml-lib",
        "/nonexistent/libnvidia-ml.so.1",
    ]);
    let r = run(&mut c);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("there is no GPU 99: 2 GPU(s)"),
        "{}",
        r.stderr
    );
    let node = GpuNode::nvml_only(2, hgx(2));
    let mut c = node.cmd();
    c.args(["devices", "99"]);
    let r = run(&mut c);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("NVML reports 2 GPU(s)"), "{}", r.stderr);
}

#[test]
fn a_container_without_the_driver_gets_no_modprobe() {
    let mut nvml = FakeNvml::default();
    nvml.faults.init_error = Some(9); // NVML_ERROR_DRIVER_NOT_LOADED
    let node = GpuNode::nvml_only(1, nvml);
    node.root.file(".dockerenv", "");
    let mut c = node.cmd();
    c.args(["check", "--no-smoke"])
        .env(FAKE_NVML_ENV, node.nvml.write(&node.dir.path().join("n")));
    let (_, v) = json(&mut c);
    let f = findings(&v, "GD030");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    let fixes = fix_commands(f[0]);
    assert!(!fixes.contains("modprobe"), "{fixes}");
    for fix in f[0]["fix"].as_array().unwrap() {
        let text = fix["text"].as_str().unwrap();
        assert!(
            text.split_whitespace().count() >= 3,
            "placeholder title {text:?}"
        );
    }
    for f in v["findings"].as_array().unwrap() {
        let cmds = fix_commands(f);
        assert!(!cmds.contains("modprobe"), "{}: {cmds}", f["code"]);
    }
}

#[test]
fn every_view_writes_findings_and_bus_ids_one_way() {
    let mut nvml = hgx(2);
    nvml.gpu(1).handle_error = Some(999);
    let node = GpuNode::nvml_only(2, nvml);
    let mut c = node.cmd();
    c.arg("devices").env("NO_COLOR", "1");
    let r = run(&mut c);
    assert!(r.stdout.contains("error[GD032]:"), "{}", r.stdout);
    assert!(!r.stdout.contains("error GD"), "{}", r.stdout);
    assert!(r.stdout.contains("0000:18:00.0"), "{}", r.stdout);
    assert!(!r.stdout.contains("00000000:"), "{}", r.stdout);

    // Markdown is tables with rows, not the text report in a fence.
    let mut c = node.cmd();
    c.args(["devices", "--format", "markdown"]);
    let md = run(&mut c).stdout;
    assert!(!md.contains("```text"), "{md}");
    assert!(
        md.contains("| ✓ | 0 | NVIDIA H100 80GB HBM3 | 0000:18:00.0 |"),
        "{md}"
    );

    let root = FakeRoot::new();
    let mut c = root.cmd();
    c.args(["toolkit", "--format", "markdown"]);
    let md = run(&mut c).stdout;
    assert!(md.contains("No CUDA toolkit found."), "{md}");
    assert!(
        !md.contains("| root | version"),
        "a header with no rows: {md}"
    );
}

/// The driver, GPU count and toolkit are derived once, in the report: `fleet` and every
/// format read that answer. With the kernel module's version unreadable, the driver in
/// force is the libcuda the loader picks (580.95.05), not what NVML answers (here a
/// deliberately different 999.1.1); fleet used to re-derive it from NVML.
#[test]
fn fleet_and_every_format_read_the_derived_driver() {
    let mut nvml = hgx(2);
    nvml.system.driver_version = Some("999.1.1".into());
    let node = GpuNode::nvml_only(2, nvml);
    node.root
        .remove("proc/driver/nvidia/version")
        .remove("sys/module/nvidia/version");
    let mut c = node.cmd();
    c.args(["check", "--no-smoke"]);
    let (_, report) = json(&mut c);
    assert_eq!(
        report["derived"]["driver"]["version"], "580.95.05",
        "{:#}",
        report["derived"]
    );
    assert_eq!(report["derived"]["driver"]["kernel"], false);
    assert_eq!(report["derived"]["gpu_count"]["count"], 2);

    let mut c = node.cmd();
    c.args(["check", "--no-smoke", "--format", "prometheus"]);
    let prom = run(&mut c).stdout;
    assert!(
        prom.contains("gpudoctor_driver_info{driver_version=\"580.95.05\""),
        "{prom}"
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n1.json"), report.to_string()).unwrap();
    let r = run(gpudoctor()
        .args(["fleet", "--format", "json"])
        .arg(dir.path()));
    let fleet: Value = serde_json::from_str(&r.stdout).unwrap();
    let drivers = fleet["shape"]["drivers"].to_string();
    assert!(
        drivers.contains("580.95.05") && !drivers.contains("999.1.1"),
        "{drivers}"
    );
}

/// The verdict JSON findings give each NVML GPU (evidence `gpu:N`), worked out here.
fn gpu_verdicts_from_json(report: &Value, gpus: u32) -> BTreeMap<u32, String> {
    let mut out: BTreeMap<u32, String> = (0..gpus).map(|i| (i, "passed".into())).collect();
    let rank = |s: &str| match s {
        "error" => 3,
        "warning" => 2,
        "info" => 1,
        _ => 0,
    };
    for f in report["findings"].as_array().unwrap() {
        let sev = f["severity"].as_str().unwrap();
        for e in f["evidence"].as_array().unwrap() {
            let Some(i) = e["fact"]
                .as_str()
                .and_then(|k| k.strip_prefix("gpu:"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let v = out.entry(i).or_default();
            if rank(sev) > rank(v) {
                *v = sev.to_string();
            }
        }
    }
    out
}

/// `check -v`'s NVML lines ("  ✗ GPU 1  unreachable: …") and `devices`' first column.
fn gpu_marks(text: &str, devices_table: bool) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let t = line.trim_start();
        let mut words = t.split_whitespace();
        let (Some(mark), Some(a), Some(b)) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if !["✓", "!", "✗", "i", "·"].contains(&mark) {
            continue;
        }
        let index = if devices_table {
            a.parse::<u32>().ok()
        } else if a == "GPU" {
            // "GPU 1  …" but not "GPU 1 context" (smoke rows).
            b.parse::<u32>().ok().filter(|_| {
                ![
                    "device", "context", "kernels", "matmul", "memory", "transfer",
                ]
                .iter()
                .any(|s| t.contains(&format!("GPU {b} {s}")))
            })
        } else {
            None
        };
        if let Some(i) = index {
            out.insert(i, verdict_of_mark(mark).to_string());
        }
    }
    out
}

#[test]
fn nvml_gpu_faults_read_the_same_in_check_devices_json_and_junit() {
    let cases: Vec<(&str, FakeNvml, u32, &str, &str)> = {
        let mut unopenable = hgx(3);
        unopenable.gpu(1).handle_error = Some(999);
        let mut lost = hgx(3);
        lost.gpu(2).lost = true;
        let mut narrow = hgx(3);
        if let Some(p) = narrow.gpu(0).pcie.as_mut() {
            p.width = 8;
        }
        let mut ecc = hgx(3);
        if let Some(e) = ecc.gpu(1).ecc.as_mut() {
            e.volatile = Some(util::fake_nvml::EccCounts {
                corrected: 0,
                uncorrected: 4,
            });
        }
        vec![
            ("unopenable", unopenable, 1, "error", "gpu_recovery"),
            ("lost", lost, 2, "error", "gpu_recovery"),
            ("x8 link", narrow, 0, "warning", "pcie_link"),
            ("uncorrectable ECC", ecc, 1, "error", "memory_health"),
        ]
    };
    for (name, nvml, gpu, severity, rule) in cases {
        let node = GpuNode::nvml_only(3, nvml);
        let mut c = node.cmd();
        c.args(["check", "--no-smoke"]);
        let (_, report) = json(&mut c);
        let truth = gpu_verdicts_from_json(&report, 3);
        assert_eq!(truth[&gpu], severity, "{name}: {truth:?}");

        let mut c = node.cmd();
        c.args(["check", "--no-smoke", "-v"]).env("NO_COLOR", "1");
        let human = run(&mut c).stdout;
        assert_eq!(gpu_marks(&human, false), truth, "{name}: check\n{human}");

        let mut c = node.cmd();
        c.arg("devices").env("NO_COLOR", "1");
        let table = run(&mut c).stdout;
        assert_eq!(gpu_marks(&table, true), truth, "{name}: devices\n{table}");

        let mut c = node.cmd();
        c.args(["check", "--no-smoke", "--format", "junit"]);
        let failed = junit_failures(&run(&mut c).stdout);
        assert!(failed.iter().any(|r| r == rule), "{name}: JUnit {failed:?}");
    }
}

// ------------------------------------------------------------ naming the board to act on

/// A finding an admin acts on names the board: NVML index, bus id, UUID and serial, for a
/// CUDA device too (matched by UUID, so CUDA_VISIBLE_DEVICES renumbering cannot mislead),
/// and its reset or clock fix targets that GPU, so `--fix-script` keeps it live.
#[test]
fn per_gpu_findings_name_the_board_and_their_fixes_target_it() {
    // CUDA sees only GPU 1 of two, as under CUDA_VISIBLE_DEVICES=1: its ordinal 0 is GPU 1.
    let mut node = GpuNode::new(2);
    let gpu1 = node.cuda().devices.remove(1);
    node.cuda().devices = vec![gpu1];
    node.cuda().device(0).matmul_wrong = true;
    node.nvml
        .gpu(1)
        .ecc
        .as_mut()
        .unwrap()
        .volatile
        .as_mut()
        .unwrap()
        .uncorrected = 2;
    let (_, v) = json(&mut node.cmd());
    let f = |code: &str| -> Value {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == code)
            .unwrap_or_else(|| panic!("no {code} in {v:#}"))
            .clone()
    };
    let values = |f: &Value| -> Vec<String> {
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["value"].as_str().unwrap().to_string())
            .collect()
    };
    let commands = |f: &Value| -> Vec<String> {
        f["fix"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x["command"].as_str().map(String::from))
            .collect()
    };
    let board = "bus 0000:19:00.0, uuid GPU-";
    let gd056 = f("GD056");
    assert!(
        values(&gd056)
            .iter()
            .any(|l| l.starts_with("CUDA device 0 is GPU 1: ")
                && l.contains(board)
                && l.ends_with("serial 1654223000001")),
        "{:#?}",
        values(&gd056)
    );
    assert!(commands(&gd056)
        .contains(&"sudo nvidia-smi -i 1 -rgc && sudo nvidia-smi -i 1 -rmc".to_string()));
    let gd033 = f("GD033");
    assert!(
        values(&gd033)
            .iter()
            .any(|l| l.starts_with("GPU 1: ") && l.contains(board)),
        "{:#?}",
        values(&gd033)
    );
    assert!(
        commands(&gd033).contains(&"sudo nvidia-smi -r -i 1".to_string()),
        "{:?}",
        commands(&gd033)
    );

    // The fix script keeps the reset live (nothing left to fill in).
    let script = run(node.cmd().args(["check", "--fix-script"])).stdout;
    assert!(
        script
            .lines()
            .any(|l| l.trim() == "sudo nvidia-smi -r -i 1"),
        "{script}"
    );
}
