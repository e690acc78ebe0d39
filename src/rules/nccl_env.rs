//! GD076: NCCL environment variables that break or slow every NCCL job here — an
//! NCCL_SOCKET_IFNAME or NCCL_IB_HCA that names nothing on this machine, transports
//! switched off by a leftover *_DISABLE, a level NCCL does not understand, NCCL_DEBUG left
//! at INFO.
//!
//! Syntax and semantics from NCCL's "Environment Variables" page
//! (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) and its source
//! (src/graph/paths.cc `ncclGetLevel`, src/misc/utils.cc `matchIfList`, bootstrap.cc).

use super::{Outcome, Rule};
use crate::codes;
use crate::facts::environment::Environment;
use crate::facts::nccl::{IbDevice, NcclHost};
use crate::findings::{Finding, Severity};
use crate::snapshot::{Place, Snapshot};
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "nccl_env",
    codes: &[codes::GD076],
    views: &[],
    checks: "NCCL's environment variables name interfaces and HCAs that exist and leave its transports on",
    judges: &[SubjectKind::NcclVariables],
    run,
};

/// An interface or HCA list as NCCL reads it: a leading `^` excludes what the list
/// matches, a leading `=` (after any `^`) matches names exactly instead of by prefix;
/// items are separated by `,` and an HCA item may end in `:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameFilter {
    pub exclude: bool,
    pub exact: bool,
    pub items: Vec<FilterItem>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterItem {
    pub name: String,
    pub port: Option<u32>,
}

impl NameFilter {
    pub fn parse(value: &str) -> NameFilter {
        let mut rest = value.trim();
        let exclude = rest.starts_with('^');
        if exclude {
            rest = &rest[1..];
        }
        let exact = rest.starts_with('=');
        if exact {
            rest = &rest[1..];
        }
        let items = rest
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| match s.rsplit_once(':') {
                Some((name, port)) => FilterItem {
                    name: name.to_string(),
                    port: port.parse().ok(),
                },
                None => FilterItem {
                    name: s.to_string(),
                    port: None,
                },
            })
            .collect();
        NameFilter {
            exclude,
            exact,
            items,
        }
    }

    fn item_matches(&self, item: &FilterItem, name: &str) -> bool {
        if self.exact {
            name == item.name
        } else {
            name.starts_with(&item.name)
        }
    }

    /// Whether NCCL keeps `name` (and, for HCAs, `port`).
    pub fn keeps(&self, name: &str, port: Option<u32>) -> bool {
        let listed = self.items.iter().any(|i| {
            self.item_matches(i, name)
                && match (i.port, port) {
                    (Some(want), Some(p)) => want == p,
                    _ => true,
                }
        });
        listed != self.exclude
    }

    /// The items (not excluding) that match no name at all.
    pub fn unmatched<'a>(&'a self, names: &[&str]) -> Vec<&'a FilterItem> {
        if self.exclude {
            return Vec::new();
        }
        self.items
            .iter()
            .filter(|i| !names.iter().any(|n| self.item_matches(i, n)))
            .collect()
    }
}

/// `strtol(str, NULL, 0)` as NCCL reads its integer switches: a leading number, else 0.
pub fn nccl_int(value: &str) -> i64 {
    let v = value.trim();
    let (neg, digits) = match v.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let n = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        i64::from_str_radix(&hex[..end], 16).unwrap_or(0)
    } else {
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        digits[..end].parse::<i64>().unwrap_or(0)
    };
    if neg {
        -n
    } else {
        n
    }
}

/// The path types NCCL_P2P_LEVEL and NCCL_NET_GDR_LEVEL accept, compared case-sensitively
/// (paths.cc `topoPathTypeStr` up to PATH_SYS; NVB, C2C, PXN and P2C exist in newer
/// releases); a value starting with a digit is the legacy numbering.
pub const PATH_LEVELS: &[&str] = &[
    "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "P2C", "PHB", "SYS",
];

pub fn level_is_valid(value: &str) -> bool {
    PATH_LEVELS.contains(&value) || value.starts_with(|c: char| c.is_ascii_digit())
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(env) = &snap.environment else {
        return Outcome::NotApplicable("environment probe did not run".into());
    };
    let nccl_vars = env.variables.iter().any(|v| v.name.starts_with("NCCL_"));
    if !nccl_vars {
        return Outcome::Checked(vec![]);
    }
    let host = snap.nccl.as_ref();
    let gpus = snap.gpu_count().map(|c| c.count).unwrap_or(0);
    let contained = snap.place() == Place::Container || snap.place() == Place::KubernetesPod;
    let mut out = Vec::new();
    let value = |name: &str| var(env, name);

    // NCCL ignores a value of one character or none and picks interfaces itself
    // (ncclFindInterfaces: `if (env && strlen(env) > 1)`).
    if let (Some(v), Some(names)) = (
        value("NCCL_SOCKET_IFNAME").filter(|v| v.len() > 1),
        host.and_then(|h| h.net_interfaces.get()),
    ) {
        if let Some(f) = socket_ifname(v, names, contained) {
            out.push(f);
        }
    }
    if let (Some(v), Some(devices)) = (value("NCCL_IB_HCA"), host.and_then(|h| h.ib_devices.get()))
    {
        let forced_ib = value("NCCL_NET").is_some_and(|n| n.trim().eq_ignore_ascii_case("IB"));
        if let Some(f) = ib_hca(v, devices, forced_ib) {
            out.push(f);
        }
    }
    out.extend(disabled_transports(env, gpus, host));
    for name in ["NCCL_P2P_LEVEL", "NCCL_NET_GDR_LEVEL"] {
        if let Some(v) = value(name).filter(|v| !level_is_valid(v)) {
            out.push(
                Finding::new(codes::GD076, Severity::Warning, format!("{name}={v} is not a level NCCL knows: it is ignored"))
                    .detail(format!("NCCL compares {name} case-sensitively with its path types ({}) or reads a leading number as the legacy numbering. Any other value is ignored without a warning and NCCL picks the level itself, so the setting you meant is not in force.", PATH_LEVELS.join(", ")))
                    .evidence(Subject::env(name), format!("{name}={v}"), "environment")
                    .fix_text(format!("Set {name} to one of {} (upper case), or unset it to let NCCL decide", PATH_LEVELS.join(", ")))
                    .fix_cmd(format!("Unset {name}"), crate::sh!("unset {}", name)),
            );
        }
    }
    if let Some(v) = value("NCCL_DEBUG") {
        let level = v.trim().to_ascii_uppercase();
        if level == "INFO" || level == "TRACE" {
            out.push(
                Finding::new(codes::GD076, Severity::Info, format!("NCCL_DEBUG={v} is set: every NCCL rank logs its set-up"))
                    .detail("With NCCL_DEBUG=INFO every rank of every job prints its topology, channels and transports to stderr (hundreds of lines per rank at start-up, more with TRACE). That is how transport problems are found; left on, it buries real warnings in the logs. NCCL_DEBUG=WARN prints only problems.")
                    .evidence(Subject::env("NCCL_DEBUG"), format!("NCCL_DEBUG={v}"), "environment")
                    .fix_cmd("Keep only NCCL's warnings unless you are debugging it now", "export NCCL_DEBUG=WARN"),
            );
        }
    }
    Outcome::Checked(out)
}

fn socket_ifname(value: &str, names: &[String], contained: bool) -> Option<Finding> {
    let filter = NameFilter::parse(value);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let kept: Vec<&str> = refs
        .iter()
        .copied()
        .filter(|n| filter.keeps(n, None))
        .collect();
    let unmatched = filter.unmatched(&refs);
    let where_ = if contained {
        "in this container's network namespace (a container sees its own interfaces, not the host's, unless it runs with --network host)"
    } else {
        "on this machine"
    };
    let listing = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    if kept.is_empty() {
        return Some(
            Finding::new(codes::GD076, Severity::Error, format!("NCCL_SOCKET_IFNAME={value} matches no network interface: NCCL cannot start"))
                .detail(format!("NCCL opens its bootstrap socket on the interfaces NCCL_SOCKET_IFNAME selects (a comma list of name prefixes; `=` makes them exact names, `^` excludes them). None of them exists {where_}, so every communicator fails at initialisation, even on one node, with \"NCCL WARN Bootstrap : no socket interface found\" (torch: \"ncclInternalError: Internal check failed. Last error: Bootstrap : no socket interface found\", newer NCCL: ncclInvalidUsage)."))
                .evidence(Subject::env("NCCL_SOCKET_IFNAME"), format!("NCCL_SOCKET_IFNAME={value}"), "environment")
                .evidence(Subject::Environment, format!("interfaces here: {listing}"), crate::facts::nccl::NET_DIR)
                .fix_cmd("Name an interface that exists here (`ip -br link` lists them), or unset the variable to let NCCL choose", "unset NCCL_SOCKET_IFNAME"),
        );
    }
    if unmatched.is_empty() {
        return None;
    }
    let missing: Vec<String> = unmatched.iter().map(|i| i.name.clone()).collect();
    Some(
        Finding::new(codes::GD076, Severity::Warning, format!("NCCL_SOCKET_IFNAME names {} that no interface here matches", missing.join(", ")))
            .detail(format!("NCCL uses only {} of the interfaces {where_}; the other entries match nothing. A list written for other nodes works here by accident, and fails on a node where the remaining names are absent too.", kept.join(", ")))
            .evidence(Subject::env("NCCL_SOCKET_IFNAME"), format!("NCCL_SOCKET_IFNAME={value}"), "environment")
            .evidence(Subject::Environment, format!("interfaces here: {listing}"), crate::facts::nccl::NET_DIR)
            .fix_text("Keep only the interfaces this node has (`ip -br link` lists them)"),
    )
}

/// The (device, port) pairs NCCL could use: active ports (NCCL skips the others).
fn usable_ports(devices: &[IbDevice]) -> Vec<(String, u32)> {
    devices
        .iter()
        .flat_map(|d| {
            d.ports
                .iter()
                .filter(|p| p.active())
                .map(|p| (d.name.clone(), p.number))
        })
        .collect()
}

fn ib_hca(value: &str, devices: &[IbDevice], forced_ib: bool) -> Option<Finding> {
    let filter = NameFilter::parse(value);
    let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
    let ports = usable_ports(devices);
    let kept: Vec<String> = ports
        .iter()
        .filter(|(d, p)| filter.keeps(d, Some(*p)))
        .map(|(d, p)| format!("{d}:{p}"))
        .collect();
    let unmatched: Vec<String> = filter
        .unmatched(&names)
        .iter()
        .map(|i| i.name.clone())
        .collect();
    let listing = if devices.is_empty() {
        "none".to_string()
    } else {
        let active: Vec<String> = ports.iter().map(|(d, p)| format!("{d}:{p}")).collect();
        format!(
            "{} (active ports: {})",
            names.join(", "),
            if active.is_empty() {
                "none".into()
            } else {
                active.join(", ")
            }
        )
    };
    let evidence = |f: Finding| {
        f.evidence(
            Subject::env("NCCL_IB_HCA"),
            format!("NCCL_IB_HCA={value}"),
            "environment",
        )
        .evidence(
            Subject::Environment,
            format!("RDMA devices here: {listing}"),
            crate::facts::nccl::INFINIBAND_DIR,
        )
    };
    if kept.is_empty() {
        let (severity, consequence) = if forced_ib {
            (Severity::Error, "NCCL_NET=IB allows no other network, so multi-node communicators fail to initialise")
        } else {
            (Severity::Warning, "NCCL finds no InfiniBand/RoCE device and sends inter-node traffic over TCP sockets instead, typically ten times slower or worse; jobs within one node are not affected")
        };
        return Some(evidence(
            Finding::new(codes::GD076, severity, format!("NCCL_IB_HCA={value} selects no active RDMA port here"))
                .detail(format!("NCCL_IB_HCA lists the RDMA devices NCCL may use (name prefixes, `=` for exact names, `^` to exclude, `:port` for one port); it keeps only active ports. Nothing it selects exists and is active here: {consequence}."))
                .fix_text("Name the devices this node has (`ls /sys/class/infiniband`, `ibv_devinfo` shows the port states), or unset NCCL_IB_HCA to let NCCL use every active port")
                .fix_cmd("Unset it", "unset NCCL_IB_HCA"),
        ));
    }
    if unmatched.is_empty() {
        return None;
    }
    Some(evidence(
        Finding::new(codes::GD076, Severity::Warning, format!("NCCL_IB_HCA names {} that no RDMA device here matches", unmatched.join(", ")))
            .detail(format!("NCCL uses {} here; the other entries match nothing. Fewer HCAs than planned means less inter-node bandwidth, and a list written for other nodes may select nothing on the next one.", kept.join(", ")))
            .fix_text("Keep only the devices this node has (`ls /sys/class/infiniband`)"),
    ))
}

/// A variable's value, unless it was redacted.
fn var<'a>(env: &'a Environment, name: &str) -> Option<&'a str> {
    env.get(name)
        .filter(|e| !e.redacted)
        .map(|e| e.value.as_str())
}

fn disabled_transports(env: &Environment, gpus: usize, host: Option<&NcclHost>) -> Vec<Finding> {
    let value = |name: &str| var(env, name);
    let mut out = Vec::new();
    let has_rdma = host
        .and_then(|h| h.ib_devices.get())
        .is_some_and(|d| !usable_ports(d).is_empty());
    // P2P: ncclGetLevel disables only on exactly 1; SHM and IB: any non-zero integer.
    let p2p = value("NCCL_P2P_DISABLE").filter(|v| nccl_int(v) == 1);
    if let Some(v) = p2p {
        let severity = if gpus > 1 {
            Severity::Warning
        } else {
            Severity::Info
        };
        out.push(
            Finding::new(codes::GD076, severity, format!("NCCL_P2P_DISABLE={v}: GPUs exchange data through host memory instead of directly"))
                .detail(format!("With P2P off NCCL copies between the GPUs of one node through shared host memory (the SHM transport). All-reduce bus bandwidth falls from NVLink's hundreds of GB/s to what host memory gives (often 10–20 GB/s), and on PCIe-only machines to about half. It is a legitimate workaround where P2P hangs or corrupts data (PCIe ACS or an IOMMU redirecting peer traffic, some virtual machines, GPUs without P2P support); otherwise it is a leftover.{}", if gpus > 1 { "" } else { " With fewer than two GPUs here it changes nothing on this node." }))
                .evidence(Subject::env("NCCL_P2P_DISABLE"), format!("NCCL_P2P_DISABLE={v}"), "environment")
                .fix_cmd("Unset it unless P2P is broken on this machine (`gpudoctor smoke --nccl` measures both ways)", "unset NCCL_P2P_DISABLE"),
        );
    }
    if let Some(v) = value("NCCL_SHM_DISABLE").filter(|v| nccl_int(v) != 0) {
        let severity = if gpus > 1 {
            Severity::Warning
        } else {
            Severity::Info
        };
        out.push(
            Finding::new(codes::GD076, severity, format!("NCCL_SHM_DISABLE={v}: GPUs without P2P talk over the network, even within this node"))
                .detail("NCCL uses shared host memory between GPUs that cannot reach each other directly (different CPU sockets, P2P off). With it disabled that traffic goes through the network stack (InfiniBand or TCP sockets) even inside one node: slower, and an error where no usable network exists. It is set to work around a small /dev/shm in containers; giving the container more shared memory is the fix for that.")
                .evidence(Subject::env("NCCL_SHM_DISABLE"), format!("NCCL_SHM_DISABLE={v}"), "environment")
                .fix_cmd("Unset it (in a container, give it shared memory instead: --shm-size or --ipc=host)", "unset NCCL_SHM_DISABLE"),
        );
    }
    if let Some(v) = value("NCCL_IB_DISABLE").filter(|v| nccl_int(v) != 0) {
        if has_rdma {
            out.push(
                Finding::new(codes::GD076, Severity::Warning, format!("NCCL_IB_DISABLE={v} on a node with active RDMA ports: inter-node traffic goes over TCP"))
                    .detail("NCCL_IB_DISABLE turns off NCCL's InfiniBand/RoCE transport, so traffic between nodes uses TCP sockets: typically ten times slower or worse than the RDMA fabric this node has, and more CPU. It is a workaround while the fabric is broken; otherwise a leftover.")
                    .evidence(Subject::env("NCCL_IB_DISABLE"), format!("NCCL_IB_DISABLE={v}"), "environment")
                    .fix_cmd("Unset it unless the RDMA fabric is broken", "unset NCCL_IB_DISABLE"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Fact;
    use crate::facts::nccl::IbPort;
    use crate::testing::*;

    fn with_ib(s: &mut Snapshot, devices: &[(&str, &[u32])]) {
        let devs = devices
            .iter()
            .map(|(n, ports)| IbDevice {
                name: n.to_string(),
                driver: None,
                ports: ports
                    .iter()
                    .map(|&p| IbPort {
                        number: p,
                        state: Some("4: ACTIVE".into()),
                        link_layer: Some("InfiniBand".into()),
                    })
                    .collect(),
            })
            .collect();
        s.nccl.as_mut().unwrap().ib_devices = Fact::value(crate::facts::nccl::INFINIBAND_DIR, devs);
    }

    #[test]
    fn filter_syntax_follows_nccl() {
        let f = NameFilter::parse("eth");
        assert!(f.keeps("eth0", None) && !f.keeps("ib0", None));
        let f = NameFilter::parse("=eth0,eth1");
        assert!(f.exact && f.keeps("eth1", None) && !f.keeps("eth10", None));
        let f = NameFilter::parse("^docker,lo");
        assert!(f.exclude && !f.keeps("docker0", None) && f.keeps("eth0", None));
        let f = NameFilter::parse("^=docker0");
        assert!(f.exclude && f.exact && f.keeps("docker1", None));
        let f = NameFilter::parse("mlx5_0:1,mlx5_1");
        assert_eq!(f.items[0].port, Some(1));
        assert!(f.keeps("mlx5_0", Some(1)) && !f.keeps("mlx5_0", Some(2)));
        assert!(f.keeps("mlx5_1", Some(2)));
        assert_eq!(f.unmatched(&["mlx5_0"]).len(), 1);
        assert!(NameFilter::parse("^mlx5_9")
            .unmatched(&["mlx5_0"])
            .is_empty());
    }

    #[test]
    fn integers_and_levels_read_like_nccl() {
        assert_eq!(nccl_int("1"), 1);
        assert_eq!(nccl_int(" 0x10"), 16);
        assert_eq!(nccl_int("true"), 0);
        assert_eq!(nccl_int("2abc"), 2);
        assert!(level_is_valid("NVL") && level_is_valid("3") && level_is_valid("SYS"));
        assert!(!level_is_valid("nvl") && !level_is_valid("NVLINK") && !level_is_valid(""));
    }

    #[test]
    fn valid_settings_are_clean() {
        let mut s = healthy();
        with_ib(&mut s, &[("mlx5_0", &[1])]);
        for (k, v) in [
            ("NCCL_SOCKET_IFNAME", "eth"),
            ("NCCL_IB_HCA", "=mlx5_0:1"),
            ("NCCL_P2P_LEVEL", "NVL"),
            ("NCCL_NET_GDR_LEVEL", "PHB"),
            ("NCCL_DEBUG", "WARN"),
            ("NCCL_P2P_DISABLE", "0"),
        ] {
            set_env(&mut s, k, v);
        }
        assert_clean(run(&s));
    }

    #[test]
    fn an_interface_that_does_not_exist_is_an_error() {
        let mut s = healthy();
        set_env(&mut s, "NCCL_SOCKET_IFNAME", "=ib0");
        let f = only(run(&s), codes::GD076, Severity::Error);
        assert!(
            f.detail.contains("Bootstrap : no socket interface found"),
            "{}",
            f.detail
        );
        assert!(evidence_mentions(&f, "eth0, lo"));
        in_container(&mut s, "docker");
        let f = only(run(&s), codes::GD076, Severity::Error);
        assert!(
            f.detail.contains("container's network namespace"),
            "{}",
            f.detail
        );
        // A partly matching list works, with a warning.
        set_env(&mut s, "NCCL_SOCKET_IFNAME", "eth,ib");
        let f = only(run(&s), codes::GD076, Severity::Warning);
        assert!(f.title.contains("names ib"), "{}", f.title);
        // Excluding everything there is.
        set_env(&mut s, "NCCL_SOCKET_IFNAME", "^eth,lo");
        only(run(&s), codes::GD076, Severity::Error);
        // NCCL ignores a value of one character or none and picks interfaces itself.
        for ignored in ["", "x"] {
            set_env(&mut s, "NCCL_SOCKET_IFNAME", ignored);
            assert_clean(run(&s));
        }
    }

    #[test]
    fn an_absent_hca_is_a_warning_or_an_error_when_ib_is_forced() {
        let mut s = healthy();
        with_ib(&mut s, &[("mlx5_0", &[1])]);
        set_env(&mut s, "NCCL_IB_HCA", "mlx5_3");
        let f = only(run(&s), codes::GD076, Severity::Warning);
        assert!(f.detail.contains("TCP sockets"), "{}", f.detail);
        set_env(&mut s, "NCCL_NET", "IB");
        only(run(&s), codes::GD076, Severity::Error);
        // The device exists, the port does not.
        let mut s = healthy();
        with_ib(&mut s, &[("mlx5_0", &[1])]);
        set_env(&mut s, "NCCL_IB_HCA", "mlx5_0:2");
        only(run(&s), codes::GD076, Severity::Warning);
        // One of two names absent.
        set_env(&mut s, "NCCL_IB_HCA", "mlx5_0,mlx5_7");
        let f = only(run(&s), codes::GD076, Severity::Warning);
        assert!(f.title.contains("mlx5_7"), "{}", f.title);
    }

    #[test]
    fn disabled_transports_are_warnings_with_several_gpus() {
        let mut s = healthy();
        nvml_sys(&mut s).device_count = crate::facts::nvml::Field::Value(2);
        set_env(&mut s, "NCCL_P2P_DISABLE", "1");
        let f = only(run(&s), codes::GD076, Severity::Warning);
        assert_eq!(first_cmd(&f), "unset NCCL_P2P_DISABLE");
        // NCCL disables P2P only on exactly 1.
        set_env(&mut s, "NCCL_P2P_DISABLE", "true");
        assert_clean(run(&s));
        set_env(&mut s, "NCCL_SHM_DISABLE", "1");
        only(run(&s), codes::GD076, Severity::Warning);
        let mut s = healthy();
        set_env(&mut s, "NCCL_IB_DISABLE", "1");
        // No RDMA device here: nothing is lost.
        assert_clean(run(&s));
        with_ib(&mut s, &[("mlx5_0", &[1])]);
        only(run(&s), codes::GD076, Severity::Warning);
    }

    #[test]
    fn bad_levels_and_debug_left_on() {
        let mut s = healthy();
        set_env(&mut s, "NCCL_P2P_LEVEL", "nvlink");
        only(run(&s), codes::GD076, Severity::Warning);
        let mut s = healthy();
        set_env(&mut s, "NCCL_DEBUG", "INFO");
        let f = only(run(&s), codes::GD076, Severity::Info);
        assert_eq!(first_cmd(&f), "export NCCL_DEBUG=WARN");
    }
}
