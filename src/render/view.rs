//! The report's sections as plain lines (label, value, source, mark), built once
//! from the Snapshot and findings so the human and Markdown renderers cannot drift.

use super::printable;
use crate::envvars::Category;
use crate::facts::device_nodes::DeviceNode;
use crate::facts::kernel_module::{CONFLICTING_DRIVERS, PASSTHROUGH_DRIVERS};
use crate::facts::nvml::{NvmlProbe, NvmlResult};
use crate::facts::pci::PciRole;
use crate::facts::smoke::SmokeProbe;
use crate::report::Report;
use crate::snapshot::{ProbeStatus, Snapshot};
use crate::subject::Subject;
use crate::verdict::Verdicts;

/// A line's mark is the findings' verdict on its subjects (`crate::verdict`).
pub use crate::verdict::Verdict as Mark;

#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
    pub value: String,
    pub source: String,
    pub mark: Mark,
    /// Shown by the default view although no warning or error is about it: what a probe
    /// could not see, or what a live `import torch` said.
    pub notable: bool,
}

#[derive(Debug, Clone)]
pub struct Section {
    pub title: &'static str,
    pub lines: Vec<Line>,
}

impl Section {
    /// The title in a one-line-per-section table ("CUDA toolkits and libraries" → "CUDA").
    pub fn short_title(&self) -> &'static str {
        match self.title {
            "GPUs (NVML)" => "GPUs",
            "CUDA toolkits and libraries" => "Toolkits",
            "Python and PyTorch" => "Python",
            t => t,
        }
    }
}

struct Builder<'a> {
    verdicts: &'a Verdicts,
    lines: Vec<Line>,
}

impl Builder<'_> {
    /// Adds a line about `subjects`, marked with the findings' verdict on them.
    fn line(
        &mut self,
        subjects: &[Subject],
        label: impl Into<String>,
        value: impl Into<String>,
        source: impl Into<String>,
    ) {
        let mark = self.verdicts.of_all(subjects);
        self.push(mark, label, value, source);
    }

    /// A line about a fact that may be absent (a module, a node, a driver binding): absent
    /// and cited by no finding, it is not judged.
    fn fact_line(
        &mut self,
        subjects: &[Subject],
        present: bool,
        label: impl Into<String>,
        value: impl Into<String>,
        source: impl Into<String>,
    ) {
        let mark = self.verdicts.of_fact(subjects, present);
        self.push(mark, label, value, source);
    }

    fn push(
        &mut self,
        mark: Mark,
        label: impl Into<String>,
        value: impl Into<String>,
        source: impl Into<String>,
    ) {
        self.lines.push(Line {
            label: printable(&label.into()).into_owned(),
            value: printable(&value.into()).into_owned(),
            source: printable(&source.into()).into_owned(),
            mark,
            notable: false,
        });
    }

    /// Marks the lines from `from` on as notable (`Line::notable`).
    fn notable_from(&mut self, from: usize) {
        for l in &mut self.lines[from..] {
            l.notable = true;
        }
    }

    fn take(&mut self, title: &'static str) -> Option<Section> {
        let lines = std::mem::take(&mut self.lines);
        (!lines.is_empty()).then_some(Section { title, lines })
    }
}

pub fn sections(report: &Report, verbose: bool) -> Vec<Section> {
    let verdicts = Verdicts::new(&report.findings, &report.checks);
    let snap = &report.snapshot;
    let mut b = Builder {
        verdicts: &verdicts,
        lines: Vec::new(),
    };
    let mut out = Vec::new();
    platform_lines(&mut b, snap, verbose);
    out.extend(b.take("Platform"));
    driver_lines(&mut b, snap, verbose);
    kernel_log_line(&mut b, snap, verbose);
    out.extend(b.take("Driver"));
    device_lines(&mut b, snap, verbose);
    out.extend(b.take("Devices"));
    if let Some(n) = &snap.nvml {
        nvml_lines(&mut b, n, verbose);
    }
    out.extend(b.take("GPUs (NVML)"));
    if let Some(p) = &snap.smoke {
        smoke_lines(&mut b, snap, p, verbose);
    }
    out.extend(b.take("Smoke test"));
    toolkit_lines(&mut b, snap, verbose);
    out.extend(b.take("CUDA toolkits and libraries"));
    python_lines(&mut b, snap, verbose);
    let import = b.lines.len();
    python_import_lines(&mut b, snap, verbose);
    b.notable_from(import);
    out.extend(b.take("Python and PyTorch"));
    environment_lines(&mut b, snap, verbose);
    out.extend(b.take(if snap.image.is_some() {
        "Environment (image)"
    } else {
        "Environment"
    }));
    if let Some(p) = &snap.preflight {
        b.line(
            &[],
            "budget",
            format!(
                "{:.1} s of {:.0} s (probes {:.2} s each, smoke test {:.2} s)",
                p.elapsed_s, p.budget_s, p.probes_s, p.smoke_s
            ),
            "--preflight",
        );
    }
    out.extend(b.take("Preflight"));
    probe_lines(&mut b, snap, verbose);
    b.notable_from(0);
    out.extend(b.take("Probes"));
    out
}

fn platform_lines(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    if let Some(img) = &snap.image {
        b.line(
            &[Subject::Image],
            "Image",
            image_summary(img),
            img.path.clone(),
        );
    }
    if let Some(p) = &snap.platform {
        let os = match p.os.get() {
            Some(os) => os.pretty_name.clone(),
            None => missing_text(&p.os),
        };
        let label = if snap.image.is_some() {
            "OS (image)"
        } else {
            "OS"
        };
        b.line(&[Subject::Os], label, os, p.os.source.clone());
        let kernel = match (p.kernel_release.get(), p.arch.get()) {
            (Some(r), Some(a)) => format!("{r} ({a})"),
            (Some(r), None) => r.clone(),
            (None, Some(a)) => format!("unknown release ({a})"),
            (None, None) => missing_text(&p.kernel_release),
        };
        b.line(
            &[Subject::Kernel],
            "Kernel",
            kernel,
            p.kernel_release.source.clone(),
        );
        match &p.container.kind {
            Some(kind) => b.line(
                &[Subject::Container],
                "Container",
                format!("{kind}{}", given_summary(p.container.given.as_deref())),
                hint_sources(&p.container.hints),
            ),
            None if verbose => b.line(
                &[Subject::Container],
                "Container",
                "none detected",
                "/.dockerenv, /run/.containerenv, /proc/1/cgroup, env",
            ),
            None => {}
        }
        if p.wsl.detected {
            b.line(
                &[Subject::Wsl],
                "WSL",
                format!("WSL{}", p.wsl.version.unwrap_or(2)),
                hint_sources(&p.wsl.hints),
            );
        }
    }
    if let Some(id) = &snap.identity {
        let who = match &id.user_name {
            Some(n) => format!("{n} (uid {}", id.uid),
            None => format!("uid {} (no account name", id.uid),
        };
        let value = if verbose {
            format!("{who}, groups {:?})", id.groups)
        } else {
            format!("{who})")
        };
        b.line(&[Subject::Identity], "User", value, id.source.clone());
    }
}

/// `example/cuda:12.8 (docker archive, linux/amd64, 5 layers, 412 MiB)`.
fn image_summary(img: &crate::image::ImageInfo) -> String {
    let name = img.reference.clone().unwrap_or_else(|| img.path.clone());
    let format = match img.format {
        crate::image::ImageFormat::OciLayout => "OCI layout",
        crate::image::ImageFormat::OciArchive => "OCI archive",
        crate::image::ImageFormat::DockerArchive => "docker archive",
    };
    let platform = match &img.variant {
        Some(v) => format!("{}/{}/{v}", img.os, img.architecture),
        None => format!("{}/{}", img.os, img.architecture),
    };
    format!(
        "{name} ({format}, {platform}, {} layer{}, {} MiB)",
        img.layers.len(),
        if img.layers.len() == 1 { "" } else { "s" },
        img.unpacked_bytes >> 20
    )
}

/// What the runtime mounted from the host, after the container's kind.
fn given_summary(given: Option<&crate::facts::container::ContainerView>) -> String {
    use crate::facts::container::MountKind;
    let Some(mounts) = given.and_then(|g| g.nvidia_mounts.get()) else {
        return String::new();
    };
    let libs = mounts
        .iter()
        .filter(|m| m.kind == MountKind::DriverLibrary)
        .count();
    match libs {
        0 => ", no NVIDIA driver library mounted from the host".into(),
        1 => ", 1 NVIDIA driver library mounted from the host".into(),
        n => format!(", {n} NVIDIA driver libraries mounted from the host"),
    }
}

fn driver_lines(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    let Some(km) = &snap.kernel_module else {
        return;
    };
    let nvidia = match (km.nvidia_loaded(), km.version_file.get()) {
        (Some(true), Some(v)) => {
            let mut s = format!("loaded, driver {} ({} kernel module)", v.version, v.flavor);
            if v.l4t {
                s.push_str(", Jetson L4T release");
            }
            s
        }
        (Some(true), None) => format!(
            "loaded{}",
            km.sys_version
                .get()
                .map(|v| format!(", driver {v}"))
                .unwrap_or_default()
        ),
        (Some(false), _) => "not loaded".to_string(),
        (None, _) => missing_text(&km.modules),
    };
    let src = if km.version_file.get().is_some() {
        km.version_file.source.clone()
    } else {
        km.modules.source.clone()
    };
    b.fact_line(
        &[Subject::module("nvidia"), Subject::DriverVersion],
        km.nvidia_loaded() == Some(true),
        "nvidia",
        nvidia,
        src,
    );
    if verbose {
        if let Some(c) = km.version_file.get().and_then(|v| v.compiler.clone()) {
            b.line(&[], "built with", c, km.version_file.source.clone());
        }
    }
    let Some(mods) = km.modules.get() else {
        return;
    };
    let loaded = |n: &str| mods.iter().any(|m| m.name == n);
    if km.nvidia_loaded() == Some(true) {
        b.fact_line(
            &[Subject::module("nvidia_uvm")],
            loaded("nvidia_uvm"),
            "nvidia_uvm",
            if loaded("nvidia_uvm") {
                "loaded"
            } else {
                "not loaded"
            },
            km.modules.source.clone(),
        );
    }
    for m in mods
        .iter()
        .filter(|m| !["nvidia", "nvidia_uvm"].contains(&m.name.as_str()))
    {
        let interesting = CONFLICTING_DRIVERS
            .iter()
            .chain(PASSTHROUGH_DRIVERS)
            .any(|d| *d == m.name);
        if verbose || interesting {
            b.line(
                &[Subject::module(&m.name)],
                m.name.clone(),
                "loaded",
                km.modules.source.clone(),
            );
        }
    }
}

/// What the kernel log held, or why it was not read (the kernel_log rule judges it).
fn kernel_log_line(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    let Some(log) = &snap.kernel_log else {
        return;
    };
    if !verbose && !snap.nvidia_hardware_seen() {
        return;
    }
    let value = match (log.scan.get(), log.scan.missing_info()) {
        (Some(scan), _) => {
            let events: u64 = scan.groups.iter().map(|g| g.count).sum::<u64>() + scan.events_not_grouped;
            let what = match events {
                0 => "no Xid, driver or PCIe AER line".to_string(),
                1 => "1 Xid, driver or PCIe AER line".to_string(),
                n => format!("{n} Xid, driver or PCIe AER lines"),
            };
            format!("{what} ({}, {} records{})", scan.span, scan.records, if scan.truncated { ", cut short" } else { "" })
        }
        (None, Some(m)) if m.reason == crate::fact::MissingReason::PermissionDenied => {
            "not readable by this user: Xid and AER errors were not looked for (run with sudo to include them)".to_string()
        }
        (None, _) => "none found: Xid and AER errors were not looked for".to_string(),
    };
    let read = log.scan.get().is_some();
    let at = b.lines.len();
    b.fact_line(
        &[Subject::KernelLog],
        read,
        "kernel log",
        value,
        log.scan.source.clone(),
    );
    if !read {
        b.notable_from(at);
    }
}

fn device_lines(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    let no_gpu = !snap.nvidia_hardware_seen() && !verbose;
    if no_gpu && (snap.pci.is_some() || snap.device_nodes.is_some()) {
        b.line(
            &[Subject::Pci, Subject::GpuNodes],
            "GPUs",
            "no NVIDIA GPU found",
            "/sys/bus/pci/devices, /dev",
        );
    }
    if let Some(pci) = snap.pci.as_ref().filter(|_| !no_gpu) {
        match pci.devices.get() {
            Some(devs) => {
                let first_line = b.lines.len();
                let models = snap.kernel_module.as_ref().and_then(|k| k.gpus.get());
                for d in devs.iter().filter(|d| verbose || d.role == PciRole::Gpu) {
                    let model = models
                        .and_then(|m| m.iter().find(|g| g.bus_id.eq_ignore_ascii_case(&d.address)))
                        .and_then(|g| g.model.clone());
                    // The driver's name for the GPU, else pci.ids' (a GPU with no driver bound).
                    let listed = crate::compat::pci_ids::gpu_from_pci_id_text(&d.device_id)
                        .map(|g| g.display_name());
                    let name = match (model, listed) {
                        (Some(m), _) => format!("{m} ({})", d.device_id),
                        (None, Some(n)) if d.role == PciRole::Gpu => {
                            format!("{n} ({})", d.device_id)
                        }
                        (None, _) => format!("NVIDIA {} [{}]", d.device_id, role_name(d.role)),
                    };
                    let driver = d.driver.clone().unwrap_or_else(|| "no driver".into());
                    b.fact_line(
                        &[Subject::pci(&d.address)],
                        d.driver.as_deref() == Some("nvidia"),
                        d.address.clone(),
                        format!("{name} → {driver}"),
                        d.source.clone(),
                    );
                }
                if !verbose {
                    collapse_identical_runs(&mut b.lines, first_line);
                }
            }
            None => b.line(
                &[Subject::Pci],
                "PCI",
                missing_text(&pci.devices),
                pci.devices.source.clone(),
            ),
        }
    }
    if let Some(nodes) = snap.device_nodes.as_ref().filter(|_| !no_gpu) {
        node_lines(b, &nodes.nodes, verbose);
    }
}

fn toolkit_lines(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    if let Some(tk) = &snap.toolkits {
        for t in &tk.installs {
            let routes: Vec<&str> = t.found.iter().map(|f| f.route.describe()).collect();
            b.line(
                &[Subject::toolkit(&t.root)],
                t.cuda.map_or("CUDA ?".to_string(), |v| format!("CUDA {v}")),
                format!(
                    "{}{} (via {})",
                    t.root,
                    if t.nvcc.is_some() { "" } else { ", no nvcc" },
                    routes.join(", ")
                ),
                t.version.source.clone(),
            );
        }
        if tk.installs.is_empty() {
            b.line(
                &[Subject::Toolkits],
                "toolkit",
                "none found",
                "gpudoctor toolkit",
            );
        }
        if let Some(n) = &tk.nvcc_on_path {
            b.line(
                &[Subject::NvccOnPath],
                "nvcc",
                format!("{} → {}", n.path, n.resolved),
                "env PATH",
            );
        }
        if let Some(home) = &tk.cuda_home.path {
            b.line(
                &[Subject::CudaHome],
                "CUDA_HOME (builds)",
                format!("{home} (via {})", tk.cuda_home.via),
                "torch.utils.cpp_extension's rule",
            );
        }
    }
    if let Some(libs) = &snap.libraries {
        for lib in &libs.libraries {
            // Sub-libraries (libcudnn_ops …) and dev names add lines, not information.
            if !verbose && (lib.soname.starts_with("libcudnn_") || !lib.soname.contains(".so.")) {
                continue;
            }
            let Some(c) = lib.loaded() else { continue };
            b.line(
                &[Subject::library(&lib.soname)],
                lib.soname.clone(),
                format!(
                    "{} ({})",
                    c.version
                        .clone()
                        .unwrap_or_else(|| "version unknown".into()),
                    c.target.as_deref().unwrap_or(&c.path)
                ),
                c.via.describe(),
            );
        }
    }
}

fn python_lines(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    let Some(envs) = &snap.python else {
        return;
    };
    for e in envs.iter().filter(|e| e.torch.is_some() || verbose) {
        let value = match &e.torch {
            Some(t) => {
                let v = t
                    .version
                    .get()
                    .cloned()
                    .unwrap_or_else(|| t.dist_version.clone());
                let mut parts = vec![format!("torch {v}")];
                parts.push(match t.kind() {
                    "cuda" => format!("CUDA {}", t.cuda.as_deref().unwrap_or("?")),
                    other => other.to_string(),
                });
                if let Some(list) = t
                    .arches
                    .as_ref()
                    .and_then(|a| a.get())
                    .filter(|s| !s.arch_list.is_empty())
                {
                    parts.push(list.arch_list.join(" "));
                }
                for c in &e.companions {
                    parts.push(format!("{} {}", c.name, c.version));
                }
                parts.join(" · ")
            }
            None => "no torch".to_string(),
        };
        let mut subjects = vec![Subject::torch(&e.site)];
        if e.primary {
            subjects.push(Subject::PythonImport);
        }
        b.line(
            &subjects,
            if e.primary {
                "python".to_string()
            } else {
                e.found_by.clone()
            },
            value,
            e.site.clone(),
        );
    }
}

/// What `import torch` said (--python-import): availability and devices, torch's own
/// warnings, the CUDA libraries the process mapped, or why it failed.
fn python_import_lines(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    use crate::facts::pytorch_live::LiveResult;
    let Some(live) = &snap.python_live else {
        return;
    };
    let subject = [Subject::PythonImport];
    let python = live.python.clone();
    let a = match &live.result {
        LiveResult::Ok { answer } => answer,
        LiveResult::NotProbed { reason } => {
            b.line(
                &subject,
                "import torch",
                format!("not run: {reason}"),
                python,
            );
            return;
        }
        LiveResult::TimedOut { seconds } => {
            b.line(
                &subject,
                "import torch",
                format!("did not finish within {seconds:.1} s"),
                python,
            );
            return;
        }
        LiveResult::Failed { detail } => {
            b.line(
                &subject,
                "import torch",
                format!("failed: {detail}"),
                python,
            );
            return;
        }
    };
    let py = a
        .python_version
        .as_deref()
        .map(|v| format!("Python {v}: "))
        .unwrap_or_default();
    // No torch to import is no failure (the rule says nothing about it): the line is context.
    if let Some(e) = a.import_error.as_deref().filter(|_| a.no_torch()) {
        b.line(&[], "import torch", format!("{py}no torch ({e})"), python);
        return;
    }
    let value = match (&a.import_error, &a.torch) {
        (Some(e), _) => format!("{py}failed: {}", e.lines().next().unwrap_or(e)),
        (None, None) => format!("{py}no torch"),
        (None, Some(t)) => {
            let mut parts = vec![format!(
                "{py}torch {t} ({})",
                a.cuda
                    .as_deref()
                    .map_or("no CUDA build".to_string(), |c| format!("CUDA {c}"))
            )];
            match a.is_available {
                Some(true) => parts.push(format!(
                    "cuda.is_available() True, {} device(s)",
                    a.device_count.map_or("?".to_string(), |n| n.to_string())
                )),
                Some(false) => parts.push("cuda.is_available() False".into()),
                None => {}
            }
            if let Some(c) = a.cudnn {
                parts.push(format!("cuDNN {c}"));
            }
            parts.join(" · ")
        }
    };
    b.line(&subject, "import torch", value, python.clone());
    for w in &a.warnings {
        // The whole warning, its lines joined: torch puts the point (the supported range)
        // on the second line.
        let text: Vec<&str> = w.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        b.line(&[], "torch warned", text.join(" "), python.clone());
    }
    if a.loaded.is_empty() {
        return;
    }
    if verbose {
        for path in &a.loaded {
            b.line(&[], "mapped", path.clone(), "/proc/self/maps of the import");
        }
    } else {
        let names: Vec<&str> = a
            .loaded
            .iter()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .collect();
        b.line(
            &[],
            "CUDA libraries mapped",
            names.join(", "),
            "/proc/self/maps of the import",
        );
    }
}

fn environment_lines(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    let Some(env) = &snap.environment else {
        return;
    };
    let shown: Vec<_> = env
        .variables
        .iter()
        .filter(|v| {
            verbose
                || matches!(
                    v.category,
                    Category::Visibility | Category::Debug | Category::Allocator | Category::Nccl
                )
                || ["CUDA_HOME", "CUDA_PATH", "LD_PRELOAD"].contains(&v.name.as_str())
        })
        .collect();
    for v in &shown {
        b.line(
            &[Subject::env(&v.name)],
            v.name.clone(),
            v.value.clone(),
            "environment",
        );
    }
    if shown.is_empty() {
        b.line(
            &[Subject::Environment],
            "variables",
            "no CUDA-related variable set",
            "environment",
        );
    }
}

fn probe_lines(b: &mut Builder, snap: &Snapshot, verbose: bool) {
    for (name, run) in &snap.probes {
        if run.status == ProbeStatus::TimedOut
            || run.status == ProbeStatus::Failed
            || (verbose && run.status == ProbeStatus::Skipped)
        {
            let value = format!(
                "{}: {}",
                run.status.as_str().replace('_', " "),
                run.detail.clone().unwrap_or_default()
            );
            b.line(
                &[Subject::Probe(name.clone())],
                name.clone(),
                value,
                "probe runner",
            );
        }
    }
}

/// The smoke test's lines: the run, then each GPU's steps. GPUs of one model whose every
/// step passed (or only measured) share one line ("GPU 0–7  8× H100: context, kernels,
/// matmul, memory passed"); a GPU with anything to say keeps a line per step.
fn smoke_lines(b: &mut Builder, snap: &Snapshot, p: &SmokeProbe, verbose: bool) {
    use crate::facts::smoke::{link, nvml_gpu};
    let gpus = b.verdicts.smoke_gpus(snap);
    let peers = b.verdicts.smoke_peers(snap);
    b.line(
        &[Subject::Smoke],
        "smoke test",
        super::smoke::status_text(p, &gpus, &peers),
        p.library.clone(),
    );
    // --nccl: the all-reduce over every GPU, after their lines.
    let nccl_line = |b: &mut Builder| {
        if let (Some(text), Some(req)) = (super::smoke::nccl_text(p), &p.nccl) {
            b.line(&[Subject::SmokeNccl], "NCCL", text, req.library.clone());
        }
    };
    let Some(run) = p.run() else {
        nccl_line(b);
        return;
    };
    struct Tested<'a> {
        ordinal: u32,
        name: Option<&'a str>,
        rows: Vec<(crate::subject::SmokeStep, String, Mark)>,
        quiet: bool,
    }
    let tested: Vec<Tested> = run
        .devices
        .iter()
        .zip(&gpus)
        .map(|(d, v)| {
            let l = snap
                .nvml_system()
                .and_then(|s| nvml_gpu(s, d))
                .and_then(link);
            let rows: Vec<_> = super::smoke::device_rows(d, l.as_ref())
                .into_iter()
                .map(|(step, text)| {
                    let mark = v
                        .steps
                        .iter()
                        .find(|s| s.step == step)
                        .map_or(Mark::NotJudged, |s| s.verdict);
                    (step, text, mark)
                })
                .collect();
            // Nothing to say: passed, with figures no rule weighs at most.
            let quiet = v.overall == Mark::Passed
                && rows.iter().any(|r| r.2 == Mark::Passed)
                && rows
                    .iter()
                    .all(|r| matches!(r.2, Mark::Passed | Mark::NotJudged));
            Tested {
                ordinal: d.ordinal,
                name: d.info.as_ref().map(|i| i.name.as_str()),
                rows,
                quiet,
            }
        })
        .collect();
    // Quiet GPUs of one model with the same steps, each marked alike, share a line.
    fn key(t: &Tested) -> (Option<String>, Vec<(crate::subject::SmokeStep, Mark)>) {
        (
            t.name.map(str::to_string),
            t.rows.iter().map(|r| (r.0, r.2)).collect(),
        )
    }
    let mut shown_together: Vec<Vec<usize>> = Vec::new();
    if !verbose {
        for (i, t) in tested.iter().enumerate().filter(|(_, t)| t.quiet) {
            match shown_together
                .iter_mut()
                .find(|g| key(&tested[g[0]]) == key(t))
            {
                Some(g) => g.push(i),
                None => shown_together.push(vec![i]),
            }
        }
        shown_together.retain(|g| g.len() >= 2);
    }
    for (i, t) in tested.iter().enumerate() {
        match shown_together.iter().find(|g| g.contains(&i)) {
            Some(g) if g[0] == i => {
                let ordinals: Vec<u32> = g.iter().map(|&i| tested[i].ordinal).collect();
                let steps = |mark: Mark| {
                    t.rows
                        .iter()
                        .filter(|r| r.2 == mark)
                        .map(|r| r.0.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let mut value = match t.name {
                    Some(name) => format!("{}× {name}: ", g.len()),
                    None => format!("{} GPUs: ", g.len()),
                };
                value.push_str(&format!("{} passed", steps(Mark::Passed)));
                let measured = steps(Mark::NotJudged);
                if !measured.is_empty() {
                    value.push_str(&format!("; {measured} ran, not judged"));
                }
                b.push(
                    Mark::Passed,
                    format!("GPU {}", super::form::ordinals(&ordinals)),
                    value,
                    "smoke test",
                );
            }
            Some(_) => {}
            None => {
                // A GPU with a failing step: that step in full; without -v its steps that
                // passed share one line (their figures are in -v and `gpudoctor smoke`).
                let passed: Vec<&str> = t
                    .rows
                    .iter()
                    .filter(|r| r.2 == Mark::Passed)
                    .map(|r| r.0.as_str())
                    .collect();
                let fold = !verbose && !t.quiet && passed.len() >= 2;
                if fold {
                    b.push(
                        Mark::Passed,
                        format!("GPU {}", t.ordinal),
                        format!("{} passed", passed.join(", ")),
                        "smoke test",
                    );
                }
                for (step, text, mark) in &t.rows {
                    if fold && *mark == Mark::Passed {
                        continue;
                    }
                    b.push(
                        *mark,
                        format!("GPU {} {}", t.ordinal, step.as_str()),
                        text.clone(),
                        "smoke test",
                    );
                }
            }
        }
    }
    peer_lines(b, snap, run, verbose);
    nccl_line(b);
}

/// The peer step: one line for the pairs with nothing to say (their count and GB/s range),
/// a line for each pair a finding marks (every pair with -v).
fn peer_lines(
    b: &mut Builder,
    snap: &Snapshot,
    run: &crate::facts::smoke::SmokeRun,
    verbose: bool,
) {
    use crate::facts::smoke::Step;
    let verdicts = b.verdicts.smoke_peers(snap);
    let mut quiet: Vec<(Mark, &crate::facts::smoke::PeerCopy)> = Vec::new();
    for (p, v) in run.peers.iter().zip(&verdicts) {
        if verbose || !matches!(v.verdict, Mark::Passed | Mark::NotJudged) {
            b.push(
                v.verdict,
                format!("GPU {} → {} peer", p.from, p.to),
                super::smoke::peer_cell(p),
                "smoke test (peer step)",
            );
        } else {
            quiet.push((v.verdict, p));
        }
    }
    if quiet.is_empty() {
        return;
    }
    let count = |f: &dyn Fn(&crate::facts::smoke::PeerCopy) -> bool| {
        quiet.iter().filter(|(_, p)| f(p)).count()
    };
    let copied = count(&|p| matches!(&p.copy, Some(Step::Ok(c)) if c.verified));
    let staged = count(&|p| matches!(p.can_access, Some(Step::Ok(false))));
    let other = quiet.len() - copied - staged;
    // The GB/s figures are in `gpudoctor smoke`; this line says what was proved.
    let parts: Vec<String> = [
        (copied, "copied and verified"),
        (staged, "without peer access (staged through host memory)"),
        (other, "not copied (see `gpudoctor smoke`)"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let value = format!("{} ordered pair(s): {}", quiet.len(), parts.join("; "));
    let mark = quiet
        .iter()
        .map(|(m, _)| *m)
        .max()
        .unwrap_or(Mark::NotJudged);
    b.push(mark, "GPU pairs", value, "smoke test (peer step)");
}

fn nvml_lines(b: &mut Builder, n: &NvmlProbe, verbose: bool) {
    let summary = match &n.result {
        NvmlResult::Ok { system } => format!(
            "driver {}, CUDA {}, {} GPU(s)",
            system.driver_version.get().map_or("?", String::as_str),
            system.cuda_driver_version.get().map_or("?", String::as_str),
            system.device_count.get().copied().unwrap_or(0)
        ),
        NvmlResult::NotProbed { reason } => format!("not probed ({reason})"),
        NvmlResult::InitFailed { code, .. } if code == "library_not_found" => {
            format!("{} not found on the loader path", n.library)
        }
        NvmlResult::InitFailed { code, message } => format!("{code}: {message}"),
        NvmlResult::TimedOut {
            seconds, stuck_at, ..
        } => format!(
            "did not answer within {seconds:.1} s{}",
            stuck_at
                .as_deref()
                .map(|a| format!(" (hung at {a})"))
                .unwrap_or_default()
        ),
        NvmlResult::Crashed { signal, .. } => format!("crashed with signal {signal}"),
        NvmlResult::WorkerFailed { detail } => detail.clone(),
    };
    b.line(&[Subject::Nvml], "NVML", summary, n.library.clone());
    let Some(sys) = n.system() else { return };
    let first = b.lines.len();
    for g in &sys.devices {
        let value = match &g.handle_error {
            Some(e) => format!("unreachable: {e}"),
            None => {
                let mut parts = vec![g.name.get().cloned().unwrap_or_else(|| "unknown".into())];
                if let Some(cc) = g.compute_capability.get() {
                    parts.push(format!("cc {cc}"));
                }
                if let Some(m) = g.memory.get() {
                    parts.push(format!("{:.0} GiB", m.total as f64 / (1u64 << 30) as f64));
                }
                if let Some(link) = super::form::pcie_link(g) {
                    parts.push(format!("PCIe {link}"));
                }
                if g.mig.enabled.get() == Some(&true) {
                    parts.push(format!("MIG ({} instances)", g.mig.instances.len()));
                }
                parts.join(" · ")
            }
        };
        b.line(
            &[Subject::Gpu(g.index)],
            format!("GPU {}", g.index),
            value,
            g.pci_bus_id
                .get()
                .map(|id| super::form::bus_id(id))
                .unwrap_or_else(|| "NVML".into()),
        );
    }
    if !verbose {
        collapse_identical_runs(&mut b.lines, first);
    }
}

/// Merges runs of three or more identical lines that pass or only carry a note (an 8-GPU
/// node) into one, so a healthy machine's report fits the first screen.
fn collapse_identical_runs(lines: &mut Vec<Line>, from: usize) {
    let to = lines.len();
    collapse_identical_range(lines, from, to);
}

/// `collapse_identical_runs` over the lines `from..to` only.
fn collapse_identical_range(lines: &mut Vec<Line>, from: usize, to: usize) {
    let mut out: Vec<Line> = Vec::new();
    let after = lines.split_off(to);
    let tail = lines.split_off(from);
    let mut i = 0;
    while i < tail.len() {
        let mut j = i + 1;
        while j < tail.len() && tail[j].value == tail[i].value && tail[j].mark == tail[i].mark {
            j += 1;
        }
        // Warnings and errors keep a line each: their fixes name the GPU.
        let quiet = matches!(tail[i].mark, Mark::Passed | Mark::Info | Mark::NotJudged);
        if j - i >= 3 && quiet {
            out.push(Line {
                label: format!("{}…{}", tail[i].label, tail[j - 1].label),
                value: format!("{}× {}", j - i, tail[i].value),
                source: tail[i].source.clone(),
                mark: tail[i].mark,
                notable: tail[i].notable,
            });
        } else {
            out.extend(tail[i..j].iter().cloned());
        }
        i = j;
    }
    lines.extend(out);
    lines.extend(after);
}

fn hint_sources(hints: &[crate::facts::platform::Hint]) -> String {
    hints
        .iter()
        .map(|h| h.source.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn role_name(role: PciRole) -> &'static str {
    match role {
        PciRole::Gpu => "GPU",
        PciRole::Audio => "audio",
        PciRole::Usb => "USB",
        PciRole::SerialBus => "USB-C UCSI",
        PciRole::Bridge => "bridge/NVSwitch",
        PciRole::Other => "other",
    }
}

fn node_summary(n: &DeviceNode) -> String {
    if !n.present {
        return n.error.clone().unwrap_or_else(|| "missing".into());
    }
    let access = match &n.access {
        Some(a) if a.read_write => "read+write",
        Some(_) => "NO read+write",
        None => "access not judged",
    };
    let kind = match n.kind.as_deref() {
        Some("char_device") => String::new(),
        Some(other) => format!(" [{}]", other.replace('_', " ")),
        None => String::new(),
    };
    format!(
        "{} {}, {access}{kind}",
        n.mode.as_deref().unwrap_or("?"),
        n.owner_group()
    )
}

fn node_lines(b: &mut Builder, nodes: &[DeviceNode], verbose: bool) {
    let is_gpu = |n: &DeviceNode| n.is_gpu_node();
    let gpu_nodes: Vec<&DeviceNode> = nodes.iter().filter(|n| is_gpu(n)).collect();
    let uniform = gpu_nodes.len() > 2
        && gpu_nodes
            .windows(2)
            .all(|w| node_summary(w[0]) == node_summary(w[1]));
    let mut gpu_done = false;
    // The GPU nodes' lines, so that runs of alike ones fold into one (1 of 8 unusable).
    let mut gpu_lines: Option<(usize, usize)> = None;
    for n in nodes {
        let optional = n.path.starts_with("/dev/nvidia-caps/")
            || n.path == "/dev/nvidia-modeset"
            || n.path == "/dev/nvidia-uvm-tools";
        if optional && !verbose {
            continue;
        }
        if is_gpu(n) && uniform && !verbose {
            if gpu_done {
                continue;
            }
            gpu_done = true;

            let label = format!(
                "{}…{}",
                gpu_nodes[0].path,
                gpu_nodes[gpu_nodes.len() - 1]
                    .path
                    .trim_start_matches("/dev/")
            );
            let usable = n.present && n.access.as_ref().is_none_or(|a| a.read_write);
            b.fact_line(
                &[Subject::GpuNodes],
                usable,
                label,
                format!("{} nodes, {}", gpu_nodes.len(), node_summary(n)),
                "/dev",
            );
            continue;
        }
        let source = n
            .access
            .as_ref()
            .map(|a| format!("{} ({})", n.path, a.method))
            .unwrap_or_else(|| n.path.clone());
        let usable = n.present && n.access.as_ref().is_none_or(|a| a.read_write);
        let at = b.lines.len();
        b.fact_line(
            &[Subject::node(&n.path)],
            usable,
            n.path.clone(),
            node_summary(n),
            source,
        );
        if is_gpu(n) {
            let (from, _) = gpu_lines.unwrap_or((at, at));
            gpu_lines = Some((from, b.lines.len()));
        }
    }
    if let (Some((from, to)), false) = (gpu_lines, verbose) {
        // Contiguous in /dev order; a line between them (none today) would stop a run.
        collapse_identical_range(&mut b.lines, from, to);
    }
    if gpu_nodes.is_empty() && nodes.iter().any(|n| n.present) {
        b.line(&[Subject::GpuNodes], "/dev/nvidia[0-9]*", "none", "/dev");
    }
}

fn missing_text<T>(fact: &crate::fact::Fact<T>) -> String {
    match fact.missing_info() {
        Some(m) if m.reason == crate::fact::MissingReason::NotFound => {
            format!("unknown ({} not found)", fact.source)
        }
        Some(m) => format!("unknown ({})", m.detail),
        None => String::new(),
    }
}
