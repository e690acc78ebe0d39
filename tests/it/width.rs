//! Every human view fits the terminal: no line wider than COLUMNS (bar a shell command, kept
//! whole for copying, or a single word wider than the line), and wrapping only moves line
//! breaks — the words, in order, are those of the same report rendered unwrapped, so no word
//! was cut ("Container T" / "oolkit"). Runs the real binary on fake nodes (fake NVML and
//! libcuda) with 1 and 8 GPUs, healthy and broken; stdout is a pipe, so COLUMNS decides.

use crate::util;

use std::path::{Path, PathBuf};

use crate::util::fake_nvml;
use crate::util::gpu_node::GpuNode;
use crate::util::{gpudoctor, run, FakeRoot, ALICE};
use serde_json::Value;

const WIDTHS: [usize; 3] = [80, 120, 200];
/// Wide enough that nothing wraps (the width is clamped to 400).
const UNWRAPPED: usize = 10_000;

/// A node with several problems and long evidence and fixes: a device node alice cannot
/// open, no /dev/nvidia-uvm, a torch missing a wheel, debug and allocator variables, a
/// wrong matmul, flipped bits, refused pinned memory; on 8 GPUs one NVML cannot open.
fn broken(n: u32) -> GpuNode {
    let mut node = node(n);
    node.root.chmod("dev/nvidia0", 0o660);
    node.root.remove("dev/nvidia-uvm");
    node.root.torch_venv(
        "2.6.0+cu126",
        Some("12.6"),
        &["nvidia-cudnn-cu12==9.1.0.70"],
    );
    let last = n as usize - 1;
    node.cuda().device(last).matmul_wrong = true;
    node.cuda().device(0).bit_flips = 3;
    node.cuda().device(last).host_alloc_error = Some(2);
    if n > 2 {
        node.nvml.gpu(2).handle_error = Some(999);
    }
    node
}

/// `n` healthy GPUs with 16 MiB each: the CPU-emulated smoke test stays short.
fn node(n: u32) -> GpuNode {
    let mut node = GpuNode::new(n);
    for d in &mut node.cuda().devices {
        d.total_memory = 16 << 20;
    }
    node
}

/// Runs of the smoke test, one at a time: emulated on the CPU, several at once on a small
/// machine would outlast their deadline and change the report between widths.
static SMOKE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The environment of a user with a few variables set, so `check` lists them.
fn with_env(cmd: &mut assert_cmd::Command) -> &mut assert_cmd::Command {
    cmd.env("VIRTUAL_ENV", "/venv")
        .env("CUDA_LAUNCH_BLOCKING", "1")
        .env(
            "PYTORCH_CUDA_ALLOC_CONF",
            "expandable_segments:True,garbage_collection_threshold:0.6,max_split_size_mb:128",
        )
}

/// `gpudoctor ARGS` on the node as alice, at `columns`, without colour.
/// The node's command for a subcommand, with the options it takes: the fake libcuda and
/// the smoke test's sizes only where the smoke test runs, NVML and --user where a view
/// reads them.
fn command(node: &GpuNode, sub: &str) -> assert_cmd::Command {
    match sub {
        "check" => {
            let mut cmd = node.cmd();
            cmd.args(["--user", ALICE]);
            cmd
        }
        "smoke" => node.cmd(),
        "devices" => {
            let mut cmd = node.root.cmd();
            let nvml = node.nvml.write(&node.dir.path().join("nvml"));
            cmd.arg("--nvml-lib")
                .arg(fake_nvml::fake_nvml_lib())
                .env(fake_nvml::FAKE_NVML_ENV, nvml)
                .args(["--user", ALICE]);
            cmd
        }
        _ => node.root.cmd(),
    }
}

fn live(node: &GpuNode, args: &[&str], columns: usize) -> String {
    let mut cmd = command(node, args[0]);
    cmd.args(args)
        .args(["--color", "never", "--timeout", "300"]);
    with_env(&mut cmd).env("COLUMNS", columns.to_string());
    let _one_at_a_time =
        (args[0] == "smoke").then(|| SMOKE.lock().unwrap_or_else(|e| e.into_inner()));
    output(&mut cmd, args)
}

/// `gpudoctor check ARGS --from REPORT` at `columns`, without colour.
fn replay(report: &Path, args: &[&str], columns: usize) -> String {
    let mut cmd = gpudoctor();
    cmd.arg("check")
        .args(args)
        .arg("--from")
        .arg(report)
        .args(["--color", "never"])
        .env("COLUMNS", columns.to_string());
    output(&mut cmd, args)
}

fn output(cmd: &mut assert_cmd::Command, args: &[&str]) -> String {
    let r = run(cmd);
    assert!(
        r.code == 0 || r.code == 1,
        "{args:?} exited {}: {}{}",
        r.code,
        r.stdout,
        r.stderr
    );
    r.stdout
}

/// The node's `check` report, saved once: every width renders the same report.
fn saved_report(node: &GpuNode) -> (PathBuf, Value) {
    let mut cmd = command(node, "check");
    cmd.args(["check", "--json", "--timeout", "300"]);
    with_env(&mut cmd);
    let _one_at_a_time = SMOKE.lock().unwrap_or_else(|e| e.into_inner());
    let text = output(&mut cmd, &["check", "--json"]);
    let path = node.dir.path().join("report.json");
    std::fs::write(&path, &text).unwrap();
    (path, serde_json::from_str(&text).unwrap())
}

/// A finding's first fix command (JSON).
fn first_command(f: &Value) -> Option<&str> {
    f["fix"]
        .as_array()?
        .iter()
        .find_map(|x| x["command"].as_str())
}

/// Columns a line takes (no colour is asked for, but strip any escape to be sure).
fn columns(line: &str) -> usize {
    let mut n = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            n += 1;
        }
    }
    n
}

/// Every fix command of the findings in a JSON view or report.
fn commands(json: &Value) -> Vec<String> {
    json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["fix"].as_array().into_iter().flatten())
        .filter_map(|fix| fix["command"].as_str().map(str::to_string))
        .collect()
}

/// No line wider than `width`, except a fix command on a line of its own (kept whole for
/// copying) or a line ending in one word wider than the room after the line's indent.
fn assert_fits(what: &str, text: &str, width: usize, commands: &[String]) {
    for line in text.lines() {
        let w = columns(line);
        if w <= width {
            continue;
        }
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let command = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
        let last = trimmed.split_whitespace().last().unwrap_or("");
        assert!(
            commands.iter().any(|c| c == command) || columns(last) > width - indent,
            "{what} at COLUMNS={width}: a line of {w} columns:\n{line}\n\n{text}"
        );
    }
}

/// The words in order; words with digits (timings of the live smoke test) as "#".
fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit()) {
                "#".to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// Wrapping only moved line breaks: the same words as the unwrapped rendering.
fn assert_same_words(what: &str, wrapped: &str, unwrapped: &str, width: usize) {
    let (a, b) = (words(wrapped), words(unwrapped));
    if a != b {
        let at = a
            .iter()
            .zip(&b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        panic!(
            "{what} at COLUMNS={width}: the words differ from the unwrapped output at word {at}: {:?} vs {:?}\n\n{wrapped}\n\n{unwrapped}",
            &a[at.saturating_sub(3)..(at + 3).min(a.len())],
            &b[at.saturating_sub(3)..(at + 3).min(b.len())],
        );
    }
}

/// `text` with runs of whitespace made one space, to find a sentence however it wrapped.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The devices table (the block with the "GPU … Name" header) left out: its columns
/// depend on the width by design.
fn without_table(text: &str) -> String {
    text.split("\n\n")
        .filter(|block| {
            let head = block.lines().next().unwrap_or("");
            !(head.contains("GPU") && head.contains("Name") && head.contains("CC"))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn the_table(text: &str) -> &str {
    text.split("\n\n")
        .find(|block| {
            let head = block.lines().next().unwrap_or("");
            head.contains("GPU") && head.contains("Name") && head.contains("CC")
        })
        .unwrap_or_else(|| panic!("no devices table in\n{text}"))
}

/// Every view of the node at every width: it fits, and it says the same words as unwrapped.
fn check_every_view(name: &str, node: &GpuNode) {
    let (report, json) = saved_report(node);
    let report_commands = commands(&json);

    // check (normal and verbose), replayed from one report.
    for args in [&[][..], &["-v"]] {
        let unwrapped = replay(&report, args, UNWRAPPED);
        for width in WIDTHS {
            let what = format!("{name}: check {args:?}");
            let text = replay(&report, args, width);
            assert_fits(&what, &text, width, &report_commands);
            assert_same_words(
                &what,
                &without_recap(&text),
                &without_recap(&unwrapped),
                width,
            );
            let flat_text = flat(&text);
            // Without -v a finding shows its title, evidence and its fixes up to the first
            // command (at most two); with -v its reasons and every fix too.
            let verbose = !args.is_empty();
            for f in json["findings"].as_array().unwrap() {
                let all = f["fix"].as_array().unwrap();
                let shown = all
                    .iter()
                    .position(|x| x["command"].is_string())
                    .map_or(1, |i| i + 1)
                    .min(2);
                let fixes = all.iter().map(|x| &x["text"]);
                let fixes = fixes.take(if verbose { usize::MAX } else { shown });
                let detail = verbose.then_some(&f["detail"]);
                for s in std::iter::once(&f["title"])
                    .chain(detail)
                    .chain(fixes)
                    .filter_map(Value::as_str)
                {
                    assert!(
                        flat_text.contains(&flat(s)),
                        "{what} at COLUMNS={width}: {s:?} is not there whole:\n{text}"
                    );
                }
            }
        }
    }

    // devices, devices 0, toolkit, smoke: live (the smoke test's timings vary, so words
    // with digits compare as one placeholder).
    let views: [&[&str]; 4] = [&["devices"], &["devices", "0"], &["toolkit"], &["smoke"]];
    for args in views {
        let what = format!("{name}: {}", args.join(" "));
        let json_args: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
        let view_commands = commands(&serde_json::from_str(&live(node, &json_args, 80)).unwrap());
        let unwrapped = live(node, args, UNWRAPPED);
        for width in WIDTHS {
            let text = live(node, args, width);
            assert_fits(&what, &text, width, &view_commands);
            if args == ["devices"] {
                assert_same_words(
                    &what,
                    &without_table(&text),
                    &without_table(&unwrapped),
                    width,
                );
            } else {
                // The recap cuts its titles to the width by design.
                assert_same_words(
                    &what,
                    &without_recap(&text),
                    &without_recap(&unwrapped),
                    width,
                );
            }
        }
    }
}

#[test]
fn one_healthy_gpu_fits_every_width() {
    check_every_view("healthy 1 GPU", &node(1));
}

#[test]
fn eight_healthy_gpus_fit_every_width() {
    check_every_view("healthy 8 GPUs", &node(8));
}

#[test]
fn one_broken_gpu_fits_every_width() {
    check_every_view("broken 1 GPU", &broken(1));
}

#[test]
fn eight_broken_gpus_fit_every_width() {
    check_every_view("broken 8 GPUs", &broken(8));
}

/// The devices table fits 80 columns with the columns that matter (names shortened,
/// memory as its total), says what it left out, and shows every column when there is room.
#[test]
fn the_devices_table_fits_80_columns_and_widens_with_room() {
    let node = node(8);
    let narrow = live(&node, &["devices"], 80);
    let table = the_table(&narrow);
    let head = table.lines().next().unwrap();
    for col in ["GPU", "Name", "CC", "Memory"] {
        assert!(head.contains(col), "{head}");
    }
    assert!(table.contains("H100 80GB HBM3"), "{table}");
    assert!(!table.contains("NVIDIA H100"), "{table}");
    assert!(table.contains("80 GiB"), "{table}");
    assert!(
        table.contains("Left out at this width:") && table.contains("Mode"),
        "{table}"
    );
    for line in table.lines() {
        assert!(columns(line) <= 80, "{line}");
    }
    // Each GPU keeps its row: mark, then its index.
    for i in 0..8 {
        assert!(
            table
                .lines()
                .any(|l| l.split_whitespace().take(2).eq(["✓", &i.to_string()])),
            "GPU {i}: {table}"
        );
    }

    let wide = live(&node, &["devices"], 200);
    let table = the_table(&wide);
    let head = table.lines().next().unwrap();
    for col in [
        "Bus",
        "Memory used/total GiB",
        "Temp",
        "Power W",
        "PCIe",
        "ECC",
        "Mode",
    ] {
        assert!(head.contains(col), "{head}");
    }
    assert!(table.contains("NVIDIA H100 80GB HBM3"), "{table}");
    assert!(!table.contains("Left out"), "{table}");
}

/// The ~650-character capability line of `devices 0` wraps under its value column.
#[test]
fn the_capability_line_wraps_under_its_column() {
    let node = node(1);
    let text = live(&node, &["devices", "0"], 80);
    let start = text
        .lines()
        .position(|l| l.trim_start().starts_with("can "))
        .unwrap_or_else(|| panic!("no capability line:\n{text}"));
    let lines: Vec<&str> = text
        .lines()
        .skip(start)
        .take_while(|l| !l.trim_start().starts_with("cannot"))
        .collect();
    assert!(lines.len() >= 5, "{lines:#?}");
    let column = lines[0].find("FP16").unwrap();
    for l in &lines[1..] {
        assert_eq!(l.len() - l.trim_start().len(), column, "{l:?}");
    }
}

/// `fleet` over saved reports of several nodes fits too.
#[test]
fn fleet_fits_every_width() {
    let dir = tempfile::tempdir().unwrap();
    // The recap's fix commands are kept whole, as check's are.
    let mut report_commands = Vec::new();
    for (i, node) in [node(1), broken(1)].iter().enumerate() {
        let mut cmd = command(node, "check");
        cmd.args(["check", "--json", "--no-smoke"]);
        with_env(&mut cmd);
        let text = output(&mut cmd, &["check", "--json"]);
        report_commands.extend(commands(&serde_json::from_str(&text).unwrap()));
        std::fs::write(dir.path().join(format!("node{i}.json")), text).unwrap();
    }
    let fleet = |width: usize| {
        let mut cmd = gpudoctor();
        cmd.args(["fleet", "--color", "never"])
            .arg(dir.path())
            .env("COLUMNS", width.to_string());
        output(&mut cmd, &["fleet"])
    };
    let unwrapped = fleet(UNWRAPPED);
    for width in WIDTHS {
        let text = fleet(width);
        assert_fits("fleet", &text, width, &report_commands);
        assert_same_words(
            "fleet",
            &without_recap(&text),
            &without_recap(&unwrapped),
            width,
        );
    }
}

/// The report that printed "… the NVIDIA Container T" / "oolkit on the host)" at 80
/// columns: a container with no GPU passed in. Its fix line now wraps at a word.
#[test]
fn a_container_without_gpus_wraps_its_fix_at_a_word() {
    let root = util::FakeRoot::new();
    root.file(".dockerenv", "");
    let render = |width: usize| {
        let mut cmd = root.cmd();
        cmd.args(["check", "--color", "never"])
            .env("COLUMNS", width.to_string());
        output(&mut cmd, &["check"])
    };
    let text = render(80);
    assert_fits("container without GPUs", &text, 80, &[]);
    assert_same_words("container without GPUs", &text, &render(UNWRAPPED), 80);
    assert!(
        flat(&text).contains("(the host needs the NVIDIA Container Toolkit)"),
        "{text}"
    );
    assert!(text.lines().all(|l| !l.ends_with("Container T")), "{text}");
}

/// The blocks of a `check` report but its recap ("To fix…"): the recap cuts titles to the
/// width by design, so its words depend on the width.
fn without_recap(text: &str) -> String {
    text.split("\n\n")
        .filter(|block| !block.starts_with("To fix"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The screen a user is left with: `check` on the broken 8-GPU node in a real terminal
/// (tmux, 80×24; the report replayed with `--from`, which renders what the run printed).
/// Its last 24 lines name every root cause's code, the broken GPUs' bus ids and each root
/// cause's first fix command.
#[test]
fn the_last_screen_of_a_broken_node_names_every_blocker() {
    let Some(tmux) = ["/usr/bin/tmux", "/bin/tmux"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
    else {
        util::skip(format_args!(
            "no tmux (Debian's tmux) to drive a real terminal"
        ));
        return;
    };
    let node = broken(8);
    let (report, json) = saved_report(&node);
    // GPUDOCTOR_BROKEN_NODE_REPORT=FILE keeps the report (the line counts in docs/commands.md).
    if let Some(keep) = std::env::var_os("GPUDOCTOR_BROKEN_NODE_REPORT") {
        std::fs::copy(&report, keep).unwrap();
    }
    let socket = node.dir.path().join("tmux.sock");
    let tm = |args: &[&str]| {
        std::process::Command::new(tmux)
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap()
    };
    let shell = format!(
        "{} check --from {} --color never; {} -S {} wait-for -S done; sleep 60",
        env!("CARGO_BIN_EXE_gpudoctor"),
        report.display(),
        tmux.display(),
        socket.display()
    );
    let started = tm(&[
        "new-session",
        "-d",
        "-x",
        "80",
        "-y",
        "24",
        "-s",
        "gd",
        "-e",
        "TERM=xterm",
        &shell,
    ]);
    assert!(started.status.success(), "tmux: {started:?}");
    let waited = std::process::Command::new("timeout")
        .arg("60")
        .arg(tmux)
        .arg("-S")
        .arg(&socket)
        .args(["wait-for", "done"])
        .status()
        .unwrap();
    let screen = tm(&["capture-pane", "-p", "-J", "-t", "gd"]);
    tm(&["kill-server"]);
    assert!(waited.success(), "check did not finish in the terminal");
    let screen = String::from_utf8_lossy(&screen.stdout).into_owned();
    assert!(screen.lines().count() <= 24, "{screen}");

    let findings = json["findings"].as_array().unwrap();
    let roots: Vec<&Value> = findings
        .iter()
        .filter(|f| f["caused_by"].is_null() && f["severity"] != "info")
        .collect();
    assert!(
        roots.len() >= 4,
        "the fixture has several root causes: {roots:?}"
    );
    let flat_screen = flat(&screen);
    for f in &roots {
        let code = f["code"].as_str().unwrap();
        assert!(
            screen.contains(code),
            "{code} is not on the last screen:\n{screen}"
        );
        if let Some(cmd) = first_command(f) {
            assert!(
                flat_screen.contains(&flat(cmd)),
                "{code}'s first fix `{cmd}` is not on the last screen:\n{screen}"
            );
        }
    }
    // The GPUs the fixture broke: 0 (flipped bits), 7 (a wrong matmul); their bus ids.
    let devices = json["snapshot"]["nvml"]["result"]["system"]["devices"]
        .as_array()
        .unwrap();
    for i in [0, 7] {
        let bus = devices[i]["pci_bus_id"]["value"].as_str().unwrap();
        let bus = bus.strip_prefix("0000").unwrap_or(bus).to_ascii_lowercase();
        assert!(
            screen.to_ascii_lowercase().contains(&bus),
            "GPU {i}'s bus id {bus} is not on the last screen:\n{screen}"
        );
    }
    assert!(
        screen.contains("error") && screen.contains("`gpudoctor explain"),
        "the summary line ends the screen:\n{screen}"
    );
}

#[test]
fn prose_stops_at_100_columns_on_a_wide_terminal() {
    let root = FakeRoot::healthy(1);
    let r = run(root
        .cmd()
        .args(["check", "--no-smoke", "-v"])
        .env("CUDA_LAUNCH_BLOCKING", "1")
        .env("COLUMNS", "200"));
    let block = r.stdout.split("warning[GD012]").nth(1).unwrap();
    let block = block.split("\n\n").next().unwrap();
    assert!(block.contains("= why:"), "{block}");
    for line in block.lines().skip(1) {
        // A command is never broken, however wide.
        if line.trim_start().starts_with("$ ") {
            continue;
        }
        assert!(columns(line) <= 100, "{line:?} in:\n{block}");
    }
    // The reasons wrapped: the paragraph is longer than 100 columns.
    assert!(
        block.lines().filter(|l| l.starts_with("         ")).count() >= 2,
        "{block}"
    );
}

/// The failing hardware of an 8-GPU node as an admin meets it: uncorrectable ECC errors on
/// GPU 5, a wrong matrix product on GPU 7, flipped bits on GPU 2, an x8 link on GPU 3 and a
/// thermal slowdown on GPU 4; the software is healthy.
fn failing_hardware() -> GpuNode {
    let mut node = node(8);
    if let Some(e) = node.nvml.gpu(5).ecc.as_mut() {
        e.volatile = Some(fake_nvml::EccCounts {
            corrected: 0,
            uncorrected: 4,
        });
    }
    node.cuda().device(7).matmul_wrong = true;
    node.cuda().device(2).bit_flips = 3;
    if let Some(p) = node.nvml.gpu(3).pcie.as_mut() {
        p.width = 8;
    }
    node.nvml.gpu(4).throttle_reasons =
        Some(fake_nvml::THROTTLE_HW_SLOWDOWN | fake_nvml::THROTTLE_SW_THERMAL);
    node
}

/// The default report is concise: on the failing-hardware node and on the broken node, at 80
/// columns, under half the lines the earlier layout printed (every reason, fix and section
/// line: 179 and 238, docs/commands.md), while each root cause keeps its code, the bus ids of
/// its GPUs and its first fix command; -v brings back every line.
#[test]
fn the_default_report_is_under_half_the_full_one() {
    for (name, node, before) in [
        ("failing hardware", failing_hardware(), 179),
        ("broken node", broken(8), 238),
    ] {
        let (report, json) = saved_report(&node);
        // The fake libcuda's path depends on the checkout: the driver's own, so lines wrap
        // alike wherever the suite runs.
        let fake = crate::util::fake_cuda::fake_cuda_lib()
            .display()
            .to_string();
        let text = std::fs::read_to_string(&report)
            .unwrap()
            .replace(&fake, "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05");
        std::fs::write(&report, text).unwrap();
        let concise = replay(&report, &[], 80);
        let lines = concise.lines().count();
        assert!(
            lines * 2 < before,
            "{name}: {lines} lines, not under half of {before}:\n{concise}"
        );
        let full = replay(&report, &["-v"], 80);
        assert!(full.lines().count() > lines, "{name}");
        let flat_concise = flat(&concise);
        for f in json["findings"].as_array().unwrap() {
            let code = f["code"].as_str().unwrap();
            assert!(concise.contains(code), "{name}: {code}\n{concise}");
            if let Some(cmd) = first_command(f) {
                assert!(
                    flat_concise.contains(&flat(cmd)),
                    "{name}: {code}'s first fix `{cmd}`:\n{concise}"
                );
            }
            for e in f["evidence"].as_array().unwrap() {
                let v = e["value"].as_str().unwrap();
                assert!(
                    flat_concise.contains(&flat(v)),
                    "{name}: {code}'s evidence {v:?}:\n{concise}"
                );
            }
        }
    }
}
