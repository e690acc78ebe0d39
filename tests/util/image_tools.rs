//! The image tools the container-image tests drive (umoci, skopeo).

use std::process::Command;

/// Whether `tool` is installed; without it the test is skipped, unless
/// GPUDOCTOR_REQUIRE_IMAGE_TOOLS is set (CI installs umoci, skopeo and buildah), then it fails.
pub fn have(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("GPUDOCTOR_REQUIRE_IMAGE_TOOLS").is_none(),
            "{tool} is not installed and GPUDOCTOR_REQUIRE_IMAGE_TOOLS is set"
        );
        super::skip(format_args!("{tool} is not installed"));
    }
    found
}

/// Runs `cmd`, failing the test with its output when it fails.
pub fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new empty image `LAYOUT:t` made by umoci and unpacked into the runtime bundle `bundle`
/// (its tree at `bundle/rootfs`, packed again by `umoci repack`); returns `LAYOUT:t`.
pub fn umoci_bundle(layout: &std::path::Path, bundle: &std::path::Path) -> String {
    let image = format!("{}:t", layout.display());
    sh(Command::new("umoci").args(["init", "--layout"]).arg(layout));
    sh(Command::new("umoci").args(["new", "--image", &image]));
    sh(Command::new("umoci")
        .args(["unpack", "--image", &image])
        .arg(bundle));
    image
}
