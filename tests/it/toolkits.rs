//! Toolkit discovery, library resolution and the rules that join them with the driver
//! (GD017–GD028), through the real binary against fake roots.

use crate::util;

use std::time::{Duration, Instant};

use crate::util::*;
use serde_json::Value;

fn installs(report: &Value) -> Vec<&Value> {
    report["snapshot"]["toolkits"]["installs"]
        .as_array()
        .expect("installs")
        .iter()
        .collect()
}

fn install<'a>(report: &'a Value, root: &str) -> &'a Value {
    installs(report)
        .into_iter()
        .find(|t| t["root"] == root)
        .unwrap_or_else(|| panic!("no toolkit at {root}: {:#}", report["snapshot"]["toolkits"]))
}

fn routes(t: &Value) -> Vec<String> {
    t["found"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["route"].as_str().unwrap().to_string())
        .collect()
}

fn library<'a>(report: &'a Value, soname: &str) -> &'a Value {
    report["snapshot"]["libraries"]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["soname"] == soname)
        .unwrap_or_else(|| panic!("no {soname}: {:#}", report["snapshot"]["libraries"]))
}

fn loaded(lib: &Value) -> &Value {
    let i = lib["winner"].as_u64().expect("a winner") as usize;
    &lib["candidates"][i]
}

#[test]
fn every_discovery_route_is_recorded() {
    let r = FakeRoot::new();
    r.toolkit("usr/local/cuda-12.4", "12.4.1")
        .link("/usr/local/cuda-12.4", "usr/local/cuda")
        .toolkit("usr/local/cuda-11.8", "11.8.0")
        .toolkit("opt/cuda", "12.2.2")
        .toolkit("opt/nvidia/hpc_sdk/Linux_x86_64/24.5/cuda/12.4", "12.4.0")
        .toolkit("srv/cuda-home", "12.1.1")
        .link("/usr/local/cuda-11.8/bin/nvcc", "usr/bin/nvcc");
    // A conda env with NVIDIA's conda packages (nvcc in $CONDA_PREFIX/bin).
    r.nvcc("conda/envs/ml/bin/nvcc", "12.6.85")
        .file("conda/envs/ml/conda-meta/cuda-nvcc-12.6.85-0.json", "{}")
        .file("conda/envs/ml/conda-meta/cuda-version-12.6-3.json", "{}")
        .file(
            "conda/envs/ml/conda-meta/python-3.11.9-h955ad1f_0.json",
            "{}",
        )
        .dir("conda/envs/ml/lib/python3.11/site-packages");
    // pip's CUDA 13 compiler wheel in a virtualenv.
    let site = "venv/lib/python3.12/site-packages";
    r.nvcc(&format!("{site}/nvidia/cu13/bin/nvcc"), "13.0.88")
        .dir(&format!("{site}/nvidia_cuda_nvcc-13.0.88.dist-info"))
        .file("venv/pyvenv.cfg", "home = /usr/bin\n");
    let (_, report) = json(
        r.cmd()
            .env("CUDA_HOME", "/srv/cuda-home")
            .env("CONDA_PREFIX", "/conda/envs/ml")
            .env("VIRTUAL_ENV", "/venv")
            .arg("check"),
    );

    let t = install(&report, "/usr/local/cuda-12.4");
    assert_eq!(t["cuda"], "12.4");
    assert_eq!(t["version"]["value"], "12.4.1");
    assert_eq!(t["version"]["source"], "/usr/local/cuda-12.4/version.json");
    assert_eq!(t["kind"], "nvidia");
    let rs = routes(t);
    assert!(rs.contains(&"usr_local_cuda".to_string()), "{rs:?}");
    assert!(rs.contains(&"versioned_dir".to_string()), "{rs:?}");
    assert_eq!(
        report["snapshot"]["toolkits"]["usr_local_cuda"],
        "/usr/local/cuda-12.4"
    );
    let old = install(&report, "/usr/local/cuda-11.8");
    assert!(routes(old).contains(&"nvcc_on_path".to_string()));
    let nvcc = &report["snapshot"]["toolkits"]["nvcc_on_path"];
    assert_eq!(nvcc["path"], "/usr/bin/nvcc");
    assert_eq!(nvcc["resolved"], "/usr/local/cuda-11.8/bin/nvcc");
    assert_eq!(routes(install(&report, "/opt/cuda")), vec!["opt_cuda"]);
    assert_eq!(
        routes(install(
            &report,
            "/opt/nvidia/hpc_sdk/Linux_x86_64/24.5/cuda/12.4"
        )),
        vec!["opt_nvidia"]
    );
    let home = install(&report, "/srv/cuda-home");
    assert_eq!(routes(home), vec!["cuda_home"]);
    assert_eq!(
        report["snapshot"]["toolkits"]["cuda_home"]["via"],
        "CUDA_HOME"
    );
    let conda = install(&report, "/conda/envs/ml");
    assert_eq!(conda["kind"], "conda");
    assert_eq!(conda["cuda"], "12.6");
    let pip = install(&report, &format!("/{site}/nvidia/cu13"));
    assert_eq!(pip["kind"], "pip_wheel");
    assert_eq!(pip["version"]["value"], "13.0.88");
    assert_eq!(pip["cuda"], "13.0");
    assert!(
        !r.p("usr/local/cuda-11.8/bin/RAN").exists(),
        "an nvcc under --root was executed"
    );
    assert!(!r.p("conda/envs/ml/bin/RAN").exists());
}

#[test]
fn version_sources_in_order_of_trust() {
    let r = FakeRoot::new();
    // Date-shaped patch: only major.minor counts.
    r.toolkit("usr/local/cuda-12.6", "12.6.3").file(
        "usr/local/cuda-12.6/version.json",
        r#"{"cuda":{"name":"CUDA SDK","version":"12.6.20241114"}}"#,
    );
    // Garbage version.json: the header decides, and nvcc is never run under --root.
    r.toolkit("usr/local/cuda-12.1", "12.1.0")
        .remove("usr/local/cuda-12.1/lib64")
        .file("usr/local/cuda-12.1/version.json", "{\"cuda\": garbage")
        .file(
            "usr/local/cuda-12.1/include/cuda.h",
            "/* header */\n#define CUDA_VERSION 12010\n",
        );
    // Old layout: version.txt.
    r.dir("usr/local/cuda-10.2/bin")
        .nvcc("usr/local/cuda-10.2/bin/nvcc", "10.2.89")
        .file("usr/local/cuda-10.2/version.txt", "CUDA Version 10.2.89\n");
    // Only the runtime's file name says it.
    r.nvcc("usr/local/cuda-11.7/bin/nvcc", "11.7.99").lib(
        "usr/local/cuda-11.7/lib64",
        "libcudart.so.11.7.99",
        "libcudart.so.11.0",
        &[],
    );
    // Nothing says it, and the nvcc may not run.
    r.nvcc("usr/local/cuda-99/bin/nvcc", "99.0.0");
    let (_, report) = json(r.cmd().arg("check"));
    let t = install(&report, "/usr/local/cuda-12.6");
    assert_eq!(t["cuda"], "12.6");
    assert_eq!(t["version"]["value"], "12.6.20241114");
    let t = install(&report, "/usr/local/cuda-12.1");
    assert_eq!(t["cuda"], "12.1");
    assert_eq!(
        t["version"]["source"],
        "/usr/local/cuda-12.1/include/cuda.h (CUDA_VERSION)"
    );
    let t = install(&report, "/usr/local/cuda-10.2");
    assert_eq!(t["version"]["value"], "10.2.89");
    assert_eq!(t["version"]["source"], "/usr/local/cuda-10.2/version.txt");
    let t = install(&report, "/usr/local/cuda-11.7");
    assert_eq!(t["version"]["value"], "11.7.99");
    let t = install(&report, "/usr/local/cuda-99");
    assert_eq!(t["version"]["missing"]["reason"], "not_probed");
    assert!(t["cuda"].is_null());
    assert!(!r.p("usr/local/cuda-99/bin/RAN").exists());
}

#[test]
fn nvcc_runs_only_when_no_file_says_and_is_bounded() {
    // Outside --root: a toolkit with nothing but bin/nvcc on PATH.
    let dir = tempfile::tempdir().unwrap();
    let tk = dir.path().join("cuda");
    std::fs::create_dir_all(tk.join("bin")).unwrap();
    let nvcc = tk.join("bin/nvcc");
    let write = |body: &str| {
        std::fs::write(&nvcc, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let path = format!("{}:/usr/bin:/bin", tk.join("bin").display());
    let root = tk.display().to_string();
    let probe = |timeout: &str| {
        let (_, report) = json(gpudoctor().env("PATH", &path).args([
            "--timeout",
            timeout,
            "--only",
            "toolkits",
            "check",
        ]));
        report["snapshot"]["toolkits"]["installs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["root"] == root.as_str())
            .cloned()
            .unwrap_or_else(|| panic!("toolkit not found: {report:#}"))
    };

    write("echo 'Cuda compilation tools, release 12.8, V12.8.93'");
    let t = probe("5");
    assert_eq!(t["version"]["value"], "12.8.93");
    assert!(t["version"]["source"]
        .as_str()
        .unwrap()
        .ends_with("nvcc --version"));

    write("sleep 30");
    let start = Instant::now();
    let t = probe("2");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "a hung nvcc held the report"
    );
    assert_eq!(t["version"]["missing"]["reason"], "timed_out");

    // Megabytes of output: capped, and no version line means malformed, not a crash.
    write("yes garbage | head -c 4000000");
    let t = probe("5");
    assert_eq!(t["version"]["missing"]["reason"], "malformed");
    assert!(t["version"]["missing"]["detail"]
        .as_str()
        .unwrap()
        .contains("cap"));
}

#[test]
fn loader_cache_both_formats_and_loader_order() {
    for format in [
        ldcache::Format::Old,
        ldcache::Format::New,
        ldcache::Format::Compat,
    ] {
        let r = FakeRoot::healthy(1);
        r.driver_libs("580.95.05")
            .toolkit("usr/local/cuda-12.4", "12.4.127")
            .toolkit("usr/local/cuda-11.8", "11.8.89");
        // LD_LIBRARY_PATH names 11.8's runtime; the cache names 12.4's.
        let multi = "/usr/lib/x86_64-linux-gnu";
        r.ld_cache_format(
            &[
                (
                    "libcudart.so.12",
                    "/usr/local/cuda-12.4/lib64/libcudart.so.12",
                ),
                ("libcuda.so.1", &format!("{multi}/libcuda.so.1")),
                ("libnvidia-ml.so.1", &format!("{multi}/libnvidia-ml.so.1")),
                (
                    "libcudart.so.11.0",
                    "/usr/local/cuda-11.8/lib64/libcudart.so.11.0",
                ),
            ],
            format,
        );
        let (_, report) = json(
            r.cmd()
                .env("LD_LIBRARY_PATH", "/usr/local/cuda-11.8/lib64:/nonexistent")
                .arg("check"),
        );
        let search = &report["snapshot"]["libraries"]["search"];
        let expected = match format {
            ldcache::Format::Old => "old",
            ldcache::Format::New => "new",
            ldcache::Format::Compat => "compat",
        };
        assert_eq!(search["cache"]["value"]["format"], expected);
        assert_eq!(search["cache"]["value"]["entries"], 4);
        let cuda = loaded(library(&report, "libcuda.so.1"));
        assert_eq!(cuda["via"], "ld_so_cache");
        assert_eq!(cuda["version"], "580.95.05");
        assert_eq!(cuda["elf_soname"], "libcuda.so.1");
        let rt11 = library(&report, "libcudart.so.11.0");
        assert_eq!(loaded(rt11)["via"], "ld_library_path");
        assert_eq!(loaded(rt11)["version"], "11.8.89");
        let rt12 = loaded(library(&report, "libcudart.so.12"));
        assert_eq!(rt12["path"], "/usr/local/cuda-12.4/lib64/libcudart.so.12");
        assert_eq!(
            rt12["target"],
            "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127"
        );
    }
}

#[test]
fn pip_wheel_and_stale_cache_entries_are_labelled() {
    let r = FakeRoot::healthy(1);
    r.driver_libs("580.95.05");
    let site = "venv/lib/python3.11/site-packages";
    r.file("venv/pyvenv.cfg", "home = /usr/bin\n")
        .lib(
            &format!("{site}/nvidia/cudnn/lib"),
            "libcudnn.so.9",
            "libcudnn.so.9",
            &[],
        )
        .dir(&format!("{site}/nvidia_cudnn_cu12-9.1.0.70.dist-info"))
        .ld_cache(&[
            ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
            ("libcudnn.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8"),
        ]);
    let (_, report) = json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"));
    let cudnn9 = library(&report, "libcudnn.so.9");
    assert!(cudnn9["winner"].is_null());
    let wheel = &cudnn9["elsewhere"][0];
    assert_eq!(wheel["via"], "pip_wheel");
    assert_eq!(wheel["version"], "9.1.0.70");
    let cudnn8 = library(&report, "libcudnn.so.8");
    assert!(cudnn8["winner"].is_null());
    assert!(cudnn8["candidates"][0]["problem"]
        .as_str()
        .unwrap()
        .contains("missing on disk"));
}

// ---- rules -------------------------------------------------------------------------------

/// A healthy GPU host whose loader cache lists the driver's libraries at `lib_version`.
fn host_with_module_and_libs(kernel: &str, lib_version: &str, gpu: &str) -> FakeRoot {
    let r = FakeRoot::new();
    r.modules(&["nvidia_uvm", "nvidia"]).nvidia_version(kernel);
    r.node("nvidiactl", 0o666)
        .node("nvidia-uvm", 0o666)
        .node("nvidia0", 0o666);
    r.gpu("0000:18:00.0", Some("nvidia"))
        .driver_gpu("0000:18:00.0", gpu, 0);
    r.driver_libs(lib_version);
    let multi = "/usr/lib/x86_64-linux-gnu";
    r.ld_cache(&[
        ("libcuda.so.1", &format!("{multi}/libcuda.so.1")),
        ("libnvidia-ml.so.1", &format!("{multi}/libnvidia-ml.so.1")),
    ]);
    r
}

#[test]
fn gd017_toolkit_newer_than_driver() {
    // 12.4 on 535: same family, minor-version compatibility → warning with the caveats.
    let r = host_with_module_and_libs("535.104.05", "535.104.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-12.4", "12.4.1")
        .link("/usr/local/cuda-12.4", "usr/local/cuda");
    let (code, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD017");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0]["detail"].as_str().unwrap().contains("PTX"));
    assert_eq!(code, 0);

    // 12.4 on 470: below the 12.x family minimum → error, exit 1.
    let r = host_with_module_and_libs("470.82.01", "470.82.01", "Tesla T4");
    r.toolkit("usr/local/cuda-12.4", "12.4.1")
        .link("/usr/local/cuda-12.4", "usr/local/cuda");
    let (code, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD017");
    assert_eq!(f[0]["severity"], "error");
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("CUDA driver version is insufficient for CUDA runtime version"));
    assert!(fix_commands(f[0]).contains("550.54.14"));
    assert_eq!(code, 1);

    // A matching pair: nothing.
    let r = host_with_module_and_libs("550.54.15", "550.54.15", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-12.4", "12.4.1");
    let (_, report) = json(r.cmd().arg("check"));
    assert!(findings(&report, "GD017").is_empty());
}

#[test]
fn gd018_driver_upgraded_without_reboot() {
    let r = host_with_module_and_libs("460.56", "460.73.01", "Tesla V100-SXM2-32GB");
    let (code, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD018");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "error");
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("460.56") && title.contains("460.73.01"),
        "{title}"
    );
    assert!(fix_commands(f[0]).contains("Reboot"));
    assert!(fix_commands(f[0]).contains("rmmod nvidia_uvm"));
    assert_eq!(code, 1);

    let r = host_with_module_and_libs("460.73.01", "460.73.01", "Tesla V100-SXM2-32GB");
    let (_, report) = json(r.cmd().arg("check"));
    assert!(findings(&report, "GD018").is_empty());
}

/// A node whose driver packages were upgraded to 580 while nvidia.ko 550 is still loaded,
/// with CUDA 13.0 (which needs 580): a reboot fixes both, so GD018 leads and GD017 is its
/// consequence in every format.
fn upgraded_without_reboot(libraries: &str) -> FakeRoot {
    let r = host_with_module_and_libs("550.127.05", libraries, "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-13.0", "13.0.2")
        .link("/usr/local/cuda-13.0", "usr/local/cuda");
    r
}

/// Two independent root causes: the headline names both and only them, the consequence after
/// "which also cause", and the footer points at the first root.
#[test]
fn a_headline_with_two_roots_names_both_and_no_consequence() {
    let r = upgraded_without_reboot("580.95.05");
    let (code, report) = json(r.cmd().env("CUDA_VISIBLE_DEVICES", "-1").arg("check"));
    assert_eq!(code, 1);
    let codes: Vec<&str> = report["headline"]["codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"GD018") && codes.contains(&"GD009"),
        "{codes:?}"
    );
    assert!(!codes.contains(&"GD017"), "{codes:?}");
    let headline = report["headline"]["text"].as_str().unwrap();
    assert!(headline.contains("2 blockers ("), "{headline}");
    assert!(headline.contains("which also cause GD017"), "{headline}");
    let out = r
        .cmd()
        .env("CUDA_VISIBLE_DEVICES", "-1")
        .arg("check")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let footer = text.lines().last().unwrap_or_default();
    assert!(!footer.contains("GD017"), "{text}");
}

#[test]
fn gd018_leads_and_explains_gd017_in_every_format() {
    let r = upgraded_without_reboot("580.95.05");
    let (code, report) = json(r.cmd().arg("check"));
    assert_eq!(code, 1);
    assert_eq!(report["findings"][0]["code"], "GD018", "{report:#}");
    let gd017 = findings(&report, "GD017");
    assert_eq!(gd017.len(), 1, "{report:#}");
    assert_eq!(gd017[0]["caused_by"], "GD018");
    assert!(gd017[0]["cause_note"]
        .as_str()
        .unwrap()
        .contains("580.95.05"));
    assert!(findings(&report, "GD018")[0].get("caused_by").is_none());
    assert_eq!(report["headline"]["codes"], serde_json::json!(["GD018"]));
    let headline = report["headline"]["text"].as_str().unwrap();
    assert!(
        headline.contains("1 blocker (GD018), which also causes GD017"),
        "{headline}"
    );
    // The exit code and the summary still count the consequence.
    assert_eq!(report["summary"]["errors"], 2);

    let out = r.cmd().arg("check").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("error[")).collect();
    assert!(headings[0].starts_with("error[GD018]"), "{text}");
    assert!(headings[1].starts_with("error[GD017]"), "{text}");
    let gd017_block = text.split("error[GD017]").nth(1).unwrap();
    let gd017_block = gd017_block.split("\n\n").next().unwrap();
    assert!(
        gd017_block.contains("= why: caused by GD018 above. It judges"),
        "{gd017_block}"
    );
    assert!(!gd017_block.contains("= fix:"), "{gd017_block}");
    // The summary line, however it wrapped.
    let footer = text
        .trim_end()
        .rsplit("\n\n")
        .next()
        .unwrap()
        .replace('\n', " ");
    assert!(footer.contains("(1 caused by GD018)"), "{footer}");
    assert!(footer.contains("gpudoctor explain GD018"), "{footer}");

    let format = |f: &str| {
        let out = r.cmd().args(["check", "--format", f]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let md = format("markdown");
    assert!(md.contains("*Caused by GD018 above:*"), "{md}");
    assert!(md.find("[GD018]").unwrap() < md.find("[GD017]").unwrap());
    let junit = format("junit");
    assert!(junit.contains("(caused by GD018)"), "{junit}");
    assert!(junit.contains("= caused by GD018:"), "{junit}");
    let prom = format("prometheus");
    assert!(
        prom.lines().any(|l| l.starts_with("gpudoctor_finding{")
            && l.contains("code=\"GD017\"")
            && l.contains("caused_by=\"GD018\"")),
        "{prom}"
    );
    let html = format("html");
    assert!(
        html.contains("Caused by <a href=\"#finding-0\">GD018</a>"),
        "{html}"
    );
    let script = r.cmd().args(["check", "--fix-script"]).output().unwrap();
    let script = String::from_utf8_lossy(&script.stdout);
    assert!(
        script.contains("Nothing to run: caused by GD018 above."),
        "{script}"
    );
    assert!(!script.contains("Upgrade the NVIDIA driver"), "{script}");
}

#[test]
fn gd018_explains_a_torch_whose_cuda_the_loaded_module_is_too_old_for() {
    let r = upgraded_without_reboot("580.95.05");
    r.torch_venv("2.9.1+cu130", Some("13.0"), &[]);
    let (_, report) = json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"));
    let gd042 = findings(&report, "GD042");
    assert_eq!(gd042.len(), 1, "{report:#}");
    assert_eq!(gd042[0]["caused_by"], "GD018", "{:#}", gd042[0]);
    assert_eq!(report["findings"][0]["code"], "GD018");
    assert_eq!(report["headline"]["codes"], serde_json::json!(["GD018"]));
}

/// NVML refusing this user is not the reboot's doing: GD030 stays a root with its own fix.
#[test]
fn an_nvml_failure_of_another_kind_is_not_put_on_gd018() {
    use util::fake_nvml::{fake_nvml_lib, FakeNvml, FAKE_NVML_ENV};
    let r = upgraded_without_reboot("580.95.05");
    let dir = tempfile::tempdir().unwrap();
    let mut nvml = FakeNvml::default();
    nvml.faults.init_error = Some(4); // NVML_ERROR_NO_PERMISSION
    let (_, report) = json(
        r.cmd()
            .arg("--nvml-lib")
            .arg(fake_nvml_lib())
            .env(FAKE_NVML_ENV, nvml.write(dir.path()))
            .arg("check"),
    );
    let gd030 = findings(&report, "GD030");
    assert_eq!(gd030.len(), 1, "{:#}", report["findings"]);
    assert!(gd030[0].get("caused_by").is_none(), "{:#}", gd030[0]);
    assert!(!gd030[0]["fix"].as_array().unwrap().is_empty());
    assert_eq!(findings(&report, "GD017")[0]["caused_by"], "GD018");
}

#[test]
fn gd017_stays_a_root_cause_when_the_pending_driver_is_too_old_as_well() {
    // Libraries 575: after the reboot CUDA 13.0 still does not run.
    let r = upgraded_without_reboot("575.57.08");
    let (_, report) = json(r.cmd().arg("check"));
    let gd017 = findings(&report, "GD017");
    assert_eq!(gd017.len(), 1, "{report:#}");
    assert!(gd017[0].get("caused_by").is_none(), "{report:#}");
    let codes = &report["headline"]["codes"];
    assert!(
        codes.as_array().unwrap().contains(&"GD017".into()),
        "{codes}"
    );
    assert!(
        codes.as_array().unwrap().contains(&"GD018".into()),
        "{codes}"
    );
}

#[test]
fn gd019_gd020_old_usr_bin_nvcc_shadows_usr_local_cuda() {
    let r = host_with_module_and_libs("470.82.01", "470.82.01", "NVIDIA GeForce RTX 3090");
    // Ubuntu's nvidia-cuda-toolkit 10.1 owns /usr/bin/nvcc; NVIDIA's 11.4 is /usr/local/cuda.
    r.nvcc("usr/lib/nvidia-cuda-toolkit/bin/nvcc", "10.1.243")
        .file(
            "usr/lib/nvidia-cuda-toolkit/version.txt",
            "CUDA Version 10.1.243\n",
        )
        .link("../lib/nvidia-cuda-toolkit/bin/nvcc", "usr/bin/nvcc")
        .toolkit("usr/local/cuda-11.4", "11.4.4")
        .link("/usr/local/cuda-11.4", "usr/local/cuda");
    let (_, report) = json(r.cmd().arg("check"));
    let tk = &report["snapshot"]["toolkits"];
    assert_eq!(tk["cuda_home"]["path"], "/usr");
    assert_eq!(tk["cuda_home"]["via"], "the nvcc on PATH");
    let f = findings(&report, "GD020");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.contains("10.1") && title.contains("11.4"), "{title}");
    let fixes = fix_commands(f[0]);
    assert!(
        fixes.contains("export CUDA_HOME=/usr/local/cuda-11.4"),
        "{fixes}"
    );
    assert!(fixes.contains("apt remove nvidia-cuda-toolkit"), "{fixes}");

    // With CUDA_HOME pointing at 11.4, the shell's nvcc (10.1) now disagrees: GD019.
    let (_, report) = json(r.cmd().env("CUDA_HOME", "/usr/local/cuda").arg("check"));
    let f = findings(&report, "GD019");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0]["title"].as_str().unwrap().contains("/usr/bin/nvcc"));
    // The user chose 11.4 explicitly, and it is the newest: no GD020.
    assert!(findings(&report, "GD020").is_empty());
}

#[test]
fn gd019_nvcc_newer_than_usr_local_cuda() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("opt/cuda-13.0", "13.0.2")
        .link("/opt/cuda-13.0/bin/nvcc", "usr/bin/nvcc")
        .toolkit("usr/local/cuda-12.4", "12.4.1")
        .link("/usr/local/cuda-12.4", "usr/local/cuda");
    let (_, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD019");
    assert_eq!(f.len(), 1, "{report:#}");
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("/usr/local/cuda is CUDA 12.4"));
    assert!(fix_commands(f[0]).contains("export CUDA_HOME=/opt/cuda-13.0"));
    assert!(findings(&report, "GD020").is_empty());
}

#[test]
fn gd021_cuda_home_points_nowhere() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-13.0", "13.0.2");
    let (_, report) = json(
        r.cmd()
            .env("CUDA_HOME", "/usr/local/cuda-12.1")
            .arg("check"),
    );
    let f = findings(&report, "GD021");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(fix_commands(f[0]).contains("export CUDA_HOME=/usr/local/cuda-13.0"));

    // With an extension builder installed, the same is an error.
    let site = "venv/lib/python3.11/site-packages";
    r.file("venv/pyvenv.cfg", "home = /usr/bin\n")
        .dir(&format!("{site}/flash_attn-2.7.4.post1.dist-info"));
    let (code, report) = json(
        r.cmd()
            .env("CUDA_HOME", "/usr/local/cuda-12.1")
            .env("VIRTUAL_ENV", "/venv")
            .arg("check"),
    );
    assert_eq!(findings(&report, "GD021")[0]["severity"], "error");
    assert_eq!(code, 1);

    // A directory that is not a toolkit.
    r.dir("home/alice/empty");
    let (_, report) = json(r.cmd().env("CUDA_PATH", "/home/alice/empty").arg("check"));
    let f = findings(&report, "GD021");
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("holds no CUDA toolkit"));
}

#[test]
fn gd022_no_toolkit_info_or_warning() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    let (code, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD022");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["severity"], "info");
    assert_eq!(code, 0);

    // A conda env with a package that compiles CUDA code (bmtrain): warning, with the fix.
    let site = "conda/envs/apm/lib/python3.8/site-packages";
    r.dir(&format!("{site}/bmtrain-0.1.8.post1.dist-info"));
    let (_, report) = json(r.cmd().env("CONDA_PREFIX", "/conda/envs/apm").arg("check"));
    let f = findings(&report, "GD022");
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0]["title"].as_str().unwrap().contains("bmtrain"));
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("CUDA_HOME environment variable is not set"));
    assert!(fix_commands(f[0]).contains("cuda-toolkit"));
}

/// A prebuilt extension that is installed needs no toolkit: flash-attn's wheel brings
/// flash_attn_2_cuda.*.so (its RECORD lists it), so no warning; a package whose RECORD lists
/// no compiled module builds at install or first use (DeepSpeed's JIT ops), so it warns,
/// naming it.
#[test]
fn gd022_only_for_packages_that_still_build() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    let site = "venv/lib/python3.12/site-packages";
    r.file("venv/pyvenv.cfg", "home = /usr/bin\n").file(
        &format!("{site}/flash_attn-2.7.4.post1.dist-info/RECORD"),
        "flash_attn/__init__.py,sha256=x,10\nflash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so,sha256=y,400000000\n",
    );
    let check = || json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"));
    let (code, report) = check();
    assert_eq!(code, 0, "{:#}", report["findings"]);
    let f = findings(&report, "GD022");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "info", "{:#}", f[0]);
    let builders = &report["snapshot"]["toolkits"]["extension_builders"];
    assert_eq!(
        builders[0]["compiled"], "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
        "{builders:#}"
    );
    // DeepSpeed installed from its sdist: ops compile at first use.
    r.file(
        &format!("{site}/deepspeed-0.16.4.dist-info/RECORD"),
        "deepspeed/__init__.py,sha256=x,10\ndeepspeed/ops/csrc/adam/cpu_adam.cpp,sha256=y,100\n",
    );
    let (_, report) = check();
    let f = findings(&report, "GD022");
    assert_eq!(f[0]["severity"], "warning", "{:#}", f[0]);
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("deepspeed 0.16.4") && !title.contains("flash-attn"),
        "{title}"
    );
    assert!(
        f[0]["evidence"]
            .to_string()
            .contains("RECORD lists no compiled module"),
        "{:#}",
        f[0]
    );
}

#[test]
fn gd023_compiler_cannot_target_the_gpu() {
    // nvcc 11.5 and an RTX 4090 (sm_89): warning.
    let r = host_with_module_and_libs("535.104.05", "535.104.05", "NVIDIA GeForce RTX 4090");
    r.toolkit("usr/local/cuda-11.5", "11.5.2")
        .link("/usr/local/cuda-11.5", "usr/local/cuda");
    let (_, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD023");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0]["detail"].as_str().unwrap().contains("compute_89"));
    assert!(fix_commands(f[0]).contains("11.8"));

    // CUDA 13.0 and a GTX 1080 (sm_61, dropped in 13.0): error.
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA GeForce GTX 1080");
    r.toolkit("usr/local/cuda-13.0", "13.0.2")
        .link("/usr/local/cuda-13.0", "usr/local/cuda");
    let (_, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD023");
    assert_eq!(f[0]["severity"], "error");
    assert!(fix_commands(f[0]).contains("12.9"));
}

#[test]
fn gd024_stub_libcuda_first() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-13.0", "13.0.2")
        .link("libcuda.so", "usr/local/cuda-13.0/lib64/stubs/libcuda.so.1");
    let (code, report) = json(
        r.cmd()
            .env("LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib64/stubs")
            .arg("check"),
    );
    let f = findings(&report, "GD024");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "error");
    assert!(f[0]["detail"].as_str().unwrap().contains("stub library"));
    assert!(fix_commands(f[0]).contains("grep -vxF -e /usr/local/cuda-13.0/lib64/stubs |"));
    assert_eq!(code, 1);

    // Only the unversioned name reachable: a warning.
    r.remove("usr/local/cuda-13.0/lib64/stubs/libcuda.so.1");
    let (_, report) = json(
        r.cmd()
            .env("LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib64/stubs")
            .arg("check"),
    );
    let f = findings(&report, "GD024");
    assert_eq!(f[0]["severity"], "warning");
}

fn forward_compat_host(gpu: &str) -> FakeRoot {
    let r = host_with_module_and_libs("535.104.05", "535.104.05", gpu);
    r.toolkit("usr/local/cuda-12.4", "12.4.1").lib(
        "usr/local/cuda-12.4/compat",
        "libcuda.so.550.54.15",
        "libcuda.so.1",
        &[],
    );
    r
}

#[test]
fn gd025_forward_compat_depends_on_the_gpu() {
    let ld = "/usr/local/cuda-12.4/compat";
    let r = forward_compat_host("NVIDIA GeForce RTX 4090");
    let (code, report) = json(r.cmd().env("LD_LIBRARY_PATH", ld).arg("check"));
    let f = findings(&report, "GD025");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "error");
    assert!(f[0]["detail"].as_str().unwrap().contains("804"));
    assert_eq!(code, 1);
    // The compat libcuda is not a "driver/library mismatch".
    assert!(findings(&report, "GD018").is_empty());

    let r = forward_compat_host("NVIDIA H100 80GB HBM3");
    let (code, report) = json(r.cmd().env("LD_LIBRARY_PATH", ld).arg("check"));
    assert_eq!(findings(&report, "GD025")[0]["severity"], "info");
    // The toolkit is judged against the compat driver (550) it gets, not the 535 module.
    assert!(findings(&report, "GD017").is_empty(), "{report:#}");
    assert_eq!(code, 0);

    // A name the driver gives before it knows the model: the PCI id (10de:2330, an H100 SXM5
    // in pci.ids) still tells the class.
    let r = forward_compat_host("NVIDIA Graphics Device");
    let (_, report) = json(r.cmd().env("LD_LIBRARY_PATH", ld).arg("check"));
    assert_eq!(findings(&report, "GD025")[0]["severity"], "info");

    // An unknown GPU (an id the table has no model for): a warning that names the condition.
    r.file("sys/devices/pci0000:00/0000:18:00.0/device", "0x2e2a\n");
    let (_, report) = json(r.cmd().env("LD_LIBRARY_PATH", ld).arg("check"));
    assert_eq!(findings(&report, "GD025")[0]["severity"], "warning");
}

#[test]
fn gd026_other_major_on_ld_library_path() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-12.8", "12.8.1")
        .link("/usr/local/cuda-12.8", "usr/local/cuda")
        .toolkit("usr/local/cuda-11.8", "11.8.0");
    let (_, report) = json(
        r.cmd()
            .env("LD_LIBRARY_PATH", "/usr/local/cuda-11.8/lib64")
            .arg("check"),
    );
    let f = findings(&report, "GD026");
    assert!(!f.is_empty(), "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(any_title(&f, "CUDA 11.8 libraries"));
    let (_, report) = json(
        r.cmd()
            .env("LD_LIBRARY_PATH", "/usr/local/cuda-12.8/lib64")
            .arg("check"),
    );
    assert!(findings(&report, "GD026").is_empty(), "{report:#}");
}

#[test]
fn gd027_wsl_loader_path() {
    let r = FakeRoot::new();
    r.file(
        "proc/sys/kernel/osrelease",
        "5.15.167.4-microsoft-standard-WSL2\n",
    )
    .node("dxg", 0o666)
    .lib("usr/lib/wsl/lib", "libcuda.so.1.1", "libcuda.so.1", &[])
    .driver_libs("550.54.15")
    .ld_cache(&[("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1")]);
    let (code, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD027");
    assert_eq!(f.len(), 2, "{report:#}");
    assert!(f.iter().all(|f| f["severity"] == "error"));
    assert!(f.iter().any(|f| f["detail"]
        .as_str()
        .unwrap()
        .contains("GPU access blocked by the operating system")));
    assert_eq!(code, 1);

    // The healthy WSL layout: only the Windows driver's libcuda, registered in the cache,
    // and nvidia-smi linked from /usr/lib/wsl/lib.
    r.remove("usr/lib/x86_64-linux-gnu")
        .ld_cache(&[("libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1")])
        .file("usr/lib/wsl/lib/nvidia-smi", "")
        .chmod("usr/lib/wsl/lib/nvidia-smi", 0o755)
        .link("/usr/lib/wsl/lib/nvidia-smi", "usr/bin/nvidia-smi");
    let (_, report) = json(r.cmd().arg("check"));
    assert!(findings(&report, "GD027").is_empty(), "{report:#}");

    // A distro nvidia-smi alone: a warning.
    r.remove("usr/bin/nvidia-smi")
        .file("usr/bin/nvidia-smi", "#!/bin/sh\n")
        .chmod("usr/bin/nvidia-smi", 0o755);
    let (_, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD027");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(fix_commands(f[0]).contains("nvidia-utils"));
}

#[test]
fn gd028_dependency_the_loader_cannot_find() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    let multi = "usr/lib/x86_64-linux-gnu";
    r.lib(
        multi,
        "libcudnn_ops.so.9.1.0",
        "libcudnn_ops.so.9",
        &["libcublasLt.so.12", "libc.so.6"],
    )
    .lib(multi, "libcublasLt.so.11.11.3.6", "libcublasLt.so.11", &[]);
    let (code, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD028");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "error");
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .contains("libcublasLt.so.12"));
    assert_eq!(code, 1);

    r.lib(multi, "libcublasLt.so.12.4.5.8", "libcublasLt.so.12", &[]);
    let (_, report) = json(r.cmd().arg("check"));
    assert!(findings(&report, "GD028").is_empty());
}

// ---- the toolkit subcommand ------------------------------------------------------------

#[test]
fn toolkit_subcommand_text_and_json() {
    let r = host_with_module_and_libs("535.104.05", "535.104.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-12.2", "12.2.2")
        .link("/usr/local/cuda-12.2", "usr/local/cuda")
        .link("/usr/local/cuda-12.2/bin/nvcc", "usr/bin/nvcc")
        .ld_cache(&[
            ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
            (
                "libcudart.so.12",
                "/usr/local/cuda-12.2/lib64/libcudart.so.12",
            ),
        ]);
    let out = run(r.cmd().arg("toolkit"));
    assert_eq!(out.code, 0, "{}", out.stdout);
    for needle in [
        "/usr/local/cuda-12.2  12.2.2",
        "found via: nvcc on PATH (/usr/bin/nvcc), /usr/local/cuda, /usr/local/cuda-*",
        "compiles for: sm_50 – sm_90",
        "nvcc in a shell:        /usr/bin/nvcc → /usr/local/cuda-12.2 (CUDA 12.2)",
        // torch takes dirname(dirname(which nvcc)) without resolving the link: /usr.
        "torch extension builds: /usr → no toolkit (via the nvcc on PATH)",
        "dynamic loader:         libcudart.so.12 → /usr/local/cuda-12.2/lib64/libcudart.so.12 (12.2.2)",
        "libcuda.so.1  535.104.05",
    ] {
        assert!(out.stdout.contains(needle), "missing {needle:?} in:\n{}", out.stdout);
    }
    let (code, v) = json(r.cmd().arg("toolkit"));
    assert_eq!(code, 0);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["driver"]["version"], "535.104.05");
    assert_eq!(v["toolkits"][0]["root"], "/usr/local/cuda-12.2");
    assert_eq!(v["toolkits"][0]["compiler_targets"][1], "sm_90");
    assert_eq!(v["winners"]["cuda_home"]["path"], "/usr");
    assert_eq!(v["winners"]["libcudart"][0]["version"], "12.2.2");
    let f = v["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{v:#}");
    assert_eq!(f[0]["code"], "GD021");
    assert_eq!(f[0]["severity"], "warning");
    assert!(fix_commands(&f[0]).contains("export CUDA_HOME=/usr/local/cuda-12.2"));
    // With CUDA_HOME named, nothing is wrong.
    let (_, v) = json(r.cmd().env("CUDA_HOME", "/usr/local/cuda").arg("toolkit"));
    assert!(v["findings"].as_array().unwrap().is_empty(), "{v:#}");
    let md = run(r.cmd().args(["--format", "markdown", "toolkit"]));
    assert!(md.stdout.contains("| `/usr/local/cuda-12.2` | 12.2.2 |"));
}

// ---- regressions from review ------------------------------------------------------------

#[test]
fn gd023_a_gpu_newer_than_the_toolkit_is_not_dropped() {
    // B300 (sm_103, first in 12.9) with 12.8, whose list stops at sm_120 but lacks sm_103.
    let r = host_with_module_and_libs("575.51.03", "575.51.03", "NVIDIA B300 SXM6 AC");
    r.toolkit("usr/local/cuda-12.8", "12.8.1")
        .link("/usr/local/cuda-12.8", "usr/local/cuda");
    let (_, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD023");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(
        fix_commands(f[0]).contains("CUDA 12.9 or newer"),
        "{}",
        fix_commands(f[0])
    );
}

#[test]
fn foreign_architecture_libraries_are_skipped_like_the_loader_does() {
    let r = host_with_module_and_libs("550.54.15", "550.54.15", "NVIDIA H100 80GB HBM3");
    let dir = "usr/lib/aarch64-linux-gnu";
    for (real, soname) in [
        ("libcuda.so.535.104.05", "libcuda.so.1"),
        ("libnvidia-ml.so.535.104.05", "libnvidia-ml.so.1"),
    ] {
        r.bytes(
            &format!("{dir}/{real}"),
            &elf::shared_object_for(elf::FOREIGN_MACHINE, soname, &[]),
        )
        .link(real, &format!("{dir}/{soname}"));
    }
    let (_, report) = json(
        r.cmd()
            .env("LD_LIBRARY_PATH", format!("/{dir}"))
            .arg("check"),
    );
    assert!(
        findings(&report, "GD018").is_empty(),
        "{:#}",
        report["findings"]
    );
    let lib = library(&report, "libcuda.so.1");
    assert!(lib["candidates"][0]["problem"]
        .as_str()
        .unwrap()
        .contains("wrong ELF class or machine"));
    assert_eq!(loaded(lib)["version"], "550.54.15");
}

#[test]
fn cu12_and_cu13_wheels_side_by_side_keep_their_versions() {
    let r = FakeRoot::new();
    let site = "venv/lib/python3.12/site-packages";
    r.file("venv/pyvenv.cfg", "home = /usr/bin\n")
        .lib(
            &format!("{site}/nvidia/cuda_runtime/lib"),
            "libcudart.so.12",
            "libcudart.so.12",
            &[],
        )
        .lib(
            &format!("{site}/nvidia/cu13/lib"),
            "libcudart.so.13",
            "libcudart.so.13",
            &[],
        )
        .dir(&format!("{site}/nvidia_cuda_runtime-13.0.96.dist-info"))
        .dir(&format!(
            "{site}/nvidia_cuda_runtime_cu12-12.8.90.dist-info"
        ));
    let (_, report) = json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"));
    assert_eq!(
        library(&report, "libcudart.so.12")["elsewhere"][0]["version"],
        "12.8.90"
    );
    assert_eq!(
        library(&report, "libcudart.so.13")["elsewhere"][0]["version"],
        "13.0.96"
    );
}

#[test]
fn gd022_toolkit_present_but_invisible_to_torch() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-12.8", "12.8.1");
    let (_, report) = json(r.cmd().env("TORCH_CUDA_ARCH_LIST", "9.0").arg("check"));
    let f = findings(&report, "GD022");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(fix_commands(f[0]).contains("export CUDA_HOME=/usr/local/cuda-12.8"));
    // Nothing builds: no finding about it.
    let (_, report) = json(r.cmd().arg("check"));
    assert!(findings(&report, "GD022").is_empty(), "{report:#}");
}

#[test]
fn gd026_sees_through_a_linked_ld_library_path_entry() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-11.8", "11.8.0")
        .link("/usr/local/cuda-11.8", "usr/local/cuda")
        .toolkit("usr/local/cuda-12.4", "12.4.1");
    let (_, report) = json(
        r.cmd()
            .env("CUDA_HOME", "/usr/local/cuda-12.4")
            .env("LD_LIBRARY_PATH", "/usr/local/cuda/lib64")
            .arg("check"),
    );
    let f = findings(&report, "GD026");
    assert!(
        any_title(&f, "CUDA 11.8 libraries (/usr/local/cuda/lib64)"),
        "{report:#}"
    );
    assert!(fix_commands(f[0]).contains("/usr/local/cuda-12.4/lib64"));
}

#[test]
fn gd024_fix_removes_the_entry_as_written() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-13.0", "13.0.2")
        .link("/usr/local/cuda-13.0", "usr/local/cuda")
        .link("libcuda.so", "usr/local/cuda-13.0/lib64/stubs/libcuda.so.1");
    // A trailing slash, a link, an empty entry (the working directory) first.
    let (_, report) = json(
        r.cmd()
            .env(
                "LD_LIBRARY_PATH",
                ":/usr/local/cuda/lib64/stubs/:/usr/local/cuda/lib64",
            )
            .arg("check"),
    );
    let f = findings(&report, "GD024");
    assert_eq!(f.len(), 1, "{report:#}");
    assert!(
        fix_commands(f[0]).contains("grep -vxF -e /usr/local/cuda/lib64/stubs/ |"),
        "{}",
        fix_commands(f[0])
    );
    assert!(loaded(library(&report, "libcuda.so.1"))["detail"]
        .as_str()
        .unwrap()
        .starts_with("entry 2 "));
}

#[test]
fn runtime_only_images_get_a_note_not_a_warning() {
    // nvidia/cuda:*-runtime: /usr/local/cuda with libraries but no nvcc, nothing to build.
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.toolkit("usr/local/cuda-12.4", "12.4.1")
        .remove("usr/local/cuda-12.4/bin")
        .remove("usr/local/cuda-12.4/include")
        .link("/usr/local/cuda-12.4", "usr/local/cuda");
    let (code, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD021");
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["severity"], "info");
    assert!(fix_commands(f[0]).contains("cuda-nvcc-12-4"));
    assert!(!fix_commands(f[0]).contains("conda"));
    assert_eq!(code, 0);
}

#[test]
fn debian_toolkit_named_by_cuda_home_usr_is_one_toolkit() {
    let r = host_with_module_and_libs("535.104.05", "535.104.05", "NVIDIA H100 80GB HBM3");
    r.nvcc("usr/lib/nvidia-cuda-toolkit/bin/nvcc", "11.8.89")
        .file(
            "usr/bin/nvcc",
            "#!/bin/sh\nexec /usr/lib/nvidia-cuda-toolkit/bin/nvcc \"$@\"\n",
        )
        .chmod("usr/bin/nvcc", 0o755)
        .file(
            "usr/include/cuda_runtime_api.h",
            "#define CUDART_VERSION 11080\n",
        )
        .lib(
            "usr/lib/x86_64-linux-gnu",
            "libcudart.so.11.8.89",
            "libcudart.so.11.0",
            &[],
        )
        .toolkit("usr/local/cuda-12.4", "12.4.1");
    let (_, report) = json(r.cmd().env("CUDA_HOME", "/usr").arg("check"));
    let roots: Vec<&str> = installs(&report)
        .iter()
        .map(|t| t["root"].as_str().unwrap())
        .collect();
    assert_eq!(
        roots
            .iter()
            .filter(|r| r.contains("nvidia-cuda-toolkit") || **r == "/usr")
            .count(),
        1,
        "{roots:?}"
    );
    // Builds use Debian's 11.8 although 12.4 is installed; the fix names CUDA_HOME for 12.4.
    let (_, report) = json(r.cmd().arg("check"));
    let f = findings(&report, "GD020");
    assert_eq!(f.len(), 1, "{report:#}");
    assert!(fix_commands(f[0]).contains("export CUDA_HOME=/usr/local/cuda-12.4"));
    // And the other way round: pointing at Debian's toolkit means CUDA_HOME=/usr.
    let (_, report) = json(
        r.cmd()
            .env("CUDA_HOME", "/usr/local/cuda-12.4")
            .env("PATH", "/usr/bin:/bin")
            .arg("check"),
    );
    let f = findings(&report, "GD019");
    assert_eq!(f.len(), 1, "{report:#}");
    assert!(
        fix_commands(f[0]).contains("export CUDA_HOME=/usr PATH="),
        "{}",
        fix_commands(f[0])
    );
}

#[test]
fn conda_runtime_without_nvcc_is_called_a_runtime() {
    let r = host_with_module_and_libs("470.82.01", "470.82.01", "Tesla T4");
    r.file("conda/envs/pt/conda-meta/cuda-cudart-12.4.127-0.json", "{}")
        .file("conda/envs/pt/conda-meta/cuda-version-12.4-3.json", "{}");
    let (_, report) = json(r.cmd().env("CONDA_PREFIX", "/conda/envs/pt").arg("check"));
    let f = findings(&report, "GD017");
    assert_eq!(f.len(), 1, "{report:#}");
    assert!(f[0]["title"]
        .as_str()
        .unwrap()
        .starts_with("CUDA runtime 12.4 in /conda/envs/pt"));
    let out = run(r.cmd().env("CONDA_PREFIX", "/conda/envs/pt").arg("toolkit"));
    assert!(
        out.stdout.contains("nvcc: none   compiles for: unknown"),
        "{}",
        out.stdout
    );
}

#[test]
fn conda_toolkit_in_use_does_not_ask_for_system_libraries() {
    let r = host_with_module_and_libs("580.95.05", "580.95.05", "NVIDIA H100 80GB HBM3");
    r.nvcc("conda/envs/build/bin/nvcc", "12.4.131")
        .file(
            "conda/envs/build/conda-meta/cuda-nvcc-12.4.131-0.json",
            "{}",
        )
        .lib(
            "usr/lib/x86_64-linux-gnu",
            "libcudart.so.11.8.89",
            "libcudart.so.11.0",
            &[],
        );
    let (_, report) = json(
        r.cmd()
            .env("CONDA_PREFIX", "/conda/envs/build")
            .env("PATH", "/conda/envs/build/bin:/usr/bin:/bin")
            .arg("check"),
    );
    assert_eq!(
        report["snapshot"]["toolkits"]["cuda_home"]["via"],
        "the nvcc on PATH"
    );
    // Conda programs find their libraries through RPATH: no "register lib64" advice.
    assert!(
        findings(&report, "GD026").is_empty(),
        "{:#}",
        report["findings"]
    );
}
