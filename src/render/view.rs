//! The report's sections as plain lines (label, value, source, mark), built once
//! from the Snapshot and findings so the human and Markdown renderers cannot drift.

use super::printable;
use crate::envvars::Category;
use crate::findings::{Finding, Severity};
use crate::probes::device_nodes::DeviceNode;
use crate::probes::pci::PciRole;
use crate::report::Report;
use crate::snapshot::ProbeStatus;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// Informational: nothing judges this line.
    Neutral,
    Ok,
    Info,
    Warn,
    Fail,
}

#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
    pub value: String,
    pub source: String,
    pub mark: Mark,
}

#[derive(Debug, Clone)]
pub struct Section {
    pub title: &'static str,
    pub lines: Vec<Line>,
}

struct Builder<'a> {
    findings: &'a [Finding],
    lines: Vec<Line>,
}

impl Builder<'_> {
    /// Adds a line; its mark is the worst finding that cites one of `keys` as evidence.
    fn line(
        &mut self,
        keys: &[String],
        default: Mark,
        label: impl Into<String>,
        value: impl Into<String>,
        source: impl Into<String>,
    ) {
        let worst = self
            .findings
            .iter()
            .filter(|f| {
                f.evidence
                    .iter()
                    .any(|e| e.fact.as_ref().is_some_and(|k| keys.contains(k)))
            })
            .map(|f| f.severity)
            .max();
        let mark = match worst {
            Some(Severity::Error) => Mark::Fail,
            Some(Severity::Warning) => Mark::Warn,
            Some(Severity::Info) => Mark::Info,
            None => default,
        };
        self.lines.push(Line {
            label: printable(&label.into()).into_owned(),
            value: printable(&value.into()).into_owned(),
            source: printable(&source.into()).into_owned(),
            mark,
        });
    }

    fn take(&mut self, title: &'static str) -> Option<Section> {
        let lines = std::mem::take(&mut self.lines);
        (!lines.is_empty()).then_some(Section { title, lines })
    }
}

fn k(s: &str) -> Vec<String> {
    vec![s.to_string()]
}

pub fn sections(report: &Report, verbose: bool) -> Vec<Section> {
    let snap = &report.snapshot;
    let mut b = Builder {
        findings: &report.findings,
        lines: Vec::new(),
    };
    let mut out = Vec::new();

    if let Some(p) = &snap.platform {
        match p.os.get() {
            Some(os) => b.line(
                &k("platform:os"),
                Mark::Neutral,
                "OS",
                os.pretty_name.clone(),
                p.os.source.clone(),
            ),
            None => b.line(
                &k("platform:os"),
                Mark::Neutral,
                "OS",
                missing_text(&p.os),
                p.os.source.clone(),
            ),
        }
        let kernel = match (p.kernel_release.get(), p.arch.get()) {
            (Some(r), Some(a)) => format!("{r} ({a})"),
            (Some(r), None) => r.clone(),
            (None, Some(a)) => format!("unknown release ({a})"),
            (None, None) => missing_text(&p.kernel_release),
        };
        b.line(
            &k("platform:kernel"),
            Mark::Neutral,
            "Kernel",
            kernel,
            p.kernel_release.source.clone(),
        );
        match &p.container.kind {
            Some(kind) => {
                let src = hint_sources(&p.container.hints);
                b.line(
                    &k("platform:container"),
                    Mark::Neutral,
                    "Container",
                    kind.clone(),
                    src,
                )
            }
            None if verbose => b.line(
                &k("platform:container"),
                Mark::Neutral,
                "Container",
                "none detected",
                "/.dockerenv, /run/.containerenv, /proc/1/cgroup, env",
            ),
            None => {}
        }
        if p.wsl.detected {
            let src = hint_sources(&p.wsl.hints);
            b.line(
                &k("platform:wsl"),
                Mark::Neutral,
                "WSL",
                format!("WSL{}", p.wsl.version.unwrap_or(2)),
                src,
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
        b.line(
            &k("identity"),
            Mark::Neutral,
            "User",
            value,
            id.source.clone(),
        );
    }
    out.extend(b.take("Platform"));

    if let Some(km) = &snap.kernel_module {
        let nvidia = match (km.nvidia_loaded(), km.version_file.get()) {
            (Some(true), Some(v)) => {
                let mut s = format!("loaded, driver {} ({} kernel module)", v.version, v.flavor);
                if v.l4t {
                    s.push_str(", Jetson L4T release");
                }
                (Mark::Ok, s)
            }
            (Some(true), None) => (
                Mark::Ok,
                format!(
                    "loaded{}",
                    km.sys_version
                        .get()
                        .map(|v| format!(", driver {v}"))
                        .unwrap_or_default()
                ),
            ),
            (Some(false), _) => (Mark::Neutral, "not loaded".to_string()),
            (None, _) => (Mark::Neutral, missing_text(&km.modules)),
        };
        let src = if km.version_file.get().is_some() {
            km.version_file.source.clone()
        } else {
            km.modules.source.clone()
        };
        b.line(
            &["module:nvidia".into(), "module:version".into()],
            nvidia.0,
            "nvidia",
            nvidia.1,
            src,
        );
        if verbose {
            if let Some(v) = km.version_file.get() {
                if let Some(c) = &v.compiler {
                    b.line(
                        &k("module:compiler"),
                        Mark::Neutral,
                        "built with",
                        c.clone(),
                        km.version_file.source.clone(),
                    );
                }
            }
        }
        if let Some(mods) = km.modules.get() {
            let loaded = |n: &str| mods.iter().any(|m| m.name == n);
            if km.nvidia_loaded() == Some(true) {
                let uvm = if loaded("nvidia_uvm") {
                    (Mark::Ok, "loaded")
                } else {
                    (Mark::Neutral, "not loaded")
                };
                b.line(
                    &k("module:nvidia_uvm"),
                    uvm.0,
                    "nvidia_uvm",
                    uvm.1,
                    km.modules.source.clone(),
                );
            }
            for m in mods
                .iter()
                .filter(|m| !["nvidia", "nvidia_uvm"].contains(&m.name.as_str()))
            {
                let interesting = [
                    "nouveau",
                    "nova_core",
                    "nvidiafb",
                    "rivafb",
                    "rivatv",
                    "vfio_pci",
                ]
                .contains(&m.name.as_str());
                if verbose || interesting {
                    b.line(
                        &k(&format!("module:{}", m.name)),
                        Mark::Neutral,
                        m.name.clone(),
                        "loaded",
                        km.modules.source.clone(),
                    );
                }
            }
        }
    }
    out.extend(b.take("Driver"));

    let no_gpu = !snap.nvidia_hardware_seen() && !verbose;
    if no_gpu && (snap.pci.is_some() || snap.device_nodes.is_some()) {
        b.line(
            &["pci".into(), "nodes".into()],
            Mark::Neutral,
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
                    let name = match model {
                        Some(m) => format!("{m} ({})", d.device_id),
                        None => format!("NVIDIA {} [{}]", d.device_id, role_name(d.role)),
                    };
                    let driver = d.driver.clone().unwrap_or_else(|| "no driver".into());
                    let default = if d.driver.as_deref() == Some("nvidia") {
                        Mark::Ok
                    } else {
                        Mark::Neutral
                    };
                    b.line(
                        &k(&format!("pci:{}", d.address)),
                        default,
                        d.address.clone(),
                        format!("{name} → {driver}"),
                        d.source.clone(),
                    );
                }
                if !verbose {
                    collapse_healthy_runs(&mut b.lines, first_line);
                }
            }
            None => b.line(
                &k("pci"),
                Mark::Neutral,
                "PCI",
                missing_text(&pci.devices),
                pci.devices.source.clone(),
            ),
        }
    }
    if let Some(nodes) = snap.device_nodes.as_ref().filter(|_| !no_gpu) {
        node_lines(&mut b, &nodes.nodes, verbose);
    }
    out.extend(b.take("Devices"));

    if let Some(n) = &snap.nvml {
        nvml_lines(&mut b, n, verbose);
    }
    out.extend(b.take("GPUs (NVML)"));

    if let Some(p) = &snap.smoke {
        smoke_lines(&mut b, snap, p);
    }
    out.extend(b.take("Smoke test"));

    if let Some(tk) = &snap.toolkits {
        for t in &tk.installs {
            let routes: Vec<&str> = t.found.iter().map(|f| f.route.describe()).collect();
            b.line(
                &k(&format!("toolkit:{}", t.root)),
                Mark::Neutral,
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
                &k("toolkit"),
                Mark::Neutral,
                "toolkit",
                "none found",
                "gpudoctor toolkit",
            );
        }
        if let Some(n) = &tk.nvcc_on_path {
            b.line(
                &k("nvcc on PATH"),
                Mark::Ok,
                "nvcc",
                format!("{} → {}", n.path, n.resolved),
                "env PATH",
            );
        }
        if let Some(home) = &tk.cuda_home.path {
            b.line(
                &k("CUDA_HOME"),
                Mark::Ok,
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
                &k(&format!("library:{}", lib.soname)),
                Mark::Ok,
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
    out.extend(b.take("CUDA toolkits and libraries"));

    if let Some(envs) = &snap.python {
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
            b.line(
                &k(&format!("torch:{}", e.site)),
                Mark::Ok,
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
    out.extend(b.take("Python and PyTorch"));

    if let Some(env) = &snap.environment {
        let shown: Vec<_> = env
            .variables
            .iter()
            .filter(|v| {
                verbose
                    || matches!(
                        v.category,
                        Category::Visibility
                            | Category::Debug
                            | Category::Allocator
                            | Category::Nccl
                    )
                    || ["CUDA_HOME", "CUDA_PATH", "LD_PRELOAD"].contains(&v.name.as_str())
            })
            .collect();
        for v in &shown {
            let judged = matches!(
                v.category,
                Category::Visibility | Category::Debug | Category::Allocator
            );
            b.line(
                &k(&format!("env:{}", v.name)),
                if judged { Mark::Ok } else { Mark::Neutral },
                v.name.clone(),
                v.value.clone(),
                "environment",
            );
        }
        if shown.is_empty() {
            b.line(
                &k("env"),
                Mark::Ok,
                "variables",
                "no CUDA-related variable set",
                "environment",
            );
        }
    }
    out.extend(b.take("Environment"));

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
                &k(&format!("probe:{name}")),
                Mark::Neutral,
                name.clone(),
                value,
                "probe runner",
            );
        }
    }
    out.extend(b.take("Probes"));
    out
}

/// The smoke test's lines: the run, then each GPU's steps (identical healthy GPUs merged).
fn smoke_lines(
    b: &mut Builder,
    snap: &crate::snapshot::Snapshot,
    p: &crate::probes::smoke::SmokeProbe,
) {
    use crate::probes::smoke::{link, nvml_gpu, SmokeResult};
    let ran = matches!(p.result, SmokeResult::Ran { .. });
    b.line(
        &k("smoke"),
        if ran { Mark::Ok } else { Mark::Neutral },
        "smoke test",
        super::smoke::status_text(p, b.findings),
        p.library.clone(),
    );
    let Some(run) = p.run() else { return };
    for d in &run.devices {
        let l = snap
            .nvml_system()
            .and_then(|s| nvml_gpu(s, d))
            .and_then(link);
        for (step, text, healthy) in super::smoke::device_rows(d, l.as_ref()) {
            b.line(
                &k(&format!("smoke:{}:{step}", d.ordinal)),
                if healthy { Mark::Ok } else { Mark::Neutral },
                format!("GPU {} {step}", d.ordinal),
                text,
                "smoke test",
            );
        }
    }
}

fn nvml_lines(b: &mut Builder, n: &crate::probes::nvml::NvmlProbe, verbose: bool) {
    use crate::probes::nvml::NvmlResult;
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
    let ok = matches!(n.result, NvmlResult::Ok { .. });
    b.line(
        &k("nvml"),
        if ok { Mark::Ok } else { Mark::Neutral },
        "NVML",
        summary,
        n.library.clone(),
    );
    let Some(sys) = n.system() else { return };
    let first = b.lines.len();
    for g in &sys.devices {
        let value = match &g.handle_error {
            Some(e) => e.clone(),
            None => {
                let mut parts = vec![g.name.get().cloned().unwrap_or_else(|| "unknown".into())];
                if let Some(cc) = g.compute_capability.get() {
                    parts.push(format!("cc {cc}"));
                }
                if let Some(m) = g.memory.get() {
                    parts.push(format!("{:.0} GiB", m.total as f64 / (1u64 << 30) as f64));
                }
                if let (Some(gen), Some(w)) = (g.pcie.max_generation.get(), g.pcie.max_width.get())
                {
                    parts.push(format!("PCIe Gen{gen} x{w}"));
                }
                if g.mig.enabled.get() == Some(&true) {
                    parts.push(format!("MIG ({} instances)", g.mig.instances.len()));
                }
                parts.join(" · ")
            }
        };
        b.line(
            &k(&format!("gpu:{}", g.index)),
            Mark::Ok,
            format!("GPU {}", g.index),
            value,
            g.pci_bus_id.get().cloned().unwrap_or_else(|| "NVML".into()),
        );
    }
    if !verbose {
        collapse_healthy_runs(&mut b.lines, first);
    }
}

/// Merges runs of three or more identical healthy lines (an 8-GPU node) into one,
/// so a healthy machine's report fits the first screen.
fn collapse_healthy_runs(lines: &mut Vec<Line>, from: usize) {
    let mut out: Vec<Line> = Vec::new();
    let tail = lines.split_off(from);
    let mut i = 0;
    while i < tail.len() {
        let mut j = i + 1;
        while j < tail.len() && tail[j].value == tail[i].value && tail[j].mark == tail[i].mark {
            j += 1;
        }
        if j - i >= 3 && tail[i].mark == Mark::Ok {
            out.push(Line {
                label: format!("{}…{}", tail[i].label, tail[j - 1].label),
                value: format!("{}× {}", j - i, tail[i].value),
                source: tail[i].source.clone(),
                mark: Mark::Ok,
            });
        } else {
            out.extend(tail[i..j].iter().cloned());
        }
        i = j;
    }
    lines.extend(out);
}

fn hint_sources(hints: &[crate::probes::platform::Hint]) -> String {
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
    for n in nodes {
        let ok = n.present && n.access.as_ref().is_none_or(|a| a.read_write);
        let default = if ok { Mark::Ok } else { Mark::Neutral };
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
            let keys: Vec<String> = gpu_nodes
                .iter()
                .map(|g| format!("node:{}", g.path))
                .chain(["nodes".to_string()])
                .collect();
            let label = format!(
                "{}…{}",
                gpu_nodes[0].path,
                gpu_nodes[gpu_nodes.len() - 1]
                    .path
                    .trim_start_matches("/dev/")
            );
            b.line(
                &keys,
                default,
                label,
                format!("{} nodes, {}", gpu_nodes.len(), node_summary(n)),
                "/dev",
            );
            continue;
        }
        let mut keys = vec![format!("node:{}", n.path)];
        if is_gpu(n) {
            keys.push("nodes".into());
        }
        let source = n
            .access
            .as_ref()
            .map(|a| format!("{} ({})", n.path, a.method))
            .unwrap_or_else(|| n.path.clone());
        b.line(&keys, default, n.path.clone(), node_summary(n), source);
    }
    if gpu_nodes.is_empty() && nodes.iter().any(|n| n.present) {
        b.line(
            &k("nodes"),
            Mark::Neutral,
            "/dev/nvidia[0-9]*",
            "none",
            "/dev",
        );
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
