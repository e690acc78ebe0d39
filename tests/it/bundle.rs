//! `gpudoctor bundle` on a fake node with planted host names, addresses, users and secrets:
//! the archive as `tar` lists it, its MANIFEST checked, its report replayed, and not one
//! planted value in any member or member name.

use crate::util;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::util::fake_nvml::{fake_nvml_lib, FAKE_NVML_ENV};
use crate::util::gpu_node::GpuNode;
use crate::util::{gpudoctor, run, ALICE};
use sha2::{Digest, Sha256};

/// What a user must not post, planted where the probes read it.
const PLANTED: &[&str] = &[
    "gpu-secret-17",
    "corp.example",
    "10.96.0.1",
    "fd00:dead:beef::17",
    "aa:bb:cc:dd:ee:0f",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "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",
    "trainer-pod-7f9c",
    "alice",
];

fn members(archive: &std::path::Path) -> Vec<(String, u32, Vec<u8>)> {
    let f = std::fs::File::open(archive).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    tar.entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = e.path().unwrap().display().to_string();
            let mode = e.header().mode().unwrap();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (name, mode, data)
        })
        .collect()
}

#[test]
fn a_bundle_is_private_checked_replayable_and_redacted() {
    let node = GpuNode::new(2);
    node.root
        .file("etc/hostname", "gpu-secret-17.corp.example\n");
    // The kernel log: the driver's lines go in, nothing else of the log.
    node.root.file(
        "dev/kmsg",
        "6,1,0,-;Linux version 6.8.0-45-generic\n6,2,5000000,-;systemd-logind[812]: New session 4 of user alice from 10.96.0.1.\n4,3,7000000,-;NVRM: Xid (PCI:0000:18:00): 13, pid=4242, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address\n",
    );
    let nvml_cfg = node.nvml.write(&node.dir.path().join("nvml"));
    let out_dir = tempfile::tempdir().unwrap();
    let archive = out_dir.path().join("bundle.tar.gz");
    let bundle = |extra: &[&str], path: &std::path::Path| {
        let mut c = gpudoctor();
        c.arg("bundle")
            .arg("--root")
            .arg(node.root.path())
            .arg("--nvml-lib")
            .arg(fake_nvml_lib())
            .args(["--user", ALICE])
            .args(extra)
            .arg("-o")
            .arg(path)
            .env(FAKE_NVML_ENV, &nvml_cfg)
            .env("HOME", "/home/alice")
            .env("VIRTUAL_ENV", "/home/alice/venvs/train")
            .env("KUBERNETES_SERVICE_HOST", "10.96.0.1")
            .env("NODE_NAME", "gpu-secret-17")
            .env("POD_NAME", "trainer-pod-7f9c")
            .env("NCCL_SOCKET_IFNAME", "fd00:dead:beef::17")
            .env("CUDA_HOME", "/opt/cuda-aa:bb:cc:dd:ee:0f")
            .env(
                "NVCC_APPEND_FLAGS",
                "-DGH=ghp_16C7e42F292c6912E7710c838347Ae178B4a -DHF=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",
            )
            .env("HF_TOKEN", "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");
        run(&mut c)
    };
    let r = bundle(&[], &archive);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("redacted"), "{}", r.stderr);
    assert_no_planted(&r.stderr, "stderr");

    // The file and every member are the owner's only, as `tar -tzvf` shows.
    let mode = std::fs::metadata(&archive).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let listing = Command::new("tar")
        .arg("-tzvf")
        .arg(&archive)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(listing.lines().count() >= 6, "{listing}");
    assert!(
        listing.lines().all(|l| l.starts_with("-rw-------")),
        "{listing}"
    );

    let members = members(&archive);
    let names: Vec<&str> = members.iter().map(|(n, _, _)| n.as_str()).collect();
    for want in [
        "gpudoctor-bundle/MANIFEST",
        "gpudoctor-bundle/report.json",
        "gpudoctor-bundle/report.txt",
        "gpudoctor-bundle/devices.txt",
        "gpudoctor-bundle/devices-topo.txt",
        "gpudoctor-bundle/libs.json",
        "gpudoctor-bundle/kernel-log.txt",
    ] {
        assert!(names.contains(&want), "{want} missing: {names:?}");
    }
    let klog = members
        .iter()
        .find(|(n, _, _)| n.ends_with("/kernel-log.txt"))
        .map(|(_, _, d)| String::from_utf8_lossy(d).into_owned())
        .unwrap();
    assert!(
        klog.contains(
            "[7.000000 s after boot] NVRM: Xid (PCI:0000:18:00): 13, pid=4242, name=python3"
        ),
        "{klog}"
    );
    assert!(
        klog.contains("# source: /dev/kmsg, since boot, 3 records"),
        "{klog}"
    );
    assert!(!klog.contains("New session"), "{klog}");
    // Nothing planted survives, in any member or any member's name.
    for (name, _, data) in &members {
        assert_no_planted(name, name);
        assert_no_planted(&String::from_utf8_lossy(data), name);
    }
    // The MANIFEST's sizes and checksums are the members'.
    let manifest = String::from_utf8_lossy(&members[0].2).into_owned();
    assert!(manifest.contains("command: "), "{manifest}");
    assert!(manifest.contains("host value(s) as host-N"), "{manifest}");
    let mut checked = 0;
    for line in manifest.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        if let [size, sum, file] = parts[..] {
            if sum.len() != 64 {
                continue;
            }
            let (_, _, data) = members
                .iter()
                .find(|(n, _, _)| n == &format!("gpudoctor-bundle/{file}"))
                .unwrap_or_else(|| panic!("{file} is in the MANIFEST but not the archive"));
            assert_eq!(size.parse::<usize>().unwrap(), data.len(), "{file}");
            let actual: String = Sha256::digest(data)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(sum, actual, "{file}");
            checked += 1;
        }
    }
    assert_eq!(checked, members.len() - 1, "{manifest}");
    // Placeholders keep references consistent: the report names host-1 where the host was.
    let report = &members
        .iter()
        .find(|(n, _, _)| n.ends_with("report.json"))
        .unwrap()
        .2;
    let report_text = String::from_utf8_lossy(report);
    assert!(
        report_text.contains("host-1"),
        "no placeholder in the report"
    );
    assert!(
        report_text.contains("/home/user-1/venvs/train"),
        "the path keeps its shape"
    );

    // The report replays.
    let saved = out_dir.path().join("report.json");
    std::fs::write(&saved, report).unwrap();
    let replay = run(gpudoctor().args(["check", "--from"]).arg(&saved));
    assert!(matches!(replay.code, 0 | 1), "{}", replay.stderr);
    assert!(replay.stdout.starts_with("gpudoctor "), "{}", replay.stdout);

    // --no-redact keeps them, and says so.
    let raw = out_dir.path().join("raw.tar.gz");
    let r = bundle(&["--no-redact"], &raw);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("NOT redacted"), "{}", r.stderr);
    let members = self::members(&raw);
    let report = &members
        .iter()
        .find(|(n, _, _)| n.ends_with("report.json"))
        .unwrap()
        .2;
    assert!(String::from_utf8_lossy(report).contains("gpu-secret-17"));
}

fn assert_no_planted(text: &str, where_: &str) {
    for p in PLANTED {
        assert!(
            !text.contains(p),
            "{p:?} survives in {where_}:\n{}",
            excerpt(text, p)
        );
    }
}

fn excerpt(text: &str, p: &str) -> String {
    let at = text.find(p).unwrap_or(0);
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(80)
        .map_or(0, |(i, _)| i);
    text[start..].chars().take(200).collect()
}

#[test]
fn a_bundle_through_the_callers_own_link_replaces_its_target_privately() {
    // Links are followed as `--output` follows them (another user's link in a sticky
    // directory is refused, tests/it/output.rs); the target becomes the bundle, mode 0600.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("victim");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("bundle.tar.gz");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let root = util::FakeRoot::healthy(1);
    let r = run(gpudoctor()
        .arg("bundle")
        .arg("--root")
        .arg(root.path())
        .arg("-o")
        .arg(&link));
    // The caller's own link in a private directory is followed (its target replaced, 0600).
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}
