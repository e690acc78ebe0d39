//! The Kubernetes manifest and the GitHub Actions step in docs/fleet.md: valid YAML with the
//! structure a cluster needs, and every gpudoctor command line in them accepted by
//! gpudoctor's own argument parser.

use clap::Parser;
use yaml_rust2::{Yaml, YamlLoader};

/// The fenced ```yaml blocks under `heading` in docs/fleet.md, in order.
fn yaml_blocks(heading: &str) -> Vec<String> {
    let doc = include_str!("../../docs/fleet.md");
    let heading = format!("\n{heading}\n");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("docs/fleet.md has no {heading:?}"));
    let section = &doc[start + heading.len() - 1..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let section = &section[..section.find("\n### ").unwrap_or(section.len())];
    section
        .split("```yaml\n")
        .skip(1)
        .map(|b| b[..b.find("```").expect("closed block")].to_string())
        .collect()
}

fn s<'a>(y: &'a Yaml, path: &[&str]) -> &'a Yaml {
    path.iter().fold(y, |y, k| &y[*k])
}

fn str_at<'a>(y: &'a Yaml, path: &[&str]) -> &'a str {
    s(y, path)
        .as_str()
        .unwrap_or_else(|| panic!("{path:?} is not a string: {y:?}"))
}

/// Every `gpudoctor …` invocation in a shell script, as argument vectors.
fn gpudoctor_lines(script: &str) -> Vec<Vec<String>> {
    script
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("gpudoctor "))
        .map(|l| {
            // Shell redirections and pipes are not gpudoctor's arguments.
            let l = l.split(['>', '|']).next().unwrap();
            l.split_whitespace().map(String::from).collect()
        })
        .collect()
}

fn parses(args: &[String]) {
    if let Err(e) = gpudoctor::cli::Cli::try_parse_from(args) {
        panic!("{args:?} is not a valid gpudoctor command line: {e}");
    }
}

fn env_from_field(container: &Yaml, name: &str) -> Option<String> {
    container["env"]
        .as_vec()?
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .and_then(|e| s(e, &["valueFrom", "fieldRef", "fieldPath"]).as_str())
        .map(String::from)
}

#[test]
fn the_kubernetes_manifest_is_valid_and_complete() {
    let blocks = yaml_blocks("## Kubernetes");
    assert_eq!(blocks.len(), 1, "one manifest block");
    let docs = YamlLoader::load_from_str(&blocks[0]).expect("valid YAML");
    assert_eq!(docs.len(), 2, "a DaemonSet and a Job");

    let ds = &docs[0];
    assert_eq!(str_at(ds, &["apiVersion"]), "apps/v1");
    assert_eq!(str_at(ds, &["kind"]), "DaemonSet");
    // The selector must match the pod template's labels or the API server rejects it.
    let sel = s(ds, &["spec", "selector", "matchLabels"])
        .as_hash()
        .unwrap();
    let labels = s(ds, &["spec", "template", "metadata", "labels"])
        .as_hash()
        .unwrap();
    for (k, v) in sel {
        assert_eq!(
            labels.get(k),
            Some(v),
            "selector {k:?} not in the template labels"
        );
    }
    let pod = s(ds, &["spec", "template", "spec"]);
    assert_eq!(str_at(pod, &["runtimeClassName"]), "nvidia");
    let c = &pod["containers"][0];
    assert_eq!(
        env_from_field(c, "NODE_NAME").as_deref(),
        Some("spec.nodeName")
    );
    assert_eq!(
        env_from_field(c, "POD_NAME").as_deref(),
        Some("metadata.name")
    );
    assert_eq!(
        env_from_field(c, "POD_NAMESPACE").as_deref(),
        Some("metadata.namespace")
    );
    let visible = c["env"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|e| e["name"].as_str() == Some("NVIDIA_VISIBLE_DEVICES"))
        .and_then(|e| e["value"].as_str());
    assert_eq!(visible, Some("all"));
    // No GPU request: the health check must not take GPUs from jobs.
    assert!(c["resources"].is_badvalue(), "{:?}", c["resources"]);
    // Every mount has a volume.
    let volumes: Vec<&str> = pod["volumes"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    for m in c["volumeMounts"].as_vec().unwrap() {
        assert!(volumes.contains(&m["name"].as_str().unwrap()), "{m:?}");
    }
    // The node's own machine id, not the image's.
    assert!(c["volumeMounts"]
        .as_vec()
        .unwrap()
        .iter()
        .any(|m| m["mountPath"].as_str() == Some("/etc/machine-id")));
    let script = c["args"][0].as_str().expect("a shell script");
    let lines = gpudoctor_lines(script);
    assert_eq!(lines.len(), 2, "{script}");
    for l in &lines {
        parses(l);
        // The DaemonSet shares nodes with jobs: never the smoke test.
        assert!(l.iter().any(|a| a == "--no-smoke"), "{l:?}");
    }
    assert!(lines[0].join(" ").contains("--output /reports/{host}.json"));

    let job = &docs[1];
    assert_eq!(str_at(job, &["apiVersion"]), "batch/v1");
    assert_eq!(str_at(job, &["kind"]), "Job");
    let pod = s(job, &["spec", "template", "spec"]);
    assert_eq!(str_at(pod, &["restartPolicy"]), "Never");
    // Without the NVIDIA runtime the Job would see no driver.
    assert_eq!(str_at(pod, &["runtimeClassName"]), "nvidia");
    let c = &pod["containers"][0];
    assert_eq!(
        env_from_field(c, "NODE_NAME").as_deref(),
        Some("spec.nodeName")
    );
    assert_eq!(
        s(c, &["resources", "limits", "nvidia.com/gpu"]).as_i64(),
        Some(8)
    );
    let mut args = vec!["gpudoctor".to_string()];
    args.extend(
        c["args"]
            .as_vec()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    parses(&args);
}

#[test]
fn the_github_actions_step_is_valid() {
    let blocks = yaml_blocks("## GitHub Actions on a self-hosted GPU runner");
    assert_eq!(blocks.len(), 1);
    let docs = YamlLoader::load_from_str(&blocks[0]).expect("valid YAML");
    let steps = docs[0].as_vec().expect("a list of steps");
    let script = steps[0]["run"].as_str().unwrap();
    let lines = gpudoctor_lines(script);
    assert_eq!(lines.len(), 3);
    for l in &lines {
        parses(l);
    }
    // Neither the probing step nor the summary may fail the job before the gate.
    assert!(lines[0].join(" ").contains("--fail-on never"));
    assert!(lines[1].join(" ").contains("--fail-on never"));
    assert_eq!(steps[1]["if"].as_str(), Some("always()"));
    assert_eq!(
        s(&steps[1], &["with", "path"]).as_str(),
        Some("gpudoctor.json")
    );
}

/// Both recipes run the image that pkg/Containerfile builds, at this version: its entry point
/// is gpudoctor (the Job passes only arguments) and its base has the shell the DaemonSet's
/// loop needs.
#[test]
fn the_recipes_run_the_image_pkg_containerfile_builds() {
    let blocks = yaml_blocks("## Kubernetes");
    let docs = YamlLoader::load_from_str(&blocks[0]).expect("valid YAML");
    let expected = format!(
        "registry.example.com/gpudoctor:{}",
        env!("CARGO_PKG_VERSION")
    );
    for doc in &docs {
        let c = &s(doc, &["spec", "template", "spec"])["containers"][0];
        assert_eq!(str_at(c, &["image"]), expected);
    }
    let job = &s(&docs[1], &["spec", "template", "spec"])["containers"][0];
    assert!(
        job["command"].is_badvalue(),
        "the Job relies on the image's entry point"
    );
    let ds = &s(&docs[0], &["spec", "template", "spec"])["containers"][0];
    assert_eq!(ds["command"][0].as_str(), Some("/bin/sh"));

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let containerfile = std::fs::read_to_string(root.join("pkg/Containerfile")).unwrap();
    assert!(containerfile.contains("ENTRYPOINT [\"/usr/bin/gpudoctor\"]"));
    assert!(containerfile.contains("ARG BASE=docker.io/library/debian:bookworm-slim"));
    assert!(containerfile.contains(&format!("ARG VERSION={}", env!("CARGO_PKG_VERSION"))));
    assert!(containerfile.contains(&format!("-t {expected} dist")));
    let fleet = std::fs::read_to_string(root.join("docs/fleet.md")).unwrap();
    assert!(fleet.contains(&format!("`{expected}` is the image [`pkg/Containerfile`]")));
}

#[test]
fn the_preflight_init_container_is_valid() {
    let blocks = yaml_blocks("## Preflight in a Kubernetes init container");
    assert_eq!(blocks.len(), 1);
    let docs = YamlLoader::load_from_str(&blocks[0]).expect("valid YAML");
    let job = &docs[0];
    assert_eq!(str_at(job, &["kind"]), "Job");
    let pod = s(job, &["spec", "template", "spec"]);
    assert_eq!(str_at(pod, &["runtimeClassName"]), "nvidia");
    assert_eq!(str_at(pod, &["restartPolicy"]), "Never");
    let gate = &pod["initContainers"][0];
    assert_eq!(
        str_at(gate, &["image"]),
        format!(
            "registry.example.com/gpudoctor:{}",
            env!("CARGO_PKG_VERSION")
        )
    );
    // The image's entry point is gpudoctor: the arguments are its command line.
    assert!(gate["command"].is_badvalue());
    let mut args = vec!["gpudoctor".to_string()];
    args.extend(
        gate["args"]
            .as_vec()
            .expect("args")
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    parses(&args);
    assert!(args.iter().any(|a| a == "--preflight"), "{args:?}");
    assert_eq!(
        str_at(gate, &["terminationMessagePolicy"]),
        "FallbackToLogsOnError"
    );
    // The gate tests the GPUs the job gets: the same request as the training container.
    let train = &pod["containers"][0];
    let gpus = |c: &Yaml| s(c, &["resources", "limits", "nvidia.com/gpu"]).as_i64();
    assert_eq!(gpus(gate), Some(8));
    assert_eq!(gpus(gate), gpus(train));
}

#[test]
fn the_preflight_github_step_is_valid() {
    let blocks = yaml_blocks("## Preflight in GitHub Actions");
    let steps = YamlLoader::load_from_str(&blocks[0]).expect("valid YAML");
    let steps = steps[0].as_vec().expect("a list of steps");
    let run = str_at(&steps[0], &["run"]);
    let lines = gpudoctor_lines(run);
    assert_eq!(lines.len(), 1, "{run}");
    parses(&lines[0]);
    assert!(lines[0].iter().any(|a| a == "--preflight"));
    let upload = &steps[1];
    assert_eq!(str_at(upload, &["if"]), "always()");
    assert_eq!(
        str_at(upload, &["with", "path"]),
        lines[0].last().unwrap().as_str()
    );
}
