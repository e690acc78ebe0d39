//! The harness of the fake libraries' self-tests. A fake keeps process-wide state and reads
//! its config from an environment variable, so every scenario runs in a child: the test
//! binary re-run on one test, with `SELFTEST_CHILD` naming it. The parent bounds the child
//! with a timeout, so hang and crash faults cannot stall the run.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use wait_timeout::ChildExt;

use super::fake_cuda::{FakeCuda, FAKE_CUDA_ENV};
use super::fake_nvml::{FakeNvml, FAKE_NVML_ENV};

const CHILD: &str = "SELFTEST_CHILD";

/// A fake's config: the variable it is read from and how it is written.
pub trait FakeConfig: DeserializeOwned {
    const ENV: &'static str;
    fn write(&self, dir: &Path) -> PathBuf;
}

impl FakeConfig for FakeCuda {
    const ENV: &'static str = FAKE_CUDA_ENV;
    fn write(&self, dir: &Path) -> PathBuf {
        FakeCuda::write(self, dir)
    }
}

impl FakeConfig for FakeNvml {
    const ENV: &'static str = FAKE_NVML_ENV;
    fn write(&self, dir: &Path) -> PathBuf {
        FakeNvml::write(self, dir)
    }
}

/// What the child's fake is configured with.
pub enum Cfg<'a, T> {
    Json(&'a T),
    Path(&'a Path),
    Unset,
}

/// True inside the child run for test `name`.
pub fn is_child(name: &str) -> bool {
    if std::env::var(CHILD).as_deref() != Ok(name) {
        return false;
    }
    // A crash scenario must not leave core files behind.
    let zero = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setrlimit only reads the struct.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &zero) };
    true
}

/// The config the child was started with.
pub fn child_config<T: FakeConfig>() -> T {
    let p = std::env::var(T::ENV).expect("config env");
    serde_json::from_str(&std::fs::read_to_string(p).expect("read config")).expect("parse")
}

pub struct Run {
    child: Child,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Run {
    /// The child's stdout and stderr so far.
    pub fn output(&self) -> String {
        let mut s = String::new();
        let _ = File::open(&self.out).and_then(|mut f| f.read_to_string(&mut s));
        s
    }

    /// True while the child has not exited.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// The exit status, or None after killing a child that outlived `limit`.
    pub fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        match self.child.wait_timeout(limit).expect("wait") {
            Some(s) => Some(s),
            None => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                None
            }
        }
    }
}

/// Starts the child for test `name` of the calling file's module. CUDA_VISIBLE_DEVICES and
/// the fakes' config variables are unset unless `cfg` or `env` sets them.
#[track_caller]
pub fn spawn<T: FakeConfig>(name: &str, cfg: Cfg<T>, env: &[(&str, &str)]) -> Run {
    // The test's path in the one test binary: its file is its module (tests/it/main.rs).
    let file = Path::new(std::panic::Location::caller().file());
    let module = file
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("caller file");
    let filter = format!("{module}::{name}");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out.txt");
    let file = File::create(&out).expect("out file");
    let mut cmd = Command::new(std::env::current_exe().expect("exe"));
    cmd.args([
        filter.as_str(),
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, name)
    .env_remove(FAKE_CUDA_ENV)
    .env_remove(FAKE_NVML_ENV)
    .env_remove("CUDA_VISIBLE_DEVICES")
    .envs(env.iter().copied())
    .stdin(Stdio::null())
    .stdout(file.try_clone().expect("dup"))
    .stderr(file);
    match cfg {
        Cfg::Json(c) => {
            cmd.env(T::ENV, c.write(dir.path()));
        }
        Cfg::Path(p) => {
            cmd.env(T::ENV, p);
        }
        Cfg::Unset => {}
    }
    Run {
        child: cmd.spawn().expect("spawn child"),
        out,
        _dir: dir,
    }
}

/// Runs the child for `name` and requires that its one test passed; returns its output.
#[track_caller]
pub fn run_ok<T: FakeConfig>(name: &str, cfg: Cfg<T>, env: &[(&str, &str)]) -> String {
    let mut r = spawn(name, cfg, env);
    let status = r.wait(Duration::from_secs(120));
    let out = r.output();
    assert!(
        status.is_some_and(|s| s.success()) && out.contains("1 passed"),
        "child {name} failed ({status:?}):\n{out}"
    );
    out
}

pub const MARK: &str = "ABOUT-TO-CALL";

/// Waits until the child printed MARK (just before the call that should hang), then requires that it is still running later.
pub fn assert_hangs(mut r: Run, what: &str) {
    let start = Instant::now();
    while !r.output().contains(MARK) {
        assert!(r.running(), "{what}: child ended early:\n{}", r.output());
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: child never got there"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = r.wait(Duration::from_millis(1500));
    assert!(
        status.is_none(),
        "{what}: child ended ({status:?}):\n{}",
        r.output()
    );
}
