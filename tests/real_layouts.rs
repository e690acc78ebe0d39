//! Layouts no one here wrote: Debian's real CUDA 11.8 toolkit and NVIDIA 535 driver
//! packages unpacked by `.ci/fetch-debian-cuda`, and this machine itself.

mod util;

use serde_json::Value;
use util::*;

/// The tree `.ci/run` builds; the test says so and stops when it was not built.
fn debian_tree() -> Option<std::path::PathBuf> {
    match std::env::var_os("GPUDOCTOR_DEBIAN_TREE") {
        Some(p) => Some(p.into()),
        None => {
            eprintln!("GPUDOCTOR_DEBIAN_TREE unset: run .ci/fetch-debian-cuda DIR and export it (.ci/run does)");
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
        eprintln!("no ldconfig on this machine; skipped");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(count) = text
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
    else {
        eprintln!("unexpected ldconfig -p output; skipped");
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

#[test]
fn debian_535_nvml_on_a_machine_without_the_driver() {
    let Some(tree) = debian_tree() else { return };
    // The real libnvidia-ml from Debian's libnvidia-ml1, loaded on this GPU-less machine.
    let lib = tree.join("usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.535.261.03");
    assert!(lib.exists(), "{} missing from the tree", lib.display());
    let (_, v) = json(gpudoctor().arg("--nvml-lib").arg(&lib).arg("check"));
    let nvml = &v["snapshot"]["nvml"];
    assert_eq!(nvml["result"]["status"], "init_failed", "{nvml:#}");
    assert_eq!(nvml["result"]["code"], "driver_not_loaded", "{nvml:#}");
    let f = findings(&v, "GD030");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("driver is not loaded"));
    let out = run(gpudoctor().arg("--nvml-lib").arg(&lib).arg("devices"));
    assert!(out.stdout.contains("driver_not_loaded"), "{}", out.stdout);
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
fn debian_535_libcuda_smoke_test_on_a_machine_without_the_driver() {
    let Some(tree) = debian_tree() else { return };
    // The real libcuda from Debian's libcuda1, loaded on this GPU-less machine: it loads,
    // answers cuDriverGetVersion (CUDA 12.2 for R535) and refuses cuInit with NO_DEVICE.
    let lib = tree.join("usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03");
    assert!(lib.exists(), "{} missing from the tree", lib.display());
    let (code, v) = json(gpudoctor().arg("--cuda-lib").arg(&lib).arg("smoke"));
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
    assert_eq!(code, 1);
    let f = findings(&v, "GD053");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("cuInit failed: CUDA_ERROR_NO_DEVICE"));
    // No nvidia module here: the finding says so and how to load it.
    assert!(
        fix_commands(f[0]).contains("modprobe nvidia"),
        "{}",
        fix_commands(f[0])
    );
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
