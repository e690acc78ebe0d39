//! Fixes that fit where gpudoctor runs. A command that changes the kernel, the driver or
//! the machine (modprobe, a GPU reset, a systemd unit, the kernel log) cannot work inside
//! a container, a pod or WSL: there it becomes advice for whoever runs the host, without
//! a command to paste.

use crate::findings::{Finding, Fix};
use crate::snapshot::Place;

/// Words of commands that act on the host's kernel, driver or services.
const HOST_ONLY: &[&str] = &[
    "modprobe",
    "rmmod",
    "nvidia-modprobe",
    "nvidia-smi -r",
    "nvidia-smi -i",
    "nvidia-smi -pm",
    "systemctl",
    "/etc/modprobe.d",
    "dmesg",
    "update-initramfs",
    "mkinitrd",
    "reboot",
];

fn host_only(command: &str) -> bool {
    HOST_ONLY.iter().any(|w| command.contains(w))
}

/// Where the host's side of a fix is done, as the fix text says it.
fn host_words(place: Place) -> &'static str {
    match place {
        Place::KubernetesPod => "On the node (not in this pod)",
        Place::Wsl => "WSL has no NVIDIA kernel driver of its own: on Windows",
        _ => "On the host (not in this container)",
    }
}

/// Rewrites host-only fix commands for a contained place; elsewhere nothing changes.
pub fn fit(place: Place, f: &mut Finding) {
    if !place.is_contained() {
        return;
    }
    let mut fixes: Vec<Fix> = Vec::with_capacity(f.fix.len());
    for fix in f.fix.drain(..) {
        let fitted = match &fix.command {
            Some(cmd) if host_only(cmd) && place == Place::Wsl => Fix {
                text: format!(
                    "{}, update the NVIDIA driver and restart WSL (wsl --shutdown); not: {}",
                    host_words(place),
                    fix.text.trim_end_matches('.')
                ),
                command: None,
            },
            Some(cmd) if host_only(cmd) => Fix {
                text: format!(
                    "{}: {} (`{cmd}` there)",
                    host_words(place),
                    fix.text.trim_end_matches('.')
                ),
                command: None,
            },
            _ => fix,
        };
        if !fixes.iter().any(|x| x.text == fitted.text) {
            fixes.push(fitted);
        }
    }
    f.fix = fixes;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;

    fn finding() -> Finding {
        Finding::new(
            "GD030",
            Severity::Error,
            "NVML says the driver is not loaded",
        )
        .fix_cmd("Load the kernel module", "sudo modprobe nvidia")
        .fix_cmd("See the GPUs", "nvidia-smi -L")
    }

    #[test]
    fn a_container_gets_no_host_command() {
        let mut f = finding();
        fit(Place::Container, &mut f);
        assert_eq!(f.fix[0].command, None);
        assert!(f.fix[0].text.starts_with("On the host"), "{:?}", f.fix);
        assert_eq!(f.fix[1].command.as_deref(), Some("nvidia-smi -L"));
    }

    #[test]
    fn a_host_keeps_its_commands() {
        let mut f = finding();
        fit(Place::Host, &mut f);
        assert_eq!(f.fix[0].command.as_deref(), Some("sudo modprobe nvidia"));
    }
}
