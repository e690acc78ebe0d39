//! No text from the inspected system can turn a fix into another command. Reports of broken
//! machines (fake roots, the fake NVML and libcuda, saved reports) are taken apart: every
//! string of each snapshot in turn gets a payload that breaks out of any quoting (`$(…)`,
//! backticks, `;`, `|`, newlines, both kinds of quote, spaces), the snapshot is judged again as
//! `check --from` does, and every fix command that carries the payload, and the whole
//! `--fix-script`, run in a restricted bash in a throwaway directory whose PATH holds one
//! program, `canary`. The payload calls `canary` if it ever runs as code; it must never run.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::gpu_node::GpuNode;
use crate::util::*;
use serde_json::Value;

/// Runs `canary` from any quoting context: bare, inside '…', inside "…", a new line.
const PAYLOAD: &str = "x y';canary;'\";canary;\"$(canary)`canary`|canary&&canary\ncanary\n";

/// A throwaway directory with a PATH of one program, `canary`, that records every call.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let canary = bin.join("canary");
        std::fs::write(
            &canary,
            format!(
                "#!/bin/sh\necho ran >> {}\n",
                dir.path().join("canary-ran").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Sandbox { dir }
    }

    /// Runs `script` in `bash --restricted` (no redirections, no `cd`, no commands by path):
    /// every command but `canary` is not found and succeeds as a no-op, so each line runs.
    /// Whether `canary` ran.
    fn canary_ran(&self, script: &str) -> bool {
        let marker = self.dir.path().join("canary-ran");
        let _ = std::fs::remove_file(&marker);
        let body: String = script
            .lines()
            .filter(|l| l.trim() != "set -euo pipefail")
            .map(|l| format!("{l}\n"))
            .collect();
        let mut child = Command::new(which::which("bash").expect("bash on PATH"))
            .args(["--restricted", "--noprofile", "--norc", "-s"])
            .env_clear()
            .env("PATH", self.dir.path().join("bin"))
            .env("HOME", self.dir.path().join("home"))
            .current_dir(self.dir.path().join("home"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("bash");
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"set +euo pipefail\ncommand_not_found_handle() { return 0; }\n")
            .unwrap();
        stdin.write_all(body.as_bytes()).unwrap();
        drop(stdin);
        child.wait().unwrap();
        marker.exists()
    }
}

/// Every string of `v`, as a JSON pointer.
fn string_leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::String(_) => out.push(at),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                string_leaves(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                let key = k.replace('~', "~0").replace('/', "~1");
                string_leaves(x, format!("{at}/{key}"), out);
            }
        }
        _ => {}
    }
}

/// A report's snapshot (or a bare snapshot) with the payload added to every string in turn;
/// each variant with the fix commands it got and its fix script.
struct Outcome {
    /// Codes whose fix commands carried the payload (quoted): the fields reached a command.
    reached: BTreeSet<String>,
    /// Codes with fix commands in the unaltered snapshots.
    with_commands: BTreeSet<String>,
    /// (pointer, code, command) of every command or script in which `canary` ran.
    ran: Vec<String>,
    variants: usize,
}

fn attack(name: &str, report: &Value, sandbox: &Sandbox, outcome: &mut Outcome) {
    let snapshot = report.get("snapshot").unwrap_or(report);
    let (baseline, _) =
        gpudoctor::fuzzing::fix_commands(&serde_json::to_vec(snapshot).unwrap()).unwrap();
    outcome
        .with_commands
        .extend(baseline.into_iter().map(|(code, _)| code));
    let mut leaves = Vec::new();
    string_leaves(snapshot, String::new(), &mut leaves);
    for pointer in leaves {
        let mut hostile = snapshot.clone();
        let Some(Value::String(s)) = hostile.pointer_mut(&pointer) else {
            unreachable!()
        };
        s.push_str(PAYLOAD);
        let bytes = serde_json::to_vec(&hostile).unwrap();
        // A value the reader refuses (a version that no longer parses) is that reader's
        // error, not a command.
        let Ok((commands, script)) = gpudoctor::fuzzing::fix_commands(&bytes) else {
            continue;
        };
        outcome.variants += 1;
        let carrying: Vec<&(String, String)> = commands
            .iter()
            .filter(|(_, c)| c.contains("canary"))
            .collect();
        if carrying.is_empty() {
            continue;
        }
        for (code, command) in &carrying {
            outcome.reached.insert(code.clone());
            if sandbox.canary_ran(command) {
                outcome
                    .ran
                    .push(format!("{name} {pointer}: {code}: {command:?}"));
            }
        }
        if sandbox.canary_ran(&script) {
            outcome
                .ran
                .push(format!("{name} {pointer}: the fix script:\n{script}"));
        }
    }
}

fn report_of(cmd: &mut assert_cmd::Command) -> Value {
    let (_, report) = json(cmd);
    report
}

/// Broken machines whose findings carry commands built from what the probes read.
fn broken_machines() -> Vec<(&'static str, Value)> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for seed in ["host-with-torch-venv", "debian-cuda-tree", "bare-snapshot"] {
        // Reports written by `gpudoctor check --format json` (the fuzz seeds of `saved_report`
        // too; fuzz/ is not part of the packaged crate).
        let path = repo.join(format!("tests/fixtures/reports/{seed}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        out.push((seed, serde_json::from_str::<Value>(&text).unwrap()));
    }
    // What `--python-import` would have added: an interpreter that imports another torch
    // than the environment's files (GD049), and one whose import timed out (GD048).
    let torch_venv = out[0].1.clone();
    let mut other_torch = torch_venv.clone();
    other_torch["snapshot"]["python_live"] = serde_json::json!({
        "python": "/root/.cache/gpudoctor/torch-venv/bin/python",
        "result": {"status": "ok", "answer": {"torch": "2.4.1+cu121", "cuda": "12.1",
            "is_available": true, "device_count": 1}}
    });
    out.push(("an interpreter importing another torch", other_torch));
    let mut slow_import = torch_venv;
    slow_import["snapshot"]["python_live"] = serde_json::json!({
        "python": "/root/.cache/gpudoctor/torch-venv/bin/python",
        "result": {"status": "timed_out", "seconds": 20.0}
    });
    out.push(("an import that timed out", slow_import));

    let root = FakeRoot::new();
    root.file(
        "etc/os-release",
        "NAME=\"CentOS Linux\"\nID=\"centos\"\nVERSION_ID=\"7\"\n",
    );
    root.modules(&["nouveau", "drm_kms_helper"]);
    root.pci("0000:3b:00.0", "1db6", "030200", Some("nouveau"));
    root.pci("0000:86:00.0", "1db6", "030200", Some("vfio-pci"));
    out.push(("nouveau and vfio", report_of(root.cmd().arg("check"))));

    let root = FakeRoot::new();
    root.gpu("0000:01:00.0", None);
    out.push(("no nvidia module", report_of(root.cmd().arg("check"))));

    let root = FakeRoot::healthy(2);
    root.modules(&["nvidia_modeset", "nvidia"])
        .remove("dev/nvidia-uvm")
        .remove("dev/nvidia-uvm-tools")
        .remove("dev/nvidia1");
    out.push(("uvm and a node missing", report_of(root.cmd().arg("check"))));

    let root = FakeRoot::healthy(1);
    for n in ["nvidiactl", "nvidia0", "nvidia-uvm", "nvidia-uvm-tools"] {
        root.chmod(&format!("dev/{n}"), 0o660);
    }
    out.push((
        "nodes the user may not open",
        report_of(root.cmd().args(["check", "--user", ALICE])),
    ));

    let root = FakeRoot::healthy(1);
    root.toolkit("usr/local/cuda-12.4", "12.4.131");
    root.toolkit("usr/local/cuda-11.8", "11.8.89");
    root.link("cuda-11.8", "usr/local/cuda");
    out.push((
        "variables left set",
        report_of(
            root.cmd()
                .arg("check")
                .env("CUDA_LAUNCH_BLOCKING", "1")
                .env(
                    "CUDA_INJECTION64_PATH",
                    "/opt/nsight/libToolsInjection64.so",
                )
                .env("CUDA_VISIBLE_DEVICES", "0, 3")
                .env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments=True")
                .env("CUDA_HOME", "/opt/cuda-gone")
                .env("NCCL_P2P_LEVEL", "sys")
                .env("LD_LIBRARY_PATH", "/usr/local/cuda-12.4/lib64/stubs"),
        ),
    ));

    let root = FakeRoot::new();
    root.file("run/.containerenv", "engine=\"podman-4.9.3\"\n");
    out.push((
        "a container without GPUs",
        report_of(root.cmd().arg("check")),
    ));

    let mut node = GpuNode::new(2);
    node.cuda().device(1).bit_flips = 3;
    node.cuda().device(0).matmul_wrong = true;
    out.push((
        "wrong results on the GPUs",
        report_of(node.cmd().arg("check")),
    ));

    let mut node = GpuNode::new(1);
    if let Some(p) = node.nvml.gpu(0).pcie.as_mut() {
        (p.gen, p.max_gen, p.width, p.max_width) = (1, 1, 4, 4);
    }
    node.cuda().device(0).h2d_gbps = Some(0.3);
    out.push((
        "a slow link",
        report_of(node.cmd().args(["check", "--transfer-size", "32"])),
    ));
    out
}

#[test]
fn the_sandbox_catches_a_command_that_runs_text_as_code() {
    let sandbox = Sandbox::new();
    assert!(sandbox.canary_ran("sudo modprobe nvidia\necho x$(canary)y"));
    assert!(sandbox.canary_ran(&format!("ls -l {PAYLOAD}")));
    assert!(sandbox.canary_ran(&format!("echo '{PAYLOAD}'")));
    assert!(sandbox.canary_ran(&format!("echo \"{PAYLOAD}\"")));
    // Quoted as gpudoctor quotes, and commented out: nothing runs.
    let quoted = format!("'{}'", PAYLOAD.replace('\'', "'\\''"));
    assert!(!sandbox.canary_ran(&format!("set -euo pipefail\nsudo ls -l {quoted}")));
    assert!(!sandbox.canary_ran("# canary\nfalse\necho canary > /tmp/x"));
}

#[test]
fn no_string_from_a_snapshot_runs_as_a_command_in_any_fix() {
    let sandbox = Sandbox::new();
    let mut outcome = Outcome {
        reached: BTreeSet::new(),
        with_commands: BTreeSet::new(),
        ran: Vec::new(),
        variants: 0,
    };
    for (name, report) in broken_machines() {
        attack(name, &report, &sandbox, &mut outcome);
    }
    assert!(
        outcome.ran.is_empty(),
        "text from the snapshot ran as a command:\n{}",
        outcome.ran.join("\n")
    );
    // The payload reached the commands of these rules (each quoted, none ran): the
    // interpreter path (GD048, GD049), the bus id (GD058, GD004), the user (GD008), toolkit
    // and library paths (GD021, GD024), torch's pins (GD044).
    eprintln!(
        "{} variants; commands from {:?}; the payload reached those of {:?}",
        outcome.variants, outcome.with_commands, outcome.reached
    );
    for code in [
        "GD004", "GD008", "GD021", "GD024", "GD044", "GD048", "GD049", "GD058",
    ] {
        assert!(
            outcome.reached.contains(code),
            "no snapshot string reached {code}'s commands: {:?}",
            outcome.reached
        );
    }
}
