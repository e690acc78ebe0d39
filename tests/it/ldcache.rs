//! ld.so.cache parsing, checked against an independent writer (tests/util/ldcache.rs)
//! and against glibc's own ldconfig: caches it builds, and `ldconfig -p` as the
//! reference reader for both its caches and the writer's.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::ldcache::{
    host_flags, ldconfig_order, write_cache, write_cache_flags, write_cache_with, ByteOrder, Entry,
    Format, Options, FLAG_ELF_LIBC6,
};
use gpudoctor::ldcache::{
    host_arch, parse, CacheArch, CacheEntry, CacheFormat, LdCache, LdCacheError,
};

const FORMATS: [(Format, CacheFormat, &str); 3] = [
    (Format::Old, CacheFormat::Old, "old"),
    (Format::New, CacheFormat::New, "new"),
    (Format::Compat, CacheFormat::Compat, "compat"),
];

const SAMPLE: &[(&str, &str)] = &[
    ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
    ("libcuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so"),
    ("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"),
    (
        "libnvidia-ml.so.1",
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
    ),
    ("libfoo.so.9", "/opt/foo/lib/libfoo.so.9"),
    ("libfoo.so.10", "/opt/foo/lib/libfoo.so.10"),
    ("libcuda.so.1", "/usr/local/cuda/compat/libcuda.so.1"),
    ("libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so.12"),
];

/// The entries a cache of `input` should hold, in ldconfig's order.
fn expected(input: &[Entry]) -> Vec<CacheEntry> {
    let mut sorted = input.to_vec();
    sorted.sort_by(ldconfig_order);
    sorted
        .iter()
        .map(|e| CacheEntry {
            soname: e.soname.to_string(),
            path: e.path.to_string(),
            flags: e.flags,
            hwcap: e.hwcap,
        })
        .collect()
}

fn host_entries<'a>(pairs: &[(&'a str, &'a str)]) -> Vec<Entry<'a>> {
    pairs
        .iter()
        .map(|&(soname, path)| Entry {
            soname,
            path,
            flags: host_flags(),
            hwcap: 0,
        })
        .collect()
}

#[test]
fn round_trip_each_format() {
    for (format, want, name) in FORMATS {
        let c = parse(&write_cache(SAMPLE, format)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(c.format, want, "{name}");
        assert_eq!(c.entries, expected(&host_entries(SAMPLE)), "{name}");
        assert!(c.entries.iter().all(|e| e.arch() == host_arch()), "{name}");
    }
}

#[test]
fn round_trip_empty_cache() {
    for (format, want, name) in FORMATS {
        let c = parse(&write_cache(&[], format)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((c.format, c.entries.len()), (want, 0), "{name}");
    }
}

#[test]
fn round_trip_2000_entries() {
    let owned: Vec<(String, String)> = (0..2000)
        .map(|i| {
            let soname = format!("libgen{}.so.{}", i % 700, i % 13);
            let path = format!("/opt/gen/lib{}/{soname}", i / 700);
            (soname, path)
        })
        .collect();
    let input: Vec<(&str, &str)> = owned.iter().map(|(s, p)| (&s[..], &p[..])).collect();
    let want = expected(&host_entries(&input));
    for (format, _, name) in FORMATS {
        let c = parse(&write_cache(&input, format)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(c.entries.len(), 2000, "{name}");
        assert_eq!(c.entries, want, "{name}");
    }
}

#[test]
fn compat_uses_the_new_table() {
    let mut bytes = write_cache(SAMPLE, Format::Compat);
    // Spoil the old table's first entry (flags at 16): the loader never reads it.
    bytes[16..20].copy_from_slice(&0x7777_i32.to_ne_bytes());
    let c = parse(&bytes).unwrap();
    assert_eq!(c.format, CacheFormat::Compat);
    assert_eq!(c.entries, expected(&host_entries(SAMPLE)));
}

#[test]
fn lookup_skips_other_arches_and_keeps_cache_order() {
    let host = host_flags();
    let input = [
        (
            "libcuda.so.1",
            "/usr/lib/i386-linux-gnu/libcuda.so.1",
            FLAG_ELF_LIBC6,
        ),
        (
            "libcuda.so.1",
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            host,
        ),
        ("libcuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so", host),
        ("libcuda.so.1", "/usr/local/cuda/compat/libcuda.so.1", host),
    ];
    for (format, _, name) in FORMATS {
        let c = parse(&write_cache_flags(&input, format)).unwrap();
        let found: Vec<&str> = c
            .lookup("libcuda.so.1", host_arch())
            .map(|e| e.path.as_str())
            .collect();
        assert_eq!(
            found,
            [
                "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                "/usr/local/cuda/compat/libcuda.so.1"
            ],
            "{name}"
        );
        if host_arch() != CacheArch::I386 {
            let i386: Vec<&str> = c
                .lookup("libcuda.so.1", CacheArch::I386)
                .map(|e| e.path.as_str())
                .collect();
            assert_eq!(i386, ["/usr/lib/i386-linux-gnu/libcuda.so.1"], "{name}");
        }
        assert_eq!(c.lookup("libcuda.so.2", host_arch()).count(), 0, "{name}");
    }
}

#[test]
fn hwcap_and_generator_survive_the_new_formats() {
    let input = [
        Entry {
            soname: "libfoo.so.1",
            path: "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1",
            flags: host_flags(),
            hwcap: (1 << 62) | 3,
        },
        Entry {
            soname: "libfoo.so.1",
            path: "/usr/lib/libfoo.so.1",
            flags: host_flags(),
            hwcap: 0,
        },
    ];
    for format in [Format::New, Format::Compat] {
        let opts = Options {
            generator: Some("ldconfig (test) release version 9.99"),
            ..Options::new(format)
        };
        let c = parse(&write_cache_with(&input, &opts)).unwrap();
        assert_eq!(c.entries, expected(&input), "{format:?}");
        assert_eq!(
            c.generator.as_deref(),
            Some("ldconfig (test) release version 9.99")
        );
    }
}

fn err(bytes: &[u8]) -> LdCacheError {
    match parse(bytes) {
        Ok(c) => panic!("parsed as {:?} with {} entries", c.format, c.entries.len()),
        Err(e) => e,
    }
}

#[test]
fn empty_and_garbage_inputs() {
    assert_eq!(err(b""), LdCacheError::Empty);
    assert!(err(b"").to_string().contains("empty"));

    let e = err(b"\x7fELF\x02\x01\x01 definitely not a cache");
    assert!(matches!(e, LdCacheError::BadMagic { .. }), "{e}");
    assert!(e.to_string().contains("not an ld.so.cache"), "{e}");
    assert!(e.to_string().contains(r"\x7fELF"), "{e}");

    let e = err(b"glibc-ld.so");
    assert!(
        matches!(e, LdCacheError::Truncated { what: "magic", .. }),
        "{e}"
    );

    let e = err(b"ld.so-1.7.0\0\x05");
    let msg = e.to_string();
    assert!(
        msg.contains("old-format header") && msg.contains("16"),
        "{msg}"
    );

    let mut v = write_cache(SAMPLE, Format::New);
    v[17..20].copy_from_slice(b"1.0");
    let e = err(&v);
    assert!(e.to_string().contains("\"1.0\""), "{e}");
}

#[test]
fn truncated_inputs_say_what_and_where() {
    let new = write_cache(SAMPLE, Format::New);
    let e = err(&new[..40]);
    assert_eq!(
        e,
        LdCacheError::Truncated {
            what: "new-format header",
            offset: 0,
            need: 48,
            len: 40
        }
    );

    let e = err(&new[..48 + 24 * 3 + 5]);
    assert!(
        matches!(
            e,
            LdCacheError::TooManyEntries {
                claimed: 8,
                fits: 3,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("claims 8 entries"), "{e}");

    // Cutting the final NUL leaves the last path unterminated.
    let e = err(&new[..new.len() - 1]);
    assert!(
        matches!(
            e,
            LdCacheError::Unterminated {
                entry: 7,
                field: "path",
                ..
            }
        ),
        "{e}"
    );

    // Every strict prefix of every format is an error, never a panic.
    for (format, _, name) in FORMATS {
        let full = write_cache(SAMPLE, format);
        for cut in 0..full.len() {
            assert!(parse(&full[..cut]).is_err(), "{name} cut at {cut}");
        }
    }
}

#[test]
fn offsets_outside_the_file_are_errors() {
    let mut v = write_cache(SAMPLE, Format::New);
    // Entry 0's key (struct file_entry_new at 48, key at +4).
    v[52..56].copy_from_slice(&0xffff_fff0_u32.to_ne_bytes());
    let e = err(&v);
    assert!(
        matches!(
            e,
            LdCacheError::BadOffset {
                entry: 0,
                field: "soname",
                offset: 0xffff_fff0,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("past the end"), "{e}");

    let mut v = write_cache(SAMPLE, Format::Old);
    v[12..16].copy_from_slice(&u32::MAX.to_ne_bytes());
    assert!(matches!(err(&v), LdCacheError::TooManyEntries { .. }));
}

#[test]
fn wrong_endianness_is_rejected() {
    let (found, host) = if cfg!(target_endian = "little") {
        ("big-endian", "little-endian")
    } else {
        ("little-endian", "big-endian")
    };
    let swapped = |format| {
        let opts = Options {
            byte_order: ByteOrder::Swapped,
            ..Options::new(format)
        };
        err(&write_cache_with(&host_entries(SAMPLE), &opts))
    };
    let e = swapped(Format::New);
    assert!(matches!(e, LdCacheError::WrongEndian { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains(found) && msg.contains(host), "{msg}");

    // The old header has no marker (and in compat it hides the new one, as
    // elf/dl-cache.c notes); the byte-swapped count gives it away.
    for format in [Format::Old, Format::Compat] {
        let e = swapped(format);
        assert!(e.to_string().contains("other byte order"), "{e}");
    }

    // ldconfig marks a cache it wants ignored with endian flags 1.
    let mut v = write_cache(SAMPLE, Format::New);
    v[28] = 1;
    assert!(err(&v).to_string().contains("marked invalid"));
}

// ---- Oracle: glibc's ldconfig ----

fn ldconfig() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/sbin".into(), "/usr/sbin".into()])
        .map(|d| d.join("ldconfig"))
        .find(|p| p.is_file())
}

/// One line of `ldconfig -p`: soname, type description, path.
#[derive(Debug, PartialEq, Eq)]
struct Printed {
    soname: String,
    descr: String,
    path: String,
}

/// `ldconfig -p` on a cache file (the system one when `cache` is None).
fn ldconfig_p(ldconfig: &Path, cache: Option<&Path>) -> (Vec<Printed>, String) {
    let mut cmd = Command::new(ldconfig);
    cmd.arg("-p").env("LC_ALL", "C");
    if let Some(c) = cache {
        cmd.arg("-C").arg(c);
    }
    let out = cmd.output().expect("run ldconfig -p");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "ldconfig -p failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Lines look like "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1".
    let lines = stdout
        .lines()
        .filter_map(|l| l.strip_prefix('\t'))
        .map(|l| {
            let (left, path) = l.rsplit_once(") => ").expect("entry line");
            let (soname, descr) = left.split_once(" (").expect("entry line");
            let descr = descr.split(", ").next().unwrap_or(descr);
            Printed {
                soname: soname.into(),
                descr: descr.into(),
                path: path.into(),
            }
        })
        .collect();
    (lines, stdout)
}

/// The arch `ldconfig -p`'s type description names (elf/cache.c print_entry).
fn descr_arch(descr: &str) -> Option<CacheArch> {
    Some(match descr {
        "libc6,x86-64" => CacheArch::X86_64,
        "libc6,x32" => CacheArch::X32,
        "libc6,AArch64" => CacheArch::Aarch64,
        "libc6" | "ELF" => CacheArch::I386,
        _ => return None,
    })
}

fn assert_matches_printed(parsed: &LdCache, printed: &[Printed], what: &str) {
    let got: Vec<(&str, &str)> = parsed
        .entries
        .iter()
        .map(|e| (e.soname.as_str(), e.path.as_str()))
        .collect();
    let want: Vec<(&str, &str)> = printed
        .iter()
        .map(|p| (p.soname.as_str(), p.path.as_str()))
        .collect();
    assert_eq!(got, want, "{what}: parsed vs ldconfig -p");
    for (e, p) in parsed.entries.iter().zip(printed) {
        if let Some(arch) = descr_arch(&p.descr) {
            assert_eq!(e.arch(), arch, "{what}: {} ({})", e.soname, p.descr);
        }
    }
}

/// Small real shared libraries of the host arch, named by their sonames.
fn sample_libraries() -> Vec<PathBuf> {
    let triple = if cfg!(target_arch = "x86_64") {
        "x86_64-linux-gnu"
    } else if cfg!(target_arch = "aarch64") {
        "aarch64-linux-gnu"
    } else {
        "unknown"
    };
    let dirs = [
        format!("/lib/{triple}"),
        format!("/usr/lib/{triple}"),
        "/lib64".into(),
        "/usr/lib64".into(),
        "/usr/lib".into(),
        "/lib".into(),
    ];
    // glibc and zlib libraries whose file names are their sonames everywhere.
    let names = [
        "libz.so.1",
        "libm.so.6",
        "libdl.so.2",
        "librt.so.1",
        "libpthread.so.0",
        "libutil.so.1",
    ];
    names
        .iter()
        .filter_map(|n| {
            dirs.iter()
                .map(|d| Path::new(d).join(n))
                .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() < 8 << 20))
        })
        .collect()
}

#[test]
fn ldconfig_built_caches_parse_as_ldconfig_prints_them() {
    let Some(ldconfig) = ldconfig() else {
        crate::util::skip(format_args!("no ldconfig on PATH, /sbin or /usr/sbin"));
        return;
    };
    let libs = sample_libraries();
    if libs.len() < 2 {
        crate::util::skip(format_args!("found only {libs:?} to feed ldconfig"));
        return;
    }
    for (format, want, name) in FORMATS {
        // A tree for `ldconfig -r`: /etc/ld.so.conf lists two directories; every
        // library goes in a/lib and the first also in b/lib, so one soname has
        // two entries. -r keeps every read and write inside the tree (chroot as
        // root, path rewriting otherwise); -X makes no links; -i skips the
        // system's aux cache.
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for dir in ["etc", "opt/gd/a/lib", "opt/gd/b/lib"] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        std::fs::write(r.join("etc/ld.so.conf"), "/opt/gd/a/lib\n/opt/gd/b/lib\n").unwrap();
        let mut input = Vec::new();
        for (i, lib) in libs.iter().enumerate() {
            let soname = lib.file_name().unwrap().to_str().unwrap().to_string();
            let mut dirs = vec!["a"];
            if i == 0 {
                dirs.push("b");
            }
            for d in dirs {
                std::fs::copy(lib, r.join(format!("opt/gd/{d}/lib/{soname}"))).unwrap();
                input.push((soname.clone(), format!("/opt/gd/{d}/lib/{soname}")));
            }
        }
        // ldconfig adds directories in ld.so.conf order: a's entries, then b's.
        input.sort_by_key(|(_, p)| p.starts_with("/opt/gd/b"));

        let out = Command::new(&ldconfig)
            .arg("-r")
            .arg(r)
            .args(["-c", name, "-X", "-i", "-C", "/etc/ld.so.cache"])
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ldconfig -c {name} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cache = r.join("etc/ld.so.cache");
        let parsed =
            parse(&std::fs::read(&cache).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(parsed.format, want, "{name}");

        let (printed, text) = ldconfig_p(&ldconfig, Some(&cache));
        assert_matches_printed(&parsed, &printed, name);
        if format != Format::Old {
            let generator = parsed.generator.as_deref().expect("generator");
            assert!(
                text.contains(&format!("Cache generated by: {generator}")),
                "{text}"
            );
        }

        // The directory's contents, in the order the writer puts them, which
        // must be ldconfig's.
        let refs: Vec<(&str, &str)> = input.iter().map(|(s, p)| (&s[..], &p[..])).collect();
        assert_eq!(parsed.entries, expected(&host_entries(&refs)), "{name}");

        let first = &input[0].0;
        let found: Vec<&str> = parsed
            .lookup(first, host_arch())
            .map(|e| e.path.as_str())
            .collect();
        assert_eq!(
            found,
            [
                format!("/opt/gd/a/lib/{first}"),
                format!("/opt/gd/b/lib/{first}")
            ],
            "{name}"
        );
    }
}

#[test]
fn ldconfig_reads_the_writers_caches_as_we_do() {
    let Some(ldconfig) = ldconfig() else {
        crate::util::skip(format_args!("no ldconfig on PATH, /sbin or /usr/sbin"));
        return;
    };
    let mut input: Vec<Entry> = host_entries(SAMPLE);
    input.push(Entry {
        soname: "libcuda.so.1",
        path: "/usr/lib/i386-linux-gnu/libcuda.so.1",
        flags: FLAG_ELF_LIBC6,
        hwcap: 0,
    });
    let dir = tempfile::tempdir().unwrap();
    for (format, _, name) in FORMATS {
        let opts = Options {
            generator: Some("gpudoctor test writer"),
            ..Options::new(format)
        };
        let path = dir.path().join(format!("cache.{name}"));
        std::fs::write(&path, write_cache_with(&input, &opts)).unwrap();
        let parsed = parse(&std::fs::read(&path).unwrap()).unwrap();
        let (printed, text) = ldconfig_p(&ldconfig, Some(&path));
        assert_eq!(printed.len(), input.len(), "{name}: {text}");
        assert_matches_printed(&parsed, &printed, name);
        if format != Format::Old {
            assert!(
                text.contains("Cache generated by: gpudoctor test writer"),
                "{text}"
            );
        }
    }
}

#[test]
fn system_cache_matches_ldconfig_p() {
    let Some(ldconfig) = ldconfig() else {
        crate::util::skip(format_args!("no ldconfig on PATH, /sbin or /usr/sbin"));
        return;
    };
    let Ok(bytes) = std::fs::read("/etc/ld.so.cache") else {
        crate::util::skip(format_args!("no readable /etc/ld.so.cache"));
        return;
    };
    let parsed = parse(&bytes).unwrap_or_else(|e| panic!("/etc/ld.so.cache: {e}"));
    let (printed, _) = ldconfig_p(&ldconfig, None);
    assert_matches_printed(&parsed, &printed, "/etc/ld.so.cache");

    // ldconfig wrote it, so it is in the writer's order (which checks libcmp
    // against real data).
    let entries: Vec<Entry> = parsed
        .entries
        .iter()
        .map(|e| Entry {
            soname: &e.soname,
            path: &e.path,
            flags: e.flags,
            hwcap: e.hwcap,
        })
        .collect();
    for pair in entries.windows(2) {
        assert_ne!(
            ldconfig_order(&pair[0], &pair[1]),
            std::cmp::Ordering::Greater,
            "{pair:?}"
        );
    }

    if printed
        .iter()
        .any(|p| p.soname == "libc.so.6" && descr_arch(&p.descr) == Some(host_arch()))
    {
        let libc = parsed.lookup("libc.so.6", host_arch()).next().unwrap();
        assert!(libc.path.ends_with("/libc.so.6"), "{libc:?}");
    }
}
