//! Hardware health on a fake 8-GPU node. The kernel log: the driver's Xid, GSP and adapter
//! lines and the kernel's AER reports become findings on the GPU they name, by NVML index,
//! with the severity NVIDIA's Xid document gives the action; a clean log is silent; a log
//! that cannot be read is said to be unread; a syslog file's earlier boots are history. The
//! link counters: AER statistics read twice, a count that grew between the reads judged, a
//! static one context.

use crate::util;

use crate::util::gpu_node::{hgx, GpuNode};
use crate::util::{findings, json, run};
use serde_json::Value;

/// `/dev/kmsg` as the kernel writes it: `prio,seq,usec,flags;message`.
fn kmsg(lines: &[&str]) -> String {
    let mut out = String::from("6,0,0,-;Linux version 6.8.0-45-generic (buildd@lcy02-amd64-080)\n");
    for (i, l) in lines.iter().enumerate() {
        out.push_str(&format!("3,{},{}000000,-;{l}\n", i + 1, 100 + i));
    }
    out
}

fn node(log: Option<&str>) -> GpuNode {
    let node = GpuNode::nvml_only(8, hgx(8));
    match log {
        Some(log) => node.root.file("dev/kmsg", log),
        None => node.root.remove("dev/kmsg"),
    };
    node
}

fn check(node: &GpuNode) -> (i32, Value) {
    json(node.cmd().arg("check"))
}

fn one<'a>(report: &'a Value, code: &str, needle: &str) -> &'a Value {
    let found: Vec<&Value> = findings(report, code)
        .into_iter()
        .filter(|f| f["title"].as_str().unwrap().contains(needle))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{code} {needle}: {found:#?}\nall: {:#?}",
        report["findings"]
    );
    found[0]
}

fn kernel_log_check(report: &Value) -> &Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule"] == "kernel_log")
        .expect("the kernel_log check")
}

#[test]
fn a_broken_node_gets_one_finding_per_gpu_and_fault() {
    let mut storm: Vec<String> = (0..120)
        .map(|_| "nvidia 0000:1f:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)".to_string())
        .collect();
    let mut lines = vec![
        "NVRM: Xid (PCI:0000:18:00): 13, pid=4242, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address".to_string(),
        "NVRM: Xid (PCI:0000:1a:00): 48, pid=77, name=train, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.".to_string(),
        "NVRM: Xid (PCI:0000:1a:00): 63, pid=77, name=train, Row Remapper: New row (0x0000000000b0c1d2) marked for remapping, reset gpu to activate.".to_string(),
        "NVRM: Xid (PCI:0000:1b:00): 94, pid=91, name=python3, Contained: CE User Channel (0x9). RST: No, D-RST: No".to_string(),
        "NVRM: Xid (PCI:0000:1c:00): 119, pid=1, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU1 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).".to_string(),
        "NVRM: GPU 0000:1c:00.0: Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL).".to_string(),
        "NVRM: Xid (PCI:0000:1d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.".to_string(),
        "NVRM: GPU 0000:1d:00.0: GPU has fallen off the bus.".to_string(),
        "NVRM: Xid (PCI:0000:1e:00): 74, pid=1, name=python3, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)".to_string(),
        "NVRM: Xid (PCI:0000:18:00): 95, pid=4242, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No".to_string(),
    ];
    lines.append(&mut storm);
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let n = node(Some(&kmsg(&refs)));
    let (code, report) = check(&n);
    assert_eq!(code, 1, "errors exit 1");

    let app = one(&report, "GD081", "Xid 13");
    assert_eq!(app["severity"], "info");
    assert!(
        app["title"]
            .as_str()
            .unwrap()
            .starts_with("GPU 0 (NVIDIA H100"),
        "{app}"
    );
    assert!(app["title"].as_str().unwrap().contains("python3"), "{app}");

    for (needle, gpu, severity) in [
        ("Xid 48", "GPU 2 ", "error"),
        ("Xid 63", "GPU 2 ", "warning"),
        ("Xid 94", "GPU 3 ", "warning"),
        ("Xid 119", "GPU 4 ", "error"),
        ("Xid 79", "GPU 5 ", "error"),
        ("Xid 74", "GPU 6 ", "error"),
        ("Xid 95", "GPU 0 ", "error"),
    ] {
        let f = one(&report, "GD080", needle);
        assert_eq!(f["severity"], severity, "{f}");
        assert!(f["title"].as_str().unwrap().starts_with(gpu), "{f}");
        let evidence = f["evidence"].to_string();
        assert!(
            evidence.contains("s after boot: NVRM: Xid (PCI:"),
            "{evidence}"
        );
    }
    // A board is named as a service request or an RMA names it: NVML's UUID and serial.
    let x95 = one(&report, "GD080", "Xid 95");
    let evidence = x95["evidence"].to_string();
    assert!(
        evidence.contains("UUID GPU-") && evidence.contains("serial 1654223000000"),
        "{evidence}"
    );
    assert!(
        util::fix_commands(x95).contains("sudo nvidia-smi -r -i 0000:18:00.0"),
        "{x95}"
    );
    // The reset names the GPU by bus id; the GPU gone from the bus needs a reboot.
    let x48 = one(&report, "GD080", "Xid 48");
    assert!(
        util::fix_commands(x48).contains("sudo nvidia-smi -r -i 0000:1a:00.0"),
        "{x48}"
    );
    assert!(util::fix_commands(one(&report, "GD080", "Xid 79")).contains("sudo systemctl reboot"));
    // 119's action rests on a secondary source, and the finding says so.
    assert!(one(&report, "GD080", "Xid 119")["detail"]
        .as_str()
        .unwrap()
        .contains("no primary source confirms"));
    // The lines that repeat an Xid ride on it: no GD083 for GPU 4 and 5.
    assert!(
        findings(&report, "GD083").is_empty(),
        "{:#?}",
        findings(&report, "GD083")
    );

    let aer = one(&report, "GD082", "120 times");
    assert_eq!(aer["severity"], "warning");
    assert!(
        aer["title"].as_str().unwrap().starts_with("GPU 7 "),
        "{aer}"
    );
    assert_eq!(kernel_log_check(&report)["status"], "failed");

    // The human report shows the log among the driver's facts, marked by its worst finding.
    let r = run(n.cmd().args(["check", "--color", "never"]));
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("kernel log"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        line.contains("130 Xid, driver or PCIe AER lines (since boot, 131 records)"),
        "{line}"
    );
    assert!(line.contains('✗'), "{line}");
    // The device inspector shows them too.
    let r = run(n.cmd().args(["devices", "--color", "never"]));
    assert!(
        r.stdout.contains("GD080") && r.stdout.contains("Xid 79"),
        "{}",
        r.stdout
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
}

/// drivers/pci/pcie/aer.c's severity names changed in Linux 6.x ("Uncorrected (Non-Fatal)"
/// became "Uncorrectable (Non-Fatal)", "Corrected" became "Correctable"): the same error is
/// judged the same, whichever kernel wrote it.
#[test]
fn aer_reports_are_judged_alike_in_every_kernels_words() {
    for (nonfatal, fatal) in [
        ("Uncorrected (Non-Fatal)", "Uncorrected (Fatal)"),
        ("Uncorrectable (Non-Fatal)", "Uncorrectable (Fatal)"),
    ] {
        let n = node(Some(&kmsg(&[
            &format!("nvidia 0000:1f:00.0: PCIe Bus Error: severity={nonfatal}, type=Transaction Layer, (Requester ID)"),
            "nvidia 0000:1f:00.0:   device [10de:2330] error status/mask=00004000/00000000",
            &format!("nvidia 0000:1e:00.0: PCIe Bus Error: severity={fatal}, type=Transaction Layer, (Receiver ID)"),
        ])));
        let (code, report) = check(&n);
        let f = one(&report, "GD082", "GPU 7 ");
        assert_eq!(f["severity"], "warning", "{nonfatal}: {f}");
        assert!(
            f["title"]
                .as_str()
                .unwrap()
                .contains("Uncorrected (Non-Fatal)"),
            "{f}"
        );
        let f = one(&report, "GD082", "GPU 6 ");
        assert_eq!(f["severity"], "error", "{fatal}: {f}");
        assert_eq!(code, 1);
    }
}

#[test]
fn a_clean_log_is_silent_and_passes() {
    let n = node(Some(&kmsg(&[
        "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 09:52:47 UTC 2025",
        "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  580.95.05",
        "pcieport 0000:00:1c.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)",
        "nvme 0000:c1:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
    ])));
    let (code, report) = check(&n);
    for c in ["GD080", "GD081", "GD082", "GD083"] {
        assert!(
            findings(&report, c).is_empty(),
            "{c}: {:#?}",
            findings(&report, c)
        );
    }
    assert_eq!(code, 0, "{:#?}", report["findings"]);
    assert_eq!(kernel_log_check(&report)["status"], "passed");
}

#[test]
fn an_unread_log_is_not_a_clean_one() {
    let n = node(None);
    let (_, report) = check(&n);
    let c = kernel_log_check(&report);
    assert_eq!(c["status"], "not_applicable");
    let detail = c["detail"].as_str().unwrap();
    for source in [
        "/dev/kmsg",
        "/var/log/kern.log",
        "/var/log/messages",
        "/var/log/syslog",
    ] {
        assert!(detail.contains(source), "{detail}");
    }
    let r = run(n.cmd().args(["check", "--color", "never"]));
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("kernel log"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        line.contains("Xid and AER errors were not looked for"),
        "{line}"
    );
    assert!(!line.contains('✓'), "{line}");
}

#[test]
fn a_syslog_file_keeps_earlier_boots_as_history() {
    let n = node(None);
    n.root.file(
        "var/log/kern.log",
        "Dec  1 10:00:00 gpu7 kernel: [   10.000000] NVRM: Xid (PCI:0000:1d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n\
         Dec  2 08:00:00 gpu7 kernel: [    0.000000] Linux version 6.8.0-45-generic (buildd@lcy02-amd64-080)\n\
         Dec  2 08:00:05 gpu7 kernel: [    5.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05\n\
         Dec  2 09:00:00 gpu7 kernel: [ 3600.000000] NVRM: The NVIDIA GPU 0000:19:00.0 (PCI ID: 10de:2b85)#012NVRM: installed in this system requires use of the NVIDIA open kernel modules.\n\
         Dec  2 09:00:00 gpu7 kernel: [ 3600.000100] NVRM: GPU 0000:19:00.0: RmInitAdapter failed! (0x22:0x56:884)\n",
    );
    let (code, report) = check(&n);
    let old = one(&report, "GD080", "Xid 79");
    assert_eq!(old["severity"], "info");
    assert!(
        old["title"]
            .as_str()
            .unwrap()
            .contains("in an earlier boot"),
        "{old}"
    );
    // This boot's open-modules refusal is the root cause; its RmInitAdapter line rides on it.
    let gd083 = findings(&report, "GD083");
    assert_eq!(gd083.len(), 1, "{gd083:#?}");
    assert_eq!(gd083[0]["severity"], "error");
    assert!(
        gd083[0]["title"].as_str().unwrap().starts_with("GPU 1 "),
        "{}",
        gd083[0]
    );
    assert!(
        util::fix_commands(gd083[0]).contains("open"),
        "{}",
        gd083[0]
    );
    assert_eq!(code, 1);
    let evidence = gd083[0]["evidence"].to_string();
    assert!(evidence.contains("/var/log/kern.log"), "{evidence}");
}

/// `--since-boot` leaves a syslog file's earlier boots out; `--since TIME` leaves out what was
/// logged before TIME, in a syslog file (RFC 3339 stamps) and in /dev/kmsg (boot-relative
/// times dated by /proc/stat's btime); a TIME that is not one is refused before anything runs.
#[test]
fn the_log_window_leaves_out_what_came_before_it() {
    let n = node(None);
    n.root.file(
        "var/log/kern.log",
        "2026-12-01T10:00:00.000000+00:00 gpu7 kernel: [   10.000000] NVRM: Xid (PCI:0000:1d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n\
         2026-12-02T08:00:00.000000+00:00 gpu7 kernel: [    0.000000] Linux version 6.8.0-45-generic (buildd@lcy02-amd64-080)\n\
         2026-12-02T10:00:00.000000+01:00 gpu7 kernel: [ 3600.000000] NVRM: Xid (PCI:0000:1a:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n\
         2026-12-02T10:00:00.000000+00:00 gpu7 kernel: [ 7200.000000] NVRM: Xid (PCI:0000:19:00): 94, pid=2631, name=python3, Contained ECC error occurred\n",
    );
    let titles = |args: &[&str]| {
        let (_, report) = json(n.cmd().arg("check").args(args));
        let mut t: Vec<String> = findings(&report, "GD080")
            .iter()
            .map(|f| f["title"].as_str().unwrap().to_string())
            .collect();
        t.sort();
        let span = report["snapshot"]["kernel_log"]["scan"]["value"]["span"].to_string();
        (t, span, report)
    };
    let (all, _, _) = titles(&[]);
    assert_eq!(all.len(), 3, "{all:#?}");
    let (this_boot, detail, _) = titles(&["--since-boot"]);
    assert_eq!(this_boot.len(), 2, "{this_boot:#?}");
    assert!(
        !this_boot.iter().any(|t| t.contains("Xid 79")),
        "{this_boot:#?}"
    );
    assert!(detail.contains("this boot only (--since-boot)"), "{detail}");
    // 10:00 at +01:00 is 09:00 UTC: before the window.
    let (since, detail, report) = titles(&["--since", "2026-12-02 09:30:00"]);
    assert_eq!(since.len(), 1, "{since:#?}");
    assert!(since[0].contains("Xid 94"), "{since:#?}");
    assert!(
        detail.contains("from 2026-12-02T09:30:00Z on (--since 2026-12-02 09:30:00)"),
        "{detail}"
    );
    let scan = &report["snapshot"]["kernel_log"]["scan"]["value"];
    assert_eq!(scan["before_window"], 3, "{scan}");
    assert_eq!(scan["undated_in_window"], 0, "{scan}");

    // /dev/kmsg: the records are 100 s and 101 s after a boot at 1796000000.
    let n = node(Some(&kmsg(&[
        "NVRM: Xid (PCI:0000:1a:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
        "NVRM: Xid (PCI:0000:19:00): 94, pid=2631, name=python3, Contained ECC error occurred",
    ])));
    n.root.file("proc/stat", "cpu  1 2 3 4\nbtime 1796000000\n");
    let (_, report) = json(n.cmd().args(["check", "--since", "2026-11-30T00:55:00.5Z"]));
    let found = findings(&report, "GD080");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0]["title"].as_str().unwrap().contains("Xid 94"));
    // Without a boot time nothing can be dated: every record is kept, and the report says so.
    n.root.remove("proc/stat");
    let (_, report) = json(n.cmd().args(["check", "--since", "2026-11-30T00:55:00.5Z"]));
    assert_eq!(findings(&report, "GD080").len(), 2);
    assert_eq!(
        report["snapshot"]["kernel_log"]["scan"]["value"]["undated_in_window"],
        3
    );

    let r = run(n.cmd().args(["check", "--since", "last tuesday"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--since last tuesday: expected a time"),
        "{}",
        r.stderr
    );
}

/// logrotate moved this boot's start into kern.log.1: it is read before kern.log (within the
/// same bound), so the boot's Xid there is this boot's, and the evidence names both files.
#[test]
fn the_rotated_syslog_file_holds_the_start_of_this_boot() {
    let n = node(None);
    n.root.file(
        "var/log/kern.log.1",
        "Dec  1 10:00:00 gpu7 kernel: [   10.000000] NVRM: Xid (PCI:0000:1d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n\
         Dec  2 08:00:00 gpu7 kernel: [    0.000000] Linux version 6.8.0-45-generic (buildd@lcy02-amd64-080)\n\
         Dec  2 08:10:00 gpu7 kernel: [  600.000000] NVRM: Xid (PCI:0000:1a:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n",
    );
    n.root.file(
        "var/log/kern.log",
        "Dec  3 00:00:01 gpu7 kernel: [57601.000000] nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver\n",
    );
    let (_, report) = check(&n);
    let x48 = one(&report, "GD080", "Xid 48");
    assert_eq!(x48["severity"], "error", "{x48}");
    assert!(
        x48["title"].as_str().unwrap().contains("since boot"),
        "{x48}"
    );
    assert!(
        x48["evidence"]
            .to_string()
            .contains("/var/log/kern.log.1, /var/log/kern.log"),
        "{x48}"
    );
    let x79 = one(&report, "GD080", "Xid 79");
    assert_eq!(x79["severity"], "info", "an earlier boot: {x79}");
}

/// systemd's own writer of journal files (Debian: systemd-journal-remote), or a skip.
fn journal_writer() -> Option<std::path::PathBuf> {
    let found = [
        "/lib/systemd/systemd-journal-remote",
        "/usr/lib/systemd/systemd-journal-remote",
    ]
    .into_iter()
    .map(std::path::PathBuf::from)
    .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("GPUDOCTOR_REQUIRE_JOURNAL").is_none(),
            "GPUDOCTOR_REQUIRE_JOURNAL is set and systemd-journal-remote is not installed"
        );
        util::skip(format_args!(
            "systemd-journal-remote is not installed (Debian: apt install systemd-journal-remote)"
        ));
    }
    found
}

/// journald's export format: one entry per block of `FIELD=value` lines.
fn export_entry(
    realtime_s: u64,
    monotonic_s: u64,
    boot: &str,
    transport: &str,
    message: &str,
) -> String {
    format!(
        "__REALTIME_TIMESTAMP={}\n__MONOTONIC_TIMESTAMP={}\n_BOOT_ID={boot}\n_TRANSPORT={transport}\nSYSLOG_IDENTIFIER=kernel\nMESSAGE={message}\n\n",
        realtime_s * 1_000_000,
        monotonic_s * 1_000_000
    )
}

/// A node whose kernel log is only in journald's files (no /dev/kmsg under --root, no syslog
/// file): the files systemd itself wrote (an archived one of an earlier boot and the current
/// one, in the regular and the compact layout, a long record zstd-compressed) are read without
/// journalctl.
/// The kernel messages and their count match what journalctl reads from them; this boot's
/// Xid is judged, the earlier boot's is history, and `--since` dates them by the journal's
/// realtime stamps.
#[test]
fn journal_files_are_read_without_journalctl() {
    let Some(writer) = journal_writer() else {
        return;
    };
    let (old, new) = (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "0123456789abcdef0123456789abcdef",
    );
    let long = format!("NVRM: Xid (PCI:0000:1c:00): 119, pid=1, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU1 GSP! {}", "x".repeat(600));
    let archived = export_entry(1_796_100_000, 10, old, "kernel", "NVRM: Xid (PCI:0000:1d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
        + &export_entry(1_796_100_001, 11, old, "syslog", "NVRM: Xid (PCI:0000:1e:00): 74, pid=1, name=python3, not the kernel's: another transport");
    let current = export_entry(1_796_200_000, 1, new, "kernel", "Linux version 6.8.0-45-generic")
        + &export_entry(1_796_200_600, 600, new, "kernel", "NVRM: Xid (PCI:0000:1a:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.")
        + &export_entry(1_796_200_700, 700, new, "kernel", &long)
        + &export_entry(1_796_200_800, 800, new, "kernel", "usb 1-1: new high-speed USB device number 2 using xhci_hcd");
    let n = node(None);
    let dir = n
        .root
        .path()
        .join("var/log/journal/0a1b2c3d4e5f60718293a4b5c6d7e8f9");
    std::fs::create_dir_all(&dir).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("system@00061a266f21000-0000000000000001.journal", archived),
        ("system.journal", current),
    ] {
        let export = scratch.path().join(format!("{name}.export"));
        std::fs::write(&export, text).unwrap();
        // The archived file in the older, regular layout (64-bit item offsets); the current
        // one compact, systemd 252's default.
        let compact = if name == "system.journal" { "1" } else { "0" };
        let out = std::process::Command::new(&writer)
            .arg("-o")
            .arg(dir.join(name))
            .arg(&export)
            .env("SYSTEMD_JOURNAL_COMPACT", compact)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // journalctl's reading of the same files: the kernel's records of every boot.
    let truth = std::process::Command::new("journalctl")
        .arg("--directory")
        .arg(&dir)
        // Every boot's kernel messages (`-k` is this boot's only).
        .args(["_TRANSPORT=kernel", "-o", "json", "--no-pager"])
        .output();
    let (code, report) = check(&n);
    let scan = &report["snapshot"]["kernel_log"]["scan"];
    assert!(
        scan["source"]
            .as_str()
            .unwrap()
            .contains("/var/log/journal/0a1b2c3d4e5f60718293a4b5c6d7e8f9 (2 file(s))"),
        "{scan}"
    );
    // systemd-journal-remote depends on systemd, which brings journalctl.
    let truth = truth.expect("journalctl");
    assert!(
        truth.status.success(),
        "{}",
        String::from_utf8_lossy(&truth.stderr)
    );
    let lines = String::from_utf8_lossy(&truth.stdout).lines().count();
    assert_eq!(
        scan["value"]["records"], lines as u64,
        "journalctl _TRANSPORT=kernel: {lines} records"
    );
    assert_eq!(scan["value"]["records"], 5, "{scan}");
    let x48 = one(&report, "GD080", "Xid 48");
    assert_eq!(x48["severity"], "error");
    assert!(
        x48["title"].as_str().unwrap().contains("since boot"),
        "{x48}"
    );
    // A message over 512 bytes: stored zstd-compressed by journald.
    assert_eq!(one(&report, "GD080", "Xid 119")["severity"], "error");
    assert_eq!(one(&report, "GD080", "Xid 79")["severity"], "info");
    assert!(findings(&report, "GD080")
        .iter()
        .all(|f| !f["title"].as_str().unwrap().contains("Xid 74")));
    assert_eq!(code, 1);
    let (_, report) = json(n.cmd().args(["check", "--since", "2026-12-02T08:37:00Z"]));
    let titles: Vec<String> = findings(&report, "GD080")
        .iter()
        .map(|f| f["title"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(titles.len(), 1, "{titles:#?}");
    assert!(titles[0].contains("Xid 119"), "{titles:#?}");
}

/// An HGX node whose GPU 5 has two of its 18 NVLinks inactive: a warning naming them; a board
/// with no link up at all (no NVLink fitted) is not judged; all links up is quiet.
#[test]
fn a_gpu_with_nvlinks_down_is_named_with_its_links() {
    let mut nvml = hgx(8);
    let mut links = vec![true; 18];
    links[4] = false;
    links[9] = false;
    nvml.gpu(5).nvlinks = Some(links);
    let n = GpuNode::nvml_only(8, nvml);
    let (_, report) = check(&n);
    let f = one(&report, "GD091", "GPU 5 ");
    assert_eq!(f["severity"], "warning");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("16 of its NVLinks up, where 7 of the 8 NVIDIA H100 80GB HBM3 GPUs have 18"),
        "{f}"
    );
    assert!(f["evidence"].to_string().contains("down: 4, 9"), "{f}");

    let mut nvml = hgx(8);
    nvml.gpu(2).nvlinks = Some(vec![false; 18]);
    let (_, report) = check(&GpuNode::nvml_only(8, nvml));
    assert!(
        findings(&report, "GD091").is_empty(),
        "{:#?}",
        findings(&report, "GD091")
    );
    let (_, report) = check(&GpuNode::nvml_only(8, hgx(8)));
    assert!(findings(&report, "GD091").is_empty());
}

/// The kernel's AER statistics files for one device, as Linux 4.19+ lays them out.
fn aer_files(n: &GpuNode, address: &str, correctable: u64, fatal: u64) {
    let dir = format!("sys/devices/pci0000:00/{address}");
    n.root.file(
        &format!("{dir}/aer_dev_correctable"),
        &format!("RxErr {correctable}\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR {correctable}\n"),
    );
    n.root.file(
        &format!("{dir}/aer_dev_nonfatal"),
        "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\nTLPBlockedErr 0\nPoisonTLPBlocked 0\nTOTAL_ERR_NONFATAL 0\n",
    );
    n.root.file(
        &format!("{dir}/aer_dev_fatal"),
        &format!("Undefined 0\nDLP {fatal}\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\nTLPBlockedErr 0\nPoisonTLPBlocked 0\nTOTAL_ERR_FATAL {fatal}\n"),
    );
}

/// The findings of `code` about what grew since the baseline report.
fn since_baseline<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    findings(report, code)
        .into_iter()
        .filter(|f| {
            f["title"]
                .as_str()
                .unwrap()
                .contains("since the baseline report")
        })
        .collect()
}

/// `check --baseline OLD.json` on the same machine: what grew since the earlier report is
/// judged (a fatal AER error: error; 150 NVLink replays: warning; a few corrected AER
/// errors: context), a counter that went down (a reboot) is not, and another machine's report
/// is not compared at all.
#[test]
fn counters_that_grew_since_a_baseline_report_are_judged() {
    let mut n = node(Some(&kmsg(&[])));
    n.root
        .file("etc/machine-id", "0123456789abcdef0123456789abcdef\n");
    aer_files(&n, "0000:1b:00.0", 7, 0);
    aer_files(&n, "0000:1c:00.0", 50, 0);
    let (_, old) = check(&n);
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("old.json");
    std::fs::write(&saved, old.to_string()).unwrap();
    // Nothing grew yet: the baseline is compared and says nothing.
    let (_, same) = json(n.cmd().arg("check").arg("--baseline").arg(&saved));
    assert!(same["snapshot"]["counters_baseline"]["not_compared"].is_null());
    for code in ["GD084", "GD085"] {
        assert!(since_baseline(&same, code).is_empty(), "{code}");
    }

    aer_files(&n, "0000:1b:00.0", 12, 1);
    aer_files(&n, "0000:1c:00.0", 3, 0);
    if let Some(links) = n.nvml.gpu(3).nvlink_errors.as_mut() {
        links[2] = [150, 0, 0, 0];
    }
    let (code, report) = json(n.cmd().arg("check").arg("--baseline").arg(&saved));
    let base = &report["snapshot"]["counters_baseline"];
    assert!(base["not_compared"].is_null(), "{base}");
    let aer = since_baseline(&report, "GD084");
    assert_eq!(aer.len(), 1, "{aer:#?}");
    assert_eq!(aer[0]["severity"], "error");
    assert!(
        aer[0]["title"].as_str().unwrap().contains("GPU 3 ")
            && aer[0]["title"]
                .as_str()
                .unwrap()
                .contains("+1 fatal, +5 corrected"),
        "{}",
        aer[0]["title"]
    );
    let nvlink = since_baseline(&report, "GD085");
    assert_eq!(nvlink.len(), 1, "{nvlink:#?}");
    assert_eq!(nvlink[0]["severity"], "warning");
    assert!(
        nvlink[0]["title"]
            .as_str()
            .unwrap()
            .contains("NVLink 2 replays grew since the baseline report"),
        "{}",
        nvlink[0]["title"]
    );
    assert_eq!(code, 1);

    // Another machine's report: not compared, and said so.
    let mut other = old.clone();
    other["snapshot"]["node"]["machine_id"] = "ffffffffffffffffffffffffffffffff".into();
    std::fs::write(&saved, other.to_string()).unwrap();
    let (_, report) = json(n.cmd().arg("check").arg("--baseline").arg(&saved));
    let base = &report["snapshot"]["counters_baseline"];
    assert!(
        base["not_compared"]
            .as_str()
            .unwrap()
            .contains("another machine"),
        "{base}"
    );
    for code in ["GD084", "GD085"] {
        assert!(since_baseline(&report, code).is_empty(), "{code}");
    }
}

#[test]
fn aer_counters_are_read_twice_and_only_growth_is_a_fault() {
    let n = node(Some(&kmsg(&[])));
    aer_files(&n, "0000:1b:00.0", 7, 0);
    aer_files(&n, "0000:1c:00.0", 0, 0);
    let (code, report) = check(&n);
    assert_eq!(code, 0, "{:#?}", report["findings"]);
    let topo = &report["snapshot"]["topology"];
    let first = topo["aer"].as_array().unwrap();
    assert_eq!(first.len(), 2, "{first:#?}");
    assert_eq!(first[0]["address"], "0000:1b:00.0");
    assert_eq!(first[0]["correctable"], 7);
    assert_eq!(first[0]["fatal"], 0);
    assert_eq!(topo["aer_again"]["after"], "the other probes");
    assert_eq!(topo["aer_again"]["devices"], topo["aer"]);
    // A count that did not grow is one note of history.
    let f = findings(&report, "GD084");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["severity"], "info");
    assert!(
        f[0]["title"]
            .as_str()
            .unwrap()
            .contains("GPU 3 (NVIDIA H100"),
        "{}",
        f[0]
    );
    assert!(
        f[0]["title"].as_str().unwrap().contains("7 corrected"),
        "{}",
        f[0]
    );

    // The same report where the second read found more: replayed, the growth is judged.
    let mut grown = report.clone();
    grown["snapshot"]["topology"]["aer_again"]["devices"][0]["correctable"] = 57.into();
    grown["snapshot"]["topology"]["aer_again"]["elapsed_ms"] = 4200.into();
    grown["snapshot"]["topology"]["aer_again"]["after"] = "the smoke test".into();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("grown.json");
    std::fs::write(&saved, grown.to_string()).unwrap();
    let (code, replayed) = json(util::gpudoctor().args(["check", "--from"]).arg(&saved));
    let f = one(&replayed, "GD084", "grew");
    assert_eq!(f["severity"], "warning");
    assert!(f["title"].as_str().unwrap().starts_with("GPU 3 ("), "{f}");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("during the smoke test (+50 corrected in 4200 ms)"),
        "{f}"
    );
    assert!(
        util::fix_commands(f).contains("grep -H TOTAL /sys/bus/pci/devices/0000:1b:00.0/aer_dev_*"),
        "{f}"
    );
    assert_eq!(code, 0, "a warning does not fail the run");
    grown["snapshot"]["topology"]["aer_again"]["devices"][1]["fatal"] = 1.into();
    std::fs::write(&saved, grown.to_string()).unwrap();
    let (code, replayed) = json(util::gpudoctor().args(["check", "--from"]).arg(&saved));
    assert_eq!(one(&replayed, "GD084", "GPU 4 (")["severity"], "error");
    assert_eq!(code, 1);
}

#[test]
fn nvml_link_counters_are_read_again_after_the_smoke_test() {
    let mut n = GpuNode::new(2);
    n.nvml.gpu(1).pcie_replay_counter = Some(12);
    let (_, report) = check(&n);
    let gpus = report["snapshot"]["nvml"]["result"]["system"]["devices"]
        .as_array()
        .unwrap();
    assert_eq!(gpus[1]["pcie_replay_counter"]["value"], 12);
    assert_eq!(
        gpus[0]["nvlink_errors"]["value"][0],
        serde_json::json!({"replay": 0, "recovery": 0, "crc_flit": 0, "crc_data": 0})
    );
    let again = &report["snapshot"]["nvml"]["counters_again"];
    assert_eq!(again["after"], "the smoke test", "{again}");
    assert!(again["error"].is_null(), "{again}");
    assert_eq!(again["gpus"].as_array().unwrap().len(), 2, "{again}");
    assert_eq!(again["gpus"][1]["pcie_replay_counter"]["value"], 12);
    // A count that did not grow is history.
    let f = findings(&report, "GD085");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["severity"], "info");
    assert!(
        f[0]["title"]
            .as_str()
            .unwrap()
            .contains("GPU 1 PCIe replays 12"),
        "{}",
        f[0]
    );

    // The same run where the second read found CRC errors on GPU 0's link 3.
    let mut grown = report.clone();
    grown["snapshot"]["nvml"]["counters_again"]["gpus"][0]["nvlink_errors"]["value"][3]
        ["crc_flit"] = 250.into();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("grown.json");
    std::fs::write(&saved, grown.to_string()).unwrap();
    let (code, replayed) = json(util::gpudoctor().args(["check", "--from"]).arg(&saved));
    let f = one(&replayed, "GD085", "CRC FLIT");
    assert_eq!(f["severity"], "warning");
    let title = f["title"].as_str().unwrap();
    assert!(title.starts_with("GPU 0 (NVIDIA H100"), "{title}");
    assert!(
        title.contains("NVLink 3 CRC FLIT errors grew during the smoke test (+250 in"),
        "{title}"
    );
    assert_eq!(code, 0, "a warning does not fail the run");
}

#[test]
fn the_preflight_gate_runs_everything_within_the_budget_it_reports() {
    let n = GpuNode::new(8);
    let (code, report) = json(n.cmd().args(["check", "--preflight"]));
    let p = &report["snapshot"]["preflight"];
    assert_eq!(p["budget_s"], 15.0, "{p}");
    assert_eq!(p["probes_s"], 3.75, "{p}");
    assert_eq!(p["smoke_s"], 7.5, "{p}");
    let elapsed = p["elapsed_s"].as_f64().unwrap();
    assert!(elapsed <= p["budget_s"].as_f64().unwrap(), "{p}");
    eprintln!("check --preflight on the fake 8-GPU node: {elapsed:.2} s of the 15 s budget");
    // Everything a gate needs ran: the kernel log, the smoke test, the second counter read.
    let snap = &report["snapshot"];
    assert!(
        snap["kernel_log"]["scan"]["value"].is_object(),
        "{}",
        snap["kernel_log"]
    );
    assert!(
        snap["smoke"]["result"]["run"].is_object(),
        "{}",
        snap["smoke"]["result"]
    );
    assert_eq!(
        snap["nvml"]["counters_again"]["gpus"]
            .as_array()
            .unwrap()
            .len(),
        8
    );
    assert!(findings(&report, "GD086").is_empty());
    assert_eq!(code, 0, "{:#?}", report["findings"]);

    // A node whose kernel log says a GPU fell off the bus fails the gate.
    n.root.file(
        "dev/kmsg",
        &kmsg(&["NVRM: Xid (PCI:0000:1d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."]),
    );
    let (code, report) = json(n.cmd().args(["check", "--preflight=10"]));
    assert_eq!(code, 1);
    assert_eq!(report["snapshot"]["preflight"]["budget_s"], 10.0);
    assert!(!findings(&report, "GD080").is_empty());

    // A budget too small to divide is refused before anything runs.
    let r = run(n.cmd().args(["check", "--preflight=1"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("between 3 and 3600 seconds"),
        "{}",
        r.stderr
    );
}

/// A host with `device` (a PCI id) on the proprietary or open flavour of 580.95.05, the GPU
/// left without a driver (as the driver leaves a GPU it refuses), and `log` as /dev/kmsg.
fn flavour_host(device: &str, flavour: &str, log: Option<&str>) -> util::FakeRoot {
    let r = util::FakeRoot::new();
    r.modules(&["nvidia_uvm", "nvidia"])
        .nvidia_version("580.95.05");
    if flavour == "proprietary" {
        r.file(
            "proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Release Build  (dvs-builder@U22-I3-H04-03-1)  Sat Sep 20 00:47:16 UTC 2025\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n",
        );
    }
    r.node("nvidiactl", 0o666).node("nvidia-uvm", 0o666);
    r.pci("0000:01:00.0", device, "030000", None);
    if let Some(l) = log {
        r.file("dev/kmsg", l);
    }
    r
}

/// The open-modules class: a Blackwell GPU (RTX 5090, 10de:2b85) on the proprietary modules
/// is an error named from the PCI id and /proc/driver/nvidia/version, with or without a
/// readable kernel log; the unbound GPU and the log's refusal are its consequences; a Pascal
/// GPU on the open modules is the same error the other way; each GPU on a flavour that
/// supports it is quiet.
#[test]
fn a_gpu_the_loaded_module_flavour_refuses_is_the_root_cause() {
    let refusal = "3,710,5000000,-;NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85)\\x0aNVRM: installed in this system requires use of the NVIDIA open kernel modules.\n3,711,5000100,-;NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)\n";
    for log in [None, Some(refusal)] {
        let r = flavour_host("2b85", "proprietary", log);
        let (code, report) = json(r.cmd().arg("check"));
        assert_eq!(code, 1, "{report:#}");
        let f = one(&report, "GD089", "needs the NVIDIA open kernel modules");
        assert_eq!(f["severity"], "error");
        let title = f["title"].as_str().unwrap();
        assert!(
            title.contains("GeForce RTX 5090") && title.contains("Blackwell"),
            "{title}"
        );
        let text = f.to_string();
        assert!(
            text.contains("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05"),
            "{text}"
        );
        // Ubuntu 22.04 (the fake root's os-release): the -open package of the same branch.
        assert!(
            util::fix_commands(f).contains("sudo apt install nvidia-driver-580-open"),
            "{f}"
        );
        // Every other serious finding about that GPU is caused by it.
        for other in report["findings"].as_array().unwrap() {
            let t = other["title"].as_str().unwrap();
            if other["code"] != "GD089"
                && (t.contains("0000:01:00.0") || t.contains("01:00.0"))
                && other["severity"] == "error"
            {
                assert_eq!(other["caused_by"], "GD089", "{other:#}");
            }
        }
        if log.is_some() {
            assert!(
                text.contains("requires use of the NVIDIA open kernel modules"),
                "{text}"
            );
        }
    }
    // The other way: a Tesla P100 (Pascal, 10de:15f8) on the open modules.
    let r = flavour_host("15f8", "open", None);
    let (_, report) = json(r.cmd().arg("check"));
    let f = one(
        &report,
        "GD089",
        "is not supported by the NVIDIA open kernel modules",
    );
    assert!(
        util::fix_commands(f).contains("sudo apt install nvidia-driver-580\n")
            || util::fix_commands(f).contains("sudo apt install nvidia-driver-580"),
        "{f}"
    );
    // Supported pairs stay quiet.
    for (device, flavour) in [
        ("2b85", "open"),
        ("15f8", "proprietary"),
        ("2330", "proprietary"),
    ] {
        let r = flavour_host(device, flavour, None);
        let (_, report) = json(r.cmd().arg("check"));
        assert!(
            findings(&report, "GD089").is_empty(),
            "{device} {flavour}: {report:#}"
        );
    }
}
