//! The PCI id → GPU → compute capability table (src/compat/pci_ids.rs): its names against the
//! real pci.ids, and the rules that need a compute capability working from the PCI bus alone
//! (no kernel module, no NVML), through the real binary against fake roots.

use crate::util;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::util::*;
use serde_json::Value;

/// A pci.ids: its `Version:` and the NVIDIA (10de) device lines, in order.
struct PciIds {
    version: String,
    devices: Vec<(u16, String)>,
}

/// Parsed here on its own (not with the crate's or the generator's code), so a slip in
/// either shows.
fn read_pci_ids(path: &PathBuf) -> PciIds {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut version = String::new();
    let mut devices = Vec::new();
    let mut vendor = "";
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("#\tVersion: ") {
            if version.is_empty() {
                version = v.trim().to_string();
            }
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with("C ") {
            vendor = "";
        } else if !line.starts_with('\t') {
            vendor = line.get(..4).unwrap_or("");
        } else if vendor == "10de" && !line.starts_with("\t\t") {
            let (id, name) = line[1..].split_once("  ").expect("id  name");
            devices.push((
                u16::from_str_radix(id, 16).expect("hex id"),
                name.to_string(),
            ));
        }
    }
    assert!(!version.is_empty(), "{}: no Version line", path.display());
    PciIds { version, devices }
}

/// Every name in the embedded table equals the real pci.ids name for that id. With the file
/// the table was generated from (same Version: .ci/fetch-pci-ids, GPUDOCTOR_PCI_IDS) the
/// whole NVIDIA list must be identical; another version must agree on nearly all ids both
/// have (pci.ids renames a few entries per year). GPUDOCTOR_REQUIRE_PCI_IDS=1 (CI) fails
/// unless the exact comparison ran; =any (CI, when the pinned file is gone from Debian's
/// mirror) unless some real pci.ids was compared.
#[test]
fn embedded_names_match_the_real_pci_ids() {
    let table = gpudoctor::pci_ids_table::entries();
    let version = gpudoctor::pci_ids_table::version();
    let require = std::env::var_os("GPUDOCTOR_REQUIRE_PCI_IDS");
    let required = require.as_ref().is_some_and(|v| v == "1");
    let required_any = require.as_ref().is_some_and(|v| v == "any");
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("GPUDOCTOR_PCI_IDS") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "GPUDOCTOR_PCI_IDS={} is not a file",
            p.display()
        );
        paths.push(p);
    }
    for p in ["/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"] {
        let p = PathBuf::from(p);
        let same = |q: &PathBuf| q.canonicalize().ok() == p.canonicalize().ok();
        if p.is_file() && !paths.iter().any(same) {
            paths.push(p);
        }
    }
    assert!(
        !(required_any && paths.is_empty()),
        "GPUDOCTOR_REQUIRE_PCI_IDS=any: no pci.ids here (GPUDOCTOR_PCI_IDS, \
         /usr/share/misc/pci.ids, /usr/share/hwdata/pci.ids)"
    );
    let mut exact = false;
    for path in &paths {
        let real = read_pci_ids(path);
        if real.version == version {
            let want: Vec<(u16, &str)> =
                real.devices.iter().map(|(i, n)| (*i, n.as_str())).collect();
            for ((id, name), (rid, rname)) in table.iter().zip(&want) {
                assert_eq!(
                    (id, name),
                    (rid, rname),
                    "{} differs from the table",
                    path.display()
                );
            }
            assert_eq!(table.len(), want.len(), "{}: entry count", path.display());
            println!(
                "{}: all {} NVIDIA entries match (pci.ids {version})",
                path.display(),
                table.len()
            );
            exact = true;
            continue;
        }
        let real: BTreeMap<u16, &str> =
            real.devices.iter().map(|(i, n)| (*i, n.as_str())).collect();
        let shared: Vec<(u16, &str, &str)> = table
            .iter()
            .filter_map(|(id, name)| Some((*id, *name, *real.get(id)?)))
            .collect();
        let differ: Vec<String> = shared
            .iter()
            .filter(|(_, a, b)| a != b)
            .map(|(id, a, b)| format!("  10de:{id:04x} table {a:?}, file {b:?}"))
            .collect();
        println!(
            "{}: pci.ids {} is not the table's {version}: {} ids in both, {} named differently{}",
            path.display(),
            real_version(path),
            shared.len(),
            differ.len(),
            if differ.is_empty() {
                String::new()
            } else {
                format!(":\n{}", differ.join("\n"))
            }
        );
        assert!(
            shared.len() > 1000,
            "{}: too few NVIDIA ids in common",
            path.display()
        );
        assert!(
            differ.len() * 20 < shared.len(),
            "{}: more than 5% of the shared ids are named differently",
            path.display()
        );
    }
    if !exact {
        let why = format!(
            "no pci.ids of Version {version} here (looked at GPUDOCTOR_PCI_IDS, \
             /usr/share/misc/pci.ids, /usr/share/hwdata/pci.ids); .ci/fetch-pci-ids FILE \
             fetches it"
        );
        assert!(!required, "GPUDOCTOR_REQUIRE_PCI_IDS=1: {why}");
        println!("skipped the exact comparison: {why}");
    }
}

fn real_version(path: &PathBuf) -> String {
    read_pci_ids(path).version
}

/// A host whose NVIDIA driver is not installed: the GPU is on the PCI bus with no driver
/// bound, no kernel module, no /proc/driver/nvidia, no NVML.
fn bare_host(device: &str) -> FakeRoot {
    let r = FakeRoot::new();
    r.pci("0000:01:00.0", device, "030000", None)
        .pci("0000:01:00.1", "22e8", "040300", None);
    r
}

/// A GPU with no driver bound is named from the embedded pci.ids in the Devices section, not
/// only by its id: `GeForce RTX 4090 (10de:2684) → no driver`.
#[test]
fn an_unbound_gpu_is_named_by_pci_ids_in_the_report() {
    let r = bare_host("2684");
    let out = run(r.cmd().args(["check", "--no-smoke", "--color", "never"]));
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("0000:01:00.0"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(line.contains("RTX 4090 (10de:2684) → no driver"), "{line}");
    assert!(!line.contains("[GPU]"), "{line}");
}

fn check(r: &FakeRoot) -> (i32, Value) {
    json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"))
}

/// A torch 2.6.0+cu126 whose libtorch_cuda.so carries SASS for sm_50 … sm_90 and no PTX.
fn torch_up_to_sm90(r: &FakeRoot) {
    use util::fatbin::{elf_with_fatbin, fatbin_section, Kind};
    let site = r.torch_venv("2.6.0+cu126", Some("12.6"), &[]);
    let arches: Vec<(Kind, u32, bool)> = [50, 60, 70, 75, 80, 86, 90]
        .iter()
        .map(|a| (Kind::Elf, *a, false))
        .collect();
    let containers: Vec<&[(Kind, u32, bool)]> = vec![&arches; 4];
    r.bytes(
        &format!("{site}/torch/lib/libtorch_cuda.so"),
        &elf_with_fatbin("libtorch_cuda.so", &fatbin_section(&containers)),
    );
}

fn evidence_sources(f: &Value) -> Vec<String> {
    f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn torch_without_kernels_for_a_gpu_known_only_by_its_pci_id() {
    // An RTX 5090 (10de:2b85, sm_120) before its driver is installed.
    let r = bare_host("2b85");
    torch_up_to_sm90(&r);
    let (code, v) = check(&r);
    let km = &v["snapshot"]["kernel_module"];
    assert_eq!(
        km["modules"]["value"],
        serde_json::json!([]),
        "no module loaded: {km:#}"
    );
    assert!(km["gpus"]["missing"].is_object(), "{km:#}");
    let gpus = v["derived"]["known_gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 1, "{gpus:#?}");
    assert_eq!(gpus[0]["name"], "GeForce RTX 5090");
    assert_eq!(gpus[0]["compute_capability"], "12.0");
    let f = findings(&v, "GD043");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("GeForce RTX 5090") && title.contains("sm_120"),
        "{title}"
    );
    let sources = evidence_sources(f[0]);
    assert!(
        sources.iter().any(|s| s.starts_with("PCI id 10de:2b85 at ")
            && s.contains("/sys/bus/pci/devices/0000:01:00.0")
            && s.contains("GB202 [GeForce RTX 5090]")),
        "{sources:#?}"
    );
    // No driver to fit: the newest build with sm_120 kernels.
    assert!(
        fix_commands(f[0]).contains("which has sm_120 kernels"),
        "{}",
        fix_commands(f[0])
    );
    assert_eq!(code, 1);

    // An RTX 4090 (10de:2684, sm_89) runs that build's sm_86 SASS: no finding. What the
    // table says about the id decides.
    let r = bare_host("2684");
    torch_up_to_sm90(&r);
    let (_, v) = check(&r);
    assert_eq!(v["derived"]["known_gpus"][0]["compute_capability"], "8.9");
    assert!(findings(&v, "GD043").is_empty(), "{:#}", v["findings"]);

    // An id the table has no compute capability for (GB20B): nothing is guessed.
    let r = bare_host("2e2a");
    torch_up_to_sm90(&r);
    let (_, v) = check(&r);
    assert_eq!(v["derived"]["known_gpus"], serde_json::json!([]));
    assert!(findings(&v, "GD043").is_empty(), "{:#}", v["findings"]);
}

#[test]
fn toolkit_that_cannot_target_a_gpu_known_only_by_its_pci_id() {
    // CUDA 12.6's nvcc and an RTX 5090 (sm_120 arrived in 12.8): warning.
    let r = bare_host("2b85");
    r.toolkit("usr/local/cuda-12.6", "12.6.3")
        .link("/usr/local/cuda-12.6", "usr/local/cuda");
    let (_, v) = json(r.cmd().arg("check"));
    let f = findings(&v, "GD023");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "warning");
    assert!(
        f[0]["title"].as_str().unwrap().contains("GeForce RTX 5090"),
        "{}",
        f[0]["title"]
    );
    assert!(f[0]["detail"].as_str().unwrap().contains("compute_120"));
    assert!(
        fix_commands(f[0]).contains("12.8"),
        "{}",
        fix_commands(f[0])
    );
    assert!(evidence_sources(f[0])
        .iter()
        .any(|s| s.starts_with("PCI id 10de:2b85")));

    // CUDA 13.0 and a Tesla P100 (10de:15f8, GP100, sm_60, dropped in 13.0): error.
    let r = bare_host("15f8");
    r.toolkit("usr/local/cuda-13.0", "13.0.2")
        .link("/usr/local/cuda-13.0", "usr/local/cuda");
    let (_, v) = json(r.cmd().arg("check"));
    let f = findings(&v, "GD023");
    assert_eq!(f.len(), 1, "{:#}", v["findings"]);
    assert_eq!(f[0]["severity"], "error");
    assert!(
        fix_commands(f[0]).contains("12.9"),
        "{}",
        fix_commands(f[0])
    );
    assert!(evidence_sources(f[0])
        .iter()
        .any(|s| s.starts_with("PCI id 10de:15f8")));
}

#[test]
fn nvml_and_the_driver_still_come_first() {
    // The driver names the GPU: its name, not the PCI table's, is what the rules see.
    let r = bare_host("2b85");
    r.modules(&["nvidia"])
        .nvidia_version("580.95.05")
        .driver_gpu("0000:01:00.0", "NVIDIA GeForce RTX 5090", 0);
    torch_up_to_sm90(&r);
    let (_, v) = check(&r);
    let gpus = v["derived"]["known_gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 1, "{gpus:#?}");
    assert_eq!(gpus[0]["name"], "NVIDIA GeForce RTX 5090");
    assert!(!gpus[0]["source"].as_str().unwrap().starts_with("PCI id"));
}
