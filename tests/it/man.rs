//! man/gpudoctor.1 must hold exactly what `gpudoctor man` prints, and man(1) must render it.
//! After changing the CLI, refresh it with: GPUDOCTOR_BLESS=1 cargo test --test it man::

use crate::util;

#[test]
fn committed_man_page_is_in_sync() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man/gpudoctor.1");
    let r = util::run(util::gpudoctor().arg("man"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    if std::env::var_os("GPUDOCTOR_BLESS").is_some() {
        std::fs::write(&path, &r.stdout).unwrap();
    }
    assert!(
        std::fs::read_to_string(&path).ok().as_deref() == Some(r.stdout.as_str()),
        "man/gpudoctor.1 is out of date; run GPUDOCTOR_BLESS=1 cargo test --test it man::"
    );
}

#[test]
fn man_renders_every_subcommand_and_the_configuration() {
    let Some(man) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("man"))
            .find(|f| f.is_file())
    }) else {
        assert!(
            std::env::var_os("GPUDOCTOR_REQUIRE_SHELLS").is_none(),
            "man is not installed"
        );
        crate::util::skip(format_args!(
            "man is not installed: the rendering is not tested"
        ));
        return;
    };
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man/gpudoctor.1");
    let out = std::process::Command::new(man)
        .arg("-l")
        .arg(&page)
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // groff warns about bad requests on stderr; a clean page has none.
    assert!(!stderr.contains("warning"), "{stderr}");
    // Formatting (bold by overstrike) is stripped for the comparison.
    let plain: String = {
        let mut s = String::new();
        for c in text.chars() {
            if c == '\u{8}' {
                s.pop();
            } else {
                s.push(c);
            }
        }
        s
    };
    for heading in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "OPTIONS OF gpudoctor devices",
        "OPTIONS OF gpudoctor smoke",
        "OPTIONS OF gpudoctor diff",
        "ENVIRONMENT",
        "FILES",
    ] {
        assert!(
            plain.lines().any(|l| l.trim() == heading),
            "no {heading:?} section in:\n{plain}"
        );
    }
    for text in [
        "--fail-on",
        "--matmul-size",
        "/etc/gpudoctor/config.toml",
        "GPUDOCTOR_CONFIG",
        "--wide",
    ] {
        assert!(plain.contains(text), "{text} missing");
    }
    assert!(
        !plain.contains("worker"),
        "the hidden workers are documented"
    );
    assert!(
        plain.lines().all(|l| l.chars().count() <= 80),
        "a line wider than MANWIDTH"
    );
}
