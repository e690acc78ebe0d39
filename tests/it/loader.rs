//! The loader emulation (`gpudoctor libs FILE…`) against glibc itself: shared objects are
//! built here with the C compiler (DT_RPATH, DT_RUNPATH, $ORIGIN, version scripts), opened
//! by the real loader through Python's ctypes (RTLD_NOW, as Python imports), and the
//! verdict gpudoctor predicted from the files — loads, or the exact loader message, and
//! which copy of each library was mapped — must be the one glibc gave.

use crate::util;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::loader_lab::{Lab, Outcome};
use crate::util::*;

fn rpath(dir: &Path) -> String {
    format!("-Wl,--disable-new-dtags,-rpath,{}", dir.display())
}

fn runpath(dir: &Path) -> String {
    format!("-Wl,--enable-new-dtags,-rpath,{}", dir.display())
}

fn has_cc_and_python() -> bool {
    let ok = |c: &str| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    ok("cc") && ok("python3")
}

macro_rules! need_tools {
    () => {
        if !has_cc_and_python() {
            assert!(
                std::env::var_os("GPUDOCTOR_REQUIRE_LOADER_TOOLS").is_none(),
                "cc and python3 are needed (GPUDOCTOR_REQUIRE_LOADER_TOOLS is set)"
            );
            crate::util::skip(format_args!("cc and python3 are needed"));
            return;
        }
    };
}

#[test]
fn rpath_is_searched_before_ld_library_path() {
    need_tools!();
    let lab = Lab::new();
    lab.dep("a", "A");
    lab.dep("b", "B");
    let c = lab.consumer("c/libc1.so", "libc1.so", "a", &[rpath(&lab.p("a"))]);
    let ld = lab.p("b").display().to_string();
    let got = lab.agree(&[&c], Some(&ld));
    assert!(
        matches!(&got, Outcome::Loads { mapped } if mapped.contains(&lab.path("a/libdep.so.1"))),
        "{got:?}"
    );
}

#[test]
fn ld_library_path_is_searched_before_runpath() {
    need_tools!();
    let lab = Lab::new();
    lab.dep("a", "A");
    lab.dep("b", "B");
    let c = lab.consumer("c/libc1.so", "libc1.so", "a", &[runpath(&lab.p("a"))]);
    let ld = lab.p("b").display().to_string();
    let got = lab.agree(&[&c], Some(&ld));
    assert!(
        matches!(&got, Outcome::Loads { mapped } if mapped.contains(&lab.path("b/libdep.so.1"))),
        "{got:?}"
    );
}

#[test]
fn runpath_is_not_inherited_but_rpath_is() {
    need_tools!();
    let lab = Lab::new();
    lab.dep("a", "A");
    // mid needs libdep and has no search path of its own.
    let mid = |dir: &str| {
        lab.cc(
            &format!("{dir}/libmid.so.1"),
            "libmid.so.1",
            "extern const char *which(void);\nconst char *mid(void) { return which(); }\n",
            &[
                format!("-L{}", lab.p("a").display()),
                "-l:libdep.so.1".into(),
            ],
        )
    };
    mid("m");
    let top = |rel: &str, path: String| {
        lab.cc(
            rel,
            "libtop.so",
            "extern const char *mid(void);\nconst char *top(void) { return mid(); }\n",
            &[
                format!("-L{}", lab.p("m").display()),
                "-l:libmid.so.1".into(),
                path,
            ],
        )
    };
    let search = format!("{}:{}", lab.p("m").display(), lab.p("a").display());
    // RUNPATH applies to the object's own needs only: mid's libdep is not found.
    let with_runpath = top(
        "t1/libtop.so",
        format!("-Wl,--enable-new-dtags,-rpath,{search}"),
    );
    assert_eq!(
        lab.agree(&[&with_runpath], None),
        Outcome::Fails(
            "libdep.so.1: cannot open shared object file: No such file or directory".into()
        )
    );
    // RPATH is searched for everything its object brings in.
    let with_rpath = top(
        "t2/libtop.so",
        format!("-Wl,--disable-new-dtags,-rpath,{search}"),
    );
    assert!(matches!(
        lab.agree(&[&with_rpath], None),
        Outcome::Loads { .. }
    ));
}

#[test]
fn a_soname_already_loaded_is_reused_whatever_the_search_path_says() {
    need_tools!();
    let lab = Lab::new();
    lab.dep("a", "A");
    let early = lab.dep("b", "B");
    let c = lab.consumer("c/libc1.so", "libc1.so", "a", &[runpath(&lab.p("a"))]);
    let got = lab.agree(&[&early, &c], None);
    match got {
        Outcome::Loads { mapped } => {
            assert!(mapped.contains(&lab.path("b/libdep.so.1")));
            assert!(!mapped.contains(&lab.path("a/libdep.so.1")), "{mapped:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn origin_is_the_directory_of_the_path_opened_not_of_the_link_target() {
    need_tools!();
    let lab = Lab::new();
    lab.dep("real", "R");
    let c = lab.consumer(
        "real/libc1.so",
        "libc1.so",
        "real",
        &["-Wl,--enable-new-dtags,-rpath,$ORIGIN".into()],
    );
    assert!(matches!(lab.agree(&[&c], None), Outcome::Loads { .. }));
    std::fs::create_dir_all(lab.p("elsewhere")).unwrap();
    std::os::unix::fs::symlink(&c, lab.p("elsewhere/libc1.so")).unwrap();
    assert_eq!(
        lab.agree(&[&lab.p("elsewhere/libc1.so")], None),
        Outcome::Fails(
            "libdep.so.1: cannot open shared object file: No such file or directory".into()
        )
    );
}

/// Builds libdep.so.1 with a version script, `which` and maybe `newer` defined at `version`.
fn versioned_dep(lab: &Lab, dir: &str, versions: &[(&str, &[&str])]) -> PathBuf {
    let mut script = String::new();
    let mut src = String::new();
    for (v, syms) in versions {
        script.push_str(&format!("{v} {{ global: {}; }};\n", syms.join("; ")));
        for s in *syms {
            src.push_str(&format!("int {s}(void) {{ return 1; }}\n"));
        }
    }
    script.push_str("LOCALS { local: *; };\n");
    let map = lab.p(&format!("{dir}.map"));
    std::fs::write(&map, script).unwrap();
    lab.cc(
        &format!("{dir}/libdep.so.1"),
        "libdep.so.1",
        &src,
        &[format!("-Wl,--version-script={}", map.display())],
    )
}

fn versioned_consumer(lab: &Lab, link_dir: &str, uses: &str) -> PathBuf {
    lab.cc(
        "c/libuser.so",
        "libuser.so",
        &format!("extern int {uses}(void);\nint user(void) {{ return {uses}(); }}\n"),
        &[
            format!("-L{}", lab.p(link_dir).display()),
            "-l:libdep.so.1".into(),
            runpath(&lab.p(link_dir)),
        ],
    )
}

#[test]
fn a_missing_version_node_is_glibcs_version_not_found() {
    need_tools!();
    let lab = Lab::new();
    versioned_dep(
        &lab,
        "new",
        &[("DEP_1", &["old_fn"]), ("DEP_2", &["new_fn"])],
    );
    versioned_dep(&lab, "old", &[("DEP_1", &["old_fn"])]);
    let user = versioned_consumer(&lab, "new", "new_fn");
    assert!(matches!(lab.agree(&[&user], None), Outcome::Loads { .. }));
    let ld = lab.p("old").display().to_string();
    let got = lab.agree(&[&user], Some(&ld));
    assert_eq!(
        got,
        Outcome::Fails(format!(
            "{}/libdep.so.1: version `DEP_2' not found (required by {})",
            lab.p("old").display(),
            user.display()
        ))
    );
}

#[test]
fn a_symbol_missing_from_an_nvidia_style_version_is_an_undefined_symbol() {
    need_tools!();
    let lab = Lab::new();
    // One version node named after the soname, as NVIDIA's libraries define it.
    versioned_dep(&lab, "new", &[("libdep.so.1", &["f_12_1", "f_12_4"])]);
    versioned_dep(&lab, "old", &[("libdep.so.1", &["f_12_1"])]);
    let user = versioned_consumer(&lab, "new", "f_12_4");
    let ld = lab.p("old").display().to_string();
    assert_eq!(
        lab.agree(&[&user], Some(&ld)),
        Outcome::Fails(format!(
            "{}: undefined symbol: f_12_4, version libdep.so.1",
            user.display()
        ))
    );
    // A consumer of only the older symbol loads with the older copy.
    let old_user = lab.cc(
        "c2/libuser2.so",
        "libuser2.so",
        "extern int f_12_1(void);\nint user2(void) { return f_12_1(); }\n",
        &[
            format!("-L{}", lab.p("new").display()),
            "-l:libdep.so.1".into(),
        ],
    );
    assert!(matches!(
        lab.agree(&[&old_user], Some(&ld)),
        Outcome::Loads { .. }
    ));
}

#[test]
fn a_library_of_another_machine_is_skipped_and_the_search_goes_on() {
    need_tools!();
    let lab = Lab::new();
    lab.dep("good", "G");
    std::fs::create_dir_all(lab.p("foreign")).unwrap();
    std::fs::write(
        lab.p("foreign/libdep.so.1"),
        util::elf::shared_object_for(util::elf::FOREIGN_MACHINE, "libdep.so.1", &[]),
    )
    .unwrap();
    let c = lab.consumer("c/libc1.so", "libc1.so", "good", &[]);
    let ld = format!("{}:{}", lab.p("foreign").display(), lab.p("good").display());
    let got = lab.agree(&[&c], Some(&ld));
    assert!(
        matches!(&got, Outcome::Loads { mapped } if mapped.contains(&lab.path("good/libdep.so.1"))),
        "{got:?}"
    );
}

#[test]
fn the_view_names_how_each_library_was_found_and_the_exit_code_follows_the_finding() {
    need_tools!();
    let lab = Lab::new();
    lab.dep("a", "A");
    let c = lab.consumer(
        "c/libcuda_user.so",
        "libcuda_user.so",
        "a",
        &[runpath(&lab.p("a"))],
    );
    let (code, v) = json(
        gpudoctor()
            .env_remove("LD_LIBRARY_PATH")
            .arg("libs")
            .arg(&c),
    );
    assert_eq!(code, 0, "{v}");
    let libs = &v["environments"][0]["modules"][0]["libraries"];
    let dep = libs
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["needed"] == "libdep.so.1")
        .unwrap();
    assert_eq!(dep["how"]["step"], "runpath");
    assert_eq!(dep["how"]["entry"], lab.p("a").display().to_string());
    std::fs::remove_file(lab.p("a/libdep.so.1")).unwrap();
    let (code, v) = json(
        gpudoctor()
            .env_remove("LD_LIBRARY_PATH")
            .arg("libs")
            .arg(&c),
    );
    assert_eq!(code, 1, "{v}");
    let f = &v["findings"][0];
    assert_eq!(f["code"], "GD060");
    assert_eq!(f["severity"], "error");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("needs libdep.so.1, which the loader cannot find"),
        "{f}"
    );
    // The human view marks the module with the finding's mark.
    let out = run(gpudoctor()
        .env_remove("LD_LIBRARY_PATH")
        .env("NO_COLOR", "1")
        .arg("libs")
        .arg(&c));
    assert!(out.stdout.contains("✗ libcuda_user.so"), "{}", out.stdout);
    assert!(
        out.stdout.contains("libdep.so.1  not found"),
        "{}",
        out.stdout
    );
}

#[test]
fn bad_elf_input_is_bounded() {
    need_tools!();
    let lab = Lab::new();
    // A cycle: a needs b, b needs a.
    let a = util::elf::shared_object("libcyca.so.1", &["libcycb.so.1"]);
    let b = util::elf::shared_object("libcycb.so.1", &["libcyca.so.1"]);
    std::fs::create_dir_all(lab.p("cyc")).unwrap();
    std::fs::write(lab.p("cyc/libcyca.so.1"), a).unwrap();
    std::fs::write(lab.p("cyc/libcycb.so.1"), b).unwrap();
    // Truncated and garbage files where libraries are expected.
    std::fs::write(lab.p("cyc/libtrunc.so.1"), b"\x7fELF\x02\x01\x01").unwrap();
    let needs_many: Vec<String> = (0..3000).map(|i| format!("libnothere{i}.so.1")).collect();
    let refs: Vec<&str> = needs_many.iter().map(String::as_str).collect();
    std::fs::write(
        lab.p("cyc/libwide.so.1"),
        util::elf::shared_object("libwide.so.1", &refs),
    )
    .unwrap();
    let ld = lab.p("cyc").display().to_string();
    let t = std::time::Instant::now();
    let (code, v) = json(
        gpudoctor()
            .env("LD_LIBRARY_PATH", &ld)
            .arg("libs")
            .arg(lab.p("cyc/libcyca.so.1"))
            .arg(lab.p("cyc/libtrunc.so.1"))
            .arg(lab.p("cyc/libwide.so.1")),
    );
    assert!(t.elapsed().as_secs() < 10);
    let modules = v["environments"][0]["modules"].as_array().unwrap();
    assert_eq!(modules[0]["loads"], true, "a cycle loads: {}", modules[0]);
    assert_eq!(modules[1]["loads"], false);
    assert!(
        modules[1]["failures"][0]
            .as_str()
            .unwrap()
            .contains("libtrunc.so.1"),
        "{}",
        modules[1]
    );
    assert_eq!(modules[2]["loads"], false);
    assert_eq!(code, 1);
}

/// A chain deeper than the emulation follows, whose last library is missing: glibc refuses
/// it ("cannot open shared object file", as the tests above show for a short chain); `libs`
/// must not call it loading, nor say "no problems".
#[test]
fn a_chain_past_the_object_bound_is_not_judged_as_loading() {
    let lab = Lab::new();
    std::fs::create_dir_all(lab.p("deep")).unwrap();
    const DEPTH: usize = 5000;
    for i in 0..DEPTH {
        let next = if i + 1 == DEPTH {
            "libdeepmissing.so.1".to_string()
        } else {
            format!("libdeep{}.so.1", i + 1)
        };
        let name = format!("libdeep{i}.so.1");
        std::fs::write(
            lab.p(&format!("deep/{name}")),
            util::elf::shared_object(&name, &[&next]),
        )
        .unwrap();
    }
    let ld = lab.p("deep").display().to_string();
    let top = lab.p("deep/libdeep0.so.1");
    // The bound under test is the object count, not the time budget: an unoptimised build
    // on two cores can take longer than the default 5 s to read 5000 objects.
    let (code, v) = json(
        gpudoctor()
            .env("LD_LIBRARY_PATH", &ld)
            .args(["libs", "--timeout", "120"])
            .arg(&top),
    );
    let module = &v["environments"][0]["modules"][0];
    assert_eq!(module["loads"], false, "{module}");
    assert_eq!(module["verdict"], "warning", "{module}");
    let gd016: Vec<&serde_json::Value> = findings(&v, "GD016");
    assert_eq!(gd016.len(), 1, "{:#}", v["findings"]);
    assert_eq!(gd016[0]["severity"], "warning");
    assert!(gd016[0]["title"]
        .as_str()
        .unwrap()
        .contains("libdeep0.so.1"));
    assert_eq!(code, 0, "a warning: the exit code follows --fail-on");
    // The bound is said once for the module, not once for every object left unread.
    let said: Vec<&serde_json::Value> = module["failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f.as_str().unwrap().contains("more than 4000 objects"))
        .collect();
    assert_eq!(said.len(), 1, "{module}");

    let r = run(gpudoctor()
        .env("LD_LIBRARY_PATH", &ld)
        .args(["libs", "--timeout", "120", "--format", "human"])
        .arg(&top));
    assert!(
        !r.stdout.contains("No library problems found"),
        "{}",
        r.stdout
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("libdeep0.so.1"))
        .unwrap();
    assert!(!line.contains('✓'), "{line}");
    assert!(r.stdout.contains("GD016"), "{}", r.stdout);
}

/// An object listing more DT_NEEDED entries than the emulation follows, whose last one is
/// missing: not a pass either.
#[test]
fn needed_entries_past_the_bound_are_not_judged_as_loading() {
    let lab = Lab::new();
    std::fs::create_dir_all(lab.p("wide")).unwrap();
    std::fs::write(
        lab.p("wide/libok.so.1"),
        util::elf::shared_object("libok.so.1", &[]),
    )
    .unwrap();
    let mut needed = vec!["libok.so.1"; 600];
    needed.push("libwidemissing.so.1");
    std::fs::write(
        lab.p("wide/libwide.so.1"),
        util::elf::shared_object("libwide.so.1", &needed),
    )
    .unwrap();
    let (_, v) = json(
        gpudoctor()
            .env("LD_LIBRARY_PATH", lab.p("wide"))
            .arg("libs")
            .arg(lab.p("wide/libwide.so.1")),
    );
    let module = &v["environments"][0]["modules"][0];
    assert_eq!(module["loads"], false, "{module}");
    assert!(
        module["failures"][0]
            .as_str()
            .unwrap()
            .contains("601 DT_NEEDED entries, more than 512"),
        "{module}"
    );
    assert_eq!(findings(&v, "GD016").len(), 1, "{:#}", v["findings"]);
}

/// The steps glibc takes after the object's own paths and LD_LIBRARY_PATH — the cache (its
/// glibc-hwcaps entries first when the CPU has the level), then the default directories —
/// cannot be set up for the real loader without changing the machine, so they are checked
/// under --root with a real cache file and real compiled libraries.
#[test]
fn under_root_ld_library_path_runpath_cache_hwcaps_then_default_dirs() {
    need_tools!();
    let lab = Lab::new();
    lab.dep("build", "BUILD");
    let consumer = lab.consumer(
        "build/libconsumer.so",
        "libconsumer.so",
        "build",
        &["-Wl,--enable-new-dtags,-rpath,/opt/a".into()],
    );
    let triple = if cfg!(target_arch = "aarch64") {
        "aarch64-linux-gnu"
    } else {
        "x86_64-linux-gnu"
    };
    let root = FakeRoot::new();
    let dep = std::fs::read(lab.p("build/libdep.so.1")).unwrap();
    root.bytes(
        "opt/consumer/libconsumer.so",
        &std::fs::read(&consumer).unwrap(),
    );
    for dir in ["opt/a", "opt/b", "opt/c", "opt/b/glibc-hwcaps/x86-64-v3"] {
        root.bytes(&format!("{dir}/libdep.so.1"), &dep);
    }
    root.bytes(&format!("usr/lib/{triple}/libdep.so.1"), &dep);
    let bound = |ld: Option<&str>| -> (String, String) {
        let mut cmd = root.cmd();
        cmd.args(["libs", "/opt/consumer/libconsumer.so"]);
        if let Some(ld) = ld {
            cmd.env("LD_LIBRARY_PATH", ld);
        }
        let (_, v) = json(&mut cmd);
        let b = v["environments"][0]["modules"][0]["libraries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["needed"] == "libdep.so.1")
            .cloned()
            .unwrap();
        (
            b["path"].as_str().unwrap_or("not found").to_string(),
            b["how"]["step"].as_str().unwrap_or("").to_string(),
        )
    };
    let cached = [("libdep.so.1", "/opt/b/libdep.so.1")];
    root.ld_cache(&cached);
    assert_eq!(
        bound(Some("/opt/c")),
        ("/opt/c/libdep.so.1".into(), "ld_library_path".into())
    );
    assert_eq!(bound(None), ("/opt/a/libdep.so.1".into(), "runpath".into()));
    root.remove("opt/a/libdep.so.1");
    assert_eq!(
        bound(None),
        ("/opt/b/libdep.so.1".into(), "ld_so_cache".into())
    );
    if cfg!(target_arch = "x86_64") {
        // ldconfig lists a glibc-hwcaps copy too; the loader takes it on a CPU of that level.
        root.ld_cache(&[
            ("libdep.so.1", "/opt/b/glibc-hwcaps/x86-64-v3/libdep.so.1"),
            ("libdep.so.1", "/opt/b/libdep.so.1"),
        ]);
        let v3 = "flags\t\t: fpu cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave\n";
        root.file("proc/cpuinfo", v3);
        assert_eq!(
            bound(None),
            (
                "/opt/b/glibc-hwcaps/x86-64-v3/libdep.so.1".into(),
                "ld_so_cache".into()
            )
        );
        root.file("proc/cpuinfo", "flags\t\t: fpu sse2\n");
        assert_eq!(
            bound(None),
            ("/opt/b/libdep.so.1".into(), "ld_so_cache".into())
        );
    }
    root.ld_cache(&[]);
    assert_eq!(
        bound(None),
        (
            format!("/usr/lib/{triple}/libdep.so.1"),
            "default_dir".into()
        )
    );
    root.remove(&format!("usr/lib/{triple}/libdep.so.1"));
    assert_eq!(bound(None), ("not found".into(), String::new()));
}

/// NVML's worker is spawned only when a loader step can find libnvidia-ml.so.1. The driver
/// must look loaded for NVML to be tried at all: as root, a private mount namespace puts a fake
/// /proc/driver/nvidia over the real one (skipped where that cannot be done).
#[test]
fn nvml_is_not_started_when_no_loader_step_finds_it() {
    need_tools!();
    let fake = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(fake.path().join("nvidia")).unwrap();
    std::fs::write(
        fake.path().join("nvidia/version"),
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\n",
    )
    .unwrap();
    let lib_dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let nvml = |ld: Option<&Path>| -> Option<serde_json::Value> {
        let script = format!(
            "mount --bind {} /proc/driver && exec {} check --no-smoke --only nvml --json",
            fake.path().display(),
            bin.display()
        );
        let mut cmd = Command::new("unshare");
        cmd.args(["-m", "sh", "-c", &script])
            .env_clear()
            .env("PATH", "/usr/bin:/bin");
        if let Some(d) = ld {
            cmd.env("LD_LIBRARY_PATH", d);
        }
        let out = cmd.output().ok()?;
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        Some(v["snapshot"]["nvml"]["result"].clone())
    };
    let Some(none) = nvml(None) else {
        crate::util::skip(format_args!(
            "needs root and unshare(1) to mount over /proc/driver"
        ));
        return;
    };
    let system_has_nvml = Command::new("ldconfig")
        .arg("-p")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("libnvidia-ml.so.1"));
    if system_has_nvml {
        crate::util::skip(format_args!("this machine has a libnvidia-ml.so.1"));
        return;
    }
    assert_eq!(none["status"], "init_failed", "{none}");
    assert_eq!(none["code"], "library_not_found");
    assert!(
        none["message"]
            .as_str()
            .unwrap()
            .contains("no loader step finds it"),
        "{none}"
    );
    // A file the loader would find: the worker runs and reports what loading it gave.
    let libc = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/aarch64-linux-gnu/libc.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .unwrap();
    std::fs::copy(libc, lib_dir.path().join("libnvidia-ml.so.1")).unwrap();
    let some = nvml(Some(lib_dir.path())).unwrap();
    assert!(
        !some["message"]
            .as_str()
            .unwrap_or("")
            .contains("no loader step finds it"),
        "{some}"
    );
}

/// An unversioned library (as torch's libc10.so is) defining `syms`, each `int NAME(void)`.
fn plain_dep(lab: &Lab, dir: &str, syms: &[&str]) -> PathBuf {
    let src: String = syms
        .iter()
        .map(|s| format!("int {s}(void) {{ return 1; }}\n"))
        .collect();
    lab.cc(&format!("{dir}/libdep.so.1"), "libdep.so.1", &src, &[])
}

/// A consumer calling `uses` in order (C++-mangled names are valid C identifiers), linked
/// against `link_dir` with a RUNPATH there; `weak` references are declared weak.
fn plain_consumer(lab: &Lab, link_dir: &str, uses: &[&str], weak: &[&str]) -> PathBuf {
    let mut src = String::new();
    for u in uses {
        let attr = if weak.contains(u) {
            "__attribute__((weak)) "
        } else {
            ""
        };
        src.push_str(&format!("extern {attr}int {u}(void);\n"));
    }
    let calls: Vec<String> = uses
        .iter()
        .map(|u| {
            if weak.contains(u) {
                format!("({u} ? {u}() : 0)")
            } else {
                format!("{u}()")
            }
        })
        .collect();
    src.push_str(&format!(
        "int user(void) {{ return {}; }}\n",
        calls.join(" + ")
    ));
    lab.cc(
        "c/libuser.so",
        "libuser.so",
        &src,
        &[
            format!("-L{}", lab.p(link_dir).display()),
            "-l:libdep.so.1".into(),
            runpath(&lab.p(link_dir)),
        ],
    )
}

/// The C++ ABI class: an extension built against a libc10 that had a function the installed
/// one lacks. Unversioned symbols are resolved in the whole lookup scope, and glibc's first
/// undefined one (in relocation order) is the one predicted.
#[test]
fn an_unversioned_symbol_no_library_defines_is_glibcs_undefined_symbol() {
    need_tools!();
    let lab = Lab::new();
    let (a, b, c) = (
        "_ZN3c106detail14torchCheckFailEPKc",
        "_ZN3c104cuda29c10_cuda_check_implementationEi",
        "_ZN3c1010TensorImpl4sizeEl",
    );
    plain_dep(&lab, "built", &[a, b, c]);
    plain_dep(&lab, "installed", &[a]);
    let user = plain_consumer(&lab, "built", &[a, c, b], &[]);
    assert!(matches!(lab.agree(&[&user], None), Outcome::Loads { .. }));
    let ld = lab.p("installed").display().to_string();
    // glibc names one of the two missing symbols; gpudoctor must name the same one first.
    let got = lab.agree(&[&user], Some(&ld));
    assert!(
        matches!(&got, Outcome::Fails(m) if m.starts_with(&format!("{}: undefined symbol: _ZN3c10", user.display()))
            && !m.contains(", version")),
        "{got:?}"
    );
    let (_, report) = lab.predicted(&[&user], Some(&ld));
    let failures: Vec<&str> = report["environments"][0]["modules"][0]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert_eq!(
        failures.len(),
        2,
        "both missing symbols are listed: {failures:?}"
    );
    // A weak reference to a missing symbol never fails the load.
    let weak_user = plain_consumer(&lab, "built", &[a, b], &[b]);
    assert!(matches!(
        lab.agree(&[&weak_user], Some(&ld)),
        Outcome::Loads { .. }
    ));
}

/// A symbol a dependency of a dependency defines is in the lookup scope (breadth-first
/// closure), as is one of a library the process loaded before: no false undefined symbol.
#[test]
fn symbols_from_the_whole_closure_resolve() {
    need_tools!();
    let lab = Lab::new();
    let sym = "_ZN3c1010TensorImpl4sizeEl";
    plain_dep(&lab, "deep", &[sym]);
    // A middle library that needs libdep but defines nothing the user calls.
    let middle = lab.cc(
        "m/libmiddle.so",
        "libmiddle.so",
        "extern int _ZN3c1010TensorImpl4sizeEl(void);\nint middle(void) { return _ZN3c1010TensorImpl4sizeEl(); }\n",
        &[
            format!("-L{}", lab.p("deep").display()),
            "-l:libdep.so.1".into(),
            runpath(&lab.p("deep")),
        ],
    );
    // The user links libmiddle only, and resolves the symbol through middle's dependency
    // (--allow-shlib-undefined lets the linker accept it, as prebuilt extensions are).
    let user = lab.cc(
        "u/libuser.so",
        "libuser.so",
        "extern int _ZN3c1010TensorImpl4sizeEl(void);\nint user(void) { return _ZN3c1010TensorImpl4sizeEl(); }\n",
        &[
            "-Wl,--no-as-needed".into(),
            format!("-L{}", lab.p("m").display()),
            "-l:libmiddle.so".into(),
            runpath(&lab.p("m")),
        ],
    );
    let got = lab.agree(&[middle.as_path(), user.as_path()], None);
    assert!(matches!(got, Outcome::Loads { .. }), "{got:?}");
}
