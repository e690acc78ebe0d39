//! GD068: a CDI specification of nvidia.com/gpu that no longer matches the host: a file,
//! device node or hook it names is gone, or it was generated for another driver version than
//! the one loaded. Engines inject exactly what the spec lists, so containers requesting the
//! GPUs fail to start after a driver upgrade until the spec is generated again.

use super::{container_host, Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;

pub const RULE: Rule = Rule {
    name: "cdi",
    codes: &[codes::GD068],
    views: &[],
    checks: "the NVIDIA CDI specifications name files that exist and the driver that is loaded",
    judges: &[],
    run,
};

/// Toolkit 1.18.0 added the nvidia-cdi-refresh units that regenerate /var/run/cdi/nvidia.yaml
/// (NVIDIA Container Toolkit docs, cdi-support.md; release notes 1.18.0).
const REFRESH_SINCE: (u32, u32) = (1, 18);

fn run(snap: &Snapshot) -> Outcome {
    let host = match container_host(snap) {
        Ok(h) => h,
        Err(na) => return na,
    };
    let driver = snap.driver_version();
    let refresh = host
        .toolkit_package()
        .and_then(|p| {
            let mut it = p.version.split(['.', '-']).map(|x| x.parse::<u32>().ok());
            Some((it.next()??, it.next()??))
        })
        .is_some_and(|v| v >= REFRESH_SINCE);
    let mut out = Vec::new();
    for (path, spec) in host.nvidia_specs() {
        let missing: Vec<&str> = spec
            .host_paths
            .iter()
            .filter(|p| !p.exists)
            .map(|p| p.path.as_str())
            .collect();
        let other_driver = match (&spec.driver_version, &driver) {
            (Some(v), Some(d)) if *v != d.version.to_string() => Some((v.clone(), d)),
            _ => None,
        };
        if missing.is_empty() && other_driver.is_none() {
            continue;
        }
        let mut why = Vec::new();
        if let Some((v, d)) = &other_driver {
            why.push(format!(
                "it was generated for driver {v} while driver {} is loaded",
                d.version
            ));
        }
        if !missing.is_empty() {
            why.push(format!(
                "{} path{} it names no longer exist{}",
                missing.len(),
                if missing.len() == 1 { "" } else { "s" },
                if missing.len() == 1 { "s" } else { "" }
            ));
        }
        let shown: Vec<&str> = missing.iter().take(5).copied().collect();
        let mut f = Finding::new(
            codes::GD068,
            Severity::Error,
            "A CDI specification of the NVIDIA GPUs is stale: GPU containers will fail to start",
        )
        .detail(format!(
            "{path}: {}. Container engines inject exactly the device nodes, libraries and hooks a CDI specification lists, so a container requesting nvidia.com/gpu fails to start (\"failed to inject CDI devices\", or \"error running hook: … no such file or directory\") until the specification is generated again for the installed driver.",
            why.join(", and ")
        ))
        .evidence(
            Subject::File(path.to_string()),
            format!(
                "generated for driver {}",
                spec.driver_version.as_deref().unwrap_or("unknown")
            ),
            path,
        );
        if let Some((_, d)) = &other_driver {
            f = f.context(format!("loaded driver {}", d.version), d.source.clone());
        }
        if !missing.is_empty() {
            f = f.evidence(
                Subject::File(path.to_string()),
                format!(
                    "missing: {}{}",
                    shown.join(", "),
                    if missing.len() > shown.len() {
                        format!(" and {} more", missing.len() - shown.len())
                    } else {
                        String::new()
                    }
                ),
                path,
            );
        }
        f = f.fix_cmd(
            "Generate the specification again for the installed driver",
            crate::sh!("sudo nvidia-ctk cdi generate --output={}", path),
        );
        if refresh {
            f = f.fix_cmd(
                "Or let the toolkit's nvidia-cdi-refresh service regenerate it (toolkit 1.18 and newer)",
                "sudo systemctl restart nvidia-cdi-refresh.service",
            );
        }
        f = f.fix_cmd("Check the devices it now lists", "nvidia-ctk cdi list");
        out.push(f);
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn a_current_spec_is_clean_and_no_spec_is_clean() {
        assert_clean(run(&healthy()));
        let mut s = healthy();
        nvidia_spec(&mut s, "/etc/cdi/nvidia.yaml", DRIVER, &[]);
        assert_clean(run(&s));
    }

    #[test]
    fn a_spec_for_another_driver_is_an_error() {
        let mut s = healthy();
        nvidia_spec(&mut s, "/etc/cdi/nvidia.yaml", "535.183.01", &[]);
        let f = only(run(&s), codes::GD068, Severity::Error);
        assert!(
            f.detail
                .contains("generated for driver 535.183.01 while driver 550.54.15"),
            "{}",
            f.detail
        );
        assert_eq!(
            first_cmd(&f),
            "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"
        );
        assert!(!fixes_mention(&f, "nvidia-cdi-refresh"));
    }

    #[test]
    fn missing_paths_are_an_error_and_new_toolkits_get_the_refresh_service() {
        let mut s = healthy();
        with_toolkit(&mut s, "1.18.0");
        nvidia_spec(
            &mut s,
            "/var/run/cdi/nvidia.yaml",
            DRIVER,
            &["/usr/bin/nvidia-cdi-hook"],
        );
        let f = only(run(&s), codes::GD068, Severity::Error);
        assert!(evidence_mentions(&f, "missing: /usr/bin/nvidia-cdi-hook"));
        assert!(fixes_mention(
            &f,
            "sudo systemctl restart nvidia-cdi-refresh.service"
        ));
    }

    #[test]
    fn not_applicable_in_a_container() {
        let mut s = healthy();
        nvidia_spec(&mut s, "/etc/cdi/nvidia.yaml", "535.183.01", &[]);
        in_container(&mut s, "docker");
        assert_na(run(&s));
    }
}
