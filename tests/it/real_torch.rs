//! The "real thing" tier: gpudoctor's static PyTorch probe against a virtualenv holding the
//! real torch wheel from PyPI (built by `.ci/fetch-torch-venv DEST`), with the venv's own
//! Python, importing torch, as the oracle.
//!
//!   .ci/fetch-torch-venv /tmp/torch-venv
//!   GPUDOCTOR_TORCH_VENV=/tmp/torch-venv cargo test --test it real_torch:: -- --nocapture
//!
//! Without GPUDOCTOR_TORCH_VENV the test says why and passes.

use crate::util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

const VENV_VAR: &str = "GPUDOCTOR_TORCH_VENV";

/// What torch says about itself, run outside gpudoctor. `_cuda_getArchFlags()` is the
/// build's TORCH_CUDA_ARCH_LIST as compiled in (works without a GPU, unlike
/// `torch.cuda.get_arch_list()`, which returns [] when no device is usable).
const ORACLE: &str = r#"
import importlib.metadata as m, json, re, sys
import torch
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
flags = torch._C._cuda_getArchFlags() if hasattr(torch._C, "_cuda_getArchFlags") else None
wheels, companions = {}, {}
for d in m.distributions():
    n = norm(d.metadata["Name"])
    if n.startswith(("nvidia-", "cuda-")):
        wheels[n] = d.version
    if n in ("torchvision", "torchaudio", "triton", "pytorch-triton"):
        companions[n] = d.version
json.dump({
    "version": str(torch.__version__),
    "cuda": torch.version.cuda,
    "dist_version": m.version("torch"),
    "arch_flags": flags,
    "get_arch_list": torch.cuda.get_arch_list(),
    "wheels": wheels,
    "companions": companions,
}, sys.stdout)
"#;

fn venv() -> Option<PathBuf> {
    match std::env::var_os(VENV_VAR) {
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => {
            crate::util::skip(format_args!(
                "real_torch: {VENV_VAR} is not set (build a venv with \
                 `.ci/fetch-torch-venv DIR`, then set {VENV_VAR}=DIR)"
            ));
            None
        }
    }
}

fn oracle(python: &Path) -> Value {
    let t = Instant::now();
    let out = std::process::Command::new(python)
        .args(["-c", ORACLE])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", python.display()));
    assert!(
        out.status.success(),
        "the oracle failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "real_torch: oracle (python -c 'import torch ...') took {:?}",
        t.elapsed()
    );
    serde_json::from_slice(&out.stdout).expect("oracle JSON")
}

/// `check --only pytorch` of the venv's interpreter.
fn pytorch_check(venv: &Path) -> Value {
    util::json(
        util::gpudoctor()
            .arg("--python")
            .arg(venv.join("bin/python"))
            .args(["--only", "pytorch", "check"]),
    )
    .1
}

/// The environment gpudoctor found through --python.
fn by_python(report: &Value) -> &Value {
    report["snapshot"]["python"]
        .as_array()
        .expect("snapshot.python is a list")
        .iter()
        .find(|e| e["found_by"] == "--python")
        .unwrap_or_else(|| {
            panic!(
                "no environment found by --python in {:#}",
                report["snapshot"]["python"]
            )
        })
}

fn dists(v: &Value) -> BTreeMap<String, String> {
    v.as_array()
        .expect("a list of {name, version}")
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["version"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn str_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .expect("an object")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

/// Differences between two name→version maps, one line each.
fn map_diff(
    what: &str,
    gd: &BTreeMap<String, String>,
    py: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (n, v) in py {
        match gd.get(n) {
            None => out.push(format!(
                "{what}: python has {n}=={v}, gpudoctor does not list it"
            )),
            Some(g) if g != v => out.push(format!("{what}: {n}: gpudoctor {g}, python {v}")),
            _ => {}
        }
    }
    for (n, g) in gd {
        if !py.contains_key(n) {
            out.push(format!("{what}: gpudoctor lists {n}=={g}, python does not"));
        }
    }
    out
}

#[test]
fn static_probe_agrees_with_torch_itself() {
    let Some(venv) = venv() else { return };
    let python = venv.join("bin/python");
    assert!(python.exists(), "{} does not exist", python.display());

    let py = oracle(&python);
    eprintln!("real_torch: python says {py:#}");

    let t = Instant::now();
    let (_, report) = util::json(util::gpudoctor().arg("--python").arg(&python).args([
        "--skip",
        "nvml,toolkits,libraries",
        "check",
    ]));
    eprintln!("real_torch: gpudoctor check took {:?}", t.elapsed());
    let env = by_python(&report);
    let torch = &env["torch"];
    assert!(torch.is_object(), "gpudoctor found no torch in {env:#}");

    let mut diffs: Vec<String> = Vec::new();
    let mut same = |field: &str, gd: &Value, py: &Value| {
        if gd == py {
            eprintln!("real_torch: {field}: equal ({gd})");
        } else {
            diffs.push(format!("{field}: gpudoctor {gd}, python {py}"));
        }
    };
    same("version", &torch["version"]["value"], &py["version"]);
    same("cuda", &torch["cuda"], &py["cuda"]);
    same("dist_version", &torch["dist_version"], &py["dist_version"]);

    // Architectures: gpudoctor's arch_list from the .nv_fatbin against the build's flags.
    let flags: Vec<String> = py["arch_flags"]
        .as_str()
        .expect("torch._C._cuda_getArchFlags() returned a string")
        .split_whitespace()
        .map(String::from)
        .collect();
    let arches = &torch["arches"];
    match arches["value"]["arch_list"].as_array() {
        None => diffs.push(format!(
            "arch_list: gpudoctor has none ({}), python {flags:?}",
            if arches.is_null() {
                "no arches fact".to_string()
            } else {
                arches["missing"].to_string()
            }
        )),
        Some(list) => {
            let gd: Vec<String> = list
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            if gd == flags {
                eprintln!("real_torch: arch_list: equal ({})", gd.join(" "));
            } else {
                let only_gd: Vec<_> = gd.iter().filter(|a| !flags.contains(a)).collect();
                let only_py: Vec<_> = flags.iter().filter(|a| !gd.contains(a)).collect();
                diffs.push(format!(
                    "arch_list: gpudoctor {gd:?}, python {flags:?} (only gpudoctor: {only_gd:?}, \
                     only python: {only_py:?}{})",
                    if only_gd.is_empty() && only_py.is_empty() {
                        ", order differs"
                    } else {
                        ""
                    }
                ));
            }
            eprintln!(
                "real_torch: fatbin: {} containers, {} bytes read, counts {}, extras {}",
                arches["value"]["containers"],
                arches["value"]["bytes_read"],
                arches["value"]["counts"],
                arches["value"]["extras"]
            );
        }
    }

    let gd_wheels = dists(&env["nvidia_wheels"]);
    let py_wheels = str_map(&py["wheels"]);
    let d = map_diff("nvidia_wheels", &gd_wheels, &py_wheels);
    if d.is_empty() {
        eprintln!("real_torch: nvidia_wheels: all {} equal", py_wheels.len());
    }
    diffs.extend(d);
    let d = map_diff(
        "companions",
        &dists(&env["companions"]),
        &str_map(&py["companions"]),
    );
    if d.is_empty() {
        eprintln!("real_torch: companions: equal ({})", py["companions"]);
    }
    diffs.extend(d);

    // How long the static probe takes on the real wheel.
    let (_, only) = util::json(
        util::gpudoctor()
            .arg("--python")
            .arg(&python)
            .args(["check", "--only", "pytorch"]),
    );
    let run = &only["snapshot"]["probes"]["pytorch"];
    assert_eq!(run["status"], "ok", "the pytorch probe: {run:#}");
    eprintln!(
        "real_torch: snapshot.probes.pytorch.elapsed_us = {}",
        run["elapsed_us"]
    );

    assert!(
        diffs.is_empty(),
        "gpudoctor's static answers differ from torch's own:\n  {}",
        diffs.join("\n  ")
    );
}

#[test]
fn live_probe_agrees_with_the_static_one() {
    let Some(venv) = venv() else { return };
    let python = venv.join("bin/python");
    let (_, v) = util::json(
        util::gpudoctor()
            .arg("--python")
            .arg(&python)
            .args(["--python-import", "check"]),
    );
    let live = &v["snapshot"]["python_live"]["result"];
    assert_eq!(live["status"], "ok", "{live:#}");
    let answer = &live["answer"];
    let env = by_python(&v);
    assert_eq!(answer["torch"], env["torch"]["version"]["value"]);
    assert_eq!(answer["cuda"], env["torch"]["cuda"]);
    assert!(answer["import_error"].is_null(), "{answer:#}");
    // Every CUDA library torch mapped comes from its own wheels.
    let site = env["site"].as_str().unwrap();
    let loaded = answer["loaded"].as_array().unwrap();
    assert!(
        loaded
            .iter()
            .any(|p| p.as_str().unwrap().contains("libcudnn")),
        "{loaded:#?}"
    );
    assert!(
        util::findings(&v, "GD049").is_empty(),
        "{:#}",
        v["findings"]
    );
    assert!(loaded.iter().all(
        |p| p.as_str().unwrap().starts_with(site) || p.as_str().unwrap().contains("libcuda.so")
    ));
}

#[test]
fn cuda_toolkit_pins_of_the_real_wheel_are_expanded_and_met() {
    let Some(venv) = venv() else { return };
    let v = pytorch_check(&venv);
    let env = by_python(&v);
    let via_toolkit: Vec<&str> = env["torch"]["requires"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["via"]
                .as_str()
                .is_some_and(|w| w.starts_with("cuda-toolkit["))
        })
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    // torch 2.15 asks cuda-toolkit for cublas, cudart, cufft, cufile, cupti, cusolver,
    // cusparse, nvjitlink, nvrtc and nvtx.
    for want in [
        "nvidia-cublas",
        "nvidia-cuda-runtime",
        "nvidia-nvjitlink",
        "nvidia-cuda-nvrtc",
    ] {
        assert!(
            via_toolkit.contains(&want),
            "{want} not expanded: {via_toolkit:?}"
        );
    }
    assert!(
        util::findings(&v, "GD044").is_empty(),
        "{:#}",
        v["findings"]
    );
}

/// The companions PyPI pairs with torch 2.15.0 (torchvision 0.29.2 `torch>=2.14.0`,
/// torchaudio 2.11.1 `torch>=2.11`) import beside it and register their operators: gpudoctor
/// must not call them a mismatch, and it reads the pins their wheels declare.
#[test]
fn companions_that_import_beside_the_real_torch_are_not_a_mismatch() {
    let Some(venv) = venv() else { return };
    let out = std::process::Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import torch, torchvision, torchaudio, torchvision.ops; \
             print(torchvision.__version__, torchaudio.__version__, torch.ops.torchvision.nms)",
        ])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "torchvision/torchaudio do not import beside torch:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("0.29.2") && said.contains(" 2.11.1"),
        "{said}"
    );

    let v = pytorch_check(&venv);
    let env = by_python(&v);
    let pin = |name: &str| {
        env["companions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| c["requires_torch"].clone())
    };
    assert_eq!(pin("torchvision"), Some(Value::from(">=2.14.0")));
    assert_eq!(pin("torchaudio"), Some(Value::from(">=2.11")));
    assert!(
        util::findings(&v, "GD046").is_empty(),
        "{:#}",
        v["findings"]
    );
}

/// `recommend` for the real environment's own machine (an H100 on R580, as the wheel's
/// default CUDA 13.2 build wants) keeps what is installed: torch 2.15.0 from PyPI is the cu132
/// build, and its torchvision/torchaudio are the releases that declare it.
#[test]
fn recommend_keeps_the_real_installed_build() {
    let Some(venv) = venv() else { return };
    let (code, v) = util::json(
        util::gpudoctor()
            .arg("recommend")
            .arg("--python")
            .arg(venv.join("bin/python"))
            .args(["--driver", "580.95.05", "--gpu", "sm_90"]),
    );
    assert_eq!(code, 0, "{v:#}");
    let r = &v["recommendations"][0];
    assert_eq!(r["pick"]["label"], "torch 2.15.0+cu132", "{r:#}");
    assert_eq!(r["pick"]["reinstall"], false, "{r:#}");
    let pins: Vec<&str> = r["pick"]["pins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["requirement"].as_str().unwrap())
        .collect();
    assert_eq!(
        pins,
        ["torch==2.15.0", "torchvision==0.29.2", "torchaudio==2.11.1"]
    );
    assert!(
        r["notes"].to_string().contains("nothing to install"),
        "{:#}",
        r["notes"]
    );
    assert_eq!(v["machine"]["python"]["value"], serde_json::json!([3, 11]));
}

/// A torchvision wheel from PyPI built for another torch (0.27.1 declares torch==2.12.1),
/// fetched by .ci/run: GPUDOCTOR_OTHER_TORCHVISION is its path.
fn other_torchvision() -> Option<PathBuf> {
    match std::env::var_os("GPUDOCTOR_OTHER_TORCHVISION") {
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => {
            crate::util::skip(format_args!(
                "real_torch: GPUDOCTOR_OTHER_TORCHVISION is not set (.ci/run downloads \
                 torchvision 0.27.1's wheel and sets it)"
            ));
            None
        }
    }
}

fn site_packages(venv: &Path) -> PathBuf {
    let lib = venv.join("lib");
    let py = std::fs::read_dir(&lib)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("python3"))
        .expect("lib/python3.X");
    lib.join(py).join("site-packages")
}

/// The C++ ABI class, on real wheels: torchvision 0.27.1 (built for torch 2.12.1) beside the
/// real torch 2.15.0. glibc, asked by the real Python after `import torch`, names an undefined
/// c10 symbol; gpudoctor's error must name the same symbol, say which torch the wheel declares
/// and point at GD046's release; the matching torchvision 0.29.2 of the venv gets no such
/// finding.
#[test]
fn an_extension_built_for_another_torch_fails_on_the_symbol_glibc_names() {
    let Some(venv) = venv() else { return };
    let Some(wheel) = other_torchvision() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("venv");
    let st = std::process::Command::new(venv.join("bin/python"))
        .args(["-m", "venv", "--without-pip"])
        .arg(&mirror)
        .status()
        .unwrap();
    assert!(st.success());
    // The venv's packages by link, torchvision replaced by the other wheel's files.
    let (from, to) = (site_packages(&venv), site_packages(&mirror));
    for e in std::fs::read_dir(&from).unwrap().filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("torchvision") {
            std::os::unix::fs::symlink(e.path(), to.join(&name)).unwrap();
        }
    }
    let st = std::process::Command::new(venv.join("bin/python"))
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&to)
        .status()
        .unwrap();
    assert!(st.success());
    let module = to.join("torchvision/_C.so");
    // glibc's verdict, as torchvision's own loader opens it (torch.ops.load_library → ctypes).
    let out = std::process::Command::new(mirror.join("bin/python"))
        .arg("-c")
        .arg(format!(
            "import torch, ctypes\ntry:\n    ctypes.CDLL({:?})\n    print('LOADS')\nexcept OSError as e:\n    print(e)",
            module.display().to_string()
        ))
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let real = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let symbol = real
        .split("undefined symbol: ")
        .nth(1)
        .unwrap_or_else(|| panic!("glibc loads it or fails otherwise: {real}"))
        .to_string();
    let (_, report) = util::json(
        util::gpudoctor()
            .arg("--python")
            .arg(mirror.join("bin/python"))
            .args(["--no-smoke", "check"]),
    );
    let findings = report["findings"].as_array().unwrap();
    let abi: Vec<&Value> = findings
        .iter()
        .filter(|f| f["code"] == "GD060" && f["title"].as_str().unwrap().contains(&symbol))
        .collect();
    assert_eq!(
        abi.len(),
        1,
        "one GD060 names glibc's symbol {symbol}:\n{}",
        serde_json::to_string_pretty(findings).unwrap()
    );
    let f = abi[0];
    assert_eq!(f["severity"], "error");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.starts_with(
            "torchvision 0.27.1 was built against another torch than the installed 2.15.0"
        ),
        "{title}"
    );
    assert!(
        f["detail"]
            .as_str()
            .unwrap()
            .contains("torchvision 0.27.1 declares torch==2.12.1"),
        "{f}"
    );
    // The root cause leads: GD046, whose fix installs the torchvision built for 2.15.0.
    let gd046 = findings
        .iter()
        .find(|f| f["code"] == "GD046")
        .expect("GD046 for the pin");
    assert!(gd046.to_string().contains("torchvision==0.29"), "{gd046}");
    // The matching torchvision of the venv itself: no undefined symbol anywhere.
    let (_, healthy) = util::json(
        util::gpudoctor()
            .arg("--python")
            .arg(venv.join("bin/python"))
            .args(["--no-smoke", "check"]),
    );
    assert!(
        !healthy["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.to_string().contains("undefined symbol")),
        "{}",
        healthy["findings"]
    );
}
