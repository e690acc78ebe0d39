//! `gpudoctor smoke` and the smoke-test lines of `check`: what each GPU did in each step.

use serde::Serialize;

use super::{printable, Style};
use crate::findings::{Finding, Severity, Summary};
use crate::probes::smoke::{
    link, nvml_gpu, Link, SmokeDevice, SmokeProbe, SmokeResult, SmokeRun, SmokeSettings, Step,
};
use crate::report::SCHEMA_VERSION;
use crate::snapshot::Snapshot;

#[derive(Serialize)]
pub struct SmokeView<'a> {
    pub schema_version: u32,
    pub gpudoctor_version: &'static str,
    /// The library asked for and the one the loader mapped.
    pub library: Option<&'a str>,
    pub settings: Option<&'a SmokeSettings>,
    pub result: Option<&'a SmokeResult>,
    /// Per CUDA device: its NVML index and host link, for reading the bandwidth figures.
    pub links: Vec<DeviceLink>,
    pub findings: &'a [Finding],
    pub summary: Summary,
}

#[derive(Serialize)]
pub struct DeviceLink {
    pub ordinal: u32,
    pub nvml_index: Option<u32>,
    pub link: Option<Link>,
}

pub fn view<'a>(snap: &'a Snapshot, findings: &'a [Finding]) -> SmokeView<'a> {
    let probe = snap.smoke.as_ref();
    let links = probe
        .and_then(SmokeProbe::run)
        .map(|run| {
            run.devices
                .iter()
                .map(|d| {
                    let g = snap.nvml_system().and_then(|s| nvml_gpu(s, d));
                    DeviceLink {
                        ordinal: d.ordinal,
                        nvml_index: g.map(|g| g.index),
                        link: g.and_then(link),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    SmokeView {
        schema_version: SCHEMA_VERSION,
        gpudoctor_version: env!("CARGO_PKG_VERSION"),
        library: probe.map(|p| p.library.as_str()),
        settings: probe.map(|p| &p.settings),
        result: probe.map(|p| &p.result),
        links,
        findings,
        summary: Summary::of(findings),
    }
}

pub fn render_json(v: &SmokeView) -> String {
    super::json::pretty(v, "smoke view")
}

/// One line about the whole run: the library, the driver API version, the GPUs.
pub fn status_text(p: &SmokeProbe, findings: &[Finding]) -> String {
    match &p.result {
        SmokeResult::NotRun { reason } => format!("not run: {reason}"),
        SmokeResult::LoadFailed { message, .. } => format!("libcuda could not be used: {message}"),
        SmokeResult::WorkerFailed { detail } => detail.clone(),
        SmokeResult::Ran { run } => run_text(p, run, findings),
        SmokeResult::TimedOut {
            seconds, stuck_at, ..
        } => format!(
            "did not finish within {seconds:.1} s (stuck in {})",
            stuck_at.join("; ")
        ),
        SmokeResult::Crashed { signal, during, .. } => format!(
            "the driver crashed the test with signal {signal}{}",
            if during.is_empty() {
                String::new()
            } else {
                format!(" (during {})", during.join("; "))
            }
        ),
    }
}

fn run_text(p: &SmokeProbe, run: &SmokeRun, findings: &[Finding]) -> String {
    let lib = run.loaded_from.as_deref().unwrap_or(&p.library);
    if let Some(e) = &run.init_error {
        return format!("cuInit failed: {} {} ({lib})", e.code, e.name);
    }
    let n = run.devices.len();
    let (mut passed, mut warned) = (0, 0);
    for d in &run.devices {
        match (device_passed(d), device_worst(findings, d.ordinal)) {
            (true, None | Some(Severity::Info)) => passed += 1,
            (true, Some(Severity::Warning)) => warned += 1,
            _ => {}
        }
    }
    let warned = if warned > 0 {
        format!(", {warned} with warnings")
    } else {
        String::new()
    };
    format!(
        "{passed} of {n} GPU(s) passed{warned} · driver API CUDA {} · {lib} · {:.2} s",
        run.driver_cuda().unwrap_or_else(|| "?".into()),
        run.elapsed_ms / 1e3
    )
}

/// The worst finding about CUDA device `ordinal`: the smoke rules cite `smoke:N:step`.
fn device_worst(findings: &[Finding], ordinal: u32) -> Option<Severity> {
    let prefix = format!("smoke:{ordinal}:");
    findings
        .iter()
        .filter(|f| {
            f.evidence
                .iter()
                .any(|e| e.fact.as_deref().is_some_and(|k| k.starts_with(&prefix)))
        })
        .map(|f| f.severity)
        .max()
}

/// Every step that ran finished and nothing in it was wrong (a skipped step is neither).
pub fn device_passed(d: &SmokeDevice) -> bool {
    let failed = |s: Option<&Step<_>>| matches!(s, Some(Step::Failed { .. }));
    let matmul_ok = match &d.matmul {
        Some(Step::Ok(m)) => m.correct,
        Some(Step::Failed { .. }) | None => false,
        Some(Step::Skipped { .. }) => true,
    };
    let memory_ok = match &d.memory {
        Some(Step::Ok(m)) => m.mismatches == 0 && m.kernel_error.is_none(),
        Some(Step::Failed { .. }) | None => false,
        Some(Step::Skipped { .. }) => true,
    };
    d.finished
        && d.info_error.is_none()
        && matches!(d.context, Some(Step::Ok(_)))
        && !failed(d.module.as_ref())
        && matmul_ok
        && memory_ok
        && matches!(d.transfer, Some(Step::Ok(_)))
}

/// The slower pinned direction as a share of the link, when both are known.
pub fn link_share(t: &crate::probes::smoke::Transfer, link: &Link) -> Option<f64> {
    let slowest = match (t.pinned_h2d_gbps, t.pinned_d2h_gbps) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => return None,
    };
    Some(slowest / link.gbps)
}

/// GiB from 1 GiB up, MiB below (MIG slices and small test devices).
fn size(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// Three significant figures at most, without a pointless ".0".
fn num(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn gbps(x: Option<f64>) -> String {
    x.map_or("–".into(), num)
}

fn step_error<T>(s: &Step<T>) -> Option<String> {
    match s {
        Step::Ok(_) => None,
        Step::Failed { error, detail } => Some(format!(
            "failed: {error}{}",
            detail
                .as_deref()
                .map(|d| format!(" — {}", d.lines().next().unwrap_or("")))
                .unwrap_or_default()
        )),
        Step::Skipped { reason } => Some(format!("skipped: {reason}")),
    }
}

/// (step, text, healthy) for each step a device reached, in order.
pub fn device_rows(d: &SmokeDevice, link: Option<&Link>) -> Vec<(&'static str, String, bool)> {
    let mut rows = Vec::new();
    if let Some(e) = &d.info_error {
        rows.push(("device", format!("{e}"), false));
    }
    if let Some(s) = &d.context {
        rows.push(match s {
            Step::Ok(t) => ("context", format!("created in {} ms", num(t.ms)), true),
            other => ("context", step_error(other).unwrap_or_default(), false),
        });
    }
    if let Some(s) = &d.module {
        rows.push(match s {
            Step::Ok(t) => (
                "kernels",
                format!("PTX JIT-compiled in {} ms", num(t.ms)),
                true,
            ),
            other => ("kernels", step_error(other).unwrap_or_default(), false),
        });
    }
    if let Some(s) = &d.matmul {
        rows.push(match s {
            Step::Ok(m) => (
                "matmul",
                format!(
                    "{n}×{n} FP32 {} ms, {} GFLOP/s, {}",
                    num(m.ms),
                    num(m.gflops),
                    if m.correct {
                        format!(
                            "correct (largest error {:.2} of tolerance)",
                            m.max_error_ratio
                        )
                    } else {
                        format!(
                            "WRONG: {} of {} checked elements off, Freivalds {}",
                            m.wrong_elements,
                            m.checked_rows as u64 * m.n as u64,
                            if m.freivalds_passed {
                                "passed"
                            } else {
                                "failed"
                            }
                        )
                    },
                    n = m.n
                ),
                m.correct,
            ),
            other => ("matmul", step_error(other).unwrap_or_default(), false),
        });
    }
    if let Some(s) = &d.memory {
        rows.push(match s {
            Step::Ok(m) => {
                let mut t = format!(
                    "{} of {} free in {} chunk(s), {} mismatches, fill {} / verify {} GB/s",
                    size(m.allocated),
                    size(m.free_before),
                    m.chunks,
                    m.mismatches,
                    gbps(m.fill_gbps),
                    gbps(m.verify_gbps)
                );
                if let (Some(e), Some(at)) = (&m.alloc_error, m.failed_at) {
                    t.push_str(&format!("; allocation failed at {} ({})", size(at), e.name));
                }
                if let Some(e) = &m.kernel_error {
                    t.push_str(&format!("; {e}"));
                }
                if m.lowered_because.is_some() {
                    t.push_str(&format!(
                        "; target lowered to {:.0} % (GPU shared)",
                        m.fraction * 100.0
                    ));
                }
                // Judged like GD057: corruption, or allocation stopping well short of the target.
                let healthy = m.mismatches == 0
                    && m.kernel_error.is_none()
                    && !crate::rules::memory_fell_short(m);
                ("memory", t, healthy)
            }
            other => ("memory", step_error(other).unwrap_or_default(), false),
        });
    }
    if let Some(s) = &d.transfer {
        rows.push(match s {
            Step::Ok(t) => {
                let mut text = format!(
                    "pinned H2D {} / D2H {} GB/s, pageable {} / {} GB/s",
                    gbps(t.pinned_h2d_gbps),
                    gbps(t.pinned_d2h_gbps),
                    gbps(t.pageable_h2d_gbps),
                    gbps(t.pageable_d2h_gbps)
                );
                let share = link.and_then(|l| Some((l, link_share(t, l)?)));
                if let Some((l, share)) = share {
                    text.push_str(&format!(
                        " (slower direction {:.0} % of PCIe gen{} x{} {} GB/s)",
                        share * 100.0,
                        l.generation,
                        l.width,
                        num(l.gbps)
                    ));
                }
                if t.host_memory_cap {
                    text.push_str(&format!(
                        "; copies cut to {} to fit host memory",
                        size(t.bytes)
                    ));
                }
                if let Some(e) = &t.pinned_error {
                    text.push_str(&format!("; no pinned memory: {}", e.name));
                }
                // Judged like GD058: failed pinned memory, or under 60 % of a known link
                // with copies big enough to tell.
                let slow = share.is_some_and(|(_, x)| {
                    x < crate::rules::TRANSFER_MIN_SHARE
                        && t.bytes >= crate::rules::TRANSFER_MIN_BYTES
                });
                ("transfer", text, t.pinned_error.is_none() && !slow)
            }
            other => ("transfer", step_error(other).unwrap_or_default(), false),
        });
    }
    if let Some(step) = &d.running {
        rows.push(("stopped", format!("in the {step} step"), false));
    }
    rows
}

fn device_title(d: &SmokeDevice) -> String {
    let mut t = format!("GPU {}", d.ordinal);
    if let Some(i) = &d.info {
        t.push_str(&format!("  {}", i.name));
        if let Some(cc) = &i.compute_capability {
            t.push_str(&format!("  cc {cc}"));
        }
        if let Some(b) = &i.pci_bus_id {
            t.push_str(&format!("  {b}"));
        }
    }
    t
}

pub fn render_human(v: &SmokeView, st: &Style) -> String {
    let mut out = String::new();
    let Some(result) = v.result else {
        out.push_str("The smoke test was not run.\n");
        return out;
    };
    let probe = SmokeProbe {
        library: v.library.unwrap_or_default().to_string(),
        settings: v.settings.cloned().unwrap_or_default(),
        result: result.clone(),
    };
    let head = format!("Smoke test: {}", status_text(&probe, v.findings));
    out.push_str(&format!("{}\n", st.bold(&printable(&head))));
    if let Some(run) = probe.run() {
        for d in &run.devices {
            let link = v
                .links
                .iter()
                .find(|l| l.ordinal == d.ordinal)
                .and_then(|l| l.link.as_ref());
            out.push_str(&format!("\n{}\n", st.bold(&printable(&device_title(d)))));
            for (step, text, healthy) in device_rows(d, link) {
                let mark = if healthy {
                    st.green("✓")
                } else {
                    st.red("✗")
                };
                out.push_str(&format!("  {mark} {step:<9} {}\n", printable(&text)));
            }
        }
    }
    out.push_str(&super::devices::findings_block(v.findings, st));
    out
}

pub fn render_markdown(v: &SmokeView) -> String {
    format!(
        "# gpudoctor smoke\n\n```text\n{}```\n",
        render_human(v, &Style::plain())
    )
}
