use std::fs;
use std::path::Path;

use super::apply::{Applied, EntryError, Tree};
use super::*;

#[test]
fn host_architectures_map_to_oci_platforms() {
    assert!(platform_runs_on("x86_64", "linux", "amd64", None));
    assert!(platform_runs_on("aarch64", "linux", "arm64", None));
    assert!(platform_runs_on("aarch64", "linux", "arm64", Some("v8")));
    assert!(!platform_runs_on("aarch64", "linux", "arm", Some("v7")));
    assert!(platform_runs_on("armv7l", "linux", "arm", Some("v7")));
    assert!(!platform_runs_on("armv7l", "linux", "arm", Some("v8")));
    assert!(platform_runs_on("i686", "linux", "386", None));
    assert!(platform_runs_on("ppc64le", "linux", "ppc64le", None));
    assert!(platform_runs_on("s390x", "linux", "s390x", None));
    assert!(platform_runs_on("riscv64", "linux", "riscv64", None));
    assert!(!platform_runs_on("x86_64", "windows", "amd64", None));
    assert!(!platform_runs_on("x86_64", "linux", "arm64", None));
    assert_eq!(
        platform_string("linux", "arm64", Some("v8")),
        "linux/arm64/v8"
    );
    assert_eq!(platform_string("linux", "amd64", None), "linux/amd64");
}

#[test]
fn references_match_by_name_normal_form_or_a_unique_tag() {
    let names = vec![
        vec!["docker.io/nvidia/cuda:12.4-devel".to_string()],
        vec!["docker.io/library/ubuntu:22.04".to_string()],
        vec!["example/app:22.04".to_string()],
        vec!["busybox".to_string()],
    ];
    let pick = |r: &str| select_by_reference("img", r, &names);
    assert_eq!(pick("nvidia/cuda:12.4-devel").unwrap(), [0]);
    assert_eq!(pick("ubuntu:22.04").unwrap(), [1]);
    assert_eq!(pick("library/ubuntu:22.04").unwrap(), [1]);
    assert_eq!(pick("12.4-devel").unwrap(), [0], "a tag alone, when unique");
    assert_eq!(pick("busybox:latest").unwrap(), [3]);
    let e = pick("22.04").unwrap_err().to_string();
    assert!(
        e.contains("several images")
            && e.contains("ubuntu:22.04")
            && e.contains("example/app:22.04"),
        "{e}"
    );
    let e = pick("nvidia/cuda:11.8").unwrap_err().to_string();
    assert!(
        e.contains("no image named \"nvidia/cuda:11.8\"") && e.contains("busybox"),
        "{e}"
    );
}

#[test]
fn compression_is_told_by_magic_bytes() {
    assert_eq!(compression(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
    assert_eq!(compression(&[0x28, 0xb5, 0x2f, 0xfd]), Compression::Zstd);
    assert_eq!(compression(b"\xfd7zXZ\0"), Compression::Xz);
    assert_eq!(compression(b"BZh91"), Compression::Bzip2);
    assert_eq!(compression(b"etc/\0\0"), Compression::None);
    assert_eq!(compression(b""), Compression::None);
}

#[test]
fn digests_must_be_sha256_hex() {
    let hex = "a".repeat(64);
    assert_eq!(sha256_hex(&format!("sha256:{hex}")), Some(hex.as_str()));
    assert_eq!(sha256_hex(&format!("sha512:{hex}")), None);
    assert_eq!(sha256_hex("sha256:../../etc/passwd"), None);
    assert_eq!(sha256_hex(&format!("sha256:{}", "A".repeat(64))), None);
}

/// A tar stream from (name, kind, data) triples.
fn tar_of(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, kind, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_entry_type(*kind);
        h.set_mode(0o644);
        // A symlink's data is its target.
        let data: &[u8] = if *kind == S {
            h.as_old_mut().linkname[..data.len()].copy_from_slice(data);
            b""
        } else {
            data
        };
        h.set_size(data.len() as u64);
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    b.into_inner().unwrap()
}

fn apply_all(tree: &mut Tree<'_>, layer: &[u8]) -> Vec<String> {
    tree.next_layer();
    let mut skipped = Vec::new();
    let mut ar = tar::Archive::new(layer);
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().display().to_string();
        match tree.apply(&mut e, u64::MAX) {
            Ok(Applied::Written { .. } | Applied::Nothing) => {}
            Err(EntryError::Skip(why)) => skipped.push(format!("{name}: {why}")),
            Err(other) => panic!("{name}: {other:?}"),
        }
    }
    skipped
}

fn listing(root: &Path, dir: &str) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(root.join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

use tar::EntryType::{Directory as D, Regular as F, Symlink as S};

#[test]
fn whiteouts_and_opaque_directories_stack_as_overlayfs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut tree = Tree::new(root);
    apply_all(
        &mut tree,
        &tar_of(&[
            ("opt/", D, b""),
            ("opt/a", F, b"1"),
            ("opt/sub/", D, b""),
            ("opt/sub/deep", F, b"1"),
            ("keep/", D, b""),
            ("keep/x", F, b"1"),
            ("gone", F, b"1"),
            ("dir-then-file/", D, b""),
            ("dir-then-file/x", F, b"1"),
        ]),
    );
    // Layer 2: its own entries come before and after the opaque marker; both stay.
    apply_all(
        &mut tree,
        &tar_of(&[
            ("opt/b", F, b"2"),
            ("opt/sub/new", F, b"2"),
            ("opt/.wh..wh..opq", F, b""),
            ("opt/c", F, b"2"),
            (".wh.gone", F, b""),
            (".wh.never-there", F, b""),
            ("keep/", D, b""),
            ("keep/y", F, b"2"),
            ("dir-then-file", F, b"now a file"),
            ("fresh", F, b"2"),
            (".wh.fresh", F, b""),
        ]),
    );
    assert_eq!(listing(root, "opt"), ["b", "c", "sub"]);
    assert_eq!(
        listing(root, "opt/sub"),
        ["new"],
        "the lower opt/sub/deep is hidden too"
    );
    assert_eq!(
        listing(root, "keep"),
        ["x", "y"],
        "a directory entry keeps what is there"
    );
    assert!(!root.join("gone").exists());
    assert_eq!(
        fs::read_to_string(root.join("dir-then-file")).unwrap(),
        "now a file"
    );
    assert!(
        root.join("fresh").exists(),
        "a whiteout hides lower layers only"
    );
    assert!(!listing(root, "").iter().any(|n| n.starts_with(".wh.")));
    // Layer 3: a symlink replaces a directory, a directory replaces a symlink.
    apply_all(
        &mut tree,
        &tar_of(&[("keep", S, b"opt"), ("gone", S, b"/etc")]),
    );
    assert_eq!(fs::read_link(root.join("keep")).unwrap(), Path::new("opt"));
    apply_all(
        &mut tree,
        &tar_of(&[("keep/", D, b""), ("keep/z", F, b"4")]),
    );
    assert_eq!(
        listing(root, "keep"),
        ["z"],
        "a directory replaces the symlink"
    );
    assert_eq!(
        listing(root, "opt"),
        ["b", "c", "sub"],
        "not written through it"
    );
}

#[test]
fn merged_usr_links_route_later_files_into_usr() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut tree = Tree::new(root);
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    b.append_link(&mut h, "lib", "usr/lib").unwrap();
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Directory);
    h.set_size(0);
    b.append_data(&mut h, "usr/lib/", &b""[..]).unwrap();
    apply_all(&mut tree, &b.into_inner().unwrap());
    apply_all(
        &mut tree,
        &tar_of(&[("lib/x86_64-linux-gnu/libcuda.so.1", F, b"cuda")]),
    );
    assert_eq!(
        fs::read_to_string(root.join("usr/lib/x86_64-linux-gnu/libcuda.so.1")).unwrap(),
        "cuda"
    );
    assert_eq!(
        fs::read_link(root.join("lib")).unwrap(),
        Path::new("usr/lib")
    );
}

#[test]
fn a_file_under_a_file_and_device_nodes_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut tree = Tree::new(dir.path());
    let skipped = apply_all(
        &mut tree,
        &tar_of(&[
            ("f", F, b"x"),
            ("f/under", F, b"y"),
            ("dev/nvidiactl", tar::EntryType::Char, b""),
            ("dev/sda", tar::EntryType::Block, b""),
            ("pipe", tar::EntryType::Fifo, b""),
        ]),
    );
    assert_eq!(
        skipped,
        [
            "f/under: its parent /f is not a directory",
            "dev/nvidiactl: character device not created",
            "dev/sda: block device not created",
            "pipe: fifo not created",
        ]
    );
    assert_eq!(fs::read_to_string(dir.path().join("f")).unwrap(), "x");
}

#[test]
fn non_utf8_names_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut tree = Tree::new(dir.path());
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.as_old_mut().name[..4].copy_from_slice(b"a\xffb\xfe");
    h.set_entry_type(F);
    h.set_size(1);
    h.set_mode(0o644);
    h.set_cksum();
    b.append(&h, &b"z"[..]).unwrap();
    apply_all(&mut tree, &b.into_inner().unwrap());
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::OsStr::from_bytes(b"a\xffb\xfe");
    assert_eq!(fs::read(dir.path().join(name)).unwrap(), b"z");
}
