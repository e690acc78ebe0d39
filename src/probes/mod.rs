//! Probes gather facts and never judge. Each subject is one file and one row of
//! [`PROBES`]; `collect` runs them concurrently under one deadline and assembles the
//! Snapshot.

pub mod container;
pub mod container_host;
pub mod device_nodes;
pub mod environment;
pub mod identity;
pub(crate) mod journal;
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
    /// The part of the kernel log judged.
    pub log_window: kernel_log::LogWindow,
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
    /// The longest silence of the worker (a hung driver call); with `hard_deadline`, the
    /// whole run's budget.
    pub timeout: Duration,
    /// `timeout` bounds the whole run (--preflight's budget), not only a silence.
    pub hard_deadline: bool,
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

/// What a probe found, written into the snapshot by the collector.
pub type Store = Box<dyn FnOnce(&mut Snapshot) + Send>;

/// When and how a probe runs.
pub enum Run {
    /// On the caller's thread, before the others (identity: a bad `--user` is a usage error,
    /// and device_nodes judges access with the account it names).
    First(fn(&Context) -> Result<Store, identity::UnknownUser>),
    /// On its own thread, beside the others, under the one deadline.
    Concurrent(fn(&Context) -> Store),
    /// After the others, reading what they found (the smoke test uses NVML's facts); the
    /// text is why it did not run, recorded as skipped.
    Last(fn(&Context, &ProbeOptions, &Snapshot) -> (Store, Option<String>)),
}

/// One probe: its name (`--only`/`--skip`, the report's `probes` map), how it runs, and
/// why it does not run with some options.
pub struct ProbeDef {
    pub name: &'static str,
    pub run: Run,
    /// Why the probe does not run with these options (recorded as skipped), if it does not.
    pub unless: fn(&ProbeOptions) -> Option<&'static str>,
}

const ALWAYS: fn(&ProbeOptions) -> Option<&'static str> = |_| None;

/// Every probe, in report order. Adding a probe: its file (and its facts in src/facts/),
/// its field in the Snapshot, and one row here.
pub const PROBES: &[ProbeDef] = &[
    ProbeDef {
        name: "identity",
        run: Run::First(|cx| {
            let id = identity::probe(&cx.host, &cx.accounts, cx.user_name.as_deref())?;
            Ok(Box::new(move |s| s.identity = Some(id)))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "platform",
        run: Run::Concurrent(|cx| {
            let mut p = platform::probe(&cx.host, &cx.host_env);
            // The image's distribution, on this host's kernel and CPU.
            if cx.image {
                p.os = platform::os_release(&cx.user);
            }
            Box::new(move |s| s.platform = Some(p))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "kernel_module",
        run: Run::Concurrent(|cx| {
            let k = kernel_module::probe(&cx.host);
            Box::new(move |s| s.kernel_module = Some(k))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "kernel_log",
        run: Run::Concurrent(|cx| {
            let k = kernel_log::probe(&cx.host, cx.budget, &cx.log_window);
            Box::new(move |s| s.kernel_log = Some(k))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "pci",
        run: Run::Concurrent(|cx| {
            let p = pci::probe(&cx.host);
            Box::new(move |s| s.pci = Some(p))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "topology",
        run: Run::Concurrent(|cx| {
            // The GPU functions are listed again here (one small read each) so that this
            // probe need not wait for the pci probe.
            let gpus: Vec<String> = pci::probe(&cx.host)
                .gpus()
                .iter()
                .map(|d| d.address.clone())
                .collect();
            let t = topology::probe(&cx.host, &gpus);
            Box::new(move |s| s.topology = Some(t))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "device_nodes",
        run: Run::Concurrent(|cx| {
            let d = device_nodes::probe(&cx.host, cx.identity.as_ref(), &cx.accounts);
            Box::new(move |s| s.device_nodes = Some(d))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "container_host",
        run: Run::Concurrent(|cx| {
            let c = container_host::probe(&cx.host);
            Box::new(move |s| s.container_host = Some(c))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "environment",
        run: Run::Concurrent(|cx| {
            let e = environment::probe(&cx.user_env);
            Box::new(move |s| s.environment = Some(e))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "nccl",
        // The host's interfaces and RDMA devices, as NCCL in this namespace sees them.
        run: Run::Concurrent(|cx| {
            let n = nccl::probe(&cx.host);
            Box::new(move |s| s.nccl = Some(n))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "toolkits",
        run: Run::Concurrent(|cx| {
            let t = cx.toolkits().clone();
            Box::new(move |s| s.toolkits = Some(t))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "libraries",
        run: Run::Concurrent(|cx| {
            // Toolkit lib directories are listed too; discovery is shared, not repeated.
            let l = libraries::probe(&cx.user, &cx.user_env, cx.sites(), Some(cx.toolkits()));
            Box::new(move |s| s.libraries = Some(l))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "linkage",
        run: Run::Concurrent(|cx| {
            let l = if cx.linkage_files.is_empty() {
                linkage::probe(&cx.user, cx.search(), cx.sites(), cx.linkage_full)
            } else {
                vec![linkage::probe_files(
                    &cx.user,
                    cx.search(),
                    &cx.linkage_files,
                )]
            };
            Box::new(move |s| s.linkage = Some(l))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "nvml",
        run: Run::Concurrent(|cx| {
            let n = nvml_probe(cx);
            Box::new(move |s| s.nvml = Some(n))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "pytorch",
        run: Run::Concurrent(|cx| {
            let p = pytorch::probe(&cx.user, cx.sites());
            Box::new(move |s| s.python = Some(p))
        }),
        unless: ALWAYS,
    },
    ProbeDef {
        name: "pytorch_live",
        run: Run::Concurrent(|cx| {
            let under_root = cx.host.root().is_some();
            // The Python the static probes call primary, so both look at one.
            let python = cx.python.clone().or_else(|| {
                python_sites::python_exe_on_path(&cx.host, &cx.host_env).filter(|_| !under_root)
            });
            // Most of the budget: an import that overruns is reported by this probe.
            let l = pytorch_live::probe(python.as_deref(), under_root, cx.budget.mul_f64(0.8));
            Box::new(move |s| s.python_live = Some(l))
        }),
        unless: |o| (!o.python_import).then_some("runs only with --python-import"),
    },
    ProbeDef {
        name: "smoke",
        run: Run::Last(|cx, opts, snap| {
            let (probe, why) = run_smoke(cx, opts, snap);
            let skipped = match &probe {
                Some(p) => match &p.result {
                    crate::facts::smoke::SmokeResult::NotRun { reason } => Some(reason.clone()),
                    _ => None,
                },
                None => Some(why),
            };
            (Box::new(move |s| s.smoke = probe), skipped)
        }),
        unless: ALWAYS,
    },
];

/// Every probe's name, in report order.
pub const PROBE_NAMES: &[&str] = &{
    let mut names = [""; PROBES.len()];
    let mut i = 0;
    while i < PROBES.len() {
        names[i] = PROBES[i].name;
        i += 1;
    }
    names
};

/// What the probes read: the host's files and environment, the userland's (an image's
/// under `--image`, else the host's), the options they take, and the facts more than one
/// probe needs, computed once by whichever asks first.
pub struct Context {
    /// The host (or the tree `--root` names): kernel, PCI, device nodes, NVML.
    pub host: Arc<HostFs>,
    pub host_env: Arc<Env>,
    /// The userland: toolkits, libraries, Python; the image's under `--image`.
    pub user: Arc<HostFs>,
    pub user_env: Arc<Env>,
    /// `--timeout`: a probe that runs commands or workers bounds them by it.
    pub budget: Duration,
    pub image: bool,
    /// `--user`: the account whose access to the device nodes is judged.
    pub user_name: Option<String>,
    pub python: Option<PathBuf>,
    pub nvml_lib: Option<PathBuf>,
    pub linkage_files: Vec<PathBuf>,
    pub linkage_full: bool,
    pub log_window: kernel_log::LogWindow,
    accounts: identity::Accounts,
    /// The identity probe's answer, for device_nodes.
    identity: Option<crate::facts::identity::Identity>,
    sites: OnceLock<Vec<crate::facts::python_sites::Site>>,
    toolkits: OnceLock<crate::facts::toolkits::Toolkits>,
    search: OnceLock<crate::loader::SearchConfig>,
}

impl Context {
    fn sites(&self) -> &[crate::facts::python_sites::Site] {
        self.sites.get_or_init(|| {
            python_sites::discover(&self.user, &self.user_env, self.python.as_deref())
        })
    }

    /// The userland loader's search path (LD_LIBRARY_PATH, the cache, the default
    /// directories).
    fn search(&self) -> &crate::loader::SearchConfig {
        self.search
            .get_or_init(|| crate::loader::SearchConfig::new(&self.user, &self.user_env))
    }

    fn toolkits(&self) -> &crate::facts::toolkits::Toolkits {
        self.toolkits
            .get_or_init(|| toolkits::probe(&self.user, &self.user_env, self.sites(), self.budget))
    }
}

/// The NVML probe, or why the library is not there to load.
fn nvml_probe(cx: &Context) -> crate::facts::nvml::NvmlProbe {
    // The module's files are read again here (a few small reads) so that NVML need not
    // wait for the other probes.
    let no_driver = no_kernel_driver(&cx.host, &kernel_module::probe(&cx.host));
    // Spawning the worker is most of a check's time on a machine without NVML: when no
    // step of the loader can find the library, dlopen would fail.
    if cx.nvml_lib.is_none() && cx.host.root().is_none() && no_driver.is_none() {
        // The host's loader path; under --image the shared one is the image's.
        let own;
        let cfg = if cx.image {
            own = crate::loader::SearchConfig::new(&cx.host, &cx.host_env);
            &own
        } else {
            cx.search()
        };
        if crate::loader::find_for_program(&cx.host, cfg, nvml::DEFAULT_LIB).is_none() {
            return nvml::not_found(cfg);
        }
    }
    // Most of the budget: a worker that overruns is reported by this probe, not abandoned
    // by the collector.
    nvml::probe(
        &cx.host,
        cx.nvml_lib.as_deref(),
        cx.budget.mul_f64(0.8),
        no_driver,
    )
}

/// Runs the probes of [`PROBES`] the options enable, each concurrent one on its own
/// thread under one deadline, and assembles the snapshot.
pub fn collect(opts: &ProbeOptions, env: &Env) -> Result<Snapshot, identity::UnknownUser> {
    let start = Instant::now();
    let deadline = start + opts.timeout;
    let host = Arc::new(HostFs::new(opts.root.clone()));
    let host_env = Arc::new(env.clone());
    // The userland: the image's files and environment under --image, else the host's.
    let (user, user_env) = match &opts.image {
        Some(img) => (
            Arc::new(HostFs::new(Some(img.root.clone()))),
            Arc::new(img.env.clone()),
        ),
        None => (host.clone(), host_env.clone()),
    };
    let enabled = |name: &str| opts.enabled.contains(&name);
    let runs = |def: &&ProbeDef| enabled(def.name) && (def.unless)(opts).is_none();
    let mut snap = Snapshot {
        root: opts.root.as_ref().map(|r| r.display().to_string()),
        image: opts.image.as_ref().map(|i| i.info.clone()),
        node: Some(node::probe(&host, &host_env)),
        ..Snapshot::default()
    };
    let mut cx = Context {
        // Only identity (and device_nodes, which always brings it) names accounts.
        accounts: if enabled("identity") {
            identity::Accounts::read(&host)
        } else {
            identity::Accounts::default()
        },
        host,
        host_env,
        user,
        user_env,
        budget: opts.timeout,
        image: opts.image.is_some(),
        user_name: opts.user.clone(),
        python: opts.python.clone(),
        nvml_lib: opts.nvml_lib.clone(),
        linkage_files: opts.linkage_files.clone(),
        linkage_full: opts.linkage_full,
        log_window: opts.log_window.clone(),
        identity: None,
        sites: OnceLock::new(),
        toolkits: OnceLock::new(),
        search: OnceLock::new(),
    };

    for def in PROBES.iter().filter(runs) {
        if let Run::First(run) = def.run {
            let t = Instant::now();
            run(&cx)?(&mut snap);
            snap.probes.insert(def.name.into(), ok_run(t));
        }
    }
    cx.identity = snap.identity.clone();
    let cx = Arc::new(cx);

    let delay = fault_delay(env);
    let panic_in = env.get_str(crate::envvars::GPUDOCTOR_FAULT_PROBE_PANIC);
    // Err carries a panic message: a probe that panics is reported as failed, not lost.
    let (tx, rx) = mpsc::channel::<(&'static str, Result<Store, String>, Duration)>();
    let mut pending: Vec<&'static str> = Vec::new();
    for def in PROBES.iter().filter(runs) {
        let Run::Concurrent(run) = def.run else {
            continue;
        };
        let name = def.name;
        pending.push(name);
        let tx = tx.clone();
        let cx = cx.clone();
        let t = Instant::now();
        let delay = delay.as_ref().filter(|(n, _)| n == name).map(|(_, d)| *d);
        let panics = panic_in.as_deref() == Some(name);
        // Detached: a probe stuck in a read (a hung NFS mount, a wedged sysfs file) is
        // abandoned at the deadline instead of holding up the report.
        thread::spawn(move || {
            let work = move || {
                if let Some(d) = delay {
                    thread::sleep(d);
                }
                if panics {
                    panic!("fault injected by GPUDOCTOR_FAULT_PROBE_PANIC");
                }
                run(&cx)
            };
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|e| {
                e.downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| e.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into())
            });
            let _ = tx.send((name, out, t.elapsed()));
        });
    }
    drop(tx);

    while !pending.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((name, out, took)) = rx.recv_timeout(left) else {
            break;
        };
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
        if let Ok(store) = out {
            store(&mut snap);
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
    if let Some(sites) = cx.sites.get() {
        snap.python_sites = Some(sites.clone());
    }
    for def in PROBES.iter().filter(runs) {
        if let Run::Last(run) = def.run {
            let t = Instant::now();
            let (store, skipped) = run(&cx, opts, &snap);
            store(&mut snap);
            snap.probes.insert(
                def.name.into(),
                ProbeRun {
                    status: if skipped.is_some() {
                        ProbeStatus::Skipped
                    } else {
                        ProbeStatus::Ok
                    },
                    elapsed_us: t.elapsed().as_micros() as u64,
                    detail: skipped,
                },
            );
        }
    }
    reread_aer(&cx.host, &mut snap, start);
    reread_nvml_counters(&mut snap, start, opts.timeout, cx.host.root().is_some());
    for def in PROBES {
        let why = if !enabled(def.name) {
            Some("not selected (--only/--skip)")
        } else {
            (def.unless)(opts)
        };
        if let Some(why) = why {
            snap.probes.insert(
                def.name.into(),
                ProbeRun {
                    status: ProbeStatus::Skipped,
                    elapsed_us: 0,
                    detail: Some(why.into()),
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
    cx: &Context,
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
    let no_driver = match &snap.kernel_module {
        Some(km) => no_kernel_driver(&cx.host, km),
        None => no_kernel_driver(&cx.host, &kernel_module::probe(&cx.host)),
    };
    let probe = smoke::probe(&smoke::SmokeRequest {
        lib: so.lib.as_deref(),
        root: opts.root.as_deref(),
        settings: so.settings.clone(),
        shared_gpus,
        timeout: so.timeout,
        hard_deadline: so.hard_deadline,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_each_probe_once_identity_first_and_the_smoke_test_last() {
        let mut names = PROBE_NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROBES.len(), "{PROBE_NAMES:?}");
        assert!(matches!(PROBES[0].run, Run::First(_)));
        assert_eq!(PROBES[0].name, "identity");
        let last = PROBES.last().unwrap();
        assert!(matches!(last.run, Run::Last(_)));
        assert_eq!(last.name, "smoke");
    }

    #[test]
    fn a_probe_that_needs_an_option_says_which() {
        let live = PROBES.iter().find(|d| d.name == "pytorch_live").unwrap();
        let opts = |python_import| ProbeOptions {
            root: None,
            user: None,
            timeout: Duration::from_secs(1),
            enabled: PROBE_NAMES.to_vec(),
            nvml_lib: None,
            python: None,
            python_import,
            linkage_files: Vec::new(),
            linkage_full: false,
            log_window: Default::default(),
            smoke: SmokeMode::Off("test".into()),
            image: None,
        };
        assert_eq!(
            (live.unless)(&opts(false)),
            Some("runs only with --python-import")
        );
        assert_eq!((live.unless)(&opts(true)), None);
        assert!(PROBES
            .iter()
            .filter(|d| d.name != "pytorch_live")
            .all(|d| (d.unless)(&opts(false)).is_none()));
    }
}
