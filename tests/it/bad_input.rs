//! Hostile trees under --root: garbage, truncation, huge files, FIFOs, symlink loops,
//! non-UTF-8 names, unreadable directories. Each gives a note or finding, never a
//! panic (exit 101) or a hang; and nothing under the root is ever executed.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use crate::util::*;

/// Runs check --json and asserts it ended normally and quickly.
fn check_survives(root: &FakeRoot) -> serde_json::Value {
    let start = Instant::now();
    let r = run(root.cmd().args(["check", "--json", "--timeout", "3"]));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

#[test]
fn binary_garbage_in_every_file_a_probe_reads() {
    let root = FakeRoot::healthy(1);
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for f in [
        "etc/os-release",
        "proc/modules",
        "proc/driver/nvidia/version",
        "sys/module/nvidia/version",
        "proc/sys/kernel/osrelease",
        "proc/driver/nvidia/gpus/0000:18:00.0/information",
        "sys/devices/pci0000:00/0000:18:00.0/class",
        "etc/passwd",
        "etc/group",
        "proc/1/cgroup",
        "run/.containerenv",
    ] {
        root.bytes(f, &garbage);
    }
    let report = check_survives(&root);
    let km = &report["snapshot"]["kernel_module"];
    assert_eq!(km["version_file"]["missing"]["reason"], "malformed");
    assert_eq!(km["modules"]["missing"]["reason"], "malformed");
    assert_eq!(
        report["snapshot"]["platform"]["os"]["missing"]["reason"],
        "malformed"
    );
    // Honest about it: the unreadable files are named.
    let f = findings(&report, "GD016");
    assert_eq!(f.len(), 1, "{report:#}");
    let ev = serde_json::to_string(&f[0]["evidence"]).unwrap();
    assert!(
        ev.contains("/proc/modules") && ev.contains("/proc/driver/nvidia/version"),
        "{ev}"
    );
}

#[test]
fn empty_and_truncated_files() {
    let root = FakeRoot::healthy(1);
    root.file(
        "proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Mod",
    )
    .file("proc/modules", "")
    .file("etc/os-release", "")
    .file("sys/module/nvidia/version", "")
    .file("sys/devices/pci0000:00/0000:18:00.0/vendor", "");
    let report = check_survives(&root);
    assert_eq!(
        report["snapshot"]["kernel_module"]["version_file"]["missing"]["reason"],
        "malformed"
    );
    // An empty /proc/modules is read fine: no modules loaded.
    assert_eq!(
        report["snapshot"]["kernel_module"]["modules"]["value"],
        serde_json::json!([])
    );
}

#[test]
fn huge_files_are_read_with_a_bound() {
    let root = FakeRoot::healthy(1);
    let mut big = String::from("nvidia_uvm 1 0 - Live 0x0\nnvidia 1 0 - Live 0x0\n");
    while big.len() < 8 * 1024 * 1024 {
        big.push_str("filler_module 12345 0 - Live 0x0000000000000000\n");
    }
    root.file("proc/modules", &big);
    let report = check_survives(&root);
    let mods = report["snapshot"]["kernel_module"]["modules"]["value"]
        .as_array()
        .unwrap();
    assert_eq!(mods.len(), 2);
}

#[test]
fn fifos_never_block_a_probe() {
    let root = FakeRoot::healthy(1);
    for f in [
        "proc/modules",
        "proc/driver/nvidia/version",
        "etc/os-release",
    ] {
        root.remove(f);
        let c = std::ffi::CString::new(root.p(f).as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }
    let report = check_survives(&root);
    assert_eq!(
        report["snapshot"]["probes"]["kernel_module"]["status"],
        "ok"
    );
    assert_eq!(
        report["snapshot"]["kernel_module"]["modules"]["missing"]["reason"],
        "unreadable"
    );
}

#[test]
fn symlink_loops_everywhere() {
    let root = FakeRoot::healthy(1);
    root.remove("proc/driver/nvidia/version")
        .link("/proc/driver/nvidia/version", "proc/driver/nvidia/version")
        .remove("dev/nvidia0")
        .link("nvidia0", "dev/nvidia0")
        .link("/sys/bus/pci/devices/loop", "sys/bus/pci/devices/loop")
        .link(
            "../../../../../../../../..",
            "sys/bus/pci/devices/0000:ff:00.0",
        )
        .remove("etc/os-release")
        .link("../etc/os-release", "etc/os-release");
    let report = check_survives(&root);
    let v = &report["snapshot"]["kernel_module"]["version_file"];
    assert!(
        v["missing"]["detail"]
            .as_str()
            .unwrap()
            .contains("symbolic links"),
        "{v}"
    );
    let node = report["snapshot"]["device_nodes"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["path"] == "/dev/nvidia0")
        .unwrap()
        .clone();
    assert!(
        node["error"].as_str().unwrap().contains("symbolic links"),
        "{node}"
    );
}

#[test]
fn non_utf8_names_and_values() {
    let root = FakeRoot::healthy(1);
    let bad = OsStr::from_bytes(b"0000:\xff\xfe:00.0");
    std::fs::create_dir_all(root.p("sys/bus/pci/devices").join(bad)).unwrap();
    std::fs::write(
        root.p("sys/bus/pci/devices").join(bad).join("vendor"),
        "0x10de\n",
    )
    .unwrap();
    std::fs::write(
        root.p("sys/bus/pci/devices").join(bad).join("class"),
        "0x030000\n",
    )
    .unwrap();
    std::fs::write(root.p("dev").join(OsStr::from_bytes(b"nvidia\xff")), "").unwrap();
    let r = run(root
        .cmd()
        .args(["check", "--json"])
        .env("CUDA_VISIBLE_DEVICES", OsStr::from_bytes(b"0,\xff")));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let v = report["snapshot"]["environment"]["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "CUDA_VISIBLE_DEVICES")
        .unwrap()
        .clone();
    assert_eq!(v["lossy"], true);
    assert_eq!(
        findings(&report, "GD011").len(),
        1,
        "the bad entry ends the list"
    );
}

#[test]
fn unreadable_directories_are_reported_not_fatal() {
    // Root reads everything regardless of mode bits, so this only means something for other users.
    // SAFETY: geteuid only reads credentials.
    if unsafe { libc::geteuid() } == 0 {
        // Cover the same path through a directory that is not a directory.
        let root = FakeRoot::healthy(1);
        root.remove("sys/bus/pci/devices")
            .file("sys/bus/pci/devices", "not a directory");
        let report = check_survives(&root);
        assert_eq!(
            report["snapshot"]["pci"]["devices"]["missing"]["reason"],
            "unreadable"
        );
        assert!(!findings(&report, "GD016").is_empty());
        return;
    }
    let root = FakeRoot::healthy(1);
    root.chmod("sys/bus/pci/devices", 0o000);
    let report = check_survives(&root);
    root.chmod("sys/bus/pci/devices", 0o755);
    assert_eq!(
        report["snapshot"]["pci"]["devices"]["missing"]["reason"],
        "permission_denied"
    );
}

/// Nothing under --root is ever executed: every tool in this tree writes a marker if run.
#[test]
fn root_programs_are_never_executed() {
    let root = FakeRoot::healthy(1);
    root.remove("usr/local/cuda");
    let marker = root.p("EXECUTED");
    let script = format!("#!/bin/sh\necho ran \"$0\" >> '{}'\n", marker.display());
    for tool in [
        "usr/local/cuda/bin/nvcc",
        "usr/local/cuda-12.4/bin/nvcc",
        "usr/bin/nvcc",
        "usr/bin/nvidia-smi",
        "usr/bin/nvidia-modprobe",
        "usr/bin/python3",
        "usr/bin/python",
        "bin/sh",
        "sbin/modprobe",
        "sbin/ldconfig",
        "opt/conda/bin/python",
    ] {
        root.file(tool, &script).chmod(tool, 0o755);
    }
    root.file(
        "usr/local/cuda/version.json",
        r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#,
    );
    let bin_dirs = [
        "usr/local/cuda/bin",
        "usr/bin",
        "bin",
        "sbin",
        "opt/conda/bin",
    ]
    .iter()
    .map(|d| root.p(d).display().to_string())
    .collect::<Vec<_>>()
    .join(":");
    let r = run(root
        .cmd()
        .args(["check", "-v", "--json"])
        .env("PATH", format!("{bin_dirs}:/usr/bin:/bin"))
        .env("CUDA_HOME", "/usr/local/cuda")
        .env("CUDA_PATH", root.p("usr/local/cuda"))
        .env("CONDA_PREFIX", "/opt/conda")
        .env("LD_LIBRARY_PATH", "/usr/local/cuda/lib64"));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    assert!(
        !marker.exists(),
        "executed: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

/// Toolkit and library probes on a hostile tree: everything odd becomes a fact, nothing blocks.
#[test]
fn odd_toolkit_and_library_trees_are_facts_not_failures() {
    let root = FakeRoot::healthy(1);
    let multi = "usr/lib/x86_64-linux-gnu";
    root.file("usr/local/cuda-12.9", "a file, not a directory")
        .file("usr/local/cuda-12.8/lib64", "a file")
        .nvcc("usr/local/cuda-12.8/bin/nvcc", "12.8.93")
        .link("libcudnn.so.9", &format!("{multi}/libcudnn.so.9"))
        .file(&format!("{multi}/libnccl.so.2"), "not an ELF file")
        .bytes(&format!("{multi}/libcublas.so.12.\u{ff}"), b"x")
        .file("etc/ld.so.cache", "glibc-ld.so.cache1.1 but truncated");
    let c = std::ffi::CString::new(
        root.p(&format!("{multi}/libcudart.so.12"))
            .to_str()
            .unwrap(),
    )
    .unwrap();
    // SAFETY: mkfifo only creates a file system node at a path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let report = check_survives(&root);
    let libs = &report["snapshot"]["libraries"];
    assert_eq!(libs["search"]["cache"]["missing"]["reason"], "malformed");
    let rejected = report["snapshot"]["toolkits"]["rejected"]
        .as_array()
        .unwrap();
    assert!(
        rejected.iter().any(|r| r["path"] == "/usr/local/cuda-12.9"
            && r["reason"].as_str().unwrap().contains("not a directory")),
        "{rejected:#?}"
    );
    let nccl = libs["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["soname"] == "libnccl.so.2")
        .expect("nccl listed");
    assert!(
        nccl["candidates"][0]["problem"]
            .as_str()
            .unwrap()
            .contains("the loader would skip it"),
        "{nccl:#}"
    );
    for soname in ["libcudnn.so.9", "libcudart.so.12"] {
        // A link to itself, and a FIFO: reported, never loaded, never blocking.
        let lib = libs["libraries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["soname"] == soname);
        if let Some(lib) = lib {
            assert!(
                lib["winner"].is_null()
                    || lib["candidates"][lib["winner"].as_u64().unwrap() as usize]["path"]
                        != format!("/{multi}/{soname}"),
                "{lib:#}"
            );
        }
    }
    assert!(nccl["winner"].is_null());
    let gd016 = findings(&report, "GD016");
    assert!(
        gd016.iter().any(|f| f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["source"] == "/etc/ld.so.cache")),
        "{gd016:#?}"
    );
}

/// Text that reorders or hides itself (bidi overrides and isolates, marks, zero-width
/// characters) is shown escaped on every surface, as control characters are: what a
/// reviewer reads is what is there.
#[test]
fn bidi_and_invisible_characters_are_escaped_on_every_surface() {
    const HIDING: [(char, &str); 12] = [
        ('\u{00ad}', "\\u{ad}"),
        ('\u{180e}', "\\u{180e}"),
        ('\u{2028}', "\\u{2028}"),
        ('\u{fff9}', "\\u{fff9}"),
        ('\u{e0041}', "\\u{e0041}"),
        ('\u{3164}', "\\u{3164}"),
        ('\u{202e}', "\\u{202e}"),
        ('\u{2066}', "\\u{2066}"),
        ('\u{2069}', "\\u{2069}"),
        ('\u{200f}', "\\u{200f}"),
        ('\u{061c}', "\\u{61c}"),
        ('\u{200b}', "\\u{200b}"),
    ];
    let hostile: String = HIDING.iter().map(|(c, _)| format!("/x{c}")).collect();
    let cuda_home = format!("/opt/cuda{hostile}");
    let root = FakeRoot::healthy(1);
    let reports = tempfile::tempdir().unwrap();
    let json_path = reports.path().join("node.json");
    let base = |args: &[&str]| {
        let mut c = root.cmd();
        c.arg("check").args(args).env("CUDA_HOME", &cuda_home);
        run(&mut c)
    };
    let saved = base(&["--format", "json"]);
    std::fs::write(&json_path, &saved.stdout).unwrap();
    assert!(saved.stdout.contains("GD021"), "{}", saved.stdout);
    let fleet = run(gpudoctor()
        .args(["fleet", "--format", "html"])
        .arg(&json_path));
    let surfaces = [
        ("terminal", base(&["--format", "human", "-v"]).stdout),
        ("markdown", base(&["--format", "markdown"]).stdout),
        ("html", base(&["--format", "html"]).stdout),
        ("junit", base(&["--format", "junit"]).stdout),
        ("fix script", base(&["--fix-script"]).stdout),
        ("fleet html", fleet.stdout),
    ];
    for (surface, text) in surfaces {
        assert!(
            text.contains("/opt/cuda/x"),
            "{surface} does not show the value:\n{text}"
        );
        for (c, escaped) in HIDING {
            assert!(!text.contains(c), "{surface} shows U+{:04X} raw", c as u32);
            assert!(text.contains(escaped), "{surface} lacks {escaped}:\n{text}");
        }
    }
}

/// A report saved by PowerShell's `Out-File` or Notepad starts with a UTF-8 byte-order mark;
/// every reader of reports takes it, as the configuration reader does.
#[test]
fn a_report_with_a_byte_order_mark_is_read_everywhere() {
    let root = FakeRoot::healthy(1);
    let r = run(root
        .cmd()
        .args(["check", "--format", "json"])
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("node.json");
    std::fs::write(&saved, format!("\u{feff}{}", r.stdout)).unwrap();
    for args in [
        vec!["check", "--from"],
        vec!["diff", saved.to_str().unwrap()],
        vec!["fleet"],
    ] {
        let out = run(gpudoctor().args(&args).arg(&saved));
        assert!(
            matches!(out.code, 0 | 1),
            "{args:?}: exit {}: {}",
            out.code,
            out.stderr
        );
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    let out = run(root
        .cmd()
        .args(["check", "--baseline"])
        .arg(&saved)
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    assert!(matches!(out.code, 0 | 1), "--baseline: {}", out.stderr);
}
