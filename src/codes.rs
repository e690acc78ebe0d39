//! The registry of finding codes: stable identifiers, one-line titles, the severities each
//! code's findings can take, and the long explanations `gpudoctor explain` prints
//! (src/explain/GDxxx.md). Sorted by code. `docs/codes.md` is rendered from it
//! (`render::reference::codes_markdown`; tests/it/docs.rs keeps the file in step).

pub use crate::findings::Severity;

pub struct CodeInfo {
    pub code: &'static str,
    pub title: &'static str,
    /// Every severity a finding with this code can have, worst first. `rules::evaluate`
    /// checks it in debug builds, so a rule that reports another one fails the tests.
    pub severities: &'static [Severity],
    pub explanation: &'static str,
    /// An error with this code stops every CUDA program on the machine (or every one the
    /// environment's runtime builds): no kernel driver bound, no device node to open, no usable
    /// libcuda or runtime, every GPU hidden, CUDA unable to start. The headline then says
    /// "CUDA will not work here".
    pub stops_all_cuda: bool,
}

impl CodeInfo {
    /// The explanation without its `# GDxxx: title` heading.
    pub fn body(&self) -> &'static str {
        let text = self.explanation;
        let rest = match text.strip_prefix('#') {
            Some(_) => text.split_once('\n').map_or("", |(_, r)| r),
            None => text,
        };
        rest.trim()
    }
}

/// Each code is also a constant (`codes::GD033`): a misspelt code does not compile.
macro_rules! stops_all_cuda {
    () => {
        false
    };
    (stops_all_cuda) => {
        true
    };
}

macro_rules! codes {
    ($( $code:ident [$($severity:ident),+] $($stops:ident)? => $title:literal; )*) => {
        $( pub const $code: &str = stringify!($code); )*

        pub const CODES: &[CodeInfo] = &[
            $( CodeInfo {
                code: $code,
                title: $title,
                severities: &[$(Severity::$severity),+],
                explanation: include_str!(concat!("explain/", stringify!($code), ".md")),
                stops_all_cuda: stops_all_cuda!($($stops)?),
            }, )*
        ];
    };
}

codes! {
    GD001 [Error, Info] => "No NVIDIA GPU found (an error for `gpudoctor devices`, which then shows nothing)";
    GD002 [Error] stops_all_cuda => "NVIDIA kernel module is not loaded";
    GD003 [Error] stops_all_cuda => "GPU is claimed by a conflicting driver (nouveau, nova_core, nvidiafb)";
    GD004 [Warning] stops_all_cuda => "GPU is reserved for virtual-machine passthrough (vfio-pci)";
    GD005 [Error] => "nvidia is loaded but a GPU has no driver bound";
    GD006 [Error] stops_all_cuda => "nvidia_uvm is not loaded or /dev/nvidia-uvm is missing";
    GD007 [Error, Warning] stops_all_cuda => "NVIDIA device nodes are missing";
    GD008 [Error] stops_all_cuda => "NVIDIA device nodes are not readable and writable by this user";
    GD009 [Error] stops_all_cuda => "CUDA_VISIBLE_DEVICES hides every GPU";
    GD010 [Error, Warning] => "CUDA_VISIBLE_DEVICES names a GPU that does not exist";
    GD011 [Error, Warning] stops_all_cuda => "CUDA_VISIBLE_DEVICES is malformed";
    GD012 [Warning] => "CUDA_LAUNCH_BLOCKING is set: every kernel launch is synchronous";
    GD013 [Warning] => "A debugger, profiler or injection variable is set";
    GD014 [Error] => "PyTorch allocator configuration is invalid";
    GD015 [Warning] => "PyTorch allocator configuration is partly ignored";
    GD016 [Error, Warning] => "A probe could not finish or read what it needed";
    GD017 [Error, Warning] stops_all_cuda => "CUDA toolkit or runtime is newer than the driver supports";
    GD018 [Error] stops_all_cuda => "Kernel module and user-space driver libraries differ (upgrade without reboot)";
    GD019 [Warning] => "nvcc on PATH and CUDA_HOME name different toolkits";
    GD020 [Warning, Info] => "An older toolkit wins over a newer installed one";
    GD021 [Error, Warning, Info] => "CUDA_HOME/CUDA_PATH/CUDA_ROOT does not name a usable toolkit";
    GD022 [Warning, Info] => "No CUDA toolkit found";
    GD023 [Error, Warning] => "The toolkit's compiler cannot target this GPU";
    GD024 [Error, Warning] stops_all_cuda => "The loader picks a stub libcuda";
    GD025 [Error, Warning, Info] => "A forward-compatibility libcuda is on the loader path";
    GD026 [Warning, Info] => "CUDA libraries on the loader path are of another major version";
    GD027 [Error, Warning] stops_all_cuda => "WSL: the Windows driver's libraries are not the ones loaded";
    GD028 [Error] => "A CUDA library's dependency cannot be found by the loader";
    GD029 [Error] => "NVML cannot be loaded although the kernel module is";
    GD030 [Error, Info] => "NVML fails to initialise";
    GD031 [Error, Warning] => "NVML hangs or crashes";
    GD032 [Error, Warning] => "A GPU NVML counts cannot be opened or queried, has fallen off the bus, or needs a reset/reboot";
    GD033 [Error, Warning] => "GPU memory errors: uncorrectable ECC, pending retirement or remap, failed remap";
    GD034 [Warning] => "PCIe link trained below its width (or generation under load)";
    GD035 [Warning] => "Clocks throttled by thermal or power protection";
    GD036 [Error, Warning] => "GPU exclusive or prohibited, or its memory held by other processes";
    GD037 [Warning, Info] => "MIG is enabled (or a MIG change is pending)";
    GD038 [Info] => "Persistence mode is off";
    GD039 [Error] => "NVLink fabric not ready: Fabric Manager";
    GD040 [Warning] => "NVML's GPUs and the /dev/nvidiaN nodes disagree";
    GD041 [Error] => "torch is a CPU-only (or ROCm) build on an NVIDIA GPU machine";
    GD042 [Error] stops_all_cuda => "The driver is too old for torch's CUDA";
    GD043 [Error] => "torch has no kernels for this GPU's architecture";
    GD044 [Error, Warning] => "torch's nvidia-* wheels are missing or not the pinned versions";
    GD045 [Warning, Info] => "LD_LIBRARY_PATH shadows torch's own CUDA libraries";
    GD046 [Error, Warning, Info] => "torchvision/torchaudio do not match torch";
    GD047 [Error, Warning] => "The extension-build toolkit's CUDA major differs from torch's";
    GD048 [Error, Warning] => "torch fails to import or sees no CUDA (--python-import)";
    GD049 [Warning] => "The torch that runs differs from the files, or loads foreign CUDA libraries";
    GD050 [Warning, Info] => "Frameworks in one environment need different CUDA or cuDNN majors";
    GD051 [Warning] => "/dev/shm in the container is too small for NCCL and DataLoader workers";
    GD052 [Info] => "The GPU lacks features PyTorch recipes assume (bf16, TF32, torch.compile, FlashAttention-2)";
    GD053 [Error, Warning] stops_all_cuda => "The smoke test could not start CUDA (libcuda missing or unusable, cuInit failed, no device)";
    GD054 [Error, Warning] => "CUDA and NVML disagree about the GPUs or the driver version";
    GD055 [Error, Warning] => "A GPU refused a CUDA context or could not load kernels";
    GD056 [Error] => "A GPU computed a wrong matrix product, or the matmul failed";
    GD057 [Error, Warning] => "GPU memory failed the allocation probe (corrupted words, or far less allocatable than free)";
    GD058 [Error, Warning] => "Host-to-GPU copies fail, cannot use pinned memory, or run far below the PCIe link's bandwidth";
    GD059 [Error, Warning] stops_all_cuda => "The smoke test hung or crashed inside the CUDA driver";
    GD060 [Error, Warning, Info] => "A CUDA-using native module will not load: a library, version or symbol the loader cannot give it";
    GD061 [Error, Warning] => "The cuDNN the loader gives torch is one torch refuses";
    GD062 [Error, Info] => "A container was started without GPUs (an error when it is built to use them, unless they were withheld on purpose)";
    GD063 [Error, Warning] => "The image's NVIDIA_REQUIRE_CUDA (or CUDA_VERSION) is not met by the host's driver: the NVIDIA runtime refuses to start it";
    GD064 [Error, Warning] => "NVIDIA_DRIVER_CAPABILITIES leaves out compute (no libcuda) or utility (no NVML, nvidia-smi)";
    GD065 [Error] => "The container's device cgroup no longer lets it open its GPUs (NVML: Unknown Error after a systemd reload)";
    GD066 [Error] => "A container engine on this GPU host has no NVIDIA integration";
    GD067 [Error, Warning] => "Docker is installed as a snap";
    GD068 [Error] => "A CDI specification of the NVIDIA GPUs is stale";
    GD069 [Warning] => "NVIDIA device nodes lack /dev/char links under the systemd cgroup driver";
    GD070 [Warning] => "The NVIDIA Container Toolkit is too old or has known vulnerabilities";
    GD071 [Error] => "The image is built for another CPU architecture than this host's";
    GD072 [Error, Warning] => "PCIe ACS redirects peer-to-peer traffic between GPUs behind a PCIe switch to the root complex";
    GD073 [Warning, Info] => "The IOMMU translates DMA on a multi-GPU host, or GPUs share an IOMMU group";
    GD074 [Error] => "A peer-to-peer copy between two GPUs hung, failed or delivered wrong data";
    GD075 [Warning, Info] => "Peer-to-peer copies run far below the link, or CUDA and NVML disagree about peer access";
    GD076 [Error, Warning, Info] => "NCCL's environment names interfaces or HCAs that are not here, or switches its transports off";
    GD077 [Warning, Info] => "GPUDirect RDMA is off: nvidia_peermem is not loaded on a node with InfiniBand/RoCE HCAs";
    GD078 [Warning] => "torch loads a libnccl from outside its wheel, of another version than it pins";
    GD079 [Error, Warning] => "The NCCL all-reduce test failed: NCCL missing, init failed, a wrong sum or a hang";
    GD080 [Error, Warning, Info] => "The kernel log holds an Xid or SXid fault of a GPU, its memory, NVLink or firmware";
    GD081 [Info] => "A program faulted on a GPU (an application Xid: the GPU is fine)";
    GD082 [Error, Warning, Info] => "PCIe AER errors on a GPU or a bridge above one";
    GD083 [Error, Warning, Info] => "The driver could not bring a GPU up: RmInitAdapter failed, GSP timeout, fallen off the bus, open modules required";
    GD084 [Error, Warning, Info] => "PCIe AER error counters of a GPU's link grow while gpudoctor runs";
    GD085 [Warning, Info] => "NVLink error or PCIe replay counters of a GPU grow during the smoke test";
    GD086 [Warning] => "The preflight gate ran past its budget";
    GD087 [Error] => "The node is not the shape it is expected to have: fewer GPUs, another model or driver";
    GD088 [Error] stops_all_cuda => "WSL 1 has no GPU: CUDA runs only in WSL 2";
    GD089 [Error] => "The loaded NVIDIA kernel module flavour (open or proprietary) cannot drive a GPU";
    GD090 [Error, Warning] => "Device-to-device copies fail, or the GPU's memory serves them below DCGM's minimum for its SKU";
    GD091 [Warning] => "A GPU has fewer NVLinks up than the other GPUs of its model";
}

/// The severities a code can take, as the reference writes them: `error / warning`.
pub fn severity_text(info: &CodeInfo) -> String {
    info.severities
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Accepts `GD012`, `gd012`, `12` and `012`.
pub fn normalize(input: &str) -> Option<String> {
    let s = input.trim();
    let digits = match s.get(..2) {
        Some(prefix) if prefix.eq_ignore_ascii_case("gd") => &s[2..],
        _ => s,
    };
    if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    Some(format!("GD{n:03}"))
}

pub fn lookup(input: &str) -> Option<&'static CodeInfo> {
    let code = normalize(input)?;
    CODES.iter().find(|c| c.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_sorted_and_explained() {
        for pair in CODES.windows(2) {
            assert!(
                pair[0].code < pair[1].code,
                "{} then {}",
                pair[0].code,
                pair[1].code
            );
        }
        for c in CODES {
            assert!(
                c.explanation.trim().len() > 200,
                "{} needs a real explanation",
                c.code
            );
            assert!(!c.title.is_empty());
            assert!(
                !c.severities.is_empty() && c.severities.windows(2).all(|w| w[0] > w[1]),
                "{}: severities must be listed once each, worst first",
                c.code
            );
            assert!(
                c.explanation.starts_with(&format!("# {}", c.code)),
                "{} explanation heading",
                c.code
            );
        }
    }

    #[test]
    fn code_spellings() {
        assert_eq!(normalize("GD012").as_deref(), Some("GD012"));
        assert_eq!(normalize("gd012").as_deref(), Some("GD012"));
        assert_eq!(normalize("12").as_deref(), Some("GD012"));
        assert_eq!(normalize("x12"), None);
        assert_eq!(normalize("€1"), None);
        assert_eq!(normalize("gö"), None);
        assert_eq!(normalize(""), None);
        assert!(lookup("999").is_none());
    }
}
