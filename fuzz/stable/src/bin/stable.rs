//! The fuzz targets without libFuzzer, for a stable toolchain: each target gets its seed
//! corpus, then a fixed number of deterministic mutations of it (no coverage feedback),
//! every input on a thread with the probes' stack. A panic, a hang past the timeout or an
//! abort (stack overflow) saves the input under the artifacts directory and fails the run.
//!
//! stable [--execs N] [--max-seconds S] [--timeout SECS] [--rng SEED] [--seeds DIR]
//!        [--artifacts DIR] [TARGET...]
//!
//! The mutations are the same on every run; --max-seconds only stops a target early
//! (CI's time budget), and the summary says when it did.
//! stable --reproduce TARGET FILE...

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gpudoctor_fuzz::{mutate, Outcome, ProbeThread, Rng, Target, PROBE_STACK, TARGETS};

struct Args {
    execs: u64,
    max_seconds: Option<f64>,
    timeout: Duration,
    rng: u64,
    seeds: PathBuf,
    artifacts: PathBuf,
    targets: Vec<&'static Target>,
    reproduce: Vec<PathBuf>,
}

fn usage(msg: &str) -> ! {
    let names: Vec<_> = TARGETS.iter().map(|t| t.name).collect();
    eprintln!("stable: {msg}");
    eprintln!(
        "usage: stable [--execs N] [--max-seconds S] [--timeout SECS] [--rng SEED] [--seeds DIR] [--artifacts DIR] [TARGET...]\n       stable --reproduce TARGET FILE...\ntargets: {}",
        names.join(" ")
    );
    std::process::exit(2);
}

fn target(name: &str) -> &'static Target {
    TARGETS
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| usage(&format!("no target {name:?}")))
}

fn parse_args() -> Args {
    // Next to this package: fuzz/seeds, fuzz/artifacts.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("fuzz/");
    let mut a = Args {
        execs: 20_000,
        max_seconds: None,
        timeout: Duration::from_secs(10),
        rng: 0x9e37_79b9_7f4a_7c15,
        seeds: here.join("seeds"),
        artifacts: here.join("artifacts"),
        targets: Vec::new(),
        reproduce: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    let mut reproduce = false;
    while let Some(arg) = it.next() {
        let mut value = |what: &str| {
            it.next()
                .unwrap_or_else(|| usage(&format!("{what} needs a value")))
        };
        match arg.as_str() {
            "--execs" => {
                a.execs = value("--execs")
                    .parse()
                    .unwrap_or_else(|_| usage("--execs N"))
            }
            "--max-seconds" => {
                a.max_seconds = Some(
                    value("--max-seconds")
                        .parse()
                        .unwrap_or_else(|_| usage("--max-seconds S")),
                )
            }
            "--timeout" => {
                a.timeout = Duration::from_secs_f64(
                    value("--timeout")
                        .parse()
                        .unwrap_or_else(|_| usage("--timeout SECS")),
                )
            }
            "--rng" => {
                a.rng = value("--rng")
                    .parse()
                    .unwrap_or_else(|_| usage("--rng SEED"))
            }
            "--seeds" => a.seeds = value("--seeds").into(),
            "--artifacts" => a.artifacts = value("--artifacts").into(),
            "--reproduce" => reproduce = true,
            "-h" | "--help" => usage("help"),
            s if s.starts_with('-') => usage(&format!("unknown option {s}")),
            s if reproduce && a.targets.len() == 1 => a.reproduce.push(s.into()),
            s => a.targets.push(target(s)),
        }
    }
    if reproduce && (a.targets.len() != 1 || a.reproduce.is_empty()) {
        usage("--reproduce TARGET FILE...");
    }
    if a.targets.is_empty() {
        a.targets = TARGETS.iter().collect();
    }
    a
}

// What the SIGABRT handler writes out: the input running now, and where to.
static CURRENT: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static CURRENT_LEN: AtomicUsize = AtomicUsize::new(0);
static ABORT_PATH: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// A stack overflow (or any abort) ends the process: save the input on the way out, with
/// only async-signal-safe calls.
extern "C" fn on_abort(_: libc::c_int) {
    let path = ABORT_PATH.load(Ordering::SeqCst);
    let data = CURRENT.load(Ordering::SeqCst);
    if path.is_null() || data.is_null() {
        return;
    }
    let len = CURRENT_LEN.load(Ordering::SeqCst);
    unsafe {
        let fd = libc::open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o644);
        if fd >= 0 {
            libc::write(fd, data.cast(), len);
            libc::close(fd);
        }
        let msg = b"stable: the process aborted (a stack overflow?); the input is saved as ";
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::write(2, path.cast(), libc::strlen(path));
        libc::write(2, b"\n".as_ptr().cast(), 1);
    }
}

fn install_abort_handler() {
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_abort as extern "C" fn(libc::c_int) as usize;
        // The overflow handler calls abort() on the thread's small signal stack.
        sa.sa_flags = libc::SA_ONSTACK | libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGABRT, &sa, std::ptr::null_mut());
    }
}

/// Runs one input on the probe-stack thread, bounded by `timeout`.
fn exec(worker: &mut ProbeThread, t: &Target, data: &[u8], timeout: Duration) -> Outcome {
    CURRENT_LEN.store(data.len(), Ordering::SeqCst);
    CURRENT.store(data.as_ptr().cast_mut(), Ordering::SeqCst);
    let outcome = worker.run(data, t.run, Some(timeout));
    if !matches!(outcome, Outcome::Hang) {
        CURRENT.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
    outcome
}

fn seeds(dir: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out: Vec<Vec<u8>> = files.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    if out.is_empty() {
        out.push(Vec::new());
    }
    out
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// What a clean run of one target did.
struct Ran {
    execs: u64,
    /// Stopped by --max-seconds before all the executions.
    cut_short: bool,
    /// The slowest input: seconds and length.
    slowest: (f64, usize),
}

/// Fuzzes one target; what it ran, or the saved input of a failure.
fn fuzz(t: &'static Target, a: &Args) -> Result<Ran, PathBuf> {
    let dir = a.artifacts.join(t.name);
    std::fs::create_dir_all(&dir).expect("create the artifacts directory");
    let abort_path = CString::new(
        dir.join("crash-abort")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .expect("artifacts path without NUL");
    ABORT_PATH.store(abort_path.into_raw(), Ordering::SeqCst);
    let corpus = seeds(&a.seeds.join(t.name));
    let mut rng = Rng(a.rng ^ fnv(t.name.as_bytes()) | 1);
    let mut worker = ProbeThread::new();
    let mut execs = 0;
    let mut slowest = (0.0, 0);
    let total = corpus.len() as u64 + a.execs;
    let began = Instant::now();
    let mut cut_short = false;
    while execs < total {
        if a.max_seconds
            .is_some_and(|m| began.elapsed().as_secs_f64() >= m)
        {
            cut_short = true;
            break;
        }
        let input = match usize::try_from(execs).ok().and_then(|i| corpus.get(i)) {
            Some(seed) => seed.clone(),
            None => {
                let base = &corpus[rng.below(corpus.len())];
                let other = &corpus[rng.below(corpus.len())];
                mutate(&mut rng, base, other, t.dict)
            }
        };
        execs += 1;
        let start = Instant::now();
        let failed = match exec(&mut worker, t, &input, a.timeout) {
            Outcome::Ok => {
                let secs = start.elapsed().as_secs_f64();
                if secs > slowest.0 {
                    slowest = (secs, input.len());
                }
                continue;
            }
            Outcome::Panic(_) => "crash",
            Outcome::Hang => "timeout",
        };
        let path = dir.join(format!("{failed}-{:016x}", fnv(&input)));
        std::fs::write(&path, &input).expect("save the failing input");
        eprintln!(
            "stable: {}: {failed} on execution {execs} ({} bytes); input saved as {}",
            t.name,
            input.len(),
            path.display()
        );
        if matches!(failed, "timeout") {
            // The stuck thread cannot be stopped: end here.
            std::process::exit(1);
        }
        return Err(path);
    }
    Ok(Ran {
        execs,
        cut_short,
        slowest,
    })
}

fn main() {
    let a = parse_args();
    install_abort_handler();
    if !a.reproduce.is_empty() {
        let t = a.targets[0];
        let mut worker = ProbeThread::new();
        for file in &a.reproduce {
            let data =
                std::fs::read(file).unwrap_or_else(|e| usage(&format!("{}: {e}", file.display())));
            let outcome = match exec(&mut worker, t, &data, a.timeout) {
                Outcome::Ok => "ok",
                Outcome::Panic(_) => "crash (panic)",
                Outcome::Hang => "timeout",
            };
            println!(
                "{}: {} ({} bytes): {outcome}",
                t.name,
                file.display(),
                data.len()
            );
        }
        return;
    }
    println!(
        "stable runner (no libFuzzer): seeds + {} deterministic mutations per target, {} KiB stack per input",
        a.execs,
        PROBE_STACK >> 10
    );
    let mut failed = Vec::new();
    for &t in &a.targets {
        let start = Instant::now();
        let result = fuzz(t, &a);
        let secs = start.elapsed().as_secs_f64();
        match result {
            Ok(Ran {
                execs,
                cut_short,
                slowest,
            }) => println!(
                "{:<14} {execs:>9} execs in {secs:>6.1} s ({:>7.0}/s); slowest input {:.3} s ({} bytes){}",
                t.name,
                execs as f64 / secs.max(1e-9),
                slowest.0,
                slowest.1,
                if cut_short { "; stopped at --max-seconds" } else { "" }
            ),
            Err(path) => {
                println!("{:<14} FAILED: input saved as {}", t.name, path.display());
                failed.push(t.name);
            }
        }
    }
    if !failed.is_empty() {
        eprintln!("stable: failures in {}", failed.join(", "));
        std::process::exit(1);
    }
}
