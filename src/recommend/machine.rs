//! The machine a recommendation is for: read from the snapshot, each fact overridable from
//! the command line (`--driver`, `--gpu`, `--python`, `--platform`, `--installer`) to answer
//! for a machine gpudoctor is not running on.

use serde::Serialize;

use crate::compat::torch::Platform;
use crate::compat::{gpu_from_name, ComputeCapability, CudaVersion, DriverVersion};
use crate::facts::pytorch::PythonEnv;
use crate::snapshot::{DriverFact, Snapshot};

/// The tool that installs into the environment: it decides the command's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Installer {
    Pip,
    Uv,
    Conda,
    Poetry,
    Pdm,
}

impl Installer {
    pub fn name(self) -> &'static str {
        match self {
            Installer::Pip => "pip",
            Installer::Uv => "uv",
            Installer::Conda => "conda",
            Installer::Poetry => "poetry",
            Installer::Pdm => "pdm",
        }
    }

    pub fn from_name(name: &str) -> Option<Installer> {
        match name.trim().to_ascii_lowercase().as_str() {
            "pip" => Some(Installer::Pip),
            "uv" => Some(Installer::Uv),
            "conda" | "mamba" | "micromamba" => Some(Installer::Conda),
            "poetry" => Some(Installer::Poetry),
            "pdm" => Some(Installer::Pdm),
            _ => None,
        }
    }

    pub const ALL: [Installer; 5] = [
        Installer::Pip,
        Installer::Uv,
        Installer::Conda,
        Installer::Poetry,
        Installer::Pdm,
    ];
}

/// A fact and where it came from ("--driver", "NVML", "lib/python3.12 in /venv").
#[derive(Debug, Clone, Serialize)]
pub struct Given<T> {
    pub value: T,
    pub source: String,
}

impl<T> Given<T> {
    pub fn new(value: T, source: impl Into<String>) -> Given<T> {
        Given {
            value,
            source: source.into(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Gpu {
    pub name: String,
    pub cc: ComputeCapability,
    pub source: String,
}

/// A distribution installed in the target environment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Installed {
    pub name: String,
    pub version: String,
    /// Its `Requires-Dist: torch…` specifier.
    pub requires_torch: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    #[serde(serialize_with = "driver_text")]
    pub driver: Option<DriverFact>,
    pub gpus: Vec<Gpu>,
    /// NVIDIA hardware was seen (PCI, device nodes, the kernel module, NVML) or named with
    /// --gpu, even where no GPU model could be identified.
    pub gpu_seen: bool,
    /// (3, 12).
    pub python: Option<Given<(u32, u32)>>,
    /// None with `platform_name` set: a CPU no official CUDA wheel is built for.
    pub platform: Option<Given<Platform>>,
    pub platform_name: String,
    pub installer: Given<Installer>,
    /// The environment the commands install into (its interpreter, its project).
    #[serde(skip)]
    pub target: super::commands::Target,
    /// The CUDA asked for (--cuda): "12" for any 12.x, "12.4" for exactly 12.4.
    pub cuda: Option<WantedCuda>,
    /// The target environment's distributions; empty with --fresh.
    pub installed: Vec<Installed>,
    /// torch's CUDA in the environment ("12.8") and the cuDNN major its wheels bring.
    pub torch_cuda: Option<String>,
    pub torch_cudnn_major: Option<u32>,
    /// The nvcc a source build would use (`CUDA_HOME`, PATH).
    pub nvcc: Option<Given<CudaVersion>>,
    /// Frameworks installed with torch in one go, and the CUDA major each is built on: torch's
    /// build must share it (one process, one set of nvidia-* libraries).
    #[serde(skip)]
    pub with_frameworks: Vec<(String, u32)>,
    /// The CUDA major every package asked for together is tried at, newest first.
    #[serde(skip)]
    pub shared_cuda_major: Option<u32>,
    /// The installed torch came from conda (a conda-meta record of `pytorch`): pip must not
    /// install over it.
    pub torch_from_conda: bool,
    /// The installed torch's compiled architectures as read from its binary (SASS, PTX),
    /// when read: a build labelled like an official one may lack some.
    #[serde(skip)]
    pub torch_arches: Option<(Vec<u32>, Vec<u32>)>,
}

fn driver_text<S: serde::Serializer>(d: &Option<DriverFact>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&serde_json::json!({
            "version": d.version.as_str(),
            "source": d.source,
            "windows": d.windows,
        })),
        None => s.serialize_none(),
    }
}

/// `--cuda 12` (any 12.x) or `--cuda 12.4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WantedCuda {
    pub major: u32,
    pub minor: Option<u32>,
}

impl WantedCuda {
    pub fn parse(s: &str) -> Option<WantedCuda> {
        let s = s.trim().trim_start_matches("cu");
        if let Some((a, b)) = s.split_once('.') {
            return Some(WantedCuda {
                major: a.parse().ok()?,
                minor: Some(b.parse().ok()?),
            });
        }
        // "cu126" → 12.6; "12" → any 12.x.
        let n: u32 = s.parse().ok()?;
        Some(if n >= 100 {
            WantedCuda {
                major: n / 10,
                minor: Some(n % 10),
            }
        } else {
            WantedCuda {
                major: n,
                minor: None,
            }
        })
    }

    pub fn accepts(&self, c: CudaVersion) -> bool {
        c.major == self.major && self.minor.is_none_or(|m| m == c.minor)
    }

    pub fn text(&self) -> String {
        match self.minor {
            Some(m) => format!("CUDA {}.{m}", self.major),
            None => format!("CUDA {}.x", self.major),
        }
    }
}

/// What the command line overrides.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub driver: Option<String>,
    pub gpus: Vec<String>,
    /// "3.12"; a path to an interpreter is handled by the probes.
    pub python: Option<String>,
    pub platform: Option<String>,
    pub installer: Option<Installer>,
    pub cuda: Option<String>,
    /// Answer for a new environment: ignore what is installed.
    pub fresh: bool,
}

impl Overrides {
    /// Every value given parses, or the message naming the flag.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(d) = &self.driver {
            DriverVersion::parse(d)
                .ok_or_else(|| format!("--driver {d}: not a driver version (550.54.15)"))?;
            // A branch alone cannot meet or miss a minimum inside it (CUDA 13.0 needs
            // 580.65.06, not any 580): the whole version is asked for.
            if !d.contains('.') {
                return Err(format!(
                    "--driver {d}: a branch, not a version: give the whole version `nvidia-smi` prints ({d}.xx.yy); minimums fall inside branches (CUDA 13.0 needs 580.65.06)"
                ));
            }
        }
        for g in &self.gpus {
            parse_gpu(g)?;
        }
        if let Some(p) = &self.python {
            parse_python(p).ok_or_else(|| format!("--python {p}: not a Python version (3.12)"))?;
        }
        if let Some(c) = &self.cuda {
            WantedCuda::parse(c)
                .ok_or_else(|| format!("--cuda {c}: not a CUDA version (12, 12.8, cu128)"))?;
        }
        Ok(())
    }
}

/// A GPU from `--gpu`: "sm_120", "12.0", "120", or a name ("RTX 5090", "H100").
pub fn parse_gpu(s: &str) -> Result<Gpu, String> {
    let t = s.trim();
    let digits = t.strip_prefix("sm_").unwrap_or(t);
    let cc = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let n: u32 = digits
            .parse()
            .map_err(|_| format!("--gpu {t}: not a GPU"))?;
        Some(ComputeCapability::new(n / 10, n % 10))
    } else {
        ComputeCapability::parse(t)
    };
    if let Some(cc) = cc {
        if crate::compat::arch::arch_row(cc).is_none() {
            return Err(format!(
                "--gpu {t}: compute capability {cc} is not a known NVIDIA architecture"
            ));
        }
        return Ok(Gpu {
            name: format!("sm_{}{}", cc.major, cc.minor),
            cc,
            source: "--gpu".into(),
        });
    }
    // "RTX 4090", "GTX 1080": as the driver names them, with the brand.
    let named = gpu_from_name(t).or_else(|| {
        let upper = t.to_ascii_uppercase();
        (upper.starts_with("RTX ") || upper.starts_with("GTX "))
            .then(|| gpu_from_name(&format!("GeForce {t}")))
            .flatten()
    });
    match named {
        Some(m) => Ok(Gpu {
            name: t.to_string(),
            cc: m.cc,
            source: "--gpu (by name)".into(),
        }),
        None => Err(format!(
            "--gpu {t}: not a compute capability (sm_90, 9.0) or a GPU name gpudoctor knows"
        )),
    }
}

/// A `--python` value meant as a version ("3", "3.", "3.x") rather than a path.
pub fn looks_like_version(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty() && !t.contains('/') && t.starts_with(|c: char| c.is_ascii_digit())
}

/// "3.12" → (3, 12).
pub fn parse_python(s: &str) -> Option<(u32, u32)> {
    let mut it = s.trim().trim_start_matches("python").split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

impl Machine {
    /// The machine from what the probes saw, with the overrides applied.
    pub fn from_snapshot(snap: &Snapshot, o: &Overrides) -> Result<Machine, String> {
        o.validate()?;
        Ok(Machine::build(snap, target_env(snap), o))
    }

    /// The machine as the probes saw it, for one of its Python environments: what `check`'s
    /// fixes recommend for.
    pub fn for_env(snap: &Snapshot, env: &PythonEnv) -> Machine {
        Machine::build(snap, Some(env), &Overrides::default())
    }

    /// The machine with overrides already validated (an invalid one is left out).
    fn build(snap: &Snapshot, env: Option<&PythonEnv>, o: &Overrides) -> Machine {
        let driver = match o.driver.as_deref().and_then(DriverVersion::parse) {
            Some(version) => Some(DriverFact {
                version,
                source: "--driver".into(),
                kernel: false,
                windows: snap.is_wsl(),
            }),
            None => snap.driver_version(),
        };
        let gpus: Vec<Gpu> = if o.gpus.is_empty() {
            snap.known_gpus()
                .into_iter()
                .map(|g| Gpu {
                    name: g.name,
                    cc: g.cc,
                    source: g.source,
                })
                .collect()
        } else {
            o.gpus.iter().filter_map(|g| parse_gpu(g).ok()).collect()
        };
        let python = match o.python.as_deref().and_then(parse_python) {
            Some(v) => Some(Given::new(v, "--python")),
            None => env.and_then(|e| {
                let v = parse_python(e.python.as_deref()?)?;
                Some(Given::new(
                    v,
                    format!("lib/python{}.{} in {}", v.0, v.1, e.site),
                ))
            }),
        };
        // The installed torch wheel's own platform tag, else the host's.
        let wheel = env.and_then(|e| {
            let t = e.torch.as_ref()?;
            Some((
                t.wheel_machine.clone()?,
                format!("torch's WHEEL tag in {}", e.site),
            ))
        });
        let arch = match &o.platform {
            Some(p) => Some((p.trim().to_string(), "--platform".to_string())),
            None if wheel.is_some() => wheel,
            None => snap
                .platform
                .as_ref()
                .and_then(|p| p.arch.get().map(|a| (a.clone(), p.arch.source.clone()))),
        };
        let (platform, platform_name) = match arch {
            Some((name, source)) => (
                Platform::from_arch(&name).map(|p| Given::new(p, source)),
                name,
            ),
            None => (
                Some(Given::new(
                    Platform::X86_64,
                    "assumed: the architecture was not read",
                )),
                "x86_64".into(),
            ),
        };
        let installer = match o.installer {
            Some(i) => Given::new(i, "--installer"),
            None => env
                .and_then(|e| e.installer.as_ref())
                .and_then(|f| {
                    let name = f.get()?;
                    Some(Given::new(Installer::from_name(name)?, f.source.clone()))
                })
                .unwrap_or_else(|| Given::new(Installer::Pip, "default")),
        };
        let cuda = o.cuda.as_deref().and_then(WantedCuda::parse);
        let env = env.filter(|_| !o.fresh);
        let installed = env.map(installed_of).unwrap_or_default();
        let torch_cuda = env.and_then(|e| e.torch.as_ref()?.cuda.clone());
        let torch_cudnn_major = env.and_then(|e| {
            e.torch.as_ref()?;
            e.nvidia_wheels
                .iter()
                .find(|w| w.name.starts_with("nvidia-cudnn"))
                .and_then(|w| w.version.split('.').next()?.parse().ok())
        });
        let nvcc = snap.toolkit_in_use().and_then(|t| {
            let v = t.version.get().and_then(|v| CudaVersion::parse(v))?;
            Some(Given::new(v, t.version.source.clone()))
        });
        let torch_arches = env.and_then(|e| {
            let list = &e.torch.as_ref()?.arches.as_ref()?.get()?.arch_list;
            let num = |prefix: &str| -> Vec<u32> {
                list.iter()
                    .filter_map(|a| a.strip_prefix(prefix)?.parse().ok())
                    .collect()
            };
            (!list.is_empty()).then(|| (num("sm_"), num("compute_")))
        });
        let gpu_seen = !gpus.is_empty() || (o.gpus.is_empty() && snap.nvidia_hardware_seen());
        let torch_from_conda = env
            .and_then(|e| e.torch.as_ref())
            .is_some_and(|t| t.conda_build.is_some());
        // --fresh asks for a new environment: no interpreter of the inspected one.
        let target = env.map(super::commands::Target::of).unwrap_or_default();
        Machine {
            target,
            with_frameworks: Vec::new(),
            shared_cuda_major: None,
            torch_arches,
            torch_from_conda,
            gpu_seen,
            driver,
            gpus,
            python,
            platform,
            platform_name,
            installer,
            cuda,
            installed,
            torch_cuda,
            torch_cudnn_major,
            nvcc,
        }
    }

    /// This machine with torch about to be replaced: nothing installed of it counts.
    pub fn without_torch(&self) -> Machine {
        let mut m = self.clone();
        m.installed.retain(|i| i.name != "torch");
        m.torch_cuda = None;
        m.torch_cudnn_major = None;
        m.torch_arches = None;
        m
    }

    /// This machine once `pick` (a torch build) is installed.
    pub fn with_torch(&self, pick: &super::Pick) -> Machine {
        let mut m = self.without_torch();
        for p in &pick.pins {
            m.installed.retain(|i| i.name != p.name);
            let version = match &pick.torch_backend {
                Some(b) => format!("{}+{b}", p.version),
                None => p.version.clone(),
            };
            m.installed.push(Installed {
                name: p.name.clone(),
                version,
                requires_torch: None,
            });
        }
        m.torch_cuda = pick.cuda.clone();
        // The cuDNN of the build stays known only where the release does not change.
        let same_release = self
            .installed("torch")
            .zip(pick.pins.first())
            .is_some_and(|(i, p)| i.version.split('+').next() == Some(p.version.as_str()));
        m.torch_cudnn_major = self.torch_cudnn_major.filter(|_| same_release);
        m
    }

    pub fn installed(&self, name: &str) -> Option<&Installed> {
        self.installed.iter().find(|i| i.name == name)
    }

    /// "driver 550.54.15 (CUDA 12.x by minor-version compatibility, native 12.4), RTX 5090
    /// (sm_120), Python 3.12, x86_64, pip".
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        parts.push(match &self.driver {
            Some(d) => {
                // From CUDA 11 a driver runs every minor release of its CUDA major (minor-
                // version compatibility): a cu126 pick on a 12.4 driver is right, and says so.
                let max = crate::compat::driver::max_cuda_for_driver(&d.version)
                    .map(|m| match m.cuda.major {
                        major if major >= 11 && !m.newer_than_known => format!(
                            " (CUDA {major}.x by minor-version compatibility, native {})",
                            m.cuda
                        ),
                        _ if m.newer_than_known => format!(" (CUDA ≥ {})", m.cuda),
                        _ => format!(" (CUDA ≤ {})", m.cuda),
                    })
                    .unwrap_or_default();
                format!("driver {}{max}", d.version.as_str())
            }
            None => "no driver seen".into(),
        });
        if self.gpus.is_empty() {
            parts.push("no GPU seen".into());
        } else {
            let mut seen: Vec<String> = Vec::new();
            for g in &self.gpus {
                let s = if g.name.starts_with("sm_") {
                    g.name.clone()
                } else {
                    format!("{} (sm_{}{})", g.name, g.cc.major, g.cc.minor)
                };
                if !seen.contains(&s) {
                    seen.push(s);
                }
            }
            parts.push(seen.join(", "));
        }
        parts.push(match &self.python {
            Some(p) => format!("Python {}.{}", p.value.0, p.value.1),
            None => "Python unknown".into(),
        });
        parts.push(self.platform_name.clone());
        parts.push(self.installer.value.name().into());
        parts.join(", ")
    }
}

/// The environment `python` gives (the probe's primary one).
fn target_env(snap: &Snapshot) -> Option<&PythonEnv> {
    let envs = snap.python.as_ref()?;
    envs.iter().find(|e| e.primary).or(envs.first())
}

fn installed_of(e: &PythonEnv) -> Vec<Installed> {
    let mut out: Vec<Installed> = Vec::new();
    if let Some(t) = &e.torch {
        out.push(Installed {
            name: "torch".into(),
            version: t
                .version
                .get()
                .cloned()
                .unwrap_or_else(|| t.dist_version.clone()),
            requires_torch: None,
        });
    }
    for d in e.companions.iter().chain(&e.frameworks) {
        out.push(Installed {
            name: d.name.clone(),
            version: d.version.clone(),
            requires_torch: d.requires_torch.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_by_capability_or_name() {
        assert_eq!(
            parse_gpu("sm_120").unwrap().cc,
            ComputeCapability::new(12, 0)
        );
        assert_eq!(parse_gpu("8.6").unwrap().cc, ComputeCapability::new(8, 6));
        assert_eq!(parse_gpu("90").unwrap().cc, ComputeCapability::new(9, 0));
        assert_eq!(
            parse_gpu("GeForce GTX 1080").unwrap().cc,
            ComputeCapability::new(6, 1)
        );
        assert!(parse_gpu("sm_13").is_err());
        assert!(parse_gpu("banana").is_err());
    }

    #[test]
    fn wanted_cuda_forms() {
        let w = WantedCuda::parse("cu128").unwrap();
        assert!(w.accepts(CudaVersion::new(12, 8)));
        assert!(!w.accepts(CudaVersion::new(12, 6)));
        let any12 = WantedCuda::parse("12").unwrap();
        assert!(any12.accepts(CudaVersion::new(12, 6)));
        assert!(!any12.accepts(CudaVersion::new(13, 0)));
        assert_eq!(WantedCuda::parse("12.4").unwrap().text(), "CUDA 12.4");
        assert!(WantedCuda::parse("twelve").is_none());
        assert_eq!(parse_python("3.12"), Some((3, 12)));
    }
}
