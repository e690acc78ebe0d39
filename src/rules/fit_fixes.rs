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
    "sudo nvidia-smi",
    "systemctl",
    "/etc/modprobe.d",
    "/etc/modules-load.d",
    "dmesg",
    "update-initramfs",
    "mkinitrd",
    "reboot",
    "setpci",
    "update-grub",
    "grub2-mkconfig",
];

fn host_only(command: &str) -> bool {
    HOST_ONLY.iter().any(|w| command.contains(w))
}

/// Where the host's side of a fix is done, as the fix text says it.
fn host_words(place: Place) -> &'static str {
    match place {
        Place::KubernetesPod => "On the node (not in this pod)",
        Place::Wsl => "On Windows",
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
        let names_host_command = fix.command.as_deref().is_some_and(host_only)
            || (fix.command.is_none() && host_only(&fix.text));
        let fitted = match &fix.command {
            // WSL has no NVIDIA kernel driver of its own: every such step is Windows'.
            _ if names_host_command && place == Place::Wsl => Fix {
                text: "On Windows: update the NVIDIA driver, then restart WSL (`wsl --shutdown` in Windows); WSL has no NVIDIA kernel driver of its own".into(),
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
            // Advice that names a host command says where it belongs.
            None if host_only(&fix.text) && !fix.text.starts_with(host_words(place)) => Fix {
                text: format!("{}: {}", host_words(place), fix.text),
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
            crate::codes::GD030,
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
    fn advice_naming_a_host_command_says_where_it_belongs() {
        let mut f = Finding::new(crate::codes::GD032, Severity::Error, "GPU 1 needs a reset")
            .fix_text("Drain the GPU, then reset it: sudo nvidia-smi -r -i <index>");
        fit(Place::KubernetesPod, &mut f);
        assert!(f.fix[0]
            .text
            .starts_with("On the node (not in this pod): Drain"));
    }

    #[test]
    fn a_host_keeps_its_commands() {
        let mut f = finding();
        fit(Place::Host, &mut f);
        assert_eq!(f.fix[0].command.as_deref(), Some("sudo modprobe nvidia"));
    }
}
