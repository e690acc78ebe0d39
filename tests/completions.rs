//! completions/ must hold exactly what `gpudoctor completions SHELL` prints.
//! After changing the CLI, refresh them with: GPUDOCTOR_BLESS=1 cargo test --test completions

mod util;

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
        "out of date: {stale:?}; run GPUDOCTOR_BLESS=1 cargo test --test completions"
    );
}

#[test]
fn unknown_shell_is_a_usage_error() {
    assert_eq!(
        util::run(util::gpudoctor().args(["completions", "tcsh"])).code,
        2
    );
}
