//! `check --output`: where the report may go and where it may not, each test a defect an
//! adversarial run found (a FIFO nothing reads, another user's link, a long host name).

mod util;

use std::fs;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use util::*;

/// A FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// `check --format json --timeout 1 --output PATH` on a healthy fake node, killed (and so
/// failed) if it is still running after 30 s.
fn check_to(root: &FakeRoot, path: &Path) -> (Run, Duration) {
    let start = Instant::now();
    let r = run(root
        .cmd()
        .args(["check", "--format", "json", "--timeout", "1", "--output"])
        .arg(path)
        .timeout(Duration::from_secs(30)));
    (r, start.elapsed())
}

/// `mkfifo f; gpudoctor check --output f` waited for a reader forever, --timeout or not.
/// Once a reader is there, it gets the whole report.
#[test]
fn output_to_a_fifo_nothing_reads_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("report.fifo");
    mkfifo(&fifo);
    let root = FakeRoot::healthy(1);
    let (r, took) = check_to(&root, &fifo);
    assert_eq!(r.code, 2, "after {took:?}: {}", r.stderr);
    assert!(
        r.stderr
            .contains("report.fifo: a FIFO that nothing reads; start the reader first"),
        "{}",
        r.stderr
    );

    let mut reader = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    // Blocking from here on: the reader reads until the writer closes.
    // SAFETY: a descriptor we own.
    assert_eq!(
        unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFL, 0) },
        0
    );
    let got = std::thread::spawn(move || {
        let mut text = String::new();
        let start = Instant::now();
        // Before the writer opens, a read finds no writer and returns nothing at once.
        while text.is_empty() && start.elapsed() < Duration::from_secs(30) {
            if reader.read_to_string(&mut text).unwrap() == 0 {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        text
    });
    let (r, _) = check_to(&root, &fifo);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let text = got.join().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).expect(&text);
    assert!(v["schema_version"].is_number(), "{v}");
}

/// A reader that opens the FIFO and never reads: the write ends at --timeout.
#[test]
fn output_to_a_fifo_whose_reader_stalls_ends_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("report.fifo");
    mkfifo(&fifo);
    let reader = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    // The smallest pipe (a page), so the report cannot fit and the write must wait.
    // SAFETY: a descriptor we own.
    let size = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    assert!(size > 0, "{}", std::io::Error::last_os_error());
    let (r, took) = check_to(&FakeRoot::healthy(1), &fifo);
    assert_eq!(r.code, 2, "after {took:?}: {}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("report.fifo: the reader took {size} of "))
            && r.stderr.contains("bytes within the 1 s timeout"),
        "{}",
        r.stderr
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
}
