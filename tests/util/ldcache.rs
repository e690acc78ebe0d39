//! Writes ld.so.cache files for tests. Written from glibc's description of the
//! format (sysdeps/generic/dl-cache.h, elf/cache.c save_cache) and sharing no
//! code with src/ldcache.rs, so the two check each other.

use std::cmp::Ordering;
use std::ffi::c_char;

// Flags from glibc's sysdeps/generic/ldconfig.h.
pub const FLAG_ELF_LIBC6: i32 = 0x0003;
pub const FLAG_X8664_LIB64: i32 = 0x0300;
pub const FLAG_X8664_LIBX32: i32 = 0x0800;
pub const FLAG_AARCH64_LIB64: i32 = 0x0a00;

// From sysdeps/generic/dl-cache.h.
const MAGIC_OLD: &[u8; 11] = b"ld.so-1.7.0";
const MAGIC_NEW: &[u8; 20] = b"glibc-ld.so.cache1.1";
const EXT_MAGIC: u32 = 0xeaa4_2174; // cache_extension_magic, (uint32_t) -358342284
const EXT_TAG_GENERATOR: u32 = 0; // cache_extension_tag_generator
const ENDIAN_LITTLE: u8 = 2; // cache_file_new_flags_endian_little
const ENDIAN_BIG: u8 = 3; // cache_file_new_flags_endian_big

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Old,
    New,
    /// Old table, then the new one (what `ldconfig -c compat` writes).
    Compat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    Host,
    /// The other byte order: a cache copied from a foreign machine.
    Swapped,
}

/// One cache entry as ldconfig would record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    pub soname: &'a str,
    pub path: &'a str,
    pub flags: i32,
    pub hwcap: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    pub format: Format,
    pub byte_order: ByteOrder,
    /// Text for a generator extension section (new and compat formats only).
    pub generator: Option<&'a str>,
}

impl Options<'_> {
    pub fn new(format: Format) -> Self {
        Options {
            format,
            byte_order: ByteOrder::Host,
            generator: None,
        }
    }
}

/// The flags ldconfig gives a library built for the machine running the tests.
pub fn host_flags() -> i32 {
    if cfg!(all(target_arch = "x86_64", target_pointer_width = "64")) {
        FLAG_ELF_LIBC6 | FLAG_X8664_LIB64
    } else if cfg!(target_arch = "x86_64") {
        FLAG_ELF_LIBC6 | FLAG_X8664_LIBX32
    } else if cfg!(target_arch = "aarch64") {
        FLAG_ELF_LIBC6 | FLAG_AARCH64_LIB64
    } else {
        FLAG_ELF_LIBC6
    }
}

/// A cache holding `(soname, path)` pairs with the host's flags.
pub fn write_cache(entries: &[(&str, &str)], format: Format) -> Vec<u8> {
    let flags = host_flags();
    let with: Vec<_> = entries.iter().map(|&(s, p)| (s, p, flags)).collect();
    write_cache_flags(&with, format)
}

/// A cache holding `(soname, path, flags)` entries.
pub fn write_cache_flags(entries: &[(&str, &str, i32)], format: Format) -> Vec<u8> {
    let all: Vec<_> = entries
        .iter()
        .map(|&(soname, path, flags)| Entry {
            soname,
            path,
            flags,
            hwcap: 0,
        })
        .collect();
    write_cache_with(&all, &Options::new(format))
}

/// glibc's `_dl_cache_libcmp` (elf/dl-cache.c): byte by byte, except that two
/// digit runs compare by value, a digit sorts after a non-digit, and other
/// bytes compare as C `char` (signed on x86, unsigned on Arm).
pub fn libcmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    loop {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(j).copied().unwrap_or(0);
        if x == 0 {
            return (x as c_char).cmp(&(y as c_char));
        }
        match (x.is_ascii_digit(), y.is_ascii_digit()) {
            (true, true) => {
                // C int arithmetic, wrapping as glibc's does in practice.
                let (mut n, mut m) = (0i32, 0i32);
                while let Some(d) = a.get(i).filter(|d| d.is_ascii_digit()) {
                    n = n.wrapping_mul(10).wrapping_add(i32::from(d - b'0'));
                    i += 1;
                }
                while let Some(d) = b.get(j).filter(|d| d.is_ascii_digit()) {
                    m = m.wrapping_mul(10).wrapping_add(i32::from(d - b'0'));
                    j += 1;
                }
                if n != m {
                    return n.cmp(&m);
                }
            }
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) if x != y => return (x as c_char).cmp(&(y as c_char)),
            (false, false) => {
                i += 1;
                j += 1;
            }
        }
    }
}

/// ldconfig's order (elf/cache.c `compare`, applied by insertion in
/// add_to_cache): names descending by libcmp, then flags descending, then
/// glibc-hwcaps entries first; ties keep insertion order.
pub fn ldconfig_order(a: &Entry, b: &Entry) -> Ordering {
    let hwcaps_first = |e: &Entry| e.hwcap == 0;
    libcmp(b.soname, a.soname)
        .then(b.flags.cmp(&a.flags))
        .then(hwcaps_first(a).cmp(&hwcaps_first(b)))
}

/// Writes a cache file with `entries` sorted as ldconfig sorts them.
pub fn write_cache_with(entries: &[Entry], opts: &Options) -> Vec<u8> {
    let mut sorted = entries.to_vec();
    sorted.sort_by(ldconfig_order); // stable, like insertion into a list
    let swap = opts.byte_order == ByteOrder::Swapped;
    let u32b = |v: u32| if swap { v.swap_bytes() } else { v }.to_ne_bytes();
    let u64b = |v: u64| if swap { v.swap_bytes() } else { v }.to_ne_bytes();

    // String table: soname then path per entry, no sharing.
    let mut strings = Vec::new();
    let mut offsets = Vec::new();
    for e in &sorted {
        let key = strings.len() as u32;
        strings.extend_from_slice(e.soname.as_bytes());
        strings.push(0);
        let value = strings.len() as u32;
        strings.extend_from_slice(e.path.as_bytes());
        strings.push(0);
        offsets.push((key, value));
    }

    let mut out = Vec::new();

    // Old table: 11-byte magic padded to 12, nlibs, 12-byte entries. Strings
    // count from the end of the entries.
    if opts.format != Format::New {
        let mut old: Vec<(i32, u32, u32)> = sorted
            .iter()
            .zip(&offsets)
            .map(|(e, &(k, v))| (e.flags, k, v))
            .collect();
        // compat: ldconfig duplicates the last entry to make the count even, so
        // the new header lands 8-aligned with no padding.
        if opts.format == Format::Compat && old.len() % 2 == 1 {
            old.push(*old.last().unwrap());
        }
        let old_end = 16 + 12 * old.len();
        // Where the shared strings start, counted from old_end.
        let shift = match opts.format {
            Format::Old => 0,
            _ => align8(old_end) - old_end + 48 + 24 * sorted.len(),
        } as u32;
        out.extend_from_slice(MAGIC_OLD);
        out.push(0);
        out.extend_from_slice(&u32b(old.len() as u32));
        for (flags, k, v) in old {
            out.extend_from_slice(&u32b(flags as u32));
            out.extend_from_slice(&u32b(k + shift));
            out.extend_from_slice(&u32b(v + shift));
        }
        if opts.format == Format::Compat {
            out.resize(align8(out.len()), 0);
        }
    }

    // New table: 48-byte header, 24-byte entries; strings count from this header.
    if opts.format != Format::Old {
        let base = out.len();
        let table = 48 + 24 * sorted.len();
        let strings_end = base + table + strings.len();
        let ext_at = strings_end.next_multiple_of(4); // extension_offset is a file offset
        out.extend_from_slice(MAGIC_NEW);
        out.extend_from_slice(&u32b(sorted.len() as u32));
        out.extend_from_slice(&u32b(strings.len() as u32));
        let host = if cfg!(target_endian = "little") {
            ENDIAN_LITTLE
        } else {
            ENDIAN_BIG
        };
        let other = ENDIAN_LITTLE + ENDIAN_BIG - host;
        out.push(if swap { other } else { host });
        out.extend_from_slice(&[0; 3]);
        let ext = if opts.generator.is_some() { ext_at } else { 0 };
        out.extend_from_slice(&u32b(ext as u32));
        out.extend_from_slice(&[0; 12]);
        for (e, &(k, v)) in sorted.iter().zip(&offsets) {
            out.extend_from_slice(&u32b(e.flags as u32));
            out.extend_from_slice(&u32b(k + table as u32));
            out.extend_from_slice(&u32b(v + table as u32));
            out.extend_from_slice(&u32b(0)); // osversion_unused
            out.extend_from_slice(&u64b(e.hwcap));
        }
        out.extend_from_slice(&strings);
        if let Some(text) = opts.generator {
            out.resize(ext_at, 0);
            // struct cache_extension with one struct cache_extension_section.
            let data = ext_at + 8 + 16;
            for v in [EXT_MAGIC, 1, EXT_TAG_GENERATOR, 0, data as u32] {
                out.extend_from_slice(&u32b(v));
            }
            out.extend_from_slice(&u32b(text.len() as u32));
            out.extend_from_slice(text.as_bytes());
        }
    } else {
        out.extend_from_slice(&strings);
    }
    out
}

fn align8(n: usize) -> usize {
    n.next_multiple_of(8)
}
