//! Writes the generated seeds into `seeds/` with the tests' own fixture writers
//! (`tests/util/`): shared objects with and without a `.nv_fatbin` section, fatbin
//! payloads, and ld.so.cache files in every format and byte order. The real-file seeds
//! (system libraries, ldconfig-built caches, reports) are copied in by hand; docs/testing.md
//! "Fuzzing" says from where.
//!
//! cargo run --manifest-path fuzz/Cargo.toml -p gpudoctor-fuzz-stable --bin gen-seeds

use std::path::Path;

// Siblings at the top, as in tests/util/ (fatbin.rs uses `super::elf`).
#[allow(dead_code)]
#[path = "../../../../tests/util/elf.rs"]
mod elf;
#[allow(dead_code)]
#[path = "../../../../tests/util/fatbin.rs"]
mod fatbin;
#[allow(dead_code)]
#[path = "../../../../tests/util/ldcache.rs"]
mod ldcache;

use elf::{shared_object, shared_object_for, FOREIGN_MACHINE};
use fatbin::{
    elf_with_fatbin, fatbin_section, fatbin_section_entries, Entry, Kind, FLAG_ARCH_SPECIFIC,
    FLAG_COMPRESSED, FLAG_COMPRESSED_ZSTD, FLAG_FAMILY,
};
use ldcache::{host_flags, write_cache, write_cache_with, ByteOrder, Format, Options};

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("create the seed directory");
    std::fs::write(dir.join(name), bytes).expect("write a seed");
}

fn main() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("fuzz/")
        .join("seeds");

    // A torch-like translation unit: SASS for several architectures and PTX for the newest.
    let torch_tu: &[(Kind, u32, bool)] = &[
        (Kind::Elf, 80, false),
        (Kind::Elf, 86, false),
        (Kind::Elf, 90, true),
        (Kind::Ptx, 90, false),
    ];
    let odd = fatbin_section_entries(&[vec![
        Entry::new(Kind::Elf, 100).flags(FLAG_COMPRESSED),
        Entry::new(Kind::Elf, 120).flags(FLAG_COMPRESSED_ZSTD | FLAG_FAMILY),
        Entry::new(Kind::Raw(8), 89),
        Entry::new(Kind::Ptx, 75)
            .flags(FLAG_ARCH_SPECIFIC)
            .payload(0),
    ]]);
    let fatbins = seeds.join("fatbin");
    write(
        &fatbins,
        "gen-torch-2tu",
        &fatbin_section(&[torch_tu, torch_tu]),
    );
    write(&fatbins, "gen-flags", &odd);

    let libs = seeds.join("elf");
    write(
        &libs,
        "gen-libtorch_cuda.so",
        &elf_with_fatbin("libtorch_cuda.so", &fatbin_section(&[torch_tu])),
    );
    write(&libs, "gen-flags.so", &elf_with_fatbin("libodd.so.1", &odd));
    write(
        &libs,
        "gen-libcudnn.so.9",
        &shared_object("libcudnn.so.9", &["libcudart.so.12", "libc.so.6"]),
    );
    // The real section nvcc wrote into libcufftw.so.12 (checked in beside the generated
    // ones), in a small shared object.
    if let Ok(real) = std::fs::read(fatbins.join("real-libcufftw.so.12.nv_fatbin")) {
        write(
            &libs,
            "gen-real-fatbin.so",
            &elf_with_fatbin("libcufftw.so.12", &real),
        );
    }
    write(
        &libs,
        "gen-foreign.so",
        &shared_object_for(FOREIGN_MACHINE, "libcuda.so.1", &["libm.so.6"]),
    );

    let entries = [
        ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
        (
            "libcudart.so.12",
            "/usr/local/cuda-12.4/lib64/libcudart.so.12",
        ),
        ("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"),
    ];
    let caches = seeds.join("ldcache");
    write(&caches, "gen-old", &write_cache(&entries, Format::Old));
    write(
        &caches,
        "gen-compat",
        &write_cache(&entries, Format::Compat),
    );
    let all: Vec<_> = entries
        .iter()
        .map(|&(soname, path)| ldcache::Entry {
            soname,
            path,
            flags: host_flags(),
            hwcap: 0,
        })
        .collect();
    let mut swapped = Options::new(Format::New);
    swapped.byte_order = ByteOrder::Swapped;
    swapped.generator = Some("ldconfig (GNU libc) stable release version 2.36");
    write(
        &caches,
        "gen-new-swapped",
        &write_cache_with(&all, &swapped),
    );
}
