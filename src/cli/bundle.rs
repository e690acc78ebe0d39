//! `gpudoctor bundle`: one archive to attach to a bug report — the replayable JSON report,
//! the terminal report, the GPUs, the libraries — with what a user must not post replaced by
//! stable placeholders (`host-1`, `user-1`, `ip-1`, `mac-1`, `secret-1`), a MANIFEST of every
//! member with its size and SHA-256, mode 0600, written atomically.
//!
//! The kernel log's excerpt is the report's: the driver's and AER lines the kernel_log probe
//! kept, nothing else of the log.
//!
//! Each part is this binary run as a child (`check --format json`, `devices --detail`, …)
//! under a deadline; a part that fails is recorded in the MANIFEST and the rest still goes in.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::args::BundleArgs;
use super::settings::Settings;
use super::CliError;

/// The archive's size limit: a bug tracker takes a few MB.
pub const MAX_BUNDLE: u64 = 8 << 20;
/// One member's limit before compression (it is cut, and the MANIFEST says so).
const MAX_MEMBER: usize = 16 << 20;
/// One part's deadline, and with the smoke test.
const PART_DEADLINE: Duration = Duration::from_secs(120);
const SMOKE_DEADLINE: Duration = Duration::from_secs(600);

/// One member of the bundle before redaction: its name, the command that made it, its text.
struct Part {
    name: &'static str,
    command: Vec<String>,
    text: String,
    failed: Option<String>,
}

pub(super) fn bundle(_g: &Settings, a: &BundleArgs) -> Result<u8, CliError> {
    let scratch = tempfile::Builder::new()
        .prefix("gpudoctor-bundle-")
        .tempdir()
        .map_err(|e| CliError::Internal(format!("a temporary directory: {e}")))?;
    let mut probe: Vec<String> = Vec::new();
    push_opt(&mut probe, "--root", &a.inspect.root);
    push_opt(&mut probe, "--nvml-lib", &a.nvml.nvml_lib);
    let nvml_args = probe.clone();
    push_opt(&mut probe, "--python", &a.python);
    push_opt(&mut probe, "--cuda-lib", &a.cuda_lib);
    if let Some(u) = &a.user.user {
        probe.extend(["--user".into(), u.clone()]);
    }
    if let Some(t) = a.inspect.timeout {
        probe.extend(["--timeout".into(), t.to_string()]);
    }
    let mut devices_args = nvml_args.clone();
    if let Some(u) = &a.user.user {
        devices_args.extend(["--user".into(), u.clone()]);
    }

    let mut parts = Vec::new();
    let mut check = vec!["check".to_string(), "--format".into(), "json".into()];
    if !a.smoke {
        check.push("--no-smoke".into());
    }
    check.extend(probe.iter().cloned());
    let report = part(
        "report.json",
        check,
        if a.smoke {
            SMOKE_DEADLINE
        } else {
            PART_DEADLINE
        },
    );
    // The terminal report is the JSON report replayed, so the two say the same.
    let saved = scratch.path().join("report.json");
    let human = if report.failed.is_none() {
        std::fs::write(&saved, &report.text)
            .map_err(|e| CliError::Internal(format!("{}: {e}", saved.display())))?;
        part(
            "report.txt",
            vec!["check".into(), "--from".into(), saved.display().to_string()],
            PART_DEADLINE,
        )
    } else {
        Part {
            name: "report.txt",
            command: Vec::new(),
            text: String::new(),
            failed: Some("the JSON report failed".into()),
        }
    };
    let parsed: Value = serde_json::from_str(&report.text).unwrap_or(Value::Null);
    let kernel_log = Part {
        name: "kernel-log.txt",
        command: report.command.clone(),
        text: kernel_log_excerpt(&parsed["snapshot"]["kernel_log"]),
        failed: None,
    };
    parts.push(report);
    parts.push(human);
    parts.push(kernel_log);
    let with = |cmd: &[&str], extra: &[String]| -> Vec<String> {
        cmd.iter()
            .map(|s| s.to_string())
            .chain(extra.iter().cloned())
            .collect()
    };
    parts.push(part(
        "devices.txt",
        with(&["devices", "--detail"], &devices_args),
        PART_DEADLINE,
    ));
    parts.push(part(
        "devices-topo.txt",
        with(&["devices", "--topo"], &devices_args),
        PART_DEADLINE,
    ));
    let mut libs = vec!["libs".to_string(), "--format".into(), "json".into()];
    push_opt(&mut libs, "--root", &a.inspect.root);
    push_opt(&mut libs, "--python", &a.python);
    parts.push(part("libs.json", libs, PART_DEADLINE));

    let mut r = Redactor::new(!a.no_redact);
    r.learn(&parsed);
    let archive = archive(&parts, &mut r, a)?;
    if archive.len() as u64 > MAX_BUNDLE {
        return Err(CliError::Usage(format!(
            "the bundle would be {} bytes, over its {MAX_BUNDLE}-byte limit; attach `gpudoctor check --format json` instead",
            archive.len()
        )));
    }
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("gpudoctor-bundle.tar.gz"));
    let written = crate::fsys::write_private(&out, &archive, Duration::from_secs(30))
        .map_err(|e| CliError::Usage(format!("writing the bundle: {e}")))?;
    let failed = parts.iter().filter(|p| p.failed.is_some()).count();
    eprintln!(
        "gpudoctor: wrote {} ({} bytes, {} files{}{}); review it, then attach it",
        written.display(),
        archive.len(),
        parts.len() + 1,
        if failed > 0 {
            format!(", {failed} part(s) failed: see MANIFEST")
        } else {
            String::new()
        },
        if a.no_redact {
            ", NOT redacted"
        } else {
            ", redacted"
        }
    );
    Ok(0)
}

/// The kernel log's NVIDIA and PCIe error lines the report kept (never the whole log).
fn kernel_log_excerpt(log: &Value) -> String {
    if log.is_null() {
        return String::new();
    }
    let mut out = String::from(
        "# NVIDIA driver (NVRM, Xid, SXid) and PCIe AER lines of the kernel log (the newest 100 at most)\n",
    );
    let source = log["scan"]["source"].as_str().unwrap_or("?");
    for p in log["passed_over"].as_array().into_iter().flatten() {
        out.push_str(&format!("# passed over: {}\n", p.as_str().unwrap_or("")));
    }
    let scan = &log["scan"]["value"];
    if scan.is_null() {
        out.push_str(&format!(
            "# not read: {}\n",
            log["scan"]["missing"]["detail"].as_str().unwrap_or("")
        ));
        return out;
    }
    out.push_str(&format!(
        "# source: {source}, {}, {} records{}\n",
        scan["span"].as_str().unwrap_or(""),
        scan["records"],
        if scan["truncated"] == true {
            " (older lines not read)"
        } else {
            ""
        }
    ));
    let lines = scan["lines"].as_array().map_or(&[][..], Vec::as_slice);
    if lines.is_empty() {
        out.push_str("# no such line\n");
    }
    for l in lines {
        let text = crate::render::printable(l["text"].as_str().unwrap_or("")).into_owned();
        match l["at"].as_str() {
            Some(at) => out.push_str(&format!("[{at}] {text}\n")),
            None => out.push_str(&format!("{text}\n")),
        }
    }
    out
}

fn push_opt(v: &mut Vec<String>, flag: &str, value: &Option<PathBuf>) {
    if let Some(x) = value {
        v.push(flag.into());
        v.push(x.display().to_string());
    }
}

/// Runs one part: its output, or why it failed (exit codes 0 and 1 are reports).
fn part(name: &'static str, command: Vec<String>, deadline: Duration) -> Part {
    let (text, failed) = match super::mcp::run_self_within(&command, deadline) {
        Ok((Some(0 | 1), out, _)) => (out, None),
        Ok((code, out, err)) => (
            out,
            Some(match code {
                Some(c) => format!("exit {c}: {}", err.trim()),
                None => format!("killed: {}", err.trim()),
            }),
        ),
        Err(e) => (String::new(), Some(e)),
    };
    Part {
        name,
        command,
        text,
        failed,
    }
}

fn archive(parts: &[Part], r: &mut Redactor, a: &BundleArgs) -> Result<Vec<u8>, CliError> {
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    let mut notes = Vec::new();
    for p in parts {
        let mut text = r.apply(&p.text);
        if text.len() > MAX_MEMBER {
            let mut cut = MAX_MEMBER;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            notes.push(format!("{}: cut at {MAX_MEMBER} bytes", p.name));
        }
        if let Some(why) = &p.failed {
            notes.push(format!(
                "{}: `gpudoctor {}` failed: {}",
                p.name,
                r.apply(&p.command.join(" ")),
                r.apply(why)
            ));
        }
        if !text.is_empty() {
            members.push((p.name.to_string(), text.into_bytes()));
        }
    }
    let mut manifest = format!(
        "gpudoctor bundle\ngpudoctor {}\ncommand: {}\nredacted: {}\n\n",
        env!("CARGO_PKG_VERSION"),
        r.apply(&std::env::args().collect::<Vec<_>>().join(" ")),
        if a.no_redact {
            "nothing (--no-redact)".to_string()
        } else {
            r.summary()
        }
    );
    manifest.push_str("files (bytes, sha256):\n");
    for (name, bytes) in &members {
        let sum: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        manifest.push_str(&format!("{} {sum} {name}\n", bytes.len()));
    }
    for n in &notes {
        manifest.push_str(&format!("note: {n}\n"));
    }
    members.insert(0, ("MANIFEST".into(), manifest.into_bytes()));

    let mut tar = tar::Builder::new(Vec::new());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for (name, bytes) in &members {
        let mut h = tar::Header::new_ustar();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o600);
        h.set_mtime(now);
        h.set_entry_type(tar::EntryType::Regular);
        let path = format!("gpudoctor-bundle/{name}");
        tar.append_data(&mut h, &path, &bytes[..])
            .map_err(|e| CliError::Internal(format!("building the bundle: {e}")))?;
    }
    let tar = tar
        .into_inner()
        .map_err(|e| CliError::Internal(format!("building the bundle: {e}")))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&tar)
        .and_then(|()| gz.finish())
        .map_err(|e| CliError::Internal(format!("compressing the bundle: {e}")))
}

/// What the report says about who and where this machine is, replaced everywhere by stable
/// placeholders: the same host name is `host-1` in every file, so references still match.
struct Redactor {
    enabled: bool,
    /// value → placeholder, longest values applied first.
    known: BTreeMap<String, String>,
    counts: BTreeMap<&'static str, usize>,
}

impl Redactor {
    fn new(enabled: bool) -> Redactor {
        Redactor {
            enabled,
            known: BTreeMap::new(),
            counts: BTreeMap::new(),
        }
    }

    fn add(&mut self, kind: &'static str, value: &str) {
        let value = value.trim();
        // Too short or too common to replace without damaging the text.
        if value.len() < 3
            || matches!(
                value,
                "root" | "unknown" | "localhost" | "default" | "/root" | "/"
            )
            || self.known.contains_key(value)
        {
            return;
        }
        let n = self.counts.entry(kind).or_insert(0);
        *n += 1;
        self.known.insert(value.to_string(), format!("{kind}-{n}"));
    }

    /// Learns the values from the JSON report's snapshot.
    fn learn(&mut self, report: &Value) {
        let s = &report["snapshot"];
        let text = |p: &str| s.pointer(p).and_then(Value::as_str).map(str::to_string);
        for p in [
            "/node/hostname",
            "/node/name",
            "/node/slurm/node_name",
            "/node/kubernetes/node_name",
            "/node/kubernetes/pod_name",
        ] {
            if let Some(h) = text(p) {
                if let Some((short, _)) = h.split_once('.') {
                    let full = h.clone();
                    self.add("host", &full);
                    self.add("host", short);
                } else {
                    self.add("host", &h);
                }
            }
        }
        if let Some(m) = text("/node/machine_id") {
            self.add("machine", &m);
        }
        if let Some(u) = text("/identity/user_name") {
            self.add("user", &u);
        }
        let vars = s["environment"]["variables"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for v in &vars {
            let (name, value) = (
                v["name"].as_str().unwrap_or(""),
                v["value"].as_str().unwrap_or(""),
            );
            match name {
                // /home/alice: the user's name, so that /home/user-1/.venv keeps its shape.
                "HOME" => match value
                    .strip_prefix("/home/")
                    .or_else(|| value.strip_prefix("/Users/"))
                    .map(|rest| rest.trim_end_matches('/'))
                    .filter(|name| !name.is_empty() && !name.contains('/'))
                {
                    Some(name) => self.add("user", name),
                    None => self.add("home", value),
                },
                "POD_NAME" | "NODE_NAME" | "SLURMD_NODENAME" => self.add("host", value),
                "SLURM_CLUSTER_NAME" | "POD_NAMESPACE" => self.add("site", value),
                _ => {}
            }
            for ip in addresses(value) {
                self.add("ip", &ip);
            }
        }
    }

    /// `text` with every known value, MAC address and token-looking string replaced.
    fn apply(&mut self, text: &str) -> String {
        if !self.enabled {
            return text.to_string();
        }
        // MACs and tokens anywhere: nothing else has their shape.
        for mac in macs(text) {
            self.add("mac", &mac);
        }
        for t in tokens(text) {
            self.add("secret", &t);
        }
        let mut values: Vec<(&String, &String)> = self.known.iter().collect();
        values.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        let mut out = text.to_string();
        for (value, placeholder) in values {
            out = replace_words(&out, value, placeholder);
        }
        out
    }

    fn summary(&self) -> String {
        if self.counts.is_empty() {
            return "nothing found to redact".into();
        }
        let kinds: Vec<String> = self
            .counts
            .iter()
            .map(|(k, n)| format!("{n} {k} value(s) as {k}-N"))
            .collect();
        format!(
            "{} (host names, machine id, user names and home directories, IP and MAC addresses, token-looking strings; secret-named variables are <redacted> in the report itself)",
            kinds.join(", ")
        )
    }
}

/// Letters, digits and `_` continue a word; `-`, `.` and `/` separate (a host name inside
/// `pod-gpu-17` or `/home/alice-old` is still that name, and redacting more is the safe side).
fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `text` with `value` replaced where it is not part of a longer word.
fn replace_words(text: &str, value: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(value) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + value.len()..].chars().next();
        let edge_ok = |c: Option<char>, inner: Option<char>| {
            !(c.is_some_and(is_word) && inner.is_some_and(is_word))
        };
        if edge_ok(before, value.chars().next()) && edge_ok(after, value.chars().next_back()) {
            out.push_str(&rest[..at]);
            out.push_str(with);
        } else {
            out.push_str(&rest[..at + value.len()]);
        }
        rest = &rest[at + value.len()..];
    }
    out.push_str(rest);
    out
}

/// IPv4 addresses (four octets ≤ 255) and IPv6 addresses (hex groups with at least two
/// colons, not a PCI address) in a variable's value.
fn addresses(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in value.split(|c: char| !(c.is_ascii_hexdigit() || c == '.' || c == ':')) {
        let word = word.trim_matches(['.', ':']);
        let is_v4 = |w: &str| {
            let quads: Vec<&str> = w.split('.').collect();
            quads.len() == 4
                && quads
                    .iter()
                    .all(|q| !q.is_empty() && q.len() <= 3 && q.parse::<u8>().is_ok())
        };
        // 10.0.0.5 or 10.0.0.5:29500
        if let Some(v4) = word.split(':').find(|w| is_v4(w)) {
            out.push(v4.to_string());
        } else if word.matches(':').count() >= 2
            && word.split(':').all(|g| g.len() <= 4)
            && word.contains("::")
        {
            out.push(word.to_string());
        }
    }
    out
}

/// MAC addresses: six pairs of hex digits joined by `:` or `-`.
fn macs(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 17 <= b.len() {
        let cand = &b[i..i + 17];
        let sep = cand[2];
        let shaped = (sep == b':' || sep == b'-')
            && (0..6)
                .all(|k| cand[k * 3].is_ascii_hexdigit() && cand[k * 3 + 1].is_ascii_hexdigit())
            && (0..5).all(|k| cand[k * 3 + 2] == sep);
        let bounded = (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b.get(i + 17)
                .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != sep);
        if shaped && bounded {
            out.push(String::from_utf8_lossy(cand).into_owned());
            i += 17;
        } else {
            i += 1;
        }
    }
    out
}

/// Strings shaped like access tokens: the prefixes of Hugging Face, GitHub, GitLab, Slack,
/// OpenAI and AWS keys followed by a long run of token characters.
fn tokens(text: &str) -> Vec<String> {
    const PREFIXES: &[(&str, usize)] = &[
        ("hf_", 30),
        ("ghp_", 30),
        ("gho_", 30),
        ("ghs_", 30),
        ("github_pat_", 30),
        ("glpat-", 20),
        ("xoxb-", 20),
        ("xoxp-", 20),
        ("sk-", 32),
        ("AKIA", 16),
    ];
    let mut out = Vec::new();
    for (prefix, min) in PREFIXES {
        let mut from = 0;
        while let Some(at) = text[from..].find(prefix) {
            let start = from + at;
            let body: String = text[start + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            let boundary = text[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            if boundary && body.len() >= *min {
                out.push(format!("{prefix}{body}"));
            }
            from = start + prefix.len() + body.len();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_replaced_as_words_with_stable_placeholders() {
        let mut r = Redactor::new(true);
        r.add("host", "gpu-node-17");
        r.add("user", "alice");
        let text = "gpu-node-17 ran as alice; alicebob and gpu-node-170 are others; alice again";
        assert_eq!(
            r.apply(text),
            "host-1 ran as user-1; alicebob and gpu-node-170 are others; user-1 again"
        );
    }

    #[test]
    fn addresses_macs_and_tokens_are_found() {
        assert_eq!(addresses("10.96.0.1:443"), ["10.96.0.1"]);
        assert!(addresses("0000:18:00.0").is_empty());
        assert_eq!(
            addresses("fe80::1ff:fe23:4567:890a"),
            ["fe80::1ff:fe23:4567:890a"]
        );
        assert_eq!(macs("link aa:bb:cc:dd:ee:0f up"), ["aa:bb:cc:dd:ee:0f"]);
        assert!(macs("0000:18:00.0 GPU-8e1f6a2c").is_empty());
        let t = "x hf_abcdefghijklmnopqrstuvwxyz0123456789 y";
        assert_eq!(tokens(t), ["hf_abcdefghijklmnopqrstuvwxyz0123456789"]);
        assert!(tokens("pip install hf_transfer").is_empty());
    }
}
