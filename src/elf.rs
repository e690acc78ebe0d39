//! Reads the dynamic section of a shared library (SONAME, DT_NEEDED, search paths, symbol
//! versions) without loading it. Only headers, the dynamic strings and the version sections
//! are read, so a 500 MB library costs a few KiB; symbol tables are read only on request.

use std::path::Path;

use object::elf;
use object::read::elf::{Dyn, FileHeader};
use object::read::{ReadCache, ReadRef};
use object::Endianness;

use crate::fsys::HostFs;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DynamicInfo {
    pub soname: Option<String>,
    pub needed: Vec<String>,
    /// 32- or 64-bit and the target machine (e_machine): the loader skips other kinds.
    pub class64: bool,
    pub machine: u16,
    /// DT_RPATH and DT_RUNPATH as written (colon-separated, `$ORIGIN` unexpanded).
    pub rpath: Option<String>,
    pub runpath: Option<String>,
    /// DF_1_NODEFLIB: the cache and the default directories are not searched for its needs.
    pub nodeflib: bool,
    /// DT_VERNEED: per needed file, the version names this object requires of it.
    pub verneed: Vec<VersionNeed>,
    /// DT_VERDEF: the version names this object defines (the base entry, its soname, left
    /// out); None when it has no version definitions at all.
    pub verdef: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionNeed {
    pub file: String,
    pub versions: Vec<String>,
}

/// Version entries read from one object (real libraries have tens).
const MAX_VERSION_ENTRIES: usize = 10_000;

impl DynamicInfo {
    /// Whether the running loader (this binary's architecture) could load it.
    pub fn loadable_here(&self) -> bool {
        self.class64 == cfg!(target_pointer_width = "64") && self.machine == HOST_MACHINE
    }
}

/// e_machine of this build's target (EM_X86_64 = 62, EM_AARCH64 = 183, EM_PPC64 = 21).
#[cfg(target_arch = "x86_64")]
pub const HOST_MACHINE: u16 = 62;
#[cfg(target_arch = "aarch64")]
pub const HOST_MACHINE: u16 = 183;
#[cfg(target_arch = "powerpc64")]
pub const HOST_MACHINE: u16 = 21;
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "powerpc64"
)))]
pub const HOST_MACHINE: u16 = 0;

/// A name for an e_machine value, for messages.
pub fn machine_name(machine: u16, class64: bool) -> String {
    match (machine, class64) {
        (3, _) => "i386 (32-bit)".into(),
        (62, true) => "x86-64".into(),
        (62, false) => "x32".into(),
        (183, _) => "aarch64".into(),
        (40, _) => "arm (32-bit)".into(),
        (21, _) => "ppc64".into(),
        (m, c) => format!("machine {m} ({}-bit)", if c { 64 } else { 32 }),
    }
}

/// A file read through 16 KiB blocks with pread: ELF parsing asks for many small pieces
/// (headers, one string at a time), which a block serves from memory instead of a
/// seek and a read each. Large reads go to the file directly.
pub struct Blocks {
    file: std::fs::File,
    len: u64,
    pos: u64,
    blocks: std::collections::HashMap<u64, Vec<u8>>,
    max_blocks: usize,
}

const BLOCK: u64 = 16 * 1024;
/// Blocks kept per file: 16 MiB at most.
const MAX_BLOCKS: usize = 1024;

impl Blocks {
    pub fn new(file: std::fs::File) -> std::io::Result<Blocks> {
        let len = file.metadata()?.len();
        Ok(Blocks {
            file,
            len,
            pos: 0,
            blocks: std::collections::HashMap::new(),
            max_blocks: MAX_BLOCKS,
        })
    }

    /// The same, keeping at most `max_blocks` blocks in memory.
    pub fn with_limit(file: std::fs::File, max_blocks: usize) -> std::io::Result<Blocks> {
        let mut b = Blocks::new(file)?;
        b.max_blocks = max_blocks.max(1);
        Ok(b)
    }

    /// Fills `buf` from `offset`, across blocks; an error past the end of the file.
    pub fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        let mut at = offset;
        let mut done = 0;
        while at < end {
            let block = self.block(at / BLOCK)?;
            let start = (at % BLOCK) as usize;
            let avail = block
                .get(start..)
                .filter(|a| !a.is_empty())
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
            let n = avail.len().min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&avail[..n]);
            done += n;
            at += n as u64;
        }
        Ok(())
    }

    /// Forgets the blocks read so far (after a one-off pass over a large range).
    pub fn forget(&mut self) {
        self.blocks = std::collections::HashMap::new();
    }

    fn block(&mut self, index: u64) -> std::io::Result<&[u8]> {
        use std::os::unix::fs::FileExt;
        if !self.blocks.contains_key(&index) {
            if self.blocks.len() >= self.max_blocks {
                self.blocks.clear();
            }
            let start = index * BLOCK;
            let size = BLOCK.min(self.len.saturating_sub(start)) as usize;
            let mut buf = vec![0u8; size];
            let mut done = 0;
            while done < size {
                let n = self.file.read_at(&mut buf[done..], start + done as u64)?;
                if n == 0 {
                    buf.truncate(done);
                    break;
                }
                done += n;
            }
            self.blocks.insert(index, buf);
        }
        Ok(self.blocks.get(&index).map(Vec::as_slice).unwrap_or(&[]))
    }
}

impl std::io::Read for Blocks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        if self.pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        if buf.len() as u64 > 4 * BLOCK {
            let n = self.file.read_at(buf, self.pos)?;
            self.pos += n as u64;
            return Ok(n);
        }
        let pos = self.pos;
        let block = self.block(pos / BLOCK)?;
        let at = (pos % BLOCK) as usize;
        let Some(avail) = block.get(at..) else {
            return Ok(0);
        };
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for Blocks {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let pos = match to {
            std::io::SeekFrom::Start(p) => Some(p),
            std::io::SeekFrom::End(d) => self.len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let Some(pos) = pos else {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        };
        self.pos = pos;
        Ok(pos)
    }
}

fn reader(fs: &HostFs, path: &Path) -> Result<ReadCache<Blocks>, String> {
    let file = fs.open_regular(path).map_err(|e| e.to_string())?;
    let blocks = Blocks::new(file).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(ReadCache::new(blocks))
}

/// The SONAME and DT_NEEDED entries of an ELF shared object, or why they could not be read.
pub fn read_dynamic(fs: &HostFs, path: &Path) -> Result<DynamicInfo, String> {
    read_dynamic_keeping_file(fs, path).0
}

/// The same, and the file still open when it was an ELF file, for a later read of its
/// symbols without a second open.
pub fn read_dynamic_keeping_file(
    fs: &HostFs,
    path: &Path,
) -> (Result<DynamicInfo, String>, Option<std::fs::File>) {
    let (cache, class) = match open_elf(fs, path) {
        Ok(opened) => opened,
        Err(e) => return (Err(e), None),
    };
    let result = match class {
        2 => parse::<elf::FileHeader64<Endianness>, _>(&cache),
        1 => parse::<elf::FileHeader32<Endianness>, _>(&cache),
        _ => Err("unknown ELF class".to_string()),
    };
    (
        result.map_err(|e| format!("{}: {e}", path.display())),
        Some(cache.into_inner().file),
    )
}

fn parse<'data, H, R>(data: R) -> Result<DynamicInfo, String>
where
    H: FileHeader<Endian = Endianness>,
    R: ReadRef<'data>,
{
    let header = H::parse(data).map_err(|e| e.to_string())?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    let machine = header.e_machine(endian).0;
    let class64 = header.is_type_64();
    let sections = header.sections(endian, data).map_err(|e| e.to_string())?;
    // `dynamic` hands back the index of the string table the section links to.
    let Some((entries, strtab)) = sections.dynamic(endian, data).map_err(|e| e.to_string())? else {
        return Err("no dynamic section (not a shared library)".to_string());
    };
    let strings = sections
        .strings(endian, data, strtab)
        .map_err(|e| e.to_string())?;
    let mut info = DynamicInfo {
        class64,
        machine,
        ..DynamicInfo::default()
    };
    for entry in entries {
        let tag = entry.tag(endian);
        if tag == elf::DT_FLAGS_1 {
            info.nodeflib = entry.val(endian) & elf::DF_1_NODEFLIB.0 != 0;
            continue;
        }
        if ![
            elf::DT_SONAME,
            elf::DT_NEEDED,
            elf::DT_RPATH,
            elf::DT_RUNPATH,
        ]
        .contains(&tag)
        {
            continue;
        }
        let Ok(name) = entry.string(endian, strings) else {
            continue;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        match tag {
            elf::DT_SONAME => info.soname = Some(name),
            elf::DT_NEEDED => info.needed.push(name),
            elf::DT_RPATH => info.rpath = Some(name),
            _ => info.runpath = Some(name),
        }
    }
    // glibc ignores DT_RPATH when DT_RUNPATH is present (elf/get-dynamic-info.h).
    if info.runpath.is_some() {
        info.rpath = None;
    }
    read_versions::<H, R>(&sections, endian, data, &mut info)
        .map_err(|e| format!("symbol version sections: {e}"))?;
    Ok(info)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_versions<'data, H, R>(
    sections: &object::read::elf::SectionTable<'data, H, R>,
    endian: Endianness,
    data: R,
    info: &mut DynamicInfo,
) -> Result<(), String>
where
    H: FileHeader<Endian = Endianness>,
    R: ReadRef<'data>,
{
    let e = |e: object::read::Error| e.to_string();
    let mut entries = 0usize;
    let mut count = || {
        entries += 1;
        if entries > MAX_VERSION_ENTRIES {
            Err("more than 10,000 version entries".to_string())
        } else {
            Ok(())
        }
    };
    if let Some((mut needs, link)) = sections.gnu_verneed(endian, data).map_err(e)? {
        let strings = sections.strings(endian, data, link).map_err(e)?;
        while let Some((need, mut auxs)) = needs.next().map_err(e)? {
            let mut versions = Vec::new();
            while let Some(aux) = auxs.next().map_err(e)? {
                count()?;
                versions.push(lossy(aux.name(endian, strings).map_err(e)?));
            }
            info.verneed.push(VersionNeed {
                file: lossy(need.file(endian, strings).map_err(e)?),
                versions,
            });
        }
    }
    if let Some((mut defs, link)) = sections.gnu_verdef(endian, data).map_err(e)? {
        let strings = sections.strings(endian, data, link).map_err(e)?;
        let mut names = Vec::new();
        while let Some((def, mut auxs)) = defs.next().map_err(e)? {
            count()?;
            if def.vd_flags.get(endian).0 & elf::VER_FLG_BASE.0 != 0 {
                continue;
            }
            if let Some(aux) = auxs.next().map_err(e)? {
                names.push(lossy(aux.name(endian, strings).map_err(e)?));
            }
        }
        info.verdef = Some(names);
    }
    Ok(())
}

/// Opens an ELF file and hands its class (1 = 32-bit, 2 = 64-bit) with the reader.
fn open_elf(fs: &HostFs, path: &Path) -> Result<(ReadCache<Blocks>, u8), String> {
    let cache = reader(fs, path)?;
    let class = class_of(&cache, path)?;
    Ok((cache, class))
}

/// e_ident[EI_CLASS] of an opened file (1 = 32-bit, 2 = 64-bit), or why it is no ELF file.
pub fn class_of(cache: &ReadCache<Blocks>, path: &Path) -> Result<u8, String> {
    let ident = cache
        .read_bytes_at(0, 16)
        .map_err(|_| format!("{}: too short for an ELF header", path.display()))?;
    if ident.get(..4) != Some(&elf::ELFMAG[..]) {
        return Err(format!("{}: not an ELF file", path.display()));
    }
    Ok(ident.get(4).copied().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_soname_of_a_system_library() {
        // libc is on every machine this builds on; its SONAME is libc.so.6 on glibc systems.
        let fs = HostFs::new(None);
        let candidates = [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/lib/aarch64-linux-gnu/libc.so.6",
            "/lib64/libc.so.6",
        ];
        let Some(path) = candidates.iter().map(Path::new).find(|p| p.exists()) else {
            return;
        };
        let info = read_dynamic(&fs, path).unwrap();
        assert_eq!(info.soname.as_deref(), Some("libc.so.6"));
        assert!(info.loadable_here());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let fs = HostFs::new(Some(dir.path().to_path_buf()));
        for (name, bytes) in [
            ("empty", &b""[..]),
            ("text", &b"hello world, this is not ELF"[..]),
            ("trunc", &b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0"[..]),
        ] {
            std::fs::write(dir.path().join(name), bytes).unwrap();
            assert!(read_dynamic(&fs, &Path::new("/").join(name)).is_err());
        }
    }
}
