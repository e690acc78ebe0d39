//! `gpudoctor check` (the default): every probe and rule, the whole report.

use std::path::{Path, PathBuf};

use super::args::{Format, GlobalOpts};
use super::gather::gather;
use super::options::{exit_code, selection, terminal_width};
use super::{emit, CliError};
use crate::envvars::Env;
use crate::render::{self, Style};
use crate::report::Report;
use crate::rules;

pub(super) fn check(g: &GlobalOpts) -> Result<u8, CliError> {
    // A bad --output is a usage error before any probing (the smoke test takes seconds).
    if let Some(path) = &g.output {
        let text = path.to_string_lossy();
        if text.ends_with('/') || (!text.contains("{host}") && path.is_dir()) {
            return Err(CliError::Usage(format!(
                "--output {}: a directory; name the file, e.g. {}/{{host}}.json",
                path.display(),
                text.trim_end_matches('/')
            )));
        }
    }
    let sel = selection(g)?;
    let env = Env::from_process();
    let snapshot = gather(g, &sel, &sel.probes, &env, None)?;
    let wants = |code: &str| sel.wants(code);
    let (checks, findings) = rules::evaluate(&snapshot, &wants);
    let report = Report::new(snapshot, checks, findings);

    let format = Format::of(g);
    let human = |style: Style| {
        render::human::render(
            &report,
            &render::human::Options {
                verbose: g.verbose,
                style,
                width: terminal_width(&env),
            },
        )
    };
    let render_as = |format: Format, style: Style| match format {
        Format::Json => render::json::render(&report),
        Format::Markdown => render::markdown::render(&report, g.verbose),
        Format::Junit => render::junit::render(&report),
        Format::Prometheus => render::prometheus::render(&report),
        Format::Human => human(style),
    };
    match &g.output {
        // The file gets the chosen format; the terminal (or the job log) the human report,
        // which reaches it even when the file cannot be written.
        Some(path) => {
            emit(human(Style::for_stdout()).as_bytes())?;
            let written = write_output(path, &report, &render_as(format, Style::plain()))?;
            eprintln!("gpudoctor: report written to {}", written.display());
        }
        None => {
            emit(render_as(format, Style::for_stdout()).as_bytes())?;
        }
    }
    Ok(exit_code(g, report.worst()))
}

/// Writes `text` to `path` with `{host}` replaced by the node's name (safe as a file
/// name), creating the directory, atomically: a shared filesystem never shows a half
/// report to `gpudoctor fleet`.
fn write_output(path: &Path, report: &Report, text: &str) -> Result<PathBuf, CliError> {
    let host = report
        .snapshot
        .node
        .as_ref()
        .map(|n| crate::probes::node::file_name(&n.name))
        .unwrap_or_else(|| "unknown".into());
    let expanded = PathBuf::from(path.to_string_lossy().replace("{host}", &host));
    write_file(&expanded, &host, text, 0)?;
    Ok(expanded)
}

/// Links followed before giving up (a loop of links never ends).
const OUTPUT_LINK_HOPS: u32 = 16;

fn write_file(path: &Path, host: &str, text: &str, hops: u32) -> Result<(), CliError> {
    use std::io::Write as _;
    let fail = |what: &str, e: std::io::Error| {
        CliError::Usage(format!("--output {}: {what}: {e}", path.display()))
    };
    // A link is written through, as the shell's `>` would: its target is replaced (and
    // created when the link dangles), never the link. A device, FIFO or socket
    // (/dev/null, /dev/stdout) is written to, never renamed over.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            if hops >= OUTPUT_LINK_HOPS {
                return Err(CliError::Usage(format!(
                    "--output {}: too many levels of symbolic links",
                    path.display()
                )));
            }
            let target = std::fs::read_link(path).map_err(|e| fail("reading the link", e))?;
            let target = match path.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            return write_file(&target, host, text, hops + 1);
        } else if meta.is_dir() {
            return Err(CliError::Usage(format!(
                "--output {}: a directory; name the file, e.g. {}/{{host}}.json",
                path.display(),
                path.display()
            )));
        } else if !meta.is_file() {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| fail("opening", e))?;
            f.write_all(text.as_bytes())
                .map_err(|e| fail("writing", e))?;
            return Ok(());
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| fail("creating its directory", e))?;
    }
    let name = path
        .file_name()
        .ok_or_else(|| CliError::Usage(format!("--output {}: not a file name", path.display())))?;
    // Host and pid: containers on a shared filesystem can share pids.
    let tmp = path.with_file_name(format!(
        ".{}.tmp.{host}.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    // On the disk before the rename: after a crash the name holds the old report or the
    // whole new one. A failed write leaves no temp file behind.
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .map_err(|e| fail("writing", e))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| fail("renaming into place", e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
