//! Layouts no one here wrote: Debian's real CUDA 11.8 toolkit and NVIDIA 535 driver
//! packages unpacked by `.ci/fetch-debian-cuda`, and this machine itself.

use crate::util::*;
use serde_json::Value;

/// The tree `.ci/run` builds; the test says so and stops when it was not built.
fn debian_tree() -> Option<std::path::PathBuf> {
    match std::env::var_os("GPUDOCTOR_DEBIAN_TREE") {
        Some(p) => Some(p.into()),
        None => {
            crate::util::skip(format_args!("GPUDOCTOR_DEBIAN_TREE unset: run .ci/fetch-debian-cuda DIR and export it (.ci/run does)"));
            None
        }
    }
}

fn library<'a>(v: &'a Value, soname: &str) -> &'a Value {
    v["snapshot"]["libraries"]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["soname"] == soname)
        .unwrap_or_else(|| panic!("no {soname}: {:#}", v["snapshot"]["libraries"]))
}

#[test]
fn debian_bookworm_cuda_11_8_and_driver_535() {
    let Some(tree) = debian_tree() else { return };
    assert!(
        tree.join(".gpudoctor-debian-cuda.manifest").exists(),
        "{} is not a tree built by .ci/fetch-debian-cuda",
        tree.display()
    );
    let (_, v) = json(gpudoctor().arg("--root").arg(&tree).arg("check"));

    // The toolkit in Debian's layout: /usr/bin/nvcc is a wrapper script for
    // /usr/lib/nvidia-cuda-toolkit/bin/nvcc, and no version file exists.
    let tk = &v["snapshot"]["toolkits"];
    let installs = tk["installs"].as_array().unwrap();
    assert_eq!(installs.len(), 1, "{tk:#}");
    let t = &installs[0];
    assert_eq!(t["root"], "/usr/lib/nvidia-cuda-toolkit");
    assert_eq!(t["kind"], "distribution");
    assert_eq!(t["cuda"], "11.8");
    assert_eq!(t["version"]["value"], "11.8.89");
    assert_eq!(t["nvcc"], "/usr/lib/nvidia-cuda-toolkit/bin/nvcc");
    let routes: Vec<&str> = t["found"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["route"].as_str().unwrap())
        .collect();
    assert!(routes.contains(&"nvcc_on_path"), "{routes:?}");
    assert!(routes.contains(&"debian_package"), "{routes:?}");
    assert_eq!(tk["nvcc_on_path"]["path"], "/usr/bin/nvcc");
    assert_eq!(tk["cuda_home"]["path"], "/usr");
    assert_eq!(tk["cuda_home"]["toolkit"], 0);

    // The driver's libraries through the real ldconfig's cache and the alternatives links.
    let cache = &v["snapshot"]["libraries"]["search"]["cache"]["value"];
    assert_eq!(cache["format"], "new");
    for soname in [
        "libcuda.so.1",
        "libnvidia-ml.so.1",
        "libnvidia-ptxjitcompiler.so.1",
    ] {
        let lib = library(&v, soname);
        let c = &lib["candidates"][lib["winner"].as_u64().unwrap() as usize];
        assert_eq!(c["via"], "ld_so_cache", "{lib:#}");
        assert_eq!(c["version"], "535.261.03", "{lib:#}");
        assert_eq!(c["elf_soname"], soname);
        assert!(c["target"]
            .as_str()
            .unwrap()
            .starts_with("/usr/lib/x86_64-linux-gnu/nvidia/current/"));
    }
    let rt = library(&v, "libcudart.so.11.0");
    let c = &rt["candidates"][rt["winner"].as_u64().unwrap() as usize];
    assert_eq!(c["version"], "11.8.89");
    assert_eq!(c["elf_soname"], "libcudart.so.11.0");

    // 11.8 runs on 535; kernel module and libraries agree: no toolkit or driver finding.
    for code in [
        "GD017", "GD018", "GD019", "GD020", "GD021", "GD024", "GD028",
    ] {
        assert!(findings(&v, code).is_empty(), "{code}: {:#}", v["findings"]);
    }

    let out = run(gpudoctor().arg("--root").arg(&tree).arg("toolkit"));
    for needle in [
        "/usr/lib/nvidia-cuda-toolkit  11.8.89",
        "compiles for: sm_35 – sm_90",
        "libcuda.so.1  535.261.03",
    ] {
        assert!(
            out.stdout.contains(needle),
            "missing {needle:?}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn this_machine_loader_cache_matches_ldconfig() {
    // `ldconfig -p` prints "N libs found in cache `/etc/ld.so.cache'" first.
    let Ok(out) = std::process::Command::new("ldconfig").arg("-p").output() else {
        crate::util::skip(format_args!("no ldconfig on this machine"));
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(count) = text
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
    else {
        crate::util::skip(format_args!("unexpected ldconfig -p output"));
        return;
    };
    let r = run(gpudoctor().args(["toolkit", "--json"]));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("toolkit --json");
    assert_eq!(v["search_path"]["cache"]["value"]["entries"], count);
    // Every library it lists has its candidates in the loader's order.
    for lib in v["libraries"].as_array().unwrap() {
        let order: Vec<&str> = lib["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["via"].as_str().unwrap())
            .collect();
        let rank = |via: &str| {
            ["ld_library_path", "ld_so_cache", "default_dir"]
                .iter()
                .position(|v| *v == via)
        };
        assert!(
            order.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
            "{order:?}"
        );
    }
}

/// Whether this machine's kernel has the NVIDIA driver (then the tests below that need
/// its absence say so and stop).
fn nvidia_module_here() -> bool {
    std::fs::read_to_string("/proc/modules")
        .map(|m| m.lines().any(|l| l.starts_with("nvidia ")))
        .unwrap_or(false)
        || std::path::Path::new("/proc/driver/nvidia").exists()
}

/// Runs gpudoctor with `args` as root in a private mount namespace on a fresh /dev (null,
/// zero, urandom), so what the driver libraries make there lands nowhere else and nodes
/// others made on this machine cannot hide it. Returns the report (stdout) and the /dev
/// entries beyond those three, as `name type major:minor mode`. None when not root or no
/// namespace can be made.
fn on_a_fresh_dev(args: &[&std::ffi::OsStr]) -> Option<(Value, Vec<String>)> {
    // SAFETY: geteuid only reads credentials.
    if unsafe { libc::geteuid() } != 0 {
        crate::util::skip(format_args!(
            "not root: the driver libraries make /dev nodes only as root"
        ));
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let script = r#"set -e
mount -t tmpfs -o mode=755 none /dev
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/zero c 1 5
mknod -m 666 /dev/urandom c 1 9
"$@" > "$REPORT" || true
cd /dev
for f in *; do stat -c '%n %F %t:%T %a' "$f"; done
"#;
    let out = std::process::Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(env!("CARGO_BIN_EXE_gpudoctor"))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("REPORT", &report)
        .output()
        .expect("run unshare");
    if !out.status.success() {
        crate::util::skip(format_args!(
            "no private mount namespace here ({})",
            String::from_utf8_lossy(&out.stderr)
        ));
        return None;
    }
    let made = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            !["null ", "zero ", "urandom "]
                .iter()
                .any(|n| l.starts_with(n))
        })
        .map(str::to_string)
        .collect();
    let text = std::fs::read_to_string(&report).unwrap();
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    Some((v, made))
}

/// Run as root on a machine without the NVIDIA module, `check --nvml-lib` with Debian's
/// real libnvidia-ml 535 created /dev/nvidiactl (195:255, mode 0666), as nvidia-smi does.
/// With the module absent neither driver library is loaded: /dev is unchanged and the
/// report says why NVML was not probed and the smoke test not run.
#[test]
fn debian_535_libraries_are_not_loaded_without_the_module_and_make_no_dev_node() {
    let Some(tree) = debian_tree() else { return };
    if nvidia_module_here() {
        crate::util::skip(format_args!("the NVIDIA module is loaded here"));
        return;
    }
    let nvml = tree.join("usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.535.261.03");
    let cuda = tree.join("usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03");
    assert!(
        nvml.exists() && cuda.exists(),
        "driver libraries missing from the tree"
    );
    let args = [
        "check".as_ref(),
        "--json".as_ref(),
        "--nvml-lib".as_ref(),
        nvml.as_os_str(),
        "--cuda-lib".as_ref(),
        cuda.as_os_str(),
    ];
    let Some((v, made)) = on_a_fresh_dev(&args) else {
        return;
    };
    assert_eq!(made, Vec::<String>::new(), "gpudoctor made /dev nodes");
    let nvml = &v["snapshot"]["nvml"]["result"];
    assert_eq!(nvml["status"], "not_probed", "{nvml:#}");
    assert!(
        nvml["reason"]
            .as_str()
            .unwrap()
            .contains("the NVIDIA kernel module is not loaded ("),
        "{nvml:#}"
    );
    let smoke = &v["snapshot"]["smoke"]["result"];
    assert_eq!(smoke["status"], "not_run", "{smoke:#}");
    assert_eq!(smoke["reason"], nvml["reason"]);
    // Not probed is not a failure of NVML: no GD029/GD030.
    assert!(findings(&v, "GD029").is_empty() && findings(&v, "GD030").is_empty());
}

/// What docs/devices.md says loading the libraries may still do where the module is loaded:
/// run as root, libnvidia-ml creates the missing /dev/nvidiactl. Here a tree whose /proc
/// shows the module loaded (this machine's kernel has none, so the real library then
/// fails with driver_not_loaded, mapped to GD030).
#[test]
fn debian_535_nvml_with_the_module_shown_loaded_makes_the_missing_control_node() {
    let Some(tree) = debian_tree() else { return };
    if nvidia_module_here() {
        crate::util::skip(format_args!("the NVIDIA module is loaded here"));
        return;
    }
    let lib = tree.join("usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.535.261.03");
    assert!(lib.exists(), "{} missing from the tree", lib.display());
    let root = FakeRoot::new();
    root.modules(&["nvidia"]).nvidia_version("535.261.03");
    let args = [
        "--root".as_ref(),
        root.path().as_os_str(),
        "check".as_ref(),
        "--json".as_ref(),
        "--nvml-lib".as_ref(),
        lib.as_os_str(),
    ];
    let Some((v, made)) = on_a_fresh_dev(&args) else {
        return;
    };
    let nvml = &v["snapshot"]["nvml"]["result"];
    assert_eq!(nvml["status"], "init_failed", "{nvml:#}");
    assert_eq!(nvml["code"], "driver_not_loaded", "{nvml:#}");
    let f = findings(&v, "GD030");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("driver is not loaded"));
    assert_eq!(made, ["nvidiactl character special file c3:ff 666"]);
    // Refused from inside --root: nothing there is ever loaded.
    let (_, v) = json(
        gpudoctor()
            .arg("--root")
            .arg(&tree)
            .arg("--nvml-lib")
            .arg(&lib)
            .arg("check"),
    );
    assert_eq!(v["snapshot"]["nvml"]["result"]["status"], "not_probed");
    assert!(v["snapshot"]["nvml"]["result"]["reason"]
        .as_str()
        .unwrap()
        .contains("refused to load"));
}

#[test]
fn debian_535_libcuda_smoke_test_with_the_module_shown_loaded() {
    let Some(tree) = debian_tree() else { return };
    if nvidia_module_here() {
        crate::util::skip(format_args!("the NVIDIA module is loaded here"));
        return;
    }
    // The real libcuda from Debian's libcuda1, on a tree whose /proc shows the module (this
    // kernel has none): it loads, answers cuDriverGetVersion (CUDA 12.2 for R535) and
    // refuses cuInit with NO_DEVICE.
    let lib = tree.join("usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03");
    assert!(lib.exists(), "{} missing from the tree", lib.display());
    let root = FakeRoot::new();
    root.modules(&["nvidia"]).nvidia_version("535.261.03");
    let args = [
        "--root".as_ref(),
        root.path().as_os_str(),
        "smoke".as_ref(),
        "--json".as_ref(),
        "--cuda-lib".as_ref(),
        lib.as_os_str(),
    ];
    let Some((v, made)) = on_a_fresh_dev(&args) else {
        return;
    };
    let run = &v["result"]["run"];
    assert_eq!(v["result"]["status"], "ran", "{:#}", v["result"]);
    assert_eq!(
        run["loaded_from"],
        lib.canonicalize().unwrap().display().to_string()
    );
    assert_eq!(run["driver_version"], 12020, "{run:#}");
    assert_eq!(run["init_error"]["code"], 100, "{run:#}");
    // The name comes from the real driver's cuGetErrorName.
    assert_eq!(run["init_error"]["name"], "CUDA_ERROR_NO_DEVICE");
    let f = findings(&v, "GD053");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("cuInit failed: CUDA_ERROR_NO_DEVICE"));
    // Run as root, libcuda too makes the missing control node.
    assert_eq!(made, ["nvidiactl character special file c3:ff 666"]);
    // The same library from inside --root is never loaded.
    let (_, v) = json(
        gpudoctor()
            .arg("--root")
            .arg(&tree)
            .arg("--cuda-lib")
            .arg(&lib)
            .arg("check"),
    );
    assert_eq!(v["snapshot"]["smoke"]["result"]["status"], "not_run");
}

#[test]
fn the_smoke_kernels_assemble_for_every_architecture_debian_ptxas_knows() {
    let Some(tree) = debian_tree() else { return };
    // Debian's real ptxas (CUDA 11.8) assembles the embedded PTX (ISA 6.0, sm_50) for the
    // oldest and newest targets it has: the PTX is valid and old enough.
    let ptxas = tree.join("usr/bin/ptxas");
    let ptx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/smoke/kernels.ptx");
    let out_dir = tempfile::tempdir().unwrap();
    for arch in [
        "sm_50", "sm_60", "sm_70", "sm_80", "sm_86", "sm_89", "sm_90",
    ] {
        let out = std::process::Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&ptx)
            .arg("-o")
            .arg(out_dir.path().join(format!("{arch}.cubin")))
            .output()
            .expect("run ptxas");
        assert!(
            out.status.success(),
            "ptxas -arch={arch}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
