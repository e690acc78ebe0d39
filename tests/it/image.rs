//! `gpudoctor check --image`: images built with umoci and skopeo from fake trees, judged
//! through the real binary against a fake host (--root, the fake NVML). The unpacking itself
//! (formats, whiteouts, hostile archives) is tests/it/image_unpack.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::fake_nvml::*;
use crate::util::image_tools::{have, sh, umoci_bundle};
use crate::util::*;
use tempfile::TempDir;

const REQUIRE_12_8: &str = "cuda>=12.8 brand=unknown,driver>=470,driver<471 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=535,driver<536 brand=tesla,driver>=535,driver<536 brand=unknown,driver>=550,driver<551 brand=tesla,driver>=550,driver<551";

/// A CUDA 12.8 image as NVIDIA's base images and a pip install of torch lay it out: the toolkit
/// at /usr/local/cuda-12.8, a venv with torch 2.8.0+cu128 on PATH, and the images' Env.
fn cuda_tree() -> FakeRoot {
    let tree = FakeRoot::new();
    tree.file(
        "etc/os-release",
        "PRETTY_NAME=\"Ubuntu 24.04.2 LTS\"\nNAME=\"Ubuntu\"\nID=ubuntu\nVERSION_ID=\"24.04\"\n",
    )
    .toolkit("usr/local/cuda-12.8", "12.8.93")
    .link("/usr/local/cuda-12.8", "usr/local/cuda");
    tree.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    tree
}

/// `tree` packed by umoci as an image with `config` options, saved by skopeo as a
/// `docker save` archive; returns the archive.
fn build_image(dir: &Path, tree: &FakeRoot, config: &[&str]) -> PathBuf {
    let layout = dir.join("layout");
    let bundle = dir.join("bundle");
    let image = umoci_bundle(&layout, &bundle);
    sh(Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", tree.path().display()))
        .arg(bundle.join("rootfs")));
    sh(Command::new("umoci")
        .args(["repack", "--image", &image])
        .arg(&bundle));
    sh(Command::new("umoci")
        .args(["config", "--image", &image])
        .args(config));
    let archive = dir.join("image.tar");
    sh(Command::new("skopeo")
        .args(["copy", "--quiet"])
        .arg(format!("oci:{image}"))
        .arg(format!(
            "docker-archive:{}:example/cuda:12.8",
            archive.display()
        )));
    archive
}

const CUDA_ENV: &[&str] = &[
    "--config.env=PATH=/venv/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "--config.env=CUDA_VERSION=12.8.1",
    "--config.env=NVIDIA_VISIBLE_DEVICES=all",
    "--config.env=NVIDIA_DRIVER_CAPABILITIES=compute,utility",
    "--config.env=VIRTUAL_ENV=/venv",
];

/// A host with one H100 and driver `driver`, NVML answering from the fake library.
struct Host {
    root: FakeRoot,
    _cfg: TempDir,
    cfg: PathBuf,
}

fn host_of_driver(driver: &str, cuda: &str) -> Host {
    let root = gpu_host(driver, "NVIDIA H100 80GB HBM3");
    let mut nvml = FakeNvml::hgx_h100_8gpu();
    nvml.system.driver_version = Some(driver.into());
    nvml.system.cuda_driver_version = Some(cuda_encoded(cuda));
    nvml.devices.truncate(1);
    let dir = tempfile::tempdir().unwrap();
    let cfg = nvml.write(dir.path());
    Host {
        root,
        _cfg: dir,
        cfg,
    }
}

fn cuda_encoded(v: &str) -> i32 {
    let (major, minor) = v.split_once('.').unwrap();
    major.parse::<i32>().unwrap() * 1000 + minor.parse::<i32>().unwrap() * 10
}

impl Host {
    fn check(&self, image: &Path) -> (i32, serde_json::Value) {
        json(
            self.root
                .cmd()
                .arg("--nvml-lib")
                .arg(fake_nvml_lib())
                .env(FAKE_NVML_ENV, &self.cfg)
                .arg("check")
                .arg("--image")
                .arg(image),
        )
    }
}

#[test]
fn a_cuda_12_8_image_is_refused_by_a_cuda_12_3_driver_and_runs_on_a_12_8_one() {
    if !have("umoci") || !have("skopeo") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut config = CUDA_ENV.to_vec();
    let require = format!("--config.env=NVIDIA_REQUIRE_CUDA={REQUIRE_12_8}");
    config.push(&require);
    let image = build_image(dir.path(), &cuda_tree(), &config);

    let (code, report) = host_of_driver("545.29.06", "12.3").check(&image);
    assert_eq!(code, 1, "{report:#}");
    let f = findings(&report, "GD063")[0];
    assert_eq!(f["severity"], "error");
    assert!(
        f.to_string().contains("unsatisfied condition: cuda>=12.8"),
        "{f:#}"
    );
    // The userland is the image's: its toolkit, its torch, its distribution.
    let snap = &report["snapshot"];
    assert_eq!(snap["image"]["reference"], "docker.io/example/cuda:12.8");
    assert_eq!(snap["image"]["format"], "docker_archive");
    assert_eq!(
        snap["platform"]["os"]["value"]["pretty_name"],
        "Ubuntu 24.04.2 LTS"
    );
    assert_eq!(
        snap["toolkits"]["installs"][0]["version"]["value"],
        "12.8.93"
    );
    assert!(snap["python"].to_string().contains("2.8.0+cu128"));
    // The host's driver judged it: its kernel module, not anything in the image.
    let driver = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["fact"] == "module:version")
        .expect("the driver's evidence");
    assert_eq!(driver["source"], "/proc/driver/nvidia/version", "{f:#}");
    assert!(driver["value"].as_str().unwrap().contains("545.29.06"));

    let (_, report) = host_of_driver("570.133.20", "12.8").check(&image);
    assert!(findings(&report, "GD063").is_empty(), "{report:#}");
    assert!(findings(&report, "GD017").is_empty(), "{report:#}");
}

#[test]
fn an_image_without_the_compute_capability_gets_no_libcuda() {
    if !have("umoci") || !have("skopeo") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut config = CUDA_ENV.to_vec();
    config[3] = "--config.env=NVIDIA_DRIVER_CAPABILITIES=utility";
    let image = build_image(dir.path(), &cuda_tree(), &config);
    let (code, report) = host_of_driver("570.133.20", "12.8").check(&image);
    assert_eq!(code, 1);
    let f = findings(&report, "GD064")[0];
    assert_eq!(f["severity"], "error");
    assert!(f["title"].as_str().unwrap().contains("compute"));
}

#[test]
fn the_images_own_ld_library_path_is_what_its_loader_searches() {
    if !have("umoci") || !have("skopeo") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = cuda_tree();
    // The toolkit's link-time stub, put ahead of the driver's libcuda by the image's Env.
    tree.lib(
        "usr/local/cuda-12.8/lib64/stubs",
        "libcuda.so",
        "libcuda.so.1",
        &[],
    )
    .link("libcuda.so", "usr/local/cuda-12.8/lib64/stubs/libcuda.so.1");
    let mut config = CUDA_ENV.to_vec();
    config.push("--config.env=LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs");
    let image = build_image(dir.path(), &tree, &config);
    let h = host_of_driver("570.133.20", "12.8");
    let (code, report) = json(
        h.root
            .cmd()
            .arg("--nvml-lib")
            .arg(fake_nvml_lib())
            .env(FAKE_NVML_ENV, &h.cfg)
            .env("LD_LIBRARY_PATH", "/caller/lib")
            .arg("check")
            .arg("--image")
            .arg(&image),
    );
    assert_eq!(code, 1, "{report:#}");
    let f = findings(&report, "GD024")[0];
    assert!(f.to_string().contains("stubs"), "{f:#}");
    // The caller's own LD_LIBRARY_PATH is not the image's.
    let env = &report["snapshot"]["environment"]["variables"];
    assert!(
        env.to_string().contains("/usr/local/cuda/lib64/stubs"),
        "{env:#}"
    );
    assert!(!report.to_string().contains("/caller/lib"), "{env:#}");
}

#[test]
fn an_arm64_image_on_this_host_cannot_start() {
    if !have("umoci") || !have("skopeo") || std::env::consts::ARCH != "x86_64" {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut config = CUDA_ENV.to_vec();
    config.push("--architecture=arm64");
    let image = build_image(dir.path(), &cuda_tree(), &config);
    let (code, report) = host_of_driver("570.133.20", "12.8").check(&image);
    assert_eq!(code, 1);
    let f = findings(&report, "GD071")[0];
    assert!(
        f["title"].as_str().unwrap().contains("linux/arm64"),
        "{f:#}"
    );
    let (_, text) = {
        let h = host_of_driver("570.133.20", "12.8");
        let mut c = h.root.cmd();
        c.args(["check", "--image"]).arg(&image);
        human(&h.root, &mut c)
    };
    assert!(
        text.contains("example/cuda:12.8 (docker archive, linux/arm64"),
        "{text}"
    );
    assert!(text.contains("\n✓ Environment (image)  "), "{text}");
    let (_, text) = {
        let h = host_of_driver("570.133.20", "12.8");
        let mut c = h.root.cmd();
        c.args(["check", "-v", "--image"]).arg(&image);
        human(&h.root, &mut c)
    };
    assert!(text.contains("OS (image)  Ubuntu 24.04.2 LTS"), "{text}");
    assert!(text.contains("\nEnvironment (image)\n"), "{text}");
}

#[test]
fn unusable_images_are_usage_errors_that_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.tar");
    let r = run(gpudoctor().arg("check").arg("--image").arg(&missing));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("nope.tar"), "{}", r.stderr);

    let garbage = dir.path().join("garbage.tar");
    std::fs::write(&garbage, b"not a tar archive at all").unwrap();
    let r = run(gpudoctor().arg("check").arg("--image").arg(&garbage));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("garbage.tar"), "{}", r.stderr);

    // Before another command, --image is refused: only check takes it.
    let r = run(gpudoctor().arg("--image").arg(&garbage).arg("devices"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--image is an option of `check`, not of `devices`"),
        "{}",
        r.stderr
    );
    let r = run(gpudoctor()
        .arg("--python-import")
        .args(["check", "--image"])
        .arg(&garbage));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--python-import does not apply"),
        "{}",
        r.stderr
    );
    let saved = dir.path().join("saved.json");
    std::fs::write(&saved, "{}").unwrap();
    let r = run(gpudoctor()
        .arg("--image")
        .arg(&garbage)
        .arg("check")
        .arg("--from")
        .arg(&saved));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--image"), "{}", r.stderr);
}

#[test]
fn an_interrupted_check_leaves_no_unpacked_image_behind() {
    if !have("umoci") || !have("skopeo") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = cuda_tree();
    // 256 MiB of zeros: a while to write out, little to store.
    tree.dir("opt");
    let big = std::fs::File::create(tree.p("opt/weights.bin")).unwrap();
    big.set_len(256 << 20).unwrap();
    let layout = dir.path().join("layout");
    build_image(dir.path(), &tree, CUDA_ENV);
    let tmp = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpudoctor"))
        .args(["check", "--image"])
        .arg(&layout)
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the unpacking to start, then interrupt it.
    let started = std::time::Instant::now();
    while std::fs::read_dir(tmp.path()).unwrap().next().is_none() {
        assert!(
            started.elapsed().as_secs() < 60,
            "no temporary directory appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
