//! Reading an OCI or Docker image without running it: its config, and its filesystem laid out
//! in a private temporary directory for the probes to read as a root.
//!
//! Accepted, told apart by content rather than by name:
//! - an OCI image layout directory (`oci-layout`, `index.json`, `blobs/sha256/…`), or a
//!   directory holding an extracted `docker save`;
//! - an OCI archive (a tar of such a layout, as `skopeo copy … oci-archive:x.tar` writes);
//! - a `docker save` / `podman save` / `skopeo … docker-archive:` tarball (`manifest.json`,
//!   layers as `<id>/layer.tar` or `blobs/sha256/<hex>`).
//!
//! An outer tar is indexed once (name → offset, size) and each blob is then read by seeking
//! to it; it is never extracted. A gzip-compressed outer archive (`docker save | gzip`) is
//! first decompressed into a private temporary file (bounded by
//! [`Limits::max_unpacked_bytes`]), removed when unpacking ends. Layers may be gzip, zstd or
//! plain tar (the magic bytes decide, whatever the media type says); xz and bzip2 layers are
//! refused with a message saying so.
//!
//! Every blob read is checked against its SHA-256 digest (for the layers of a `docker save`
//! without blob digests, the uncompressed stream against the config's `rootfs.diff_ids`).
//!
//! Entries are applied as overlayfs stacks layers: whiteouts remove lower files, opaque
//! whiteouts empty a lower directory, later files replace earlier ones. Nothing is ever
//! written outside the directory nor through a symlink (see `apply.rs`); an entry whose path
//! (or hard link target) climbs out of the root with `..` fails the whole image with an error
//! naming the layer and the entry. Device nodes, fifos and hard links whose target is absent
//! are skipped and listed in [`ImageInfo::skipped`]. Nothing in the image is executed.

mod apply;
mod cleanup;
mod source;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use apply::{Applied, BudgetExceeded, EntryError, Tree};
use source::{normal_name, Source};

const MIB: u64 = 1024 * 1024;
/// Skipped entries listed one by one; the rest are counted.
const MAX_SKIPPED_LISTED: usize = 100;
/// Indexes inside indexes, and manifests listed in all of them, at most.
const MAX_INDEX_DEPTH: u32 = 8;
const MAX_MANIFESTS: usize = 4096;
/// An error quotes at most this much of what an image holds (a tar header's name field, say).
const MAX_QUOTED: usize = 120;

/// Bounds on what an image may make us read and write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// File data written, all layers together (and a gzip-compressed outer archive's size).
    pub max_unpacked_bytes: u64,
    /// Tar entries, all layers together (and the outer archive's).
    pub max_entries: u64,
    /// Any one JSON document (index, manifest, config).
    pub max_json_bytes: u64,
    /// The whole image may not decompress to more than `max_ratio` times its compressed
    /// size plus `allowance`: all its layers together, and a gzip-compressed outer archive.
    pub max_ratio: u64,
    /// The bytes of decompressed data every image may have beyond `max_ratio` (once, not per
    /// layer: twenty tiny layers do not get twenty allowances).
    pub allowance: u64,
    /// Layers a manifest may list. Docker refuses to chain more than 125 (`maxLayerDepth` in
    /// moby's layer/layer_store.go: "the 127 max in some graphdrivers plus the 2 additional
    /// layers used to create a rwlayer").
    pub max_layers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_unpacked_bytes: 32 * 1024 * MIB,
            max_entries: 2_000_000,
            max_json_bytes: 16 * MIB,
            max_ratio: 200,
            allowance: 64 * MIB,
            max_layers: 127,
        }
    }
}

impl Limits {
    /// What `compressed` bytes may decompress to: the ratio and the allowance, within the
    /// unpacked-size limit.
    pub fn decompressed_budget(&self, compressed: u64) -> u64 {
        self.max_ratio
            .saturating_mul(compressed)
            .saturating_add(self.allowance)
            .min(self.max_unpacked_bytes)
    }
}

/// At most `MAX_QUOTED` characters of text read from an image, control and bidi characters
/// escaped: an error may show where a file went wrong, never its contents at length.
pub(crate) fn excerpt(text: &str) -> String {
    let shown = crate::render::printable(text);
    match shown.char_indices().nth(MAX_QUOTED) {
        Some((at, _)) => format!("{}…", &shown[..at]),
        None => shown.into_owned(),
    }
}

/// Names an image holds, for an error: each as [`excerpt`] shows it, the first 20.
fn listed(refs: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut out: Vec<String> = refs.iter().take(SHOWN).map(|r| excerpt(r)).collect();
    if refs.len() > SHOWN {
        out.push(format!("and {} more", refs.len() - SHOWN));
    }
    out.join(", ")
}

/// An image's filesystem in a private temporary directory (removed on drop) and what was
/// read about it.
#[derive(Debug)]
pub struct Unpacked {
    pub dir: tempfile::TempDir,
    pub info: ImageInfo,
}

impl Unpacked {
    /// The image's `/`.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    OciLayout,
    OciArchive,
    DockerArchive,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LayerInfo {
    /// The layer's digest (`sha256:…`): the compressed blob's, or for a `docker save` layer
    /// without one, its uncompressed diff ID.
    pub digest: String,
    pub media_type: String,
    pub compressed_bytes: u64,
    /// File data written from this layer.
    pub unpacked_bytes: u64,
    /// Tar entries in this layer.
    pub entries: u64,
}

/// An entry not laid out, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkippedEntry {
    pub layer: String,
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImageInfo {
    /// The path as given.
    pub path: String,
    pub format: ImageFormat,
    /// The tag or reference name of the image picked.
    pub reference: Option<String>,
    pub manifest_digest: Option<String>,
    pub config_digest: String,
    pub os: String,
    pub architecture: String,
    pub variant: Option<String>,
    /// Every platform offered ("linux/amd64", "linux/arm64/v8").
    pub platforms: Vec<String>,
    /// The picked platform runs on the host's architecture.
    pub matches_host: bool,
    /// The config's `Env`, as written ("K=V").
    pub env: Vec<String>,
    pub user: Option<String>,
    pub working_dir: Option<String>,
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub labels: BTreeMap<String, String>,
    pub layers: Vec<LayerInfo>,
    /// Entries not laid out (the first 100).
    pub skipped: Vec<SkippedEntry>,
    /// Entries skipped beyond those listed.
    pub skipped_more: u64,
    /// File data written, all layers together.
    pub unpacked_bytes: u64,
}

/// Why an image could not be read. Every message names the image file, blob or layer, and
/// the entry where there is one.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("{path}: {why}")]
    NotAnImage { path: String, why: String },
    #[error("reading {what}: {source}")]
    Read {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("{what}: {why}")]
    Invalid { what: String, why: String },
    #[error("{what}: invalid JSON: {source}")]
    Json {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{what}: {why}")]
    Limit { what: String, why: String },
    #[error("{what}: {why}")]
    Unsupported { what: String, why: String },
    #[error("{image}: blob {digest} ({what}) is missing")]
    MissingBlob {
        image: String,
        digest: String,
        what: String,
    },
    #[error("blob {digest} ({what}): its content has digest {actual}")]
    DigestMismatch {
        what: String,
        digest: String,
        actual: String,
    },
    #[error(
        "{image}: it holds several images; choose one with a reference: {}",
        listed(refs)
    )]
    Ambiguous { image: String, refs: Vec<String> },
    #[error(
        "{image}: no image named \"{}\"; it holds: {}",
        excerpt(reference),
        listed(refs)
    )]
    NoSuchReference {
        image: String,
        reference: String,
        refs: Vec<String>,
    },
    #[error("layer {layer}: entry {entry}: {why}")]
    Entry {
        layer: String,
        entry: String,
        why: String,
    },
    #[error("layer {layer}: {why}")]
    Layer { layer: String, why: String },
    #[error(
        "layer {layer}: the image's {compressed} compressed bytes decompress to more than {limit} \
         bytes (limit: {ratio} times the compressed size + {allowance} bytes, all layers together); \
         refusing a likely decompression bomb"
    )]
    Bomb {
        layer: String,
        compressed: u64,
        limit: u64,
        ratio: u64,
        allowance: u64,
    },
    #[error("creating a private directory in {dir}: {source}")]
    TempDir {
        dir: String,
        #[source]
        source: io::Error,
    },
}

// ---------------------------------------------------------------------------------------------
// JSON documents.

#[derive(Debug, Clone, Deserialize)]
struct Descriptor {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    digest: String,
    #[serde(default)]
    size: Option<u64>,
    #[serde(default)]
    platform: Option<Platform>,
    #[serde(default)]
    annotations: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Deserialize)]
struct Platform {
    #[serde(default)]
    architecture: String,
    #[serde(default)]
    os: String,
    #[serde(default)]
    variant: Option<String>,
}

/// A manifest or an index (which one shows from the fields present).
#[derive(Debug, Clone, Deserialize)]
struct ManifestOrIndex {
    #[serde(default)]
    manifests: Option<Vec<Descriptor>>,
    #[serde(default)]
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Option<Vec<Descriptor>>,
}

#[derive(Debug, Default, Deserialize)]
struct ImageConfig {
    #[serde(default)]
    architecture: Option<String>,
    #[serde(default)]
    os: Option<String>,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    config: Option<RunConfig>,
    #[serde(default)]
    rootfs: Option<RootFs>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RunConfig {
    #[serde(default)]
    env: Option<Vec<String>>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    working_dir: Option<String>,
    #[serde(default)]
    entrypoint: Option<Vec<String>>,
    #[serde(default)]
    cmd: Option<Vec<String>>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
struct RootFs {
    #[serde(default)]
    diff_ids: Option<Vec<String>>,
}

/// One image in a `docker save` manifest.json.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct DockerEntry {
    config: String,
    #[serde(default)]
    repo_tags: Option<Vec<String>>,
    #[serde(default)]
    layers: Vec<String>,
}

const REF_NAME: &str = "org.opencontainers.image.ref.name";
const CONTAINERD_NAME: &str = "io.containerd.image.name";

// ---------------------------------------------------------------------------------------------
// Entry point.

/// Reads the image at `path` (picking `reference` where it holds several, and the platform
/// of `host_arch`, as `uname -m` names it, where an index offers several) and lays its
/// filesystem out in a new private temporary directory.
pub fn unpack(
    path: &Path,
    reference: Option<&str>,
    host_arch: &str,
    limits: &Limits,
) -> Result<Unpacked, ImageError> {
    let shown = path.display().to_string();
    let (source, format, outer_gzip) = open_source(path, &shown, limits)?;
    let img = Image {
        src: &source,
        shown: &shown,
        limits,
        visited: Cell::new(0),
        json_total: Cell::new(0),
    };
    let picked = match format {
        ImageFormat::DockerArchive => img.pick_docker(reference)?,
        _ => img.pick_oci(reference, host_arch)?,
    };

    let dir = private_temp(|b, parent| b.tempdir_in(parent), |d| d.path())?;

    if picked.layers.len() > limits.max_layers {
        return Err(ImageError::Limit {
            what: shown.clone(),
            why: format!(
                "its manifest lists {} layers, more than the {} an image may have (Docker refuses \
                 to chain more than 125)",
                picked.layers.len(),
                limits.max_layers
            ),
        });
    }
    // A layer listed twice is applied every time, as overlayfs stacks it: a later layer may
    // hard-link to what an earlier copy holds. The layer cap bounds the repeats.
    let jobs: Vec<&LayerJob> = picked.layers.iter().collect();
    // One budget for the image, from the blobs' real sizes (a manifest's declared size is
    // checked against the file before any byte is decompressed). Layers inside a gzip-compressed
    // archive share the archive's budget: a bomb cannot multiply across the two.
    let mut compressed = 0u64;
    for job in &jobs {
        compressed = compressed.saturating_add(img.blob_size(job)?);
    }
    if let Some(outer) = outer_gzip {
        compressed = compressed.min(outer);
    }
    let mut state = State {
        compressed,
        budget: limits.decompressed_budget(compressed),
        ..State::default()
    };
    let mut tree = Tree::new(dir.path());
    let mut layers = Vec::new();
    for job in jobs {
        tree.next_layer();
        layers.push(img.apply_layer(job, &mut tree, &mut state)?);
    }

    let run = picked.config.config.unwrap_or_default();
    let os = picked.config.os.unwrap_or_default();
    let architecture = picked.config.architecture.unwrap_or_default();
    let variant = picked.config.variant.or(picked.index_variant);
    let matches_host = platform_runs_on(host_arch, &os, &architecture, variant.as_deref());
    let info = ImageInfo {
        path: shown,
        format,
        reference: picked.reference,
        manifest_digest: picked.manifest_digest,
        config_digest: picked.config_digest,
        os,
        architecture,
        variant,
        platforms: picked.platforms,
        matches_host,
        env: run.env.unwrap_or_default(),
        user: run.user.filter(|s| !s.is_empty()),
        working_dir: run.working_dir.filter(|s| !s.is_empty()),
        entrypoint: run.entrypoint.unwrap_or_default(),
        cmd: run.cmd.unwrap_or_default(),
        labels: run.labels.unwrap_or_default(),
        layers,
        skipped: state.skipped,
        skipped_more: state.skipped_more,
        unpacked_bytes: state.bytes,
    };
    Ok(Unpacked { dir, info })
}

/// Opens the layout directory or archive and tells its format.
/// The third value is a gzip-compressed archive's own size.
fn open_source(
    path: &Path,
    shown: &str,
    limits: &Limits,
) -> Result<(Source, ImageFormat, Option<u64>), ImageError> {
    let read_err = |e: io::Error| ImageError::Read {
        what: shown.to_string(),
        source: e,
    };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    if meta.is_dir() {
        let src = Source::dir(path).map_err(read_err)?;
        for name in ["manifest.json", "index.json"] {
            if let Some(what) = src.not_a_member(name) {
                return Err(ImageError::NotAnImage {
                    path: shown.to_string(),
                    why: format!("its {name} is {what}, not a regular file"),
                });
            }
        }
        // An extracted docker 25 save has both; manifest.json carries its tags.
        return if src.has("manifest.json") {
            Ok((src, ImageFormat::DockerArchive, None))
        } else if src.has("index.json") {
            Ok((src, ImageFormat::OciLayout, None))
        } else {
            Err(ImageError::NotAnImage {
                path: shown.to_string(),
                why: "a directory without index.json (OCI layout) or manifest.json (docker save)"
                    .into(),
            })
        };
    }
    let mut magic = [0u8; 6];
    let n = read_up_to(&mut File::open(path).map_err(read_err)?, &mut magic).map_err(read_err)?;
    let magic = &magic[..n];
    let (tar_path, scratch, outer_gzip) = match compression(magic) {
        Compression::None => (path.to_path_buf(), None, None),
        Compression::Gzip => {
            let (tmp, size) = gunzip_to_scratch(path, shown, limits)?;
            (tmp.path().to_path_buf(), Some(tmp), Some(size))
        }
        other => {
            return Err(ImageError::Unsupported {
                what: shown.to_string(),
                why: format!(
                    "a {}-compressed file; decompress it first (gzip is read as is)",
                    other.name()
                ),
            })
        }
    };
    let src = Source::index_tar(&tar_path, shown, scratch, limits.max_entries)?;
    if src.has("manifest.json") {
        Ok((src, ImageFormat::DockerArchive, outer_gzip))
    } else if src.has("index.json") {
        Ok((src, ImageFormat::OciArchive, outer_gzip))
    } else {
        Err(ImageError::NotAnImage {
            path: shown.to_string(),
            why: "a tar archive without index.json (OCI archive) or manifest.json (docker save)"
                .into(),
        })
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// `docker save | gzip`: decompressed into a private temporary file; with the compressed size.
fn gunzip_to_scratch(
    path: &Path,
    shown: &str,
    limits: &Limits,
) -> Result<(tempfile::NamedTempFile, u64), ImageError> {
    let mut tmp = private_temp(|b, parent| b.tempfile_in(parent), |f| f.path())?;
    let f = File::open(path).map_err(|e| ImageError::Read {
        what: shown.to_string(),
        source: e,
    })?;
    let compressed = f.metadata().map_or(0, |m| m.len());
    // The archive holds the layers, compressed already: it gets the image's ratio too.
    let budget = limits.decompressed_budget(compressed);
    let mut gz =
        flate2::read::MultiGzDecoder::new(BufReader::new(f)).take(budget.saturating_add(1));
    let n = io::copy(&mut gz, tmp.as_file_mut()).map_err(|e| ImageError::Read {
        what: format!("{shown} (decompressing gzip)"),
        source: e,
    })?;
    if n > budget {
        return Err(ImageError::Limit {
            what: shown.to_string(),
            why: format!(
                "its {compressed} gzip-compressed bytes decompress to more than {budget} bytes \
                 (limit: {} times the compressed size + {} bytes); refusing a likely \
                 decompression bomb",
                limits.max_ratio, limits.allowance
            ),
        });
    }
    Ok((tmp, compressed))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Zstd,
    Xz,
    Bzip2,
}

impl Compression {
    fn name(self) -> &'static str {
        match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }
}

fn compression(magic: &[u8]) -> Compression {
    if magic.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Compression::Zstd
    } else if magic.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Compression::Xz
    } else if magic.starts_with(b"BZh") {
        Compression::Bzip2
    } else {
        Compression::None
    }
}

/// A temporary file or directory `gpudoctor-image-*` under TMPDIR (mode 0600/0700), removed
/// on drop and, through [`cleanup`], when the process is interrupted.
fn private_temp<T>(
    make: impl FnOnce(&tempfile::Builder, &Path) -> io::Result<T>,
    path: impl Fn(&T) -> &Path,
) -> Result<T, ImageError> {
    let parent = std::env::temp_dir();
    let mut builder = tempfile::Builder::new();
    builder.prefix("gpudoctor-image-");
    cleanup::create(|| make(&builder, &parent), path).map_err(|e| ImageError::TempDir {
        dir: parent.display().to_string(),
        source: e,
    })
}

// ---------------------------------------------------------------------------------------------
// Platforms.

/// The OCI architecture and the variants that run on a host `uname -m` names.
fn host_platform(host_arch: &str) -> (&str, &'static [&'static str]) {
    match host_arch {
        "x86_64" | "amd64" => ("amd64", &["", "v1", "v2", "v3", "v4"]),
        "aarch64" | "arm64" | "armv8l" => ("arm64", &["", "v8"]),
        "armv7l" | "armv7" => ("arm", &["", "v7", "v6", "v5"]),
        "armv6l" => ("arm", &["v6", "v5"]),
        "i386" | "i486" | "i586" | "i686" | "386" => ("386", &[""]),
        "ppc64le" => ("ppc64le", &[""]),
        "s390x" => ("s390x", &[""]),
        "riscv64" => ("riscv64", &[""]),
        other => (other, &[""]),
    }
}

/// The OCI architecture of a host `uname -m` names (`x86_64` → `amd64`).
pub fn oci_arch(host_arch: &str) -> &str {
    host_platform(host_arch).0
}

/// Whether linux/`arch`/`variant` runs on a host of `host_arch`.
fn platform_runs_on(host_arch: &str, os: &str, arch: &str, variant: Option<&str>) -> bool {
    let (want, variants) = host_platform(host_arch);
    os == "linux" && arch == want && variants.contains(&variant.unwrap_or(""))
}

fn platform_string(os: &str, arch: &str, variant: Option<&str>) -> String {
    match variant {
        Some(v) if !v.is_empty() => format!("{os}/{arch}/{v}"),
        _ => format!("{os}/{arch}"),
    }
}

// ---------------------------------------------------------------------------------------------
// References.

/// `name` without a registry of docker.io and `library/`, with `:latest` when it has no tag.
fn canonical_ref(name: &str) -> String {
    let mut n = name.strip_prefix("docker.io/").unwrap_or(name);
    n = n.strip_prefix("library/").unwrap_or(n);
    let last = n.rsplit('/').next().unwrap_or(n);
    if last.contains(':') || last.contains('@') {
        n.to_string()
    } else {
        format!("{n}:latest")
    }
}

fn tag_of(name: &str) -> Option<&str> {
    let last = name.rsplit('/').next()?;
    last.rsplit_once(':').map(|(_, t)| t)
}

/// The images (by index in `names`) `reference` picks: exact names first, then a tag alone.
/// Errors list the names.
fn select_by_reference(
    image: &str,
    reference: &str,
    names: &[Vec<String>],
) -> Result<Vec<usize>, ImageError> {
    let exact: Vec<usize> = (0..names.len())
        .filter(|&i| {
            names[i]
                .iter()
                .any(|n| n == reference || canonical_ref(n) == canonical_ref(reference))
        })
        .collect();
    if !exact.is_empty() {
        return Ok(exact);
    }
    let all: Vec<String> = distinct(names.iter().flat_map(|n| n.first().cloned()));
    if !reference.contains(['/', ':', '@']) {
        let by_tag: Vec<usize> = (0..names.len())
            .filter(|&i| {
                names[i]
                    .iter()
                    .any(|n| n == reference || tag_of(n) == Some(reference))
            })
            .collect();
        let images = distinct(by_tag.iter().filter_map(|&i| names[i].first().cloned()));
        if images.len() > 1 {
            return Err(ImageError::Ambiguous {
                image: image.to_string(),
                refs: images,
            });
        }
        if !by_tag.is_empty() {
            return Ok(by_tag);
        }
    }
    Err(ImageError::NoSuchReference {
        image: image.to_string(),
        reference: reference.to_string(),
        refs: all,
    })
}

fn distinct(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Picking the image.

/// A layer to apply.
struct LayerJob {
    /// The member (or file) in the layout.
    name: String,
    /// How messages name it: its digest.
    shown: String,
    media_type: String,
    /// The compressed blob's digest (hex), checked while streaming.
    blob_sha256: Option<String>,
    /// The descriptor's size.
    size: Option<u64>,
    /// The uncompressed stream's digest (hex), checked while streaming.
    diff_sha256: Option<String>,
}

struct Picked {
    reference: Option<String>,
    manifest_digest: Option<String>,
    config_digest: String,
    config: ImageConfig,
    index_variant: Option<String>,
    platforms: Vec<String>,
    layers: Vec<LayerJob>,
}

/// A manifest reached through the index.
struct Leaf {
    digest: String,
    platform: Option<Platform>,
    reference: Option<String>,
    manifest: ManifestOrIndex,
}

#[derive(Default)]
struct State {
    bytes: u64,
    entries: u64,
    /// The compressed size of every layer applied, and what they may decompress to in all.
    compressed: u64,
    budget: u64,
    /// What the layers applied so far decompressed to.
    decompressed: u64,
    skipped: Vec<SkippedEntry>,
    skipped_more: u64,
}

struct Image<'a> {
    src: &'a Source,
    shown: &'a str,
    limits: &'a Limits,
    /// Manifests and indexes read so far.
    visited: Cell<usize>,
    /// Bytes of JSON read so far: an index listing one document thousands of times must not
    /// hold thousands of copies.
    json_total: Cell<u64>,
}

/// All JSON documents of one image together: four times the per-document limit.
const JSON_TOTAL_FACTOR: u64 = 4;

/// `sha256:<64 hex>` → the hex.
fn sha256_hex(digest: &str) -> Option<&str> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))).then_some(hex)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Image<'_> {
    fn blob_name(&self, digest: &str, what: &str) -> Result<String, ImageError> {
        match sha256_hex(digest) {
            Some(hex) => Ok(format!("blobs/sha256/{hex}")),
            None => Err(ImageError::Unsupported {
                what: format!("{}: {what}", self.shown),
                why: format!("digest {digest:?} is not a sha256 digest"),
            }),
        }
    }

    /// A JSON document from the layout, bounded; `expect` is the sha256 (hex) to check.
    fn read_json_bytes(
        &self,
        name: &str,
        what: &str,
        digest: Option<&str>,
    ) -> Result<Vec<u8>, ImageError> {
        let label = match digest {
            Some(d) => format!("{} {what} {d}", self.shown),
            None => format!("{} {what} {name}", self.shown),
        };
        let opened = self.src.open(name).map_err(|e| ImageError::Read {
            what: label.clone(),
            source: e,
        })?;
        let Some((mut r, size)) = opened else {
            return Err(match digest {
                Some(d) => ImageError::MissingBlob {
                    image: self.shown.to_string(),
                    digest: d.to_string(),
                    what: what.to_string(),
                },
                None => ImageError::NotAnImage {
                    path: self.shown.to_string(),
                    why: format!("{name} is missing"),
                },
            });
        };
        let max = self.limits.max_json_bytes;
        if size > max {
            return Err(ImageError::Limit {
                what: label,
                why: format!("{size} bytes, over the {max}-byte limit for JSON documents"),
            });
        }
        let mut bytes = Vec::with_capacity(size as usize);
        (&mut r)
            .take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ImageError::Read {
                what: label.clone(),
                source: e,
            })?;
        if bytes.len() as u64 > max {
            return Err(ImageError::Limit {
                what: label,
                why: format!("over the {max}-byte limit for JSON documents"),
            });
        }
        let total = self.json_total.get().saturating_add(bytes.len() as u64);
        self.json_total.set(total);
        let budget = max.saturating_mul(JSON_TOTAL_FACTOR);
        if total > budget {
            return Err(ImageError::Limit {
                what: label,
                why: format!(
                    "the image's JSON documents together pass {budget} bytes (an index repeating its manifests?)"
                ),
            });
        }
        if let Some(d) = digest {
            let actual = hex(&Sha256::digest(&bytes));
            if sha256_hex(d) != Some(actual.as_str()) {
                return Err(ImageError::DigestMismatch {
                    what: what.to_string(),
                    digest: d.to_string(),
                    actual: format!("sha256:{actual}"),
                });
            }
        }
        Ok(bytes)
    }

    fn parse<T: serde::de::DeserializeOwned>(
        &self,
        bytes: &[u8],
        what: String,
    ) -> Result<T, ImageError> {
        serde_json::from_slice(bytes).map_err(|e| ImageError::Json { what, source: e })
    }

    fn read_blob_json<T: serde::de::DeserializeOwned>(
        &self,
        desc: &Descriptor,
        what: &str,
    ) -> Result<(T, Vec<u8>), ImageError> {
        let name = self.blob_name(&desc.digest, what)?;
        let bytes = self.read_json_bytes(&name, what, Some(&desc.digest))?;
        if let Some(size) = desc.size {
            if size != bytes.len() as u64 {
                return Err(ImageError::Invalid {
                    what: format!("blob {} ({what})", desc.digest),
                    why: format!("{} bytes where its descriptor says {size}", bytes.len()),
                });
            }
        }
        let parsed = self.parse(&bytes, format!("{} {what} {}", self.shown, desc.digest))?;
        Ok((parsed, bytes))
    }

    // -- OCI ---------------------------------------------------------------------------------

    fn pick_oci(&self, reference: Option<&str>, host_arch: &str) -> Result<Picked, ImageError> {
        let bytes = self.read_json_bytes("index.json", "index", None)?;
        let index: ManifestOrIndex = self.parse(&bytes, format!("{} index.json", self.shown))?;
        let top = index.manifests.unwrap_or_default();
        if top.is_empty() {
            return Err(ImageError::Invalid {
                what: format!("{} index.json", self.shown),
                why: "it lists no manifests".into(),
            });
        }
        let names: Vec<Vec<String>> = top.iter().map(descriptor_names).collect();
        let chosen: Vec<usize> = match reference {
            Some(r) => select_by_reference(self.shown, r, &names)?,
            None => {
                let keys = distinct(names.iter().map(|n| {
                    n.first()
                        .cloned()
                        .unwrap_or_else(|| "(untagged)".to_string())
                }));
                if keys.len() > 1 {
                    return Err(ImageError::Ambiguous {
                        image: self.shown.to_string(),
                        refs: keys,
                    });
                }
                (0..top.len()).collect()
            }
        };
        let mut leaves = Vec::new();
        for &i in &chosen {
            let name = names[i].first().cloned();
            self.expand(&top[i], top[i].platform.clone(), name, 0, &mut leaves)?;
        }
        // A manifest listed without a platform: its config says.
        let mut configs: Vec<Option<(ImageConfig, Vec<u8>)>> = Vec::new();
        for leaf in &mut leaves {
            if leaf.platform.is_none() {
                let (config, bytes) = self.leaf_config(leaf)?;
                leaf.platform = Some(Platform {
                    architecture: config.architecture.clone().unwrap_or_default(),
                    os: config.os.clone().unwrap_or_default(),
                    variant: config.variant.clone(),
                });
                configs.push(Some((config, bytes)));
            } else {
                configs.push(None);
            }
        }
        let offered = |p: &Platform| p.os != "unknown" && p.architecture != "unknown";
        let platforms = distinct(
            leaves
                .iter()
                .filter_map(|l| l.platform.as_ref())
                .filter(|p| offered(p))
                .map(|p| platform_string(&p.os, &p.architecture, p.variant.as_deref())),
        );
        let plat = |l: &Leaf| l.platform.clone().expect("filled above");
        let pick = leaves
            .iter()
            .position(|l| {
                let p = plat(l);
                platform_runs_on(host_arch, &p.os, &p.architecture, p.variant.as_deref())
            })
            .or_else(|| leaves.iter().position(|l| plat(l).os == "linux"))
            .or_else(|| leaves.iter().position(|l| offered(&plat(l))))
            .unwrap_or(0);
        if leaves.is_empty() {
            return Err(ImageError::Invalid {
                what: format!("{} index.json", self.shown),
                why: "its indexes list no image manifests".into(),
            });
        }
        let leaf = leaves.swap_remove(pick);
        let (config, config_bytes) = match configs.swap_remove(pick) {
            Some(c) => c,
            None => self.leaf_config(&leaf)?,
        };
        let mut layers = Vec::new();
        for l in leaf.manifest.layers.clone().unwrap_or_default() {
            let name = self.blob_name(&l.digest, "layer")?;
            if l.media_type.contains("encrypted") {
                return Err(ImageError::Unsupported {
                    what: format!("layer {}", l.digest),
                    why: format!(
                        "media type {} (encrypted layers are not read)",
                        excerpt(&l.media_type)
                    ),
                });
            }
            layers.push(LayerJob {
                name,
                shown: l.digest.clone(),
                media_type: l.media_type.clone(),
                blob_sha256: sha256_hex(&l.digest).map(str::to_string),
                size: l.size,
                diff_sha256: None,
            });
        }
        Ok(Picked {
            reference: leaf.reference,
            manifest_digest: Some(leaf.digest),
            config_digest: format!("sha256:{}", hex(&Sha256::digest(&config_bytes))),
            config,
            index_variant: leaf.platform.and_then(|p| p.variant),
            platforms,
            layers,
        })
    }

    fn leaf_config(&self, leaf: &Leaf) -> Result<(ImageConfig, Vec<u8>), ImageError> {
        let Some(desc) = &leaf.manifest.config else {
            return Err(ImageError::Invalid {
                what: format!("{} manifest {}", self.shown, leaf.digest),
                why: "it has no config".into(),
            });
        };
        self.read_blob_json(desc, "config")
    }

    /// Walks `desc` (a manifest, or an index of them) down to its manifests.
    fn expand(
        &self,
        desc: &Descriptor,
        platform: Option<Platform>,
        reference: Option<String>,
        depth: u32,
        out: &mut Vec<Leaf>,
    ) -> Result<(), ImageError> {
        self.visited.set(self.visited.get() + 1);
        if depth > MAX_INDEX_DEPTH || self.visited.get() > MAX_MANIFESTS {
            return Err(ImageError::Limit {
                what: format!("{} index {}", self.shown, desc.digest),
                why: format!(
                    "indexes nest more than {MAX_INDEX_DEPTH} deep or list more than \
                     {MAX_MANIFESTS} manifests in all"
                ),
            });
        }
        let (doc, _) = self.read_blob_json::<ManifestOrIndex>(desc, "manifest")?;
        if let Some(children) = &doc.manifests {
            for child in children {
                let p = child.platform.clone().or_else(|| platform.clone());
                self.expand(child, p, reference.clone(), depth + 1, out)?;
            }
            return Ok(());
        }
        if doc.config.is_none() {
            return Err(ImageError::Invalid {
                what: format!("{} manifest {}", self.shown, desc.digest),
                why: "neither an image manifest (no config) nor an index (no manifests)".into(),
            });
        }
        out.push(Leaf {
            digest: desc.digest.clone(),
            platform,
            reference,
            manifest: doc,
        });
        Ok(())
    }

    // -- docker save ---------------------------------------------------------------------------

    fn pick_docker(&self, reference: Option<&str>) -> Result<Picked, ImageError> {
        let bytes = self.read_json_bytes("manifest.json", "manifest", None)?;
        let mut entries: Vec<DockerEntry> =
            self.parse(&bytes, format!("{} manifest.json", self.shown))?;
        if entries.is_empty() {
            return Err(ImageError::Invalid {
                what: format!("{} manifest.json", self.shown),
                why: "it lists no images".into(),
            });
        }
        let names: Vec<Vec<String>> = entries
            .iter()
            .map(|e| e.repo_tags.clone().unwrap_or_default())
            .collect();
        let pick = match reference {
            Some(r) => {
                let found = select_by_reference(self.shown, r, &names)?;
                if found.len() > 1 {
                    return Err(ImageError::Ambiguous {
                        image: self.shown.to_string(),
                        refs: found.iter().map(|&i| docker_name(&names[i], i)).collect(),
                    });
                }
                found[0]
            }
            None if entries.len() > 1 => {
                return Err(ImageError::Ambiguous {
                    image: self.shown.to_string(),
                    refs: (0..entries.len())
                        .map(|i| docker_name(&names[i], i))
                        .collect(),
                });
            }
            None => 0,
        };
        let picked_name = match reference {
            Some(r) => names[pick]
                .iter()
                .find(|n| *n == r || canonical_ref(n) == canonical_ref(r))
                .or_else(|| names[pick].iter().find(|n| tag_of(n) == Some(r)))
                .or(names[pick].first())
                .cloned(),
            None => names[pick].first().cloned(),
        };
        let entry = entries.swap_remove(pick);
        let Some(config_name) = normal_name(&entry.config) else {
            return Err(ImageError::Invalid {
                what: format!("{} manifest.json", self.shown),
                why: format!("config path {:?} leaves the archive", entry.config),
            });
        };
        // `<hex>.json` or `blobs/sha256/<hex>`: the name is the digest.
        let base = config_name.rsplit('/').next().unwrap_or(&config_name);
        let named = format!("sha256:{}", base.strip_suffix(".json").unwrap_or(base));
        let expect = sha256_hex(&named).map(|_| named.as_str());
        let config_bytes = self.read_json_bytes(&config_name, "config", expect)?;
        let config: ImageConfig = self.parse(
            &config_bytes,
            format!("{} config {config_name}", self.shown),
        )?;
        let diff_ids = config
            .rootfs
            .as_ref()
            .and_then(|r| r.diff_ids.clone())
            .unwrap_or_default();
        let mut layers = Vec::new();
        for (i, layer) in entry.layers.iter().enumerate() {
            let Some(name) = normal_name(layer) else {
                return Err(ImageError::Invalid {
                    what: format!("{} manifest.json", self.shown),
                    why: format!("layer path \"{}\" leaves the archive", excerpt(layer)),
                });
            };
            let blob = name
                .strip_prefix("blobs/sha256/")
                .filter(|h| sha256_hex(&format!("sha256:{h}")).is_some())
                .map(str::to_string);
            let diff = diff_ids
                .get(i)
                .and_then(|d| sha256_hex(d))
                .map(str::to_string);
            if blob.is_none() && diff.is_none() {
                return Err(ImageError::Invalid {
                    what: format!("{} layer {name}", self.shown),
                    why: "neither its name nor the config's rootfs.diff_ids give a sha256 digest \
                          to check it against"
                        .into(),
                });
            }
            let shown = match (&blob, &diff) {
                (Some(h), _) | (None, Some(h)) => format!("sha256:{h}"),
                _ => name.clone(),
            };
            layers.push(LayerJob {
                name,
                shown,
                media_type: String::new(),
                blob_sha256: blob,
                size: None,
                diff_sha256: diff,
            });
        }
        let os = config.os.clone().unwrap_or_default();
        let arch = config.architecture.clone().unwrap_or_default();
        Ok(Picked {
            reference: picked_name,
            manifest_digest: None,
            config_digest: format!("sha256:{}", hex(&Sha256::digest(&config_bytes))),
            platforms: vec![platform_string(&os, &arch, config.variant.as_deref())],
            config,
            index_variant: None,
            layers,
        })
    }

    // -- layers --------------------------------------------------------------------------------

    /// The compressed size of a layer's blob: the file's, which must be what its descriptor
    /// says.
    fn blob_size(&self, job: &LayerJob) -> Result<u64, ImageError> {
        match self.src.open(&job.name) {
            Ok(Some((_, size))) => match job.size {
                Some(want) if want != size => Err(ImageError::Layer {
                    layer: job.shown.clone(),
                    why: format!("the blob has {size} bytes where the manifest says {want}"),
                }),
                _ => Ok(size),
            },
            Ok(None) => Err(ImageError::MissingBlob {
                image: self.shown.to_string(),
                digest: job.shown.clone(),
                what: format!("layer {}", job.name),
            }),
            Err(e) => Err(ImageError::Layer {
                layer: job.shown.clone(),
                why: format!("reading {}: {e}", job.name),
            }),
        }
    }

    fn apply_layer(
        &self,
        job: &LayerJob,
        tree: &mut Tree<'_>,
        state: &mut State,
    ) -> Result<LayerInfo, ImageError> {
        let layer = job.shown.clone();
        let layer_err = |why: String| ImageError::Layer {
            layer: layer.clone(),
            why,
        };
        let opened = self
            .src
            .open(&job.name)
            .map_err(|e| layer_err(format!("reading {}: {e}", job.name)))?;
        let Some((raw, size)) = opened else {
            return Err(ImageError::MissingBlob {
                image: self.shown.to_string(),
                digest: job.shown.clone(),
                what: format!("layer {}", job.name),
            });
        };
        if let Some(want) = job.size {
            if want != size {
                return Err(layer_err(format!(
                    "the blob has {size} bytes where the manifest says {want}"
                )));
            }
        }
        let limit = state.budget.saturating_sub(state.decompressed);
        let read_here = Rc::new(Cell::new(0u64));
        let tripped = Rc::new(Cell::new(false));
        let (state_compressed, state_budget) = (state.compressed, state.budget);
        let mut blob = HashRead::new(raw, job.blob_sha256.is_some());
        let start = (state.bytes, state.entries);
        let mut compression_seen = Compression::None;

        let result = (|| -> Result<Option<String>, ImageError> {
            let mut buf = BufReader::with_capacity(256 * 1024, &mut blob);
            let head = buf
                .fill_buf()
                .map_err(|e| layer_err(format!("reading: {e}")))?;
            compression_seen = compression(&head[..head.len().min(6)]);
            let decoded: Box<dyn Read + '_> = match compression_seen {
                Compression::None => Box::new(buf),
                Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(buf)),
                Compression::Zstd => Box::new(
                    zstd::stream::read::Decoder::with_buffer(buf)
                        .map_err(|e| layer_err(format!("starting zstd: {e}")))?,
                ),
                other => {
                    return Err(ImageError::Unsupported {
                        what: format!("layer {layer}"),
                        why: format!(
                            "{}-compressed layers are not read (media type {})",
                            other.name(),
                            if job.media_type.is_empty() {
                                "unknown"
                            } else {
                                &job.media_type
                            }
                        ),
                    })
                }
            };
            let bounded = Bounded {
                inner: decoded,
                read: 0,
                limit,
                tripped: tripped.clone(),
                total: read_here.clone(),
            };
            let mut diff = HashRead::new(bounded, job.diff_sha256.is_some());
            let stream_err = |e: io::Error, entry: Option<String>| {
                if tripped.get() {
                    return ImageError::Bomb {
                        layer: layer.clone(),
                        compressed: state_compressed,
                        limit: state_budget,
                        ratio: self.limits.max_ratio,
                        allowance: self.limits.allowance,
                    };
                }
                let why = format!("corrupt or truncated layer: {}", excerpt(&e.to_string()));
                match entry {
                    Some(entry) => ImageError::Entry {
                        layer: layer.clone(),
                        entry,
                        why,
                    },
                    None => layer_err(why),
                }
            };
            {
                let mut archive = tar::Archive::new(&mut diff);
                let entries = archive.entries().map_err(|e| stream_err(e, None))?;
                for entry in entries {
                    cleanup::hold_if_interrupted();
                    let mut entry = entry.map_err(|e| stream_err(e, None))?;
                    let shown_path = excerpt(&String::from_utf8_lossy(&entry.path_bytes()));
                    state.entries += 1;
                    if state.entries > self.limits.max_entries {
                        return Err(ImageError::Limit {
                            what: format!("layer {layer}"),
                            why: format!(
                                "the image has more than {} entries",
                                self.limits.max_entries
                            ),
                        });
                    }
                    let budget = self.limits.max_unpacked_bytes.saturating_sub(state.bytes);
                    match tree.apply(&mut entry, budget) {
                        Ok(Applied::Written { bytes }) => state.bytes += bytes,
                        Ok(Applied::Nothing) => {}
                        Err(EntryError::Skip(reason)) => {
                            if state.skipped.len() < MAX_SKIPPED_LISTED {
                                state.skipped.push(SkippedEntry {
                                    layer: layer.clone(),
                                    path: shown_path,
                                    reason,
                                });
                            } else {
                                state.skipped_more += 1;
                            }
                        }
                        Err(EntryError::Escape(why)) | Err(EntryError::Loop(why)) => {
                            return Err(ImageError::Entry {
                                layer: layer.clone(),
                                entry: shown_path,
                                why,
                            })
                        }
                        Err(EntryError::Io(e)) => {
                            if let Some(b) =
                                e.get_ref().and_then(|i| i.downcast_ref::<BudgetExceeded>())
                            {
                                return Err(ImageError::Limit {
                                    what: format!("layer {layer}: entry {shown_path}"),
                                    why: format!(
                                        "{b}: {} bytes written so far, limit {}",
                                        state.bytes, self.limits.max_unpacked_bytes
                                    ),
                                });
                            }
                            return Err(stream_err(e, Some(shown_path)));
                        }
                    }
                }
            }
            // The rest of the stream (tar padding, the gzip trailer) counts toward the digests.
            io::copy(&mut diff, &mut io::sink()).map_err(|e| stream_err(e, None))?;
            Ok(diff.finish())
        })();
        let diff_actual = result?;
        state.decompressed = state.decompressed.saturating_add(read_here.get());
        io::copy(&mut blob, &mut io::sink()).map_err(|e| layer_err(format!("reading: {e}")))?;
        if let (Some(want), Some(actual)) = (&job.blob_sha256, blob.finish()) {
            if *want != actual {
                return Err(ImageError::DigestMismatch {
                    what: format!("layer {}", job.name),
                    digest: format!("sha256:{want}"),
                    actual: format!("sha256:{actual}"),
                });
            }
        }
        if let (Some(want), Some(actual)) = (&job.diff_sha256, diff_actual) {
            if *want != actual {
                return Err(ImageError::DigestMismatch {
                    what: format!("layer {} (uncompressed, the config's diff ID)", job.name),
                    digest: format!("sha256:{want}"),
                    actual: format!("sha256:{actual}"),
                });
            }
        }
        let media_type = if job.media_type.is_empty() {
            match compression_seen {
                Compression::Gzip => "application/vnd.docker.image.rootfs.diff.tar.gzip",
                _ => "application/vnd.docker.image.rootfs.diff.tar",
            }
            .to_string()
        } else {
            job.media_type.clone()
        };
        Ok(LayerInfo {
            digest: layer,
            media_type,
            compressed_bytes: size,
            unpacked_bytes: state.bytes - start.0,
            entries: state.entries - start.1,
        })
    }
}

/// The names an index entry goes by: its ref name, its containerd image name.
fn descriptor_names(desc: &Descriptor) -> Vec<String> {
    let Some(a) = &desc.annotations else {
        return Vec::new();
    };
    [CONTAINERD_NAME, REF_NAME]
        .iter()
        .filter_map(|k| a.get(*k).cloned())
        .collect()
}

fn docker_name(tags: &[String], i: usize) -> String {
    if tags.is_empty() {
        format!("(untagged image #{})", i + 1)
    } else {
        tags.join(" ")
    }
}

/// Counts and (optionally) hashes what passes through.
struct HashRead<R> {
    inner: R,
    hasher: Option<Sha256>,
}

impl<R> HashRead<R> {
    fn new(inner: R, hash: bool) -> Self {
        HashRead {
            inner,
            hasher: hash.then(Sha256::new),
        }
    }

    /// The digest (hex) of everything read.
    fn finish(&mut self) -> Option<String> {
        self.hasher.take().map(|h| hex(&h.finalize()))
    }
}

impl<R: Read> Read for HashRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(h) = &mut self.hasher {
            h.update(&buf[..n]);
        }
        Ok(n)
    }
}

/// Fails once more than `limit` bytes came through (a decompression bomb).
struct Bounded<R> {
    inner: R,
    read: u64,
    limit: u64,
    tripped: Rc<Cell<bool>>,
    /// `read`, for the caller once the reader is gone (the image's budget spans its layers).
    total: Rc<Cell<u64>>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        self.total.set(self.read);
        if self.read > self.limit {
            self.tripped.set(true);
            return Err(io::Error::other("decompressed size limit exceeded"));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests;
