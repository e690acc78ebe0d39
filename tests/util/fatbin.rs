//! Writes CUDA fatbin containers (the `.nv_fatbin` section of a CUDA library) for fixtures:
//! real headers, payloads of zeros of a stated size. The layout is the one gpudoctor's
//! reader documents in src/fatbin.rs: a 16-byte container header (magic 0xBA55ED50,
//! version 1, header size 16, size of the entries) and per entry a 64-byte header (80 for
//! PTX, as nvcc writes it) followed by the payload; containers back to back.

use super::elf::{shared_object_with, ExtraSection, Placement, HOST_MACHINE};

pub const MAGIC: u32 = 0xBA55_ED50;
/// Payload bytes of each entry `fatbin_section` writes.
pub const PAYLOAD: u64 = 32;
/// Flag bits: 64-bit | Linux host (what every real entry has), compressed (legacy scheme),
/// compressed (zstd), arch-specific `a`, family `f`.
pub const FLAGS_BASE: u64 = 0x11;
pub const FLAG_COMPRESSED: u64 = 0x2000;
pub const FLAG_COMPRESSED_ZSTD: u64 = 0x8000;
pub const FLAG_ARCH_SPECIFIC: u64 = 1 << 20;
pub const FLAG_FAMILY: u64 = 1 << 21;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 1: PTX (`compute_XY`).
    Ptx,
    /// 2: an ELF cubin (SASS, `sm_XY`).
    Elf,
    /// Any other kind value (8 = LTO-IR, 0x40 = relocatable PTX, ...).
    Raw(u16),
}

impl Kind {
    pub fn value(self) -> u16 {
        match self {
            Kind::Ptx => 1,
            Kind::Elf => 2,
            Kind::Raw(k) => k,
        }
    }
}

/// One entry with every knob.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub kind: Kind,
    pub sm: u32,
    /// Flag bits besides FLAGS_BASE (FLAG_ARCH_SPECIFIC, FLAG_COMPRESSED, ...).
    pub flags: u64,
    /// Payload size as stored in the header (the stride past the header).
    pub payload: u64,
    /// Entry header size: 0 picks nvcc's (64, or 80 for PTX).
    pub header_size: u32,
}

impl Entry {
    pub fn new(kind: Kind, sm: u32) -> Entry {
        Entry {
            kind,
            sm,
            flags: 0,
            payload: PAYLOAD,
            header_size: 0,
        }
    }
    pub fn flags(mut self, flags: u64) -> Entry {
        self.flags |= flags;
        self
    }
    pub fn payload(mut self, payload: u64) -> Entry {
        self.payload = payload;
        self
    }
    fn header_len(&self) -> u32 {
        match (self.header_size, self.kind) {
            (0, Kind::Ptx) => 80,
            (0, _) => 64,
            (n, _) => n,
        }
    }
    fn header(&self) -> Vec<u8> {
        let compressed = self.flags & (FLAG_COMPRESSED | FLAG_COMPRESSED_ZSTD) != 0;
        let mut h = Vec::new();
        h.extend_from_slice(&self.kind.value().to_le_bytes());
        h.extend_from_slice(&0x0101u16.to_le_bytes());
        h.extend_from_slice(&self.header_len().to_le_bytes());
        h.extend_from_slice(&self.payload.to_le_bytes());
        // Compressed size (the stream length inside the padded payload) and options offset.
        let csize = if compressed { self.payload as u32 } else { 0 };
        h.extend_from_slice(&csize.to_le_bytes());
        let opts: u32 = if self.kind == Kind::Ptx { 0x40 } else { 0 };
        h.extend_from_slice(&opts.to_le_bytes());
        let (major, minor): (u16, u16) = if self.kind == Kind::Ptx {
            (8, 5)
        } else {
            (1, 7)
        };
        h.extend_from_slice(&minor.to_le_bytes());
        h.extend_from_slice(&major.to_le_bytes());
        h.extend_from_slice(&self.sm.to_le_bytes());
        h.extend_from_slice(&[0; 8]); // identifier offset, length
        h.extend_from_slice(&(FLAGS_BASE | self.flags).to_le_bytes());
        h.extend_from_slice(&0u64.to_le_bytes()); // obfuscation key
        let decompressed = if compressed { self.payload * 3 } else { 0 };
        h.extend_from_slice(&decompressed.to_le_bytes());
        h.resize(self.header_len() as usize, 0);
        h
    }
}

/// A section whose payload bytes are not materialised: its length, and the header bytes
/// with their offsets. Everything else is zeros (or a hole in a sparse file).
pub struct SparseSection {
    pub len: u64,
    pub pieces: Vec<(u64, Vec<u8>)>,
}

impl SparseSection {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len as usize];
        for (at, bytes) in &self.pieces {
            out[*at as usize..*at as usize + bytes.len()].copy_from_slice(bytes);
        }
        out
    }

    /// Writes the pieces into `file` with the section starting at `base`.
    pub fn write_into(&self, file: &std::fs::File, base: u64) {
        use std::os::unix::fs::FileExt;
        for (at, bytes) in &self.pieces {
            file.write_all_at(bytes, base + at).expect("write piece");
        }
    }
}

/// The containers, headers only, back to back.
pub fn sparse_section(containers: &[Vec<Entry>]) -> SparseSection {
    let mut pieces = Vec::new();
    let mut at = 0u64;
    for entries in containers {
        let size: u64 = entries
            .iter()
            .map(|e| u64::from(e.header_len()) + e.payload)
            .sum();
        let mut h = Vec::new();
        h.extend_from_slice(&MAGIC.to_le_bytes());
        h.extend_from_slice(&1u16.to_le_bytes());
        h.extend_from_slice(&16u16.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        pieces.push((at, h));
        at += 16;
        for e in entries {
            pieces.push((at, e.header()));
            at += u64::from(e.header_len()) + e.payload;
        }
    }
    SparseSection { len: at, pieces }
}

/// Containers of fully specified entries, materialised.
pub fn fatbin_section_entries(containers: &[Vec<Entry>]) -> Vec<u8> {
    sparse_section(containers).to_bytes()
}

/// Containers of `(kind, sm, arch-specific "a")` entries, each with PAYLOAD zero bytes.
pub fn fatbin_section(containers: &[&[(Kind, u32, bool)]]) -> Vec<u8> {
    let containers: Vec<Vec<Entry>> = containers
        .iter()
        .map(|c| {
            c.iter()
                .map(|&(kind, sm, a)| {
                    Entry::new(kind, sm).flags(if a { FLAG_ARCH_SPECIFIC } else { 0 })
                })
                .collect()
        })
        .collect();
    fatbin_section_entries(&containers)
}

/// A minimal ELF64 shared object for this machine with a `.nv_fatbin` section.
pub fn elf_with_fatbin(soname: &str, section: &[u8]) -> Vec<u8> {
    shared_object_with(
        HOST_MACHINE,
        soname,
        &[],
        &[ExtraSection {
            name: ".nv_fatbin",
            data: Placement::Inline(section),
        }],
    )
}

/// The head of an ELF whose `.nv_fatbin` (`size` bytes) is at file offset `offset`, which the
/// caller fills (for a sparse file: `set_len`, then `SparseSection::write_into`).
pub fn elf_with_fatbin_at(soname: &str, offset: u64, size: u64) -> Vec<u8> {
    shared_object_with(
        HOST_MACHINE,
        soname,
        &[],
        &[ExtraSection {
            name: ".nv_fatbin",
            data: Placement::At { offset, size },
        }],
    )
}
