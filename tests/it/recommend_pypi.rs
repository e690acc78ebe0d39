//! Truth against PyPI: what `gpudoctor recommend` pins resolves for the Python and platform it
//! was asked for (`pip install --dry-run --only-binary=:all: --python-version … --platform …`,
//! PyPI's published metadata, nothing downloaded but small wheels), and a release it rejects
//! for the Python has indeed no wheel for it. The CUDA variant indexes of download.pytorch.org
//! are not read: the same torch release on PyPI stands for them. Skipped, saying so, when
//! PyPI or pip is unreachable.

use std::process::Command;

use crate::util::*;
use serde_json::Value;

fn pypi_reachable() -> bool {
    Command::new("curl")
        .args([
            "-fsS",
            "-m",
            "15",
            "-o",
            "/dev/null",
            "https://pypi.org/simple/pip/",
        ])
        .status()
        .is_ok_and(|s| s.success())
        && crate::util::python3()
            .args(["-m", "pip", "--version"])
            .output()
            .is_ok_and(|o| o.status.success())
}

/// The manylinux tags a wheel for `machine` may carry, newest first.
fn platform_tags(machine: &str) -> Vec<String> {
    let mut tags: Vec<String> = (17..=34)
        .rev()
        .map(|glibc| format!("manylinux_2_{glibc}_{machine}"))
        .collect();
    tags.push(format!("manylinux2014_{machine}"));
    tags
}

/// pip's resolution of `reqs` for that Python and machine, without dependencies: the
/// (name, version) pairs it would install, or pip's error.
fn pip_resolves(
    reqs: &[String],
    python: &str,
    machine: &str,
) -> Result<Vec<(String, String)>, String> {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let mut cmd = crate::util::python3();
    // pip 23 checks Requires-Python against its own interpreter even with --python-version:
    // it is ignored here and checked against the Python asked for below.
    cmd.args([
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--no-deps",
        "--ignore-installed",
        "--quiet",
    ])
    .arg("--ignore-requires-python")
    .args(["--disable-pip-version-check", "--only-binary=:all:"])
    .args(["--python-version", python])
    .arg("--target")
    .arg(dir.path().join("t"))
    .arg("--report")
    .arg(&report);
    for t in platform_tags(machine) {
        cmd.args(["--platform", &t]);
    }
    // Extras name other distributions; --no-deps resolves the package itself.
    cmd.args(reqs);
    cmd.env("PIP_CACHE_DIR", cache_dir());
    let out = cmd.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    for i in v["install"].as_array().unwrap() {
        let spec = i["metadata"]["requires_python"].as_str().unwrap_or("");
        if !python_satisfies(python, spec) {
            return Err(format!(
                "{} {} requires Python {spec}",
                i["metadata"]["name"], i["metadata"]["version"]
            ));
        }
    }
    Ok(v["install"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_ascii_lowercase()
                    .replace('_', "-"),
                i["metadata"]["version"].as_str().unwrap().to_string(),
            )
        })
        .collect())
}

/// "3.12" against a Requires-Python such as ">=3.10, !=3.11.*, <3.14".
fn python_satisfies(python: &str, spec: &str) -> bool {
    let num = |s: &str| -> Vec<u32> {
        s.trim()
            .trim_end_matches(".*")
            .split('.')
            .filter_map(|p| p.trim().parse().ok())
            .collect()
    };
    let have = num(python);
    spec.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .all(|c| {
            let (op, v) = match c.find(|ch: char| ch.is_ascii_digit()) {
                Some(i) => c.split_at(i),
                None => return true,
            };
            let want = num(v);
            let n = want.len().max(2);
            let h: Vec<u32> = (0..n).map(|i| have.get(i).copied().unwrap_or(0)).collect();
            let w: Vec<u32> = (0..n).map(|i| want.get(i).copied().unwrap_or(0)).collect();
            match op.trim() {
                ">=" => h >= w,
                ">" => h > w,
                "<=" => h <= w,
                "<" => h < w,
                "!=" => h[..want.len().min(2)] != w[..want.len().min(2)],
                "==" | "~=" => {
                    h[..want.len().min(2)] == w[..want.len().min(2)] || op.trim() == "~=" && h >= w
                }
                _ => true,
            }
        })
}

fn cache_dir() -> std::path::PathBuf {
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".cache/gpudoctor/pip-dry-run")
}

fn recommend(args: &[&str]) -> Value {
    let r = FakeRoot::new();
    let (_, v) = json(r.cmd().arg("recommend").args(args));
    v
}

/// `recommend` for one machine, and pip's resolution of its pins for that Python and platform.
fn resolve_machine((args, python, machine): &(&[&str], &str, &str)) {
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--python", python, "--platform", machine, "--fresh"]);
    let v = recommend(&a);
    let pick = &v["recommendations"][0]["pick"];
    assert!(!pick.is_null(), "{a:?}: nothing recommended: {v:#}");
    let reqs: Vec<String> = pick["pins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["requirement"].as_str().unwrap().to_string())
        .collect();
    let mut want: Vec<(String, String)> = pick["pins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["version"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    match pip_resolves(&reqs, python, machine) {
        Ok(mut got) => {
            got.sort();
            want.sort();
            assert_eq!(got, want, "{a:?}: pip resolved otherwise");
        }
        Err(e) => panic!("{a:?} → {reqs:?} does not resolve for Python {python} on {machine}: {e}"),
    }
}

/// Machines and packages; each pick resolves on PyPI for its Python and platform.
#[test]
fn recommended_pins_resolve_on_pypi() {
    if !pypi_reachable() {
        crate::util::skip(format_args!("recommend_pypi: PyPI (curl https://pypi.org/simple/pip/) or `python3 -m pip` is unavailable"));
        return;
    }
    let machines: &[(&[&str], &str, &str)] = &[
        (
            &["torch", "--driver", "580.95.05", "--gpu", "sm_90"],
            "3.12",
            "x86_64",
        ),
        (
            &["torch", "--driver", "570.133.07", "--gpu", "sm_61"],
            "3.11",
            "x86_64",
        ),
        (
            &["torch", "--driver", "470.82.01", "--gpu", "sm_80"],
            "3.10",
            "x86_64",
        ),
        (
            &["torch", "--driver", "580.95.05", "--gpu", "sm_90"],
            "3.13",
            "aarch64",
        ),
        (
            &["jax", "--driver", "580.95.05", "--gpu", "sm_90"],
            "3.12",
            "x86_64",
        ),
        (
            &["jax", "--driver", "550.54.15", "--gpu", "sm_80"],
            "3.11",
            "aarch64",
        ),
        (
            &["tensorflow", "--driver", "550.54.15", "--gpu", "sm_86"],
            "3.11",
            "x86_64",
        ),
        (
            &["onnxruntime-gpu", "--driver", "550.54.15", "--gpu", "sm_89"],
            "3.12",
            "x86_64",
        ),
        (
            &["vllm", "--driver", "580.95.05", "--gpu", "sm_90"],
            "3.12",
            "x86_64",
        ),
        (
            &["xformers", "--driver", "580.95.05", "--gpu", "sm_90"],
            "3.12",
            "x86_64",
        ),
        (
            &["bitsandbytes", "--driver", "570.133.07", "--gpu", "sm_86"],
            "3.12",
            "x86_64",
        ),
    ];
    // pip spends its time waiting on PyPI: four machines at a time.
    let checked = std::sync::atomic::AtomicUsize::new(0);
    for chunk in machines.chunks(4) {
        std::thread::scope(|scope| {
            let runs: Vec<_> = chunk
                .iter()
                .map(|m| scope.spawn(|| resolve_machine(m)))
                .collect();
            for r in runs {
                if let Err(e) = r.join() {
                    std::panic::resume_unwind(e);
                }
                checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
    let checked = checked.into_inner();
    eprintln!("recommend_pypi: {checked} recommendations resolve on PyPI");
}

/// A release `recommend` rejects for the Python has no wheel for it on PyPI, and the one it
/// chooses instead has.
#[test]
fn a_release_rejected_for_the_python_has_no_wheel_for_it() {
    if !pypi_reachable() {
        crate::util::skip(format_args!(
            "recommend_pypi: PyPI or `python3 -m pip` is unavailable"
        ));
        return;
    }
    let v = recommend(&[
        "torch",
        "--driver",
        "580.95.05",
        "--gpu",
        "sm_90",
        "--python",
        "3.9",
        "--platform",
        "x86_64",
    ]);
    let r = &v["recommendations"][0];
    let rejected: Vec<String> = r["considered"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["rejected_because"]
                .to_string()
                .contains("no wheel for Python 3.9")
        })
        .map(|c| c["candidate"].as_str().unwrap().to_string())
        .collect();
    assert!(!rejected.is_empty(), "{v:#}");
    // "torch 2.15.0+cu132" → torch==2.15.0
    let release = rejected[0]
        .trim_start_matches("torch ")
        .split('+')
        .next()
        .unwrap()
        .to_string();
    let e = pip_resolves(&[format!("torch=={release}")], "3.9", "x86_64").unwrap_err();
    assert!(
        e.contains("No matching distribution") || e.contains("Could not find a version"),
        "{e}"
    );
    let chosen = r["pick"]["pins"][0]["version"].as_str().unwrap();
    pip_resolves(&[format!("torch=={chosen}")], "3.9", "x86_64").unwrap();
}
