//! Multi-GPU topology through the real binary: fake sysfs trees under --root whose bridges'
//! config spaces follow real `lspci -xxxx` layouts (pciutils' test dumps: the PLX PEX 9716
//! downstream port of tests/cap-dpc, the PLX PEX 8796 upstream port of tests/cap-multicast,
//! the Haswell-E root port of tests/cap-aer-root), IOMMU layouts, RDMA NICs and the fake
//! NVML's NVLink remote PCI info.

use crate::util;

use crate::util::fake_nvml::*;
use crate::util::*;

/// A config space with the capability layout of a real bridge.
#[derive(Clone, Copy)]
enum Port {
    /// PLX PEX 9716 (10b5:9716) downstream port: PM 0x40 → MSI 0x48 → PCIe 0x68 (type 6)
    /// → SSID 0xa4; extended: DSN 0x100 → AER 0xfb4 → 0x138 → 0x10c → VC 0x148 → ACS 0xf24
    /// (capability 0x007f) → 0xb70 → DPC 0xb60.
    PlxDownstream,
    /// PLX PEX 8796 (10b5:8796) upstream port: PCIe 0x68 (type 5), no ACS: DSN 0x100 →
    /// AER 0xfb4 → 0x138 → 0x10c → VC 0x148 → multicast 0xe00 → 0xb00 → 0xb70.
    PlxUpstream,
    /// Intel Haswell-E root port 2 (8086:2f04): SSID 0x40 → MSI 0x60 → PCIe 0x90 (type 4) →
    /// PM 0xe0; extended: vendor 0x100 → ACS 0x110 (capability 0x001f) → AER 0x148 → …
    IntelRoot,
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn ecap(b: &mut [u8], at: usize, id: u16, next: usize) {
    let h = id as u32 | (1 << 16) | ((next as u32) << 20);
    b[at..at + 4].copy_from_slice(&h.to_le_bytes());
}

/// 4096 bytes as root reads them; `acs_control` is the ACS Control register.
fn config(port: Port, acs_control: u16) -> Vec<u8> {
    let mut b = vec![0u8; 4096];
    b[0x06] = 0x10; // capability list
    b[0x0b] = 0x06; // bridge class
    b[0x0a] = 0x04;
    match port {
        Port::PlxDownstream | Port::PlxUpstream => {
            let dev = if matches!(port, Port::PlxDownstream) {
                0x9716
            } else {
                0x8796
            };
            put16(&mut b, 0, 0x10b5);
            put16(&mut b, 2, dev);
            b[0x0e] = 0x01;
            b[0x34] = 0x40;
            b[0x40] = 0x01;
            b[0x41] = 0x48;
            b[0x48] = 0x05;
            b[0x49] = 0x68;
            b[0x68] = 0x10;
            b[0x69] = 0xa4;
            b[0x6a] = if matches!(port, Port::PlxDownstream) {
                0x62
            } else {
                0x52
            };
            b[0xa4] = 0x0d;
            ecap(&mut b, 0x100, 0x0003, 0xfb4);
            ecap(&mut b, 0xfb4, 0x0001, 0x138);
            ecap(&mut b, 0x138, 0x0004, 0x10c);
            ecap(&mut b, 0x10c, 0x0019, 0x148);
            if matches!(port, Port::PlxDownstream) {
                ecap(&mut b, 0x148, 0x0002, 0xf24);
                ecap(&mut b, 0xf24, 0x000d, 0xb70);
                put16(&mut b, 0xf28, 0x007f);
                put16(&mut b, 0xf2a, acs_control);
                ecap(&mut b, 0xb70, 0x000b, 0xb60);
                ecap(&mut b, 0xb60, 0x001d, 0);
            } else {
                ecap(&mut b, 0x148, 0x0002, 0xe00);
                ecap(&mut b, 0xe00, 0x0012, 0xb00);
                ecap(&mut b, 0xb00, 0x0018, 0xb70);
                ecap(&mut b, 0xb70, 0x000b, 0);
            }
        }
        Port::IntelRoot => {
            put16(&mut b, 0, 0x8086);
            put16(&mut b, 2, 0x2f04);
            b[0x0e] = 0x81;
            b[0x34] = 0x40;
            b[0x40] = 0x0d;
            b[0x41] = 0x60;
            b[0x60] = 0x05;
            b[0x61] = 0x90;
            b[0x90] = 0x10;
            b[0x91] = 0xe0;
            b[0x92] = 0x42;
            b[0xe0] = 0x01;
            ecap(&mut b, 0x100, 0x000b, 0x110);
            ecap(&mut b, 0x110, 0x000d, 0x148);
            put16(&mut b, 0x114, 0x001f);
            put16(&mut b, 0x116, acs_control);
            ecap(&mut b, 0x148, 0x0001, 0x1d0);
            ecap(&mut b, 0x1d0, 0x000b, 0);
        }
    }
    b
}

/// Linux's pci_enable_acs with an IOMMU: SrcValid, ReqRedir, CmpltRedir, UpstreamFwd.
const LINUX_ACS: u16 = 0x1d;

struct Host {
    root: FakeRoot,
}

impl Host {
    /// `n` GPUs of FakeRoot::healthy, to be placed with `place`.
    fn new(n: usize) -> Host {
        let root = FakeRoot::healthy(n);
        root.file(
            "proc/cmdline",
            "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 ro quiet\n",
        );
        root.dir("sys/class/iommu");
        root.dir("sys/kernel/iommu_groups");
        Host { root }
    }

    /// Moves GPU `addr` under `chain` (bridges from the root port down, each with its config)
    /// on host bridge `host` with NUMA node `numa`.
    fn place(&self, addr: &str, host: &str, chain: &[(&str, &[u8])], numa: i32) -> &Self {
        let r = &self.root;
        r.remove(&format!("sys/bus/pci/devices/{addr}"));
        r.remove(&format!("sys/devices/pci0000:00/{addr}"));
        let mut dir = format!("sys/devices/{host}");
        for (bridge, cfg) in chain {
            dir = format!("{dir}/{bridge}");
            r.bytes(&format!("{dir}/config"), cfg);
            r.file(&format!("{dir}/vendor"), "0x10b5\n");
            r.file(&format!("{dir}/class"), "0x060400\n");
            let up = "../".repeat(4);
            let rel = dir.trim_start_matches("sys/");
            r.link(
                &format!("{up}{rel}"),
                &format!("sys/bus/pci/devices/{bridge}"),
            );
        }
        let dev = format!("{dir}/{addr}");
        r.file(&format!("{dev}/vendor"), "0x10de\n")
            .file(&format!("{dev}/device"), "0x2330\n")
            .file(&format!("{dev}/class"), "0x030200\n")
            .file(&format!("{dev}/numa_node"), &format!("{numa}\n"))
            .file(
                &format!("{dev}/local_cpulist"),
                if numa == 1 {
                    "56-111,168-223\n"
                } else {
                    "0-55,112-167\n"
                },
            )
            .link("/sys/bus/pci/drivers/nvidia", &format!("{dev}/driver"));
        let rel = dev.trim_start_matches("sys/");
        r.link(
            &format!("../../../{rel}"),
            &format!("sys/bus/pci/devices/{addr}"),
        );
        self
    }

    /// Intel VT-d with one group per GPU of `kind` (DMA-FQ, identity).
    fn iommu(&self, kind: &str, groups: &[(u32, &[&str])]) -> &Self {
        let r = &self.root;
        r.dir("sys/class/iommu/dmar0").dir("sys/class/iommu/dmar1");
        for (n, devices) in groups {
            r.file(
                &format!("sys/kernel/iommu_groups/{n}/type"),
                &format!("{kind}\n"),
            );
            for d in *devices {
                r.dir(&format!("sys/kernel/iommu_groups/{n}/devices/{d}"));
                if let Ok(target) = std::fs::canonicalize(r.p(&format!("sys/bus/pci/devices/{d}")))
                {
                    let link = target.join("iommu_group");
                    let _ = std::os::unix::fs::symlink(
                        format!("../../../../../../kernel/iommu_groups/{n}"),
                        link,
                    );
                }
            }
        }
        self
    }

    fn check(&self) -> (i32, serde_json::Value) {
        json(self.root.cmd().args(["check", "--no-smoke"]))
    }
}

fn finding<'a>(report: &'a serde_json::Value, code: &str) -> &'a serde_json::Value {
    let f = findings(report, code);
    assert_eq!(f.len(), 1, "{code}: {:#?}", report["findings"]);
    f[0]
}

fn check_status<'a>(report: &'a serde_json::Value, rule: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule"] == rule)
        .unwrap_or_else(|| panic!("no check {rule}"))
}

/// Two GPUs behind one PLX switch below an Intel root port.
fn switch_pair(ds_control: u16) -> Host {
    let h = Host::new(2);
    let rp = config(Port::IntelRoot, LINUX_ACS);
    let us = config(Port::PlxUpstream, 0);
    let ds = config(Port::PlxDownstream, ds_control);
    h.place(
        "0000:18:00.0",
        "pci0000:00",
        &[
            ("0000:00:02.0", &rp),
            ("0000:16:00.0", &us),
            ("0000:17:08.0", &ds),
        ],
        0,
    )
    .place(
        "0000:19:00.0",
        "pci0000:00",
        &[
            ("0000:00:02.0", &rp),
            ("0000:16:00.0", &us),
            ("0000:17:10.0", &ds),
        ],
        0,
    );
    h
}

#[test]
fn acs_redirect_on_a_switch_is_gd072_with_the_real_ports() {
    let h = switch_pair(LINUX_ACS);
    h.iommu(
        "DMA-FQ",
        &[(31, &["0000:18:00.0"]), (32, &["0000:19:00.0"])],
    );
    let (code, r) = h.check();
    assert_eq!(
        code, 0,
        "a warning does not fail the default --fail-on error"
    );
    let f = finding(&r, "GD072");
    assert_eq!(f["severity"], "warning");
    assert!(
        f["title"].as_str().unwrap().contains("0000:18:00.0"),
        "{f:#}"
    );
    let cmds = fix_commands(f);
    assert!(
        cmds.contains("for port in 0000:17:08.0 0000:17:10.0; do sudo setpci -s \"$port\" ECAP_ACS+6.w=0000; done"),
        "{cmds}"
    );
    assert!(cmds.contains("export NCCL_P2P_DISABLE=1"), "{cmds}");
    let texts = f["fix"].to_string();
    assert!(
        texts.contains("pci=disable_acs_redir=0000:17:08.0;0000:17:10.0"),
        "{texts}"
    );
    assert!(texts.contains("iommu=pt"), "{texts}");
    // The root port is above the switch: the pair's traffic never reaches it.
    assert!(!cmds.contains("00:02.0"), "{cmds}");
    // One fact, one verdict: the translating IOMMU is part of GD072's fix.
    assert!(findings(&r, "GD073").is_empty(), "{:#}", r["findings"]);
    let (code, _) = json(
        h.root
            .cmd()
            .args(["check", "--no-smoke", "--fail-on", "warning"]),
    );
    assert_eq!(code, 1);
    // The snapshot carries the parsed registers.
    let bridges = r["snapshot"]["topology"]["bridges"].as_array().unwrap();
    let ds = bridges
        .iter()
        .find(|b| b["address"] == "0000:17:08.0")
        .unwrap();
    assert_eq!(ds["kind"], "switch_downstream");
    assert_eq!(ds["id"], "10b5:9716");
    assert_eq!(ds["acs"]["value"]["offset"], 0xf24);
    assert_eq!(ds["acs"]["value"]["control"], LINUX_ACS);
    let us = bridges
        .iter()
        .find(|b| b["address"] == "0000:16:00.0")
        .unwrap();
    assert_eq!(us["kind"], "switch_upstream");
    assert!(us["acs"]["value"].is_null(), "{us:#}");
    assert_eq!(r["snapshot"]["topology"]["iommu"]["mode"], "translated");
}

#[test]
fn acs_off_with_a_translating_iommu_is_gd073() {
    let h = switch_pair(0);
    h.iommu("DMA", &[(31, &["0000:18:00.0"]), (32, &["0000:19:00.0"])]);
    let (_, r) = h.check();
    assert!(findings(&r, "GD072").is_empty());
    let f = finding(&r, "GD073");
    assert_eq!(f["severity"], "warning");
    assert!(f["fix"].to_string().contains("iommu=pt"));
    assert!(f["fix"].to_string().contains("intel_iommu=off"));
    // Identity (iommu=pt): nothing to say.
    let h = switch_pair(0);
    h.iommu("identity", &[(31, &["0000:18:00.0", "0000:19:00.0"])]);
    let (_, r) = h.check();
    let f = finding(&r, "GD073");
    assert_eq!(f["severity"], "info", "shared group");
    assert!(f["title"]
        .as_str()
        .unwrap()
        .contains("share IOMMU group 31"));
    assert_eq!(r["snapshot"]["topology"]["iommu"]["mode"], "passthrough");
}

#[test]
fn unreadable_lost_and_looping_config_spaces_are_unknown_not_off() {
    // 64 bytes: what an unprivileged read of sysfs config returns.
    let h = switch_pair(LINUX_ACS);
    for ds in ["0000:17:08.0", "0000:17:10.0"] {
        let p = format!("sys/devices/pci0000:00/0000:00:02.0/0000:16:00.0/{ds}/config");
        let full = std::fs::read(h.root.p(&p)).unwrap();
        h.root.bytes(&p, &full[..64]);
    }
    let (_, r) = h.check();
    assert!(findings(&r, "GD072").is_empty());
    let c = check_status(&r, "topology");
    assert_eq!(c["status"], "not_applicable");
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .contains("readable by root only"),
        "{c:#}"
    );
    // A lost port (all 0xFF) and a loop in the extended list.
    let h = switch_pair(LINUX_ACS);
    let base = "sys/devices/pci0000:00/0000:00:02.0/0000:16:00.0";
    h.root
        .bytes(&format!("{base}/0000:17:08.0/config"), &[0xff; 4096]);
    let mut looped = config(Port::PlxDownstream, LINUX_ACS);
    ecap(&mut looped, 0x148, 0x0002, 0x100);
    h.root
        .bytes(&format!("{base}/0000:17:10.0/config"), &looped);
    let (code, r) = h.check();
    assert_eq!(code, 0);
    assert!(findings(&r, "GD072").is_empty());
    let detail = check_status(&r, "topology")["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains("gone") || detail.contains("loops"),
        "{detail}"
    );
    let bridges = r["snapshot"]["topology"]["bridges"].as_array().unwrap();
    let lost = bridges
        .iter()
        .find(|b| b["address"] == "0000:17:08.0")
        .unwrap();
    assert!(lost["acs"]["missing"]["detail"]
        .as_str()
        .unwrap()
        .contains("all 0xFF"));
    let looping = bridges
        .iter()
        .find(|b| b["address"] == "0000:17:10.0")
        .unwrap();
    assert!(looping["acs"]["missing"]["detail"]
        .as_str()
        .unwrap()
        .contains("loops back to 0x100"));
}

#[test]
fn one_gpu_is_not_applicable() {
    let h = Host::new(1);
    let (_, r) = h.check();
    let c = check_status(&r, "topology");
    assert_eq!(c["status"], "not_applicable");
    assert!(c["detail"].as_str().unwrap().contains("two"), "{c:#}");
}

/// 8 GPUs: two PLX switches of four on two NUMA nodes (host bridges pci0000:00 and
/// pci0000:80), one more GPU pair on root ports of one host bridge, an InfiniBand NIC in the
/// first switch.
fn eight_gpus() -> Host {
    let h = Host::new(8);
    let rp = config(Port::IntelRoot, 0);
    let us = config(Port::PlxUpstream, 0);
    let ds = config(Port::PlxDownstream, 0);
    for i in 0..4 {
        let addr = format!("0000:{:02x}:00.0", 0x18 + i);
        let port = format!("0000:17:{:02x}.0", 8 * (i + 1));
        h.place(
            &addr,
            "pci0000:00",
            &[("0000:00:02.0", &rp), ("0000:16:00.0", &us), (&port, &ds)],
            0,
        );
    }
    for i in 4..6 {
        let addr = format!("0000:{:02x}:00.0", 0x18 + i);
        let port = format!("0000:81:{:02x}.0", 8 * (i - 3));
        h.place(
            &addr,
            "pci0000:80",
            &[("0000:80:02.0", &rp), ("0000:80:03.0", &us), (&port, &ds)],
            1,
        );
    }
    for i in 6..8 {
        let addr = format!("0000:{:02x}:00.0", 0x18 + i);
        let port = format!("0000:80:{:02x}.0", 4 + i);
        h.place(&addr, "pci0000:80", &[(&port, &rp)], 1);
    }
    // mlx5_0: ConnectX behind the first switch, InfiniBand, ib0.
    let nic = "sys/devices/pci0000:00/0000:00:02.0/0000:16:00.0/0000:17:28.0/0000:30:00.0";
    h.root
        .file(&format!("{nic}/numa_node"), "0\n")
        .file(&format!("{nic}/vendor"), "0x15b3\n")
        .dir(&format!("{nic}/net/ib0"))
        .file(
            "sys/class/infiniband/mlx5_0/ports/1/link_layer",
            "InfiniBand\n",
        )
        .link(
            &format!("../../../{}", nic.trim_start_matches("sys/")),
            "sys/class/infiniband/mlx5_0/device",
        );
    h
}

#[test]
fn the_matrix_fits_80_columns_for_8_gpus() {
    let h = eight_gpus();
    let run = run(h
        .root
        .cmd()
        .env("COLUMNS", "80")
        .args(["devices", "--topo"]));
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let out = run.stdout;
    for line in out.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line:?}\n{out}",
            line.chars().count()
        );
    }
    let row = |label: &str| {
        out.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no row {label}:\n{out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // Without NVML the GPUs are numbered in address order.
    let g0 = row("GPU0 ");
    assert_eq!(
        &g0[1..9],
        ["X", "PIX", "PIX", "PIX", "SYS", "SYS", "SYS", "SYS"],
        "{out}"
    );
    assert_eq!(g0[9], "0", "NUMA: {out}");
    assert_eq!(g0[10], "0-55,112-167");
    let g4 = row("GPU4 ");
    assert_eq!(&g4[5..9], ["X", "PIX", "PHB", "PHB"], "{out}");
    let g6 = row("GPU6 ");
    assert_eq!(&g6[7..9], ["X", "PHB"], "{out}");
    assert!(out.contains("mlx5_0"), "{out}");
    let nic_row: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("mlx5_0"))
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(nic_row, ["GPU0", "PIX"], "{out}");
    assert!(
        out.contains("mlx5_0: InfiniBand at 0000:30:00.0 (ib0)"),
        "{out}"
    );
    assert!(out.contains("PXB   through several PCIe bridges"), "{out}");
    assert!(out.contains("sysfs"), "{out}");
    assert!(out.contains("IOMMU: off"), "{out}");
    // Every cell and NUMA node known: no legend line for what is not shown.
    assert!(!out.contains("  ?     not known"), "{out}");
    assert!(!out.contains("  N/A   no NUMA node"), "{out}");
}

/// A GPU whose NUMA node the kernel gives as -1 shows N/A, and the legend says what that is.
#[test]
fn a_gpu_without_a_numa_node_is_na_and_the_legend_says_why() {
    let h = Host::new(2);
    let rp = config(Port::IntelRoot, 0);
    h.place("0000:18:00.0", "pci0000:00", &[("0000:00:02.0", &rp)], -1);
    h.place("0000:19:00.0", "pci0000:00", &[("0000:00:03.0", &rp)], -1);
    let r = run(h
        .root
        .cmd()
        .env("COLUMNS", "80")
        .args(["devices", "--topo"]));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let g0: Vec<&str> = r
        .stdout
        .lines()
        .find(|l| l.starts_with("GPU0 "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(g0[3], "N/A", "{}", r.stdout);
    assert!(r.stdout.contains("  N/A   no NUMA node"), "{}", r.stdout);
}

#[test]
fn two_numa_nodes_with_acs_mark_only_switch_pairs() {
    let h = eight_gpus();
    // Linux's ACS on every port (an IOMMU is on).
    for d in glob_configs(&h) {
        let mut b = std::fs::read(&d).unwrap();
        if b[0x6a] == 0x62 {
            b[0xf2a] = LINUX_ACS as u8;
        }
        std::fs::write(&d, b).unwrap();
    }
    let (_, r) = h.check();
    let f = finding(&r, "GD072");
    // 6 PIX pairs in switch 0, 1 in switch 1: one finding.
    assert!(
        f["title"].as_str().unwrap().contains("7 GPU pairs"),
        "{f:#}"
    );
    let run = run(h
        .root
        .cmd()
        .env("COLUMNS", "80")
        .args(["devices", "--topo"]));
    let g0: Vec<String> = run
        .stdout
        .lines()
        .find(|l| l.starts_with("GPU0 "))
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(
        &g0[1..6],
        ["X", "PIX!", "PIX!", "PIX!", "SYS"],
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("GD072"), "{}", run.stdout);
    // JSON carries the pairs with the verdict and the redirecting ports.
    let (_, v) = json(h.root.cmd().args(["devices"]));
    let pairs = v["gpu_pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 28);
    let p = &pairs[0];
    assert_eq!(p["link"], "PIX");
    assert_eq!(p["source"], "sysfs");
    assert_eq!(p["verdict"], "warning");
    assert_eq!(
        p["acs_redirecting"],
        serde_json::json!(["0000:17:08.0", "0000:17:10.0"])
    );
    assert!(v["pci_topology"]["gpus"]["value"].as_array().unwrap().len() == 8);
}

fn glob_configs(h: &Host) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![h.root.p("sys/devices")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if e.file_name() == "config" {
                out.push(e.path());
            }
        }
    }
    out
}

#[test]
fn nvlink_pairs_from_nvml_are_nv_and_not_judged_for_acs() {
    let h = switch_pair(LINUX_ACS);
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.devices.truncate(2);
    cfg.topology.pairs.retain(|p| p.a < 2 && p.b < 2);
    for (i, peer) in [(0usize, 1u32), (1, 0)] {
        let g = cfg.gpu(i);
        g.nvlinks = Some(vec![true, true, true, true, false]);
        let remote = format!("00000000:{:02X}:00.0", 0x18 + peer);
        g.nvlink_remotes = Some(vec![
            Some(remote.clone()),
            Some(remote.clone()),
            Some(remote.clone()),
            Some(remote),
            None,
        ]);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = cfg.write(dir.path());
    let mut cmd = h.root.cmd();
    cmd.arg("--nvml-lib")
        .arg(fake_nvml_lib())
        .env(FAKE_NVML_ENV, &path);
    let (_, r) = json(cmd.args(["check", "--no-smoke"]));
    assert!(findings(&r, "GD072").is_empty(), "{:#}", r["findings"]);
    let g0 = &r["snapshot"]["nvml"]["result"]["system"]["devices"][0];
    assert_eq!(g0["nvlink_remotes"]["value"][0], "00000000:19:00.0");
    assert!(g0["nvlink_remotes"]["value"][4].is_null());
    let mut cmd = h.root.cmd();
    cmd.arg("--nvml-lib")
        .arg(fake_nvml_lib())
        .env(FAKE_NVML_ENV, &path);
    let run = run(cmd.env("COLUMNS", "80").args(["devices", "--topo"]));
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("GPU0") && l.contains("NV4")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("NVML (NVLink states and remote PCI info)"),
        "{}",
        run.stdout
    );
}

#[test]
fn gpus_on_two_host_bridges_of_one_numa_node_are_node_from_nvml_or_sysfs() {
    let h = Host::new(2);
    let rp = config(Port::IntelRoot, LINUX_ACS);
    h.place("0000:18:00.0", "pci0000:00", &[("0000:00:02.0", &rp)], 0)
        .place("0000:19:00.0", "pci0000:17", &[("0000:17:02.0", &rp)], 0);
    // sysfs alone.
    let (_, v) = json(h.root.cmd().arg("devices"));
    let p = &v["gpu_pairs"][0];
    assert_eq!(
        (p["link"].as_str(), p["source"].as_str()),
        (Some("NODE"), Some("sysfs")),
        "{p:#}"
    );
    // Through a host bridge: not a pair whose traffic ACS keeps from a switch.
    assert!(p["acs_redirecting"].as_array().unwrap().len() == 2);
    assert_eq!(p["verdict"], "passed");
    // NVML's common ancestor decides when it answers, with no NVLink between them.
    let mut cfg = FakeNvml::hgx_h100_8gpu();
    cfg.devices.truncate(2);
    for i in 0..2 {
        cfg.gpu(i).nvlinks = None;
    }
    cfg.topology.pairs = vec![TopoPair {
        a: 0,
        b: 1,
        level: Some(TOPOLOGY_NODE),
        p2p: None,
    }];
    let dir = tempfile::tempdir().unwrap();
    let path = cfg.write(dir.path());
    let mut cmd = h.root.cmd();
    cmd.arg("--nvml-lib")
        .arg(fake_nvml_lib())
        .env(FAKE_NVML_ENV, &path);
    let (_, v) = json(cmd.arg("devices"));
    let p = &v["gpu_pairs"][0];
    assert_eq!(p["link"], "NODE", "{p:#}");
    assert_eq!(p["source"], "nvml_topology");
    assert_eq!(
        (p["a"]["nvml_index"].as_u64(), p["b"]["nvml_index"].as_u64()),
        (Some(0), Some(1))
    );
    assert!(
        v["gpus"][0]["nvlink_remotes"] == "not_supported",
        "{:#}",
        v["gpus"][0]["nvlink_remotes"]
    );
}

/// The smoke test's peer copy across the redirecting ports failed: GD072 turns into an
/// error that names the copy, and GD074 names the ports with the command that turns
/// redirect off (the one verdict per fact: the cause is GD072's, the failed copy GD074's).
#[test]
fn a_failed_peer_copy_across_acs_ports_makes_gd072_an_error_and_gd074_names_the_ports() {
    use util::fake_cuda::PeerPair;
    use util::gpu_node::GpuNode;
    let mut node = GpuNode::new(2);
    node.root = switch_pair(LINUX_ACS).root;
    for d in &mut node.nvml.devices {
        d.nvlinks = None;
    }
    // NVML agrees: one switch between them (NVML_TOPOLOGY_SINGLE), peer reads supported.
    node.nvml.topology.pairs = vec![TopoPair {
        a: 0,
        b: 1,
        level: Some(TOPOLOGY_SINGLE),
        p2p: Some(0),
    }];
    let cmd = |node: &GpuNode| {
        let mut c = node.cmd();
        c.arg("check");
        c
    };
    // Clean copies: the redirect is what will hurt (warning), nothing failed.
    let (_, v) = json(&mut cmd(&node));
    let f = finding(&v, "GD072");
    assert_eq!(f["severity"], "warning", "{f:#}");
    assert!(findings(&v, "GD074").is_empty(), "{:?}", codes(&v));

    node.cuda().peers = vec![PeerPair {
        from: 0,
        to: 1,
        corrupt: true,
        ..PeerPair::default()
    }];
    let (code, v) = json(&mut cmd(&node));
    assert_eq!(code, 1, "{:?}", codes(&v));
    let f = finding(&v, "GD072");
    assert_eq!(f["severity"], "error", "{f:#}");
    let detail = f["detail"].as_str().unwrap();
    assert!(
        detail.contains("CUDA device 0 → 1 delivered wrong data"),
        "{detail}"
    );
    assert!(
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["fact"].is_null() && e["value"] == "CUDA device 0 → 1 delivered wrong data"),
        "{f:#}"
    );
    let g = finding(&v, "GD074");
    assert_eq!(g["severity"], "error");
    let text = g.to_string();
    assert!(
        text.contains("ECAP_ACS+6.w=0000") && text.contains("0000:17:08.0"),
        "{g:#}"
    );
    assert!(
        g["detail"]
            .as_str()
            .unwrap()
            .contains("between these two GPUs (GD072): that is the likely cause"),
        "{g:#}"
    );
    // The generic "go look for ACS" advice gives way to the ports themselves.
    assert!(!text.contains("grep -E '^[0-9a-f]|ACSCtl'"), "{g:#}");
}
