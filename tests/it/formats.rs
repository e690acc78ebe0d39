//! `check --format junit` and `--format prometheus`, read back by parsers no one here wrote
//! (roxmltree; prometheus-parse) and, for the exposition format, by a strict line-level
//! validator below: prometheus-parse splits labels on `,` and `=` and drops lines it does not
//! match, so on its own it would accept output Prometheus rejects.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::util::gpu_node::GpuNode;
use crate::util::*;
use serde_json::Value;

// ---------------------------------------------------------------- JUnit

/// One parsed <testcase>.
#[derive(Debug)]
struct Case {
    classname: String,
    name: String,
    /// (message, type, text) of each <failure>.
    failures: Vec<(String, String, String)>,
    skipped: Option<String>,
    system_out: Option<String>,
}

/// The <testsuite> attributes, its properties and its cases, with the document's shape checked.
struct Suite {
    attrs: HashMap<String, String>,
    properties: BTreeMap<String, String>,
    cases: Vec<Case>,
}

fn parse_junit(xml: &str) -> Suite {
    let doc = roxmltree::Document::parse(xml)
        .unwrap_or_else(|e| panic!("not well-formed XML ({e}):\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    assert_eq!(suites.len(), 1, "one testsuite");
    let suite = suites[0];
    assert_eq!(suite.tag_name().name(), "testsuite");
    let attrs: HashMap<String, String> = suite
        .attributes()
        .map(|a| (a.name().to_string(), a.value().to_string()))
        .collect();
    // <testsuites> carries the same totals.
    for k in ["tests", "failures", "errors", "skipped"] {
        assert_eq!(root.attribute(k), Some(attrs[k].as_str()), "{k}");
    }
    let mut properties = BTreeMap::new();
    let mut cases = Vec::new();
    for child in suite.children().filter(|n| n.is_element()) {
        match child.tag_name().name() {
            "properties" => {
                for p in child.children().filter(|n| n.is_element()) {
                    assert_eq!(p.tag_name().name(), "property");
                    let name = p.attribute("name").expect("property name").to_string();
                    let value = p.attribute("value").expect("property value").to_string();
                    assert!(
                        properties.insert(name, value).is_none(),
                        "duplicate property"
                    );
                }
            }
            "testcase" => {
                let mut case = Case {
                    classname: child.attribute("classname").expect("classname").into(),
                    name: child.attribute("name").expect("name").into(),
                    failures: Vec::new(),
                    skipped: None,
                    system_out: None,
                };
                for e in child.children().filter(|n| n.is_element()) {
                    match e.tag_name().name() {
                        "failure" => case.failures.push((
                            e.attribute("message").expect("message").into(),
                            e.attribute("type").expect("type").into(),
                            e.text().unwrap_or("").into(),
                        )),
                        "skipped" => {
                            assert!(case.skipped.is_none());
                            case.skipped = Some(e.attribute("message").expect("message").into());
                        }
                        "system-out" => case.system_out = Some(e.text().unwrap_or("").into()),
                        other => panic!("unexpected <{other}> in a testcase"),
                    }
                }
                assert!(
                    case.failures.is_empty() || case.skipped.is_none(),
                    "a case is failed or skipped, not both: {case:?}"
                );
                cases.push(case);
            }
            other => panic!("unexpected <{other}> in the testsuite"),
        }
    }
    let n = |k: &str| attrs[k].parse::<usize>().unwrap();
    assert_eq!(n("tests"), cases.len());
    assert_eq!(
        n("failures"),
        cases.iter().filter(|c| !c.failures.is_empty()).count()
    );
    assert_eq!(
        n("skipped"),
        cases.iter().filter(|c| c.skipped.is_some()).count()
    );
    assert_eq!(n("errors"), 0);
    Suite {
        attrs,
        properties,
        cases,
    }
}

/// The JUnit cases agree with the JSON report's checks and findings, one for one.
fn assert_junit_matches_json(suite: &Suite, report: &Value) {
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(suite.cases.len(), checks.len());
    for (case, check) in suite.cases.iter().zip(checks) {
        let rule = check["rule"].as_str().unwrap();
        let codes: Vec<&str> = check["codes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(case.classname, format!("gpudoctor.{rule}"));
        assert_eq!(case.name, format!("{rule} ({})", codes.join(", ")));
        let own: Vec<&Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| codes.contains(&f["code"].as_str().unwrap()))
            .collect();
        match check["status"].as_str().unwrap() {
            "failed" => {
                // One <failure>: every finding's code and title in its message, each
                // finding in its text, the worst severity as its type.
                assert_eq!(case.failures.len(), 1, "{rule}");
                let (message, kind, text) = &case.failures[0];
                let titles: Vec<String> = own
                    .iter()
                    .map(|f| {
                        format!(
                            "{}: {}",
                            f["code"].as_str().unwrap(),
                            f["title"].as_str().unwrap()
                        )
                    })
                    .collect();
                assert_eq!(message, &titles.join("; "), "{rule}");
                let rank = |s: &str| ["info", "warning", "error"].iter().position(|x| *x == s);
                let worst = own
                    .iter()
                    .map(|f| f["severity"].as_str().unwrap())
                    .max_by_key(|s| rank(s))
                    .unwrap();
                assert_eq!(kind, worst, "{rule}");
                for f in &own {
                    let code = f["code"].as_str().unwrap();
                    assert!(text.contains(&format!("[{code}]")), "{text}");
                }
            }
            "passed" => {
                assert!(case.failures.is_empty() && case.skipped.is_none(), "{rule}");
                // Info notes ride along without failing the case.
                assert_eq!(case.system_out.is_some(), !own.is_empty(), "{rule}");
            }
            status @ ("not_applicable" | "skipped") => {
                let msg = case.skipped.as_deref().expect("skipped");
                assert!(msg.starts_with(&status.replace('_', " ")), "{msg}");
            }
            other => panic!("status {other}"),
        }
    }
}

// ---------------------------------------------------------------- Prometheus

/// One sample as the strict validator read it (label values unescaped).
#[derive(Debug, Clone)]
struct Series {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn is_metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn is_label_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with("__")
}

/// The text exposition format 0.0.4, strictly: valid names, HELP/TYPE once per family and
/// before its samples, every sample typed, a family's samples together, only the three label
/// escapes, no duplicate label or series, finite values, a final line feed.
fn strict_parse(text: &str) -> Vec<Series> {
    assert!(text.ends_with('\n'), "the last line must end with \\n");
    assert!(!text.contains('\r'), "no carriage returns");
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helps: HashSet<String> = HashSet::new();
    let mut done: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut seen: HashSet<(String, Vec<(String, String)>)> = HashSet::new();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("line {}: {line:?}", n + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let rest = rest.strip_prefix(' ').unwrap_or_else(|| panic!("{at}"));
            if let Some(r) = rest.strip_prefix("HELP ") {
                let (name, doc) = r.split_once(' ').unwrap_or_else(|| panic!("{at}"));
                assert!(is_metric_name(name), "{at}");
                assert!(helps.insert(name.into()), "second HELP: {at}");
                assert!(
                    current.as_deref() != Some(name) && !done.contains(name),
                    "{at}"
                );
                let mut chars = doc.chars();
                while let Some(c) = chars.next() {
                    if c == '\\' {
                        assert!(
                            matches!(chars.next(), Some('\\' | 'n')),
                            "HELP escape: {at}"
                        );
                    }
                }
            } else if let Some(r) = rest.strip_prefix("TYPE ") {
                let (name, kind) = r.split_once(' ').unwrap_or_else(|| panic!("{at}"));
                assert!(is_metric_name(name), "{at}");
                assert!(
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                    "{at}"
                );
                assert!(
                    types.insert(name.into(), kind.into()).is_none(),
                    "second TYPE: {at}"
                );
                assert!(
                    current.as_deref() != Some(name) && !done.contains(name),
                    "{at}"
                );
            }
            continue;
        }
        // name{label="value",...} value
        let name_end = line.find(['{', ' ']).unwrap_or_else(|| panic!("{at}"));
        let name = &line[..name_end];
        assert!(is_metric_name(name), "metric name: {at}");
        assert_eq!(
            types.get(name).map(String::as_str),
            Some("gauge"),
            "no TYPE before the sample: {at}"
        );
        if current.as_deref() != Some(name) {
            assert!(!done.contains(name), "family split up: {at}");
            if let Some(c) = current.take() {
                done.insert(c);
            }
            current = Some(name.to_string());
        }
        let mut rest = &line[name_end..];
        let mut labels = BTreeMap::new();
        if let Some(r) = rest.strip_prefix('{') {
            let mut chars = r.char_indices().peekable();
            loop {
                if let Some((i, '}')) = chars.peek().copied() {
                    chars.next();
                    rest = &r[i + 1..];
                    break;
                }
                let mut label = String::new();
                for (_, c) in chars.by_ref() {
                    if c == '=' {
                        break;
                    }
                    label.push(c);
                }
                assert!(is_label_name(&label), "label name {label:?}: {at}");
                assert_eq!(chars.next().map(|x| x.1), Some('"'), "{at}");
                let mut value = String::new();
                loop {
                    match chars.next().map(|x| x.1) {
                        Some('"') => break,
                        Some('\\') => match chars.next().map(|x| x.1) {
                            Some('\\') => value.push('\\'),
                            Some('"') => value.push('"'),
                            Some('n') => value.push('\n'),
                            other => panic!("bad escape \\{other:?}: {at}"),
                        },
                        Some(c) => value.push(c),
                        None => panic!("unterminated label value: {at}"),
                    }
                }
                assert!(
                    labels.insert(label.clone(), value).is_none(),
                    "duplicate label {label}: {at}"
                );
                match chars.next() {
                    Some((_, ',')) => {}
                    Some((i, '}')) => {
                        rest = &r[i + 1..];
                        break;
                    }
                    other => panic!("after a label value {other:?}: {at}"),
                }
            }
        }
        let rest = rest.strip_prefix(' ').unwrap_or_else(|| panic!("{at}"));
        let mut fields = rest.split(' ');
        let value_text = fields.next().unwrap();
        let value: f64 = value_text.parse().unwrap_or_else(|_| panic!("value: {at}"));
        assert!(value.is_finite(), "no NaN or infinity: {at}");
        if let Some(ts) = fields.next() {
            ts.parse::<i64>()
                .unwrap_or_else(|_| panic!("timestamp: {at}"));
        }
        assert!(fields.next().is_none(), "{at}");
        let key = (
            name.to_string(),
            labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        );
        assert!(seen.insert(key), "duplicate series: {at}");
        out.push(Series {
            name: name.into(),
            labels,
            value,
        });
    }
    for name in types.keys() {
        assert!(helps.contains(name), "{name} has no HELP");
    }
    out
}

/// Both parsers: the strict one for everything, prometheus-parse for agreement on names,
/// values and docs (it cannot read label values holding `,`, `=` or `}`).
fn parse_prometheus(text: &str) -> Vec<Series> {
    let series = strict_parse(text);
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("prometheus-parse");
    for s in &series {
        assert!(scrape.docs.contains_key(&s.name), "{} has no HELP", s.name);
    }
    let plain = |s: &Series| {
        s.labels
            .values()
            .all(|v| !v.contains([',', '=', '}', '"', '\\', '\n']))
    };
    let expected: Vec<&Series> = series.iter().filter(|s| plain(s)).collect();
    for s in &expected {
        let found = scrape.samples.iter().find(|x| {
            x.metric == s.name
                && x.labels.len() == s.labels.len()
                && s.labels.iter().all(|(k, v)| x.labels.get(k) == Some(v))
        });
        let found = found.unwrap_or_else(|| panic!("prometheus-parse lacks {s:?}"));
        match found.value {
            prometheus_parse::Value::Gauge(v) => assert_eq!(v, s.value, "{s:?}"),
            ref other => panic!("{} is not a gauge: {other:?}", s.name),
        }
    }
    series
}

/// The value of the one series with this name and these labels.
fn value(series: &[Series], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let matching: Vec<&Series> = series
        .iter()
        .filter(|s| {
            s.name == name
                && s.labels.len() == labels.len()
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    assert!(matching.len() <= 1);
    matching.first().map(|s| s.value)
}

fn named<'a>(series: &'a [Series], name: &str) -> Vec<&'a Series> {
    series.iter().filter(|s| s.name == name).collect()
}

// ---------------------------------------------------------------- fixtures

/// A host with one GPU and three problems: nvidia_uvm missing (GD006), /dev/nvidia0 not
/// open to alice (GD008), CUDA_LAUNCH_BLOCKING left on (GD012).
fn broken_root() -> FakeRoot {
    let root = FakeRoot::healthy(1);
    root.remove("dev/nvidia-uvm").chmod("dev/nvidia0", 0o660);
    root.file("etc/hostname", "gpu-node-07\n");
    root
}

fn broken_cmd(root: &FakeRoot) -> assert_cmd::Command {
    let mut c = root.cmd();
    c.args(["check", "--user", ALICE])
        .env("CUDA_LAUNCH_BLOCKING", "1");
    c
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

// ---------------------------------------------------------------- JUnit tests

#[test]
fn junit_healthy_host_has_one_passing_case_per_check() {
    let root = FakeRoot::healthy(2);
    root.file("etc/hostname", "gpu-node-01\n");
    let r = run(root
        .cmd()
        .args(["check", "--user", ALICE, "--format", "junit"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r
        .stdout
        .starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
    let suite = parse_junit(&r.stdout);
    let (_, report) = json(root.cmd().args(["check", "--user", ALICE]));
    assert_junit_matches_json(&suite, &report);

    assert_eq!(suite.attrs["name"], "gpudoctor");
    assert_eq!(suite.attrs["hostname"], "gpu-node-01");
    assert_eq!(suite.attrs["failures"], "0");
    let stamp = humantime::parse_rfc3339(&suite.attrs["timestamp"]).expect("RFC 3339");
    let age = SystemTime::now().duration_since(stamp).unwrap_or_default();
    assert!(age < Duration::from_secs(120), "{age:?}");
    let p = &suite.properties;
    assert_eq!(p["node"], "gpu-node-01");
    assert_eq!(p["driver_version"], "580.95.05");
    assert_eq!(p["gpu_count"], "2");
    assert_eq!(p["gpudoctor_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(p["root"], report["snapshot"]["root"].as_str().unwrap());
    // Under --root the smoke test does not run: its checks are skipped with the reason.
    let smoke = suite
        .cases
        .iter()
        .find(|c| c.classname == "gpudoctor.smoke_matmul")
        .unwrap();
    assert!(smoke
        .skipped
        .as_deref()
        .unwrap()
        .starts_with("not applicable: "));
}

#[test]
fn junit_failing_checks_are_failures_with_codes_severities_and_fixes() {
    let root = broken_root();
    let r = run(broken_cmd(&root).args(["--format", "junit"]));
    // The exit code follows --fail-on as for every format.
    assert_eq!(r.code, 1, "{}", r.stderr);
    let suite = parse_junit(&r.stdout);
    let (_, report) = json(&mut broken_cmd(&root));
    assert_junit_matches_json(&suite, &report);

    let failed: Vec<(&str, Vec<&str>)> = suite
        .cases
        .iter()
        .filter(|c| !c.failures.is_empty())
        .map(|c| {
            (
                c.classname.as_str(),
                c.failures.iter().map(|f| f.1.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        failed,
        vec![
            ("gpudoctor.uvm", vec!["error"]),
            ("gpudoctor.device_nodes", vec!["error"]),
            ("gpudoctor.debug_env", vec!["warning"]),
        ]
    );
    assert_eq!(suite.attrs["failures"], "3");
    assert_eq!(suite.properties["gpu_count"], "1");
    let case = |rule: &str| {
        suite
            .cases
            .iter()
            .find(|c| c.classname == format!("gpudoctor.{rule}"))
            .unwrap()
    };
    let (message, _, text) = &case("uvm").failures[0];
    assert!(message.starts_with("GD006: "), "{message}");
    // The body holds the evidence, the why and the fix commands.
    assert!(
        text.contains("--> /dev/nvidia-uvm missing  [/dev/nvidia-uvm]"),
        "{text}"
    );
    assert!(text.contains("= why: "), "{text}");
    assert!(text.contains("$ sudo nvidia-modprobe -u -c=0"), "{text}");
    let (message, _, text) = &case("device_nodes").failures[0];
    assert!(message.starts_with("GD008: "), "{message}");
    assert!(text.contains("$ sudo usermod -aG video alice"), "{text}");
    let (message, _, text) = &case("debug_env").failures[0];
    assert!(
        message.starts_with("GD012: CUDA_LAUNCH_BLOCKING=1"),
        "{message}"
    );
    assert!(text.contains("$ unset CUDA_LAUNCH_BLOCKING"), "{text}");
}

#[test]
fn junit_skipped_checks_say_why() {
    let root = FakeRoot::healthy(1);
    let r = run(root
        .cmd()
        .args(["check", "--format", "junit", "--only", "GD006,GD012"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let suite = parse_junit(&r.stdout);
    let (_, report) = json(root.cmd().args(["check", "--only", "GD006,GD012"]));
    assert_junit_matches_json(&suite, &report);
    let ran: Vec<&str> = suite
        .cases
        .iter()
        .filter(|c| c.skipped.is_none())
        .map(|c| c.classname.as_str())
        .collect();
    assert_eq!(ran, ["gpudoctor.uvm", "gpudoctor.debug_env"]);
    let skipped = suite
        .cases
        .iter()
        .find_map(|c| c.skipped.as_deref())
        .unwrap();
    assert_eq!(skipped, "skipped: not selected (--only/--skip)");
}

#[test]
fn info_findings_are_notes_not_failures() {
    let root = FakeRoot::new();
    let r = run(root.cmd().args(["check", "--format", "junit"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let suite = parse_junit(&r.stdout);
    let (_, report) = json(root.cmd().arg("check"));
    assert_junit_matches_json(&suite, &report);
    assert_eq!(suite.attrs["failures"], "0");
    let presence = &suite.cases[0];
    assert_eq!(presence.classname, "gpudoctor.gpu_presence");
    let notes = presence.system_out.as_deref().expect("the GD001 note");
    assert!(
        notes.starts_with("info[GD001]: No NVIDIA GPU found"),
        "{notes}"
    );
    // No driver: the property is left out, not empty.
    assert!(!suite.properties.contains_key("driver_version"));
    assert_eq!(suite.properties["gpu_count"], "0");
    assert_eq!(suite.properties["infos"], "1");

    let r = run(root.cmd().args(["check", "--format", "prometheus"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = parse_prometheus(&r.stdout);
    assert_eq!(
        value(
            &s,
            "gpudoctor_finding",
            &[("code", "GD001"), ("severity", "info")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&s, "gpudoctor_findings", &[("severity", "info")]),
        Some(1.0)
    );
    assert_eq!(
        value(&s, "gpudoctor_checks", &[("status", "failed")]),
        Some(0.0)
    );
    assert_eq!(value(&s, "gpudoctor_gpus", &[]), Some(0.0));
    assert!(named(&s, "gpudoctor_driver_info").is_empty());
    assert!(
        !r.stdout.contains("gpudoctor_driver_info"),
        "no empty family"
    );
}

// ---------------------------------------------------------------- Prometheus tests

#[test]
fn prometheus_healthy_host() {
    let root = FakeRoot::healthy(2);
    root.file("etc/hostname", "gpu-node-01\n");
    let r = run(root.cmd().args(["check", "--format", "prometheus"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = parse_prometheus(&r.stdout);
    let (_, report) = json(root.cmd().arg("check"));

    assert_eq!(
        value(
            &s,
            "gpudoctor_info",
            &[
                ("version", env!("CARGO_PKG_VERSION")),
                ("node", "gpu-node-01")
            ]
        ),
        Some(1.0)
    );
    assert_eq!(value(&s, "gpudoctor_gpus", &[]), Some(2.0));
    // No NVML here: the driver comes from the kernel module, the CUDA version is unknown.
    assert_eq!(
        value(
            &s,
            "gpudoctor_driver_info",
            &[("driver_version", "580.95.05"), ("cuda_version", "")]
        ),
        Some(1.0)
    );
    for sev in ["error", "warning", "info"] {
        assert_eq!(
            value(&s, "gpudoctor_findings", &[("severity", sev)]),
            Some(0.0)
        );
    }
    assert!(named(&s, "gpudoctor_finding").is_empty());
    let checks = report["checks"].as_array().unwrap();
    for status in ["passed", "failed", "not_applicable", "skipped"] {
        let n = checks.iter().filter(|c| c["status"] == status).count();
        assert_eq!(
            value(&s, "gpudoctor_checks", &[("status", status)]),
            Some(n as f64),
            "{status}"
        );
    }
    let ts = value(&s, "gpudoctor_last_run_timestamp_seconds", &[]).unwrap();
    assert!((now_secs() - ts).abs() < 120.0, "{ts}");
    // No smoke run under --root: no smoke series, and no empty families either.
    assert!(s.iter().all(|x| !x.name.starts_with("gpudoctor_smoke_")));
    assert!(!r.stdout.contains("gpudoctor_smoke"));
}

#[test]
fn prometheus_counts_findings_by_code_and_severity() {
    let root = broken_root();
    let r = run(broken_cmd(&root).args(["--format", "prometheus"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let s = parse_prometheus(&r.stdout);
    let (_, report) = json(&mut broken_cmd(&root));
    let summary = &report["summary"];
    for (sev, key) in [
        ("error", "errors"),
        ("warning", "warnings"),
        ("info", "infos"),
    ] {
        assert_eq!(
            value(&s, "gpudoctor_findings", &[("severity", sev)]),
            summary[key].as_f64(),
            "{sev}"
        );
    }
    assert_eq!(
        value(
            &s,
            "gpudoctor_finding",
            &[("code", "GD006"), ("severity", "error")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &s,
            "gpudoctor_finding",
            &[("code", "GD008"), ("severity", "error")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &s,
            "gpudoctor_finding",
            &[("code", "GD012"), ("severity", "warning")]
        ),
        Some(1.0)
    );
    let total: f64 = named(&s, "gpudoctor_finding").iter().map(|x| x.value).sum();
    assert_eq!(total, report["findings"].as_array().unwrap().len() as f64);
    assert_eq!(
        value(&s, "gpudoctor_checks", &[("status", "failed")]),
        Some(3.0)
    );
    assert_eq!(
        value(
            &s,
            "gpudoctor_info",
            &[
                ("version", env!("CARGO_PKG_VERSION")),
                ("node", "gpu-node-07")
            ]
        ),
        Some(1.0)
    );
}

#[test]
fn prometheus_timestamp_is_the_reports_own_time() {
    let root = FakeRoot::healthy(1);
    let saved = tempfile::tempdir().unwrap();
    let path = saved.path().join("report.json");
    let (_, mut report) = json(root.cmd().arg("check"));
    report["snapshot"]["node"]["time"] = "2024-03-01T12:00:00Z".into();
    std::fs::write(&path, report.to_string()).unwrap();
    let replay = |path: &std::path::Path| {
        let r = run(gpudoctor()
            .args(["check", "--format", "prometheus", "--from"])
            .arg(path));
        assert_eq!(r.code, 0, "{}", r.stderr);
        parse_prometheus(&r.stdout)
    };
    let s = replay(&path);
    assert_eq!(
        value(&s, "gpudoctor_last_run_timestamp_seconds", &[]),
        Some(1_709_294_400.0)
    );
    // An unreadable time falls back to now rather than to 0 or to no series.
    report["snapshot"]["node"]["time"] = "yesterday".into();
    std::fs::write(&path, report.to_string()).unwrap();
    let ts = value(&replay(&path), "gpudoctor_last_run_timestamp_seconds", &[]).unwrap();
    assert!((now_secs() - ts).abs() < 120.0, "{ts}");
    // A report from before node identity existed still renders, as node "unknown".
    report["snapshot"].as_object_mut().unwrap().remove("node");
    std::fs::write(&path, report.to_string()).unwrap();
    let s = replay(&path);
    assert_eq!(
        value(
            &s,
            "gpudoctor_info",
            &[("version", env!("CARGO_PKG_VERSION")), ("node", "unknown")]
        ),
        Some(1.0)
    );
    let r = run(gpudoctor()
        .args(["check", "--format", "junit", "--from"])
        .arg(&path));
    let suite = parse_junit(&r.stdout);
    assert_eq!(suite.attrs["hostname"], "unknown");
    assert!(humantime::parse_rfc3339(&suite.attrs["timestamp"]).is_ok());
}

// ---------------------------------------------------------------- smoke figures

#[test]
fn smoke_figures_per_gpu() {
    let mut node = GpuNode::new(2);
    node.cuda().device(1).bit_flips = 3;
    let r = run(node.cmd().args(["check", "--format", "prometheus"]));
    assert_eq!(r.code, 1, "bit flips are an error: {}", r.stderr);
    let s = parse_prometheus(&r.stdout);
    // With NVML the CUDA version is known.
    assert_eq!(
        value(
            &s,
            "gpudoctor_driver_info",
            &[("driver_version", "580.95.05"), ("cuda_version", "13.0")]
        ),
        Some(1.0)
    );
    assert_eq!(value(&s, "gpudoctor_gpus", &[]), Some(2.0));
    assert_eq!(
        value(
            &s,
            "gpudoctor_finding",
            &[("code", "GD057"), ("severity", "error")]
        ),
        Some(1.0)
    );
    let gpu_labels = |i: usize| -> [(&str, String); 3] {
        [
            ("gpu", i.to_string()),
            ("uuid", fake_nvml::gpu_uuid(i as u32)),
            ("name", "NVIDIA H100 80GB HBM3".into()),
        ]
    };
    let labels = |i: usize, extra: &[(&'static str, &'static str)]| -> Vec<(&str, String)> {
        let mut l = gpu_labels(i).to_vec();
        l.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        l
    };
    let get = |s: &[Series], name: &str, l: &[(&str, String)]| {
        let l: Vec<(&str, &str)> = l.iter().map(|(k, v)| (*k, v.as_str())).collect();
        value(s, name, &l)
    };
    const DIRECTIONS: [(&str, &str); 5] = [
        ("h2d", "pinned"),
        ("d2h", "pinned"),
        ("h2d", "pageable"),
        ("d2h", "pageable"),
        ("d2d", "device"),
    ];
    for i in 0..2 {
        let gpu = labels(i, &[]);
        // The gauge carries the verdict `check` marks the GPU with.
        let (passed, verdict) = if i == 0 {
            (1.0, "passed")
        } else {
            (0.0, "error")
        };
        assert_eq!(
            get(
                &s,
                "gpudoctor_smoke_passed",
                &labels(i, &[("verdict", verdict)])
            ),
            Some(passed),
            "GPU {i}"
        );
        assert!(get(&s, "gpudoctor_smoke_matmul_gflops", &gpu).unwrap() > 0.0);
        assert_eq!(get(&s, "gpudoctor_smoke_matmul_correct", &gpu), Some(1.0));
        let mismatches = get(&s, "gpudoctor_smoke_memory_mismatches", &gpu).unwrap();
        assert_eq!(mismatches > 0.0, i == 1, "GPU {i}: {mismatches}");
        assert!(get(&s, "gpudoctor_smoke_memory_allocated_bytes", &gpu).unwrap() > 0.0);
        for (direction, memory) in DIRECTIONS {
            let l = labels(i, &[("direction", direction), ("memory", memory)]);
            assert!(get(&s, "gpudoctor_smoke_transfer_gbps", &l).unwrap() > 0.0);
        }
    }
    assert_eq!(named(&s, "gpudoctor_smoke_transfer_gbps").len(), 10);

    // Figures differ from run to run: compare one run's JSON with its replay (--from).
    let (_, report) = json(node.cmd().arg("check"));
    let saved = tempfile::tempdir().unwrap();
    let path = saved.path().join("report.json");
    std::fs::write(&path, report.to_string()).unwrap();
    let r = run(gpudoctor()
        .args(["check", "--format", "prometheus", "--from"])
        .arg(&path));
    let s = parse_prometheus(&r.stdout);
    let devices = report["snapshot"]["smoke"]["result"]["run"]["devices"]
        .as_array()
        .unwrap();
    assert_eq!(devices.len(), 2);
    for (i, d) in devices.iter().enumerate() {
        assert_eq!(d["info"]["uuid"], gpu_labels(i)[1].1.as_str());
        let gpu = labels(i, &[]);
        let figure = |step: &str, key: &str| d[step]["ok"][key].as_f64().unwrap();
        assert_eq!(
            get(&s, "gpudoctor_smoke_matmul_gflops", &gpu),
            Some(figure("matmul", "gflops"))
        );
        assert_eq!(
            get(&s, "gpudoctor_smoke_memory_mismatches", &gpu),
            Some(figure("memory", "mismatches"))
        );
        assert_eq!(
            get(&s, "gpudoctor_smoke_memory_allocated_bytes", &gpu),
            Some(figure("memory", "allocated"))
        );
        for (direction, memory) in DIRECTIONS {
            let l = labels(i, &[("direction", direction), ("memory", memory)]);
            assert_eq!(
                get(&s, "gpudoctor_smoke_transfer_gbps", &l),
                Some(figure(
                    "transfer",
                    &match memory {
                        "device" => "device_gbps".to_string(),
                        _ => format!("{memory}_{direction}_gbps"),
                    }
                )),
                "GPU {i} {memory} {direction}"
            );
        }
    }

    // The same run in JUnit: the memory check fails with GD057.
    let r = run(node.cmd().args(["check", "--format", "junit"]));
    let suite = parse_junit(&r.stdout);
    let memory = suite
        .cases
        .iter()
        .find(|c| c.classname == "gpudoctor.smoke_memory")
        .unwrap();
    assert_eq!(memory.failures.len(), 1, "{memory:?}");
    assert!(memory.failures[0].0.starts_with("GD057: "));
    assert_eq!(memory.failures[0].1, "error");
    let matmul = suite
        .cases
        .iter()
        .find(|c| c.classname == "gpudoctor.smoke_matmul")
        .unwrap();
    assert!(matmul.failures.is_empty() && matmul.skipped.is_none());
}

/// The preflight gate in the formats a scheduler reads: a GPU that fell off the bus fails the
/// kernel-log case of the JUnit suite and shows as the finding's series in Prometheus, with
/// exit code 1 in both.
#[test]
fn the_preflight_gate_speaks_junit_and_prometheus() {
    let node = GpuNode::new(2);
    node.root.file(
        "dev/kmsg",
        "6,0,0,-;Linux version 6.8.0\n3,1,100000000,-;NVRM: Xid (PCI:0000:19:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n",
    );
    let r = run(node
        .cmd()
        .args(["check", "--preflight", "--format", "junit"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let suite = parse_junit(&r.stdout);
    let log = suite
        .cases
        .iter()
        .find(|c| c.classname == "gpudoctor.kernel_log")
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert_eq!(log.failures.len(), 1, "{log:?}");
    assert!(log.failures[0].0.starts_with("GD080: "), "{log:?}");
    assert_eq!(log.failures[0].1, "error");
    let r = run(node
        .cmd()
        .args(["check", "--preflight", "--format", "prometheus"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let s = parse_prometheus(&r.stdout);
    assert_eq!(
        value(
            &s,
            "gpudoctor_finding",
            &[("code", "GD080"), ("severity", "error")]
        ),
        Some(1.0),
        "{}",
        r.stdout
    );
}

#[test]
fn pinned_memory_refused_leaves_only_the_pageable_series() {
    let mut node = GpuNode::new(1);
    node.cuda().device(0).host_alloc_error = Some(2);
    let r = run(node.cmd().args(["check", "--format", "prometheus"]));
    let s = parse_prometheus(&r.stdout);
    let memories: HashSet<&str> = named(&s, "gpudoctor_smoke_transfer_gbps")
        .iter()
        .map(|x| x.labels["memory"].as_str())
        .collect();
    // The device-local copy needs no host memory: its series stays.
    assert_eq!(
        memories,
        HashSet::from(["pageable", "device"]),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("NaN"));
}

// ---------------------------------------------------------------- hostile input

/// Quotes, backslashes, markup, a newline, a bell, an escape sequence, a NUL-adjacent
/// control character, DEL and a C1 control: everything either format must not pass raw.
const HOSTILE: &str = "ev\"il'\\n\\\"<x>&amp;]]>\n\u{7}\u{1b}[31m\u{1}\u{7f}\u{85}}{,=end";

/// What the formats show for HOSTILE once the control characters are made visible.
const HOSTILE_SHOWN: &str =
    "ev\"il'\\n\\\"<x>&amp;]]>\n\\u{7}\\u{1b}[31m\\u{1}\\u{7f}\\u{85}}{,=end";

#[test]
fn hostile_values_keep_both_formats_valid() {
    let root = FakeRoot::healthy(1);
    // The node probe takes /etc/hostname's first line and refuses control characters, but
    // quotes, backslashes and markup pass through to the name.
    root.file("etc/hostname", "gpu\"node\\<1>&'\n").file(
        "etc/os-release",
        &format!("NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\nPRETTY_NAME=\"{HOSTILE}\"\n"),
    );
    let cmd = |format: &str| {
        let mut c = root.cmd();
        c.args(["check", "--format", format])
            .env("PYTORCH_CUDA_ALLOC_CONF", HOSTILE)
            .env("CUDA_VISIBLE_DEVICES", HOSTILE)
            .env("CUDA_LAUNCH_BLOCKING", HOSTILE);
        run(&mut c)
    };

    let r = cmd("junit");
    assert_eq!(r.code, 1, "{}", r.stderr);
    let suite = parse_junit(&r.stdout);
    assert_eq!(suite.attrs["hostname"], "gpu\"node\\<1>&'");
    assert_eq!(suite.properties["node"], "gpu\"node\\<1>&'");
    let texts: String = suite
        .cases
        .iter()
        .flat_map(|c| &c.failures)
        .map(|f| format!("{}\n{}\n", f.0, f.2))
        .collect();
    // The variables' values reach the failures, read back exactly as shown.
    assert!(
        texts.contains(&format!("PYTORCH_CUDA_ALLOC_CONF={HOSTILE_SHOWN}")),
        "{texts}"
    );
    for code in ["GD011", "GD012", "GD015"] {
        assert!(texts.contains(&format!("{code}: ")), "{code}: {texts}");
    }
    for c in ['\u{1}', '\u{7}', '\u{1b}', '\u{7f}', '\u{85}'] {
        assert!(!r.stdout.contains(c), "{c:?} passed raw into the XML");
    }

    let r = cmd("prometheus");
    assert_eq!(r.code, 1, "{}", r.stderr);
    let s = parse_prometheus(&r.stdout);
    assert_eq!(
        value(
            &s,
            "gpudoctor_info",
            &[
                ("version", env!("CARGO_PKG_VERSION")),
                ("node", "gpu\"node\\<1>&'")
            ]
        ),
        Some(1.0)
    );
    assert!(value(
        &s,
        "gpudoctor_finding",
        &[("code", "GD015"), ("severity", "warning")]
    )
    .is_some());
}

#[test]
fn hostile_node_and_gpu_names_in_the_smoke_labels() {
    let mut node = GpuNode::new(1);
    node.cuda().device(0).name = format!("NVIDIA {HOSTILE}");
    let cmd = |format: &str| {
        let mut c = node.cmd();
        // The scheduler's node name wins over the host name and is taken as it is.
        c.args(["check", "--format", format])
            .env("SLURMD_NODENAME", HOSTILE)
            .env("SLURM_JOB_ID", "42");
        run(&mut c)
    };
    let r = cmd("prometheus");
    let s = parse_prometheus(&r.stdout);
    assert_eq!(
        value(
            &s,
            "gpudoctor_info",
            &[
                ("version", env!("CARGO_PKG_VERSION")),
                ("node", HOSTILE_SHOWN)
            ]
        ),
        Some(1.0),
        "{}",
        r.stdout
    );
    let passed = named(&s, "gpudoctor_smoke_passed");
    assert_eq!(passed.len(), 1, "{}", r.stdout);
    assert_eq!(passed[0].labels["name"], format!("NVIDIA {HOSTILE_SHOWN}"));
    assert_eq!(passed[0].labels["gpu"], "0");

    let r = cmd("junit");
    let suite = parse_junit(&r.stdout);
    assert_eq!(suite.attrs["hostname"], HOSTILE_SHOWN);
    assert_eq!(suite.properties["node"], HOSTILE_SHOWN);
}

// ---------------------------------------------------------------- the command line

#[test]
fn only_check_takes_junit_and_prometheus() {
    let root = FakeRoot::healthy(1);
    for sub in ["toolkit", "devices", "smoke"] {
        for format in ["junit", "prometheus"] {
            let r = run(root.cmd().args([sub, "--format", format]));
            assert_eq!(r.code, 2, "{sub} {format}: {}", r.stdout);
            assert!(r.stdout.is_empty());
            let prints = if sub == "toolkit" {
                "human, json or markdown"
            } else {
                "human, json, markdown or html"
            };
            assert!(
                r.stderr.contains(&format!(
                    "use `gpudoctor check --format {format}` (`gpudoctor {sub}` prints {prints})"
                )),
                "{}",
                r.stderr
            );
        }
    }
    // --json stays shorthand for json and conflicts with another --format.
    let r = run(root.cmd().args(["check", "--json", "--format", "junit"]));
    assert_eq!(r.code, 2);
    let r = run(root.cmd().args(["toolkit", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str::<Value>(&r.stdout).unwrap();
}

#[test]
fn the_strict_validator_rejects_what_prometheus_would() {
    let ok = "# HELP a_b x\n# TYPE a_b gauge\na_b{l=\"v\\\\ \\\" \\n\"} 1\n";
    assert_eq!(strict_parse(ok)[0].labels["l"], "v\\ \" \n");
    let bad = [
        "a_b 1\n",                                            // no TYPE
        "# HELP a-b x\n# TYPE a-b gauge\na-b 1\n",            // metric name
        "# HELP a x\n# TYPE a gauge\na{0l=\"v\"} 1\n",        // label name
        "# HELP a x\n# TYPE a gauge\na{__l=\"v\"} 1\n",       // reserved label name
        "# HELP a x\n# TYPE a gauge\na{l=\"v\\t\"} 1\n",      // escape
        "# HELP a x\n# TYPE a gauge\na{l=\"v\"\"} 1\n",       // stray quote
        "# HELP a x\n# TYPE a gauge\na{l=\"v\",l=\"w\"} 1\n", // duplicate label
        "# HELP a x\n# TYPE a gauge\na 1\na 2\n",             // duplicate series
        "# HELP a x\n# TYPE a gauge\na NaN\n",                // NaN
        "# HELP a x\n# TYPE a gauge\na 1",                    // no final \n
        "# HELP a x\n# TYPE a gauge\n# TYPE a gauge\na 1\n",  // second TYPE
        "# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\na{l=\"1\"} 1\nb 1\na{l=\"2\"} 1\n", // split family
    ];
    for text in bad {
        let caught = std::panic::catch_unwind(|| strict_parse(text)).is_err();
        assert!(caught, "accepted: {text:?}");
    }
}
