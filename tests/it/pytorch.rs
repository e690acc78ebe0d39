//! The static PyTorch probe and its rules (GD041–GD047), through the real binary against fake
//! roots holding a virtualenv with torch's version.py, METADATA and dist-info directories.

use crate::util;

use crate::util::*;
use serde_json::Value;

use crate::util::gpu_host as host;

fn check(r: &FakeRoot) -> (i32, Value) {
    json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"))
}

const CU128_PINS: &[&str] = &[
    "nvidia-cudnn-cu12==9.10.2.21",
    "nvidia-cublas-cu12==12.8.4.1",
    "nvidia-cuda-runtime-cu12==12.8.90",
];

fn install_pins(r: &FakeRoot, site: &str, pins: &[&str]) {
    for p in pins {
        let (name, version) = p.split_once("==").unwrap();
        r.dist(site, name, version);
    }
}

#[test]
fn torch_facts_are_read_without_python() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.8.0+cu128", Some("12.8"), CU128_PINS);
    install_pins(&r, &site, CU128_PINS);
    r.dist(&site, "torchvision", "0.23.0+cu128")
        .dist(&site, "triton", "3.4.0");
    let (code, v) = check(&r);
    let envs = v["snapshot"]["python"].as_array().unwrap();
    let e = envs
        .iter()
        .find(|e| e["found_by"] == "VIRTUAL_ENV")
        .expect("venv env");
    let t = &e["torch"];
    assert_eq!(t["version"]["value"], "2.8.0+cu128");
    assert_eq!(t["cuda"], "12.8");
    assert_eq!(t["dist_version"], "2.8.0");
    assert_eq!(t["requires"].as_array().unwrap().len(), 4);
    let companions: Vec<&str> = e["companions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(companions, ["torchvision", "triton"]);
    for code in ["GD041", "GD042", "GD043", "GD044", "GD045", "GD046"] {
        assert!(findings(&v, code).is_empty(), "{code}: {:#}", v["findings"]);
    }
    assert_eq!(code, 0, "{:#}", v["findings"]);
    let out = run(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"));
    assert!(
        out.stdout.contains("torch 2.8.0+cu128 · CUDA 12.8"),
        "{}",
        out.stdout
    );
}

#[test]
fn cpu_only_torch_on_a_gpu_machine() {
    let r = host("551.86", "NVIDIA GeForce RTX 4080 Laptop GPU");
    r.torch_venv("2.2.2", None, &[]);
    let (code, v) = check(&r);
    let f = findings(&v, "GD041");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    let fix = fix_commands(f[0]);
    // The same release, from PyTorch's index, for a CUDA the 551 driver (12.4) runs.
    assert!(
        fix.contains("torch==2.2.2 --index-url https://download.pytorch.org/whl/cu121"),
        "{fix}"
    );
    assert_eq!(code, 1);
}

#[test]
fn driver_too_old_for_torch() {
    // torch 2.4.1+cu121 on driver 470 (CUDA 11.4): below the 12.x family minimum.
    let r = host("470.86", "NVIDIA GeForce RTX 3050 Laptop GPU");
    r.torch_venv("2.4.1+cu121", Some("12.1"), &[]);
    let (code, v) = check(&r);
    let f = findings(&v, "GD042");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("found version 11040"));
    let fix = fix_commands(f[0]);
    assert!(fix.contains("525.60.13"), "{fix}");
    assert!(fix.contains("/whl/cu118"), "{fix}");
    assert_eq!(code, 1);
    // Within the family (cu128 on 535): minor-version compatibility, no finding.
    let r = host("535.104.05", "NVIDIA A100-SXM4-40GB");
    r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    let (_, v) = check(&r);
    assert!(findings(&v, "GD042").is_empty(), "{:#}", v["findings"]);
}

#[test]
fn gpu_newer_than_the_build() {
    let r = host("570.124.04", "NVIDIA GeForce RTX 5090 D");
    r.torch_venv("2.6.0+cu126", Some("12.6"), &[]);
    let (code, v) = check(&r);
    let f = findings(&v, "GD043");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"].as_str().unwrap().contains("sm_120"));
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("no kernel image is available"));
    let fix = fix_commands(f[0]);
    assert!(fix.contains("/whl/cu128"), "{fix}");
    assert_eq!(code, 1);
}

#[test]
fn gpu_older_than_the_build() {
    let r = host("550.163.01", "NVIDIA GeForce GTX 1050");
    r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    let (_, v) = check(&r);
    let f = findings(&v, "GD043");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["detail"].as_str().unwrap().contains("dropped support"));
    // The newest build that still has sm_60 and runs on driver 550 (CUDA 12.4): a cu126 one.
    assert!(
        fix_commands(f[0]).contains("/whl/cu126"),
        "{}",
        fix_commands(f[0])
    );
}

#[test]
fn missing_nvidia_wheels() {
    let r = host("535.104.05", "NVIDIA A100-SXM4-40GB");
    let pins = &[
        "nvidia-cudnn-cu11==8.5.0.96",
        "nvidia-cublas-cu11==11.10.3.66",
    ];
    let site = r.torch_venv("2.0.1", Some("11.7"), pins);
    // torch's library needs libcudnn.so.8, which only the missing wheel would provide: the
    // loader's failure is GD044's to report, once.
    r.lib(
        &format!("{site}/torch/lib"),
        "libtorch_global_deps.so",
        "libtorch_global_deps.so",
        &["libcudnn.so.8"],
    );
    let (code, v) = check(&r);
    assert_eq!(
        v["snapshot"]["linkage"][0]["modules"][0]["failures"][0]["failure"]["needed"],
        "libcudnn.so.8",
        "{:#}",
        v["snapshot"]["linkage"]
    );
    assert!(findings(&v, "GD060").is_empty(), "{:#}", v["findings"]);
    let f = findings(&v, "GD044");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("libcudnn.so.8: cannot open shared object file"));
    assert!(fix_commands(f[0])
        .contains("pip install nvidia-cudnn-cu11==8.5.0.96 nvidia-cublas-cu11==11.10.3.66"));
    assert_eq!(code, 1);
    // One installed at another version: a warning for it, the error for the other.
    r.dist(
        "venv/lib/python3.12/site-packages",
        "nvidia-cudnn-cu11",
        "8.9.2.26",
    );
    let (_, v) = check(&r);
    let f = findings(&v, "GD044");
    assert_eq!(f.len(), 2, "{:#}", v["findings"]);
    assert!(f
        .iter()
        .any(|f| f["severity"] == "warning" && f["title"].as_str().unwrap().contains("8.9.2.26")));
}

#[test]
fn cuda_toolkit_meta_package_pins_are_followed() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv(
        "2.11.0+cu130",
        Some("13.0"),
        &["cuda-toolkit[cudart,cublas]==13.0.2"],
    );
    r.dist(&site, "cuda-toolkit", "13.0.2")
        .file(
            &format!("{site}/cuda_toolkit-13.0.2.dist-info/METADATA"),
            "Name: cuda-toolkit\nVersion: 13.0.2\nRequires-Dist: nvidia-cuda-runtime==13.0.96; extra == \"cudart\" and platform_system == \"Linux\"\nRequires-Dist: nvidia-cublas==13.1.0.3; extra == \"cublas\"\nRequires-Dist: nvidia-cufft==12.0.0.61; extra == \"cufft\"\n",
        )
        .dist(&site, "nvidia-cuda-runtime", "13.0.96");
    let (_, v) = check(&r);
    let f = findings(&v, "GD044");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.contains("nvidia-cublas==13.1.0.3"), "{title}");
    assert!(!title.contains("cufft"), "{title}");
}

/// A Requires-Dist marker nested 8,000 deep (8 KB) overflowed the probe thread's stack and
/// aborted the process (exit 134, no report): now the line is reported and the rest is read.
#[test]
fn a_marker_nested_too_deeply_is_reported_not_a_crash() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.11.0+cu130", Some("13.0"), &[]);
    let deep = |n: usize| format!("{}os_name == 'posix'{}", "(".repeat(n), ")".repeat(n));
    r.file(
        &format!("{site}/torch-2.11.0.dist-info/METADATA"),
        &format!("Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\nRequires-Dist: filelock\nRequires-Dist: nvidia-evil==1.0; {}\nRequires-Dist: cuda-toolkit[cudart]==13.0.2; platform_system == \"Linux\"\n\nTensors\n", deep(8000)),
    )
    .dist(&site, "cuda-toolkit", "13.0.2")
    .file(
        &format!("{site}/cuda_toolkit-13.0.2.dist-info/METADATA"),
        &format!("Name: cuda-toolkit\nVersion: 13.0.2\nRequires-Dist: nvidia-cuda-runtime==13.0.96; extra == \"cudart\"\nRequires-Dist: nvidia-evil==2.0; {} and extra == \"cudart\"\n", deep(8000)),
    )
    .dist(&site, "nvidia-cuda-runtime", "13.0.96");
    let (code, v) = check(&r);
    assert!(code == 0 || code == 1, "exit {code}");
    let t = &v["snapshot"]["python"][0]["torch"];
    let names: Vec<(&str, &Value)> = t["requires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), &r["via"]))
        .collect();
    assert_eq!(
        names,
        [
            ("filelock", &Value::Null),
            ("cuda-toolkit", &Value::Null),
            ("nvidia-cuda-runtime", &"cuda-toolkit[cudart]".into())
        ]
    );
    let problems = t["requires_problems"].as_array().unwrap();
    let said: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p["source"].as_str().unwrap(), p["detail"].as_str().unwrap()))
        .collect();
    let too_deep = "marker too deeply nested (more than 32 levels of parentheses); not judged";
    assert_eq!(
        said,
        [
            (
                format!("/{site}/torch-2.11.0.dist-info/METADATA").as_str(),
                format!("Requires-Dist on line 5: {too_deep}").as_str()
            ),
            (
                format!("/{site}/cuda_toolkit-13.0.2.dist-info/METADATA").as_str(),
                format!("Requires-Dist on line 4: {too_deep}").as_str()
            ),
        ]
    );
    let f = findings(&v, "GD016");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["evidence"].as_array().unwrap().len(), 2, "{:#}", f[0]);
    let out = run(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"));
    assert!(
        out.code == 0 || out.code == 1,
        "{} {}",
        out.code,
        out.stderr
    );
    assert!(out.stdout.contains("too deeply nested"), "{}", out.stdout);
}

/// Each Requires-Dist line with extras listed site-packages again to find its dist-info:
/// 500 lines × 100,000 entries took 9 s, and 25,000 lines ran past the probe's deadline.
#[test]
fn requirements_with_extras_in_a_large_site_packages_are_read_in_linear_time() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let lines: Vec<String> = (0..500)
        .map(|i| format!("pkg{i}[cuda]==1.0"))
        .chain(["cuda-toolkit[cudart]==13.0.2".to_string()])
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let site = r.torch_venv("2.11.0+cu130", Some("13.0"), &refs);
    for i in 0..20_000 {
        r.dist(&site, &format!("filler{i}"), "1.0");
    }
    r.dist(&site, "cuda-toolkit", "13.0.2")
        .file(
            &format!("{site}/cuda_toolkit-13.0.2.dist-info/METADATA"),
            "Name: cuda-toolkit\nVersion: 13.0.2\nRequires-Dist: nvidia-cuda-runtime==13.0.96; extra == \"cudart\"\n",
        )
        .dist(&site, "nvidia-cuda-runtime", "13.0.96");
    let (_, v) = check(&r);
    let run = &v["snapshot"]["probes"]["pytorch"];
    assert_eq!(run["status"], "ok", "{run:#}");
    let requires = v["snapshot"]["python"][0]["torch"]["requires"]
        .as_array()
        .unwrap();
    assert_eq!(requires.len(), 1 + 501 + 1);
    let last = requires.last().unwrap();
    assert_eq!(
        (&last["name"], &last["via"]),
        (
            &"nvidia-cuda-runtime".into(),
            &"cuda-toolkit[cudart]".into()
        )
    );
    // A loaded 2-core machine, debug build: 0.25 s with the index, 6.7–12.3 s before.
    let elapsed = run["elapsed_us"].as_u64().unwrap() as f64 / 1e6;
    assert!(elapsed < 2.0, "the pytorch probe took {elapsed:.2} s");
}

#[test]
fn ld_library_path_shadows_the_wheel_library() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    r.lib(
        &format!("{site}/nvidia/nvjitlink/lib"),
        "libnvJitLink.so.12",
        "libnvJitLink.so.12",
        &[],
    )
    .dist(&site, "nvidia-nvjitlink-cu12", "12.8.93")
    .lib(
        "usr/local/cuda-12.1/lib64",
        "libnvJitLink.so.12.1.105",
        "libnvJitLink.so.12",
        &[],
    );
    let (code, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .env("LD_LIBRARY_PATH", "/usr/local/cuda-12.1/lib64")
            .arg("check"),
    );
    let f = findings(&v, "GD045");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    // torch itself keeps its wheel copy (RPATH + preload); what loads by RUNPATH does not.
    assert_eq!(f[0]["severity"], "warning");
    assert!(
        f[0]["title"]
            .as_str()
            .unwrap()
            .contains("12.1.105 vs 12.8.93"),
        "{}",
        f[0]["title"]
    );
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("__nvJitLinkAddData_12_1"));
    assert_eq!(code, 0);
}

#[test]
fn companions_from_another_build() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    r.dist(&site, "torchvision", "0.22.1+cu126")
        .dist(&site, "torchaudio", "2.8.0+cu128");
    let (_, v) = check(&r);
    let f = findings(&v, "GD046");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("torchvision 0.22.1+cu126")
            && title.contains("built for cu126")
            && title.contains("requires torch==2.7.1"),
        "{title}"
    );
    assert!(fix_commands(f[0]).contains(
        "--no-deps torchvision==0.23.0 --index-url https://download.pytorch.org/whl/cu128"
    ));
}

/// torchaudio ends at 2.11.1 (`torch>=2.11`) and torchvision 0.29.2 takes `torch>=2.14.0`:
/// the pair PyPI installs with torch 2.15.0 is right, and a companion pinned to another
/// torch gets a fix that names a release that exists.
#[test]
fn companions_declare_the_torch_they_accept() {
    let r = host("595.45.04", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.15.0", Some("13.2"), &[]);
    r.dist_requiring(&site, "torchvision", "0.29.2", "torch>=2.14.0")
        .dist_requiring(&site, "torchaudio", "2.11.1", "torch>=2.11");
    let (_, v) = check(&r);
    assert!(findings(&v, "GD046").is_empty(), "{:#}", v["findings"]);

    let r = host("595.45.04", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.15.0", Some("13.2"), &[]);
    r.dist_requiring(&site, "torchvision", "0.29.0", "torch (==2.14.0)");
    let (code, v) = check(&r);
    let f = findings(&v, "GD046");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    assert!(
        f[0]["title"]
            .as_str()
            .unwrap()
            .contains("it requires torch==2.14.0"),
        "{}",
        f[0]["title"]
    );
    assert!(
        fix_commands(f[0]).ends_with(
            "pip install --no-deps torchvision==0.29.2 --index-url https://download.pytorch.org/whl/cu132"
        ),
        "{}",
        fix_commands(f[0])
    );
    assert_eq!(code, 1);
}

#[test]
fn extension_toolkit_of_another_major() {
    let r = host("470.82.01", "NVIDIA GeForce RTX 3090");
    r.torch_venv("1.11.0+cu113", Some("11.3"), &[]);
    r.nvcc("usr/lib/nvidia-cuda-toolkit/bin/nvcc", "10.1.243")
        .file(
            "usr/lib/nvidia-cuda-toolkit/version.txt",
            "CUDA Version 10.1.243\n",
        )
        .link("../lib/nvidia-cuda-toolkit/bin/nvcc", "usr/bin/nvcc")
        .toolkit("usr/local/cuda-11.4", "11.4.4")
        .link("/usr/local/cuda-11.4", "usr/local/cuda");
    // python3 on PATH is the venv's, so it is the primary environment.
    r.file("venv/bin/python3", "")
        .chmod("venv/bin/python3", 0o755);
    let (_, v) = json(r.cmd().env("PATH", "/venv/bin:/usr/bin:/bin").arg("check"));
    let f = findings(&v, "GD047");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["detail"].as_str().unwrap().contains("The detected CUDA version (10.1) mismatches the version that was used to compile PyTorch (11.3)"));
    assert!(fix_commands(f[0]).contains("export CUDA_HOME=/usr/local/cuda-11.4"));
    // `toolkit` judges the same toolkit the same way: it does not say all is well.
    let t = run(r
        .cmd()
        .env("PATH", "/venv/bin:/usr/bin:/bin")
        .args(["toolkit", "--json"]));
    assert!(t.stdout.contains("GD047"), "{}", t.stdout);
    assert_eq!(t.code, 0, "GD047 is a warning here: {}", t.stderr);
    let human = run(r
        .cmd()
        .env("PATH", "/venv/bin:/usr/bin:/bin")
        .arg("toolkit"));
    assert!(human.stdout.contains("warning[GD047]"), "{}", human.stdout);
}

// ---- --python-import ---------------------------------------------------------------------

/// A venv on the real filesystem whose `python3` prints `answer` (a canned torch answer),
/// and whose site-packages holds torch `static_version`.
fn live_venv(answer: &str, static_version: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let site = venv.join("lib/python3.12/site-packages");
    std::fs::create_dir_all(site.join("torch")).unwrap();
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(
        site.join("torch/version.py"),
        format!("__version__ = '{static_version}'\ncuda = '12.8'\nhip = None\n"),
    )
    .unwrap();
    std::fs::create_dir_all(site.join(format!(
        "torch-{}.dist-info",
        static_version.split('+').next().unwrap()
    )))
    .unwrap();
    std::fs::create_dir_all(site.join("nvidia_cudnn_cu12-9.10.2.21.dist-info")).unwrap();
    let py = venv.join("bin/python3");
    let answer = answer.replace("SITE", &site.display().to_string());
    std::fs::write(&py, format!("#!/bin/sh\ncat <<'EOF_'\n{answer}\nEOF_\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, py)
}

#[test]
fn live_import_error_and_disagreements() {
    let (_d, py) = live_venv(
        r#"{"python_version": "3.12.3", "import_error": "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory", "warnings": [], "loaded": []}"#,
        "2.8.0+cu128",
    );
    let (code, v) = json(
        gpudoctor()
            .arg("--python")
            .arg(&py)
            .args(["--python-import", "check"]),
    );
    assert_eq!(
        v["snapshot"]["python_live"]["result"]["status"], "ok",
        "{:#}",
        v["snapshot"]["python_live"]
    );
    let f = findings(&v, "GD048");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"].as_str().unwrap().contains("libcudnn.so.9"));
    assert_eq!(code, 1);

    // Another torch imports than the files say, and cuDNN comes from /usr/lib.
    let (_d, py) = live_venv(
        r#"{"python_version": "3.12.3", "torch": "2.9.1+cu128", "cuda": "12.8", "is_available": false, "warnings": [], "loaded": ["/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0", "SITE/nvidia/cublas/lib/libcublas.so.12"]}"#,
        "2.8.0+cu128",
    );
    let (_, v) = json(
        gpudoctor()
            .arg("--python")
            .arg(&py)
            .args(["--python-import", "check"]),
    );
    let f = findings(&v, "GD049");
    assert_eq!(f.len(), 2, "{:#}", v["findings"]);
    assert!(any_title(
        &f,
        "imports torch 2.9.1+cu128, not the torch 2.8.0+cu128"
    ));
    let foreign = f
        .iter()
        .find(|f| f["title"].as_str().unwrap().contains("outside its wheels"))
        .unwrap();
    assert!(foreign["title"]
        .as_str()
        .unwrap()
        .contains("libcudnn.so.9.1.0"));
    assert!(!foreign["title"].as_str().unwrap().contains("libcublas"));
}

/// torch pins nvidia-cublas-cu12 and it is missing: `import torch` fails on libcublas. The
/// import error is GD044's consequence, listed right after it with no fix of its own.
#[test]
fn a_missing_pinned_wheel_explains_the_import_error() {
    let (_d, py) = live_venv(
        r#"{"python_version": "3.12.3", "import_error": "ImportError: libcublas.so.12: cannot open shared object file: No such file or directory", "warnings": [], "loaded": []}"#,
        "2.8.0+cu128",
    );
    let site = py
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("lib/python3.12/site-packages");
    std::fs::write(
        site.join("torch-2.8.0.dist-info/METADATA"),
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0+cu128\nRequires-Dist: nvidia-cublas-cu12==12.8.4.1; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n",
    )
    .unwrap();
    let (code, v) = json(
        gpudoctor()
            .arg("--python")
            .arg(&py)
            .args(["--python-import", "check"]),
    );
    assert_eq!(code, 1);
    let all = codes(&v);
    let gd044 = all.iter().position(|c| c == "GD044").expect("GD044");
    assert_eq!(all[gd044 + 1], "GD048", "{all:?}");
    let f = findings(&v, "GD048");
    assert_eq!(f[0]["caused_by"], "GD044", "{:#}", f[0]);
    assert!(findings(&v, "GD044")[0].get("caused_by").is_none());
    let codes = v["headline"]["codes"].as_array().unwrap();
    assert!(!codes.contains(&"GD048".into()), "{codes:?}");

    // An import error of another kind is torch's own, missing wheel or not.
    let answer = r#"{"python_version": "3.12.3", "import_error": "ImportError: numpy.core.multiarray failed to import", "warnings": [], "loaded": []}"#;
    std::fs::write(&py, format!("#!/bin/sh\ncat <<'EOF_'\n{answer}\nEOF_\n")).unwrap();
    let (_, v) = json(
        gpudoctor()
            .arg("--python")
            .arg(&py)
            .args(["--python-import", "check"]),
    );
    assert!(!findings(&v, "GD044").is_empty(), "{:#}", v["findings"]);
    let f = findings(&v, "GD048");
    assert!(f[0].get("caused_by").is_none(), "{:#}", f[0]);
}

#[test]
fn live_probe_is_bounded_and_never_runs_under_root() {
    let (_d, py) = live_venv("{}", "2.8.0+cu128");
    std::fs::write(&py, "#!/bin/sh\nsleep 30\n").unwrap();
    let start = std::time::Instant::now();
    let (_, v) = json(gpudoctor().arg("--python").arg(&py).args([
        "--python-import",
        "--timeout",
        "2",
        "check",
    ]));
    assert!(start.elapsed() < std::time::Duration::from_secs(6));
    assert_eq!(
        v["snapshot"]["python_live"]["result"]["status"],
        "timed_out"
    );
    assert_eq!(findings(&v, "GD048")[0]["severity"], "warning");
    // Under --root: not run.
    let r = FakeRoot::new();
    let (_, v) = json(r.cmd().arg("--python-import").arg("check"));
    assert_eq!(
        v["snapshot"]["python_live"]["result"]["status"],
        "not_probed"
    );
}

#[test]
fn architectures_come_from_the_libraries_fatbin() {
    use util::fatbin::{elf_with_fatbin, fatbin_section, Kind};
    // A custom 2.8.0+cu128 build without sm_70 (the official one has it), with a few sm_89
    // special kernels; on a V100 (sm_70) only the fatbin can tell.
    let r = host("580.95.05", "Tesla V100-SXM2-32GB");
    let site = r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    let full: Vec<(Kind, u32, bool)> = [75, 80, 86, 90, 100, 120]
        .iter()
        .map(|a| (Kind::Elf, *a, false))
        .collect();
    let mut containers: Vec<&[(Kind, u32, bool)]> = vec![&full; 40];
    let special = [(Kind::Elf, 89, false)];
    containers.push(&special);
    let section = fatbin_section(&containers);
    r.bytes(
        &format!("{site}/torch/lib/libtorch_cuda.so"),
        &elf_with_fatbin("libtorch_cuda.so", &section),
    );
    let (code, v) = check(&r);
    let t = &v["snapshot"]["python"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["found_by"] == "VIRTUAL_ENV")
        .unwrap()["torch"];
    let arches = &t["arches"]["value"];
    assert_eq!(
        arches["arch_list"],
        serde_json::json!(["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"])
    );
    assert_eq!(arches["extras"], serde_json::json!(["sm_89"]));
    let f = findings(&v, "GD043");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"].as_str().unwrap().contains("sm_70"));
    assert!(f[0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["source"]
            .as_str()
            .unwrap()
            .ends_with("torch/lib/libtorch_cuda.so")));
    assert_eq!(code, 1);
}

#[test]
fn frameworks_with_other_majors_in_one_environment() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.3.1+cu121", Some("12.1"), &[]);
    r.dist(&site, "nvidia-cudnn-cu12", "8.9.2.26")
        .dist(&site, "onnxruntime-gpu", "1.20.1")
        .dist(&site, "cupy-cuda11x", "13.3.0");
    let (_, v) = check(&r);
    let f = findings(&v, "GD050");
    assert_eq!(f.len(), 2, "{:#}", v["findings"]);
    assert!(any_title(
        &f,
        "onnxruntime-gpu 1.20.1 needs cuDNN 9 (torch's wheel is cuDNN 8)"
    ));
    assert!(any_title(&f, "cupy-cuda11x 13.3.0 needs CUDA 11"));
}

#[test]
fn allocator_options_the_installed_torch_does_not_know() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.0.1+cu118", Some("11.8"), &[]);
    let (code, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
            .arg("check"),
    );
    let f = findings(&v, "GD014");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("Unrecognized CachingAllocator option: expandable_segments"));
    assert_eq!(code, 1);
    // PYTORCH_ALLOC_CONF alone, read only from torch 2.9 on.
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .env("PYTORCH_ALLOC_CONF", "max_split_size_mb:128")
            .arg("check"),
    );
    let f = findings(&v, "GD015");
    assert!(
        any_title(&f, "ignores PYTORCH_ALLOC_CONF"),
        "{:#}",
        v["findings"]
    );
}

#[test]
fn small_shm_in_a_container_with_torch() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    r.file(".dockerenv", "").file(
        "proc/mounts",
        "overlay / overlay rw 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n",
    );
    let (_, v) = check(&r);
    let f = findings(&v, "GD051");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"].as_str().unwrap().contains("only 64 MiB"));
    assert!(fix_commands(f[0]).contains("--shm-size"));
    // 16 GiB: fine.
    r.file("proc/mounts", "shm /dev/shm tmpfs rw,size=16g 0 0\n");
    let (_, v) = check(&r);
    assert!(findings(&v, "GD051").is_empty());
}

#[test]
fn conda_cpu_mutex_is_named() {
    let r = host("550.54.15", "NVIDIA GeForce RTX 4090");
    let site = "conda/envs/ml/lib/python3.10/site-packages";
    r.file(
        &format!("{site}/torch/version.py"),
        "__version__ = '2.3.1'\ncuda = None\nhip = None\n",
    )
    .dir(&format!("{site}/torch-2.3.1.dist-info"))
    .file(
        "conda/envs/ml/conda-meta/pytorch-2.3.1-py3.10_cpu_0.json",
        "{}",
    )
    .file("conda/envs/ml/conda-meta/pytorch-mutex-1.0-cpu.json", "{}");
    let (_, v) = json(r.cmd().env("CONDA_PREFIX", "/conda/envs/ml").arg("check"));
    let f = findings(&v, "GD041");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["value"]
            .as_str()
            .unwrap()
            .contains("pytorch-mutex=cpu (build py3.10_cpu_0)")));
}

#[test]
fn capability_note_for_an_older_gpu() {
    let r = host("580.95.05", "Tesla T4");
    r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    let (code, v) = check(&r);
    let f = findings(&v, "GD052");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "info");
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("sm_75") && title.contains("FlashAttention-2"),
        "{title}"
    );
    assert_eq!(code, 0);
    // An H100 lacks none of them.
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    let (_, v) = check(&r);
    assert!(findings(&v, "GD052").is_empty(), "{:#}", v["findings"]);
}

#[test]
fn triton_missing_breaks_torch_compile_only() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.8.0+cu128", Some("12.8"), &["triton==3.4.0"]);
    let (code, v) = check(&r);
    let f = findings(&v, "GD044");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0]["title"].as_str().unwrap().contains("torch.compile"));
    assert_eq!(code, 0);
    r.dist(&site, "triton", "3.4.0");
    let (_, v) = check(&r);
    assert!(findings(&v, "GD044").is_empty(), "{:#}", v["findings"]);
}

// ---- regressions from review ------------------------------------------------------------

#[test]
fn cuda_toolkit_markers_with_or_branches_are_evaluated() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv(
        "2.15.0+cu132",
        Some("13.2"),
        &["cuda-toolkit[cublas,cudart]==13.2.2"],
    );
    r.dist(&site, "cuda-toolkit", "13.2.2").file(
        &format!("{site}/cuda_toolkit-13.2.2.dist-info/METADATA"),
        "Name: cuda-toolkit\nVersion: 13.2.2\nRequires-Dist: nvidia-cublas==13.4.1.3; (sys_platform == 'linux' and platform_machine == 'x86_64' or sys_platform == 'win32' and platform_machine == 'AMD64') and extra == 'cublas'\nRequires-Dist: nvidia-cuda-runtime==13.2.86; (sys_platform == 'linux' or sys_platform == 'win32') and extra == 'cudart'\nRequires-Dist: nvidia-cufft==12.2.0.57; extra == 'cufft'\n",
    );
    let (_, v) = check(&r);
    let f = findings(&v, "GD044");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.contains("nvidia-cuda-runtime==13.2.86"), "{title}");
    assert_eq!(
        title.contains("nvidia-cublas==13.4.1.3"),
        cfg!(target_arch = "x86_64"),
        "{title}"
    );
    assert!(!title.contains("cufft"), "{title}");
}

#[test]
fn python_version_markers_exclude_pins() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = "venv/lib/python3.13/site-packages";
    r.file("venv/pyvenv.cfg", "home = /usr/bin\n")
        .file(&format!("{site}/torch/version.py"), "__version__ = '2.5.1+cu124'\ncuda = '12.4'\nhip = None\n")
        .file(
            &format!("{site}/torch-2.5.1.dist-info/METADATA"),
            "Name: torch\nVersion: 2.5.1\nRequires-Dist: triton==3.1.0; platform_system == \"Linux\" and platform_machine == \"x86_64\" and python_version < \"3.13\"\n",
        );
    let (_, v) = check(&r);
    assert!(findings(&v, "GD044").is_empty(), "{:#}", v["findings"]);
}

#[test]
fn user_site_egg_info_and_lib64_installs_are_found() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.file("usr/bin/python3", "")
        .chmod("usr/bin/python3", 0o755)
        .dir("usr/lib/python3/dist-packages")
        .file(
            "home/alice/.local/lib/python3.11/site-packages/torch/version.py",
            "__version__ = '2.2.2'\ncuda = None\nhip = None\n",
        )
        .dir("home/alice/.local/lib/python3.11/site-packages/torch-2.2.2-py3.11.egg-info");
    let (_, v) = json(r.cmd().env("HOME", "/home/alice").arg("check"));
    let envs = v["snapshot"]["python"].as_array().unwrap();
    let user = envs
        .iter()
        .find(|e| e["found_by"] == "user site (~/.local)")
        .expect("user site");
    assert_eq!(user["torch"]["version"]["value"], "2.2.2");
    assert_eq!(user["primary"], true, "{envs:#?}");
    assert_eq!(findings(&v, "GD041").len(), 1, "{:#}", v["findings"]);

    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.file(
        "opt/app/lib64/python3.9/site-packages/torch/version.py",
        "__version__ = '2.4.1+cu121'\ncuda = '12.1'\nhip = None\n",
    )
    .dir("opt/app/lib64/python3.9/site-packages/torch-2.4.1+cu121.dist-info")
    .file("opt/app/pyvenv.cfg", "home = /usr/bin\n");
    let (_, v) = json(r.cmd().env("VIRTUAL_ENV", "/opt/app").arg("check"));
    assert!(v["snapshot"]["python"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["torch"]["cuda"] == "12.1"));
}

#[test]
fn the_primary_environment_is_what_python_on_path_gives() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    r.file("conda/envs/ml/bin/python", "")
        .chmod("conda/envs/ml/bin/python", 0o755)
        .file(
            "conda/envs/ml/lib/python3.11/site-packages/torch/version.py",
            "__version__ = '2.3.1'\ncuda = None\nhip = None\n",
        )
        .dir("conda/envs/ml/lib/python3.11/site-packages/torch-2.3.1.dist-info");
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .env("CONDA_PREFIX", "/conda/envs/ml")
            .env("PATH", "/conda/envs/ml/bin:/venv/bin:/usr/bin:/bin")
            .arg("check"),
    );
    let envs = v["snapshot"]["python"].as_array().unwrap();
    let primary: Vec<&Value> = envs.iter().filter(|e| e["primary"] == true).collect();
    assert_eq!(primary.len(), 1);
    assert_eq!(
        primary[0]["site"], "/conda/envs/ml/lib/python3.11/site-packages",
        "{envs:#?}"
    );
}

#[test]
fn companions_of_torch_1_and_of_unlabelled_pypi_builds() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("1.13.1+cu117", Some("11.7"), &[]);
    r.dist(&site, "torchaudio", "0.13.1+cu117")
        .dist(&site, "torchvision", "0.14.1+cu116");
    let (_, v) = check(&r);
    let f = findings(&v, "GD046");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .starts_with("torchvision 0.14.1+cu116"));
    assert!(fix_commands(f[0])
        .contains("torchvision==0.14.1 --index-url https://download.pytorch.org/whl/cu117"));

    // PyPI's 2.8.0 has no +cu128 label; torch.version.cuda says it.
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.8.0", Some("12.8"), &[]);
    r.dist(&site, "torchvision", "0.23.0+cu126");
    let (_, v) = check(&r);
    assert_eq!(findings(&v, "GD046").len(), 1, "{:#}", v["findings"]);
}

#[test]
fn torch_1_extension_builds_compare_the_minor_too() {
    let r = host("470.82.01", "NVIDIA GeForce RTX 3090");
    r.torch_venv("1.11.0+cu113", Some("11.3"), &[]);
    r.toolkit("usr/local/cuda-11.4", "11.4.4")
        .link("/usr/local/cuda-11.4", "usr/local/cuda");
    r.file("venv/bin/python3", "")
        .chmod("venv/bin/python3", 0o755);
    let (_, v) = json(r.cmd().env("PATH", "/venv/bin:/usr/bin:/bin").arg("check"));
    assert_eq!(findings(&v, "GD047").len(), 1, "{:#}", v["findings"]);
}

#[test]
fn live_answer_after_a_banner_and_from_the_root_directory() {
    let (_d, py) = live_venv(
        "welcome to the cluster\n{\"python_version\": \"3.12.3\", \"torch\": \"2.8.0+cu128\", \"cuda\": \"12.8\", \"warnings\": [], \"loaded\": []}",
        "2.8.0+cu128",
    );
    let text = std::fs::read_to_string(&py).unwrap().replace(
        "#!/bin/sh\n",
        "#!/bin/sh\npwd > \"$(dirname \"$0\")/cwd\"\n",
    );
    std::fs::write(&py, text).unwrap();
    let (_, v) = json(
        gpudoctor()
            .arg("--python")
            .arg(&py)
            .args(["--python-import", "check"]),
    );
    assert_eq!(
        v["snapshot"]["python_live"]["result"]["status"], "ok",
        "{:#}",
        v["snapshot"]["python_live"]
    );
    let cwd = std::fs::read_to_string(py.parent().unwrap().join("cwd")).unwrap();
    assert_eq!(cwd.trim(), "/");
}

#[test]
fn pyenv_shims_lead_to_the_selected_version() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.file("home/alice/.pyenv/shims/python", "#!/bin/sh\nexec pyenv exec python \"$@\"\n")
        .chmod("home/alice/.pyenv/shims/python", 0o755)
        .file("home/alice/.pyenv/version", "3.11.9\n")
        .file(
            "home/alice/.pyenv/versions/3.11.9/lib/python3.11/site-packages/torch/version.py",
            "__version__ = '2.8.0+cu128'\ncuda = '12.8'\nhip = None\n",
        )
        .dir("home/alice/.pyenv/versions/3.11.9/lib/python3.11/site-packages/torch-2.8.0+cu128.dist-info");
    let (_, v) = json(
        r.cmd()
            .env("PATH", "/home/alice/.pyenv/shims:/usr/bin:/bin")
            .arg("check"),
    );
    let envs = v["snapshot"]["python"].as_array().unwrap();
    let primary = envs
        .iter()
        .find(|e| e["primary"] == true)
        .expect("a primary env");
    assert_eq!(
        primary["site"], "/home/alice/.pyenv/versions/3.11.9/lib/python3.11/site-packages",
        "{envs:#?}"
    );
    assert_eq!(primary["torch"]["cuda"], "12.8");
    // PYENV_VERSION wins over the global version file.
    r.file(
        "home/alice/.pyenv/versions/3.12.4/lib/python3.12/site-packages/torch/version.py",
        "__version__ = '2.9.1+cu128'\ncuda = '12.8'\nhip = None\n",
    );
    let (_, v) = json(
        r.cmd()
            .env("PATH", "/home/alice/.pyenv/shims:/usr/bin:/bin")
            .env("PYENV_VERSION", "3.12.4")
            .arg("check"),
    );
    let envs = v["snapshot"]["python"].as_array().unwrap();
    let primary = envs.iter().find(|e| e["primary"] == true).unwrap();
    assert_eq!(primary["torch"]["version"]["value"], "2.9.1+cu128");
}

/// `python3` early on PATH and `python` in a venv later: the static probes call the venv
/// (`python`, what users type) primary, and `--python-import` ran the other interpreter,
/// so GD049 compared two different Pythons.
#[test]
fn the_live_probe_runs_the_python_the_static_probes_read() {
    let ok = r#"{"python_version": "3.12.3", "torch": "2.8.0+cu128", "cuda": "12.8", "is_available": false, "warnings": [], "loaded": []}"#;
    let (_venv, py) = live_venv(ok, "2.8.0+cu128");
    let bin = py.parent().unwrap().to_path_buf();
    std::fs::rename(&py, bin.join("python")).unwrap();
    let other = tempfile::tempdir().unwrap();
    let (_o, other_py) = live_venv(&ok.replace("2.8.0", "2.9.1"), "2.9.1+cu128");
    std::fs::copy(&other_py, other.path().join("python3")).unwrap();
    let path = format!("{}:{}:/usr/bin:/bin", other.path().display(), bin.display());
    let (_, v) = json(
        gpudoctor()
            .env("PATH", path)
            .args(["--python-import", "check"]),
    );
    assert_eq!(
        v["snapshot"]["python_live"]["python"],
        bin.join("python").display().to_string()
    );
    assert_eq!(
        v["snapshot"]["python_live"]["result"]["answer"]["torch"], "2.8.0+cu128",
        "{:#}",
        v["snapshot"]["python_live"]
    );
    assert!(findings(&v, "GD049").is_empty(), "{:#}", v["findings"]);
}

/// torch 2.7.1's cu128 build has no sm_50/60/70 (pytorch#146265, #147607): for a GTX 1080
/// (sm_61) the fix for a CPU-only 2.7.1 is its cu126 build, with the companions that
/// declare that torch.
#[test]
fn cpu_only_torch_2_7_on_pascal_gets_the_cu126_build() {
    let r = host("570.133.07", "NVIDIA GeForce GTX 1080");
    let site = r.torch_venv("2.7.1+cpu", None, &[]);
    r.dist_requiring(&site, "torchvision", "0.22.1+cpu", "torch==2.7.1");
    let (_, v) = check(&r);
    let f = findings(&v, "GD041");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    let fix = fix_commands(f[0]);
    assert!(
        fix.contains(
            "pip install --force-reinstall torch==2.7.1 torchvision==0.22.1 --index-url https://download.pytorch.org/whl/cu126"
        ),
        "{fix}"
    );
    assert!(!fix.contains("cu128"), "{fix}");
}

/// The aarch64 (sbsa) builds are their own: 2.7.1's cu128 aarch64 wheel has only sm_90,
/// sm_100 and sm_120, so an A100 on an ARM server is sent to the newest aarch64 build with
/// sm_80 whose CUDA the driver runs, where the x86_64 answer is 2.7.1+cu128.
#[test]
fn aarch64_hosts_get_aarch64_builds() {
    let r = host("580.95.05", "NVIDIA A100-SXM4-80GB");
    r.file("proc/sys/kernel/arch", "aarch64\n");
    r.torch_venv("2.7.1+cpu", None, &[]);
    let (_, v) = check(&r);
    assert_eq!(v["snapshot"]["platform"]["arch"]["value"], "aarch64");
    let f = findings(&v, "GD041");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    let fix = fix_commands(f[0]);
    // 2.15.0's aarch64 cu132 build has sm_80; driver 580 runs CUDA 13.x (minor-version
    // compatibility).
    assert!(
        fix.contains("torch==2.15.0 --index-url https://download.pytorch.org/whl/cu132"),
        "{fix}"
    );

    // The same machine on x86_64 keeps the release.
    let r = host("580.95.05", "NVIDIA A100-SXM4-80GB");
    r.torch_venv("2.7.1+cpu", None, &[]);
    let (_, v) = check(&r);
    let fix = fix_commands(findings(&v, "GD041")[0]);
    assert!(
        fix.contains("torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128"),
        "{fix}"
    );
}

/// Jetson Thor / GB10-class aarch64 GPUs: an aarch64 torch 2.15.0+cu130 build has sm_110;
/// the same GPU would have no kernels in an x86_64 list. With no fatbin to read, the table
/// row of the platform decides.
#[test]
fn torch_kernels_are_judged_against_the_platforms_list() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.file("proc/sys/kernel/arch", "aarch64\n");
    r.torch_venv("2.15.0+cu126", Some("12.6"), &[]);
    let (_, v) = check(&r);
    // aarch64 cu126 is {80, 90}: H100 is covered.
    assert!(findings(&v, "GD043").is_empty(), "{:#}", v["findings"]);

    let r = host("580.95.05", "NVIDIA GeForce RTX 4090");
    r.file("proc/sys/kernel/arch", "aarch64\n");
    r.torch_venv("2.15.0+cu126", Some("12.6"), &[]);
    let (_, v) = check(&r);
    // sm_89 runs sm_80 SASS: covered on aarch64 too.
    assert!(findings(&v, "GD043").is_empty(), "{:#}", v["findings"]);

    let r = host("580.95.05", "NVIDIA GeForce RTX 2080 Ti");
    r.file("proc/sys/kernel/arch", "aarch64\n");
    r.torch_venv("2.15.0+cu126", Some("12.6"), &[]);
    let (_, v) = check(&r);
    let f = findings(&v, "GD043");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(
        f[0]["evidence"][0]["source"]
            .as_str()
            .unwrap()
            .contains("cu126 aarch64 build"),
        "{:#}",
        f[0]
    );
    // On x86_64 the cu126 build has sm_75.
    let r = host("580.95.05", "NVIDIA GeForce RTX 2080 Ti");
    r.torch_venv("2.15.0+cu126", Some("12.6"), &[]);
    let (_, v) = check(&r);
    assert!(findings(&v, "GD043").is_empty(), "{:#}", v["findings"]);
}

/// A verdict that rests on a table row no primary source confirms says so.
#[test]
fn a_verdict_from_an_unconfirmed_row_says_so() {
    let r = host("580.95.05", "NVIDIA GeForce GTX 1080");
    r.torch_venv("2.10.0+cu130", Some("13.0"), &[]);
    let (_, v) = check(&r);
    let f = findings(&v, "GD043");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(
        f[0]["detail"]
            .as_str()
            .unwrap()
            .contains("no primary source confirms"),
        "{:#}",
        f[0]
    );
}

/// The pins of an aarch64 wheel are read for aarch64: its `platform_machine == "aarch64"`
/// markers hold whatever machine gpudoctor itself runs on (an image root of another
/// architecture), and the wheel's platform picks the builds the verdicts use.
#[test]
fn an_aarch64_wheels_markers_are_read_for_aarch64() {
    let pinned = |tag: &str| {
        let r = host("580.95.05", "NVIDIA GH200 480GB");
        let site = "venv/lib/python3.12/site-packages";
        r.file("venv/pyvenv.cfg", "home = /usr/bin\n")
            .file(
                &format!("{site}/torch/version.py"),
                "__version__ = '2.15.0+cu132'\ncuda = '13.2'\nhip = None\n",
            )
            .file(
                &format!("{site}/torch-2.15.0.dist-info/METADATA"),
                "Name: torch\nVersion: 2.15.0\nRequires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == \"Linux\" and platform_machine == \"aarch64\"\nRequires-Dist: nvidia-nccl-cu13==2.30.7; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n",
            )
            .file(
                &format!("{site}/torch-2.15.0.dist-info/WHEEL"),
                &format!("Wheel-Version: 1.0\nGenerator: bdist_wheel\nRoot-Is-Purelib: false\nTag: {tag}\n"),
            );
        let (_, v) = check(&r);
        let env = &v["snapshot"]["python"][0];
        let names: Vec<String> = env["torch"]["requires"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect();
        (names, env["torch"]["wheel_machine"].clone(), v)
    };
    let (names, machine, v) = pinned("cp312-cp312-manylinux_2_28_aarch64");
    assert_eq!(machine, "aarch64");
    assert_eq!(names, ["nvidia-cudnn-cu13"], "{names:?}");
    let f = findings(&v, "GD044");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert!(
        f[0]["title"]
            .as_str()
            .unwrap()
            .contains("nvidia-cudnn-cu13"),
        "{:#}",
        f[0]
    );
    let (names, machine, _) = pinned("cp312-cp312-manylinux_2_28_x86_64");
    assert_eq!(machine, "x86_64");
    assert_eq!(names, ["nvidia-nccl-cu13"], "{names:?}");
}

/// WSL runs on the Windows driver, which NVML reports with Windows' numbers: CUDA 12.x needs
/// 528.33 there (525.60.13 is the Linux number), and the fix is done on Windows.
#[test]
fn wsl_judges_the_windows_driver_by_the_windows_minimums() {
    use util::fake_nvml::FakeNvml;
    use util::gpu_node::GpuNode;
    let wsl = |driver: &str, cuda: i32| {
        let mut nvml = FakeNvml::consumer_rtx4090();
        nvml.system.driver_version = Some(driver.into());
        nvml.system.cuda_driver_version = Some(cuda);
        let node = GpuNode {
            root: FakeRoot::new(),
            dir: tempfile::tempdir().unwrap(),
            nvml,
            cuda: None,
        };
        node.root
            .file(
                "proc/version",
                "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 12.2.0)\n",
            )
            .dir("usr/lib/wsl/lib")
            .node("dxg", 0o666);
        node.root.torch_venv("2.5.1+cu124", Some("12.4"), &[]);
        let (_, v) = json(
            node.cmd()
                .env("VIRTUAL_ENV", "/venv")
                .args(["check", "--no-smoke"]),
        );
        v
    };
    // 528.24 passes the Linux family minimum (525.60.13) but not Windows' (528.33).
    let v = wsl("528.24", 12000);
    let f = findings(&v, "GD042");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    let fix = fix_commands(f[0]);
    assert!(
        fix.contains("On Windows, upgrade the NVIDIA driver to 528.33 or newer"),
        "{fix}"
    );
    assert!(
        f[0]["evidence"][1]["source"]
            .as_str()
            .unwrap()
            .contains("the Windows driver"),
        "{:#}",
        f[0]
    );
    // 537.58 (CUDA 12.2) runs a CUDA 12.4 build under minor-version compatibility.
    let v = wsl("537.58", 12020);
    assert!(findings(&v, "GD042").is_empty(), "{:#}", v["findings"]);
}
