//! Parser for glibc's `/etc/ld.so.cache`, in all three layouts ldconfig writes
//! (`ldconfig -c old|new|compat`).
//!
//! Layouts, from glibc's `sysdeps/generic/dl-cache.h` and `elf/cache.c` (save_cache):
//! - old: `struct cache_file` (magic "ld.so-1.7.0", padded to 12, `nlibs`), then
//!   `nlibs` × `struct file_entry` (12 bytes). String offsets count from the end of
//!   the entries.
//! - new (the default since glibc 2.32): `struct cache_file_new` (48 bytes) at the
//!   start of the file, then `nlibs` × `struct file_entry_new` (24 bytes). String
//!   offsets count from the start of the new header, here the start of the file.
//! - compat: an old table (its count rounded up to even), then, aligned to
//!   `ALIGN_CACHE`, a complete new table hidden in the old string area. New
//!   offsets still count from the new header; old ones from the end of the old
//!   entries. The loader (elf/dl-cache.c) uses the new table when it is present.
//!
//! The new header's extension directory (glibc ≥ 2.33) holds file offsets; only
//! its generator string is read here.
//!
//! This runs on broken machines: every read is bounds-checked, counts are capped
//! by what the file can hold, and any input gives `Ok` or `Err`, never a panic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::cmp::Ordering;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// Magic strings: sysdeps/generic/dl-cache.h (CACHEMAGIC, CACHEMAGIC_VERSION_NEW).
const OLD_MAGIC: &[u8] = b"ld.so-1.7.0";
const NEW_MAGIC: &[u8] = b"glibc-ld.so.cache";
const NEW_VERSION: &[u8] = b"1.1";

// Sizes of the on-disk structs (sysdeps/generic/dl-cache.h). The old header is
// 11 magic bytes, one byte of padding, then `unsigned int nlibs`.
const OLD_HEADER: usize = 16;
const OLD_NLIBS_AT: usize = 12;
const OLD_ENTRY: usize = 12;
const NEW_HEADER: usize = 48;
const NEW_ENTRY: usize = 24;
// Field offsets in struct cache_file_new.
const NEW_NLIBS_AT: usize = 20;
const NEW_FLAGS_AT: usize = 28;
const NEW_EXTENSION_AT: usize = 32;

// cache_file_new_flags_endian_* (sysdeps/generic/dl-cache.h).
const ENDIAN_MASK: u8 = 3;
const ENDIAN_INVALID: u8 = 1;
const ENDIAN_LITTLE: u8 = 2;
const ENDIAN_BIG: u8 = 3;
const ENDIAN_HOST: u8 = if cfg!(target_endian = "little") {
    ENDIAN_LITTLE
} else {
    ENDIAN_BIG
};

// cache_extension_magic and cache_extension_tag_generator (sysdeps/generic/dl-cache.h).
const EXTENSION_MAGIC: u32 = (-358342284_i32) as u32;
const EXTENSION_TAG_GENERATOR: u32 = 0;
const EXTENSION_SECTION: usize = 16;

/// The loader cannot open a longer path, so a longer string means corruption.
const PATH_MAX: usize = 4096;

/// ALIGN_CACHE aligns to `__alignof__ (struct cache_file_new)`, which holds a
/// uint64_t: 8 on 64-bit targets, 4 on i386. A C-layout probe gives the same.
const NEW_ALIGN: usize = {
    #[repr(C)]
    struct Probe {
        _a: u32,
        _b: u64,
    }
    std::mem::align_of::<Probe>()
};

// Library flags, from glibc's sysdeps/generic/ldconfig.h.
pub const FLAG_TYPE_MASK: i32 = 0x00ff;
pub const FLAG_LIBC4: i32 = 0x0000;
pub const FLAG_ELF: i32 = 0x0001;
pub const FLAG_ELF_LIBC5: i32 = 0x0002;
pub const FLAG_ELF_LIBC6: i32 = 0x0003;
pub const FLAG_REQUIRED_MASK: i32 = 0xff00;
pub const FLAG_SPARC_LIB64: i32 = 0x0100;
pub const FLAG_IA64_LIB64: i32 = 0x0200;
pub const FLAG_X8664_LIB64: i32 = 0x0300;
pub const FLAG_S390_LIB64: i32 = 0x0400;
pub const FLAG_POWERPC_LIB64: i32 = 0x0500;
pub const FLAG_MIPS64_LIBN32: i32 = 0x0600;
pub const FLAG_MIPS64_LIBN64: i32 = 0x0700;
pub const FLAG_X8664_LIBX32: i32 = 0x0800;
pub const FLAG_ARM_LIBHF: i32 = 0x0900;
pub const FLAG_AARCH64_LIB64: i32 = 0x0a00;
pub const FLAG_ARM_LIBSF: i32 = 0x0b00;
pub const FLAG_MIPS_LIB32_NAN2008: i32 = 0x0c00;
pub const FLAG_MIPS64_LIBN32_NAN2008: i32 = 0x0d00;
pub const FLAG_MIPS64_LIBN64_NAN2008: i32 = 0x0e00;
pub const FLAG_RISCV_FLOAT_ABI_SOFT: i32 = 0x0f00;
pub const FLAG_RISCV_FLOAT_ABI_DOUBLE: i32 = 0x1000;
pub const FLAG_LARCH_FLOAT_ABI_SOFT: i32 = 0x1100;
pub const FLAG_LARCH_FLOAT_ABI_DOUBLE: i32 = 0x1200;

/// A parsed cache. `entries` are in file order, which is the order the loader
/// searches them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LdCache {
    pub format: CacheFormat,
    pub entries: Vec<CacheEntry>,
    /// "ldconfig (GNU libc) release version 2.36"-style text from the new
    /// format's extension section (glibc ≥ 2.33), when present and well formed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheFormat {
    Old,
    New,
    /// An old table followed by a new one; the entries come from the new one.
    Compat,
}

impl CacheFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheFormat::Old => "old",
            CacheFormat::New => "new",
            CacheFormat::Compat => "compat",
        }
    }
}

impl fmt::Display for CacheFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The key, e.g. "libcuda.so.1".
    pub soname: String,
    /// The value, e.g. "/usr/lib/x86_64-linux-gnu/libcuda.so.1".
    pub path: String,
    pub flags: i32,
    /// 0 when absent (old format) or unset.
    pub hwcap: u64,
}

impl CacheEntry {
    pub fn arch(&self) -> CacheArch {
        CacheArch::from_flags(self.flags)
    }
}

/// The ABI an entry is for, decoded from its flags (sysdeps/generic/ldconfig.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheArch {
    /// FLAG_ELF_LIBC6 (or FLAG_ELF) with no ABI bits: i386 and the other targets
    /// that use glibc's generic `_DL_CACHE_DEFAULT_ID`.
    I386,
    Sparc64,
    Ia64,
    X86_64,
    S390x,
    Ppc64,
    Mips64N32,
    Mips64,
    X32,
    ArmHardFloat,
    Aarch64,
    ArmSoftFloat,
    MipsNan2008,
    Mips64N32Nan2008,
    Mips64Nan2008,
    RiscvSoftFloat,
    RiscvDoubleFloat,
    LoongArchSoftFloat,
    LoongArchDoubleFloat,
    /// Any other flags value (libc4, libc5, unknown ABI bits), kept whole.
    Other(i32),
}

/// Named ABIs and their FLAG_REQUIRED_MASK bits.
const ARCHES: &[(CacheArch, i32)] = &[
    (CacheArch::Sparc64, FLAG_SPARC_LIB64),
    (CacheArch::Ia64, FLAG_IA64_LIB64),
    (CacheArch::X86_64, FLAG_X8664_LIB64),
    (CacheArch::S390x, FLAG_S390_LIB64),
    (CacheArch::Ppc64, FLAG_POWERPC_LIB64),
    (CacheArch::Mips64N32, FLAG_MIPS64_LIBN32),
    (CacheArch::Mips64, FLAG_MIPS64_LIBN64),
    (CacheArch::X32, FLAG_X8664_LIBX32),
    (CacheArch::ArmHardFloat, FLAG_ARM_LIBHF),
    (CacheArch::Aarch64, FLAG_AARCH64_LIB64),
    (CacheArch::ArmSoftFloat, FLAG_ARM_LIBSF),
    (CacheArch::MipsNan2008, FLAG_MIPS_LIB32_NAN2008),
    (CacheArch::Mips64N32Nan2008, FLAG_MIPS64_LIBN32_NAN2008),
    (CacheArch::Mips64Nan2008, FLAG_MIPS64_LIBN64_NAN2008),
    (CacheArch::RiscvSoftFloat, FLAG_RISCV_FLOAT_ABI_SOFT),
    (CacheArch::RiscvDoubleFloat, FLAG_RISCV_FLOAT_ABI_DOUBLE),
    (CacheArch::LoongArchSoftFloat, FLAG_LARCH_FLOAT_ABI_SOFT),
    (CacheArch::LoongArchDoubleFloat, FLAG_LARCH_FLOAT_ABI_DOUBLE),
];

impl CacheArch {
    /// Decodes entry flags. Named ABIs need exactly FLAG_ELF_LIBC6 plus their ABI
    /// bits, because that is the only value their loader accepts
    /// (`_dl_cache_check_flags` in sysdeps/unix/sysv/linux/*/dl-cache.h); the
    /// generic loader accepts 1 or 3 (sysdeps/generic/dl-cache.h).
    pub fn from_flags(flags: i32) -> CacheArch {
        let kind = flags & FLAG_TYPE_MASK;
        let abi = flags & FLAG_REQUIRED_MASK;
        if flags & !(FLAG_TYPE_MASK | FLAG_REQUIRED_MASK) != 0 {
            return CacheArch::Other(flags);
        }
        if abi == 0 && (kind == FLAG_ELF || kind == FLAG_ELF_LIBC6) {
            return CacheArch::I386;
        }
        if kind != FLAG_ELF_LIBC6 {
            return CacheArch::Other(flags);
        }
        ARCHES
            .iter()
            .find(|(_, bits)| *bits == abi)
            .map_or(CacheArch::Other(flags), |(arch, _)| *arch)
    }

    /// The flags ldconfig writes for this ABI (its loader's `_DL_CACHE_DEFAULT_ID`).
    pub fn cache_flags(self) -> i32 {
        match self {
            CacheArch::I386 => FLAG_ELF_LIBC6,
            CacheArch::Other(flags) => flags,
            named => ARCHES
                .iter()
                .find(|(arch, _)| *arch == named)
                .map_or(FLAG_ELF_LIBC6, |(_, bits)| bits | FLAG_ELF_LIBC6),
        }
    }

    /// A short name; `Other` gives "other" (Display adds its flags).
    pub fn as_str(self) -> &'static str {
        match self {
            CacheArch::I386 => "i386/32-bit",
            CacheArch::Sparc64 => "sparc64",
            CacheArch::Ia64 => "ia64",
            CacheArch::X86_64 => "x86-64",
            CacheArch::S390x => "s390x",
            CacheArch::Ppc64 => "ppc64",
            CacheArch::Mips64N32 => "mips64-n32",
            CacheArch::Mips64 => "mips64",
            CacheArch::X32 => "x32",
            CacheArch::ArmHardFloat => "arm-hard-float",
            CacheArch::Aarch64 => "aarch64",
            CacheArch::ArmSoftFloat => "arm-soft-float",
            CacheArch::MipsNan2008 => "mips32-nan2008",
            CacheArch::Mips64N32Nan2008 => "mips64-n32-nan2008",
            CacheArch::Mips64Nan2008 => "mips64-nan2008",
            CacheArch::RiscvSoftFloat => "riscv-soft-float",
            CacheArch::RiscvDoubleFloat => "riscv-double-float",
            CacheArch::LoongArchSoftFloat => "loongarch-soft-float",
            CacheArch::LoongArchDoubleFloat => "loongarch-double-float",
            CacheArch::Other(_) => "other",
        }
    }
}

impl fmt::Display for CacheArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheArch::Other(flags) => write!(f, "other({flags:#06x})"),
            arch => f.write_str(arch.as_str()),
        }
    }
}

/// The ABI of the running binary, i.e. the cache entries its loader would use.
pub fn host_arch() -> CacheArch {
    if cfg!(all(target_arch = "x86_64", target_pointer_width = "64")) {
        CacheArch::X86_64
    } else if cfg!(target_arch = "x86_64") {
        CacheArch::X32
    } else if cfg!(all(target_arch = "aarch64", target_pointer_width = "64")) {
        CacheArch::Aarch64
    } else if cfg!(all(target_arch = "arm", target_abi = "eabihf")) {
        CacheArch::ArmHardFloat
    } else if cfg!(target_arch = "arm") {
        CacheArch::ArmSoftFloat
    } else if cfg!(target_arch = "powerpc64") {
        CacheArch::Ppc64
    } else if cfg!(target_arch = "s390x") {
        CacheArch::S390x
    } else if cfg!(target_arch = "sparc64") {
        CacheArch::Sparc64
    } else if cfg!(target_arch = "mips64r6") {
        CacheArch::Mips64Nan2008
    } else if cfg!(target_arch = "mips64") {
        CacheArch::Mips64
    } else if cfg!(target_arch = "mips32r6") {
        CacheArch::MipsNan2008
    } else if cfg!(all(
        any(target_arch = "riscv64", target_arch = "riscv32"),
        target_feature = "d"
    )) {
        CacheArch::RiscvDoubleFloat
    } else if cfg!(any(target_arch = "riscv64", target_arch = "riscv32")) {
        CacheArch::RiscvSoftFloat
    } else if cfg!(all(target_arch = "loongarch64", target_feature = "d")) {
        CacheArch::LoongArchDoubleFloat
    } else if cfg!(target_arch = "loongarch64") {
        CacheArch::LoongArchSoftFloat
    } else {
        // i386 and other targets on glibc's generic default (plain libc6).
        CacheArch::I386
    }
}

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum LdCacheError {
    #[error("the cache file is empty")]
    Empty,
    #[error(
        "not an ld.so.cache: it starts with \"{found}\", expected \"ld.so-1.7.0\" or \"glibc-ld.so.cache1.1\""
    )]
    BadMagic { found: String },
    #[error(
        "unsupported new-format cache version \"{found}\" at offset {offset} (expected \"1.1\")"
    )]
    BadVersion { found: String, offset: usize },
    #[error("truncated: the {what} at offset {offset} needs {need} bytes, but the file has {len}")]
    Truncated {
        what: &'static str,
        offset: usize,
        need: usize,
        len: usize,
    },
    #[error(
        "the {what} claims {claimed} entries, but only {fits} fit in the {len}-byte file{hint}"
    )]
    TooManyEntries {
        what: &'static str,
        claimed: u32,
        fits: usize,
        len: usize,
        hint: &'static str,
    },
    #[error(
        "the new-format header at offset {offset} has byte-order flags {flags:#04x} ({found}), but this machine is {host}; the loader ignores such a cache"
    )]
    WrongEndian {
        offset: usize,
        flags: u8,
        found: &'static str,
        host: &'static str,
    },
    #[error(
        "entry {entry}: the {field} string offset {offset:#x} (file offset {file_offset:#x}) is past the end of the {len}-byte file"
    )]
    BadOffset {
        entry: usize,
        field: &'static str,
        offset: u32,
        file_offset: u64,
        len: usize,
    },
    #[error(
        "entry {entry}: the {field} string at file offset {file_offset:#x} has no terminating NUL before the end of the file"
    )]
    Unterminated {
        entry: usize,
        field: &'static str,
        file_offset: u64,
    },
    #[error(
        "entry {entry}: the {field} string at file offset {file_offset:#x} is longer than PATH_MAX ({max} bytes)"
    )]
    StringTooLong {
        entry: usize,
        field: &'static str,
        file_offset: u64,
        max: usize,
    },
    #[error(
        "the entries' strings add up to more than {limit} bytes for a {len}-byte file; the string offsets look corrupt"
    )]
    TooMuchText { limit: usize, len: usize },
}

type Result<T> = std::result::Result<T, LdCacheError>;

/// Parses a cache file's bytes (any of the three layouts, host byte order).
pub fn parse(bytes: &[u8]) -> Result<LdCache> {
    if bytes.is_empty() {
        return Err(LdCacheError::Empty);
    }
    if starts_with_or_truncated(bytes, OLD_MAGIC)? {
        return parse_old_or_compat(bytes);
    }
    if starts_with_or_truncated(bytes, NEW_MAGIC)? {
        return parse_new(bytes, 0, CacheFormat::New);
    }
    Err(LdCacheError::BadMagic {
        found: escape(bytes.get(..20).unwrap_or(bytes)),
    })
}

/// True when `bytes` starts with `magic`; a file that is a strict prefix of the
/// magic is reported as truncated rather than as the wrong kind of file.
fn starts_with_or_truncated(bytes: &[u8], magic: &[u8]) -> Result<bool> {
    if bytes.starts_with(magic) {
        return Ok(true);
    }
    if magic.starts_with(bytes) {
        return Err(LdCacheError::Truncated {
            what: "magic",
            offset: 0,
            need: magic.len(),
            len: bytes.len(),
        });
    }
    Ok(false)
}

fn parse_old_or_compat(bytes: &[u8]) -> Result<LdCache> {
    let len = bytes.len();
    let nlibs = u32_at(bytes, OLD_NLIBS_AT).ok_or(LdCacheError::Truncated {
        what: "old-format header",
        offset: 0,
        need: OLD_HEADER,
        len,
    })?;
    let count = checked_count(
        "old-format header",
        nlibs,
        len.saturating_sub(OLD_HEADER) / OLD_ENTRY,
        len,
    )?;
    // count <= (len - 16) / 12, so this cannot overflow.
    let strings = OLD_HEADER + count * OLD_ENTRY;

    // As in elf/dl-cache.c: a new table right after the (aligned) old entries wins.
    let new_at = strings.next_multiple_of(NEW_ALIGN);
    let has_new = new_at.checked_add(NEW_HEADER).is_some_and(|end| end <= len)
        && bytes
            .get(new_at..)
            .is_some_and(|rest| rest.starts_with(NEW_MAGIC) && has_version_at(rest));
    if has_new {
        return parse_new(bytes, new_at, CacheFormat::Compat);
    }

    let table = Table {
        first: OLD_HEADER,
        count,
        size: OLD_ENTRY,
        strings,
    };
    Ok(LdCache {
        format: CacheFormat::Old,
        entries: table.read(bytes)?,
        generator: None,
    })
}

fn has_version_at(header: &[u8]) -> bool {
    header
        .get(NEW_MAGIC.len()..)
        .is_some_and(|v| v.starts_with(NEW_VERSION))
}

/// Parses the new-format table whose header starts at `at`.
fn parse_new(bytes: &[u8], at: usize, format: CacheFormat) -> Result<LdCache> {
    let len = bytes.len();
    let header = at
        .checked_add(NEW_HEADER)
        .and_then(|end| bytes.get(at..end))
        .ok_or(LdCacheError::Truncated {
            what: "new-format header",
            offset: at,
            need: NEW_HEADER,
            len,
        })?;
    if !has_version_at(header) {
        let version = header.get(NEW_MAGIC.len()..NEW_MAGIC.len() + NEW_VERSION.len());
        return Err(LdCacheError::BadVersion {
            found: escape(version.unwrap_or_default()),
            offset: at + NEW_MAGIC.len(),
        });
    }

    // cache_file_new_matches_endian (sysdeps/generic/dl-cache.h): 0 means unknown.
    let flags = header.get(NEW_FLAGS_AT).copied().unwrap_or(0);
    if flags != 0 && flags & ENDIAN_MASK != ENDIAN_HOST {
        return Err(LdCacheError::WrongEndian {
            offset: at,
            flags,
            found: match flags & ENDIAN_MASK {
                ENDIAN_LITTLE => "little-endian",
                ENDIAN_BIG => "big-endian",
                ENDIAN_INVALID => "marked invalid",
                _ => "unknown byte order",
            },
            host: if ENDIAN_HOST == ENDIAN_LITTLE {
                "little-endian"
            } else {
                "big-endian"
            },
        });
    }

    let nlibs = u32_at(header, NEW_NLIBS_AT).unwrap_or(0);
    let first = at + NEW_HEADER;
    let count = checked_count(
        "new-format header",
        nlibs,
        len.saturating_sub(first) / NEW_ENTRY,
        len,
    )?;
    let table = Table {
        first,
        count,
        size: NEW_ENTRY,
        strings: at,
    };
    Ok(LdCache {
        format,
        entries: table.read(bytes)?,
        generator: u32_at(header, NEW_EXTENSION_AT).and_then(|ext| generator(bytes, ext)),
    })
}

/// Rejects an entry count the file cannot hold, before anything is allocated.
fn checked_count(what: &'static str, nlibs: u32, fits: usize, len: usize) -> Result<usize> {
    match usize::try_from(nlibs) {
        Ok(count) if count <= fits => Ok(count),
        _ => Err(LdCacheError::TooManyEntries {
            what,
            claimed: nlibs,
            fits,
            len,
            hint: match usize::try_from(nlibs.swap_bytes()) {
                Ok(swapped) if swapped <= fits => {
                    "; byte-swapped the count would fit, so the file may come from a machine of the other byte order"
                }
                _ => "",
            },
        }),
    }
}

/// An entry table whose bounds were checked against the file.
struct Table {
    first: usize,
    count: usize,
    size: usize,
    /// Where string offsets count from.
    strings: usize,
}

impl Table {
    fn read(&self, bytes: &[u8]) -> Result<Vec<CacheEntry>> {
        // Strings may be shared (ldconfig merges suffixes), so decoded text can
        // exceed the file, but not by this much unless offsets are bogus.
        let limit = bytes.len().saturating_mul(8).saturating_add(1 << 20);
        let mut text = 0usize;
        let mut entries = Vec::with_capacity(self.count);
        for i in 0..self.count {
            let at = self.first + i * self.size;
            let truncated = || LdCacheError::Truncated {
                what: "cache entry",
                offset: at,
                need: self.size,
                len: bytes.len(),
            };
            let flags = u32_at(bytes, at).ok_or_else(truncated)? as i32;
            let key = u32_at(bytes, at + 4).ok_or_else(truncated)?;
            let value = u32_at(bytes, at + 8).ok_or_else(truncated)?;
            // struct file_entry_new: osversion_unused at +12, hwcap at +16.
            let hwcap = if self.size == NEW_ENTRY {
                u64_at(bytes, at + 16).ok_or_else(truncated)?
            } else {
                0
            };
            let soname = self.string(bytes, key, i, "soname")?;
            let path = self.string(bytes, value, i, "path")?;
            text = text.saturating_add(soname.len()).saturating_add(path.len());
            if text > limit {
                return Err(LdCacheError::TooMuchText {
                    limit,
                    len: bytes.len(),
                });
            }
            entries.push(CacheEntry {
                soname,
                path,
                flags,
                hwcap,
            });
        }
        Ok(entries)
    }

    fn string(
        &self,
        bytes: &[u8],
        offset: u32,
        entry: usize,
        field: &'static str,
    ) -> Result<String> {
        let file_offset = (self.strings as u64).saturating_add(u64::from(offset));
        let rest = usize::try_from(file_offset)
            .ok()
            .and_then(|start| bytes.get(start..))
            .filter(|rest| !rest.is_empty())
            .ok_or(LdCacheError::BadOffset {
                entry,
                field,
                offset,
                file_offset,
                len: bytes.len(),
            })?;
        let window = rest.get(..=PATH_MAX).unwrap_or(rest);
        match window.iter().position(|&b| b == 0) {
            Some(end) => {
                Ok(String::from_utf8_lossy(window.get(..end).unwrap_or_default()).into_owned())
            }
            None if window.len() < rest.len() => Err(LdCacheError::StringTooLong {
                entry,
                field,
                file_offset,
                max: PATH_MAX,
            }),
            None => Err(LdCacheError::Unterminated {
                entry,
                field,
                file_offset,
            }),
        }
    }
}

/// The generator text from the extension directory at file offset `ext`; any
/// malformation just means "unknown", as the cache itself is still usable.
fn generator(bytes: &[u8], ext: u32) -> Option<String> {
    let ext = usize::try_from(ext)
        .ok()
        .filter(|&e| e != 0 && e % 4 == 0)?;
    if u32_at(bytes, ext)? != EXTENSION_MAGIC {
        return None;
    }
    let count = usize::try_from(u32_at(bytes, ext.checked_add(4)?)?).ok()?;
    let sections = ext.checked_add(8)?;
    // Only as many sections as the file can hold.
    let fits = bytes.len().saturating_sub(sections) / EXTENSION_SECTION;
    (0..count.min(fits)).find_map(|i| {
        let at = sections + i * EXTENSION_SECTION;
        if u32_at(bytes, at)? != EXTENSION_TAG_GENERATOR {
            return None;
        }
        let offset = usize::try_from(u32_at(bytes, at + 8)?).ok()?;
        let size = usize::try_from(u32_at(bytes, at + 12)?).ok()?.min(PATH_MAX);
        let text = bytes.get(offset..offset.checked_add(size)?)?;
        Some(String::from_utf8_lossy(text).into_owned())
    })
}

impl LdCache {
    /// Entries for this soname that the loader would accept on `arch`, in the
    /// order the loader tries them (cache order). Names compare as the loader
    /// compares them (`_dl_cache_libcmp`, digit runs by value).
    pub fn lookup<'a>(
        &'a self,
        soname: &'a str,
        arch: CacheArch,
    ) -> impl Iterator<Item = &'a CacheEntry> + 'a {
        self.entries.iter().filter(move |e| {
            e.arch() == arch && libcmp(e.soname.as_bytes(), soname.as_bytes()) == Ordering::Equal
        })
    }
}

/// glibc's `_dl_cache_libcmp` (elf/dl-cache.c): bytes compare as C `char`,
/// except that runs of digits compare by numeric value (with C int wraparound).
fn libcmp(a: &[u8], b: &[u8]) -> Ordering {
    let digit = |c: Option<&u8>| c.is_some_and(u8::is_ascii_digit);
    let (mut i, mut j) = (0, 0);
    loop {
        let (ca, cb) = (a.get(i), b.get(j));
        match (ca, cb) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            _ => {}
        }
        if digit(ca) {
            if !digit(cb) {
                return Ordering::Greater;
            }
            let (va, ni) = number(a, i);
            let (vb, nj) = number(b, j);
            if va != vb {
                return va.cmp(&vb);
            }
            (i, j) = (ni, nj);
        } else if digit(cb) {
            return Ordering::Less;
        } else {
            let (x, y) = (c_char(ca), c_char(cb));
            if x != y {
                return x.cmp(&y);
            }
            i += 1;
            j += 1;
        }
    }
}

/// The value of the digit run at `at` (as glibc's int accumulates it) and its end.
fn number(s: &[u8], mut at: usize) -> (i32, usize) {
    let mut v = 0i32;
    while let Some(d) = s.get(at).filter(|c| c.is_ascii_digit()) {
        v = v.wrapping_mul(10).wrapping_add(i32::from(d - b'0'));
        at += 1;
    }
    (v, at)
}

/// A byte as the platform's C `char` (signed on x86, unsigned on Arm); the end
/// of a string is NUL.
fn c_char(c: Option<&u8>) -> i32 {
    let c = c.copied().unwrap_or(0);
    i32::from(c as std::ffi::c_char)
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_ne_bytes(b.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_ne_bytes(b.try_into().ok()?))
}

fn escape(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    /// Real `ldconfig -c compat` output (glibc 2.36, x86-64, little-endian):
    /// libz.so.1 in /opt/a/lib and /opt/b/lib, libm.so.6, and the generator
    /// extension. ldconfig shares string suffixes: each soname is the tail of
    /// its path.
    const COMPAT: &[&str] = &[
        "6c642e736f2d312e372e30000400000003030000ad000000a200000003030000",
        "ad0000008d000000030300008300000078000000030300008300000078000000",
        "676c6962632d6c642e736f2e6361636865312e31030000003f00000002000000",
        "f800000000000000000000000000000003030000ad000000a200000000000000",
        "000000000000000003030000ad0000008d000000000000000000000000000000",
        "0303000083000000780000000000000000000000000000002f6f70742f612f6c",
        "69622f6c69626d2e736f2e36002f6f70742f622f6c69622f6c69627a2e736f2e",
        "31002f6f70742f612f6c69622f6c69627a2e736f2e3100007421a4ea01000000",
        "000000000000000010010000430000006c64636f6e666967202844656269616e",
        "20474c49424320322e33362d392b64656231327531342920737461626c652072",
        "656c656173652076657273696f6e20322e3336",
    ];

    /// Real `ldconfig -c old` output for the same libraries.
    const OLD: &[&str] = &[
        "6c642e736f2d312e372e30000300000003030000350000002a00000003030000",
        "3500000015000000030300000b000000000000002f6f70742f612f6c69622f6c",
        "69626d2e736f2e36002f6f70742f622f6c69622f6c69627a2e736f2e31002f6f",
        "70742f612f6c69622f6c69627a2e736f2e3100",
    ];

    fn hex(lines: &[&str]) -> Vec<u8> {
        let s: String = lines.concat();
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    /// Real `ldconfig -c new` output for the same libraries.
    const NEW: &[&str] = &[
        "676c6962632d6c642e736f2e6361636865312e31030000003f00000002000000",
        "b800000000000000000000000000000003030000ad000000a200000000000000",
        "000000000000000003030000ad0000008d000000000000000000000000000000",
        "0303000083000000780000000000000000000000000000002f6f70742f612f6c",
        "69622f6c69626d2e736f2e36002f6f70742f622f6c69622f6c69627a2e736f2e",
        "31002f6f70742f612f6c69622f6c69627a2e736f2e3100007421a4ea01000000",
        "0000000000000000d0000000430000006c64636f6e666967202844656269616e",
        "20474c49424320322e33362d392b64656231327531342920737461626c652072",
        "656c656173652076657273696f6e20322e3336",
    ];

    fn expected() -> Vec<(String, String)> {
        [
            ("libz.so.1", "/opt/a/lib/libz.so.1"),
            ("libz.so.1", "/opt/b/lib/libz.so.1"),
            ("libm.so.6", "/opt/a/lib/libm.so.6"),
        ]
        .iter()
        .map(|(s, p)| (s.to_string(), p.to_string()))
        .collect()
    }

    fn pairs(c: &LdCache) -> Vec<(String, String)> {
        c.entries
            .iter()
            .map(|e| (e.soname.clone(), e.path.clone()))
            .collect()
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn parses_real_ldconfig_output() {
        let generator = "ldconfig (Debian GLIBC 2.36-9+deb12u14) stable release version 2.36";
        let c = parse(&hex(COMPAT)).unwrap();
        assert_eq!(c.format, CacheFormat::Compat);
        assert_eq!(pairs(&c), expected());
        assert_eq!(c.generator.as_deref(), Some(generator));
        assert!(c.entries.iter().all(|e| e.flags == 0x0303 && e.hwcap == 0));

        let n = parse(&hex(NEW)).unwrap();
        assert_eq!(n.format, CacheFormat::New);
        assert_eq!(
            (pairs(&n), n.generator.as_deref()),
            (expected(), Some(generator))
        );

        let o = parse(&hex(OLD)).unwrap();
        assert_eq!(o.format, CacheFormat::Old);
        assert_eq!((pairs(&o), o.generator), (expected(), None));
        assert_eq!(o.entries[0].arch(), CacheArch::X86_64);
    }

    /// A tiny deterministic PRNG (xorshift64*), so the loop needs no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    fn survives(bytes: &[u8]) {
        match parse(bytes) {
            Ok(c) => {
                assert!(c.entries.len() <= bytes.len() / OLD_ENTRY);
                let _ = c.lookup("libz.so.1", host_arch()).count();
                for e in &c.entries {
                    let _ = e.arch().to_string();
                }
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn fuzz_truncations_and_flips_never_panic() {
        let seeds = [hex(COMPAT), hex(OLD), hex(NEW)];
        for valid in &seeds {
            for cut in 0..=valid.len() {
                survives(&valid[..cut]);
            }
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..30_000 {
            let mut b = seeds[round % seeds.len()].clone();
            match rng.below(4) {
                // Flip a few bytes.
                0 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = rng.below(b.len());
                        b[i] ^= 1 << rng.below(8);
                    }
                }
                // Overwrite an aligned u32 (counts, offsets) with something odd.
                1 => {
                    let i = rng.below(b.len() / 4) * 4;
                    let v: u32 = match rng.below(4) {
                        0 => u32::MAX,
                        1 => 0x8000_0000,
                        2 => rng.below(b.len() + 64) as u32,
                        _ => rng.next() as u32,
                    };
                    b[i..i + 4].copy_from_slice(&v.to_ne_bytes());
                }
                // Truncate, then maybe flip.
                2 => {
                    b.truncate(rng.below(b.len()));
                    if !b.is_empty() {
                        let i = rng.below(b.len());
                        b[i] = rng.next() as u8;
                    }
                }
                // Random garbage after a valid magic.
                _ => {
                    let keep = if rng.below(2) == 0 { 11 } else { 20 };
                    let keep = keep.min(b.len());
                    for x in &mut b[keep..] {
                        *x = rng.next() as u8;
                    }
                }
            }
            survives(&b);
        }
    }

    #[test]
    fn absurd_counts_are_rejected_before_allocating() {
        let mut b = hex(OLD);
        b[12..16].copy_from_slice(&u32::MAX.to_ne_bytes());
        let e = parse(&b).unwrap_err();
        assert!(
            matches!(
                e,
                LdCacheError::TooManyEntries {
                    claimed: u32::MAX,
                    ..
                }
            ),
            "{e}"
        );

        let mut n = hex(NEW);
        n[20..24].copy_from_slice(&0x0100_0000u32.to_ne_bytes());
        let e = parse(&n).unwrap_err();
        assert!(e.to_string().contains("byte-swapped"), "{e}");
    }

    #[test]
    fn many_entries_sharing_one_long_string_hit_the_text_budget() {
        // 20,000 entries all pointing at one 4,000-byte string.
        let count = 20_000usize;
        let mut b = b"ld.so-1.7.0\0".to_vec();
        b.extend_from_slice(&(count as u32).to_ne_bytes());
        for _ in 0..count {
            for v in [3i32 as u32, 0, 0] {
                b.extend_from_slice(&v.to_ne_bytes());
            }
        }
        b.extend(std::iter::repeat_n(b'a', 4000));
        b.push(0);
        let e = parse(&b).unwrap_err();
        assert!(matches!(e, LdCacheError::TooMuchText { .. }), "{e}");
    }

    /// An old-format file with one entry whose strings are `tail`.
    fn one_entry(tail: &[u8], value: u32) -> Vec<u8> {
        let mut b = b"ld.so-1.7.0\0".to_vec();
        for v in [1u32, 3, 0, value] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(tail);
        b
    }

    #[test]
    fn strings_are_bounded_and_lossy() {
        let e = parse(&one_entry(b"lib\xff\0/a/lib", 5)).unwrap_err();
        assert!(
            matches!(
                e,
                LdCacheError::Unterminated {
                    entry: 0,
                    field: "path",
                    ..
                }
            ),
            "{e}"
        );
        let c = parse(&one_entry(b"lib\xff\0/a/lib\0", 5)).unwrap();
        assert_eq!(c.entries[0].soname, "lib\u{fffd}");
        assert_eq!(c.entries[0].path, "/a/lib");

        let e = parse(&one_entry(b"lib\0", 99)).unwrap_err();
        assert!(
            matches!(e, LdCacheError::BadOffset { offset: 99, .. }),
            "{e}"
        );

        let mut long = b"lib\0".to_vec();
        long.extend(std::iter::repeat_n(b'x', PATH_MAX + 10));
        long.push(0);
        let e = parse(&one_entry(&long, 4)).unwrap_err();
        assert!(matches!(e, LdCacheError::StringTooLong { .. }), "{e}");
    }

    #[test]
    fn libcmp_matches_glibc() {
        use Ordering::*;
        let cases: &[(&str, &str, Ordering)] = &[
            ("libc.so.6", "libc.so.6", Equal),
            ("libfoo.so.10", "libfoo.so.9", Greater),
            ("libfoo.so.1", "libfoo.so.01", Equal),
            ("libfoo.so", "libfoo.so.1", Less),
            ("libfoo2.so", "libfoo.so", Greater),
            ("libfoo.so", "libfoo2.so", Less),
            ("liba.so", "libb.so", Less),
        ];
        for (a, b, want) in cases {
            assert_eq!(libcmp(a.as_bytes(), b.as_bytes()), *want, "{a} vs {b}");
        }
    }

    #[test]
    fn arch_decoding() {
        assert_eq!(CacheArch::from_flags(0x0303), CacheArch::X86_64);
        assert_eq!(CacheArch::from_flags(0x0a03), CacheArch::Aarch64);
        assert_eq!(CacheArch::from_flags(0x0803), CacheArch::X32);
        assert_eq!(CacheArch::from_flags(0x0003), CacheArch::I386);
        assert_eq!(CacheArch::from_flags(0x0001), CacheArch::I386);
        assert_eq!(
            CacheArch::from_flags(0x1203),
            CacheArch::LoongArchDoubleFloat
        );
        // x86-64 bits without libc6: the x86-64 loader would not take it.
        assert_eq!(CacheArch::from_flags(0x0301), CacheArch::Other(0x0301));
        assert_eq!(CacheArch::from_flags(0x0002), CacheArch::Other(2));
        assert_eq!(CacheArch::from_flags(0x3303).to_string(), "other(0x3303)");
        assert_eq!(CacheArch::X86_64.to_string(), "x86-64");
        assert_eq!(CacheArch::I386.to_string(), "i386/32-bit");
        for (arch, _) in ARCHES {
            assert_eq!(CacheArch::from_flags(arch.cache_flags()), *arch);
        }
        assert_eq!(
            CacheArch::from_flags(host_arch().cache_flags()),
            host_arch()
        );
        if cfg!(target_arch = "x86_64") && cfg!(target_pointer_width = "64") {
            assert_eq!(host_arch(), CacheArch::X86_64);
        }
    }

    #[test]
    fn lookup_filters_arch_and_keeps_order() {
        let e = |s: &str, p: &str, flags| CacheEntry {
            soname: s.into(),
            path: p.into(),
            flags,
            hwcap: 0,
        };
        let c = LdCache {
            format: CacheFormat::New,
            entries: vec![
                e("libcuda.so.1", "/a/libcuda.so.1", 0x0303),
                e("libcuda.so.1", "/i386/libcuda.so.1", 0x0003),
                e("libcuda.so.1", "/b/libcuda.so.1", 0x0303),
                e("libcuda.so", "/a/libcuda.so", 0x0303),
            ],
            generator: None,
        };
        let paths: Vec<_> = c
            .lookup("libcuda.so.1", CacheArch::X86_64)
            .map(|e| e.path.as_str())
            .collect();
        assert_eq!(paths, ["/a/libcuda.so.1", "/b/libcuda.so.1"]);
        assert_eq!(c.lookup("libcuda.so.1", CacheArch::I386).count(), 1);
        assert_eq!(c.lookup("libnope.so.1", CacheArch::X86_64).count(), 0);
    }
}
