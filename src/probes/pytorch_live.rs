//! The opt-in live probe (`--python-import`): runs the chosen interpreter on a short script
//! through the bounded runner and asks torch itself — version, CUDA build, whether CUDA is
//! available (NVML-based, so no CUDA context is created), compiled architectures, cuDNN — and
//! which CUDA libraries the process really mapped (/proc/self/maps). Never under --root.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::facts::pytorch_live::{LiveAnswer, LiveResult, LiveTorch};
use crate::runner::{RunError, Runner};

/// Kept short and dependency-free: it runs in the user's interpreter.
const SCRIPT: &str = r#"
import json, sys, warnings
out = {"python_version": sys.version.split()[0], "warnings": [], "loaded": []}
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import torch
        out["torch"] = torch.__version__
        out["cuda"] = torch.version.cuda
        try:
            out["arch_flags"] = torch._C._cuda_getArchFlags()
        except Exception:
            pass
        out["is_available"] = bool(torch.cuda.is_available())
        out["device_count"] = int(torch.cuda.device_count()) if out["is_available"] else 0
        try:
            out["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            pass
    out["warnings"] = [str(w.message) for w in caught][:20]
except BaseException as e:
    out["import_error"] = (type(e).__name__ + ": " + str(e))[:2000]
keys = ("libcudnn", "libcublas", "libcudart", "libnccl", "libnvJitLink", "libcuda.so", "libnvrtc", "libcusparse", "libcufft")
try:
    seen = set()
    for line in open("/proc/self/maps"):
        parts = line.split()
        if len(parts) >= 6 and any(k in parts[5] for k in keys):
            seen.add(parts[5])
    out["loaded"] = sorted(seen)
except Exception:
    pass
sys.stdout.write(json.dumps(out))
"#;

/// `python`: --python, else the interpreter the static probes call primary
/// (`python_sites::python_exe_on_path`).
pub fn probe(python: Option<&Path>, under_root: bool, timeout: Duration) -> LiveTorch {
    let exe: Option<PathBuf> = python.map(Path::to_path_buf);
    let python_text = exe
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "python3".into());
    if under_root {
        return LiveTorch {
            python: python_text,
            result: LiveResult::NotProbed {
                reason: "--python-import never runs a program of an inspected --root tree".into(),
            },
        };
    }
    let Some(exe) = exe else {
        return LiveTorch {
            python: python_text,
            result: LiveResult::Failed {
                detail: "no python3 or python on PATH (name one with --python)".into(),
            },
        };
    };
    // NVML-based availability: no CUDA context, so a broken driver cannot hang the check
    // longer than NVML would.
    // From / so that a torch source checkout in the working directory is not imported.
    let runner = Runner::new(None).in_dir("/");
    let result = match runner.run_with_env(
        &exe,
        &["-c", SCRIPT],
        timeout,
        &[("PYTORCH_NVML_BASED_CUDA_CHECK", "1")],
    ) {
        Err(RunError::TimedOut { seconds, .. }) => LiveResult::TimedOut { seconds },
        Err(e) => LiveResult::Failed {
            detail: e.to_string(),
        },
        // The answer is the last line: wrappers may print banners before it.
        Ok(out) => match serde_json::from_str::<LiveAnswer>(
            out.stdout
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim(),
        ) {
            Ok(answer) => LiveResult::Ok { answer },
            Err(e) => LiveResult::Failed {
                detail: format!(
                    "{} printed no readable answer ({e}); stderr: {}",
                    exe.display(),
                    out.stderr
                        .lines()
                        .rev()
                        .take(3)
                        .map(|l| l.chars().take(300).collect::<String>())
                        .collect::<Vec<_>>()
                        .join(" | ")
                ),
            },
        },
    };
    LiveTorch {
        python: python_text,
        result,
    }
}
