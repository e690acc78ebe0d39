//! The Slurm recipe, run for real: a one-node Slurm cluster on localhost
//! (`.ci/slurm-localhost`, Debian's slurm-wlm and munge), `srun gpudoctor check --format
//! json --output DIR/{host}.json`, then `gpudoctor fleet DIR`; and the preflight gate as a
//! `Prolog=` (pkg/slurm/gpudoctor-prolog) draining a node that fails it. `.ci/run` installs
//! Slurm and sets GPUDOCTOR_SLURM=1; without it the tests say they were skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;
use serde_json::Value;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/slurm-localhost")
}

/// One cluster at a time: every cluster listens on the same two ports.
static ONE_CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Stops the cluster however the test ends.
struct Cluster {
    state: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("stop")
            .env("GPUDOCTOR_SLURM_DIR", &self.state)
            .status();
    }
}

#[test]
fn the_slurm_recipe_runs_under_srun_and_fleet_reads_it() {
    if std::env::var_os("GPUDOCTOR_SLURM").is_none() {
        crate::util::skip(format_args!(
            "GPUDOCTOR_SLURM unset: needs root, slurm-wlm and munge (.ci/run installs them)"
        ));
        return;
    }
    let _one = ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let state = work.path().join("slurm");
    let cluster = Cluster {
        state: state.clone(),
    };
    let start = Command::new(script())
        .arg("start")
        .env("GPUDOCTOR_SLURM_DIR", &cluster.state)
        .output()
        .expect("run .ci/slurm-localhost");
    assert!(
        start.status.success(),
        "{}{}",
        String::from_utf8_lossy(&start.stdout),
        String::from_utf8_lossy(&start.stderr)
    );
    // The recipe in docs/fleet.md, on the one node this cluster has (tests/it/docs.rs checks that
    // the recipe's gpudoctor lines are these).
    let reports = work.path().join("reports");
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let out = Command::new(script())
        .args(["run", "--"])
        .arg(&bin)
        .args(["check", "--format", "json", "--output"])
        .arg(reports.join("{host}.json"))
        .env("GPUDOCTOR_SLURM_DIR", &state)
        .output()
        .expect("srun");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // check prints the human report through srun; its exit code is the report's.
    assert!(
        stdout.contains("gpudoctor"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<PathBuf> = std::fs::read_dir(&reports)
        .expect("reports written")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let node = &v["snapshot"]["node"];
    let slurm = &node["slurm"];
    assert!(
        slurm["job_id"].as_str().is_some_and(|j| !j.is_empty()),
        "{node:#}"
    );
    assert_eq!(slurm["proc_id"], "0", "{node:#}");
    let nodename = slurm["node_name"]
        .as_str()
        .expect("SLURMD_NODENAME arrived");
    assert_eq!(node["name"], nodename);
    assert_eq!(
        files[0].file_name().unwrap().to_string_lossy(),
        format!("{nodename}.json")
    );
    // And the aggregation reads it back with the Slurm job.
    let (_, fleet) = json(gpudoctor().arg("fleet").arg(&reports));
    assert_eq!(fleet["shape"]["nodes"], 1);
    assert_eq!(fleet["nodes"][0]["name"], nodename);
    assert_eq!(fleet["nodes"][0]["slurm_job"], slurm["job_id"]);
    // The fleet's HTML page over the same report: the node in the heat map, the same verdict.
    let page = run(gpudoctor()
        .args(["fleet", "--format", "html"])
        .arg(&reports));
    assert!(
        page.stdout.starts_with("<!DOCTYPE html>"),
        "{}",
        page.stderr
    );
    assert!(
        page.stdout.contains(&format!(">{nodename}<")),
        "the node's row"
    );
    assert!(page
        .stdout
        .contains(&format!("1 node, {} GPU", fleet["shape"]["gpus"])));
    drop(cluster);
}

#[test]
fn a_failing_preflight_prolog_drains_the_node_with_the_reason() {
    if std::env::var_os("GPUDOCTOR_SLURM").is_none() {
        crate::util::skip(format_args!(
            "GPUDOCTOR_SLURM unset: needs root, slurm-wlm and munge (.ci/run installs them)"
        ));
        return;
    }
    let _one = ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    // The node the gate inspects: a healthy host whose kernel log says GPU 0 fell off the bus.
    let node = FakeRoot::healthy(1);
    node.file(
        "dev/kmsg",
        "5,0,0,-;Linux version 6.8.0-45-generic\n3,1,9000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n",
    );
    // slurm.conf's Prolog= runs pkg/slurm/gpudoctor-prolog as shipped; the wrapper only
    // points it at this binary and this tree, as a site's environment would.
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let prolog = Path::new(env!("CARGO_MANIFEST_DIR")).join("pkg/slurm/gpudoctor-prolog");
    let reports = work.path().join("reports");
    let wrapper = work.path().join("prolog");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nGPUDOCTOR='{}' GPUDOCTOR_PREFLIGHT_ARGS='--root {}' GPUDOCTOR_REPORT_DIR='{}' exec '{}'\n",
            bin.display(),
            node.path().display(),
            reports.display(),
            prolog.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();

    let state = work.path().join("slurm");
    let cluster = Cluster {
        state: state.clone(),
    };
    let start = Command::new(script())
        .arg("start")
        .env("GPUDOCTOR_SLURM_DIR", &cluster.state)
        .env("GPUDOCTOR_SLURM_PROLOG", &wrapper)
        .output()
        .expect("run .ci/slurm-localhost");
    assert!(
        start.status.success(),
        "{}{}",
        String::from_utf8_lossy(&start.stdout),
        String::from_utf8_lossy(&start.stderr)
    );
    // The job never runs: its prolog fails. srun may wait for the requeued job, so it is
    // given a short deadline; the node's state is what the test reads.
    let job = Command::new(script())
        .args(["run", "--", "true"])
        .env("GPUDOCTOR_SLURM_DIR", &state)
        .env("GPUDOCTOR_SLURM_RUN_TIMEOUT", "30")
        .output()
        .expect("srun");
    assert!(
        !job.status.success(),
        "the job ran on a node that failed its gate"
    );
    let conf = String::from_utf8_lossy(
        &Command::new(script())
            .arg("conf")
            .env("GPUDOCTOR_SLURM_DIR", &state)
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();
    let sinfo = Command::new("sinfo")
        .args(["-R", "-h", "-o", "%T|%E"])
        .env("SLURM_CONF", &conf)
        .output()
        .expect("sinfo -R");
    let reason = String::from_utf8_lossy(&sinfo.stdout);
    assert!(reason.contains("drain"), "{reason}");
    assert!(
        reason.contains("gpudoctor: Not ready: 1 blocker (GD080)"),
        "the reason names the gate and the blocker: {reason}"
    );
    assert!(reason.contains("Xid 79"), "{reason}");
    // And the gate's JSON report is kept for the admin.
    let kept: Vec<PathBuf> = std::fs::read_dir(&reports)
        .expect("the report directory")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&kept[0]).unwrap()).unwrap();
    assert_eq!(v["snapshot"]["preflight"]["budget_s"], 15.0);
    drop(cluster);
}
