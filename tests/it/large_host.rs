//! A big host: three toolkits, a conda env, a 2,000-entry loader cache and a crowded
//! library directory. Checks the answers and a loose time bound; with
//! GPUDOCTOR_BENCH_ROOT=DIR the tree is also left at DIR for hyperfine (docs/performance.md).

use std::time::{Duration, Instant};

use crate::util::*;

fn build(r: &FakeRoot) {
    r.toolkit("usr/local/cuda-12.8", "12.8.1")
        .link("/usr/local/cuda-12.8", "usr/local/cuda")
        .toolkit("usr/local/cuda-12.4", "12.4.1")
        .toolkit("usr/local/cuda-11.8", "11.8.0")
        .nvcc("conda/envs/ml/bin/nvcc", "12.6.85")
        .file("conda/envs/ml/conda-meta/cuda-nvcc-12.6.85-0.json", "{}")
        .dir("conda/envs/ml/lib/python3.11/site-packages/torch");
    let multi = "usr/lib/x86_64-linux-gnu";
    let mut entries: Vec<(String, String)> = Vec::new();
    for i in 0..1990 {
        let name = format!("libsystem{i:04}.so.1");
        r.file(&format!("{multi}/{name}"), "");
        entries.push((name.clone(), format!("/{multi}/{name}")));
    }
    for (soname, path) in [
        ("libcuda.so.1", format!("/{multi}/libcuda.so.1")),
        ("libnvidia-ml.so.1", format!("/{multi}/libnvidia-ml.so.1")),
        (
            "libnvidia-ptxjitcompiler.so.1",
            format!("/{multi}/libnvidia-ptxjitcompiler.so.1"),
        ),
        (
            "libcudart.so.12",
            "/usr/local/cuda-12.8/lib64/libcudart.so.12".to_string(),
        ),
        (
            "libcudart.so.11.0",
            "/usr/local/cuda-11.8/lib64/libcudart.so.11.0".to_string(),
        ),
    ] {
        entries.push((soname.to_string(), path));
    }
    let pairs: Vec<(&str, &str)> = entries
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    r.ld_cache(&pairs);
}

#[test]
fn big_host_answers_within_bounds() {
    let r = FakeRoot::healthy(8);
    build(&r);
    let start = Instant::now();
    let (code, v) = json(r.cmd().env("CONDA_PREFIX", "/conda/envs/ml").arg("check"));
    // Debug build, shared CI machine: a loose bound that still catches a quadratic walk.
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(
        v["snapshot"]["libraries"]["search"]["cache"]["value"]["entries"],
        1995
    );
    assert_eq!(
        v["snapshot"]["toolkits"]["installs"]
            .as_array()
            .unwrap()
            .len(),
        5,
        "{:#}",
        v["snapshot"]["toolkits"]
    );
    assert!(code == 0 || code == 1);
    for probe in ["toolkits", "libraries"] {
        assert_eq!(v["snapshot"]["probes"][probe]["status"], "ok");
    }
    if let Some(dir) = std::env::var_os("GPUDOCTOR_BENCH_ROOT") {
        let dest = std::path::PathBuf::from(dir);
        let _ = std::fs::remove_dir_all(&dest);
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(r.path())
            .arg(&dest)
            .status()
            .unwrap();
        assert!(status.success());
    }
}
