//! JAX, TensorFlow, ONNX Runtime, vLLM, flash-attn, xformers, bitsandbytes: the newest
//! release in `compat::packages` whose wheel exists for this Python and platform, whose CUDA
//! this driver runs, with code for these GPUs, and that agrees with the torch and cuDNN the
//! environment already has (one process loads one libcudnn).

use super::machine::Machine;
use super::torch::{driver_failures, finish, gpu_driver_failures, pin_failures};
use super::{
    choose, python_range, wanted_cuda_failure, Failure, Judged, Pick, Pin, Recommendation, Test,
};
use crate::compat::packages::{tables, Delivery, PackageRelease};
use crate::compat::{CudaVersion, DriverVersion};
use crate::pyversion::holds;

pub fn recommend(m: &Machine, package: &str) -> Recommendation {
    let Some((_, rows)) = tables().into_iter().find(|(n, _)| *n == package) else {
        let known = super::known_packages().join(", ");
        return finish(
            package,
            m,
            None,
            Vec::new(),
            0,
            Vec::new(),
            vec![format!(
                "gpudoctor has no table for {package}; it knows {known}."
            )],
        );
    };
    // Where a release has a row per platform, only this platform's row is a candidate.
    let platform = m.platform.as_ref().map(|p| p.value);
    let for_here = |r: &PackageRelease| platform.is_some_and(|p| r.platforms.contains(&p));
    let judged: Vec<Judged<&'static PackageRelease>> = rows
        .iter()
        .filter(|r| {
            for_here(r)
                || !rows
                    .iter()
                    .any(|o| o.requirement == r.requirement && for_here(o))
        })
        .map(|r| Judged {
            item: r,
            label: label(r),
            failures: failures(m, r),
        })
        .collect();
    let (chosen, considered, not_listed, must_change) = choose(judged);
    let mut notes = Vec::new();
    let pick = chosen.map(|j| pick(m, j.item, &mut notes));
    finish(package, m, pick, considered, not_listed, must_change, notes)
}

/// "onnxruntime-gpu 1.26.0 (CUDA 12.8)": the release, and the CUDA that tells rows apart.
fn label(r: &PackageRelease) -> String {
    match r.cuda {
        Some(c) => format!("{} {} (CUDA {c})", r.package, r.version),
        None => format!("{} {}", r.package, r.version),
    }
}

fn failures(m: &Machine, r: &PackageRelease) -> Vec<Failure> {
    let mut out = Vec::new();
    match m.platform.as_ref().map(|p| p.value) {
        Some(p) if r.platforms.contains(&p) => {}
        _ => {
            let has: Vec<&str> = r.platforms.iter().map(|p| p.as_str()).collect();
            out.push(
                Failure::new(
                    Test::Platform,
                    format!(
                        "no Linux wheel for {} (it has {})",
                        m.platform_name,
                        has.join(", ")
                    ),
                )
                .change(format!("a {} machine", has.join(" or "))),
            );
        }
    }
    if let Some(p) = &m.python {
        let (major, minor) = p.value;
        if !r.pythons.is_empty() && (major != 3 || !r.pythons.contains(&minor)) {
            out.push(
                Failure::new(
                    Test::Python,
                    format!(
                        "no wheel for Python {major}.{minor} (it has {})",
                        python_range(r.pythons)
                    ),
                )
                .change(format!(
                    "Python {} (this is {major}.{minor})",
                    python_range(r.pythons)
                )),
            );
        }
    }
    let cuda = r.cuda.and_then(CudaVersion::parse);
    if let Some(c) = cuda {
        out.extend(wanted_cuda_failure(m, c));
    }
    if let (Some(mj), Some(c)) = (m.shared_cuda_major, cuda) {
        if c.major != mj && r.delivery == Delivery::Wheel {
            out.push(Failure::new(
                Test::Pin,
                format!("CUDA {c}: the packages asked for together are tried at CUDA {mj}.x"),
            ));
        }
    }
    // A Linux minimum of the release's own; on WSL (the Windows driver's numbers) and
    // without one, the minimum of its CUDA.
    match (r.min_driver.and_then(DriverVersion::parse), &m.driver) {
        (Some(min), Some(d)) if !d.windows => {
            if d.version < min {
                out.push(
                    Failure::new(
                        Test::Driver,
                        format!(
                            "needs driver ≥ {}; this is {}",
                            min.as_str(),
                            d.version.as_str()
                        ),
                    )
                    .change(format!(
                        "a driver ≥ {} (this is {})",
                        min.as_str(),
                        d.version.as_str()
                    )),
                );
            }
            out.extend(gpu_driver_failures(m));
        }
        _ => match cuda {
            Some(c) if r.delivery == Delivery::Wheel => out.extend(driver_failures(m, c)),
            _ => out.extend(gpu_driver_failures(m)),
        },
    }
    for g in &m.gpus {
        let cc_num = g.cc.major * 10 + g.cc.minor;
        let listed = !r.sass.is_empty() || !r.ptx.is_empty();
        let no_code = listed && !r.runs_on(g.cc);
        let too_old = r.min_cc.is_some_and(|min| cc_num < min);
        if no_code || too_old {
            let why = if too_old {
                let min = r.min_cc.unwrap_or(0);
                format!("supports compute capability ≥ {}.{}", min / 10, min % 10)
            } else {
                let list: Vec<String> = r
                    .sass
                    .iter()
                    .map(|a| {
                        let exact = if r.exact.contains(a) { "a" } else { "" };
                        format!("sm_{a}{exact}")
                    })
                    .chain(r.ptx.iter().map(|a| format!("compute_{a}")))
                    .collect();
                format!("compiled for {}", list.join(" "))
            };
            let text = format!("no code for sm_{cc_num}: {why}");
            if !out.iter().any(|f: &Failure| f.text == text) {
                out.push(Failure::new(Test::Gpu, text));
            }
        }
    }
    // torch: what the release pins, against the torch installed.
    if let (Some(spec), Some(t)) = (r.torch, m.installed("torch")) {
        if !holds(&t.version, spec) {
            out.push(
                Failure::new(
                    Test::Pin,
                    format!("requires torch{spec}; torch {} is installed", t.version),
                )
                .change(format!(
                    "torch{spec} in place of {} (installing it replaces torch)",
                    t.version
                )),
            );
        }
    }
    // Others that pin torch must accept the torch this release brings.
    if let Some(spec) = r.torch.and_then(|s| s.strip_prefix("==")) {
        out.extend(pin_failures(m, spec, &[r.package]));
    }
    // One process, one libcudnn and one CUDA major of the nvidia-* wheels (GD050).
    if let Some(torch_cuda) = m.torch_cuda.as_deref().and_then(CudaVersion::parse) {
        if let Some(c) =
            cuda.filter(|c| c.major != torch_cuda.major && r.delivery == Delivery::Wheel)
        {
            out.push(
                Failure::new(
                    Test::Pin,
                    format!(
                        "built on CUDA {}; torch in this environment uses CUDA {}",
                        c.major, torch_cuda.major
                    ),
                )
                .change(format!(
                    "torch for CUDA {}.x, or a separate environment",
                    c.major
                )),
            );
        }
    }
    if let (Some(want), Some(have)) = (r.cudnn_major, m.torch_cudnn_major) {
        if want != have {
            out.push(
                Failure::new(
                    Test::Pin,
                    format!("loads cuDNN {want}; torch in this environment loads cuDNN {have}"),
                )
                .change(format!(
                    "torch built with cuDNN {want}, or a separate environment"
                )),
            );
        }
    }
    if r.delivery == Delivery::SourceBuild {
        out.extend(build_failures(m, r));
    }
    out
}

/// A source build needs torch installed (it is built against it) and an nvcc of torch's
/// CUDA major, at least the release's minimum.
fn build_failures(m: &Machine, r: &PackageRelease) -> Vec<Failure> {
    let mut out = Vec::new();
    if m.installed("torch").is_none() {
        out.push(
            Failure::new(
                Test::Build,
                "is compiled against the installed torch: none is installed",
            )
            .change("torch installed first (gpudoctor recommend torch)"),
        );
    }
    let min = r.cuda.and_then(CudaVersion::parse);
    match &m.nvcc {
        None => out.push(
            Failure::new(Test::Build, "is compiled from source: no nvcc found").change(format!(
                "a CUDA toolkit{} with nvcc (CUDA_HOME or PATH)",
                min.map(|c| format!(" ≥ {c}")).unwrap_or_default()
            )),
        ),
        Some(n) => {
            if let Some(min) = min.filter(|min| n.value < *min) {
                out.push(
                    Failure::new(
                        Test::Build,
                        format!("needs nvcc ≥ {min}; nvcc is {}", n.value),
                    )
                    .change(format!("a CUDA toolkit ≥ {min} (nvcc is {})", n.value)),
                );
            }
            if let Some(tc) = m.torch_cuda.as_deref().and_then(CudaVersion::parse) {
                if tc.major != n.value.major {
                    out.push(
                        Failure::new(
                            Test::Build,
                            format!("nvcc {} and torch's CUDA {tc} differ in major: torch's extension builder refuses", n.value),
                        )
                        .change(format!("an nvcc of CUDA {}.x (CUDA_HOME)", tc.major)),
                    );
                }
            }
        }
    }
    out
}

fn pick(m: &Machine, r: &'static PackageRelease, notes: &mut Vec<String>) -> Pick {
    // pip replaces another installed version by itself; only the same version in another
    // build would need --force-reinstall, and these wheels have one build per version.
    let reinstall = false;
    let mut why = vec!["the newest release that fits".to_string()];
    if let Some(c) = r.cuda {
        why.push(format!("CUDA {c}"));
    }
    if let Some(n) = r.cudnn_major {
        why.push(format!("cuDNN {n}"));
    }
    if let Some(d) = &m.driver {
        why.push(format!("runs on driver {}", d.version.as_str()));
    }
    if let Some(p) = &m.python {
        why.push(format!(
            "has a wheel for Python {}.{}",
            p.value.0, p.value.1
        ));
    }
    if let Some(spec) = r.torch {
        why.push(format!("requires torch{spec}"));
    }
    if !crate::compat::sources::is_confirmed(r.source) {
        notes.push(format!(
            "No primary source confirms every fact of the {} {} row (see its source in --format json).",
            r.package, r.version
        ));
    }
    if r.sass.is_empty() && r.min_cc.is_none() && !m.gpus.is_empty() {
        notes.push(format!(
            "Which GPU architectures {} {} has code for is not in gpudoctor's table.",
            r.package, r.version
        ));
    }
    let mut build_env = Vec::new();
    if r.delivery == Delivery::SourceBuild {
        // Compile for this machine's GPUs only: the default list takes hours. flash-attn's
        // setup.py knows one token per family (80, 90, 100, 110, 120); 8.6 runs sm_80 code.
        let mut archs: Vec<String> = Vec::new();
        for g in &m.gpus {
            let a = if g.cc.major == 9 {
                "90".to_string()
            } else {
                format!("{}0", g.cc.major)
            };
            if !archs.contains(&a) {
                archs.push(a);
            }
        }
        if !archs.is_empty() && r.package == "flash-attn" {
            build_env.push(("FLASH_ATTN_CUDA_ARCHS".into(), archs.join(";")));
        }
        build_env.push(("MAX_JOBS".into(), "4".into()));
        notes.push(format!(
            "{} is compiled on install with the nvcc at CUDA_HOME against the installed torch; it takes tens of minutes.",
            r.package
        ));
    }
    Pick {
        label: label(r),
        pins: vec![Pin {
            name: r.package.into(),
            version: r.version.into(),
            requirement: r.requirement.into(),
        }],
        index_url: r.index_url.map(str::to_string),
        torch_backend: None,
        cuda: r.cuda.map(str::to_string),
        reason: why.join(", "),
        source: r.source.to_string(),
        reinstall,
        no_deps: false,
        build_env,
        no_build_isolation: r.delivery == Delivery::SourceBuild,
        uninstall: other_jax_plugins(m, r),
        conda_remove: Vec::new(),
    }
}

/// JAX's plugin and PJRT wheels of the other CUDA major stay loaded beside the new ones: they
/// go first.
fn other_jax_plugins(m: &Machine, r: &PackageRelease) -> Vec<String> {
    if r.package != "jax" {
        return Vec::new();
    }
    let keep = if r.requirement.contains("[cuda13]") {
        "cuda13"
    } else {
        "cuda12"
    };
    m.installed
        .iter()
        .filter(|i| i.name.starts_with("jax-cuda") && !i.name.starts_with(&format!("jax-{keep}")))
        .map(|i| i.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::machine::Overrides;

    fn machine(driver: &str, gpu: &str) -> Machine {
        let o = Overrides {
            driver: Some(driver.into()),
            gpus: vec![gpu.into()],
            python: Some("3.12".into()),
            platform: Some("x86_64".into()),
            fresh: true,
            ..Overrides::default()
        };
        Machine::from_snapshot(&crate::testing::healthy(), &o).unwrap()
    }

    #[test]
    fn on_wsl_the_windows_driver_is_judged_by_its_cuda() {
        // Windows 560.94 reports CUDA 12.6: JAX's CUDA 13 build needs a R580 driver.
        let mut m = machine("560.94", "sm_90");
        if let Some(d) = m.driver.as_mut() {
            d.windows = true;
        }
        let r = recommend(&m, "jax");
        assert_eq!(r.pick.unwrap().label, "jax 0.12.0.1 (CUDA 12.9)");
        assert!(r.considered[0].rejected_because[0].contains("CUDA 13.x needs driver"));
    }
}
