//! The release artifacts of `pkg/build-release`, taken apart and used as a user would: the
//! archives' contents and checksums, the glibc floor of both binaries, the x86_64 binary
//! loading the (fake) NVML and libcuda, the aarch64 binary under qemu agreeing with the x86_64
//! one, the wheel installed by pip, uv and pipx, the .deb installed by dpkg in a Debian root,
//! and the image built from pkg/Containerfile by buildah.
//!
//! They run when GPUDOCTOR_RELEASE_DIR names the output of `pkg/build-release DIR`; `.ci/run`
//! builds it and sets GPUDOCTOR_REQUIRE_RELEASE=1, so that a missing artifact or tool fails.
//! The tools: GPUDOCTOR_PACKAGING_TOOLS (.ci/fetch-packaging-tools), GPUDOCTOR_RUST_ROOT
//! (.ci/fetch-rust-root), GPUDOCTOR_IMAGE_STORE (.ci/fetch-base-image), qemu-aarch64-static.

use crate::util;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::gpu_node::GpuNode;
use crate::util::{gpu_host, install_commands, FakeRoot, ALICE};
use object::read::elf::{Dyn, FileHeader};
use sha2::{Digest, Sha256};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const ARCHES: [(&str, &str); 2] = [("x86_64", "amd64"), ("aarch64", "arm64")];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn required() -> bool {
    std::env::var_os("GPUDOCTOR_REQUIRE_RELEASE").is_some()
}

/// The output folder of pkg/build-release, or None (the test says it was skipped).
fn release_dir() -> Option<PathBuf> {
    match std::env::var_os("GPUDOCTOR_RELEASE_DIR") {
        Some(d) => Some(PathBuf::from(d)),
        None => {
            assert!(
                !required(),
                "GPUDOCTOR_REQUIRE_RELEASE is set but GPUDOCTOR_RELEASE_DIR is not"
            );
            crate::util::skip(format_args!(
                "GPUDOCTOR_RELEASE_DIR unset: run `pkg/build-release DIR` and export it (.ci/run \
                 does)"
            ));
            None
        }
    }
}

/// A tool the test needs, from a variable or PATH; None (skipped) unless required.
fn tool(var: &str, fallback: &str) -> Option<PathBuf> {
    let found = match std::env::var_os(var) {
        Some(p) => Some(PathBuf::from(p)),
        None => which::which(fallback).ok(),
    };
    match found {
        Some(p) if p.exists() => Some(p),
        _ => {
            assert!(
                !required(),
                "GPUDOCTOR_REQUIRE_RELEASE is set but {fallback} is missing (set {var})"
            );
            crate::util::skip(format_args!("{fallback} not found (set {var})"));
            None
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid only reads the process's credentials.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root || !required(),
        "GPUDOCTOR_REQUIRE_RELEASE is set but chroot and buildah need root"
    );
    root
}

/// Runs a command that must succeed; its output.
fn ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn archive_name(arch: &str) -> String {
    format!("gpudoctor-{VERSION}-{arch}-unknown-linux-gnu")
}

fn sha256_hex(path: &Path) -> String {
    let data = fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Sha256::digest(&data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The archive of `arch` unpacked into a temporary folder; the folder and the binary's path.
fn unpack(dir: &Path, arch: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let archive = dir.join(format!("{}.tar.gz", archive_name(arch)));
    ok(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(tmp.path()));
    let bin = tmp.path().join(archive_name(arch)).join("gpudoctor");
    (tmp, bin)
}

#[test]
fn archives_hold_the_binary_completions_man_page_and_licenses() {
    let Some(dir) = release_dir() else { return };
    for (arch, _) in ARCHES {
        let name = archive_name(arch);
        let archive = dir.join(format!("{name}.tar.gz"));
        let listing = stdout(&ok(Command::new("tar").arg("-tzvf").arg(&archive)));
        let entries: BTreeSet<String> = listing
            .lines()
            .map(|l| l.split_whitespace().last().unwrap().to_string())
            .collect();
        let expected: BTreeSet<String> = [
            "",
            "gpudoctor",
            "README.md",
            "CHANGELOG.md",
            "LICENSE-MIT",
            "LICENSE-APACHE",
            "man/",
            "man/gpudoctor.1",
            "completions/",
            "completions/gpudoctor.bash",
            "completions/_gpudoctor",
            "completions/gpudoctor.fish",
            "completions/gpudoctor.elv",
            "completions/_gpudoctor.ps1",
            "slurm/",
            "slurm/gpudoctor-prolog",
        ]
        .iter()
        .map(|e| format!("{name}/{e}"))
        .collect();
        assert_eq!(entries, expected, "{}", archive.display());
        // Owned by root, not by whoever built it; the binary executable.
        for line in listing.lines() {
            assert!(line.contains(" 0/0 "), "not owned by 0/0: {line}");
        }
        assert!(
            listing
                .lines()
                .any(|l| l.starts_with("-rwxr-xr-x") && l.ends_with(&format!("{name}/gpudoctor"))),
            "{listing}"
        );

        // The .sha256 file is `sha256sum -c` input for exactly this archive.
        let sums = fs::read_to_string(dir.join(format!("{name}.tar.gz.sha256"))).unwrap();
        assert_eq!(
            sums,
            format!("{}  {name}.tar.gz\n", sha256_hex(&archive)),
            "{name}.tar.gz.sha256"
        );

        // The man page and completions are the repository's (which tests/it/man.rs and
        // tests/it/completions.rs keep in sync with the CLI).
        let (tmp, _) = unpack(&dir, arch);
        let root = tmp.path().join(&name);
        for (packed, source) in [
            ("man/gpudoctor.1", "man/gpudoctor.1"),
            ("completions/gpudoctor.bash", "completions/gpudoctor.bash"),
            ("completions/_gpudoctor", "completions/_gpudoctor"),
            ("completions/gpudoctor.fish", "completions/gpudoctor.fish"),
            ("LICENSE-APACHE", "LICENSE-APACHE"),
            ("slurm/gpudoctor-prolog", "pkg/slurm/gpudoctor-prolog"),
        ] {
            assert_eq!(
                fs::read(root.join(packed)).unwrap(),
                fs::read(repo().join(source)).unwrap(),
                "{name}/{packed} differs from {source}"
            );
        }
    }

    // SHA256SUMS names every artifact, and each sum is right.
    let sums = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let mut named = BTreeSet::new();
    for line in sums.lines() {
        let (hex, file) = line.split_once("  ").expect("`HEX  NAME` lines");
        assert_eq!(hex, sha256_hex(&dir.join(file)), "SHA256SUMS: {file}");
        named.insert(file.to_string());
    }
    let artifacts: BTreeSet<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tar.gz") || n.ends_with(".whl") || n.ends_with(".deb"))
        .collect();
    assert_eq!(named, artifacts);
    assert_eq!(
        artifacts.len(),
        6,
        "two archives, two wheels, two .debs: {artifacts:?}"
    );
}

/// The highest `GLIBC_x.y` a binary requires, its DT_NEEDED libraries and its ELF machine.
fn elf_needs(path: &Path) -> ((u32, u32), BTreeSet<String>, u16) {
    let data = fs::read(path).unwrap();
    let data = &data[..];
    let header = object::elf::FileHeader64::<object::Endianness>::parse(data).unwrap();
    let endian = header.endian().unwrap();
    let sections = header.sections(endian, data).unwrap();
    let mut highest = (0, 0);
    let (mut verneeds, link) = sections
        .gnu_verneed(endian, data)
        .unwrap()
        .expect("a dynamically linked binary has version needs");
    let strings = sections.strings(endian, data, link).unwrap();
    while let Some((_, mut auxs)) = verneeds.next().unwrap() {
        while let Some(aux) = auxs.next().unwrap() {
            let name = String::from_utf8_lossy(aux.name(endian, strings).unwrap()).into_owned();
            if let Some(v) = name.strip_prefix("GLIBC_") {
                let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
                let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
                highest = highest.max(version);
            }
        }
    }
    let (dyns, link) = sections.dynamic(endian, data).unwrap().expect("dynamic");
    let dynstr = sections.strings(endian, data, link).unwrap();
    let needed = dyns
        .iter()
        .filter(|d| d.tag(endian) == object::elf::DT_NEEDED)
        .map(|d| String::from_utf8_lossy(d.string(endian, dynstr).unwrap()).into_owned())
        .collect();
    (highest, needed, header.e_machine(endian).0)
}

#[test]
fn release_binaries_need_glibc_2_17_at_most_and_nothing_but_the_c_library() {
    let Some(dir) = release_dir() else { return };
    let allowed = [
        "libc.so.6",
        "libm.so.6",
        "libdl.so.2",
        "libpthread.so.0",
        "librt.so.1",
        "libgcc_s.so.1",
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
    ];
    for (arch, machine) in [
        ("x86_64", object::elf::EM_X86_64.0),
        ("aarch64", object::elf::EM_AARCH64.0),
    ] {
        let (_tmp, bin) = unpack(&dir, arch);
        let (glibc, needed, found_machine) = elf_needs(&bin);
        assert_eq!(found_machine, machine, "{arch}: ELF machine");
        assert!(
            ((2, 2)..=(2, 17)).contains(&glibc),
            "{arch}: needs GLIBC_{}.{} (RHEL 7 and Ubuntu 14.04 have 2.17)",
            glibc.0,
            glibc.1
        );
        // NVML and libcuda are opened at run time, never linked: a machine without the
        // driver still runs gpudoctor.
        for lib in &needed {
            assert!(allowed.contains(&lib.as_str()), "{arch} links {lib}");
        }
        assert!(needed.contains("libc.so.6"), "{arch}: {needed:?}");
    }
}

/// `check --format json` by the binary `bin` on the node, with its fake NVML and libcuda
/// (the smoke test runs on the fake GPUs).
fn release_check(bin: &Path, node: &GpuNode) -> (i32, serde_json::Value) {
    let cuda = node.cuda.as_ref().expect("a node with the fake libcuda");
    let out = Command::new(bin)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .args(["check", "--format", "json", "--root"])
        .arg(node.root.path())
        .arg("--nvml-lib")
        .arg(util::fake_nvml::fake_nvml_lib())
        .env(
            util::fake_nvml::FAKE_NVML_ENV,
            node.nvml.write(&node.dir.path().join("nvml-release")),
        )
        .arg("--cuda-lib")
        .arg(util::fake_cuda::fake_cuda_lib())
        .env(
            util::fake_cuda::FAKE_CUDA_ENV,
            cuda.write(&node.dir.path().join("cuda-release")),
        )
        .args(["--matmul-size", "48", "--transfer-size", "4"])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// What a report concludes, without what differs from run to run (timings, the binary).
fn verdicts(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["title"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_release_binary_loads_nvml_and_libcuda_as_the_test_build_does() {
    let Some(dir) = release_dir() else { return };
    let (_tmp, bin) = unpack(&dir, "x86_64");
    let version = ok(Command::new(&bin).arg("--version"));
    assert_eq!(stdout(&version).trim(), format!("gpudoctor {VERSION}"));

    // Two H100s through the fake NVML and libcuda: the zig-linked binary opens both by path,
    // reads the GPUs and runs the smoke test on them exactly as the test build does.
    let node = GpuNode::new(2);
    let (code, report) = release_check(&bin, &node);
    let nvml = &report["snapshot"]["nvml"]["result"];
    assert_eq!(nvml["status"], "ok", "{nvml:#}");
    let gpus = nvml["system"]["devices"].as_array().expect("devices");
    assert_eq!(gpus.len(), 2, "{nvml:#}");
    assert!(
        gpus.iter()
            .all(|g| g["name"]["value"].as_str().unwrap_or("").contains("H100")),
        "{nvml:#}"
    );
    assert_eq!(report["snapshot"]["probes"]["smoke"]["status"], "ok");
    let smoke = report["snapshot"]["smoke"].to_string();
    assert!(smoke.contains("pinned_h2d_gbps"), "{smoke}");
    let (test_code, test_report) = util::json(node.cmd().arg("check"));
    assert_eq!(code, test_code);
    assert_eq!(verdicts(&report), verdicts(&test_report));
}

/// A host with problems of several kinds, so that agreement means something: an old driver
/// under a newer toolkit, a device node alice cannot open (and, in the process environment, a
/// leftover debug switch).
fn broken_host() -> FakeRoot {
    let r = gpu_host("470.82.01", "NVIDIA A100-SXM4-40GB");
    r.toolkit("usr/local/cuda-12.4", "12.4.1")
        .link("/usr/local/cuda-12.4", "usr/local/cuda")
        .node("nvidia0", 0o660);
    r
}

#[test]
fn the_aarch64_binary_under_qemu_reports_what_the_x86_64_binary_reports() {
    let Some(dir) = release_dir() else { return };
    let Some(qemu) = tool("GPUDOCTOR_QEMU_AARCH64", "qemu-aarch64-static") else {
        return;
    };
    let Some(sysroot) = tool("GPUDOCTOR_RUST_ROOT", "/nonexistent/rust-root") else {
        return;
    };
    let (_x, x86) = unpack(&dir, "x86_64");
    let (_a, arm) = unpack(&dir, "aarch64");
    let tree = broken_host();
    let args = |format: &str| -> Vec<String> {
        vec![
            "check".into(),
            "--root".into(),
            tree.path().display().to_string(),
            "--user".into(),
            ALICE.into(),
            "--format".into(),
            format.into(),
        ]
    };
    let run = |mut cmd: Command, format: &str| -> (i32, String) {
        cmd.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100")
            .env("CUDA_LAUNCH_BLOCKING", "1")
            .args(args(format));
        let out = cmd.output().unwrap();
        (out.status.code().unwrap_or(-1), stdout(&out))
    };
    let mut arm_cmd = Command::new(&qemu);
    // The aarch64 C library comes from the Debian root it was built in.
    arm_cmd.arg("-L").arg(&sysroot).arg(&arm);
    let (arm_code, arm_json) = run(arm_cmd, "json");
    let (x86_code, x86_json) = run(Command::new(&x86), "json");
    let arm_report: serde_json::Value = serde_json::from_str(&arm_json)
        .unwrap_or_else(|e| panic!("aarch64 output is not JSON ({e}): {arm_json}"));
    let x86_report: serde_json::Value = serde_json::from_str(&x86_json).unwrap();
    assert_eq!(arm_code, x86_code);
    assert_eq!(x86_code, 1, "the broken host has errors: {x86_json}");
    let codes = verdicts(&x86_report);
    assert!(codes.len() >= 3, "{codes:?}");
    assert_eq!(verdicts(&arm_report), codes);
    // The terminal report too, word for word but for the timing line.
    let mut arm_cmd = Command::new(&qemu);
    arm_cmd.arg("-L").arg(&sysroot).arg(&arm);
    let (_, arm_text) = run(arm_cmd, "human");
    let (_, x86_text) = run(Command::new(&x86), "human");
    let untimed = |s: &str| -> String {
        s.lines()
            .filter(|l| !l.contains(" ms") && !l.contains("µs"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(untimed(&arm_text), untimed(&x86_text));
}

/// The distribution pyproject.toml builds, as its wheel's file names spell it (`gpudoctor_cli`).
fn wheel_stem() -> String {
    install_commands::wheel_stem(&install_commands::python_distribution(repo()))
}

/// The wheel's file name for `arch`.
fn wheel(dir: &Path, arch: &str) -> PathBuf {
    let stem = wheel_stem();
    let path = dir.join(format!(
        "{stem}-{VERSION}-py3-none-manylinux2014_{arch}.manylinux_2_17_{arch}.whl"
    ));
    assert!(path.exists(), "{} is missing", path.display());
    path
}

/// The names and sizes in a wheel, and its METADATA, through Python's zipfile.
fn wheel_contents(path: &Path) -> (Vec<(String, u64)>, String) {
    let script = r#"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    print(f"{i.file_size}\t{i.filename}")
meta = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")][0]
print("---METADATA---")
sys.stdout.write(z.read(meta).decode())
"#;
    let out = stdout(&ok(Command::new("python3").arg("-c").arg(script).arg(path)));
    let (files, meta) = out.split_once("---METADATA---\n").unwrap();
    let files = files
        .lines()
        .map(|l| {
            let (size, name) = l.split_once('\t').unwrap();
            (name.to_string(), size.parse().unwrap())
        })
        .collect();
    (files, meta.to_string())
}

#[test]
fn the_wheels_carry_the_binary_and_complete_metadata() {
    let Some(dir) = release_dir() else { return };
    for (arch, _) in ARCHES {
        let path = wheel(&dir, arch);
        let (files, meta) = wheel_contents(&path);
        let names: BTreeSet<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        let stem = wheel_stem();
        let data = format!("{stem}-{VERSION}.data/scripts/gpudoctor");
        assert!(names.contains(data.as_str()), "{arch}: {names:?}");
        for module in ["gpudoctor/__init__.py", "gpudoctor/__main__.py"] {
            assert!(names.contains(module), "{arch}: no {module}");
        }
        // Nothing but the binary, the module, metadata and licenses.
        for name in &names {
            assert!(
                name.starts_with("gpudoctor/")
                    || name.starts_with(&format!("{stem}-{VERSION}.dist-info/"))
                    || *name == data,
                "{arch}: unexpected {name}"
            );
        }
        // The wheel is the binary compressed, not more.
        let binary = files.iter().find(|(n, _)| *n == data).unwrap().1;
        let wheel_size = fs::metadata(&path).unwrap().len();
        assert!(
            wheel_size < binary,
            "{arch}: wheel {wheel_size} B, binary {binary} B"
        );
        let (_tmp, archived) = unpack(&dir, arch);
        assert_eq!(
            binary,
            fs::metadata(archived).unwrap().len(),
            "{arch}: same binary"
        );

        for field in [
            "Metadata-Version: 2.4",
            &format!("Name: {}\n", install_commands::python_distribution(repo())),
            &format!("Version: {VERSION}"),
            "Summary: Doctor and device inspector for NVIDIA GPU / CUDA / PyTorch environments",
            "License-Expression: MIT OR Apache-2.0",
            "License-File: LICENSE-MIT",
            "License-File: LICENSE-APACHE",
            "Requires-Python: >=3.8",
            "Classifier: Operating System :: POSIX :: Linux",
            "Classifier: Environment :: GPU :: NVIDIA CUDA",
            "Project-URL: Repository, ",
            "Project-URL: Documentation, ",
            "Description-Content-Type: text/markdown",
        ] {
            assert!(
                meta.contains(field),
                "{arch}: METADATA lacks {field:?}:\n{meta}"
            );
        }
    }
}

/// The command docs/install.md's table gives for `channel` ("pip", "uv", "pipx"), as words.
fn documented_install_command(channel: &str) -> Vec<String> {
    let doc = fs::read_to_string(repo().join("docs/install.md")).unwrap();
    let row = doc
        .lines()
        .find(|l| l.starts_with('|') && l.contains(&format!("({channel}) |")))
        .unwrap_or_else(|| panic!("docs/install.md has no ({channel}) row"));
    let cell = row.split('|').nth(2).unwrap();
    let code = cell
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in {row:?}"));
    code.split_whitespace().map(str::to_string).collect()
}

#[test]
fn pip_uv_and_pipx_install_the_wheel_and_give_the_gpudoctor_command() {
    let Some(dir) = release_dir() else { return };
    let Some(tools) = tool("GPUDOCTOR_PACKAGING_TOOLS", "/nonexistent/packaging-tools") else {
        return;
    };
    let whl = wheel(&dir, "x86_64");
    let tmp = tempfile::tempdir().unwrap();
    // The wheel as PyPI would serve it: by its distribution's name from an index that holds it
    // (a find-links folder, nothing else), so that the documented commands run word for word.
    let index = tmp.path().join("index");
    fs::create_dir(&index).unwrap();
    fs::copy(&whl, index.join(whl.file_name().unwrap())).unwrap();
    let uv_config = tmp.path().join("uv.toml");
    fs::write(
        &uv_config,
        format!(
            "no-index = true\nfind-links = [{:?}]\n",
            index.to_str().unwrap()
        ),
    )
    .unwrap();
    let env = |cmd: &mut Command| {
        cmd.env("HOME", tmp.path())
            .env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", &index)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env("UV_CONFIG_FILE", &uv_config)
            .env("UV_CACHE_DIR", tmp.path().join("uv-cache"))
            .env("PIPX_HOME", tmp.path().join("pipx"))
            .env("PIPX_BIN_DIR", tmp.path().join("pipx-bin"))
            .env_remove("VIRTUAL_ENV");
    };
    let this_check = util::run(
        util::gpudoctor()
            .arg("check")
            .arg("--no-smoke")
            .arg("--json"),
    );
    let expected: serde_json::Value = serde_json::from_str(&this_check.stdout).unwrap();
    // A documented command that ends in `gpudoctor check` printed the report.
    let printed_a_check = |out: &Output, how: &str| {
        let text = stdout(out);
        assert!(
            text.starts_with(&format!("gpudoctor {VERSION}")),
            "{how}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{how}: exit {:?}",
            out.status
        );
    };

    // pip into a fresh venv, as docs/install.md says: the command, `python -m gpudoctor`, and
    // the check itself.
    let venv = tmp.path().join("venv");
    ok(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    let pip_words = documented_install_command("pip");
    assert_eq!(pip_words[..2], ["pip", "install"], "{pip_words:?}");
    let mut pip = Command::new(venv.join("bin/pip"));
    env(&mut pip);
    ok(pip.args(&pip_words[1..]));
    let shown = stdout(&ok(
        Command::new(venv.join("bin/pip")).args(["show", &pip_words[2]])
    ));
    assert!(
        shown.contains(&format!("\nVersion: {VERSION}\n")),
        "{shown}"
    );
    let out = ok(Command::new(venv.join("bin/gpudoctor")).arg("--version"));
    assert_eq!(stdout(&out).trim(), format!("gpudoctor {VERSION}"));
    let mut module = Command::new(venv.join("bin/python"));
    env(&mut module);
    let out = ok(module.args(["-m", "gpudoctor", "--version"]));
    assert_eq!(stdout(&out).trim(), format!("gpudoctor {VERSION}"));
    // Exit codes pass through `python -m`: an unknown option is a usage error (2).
    let mut bad = Command::new(venv.join("bin/python"));
    env(&mut bad);
    let out = bad
        .args(["-m", "gpudoctor", "--no-such-option"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-option"));
    let mut check = Command::new(venv.join("bin/gpudoctor"));
    check
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .args(["check", "--no-smoke", "--format", "json"]);
    let out = check.output().unwrap();
    assert_eq!(out.status.code(), Some(this_check.code));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdicts(&report), verdicts(&expected));

    // In a notebook: `gpudoctor.check()` is the JSON report as a dict, shown by IPython's
    // display formatter (what Jupyter and VS Code use) as the HTML page, and as the terminal
    // report in plain text; both rendered from that report by `check --from -`.
    let mut ipython = Command::new(venv.join("bin/pip"));
    env(&mut ipython);
    ok(ipython
        .args(["install", "--find-links"])
        .arg(tools.join("wheelhouse"))
        .arg("ipython"));
    let script = r#"
import json, gpudoctor
from IPython.core.formatters import DisplayFormatter
r = gpudoctor.check("--no-smoke")
data, _ = DisplayFormatter().format(r)
try:
    gpudoctor.check("--no-such-option")
    raised = ""
except RuntimeError as e:
    raised = str(e)
print(json.dumps({"exit": r.exit_code, "codes": [f["code"] for f in r.findings],
    "is_dict": isinstance(r, dict), "html": data.get("text/html", ""),
    "text": data.get("text/plain", ""), "raised": raised}))
"#;
    let mut notebook = Command::new(venv.join("bin/python"));
    env(&mut notebook);
    let out = ok(notebook.arg("-c").arg(script).env("PATH", "/usr/bin:/bin"));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["exit"], this_check.code);
    assert_eq!(shown["is_dict"], true);
    let codes: Vec<String> = verdicts(&expected).into_iter().map(|v| v.0).collect();
    assert_eq!(shown["codes"], serde_json::json!(codes));
    let html = shown["html"].as_str().unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<p class=\"verdict"), "{html}");
    let text = shown["text"].as_str().unwrap();
    assert!(text.starts_with(&format!("gpudoctor {VERSION}")), "{text}");
    assert!(!text.contains('\u{1b}'), "no colour in plain text");
    assert!(shown["raised"]
        .as_str()
        .unwrap()
        .contains("--no-such-option"));

    // uvx and pipx run it without a venv of the user's: docs/install.md's commands, word for
    // word, then the same with `--version` for the exact version.
    for channel in ["uv", "pipx"] {
        let words = documented_install_command(channel);
        let program = tools.join("bin").join(&words[0]);
        assert!(program.exists(), "{channel}: {words:?}");
        let mut documented = Command::new(&program);
        env(&mut documented);
        let out = documented.args(&words[1..]).output().unwrap();
        printed_a_check(&out, &words.join(" "));
        assert_eq!(words.last().map(String::as_str), Some("check"), "{words:?}");
        let mut version = Command::new(&program);
        env(&mut version);
        let out = ok(version.args(&words[1..words.len() - 1]).arg("--version"));
        assert_eq!(
            stdout(&out).trim(),
            format!("gpudoctor {VERSION}"),
            "{channel}"
        );
    }
}

#[test]
fn the_deb_installs_with_dpkg_in_a_debian_root_and_runs() {
    let Some(dir) = release_dir() else { return };
    for (arch, deb_arch) in ARCHES {
        let deb = dir.join(format!("gpudoctor_{VERSION}_{deb_arch}.deb"));
        let field = |name: &str| -> String {
            stdout(&ok(Command::new("dpkg-deb").arg("-f").arg(&deb).arg(name)))
                .trim()
                .to_string()
        };
        assert_eq!(field("Package"), "gpudoctor");
        assert_eq!(field("Version"), VERSION);
        assert_eq!(field("Architecture"), deb_arch, "{arch}");
        assert_eq!(field("Depends"), "libc6 (>= 2.17)");
        let listing = stdout(&ok(Command::new("dpkg-deb").arg("-c").arg(&deb)));
        for path in [
            "./usr/bin/gpudoctor",
            "./usr/libexec/gpudoctor/gpudoctor-prolog",
            "./usr/share/man/man1/gpudoctor.1.gz",
            "./usr/share/bash-completion/completions/gpudoctor",
            "./usr/share/zsh/vendor-completions/_gpudoctor",
            "./usr/share/fish/vendor_completions.d/gpudoctor.fish",
            "./usr/share/doc/gpudoctor/copyright",
            "./usr/share/doc/gpudoctor/changelog.gz",
        ] {
            assert!(
                listing
                    .lines()
                    .any(|l| l.ends_with(path) && l.contains("root/root")),
                "{deb_arch}: {path} missing or not root's:\n{listing}"
            );
        }
    }

    // Installed for real by dpkg in the Debian root, then removed again.
    if !is_root() {
        return;
    }
    let Some(root) = tool("GPUDOCTOR_RUST_ROOT", "/nonexistent/rust-root") else {
        return;
    };
    let deb = dir.join(format!("gpudoctor_{VERSION}_amd64.deb"));
    let inside = root.join("tmp/gpudoctor-test.deb");
    fs::copy(&deb, &inside).unwrap();
    let chroot = |args: &[&str]| -> Output {
        ok(Command::new(which::which("chroot").expect("chroot"))
            .arg(&root)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"))
    };
    chroot(&["dpkg", "-i", "/tmp/gpudoctor-test.deb"]);
    let result = std::panic::catch_unwind(|| {
        let version = chroot(&["gpudoctor", "--version"]);
        assert_eq!(stdout(&version).trim(), format!("gpudoctor {VERSION}"));
        let status = chroot(&[
            "dpkg-query",
            "-W",
            "-f",
            "${Status} ${Version}",
            "gpudoctor",
        ]);
        assert_eq!(stdout(&status), format!("install ok installed {VERSION}"));
        let files = chroot(&["dpkg", "-L", "gpudoctor"]);
        assert!(stdout(&files).contains("/usr/share/man/man1/gpudoctor.1.gz"));
        // The check runs in that root (no GPU there: GD001, exit code 0).
        let report = chroot(&["gpudoctor", "check", "--no-smoke", "--format", "json"]);
        let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
        assert!(
            util::codes(&report).contains(&"GD001".to_string()),
            "{report}"
        );
    });
    chroot(&["dpkg", "--purge", "gpudoctor"]);
    let _ = fs::remove_file(&inside);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
    assert!(
        !root.join("usr/bin/gpudoctor").exists(),
        "dpkg --purge left the binary"
    );
}

#[test]
fn the_containerfile_builds_an_image_that_runs_gpudoctor() {
    let Some(dir) = release_dir() else { return };
    if !is_root() {
        return;
    }
    let Some(store) = tool("GPUDOCTOR_IMAGE_STORE", "/nonexistent/image-store") else {
        return;
    };
    let Some(buildah) = tool("GPUDOCTOR_BUILDAH", "buildah") else {
        return;
    };
    let Some(umoci) = tool("GPUDOCTOR_UMOCI", "umoci") else {
        return;
    };
    let bah = |args: &[&str]| -> Output {
        let mut cmd = Command::new(&buildah);
        cmd.arg("--root")
            .arg(store.join("root"))
            .arg("--runroot")
            .arg(store.join("run"))
            .args(["--storage-driver", "vfs"])
            .args(args);
        ok(&mut cmd)
    };
    let tag = format!("localhost/gpudoctor-test:{VERSION}");
    let containerfile = repo().join("pkg/Containerfile");
    bah(&[
        "bud",
        "--pull-never",
        "--isolation",
        "chroot",
        "--arch",
        "amd64",
        "--build-arg",
        &format!("VERSION={VERSION}"),
        "-f",
        containerfile.to_str().unwrap(),
        "-t",
        &tag,
        dir.to_str().unwrap(),
    ]);
    let ctr = stdout(&bah(&["from", "--pull-never", &tag]))
        .trim()
        .to_string();
    let result = std::panic::catch_unwind(|| {
        let version = bah(&[
            "run",
            "--isolation",
            "chroot",
            &ctr,
            "--",
            "gpudoctor",
            "--version",
        ]);
        assert_eq!(stdout(&version).trim(), format!("gpudoctor {VERSION}"));
        // The image asks for GPUs (NVIDIA_VISIBLE_DEVICES=all) and was started without them:
        // GD062, an error, exit code 1.
        let json = Command::new(&buildah)
            .arg("--root")
            .arg(store.join("root"))
            .arg("--runroot")
            .arg(store.join("run"))
            .args(["--storage-driver", "vfs", "run", "--isolation", "chroot"])
            .arg(&ctr)
            .args(["--", "gpudoctor", "check", "--no-smoke", "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(json.status.code(), Some(1), "{json:?}");
        let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        let f = util::findings(&report, "GD062");
        assert!(f.len() == 1 && f[0]["severity"] == "error", "{report}");
        // buildah marks its containers as Podman's (/run/.containerenv): the CDI device.
        assert!(
            util::fix_commands(f[0]).contains("podman run --device nvidia.com/gpu=all"),
            "{report}"
        );
        // The configuration the DaemonSet relies on.
        let config = stdout(&bah(&["inspect", "--type", "image", &tag]));
        for needle in [
            "\"/usr/bin/gpudoctor\"",
            "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
            "NVIDIA_VISIBLE_DEVICES=all",
            &format!("\"org.opencontainers.image.version\": \"{VERSION}\""),
        ] {
            assert!(config.contains(needle), "image config lacks {needle}");
        }
    });
    bah(&["rm", &ctr]);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }

    // The image as an OCI layout, read back by umoci: the binary is in its layers.
    let layout = tempfile::tempdir().unwrap();
    let oci = layout.path().join("oci");
    bah(&["push", &tag, &format!("oci:{}:{VERSION}", oci.display())]);
    let stat = stdout(&ok(Command::new(&umoci)
        .arg("stat")
        .arg("--image")
        .arg(format!("{}:{VERSION}", oci.display()))));
    assert!(stat.contains("dpkg -i /tmp/gpudoctor.deb"), "{stat}");
    let bundle = layout.path().join("bundle");
    ok(Command::new(&umoci)
        .args(["raw", "unpack", "--rootless", "--image"])
        .arg(format!("{}:{VERSION}", oci.display()))
        .arg(&bundle));
    assert!(bundle.join("usr/bin/gpudoctor").is_file());
    assert!(bundle.join("usr/share/man/man1/gpudoctor.1.gz").is_file());
}

/// What `cargo package` ships: everything the tests read (the fakes' sources, fixtures,
/// snapshots, docs, man page, completions, the .ci scripts some tests run), and no build
/// output, cache or fuzz corpus.
#[test]
fn the_crate_ships_what_its_tests_need_and_no_caches() {
    // In the packaged crate itself (its tests run from the .crate) there is nothing to list.
    if repo().join("Cargo.toml.orig").exists() {
        crate::util::skip(format_args!(
            "this is the packaged crate: `cargo package --list` runs in a checkout"
        ));
        return;
    }
    let out = Command::new(env!("CARGO"))
        .current_dir(repo())
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo package --list: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: BTreeSet<String> = stdout(&out).lines().map(str::to_string).collect();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "src/main.rs",
        "tests/fake_nvml/lib.rs",
        "tests/fake_nvml/config.rs",
        "tests/fake_cuda/lib.rs",
        "tests/util/mod.rs",
        "tests/util/zsh_complete.zsh",
        "man/gpudoctor.1",
        "completions/_gpudoctor",
        "docs/codes.md",
        ".ci/run",
        ".ci/compat-refresh",
        ".ci/slurm-localhost",
    ] {
        assert!(files.contains(needed), "the crate lacks {needed}");
    }
    assert!(
        files.iter().any(|f| f.starts_with("tests/it/snapshots/")),
        "the crate lacks the snapshots"
    );
    for f in &files {
        assert!(
            !f.starts_with("target/")
                && !f.starts_with("fuzz/")
                && !f.contains("__pycache__")
                && !f.ends_with(".snap.new")
                && !f.ends_with(".pyc"),
            "the crate ships {f}"
        );
    }
    // The crate's tests are the repository's tests only if they read the same files: every
    // tracked file but the fuzz workspace (a package of its own) is in the crate. .ci/run
    // runs the suite once more without the tiers on this checkout instead of building the
    // unpacked crate again.
    let tracked = Command::new("git")
        .current_dir(repo())
        .args(["ls-files", "-z"])
        .output();
    match tracked {
        Ok(out) if out.status.success() => {
            let missing: Vec<String> = out
                .stdout
                .split(|&b| b == 0)
                .filter(|f| !f.is_empty())
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .filter(|f| !f.starts_with("fuzz/") && !files.contains(f))
                .collect();
            assert!(
                missing.is_empty(),
                "tracked files the crate does not ship: {missing:?}"
            );
        }
        _ => crate::util::skip(format_args!(
            "no git checkout here: the tracked files cannot be listed"
        )),
    }
}
