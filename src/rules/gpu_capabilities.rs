//! GD052: what the GPU cannot do for PyTorch's common speed-ups (bf16 autocast, TF32,
//! torch.compile, FlashAttention-2, FP8), so a user learns it before a recipe silently falls
//! back or fails. From the compute capability (compat/capabilities.rs, each row sourced).

use super::{Outcome, Rule};
use crate::codes;
use crate::compat::capabilities::{capabilities_for, Support};
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "gpu_capabilities",
    codes: &[codes::GD052],
    views: &[],
    checks: "the GPU supports the PyTorch speed-ups recipes assume (bf16, TF32, torch.compile, FlashAttention-2)",
    judges: &[],
    run,
};

/// The capabilities training recipes take for granted.
const RECIPE_KEYS: &[&str] = &[
    "torch_bf16",
    "tf32_tensor_cores",
    "torch_compile_triton",
    "sdpa_flash",
    "flash_attention_2",
];

fn run(snap: &Snapshot) -> Outcome {
    let torch = snap.python.as_ref().is_some_and(|envs| {
        envs.iter()
            .any(|e| e.torch.as_ref().is_some_and(|t| t.kind() == "cuda"))
    });
    if !torch {
        return Outcome::NotApplicable("no CUDA build of torch installed".into());
    }
    let gpus = snap.known_gpus();
    if gpus.is_empty() {
        return Outcome::NotApplicable("no GPU whose compute capability is known".into());
    }
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for g in gpus {
        if seen.contains(&g.cc) {
            continue;
        }
        seen.push(g.cc);
        let lacking: Vec<(&str, Support, &str)> = capabilities_for(g.cc)
            .into_iter()
            .filter(|(c, s)| RECIPE_KEYS.contains(&c.key) && *s != Support::Yes)
            .map(|(c, s)| (c.title, s, c.note))
            .collect();
        if lacking.is_empty() {
            continue;
        }
        let names: Vec<String> = lacking
            .iter()
            .map(|(t, s, _)| {
                if *s == Support::Emulated {
                    format!("{t} (emulated, slow)")
                } else {
                    t.to_string()
                }
            })
            .collect();
        let mut f = Finding::new(codes::GD052, Severity::Info, format!("{} ({}) lacks: {}", g.name, g.cc.sm(), names.join(", ")))
            .detail("Recipes that assume an Ampere-or-newer GPU fall back or fail here: bf16 autocast runs emulated (or raises), TF32 does nothing, torch.compile may refuse the GPU (\"Found ... which is too old to be supported by the triton GPU compiler\"), and FlashAttention-2 kernels are not built for it. Use fp16 autocast with a GradScaler and the SDPA memory-efficient backend instead; `gpudoctor devices N` lists everything the GPU can and cannot do.")
            .evidence(Subject::GpuModel(g.name.clone()), format!("{}: compute capability {}", g.name, g.cc), g.source.clone());
        for (title, _, note) in &lacking {
            if !note.is_empty() {
                f = f.context(format!("{title}: {note}"), "compat/capabilities.rs");
            }
        }
        out.push(f);
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::nvml::Field;
    use crate::testing::*;

    #[test]
    fn a_hopper_gpu_has_every_recipe_speed_up() {
        assert_clean(run(&healthy()));
    }

    #[test]
    fn a_turing_gpu_lacks_bf16_and_flash_attention_as_info() {
        let mut s = healthy();
        for i in 0..2 {
            let g = nvml_gpu(&mut s, i);
            g.name = Field::Value("Tesla T4".into());
            g.compute_capability = Field::Value("7.5".into());
        }
        // One finding per model, not per GPU.
        let f = only(run(&s), codes::GD052, Severity::Info);
        assert!(f.title.starts_with("Tesla T4 (sm_75) lacks"), "{}", f.title);
        assert!(f.title.contains("FlashAttention-2"), "{}", f.title);
        assert!(!f.title.contains("torch.compile"), "{}", f.title);
    }

    #[test]
    fn not_applicable_without_cuda_torch_or_known_gpu() {
        let mut s = healthy();
        primary_env(&mut s).torch = Some(torch("2.4.1+cpu", None));
        assert_na(run(&s));
        let mut s = healthy();
        s.nvml = None;
        s.kernel_module = None;
        // The PCI bus still names the H100s (compat::pci_ids).
        assert!(matches!(run(&s), Outcome::Checked(_)));
        s.pci = None;
        assert_na(run(&s));
    }
}
