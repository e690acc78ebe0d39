//! The one registry of every environment variable gpudoctor reads, and the
//! captured process environment that probes read them from.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Which GPUs a CUDA process sees, and in which order.
    Visibility,
    /// Debugger, profiler and injection switches that slow or alter every CUDA process.
    Debug,
    /// PyTorch's caching-allocator configuration.
    Allocator,
    /// Where toolkits and libraries are looked up.
    Paths,
    /// Compiling CUDA code: extension builds and JIT-compiled ops.
    Build,
    /// NVIDIA's collective-communication library.
    Nccl,
    /// The container or scheduler around the process.
    Container,
    /// Read by gpudoctor itself.
    Tool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVar {
    pub name: &'static str,
    pub category: Category,
    pub purpose: &'static str,
    /// A debugging switch GD013 reports when it is left set.
    pub left_set: Option<LeftSet>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftSet {
    /// Counts only with a truthy value (not empty, 0, false, off or no).
    pub truthy_only: bool,
    /// What it does to every CUDA process ("NAME <effect>.").
    pub effect: &'static str,
}

/// `NAME: Category, "purpose";`, with `=> set "effect"` or `=> truthy "effect"` before the
/// `;` for a switch GD013 reports when left set (any value, or a truthy one).
macro_rules! env_registry {
    ($( $ident:ident : $category:ident, $purpose:literal $(=> $when:ident $effect:literal)?; )*) => {
        $( #[allow(non_upper_case_globals)] pub const $ident: EnvVar = EnvVar { name: stringify!($ident), category: Category::$category, purpose: $purpose, left_set: env_registry!(@left $($when $effect)?) }; )*
        /// Every variable gpudoctor reads, in registry order (GD013 reports in this order).
        pub const ALL: &[EnvVar] = &[ $( $ident, )* ];
    };
    (@left) => { None };
    (@left set $effect:literal) => { Some(LeftSet { truthy_only: false, effect: $effect }) };
    (@left truthy $effect:literal) => { Some(LeftSet { truthy_only: true, effect: $effect }) };
}

env_registry! {
    CUDA_VISIBLE_DEVICES: Visibility, "GPUs (indices, UUIDs or MIG UUIDs) a CUDA process may use";
    NVIDIA_VISIBLE_DEVICES: Visibility, "GPUs the NVIDIA container runtime passes into a container";
    NVIDIA_DRIVER_CAPABILITIES: Visibility, "driver libraries the NVIDIA container runtime mounts (compute, utility, ...)";
    CUDA_DEVICE_ORDER: Visibility, "FASTEST_FIRST (default) or PCI_BUS_ID: how CUDA numbers GPUs";
    CUDA_LAUNCH_BLOCKING: Debug, "1 makes every kernel launch synchronous (debugging only)";
    CUDA_DISABLE_PTX_JIT: Debug, "1 stops the driver from JIT-compiling PTX: code without SASS for the GPU fails (error 223)";
    CUDA_FORCE_PTX_JIT: Debug, "1 makes the driver JIT-compile PTX even where SASS exists (slow first launches)";
    CUDA_MODULE_LOADING: Debug, "LAZY (default since CUDA 11.7/12.2) or EAGER kernel loading";
    NSIGHT_CUDA_DEBUGGER: Debug, "set by the Nsight/cuda-gdb debugger" => set "marks the process as running under the CUDA debugger, which changes how the driver schedules and reports work";
    CUDA_INJECTION64_PATH: Debug, "library injected into every CUDA process (profilers, sanitizers)" => set "makes every CUDA process load this library at start-up (a profiler or sanitizer), which adds overhead and can change behaviour";
    CUDA_INJECTION32_PATH: Debug, "library injected into every 32-bit CUDA process (profilers, sanitizers)" => set "makes every 32-bit CUDA process load this library at start-up (a profiler or sanitizer)";
    CUDA_AUTO_BOOST: Debug, "legacy GPU-boost override" => set "overrides the GPU's boost-clock policy (a legacy switch)";
    CUDA_ENABLE_COREDUMP_ON_EXCEPTION: Debug, "1 writes a GPU core dump on every device exception" => truthy "writes a GPU core dump on every device exception, which is slow and fills the disk";
    CUDA_COREDUMP_FILE: Debug, "where GPU core dumps are written" => set "names where GPU core dumps go: core dumps are being configured";
    CUDA_DEVICE_WAITS_ON_EXCEPTION: Debug, "1 makes a faulting kernel wait for a debugger instead of failing" => truthy "makes a faulting kernel wait for a debugger to attach instead of failing: jobs hang instead of erroring";
    CUDA_PROFILE: Debug, "legacy command-line profiler switch" => truthy "turns on the legacy command-line profiler, which serialises and logs every launch";
    COMPUTE_PROFILE: Debug, "legacy command-line profiler switch" => truthy "turns on the legacy command-line profiler, which serialises and logs every launch";
    OPENCL_PROFILE: Debug, "legacy OpenCL profiler switch" => truthy "turns on the legacy OpenCL profiler";
    PYTORCH_NO_CUDA_MEMORY_CACHING: Debug, "1 disables PyTorch's caching allocator (debugging only)" => truthy "disables PyTorch's caching allocator: every tensor allocation calls cudaMalloc/cudaFree, a large slowdown";
    PYTORCH_CUDA_ALLOC_CONF: Allocator, "PyTorch CUDA caching-allocator options (older name)";
    PYTORCH_ALLOC_CONF: Allocator, "PyTorch caching-allocator options (name read first since torch 2.9)";
    CUDA_HOME: Paths, "CUDA toolkit used by build tools such as torch.utils.cpp_extension";
    CUDA_PATH: Paths, "CUDA toolkit (the Windows installer's name, also read on Linux)";
    CUDA_ROOT: Paths, "CUDA toolkit (older build systems)";
    LD_LIBRARY_PATH: Paths, "directories the dynamic loader searches before its cache";
    LD_PRELOAD: Paths, "libraries loaded into every process before all others";
    PATH: Paths, "where commands such as nvcc and python are found";
    CONDA_PREFIX: Paths, "the active conda environment";
    VIRTUAL_ENV: Paths, "the active Python virtual environment";
    HOME: Paths, "home directory: pip install --user puts packages under ~/.local";
    PYENV_ROOT: Paths, "where pyenv keeps its Python versions (its shims on PATH choose one)";
    PYENV_VERSION: Paths, "the pyenv version the shims run, when set";
    TORCH_CUDA_ARCH_LIST: Build, "GPU architectures torch.utils.cpp_extension compiles extensions for";
    TORCH_EXTENSIONS_DIR: Build, "where torch.utils.cpp_extension caches JIT-built extensions";
    NVCC_APPEND_FLAGS: Build, "flags appended to every nvcc command line";
    NVCC_PREPEND_FLAGS: Build, "flags prepended to every nvcc command line";
    NVIDIA_DISABLE_REQUIRE: Container, "true turns off the NVIDIA container runtime's check of NVIDIA_REQUIRE_* against the host driver";
    CUDA_VERSION: Container, "the CUDA version NVIDIA's CUDA base images were built with (the runtime requires it when NVIDIA_REQUIRE_CUDA is absent)";
    APPTAINER_CONTAINER: Container, "the image an Apptainer container runs";
    SINGULARITY_CONTAINER: Container, "the image a Singularity container runs";
    KUBERNETES_SERVICE_HOST: Container, "set in every Kubernetes pod";
    WSL_DISTRO_NAME: Container, "the WSL distribution this session runs in (set by WSL in every session; named in `wsl --set-version` for WSL 1)";
    NODE_NAME: Container, "the Kubernetes node, when the pod spec passes it from the downward API (spec.nodeName)";
    POD_NAME: Container, "the Kubernetes pod, when the pod spec passes it from the downward API (metadata.name)";
    POD_NAMESPACE: Container, "the Kubernetes namespace, from the downward API (metadata.namespace)";
    SLURM_JOB_ID: Container, "the Slurm job this process runs in";
    SLURM_JOB_NAME: Container, "the Slurm job's name";
    SLURM_STEP_ID: Container, "the Slurm job step";
    SLURM_PROCID: Container, "the task's rank within the Slurm job step";
    SLURMD_NODENAME: Container, "the Slurm node this task runs on";
    SLURM_CLUSTER_NAME: Container, "the Slurm cluster";
    container: Container, "set by systemd-nspawn, podman and LXC inside their containers";
    NO_COLOR: Tool, "non-empty turns colour off, even over CLICOLOR_FORCE (https://no-color.org); --color always wins over it";
    CLICOLOR_FORCE: Tool, "non-zero forces colour even when stdout is not a terminal";
    FORCE_COLOR: Tool, "like CLICOLOR_FORCE: set, and not 0 or false, forces colour";
    CLICOLOR: Tool, "0 turns colour off (unless CLICOLOR_FORCE or FORCE_COLOR forces it)";
    TERM: Tool, "dumb: no colour, and ASCII marks and arrows (+ x - -> ...) in place of the Unicode ones";
    LC_ALL: Tool, "the locale: a set locale that is not UTF-8 (C, POSIX, en_US.ISO-8859-1) gets ASCII marks";
    LC_CTYPE: Tool, "the locale's character set, when LC_ALL is not set";
    LANG: Tool, "the locale, when neither LC_ALL nor LC_CTYPE is set";
    GPUDOCTOR_FAULT_PROBE_DELAY: Tool, "fault injection for tests: NAME:MS delays probe NAME by MS milliseconds";
    GPUDOCTOR_FAULT_PROBE_PANIC: Tool, "fault injection for tests: NAME makes probe NAME panic";
    COLUMNS: Tool, "terminal width when the terminal cannot be asked: wrapping explanations, fitting the smoke test's progress line";
    GPUDOCTOR_NVML_LIB: Tool, "NVML library to load instead of the loader's libnvidia-ml.so.1 (same as --nvml-lib)";
    GPUDOCTOR_CUDA_LIB: Tool, "libcuda to load for the smoke test instead of the loader's libcuda.so.1 (same as --cuda-lib)";
    GPUDOCTOR_NCCL_LIB: Tool, "libnccl to load for the smoke test's --nccl step instead of the one the loader gives torch (same as --nccl-lib)";
    GPUDOCTOR_CONFIG: Tool, "a configuration file read after the system's and the user's (same as --config)";
    GPUDOCTOR_FAIL_ON: Tool, "policy: the severity that fails the run (as --fail-on)";
    GPUDOCTOR_ONLY: Tool, "policy: probes and codes to run and report, comma-separated (as --only)";
    GPUDOCTOR_SKIP: Tool, "policy: probes and codes to skip, comma-separated (as --skip)";
    GPUDOCTOR_SEVERITY: Tool, "policy: per-code severity, e.g. GD038=ignore,GD012=warning (as [severity] in the configuration)";
    GPUDOCTOR_TIMEOUT: Tool, "policy: the time budget in seconds (as --timeout)";
    GPUDOCTOR_EXPECT_GPUS: Tool, "policy: the GPUs each node must have (as --expect-gpus)";
    GPUDOCTOR_EXPECT_DRIVER: Tool, "policy: the driver each node must run, a version or a branch (as driver in the configuration)";
    GPUDOCTOR_EXPECT_GPU_MODEL: Tool, "policy: the GPU model each node must have, part of its name (as gpu_model in the configuration)";
    GPUDOCTOR_FORMAT: Tool, "the output format of commands that can produce it (as --format)";
    GPUDOCTOR_COLOR: Tool, "auto, always or never (as --color)";
    GPUDOCTOR_SMOKE: Tool, "0 or false: check runs no smoke test (as --no-smoke)";
    GPUDOCTOR_MATMUL_SIZE: Tool, "smoke test: N of the N×N matmul (as --matmul-size)";
    GPUDOCTOR_MEM_FRACTION: Tool, "smoke test: share of free memory the allocation probe fills (as --mem-fraction)";
    GPUDOCTOR_TRANSFER_SIZE: Tool, "smoke test: MiB per host-device copy (as --transfer-size)";
    XDG_CONFIG_HOME: Tool, "where the user's configuration lives (default ~/.config): gpudoctor/config.toml";
}

/// Variables read by prefix, each shown under its category.
pub const PREFIXES: &[(&str, Category)] = &[
    ("NCCL_", Category::Nccl),
    // NVIDIA_REQUIRE_CUDA, NVIDIA_REQUIRE_DRIVER, ...: conditions the NVIDIA runtime checks.
    ("NVIDIA_REQUIRE_", Category::Container),
];

/// Name parts that mark a value as secret: it is never printed.
pub(crate) const SECRET_MARKERS: &[&str] = &["TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"];

pub fn lookup(name: &str) -> Option<&'static EnvVar> {
    ALL.iter().find(|v| v.name == name)
}

pub fn category_of(name: &str) -> Option<Category> {
    lookup(name).map(|v| v.category).or_else(|| {
        PREFIXES
            .iter()
            .find(|(p, _)| name.starts_with(p))
            .map(|(_, c)| *c)
    })
}

pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|m| upper.contains(m))
        || upper
            .split('_')
            .any(|part| part == "KEY" || part == "APIKEY" || part.ends_with("APIKEY"))
}

impl Category {
    pub(crate) const ALL: [Category; 8] = [
        Category::Visibility,
        Category::Debug,
        Category::Allocator,
        Category::Paths,
        Category::Build,
        Category::Nccl,
        Category::Container,
        Category::Tool,
    ];

    /// Heading and description for docs/environment.md.
    pub(crate) fn describe(self) -> (&'static str, &'static str) {
        match self {
            Category::Visibility => (
                "Visibility",
                "Which GPUs a CUDA process sees, and in which order.",
            ),
            Category::Debug => (
                "Debugging and profiling",
                "Debugger, profiler and injection switches that slow or alter every CUDA process.",
            ),
            Category::Allocator => (
                "PyTorch allocator",
                "PyTorch's caching-allocator configuration.",
            ),
            Category::Paths => (
                "Paths",
                "Where toolkits, libraries and Python environments are looked up.",
            ),
            Category::Build => (
                "Building CUDA code",
                "Compiling CUDA code: extension builds and JIT-compiled ops.",
            ),
            Category::Nccl => (
                "NCCL",
                "NVIDIA's collective-communication library. GD076 checks `NCCL_SOCKET_IFNAME` and `NCCL_IB_HCA` against the interfaces and RDMA devices here, `NCCL_P2P_DISABLE`, `NCCL_SHM_DISABLE` and `NCCL_IB_DISABLE` left set, `NCCL_P2P_LEVEL` and `NCCL_NET_GDR_LEVEL` values NCCL ignores, and `NCCL_DEBUG=INFO` left on ([codes.md](codes.md#gd076)).",
            ),
            Category::Container => (
                "Container and scheduler",
                "The container or scheduler around the process; they name the node in the report.",
            ),
            Category::Tool => (
                "gpudoctor itself",
                "Read by gpudoctor for its own behaviour.",
            ),
        }
    }
}

/// The process environment, captured once. Reads go through registry entries.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: BTreeMap<OsString, OsString>,
}

impl Env {
    pub fn from_process() -> Self {
        Env {
            vars: std::env::vars_os().collect(),
        }
    }

    /// An environment given as pairs: a test's, or an image's configured Env.
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    pub fn get(&self, var: EnvVar) -> Option<&OsStr> {
        self.vars.get(OsStr::new(var.name)).map(|v| v.as_os_str())
    }

    pub fn get_str(&self, var: EnvVar) -> Option<String> {
        self.get(var).map(|v| v.to_string_lossy().into_owned())
    }

    /// Every registered variable that is set, plus every prefixed one, sorted by name.
    pub fn registered_set(&self) -> Vec<(String, &OsStr)> {
        self.vars
            .iter()
            .filter_map(|(k, v)| {
                let name = k.to_str()?;
                category_of(name).map(|_| (name.to_string(), v.as_os_str()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique() {
        let mut names: Vec<_> = ALL.iter().map(|v| v.name).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
    }

    #[test]
    fn gd013_switches_in_report_order() {
        let switches: Vec<(&str, bool)> = ALL
            .iter()
            .filter_map(|v| Some((v.name, v.left_set?.truthy_only)))
            .collect();
        assert_eq!(
            switches,
            [
                ("NSIGHT_CUDA_DEBUGGER", false),
                ("CUDA_INJECTION64_PATH", false),
                ("CUDA_INJECTION32_PATH", false),
                ("CUDA_AUTO_BOOST", false),
                ("CUDA_ENABLE_COREDUMP_ON_EXCEPTION", true),
                ("CUDA_COREDUMP_FILE", false),
                ("CUDA_DEVICE_WAITS_ON_EXCEPTION", true),
                ("CUDA_PROFILE", true),
                ("COMPUTE_PROFILE", true),
                ("OPENCL_PROFILE", true),
                ("PYTORCH_NO_CUDA_MEMORY_CACHING", true)
            ]
        );
        assert!(ALL
            .iter()
            .all(|v| v.left_set.is_none() || v.category == Category::Debug));
    }

    #[test]
    fn secret_names() {
        assert!(is_secret_name("HF_TOKEN"));
        assert!(is_secret_name("NCCL_SECRET_THING"));
        assert!(is_secret_name("AWS_SECRET_ACCESS_KEY"));
        assert!(is_secret_name("MY_API_KEY"));
        assert!(is_secret_name("DB_Password"));
        assert!(!is_secret_name("NCCL_IB_PKEY"));
        assert!(!is_secret_name("CUDA_VISIBLE_DEVICES"));
    }

    #[test]
    fn prefixed_variables_are_registered() {
        let env = Env::from_pairs([("NCCL_DEBUG", "INFO"), ("EDITOR", "vi")]);
        let set = env.registered_set();
        assert_eq!(set.len(), 1);
        assert_eq!(set[0].0, "NCCL_DEBUG");
    }
}
