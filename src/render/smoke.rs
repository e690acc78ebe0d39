//! `gpudoctor smoke` and the smoke-test lines of `check`: what each GPU did in each step.

use serde::Serialize;

use super::width::wrap;
use super::{form, printable, Style};
use crate::facts::smoke::{
    link, nvml_gpu, Link, PeerCopy, SmokeDevice, SmokeProbe, SmokeResult, SmokeRun, SmokeSettings,
    Step,
};
use crate::findings::{Finding, Summary};
use crate::report::SCHEMA_VERSION;
use crate::rules::Check;
use crate::snapshot::Snapshot;
use crate::subject::{SmokeStep, Subject};
use crate::verdict::{PeerVerdict, SmokeGpuVerdict, SmokeTally, Verdict, Verdicts};

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
    /// The verdict on the whole test: the worst finding about it or any GPU's step.
    pub verdict: Verdict,
    /// Each tested GPU's verdict, step by step (from the findings, as `check` marks them).
    pub gpus: Vec<SmokeGpuVerdict>,
    /// Each ordered GPU pair's peer-copy verdict (from the findings).
    pub peers: Vec<PeerVerdict>,
    pub tally: SmokeTally,
    /// `--nccl`: what was asked and the verdict on the all-reduce (its figures are in
    /// `result.run.nccl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl: Option<NcclView<'a>>,
    pub findings: &'a [Finding],
    pub summary: Summary,
}

#[derive(Serialize)]
pub struct NcclView<'a> {
    #[serde(flatten)]
    pub request: &'a crate::smoke::nccl::NcclRequest,
    pub verdict: Verdict,
}

#[derive(Serialize)]
pub struct DeviceLink {
    pub ordinal: u32,
    pub nvml_index: Option<u32>,
    pub link: Option<Link>,
}

pub fn view<'a>(snap: &'a Snapshot, findings: &'a [Finding], checks: &[Check]) -> SmokeView<'a> {
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
    let verdicts = Verdicts::new(findings, checks);
    let gpus = verdicts.smoke_gpus(snap);
    let peers = verdicts.smoke_peers(snap);
    SmokeView {
        schema_version: SCHEMA_VERSION,
        gpudoctor_version: env!("CARGO_PKG_VERSION"),
        library: probe.map(|p| p.library.as_str()),
        settings: probe.map(|p| &p.settings),
        result: probe.map(|p| &p.result),
        links,
        verdict: verdicts.of(&Subject::Smoke),
        tally: SmokeTally::of(&gpus),
        gpus,
        peers,
        nccl: probe.and_then(|p| p.nccl.as_ref()).map(|request| NcclView {
            request,
            verdict: verdicts.of(&Subject::SmokeNccl),
        }),
        findings,
        summary: Summary::of(findings),
    }
}

pub fn render_json(v: &SmokeView) -> String {
    super::json::pretty(v, "smoke view")
}

/// One line about the whole run: the library, the driver API version, the GPUs (and the GPU
/// pairs, when a finding marks one).
pub fn status_text(p: &SmokeProbe, gpus: &[SmokeGpuVerdict], peers: &[PeerVerdict]) -> String {
    match &p.result {
        SmokeResult::NotRun { reason } => format!("not run: {reason}"),
        SmokeResult::LoadFailed { message, .. } => format!("libcuda could not be used: {message}"),
        SmokeResult::WorkerFailed { detail } => detail.clone(),
        SmokeResult::Ran { run } => run_text(p, run, gpus, peers),
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

fn run_text(
    p: &SmokeProbe,
    run: &SmokeRun,
    gpus: &[SmokeGpuVerdict],
    peers: &[PeerVerdict],
) -> String {
    let lib = run.loaded_from.as_deref().unwrap_or(&p.library);
    if let Some(e) = &run.init_error {
        return format!("cuInit failed: {} {} ({lib})", e.code, e.name);
    }
    format!(
        "{}{} · driver API CUDA {} · {lib} · {:.2} s",
        SmokeTally::of(gpus).text(),
        peer_tally(peers),
        run.driver_cuda().unwrap_or_else(|| "?".into()),
        run.elapsed_ms / 1e3
    )
}

/// ", 1 of 56 GPU pair(s) failed" when findings mark pairs; nothing when none does.
fn peer_tally(peers: &[PeerVerdict]) -> String {
    let count = |v: Verdict| peers.iter().filter(|p| p.verdict == v).count();
    let parts: Vec<String> = [
        (count(Verdict::Error), "failed"),
        (count(Verdict::Warning), "with warnings"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!(", of {} GPU pair(s) {}", peers.len(), parts.join(", "))
}

/// The slower pinned direction as a share of the link, when both are known.
pub fn link_share(t: &crate::facts::smoke::Transfer, link: &Link) -> Option<f64> {
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

/// What each step a device reached printed, in the order of `verdict::steps_reached`.
pub fn device_rows(d: &SmokeDevice, link: Option<&Link>) -> Vec<(SmokeStep, String)> {
    let mut rows = Vec::new();
    if let Some(e) = &d.info_error {
        rows.push((SmokeStep::Device, format!("{e}")));
    }
    if let Some(s) = &d.context {
        rows.push(match s {
            Step::Ok(t) => (SmokeStep::Context, format!("created in {} ms", num(t.ms))),
            other => (SmokeStep::Context, step_error(other).unwrap_or_default()),
        });
    }
    if let Some(s) = &d.module {
        rows.push(match s {
            Step::Ok(t) => (
                SmokeStep::Kernels,
                format!("PTX JIT-compiled in {} ms", num(t.ms)),
            ),
            other => (SmokeStep::Kernels, step_error(other).unwrap_or_default()),
        });
    }
    if let Some(s) = &d.matmul {
        rows.push(match s {
            Step::Ok(m) => (
                SmokeStep::Matmul,
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
            ),
            other => (SmokeStep::Matmul, step_error(other).unwrap_or_default()),
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
                (SmokeStep::Memory, t)
            }
            other => (SmokeStep::Memory, step_error(other).unwrap_or_default()),
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
                if let Some(d2d) = t.device_gbps {
                    text.push_str(&format!(", device-local {d2d:.0} GB/s"));
                }
                if let Some((l, share)) = link.and_then(|l| Some((l, link_share(t, l)?))) {
                    text.push_str(&format!(
                        " (slower direction {:.0} % of PCIe Gen{} x{} {} GB/s)",
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
                (SmokeStep::Transfer, text)
            }
            other => (SmokeStep::Transfer, step_error(other).unwrap_or_default()),
        });
    }
    if let Some(step) = d.running.as_deref() {
        let text = format!("did not finish: stopped in the {step} step");
        match SmokeStep::from_worker_name(step) {
            Some(s) if !rows.iter().any(|(r, _)| *r == s) => rows.push((s, text)),
            _ => {}
        }
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

/// The probe the view shows, when the test was run at all.
fn probe_of(v: &SmokeView) -> Option<SmokeProbe> {
    Some(SmokeProbe {
        library: v.library.unwrap_or_default().to_string(),
        settings: v.settings.cloned().unwrap_or_default(),
        result: v.result?.clone(),
        nccl: v.nccl.as_ref().map(|n| n.request.clone()),
    })
}

/// The NCCL step in one line: what ran, the sum, the bandwidth, the transports.
pub fn nccl_text(p: &SmokeProbe) -> Option<String> {
    let req = p.nccl.as_ref()?;
    if let Some(why) = &req.refused {
        return Some(format!("not run: {why}"));
    }
    let Some(n) = p.run()?.nccl.as_ref() else {
        return Some("not reached (the worker stopped before it)".into());
    };
    let mut t = match (&n.load_error, &n.error, &n.all_reduce, &n.skipped) {
        (Some(e), ..) => format!("libnccl could not be used: {}", e.message),
        (_, Some(e), ..) => format!("{e}"),
        (_, _, Some(a), _) => {
            let mib = a.bytes as f64 / (1u64 << 20) as f64;
            let sum = if a.correct() {
                "sum correct".to_string()
            } else {
                format!("{} wrong elements", a.wrong_elements)
            };
            format!(
                "{} GPUs, {mib:.0} MiB each: {sum}; busbw {:.1} GB/s, algbw {:.1} GB/s ({:.2} ms, median of {})",
                a.ranks, a.busbw_gbps, a.algbw_gbps, a.ms, a.iterations
            )
        }
        (_, _, _, Some(why)) => format!("skipped: {why}"),
        _ => match crate::smoke::nccl::stuck_at(n) {
            Some(s) => format!("stopped in {s}"),
            None => "no result".into(),
        },
    };
    if let Some(d) = &req.debug {
        if !d.transports.is_empty() {
            t.push_str(&format!("; via {}", d.transports.join(", ")));
        }
    }
    if !req.environment.is_empty() {
        t.push_str(&format!("; {}", req.environment.join(" ")));
    }
    if let Some(v) = n.version_text() {
        t.push_str(&format!("; NCCL {v}"));
    }
    Some(t)
}

/// `gpudoctor smoke` for a terminal (ASCII where it needs it).
/// The human view, ending with the recap of its root causes (`snap`: the GPUs they name).
pub fn render_human(v: &SmokeView, snap: &Snapshot, st: &Style, width: usize) -> String {
    let mut text = human_text(v, st, width);
    let recap = super::recap::render(snap, v.findings, st, width.min(super::width::PROSE_WIDTH));
    if !recap.is_empty() {
        text.push('\n');
        text.push_str(&recap);
    }
    st.finish(text)
}

fn human_text(v: &SmokeView, st: &Style, width: usize) -> String {
    let mut out = String::new();
    let Some(probe) = probe_of(v) else {
        out.push_str("The smoke test was not run.\n");
        return out;
    };
    let head = if v.tally.gpus == 0 {
        format!(
            "Smoke test: nothing tested — {}",
            status_text(&probe, &v.gpus, &v.peers)
        )
    } else {
        format!("Smoke test: {}", status_text(&probe, &v.gpus, &v.peers))
    };
    let mark = format!("{} ", form::mark(v.verdict, st));
    out.push_str(&wrap(&st.bold(&printable(&head)), width, &mark, "  "));
    out.push('\n');
    let table = device_table(v, &probe);
    if !table.is_empty() {
        out.push('\n');
        out.push_str(&step_grid(&table, st, width));
        // What failed or warned, in full; what passed is a mark in the grid (the figures are
        // in --format json and markdown, and in `check -v`).
        let mut details = String::new();
        for (d, gv, link) in &table {
            for (step, text) in device_rows(d, *link) {
                let verdict = step_verdict(gv, step);
                if !matches!(verdict, Verdict::Error | Verdict::Warning) {
                    continue;
                }
                let head = format!("GPU {} {}", d.ordinal, step.as_str());
                let prefix = format!("{} {head}  ", form::mark(verdict, st));
                let indent = " ".repeat(head.chars().count() + 4);
                details.push_str(&wrap(&printable(&text), width, &prefix, &indent));
                details.push('\n');
            }
        }
        if !details.is_empty() {
            out.push('\n');
            out.push_str(&details);
        }
    }
    out.push_str(&peer_section(v, &probe, st, width));
    if let (Some(text), Some(n)) = (nccl_text(&probe), &v.nccl) {
        let mark = format!("{} ", form::mark(n.verdict, st));
        out.push('\n');
        out.push_str(&wrap(
            &printable(&format!("NCCL all-reduce: {text}")),
            width,
            &mark,
            "  ",
        ));
        out.push('\n');
    }
    out.push_str(&super::devices::findings_block(
        v.findings,
        st,
        v.tally.gpus > 0,
        width,
    ));
    out
}

/// A pair's cell: its GB/s, or what stopped it ("host": no peer access, copies are staged
/// through host memory). An unfinished pair is "stopped": whether the worker hung or crashed
/// there is the findings' to say (GD074, GD059).
pub fn peer_cell(p: &PeerCopy) -> String {
    if !p.finished {
        return "stopped".into();
    }
    match (&p.can_access, &p.enable, &p.copy) {
        (Some(Step::Ok(false)), _, _) => "host".into(),
        (Some(Step::Failed { .. }), _, _) | (_, Some(Step::Failed { .. }), _) => "failed".into(),
        (_, _, Some(Step::Failed { .. })) => "failed".into(),
        (_, _, Some(Step::Ok(c))) if !c.verified => "WRONG".into(),
        (_, _, Some(Step::Ok(c))) => num(c.gbps),
        _ => "skipped".into(),
    }
}

/// The peer step: a line per source GPU listing each destination's GB/s (or what stopped
/// the pair) behind the pair's verdict mark; the line's mark is its worst pair. Wrapped like
/// every other line, so it fits any width.
fn peer_section(v: &SmokeView, probe: &SmokeProbe, st: &Style, width: usize) -> String {
    let Some(run) = probe.run().filter(|r| !r.peers.is_empty()) else {
        return String::new();
    };
    let bytes = run.peers.iter().find_map(|p| match &p.copy {
        Some(Step::Ok(c)) => Some(c.bytes),
        _ => None,
    });
    let mut out = format!(
        "\n{}\n",
        st.bold(&format!(
            "Peer copies{}, GB/s (host: no peer access, staged through host memory)",
            bytes.map_or(String::new(), |b| format!(" of {}", size(b)))
        ))
    );
    out.push_str(&peer_matrix(v, &run.peers, st, width));
    out
}

/// The steps any tested GPU ran, in the order a GPU runs them: the grid's columns.
fn steps_of(table: &[(&SmokeDevice, &SmokeGpuVerdict, Option<&Link>)]) -> Vec<SmokeStep> {
    let mut steps: Vec<SmokeStep> = Vec::new();
    for (d, _, link) in table {
        for (step, _) in device_rows(d, *link) {
            if !steps.contains(&step) {
                steps.push(step);
            }
        }
    }
    steps
}

/// Every tested GPU's steps as a grid of marks: a row per GPU, a column per step, the GPU's
/// model and bus id when the line has room for them (an 8-GPU node fits 80 columns).
fn step_grid(
    table: &[(&SmokeDevice, &SmokeGpuVerdict, Option<&Link>)],
    st: &Style,
    width: usize,
) -> String {
    use super::width::pad;
    let steps = steps_of(table);
    let name = |d: &SmokeDevice| {
        d.info.as_ref().map_or(String::new(), |i| {
            printable(i.name.strip_prefix("NVIDIA ").unwrap_or(&i.name)).into_owned()
        })
    };
    let bus = |d: &SmokeDevice| {
        d.info
            .as_ref()
            .and_then(|i| i.pci_bus_id.as_deref())
            .map_or(String::new(), crate::facts::pci::sysfs_address)
    };
    let widest = |f: &dyn Fn(&SmokeDevice) -> String, title: &str| {
        table
            .iter()
            .map(|(d, _, _)| f(d).chars().count())
            .chain([title.len()])
            .max()
            .unwrap_or(0)
    };
    let ord_w = widest(&|d: &SmokeDevice| d.ordinal.to_string(), "GPU") + 2;
    let name_w = widest(&name, "model");
    let bus_w = widest(&bus, "bus");
    let steps_w: usize = steps.iter().map(|s| s.as_str().len() + 2).sum();
    let with_name = ord_w + name_w + 2 + bus_w + 2 + steps_w <= width;
    let with_bus = ord_w + bus_w + 2 + steps_w <= width;
    let mut out = String::new();
    let mut head = pad("  GPU", ord_w + 2);
    if with_name {
        head.push_str(&pad("model", name_w + 2));
    }
    if with_name || with_bus {
        head.push_str(&pad("bus", bus_w + 2));
    }
    for s in &steps {
        head.push_str(&pad(s.as_str(), s.as_str().len() + 2));
    }
    out.push_str(&st.dim(head.trim_end()));
    out.push('\n');
    for (d, gv, _) in table {
        let mut row = format!("{} ", form::mark(gv.overall, st));
        row.push_str(&pad(&d.ordinal.to_string(), ord_w));
        if with_name {
            row.push_str(&pad(&name(d), name_w + 2));
        }
        if with_name || with_bus {
            row.push_str(&pad(&bus(d), bus_w + 2));
        }
        let ran: Vec<SmokeStep> = device_rows(d, None).into_iter().map(|r| r.0).collect();
        for s in &steps {
            let cell = if ran.contains(s) {
                form::mark(step_verdict(gv, *s), st)
            } else {
                st.dim("–")
            };
            row.push_str(&pad(&cell, s.as_str().len() + 2));
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// The peer copies as a GPU × GPU matrix (GB/s, or why a pair did not copy), a mark after a
/// cell that is not a pass; split into column blocks when a block would pass the width, so a
/// cell is never broken (a 72-GPU rack at 80 columns reads block by block).
fn peer_matrix(v: &SmokeView, peers: &[PeerCopy], st: &Style, width: usize) -> String {
    let mut gpus: Vec<u32> = peers.iter().flat_map(|p| [p.from, p.to]).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let cell = |from: u32, to: u32| -> String {
        if from == to {
            return "X".into();
        }
        match peers.iter().find(|p| p.from == from && p.to == to) {
            None => "–".into(),
            Some(p) => {
                let text = printable(&peer_cell(p)).into_owned();
                match peer_verdict(v, p) {
                    Verdict::Error | Verdict::Warning | Verdict::Info => {
                        format!("{text}{}", form::mark(peer_verdict(v, p), st))
                    }
                    _ => text,
                }
            }
        }
    };
    let cells: Vec<Vec<String>> = gpus
        .iter()
        .map(|&f| gpus.iter().map(|&t| cell(f, t)).collect())
        .collect();
    matrix_blocks(&gpus, &cells, st, width)
}

/// A square matrix of `cells` (rows and columns are `gpus`), in column blocks that fit `width`.
fn matrix_blocks(gpus: &[u32], cells: &[Vec<String>], st: &Style, width: usize) -> String {
    use super::width::pad;
    let cell_w = cells
        .iter()
        .flatten()
        .map(|c| super::width::display_width(c))
        .chain(gpus.iter().map(|g| g.to_string().len()))
        .max()
        .unwrap_or(1)
        + 2;
    let label_w = gpus
        .iter()
        .map(|g| format!("GPU{g}").len())
        .max()
        .unwrap_or(4)
        + 2;
    let per_block = ((width.saturating_sub(label_w)) / cell_w).max(1);
    let mut out = String::new();
    for (block, columns) in (0..gpus.len())
        .collect::<Vec<_>>()
        .chunks(per_block)
        .enumerate()
    {
        if block > 0 {
            out.push('\n');
        }
        let mut head = " ".repeat(label_w);
        for &c in columns {
            head.push_str(&pad(&format!("→{}", gpus[c]), cell_w));
        }
        out.push_str(&st.dim(head.trim_end()));
        out.push('\n');
        for (r, from) in gpus.iter().enumerate() {
            let mut row = pad(&format!("GPU{from}"), label_w);
            for &c in columns {
                row.push_str(&pad(&cells[r][c], cell_w));
            }
            out.push_str(row.trim_end());
            out.push('\n');
        }
    }
    out
}

/// The verdict on one step of one GPU (not judged when it did not run).
fn step_verdict(gv: &SmokeGpuVerdict, step: SmokeStep) -> Verdict {
    gv.steps
        .iter()
        .find(|s| s.step == step)
        .map_or(Verdict::NotJudged, |s| s.verdict)
}

/// Each tested device with its verdict and host link.
fn device_table<'v>(
    v: &'v SmokeView,
    probe: &'v SmokeProbe,
) -> Vec<(&'v SmokeDevice, &'v SmokeGpuVerdict, Option<&'v Link>)> {
    let Some(run) = probe.run() else {
        return Vec::new();
    };
    run.devices
        .iter()
        .filter_map(|d| {
            let gv = v.gpus.iter().find(|g| g.ordinal == d.ordinal)?;
            let link = v
                .links
                .iter()
                .find(|l| l.ordinal == d.ordinal)
                .and_then(|l| l.link.as_ref());
            Some((d, gv, link))
        })
        .collect()
}

pub fn render_markdown(v: &SmokeView) -> String {
    let mut out = String::from("## gpudoctor smoke\n\n");
    let Some(probe) = probe_of(v) else {
        out.push_str("The smoke test was not run.\n");
        return out;
    };
    out.push_str(&format!(
        "**{} {}**\n\n",
        form::symbol(v.verdict),
        super::markdown::cell(&status_text(&probe, &v.gpus, &v.peers))
    ));
    let rows = device_table(v, &probe);
    if !rows.is_empty() {
        out.push_str("| | GPU | Step | Result |\n|---|---|---|---|\n");
        for (d, gv, link) in rows {
            for (step, text) in device_rows(d, link) {
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    form::symbol(step_verdict(gv, step)),
                    super::markdown::cell(&device_title(d)),
                    step.as_str(),
                    super::markdown::cell(&text)
                ));
            }
        }
        out.push('\n');
    }
    if let Some(run) = probe.run().filter(|r| !r.peers.is_empty()) {
        out.push_str("| | Peer copy | Result |\n|---|---|---|\n");
        for p in &run.peers {
            out.push_str(&format!(
                "| {} | GPU {} → {} | {} |\n",
                form::symbol(peer_verdict(v, p)),
                p.from,
                p.to,
                super::markdown::cell(&peer_text(p))
            ));
        }
        out.push('\n');
    }
    if let (Some(text), Some(n)) = (nccl_text(&probe), &v.nccl) {
        out.push_str(&format!(
            "**{} NCCL all-reduce:** {}\n\n",
            form::symbol(n.verdict),
            super::markdown::cell(&text)
        ));
    }
    out.push_str(&super::markdown::findings_section(v.findings));
    out
}

fn step_failure<T>(s: &Option<Step<T>>) -> Option<String> {
    match s {
        Some(Step::Failed { error, .. }) => Some(error.to_string()),
        _ => None,
    }
}

/// A pair's verdict, from the view's findings.
fn peer_verdict(v: &SmokeView, p: &PeerCopy) -> Verdict {
    v.peers
        .iter()
        .find(|x| x.from == p.from && x.to == p.to)
        .map_or(Verdict::NotJudged, |x| x.verdict)
}

/// A pair's result in words, for the markdown and HTML tables.
fn peer_text(p: &PeerCopy) -> String {
    match (&p.copy, peer_cell(p).as_str()) {
        (Some(Step::Ok(c)), _) => format!(
            "{} at {} GB/s, {}",
            size(c.bytes),
            num(c.gbps),
            if c.verified {
                "verified".to_string()
            } else {
                format!("WRONG: {} words differ", c.mismatches)
            }
        ),
        (_, "host") => "no peer access: staged through host memory".into(),
        (_, "stopped") => format!(
            "did not finish: stopped in {}",
            p.running.as_deref().unwrap_or("the peer step")
        ),
        (Some(Step::Skipped { reason }), _) => format!("skipped: {reason}"),
        _ => {
            let failed = |s: Option<String>| s.map(|e| format!("failed: {e}"));
            failed(step_failure(&p.can_access))
                .or_else(|| failed(step_failure(&p.enable)))
                .or_else(|| failed(step_failure(&p.copy)))
                .unwrap_or_else(|| peer_cell(p))
        }
    }
}

/// `gpudoctor smoke --format html`: the test's verdict, each GPU's steps and copy figures
/// drawn against its host link, and the findings.
pub fn render_html(v: &SmokeView) -> String {
    let mut body = String::from("<h1>gpudoctor smoke</h1>\n");
    body.push_str(&html_body(v));
    body.push_str(&super::html::findings(v.findings));
    super::html::page("gpudoctor smoke", &body)
}

/// The smoke test's part of a page (shared with `check`'s): marks come from the findings'
/// verdicts on the test, each GPU and each step.
pub fn html_body(v: &SmokeView) -> String {
    use super::html::{esc, mark_cell, verdict_mark};
    use std::fmt::Write as _;
    let mut out = String::from("<h2 id=\"smoke\">Smoke test</h2>\n");
    let Some(probe) = probe_of(v) else {
        out.push_str("<p>The smoke test was not run.</p>\n");
        return out;
    };
    let (m, class) = verdict_mark(v.verdict);
    let _ = writeln!(
        out,
        "<p><span class=\"m {class}\">{m}</span> {}{}</p>",
        if v.tally.gpus == 0 {
            "nothing tested — "
        } else {
            ""
        },
        esc(&status_text(&probe, &v.gpus, &v.peers))
    );
    let rows = device_table(v, &probe);
    if rows.is_empty() {
        return out;
    }
    // A row per GPU, a column per step: the step's mark, its figures on hover; what failed
    // or warned is written out below.
    let steps = steps_of(&rows);
    out.push_str("<table class=\"grid\"><thead><tr><th></th><th>GPU</th>");
    for s in &steps {
        let _ = write!(out, "<th>{}</th>", s.as_str());
    }
    out.push_str("</tr></thead><tbody>\n");
    let mut failed = String::new();
    for (d, gv, link) in &rows {
        let cells = device_rows(d, *link);
        let _ = write!(
            out,
            "<tr class=\"row\">{}<td>{}</td>",
            mark_cell(gv.overall),
            esc(&device_title(d))
        );
        for s in &steps {
            match cells.iter().find(|(step, _)| step == s) {
                Some((_, text)) => {
                    let verdict = step_verdict(gv, *s);
                    let (m, class) = verdict_mark(verdict);
                    let _ = write!(
                        out,
                        "<td class=\"mc {class}\" title=\"{}\">{m}</td>",
                        esc(text)
                    );
                    if matches!(verdict, Verdict::Error | Verdict::Warning) {
                        let _ = writeln!(
                            failed,
                            "<tr class=\"row\">{}<td>GPU {}</td><td>{}</td><td>{}</td></tr>",
                            mark_cell(verdict),
                            d.ordinal,
                            s.as_str(),
                            esc(text)
                        );
                    }
                }
                None => out.push_str("<td class=\"mc nj\">–</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    if !failed.is_empty() {
        let _ = write!(
            out,
            "<table><thead><tr><th></th><th>GPU</th><th>step</th><th>result</th></tr></thead><tbody>\n{failed}</tbody></table>\n"
        );
    }
    // The copy figures against what the link can carry (its theoretical rate per direction).
    let figures: Vec<_> = rows
        .iter()
        .filter_map(|(d, gv, link)| match &d.transfer {
            Some(Step::Ok(t)) => Some((d, gv, t, *link)),
            _ => None,
        })
        .collect();
    if !figures.is_empty() {
        out.push_str("<h3>Host ↔ GPU copies</h3>\n<table><thead><tr><th></th><th>GPU</th><th>copy</th><th>GB/s</th><th>of the link</th></tr></thead><tbody>\n");
        for (d, gv, t, link) in figures {
            for (name, gbps, over_link) in [
                ("pinned host → GPU", t.pinned_h2d_gbps, true),
                ("pinned GPU → host", t.pinned_d2h_gbps, true),
                ("pageable host → GPU", t.pageable_h2d_gbps, true),
                ("pageable GPU → host", t.pageable_d2h_gbps, true),
                (
                    "GPU memory → GPU memory (read + written)",
                    t.device_gbps,
                    false,
                ),
            ] {
                let Some(x) = gbps else { continue };
                let bar = match link {
                    _ if !over_link => "<span class=\"dim\">not over the link</span>".into(),
                    Some(l) if l.gbps > 0.0 => {
                        let share = (x / l.gbps).clamp(0.0, 1.0);
                        format!(
                            "<span class=\"bar\" role=\"img\" aria-label=\"{:.0} % of {}\"><span style=\"width:{:.1}%\"></span></span> {:.0} % of {} (PCIe gen {} x{})",
                            share * 100.0,
                            num(l.gbps),
                            share * 100.0,
                            share * 100.0,
                            num(l.gbps),
                            l.generation,
                            l.width
                        )
                    }
                    _ => "<span class=\"dim\">link unknown</span>".into(),
                };
                let _ = writeln!(
                    out,
                    "<tr class=\"row\">{}<td>{}</td><td>{name}</td><td>{}</td><td>{bar}</td></tr>",
                    mark_cell(step_verdict(gv, SmokeStep::Transfer)),
                    esc(&device_title(d)),
                    num(x)
                );
            }
        }
        out.push_str("</tbody></table>\n");
    }
    if let Some(run) = probe.run().filter(|r| !r.peers.is_empty()) {
        out.push_str("<h3>Peer copies between GPUs</h3>\n<table><thead><tr><th></th><th>pair</th><th>result</th></tr></thead><tbody>\n");
        for p in &run.peers {
            let _ = writeln!(
                out,
                "<tr class=\"row\">{}<td>GPU {} → {}</td><td>{}</td></tr>",
                mark_cell(peer_verdict(v, p)),
                p.from,
                p.to,
                esc(&peer_text(p))
            );
        }
        out.push_str("</tbody></table>\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_72_gpu_peer_matrix_is_cut_into_blocks_never_through_a_cell() {
        let gpus: Vec<u32> = (0..72).collect();
        let cells: Vec<Vec<String>> = gpus
            .iter()
            .map(|&f| {
                gpus.iter()
                    .map(|&t| {
                        if f == t {
                            "X".into()
                        } else {
                            format!("{}.5", 30 + (f + t) % 9)
                        }
                    })
                    .collect()
            })
            .collect();
        let text = matrix_blocks(&gpus, &cells, &Style::plain(), 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        // Every cell of GPU 71's rows is whole: 71 values and its X, in 72 / 8 blocks.
        let row71: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("GPU71 "))
            .flat_map(|l| l.split_whitespace().skip(1))
            .collect();
        assert_eq!(row71.len(), 72, "{text}");
        assert_eq!(row71[71], "X");
        assert!(row71[..71].iter().all(|c| c.ends_with(".5")), "{row71:?}");
    }
}
