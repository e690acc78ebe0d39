//! `gpudoctor mcp`: a Model Context Protocol server over stdio, so that an AI assistant asks
//! gpudoctor instead of guessing from `nvidia-smi` and `pip list`.
//!
//! The transport is MCP's stdio one: one JSON-RPC 2.0 message per line on stdin, one per line
//! on stdout, nothing else on stdout. The protocol is the initialize handshake of the
//! 2024-11-05 to 2025-11-25 revisions (`server/discover`, the 2026 stateless probe, is answered
//! "method not found", which makes clients fall back to it). Each tool runs this same binary
//! as a child (`check --format json …`) under a deadline and returns what the CLI prints: the
//! JSON, and a short summary. Read-only by construction: no tool runs a fix; `check`'s fix
//! script is returned as text.
//!
//! Hand-written rather than the official Rust SDK (`rmcp`): that needs Rust 1.88 and tokio,
//! past this crate's minimum Rust (1.85) and its ~2 ms start; this server is a loop over
//! `serde_json` (docs/mcp.md measures both costs).

use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::settings::Settings;
use super::CliError;

/// Revisions whose initialize handshake this server speaks, oldest first.
const PROTOCOL_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// A request line longer than this is refused (and the rest of it skipped).
const MAX_LINE: usize = 1 << 20;
/// What one tool may print before it is cut off.
const MAX_OUTPUT: u64 = 32 << 20;
/// How long one tool may run (a smoke test on many GPUs takes the longest).
const TOOL_DEADLINE: Duration = Duration::from_secs(300);

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// Focus areas of `check`: the codes each reports.
const FOCUS: &[(&str, &str)] = &[
    (
        "driver",
        "GD001,GD002,GD003,GD004,GD005,GD006,GD007,GD008,GD016,GD017,GD018,GD029,GD030,GD031,GD032,GD033,GD034,GD035,GD036,GD037,GD038,GD039,GD040",
    ),
    (
        "torch",
        "GD009,GD010,GD011,GD012,GD013,GD014,GD015,GD041,GD042,GD043,GD044,GD045,GD046,GD047,GD048,GD049,GD050,GD052,GD060,GD061,GD078",
    ),
    (
        "toolkit",
        "GD017,GD019,GD020,GD021,GD022,GD023,GD024,GD025,GD026,GD027,GD028",
    ),
    (
        "containers",
        "GD051,GD062,GD063,GD064,GD065,GD066,GD067,GD068,GD069,GD070,GD071",
    ),
    (
        "multi-gpu",
        "GD034,GD036,GD072,GD073,GD074,GD075,GD076,GD077,GD078,GD079",
    ),
];

pub(super) fn mcp(_g: &Settings) -> Result<u8, CliError> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    loop {
        let line = match read_line(&mut input) {
            Ok(Some(Line::Text(l))) => l,
            Ok(Some(Line::TooLong)) => {
                send(
                    &mut out,
                    &error(
                        Value::Null,
                        INVALID_REQUEST,
                        &format!("a message longer than {MAX_LINE} bytes"),
                    ),
                )?;
                continue;
            }
            Ok(None) => return Ok(0),
            Err(e) => return Err(CliError::Internal(format!("mcp: reading stdin: {e}"))),
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = handle(&line) {
            send(&mut out, &reply)?;
        }
    }
}

enum Line {
    Text(String),
    TooLong,
}

/// One line of at most MAX_LINE bytes; a longer one is read to its end and dropped.
fn read_line(r: &mut impl BufRead) -> std::io::Result<Option<Line>> {
    let mut buf = Vec::new();
    let n = r
        .by_ref()
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE && !buf.ends_with(b"\n") {
        let mut rest = Vec::new();
        loop {
            rest.clear();
            let k = r
                .by_ref()
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut rest)?;
            if k == 0 || rest.ends_with(b"\n") {
                break;
            }
        }
        return Ok(Some(Line::TooLong));
    }
    Ok(Some(Line::Text(String::from_utf8_lossy(&buf).into_owned())))
}

fn send(out: &mut impl Write, message: &Value) -> Result<(), CliError> {
    let mut text = message.to_string();
    text.push('\n');
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Internal(format!("mcp: writing stdout: {e}")))
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn reply(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// What runs a tool: this binary with the CLI arguments (exit code, stdout, stderr).
pub type Runner = dyn Fn(&[String]) -> Result<(Option<i32>, String, String), String>;

/// The answer to one message, or None for a notification or a response.
pub fn handle(line: &str) -> Option<Value> {
    handle_with(line, &run_self)
}

/// `handle` with another way to run the tools (the fuzz target's runs none).
pub fn handle_with(line: &str, run: &Runner) -> Option<Value> {
    let message: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Some(error(Value::Null, PARSE_ERROR, &format!("not JSON: {e}"))),
    };
    let Some(obj) = message.as_object() else {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "a message is one JSON object (batches are not part of MCP)",
        ));
    };
    let id = obj.get("id").cloned();
    let Some(method) = obj.get("method") else {
        // A response to a request of ours: this server sends none.
        return match id {
            Some(_) if obj.contains_key("result") || obj.contains_key("error") => None,
            _ => Some(error(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "no method",
            )),
        };
    };
    let Some(method) = method.as_str() else {
        return Some(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "method is not a string",
        ));
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return id.map(|id| error(id, INVALID_REQUEST, "jsonrpc must be \"2.0\""));
    }
    let Some(id) = id else {
        // Notifications (initialized, cancelled, …) need no answer.
        return None;
    };
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "id must be a string or an integer",
        ));
    }
    let params = obj.get("params").cloned().unwrap_or(json!({}));
    if !params.is_object() {
        return Some(error(id, INVALID_PARAMS, "params must be an object"));
    }
    Some(match method {
        "initialize" => reply(id, initialize(&params)),
        "ping" => reply(id, json!({})),
        "tools/list" => reply(id, json!({"tools": tools()})),
        "tools/call" => match call(&params, run) {
            Ok(result) => reply(id, result),
            Err(message) => error(id, INVALID_PARAMS, &message),
        },
        "resources/list" => reply(
            id,
            json!({"resources": [{
                "uri": CODES_URI,
                "name": "finding-codes",
                "title": "gpudoctor's finding codes",
                "description": "Every finding code gpudoctor reports: its title, severities and explanation",
                "mimeType": "application/json",
            }]}),
        ),
        "resources/read" => match params.get("uri").and_then(Value::as_str) {
            Some(CODES_URI) => reply(
                id,
                json!({"contents": [{"uri": CODES_URI, "mimeType": "application/json", "text": codes_json()}]}),
            ),
            Some(other) => error(id, INVALID_PARAMS, &format!("no resource {other:?}")),
            None => error(id, INVALID_PARAMS, "resources/read needs a uri"),
        },
        other => error(id, METHOD_NOT_FOUND, &format!("method not found: {other}")),
    })
}

const CODES_URI: &str = "gpudoctor://codes";

fn codes_json() -> String {
    let codes: Vec<Value> = crate::codes::CODES
        .iter()
        .map(|c| {
            json!({
                "code": c.code,
                "title": c.title,
                "severities": c.severities.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "explanation": c.explanation,
            })
        })
        .collect();
    Value::Array(codes).to_string()
}

fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.len() - 1]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}, "resources": {"listChanged": false}},
        "serverInfo": {"name": "gpudoctor", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "gpudoctor diagnoses NVIDIA GPU / CUDA / PyTorch environments on this machine. Call `check` first: every finding has evidence and the command that fixes it. `explain` a code for the why; `recommend` for what to install. No tool changes the machine.",
    })
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

fn tools() -> Vec<Value> {
    let focus: Vec<&str> = FOCUS.iter().map(|(f, _)| *f).collect();
    let read_only = json!({"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false});
    vec![
        json!({
            "name": "check",
            "title": "Check this machine",
            "description": "Run gpudoctor's check: kernel module, device nodes, NVML, CUDA toolkits, the libraries the loader picks, PyTorch and its wheels, containers, multi-GPU topology. Returns the JSON report (findings with severity, evidence and fix commands) and a summary. Nothing is changed; `fix_script` returns the fixes as a bash script for a person to review.",
            "inputSchema": {"type": "object", "properties": {
                "focus": {"type": "string", "enum": focus, "description": "Report only the findings of one area"},
                "python": string("The Python interpreter (or environment) whose torch and libraries to inspect"),
                "root": string("Inspect a filesystem tree (a container image's root, a chroot) instead of this system"),
                "user": string("Judge device-node permissions for this user"),
                "smoke": boolean("Also run the on-device smoke test (matmul, memory, bandwidth); off by default"),
                "python_import": boolean("Also import torch in the interpreter and ask it (slower)"),
                "fix_script": boolean("Return the fixes as a bash script (text) instead of the JSON report"),
                "nvml_lib": string("The libnvidia-ml.so to load"),
                "cuda_lib": string("The libcuda.so to load"),
            }, "additionalProperties": false},
            "annotations": read_only,
        }),
        json!({
            "name": "explain",
            "title": "Explain a finding code",
            "description": "What a finding code (GD012, gd012 or 12) means, why it matters and how it is judged; without a code, every code with its title.",
            "inputSchema": {"type": "object", "properties": {"code": string("The finding code")}, "additionalProperties": false},
            "annotations": read_only,
        }),
        json!({
            "name": "recommend",
            "title": "What to install",
            "description": "The exact install command for this machine (or one described by driver/gpu/python/platform/cuda): torch with torchvision/torchaudio, jax, tensorflow, onnxruntime-gpu, vllm, flash-attn, xformers, bitsandbytes.",
            "inputSchema": {"type": "object", "properties": {
                "packages": {"type": "array", "items": {"type": "string"}, "description": "Packages to install together (default torch)"},
                "driver": string("An NVIDIA driver version, e.g. 570.195.03"),
                "gpu": string("A GPU model or compute capability, e.g. H100 or 9.0"),
                "python": string("A Python version (3.12) or interpreter path"),
                "platform": string("x86_64 or aarch64"),
                "cuda": string("A CUDA version the build must use"),
            }, "additionalProperties": false},
            "annotations": read_only,
        }),
        json!({
            "name": "libs",
            "title": "What the loader binds",
            "description": "For each CUDA-using native module of the Python environment (or the given files): the library the loader binds for each dependency and whether the module will load.",
            "inputSchema": {"type": "object", "properties": {
                "python": string("The Python interpreter whose environment to inspect"),
                "files": {"type": "array", "items": {"type": "string"}, "description": "Shared objects to examine instead"},
            }, "additionalProperties": false},
            "annotations": read_only,
        }),
        json!({
            "name": "devices",
            "title": "The GPUs",
            "description": "The GPUs as NVML sees them: model, driver, memory, ECC, clocks, PCIe link, MIG, processes; with topo, how every pair connects.",
            "inputSchema": {"type": "object", "properties": {
                "detail": boolean("Everything about each GPU"),
                "topo": boolean("How the GPUs connect (NVLink, PCIe switches, NUMA)"),
                "nvml_lib": string("The libnvidia-ml.so to load"),
            }, "additionalProperties": false},
            "annotations": read_only,
        }),
        json!({
            "name": "diff",
            "title": "Compare two reports",
            "description": "The facts and findings that differ between two reports saved with `gpudoctor check --format json` (a working machine and a broken one, before and after a change).",
            "inputSchema": {"type": "object", "properties": {
                "old": string("The path of the older (or working) report"),
                "new": string("The path of the newer (or broken) report"),
            }, "required": ["old", "new"], "additionalProperties": false},
            "annotations": read_only,
        }),
    ]
}

/// The CLI arguments a tool call stands for.
fn arguments(name: &str, args: &Map<String, Value>) -> Result<Vec<String>, String> {
    let known: &[&str] = match name {
        "check" => &[
            "focus",
            "python",
            "root",
            "user",
            "smoke",
            "python_import",
            "fix_script",
            "nvml_lib",
            "cuda_lib",
        ],
        "explain" => &["code"],
        "recommend" => &["packages", "driver", "gpu", "python", "platform", "cuda"],
        "libs" => &["python", "files"],
        "devices" => &["detail", "topo", "nvml_lib"],
        "diff" => &["old", "new"],
        other => return Err(format!("no tool {other:?}")),
    };
    if let Some(k) = args.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!("{name} takes no argument {k:?}"));
    }
    let text = |k: &str| -> Result<Option<String>, String> {
        match args.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.starts_with('-') => {
                Err(format!("{k}: a value may not start with '-'"))
            }
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{k} must be a string")),
        }
    };
    let flag = |k: &str| -> Result<bool, String> {
        match args.get(k) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("{k} must be true or false")),
        }
    };
    let list = |k: &str| -> Result<Vec<String>, String> {
        match args.get(k) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v.as_str() {
                    Some(s) if !s.starts_with('-') => Ok(s.to_string()),
                    Some(_) => Err(format!("{k}: a value may not start with '-'")),
                    None => Err(format!("{k} must be a list of strings")),
                })
                .collect(),
            Some(_) => Err(format!("{k} must be a list of strings")),
        }
    };
    let mut cli: Vec<String> = vec![name.to_string()];
    let option = |cli: &mut Vec<String>, k: &str, flag_name: &str| -> Result<(), String> {
        if let Some(v) = text(k)? {
            cli.push(flag_name.to_string());
            cli.push(v);
        }
        Ok(())
    };
    match name {
        "check" => {
            if flag("fix_script")? {
                cli.push("--fix-script".into());
            } else {
                cli.extend(["--format".into(), "json".into()]);
            }
            if !flag("smoke")? {
                cli.push("--no-smoke".into());
            }
            if flag("python_import")? {
                cli.push("--python-import".into());
            }
            for (k, f) in [
                ("python", "--python"),
                ("root", "--root"),
                ("user", "--user"),
                ("nvml_lib", "--nvml-lib"),
                ("cuda_lib", "--cuda-lib"),
            ] {
                option(&mut cli, k, f)?;
            }
            if let Some(focus) = text("focus")? {
                let codes = FOCUS
                    .iter()
                    .find(|(f, _)| *f == focus)
                    .ok_or_else(|| format!("focus must be one of the listed areas, not {focus:?}"))?
                    .1;
                cli.extend(["--only".into(), codes.into()]);
            }
        }
        "explain" => {
            cli.extend(["--format".into(), "json".into()]);
            match text("code")? {
                Some(code) => cli.push(code),
                None => cli.push("--list".into()),
            }
        }
        "recommend" => {
            cli.extend(["--format".into(), "json".into()]);
            for (k, f) in [
                ("driver", "--driver"),
                ("gpu", "--gpu"),
                ("python", "--python"),
                ("platform", "--platform"),
                ("cuda", "--cuda"),
            ] {
                option(&mut cli, k, f)?;
            }
            cli.extend(list("packages")?);
        }
        "libs" => {
            cli.extend(["--format".into(), "json".into()]);
            option(&mut cli, "python", "--python")?;
            cli.extend(list("files")?);
        }
        "devices" => {
            cli.extend(["--format".into(), "json".into()]);
            if flag("detail")? {
                cli.push("--detail".into());
            }
            if flag("topo")? {
                cli.push("--topo".into());
            }
            option(&mut cli, "nvml_lib", "--nvml-lib")?;
        }
        "diff" => {
            cli.extend(["--format".into(), "json".into()]);
            let old = text("old")?.ok_or("diff needs old")?;
            let new = text("new")?.ok_or("diff needs new")?;
            cli.extend(["--".into(), old, new]);
        }
        _ => unreachable!("checked above"),
    }
    Ok(cli)
}

/// `tools/call`: runs the tool; a run that fails (a usage error, a crash) is a tool result
/// with `isError`, as MCP wants, and a call the server cannot make is a JSON-RPC error.
fn call(params: &Value, run: &Runner) -> Result<Value, String> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or("tools/call needs a name")?;
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => return Err("arguments must be an object".into()),
    };
    let cli = arguments(name, args)?;
    let ran = run(&cli);
    Ok(match ran {
        Ok((code, stdout, stderr)) => tool_result(name, &cli, code, &stdout, &stderr),
        Err(e) => json!({"content": [{"type": "text", "text": e}], "isError": true}),
    })
}

fn tool_result(name: &str, cli: &[String], code: Option<i32>, stdout: &str, stderr: &str) -> Value {
    let command = format!("gpudoctor {}", cli.join(" "));
    // 0 and 1 are reports (1: findings at the failing severity, or `diff` found changes);
    // anything else is the command failing.
    if !matches!(code, Some(0 | 1)) {
        let why = match code {
            Some(c) => format!("`{command}` exited {c}: {}", stderr.trim()),
            None => format!("`{command}` was killed: {}", stderr.trim()),
        };
        return json!({"content": [{"type": "text", "text": why}], "isError": true});
    }
    let parsed: Option<Value> = serde_json::from_str(stdout).ok();
    let summary = match (name, &parsed) {
        (_, Some(v)) => summarise(name, v, &command),
        _ => format!("`{command}`:"),
    };
    let mut content = vec![json!({"type": "text", "text": summary})];
    content.push(json!({"type": "text", "text": stdout}));
    let mut result = json!({"content": content, "isError": false});
    if let Some(v) = parsed.filter(Value::is_object) {
        result["structuredContent"] = v;
    }
    result
}

/// One paragraph an assistant can read before the JSON: the headline and each finding.
fn summarise(name: &str, v: &Value, command: &str) -> String {
    let mut out = format!("`{command}`");
    if let Some(headline) = v.pointer("/headline/text").and_then(Value::as_str) {
        out.push_str(&format!(": {headline}"));
    }
    if let Some(findings) = v.get("findings").and_then(Value::as_array) {
        if findings.is_empty() {
            out.push_str(if name == "check" {
                "\nNo findings."
            } else {
                "\nNo problems found."
            });
        }
        for f in findings.iter().take(50) {
            let field = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("");
            out.push_str(&format!(
                "\n- {} {}: {}",
                field("severity"),
                field("code"),
                field("title")
            ));
            if let Some(cmd) = f
                .get("fix")
                .and_then(Value::as_array)
                .and_then(|fixes| fixes.iter().find_map(|x| x.get("command")?.as_str()))
            {
                out.push_str(&format!(" (fix: `{cmd}`)"));
            }
        }
        if findings.len() > 50 {
            out.push_str(&format!("\n… and {} more", findings.len() - 50));
        }
    }
    out
}

/// Runs this binary with `args` under the deadline: exit code (None when killed), stdout,
/// stderr. The child's stdin is empty, so nothing it does can read the protocol stream.
fn run_self(args: &[String]) -> Result<(Option<i32>, String, String), String> {
    run_self_within(args, TOOL_DEADLINE)
}

/// `run_self` with another deadline (`gpudoctor bundle`'s steps).
pub(super) fn run_self_within(
    args: &[String],
    deadline: Duration,
) -> Result<(Option<i32>, String, String), String> {
    use wait_timeout::ChildExt;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find gpudoctor itself: {e}"))?;
    let mut child = Command::new(&exe)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = (&mut stdout).take(MAX_OUTPUT).read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = (&mut stderr).take(MAX_OUTPUT).read_to_end(&mut b);
        b
    });
    let status = match child.wait_timeout(deadline) {
        Ok(Some(s)) => s,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "`gpudoctor {}` did not finish within {} s",
                args.join(" "),
                deadline.as_secs()
            ));
        }
        Err(e) => return Err(format!("waiting for gpudoctor: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    Ok((status.code(), stdout, stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_messages_get_json_rpc_errors() {
        for (line, code) in [
            ("not json", PARSE_ERROR),
            ("[1,2]", INVALID_REQUEST),
            ("{\"jsonrpc\":\"2.0\",\"id\":1}", INVALID_REQUEST),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", INVALID_REQUEST),
            ("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", INVALID_REQUEST),
            ("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", INVALID_REQUEST),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}", METHOD_NOT_FOUND),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}", METHOD_NOT_FOUND),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":[]}", INVALID_PARAMS),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}", INVALID_PARAMS),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"check\",\"arguments\":{\"root\":\"--help\"}}}", INVALID_PARAMS),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"check\",\"arguments\":{\"exec\":\"x\"}}}", INVALID_PARAMS),
        ] {
            let r = handle(line).unwrap_or_else(|| panic!("{line}: no answer"));
            assert_eq!(r["error"]["code"], code, "{line}: {r}");
        }
        // Notifications and responses are not answered.
        assert!(handle("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").is_none());
        assert!(handle("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}").is_none());
    }

    #[test]
    fn the_handshake_settles_on_a_revision_both_speak() {
        let r = handle(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#).unwrap();
        assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
        let r = handle(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#).unwrap();
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(r["result"]["serverInfo"]["name"], "gpudoctor");
    }

    #[test]
    fn tool_calls_become_the_cli_arguments() {
        let args = |v: Value| arguments("check", v.as_object().unwrap()).unwrap();
        assert_eq!(
            args(json!({"root": "/mnt/x", "focus": "containers"})),
            [
                "check",
                "--format",
                "json",
                "--no-smoke",
                "--root",
                "/mnt/x",
                "--only",
                FOCUS[3].1
            ]
        );
        assert_eq!(
            arguments(
                "diff",
                json!({"old": "a.json", "new": "b.json"})
                    .as_object()
                    .unwrap()
            )
            .unwrap(),
            ["diff", "--format", "json", "--", "a.json", "b.json"]
        );
        assert!(arguments(
            "recommend",
            json!({"packages": ["--x"]}).as_object().unwrap()
        )
        .is_err());
    }
}
