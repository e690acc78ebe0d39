//! `gpudoctor mcp` driven by the official MCP client (the `mcp` package from PyPI,
//! `.ci/fetch-mcp-client`) over stdio, as an assistant drives it: the handshake (the client's
//! default mode probes `server/discover` first and falls back), every tool on a healthy and a
//! broken fake node, each result checked against what the CLI prints for the same arguments;
//! and malformed input written straight to the server's stdin.
//!
//! The client runs when GPUDOCTOR_MCP_CLIENT names the venv's python; `.ci/run` sets it and
//! GPUDOCTOR_REQUIRE_MCP=1, under which a missing client fails the test.

use crate::util;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::fake_cuda::{fake_cuda_lib, FAKE_CUDA_ENV};
use crate::util::fake_nvml::{fake_nvml_lib, FAKE_NVML_ENV};
use crate::util::gpu_node::GpuNode;
use crate::util::FakeRoot;
use serde_json::{json, Value};

fn client_python() -> Option<PathBuf> {
    match std::env::var_os("GPUDOCTOR_MCP_CLIENT") {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            assert!(
                std::env::var_os("GPUDOCTOR_REQUIRE_MCP").is_none(),
                "GPUDOCTOR_REQUIRE_MCP is set but GPUDOCTOR_MCP_CLIENT is not (.ci/fetch-mcp-client)"
            );
            crate::util::skip(format_args!("GPUDOCTOR_MCP_CLIENT unset: run .ci/fetch-mcp-client DIR and export DIR/bin/python"));
            None
        }
    }
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("gpudoctor")
}

/// Keys whose values differ between two runs of the same command.
fn stable(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| {
                    !["time", "elapsed", "duration", "took", "_ms", "_us"]
                        .iter()
                        .any(|w| k.contains(w))
                })
                .map(|(k, v)| (k.clone(), stable(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(stable).collect()),
        other => other.clone(),
    }
}

/// What a check report says: its findings, headline, summary and checks.
fn verdicts(report: &Value) -> Value {
    let findings: Vec<Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| json!([f["code"], f["severity"], f["title"], f["fix"]]))
        .collect();
    json!({"findings": findings, "headline": report["headline"], "summary": report["summary"],
        "checks": report["checks"]})
}

/// The JSON pointer of the first place `a` and `b` differ, with both values.
fn first_difference(a: &Value, b: &Value, at: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                if let Some(d) = first_difference(p, q, format!("{at}/{k}")) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} vs {b}")),
    }
}

/// The CLI's own JSON for `args` in the same environment.
fn cli_json(args: &[String], env: &[(String, String)]) -> Value {
    let out = Command::new(bin())
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

struct Node {
    name: &'static str,
    root: PathBuf,
    env: Vec<(String, String)>,
    _keep: Box<dyn std::any::Any>,
}

fn nodes() -> Vec<Node> {
    let healthy = GpuNode::new(2);
    let nvml_cfg = healthy.nvml.write(&healthy.dir.path().join("nvml"));
    let cuda_cfg = healthy
        .cuda
        .as_ref()
        .unwrap()
        .write(&healthy.dir.path().join("cuda"));
    let healthy_env = vec![
        (FAKE_NVML_ENV.to_string(), nvml_cfg.display().to_string()),
        (FAKE_CUDA_ENV.to_string(), cuda_cfg.display().to_string()),
    ];
    let broken = FakeRoot::new();
    broken.modules(&["nouveau", "drm_kms_helper"]);
    broken.pci("0000:3b:00.0", "1db6", "030200", Some("nouveau"));
    vec![
        Node {
            name: "healthy",
            root: healthy.root.path().to_path_buf(),
            env: healthy_env,
            _keep: Box::new(healthy),
        },
        Node {
            name: "broken",
            root: broken.path().to_path_buf(),
            env: vec![("CUDA_LAUNCH_BLOCKING".into(), "1".into())],
            _keep: Box::new(broken),
        },
    ]
}

/// Runs the client with these calls against `gpudoctor mcp` in `env`.
fn drive(
    python: &PathBuf,
    env: &[(String, String)],
    mode: &str,
    calls: &[(String, Value)],
) -> Value {
    let mut server_env: serde_json::Map<String, Value> = env
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    server_env.insert("NO_COLOR".into(), "1".into());
    server_env.insert("PATH".into(), "/usr/bin:/bin".into());
    let request = json!({
        "command": bin(),
        "args": ["mcp"],
        "env": server_env,
        "mode": mode,
        "calls": calls.iter().map(|(n, a)| json!([n, a])).collect::<Vec<_>>(),
    });
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/util/mcp_client.py");
    let out = Command::new(python)
        .arg(script)
        .arg(request.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_official_client_calls_every_tool_and_gets_what_the_cli_prints() {
    let Some(python) = client_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let nodes = nodes();
    // Two saved reports for `diff`.
    let mut saved = Vec::new();
    for n in &nodes {
        let args = vec![
            "check".to_string(),
            "--format".into(),
            "json".into(),
            "--no-smoke".into(),
            "--root".into(),
            n.root.display().to_string(),
        ];
        let path = dir.path().join(format!("{}.json", n.name));
        std::fs::write(&path, cli_json(&args, &n.env).to_string()).unwrap();
        saved.push(path.display().to_string());
    }
    let shared = dir.path().join("libshared.so.1");
    std::fs::write(
        &shared,
        util::elf::shared_object("libshared.so.1", &["libcudart.so.12"]),
    )
    .unwrap();

    for (i, node) in nodes.iter().enumerate() {
        let root = node.root.display().to_string();
        let nvml = fake_nvml_lib().display().to_string();
        let cuda = fake_cuda_lib().display().to_string();
        let calls: Vec<(String, Value, Vec<String>)> = vec![
            (
                "check".into(),
                json!({"root": root, "nvml_lib": nvml, "cuda_lib": cuda}),
                [
                    "check",
                    "--format",
                    "json",
                    "--no-smoke",
                    "--root",
                    &root,
                    "--nvml-lib",
                    &nvml,
                    "--cuda-lib",
                    &cuda,
                ]
                .map(String::from)
                .to_vec(),
            ),
            (
                "check".into(),
                json!({"root": root, "focus": "driver"}),
                Vec::new(),
            ),
            (
                "explain".into(),
                json!({"code": "GD012"}),
                ["explain", "--format", "json", "GD012"]
                    .map(String::from)
                    .to_vec(),
            ),
            (
                "recommend".into(),
                json!({"packages": ["torch"], "driver": "570.195.03", "gpu": "H100", "python": "3.12"}),
                [
                    "recommend",
                    "--format",
                    "json",
                    "--driver",
                    "570.195.03",
                    "--gpu",
                    "H100",
                    "--python",
                    "3.12",
                    "torch",
                ]
                .map(String::from)
                .to_vec(),
            ),
            (
                "libs".into(),
                json!({"files": [shared.display().to_string()]}),
                vec![
                    "libs".into(),
                    "--format".into(),
                    "json".into(),
                    shared.display().to_string(),
                ],
            ),
            (
                "devices".into(),
                json!({"nvml_lib": nvml, "detail": true}),
                [
                    "devices",
                    "--format",
                    "json",
                    "--detail",
                    "--nvml-lib",
                    &nvml,
                ]
                .map(String::from)
                .to_vec(),
            ),
            (
                "diff".into(),
                json!({"old": saved[0], "new": saved[1]}),
                vec![
                    "diff".into(),
                    "--format".into(),
                    "json".into(),
                    saved[0].clone(),
                    saved[1].clone(),
                ],
            ),
        ];
        let mode = if i == 0 { "auto" } else { "legacy" };
        let got = drive(
            &python,
            &node.env,
            mode,
            &calls
                .iter()
                .map(|(n, a, _)| (n.clone(), a.clone()))
                .collect::<Vec<_>>(),
        );
        assert_eq!(got["protocol"], "2025-11-25", "{}: {got}", node.name);
        assert_eq!(
            got["tools"],
            json!(["check", "devices", "diff", "explain", "libs", "recommend"])
        );
        assert_eq!(got["resources"], json!(["gpudoctor://codes"]));
        assert_eq!(
            got["codes"].as_array().unwrap().len(),
            gpudoctor::codes::CODES.len()
        );
        for ((tool, _, cli), result) in calls.iter().zip(got["results"].as_array().unwrap()) {
            let what = format!("{} {tool} {cli:?}", node.name);
            assert_eq!(result["is_error"], false, "{what}: {result}");
            let texts = result["texts"].as_array().unwrap();
            assert!(
                texts[0].as_str().unwrap().starts_with("`gpudoctor "),
                "{what}"
            );
            if cli.is_empty() {
                continue;
            }
            let want = cli_json(cli, &node.env);
            let (got, want) = if tool == "check" {
                // The findings and verdicts; the snapshot also holds the environment, which the
                // client's spawn sets (HOME, USER, SHELL) and this test's does not.
                (verdicts(&result["structured"]), verdicts(&want))
            } else {
                (stable(&result["structured"]), stable(&want))
            };
            if let Some(at) = first_difference(&got, &want, String::new()) {
                panic!("{what}: the MCP result differs from the CLI's JSON at {at}");
            }
        }
        // The focused check reports only the driver's codes.
        let focused = &got["results"][1]["structured"]["findings"];
        for f in focused.as_array().unwrap() {
            let code = f["code"].as_str().unwrap();
            assert!(
                code != "GD012",
                "{}: focus driver reported {code}",
                node.name
            );
        }
        if node.name == "broken" {
            let summary = got["results"][0]["texts"][0].as_str().unwrap();
            assert!(summary.contains("error GD003"), "{summary}");
            assert!(summary.contains("fix: `"), "{summary}");
        }
    }
}

/// A server answering on stdin/stdout, written to directly.
struct Raw {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn new() -> Raw {
        let mut child = Command::new(bin())
            .arg("mcp")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Raw { child, out }
    }
    fn send(&mut self, bytes: &[u8]) {
        self.child.stdin.as_mut().unwrap().write_all(bytes).unwrap();
    }
    fn answer(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }
}

#[test]
fn malformed_input_gets_json_rpc_errors_and_never_stops_the_server() {
    let mut s = Raw::new();
    let t = Instant::now();
    for (input, code) in [
        (&b"garbage\n"[..], -32700),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1}\n", -32600),
        (b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n", -32600),
        (b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such\"}\n", -32601),
        (b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"check\",\"arguments\":{\"root\":7}}}\n", -32602),
        (b"\xff\xfe{\x00\n", -32700),
    ] {
        s.send(input);
        let a = s.answer();
        assert_eq!(a["error"]["code"], code, "{}: {a}", String::from_utf8_lossy(input));
    }
    // A line of 2 MiB: refused, and the next message is read.
    let mut big = vec![b'x'; 2 << 20];
    big.push(b'\n');
    s.send(&big);
    assert_eq!(s.answer()["error"]["code"], -32600);
    // A notification gets no answer; the ping after it does.
    s.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    s.send(b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n");
    let a = s.answer();
    assert_eq!(a["id"], "p");
    assert_eq!(a["result"], json!({}));
    // A tool that fails is a result with isError, not a crash.
    s.send(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"diff\",\"arguments\":{\"old\":\"/nonexistent/a.json\",\"new\":\"/nonexistent/b.json\"}}}\n");
    let a = s.answer();
    assert_eq!(a["result"]["isError"], true, "{a}");
    // End of input ends the server with 0.
    drop(s.child.stdin.take());
    let status = s.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(t.elapsed() < Duration::from_secs(20));
}
