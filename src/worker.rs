//! gpudoctor's self-exec workers (`__nvml-worker`, `__smoke-worker`): both ends of their
//! protocol. The parent re-executes its own binary under a deadline and reads the child's
//! answer as JSON lines, each flushed as it happens, so a hang or a crash inside a vendor
//! library loses only what came after the last line. Probes say what the lines mean
//! ([`Protocol`]); this module spawns, bounds, kills and parses.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::runner::{RunError, Runner};

/// What one worker's lines mean.
pub trait Protocol {
    /// How messages name the child ("NVML worker").
    const NAME: &'static str;
    /// One line of the answer.
    type Line: DeserializeOwned + 'static;
    /// What the lines add up to, complete or not.
    type Answer;

    /// Folds the lines the child printed (it may have stopped anywhere).
    fn assemble(&self, lines: Vec<Self::Line>) -> Self::Answer;
    /// Where an unfinished answer stopped ("GPU 3", "CUDA device 1: context").
    fn stuck_at(&self, answer: &Self::Answer) -> Vec<String>;
}

/// Called with each parsed line as the child prints it (progress display).
pub type LineHook<L> = Arc<dyn Fn(&L) + Send + Sync>;

/// One run of a worker.
pub struct Request<'a, L> {
    /// The subcommand and its arguments.
    pub args: &'a [String],
    pub timeout: Duration,
    /// Cap on the answer's size.
    pub output_limit: usize,
    /// Inspecting `--root`: the library's own dependencies must not be found inside the
    /// tree either, so the loader variables are dropped.
    pub clean_loader_env: bool,
    pub on_line: Option<LineHook<L>>,
    /// With a cap, `timeout` is the longest silence between two lines of the worker, and
    /// the cap bounds the whole run (`Runner::with_progress_deadline`).
    pub progress_cap: Option<Duration>,
}

/// How a worker run ended.
#[derive(Debug)]
pub enum Outcome<A> {
    /// The child exited by itself; the answer may still be incomplete.
    Exited { answer: A, exit: Exit },
    /// Killed at the deadline.
    TimedOut {
        answer: A,
        stuck_at: Vec<String>,
        seconds: f64,
        /// SIGKILL did not end it: it is stuck inside the kernel driver and was left behind.
        unkillable: bool,
    },
    /// Died of a signal (a segfault or abort in the vendor library).
    Crashed {
        answer: A,
        stuck_at: Vec<String>,
        signal: i32,
        /// The end of its stderr.
        stderr: String,
    },
    /// It could not be started (or waited for).
    FailedToStart { detail: String },
}

/// How a child that exited by itself ended.
#[derive(Debug, Clone)]
pub struct Exit {
    name: &'static str,
    pub code: Option<i32>,
    pub stderr: String,
}

impl Exit {
    /// Why an exited child's answer is not usable.
    pub fn without_answer(&self) -> String {
        format!(
            "the {} exited {} without a complete answer{}",
            self.name,
            self.code
                .map_or("abnormally".into(), |c| format!("with {c}")),
            if self.stderr.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", last_lines(&self.stderr))
            }
        )
    }
}

/// Runs `gpudoctor ARGS…` as a worker speaking `protocol`.
pub fn run<P: Protocol>(protocol: &P, req: Request<P::Line>) -> Outcome<P::Answer> {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return Outcome::FailedToStart {
                detail: format!(
                    "cannot find gpudoctor's own executable to run the {}: {e}",
                    P::NAME
                ),
            }
        }
    };
    let mut runner = Runner::new(None).with_output_limit(req.output_limit);
    if req.clean_loader_env {
        runner = runner.without_env(&["LD_LIBRARY_PATH", "LD_PRELOAD"]);
    }
    if let Some(cap) = req.progress_cap {
        runner = runner.with_progress_deadline(cap);
    }
    if let Some(hook) = req.on_line {
        runner = runner.on_stdout_line(Arc::new(move |line: &str| {
            if let Ok(parsed) = serde_json::from_str::<P::Line>(line) {
                hook(&parsed);
            }
        }));
    }
    let args: Vec<&str> = req.args.iter().map(String::as_str).collect();
    match runner.run(&exe, &args, req.timeout) {
        Err(RunError::TimedOut {
            seconds,
            stdout,
            unkillable,
            ..
        }) => {
            let answer = protocol.assemble(parse_lines(&stdout));
            Outcome::TimedOut {
                stuck_at: protocol.stuck_at(&answer),
                answer,
                seconds,
                unkillable,
            }
        }
        Err(e) => Outcome::FailedToStart {
            detail: e.to_string(),
        },
        Ok(out) => {
            let answer = protocol.assemble(parse_lines(&out.stdout));
            match out.signal {
                Some(signal) => Outcome::Crashed {
                    stuck_at: protocol.stuck_at(&answer),
                    answer,
                    signal,
                    stderr: last_lines(&out.stderr),
                },
                None => Outcome::Exited {
                    answer,
                    exit: Exit {
                        name: P::NAME,
                        code: out.exit_code,
                        stderr: out.stderr,
                    },
                },
            }
        }
    }
}

/// The answer's lines that parse; blank lines and anything else (a line cut by the kill)
/// are skipped.
pub fn parse_lines<L: DeserializeOwned>(stdout: &str) -> Vec<L> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The last five non-blank lines of a child's output: enough of a worker's stderr to say
/// why it died, short enough for a finding.
pub fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

/// The library a worker is told to load, and how the report names it: a file named
/// relative to the working directory is that file (made absolute); a bare name that is no
/// file here is a soname for the loader to search, as dlopen would; None is `default`.
pub fn library_to_load(lib: Option<&Path>, default: &str) -> (Option<PathBuf>, String) {
    let lib: Option<PathBuf> = lib.map(|p| {
        if p.is_relative() && p.exists() {
            std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
        } else {
            p.to_path_buf()
        }
    });
    let library = lib
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| default.to_string());
    (lib, library)
}

/// Why a driver library may not be loaded when inspecting `--root`: nothing is loaded
/// from the tree, and only an absolute path outside it (named by `flag`) may be.
pub fn refuse_under_root(root: Option<&Path>, lib: Option<&Path>, flag: &str) -> Option<String> {
    let root = root?;
    match lib {
        None => Some(format!(
            "under --root nothing is loaded from the inspected tree; {flag} names a library outside it"
        )),
        Some(p) if !p.is_absolute() => Some(format!(
            "refused to load {}: under --root a bare name would be searched on the loader path, which may lead into the tree; name the file by its absolute path",
            p.display()
        )),
        Some(p) if is_under(p, root) => Some(format!(
            "refused to load {}: it lies under --root {}, whose libraries are never loaded",
            p.display(),
            root.display()
        )),
        Some(_) => None,
    }
}

fn is_under(path: &Path, root: &Path) -> bool {
    let abs = |p: &Path| -> PathBuf {
        p.canonicalize()
            .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
    };
    abs(path).starts_with(abs(root))
}

/// The child's end: the answer's lines on the real stdout. Shared by the threads of a
/// worker; a write error (the parent is gone) is kept for [`AnswerOut::finish`] rather
/// than stopping the work.
pub struct AnswerOut {
    file: Mutex<std::fs::File>,
    error: Mutex<Option<std::io::Error>>,
}

impl AnswerOut {
    /// Takes the real stdout for the answer and points fd 1 at stderr, so nothing a
    /// vendor library prints can corrupt it.
    pub fn take_stdout() -> std::io::Result<AnswerOut> {
        use std::os::fd::AsFd;
        let file = std::fs::File::from(rustix::io::dup(std::io::stdout().as_fd())?);
        // Failure leaves stdout as it was, which only risks a noisy library.
        let _ = rustix::stdio::dup2_stdout(std::io::stderr());
        Ok(AnswerOut {
            file: Mutex::new(file),
            error: Mutex::new(None),
        })
    }

    /// Writes one line and flushes it, so the parent has it even if the next call hangs.
    pub fn emit(&self, line: &impl Serialize) {
        let written = serde_json::to_string(line)
            .map_err(std::io::Error::other)
            .and_then(|text| {
                let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
                writeln!(f, "{text}")?;
                f.flush()
            });
        if let Err(e) = written {
            self.error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(e);
        }
    }

    /// The first write that failed, if any.
    pub fn finish(self) -> std::io::Result<()> {
        match self.error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_blank_lines_are_skipped() {
        let lines: Vec<serde_json::Value> = parse_lines("{\"a\":1}\n\ngarbage\n{\"b\":2}\n{\"c\":");
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn an_exit_without_answer_names_the_code_and_stderr() {
        let exit = Exit {
            name: "smoke worker",
            code: Some(3),
            stderr: "a\n\nb\nc\nd\ne\nf\n".into(),
        };
        assert_eq!(
            exit.without_answer(),
            "the smoke worker exited with 3 without a complete answer: b\nc\nd\ne\nf"
        );
        let killed = Exit {
            code: None,
            stderr: String::new(),
            ..exit
        };
        assert_eq!(
            killed.without_answer(),
            "the smoke worker exited abnormally without a complete answer"
        );
    }
}
