//! GD062: a container that was given no GPU. When the image was built for GPUs (NVIDIA's
//! CUDA base images set NVIDIA_VISIBLE_DEVICES, NVIDIA_REQUIRE_CUDA and CUDA_VERSION; a CUDA
//! toolkit or a CUDA build of torch is installed) everything CUDA in it will fail: an
//! error, with the flag of the runtime in use. Without such signs it is context (info), and
//! so is a container whose GPUs were withheld on purpose: NVIDIA_VISIBLE_DEVICES=void, empty
//! or none is the NVIDIA Container Toolkit's documented way to start a GPU image without
//! GPUs (its user guide, "GPU Enumeration": `none` passes no GPU but the driver's
//! capabilities, `void`, empty or unset behave as runc) — a CPU worker of a GPU image.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "container_gpus",
    codes: &[codes::GD062],
    views: &[super::View::Devices, super::View::Smoke],
    checks: "a container built for GPUs was started with them",
    judges: &[SubjectKind::Container],
    run,
};

/// One sign that an image or container means to use NVIDIA GPUs.
pub struct Intent {
    pub subject: Subject,
    pub what: String,
    pub source: String,
}

/// The signs of GPU intent in the environment and the installed software.
pub fn gpu_intent(snap: &Snapshot) -> Vec<Intent> {
    let mut out = Vec::new();
    // Under --image the environment and software are the image's, not this container's.
    if snap.is_image() {
        return out;
    }
    let env = |name: &str| snap.env_value(name).filter(|v| !v.trim().is_empty());
    if let Some(v) = env("NVIDIA_VISIBLE_DEVICES").filter(|v| !matches!(v.trim(), "void" | "none"))
    {
        out.push(Intent {
            subject: Subject::env("NVIDIA_VISIBLE_DEVICES"),
            what: format!("NVIDIA_VISIBLE_DEVICES={v} asks the NVIDIA runtime for GPUs"),
            source: "environment".into(),
        });
    }
    for name in ["NVIDIA_REQUIRE_CUDA", "CUDA_VERSION"] {
        if let Some(v) = env(name) {
            let shown = v.split(' ').next().unwrap_or(v);
            out.push(Intent {
                subject: Subject::env(name),
                what: format!("{name}={shown} (set by NVIDIA's CUDA images)"),
                source: "environment".into(),
            });
        }
    }
    if let Some(t) = snap.toolkits.as_ref().and_then(|t| t.installs.first()) {
        out.push(Intent {
            subject: Subject::toolkit(&t.root),
            what: format!(
                "CUDA toolkit {} at {}",
                t.version
                    .get()
                    .map(String::as_str)
                    .unwrap_or("(version unknown)"),
                t.root
            ),
            source: t.version.source.clone(),
        });
    }
    for env in snap.python.iter().flatten() {
        if let Some(t) = &env.torch {
            if let Some(cuda) = &t.cuda {
                out.push(Intent {
                    subject: Subject::torch(&env.site),
                    what: format!("torch {} built for CUDA {cuda}", t.dist_version),
                    source: env.site.clone(),
                });
            }
        }
    }
    out
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(kind) = snap.container_kind().filter(|_| !snap.is_wsl()) else {
        return Outcome::NotApplicable("not in a container".into());
    };
    if snap.device_nodes.is_none() {
        return Outcome::NotApplicable("the device_nodes probe did not run".into());
    }
    if !snap.container_without_gpus() {
        return Outcome::Checked(vec![]);
    }
    let intent = gpu_intent(snap);
    // Withheld on purpose: the CUDA images set NVIDIA_VISIBLE_DEVICES=all, so void, none or
    // an empty value was written by whoever started it. `devices` and `smoke` still fail:
    // they were asked to examine GPUs.
    let withheld = snap
        .env_value("NVIDIA_VISIBLE_DEVICES")
        .filter(|v| matches!(v.trim(), "void" | "none" | ""))
        .filter(|_| !snap.gpus_asked_for() && !snap.is_image());
    let mut f = if let Some(v) = withheld {
        Finding::new(
            codes::GD062,
            Severity::Info,
            format!(
                "This {kind} container was started without GPUs on purpose (NVIDIA_VISIBLE_DEVICES={})",
                if v.trim().is_empty() { "(empty)" } else { v.trim() }
            ),
        )
        .detail("NVIDIA_VISIBLE_DEVICES=void, an empty value or none tells NVIDIA's container runtime to pass no GPU (void and empty: it behaves as runc; none: the driver's capabilities without a GPU). The CUDA images set it to `all`, so this value was chosen when the container was started: a CPU worker of a GPU image. Code here runs on the CPU; anything that needs CUDA fails, as asked.")
    } else if intent.is_empty() {
        // `gpudoctor devices` asked to see GPUs: seeing none fails it, as `smoke` does.
        let severity = if snap.devices_requested() {
            Severity::Error
        } else {
            Severity::Info
        };
        Finding::new(codes::GD062, severity, format!("This {kind} container was started without GPUs"))
            .detail("No NVIDIA device node (/dev/nvidiactl, /dev/nvidiaN) is in this container, and nothing in it asks for one, so it runs on the CPU. If it should use the host's GPUs, they must be requested when it starts.")
    } else {
        Finding::new(codes::GD062, Severity::Error, format!("This {kind} container was started without GPUs, but it is built to use them"))
            .detail("No NVIDIA device node (/dev/nvidiactl, /dev/nvidiaN) is in this container: the runtime was not asked for GPUs, so it passed none and mounted none of the host's driver libraries. Everything CUDA here fails: torch.cuda.is_available() is False, cudaGetDeviceCount returns \"no CUDA-capable device is detected\" (100) or \"found no NVIDIA driver\" (35), nvidia-smi is missing. The GPUs and the driver live on the host and are passed in at start; nothing inside the container can add them.")
    };
    let hints = snap
        .platform
        .as_ref()
        .map(|p| {
            p.container
                .hints
                .iter()
                .map(|h| h.source.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    f = f
        .evidence(Subject::Container, format!("a {kind} container"), hints)
        .evidence(
            Subject::GpuNodes,
            "no /dev/nvidiactl and no /dev/nvidia[0-9]* in the container",
            "/dev",
        );
    if let Some(mounts) = snap
        .platform
        .as_ref()
        .and_then(|p| p.container.given.as_ref())
        .and_then(|g| g.nvidia_mounts.get())
    {
        if mounts.is_empty() {
            f = f.evidence(
                Subject::Container,
                "no NVIDIA driver file is mounted from the host",
                "/proc/self/mountinfo",
            );
        }
    }
    for i in &intent {
        f = f.evidence(i.subject.clone(), i.what.clone(), i.source.clone());
    }
    if let Some(v) = snap
        .env_value("NVIDIA_VISIBLE_DEVICES")
        .filter(|v| matches!(v.trim(), "void" | "none" | ""))
    {
        f = f.evidence(
            Subject::env("NVIDIA_VISIBLE_DEVICES"),
            format!(
                "NVIDIA_VISIBLE_DEVICES={}: the NVIDIA runtime was told to pass no GPU",
                if v.trim().is_empty() {
                    "(empty)"
                } else {
                    v.trim()
                }
            ),
            "environment",
        );
    }
    if withheld.is_some() {
        f = f.fix_text("Nothing to do for a CPU worker. To give it GPUs instead, start it with NVIDIA_VISIBLE_DEVICES=all (or without the override):");
    }
    Outcome::Checked(vec![with_runtime_fixes(f, kind, snap)])
}

/// How to start this kind of container (or, under --image, the image) with VAR=VALUE.
pub fn with_env_fix(f: Finding, snap: &Snapshot, var: &str, value: &str, why: &str) -> Finding {
    let kubernetes = snap.place() == crate::snapshot::Place::KubernetesPod;
    let kind = if snap.is_image() {
        None
    } else {
        snap.container_kind()
    };
    if kubernetes && !snap.is_image() {
        return f.fix_text(format!(
            "{why}: in the pod spec, the container's `env: [{{name: {var}, value: \"{value}\"}}]`"
        ));
    }
    match kind {
        Some("podman") => f.fix_cmd(
            why,
            crate::sh!(
                "podman run --device nvidia.com/gpu=all -e {} IMAGE",
                format!("{var}={value}")
            ),
        ),
        Some("apptainer") => f.fix_cmd(
            why,
            crate::sh!(
                "apptainer exec --nv --env {} IMAGE.sif COMMAND",
                format!("{var}={value}")
            ),
        ),
        _ => f
            .fix_cmd(
                why,
                crate::sh!(
                    "docker run --gpus all -e {} IMAGE",
                    format!("{var}={value}")
                ),
            )
            .fix_text(format!(
                "Kubernetes: `env: [{{name: {var}, value: \"{value}\"}}]` in the container's spec"
            )),
    }
}

/// How to start this kind of container with the GPUs.
pub fn with_runtime_fixes(mut f: Finding, kind: &str, snap: &Snapshot) -> Finding {
    let kubernetes = kind == "kubernetes"
        || snap
            .env_value("KUBERNETES_SERVICE_HOST")
            .is_some_and(|v| !v.is_empty());
    // The device plugin sets NVIDIA_VISIBLE_DEVICES to the GPUs it allocated (UUIDs, or a
    // path under /var/run/nvidia-container-devices with its volume-mounts strategy): the pod
    // got GPUs, and the node's runtime did not inject them.
    let allocated = snap.env_value("NVIDIA_VISIBLE_DEVICES").filter(|v| {
        v.split(',').any(|d| {
            let d = d.trim();
            d.starts_with("GPU-")
                || d.starts_with("MIG-")
                || d.starts_with("/var/run/nvidia-container-devices")
        })
    });
    if kubernetes && allocated.is_some() {
        return f
            .fix_text("The NVIDIA device plugin allocated GPUs to this pod (NVIDIA_VISIBLE_DEVICES), but the node's container runtime did not inject them: the pod ran under a runtime that is not NVIDIA's. Add `runtimeClassName: nvidia` to the pod spec")
            .fix_text("On the node, to make NVIDIA's runtime containerd's default instead: `sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default`, then restart containerd")
            .fix_cmd("Check the RuntimeClass exists", "kubectl get runtimeclass nvidia");
    }
    if kubernetes {
        return f
            .fix_text("Kubernetes: request GPUs in the container's spec, `resources: {limits: {nvidia.com/gpu: 1}}`; the NVIDIA device plugin (or the GPU Operator) must run on the node to offer them")
            .fix_text("If the node's container runtime does not default to NVIDIA's, add `runtimeClassName: nvidia` to the pod spec")
            .fix_cmd("Check that the node offers GPUs", "kubectl describe node NODE | grep -A3 nvidia.com/gpu");
    }
    match kind {
        "docker" => {
            f = f
                .fix_cmd("Start the container with the GPUs (the host needs the NVIDIA Container Toolkit)", "docker run --gpus all IMAGE")
                .fix_text("Docker Compose: under the service, `deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}`");
        }
        "podman" => {
            f = f
                .fix_cmd(
                    "Start the container with the GPUs through CDI",
                    "podman run --device nvidia.com/gpu=all IMAGE",
                )
                .fix_text("On the host, once and after each driver upgrade, generate the CDI spec: `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`");
        }
        "containerd" | "cri-o" => {
            f = f
                .fix_cmd(
                    "nerdctl: start the container with the GPUs",
                    "nerdctl run --gpus all IMAGE",
                )
                .fix_cmd(
                    "ctr: pass the GPUs through CDI",
                    "ctr run --device nvidia.com/gpu=all IMAGE NAME",
                );
        }
        "apptainer" => {
            f = f.fix_cmd(
                "Apptainer/Singularity: bind the host's driver and GPUs with --nv",
                "apptainer exec --nv IMAGE.sif COMMAND",
            );
        }
        "enroot" => {
            f = f
                .fix_cmd("Slurm with pyxis: allocate GPUs for the step; enroot's NVIDIA hook passes in those Slurm gives", "srun --gpus=1 --container-image=IMAGE COMMAND")
                .fix_text("enroot alone: start with NVIDIA_VISIBLE_DEVICES=all (and NVIDIA_DRIVER_CAPABILITIES=compute,utility) in the environment so its 98-nvidia hook runs");
        }
        _ => {
            f = f
                .fix_cmd("Docker", "docker run --gpus all IMAGE")
                .fix_cmd("Podman or containerd (CDI)", "podman run --device nvidia.com/gpu=all IMAGE")
                .fix_text("Other runtimes: pass /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN, and bind the host's driver libraries (libcuda.so.1, libnvidia-ml.so.1)");
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    fn container_without_gpus(kind: &str) -> Snapshot {
        let mut s = healthy();
        in_container(&mut s, kind);
        nodes_mut(&mut s).nodes.clear();
        s
    }

    #[test]
    fn a_container_with_its_gpus_is_clean() {
        let mut s = healthy();
        in_container(&mut s, "docker");
        assert_clean(run(&s));
    }

    #[test]
    fn devices_in_a_container_without_gpus_showed_nothing_so_it_fails() {
        let mut s = container_without_gpus("docker");
        // Nothing in it asks for GPUs: a note for check.
        s.python = None;
        s.toolkits = None;
        only(run(&s), codes::GD062, Severity::Info);
        s.nvml.as_mut().unwrap().requested = true;
        only(run(&s), codes::GD062, Severity::Error);
    }

    #[test]
    fn a_cuda_image_started_without_gpus_is_an_error_with_the_runtime_flag() {
        let mut s = container_without_gpus("docker");
        set_env(&mut s, "CUDA_VERSION", "12.4.1");
        let f = only(run(&s), codes::GD062, Severity::Error);
        assert_eq!(first_cmd(&f), "docker run --gpus all IMAGE");
        assert!(evidence_mentions(&f, "CUDA_VERSION=12.4.1"));
        assert!(f.title.contains("docker container"), "{}", f.title);
    }

    #[test]
    fn a_cuda_build_of_torch_is_intent_too() {
        let mut s = container_without_gpus("podman");
        let f = only(run(&s.clone()), codes::GD062, Severity::Error);
        assert_eq!(
            first_cmd(&f),
            "podman run --device nvidia.com/gpu=all IMAGE"
        );
        assert!(evidence_mentions(&f, "built for CUDA"));
        s.python = None;
        s.toolkits = None;
        let f = only(run(&s), codes::GD062, Severity::Info);
        assert!(f.title.contains("without GPUs"));
    }

    #[test]
    fn each_runtime_gets_its_own_way_in() {
        for (kind, needle) in [
            ("apptainer", "apptainer exec --nv"),
            ("enroot", "srun --gpus=1 --container-image"),
            ("containerd", "nerdctl run --gpus all"),
        ] {
            let f = only(
                run(&container_without_gpus(kind)),
                codes::GD062,
                Severity::Error,
            );
            assert!(first_cmd(&f).contains(needle), "{kind}: {}", first_cmd(&f));
        }
        let mut s = container_without_gpus("kubernetes");
        set_env(&mut s, "NVIDIA_VISIBLE_DEVICES", "all");
        let f = only(run(&s), codes::GD062, Severity::Error);
        assert!(fixes_mention(&f, "nvidia.com/gpu: 1"));
        // Allocated by the device plugin, not injected: the runtime class is the fix.
        set_env(
            &mut s,
            "NVIDIA_VISIBLE_DEVICES",
            "GPU-5a4c7e1e-8a7f-2c4b-93b1-0e7d9b1c2f3a",
        );
        let f = only(run(&s), codes::GD062, Severity::Error);
        assert!(fixes_mention(&f, "runtimeClassName: nvidia"), "{:?}", f.fix);
        assert!(!fixes_mention(&f, "nvidia.com/gpu: 1"));
    }

    #[test]
    fn gpus_withheld_on_purpose_are_a_note_unless_gpus_were_asked_for() {
        for (kind, value) in [
            ("kubernetes", "void"),
            ("docker", "none"),
            ("docker", ""),
            ("podman", " void "),
        ] {
            // A CUDA image with a CUDA torch: built for GPUs, started as a CPU worker.
            let mut s = container_without_gpus(kind);
            set_env(&mut s, "CUDA_VERSION", "12.8.1");
            set_env(&mut s, "NVIDIA_VISIBLE_DEVICES", value);
            let f = only(run(&s), codes::GD062, Severity::Info);
            assert!(
                f.title.contains("on purpose"),
                "{kind} {value:?}: {}",
                f.title
            );
            assert!(
                evidence_mentions(&f, "told to pass no GPU"),
                "{:?}",
                f.evidence
            );
            assert!(evidence_mentions(&f, "CUDA_VERSION=12.8.1"));
            // `gpudoctor devices` and `gpudoctor smoke` were asked to see GPUs: none is a
            // failure there.
            let mut devices = s.clone();
            devices.nvml.as_mut().unwrap().requested = true;
            only(run(&devices), codes::GD062, Severity::Error);
            if let Some(smoke) = s.smoke.as_mut() {
                smoke.settings.requested = true;
                only(run(&s), codes::GD062, Severity::Error);
            }
        }
        // GPUs asked for and not given stay an error.
        for value in ["all", "0,1", "GPU-5a4c7e1e-8a7f-2c4b-93b1-0e7d9b1c2f3a"] {
            let mut s = container_without_gpus("docker");
            set_env(&mut s, "NVIDIA_VISIBLE_DEVICES", value);
            only(run(&s), codes::GD062, Severity::Error);
        }
    }

    #[test]
    fn under_image_the_images_intent_is_not_this_containers() {
        let mut s = container_without_gpus("docker");
        set_env(&mut s, "CUDA_VERSION", "12.4.1");
        s.image = Some(image_info("amd64", true));
        only(run(&s), codes::GD062, Severity::Info);
    }

    #[test]
    fn not_applicable_on_a_host_or_in_wsl() {
        assert_na(run(&healthy()));
        let mut s = container_without_gpus("docker");
        make_wsl(&mut s);
        assert_na(run(&s));
    }
}
