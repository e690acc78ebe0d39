//! The temporary files of an image check are removed when the process is interrupted too.
//! TempDir and NamedTempFile remove themselves on drop, which a SIGINT, SIGTERM or SIGHUP
//! never reaches: a watcher thread removes every registered path and exits as the shell
//! expects (128 + the signal).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static WATCH: Once = Once::new();
/// Set by the watcher: writers stop before their next entry, so the tree stops growing
/// while it is removed.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Called by the unpacking loop before each entry: once interrupted, it waits here for the
/// watcher to remove the tree and exit, instead of writing into it (or racing it to an exit).
pub(crate) fn hold_if_interrupted() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::park_timeout(Duration::from_secs(1));
    }
}

/// Creates a temporary file or directory with `create` and registers it for removal if the
/// process is interrupted before it is dropped. The registry's lock is held across the
/// creation, so an interruption in between waits for the path to be known; a stale entry for a
/// path already removed costs nothing.
pub(crate) fn create<T, E>(
    create: impl FnOnce() -> Result<T, E>,
    path: impl Fn(&T) -> &Path,
) -> Result<T, E> {
    watch();
    let mut paths = PATHS.lock().unwrap_or_else(|e| e.into_inner());
    let made = create()?;
    paths.push(path(&made).to_path_buf());
    Ok(made)
}

fn watch() {
    WATCH.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                INTERRUPTED.store(true, Ordering::SeqCst);
                remove_all();
                std::process::exit(128 + signal);
            }
        });
    });
}

fn remove_all() {
    let paths = PATHS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for p in paths {
        // A writer may still be finishing the entry it started: retry until the tree stays
        // gone, for at most a few seconds.
        for _ in 0..200 {
            let result = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            if result.is_ok() || !p.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
