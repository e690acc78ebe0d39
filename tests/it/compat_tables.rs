//! The compatibility tables as data: every row names a source a reader can open, the rows no
//! primary source confirms are listed here (the list may only shrink), and every release the
//! tables and their fixes name exists on PyPI (skipped, saying so, when PyPI is unreachable).

use crate::util;

use serde_json::Value;
use std::collections::BTreeSet;

fn tables() -> Value {
    let out = util::gpudoctor().arg("__compat-tables").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Rows whose source says UNCONFIRMED or is secondary, as "table | row". A row confirmed
/// later must leave this list; a new unconfirmed row cannot join it.
const UNCONFIRMED: &[&str] = &[
    // Variants served only by download.pytorch.org: their CUDA comes from the release's
    // variant table in the PyPI wheel, not from their own wheel.
    "torch builds | 2.15.0 cu130 x86_64",
    "torch builds | 2.15.0 cu130 aarch64",
    "torch builds | 2.15.0 cu126 x86_64",
    "torch builds | 2.15.0 cu126 aarch64",
    "torch builds | 2.14.1 cu132 x86_64",
    "torch builds | 2.14.1 cu132 aarch64",
    "torch builds | 2.14.1 cu126 x86_64",
    "torch builds | 2.14.1 cu126 aarch64",
    "torch builds | 2.13.0 cu132 x86_64",
    "torch builds | 2.13.0 cu132 aarch64",
    "torch builds | 2.13.0 cu126 x86_64",
    "torch builds | 2.13.0 cu126 aarch64",
    "torch builds | 2.12.1 cu126 x86_64",
    "torch builds | 2.12.1 cu132 x86_64",
    "torch builds | 2.12.1 cu132 aarch64",
    "torch builds | 2.12.1 cu126 aarch64",
    "torch builds | 2.11.0 cu128 x86_64",
    "torch builds | 2.11.0 cu126 x86_64",
    "torch builds | 2.11.0 cu128 aarch64",
    "torch builds | 2.11.0 cu126 aarch64",
    "torch builds | 2.10.0 cu130 x86_64",
    "torch builds | 2.10.0 cu126 x86_64",
    "torch builds | 2.10.0 cu130 aarch64",
    "torch builds | 2.10.0 cu128 aarch64",
    "torch builds | 2.10.0 cu126 aarch64",
    "torch builds | 2.9.1 cu130 x86_64",
    "torch builds | 2.9.1 cu126 x86_64",
    "torch builds | 2.9.1 cu130 aarch64",
    "torch builds | 2.9.1 cu128 aarch64",
    "torch builds | 2.8.0 cu129 x86_64",
    "torch builds | 2.8.0 cu126 x86_64",
    "torch builds | 2.7.1 cu118 x86_64",
    "torch builds | 2.6.0 cu118 x86_64",
    "architectures | 8.8 Ampere-class (Tegra?)",
    "architectures | 8.9 Ada Lovelace",
    "architectures | 9.0 Hopper",
    "architectures | 10.3 Blackwell Ultra",
    "architectures | 12.1 Blackwell",
    "GPU models | data center H800",
    "GPU models | data center H20",
    "GPU models | data center L20",
    "GPU models | data center A800",
    "GPU models | data center A10G",
    "GPU models | data center V100S",
    "GPU models | GeForce RTX 2050",
    "GPU models | GeForce GTX 1630",
    "GPU models | GeForce MX MX570",
    "GPU models | GeForce MX MX550",
    "PCI chips | GK208",
    "capabilities | fp16_tensor_cores",
    "capabilities | sparse_tensor_cores",
    "capabilities | unified_memory_paging",
    "toolkit drivers | 13.3 GA",
    "toolkit drivers | 13.3 Update 1",
    "toolkit drivers | 13.4 GA / Update 1",
    "toolkit drivers | 13.5",
    "driver branches | R565",
    "driver branches | R620",
    "jax | jax[cuda12]==0.11.2 x86_64/aarch64",
    "jax | jax[cuda12]==0.12.0.1 x86_64/aarch64",
    "jax | jax[cuda13]==0.11.2 x86_64/aarch64",
    "jax | jax[cuda13]==0.12.0.1 x86_64/aarch64",
    "jax | jax[cuda13]==0.7.2 x86_64/aarch64",
    "Xid | Xid 119 GSP RPC Timeout",
    "Xid | Xid 120 GSP Error",
    "Xid | Xid 144 NVLink error",
    "Xid | Xid 145 NVLink error",
    "Xid | Xid 146 NVLink error",
    "Xid | Xid 147 NVLink error",
    "Xid | Xid 148 NVLink error",
    "Xid | Xid 149 NVLink error",
    "Xid | Xid 150 NVLink error",
    "Xid | Xid 154 GPU recovery action",
];

#[test]
fn unconfirmed_rows_can_only_go_down() {
    let t = tables();
    let now: BTreeSet<String> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["confirmed"] == false)
        .map(|r| {
            format!(
                "{} | {}",
                r["table"].as_str().unwrap(),
                r["row"].as_str().unwrap()
            )
        })
        .collect();
    let listed: BTreeSet<String> = UNCONFIRMED.iter().map(|s| s.to_string()).collect();
    let new: Vec<&String> = now.difference(&listed).collect();
    assert!(
        new.is_empty(),
        "rows without a primary source that are not listed (confirm them instead): {new:#?}"
    );
    let gone: Vec<&String> = listed.difference(&now).collect();
    assert!(
        gone.is_empty(),
        "confirmed now (or removed): take them out of UNCONFIRMED so the count goes down: {gone:#?}"
    );
    eprintln!("compat_tables: {} unconfirmed rows", now.len());
}

#[test]
fn every_row_names_a_source_a_reader_can_open() {
    let t = tables();
    // A URL, a PR number, a wheel, a file in a repository or a toolkit binary, or a section
    // of NVIDIA's release notes / named documents.
    let openable = [
        "http",
        "developer.nvidia.com",
        ".whl",
        "wheel",
        ".py",
        ".cpp",
        ".sh",
        ".md",
        ".h ",
        "cuda.h",
        ".json",
        "Table",
        "§",
        "toolkit binar",
        "ptxas --help",
        "nvcc --list-gpu-code",
        "Programming Guide",
        "whitepaper",
        "README",
        "Architecture Matrix",
        "release notes",
        "CUDA RN",
    ];
    let mut bad = Vec::new();
    for r in t["rows"].as_array().unwrap() {
        let src = r["source"].as_str().unwrap();
        let pr = src.contains("pytorch#") || src.contains("PR #");
        let named = pr || openable.iter().any(|o| src.contains(o));
        // Unconfirmed rows are listed above instead.
        let unconfirmed = r["confirmed"] == false;
        // Documents that are not part of this repository cannot be a row's source.
        let outside = ["shared/", "compat.md", "DESIGN.md", "cases.json"]
            .iter()
            .any(|o| src.contains(o));
        if outside || !(named || unconfirmed) {
            bad.push(format!("{} | {} | {src}", r["table"], r["row"]));
        }
    }
    assert!(
        bad.is_empty(),
        "rows without an openable source:\n{}",
        bad.join("\n")
    );
}

/// PyPI's simple index for one project (JSON), through curl; None when unreachable.
fn pypi_versions(project: &str) -> Option<BTreeSet<String>> {
    let out = std::process::Command::new("curl")
        .args([
            "-sf",
            "--max-time",
            "30",
            "-H",
            "Accept: application/vnd.pypi.simple.v1+json",
            &format!("https://pypi.org/simple/{project}/"),
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(
        v["versions"]
            .as_array()?
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
    )
}

#[test]
fn every_release_the_tables_name_is_on_pypi() {
    let t = tables();
    let mut missing = Vec::new();
    let mut checked = 0;
    for project in ["torch", "torchvision", "torchaudio"] {
        let Some(on_pypi) = pypi_versions(project) else {
            crate::util::skip(format_args!(
                "compat_tables: https://pypi.org/simple/{project}/ is unreachable (curl)"
            ));
            return;
        };
        for pair in t["names_on_pypi"].as_array().unwrap() {
            if pair[0] != project {
                continue;
            }
            let v = pair[1].as_str().unwrap();
            checked += 1;
            if !on_pypi.contains(v) {
                missing.push(format!("{project}=={v}"));
            }
        }
    }
    assert!(checked > 100, "only {checked} names checked");
    assert!(
        missing.is_empty(),
        "named by the tables, not on PyPI: {missing:?}"
    );
}

/// The refresh script stays runnable (its network work is run by hand).
#[test]
fn the_refresh_script_parses_and_documents_itself() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/compat-refresh");
    let Ok(out) = std::process::Command::new("python3")
        .args([script, "--help"])
        .output()
    else {
        crate::util::skip(format_args!("compat_tables: no python3"));
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--nvrtc", "--scan-torch", "--platform", "--json"] {
        assert!(help.contains(flag), "{help}");
    }
}
