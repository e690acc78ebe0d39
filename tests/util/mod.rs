//! Test helpers: a fake filesystem root builder and a runner for the real binary.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub mod elf;
pub mod fake_cuda;
pub mod fake_nccl;
pub mod fake_nvml;
pub mod fatbin;
pub mod fix_truth;
pub mod fleet_nodes;
pub mod gpu_node;
pub mod image_tools;
pub mod install_commands;
pub mod ldcache;
pub mod loader_lab;
pub mod selftest;
use tempfile::TempDir;

/// Set by `.ci/run`: every test must do what it is for, so a test that would be skipped fails.
pub const REQUIRE_ALL: &str = "GPUDOCTOR_REQUIRE_ALL";

/// A test that cannot run here (a tool, a tier, root is missing) says why and passes; under
/// GPUDOCTOR_REQUIRE_ALL it fails, so a skipped tier never looks green in CI.
pub fn skip(why: std::fmt::Arguments) {
    assert!(
        std::env::var_os(REQUIRE_ALL).is_none(),
        "{REQUIRE_ALL} is set and this test would be skipped: {why}"
    );
    eprintln!("skipped: {why}");
}

/// The interpreter `python3` on PATH runs, by its own path: a version manager's shim
/// (pyenv's) rehashes after `-m pip install`, and concurrent rehashes fail each other.
pub fn python3() -> std::process::Command {
    static REAL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let real = REAL.get_or_init(|| {
        std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| PathBuf::from("python3"))
    });
    std::process::Command::new(real)
}

/// A fake system tree for `--root`, with accounts: alice (not in video), bob (in video).
pub struct FakeRoot {
    dir: TempDir,
}

pub const ALICE: &str = "alice";
pub const BOB: &str = "bob";

/// A GPU host: the NVIDIA modules at `driver`, its device nodes, and one GPU named `gpu`
/// bound to the driver.
pub fn gpu_host(driver: &str, gpu: &str) -> FakeRoot {
    let r = FakeRoot::new();
    r.modules(&["nvidia_uvm", "nvidia"]).nvidia_version(driver);
    r.node("nvidiactl", 0o666)
        .node("nvidia-uvm", 0o666)
        .node("nvidia0", 0o666);
    r.gpu("0000:18:00.0", Some("nvidia"))
        .driver_gpu("0000:18:00.0", gpu, 0);
    r
}

impl FakeRoot {
    /// A machine with Ubuntu 22.04, kernel 6.8 and no NVIDIA anything.
    pub fn new() -> FakeRoot {
        let r = FakeRoot {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        // SAFETY: getuid/getgid only read credentials.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        r.file(
            "etc/os-release",
            "NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\n",
        );
        r.file("proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
        r.file("proc/sys/kernel/arch", "x86_64\n");
        r.file(
            "proc/version",
            "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) (gcc 12.3.0) #45-Ubuntu SMP\n",
        );
        r.file("proc/modules", "ext4 1155072 1 - Live 0x0000000000000000\n");
        // Files the tests create are owned by the runner: name that uid "root" and its group "video".
        r.file(
            "etc/passwd",
            &format!("root:x:{uid}:{gid}:root:/root:/bin/sh\nalice:x:4242:4242::/home/alice:/bin/sh\nbob:x:4243:4243::/home/bob:/bin/sh\n"),
        );
        r.file(
            "etc/group",
            &format!("video:x:{gid}:bob\nalice:x:4242:\nbob:x:4243:\n"),
        );
        r.dir("dev");
        r.dir("sys/bus/pci/devices");
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn p(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn dir(&self, rel: &str) -> &Self {
        fs::create_dir_all(self.p(rel)).expect("mkdir");
        self
    }

    pub fn file(&self, rel: &str, content: &str) -> &Self {
        self.bytes(rel, content.as_bytes())
    }

    pub fn bytes(&self, rel: &str, content: &[u8]) -> &Self {
        let p = self.p(rel);
        fs::create_dir_all(p.parent().unwrap()).expect("mkdir");
        fs::write(&p, content).expect("write");
        self
    }

    pub fn chmod(&self, rel: &str, mode: u32) -> &Self {
        fs::set_permissions(self.p(rel), fs::Permissions::from_mode(mode)).expect("chmod");
        self
    }

    pub fn link(&self, target: &str, rel: &str) -> &Self {
        let p = self.p(rel);
        fs::create_dir_all(p.parent().unwrap()).expect("mkdir");
        let _ = fs::remove_file(&p);
        symlink(target, &p).expect("symlink");
        self
    }

    pub fn remove(&self, rel: &str) -> &Self {
        let p = self.p(rel);
        if p.is_dir() {
            fs::remove_dir_all(p).expect("rm -r");
        } else {
            fs::remove_file(p).expect("rm");
        }
        self
    }

    /// `/proc/modules` holding exactly these modules.
    pub fn modules(&self, names: &[&str]) -> &Self {
        let mut s = String::from("ext4 1155072 1 - Live 0x0000000000000000\n");
        for n in names {
            s.push_str(&format!("{n} 1000 0 - Live 0x0000000000000000 (POE)\n"));
        }
        self.file("proc/modules", &s)
    }

    /// The kernel files a loaded nvidia module creates.
    pub fn nvidia_version(&self, version: &str) -> &Self {
        self.file(
            "proc/driver/nvidia/version",
            &format!("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {version}  Release Build  (dvs-builder@U22-I3-H04-03-1)  Sat Sep 20 00:47:16 UTC 2025\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"),
        )
        .file("sys/module/nvidia/version", &format!("{version}\n"))
    }

    /// A PCI function of vendor 0x10de, laid out as sysfs does (a link into /sys/devices).
    pub fn pci(&self, addr: &str, device: &str, class: &str, driver: Option<&str>) -> &Self {
        let real = format!("sys/devices/pci0000:00/{addr}");
        self.file(&format!("{real}/vendor"), "0x10de\n")
            .file(&format!("{real}/device"), &format!("0x{device}\n"))
            .file(&format!("{real}/class"), &format!("0x{class}\n"))
            .file(&format!("{real}/subsystem_vendor"), "0x10de\n")
            .file(&format!("{real}/subsystem_device"), "0x1234\n")
            .link(
                &format!("../../../devices/pci0000:00/{addr}"),
                &format!("sys/bus/pci/devices/{addr}"),
            );
        if let Some(drv) = driver {
            self.dir(&format!("sys/bus/pci/drivers/{drv}"));
            self.link(
                &format!("../../../bus/pci/drivers/{drv}"),
                &format!("{real}/driver"),
            );
        }
        self
    }

    pub fn gpu(&self, addr: &str, driver: Option<&str>) -> &Self {
        self.pci(addr, "2330", "030200", driver)
    }

    /// The driver's per-GPU information file.
    pub fn driver_gpu(&self, addr: &str, model: &str, minor: u32) -> &Self {
        self.file(
            &format!("proc/driver/nvidia/gpus/{addr}/information"),
            &format!("Model: \t\t {model}\nIRQ:   \t\t 140\nGPU UUID: \t GPU-8e1f6a2c-0000-0000-0000-00000000000{minor}\nVideo BIOS: \t 96.00.74.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t {addr}\nDevice Minor: \t {minor}\n"),
        )
    }

    /// A device node (a regular file standing in for the character device) with a mode.
    pub fn node(&self, name: &str, mode: u32) -> &Self {
        self.file(&format!("dev/{name}"), "")
            .chmod(&format!("dev/{name}"), mode)
    }

    /// A healthy host: driver 580.95.05 loaded, `n` H100s bound to nvidia, every node 0666,
    /// CUDA 13.0 at /usr/local/cuda.
    pub fn healthy(n: usize) -> FakeRoot {
        let r = FakeRoot::new();
        r.modules(&["nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"])
            .nvidia_version("580.95.05");
        // The kernel log of a clean boot: the driver loaded, no Xid, no AER.
        r.file(
            "dev/kmsg",
            "5,0,0,-;Linux version 6.8.0-45-generic (buildd@lcy02-amd64-080)\n6,1,4100000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 09:52:47 UTC 2025\n",
        );
        r.node("nvidiactl", 0o666)
            .node("nvidia-uvm", 0o666)
            .node("nvidia-uvm-tools", 0o666)
            .node("nvidia-modeset", 0o666);
        for i in 0..n {
            let addr = format!("0000:{:02x}:00.0", 0x18 + i);
            r.gpu(&addr, Some("nvidia"))
                .driver_gpu(&addr, "NVIDIA H100 80GB HBM3", i as u32);
            r.node(&format!("nvidia{i}"), 0o666);
        }
        // A toolkit the driver supports, so builds have one (no GD022 note), and the
        // driver's libraries registered with the loader.
        r.toolkit("usr/local/cuda-13.0", "13.0.2")
            .link("/usr/local/cuda-13.0", "usr/local/cuda")
            .driver_libs("580.95.05")
            .ld_cache(&[
                ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
                (
                    "libnvidia-ml.so.1",
                    "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                ),
                (
                    "libcudart.so.13",
                    "/usr/local/cuda-13.0/lib64/libcudart.so.13",
                ),
            ]);
        r
    }

    /// A shared library `dir/real` (an ELF with `soname`), plus the soname link when the
    /// names differ, as ldconfig lays them out.
    pub fn lib(&self, dir: &str, real: &str, soname: &str, needed: &[&str]) -> &Self {
        self.bytes(
            &format!("{dir}/{real}"),
            &elf::shared_object(soname, needed),
        );
        if real != soname {
            self.link(real, &format!("{dir}/{soname}"));
        }
        self
    }

    /// A virtualenv at /venv (python 3.12) with torch `version` (`2.8.0+cu128`) whose
    /// torch/version.py says `cuda` (None for CPU builds) and whose METADATA pins `requires`
    /// (`nvidia-cudnn-cu12==9.10.2.21`); returns the site-packages path (relative).
    pub fn torch_venv(&self, version: &str, cuda: Option<&str>, requires: &[&str]) -> String {
        let site = "venv/lib/python3.12/site-packages".to_string();
        let base = version.split('+').next().unwrap();
        self.file("venv/pyvenv.cfg", "home = /usr/bin\n")
            .file(
                &format!("{site}/torch/version.py"),
                &format!(
                    "from typing import Optional\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n__version__ = '{version}'\ndebug = False\ncuda: Optional[str] = {}\ngit_version = 'ba56102387ef21a3b04b357e5b183d48f0afefc7'\nhip: Optional[str] = None\n",
                    cuda.map_or("None".to_string(), |c| format!("'{c}'"))
                ),
            );
        let mut md = format!(
            "Metadata-Version: 2.1\nName: torch\nVersion: {base}\nRequires-Dist: filelock\n"
        );
        for r in requires {
            md.push_str(&format!("Requires-Dist: {r}; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n"));
        }
        md.push_str("\nTensors and dynamic neural networks in Python\n");
        self.file(&format!("{site}/torch-{base}.dist-info/METADATA"), &md);
        site
    }

    /// An installed distribution (its dist-info directory) in `site`.
    pub fn dist(&self, site: &str, name: &str, version: &str) -> &Self {
        self.dir(&format!(
            "{site}/{}-{version}.dist-info",
            name.replace('-', "_")
        ))
    }

    /// torch's libraries in `site` as a CUDA 12 wheel has them: `libtorch_global_deps.so` and
    /// `libc10_cuda.so` needing `libcudart.so.12`, and `torch/_C` needing `libc10_cuda.so`
    /// through its RUNPATH.
    pub fn torch_cuda12_libs(&self, site: &str) -> &Self {
        let lib = format!("{site}/torch/lib");
        self.lib(
            &lib,
            "libtorch_global_deps.so",
            "libtorch_global_deps.so",
            &["libcudart.so.12"],
        )
        .lib(
            &lib,
            "libc10_cuda.so",
            "libc10_cuda.so",
            &["libcudart.so.12"],
        )
        .bytes(
            &format!("{site}/torch/_C.cpython-312-x86_64-linux-gnu.so"),
            &elf::shared_object_runpath("_C.so", &["libc10_cuda.so"], "$ORIGIN/lib"),
        )
    }

    /// An installed distribution whose METADATA declares `requires` (`torch==2.14.0`).
    pub fn dist_requiring(&self, site: &str, name: &str, version: &str, requires: &str) -> &Self {
        self.file(
            &format!(
                "{site}/{}-{version}.dist-info/METADATA",
                name.replace('-', "_")
            ),
            &format!(
                "Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nRequires-Dist: numpy\nRequires-Dist: {requires}\n\n{name}\n"
            ),
        )
    }

    /// `/etc/ld.so.cache` in glibc's current format, listing these (soname, path) pairs.
    pub fn ld_cache(&self, entries: &[(&str, &str)]) -> &Self {
        self.ld_cache_format(entries, ldcache::Format::New)
    }

    pub fn ld_cache_format(&self, entries: &[(&str, &str)], format: ldcache::Format) -> &Self {
        self.bytes("etc/ld.so.cache", &ldcache::write_cache(entries, format))
    }

    /// An NVIDIA-layout toolkit at `dir` (e.g. usr/local/cuda-12.4): version.json, nvcc that
    /// must never run under --root, headers, and libcudart with its soname links.
    pub fn toolkit(&self, dir: &str, version: &str) -> &Self {
        let parts: Vec<u32> = version.split('.').map(|p| p.parse().unwrap()).collect();
        let (major, minor) = (parts[0], parts[1]);
        self.file(
            &format!("{dir}/version.json"),
            &format!("{{\n   \"cuda\" : {{\n      \"name\" : \"CUDA SDK\",\n      \"version\" : \"{version}\"\n   }}\n}}\n"),
        );
        self.nvcc(&format!("{dir}/bin/nvcc"), version);
        self.file(
            &format!("{dir}/include/cuda_runtime_api.h"),
            &format!("#define CUDART_VERSION {}\n", major * 1000 + minor * 10),
        );
        let soname = if major <= 11 {
            format!("libcudart.so.{major}.0")
        } else {
            format!("libcudart.so.{major}")
        };
        self.lib(
            &format!("{dir}/lib64"),
            &format!("libcudart.so.{version}"),
            &soname,
            &[],
        );
        self.lib(
            &format!("{dir}/lib64/stubs"),
            "libcuda.so",
            "libcuda.so.1",
            &[],
        )
    }

    /// An executable `nvcc` script printing `nvcc --version` for `version`; under --root it
    /// must never run, so it also leaves a marker file next to itself.
    pub fn nvcc(&self, rel: &str, version: &str) -> &Self {
        let mm: Vec<&str> = version.split('.').collect();
        self.file(
            rel,
            &format!("#!/bin/sh\ntouch \"$(dirname \"$0\")/RAN\"\necho 'Cuda compilation tools, release {}.{}, V{version}'\n", mm[0], mm[1]),
        )
        .chmod(rel, 0o755)
    }

    /// The driver's user-space libraries at `version` in the multiarch directory.
    pub fn driver_libs(&self, version: &str) -> &Self {
        let dir = "usr/lib/x86_64-linux-gnu";
        self.lib(dir, &format!("libcuda.so.{version}"), "libcuda.so.1", &[])
            .lib(
                dir,
                &format!("libnvidia-ml.so.{version}"),
                "libnvidia-ml.so.1",
                &[],
            )
            .lib(
                dir,
                &format!("libnvidia-ptxjitcompiler.so.{version}"),
                "libnvidia-ptxjitcompiler.so.1",
                &[],
            )
    }

    /// `gpudoctor ARGS… --root ROOT` with a clean environment and no colour.
    pub fn cmd(&self) -> Command {
        let mut c = gpudoctor();
        c.arg("--root").arg(self.path());
        c
    }
}

/// target/<profile>/examples/lib<example>.so, the fake driver library `cargo test` built
/// from tests/<example>/ next to the running test binary; `env_override` names a variable
/// that points elsewhere. A library older than its sources is refused: `cargo test --test
/// it` does not rebuild examples.
pub fn example_cdylib(example: &str, env_override: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env_override) {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current_exe");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps");
    let lib = profile.join("examples").join(format!("lib{example}.so"));
    let built = fs::metadata(&lib)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| {
            panic!(
                "{} is not built: run a plain `cargo test` (it builds examples; `--test NAME` \
                 alone does not) or `cargo build --example {example}` first",
                lib.display()
            )
        });
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(example);
    let newest = fs::read_dir(&src)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.metadata().ok()?.modified().ok())
        .max();
    assert!(
        newest.is_none_or(|t| t <= built),
        "{} is older than {}: run `cargo build --example {example}` (or a plain `cargo test`)",
        lib.display(),
        src.display()
    );
    lib
}

/// The real binary with a clean, deterministic environment.
pub fn gpudoctor() -> Command {
    let mut c = Command::cargo_bin("gpudoctor").expect("binary");
    c.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100");
    c
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("run gpudoctor");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs the commands at once (most of a fake-GPU check is waiting on timeouts and copy
/// floors), returning their results in order.
#[allow(dead_code)]
pub fn run_all(cmds: Vec<Command>) -> Vec<Run> {
    std::thread::scope(|s| {
        let running: Vec<_> = cmds
            .into_iter()
            .map(|mut c| s.spawn(move || run(&mut c)))
            .collect();
        running
            .into_iter()
            .map(|h| h.join().expect("a command thread panicked"))
            .collect()
    })
}

/// `check --json` parsed loosely, for tests that look at a few fields.
pub fn json(cmd: &mut Command) -> (i32, serde_json::Value) {
    let r = run(cmd.arg("--json"));
    let v = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", r.stdout, r.stderr));
    (r.code, v)
}

/// The findings with this code.
pub fn findings<'a>(report: &'a serde_json::Value, code: &str) -> Vec<&'a serde_json::Value> {
    report["findings"]
        .as_array()
        .expect("findings array")
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// Whether any of these findings has a title containing `needle`.
pub fn any_title(findings: &[&serde_json::Value], needle: &str) -> bool {
    findings
        .iter()
        .any(|f| f["title"].as_str().unwrap_or("").contains(needle))
}

pub fn codes(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings array")
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

/// Every fix command of a finding, joined, for `contains` checks.
pub fn fix_commands(finding: &serde_json::Value) -> String {
    finding["fix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["text"].as_str().unwrap_or(""),
                f["command"].as_str().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Human output with the temporary root path replaced, for snapshots.
pub fn human(root: &FakeRoot, cmd: &mut Command) -> (i32, String) {
    let r = run(cmd);
    (
        r.code,
        r.stdout
            .replace(&root.path().display().to_string(), "[ROOT]"),
    )
}

/// Codes of a report's errors and warnings (info findings are context).
pub fn serious_codes(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}
