//! Probe: the kernel's log, for what NVIDIA's driver and the PCIe error reporting wrote —
//! Xid and SXid events, GSP and adapter-initialisation failures, "fallen off the bus", the
//! open-modules requirement, and AER reports. Read from `/dev/kmsg` (since boot), else
//! `journalctl -k -b 0` on the live host, else journald's files read natively (journal.rs;
//! under `--root` nothing runs on the tree), else the newest syslog file. Only the lines that
//! matter are kept, grouped; the log itself is never echoed whole.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::fact::{Fact, MissingReason};
use crate::facts::kernel_log::{EventGroup, EventKind, KernelLog, LogScan, LoggedLine};
use crate::fsys::HostFs;
use crate::runner::Runner;

pub const KMSG: &str = "/dev/kmsg";
/// The syslog files that hold the kernel's messages: Debian's and Ubuntu's kern.log, the Red
/// Hat family's messages, and syslog where kern.log is not split out.
pub const TEXT_LOGS: &[&str] = &["/var/log/kern.log", "/var/log/messages", "/var/log/syslog"];
pub const DMESG_RESTRICT: &str = "/proc/sys/kernel/dmesg_restrict";

/// Bytes of log read at most: a syslog file is read from its last `MAX_BYTES`.
const MAX_BYTES: u64 = 16 << 20;
/// Records (lines) read at most.
const MAX_RECORDS: usize = 400_000;
/// Distinct event groups kept; the rest are counted.
const MAX_GROUPS: usize = 256;
/// The matching lines kept as they were logged (the newest), for the evidence and the bundle.
const MAX_LINES: usize = 100;
/// A logged line is kept to this many characters.
const MAX_LINE_CHARS: usize = 300;
/// Process names kept per group.
const MAX_PROCESSES: usize = 8;

/// One message of the log, with what its source says of its time and boot.
struct Record<'a> {
    at: Option<String>,
    /// Seconds since the epoch, where the source tells (a syslog stamp, the journal's
    /// realtime stamp, kmsg's boot-relative time plus the boot time of /proc/stat).
    wall: Option<f64>,
    this_boot: Option<bool>,
    text: &'a str,
}

/// Which part of the log is read (`check --since-boot`, `--since TIME`).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum LogWindow {
    /// Everything the source holds: /dev/kmsg and the journal hold this boot; a syslog
    /// file's earlier boots are kept as history.
    #[default]
    All,
    /// This boot only: a syslog file's earlier boots are left out.
    ThisBoot,
    /// Messages logged at or after this time (seconds since the epoch); `given` is the
    /// option as written.
    Since { from: f64, given: String },
}

impl LogWindow {
    /// `--since TIME`: RFC 3339 (`2026-12-07T10:00:00Z`, `2026-12-07 10:00:00` read as
    /// UTC) or a span before `now` (`2h`, `30min`, `1day`).
    pub fn since(given: &str, now: std::time::SystemTime) -> Result<LogWindow, String> {
        let epoch = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64())
        };
        let from = if let Ok(ago) = humantime::parse_duration(given.trim()) {
            epoch(now) - ago.as_secs_f64()
        } else if let Some(t) = rfc3339_epoch(given.trim()) {
            t
        } else {
            return Err(format!(
                "--since {given}: expected a time (2026-12-07T10:00:00Z, or \"2026-12-07 10:00:00\" in UTC) or a span before now (2h, 30min, 1day)"
            ));
        };
        Ok(LogWindow::Since {
            from,
            given: given.trim().to_string(),
        })
    }

    /// What the window adds to the span read, for the report.
    fn describe(&self) -> Option<String> {
        match self {
            LogWindow::All => None,
            LogWindow::ThisBoot => Some("this boot only (--since-boot)".into()),
            LogWindow::Since { from, given } => Some(format!(
                "from {} on (--since {given})",
                // RFC 3339 ends with year 9999: 9999-12-31T23:59:59Z is 253402300799 s.
                humantime::format_rfc3339_seconds(
                    std::time::UNIX_EPOCH
                        + Duration::from_secs_f64(from.clamp(0.0, 253_402_300_799.0))
                )
            )),
        }
    }
}

/// Seconds since the epoch of an RFC 3339 time (`2026-12-02T10:11:12.345678+01:00`, `Z`, or
/// no zone: UTC; a space may stand for the `T`).
fn rfc3339_epoch(s: &str) -> Option<f64> {
    let s = s.trim();
    let (date, rest) = s.split_at_checked(10)?;
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let mut d = date.split('-');
    let (y, m, day): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    // The zone: Z, ±HH:MM, or none.
    let (clock, offset) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => {
            let (clock, zone) = rest.split_at(i);
            let offset = match zone {
                "Z" | "z" => 0,
                z => {
                    let sign = if z.starts_with('-') { -1 } else { 1 };
                    let (h, mi) = z[1..].split_once(':')?;
                    let (h, mi) = (h.parse::<i64>().ok()?, mi.parse::<i64>().ok()?);
                    if !(0..=23).contains(&h) || !(0..=59).contains(&mi) {
                        return None;
                    }
                    sign * (h * 3600 + mi * 60)
                }
            };
            (clock, offset)
        }
        None => (rest, 0),
    };
    let mut c = clock.split(':');
    let (h, mi): (i64, i64) = (c.next()?.parse().ok()?, c.next()?.parse().ok()?);
    let sec: f64 = c.next().map_or(Some(0.0), |x| x.parse().ok())?;
    if c.next().is_some()
        || !(0..=23).contains(&h)
        || !(0..=59).contains(&mi)
        || !(0.0..61.0).contains(&sec)
    {
        return None;
    }
    Some((days_from_civil(y, m, day) * 86_400 + h * 3600 + mi * 60 - offset) as f64 + sec)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A classic syslog stamp (`Dec  2 10:11:12`, no year, the host's local time) in seconds since
/// the epoch: the year is the newest that does not put the stamp after `now`.
fn syslog_epoch(stamp: &str, now: f64) -> Option<f64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut w = stamp.split_whitespace();
    let month = MONTHS.iter().position(|m| Some(*m) == w.next())? as i32;
    let day: i32 = w.next()?.parse().ok()?;
    let mut c = w.next()?.split(':');
    let (h, mi, s): (i32, i32, i32) = (
        c.next()?.parse().ok()?,
        c.next()?.parse().ok()?,
        c.next()?.parse().ok()?,
    );
    let local = |year: i32| -> Option<f64> {
        // SAFETY: tm is plain data; mktime reads and normalises it and touches nothing else.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        tm.tm_year = year - 1900;
        tm.tm_mon = month;
        tm.tm_mday = day;
        tm.tm_hour = h;
        tm.tm_min = mi;
        tm.tm_sec = s;
        tm.tm_isdst = -1;
        // SAFETY: as above; a valid, initialised tm.
        let t = unsafe { libc::mktime(&mut tm) };
        (t != -1).then_some(t as f64)
    };
    let this_year = 1970 + (now / 31_556_952.0) as i32;
    // A day ahead of now allows for a clock or zone that differs a little.
    [this_year + 1, this_year, this_year - 1]
        .into_iter()
        .filter_map(local)
        .find(|t| *t <= now + 86_400.0)
}

/// When this boot began (`btime` of /proc/stat), in seconds since the epoch.
fn boot_epoch(fs: &HostFs) -> Option<f64> {
    let stat = fs.read_text(Path::new("/proc/stat")).ok()?;
    stat.text
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|s| s.trim().parse::<f64>().ok())
}

fn now_epoch() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

pub fn probe(fs: &HostFs, budget: Duration, window: &LogWindow) -> KernelLog {
    let deadline = Instant::now() + budget.min(Duration::from_secs(3));
    let mut passed_over = Vec::new();
    let live = fs.root().is_none();

    // /dev/kmsg: a character device on the live host; under --root a file standing in for it.
    let kmsg = if live {
        read_kmsg_device(Path::new(KMSG), deadline)
    } else {
        fs.read_bytes(Path::new(KMSG), MAX_BYTES)
            .map(|b| (String::from_utf8_lossy(&b).into_owned(), false))
            .map_err(|e| e.to_string())
    };
    match kmsg {
        Ok((text, truncated)) => {
            let boot = match window {
                LogWindow::Since { .. } => boot_epoch(fs),
                _ => None,
            };
            return KernelLog {
                scan: Fact::value(KMSG, scan_kmsg_in(&text, truncated, window, boot)),
                passed_over,
            };
        }
        Err(why) => passed_over.push(format!("{}{}", named(KMSG, &why), restrict_note(fs))),
    }

    if live {
        let journalctl = which::which("journalctl").ok();
        match journalctl {
            Some(program) => match read_journal(&program, deadline, window) {
                Ok(scan) => {
                    return KernelLog {
                        scan: Fact::value("journalctl -k -b 0 -o json", scan),
                        passed_over,
                    }
                }
                Err(why) => passed_over.push(format!("journalctl: {why}")),
            },
            None => passed_over.push("journalctl: not on PATH".into()),
        }
    }

    // The journal's own files: under --root nothing of the host runs on the tree, and on a
    // host without journalctl they are still there.
    match read_journal_files(fs, deadline, window) {
        Ok((source, scan)) => {
            return KernelLog {
                scan: Fact::value(source, scan),
                passed_over,
            }
        }
        Err(why) => passed_over.push(format!("journal files: {why}")),
    }

    for file in TEXT_LOGS {
        match read_tail(fs, Path::new(file), MAX_BYTES) {
            Ok((text, truncated)) => {
                let (source, text, truncated) = with_rotated(fs, file, text, truncated);
                return KernelLog {
                    scan: Fact::value(
                        source,
                        scan_text_log_in(&text, truncated, window, now_epoch()),
                    ),
                    passed_over,
                };
            }
            Err(why) => passed_over.push(named(file, &why)),
        }
    }
    let denied = passed_over.iter().any(|p| p.contains("ermission denied"));
    KernelLog {
        scan: Fact::missing(
            KMSG,
            if denied {
                MissingReason::PermissionDenied
            } else {
                MissingReason::NotFound
            },
            format!("no kernel log could be read ({})", passed_over.join("; ")),
        ),
        passed_over,
    }
}

/// `path: why`, unless the error already starts with the path.
fn named(path: &str, why: &str) -> String {
    if why.starts_with(path) {
        why.to_string()
    } else {
        format!("{path}: {why}")
    }
}

/// Why an unprivileged read of /dev/kmsg is refused, when that is why.
fn restrict_note(fs: &HostFs) -> String {
    match fs.read_text(Path::new(DMESG_RESTRICT)) {
        Ok(t) if t.text.trim() == "1" => {
            format!(" (kernel.dmesg_restrict = 1 in {DMESG_RESTRICT}: root or CAP_SYSLOG only)")
        }
        _ => String::new(),
    }
}

/// Reads every record the ring buffer holds, without waiting: one record per read(2), EAGAIN
/// at the end, EPIPE for records overwritten while reading (skipped, as dmesg does).
fn read_kmsg_device(path: &Path, deadline: Instant) -> Result<(String, bool), String> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let kind = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !kind.file_type().is_char_device() {
        return Err("not a character device".into());
    }
    use rustix::{fs::OFlags, io::Errno};
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY).bits() as i32)
        .open(path)
        .map_err(|e| e.to_string())?;
    // A record is at most 8 KiB with its dictionary; a smaller buffer gets EINVAL.
    let mut buf = vec![0u8; 16 * 1024];
    let mut out = String::new();
    let mut records = 0usize;
    loop {
        if records >= MAX_RECORDS || out.len() as u64 >= MAX_BYTES || Instant::now() >= deadline {
            return Ok((out, true));
        }
        match f.read(&mut buf) {
            Ok(0) => return Ok((out, false)),
            Ok(n) => {
                records += 1;
                out.push_str(&String::from_utf8_lossy(&buf[..n]));
                if !out.ends_with('\n') {
                    out.push('\n');
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok((out, false)),
            Err(e) if Errno::from_io_error(&e) == Some(Errno::PIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if records == 0 => return Err(e.to_string()),
            Err(_) => return Ok((out, true)),
        }
    }
}

/// The journal's kernel messages of this boot, one JSON object a line.
fn read_journal(program: &Path, deadline: Instant, window: &LogWindow) -> Result<LogScan, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err("no time left in the probe's budget".into());
    }
    let out = Runner::new(None)
        .with_output_limit(MAX_BYTES as usize)
        .run(
            program,
            &["-k", "-b", "0", "-o", "json", "--no-pager", "-q"],
            left,
        )
        .map_err(|e| e.to_string())?;
    if out.exit_code != Some(0) {
        let why = out.stderr.lines().next().unwrap_or("").trim().to_string();
        return Err(format!(
            "exit {}{}",
            out.exit_code.map_or("by signal".into(), |c| c.to_string()),
            if why.is_empty() {
                String::new()
            } else {
                format!(": {}", crate::image::excerpt(&why))
            }
        ));
    }
    let mut scan = Scanner::new("since boot (the journal's current boot)", window);
    for line in out.stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let text = match &v["MESSAGE"] {
            serde_json::Value::String(s) => s.clone(),
            // The journal writes a message that is not UTF-8 as an array of bytes.
            serde_json::Value::Array(bytes) => String::from_utf8_lossy(
                &bytes
                    .iter()
                    .filter_map(|b| b.as_u64().map(|b| b as u8))
                    .collect::<Vec<u8>>(),
            )
            .into_owned(),
            _ => continue,
        };
        let at = v["__MONOTONIC_TIMESTAMP"]
            .as_str()
            .and_then(|us| us.parse::<u64>().ok())
            .map(boot_seconds);
        let wall = v["__REALTIME_TIMESTAMP"]
            .as_str()
            .and_then(|us| us.parse::<u64>().ok())
            .map(|us| us as f64 / 1e6);
        scan.record(Record {
            at,
            wall,
            this_boot: Some(true),
            text: &text,
        });
    }
    // A boot always logs kernel messages: none means this user may not read them.
    if scan.records == 0 {
        return Err("no kernel message of this boot is visible to this user (the journal's kernel messages need root or the systemd-journal or adm group)".into());
    }
    Ok(scan.finish(out.truncated))
}

/// Journal files read at most, newest first.
const MAX_JOURNAL_BYTES: u64 = 256 << 20;

/// The kernel's messages in the journal's files (src/probes/journal.rs): the source (the
/// directory and how many files) and the scan. "This boot" is the running one on the live
/// host, else the boot of the newest entry.
fn read_journal_files(
    fs: &HostFs,
    deadline: Instant,
    window: &LogWindow,
) -> Result<(String, LogScan), String> {
    use super::journal;
    let keep = |m: &str| parse_event(m).is_some();
    let j = journal::read(fs, &keep, MAX_JOURNAL_BYTES, deadline)?;
    if j.kernel_records == 0 {
        return Err(format!(
            "no kernel message in {} journal file(s) (journald reads the kernel's messages only with its kmsg source, the default)",
            j.files.len()
        ));
    }
    let current = if fs.root().is_none() {
        fs.read_text(Path::new("/proc/sys/kernel/random/boot_id"))
            .ok()
            .and_then(|t| journal::parse_boot_id(&t.text))
    } else {
        None
    }
    .or(j.newest_boot);
    let span = if j.truncated {
        "the journal's kernel messages, the newest files within the bound".to_string()
    } else {
        "the journal's kernel messages".to_string()
    };
    let mut scan = Scanner::new(&span, window);
    for e in &j.entries {
        scan.record(Record {
            at: Some(boot_seconds(e.monotonic_us)),
            wall: Some(e.realtime_us as f64 / 1e6),
            this_boot: current.map(|c| c == e.boot_id),
            text: &e.message,
        });
    }
    // The other kernel messages were read too, and matched nothing.
    scan.records += j.kernel_records.saturating_sub(j.entries.len() as u64);
    let dir = j
        .files
        .last()
        .and_then(|f| f.parent())
        .map_or_else(|| "the journal".to_string(), |d| d.display().to_string());
    let mut source = format!("{dir} ({} file(s))", j.files.len());
    if j.unread_compressed > 0 {
        source.push_str(&format!(
            ", {} xz/lz4-compressed records not read",
            j.unread_compressed
        ));
    }
    Ok((source, scan.finish(j.truncated)))
}

/// A syslog file read whole, and the file logrotate moved before it (`FILE.1`, the lines
/// before the last rotation, where this boot's start may be) read before it within the same
/// bound of bytes: the source names both when both were read.
fn with_rotated(fs: &HostFs, file: &str, text: String, truncated: bool) -> (String, String, bool) {
    let left = MAX_BYTES.saturating_sub(text.len() as u64);
    if truncated || left == 0 {
        return (file.to_string(), text, truncated);
    }
    let rotated = format!("{file}.1");
    match read_tail(fs, Path::new(&rotated), left) {
        Ok((older, cut)) if !older.is_empty() => {
            let mut both = older;
            if !both.ends_with('\n') {
                both.push('\n');
            }
            both.push_str(&text);
            (format!("{rotated}, {file}"), both, cut)
        }
        _ => (file.to_string(), text, truncated),
    }
}

/// The last `max` bytes of a syslog file (a regular file; devices and FIFOs are refused).
fn read_tail(fs: &HostFs, path: &Path, max: u64) -> Result<(String, bool), String> {
    use std::io::{Seek, SeekFrom};
    let mut f = fs.open_regular(path).map_err(|e| e.to_string())?;
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    let start = len.saturating_sub(max);
    f.seek(SeekFrom::Start(start)).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if start > 0 {
        // The first line is cut: drop it.
        text = text
            .split_once('\n')
            .map_or(String::new(), |(_, r)| r.into());
    }
    Ok((text, start > 0))
}

fn boot_seconds(us: u64) -> String {
    format!("{}.{:06} s after boot", us / 1_000_000, us % 1_000_000)
}

/// `prio,seq,ts_usec,flags[,…];message` records; continuation lines (` KEY=value`) are the
/// record's dictionary.
pub fn scan_kmsg(text: &str, truncated: bool) -> LogScan {
    scan_kmsg_in(text, truncated, &LogWindow::All, None)
}

/// `scan_kmsg` within `window`; `boot` (seconds since the epoch) dates the records.
pub fn scan_kmsg_in(text: &str, truncated: bool, window: &LogWindow, boot: Option<f64>) -> LogScan {
    let mut scan = Scanner::new("since boot", window);
    for line in text.lines() {
        if line.starts_with(' ') {
            continue;
        }
        let Some((head, message)) = line.split_once(';') else {
            continue;
        };
        let us = head.split(',').nth(2).and_then(|us| us.parse::<u64>().ok());
        let message = unescape_kmsg(message);
        scan.record(Record {
            at: us.map(boot_seconds),
            wall: boot.zip(us).map(|(b, us)| b + us as f64 / 1e6),
            this_boot: Some(true),
            text: &message,
        });
    }
    scan.finish(truncated)
}

/// /dev/kmsg writes a message's newlines and other control bytes as `\xNN`.
fn unescape_kmsg(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.contains("\\x") {
        return message.into();
    }
    let mut out = Vec::with_capacity(message.len());
    let b = message.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 2..i + 4)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (
            b[i],
            b.get(i + 1),
            hex.and_then(|h| u8::from_str_radix(h, 16).ok()),
        ) {
            (b'\\', Some(b'x'), Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (c, ..) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned().into()
}

/// A syslog file: `Dec  2 10:11:12 host kernel: [  12.345678] message` or the RFC 3339 form
/// (`2026-12-02T10:11:12.345678+00:00 host kernel: message`). A `Linux version` line starts a
/// boot: what comes before the last one is from an earlier boot.
pub fn scan_text_log(text: &str, truncated: bool) -> LogScan {
    scan_text_log_in(text, truncated, &LogWindow::All, now_epoch())
}

/// `scan_text_log` within `window`; `now` (seconds since the epoch) places a classic stamp,
/// which has no year, in its year.
pub fn scan_text_log_in(text: &str, truncated: bool, window: &LogWindow, now: f64) -> LogScan {
    let kernel: Vec<(Option<String>, &str)> = text
        .lines()
        .filter_map(|line| {
            let (stamp, rest) = line.split_once(" kernel: ")?;
            // The time is what precedes the host name.
            let at = stamp
                .rsplit_once(' ')
                .map(|(t, _host)| t.trim().to_string())
                .filter(|t| !t.is_empty());
            let rest = strip_boot_stamp(rest);
            Some((at, rest))
        })
        .collect();
    let last_boot = kernel
        .iter()
        .rposition(|(_, m)| m.starts_with("Linux version "));
    let span = if truncated {
        format!("the last {} MiB", MAX_BYTES >> 20)
    } else {
        "read whole".to_string()
    };
    let mut scan = Scanner::new(&span, window);
    let dated = matches!(window, LogWindow::Since { .. });
    for (i, (at, message)) in kernel.iter().enumerate() {
        // rsyslog writes a message's newline as #012.
        let message = message.replace("#012", "\n");
        let wall = at
            .as_deref()
            .filter(|_| dated)
            .and_then(|t| rfc3339_epoch(t).or_else(|| syslog_epoch(t, now)));
        scan.record(Record {
            at: at.clone(),
            wall,
            this_boot: last_boot.map(|b| i >= b),
            text: &message,
        });
    }
    scan.finish(truncated)
}

/// `[  123.456789] message` → `message`.
fn strip_boot_stamp(s: &str) -> &str {
    let t = s.trim_start();
    match t.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((inside, rest)) if inside.trim().parse::<f64>().is_ok() => rest.trim_start(),
        _ => t,
    }
}

struct Scanner {
    span: String,
    window: LogWindow,
    /// Records the window left out, and records it could not date (kept).
    before_window: u64,
    undated: u64,
    records: u64,
    groups: BTreeMap<GroupKey, EventGroup>,
    not_grouped: u64,
    lines: std::collections::VecDeque<LoggedLine>,
}

type GroupKey = (
    EventKind,
    Option<u32>,
    Option<String>,
    Option<String>,
    Option<bool>,
);

impl Scanner {
    fn new(span: &str, window: &LogWindow) -> Scanner {
        Scanner {
            span: match window.describe() {
                Some(w) => format!("{span}, {w}"),
                None => span.to_string(),
            },
            window: window.clone(),
            before_window: 0,
            undated: 0,
            records: 0,
            groups: BTreeMap::new(),
            not_grouped: 0,
            lines: Default::default(),
        }
    }

    fn record(&mut self, r: Record<'_>) {
        self.records += 1;
        let outside = match &self.window {
            LogWindow::All => false,
            LogWindow::ThisBoot => r.this_boot == Some(false),
            LogWindow::Since { from, .. } => match r.wall {
                Some(t) => t < *from,
                None => {
                    self.undated += 1;
                    false
                }
            },
        };
        if outside {
            self.before_window += 1;
            return;
        }
        let Some(event) = parse_event(r.text) else {
            return;
        };
        let example = bounded(r.text);
        if self.lines.len() == MAX_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(LoggedLine {
            at: r.at.clone(),
            text: example.clone(),
        });
        let key = (
            event.kind,
            event.code,
            event.device.clone(),
            event.detail.clone(),
            r.this_boot,
        );
        let full = self.groups.len() >= MAX_GROUPS;
        match self.groups.get_mut(&key) {
            Some(g) => {
                g.count += 1;
                g.last = r.at;
                g.last_record = self.records;
                if let Some(p) = event.process {
                    if !g.processes.contains(&p) && g.processes.len() < MAX_PROCESSES {
                        g.processes.push(p);
                    }
                }
            }
            None if full => self.not_grouped += 1,
            None => {
                self.groups.insert(
                    key,
                    EventGroup {
                        kind: event.kind,
                        code: event.code,
                        device: event.device,
                        detail: event.detail,
                        this_boot: r.this_boot,
                        count: 1,
                        last_record: self.records,
                        first: r.at.clone(),
                        last: r.at,
                        processes: event.process.into_iter().collect(),
                        example,
                    },
                );
            }
        }
    }

    fn finish(self, truncated: bool) -> LogScan {
        LogScan {
            span: self.span,
            before_window: self.before_window,
            undated_in_window: self.undated,
            records: self.records,
            truncated,
            groups: self.groups.into_values().collect(),
            events_not_grouped: self.not_grouped,
            lines: self.lines.into_iter().collect(),
        }
    }
}

/// A line as kept: bounded, its embedded newlines as spaces.
fn bounded(text: &str) -> String {
    let text = text.trim_end().replace(['\n', '\r'], " ");
    let text = text.as_str();
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// What one message says, when it is one of the events this probe keeps.
#[derive(Debug, PartialEq)]
pub struct Event {
    pub kind: EventKind,
    pub code: Option<u32>,
    pub device: Option<String>,
    pub detail: Option<String>,
    pub process: Option<String>,
}

pub fn parse_event(message: &str) -> Option<Event> {
    let event = |kind, device: Option<String>| Event {
        kind,
        code: None,
        device,
        detail: None,
        process: None,
    };
    // `NVRM: Xid (PCI:0000:1b:00): 79, pid=…, name=…, text` and
    // `nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, …`.
    for (marker, kind) in [
        ("SXid (PCI:", EventKind::Sxid),
        ("Xid (PCI:", EventKind::Xid),
    ] {
        if let Some(at) = message.find(marker) {
            if kind == EventKind::Xid && message[..at].ends_with('S') {
                continue;
            }
            let rest = &message[at + marker.len()..];
            let (bus, rest) = rest.split_once("): ")?;
            let (code, rest) = rest.split_once(',').unwrap_or((rest, ""));
            let code: u32 = code.trim().parse().ok()?;
            let detail = match kind {
                EventKind::Sxid => rest
                    .split(',')
                    .next()
                    .map(str::trim)
                    .filter(|w| {
                        w.eq_ignore_ascii_case("fatal") || w.eq_ignore_ascii_case("non-fatal")
                    })
                    .map(str::to_string),
                _ if code == crate::compat::xid::RECOVERY_ACTION_XID => {
                    crate::compat::xid::recovery_action(rest).map(bounded)
                }
                _ => None,
            };
            return Some(Event {
                kind,
                code: Some(code),
                device: pci_address(bus),
                detail,
                process: process_name(rest),
            });
        }
    }
    let device = device_prefix(message);
    if message.contains("NVRM:") || message.starts_with("nvidia") {
        let nvrm_device = device.clone().or_else(|| nvrm_gpu(message));
        if message.contains("RmInitAdapter failed") {
            return Some(event(EventKind::InitFailed, nvrm_device));
        }
        if message.contains("GPU has fallen off the bus") {
            return Some(event(EventKind::FallenOffBus, nvrm_device));
        }
        if message.contains("Timeout waiting for RPC from GSP")
            || message.contains("waiting for RPC response from GPU")
        {
            return Some(event(EventKind::GspTimeout, nvrm_device));
        }
        if message.contains("requires use of the NVIDIA open kernel modules") {
            return Some(event(
                EventKind::OpenModulesRequired,
                open_modules_gpu(message),
            ));
        }
    }
    // "PCIe Bus Error" (drivers/pci/pcie/aer.c); kernels that also report CXL print the
    // bus type first.
    if let Some(at) = message.find(" Bus Error: severity=") {
        let rest = &message[at + " Bus Error: severity=".len()..];
        let severity = rest.split(',').next().unwrap_or("").trim();
        // aer_error_severity_string: "Corrected", "Uncorrected (Non-Fatal)", "Uncorrected
        // (Fatal)" until 6.x renamed them "Correctable", "Uncorrectable (…)": one name each.
        let severity = match severity {
            "Correctable" => "Corrected",
            "Uncorrectable (Non-Fatal)" => "Uncorrected (Non-Fatal)",
            "Uncorrectable (Fatal)" => "Uncorrected (Fatal)",
            s => s,
        };
        return Some(Event {
            kind: EventKind::Aer,
            code: None,
            device,
            detail: Some(severity.to_string()),
            process: None,
        });
    }
    None
}

/// `nvidia 0000:0a:00.0: message` → the device, as dev_printk prefixes it.
fn device_prefix(message: &str) -> Option<String> {
    let mut words = message.splitn(3, ' ');
    let _driver = words.next()?;
    let dev = words.next()?.strip_suffix(':')?;
    is_pci_function(dev).then(|| dev.to_ascii_lowercase())
}

/// `NVRM: GPU 0000:3b:00.0: RmInitAdapter failed!` and `NVRM: GPU at PCI:0000:3b:00: …`.
fn nvrm_gpu(message: &str) -> Option<String> {
    let rest = message.split_once("GPU ")?.1;
    let rest = rest.strip_prefix("at PCI:").unwrap_or(rest);
    let word = rest.split([' ', ',']).next()?.trim_end_matches(':');
    pci_address(word)
}

/// `The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85) installed in this system requires …`.
fn open_modules_gpu(message: &str) -> Option<String> {
    let rest = message.split_once("NVIDIA GPU ")?.1;
    pci_address(rest.split(' ').next()?)
}

/// `0000:1b:00` (an Xid's, no function) or `0000:1b:00.0` → `0000:1b:00.0`.
fn pci_address(bus: &str) -> Option<String> {
    let bus = bus.trim().to_ascii_lowercase();
    if is_pci_function(&bus) {
        return Some(bus);
    }
    let with_fn = format!("{bus}.0");
    is_pci_function(&with_fn).then_some(with_fn)
}

fn is_pci_function(s: &str) -> bool {
    let b = s.as_bytes();
    let hex = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_hexdigit);
    b.len() == 12
        && hex(0..4)
        && b[4] == b':'
        && hex(5..7)
        && b[7] == b':'
        && hex(8..10)
        && b[10] == b'.'
        && (b'0'..=b'7').contains(&b[11])
}

/// `pid=2631, name=python3, …` → `python3`; `name=<unknown>` is nothing.
fn process_name(rest: &str) -> Option<String> {
    let name = rest
        .split(", ")
        .find_map(|p| p.trim().strip_prefix("name="))?;
    let name = name.trim_matches('\'');
    (!name.is_empty() && name != "<unknown>").then(|| bounded(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xid_lines_as_the_driver_prints_them() {
        let e = parse_event("NVRM: Xid (PCI:0000:1b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.").unwrap();
        assert_eq!(e.kind, EventKind::Xid);
        assert_eq!(e.code, Some(79));
        assert_eq!(e.device.as_deref(), Some("0000:1b:00.0"));
        assert_eq!(e.process, None);
        let e = parse_event("NVRM: Xid (PCI:0000:07:00): 13, pid=2631, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address").unwrap();
        assert_eq!((e.code, e.process.as_deref()), (Some(13), Some("python3")));
        let e = parse_event("nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 34 egress non-posted PRIV error (First)").unwrap();
        assert_eq!((e.kind, e.code), (EventKind::Sxid, Some(12028)));
        assert_eq!(e.device.as_deref(), Some("0000:05:00.0"));
    }

    #[test]
    fn driver_and_aer_messages() {
        let e = parse_event("NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1470)")
            .unwrap();
        assert_eq!(e.kind, EventKind::InitFailed);
        assert_eq!(e.device.as_deref(), Some("0000:3b:00.0"));
        let e = parse_event("NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85)\ninstalled in this system requires use of the NVIDIA open kernel modules.").unwrap();
        assert_eq!(e.kind, EventKind::OpenModulesRequired);
        for (line, severity) in [
            ("nvidia 0000:0a:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)", "Corrected"),
            ("nvidia 0000:0a:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)", "Corrected"),
            ("pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)", "Uncorrected (Fatal)"),
            ("pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Transaction Layer, (Requester ID)", "Uncorrected (Fatal)"),
            ("nvidia 0000:0a:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)", "Uncorrected (Non-Fatal)"),
            ("nvidia 0000:0a:00.0: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, (Requester ID)", "Uncorrected (Non-Fatal)"),
        ] {
            let e = parse_event(line).unwrap();
            assert_eq!(e.kind, EventKind::Aer);
            assert_eq!(e.detail.as_deref(), Some(severity), "{line}");
        }
        assert_eq!(
            parse_event("nvidia 0000:0a:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)").unwrap().device.as_deref(),
            Some("0000:0a:00.0")
        );
        assert!(parse_event("usb 1-1: new high-speed USB device").is_none());
        assert!(parse_event("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15").is_none());
    }

    #[test]
    fn times_as_the_logs_and_the_option_write_them() {
        assert_eq!(rfc3339_epoch("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(rfc3339_epoch("2026-12-02T10:11:12Z"), Some(1_796_206_272.0));
        assert_eq!(rfc3339_epoch("2026-12-02 10:11:12"), Some(1_796_206_272.0));
        assert_eq!(
            rfc3339_epoch("2026-12-02T11:11:12.5+01:00"),
            Some(1_796_206_272.5)
        );
        assert_eq!(
            rfc3339_epoch("2024-02-29T00:00:00-00:30"),
            Some(1_709_166_600.0)
        );
        for bad in [
            "2026-13-02T10:11:12Z",
            "2026-12-02",
            "Dec  2 10:11:12",
            "2026-12-02T25:00:00Z",
            "",
        ] {
            assert_eq!(rfc3339_epoch(bad), None, "{bad}");
        }
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_796_206_272);
        assert_eq!(
            LogWindow::since("2h", now).unwrap(),
            LogWindow::Since {
                from: 1_796_199_072.0,
                given: "2h".into()
            }
        );
        assert!(LogWindow::since("yesterday-ish", now).is_err());
        // Past the last RFC 3339 second: described at it, not a panic.
        let far = LogWindow::since("9999-12-31T23:59:59-12:00", now).unwrap();
        assert!(far.describe().unwrap().contains("9999-12-31T23:59:59Z"));
    }

    #[test]
    fn a_window_leaves_out_older_records() {
        let log = "2026-12-01T10:00:00Z gpu7 kernel: NVRM: Xid (PCI:0000:1d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n\
                   2026-12-02T08:00:00Z gpu7 kernel: Linux version 6.8.0\n\
                   2026-12-02T09:00:00Z gpu7 kernel: NVRM: Xid (PCI:0000:1d:00): 48, pid='<unknown>', name=<unknown>, DBE\n\
                   gpu7 kernel: NVRM: Xid (PCI:0000:1d:00): 13, pid=1, name=a, x\n";
        let all = scan_text_log_in(log, false, &LogWindow::All, 1.8e9);
        assert_eq!((all.groups.len(), all.before_window), (3, 0));
        let boot = scan_text_log_in(log, false, &LogWindow::ThisBoot, 1.8e9);
        assert_eq!((boot.groups.len(), boot.before_window), (2, 1));
        let since = LogWindow::Since {
            from: 1_796_200_800.0,
            given: "x".into(),
        };
        let s = scan_text_log_in(log, false, &since, 1.8e9);
        // The line without a time cannot be dated: kept, and counted.
        assert_eq!(
            (s.groups.len(), s.before_window, s.undated_in_window),
            (2, 2, 1)
        );
        assert!(
            s.span.ends_with("from 2026-12-02T08:40:00Z on (--since x)"),
            "{}",
            s.span
        );
    }

    #[test]
    fn kmsg_records_are_grouped_with_their_times() {
        let log = "6,1,0,-;Linux version 6.8.0\n4,2,12345678,-;NVRM: Xid (PCI:0000:1b:00): 13, pid=1, name=python3, x\n SUBSYSTEM=pci\n DEVICE=+pci:0000:1b:00.0\n4,3,22345678,-;NVRM: Xid (PCI:0000:1b:00): 13, pid=2, name=train, y\n";
        let s = scan_kmsg(log, false);
        assert_eq!(s.records, 3);
        assert_eq!(s.groups.len(), 1);
        let g = &s.groups[0];
        assert_eq!(g.count, 2);
        assert_eq!(g.processes, ["python3", "train"]);
        assert_eq!(g.first.as_deref(), Some("12.345678 s after boot"));
        assert_eq!(g.last.as_deref(), Some("22.345678 s after boot"));
        assert_eq!(g.this_boot, Some(true));
        assert_eq!(s.lines.len(), 2);
    }

    #[test]
    fn a_syslog_file_tells_earlier_boots_apart() {
        let log = "Dec  1 10:00:00 gpu7 kernel: [   10.000000] NVRM: Xid (PCI:0000:1b:00): 48, pid=1, name=a, DBE\nDec  2 08:00:00 gpu7 kernel: [    0.000000] Linux version 6.8.0-45-generic\nDec  2 09:00:00 gpu7 kernel: [ 3600.000000] NVRM: Xid (PCI:0000:1b:00): 48, pid=1, name=a, DBE\nDec  2 09:00:01 gpu7 systemd[1]: Started x.\n";
        let s = scan_text_log(log, false);
        assert_eq!(s.records, 3, "only the kernel's lines");
        let boots: Vec<(Option<bool>, Option<&str>)> = s
            .groups
            .iter()
            .map(|g| (g.this_boot, g.first.as_deref()))
            .collect();
        assert_eq!(
            boots,
            [
                (Some(false), Some("Dec  1 10:00:00")),
                (Some(true), Some("Dec  2 09:00:00"))
            ]
        );
        // Without a boot line the file does not say.
        let s = scan_text_log("2026-12-02T10:11:12.345678+00:00 gpu7 kernel: NVRM: Xid (PCI:0000:1b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n", false);
        assert_eq!(s.groups[0].this_boot, None);
        assert_eq!(
            s.groups[0].first.as_deref(),
            Some("2026-12-02T10:11:12.345678+00:00")
        );
    }

    #[test]
    fn a_storm_is_bounded() {
        let mut log = String::new();
        for i in 0..5000u32 {
            log.push_str(&format!(
                "4,{i},{i},-;pcieport 0000:{:02x}:{:02x}.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n",
                i % 256,
                i / 256
            ));
        }
        let s = scan_kmsg(&log, false);
        assert_eq!(s.groups.len(), MAX_GROUPS);
        assert_eq!(s.events_not_grouped, 5000 - MAX_GROUPS as u64);
        assert_eq!(s.lines.len(), MAX_LINES);
    }
}
