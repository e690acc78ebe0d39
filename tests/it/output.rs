//! `check --output`: where the report may go and where it may not, each test a defect an
//! adversarial run found (a FIFO nothing reads, another user's link, a long host name).

use std::fs;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::*;

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
    let set = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFL, 0) };
    assert_eq!(set, 0);
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

/// Whether this runs as root (lchown to another uid needs it).
fn is_root() -> bool {
    // SAFETY: geteuid only reads credentials.
    unsafe { libc::geteuid() == 0 }
}

/// A sticky world-writable directory (a private /tmp) inside `dir`.
fn sticky_dir(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let shared = dir.join("tmp");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    shared
}

/// The permission bits of `path`.
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// In /tmp, another user's `report.json -> ~/.ssh/config` (mode 0600) had the report
/// replace that file with a new 0644 one: the writer follows links itself, so the kernel's
/// protected_symlinks never saw it.
#[test]
fn output_refuses_another_users_link_in_a_sticky_directory() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !is_root() {
        crate::util::skip(format_args!("needs root to give a link to another user"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shared = sticky_dir(dir.path());
    let private = dir.path().join("private.conf");
    fs::write(&private, "mine").unwrap();
    fs::set_permissions(&private, fs::Permissions::from_mode(0o600)).unwrap();
    let inode = fs::metadata(&private).unwrap().ino();
    let link = shared.join("report.json");
    std::os::unix::fs::symlink(&private, &link).unwrap();
    let c = std::ffi::CString::new(link.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; uid and gid 12345 need not exist.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 12345, 12345) }, 0);

    let (r, _) = check_to(&FakeRoot::healthy(1), &link);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "report.json: a link owned by another user (uid 12345) in a sticky world-writable \
             directory; not followed"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read_to_string(&private).unwrap(), "mine");
    assert_eq!(fs::metadata(&private).unwrap().ino(), inode);
    assert_eq!(mode(&private), 0o600);
    // Nothing left in the shared directory but the link.
    assert_eq!(fs::read_dir(&shared).unwrap().count(), 1);
}

/// The caller's own link there is followed, and the file it names keeps its mode: a
/// report replacing a 0640 file came out 0644, readable by everyone.
#[test]
fn output_through_the_callers_own_link_keeps_the_targets_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let shared = sticky_dir(dir.path());
    let target = dir.path().join("report.json");
    fs::write(&target, "old").unwrap();
    // 0640: no umask turns the default 0666 into it, so only a kept mode matches.
    fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
    let link = shared.join("latest.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();

    let (r, _) = check_to(&FakeRoot::healthy(1), &link);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&target).unwrap()).unwrap();
    assert!(v["schema_version"].is_number());
    assert_eq!(mode(&target), 0o640);
}

/// `--output /dev/stdout` with stdout on a pipe (a CI log, `| tee`) failed: the link
/// chain ends in "pipe:[…]", a name that exists nowhere.
#[test]
fn output_to_dev_stdout_on_a_pipe_writes_the_report() {
    let (r, _) = check_to(&FakeRoot::healthy(1), Path::new("/dev/stdout"));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    assert!(r.stdout.contains("\"schema_version\""), "{}", r.stdout);
}

/// A 300-character /etc/hostname made `--output DIR/{host}.json` fail with "File name too
/// long" (exit 2, no report). The name is cut, and two such names still get two files.
#[test]
fn a_long_host_name_gives_a_short_distinct_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reports");
    let long = "gpu-".repeat(75);
    for tail in ["a", "b"] {
        let root = FakeRoot::healthy(1);
        root.file("etc/hostname", &format!("{long}{tail}\n"));
        let (r, _) = check_to(&root, &out.join("{host}.json"));
        assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    }
    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    for name in &names {
        assert!(
            name.starts_with("gpu-gpu-") && name.ends_with(".json"),
            "{name}"
        );
        assert!(name.len() <= 64 + ".json".len(), "{name}");
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out.join(name)).unwrap()).unwrap();
        // The report keeps the whole name.
        let node = v["snapshot"]["node"]["name"].as_str().unwrap();
        assert!(node.len() == 301 && node.starts_with(&long), "{node}");
    }
}
