//! `gpudoctor fleet --format html` over real node reports, checked in the page's text and in a
//! real headless browser (Debian's chromium): the DOM after the page's script ran, a page
//! built from hostile reports (markup and script in every string field) where nothing
//! injected may run, the page without JavaScript, a 1280×800 screenshot, and 10,000 nodes.
//!
//! The browser tests run when chromium is installed (GPUDOCTOR_CHROMIUM names another);
//! GPUDOCTOR_REQUIRE_BROWSER=1 (set by .ci/run, which installs it) makes its absence a failure.

use crate::util;

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::Instant;

use crate::util::fleet_nodes::{build_fleet, node_report};
use crate::util::gpu_node::hgx;
use crate::util::*;
use serde_json::Value;

/// `gpudoctor fleet --format html ARGS…`: exit code and page.
fn fleet_html(args: &[&Path]) -> (i32, String) {
    let mut c = gpudoctor();
    c.args(["fleet", "--format", "html"]);
    for a in args {
        c.arg(a);
    }
    let r = run(&mut c);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    (r.code, r.stdout)
}

fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("GPUDOCTOR_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| which::which("chromium").ok());
    if found.is_none() {
        assert!(
            std::env::var_os("GPUDOCTOR_REQUIRE_BROWSER").is_none(),
            "GPUDOCTOR_REQUIRE_BROWSER is set but chromium is missing"
        );
        crate::util::skip(format_args!(
            "chromium not found (apt install chromium, or set GPUDOCTOR_CHROMIUM)"
        ));
    }
    found
}

/// Chromium as this machine runs it: headless, no network of its own, a fresh profile.
fn browser(chromium: &Path, profile: &Path) -> StdCommand {
    let mut c = StdCommand::new(chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The DOM after the page loaded and the scripts it allows ran.
fn dump_dom(chromium: &Path, page: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = browser(chromium, profile.path())
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium --dump-dom: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The DOM of `html` in the browser, or None when there is no browser (skipped).
fn dom_of(html: &str) -> Option<String> {
    let chromium = chromium()?;
    let pages = tempfile::tempdir().unwrap();
    let page = write_page(pages.path(), "page.html", html);
    Some(dump_dom(&chromium, &page))
}

/// The page's own script ran, and nothing injected did: the markers an injected handler or
/// script would set are attributes of <html> (as escaped text they appear in the body, which
/// is right), and no injected element exists.
fn assert_nothing_injected(dom: &str) {
    let html_tag = &dom[dom.find("<html").unwrap()..];
    let html_tag = &html_tag[..html_tag.find('>').unwrap()];
    assert!(html_tag.contains("data-js=\"ready\""), "{html_tag}");
    assert!(
        !html_tag.contains("data-pwned"),
        "injected script ran: {html_tag}"
    );
    assert!(
        !dom.contains("<img") && !dom.contains("<svg"),
        "injected elements"
    );
}

fn write_page(dir: &Path, name: &str, html: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, html).unwrap();
    path
}

/// The 10-node fleet's page written to a file: the folder, the file and the page.
fn fleet_page() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    build_fleet(dir.path());
    let (_, html) = fleet_html(&[dir.path()]);
    let pages = tempfile::tempdir().unwrap();
    let page = write_page(pages.path(), "fleet.html", &html);
    (pages, page, html)
}

/// A headless Chromium screenshot of `page` in a window of `size`, decoded.
struct Shot {
    path: PathBuf,
    width: u32,
    height: u32,
    rgb: Vec<u8>,
    channels: usize,
    _dir: tempfile::TempDir,
}

impl Shot {
    fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) as usize) * self.channels;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

fn screenshot(chromium: &Path, page: &Path, (w, h): (u32, u32)) -> Shot {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shot.png");
    let profile = tempfile::tempdir().unwrap();
    let out = browser(chromium, profile.path())
        .arg(format!("--screenshot={}", path.display()))
        .arg(format!("--window-size={w},{h}"))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut rgb).unwrap();
    assert_eq!((info.width, info.height), (w, h));
    Shot {
        path,
        width: info.width,
        height: info.height,
        channels: info.color_type.samples(),
        rgb,
        _dir: dir,
    }
}

/// The rows of the heat map, on every page (not the other tables').
fn heat_rows(dom: &str) -> Vec<&str> {
    let mut rows = Vec::new();
    let mut rest = dom;
    while let Some(start) = rest.find("<table class=\"heat") {
        let end = start + rest[start..].find("</table>").unwrap();
        rows.extend(
            rest[start..end]
                .split("<tr class=\"row")
                .skip(1)
                .map(|r| &r[..r.find("</tr>").unwrap_or(r.len())]),
        );
        rest = &rest[end..];
    }
    assert!(!rows.is_empty(), "no heat map");
    rows
}

#[test]
fn the_fleet_page_shows_the_verdict_shape_heat_map_outliers_and_findings() {
    let dir = tempfile::tempdir().unwrap();
    build_fleet(dir.path());
    let (code, html) = fleet_html(&[dir.path()]);
    // node010 lacks nvidia_uvm: an error, so the page's verdict and the exit code fail alike.
    assert_eq!(code, 1);
    assert!(html.starts_with("<!DOCTYPE html>"));
    // The verdict line says what the JSON view counts.
    let (_, v) = json(gpudoctor().arg("fleet").arg(dir.path()));
    let verdict =
        format!(
        "<p class=\"verdict e\" id=\"verdict\"><span class=\"mark\">✗</span> {} nodes, {} GPUs: \
         {} with errors, {} deviating, {} with warnings, {} clean</p>",
        v["shape"]["nodes"], v["shape"]["gpus"], v["nodes_with_errors"], v["deviating_nodes"],
        v["nodes_with_warnings"], v["clean_nodes"]
    );
    assert!(html.contains(&verdict), "{verdict}");
    assert_eq!(v["shape"]["nodes"], 10);
    // The page is one file: nothing to fetch.
    for external in ["http://", "https://", " src=", "<link", "@import", "url("] {
        assert!(!html.contains(external), "{external}");
    }
    let rows = heat_rows(&html);
    // Five healthy H100 nodes are one row; the older driver, the missing GPU and the missing
    // nvidia_uvm are rows of their own; the two workstations share one.
    // A row of up to six nodes names them all, without a click.
    let healthy = rows
        .iter()
        .find(|r| r.contains(">node001, node002, node003, node004, node005<"))
        .expect("the five healthy nodes share a row, named");
    assert!(healthy.contains("data-worst=\"ok\""));
    for n in ["node002", "node003", "node004", "node005"] {
        assert!(healthy.contains(n));
    }
    let uvm = rows.iter().find(|r| r.contains(">node010<")).unwrap();
    assert!(uvm.contains("data-worst=\"error\""), "{uvm}");
    assert!(uvm.contains("<td class=\"c e\"><a href=\"#f"), "{uvm}");
    assert!(uvm.contains("title=\"GD006 error: "), "{uvm}");
    let old = rows.iter().find(|r| r.contains(">node006<")).unwrap();
    assert!(old.starts_with(" outlier\""), "{old}");
    assert!(old.contains("driver 550.127.05"), "{old}");
    // A deviation is marked as a warning is, and ranks with the warnings.
    let missing = rows.iter().find(|r| r.contains(">node007<")).unwrap();
    assert!(
        missing.contains("<span class=\"m w\">≠</span>"),
        "{missing}"
    );
    assert!(missing.contains("gpu_count 7"), "{missing}");
    let at = |name: &str| html.find(&format!(">{name}")).unwrap();
    assert!(
        at("node007<") < at("node001, node002"),
        "a deviating row sorts before clean ones"
    );
    assert!(rows.iter().any(|r| r.contains(">ws1, ws2<")));
    // Each code's column says what it is, not only its code.
    assert!(
        html.contains("GD006 <span class=\"t\">nvidia_uvm is not loaded"),
        "{}",
        &html[html.find("<thead>").unwrap()..][..2000]
    );
    // Findings by code come before the heat map: the first thing after the verdict.
    assert!(html.find("<h2 id=\"codes\">").unwrap() < html.find("<h2 id=\"nodes\">").unwrap());
    // Grouped by model, the H100 group first (8 nodes).
    let h100 = html
        .find("NVIDIA H100 80GB HBM3 <span class=\"dim\">(8 nodes)")
        .unwrap();
    let rtx = html
        .find("NVIDIA GeForce RTX 4090 <span class=\"dim\">(2 nodes)")
        .unwrap();
    assert!(h100 < rtx);
    // Every cell links to a finding written once, with its evidence and fix.
    let detail = &html[html.find("<h2 id=\"details\">").unwrap()..];
    assert!(detail.contains("GD006"));
    assert!(detail.contains("fix: "));
    assert!(html.contains("<h2 id=\"outliers\">"));
    assert!(html.contains("<h2 id=\"codes\">"));
}

#[test]
fn the_page_runs_its_script_in_a_browser_and_works_without_it() {
    let Some(chromium) = chromium() else { return };
    let (pages, page, html) = fleet_page();

    let dom = dump_dom(&chromium, &page);
    // The page's script ran (the policy lets exactly it run) and showed the controls.
    assert!(dom.contains("data-js=\"ready\""), "{dom}");
    assert!(
        dom.contains("<div class=\"controls\">"),
        "controls stay hidden"
    );
    let rows = heat_rows(&dom);
    assert_eq!(rows.len(), heat_rows(&html).len());
    assert!(rows
        .iter()
        .any(|r| r.contains(">node010<") && r.contains("✗")));

    // Without its script (the policy's hash altered, so the browser refuses to run it, as it
    // would with JavaScript off): every row and mark is there, the script-only controls not.
    let blocked = html.replacen("script-src 'sha256-", "script-src 'sha256-AAAA", 1);
    assert_ne!(blocked, html);
    let page = write_page(pages.path(), "blocked.html", &blocked);
    let dom = dump_dom(&chromium, &page);
    assert!(
        !dom.contains("data-js=\"ready\""),
        "the script ran against the policy"
    );
    assert!(dom.contains("<div class=\"controls\" hidden=\"\">"));
    assert_eq!(heat_rows(&dom).len(), heat_rows(&html).len());
    assert!(dom.contains("node001, node002, node003, node004, node005"));
}

/// Markup and script in every string a report carries.
const HOSTILE: &[&str] = &[
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">",
    "</td></tr></table><script>document.documentElement.setAttribute('data-pwned','script')</script>",
    "\"><svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\">",
    "' onmouseover='document.documentElement.setAttribute(\"data-pwned\",\"attr\")",
];

/// Every string field of a JSON value replaced by a hostile one (keys kept).
fn poison(v: &mut Value, i: &mut usize) {
    match v {
        Value::String(s) => {
            *s = format!("{s}{}", HOSTILE[*i % HOSTILE.len()]);
            *i += 1;
        }
        Value::Array(a) => a.iter_mut().for_each(|x| poison(x, i)),
        Value::Object(o) => o.iter_mut().for_each(|(_, x)| poison(x, i)),
        _ => {}
    }
}

#[test]
fn hostile_reports_cannot_inject_markup_or_script() {
    let dir = tempfile::tempdir().unwrap();
    build_fleet(dir.path());
    // Node names, GPU models, driver versions, titles, evidence and fixes carry markup (the
    // fields that are enums or numbers in the schema would make the report unusable instead).
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut i = 0;
        for f in v["findings"].as_array_mut().unwrap() {
            for key in ["title", "detail"] {
                poison(&mut f[key], &mut i);
            }
            poison(&mut f["evidence"], &mut i);
            poison(&mut f["fix"], &mut i);
        }
        poison(&mut v["snapshot"]["node"]["name"], &mut i);
        poison(&mut v["snapshot"]["node"]["hostname"], &mut i);
        let system = &mut v["snapshot"]["nvml"]["result"]["system"];
        poison(&mut system["driver_version"]["value"], &mut i);
        if let Some(devices) = system["devices"].as_array_mut() {
            for d in devices {
                poison(&mut d["name"]["value"], &mut i);
            }
        }
        std::fs::write(&path, v.to_string()).unwrap();
    }
    // A report that cannot be read, under a hostile file name.
    std::fs::write(
        dir.path().join("<img src=x onerror=alert(1)>.json"),
        "{not json",
    )
    .unwrap();
    let (code, html) = fleet_html(&[dir.path()]);
    assert_eq!(code, 1);
    assert!(html.contains("Reports not used"));
    // In the page's text: nothing hostile survives as markup.
    for tag in [
        "<img",
        "<svg",
        "<script>document",
        "onerror=\"",
        "onload=\"",
        "onmouseover='",
    ] {
        assert!(!html.contains(tag), "{tag} reached the page");
    }
    assert!(html.contains("&lt;img src=x onerror="));
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;.json"));

    // In a browser: the page's own script ran, nothing injected did.
    let Some(dom) = dom_of(&html) else { return };
    assert_nothing_injected(&dom);
    assert!(
        dom.contains("setAttribute('data-pwned','img')"),
        "shown as text"
    );
}

#[test]
fn the_screenshot_at_1280x800_shows_the_verdict_and_the_heat_map() {
    let Some(chromium) = chromium() else { return };
    let (pages, page, _) = fleet_page();
    let shot = screenshot(&chromium, &page, (1280, 800));
    // It prints: the browser's PDF of the page has the pages a report of this size needs.
    let pdf = pages.path().join("fleet.pdf");
    let profile = tempfile::tempdir().unwrap();
    let out = browser(&chromium, profile.path())
        .arg("--no-pdf-header-footer")
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pdf = std::fs::read(&pdf).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    // Page objects ("/Type /Page", not the "/Type /Pages" tree).
    let pages_in_pdf = pdf
        .windows(12)
        .filter(|w| w.starts_with(b"/Type /Page") && w[11] != b's')
        .count();
    assert!(pages_in_pdf >= 2, "{pages_in_pdf} page(s)");
    // GPUDOCTOR_KEEP_SCREENSHOT=FILE keeps it for a look.
    if let Some(keep) = std::env::var_os("GPUDOCTOR_KEEP_SCREENSHOT") {
        std::fs::copy(&shot.path, keep).unwrap();
    }
    let pixel = |x: u32, y: u32| shot.pixel(x, y);
    // Not blank: a white page with text and coloured cells.
    let mut white = 0usize;
    let mut colours = std::collections::HashSet::new();
    let mut error_rows = Vec::new();
    for y in 0..shot.height {
        for x in 0..shot.width {
            let p = pixel(x, y);
            if p == [255, 255, 255] {
                white += 1;
            }
            colours.insert(p);
            // The error colour's background (#fde8e8): the verdict and the error cells.
            if p == [0xfd, 0xe8, 0xe8] {
                error_rows.push(y);
            }
        }
    }
    let total = (shot.width * shot.height) as usize;
    assert!(
        white > total / 2,
        "mostly white background: {white} of {total}"
    );
    assert!(colours.len() > 50, "only {} colours: blank?", colours.len());
    // The red verdict sits near the top; error cells further down, in the heat map.
    let first = *error_rows.first().expect("no error colour on screen");
    assert!(first < 150, "the verdict is at y={first}");
    assert!(
        error_rows.iter().any(|y| *y > first + 150),
        "no error cell below the verdict"
    );
}

#[test]
fn ten_thousand_distinct_nodes_make_a_bounded_page() {
    // Each node a finding of its own (its title names the node), so no two rows collapse:
    // the worst case for the page's size.
    let seed_dir = tempfile::tempdir().unwrap();
    let mut nvml = hgx(2);
    for g in &mut nvml.devices {
        g.persistence_mode = Some(false);
    }
    node_report(
        seed_dir.path(),
        "seed",
        &FakeRoot::healthy(2),
        Some(&nvml),
        &[],
    );
    let seed: Value =
        serde_json::from_str(&std::fs::read_to_string(seed_dir.path().join("seed.json")).unwrap())
            .unwrap();
    let reports = tempfile::tempdir().unwrap();
    let n = 10_000;
    for i in 0..n {
        let mut v = seed.clone();
        let name = format!("n{i:05}");
        v["snapshot"]["node"]["name"] = Value::String(name.clone());
        v["snapshot"]["node"]["machine_id"] = Value::String(format!("{i:032x}"));
        let title = v["findings"][0]["title"].as_str().unwrap().to_string();
        v["findings"][0]["title"] = Value::String(format!("{title} ({name})"));
        std::fs::write(reports.path().join(format!("{name}.json")), v.to_string()).unwrap();
    }
    let t = Instant::now();
    let (code, html) = fleet_html(&[reports.path()]);
    let took = t.elapsed();
    assert_eq!(code, 0, "GD038 is a warning");
    let rows = heat_rows(&html);
    assert_eq!(rows.len(), n);
    assert!(html.contains(">n09999<"));
    // In pages of 500 rows: the first open, the other 19 closed until opened; the findings
    // in detail alike.
    assert_eq!(html.matches("<details class=\"page\">").count(), 2 * 19);
    assert!(html.contains("<summary>rows 501–1000 of 10000</summary>"));
    assert!(html.contains("<summary>findings 9501–10000 of 10000</summary>"));
    // A link from a cell into a closed page of findings opens that page in the browser.
    if let Some(chromium) = chromium() {
        let pages = tempfile::tempdir().unwrap();
        let page = write_page(pages.path(), "big.html", &html);
        let profile = tempfile::tempdir().unwrap();
        let out = browser(&chromium, profile.path())
            .arg("--dump-dom")
            .arg(format!("file://{}#f9000", page.display()))
            .output()
            .unwrap();
        let dom = String::from_utf8_lossy(&out.stdout);
        let target = dom.find("id=\"f9000\"").expect("finding 9000");
        let page_start = dom[..target].rfind("<details").unwrap();
        assert!(
            dom[page_start..].starts_with("<details class=\"page\" open"),
            "{}",
            &dom[page_start..target]
        );
        assert_eq!(dom.matches("<details class=\"page\" open").count(), 1);
    }
    // docs/fleet.md states the bound per node; a debug build must stay well under it.
    let per_node = html.len() / n;
    assert!(per_node < 1_500, "{per_node} bytes per node");
    eprintln!(
        "10,000 distinct nodes: {} bytes ({per_node} per node), {took:?}",
        html.len()
    );
}

/// Text as the page escapes it.
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Runs `cmd` once per format: the HTML page and the JSON report, with their exit codes.
fn html_and_json(mut make: impl FnMut() -> assert_cmd::Command) -> ((i32, String), (i32, Value)) {
    let r = run(make().args(["--format", "html"]));
    assert!(r.stdout.starts_with("<!DOCTYPE html>"), "{}", r.stderr);
    let j = json(&mut make());
    ((r.code, r.stdout), j)
}

#[test]
fn check_devices_and_smoke_pages_carry_the_same_verdicts_as_the_report() {
    let node = util::gpu_node::GpuNode::new(2);
    // A finding to show: persistence mode off (GD038, info) on both GPUs.
    let mut node = node;
    for g in &mut node.nvml.devices {
        g.persistence_mode = Some(false);
    }
    let ((code, html), (json_code, v)) = html_and_json(|| {
        let mut c = node.cmd();
        c.arg("check");
        c
    });
    assert_eq!(code, json_code);
    // The headline, every finding (title, evidence, fix) and the summary, as the JSON says.
    let headline = v["headline"]["text"].as_str().unwrap();
    assert!(
        html.contains(&format!("</span> {headline}</p>")),
        "{headline}"
    );
    let findings = v["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        assert!(html.contains(&format!(
            "[{}]: {}</h3>",
            f["code"].as_str().unwrap(),
            f["title"].as_str().unwrap()
        )));
    }
    // Every line of every section, with the same mark, as the Markdown report has it (both
    // read the report's sections and the findings' verdicts on them).
    let md = run(node.cmd().args(["check", "--format", "markdown"])).stdout;
    let mut lines = 0;
    for row in md
        .lines()
        .filter(|l| l.starts_with("| ") && l.ends_with("` |"))
    {
        let cells: Vec<String> = row
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().replace("\\|", "|"))
            .collect();
        let [mark, label, value, _source] = &cells[..] else {
            continue;
        };
        // A value that ends in a run's duration (the smoke test's) differs from run to run.
        let timed = value.ends_with(" s")
            && value[..value.len() - 2].ends_with(|c: char| c.is_ascii_digit());
        let cell = if timed {
            format!("\">{mark}</td><td>{}</td><td>", html_text(label))
        } else {
            format!(
                "\">{mark}</td><td>{}</td><td>{}</td>",
                html_text(label),
                html_text(value)
            )
        };
        assert!(html.contains(&cell), "{cell}");
        lines += 1;
    }
    assert!(lines > 10, "{md}");
    // The GPU table, the topology matrix and the smoke test's copies against the link.
    assert!(html.contains("<h2 id=\"gpus\">"));
    let topo = &html[html.find("<h2 id=\"topology\">").expect("topology")..];
    assert!(topo.contains("<th>GPU 0</th><th>GPU 1</th>"));
    assert!(topo.contains("P2P read: ok"));
    let smoke = &html[html.find("<h2 id=\"smoke\">").expect("smoke")..];
    assert!(smoke.contains("pinned host → GPU"));
    assert!(smoke.contains("class=\"bar\" role=\"img\" aria-label=\""));
    assert!(smoke.contains("(PCIe gen 5 x16)"));
    // The steps as a grid: a row per GPU (two here), a column per step, figures on hover.
    let grid = &smoke[smoke
        .find("<table class=\"grid\">")
        .expect("the GPU × step grid")..];
    let grid = &grid[..grid.find("</table>").unwrap()];
    assert_eq!(grid.matches("<tr class=\"row\">").count(), 2, "{grid}");
    assert!(
        grid.contains("<th>matmul</th>") && grid.contains("title=\"48×48 FP32"),
        "{grid}"
    );

    // `devices` and `smoke` pages: their parts, and their exit codes as in JSON (`devices`
    // takes no libcuda).
    let mut nvml_node = util::gpu_node::GpuNode::nvml_only(2, hgx(2));
    for g in &mut nvml_node.nvml.devices {
        g.persistence_mode = Some(false);
    }
    for (command, n, part) in [
        ("devices", &nvml_node, "id=\"topology\""),
        ("smoke", &node, "pinned GPU → host"),
    ] {
        let ((code, page), (json_code, v)) = html_and_json(|| {
            let mut c = n.cmd();
            c.arg(command);
            c
        });
        assert_eq!(code, json_code, "{command}");
        assert!(page.contains(part), "{command}");
        for f in v["findings"].as_array().unwrap() {
            let code = f["code"].as_str().unwrap();
            assert!(page.contains(&format!("[{code}]: ")), "{command}: {code}");
        }
    }
}

#[test]
fn a_hostile_root_cannot_inject_into_the_check_page() {
    let root = gpu_host("580.95.05", "NVIDIA H100 80GB HBM3");
    root.file(
        "etc/os-release",
        &format!(
            "NAME=x\nPRETTY_NAME=\"{}\"\nID=x\n",
            HOSTILE[0].replace('"', "'")
        ),
    );
    let hostile_env = HOSTILE[1];
    let r = run(root.cmd().env("CUDA_VISIBLE_DEVICES", hostile_env).args([
        "check",
        "--no-smoke",
        "--format",
        "html",
    ]));
    let html = r.stdout;
    assert!(
        html.contains("&lt;img src=x"),
        "the OS name is shown, escaped"
    );
    assert!(
        html.contains("&lt;script&gt;document"),
        "the variable is shown, escaped"
    );
    for tag in ["<img", "<svg", "<script>document", "onerror=\""] {
        assert!(!html.contains(tag), "{tag} reached the page");
    }
    let Some(dom) = dom_of(&html) else { return };
    assert_nothing_injected(&dom);
}

/// "Findings by code" — the view an admin opens the page for — is on the first screen of a
/// 1400×1000 window, its first row included: measured by Chromium's own layout (a copy of the
/// page with a script that writes the positions onto <html>, the page's CSP taken out so it
/// runs) and seen in a screenshot of that window.
#[test]
fn findings_by_code_are_on_the_first_screen_at_1400x1000() {
    let Some(chromium) = chromium() else { return };
    let (pages, page, html) = fleet_page();
    let csp_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let csp_end = csp_start + html[csp_start..].find('>').unwrap() + 1;
    let probe = "<script>(function(){var h=document.getElementById('codes');\
        var row=document.querySelector('#codes + table tbody tr');\
        var e=document.documentElement;\
        e.setAttribute('data-codes-bottom',Math.ceil(h.getBoundingClientRect().bottom));\
        e.setAttribute('data-row-bottom',Math.ceil(row.getBoundingClientRect().bottom));\
        e.setAttribute('data-viewport',window.innerWidth+'x'+window.innerHeight);})();</script>";
    let measured = format!(
        "{}{}",
        &html[..csp_start],
        html[csp_end..].replace("</body>", &format!("{probe}</body>"))
    );
    let measured_page = write_page(pages.path(), "measured.html", &measured);
    let profile = tempfile::tempdir().unwrap();
    let out = browser(&chromium, profile.path())
        .arg("--window-size=1400,1000")
        .arg("--dump-dom")
        .arg(format!("file://{}", measured_page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let attr = |name: &str| -> String {
        let at = dom
            .find(&format!("{name}=\""))
            .unwrap_or_else(|| panic!("no {name}: the probe did not run\n{dom}"));
        let rest = &dom[at + name.len() + 2..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    // The page is laid out 1400 wide (the height a headless window gives its page differs
    // between --dump-dom and --screenshot; positions from the top do not depend on it).
    assert!(
        attr("data-viewport").starts_with("1400x"),
        "{}",
        attr("data-viewport")
    );
    let heading: u32 = attr("data-codes-bottom").parse().unwrap();
    let row: u32 = attr("data-row-bottom").parse().unwrap();
    assert!(
        heading < 1000 && row < 1000,
        "Findings by code ends at y={heading}, its first row at y={row}: below the fold"
    );

    // The same window's screenshot: the error colour (#fde8e8) of the first code's row
    // (node010's missing nvidia_uvm) is on screen below the verdict's, where the measured
    // row is.
    let shot = screenshot(&chromium, &page, (1400, 1000));
    let error_rows: Vec<u32> = (0..shot.height)
        .filter(|&y| (0..shot.width).any(|x| shot.pixel(x, y) == [0xfd, 0xe8, 0xe8]))
        .collect();
    assert!(
        error_rows.iter().any(|&y| y > 150 && y <= row),
        "no error-coloured cell between the verdict and y={row}"
    );
}
