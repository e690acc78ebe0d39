//! Options scoped to their subcommands, -q, and policy from configuration files and
//! GPUDOCTOR_* variables, through the real binary.

use crate::util::{gpudoctor, run, FakeRoot};

fn codes_and_severities(stdout: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("JSON report");
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

// ------------------------------------------------------------------ options per command

#[test]
fn an_option_where_it_means_nothing_is_a_usage_error() {
    for args in [
        &["schema", "--matmul-size", "64"][..],
        &["schema", "--format", "markdown"],
        &["--matmul-size", "64", "schema"],
        &["--root", "/", "explain", "GD006"],
        &["devices", "--cuda-lib", "/x.so"],
        &["smoke", "--from", "r.json"],
        &["toolkit", "--python-import"],
        &["fleet", "--root", "/", "r.json"],
        &["completions", "bash", "--fail-on", "warning"],
        &["config", "--format", "markdown"],
        &["toolkit", "--format", "junit"],
        &["--format", "prometheus", "devices"],
        &["check", "--fix-script", "--json"],
        &["check", "-q", "-v"],
    ] {
        let r = run(gpudoctor().args(args));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        assert!(r.stdout.is_empty(), "{args:?}");
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
    let r = run(gpudoctor().args(["--matmul-size", "64", "schema"]));
    assert!(
        r.stderr
            .contains("--matmul-size is an option of `check` and `smoke`, not of `schema`"),
        "{}",
        r.stderr
    );
}

#[test]
fn help_lists_only_the_options_a_command_takes() {
    let completions = run(gpudoctor().args(["help", "completions"])).stdout;
    assert!(!completions.contains("--matmul-size"), "{completions}");
    assert!(!completions.contains("--root"), "{completions}");
    let smoke = run(gpudoctor().args(["help", "smoke"])).stdout;
    assert!(smoke.contains("--matmul-size") && smoke.contains("--device"));
    let offers = |help: &str, flag: &str| help.lines().any(|l| l.trim_start().starts_with(flag));
    assert!(!offers(&smoke, "--python-import") && !offers(&smoke, "--from"));
    let devices = run(gpudoctor().args(["help", "devices"])).stdout;
    assert!(devices.contains("--wide") && !devices.contains("--matmul-size"));
}

#[test]
fn options_before_the_subcommand_apply_to_it() {
    let root = FakeRoot::healthy(1);
    // `--root DIR toolkit` inspects DIR, as `toolkit --root DIR` does.
    let a = run(root.cmd().args(["toolkit", "--json"]));
    let b = run(gpudoctor()
        .args(["toolkit", "--json", "--root"])
        .arg(root.path()));
    assert_eq!(a.code, b.code);
    assert_eq!(a.stdout, b.stdout);
    // The subcommand's own value wins over the leading one.
    let r = run(gpudoctor().args(["--format", "markdown", "explain", "GD006", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with('{'), "{}", r.stdout);
}

// ------------------------------------------------------------------------------ quiet

#[test]
fn quiet_prints_nothing_and_the_exit_code_says_it() {
    let root = FakeRoot::healthy(1);
    let ok = run(root.cmd().args(["check", "-q", "--no-smoke"]));
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stdout.is_empty() && ok.stderr.is_empty());
    let warn = run(root
        .cmd()
        .args(["check", "--quiet", "--no-smoke", "--fail-on", "warning"])
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    assert_eq!(warn.code, 1);
    assert!(warn.stdout.is_empty());
    // The file --output names is still written.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let r = run(root
        .cmd()
        .args(["check", "-q", "--no-smoke", "--json", "--output"])
        .arg(&out));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.is_empty() && r.stderr.is_empty(), "{}", r.stderr);
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("\"findings\""));
    // Usage errors still reach stderr.
    let bad = run(gpudoctor().args(["check", "-q", "--timeout=-1"]));
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--timeout"), "{}", bad.stderr);
}

// ---------------------------------------------------------------------- configuration

struct Layers {
    dir: tempfile::TempDir,
}

impl Layers {
    fn new() -> Layers {
        Layers {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// $XDG_CONFIG_HOME/gpudoctor/config.toml.
    fn user(&self, text: &str) -> std::path::PathBuf {
        let p = self.dir.path().join("xdg/gpudoctor/config.toml");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn named(&self, name: &str, text: &str) -> std::path::PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn cmd(&self, root: &FakeRoot) -> assert_cmd::Command {
        let mut c = root.cmd();
        c.env("XDG_CONFIG_HOME", self.dir.path().join("xdg"))
            .env("CUDA_LAUNCH_BLOCKING", "1");
        c
    }
}

#[test]
fn files_then_variables_then_flags() {
    let root = FakeRoot::healthy(1);
    let l = Layers::new();
    let check = |c: &mut assert_cmd::Command| run(c.args(["check", "--no-smoke"])).code;
    // No configuration: GD012 (a warning) does not fail the run.
    assert_eq!(check(&mut l.cmd(&root)), 0);
    // The user's file fails on warnings.
    l.user("fail_on = \"warning\"\n");
    assert_eq!(check(&mut l.cmd(&root)), 1);
    // --config comes after it, GPUDOCTOR_CONFIG likewise.
    let relaxed = l.named("relaxed.toml", "fail_on = \"error\"\n");
    assert_eq!(check(l.cmd(&root).arg("--config").arg(&relaxed)), 0);
    assert_eq!(check(l.cmd(&root).env("GPUDOCTOR_CONFIG", &relaxed)), 0);
    // Variables come after files, flags after variables.
    assert_eq!(
        check(
            l.cmd(&root)
                .arg("--config")
                .arg(&relaxed)
                .env("GPUDOCTOR_FAIL_ON", "warning")
        ),
        1
    );
    assert_eq!(
        check(
            l.cmd(&root)
                .env("GPUDOCTOR_FAIL_ON", "warning")
                .args(["--fail-on", "never"])
        ),
        0
    );
    // --no-config reads neither files nor policy variables.
    assert_eq!(
        check(
            l.cmd(&root)
                .env("GPUDOCTOR_FAIL_ON", "warning")
                .arg("--no-config")
        ),
        0
    );
}

/// With no file there, `config` names the files it looked for as paths on this machine, not
/// `$XDG_CONFIG_HOME/…`; its JSON says the schema version.
#[test]
fn config_names_the_real_paths_it_looked_for() {
    let l = Layers::new();
    let xdg = l.dir.path().join("xdg");
    let r = run(gpudoctor()
        .env("XDG_CONFIG_HOME", &xdg)
        .env("COLUMNS", "400")
        .arg("config"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = r.stdout.lines().next().unwrap();
    assert!(
        first.contains(&format!(
            "/etc/gpudoctor/config.toml, {}, a file named by --config or $GPUDOCTOR_CONFIG",
            xdg.join("gpudoctor/config.toml").display()
        )),
        "{first}"
    );
    assert!(!first.contains("$XDG_CONFIG_HOME"), "{first}");
    let r = run(gpudoctor()
        .env_remove("XDG_CONFIG_HOME")
        .env("HOME", l.dir.path())
        .args(["config", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["schema_version"], gpudoctor::report::SCHEMA_VERSION);
}

#[test]
fn config_says_where_each_value_came_from() {
    let l = Layers::new();
    let user = l.user("# fleet policy\nfail_on = \"warning\"\nskip = [\"GD038\"]\n\n[smoke]\nmatmul_size = 256\n[severity]\nGD012 = \"error\"\n");
    let mut c = gpudoctor();
    c.env("XDG_CONFIG_HOME", l.dir.path().join("xdg"))
        .env("GPUDOCTOR_TIMEOUT", "9")
        .args(["config", "--json"]);
    let r = run(&mut c);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let source = |key: &str| -> (serde_json::Value, String) {
        let e = v["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == key)
            .unwrap_or_else(|| panic!("{key} in {v:#}"));
        (
            e["value"].clone(),
            e["source"].as_str().unwrap().to_string(),
        )
    };
    let at = |line: u32| format!("{}:{line}", user.display());
    assert_eq!(source("fail_on"), ("warning".into(), at(2)));
    assert_eq!(source("skip"), (serde_json::json!(["GD038"]), at(3)));
    assert_eq!(source("smoke.matmul_size"), (256.into(), at(6)));
    assert_eq!(source("severity.GD012"), ("error".into(), at(8)));
    assert_eq!(source("timeout"), (9.0.into(), "$GPUDOCTOR_TIMEOUT".into()));
    assert_eq!(source("color"), ("auto".into(), "default".into()));
    assert_eq!(v["files"][0], user.display().to_string());
    // The human form says the same.
    let human = run(gpudoctor()
        .env("XDG_CONFIG_HOME", l.dir.path().join("xdg"))
        .arg("config"));
    assert!(
        human
            .stdout
            .lines()
            .any(|l| l.starts_with("fail_on = \"warning\"") && l.ends_with(&format!("# {}", at(2)))),
        "{}",
        human.stdout
    );
}

#[test]
fn severity_overrides_change_every_output_alike() {
    let root = FakeRoot::healthy(1);
    let l = Layers::new();
    l.user("[severity]\nGD012 = \"error\"\nGD016 = \"ignore\"\n");
    let r = run(l.cmd(&root).args(["check", "--no-smoke", "--json"]));
    assert_eq!(r.code, 1, "an error now fails the run: {}", r.stderr);
    let found = codes_and_severities(&r.stdout);
    assert!(
        found.contains(&("GD012".into(), "error".into())),
        "{found:?}"
    );
    assert!(!found.iter().any(|(c, _)| c == "GD016"), "{found:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let gd012 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "GD012")
        .unwrap();
    assert!(
        gd012["detail"]
            .as_str()
            .unwrap()
            .contains("Reported as error by the configuration"),
        "{gd012:#}"
    );
    // The human report and JUnit agree with the JSON.
    let human = run(l.cmd(&root).args(["check", "--no-smoke"]));
    assert!(human.stdout.contains("error[GD012]"), "{}", human.stdout);
    let junit = run(l
        .cmd(&root)
        .args(["check", "--no-smoke", "--format", "junit"]));
    assert!(junit.stdout.contains("GD012"));
    // The variable form.
    let r = run(root
        .cmd()
        .args(["check", "--no-smoke", "--json"])
        .env("CUDA_LAUNCH_BLOCKING", "1")
        .env("GPUDOCTOR_SEVERITY", "gd012=ignore"));
    assert!(!codes_and_severities(&r.stdout)
        .iter()
        .any(|(c, _)| c == "GD012"));
}

#[test]
fn bad_configuration_names_the_file_and_line() {
    let l = Layers::new();
    for (text, line, words) in [
        ("fail_on = \"warning\"\nfial_on = 1\n", 2, "fial_on"),
        ("[smoke]\n\nmatmul_size = \"big\"\n", 3, "matmul_size"),
        ("[severity]\nGD999 = \"info\"\n", 2, "GD999"),
        ("color = \"sometimes\"\n", 1, "sometimes"),
    ] {
        let p = l.named("bad.toml", text);
        let r = run(gpudoctor()
            .args(["check", "--no-smoke", "--config"])
            .arg(&p));
        assert_eq!(r.code, 2, "{text}");
        assert!(
            r.stderr.contains(&format!("{}:{line}", p.display())),
            "{text}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(words), "{text}: {}", r.stderr);
    }
    let missing = run(gpudoctor().args(["config", "--config", "/nonexistent/gd.toml"]));
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("/nonexistent/gd.toml"));
    let bad_var = run(gpudoctor().arg("config").env("GPUDOCTOR_FAIL_ON", "loudly"));
    assert_eq!(bad_var.code, 2);
    assert!(
        bad_var.stderr.contains("GPUDOCTOR_FAIL_ON"),
        "{}",
        bad_var.stderr
    );
}

/// Runs the binary under python3, whose RUSAGE_CHILDREN is that one process: its exit code,
/// stderr, peak RSS in KiB and wall time.
fn measured(
    args: &[&std::ffi::OsStr],
    env: &[(&str, &std::path::Path)],
) -> (i32, String, u64, f64) {
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let script = "import resource, subprocess, sys, time, json\n\
        t = time.monotonic()\n\
        p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)\n\
        print(json.dumps([p.returncode, p.stderr.decode(errors='replace'), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.monotonic() - t]))\n";
    let mut cmd = std::process::Command::new("python3");
    cmd.arg("-c").arg(script).arg(&bin).args(args);
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v[0].as_i64().unwrap() as i32,
        v[1].as_str().unwrap().to_string(),
        v[2].as_u64().unwrap(),
        v[3].as_f64().unwrap(),
    )
}

/// A file read without end passes any bound within a second; the debug binary alone maps
/// 17–24 MiB (`/usr/bin/time -f %M gpudoctor --version`, varying run to run).
const RSS_BOUND_KIB: u64 = 40 * 1024;

#[test]
fn a_configuration_that_is_no_small_file_fails_at_once_naming_it() {
    let l = Layers::new();
    let dir = l.dir.path();
    // A FIFO, /dev/zero behind a link, a 200 MB (sparse) file and a directory.
    let fifo = dir.join("fifo.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path in our own temporary directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let zero = dir.join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let big = dir.join("big.toml");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let folder = dir.join("folder.toml");
    std::fs::create_dir(&folder).unwrap();
    for (path, says) in [
        (&fifo, "not a regular file (a FIFO)"),
        (&zero, "not a regular file (a character device)"),
        (&big, "larger than 1024 KiB"),
        (&folder, "not a regular file (a directory)"),
    ] {
        let (code, stderr, rss_kib, secs) = measured(
            &["config".as_ref(), "--config".as_ref(), path.as_os_str()],
            &[],
        );
        assert_eq!(code, 2, "{}: {stderr}", path.display());
        assert!(
            stderr.contains(&format!("configuration {}: {says}", path.display())),
            "{stderr}"
        );
        assert!(secs < 1.0, "{}: {secs} s", path.display());
        assert!(rss_kib < RSS_BOUND_KIB, "{}: {rss_kib} KiB", path.display());
    }
    // The user's file is read on every command: one linked to /dev/zero fails `check` at once
    // too, instead of growing without end.
    let xdg = dir.join("xdg");
    std::fs::create_dir_all(xdg.join("gpudoctor")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", xdg.join("gpudoctor/config.toml")).unwrap();
    let (code, stderr, rss_kib, secs) = measured(
        &["check".as_ref(), "--no-smoke".as_ref()],
        &[("XDG_CONFIG_HOME", &xdg)],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("gpudoctor/config.toml: not a regular file"),
        "{stderr}"
    );
    assert!(
        secs < 1.0 && rss_kib < RSS_BOUND_KIB,
        "{secs} s, {rss_kib} KiB"
    );
    // A file at the limit is still read (and judged as TOML).
    let padded = l.named(
        "padded.toml",
        &format!("fail_on = \"error\"\n{}", "#\n".repeat(400_000)),
    );
    let r = run(gpudoctor().args(["config", "--config"]).arg(&padded));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_configured_format_applies_where_the_command_can_produce_it() {
    let root = FakeRoot::healthy(1);
    let l = Layers::new();
    l.user("format = \"junit\"\n");
    let check = run(l.cmd(&root).args(["check", "--no-smoke"]));
    assert!(check.stdout.starts_with("<?xml"), "{}", check.stdout);
    // toolkit cannot print JUnit: the configured default does not apply there.
    let toolkit = run(l.cmd(&root).arg("toolkit"));
    assert_eq!(toolkit.code, 0, "{}", toolkit.stderr);
    assert!(!toolkit.stdout.starts_with("<?xml"));
}

#[test]
fn smoke_settings_and_switch_come_from_the_configuration() {
    let root = FakeRoot::healthy(1);
    let l = Layers::new();
    let user = l.user("[smoke]\nenabled = false\n");
    let r = run(l.cmd(&root).args(["check", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let p = &v["snapshot"]["probes"]["smoke"];
    assert_eq!(p["status"], "skipped", "{p:#}");
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("{}:2", user.display())),
        "the skip names its reason: {p:#}"
    );
    // GPUDOCTOR_SMOKE=0 does the same; the subcommand `smoke` still runs when asked.
    let r = run(root
        .cmd()
        .args(["check", "--json"])
        .env("GPUDOCTOR_SMOKE", "0"));
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["snapshot"]["probes"]["smoke"]["detail"]
        .as_str()
        .unwrap()
        .contains("GPUDOCTOR_SMOKE"));
}

#[test]
fn help_and_its_examples_fit_the_width() {
    for width in ["60", "80", "120"] {
        let w: usize = width.parse().unwrap();
        for sub in [
            &["--help"][..],
            &["check", "--help"],
            &["smoke", "--help"],
            &["devices", "--help"],
            &["diff", "--help"],
        ] {
            let r = run(gpudoctor().args(sub).env("COLUMNS", width));
            assert_eq!(r.code, 0);
            for line in r.stdout.lines() {
                assert!(line.chars().count() <= w, "{sub:?} at {width}: {line:?}");
            }
        }
    }
    // The examples are part of --help, and at 60 columns each keeps its shape: a command
    // line, then its description indented under it.
    let r = run(gpudoctor().arg("--help").env("COLUMNS", "60"));
    assert!(r.stdout.contains("gpudoctor check --baseline good.json"));
    let examples = r
        .stdout
        .split("Examples:\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    for line in examples.lines() {
        let command = ["  gpudoctor", "  sudo gpudoctor", "  srun gpudoctor"]
            .iter()
            .any(|p| line.starts_with(p));
        assert!(command || line.starts_with("      "), "{line:?}");
    }
    // Without a terminal or COLUMNS, help is 80 columns wide, as reports are.
    let r = run(gpudoctor().arg("--help").env_remove("COLUMNS"));
    assert!(r.stdout.lines().all(|l| l.chars().count() <= 80));
    // A mistyped subcommand is never pointed at a hidden worker.
    let r = run(gpudoctor().arg("smok"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("did you mean `smoke`?") && !r.stderr.contains("worker"),
        "{}",
        r.stderr
    );
}

#[test]
fn twice_verbose_adds_the_probe_timings() {
    let root = FakeRoot::healthy(1);
    let v1 = run(root.cmd().args(["check", "--no-smoke", "-v"]));
    assert!(!v1.stdout.contains("Probe timings"));
    let v2 = run(root.cmd().args(["check", "--no-smoke", "-vv"]));
    let section = v2
        .stdout
        .split("Probe timings\n")
        .nth(1)
        .expect("a timings section");
    for probe in ["kernel_module", "device_nodes", "nvml"] {
        assert!(
            section
                .lines()
                .any(|l| l.trim_start().starts_with(probe) && l.contains(" ms")),
            "{probe}: {section}"
        );
    }
}

#[test]
fn a_configured_colour_does_not_beat_no_color_but_the_flag_does() {
    let l = Layers::new();
    l.user("color = \"always\"\n");
    let listed = |extra: &[&str], no_color: bool| {
        let mut c = gpudoctor();
        c.env_remove("NO_COLOR")
            .env("XDG_CONFIG_HOME", l.dir.path().join("xdg"))
            .args(["explain", "--list"])
            .args(extra);
        if no_color {
            c.env("NO_COLOR", "1");
        }
        run(&mut c).stdout.contains('\u{1b}')
    };
    assert!(listed(&[], false), "the configuration turns colour on");
    assert!(!listed(&[], true), "NO_COLOR beats the configuration");
    assert!(
        listed(&["--color", "always"], true),
        "the flag beats NO_COLOR"
    );
}

#[test]
fn config_fits_the_width() {
    for width in [50usize, 80] {
        let r = run(gpudoctor().arg("config").env("COLUMNS", width.to_string()));
        for line in r.stdout.lines() {
            assert!(line.chars().count() <= width, "{width}: {line:?}");
        }
    }
}

#[test]
fn values_out_of_range_name_where_they_were_set() {
    let l = Layers::new();
    let p = l.named("range.toml", "[smoke]\n\nmatmul_size = 5\n");
    let r = run(gpudoctor().args(["config", "--config"]).arg(&p));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains(&format!("smoke.matmul_size = 5 ({}:3)", p.display())),
        "{}",
        r.stderr
    );
    let r = run(gpudoctor().arg("config").env("GPUDOCTOR_TIMEOUT", "0"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("timeout = 0 ($GPUDOCTOR_TIMEOUT)"),
        "{}",
        r.stderr
    );
    let r = run(gpudoctor().args(["check", "--skip", "nosuchprobe"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("skip = \"nosuchprobe\" (--skip)"),
        "{}",
        r.stderr
    );
}
