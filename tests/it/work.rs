//! The work `check` does, counted rather than timed (a count does not flake): the system calls
//! strace(1) sees. Each extra CUDA-using package may cost only a bounded number of opens,
//! reads, link resolutions and directory listings; no probe opens a file twice; and on the
//! real torch venv the totals stay within a committed budget. docs/performance.md has the
//! wall-clock figures (`.ci/bench`); a slower machine does not move these.
//! With GPUDOCTOR_REQUIRE_ALL (or GPUDOCTOR_REQUIRE_STRACE) a missing strace fails.

use std::collections::BTreeMap;
use std::path::Path;

use crate::util::*;

const SITE: &str = "venv/lib/python3.12/site-packages";

fn have_strace() -> bool {
    let found = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var_os("GPUDOCTOR_REQUIRE_STRACE").is_some() {
            panic!("GPUDOCTOR_REQUIRE_STRACE is set and strace is not installed");
        }
        skip(format_args!(
            "strace is not installed (Debian: apt install strace)"
        ));
    }
    found
}

/// What one run asked of the kernel.
#[derive(Debug, Default)]
struct Work {
    /// Calls by name.
    calls: BTreeMap<String, u64>,
    /// Bytes returned by read and pread64.
    bytes_read: u64,
    /// Files opened for reading (O_PATH and directories left out) by thread and path, with
    /// how often: each probe runs on threads of its own.
    opened: BTreeMap<(String, String), u64>,
}

impl Work {
    fn calls(&self, name: &str) -> u64 {
        self.calls.get(name).copied().unwrap_or(0)
    }

    /// Files one thread opened more than once.
    fn opened_twice(&self) -> Vec<(&str, u64)> {
        self.opened
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|((_, path), n)| (path.as_str(), *n))
            .collect()
    }
}

const TRACED: &str =
    "trace=openat,openat2,open,read,pread64,readlink,readlinkat,getdents64,newfstatat,statx,lstat,stat";

/// Runs `args` under `strace -f` and counts the calls on files below `under` (what the
/// host holds besides, its kernel log or its libraries, is not this budget's business).
fn traced(root: Option<&Path>, under: &Path, env: &[(&str, &Path)], args: &[&str]) -> Work {
    let under = under.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("strace.log");
    let mut c = std::process::Command::new("strace");
    c.args(["-f", "-y", "-qq", "-e", TRACED, "-e", "signal=none", "-o"])
        .arg(&log)
        .arg(assert_cmd::cargo::cargo_bin("gpudoctor"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    if let Some(root) = root {
        c.arg("--root").arg(root);
    }
    let out = c.args(args).output().expect("run strace");
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let mut w = Work::default();
    // Per thread, the call it began (whether it was below `under`, and an open's path), for
    // the "<... resumed>" line that has its result.
    let mut pending: BTreeMap<&str, (bool, Option<String>)> = BTreeMap::new();
    for line in text.lines() {
        // "TID name(args) = ret", or an "<unfinished ...>" and "<... name resumed> ... = ret"
        // pair: counted once, at the resumption, which holds the result.
        let (tid, line) = line.split_once(' ').unwrap_or(("", line));
        let line = line.trim_start();
        let resumed = line.starts_with("<... ");
        let (below, began) = if resumed {
            pending.remove(tid).unwrap_or((false, None))
        } else {
            (line.contains(&under), None)
        };
        if !below {
            continue;
        }
        let opening = |l: &str| {
            (l.starts_with("openat(") || l.starts_with("openat2("))
                && !l.contains("O_PATH")
                && !l.contains("O_DIRECTORY")
        };
        if line.ends_with("<unfinished ...>") {
            let path = opening(line).then(|| line.split('"').nth(1).unwrap_or("").to_string());
            pending.insert(tid, (true, path));
            continue;
        }
        let name = match line.strip_prefix("<... ") {
            Some(rest) => rest.split(' ').next().unwrap_or(""),
            None => line.split('(').next().unwrap_or(""),
        };
        if name.is_empty() || name.contains(' ') {
            continue;
        }
        *w.calls.entry(name.to_string()).or_default() += 1;
        let ret = line
            .rsplit_once(" = ")
            .and_then(|(_, r)| r.split(' ').next()?.parse::<i64>().ok());
        if matches!(name, "read" | "pread64") {
            w.bytes_read += ret.unwrap_or(0).max(0) as u64;
        }
        let path = if resumed {
            began
        } else if opening(line) {
            line.split('"').nth(1).map(str::to_string)
        } else {
            None
        };
        if let Some(path) = path.filter(|_| ret.is_some_and(|r| r >= 0)) {
            *w.opened.entry((tid.to_string(), path)).or_default() += 1;
        }
    }
    w
}

/// A torch venv whose libraries need the CUDA 12 runtime the host has, and `n` more
/// CUDA-using packages, each a distribution with a RECORD and one extension module.
fn venv_with_packages(n: usize) -> FakeRoot {
    let r = gpu_host("550.54.15", "NVIDIA A100-SXM4-80GB");
    let dir = "usr/lib/x86_64-linux-gnu";
    r.lib(dir, "libcudart.so.12.4.127", "libcudart.so.12", &[])
        .ld_cache(&[(
            "libcudart.so.12",
            "/usr/lib/x86_64-linux-gnu/libcudart.so.12",
        )]);
    let site = r.torch_venv("2.5.1+cu124", Some("12.4"), &[]);
    r.torch_cuda12_libs(&site);
    for i in 0..n {
        let pkg = format!("ext{i:03}");
        let module = format!("{pkg}/_C.cpython-312-x86_64-linux-gnu.so");
        r.bytes(
            &format!("{site}/{module}"),
            &elf::shared_object_runpath(
                "_C.so",
                &["libc10_cuda.so", "libcudart.so.12"],
                "$ORIGIN/../torch/lib",
            ),
        )
        .file(&format!("{site}/{pkg}/__init__.py"), "")
        .file(
            &format!("{site}/{pkg}-1.0.dist-info/RECORD"),
            &format!("{pkg}/__init__.py,,\n{module},,\n{pkg}-1.0.dist-info/RECORD,,\n"),
        )
        .file(
            &format!("{site}/{pkg}-1.0.dist-info/METADATA"),
            &format!("Metadata-Version: 2.1\nName: {pkg}\nVersion: 1.0\nRequires-Dist: torch\n"),
        );
    }
    assert_eq!(site, SITE);
    r
}

/// The most one more CUDA-using package may add to a `check` (measured between 8 and 40
/// packages: openat2 6, statx 8, read 4, pread64 2, no other; 1,087 bytes read): an open
/// more per module, a listing or a path walk per package fails it.
const PER_PACKAGE: &[(&str, u64)] = &[
    ("openat", 0),
    ("openat2", 6),
    ("read", 5),
    ("pread64", 3),
    ("readlink", 0),
    ("getdents64", 0),
    ("newfstatat", 0),
    ("statx", 9),
];
const PER_PACKAGE_BYTES: u64 = 1_536;

#[test]
fn each_extra_cuda_package_costs_a_bounded_number_of_system_calls() {
    if !cfg!(target_arch = "x86_64") || !have_strace() {
        return;
    }
    let (small, large) = (8usize, 40usize);
    let check = |n| {
        let r = venv_with_packages(n);
        traced(
            Some(r.path()),
            r.path(),
            &[("VIRTUAL_ENV", Path::new("/venv"))],
            &["check", "--no-smoke", "--format", "json"],
        )
    };
    let (a, b) = (check(small), check(large));
    let twice = b.opened_twice();
    assert!(
        twice.is_empty(),
        "opened more than once by one thread: {twice:#?}"
    );
    let extra = (large - small) as u64;
    let mut report = String::new();
    let mut over = Vec::new();
    for (name, limit) in PER_PACKAGE {
        let per = b.calls(name).saturating_sub(a.calls(name)) as f64 / extra as f64;
        report.push_str(&format!(
            "{name}: {} → {} ({per:.1} per package, budget {limit})\n",
            a.calls(name),
            b.calls(name)
        ));
        // A real cost is whole calls per package; fractions are the run's own noise.
        if per.round() as u64 > *limit {
            over.push(*name);
        }
    }
    let bytes = b.bytes_read.saturating_sub(a.bytes_read) / extra;
    report.push_str(&format!(
        "bytes read: {} → {} ({bytes} per package, budget {PER_PACKAGE_BYTES})\n",
        a.bytes_read, b.bytes_read
    ));
    if bytes > PER_PACKAGE_BYTES {
        over.push("bytes read");
    }
    assert!(over.is_empty(), "over budget: {over:?}\n{report}");
    eprintln!("{report}");
}

/// The most a `check --python VENV/bin/python` of the real torch 2.15.0 venv of
/// `.ci/fetch-torch-venv` may ask of the files below the venv. Measured: openat 238, read
/// 485, pread64 4571 (3016 of them the PyTorch probe walking libtorch_cuda.so's fatbin
/// entries), readlink 7, getdents64 35, statx 874, 19.7 MB read.
const REAL_VENV: &[(&str, u64)] = &[
    ("openat", 250),
    ("read", 510),
    ("pread64", 4_700),
    ("readlink", 8),
    ("getdents64", 36),
    ("statx", 900),
];
const REAL_VENV_BYTES: u64 = 20_200_000;

#[test]
fn on_the_real_torch_venv_no_probe_opens_a_file_twice_and_the_work_stays_in_budget() {
    let Some(venv) = std::env::var_os("GPUDOCTOR_TORCH_VENV").filter(|v| !v.is_empty()) else {
        skip(format_args!(
            "work: GPUDOCTOR_TORCH_VENV is not set (.ci/fetch-torch-venv DIR)"
        ));
        return;
    };
    if !have_strace() {
        return;
    }
    let python = Path::new(&venv).join("bin/python");
    // strace names files by their real paths.
    let real = std::fs::canonicalize(&venv).unwrap();
    let w = traced(
        None,
        &real,
        &[],
        &[
            "check",
            "--python",
            python.to_str().unwrap(),
            "--no-smoke",
            "--format",
            "json",
        ],
    );
    let mut report = String::new();
    let mut over = Vec::new();
    for (name, limit) in REAL_VENV {
        report.push_str(&format!("{name}: {} (budget {limit})\n", w.calls(name)));
        if w.calls(name) > *limit {
            over.push(*name);
        }
    }
    report.push_str(&format!(
        "bytes read: {} (budget {REAL_VENV_BYTES})\n",
        w.bytes_read
    ));
    if w.bytes_read > REAL_VENV_BYTES {
        over.push("bytes read");
    }
    // Probes may read one file for different parts (the loader its dynamic section, the
    // PyTorch probe its fatbin); one probe reads each file once.
    let twice = w.opened_twice();
    assert!(
        twice.is_empty(),
        "opened more than once by one thread: {twice:#?}\n{report}"
    );
    assert!(over.is_empty(), "over budget: {over:?}\n{report}");
    eprintln!("{report}");
}
