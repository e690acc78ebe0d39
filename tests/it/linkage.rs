//! The linkage probe through the real binary under --root: every CUDA-using framework's native
//! modules are found where their wheels put them (RECORD or a walk), opened after torch's, and
//! a library none of them can find is one finding naming each package, with the wheel that
//! provides it; a framework whose cuDNN major torch's pin excludes gets a compatible pair.

use crate::util::*;

const SITE: &str = "venv/lib/python3.12/site-packages";

/// (module path in site-packages, distribution, version, DT_NEEDED).
const FRAMEWORKS: &[(&str, &str, &str, &[&str])] = &[
    (
        "onnxruntime/capi/libonnxruntime_providers_cuda.so",
        "onnxruntime-gpu",
        "1.20.1",
        &["libcublasLt.so.12", "libcudnn.so.9"],
    ),
    (
        "tensorflow/python/_pywrap_tensorflow_internal.so",
        "tensorflow",
        "2.18.0",
        &["libcudart.so.12"],
    ),
    (
        "jax_plugins/xla_cuda12/xla_cuda_plugin.so",
        "jax-cuda12-plugin",
        "0.4.35",
        &["libcudart.so.12", "libcudnn.so.9"],
    ),
    (
        "cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so",
        "cupy-cuda12x",
        "13.3.0",
        &["libcudart.so.12"],
    ),
    (
        "triton/_C/libtriton.so",
        "triton",
        "3.1.0",
        &["libcuda.so.1"],
    ),
    (
        "vllm/_C.abi3.so",
        "vllm",
        "0.6.3",
        &["libc10_cuda.so", "libcudart.so.12"],
    ),
    ("xformers/_C.so", "xformers", "0.0.28", &["libcudart.so.12"]),
    (
        "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
        "flash-attn",
        "2.6.3",
        &["libcudart.so.12"],
    ),
    (
        "bitsandbytes/libbitsandbytes_cuda121.so",
        "bitsandbytes",
        "0.44.1",
        &["libcudart.so.12", "libcublasLt.so.12"],
    ),
    (
        "tensorrt_bindings/tensorrt.so",
        "tensorrt-cu12-bindings",
        "10.5.0",
        &["libnvinfer.so.10"],
    ),
];

fn environment() -> FakeRoot {
    let r = gpu_host_with_libs();
    let site = r.torch_venv("2.5.1+cu124", Some("12.4"), &[]);
    // torch: its global deps and its CUDA library, which the others link against.
    r.torch_cuda12_libs(&site);
    for (path, dist, version, needed) in FRAMEWORKS {
        let name = path.rsplit('/').next().unwrap();
        // vllm finds torch's libraries through its RUNPATH, as its wheel does.
        let bytes = if *dist == "vllm" {
            elf::shared_object_runpath(name, needed, "$ORIGIN/../torch/lib")
        } else if *dist == "tensorrt-cu12-bindings" {
            elf::shared_object_runpath(name, needed, "$ORIGIN/../tensorrt_libs")
        } else {
            elf::shared_object(name, needed)
        };
        r.bytes(&format!("{site}/{path}"), &bytes);
        r.dist(site.as_str(), dist, version);
    }
    // Installers write RECORDs: modules come from them, not from a walk, and a directory
    // belongs to the distribution whose RECORD lists it (cupy_backends is cupy's).
    r.file(
        &format!("{site}/onnxruntime_gpu-1.20.1.dist-info/RECORD"),
        "onnxruntime/capi/libonnxruntime_providers_cuda.so,sha256=x,1\nonnxruntime/__init__.py,,\n",
    )
    .file(
        &format!("{site}/cupy_cuda12x-13.3.0.dist-info/RECORD"),
        "cupy/__init__.py,,\ncupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so,,\n",
    )
    .file(
        &format!("{site}/tensorrt_cu12_bindings-10.5.0.dist-info/RECORD"),
        "tensorrt_bindings/tensorrt.so,,\n",
    )
    .file(
        &format!("{site}/flash_attn-2.6.3.dist-info/RECORD"),
        "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so,,\nflash_attn/__init__.py,,\n",
    );
    r.lib(
        &format!("{site}/tensorrt_libs"),
        "libnvinfer.so.10",
        "libnvinfer.so.10",
        &["libcudart.so.12"],
    );
    r
}

/// A GPU host whose loader finds the CUDA 12 runtime and cuBLASLt but no cuDNN.
fn gpu_host_with_libs() -> FakeRoot {
    let r = gpu_host("550.54.15", "NVIDIA A100-SXM4-80GB");
    let dir = "usr/lib/x86_64-linux-gnu";
    r.lib(dir, "libcudart.so.12.4.127", "libcudart.so.12", &[])
        .lib(dir, "libcublasLt.so.12.4.5.8", "libcublasLt.so.12", &[])
        .ld_cache(&[
            (
                "libcudart.so.12",
                "/usr/lib/x86_64-linux-gnu/libcudart.so.12",
            ),
            (
                "libcublasLt.so.12",
                "/usr/lib/x86_64-linux-gnu/libcublasLt.so.12",
            ),
        ]);
    r
}

fn libs(r: &FakeRoot) -> (i32, serde_json::Value) {
    json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("libs"))
}

#[test]
fn every_frameworks_modules_are_found_and_opened_after_torch() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let r = environment();
    let (_, v) = libs(&r);
    let env = &v["environments"][0];
    assert!(env["site"].as_str().unwrap().ends_with(SITE), "{env}");
    let modules = env["modules"].as_array().unwrap();
    assert_eq!(modules[0]["package"], "torch", "torch first: {env:#}");
    for (path, dist, version, _) in FRAMEWORKS {
        let m = modules
            .iter()
            .find(|m| m["path"].as_str().unwrap().ends_with(path))
            .unwrap_or_else(|| panic!("{path} not opened: {env:#}"));
        assert_eq!(m["dist"], format!("{dist} {version}"), "{m}");
    }
    // vllm's libc10_cuda.so is torch's, already loaded.
    let vllm = modules.iter().find(|m| m["package"] == "vllm").unwrap();
    let c10 = vllm["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["needed"] == "libc10_cuda.so")
        .unwrap();
    assert_eq!(c10["how"]["step"], "already_loaded", "{vllm}");
    // TensorRT's bindings find libnvinfer through their RUNPATH.
    let trt = modules
        .iter()
        .find(|m| m["package"] == "tensorrt_bindings")
        .unwrap();
    assert_eq!(trt["loads"], true, "{trt}");
}

#[test]
fn one_missing_library_is_one_finding_naming_each_package_and_the_wheel() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let r = environment();
    let (code, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .arg("check")
            .arg("--no-smoke"),
    );
    let f = findings(&v, "GD060");
    let cudnn: Vec<_> = f
        .iter()
        .filter(|f| f["title"].as_str().unwrap().contains("libcudnn.so.9"))
        .collect();
    assert_eq!(cudnn.len(), 1, "{:#}", v["findings"]);
    let title = cudnn[0]["title"].as_str().unwrap();
    assert!(
        // In the order they were opened (packages sorted after torch).
        title.starts_with("jax-cuda12-plugin 0.4.35, onnxruntime-gpu 1.20.1 needs libcudnn.so.9"),
        "{title}"
    );
    assert_eq!(cudnn[0]["severity"], "error");
    assert!(
        fix_commands(cudnn[0]).contains("pip install \"nvidia-cudnn-cu12>=9,<10\""),
        "{}",
        cudnn[0]
    );
    // Triton needs the driver's libcuda.so.1: a note, the driver's findings judge it.
    let triton: Vec<_> = f
        .iter()
        .filter(|f| f["title"].as_str().unwrap().contains("triton"))
        .collect();
    assert_eq!(triton.len(), 1, "{:#}", v["findings"]);
    assert_eq!(triton[0]["severity"], "info");
    assert_eq!(code, 1);
    // With cuDNN 9 on the loader path every module loads.
    r.lib(
        "usr/lib/x86_64-linux-gnu",
        "libcudnn.so.9.1.0",
        "libcudnn.so.9",
        &[],
    )
    .ld_cache(&[
        (
            "libcudart.so.12",
            "/usr/lib/x86_64-linux-gnu/libcudart.so.12",
        ),
        (
            "libcublasLt.so.12",
            "/usr/lib/x86_64-linux-gnu/libcublasLt.so.12",
        ),
        ("libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"),
    ]);
    let (_, v) = libs(&r);
    let failing: Vec<_> = v["environments"][0]["modules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["loads"] == false && m["package"] != "triton")
        .collect();
    assert!(failing.is_empty(), "{failing:#?}");
}

#[test]
fn a_cudnn_major_torch_pins_away_asks_for_a_compatible_pair() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    // torch 2.1's wheel pins cuDNN 8; onnxruntime-gpu 1.20 needs cuDNN 9.
    let r = gpu_host_with_libs();
    let site = r.torch_venv(
        "2.1.2+cu121",
        Some("12.1"),
        &["nvidia-cudnn-cu12==8.9.2.26"],
    );
    r.dist(&site, "nvidia-cudnn-cu12", "8.9.2.26");
    r.lib(
        &format!("{site}/nvidia/cudnn/lib"),
        "libcudnn.so.8",
        "libcudnn.so.8",
        &[],
    );
    r.bytes(
        &format!("{site}/torch/lib/libtorch_global_deps.so"),
        &elf::shared_object_runpath(
            "libtorch_global_deps.so",
            &["libcudnn.so.8"],
            "$ORIGIN/../../nvidia/cudnn/lib",
        ),
    );
    r.bytes(
        &format!("{site}/onnxruntime/capi/libonnxruntime_providers_cuda.so"),
        &elf::shared_object("libonnxruntime_providers_cuda.so", &["libcudnn.so.9"]),
    );
    r.dist(&site, "onnxruntime-gpu", "1.20.1");
    let (code, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .arg("check")
            .arg("--no-smoke"),
    );
    assert_eq!(code, 1);
    let f = findings(&v, "GD060");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    assert!(
        fix_commands(f[0]).contains("gpudoctor recommend torch onnxruntime-gpu"),
        "{}",
        f[0]
    );
    // GD050's guess gives way to the loader's verdict.
    assert!(findings(&v, "GD050").is_empty(), "{:#}", v["findings"]);
}

/// An environment with more native modules than the walk opens: the warning names the
/// packages whose modules were not examined, and how many, so no coverage is lost silently.
#[test]
fn modules_past_the_bound_are_named_in_a_warning() {
    let r = environment();
    let site = "venv/lib/python3.12/site-packages";
    let mut record = String::new();
    for i in 0..2100 {
        let name = format!("ext{i}.so");
        r.bytes(
            &format!("{site}/zzz_many/{name}"),
            &elf::shared_object(&name, &[]),
        );
        record.push_str(&format!("zzz_many/{name},,\n"));
    }
    r.dist(site, "zzz-many", "1.0");
    r.file(&format!("{site}/zzz_many-1.0.dist-info/RECORD"), &record);
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["check", "--no-smoke"]),
    );
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "GD016" && f["title"].as_str().unwrap().contains("native module"))
        .unwrap_or_else(|| panic!("no GD016: {:#}", v["findings"]));
    assert_eq!(f["severity"], "warning");
    let said = f["evidence"].to_string();
    // Packages' modules come first (torch first, then by name), then the top-level
    // modules: 2,000 opened, the rest are zzz_many's and flash_attn_2_cuda's.
    let total: usize = said
        .split(" native modules")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(total > 2100, "{said}");
    assert!(
        said.contains(&format!(
            "not those of zzz_many ({}), flash_attn_2_cuda (1)",
            total - 2001
        )),
        "{said}"
    );
}
