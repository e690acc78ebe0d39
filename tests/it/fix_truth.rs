//! Fix truth: the commands gpudoctor prints are run, as printed, by the real installers (pip
//! 25.3, the pip ensurepip bundles, uv 0.13.9, poetry 2.5.1) against a local index of stand-in
//! wheels, in real environments (a venv, a uv venv, a uv project, a poetry project), then
//! `gpudoctor check` runs again: the
//! finding must be gone, no new error may appear, and the environment must hold what the fix
//! claimed. The harness maps the public index URLs onto the local server and the fake root's
//! paths onto the real ones (tests/util/fix_truth.rs); the product prints the real ones.
//!
//! Needs python3 with venv, and GPUDOCTOR_PACKAGING_TOOLS (uv, poetry and the pip wheel of
//! .ci/fetch-packaging-tools); GPUDOCTOR_REQUIRE_FIX_TOOLS makes a missing one a failure.

use std::path::PathBuf;

use crate::util::fix_truth::*;
use crate::util::*;
use serde_json::Value;

/// A machine as users have it: a GPU host under a fake root holding one real Python
/// environment, made by a real tool.
struct Env {
    root: FakeRoot,
    /// The environment's prefix inside the root ("/venv", "/proj/.venv").
    logical: String,
    /// Directories inside the root the printed commands may name ("/venv", "/proj").
    mapped: Vec<String>,
}

impl Env {
    fn prefix(&self) -> PathBuf {
        self.root.p(self.logical.trim_start_matches('/'))
    }

    fn site(&self) -> PathBuf {
        let lib = self.prefix().join("lib");
        let py = std::fs::read_dir(&lib)
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .expect("lib/python3.X");
        py.path().join("site-packages")
    }

    fn python(&self) -> PathBuf {
        self.prefix().join("bin/python")
    }

    /// `gpudoctor check --json` with this environment active, and `vars` set.
    fn check_with(&self, vars: &[(&str, &str)]) -> (i32, Value) {
        let mut c = self.root.cmd();
        c.env("VIRTUAL_ENV", &self.logical);
        for (k, v) in vars {
            c.env(k, v);
        }
        json(c.arg("check"))
    }

    fn check(&self) -> (i32, Value) {
        self.check_with(&[])
    }

    /// A printed command as it runs on this machine: the root's paths are real ones.
    fn real(&self, command: &str) -> String {
        let mut out = command.to_string();
        for dir in &self.mapped {
            let real = self.root.p(dir.trim_start_matches('/'));
            out = out.replace(&format!("{dir}/"), &format!("{}/", real.display()));
            out = out.replace(&format!("{dir} "), &format!("{} ", real.display()));
        }
        out
    }
}

/// A venv made by `python3 -m venv` (with the pip ensurepip bundles) at /venv, upgraded to
/// pip 25.3 unless `bundled_pip`.
fn pip_venv(t: &Tools, sb: &Sandbox, root: FakeRoot, bundled_pip: bool) -> Env {
    let prefix = root.p("venv");
    sb.run_ok(
        &format!("{} -m venv {}", t.python.display(), prefix.display()),
        root.path(),
    );
    if !bundled_pip {
        sb.run_ok(
            &format!(
                "{}/bin/python -m pip install -q --no-index {}",
                prefix.display(),
                t.pip_wheel.display()
            ),
            root.path(),
        );
    }
    Env {
        root,
        logical: "/venv".into(),
        mapped: vec!["/venv".into()],
    }
}

/// A venv made by `uv venv` (no pip in it) at /venv.
fn uv_venv(t: &Tools, sb: &Sandbox, root: FakeRoot) -> Env {
    let prefix = root.p("venv");
    sb.run_ok(
        &format!(
            "{} venv -q --python {} {}",
            t.uv.display(),
            t.python.display(),
            prefix.display()
        ),
        root.path(),
    );
    Env {
        root,
        logical: "/venv".into(),
        mapped: vec!["/venv".into()],
    }
}

/// A uv project at /proj (pyproject.toml, uv.lock, .venv) depending on `deps`, synced.
fn uv_project(t: &Tools, sb: &Sandbox, root: FakeRoot, deps: &[&str], extra: &str) -> Env {
    let dir = root.p("proj");
    let deps: Vec<String> = deps.iter().map(|d| format!("\"{d}\"")).collect();
    write(
        &dir.join("pyproject.toml"),
        &format!(
            "[project]\nname = \"proj\"\nversion = \"0.1.0\"\nrequires-python = \">=3.9\"\ndependencies = [{}]\n{extra}",
            deps.join(", ")
        ),
    );
    sb.run_ok(
        &format!("{} sync -q --python {}", t.uv.display(), t.python.display()),
        &dir,
    );
    Env {
        root,
        logical: "/proj/.venv".into(),
        mapped: vec!["/proj".into()],
    }
}

/// A poetry project at /proj (pyproject.toml, poetry.lock, the in-project .venv) depending on
/// `deps`, installed. Its primary source is the local PyPI (poetry reads no pip.conf).
fn poetry_project(sb: &Sandbox, index: &Index, root: FakeRoot, deps: &[&str]) -> Env {
    let dir = root.p("proj");
    let deps: Vec<String> = deps.iter().map(|d| format!("\"{d}\"")).collect();
    write(
        &dir.join("pyproject.toml"),
        &format!(
            "[project]\nname = \"proj\"\nversion = \"0.1.0\"\nrequires-python = \">=3.9\"\ndependencies = [{}]\n\n[tool.poetry]\npackage-mode = false\n\n[[tool.poetry.source]]\nname = \"pypi-local\"\nurl = \"{}/\"\npriority = \"primary\"\n",
            deps.join(", "),
            index.url("pypi")
        ),
    );
    sb.run_ok("poetry install -q", &dir);
    Env {
        root,
        logical: "/proj/.venv".into(),
        mapped: vec!["/proj".into()],
    }
}

fn finding<'a>(v: &'a Value, code: &str) -> &'a Value {
    let f = findings(v, code);
    assert_eq!(f.len(), 1, "one {code} expected: {:#}", v["findings"]);
    f[0]
}

/// The commands of a finding's fixes, in order.
fn commands(f: &Value) -> Vec<String> {
    f["fix"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["command"].as_str().map(str::to_string))
        .collect()
}

fn errors(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| format!("{} {}", f["code"], f["title"]))
        .collect()
}

/// Runs the first command of `code`'s fix (asserting it starts with `expect`), then checks
/// again: `code` is gone and no error appeared that was not there before.
fn apply_fix(env: &Env, index: &Index, sb: &Sandbox, code: &str, expect: &str) -> Value {
    let (_, before) = env.check();
    let f = finding(&before, code);
    let cmd = commands(f)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{code} has no command: {f:#}"));
    assert!(
        cmd.starts_with(expect),
        "{code}'s fix is `{cmd}`, expected `{expect}…`"
    );
    let out = sb.run_ok(&index.local(&env.real(&cmd)), env.root.path());
    let (_, after) = env.check();
    assert!(
        findings(&after, code).is_empty(),
        "{code} is still reported after `{cmd}`:\n{out}\n{:#}",
        after["findings"]
    );
    let old = errors(&before);
    let new: Vec<String> = errors(&after)
        .into_iter()
        .filter(|e| !old.contains(e))
        .collect();
    assert!(new.is_empty(), "`{cmd}` left new errors: {new:?}");
    after
}

/// PyTorch's stand-ins: torch 2.5.1 for CUDA 12.4 and for the CPU, a newer release that a
/// pinned command must not take, and PyPI's plain 2.5.1 (a source or conda build's version).
fn torch_index(t: &Tools) -> Index {
    let index = Index::start(t);
    index
        .publish(Some("cu124"), &Wheel::torch("2.5.1+cu124", Some("12.4")))
        .publish(Some("cu124"), &Wheel::torch("2.6.0+cu124", Some("12.4")))
        .publish(Some("cpu"), &Wheel::torch("2.5.1+cpu", None))
        .publish(None, &Wheel::torch("2.5.1", None));
    index
}

/// The laptop: an RTX 4080 on driver 551.86 (CUDA 12.4).
fn laptop() -> FakeRoot {
    gpu_host("551.86", "NVIDIA GeForce RTX 4080 Laptop GPU")
}

#[test]
fn a_cpu_torch_is_replaced_by_the_printed_pip_command() {
    let Some(t) = tools() else { return };
    let index = torch_index(&t);
    let sb = Sandbox::new(&index);
    for (bundled_pip, installed, from) in [
        (false, "2.5.1+cpu", "whl/cpu"),
        (true, "2.5.1+cpu", "whl/cpu"),
        (false, "2.5.1", "pypi"),
        (true, "2.5.1", "pypi"),
    ] {
        let env = pip_venv(&t, &sb, laptop(), bundled_pip);
        sb.run_ok(
            &format!(
                "{} -m pip install -q torch=={installed} --index-url {}",
                env.python().display(),
                index.url(from)
            ),
            env.root.path(),
        );
        // recommend and check agree: the CPU build is not what the machine needs.
        let mut c = env.root.cmd();
        let (_, rec) = json(c.env("VIRTUAL_ENV", "/venv").args(["recommend", "torch"]));
        let r = &rec["recommendations"][0];
        assert!(
            !r["notes"].to_string().contains("nothing to install"),
            "{installed}: {:#}",
            r["notes"]
        );
        let (_, v) = env.check();
        assert_eq!(
            r["commands"][0]["lines"][0].as_str(),
            commands(finding(&v, "GD041")).first().map(String::as_str),
            "recommend's command is check's fix"
        );
        // The environment's own interpreter runs pip: no other pip on PATH can take it.
        let after = apply_fix(
            &env,
            &index,
            &sb,
            "GD041",
            "/venv/bin/python -m pip install --force-reinstall torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124",
        );
        assert_eq!(
            version_of(&env.site(), "torch").as_deref(),
            Some("2.5.1+cu124"),
            "pip bundled: {bundled_pip}, from {installed}"
        );
        assert!(findings(&after, "GD041").is_empty());
    }
}

#[test]
fn a_cpu_torch_in_a_uv_venv_is_replaced_by_uv() {
    let Some(t) = tools() else { return };
    let index = torch_index(&t);
    let sb = Sandbox::new(&index);
    for (installed, from) in [("2.5.1+cpu", "whl/cpu"), ("2.5.1", "pypi")] {
        let env = uv_venv(&t, &sb, laptop());
        sb.run_ok(
            &format!(
                "uv pip install -q --python {} torch=={installed} --index-url {}",
                env.python().display(),
                index.url(from)
            ),
            env.root.path(),
        );
        // uv's venv has no pip: `python -m pip` would fail there.
        assert!(!env.site().join("pip").exists());
        apply_fix(
            &env,
            &index,
            &sb,
            "GD041",
            "uv pip install --reinstall torch==2.5.1",
        );
        assert_eq!(
            version_of(&env.site(), "torch").as_deref(),
            Some("2.5.1+cu124")
        );
    }
}

#[test]
fn a_cpu_torch_in_a_uv_project_is_fixed_in_the_project() {
    let Some(t) = tools() else { return };
    let index = torch_index(&t);
    let sb = Sandbox::new(&index);
    // The project locks PyPI's plain 2.5.1 (no CUDA in this stand-in).
    let env = uv_project(&t, &sb, laptop(), &["torch==2.5.1"], "");
    assert_eq!(version_of(&env.site(), "torch").as_deref(), Some("2.5.1"));
    apply_fix(&env, &index, &sb, "GD041", "uv add --project /proj torch==2.5.1 --index pytorch-cu124=https://download.pytorch.org/whl/cu124");
    assert_eq!(
        version_of(&env.site(), "torch").as_deref(),
        Some("2.5.1+cu124")
    );
    // The fix is in pyproject.toml and uv.lock: the next sync keeps it.
    let dir = env.root.p("proj");
    sb.run_ok(&format!("{} sync -q", t.uv.display()), &dir);
    assert_eq!(
        version_of(&env.site(), "torch").as_deref(),
        Some("2.5.1+cu124")
    );
    let (_, v) = env.check();
    assert!(findings(&v, "GD041").is_empty(), "{:#}", v["findings"]);
}

/// torch 2.5.1+cu124 as its wheel declares it (cuDNN pinned), installed with `--no-deps`
/// (how environments lose their nvidia-* wheels), the pinned cuDNN and a newer one on PyPI.
#[test]
fn a_missing_pinned_wheel_is_installed_by_the_printed_command() {
    let Some(t) = tools() else { return };
    let index = Index::start(&t);
    let cudnn = "nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\" and platform_machine == \"x86_64\"";
    index
        .publish(
            Some("cu124"),
            &Wheel::torch("2.5.1+cu124", Some("12.4")).requires(cudnn),
        )
        .publish(None, &Wheel::new("nvidia-cudnn-cu12", "9.1.0.70"))
        .publish(None, &Wheel::new("nvidia-cudnn-cu12", "9.5.1.17"));
    let sb = Sandbox::new(&index);
    let pip = pip_venv(&t, &sb, laptop(), false);
    let uv = uv_venv(&t, &sb, laptop());
    for (env, install, expect) in [
        (
            &pip,
            format!("{} -m pip install -q --no-deps", pip.python().display()),
            "/venv/bin/python -m pip install nvidia-cudnn-cu12==9.1.0.70",
        ),
        (
            &uv,
            format!(
                "uv pip install -q --no-deps --python {}",
                uv.python().display()
            ),
            "uv pip install nvidia-cudnn-cu12==9.1.0.70 --python /venv/bin/python",
        ),
    ] {
        sb.run_ok(
            &format!(
                "{install} torch==2.5.1+cu124 --index-url {}",
                index.url("whl/cu124")
            ),
            env.root.path(),
        );
        apply_fix(env, &index, &sb, "GD044", expect);
        assert_eq!(
            version_of(&env.site(), "nvidia-cudnn-cu12").as_deref(),
            Some("9.1.0.70")
        );
        assert_eq!(
            version_of(&env.site(), "torch").as_deref(),
            Some("2.5.1+cu124")
        );
    }
}

/// torchvision built for CUDA 11.8 beside torch 2.5.1+cu124: the fix replaces torchvision
/// alone, from torch's index, and leaves torch as it is.
#[test]
fn a_companion_of_another_cuda_is_replaced_and_torch_stays() {
    let Some(t) = tools() else { return };
    let index = Index::start(&t);
    index
        .publish(Some("cu124"), &Wheel::torch("2.5.1+cu124", Some("12.4")))
        .publish(
            Some("cu124"),
            &Wheel::pinning_torch("torchvision", "0.20.1+cu124", "==2.5.1"),
        )
        .publish(
            Some("cu118"),
            &Wheel::pinning_torch("torchvision", "0.20.1+cu118", "==2.5.1"),
        )
        .publish(Some("cu118"), &Wheel::torch("2.5.1+cu118", Some("11.8")));
    let sb = Sandbox::new(&index);
    let env = pip_venv(&t, &sb, laptop(), false);
    let py = env.python();
    sb.run_ok(
        &format!(
            "{} -m pip install -q torch==2.5.1+cu124 --index-url {}",
            py.display(),
            index.url("whl/cu124")
        ),
        env.root.path(),
    );
    sb.run_ok(
        &format!(
            "{} -m pip install -q --no-deps torchvision==0.20.1+cu118 --index-url {}",
            py.display(),
            index.url("whl/cu118")
        ),
        env.root.path(),
    );
    apply_fix(
        &env,
        &index,
        &sb,
        "GD046",
        "/venv/bin/python -m pip install --force-reinstall --no-deps torchvision==0.20.1 --index-url https://download.pytorch.org/whl/cu124",
    );
    assert_eq!(
        version_of(&env.site(), "torchvision").as_deref(),
        Some("0.20.1+cu124")
    );
    assert_eq!(
        version_of(&env.site(), "torch").as_deref(),
        Some("2.5.1+cu124")
    );
}

/// A shell fix (`unset`, `export`) is proven in a shell: the variables set, the printed
/// command run, then `gpudoctor check` started from that same shell.
fn shell_fix(root: &FakeRoot, sb: &Sandbox, vars: &[(&str, &str)], code: &str, expect: &str) {
    let mut c = root.cmd();
    c.env("VIRTUAL_ENV", "/venv");
    for (k, v) in vars {
        c.env(k, v);
    }
    let (_, before) = json(c.arg("check"));
    let cmds = commands(finding(&before, code));
    let cmd = cmds
        .first()
        .unwrap_or_else(|| panic!("{code} has no command"));
    assert_eq!(cmd, expect, "{code}'s fix");
    let exports: String = vars
        .iter()
        .map(|(k, v)| format!("export {k}='{v}'; "))
        .collect();
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let out = sb.sh(
        &format!(
            "{exports}{cmd} && VIRTUAL_ENV=/venv NO_COLOR=1 exec {} --root {} check --json",
            bin.display(),
            root.path().display()
        ),
        root.path(),
    );
    let after: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert!(
        findings(&after, code).is_empty(),
        "{code} is still reported after `{cmd}`: {:#}",
        after["findings"]
    );
    let old = errors(&before);
    let new: Vec<String> = errors(&after)
        .into_iter()
        .filter(|e| !old.contains(e))
        .collect();
    assert!(new.is_empty(), "`{cmd}` left new errors: {new:?}");
}

#[test]
fn variables_left_set_are_cleared_by_the_printed_shell_command() {
    let Some(t) = tools() else { return };
    let index = Index::start(&t);
    let sb = Sandbox::new(&index);
    let r = laptop();
    r.torch_venv("2.5.1+cu124", Some("12.4"), &[]);
    shell_fix(
        &r,
        &sb,
        &[("CUDA_LAUNCH_BLOCKING", "1")],
        "GD012",
        "unset CUDA_LAUNCH_BLOCKING",
    );
    shell_fix(
        &r,
        &sb,
        &[("CUDA_INJECTION64_PATH", "/opt/nsight/libinject.so")],
        "GD013",
        "unset CUDA_INJECTION64_PATH",
    );
    shell_fix(
        &r,
        &sb,
        &[("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments=True")],
        "GD014",
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    );
    shell_fix(
        &r,
        &sb,
        &[
            ("PYTORCH_ALLOC_CONF", "expandable_segments:True"),
            ("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"),
        ],
        "GD015",
        "unset PYTORCH_ALLOC_CONF",
    );
    // torch 2.9 reads the new name: the old one goes.
    let r = laptop();
    r.torch_venv("2.9.1+cu126", Some("12.6"), &[]);
    shell_fix(
        &r,
        &sb,
        &[
            ("PYTORCH_ALLOC_CONF", "expandable_segments:True"),
            ("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"),
        ],
        "GD015",
        "unset PYTORCH_CUDA_ALLOC_CONF",
    );
    shell_fix(
        &r,
        &sb,
        &[(
            "PYTORCH_ALLOC_CONF",
            "expandable_segments:True,max_split_size_mb=128",
        )],
        "GD014",
        "export PYTORCH_ALLOC_CONF=expandable_segments:True,max_split_size_mb:128",
    );
    // Nothing to correct it to: cleared.
    shell_fix(
        &r,
        &sb,
        &[("PYTORCH_ALLOC_CONF", "max_split_size_mb:0")],
        "GD014",
        "unset PYTORCH_ALLOC_CONF",
    );
}

/// LD_LIBRARY_PATH holding an older nvJitLink ahead of torch's wheel: the printed `export`
/// keeps the other entries and drops that directory.
#[test]
fn ld_library_path_shadowing_is_cleared_by_the_printed_export() {
    let Some(t) = tools() else { return };
    let index = Index::start(&t);
    let sb = Sandbox::new(&index);
    let r = gpu_host("580.95.05", "NVIDIA H100 80GB HBM3");
    let site = r.torch_venv("2.8.0+cu128", Some("12.8"), &[]);
    r.lib(
        &format!("{site}/nvidia/nvjitlink/lib"),
        "libnvJitLink.so.12",
        "libnvJitLink.so.12",
        &[],
    )
    .dist(&site, "nvidia-nvjitlink-cu12", "12.8.93")
    .lib(
        "usr/local/cuda-12.1/lib64",
        "libnvJitLink.so.12.1.105",
        "libnvJitLink.so.12",
        &[],
    )
    .dir("opt/tools/lib");
    shell_fix(
        &r,
        &sb,
        &[(
            "LD_LIBRARY_PATH",
            "/opt/tools/lib:/usr/local/cuda-12.1/lib64/",
        )],
        "GD045",
        "export LD_LIBRARY_PATH=/opt/tools/lib",
    );
    shell_fix(
        &r,
        &sb,
        &[("LD_LIBRARY_PATH", "/usr/local/cuda-12.1/lib64")],
        "GD045",
        "unset LD_LIBRARY_PATH",
    );
}

/// torch 2.5.1 for CUDA 12.4 on a T4 whose driver 470 (CUDA 11.4) cannot run CUDA 12: the
/// printed alternative to a driver upgrade installs a build that driver runs, in a venv (pip)
/// and a uv venv (uv).
#[test]
fn a_torch_too_new_for_the_driver_is_replaced_by_a_build_it_runs() {
    let Some(t) = tools() else { return };
    let index = Index::start(&t);
    index
        .publish(Some("cu124"), &Wheel::torch("2.5.1+cu124", Some("12.4")))
        .publish(Some("cu118"), &Wheel::torch("2.5.1+cu118", Some("11.8")))
        .publish(Some("cu118"), &Wheel::torch("2.7.1+cu118", Some("11.8")))
        .publish(Some("cu124"), &Wheel::torch("2.6.0+cu124", Some("12.4")));
    let sb = Sandbox::new(&index);
    for uv in [false, true] {
        let root = gpu_host("470.256.02", "Tesla T4");
        let (env, install, expect) = if uv {
            let env = uv_venv(&t, &sb, root);
            let install = format!("uv pip install -q --python {}", env.python().display());
            (
                env,
                install,
                "uv pip install --reinstall torch==2.5.1 --index-url https://download.pytorch.org/whl/cu118",
            )
        } else {
            let env = pip_venv(&t, &sb, root, false);
            let install = format!("{} -m pip install -q", env.python().display());
            (
                env,
                install,
                "/venv/bin/python -m pip install --force-reinstall torch==2.5.1 --index-url https://download.pytorch.org/whl/cu118",
            )
        };
        sb.run_ok(
            &format!(
                "{install} torch==2.5.1+cu124 --index-url {}",
                index.url("whl/cu124")
            ),
            env.root.path(),
        );
        let (_, before) = env.check();
        let f = finding(&before, "GD042");
        // The driver upgrade comes first, as advice; the install is the command.
        assert!(f["fix"][0]["command"].is_null(), "{:#}", f["fix"]);
        let after = apply_fix(&env, &index, &sb, "GD042", expect);
        // The installed release, rebuilt for CUDA 11.8: nothing else changes.
        assert_eq!(
            version_of(&env.site(), "torch").as_deref(),
            Some("2.5.1+cu118"),
            "uv: {uv}"
        );
        assert!(
            findings(&after, "GD043").is_empty(),
            "{:#}",
            after["findings"]
        );
    }
}

/// torch 2.5.1+cu124 on an RTX 5090 (sm_120, newer than the build's sm_90): the printed
/// command installs a build with sm_120 kernels, in a venv and in a uv project, whose next
/// `uv sync` keeps it.
#[test]
fn a_torch_without_kernels_for_the_gpu_is_replaced_by_one_with_them() {
    let Some(t) = tools() else { return };
    let index = Index::start(&t);
    index
        .publish(Some("cu124"), &Wheel::torch("2.5.1+cu124", Some("12.4")))
        .publish(None, &Wheel::torch("2.5.1", Some("12.4")));
    for (v, cuda) in [("2.7.1", "12.8"), ("2.11.0", "12.8")] {
        index.publish(
            Some("cu128"),
            &Wheel::torch(&format!("{v}+cu128"), Some(cuda)),
        );
    }
    let sb = Sandbox::new(&index);
    let rtx5090 = || gpu_host("570.124.06", "NVIDIA GeForce RTX 5090");

    let env = pip_venv(&t, &sb, rtx5090(), false);
    sb.run_ok(
        &format!(
            "{} -m pip install -q torch==2.5.1+cu124 --index-url {}",
            env.python().display(),
            index.url("whl/cu124")
        ),
        env.root.path(),
    );
    apply_fix(
        &env,
        &index,
        &sb,
        "GD043",
        "/venv/bin/python -m pip install torch==",
    );
    let got = version_of(&env.site(), "torch").unwrap();
    assert!(got.ends_with("+cu128"), "torch {got}");

    let env = uv_project(&t, &sb, rtx5090(), &["torch==2.5.1"], "");
    apply_fix(&env, &index, &sb, "GD043", "uv add --project /proj torch==");
    let got = version_of(&env.site(), "torch").unwrap();
    assert!(got.ends_with("+cu128"), "torch {got}");
    sb.run_ok(&format!("{} sync -q", t.uv.display()), &env.root.p("proj"));
    assert_eq!(
        version_of(&env.site(), "torch").as_deref(),
        Some(got.as_str())
    );
    let (_, v) = env.check();
    assert!(findings(&v, "GD043").is_empty(), "{:#}", v["findings"]);
}

/// JAX's CUDA plugin installed without its wheels: its module finds cuDNN through its RUNPATH
/// (`$ORIGIN/../nvidia/cudnn/lib`, as the real plugin's does), and the printed command installs
/// the wheel that puts libcudnn.so.9 there.
#[test]
fn a_module_missing_a_wheels_library_loads_after_the_printed_install() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let Some(t) = tools() else { return };
    let index = Index::start(&t);
    let plugin = "jax_cuda12_plugin/cuda_plugin_extension.so";
    index
        .publish(Some("cu124"), &Wheel::torch("2.5.1+cu124", Some("12.4")))
        .publish(
            None,
            &Wheel::new("jax-cuda12-plugin", "0.4.35")
                .requires("nvidia-cudnn-cu12>=9.1,<10.0")
                .file(
                    plugin,
                    &elf::shared_object_runpath(
                        "cuda_plugin_extension.so",
                        &["libcudnn.so.9"],
                        "$ORIGIN/../nvidia/cudnn/lib",
                    ),
                ),
        )
        .publish(
            None,
            &Wheel::new("nvidia-cudnn-cu12", "9.1.0.70").file(
                "nvidia/cudnn/lib/libcudnn.so.9",
                &elf::shared_object("libcudnn.so.9", &[]),
            ),
        );
    let sb = Sandbox::new(&index);
    let env = pip_venv(&t, &sb, laptop(), false);
    let py = env.python();
    sb.run_ok(
        &format!(
            "{} -m pip install -q torch==2.5.1+cu124 --index-url {}",
            py.display(),
            index.url("whl/cu124")
        ),
        env.root.path(),
    );
    sb.run_ok(
        &format!(
            "{} -m pip install -q --no-deps jax-cuda12-plugin==0.4.35",
            py.display()
        ),
        env.root.path(),
    );
    apply_fix(
        &env,
        &index,
        &sb,
        "GD060",
        "/venv/bin/python -m pip install \"nvidia-cudnn-cu12>=9,<10\"",
    );
    assert_eq!(
        version_of(&env.site(), "nvidia-cudnn-cu12").as_deref(),
        Some("9.1.0.70")
    );
}

/// LD_LIBRARY_PATH gives torch an older cuDNN (9.0) than the 9.1 it was built against and pins,
/// ahead of the pinned wheel its RUNPATH names: the printed command drops that entry and the
/// loader gives torch its wheel's cuDNN.
#[test]
fn an_older_cudnn_on_ld_library_path_is_dropped_by_the_printed_export() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let Some(t) = tools() else { return };
    let index = Index::start(&t);
    let sb = Sandbox::new(&index);
    let r = gpu_host("550.54.15", "NVIDIA A100-SXM4-80GB");
    let site = r.torch_venv(
        "2.5.1+cu124",
        Some("12.4"),
        &["nvidia-cudnn-cu12==9.1.0.70"],
    );
    r.bytes(
        &format!("{site}/torch/_C.cpython-312-x86_64-linux-gnu.so"),
        &elf::shared_object_runpath("_C.so", &["libtorch_cuda.so"], "$ORIGIN/lib"),
    )
    .bytes(
        &format!("{site}/torch/lib/libtorch_cuda.so"),
        &elf::shared_object_runpath(
            "libtorch_cuda.so",
            &["libcudnn.so.9"],
            "$ORIGIN/../../nvidia/cudnn/lib",
        ),
    )
    .lib(
        &format!("{site}/nvidia/cudnn/lib"),
        "libcudnn.so.9",
        "libcudnn.so.9",
        &[],
    )
    .dist(&site, "nvidia-cudnn-cu12", "9.1.0.70")
    .lib("opt/cudnn/lib", "libcudnn.so.9.0.0", "libcudnn.so.9", &[])
    .dir("opt/tools/lib");
    shell_fix(
        &r,
        &sb,
        &[("LD_LIBRARY_PATH", "/opt/tools/lib:/opt/cudnn/lib")],
        "GD061",
        "export LD_LIBRARY_PATH=/opt/tools/lib",
    );
    shell_fix(
        &r,
        &sb,
        &[("LD_LIBRARY_PATH", "/opt/cudnn/lib/")],
        "GD061",
        "unset LD_LIBRARY_PATH",
    );
}

/// A CPU torch in a poetry project: the printed commands add PyTorch's CUDA index to the
/// project as an explicit source and torch from it, so pyproject.toml and poetry.lock hold the
/// fix and the next `poetry install` keeps it.
#[test]
fn a_cpu_torch_in_a_poetry_project_is_fixed_in_the_project() {
    let Some(t) = tools() else { return };
    let index = torch_index(&t);
    let sb = Sandbox::new(&index);
    let env = poetry_project(&sb, &index, laptop(), &["torch==2.5.1"]);
    assert_eq!(version_of(&env.site(), "torch").as_deref(), Some("2.5.1"));
    apply_fix(
        &env,
        &index,
        &sb,
        "GD041",
        "poetry --directory /proj source add --priority=explicit pytorch-cu124 https://download.pytorch.org/whl/cu124 && poetry --directory /proj add --source pytorch-cu124 torch==2.5.1",
    );
    assert_eq!(
        version_of(&env.site(), "torch").as_deref(),
        Some("2.5.1+cu124")
    );
    // The fix is in pyproject.toml and poetry.lock: a fresh install from them keeps it.
    let dir = env.root.p("proj");
    let pyproject = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap();
    assert!(pyproject.contains("pytorch-cu124"), "{pyproject}");
    std::fs::remove_dir_all(dir.join(".venv")).unwrap();
    sb.run_ok("poetry install -q", &dir);
    assert_eq!(
        version_of(&env.site(), "torch").as_deref(),
        Some("2.5.1+cu124")
    );
    let (_, v) = env.check();
    assert!(findings(&v, "GD041").is_empty(), "{:#}", v["findings"]);
}

/// The packages recommend answers for, and what their installs pull in: the stand-ins keep
/// the requirements among these (verbatim from PyPI) and drop the rest (numpy, nvidia-*, …).
const FAMILY: &[&str] = &[
    "torch",
    "torchvision",
    "torchaudio",
    "vllm",
    "jax",
    "jaxlib",
    "jax-cuda12-plugin",
    "jax-cuda12-pjrt",
    "jax-cuda13-plugin",
    "jax-cuda13-pjrt",
    "onnxruntime-gpu",
];

/// PyTorch's per-CUDA indexes the stand-ins are published on.
const TORCH_VARIANTS: &[&str] = &["cu118", "cu126", "cu128", "cu129", "cu130", "cu132"];

/// A release newer than any real one, on every index: a command that does not pin what it
/// names would take it.
const DECOY: &str = "99.0.0";

/// The real METADATA of the releases recommend names: Requires-Python, Requires-Dist,
/// Provides-Extra and the Linux wheels' names, read from PyPI by `.ci/compat-refresh --pins`.
fn pypi_pins() -> serde_json::Map<String, Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pypi-pins.json");
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn requirement_name(req: &str) -> String {
    req.split(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
        .next()
        .unwrap()
        .to_ascii_lowercase()
        .replace('_', "-")
}

/// The local index for recommend's answers: every recorded release on PyPI with its own
/// requirements among FAMILY; torch and its companions also on each PyTorch index with the
/// variant's local label; the decoy release everywhere.
fn recommend_index(t: &Tools, pins: &serde_json::Map<String, Value>) -> Index {
    let index = Index::start(t);
    let family = |reqs: &Value| -> Vec<String> {
        reqs.as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .filter(|r| FAMILY.contains(&requirement_name(r).as_str()))
            .collect()
    };
    for (key, m) in pins {
        let (name, version) = key.split_once("==").unwrap();
        let mut w = Wheel::new(name, version);
        w.requires = family(&m["requires_dist"]);
        w.extras = m["provides_extra"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().to_string())
            .collect();
        index.publish(None, &w);
        if ["torch", "torchvision", "torchaudio"].contains(&name) {
            for v in TORCH_VARIANTS {
                let mut labelled = Wheel::new(name, &format!("{version}+{v}"));
                labelled.requires = w.requires.clone();
                labelled.extras = w.extras.clone();
                index.publish(Some(v), &labelled);
            }
        }
    }
    for name in FAMILY {
        let decoy = || {
            let w = Wheel::new(name, DECOY);
            if *name == "torch" {
                w
            } else {
                w.requires(&format!("torch=={DECOY}"))
            }
        };
        index.publish(None, &decoy());
        if ["torch", "torchvision", "torchaudio"].contains(name) {
            for v in TORCH_VARIANTS {
                let mut w = decoy();
                w.version = format!("{DECOY}+{v}");
                index.publish(Some(v), &w);
            }
        }
    }
    index
}

/// Whether a wheel file serves CPython 3.`minor` on x86_64: cp3N with its own ABI, cp3N-abi3
/// for N ≤ minor, py3-none; a Linux x86_64 or pure platform tag.
fn wheel_serves(file: &str, minor: u32) -> bool {
    let parts: Vec<&str> = file.trim_end_matches(".whl").split('-').collect();
    let [.., py, abi, plat] = parts[..] else {
        return false;
    };
    if !(plat == "any"
        || plat
            .split('.')
            .any(|p| p.contains("linux") && p.ends_with("x86_64")))
    {
        return false;
    }
    py.split('.').any(|py| {
        let n = py.strip_prefix("cp3").and_then(|n| n.parse::<u32>().ok());
        match n {
            Some(n) if abi == "abi3" => n <= minor,
            Some(n) => n == minor && !abi.ends_with('t'),
            None => py.starts_with("py3"),
        }
    })
}

/// Every recommend answer, on six machines (drivers 525 to 580, Volta to Blackwell, Python
/// 3.9 to 3.13), for torch, torch with its companions, torch with vllm, jax and
/// onnxruntime-gpu: each release it names exists on PyPI with a wheel for the machine's
/// Python whose Requires-Python admits it, and its commands, run as printed by real pip and
/// real uv in a fresh venv against an index of stand-ins carrying the packages' own
/// requirements, install exactly the releases the answer names — one command never replaces
/// what another installed.
#[test]
fn every_recommend_answer_installs_exactly_what_it_names() {
    let Some(t) = tools() else { return };
    let pins = pypi_pins();
    let index = recommend_index(&t, &pins);
    let sb = Sandbox::new(&index);
    // pip 25.3 with its vendored `packaging` judges Requires-Python.
    let judge = sb.home.path().join("judge");
    sb.run_ok(
        &format!(
            "{} venv -q --python {} {} && {} pip install -q --python {}/bin/python --no-index {}",
            t.uv.display(),
            t.python.display(),
            judge.display(),
            t.uv.display(),
            judge.display(),
            t.pip_wheel.display()
        ),
        sb.home.path(),
    );
    let machines = [
        ("580.95.05", "H100", "3.12"),
        ("570.195.03", "H100", "3.12"),
        ("550.54.15", "A100", "3.11"),
        ("535.183.01", "T4", "3.10"),
        ("570.133.07", "RTX 5090", "3.13"),
        ("525.147.05", "V100", "3.9"),
    ];
    let sets: &[&[&str]] = &[
        &["torch"],
        &["torch", "torchvision", "torchaudio"],
        &["torch", "vllm"],
        &["jax"],
        &["onnxruntime-gpu"],
    ];
    let mut ran = std::collections::BTreeSet::new();
    let mut python_claims = Vec::new();
    let mut missing = Vec::new();
    for (driver, gpu, python) in machines {
        let minor: u32 = python.split('.').nth(1).unwrap().parse().unwrap();
        for set in sets {
            let r = FakeRoot::new();
            let (_, v) = json(r.cmd().arg("recommend").args(*set).args([
                "--fresh",
                "--driver",
                driver,
                "--gpu",
                gpu,
                "--python",
                python,
                "--platform",
                "x86_64",
            ]));
            let what = format!("{set:?} on {driver} {gpu} Python {python}");
            // What the answer names: (name, version as installed).
            let mut expect: Vec<(String, String)> = Vec::new();
            let mut pip_lines = Vec::new();
            let mut uv_lines = Vec::new();
            for rec in v["recommendations"].as_array().unwrap() {
                let pick = &rec["pick"];
                if pick.is_null() {
                    continue;
                }
                let label = pick["torch_backend"].as_str();
                for p in pick["pins"].as_array().unwrap() {
                    let name = p["name"].as_str().unwrap().to_string();
                    let version = p["version"].as_str().unwrap().to_string();
                    match pins.get(&format!("{name}=={version}")) {
                        None => missing.push(format!("{name}=={version}")),
                        Some(m) => {
                            assert!(
                                m["wheels"]
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .any(|w| wheel_serves(w.as_str().unwrap(), minor)),
                                "{what}: {name} {version} has no wheel for Python {python} on x86_64: {}",
                                m["wheels"]
                            );
                            if let Some(spec) = m["requires_python"].as_str() {
                                python_claims.push((what.clone(), name.clone(), spec.to_string()));
                            }
                        }
                    }
                    let installed = match label {
                        Some(l) if pick["index_url"].as_str().is_some() => format!("{version}+{l}"),
                        _ => version,
                    };
                    expect.push((name, installed));
                }
                let lines: Vec<&str> = rec["commands"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|c| c["lines"].as_array().unwrap())
                    .map(|l| l.as_str().unwrap())
                    .collect();
                let pip: Vec<&&str> = lines
                    .iter()
                    .filter(|l| l.starts_with("python -m pip "))
                    .collect();
                let plain: Vec<&&str> = lines.iter().filter(|l| l.starts_with("pip ")).collect();
                assert_eq!(pip.len(), plain.len(), "{what}: {lines:?}");
                for (a, b) in pip.iter().zip(&plain) {
                    assert_eq!(a.strip_prefix("python -m "), Some(**b), "{what}");
                }
                pip_lines.extend(pip.iter().map(|l| l.to_string()));
                uv_lines.extend(
                    lines
                        .iter()
                        .filter(|l| l.starts_with("uv pip "))
                        .map(|l| l.to_string()),
                );
            }
            if expect.is_empty() || !ran.insert((pip_lines.clone(), uv_lines.clone())) {
                continue;
            }
            for (installer, lines) in [("pip", &pip_lines), ("uv", &uv_lines)] {
                assert!(!lines.is_empty(), "{what}: no {installer} command");
                let venv = tempfile::tempdir().unwrap();
                let venv = venv.path().join("venv");
                sb.run_ok(
                    &format!(
                        "{uv} venv -q --python {py} {v} && {uv} pip install -q --python {v}/bin/python --no-index {pip}",
                        uv = t.uv.display(),
                        py = t.python.display(),
                        v = venv.display(),
                        pip = t.pip_wheel.display()
                    ),
                    sb.home.path(),
                );
                for line in lines {
                    let out = sb.run_ok(
                        &format!(
                            "export VIRTUAL_ENV={v} PATH={v}/bin:$PATH; {}",
                            index.local(line),
                            v = venv.display()
                        ),
                        sb.home.path(),
                    );
                    assert!(
                        !out.contains("does not provide the extra")
                            && !out.contains("does not have an extra"),
                        "{what}: `{line}` names an extra the package does not have:\n{out}"
                    );
                }
                let py = std::fs::read_dir(venv.join("lib"))
                    .unwrap()
                    .flatten()
                    .next()
                    .unwrap()
                    .path();
                let have: Vec<(String, String)> = installed(&py.join("site-packages"))
                    .into_iter()
                    .filter(|(n, _)| FAMILY.contains(&n.as_str()))
                    .collect();
                for (name, version) in &expect {
                    assert!(
                        have.contains(&(name.clone(), version.clone())),
                        "{what}: after {lines:?} ({installer}) {name} is not {version}: {have:?}"
                    );
                }
                // Anything else came in by a pin of what was named: jax's jaxlib, plugin and
                // PJRT at jax's own version; never the decoy.
                for (name, version) in &have {
                    if expect.iter().any(|(n, _)| n == name) {
                        continue;
                    }
                    let jax = expect.iter().find(|(n, _)| n == "jax");
                    assert!(
                        name.starts_with("jax") && jax.is_some_and(|(_, jv)| jv == version),
                        "{what}: {lines:?} ({installer}) also installed {name} {version}: {have:?}"
                    );
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "releases named by recommend but not recorded; run `.ci/compat-refresh --pins tests/fixtures/pypi-pins.json {}`",
        missing.join(" ")
    );
    // Requires-Python, judged by pip's own `packaging`.
    let script = python_claims
        .iter()
        .map(|(what, name, spec)| {
            let py = what.rsplit("Python ").next().unwrap();
            format!(
                "print({:?}, SpecifierSet({spec:?}).contains({py:?}))\n",
                format!("{what}: {name} requires Python {spec}")
            )
        })
        .collect::<String>();
    let script_path = sb.home.path().join("judge.py");
    write(
        &script_path,
        &format!("from pip._vendor.packaging.specifiers import SpecifierSet\n{script}"),
    );
    let out = sb.run_ok(
        &format!("{}/bin/python {}", judge.display(), script_path.display()),
        sb.home.path(),
    );
    let refused: Vec<&str> = out.lines().filter(|l| l.ends_with(" False")).collect();
    assert!(
        refused.is_empty(),
        "answers for a Python their release refuses: {refused:#?}"
    );
    assert!(out.lines().count() >= 20, "{out}");
    assert!(ran.len() >= 12, "distinct answers run: {}", ran.len());
    eprintln!(
        "recommend: {} distinct answers run by pip and uv, {} Requires-Python claims judged",
        ran.len(),
        python_claims.len()
    );
}

/// docs/guide.md's "torch.cuda.is_available() is False", followed as written: its first
/// command, then the fix of the finding its table names for a CPU torch, then the command
/// again. In a venv (pip) and a uv project it ends with a CUDA torch and no GD041. (Under
/// --root the import itself is not run: the static probes are what the guide's step finds.)
#[test]
fn the_guides_is_available_path_ends_with_a_cuda_torch() {
    let Some(t) = tools() else { return };
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md")).unwrap();
    let section = guide
        .split("\n## ")
        .find(|s| s.starts_with("`torch.cuda.is_available()` is False"))
        .expect("the guide's is_available section");
    let run = section
        .split('`')
        .find(|s| s.starts_with("gpudoctor check"))
        .expect("the section's first command");
    let args: Vec<&str> = run.split_whitespace().skip(1).collect();
    let row = section
        .lines()
        .find(|l| l.contains("CPU-only"))
        .expect("the CPU torch row");
    assert!(row.contains("GD041"), "{row}");
    let index = torch_index(&t);
    let sb = Sandbox::new(&index);
    let guided = |env: &Env| -> Value {
        let mut c = env.root.cmd();
        let (_, v) = json(c.env("VIRTUAL_ENV", &env.logical).args(&args));
        v
    };
    let venv = pip_venv(&t, &sb, laptop(), false);
    sb.run_ok(
        &format!(
            "{} -m pip install -q torch==2.5.1+cpu --index-url {}",
            venv.python().display(),
            index.url("whl/cpu")
        ),
        venv.root.path(),
    );
    let project = uv_project(&t, &sb, laptop(), &["torch==2.5.1"], "");
    for env in [&venv, &project] {
        let before = guided(env);
        let fix = commands(finding(&before, "GD041"));
        let fix = fix.first().expect("GD041's command");
        sb.run_ok(&index.local(&env.real(fix)), env.root.path());
        let after = guided(env);
        assert!(
            findings(&after, "GD041").is_empty(),
            "{}: GD041 after `{fix}`: {:#}",
            env.logical,
            after["findings"]
        );
        assert_eq!(
            version_of(&env.site(), "torch").as_deref(),
            Some("2.5.1+cu124"),
            "{}",
            env.logical
        );
    }
}
