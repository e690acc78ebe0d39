//! Probes gather facts and never judge. Each subject is one file; `collect` runs
//! them concurrently under one deadline and assembles the Snapshot.

pub mod container;
pub mod container_host;
pub mod device_nodes;
pub mod environment;
pub mod identity;
pub mod kernel_log;
pub mod kernel_module;
pub mod libraries;
pub mod linkage;
pub mod nccl;
pub mod node;
pub mod nvml;
pub mod pci;
pub mod platform;
pub mod python_sites;
pub mod pytorch;
pub mod pytorch_live;
pub mod smoke;
pub mod toolkits;
pub mod topology;

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::envvars::Env;
use crate::fsys::HostFs;
use crate::snapshot::{ProbeRun, ProbeStatus, Snapshot};

/// Every probe, in report order.
pub const PROBE_NAMES: &[&str] = &[
    "identity",
    "platform",
    "kernel_module",
    "kernel_log",
    "pci",
    "topology",
    "device_nodes",
    "container_host",
    "environment",
    "nccl",
    "toolkits",
    "libraries",
    "linkage",
    "nvml",
    "pytorch",
    "pytorch_live",
    "smoke",
];

pub struct ProbeOptions {
    pub root: Option<PathBuf>,
    pub user: Option<String>,
    pub timeout: Duration,
    /// Probe names to run; the others are recorded as skipped.
    pub enabled: Vec<&'static str>,
    /// --nvml-lib: the NVML library to load (None: the loader's libnvidia-ml.so.1).
    pub nvml_lib: Option<PathBuf>,
    /// --python: an interpreter whose environment comes first.
    pub python: Option<PathBuf>,
    /// --python-import: also ask the interpreter's torch itself.
    pub python_import: bool,
    /// `gpudoctor libs FILE…`: the linkage probe opens these instead of the modules of the
    /// Python environments.
    pub linkage_files: Vec<PathBuf>,
    /// Keep every object the linkage probe mapped, not only those leading to CUDA libraries.
    pub linkage_full: bool,
    /// The on-device smoke test, run after the other probes (it uses NVML's facts).
    pub smoke: SmokeMode,
    /// `check --image`: the userland probes read this unpacked image with its environment;
    /// the host probes (kernel module, PCI, nodes, NVML) read this host.
    pub image: Option<ImageUserland>,
}

/// An image's filesystem and the environment its process would start with.
pub struct ImageUserland {
    pub root: PathBuf,
    pub env: Env,
    pub info: crate::image::ImageInfo,
}

/// Whether and how the smoke test runs.
pub enum SmokeMode {
    /// Not run; the reason is recorded (--no-smoke, --quick, a focused subcommand).
    Off(String),
    On(SmokeOptions),
}

pub struct SmokeOptions {
    /// --cuda-lib (None: the loader's libcuda.so.1).
    pub lib: Option<PathBuf>,
    pub settings: crate::facts::smoke::SmokeSettings,
    pub timeout: Duration,
    /// --nccl: the NCCL all-reduce step.
    pub nccl: Option<NcclOptions>,
    /// Run even when no NVIDIA GPU is seen (`gpudoctor smoke`, or --cuda-lib given).
    pub always: bool,
    /// Told what runs, for the live line on a terminal.
    pub progress: Option<crate::smoke::progress::ProgressSink>,
}

pub struct NcclOptions {
    /// --nccl-lib (None: the libnccl the loader gives torch, else libnccl.so.2).
    pub lib: Option<PathBuf>,
}

enum Output {
    Platform(crate::facts::platform::Platform),
    KernelModule(crate::facts::kernel_module::KernelModule),
    Pci(crate::facts::pci::Pci),
    Topology(Box<crate::facts::topology::Topology>),
    DeviceNodes(crate::facts::device_nodes::DeviceNodes),
    ContainerHost(Box<crate::facts::container_host::ContainerHost>),
    Environment(crate::facts::environment::Environment),
    Nccl(crate::facts::nccl::NcclHost),
    Toolkits(crate::facts::toolkits::Toolkits),
    Libraries(crate::facts::libraries::Libraries),
    Linkage(Vec<crate::facts::linkage::Linkage>),
    Nvml(crate::facts::nvml::NvmlProbe),
    KernelLog(Box<crate::facts::kernel_log::KernelLog>),
    Pytorch(Vec<crate::facts::pytorch::PythonEnv>),
    PytorchLive(crate::facts::pytorch_live::LiveTorch),
}

/// Facts more than one probe needs, computed once by whichever asks first.
struct Shared {
    fs: Arc<HostFs>,
    env: Arc<Env>,
    budget: Duration,
    python: Option<PathBuf>,
    sites: OnceLock<Vec<crate::facts::python_sites::Site>>,
    toolkits: OnceLock<crate::facts::toolkits::Toolkits>,
    search: OnceLock<crate::loader::SearchConfig>,
}

impl Shared {
    fn sites(&self) -> &[crate::facts::python_sites::Site] {
        self.sites
            .get_or_init(|| python_sites::discover(&self.fs, &self.env, self.python.as_deref()))
    }

    /// The loader's search path (LD_LIBRARY_PATH, the cache, the default directories).
    fn search(&self) -> &crate::loader::SearchConfig {
        self.search
            .get_or_init(|| crate::loader::SearchConfig::new(&self.fs, &self.env))
    }

    fn toolkits(&self) -> &crate::facts::toolkits::Toolkits {
        self.toolkits
            .get_or_init(|| toolkits::probe(&self.fs, &self.env, self.sites(), self.budget))
    }
}

pub fn collect(opts: &ProbeOptions, env: &Env) -> Result<Snapshot, identity::UnknownUser> {
    let start = Instant::now();
    let deadline = start + opts.timeout;
    let fs = Arc::new(HostFs::new(opts.root.clone()));
    let env = Arc::new(env.clone());
    // The userland: the image's files and environment under --image, else the host's.
    let (user_fs, user_env) = match &opts.image {
        Some(img) => (
            Arc::new(HostFs::new(Some(img.root.clone()))),
            Arc::new(img.env.clone()),
        ),
        None => (fs.clone(), env.clone()),
    };
    let enabled = |name: &str| opts.enabled.contains(&name);
    let mut snap = Snapshot {
        root: opts.root.as_ref().map(|r| r.display().to_string()),
        image: opts.image.as_ref().map(|i| i.info.clone()),
        node: Some(node::probe(&fs, &env)),
        ..Snapshot::default()
    };

    // Identity first: a bad --user is a usage error, and device_nodes judges access with it.
    // Only identity (and device_nodes, which always brings it) names accounts.
    let accounts = Arc::new(if enabled("identity") {
        identity::Accounts::read(&fs)
    } else {
        identity::Accounts::default()
    });
    if enabled("identity") {
        let t = Instant::now();
        snap.identity = Some(identity::probe(&fs, &accounts, opts.user.as_deref())?);
        snap.probes.insert("identity".into(), ok_run(t));
    }
    let ident = Arc::new(snap.identity.clone());

    let delay = fault_delay(&env);
    let panic_in = env.get_str(crate::envvars::GPUDOCTOR_FAULT_PROBE_PANIC);
    // Err carries a panic message: a probe that panics is reported as failed, not lost.
    let (tx, rx) = mpsc::channel::<(&'static str, Result<Output, String>, Duration)>();
    let mut pending: Vec<&'static str> = Vec::new();
    let mut spawn = |name: &'static str, work: Box<dyn FnOnce() -> Output + Send>| {
        if !enabled(name) {
            return;
        }
        pending.push(name);
        let tx = tx.clone();
        let t = Instant::now();
        let delay = delay.as_ref().filter(|(n, _)| n == name).map(|(_, d)| *d);
        let panics = panic_in.as_deref() == Some(name);
        // Detached: a probe stuck in a read (a hung NFS mount, a wedged sysfs file)
        // is abandoned at the deadline instead of holding up the report.
        thread::spawn(move || {
            let run = move || {
                if let Some(d) = delay {
                    thread::sleep(d);
                }
                if panics {
                    panic!("fault injected by GPUDOCTOR_FAULT_PROBE_PANIC");
                }
                work()
            };
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).map_err(|e| {
                e.downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| e.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into())
            });
            let _ = tx.send((name, out, t.elapsed()));
        });
    };
    {
        let fs = fs.clone();
        let env = env.clone();
        spawn(
            "platform",
            Box::new(move || Output::Platform(platform::probe(&fs, &env))),
        );
    }
    {
        let fs = fs.clone();
        spawn(
            "kernel_module",
            Box::new(move || Output::KernelModule(kernel_module::probe(&fs))),
        );
    }
    {
        let fs = fs.clone();
        let budget = opts.timeout;
        spawn(
            "kernel_log",
            Box::new(move || Output::KernelLog(Box::new(kernel_log::probe(&fs, budget)))),
        );
    }
    {
        let fs = fs.clone();
        spawn("pci", Box::new(move || Output::Pci(pci::probe(&fs))));
    }
    {
        let fs = fs.clone();
        spawn(
            "topology",
            Box::new(move || {
                // The GPU functions are listed again here (one small read each) so that
                // this probe need not wait for the pci probe.
                let gpus: Vec<String> = pci::probe(&fs)
                    .gpus()
                    .iter()
                    .map(|d| d.address.clone())
                    .collect();
                Output::Topology(Box::new(topology::probe(&fs, &gpus)))
            }),
        );
    }
    {
        let fs = fs.clone();
        let accounts = accounts.clone();
        let ident = ident.clone();
        spawn(
            "device_nodes",
            Box::new(move || {
                Output::DeviceNodes(device_nodes::probe(&fs, (*ident).as_ref(), &accounts))
            }),
        );
    }
    {
        let fs = fs.clone();
        spawn(
            "container_host",
            Box::new(move || Output::ContainerHost(Box::new(container_host::probe(&fs)))),
        );
    }
    {
        let env = user_env.clone();
        spawn(
            "environment",
            Box::new(move || Output::Environment(environment::probe(&env))),
        );
    }
    {
        // The host's interfaces and RDMA devices, as NCCL in this namespace sees them.
        let fs = fs.clone();
        spawn("nccl", Box::new(move || Output::Nccl(nccl::probe(&fs))));
    }
    let shared = Arc::new(Shared {
        fs: user_fs.clone(),
        env: user_env.clone(),
        budget: opts.timeout,
        python: opts.python.clone(),
        sites: OnceLock::new(),
        toolkits: OnceLock::new(),
        search: OnceLock::new(),
    });
    {
        let shared = shared.clone();
        spawn(
            "toolkits",
            Box::new(move || Output::Toolkits(shared.toolkits().clone())),
        );
    }
    {
        let shared = shared.clone();
        spawn(
            "libraries",
            Box::new(move || {
                let sites = shared.sites();
                // Toolkit lib directories are listed too; discovery is shared, not repeated.
                let toolkits = shared.toolkits();
                Output::Libraries(libraries::probe(
                    &shared.fs,
                    &shared.env,
                    sites,
                    Some(toolkits),
                ))
            }),
        );
    }
    {
        let shared = shared.clone();
        let files = opts.linkage_files.clone();
        let full = opts.linkage_full;
        spawn(
            "linkage",
            Box::new(move || {
                Output::Linkage(if files.is_empty() {
                    linkage::probe(&shared.fs, shared.search(), shared.sites(), full)
                } else {
                    vec![linkage::probe_files(&shared.fs, shared.search(), &files)]
                })
            }),
        );
    }
    {
        let shared = shared.clone();
        spawn(
            "pytorch",
            Box::new(move || Output::Pytorch(pytorch::probe(&shared.fs, shared.sites()))),
        );
    }
    if opts.python_import {
        let under_root = opts.root.is_some();
        let budget = opts.timeout.mul_f64(0.8);
        let fs = fs.clone();
        let env = env.clone();
        let python = opts.python.clone();
        spawn(
            "pytorch_live",
            Box::new(move || {
                // The Python the static probes call primary, so both look at one.
                let python = python.or_else(|| {
                    python_sites::python_exe_on_path(&fs, &env).filter(|_| !under_root)
                });
                Output::PytorchLive(pytorch_live::probe(python.as_deref(), under_root, budget))
            }),
        );
    }
    {
        let fs = fs.clone();
        let env = env.clone();
        let image = opts.image.is_some();
        let shared = shared.clone();
        let lib = opts.nvml_lib.clone();
        // Most of the budget: a worker that overruns is reported by this probe, not
        // abandoned by the collector.
        let budget = opts.timeout.mul_f64(0.8);
        spawn(
            "nvml",
            Box::new(move || {
                // The module's files are read again here (a few small reads) so that NVML
                // need not wait for the other probes.
                let no_driver = no_kernel_driver(&fs, &kernel_module::probe(&fs));
                // Spawning the worker is most of a check's time on a machine without NVML:
                // when no step of the loader can find the library, dlopen would fail.
                if lib.is_none() && fs.root().is_none() && no_driver.is_none() {
                    // The host's loader path; under --image the shared one is the image's.
                    let own;
                    let cfg = if image {
                        own = crate::loader::SearchConfig::new(&fs, &env);
                        &own
                    } else {
                        shared.search()
                    };
                    if crate::loader::find_for_program(&fs, cfg, nvml::DEFAULT_LIB).is_none() {
                        return Output::Nvml(nvml::not_found(cfg));
                    }
                }
                Output::Nvml(nvml::probe(&fs, lib.as_deref(), budget, no_driver))
            }),
        );
    }
    drop(tx);

    while !pending.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((name, out, took)) => {
                pending.retain(|p| *p != name);
                let (status, detail) = match &out {
                    Ok(_) => (ProbeStatus::Ok, None),
                    Err(msg) => (
                        ProbeStatus::Failed,
                        Some(format!("the probe failed (a bug): {msg}")),
                    ),
                };
                snap.probes.insert(
                    name.into(),
                    ProbeRun {
                        status,
                        elapsed_us: took.as_micros() as u64,
                        detail,
                    },
                );
                let Ok(out) = out else { continue };
                match out {
                    Output::Platform(mut p) => {
                        // The image's distribution, on this host's kernel and CPU.
                        if opts.image.is_some() {
                            p.os = platform::os_release(&user_fs);
                        }
                        snap.platform = Some(p)
                    }
                    Output::KernelModule(k) => snap.kernel_module = Some(k),
                    Output::KernelLog(k) => snap.kernel_log = Some(*k),
                    Output::Pci(p) => snap.pci = Some(p),
                    Output::Topology(t) => snap.topology = Some(*t),
                    Output::DeviceNodes(d) => snap.device_nodes = Some(d),
                    Output::ContainerHost(c) => snap.container_host = Some(*c),
                    Output::Environment(e) => snap.environment = Some(e),
                    Output::Nccl(n) => snap.nccl = Some(n),
                    Output::Toolkits(t) => snap.toolkits = Some(t),
                    Output::Libraries(l) => snap.libraries = Some(l),
                    Output::Linkage(l) => snap.linkage = Some(l),
                    Output::Nvml(n) => snap.nvml = Some(n),
                    Output::Pytorch(p) => snap.python = Some(p),
                    Output::PytorchLive(l) => snap.python_live = Some(l),
                }
            }
            Err(_) => break,
        }
    }
    for name in pending {
        snap.probes.insert(
            name.into(),
            ProbeRun {
                status: ProbeStatus::TimedOut,
                elapsed_us: start.elapsed().as_micros() as u64,
                detail: Some(format!(
                    "did not finish within the {:?} budget (--timeout)",
                    opts.timeout
                )),
            },
        );
    }
    if let Some(sites) = shared.sites.get() {
        snap.python_sites = Some(sites.clone());
    }
    if enabled("smoke") {
        let t = Instant::now();
        let (probe, run) = run_smoke(opts, &snap);
        let (status, detail) = match &probe {
            Some(p) => match &p.result {
                crate::facts::smoke::SmokeResult::NotRun { reason } => {
                    (ProbeStatus::Skipped, Some(reason.clone()))
                }
                _ => (ProbeStatus::Ok, None),
            },
            None => (ProbeStatus::Skipped, Some(run)),
        };
        snap.smoke = probe;
        snap.probes.insert(
            "smoke".into(),
            ProbeRun {
                status,
                elapsed_us: t.elapsed().as_micros() as u64,
                detail,
            },
        );
    }
    reread_aer(&fs, &mut snap, start);
    reread_nvml_counters(&mut snap, start, opts.timeout, fs.root().is_some());
    if !opts.python_import {
        snap.probes.insert(
            "pytorch_live".into(),
            ProbeRun {
                status: ProbeStatus::Skipped,
                elapsed_us: 0,
                detail: Some("runs only with --python-import".into()),
            },
        );
    }
    for name in PROBE_NAMES {
        if !enabled(name) {
            snap.probes.insert(
                (*name).into(),
                ProbeRun {
                    status: ProbeStatus::Skipped,
                    elapsed_us: 0,
                    detail: Some("not selected (--only/--skip)".into()),
                },
            );
        }
    }
    Ok(snap)
}

/// Whether the smoke test ran on a device (not only recorded why it did not).
fn smoke_ran(snap: &Snapshot) -> bool {
    snap.smoke
        .as_ref()
        .is_some_and(|p| !matches!(p.result, crate::facts::smoke::SmokeResult::NotRun { .. }))
}

/// Reads the AER counters the topology probe read once more, after everything else ran
/// (the smoke test's copies included): a counter that grew in between is growing now.
fn reread_aer(fs: &HostFs, snap: &mut Snapshot, start: Instant) {
    let first_read_us = snap.probes.get("topology").map_or(0, |p| p.elapsed_us);
    let smoked = smoke_ran(snap);
    let Some(topo) = snap.topology.as_mut().filter(|t| !t.aer.is_empty()) else {
        return;
    };
    let addresses: Vec<String> = topo.aer.iter().map(|c| c.address.clone()).collect();
    let elapsed_us = (start.elapsed().as_micros() as u64).saturating_sub(first_read_us);
    topo.aer_again = Some(crate::facts::topology::AerReread {
        after: if smoked {
            "the smoke test"
        } else {
            "the other probes"
        }
        .into(),
        elapsed_ms: elapsed_us / 1000,
        devices: topology::read_aer(fs, &addresses),
    });
}

/// After a smoke test on GPUs NVML answered for, reads their PCIe replay and NVLink error
/// counters once more: what grew during the copies is a link failing now.
fn reread_nvml_counters(snap: &mut Snapshot, start: Instant, timeout: Duration, under_root: bool) {
    let smoked = smoke_ran(snap);
    let first_read_us = snap.probes.get("nvml").map_or(0, |p| p.elapsed_us);
    let Some(probe) = snap
        .nvml
        .as_mut()
        .filter(|p| smoked && p.system().is_some())
    else {
        return;
    };
    let elapsed_ms = (start.elapsed().as_micros() as u64).saturating_sub(first_read_us) / 1000;
    probe.counters_again = Some(nvml::read_counters_again(
        probe,
        timeout.min(Duration::from_secs(10)),
        under_root,
        "the smoke test",
        elapsed_ms,
    ));
}

/// Runs the smoke test when asked and a GPU may be there; else says why not. The decision
/// reads facts already gathered, so a GPU-less machine pays nothing for it.
fn run_smoke(
    opts: &ProbeOptions,
    snap: &Snapshot,
) -> (Option<crate::facts::smoke::SmokeProbe>, String) {
    let so = match &opts.smoke {
        SmokeMode::Off(reason) => return (None, reason.clone()),
        SmokeMode::On(so) => so,
    };
    let nvml_gpus = snap
        .nvml_system()
        .and_then(|s| s.device_count.get().copied())
        .unwrap_or(0);
    let wanted = so.always || so.lib.is_some() || nvml_gpus > 0 || snap.nvidia_hardware_seen();
    if !wanted {
        let probe = crate::facts::smoke::SmokeProbe {
            library: so
                .lib
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| crate::facts::smoke::DEFAULT_LIB.into()),
            settings: so.settings.clone(),
            result: crate::facts::smoke::SmokeResult::NotRun {
                reason: "no NVIDIA GPU seen (no NVML device, no PCI display controller, no /dev/nvidiaN)".into(),
            },
            nccl: None,
        };
        return (Some(probe), String::new());
    }
    // GPUs other compute processes use: the memory probe takes less there.
    let me = std::process::id();
    let shared_gpus = snap
        .nvml_system()
        .map(|s| {
            s.devices
                .iter()
                .filter(|g| {
                    g.processes
                        .get()
                        .is_some_and(|ps| ps.iter().any(|p| p.kind == "compute" && p.pid != me))
                })
                .filter_map(|g| g.uuid.get().cloned())
                .collect()
        })
        .unwrap_or_default();
    let fs = HostFs::new(opts.root.clone());
    let no_driver = match &snap.kernel_module {
        Some(km) => no_kernel_driver(&fs, km),
        None => no_kernel_driver(&fs, &kernel_module::probe(&fs)),
    };
    let probe = smoke::probe(&smoke::SmokeRequest {
        lib: so.lib.as_deref(),
        root: opts.root.as_deref(),
        settings: so.settings.clone(),
        shared_gpus,
        timeout: so.timeout,
        progress: so.progress.clone(),
        no_driver,
        nccl: so.nccl.as_ref().map(|n| smoke::NcclAsk {
            lib: n.lib.as_deref(),
            torch_binds: torch_binds_nccl(snap),
            environment: snap
                .environment
                .iter()
                .flat_map(|e| &e.variables)
                .filter(|v| v.name.starts_with("NCCL_") && !v.redacted)
                .map(|v| (v.name.clone(), v.value.clone()))
                .collect(),
        }),
    });
    (Some(probe), String::new())
}

/// The libnccl the loader gives torch, and the site it was worked out for: the first
/// environment whose torch module maps one.
fn torch_binds_nccl(snap: &Snapshot) -> Option<(String, String)> {
    snap.linkage.iter().flatten().find_map(|l| {
        l.modules
            .iter()
            .filter(|m| m.package == "torch")
            .find_map(|m| {
                l.closure(m).into_iter().find_map(|i| {
                    let o = l.object(i)?;
                    (o.live && o.is_libnccl()).then(|| (o.path.clone(), l.site.clone()))
                })
            })
    })
}

/// Why the driver's libraries (libnvidia-ml, libcuda) are not loaded: the files show no
/// NVIDIA kernel driver. Run as root, those libraries create the missing /dev/nvidia* nodes
/// (nvidia-smi does the same), and gpudoctor changes nothing on the machine. Only when
/// every sign is read and absent: an unreadable /proc/modules proves nothing (a missing one
/// with /proc mounted is a kernel without loadable modules), and WSL (/dev/dxg) and Tegra
/// (/dev/nvhost-ctrl-gpu) run CUDA without an `nvidia` module.
pub fn no_kernel_driver(
    fs: &HostFs,
    km: &crate::facts::kernel_module::KernelModule,
) -> Option<String> {
    use crate::fact::MissingReason::NotFound;
    use std::path::Path;
    let not_found = |m: Option<&crate::fact::Missing>| m.is_some_and(|m| m.reason == NotFound);
    let no_modules_file =
        not_found(km.modules.missing_info()) && fs.exists(Path::new("/proc/self"));
    let no_module = match km.is_loaded("nvidia") {
        Some(loaded) => !loaded,
        None => no_modules_file,
    };
    let absent = no_module
        && not_found(km.version_file.missing_info())
        && not_found(km.sys_version.missing_info())
        && not_found(km.gpus.missing_info())
        && !fs.exists(Path::new("/dev/dxg"))
        && !fs.exists(Path::new("/dev/nvhost-ctrl-gpu"));
    absent.then(|| {
        format!(
            "the NVIDIA kernel module is not loaded ({}, no /proc/driver/nvidia): the driver's libraries are left unloaded, since as root they would create /dev/nvidia* nodes",
            if no_modules_file {
                format!("no {}", crate::facts::kernel_module::MODULES_FILE)
            } else {
                format!("not in {}", crate::facts::kernel_module::MODULES_FILE)
            }
        )
    })
}

/// `GPUDOCTOR_FAULT_PROBE_DELAY=NAME:MS`: lets tests make a probe outlive the deadline.
fn fault_delay(env: &Env) -> Option<(String, Duration)> {
    let v = env.get_str(crate::envvars::GPUDOCTOR_FAULT_PROBE_DELAY)?;
    let (name, ms) = v.split_once(':')?;
    Some((
        name.to_string(),
        Duration::from_millis(ms.trim().parse().ok()?),
    ))
}

fn ok_run(t: Instant) -> ProbeRun {
    ProbeRun {
        status: ProbeStatus::Ok,
        elapsed_us: t.elapsed().as_micros() as u64,
        detail: None,
    }
}
