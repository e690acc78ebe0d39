//! The registry of finding codes: stable identifiers, one-line titles and the long
//! explanations `gpudoctor explain` prints (src/explain/GDxxx.md). Sorted by code.

pub struct CodeInfo {
    pub code: &'static str,
    pub title: &'static str,
    pub explanation: &'static str,
}

macro_rules! codes {
    ($( $code:literal => $title:literal; )*) => {
        pub const CODES: &[CodeInfo] = &[
            $( CodeInfo { code: $code, title: $title, explanation: include_str!(concat!("explain/", $code, ".md")) }, )*
        ];
    };
}

codes! {
    "GD001" => "No NVIDIA GPU found";
    "GD002" => "NVIDIA kernel module is not loaded";
    "GD003" => "GPU is claimed by a conflicting driver (nouveau, nova_core, nvidiafb)";
    "GD004" => "GPU is reserved for virtual-machine passthrough (vfio-pci)";
    "GD005" => "nvidia is loaded but a GPU has no driver bound";
    "GD006" => "nvidia_uvm is not loaded or /dev/nvidia-uvm is missing";
    "GD007" => "NVIDIA device nodes are missing";
    "GD008" => "NVIDIA device nodes are not readable and writable by this user";
    "GD009" => "CUDA_VISIBLE_DEVICES hides every GPU";
    "GD010" => "CUDA_VISIBLE_DEVICES names a GPU that does not exist";
    "GD011" => "CUDA_VISIBLE_DEVICES is malformed";
    "GD012" => "CUDA_LAUNCH_BLOCKING is set: every kernel launch is synchronous";
    "GD013" => "A debugger, profiler or injection variable is set";
    "GD014" => "PyTorch allocator configuration is invalid";
    "GD015" => "PyTorch allocator configuration is partly ignored";
    "GD016" => "A probe could not finish or read what it needed";
    "GD017" => "CUDA toolkit or runtime is newer than the driver supports";
    "GD018" => "Kernel module and user-space driver libraries differ (upgrade without reboot)";
    "GD019" => "nvcc on PATH and CUDA_HOME name different toolkits";
    "GD020" => "An older toolkit wins over a newer installed one";
    "GD021" => "CUDA_HOME/CUDA_PATH/CUDA_ROOT does not name a usable toolkit";
    "GD022" => "No CUDA toolkit found";
    "GD023" => "The toolkit's compiler cannot target this GPU";
    "GD024" => "The loader picks a stub libcuda";
    "GD025" => "A forward-compatibility libcuda is on the loader path";
    "GD026" => "CUDA libraries on the loader path are of another major version";
    "GD027" => "WSL: the Windows driver's libraries are not the ones loaded";
    "GD028" => "A CUDA library's dependency cannot be found by the loader";
    "GD029" => "NVML cannot be loaded although the kernel module is";
    "GD030" => "NVML fails to initialise";
    "GD031" => "NVML hangs or crashes";
    "GD032" => "A GPU NVML counts cannot be opened or queried, has fallen off the bus, or needs a reset/reboot";
    "GD033" => "GPU memory errors: uncorrectable ECC, pending retirement or remap, failed remap";
    "GD034" => "PCIe link trained below its width (or generation under load)";
    "GD035" => "Clocks throttled by thermal or power protection";
    "GD036" => "GPU exclusive or prohibited, or its memory held by other processes";
    "GD037" => "MIG is enabled (or a MIG change is pending)";
    "GD038" => "Persistence mode is off";
    "GD039" => "NVLink fabric not ready: Fabric Manager";
    "GD040" => "NVML's GPUs and the /dev/nvidiaN nodes disagree";
    "GD041" => "torch is a CPU-only (or ROCm) build on an NVIDIA GPU machine";
    "GD042" => "The driver is too old for torch's CUDA";
    "GD043" => "torch has no kernels for this GPU's architecture";
    "GD044" => "torch's nvidia-* wheels are missing or not the pinned versions";
    "GD045" => "LD_LIBRARY_PATH shadows torch's own CUDA libraries";
    "GD046" => "torchvision/torchaudio do not match torch";
    "GD047" => "The extension-build toolkit's CUDA major differs from torch's";
    "GD048" => "torch fails to import or sees no CUDA (--python-import)";
    "GD049" => "The torch that runs differs from the files, or loads foreign CUDA libraries";
    "GD050" => "Frameworks in one environment need different CUDA or cuDNN majors";
    "GD051" => "/dev/shm in the container is too small for NCCL and DataLoader workers";
    "GD052" => "The GPU lacks features PyTorch recipes assume (bf16, TF32, torch.compile, FlashAttention-2)";
    "GD053" => "The smoke test could not start CUDA (libcuda missing or unusable, cuInit failed, no device)";
    "GD054" => "CUDA and NVML disagree about the GPUs or the driver version";
    "GD055" => "A GPU refused a CUDA context or could not load kernels";
    "GD056" => "A GPU computed a wrong matrix product, or the matmul failed";
    "GD057" => "GPU memory failed the allocation probe (corrupted words, or far less allocatable than free)";
    "GD058" => "Host-to-GPU copies fail, cannot use pinned memory, or run far below the PCIe link's bandwidth";
    "GD059" => "The smoke test hung or crashed inside the CUDA driver";
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
