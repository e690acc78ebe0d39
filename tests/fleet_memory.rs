//! `gpudoctor fleet -` holds what it needs per usable report, not the input: a million junk
//! documents on stdin peaked at 1.35 GB of RSS and printed 116 MB listing each one.
//! Alone in its test binary, so the peak RSS of waited-for children is this test's child.

use std::io::Write;
use std::process::{Command, Stdio};

const JUNK_DOCS: usize = 1_000_000;
const RSS_LIMIT_KB: i64 = 200 * 1024;

#[test]
fn a_million_junk_documents_on_stdin_stay_under_200_mb() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpudoctor"))
        .args(["fleet", "-", "--format", "json"])
        .env_clear()
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gpudoctor");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let input = "{}\n".repeat(JUNK_DOCS);
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("run gpudoctor");
    writer.join().unwrap();
    // SAFETY: rusage is plain C data; all zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes only the struct it is given.
    let got = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(got, 0);
    let peak_kb = usage.ru_maxrss;

    // No usable report among them: a usage error listing the first 100 and counting the rest.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.matches(": not a report: ").count(), 100, "{stderr}");
    assert!(
        stderr.contains(&format!("… and {} more", JUNK_DOCS - 100)),
        "{stderr}"
    );
    assert!(
        out.stderr.len() < 100_000,
        "{} bytes of output",
        out.stderr.len()
    );
    assert!(
        peak_kb < RSS_LIMIT_KB,
        "peak RSS {peak_kb} KB for {JUNK_DOCS} junk documents"
    );
    eprintln!("peak RSS {peak_kb} KB");
}
