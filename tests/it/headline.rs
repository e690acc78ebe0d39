//! The report leads with its outcome (src/headline.rs), the same in every format: the first
//! line after `check`'s header, the bold line of the Markdown report, `headline` in JSON.
//! Also the shapes that keep a healthy node's report short: one smoke-test line for GPUs
//! that passed alike, and what `--python-import` learned shown next to the files.

use crate::util::gpu_node::GpuNode;
use crate::util::*;
use serde_json::Value;

/// The headline as human output prints it (the line after the header), the JSON headline,
/// the Markdown report's bold first line, and the human output itself.
struct Lead {
    human: String,
    json: Value,
    markdown: String,
    out: String,
}

fn lead(cmd: impl Fn() -> assert_cmd::Command) -> Lead {
    // Wide enough that no line wraps: these tests read whole lines (tests/it/width.rs wraps).
    let r = run(cmd().arg("check").env("COLUMNS", "1000"));
    let mut lines = r.stdout.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("gpudoctor "), "{}", r.stdout);
    let human = lines.next().unwrap_or_default().to_string();
    let (_, v) = json(cmd().arg("check"));
    let md = run(cmd().args(["check", "--format", "markdown"]));
    let markdown = md
        .stdout
        .lines()
        .find(|l| l.starts_with("**"))
        .unwrap_or_default()
        .to_string();
    Lead {
        human,
        json: v["headline"].clone(),
        markdown,
        out: r.stdout,
    }
}

impl Lead {
    /// Every format says `text` with this kind and codes, marked with `mark`.
    fn says(&self, mark: char, kind: &str, text: &str, codes: &[&str]) {
        assert_eq!(self.json["kind"], kind, "{:#}", self.json);
        assert_eq!(self.json["text"], text, "{:#}", self.json);
        assert_eq!(
            self.json["codes"],
            serde_json::json!(codes),
            "{:#}",
            self.json
        );
        assert_eq!(self.human, format!("{mark} {text}"), "{}", self.out);
        assert_eq!(self.markdown, format!("**{mark} {text}**"));
    }
}

#[test]
fn a_blocker_that_stops_every_cuda_program_says_cuda_will_not_work() {
    let root = FakeRoot::healthy(2);
    root.remove("dev/nvidia-uvm");
    let l = lead(|| {
        let mut c = root.cmd();
        c.args(["--user", ALICE]);
        c
    });
    l.says(
        '✗',
        "cuda_will_not_work",
        "CUDA will not work here: 1 blocker (GD006)",
        &["GD006"],
    );
}

#[test]
fn no_gpu_at_all_is_said_plainly_and_is_not_ready() {
    let root = FakeRoot::new();
    lead(|| root.cmd()).says('·', "no_gpu", "No NVIDIA GPU here", &[]);
    // In a container nothing was passed into.
    root.file(".dockerenv", "")
        .file("proc/1/cgroup", "0::/docker/0123456789abcdef\n");
    lead(|| root.cmd()).says(
        '·',
        "no_gpu",
        "No NVIDIA GPU visible in this container (docker)",
        &[],
    );
}

#[test]
fn gpus_nothing_ran_on_are_not_called_ready() {
    // Under --root nothing is loaded: the GPUs are seen, not tested.
    let root = FakeRoot::healthy(2);
    lead(|| root.cmd()).says(
        '·',
        "not_proven_on_device",
        "No blockers found, but not proven on-device (smoke test not run under --root): 2× H100 80GB HBM3, driver 580.95.05",
        &[],
    );
    // Skipped on a node where it could have run, with a warning counted.
    let node = GpuNode::new(2);
    lead(|| {
        let mut c = node.cmd();
        c.arg("--no-smoke").env("CUDA_LAUNCH_BLOCKING", "1");
        c
    })
    .says(
        '!',
        "not_proven_on_device",
        "No blockers found, but not proven on-device (smoke test skipped): 2× H100 80GB HBM3, driver 580.95.05 — 1 warning (GD012)",
        &["GD012"],
    );
}

#[test]
fn a_healthy_node_is_ready_and_its_smoke_test_takes_one_line() {
    let mut node = GpuNode::new(8);
    for d in &mut node.cuda().devices {
        d.total_memory = 24 << 20;
    }
    let l = lead(|| node.cmd());
    l.says(
        '✓',
        "ready",
        "Ready: 8× H100 80GB HBM3, driver 580.95.05",
        &[],
    );
    // The report's smoke test is one line: the section's own.
    let smoke: Vec<&str> = l
        .out
        .lines()
        .filter(|l| l.contains("GPU(s) passed") || l.contains("GPU 0"))
        .collect();
    assert_eq!(smoke.len(), 1, "{}", l.out);
    assert!(
        smoke[0].starts_with("✓ Smoke test ") && smoke[0].contains("8 of 8 GPU(s) passed"),
        "{}",
        smoke[0]
    );
    // The Markdown report: the run, one line for the eight GPUs, one for their 56 pairs.
    let md = run(node.cmd().args(["check", "--format", "markdown"])).stdout;
    let section: Vec<&str> = md
        .split("### Smoke test\n")
        .nth(1)
        .expect("a smoke section")
        .split("\n\n###")
        .next()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("| ✓") || l.starts_with("| ✗") || l.starts_with("| !"))
        .collect();
    assert_eq!(section.len(), 3, "{section:#?}");
    assert!(
        section[0].starts_with("| ✓ | smoke test |") && section[0].contains("8 of 8 GPU(s) passed"),
        "{}",
        section[0]
    );
    assert!(
        section[1].starts_with("| ✓ | GPU 0–7 |")
            && section[1]
                .contains("8× NVIDIA H100 80GB HBM3: context, kernels, matmul, memory passed"),
        "{}",
        section[1]
    );
    assert!(
        section[2].starts_with("| ✓ | GPU pairs | 56 ordered pair(s): 56 copied and verified |"),
        "{}",
        section[2]
    );
    // Verbose keeps every GPU's figures, and every pair's.
    let r = run(node.cmd().args(["check", "-v"]));
    for gpu in 0..8 {
        assert!(
            r.stdout.contains(&format!("GPU {gpu} matmul")),
            "{}",
            r.stdout
        );
    }
    assert!(r.stdout.contains("GPU 7 → 6 peer"), "{}", r.stdout);
}

#[test]
fn a_gpu_that_fails_keeps_its_lines_and_the_node_is_not_ready() {
    let mut node = GpuNode::new(8);
    for d in &mut node.cuda().devices {
        d.total_memory = 24 << 20;
    }
    node.cuda().device(3).matmul_wrong = true;
    let l = lead(|| node.cmd());
    // The other seven ran CUDA: a blocker, not a machine where CUDA cannot work.
    l.says('✗', "not_ready", "Not ready: 1 blocker (GD056)", &["GD056"]);
    // The report names only the failing step; the Markdown report folds the seven GPUs
    // that passed into one line.
    let md = run(node.cmd().args(["check", "--format", "markdown"])).stdout;
    assert!(
        md.contains(
            "| ✓ | GPU 0–2,4–7 | 7× NVIDIA H100 80GB HBM3: context, kernels, matmul, memory passed"
        ),
        "{md}"
    );
    assert!(!l.out.contains("GPU 0–2,4–7"), "{}", l.out);
    let wrong = l
        .out
        .lines()
        .find(|l| l.starts_with("  ✗ GPU 3 matmul"))
        .unwrap_or_else(|| panic!("GPU 3's matmul is not listed on its own:\n{}", l.out));
    assert!(wrong.contains("WRONG"), "{wrong}");
    // Its steps that passed share a line (each has its own with -v).
    assert!(
        md.lines()
            .any(|l| l.starts_with("| ✓ | GPU 3 |") && l.contains("context")),
        "{md}"
    );
}

#[test]
fn a_lone_gpu_that_computes_wrongly_ran_cuda_so_it_is_not_ready_not_cuda_fails() {
    let mut node = GpuNode::new(1);
    node.cuda().device(0).matmul_wrong = true;
    let l = lead(|| node.cmd());
    l.says('✗', "not_ready", "Not ready: 1 blocker (GD056)", &["GD056"]);
    // Every GPU refusing a context is CUDA failing.
    let mut node = GpuNode::new(2);
    for d in &mut node.cuda().devices {
        d.ctx_error = Some(999);
    }
    let l = lead(|| node.cmd());
    assert_eq!(l.json["kind"], "cuda_will_not_work", "{}", l.out);
}

#[test]
fn a_ready_node_names_its_torch_and_counts_its_warnings() {
    let node = GpuNode::new(2);
    let site = node.root.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    let l = lead(|| {
        let mut c = node.cmd();
        c.env("VIRTUAL_ENV", "/venv")
            .env("CUDA_LAUNCH_BLOCKING", "1");
        c
    });
    assert!(!site.is_empty());
    let warnings: Vec<String> = l.json["codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert!(warnings.contains(&"GD012".to_string()), "{:#}", l.json);
    let text = l.json["text"].as_str().unwrap();
    assert!(
        text.starts_with("Ready: 2× H100 80GB HBM3, driver 580.95.05, torch 2.8.0+cu128 — "),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "{} ({})",
            if warnings.len() == 1 {
                "1 warning".to_string()
            } else {
                format!("{} warnings", warnings.len())
            },
            warnings.join(", ")
        )),
        "{text}"
    );
    assert_eq!(l.human, format!("! {text}"));
}

// ---- --python-import in the human and Markdown reports --------------------------------

/// A venv whose `python3` prints `answer` as the live probe's answer.
fn live_python(answer: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let site = venv.join("lib/python3.12/site-packages");
    std::fs::create_dir_all(site.join("torch")).unwrap();
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(
        site.join("torch/version.py"),
        "__version__ = '2.8.0+cu128'\ncuda = '12.8'\nhip = None\n",
    )
    .unwrap();
    std::fs::create_dir_all(site.join("torch-2.8.0.dist-info")).unwrap();
    let py = venv.join("bin/python3");
    let answer = answer.replace("SITE", &site.display().to_string());
    std::fs::write(&py, format!("#!/bin/sh\ncat <<'EOF_'\n{answer}\nEOF_\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, py)
}

fn with_import(py: &std::path::Path, format: &str) -> Run {
    run(gpudoctor()
        .env("COLUMNS", "1000")
        .arg("--python")
        .arg(py)
        .args(["--python-import", "check", "--format", format]))
}

/// The report line whose label (after the mark) is `label`.
fn line_of<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| {
            let mut rest = l.trim_start().chars();
            rest.next();
            rest.as_str().trim_start().starts_with(label)
        })
        .unwrap_or_else(|| panic!("no `{label}` line:\n{out}"))
}

#[test]
fn what_import_torch_said_is_in_the_human_and_markdown_reports() {
    let (_d, py) = live_python(
        r#"{"python_version": "3.12.3", "torch": "2.8.0+cu128", "cuda": "12.8", "is_available": true, "device_count": 2, "cudnn": 91002, "warnings": ["Found GPU0 NVIDIA GeForce GTX 1080 which is of cuda capability 6.1.\nMinimum and Maximum cuda capability supported by this version of PyTorch is (7.0) - (12.0)"], "loaded": ["SITE/nvidia/cudnn/lib/libcudnn.so.9", "SITE/nvidia/cublas/lib/libcublas.so.12"]}"#,
    );
    let human = with_import(&py, "human").stdout;
    let import = line_of(&human, "import torch");
    assert!(
        import.contains(
            "Python 3.12.3: torch 2.8.0+cu128 (CUDA 12.8) · cuda.is_available() True, 2 device(s) · cuDNN 91002"
        ),
        "{import}"
    );
    let warned = line_of(&human, "torch warned");
    assert!(
        warned.contains("Found GPU0 NVIDIA GeForce GTX 1080 which is of cuda capability 6.1. Minimum and Maximum cuda capability supported by this version of PyTorch is (7.0) - (12.0)"),
        "{warned}"
    );
    let mapped = line_of(&human, "CUDA libraries mapped");
    assert!(
        mapped.contains("libcudnn.so.9, libcublas.so.12"),
        "{mapped}"
    );
    // Verbose: every mapped path in full.
    let verbose =
        run(gpudoctor()
            .arg("--python")
            .arg(&py)
            .args(["--python-import", "check", "-v"]))
        .stdout;
    assert!(
        verbose.contains("/nvidia/cudnn/lib/libcudnn.so.9"),
        "{verbose}"
    );

    let md = with_import(&py, "markdown").stdout;
    assert!(
        md.contains("| import torch | Python 3.12.3: torch 2.8.0+cu128 (CUDA 12.8) · cuda.is_available() True, 2 device(s) · cuDNN 91002 |"),
        "{md}"
    );
    assert!(md.contains("| torch warned | Found GPU0"), "{md}");
    assert!(
        md.contains("| CUDA libraries mapped | libcudnn.so.9, libcublas.so.12 |"),
        "{md}"
    );
}

#[test]
fn an_import_that_fails_is_marked_with_its_error() {
    let (_d, py) = live_python(
        r#"{"python_version": "3.12.3", "import_error": "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory", "warnings": [], "loaded": []}"#,
    );
    let r = with_import(&py, "human");
    assert_eq!(r.code, 1);
    let import = line_of(&r.stdout, "import torch");
    assert!(
        import.starts_with("  ✗ import torch")
            && import
                .contains("failed: ImportError: libcudnn.so.9: cannot open shared object file"),
        "{import}"
    );
    // The headline counts it (beside GD062 where the test machine is itself a container
    // without GPUs).
    let second = r.stdout.lines().nth(1).unwrap_or_default();
    assert!(
        second.contains("1 blocker (GD048)") || second.contains("2 blockers (GD048, GD062)"),
        "{}",
        r.stdout
    );
    let md = with_import(&py, "markdown").stdout;
    assert!(
        md.contains("| ✗ | import torch | Python 3.12.3: failed: ImportError: libcudnn.so.9"),
        "{md}"
    );
}

#[test]
fn is_available_false_and_no_torch_read_as_they_are() {
    let (_d, py) = live_python(
        r#"{"python_version": "3.12.3", "torch": "2.8.0+cu128", "cuda": "12.8", "is_available": false, "warnings": [], "loaded": []}"#,
    );
    let human = with_import(&py, "human").stdout;
    assert!(
        line_of(&human, "import torch").contains("cuda.is_available() False"),
        "{human}"
    );
    assert!(!human.contains("CUDA libraries mapped"), "{human}");
    let (_d, py) = live_python(
        r#"{"python_version": "3.12.3", "import_error": "ModuleNotFoundError: No module named 'torch'", "warnings": [], "loaded": []}"#,
    );
    let human = with_import(&py, "human").stdout;
    let import = line_of(&human, "import torch");
    // No torch is no failure: context, not a mark.
    assert!(
        import.starts_with("  · import torch") && import.contains("no torch"),
        "{import}"
    );
}
