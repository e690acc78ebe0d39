//! `gpudoctor::image::unpack`: images built by real tools (umoci, skopeo) and read in every
//! format, hand-assembled `docker save` archives and multi-platform indexes, and hostile
//! archives that must never write outside the private directory.

use crate::util;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::image_tools::{have, sh, umoci_bundle};
use gpudoctor::image::{unpack, ImageError, ImageFormat, Limits, Unpacked};
use sha2::{Digest, Sha256};

// ------------------------------------------------------------------------------------------------
// Builders.

/// One tar entry; `Raw*` entries take their name as bytes, unchecked (hostile archives).
enum Ent<'a> {
    File(&'a str, &'a [u8]),
    Mode(&'a str, &'a [u8], u32),
    Dir(&'a str),
    Sym(&'a str, &'a str),
    Hard(&'a str, &'a str),
    Fifo(&'a str),
    Char(&'a str),
}

fn header(name: &str, kind: tar::EntryType, size: u64, mode: u32) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    let bytes = name.as_bytes();
    assert!(bytes.len() < 100, "test names fit the old header");
    h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(mode);
    h.set_mtime(0);
    h
}

fn set_link(h: &mut tar::Header, target: &str) {
    let bytes = target.as_bytes();
    assert!(bytes.len() < 100);
    h.as_old_mut().linkname[..bytes.len()].copy_from_slice(bytes);
}

fn layer_tar(entries: &[Ent]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let (mut h, data): (tar::Header, &[u8]) = match e {
            Ent::File(n, d) => (header(n, tar::EntryType::Regular, d.len() as u64, 0o644), d),
            Ent::Mode(n, d, m) => (header(n, tar::EntryType::Regular, d.len() as u64, *m), d),
            Ent::Dir(n) => (header(n, tar::EntryType::Directory, 0, 0o755), b""),
            Ent::Sym(n, t) => {
                let mut h = header(n, tar::EntryType::Symlink, 0, 0o777);
                set_link(&mut h, t);
                (h, b"")
            }
            Ent::Hard(n, t) => {
                let mut h = header(n, tar::EntryType::Link, 0, 0o644);
                set_link(&mut h, t);
                (h, b"")
            }
            Ent::Fifo(n) => (header(n, tar::EntryType::Fifo, 0, 0o644), b""),
            Ent::Char(n) => (header(n, tar::EntryType::Char, 0, 0o644), b""),
        };
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    b.into_inner().unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn sha(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const GZ_LAYER: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const INDEX: &str = "application/vnd.oci.image.index.v1+json";

/// An OCI image layout written by hand.
struct Layout {
    dir: PathBuf,
}

impl Layout {
    fn new(dir: &Path) -> Layout {
        fs::create_dir_all(dir.join("blobs/sha256")).unwrap();
        fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        Layout {
            dir: dir.to_path_buf(),
        }
    }

    /// Stores a blob; its descriptor (`mediaType`, `digest`, `size`).
    fn blob(&self, media_type: &str, data: &[u8]) -> serde_json::Value {
        let hex = sha(data);
        fs::write(self.dir.join("blobs/sha256").join(&hex), data).unwrap();
        serde_json::json!({"mediaType": media_type, "digest": format!("sha256:{hex}"), "size": data.len()})
    }

    /// A config for `arch` and an image manifest with these (uncompressed) layers, gzipped.
    fn image(&self, arch: &str, env: &[&str], layers: &[Vec<u8>]) -> serde_json::Value {
        let config = serde_json::json!({
            "architecture": arch, "os": "linux",
            "config": {"Env": env, "Cmd": ["/bin/sh"]},
            "rootfs": {"type": "layers", "diff_ids": layers.iter().map(|l| format!("sha256:{}", sha(l))).collect::<Vec<_>>()},
        });
        let config = self.blob(
            "application/vnd.oci.image.config.v1+json",
            config.to_string().as_bytes(),
        );
        let layers: Vec<_> = layers
            .iter()
            .map(|l| self.blob(GZ_LAYER, &gzip(l)))
            .collect();
        let manifest = serde_json::json!({"schemaVersion": 2, "mediaType": MANIFEST, "config": config, "layers": layers});
        self.blob(MANIFEST, manifest.to_string().as_bytes())
    }

    /// A config for amd64 Linux with nothing else in it.
    fn amd64_config(&self) -> serde_json::Value {
        self.blob(
            "application/vnd.oci.image.config.v1+json",
            br#"{"architecture":"amd64","os":"linux"}"#,
        )
    }

    /// A manifest of `config` and `layers` (descriptors), the index's only entry.
    fn single_image(&self, config: &serde_json::Value, layers: Vec<serde_json::Value>) {
        let m = self.blob(
            MANIFEST,
            serde_json::json!({"schemaVersion": 2, "config": config, "layers": layers})
                .to_string()
                .as_bytes(),
        );
        self.index(vec![m]);
    }

    fn index(&self, manifests: Vec<serde_json::Value>) {
        let index =
            serde_json::json!({"schemaVersion": 2, "mediaType": INDEX, "manifests": manifests});
        fs::write(self.dir.join("index.json"), index.to_string()).unwrap();
    }
}

fn tagged(mut desc: serde_json::Value, name: &str) -> serde_json::Value {
    desc["annotations"] = serde_json::json!({"org.opencontainers.image.ref.name": name});
    desc
}

fn with_platform(
    mut desc: serde_json::Value,
    arch: &str,
    variant: Option<&str>,
) -> serde_json::Value {
    desc["platform"] = serde_json::json!({"os": "linux", "architecture": arch});
    if let Some(v) = variant {
        desc["platform"]["variant"] = v.into();
    }
    desc
}

/// A one-layer OCI layout with these entries.
fn one_layer_image(dir: &Path, entries: &[Ent]) -> PathBuf {
    let l = Layout::new(dir);
    let m = l.image("amd64", &[], &[layer_tar(entries)]);
    l.index(vec![tagged(m, "t")]);
    dir.to_path_buf()
}

/// Appends a plain file (mode 0644) to an outer archive.
fn append_file(b: &mut tar::Builder<fs::File>, name: &str, data: &[u8]) {
    let mut h = tar::Header::new_ustar();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    b.append_data(&mut h, name, data).unwrap();
}

/// Tars a directory's contents (an OCI archive from a layout).
fn tar_dir(dir: &Path, out: &Path) {
    let mut b = tar::Builder::new(fs::File::create(out).unwrap());
    b.follow_symlinks(false);
    b.append_dir_all(".", dir).unwrap();
    b.finish().unwrap();
}

/// The files under `root`: path → "file:<contents>", "link:<target>" or "dir".
fn tree(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                out.insert(
                    rel,
                    format!("link:{}", fs::read_link(&p).unwrap().display()),
                );
            } else if t.is_dir() {
                out.insert(rel, "dir".into());
                walk(root, &p, out);
            } else {
                out.insert(
                    rel,
                    format!("file:{}", String::from_utf8_lossy(&fs::read(&p).unwrap())),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn ok(path: &Path) -> Unpacked {
    unpack(path, None, "x86_64", &Limits::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn err(path: &Path, limits: &Limits) -> String {
    match unpack(path, None, "x86_64", limits) {
        Ok(u) => panic!("{} unpacked: {:?}", path.display(), tree(u.root())),
        Err(e) => e.to_string(),
    }
}

/// A directory outside every image, whose contents must never change.
struct Canary {
    dir: tempfile::TempDir,
}

impl Canary {
    fn new() -> Canary {
        let dir = tempfile::Builder::new()
            .prefix("canary-")
            .tempdir()
            .unwrap();
        fs::write(dir.path().join("keep"), "untouched").unwrap();
        Canary { dir }
    }
    fn path(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }
    fn check(&self) {
        assert_eq!(
            tree(self.dir.path()),
            BTreeMap::from([("keep".to_string(), "file:untouched".to_string())]),
            "the directory outside the image changed"
        );
    }
}

// ------------------------------------------------------------------------------------------------
// Real tools.

#[test]
fn an_umoci_image_reads_the_same_as_a_layout_an_oci_archive_and_a_docker_archive() {
    if !have("umoci") || !have("skopeo") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let layout = w.join("L");
    let bundle = w.join("B");
    let rootfs = bundle.join("rootfs");
    let image = umoci_bundle(&layout, &bundle);
    // Layer 1: a merged-usr tree, a library with its soname link, a hard link, a directory
    // that layer 2 replaces, a file that layer 2 deletes.
    fs::create_dir_all(rootfs.join("usr/lib/x86_64-linux-gnu")).unwrap();
    fs::create_dir_all(rootfs.join("usr/local/cuda-12.4/bin")).unwrap();
    fs::create_dir_all(rootfs.join("etc")).unwrap();
    fs::create_dir_all(rootfs.join("opt/old")).unwrap();
    std::os::unix::fs::symlink("usr/lib", rootfs.join("lib")).unwrap();
    fs::write(
        rootfs.join("usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127"),
        "cudart",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "libcudart.so.12.4.127",
        rootfs.join("usr/lib/x86_64-linux-gnu/libcudart.so.12"),
    )
    .unwrap();
    std::os::unix::fs::symlink("cuda-12.4", rootfs.join("usr/local/cuda")).unwrap();
    fs::write(rootfs.join("usr/local/cuda-12.4/bin/nvcc"), "nvcc").unwrap();
    fs::set_permissions(
        rootfs.join("usr/local/cuda-12.4/bin/nvcc"),
        fs::Permissions::from_mode(0o4755),
    )
    .unwrap();
    fs::write(
        rootfs.join("etc/os-release"),
        "ID=ubuntu\nVERSION_ID=\"22.04\"\n",
    )
    .unwrap();
    fs::write(rootfs.join("etc/doomed"), "gone in layer 2").unwrap();
    fs::hard_link(
        rootfs.join("etc/os-release"),
        rootfs.join("etc/os-release.hard"),
    )
    .unwrap();
    fs::write(rootfs.join("opt/old/a"), "lower").unwrap();
    sh(Command::new("umoci")
        .args(["repack", "--image", &image])
        .arg(&bundle));
    // Layer 2: delete a file (a whiteout), replace a directory by a file and add a file.
    fs::remove_dir_all(&bundle).unwrap();
    sh(Command::new("umoci")
        .args(["unpack", "--image", &image])
        .arg(&bundle));
    fs::remove_file(rootfs.join("etc/doomed")).unwrap();
    fs::remove_dir_all(rootfs.join("opt/old")).unwrap();
    fs::write(rootfs.join("opt/old"), "now a file").unwrap();
    fs::write(
        rootfs.join("usr/lib/x86_64-linux-gnu/libcudnn.so.9"),
        "cudnn",
    )
    .unwrap();
    sh(Command::new("umoci")
        .args(["repack", "--image", &image])
        .arg(&bundle));
    sh(Command::new("umoci").args([
        "config",
        "--image",
        &image,
        "--config.env",
        "CUDA_VERSION=12.4.1",
        "--config.env",
        "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471",
        "--config.user",
        "1000",
        "--config.workingdir",
        "/work",
        "--config.label",
        "com.nvidia.cudnn.version=9.1.0",
        "--config.entrypoint",
        "/opt/nvidia/entrypoint.sh",
        "--config.cmd",
        "python",
    ]));
    let oci_archive = w.join("a.tar");
    let docker_archive = w.join("d.tar");
    sh(Command::new("skopeo")
        .args(["copy", "--quiet"])
        .arg(format!("oci:{image}"))
        .arg(format!("oci-archive:{}:t", oci_archive.display())));
    sh(Command::new("skopeo")
        .args(["copy", "--quiet"])
        .arg(format!("oci:{image}"))
        .arg(format!(
            "docker-archive:{}:example/cuda:t",
            docker_archive.display()
        )));

    let mut seen = Vec::new();
    for (path, format) in [
        (&layout, ImageFormat::OciLayout),
        (&oci_archive, ImageFormat::OciArchive),
        (&docker_archive, ImageFormat::DockerArchive),
    ] {
        let u = ok(path);
        let i = &u.info;
        assert_eq!(i.format, format, "{}", path.display());
        let t = tree(u.root());
        let f = |p: &str| {
            t.get(p)
                .cloned()
                .unwrap_or_else(|| format!("absent: {t:#?}"))
        };
        assert_eq!(f("lib"), "link:usr/lib");
        assert_eq!(
            f("usr/lib/x86_64-linux-gnu/libcudart.so.12"),
            "link:libcudart.so.12.4.127"
        );
        assert_eq!(
            f("usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127"),
            "file:cudart"
        );
        assert_eq!(f("usr/lib/x86_64-linux-gnu/libcudnn.so.9"), "file:cudnn");
        assert_eq!(f("usr/local/cuda"), "link:cuda-12.4");
        assert_eq!(
            f("etc/os-release.hard"),
            "file:ID=ubuntu\nVERSION_ID=\"22.04\"\n"
        );
        assert_eq!(f("opt/old"), "file:now a file");
        assert!(
            !t.contains_key("etc/doomed"),
            "the deleted file is back: {t:#?}"
        );
        assert!(
            !t.keys().any(|k| k.contains(".wh.")),
            "a whiteout was written: {t:#?}"
        );
        let nvcc = fs::metadata(u.root().join("usr/local/cuda-12.4/bin/nvcc")).unwrap();
        assert_eq!(
            nvcc.permissions().mode() & 0o7777,
            0o755,
            "setuid dropped, x kept"
        );
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            fs::metadata(u.root().join("etc/os-release")).unwrap().ino(),
            fs::metadata(u.root().join("etc/os-release.hard"))
                .unwrap()
                .ino(),
            "a hard link stays one"
        );

        assert!(
            i.env.contains(&"CUDA_VERSION=12.4.1".to_string()),
            "{:?}",
            i.env
        );
        assert!(i.env.contains(
            &"NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471".to_string()
        ));
        assert_eq!(i.user.as_deref(), Some("1000"));
        assert_eq!(i.working_dir.as_deref(), Some("/work"));
        assert_eq!(i.entrypoint, ["/opt/nvidia/entrypoint.sh"]);
        assert_eq!(i.cmd, ["python"]);
        assert_eq!(
            i.labels.get("com.nvidia.cudnn.version").map(String::as_str),
            Some("9.1.0")
        );
        assert_eq!(i.layers.len(), 2);
        assert!(i
            .layers
            .iter()
            .all(|l| l.entries > 0 && l.digest.starts_with("sha256:")));
        assert_eq!(
            i.unpacked_bytes,
            i.layers.iter().map(|l| l.unpacked_bytes).sum::<u64>()
        );
        assert!(i.skipped.is_empty(), "{:?}", i.skipped);
        assert_eq!(i.architecture, "amd64");
        assert!(i.matches_host);
        match format {
            ImageFormat::DockerArchive => {
                assert_eq!(i.reference.as_deref(), Some("docker.io/example/cuda:t"));
                assert_eq!(i.manifest_digest, None);
            }
            _ => {
                assert_eq!(i.reference.as_deref(), Some("t"));
                assert!(i
                    .manifest_digest
                    .as_deref()
                    .is_some_and(|d| d.starts_with("sha256:")));
            }
        }
        seen.push((t, i.config_digest.clone(), i.env.clone()));
        let root = u.root().to_path_buf();
        drop(u);
        assert!(!root.exists(), "the directory outlives the Unpacked");
    }
    assert_eq!(seen[0], seen[1], "layout and OCI archive differ");
    assert_eq!(
        seen[0].0, seen[2].0,
        "layout and docker archive trees differ"
    );
    assert_eq!(seen[0].2, seen[2].2);

    // A reference picks by tag alone or by the full name; an unknown one lists what is there.
    let by_tag = unpack(&docker_archive, Some("t"), "x86_64", &Limits::default()).unwrap();
    assert_eq!(
        by_tag.info.reference.as_deref(),
        Some("docker.io/example/cuda:t")
    );
    assert!(unpack(
        &docker_archive,
        Some("example/cuda:t"),
        "x86_64",
        &Limits::default()
    )
    .is_ok());
    let e = unpack(&oci_archive, Some("nope"), "x86_64", &Limits::default()).unwrap_err();
    assert!(
        e.to_string().contains("no image named \"nope\"") && e.to_string().contains(": t"),
        "{e}"
    );
}

// ------------------------------------------------------------------------------------------------
// Hand-assembled formats.

/// A pre-25 `docker save`: `<id>/layer.tar` uncompressed, `<hex>.json` config; gzipped too.
#[test]
fn an_old_docker_save_archive_and_its_gzip_are_read() {
    let work = tempfile::tempdir().unwrap();
    let l1 = layer_tar(&[
        Ent::Dir("etc/"),
        Ent::File("etc/a", b"one"),
        Ent::File("etc/b", b"two"),
        Ent::Dir("var/"),
        Ent::File("var/x", b"lower"),
    ]);
    let l2 = layer_tar(&[
        Ent::File("etc/.wh.a", b""),
        Ent::Dir("var/"),
        Ent::File("var/.wh..wh..opq", b""),
        Ent::File("var/y", b"upper"),
        Ent::Fifo("dev-fifo"),
        Ent::Char("dev/nvidia0"),
    ]);
    let config = serde_json::json!({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/local/nvidia/lib64"], "User": "", "Entrypoint": null, "Labels": null},
        "rootfs": {"type": "layers", "diff_ids": [format!("sha256:{}", sha(&l1)), format!("sha256:{}", sha(&l2))]},
    })
    .to_string();
    let cfg_name = format!("{}.json", sha(config.as_bytes()));
    let manifest = serde_json::json!([{"Config": cfg_name, "RepoTags": ["example/old:1"], "Layers": ["aaa/layer.tar", "bbb/layer.tar"]}]).to_string();
    let archive = work.path().join("old.tar");
    {
        let mut b = tar::Builder::new(fs::File::create(&archive).unwrap());
        let mut add = |name: &str, data: &[u8]| append_file(&mut b, name, data);
        add("aaa/layer.tar", &l1);
        add("ccc/layer.tar", &l2);
        add(&cfg_name, config.as_bytes());
        add("manifest.json", manifest.as_bytes());
        // A repeated layer is a symlink to the first copy, as docker writes it.
        let mut h = tar::Header::new_ustar();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        b.append_link(&mut h, "bbb/layer.tar", "../ccc/layer.tar")
            .unwrap();
        b.finish().unwrap();
    }
    let gz = work.path().join("old.tar.gz");
    fs::write(&gz, gzip(&fs::read(&archive).unwrap())).unwrap();
    for path in [&archive, &gz] {
        let u = ok(path);
        let t = tree(u.root());
        assert_eq!(t.get("etc/b").map(String::as_str), Some("file:two"));
        assert!(!t.contains_key("etc/a"), "whiteout ignored: {t:?}");
        assert!(
            !t.contains_key("var/x"),
            "opaque directory kept the lower file: {t:?}"
        );
        assert_eq!(t.get("var/y").map(String::as_str), Some("file:upper"));
        assert!(!t.contains_key("dev-fifo") && !t.contains_key("dev/nvidia0"));
        let i = &u.info;
        assert_eq!(i.format, ImageFormat::DockerArchive);
        assert_eq!(i.reference.as_deref(), Some("example/old:1"));
        assert_eq!(
            i.env,
            ["PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/local/nvidia/lib64"]
        );
        assert_eq!(i.user, None);
        assert!(i.entrypoint.is_empty() && i.labels.is_empty());
        assert_eq!(
            i.config_digest,
            format!("sha256:{}", sha(config.as_bytes()))
        );
        assert_eq!(i.platforms, ["linux/amd64"]);
        assert_eq!(
            i.layers[0].media_type,
            "application/vnd.docker.image.rootfs.diff.tar"
        );
        let reasons: Vec<_> = i
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.reason.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                ("dev-fifo", "fifo not created"),
                ("dev/nvidia0", "character device not created")
            ]
        );
        assert_eq!(i.skipped[0].layer, format!("sha256:{}", sha(&l2)));
    }

    // A layer whose bytes are not what the config's diff ID says.
    let bad = work.path().join("bad.tar");
    {
        let mut b = tar::Builder::new(fs::File::create(&bad).unwrap());
        let mut add = |name: &str, data: &[u8]| append_file(&mut b, name, data);
        add("aaa/layer.tar", &l2);
        add("bbb/layer.tar", &l2);
        add(&cfg_name, config.as_bytes());
        add("manifest.json", manifest.as_bytes());
        b.finish().unwrap();
    }
    let e = err(&bad, &Limits::default());
    assert!(
        e.contains("aaa/layer.tar") && e.contains(&format!("has digest sha256:{}", sha(&l2))),
        "{e}"
    );
}

#[test]
fn a_multi_platform_index_picks_the_hosts_manifest_and_lists_all() {
    let work = tempfile::tempdir().unwrap();
    let l = Layout::new(work.path());
    let amd = l.image(
        "amd64",
        &["ARCH=amd64"],
        &[layer_tar(&[Ent::File("arch", b"amd64")])],
    );
    let arm = l.image(
        "arm64",
        &["ARCH=arm64"],
        &[layer_tar(&[Ent::File("arch", b"arm64")])],
    );
    let nested = l.blob(
        INDEX,
        serde_json::json!({"schemaVersion": 2, "mediaType": INDEX, "manifests": [
            with_platform(amd.clone(), "amd64", None),
            with_platform(arm.clone(), "arm64", Some("v8")),
        ]})
        .to_string()
        .as_bytes(),
    );
    l.index(vec![tagged(nested, "multi")]);
    for (host, want) in [("x86_64", "amd64"), ("aarch64", "arm64")] {
        let u = unpack(work.path(), None, host, &Limits::default()).unwrap();
        assert_eq!(fs::read_to_string(u.root().join("arch")).unwrap(), want);
        assert_eq!(u.info.architecture, want);
        assert_eq!(u.info.env, [format!("ARCH={want}")]);
        assert!(u.info.matches_host);
        assert_eq!(u.info.platforms, ["linux/amd64", "linux/arm64/v8"]);
        assert_eq!(u.info.reference.as_deref(), Some("multi"));
    }
    let u = unpack(work.path(), None, "ppc64le", &Limits::default()).unwrap();
    assert!(!u.info.matches_host);
    assert_eq!(u.info.architecture, "amd64", "the first linux one");

    // An arm64-only image on x86_64.
    let arm_only = tempfile::tempdir().unwrap();
    let l = Layout::new(arm_only.path());
    let m = l.image("arm64", &[], &[layer_tar(&[Ent::File("arch", b"arm64")])]);
    l.index(vec![tagged(m, "arm")]);
    let u = ok(arm_only.path());
    assert_eq!(
        (u.info.architecture.as_str(), u.info.matches_host),
        ("arm64", false)
    );
    assert_eq!(u.info.platforms, ["linux/arm64"]);
}

#[test]
fn several_tagged_images_need_a_reference() {
    let work = tempfile::tempdir().unwrap();
    let l = Layout::new(work.path());
    let a = l.image("amd64", &["N=a"], &[layer_tar(&[Ent::File("n", b"a")])]);
    let b = l.image("amd64", &["N=b"], &[layer_tar(&[Ent::File("n", b"b")])]);
    let mut b = tagged(b, "12.4-devel");
    b["annotations"]["io.containerd.image.name"] = "docker.io/nvidia/cuda:12.4-devel".into();
    l.index(vec![tagged(a, "12.4-runtime"), b]);
    let e = err(work.path(), &Limits::default());
    assert!(
        e.contains("several images")
            && e.contains("12.4-runtime")
            && e.contains("docker.io/nvidia/cuda:12.4-devel"),
        "{e}"
    );
    let pick = |r: &str| {
        let u = unpack(work.path(), Some(r), "x86_64", &Limits::default()).unwrap();
        fs::read_to_string(u.root().join("n")).unwrap()
    };
    assert_eq!(pick("12.4-runtime"), "a");
    assert_eq!(pick("12.4-devel"), "b");
    assert_eq!(pick("nvidia/cuda:12.4-devel"), "b");
    assert_eq!(pick("docker.io/nvidia/cuda:12.4-devel"), "b");
}

// ------------------------------------------------------------------------------------------------
// Hostile archives.

#[test]
fn an_entry_climbing_out_fails_the_image_and_writes_nothing_outside() {
    let canary = Canary::new();
    let work = tempfile::tempdir().unwrap();
    let image = one_layer_image(
        work.path(),
        &[Ent::File("ok", b"x"), Ent::File("../escape", b"pwned")],
    );
    let e = err(&image, &Limits::default());
    assert!(
        e.contains("layer sha256:") && e.contains("entry ../escape") && e.contains("climbs out"),
        "{e}"
    );
    assert!(!std::env::temp_dir().join("escape").exists());
    canary.check();
}

#[test]
fn absolute_paths_land_inside_the_root() {
    let work = tempfile::tempdir().unwrap();
    let image = one_layer_image(
        work.path(),
        &[
            Ent::File("/abs/file", b"inside"),
            Ent::Mode("./suid", b"s", 0o4755),
            Ent::Mode("private", b"p", 0o600),
        ],
    );
    let u = ok(&image);
    let mode = |p: &str| fs::metadata(u.root().join(p)).unwrap().permissions().mode() & 0o7777;
    assert_eq!((mode("suid"), mode("private")), (0o755, 0o600));
    assert_eq!(
        fs::read_to_string(u.root().join("abs/file")).unwrap(),
        "inside"
    );
    assert!(!Path::new("/abs/file").exists());
}

#[test]
fn symlinks_in_parents_are_followed_inside_the_root_only() {
    let canary = Canary::new();
    let work = tempfile::tempdir().unwrap();
    let image = one_layer_image(
        work.path(),
        &[
            Ent::Sym("evil", canary.path()),
            Ent::File("evil/pwned", b"1"),
            Ent::Sym("up", "../../../../.."),
            Ent::File("up/pwned2", b"2"),
            Ent::Dir("usr/"),
            Ent::Sym("usr/back", "../.."),
            Ent::File("usr/back/etc/pwned3", b"3"),
            Ent::Sym("usr/abs", "/opt"),
            Ent::File("usr/abs/pwned4", b"4"),
        ],
    );
    let u = ok(&image);
    let inside = u
        .root()
        .join(canary.path().trim_start_matches('/'))
        .join("pwned");
    assert_eq!(
        fs::read_to_string(inside).unwrap(),
        "1",
        "absolute target followed from the root"
    );
    assert_eq!(
        fs::read_to_string(u.root().join("pwned2")).unwrap(),
        "2",
        "`..` clamped at the root"
    );
    assert_eq!(
        fs::read_to_string(u.root().join("etc/pwned3")).unwrap(),
        "3"
    );
    assert_eq!(
        fs::read_to_string(u.root().join("opt/pwned4")).unwrap(),
        "4",
        "an absolute target restarts at the root"
    );
    assert_eq!(
        fs::read_link(u.root().join("evil")).unwrap(),
        Path::new(canary.path()),
        "kept verbatim"
    );
    canary.check();
    let root = u.root().to_path_buf();
    drop(u);
    assert!(!root.exists());
}

#[test]
fn a_final_symlink_is_replaced_not_written_through() {
    let canary = Canary::new();
    let work = tempfile::tempdir().unwrap();
    let target = format!("{}/keep", canary.path());
    let image = one_layer_image(
        work.path(),
        &[
            Ent::Sym("f", &target),
            Ent::File("f", b"replaced"),
            Ent::Sym("d", canary.path()),
            Ent::Dir("d/"),
        ],
    );
    let u = ok(&image);
    assert_eq!(fs::read_to_string(u.root().join("f")).unwrap(), "replaced");
    assert!(fs::symlink_metadata(u.root().join("d")).unwrap().is_dir());
    canary.check();
}

#[test]
fn hard_links_resolve_inside_the_root() {
    let canary = Canary::new();
    let work = tempfile::tempdir().unwrap();
    let out = one_layer_image(
        &work.path().join("out"),
        &[Ent::Hard("passwd", "../../etc/passwd")],
    );
    let e = err(&out, &Limits::default());
    assert!(
        e.contains("entry passwd") && e.contains("../../etc/passwd") && e.contains("climbs out"),
        "{e}"
    );

    let absent = one_layer_image(
        &work.path().join("absent"),
        &[
            Ent::Sym("evil", canary.path()),
            Ent::Hard("keep", "evil/keep"),
            Ent::Hard("gone", "no/such/file"),
            Ent::File("real", b"r"),
            Ent::Hard("again", "/real"),
        ],
    );
    let u = ok(&absent);
    assert!(!u.root().join("keep").exists() && !u.root().join("gone").exists());
    assert_eq!(fs::read_to_string(u.root().join("again")).unwrap(), "r");
    let skipped: Vec<_> = u
        .info
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("keep", "hard link target /evil/keep is absent"),
            ("gone", "hard link target /no/such/file is absent")
        ]
    );
    canary.check();
}

#[test]
fn symlink_loops_are_errors() {
    let work = tempfile::tempdir().unwrap();
    let image = one_layer_image(
        work.path(),
        &[
            Ent::Sym("a", "b"),
            Ent::Sym("b", "a"),
            Ent::File("a/x", b"x"),
        ],
    );
    let e = err(&image, &Limits::default());
    assert!(
        e.contains("entry a/x") && e.contains("too many levels of symbolic links"),
        "{e}"
    );
}

#[test]
fn a_whiteout_of_dot_dot_is_refused() {
    let canary = Canary::new();
    let work = tempfile::tempdir().unwrap();
    let image = one_layer_image(
        work.path(),
        &[
            Ent::Sym("evil", canary.path()),
            Ent::File("evil/.wh...", b""),
            Ent::File("evil/.wh.keep", b""),
        ],
    );
    let e = err(&image, &Limits::default());
    assert!(
        e.contains("entry evil/.wh...") && e.contains("whiteout"),
        "{e}"
    );
    canary.check();
    // A whiteout through a symlink removes inside the root only.
    let image = one_layer_image(
        &work.path().join("2"),
        &[
            Ent::Sym("evil", canary.path()),
            Ent::File("evil/.wh.keep", b""),
        ],
    );
    ok(&image);
    canary.check();
}

#[test]
fn a_gzip_bomb_stops_early_naming_the_layer_and_sizes() {
    let work = tempfile::tempdir().unwrap();
    // A 2 GiB file of zeros: its tar header, then one gzip member of 1 MiB of zeros repeated
    // (a gzip stream may be several members), about 2 MiB in all.
    let size = 2u64 << 30;
    let mut h = header("zeros", tar::EntryType::Regular, size, 0o644);
    h.set_cksum();
    let mut bomb = gzip(h.as_bytes());
    let mut best = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    best.write_all(&vec![0u8; 1 << 20]).unwrap();
    let member = best.finish().unwrap();
    for _ in 0..(size >> 20) {
        bomb.extend_from_slice(&member);
    }
    let l = Layout::new(work.path());
    let config = l.blob(
        "application/vnd.oci.image.config.v1+json",
        br#"{"architecture":"amd64","os":"linux"}"#,
    );
    let layer = l.blob(GZ_LAYER, &bomb);
    let digest = layer["digest"].as_str().unwrap().to_string();
    let m = l.blob(
        MANIFEST,
        serde_json::json!({"schemaVersion": 2, "config": config, "layers": [layer]})
            .to_string()
            .as_bytes(),
    );
    l.index(vec![m]);
    let limits = Limits {
        max_ratio: 10,
        ..Limits::default()
    };
    let e = err(work.path(), &limits);
    assert!(
        e.contains(&format!("layer {digest}"))
            && e.contains(&format!("{} compressed bytes", bomb.len()))
            && e.contains("decompression bomb"),
        "{e}"
    );
    // The unpacked-size limit too.
    let limits = Limits {
        max_unpacked_bytes: 1 << 20,
        ..Limits::default()
    };
    let e = err(work.path(), &limits);
    assert!(e.contains("entry zeros") && e.contains("limit"), "{e}");
}

#[test]
fn truncated_corrupt_and_mismatched_blobs_name_the_blob() {
    let work = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let image = one_layer_image(work.path(), &[Ent::File("big", &data)]);
    let index: serde_json::Value =
        serde_json::from_slice(&fs::read(image.join("index.json")).unwrap()).unwrap();
    let mdigest = index["manifests"][0]["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:")
        .to_string();
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(image.join("blobs/sha256").join(&mdigest)).unwrap())
            .unwrap();
    let ldigest = manifest["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    let lpath = image
        .join("blobs/sha256")
        .join(ldigest.trim_start_matches("sha256:"));
    let good = fs::read(&lpath).unwrap();

    // Truncated: the gzip stream ends early.
    fs::write(&lpath, &good[..good.len() / 2]).unwrap();
    let e = err(&image, &Limits::default());
    assert!(e.contains(&format!("layer {ldigest}")), "{e}");
    // Same size, one byte of the deflate stream changed: gzip or the digest notices.
    let mut flipped = good.clone();
    let last = flipped.len() - 20;
    flipped[last] ^= 0x55;
    fs::write(&lpath, &flipped).unwrap();
    let e = err(&image, &Limits::default());
    assert!(e.contains(&ldigest), "{e}");
    // A valid gzip of other content under that name.
    fs::write(&lpath, gzip(&layer_tar(&[Ent::File("other", b"x")]))).unwrap();
    let e = err(&image, &Limits::default());
    assert!(
        e.contains(&format!("layer {ldigest}")) && e.contains("bytes where the manifest says"),
        "{e}"
    );
    // Missing.
    fs::remove_file(&lpath).unwrap();
    let e = err(&image, &Limits::default());
    assert!(
        e.contains(&format!("blob {ldigest}")) && e.contains("missing"),
        "{e}"
    );
    // A manifest changed under its digest.
    let mpath = image.join("blobs/sha256").join(&mdigest);
    let mut m = fs::read(&mpath).unwrap();
    m.push(b' ');
    fs::write(&mpath, &m).unwrap();
    let e = err(&image, &Limits::default());
    assert!(
        e.contains(&format!("blob sha256:{mdigest} (manifest)")) && e.contains("has digest"),
        "{e}"
    );
}

#[test]
fn a_truncated_uncompressed_layer_names_the_entry() {
    let work = tempfile::tempdir().unwrap();
    let data = vec![7u8; 100_000];
    let tar = layer_tar(&[Ent::File("big", &data)]);
    let cut = &tar[..50_000];
    let l = Layout::new(work.path());
    let config = l.blob(
        "application/vnd.oci.image.config.v1+json",
        br#"{"architecture":"amd64","os":"linux"}"#,
    );
    let layer = l.blob("application/vnd.oci.image.layer.v1.tar", cut);
    let m = l.blob(
        MANIFEST,
        serde_json::json!({"schemaVersion": 2, "config": config, "layers": [layer]})
            .to_string()
            .as_bytes(),
    );
    l.index(vec![m]);
    let e = err(work.path(), &Limits::default());
    assert!(e.contains("entry big") && e.contains("truncated"), "{e}");

    // One byte of file data changed, same size: the tar reads fine, the digest does not.
    let dir2 = work.path().join("2");
    let l = Layout::new(&dir2);
    let config = l.blob(
        "application/vnd.oci.image.config.v1+json",
        br#"{"architecture":"amd64","os":"linux"}"#,
    );
    let layer = l.blob("application/vnd.oci.image.layer.v1.tar", &tar);
    let m = l.blob(
        MANIFEST,
        serde_json::json!({"schemaVersion": 2, "config": config, "layers": [layer]})
            .to_string()
            .as_bytes(),
    );
    l.index(vec![m]);
    let digest = layer["digest"].as_str().unwrap().to_string();
    let mut changed = tar.clone();
    changed[1000] ^= 1;
    fs::write(
        dir2.join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:")),
        &changed,
    )
    .unwrap();
    let e = err(&dir2, &Limits::default());
    assert!(
        e.contains(&format!("blob {digest}"))
            && e.contains(&format!("has digest sha256:{}", sha(&changed))),
        "{e}"
    );
}

/// docker 25 and later: `blobs/sha256/<hex>` beside manifest.json, index.json and oci-layout.
#[test]
fn a_docker_25_save_archive_is_read_and_checked_by_blob_digest() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("save");
    let l = Layout::new(&dir);
    let layer = layer_tar(&[Ent::Dir("usr/"), Ent::File("usr/new", b"docker25")]);
    let m = l.image("amd64", &["A=1"], std::slice::from_ref(&layer));
    let mut m = tagged(m, "25");
    m["annotations"]["io.containerd.image.name"] = "docker.io/example/new:25".into();
    l.index(vec![m.clone()]);
    let manifest: serde_json::Value = serde_json::from_slice(
        &fs::read(
            dir.join("blobs/sha256")
                .join(m["digest"].as_str().unwrap().trim_start_matches("sha256:")),
        )
        .unwrap(),
    )
    .unwrap();
    let blob = |d: &serde_json::Value| {
        format!(
            "blobs/sha256/{}",
            d["digest"].as_str().unwrap().trim_start_matches("sha256:")
        )
    };
    let docker = serde_json::json!([{
        "Config": blob(&manifest["config"]),
        "RepoTags": ["example/new:25"],
        "Layers": [blob(&manifest["layers"][0])],
    }]);
    fs::write(dir.join("manifest.json"), docker.to_string()).unwrap();
    let archive = work.path().join("save.tar");
    tar_dir(&dir, &archive);
    for path in [&archive, &dir] {
        let u = ok(path);
        assert_eq!(u.info.format, ImageFormat::DockerArchive);
        assert_eq!(
            fs::read_to_string(u.root().join("usr/new")).unwrap(),
            "docker25"
        );
        assert_eq!(u.info.reference.as_deref(), Some("example/new:25"));
        assert_eq!(u.info.env, ["A=1"]);
        assert_eq!(
            u.info.layers[0].digest,
            manifest["layers"][0]["digest"].as_str().unwrap()
        );
        assert_eq!(
            u.info.layers[0].media_type,
            "application/vnd.docker.image.rootfs.diff.tar.gzip"
        );
    }
    // The layer blob replaced: its name is its digest.
    let lpath = dir.join(blob(&manifest["layers"][0]));
    let other = gzip(&layer_tar(&[Ent::File("usr/new", b"swapped")]));
    fs::write(&lpath, &other).unwrap();
    let e = err(&dir, &Limits::default());
    assert!(
        e.contains(&format!("has digest sha256:{}", sha(&other))),
        "{e}"
    );
}

#[test]
fn json_documents_are_bounded_and_must_be_there() {
    let work = tempfile::tempdir().unwrap();
    let image = one_layer_image(work.path(), &[Ent::File("x", b"x")]);
    let limits = Limits {
        max_json_bytes: 64,
        ..Limits::default()
    };
    let e = err(&image, &limits);
    assert!(
        e.contains("index.json") && e.contains("over the 64-byte limit"),
        "{e}"
    );
    let huge = format!(
        "{{\"manifests\": [], \"pad\": \"{}\"}}",
        "x".repeat(17 << 20)
    );
    fs::write(image.join("index.json"), huge).unwrap();
    let e = err(&image, &Limits::default());
    assert!(
        e.contains("index.json") && e.contains("limit for JSON"),
        "{e}"
    );
    fs::write(image.join("index.json"), "{\"manifests\": [}").unwrap();
    let e = err(&image, &Limits::default());
    assert!(e.contains("index.json: invalid JSON"), "{e}");

    let not = tempfile::tempdir().unwrap();
    let e = err(not.path(), &Limits::default());
    assert!(e.contains("without index.json"), "{e}");
    let junk = not.path().join("junk");
    fs::write(&junk, vec![0x28, 0xb5, 0x2f, 0xfd, 0, 0]).unwrap();
    let e = err(&junk, &Limits::default());
    assert!(
        e.contains("zstd-compressed") && e.contains("decompress it first"),
        "{e}"
    );
}

#[test]
fn an_oci_archive_built_by_hand_reads_like_its_layout_and_errors_are_typed() {
    let work = tempfile::tempdir().unwrap();
    let image = one_layer_image(
        &work.path().join("L"),
        &[Ent::Dir("etc/"), Ent::File("etc/x", b"x")],
    );
    let archive = work.path().join("a.tar");
    tar_dir(&image, &archive);
    let a = ok(&archive);
    let b = ok(&image);
    assert_eq!(a.info.format, ImageFormat::OciArchive);
    assert_eq!(tree(a.root()), tree(b.root()));
    assert_eq!(a.info.config_digest, b.info.config_digest);
    let e = unpack(
        &work.path().join("none"),
        None,
        "x86_64",
        &Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(e, ImageError::Read { .. }), "{e}");
}

#[test]
fn a_zstd_compressed_image_from_skopeo_is_read() {
    if !have("umoci") || !have("skopeo") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let bundle = work.path().join("B");
    let image = umoci_bundle(&work.path().join("L"), &bundle);
    fs::create_dir_all(bundle.join("rootfs/usr/local/cuda-12.8")).unwrap();
    fs::write(
        bundle.join("rootfs/usr/local/cuda-12.8/version.json"),
        r#"{"cuda": {"version": "12.8.1"}}"#,
    )
    .unwrap();
    sh(Command::new("umoci")
        .args(["repack", "--image", &image])
        .arg(&bundle));
    let zstd = work.path().join("Z");
    sh(Command::new("skopeo")
        .args(["copy", "--quiet", "--dest-compress-format", "zstd"])
        .arg(format!("oci:{image}"))
        .arg(format!("oci:{}:t", zstd.display())));
    let u = ok(&zstd);
    assert!(
        u.info.layers.iter().any(|l| l.media_type.contains("zstd")),
        "{:?}",
        u.info.layers
    );
    assert_eq!(
        fs::read_to_string(u.root().join("usr/local/cuda-12.8/version.json")).unwrap(),
        r#"{"cuda": {"version": "12.8.1"}}"#
    );
}

#[test]
fn an_index_repeating_one_manifest_is_bounded_by_the_json_budget() {
    let work = tempfile::tempdir().unwrap();
    let l = Layout::new(work.path());
    // A 3 KB config behind a manifest listed 40 times without a platform: each listing
    // makes the reader read the config to learn its platform.
    let pad = format!("PAD={}", "x".repeat(3000));
    let m = l.image("amd64", &[&pad], &[layer_tar(&[Ent::File("x", b"x")])]);
    l.index(vec![m; 40]);
    let limits = Limits {
        max_json_bytes: 8 << 10,
        ..Limits::default()
    };
    let e = err(work.path(), &limits);
    assert!(
        e.contains("JSON documents together pass 32768 bytes"),
        "{e}"
    );
    // The same image listed once reads.
    let one = tempfile::tempdir().unwrap();
    let l = Layout::new(one.path());
    let m = l.image("amd64", &[&pad], &[layer_tar(&[Ent::File("x", b"x")])]);
    l.index(vec![m]);
    let u = unpack(one.path(), None, "x86_64", &limits).unwrap();
    assert!(u.info.env.iter().any(|e| e.starts_with("PAD=")));
}

// ------------------------------------------------------------------------------------------------
// What a layout may make us read, and how much it may make us write.

/// A file outside every layout whose bytes must never be shown.
const SECRET: &str = "root:$6$SECRETSALT$neverprintthis:19000:0:99999:7:::\n";

fn secret_file(dir: &Path) -> PathBuf {
    let p = dir.join("shadow");
    fs::write(&p, SECRET.repeat(20)).unwrap();
    p
}

fn assert_no_secret(text: &str) {
    for part in ["SECRETSALT", "neverprintthis", "root:$6$"] {
        assert!(
            !text.contains(part),
            "a byte of the host file is shown: {text}"
        );
    }
}

#[test]
fn a_layer_linked_to_a_host_file_is_refused_without_reading_it() {
    let work = tempfile::tempdir().unwrap();
    let secret = secret_file(work.path());

    // An extracted `docker save` whose layer.tar links to the host file.
    let save = work.path().join("save");
    fs::create_dir_all(save.join("aaa")).unwrap();
    let config = serde_json::json!({"architecture": "amd64", "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": [format!("sha256:{}", "cd".repeat(32))]}})
    .to_string();
    fs::write(save.join("cfg.json"), &config).unwrap();
    fs::write(
        save.join("manifest.json"),
        r#"[{"Config": "cfg.json", "RepoTags": ["x:1"], "Layers": ["aaa/layer.tar"]}]"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, save.join("aaa/layer.tar")).unwrap();
    let e = err(&save, &Limits::default());
    assert!(e.contains("outside the image layout"), "{e}");
    assert_no_secret(&e);

    // An OCI layout whose layer blob links to it, the manifest giving its real size.
    let oci = work.path().join("oci");
    let l = Layout::new(&oci);
    let cfg = l.amd64_config();
    let hex = "ab".repeat(32);
    std::os::unix::fs::symlink(&secret, oci.join("blobs/sha256").join(&hex)).unwrap();
    let layer = serde_json::json!({"mediaType": "application/vnd.oci.image.layer.v1.tar",
        "digest": format!("sha256:{hex}"), "size": fs::metadata(&secret).unwrap().len()});
    l.single_image(&cfg, vec![layer]);
    let e = err(&oci, &Limits::default());
    assert!(e.contains("outside the image layout"), "{e}");
    assert_no_secret(&e);

    // Through the command: a usage error, nothing of the file in any output.
    for image in [&save, &oci] {
        let r = util::run(util::gpudoctor().args(["check", "--image"]).arg(image));
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert_no_secret(&r.stdout);
        assert_no_secret(&r.stderr);
    }
    // A link that stays inside the layout is read (docker links repeated layers so).
    fs::remove_file(oci.join("blobs/sha256").join(&hex)).unwrap();
    let data = layer_tar(&[Ent::File("inside", b"ok")]);
    let inner = l.blob("application/vnd.oci.image.layer.v1.tar", &data);
    let real = inner["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:")
        .to_string();
    fs::rename(oci.join("blobs/sha256").join(&real), oci.join("real-layer")).unwrap();
    std::os::unix::fs::symlink("../../real-layer", oci.join("blobs/sha256").join(&real)).unwrap();
    l.single_image(&cfg, vec![inner]);
    let u = ok(&oci);
    assert_eq!(fs::read(u.root().join("inside")).unwrap(), b"ok");
}

#[test]
fn an_index_that_is_no_regular_file_says_what_it_is_at_once() {
    let work = tempfile::tempdir().unwrap();
    type Make<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Make, &str); 3] = [
        (
            "fifo",
            &|p| {
                let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
                // SAFETY: mkfifo on a NUL-terminated path in our temporary directory.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            },
            "its index.json is a FIFO, not a regular file",
        ),
        (
            "dir",
            &|p| fs::create_dir(p).unwrap(),
            "its index.json is a directory, not a regular file",
        ),
        (
            "zero",
            &|p| std::os::unix::fs::symlink("/dev/zero", p).unwrap(),
            "its index.json is a link out of the layout, not a regular file",
        ),
    ];
    for (name, make, says) in cases {
        let dir = work.path().join(name);
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        make(&dir.join("index.json"));
        let t = std::time::Instant::now();
        let e = err(&dir, &Limits::default());
        assert!(e.contains(says), "{name}: {e}");
        assert!(t.elapsed().as_secs() < 2, "{name}");
    }
}

#[test]
fn an_unreadable_tar_header_is_quoted_short_and_escaped() {
    let work = tempfile::tempdir().unwrap();
    // A header whose name holds an escape sequence and a long run, and whose size field is
    // not a number: tar's error names the entry.
    let mut h = tar::Header::new_gnu();
    let name = format!("x\u{1b}[31mEVIL{}", "B".repeat(90));
    h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    h.as_old_mut().size.copy_from_slice(b"zzzzzzzzzzz\0");
    h.set_cksum();
    let mut blob = h.as_bytes().to_vec();
    blob.extend_from_slice(&[0u8; 1024]);
    let l = Layout::new(work.path());
    let cfg = l.amd64_config();
    let layer = l.blob("application/vnd.oci.image.layer.v1.tar", &blob);
    l.single_image(&cfg, vec![layer]);
    let e = err(work.path(), &Limits::default());
    assert!(e.contains("EVIL"), "the error names the entry: {e}");
    assert!(
        !e.contains('\u{1b}'),
        "a raw escape reaches the terminal: {e:?}"
    );
    assert!(
        e.chars().count() < 400,
        "{} characters: {e}",
        e.chars().count()
    );
}

/// A layer of one file of `size` zeros, zstd-compressed (a few hundred bytes).
fn zstd_zeros_layer(name: &str, size: usize) -> Vec<u8> {
    let tar = layer_tar(&[Ent::File(name, &vec![0u8; size])]);
    zstd::encode_all(&tar[..], 19).unwrap()
}

#[test]
fn the_image_has_one_decompression_budget_for_all_its_layers() {
    let work = tempfile::tempdir().unwrap();
    // Twenty layers of 4 MiB of zeros, ~300 bytes each compressed: each fits a per-layer
    // allowance, all together do not fit one.
    let l = Layout::new(work.path());
    let cfg = l.amd64_config();
    let layers: Vec<serde_json::Value> = (0..20)
        .map(|i| {
            l.blob(
                "application/vnd.oci.image.layer.v1.tar+zstd",
                &zstd_zeros_layer(&format!("zeros{i}"), 4 << 20),
            )
        })
        .collect();
    let compressed: u64 = layers.iter().map(|d| d["size"].as_u64().unwrap()).sum();
    l.single_image(&cfg, layers);
    let limits = Limits {
        allowance: 16 << 20,
        ..Limits::default()
    };
    let e = err(work.path(), &limits);
    assert!(
        e.contains(&format!("the image's {compressed} compressed bytes"))
            && e.contains("all layers together")
            && e.contains("decompression bomb"),
        "{e}"
    );

    // Through the command, with the default budget (200 times + 64 MiB): 80 MiB of zeros
    // stop at the budget, and the private directory is removed.
    let tmp = tempfile::tempdir().unwrap();
    let r = util::run(
        util::gpudoctor()
            .env("TMPDIR", tmp.path())
            .args(["check", "--image"])
            .arg(work.path()),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("decompression bomb"), "{}", r.stderr);
    assert_eq!(
        fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "temp space left behind"
    );
}

#[test]
fn a_manifest_may_list_no_more_layers_than_docker_chains_and_repeats_apply_each_time() {
    let work = tempfile::tempdir().unwrap();
    let l = Layout::new(work.path());
    let cfg = l.amd64_config();
    let a = l.blob(
        "application/vnd.oci.image.layer.v1.tar",
        &layer_tar(&[Ent::File("f", b"a"), Ent::File("only-a", b"1")]),
    );
    let b = l.blob(
        "application/vnd.oci.image.layer.v1.tar",
        &layer_tar(&[
            Ent::File("f", b"b"),
            Ent::File("only-b", b"2"),
            Ent::File(".wh.only-a", b""),
        ]),
    );
    let write = |layers: Vec<serde_json::Value>| {
        let m = l.blob(
            MANIFEST,
            serde_json::json!({"schemaVersion": 2, "config": cfg, "layers": layers})
                .to_string()
                .as_bytes(),
        );
        l.index(vec![m]);
    };
    // One layer listed 1,000 times.
    write(vec![a.clone(); 1000]);
    let e = err(work.path(), &Limits::default());
    assert!(e.contains("lists 1000 layers, more than the 127"), "{e}");
    // A, B, A: each copy applied where it is listed, as overlayfs stacks them.
    write(vec![a.clone(), b.clone(), a.clone()]);
    let u = ok(work.path());
    assert_eq!(u.info.layers.len(), 3);
    assert_eq!(fs::read(u.root().join("f")).unwrap(), b"a");
    assert_eq!(fs::read(u.root().join("only-a")).unwrap(), b"1");
    assert_eq!(fs::read(u.root().join("only-b")).unwrap(), b"2");
    // A, C, A where C hard-links to what the first A holds: the link has its data, which
    // applying A only where it is listed last would lose.
    let c = l.blob(
        "application/vnd.oci.image.layer.v1.tar",
        &layer_tar(&[Ent::Hard("linked", "only-a")]),
    );
    write(vec![a.clone(), c, a.clone()]);
    let u = ok(work.path());
    assert_eq!(fs::read(u.root().join("linked")).unwrap(), b"1");
}

#[test]
fn every_blob_size_is_checked_before_any_layer_is_decompressed() {
    let work = tempfile::tempdir().unwrap();
    let l = Layout::new(work.path());
    let cfg = l.amd64_config();
    // The first layer is corrupt; the second claims a terabyte, which would have raised the
    // budget for the first. The claim is caught first, with nothing decompressed.
    let corrupt = l.blob(GZ_LAYER, b"\x1f\x8bnot gzip");
    let mut liar = l.blob(
        "application/vnd.oci.image.layer.v1.tar",
        &layer_tar(&[Ent::File("f", b"x")]),
    );
    let real = liar["size"].as_u64().unwrap();
    liar["size"] = serde_json::json!(1u64 << 40);
    l.single_image(&cfg, vec![corrupt, liar]);
    let e = err(work.path(), &Limits::default());
    assert!(
        e.contains(&format!(
            "the blob has {real} bytes where the manifest says {}",
            1u64 << 40
        )),
        "{e}"
    );
}

#[test]
fn layers_inside_a_gzipped_archive_share_its_budget() {
    let work = tempfile::tempdir().unwrap();
    // A gzip layer of 64 MiB of zeros (~64 KB) inside an OCI archive that is gzipped again
    // (gzip of gzip of zeros: a few KB). Each budget alone passes it; together they may not
    // multiply.
    let layout = work.path().join("layout");
    let l = Layout::new(&layout);
    let cfg = l.amd64_config();
    let layer = l.blob(
        GZ_LAYER,
        &gzip(&layer_tar(&[Ent::File("zeros", &vec![0u8; 64 << 20])])),
    );
    let layer_size = layer["size"].as_u64().unwrap();
    l.single_image(&cfg, vec![layer]);
    let tar = work.path().join("image.tar");
    tar_dir(&layout, &tar);
    let gz = work.path().join("image.tar.gz");
    fs::write(&gz, gzip(&fs::read(&tar).unwrap())).unwrap();
    let size = fs::metadata(&gz).unwrap().len();
    let limits = Limits {
        allowance: 1 << 20,
        max_ratio: 2000,
        ..Limits::default()
    };
    // The layer alone would get 2000 times its size: more than 64 MiB.
    assert!(limits.decompressed_budget(layer_size) > 64 << 20);
    assert!(limits.decompressed_budget(size) < 64 << 20, "{size}");
    let e = err(&gz, &limits);
    assert!(
        e.contains(&format!("the image's {size} compressed bytes"))
            && e.contains("decompression bomb"),
        "{e}"
    );
}

#[test]
fn a_gzipped_outer_archive_gets_the_same_ratio() {
    let work = tempfile::tempdir().unwrap();
    // An OCI archive of one 40 MiB layer of zeros (uncompressed), gzipped: ~40 KB.
    let layout = work.path().join("layout");
    let l = Layout::new(&layout);
    let cfg = l.amd64_config();
    let layer = l.blob(
        "application/vnd.oci.image.layer.v1.tar",
        &layer_tar(&[Ent::File("zeros", &vec![0u8; 40 << 20])]),
    );
    l.single_image(&cfg, vec![layer]);
    let tar = work.path().join("image.tar");
    tar_dir(&layout, &tar);
    let gz = work.path().join("image.tar.gz");
    fs::write(&gz, gzip(&fs::read(&tar).unwrap())).unwrap();
    let size = fs::metadata(&gz).unwrap().len();
    let limits = Limits {
        allowance: 8 << 20,
        max_ratio: 10,
        ..Limits::default()
    };
    let e = err(&gz, &limits);
    assert!(
        e.contains(&format!(
            "its {size} gzip-compressed bytes decompress to more than"
        )) && e.contains("decompression bomb"),
        "{e}"
    );
    // Within the ratio it reads.
    let u = ok(&gz);
    assert_eq!(
        fs::metadata(u.root().join("zeros")).unwrap().len(),
        40 << 20
    );
}

#[test]
fn a_small_gzip_bomb_as_the_outer_archive_stops_at_the_budget_and_leaves_nothing() {
    let work = tempfile::tempdir().unwrap();
    // One gzip member of 1 MiB of zeros (about 1 KiB), 1,000 times: a 1 MB file that
    // decompresses to 1 GiB, where the budget is 200 MB + 64 MiB.
    let mut best = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    best.write_all(&vec![0u8; 1 << 20]).unwrap();
    let member = best.finish().unwrap();
    let bomb = work.path().join("image.tar.gz");
    fs::write(&bomb, member.repeat(1000)).unwrap();
    let size = fs::metadata(&bomb).unwrap().len();
    let tmp = tempfile::tempdir().unwrap();
    let t = std::time::Instant::now();
    let r = util::run(
        util::gpudoctor()
            .env("TMPDIR", tmp.path())
            .args(["check", "--image"])
            .arg(&bomb),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let budget = Limits::default().decompressed_budget(size);
    assert!(
        r.stderr.contains(&format!(
            "its {size} gzip-compressed bytes decompress to more than {budget} bytes"
        )),
        "{}",
        r.stderr
    );
    assert_eq!(
        fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "temp space left behind"
    );
    eprintln!("stopped in {:.1} s", t.elapsed().as_secs_f64());
}
