//! The loader emulation against glibc on real NVIDIA and PyTorch libraries: the torch venv
//! of `.ci/fetch-torch-venv` (torch 2.15.0 with its CUDA 13 wheels) and two older CUDA 13
//! libraries from PyPI (`.ci/fetch-old-cuda-libs`: nvJitLink 13.0.88, cudart 13.0.96).
//! For each situation glibc's verdict (Python's ctypes, RTLD_NOW, after `import torch`
//! where a program would have imported it) must be the one gpudoctor predicted from the
//! files: the module loads (and which copies are mapped), or the exact loader message.
//!
//!   GPUDOCTOR_TORCH_VENV=DIR GPUDOCTOR_OLD_CUDA_LIBS=DIR2 cargo test --test it real_loader::
//!
//! Without those variables the tests say why and pass.

use std::path::{Path, PathBuf};

use crate::util::loader_lab::{Lab, Outcome};
use crate::util::*;

fn dirs() -> Option<(PathBuf, PathBuf)> {
    let get = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    match (get("GPUDOCTOR_TORCH_VENV"), get("GPUDOCTOR_OLD_CUDA_LIBS")) {
        (Some(v), Some(o)) => Some((v, o)),
        _ => {
            crate::util::skip(format_args!("real_loader: set GPUDOCTOR_TORCH_VENV (.ci/fetch-torch-venv) and GPUDOCTOR_OLD_CUDA_LIBS (.ci/fetch-old-cuda-libs)"));
            None
        }
    }
}

fn site(venv: &Path) -> PathBuf {
    let lib = venv.join("lib");
    let py = std::fs::read_dir(&lib)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("python3")
        })
        .expect("lib/python3.X");
    py.join("site-packages")
}

/// A directory holding only `name` from the older libraries (a link to it).
fn only(lab: &Lab, old: &Path, name: &str) -> String {
    let dir = lab.p(&format!("old-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(old.join(name), dir.join(name)).unwrap();
    dir.display().to_string()
}

/// Every CUDA-using module of the real environment, opened after `import torch` in the
/// order gpudoctor opens them: each loads or fails exactly as predicted.
fn modules_agree(venv: &Path, ld: Option<&str>) -> serde_json::Value {
    let python = venv.join("bin/python");
    let mut cmd = gpudoctor();
    cmd.arg("libs").arg("--python").arg(&python);
    if let Some(ld) = ld {
        cmd.env("LD_LIBRARY_PATH", ld);
    }
    let (_, v) = json(&mut cmd);
    let site = site(venv);
    let env = v["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| Path::new(e["site"].as_str().unwrap()) == site)
        .unwrap_or_else(|| panic!("no linkage for {}: {v}", site.display()));
    let modules = env["modules"].as_array().unwrap();
    assert!(modules.len() >= 5, "{env}");
    let paths: Vec<&str> = modules
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    let script = r#"
import ctypes, json, sys
import torch
out = []
for f in sys.argv[1:]:
    try:
        ctypes.CDLL(f)
        out.append(None)
    except OSError as e:
        out.append(str(e))
print(json.dumps(out))
"#;
    let mut real = std::process::Command::new(&python);
    real.arg("-c")
        .arg(script)
        .args(&paths)
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    if let Some(ld) = ld {
        real.env("LD_LIBRARY_PATH", ld);
    }
    let out = real.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let real: Vec<Option<String>> = serde_json::from_slice(&out.stdout).unwrap();
    for (m, r) in modules.iter().zip(&real) {
        let predicted = m["failures"][0].as_str().map(str::to_string);
        assert_eq!(&predicted, r, "module {}", m["path"]);
    }
    v
}

#[test]
fn every_module_of_the_real_torch_environment_loads_as_predicted() {
    let Some((venv, _)) = dirs() else { return };
    let t = std::time::Instant::now();
    let v = modules_agree(&venv, None);
    eprintln!(
        "real_loader: {} modules agree ({:?})",
        v["environments"][0]["modules"]
            .as_array()
            .map_or(0, Vec::len),
        t.elapsed()
    );
    // torch binds its wheels' libraries by RPATH.
    let torch_c = v["environments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["modules"].as_array().unwrap())
        .find(|m| m["path"].as_str().unwrap().contains("torch/_C."))
        .expect("torch/_C");
    let cudnn = torch_c["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["needed"] == "libcudnn.so.9")
        .expect("libcudnn.so.9");
    assert_eq!(cudnn["how"]["step"], "rpath", "{cudnn}");
    assert!(cudnn["path"]
        .as_str()
        .unwrap()
        .contains("nvidia/cudnn/lib/"));
}

#[test]
fn an_older_nvjitlink_on_ld_library_path_is_used_and_still_loads() {
    let Some((venv, old)) = dirs() else { return };
    let lab = Lab::new();
    let ld = only(&lab, &old, "libnvJitLink.so.13");
    // cuSOLVER needs libnvJitLink.so.13 (RUNPATH $ORIGIN, searched after LD_LIBRARY_PATH) but
    // imports none of its symbols by version: the older copy is mapped and it loads.
    let cusolver = site(&venv).join("nvidia/cu13/lib/libcusolver.so.12");
    let got = lab.agree(&[&cusolver], Some(&ld));
    let old_target = std::fs::canonicalize(old.join("libnvJitLink.so.13")).unwrap();
    match &got {
        Outcome::Loads { .. } => {}
        other => panic!("{other:?}"),
    }
    let (_, v) = json(
        gpudoctor()
            .env("LD_LIBRARY_PATH", &ld)
            .arg("libs")
            .arg(&cusolver),
    );
    let jit = v["environments"][0]["modules"][0]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["needed"] == "libnvJitLink.so.13")
        .unwrap()
        .clone();
    assert_eq!(jit["how"]["step"], "ld_library_path");
    assert_eq!(jit["target"], old_target.display().to_string());
    // In the environment: torch's linalg library brings cuSOLVER in, the shadowing is judged
    // harmless (information), and every module still loads as predicted.
    let v = modules_agree(&venv, Some(&ld));
    let f = findings(&v, "GD045");
    assert!(
        f.iter().any(|f| f["severity"] == "info"
            && f["title"].as_str().unwrap().contains("libnvJitLink.so.13")),
        "{}",
        serde_json::to_string_pretty(&v["findings"]).unwrap()
    );
    assert!(findings(&v, "GD060")
        .iter()
        .all(|f| f["severity"] == "info"));
}

#[test]
fn an_extension_built_against_a_newer_nvjitlink_fails_with_glibcs_undefined_symbol() {
    let Some((venv, old)) = dirs() else { return };
    let lab = Lab::new();
    let wheel_lib = site(&venv).join("nvidia/cu13/lib");
    // Built like a CUDA extension against the wheel's nvJitLink 13.5: nvJitLink.h maps
    // nvJitLinkCreate to __nvJitLinkCreate_13_5 at version libnvJitLink.so.13.
    let user = lab.cc(
        "ext/libuser_ext.so",
        "libuser_ext.so",
        "extern int __nvJitLinkCreate_13_5(void *h, unsigned n, const char **o);\nint make(void *h) { return __nvJitLinkCreate_13_5(h, 0, 0); }\n",
        &[
            format!("-L{}", wheel_lib.display()),
            "-l:libnvJitLink.so.13".into(),
            format!("-Wl,--enable-new-dtags,-rpath,{}", wheel_lib.display()),
        ],
    );
    assert!(matches!(lab.agree(&[&user], None), Outcome::Loads { .. }));
    let ld = only(&lab, &old, "libnvJitLink.so.13");
    assert_eq!(
        lab.agree(&[&user], Some(&ld)),
        Outcome::Fails(format!(
            "{}: undefined symbol: __nvJitLinkCreate_13_5, version libnvJitLink.so.13",
            user.display()
        ))
    );
    // The finding says where the copy came from and how to get the one that works.
    let (code, v) = json(
        gpudoctor()
            .env("LD_LIBRARY_PATH", &ld)
            .arg("libs")
            .arg(&user),
    );
    assert_eq!(code, 1);
    let f = &findings(&v, "GD060")[0];
    assert_eq!(f["severity"], "error");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("__nvJitLinkCreate_13_5@libnvJitLink.so.13"),
        "{f}"
    );
    assert!(
        fix_commands(f).contains(&format!("Remove {ld} from LD_LIBRARY_PATH"))
            || f["fix"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&format!("Remove {ld} from LD_LIBRARY_PATH")),
        "{f}"
    );
}

#[test]
fn a_module_opened_through_a_link_elsewhere_misses_its_rpath_libraries() {
    let Some((venv, _)) = dirs() else { return };
    let lab = Lab::new();
    std::fs::create_dir_all(lab.p("copy")).unwrap();
    let link = lab.p("copy/libtorch_global_deps.so");
    std::os::unix::fs::symlink(site(&venv).join("torch/lib/libtorch_global_deps.so"), &link)
        .unwrap();
    // $ORIGIN is the link's directory: torch's RPATH ($ORIGIN/../../nvidia/cu13/lib) leads
    // nowhere, and libcudart.so.13 is not found unless the system has one.
    let got = lab.agree(&[&link], None);
    if let Outcome::Fails(e) = &got {
        assert_eq!(
            e,
            "libcudart.so.13: cannot open shared object file: No such file or directory"
        );
    }
}

#[test]
fn a_cudart_opened_first_is_the_one_torch_gets() {
    let Some((venv, old)) = dirs() else { return };
    let lab = Lab::new();
    let early = std::fs::canonicalize(old.join("libcudart.so.13")).unwrap();
    let deps = site(&venv).join("torch/lib/libtorch_global_deps.so");
    let got = lab.agree(&[&early, &deps], None);
    let wheel = std::fs::canonicalize(site(&venv).join("nvidia/cu13/lib/libcudart.so.13")).unwrap();
    match got {
        Outcome::Loads { .. } => {}
        other => panic!("{other:?}"),
    }
    let real = lab.real(&[&early, &deps], None);
    let Outcome::Loads { mapped } = real else {
        panic!()
    };
    assert!(mapped.contains(&early.display().to_string()), "{mapped:?}");
    assert!(!mapped.contains(&wheel.display().to_string()), "{mapped:?}");
    let (_, v) = json(gpudoctor().arg("libs").arg(&early).arg(&deps));
    let bound = v["environments"][0]["modules"][1]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["needed"] == "libcudart.so.13")
        .unwrap()
        .clone();
    assert_eq!(bound["how"]["step"], "already_loaded", "{bound}");
    assert_eq!(bound["target"], early.display().to_string());
}
