//! completions/ must hold exactly what `gpudoctor completions SHELL` prints.
//! After changing the CLI, refresh them with: GPUDOCTOR_BLESS=1 cargo test --test it completions::

use crate::util;

const SHELLS: &[(&str, &str)] = &[
    ("bash", "gpudoctor.bash"),
    ("zsh", "_gpudoctor"),
    ("fish", "gpudoctor.fish"),
    ("powershell", "_gpudoctor.ps1"),
    ("elvish", "gpudoctor.elv"),
];

#[test]
fn committed_completions_are_in_sync() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    let bless = std::env::var_os("GPUDOCTOR_BLESS").is_some();
    let mut stale = Vec::new();
    for (shell, file) in SHELLS {
        let r = util::run(util::gpudoctor().args(["completions", shell]));
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains("gpudoctor"), "{shell}");
        assert!(r.stdout.contains("fail-on"), "{shell} completes options");
        let path = dir.join(file);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &r.stdout).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(r.stdout.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "out of date: {stale:?}; run GPUDOCTOR_BLESS=1 cargo test --test it completions::"
    );
}

#[test]
fn unknown_shell_is_a_usage_error() {
    assert_eq!(
        util::run(util::gpudoctor().args(["completions", "tcsh"])).code,
        2
    );
}

/// A shell the tests drive, or None when it is not installed (CI installs bash, zsh and
/// fish and sets GPUDOCTOR_REQUIRE_SHELLS, so there a missing shell fails).
fn shell(name: &str) -> Option<std::path::PathBuf> {
    let found = which_shell(name);
    if found.is_none() {
        assert!(
            std::env::var_os("GPUDOCTOR_REQUIRE_SHELLS").is_none(),
            "{name} is not installed"
        );
        crate::util::skip(format_args!("{name} is not installed"));
    }
    found
}

fn which_shell(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

fn script(shell: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let r = util::run(util::gpudoctor().args(["completions", shell]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let file = dir.join(match shell {
        "zsh" => "_gpudoctor",
        s => s,
    });
    std::fs::write(&file, r.stdout).unwrap();
    file
}

/// Candidates bash offers for `words` (the last one being completed), through the
/// generated function as bash's programmable completion calls it. `compopt` is recorded.
fn bash_complete(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        r#"source '{}'
compopt() {{ echo "compopt $*"; }}
COMP_WORDS=({})
COMP_CWORD=$((${{#COMP_WORDS[@]}}-1))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
_gpudoctor gpudoctor "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        script.display(),
        quoted.join(" ")
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_subcommands_codes_probes_shells_and_directories() {
    let Some(_) = shell("bash") else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = script("bash", dir.path());
    let top = bash_complete(&script, &["gpudoctor", ""]);
    assert!(top.iter().any(|w| w == "check") && top.iter().any(|w| w == "explain"));
    assert!(
        !top.iter().any(|w| w.contains("worker")),
        "hidden workers offered: {top:?}"
    );
    let codes = bash_complete(&script, &["gpudoctor", "explain", "GD00"]);
    assert!(codes.iter().any(|w| w == "GD006"), "{codes:?}");
    assert!(codes.iter().all(|w| w.starts_with("GD00")), "{codes:?}");
    let probes = bash_complete(&script, &["gpudoctor", "check", "--only", "dev"]);
    assert_eq!(probes, ["device_nodes"]);
    let skip = bash_complete(&script, &["gpudoctor", "check", "--skip", "GD03"]);
    assert!(skip.iter().any(|w| w == "GD038"), "{skip:?}");
    let shells = bash_complete(&script, &["gpudoctor", "completions", ""]);
    for s in ["bash", "zsh", "fish"] {
        assert!(shells.iter().any(|w| w == s), "{shells:?}");
    }
    // Directories come from bash itself (`compopt -o plusdirs`).
    let root = bash_complete(&script, &["gpudoctor", "check", "--root", ""]);
    assert!(root.iter().any(|w| w == "compopt -o plusdirs"), "{root:?}");
    // Options of other subcommands are not offered.
    let schema = bash_complete(&script, &["gpudoctor", "schema", "--"]);
    assert!(!schema.iter().any(|w| w == "--matmul-size"), "{schema:?}");
}

#[test]
fn fish_completes_subcommands_codes_probes_shells_and_directories() {
    let Some(fish) = shell("fish") else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = script("fish", dir.path());
    std::fs::create_dir(dir.path().join("image-root")).unwrap();
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    let complete = |line: &str| -> Vec<String> {
        let out = std::process::Command::new(&fish)
            .args([
                "--no-config",
                "-c",
                &format!("source '{}'; complete -C '{line}'", script.display()),
            ])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    let top = complete("gpudoctor ");
    assert!(top.iter().any(|l| l.starts_with("check\t")), "{top:?}");
    assert!(!top.iter().any(|l| l.contains("worker")), "{top:?}");
    let codes = complete("gpudoctor explain GD00");
    assert!(
        codes
            .iter()
            .any(|l| l == "GD006\tnvidia_uvm is not loaded or /dev/nvidia-uvm is missing"),
        "{codes:?}"
    );
    let probes = complete("gpudoctor check --only dev");
    assert!(
        probes.iter().any(|l| l.starts_with("device_nodes")),
        "{probes:?}"
    );
    let shells = complete("gpudoctor completions ");
    for s in ["bash", "zsh", "fish"] {
        assert!(shells.iter().any(|l| l == s), "{shells:?}");
    }
    let root = complete("gpudoctor check --root ");
    assert!(
        root.iter().any(|l| l.starts_with("image-root/")),
        "{root:?}"
    );
    assert!(!root.iter().any(|l| l.starts_with("a-file")), "{root:?}");
}

#[test]
fn zsh_completes_subcommands_codes_shells_and_directories() {
    let Some(zsh) = shell("zsh") else { return };
    let dir = tempfile::tempdir().unwrap();
    script("zsh", dir.path());
    std::fs::create_dir(dir.path().join("image-root")).unwrap();
    let capture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/util/zsh_complete.zsh");
    let complete = |line: &str| -> Vec<String> {
        let out = std::process::Command::new(&zsh)
            .arg("-f")
            .arg(&capture)
            .arg(dir.path())
            .arg(line)
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    let top = complete("gpudoctor ");
    assert!(top.iter().any(|l| l.starts_with("check -- ")), "{top:?}");
    assert!(!top.iter().any(|l| l.contains("worker")), "{top:?}");
    let codes = complete("gpudoctor explain GD00");
    assert!(
        codes
            .iter()
            .any(|l| l == "GD006 -- nvidia_uvm is not loaded or /dev/nvidia-uvm is missing"),
        "{codes:?}"
    );
    let shells = complete("gpudoctor completions ");
    for s in ["bash", "zsh", "fish"] {
        assert!(shells.iter().any(|l| l == s), "{shells:?}");
    }
    let root = complete("gpudoctor check --root ");
    assert!(root.iter().any(|l| l == "image-root"), "{root:?}");
}

#[test]
fn no_script_names_the_hidden_workers() {
    for (shell, _) in SHELLS {
        let r = util::run(util::gpudoctor().args(["completions", shell]));
        assert!(
            !r.stdout.contains("__nvml-worker") && !r.stdout.contains("__smoke-worker"),
            "{shell}"
        );
    }
}
