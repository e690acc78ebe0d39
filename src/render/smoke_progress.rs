//! The smoke test's live line on stderr: the steps that run longer than half a second, each
//! GPU's when that fits the terminal. The probe sends `ProgressEvent`s as the worker reports
//! them; a ticker redraws the line every 100 ms and erases it when the test ends. The one
//! renderer that reads the clock: it draws while the check runs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::envvars::Env;
use crate::render::{form::ordinals, term};
use crate::smoke::progress::{ProgressEvent, ProgressSink};

/// A sink that draws the live line; its ticker starts with the first event.
pub fn live_line(env: &Env) -> ProgressSink {
    let line = LiveLine {
        state: Arc::new(Mutex::new(State::default())),
        env: env.clone(),
    };
    Arc::new(move |e| line.event(e))
}

struct LiveLine {
    state: Arc<Mutex<State>>,
    env: Env,
}

#[derive(Default)]
struct State {
    running: BTreeMap<u32, (String, Instant)>,
    after_gpus: Option<(String, Instant)>,
    ticking: bool,
    shown: bool,
    done: bool,
}

impl LiveLine {
    fn event(&self, e: ProgressEvent) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match e {
            ProgressEvent::Step { ordinal, step } => {
                s.running.insert(ordinal, (step, Instant::now()));
            }
            ProgressEvent::GpuDone { ordinal } => {
                s.running.remove(&ordinal);
            }
            ProgressEvent::AfterGpus { what } => s.after_gpus = Some((what, Instant::now())),
            ProgressEvent::AfterGpusDone => s.after_gpus = None,
            ProgressEvent::Finished => {
                s.done = true;
                if s.shown {
                    eprint!("\r\x1b[K");
                    s.shown = false;
                }
            }
        }
        if !s.ticking && !s.done {
            s.ticking = true;
            tick(self.state.clone(), self.env.clone());
        }
    }
}

/// Redraws the line every 100 ms until the test ends.
fn tick(state: Arc<Mutex<State>>, env: Env) {
    let ascii = term::ascii_only(&env);
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(100));
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        if s.done {
            break;
        }
        let slow: Vec<(u32, &str, f64)> = s
            .running
            .iter()
            .filter(|(_, (_, t))| t.elapsed() >= Duration::from_millis(500))
            .map(|(o, (step, t))| (*o, step.as_str(), t.elapsed().as_secs_f64()))
            .collect();
        let after_gpus = s
            .after_gpus
            .as_ref()
            .filter(|(_, t)| slow.is_empty() && t.elapsed() >= Duration::from_millis(500))
            .map(|(call, t)| format!("smoke test: {call} {:.1} s", t.elapsed().as_secs_f64()));
        // One column short of the width: a line that fills the last column wraps on some
        // terminals, and `\r` then redraws only its second half.
        let width = term::stderr_columns(&env).saturating_sub(1);
        if let Some(line) = after_gpus {
            let line = if ascii {
                term::to_ascii(&line).into_owned()
            } else {
                line
            };
            eprint!("\r\x1b[K{}", line.chars().take(width).collect::<String>());
            s.shown = true;
        } else if !slow.is_empty() {
            eprint!("\r\x1b[K{}", progress_line(&slow, width, ascii));
            s.shown = true;
        }
    });
}

/// The live line for the steps running longer than half a second, at most `width`
/// columns: each GPU's step when that fits ("smoke test: GPU 0 transfer 1.2 s · GPU 1
/// matmul 0.6 s"), else the GPUs grouped by step ("smoke test: 8 GPUs running: context
/// 3.2 s (GPU 0–7)"), else the slowest one, else that cut short.
fn progress_line(slow: &[(u32, &str, f64)], width: usize, ascii: bool) -> String {
    let head = "smoke test: ";
    let each: Vec<String> = slow
        .iter()
        .map(|(o, step, secs)| format!("GPU {o} {step} {secs:.1} s"))
        .collect();
    let mut steps: Vec<(&str, f64, Vec<u32>)> = Vec::new();
    for &(o, step, secs) in slow {
        match steps.iter_mut().find(|(s, _, _)| *s == step) {
            Some((_, longest, gpus)) => {
                *longest = longest.max(secs);
                gpus.push(o);
            }
            None => steps.push((step, secs, vec![o])),
        }
    }
    let grouped: Vec<String> = steps
        .iter()
        .map(|(step, secs, gpus)| format!("{step} {secs:.1} s (GPU {})", ordinals(gpus)))
        .collect();
    let n = slow.len();
    let running = if n == 1 {
        String::new()
    } else {
        format!("{n} GPUs running: ")
    };
    let (o, step, secs) = slow
        .iter()
        .copied()
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .unwrap_or((0, "", 0.0));
    let candidates = [
        format!("{head}{}", each.join(" · ")),
        format!("{head}{running}{}", grouped.join(" · ")),
        format!("{head}{n} GPUs running, slowest GPU {o} {step} {secs:.1} s"),
        format!("{head}{n} GPUs running"),
    ];
    let fit = |s: &str| -> String {
        if ascii {
            term::to_ascii(s).into_owned()
        } else {
            s.to_string()
        }
    };
    let mut last = String::new();
    for c in candidates {
        last = fit(&c);
        if last.chars().count() <= width {
            return last;
        }
    }
    // Narrower than any summary: cut the shortest one.
    let ellipsis = fit("…");
    let keep = width.saturating_sub(ellipsis.chars().count());
    if keep == 0 {
        return String::new();
    }
    last.chars().take(keep).chain(ellipsis.chars()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_fits_the_terminal() {
        let eight: Vec<(u32, &str, f64)> = (0..8).map(|o| (o, "context", 3.2)).collect();
        // Wide enough for each GPU: all of them.
        let wide = progress_line(&eight, 300, false);
        assert!(
            wide.starts_with("smoke test: GPU 0 context 3.2 s · GPU 1"),
            "{wide}"
        );
        // 79 columns: grouped by step.
        assert_eq!(
            progress_line(&eight, 79, false),
            "smoke test: 8 GPUs running: context 3.2 s (GPU 0–7)"
        );
        assert_eq!(
            progress_line(&eight, 79, true),
            "smoke test: 8 GPUs running: context 3.2 s (GPU 0-7)"
        );
        let mixed = [
            (0, "matmul", 0.6),
            (1, "transfer", 1.2),
            (2, "matmul", 0.9),
            (3, "transfer", 1.1),
        ];
        assert_eq!(
            progress_line(&mixed, 79, false),
            "smoke test: 4 GPUs running: matmul 0.9 s (GPU 0,2) · transfer 1.2 s (GPU 1,3)"
        );
        assert_eq!(
            progress_line(&mixed, 60, false),
            "smoke test: 4 GPUs running, slowest GPU 1 transfer 1.2 s"
        );
        // One GPU: as it always was.
        assert_eq!(
            progress_line(&[(0, "transfer", 1.04)], 79, false),
            "smoke test: GPU 0 transfer 1.0 s"
        );
        // However narrow, never wider than asked.
        for width in 0..90 {
            for slow in [&eight[..], &mixed[..]] {
                for ascii in [false, true] {
                    let line = progress_line(slow, width, ascii);
                    assert!(line.chars().count() <= width, "{width}: {line}");
                }
            }
        }
    }
}
