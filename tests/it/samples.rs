//! The sample outputs in README.md are what this build prints: each `<!-- sample: NAME -->`
//! block is regenerated here from the test suite's fake nodes at 80 columns and compared
//! (timings and the fake library's path masked). `UPDATE_DOCS=1 cargo test --test it samples::`
//! rewrites the blocks.

use crate::util;

use crate::util::gpu_node::GpuNode;
use crate::util::{run, FakeRoot, ALICE};

fn readme() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")
}

/// The fake libcuda's path as the README shows it: where the sample node's driver (580.95.05,
/// Debian/Ubuntu's layout) puts the file the loader maps for libcuda.so.1, as on a real node.
const SHOWN_LIB: &str = "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05";

/// The output as the README shows it: the temporary root named as in the command shown,
/// the fake libcuda's path as a real node's.
fn shown(out: &str, root: &std::path::Path) -> String {
    let lib = util::fake_cuda::fake_cuda_lib();
    out.replace(&root.display().to_string(), "/mnt/image")
        .replace(&lib.display().to_string(), SHOWN_LIB)
}

/// Figures that change from run to run (elapsed times: a number followed by the word `s`
/// or `ms`), masked for the comparison.
fn masked(text: &str) -> String {
    let words: Vec<&str> = text.split_inclusive(char::is_whitespace).collect();
    let mut out = String::new();
    for (i, word) in words.iter().enumerate() {
        let w = word.trim_end();
        let unit = words
            .get(i + 1)
            .map(|n| n.trim_end().trim_end_matches([',', '.', ';', ')']));
        if w.parse::<f64>().is_ok() && matches!(unit, Some("s" | "ms")) {
            out.push('#');
            out.push_str(&word[w.len()..]);
        } else {
            out.push_str(word);
        }
    }
    out
}

fn samples() -> Vec<(&'static str, String)> {
    // A container image: nvidia_uvm missing, nodes alice cannot open, a debug switch left set.
    let image = FakeRoot::healthy(8);
    image.modules(&["nvidia_drm", "nvidia_modeset", "nvidia"]);
    image.remove("dev/nvidia-uvm");
    for node in ["nvidiactl"]
        .into_iter()
        .map(String::from)
        .chain((0..8).map(|i| format!("nvidia{i}")))
    {
        image.chmod(&format!("dev/{node}"), 0o660);
    }
    let broken = run(image
        .cmd()
        .args(["check", "--user", ALICE])
        .env("COLUMNS", "80")
        .env("CUDA_LAUNCH_BLOCKING", "1"));
    assert_eq!(broken.code, 1, "{}", broken.stderr);

    // A healthy 8-GPU node: fake NVML and libcuda. gpudoctor prints the path the library was
    // mapped from, and the line wraps by its length: a copy at a path of fixed length
    // (/tmp/gdXXXXXX/target/debug/examples/…) makes the sample the same wherever the
    // repository and its target directory are.
    let node = GpuNode::new(8);
    let copy_dir = tempfile::Builder::new()
        .prefix("gd")
        .tempdir_in("/tmp")
        .unwrap();
    let copy = copy_dir.path().join(SHOWN_LIB);
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(util::fake_cuda::fake_cuda_lib(), &copy).unwrap();
    let healthy = run(node
        .cmd_with_cuda_lib(&copy)
        .arg("check")
        .env("COLUMNS", "80"));
    assert_eq!(healthy.code, 0, "{}", healthy.stderr);
    let healthy_out = healthy
        .stdout
        .replace(&copy.display().to_string(), SHOWN_LIB);
    // (`devices` takes no smoke-test options: the same node without the fake libcuda.)
    let nvml_only = GpuNode::nvml_only(8, util::gpu_node::hgx(8));
    let devices = run(nvml_only.cmd().arg("devices").env("COLUMNS", "80"));
    assert_eq!(devices.code, 0, "{}", devices.stderr);
    vec![
        ("broken-image", shown(&broken.stdout, image.path())),
        ("healthy-node", shown(&healthy_out, node.root.path())),
        ("devices", shown(&devices.stdout, nvml_only.root.path())),
    ]
}

/// The README's text with each sample block's body replaced by `f(name, body)`.
fn each_block(readme: &str, mut f: impl FnMut(&str, &str) -> String) -> String {
    let mut out = String::new();
    let mut rest = readme;
    while let Some(i) = rest.find("<!-- sample: ") {
        let (before, from) = rest.split_at(i);
        out.push_str(before);
        let name_end = from.find(" -->").expect("a closed sample marker");
        let name = &from["<!-- sample: ".len()..name_end];
        let open = from
            .find("```text\n")
            .expect("a text block after the marker")
            + 8;
        let close = open + from[open..].find("```\n").expect("a closed block");
        out.push_str(&from[..open]);
        out.push_str(&f(name, &from[open..close]));
        out.push_str("```\n");
        rest = &from[close + 4..];
    }
    out.push_str(rest);
    out
}

#[test]
fn readme_samples_are_what_this_build_prints() {
    let text = std::fs::read_to_string(readme()).unwrap();
    let samples = samples();
    let mut seen = Vec::new();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = each_block(&text, |name, body| {
            seen.push(name.to_string());
            samples
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| s.clone())
                .unwrap_or_else(|| body.to_string())
        });
        std::fs::write(readme(), updated).unwrap();
    } else {
        each_block(&text, |name, body| {
            seen.push(name.to_string());
            let (_, want) = samples
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("README names an unknown sample {name:?}"));
            assert_eq!(
                masked(body),
                masked(want),
                "README sample {name:?} is not what this build prints; \
                 regenerate with: UPDATE_DOCS=1 cargo test --test it samples::"
            );
            body.to_string()
        });
    }
    for (name, _) in &samples {
        assert!(
            seen.iter().any(|s| s == name),
            "README lacks sample {name:?}"
        );
    }
}

#[test]
fn masking_hides_timings_only() {
    assert_eq!(
        masked("took 3.11 s · 2.5 ms, 8 of 8 GPU(s)"),
        "took # s · # ms, 8 of 8 GPU(s)"
    );
    // A figure that merely ends like a timing is left alone.
    assert_eq!(masked("2.98 s, 8 nodes"), "# s, 8 nodes");
}
