//! The snapshot a command judges: replayed from --from, or probed now.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::IgnoredAny;

use super::options::{probe_timeout, selection, smoke_mode, Selection};
use super::settings::Settings;
use super::CliError;
use crate::envvars::{self, Env};
use crate::findings::Finding;
use crate::probes::{self, ProbeOptions};
use crate::report::{load_saved, Saved};
use crate::rules::{self, View};
use crate::snapshot::Snapshot;

/// A focused subcommand: only `probes` run, only the codes of `view`'s rules are judged
/// (both still narrowed by --only/--skip).
pub(super) fn focused(g: &Settings, probes: &[&str], view: View) -> Result<Focused, CliError> {
    focused_with(g, probes, view, None)
}

/// What a focused subcommand judged: the snapshot, the checks that ran, the findings.
pub(super) type Focused = (Snapshot, Vec<rules::Check>, Vec<Finding>);

/// `gpudoctor smoke`'s choice of GPU: a CUDA ordinal, or an identifier the worker matches
/// against CUDA's UUIDs and bus ids; neither: every visible GPU.
#[derive(Debug, Default)]
pub(super) struct SmokeCmd {
    pub device: Option<u32>,
    pub device_id: Option<String>,
}

/// `focused`, with `smoke_cmd` for the smoke subcommand.
pub(super) fn focused_with(
    g: &Settings,
    probes: &[&str],
    view: View,
    smoke_cmd: Option<&SmokeCmd>,
) -> Result<Focused, CliError> {
    let sel = selection(g)?;
    let env = Env::from_process();
    let wanted: Vec<&'static str> = sel
        .probes
        .iter()
        .copied()
        .filter(|p| probes.contains(p))
        .collect();
    if smoke_cmd.is_some() && !wanted.contains(&"smoke") {
        return Err(CliError::Usage(
            "`gpudoctor smoke` with the smoke probe skipped has nothing to do".into(),
        ));
    }
    let snapshot = gather(g, &sel, &wanted, &env, smoke_cmd)?;
    let codes = view.codes();
    let wants = |code: &str| codes.contains(&code) && sel.wants(code);
    let (checks, findings) = rules::evaluate(&snapshot, &wants);
    Ok((snapshot, checks, sel.adjust(findings)))
}

/// The snapshot to judge: replayed from --from, or probed now (under --root if given).
pub(super) fn gather(
    g: &Settings,
    sel: &Selection,
    probes_wanted: &[&'static str],
    env: &Env,
    smoke_cmd: Option<&SmokeCmd>,
) -> Result<Snapshot, CliError> {
    let timeout = probe_timeout(g);
    let snapshot = match &g.from {
        Some(path) => {
            let mut probing: Vec<&str> = [
                (g.root.is_some(), "--root"),
                (g.image.is_some(), "--image"),
                (g.user.is_some(), "--user"),
                (g.nvml_lib.is_some(), "--nvml-lib"),
                (g.python.is_some(), "--python"),
                (g.python_import, "--python-import"),
                (g.cuda_lib.is_some(), "--cuda-lib"),
                (g.nccl, "--nccl"),
                (sel.names_probes, "probe names in --only/--skip"),
            ]
            .into_iter()
            .filter_map(|(given, name)| given.then_some(name))
            .collect();
            probing.extend(g.flags_given(&[
                "timeout",
                "smoke.matmul_size",
                "smoke.mem_fraction",
                "smoke.transfer_size",
                "smoke.enabled",
            ]));
            if !probing.is_empty() {
                return Err(CliError::Usage(format!(
                    "--from replays a saved snapshot: {} do{} not apply (nothing is probed; codes in --only/--skip do apply)",
                    probing.join(", "),
                    if probing.len() == 1 && !probing[0].starts_with("probe") { "es" } else { "" }
                )));
            }
            load_snapshot(path)?
        }
        None => {
            if let Some(root) = &g.root {
                if !root.is_dir() {
                    return Err(CliError::Usage(format!(
                        "--root {}: not a directory",
                        root.display()
                    )));
                }
            }
            let unpacked = match &g.image {
                Some(path) => Some(unpack_image(g, path)?),
                None => None,
            };
            let image = unpacked.as_ref().map(|u| probes::ImageUserland {
                root: u.root().to_path_buf(),
                env: image_env(&u.info, u.root()),
                info: u.info.clone(),
            });
            let smoke = if image.is_some() {
                probes::SmokeMode::Off(
                    "skipped (--image: nothing from the image is run, and the host's GPUs are not what is judged)".into(),
                )
            } else {
                smoke_mode(g, env, smoke_cmd)?
            };
            let opts = ProbeOptions {
                root: g
                    .root
                    .as_ref()
                    .map(|r| std::path::absolute(r).unwrap_or_else(|_| r.clone())),
                user: g.user.clone(),
                // Importing torch takes seconds; the live probe needs room.
                timeout: Duration::from_secs_f64(timeout),
                enabled: probes_wanted.to_vec(),
                // The flag wins; the variable (when set and not empty) stands in for it.
                nvml_lib: g.nvml_lib.clone().or_else(|| {
                    env.get_str(envvars::GPUDOCTOR_NVML_LIB)
                        .filter(|v| !v.is_empty())
                        .map(PathBuf::from)
                }),
                python: g.python.clone(),
                python_import: g.python_import,
                linkage_files: g.libs_files.clone(),
                linkage_full: g.command == "libs",
                log_window: g.log_window.clone(),
                smoke,
                image,
            };
            // The unpacked tree lives until the probes are done, then is removed.
            let snapshot =
                probes::collect(&opts, env).map_err(|e| CliError::Usage(e.to_string()))?;
            drop(unpacked);
            snapshot
        }
    };
    let mut snapshot = snapshot;
    if g.command == "devices" {
        if let Some(n) = snapshot.nvml.as_mut() {
            n.requested = true;
        }
    }
    // A replay keeps the saved expectations unless one is given now.
    let said = |v: &Option<(String, String)>| {
        v.as_ref().map(|(value, from)| crate::snapshot::Said {
            value: value.clone(),
            from: from.clone(),
        })
    };
    let given = crate::snapshot::Expect {
        gpus: g
            .expect_gpus
            .as_ref()
            .map(|(n, from)| crate::snapshot::Said {
                value: *n,
                from: from.clone(),
            }),
        driver: said(&g.expect_driver),
        gpu_model: said(&g.expect_gpu_model),
    };
    if given != crate::snapshot::Expect::default() {
        let saved = snapshot.expect.take().unwrap_or_default();
        snapshot.expect = Some(crate::snapshot::Expect {
            gpus: given.gpus.or(saved.gpus),
            driver: given.driver.or(saved.driver),
            gpu_model: given.gpu_model.or(saved.gpu_model),
        });
    }
    Ok(snapshot)
}

/// `--image PATH` or `--image PATH:TAG`, unpacked into a private temporary directory.
fn unpack_image(g: &Settings, given: &Path) -> Result<crate::image::Unpacked, CliError> {
    if g.python_import {
        return Err(CliError::Usage(
            "--image runs nothing from the image: --python-import does not apply".into(),
        ));
    }
    let (path, reference) = split_reference(given);
    crate::image::unpack(
        &path,
        reference.as_deref(),
        std::env::consts::ARCH,
        &crate::image::Limits::default(),
    )
    .map_err(|e| CliError::Usage(format!("--image {}: {e}", given.display())))
}

/// PATH:TAG, when PATH itself does not exist but the part before the last colon does.
fn split_reference(given: &Path) -> (PathBuf, Option<String>) {
    if given.exists() {
        return (given.to_path_buf(), None);
    }
    let text = given.to_string_lossy();
    match text.rsplit_once(':') {
        Some((path, tag)) if !tag.is_empty() && !tag.contains('/') && Path::new(path).exists() => {
            (PathBuf::from(path), Some(tag.to_string()))
        }
        _ => (given.to_path_buf(), None),
    }
}

/// The environment the image's process starts with, as Docker builds it: the config's Env,
/// PATH defaulted when the image sets none, and HOME from the image's /etc/passwd entry for its
/// user (`/root` for root, `/` when the user has no entry).
fn image_env(info: &crate::image::ImageInfo, root: &Path) -> Env {
    let mut pairs: Vec<(String, String)> = info
        .env
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if !pairs.iter().any(|(k, _)| k == "PATH") {
        pairs.push((
            "PATH".into(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
        ));
    }
    if !pairs.iter().any(|(k, _)| k == "HOME") {
        pairs.push(("HOME".into(), image_home(info.user.as_deref(), root)));
    }
    Env::from_pairs(pairs)
}

/// The home directory of the image's USER (`name`, `uid`, `name:group`, `uid:gid`).
fn image_home(user: Option<&str>, root: &Path) -> String {
    let who = user
        .map(|u| u.split(':').next().unwrap_or("").trim())
        .unwrap_or("");
    if who.is_empty() || who == "root" || who == "0" {
        return "/root".into();
    }
    let fs = crate::fsys::HostFs::new(Some(root.to_path_buf()));
    let passwd = fs
        .read_text_limited(Path::new("/etc/passwd"), 4 << 20)
        .map(|f| f.text)
        .unwrap_or_default();
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 6 && (f[0] == who || f[2] == who))
        .map(|f| f[5].to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "/".into())
}

/// The snapshot of a saved report, or a bare snapshot (`-`: stdin).
fn load_snapshot(path: &Path) -> Result<Snapshot, CliError> {
    load_saved::<Snapshot, IgnoredAny>(path, Saved::ReportOrSnapshot)
        .map(|saved| saved.snapshot)
        .map_err(|e| CliError::Usage(format!("--from {}: {e}", path.display())))
}
