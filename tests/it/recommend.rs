//! `gpudoctor recommend`, through the real binary: a matrix of machines described by
//! --driver/--gpu/--python/--platform/--installer, fake roots whose environment already pins
//! things, and the contract that `check`'s fixes are `recommend`'s commands.

use crate::util::*;
use serde_json::Value;

/// `recommend ARGS --json` on an empty root: only the flags describe the machine.
fn rec(args: &[&str]) -> (i32, Value) {
    let r = FakeRoot::new();
    json(r.cmd().arg("recommend").args(args))
}

fn first(v: &Value) -> &Value {
    &v["recommendations"][0]
}

fn label(v: &Value) -> String {
    first(v)["pick"]["label"].as_str().unwrap_or("").to_string()
}

/// The command of the installer in use, lines joined.
fn command(v: &Value) -> String {
    first(v)["commands"][0]["lines"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn rejections(v: &Value) -> String {
    first(v)["considered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}: {}\n",
                c["candidate"].as_str().unwrap(),
                c["rejected_because"]
            )
        })
        .collect()
}

const X86: &[&str] = &["--platform", "x86_64", "--python", "3.12"];

/// `PACKAGES --driver D --gpu G --python P` (the platform left to the default).
fn on<'a>(packages: &[&'a str], driver: &'a str, gpu: &'a str, python: &'a str) -> Vec<&'a str> {
    let mut a = packages.to_vec();
    a.extend(["--driver", driver, "--gpu", gpu, "--python", python]);
    a
}

fn machine<'a>(driver: &'a str, gpu: &'a str) -> Vec<&'a str> {
    let mut a = vec!["--driver", driver, "--gpu", gpu];
    a.extend_from_slice(X86);
    a
}

/// Each machine, its build and the reason the newer builds were passed over.
#[test]
fn the_matrix_of_machines() {
    struct Case {
        driver: &'static str,
        gpu: &'static str,
        label: &'static str,
        index: &'static str,
        rejected: &'static str,
    }
    let cases = [
        // Pascal on a CUDA 12.8 driver: cu13x need R580 and have no sm_61.
        Case {
            driver: "570.133.07",
            gpu: "GTX 1080",
            label: "torch 2.15.0+cu126",
            index: "cu126",
            rejected: "CUDA 13.x needs driver ≥ 580.65.06; this is 570.133.07",
        },
        // Hopper on R580: the newest default build.
        Case {
            driver: "580.95.05",
            gpu: "H100",
            label: "torch 2.15.0+cu132",
            index: "cu132",
            rejected: "",
        },
        // Blackwell on R570: cu126 has no sm_120, cu13x need R580; 2.11's cu128 is the last
        // CUDA 12 build with sm_120.
        Case {
            driver: "570.133.07",
            gpu: "sm_120",
            label: "torch 2.11.0+cu128",
            index: "cu128",
            rejected: "no kernels for sm_120",
        },
        // Ampere on R470: only CUDA 11.8 builds run; 2.7.1 is the last with one.
        Case {
            driver: "470.82.01",
            gpu: "8.0",
            label: "torch 2.7.1+cu118",
            index: "cu118",
            rejected: "CUDA 12.x needs driver ≥ 525.60.13; this is 470.82.01",
        },
        // Maxwell on R580: cu13x builds start at sm_75.
        Case {
            driver: "580.95.05",
            gpu: "sm_52",
            label: "torch 2.15.0+cu126",
            index: "cu126",
            rejected: "no kernels for sm_52",
        },
    ];
    for c in cases {
        let (code, v) = rec(&machine(c.driver, c.gpu));
        assert_eq!(code, 0, "{} {}: {v:#}", c.driver, c.gpu);
        assert_eq!(
            label(&v),
            c.label,
            "{} {}: {}",
            c.driver,
            c.gpu,
            rejections(&v)
        );
        let cmd = command(&v);
        assert!(
            cmd.starts_with("pip install torch==")
                && cmd.ends_with(&format!(
                    "--index-url https://download.pytorch.org/whl/{}",
                    c.index
                )),
            "{cmd}"
        );
        assert!(rejections(&v).contains(c.rejected), "{}", rejections(&v));
        // The companions come at the releases that declare this torch.
        assert!(
            cmd.contains("torchvision==") && cmd.contains("torchaudio=="),
            "{cmd}"
        );
    }
}

#[test]
fn companions_are_the_releases_that_declare_the_torch() {
    let (_, v) = rec(&machine("470.82.01", "8.0"));
    assert_eq!(
        command(&v),
        "pip install torch==2.7.1 torchvision==0.22.1 torchaudio==2.7.1 --index-url https://download.pytorch.org/whl/cu118"
    );
    // Naming one companion leaves the other out.
    let mut args = machine("470.82.01", "8.0");
    args.insert(0, "torchvision");
    args.insert(0, "torch");
    let (_, v) = rec(&args);
    assert_eq!(
        command(&v),
        "pip install torch==2.7.1 torchvision==0.22.1 --index-url https://download.pytorch.org/whl/cu118"
    );
}

#[test]
fn aarch64_gets_the_sbsa_builds() {
    let (code, v) = rec(&[
        "--driver",
        "580.95.05",
        "--gpu",
        "GH200",
        "--platform",
        "aarch64",
        "--python",
        "3.12",
    ]);
    assert_eq!(code, 0);
    assert_eq!(label(&v), "torch 2.15.0+cu132");
    // Turing on ARM: no sbsa build has sm_75.
    let (code, v) = rec(&[
        "--driver",
        "580.95.05",
        "--gpu",
        "sm_75",
        "--platform",
        "aarch64",
        "--python",
        "3.12",
    ]);
    assert_eq!(code, 1, "{v:#}");
    assert!(first(&v)["pick"].is_null());
    let r = FakeRoot::new();
    let out = run(r.cmd().args([
        "recommend",
        "--driver",
        "580.95.05",
        "--gpu",
        "sm_75",
        "--platform",
        "aarch64",
    ]));
    assert!(
        out.stdout.contains("torch: nothing fits this machine"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("No official aarch64 build of torch has code for sm_75"),
        "{}",
        out.stdout
    );
}

/// When nothing fits, each change that would help is named with what it buys.
#[test]
fn nothing_fits_says_what_must_change() {
    let (code, v) = rec(&machine("550.54.15", "RTX 5090"));
    assert_eq!(code, 1);
    let changes: Vec<(String, String)> = first(&v)["must_change"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["what"].as_str().unwrap().into(),
                c["then"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        vec![
            (
                "a driver ≥ 580.65.06 (this is 550.54.15)".to_string(),
                "torch 2.15.0+cu132".to_string()
            ),
            (
                "a driver of branch R570 or newer (this is 550.54.15)".to_string(),
                "torch 2.11.0+cu128".to_string()
            ),
        ]
    );
    assert!(rejections(&v).contains("driver 550.54.15 does not run Blackwell GPUs (sm_120)"));
    // A CPU no official build exists for.
    let (code, v) = rec(&[
        "--driver",
        "580.95.05",
        "--gpu",
        "sm_90",
        "--platform",
        "ppc64le",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        first(&v)["must_change"][0]["what"],
        "an x86_64 or aarch64 machine"
    );
}

#[test]
fn the_cuda_asked_for_narrows_the_choice() {
    let mut args = machine("580.95.05", "sm_90");
    args.extend(["--cuda", "12.8"]);
    let (_, v) = rec(&args);
    assert_eq!(label(&v), "torch 2.11.0+cu128");
    assert!(rejections(&v).contains("CUDA 13.2, not the CUDA 12.8 asked for"));
    let mut args = machine("580.95.05", "sm_90");
    args.extend(["--cuda", "12"]);
    let (_, v) = rec(&args);
    assert_eq!(label(&v), "torch 2.15.0+cu126");
}

#[test]
fn each_installer_gets_its_own_command() {
    let with = |installer: &str| {
        let mut a = machine("580.95.05", "sm_90");
        a.extend(["--installer", installer]);
        rec(&a).1
    };
    let v = with("uv");
    assert_eq!(
        command(&v),
        "uv pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1 --index-url https://download.pytorch.org/whl/cu132"
    );
    let project = &first(&v)["commands"][0]["project"];
    assert!(project["text"]
        .as_str()
        .unwrap()
        .contains("url = \"https://download.pytorch.org/whl/cu132\""));
    assert!(project["text"]
        .as_str()
        .unwrap()
        .contains("torch = [{ index = \"pytorch-cu132\" }]"));
    assert_eq!(
        project["command"],
        "uv add torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1"
    );
    let v = with("poetry");
    assert_eq!(
        command(&v),
        "poetry source add --priority=explicit pytorch-cu132 https://download.pytorch.org/whl/cu132\npoetry add --source pytorch-cu132 torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1"
    );
    let v = with("conda");
    assert!(
        command(&v).starts_with("python -m pip install torch==2.15.0"),
        "{}",
        command(&v)
    );
    let v = with("pdm");
    assert_eq!(first(&v)["commands"][0]["installer"], "pdm");
    assert!(first(&v)["commands"][0]["project"]["text"]
        .as_str()
        .unwrap()
        .contains("include_packages = [\"torch\", \"torchvision\", \"torchaudio\"]"));
    // JSON lists every installer's form, the one in use first.
    assert_eq!(first(&v)["commands"].as_array().unwrap().len(), 5);
}

#[test]
fn bad_input_is_a_usage_error() {
    let r = FakeRoot::new();
    for (args, said) in [
        (vec!["recommend", "--gpu", "banana"], "--gpu banana"),
        (vec!["recommend", "--driver", "new"], "--driver new"),
        // A branch is not a version: CUDA 13.0's minimum falls inside the 580 branch.
        (
            vec!["recommend", "--driver", "580"],
            "--driver 580: a branch, not a version",
        ),
        (vec!["recommend", "--cuda", "twelve"], "--cuda twelve"),
        (vec!["recommend", "leftpad"], "invalid value 'leftpad'"),
    ] {
        let out = run(r.cmd().args(&args));
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(said), "{args:?}: {}", out.stderr);
    }
    // Every JSON output says its schema version.
    let (_, v) = json(r.cmd().args(["recommend", "--driver", "550.54.15"]));
    assert_eq!(
        v["schema_version"],
        gpudoctor::report::SCHEMA_VERSION,
        "{v:#}"
    );
}

use crate::util::gpu_host as host;

fn check_fix(r: &FakeRoot, code: &str) -> String {
    let (_, v) = json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"));
    let f = findings(&v, code);
    assert_eq!(f.len(), 1, "{code}: {:#}", v["findings"]);
    f[0]["fix"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["command"].as_str())
        .next_back()
        .unwrap_or_else(|| panic!("{code} has no command: {:#}", f[0]))
        .to_string()
}

fn recommend_fix(r: &FakeRoot, args: &[&str]) -> String {
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .arg("recommend")
            .args(args),
    );
    command(&v)
}

/// `check`'s fix for a CPU-only torch (GD041), a driver too old for torch's CUDA (GD042),
/// a GPU the build has no code for (GD043) and a torchvision of another torch (GD046) is
/// the command `recommend` prints for the same machine.
#[test]
fn checks_fixes_are_recommends_commands() {
    // GD041: CPU torch 2.7.1 with its torchvision on a GTX 1080.
    let r = host("570.133.07", "NVIDIA GeForce GTX 1080");
    let site = r.torch_venv("2.7.1+cpu", None, &[]);
    r.dist_requiring(&site, "torchvision", "0.22.1+cpu", "torch==2.7.1");
    let fix = check_fix(&r, "GD041");
    assert_eq!(
        fix,
        "pip install --force-reinstall torch==2.7.1 torchvision==0.22.1 --index-url https://download.pytorch.org/whl/cu126"
    );
    assert_eq!(recommend_fix(&r, &["torch", "torchvision"]), fix);

    // GD042: torch 2.9.1+cu130 on a CUDA 12.8 driver with an A100.
    let r = host("570.133.07", "NVIDIA A100-SXM4-80GB");
    r.torch_venv("2.9.1+cu130", Some("13.0"), &[]);
    let fix = check_fix(&r, "GD042");
    assert!(
        fix.contains("torch==2.9.1 --index-url https://download.pytorch.org/whl/cu128"),
        "{fix}"
    );
    // Without a companion installed, `recommend torch` brings none either.
    assert_eq!(recommend_fix(&r, &["torch"]), fix);
    assert_eq!(recommend_fix(&r, &[]), fix);

    // GD043: torch 2.6.0+cu126 on an RTX 5090: a newer release, so no --force-reinstall.
    let r = host("580.95.05", "NVIDIA GeForce RTX 5090");
    r.torch_venv("2.6.0+cu126", Some("12.6"), &[]);
    let fix = check_fix(&r, "GD043");
    assert_eq!(
        fix,
        "pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu132"
    );
    assert_eq!(recommend_fix(&r, &["torch"]), fix);

    // GD046: torchvision for torch 2.7.1 beside torch 2.8.0+cu128.
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    r.dist_requiring(&site, "torchvision", "0.22.1+cu128", "torch==2.7.1");
    let fix = check_fix(&r, "GD046");
    assert_eq!(
        fix,
        "pip install --no-deps torchvision==0.23.0 --index-url https://download.pytorch.org/whl/cu128"
    );
    assert_eq!(recommend_fix(&r, &["torchvision"]), fix);
}

/// What the environment has constrains the choice: a vllm that pins torch keeps torch at its
/// pin, the installed release is kept where a build of it fits, and --fresh ignores both.
#[test]
fn the_environment_constrains_the_choice() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.8.0+cpu", None, &[]);
    r.dist_requiring(&site, "vllm", "0.10.1", "torch==2.8.0");
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "torch"]),
    );
    assert_eq!(label(&v), "torch 2.8.0+cu128", "{}", rejections(&v));
    assert!(
        command(&v).starts_with("pip install --force-reinstall torch==2.8.0"),
        "{}",
        command(&v)
    );
    // vllm's pin leaves no newer build to mention.
    let notes = first(&v)["notes"].to_string();
    assert!(!notes.contains("A newer build fits"), "{notes}");
    // Without a pin, the installed release is kept and the newer build named.
    let r1 = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r1.torch_venv("2.8.0+cpu", None, &[]);
    let (_, v) = json(
        r1.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "torch"]),
    );
    assert_eq!(label(&v), "torch 2.8.0+cu128");
    let notes = first(&v)["notes"].to_string();
    assert!(
        notes.contains("A newer build fits this machine too: torch 2.15.0+cu132"),
        "{notes}"
    );
    // Without the installed release's builds, vllm's pin still holds.
    let r2 = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r2.torch_venv("2.9.1+cpu", None, &[]);
    r2.dist_requiring(&site, "vllm", "0.10.1", "torch==2.8.0");
    let (_, v) = json(
        r2.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "torch"]),
    );
    assert_eq!(label(&v), "torch 2.8.0+cu128", "{}", rejections(&v));
    assert!(
        rejections(&v).contains("vllm 0.10.1 requires torch==2.8.0"),
        "{}",
        rejections(&v)
    );
    // --fresh: a new environment.
    let (_, v) = json(
        r2.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "torch", "--fresh"]),
    );
    assert_eq!(label(&v), "torch 2.15.0+cu132");
}

/// The installer is the one that manages the environment: uv's line in pyvenv.cfg, conda's
/// conda-meta, the INSTALLER file in torch's dist-info.
#[test]
fn the_installer_in_use_is_detected() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.8.0+cpu", None, &[]);
    r.file("venv/pyvenv.cfg", "home = /usr/bin\nuv = 0.9.5\n");
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "torch"]),
    );
    assert_eq!(v["machine"]["installer"]["value"], "uv");
    assert!(
        command(&v).starts_with("uv pip install --reinstall torch==2.8.0"),
        "{}",
        command(&v)
    );
    // check's fix follows it.
    assert!(check_fix(&r, "GD041").starts_with("uv pip install --reinstall torch==2.8.0"));
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.8.0+cpu", None, &[]);
    r.dir("venv/conda-meta");
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "torch"]),
    );
    assert_eq!(v["machine"]["installer"]["value"], "conda");
    assert!(
        command(&v).starts_with("python -m pip install --force-reinstall"),
        "{}",
        command(&v)
    );
    // A project's environment: the lockfile beside it names the tool.
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.8.0+cpu", None, &[]);
    r.file(
        "poetry.lock",
        "# This file is automatically @generated by Poetry\n",
    );
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "torch"]),
    );
    assert_eq!(v["machine"]["installer"]["value"], "poetry");
    assert_eq!(v["machine"]["installer"]["source"], "/poetry.lock");
    assert!(
        command(&v).starts_with("poetry source add --priority=explicit pytorch-cu128"),
        "{}",
        command(&v)
    );
}

#[test]
fn human_output_tells_the_story() {
    let r = FakeRoot::new();
    let out = run(r
        .cmd()
        .args(["recommend"])
        .args(machine("570.133.07", "GTX 1080")));
    assert_eq!(out.code, 0);
    let (head, rest) = out.stdout.split_once("\n\n").unwrap();
    assert_eq!(
        head.split_whitespace().collect::<Vec<_>>().join(" "),
        "For: driver 570.133.07 (CUDA 12.x by minor-version compatibility, native 12.8), GTX 1080 (sm_61), Python 3.12, x86_64, pip"
    );
    let lines: Vec<&str> = rest.lines().collect();
    assert_eq!(lines[0], "torch: torch 2.15.0+cu126");
    assert!(
        lines[1]
            .trim_start()
            .starts_with("pip install torch==2.15.0"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("✗ torch 2.15.0+cu132, 2.15.0+cu130: CUDA 13.x needs driver"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("✓ torch 2.15.0+cu126: chosen"),
        "{}",
        out.stdout
    );
    let md = run(r
        .cmd()
        .args(["recommend", "--format", "markdown"])
        .args(machine("570.133.07", "GTX 1080")));
    assert!(
        md.stdout.contains("```sh\npip install torch==2.15.0"),
        "{}",
        md.stdout
    );
}

/// The other frameworks: each table's newest release that fits, and why the newer ones were
/// passed over.
#[test]
fn frameworks_for_the_machine() {
    let cases: &[(&str, &str, &str, &str, &str, &str)] = &[
        // package, driver, gpu, platform, chosen, a reason a newer one was passed over
        (
            "jax",
            "570.133.07",
            "sm_86",
            "x86_64",
            "jax 0.12.0.1 (CUDA 12.9)",
            "needs driver ≥ 580",
        ),
        (
            "jax",
            "580.95.05",
            "sm_61",
            "x86_64",
            "jax 0.12.0.1 (CUDA 12.9)",
            "supports compute capability ≥ 7.5",
        ),
        (
            "onnxruntime-gpu",
            "570.133.07",
            "sm_86",
            "x86_64",
            "onnxruntime-gpu 1.26.0 (CUDA 12.8)",
            "CUDA 13.x needs driver ≥ 580.65.06",
        ),
        // B200: 1.29+ have no sm_100 code and no PTX; 1.28 has sm_100a.
        (
            "onnxruntime-gpu",
            "580.95.05",
            "sm_100",
            "x86_64",
            "onnxruntime-gpu 1.28.0 (CUDA 13.0)",
            "no code for sm_100",
        ),
        // GB300 (10.3): sm_100a runs on 10.0 only; 1.26's compute_90 PTX is JIT-compiled.
        (
            "onnxruntime-gpu",
            "580.95.05",
            "sm_103",
            "x86_64",
            "onnxruntime-gpu 1.26.0 (CUDA 12.8)",
            "no code for sm_103",
        ),
        (
            "tensorflow",
            "570.133.07",
            "sm_86",
            "x86_64",
            "tensorflow 2.21.0 (CUDA 12.5)",
            "",
        ),
        (
            "vllm",
            "580.95.05",
            "sm_90",
            "x86_64",
            "vllm 0.34.0 (CUDA 13.0)",
            "",
        ),
        (
            "xformers",
            "580.95.05",
            "sm_90",
            "x86_64",
            "xformers 0.0.35 (CUDA 12.8)",
            "",
        ),
        (
            "bitsandbytes",
            "570.133.07",
            "sm_86",
            "x86_64",
            "bitsandbytes 0.50.2",
            "",
        ),
    ];
    for (pkg, driver, gpu, platform, chosen, rejected) in cases {
        let (code, v) = rec(&[
            pkg,
            "--driver",
            driver,
            "--gpu",
            gpu,
            "--platform",
            platform,
            "--python",
            "3.12",
        ]);
        assert_eq!(code, 0, "{pkg} {gpu}: {v:#}");
        assert_eq!(label(&v), *chosen, "{pkg} {gpu}: {}", rejections(&v));
        assert!(
            rejections(&v).contains(rejected),
            "{pkg} {gpu}: {}",
            rejections(&v)
        );
    }
    let (_, v) = rec(&[
        "onnxruntime-gpu",
        "--driver",
        "570.133.07",
        "--gpu",
        "sm_86",
        "--python",
        "3.12",
    ]);
    assert_eq!(
        command(&v),
        "pip install \"onnxruntime-gpu[cuda,cudnn]==1.26.0\""
    );
    // TensorFlow's CUDA wheels are x86_64 only; Maxwell has no bitsandbytes code.
    let (code, v) = rec(&[
        "tensorflow",
        "--driver",
        "570.133.07",
        "--gpu",
        "sm_90",
        "--platform",
        "aarch64",
        "--python",
        "3.12",
    ]);
    assert_eq!(code, 1);
    assert!(
        first(&v)["must_change"][0]["what"]
            .as_str()
            .unwrap()
            .contains("x86_64"),
        "{v:#}"
    );
    let (code, v) = rec(&[
        "bitsandbytes",
        "--driver",
        "570.133.07",
        "--gpu",
        "sm_52",
        "--python",
        "3.12",
    ]);
    assert_eq!(code, 1);
    assert!(
        rejections(&v).contains("no code for sm_52"),
        "{}",
        rejections(&v)
    );
}

/// vllm pins torch: with another torch installed, the newest vllm would replace it, and the
/// change is named.
#[test]
fn a_framework_pinning_torch_meets_the_installed_one() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.15.0", Some("13.2"), &[]);
    let (code, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "vllm"]),
    );
    assert_eq!(code, 1, "{v:#}");
    assert!(
        rejections(&v).contains("requires torch==2.14.0; torch 2.15.0 is installed"),
        "{}",
        rejections(&v)
    );
    assert_eq!(
        first(&v)["must_change"][0]["what"],
        "torch==2.14.0 in place of 2.15.0 (installing it replaces torch)"
    );
    // In a new environment it fits.
    let (code, v) =
        json(
            r.cmd()
                .env("VIRTUAL_ENV", "/venv")
                .args(["recommend", "vllm", "--fresh"]),
        );
    assert_eq!(code, 0);
    assert_eq!(label(&v), "vllm 0.34.0 (CUDA 13.0)");
}

/// flash-attn is compiled on install: it needs torch and an nvcc of torch's CUDA major, and
/// is built for this machine's GPUs only.
#[test]
fn flash_attn_is_a_source_build_for_these_gpus() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.9.1+cu128", Some("12.8"), &[]);
    r.toolkit("usr/local/cuda-12.8", "12.8.93");
    let run_rec = |cuda_home: &str| {
        json(
            r.cmd()
                .env("VIRTUAL_ENV", "/venv")
                .env("CUDA_HOME", cuda_home)
                .args(["recommend", "flash-attn"]),
        )
    };
    let (code, v) = run_rec("/usr/local/cuda-12.8");
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        command(&v),
        "FLASH_ATTN_CUDA_ARCHS=90 MAX_JOBS=4 pip install --no-build-isolation flash-attn==2.8.3.post2"
    );
    // An nvcc of another major than torch's CUDA: torch's extension builder refuses it.
    r.toolkit("usr/local/cuda-13.0", "13.0.88");
    let (code, v) = run_rec("/usr/local/cuda-13.0");
    assert_eq!(code, 1, "{v:#}");
    assert!(
        rejections(&v).contains("nvcc 13.0 and torch's CUDA 12.8 differ in major"),
        "{}",
        rejections(&v)
    );
    assert_eq!(
        first(&v)["must_change"][0]["what"],
        "an nvcc of CUDA 12.x (CUDA_HOME)"
    );
}

/// GD050's fix, for a framework gpudoctor has a table for, is `recommend`'s command: the
/// onnxruntime-gpu built for torch's CUDA and cuDNN majors.
#[test]
fn gd050s_fix_is_recommends_command() {
    let r = host("570.133.07", "NVIDIA A100-SXM4-80GB");
    let site = r.torch_venv("2.4.1+cu121", Some("12.1"), &[]);
    r.dist(&site, "nvidia-cudnn-cu12", "9.1.0.70");
    r.dist(&site, "onnxruntime-gpu", "1.18.1");
    let fix = check_fix(&r, "GD050");
    assert_eq!(fix, "pip install \"onnxruntime-gpu[cuda,cudnn]==1.26.0\"");
    assert_eq!(recommend_fix(&r, &["onnxruntime-gpu"]), fix);
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "onnxruntime-gpu"]),
    );
    assert!(
        rejections(&v).contains("built on CUDA 13; torch in this environment uses CUDA 12"),
        "{}",
        rejections(&v)
    );
}

/// No GPU and no driver: the CPU build, and the newest release with a wheel for the Python.
#[test]
fn a_machine_without_gpus_gets_the_cpu_build() {
    let (code, v) = rec(&["--python", "3.9", "--platform", "x86_64"]);
    assert_eq!(code, 0);
    assert_eq!(label(&v), "torch 2.8.0+cpu", "{}", rejections(&v));
    assert!(command(&v).ends_with("--index-url https://download.pytorch.org/whl/cpu"));
    assert!(rejections(&v).contains("no wheel for Python 3.9 (it has 3.11–3.15)"));
}

/// Packages asked for together share one CUDA major: the newest every one of them has a build
/// for; a framework's exact torch pin is met with that patch of the row's minor.
#[test]
fn packages_asked_together_share_a_cuda_major() {
    let (code, v) = rec(&[
        "torch",
        "tensorflow",
        "jax",
        "--driver",
        "580.95.05",
        "--gpu",
        "sm_90",
        "--python",
        "3.12",
        "--platform",
        "x86_64",
    ]);
    assert_eq!(code, 0, "{v:#}");
    let labels: Vec<&str> = v["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pick"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "torch 2.15.0+cu126",
            "tensorflow 2.21.0 (CUDA 12.5)",
            "jax 0.12.0.1 (CUDA 12.9)"
        ]
    );
    let (_, v) = rec(&[
        "torch",
        "vllm",
        "--driver",
        "580.95.05",
        "--gpu",
        "sm_90",
        "--python",
        "3.12",
        "--platform",
        "x86_64",
    ]);
    assert_eq!(label(&v), "torch 2.14.0+cu130", "{}", rejections(&v));
    assert_eq!(
        v["recommendations"][1]["pick"]["label"],
        "vllm 0.34.0 (CUDA 13.0)"
    );
    // The torch line takes the companions vllm 0.34.0's METADATA pins (torchvision==0.29.0,
    // torchaudio==2.11.0), so `pip install vllm==0.34.0` after it replaces nothing.
    let torch_line = command(&v);
    assert!(
        torch_line.contains("torch==2.14.0 torchvision==0.29.0 torchaudio==2.11.0"),
        "{torch_line}"
    );
}

/// The CUDA 12 line of vLLM (0.19.1, torch 2.10.0) is what a CUDA 12 driver runs; the CUDA 13
/// releases need 580.
#[test]
fn vllm_on_a_cuda_12_driver_is_the_cuda_12_line() {
    let (code, v) = rec(&on(&["vllm"], "570.195.03", "H100", "3.12"));
    assert_eq!(code, 0, "{}", rejections(&v));
    assert_eq!(label(&v), "vllm 0.19.1 (CUDA 12.9)");
    assert_eq!(command(&v), "pip install vllm==0.19.1");
    let why = first(&v)["pick"].to_string();
    assert!(why.contains("torch==2.10.0"), "{why}");
    assert!(
        rejections(&v).contains("CUDA 13.x needs driver ≥ 580.65.06"),
        "{}",
        rejections(&v)
    );
    // Python 3.14 is past 0.19.1's Requires-Python (<3.14): the CUDA 13 line needs 580.
    let (code, _) = rec(&on(&["vllm"], "570.195.03", "H100", "3.14"));
    assert_eq!(code, 1);
    // A V100 (sm_70) has 0.19.1's kernels; the CUDA 13 line starts at sm_75.
    let (_, v) = rec(&on(&["vllm"], "580.95.05", "sm_70", "3.12"));
    assert_eq!(label(&v), "vllm 0.19.1 (CUDA 12.9)", "{}", rejections(&v));
}

/// jax 0.4.30 is the last release for Python 3.9.
#[test]
fn jax_for_python_3_9_is_0_4_30() {
    let (code, v) = rec(&on(&["jax"], "580.95.05", "H100", "3.9"));
    assert_eq!(code, 0, "{}", rejections(&v));
    assert_eq!(label(&v), "jax 0.4.30 (CUDA 12.3)");
    assert_eq!(command(&v), "pip install \"jax[cuda12]==0.4.30\"");
}

/// A GPU on the PCI bus whose model is unknown and no driver: still a GPU machine, so the
/// CUDA build and a note asking for --gpu, never the CPU build.
#[test]
fn an_unidentified_gpu_is_not_a_cpu_machine() {
    let r = FakeRoot::new();
    r.pci("0000:18:00.0", "0x2f99", "0x030200", None);
    let site = r.torch_venv("2.7.1+cpu", None, &[]);
    let _ = site;
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "--python", "3.12"]),
    );
    assert!(
        label(&v).ends_with("+cu128") || label(&v).contains("+cu1"),
        "{v:#}"
    );
    assert!(
        first(&v)["notes"]
            .to_string()
            .contains("its model was not identified"),
        "{v:#}"
    );
    // An explicit --cuda on a machine with nothing seen is a CUDA question too.
    let (_, v) = rec(&["--cuda", "12.8", "--python", "3.12", "--platform", "x86_64"]);
    assert_eq!(label(&v), "torch 2.11.0+cu128");
    // The CPU build for a CPU nobody builds for: nothing fits.
    let (code, _) = rec(&["--python", "3.12", "--platform", "ppc64le"]);
    assert_eq!(code, 1);
    // A --python that is meant as a version but is not one.
    let out = run(FakeRoot::new().cmd().args(["recommend", "--python", "3."]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("--python 3.: not a Python version"),
        "{}",
        out.stderr
    );
}

/// pdm needs the source in pyproject.toml before `pdm add`: check's fix says both, as text.
#[test]
fn pdms_fix_is_the_edit_and_the_command() {
    let r = host("570.133.07", "NVIDIA GeForce GTX 1080");
    let site = r.torch_venv("2.7.1+cpu", None, &[]);
    r.file(
        &format!("{site}/torch-2.7.1+cpu.dist-info/INSTALLER"),
        "pdm\n",
    );
    let (_, v) = json(r.cmd().env("VIRTUAL_ENV", "/venv").arg("check"));
    let f = findings(&v, "GD041");
    let fix = f[0]["fix"].to_string();
    assert!(
        fix.contains("[[tool.pdm.source]]") && fix.contains("exclude_packages"),
        "{fix}"
    );
    assert!(fix.contains("then run: pdm add torch==2.7.1"), "{fix}");
    assert!(
        f[0]["fix"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["command"].is_null()),
        "{fix}"
    );
}

/// A torch conda installed is removed through conda before pip installs another.
#[test]
fn condas_torch_is_removed_through_conda_first() {
    let r = host("570.133.07", "NVIDIA GeForce GTX 1080");
    r.torch_venv("2.5.1+cpu", None, &[]);
    r.file("venv/conda-meta/pytorch-2.5.1-py3.12_cpu_0.json", "{}");
    r.file("venv/conda-meta/pytorch-mutex-1.0-cpu.json", "{}");
    let fix = check_fix(&r, "GD041");
    assert_eq!(
        fix,
        "conda remove -p /venv --force pytorch && python -m pip install --force-reinstall torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124"
    );
}

/// flash-attn's arch list takes one token per family; poetry cannot disable build isolation,
/// so pip in poetry's environment builds it.
#[test]
fn flash_attn_arch_tokens_and_poetry() {
    let r = host("580.95.05", "NVIDIA GeForce RTX 3090");
    r.torch_venv("2.9.1+cu128", Some("12.8"), &[]);
    r.toolkit("usr/local/cuda-12.8", "12.8.93");
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .env("CUDA_HOME", "/usr/local/cuda-12.8")
            .args(["recommend", "flash-attn", "--installer", "poetry"]),
    );
    assert_eq!(
        command(&v),
        "FLASH_ATTN_CUDA_ARCHS=80 MAX_JOBS=4 poetry run pip install --no-build-isolation flash-attn==2.8.3.post2"
    );
}

/// GD050 for a JAX plugin of another CUDA major: the fix removes it before installing the
/// JAX of torch's major.
#[test]
fn gd050_for_jax_removes_the_other_plugin() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.9.1+cu128", Some("12.8"), &[]);
    r.dist(&site, "jax", "0.12.0.1");
    r.dist(&site, "jax-cuda13-plugin", "0.12.0.1");
    r.dist(&site, "jax-cuda13-pjrt", "0.12.0.1");
    let fix = check_fix(&r, "GD050");
    assert_eq!(
        fix,
        "pip uninstall -y jax-cuda13-pjrt jax-cuda13-plugin && pip install \"jax[cuda12]==0.12.0.1\""
    );
}

/// When no single change is enough, the changes that together are.
#[test]
fn nothing_fits_without_several_changes() {
    let (code, v) = rec(&[
        "--driver",
        "418.87",
        "--gpu",
        "sm_80",
        "--python",
        "3.7",
        "--platform",
        "x86_64",
    ]);
    assert_eq!(code, 1);
    let what = first(&v)["must_change"][0]["what"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(what.contains("Python") && what.contains("driver"), "{what}");
}

/// docs/recommend.md's examples are what this build prints at 100 columns: each ```text block
/// that starts with `$ gpudoctor recommend …` is run (on an empty root) and compared, line by
/// line, with the lines the block shows.
#[test]
fn the_documented_examples_are_what_it_prints() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recommend.md"),
    )
    .unwrap();
    let mut checked = 0;
    for block in doc.split("```text\n").skip(1) {
        let block = block.split("```").next().unwrap();
        let mut lines = block.lines();
        let Some(cmd) = lines.next().and_then(|l| l.strip_prefix("$ gpudoctor ")) else {
            continue;
        };
        // Words, with "double quoted" ones kept whole.
        let args: Vec<String> = cmd
            .split('"')
            .enumerate()
            .flat_map(|(i, part)| {
                if i % 2 == 1 {
                    vec![part.to_string()]
                } else {
                    part.split_whitespace().map(String::from).collect()
                }
            })
            .collect();
        let r = FakeRoot::new();
        let out = run(r.cmd().env("COLUMNS", "100").args(&args));
        let shown: Vec<&str> = lines.collect();
        let printed: Vec<&str> = out.stdout.lines().collect();
        // A block may show the head of the output only.
        let start = printed
            .iter()
            .position(|l| *l == shown[0])
            .unwrap_or_else(|| panic!("{cmd}: {:?} not printed:\n{}", shown[0], out.stdout));
        assert_eq!(
            &printed[start..(start + shown.len()).min(printed.len())],
            &shown[..],
            "{cmd}"
        );
        checked += 1;
    }
    assert!(checked >= 2, "examples checked: {checked}");
}

/// Names from the machine reach recommend's text (the installed versions): what hides or
/// reorders text is shown escaped, in the terminal and in Markdown.
#[test]
fn names_that_hide_text_are_shown_escaped() {
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.15.0+cu132\u{202e}\u{e0041}x", Some("13.2"), &[]);
    for format in ["human", "markdown"] {
        let out = run(r.cmd().env("VIRTUAL_ENV", "/venv").args([
            "recommend",
            "vllm",
            "--format",
            format,
        ]));
        assert!(
            !out.stdout.contains('\u{202e}') && !out.stdout.contains('\u{e0041}'),
            "{format}: {}",
            out.stdout
        );
        assert!(
            out.stdout.contains("\\u{202e}\\u{e0041}x"),
            "{format}: {}",
            out.stdout
        );
    }
}

/// Within a release, a build whose own wheel confirms its CUDA and architectures wins over one
/// only a variant table names; where only an unconfirmed build fits, the answer says so.
#[test]
fn a_confirmed_build_is_preferred_and_an_unconfirmed_pick_says_so() {
    // The installed 2.8.0 is kept: cu128 is PyPI's own wheel, cu129 only the variant table's.
    let r = host("580.95.05", "NVIDIA H100 80GB HBM3");
    r.torch_venv("2.8.0+cpu", None, &[]);
    let (_, v) = json(
        r.cmd()
            .env("VIRTUAL_ENV", "/venv")
            .args(["recommend", "torch"]),
    );
    assert_eq!(label(&v), "torch 2.8.0+cu128", "{}", rejections(&v));
    let source = first(&v)["pick"]["source"].as_str().unwrap();
    assert!(!source.contains("UNCONFIRMED"), "{source}");
    let notes = first(&v)["notes"].to_string();
    assert!(!notes.contains("Unconfirmed"), "{notes}");
    // An RTX 5090 with a CUDA 12.8 driver: only 2.11.0+cu128 fits, and no wheel of it was read.
    let (_, v) = rec(&[
        "--driver",
        "570.133.07",
        "--gpu",
        "RTX 5090",
        "--python",
        "3.12",
        "--platform",
        "x86_64",
    ]);
    assert_eq!(label(&v), "torch 2.11.0+cu128", "{}", rejections(&v));
    let source = first(&v)["pick"]["source"].as_str().unwrap();
    assert!(source.contains("UNCONFIRMED"), "{source}");
    let notes = first(&v)["notes"].to_string();
    assert!(
        notes.contains("Unconfirmed: the CUDA version and architecture list of torch 2.11.0+cu128"),
        "{notes}"
    );
}
