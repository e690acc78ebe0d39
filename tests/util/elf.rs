//! A minimal ELF64 shared object for fixtures: just enough (a .dynamic section with
//! DT_SONAME/DT_NEEDED and its .dynstr) for gpudoctor's reader, written byte by byte so
//! tests need no C compiler.

fn push_u16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn push_u32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn push_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// e_machine of the machine the tests run on, and of a foreign one.
pub const HOST_MACHINE: u16 = if cfg!(target_arch = "aarch64") {
    183
} else {
    62
};
pub const FOREIGN_MACHINE: u16 = if cfg!(target_arch = "aarch64") {
    62
} else {
    183
};

/// An ELF64 little-endian ET_DYN for this machine with the given SONAME and DT_NEEDED.
pub fn shared_object(soname: &str, needed: &[&str]) -> Vec<u8> {
    shared_object_for(HOST_MACHINE, soname, needed)
}

/// The same for another e_machine (a multiarch library of a foreign architecture).
pub fn shared_object_for(machine: u16, soname: &str, needed: &[&str]) -> Vec<u8> {
    shared_object_with(machine, soname, needed, &[])
}

/// Where an extra section's bytes are.
pub enum Placement<'a> {
    /// Written into the returned image, after the built-in sections.
    Inline(&'a [u8]),
    /// Left to the caller: the section header says `size` bytes at file offset `offset`,
    /// which the caller writes (or leaves as a hole in a sparse file).
    At { offset: u64, size: u64 },
}

/// An extra PROGBITS section (for instance `.nv_fatbin`) next to .dynstr and .dynamic.
pub struct ExtraSection<'a> {
    pub name: &'a str,
    pub data: Placement<'a>,
}

/// The same with extra sections; with none it writes exactly what `shared_object_for` writes.
pub fn shared_object_with(
    machine: u16,
    soname: &str,
    needed: &[&str],
    extra: &[ExtraSection],
) -> Vec<u8> {
    shared_object_paths(machine, soname, needed, None, extra)
}

/// A shared object for this machine with a DT_RUNPATH (`$ORIGIN/../lib`).
pub fn shared_object_runpath(soname: &str, needed: &[&str], runpath: &str) -> Vec<u8> {
    shared_object_paths(HOST_MACHINE, soname, needed, Some(runpath), &[])
}

fn shared_object_paths(
    machine: u16,
    soname: &str,
    needed: &[&str],
    runpath: Option<&str>,
    extra: &[ExtraSection],
) -> Vec<u8> {
    let mut dynstr = vec![0u8];
    let offset = |s: &str, table: &mut Vec<u8>| {
        let o = table.len() as u64;
        table.extend_from_slice(s.as_bytes());
        table.push(0);
        o
    };
    let soname_off = offset(soname, &mut dynstr);
    let needed_off: Vec<u64> = needed.iter().map(|n| offset(n, &mut dynstr)).collect();
    let mut dynamic = Vec::new();
    for o in &needed_off {
        push_u64(&mut dynamic, 1); // DT_NEEDED
        push_u64(&mut dynamic, *o);
    }
    push_u64(&mut dynamic, 14); // DT_SONAME
    push_u64(&mut dynamic, soname_off);
    if let Some(r) = runpath {
        let o = offset(r, &mut dynstr);
        push_u64(&mut dynamic, 29); // DT_RUNPATH
        push_u64(&mut dynamic, o);
    }
    push_u64(&mut dynamic, 0); // DT_NULL
    push_u64(&mut dynamic, 0);
    let mut shstrtab = b"\0.dynstr\0.dynamic\0.shstrtab\0".to_vec();
    let extra_names: Vec<u32> = extra
        .iter()
        .map(|x| offset(x.name, &mut shstrtab) as u32)
        .collect();

    let dynstr_at = 64u64;
    let dynamic_at = (dynstr_at + dynstr.len() as u64).next_multiple_of(8);
    let shstrtab_at = dynamic_at + dynamic.len() as u64;
    // Inline extra sections follow .shstrtab, each 8-aligned.
    let mut at = shstrtab_at + shstrtab.len() as u64;
    let mut extra_at = Vec::new();
    for x in extra {
        match x.data {
            Placement::Inline(bytes) => {
                at = at.next_multiple_of(8);
                extra_at.push((at, bytes.len() as u64));
                at += bytes.len() as u64;
            }
            Placement::At { offset, size } => extra_at.push((offset, size)),
        }
    }
    let shoff = at.next_multiple_of(8);

    let mut out = Vec::new();
    out.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    out.extend_from_slice(&[0; 8]);
    push_u16(&mut out, 3); // ET_DYN
    push_u16(&mut out, machine);
    push_u32(&mut out, 1);
    push_u64(&mut out, 0); // e_entry
    push_u64(&mut out, 0); // e_phoff
    push_u64(&mut out, shoff);
    push_u32(&mut out, 0); // e_flags
    push_u16(&mut out, 64); // e_ehsize
    push_u16(&mut out, 56); // e_phentsize
    push_u16(&mut out, 0); // e_phnum
    push_u16(&mut out, 64); // e_shentsize
    push_u16(&mut out, 4 + extra.len() as u16); // e_shnum
    push_u16(&mut out, 3); // e_shstrndx
    out.extend_from_slice(&dynstr);
    out.resize(dynamic_at as usize, 0);
    out.extend_from_slice(&dynamic);
    out.extend_from_slice(&shstrtab);
    for (x, (at, _)) in extra.iter().zip(&extra_at) {
        if let Placement::Inline(bytes) = x.data {
            out.resize(*at as usize, 0);
            out.extend_from_slice(bytes);
        }
    }
    out.resize(shoff as usize, 0);
    // Section headers: null, .dynstr, .dynamic, .shstrtab, then the extras.
    out.extend_from_slice(&[0; 64]);
    let mut sh = |name: u32,
                  kind: u32,
                  flags: u64,
                  at: u64,
                  size: u64,
                  link: u32,
                  align: u64,
                  entsize: u64| {
        push_u32(&mut out, name);
        push_u32(&mut out, kind);
        push_u64(&mut out, flags);
        push_u64(&mut out, 0);
        push_u64(&mut out, at);
        push_u64(&mut out, size);
        push_u32(&mut out, link);
        push_u32(&mut out, 0);
        push_u64(&mut out, align);
        push_u64(&mut out, entsize);
    };
    sh(1, 3, 2, dynstr_at, dynstr.len() as u64, 0, 1, 0);
    sh(9, 6, 3, dynamic_at, dynamic.len() as u64, 1, 8, 16);
    sh(18, 3, 0, shstrtab_at, shstrtab.len() as u64, 0, 1, 0);
    for (name, (at, size)) in extra_names.iter().zip(&extra_at) {
        sh(*name, 1, 2, *at, *size, 0, 8, 0); // PROGBITS, SHF_ALLOC
    }
    out
}
