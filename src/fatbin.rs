//! Lists the GPU architectures compiled into a CUDA shared library by walking the headers of
//! the fatbin containers in its `.nv_fatbin` ELF section. Payloads (the cubins and the PTX,
//! which make up nearly all of a 1 GB `libtorch_cuda.so`) are skipped by their declared size
//! and never read: the cost is 16 bytes per container and 64 per entry, plus the ELF headers.
//!
//! # The format (little-endian; no official specification exists)
//!
//! `.nv_fatbin` is a run of containers, one per translation unit (or per linked library).
//! Each starts with a 16-byte header:
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | u32 | magic `0xBA55ED50` (`FATBIN_MAGIC` in CUDA's `fatbinary_section.h`) |
//! | 4 | u16 | version, 1 |
//! | 6 | u16 | header size, 16 |
//! | 8 | u64 | size of the entries that follow (the container is header size + this) |
//!
//! then entries, each a header of at least 64 bytes followed by its payload:
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0x00 | u16 | kind: 1 PTX, 2 ELF (cubin/SASS), 8 LTO-IR (NVVM), 0x10 a not-yet-finalised device ELF (inferred), 0x40 relocatable PTX, … |
//! | 0x02 | u16 | 0x0101 |
//! | 0x04 | u32 | header size: 64 for ELF, 80 for PTX (options strings), up to 120 seen in CUDA 13 libraries; the payload starts here |
//! | 0x08 | u64 | payload size, padded (the stride to the next entry is header size + this) |
//! | 0x10 | u32 | compressed size (0 when stored raw) |
//! | 0x18 | u16, u16 | minor, major version (PTX ISA for PTX entries) |
//! | 0x1c | u32 | SM architecture as an integer: 90 = sm_90 / compute_90 |
//! | 0x28 | u64 | flags: 0x1 64-bit, 0x10 Linux host, 0x2000 compressed (the older LZ-style scheme), 0x8000 compressed (zstd), bit 20 arch-specific `a` suffix, bit 21 family `f` suffix, bit 24 set on sm_100+ cubins (a selection tie-break, ignored here) |
//! | 0x38 | u64 | decompressed size |
//!
//! Sources: jiegec/fatbinary (Rust, the 64-byte entry header and the flag bits 0x1/0x10/0x2000),
//! n-eiling/cuda-fatbin-decompression (the same layout and the compression flag), and
//! bechirBOUALI/cuda-fatbin-precedence (`scripts/fatbin_parser.py`: the zstd flag 0x8000, the
//! `a`/`f` suffix bits 20/21, the kinds beyond 1 and 2, and container chaining by
//! header size + size). The suffix bits come from that one reverse-engineered source only.
//! Checked against a real library (curand 10.3.7.77 from PyPI): 11 containers packed back to
//! back, ELF entries with 64-byte headers and flags 0x11, compressed PTX entries with
//! 80-byte headers and flags 0x2011, every size a multiple of 8; and the CUDA 13 build
//! (curand 10.4.5.25): 13 containers back to back, every entry zstd-compressed (0x8011),
//! entry headers of 64, 80, 104, 112 and 120 bytes. On both the result equals what
//! `cuobjdump --list-elf --list-ptx` lists.
//!
//! Containers follow each other with no gap (header size + size, as observed). The scanner
//! also tolerates zero padding between containers (a linker aligning input sections), by
//! skipping zero bytes up to the next magic, within [`MAX_PADDING`] bytes.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;

use object::elf;
use object::read::elf::{FileHeader, SectionHeader};
use object::read::{ReadCache, ReadRef};
use object::Endianness;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::fsys::HostFs;

pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// The name of the section that holds the containers.
pub const SECTION: &str = ".nv_fatbin";
const CONTAINER_HEADER: usize = 16;
/// The fixed part of an entry header: what is read of each entry.
const ENTRY_HEADER: usize = 64;

pub const KIND_PTX: u16 = 0x1;
pub const KIND_ELF: u16 = 0x2;
pub const KIND_LTO_IR: u16 = 0x8;
/// A device ELF the driver finalises before it runs ("capsule mercury"); named by no NVIDIA
/// tool, so this reading is an inference. It is SASS for one SM, so it counts as `sm_XY`.
pub const KIND_UNFINALIZED_ELF: u16 = 0x10;

pub const FLAG_COMPRESSED: u64 = 0x2000;
pub const FLAG_COMPRESSED_ZSTD: u64 = 0x8000;
/// `sm_90a`: architecture-specific features, runs only on that exact SM.
pub const FLAG_ARCH_SPECIFIC: u64 = 1 << 20;
/// `sm_100f`: family-specific features, runs on that SM family.
pub const FLAG_FAMILY_SPECIFIC: u64 = 1 << 21;

/// An architecture is part of the arch list when at least this share of containers carries
/// it. A build's targets are in every container (each translation unit is compiled for the
/// whole TORCH_CUDA_ARCH_LIST), so their share is near 100 %. The special kernels are
/// fewer: in the PyPI torch 2.15.0+cu132 wheel the targets are in all 476 containers while
/// sm_100a and sm_103f (CUTLASS/FlashAttention kernels) are in 59 (12.4 %) and sm_90a in 4.
/// Half the containers separates the two with room on both sides (10 % did not: it put
/// sm_100a and sm_103f in the list, which torch.cuda.get_arch_list() does not).
pub const DEFAULT_MAJORITY_PERCENT: u32 = 50;
/// Caps on the work done: a real libtorch_cuda.so has some thousands of containers and tens
/// of thousands of entries; past these the scan stops and says so (`complete: false`).
pub const MAX_CONTAINERS: u32 = 200_000;
pub const MAX_ENTRIES: u32 = 1_000_000;
/// The most zero padding skipped between two containers.
pub const MAX_PADDING: u64 = 64 * 1024;
/// Distinct architecture labels kept (garbage could claim a new one per entry).
const MAX_LABELS: usize = 4096;
const MAX_NOTES: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ArchCount {
    /// "sm_90", "sm_90a", "sm_100f", "compute_90"; also "lto_90" and "kind64_90" for
    /// entries that are neither SASS nor PTX.
    pub arch: String,
    /// Entries for this architecture.
    pub entries: u32,
    /// Containers with at least one entry for it.
    pub containers: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FatbinSummary {
    pub containers: u32,
    /// Sorted by kind (sm, compute, lto, others), then the SM number, then the suffix.
    pub counts: Vec<ArchCount>,
    /// Like `torch.cuda.get_arch_list()`: the sm_* then the compute_* architectures present in
    /// at least `majority_percent` % of the containers.
    pub arch_list: Vec<String>,
    /// sm_* and compute_* architectures present, but in fewer containers than that.
    pub extras: Vec<String>,
    /// Bytes read from the file (ELF headers, section table, fatbin headers), or from the
    /// slice for `scan_section`: proof that payloads were skipped.
    pub bytes_read: u64,
    /// Entries seen, and how many of them had a compressed payload (skipped like the rest).
    pub entries: u32,
    pub compressed_entries: u32,
    /// Size of the `.nv_fatbin` section; 0 when the library has none.
    pub section_size: u64,
    pub majority_percent: u32,
    /// False when the walk stopped early (a cap, a truncated or unrecognised header): the
    /// counts then cover only what came before; `notes` says why.
    pub complete: bool,
    pub notes: Vec<String>,
}

/// Knobs of a scan; `Default` gives the documented constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    pub majority_percent: u32,
    pub max_containers: u32,
    pub max_entries: u32,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            majority_percent: DEFAULT_MAJORITY_PERCENT,
            max_containers: MAX_CONTAINERS,
            max_entries: MAX_ENTRIES,
        }
    }
}

/// Reads the `.nv_fatbin` section of the ELF file at `path` (headers only).
pub fn scan(fs: &HostFs, path: &Path) -> Result<FatbinSummary, String> {
    scan_with(fs, path, &ScanOptions::default())
}

/// The same over an in-memory section payload (for unit tests).
pub fn scan_section(bytes: &[u8]) -> Result<FatbinSummary, String> {
    scan_section_with(bytes, &ScanOptions::default())
}

pub fn scan_section_with(bytes: &[u8], opts: &ScanOptions) -> Result<FatbinSummary, String> {
    let src = SliceSource(bytes);
    let mut walk = Walk::new(&src, opts);
    walk.run()?;
    Ok(walk.finish(bytes.len() as u64, 0))
}

pub fn scan_with(fs: &HostFs, path: &Path, opts: &ScanOptions) -> Result<FatbinSummary, String> {
    let file = fs.open_regular(path).map_err(|e| e.to_string())?;
    let header_bytes = Cell::new(0u64);
    let found = {
        let cache = ReadCache::new(Counting {
            file: &file,
            read: &header_bytes,
        });
        find_section(&cache).map_err(|e| format!("{}: {e}", path.display()))?
    };
    let file_len = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    let mut notes = Vec::new();
    let (offset, size) = match found {
        Found::Absent => {
            notes.push(format!(
                "no {SECTION} section: the library carries no CUDA device code"
            ));
            (0, 0)
        }
        Found::NoBits => {
            notes.push(format!("{SECTION} has no file data (SHT_NOBITS)"));
            (0, 0)
        }
        Found::At { offset, size } => {
            if offset > file_len {
                return Err(format!(
                    "{}: {SECTION} starts at {offset:#x}, past the end of the file ({file_len:#x}): truncated file",
                    path.display()
                ));
            }
            let avail = file_len - offset;
            if size > avail {
                notes.push(format!(
                    "{SECTION} claims {size} bytes but the file holds {avail} of them (truncated file)"
                ));
            }
            (offset, size.min(avail))
        }
    };
    let src = FileSource {
        file: &file,
        base: offset,
        len: size,
    };
    let mut walk = Walk::new(&src, opts);
    if !notes.is_empty() && size > 0 {
        walk.complete = false;
    }
    walk.notes = notes;
    walk.run().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(walk.finish(size, header_bytes.get()))
}

enum Found {
    Absent,
    NoBits,
    At { offset: u64, size: u64 },
}

fn find_section(cache: &ReadCache<Counting<'_>>) -> Result<Found, String> {
    let ident = cache
        .read_bytes_at(0, 16)
        .map_err(|_| "too short for an ELF header".to_string())?;
    if ident.get(..4) != Some(&elf::ELFMAG[..]) {
        return Err("not an ELF file".to_string());
    }
    match ident.get(4) {
        Some(2) => find_in::<elf::FileHeader64<Endianness>, _>(cache),
        Some(1) => find_in::<elf::FileHeader32<Endianness>, _>(cache),
        _ => Err("unknown ELF class".to_string()),
    }
}

fn find_in<'data, H, R>(data: R) -> Result<Found, String>
where
    H: FileHeader<Endian = Endianness>,
    R: ReadRef<'data>,
{
    let header = H::parse(data).map_err(|e| e.to_string())?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    let sections = header.sections(endian, data).map_err(|e| e.to_string())?;
    let Some((_, section)) = sections.section_by_name(endian, SECTION.as_bytes()) else {
        return Ok(Found::Absent);
    };
    Ok(match section.file_range(endian) {
        Some((offset, size)) => Found::At { offset, size },
        None => Found::NoBits,
    })
}

/// A file reader that counts what it reads (for `bytes_read`).
struct Counting<'a> {
    file: &'a File,
    read: &'a Cell<u64>,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read.set(self.read.get().saturating_add(n as u64));
        Ok(n)
    }
}

impl Seek for Counting<'_> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

/// Where the section's bytes come from: offsets are relative to the section start.
trait Source {
    fn len(&self) -> u64;
    /// Fills `buf` from `offset`; the caller keeps `offset + buf.len() <= len()`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String>;
}

struct SliceSource<'a>(&'a [u8]);

impl Source for SliceSource<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        let start = usize::try_from(offset).map_err(|_| "offset out of range".to_string())?;
        let bytes = start
            .checked_add(buf.len())
            .and_then(|end| self.0.get(start..end))
            .ok_or_else(|| format!("read past the end of the section at {offset:#x}"))?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

struct FileSource<'a> {
    file: &'a File,
    base: u64,
    len: u64,
}

impl Source for FileSource<'_> {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        let at = self
            .base
            .checked_add(offset)
            .ok_or_else(|| "offset overflow".to_string())?;
        self.file
            .read_exact_at(buf, at)
            .map_err(|e| format!("reading {SECTION} at {offset:#x}: {e}"))
    }
}

/// How a label sorts: SASS, then PTX, then LTO-IR, then anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    Sass,
    Ptx,
    Lto,
    Other(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ArchKey {
    family: Family,
    arch: u32,
    /// 0: none, 1: `a`, 2: `f`.
    suffix: u8,
}

impl ArchKey {
    fn new(kind: u16, arch: u32, flags: u64) -> ArchKey {
        let family = match kind {
            KIND_ELF | KIND_UNFINALIZED_ELF => Family::Sass,
            KIND_PTX => Family::Ptx,
            KIND_LTO_IR => Family::Lto,
            k => Family::Other(k),
        };
        let suffix = if flags & FLAG_ARCH_SPECIFIC != 0 {
            1
        } else if flags & FLAG_FAMILY_SPECIFIC != 0 {
            2
        } else {
            0
        };
        ArchKey {
            family,
            arch,
            suffix,
        }
    }

    fn label(&self) -> String {
        let suffix = match self.suffix {
            1 => "a",
            2 => "f",
            _ => "",
        };
        match self.family {
            Family::Sass => format!("sm_{}{suffix}", self.arch),
            Family::Ptx => format!("compute_{}{suffix}", self.arch),
            Family::Lto => format!("lto_{}{suffix}", self.arch),
            Family::Other(k) => format!("kind{k}_{}{suffix}", self.arch),
        }
    }

    fn in_arch_list(&self) -> bool {
        matches!(self.family, Family::Sass | Family::Ptx)
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    entries: u32,
    containers: u32,
}

/// What stopped the walk over a container's entries.
enum Stop {
    /// The whole scan (a cap was hit).
    All,
    /// Only this container; the next one is found by the container's size.
    Container,
    None,
}

struct Walk<'s, S: Source> {
    src: &'s S,
    opts: ScanOptions,
    bytes_read: u64,
    tally: BTreeMap<ArchKey, Tally>,
    containers: u32,
    entries: u32,
    compressed: u32,
    complete: bool,
    notes: Vec<String>,
    dropped_notes: u32,
}

impl<'s, S: Source> Walk<'s, S> {
    fn new(src: &'s S, opts: &ScanOptions) -> Self {
        Walk {
            src,
            opts: *opts,
            bytes_read: 0,
            tally: BTreeMap::new(),
            containers: 0,
            entries: 0,
            compressed: 0,
            complete: true,
            notes: Vec::new(),
            dropped_notes: 0,
        }
    }

    fn note(&mut self, text: String) {
        self.complete = false;
        if self.notes.len() < MAX_NOTES {
            self.notes.push(text);
        } else {
            self.dropped_notes = self.dropped_notes.saturating_add(1);
        }
    }

    fn read<const N: usize>(&mut self, offset: u64) -> Result<[u8; N], String> {
        let mut buf = [0u8; N];
        self.src.read_at(offset, &mut buf)?;
        self.bytes_read = self.bytes_read.saturating_add(N as u64);
        Ok(buf)
    }

    fn run(&mut self) -> Result<(), String> {
        let len = self.src.len();
        let mut pos = 0u64;
        while pos < len {
            if self.containers >= self.opts.max_containers {
                self.note(format!(
                    "stopped after {} containers (the cap); later ones are not counted",
                    self.containers
                ));
                break;
            }
            let header = if len - pos >= CONTAINER_HEADER as u64 {
                Some(self.read::<CONTAINER_HEADER>(pos)?)
            } else {
                None
            };
            let Some(header) = header.filter(|h| le_u32(h, 0) == FATBIN_MAGIC) else {
                // Zero padding up to the next container, or the end; anything else stops.
                match self.skip_zeros(pos)? {
                    Some(next) if next > pos => {
                        pos = next;
                        continue;
                    }
                    Some(_) => self.note(format!(
                        "no fatbin header at offset {pos:#x} of {SECTION}; the rest is not counted"
                    )),
                    None => {}
                }
                break;
            };
            let start = pos;
            let header_size = u64::from(le_u16(&header, 6));
            let size = le_u64(&header, 8);
            let version = le_u16(&header, 4);
            if header_size < CONTAINER_HEADER as u64 {
                self.note(format!(
                    "container at {start:#x} has header size {header_size} (version {version}); stopped"
                ));
                break;
            }
            let body = start.saturating_add(header_size);
            let (end, truncated) = match body.checked_add(size) {
                Some(end) if end <= len => (end, false),
                _ => (len, true),
            };
            self.containers += 1;
            let stop = self.container(start, body, end)?;
            if truncated {
                self.note(format!(
                    "container at {start:#x} claims {size} bytes of entries, past the end of {SECTION}; stopped"
                ));
                break;
            }
            if let Stop::All = stop {
                break;
            }
            pos = end;
        }
        Ok(())
    }

    /// The offset of the first non-zero byte at or after `pos`, or the section's length when
    /// only zeros follow. `None` (with a note) past `MAX_PADDING` zero bytes.
    fn skip_zeros(&mut self, pos: u64) -> Result<Option<u64>, String> {
        let len = self.src.len();
        let mut at = pos;
        // A small first look (padding to 8 or 16 bytes), then larger chunks.
        let mut chunk = 32u64;
        while at < len {
            if at - pos > MAX_PADDING {
                self.note(format!(
                    "more than {MAX_PADDING} zero bytes after offset {pos:#x} of {SECTION}; stopped"
                ));
                return Ok(None);
            }
            let n = chunk.min(len - at);
            let mut buf = vec![0u8; usize::try_from(n).unwrap_or(0)];
            self.src.read_at(at, &mut buf)?;
            self.bytes_read = self.bytes_read.saturating_add(n);
            if let Some(i) = buf.iter().position(|&b| b != 0) {
                return Ok(Some(at + i as u64));
            }
            at += n;
            chunk = 4096;
        }
        Ok(Some(len))
    }

    fn container(&mut self, start: u64, body: u64, end: u64) -> Result<Stop, String> {
        let mut seen: BTreeSet<ArchKey> = BTreeSet::new();
        let mut at = body;
        let mut stop = Stop::None;
        while at < end {
            if self.entries >= self.opts.max_entries {
                self.note(format!(
                    "stopped after {} entries (the cap); later ones are not counted",
                    self.entries
                ));
                stop = Stop::All;
                break;
            }
            if end - at < ENTRY_HEADER as u64 {
                self.note(format!(
                    "container at {start:#x}: {} bytes after its last entry, too few for an entry header",
                    end - at
                ));
                stop = Stop::Container;
                break;
            }
            let h = self.read::<ENTRY_HEADER>(at)?;
            let kind = le_u16(&h, 0x00);
            let header_size = u64::from(le_u32(&h, 0x04));
            let payload = le_u64(&h, 0x08);
            let arch = le_u32(&h, 0x1c);
            let flags = le_u64(&h, 0x28);
            if header_size < ENTRY_HEADER as u64 {
                self.note(format!(
                    "container at {start:#x}: entry at {at:#x} has header size {header_size}; rest of the container skipped"
                ));
                stop = Stop::Container;
                break;
            }
            self.entries += 1;
            if flags & (FLAG_COMPRESSED | FLAG_COMPRESSED_ZSTD) != 0 {
                self.compressed += 1;
            }
            let key = ArchKey::new(kind, arch, flags);
            if self.tally.len() < MAX_LABELS || self.tally.contains_key(&key) {
                let t = self.tally.entry(key).or_default();
                t.entries = t.entries.saturating_add(1);
                seen.insert(key);
            } else {
                self.note(format!(
                    "more than {MAX_LABELS} distinct architectures: {} not counted",
                    key.label()
                ));
            }
            match at
                .checked_add(header_size)
                .and_then(|p| p.checked_add(payload))
            {
                Some(next) if next <= end => at = next,
                _ => {
                    self.note(format!(
                        "container at {start:#x}: entry at {at:#x} claims {payload} payload bytes, past the container's end"
                    ));
                    stop = Stop::Container;
                    break;
                }
            }
        }
        for key in seen {
            if let Some(t) = self.tally.get_mut(&key) {
                t.containers = t.containers.saturating_add(1);
            }
        }
        Ok(stop)
    }

    fn finish(mut self, section_size: u64, header_bytes: u64) -> FatbinSummary {
        if self.dropped_notes > 0 {
            self.notes
                .push(format!("{} more notes left out", self.dropped_notes));
        }
        let total = u64::from(self.containers);
        let pct = u64::from(self.opts.majority_percent);
        let mut arch_list = Vec::new();
        let mut extras = Vec::new();
        let mut counts = Vec::with_capacity(self.tally.len());
        for (key, t) in &self.tally {
            let label = key.label();
            if key.in_arch_list() {
                if u64::from(t.containers) * 100 >= total * pct {
                    arch_list.push(label.clone());
                } else {
                    extras.push(label.clone());
                }
            }
            counts.push(ArchCount {
                arch: label,
                entries: t.entries,
                containers: t.containers,
            });
        }
        FatbinSummary {
            containers: self.containers,
            counts,
            arch_list,
            extras,
            bytes_read: self.bytes_read.saturating_add(header_bytes),
            entries: self.entries,
            compressed_entries: self.compressed,
            section_size,
            majority_percent: self.opts.majority_percent,
            complete: self.complete,
            notes: self.notes,
        }
    }
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u16::from_le_bytes)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One entry header (64 bytes, or 80 for PTX like nvcc writes) and `payload` zero bytes.
    fn entry(kind: u16, arch: u32, flags: u64, payload: u64) -> Vec<u8> {
        let header: u32 = if kind == KIND_PTX { 80 } else { 64 };
        let mut e = Vec::new();
        e.extend_from_slice(&kind.to_le_bytes());
        e.extend_from_slice(&0x0101u16.to_le_bytes());
        e.extend_from_slice(&header.to_le_bytes());
        e.extend_from_slice(&payload.to_le_bytes());
        e.extend_from_slice(&[0; 8]); // compressed size, options offset
        e.extend_from_slice(&7u16.to_le_bytes());
        e.extend_from_slice(&1u16.to_le_bytes());
        e.extend_from_slice(&arch.to_le_bytes());
        e.extend_from_slice(&[0; 8]); // identifier offset and length
        e.extend_from_slice(&(flags | 0x11).to_le_bytes());
        e.extend_from_slice(&[0; 16]);
        e.resize(header as usize + payload as usize, 0);
        e
    }

    fn container(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut c = Vec::new();
        c.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        c.extend_from_slice(&1u16.to_le_bytes());
        c.extend_from_slice(&16u16.to_le_bytes());
        c.extend_from_slice(&(body.len() as u64).to_le_bytes());
        c.extend_from_slice(&body);
        c
    }

    fn typical() -> Vec<u8> {
        let tu = || {
            container(&[
                entry(KIND_ELF, 80, 0, 24),
                entry(KIND_ELF, 90, 0, 40),
                entry(KIND_PTX, 90, FLAG_COMPRESSED, 16),
            ])
        };
        let mut s = Vec::new();
        for _ in 0..10 {
            s.extend(tu());
        }
        s.extend(container(&[entry(KIND_ELF, 90, FLAG_ARCH_SPECIFIC, 8)]));
        s
    }

    #[test]
    fn majority_and_extras() {
        let s = scan_section(&typical()).unwrap();
        // sm_90a is in 1 of 11 containers (9 %): an extra.
        assert_eq!(s.containers, 11);
        assert_eq!(s.arch_list, ["sm_80", "sm_90", "compute_90"]);
        assert_eq!(s.extras, ["sm_90a"]);
        assert_eq!(s.entries, 31);
        assert_eq!(s.compressed_entries, 10);
        assert!(s.complete, "{:?}", s.notes);
        // 11 container headers and 31 entry headers, nothing else.
        assert_eq!(s.bytes_read, 11 * 16 + 31 * 64);
        let sm90a = s.counts.iter().find(|c| c.arch == "sm_90a").unwrap();
        assert_eq!((sm90a.entries, sm90a.containers), (1, 1));
        // The threshold is a knob: at 5 % the special kernel joins the list.
        let loose = scan_section_with(
            &typical(),
            &ScanOptions {
                majority_percent: 5,
                ..ScanOptions::default()
            },
        )
        .unwrap();
        assert_eq!(loose.arch_list, ["sm_80", "sm_90", "sm_90a", "compute_90"]);
        assert!(loose.extras.is_empty());
    }

    #[test]
    fn labels_sort_numerically_and_by_kind() {
        let s = scan_section(&container(&[
            entry(KIND_PTX, 120, 0, 8),
            entry(KIND_ELF, 120, 0, 8),
            entry(KIND_ELF, 100, FLAG_FAMILY_SPECIFIC, 8),
            entry(KIND_ELF, 75, 0, 8),
            entry(KIND_LTO_IR, 90, 0, 8),
            entry(0x40, 90, 0, 8),
        ]))
        .unwrap();
        let labels: Vec<_> = s.counts.iter().map(|c| c.arch.as_str()).collect();
        assert_eq!(
            labels,
            [
                "sm_75",
                "sm_100f",
                "sm_120",
                "compute_120",
                "lto_90",
                "kind64_90"
            ]
        );
        assert_eq!(s.arch_list, ["sm_75", "sm_100f", "sm_120", "compute_120"]);
    }

    #[test]
    fn zero_padding_between_containers_is_skipped() {
        let mut s = container(&[entry(KIND_ELF, 86, 0, 8)]);
        s.extend([0u8; 24]);
        s.extend(container(&[entry(KIND_ELF, 86, 0, 8)]));
        s.extend([0u8; 8]);
        let r = scan_section(&s).unwrap();
        assert_eq!(r.containers, 2);
        assert!(r.complete, "{:?}", r.notes);
    }

    #[test]
    fn empty_section_is_empty() {
        let r = scan_section(&[]).unwrap();
        assert_eq!(r.containers, 0);
        assert!(r.arch_list.is_empty() && r.complete);
    }

    #[test]
    fn caps_stop_the_walk_and_say_so() {
        let r = scan_section_with(
            &typical(),
            &ScanOptions {
                max_containers: 3,
                ..ScanOptions::default()
            },
        )
        .unwrap();
        assert_eq!(r.containers, 3);
        assert!(!r.complete);
        assert!(r.notes.iter().any(|n| n.contains("cap")), "{:?}", r.notes);
        let r = scan_section_with(
            &typical(),
            &ScanOptions {
                max_entries: 4,
                ..ScanOptions::default()
            },
        )
        .unwrap();
        assert_eq!(r.entries, 4);
        assert!(!r.complete);
    }

    #[test]
    fn absurd_sizes_are_notes_not_panics() {
        let mut s = container(&[entry(KIND_ELF, 80, 0, 8)]);
        // Container size u64::MAX.
        s[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let r = scan_section(&s).unwrap();
        assert_eq!(r.arch_list, ["sm_80"]);
        assert!(!r.complete);
        // Entry payload u64::MAX.
        let mut s = container(&[entry(KIND_ELF, 80, 0, 8)]);
        s[16 + 8..16 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        let r = scan_section(&s).unwrap();
        assert_eq!(r.entries, 1);
        assert!(!r.complete);
        // Entry header size u32::MAX.
        let mut s = container(&[entry(KIND_ELF, 80, 0, 8)]);
        s[16 + 4..16 + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(!scan_section(&s).unwrap().complete);
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            if n == 0 {
                0
            } else {
                (self.next() % n as u64) as usize
            }
        }
    }

    fn survives(b: &[u8]) {
        match scan_section(b) {
            Ok(s) => {
                assert!(s.bytes_read <= b.len() as u64 + 4096 + 64);
                assert!(s.counts.iter().all(|c| c.containers <= s.containers));
            }
            Err(e) => assert!(!e.is_empty()),
        }
    }

    #[test]
    fn fuzz_truncations_and_flips_never_panic() {
        let seed = typical();
        for cut in 0..=seed.len() {
            survives(&seed[..cut]);
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let mut b = seed.clone();
            match rng.below(4) {
                0 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = rng.below(b.len());
                        b[i] ^= 1 << rng.below(8);
                    }
                }
                1 => {
                    let i = rng.below(b.len() / 8) * 8;
                    let v: u64 = match rng.below(4) {
                        0 => u64::MAX,
                        1 => 1 << 63,
                        2 => rng.below(b.len() + 64) as u64,
                        _ => rng.next(),
                    };
                    b[i..i + 8].copy_from_slice(&v.to_le_bytes());
                }
                2 => {
                    b.truncate(rng.below(b.len()));
                    if !b.is_empty() {
                        let i = rng.below(b.len());
                        b[i] = rng.next() as u8;
                    }
                }
                _ => {
                    let keep = 16 + rng.below(64);
                    for x in b.iter_mut().skip(keep) {
                        *x = rng.next() as u8;
                    }
                }
            }
            survives(&b);
        }
    }
}
