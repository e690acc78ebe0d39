//! systemd's journal files, read without journalctl (under `--root` nothing of the host runs
//! on the tree): the kernel's messages that matter, with their realtime and monotonic stamps
//! and boot. The format is systemd's "Journal File Format" (docs/JOURNAL_FILE_FORMAT.md in
//! systemd): a header, then 8-byte-aligned objects. Data objects hold one `FIELD=value` each
//! (shared by every entry that has it) and come before the entries that name them, so one
//! sequential pass suffices: the `_TRANSPORT=kernel` data and the messages worth keeping are
//! remembered by offset, and each entry object names its data by offset. Hash tables and
//! entry arrays are skipped. Compact files (32-bit item offsets, systemd 252+) and
//! zstd-compressed data are read; xz and lz4 data (older systemd) are counted, not read.

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::fsys::HostFs;

const SIGNATURE: &[u8; 8] = b"LPKSHHRH";
/// Header fields used (byte offsets).
const INCOMPATIBLE_FLAGS: usize = 12;
const TAIL_ENTRY_BOOT_ID: usize = 56;
const HEADER_SIZE: usize = 88;
const TAIL_OBJECT_OFFSET: usize = 136;
const HEAD_ENTRY_REALTIME: usize = 184;
/// The smallest header that has every field above.
const MIN_HEADER: usize = 208;

const INCOMPATIBLE_COMPACT: u32 = 16;

const OBJECT_DATA: u8 = 1;
const OBJECT_ENTRY: u8 = 3;
const COMPRESSED_XZ: u8 = 1;
const COMPRESSED_LZ4: u8 = 2;
const COMPRESSED_ZSTD: u8 = 4;

/// A data object larger than this is not a kernel message worth reading.
const MAX_DATA_OBJECT: u64 = 256 << 10;
/// An entry object larger than this (65,000 fields) is damage, not an entry: skipped.
const MAX_ENTRY_OBJECT: u64 = 1 << 20;
/// A message kept is cut to this many bytes once decompressed.
const MAX_MESSAGE: usize = 64 << 10;

/// One kernel message kept.
pub struct Entry {
    pub realtime_us: u64,
    pub monotonic_us: u64,
    pub boot_id: [u8; 16],
    pub message: String,
}

/// What the journal files gave.
pub struct Journal {
    /// The files read, oldest first.
    pub files: Vec<PathBuf>,
    /// Kernel messages kept (those `keep` accepted), oldest file first, in file order.
    pub entries: Vec<Entry>,
    /// Every kernel message's entry, kept or not.
    pub kernel_records: u64,
    /// The boot of the newest entry of the newest file.
    pub newest_boot: Option<[u8; 16]>,
    /// Older files left out by the byte bound, or a file cut short by the deadline.
    pub truncated: bool,
    /// Data objects compressed with xz or lz4, which are not read.
    pub unread_compressed: u64,
}

/// The journal directories: the persistent one, then the volatile one.
pub const DIRS: &[&str] = &["/var/log/journal", "/run/log/journal"];

/// Reads the system journal files under `DIRS` (`<machine-id>/system*.journal`), newest first
/// until `max_bytes` of files, and keeps the kernel messages `keep` accepts.
pub fn read(
    fs: &HostFs,
    keep: &dyn Fn(&str) -> bool,
    max_bytes: u64,
    deadline: Instant,
) -> Result<Journal, String> {
    let mut found: Vec<(u64, u64, PathBuf)> = Vec::new();
    let mut why = Vec::new();
    for dir in DIRS {
        let machines = match fs.read_dir(Path::new(dir)) {
            Ok(m) => m,
            Err(e) => {
                why.push(format!("{dir}: {e}"));
                continue;
            }
        };
        for m in machines {
            let sub = Path::new(dir).join(&m);
            let Ok(names) = fs.read_dir(&sub) else {
                continue;
            };
            for n in names {
                let name = n.to_string_lossy();
                if !(name.starts_with("system") && name.ends_with(".journal")) {
                    continue;
                }
                let path = sub.join(&n);
                match head(fs, &path) {
                    Ok((realtime, len)) => found.push((realtime, len, path)),
                    Err(e) => why.push(format!("{}: {e}", path.display())),
                }
            }
        }
    }
    if found.is_empty() {
        return Err(if why.is_empty() {
            "no system journal file".into()
        } else {
            why.join("; ")
        });
    }
    // Newest first within the bound, then read oldest first.
    found.sort_by_key(|(realtime, ..)| std::cmp::Reverse(*realtime));
    let mut total = 0u64;
    let mut chosen = Vec::new();
    let mut truncated = false;
    for (_, len, path) in found {
        if !chosen.is_empty() && total + len > max_bytes {
            truncated = true;
            break;
        }
        total += len;
        chosen.push(path);
    }
    chosen.reverse();
    let mut journal = Journal {
        files: Vec::new(),
        entries: Vec::new(),
        kernel_records: 0,
        newest_boot: None,
        truncated,
        unread_compressed: 0,
    };
    for path in chosen {
        if Instant::now() >= deadline {
            journal.truncated = true;
            break;
        }
        let f = fs.open_regular(&path).map_err(|e| e.to_string())?;
        let len = f.metadata().map_err(|e| e.to_string())?.len();
        match scan_file(f, len, keep, deadline, &mut journal) {
            Ok(()) => journal.files.push(path),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    Ok(journal)
}

/// A file's first entry time and length, from its header.
fn head(fs: &HostFs, path: &Path) -> Result<(u64, u64), String> {
    let mut f = fs.open_regular(path).map_err(|e| e.to_string())?;
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    let mut h = [0u8; MIN_HEADER];
    f.read_exact(&mut h)
        .map_err(|_| "shorter than a journal header".to_string())?;
    if &h[..8] != SIGNATURE {
        return Err("not a journal file (no LPKSHHRH signature)".into());
    }
    Ok((le64(&h, HEAD_ENTRY_REALTIME), len))
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// A journal file's bytes scanned as a file is (for the fuzzer): the kernel records and the
/// messages kept, or why the file was refused.
pub fn scan_bytes(bytes: &[u8]) -> Result<(u64, usize), String> {
    let mut j = Journal {
        files: Vec::new(),
        entries: Vec::new(),
        kernel_records: 0,
        newest_boot: None,
        truncated: false,
        unread_compressed: 0,
    };
    let far = Instant::now() + std::time::Duration::from_secs(5);
    scan_file(
        std::io::Cursor::new(bytes),
        bytes.len() as u64,
        &|_| true,
        far,
        &mut j,
    )?;
    Ok((j.kernel_records, j.entries.len()))
}

/// One sequential pass over a file's objects (`len` bytes).
fn scan_file(
    f: impl Read + Seek,
    len: u64,
    keep: &dyn Fn(&str) -> bool,
    deadline: Instant,
    out: &mut Journal,
) -> Result<(), String> {
    let mut r = BufReader::with_capacity(1 << 16, f);
    let mut h = vec![0u8; MIN_HEADER];
    r.read_exact(&mut h).map_err(|e| e.to_string())?;
    if &h[..8] != SIGNATURE {
        return Err("not a journal file (no LPKSHHRH signature)".into());
    }
    let compact = le32(&h, INCOMPATIBLE_FLAGS) & INCOMPATIBLE_COMPACT != 0;
    let header_size = le64(&h, HEADER_SIZE);
    let tail = le64(&h, TAIL_OBJECT_OFFSET).min(len);
    let boot: [u8; 16] = h[TAIL_ENTRY_BOOT_ID..TAIL_ENTRY_BOOT_ID + 16]
        .try_into()
        .expect("16 bytes");
    if boot != [0; 16] {
        out.newest_boot = Some(boot);
    }
    if header_size < MIN_HEADER as u64 || header_size > len {
        return Err(format!("header size {header_size} out of range"));
    }
    let payload_at: usize = if compact { 72 } else { 64 };
    let mut kernel: HashSet<u64> = HashSet::new();
    let mut messages: HashMap<u64, String> = HashMap::new();
    let mut pos = header_size;
    r.seek(SeekFrom::Start(pos)).map_err(|e| e.to_string())?;
    let mut objects = 0u64;
    while pos <= tail && pos + 16 <= len {
        objects += 1;
        if objects % 4096 == 0 && Instant::now() >= deadline {
            out.truncated = true;
            break;
        }
        let mut oh = [0u8; 16];
        r.read_exact(&mut oh).map_err(|e| e.to_string())?;
        let (kind, flags, size) = (oh[0], oh[1], le64(&oh, 8));
        // pos + 16 <= len here, so `len - pos` cannot underflow and nothing below overflows.
        if size < 16 || size > len - pos {
            return Err(format!(
                "object at {pos} has size {size}: the file is cut or damaged"
            ));
        }
        let body = size - 16;
        let wanted = match kind {
            OBJECT_DATA => body <= MAX_DATA_OBJECT,
            OBJECT_ENTRY => body <= MAX_ENTRY_OBJECT,
            _ => false,
        };
        if wanted {
            let mut b = vec![0u8; body as usize];
            r.read_exact(&mut b).map_err(|e| e.to_string())?;
            if kind == OBJECT_DATA {
                let Some(raw) = b.get(payload_at - 16..) else {
                    return Err(format!("data object at {pos} is too short"));
                };
                let payload = if flags & COMPRESSED_ZSTD != 0 {
                    match zstd::bulk::decompress(raw, MAX_MESSAGE + 64) {
                        Ok(p) => std::borrow::Cow::Owned(p),
                        Err(_) => {
                            pos = next(pos, size);
                            r.seek(SeekFrom::Start(pos)).map_err(|e| e.to_string())?;
                            continue;
                        }
                    }
                } else if flags & (COMPRESSED_XZ | COMPRESSED_LZ4) != 0 {
                    out.unread_compressed += 1;
                    std::borrow::Cow::Borrowed(&[][..])
                } else {
                    std::borrow::Cow::Borrowed(raw)
                };
                if payload.as_ref() == b"_TRANSPORT=kernel" {
                    kernel.insert(pos);
                } else if let Some(m) = payload.strip_prefix(b"MESSAGE=") {
                    let text = String::from_utf8_lossy(&m[..m.len().min(MAX_MESSAGE)]);
                    if keep(&text) {
                        messages.insert(pos, text.into_owned());
                    }
                }
            } else {
                entry(&b, compact, &kernel, &messages, out);
            }
        }
        let after = next(pos, size);
        let read_to = pos + 16 + if wanted { body } else { 0 };
        if after != read_to {
            r.seek_relative((after - read_to) as i64)
                .map_err(|e| e.to_string())?;
        }
        pos = after;
    }
    Ok(())
}

fn next(pos: u64, size: u64) -> u64 {
    (pos + size + 7) & !7
}

/// An entry object's body (after the object header): its stamps, boot and items.
fn entry(
    b: &[u8],
    compact: bool,
    kernel: &HashSet<u64>,
    messages: &HashMap<u64, String>,
    out: &mut Journal,
) {
    // seqnum, realtime, monotonic, boot_id, xor_hash: 48 bytes before the items.
    if b.len() < 48 {
        return;
    }
    let items = &b[48..];
    let offsets: Vec<u64> = if compact {
        items
            .chunks_exact(4)
            .map(|c| u64::from(le32(c, 0)))
            .collect()
    } else {
        items.chunks_exact(16).map(|c| le64(c, 0)).collect()
    };
    if !offsets.iter().any(|o| kernel.contains(o)) {
        return;
    }
    out.kernel_records += 1;
    if let Some(message) = offsets.iter().find_map(|o| messages.get(o)) {
        out.entries.push(Entry {
            realtime_us: le64(b, 8),
            monotonic_us: le64(b, 16),
            boot_id: b[24..40].try_into().expect("16 bytes"),
            message: message.clone(),
        });
    }
}

/// `0123456789abcdef…` (the form of /proc/sys/kernel/random/boot_id without dashes) as bytes.
pub fn parse_boot_id(text: &str) -> Option<[u8; 16]> {
    let hex: String = text.trim().chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_ids_as_the_kernel_writes_them() {
        assert_eq!(
            parse_boot_id("01234567-89ab-cdef-0123-456789abcdef\n"),
            Some([
                0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
                0xcd, 0xef
            ])
        );
        assert_eq!(parse_boot_id("xyz"), None);
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let mut header = vec![0u8; 264];
        header[..8].copy_from_slice(SIGNATURE);
        header[HEADER_SIZE..HEADER_SIZE + 8].copy_from_slice(&264u64.to_le_bytes());
        header[TAIL_OBJECT_OFFSET..TAIL_OBJECT_OFFSET + 8].copy_from_slice(&264u64.to_le_bytes());
        // One object claiming more bytes than the file has.
        let mut object = vec![OBJECT_DATA, 0, 0, 0, 0, 0, 0, 0];
        object.extend_from_slice(&4096u64.to_le_bytes());
        for (name, bytes) in [
            ("short", SIGNATURE.to_vec()),
            ("cut", [header.clone(), object].concat()),
            ("alien", vec![7u8; 400]),
        ] {
            assert!(scan_bytes(&bytes).is_err(), "{name}");
        }
        // A header alone is an empty journal.
        assert_eq!(scan_bytes(&header), Ok((0, 0)));
        // An object whose size would carry an offset past 2^64: damage, not an overflow.
        let mut huge = vec![OBJECT_DATA, 0, 0, 0, 0, 0, 0, 0];
        huge.extend_from_slice(&(u64::MAX - 8).to_le_bytes());
        assert!(scan_bytes(&[header.clone(), huge].concat()).is_err());
    }

    /// The fuzzer's seed: a header, `_TRANSPORT=kernel`, one message and a compact entry
    /// naming both (laid out as systemd's format document has it, hash tables left out).
    #[test]
    fn a_minimal_compact_journal_gives_its_one_kernel_message() {
        let seed = include_bytes!("../../fuzz/seeds/proc/journal-compact");
        assert_eq!(scan_bytes(seed), Ok((1, 1)));
    }
}
