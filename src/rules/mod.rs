//! Rules are pure functions of the Snapshot, one subject per file, registered in
//! one table sorted by the first code each emits.

pub(crate) mod alloc_conf;
mod causes;
mod cdi;
mod clocks;
mod compute_mode;
mod container_engine;
mod container_gpus;
mod container_toolkit;
mod cuda_home;
mod cudnn_runtime;
mod debug_env;
mod dev_char_links;
mod device_cgroup;
mod device_nodes;
mod docker_snap;
mod driver_capabilities;
mod driver_userspace;
pub(crate) mod expected_gpus;
mod extension_loading;
mod fabric;
mod fit_fixes;
mod frameworks;
mod gpu_capabilities;
mod gpu_presence;
mod gpu_recovery;
pub(crate) mod identity;
mod image_platform;
mod kernel_log;
mod kernel_module;
mod libcuda;
mod library_majors;
mod link_counters;
mod memory_health;
mod mig;
mod module_flavour;
mod nccl_env;
mod nccl_library;
mod nccl_peermem;
mod node_count;
mod nvlink_state;
mod nvml_status;
mod pci_binding;
mod pcie_link;
mod persistence;
mod preflight;
mod probe_health;
mod pytorch_build;
mod pytorch_companions;
mod pytorch_extensions;
mod pytorch_live;
mod pytorch_wheels;
mod require_cuda;
mod shm;
mod smoke_context;
mod smoke_device_memory;
mod smoke_driver;
mod smoke_health;
mod smoke_matmul;
mod smoke_memory;
mod smoke_nccl;
pub(crate) mod smoke_peer;
mod smoke_transfer;
mod toolkit_arch;
mod toolkit_choice;
mod toolkit_driver;
mod topology;
mod uvm;
mod visible_devices;
mod wsl_driver;

use crate::codes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::findings::{sort_findings, Finding};
use crate::snapshot::Snapshot;

pub enum Outcome {
    /// The rule looked; the findings (possibly none) are its verdict.
    Checked(Vec<Finding>),
    /// The facts it judges are absent here (no GPU, probe skipped); the reason says which.
    NotApplicable(String),
}

pub struct Rule {
    pub name: &'static str,
    pub codes: &'static [&'static str],
    /// The focused subcommands that report this rule's codes (every code of the rule).
    pub views: &'static [View],
    /// What a passing check means, for `--verbose` and the JSON `checks` list.
    pub checks: &'static str,
    /// The kinds of subject this rule judges: when it ran and cited nothing of a kind, each
    /// subject of that kind passed (`verdict.rs`).
    pub judges: &'static [crate::subject::SubjectKind],
    pub run: fn(&Snapshot) -> Outcome,
}

/// A focused subcommand that judges a subset of the rules; `check` judges them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Toolkit,
    /// `gpudoctor libs`: what the loader binds for each CUDA-using module.
    Libs,
    Devices,
    Smoke,
}

impl View {
    /// The codes this subcommand reports: every code of every rule tagged with it.
    pub fn codes(self) -> Vec<&'static str> {
        RULES
            .iter()
            .filter(|r| r.views.contains(&self))
            .flat_map(|r| r.codes.iter().copied())
            .collect()
    }
}

pub const RULES: &[Rule] = &[
    gpu_presence::RULE,
    kernel_module::RULE,
    pci_binding::RULE,
    uvm::RULE,
    device_nodes::RULE,
    visible_devices::RULE,
    debug_env::RULE,
    alloc_conf::RULE,
    probe_health::RULE,
    toolkit_driver::RULE,
    driver_userspace::RULE,
    toolkit_choice::RULE,
    cuda_home::RULE,
    toolkit_arch::RULE,
    libcuda::RULE,
    library_majors::RULE,
    wsl_driver::RULE,
    nvml_status::RULE,
    gpu_recovery::RULE,
    memory_health::RULE,
    pcie_link::RULE,
    clocks::RULE,
    compute_mode::RULE,
    mig::RULE,
    persistence::RULE,
    fabric::RULE,
    node_count::RULE,
    pytorch_build::RULE,
    pytorch_wheels::RULE,
    pytorch_companions::RULE,
    pytorch_extensions::RULE,
    pytorch_live::RULE,
    frameworks::RULE,
    shm::RULE,
    gpu_capabilities::RULE,
    smoke_driver::RULE,
    smoke_context::RULE,
    smoke_matmul::RULE,
    smoke_memory::RULE,
    smoke_transfer::RULE,
    smoke_health::RULE,
    extension_loading::RULE,
    cudnn_runtime::RULE,
    container_gpus::RULE,
    require_cuda::RULE,
    driver_capabilities::RULE,
    device_cgroup::RULE,
    container_engine::RULE,
    docker_snap::RULE,
    cdi::RULE,
    dev_char_links::RULE,
    container_toolkit::RULE,
    image_platform::RULE,
    topology::RULE,
    smoke_peer::RULE,
    nccl_env::RULE,
    nccl_peermem::RULE,
    nccl_library::RULE,
    smoke_nccl::RULE,
    kernel_log::RULE,
    link_counters::RULE,
    preflight::RULE,
    expected_gpus::RULE,
    module_flavour::RULE,
    smoke_device_memory::RULE,
    nvlink_state::RULE,
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    pub rule: String,
    pub codes: Vec<String>,
    pub status: CheckStatus,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    NotApplicable,
    Skipped,
}

/// Which codes a run reports (from `--only`/`--skip`).
pub trait CodeFilter {
    fn wants(&self, code: &str) -> bool;
}

impl<F: Fn(&str) -> bool> CodeFilter for F {
    fn wants(&self, code: &str) -> bool {
        self(code)
    }
}

/// A finding that rests on a table row no primary source confirms says so (the row's
/// source is in its evidence).
fn note_unconfirmed(f: &mut Finding) {
    const SAID: &str = "no primary source confirms";
    if f.detail.contains(SAID) {
        return;
    }
    if let Some(e) = f
        .evidence
        .iter()
        .find(|e| !crate::compat::sources::is_confirmed(&e.source))
    {
        let note = format!(
            "The fact \"{}\" comes from a table row that {SAID} ({}).",
            e.value, e.source
        );
        f.detail = if f.detail.is_empty() {
            note
        } else {
            format!("{} {note}", f.detail)
        };
    }
}

pub fn evaluate(snap: &Snapshot, filter: &dyn CodeFilter) -> (Vec<Check>, Vec<Finding>) {
    let mut checks = Vec::new();
    let mut all = Vec::new();
    let place = snap.place();
    for rule in RULES {
        let codes: Vec<String> = rule.codes.iter().map(|c| c.to_string()).collect();
        if !rule.codes.iter().any(|c| filter.wants(c)) {
            checks.push(Check {
                rule: rule.name.into(),
                codes,
                status: CheckStatus::Skipped,
                detail: "not selected (--only/--skip)".into(),
            });
            continue;
        }
        match (rule.run)(snap) {
            Outcome::NotApplicable(reason) => checks.push(Check {
                rule: rule.name.into(),
                codes,
                status: CheckStatus::NotApplicable,
                detail: reason,
            }),
            Outcome::Checked(found) => {
                // The registry states each code's severities (docs/codes.md shows them).
                for f in &found {
                    debug_assert!(
                        crate::codes::lookup(&f.code)
                            .is_some_and(|c| c.severities.contains(&f.severity)),
                        "rule {} reported {} as {}: add the code or that severity to CODES in src/codes.rs",
                        rule.name,
                        f.code,
                        f.severity.as_str()
                    );
                }
                let found: Vec<Finding> = found
                    .into_iter()
                    .filter(|f| filter.wants(&f.code))
                    .map(|mut f| {
                        fit_fixes::fit(place, &mut f);
                        note_unconfirmed(&mut f);
                        f
                    })
                    .collect();
                // Info findings are notes, not failures.
                let failed = found
                    .iter()
                    .any(|f| f.severity > crate::findings::Severity::Info);
                let status = if failed {
                    CheckStatus::Failed
                } else {
                    CheckStatus::Passed
                };
                let detail = if found.is_empty() {
                    rule.checks.to_string()
                } else {
                    found
                        .iter()
                        .map(|f| format!("{}: {}", f.code, f.title))
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                checks.push(Check {
                    rule: rule.name.into(),
                    codes,
                    status,
                    detail,
                });
                all.extend(found);
            }
        }
    }
    identity::name_gpus(snap, &mut all);
    causes::link(snap, &mut all);
    for c in checks
        .iter_mut()
        .filter(|c| c.status == CheckStatus::Failed)
    {
        let own: Vec<String> = all
            .iter()
            .filter(|f| c.codes.contains(&f.code))
            .map(|f| match &f.caused_by {
                Some(cause) => format!("{}: {} (caused by {cause})", f.code, f.title),
                None => format!("{}: {}", f.code, f.title),
            })
            .collect();
        c.detail = own.join("; ");
    }
    sort_findings(&mut all);
    (checks, all)
}

/// Shared guard: GPU-dependent rules stay quiet where there is no NVIDIA GPU at all.
/// The container rule that speaks for "CUDA cannot work in this container", when one does:
/// GD062 (no GPU was given), GD065 (the device cgroup revoked the GPUs), GD064 (no libcuda:
/// `compute` left out of NVIDIA_DRIVER_CAPABILITIES). The smoke test's, NVML's and the live
/// import's failures are then that one fact and are not reported again.
pub(crate) fn container_cause(snap: &Snapshot) -> Option<&'static str> {
    if snap.is_image() {
        return None;
    }
    if snap.container_without_gpus() {
        return Some(codes::GD062);
    }
    if device_cgroup::revoked(snap).is_some() {
        return Some(codes::GD065);
    }
    if driver_capabilities::compute_missing(snap) {
        return Some(codes::GD064);
    }
    None
}

/// The shell command that leaves LD_LIBRARY_PATH without every entry naming `dir` (`unset`
/// when none is left); None when no entry names it or the variable is not set.
pub(crate) fn ld_library_path_without(
    snap: &Snapshot,
    dir: &std::path::Path,
) -> Option<crate::findings::Shell> {
    let value = snap.environment.as_ref()?.value("LD_LIBRARY_PATH")?;
    let entries: Vec<&str> = value.split(':').filter(|e| !e.is_empty()).collect();
    let kept: Vec<&str> = entries
        .iter()
        .copied()
        .filter(|e| std::path::Path::new(e.trim_end_matches('/')) != dir)
        .collect();
    if kept.len() == entries.len() {
        return None;
    }
    Some(if kept.is_empty() {
        "unset LD_LIBRARY_PATH".into()
    } else {
        crate::sh!("export LD_LIBRARY_PATH={}", kept.join(":"))
    })
}

fn requires_nvidia_hardware(snap: &Snapshot) -> Option<Outcome> {
    if snap.pci.is_none() && snap.device_nodes.is_none() && snap.kernel_module.is_none() {
        return Some(Outcome::NotApplicable(
            "the pci, device_nodes and kernel_module probes did not run".into(),
        ));
    }
    if snap.container_without_gpus() {
        return Some(Outcome::NotApplicable(
            "a container given no GPU (GD062)".into(),
        ));
    }
    (!snap.nvidia_hardware_seen()).then(|| Outcome::NotApplicable("no NVIDIA GPU found".into()))
}

/// The smoke test's facts, or why a smoke rule does not apply (the test was skipped, or
/// did not run and why, or never got as far as the GPUs).
/// Why there is no smoke probe at all (--no-smoke, --quick, --skip smoke), as the probe
/// runner recorded it.
fn smoke_not_run(snap: &Snapshot) -> Outcome {
    Outcome::NotApplicable(
        snap.probes
            .get("smoke")
            .and_then(|r| r.detail.clone())
            .unwrap_or_else(|| "the smoke test did not run".into()),
    )
}

/// The host's container stack, or why a host-stack rule does not apply: inside a container
/// the host's engines and toolkit are not visible, and without an NVIDIA GPU there is
/// nothing to give containers.
fn container_host(
    snap: &Snapshot,
) -> Result<&crate::facts::container_host::ContainerHost, Outcome> {
    if snap.place().is_contained() {
        return Err(Outcome::NotApplicable(
            "inside a container: the host's container stack is not visible from here".into(),
        ));
    }
    let Some(host) = &snap.container_host else {
        return Err(Outcome::NotApplicable(
            "the container_host probe did not run".into(),
        ));
    };
    if !snap.nvidia_hardware_seen() {
        return Err(Outcome::NotApplicable("no NVIDIA GPU found".into()));
    }
    Ok(host)
}

/// Package commands for the NVIDIA Container Toolkit on this distribution, from NVIDIA's
/// installation guide (docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html).
struct ToolkitPackaging {
    /// Adds NVIDIA's repository.
    repository: &'static str,
    install: &'static str,
    upgrade: &'static str,
}

fn toolkit_packaging(snap: &Snapshot) -> ToolkitPackaging {
    let id = snap
        .platform
        .as_ref()
        .and_then(|p| p.os.get())
        .and_then(|o| o.id.clone())
        .unwrap_or_default();
    let rpm = [
        "rhel",
        "centos",
        "rocky",
        "almalinux",
        "fedora",
        "amzn",
        "ol",
        "azurelinux",
        "mariner",
    ];
    if rpm.contains(&id.as_str()) {
        ToolkitPackaging {
            repository: "curl -s -L https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo | sudo tee /etc/yum.repos.d/nvidia-container-toolkit.repo",
            install: "sudo dnf install -y nvidia-container-toolkit",
            upgrade: "sudo dnf upgrade -y nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1",
        }
    } else if id.starts_with("opensuse") || id == "sles" || id == "sled" {
        ToolkitPackaging {
            repository: "sudo zypper ar https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo",
            install: "sudo zypper --gpg-auto-import-keys install -y nvidia-container-toolkit",
            upgrade: "sudo zypper --gpg-auto-import-keys update -y nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1",
        }
    } else {
        ToolkitPackaging {
            repository: "curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg && curl -s -L https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list | sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' | sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list",
            install: "sudo apt-get update && sudo apt-get install -y nvidia-container-toolkit",
            upgrade: "sudo apt-get update && sudo apt-get install --only-upgrade -y nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1",
        }
    }
}

fn smoke_run(snap: &Snapshot) -> Result<&crate::facts::smoke::SmokeRun, Outcome> {
    use crate::facts::smoke::SmokeResult;
    let Some(p) = &snap.smoke else {
        return Err(smoke_not_run(snap));
    };
    match &p.result {
        SmokeResult::NotRun { reason } => Err(Outcome::NotApplicable(reason.clone())),
        SmokeResult::LoadFailed { .. } => Err(Outcome::NotApplicable(
            "libcuda could not be loaded (GD053)".into(),
        )),
        SmokeResult::WorkerFailed { .. } => Err(Outcome::NotApplicable(
            "the smoke worker did not report (GD059)".into(),
        )),
        _ => p
            .run()
            .ok_or_else(|| Outcome::NotApplicable("no smoke-test run".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::CODES;

    #[test]
    fn every_rule_code_is_registered_and_every_code_has_a_rule() {
        let mut emitted: Vec<&str> = RULES.iter().flat_map(|r| r.codes.iter().copied()).collect();
        for code in &emitted {
            assert!(
                CODES.iter().any(|c| c.code == *code),
                "{code} not in codes.rs"
            );
        }
        emitted.sort();
        let before = emitted.len();
        emitted.dedup();
        assert_eq!(before, emitted.len(), "two rules claim the same code");
        for c in CODES {
            assert!(emitted.contains(&c.code), "{} has no rule", c.code);
        }
    }

    #[test]
    fn each_view_reports_its_codes() {
        let codes = |v: View| {
            let mut c = v.codes();
            c.sort_unstable();
            c
        };
        assert_eq!(
            codes(View::Libs),
            [
                codes::GD016,
                codes::GD044,
                codes::GD045,
                codes::GD060,
                codes::GD061,
                codes::GD078
            ]
        );
        assert_eq!(
            codes(View::Toolkit),
            [
                codes::GD017,
                codes::GD018,
                codes::GD019,
                codes::GD020,
                codes::GD021,
                codes::GD022,
                codes::GD023,
                codes::GD024,
                codes::GD025,
                codes::GD026,
                codes::GD027,
                codes::GD028,
                codes::GD047,
                codes::GD088
            ]
        );
        assert_eq!(
            codes(View::Devices),
            [
                codes::GD001,
                codes::GD002,
                codes::GD003,
                codes::GD004,
                codes::GD005,
                codes::GD006,
                codes::GD007,
                codes::GD008,
                codes::GD009,
                codes::GD010,
                codes::GD011,
                codes::GD018,
                codes::GD027,
                codes::GD029,
                codes::GD030,
                codes::GD031,
                codes::GD032,
                codes::GD033,
                codes::GD034,
                codes::GD035,
                codes::GD036,
                codes::GD037,
                codes::GD038,
                codes::GD039,
                codes::GD040,
                codes::GD062,
                codes::GD065,
                codes::GD072,
                codes::GD073,
                codes::GD080,
                codes::GD081,
                codes::GD082,
                codes::GD083,
                codes::GD084,
                codes::GD085,
                codes::GD087,
                codes::GD088,
                codes::GD089,
                codes::GD091
            ]
        );
        assert_eq!(
            codes(View::Smoke),
            [
                codes::GD006,
                codes::GD024,
                codes::GD025,
                codes::GD027,
                codes::GD053,
                codes::GD054,
                codes::GD055,
                codes::GD056,
                codes::GD057,
                codes::GD058,
                codes::GD059,
                codes::GD062,
                codes::GD074,
                codes::GD075,
                codes::GD079,
                codes::GD088,
                codes::GD090
            ]
        );
    }

    #[test]
    fn rule_table_is_sorted_by_first_code() {
        for pair in RULES.windows(2) {
            assert!(
                pair[0].codes[0] < pair[1].codes[0],
                "{} before {}",
                pair[0].name,
                pair[1].name
            );
        }
    }

    #[test]
    fn empty_snapshot_never_panics_and_finds_no_errors() {
        let (_, findings) = evaluate(&Snapshot::default(), &|_: &str| true);
        assert!(
            findings
                .iter()
                .all(|f| f.severity != crate::findings::Severity::Error),
            "{findings:?}"
        );
    }

    /// Every fix any rule gives, in every place gpudoctor can run, over snapshots that make
    /// most rules speak.
    fn every_fix_in(place: &str) -> Vec<(String, crate::findings::Fix)> {
        use crate::testing::*;
        let mut snaps = vec![healthy(), no_gpu()];
        let mut s = healthy();
        unload_nvidia(&mut s);
        snaps.push(s);
        let mut s = healthy();
        remove_module(&mut s, "nvidia_uvm");
        remove_node(&mut s, "/dev/nvidia-uvm");
        snaps.push(s);
        let mut s = healthy();
        remove_node(&mut s, "/dev/nvidia1");
        snaps.push(s);
        let mut s = healthy();
        set_nvml(
            &mut s,
            crate::facts::nvml::NvmlResult::InitFailed {
                code: "driver_not_loaded".into(),
                message: "NVIDIA driver is not loaded".into(),
            },
        );
        snaps.push(s);
        let mut s = healthy();
        nvml_gpu(&mut s, 0).handle_error = Some("gpu_is_lost: GPU is lost".into());
        nvml_gpu(&mut s, 1).handle_error = Some("unknown: unknown error".into());
        snaps.push(s);
        let mut s = healthy();
        nvml_gpu(&mut s, 0).persistence_mode = crate::facts::nvml::Field::Value(false);
        nvml_gpu(&mut s, 1).recovery_action = crate::facts::nvml::Field::Value("gpu_reset".into());
        snaps.push(s);
        snaps.push(topology::tests::acs_switch());
        let mut out = Vec::new();
        for mut s in snaps {
            match place {
                "container" => in_container(&mut s, "docker"),
                "pod" => in_container(&mut s, "kubernetes"),
                "wsl" => make_wsl(&mut s),
                _ => {}
            }
            let (_, findings) = evaluate(&s, &|_: &str| true);
            for f in findings {
                for x in f.fix {
                    out.push((f.code.clone(), x));
                }
            }
        }
        out
    }

    #[test]
    fn no_host_command_is_offered_inside_a_container_a_pod_or_wsl() {
        for place in ["container", "pod", "wsl"] {
            let fixes = every_fix_in(place);
            assert!(
                fixes.len() > 5,
                "{place}: the snapshots made few rules speak"
            );
            for (code, fix) in fixes {
                let cmd = fix.command.unwrap_or_default();
                for word in ["modprobe", "rmmod", "systemctl", "dmesg", "nvidia-smi -r"] {
                    assert!(
                        !cmd.contains(word),
                        "{place}: {code} offers `{cmd}` ({})",
                        fix.text
                    );
                    if fix.text.contains(word) {
                        assert!(
                            fix.text.starts_with("On the host")
                                || fix.text.starts_with("On the node")
                                || fix.text.starts_with("On Windows")
                                || fix.text.contains("on the host")
                                || fix.text.contains("on a host"),
                            "{place}: {code} advises {:?} as if it could be done here",
                            fix.text
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_host_keeps_its_commands_and_no_fix_has_a_placeholder_title() {
        let fixes = every_fix_in("host");
        assert!(
            fixes
                .iter()
                .any(|(_, f)| f.command.as_deref().is_some_and(|c| c.contains("modprobe"))),
            "the host snapshots should still get modprobe"
        );
        for place in ["host", "container", "pod", "wsl"] {
            for (code, fix) in every_fix_in(place) {
                let words = fix.text.split_whitespace().count();
                assert!(
                    words >= 3,
                    "{place}: {code} has a fix titled {:?}",
                    fix.text
                );
            }
        }
    }
}
