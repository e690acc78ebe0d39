//! Reads the dynamic section of a shared library (SONAME, DT_NEEDED) without loading it.
//! Only the headers and the dynamic strings are read, so a 500 MB library costs a few KiB.

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
}

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

/// The SONAME and DT_NEEDED entries of an ELF shared object, or why they could not be read.
pub fn read_dynamic(fs: &HostFs, path: &Path) -> Result<DynamicInfo, String> {
    let file = fs.open_regular(path).map_err(|e| e.to_string())?;
    let cache = ReadCache::new(file);
    let ident = cache
        .read_bytes_at(0, 16)
        .map_err(|_| format!("{}: too short for an ELF header", path.display()))?;
    if ident.get(..4) != Some(&elf::ELFMAG[..]) {
        return Err(format!("{}: not an ELF file", path.display()));
    }
    // e_ident[EI_CLASS] (byte 4): 1 = 32-bit, 2 = 64-bit.
    let result = match ident.get(4) {
        Some(2) => parse::<elf::FileHeader64<Endianness>, _>(&cache),
        Some(1) => parse::<elf::FileHeader32<Endianness>, _>(&cache),
        _ => Err("unknown ELF class".to_string()),
    };
    result.map_err(|e| format!("{}: {e}", path.display()))
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
        if tag != elf::DT_SONAME && tag != elf::DT_NEEDED {
            continue;
        }
        let Ok(name) = entry.string(endian, strings) else {
            continue;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        if tag == elf::DT_SONAME {
            info.soname = Some(name);
        } else {
            info.needed.push(name);
        }
    }
    Ok(info)
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
