//! A shared object's dynamic symbols, looked up the way ld.so's `do_lookup_x` does: through
//! the object's own DT_GNU_HASH table (its Bloom filter, bucket and chain), else its DT_HASH,
//! with glibc's rules for symbol types and versions. A lookup reads a few words of the file,
//! so checking thousands of imports against libtorch_cpu.so's 75,000 exports reads a few
//! blocks instead of the table.

use std::collections::HashMap;
use std::path::Path;

use object::elf;
use object::read::elf::{FileHeader, SectionHeader};
use object::read::{ReadCache, ReadRef};
use object::Endianness;

use crate::elf::Blocks;
use crate::fsys::HostFs;

/// Blocks of 16 KiB kept per table (4 MiB): a lookup touches the Bloom word, a bucket, a
/// chain run, a symbol and a string.
const MAX_TABLE_BLOCKS: usize = 256;
/// Symbols and relocations read at most from one object (corrupt counts stop here).
const MAX_SYMBOLS: u64 = 4_000_000;
const MAX_RELOCATIONS: u64 = 20_000_000;
/// A chain walked further than this is corrupt.
const MAX_CHAIN: u64 = 100_000;

/// A symbol this object needs defined elsewhere (undefined, global binding: weak references
/// never fail a load).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    pub name: String,
    /// The version it asks for (DT_VERNEED), and of which file.
    pub version: Option<String>,
    pub file: Option<String>,
    /// Its index in .dynsym, for ordering by relocation.
    pub index: u32,
}

enum Hash {
    Gnu {
        /// The Bloom filter, read once: most lookups in most objects end here.
        bloom: Vec<u64>,
        shift: u32,
        buckets: u64,
        nbuckets: u32,
        chain: u64,
        symoffset: u32,
    },
    Sysv {
        buckets: u64,
        nbucket: u32,
        chains: u64,
        nchain: u32,
    },
    /// No hash table: every symbol is compared.
    None,
}

/// A relocation section's place: (offset, entry count, RELA).
type RelocSection = (u64, u64, bool);

pub struct SymbolTable {
    blocks: Blocks,
    l: Layout,
}

/// One symbol entry, the fields the lookup reads.
struct Sym {
    name: u32,
    info: u8,
    shndx: u16,
    value: u64,
}

impl SymbolTable {
    /// Opens `path` (a real file under the HostFs) for lookups. An object without section
    /// headers or .dynsym is an error: ld.so reads its symbols through the dynamic segment,
    /// which is not read here, so what it defines is not known.
    pub fn open(fs: &HostFs, path: &Path) -> Result<SymbolTable, String> {
        let file = fs.open_regular(path).map_err(|e| e.to_string())?;
        SymbolTable::from_file(file, path)
    }

    /// The table of `path`, already opened (by `fs.open_regular`).
    pub fn from_file(file: std::fs::File, path: &Path) -> Result<SymbolTable, String> {
        let blocks = Blocks::with_limit(file, MAX_TABLE_BLOCKS)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let cache = ReadCache::new(blocks);
        let layout = match crate::elf::class_of(&cache, path)? {
            2 => layout::<elf::FileHeader64<Endianness>, _>(&cache),
            1 => layout::<elf::FileHeader32<Endianness>, _>(&cache),
            _ => Err("unknown ELF class".to_string()),
        }
        .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(SymbolTable {
            blocks: cache.into_inner(),
            l: layout,
        })
    }

    /// `N` bytes at `at` in little-endian order (reversed for a big-endian file).
    fn le_bytes<const N: usize>(&mut self, at: u64) -> std::io::Result<[u8; N]> {
        let mut b = [0u8; N];
        self.blocks.read_exact_at(at, &mut b)?;
        if self.l.big {
            b.reverse();
        }
        Ok(b)
    }

    fn u16_at(&mut self, at: u64) -> std::io::Result<u16> {
        self.le_bytes(at).map(u16::from_le_bytes)
    }

    fn u32_at(&mut self, at: u64) -> std::io::Result<u32> {
        self.le_bytes(at).map(u32::from_le_bytes)
    }

    fn u64_at(&mut self, at: u64) -> std::io::Result<u64> {
        self.le_bytes(at).map(u64::from_le_bytes)
    }

    fn sym_size(&self) -> u64 {
        if self.l.class64 {
            24
        } else {
            16
        }
    }

    fn sym(&mut self, i: u64) -> std::io::Result<Sym> {
        let at = self.l.syms + i * self.sym_size();
        let mut b = [0u8; 24];
        let n = self.sym_size() as usize;
        self.blocks.read_exact_at(at, &mut b[..n])?;
        Ok(self.parse_sym(&b[..n]))
    }

    /// A symbol entry from its bytes (at least one entry long).
    fn parse_sym(&self, b: &[u8]) -> Sym {
        let u16 = |x: &[u8]| {
            let a = [x[0], x[1]];
            if self.l.big {
                u16::from_be_bytes(a)
            } else {
                u16::from_le_bytes(a)
            }
        };
        let u32 = |x: &[u8]| {
            let a = [x[0], x[1], x[2], x[3]];
            if self.l.big {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        };
        if self.l.class64 {
            let mut v = [0u8; 8];
            v.copy_from_slice(&b[8..16]);
            Sym {
                name: u32(&b[0..4]),
                info: b[4],
                shndx: u16(&b[6..8]),
                value: if self.l.big {
                    u64::from_be_bytes(v)
                } else {
                    u64::from_le_bytes(v)
                },
            }
        } else {
            Sym {
                name: u32(&b[0..4]),
                value: u64::from(u32(&b[4..8])),
                info: b[12],
                shndx: u16(&b[14..16]),
            }
        }
    }

    /// The string at `offset` in .dynstr, up to 64 KiB.
    fn string(&mut self, offset: u32) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut at = self.l.strtab + u64::from(offset);
        let end = self.l.strtab + self.l.strsz;
        let mut chunk = [0u8; 64];
        while at < end && out.len() < 65_536 {
            let n = (end - at).min(64) as usize;
            self.blocks.read_exact_at(at, &mut chunk[..n])?;
            if let Some(z) = chunk[..n].iter().position(|&c| c == 0) {
                out.extend_from_slice(&chunk[..z]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
            at += n as u64;
        }
        Ok(out)
    }

    /// Whether the string at `offset` is `name`.
    fn name_is(&mut self, offset: u32, name: &[u8]) -> std::io::Result<bool> {
        let at = self.l.strtab + u64::from(offset);
        if u64::from(offset) + name.len() as u64 + 1 > self.l.strsz {
            return Ok(false);
        }
        let mut buf = vec![0u8; name.len() + 1];
        self.blocks.read_exact_at(at, &mut buf)?;
        Ok(buf[..name.len()] == *name && buf[name.len()] == 0)
    }

    fn versym(&mut self, i: u64) -> std::io::Result<Option<u16>> {
        match self.l.versym {
            Some(at) => self.u16_at(at + i * 2).map(Some),
            None => Ok(None),
        }
    }

    /// The symbols it imports that a load must resolve: undefined, global (not weak);
    /// with `unversioned_only`, those without a symbol version.
    pub fn imports(&mut self, unversioned_only: bool) -> Result<Vec<Import>, String> {
        // The linker puts undefined symbols before the GNU hash table's `symoffset`.
        let count = match self.l.hash {
            Hash::Gnu { symoffset, .. } => u64::from(symoffset).min(self.l.nsyms),
            _ => self.l.nsyms,
        };
        let e = |e: std::io::Error| format!("reading .dynsym: {e}");
        let mut raw = vec![0u8; (count * self.sym_size()) as usize];
        self.blocks
            .read_exact_at(self.l.syms, &mut raw)
            .map_err(e)?;
        let mut versyms = vec![0u8; (count * 2) as usize];
        if let Some(at) = self.l.versym {
            self.blocks.read_exact_at(at, &mut versyms).map_err(e)?;
        }
        let mut out = Vec::new();
        for i in 1..count {
            let s = self.parse_sym(&raw[(i * self.sym_size()) as usize..]);
            let bind = s.info >> 4;
            let kind = s.info & 0xf;
            if s.shndx != elf::SHN_UNDEF.0
                || bind != elf::STB_GLOBAL.0
                || kind == elf::STT_SECTION.0
                || kind == elf::STT_FILE.0
                || s.name == 0
            {
                continue;
            }
            let v = if self.l.versym.is_some() {
                let b = [versyms[(i * 2) as usize], versyms[(i * 2 + 1) as usize]];
                if self.l.big {
                    u16::from_be_bytes(b)
                } else {
                    u16::from_le_bytes(b)
                }
            } else {
                0
            };
            let (version, file) = match self.l.versions.get(&(v & 0x7fff)) {
                Some((n, f)) if v & 0x7fff >= 2 => (Some(n.clone()), f.clone()),
                _ => (None, None),
            };
            if unversioned_only && version.is_some() {
                continue;
            }
            let name = String::from_utf8_lossy(&self.string(s.name).map_err(e)?).into_owned();
            out.push(Import {
                name,
                version,
                file,
                index: i as u32,
            });
        }
        // The pass read every undefined symbol and its name: what later lookups need of
        // this file is a few blocks, read again then, not the whole range kept meanwhile.
        self.blocks.forget();
        Ok(out)
    }

    /// Whether this object defines `name` for a reference asking for `version` (None: an
    /// unversioned reference), as glibc's check_match decides.
    pub fn defines(&mut self, name: &str, version: Option<&str>) -> Result<bool, String> {
        let e = |e: std::io::Error| format!("symbol lookup: {e}");
        let bytes = name.as_bytes();
        match self.l.hash {
            Hash::Gnu {
                ref bloom,
                shift,
                buckets,
                nbuckets,
                chain,
                symoffset,
            } => {
                if nbuckets == 0 || bloom.is_empty() {
                    return Ok(false);
                }
                let h = elf::gnu_hash(bytes);
                let bits: u32 = if self.l.class64 { 64 } else { 32 };
                let word = bloom[((h / bits) as usize) % bloom.len()];
                let mask = (1u64 << (h % bits)) | (1u64 << ((h >> shift) % bits));
                if word & mask != mask {
                    return Ok(false);
                }
                let first = u64::from(
                    self.u32_at(buckets + u64::from(h % nbuckets) * 4)
                        .map_err(e)?,
                );
                if first < u64::from(symoffset) {
                    return Ok(false);
                }
                for i in first..first.saturating_add(MAX_CHAIN) {
                    if i >= self.l.nsyms {
                        break;
                    }
                    let ch = self
                        .u32_at(chain + (i - u64::from(symoffset)) * 4)
                        .map_err(e)?;
                    if (ch | 1) == (h | 1) && self.matches(i, bytes, version).map_err(e)? {
                        return Ok(true);
                    }
                    if ch & 1 != 0 {
                        break;
                    }
                }
                Ok(false)
            }
            Hash::Sysv {
                buckets,
                nbucket,
                chains,
                nchain,
            } => {
                if nbucket == 0 {
                    return Ok(false);
                }
                let h = elf::hash(bytes);
                let mut i = self
                    .u32_at(buckets + u64::from(h % nbucket) * 4)
                    .map_err(e)?;
                for _ in 0..MAX_CHAIN {
                    if i == 0 || i >= nchain {
                        break;
                    }
                    if self.matches(u64::from(i), bytes, version).map_err(e)? {
                        return Ok(true);
                    }
                    i = self.u32_at(chains + u64::from(i) * 4).map_err(e)?;
                }
                Ok(false)
            }
            Hash::None => {
                for i in 1..self.l.nsyms {
                    if self.matches(i, bytes, version).map_err(e)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }

    /// glibc's check_match (elf/dl-lookup.c) for symbol `i`.
    fn matches(&mut self, i: u64, name: &[u8], version: Option<&str>) -> std::io::Result<bool> {
        let s = self.sym(i)?;
        let kind = s.info & 0xf;
        let bind = s.info >> 4;
        // Types a reference may bind to: NOTYPE, OBJECT, FUNC, COMMON, TLS, GNU_IFUNC.
        if ![0u8, 1, 2, 5, 6, 10].contains(&kind)
            || (s.value == 0 && kind != elf::STT_TLS.0 && s.shndx != elf::SHN_ABS.0)
            || s.shndx == elf::SHN_UNDEF.0
            || !(bind == elf::STB_GLOBAL.0
                || bind == elf::STB_WEAK.0
                || bind == elf::STB_GNU_UNIQUE.0)
        {
            return Ok(false);
        }
        if !self.name_is(s.name, name)? {
            return Ok(false);
        }
        let Some(v) = self.versym(i)? else {
            // A library without version information satisfies any reference.
            return Ok(true);
        };
        let index = v & 0x7fff;
        let hidden = v & 0x8000 != 0;
        Ok(match version {
            Some(wanted) => {
                let defined = self.l.versions.get(&index).map(|(n, _)| n.as_str());
                defined == Some(wanted) || (index < 2 && !hidden)
            }
            // An unversioned reference takes the base definition, or the one non-hidden
            // versioned definition.
            None => index < 3 || !hidden,
        })
    }

    /// Symbol indices in the order the loader relocates them (DT_RELA/DT_REL, then the PLT
    /// relocations), each once: the first undefined one in this order is the one glibc
    /// names.
    pub fn relocation_order(&mut self) -> Result<Vec<u32>, String> {
        let e = |e: std::io::Error| format!("reading relocations: {e}");
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let mut total = 0u64;
        for (offset, count, rela) in self.l.relocs.clone() {
            let size: u64 = match (self.l.class64, rela) {
                (true, true) => 24,
                (true, false) => 16,
                (false, true) => 12,
                (false, false) => 8,
            };
            total += count;
            if total > MAX_RELOCATIONS {
                return Err(format!("more than {MAX_RELOCATIONS} relocations"));
            }
            for k in 0..count {
                let at = offset + k * size;
                let sym = if self.l.class64 {
                    (self.u64_at(at + 8).map_err(e)? >> 32) as u32
                } else {
                    self.u32_at(at + 4).map_err(e)? >> 8
                };
                if sym != 0 && seen.insert(sym) {
                    out.push(sym);
                }
            }
        }
        Ok(out)
    }
}

struct Layout {
    big: bool,
    class64: bool,
    syms: u64,
    nsyms: u64,
    strtab: u64,
    strsz: u64,
    hash: Hash,
    versym: Option<u64>,
    versions: HashMap<u16, (String, Option<String>)>,
    relocs: Vec<RelocSection>,
}

fn layout<'data, H, R>(data: R) -> Result<Layout, String>
where
    H: FileHeader<Endian = Endianness>,
    R: ReadRef<'data>,
{
    let e = |e: object::read::Error| e.to_string();
    let header = H::parse(data).map_err(e)?;
    let endian = header.endian().map_err(e)?;
    let sections = header.sections(endian, data).map_err(e)?;
    let mut out = Layout {
        big: endian == Endianness::Big,
        class64: header.is_type_64(),
        syms: 0,
        nsyms: 0,
        strtab: 0,
        strsz: 0,
        hash: Hash::None,
        versym: None,
        versions: HashMap::new(),
        relocs: Vec::new(),
    };
    let Some((dynsym_index, dynsym)) = sections
        .enumerate()
        .find(|(_, s)| s.sh_type(endian) == elf::SHT_DYNSYM)
    else {
        return Err("no .dynsym section (symbols not read)".into());
    };
    let len = data.len().map_err(|_| "unknown file size".to_string())?;
    let within = |offset: u64, size: u64, what: &str| -> Result<(), String> {
        match offset.checked_add(size) {
            Some(end) if end <= len => Ok(()),
            _ => Err(format!("truncated {what}")),
        }
    };
    let entsize: u64 = if out.class64 { 24 } else { 16 };
    out.syms = dynsym.sh_offset(endian).into();
    out.nsyms = dynsym.sh_size(endian).into() / entsize;
    if out.nsyms > MAX_SYMBOLS {
        return Err(format!("{} dynamic symbols: more than read", out.nsyms));
    }
    within(out.syms, out.nsyms * entsize, ".dynsym")?;
    let strtab = sections.section(dynsym.link(endian)).map_err(e)?;
    out.strtab = strtab.sh_offset(endian).into();
    out.strsz = strtab.sh_size(endian).into();
    within(out.strtab, out.strsz, ".dynstr")?;
    let word = |at: u64| -> Result<u32, String> {
        let b = data
            .read_bytes_at(at, 4)
            .map_err(|_| "truncated hash table".to_string())?;
        let a = [b[0], b[1], b[2], b[3]];
        Ok(if out.big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    };
    if let Some(gnu) = sections
        .iter()
        .find(|s| s.sh_type(endian) == elf::SHT_GNU_HASH)
    {
        let at: u64 = gnu.sh_offset(endian).into();
        let nbuckets = word(at)?;
        let symoffset = word(at + 4)?;
        let bloom_words = word(at + 8)?;
        let shift = word(at + 12)?;
        let wsize: u64 = if out.class64 { 8 } else { 4 };
        let buckets = at + 16 + u64::from(bloom_words) * wsize;
        let chain = buckets + u64::from(nbuckets) * 4;
        within(at, chain - at, ".gnu.hash")?;
        let raw = data
            .read_bytes_at(at + 16, u64::from(bloom_words) * wsize)
            .map_err(|_| "truncated .gnu.hash".to_string())?;
        let bloom = raw
            .chunks_exact(wsize as usize)
            .map(|c| match (wsize, out.big) {
                (8, false) => u64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
                (8, true) => u64::from_be_bytes(c.try_into().unwrap_or([0; 8])),
                (_, false) => u64::from(u32::from_le_bytes(c.try_into().unwrap_or([0; 4]))),
                (_, true) => u64::from(u32::from_be_bytes(c.try_into().unwrap_or([0; 4]))),
            })
            .collect();
        out.hash = Hash::Gnu {
            bloom,
            shift: shift % 32,
            buckets,
            nbuckets,
            chain,
            symoffset,
        };
    } else if let Some(sysv) = sections.iter().find(|s| s.sh_type(endian) == elf::SHT_HASH) {
        let at: u64 = sysv.sh_offset(endian).into();
        let nbucket = word(at)?;
        let nchain = word(at + 4)?;
        let buckets = at + 8;
        let chains = buckets + u64::from(nbucket) * 4;
        within(
            at,
            8 + (u64::from(nbucket) + u64::from(nchain)) * 4,
            ".hash",
        )?;
        out.hash = Hash::Sysv {
            buckets,
            nbucket,
            chains,
            nchain,
        };
    }
    if let Some(versym) = sections
        .iter()
        .find(|s| s.sh_type(endian) == elf::SHT_GNU_VERSYM)
    {
        let at: u64 = versym.sh_offset(endian).into();
        within(at, out.nsyms * 2, ".gnu.version")?;
        out.versym = Some(at);
    }
    let mut entries = 0usize;
    if let Some((mut needs, link)) = sections.gnu_verneed(endian, data).map_err(e)? {
        let strings = sections.strings(endian, data, link).map_err(e)?;
        while let Some((need, mut auxs)) = needs.next().map_err(e)? {
            let file = String::from_utf8_lossy(need.file(endian, strings).map_err(e)?).into_owned();
            while let Some(aux) = auxs.next().map_err(e)? {
                entries += 1;
                if entries > 10_000 {
                    return Err("more than 10,000 version entries".into());
                }
                let name = String::from_utf8_lossy(aux.name(endian, strings).map_err(e)?);
                out.versions.insert(
                    aux.vna_other.get(endian).0,
                    (name.into_owned(), Some(file.clone())),
                );
            }
        }
    }
    if let Some((mut defs, link)) = sections.gnu_verdef(endian, data).map_err(e)? {
        let strings = sections.strings(endian, data, link).map_err(e)?;
        while let Some((def, mut auxs)) = defs.next().map_err(e)? {
            entries += 1;
            if entries > 10_000 {
                return Err("more than 10,000 version entries".into());
            }
            if def.vd_flags.get(endian).0 & elf::VER_FLG_BASE.0 != 0 {
                continue;
            }
            if let Some(aux) = auxs.next().map_err(e)? {
                let name = String::from_utf8_lossy(aux.name(endian, strings).map_err(e)?);
                out.versions
                    .insert(def.vd_ndx.get(endian).0, (name.into_owned(), None));
            }
        }
    }
    // Relocations against .dynsym, in file order (.rela.dyn before .rela.plt).
    let mut relocs: Vec<(u64, RelocSection)> = Vec::new();
    for s in sections.iter() {
        let kind = s.sh_type(endian);
        if (kind != elf::SHT_RELA && kind != elf::SHT_REL) || s.link(endian) != dynsym_index {
            continue;
        }
        let rela = kind == elf::SHT_RELA;
        let size: u64 = match (out.class64, rela) {
            (true, true) => 24,
            (true, false) => 16,
            (false, true) => 12,
            (false, false) => 8,
        };
        let offset: u64 = s.sh_offset(endian).into();
        let bytes: u64 = s.sh_size(endian).into();
        within(offset, bytes, "relocation section")?;
        relocs.push((offset, (offset, bytes / size, rela)));
    }
    relocs.sort_by_key(|(o, _)| *o);
    out.relocs = relocs.into_iter().map(|(_, r)| r).collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libc_defines_what_it_exports_at_each_version() {
        let Some(libc) = crate::testing::system_libc() else {
            return;
        };
        let fs = HostFs::new(None);
        let mut t = SymbolTable::open(&fs, libc).unwrap();
        assert!(t.defines("malloc", None).unwrap());
        assert!(
            t.defines("malloc", Some("GLIBC_2.2.5")).unwrap() || cfg!(not(target_arch = "x86_64"))
        );
        assert!(t.defines("memcpy", None).unwrap());
        assert!(!t.defines("malloc", Some("GLIBC_9.99")).unwrap());
        assert!(!t.defines("no_such_symbol_anywhere", None).unwrap());
        // libc's imports are ld.so's: a handful, each with a version.
        let imports = t.imports(false).unwrap();
        assert!(imports.iter().all(|i| i.version.is_some()), "{imports:?}");
    }

    #[test]
    fn garbage_is_an_error_and_a_truncated_library_never_panics() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.so");
        std::fs::write(&p, b"not an elf at all").unwrap();
        let fs = HostFs::new(None);
        assert!(SymbolTable::open(&fs, &p).is_err());
        // Every prefix of a real library: an error or a table, never a panic.
        let Some(libc) = crate::testing::system_libc() else {
            return;
        };
        let bytes = std::fs::read(libc).unwrap();
        for cut in [16usize, 64, 200, 1000, 5000, bytes.len() / 2] {
            std::fs::write(&p, &bytes[..cut.min(bytes.len())]).unwrap();
            if let Ok(mut t) = SymbolTable::open(&fs, &p) {
                let _ = t.imports(false);
                let _ = t.defines("malloc", None);
                let _ = t.relocation_order();
            }
        }
    }
}
