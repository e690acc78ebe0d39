//! The one place gpudoctor starts other programs: with a deadline, stdin closed,
//! output capped, and never a program that lives under `--root`.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::Signal;
use wait_timeout::ChildExt;

/// How long a killed child may take to die before it is left behind as unkillable.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// Default cap on what one command may print on each stream.
pub const OUTPUT_LIMIT: usize = 256 * 1024;

#[derive(Debug, Clone)]
pub struct CommandOutput {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// A stream went past the cap; the rest was read and dropped.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error(
        "refused to run {command}: it lies under --root {root}, whose programs are never executed"
    )]
    UnderRoot { command: String, root: String },
    #[error("could not start {command}: {message}")]
    Spawn { command: String, message: String },
    #[error("{command} did not finish within {seconds:.1} s and was killed")]
    TimedOut {
        command: String,
        seconds: f64,
        /// What it printed before it was killed (a program that streams its answer loses
        /// only the rest).
        stdout: String,
        /// SIGKILL did not end it within a grace period: it is stuck in the kernel (an
        /// uninterruptible driver call) and was left behind.
        unkillable: bool,
    },
}

/// Called with each complete line of a child's stdout as it arrives.
pub type LineHook = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Clone)]
pub struct Runner {
    root: Option<PathBuf>,
    /// Sees stdout line by line while the child runs (progress display).
    line_hook: Option<LineHook>,
    output_limit: usize,
    /// Variables removed from the child's environment.
    env_remove: Vec<&'static str>,
    /// The child's working directory (None: gpudoctor's).
    dir: Option<PathBuf>,
    /// With a cap, `timeout` is how long the child may go without a stdout line (a worker
    /// streaming its progress), and the cap bounds the whole run.
    progress_cap: Option<Duration>,
}

impl Runner {
    pub fn new(root: Option<PathBuf>) -> Self {
        Runner {
            root,
            line_hook: None,
            output_limit: OUTPUT_LIMIT,
            env_remove: Vec::new(),
            dir: None,
            progress_cap: None,
        }
    }

    /// The deadline follows progress: the child is killed when `timeout` passes without a
    /// line on its stdout, or when the whole run reaches `cap`. A slow child that keeps
    /// reporting is never called hung; a silent one is, after `timeout`.
    pub fn with_progress_deadline(mut self, cap: Duration) -> Self {
        self.progress_cap = Some(cap);
        self
    }

    pub fn with_output_limit(mut self, limit: usize) -> Self {
        self.output_limit = limit;
        self
    }

    /// Shows each line of the child's stdout to `hook` as it arrives.
    pub fn on_stdout_line(mut self, hook: LineHook) -> Self {
        self.line_hook = Some(hook);
        self
    }

    /// Runs children in this working directory.
    pub fn in_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Runs children without these environment variables.
    pub fn without_env(mut self, names: &[&'static str]) -> Self {
        self.env_remove.extend_from_slice(names);
        self
    }

    /// Runs `program args…` and returns its output, or why it has none.
    pub fn run(
        &self,
        program: &Path,
        args: &[&str],
        timeout: Duration,
    ) -> Result<CommandOutput, RunError> {
        self.run_with_env(program, args, timeout, &[])
    }

    /// `run`, with these variables set in the child's environment.
    pub fn run_with_env(
        &self,
        program: &Path,
        args: &[&str],
        timeout: Duration,
        env: &[(&str, &str)],
    ) -> Result<CommandOutput, RunError> {
        let command = display_command(program, args);
        if let Some(root) = &self.root {
            let real = program
                .canonicalize()
                .unwrap_or_else(|_| program.to_path_buf());
            let root_real = root.canonicalize().unwrap_or_else(|_| root.clone());
            if real.starts_with(&root_real) || program.starts_with(root) {
                return Err(RunError::UnderRoot {
                    command,
                    root: root.display().to_string(),
                });
            }
        }
        let start = Instant::now();
        let mut cmd = Command::new(program);
        for name in &self.env_remove {
            cmd.env_remove(name);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(d) = &self.dir {
            cmd.current_dir(d);
        }
        let parent = rustix::process::Pid::from_raw(std::process::id() as i32);
        // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
        // functions (prctl, getppid, _exit).
        unsafe {
            cmd.pre_exec(move || {
                // Die with gpudoctor: a child stuck in a hung driver must not outlive a
                // Ctrl-C, a kill or an abandoned probe. (If gpudoctor died before prctl
                // took effect, the child was already re-parented: leave at once.)
                let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
                if rustix::process::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let mut child = cmd
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so a timeout kills whatever it started too.
            .process_group(0)
            .spawn()
            .map_err(|e| RunError::Spawn {
                command: command.clone(),
                message: e.to_string(),
            })?;

        let (tx, rx) = mpsc::channel();
        // When the child last printed a line (with a progress deadline).
        let last_line = Arc::new(Mutex::new(start));
        // stdout as it arrives, so a child that cannot be reaped (its pipe never reaches
        // EOF) still leaves what it printed.
        let partial = Arc::new(Mutex::new(Vec::new()));
        for (index, stream) in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ]
        .into_iter()
        .enumerate()
        {
            let tx = tx.clone();
            let limit = self.output_limit;
            let (hook, mirror) = if index == 0 {
                let hook = match (self.progress_cap, self.line_hook.clone()) {
                    (None, hook) => hook,
                    (Some(_), user) => {
                        let last = last_line.clone();
                        Some(Arc::new(move |line: &str| {
                            *last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
                            if let Some(user) = &user {
                                user(line);
                            }
                        }) as LineHook)
                    }
                };
                (hook, Some(partial.clone()))
            } else {
                (None, None)
            };
            if let Some(stream) = stream {
                thread::spawn(move || {
                    let _ = tx.send((index, read_capped(stream, limit, hook, mirror)));
                });
            }
        }
        drop(tx);

        let status = match self.wait(&mut child, start, timeout, &last_line) {
            Ok(Ok(status)) => status,
            Ok(Err(deadline)) => {
                kill_group(&child);
                // A process in an uninterruptible driver call survives SIGKILL: never wait
                // for it without bound.
                let reaped = matches!(child.wait_timeout(KILL_GRACE), Ok(Some(_)));
                let mut stdout = None;
                while let Ok((index, (out, _))) = rx.recv_timeout(Duration::from_millis(200)) {
                    if index == 0 {
                        stdout = Some(out);
                    }
                }
                let stdout = stdout
                    .unwrap_or_else(|| partial.lock().unwrap_or_else(|e| e.into_inner()).clone());
                return Err(RunError::TimedOut {
                    command,
                    seconds: deadline.as_secs_f64(),
                    stdout: String::from_utf8_lossy(&stdout).into_owned(),
                    unkillable: !reaped,
                });
            }
            Err(e) => {
                kill_group(&child);
                let _ = child.wait_timeout(KILL_GRACE);
                return Err(RunError::Spawn {
                    command,
                    message: e.to_string(),
                });
            }
        };

        let mut outputs = [(Vec::new(), false), (Vec::new(), false)];
        for _ in 0..2 {
            // A grandchild may still hold the pipe open: wait no longer than the deadline
            // (with a progress deadline, one more silence).
            let left = if self.progress_cap.is_some() {
                timeout
            } else {
                timeout
                    .saturating_sub(start.elapsed())
                    .max(Duration::from_millis(50))
            };
            match rx.recv_timeout(left) {
                Ok((index, out)) => outputs[index] = out,
                Err(_) => {
                    // Killing the group closes the pipe a grandchild held: collect what came.
                    kill_group(&child);
                    while let Ok((index, out)) = rx.recv_timeout(Duration::from_millis(200)) {
                        outputs[index] = out;
                    }
                    break;
                }
            }
        }
        let [(stdout, t1), (stderr, t2)] = outputs;
        Ok(CommandOutput {
            exit_code: status.code(),
            signal: status.signal(),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            truncated: t1 || t2,
        })
    }
}

fn kill_group(child: &std::process::Child) {
    // The group created above, whose id is the child's.
    if let Some(group) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(group, Signal::KILL);
    }
}

impl Runner {
    /// Waits for the child until its deadline (`timeout`, or with a progress deadline
    /// `timeout` after its last line and at most the cap): Err(the deadline that passed).
    fn wait(
        &self,
        child: &mut std::process::Child,
        start: Instant,
        timeout: Duration,
        last_line: &Mutex<Instant>,
    ) -> std::io::Result<Result<std::process::ExitStatus, Duration>> {
        let Some(cap) = self.progress_cap else {
            return Ok(child.wait_timeout(timeout)?.ok_or(timeout));
        };
        loop {
            let last = *last_line.lock().unwrap_or_else(|e| e.into_inner());
            let silence_ends = last + timeout;
            let cap_ends = start + cap;
            let now = Instant::now();
            if now >= cap_ends {
                return Ok(Err(cap));
            }
            if now >= silence_ends {
                return Ok(Err(timeout));
            }
            if let Some(status) = child.wait_timeout(silence_ends.min(cap_ends) - now)? {
                return Ok(Ok(status));
            }
        }
    }
}

/// Keeps the first `limit` bytes and drains the rest, so the child never blocks on a full pipe.
fn read_capped(
    mut stream: impl Read,
    limit: usize,
    hook: Option<LineHook>,
    mirror: Option<Arc<Mutex<Vec<u8>>>>,
) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    let mut truncated = false;
    let mut pending: Vec<u8> = Vec::new();
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Some(hook) = &hook {
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(at) = pending.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = pending.drain(..=at).collect();
                        hook(String::from_utf8_lossy(&line[..at]).as_ref());
                    }
                    // A line longer than the cap is never shown whole.
                    if pending.len() > limit {
                        pending.clear();
                    }
                }
                let room = limit.saturating_sub(kept.len());
                if n > room {
                    truncated = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
                if let Some(m) = &mirror {
                    m.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
    }
    (kept, truncated)
}

pub fn display_command(program: &Path, args: &[&str]) -> String {
    let mut parts: Vec<OsString> = vec![program.as_os_str().to_os_string()];
    parts.extend(args.iter().map(OsString::from));
    parts
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh() -> &'static Path {
        Path::new("/bin/sh")
    }

    #[test]
    fn captures_output_and_exit_code() {
        let out = Runner::new(None)
            .run(
                sh(),
                &["-c", "echo hi; echo err >&2; exit 3"],
                Duration::from_secs(5),
            )
            .unwrap();
        assert_eq!(out.stdout, "hi\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(out.exit_code, Some(3));
    }

    #[test]
    fn hang_becomes_timeout() {
        let start = Instant::now();
        let err = Runner::new(None)
            .run(
                sh(),
                &["-c", "sleep 30 & sleep 30"],
                Duration::from_millis(300),
            )
            .unwrap_err();
        assert!(matches!(err, RunError::TimedOut { .. }), "{err:?}");
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_progress_deadline_follows_the_lines_and_stops_at_its_cap() {
        let runner = Runner::new(None).with_progress_deadline(Duration::from_secs(20));
        // Ten lines 0.2 s apart: 2 s in all, never 1.5 s silent.
        let out = runner
            .run(
                sh(),
                &[
                    "-c",
                    "for i in 1 2 3 4 5 6 7 8 9 10; do echo $i; sleep 0.2; done",
                ],
                Duration::from_millis(1500),
            )
            .unwrap();
        assert_eq!(out.stdout.lines().count(), 10);
        // Silent after one line: killed 0.5 s later, with what it printed.
        let start = Instant::now();
        let err = runner
            .run(
                sh(),
                &["-c", "echo one; sleep 30"],
                Duration::from_millis(500),
            )
            .unwrap_err();
        let RunError::TimedOut {
            seconds, stdout, ..
        } = err
        else {
            panic!("{err:?}")
        };
        assert_eq!((seconds, stdout.as_str()), (0.5, "one\n"));
        assert!(start.elapsed() < Duration::from_secs(5));
        // Talking forever: stopped at the cap.
        let start = Instant::now();
        let err = Runner::new(None)
            .with_progress_deadline(Duration::from_millis(800))
            .run(
                sh(),
                &["-c", "while :; do echo x; sleep 0.05; done"],
                Duration::from_millis(500),
            )
            .unwrap_err();
        assert!(
            matches!(err, RunError::TimedOut { seconds, .. } if seconds == 0.8),
            "{err:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn megabytes_of_output_are_capped() {
        let out = Runner::new(None)
            .with_output_limit(1000)
            .run(
                sh(),
                &["-c", "head -c 5000000 /dev/zero"],
                Duration::from_secs(10),
            )
            .unwrap();
        assert!(out.truncated);
        assert_eq!(out.stdout.len(), 1000);
        assert_eq!(out.exit_code, Some(0));
    }

    #[test]
    fn stdin_is_closed() {
        let out = Runner::new(None)
            .run(sh(), &["-c", "cat; echo done"], Duration::from_secs(5))
            .unwrap();
        assert_eq!(out.stdout, "done\n");
    }

    #[test]
    fn programs_under_root_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let tool = dir.path().join("nvcc");
        std::fs::write(&tool, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = Runner::new(Some(dir.path().to_path_buf()))
            .run(&tool, &["--version"], Duration::from_secs(5))
            .unwrap_err();
        assert!(matches!(err, RunError::UnderRoot { .. }));
        assert!(!marker.exists());
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let err = Runner::new(None)
            .run(Path::new("/nonexistent/nvcc"), &[], Duration::from_secs(1))
            .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/nvcc"));
    }
}
