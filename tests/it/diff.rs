//! `gpudoctor diff`, `check --baseline` and `check --fix-script`, through the real binary.

use crate::util;

use crate::util::fake_nvml::{self, FAKE_NVML_ENV};
use crate::util::{gpudoctor, run, FakeRoot};

/// A saved `check --json` report of a node with `n` GPUs (fake NVML), the last one's link
/// at `width` lanes.
fn report_of(dir: &std::path::Path, name: &str, n: u32, width: u32) -> std::path::PathBuf {
    report_with(dir, name, n, |nvml| {
        let last = nvml.devices.len() - 1;
        if let Some(p) = nvml.gpu(last).pcie.as_mut() {
            p.width = width;
        }
    })
}

fn report_with(
    dir: &std::path::Path,
    name: &str,
    n: u32,
    change: impl FnOnce(&mut util::fake_nvml::FakeNvml),
) -> std::path::PathBuf {
    let root = FakeRoot::healthy(n as usize);
    let mut nvml = util::gpu_node::hgx(n);
    change(&mut nvml);
    let cfg = nvml.write(&dir.join(format!("{name}-nvml")));
    let out = dir.join(format!("{name}.json"));
    let r = run(root
        .cmd()
        .args(["check", "--no-smoke", "--json", "--nvml-lib"])
        .arg(fake_nvml::fake_nvml_lib())
        .env(FAKE_NVML_ENV, cfg)
        .args(["--output"])
        .arg(&out));
    assert!(r.code <= 1, "{}", r.stderr);
    out
}

#[test]
fn diff_names_what_changed_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let before = report_of(dir.path(), "before", 2, 16);
    let after = report_of(dir.path(), "after", 2, 8);
    // Nothing differs between a report and itself: exit 0, said in words.
    let same = run(gpudoctor().arg("diff").arg(&before).arg(&before));
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert!(same.stdout.contains("No differences"), "{}", same.stdout);
    // The narrower link: exit 1, both widths shown.
    let human = run(gpudoctor().arg("diff").arg(&before).arg(&after));
    assert_eq!(human.code, 1, "{}", human.stderr);
    assert!(
        human.stdout.contains("x16") && human.stdout.contains("x8"),
        "{}",
        human.stdout
    );
    let json = run(gpudoctor()
        .arg("diff")
        .arg(&before)
        .arg(&after)
        .arg("--json"));
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let changes = v["changes"].as_array().unwrap();
    assert!(
        changes
            .iter()
            .any(|c| c["old"].as_str().is_some_and(|o| o.contains("x16"))
                && c["new"].as_str().is_some_and(|n| n.contains("x8"))),
        "{v:#}"
    );
    // The narrower link is a finding that appeared (GD034).
    assert!(
        v["findings"]["appeared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "GD034"),
        "{v:#}"
    );
    let md = run(gpudoctor()
        .arg("diff")
        .arg(&before)
        .arg(&after)
        .args(["--format", "markdown"]));
    assert!(
        md.stdout.contains("GD034") && md.stdout.contains('|'),
        "{}",
        md.stdout
    );
    // A GPU that went away.
    let one = report_of(dir.path(), "one", 1, 16);
    let gone = run(gpudoctor().arg("diff").arg(&before).arg(&one).arg("--json"));
    let v: serde_json::Value = serde_json::from_str(&gone.stdout).unwrap();
    assert!(
        v["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "removed" && c["section"] == "gpus"),
        "{v:#}"
    );
}

#[test]
fn fail_on_makes_diff_judge_only_new_findings() {
    let dir = tempfile::tempdir().unwrap();
    let before = report_of(dir.path(), "before", 2, 16);
    let after = report_of(dir.path(), "after", 2, 8);
    // GD034 (a narrow link) is a warning: --fail-on error passes, --fail-on warning fails.
    let severity = {
        let r = run(gpudoctor()
            .arg("diff")
            .arg(&before)
            .arg(&after)
            .arg("--json"));
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        v["findings"]["appeared"][0]["severity"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(severity, "warning");
    let r = run(gpudoctor()
        .arg("diff")
        .arg(&before)
        .arg(&after)
        .args(["--fail-on", "error"]));
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = run(gpudoctor()
        .arg("diff")
        .arg(&before)
        .arg(&after)
        .args(["--fail-on", "warning"]));
    assert_eq!(r.code, 1);
    // The other way round the finding went away: nothing got worse.
    let r = run(gpudoctor()
        .arg("diff")
        .arg(&after)
        .arg(&before)
        .args(["--fail-on", "warning"]));
    assert_eq!(r.code, 0);
}

#[test]
fn unreadable_or_foreign_files_are_usage_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = report_of(dir.path(), "good", 1, 16);
    let not_json = dir.path().join("notes.txt");
    std::fs::write(&not_json, "hello").unwrap();
    let future = dir.path().join("future.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    v["schema_version"] = 999.into();
    std::fs::write(&future, v.to_string()).unwrap();
    for (bad, words) in [
        (&not_json, "not JSON"),
        (&future, "schema_version 999"),
        (&dir.path().join("absent.json"), "absent.json"),
    ] {
        let r = run(gpudoctor().arg("diff").arg(&good).arg(bad));
        assert_eq!(r.code, 2, "{}", r.stdout);
        assert!(r.stderr.contains(words), "{}", r.stderr);
        assert!(
            r.stderr
                .contains(&*bad.file_name().unwrap().to_string_lossy()),
            "{}",
            r.stderr
        );
    }
    // An older report (schema 1 without the later fields) is read.
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    old["schema_version"] = 1.into();
    old.as_object_mut().unwrap().remove("derived");
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    let r = run(gpudoctor().arg("diff").arg(&old_path).arg(&good));
    assert!(r.code <= 1, "{}", r.stderr);
}

#[test]
fn check_baseline_shows_the_changes_after_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = FakeRoot::healthy(1);
    let base = dir.path().join("base.json");
    let r = run(root
        .cmd()
        .args(["check", "--no-smoke", "--json", "--output"])
        .arg(&base));
    assert!(r.code <= 1, "{}", r.stderr);
    // Same node, one variable more.
    let mut c = root.cmd();
    c.args(["check", "--no-smoke", "--baseline"])
        .arg(&base)
        .env("CUDA_LAUNCH_BLOCKING", "1");
    let human = run(&mut c);
    let (report, changes) = human
        .stdout
        .split_once("Changes from")
        .expect("a changes section after the report");
    assert!(report.contains("warning[GD012]: "));
    assert!(changes.contains("CUDA_LAUNCH_BLOCKING"), "{changes}");
    // The finding is laid out once, in the report; the changes name it.
    assert!(
        changes.contains("Findings that appeared (above)\n  warning[GD012]: "),
        "{changes}"
    );
    assert!(!changes.contains("= fix:"), "{changes}");
    // `diff` of the same two reports lays it out in full.
    let new = dir.path().join("new.json");
    let r = run(root
        .cmd()
        .args(["check", "--no-smoke", "--json", "--output"])
        .arg(&new)
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    assert!(r.code <= 1, "{}", r.stderr);
    let d = run(gpudoctor()
        .arg("diff")
        .arg(&base)
        .arg(&new)
        .env("NO_COLOR", "1"));
    assert!(
        d.stdout
            .contains("Findings that appeared\n\nwarning[GD012]: "),
        "{}",
        d.stdout
    );
    assert!(
        d.stdout.contains("$ unset CUDA_LAUNCH_BLOCKING"),
        "{}",
        d.stdout
    );
    // The exit status stays check's own (GD012 is a warning).
    assert_eq!(human.code, 0);
    let json = run(root
        .cmd()
        .args(["check", "--no-smoke", "--json", "--baseline"])
        .arg(&base)
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(
        v["baseline"]["findings"]["appeared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "GD012"),
        "{:#}",
        v["baseline"]
    );
    // Without --baseline the key is absent.
    let plain = run(root.cmd().args(["check", "--no-smoke", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&plain.stdout).unwrap();
    assert!(v.get("baseline").is_none());
    // A bad baseline fails before probing; JUnit has no place for it.
    let r = run(root
        .cmd()
        .args(["check", "--baseline", "/nonexistent.json"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--baseline /nonexistent.json"),
        "{}",
        r.stderr
    );
    for format in ["junit", "prometheus", "html"] {
        let r = run(root
            .cmd()
            .args(["check", "--format", format, "--baseline"])
            .arg(&base));
        assert_eq!(r.code, 2, "{format}");
        assert!(
            r.stderr.contains(&format!("not in --format {format}")),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn fix_script_is_a_valid_reviewable_script() {
    let root = FakeRoot::healthy(1);
    root.remove("dev/nvidia-uvm");
    let r = run(root
        .cmd()
        .args(["check", "--no-smoke", "--fix-script"])
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    assert_eq!(r.code, 1, "the exit status is check's: GD006 is an error");
    let script = &r.stdout;
    assert!(script.starts_with("#!/usr/bin/env bash\n"), "{script}");
    assert!(script.contains("\nset -euo pipefail\n"));
    // Errors first: GD006's block comes before GD012's.
    let gd006 = script.find("GD006").expect("GD006 block");
    let gd012 = script.find("GD012").expect("GD012 block");
    assert!(gd006 < gd012, "{script}");
    // The uvm fix is live and marked as needing root.
    let live = script
        .lines()
        .find(|l| l.trim_start().starts_with("sudo nvidia-modprobe -u -c=0"))
        .unwrap_or_else(|| panic!("a live nvidia-modprobe line in:\n{script}"));
    let before = &script[..script.find(live).unwrap()];
    assert!(
        before
            .lines()
            .rev()
            .take(3)
            .any(|l| l.contains("needs root")),
        "{script}"
    );
    // bash itself parses it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fix.sh");
    std::fs::write(&path, script).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn diff_fits_the_width() {
    let dir = tempfile::tempdir().unwrap();
    let before = report_of(dir.path(), "before", 2, 16);
    let after = report_of(
        dir.path(),
        "after-with-a-long-file-name-for-the-header",
        1,
        8,
    );
    for width in [60usize, 80] {
        let r = run(gpudoctor()
            .arg("diff")
            .arg(&before)
            .arg(&after)
            .env("COLUMNS", width.to_string()));
        for line in r.stdout.lines() {
            // A path longer than the line stays whole on a line of its own.
            let one_word = !line.trim().contains(' ');
            assert!(
                line.chars().count() <= width || one_word,
                "{width}: {line:?}\n{}",
                r.stdout
            );
        }
    }
}

#[test]
fn a_gpu_nvml_cannot_open_is_the_same_gpu_not_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let before = report_of(dir.path(), "before", 2, 16);
    let after = report_with(dir.path(), "after", 2, |nvml| {
        nvml.gpu(1).handle_error = Some(999);
    });
    let r = run(gpudoctor()
        .arg("diff")
        .arg(&before)
        .arg(&after)
        .arg("--json"));
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let changes = v["changes"].as_array().unwrap();
    assert!(
        !changes.iter().any(|c| c["kind"] == "added"),
        "no GPU appeared: {v:#}"
    );
    // What the GPU lost is said, and the finding that names it appeared.
    assert!(
        v["findings"]["appeared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "GD032"),
        "{v:#}"
    );
}
