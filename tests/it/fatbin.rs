//! `.nv_fatbin` scanning (src/fatbin.rs), checked against an independent writer
//! (tests/util/fatbin.rs) inside minimal ELF shared objects, a 300 MB sparse library, a replica
//! of a real NVIDIA library's headers, and garbage.

use crate::util;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::fatbin::{
    elf_with_fatbin, elf_with_fatbin_at, fatbin_section, fatbin_section_entries, sparse_section,
    Entry, Kind, FLAG_ARCH_SPECIFIC, FLAG_COMPRESSED, FLAG_COMPRESSED_ZSTD, FLAG_FAMILY,
};
use gpudoctor::fatbin::{scan, scan_section, scan_with, FatbinSummary, ScanOptions};
use gpudoctor::fsys::HostFs;

/// Writes `bytes` as /NAME under a fresh root and scans it through HostFs.
fn scan_file(name: &str, bytes: &[u8]) -> Result<FatbinSummary, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), bytes).unwrap();
    let fs = HostFs::new(Some(dir.path().to_path_buf()));
    scan(&fs, &Path::new("/").join(name))
}

fn count(s: &FatbinSummary, arch: &str) -> (u32, u32) {
    s.counts
        .iter()
        .find(|c| c.arch == arch)
        .map_or((0, 0), |c| (c.entries, c.containers))
}

/// A translation unit built like a PyTorch 2.7 cu128 wheel: SASS for each target, PTX for
/// the newest.
const TORCH_TU: &[(Kind, u32, bool)] = &[
    (Kind::Elf, 75, false),
    (Kind::Elf, 80, false),
    (Kind::Elf, 86, false),
    (Kind::Elf, 90, false),
    (Kind::Elf, 100, false),
    (Kind::Elf, 120, false),
    (Kind::Ptx, 120, false),
];

#[test]
fn round_trip_through_the_writer() {
    let section = fatbin_section(&[TORCH_TU, TORCH_TU, TORCH_TU]);
    let lib = elf_with_fatbin("libtorch_cuda.so", &section);
    let s = scan_file("libtorch_cuda.so", &lib).unwrap();
    assert_eq!(s.containers, 3);
    assert_eq!(s.entries, 21);
    assert_eq!(
        s.arch_list,
        [
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_90",
            "sm_100",
            "sm_120",
            "compute_120"
        ]
    );
    assert!(s.extras.is_empty());
    assert_eq!(count(&s, "sm_90"), (3, 3));
    assert_eq!(s.section_size, section.len() as u64);
    assert!(s.complete, "{:?}", s.notes);
    // The same answer from the bare section, which reads exactly the fatbin headers.
    let bare = scan_section(&section).unwrap();
    assert_eq!(bare.counts, s.counts);
    assert_eq!(bare.bytes_read, 3 * 16 + 21 * 64);
    // The file scan adds only the ELF header, section table and names.
    assert!(s.bytes_read < bare.bytes_read + 4096, "{}", s.bytes_read);
    // Serializes for --json.
    let json = serde_json::to_string(&s).unwrap();
    let back: FatbinSummary = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
}

#[test]
fn rare_architectures_are_extras_not_the_arch_list() {
    // 40 ordinary translation units, 2 with an extra sm_89 kernel, 1 with sm_90a only.
    let mut containers: Vec<&[(Kind, u32, bool)]> = vec![TORCH_TU; 40];
    let with_89: &[(Kind, u32, bool)] = &[(Kind::Elf, 80, false), (Kind::Elf, 89, false)];
    containers.push(with_89);
    containers.push(with_89);
    containers.push(&[(Kind::Elf, 90, true)]);
    let s = scan_file(
        "libtorch_cuda.so",
        &elf_with_fatbin("libtorch_cuda.so", &fatbin_section(&containers)),
    )
    .unwrap();
    assert_eq!(s.containers, 43);
    assert_eq!(
        s.arch_list,
        [
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_90",
            "sm_100",
            "sm_120",
            "compute_120"
        ]
    );
    assert_eq!(s.extras, ["sm_89", "sm_90a"]);
    assert_eq!(count(&s, "sm_89"), (2, 2));
    assert_eq!(count(&s, "sm_80"), (42, 42));
    assert_eq!(count(&s, "sm_90a"), (1, 1));

    // The threshold is the caller's: at 1 % everything present is in the list.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lib.so"),
        elf_with_fatbin("lib.so", &fatbin_section(&containers)),
    )
    .unwrap();
    let loose = scan_with(
        &HostFs::new(Some(dir.path().to_path_buf())),
        Path::new("/lib.so"),
        &ScanOptions {
            majority_percent: 1,
            ..ScanOptions::default()
        },
    )
    .unwrap();
    assert!(loose.extras.is_empty());
    assert!(loose.arch_list.contains(&"sm_90a".to_string()));
    assert_eq!(loose.majority_percent, 1);
}

#[test]
fn arch_specific_and_family_variants_are_their_own_architectures() {
    let tu = vec![
        Entry::new(Kind::Elf, 90),
        Entry::new(Kind::Elf, 90).flags(FLAG_ARCH_SPECIFIC),
        Entry::new(Kind::Elf, 100).flags(FLAG_FAMILY),
        Entry::new(Kind::Elf, 100).flags(FLAG_ARCH_SPECIFIC),
        Entry::new(Kind::Ptx, 90).flags(FLAG_ARCH_SPECIFIC),
    ];
    let s = scan_section(&fatbin_section_entries(&[tu.clone(), tu])).unwrap();
    assert_eq!(
        s.arch_list,
        ["sm_90", "sm_90a", "sm_100a", "sm_100f", "compute_90a"]
    );
    assert_eq!(count(&s, "sm_90a"), (2, 2));
    assert_eq!(count(&s, "sm_90"), (2, 2));
}

#[test]
fn ptx_only_libraries_list_compute_architectures() {
    let tu: &[(Kind, u32, bool)] = &[(Kind::Ptx, 52, false), (Kind::Ptx, 80, false)];
    let s = scan_file(
        "libptx.so",
        &elf_with_fatbin("libptx.so", &fatbin_section(&[tu; 5])),
    )
    .unwrap();
    assert_eq!(s.arch_list, ["compute_52", "compute_80"]);
    assert!(s.counts.iter().all(|c| c.arch.starts_with("compute_")));
}

#[test]
fn compressed_entries_are_counted_and_their_payloads_skipped() {
    // Large compressed payloads (both schemes): only the headers are read.
    let tu = vec![
        Entry::new(Kind::Elf, 80).payload(4 << 20),
        Entry::new(Kind::Ptx, 80)
            .flags(FLAG_COMPRESSED)
            .payload(3 << 20),
        Entry::new(Kind::Elf, 90)
            .flags(FLAG_COMPRESSED_ZSTD)
            .payload(5 << 20),
    ];
    let section = fatbin_section_entries(&[tu.clone(), tu]);
    let s = scan_section(&section).unwrap();
    assert_eq!(s.entries, 6);
    assert_eq!(s.compressed_entries, 4);
    assert_eq!(s.arch_list, ["sm_80", "sm_90", "compute_80"]);
    assert_eq!(s.bytes_read, 2 * 16 + 6 * 64);
    assert!(s.complete);
}

#[test]
fn other_entry_kinds_are_counted_but_not_listed() {
    let tu = vec![
        Entry::new(Kind::Elf, 80),
        Entry::new(Kind::Raw(8), 80),
        Entry::new(Kind::Raw(0x40), 80),
    ];
    let s = scan_section(&fatbin_section_entries(&[tu])).unwrap();
    assert_eq!(s.arch_list, ["sm_80"]);
    assert!(s.extras.is_empty());
    assert_eq!(count(&s, "lto_80"), (1, 1));
    assert_eq!(count(&s, "kind64_80"), (1, 1));
}

/// A 300 MB library (a sparse file: no disk used) whose `.nv_fatbin` fills its end:
/// 3 000 containers, 21 000 entries of ~14 KB each. Only the headers are read.
#[test]
fn a_300_mb_library_costs_only_its_headers() {
    const FILE: u64 = 300 << 20;
    let tu: Vec<Entry> = TORCH_TU
        .iter()
        .map(|&(k, sm, _)| Entry::new(k, sm).payload(14_000))
        .collect();
    let mut containers = vec![tu; 3000];
    containers.push(vec![Entry::new(Kind::Elf, 90).flags(FLAG_ARCH_SPECIFIC)]);
    let section = sparse_section(&containers);
    assert!(section.len > 280 << 20 && section.len < FILE - 4096);
    let offset = FILE - section.len;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("libtorch_cuda.so");
    std::fs::write(
        &path,
        elf_with_fatbin_at("libtorch_cuda.so", offset, section.len),
    )
    .unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(FILE).unwrap();
    section.write_into(&file, offset);
    drop(file);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), FILE);

    let fs = HostFs::new(Some(dir.path().to_path_buf()));
    let s = scan(&fs, Path::new("/libtorch_cuda.so")).unwrap();
    assert_eq!(s.containers, 3001);
    assert_eq!(s.entries, 21_001);
    assert_eq!(
        s.arch_list,
        [
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_90",
            "sm_100",
            "sm_120",
            "compute_120"
        ]
    );
    assert_eq!(s.extras, ["sm_90a"]);
    assert_eq!(s.section_size, section.len);
    assert!(s.complete, "{:?}", s.notes);
    // 3 001 × 16 + 21 001 × 64 ≈ 1.4 MB of 300 MB, plus the ELF headers.
    let headers = 3001 * 16 + 21_001 * 64;
    assert!(
        s.bytes_read >= headers && s.bytes_read < headers + 8192,
        "{}",
        s.bytes_read
    );
}

/// The header layout of NVIDIA's libcurand.so.10 (10.3.7.77, the nvidia-curand-cu12 wheel),
/// as read from the real file: 11 containers of SASS for sm_50…sm_90, 10 of them with a
/// compressed compute_90 PTX entry (flags 0x2011, an 80-byte header). Payload sizes as in
/// the file; the replica is sparse. The reader's answer matches `cuobjdump --list-elf
/// --list-ptx` on the real library: 11 cubins per sm and 10 PTX files, all compute_90.
#[test]
fn replica_of_a_real_cuda_library() {
    const ARCHS: [u32; 8] = [50, 60, 70, 75, 80, 86, 89, 90];
    const SMALL: [u64; 8] = [872, 872, 960, 960, 960, 960, 960, 840];
    let curand: [(&[u64; 8], u64); 11] = [
        (&[872; 8], 0),
        (
            &[
                1630496, 1627616, 1865440, 1853920, 1824736, 1816928, 1816800, 1972416,
            ],
            895304,
        ),
        (&SMALL, 64),
        (
            &[
                452448, 452064, 480672, 478112, 476960, 474784, 474784, 495192,
            ],
            398616,
        ),
        (
            &[
                689344, 688640, 740192, 736096, 732960, 729184, 728928, 766792,
            ],
            461024,
        ),
        (
            &[
                790784, 789760, 896928, 892064, 884576, 880032, 879904, 951368,
            ],
            525848,
        ),
        (
            &[
                823712, 823200, 940064, 935712, 928096, 923808, 923552, 1002312,
            ],
            561648,
        ),
        (
            &[
                758688, 758240, 842464, 837856, 834336, 830816, 830688, 879048,
            ],
            485592,
        ),
        (
            &[
                454336, 454112, 632288, 629856, 626400, 626272, 626144, 723256,
            ],
            404608,
        ),
        (&SMALL, 64),
        (&SMALL, 64),
    ];
    let containers: Vec<Vec<Entry>> = curand
        .iter()
        .map(|(elf, ptx)| {
            let mut c: Vec<Entry> = ARCHS
                .iter()
                .zip(elf.iter())
                .map(|(&sm, &size)| Entry::new(Kind::Elf, sm).payload(size))
                .collect();
            if *ptx > 0 {
                // nvcc puts the PTX before the newest SASS.
                c.insert(
                    7,
                    Entry::new(Kind::Ptx, 90)
                        .flags(FLAG_COMPRESSED)
                        .payload(*ptx),
                );
            }
            c
        })
        .collect();
    let section = sparse_section(&containers);
    // The real section is 0x32e9628 bytes long.
    assert_eq!(section.len, 0x32e_9628);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("libcurand.so.10");
    let head = elf_with_fatbin_at("libcurand.so.10", 1 << 20, section.len);
    std::fs::write(&path, head).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len((1 << 20) + section.len).unwrap();
    section.write_into(&file, 1 << 20);
    drop(file);
    let s = scan(
        &HostFs::new(Some(dir.path().to_path_buf())),
        Path::new("/libcurand.so.10"),
    )
    .unwrap();
    assert_eq!(s.containers, 11);
    assert_eq!(
        s.arch_list,
        [
            "sm_50",
            "sm_60",
            "sm_70",
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_89",
            "sm_90",
            "compute_90"
        ]
    );
    assert!(s.extras.is_empty());
    assert_eq!(count(&s, "compute_90"), (10, 10));
    assert_eq!(count(&s, "sm_50"), (11, 11));
    assert_eq!(s.compressed_entries, 10);
    assert!(s.bytes_read < 16 * 1024, "{}", s.bytes_read);
}

#[test]
fn a_library_without_device_code_has_an_empty_summary() {
    let lib = util::elf::shared_object("libc10.so", &["libc.so.6"]);
    let s = scan_file("libc10.so", &lib).unwrap();
    assert_eq!(s.containers, 0);
    assert_eq!(s.section_size, 0);
    assert!(s.arch_list.is_empty());
    assert!(
        s.notes.iter().any(|n| n.contains("no .nv_fatbin")),
        "{:?}",
        s.notes
    );
}

#[test]
fn garbage_files_are_errors_or_notes_never_panics() {
    assert!(scan_file("empty.so", b"").is_err());
    assert!(scan_file("text.so", b"hello, not an ELF at all").is_err());
    assert!(scan_file("trunc.so", b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0").is_err());
    let dir = tempfile::tempdir().unwrap();
    let fs = HostFs::new(Some(dir.path().to_path_buf()));
    assert!(scan(&fs, Path::new("/missing.so")).is_err());
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    assert!(scan(&fs, Path::new("/adir")).is_err());

    // A section that claims more than the file holds: counted up to the end, with a note.
    let section = fatbin_section(&[TORCH_TU, TORCH_TU]);
    let lib = elf_with_fatbin_at("libcut.so", 4096, section.len() as u64 * 10);
    let mut bytes = lib.clone();
    bytes.resize(4096, 0);
    bytes.extend_from_slice(&section);
    let s = scan_file("libcut.so", &bytes).unwrap();
    assert_eq!(s.containers, 2);
    assert!(!s.complete);
    assert!(
        s.notes.iter().any(|n| n.contains("truncated")),
        "{:?}",
        s.notes
    );
    // A section that starts past the end of the file.
    let lib = elf_with_fatbin_at("libgone.so", 1 << 40, 100);
    assert!(scan_file("libgone.so", &lib)
        .unwrap_err()
        .contains("past the end"));

    // Flip bytes all over a real-looking library: never a panic.
    let good = elf_with_fatbin("libx.so", &fatbin_section(&[TORCH_TU, TORCH_TU]));
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let dir = tempfile::tempdir().unwrap();
    let fs = HostFs::new(Some(dir.path().to_path_buf()));
    let path = dir.path().join("fuzz.so");
    for round in 0..1500 {
        let mut b = good.clone();
        for _ in 0..1 + next() % 6 {
            let i = (next() % b.len() as u64) as usize;
            b[i] = match round % 3 {
                0 => b[i] ^ (1 << (next() % 8)),
                1 => 0xff,
                _ => next() as u8,
            };
        }
        if round % 7 == 0 {
            b.truncate((next() % b.len() as u64) as usize);
        }
        std::fs::write(&path, &b).unwrap();
        if let Ok(s) = scan(&fs, Path::new("/fuzz.so")) {
            assert!(s.bytes_read < 1 << 20);
        }
    }
}

/// objcopy, where installed, extracts the same section bytes the writer put in: the fixture
/// is a well-formed ELF for binutils too.
#[test]
fn objcopy_agrees_on_the_section() {
    if Command::new("objcopy").arg("--version").output().is_err() {
        crate::util::skip(format_args!("objcopy not installed"));
        return;
    }
    let section = fatbin_section(&[TORCH_TU, &[(Kind::Elf, 90, true)]]);
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib.so");
    std::fs::write(&lib, elf_with_fatbin("lib.so", &section)).unwrap();
    let out: PathBuf = dir.path().join("dumped");
    let status = Command::new("objcopy")
        .arg(format!("--dump-section=.nv_fatbin={}", out.display()))
        .arg(&lib)
        .arg(dir.path().join("copy.so"))
        .status()
        .unwrap();
    assert!(status.success());
    let dumped = std::fs::read(&out).unwrap();
    assert_eq!(dumped, section);
    assert_eq!(
        scan_section(&dumped).unwrap().arch_list,
        scan_file("lib.so", &elf_with_fatbin("lib.so", &section))
            .unwrap()
            .arch_list
    );
}

/// A manual check against a real library: GPUDOCTOR_FATBIN_LIB=/path/libX.so and optionally
/// GPUDOCTOR_FATBIN_EXPECT=sm_50,sm_60,...,compute_90 (the expected arch list).
#[test]
#[ignore = "needs a real CUDA library named by GPUDOCTOR_FATBIN_LIB"]
fn real_library_from_the_environment() {
    let Some(lib) = std::env::var_os("GPUDOCTOR_FATBIN_LIB") else {
        return;
    };
    let s = scan(&HostFs::new(None), Path::new(&lib)).unwrap();
    println!("{}", serde_json::to_string_pretty(&s).unwrap());
    assert!(s.bytes_read < 16 << 20);
    if let Ok(expect) = std::env::var("GPUDOCTOR_FATBIN_EXPECT") {
        let want: Vec<&str> = expect.split(',').collect();
        assert_eq!(s.arch_list, want);
    }
}

/// `gpudoctor __fatbin FILE` (what .ci/compat-refresh --scan-package reads a wheel's libraries
/// with) prints the same summary as JSON; a file that is not ELF is a usage error naming it.
#[test]
fn the_fatbin_subcommand_prints_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libonnxruntime_providers_cuda.so");
    std::fs::write(
        &lib,
        elf_with_fatbin("lib.so", &fatbin_section(&[TORCH_TU])),
    )
    .unwrap();
    let out = util::gpudoctor()
        .arg("__fatbin")
        .arg(&lib)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["containers"], 1);
    assert_eq!(v["arch_list"][6], "compute_120");
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a library").unwrap();
    let out = util::gpudoctor()
        .arg("__fatbin")
        .arg(&text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.txt"));
}
